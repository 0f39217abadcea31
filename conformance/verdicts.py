"""Verdicts and the per-case result record.

A case's verdict is one of PASS, FAIL, INCONCLUSIVE (a precondition could not be provisioned),
NOT_APPLICABLE (a capability the target declares absent), ERROR (mqconform itself failed in the
case: a bug of the suite, never the target's fault) and NOT_RUN (the run ended before the case:
interrupted, or the target stopped answering). A FAIL whose failing checks are
all SHOULD/SHOULD NOT/MAY-level requirements is a warning (not unexpected) unless ``strict``; a
FAIL on a requirement the target file lists in ``expectations`` is an expected failure; a PASS
on such a requirement is reported as an expected failure that passed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mqconform.spec.catalog import natural_key

PASS, FAIL, INCONCLUSIVE, NOT_APPLICABLE = "pass", "fail", "inconclusive", "not-applicable"
ERROR, NOT_RUN = "error", "not-run"
VERDICTS = (PASS, FAIL, INCONCLUSIVE, NOT_APPLICABLE, ERROR, NOT_RUN)

#: ``mqconform run`` exit codes (README, ``mqconform run --help``)
EXIT_CONFORMANT, EXIT_NONCONFORMANT, EXIT_USAGE, EXIT_INCOMPLETE, EXIT_INTERNAL = 0, 1, 2, 3, 4
EXIT_MEANINGS = {
    EXIT_CONFORMANT: "conformant: the run completed, cases ran, no unexpected failure",
    EXIT_NONCONFORMANT: "non-conformant: an unexpected failure",
    EXIT_USAGE: "usage or configuration error",
    EXIT_INCOMPLETE: "incomplete: the run cannot vouch for the target",
    EXIT_INTERNAL: "internal error of mqconform",
}
WEAK_LEVELS = frozenset({"SHOULD", "SHOULD NOT", "MAY"})


@dataclass
class Check:
    ids: tuple[str, ...]
    ok: bool
    message: str
    expected: str | None = None  # what the documents allow (all of it where several values are)
    observed: str | None = None  # what the target did
    step: dict | None = None  # where the check is made: path, line, and the step's text


#: Where a new CallRecord finds its frames when it is given none: during a recorded run,
#: conformance.plugin sets it to the recorder's ``claim`` (the frames of the last call the
#: creating thread made on the target, taken once); None otherwise (the model has no wire).
wire_frames: Callable[[], dict | None] | None = None


@dataclass
class CallRecord:
    """One call of a case: the typed call, the target's result and what the model allows;
    ``frames``: where it is in wire.pcap (captures.recorder.Recorder.exchange: first/last
    frame, request and response [first, last], call_id, opnum, tcp_stream), None without a
    wire."""

    call: str
    observed: str
    expected: str | None = None
    rule: str | None = None
    frames: dict | None = None

    def __post_init__(self) -> None:
        if self.frames is None and wire_frames is not None:
            self.frames = wire_frames()

    def as_dict(self) -> dict:
        return {"call": self.call, "observed": self.observed, "expected": self.expected,
                "rule": self.rule, "frames": self.frames}


@dataclass
class CaseResult:
    case: str
    ids: tuple[str, ...]
    target: str
    verdict: str = PASS
    messages: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    expected_failure: str | None = None  # the expectation's reason, when one applies
    unexpected: bool = False  # a failure that gates the run
    expected_failure_passed: bool = False
    duration: float = 0.0
    source: dict | None = None  # where the case is written: path, line, name (scenario)
    frames: dict | None = None  # the case's frames in wire.pcap: first, last
    #: each failed check: its step, its requirements with their sentences, expected, observed
    failures: list[dict] = field(default_factory=list)
    #: a failure that did not happen again when its calls were replayed: the two runs' pcaps
    #: ({"first": path, "replay": path}); the case still fails, marked flaky
    flaky: dict | None = None

    @property
    def failed_ids(self) -> tuple[str, ...]:
        """The requirements a failed case failed: those its failed checks carry (a check names
        the requirement that demands it), not every ID the case is tagged with; all of them
        when it failed without a check (an error)."""
        if self.verdict != FAIL:
            return ()
        if not self.failures:
            return self.ids
        return tuple(sorted({r["id"] for f in self.failures for r in f["requirements"]}))

    def as_dict(self) -> dict:
        return {"case": self.case, "ids": list(self.ids), "target": self.target,
                "failed_ids": list(self.failed_ids), "failures": self.failures,
                "verdict": self.verdict, "flaky": self.flaky, "unexpected": self.unexpected,
                "expected_failure": self.expected_failure,
                "expected_failure_passed": self.expected_failure_passed,
                "messages": self.messages, "warnings": self.warnings,
                "calls": [c.as_dict() for c in self.calls],
                "duration": round(self.duration, 4), "source": self.source,
                "frames": self.frames}


def failure(check: Check, ids: tuple[str, ...], texts: dict[str, str]) -> dict:
    """What a report shows of one failed check: where, which requirement and what it says,
    what the documents allow and what the target did."""
    sentences = [{"id": i, "text": texts.get(i)} for i in ids]
    expected = check.expected or " ".join(f"{s['id']}: {s['text']}" for s in sentences
                                          if s["text"]) or None
    return {"step": check.step, "requirements": sentences, "expected": expected,
            "observed": check.observed or check.message, "message": check.message}


def decide(result: CaseResult, checks: list[Check], levels: dict[str, str],
           expectations: dict[str, str], strict: bool, error: str | None = None,
           texts: dict[str, str] | None = None) -> CaseResult:
    """Fill in ``result``'s verdict from its checks (``error``: an exception that ended the
    case early and is not a check, e.g. a target that stopped answering; ``texts``: the
    requirements' sentences, for the failures' records)."""
    failed = [ch for ch in checks if not ch.ok]
    result.failures = [failure(ch, ch.ids or result.ids, texts or {}) for ch in failed]
    expected = [expectations[i] for i in result.ids if i in expectations]
    if error is not None:
        result.verdict = FAIL
        result.messages.append(error)
    elif failed:
        result.verdict = FAIL
        result.messages.extend(ch.message for ch in failed)
    else:
        result.verdict = PASS
    if result.verdict == FAIL:
        ids = {i for ch in failed for i in (ch.ids or result.ids)}
        weak = error is None and ids and all(levels.get(i) in WEAK_LEVELS for i in ids)
        # an expectation excuses the failure of its own requirement, not of another the
        # case happens to be tagged with
        expected = [expectations[i] for i in result.failed_ids if i in expectations]
        if expected:
            result.expected_failure = "; ".join(expected)
        elif weak and not strict:
            result.warnings.extend(ch.message for ch in failed)
        else:
            result.unexpected = True
    elif result.verdict == PASS and expected:
        result.expected_failure = "; ".join(expected)
        result.expected_failure_passed = True
    return result


def summarize(results: list[CaseResult]) -> dict[str, Any]:
    counts = {v: 0 for v in VERDICTS}
    for r in results:
        counts[r.verdict] += 1
    counts["unexpected_failures"] = sum(r.unexpected for r in results)
    counts["expected_failures"] = sum(1 for r in results
                                      if r.verdict == FAIL and r.expected_failure)
    counts["expected_failures_passed"] = sum(r.expected_failure_passed for r in results)
    counts["warnings"] = sum(1 for r in results if r.warnings)
    counts["cases"] = len(results)
    return counts


def completion(results: list[CaseResult], *, interrupted: bool = False,
               unreachable: str | None = None, internal: list[str] = (),
               allow_inconclusive: bool = False, min_coverage: float | None = None,
               coverage_percent: float | None = None) -> dict[str, Any]:
    """Whether the run can vouch for the target, and its exit code: 4 when mqconform failed
    (a case in ERROR, or ``internal`` errors), else 1 on an unexpected failure, else 3 when
    the run is incomplete (no case ran, interrupted, the target stopped answering, an
    inconclusive case not allowed, wire coverage below ``min_coverage``), else 0."""
    counts = summarize(results)
    reasons = []
    if counts[PASS] + counts[FAIL] == 0:
        reasons.append("no case ran (every case was not applicable, inconclusive, not run "
                       "or in error, or nothing was selected)")
    if interrupted:
        reasons.append("interrupted")
    if unreachable:
        reasons.append(f"the target stopped answering: {unreachable}")
    if counts[NOT_RUN] and not interrupted and not unreachable:
        reasons.append(f"{counts[NOT_RUN]} case(s) not run")
    if counts[INCONCLUSIVE] and not allow_inconclusive:
        reasons.append(f"{counts[INCONCLUSIVE]} inconclusive case(s) (a precondition could "
                       f"not be set up; --allow-inconclusive accepts them)")
    if min_coverage is not None and (coverage_percent or 0.0) < min_coverage:
        reasons.append(f"wire coverage {coverage_percent or 0.0:.2f} % is below "
                       f"--min-coverage {min_coverage:g} %")
    errors = counts[ERROR] + len(internal)
    if errors:
        code = EXIT_INTERNAL
    elif counts["unexpected_failures"]:
        code = EXIT_NONCONFORMANT
    elif reasons:
        code = EXIT_INCOMPLETE
    else:
        code = EXIT_CONFORMANT
    return {"complete": not reasons and not errors, "incomplete": reasons,
            "internal_errors": errors, "exit_code": code, "meaning": EXIT_MEANINGS[code]}


def by_requirement(results: list[CaseResult]) -> dict[str, dict]:
    """Per requirement: the worst verdict over its cases (fail > error > inconclusive >
    not-run > pass > not-applicable) and the cases. A failed case fails only the requirements
    its failed checks name (``failed_ids``); for its other IDs it is inconclusive (it stopped
    before it could show them kept)."""
    order = {FAIL: 5, ERROR: 4, INCONCLUSIVE: 3, NOT_RUN: 2, PASS: 1, NOT_APPLICABLE: 0}
    out: dict[str, dict] = {}
    for r in results:
        failed = set(r.failed_ids or r.ids)
        for rid in r.ids:
            entry = out.setdefault(rid, {"verdict": None, "cases": []})
            entry["cases"].append(r.case)
            verdict = r.verdict if r.verdict != FAIL or rid in failed else INCONCLUSIVE
            if entry["verdict"] is None or order[verdict] > order[entry["verdict"]]:
                entry["verdict"] = verdict
    return dict(sorted(out.items(), key=lambda kv: natural_key(kv[0])))
