"""Seeded-fault (mutation) self-check of the conformance suite: does the suite notice when the
server it tests departs from the model?

    python bench/mutation.py [--sample N] [--seed S] [--jobs J] [--commit REV] [--resume]
    python bench/mutation.py --only ID        apply one mutant, print its diff, run it
    python bench/mutation.py --list           every mutant's ID (nothing runs)

The suite's oracle IS the model (conformance/session.py): mutating model/*.py in the tree the
suite imports would change the oracle with the server and kill nothing. So a mutant lives only
in the server process:

1. the tree (model/, server/, wire/, spec/, mqconform/, captures/, conformance/, features/,
   pyproject.toml) is copied once per batch into a temporary snapshot, from the working tree
   or (``--commit REV``) from a commit, so that edits made meanwhile change nothing;
2. mutants are enumerated from the snapshot's model/mqrr.py, model/mqmr.py and server/app.py
   by an AST mutator (below); each has a stable ID ``file:line:col:operator:detail``;
3. the pristine snapshot is run once (``mqconform serve`` from the snapshot, the suite from the
   snapshot against it through a target file with the control API, as bench/suite.py does):
   it must give zero unexpected failures, or nothing is measured;
4. per mutant: a directory whose mutated package is a copy of the snapshot's with the one file
   mutated (the others are symlinks), ``python -P -c`` with that directory first on sys.path
   starts ``mqconform serve`` (it prints the mutated module's ``__file__``, checked to be the
   copy: the editable install of the checkout must not shadow it), and the pristine suite runs
   against it with pytest's ``-x``: KILLED at the first unexpected failure (or when the server
   does not start or the suite cannot reach it), TIMEOUT when the run exceeds --timeout
   (counted as killed, reported apart), SURVIVED when the run passes as the pristine one does.

Operators: ``cmp`` (== !=, < <=, > >=, in / not in, is / is not flipped), ``bool`` (and <-> or),
``not`` (``not x`` -> ``x``), ``const`` (an int +1 and to 0, True <-> False), ``status`` (an MQ
or NTSTATUS status constant replaced by another: MQ_OK -> MQ_ERROR_INVALID_HANDLE, a failure ->
MQ_OK and -> another failure; an RPC fault code by another), ``stmt`` (a call statement or an
assignment in a function replaced by ``pass``), ``return`` (the value replaced by None), ``if``
(the condition forced True or False). Docstrings, logging calls, annotations, decorators,
imports, ``__all__``, ``__repr__`` and f-strings are not mutated.

Survivors judged equivalent (no call a client can make observes the change) are listed in
bench/mutation_equivalent.yaml (ID: reason) and left out of the kill rate:
(killed + timeout) / (total - equivalent); the goal is 90 %. Results: bench/out/mutation.json,
rewritten after every mutant; ``--resume`` keeps the verdicts it holds for the same snapshot
(a commit) and runs only the rest.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ("model/mqrr.py", "model/mqmr.py", "server/app.py")
LAYERS = ("model", "server", "wire", "spec", "captures", "conformance", "features", "examples")
TREE = (*LAYERS, "mqconform", "pyproject.toml")
OUT = ROOT / "bench" / "out" / "mutation.json"
EQUIVALENT = ROOT / "bench" / "mutation_equivalent.yaml"
GOAL = 0.90
TIMEOUT_S = 120.0
START_TIMEOUT_S = 30.0

# ---------------------------------------------------------------------------------------------
# The mutator
# ---------------------------------------------------------------------------------------------

CMP_FLIP = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.LtE, ast.LtE: ast.Lt,
            ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.In: ast.NotIn, ast.NotIn: ast.In,
            ast.Is: ast.IsNot, ast.IsNot: ast.Is}
CMP_TEXT = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
            ast.GtE: ">=", ast.In: "in", ast.NotIn: "not-in", ast.Is: "is", ast.IsNot: "is-not"}
STATUS_NAME = re.compile(r"^(MQ_OK|MQ_ERROR\w*|MQ_INFORMATION\w*|STATUS_\w+)$")
FAULT_NAME = re.compile(r"^(NCA_\w+|RPC_X_\w+|RPC_S_\w+)$")
#: what a status constant becomes: a failure -> MQ_OK and -> the first of these it is not;
#: MQ_OK -> the first; an RPC fault code -> the first fault code of FAULT_SWAP it is not
STATUS_SWAP = ("MQ_ERROR_INVALID_HANDLE", "MQ_ERROR_INVALID_PARAMETER")
FAULT_SWAP = ("NCA_S_FAULT_CONTEXT_MISMATCH", "RPC_X_SS_IN_NULL_CONTEXT")
LOGGERS = {"log", "logger", "logging", "_log"}
#: where the values of the status and fault constants are read (by parsing, not importing)
CONSTANT_SOURCES = ("model/status.py", "wire/dcerpc.py", "server/app.py")


@dataclass(frozen=True)
class Mutant:
    """One mutation: the bytes [start, end) of ``path`` replaced by ``replacement``."""

    path: str
    line: int
    col: int
    operator: str
    detail: str
    start: int
    end: int
    replacement: str

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}:{self.col}:{self.operator}:{self.detail}"

    def apply(self, source: str) -> str:
        data = source.encode("utf-8")
        return (data[:self.start] + self.replacement.encode("utf-8")
                + data[self.end:]).decode("utf-8")

    def diff(self, source: str) -> str:
        return "".join(difflib.unified_diff(
            source.splitlines(keepends=True), self.apply(source).splitlines(keepends=True),
            f"a/{self.path}", f"b/{self.path}", n=1))


def int_constants(sources: list[str]) -> dict[str, int]:
    """NAME = <int> assignments at the top level of the given sources."""
    found: dict[str, int] = {}
    for text in sources:
        for node in ast.parse(text).body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, ast.Constant)
                    and type(node.value.value) is int):
                found[node.targets[0].id] = node.value.value
    return found


def project_constants(root: Path) -> dict[str, int]:
    return int_constants([(root / p).read_text(encoding="utf-8")
                          for p in CONSTANT_SOURCES if (root / p).exists()])


def _is_docstring(stmt: ast.stmt) -> bool:
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str))


def _is_logging(node: ast.AST) -> bool:
    """A call of log.info(...), logging.warning(...), self.log.debug(...) and the like."""
    if isinstance(node, ast.Expr):
        node = node.value
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    owner = node.func.value
    name = owner.id if isinstance(owner, ast.Name) else (
        owner.attr if isinstance(owner, ast.Attribute) else None)
    return name in LOGGERS


def _int_text(value: int, like: str) -> str:
    """``value`` written as the literal ``like`` is (hex or decimal, with or without _)."""
    if like.lower().startswith("0x"):
        return f"0x{value:_X}" if "_" in like else f"0x{value:X}"
    return f"{value:_}" if "_" in like else str(value)


class _Collector:
    """Walks one module's AST and records the mutants of every site."""

    def __init__(self, path: str, source: str, constants: dict[str, int]):
        self.path = path
        self.source = source
        self.data = source.encode("utf-8")
        self.constants = constants
        self.starts = [0]
        for line in self.data.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))
        self.mutants: list[Mutant] = []
        self.function_depth = 0

    # ------------------------------------------------------------------ helpers
    def offsets(self, node: ast.AST) -> tuple[int, int]:
        return (self.starts[node.lineno - 1] + node.col_offset,
                self.starts[node.end_lineno - 1] + node.end_col_offset)

    def text(self, node: ast.AST) -> str:
        start, end = self.offsets(node)
        return self.data[start:end].decode("utf-8")

    def add(self, node: ast.AST, operator: str, detail: str, replacement: str) -> None:
        start, end = self.offsets(node)
        detail = re.sub(r"\s+", "", detail)
        self.mutants.append(Mutant(self.path, node.lineno, node.col_offset, operator, detail,
                                   start, end, replacement))

    def own_lines(self, stmt: ast.stmt) -> bool:
        """The statement alone on its lines (nothing but blanks or a comment around it)."""
        start, end = self.offsets(stmt)
        before = self.data[self.starts[stmt.lineno - 1]:start]
        after = self.data[end:self.starts[stmt.end_lineno]].strip()
        return not before.strip() and (not after or after.startswith(b"#"))

    # ------------------------------------------------------------------ the walk
    def walk_body(self, body: list[ast.stmt]) -> None:
        for i, stmt in enumerate(body):
            if i == 0 and _is_docstring(stmt):
                continue
            self.visit(stmt)

    def visit(self, node: ast.AST) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.JoinedStr, ast.arg)):
            return
        if _is_logging(node):
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name == "__repr__":
                return
            for default in node.args.defaults + [d for d in node.args.kw_defaults if d]:
                self.visit(default)
            self.function_depth += 1
            self.walk_body(node.body)
            self.function_depth -= 1
            return
        if isinstance(node, ast.ClassDef):
            self.walk_body(node.body)
            return
        if isinstance(node, ast.Module):
            self.walk_body(node.body)
            return
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) \
                and node.test.id == "TYPE_CHECKING":
            return
        self.mutate(node)
        for name, value in ast.iter_fields(node):
            if name in ("annotation", "returns", "decorator_list", "type_comment"):
                continue
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)

    # ------------------------------------------------------------------ the operators
    def mutate(self, node: ast.AST) -> None:
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                flipped = CMP_FLIP.get(type(op))
                if flipped is None:
                    continue
                new = ast.Compare(node.left, list(node.ops), node.comparators)
                new.ops[i] = flipped()
                detail = f"{CMP_TEXT[type(op)]}->{CMP_TEXT[flipped]}"
                if len(node.ops) > 1:
                    detail += f"@{i}"
                self.add(node, "cmp", detail, f"({ast.unparse(new)})")
        elif isinstance(node, ast.BoolOp):
            swapped = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            detail = "and->or" if isinstance(node.op, ast.And) else "or->and"
            self.add(node, "bool", detail,
                     f"({ast.unparse(ast.BoolOp(swapped, node.values))})")
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self.add(node, "not", "not-x->x", f"({self.text(node.operand)})")
        elif isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool):
                self.add(node, "const", f"{value}->{not value}", str(not value))
            elif isinstance(value, int):
                text = self.text(node)
                plus = _int_text(value + 1, text)
                self.add(node, "const", f"{text}->{plus}", plus)
                if value != 0:
                    self.add(node, "const", f"{text}->0", "0")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            self.mutate_status(node)
        elif isinstance(node, ast.If):
            if not isinstance(node.test, ast.Constant):
                self.add(node.test, "if", "if->True", "True")
                self.add(node.test, "if", "if->False", "False")
        elif isinstance(node, ast.Return):
            if self.function_depth and node.value is not None and not (
                    isinstance(node.value, ast.Constant) and node.value.value is None):
                self.add(node.value, "return", "return->None", "None")
        if (self.function_depth and isinstance(node, (ast.Expr, ast.Assign, ast.AugAssign,
                                                      ast.AnnAssign))
                and self.own_lines(node)):
            if isinstance(node, ast.Expr) and not isinstance(node.value, ast.Call):
                return
            if isinstance(node, ast.AnnAssign) and node.value is None:
                return
            first = self.text(node).splitlines()[0][:40]
            self.add(node, "stmt", f"{first}->pass", "pass")

    def mutate_status(self, node: ast.Name) -> None:
        name, values = node.id, self.constants
        if name not in values:
            return
        if STATUS_NAME.match(name):
            targets = ([STATUS_SWAP[0]] if name == "MQ_OK"
                       else ["MQ_OK", next(s for s in STATUS_SWAP if s != name)])
        elif FAULT_NAME.match(name):
            targets = [next(s for s in FAULT_SWAP if s != name)]
        else:
            return
        for target in targets:
            if target in values and values[target] != values[name]:
                self.add(node, "status", f"{name}->{target}", f"0x{values[target]:08X}")


def mutants_of(path: str, source: str, constants: dict[str, int]) -> list[Mutant]:
    """Every mutant of one source file, in source order, each compiling, with unique IDs."""
    collector = _Collector(path, source, constants)
    collector.visit(ast.parse(source))
    out: list[Mutant] = []
    seen: dict[str, int] = {}
    for m in sorted(collector.mutants, key=lambda m: (m.start, m.operator, m.detail)):
        mutated = m.apply(source)
        if mutated == source:
            continue
        try:
            compile(mutated, path, "exec")
        except SyntaxError:
            continue
        if m.id in seen:  # the same change at the same place twice (a < b < c): number them
            seen[m.id] += 1
            m = Mutant(m.path, m.line, m.col, m.operator, f"{m.detail}#{seen[m.id]}", m.start,
                       m.end, m.replacement)
        else:
            seen[m.id] = 1
        out.append(m)
    return out


def all_mutants(root: Path, files: tuple[str, ...] = FILES) -> list[Mutant]:
    constants = project_constants(root)
    out: list[Mutant] = []
    for path in files:
        out += mutants_of(path, (root / path).read_text(encoding="utf-8"), constants)
    return out


def sample(mutants: list[Mutant], n: int | None, seed: int) -> list[Mutant]:
    """N mutants drawn uniformly (without replacement) with random.Random(seed); source order."""
    if n is None or n >= len(mutants):
        return list(mutants)
    chosen = sorted(random.Random(seed).sample(range(len(mutants)), n))
    return [mutants[i] for i in chosen]


# ---------------------------------------------------------------------------------------------
# Running a mutant: its own `mqconform serve`, the pristine suite against it
# ---------------------------------------------------------------------------------------------

SERVE_BOOT = ("import importlib, sys; sys.path.insert(0, sys.argv[1]); "
              "m = importlib.import_module(sys.argv[2]); print('module', m.__file__, flush=True); "
              "from mqconform.cli import main; "
              "sys.exit(main(['serve', '--port', '0', '--control-port', '0']))")
SUITE_BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); "
              "from mqconform.cli import main; sys.exit(main(sys.argv[2:]))")


def snapshot(dest: Path, commit: str | None) -> str:
    """Copy the tree the server and the suite import into ``dest``, from the working tree or
    from ``commit``; returns what was copied."""
    dest.mkdir(parents=True)
    if commit:
        sha = subprocess.run(["git", "rev-parse", "--verify", f"{commit}^{{commit}}"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.strip()
        archive = subprocess.run(["git", "archive", sha, *TREE], cwd=ROOT,
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
        return f"commit {sha}"
    ignore = shutil.ignore_patterns("__pycache__", ".pytest_cache", ".hypothesis", "reports")
    for name in TREE:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=ignore)
        else:
            shutil.copy2(src, dest / name)
    return "working tree"


def import_root(tree: Path) -> Path:
    """A folder to put first on sys.path for ``tree``: the tree laid out as it installs
    (``mqconform/`` holding model/, wire/, ... beside the command's files), by symlinks, made
    beside the tree (not in it) once."""
    site = tree.with_name(tree.name + ".site")
    package = site / "mqconform"
    if not package.is_dir():
        package.mkdir(parents=True)
        for entry in (tree / "mqconform").iterdir():
            if entry.name != "__pycache__":
                (package / entry.name).symlink_to(entry)
        for name in LAYERS:
            if (tree / name).exists():
                (package / name).symlink_to(tree / name)
    return site


#: the servers and suites running now, stopped at once when the run is interrupted
_LIVE: set[subprocess.Popen] = set()
_LIVE_LOCK = threading.Lock()
_STOPPING = threading.Event()


def _popen(argv: list[str], **kwargs) -> subprocess.Popen:
    with _LIVE_LOCK:
        if _STOPPING.is_set():
            raise KeyboardInterrupt
        proc = subprocess.Popen(argv, start_new_session=True, **kwargs)
        _LIVE.add(proc)
    return proc


def stop_all() -> None:
    _STOPPING.set()
    with _LIVE_LOCK:
        live = list(_LIVE)
    for proc in live:
        _stop(proc)


@dataclass
class Verdict:
    verdict: str  # killed | timeout | survived | error
    reason: str
    seconds: float


def _stop(proc: subprocess.Popen) -> None:
    try:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    except ProcessLookupError:
        pass
    with _LIVE_LOCK:
        _LIVE.discard(proc)


def _last_line(path: Path) -> str:
    lines = [ln for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


def run_against(base: Path, server_root: Path, work: Path, module: str, expect_file: Path,
                timeout: float, select: list[str]) -> Verdict:
    """Start ``mqconform serve`` from server_root, run the suite from base against it."""
    began = time.perf_counter()
    work.mkdir(parents=True, exist_ok=True)
    out, err = work / "serve.out", work / "serve.err"
    with out.open("w") as o, err.open("w") as e:
        server = _popen([sys.executable, "-P", "-c", SERVE_BOOT, str(import_root(server_root)),
                         module],
                        cwd=work, stdout=o, stderr=e)
    try:
        text, deadline = "", time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline and server.poll() is None:
            text = out.read_text()
            if "control API on http://" in text:
                break
            time.sleep(0.05)
        rpc = re.search(r"ncacn_ip_tcp:([\d.]+)\[(\d+)\]", text)
        control = re.search(r"control API on (http://[\d.]+:\d+)", text)
        loaded = re.search(r"^module (.+)$", text, re.M)
        if not (rpc and control):
            return Verdict("killed", f"server did not start: {_last_line(err)}",
                           time.perf_counter() - began)
        if not loaded or Path(loaded.group(1)).resolve() != expect_file.resolve():
            return Verdict("error", f"the server imported {loaded and loaded.group(1)}, not "
                           f"{expect_file}", time.perf_counter() - began)
        target = work / "target.yaml"
        target.write_text(f"name: mutant\nendpoint: ncacn_ip_tcp:{rpc.group(1)}[{rpc.group(2)}]\n"
                          f"sut_control:\n  kind: reference\n  url: {control.group(1)}\n")
        report = work / "report"
        argv = [sys.executable, "-P", "-c", SUITE_BOOT, str(import_root(base)), "run", "--target",
                str(target), "--report-dir", str(report)]
        for prefix in select:
            argv += ["--select", prefix]
        with (work / "suite.out").open("w") as o:
            suite = _popen(argv + ["--", "-x"], cwd=work, stdout=o, stderr=subprocess.STDOUT)
        try:
            rc = suite.wait(timeout=max(1.0, timeout - (time.perf_counter() - began)))
        except subprocess.TimeoutExpired:
            _stop(suite)
            return Verdict("timeout", f"the suite ran over {timeout:.0f} s",
                           time.perf_counter() - began)
        _stop(suite)
        if _STOPPING.is_set():
            raise KeyboardInterrupt
        seconds = time.perf_counter() - began
        crashed = "" if server.poll() is None else f" (the server exited {server.returncode})"
        results = report / "results.json"
        if not results.exists():
            return Verdict("killed", f"suite exit {rc}, no results: "
                           f"{_last_line(work / 'suite.out')}{crashed}", seconds)
        data = json.loads(results.read_text())
        failed = [r for r in data["cases"] if r["verdict"] == "fail" and r["unexpected"]]
        if failed:
            first = failed[0]
            message = (first.get("messages") or [""])[0].splitlines()
            return Verdict("killed", f"{first['case'].rsplit('::', 1)[-1][:70]} "
                           f"[{' '.join(first['ids'][:2])}] {message[0][:120] if message else ''}"
                           f"{crashed}", seconds)
        if rc != 0:
            return Verdict("killed", f"suite exit {rc}{crashed}", seconds)
        s = data["summary"]
        return Verdict("survived", f"{s['pass']} pass, {s['not-applicable']} n/a, "
                       f"{s['inconclusive']} inconclusive", seconds)
    finally:
        _stop(server)


class Batch:
    """One snapshot, its pristine run, and the mutants run against it."""

    def __init__(self, commit: str | None, keep: bool, timeout: float, select: list[str]):
        self.dir = Path(tempfile.mkdtemp(prefix="mqconform-mutation-"))
        self.base = self.dir / "base"
        self.source = snapshot(self.base, commit)
        self.keep, self.timeout, self.select = keep, timeout, select
        self._count = 0
        self._lock = threading.Lock()

    def close(self) -> None:
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)

    def pristine(self) -> Verdict:
        return run_against(self.base, self.base, self.dir / "pristine", "mqconform.model.mqrr",
                           self.base / "model" / "mqrr.py", self.timeout, self.select)

    def run(self, mutant: Mutant) -> Verdict:
        with self._lock:
            self._count += 1
            where = self.dir / f"mutant-{self._count}"
        tree = where / "tree"
        tree.mkdir(parents=True)
        package = mutant.path.split("/")[0]
        for entry in self.base.iterdir():
            if entry.name == package:
                shutil.copytree(entry, tree / package,
                                ignore=shutil.ignore_patterns("__pycache__"))
            else:
                (tree / entry.name).symlink_to(entry)
        original = (self.base / mutant.path).read_text(encoding="utf-8")
        (tree / mutant.path).write_text(mutant.apply(original), encoding="utf-8")
        (where / "mutant.diff").write_text(mutant.diff(original))
        module = "mqconform." + mutant.path.removesuffix(".py").replace("/", ".")
        try:
            return run_against(self.base, tree, where / "run", module, tree / mutant.path,
                               self.timeout, self.select)
        finally:
            if not self.keep:
                shutil.rmtree(where, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------------------------

def load_equivalent(path: Path = EQUIVALENT) -> dict[str, str]:
    if not path.exists():
        return {}
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise SystemExit(f"{path}: expected a mapping of mutant ID to reason")
    return {str(k): str(v) for k, v in data.items()}


def summarize(rows: list[dict], equivalent: dict[str, str]) -> dict:
    counts = {k: 0 for k in ("killed", "timeout", "survived", "equivalent", "error")}
    for row in rows:
        if row["verdict"] == "survived" and row["id"] in equivalent:
            row["equivalent"] = equivalent[row["id"]]
            counts["equivalent"] += 1
        else:
            counts[row["verdict"]] += 1
    total = len(rows) - counts["error"]
    judged = total - counts["equivalent"]
    rate = (counts["killed"] + counts["timeout"]) / judged if judged else None
    return {"total": total, **counts, "kill_rate": None if rate is None else round(rate, 4),
            "goal": GOAL, "met": rate is not None and rate >= GOAL}


def print_table(rows: list[dict], summary: dict) -> None:
    width = max((len(r["id"]) for r in rows), default=20)
    width = min(width, 90)
    for r in rows:
        verdict = "equivalent" if r.get("equivalent") else r["verdict"]
        print(f"{r['id'][:width]:{width}s}  {verdict:10s} {r['seconds']:6.1f} s  {r['reason']}")
    s = summary
    rate = "n/a" if s["kill_rate"] is None else f"{100 * s['kill_rate']:.1f} %"
    print(f"\ntotal {s['total']}: killed {s['killed']}, timeout {s['timeout']}, survived "
          f"{s['survived']}, equivalent {s['equivalent']}" +
          (f", errors {s['error']} (not counted)" if s["error"] else "") +
          f"; kill rate (killed+timeout)/(total-equivalent) = {rate} "
          f"(goal {100 * GOAL:.0f} %: {'met' if s['met'] else 'NOT met'})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, help="run N mutants drawn uniformly (default: all)")
    ap.add_argument("--seed", type=int, default=1, help="the sampling seed (default 1)")
    ap.add_argument("--jobs", type=int, default=2, help="mutants run at once (default 2)")
    ap.add_argument("--only", metavar="ID", action="append", default=[],
                    help="apply and run this mutant (repeatable); prints its diff")
    ap.add_argument("--list", action="store_true", help="print every mutant's ID and stop")
    ap.add_argument("--show", metavar="ID", help="print one mutant's diff and stop")
    ap.add_argument("--files", nargs="+", default=list(FILES), help="files to mutate")
    ap.add_argument("--timeout", type=float, default=TIMEOUT_S,
                    help=f"seconds per mutant (default {TIMEOUT_S:.0f})")
    ap.add_argument("--select", action="append", default=[], metavar="ID",
                    help="passed to `mqconform run --select` (a faster, partial suite)")
    ap.add_argument("--commit", metavar="REV",
                    help="snapshot this commit (e.g. HEAD) rather than the working tree")
    ap.add_argument("--resume", action="store_true",
                    help="keep the verdicts --out holds for the same commit; run the rest")
    ap.add_argument("--no-pristine", action="store_true",
                    help="skip the pristine run (default: skipped with --only, else done)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directories")
    ap.add_argument("--out", type=Path, default=OUT, help=f"results (default {OUT})")
    args = ap.parse_args(argv)

    if args.list or args.show:
        mutants = all_mutants(ROOT, tuple(args.files))
        if args.show:
            found = [m for m in mutants if m.id == args.show]
            if not found:
                raise SystemExit(f"no mutant {args.show}")
            print(found[0].diff((ROOT / found[0].path).read_text(encoding="utf-8")), end="")
            return 0
        by_op: dict[str, int] = {}
        for m in mutants:
            print(m.id)
            by_op[m.operator] = by_op.get(m.operator, 0) + 1
        print(f"{len(mutants)} mutants: " + ", ".join(f"{k} {v}" for k, v in
                                                     sorted(by_op.items())), file=sys.stderr)
        return 0

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)
    batch = Batch(args.commit, args.keep, args.timeout, args.select)
    pool = ThreadPoolExecutor(max_workers=max(1, args.jobs))
    try:
        mutants = all_mutants(batch.base, tuple(args.files))
        by_id = {m.id: m for m in mutants}
        if args.only:
            missing = [i for i in args.only if i not in by_id]
            if missing:
                raise SystemExit(f"no mutant {', '.join(missing)} in the {batch.source} "
                                 f"(--list shows the IDs; lines move when the source changes)")
            chosen = [by_id[i] for i in args.only]
        else:
            chosen = sample(mutants, args.sample, args.seed)
        originals = {p: (batch.base / p).read_text(encoding="utf-8") for p in args.files}
        done: dict[str, dict] = {}
        earlier_pristine = None
        if args.resume and args.out.exists():
            old = json.loads(args.out.read_text())
            if old.get("snapshot") == batch.source and batch.source.startswith("commit "):
                done = {r["id"]: r for r in old.get("mutants", []) if r["id"] in by_id
                        and r["verdict"] != "error"}
                earlier_pristine = old.get("pristine")
        todo = [m for m in chosen if m.id not in done]
        print(f"snapshot of the {batch.source} in {batch.dir}; {len(mutants)} mutants, "
              f"{len(chosen)} chosen, {len(chosen) - len(todo)} already judged, {len(todo)} "
              f"to run, {args.jobs} at once", flush=True)
        pristine = None
        if not (args.no_pristine or args.only) and todo:
            pristine = batch.pristine()
            print(f"pristine: {pristine.verdict} in {pristine.seconds:.1f} s: {pristine.reason}",
                  flush=True)
            if pristine.verdict != "survived":
                print("the pristine snapshot does not pass: nothing measured", file=sys.stderr)
                return 1
        population: dict[str, int] = {}
        for m in mutants:
            population[m.operator] = population.get(m.operator, 0) + 1
        lock = threading.Lock()

        def save() -> dict:
            rows = [done[m.id] for m in chosen if m.id in done]
            for row in rows:
                row.setdefault("diff", by_id[row["id"]].diff(originals[row["file"]]))
            summary = summarize(rows, load_equivalent())
            if not args.only:
                args.out.parent.mkdir(parents=True, exist_ok=True)
                ignore = args.out.parent / ".gitignore"
                if args.out.parent == OUT.parent and not ignore.exists():
                    ignore.write_text("*\n")
                args.out.write_text(json.dumps({
                    "snapshot": batch.source, "files": args.files, "seed": args.seed,
                    "sample": args.sample, "population": {"total": len(mutants), **population},
                    "select": args.select, "timeout_s": args.timeout, "jobs": args.jobs,
                    "pristine": vars(pristine) if pristine else earlier_pristine,
                    "summary": summary,
                    "mutants": rows}, indent=1) + "\n")
            return summary

        def one(m: Mutant) -> None:
            if args.only:
                print(m.diff(originals[m.path]), end="", flush=True)
            v = batch.run(m)
            if _STOPPING.is_set():  # its processes were stopped: no verdict
                return
            print(f"[{v.verdict:8s} {v.seconds:5.1f} s] {m.id}  {v.reason}", flush=True)
            with lock:
                done[m.id] = {"id": m.id, "file": m.path, "line": m.line,
                              "operator": m.operator, "verdict": v.verdict, "reason": v.reason,
                              "seconds": round(v.seconds, 1), "diff": m.diff(originals[m.path])}
                save()

        for future in [pool.submit(one, m) for m in todo]:
            future.result()
        summary = save()
        rows = [done[m.id] for m in chosen if m.id in done]
        print()
        print_table(rows, summary)
        for r in rows:
            if r["verdict"] == "survived" and not r.get("equivalent"):
                print(f"\nsurvivor {r['id']}\n{r['diff']}", end="")
        if not args.only:
            print(f"\nwrote {args.out}")
        return 0 if summary["met"] else 1
    except KeyboardInterrupt:
        print("interrupted: stopping the running servers and suites", file=sys.stderr)
        stop_all()
        pool.shutdown(wait=True, cancel_futures=True)
        return 130
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        batch.close()

if __name__ == "__main__":
    raise SystemExit(main())
