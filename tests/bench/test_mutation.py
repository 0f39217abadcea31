"""bench/mutation.py: the AST mutator's operators, IDs and sampling on a small snippet, and one
known-killed mutant run end to end (its own `mqconform serve`, the suite against it)."""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
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
        path, scope, operator, ordinal, detail = m.id.split(":", 4)
        assert (path, scope, operator, int(ordinal), detail) == (
            "pkg/snippet.py", m.scope, m.operator, m.ordinal, m.detail)
        assert m.where == f"pkg/snippet.py:{m.line}:{m.col}"
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
    batch = mutation.Batch(commit=None, keep=False, timeout=60, select=[])
    try:
        m = next((m for m in mutation.all_mutants(batch.base, ("model/mqrr.py",))
                  if m.detail == "MQ_OK->MQ_ERROR_INVALID_HANDLE"
                  and "opened.status != MQ_OK" in
                  (batch.base / m.path).read_text().splitlines()[m.line - 1]), None)
        assert m is not None, ("model/mqrr.py no longer has `if opened.status != MQ_OK`: "
                               "pick another mutant every case must kill")
        verdict = batch.run(m)
    finally:
        batch.close()
    assert verdict.verdict == "killed", verdict


def test_narrow_only_keeps_a_survivor_of_the_cases_that_ran_its_lines_from_the_whole_suite():
    """A mutant that changes memory only (an emptied table not cleared) survives; with
    narrow_only it faces the one case the trace names and is recorded so (a lower bound),
    without it the whole (selected) suite follows."""
    case = ("conformance/cases/test_remoteread_basic.py::"
            "test_get_server_port_returns_the_remoteread_port")
    batch = mutation.Batch(commit=None, keep=False, timeout=60, select=["MS-MQRR/3.1.4.1/R6"])
    try:
        m = next(m for m in mutation.all_mutants(batch.base, ("model/refs.py",))
                 if m.id == "model/refs.py:taken:stmt:2:table.clear()->pass")
        per = mutation.TICKS_PER_S
        batch.case_map = mutation.CaseMap({case: [1.0, 3.0], "t::other": [4.0, 5.0]},
                                          {m.path: {m.line: [int(2.0 * per)]}})
        batch.narrow_only = True
        narrowed = batch.run(m)
        batch.narrow_only = False
        whole = batch.run(m)
    finally:
        batch.close()
    assert narrowed.verdict == "survived" and mutation.NARROWED in narrowed.reason, narrowed
    assert "1 pass" in narrowed.reason  # the one case, not the selection
    assert whole.verdict == "survived" and mutation.NARROWED not in whole.reason, whole
    assert "the whole suite, after the 1 cases" in whole.reason


def test_resume_runs_narrowed_survivors_again_unless_narrow_only_is_given_again():
    rows = [{"id": "n", "verdict": "survived", "narrowed": True},
            {"id": "k", "verdict": "killed"}]
    old = {"digest": "D1", "served_digest": "S1", "snapshot": "commit aaa", "mutants": rows}
    assert set(mutation.resumed(old, "D1", "S1", {"n", "k"}, {})[0]) == {"k"}
    assert set(mutation.resumed(old, "D1", "S1", {"n", "k"}, {}, narrowed=True)[0]) == {"n", "k"}


def test_resume_runs_timeouts_again_when_asked():
    """A timeout counts as a kill; --rerun-timeouts drops it, from the same snapshot and from
    one of the same served code alike, so that a load the machine had is not taken for a hang."""
    rows = [{"id": "t", "verdict": "timeout"}, {"id": "k", "verdict": "killed"}]
    old = {"digest": "D1", "served_digest": "S1", "snapshot": "commit aaa", "mutants": rows}
    assert set(mutation.resumed(old, "D1", "S1", {"t", "k"}, {})[0]) == {"t", "k"}
    assert set(mutation.resumed(old, "D1", "S1", {"t", "k"}, {}, rerun_timeouts=True)[0]) == {"k"}
    assert set(mutation.resumed(old, "D2", "S1", {"t", "k"}, {}, rerun_timeouts=True)[0]) == {"k"}


def test_a_suite_refusing_its_arguments_is_an_error_of_the_harness_not_a_kill():
    """A --select the suite does not know makes `mqconform run` exit 2 with no results: that
    judges nothing about the mutant."""
    batch = mutation.Batch(commit=None, keep=False, timeout=60, select=["no-such/document"])
    try:
        m = mutation.all_mutants(batch.base, ("model/mqrr.py",))[0]
        verdict = batch.run(m)
    finally:
        batch.close()
    assert verdict.verdict == "error", verdict
    assert "suite exit 2" in verdict.reason


def _run_one(module: str, mutant_id: str, select: list[str], pristine: bool = False,
             config: mutation.Config = mutation.PLAIN) -> tuple[mutation.Verdict, str]:
    """The verdict on one mutant (after the pristine run if ``pristine``) and the batch's
    digest."""
    batch = mutation.Batch(commit=None, keep=False, timeout=120, select=select, config=config)
    try:
        m = next((m for m in mutation.all_mutants(batch.base, (module,)) if m.id == mutant_id),
                 None)
        assert m is not None, f"no mutant {mutant_id} any more: pick another"
        if pristine:
            assert batch.pristine().verdict == "survived"
        return batch.run(m), batch.digest
    finally:
        batch.close()


def test_a_server_the_mutant_leaves_deaf_to_binds_is_killed_not_an_error():
    """`mqconform run` exits 2 (a usage error) when the target does not answer its first
    bind; the harness saw the mutated server start, so the mutant broke it: a kill. The
    mutant never sends the bind_ack."""
    verdict, _ = _run_one("server/rpc.py",
                          "server/rpc.py:Connection._on_bind:stmt:31:"
                          "self._send([d.encode_pdu(body,h.call_id->pass",
                          ["MS-MQRR/2.1"])  # trace: ignore
    assert verdict.verdict == "killed", verdict
    assert "unreachable" in verdict.reason


def test_the_authenticated_configuration_reaches_and_kills_an_access_check_mutant():
    """--auth: the server requires authentication and the suite signs its calls and has the
    access checks' identities, so a mutant of server/security.py that lets nobody named in an
    access list in is killed. The case it fails checks a SHOULD (MS-MQRR 2.1): a warning, not
    a gating failure, yet one the pristine run does not give, so the suite noticed the
    mutant."""
    verdict, digest = _run_one("server/security.py",
                               "server/security.py:Access.allows:return:3:return->None",
                               ["MS-MQRR/2.1"], pristine=True,  # trace: ignore
                               config=mutation.authenticated_config())
    assert verdict.verdict == "killed", verdict
    assert digest.endswith("+authenticated")


def test_the_plain_configuration_has_the_identities_and_reaches_their_ntlm_paths():
    """The plain configuration serves as `mqconform run --target reference` does: the suite's
    own client unauthenticated, the access-check identities provisioned, so the cases that
    authenticate run (without them they were inconclusive) and a mutant of the NTLM paths of
    server/rpc.py that only they reach is killed: one that refuses a security context begun
    with an alter_context after a bind without one (MS-RPCE 3.3.1.5.2.1)."""
    assert "authentication: none" in mutation.PLAIN.provisioning
    assert "administrator:" in mutation.PLAIN.target_extra and "credentials" not in \
        mutation.PLAIN.target_extra
    verdict, digest = _run_one("server/rpc.py", "server/rpc.py:Connection._bind_auth:bool:2:and->or",
                               ["MS-MQRR/2.1/R3"], pristine=True)  # trace: ignore
    assert verdict.verdict == "killed", verdict
    assert "alter_context" in verdict.reason and not digest.endswith("+authenticated")


# ---------------------------------------------------------------------------------------------
# The stable identity, the sections, the equivalent file (none of these runs the suite)
# ---------------------------------------------------------------------------------------------

def test_an_id_names_the_function_the_operator_and_the_ordinal_of_the_site():
    ids = {m.id for m in _mutants()}
    assert "pkg/snippet.py:Server.check:cmp:1:==->!=" in ids
    assert "pkg/snippet.py:Server.check:cmp:2:<-><=" in ids
    assert "pkg/snippet.py:Server.check:cmp:3:in->not-in" in ids
    # two mutants of one site share its ordinal; the default belongs to the function
    assert {"pkg/snippet.py:Server.check:const:1:3->4",
            "pkg/snippet.py:Server.check:const:1:3->0"} <= ids
    assert "pkg/snippet.py:<module>:const:1:0x10->0x11" in ids
    assert "pkg/snippet.py:Server.check:stmt:2:self.flush()->pass" in ids


def test_ids_survive_lines_added_above_and_edits_in_other_functions():
    before = {m.id: m for m in _mutants()}
    shifted = SNIPPET.replace("LIMIT = 0x10\n", "LIMIT = 0x10\n\n\ndef helper(x):\n"
                              "    # a new function above the class\n"
                              "    if x == 1 and x < 2:\n        return x + 1\n    return 0\n\n")
    shifted = shifted.replace('        """Never mutated: 5 < 6."""\n',
                              '        """Never mutated: 5 < 6.\n\n        More words.\n'
                              '        """\n')
    after = {m.id: m for m in mutation.mutants_of("pkg/snippet.py", shifted, CONSTANTS)}
    assert set(before) <= set(after)
    moved = [i for i in before if before[i].line != after[i].line]
    assert moved and all(before[i].legacy_id != after[i].legacy_id for i in moved)
    assert {i for i in after if ":helper:" in i} == set(after) - set(before)
    for i, m in before.items():  # the same change at the same place
        assert (m.detail, m.replacement) == (after[i].detail, after[i].replacement)


def test_an_edit_inside_a_function_renumbers_that_function_only():
    edited = SNIPPET.replace("        total = a + 1\n", "        total = a + 1\n"
                             "        if total == 9:\n            total = 8\n")
    before = {m.id for m in _mutants()}
    after = {m.id for m in mutation.mutants_of("pkg/snippet.py", edited, CONSTANTS)}
    assert {i for i in before ^ after if ":Server.check:" not in i} == set()
    assert "pkg/snippet.py:Server.check:cmp:2:==->!=" in after  # the new one is the 2nd


SECTIONED = '''"""MS-MQDMPR 3.1.7.1 Events of a module."""


def plain():
    return 1 + 2


class Reader:
    """MS-MQRR 3.1 The RemoteRead server."""

    def r_open(self, call):
        """MS-MQRR 3.1.4.2 R_OpenQueue (Opnum 2)."""
        if call.x is None:  # MS-MQRR/3.1.4.2/R3 MS-MQRR/3.1.4.2/R4
            return 5
        # MS-MQRR/3.1.4.2/R7: the access checks
        y = call.y + 1
        if y > 3:
            return 6
        return 7

    def other(self):
        return 0 == 1
'''


def test_a_mutant_is_placed_in_the_section_its_function_cites():
    ms = mutation.mutants_of("pkg/s.py", SECTIONED, {})
    places = mutation.SectionMap(SECTIONED)

    def place(line_text, operator):
        line = next(i for i, t in enumerate(SECTIONED.splitlines(), 1) if line_text in t)
        m = next(m for m in ms if m.line == line and m.operator == operator)
        return places.place(m.scope, m.line, m.end_line)

    assert place("if call.x is None", "cmp") == mutation.Place(
        "MS-MQRR 3.1.4.2", ("MS-MQRR/3.1.4.2/R3", "MS-MQRR/3.1.4.2/R4"), "line")
    assert place("y = call.y + 1", "const") == mutation.Place(
        "MS-MQRR 3.1.4.2", ("MS-MQRR/3.1.4.2/R7",), "step")
    assert place("if y > 3", "cmp").requirements == ("MS-MQRR/3.1.4.2/R7",)
    assert place("return 0 == 1", "cmp") == mutation.Place("MS-MQRR 3.1", (), "docstring")
    assert place("return 1 + 2", "const") == mutation.Place("MS-MQDMPR 3.1.7.1", (), "module")
    assert mutation.SectionMap("x = 1\n").place("<module>", 1) == mutation.Place(
        mutation.UNMAPPED, (), "none")
    assert mutation.SectionMap('"""PDUs ([C706] chapter 12)."""\nx = 1\n').place(
        "<module>", 2) == mutation.Place("C706", (), "module")


def test_a_legacy_key_migrates_to_the_stable_id_of_the_same_site():
    old = SECTIONED
    new = SECTIONED.replace("def plain():\n", "def added():\n    return 3 > 4\n\n\ndef plain():\n")
    new = new.replace("        y = call.y + 1\n", "        z = 0\n        y = call.y + 1\n")
    m = next(m for m in mutation.mutants_of("pkg/s.py", old, {}) if m.detail == ">->>=")
    key, why = mutation.migrate_key(m.legacy_id, old, new, {}, {})
    assert key == "pkg/s.py:Reader.r_open:cmp:2:>->>=" == m.id and not why
    assert mutation.migrate_key("pkg/s.py:999:1:cmp:>->>=", old, new, {}, {})[0] is None
    # the site is gone: not carried over, with the reason
    gone = new.replace("        if y > 3:\n            return 6\n", "")
    key, why = mutation.migrate_key(m.legacy_id, old, gone, {}, {})
    assert key is None and "Reader.r_open" in why


def test_a_stable_key_follows_its_site_when_an_edit_renumbers_its_function():
    """A statement added to r_open before `y = call.y + 1` renumbers r_open's stmt ordinals:
    the key written against the old source follows the same statement to its new ordinal; a
    site that is gone is not followed, with the reason."""
    old = SECTIONED
    new = SECTIONED.replace("        # MS-MQRR/3.1.4.2/R7: the access checks\n",
                            "        # MS-MQRR/3.1.4.2/R7: the access checks\n        z = 0\n")
    was = next(m for m in mutation.mutants_of("pkg/s.py", old, {})
               if m.operator == "stmt" and "y=call.y+1" in m.id)
    key, why = mutation.follow_key(was.id, old, new, {}, {})
    assert key is not None and not why and key != was.id
    assert key == next(m.id for m in mutation.mutants_of("pkg/s.py", new, {})
                       if m.operator == "stmt" and "y=call.y+1" in m.id)
    assert mutation.follow_key("pkg/s.py:Reader.r_open:stmt:99:x->pass", old, new, {}, {})[0] \
        is None
    gone = new.replace("        y = call.y + 1\n", "")
    key, why = mutation.follow_key(was.id, old, gone, {}, {})
    assert key is None and "Reader.r_open" in why


def test_every_key_of_the_equivalent_file_names_a_mutant_of_the_current_source():
    equivalent = mutation.load_equivalent()
    files = sorted({k.split(":", 1)[0] for k in equivalent})
    assert set(files) <= set(mutation.served_files(ROOT))
    mutants = mutation.all_mutants(ROOT, tuple(files))
    assert mutation.stale_equivalents(equivalent, mutants) == []
    assert all(reason.strip() for reason in equivalent.values())


def test_a_mutant_judged_twice_in_the_equivalent_file_is_refused(tmp_path):
    """YAML keeps the last of two equal keys; the file must not lose a reason that way."""
    path = tmp_path / "equivalent.yaml"
    path.write_text('"a.py:f:if:1:if->True": >-\n  one reason\n'
                    '"a.py:f:if:2:if->True": other\n'
                    '"a.py:f:if:1:if->True": >-\n  another reason\n')
    with pytest.raises(SystemExit, match=r"equivalent.yaml:4: 'a.py:f:if:1:if->True' is "
                                         r"judged twice \(first on line 1\)"):
        mutation.load_equivalent(path)
    path.write_text('"a.py:f:if:1:if->True": one\n"a.py:f:if:2:if->True": other\n')
    assert mutation.load_equivalent(path) == {"a.py:f:if:1:if->True": "one",
                                              "a.py:f:if:2:if->True": "other"}


def test_all_selects_every_served_module_and_patterns_select_some():
    served = mutation.served_files(ROOT)
    assert set(mutation.FILES) <= set(served)
    assert {f.split("/")[0] for f in served} == set(mutation.SERVED)
    assert not set(served) & set(mutation.EXCLUDED)
    assert mutation.select_files(ROOT, True, []) == served
    assert mutation.select_files(ROOT, False, ["wire/*"]) == [f for f in served
                                                              if f.startswith("wire/")]
    assert mutation.select_files(ROOT, False, ["cursor"]) == ["model/cursor.py"]
    assert mutation.select_files(ROOT, False, []) == list(mutation.FILES)
    with pytest.raises(SystemExit):
        mutation.select_files(ROOT, False, ["no-such-module"])


def test_the_report_counts_per_module_and_section_and_lists_unjudged_survivors():
    rows = [{"id": "a", "file": "m/x.py", "section": "S 1", "verdict": "killed"},
            {"id": "b", "file": "m/x.py", "section": "S 2", "verdict": "survived"},
            {"id": "c", "file": "m/y.py", "section": "S 2", "verdict": "survived"},
            {"id": "d", "file": "m/y.py", "section": "S 2", "verdict": "timeout"},
            {"id": "e", "file": "m/y.py", "section": "S 2", "verdict": "error"}]
    s = mutation.summarize(rows, {"c": "dead code"})
    assert s["unjudged"] == ["b"] and s["kill_rate"] == round(2 / 3, 4)
    by_file = mutation.breakdown(rows, "file")
    assert by_file["m/x.py"]["kill_rate"] == 0.5
    assert (by_file["m/y.py"]["total"], by_file["m/y.py"]["equivalent"],
            by_file["m/y.py"]["kill_rate"]) == (2, 1, 1.0)
    by_section = mutation.breakdown(rows, "section")
    assert by_section["S 2"]["survived"] == 1 and by_section["S 1"]["killed"] == 1
    page = mutation.markdown({"snapshot": "x", "summary": s, "by_module": by_file,
                              "by_section": by_section, "mutants": rows})
    assert "| m/y.py | 2 | 0 | 1 | 0 | 1 | 100.0 % |" in page and "`b`" in page


def test_the_snapshot_digest_changes_with_a_file_and_ignores_bytecode(tmp_path):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "a.py").write_text("x = 1\n")
    first = mutation.tree_digest(tmp_path)
    (tmp_path / "model" / "__pycache__").mkdir()
    (tmp_path / "model" / "__pycache__" / "a.pyc").write_bytes(b"\0")
    assert mutation.tree_digest(tmp_path) == first
    (tmp_path / "model" / "a.py").write_text("x = 2\n")
    assert mutation.tree_digest(tmp_path) != first


def test_the_served_digest_leaves_the_suites_cases_and_steps_out(tmp_path):
    for name in ("model", "conformance", "features"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.py").write_text("x = 1\n")
    served, whole = (mutation.tree_digest(tmp_path, mutation.SUITE_SIDE),
                     mutation.tree_digest(tmp_path))
    (tmp_path / "features" / "a.py").write_text("x = 2\n")
    (tmp_path / "conformance" / "b.py").write_text("y = 1\n")
    assert mutation.tree_digest(tmp_path, mutation.SUITE_SIDE) == served
    assert mutation.tree_digest(tmp_path) != whole
    (tmp_path / "model" / "a.py").write_text("x = 2\n")
    assert mutation.tree_digest(tmp_path, mutation.SUITE_SIDE) != served


def test_the_served_digest_leaves_the_golden_pcaps_out(tmp_path):
    (tmp_path / "captures" / "golden" / "scenarios").mkdir(parents=True)
    (tmp_path / "captures" / "recorder.py").write_text("x = 1\n")
    suite = mutation.tree_digest(tmp_path, mutation.SUITE_SIDE)
    (tmp_path / "captures" / "golden" / "index.json").write_text("{}\n")
    (tmp_path / "captures" / "golden" / "scenarios" / "new.pcap").write_bytes(b"\xd4\xc3")
    assert mutation.tree_digest(tmp_path, mutation.SUITE_SIDE) == suite
    (tmp_path / "captures" / "goldenrod.py").write_text("x = 1\n")  # a prefix is no folder
    assert mutation.tree_digest(tmp_path, mutation.SUITE_SIDE) != suite


def test_the_served_digest_leaves_out_what_serve_never_loads(tmp_path):
    """The run's recorder, the example targets and the modules only tests import change no
    verdict; a module serve loads, or a file whose name merely starts like a skipped one,
    does."""
    unloaded = ("captures/recorder.py", "examples/target.yaml", "wire/impacket_ndr.py",
                "model/observer.py", "model/invariants.py", "spec/errata.yaml",
                "spec/catalog/MS-MQRR.yaml", "spec/documents/MS-MQRR/3.1.4.9.txt",
                "spec/report.py", "spec/templates/catalog.html.j2")
    loaded = ("wire/ndr.py", "model/adm.py", "wire/impacket_ndr.py.orig", "spec/catalog.py",
              "spec/__init__.py", "spec/new_module.py")
    for rel in unloaded + loaded:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    served = mutation.tree_digest(tmp_path, mutation.NOT_SERVED)
    for rel in unloaded:
        (tmp_path / rel).write_text("x = 2\n")
        assert mutation.tree_digest(tmp_path, mutation.NOT_SERVED) == served, rel
    for rel in loaded:
        before = mutation.tree_digest(tmp_path, mutation.NOT_SERVED)
        (tmp_path / rel).write_text("x = 3\n")
        assert mutation.tree_digest(tmp_path, mutation.NOT_SERVED) != before, rel


def test_a_commits_served_digest_is_worked_out_under_todays_rule(tmp_path, monkeypatch):
    """A ledger names the served digest under the rule of its day; resuming works it out
    again from its commit, so a later change of NOT_SERVED (spec/ left out) and a commit that
    changes only the errata keep its kills, and one that changes served code does not."""
    import subprocess

    repo = tmp_path / "repo"
    for name in mutation.TREE:
        path = repo / name / "x.py" if name != "pyproject.toml" else repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    (repo / "spec" / "errata.yaml").write_text("a: 1\n")

    def commit(message: str) -> str:
        git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", message], check=True)
        return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                              text=True).stdout.strip()

    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    first = commit("first")
    (repo / "spec" / "errata.yaml").write_text("a: 2\n")
    errata = commit("errata")
    (repo / "model" / "x.py").write_text("x = 2\n")
    served = commit("served")
    monkeypatch.setattr(mutation, "ROOT", repo)
    digest = {sha: mutation.served_digest_of({"snapshot": f"commit {sha}",
                                              "served_digest": "under an older rule"})
              for sha in (first, errata, served)}
    assert digest[first] == digest[errata] != digest[served]
    assert "under an older rule" not in digest.values()
    alternate = mutation.served_digest_of({"snapshot": f"commit {first}",
                                           "configuration": "alternate"})
    assert alternate == digest[first] + "+alternate"
    assert mutation.served_digest_of({"snapshot": "working tree"}) is None


def test_resume_keeps_a_snapshots_verdicts_and_carries_only_kills_across_suite_changes():
    rows = [{"id": "k", "verdict": "killed"}, {"id": "t", "verdict": "timeout"},
            {"id": "s", "verdict": "survived"}, {"id": "e", "verdict": "error"},
            {"id": "u", "verdict": "survived", "not_run": True},
            {"id": "gone", "verdict": "killed"}]
    old = {"digest": "D1", "served_digest": "S1", "snapshot": "commit aaa", "mutants": rows}
    ids = {"k", "t", "s", "e", "u"}
    same, _ = mutation.resumed(old, "D1", "S1", ids, judged={"u": "reason"})
    assert set(same) == {"k", "t", "s", "u"}  # an error runs again; a gone mutant is dropped
    withdrawn, _ = mutation.resumed(old, "D1", "S1", ids, judged={})
    assert set(withdrawn) == {"k", "t", "s"}  # its judgement withdrawn, "u" runs again
    carried, line = mutation.resumed(old, "D2", "S1", ids, judged={"u": "reason"})
    assert set(carried) == {"k", "t"} and "2 kills" in line
    assert {r["carried_from"] for r in carried.values()} == {"commit aaa"}
    again, _ = mutation.resumed({**old, "mutants": list(carried.values())}, "D3", "S1", ids, {})
    assert {r["carried_from"] for r in again.values()} == {"commit aaa"}  # the first judge
    assert mutation.resumed(old, "D2", "S2", ids, {})[0] == {}  # the served code changed
    assert mutation.resumed(old, "D2", None, ids, {})[0] == {}  # --no-carry


def test_the_ledger_keeps_what_took_a_run_and_resumes_as_the_results_do(tmp_path):
    long = "x" * 400
    rows = [{"id": "b", "verdict": "killed", "seconds": 3.2, "reason": long, "diff": "-a\n+b"},
            {"id": "a", "verdict": "survived", "seconds": 41.0, "reason": "573 pass",
             "narrowed": True},
            {"id": "c", "verdict": "killed", "seconds": 2.0, "reason": "r",
             "carried_from": "commit aaa"},
            {"id": "u", "verdict": "survived", "seconds": 0.0, "reason": "not reached: ...",
             "unreached": True},
            {"id": "q", "verdict": "survived", "seconds": 0.0, "reason": "not run: judged",
             "not_run": True},
            {"id": "e", "verdict": "error", "seconds": 1.0, "reason": "harness"}]
    doc = {"snapshot": "commit bbb", "digest": "D1", "served_digest": "S1",
           "configuration": "plain", "mutants": rows}
    path = tmp_path / "ledger.jsonl"
    mutation.write_ledger(path, doc)
    lines = path.read_text().splitlines()
    assert [__import__("json").loads(ln)["id"] for ln in lines[1:]] == ["a", "b", "c"]
    back = mutation.read_ledger(path)
    assert (back["digest"], back["served_digest"], back["snapshot"]) == ("D1", "S1", "commit bbb")
    by_id = {r["id"]: r for r in back["mutants"]}
    assert len(by_id["b"]["reason"]) == mutation.LEDGER_REASON and "diff" not in by_id["b"]
    assert by_id["a"]["narrowed"] and by_id["c"]["carried_from"] == "commit aaa"
    # read back, it resumes as a results file of the same verdicts does
    ids = {"a", "b", "c", "u", "q", "e"}
    kept, _ = mutation.resumed(back, "D1", "S1", ids, judged={})
    assert set(kept) == {"b", "c"}  # "a" faced only its cases: it runs against the whole suite
    assert set(mutation.resumed(back, "D1", "S1", ids, {}, narrowed=True)[0]) == {"a", "b", "c"}
    carried, _ = mutation.resumed(back, "D2", "S1", ids, judged={})
    assert {i: r["carried_from"] for i, r in carried.items()} == {"b": "commit bbb",
                                                                   "c": "commit aaa"}
    assert mutation.resumed(back, "D2", "S2", ids, {})[0] == {}


def test_kills_of_unchanged_modules_are_carried_when_the_served_code_changed_elsewhere(
        tmp_path):
    rows = [{"id": "model/a.py:f:if:1:if->True", "verdict": "killed"},
            {"id": "model/a.py:f:if:2:if->True", "verdict": "timeout"},
            {"id": "model/a.py:f:if:3:if->True", "verdict": "survived"},
            {"id": "model/b.py:g:if:1:if->True", "verdict": "killed"}]
    ids = {r["id"] for r in rows}
    old = {"digest": "D1", "served_digest": "S1", "snapshot": "commit aaa",
           "configuration": "plain", "module_digests": {"model/a.py": "A", "model/b.py": "B"},
           "mutants": rows}
    now = {"model/a.py": "A", "model/b.py": "B2"}
    kept, line = mutation.resumed(old, "D2", "S2", ids, {}, modules=now)
    assert set(kept) == {"model/a.py:f:if:1:if->True", "model/a.py:f:if:2:if->True"}
    assert all(r["carried_by_module"] and r["carried_from"] == "commit aaa"
               for r in kept.values())
    assert "1 modules (model/b.py)" in line and "2 kills" in line
    # another configuration, --no-carry, or an earlier file without module digests: nothing
    assert mutation.resumed(old, "D2", "S2", ids, {}, modules=now, configuration="auth")[0] == {}
    assert mutation.resumed(old, "D2", "S2", ids, {}, modules=None)[0] == {}
    bare = {k: v for k, v in old.items() if k != "module_digests"}
    assert mutation.resumed(bare, "D2", "S2", ids, {}, modules=now)[0] == {}
    # the ledger keeps the digests and the mark, and resumes the same
    path = tmp_path / "ledger.jsonl"
    mutation.write_ledger(path, {**old, "mutants": [
        {**r, "seconds": 1.0, "reason": "r"} for r in [*kept.values(), rows[3]]]})
    back = mutation.read_ledger(path)
    assert back["module_digests"] == old["module_digests"]
    assert {r["id"] for r in back["mutants"] if r.get("carried_by_module")} == set(kept)
    again, _ = mutation.resumed(back, "D3", "S3", ids, {}, modules=now)
    assert set(again) == set(kept)


def test_module_digests_name_each_served_module(tmp_path):
    for layer in mutation.SERVED:
        (tmp_path / layer).mkdir()
    (tmp_path / "model" / "a.py").write_text("x = 1\n")
    (tmp_path / "model" / "b.py").write_text("x = 2\n")
    first = mutation.module_digests(tmp_path)
    assert set(first) == {"model/a.py", "model/b.py"}
    (tmp_path / "model" / "b.py").write_text("x = 3\n")
    second = mutation.module_digests(tmp_path)
    assert first["model/a.py"] == second["model/a.py"]
    assert first["model/b.py"] != second["model/b.py"]


@pytest.mark.parametrize("text", ["", "not json\n", '{"snapshot": "x"}\n',
                                  '{"ledger": 1, "digest": "D"}\n[1, 2]\n'])
def test_a_file_that_is_not_a_ledger_is_refused_in_one_line(tmp_path, text):
    path = tmp_path / "ledger.jsonl"
    path.write_text(text)
    with pytest.raises(SystemExit, match="not a ledger"):
        mutation.read_ledger(path)


def test_the_cases_a_run_leaves_unsettled_are_read_from_its_results(tmp_path):
    results = tmp_path / "results.json"
    assert mutation.unsettled_cases(results) == set()
    results.write_text(json.dumps({"cases": [
        {"case": "a", "verdict": "pass"}, {"case": "b", "verdict": "inconclusive"},
        {"case": "c", "verdict": "error"}, {"case": "d", "verdict": "not-applicable"}]}))
    assert mutation.unsettled_cases(results) == {"b", "c"}


def test_a_mutant_on_lines_the_pristine_server_never_ran_is_not_reached(tmp_path):
    base = tmp_path / "base"
    (base / "model").mkdir(parents=True)
    site = tmp_path / "base.site" / "mqconform"
    site.mkdir(parents=True)
    (site / "model").symlink_to(base / "model")
    listing = tmp_path / "loaded.txt.lines"
    listing.write_text(f"{site / 'model' / 'x.py'} 1 2 5\n/usr/lib/python3/os.py 7\n")
    reached = mutation.reached_lines(listing, base)
    assert reached == {"model/x.py": {1, 2, 5}}

    def at(line, end_line=0, path="model/x.py"):
        return mutation.Mutant(path, line, 0, "cmp", "==->!=", 0, 1, "x", end_line=end_line)

    assert mutation.unreached(at(3), reached)
    assert not mutation.unreached(at(5), reached)
    assert not mutation.unreached(at(3, end_line=5), reached)  # a statement over lines 3-5
    assert not mutation.unreached(at(3, path="model/y.py"), reached)  # not traced: run it
    assert not mutation.unreached(at(3), None)


def test_judged_equivalents_and_unreached_mutants_get_their_verdict_without_a_run():
    def at(line, detail):
        return mutation.Mutant("model/x.py", line, 0, "cmp", detail, 0, 1, "x")

    unreached, judged, other = at(3, "==->!="), at(5, "<-><="), at(5, ">->>=")
    both = at(3, "in->not-in")
    reached = {"model/x.py": {1, 2, 5}}
    equivalent = {judged.id: "a reason", both.id: "a reason"}
    todo = [unreached, judged, other, both]

    skipped, trusted = mutation.set_aside(todo, reached, equivalent)
    assert skipped == [unreached, both]  # not reached comes first: nothing ran it
    assert trusted == [judged]
    assert mutation.set_aside(todo, reached, equivalent, run_equivalent=True) == (
        [unreached, both], [])
    assert mutation.set_aside(todo, reached, equivalent, run_unreached=True) == (
        [], [judged, both])
    assert mutation.set_aside(todo, reached, {}, ) == ([unreached, both], [])


def test_a_scope_key_judges_every_mutant_of_that_function_and_the_functions_inside_it():
    equivalent = {"model/x.py:A.f:*": "f is never called by the server",
                  "model/x.py:g:cmp:1:==->!=": "one site"}
    assert mutation.judgement(equivalent, "model/x.py:A.f:cmp:1:==->!=") == equivalent[
        "model/x.py:A.f:*"]
    assert mutation.judgement(equivalent, "model/x.py:A.f.inner:if:2:if->True") is not None
    assert mutation.judgement(equivalent, "model/x.py:A.fg:if:1:if->True") is None
    assert mutation.judgement(equivalent, "model/x.py:A:const:1:0->1") is None
    assert mutation.judgement(equivalent, "model/y.py:A.f:if:1:if->True") is None
    assert mutation.judgement(equivalent, "model/x.py:g:cmp:1:==->!=") == "one site"

    def at(scope):
        return mutation.Mutant("model/x.py", 1, 0, "cmp", "==->!=", 0, 1, "x", scope=scope,
                               ordinal=1)

    assert mutation.stale_equivalents(equivalent, [at("A.f.inner"), at("g")]) == []
    assert mutation.stale_equivalents(equivalent, [at("A.fg"), at("g")]) == ["model/x.py:A.f:*"]
    # a scope key judges only mutants the pristine server never ran: one it ran and that
    # survived contradicts "never called" and stays unjudged
    never_ran = {"id": at("A.f").id, "verdict": "survived", "unreached": True}
    ran = {"id": at("A.f.inner").id, "verdict": "survived"}
    rows = [never_ran, ran, {"id": at("A.f").id + "x", "verdict": "killed"}]
    summary = mutation.summarize(rows, equivalent)
    assert (summary["equivalent"], summary["killed"], summary["unjudged"]) == (
        1, 1, [at("A.f.inner").id])
    # and only exact keys are trusted without a run
    assert mutation.set_aside([at("A.f")], {"model/x.py": {1}}, equivalent) == ([], [])


def test_the_trace_gives_each_line_the_ticks_it_ran_in(tmp_path):
    base = tmp_path / "base"
    (base / "model").mkdir(parents=True)
    listing = tmp_path / "loaded.txt.lines"
    listing.write_text(f"{base / 'model' / 'x.py'} 1:100,101 2:100 5:230\n")
    assert mutation.reached_trace(listing, base) == {"model/x.py": {1: [100, 101], 2: [100],
                                                                     5: [230]}}
    assert mutation.reached_lines(listing, base) == {"model/x.py": {1, 2, 5}}


def test_a_mutant_runs_first_against_the_cases_that_ran_its_lines():
    """Ticks of 1 / TICKS_PER_S s against the cases' [start, end]: a tick inside a case names
    it; one between two cases names both; one before the first case or after the last (start-up,
    shutdown) names every case (None); so does a line every case ran."""
    per = mutation.TICKS_PER_S
    times = {"t::slow": [1.0, 3.0], "t::quick": [3.1, 3.2], "t::third": [4.0, 5.0]}

    def tick(seconds):
        return int(seconds * per)

    trace = {"model/x.py": {10: [tick(1.5)], 11: [tick(3.15)], 12: [tick(3.5)],
                            13: [tick(0.2)], 14: [tick(1.5), tick(3.15), tick(4.5)],
                            15: [tick(2.0), tick(2.5)], 16: [tick(9.0)]}}
    cases = mutation.CaseMap(times, trace)

    def at(line, end_line=0, path="model/x.py"):
        return mutation.Mutant(path, line, 0, "cmp", "==->!=", 0, 1, "x", end_line=end_line)

    assert cases.cases_of(at(10)) == ["t::slow"]
    assert cases.cases_of(at(11)) == ["t::quick"]
    assert cases.cases_of(at(12)) == ["t::quick", "t::third"]  # between them: shortest first
    assert cases.cases_of(at(15)) == ["t::slow"]
    assert cases.cases_of(at(10, end_line=11)) == ["t::quick", "t::slow"]
    assert cases.cases_of(at(13)) is None  # start-up
    assert cases.cases_of(at(16)) is None  # after the last case
    assert cases.cases_of(at(14)) is None  # every case
    assert cases.cases_of(at(10, path="model/y.py")) is None  # not traced


def test_a_mutant_in_a_module_or_class_body_runs_first_against_the_cases_reading_it(tmp_path):
    """A body statement runs at import, before any case: its mutant is narrowed by the lines
    that read what it binds (by name, in any file), and runs against the whole suite when
    none of them ran during a case or one ran at import."""
    per = mutation.TICKS_PER_S
    (tmp_path / "model").mkdir()
    (tmp_path / "model/consts.py").write_text(
        "LIMIT = 0x10\n"                                   # 1
        "TABLE = {LIMIT: 'x'}\n"                           # 2: read at import
        "UNUSED = 3\n"                                     # 3
        "\n"
        "class Message:\n"                                 # 5
        "    priority: int = 3\n"                          # 6
        "    label: str = ''\n")                           # 7
    (tmp_path / "model/user.py").write_text(
        "from model.consts import LIMIT, Message, TABLE\n"  # 1: an import, not a read
        "def check(a):\n"
        "    return a < LIMIT\n"                           # 3
        "def make():\n"
        "    return Message()\n"                           # 5
        "def label(m):\n"
        "    return TABLE[m.label]\n")                     # 7
    times = {"t::a": [1.0, 2.0], "t::b": [3.0, 4.0], "t::c": [5.0, 6.0]}

    def tick(seconds):
        return int(seconds * per)

    start = tick(0.1)
    trace = {"model/consts.py": {n: [start] for n in (1, 2, 3, 5, 6, 7)},
             "model/user.py": {3: [tick(1.5)], 5: [tick(3.5)], 7: [tick(5.5)]}}
    readers = mutation.Readers(tmp_path, ["model/consts.py", "model/user.py"])
    cases = mutation.CaseMap(times, trace, readers)

    def at(line):
        return mutation.Mutant("model/consts.py", line, 0, "const", "d", 0, 1, "x")

    # LIMIT is read by check() and, at import, by TABLE's line, which passes it on to label()
    assert cases.cases_of(at(1)) == ["t::a", "t::c"]
    assert cases.cases_of(at(2)) == ["t::c"]  # TABLE is read by label() only
    assert cases.cases_of(at(3)) is None  # nothing reads UNUSED: the whole suite
    assert cases.cases_of(at(6)) == ["t::b"]  # a field's default: where Message is made
    # (t::c reads m.label: the attribute's name; t::b makes a Message)
    assert cases.cases_of(at(7)) == ["t::b", "t::c"]
    assert mutation.CaseMap(times, trace).cases_of(at(6)) is None  # without the readers


def test_a_body_statement_nothing_reads_is_not_reached_and_gets_no_run(tmp_path):
    """A constant the pristine server bound at import and never read afterwards (by name, in
    any file, also through the pure module-level statements that pass it on) is set aside as
    not reached; one read during a case, or at import by a statement that may keep it, is
    not."""
    per = mutation.TICKS_PER_S
    (tmp_path / "model").mkdir()
    (tmp_path / "model/consts.py").write_text(
        "LIMIT = 0x10\n"                        # 1: read by check(), which ran
        "UNUSED = 3\n"                          # 2: read by nothing
        "IDLE = 4\n"                            # 3: read by idle(), which never ran
        "TABLE = {5: 'x'}\n"                    # 4: read at import only, by COPY
        "COPY = dict(TABLE)\n"                  # 5: read by nothing
        "KEPT = {6: 'y'}\n"                     # 6: read at import by a call that may keep it
        "HANDLER = register(KEPT)\n")           # 7
    (tmp_path / "model/user.py").write_text(
        "from model.consts import LIMIT, IDLE\n"
        "def check(a):\n"
        "    return a < LIMIT\n"                # 3
        "def idle():\n"
        "    return IDLE\n")                    # 5
    times = {"t::a": [1.0, 2.0], "t::b": [3.0, 4.0]}
    start = int(0.1 * per)
    trace = {"model/consts.py": {n: [start] for n in range(1, 8)},
             "model/user.py": {3: [int(1.5 * per)]}}
    cases = mutation.CaseMap(times, trace, mutation.Readers(tmp_path, sorted(trace)))

    def at(line, path="model/consts.py"):
        return mutation.Mutant(path, line, 0, "const", "d", 0, 1, "x")

    assert not cases.unread(at(1))
    assert cases.unread(at(2)) and cases.unread(at(3))
    assert cases.unread(at(4))  # COPY = dict(TABLE) passes it on, and nothing reads COPY
    assert not cases.unread(at(6))  # register() may keep it: its import-time read counts
    assert cases.cases_of(at(6)) is None  # ... and names no case: the whole suite
    assert not cases.unread(at(3, "model/user.py"))  # not a body statement
    assert not mutation.CaseMap(times, trace).unread(at(2))  # without the readers: run it
    todo = [at(1), at(2), at(3)]
    skipped, _ = mutation.set_aside(todo, {"model/consts.py": {1, 2, 3, 4, 5}}, {},
                                    unread=cases.unread)
    assert skipped == [at(2), at(3)]
    assert mutation.set_aside(todo, {"model/consts.py": {1, 2, 3}}, {}, run_unreached=True,
                              unread=cases.unread) == ([], [])


def test_the_cases_plugin_times_the_cases_and_runs_only_those_named(tmp_path):
    """bench/mutation_cases.py in a pytest process of its own: the times of every case, then a
    run of two named cases in the order named (the rest deselected), and a name no case has
    refused (a selection that cannot be trusted must not look like a pass)."""
    import os
    import subprocess

    (tmp_path / "test_three.py").write_text(
        "import time\n\n"
        "def test_a():\n    time.sleep(0.05)\n\n"
        "def test_b():\n    pass\n\n"
        "def test_c():\n    pass\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "bench"))
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
            "mutation_cases", "test_three.py"]
    times = tmp_path / "times.json"
    out = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env=dict(env, MQC_MUTATION_TIMES=str(times)))
    assert out.returncode == 0, out.stdout + out.stderr
    spans = json.loads(times.read_text())
    assert sorted(spans) == ["test_three.py::test_a", "test_three.py::test_b",
                             "test_three.py::test_c"]
    a, b = spans["test_three.py::test_a"], spans["test_three.py::test_b"]
    assert a[1] - a[0] >= 0.05 and a[1] <= b[0] <= b[1]
    chosen = tmp_path / "cases.json"
    chosen.write_text(json.dumps(["test_three.py::test_c", "test_three.py::test_a"]))
    out = subprocess.run([*argv, "-vv"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, env=dict(env, MQC_MUTATION_CASES=str(chosen)))
    assert out.returncode == 0, out.stdout + out.stderr
    ran = [line.split()[0] for line in out.stdout.splitlines() if " PASSED" in line]
    assert ran == ["test_three.py::test_c", "test_three.py::test_a"]
    assert "1 deselected" in out.stdout
    chosen.write_text(json.dumps(["test_three.py::test_gone"]))
    out = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env=dict(env, MQC_MUTATION_CASES=str(chosen)))
    assert out.returncode != 0 and "not collected" in out.stdout + out.stderr


FEATURE = """Feature: prints
  Background:
    Given a value of 1
{above}
  Scenario: unchanged
    Given a value of {unchanged}
    Then the value is {unchanged}

  Scenario Outline: rows
    Given a value of <v>
    Then the value is <v>

    Examples:
      | v   |
      | 3   |
      | {row} |
"""

STEPS = """from pytest_bdd import given, parsers, scenarios, then

scenarios("prints.feature")


@given(parsers.parse("a value of {n:d}"), target_fixture="value")
def a_value(n):
    return n


@then(parsers.parse("the value is {n:d}"))
def the_value_is(value, n):
    assert value == n
"""


def test_the_cases_plugin_fingerprints_what_each_case_runs(tmp_path):
    """MQC_MUTATION_PRINTS: a scenario that only moved in its file (a scenario added above it)
    keeps its fingerprint, as does an outline's unchanged row; a changed step or row does
    not, nor does a changed Background (every case of the file runs it)."""
    import os
    import subprocess

    (tmp_path / "test_prints.py").write_text(STEPS)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "bench"))
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
            "mutation_cases", "test_prints.py"]

    def prints(above: str = "", unchanged: int = 2, row: int = 4, background: int = 1) -> dict:
        text = FEATURE.format(above=above, unchanged=unchanged, row=row)
        if background != 1:
            text = text.replace("Given a value of 1", f"Given a value of {background}")
        (tmp_path / "prints.feature").write_text(text)
        out = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120,
                             env=dict(env, MQC_MUTATION_PRINTS=str(tmp_path / "p.json")))
        assert out.returncode == 0, out.stdout + out.stderr
        return json.loads((tmp_path / "p.json").read_text())

    first = prints()
    assert len(first) == 3 and len(set(first.values())) == 3
    moved = prints(above="\n  Scenario: added\n    Given a value of 9\n    Then the value is 9\n")
    assert len(moved) == 4
    assert {k: moved[k] for k in first} == first
    changed = prints(unchanged=2, row=5)
    [unchanged] = [k for k in first if "unchanged" in k]
    assert changed[unchanged] == first[unchanged]
    assert set(changed.items()) - set(first.items())  # the changed row is another case
    assert len(set(changed.items()) & set(first.items())) == 2  # the other row stays
    restated = prints(unchanged=3)
    assert restated[unchanged] != first[unchanged]
    other = prints(background=7)
    assert not set(other.values()) & set(first.values())


def test_a_survivor_stands_where_only_scenarios_none_of_its_cases_are_changed():
    """carried_survivors: a survivor of a snapshot of the same frame stands when the cases it
    faced have the same fingerprints now; one whose cases changed, one of another frame, a
    kill (carried elsewhere) and a survivor without a run do not."""
    from types import SimpleNamespace

    prints_then = {"a": "1", "b": "2", "c": "3"}
    prints_now = {"a": "1", "b": "2*", "c": "3", "d": "4"}
    faced = {"m1": ["a", "c"], "m2": ["a", "b"], "m3": None, "m4": ["a"], "m5": ["a"]}
    rows = [{"id": "m1", "verdict": "survived", "reason": "r1", "seconds": 3.0,
             "cases_digest": mutation.cases_digest(faced["m1"], prints_then)},
            {"id": "m2", "verdict": "survived", "reason": "r2", "seconds": 3.0,
             "cases_digest": mutation.cases_digest(faced["m2"], prints_then)},
            {"id": "m3", "verdict": "survived", "reason": "r3", "seconds": 9.0,
             "cases_digest": mutation.cases_digest(None, prints_then)},
            {"id": "m4", "verdict": "killed", "reason": "k", "seconds": 1.0},
            {"id": "m5", "verdict": "survived", "reason": "u", "seconds": 0.0, "not_run": True,
             "cases_digest": mutation.cases_digest(faced["m5"], prints_then)}]
    old = {"snapshot": "commit aaa", "frame_digest": "F", "mutants": rows}
    todo = [SimpleNamespace(id=i) for i in faced]

    def digest_of(m):
        return mutation.cases_digest(faced[m.id], prints_now)

    kept = mutation.carried_survivors(todo, [old], "F", digest_of)
    assert set(kept) == {"m1"}  # m2 faces a changed case, m3 a new one
    assert kept["m1"]["carried_from"] == "commit aaa" and kept["m1"]["reason"] == "r1"
    assert mutation.carried_survivors(todo, [old], "G", digest_of) == {}
    assert mutation.carried_survivors(todo, [old], "F", lambda m: None) == {}


def test_unreached_in_takes_the_plain_runs_never_reached_survivors(tmp_path):
    """--unreached-in: the mutants a plain run could not reach and nobody judged, for an --auth
    run; a file that holds no results is refused in one line."""
    rows = [{"id": "a", "verdict": "survived", "unreached": True},
            {"id": "b", "verdict": "survived", "unreached": True, "equivalent": "why"},
            {"id": "c", "verdict": "survived"},
            {"id": "d", "verdict": "killed"}]
    path = tmp_path / "plain.json"
    path.write_text(json.dumps({"mutants": rows}))
    assert mutation.unreached_ids(path) == {"a"}
    path.write_text("[1, 2]")
    with pytest.raises(SystemExit, match="not a results file"):
        mutation.unreached_ids(path)
    with pytest.raises(SystemExit, match="not a results file"):
        mutation.unreached_ids(tmp_path / "missing.json")


def test_results_of_two_configurations_merge_into_the_strongest_verdict_per_mutant(tmp_path):
    """A plain run and an --auth run of one snapshot: a mutant killed in either is killed;
    one survived in both is "never reached" only if neither run reached it."""
    def row(mid, verdict, unreached=False):
        return {"id": mid, "file": "server/x.py", "section": "S", "verdict": verdict,
                "reason": "", "seconds": 1.0, **({"unreached": True} if unreached else {})}

    plain = {"snapshot": "commit c", "digest": "abc", "configuration": "plain", "mutants": [
        row("server/x.py:f:if:1:if->True", "survived", unreached=True),
        row("server/x.py:f:if:2:if->True", "survived", unreached=True),
        row("server/x.py:f:if:3:if->True", "killed"),
        row("server/x.py:f:if:4:if->True", "error")]}
    auth = {"snapshot": "commit c", "digest": "abc+authenticated",
            "configuration": "authenticated", "mutants": [
                row("server/x.py:f:if:1:if->True", "killed"),
                row("server/x.py:f:if:2:if->True", "survived"),
                row("server/x.py:f:if:3:if->True", "survived"),
                row("server/x.py:f:if:4:if->True", "survived")]}
    doc = mutation.merge_results([plain, auth])
    verdicts = {r["id"].split(":")[3]: (r["verdict"], bool(r.get("unreached")),
                                         r["configuration"]) for r in doc["mutants"]}
    assert verdicts == {"1": ("killed", False, "authenticated"),
                        "2": ("survived", False, "authenticated"),
                        "3": ("killed", False, "plain"),
                        "4": ("survived", False, "authenticated")}
    s = doc["summary"]
    assert (s["total"], s["killed"], s["survived"]) == (4, 2, 2)
    assert doc["configuration"] == "authenticated+plain"
    with pytest.raises(ValueError, match="different snapshots"):
        mutation.merge_results([plain, {**auth, "digest": "def+authenticated"}])
    (tmp_path / "a.json").write_text(json.dumps(plain))
    (tmp_path / "b.json").write_text(json.dumps(auth))
    out = tmp_path / "m.json"
    assert mutation.main(["--merge", str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                          "--out", str(out)]) == 1  # 50 %: the goal is not met
    assert json.loads(out.read_text())["summary"]["killed"] == 2
    assert out.with_suffix(".md").read_text().startswith("# Mutation self-check")


def test_a_run_stops_at_the_first_case_left_unsettled_that_the_pristine_run_settles():
    """A module constant that makes the server refuse every queue the suite provisions (the
    control API's POST /queues fails) leaves each case inconclusive: the run stops after the
    first such case, as ``-x`` stops after a failure, and that case alone kills the mutant."""
    verdict, _ = _run_one("model/packet.py", "model/packet.py:<module>:const:88:0x0->0x1",
                          ["MS-MQRR/2.2.6"], pristine=True)  # trace: ignore
    assert verdict.verdict == "killed", verdict
    assert verdict.reason.startswith("1 cases inconclusive that the pristine run settles"), \
        verdict
