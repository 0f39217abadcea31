"""Seeded-fault (mutation) self-check of the conformance suite: does the suite notice when the
server it tests departs from the model?

    python bench/mutation.py --all [--jobs J] [--resume]    every served module (below)
    python bench/mutation.py --module PATTERN ...           some (wire/*, model/cursor.py, mqrr)
    python bench/mutation.py [--sample N] [--seed S] [--commit REV] [--timeout S]
    python bench/mutation.py --only ID        apply one mutant, print its diff, run it
    python bench/mutation.py --list [--all]   every mutant's ID and place; the count per module
    python bench/mutation.py --check-equivalent   the equivalent file's keys that name no mutant

The suite's oracle IS the model (conformance/session.py), and its client speaks through wire/:
mutating model/ or wire/ in the tree the suite imports would change the oracle or the client
with the server and kill nothing. So a mutant lives only in the server process:

1. the tree (model/, server/, wire/, spec/, mqconform/, captures/, conformance/, features/,
   examples/, pyproject.toml) is copied once per batch into a temporary snapshot, from the
   working tree or (``--commit REV``) from a commit, so that edits made meanwhile change
   nothing; its SHA-256 over names and bytes is the snapshot's digest;
2. mutants are enumerated from the snapshot's modules by an AST mutator (below): without
   ``--all`` or ``--module``, model/mqrr.py, model/mqmr.py and server/app.py; with ``--all``,
   every module of model/, server/ and wire/ but EXCLUDED (each with its reason: a module
   ``mqconform serve`` never loads, or one the run's configuration never reaches);
3. the pristine snapshot is run once (``mqconform serve`` from the snapshot, the suite from the
   snapshot against it through a target file with the control API, as bench/suite.py does):
   it must give zero unexpected failures, or nothing is measured; the server lists the modules
   it loaded (a selected module it did not load is reported and not judged) and the lines of
   them it ran (a trace function): a mutant none of whose lines the pristine server ran
   survives without a run, reported as "not reached" (``--run-unreached`` runs them anyway);
4. per mutant: a directory whose mutated package is a copy of the snapshot's with the one file
   mutated (the others are symlinks), ``python -P -c`` with that directory first on sys.path
   starts ``mqconform serve`` (it prints the mutated module's ``__file__``, checked to be the
   copy: the editable install of the checkout must not shadow it), and the pristine suite runs
   against it in its own process with pytest's ``-x``: KILLED at the first unexpected failure
   (or when the server does not start or the suite cannot reach it), TIMEOUT when the run
   exceeds --timeout (counted as killed, reported apart), SURVIVED when the run passes as the
   pristine one does (a case inconclusive or in error that the pristine run settles kills it:
   the suite could not vouch for that server; the run stops after the first such case, as
   ``-x`` does after a failure). The two processes share nothing but sockets:
   the server binds ports 0 (the system picks free ones, read back from its output) and each
   mutant has its own directory (target file, reports, pytest cache), so ``--jobs N`` runs N
   mutants at once;
5. narrowing (unless ``--no-narrow``): the pristine server's trace says in which ticks (1/50 s
   of CLOCK_MONOTONIC) it ran each line, and the pristine suite (bench/mutation_cases.py, a
   pytest plugin) when each case ran; a mutant runs first against only the cases during which
   its lines ran, shortest first. Until a mutated line runs, the mutated server does what the
   pristine one does, so a case that never ran it cannot be the first to tell. A failure there
   kills the mutant; a mutant that survives them runs against the whole suite (a case may see
   later what an earlier one left behind), so every survivor has passed the whole suite. A
   stateful machine's failure kills without being shrunk (``--mq-stateful-no-shrink``).
   ``--narrow-only`` stops there: such a survivor is recorded without the whole suite (its
   reason says so; a survivor costs a whole pass, some 40 s, against a few seconds for most
   kills). It can only miss kills, never add one, so the rate it gives is a lower bound; a
   later --resume without it runs those survivors against the whole suite, so a first pass
   over every mutant can be narrowed and only the survivors nobody judged equivalent pay for
   the whole suite.

A mutant's ID is ``file:scope:operator:ordinal:detail``: the dotted name of the function (or
class, or ``<module>``) holding the site, the operator, the site's rank among that operator's
sites in that scope (1, 2, ...; two mutants of one site share it), and the change
(``model/mqrr.py:RemoteReadServer.r_getserverport:if:1:if->False``). Lines added or removed
outside the function leave it unchanged. ``file:line:col`` is printed beside it for a human.

Each mutant is placed in a document section: the requirement IDs cited in a comment on its
lines (``# MS-MQRR/3.1.4.9/R4``), else in the nearest citing comment above it in its function,
else the section its function's (or an enclosing class's) docstring names
(``MS-MQRR 3.1.4.1 R_GetServerPort``), else the module docstring's.

Operators: ``cmp`` (== !=, < <=, > >=, in / not in, is / is not flipped), ``bool`` (and <-> or),
``not`` (``not x`` -> ``x``), ``const`` (an int +1 and to 0, True <-> False), ``status`` (an MQ
or NTSTATUS status constant replaced by another: MQ_OK -> MQ_ERROR_INVALID_HANDLE, a failure ->
MQ_OK and -> another failure; an RPC fault code by another), ``stmt`` (a call statement or an
assignment in a function replaced by ``pass``), ``return`` (the value replaced by None), ``if``
(the condition forced True or False). Docstrings, logging calls, annotations, decorators,
imports, ``__all__``, ``__repr__`` and f-strings are not mutated.

Survivors judged equivalent (no call a client can make observes the change, or what the
mutated server does is also what the documents allow, so that a suite killing it would fail a
conformant server) are listed in bench/mutation_equivalent.yaml (ID: reason) and left out of
the kill rate: (killed + timeout) / (total - equivalent); the goal is 95 %. A mutant judged so
is not run again (``--run-equivalent`` runs them, to check the judgements). The report gives
the rate overall, per module and per section, lists the equivalents with their reasons and
every survivor nobody judged (with ``--all``, one such survivor makes the exit status 1). Results:
bench/out/mutation.json and bench/out/mutation.md, rewritten after every mutant; ``--resume``
keeps the verdicts they hold for a snapshot of the same digest and runs only the rest, so
``--all --resume --budget 4800`` run again and again covers every mutant in CI-sized runs (exit
3 while some are left). A snapshot that differs only in the suite's cases and steps
(conformance/, features/: the same ``served_digest``) keeps the kills of the earlier one, each
row naming the snapshot it was judged on, and runs every other mutant again: cases are added
or made stricter, never weakened, so what a case killed it still kills (``--no-carry`` keeps
none). A snapshot whose served code changed keeps the kills of the mutants whose own module
is unchanged (``carried_by_module``): a change elsewhere seldom hides a fault a case caught,
and ``--recheck-carried N`` runs N of them again to measure how seldom. ``--auth`` runs the
servers with authentication required and the suite with credentials (the configuration that
reaches the access checks and the authentication paths); ``--merge`` joins a plain and an
``--auth`` run of one snapshot into one report, a mutant killed in either counting as killed.

The whole campaign takes longer than any one machine's session, and bench/out/ is not kept:
``--ledger`` also writes every verdict that took a run to bench/mutation_ledger.jsonl (a
header naming the snapshot and its digests, then one line per mutant, sorted by ID), a file
kept in the repository. ``--all --resume --narrow-only --ledger --commit REV`` on any clone
keeps the ledger's verdicts as it keeps --out's (the same snapshot: all; the same served
code: the kills) and runs the rest.

The harness's servers and suites write compiled bytecode into the snapshot even where
PYTHONDONTWRITEBYTECODE is set: the pristine run compiles each module once and the mutants'
processes load it (a mutated module's own is removed from its copy).
"""

from __future__ import annotations

import argparse
import ast
import bisect
import difflib
import functools
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
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: mutated without --all or --module (the first three modules the self-check covered)
FILES = ("model/mqrr.py", "model/mqmr.py", "server/app.py")
#: the layers whose code `mqconform serve` runs: --all mutates every module of them but these
SERVED = ("model", "server", "wire")
#: modules of the served layers not mutated, each with the reason no verdict on it would mean
#: what the kill rate says (a mutant the run cannot reach survives whatever the suite checks)
EXCLUDED = {
    "model/__init__.py": "a docstring only",
    "server/__init__.py": "a docstring only",
    "wire/__init__.py": "a docstring only",
    "model/observer.py": "the trace validator (mqconform captures validate): never loaded by "
                         "`mqconform serve`",
    "model/invariants.py": "the ADM invariant checker of the model's own tests: never loaded by "
                           "`mqconform serve`",
    "model/directory.py": "the MS-MQDMPR directory events: never loaded by `mqconform serve` "
                          "(no directory service is served)",
    "wire/impacket_ndr.py": "the second NDR codec the tests compare wire/ndr.py with: never "
                            "loaded by `mqconform serve`",
    "server/faults.py": "seeded faults for the validator's bench: off unless `serve --fault`",
    "server/store.py": "loaded only with `serve --store`; the suite never restarts the server, "
                       "so it cannot observe durability (bench/durable.py does)",
    "server/epm.py": "the endpoint mapper starts only with `serve --epm-port`; the suite's "
                     "target names the RemoteRead endpoint itself",
    "server/control.py": "the control API is the suite's harness (sets up queues and "
                         "messages), not MSMQ: a mutant there changes the test set-up",
    "server/ntlm.py": "reached only by an authenticated target (examples/authenticated.yaml); "
                      "the run's target is unauthenticated, so no call reaches it",
}
LAYERS = ("model", "server", "wire", "spec", "captures", "conformance", "features", "examples")
TREE = (*LAYERS, "mqconform", "pyproject.toml")
#: the suite's side of the tree: its cases and steps, and the golden pcaps the scenarios'
#: exchanges are rendered to (data of the tests, read by no served module). A snapshot that
#: differs from another only there has the same served code (``served_digest``), so a kill
#: there stays a kill (--resume)
SUITE_SIDE = ("conformance", "features", "captures/golden")
#: what `mqconform serve` never loads (python -X importtime -m mqconform.cli serve lists what it
#: does): the suite's side, the capture tools (the run's recorder, the decoder, the Spark
#: validator), the example targets, and the modules of the served layers only the tests and
#: other commands import. The served code's digest leaves them out: a kill judged before a
#: change there is a kill after it
NOT_SERVED = (*SUITE_SIDE, "captures", "examples", "wire/impacket_ndr.py", "model/observer.py",
              "model/invariants.py",
              # of spec/, serve imports the package and spec/catalog.py (the command line's
              # parser reads its DOCS) and reads none of its files: the errata, the choices,
              # the catalog's entries, the documents and the report's templates change no
              # verdict (a file added to spec/ later counts as served until listed here)
              "spec/catalog", "spec/documents", "spec/seeds", "spec/profiles", "spec/templates",
              "spec/choices.py", "spec/choices.yaml", "spec/errata.py", "spec/errata.yaml",
              "spec/extract.py", "spec/generate.py", "spec/profiles.py", "spec/report.py",
              "spec/sources.py", "spec/stats.py", "spec/trace.py")
#: the scenarios' text (and the golden pcaps rendered from it): a case's fingerprint
#: (bench/mutation_cases.py) holds its part of it; the rest of the tree (served code, steps,
#: runner, catalog) is the ``frame_digest``. Two snapshots of one frame run a case of one
#: fingerprint alike, so a survivor whose cases kept their fingerprints stands (--resume)
FRAME_SKIP = ("features", "captures/golden")
OUT = ROOT / "bench" / "out" / "mutation.json"
EQUIVALENT = ROOT / "bench" / "mutation_equivalent.yaml"
#: the campaign's record, kept in the repository: every verdict that took a run
LEDGER = ROOT / "bench" / "mutation_ledger.jsonl"
#: a ledger row's reason is cut to this many characters
LEDGER_REASON = 160
GOAL = 0.95
TIMEOUT_S = 120.0
#: with no --timeout, a mutant's suite may take this many times what the pristine run took (and
#: at least TIMEOUT_S): a load the machine had meanwhile must not pass for a hang
TIMEOUT_FACTOR = 3.0
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
    #: the dotted names of the classes and functions around the site (``<module>`` outside any)
    scope: str = "<module>"
    #: 1, 2, ...: the site's rank among the sites of this operator in this scope, in source order
    ordinal: int = 0
    end_line: int = 0

    @property
    def id(self) -> str:
        """``file:scope:operator:ordinal:detail``: no line number, so that a line added or
        removed anywhere outside the mutant's own function leaves it unchanged."""
        return f"{self.path}:{self.scope}:{self.operator}:{self.ordinal}:{self.detail}"

    @property
    def legacy_id(self) -> str:
        """The ID bench/mutation.py gave before: ``file:line:col:operator:detail``."""
        return f"{self.path}:{self.line}:{self.col}:{self.operator}:{self.detail}"

    @property
    def where(self) -> str:
        """``file:line:col``, for a human to find the site."""
        return f"{self.path}:{self.line}:{self.col}"

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
        self.scope: list[str] = []

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
                                   start, end, replacement,
                                   scope=".".join(self.scope) or "<module>",
                                   end_line=node.end_lineno))

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
            self.scope.append(node.name)  # the defaults are the function's, for the IDs
            for default in node.args.defaults + [d for d in node.args.kw_defaults if d]:
                self.visit(default)
            self.function_depth += 1
            self.walk_body(node.body)
            self.function_depth -= 1
            self.scope.pop()
            return
        if isinstance(node, ast.ClassDef):
            self.scope.append(node.name)
            self.walk_body(node.body)
            self.scope.pop()
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
    # the ordinal: the site's rank among the sites of its operator in its scope (two mutants of
    # one site, e.g. const 3->4 and 3->0, share it; their details tell them apart)
    sites: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for m in collector.mutants:
        sites.setdefault((m.scope, m.operator), []).append((m.start, m.end))
    rank = {key: {site: i for i, site in enumerate(sorted(set(found)), 1)}
            for key, found in sites.items()}
    collector.mutants = [replace(m, ordinal=rank[m.scope, m.operator][m.start, m.end])
                         for m in collector.mutants]
    # each mutant is compiled with the top-level statement that holds it (a module-level def
    # or class starts at column 0 and compiles alone): as strict as compiling the whole module,
    # for a fraction of the time
    data = collector.data
    tops = [collector.offsets(stmt) for stmt in ast.parse(source).body]
    out: list[Mutant] = []
    seen: dict[str, int] = {}
    for m in sorted(collector.mutants, key=lambda m: (m.start, m.operator, m.detail)):
        if data[m.start:m.end] == m.replacement.encode("utf-8"):
            continue
        lo, hi = next(((a, b) for a, b in tops if a <= m.start and m.end <= b), (0, len(data)))
        lo = data.rfind(b"\n", 0, lo) + 1  # from the start of its line
        segment = (data[lo:m.start] + m.replacement.encode("utf-8") + data[m.end:hi])
        try:
            compile(segment.decode("utf-8"), path, "exec", dont_inherit=True)
        except SyntaxError:
            continue
        if m.id in seen:  # the same change at the same place twice (a < b < c): number them
            seen[m.id] += 1
            m = replace(m, detail=f"{m.detail}#{seen[m.id]}")
        else:
            seen[m.id] = 1
        out.append(m)
    return out


# ---------------------------------------------------------------------------------------------
# Where a mutant sits in the documents
# ---------------------------------------------------------------------------------------------

REQUIREMENT = re.compile(r"\bMS-[A-Z0-9]+/\d+(?:\.\d+)*/R\d+\b")
SECTION = re.compile(r"\b(MS-[A-Z0-9]+|C706) (\d+(?:\.\d+)*)\b")
DOCUMENT = re.compile(r"\b(MS-[A-Z0-9]+|C706)\b")
UNMAPPED = "(no section)"


def section_of_requirement(requirement: str) -> str:
    """``MS-MQRR/3.1.4.9/R4`` -> ``MS-MQRR 3.1.4.9``."""
    document, number, _ = requirement.split("/")
    return f"{document} {number}"


@dataclass(frozen=True)
class Place:
    """The section a mutant is counted under, the requirement IDs that put it there, and how
    they were found: ``line`` (cited on the mutated lines), ``step`` (the nearest citing comment
    above it in its function), ``docstring`` (of its function or a class or function around it),
    ``module`` (the module's docstring) or ``none``."""

    section: str
    requirements: tuple[str, ...]
    how: str


class SectionMap:
    """One module's citations: its comments' requirement IDs by line, and every function's and
    class's extent and docstring, under the same dotted names as Mutant.scope."""

    def __init__(self, source: str):
        import io
        import tokenize

        self.cited: dict[int, list[str]] = {}
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                found = REQUIREMENT.findall(token.string)
                if found:
                    self.cited.setdefault(token.start[0], []).extend(found)
        tree = ast.parse(source)
        self.module_doc = ast.get_docstring(tree) or ""
        self.scopes: dict[str, tuple[int, int, str]] = {}

        def walk(body: list[ast.stmt], prefix: list[str]) -> None:
            for node in body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    name = [*prefix, node.name]
                    self.scopes[".".join(name)] = (node.lineno, node.end_lineno,
                                                   ast.get_docstring(node) or "")
                    walk(node.body, name)
                elif hasattr(node, "body"):  # if/for/while/with/try: the same scope
                    for field in ("body", "orelse", "finalbody"):
                        walk(getattr(node, field, []) or [], prefix)
                    for handler in getattr(node, "handlers", []):
                        walk(handler.body, prefix)

        walk(tree.body, [])

    @staticmethod
    def _from_doc(doc: str) -> tuple[str, tuple[str, ...]] | None:
        ids = tuple(dict.fromkeys(REQUIREMENT.findall(doc)))
        named = SECTION.search(doc)
        if named:
            return f"{named.group(1)} {named.group(2)}", ids
        if ids:
            return section_of_requirement(ids[0]), ids
        document = DOCUMENT.search(doc)  # a document named without a section: the document
        return (document.group(1), ()) if document else None

    def place(self, scope: str, line: int, end_line: int = 0) -> Place:
        own = [r for n in range(line, max(line, end_line) + 1) for r in self.cited.get(n, [])]
        if own:
            own = list(dict.fromkeys(own))
            return Place(section_of_requirement(own[0]), tuple(own), "line")
        names = scope.split(".") if scope != "<module>" else []
        if names and scope in self.scopes:
            first = self.scopes[scope][0]
            for n in range(line - 1, first, -1):
                if n in self.cited:
                    ids = tuple(dict.fromkeys(self.cited[n]))
                    return Place(section_of_requirement(ids[0]), ids, "step")
        while names:
            entry = self.scopes.get(".".join(names))
            found = entry and self._from_doc(entry[2])
            if found:
                return Place(found[0], found[1], "docstring")
            names.pop()
        found = self._from_doc(self.module_doc)
        if found:
            return Place(found[0], found[1], "module")
        return Place(UNMAPPED, (), "none")


def all_mutants(root: Path, files: tuple[str, ...] = FILES) -> list[Mutant]:
    constants = project_constants(root)
    out: list[Mutant] = []
    for path in files:
        out += mutants_of(path, (root / path).read_text(encoding="utf-8"), constants)
    return out


def served_files(root: Path) -> list[str]:
    """Every module of the served layers, EXCLUDED aside, in path order."""
    return sorted(p.relative_to(root).as_posix() for layer in SERVED
                  for p in (root / layer).glob("*.py")
                  if p.relative_to(root).as_posix() not in EXCLUDED)


def select_files(root: Path, every: bool, patterns: list[str],
                 files: list[str] | None = None) -> list[str]:
    """The modules to mutate: ``files`` as given; else every served one (``every``); else the
    served ones a pattern matches (a glob on the path, or a part of it); else FILES."""
    import fnmatch

    if files:
        return list(files)
    served = served_files(root)
    if every:
        return served
    if patterns:
        chosen = [f for f in served if any(
            fnmatch.fnmatch(f, pat) if any(c in pat for c in "*?[") else pat in f
            for pat in patterns)]
        if not chosen:
            raise SystemExit(f"--module {' '.join(patterns)}: no served module matches "
                             f"(served: {', '.join(served)})")
        return chosen
    return list(FILES)


def sample(mutants: list[Mutant], n: int | None, seed: int) -> list[Mutant]:
    """N mutants drawn uniformly (without replacement) with random.Random(seed); source order."""
    if n is None or n >= len(mutants):
        return list(mutants)
    chosen = sorted(random.Random(seed).sample(range(len(mutants)), n))
    return [mutants[i] for i in chosen]


# ---------------------------------------------------------------------------------------------
# Running a mutant: its own `mqconform serve`, the pristine suite against it
# ---------------------------------------------------------------------------------------------

SERVE_BOOT = """\
import importlib, sys, threading
sys.path.insert(0, sys.argv[1])
reached = {}
if len(sys.argv) > 3:  # the pristine run: which lines of the tree's modules the server runs,
    # and when: the ticks (TICK_S of time.monotonic()) in which it ran each line
    from time import monotonic
    prefix, skip = sys.argv[1].rstrip('/') + '/mqconform/', set()

    def hit(lines, number):
        tick = int(monotonic() * TICKS_PER_S)
        ticks = lines.get(number)
        if ticks is None:
            lines[number] = [tick]
        elif ticks[-1] != tick:
            ticks.append(tick)

    def trace(frame, event, arg):
        name = frame.f_code.co_filename
        lines = reached.get(name)
        if lines is None:
            if name in skip or not name.startswith(prefix):
                skip.add(name)
                return None
            lines = reached[name] = {}
        hit(lines, frame.f_lineno)

        def line(frame, event, arg):
            if event == 'line':
                hit(lines, frame.f_lineno)
            return line
        return line

    sys.settrace(trace)
    threading.settrace(trace)
m = importlib.import_module(sys.argv[2])
print('module', m.__file__, flush=True)
from mqconform.cli import main
try:
    import json, os
    rc = main(['serve', '--port', '0', '--control-port', '0',
               *json.loads(os.environ.get('MQC_MUTATION_SERVE', '["--control-unauthenticated"]'))])
finally:
    if len(sys.argv) > 3:  # the modules the server loaded, the lines it ran
        sys.settrace(None)
        threading.settrace(None)
        with open(sys.argv[3], 'w') as out:
            for module in list(sys.modules.values()):
                if getattr(module, '__file__', None):
                    print(module.__file__, file=out)
        with open(sys.argv[3] + '.lines', 'w') as out:
            for name, lines in list(reached.items()):
                print(name, *(f"{n}:{','.join(map(str, sorted(set(t))))}"
                              for n, t in sorted(lines.items())), file=out)
sys.exit(rc)
"""
#: the resolution of the pristine server's line trace: 1 / TICKS_PER_S seconds
TICKS_PER_S = 50
SERVE_BOOT = SERVE_BOOT.replace("TICKS_PER_S", str(TICKS_PER_S))
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


def tree_digest(tree: Path, skip: tuple[str, ...] = ()) -> str:
    """A SHA-256 over the snapshot's files (names and bytes), but those under the folders
    ``skip`` (paths from the tree's top): --resume keeps the verdicts of a snapshot with the
    same digest, from a commit or from the working tree alike."""
    import hashlib

    def skipped(rel: str) -> bool:
        return any(rel == folder or rel.startswith(folder + "/") for folder in skip)

    h = hashlib.sha256()
    for path in sorted(p for p in tree.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                       and not skipped(p.relative_to(tree).as_posix())):
        h.update(path.relative_to(tree).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def module_digests(tree: Path) -> dict[str, str]:
    """A SHA-256 of each served module's bytes (every module of the served layers, EXCLUDED
    too): a kill of a mutant whose module is the same in two snapshots can be carried from one
    to the other when only other modules changed (--resume)."""
    import hashlib

    return {p.relative_to(tree).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for layer in SERVED for p in sorted((tree / layer).glob("*.py"))}


def resumed(old: dict, digest: str, served_digest: str | None, ids: set[str],
            judged: dict[str, str], narrowed: bool = False, rerun_timeouts: bool = False,
            modules: dict[str, str] | None = None, configuration: str = "plain"
            ) -> tuple[dict[str, dict], str]:
    """The verdicts of an earlier results file (``old``) that still hold for this run
    (--resume), by mutant ID, and a line saying which:

    - from a snapshot of the same ``digest``: every verdict but the harness's errors, a
      judged-equivalent mutant left unrun whose judgement has since been withdrawn, and (unless
      ``narrowed``: --narrow-only again) a survivor that faced only the cases that ran its
      lines, which now faces the whole suite;
    - from a snapshot whose served code is the same (``served_digest``: only the suite's cases
      or steps differ): the kills and timeouts, each naming the snapshot it was judged on
      (``carried_from``). The suite's cases are added to or made stricter, never weakened
      (the project's rule for tests), so a case that killed a mutant still does; a survivor
      faces the new cases, so it runs again. ``served_digest`` None (``--no-carry``): nothing
      is carried;
    - from a snapshot of the same configuration whose served code differs (``modules``: this
      snapshot's module digests, and the earlier one's): the kills and timeouts of the
      mutants whose own module is byte for byte the same, each naming the snapshot it was
      judged on and marked ``carried_by_module``. A change in another module could in
      principle hide a mutant that was killed; ``--recheck-carried N`` runs N such kills
      again and reports how many still kill. ``modules`` None (``--no-carry``): nothing;
    - otherwise nothing.

    With ``rerun_timeouts`` (--rerun-timeouts) a timeout is kept from neither: it runs again."""
    rows = [r for r in old.get("mutants", []) if r["id"] in ids and r["verdict"] != "error"
            and not (rerun_timeouts and r["verdict"] == "timeout")]
    if old.get("digest") == digest:
        kept = {r["id"]: r for r in rows if not (r.get("not_run") and r["id"] not in judged)
                and (narrowed or not r.get("narrowed"))}
        return kept, f"the same snapshot: {len(kept)} verdicts kept"
    if served_digest is not None and old.get("served_digest") == served_digest:
        source = old.get("snapshot")
        kept = {r["id"]: {**r, "carried_from": r.get("carried_from") or source}
                for r in rows if r["verdict"] in ("killed", "timeout")}
        return kept, (f"the same served code as {source}, another suite: its {len(kept)} "
                      f"kills are carried, every other mutant runs again")
    earlier = old.get("module_digests")
    if modules and earlier and old.get("configuration", "plain") == configuration:
        source = old.get("snapshot")
        same = {path for path, sha in modules.items() if earlier.get(path) == sha}
        kept = {r["id"]: {**r, "carried_from": r.get("carried_from") or source,
                          "carried_by_module": True}
                for r in rows if r["verdict"] in ("killed", "timeout")
                and r["id"].split(":", 1)[0] in same}
        changed = sorted(path for path in modules if path not in same)
        return kept, (f"served code changed since {source} in {len(changed)} modules "
                      f"({', '.join(changed[:6])}{', ...' if len(changed) > 6 else ''}): the "
                      f"{len(kept)} kills of the {len(same)} unchanged modules are carried, "
                      f"every other mutant runs again")
    return {}, "of another snapshot: every mutant runs again"


def _configured(name: str) -> str:
    """What a configuration adds to a snapshot's digests: its verdicts hold in it alone."""
    return "" if name == "plain" else f"+{name}"


def served_digest_of(doc: dict) -> str | None:
    """The served code's digest of a results file or ledger, worked out again from the commit
    it was run on under today's NOT_SERVED (the file holds the digest under the rule of its
    day, or none if older than the rule); None for a working tree's snapshot or a commit this
    clone does not have."""
    return _served_digest_of(doc.get("snapshot") or "", doc.get("configuration", "plain"))


def _served_digest_of(source: str, configuration: str) -> str | None:
    return _digests_of(source, configuration)[0]


@functools.cache
def _digests_of(source: str, configuration: str) -> tuple[str | None, dict[str, str] | None]:
    """The served code's digest and the module digests of a commit's snapshot (None, None for
    a working tree's or a commit this clone does not have)."""
    if not source.startswith("commit "):
        return None, None
    with tempfile.TemporaryDirectory(prefix="mqconform-mutation-") as tmp:
        tree = Path(tmp) / "base"
        try:
            snapshot(tree, source.split()[1])
        except subprocess.CalledProcessError:
            return None, None  # a commit this clone does not have
        return tree_digest(tree, NOT_SERVED) + _configured(configuration), module_digests(tree)


def rebased(doc: dict, no_carry: bool) -> dict:
    """An earlier results file or ledger with its served digest worked out again under
    today's rule (served_digest_of), and its module digests (worked out from its commit if it
    holds none), unless nothing is to be carried from it."""
    if not no_carry:
        served, modules = _digests_of(doc.get("snapshot") or "",
                                      doc.get("configuration", "plain"))
        doc["served_digest"] = served or doc.get("served_digest")
        doc["module_digests"] = doc.get("module_digests") or modules
    return doc


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


#: the verdicts of a case other than a pass: the run could not judge it (the suite cannot vouch
#: for the target), or it failed where the failure does not gate a run (a check of a SHOULD or
#: MAY, a warning; an expected failure): a case in one of them that the pristine run passes
#: kills the mutant, for the suite noticed the change
UNSETTLED = ("inconclusive", "error", "fail")
#: the reason of a survivor that was not run: the pristine server never runs its lines
UNREACHED = "not reached"
#: ``mqconform run``'s exit status for a usage or configuration error (conformance/verdicts.py)
USAGE_EXIT = 2
#: what `mqconform run` says (exit 2) of a target that does not answer its first bind, or
#: refuses it
UNREACHABLE = (": unreachable: ", "bind to RemoteRead on port")
NOT_RUN = "not run"
#: the reason's mark of a survivor that faced only the cases that ran its lines (--narrow-only)
NARROWED = "the whole suite not run"


def unsettled_cases(results: Path) -> set[str]:
    if not results.exists():
        return set()
    return {r["case"] for r in json.loads(results.read_text())["cases"]
            if r["verdict"] in UNSETTLED}


#: the two identities the access-check cases use (conformance/targetfile.py ``identities``): their
#: users in a provisioning document, and the target file's ``identities``; passwords and the
#: control API's token come from environment variables the run sets, never from a file
IDENTITY_USERS = """\
    - {name: boss, password_env: MQC_MUT_ADMIN, administrator: true}
    - {name: reader, password_env: MQC_MUT_READER}
"""
IDENTITIES = """\
identities:
  administrator: {user: boss, password_env: MQC_MUT_ADMIN}
  reader: {user: reader, password_env: MQC_MUT_READER}
"""
#: the provisioning document of the authenticated configuration (--auth): packet integrity
#: required, the suite's user an administrator, and the two identities
AUTH_DOCUMENT = """\
security:
  authentication: required
  level: integrity
  users:
    - {name: suite, password_env: MQC_MUT_SUITE, administrator: true}
""" + IDENTITY_USERS
AUTH_TARGET = "credentials: {user: suite, password_env: MQC_MUT_SUITE, level: integrity}\n" + \
    IDENTITIES


#: the file a run's directory holds Config.provisioning in
PROVISIONING = "queues.yaml"


#: the provisioning document of the plain configuration: as `mqconform run --target reference`
#: serves (conformance/session.py _serve_reference), no authentication required of the suite's
#: own client, and the two identities, who authenticate with NTLM
PLAIN_DOCUMENT = "security:\n  authentication: none\n  users:\n" + IDENTITY_USERS
PLAIN_TARGET = IDENTITIES


@dataclass(frozen=True)
class Config:
    """How the servers of a batch run and how the suite reaches them: ``plain`` (PLAIN_DOCUMENT:
    the suite's client unauthenticated, the identities of the access-check cases signing
    theirs, the control API on loopback with a token) or ``authenticated``
    (AUTH_DOCUMENT: every call signed with NTLM, the access checks of server/security.py and
    the authentication paths of server/rpc.py and wire/auth.py in play for the suite's own
    client too)."""

    name: str = "plain"
    provisioning: str = ""  # the provisioning document serve reads (--queues), if any
    token_env: str | None = None  # the variable holding the control API's token, if any
    target_extra: str = ""  # more of the suite's target file (credentials, identities)
    env: tuple[tuple[str, str], ...] = ()  # the secrets, for the server and the suite

    def serve_args(self) -> tuple[str, ...]:
        provisioning = ("--queues", PROVISIONING) if self.provisioning else ()
        control = (("--control-token-env", self.token_env) if self.token_env
                   else ("--control-unauthenticated",))
        return provisioning + control


def _secrets(*names: str) -> tuple[tuple[str, str], ...]:
    """A password or token made up for this run for each environment variable named."""
    import secrets
    return tuple((name, secrets.token_urlsafe(18)) for name in names)


def authenticated_config() -> Config:
    return Config("authenticated", AUTH_DOCUMENT, "MQC_MUT_TOKEN", AUTH_TARGET,
                  _secrets("MQC_MUT_SUITE", "MQC_MUT_ADMIN", "MQC_MUT_READER", "MQC_MUT_TOKEN"))


def plain_config() -> Config:
    # a server whose provisioning has a security section takes the control API's calls only
    # with a token, as the embedded reference does
    return Config("plain", PLAIN_DOCUMENT, "MQC_MUT_TOKEN", PLAIN_TARGET,
                  _secrets("MQC_MUT_ADMIN", "MQC_MUT_READER", "MQC_MUT_TOKEN"))


PLAIN = plain_config()


def _child_environ() -> dict[str, str]:
    """The environment of a server or suite the harness starts: its own, but always writing
    compiled bytecode. The snapshot is the harness's own temporary copy, so the pristine run
    compiles each module once, into the snapshot, and every mutant's server and suite load
    those files instead of compiling the whole tree again (some 2 s of CPU per mutant where
    PYTHONDONTWRITEBYTECODE is set)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_against(base: Path, server_root: Path, work: Path, module: str, expect_file: Path,
                timeout: float, select: list[str], loaded: Path | None = None,
                unsettled: set[str] | None = None, cases: list[str] | None = None,
                times: Path | None = None, prints: Path | None = None,
                config: Config = PLAIN) -> Verdict:
    """Start ``mqconform serve`` from server_root, run the suite from base against it.
    ``unsettled``: the cases the pristine run left inconclusive (or in error); another case
    left so kills the mutant (None: not known, such cases are not held against it).
    ``cases``: only these (pytest node IDs), in this order; ``times``: write each case's
    start and end there, ``prints``: each case's fingerprint (bench/mutation_cases.py). A
    stateful machine's failure is not shrunk: the first failure kills the mutant."""
    began = time.perf_counter()
    work.mkdir(parents=True, exist_ok=True)
    out, err = work / "serve.out", work / "serve.err"
    if config.provisioning:
        (work / PROVISIONING).write_text(config.provisioning)
    secrets_env = dict(config.env)
    with out.open("w") as o, err.open("w") as e:
        server = _popen([sys.executable, "-P", "-c", SERVE_BOOT, str(import_root(server_root)),
                         module, *([str(loaded)] if loaded else [])],
                        cwd=work, stdout=o, stderr=e,
                        env=dict(_child_environ(), **secrets_env,
                                 MQC_MUTATION_SERVE=json.dumps(config.serve_args())))
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
        token = f"  token_env: {config.token_env}\n" if config.token_env else ""
        target.write_text(f"name: mutant\nendpoint: ncacn_ip_tcp:{rpc.group(1)}[{rpc.group(2)}]\n"
                          f"sut_control:\n  kind: reference\n  url: {control.group(1)}\n{token}"
                          f"{config.target_extra}")
        report = work / "report"
        argv = [sys.executable, "-P", "-c", SUITE_BOOT, str(import_root(base)), "run", "--target",
                str(target), "--report-dir", str(report), "--allow-inconclusive"]
        for prefix in select:
            argv += ["--select", prefix]
        env = dict(_child_environ(), **secrets_env, PYTHONPATH=os.pathsep.join(
            [str(ROOT / "bench"), *filter(None, [os.environ.get("PYTHONPATH")])]))
        env.pop("MQC_MUTATION_CASES", None)
        env.pop("MQC_MUTATION_TIMES", None)
        env.pop("MQC_MUTATION_PRINTS", None)
        env.pop("MQC_MUTATION_UNSETTLED", None)
        if unsettled is not None:
            # the run stops at the first case left unsettled that the pristine run settles
            (work / "unsettled.json").write_text(json.dumps(sorted(unsettled)))
            env["MQC_MUTATION_UNSETTLED"] = str(work / "unsettled.json")
        if cases is not None:
            (work / "cases.json").write_text(json.dumps(cases))
            env["MQC_MUTATION_CASES"] = str(work / "cases.json")
        if times is not None:
            env["MQC_MUTATION_TIMES"] = str(times)
        if prints is not None:
            env["MQC_MUTATION_PRINTS"] = str(prints)
        with (work / "suite.out").open("w") as o:
            suite = _popen(argv + ["--", "-x", "-p", "mutation_cases",
                                   "--mq-stateful-no-shrink"],
                           cwd=work, stdout=o, stderr=subprocess.STDOUT, env=env)
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
            # a usage error (a bad --select, a bad target file) is the harness's, not the
            # mutant's: it judges nothing; but after a pristine run that passed with the same
            # arguments (``unsettled`` known), or when the server started and then did not
            # answer or refused the suite's first bind, the mutant broke the server
            last = _last_line(work / "suite.out")
            refused = (rc == USAGE_EXIT and unsettled is None
                       and not any(mark in last for mark in UNREACHABLE))
            verdict = "error" if refused else "killed"
            return Verdict(verdict, f"suite exit {rc}, no results: {last}{crashed}", seconds)
        data = json.loads(results.read_text())
        failed = [r for r in data["cases"] if r["verdict"] == "fail" and r["unexpected"]]
        if failed:
            first = failed[0]
            message = (first.get("messages") or [""])[0].splitlines()
            return Verdict("killed", f"{first['case'].rsplit('::', 1)[-1][:70]} "
                           f"[{' '.join(first['ids'][:2])}] {message[0][:120] if message else ''}"
                           f"{crashed}", seconds)
        if unsettled is not None:
            new = sorted(r["case"] for r in data["cases"]
                         if r["verdict"] in UNSETTLED and r["case"] not in unsettled)
            if new:
                first = next(r for r in data["cases"] if r["case"] == new[0])
                message = (first.get("messages") or [""])[0].splitlines()
                return Verdict("killed", f"{len(new)} cases {first['verdict']} that the pristine "
                               f"run settles: {new[0].rsplit('::', 1)[-1][:60]} "
                               f"{message[0][:100] if message else ''}{crashed}", seconds)
        if rc != 0:
            return Verdict("killed", f"suite exit {rc}{crashed}", seconds)
        s = data["summary"]
        return Verdict("survived", f"{s['pass']} pass, {s['not-applicable']} n/a, "
                       f"{s['inconclusive']} inconclusive", seconds)
    finally:
        _stop(server)


def reached_trace(listing: Path, base: Path) -> dict[str, dict[int, list[int]]]:
    """The lines the pristine server ran, per file of the tree at ``base`` (``model/mqrr.py``),
    each with the ticks (SERVE_BOOT's trace, 1 / TICKS_PER_S s of time.monotonic()) in which it
    ran: ``path: {line: [tick, ...]}``."""
    found: dict[str, dict[int, list[int]]] = {}
    if not listing.exists():
        return found
    base = base.resolve()
    for row in listing.read_text().splitlines():
        name, *lines = row.split(" ")
        try:
            path = Path(name).resolve().relative_to(base).as_posix()
        except ValueError:
            continue
        into = found.setdefault(path, {})
        for entry in lines:
            number, _, ticks = entry.partition(":")
            into.setdefault(int(number), []).extend(int(t) for t in ticks.split(",") if t)
    return found


def reached_lines(listing: Path, base: Path) -> dict[str, set[int]]:
    """The lines the pristine server ran, per file of the tree at ``base`` (``model/mqrr.py``)."""
    return {path: set(lines) for path, lines in reached_trace(listing, base).items()}


#: the calls a module-level statement may make and still only pass values on (builtins that
#: keep nothing): such a statement is followed to the readers of what it binds (Readers)
PURE_CALLS = frozenset({"dict", "set", "frozenset", "tuple", "list", "sorted", "reversed",
                        "len", "min", "max", "sum", "any", "all", "int", "str", "bytes",
                        "bool", "range", "enumerate", "zip", "isinstance"})


def _pure(stmt: ast.stmt) -> bool:
    """An assignment whose value calls nothing but PURE_CALLS (and their methods ``.items()``,
    ``.keys()``, ``.values()``) and has no lambda: at import it computes values and binds them,
    and keeps nothing elsewhere."""
    value = getattr(stmt, "value", None)
    if value is None:
        return False
    for node in ast.walk(value):
        if isinstance(node, ast.Lambda):
            return False
        if isinstance(node, ast.Call):
            f = node.func
            if not ((isinstance(f, ast.Name) and f.id in PURE_CALLS)
                    or (isinstance(f, ast.Attribute) and f.attr in ("items", "keys", "values"))):
                return False
    return True


class Readers:
    """Where the served code reads the names a module's or a class's own body binds. Such a
    body runs once, when the server imports the module, before any case; so a mutant there (a
    constant, a table, a field's default) is narrowed by the lines that read what it binds:
    until one of them runs, the mutated server does what the pristine one does. Reads are
    found by name alone (``NAME`` and ``x.NAME``, a keyword ``NAME=``, and for a class's
    field the class's own name too): finding too many only narrows less. A name read through
    reflection (getattr with a string) is missed. A read at import time by a pure assignment
    (a table built from the name) is followed to the readers of what that assignment binds;
    any other read at import time names no case, and the mutant then runs against the whole
    suite."""

    def __init__(self, root: Path, files: list[str]):
        #: per file, the statements of module and class bodies: (first, last line, names)
        self.bodies: dict[str, list[tuple[int, int, tuple[str, ...]]]] = {}
        #: name -> {file: lines that read it}
        self.reads: dict[str, dict[str, set[int]]] = {}
        #: (file, first line) of the module-level body statements whose value is pure
        self.pure: set[tuple[str, int]] = set()
        for path in files:
            tree = ast.parse((root / path).read_text(encoding="utf-8"))
            bodies = self.bodies[path] = []
            for stmt in tree.body:
                bound = self._bound(stmt, ())
                bodies += bound
                if bound and _pure(stmt):
                    self.pure.add((path, stmt.lineno))
                if isinstance(stmt, ast.ClassDef):
                    for inner in stmt.body:
                        bodies += self._bound(inner, (stmt.name,))
            for node in ast.walk(tree):
                name = (node.id if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
                        else node.attr if isinstance(node, ast.Attribute)
                        else node.arg if isinstance(node, ast.keyword) and node.arg else None)
                if name:
                    self.reads.setdefault(name, {}).setdefault(path, set()).add(node.lineno)

    @staticmethod
    def _bound(stmt: ast.stmt, owner: tuple[str, ...]) -> list[tuple[int, int, tuple[str, ...]]]:
        targets = (stmt.targets if isinstance(stmt, ast.Assign)
                   else [stmt.target] if isinstance(stmt, (ast.AnnAssign, ast.AugAssign))
                   else [])
        names = tuple(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        if not names:
            return []
        return [(stmt.lineno, stmt.end_lineno or stmt.lineno, names + owner)]

    def lines_reading(self, m: Mutant) -> dict[str, set[int]] | None:
        """The lines, per file, that read what the body statement holding the mutant binds;
        None when the mutant is not in such a statement. A read inside another body statement
        that only binds names from pure expressions (``TABLE = {LIMIT: ...}``, ``COPY =
        dict(TABLE)``: PURE_CALLS) runs at import and passes the value on: the lines reading
        what that statement binds stand in for it, and so on. A read in any other statement
        run at import (a call that may keep the value somewhere) is kept: its import-time run
        names no case, so the mutant faces the whole suite."""
        for first, last, names in self.bodies.get(m.path, ()):
            if first <= m.line <= last:
                return self._reads_of(m.path, first, last, names)
        return None

    def _reads_of(self, path0: str, first0: int, last0: int, names0: tuple[str, ...]
                  ) -> dict[str, set[int]]:
        found: dict[str, set[int]] = {}
        followed = {(path0, first0)}
        todo, seen = list(names0), set()
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for path, lines in self.reads.get(name, {}).items():
                for n in lines:
                    if path == path0 and first0 <= n <= last0:
                        continue
                    stmt = self._pure_body_at(path, n)
                    if stmt is None:
                        found.setdefault(path, set()).add(n)
                    elif (path, stmt[0]) not in followed:
                        followed.add((path, stmt[0]))
                        todo.extend(stmt[2])
        return found

    def _pure_body_at(self, path: str, line: int) -> tuple[int, int, tuple[str, ...]] | None:
        """The body statement of ``path`` holding ``line`` if its value is pure, else None."""
        for stmt in self.bodies.get(path, ()):
            if stmt[0] <= line <= stmt[1]:
                return stmt if (path, stmt[0]) in self.pure else None
        return None


class CaseMap:
    """Which cases of the pristine run were running when the pristine server ran a line: the
    server's ticks against the cases' [start, end] (bench/mutation_cases.py), both on Linux's
    CLOCK_MONOTONIC. A tick that falls between two cases names both neighbours (work a case
    left to a timer or another thread); one before the first case or after the last (start-up,
    shutdown) names every case (``None``: the whole suite)."""

    def __init__(self, times: dict[str, list[float]], trace: dict[str, dict[int, list[int]]],
                 readers: Readers | None = None):
        self.readers = readers
        order = sorted(times, key=lambda nodeid: times[nodeid][0])
        self.cases = order
        self.starts = [times[n][0] for n in order]
        self.ends = [times[n][1] for n in order]
        self.durations = {n: times[n][1] - times[n][0] for n in order}
        self.trace = trace

    def _cases_of_tick(self, tick: int) -> set[int] | None:
        lo, hi = tick / TICKS_PER_S, (tick + 1) / TICKS_PER_S
        if not self.cases or hi <= self.starts[0] or lo >= self.ends[-1]:
            return None
        i = bisect.bisect_left(self.starts, hi) - 1  # the last case that starts before hi
        found: set[int] = set()
        j = i
        while j >= 0 and self.ends[j] > lo:
            found.add(j)
            j -= 1
        if not found:  # between case i and case i + 1
            found = {k for k in (i, i + 1) if 0 <= k < len(self.cases)}
        return found

    def unread(self, m: Mutant) -> bool:
        """True for a mutant in a module's or class's body statement that the pristine server
        ran at import only and whose bound names no line of the served code read in the whole
        pristine run (Readers: by name): the mutated value is never read, so the mutated server
        does what the pristine one does, call for call, and the mutant is not reached as surely
        as one on a line that never ran. Reads by reflection are missed (module doc); the only
        ones the served code makes of such names are model/status.py's STATUS_NAMES (the names
        of codes in SUT control's error messages, never on the wire)."""
        lines = self.trace.get(m.path)
        if lines is None or self.readers is None or not self.cases:
            return False
        ticks: set[int] = set()
        for n in range(m.line, max(m.line, m.end_line) + 1):
            ticks.update(lines.get(n, ()))
        if not ticks or max(ticks) >= self.starts[0] * TICKS_PER_S:
            return False
        reading = self.readers.lines_reading(m)
        if reading is None:
            return False
        return not any(self.trace.get(path, {}).get(n) for path, numbers in reading.items()
                       for n in numbers)

    def cases_of(self, m: Mutant) -> list[str] | None:
        """The node IDs of the cases that ran the mutant's lines in the pristine run, shortest
        first; None where that is every case, or not known."""
        lines = self.trace.get(m.path)
        if lines is None:
            return None
        ticks: set[int] = set()
        for n in range(m.line, max(m.line, m.end_line) + 1):
            ticks.update(lines.get(n, ()))
        if self.readers is not None and ticks and max(ticks) < self.starts[0] * TICKS_PER_S:
            # run at import only (a module's or class's body): the lines reading what it binds
            reading = self.readers.lines_reading(m)
            if reading is not None:
                ticks = {t for path, numbers in reading.items()
                         for n in numbers for t in self.trace.get(path, {}).get(n, ())}
        found: set[int] = set()
        for tick in ticks:
            cases = self._cases_of_tick(tick)
            if cases is None:
                return None
            found |= cases
        if not found or len(found) == len(self.cases):
            return None
        return sorted((self.cases[i] for i in found),
                      key=lambda nodeid: (self.durations[nodeid], nodeid))


def unreached(m: Mutant, reached: dict[str, set[int]] | None) -> bool:
    """True when the pristine server loaded the mutant's module but ran none of its lines: the
    mutated server then does what the pristine one did, call for call, and the mutant survives
    without a run (reported as such, and left to be killed by a case or judged)."""
    if reached is None or m.path not in reached:
        return False
    lines = reached[m.path]
    return not any(n in lines for n in range(m.line, max(m.line, m.end_line) + 1))


def set_aside(todo: list[Mutant], reached: dict[str, set[int]] | None,
              equivalent: dict[str, str], run_unreached: bool = False,
              run_equivalent: bool = False,
              unread: Callable[[Mutant], bool] | None = None
              ) -> tuple[list[Mutant], list[Mutant]]:
    """The mutants of ``todo`` that get a verdict without a run: those on lines the pristine
    server never ran, or (``unread``: CaseMap.unread) in a body statement it ran at import only
    and whose bound names nothing read (they survive, "not reached"), then those judged
    equivalent in the equivalent file (they count as equivalent; a judgement withdrawn later
    runs them)."""
    skipped = [] if run_unreached else [
        m for m in todo if unreached(m, reached) or (unread is not None and unread(m))]
    aside = {m.id for m in skipped}
    trusted = [] if run_equivalent else [m for m in todo
                                         if m.id in equivalent and m.id not in aside]
    return skipped, trusted


def loaded_files(listing: Path, base: Path) -> set[str]:
    """The files (``model/mqrr.py``, ...) of the tree at ``base`` that a listing of module files
    names (through the import root's symlinks)."""
    found: set[str] = set()
    if not listing.exists():
        return found
    base = base.resolve()
    for line in listing.read_text().splitlines():
        try:
            found.add(Path(line).resolve().relative_to(base).as_posix())
        except ValueError:
            pass
    return found


def cases_digest(cases: list[str] | None, prints: dict[str, str]) -> str:
    """A digest of the cases a survivor faced (None: every case of ``prints``) with their
    fingerprints (bench/mutation_cases.py)."""
    import hashlib

    h = hashlib.sha256()
    for nodeid in sorted(prints) if cases is None else sorted(cases):
        h.update(f"{nodeid}\0{prints.get(nodeid, '')}\n".encode())
    return h.hexdigest()


def carried_survivors(todo: list[Mutant], earlier: list[dict], frame_digest: str,
                      digest_of: Callable[[Mutant], str | None]) -> dict[str, dict]:
    """The survivors of earlier results (``earlier``: results files or ledgers) that stand
    for this snapshot without a run, by mutant ID: those of a snapshot of the same frame (the
    tree but the scenarios' text: ``frame_digest``) whose cases, those that ran the mutant's
    lines or the whole suite, are the same cases with the same fingerprints now
    (``cases_digest``, ``digest_of``). The server, the steps and the cases being the same, the
    run would be the same; a survivor that a new or changed case faces runs again."""
    found: dict[str, dict] = {}
    for doc in earlier:
        if doc.get("frame_digest") != frame_digest:
            continue
        source = doc.get("snapshot")
        for r in doc.get("mutants", []):
            if (r["verdict"] == "survived" and r.get("cases_digest")
                    and not r.get("not_run") and not r.get("unreached")):
                found.setdefault(r["id"], {**r, "carried_from": r.get("carried_from") or source})
    kept: dict[str, dict] = {}
    for m in todo:
        r = found.get(m.id)
        if r is not None and r["cases_digest"] == digest_of(m):
            kept[m.id] = r
    return kept


class Batch:
    """One snapshot, its pristine run, and the mutants run against it."""

    def __init__(self, commit: str | None, keep: bool, timeout: float, select: list[str],
                 config: Config = PLAIN):
        self.config = config
        self.dir = Path(tempfile.mkdtemp(prefix="mqconform-mutation-"))
        self.base = self.dir / "base"
        self.source = snapshot(self.base, commit)
        self.keep, self.timeout, self.select = keep, timeout, select
        self.loaded: set[str] | None = None
        self.reached: dict[str, set[int]] | None = None
        #: the pristine run's cases by the lines they made the server run (None: not known,
        #: or --no-narrow: every mutant runs the whole suite)
        self.case_map: CaseMap | None = None
        self.narrow = True
        #: a survivor of the cases that ran its lines is not run against the whole suite
        self.narrow_only = False
        #: the cases the pristine run leaves inconclusive (None until it has run)
        self.unsettled: set[str] | None = None
        # a run's verdicts hold for its snapshot in its configuration (--resume)
        suffix = _configured(config.name)
        self.digest = tree_digest(self.base) + suffix
        #: the same, over the served code only (NOT_SERVED left out)
        self.served_digest = tree_digest(self.base, NOT_SERVED) + suffix
        #: each served module's digest (kills of unchanged modules are carried: --resume)
        self.module_digests = module_digests(self.base)
        #: the same, but the scenarios' text (FRAME_SKIP)
        self.frame_digest = tree_digest(self.base, FRAME_SKIP) + suffix
        #: the pristine run's cases and their fingerprints (None until it has run)
        self.prints: dict[str, str] | None = None
        self._count = 0
        self._lock = threading.Lock()

    def close(self) -> None:
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)

    def pristine(self) -> Verdict:
        """The pristine run; it also records which files of the tree the server loaded."""
        times, prints = self.dir / "case-times.json", self.dir / "case-prints.json"
        verdict = run_against(self.base, self.base, self.dir / "pristine", "mqconform.cli",
                              self.base / "mqconform" / "cli.py", self.timeout, self.select,
                              loaded=self.dir / "loaded.txt", times=times, prints=prints,
                              config=self.config)
        if prints.exists():
            self.prints = json.loads(prints.read_text())
        self.loaded = loaded_files(self.dir / "loaded.txt", self.base)
        trace = reached_trace(self.dir / "loaded.txt.lines", self.base)
        self.reached = {path: set(lines) for path, lines in trace.items()}
        if times.exists() and self.narrow:
            self.case_map = CaseMap(json.loads(times.read_text()), trace,
                                    Readers(self.base, sorted(trace)))
        self.unsettled = unsettled_cases(self.dir / "pristine" / "report" / "results.json")
        return verdict

    def cases_digest_of(self, mutant: Mutant) -> str | None:
        """The ``cases_digest`` of the cases a survivor of this run faced: those that ran its
        lines with --narrow-only, else the whole suite; None before the pristine run."""
        if self.prints is None:
            return None
        scope = (self.case_map.cases_of(mutant)
                 if self.narrow_only and self.case_map is not None else None)
        return cases_digest(scope, self.prints)

    def run(self, mutant: Mutant) -> Verdict:
        with self._lock:
            self._count += 1
            where = self.dir / f"mutant-{self._count}"
        tree = where / "tree"
        tree.mkdir(parents=True)
        package = mutant.path.split("/")[0]
        for entry in self.base.iterdir():
            if entry.name == package:
                # with the bytecode the pristine run compiled, but for the mutated module's
                # (its source differs; removed rather than trusted to the stamp)
                shutil.copytree(entry, tree / package)
                stem = Path(mutant.path)
                for stale in (tree / stem.parent / "__pycache__").glob(f"{stem.stem}.*.pyc"):
                    stale.unlink()
            else:
                (tree / entry.name).symlink_to(entry)
        original = (self.base / mutant.path).read_text(encoding="utf-8")
        (tree / mutant.path).write_text(mutant.apply(original), encoding="utf-8")
        (where / "mutant.diff").write_text(mutant.diff(original))
        module = "mqconform." + mutant.path.removesuffix(".py").replace("/", ".")
        cases = self.case_map.cases_of(mutant) if self.case_map is not None else None
        try:
            if cases is not None:
                first = run_against(self.base, tree, where / "narrow", module,
                                    tree / mutant.path, self.timeout, self.select,
                                    unsettled=self.unsettled, cases=cases,
                                    config=self.config)
                if first.verdict != "survived":
                    return replace(first, reason=f"{first.reason} (in {len(cases)} cases that "
                                                 f"ran its lines)")
                if self.narrow_only:
                    return replace(first, reason=f"{first.reason} (the {len(cases)} cases that "
                                                 f"ran its lines; {NARROWED})")
            whole = run_against(self.base, tree, where / "run", module, tree / mutant.path,
                                self.timeout, self.select, unsettled=self.unsettled,
                                config=self.config)
            if cases is None:
                return whole
            return replace(whole, seconds=first.seconds + whole.seconds,
                           reason=f"{whole.reason} (the whole suite, after the {len(cases)} "
                                  f"cases that ran its lines)")
        finally:
            if not self.keep:
                shutil.rmtree(where, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# The equivalent survivors
# ---------------------------------------------------------------------------------------------

def load_equivalent(path: Path = EQUIVALENT) -> dict[str, str]:
    if not path.exists():
        return {}
    import yaml

    class _Loader(yaml.SafeLoader):
        """Refuses a key given twice: YAML keeps the last silently, which would drop one
        judgement's reason for another's."""

        def construct_mapping(self, node, deep=False):
            seen: dict = {}
            for key_node, _value in node.value:
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise SystemExit(f"{path}:{key_node.start_mark.line + 1}: {key!r} is judged "
                                     f"twice (first on line {seen[key]})")
                seen[key] = key_node.start_mark.line + 1
            return super().construct_mapping(node, deep=deep)

    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader) or {}
    if not isinstance(data, dict):
        raise SystemExit(f"{path}: expected a mapping of mutant ID to reason")
    return {str(k): str(v) for k, v in data.items()}


def judgement(equivalent: dict[str, str], mutant_id: str, scopes: bool = True) -> str | None:
    """The reason the equivalent file gives for this mutant: under its own ID, or (``scopes``)
    under ``file:SCOPE:*``, which judges every mutant of a function (or class) and of the
    functions inside it at once: code no client call can make the server run, each with its
    reason. A scope key holds only for mutants the pristine server never ran (the report's
    caller passes ``scopes`` so): one it did run contradicts the judgement and stays unjudged."""
    reason = equivalent.get(mutant_id)
    if reason is not None or not scopes:
        return reason
    fields = mutant_id.split(":", 2)
    if len(fields) < 3:
        return None
    path, scope = fields[0], fields[1]
    parts = scope.split(".")
    for n in range(len(parts), 0, -1):
        reason = equivalent.get(f"{path}:{'.'.join(parts[:n])}:*")
        if reason is not None:
            return reason
    return None


def _site_text(m: Mutant, source: str) -> str:
    return re.sub(r"\s+", "", source.encode("utf-8")[m.start:m.end].decode("utf-8"))


def migrate_key(legacy: str, old_source: str, new_source: str, old_constants: dict[str, int],
                new_constants: dict[str, int]) -> tuple[str | None, str]:
    """The stable ID, in ``new_source``, of the mutant a legacy ``file:line:col:operator:detail``
    ID named in ``old_source``; (None, why) when it cannot be found. The site is matched by its
    scope, operator, detail and the text of the mutated expression or statement: one match, or
    the one of the same ordinal among several."""
    path = legacy.split(":", 1)[0]
    old = {m.legacy_id: m for m in mutants_of(path, old_source, old_constants)}
    if legacy not in old:
        return None, "no such mutant in the source it was written against"
    return _same_site(old[legacy], old_source, new_source, new_constants)


def follow_key(key: str, old_source: str, new_source: str, old_constants: dict[str, int],
               new_constants: dict[str, int]) -> tuple[str | None, str]:
    """The stable ID, in ``new_source``, of the mutant whose stable ID in ``old_source`` is
    ``key``: an edit inside its function renumbers its ordinal (the same matching as
    migrate_key)."""
    path = key.split(":", 1)[0]
    old = {m.id: m for m in mutants_of(path, old_source, old_constants)}
    if key not in old:
        return None, "no such mutant in the source it was written against"
    return _same_site(old[key], old_source, new_source, new_constants)


def _same_site(was: Mutant, old_source: str, new_source: str,
               new_constants: dict[str, int]) -> tuple[str | None, str]:
    text = _site_text(was, old_source)
    candidates = [m for m in mutants_of(was.path, new_source, new_constants)
                  if (m.scope, m.operator, m.detail) == (was.scope, was.operator, was.detail)
                  and _site_text(m, new_source) == text]
    if len(candidates) > 1:
        candidates = [m for m in candidates if m.ordinal == was.ordinal] or candidates
    if len(candidates) == 1:
        return candidates[0].id, ""
    if not candidates:
        return None, (f"{was.scope}: no `{text[:50]}` with {was.operator} {was.detail} there "
                      f"any more")
    return None, f"{was.scope}: {len(candidates)} sites match"


def follow_equivalent_file(path: Path = EQUIVALENT, rev: str = "HEAD"
                           ) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Rewrite, in place, each key of ``path`` that names no mutant of the working tree as the
    stable ID of the same site, found from the source at ``rev`` (the edit since renumbered the
    ordinals of its function). Returns ([(old key, new key)], [(key, why not)]); the file is
    rewritten only when it still loads (load_equivalent's checks)."""
    keys = load_equivalent(path)
    constants = project_constants(ROOT)
    current: dict[str, set[str]] = {}
    followed, failed = [], []
    text = path.read_text(encoding="utf-8")
    for key in keys:
        file = key.split(":", 1)[0]
        if file not in current:
            source = (ROOT / file).read_text(encoding="utf-8") if (ROOT / file).exists() else ""
            current[file] = {m.id for m in mutants_of(file, source, constants)} if source else set()
        if key in current[file] or key.count(":") < 3:
            continue  # a live key, or a scope key (judged by load_equivalent's callers)
        old_source = _source_at(rev, file)
        if old_source is None or not (ROOT / file).exists():
            failed.append((key, f"{file} is not in {rev} or in the working tree"))
            continue
        old_constants = int_constants([t for t in (_source_at(rev, c) for c in CONSTANT_SOURCES)
                                       if t])
        new, why = follow_key(key, old_source, (ROOT / file).read_text(encoding="utf-8"),
                              old_constants, constants)
        quoted = json.dumps(key) + ":"
        if new is None or text.count(quoted) != 1:
            failed.append((key, why or "the key is not written once, quoted, in the file"))
            continue
        text = text.replace(quoted, json.dumps(new) + ":")
        followed.append((key, new))
    if followed:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        load_equivalent(tmp)  # a duplicate key or broken YAML stops here, the file untouched
        os.replace(tmp, path)
    return followed, failed


def _git(*argv: str) -> str:
    return subprocess.run(["git", *argv], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout


def _source_at(rev: str, path: str) -> str | None:
    try:
        return _git("show", f"{rev}:{path}")
    except subprocess.CalledProcessError:
        return None


def migrate_equivalent_file(path: Path = EQUIVALENT) -> tuple[int, list[tuple[str, str]]]:
    """Rewrite the legacy keys of ``path`` as stable IDs, in place, comments and reasons kept.
    Each legacy key is read against the source of the commit that wrote its line (git blame);
    a key that cannot be carried over is commented out with the reason, to judge again.
    Returns (keys migrated, [(legacy key, why not)])."""
    text = path.read_text(encoding="utf-8")
    blame = _git("blame", "-l", "-s", "--", str(path.relative_to(ROOT)))
    rev_of_line = [row.split()[0].lstrip("^") for row in blame.splitlines()]
    constants_at: dict[str, dict[str, int]] = {}
    new_constants = project_constants(ROOT)
    migrated, failed = 0, []
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    legacy_key = re.compile(r'^"([^"\\]*(?:\\.[^"\\]*)*)":')
    skipping = False
    for number, line in enumerate(lines):
        match = legacy_key.match(line)
        if not match:
            out.append(("# " + line) if skipping and line.startswith(" ") else line)
            continue
        skipping = False
        import yaml

        key = yaml.safe_load(f'"{match.group(1)}"')
        if re.match(r"^[^:]+:\d+:\d+:", key) is None:  # already a stable ID
            out.append(line)
            continue
        rev, file = rev_of_line[number], key.split(":", 1)[0]
        if rev not in constants_at:
            constants_at[rev] = int_constants([t for t in (_source_at(rev, c) for c in
                                                           CONSTANT_SOURCES) if t])
        old_source = _source_at(rev, file)
        new_source = (ROOT / file).read_text(encoding="utf-8") if (ROOT / file).exists() else None
        if old_source is None or new_source is None:
            new, why = None, f"{file} is not there"
        else:
            new, why = migrate_key(key, old_source, new_source, constants_at[rev], new_constants)
        if new is None:
            failed.append((key, why))
            out.append(f"# NOT CARRIED OVER ({why}; as of {rev[:7]}): judge again\n# {line}")
            skipping = True
        else:
            migrated += 1
            out.append(json.dumps(new) + line[match.end() - 1:])
    path.write_text("".join(out), encoding="utf-8")
    return migrated, failed


def stale_equivalents(equivalent: dict[str, str], mutants: list[Mutant]) -> list[str]:
    """The equivalent-file keys that name no mutant of ``mutants`` (judge them again)."""
    ids = {m.id for m in mutants}
    scopes = {f"{m.path}:{'.'.join(m.scope.split('.')[:n])}:*"
              for m in mutants for n in range(1, len(m.scope.split(".")) + 1)}
    return [k for k in equivalent if k not in ids and k not in scopes]


# ---------------------------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------------------------

def _rate(counts: dict) -> float | None:
    judged = counts["total"] - counts["equivalent"]
    return None if not judged else round((counts["killed"] + counts["timeout"]) / judged, 4)


def summarize(rows: list[dict], equivalent: dict[str, str]) -> dict:
    """Counts and the kill rate (killed + timeout) / (total - equivalent); errors (a mutant the
    harness could not judge) are counted apart and left out of the total. Marks each equivalent
    survivor's row with its reason, and lists the survivors nobody judged."""
    counts = {k: 0 for k in ("killed", "timeout", "survived", "equivalent", "error")}
    unjudged = []
    for row in rows:
        reason = (judgement(equivalent, row["id"], scopes=bool(row.get("unreached")))
                  if row["verdict"] == "survived" else None)
        if reason is not None:
            row["equivalent"] = reason
            counts["equivalent"] += 1
        else:
            counts[row["verdict"]] += 1
            if row["verdict"] == "survived":
                unjudged.append(row["id"])
    total = len(rows) - counts["error"]
    rate = _rate({"total": total, **counts})
    return {"total": total, **counts,
            "unreached": sum(1 for r in rows if r.get("unreached") and not r.get("equivalent")),
            "kill_rate": rate, "goal": GOAL,
            "met": rate is not None and rate >= GOAL, "unjudged": unjudged}


def breakdown(rows: list[dict], key: str) -> dict[str, dict]:
    """summarize's counts per value of ``row[key]`` (the file, the section); rows already
    marked by summarize."""
    groups: dict[str, dict] = {}
    for row in rows:
        g = groups.setdefault(str(row.get(key)), {k: 0 for k in (
            "total", "killed", "timeout", "survived", "equivalent", "error")})
        if row["verdict"] == "error":
            g["error"] += 1
            continue
        g["total"] += 1
        g["equivalent" if row.get("equivalent") else row["verdict"]] += 1
    for g in groups.values():
        g["kill_rate"] = _rate(g)
    return dict(sorted(groups.items()))


def _pct(rate: float | None) -> str:
    return "n/a" if rate is None else f"{100 * rate:.1f} %"


def group_table(groups: dict[str, dict], title: str) -> list[str]:
    width = max([len(title)] + [len(k) for k in groups])
    out = [f"{title:{width}s}  total killed timeout survived equivalent  kill rate"]
    for name, g in groups.items():
        out.append(f"{name:{width}s}  {g['total']:5d} {g['killed']:6d} {g['timeout']:7d} "
                   f"{g['survived']:8d} {g['equivalent']:10d}  {_pct(g['kill_rate']):>9s}")
    return out


def print_table(rows: list[dict], summary: dict) -> None:
    width = min(max((len(r["id"]) for r in rows), default=20), 90)
    for r in rows:
        verdict = "equivalent" if r.get("equivalent") else r["verdict"]
        print(f"{r['id'][:width]:{width}s}  {verdict:10s} {r['seconds']:6.1f} s  "
              f"{r.get('where', '')}  {r['reason']}")
    s = summary
    print(f"\ntotal {s['total']}: killed {s['killed']}, timeout {s['timeout']}, survived "
          f"{s['survived']} ({s.get('unreached', 0)} of them never reached), equivalent "
          f"{s['equivalent']}" +
          (f", errors {s['error']} (not counted)" if s["error"] else "") +
          f"; kill rate (killed+timeout)/(total-equivalent) = {_pct(s['kill_rate'])} "
          f"(goal {100 * GOAL:.0f} %: {'met' if s['met'] else 'NOT met'})")


def print_report(rows: list[dict], summary: dict, by_module: dict, by_section: dict) -> None:
    print()
    print("\n".join(group_table(by_module, "module")))
    print()
    print("\n".join(group_table(by_section, "section")))
    equivalents = [r for r in rows if r.get("equivalent")]
    if equivalents:
        print(f"\n{len(equivalents)} survivors judged equivalent (bench/mutation_equivalent.yaml):")
        for r in equivalents:
            print(f"  {r['id']}  ({r.get('where', '')})\n      {r['equivalent']}")
    if summary["unjudged"]:
        print(f"\n{len(summary['unjudged'])} survivors NOT judged (kill them with a case, or "
              f"judge them equivalent with a reason):")
        for r in rows:
            if r["id"] in summary["unjudged"]:
                print(f"\nsurvivor {r['id']}  ({r.get('where', '')}, {r.get('section', '')})\n"
                      f"{r['diff']}", end="")


def markdown(doc: dict) -> str:
    """The report as a Markdown page (bench/out/mutation.md)."""
    s = doc["summary"]

    def table(groups: dict[str, dict], title: str) -> list[str]:
        out = [f"| {title} | total | killed | timeout | survived | equivalent | kill rate |",
               "|---|---:|---:|---:|---:|---:|---:|"]
        for name, g in groups.items():
            out.append(f"| {name} | {g['total']} | {g['killed']} | {g['timeout']} | "
                       f"{g['survived']} | {g['equivalent']} | {_pct(g['kill_rate'])} |")
        return out

    lines = [f"# Mutation self-check of the suite ({doc['snapshot']})", "",
             f"Kill rate over non-equivalent mutants: **{_pct(s['kill_rate'])}** (goal "
             f"{100 * s['goal']:.0f} %): {s['total']} mutants run, {s['killed']} killed, "
             f"{s['timeout']} timed out, {s['survived']} survived unjudged ("
             f"{s.get('unreached', 0)} of them never reached), {s['equivalent']} "
             f"equivalent" + (f", {s['error']} errors" if s["error"] else "") + ".", "",
             *([f"{n} survivors faced only the cases that ran their lines (--narrow-only): "
                f"the whole suite may still kill them.", ""]
               if (n := sum(1 for r in doc["mutants"] if r.get("narrowed"))) else []),
             *([f"{doc['carried']} of the kills were judged on an earlier snapshot with the "
                f"same served code (carried by --resume; each row names it).", ""]
               if doc.get("carried") else []),
             "## Per module", "", *table(doc["by_module"], "module"), "",
             "## Per section", "", *table(doc["by_section"], "section"), ""]
    rows = doc["mutants"]
    unjudged = [r for r in rows if r["id"] in s["unjudged"]]
    lines += ["## Survivors not judged", ""]
    lines += [f"- `{r['id']}` ({r.get('where', '')}): {r.get('reason', '')}"
              for r in unjudged] or ["none"]
    lines += ["", "## Survivors judged equivalent", ""]
    lines += [f"- `{r['id']}` ({r.get('where', '')}): {r['equivalent']}"
              for r in rows if r.get("equivalent")] or ["none"]
    return "\n".join(lines) + "\n"


#: how much a verdict says when runs in several configurations judged one mutant: a kill in
#: any of them is the suite's
_STRENGTH = {"killed": 3, "timeout": 2, "survived": 1, "error": 0}


def merge_results(docs: list[dict]) -> dict:
    """Results (``--out`` files) of one snapshot run in several configurations (plain,
    ``--auth``) as one report: each mutant keeps its strongest verdict (killed in any run:
    killed), is "never reached" only if no run reached it, and notes the configuration of the
    verdict kept; the summary and the tables are worked out again. ValueError for results of
    different snapshots."""
    trees = {d.get("digest", "").split("+")[0] for d in docs}
    if len(trees) != 1 or not all(trees):
        raise ValueError("the results are of different snapshots (or of none): run each "
                         "configuration on the same --commit")
    best: dict[str, dict] = {}
    for doc in docs:
        for row in doc.get("mutants", []):
            row = {k: v for k, v in row.items() if k != "equivalent"}
            row["configuration"] = doc.get("configuration", "plain")
            old = best.get(row["id"])
            if old is None or (_STRENGTH[row["verdict"]], not row.get("unreached")) > (
                    _STRENGTH[old["verdict"]], not old.get("unreached")):
                best[row["id"]] = row
    rows = sorted(best.values(), key=lambda r: r["id"])
    summary = summarize(rows, load_equivalent())
    return {"snapshot": docs[0].get("snapshot"), "digest": trees.pop(),
            "configuration": "+".join(sorted({d.get("configuration", "plain") for d in docs})),
            "merged": [d.get("digest") for d in docs], "summary": summary,
            "by_module": breakdown(rows, "file"), "by_section": breakdown(rows, "section"),
            "mutants": rows}


def module_counts(mutants: list[Mutant], files: list[str]) -> list[str]:
    by_file: dict[str, dict[str, int]] = {f: {} for f in files}
    for m in mutants:
        ops = by_file.setdefault(m.path, {})
        ops[m.operator] = ops.get(m.operator, 0) + 1
    width = max([len(f) for f in by_file] + [5])
    out = []
    for f, ops in by_file.items():
        out.append(f"{f:{width}s} {sum(ops.values()):5d}  " +
                   ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))
    out.append(f"{'total':{width}s} {len(mutants):5d}  in {len(by_file)} modules")
    return out


# ---------------------------------------------------------------------------------------------
# The ledger: the campaign's verdicts, carried from one machine to the next
# ---------------------------------------------------------------------------------------------

def unreached_ids(path: Path) -> set[str]:
    """The mutants a results file holds as never reached (survived without a run, not judged
    equivalent); a file that is no results is a one-line error."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        rows = doc["mutants"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"--unreached-in {path}: not a results file ({e})") from None
    return {r["id"] for r in rows if isinstance(r, dict) and r.get("unreached")
            and r.get("verdict") == "survived" and not r.get("equivalent")}


def ledger_lines(doc: dict) -> list[str]:
    """A results document as ledger lines: a header (the snapshot and its digests), then one
    line per mutant that was run (killed, timeout, survived after a run), sorted by ID. The
    mutants counted without a run (judged equivalent, never reached) are left out: the next
    run works them out again from its own pristine run and the equivalent file."""
    head = {"ledger": 1, "snapshot": doc["snapshot"], "digest": doc["digest"],
            "served_digest": doc["served_digest"], "configuration": doc["configuration"],
            **({"frame_digest": doc["frame_digest"]} if doc.get("frame_digest") else {}),
            **({"module_digests": doc["module_digests"]} if doc.get("module_digests")
               else {})}
    rows = []
    for r in sorted(doc["mutants"], key=lambda r: r["id"]):
        if r.get("unreached") or r.get("not_run") or r["verdict"] == "error":
            continue
        row = {"id": r["id"], "verdict": r["verdict"], "seconds": r["seconds"],
               "reason": r["reason"][:LEDGER_REASON]}
        if r.get("narrowed"):
            row["narrowed"] = True
        if r.get("carried_from"):
            row["carried_from"] = r["carried_from"]
        if r.get("carried_by_module"):
            row["carried_by_module"] = True
        if r.get("rechecked"):
            row["rechecked"] = True
        if r.get("cases_digest"):
            row["cases_digest"] = r["cases_digest"]
        rows.append(json.dumps(row, ensure_ascii=False, separators=(",", ":")))
    return [json.dumps(head, separators=(",", ":")), *rows]


def read_ledger(path: Path) -> dict:
    """A ledger read back as a results document that ``resumed`` takes (rows without the
    places and diffs, which the run adds again from its own snapshot)."""
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    try:
        head = json.loads(lines[0]) if lines else {}
        rows = [json.loads(ln) for ln in lines[1:]]
    except json.JSONDecodeError as e:
        raise SystemExit(f"{path}: not a ledger: {e}") from None
    if head.get("ledger") != 1 or not all(isinstance(r, dict) and "id" in r for r in rows):
        raise SystemExit(f"{path}: not a ledger (its first line names no snapshot)")
    return {**head, "mutants": rows}


def write_ledger(path: Path, doc: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("\n".join(ledger_lines(doc)) + "\n", encoding="utf-8")
    os.replace(tmp, path)


# ---------------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true",
                    help="every served module of model/, server/ and wire/ (EXCLUDED aside)")
    ap.add_argument("--module", action="append", default=[], metavar="PATTERN",
                    help="served modules whose path matches (a glob, or a part of the path: "
                         "model/cursor.py, 'wire/*', mqrr); repeatable")
    ap.add_argument("--files", nargs="+", help="these files, served or not (default: "
                    f"{' '.join(FILES)} without --all or --module)")
    ap.add_argument("--sample", type=int, help="run N mutants drawn uniformly (default: all)")
    ap.add_argument("--seed", type=int, default=1, help="the sampling seed (default 1)")
    ap.add_argument("--jobs", type=int, default=2, help="mutants run at once (default 2)")
    ap.add_argument("--only", metavar="ID", action="append", default=[],
                    help="apply and run this mutant (repeatable); prints its diff")
    ap.add_argument("--list", action="store_true",
                    help="print every mutant's ID and place, and the count per module; stop")
    ap.add_argument("--show", metavar="ID", help="print one mutant's diff and stop")
    ap.add_argument("--check-equivalent", action="store_true",
                    help="check that every key of the equivalent file names a mutant; stop")
    ap.add_argument("--migrate-equivalent", action="store_true",
                    help="rewrite the equivalent file's line-numbered keys as stable IDs; stop")
    ap.add_argument("--follow-equivalent", metavar="REV", nargs="?", const="HEAD",
                    help="rewrite the equivalent file's keys that name no mutant of the working "
                         "tree as the same site's ID, read from REV's source (default HEAD: an "
                         "edit renumbered their function's ordinals); stop")
    ap.add_argument("--budget", type=float, metavar="SECONDS",
                    help="start no mutant after this long; the rest wait for the next --resume "
                         "(exit 3): a full run split into CI-sized runs")
    ap.add_argument("--run-unreached", action="store_true",
                    help="run also the mutants on lines the pristine server never runs (by "
                         "default they survive without a run)")
    ap.add_argument("--run-equivalent", action="store_true",
                    help="run the mutants bench/mutation_equivalent.yaml judges equivalent too "
                         "(by default they count as equivalent without a run)")
    ap.add_argument("--no-narrow", action="store_true",
                    help="run every mutant against the whole suite (by default a mutant runs "
                         "first against the cases that ran its lines in the pristine run, and "
                         "the whole suite only if it survives them)")
    ap.add_argument("--timeout", type=float, default=None,
                    help=f"seconds per mutant (default: {TIMEOUT_FACTOR:.0f} times the pristine "
                         f"run's, at least {TIMEOUT_S:.0f}; {TIMEOUT_S:.0f} without a pristine "
                         f"run)")
    ap.add_argument("--rerun-timeouts", action="store_true",
                    help="with --resume: run again the mutants whose suite ran over its time "
                         "(a timeout counts as a kill; one the machine's load caused is not)")
    ap.add_argument("--select", action="append", default=[], metavar="ID",
                    help="passed to `mqconform run --select` (a faster, partial suite)")
    ap.add_argument("--commit", metavar="REV",
                    help="snapshot this commit (e.g. HEAD) rather than the working tree")
    ap.add_argument("--resume", action="store_true",
                    help="keep the verdicts --out holds for the same snapshot; run the rest")
    ap.add_argument("--narrow-only", action="store_true",
                    help="a mutant that survives the cases that ran its lines is not run against "
                         "the whole suite (a lower bound on the kills: module doc)")
    ap.add_argument("--no-carry", action="store_true",
                    help="with --resume: keep no kill of a snapshot whose suite differs (module "
                         "doc)")
    ap.add_argument("--recheck-carried", type=int, default=0, metavar="N",
                    help="with --resume: run again N kills (drawn with --seed) carried from "
                         "unchanged modules of a snapshot whose served code changed elsewhere, "
                         "and say how many still kill")
    ap.add_argument("--no-pristine", action="store_true",
                    help="skip the pristine run (default: skipped with --only, else done)")
    ap.add_argument("--auth", action="store_true",
                    help="run the servers with authentication required (packet integrity, "
                         "NTLM users and the access checks' identities) and the suite with "
                         "credentials: the configuration that reaches server/security.py and "
                         "the authentication paths (a plain run cannot); --out apart from the "
                         "plain run's")
    ap.add_argument("--unreached-in", type=Path, metavar="RESULTS",
                    help="only the mutants these results (a plain run's --out) hold as never "
                         "reached and not judged equivalent: an --auth run spent on what the "
                         "plain run cannot reach (then --merge the two)")
    ap.add_argument("--merge", nargs="+", type=Path, metavar="RESULTS",
                    help="merge these results of one snapshot in different configurations "
                         "(a plain run's and an --auth run's --out) into --out: a mutant "
                         "killed in any is killed; stop")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directories")
    ap.add_argument("--out", type=Path, default=OUT, help=f"results (default {OUT})")
    ap.add_argument("--ledger", type=Path, nargs="?", const=LEDGER, metavar="PATH",
                    help="keep every verdict that took a run in PATH too (default "
                         f"{LEDGER.relative_to(ROOT)}), one line per mutant, rewritten with "
                         "the results; with --resume, its verdicts are kept as --out's are "
                         "(--out's win): the record to commit, so that a campaign longer than "
                         "a session goes on from another clone")
    args = ap.parse_args(argv)

    if args.migrate_equivalent:
        migrated, failed = migrate_equivalent_file()
        print(f"{migrated} keys migrated to stable IDs in {EQUIVALENT}")
        for key, why in failed:
            print(f"NOT carried over: {key}: {why}")
        return 1 if failed else 0
    if args.follow_equivalent:
        followed, failed = follow_equivalent_file(EQUIVALENT, args.follow_equivalent)
        for was, now in followed:
            print(f"{was} -> {now}")
        for key, why in failed:
            print(f"NOT followed: {key}: {why}")
        print(f"{len(followed)} keys followed from {args.follow_equivalent} in {EQUIVALENT}")
        return 1 if failed else 0
    if args.merge:
        try:
            doc = merge_results([json.loads(p.read_text()) for p in args.merge])
        except (OSError, ValueError, KeyError) as exc:
            raise SystemExit(f"--merge: {exc}") from None
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(doc, indent=1) + "\n")
        args.out.with_suffix(".md").write_text(markdown(doc))
        print_table(doc["mutants"], doc["summary"])
        print(f"wrote {args.out} and {args.out.with_suffix('.md')}")
        return 0 if doc["summary"]["met"] else 1
    if args.check_equivalent:
        mutants = all_mutants(ROOT, tuple(served_files(ROOT)))
        stale = stale_equivalents(load_equivalent(), mutants)
        for key in stale:
            print(f"names no mutant: {key}")
        print(f"{len(load_equivalent()) - len(stale)} equivalent keys name a mutant, "
              f"{len(stale)} do not")
        return 1 if stale else 0
    files = select_files(ROOT, args.all, args.module, args.files)
    if args.list or args.show:
        mutants = all_mutants(ROOT, tuple(files))
        if args.show:
            found = [m for m in mutants if args.show in (m.id, m.legacy_id)]
            if not found:
                raise SystemExit(f"no mutant {args.show}")
            print(found[0].diff((ROOT / found[0].path).read_text(encoding="utf-8")), end="")
            return 0
        places = {f: SectionMap((ROOT / f).read_text(encoding="utf-8")) for f in files}
        for m in mutants:
            print(f"{m.id}\t{m.where}\t{places[m.path].place(m.scope, m.line, m.end_line).section}")
        print("\n".join(module_counts(mutants, files)), file=sys.stderr)
        if args.all:
            for path, why in EXCLUDED.items():
                print(f"not mutated: {path}: {why}", file=sys.stderr)
        return 0

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)
    batch = Batch(args.commit, args.keep,
                  args.timeout if args.timeout is not None else TIMEOUT_S * TIMEOUT_FACTOR,
                  args.select,
                  authenticated_config() if args.auth else PLAIN)
    batch.narrow = not args.no_narrow
    batch.narrow_only = args.narrow_only
    pool = ThreadPoolExecutor(max_workers=max(1, args.jobs))
    try:
        mutants = all_mutants(batch.base, tuple(files))
        by_id = {m.id: m for m in mutants}
        if args.only:
            missing = [i for i in args.only if i not in by_id]
            if missing:
                raise SystemExit(f"no mutant {', '.join(missing)} in the {batch.source} "
                                 f"(--list shows the IDs)")
            chosen = [by_id[i] for i in args.only]
        else:
            chosen = sample(mutants, args.sample, args.seed)
        if args.unreached_in:
            wanted = unreached_ids(args.unreached_in)
            chosen = [m for m in chosen if m.id in wanted]
            print(f"{len(chosen)} mutants {args.unreached_in} holds as never reached",
                  flush=True)
        originals = {p: (batch.base / p).read_text(encoding="utf-8") for p in files}
        places = {p: SectionMap(text) for p, text in originals.items()}
        done: dict[str, dict] = {}
        earlier_pristine, earlier_loaded = None, None
        earlier: list[dict] = []  # the results and the ledger resumed from
        if args.resume and args.out.exists():
            old = rebased(json.loads(args.out.read_text()), args.no_carry)
            done, kept = resumed(old, batch.digest,
                                 None if args.no_carry else batch.served_digest,
                                 set(by_id), load_equivalent(), narrowed=args.narrow_only,
                                 rerun_timeouts=args.rerun_timeouts,
                                 modules=None if args.no_carry else batch.module_digests,
                                 configuration=batch.config.name)
            if old.get("digest") == batch.digest:
                earlier_pristine, earlier_loaded = old.get("pristine"), old.get("loaded")
            earlier.append(old)
            print(f"--resume: {args.out}: {kept}", flush=True)
        from_ledger: dict[str, dict] = {}
        if args.resume and args.ledger and args.ledger.exists():
            ledger = rebased(read_ledger(args.ledger), args.no_carry)
            earlier.append(ledger)
            from_ledger, kept = resumed(ledger, batch.digest,
                                        None if args.no_carry else batch.served_digest,
                                        set(by_id) - set(done), load_equivalent(),
                                        narrowed=args.narrow_only,
                                        rerun_timeouts=args.rerun_timeouts,
                                        modules=None if args.no_carry
                                        else batch.module_digests,
                                        configuration=batch.config.name)
            print(f"--resume: {args.ledger}: {kept}", flush=True)
            done.update(from_ledger)
        rechecking: set[str] = set()
        if args.recheck_carried:
            wanted = {m.id for m in chosen}
            across = sorted(i for i, r in done.items()
                            if r.get("carried_by_module") and i in wanted)
            rechecking = set(random.Random(args.seed).sample(
                across, min(args.recheck_carried, len(across))))
            for i in rechecking:
                done.pop(i, None)
                from_ledger.pop(i, None)
            print(f"--recheck-carried: {len(rechecking)} of the {len(across)} kills carried "
                  f"from unchanged modules run again", flush=True)
        todo = [m for m in chosen if m.id not in done]
        print(f"snapshot of the {batch.source} in {batch.dir} (digest {batch.digest[:12]}, "
              f"{batch.config.name} configuration); "
              f"{len(files)} modules, {len(mutants)} mutants, {len(chosen)} chosen, "
              f"{len(chosen) - len(todo)} already judged, {len(todo)} to run, {args.jobs} at once",
              flush=True)
        pristine = None
        if not (args.no_pristine or args.only) and todo:
            pristine = batch.pristine()
            print(f"pristine: {pristine.verdict} in {pristine.seconds:.1f} s: {pristine.reason}",
                  flush=True)
            if args.timeout is None:
                batch.timeout = max(TIMEOUT_S, TIMEOUT_FACTOR * pristine.seconds)
                print(f"a mutant's suite may take {batch.timeout:.0f} s ({TIMEOUT_FACTOR:.0f} "
                      f"times the pristine run's)", flush=True)
            if pristine.verdict != "survived":
                print("the pristine snapshot does not pass: nothing measured", file=sys.stderr)
                return 1
        elif args.timeout is None:
            batch.timeout = TIMEOUT_S
        if batch.unsettled is None and earlier_pristine and "unsettled" in earlier_pristine:
            batch.unsettled = set(earlier_pristine["unsettled"])
        if batch.unsettled is None and todo:
            print("the pristine run's inconclusive cases are not known (no pristine run): a "
                  "mutant that leaves more cases inconclusive is not killed for it", flush=True)
        loaded = batch.loaded if batch.loaded is not None else (
            set(earlier_loaded) if earlier_loaded is not None else None)
        unloaded = sorted(f for f in files if loaded is not None and f not in loaded)
        if unloaded:
            print(f"not loaded by the server during the pristine run, so not judged: "
                  f"{', '.join(unloaded)}", flush=True)
            chosen = [m for m in chosen if m.path not in unloaded]
            todo = [m for m in todo if m.path not in unloaded]
        reached = batch.reached if batch.reached is not None else (
            {f: set(lines) for f, lines in earlier_pristine["reached"].items()}
            if earlier_pristine and "reached" in earlier_pristine else None)
        skipped, trusted = set_aside(todo, reached, load_equivalent(),
                                     run_unreached=args.run_unreached or bool(args.only),
                                     run_equivalent=args.run_equivalent or bool(args.only),
                                     unread=batch.case_map.unread if batch.case_map else None)
        if skipped:
            print(f"{len(skipped)} of the {len(todo)} mutants to run are on lines the pristine "
                  f"server never runs: they survive without a run (--run-unreached runs them)",
                  flush=True)
        if trusted:
            print(f"{len(trusted)} of the {len(todo)} mutants to run are judged equivalent in "
                  f"{EQUIVALENT.name}: counted so without a run (--run-equivalent runs them, "
                  f"to check the judgements)", flush=True)
        population: dict[str, int] = {}
        for m in mutants:
            population[m.operator] = population.get(m.operator, 0) + 1
        lock = threading.Lock()

        def row_of(m: Mutant, v: Verdict) -> dict:
            place = places[m.path].place(m.scope, m.line, m.end_line)
            return {"id": m.id, "where": m.where, "file": m.path, "scope": m.scope,
                    "operator": m.operator, "line": m.line, "col": m.col,
                    "section": place.section, "requirements": list(place.requirements),
                    "section_from": place.how, "verdict": v.verdict, "reason": v.reason,
                    "seconds": round(v.seconds, 1), "diff": m.diff(originals[m.path]),
                    **({"unreached": True} if v.verdict == "survived" and v.seconds == 0
                       and v.reason.startswith(UNREACHED) else {}),
                    **({"not_run": True} if v.verdict == "survived" and v.seconds == 0
                       and v.reason.startswith(NOT_RUN) else {}),
                    **({"narrowed": True} if v.verdict == "survived" and NARROWED in v.reason
                       else {})}

        def report() -> dict:
            rows = [done[m.id] for m in chosen if m.id in done]
            equivalent = load_equivalent()
            summary = summarize(rows, equivalent)
            carried = sum(1 for r in rows if r.get("carried_from"))
            doc = {"snapshot": batch.source, "digest": batch.digest,
                   "served_digest": batch.served_digest,
                   "module_digests": batch.module_digests,
                   "frame_digest": batch.frame_digest, "carried": carried,
                   "carried_by_module": sum(1 for r in rows if r.get("carried_by_module")),
                   "configuration": batch.config.name, "files": files,
                   "not_loaded": unloaded, "loaded": sorted(loaded) if loaded else None,
                   "excluded": EXCLUDED if args.all else {},
                   "seed": args.seed, "sample": args.sample,
                   "population": {"total": len(mutants), **population},
                   "select": args.select, "timeout_s": batch.timeout, "jobs": args.jobs,
                   "pristine": ({**vars(pristine), "unsettled": sorted(batch.unsettled or ()),
                                 "reached": {f: sorted(lines) for f, lines in
                                             (batch.reached or {}).items()}}
                                if pristine else earlier_pristine),
                   "summary": summary, "by_module": breakdown(rows, "file"),
                   "by_section": breakdown(rows, "section"),
                   "stale_equivalents": stale_equivalents(equivalent, mutants) if args.all
                   else [],
                   "mutants": rows}
            if not args.only:
                args.out.parent.mkdir(parents=True, exist_ok=True)
                ignore = args.out.parent / ".gitignore"
                if args.out.parent.resolve() == OUT.parent and not ignore.exists():
                    ignore.write_text("*\n")
                args.out.write_text(json.dumps(doc, indent=1) + "\n")
                args.out.with_suffix(".md").write_text(markdown(doc))
                if args.ledger:
                    write_ledger(args.ledger, doc)
            return doc

        def one(m: Mutant) -> None:
            if args.budget is not None and time.perf_counter() - began > args.budget:
                return  # left for the next --resume
            if args.only:
                print(m.diff(originals[m.path]), end="", flush=True)
            v = batch.run(m)
            if _STOPPING.is_set():  # its processes were stopped: no verdict
                return
            print(f"[{v.verdict:8s} {v.seconds:5.1f} s] {m.id}  ({m.where})  {v.reason}",
                  flush=True)
            with lock:
                done[m.id] = row_of(m, v)
                if m.id in rechecking:
                    done[m.id]["rechecked"] = True
                digest = batch.cases_digest_of(m) if v.verdict == "survived" else None
                if digest:
                    done[m.id]["cases_digest"] = digest
                report()

        def restored(r: dict) -> dict:
            """An earlier verdict as this run's row: the places and the diff from this
            snapshot, the verdict and its notes from the earlier one."""
            return {**row_of(by_id[r["id"]], Verdict(r["verdict"], r["reason"], r["seconds"])),
                    **{k: r[k] for k in ("narrowed", "carried_from", "carried_by_module",
                                         "rechecked", "cases_digest") if r.get(k)}}

        for i, r in from_ledger.items():
            done[i] = restored(r)
        skip = {m.id for m in skipped} | {m.id for m in trusted}
        for m in skipped:
            done[m.id] = row_of(m, Verdict(
                "survived", f"{UNREACHED}: the pristine server never runs line {m.line}"
                if unreached(m, reached) else f"{UNREACHED}: the pristine server runs line "
                f"{m.line} at import only, and no line reading what it binds", 0.0))
        for m in trusted:
            done[m.id] = row_of(m, Verdict("survived", f"{NOT_RUN}: judged equivalent", 0.0))
        todo = [m for m in todo if m.id not in skip]
        standing = carried_survivors(todo, earlier, batch.frame_digest, batch.cases_digest_of)
        for i, r in standing.items():
            done[i] = restored(r)
        if standing:
            print(f"{len(standing)} survivors of an earlier snapshot stand: it differs from "
                  f"this one only in scenarios none of their cases are", flush=True)
            todo = [m for m in todo if m.id not in standing]
        began = time.perf_counter()
        for future in [pool.submit(one, m) for m in todo]:
            future.result()
        elapsed = time.perf_counter() - began
        ran = [m for m in todo if m.id in done]
        left = len(todo) - len(ran)
        doc = report()
        summary, rows = doc["summary"], doc["mutants"]
        print()
        print_table(rows, summary)
        print_report(rows, summary, doc["by_module"], doc["by_section"])
        if doc["stale_equivalents"]:
            print(f"\n{len(doc['stale_equivalents'])} keys of {EQUIVALENT.name} name no mutant "
                  f"(judge again): " + ", ".join(doc["stale_equivalents"]))
        if ran:
            print(f"\n{len(ran)} mutants in {elapsed:.0f} s ({elapsed / len(ran):.1f} s each, "
                  f"{args.jobs} at once)")
        if rechecking:
            again = [r for r in rows if r.get("rechecked")]
            lost = sorted(r["id"] for r in again if r["verdict"] not in ("killed", "timeout"))
            print(f"\n--recheck-carried: {len(again)} of {len(rechecking)} carried kills run "
                  f"again: {len(again) - len(lost)} still killed, {len(lost)} not"
                  + (": " + ", ".join(lost) if lost else ""))
        if left:
            print(f"\nincomplete: {left} mutants not run within --budget {args.budget:g} s; "
                  f"the same command with --resume runs them")
        if not args.only:
            print(f"wrote {args.out} and {args.out.with_suffix('.md')}")
        if left:
            return 3
        if args.all and summary["unjudged"]:
            return 1
        narrowed = sum(1 for r in rows if r.get("narrowed"))
        if narrowed:
            print(f"{narrowed} survivors faced only the cases that ran their lines "
                  f"(--narrow-only): --resume without it runs them against the whole suite")
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
