"""Wall time of the full conformance suite, per kind of target.

    python bench/suite.py [--repeat N]

Each run is ``mqconform run`` in its own process, as a user starts it, and the figures come
from the wall clock and the run's results.json:

1. ``--target reference``: the embedded reference server over DCE/RPC on 127.0.0.1
   (goal: <= 90 s on 2 cores).
2. ``--target model``: the model in process, no RPC (goal: <= 20 s).
3. A target file naming a ``mqconform serve`` started separately, driven over TCP with its
   control API: the same suite must pass there as against the embedded server.

Every run must end with zero unexpected failures; the script exits 1 otherwise. Stateful
steps per second are measured by the stateful machines' own bench once they exist.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOALS = {"reference": 90.0, "model": 20.0, "serve": 90.0}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_suite(target: str, out: Path) -> tuple[float, dict]:
    began = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "mqconform", "run", "--target", target,
                           "--report-dir", str(out)], capture_output=True, text=True)
    wall = time.perf_counter() - began
    results = out / "results.json"
    if not results.exists():
        raise SystemExit(f"{target}: no results.json (exit {proc.returncode})\n"
                         f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    data = json.loads(results.read_text())
    data["exit"] = proc.returncode
    return wall, data


def start_serve() -> tuple[subprocess.Popen, int, int]:
    port, control = free_port(), free_port()
    proc = subprocess.Popen([sys.executable, "-m", "mqconform", "serve", "--port", str(port),
                             "--control-port", str(control)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if "ncacn_ip_tcp:" not in line:
        proc.kill()
        raise SystemExit(f"server did not start: {line}{proc.stderr.read()}")
    proc.stdout.readline()  # the control API line
    return proc, port, control


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1, help="runs per target (best is kept)")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="mqconform-bench-"))
    ok = True
    for kind in ("reference", "model", "serve"):
        best, data = None, {}
        for i in range(args.repeat):
            out = work / f"{kind}-{i}"
            if kind == "serve":
                proc, port, control = start_serve()
                try:
                    target = work / "serve.yaml"
                    target.write_text(f"name: serve-separately\n"
                                      f"endpoint: ncacn_ip_tcp:127.0.0.1[{port}]\n"
                                      f"sut_control:\n  kind: reference\n"
                                      f"  url: http://127.0.0.1:{control}\n")
                    wall, data = run_suite(str(target), out)
                finally:
                    proc.terminate()
                    proc.wait(timeout=10)
            else:
                wall, data = run_suite(kind, out)
            best = wall if best is None else min(best, wall)
        s = data["summary"]
        cov = data.get("coverage", {})
        covtext = ", ".join(
            f"{doc} wire {c['covered_by_passing_case']}/{c['wire']} ({c['percent']} %)"
            for doc, c in sorted(cov.items()) if isinstance(c, dict))
        good = s["unexpected_failures"] == 0 and data["exit"] == 0
        ok &= good
        print(f"{kind:9s} {best:6.1f} s  (goal <= {GOALS[kind]:.0f} s, ratio "
              f"{GOALS[kind] / best:.1f}x)  cases {s['cases']}: {s['pass']} pass, "
              f"{s['fail']} fail ({s['unexpected_failures']} unexpected), "
              f"{s['not-applicable']} n/a, {s['inconclusive']} inconclusive; exit "
              f"{data['exit']}; {covtext}{'' if good else '  << FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
