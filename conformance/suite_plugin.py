"""The suite's hooks and its ``mq`` fixture, registered by conformance/plugin.py when pytest
is given ``--mq-target`` (never otherwise: the plugin is inert in a user's own test runs).

Cases are tests marked ``@pytest.mark.req(...)`` that use the ``mq`` fixture
(conformance.session.Case); each carries, besides, one marker per requirement ID it covers and
per section and document above it (selection_marks), so ``-m`` with a section number selects
that section the pytest way. Each case's verdict
replaces pytest's outcome: a failure is a pytest failure only when it is unexpected; an
expected failure shows as xfailed; inconclusive and not-applicable cases show as skipped with
the reason. ``--mq-report-dir`` gets results.json (the source of truth), junit.xml (requirement
IDs as properties), index.html (conformance/report.py) and, for a target over RPC, wire.pcap:
every exchange of the run, recorded by captures.recorder; each call record in results.json
names its frames there. The model target has no wire, so no wire.pcap (results.json's
``wire`` says so).
"""

from __future__ import annotations

import json
import os
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from mqconform.captures.recorder import Recorder
from mqconform.conformance import targets
from mqconform.conformance import verdicts as v
from mqconform.conformance.report import write_index
from mqconform.conformance.session import Case, CaseFailed, NotApplicable, Suite
from mqconform.conformance.sut import Inconclusive
from mqconform.conformance.targetfile import TargetFileError
from mqconform.conformance.targetfile import load as load_target
from mqconform.conformance.targets import TargetError
from mqconform.spec.catalog import ID_PATTERN, load
from mqconform.spec.trace import repo_root

STATE = pytest.StashKey[dict]()
COVERED_DOCS = ("MS-MQRR", "MS-MQMR")


def check_select(prefixes: list[str], catalog: Any) -> None:
    """An unknown requirement-ID prefix is a usage error."""
    ids = [r.id for r in catalog]
    for p in prefixes:
        if not any(i == p or i.startswith(p.rstrip("/") + "/") or i.startswith(p + ".")
                   for i in ids):
            raise pytest.UsageError(f"--select {p}: no requirement ID starts with it")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "req(*ids): the requirement IDs a case checks")
    report_dir = config.getoption("--mq-report-dir")
    if report_dir and not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        # Hypothesis keeps caches (its Unicode tables) in .hypothesis/ of the working
        # directory: with a report directory, there, not in the user's tree
        from hypothesis.configuration import set_hypothesis_home_dir

        set_hypothesis_home_dir(str(Path(report_dir) / ".hypothesis"))
    catalog = load()
    check_select(config.getoption("--mq-select"), catalog)
    target = config.getoption("--mq-target")
    spec = None
    if target is not None:
        try:
            spec = load_target(target, catalog)
        except TargetFileError as exc:
            raise pytest.UsageError(str(exc)) from None
    config.stash[STATE] = {"catalog": catalog, "spec": spec, "suite": None, "results": [],
                           "started": time.time(), "recorder": None, "written": []}


def _ids(item: pytest.Item) -> tuple[str, ...]:
    return tuple(i for m in item.iter_markers("req") for i in m.args)


def case_id(item: pytest.Item) -> str:
    """A case's name in the reports: its path in the tree the suite is installed in
    (``conformance/cases/test_features.py::test_...``), the same from a checkout, from an
    installed wheel and whatever pytest's rootdir is; other tests keep their node ID."""
    try:
        path = Path(item.path).resolve().relative_to(repo_root()).as_posix()
    except ValueError:
        return item.nodeid
    _, sep, rest = item.nodeid.partition("::")
    return path + sep + rest


def selection_marks(rid: str) -> list[str]:
    """The marker names a requirement ID gives its cases: the ID, then each section above it
    (its number after the document's name and a slash), then the document's name."""
    doc, section, _ = rid.split("/")
    parts = section.split(".")
    return [rid] + [f"{doc}/{'.'.join(parts[:n])}" for n in range(len(parts), 0, -1)] + [doc]


def _matches(ids: tuple[str, ...], prefixes: list[str]) -> bool:
    return any(i == p or i.startswith(p.rstrip("/") + "/") or i.startswith(p + ".")
               for i in ids for p in prefixes)


@pytest.hookimpl(tryfirst=True)
def pytest_bdd_apply_tag(tag: str, function):
    """A Gherkin tag that is a requirement ID (``@MS-MQRR/3.1.4.7/R50``) becomes a
    ``req`` marker, so scenarios are selected, reported and traced like every other case."""
    if ID_PATTERN.match(tag):
        pytest.mark.req(tag)(function)
        return True
    return None


@pytest.hookimpl(tryfirst=True)  # before -m and -k deselect
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from _pytest.mark.structures import Mark, MarkDecorator

    for item in items:
        names = {n for rid in _ids(item) for n in selection_marks(rid)}
        for name in sorted(names):
            item.add_marker(MarkDecorator(Mark(name, (), {}, _ispytest=True), _ispytest=True))
    # the stateful machines (conformance/cases/test_stateful.py) first: every case leaves its
    # queues behind, and each open of a queue costs more on a queue manager holding hundreds
    items.sort(key=lambda item: item.path.name != "test_stateful.py")
    prefixes = config.getoption("--mq-select")
    if not prefixes:
        return
    keep, drop = [], []
    for item in items:
        (keep if _matches(_ids(item), prefixes) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _suite(config: pytest.Config) -> Suite:
    state = config.stash[STATE]
    if state["suite"] is None:
        spec = state["spec"] or load_target("model", state["catalog"])
        if spec.endpoint != "model":
            _start_recording(state)
        try:
            state["suite"] = Suite(spec, strict=config.getoption("--mq-strict"),
                                   catalog=state["catalog"])
        except TargetError as exc:
            _stop_recording()
            pytest.exit(f"error: {exc}", returncode=2)
    return state["suite"]


def _start_recording(state: dict) -> None:
    """Every RpcTarget of the run records into one recorder; every call record claims the
    frames of its call (verdicts.wire_frames)."""
    recorder = Recorder()
    state["recorder"] = recorder
    targets.RECORDER = recorder
    v.wire_frames = recorder.claim


def _stop_recording() -> None:
    targets.RECORDER = None
    v.wire_frames = None


def pytest_sessionstart(session: pytest.Session) -> None:
    if session.config.stash[STATE]["spec"] is not None:
        _suite(session.config)  # an unreachable endpoint stops the run before any case


@pytest.fixture
def mq(request: pytest.FixtureRequest):
    suite = _suite(request.config)
    recorder = request.config.stash[STATE]["recorder"]
    request.node.stash[FIRST_FRAME] = recorder.frame_count + 1 if recorder else 0
    if recorder is not None:
        recorder.claim()  # nothing from before the case
    case = Case(suite, case_id(request.node), _ids(request.node))
    request.node.stash[CASE] = case
    case.step = request.node.stash.get(STEP, None)
    if case.record.ids and all(i.split("/")[0] == "MS-MQMR" for i in case.record.ids):
        case.require("qmmgmt")  # a case of the qmmgmt interface as a whole
    yield case


CASE = pytest.StashKey[Case]()
STEP = pytest.StashKey[dict]()
FIRST_FRAME = pytest.StashKey[int]()
SOURCE = pytest.StashKey[dict]()


def pytest_bdd_before_scenario(request: pytest.FixtureRequest, feature: Any, scenario: Any
                               ) -> None:
    request.node.stash[SOURCE] = {"path": _relative(feature.filename),
                                  "line": scenario.line_number,
                                  "name": f"Scenario: {scenario.name}"}


def pytest_bdd_before_step(request: pytest.FixtureRequest, feature: Any, scenario: Any,
                           step: Any, step_func: Any) -> None:
    """The step running, for the checks it makes (a failure names its step)."""
    where = {"path": _relative(feature.filename), "line": step.line_number,
             "text": f"{step.keyword} {step.name}"}
    request.node.stash[STEP] = where  # the first step runs before its case exists
    case = request.node.stash.get(CASE, None)
    if case is not None:
        case.step = where


def _relative(path: Any) -> str:
    p = Path(path).resolve()
    try:
        return p.relative_to(repo_root()).as_posix()
    except ValueError:
        return p.as_posix()


def _source(item: pytest.Item) -> dict:
    found = item.stash.get(SOURCE, None)
    if found is not None:
        return found
    return {"path": _relative(item.path), "line": (item.location[1] or 0) + 1,
            "name": item.name}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    case = item.stash.get(CASE, None)
    if case is None and report.failed and report.when in ("call", "setup") and _ids(item):
        _record_broken(item, call)  # failed before its mq fixture existed: still a result
        return
    if case is None or report.when not in ("call", "setup"):
        return
    if report.when == "setup" and report.passed:
        return
    if report.when == "setup" and not report.failed:
        return
    exc = call.excinfo.value if call.excinfo is not None else None
    if isinstance(exc, Inconclusive):
        result = case.finish(inconclusive=str(exc))
    elif isinstance(exc, NotApplicable):
        result = case.finish(not_applicable=str(exc))
    elif exc is None or isinstance(exc, CaseFailed):
        result = case.finish()
    else:
        result = case.finish(error=f"{type(exc).__name__}: {exc}")
    result.source = _source(item)
    recorder = item.config.stash[STATE]["recorder"]
    first = item.stash.get(FIRST_FRAME, 0)
    if recorder is not None and first and recorder.frame_count >= first:
        result.frames = {"first": first, "last": recorder.frame_count}
    item.config.stash[STATE]["results"].append(result)
    if result.verdict in (v.INCONCLUSIVE, v.NOT_APPLICABLE):
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0,
                           f"{result.verdict}: {result.messages[-1]}")
    elif result.verdict == v.FAIL and not result.unexpected:
        report.outcome = "skipped"
        if result.expected_failure:
            report.wasxfail = result.expected_failure
        else:
            report.longrepr = (str(item.path), item.location[1] or 0,
                               "warning (SHOULD): " + "; ".join(result.warnings))
    elif result.verdict == v.FAIL:
        report.outcome = "failed"
        if exc is None or isinstance(exc, CaseFailed):
            report.longrepr = "\n".join(result.messages + ["calls:"] + [
                f"  {r.call}\n    -> {r.observed.splitlines()[0]} {r.observed.splitlines()[1]}"
                for r in result.calls])


def _record_broken(item: pytest.Item, call: pytest.CallInfo) -> None:
    """A case that failed before it had an ``mq`` fixture (a missing step definition, a
    broken fixture) is an unexpected failure in results.json too, not a silent gap."""
    state = item.config.stash[STATE]
    spec = state["suite"].spec if state["suite"] else state["spec"]
    exc = call.excinfo.value if call.excinfo is not None else None
    text = " ".join(f"{type(exc).__name__}: {exc}".split()) if exc else "failed"
    result = v.CaseResult(case=case_id(item), ids=_ids(item),
                          target=spec.name if spec else "model", verdict=v.FAIL,
                          messages=[f"the case could not run: {text}"], unexpected=True,
                          source=_source(item))
    state["results"].append(result)


def coverage(catalog: Any, results: list[v.CaseResult]) -> dict[str, dict]:
    passing = {i for r in results if r.verdict == v.PASS for i in r.ids}
    out = {}
    for doc in COVERED_DOCS:
        wire = [r.id for r in catalog if r.doc == doc and r.testability == "wire"
                and not r.retired]
        covered = sum(1 for i in wire if i in passing)
        out[doc] = {"wire": len(wire), "covered_by_passing_case": covered,
                    "percent": round(100 * covered / len(wire), 2) if wire else 0.0}
    return out


def _failure_text(failure: dict) -> str:
    """One failed check for a person reading a CI log: step, requirement, expected, observed."""
    step = failure.get("step") or {}
    lines = ["", f"step: {step.get('path', '?')}:{step.get('line', '?')} "
                 f"{step.get('text', '')}".rstrip()]
    for r in failure["requirements"]:
        lines.append(f"requirement: {r['id']}" + (f" - {r['text']}" if r.get("text") else ""))
    lines += [f"expected: {failure.get('expected') or '(the requirement above)'}",
              f"observed: {failure.get('observed')}"]
    return "\n".join(lines)


def write_reports(directory: Path, state: dict, config: pytest.Config) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    results: list[v.CaseResult] = state["results"]
    suite = state["suite"]
    spec = suite.spec if suite else state["spec"]
    doc = {
        "target": {"name": spec.name if spec else None,
                   "endpoint": spec.endpoint if spec else None,
                   "ndr64": spec.ndr64 if spec else None,
                   "capabilities": spec.capabilities if spec else {}},
        "started": state["started"], "finished": time.time(),
        "strict": config.getoption("--mq-strict"), "select": config.getoption("--mq-select"),
        "summary": v.summarize(results),
        "coverage": coverage(state["catalog"], results),
        "wire": _wire(directory, state, spec),
        "cases": [r.as_dict() for r in results],
        "requirements": v.by_requirement(results),
    }
    out = directory / "results.json"
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    junit = directory / "junit.xml"
    summary = doc["summary"]
    suite_el = ET.Element("testsuite", name="mqconform", tests=str(len(results)),
                          failures=str(summary["unexpected_failures"]),
                          skipped=str(summary["inconclusive"] + summary["not-applicable"]))
    for r in results:
        case_el = ET.SubElement(suite_el, "testcase", name=r.case, time=f"{r.duration:.3f}")
        props = ET.SubElement(case_el, "properties")
        for rid in r.ids:
            ET.SubElement(props, "property", name="requirement", value=rid)
        ET.SubElement(props, "property", name="verdict", value=r.verdict)
        ET.SubElement(props, "property", name="target", value=r.target)
        if r.verdict == v.FAIL and r.unexpected:
            ET.SubElement(case_el, "failure", message=r.messages[0][:200]).text = \
                "\n".join([*r.messages, *(_failure_text(f) for f in r.failures)])
        elif r.verdict in (v.INCONCLUSIVE, v.NOT_APPLICABLE) or r.verdict == v.FAIL:
            ET.SubElement(case_el, "skipped", message=f"{r.verdict}: "
                          + (r.expected_failure or "; ".join(r.messages))[:200])
    ET.ElementTree(suite_el).write(junit, encoding="utf-8", xml_declaration=True)
    written = [out, junit]
    if doc["wire"]["pcap"]:
        written.append(directory / doc["wire"]["pcap"])

    written.append(write_index(directory, doc, state["catalog"]))
    return written


def _wire(directory: Path, state: dict, spec: Any) -> dict:
    """wire.pcap of the run (written here), or why there is none."""
    recorder = state["recorder"]
    stale = directory / "wire.pcap"
    if recorder is None:
        stale.unlink(missing_ok=True)  # not this run's
        why = ("the model target runs in process: there is no wire, so no wire.pcap"
               if spec is None or spec.endpoint == "model" else "no call reached the target")
        return {"pcap": None, "frames": 0, "connections": 0, "calls": 0, "note": why}
    recorder.close()
    frames = recorder.write(stale)
    return {"pcap": stale.name, "frames": frames, "connections": recorder.connection_count,
            "calls": recorder.calls,
            "note": "recorded from the client's sockets; Ethernet/IP/TCP headers synthesized "
                    "around the octets exchanged (captures/recorder.py)"}


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = session.config.stash.get(STATE, None)
    if state is None:
        return
    if state["suite"] is not None:
        state["suite"].close()  # first: the recording ends with every connection's FIN
    try:
        report_dir = session.config.getoption("--mq-report-dir")
        if report_dir:
            state["written"] = write_reports(Path(report_dir), state, session.config)
    finally:
        if state["recorder"] is not None:
            _stop_recording()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config
                            ) -> None:
    state = config.stash.get(STATE, None)
    if not state or not state["results"]:
        return
    s = v.summarize(state["results"])
    cov = coverage(state["catalog"], state["results"])
    terminalreporter.write_sep("-", "mqconform verdicts")
    terminalreporter.write_line(
        f"{s['pass']} pass, {s['fail']} fail ({s['unexpected_failures']} unexpected, "
        f"{s['expected_failures']} expected), {s['inconclusive']} inconclusive, "
        f"{s['not-applicable']} not applicable; {s['expected_failures_passed']} expected "
        f"failure(s) passed; {s['warnings']} warning(s)")
    terminalreporter.write_line("wire coverage: " + ", ".join(
        f"{d} {c['covered_by_passing_case']}/{c['wire']} ({c['percent']} %)"
        for d, c in cov.items()))
    for path in state["written"]:
        if path.name == "index.html":
            terminalreporter.write_line(f"report: {path.resolve()}")
        elif path.suffix == ".pcap":
            terminalreporter.write_line(f"wire: {path.resolve()} "
                                        f"({state['recorder'].frame_count} frames)")
