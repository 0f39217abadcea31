"""mqconform as a user installs it: the wheel built from this checkout, installed (no -e) into
fresh venvs outside the checkout, next to other packages, and run from directories that hold
packages named like the project's folders.

    python bench/wheel.py [--keep DIR] [--skip-spark] [--skip-pytest8]

Each check prints one line, ok or FAIL, with its figures; exit 1 when any fails:

- the wheel's files: one top-level package, ``mqconform``; features, steps, templates,
  catalog, seeds, documents, golden pcaps, the Lua dissector and the examples are inside;
  Requires-Dist: no ``==``, the Spark stack only under the ``spark`` extra;
- a base venv (``pip install -c constraints.txt WHEEL``): its size (``du -sh``; goal below
  200 MB), and from an empty directory ``python -c "import model"`` fails;
- from a directory holding foreign ``server/ model/ spec/ wire/`` packages: ``mqconform run
  --report-dir r`` exits 0 with the verdicts of this checkout's run, ``mqconform spec stats``
  gives this checkout's figures, ``pytest --mq-target reference`` the same verdicts again,
  ``mqconform captures validate`` without the Spark stack exits 2 naming the extra;
- with ``mqconform[spark]`` added: ``captures validate`` on a golden pcap the wheel ships;
- next to a user's pytest 8 and pytest-xdist (no constraints): pip keeps pytest 8, the suite
  runs on it, and ``mqconform run -- -n 2`` exits 2.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from email.parser import Parser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / "constraints.txt"
SIZE_GOAL_MB = 200
SPARK = ("pyspark", "pyarrow", "pandas")
GOLDEN = ("captures/golden/scenarios/MS-MQRR/3.1.4.8/a_waiting_receive_is_cancelled_from_a_"
          "second_connection_of_the_same_association_group.pcap")
SHIPPED = ("mqconform/features/MS-MQRR/3.1.4.7.feature", "mqconform/conformance/steps/packets.py",
           "mqconform/conformance/templates/index.html.j2", "mqconform/spec/catalog/MS-MQRR.yaml",
           "mqconform/spec/catalog/test-citations.json", "mqconform/spec/seeds/README.md",
           "mqconform/spec/documents/index.yaml", "mqconform/captures/golden/index.json",
           "mqconform/captures/wireshark/mqconform.lua", "mqconform/examples/windows.yaml",
           "mqconform/conformance/cases/suite.ini", "mqconform/captures/templates/validate.html")


class Checks:
    def __init__(self) -> None:
        self.failed: list[str] = []

    def report(self, ok: bool, what: str, detail: str = "") -> bool:
        print(f"{'ok  ' if ok else 'FAIL'}  {what}{': ' + detail if detail else ''}", flush=True)
        if not ok:
            self.failed.append(what)
        return ok


def run(argv: list[str], cwd: Path, timeout: float = 900, env: dict | None = None
        ) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items()
             if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith("PYTEST_")}
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**clean, **(env or {})})


def tail(proc: subprocess.CompletedProcess, n: int = 1500) -> str:
    return (proc.stdout[-n:] + proc.stderr[-n:]).strip().replace("\n", " | ")


def build_wheel(out: Path) -> Path:
    began = time.perf_counter()
    done = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out),
                str(ROOT)], ROOT)
    if done.returncode != 0:
        raise SystemExit(f"FAIL  the wheel did not build: {tail(done)}")
    wheel = next(out.glob("mqconform-*.whl"))
    print(f"built {wheel.name} ({wheel.stat().st_size / 1e6:.1f} MB) in "
          f"{time.perf_counter() - began:.0f} s", flush=True)
    return wheel


def check_wheel(wheel: Path, checks: Checks) -> None:
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(z.read(meta_name).decode("utf-8"))
    tops = sorted({n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")})
    checks.report(tops == ["mqconform"], "one top-level package", ", ".join(tops))
    missing = [s for s in SHIPPED if s not in names]
    pcaps = sum(1 for n in names if n.endswith(".pcap"))
    features = sum(1 for n in names if n.endswith(".feature"))
    here = (len(list((ROOT / "captures" / "golden").rglob("*.pcap"))),
            len(list((ROOT / "features").rglob("*.feature"))))
    checks.report(not missing and (pcaps, features) == here, "the wheel holds the suite's "
                  "data", f"{features} feature files, {pcaps} golden pcaps (checkout: "
                  f"{here[1]}, {here[0]})" + (f"; missing {missing}" if missing else ""))
    requires = meta.get_all("Requires-Dist") or []
    pinned = [r for r in requires if "==" in r.split(";")[0]]
    loose_spark = [r for r in requires if r.split()[0].lower().startswith(SPARK)
                   and "extra == \"spark\"" not in r]
    checks.report(not pinned and not loose_spark, "Requires-Dist: ranges, Spark only in the "
                  "extra", f"{len(requires)} entries" + (f"; pinned {pinned}" if pinned else "")
                  + (f"; outside the extra {loose_spark}" if loose_spark else ""))


def venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    return path / "bin"


def pip_install(bin_: Path, *args: str) -> subprocess.CompletedProcess:
    return run([str(bin_ / "python"), "-m", "pip", "install", "-q", *args], ROOT, timeout=1800)


def du_mb(path: Path) -> float:
    out = subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0]) / 1024


def foreign_dir(path: Path) -> Path:
    """A working directory holding packages named like the project's folders (and like the
    project itself: a checkout of it, say), each of which fails loudly if imported."""
    for name in ("server", "model", "spec", "wire", "mqconform"):
        (path / name).mkdir(parents=True)
        (path / name / "__init__.py").write_text(
            f"raise RuntimeError('the user\\'s own {name}/ package was imported')\n")
    return path


def verdicts(results: Path) -> dict[str, str]:
    data = json.loads(results.read_text(encoding="utf-8"))
    return {c["case"]: c["verdict"] for c in data["cases"]}


def summary(results: Path) -> dict:
    data = json.loads(results.read_text(encoding="utf-8"))
    return {**data["summary"], "coverage": data["coverage"]}


def stats(python: str, cwd: Path) -> dict:
    done = run([python, "-P", "-m", "mqconform", "spec", "stats", "--format", "json"], cwd)
    out = json.loads(done.stdout) if done.stdout.strip().startswith("{") else {}
    out.get("citations", {}).pop("errors", None)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", type=Path, help="work here and keep it (default: a temporary "
                    "directory, removed)")
    ap.add_argument("--skip-spark", action="store_true", help="leave out mqconform[spark]")
    ap.add_argument("--skip-pytest8", action="store_true", help="leave out the pytest 8 venv")
    args = ap.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="mqconform-wheel-"))
    work.mkdir(parents=True, exist_ok=True)
    checks = Checks()
    try:
        # the checkout's own figures, to compare with
        here = work / "checkout"
        here.mkdir(exist_ok=True)
        began = time.perf_counter()
        mine = run([sys.executable, "-P", "-m", "mqconform", "run", "--report-dir",
                    str(here / "r")], here)
        checks.report(mine.returncode == 0, "the checkout's main job",
                      f"exit {mine.returncode} in {time.perf_counter() - began:.0f} s")
        theirs_stats = stats(sys.executable, here)

        wheel = build_wheel(work / "dist")
        check_wheel(wheel, checks)

        base = venv(work / "base")
        done = pip_install(base, "-c", str(CONSTRAINTS), str(wheel))
        if not checks.report(done.returncode == 0, "pip install WHEEL (base)",
                             "" if done.returncode == 0 else tail(done)[-600:]):
            return 1
        size = du_mb(work / "base")
        checks.report(size < SIZE_GOAL_MB, "base venv size", f"{size:.0f} MB (du -sk; goal "
                      f"< {SIZE_GOAL_MB} MB)")
        empty = work / "empty"
        empty.mkdir(exist_ok=True)
        probe = run([str(base / "python"), "-c", "import model"], empty)
        checks.report(probe.returncode != 0 and "ModuleNotFoundError" in probe.stderr,
                      'python -c "import model" fails', probe.stderr.strip().splitlines()[-1]
                      if probe.stderr.strip() else f"exit {probe.returncode}")

        user = foreign_dir(work / "user")
        began = time.perf_counter()
        main_job = run([str(base / "mqconform"), "run", "--report-dir", "r"], user)
        seconds = time.perf_counter() - began
        ok = main_job.returncode == 0 and (user / "r" / "results.json").exists()
        checks.report(ok, "mqconform run from a directory with foreign packages",
                      f"exit {main_job.returncode} in {seconds:.0f} s" + ("" if ok else
                                                                         f": {tail(main_job)}"))
        if ok:
            same = verdicts(user / "r" / "results.json") == verdicts(here / "r" / "results.json")
            s = summary(user / "r" / "results.json")
            checks.report(same and summary(here / "r" / "results.json") == s,
                          "the same verdicts as the checkout",
                          f"{s['pass']} pass, {s['unexpected_failures']} unexpected, "
                          f"{s['not-applicable']} not applicable; wire coverage " + ", ".join(
                              f"{d} {c['covered_by_passing_case']}/{c['wire']}"
                              for d, c in s["coverage"].items()))
        installed_stats = stats(str(base / "python"), user)
        checks.report(bool(installed_stats) and installed_stats == theirs_stats,
                      "mqconform spec stats as in the checkout",
                      json.dumps(installed_stats.get("citations", {}).get("groups", {}))[:300])
        plain = run([str(base / "pytest"), "--mq-target", "reference", "-q", "-p",
                     "no:cacheprovider", "--mq-report-dir", str(work / "pytest-r")], empty)
        ok = plain.returncode == 0 and (work / "pytest-r" / "results.json").exists()
        checks.report(ok and verdicts(work / "pytest-r" / "results.json")
                      == verdicts(here / "r" / "results.json"),
                      "pytest --mq-target reference from an empty directory: same verdicts",
                      (plain.stdout.strip().splitlines() or [""])[-1])
        golden = base.parent / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / \
            "site-packages" / "mqconform" / GOLDEN
        nospark = run([str(base / "mqconform"), "captures", "validate", str(golden), "--out",
                       "v"], user)
        checks.report(nospark.returncode == 2 and "pip install 'mqconform[spark]'"
                      in nospark.stderr and len(nospark.stderr.strip().splitlines()) == 1,
                      "captures validate without the spark extra: exit 2, one line",
                      nospark.stderr.strip())

        if not args.skip_spark:
            done = pip_install(base, "-c", str(CONSTRAINTS), f"{wheel}[spark]")
            checks.report(done.returncode == 0, "pip install WHEEL[spark]",
                          "" if done.returncode == 0 else tail(done)[-600:])
            size = du_mb(work / "base")
            validate = run([str(base / "mqconform"), "captures", "validate", str(golden),
                            "--out", "v"], user)
            checks.report(validate.returncode == 0 and "0 violation(s)" in validate.stdout,
                          "captures validate on a shipped golden pcap",
                          f"exit {validate.returncode}; venv with spark {size:.0f} MB")

        if not args.skip_pytest8:
            theirs = venv(work / "pytest8")
            pip_install(theirs, "pytest>=8,<9", "pytest-xdist")
            done = pip_install(theirs, str(wheel))
            version = run([str(theirs / "python"), "-c",
                           "import pytest; print(pytest.__version__)"], empty).stdout.strip()
            checks.report(done.returncode == 0 and version.startswith("8."),
                          "pip install WHEEL next to pytest 8 keeps it", f"pytest {version}"
                          + ("" if done.returncode == 0 else f": {tail(done)[-600:]}"))
            on8 = run([str(theirs / "pytest"), "--mq-target", "reference", "-q", "-p",
                       "no:cacheprovider", "-m", "MS-MQRR/3.1.4.8 or MS-MQMR/3.1.4.2"], empty)
            checks.report(on8.returncode == 0, "the suite on pytest 8",
                          (on8.stdout.strip().splitlines() or [""])[-1])
            xdist = run([str(theirs / "mqconform"), "run", "--report-dir", "x", "--", "-n", "2"],
                        empty)
            checks.report(xdist.returncode == 2 and not (empty / "x" / "results.json").exists(),
                          "mqconform run -- -n 2 is refused", xdist.stderr.strip())
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{'FAILED: ' + ', '.join(checks.failed) if checks.failed else 'all checks passed'}")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
