"""junit.xml as CI tools read it: valid against the JUnit schema Jenkins' xunit plugin checks
(tests/conformance/junit.xsd), one testsuite per document section, classname MS-MQRR.3.1.4.7,
the scenario title as the name, the whole failure in the failure body, and each verdict mapped
as conformance/junit.py documents; read back with junitparser."""

from __future__ import annotations

import json
import re
from pathlib import Path

import junitparser
import pytest
import xmlschema

from mqconform.conformance import junit
from mqconform.conformance import verdicts as v
from mqconform.spec.catalog import load as load_catalog

SCHEMA = xmlschema.XMLSchema(str(Path(__file__).with_name("junit.xsd")))
FEATURE = {"path": "features/MS-MQRR/3.1.4.7.feature", "line": 12,
           "name": "Scenario Outline: An invalid combination is refused"}


def _case(name: str, verdict: str, **kw) -> v.CaseResult:
    return v.CaseResult(case=f"conformance/cases/test_features.py::test_x[{name}]",
                        ids=("MS-MQRR/3.1.4.7/R50", "MS-MQRR/3.1.4.7/R6"), target="t",
                        verdict=verdict, source=FEATURE, duration=0.25,
                        frames={"first": 10, "last": 14}, **kw)


FAILURE = {"step": {"path": "features/MS-MQRR/3.1.4.7.feature", "line": 15,
                    "text": "Then the call returns MQ_ERROR_INVALID_PARAMETER"},
           "requirements": [{"id": "MS-MQRR/3.1.4.7/R6", "text": "the sentence"}],
           "expected": "0xC00E0006 MQ_ERROR_INVALID_PARAMETER or any failure",
           "observed": "status: 0x00000000 MQ_OK", "message": "R_StartReceive: status"}

RESULTS = [
    _case("pass", v.PASS),
    _case("fail", v.FAIL, unexpected=True, messages=["R_StartReceive: status MQ_OK"],
          failures=[FAILURE]),
    _case("expected", v.FAIL, expected_failure="known deviation", messages=["x"],
          failures=[FAILURE]),
    _case("warning", v.FAIL, warnings=["a SHOULD"], messages=["y"], failures=[FAILURE]),
    _case("inconclusive", v.INCONCLUSIVE, messages=["cannot create queue"]),
    _case("na", v.NOT_APPLICABLE, messages=["the target declares no move"]),
    _case("error", v.ERROR, messages=["internal error of mqconform: TypeError: x "
                                      "(traceback: errors/x.txt)"]),
    _case("notrun", v.NOT_RUN, messages=["not run: the run was interrupted"]),
]


def _kinds(path: Path) -> dict[tuple[str, str], str]:
    """(classname, name) of each testcase -> the JUnit result junitparser sees."""
    out = {}
    for suite in junitparser.JUnitXml.fromfile(str(path)):
        for case in suite:
            kinds = [type(r).__name__ for r in case.result] or ["Pass"]
            assert (case.classname, case.name) not in out, case.name
            out[(case.classname, case.name)] = kinds[0]
    return out


@pytest.mark.parametrize("allow", [False, True])
def test_each_verdict_maps_as_documented(tmp_path, allow):
    path = junit.write(tmp_path / "junit.xml", {"target": {"name": "t"}, "incomplete": [],
                                                 "exit": {"code": 1}},
                       RESULTS, load_catalog(), allow_inconclusive=allow)
    SCHEMA.validate(str(path))
    found = _kinds(path)
    assert {classname for classname, _ in found} == {"MS-MQRR.3.1.4.7"}
    kinds = {name.split("[", 1)[1].split("]", 1)[0]: kind for (_, name), kind in found.items()}
    assert kinds == {
        "pass": "Pass", "fail": "Failure", "expected": "Skipped", "warning": "Skipped",
        "inconclusive": "Skipped" if allow else "Error", "na": "Skipped", "error": "Error",
        "notrun": "Skipped"}
    xml = path.read_text()
    # the name is the scenario title with its example values (the same whatever the
    # verdict); the failed IDs lead the failure message
    assert 'name="An invalid combination is refused [fail]"' in xml
    assert 'message="MS-MQRR/3.1.4.7/R6: R_StartReceive: status MQ_OK"' in xml
    # the whole failure in the body: step, requirement and its sentence, expected, observed,
    # frames
    for text in ("step: features/MS-MQRR/3.1.4.7.feature:15 Then the call returns",
                 "requirement: MS-MQRR/3.1.4.7/R6 - the sentence",
                 "expected: 0xC00E0006 MQ_ERROR_INVALID_PARAMETER or any failure",
                 "observed: status: 0x00000000 MQ_OK", "frames 10-14 of wire.pcap"):
        assert text in xml
    suites = list(junitparser.JUnitXml.fromfile(str(path)))
    assert [s.name for s in suites] == ["MS-MQRR 3.1.4.7 R_StartReceive (Opnum 7)"]


def test_an_incomplete_run_says_so_in_a_suite_of_its_own(tmp_path):
    path = junit.write(tmp_path / "junit.xml", {
        "target": {"name": "t"}, "incomplete": ["interrupted"], "exit": {"code": 3}},
        RESULTS[:1], load_catalog())
    SCHEMA.validate(str(path))
    assert "incomplete (exit 3): interrupted" in path.read_text()


def test_ids_sort_naturally():
    ids = ["MS-MQRR/3.1.4.10/R2", "MS-MQRR/3.1.4.9/R10", "MS-MQRR/3.1.4.9/R9"]
    assert sorted(ids, key=junit.id_key) == ["MS-MQRR/3.1.4.9/R9", "MS-MQRR/3.1.4.9/R10",
                                             "MS-MQRR/3.1.4.10/R2"]


def test_a_full_runs_junit_validates_and_reads_back_case_for_case(full_run):
    path = full_run / "junit.xml"
    SCHEMA.validate(str(path))
    results = json.loads((full_run / "results.json").read_text())
    kinds = _kinds(path)
    assert len(kinds) == len(results["cases"]) >= 446
    for classname, name in kinds:
        assert classname == "stateful" or classname.startswith(("MS-MQRR.", "MS-MQMR.",
                                                                "MS-MQDMPR."))
        assert not name.startswith("test_") and ".py::" not in name
    expected = {"pass": "Pass", "not-applicable": "Skipped"}
    seen = sorted(kinds.values())
    assert seen == sorted(expected[c["verdict"]] for c in results["cases"])
    suites = list(junitparser.JUnitXml.fromfile(str(path)))
    assert len(suites) >= 30 and all(s.tests == len(list(s)) for s in suites)


#: time fields: when the run started and ended, how long each case took, and the arrival time
#: the server stamps on each message (pdwArriveTime, seconds since 1970)
TIMES = {"started", "finished", "duration", "time"}
ARRIVE = re.compile(r"pdwArriveTime: \d+ \(0x[0-9a-f]+\)")


def _concurrent(results: dict) -> set[tuple[str, int]]:
    """(case, call index) of the calls pending at the same time as another call of their case:
    which of two concurrent answers reaches the wire first is a matter of timing."""
    out = set()
    for case in results["cases"]:
        spans = [(c["frames"]["first"], c["frames"]["last"]) if c.get("frames") else None
                 for c in case["calls"]]
        for i, f in enumerate(spans):
            if f and sum(1 for g in spans if g and g[0] <= f[1] and f[0] <= g[1]) > 1:
                out.add((case["case"], i))
    return out


def _timeless(results: dict, concurrent: set[tuple[str, int]]) -> dict:
    """results.json without its time fields; the frame numbers of concurrent calls (in either
    run) count as times too."""
    doc = {k: val for k, val in results.items() if k not in TIMES}
    for case in doc["cases"]:
        case.pop("duration")
        for i, call in enumerate(case["calls"]):
            call["observed"] = ARRIVE.sub("pdwArriveTime: <time>", call["observed"] or "")
            if (case["case"], i) in concurrent:
                call["frames"] = "<concurrent>"
    return doc


def test_two_runs_differ_only_in_time_fields(two_runs):
    a, b = (json.loads((d / "results.json").read_text()) for d in two_runs)
    concurrent = _concurrent(a) | _concurrent(b)
    assert _timeless(a, concurrent) == _timeless(b, concurrent)
    # junit.xml too: the same file but for its time attributes
    strip = re.compile(r' time="[\d.]+"')
    ja, jb = (strip.sub("", (d / "junit.xml").read_text()) for d in two_runs)
    assert ja == jb
