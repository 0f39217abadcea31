"""One benchmark of bench/, run on a baseline revision and on the working tree, the figures side
by side with their ratios.

    python bench/compare.py --baseline REV decode [-- --frames 300000 --memory-gb 0]

The baseline is checked out (git worktree, detached) and installed into a venv of its own
(``pip install -c constraints.txt``, the ``spark`` extra for the pipeline benchmark), both kept
under ``--cache`` (default: the system's temporary folder) so a second comparison starts at
once. The two runs go one after the other, never at the same time, each with the same
arguments and the bench script of its own revision; then every line of the two outputs that
differs only in its figures is printed once with each figure as ``before -> after (ratio)``.
The exit status is the worse of the two runs'.

With ``--rounds N`` the two alternate N times (baseline, tree, baseline, tree, ...), so that a
machine whose speed drifts during the comparison slows both alike; each figure is then the
median of its N runs, and each run's own figures are printed as they come.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)

ROOT = Path(__file__).resolve().parent.parent
NUMBER = re.compile(r"(?<![\w.[])-?\d[\d,]*(?:\.\d+)?")
EXTRAS = {"pipeline": "[spark]"}


def _git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def baseline(rev: str, bench: str, cache: Path) -> tuple[Path, Path]:
    """(the python of a venv holding the baseline revision installed, its checkout); made
    once."""
    commit = _git("rev-parse", "--verify", f"{rev}^{{commit}}")
    extra = EXTRAS.get(bench, "")
    key = hashlib.sha256(f"{commit}{extra}".encode()).hexdigest()[:12]
    tree, venv = cache / f"mqconform-{commit[:12]}", cache / f"mqconform-venv-{key}"
    python = venv / "bin" / "python"
    if python.exists():
        return python, tree
    if not tree.exists():
        _git("worktree", "add", "--detach", str(tree), commit)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "-c",
                    str(tree / "constraints.txt"), f"{tree}{extra}"], check=True)
    return python, tree


def run(python: Path, script: Path, args: list[str]) -> tuple[int, list[str], float]:
    """One run, in an empty folder: a checkout's folders (mqconform/, ...) in the working
    directory would stand in for the installed package of any `python -c` the bench starts."""
    print(f"$ {python} {script} {' '.join(args)}", flush=True)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mqconform-compare-") as cwd:
        done = subprocess.run([str(python), str(script), *args], capture_output=True,
                              text=True, cwd=cwd)
    seconds = time.perf_counter() - start
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr[-4000:])
    return done.returncode, done.stdout.splitlines(), seconds


def _figures(line: str) -> tuple[str, list[float]]:
    shape = NUMBER.sub("#", line)
    return shape, [float(n.replace(",", "")) for n in NUMBER.findall(line)]


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:.4f}".rstrip("0")


def _by_shape(lines: list[str]) -> dict[str, list[list[float]]]:
    """The figures of each line that has some, by the line's shape, in order."""
    shapes: dict[str, list[list[float]]] = {}
    for line in lines:
        shape, values = _figures(line)
        if values:
            shapes.setdefault(shape, []).append(values)
    return shapes


def medians(outputs: list[list[str]]) -> list[str]:
    """The lines of the first output, each figure replaced by its median over the outputs
    (the k-th line of a shape in one output is matched with the k-th of the same shape in
    the others; a line that is not in every output is left out)."""
    by_shape = [_by_shape(lines) for lines in outputs]
    seen: dict[str, int] = {}
    out = []
    for line in outputs[0]:
        shape, values = _figures(line)
        if not values:
            continue
        k = seen[shape] = seen.get(shape, -1) + 1
        runs = [s[shape][k] for s in by_shape if len(s.get(shape, ())) > k]
        if len(runs) < len(outputs) or any(len(r) != len(values) for r in runs):
            continue
        mid = [statistics.median(column) for column in zip(*runs, strict=True)]
        parts = NUMBER.split(line)
        out.append(parts[0] + "".join(_number(v) + rest for v, rest in zip(mid, parts[1:],
                                                                          strict=True)))
    return out


def side_by_side(before: list[str], after: list[str]) -> list[str]:
    """The lines of ``after`` whose shape (the text without its figures) a line of ``before``
    has too, each figure as ``before -> after (after/before)``."""
    shapes = _by_shape(before)
    out = []
    for line in after:
        shape, values = _figures(line)
        olds = shapes.get(shape)
        if not values or not olds:
            continue
        old = olds.pop(0)
        parts = iter(NUMBER.split(line))
        text = next(parts)
        for a, b, rest in zip(old, values, parts, strict=False):
            ratio = f"{b / a:.2f}" if a else "-"
            text += f"[{_number(a)} -> {_number(b)} ({ratio})]" + rest
        out.append(text.strip())
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python bench/compare.py",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True, help="a git revision (commit, tag, branch)")
    ap.add_argument("--cache", default=tempfile.gettempdir(),
                    help="where the baseline's worktree and venv are kept")
    ap.add_argument("--rounds", type=int, default=1,
                    help="alternate the two runs this many times; figures are medians")
    ap.add_argument("bench", help="a script of bench/: decode, server, model, pipeline, ...")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="its arguments, after --")
    args = ap.parse_args(argv)
    script = ROOT / "bench" / f"{args.bench}.py"
    if args.bench == "compare" or not script.is_file():
        ap.error(f"no benchmark bench/{args.bench}.py")
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    rest = args.args[1:] if args.args[:1] == ["--"] else args.args
    try:
        old_python, tree = baseline(args.baseline, args.bench, Path(args.cache))
    except subprocess.CalledProcessError as exc:
        print(f"compare: cannot set up the baseline {args.baseline}: {exc}", file=sys.stderr)
        return 2
    old_script = tree / "bench" / f"{args.bench}.py"
    if not old_script.is_file():
        print(f"compare: {args.baseline} has no bench/{args.bench}.py", file=sys.stderr)
        return 2
    env_python = Path(os.environ.get("MQCONFORM_PYTHON", sys.executable))
    tree_name = (f"{_git('rev-parse', '--short', 'HEAD')}"
                 f"{'+changes' if _git('status', '--porcelain', '--untracked-files=no') else ''}")
    befores, afters, t_old, t_new, rc_old, rc_new = [], [], 0.0, 0.0, 0, 0
    for i in range(args.rounds):
        label = f" (round {i + 1} of {args.rounds})" if args.rounds > 1 else ""
        print(f"== baseline {args.baseline}{label}")
        rc, lines, seconds = run(old_python, old_script, rest)
        befores.append(lines)
        rc_old, t_old = max(rc_old, rc), t_old + seconds
        print(f"== working tree ({tree_name}){label}")
        rc, lines, seconds = run(env_python, script, rest)
        afters.append(lines)
        rc_new, t_new = max(rc_new, rc), t_new + seconds
    before, after = ((medians(befores), medians(afters)) if args.rounds > 1
                     else (befores[0], afters[0]))
    what = f"medians of {args.rounds} alternating rounds, " if args.rounds > 1 else ""
    print(f"\n== side by side: baseline {args.baseline} -> working tree "
          f"({what}ratio after/before)")
    for line in side_by_side(before, after):
        print(line)
    print(f"wall time of the runs: {t_old:.0f} s -> {t_new:.0f} s")
    return max(rc_old, rc_new)


if __name__ == "__main__":
    sys.exit(main())
