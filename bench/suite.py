"""Wall time of the full conformance suite, per kind of target.

    python bench/suite.py [--repeat N]

Each run is ``mqconform run`` in its own process, as a user starts it, and the figures come
from the wall clock and the run's results.json:

1. ``--target reference``: the embedded reference server over DCE/RPC on 127.0.0.1
   (goal: <= 90 s on 2 cores).
2. ``--target model``: the model in process, no RPC (goal: <= 20 s).
3. A target file naming a ``mqconform serve`` started separately, driven over TCP with its
   control API: the same suite must pass there as against the embedded server.

Every run must end with zero unexpected failures; the script exits 1 otherwise.

4. Stateful steps per second (conformance/stateful.py): each machine (RemoteRead, qmmgmt) run
   as the suite runs it, a Case on a Suite, against ``--target model`` (goal >= 3,000 steps/s)
   and over TCP against the embedded reference server (goal >= 300 steps/s), there once with
   every example bound in NDR and once in NDR64 (the suite's [NDR] and [NDR64] cases). A step is one
   program step: a call checked against the oracle, or a control action (a message arrives);
   the time includes provisioning each example's queues and Hypothesis's own work. A short
   warm-up run first takes Hypothesis's one-time start (imports, strategy compilation) out.
   Below the rates, each machine's call mix (calls per method, opnum order; control steps
   last) and the methods of RemoteRead and qmmgmt that neither machine called.
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

if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)  # bench/model.py is not the model package

GOALS = {"reference": 90.0, "model": 20.0, "serve": 90.0}
STATEFUL_GOALS = {"model": 3000.0, "reference": 300.0}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_suite(target: str, out: Path) -> tuple[float, dict]:
    began = time.perf_counter()
    proc = subprocess.run([sys.executable, "-P", "-m", "mqconform", "run", "--target", target,
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
    proc = subprocess.Popen([sys.executable, "-P", "-m", "mqconform", "serve", "--port", str(port),
                             "--control-port", str(control), "--control-unauthenticated"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if "ncacn_ip_tcp:" not in line:
        proc.kill()
        raise SystemExit(f"server did not start: {line}{proc.stderr.read()}")
    proc.stdout.readline()  # the control API line
    return proc, port, control


def stateful_rates(target: str, examples: int, steps: int, repeat: int,
                   ndr64: bool | None = None) -> tuple[dict, bool]:
    """Steps per second of each stateful machine on ``target`` (best of ``repeat`` runs, each
    with its own seed), and whether every run conformed. ``ndr64``: every example bound in
    NDR64 (True) or NDR (False), as the suite's [NDR64] and [NDR] cases run them."""
    from mqconform.conformance import stateful
    from mqconform.conformance.session import Case, CaseFailed, Suite
    from mqconform.conformance.targetfile import load

    suite = Suite(load(target))
    rates, ok = {}, True
    try:
        stateful.run_machine(Case(suite, "warm-up", ()), "remoteread", examples=1, steps=5)
        for machine in stateful.MACHINES:
            best = None
            for i in range(repeat):
                try:
                    run = stateful.run_machine(Case(suite, f"bench-{machine}", ()), machine,
                                               examples=examples, steps=steps,
                                               seed_value=stateful.DEFAULT_SEED + i,
                                               ndr64=ndr64)
                except CaseFailed as exc:
                    print(f"stateful {machine} on {target}: {exc}")
                    ok = False
                    break
                if best is None or run.steps_per_second > best.steps_per_second:
                    best = run
            if best is not None:
                rates[machine] = best
    finally:
        suite.close()
    return rates, ok


def print_stateful(target: str, rates: dict, ok: bool, label: str | None = None) -> None:
    goal = STATEFUL_GOALS[target]
    steps = sum(r.steps for r in rates.values())
    seconds = sum(r.seconds for r in rates.values())
    both = steps / seconds if seconds else 0.0
    label = label or ("model" if target == "model" else "tcp")
    parts = ", ".join(f"{name} {r.steps_per_second:,.0f} ({r.steps} steps, {r.calls} calls, "
                      f"{r.examples} examples, {r.seconds:.2f} s)" for name, r in rates.items())
    print(f"stateful {label:9s} {both:7,.0f} steps/s  (goal >= {goal:,.0f}, ratio "
          f"{both / goal:.1f}x)  {parts}{'' if ok else '  << FAILED'}")
    print_mix(rates)


def print_mix(rates: dict) -> None:
    """The call mix of each machine's run, and the methods no machine called."""
    from mqconform.conformance.stateful import missing_methods
    from mqconform.model import calls as c

    order = [call.__name__ for _, call in sorted(c.CALLS.items())]
    together: dict[str, int] = {}
    for name, run in rates.items():
        mix = run.mix
        for method, count in mix.items():
            together[method] = together.get(method, 0) + count
        known = [m for m in order if m in mix] + sorted(m for m in mix if m not in order)
        print(f"  mix {name}: " + ", ".join(f"{m} {mix[m]}" for m in known))
    missing = missing_methods(together)
    print("  methods no machine called: " + (", ".join(missing) if missing else "none"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1, help="runs per target (best is kept)")
    ap.add_argument("--only", choices=("suite", "stateful"),
                    help="only the full-suite runs (1-3) or only the stateful machines (4)")
    ap.add_argument("--stateful-examples", type=int, default=None,
                    help="examples per machine (default: the suite's)")
    ap.add_argument("--stateful-steps", type=int, default=None,
                    help="steps per example (default: the suite's)")
    args = ap.parse_args(argv)
    ok = True
    if args.only != "stateful":
        ok &= run_suites(args)
    if args.only != "suite":
        from mqconform.conformance import stateful

        examples = args.stateful_examples or stateful.DEFAULT_EXAMPLES
        steps = args.stateful_steps or stateful.DEFAULT_STEPS
        for target, ndr64, label in (("model", None, "model"), ("reference", False, "tcp"),
                                     ("reference", True, "tcp ndr64")):
            rates, good = stateful_rates(target, examples, steps, max(1, args.repeat), ndr64)
            print_stateful(target, rates, good, label)
            ok &= good
    return 0 if ok else 1


def run_suites(args: argparse.Namespace) -> bool:
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
    return ok


if __name__ == "__main__":
    raise SystemExit(main())
