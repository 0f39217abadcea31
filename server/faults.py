"""Seeded faults: a reference server that departs from the documents on purpose, to measure the
trace validator (``mqconform captures synth``; issue: precision and recall of
``mqconform captures validate``). Never on unless ``mqconform serve --fault NAME`` (or
``install``) asks for it; a server with faults says so on its first line.

Each fault, when armed, misbehaves at each chance with probability ``rate`` (a seeded
generator, so a corpus is reproducible), and logs every *activation*: the call whose answer
departs from the documents, with the connection's client address and the requirement that
answer breaks. Those logs are the ground truth a validator is scored against.

=====================  ============================  ==============================================
fault                  requirement broken            what the server does
=====================  ============================  ==============================================
ack-keeps              MS-MQRR/3.1.4.9/R7            R_EndReceive with RR_ACK answers MQ_OK but
                                                     keeps the message (runs RR_NACK); the fault
                                                     shows, and is logged, when the message is
                                                     returned again
receive-locked         MS-MQDMPR/3.1.7.3.2/R10       a receive returns a message another
                                                     handle's receive holds locked (its copy);
                                                     the second receiver's R_EndReceive answers
                                                     MQ_OK without touching the queue
purge-peek-access      MS-MQRR/3.1.4.6/R14           R_PurgeQueue on a handle without receive
                                                     access answers MQ_OK (and purges nothing)
close-keeps-handle     MS-MQRR/3.1.4.3/R5            R_CloseQueue closes the handle but sends it
                                                     back instead of NULL
mgmt-wrong-vt          MS-MQMR/3.1.4.1/R7            R_QMMgmtGetInfo answers a property with a
                                                     VARTYPE that is not the property's
mgmt-any-action        MS-MQMR/3.1.4.2/R3            R_QMMgmtAction answers MQ_OK to an action
                                                     not in the table (and does nothing)
port-garbage           MS-MQRR/3.1.4.1/R6            R_GetServerPort answers its port + 0x10000
=====================  ============================  ==============================================
"""

from __future__ import annotations

import json
import random
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mqconform.model import calls as c
from mqconform.model.mqmr import ACTIONS, _action_key
from mqconform.model.observer import RECEIVE_ACTIONS, queue_key
from mqconform.model.outcome import Outcome

FAULTS: dict[str, str] = {
    "ack-keeps": "MS-MQRR/3.1.4.9/R7",
    "receive-locked": "MS-MQDMPR/3.1.7.3.2/R10",
    "purge-peek-access": "MS-MQRR/3.1.4.6/R14",
    "close-keeps-handle": "MS-MQRR/3.1.4.3/R5",
    "mgmt-wrong-vt": "MS-MQMR/3.1.4.1/R7",
    "mgmt-any-action": "MS-MQMR/3.1.4.2/R3",
    "port-garbage": "MS-MQRR/3.1.4.1/R6",
}

VT_I4, VT_LPWSTR, VT_NULL = 0x0003, 0x001F, 0x0001


class FaultError(ValueError):
    """An unknown fault name or a rate outside [0, 1]; one line, exit 2."""


@dataclass
class Activation:
    fault: str
    requirement: str
    client: str  # the connection's peer, "ip:port"
    method: str
    time: float

    def to_json(self) -> dict:
        return {"fault": self.fault, "requirement": self.requirement, "client": self.client,
                "method": self.method, "time": self.time}


@dataclass
class _Received:
    queue: str
    result: c.Result
    lookup: int
    faked: bool = False  # a copy of another handle's locked message
    since: float = 0.0  # time.monotonic() of a faked receive: its Pending Request Cleanup Timer


@dataclass
class Faults:
    """The armed faults of one server and what they did."""

    names: frozenset[str]
    rate: float = 1.0
    seed: int = 0
    activations: list[Activation] = field(default_factory=list)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.names) - set(FAULTS))
        if unknown:
            raise FaultError(f"unknown fault {unknown[0]!r}; known: {', '.join(FAULTS)}")
        if not 0.0 <= self.rate <= 1.0:
            raise FaultError(f"fault rate {self.rate} is not between 0 and 1")
        self._random = random.Random(self.seed)
        self._local = threading.local()
        self._queues: dict[bytes, str] = {}  # handle -> queue key
        self._access: dict[bytes, int] = {}
        self._pending: dict[tuple[bytes, int], _Received] = {}
        #: (queue, lookup) answered as acknowledged but not removed -> the fault that did it
        self._kept: dict[tuple[str, int], str] = {}

    # ------------------------------------------------------------------ plumbing
    def install(self, handler: Any, clock: Any = None) -> None:
        """Wrap a ReferenceQueueManager's servers (server/app.py stays as it is)."""
        import time

        self._clock = clock or time.time
        original_call = handler.call
        remote_read, qmmgmt = handler.remote_read, handler.qmmgmt
        faults = self

        def call(conn: Any, *args: Any, **kw: Any) -> Any:
            faults._local.client = f"{conn.peer[0]}:{conn.peer[1]}"
            return original_call(conn, *args, **kw)

        class _RemoteRead:
            # attributes set through the wrapper (the control API's cleanup_ms) are the
            # server's own: set on the wrapper they would change nothing
            def __getattr__(self, name: str) -> Any:
                return getattr(remote_read, name)

            def __setattr__(self, name: str, value: Any) -> None:
                setattr(remote_read, name, value)

            def call(self, typed: c.Call, token: Any = None) -> Any:
                return faults._remote_read(remote_read, typed, token)

        class _QMMgmt:
            def __getattr__(self, name: str) -> Any:
                return getattr(qmmgmt, name)

            def __setattr__(self, name: str, value: Any) -> None:
                setattr(qmmgmt, name, value)

            def call(self, typed: c.Call) -> Any:
                return faults._qmmgmt(qmmgmt, typed)

        handler.call = call
        handler.remote_read = _RemoteRead()
        handler.qmmgmt = _QMMgmt()

    def _chance(self, name: str) -> bool:
        return name in self.names and self._random.random() < self.rate

    def _log(self, name: str, call: c.Call, requirement: str | None = None) -> None:
        self.activations.append(Activation(
            fault=name, requirement=requirement or FAULTS[name],
            client=getattr(self._local, "client", "?"), method=type(call).__name__,
            time=self._clock()))

    def write(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps([a.to_json() for a in self.activations], indent=1),
                              encoding="utf-8")

    # ------------------------------------------------------------------ RemoteRead
    def _remote_read(self, server: Any, call: c.Call, token: Any) -> Any:
        handle = bytes(getattr(call, "phContext", None) or b"")
        if isinstance(call, c.R_GetServerPort) and self._chance("port-garbage"):
            out = server.call(call, token=token)
            if isinstance(out, Outcome) and out.result.status:
                self._log("port-garbage", call)
                return replace(out, result=replace(out.result,
                                                   status=out.result.status + 0x10000))
            return out
        if isinstance(call, (c.R_StartReceive, c.R_StartTransactionalReceive)):
            return self._start_receive(server, call, token, handle)
        if isinstance(call, (c.R_EndReceive, c.R_EndTransactionalReceive)):
            key = (handle, call.dwRequestId)
            received = self._pending.pop(key, None)
            if received is not None and received.faked \
                    and (time.monotonic() - received.since) * 1000 >= server.cleanup_ms:
                received = None  # its cleanup timer would have ended it: the model answers
            if received is not None and received.faked:
                if call.dwAck == c.RR_ACK:  # "removed" for this client: it is not
                    self._kept[(received.queue, received.lookup)] = "receive-locked"
                return Outcome(c.RESULTS[type(call)](status=0))
            if (received is not None and call.dwAck == c.RR_ACK
                    and isinstance(call, c.R_EndReceive) and self._chance("ack-keeps")):
                out = server.call(replace(call, dwAck=c.RR_NACK), token=token)
                if isinstance(out, Outcome) and out.result.status == 0:
                    self._kept[(received.queue, received.lookup)] = "ack-keeps"
                return out
            out = server.call(call, token=token)
            if isinstance(out, Outcome) and out.result.status == 0 and received is not None \
                    and call.dwAck == c.RR_ACK:
                self._kept.pop((received.queue, received.lookup), None)
            return out
        if isinstance(call, c.R_PurgeQueue) and self._access.get(handle, c.RECEIVE_ACCESS) \
                != c.RECEIVE_ACCESS and self._chance("purge-peek-access"):
            out = server.call(call, token=token)
            if isinstance(out, Outcome) and out.result.status != 0:
                self._log("purge-peek-access", call)
                return Outcome(c.R_PurgeQueueResult(status=0))
            return out
        out = server.call(call, token=token)
        if not isinstance(out, Outcome):
            return out
        if isinstance(call, (c.R_OpenQueue, c.R_OpenQueueForMove)) and out.result.pphContext:
            new = bytes(out.result.pphContext)
            self._queues[new] = queue_key(call.pQueueFormat) or new.hex()
            self._access[new] = call.dwAccess
        elif isinstance(call, c.R_CloseQueue) and out.result.status == 0:
            closed = bytes(call.pphContext or b"")
            for key in [k for k in self._pending if k[0] == closed]:
                del self._pending[key]
            if self._chance("close-keeps-handle"):
                self._log("close-keeps-handle", call)
                return replace(out, result=replace(out.result, pphContext=call.pphContext))
        elif isinstance(call, c.R_CancelReceive) and out.result.status == 0:
            self._pending.pop((handle, call.dwRequestId), None)
        return out

    def _start_receive(self, server: Any, call: Any, token: Any, handle: bytes) -> Any:
        queue = self._queues.get(handle, handle.hex())
        receive = call.ulAction in RECEIVE_ACTIONS
        # only where the model would serve the receive: R_StartReceive on a handle with
        # receive access (the fault breaks the seek, not the input checks before it)
        if (isinstance(call, c.R_StartReceive) and not call.hCursor
                and call.ulAction == c.MQ_ACTION_RECEIVE
                and self._access.get(handle) == c.RECEIVE_ACCESS):
            held = [(k, r) for k, r in self._pending.items()
                    if r.queue == queue and k[0] != handle and not r.faked
                    and self._locked(server, k, r.lookup)]
            if held and self._chance("receive-locked"):
                _, victim = held[0]
                self._pending[(handle, call.dwRequestId)] = _Received(
                    queue, victim.result, victim.lookup, faked=True, since=time.monotonic())
                self._log("receive-locked", call)
                result = victim.result
                if type(result) is not c.RESULTS[type(call)]:
                    result = c.RESULTS[type(call)](**{
                        f: getattr(result, f) for f in ("status", "pdwArriveTime",
                                                        "pSequenceId", "pdwNumberOfSections",
                                                        "ppPacketSections")})
                return Outcome(result)
        out = server.call(call, token=token)
        if isinstance(out, Outcome):
            self._received(call, out.result, queue, handle, receive)
        return out

    @staticmethod
    def _locked(server: Any, key: tuple[bytes, int], lookup: int) -> bool:
        """Whether the model still holds that receive's PendingRequestEntry, with the message
        locked (the fault copies only a lock that exists)."""
        entry = server.pending_request_table.entries.get((key[1], key[0]))
        return entry is not None and (entry.lookup_identifier or 0) & ((1 << 56) - 1) == lookup

    def _received(self, call: Any, result: c.Result, queue: str, handle: bytes,
                  receive: bool) -> None:
        if result.status != 0:
            return
        lookup = result.pSequenceId
        cause = self._kept.get((queue, lookup))
        if cause is not None:  # an acknowledged message returned again
            self._log(cause, call, "MS-MQRR/3.1.4.9/R7")
        if any(r.faked and r.queue == queue and r.lookup == lookup and k[0] != handle
               for k, r in self._pending.items()):  # one this server told another it locked
            self._log("receive-locked", call, "MS-MQDMPR/3.1.7.3.2/R10" if receive
                      else "MS-MQDMPR/3.1.7.3.2/R11")
        if receive:
            self._pending[(handle, call.dwRequestId)] = _Received(queue, result, lookup)

    # ------------------------------------------------------------------ qmmgmt
    def _qmmgmt(self, server: Any, call: c.Call) -> Any:
        out = server.call(call)
        if not isinstance(out, Outcome):
            return out
        if isinstance(call, c.R_QMMgmtAction) and out.result.status != 0 \
                and self._unknown_action(call) and self._chance("mgmt-any-action"):
            self._log("mgmt-any-action", call)
            return Outcome(c.R_QMMgmtActionResult(status=0))
        if isinstance(call, c.R_QMMgmtGetInfo) and out.result.status == 0:
            values = list(out.result.apVar)
            for i, v in enumerate(values):
                if v.vt in (VT_LPWSTR, 0x0013) and self._chance("mgmt-wrong-vt"):
                    values[i] = (c.PropVariant(VT_I4, 7) if v.vt == VT_LPWSTR
                                 else c.PropVariant(VT_LPWSTR, "seven"))
                    self._log("mgmt-wrong-vt", call)
                    return replace(out, result=replace(out.result, apVar=tuple(values)))
        return out

    @staticmethod
    def _unknown_action(call: c.R_QMMgmtAction) -> bool:
        return ACTIONS.get(_action_key(call.lpwszAction)) is None
