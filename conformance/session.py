"""The suite's session (target, oracle, SUT control, results) and a case's helper, the ``mq``
fixture of conformance/plugin.py.

Every call a case makes goes to the target and, translated, to the oracle: a ModelTarget on
virtual time provisioned in lockstep with the target (same computer name, same queues and
messages, same R_GetServerPort port). The target's context and cursor handles are mapped to the
oracle's as the two hand them out; the verdict compares the target's result against the model's
Outcome (``Outcome.conforms``, and for receives the message returned), never against what the
reference server happens to do.
"""

from __future__ import annotations

import dataclasses
import itertools
import secrets
import time
import uuid
from typing import Any

from conformance import verdicts as v
from conformance.sut import CommandControl, Inconclusive, NoControl, ReferenceControl, SutControl
from conformance.targetfile import TargetSpec
from conformance.targets import Capabilities, ModelQueueManager, ModelTarget, RpcTarget
from model import calls as c
from model.formats import QueueFormat, parse_format_name, to_queue_format
from model.outcome import Outcome
from model.status import name_of

CONTEXT_FIELDS = ("phContext", "pphContext", "phContextFrom")


class NotApplicable(Exception):
    """The target declares a capability the case needs absent."""


class CaseFailed(AssertionError):
    """A check failed; the case stops (later steps depend on earlier ones)."""


def status_text(result: c.Result) -> str:
    name = name_of(result.status)
    shown = f"0x{result.status:08X}" + (f" {name}" if name and not name.startswith("0x")
                                         else "")
    if isinstance(result, c.R_GetServerPortResult):
        shown = f"{result.status}"
    return shown + (" (raised)" if result.raised else "")


def call_text(call: c.Call) -> str:
    parts = []
    for f in dataclasses.fields(call):
        value = getattr(call, f.name)
        if isinstance(value, bytes):
            value = value.hex()
        elif isinstance(value, int) and not isinstance(value, bool) and value > 9:
            value = f"0x{value:X}"
        elif isinstance(value, QueueFormat):
            value = str(getattr(value, "format_name", None) or value)
        parts.append(f"{f.name}={value}")
    return f"{type(call).__name__}({', '.join(parts)})"


def result_text(result: c.Result) -> str:
    from wire.client import format_result

    return format_result(result)


def message_body(result: c.Result) -> bytes | None:
    from wire.packet import decode_packet

    sections = getattr(result, "ppPacketSections", ())
    if not sections or sections[0].pSectionBuffer is None:
        return None
    packet = sections[0].pSectionBuffer
    try:
        offset, size = decode_packet(packet).message_body
    except Exception:  # noqa: BLE001 - a packet the codec cannot read has no body to compare
        return None
    return bytes(packet[offset:offset + size])


class Suite:
    """One run: the target, the oracle, SUT control, and the results of the cases."""

    def __init__(self, spec: TargetSpec, strict: bool = False, catalog: Any = None):
        from spec.catalog import load

        self.spec = spec
        self.strict = strict
        self.catalog = catalog or load()
        self.levels = {r.id: r.level for r in self.catalog}
        self.results: list[v.CaseResult] = []
        self.capabilities = Capabilities(dict(spec.capabilities))
        self._running = None  # the embedded reference server, when endpoint is reference
        self._run = secrets.token_hex(3)
        self._queues = itertools.count(1)
        self.target, self.sut, port = self._open()
        self.oracle = ModelTarget(ModelQueueManager.from_yaml(
            port=port, clock="virtual", computer_name=spec.computer_name), name="oracle")
        self.oracle_sut = self._in_process_control(self.oracle.qm)

    @staticmethod
    def _in_process_control(qm: ModelQueueManager) -> ReferenceControl:
        from server.control import ControlApi

        return ReferenceControl(api=ControlApi(qm))

    def _open(self) -> tuple[Any, SutControl, int]:
        spec = self.spec
        if spec.endpoint == "model":
            qm = ModelQueueManager.from_yaml(computer_name=spec.computer_name)
            target = ModelTarget(qm, name=spec.name, capabilities=self.capabilities)
            sut = self._in_process_control(qm) if spec.sut_kind == "reference" \
                else self._sut(None)
            return target, sut, qm.remote_read.port
        endpoint, url = spec.endpoint, spec.sut_url
        if endpoint == "reference":
            from server.main import start

            self._running = start(host="127.0.0.1", port=0, control_port=0)
            host, port = self._running.rpc.address
            endpoint = f"ncacn_ip_tcp:{host}[{port}]"
            chost, cport = self._running.control.address
            url = f"http://{chost}:{cport}"
        target = RpcTarget(endpoint, spec.ndr64, name=spec.name, capabilities=self.capabilities,
                           timeout=spec.timeout, epm_port=spec.epm_port,
                           computer_name=spec.computer_name)
        return target, self._sut(url), target.port

    def _sut(self, url: str | None) -> SutControl:
        kind = self.spec.sut_kind
        if kind == "reference":
            return ReferenceControl(url=url)
        if kind == "command":
            return CommandControl(self.spec.sut_commands)
        return NoControl()

    def queue_path(self) -> str:
        return f"private$\\mqc-{self._run}-{next(self._queues)}"

    def close(self) -> None:
        self.target.close()
        if self._running is not None:
            self._running.stop()
            self._running = None


class Case:
    """The ``mq`` fixture: one case's view of the suite."""

    def __init__(self, suite: Suite, case_id: str, ids: tuple[str, ...]):
        self.suite = suite
        self.target = suite.target
        self.oracle = suite.oracle
        self.sut = suite.sut
        self.capabilities = suite.capabilities
        self.record = v.CaseResult(case=case_id, ids=ids, target=suite.spec.name)
        self.checks: list[v.Check] = []
        self._contexts: dict[bytes, bytes] = {}
        self._cursors: dict[tuple[bytes, int], int] = {}
        self._started = time.monotonic()

    # ---------------------------------------------------------------- preconditions
    def require(self, capability: str) -> None:
        if not self.capabilities.has(capability):
            raise NotApplicable(f"the target declares no {capability}")

    def queue(self, messages: list[bytes | dict] = (), transactional: bool = False
              ) -> QueueFormat:
        """A new queue on the target and on the oracle, with these messages in order;
        Inconclusive if SUT control cannot make it."""
        path = self.suite.queue_path()
        specs = [m if isinstance(m, dict) else {"body": m} for m in messages]
        self.sut.provision(path, specs, transactional=transactional)
        self.suite.oracle_sut.provision(path, specs, transactional=transactional)
        return self.format_of(path)

    def format_of(self, path: str) -> QueueFormat:
        return to_queue_format(parse_format_name(
            f"DIRECT=OS:{self.suite.spec.computer_name}\\{path}"))

    # ---------------------------------------------------------------- calling
    def _to_oracle(self, call: c.Call) -> c.Call:
        changes: dict[str, Any] = {}
        for name in CONTEXT_FIELDS:
            value = getattr(call, name, None)
            if value is not None:
                changes[name] = self._contexts.get(bytes(value), value)
        cursor = getattr(call, "hCursor", 0)
        if cursor:
            changes["hCursor"] = self._cursors.get((bytes(call.phContext or b""), cursor),
                                                   cursor)
        return dataclasses.replace(call, **changes) if changes else call

    def _learn(self, call: c.Call, observed: c.Result, expected: c.Result) -> None:
        mine, theirs = getattr(observed, "pphContext", None), getattr(expected, "pphContext",
                                                                       None)
        if isinstance(call, (c.R_OpenQueue, c.R_OpenQueueForMove)) and mine and theirs:
            self._contexts[bytes(mine)] = bytes(theirs)
        if isinstance(call, c.R_CreateCursor) and observed.phCursor and expected.phCursor:
            self._cursors[(bytes(call.phContext or b""), observed.phCursor)] = expected.phCursor

    def call(self, typed_call: c.Call, ids: tuple[str, ...] | list[str] | str = (),
             target: Any = None) -> c.Result:
        """Call the target and the oracle; check the target's result against the model's
        Outcome (the requirement IDs checked: ``ids``, else the case's). Returns the target's
        result; a non-conforming one ends the case."""
        observed = (target or self.target).call(typed_call)
        outcome = self.oracle.outcome(self._to_oracle(typed_call))
        self._learn(typed_call, observed, outcome.result)
        self.check(outcome, observed, ids=ids, call=typed_call)
        return observed

    def check(self, expected: Outcome | c.Result | int, observed: c.Result,
              ids: tuple[str, ...] | list[str] | str = (), call: c.Call | None = None,
              what: str = "") -> bool:
        """Record one check: ``observed`` against an Outcome (its rule and tolerance), a
        Result (its status) or a bare status. A failure raises CaseFailed."""
        ids = (ids,) if isinstance(ids, str) else tuple(ids)
        if isinstance(expected, Outcome):
            outcome = expected
        elif isinstance(expected, c.Result):
            outcome = Outcome(expected)
        else:
            outcome = Outcome(type(observed)(status=expected))
        problems = []
        if not outcome.conforms(observed):
            want = ("any failure" if outcome.any_failure else status_text(outcome.result))
            problems.append(f"status {status_text(observed)}, the documents ask for {want}"
                            + (f" ({outcome.rule})" if outcome.rule else ""))
        elif outcome.status == 0 and not observed.raised and hasattr(observed,
                                                                     "ppPacketSections"):
            problems.extend(self._compare_message(outcome.result, observed))
        name = type(call).__name__ if call is not None else (what or type(observed).__name__)
        message = f"{name}: " + "; ".join(problems) if problems else f"{name}: conforms"
        self.record.calls.append(v.CallRecord(
            call=call_text(call) if call is not None else (what or name),
            observed=result_text(observed), expected=status_text(outcome.result)
            + (" or any failure" if outcome.any_failure else ""), rule=outcome.rule))
        check = v.Check(ids or self.record.ids, not problems, message)
        self.checks.append(check)
        if problems:
            raise CaseFailed(message)
        return True

    @staticmethod
    def _compare_message(expected: c.Result, observed: c.Result) -> list[str]:
        out = []
        if observed.pdwNumberOfSections != expected.pdwNumberOfSections:
            out.append(f"{observed.pdwNumberOfSections} section(s), the model returns "
                       f"{expected.pdwNumberOfSections} (MS-MQRR/3.1.4.7/R18)")
        kinds = [s.SectionBufferType for s in observed.ppPacketSections]
        want = [s.SectionBufferType for s in expected.ppPacketSections]
        if kinds != want:
            out.append(f"section types {kinds}, the model returns {want} (MS-MQRR/3.1.4.7/R29)")
        got, body = message_body(observed), message_body(expected)
        if got != body:
            out.append(f"message body {got!r}, the model returns {body!r} (MS-MQRR/3.1.4.7/R31)")
        return out

    # ---------------------------------------------------------------- shortcuts
    def open(self, fmt: QueueFormat, access: int = c.RECEIVE_ACCESS,
             ids: tuple[str, ...] = ()) -> bytes:
        out = self.call(c.R_OpenQueue(pQueueFormat=fmt, dwAccess=access,
                                      pClientId=uuid.UUID(int=0x4D51), fNonRoutingServer=1),
                        ids=ids)
        if out.raised or not out.pphContext:
            raise CaseFailed(f"R_OpenQueue gave no context handle ({status_text(out)})")
        return out.pphContext

    def receive(self, ctx: bytes, action: int = c.MQ_ACTION_RECEIVE, request: int = 1,
                ids: tuple[str, ...] = (), **fields: Any) -> c.Result:
        fields.setdefault("dwMaxBodySize", 1 << 16)
        fields.setdefault("dwMaxCompoundMessageSize", 1 << 16)
        return self.call(c.R_StartReceive(phContext=ctx, ulAction=action, dwRequestId=request,
                                          **fields), ids=ids)

    def finish(self, error: str | None = None, inconclusive: str | None = None,
               not_applicable: str | None = None) -> v.CaseResult:
        self.record.duration = time.monotonic() - self._started
        if inconclusive is not None or not_applicable is not None:
            self.record.verdict = v.INCONCLUSIVE if inconclusive is not None \
                else v.NOT_APPLICABLE
            self.record.messages.append(inconclusive or not_applicable)
            return self.record
        return v.decide(self.record, self.checks, self.suite.levels,
                        self.suite.spec.expectations, self.suite.strict, error)


__all__ = ["Case", "CaseFailed", "Inconclusive", "NotApplicable", "Suite"]
