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
import re
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from mqconform.captures.recorder import Recorder
from mqconform.conformance import interrupts, targets
from mqconform.conformance import junit as junit_xml
from mqconform.conformance import verdicts as v
from mqconform.conformance.client import DecodeError, RpcError
from mqconform.conformance.report import write_index
from mqconform.conformance.session import Case, CaseFailed, NotApplicable, Suite
from mqconform.conformance.sut import Inconclusive
from mqconform.conformance.targetfile import TargetFileError
from mqconform.conformance.targetfile import load as load_target
from mqconform.conformance.targets import TargetError
from mqconform.spec.catalog import ID_PATTERN, load, natural_key
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


def memoize_step_lookup() -> None:
    """Find each step's definitions once per step text and scenario module.

    pytest-bdd (pytest_bdd.scenario.find_fixturedefs_for_step) looks a step up by asking pytest,
    for every fixture name of the session, which definitions the case sees, and matching each
    step definition's parser against the step: a few milliseconds a step, a quarter of the CPU of
    a run (`python -m cProfile -m mqconform.cli run`). The answer depends only on the step's
    keyword and text and on where the case sits (which modules and conftests it sees): the
    definitions are registered at import, before the first case runs. So it is kept, per
    fixture manager (a session), by (keyword, text, the case's parent node), and the same
    definitions come back in the same order."""
    import importlib
    import weakref

    # the package's name `scenario` is its decorator; the module is reached by its full name
    bdd_scenario = importlib.import_module("pytest_bdd.scenario")
    find = bdd_scenario.find_fixturedefs_for_step
    if getattr(find, "memoized", False):
        return
    sessions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def find_memoized(step: Any, fixturemanager: Any, node: Any):
        found = sessions.setdefault(fixturemanager, {})
        parent = node.parent.nodeid if node.parent is not None else node.nodeid
        key = (step.type, step.name, parent)
        if key not in found:
            found[key] = tuple(find(step, fixturemanager, node))
        return iter(found[key])

    find_memoized.memoized = True  # type: ignore[attr-defined]
    find_memoized.__wrapped__ = find  # type: ignore[attr-defined]
    bdd_scenario.find_fixturedefs_for_step = find_memoized


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "req(*ids): the requirement IDs a case checks")
    memoize_step_lookup()
    report_dir = config.getoption("--mq-report-dir")
    if report_dir:
        clear_report_dir(Path(report_dir))
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
    _INTERRUPTED.clear()  # nothing of an earlier session in this process
    _INTERNAL.clear()
    config.stash[STATE] = {"catalog": catalog, "spec": spec, "suite": None, "results": [],
                           "started": time.time(), "recorder": None, "written": [],
                           "planned": [], "interrupted": False, "unreachable": None,
                           "internal": [], "signals": {}}


#: what a run writes in its report directory: removed when a run starts, so that nothing of an
#: earlier run (its stateful/ scripts, its errors/) stands beside this one's reports
ARTEFACTS = ("results.json", "junit.xml", "index.html", "index-details.js", "wire.pcap",
             "wire.expected.json", "stateful", "errors")


def clear_report_dir(directory: Path) -> None:
    import shutil

    for name in ARTEFACTS:
        path = directory / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        elif path.exists() or path.is_symlink():
            path.unlink(missing_ok=True)


def _ids(item: pytest.Item) -> tuple[str, ...]:
    """The requirement IDs a case carries, in their natural order (the same in every run)."""
    return tuple(sorted({i for m in item.iter_markers("req") for i in m.args},
                        key=natural_key))


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


def pytest_collection_finish(session: pytest.Session) -> None:
    """The cases the run is to run, after every selection: those it ends without are listed
    as not run."""
    state = session.config.stash.get(STATE, None)
    if state is not None:
        state["planned"] = [(case_id(item), _ids(item), item) for item in session.items]


def pytest_keyboard_interrupt(excinfo: Any) -> None:
    _INTERRUPTED.set()


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A file of cases that does not import is mqconform's failure (exit 4), not an
    interruption."""
    if report.failed:
        _INTERNAL.append(f"collecting {report.nodeid}: "
                         + " ".join(str(report.longrepr).split())[:300])


def pytest_internalerror(excrepr: Any, excinfo: Any) -> None:
    """pytest's own failure is mqconform's internal error, unless a Ctrl-C caused it (pytest
    interrupted while it formats a traceback fails there): that run was interrupted."""
    exc, seen = getattr(excinfo, "value", None), 0
    while exc is not None and seen < 20:
        if isinstance(exc, KeyboardInterrupt):
            _INTERRUPTED.set()
            return
        exc, seen = exc.__context__ or exc.__cause__, seen + 1
    if _INTERRUPTED.is_set() or "KeyboardInterrupt" in str(excrepr):
        _INTERRUPTED.set()
        return
    _INTERNAL.append(str(excrepr))


#: set by the hooks above, which get no config (read into the state at the session's end)
_INTERRUPTED = threading.Event()
_FINISHING = threading.Event()  # the reports are being written: see _on_signal
_INTERNAL: list[str] = []

#: what the target's failing to answer raises (a call that got no usable answer): the case
#: fails, unless the target turns out to be gone (then the run stops, incomplete)
TARGET_ERRORS = (TargetError, RpcError, DecodeError, ConnectionError, TimeoutError)


def _suite(config: pytest.Config) -> Suite:
    state = config.stash[STATE]
    if state["suite"] is None:
        spec = state["spec"] or load_target("model", state["catalog"])
        if spec.endpoint != "model":
            _start_recording(state, config.getoption("--mq-redact-auth"))
        try:
            state["suite"] = Suite(spec, strict=config.getoption("--mq-strict"),
                                   catalog=state["catalog"])
        except TargetError as exc:  # a usage error: exit 2 with one line, nothing ran
            _stop_recording()
            raise pytest.UsageError(str(exc)) from None
    return state["suite"]


def _start_recording(state: dict, redact_auth: bool = False) -> None:
    """Every RpcTarget of the run records into one recorder; every call record claims the
    frames of its call (verdicts.wire_frames). ``redact_auth``: the binds' NTLMSSP tokens are
    zeroed in wire.pcap (captures/recorder.py)."""
    recorder = Recorder(redact_auth=redact_auth)
    state["recorder"] = recorder
    targets.RECORDER = recorder
    v.wire_frames = recorder.claim


def _stop_recording() -> None:
    targets.RECORDER = None
    v.wire_frames = None


def pytest_sessionstart(session: pytest.Session) -> None:
    state = session.config.stash[STATE]
    if interrupts.PENDING.is_set():  # a signal while the run was starting (interrupts.py)
        raise KeyboardInterrupt("a signal came before the run began")
    if state["spec"] is not None:
        _catch_signals(state)
        _suite(session.config)  # an unreachable endpoint stops the run before any case


def _on_signal(signum: int, frame: Any) -> None:
    """Ctrl-C (SIGINT) or a CI job's cancellation (SIGTERM) during a run: noted first, then
    raised as KeyboardInterrupt to break a call that waits. The note is what counts: Python
    swallows an exception raised while it runs a garbage collector callback or a __del__
    (Hypothesis keeps one in gc.callbacks), so the raise alone can be lost and the run would
    go on to a green end; pytest_runtest_protocol stops the run at the next case. Once the
    run is writing its reports, a signal is noted no more: the reports are finished whole."""
    if _FINISHING.is_set():
        return
    _INTERRUPTED.set()
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _catch_signals(state: dict) -> None:
    """Install _on_signal for SIGINT and SIGTERM where the process has their defaults, or
    `mqconform run`'s note of an early one (interrupts.py); a signal the caller chose to
    ignore stays ignored. Restored by _restore_signals."""
    if threading.current_thread() is not threading.main_thread():
        return
    defaults = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
    for signum, default in defaults.items():
        handler = signal.getsignal(signum)
        if handler is default or handler is interrupts.note_early:
            signal.signal(signum, _on_signal)
            state["signals"][signum] = handler


def _restore_signals(state: dict) -> None:
    _FINISHING.clear()
    for signum, handler in state["signals"].items():
        signal.signal(signum, handler)
    state["signals"].clear()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """A run noted as interrupted stops before its next case (see _on_signal)."""
    yield
    if _INTERRUPTED.is_set() and not item.session.shouldstop:
        item.session.shouldstop = "interrupted"


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
    state = item.config.stash[STATE]
    gone = None
    if exc is not None and state["suite"] is not None \
            and isinstance(exc, (*TARGET_ERRORS, CaseFailed, Inconclusive)):
        gone = _target_gone(item, state, exc)
    if gone is not None and isinstance(exc, CaseFailed):
        result = case.finish()  # the target answered wrongly, then went: the failure stands
    elif gone is not None:
        result = case.finish(not_run=gone)
    elif isinstance(exc, Inconclusive):
        result = case.finish(inconclusive=str(exc))
    elif isinstance(exc, NotApplicable):
        result = case.finish(not_applicable=str(exc))
    elif exc is None or isinstance(exc, CaseFailed):
        result = case.finish()
    elif isinstance(exc, TARGET_ERRORS):
        result = case.finish(error=f"{type(exc).__name__}: {exc}")
    else:  # not the target's doing: mqconform's own failure
        result = case.finish(internal=_traceback_file(item, call))
    result.source = _source(item)
    recorder = item.config.stash[STATE]["recorder"]
    first = item.stash.get(FIRST_FRAME, 0)
    if recorder is not None and first and recorder.frame_count >= first:
        result.frames = {"first": first, "last": recorder.frame_count}
    item.config.stash[STATE]["results"].append(result)
    if result.verdict in (v.INCONCLUSIVE, v.NOT_APPLICABLE, v.NOT_RUN):
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
    elif result.verdict == v.ERROR:
        report.outcome = "failed"
        report.longrepr = "\n".join(result.messages)
    elif result.verdict == v.FAIL:
        report.outcome = "failed"
        if exc is None or isinstance(exc, CaseFailed):
            report.longrepr = "\n".join(result.messages + ["calls:"] + [
                f"  {r.call}\n    -> {r.observed.splitlines()[0]} {r.observed.splitlines()[1]}"
                for r in result.calls])


def _target_gone(item: pytest.Item, state: dict, exc: BaseException) -> str | None:
    """After a case that ended on the target's silence: is the target still there? If not,
    the run stops here (one line naming the case and its last call) and this case and the
    ones after it are not run."""
    if state["unreachable"] is not None:
        return f"not run: {state['unreachable']}"
    why = state["suite"].unreachable()
    if why is None:
        return None
    case = item.stash.get(CASE, None)
    calls = case.record.calls if case is not None else []
    last = calls[-1].call.splitlines()[0] if calls else "its set-up"
    state["unreachable"] = f"after case {case_id(item)}, call {last}: {why}"
    item.session.shouldstop = f"the target stopped answering: {state['unreachable']}"
    return f"not run: the target stopped answering during this case ({why})"


def _traceback_file(item: pytest.Item, call: pytest.CallInfo) -> str:
    """An exception of mqconform's own in a case: its traceback goes to a file in the report
    directory (not the terminal); the case's message names the exception and the file."""
    import traceback

    exc = call.excinfo.value if call.excinfo is not None else None
    text = " ".join(f"{type(exc).__name__}: {exc}".split()) if exc else "failed"
    report_dir = item.config.getoption("--mq-report-dir")
    if not report_dir or call.excinfo is None:
        return f"internal error of mqconform: {text}"
    folder = Path(report_dir) / "errors"
    folder.mkdir(parents=True, exist_ok=True)
    name = re.sub(r"[^\w.-]+", "_", case_id(item))[-150:] + ".txt"
    (folder / name).write_text("".join(traceback.format_exception(
        call.excinfo.type, call.excinfo.value, call.excinfo.tb)), encoding="utf-8")
    return f"internal error of mqconform: {text} (traceback: errors/{name})"


def _record_broken(item: pytest.Item, call: pytest.CallInfo) -> None:
    """A case that failed before it had an ``mq`` fixture (a missing step definition, a
    broken fixture) is an internal error in results.json, not a silent gap."""
    state = item.config.stash[STATE]
    spec = state["suite"].spec if state["suite"] else state["spec"]
    result = v.CaseResult(case=case_id(item), ids=_ids(item),
                          target=spec.name if spec else "model", verdict=v.ERROR,
                          messages=[_traceback_file(item, call).replace(
                              "internal error of mqconform:",
                              "internal error of mqconform (the case could not run):")],
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


def add_not_run(state: dict) -> None:
    """Every planned case the run ended without: a NOT_RUN result, saying why."""
    done = {r.case for r in state["results"]}
    suite = state["suite"]
    spec = suite.spec if suite else state["spec"]
    why = ("not run: the target stopped answering (" + state["unreachable"] + ")"
           if state["unreachable"] else "not run: the run was interrupted"
           if state["interrupted"] else "not run: the run ended before it")
    for case, ids, item in state["planned"]:
        if case not in done:
            state["results"].append(v.CaseResult(
                case=case, ids=ids, target=spec.name if spec else "model", verdict=v.NOT_RUN,
                messages=[why], source=_source(item)))


def run_completion(state: dict, config: pytest.Config) -> dict:
    """results.json's ``complete``/``incomplete``/``exit``: what the run can vouch for."""
    cov = coverage(state["catalog"], state["results"])
    wire = sum(c["wire"] for c in cov.values())
    covered = sum(c["covered_by_passing_case"] for c in cov.values())
    return v.completion(
        state["results"], interrupted=state["interrupted"], unreachable=state["unreachable"],
        internal=state["internal"],
        allow_inconclusive=config.getoption("--mq-allow-inconclusive"),
        min_coverage=config.getoption("--mq-min-coverage"),
        coverage_percent=round(100 * covered / wire, 2) if wire else 0.0)


def write_reports(directory: Path, state: dict, config: pytest.Config) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    results: list[v.CaseResult] = state["results"]
    suite = state["suite"]
    spec = suite.spec if suite else state["spec"]
    done = state["completion"]
    doc = {
        "target": {"name": spec.name if spec else None,
                   "endpoint": spec.endpoint if spec else None,
                   "ndr64": spec.ndr64 if spec else None,
                   "capabilities": spec.capabilities if spec else {}},
        "started": state["started"], "finished": time.time(),
        "strict": config.getoption("--mq-strict"), "select": config.getoption("--mq-select"),
        "complete": done["complete"], "incomplete": done["incomplete"],
        "exit": {"code": done["exit_code"], "meaning": done["meaning"]},
        "summary": v.summarize(results),
        "coverage": coverage(state["catalog"], results),
        "wire": _wire(directory, state, spec),
        "cases": [r.as_dict() for r in results],
        "requirements": v.by_requirement(results),
    }
    out = directory / "results.json"
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    junit_xml.write(directory / "junit.xml", doc, results, state["catalog"],
                    allow_inconclusive=config.getoption("--mq-allow-inconclusive"))
    junit = directory / "junit.xml"
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
    note = ("recorded from the client's sockets; Ethernet/IP/TCP headers synthesized around "
            "the octets exchanged (captures/recorder.py)")
    note += ("; the binds' NTLMSSP tokens zeroed (--redact-auth)" if recorder.redact_auth else
             "; an authenticated run's NTLMSSP exchange is in it (--redact-auth zeroes it)")
    calls, unanswered = recorder.wire_calls()
    return {"pcap": stale.name, "frames": frames, "connections": recorder.connection_count,
            "calls": calls, "unanswered": unanswered, "auth_redacted": recorder.redact_auth,
            "note": note}


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = session.config.stash.get(STATE, None)
    if state is None:
        return
    _FINISHING.set()
    # stopping for a target that went away also ends pytest's loop as an interruption
    state["interrupted"] = (state["interrupted"] or _INTERRUPTED.is_set()
                            or exitstatus == pytest.ExitCode.INTERRUPTED) \
        and state["unreachable"] is None and not _INTERNAL
    state["internal"] += _INTERNAL
    _INTERRUPTED.clear()
    _INTERNAL.clear()
    if state["suite"] is not None:
        try:
            state["suite"].close()  # first: the recording ends with every connection's FIN
        except Exception as exc:  # noqa: BLE001 - the reports are still due
            if state["unreachable"] is None and not isinstance(exc, TARGET_ERRORS):
                state["internal"].append(f"closing the suite: {type(exc).__name__}: {exc}")
    add_not_run(state)
    state["completion"] = run_completion(state, session.config)
    # pytest's own exit status for `pytest --mq-target`: a run that cannot vouch for the
    # target never exits 0
    if session.exitstatus == pytest.ExitCode.OK and state["completion"]["exit_code"]:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    try:
        report_dir = session.config.getoption("--mq-report-dir")
        if report_dir:
            state["written"] = write_reports(Path(report_dir), state, session.config)
    finally:
        if state["recorder"] is not None:
            _stop_recording()
        _restore_signals(state)


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
