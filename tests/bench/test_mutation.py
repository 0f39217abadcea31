"""bench/mutation.py: the AST mutator's operators, IDs and sampling on a small snippet, and one
known-killed mutant run end to end (its own `mqconform serve`, the suite against it)."""

from __future__ import annotations

import ast
import importlib.util
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location("bench_mutation", ROOT / "bench/mutation.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


mutation = _load()

SNIPPET = '''"""A module docstring with 1 == 1 in it."""
import logging

from mqconform.model.status import MQ_ERROR_INVALID_HANDLE, MQ_OK

log = logging.getLogger(__name__)
LIMIT = 0x10


class Server:
    """Docstring."""

    def __repr__(self) -> str:
        return "Server(%d)" % (1 + 2)

    def check(self, a: int = 3, items: tuple = ()) -> int:
        """Never mutated: 5 < 6."""
        log.info("a is %d", 7)
        total = a + 1
        self.flush()
        if a == 0 and not items:
            return MQ_ERROR_INVALID_HANDLE
        if a < LIMIT or a in items:
            return MQ_OK
        done: bool = True
        return total
'''
CONSTANTS = {"MQ_OK": 0, "MQ_ERROR_INVALID_HANDLE": 0xC00E0007,
             "MQ_ERROR_INVALID_PARAMETER": 0xC00E0006}


def _mutants():
    return mutation.mutants_of("pkg/snippet.py", SNIPPET, CONSTANTS)


def _by_detail(mutants, line_text):
    line = next(i for i, t in enumerate(SNIPPET.splitlines(), 1) if line_text in t)
    return {(m.operator, m.detail) for m in mutants if m.line == line}


def test_every_operator_applies_where_it_should():
    ms = _mutants()
    assert {m.operator for m in ms} == {"cmp", "bool", "not", "const", "status", "stmt",
                                        "return", "if"}
    assert _by_detail(ms, "if a == 0 and not items") == {
        ("if", "if->True"), ("if", "if->False"), ("bool", "and->or"), ("cmp", "==->!="),
        ("const", "0->1"), ("not", "not-x->x")}
    assert _by_detail(ms, "if a < LIMIT or a in items") == {
        ("if", "if->True"), ("if", "if->False"), ("bool", "or->and"), ("cmp", "<-><="),
        ("cmp", "in->not-in")}
    assert _by_detail(ms, "return MQ_ERROR_INVALID_HANDLE") == {
        ("return", "return->None"), ("status", "MQ_ERROR_INVALID_HANDLE->MQ_OK"),
        ("status", "MQ_ERROR_INVALID_HANDLE->MQ_ERROR_INVALID_PARAMETER")}
    assert _by_detail(ms, "return MQ_OK") == {
        ("return", "return->None"), ("status", "MQ_OK->MQ_ERROR_INVALID_HANDLE")}
    assert _by_detail(ms, "LIMIT = 0x10") == {("const", "0x10->0x11"), ("const", "0x10->0")}
    assert _by_detail(ms, "total = a + 1") == {("stmt", "total=a+1->pass"),
                                               ("const", "1->2"), ("const", "1->0")}
    assert _by_detail(ms, "self.flush()") == {("stmt", "self.flush()->pass")}
    assert _by_detail(ms, "done: bool = True") == {("stmt", "done:bool=True->pass"),
                                                   ("const", "True->False")}
    # a default argument is mutated, its annotation is not
    assert _by_detail(ms, "def check") == {("const", "3->4"), ("const", "3->0")}


def test_docstrings_logging_annotations_imports_and_repr_are_left_alone():
    ms = _mutants()
    lines = SNIPPET.splitlines()
    for text in ('"""A module docstring', "import logging", "from mqconform.model.status", "log = ",
                 "class Server", '"""Docstring', "def __repr__", 'return "Server',
                 '"""Never mutated', "log.info"):
        number = next(i for i, t in enumerate(lines, 1) if t.strip().startswith(text.strip()))
        assert not [m.id for m in ms if m.line == number], text


def test_each_mutant_changes_one_site_compiles_and_has_a_unique_stable_id():
    ms = _mutants()
    ids = [m.id for m in ms]
    assert len(ids) == len(set(ids))
    assert ids == [m.id for m in _mutants()]  # the same source gives the same IDs
    for m in ms:
        path, line, col, operator, detail = m.id.split(":", 4)
        assert (path, int(line), int(col), operator, detail) == (
            "pkg/snippet.py", m.line, m.col, m.operator, m.detail)
        mutated = m.apply(SNIPPET)
        assert mutated != SNIPPET
        ast.parse(mutated)
        diff = m.diff(SNIPPET)
        assert len([ln for ln in diff.splitlines() if ln.startswith("-")
                    and not ln.startswith("---")]) >= 1


def test_a_status_constant_becomes_the_value_of_another():
    m = next(m for m in _mutants() if m.detail == "MQ_OK->MQ_ERROR_INVALID_HANDLE")
    assert "            return 0xC00E0007\n" in m.apply(SNIPPET)
    m = next(m for m in _mutants() if m.operator == "stmt" and m.detail.startswith("self.flush"))
    assert "        pass\n        if a == 0" in m.apply(SNIPPET)


def test_sampling_is_deterministic_and_uniform_over_all_sites():
    ms = _mutants()
    first = mutation.sample(ms, 5, seed=7)
    assert [m.id for m in first] == [m.id for m in mutation.sample(ms, 5, seed=7)]
    assert len(first) == 5 and len({m.id for m in first}) == 5
    assert [m.id for m in mutation.sample(ms, None, seed=7)] == [m.id for m in ms]
    seen = set()
    for seed in range(60):
        seen |= {m.id for m in mutation.sample(ms, 5, seed=seed)}
    assert seen == {m.id for m in ms}


def test_the_project_files_give_mutants_of_every_operator():
    ms = mutation.all_mutants(ROOT)
    assert {m.operator for m in ms} >= {"cmp", "bool", "not", "const", "status", "stmt",
                                        "return", "if"}
    assert {m.path for m in ms} == set(mutation.FILES)


def test_the_kill_rate_leaves_out_the_equivalent_survivors():
    rows = [{"id": "a", "verdict": "killed"}, {"id": "b", "verdict": "timeout"},
            {"id": "c", "verdict": "survived"}, {"id": "d", "verdict": "survived"}]
    s = mutation.summarize(rows, {"d": "dead code"})
    assert (s["total"], s["killed"], s["timeout"], s["survived"], s["equivalent"]) == (
        4, 1, 1, 1, 1)
    assert s["kill_rate"] == round(2 / 3, 4) and not s["met"]
    assert rows[3]["equivalent"] == "dead code"


def test_a_known_killed_mutant_is_killed_end_to_end():
    """R_OpenQueue's `opened.status != MQ_OK` made `!= MQ_ERROR_INVALID_HANDLE`: every open
    fails in the server copy alone; the pristine suite stops at its first failure (~10 s)."""
    began = time.perf_counter()
    batch = mutation.Batch(commit=None, keep=False, timeout=60, select=[])
    try:
        m = next((m for m in mutation.all_mutants(batch.base, ("model/mqrr.py",))
                  if m.detail == "MQ_OK->MQ_ERROR_INVALID_HANDLE"
                  and "opened.status != MQ_OK" in
                  (batch.base / m.path).read_text().splitlines()[m.line - 1]), None)
        if m is None:
            pytest.skip("model/mqrr.py no longer has `if opened.status != MQ_OK`")
        verdict = batch.run(m)
    finally:
        batch.close()
    assert verdict.verdict == "killed", verdict
    assert time.perf_counter() - began < 30
