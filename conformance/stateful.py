"""Stateful Hypothesis machines: random RemoteRead and qmmgmt call sequences, each call sent to
the target and to the model oracle through a ``Case`` (conformance/session.py), so every result
is judged as a scenario's is: status against the model's Outcome, and for a receive the message
returned (body octets, section layout, pSequenceId against the message the model returns); for
R_QMMgmtGetInfo the values too, entry by entry.

How it fits together:

* A **program** is the machine's output and the replay's input: the queues to provision (bodies,
  labels, priorities, transactional or not) and the steps, each a typed call of model.calls with
  its arguments written symbolically: ``{"queue": 0}`` (the format name of the program's first
  queue), ``{"ref": 3, "field": "pphContext"}`` (what step 3 returned), ``{"ref": 5, "field":
  "lookup"}`` (the lookup identifier of the message step 5 received), ``{"tx": "t1"}`` (a
  transaction identifier made fresh for each run), plus control steps (a message arrives, a
  transaction is committed) made through SUT control on the target and on the oracle. An
  ``Executor`` runs a program on a Case; the machines build one step by step, and ``replay``
  runs a saved one again.
* ``RemoteReadMachine`` and ``QMMgmtMachine`` are RuleBasedStateMachines. An example starts
  with ``@initialize`` (its queues and messages, drawn) and goes on with steps of one rule,
  ``call``, which runs one of the machine's operations, drawn by weight from ``OPERATIONS``:
  each operation is one protocol method (R_OpenQueue with random access and share modes,
  R_StartReceive with each action and by lookup identifier, R_EndReceive with RR_ACK or
  RR_NACK, R_QMMgmtGetInfo, R_QMMgmtAction, ...) and names the requirement IDs of the method
  section it exercises; they go into every check it makes, and so into a failure report. Its
  choices (which handle, which action) come from one drawn integer (``Choices``); shrinking
  makes them the first, plainest ones. One rule with one integer keeps Hypothesis's share of a
  step small (several rules with several arguments cost it 3 to 4 times as much) and the mix of
  operations as the weights say; an example leaves up to three operations out (swarm testing).
  Timeouts are always 0: no call ever waits. An operation that needs a capability the target
  declares absent (``needs``) is never run; a machine that needs one (``REQUIRES``) is not
  applicable.
* ``run_machine`` runs one machine with a fixed seed, a bounded number of examples and steps, on
  a fresh Case per example (its own queues, deleted when the example ends, when SUT control can).
  At the end of every example the oracle's ADM invariants are checked (model/invariants.py).
  A failure is shrunk by Hypothesis; the minimal program is written to
  ``<report-dir>/stateful/<machine>-<n>.py`` with the expected and observed result of every step,
  then replayed on the same target (a pcap of just that replay beside it, over RPC), and the
  case fails with the requirement IDs involved.
* ``python FILE --target T`` or ``mqconform replay FILE --target T`` replays a saved program
  (exit 1 if a step fails again, 0 if every step conforms, 2 for bad usage).

Moves, waits and TIDY: queues have subqueues (drawn), R_OpenQueueForMove gives move contexts
that R_MoveMessage moves seen messages to (the Case maps pMoveContext to the oracle's); a
blocking receive (``start:`` step, ulTimeout INFINITE) is in flight on a second connection of
the suite's association group while a message arrives or R_CancelReceive ends it, and a
``finish`` step checks its answer; transactional receives span several calls before the
transaction is committed or aborted through SUT control; "TIDY" runs on the machine only where
every queue of the target is the suite's (``control:tidy``). After every step (``@invariant``)
the oracle's ADM rules over the example's queues (model/invariants.py ``check_queues``), its
open handles, pending requests and cursors are checked, so a shrunk failure ends at the first
step that broke one; ``replay`` checks them after every step too.
"""

from __future__ import annotations

import argparse
import ast
import collections
import dataclasses
import itertools
import pprint
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, seed
from hypothesis import settings as Settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from mqconform.captures.recorder import Recorder
from mqconform.conformance import preconditions as pre
from mqconform.conformance import sources
from mqconform.conformance import verdicts as v
from mqconform.conformance.preconditions_mqmr import outgoing_queue
from mqconform.conformance.session import (
    Case,
    CaseFailed,
    NotApplicable,
    Suite,
    call_text,
    lookup_id_of,
    result_text,
    status_text,
)
from mqconform.conformance.sut import Inconclusive, ReferenceControl
from mqconform.conformance.targetfile import TargetFileError, load
from mqconform.conformance.targets import RpcTarget, TargetError
from mqconform.model import calls as c
from mqconform.model.formats import MgmtObject, MgmtObjectType
from mqconform.model.invariants import check_invariants, check_queues
from mqconform.model.mqmr import (
    MACHINE_PROPERTIES,
    PROPID_MGMT_MSMQ_ACTIVEQUEUES,
    PROPID_MGMT_MSMQ_BYTES_IN_ALL_QUEUES,
    PROPID_MGMT_MSMQ_CONNECTED,
    PROPID_MGMT_MSMQ_PRIVATEQ,
    PROPID_MGMT_MSMQ_TYPE,
    PROPID_MGMT_QUEUE_MESSAGE_COUNT,
    QUEUE_PROPERTIES,
    VT_BLOB,
    VT_NULL,
)
from mqconform.model.runtime import Pending
from mqconform.spec.catalog import ID_IN_TEXT
from mqconform.spec.catalog import load as load_catalog

#: defaults for a suite run: small enough for CI, the same sequences every run
DEFAULT_EXAMPLES = 8
DEFAULT_STEPS = 100
DEFAULT_SEED = 20240521
MAX_BODY = 1 << 16
LOW7 = (1 << 56) - 1
#: a lookup identifier no queue holds (high octet zero, as for a non-transactional message)
UNKNOWN_LOOKUP_ID = 0x00FFFFFFFFFF0F0F
#: MQMSG_CLASS_NACK_RECEIVE_REJECTED (MS-MQMQ 2.2.18.1.6)
NACK_RECEIVE_REJECTED = 0xC004
#: a pMoveContext no R_OpenQueueForMove returned
UNKNOWN_MOVE_CONTEXT = 0x0123456789ABCDEF
TOKEN = bytes(range(1, 33))
CLIENT_ID = uuid.UUID(int=0x4D51)

# ------------------------------------------------------------------------------ requirement IDs
# Per rule, the steps of the method section it exercises (MS-MQRR 3.1.4.x, MS-MQMR 3.1.4.x).

IDS_PORT = ("MS-MQRR/3.1.4.1/R1", "MS-MQRR/3.1.4.1/R6")
IDS_OPEN = ("MS-MQRR/3.1.4.2/R22", "MS-MQRR/3.1.4.2/R23", "MS-MQRR/3.1.4.2/R24",
            "MS-MQRR/3.1.4.2/R25", "MS-MQRR/3.1.4.2/R27", "MS-MQRR/3.1.4.2/R28",
            "MS-MQRR/3.1.4.2/R29", "MS-MQRR/3.1.4.2/R30")
IDS_CLOSE = ("MS-MQRR/3.1.4.3/R8", "MS-MQRR/3.1.4.3/R9", "MS-MQRR/3.1.4.3/R10",
             "MS-MQRR/3.1.4.3/R11", "MS-MQRR/3.1.4.3/R13", "MS-MQRR/3.1.4.3/R14",
             "MS-MQRR/3.1.4.3/R15")
IDS_CREATE_CURSOR = ("MS-MQRR/3.1.4.4/R9", "MS-MQRR/3.1.4.4/R10", "MS-MQRR/3.1.4.4/R11",
                     "MS-MQRR/3.1.4.4/R12", "MS-MQRR/3.1.4.4/R14", "MS-MQRR/3.1.4.4/R15")
IDS_CLOSE_CURSOR = ("MS-MQRR/3.1.4.5/R10", "MS-MQRR/3.1.4.5/R11", "MS-MQRR/3.1.4.5/R12",
                    "MS-MQRR/3.1.4.5/R13", "MS-MQRR/3.1.4.5/R14", "MS-MQRR/3.1.4.5/R16")
IDS_PURGE = ("MS-MQRR/3.1.4.6/R7", "MS-MQRR/3.1.4.6/R8", "MS-MQRR/3.1.4.6/R9",
             "MS-MQRR/3.1.4.6/R10", "MS-MQRR/3.1.4.6/R11", "MS-MQRR/3.1.4.6/R13",
             "MS-MQRR/3.1.4.6/R14")
IDS_RECEIVE = ("MS-MQRR/3.1.4.7/R49", "MS-MQRR/3.1.4.7/R50", "MS-MQRR/3.1.4.7/R51",
               "MS-MQRR/3.1.4.7/R52", "MS-MQRR/3.1.4.7/R53", "MS-MQRR/3.1.4.7/R54",
               "MS-MQRR/3.1.4.7/R62", "MS-MQRR/3.1.4.7/R68", "MS-MQRR/3.1.4.7/R72",
               "MS-MQRR/3.1.4.7/R109", "MS-MQRR/3.1.4.7/R110", "MS-MQRR/3.1.4.7/R17",
               "MS-MQRR/3.1.4.7/R18", "MS-MQRR/3.1.4.7/R28", "MS-MQRR/3.1.4.7/R32")
IDS_LOOKUP = ("MS-MQRR/3.1.4.7/R49", "MS-MQRR/3.1.4.7/R50", "MS-MQRR/3.1.4.7/R76",
              "MS-MQRR/3.1.4.7/R81", "MS-MQRR/3.1.4.7/R86", "MS-MQRR/3.1.4.7/R91",
              "MS-MQRR/3.1.4.7/R97", "MS-MQRR/3.1.4.7/R103", "MS-MQRR/3.1.4.7/R109",
              "MS-MQRR/3.1.4.7/R17")
IDS_CANCEL = ("MS-MQRR/3.1.4.8/R8", "MS-MQRR/3.1.4.8/R9", "MS-MQRR/3.1.4.8/R10",
              "MS-MQRR/3.1.4.8/R11", "MS-MQRR/3.1.4.8/R14")
IDS_END = ("MS-MQRR/3.1.4.9/R12", "MS-MQRR/3.1.4.9/R13", "MS-MQRR/3.1.4.9/R14",
           "MS-MQRR/3.1.4.9/R17", "MS-MQRR/3.1.4.9/R18", "MS-MQRR/3.1.4.9/R19",
           "MS-MQRR/3.1.4.9/R22", "MS-MQRR/3.1.4.9/R7", "MS-MQRR/3.1.4.9/R8")
IDS_MOVE = ("MS-MQRR/3.1.4.10/R14", "MS-MQRR/3.1.4.10/R15", "MS-MQRR/3.1.4.10/R16",
            "MS-MQRR/3.1.4.10/R17", "MS-MQRR/3.1.4.10/R18", "MS-MQRR/3.1.4.10/R19",
            "MS-MQRR/3.1.4.10/R23", "MS-MQRR/3.1.4.10/R25", "MS-MQRR/3.1.4.10/R26",
            "MS-MQRR/3.1.4.10/R28", "MS-MQRR/3.1.4.10/R29", "MS-MQRR/3.1.4.10/R33")
IDS_OPEN_MOVE = ("MS-MQRR/3.1.4.11/R5",
                 "MS-MQRR/3.1.4.11/R27", "MS-MQRR/3.1.4.11/R28", "MS-MQRR/3.1.4.11/R29",
                 "MS-MQRR/3.1.4.11/R33", "MS-MQRR/3.1.4.11/R34", "MS-MQRR/3.1.4.11/R35")
IDS_TIDY = ("MS-MQMR/3.1.4.2/R1", "MS-MQMR/3.1.4.2/R2", "MS-MQMR/3.1.4.2/R10",
            "MS-MQMR/3.1.4.2/R16", "MS-MQMR/3.1.4.2/R17")
IDS_ENLIST = ("MS-MQRR/3.1.4.12/R13", "MS-MQRR/3.1.4.12/R11", "MS-MQRR/3.1.4.12/R17")
IDS_TX_RECEIVE = ("MS-MQRR/3.1.4.13/R47", "MS-MQRR/3.1.4.13/R48", "MS-MQRR/3.1.4.13/R65",
                  "MS-MQRR/3.1.4.13/R66", "MS-MQRR/3.1.4.13/R67", "MS-MQRR/3.1.4.13/R68",
                  "MS-MQRR/3.1.4.13/R69", "MS-MQRR/3.1.4.13/R70", "MS-MQRR/3.1.4.13/R71",
                  "MS-MQRR/3.1.4.13/R75", "MS-MQRR/3.1.4.13/R83", "MS-MQRR/3.1.4.13/R90",
                  "MS-MQRR/3.1.4.13/R97", "MS-MQRR/3.1.4.13/R104", "MS-MQRR/3.1.4.13/R15")
IDS_ACK_CLASS = ("MS-MQRR/3.1.4.14/R10", "MS-MQRR/3.1.4.14/R11", "MS-MQRR/3.1.4.14/R12",
                 "MS-MQRR/3.1.4.14/R13", "MS-MQRR/3.1.4.14/R14", "MS-MQRR/3.1.4.14/R16",
                 "MS-MQRR/3.1.4.14/R18")
IDS_TX_END = ("MS-MQRR/3.1.4.15/R12", "MS-MQRR/3.1.4.15/R13", "MS-MQRR/3.1.4.15/R14",
              "MS-MQRR/3.1.4.15/R17", "MS-MQRR/3.1.4.15/R18", "MS-MQRR/3.1.4.15/R19")
IDS_GET_INFO = ("MS-MQMR/3.1.4.1/R3", "MS-MQMR/3.1.4.1/R4", "MS-MQMR/3.1.4.1/R9",
                "MS-MQMR/3.1.4.1/R12", "MS-MQMR/3.1.4.1/R13", "MS-MQMR/3.1.4.1/R14",
                "MS-MQMR/3.1.4.1/R15", "MS-MQMR/3.1.4.1/R16", "MS-MQMR/3.1.4.1/R17",
                "MS-MQMR/3.1.4.1/R18", "MS-MQMR/3.1.4.1/R22", "MS-MQMR/3.1.4.1/R26",
                "MS-MQMR/3.1.4.1/R27")
IDS_ACTION = ("MS-MQMR/3.1.4.2/R1", "MS-MQMR/3.1.4.2/R2", "MS-MQMR/3.1.4.2/R3",
              "MS-MQMR/3.1.4.2/R4", "MS-MQMR/3.1.4.2/R7", "MS-MQMR/3.1.4.2/R13",
              "MS-MQMR/3.1.4.2/R14", "MS-MQMR/3.1.4.2/R15", "MS-MQMR/3.1.4.2/R18",
              "MS-MQMR/3.1.4.2/R20", "MS-MQMR/3.1.4.2/R22")

CALL_TYPES: dict[str, type[c.Call]] = c.BY_NAME


# ============================================================================== programs

def _hex(data: bytes) -> dict:
    return {"hex": bytes(data).hex()}


def ref(step: int, field: str) -> dict:
    """An argument: ``field`` of what step ``step`` returned (``lookup``: the lookup
    identifier of the message it received)."""
    return {"ref": step, "field": field}


class Executor:
    """Runs a program's queues and steps on a Case and keeps what a later step may refer to
    (module doc). Used by the machines as they go and by ``replay``."""

    RECEIVES = (c.R_StartReceive, c.R_StartTransactionalReceive)

    def __init__(self, mq: Case):
        self.mq = mq
        self.queues: list[dict] = []  # the program's queue specs
        self.formats: list[Any] = []
        self.subqueues: list[dict[str, Any]] = []  # per queue: subqueue name -> its format
        self.paths: list[str | None] = []
        self.steps: list[dict] = []
        self.results: list[Any] = []
        self.lookups: dict[int, int] = {}  # step -> the lookup identifier it received
        self.txs: dict[str, bytes] = {}
        self.open: dict[bytes, int] = {}  # target handle -> queue index, while open
        self.connected: bool | None = None  # the target's state noted by note_connected
        self.started: dict[int, Any] = {}  # a "start:" step -> its PendingCall, until finished
        self._waiter: Any = None  # the connection started calls go over
        self._oracle_queues: tuple[int, list] = (-1, [])  # the oracle's Queues of the program
        #: per step: (call, outcome, dead context, frames) for its record, made when needed
        self.made: list[tuple | None] = []
        self.calls = 0
        mq.keep_calls = False

    # ---------------------------------------------------------------- queues
    def add_queue(self, spec: dict) -> int:
        """Provision one queue of the program on the target and the oracle."""
        subqueues: dict[str, Any] = {}
        if spec.get("kind") == "outgoing":
            _, fmt = outgoing_queue(self.mq)
            path = None
        elif spec.get("subqueues"):
            fmt, subqueues = pre.queue_with_subqueues(
                self.mq, [_message(m) for m in spec.get("messages", [])],
                tuple(spec["subqueues"]), transactional=bool(spec.get("transactional")))
            path = self.mq.path_of(fmt)
        else:
            messages = [_message(m) for m in spec.get("messages", [])]
            fmt = self.mq.queue(messages, transactional=bool(spec.get("transactional")))
            path = self.mq.path_of(fmt)
        self.queues.append(spec)
        self.formats.append(fmt)
        self.subqueues.append(subqueues)
        self.paths.append(path)
        return len(self.queues) - 1

    def local_paths(self) -> list[str]:
        return [p for p in self.paths if p]

    # ---------------------------------------------------------------- values
    def value(self, arg: Any) -> Any:
        if isinstance(arg, dict):
            if "ref" in arg:
                step, field = arg["ref"], arg["field"]
                if field == "lookup":
                    return self.lookups.get(step, 0)
                return getattr(self.results[step], field, None)
            if "mgmt" in arg:
                kind = MgmtObjectType[arg["mgmt"]]
                fmt = self.formats[arg["queue"]] if "queue" in arg else None
                return MgmtObject(kind, fmt)
            if "subqueue" in arg:
                return self.subqueues[arg["queue"]][arg["subqueue"]]
            if "queue" in arg:
                return self.formats[arg["queue"]]
            if "tx" in arg:
                return self.txs.setdefault(arg["tx"], sources.uuid4().bytes)
            if "hex" in arg:
                return bytes.fromhex(arg["hex"])
            if "uuid" in arg:
                return uuid.UUID(arg["uuid"])
            if "nulls" in arg:
                return (c.PropVariant(VT_NULL),) * arg["nulls"]
            raise ValueError(f"unknown argument {arg!r}")
        if isinstance(arg, list):
            return tuple(self.value(a) for a in arg)
        return arg

    # ---------------------------------------------------------------- steps
    def run(self, step: dict) -> Any:
        """Run one step; returns the target's result (None for a control step). A result the
        documents do not allow raises CaseFailed, as in any case."""
        index = len(self.steps)
        self.steps.append(step)
        self.results.append(None)
        self.made.append(None)
        name = step["call"]
        if name.startswith("control:"):
            self._control(name[len("control:"):], step.get("args", {}))
            return None
        if name == "finish":
            return self._finish(index, step)
        started = name.startswith("start:")
        name = name[len("start:"):] if started else name
        call = CALL_TYPES[name](**{k: self.value(a) for k, a in step.get("args", {}).items()})
        ids = tuple(step.get("ids", ()))
        self.calls += 1
        mq = self.mq
        if started:  # in flight on the waiter's connection until a "finish" step
            self.started[index] = mq.start(call, target=self.waiter(), ids=ids,
                                           settle=step.get("settle", True))
            return None
        dead = mq._dead_context(call, mq.target)
        failed_before = len(mq.record.calls)
        try:
            observed = mq.call(call, ids=ids)
        except CaseFailed:
            if len(mq.record.calls) > failed_before:  # the call's own record, made by check
                self.made[index] = mq.record.calls[-1]
            raise
        claim = v.wire_frames
        self.made[index] = (call, mq.last_outcome, dead, claim() if claim else None)
        self.results[index] = observed
        self._note(index, step, call, observed)
        if isinstance(call, c.R_QMMgmtGetInfo) and observed.status == 0 and not observed.raised:
            self._check_values(call, observed, ids)
        return observed

    # ---------------------------------------------------------------- invariants
    def oracle_queues(self) -> list:
        """The oracle's Queue elements of the program's queues (found once per queue)."""
        paths = self.local_paths()
        if self._oracle_queues[0] != len(paths):
            ends = tuple("\\" + p.lower() for p in paths)
            qm = self.mq.oracle.qm.env.local_queue_manager
            self._oracle_queues = (len(paths), [q for q in qm.queue_collection
                                                if (q.pathname or "").lower().endswith(ends)])
        return self._oracle_queues[1]

    def invariants(self) -> list[str]:
        """What must hold in the oracle after every step: the ADM rules over the program's
        queues (model/invariants.py ``check_queues``), and every context handle the target
        gave the program and it has not closed names an open OpenQueueDescriptor of the
        oracle's (MS-MQRR 3.1.4.2, 3.1.4.11: the handle is the descriptor's Handle)."""
        oracle = self.mq.oracle.qm
        out = check_queues(oracle.env.local_queue_manager, self.oracle_queues())
        server = oracle.remote_read
        for handle, queue in self.open.items():
            if server.descriptor(self.mq._contexts.get(handle)) is None:
                out.append(f"MS-MQRR/3.1.4.2/R30: a context handle of queue {queue} the program "
                           f"holds open names no open OpenQueueDescriptor of the oracle")
        return out

    # ---------------------------------------------------------------- calls in flight
    def waiter(self) -> Any:
        """The connection calls started with a ``start:`` step go over: one per program, in
        the suite's association group (the program's handles are valid on it), so that the
        steps that follow run on the main connection while the call waits."""
        if self._waiter is None:
            self._waiter = self.mq.second()
        return self._waiter

    def waiting(self, step: int) -> bool:
        """Whether the oracle keeps the call ``step`` started waiting (no message yet)."""
        pending = self.started.get(step)
        return pending is not None and isinstance(pending.oracle, Pending)

    def _finish(self, index: int, step: dict) -> Any:
        """A ``finish`` step: the answer to the call step ``args.step`` started, checked
        against the oracle's completion (Case.finish_call); kept as this step's result."""
        at = step["args"]["step"]
        pending = self.started.pop(at)
        mq = self.mq
        failed_before = len(mq.record.calls)
        try:
            observed = mq.finish_call(pending, ids=tuple(step.get("ids", ())) or pending.ids)
        except CaseFailed:
            if len(mq.record.calls) > failed_before:
                self.made[index] = mq.record.calls[-1]
            raise
        self.made[index] = (pending.call, mq.last_outcome, pending.dead_context,
                            pending.frames)
        self.results[index] = observed
        self._note(index, self.steps[at], pending.call, observed)
        return observed

    def _note(self, index: int, step: dict, call: c.Call, observed: c.Result) -> None:
        ok = observed.status == 0 and not observed.raised
        if isinstance(call, (c.R_OpenQueue, c.R_OpenQueueForMove)) and ok \
                and observed.pphContext:
            queue = step["args"]["pQueueFormat"]["queue"]
            self.open[bytes(observed.pphContext)] = queue
        elif isinstance(call, c.R_CloseQueue) and ok:
            self.open.pop(bytes(call.pphContext or b""), None)
        elif isinstance(call, self.RECEIVES) and ok and observed.pSequenceId:
            queue = self.open.get(bytes(call.phContext or b""))
            transactional = queue is not None and bool(self.queues[queue].get("transactional"))
            # a message of a non-transactional queue has high octet 0: no packet to read
            self.lookups[index] = (lookup_id_of(observed) if transactional
                                   else observed.pSequenceId)

    def _control(self, action: str, args: dict) -> None:
        mq = self.mq
        if action == "send":
            mq.send(self.formats[args["queue"]], _message(args["message"]))
        elif action == "end_transaction":
            identifier = self.value({"tx": args["tx"]})
            for side in (mq.sut, mq.suite.oracle_sut):
                try:
                    side.end_transaction(identifier, bool(args["commit"]))
                except Inconclusive:
                    pass  # no such transaction there: what the next calls see is compared
        elif action == "note_connected":
            self.note_connected()
        else:
            raise ValueError(f"unknown control step {action!r}")

    # ---------------------------------------------------------------- qmmgmt
    def note_connected(self) -> None:
        """Read the target's PROPID_MGMT_MSMQ_CONNECTED and put the oracle in the same state
        (an earlier case may have left it either way); teardown restores it."""
        machine = MgmtObject(MgmtObjectType.MGMT_MACHINE)
        out = self.mq.target.call(c.R_QMMgmtGetInfo(
            pObjectFormat=machine, cp=1, aProp=(PROPID_MGMT_MSMQ_CONNECTED,),
            apVar=self.value({"nulls": 1})))
        value = out.apVar[0].value if out.status == 0 and out.apVar else None
        self.connected = value != "DISCONNECTED"
        self.mq.oracle.call(c.R_QMMgmtAction(
            pObjectFormat=machine, lpwszAction="CONNECT" if self.connected else "DISCONNECT"))

    def _check_values(self, call: c.R_QMMgmtGetInfo, observed: c.Result,
                      ids: tuple[str, ...]) -> None:
        expected = self.mq.last_outcome.result if self.mq.last_outcome else None
        if expected is None:
            return
        problems = compare_mgmt_values(call, observed, expected, self.local_paths())
        self.mq.assert_that(not problems, "R_QMMgmtGetInfo values: " + "; ".join(problems),
                            ids + ("MS-MQMR/3.1.4.1/R4",))

    # ---------------------------------------------------------------- the end
    def teardown(self) -> None:
        """Leave the target as the program found it, best effort, unchecked: close the handles
        still open, put the connection state back, delete the queues."""
        mq = self.mq
        for handle in list(self.open):
            call = c.R_CloseQueue(pphContext=handle)
            for side, value in ((mq.target, call), (mq.oracle, mq._to_oracle(call))):
                try:
                    side.call(value)
                except Exception:  # noqa: BLE001 - best effort: the example is over
                    pass
        self.open.clear()
        if self.connected is not None:
            machine = MgmtObject(MgmtObjectType.MGMT_MACHINE)
            action = "CONNECT" if self.connected else "DISCONNECT"
            for side in (mq.target, mq.oracle):
                try:
                    side.call(c.R_QMMgmtAction(pObjectFormat=machine, lpwszAction=action))
                except Exception:  # noqa: BLE001
                    pass
        for path in self.local_paths():
            for control in (mq.sut, mq.suite.oracle_sut):
                try:
                    control.delete_queue(path)
                except Exception:  # noqa: BLE001 - a queue that stays does no harm
                    pass

    def record(self, index: int) -> v.CallRecord | None:
        """Step ``index``'s call record (the call, what the target answered, what the model
        allows, its frames), made now for a call that passed."""
        made = self.made[index]
        if made is None or isinstance(made, v.CallRecord):
            return made
        call, outcome, dead, frames = made
        observed = self.results[index]
        expected = status_text(outcome.result) + (
            " or any failure" if outcome.any_failure else "") + (
            " or an RPC fault (a handle the association does not hold)"
            if dead and outcome.status != 0 else "")
        aliases = self.mq.suite.aliases
        aliases.learn(observed)
        record = v.CallRecord(call=aliases.apply(call_text(call)),
                              observed=aliases.apply(result_text(observed)),
                              expected=aliases.apply(expected), rule=outcome.rule,
                              frames=frames or {})  # {}: claim no other call's frames
        record.frames = frames or None
        self.made[index] = record
        return record

    def call_records(self) -> list[v.CallRecord]:
        return [r for r in (self.record(i) for i in range(len(self.steps))) if r is not None]

    def program(self) -> dict:
        """The program as run so far, with each call's expected and observed result."""
        steps = []
        for index, step in enumerate(self.steps):
            step = dict(step)
            record = self.record(index)
            if record is not None:
                step.update(expected=record.expected, observed=record.observed,
                            rule=record.rule, frames=record.frames)
            steps.append(step)
        return {"queues": self.queues, "steps": steps}


def _message(spec: dict) -> dict:
    out = {"body": bytes.fromhex(spec["body"]) if isinstance(spec["body"], str)
           else bytes(spec["body"])}
    for key in ("label", "priority"):
        if key in spec:
            out[key] = spec[key]
    return out


def _normal(pv: Any) -> Any:
    if not isinstance(pv, c.PropVariant):
        return pv
    value = pv.value
    if isinstance(value, list):
        value = [_normal(x) for x in value]
    elif pv.vt == VT_BLOB and value is not None:
        value = bytes(value)
    return (pv.vt, value)


def _lists(values: Any, path: str) -> bool:
    want = "\\" + path.lower()
    return any(isinstance(x, str) and (x.lower().endswith(want) or x.lower() == path.lower())
               for x in (values or []))


def compare_mgmt_values(call: c.R_QMMgmtGetInfo, observed: c.Result, expected: c.Result,
                        paths: list[str]) -> list[str]:
    """Where the target's apVar departs from the model's. The machine-wide values that depend
    on queues the program did not make are compared as the qmmgmt scenarios compare them
    (conformance/steps/qmmgmt.py): the queue lists for the program's queues only, the type
    string and the byte count by type."""
    machine = call.pObjectFormat.type == MgmtObjectType.MGMT_MACHINE
    table = MACHINE_PROPERTIES if machine else QUEUE_PROPERTIES
    if len(observed.apVar) != len(call.aProp):
        return [f"apVar has {len(observed.apVar)} entries for cp {call.cp}"]
    out = []
    for propid, got, want in zip(call.aProp, observed.apVar, expected.apVar, strict=False):
        name = table[propid].name if propid in table else f"property {propid}"
        if not isinstance(got, c.PropVariant):
            out.append(f"{name}: no PROPVARIANT")
        elif got.vt != want.vt:
            out.append(f"{name}: VARTYPE 0x{got.vt:04X}, the model gives 0x{want.vt:04X}")
        elif machine and propid in (PROPID_MGMT_MSMQ_ACTIVEQUEUES, PROPID_MGMT_MSMQ_PRIVATEQ):
            for path in paths:
                if _lists(got.value, path) != _lists(want.value, path):
                    verb = "lists" if _lists(got.value, path) else "does not list"
                    out.append(f"{name} {verb} {path}; the model does not")
        elif machine and propid == PROPID_MGMT_MSMQ_TYPE:
            if not isinstance(got.value, str):
                out.append(f"{name}: {got.value!r} is not a string")
        elif machine and propid == PROPID_MGMT_MSMQ_BYTES_IN_ALL_QUEUES:
            if not isinstance(got.value, int):
                out.append(f"{name}: {got.value!r} is not an integer")
        elif _normal(got) != _normal(want):
            out.append(f"{name}: {got.value!r}, the model gives {want.value!r}")
    return out


# ============================================================================== machines

def needs(*capabilities: str):
    """The capabilities an operation needs: on a target that declares one of them absent,
    ``dispatch`` never runs it."""

    def decorate(function):
        function.mq_needs = capabilities
        return function

    return decorate


class Choices:
    """The choices of one step, decoded from one drawn integer: ``take(k)`` is a choice in
    range(k). One draw per step keeps Hypothesis's share of a step small. The integer is
    scrambled first, so that Hypothesis's preference for small integers does not become a
    preference for the first option of every choice; 0 stays 0, so shrinking it makes every
    choice the first, plainest one."""

    def __init__(self, n: int):
        n = (n * 0x9E3779B1) & 0xFFFFFFFF
        self.n = n ^ (n >> 15)

    def take(self, k: int) -> int:
        value = self.n % k
        self.n //= k
        return value

    def of(self, options: list | tuple) -> Any:
        return options[self.take(len(options))]


#: one rule argument: the integer its choices are decoded from (Choices(k) in the rule: a
#: strategy's .map would cost Hypothesis one more span every step)
CHOICES = st.integers(0, (1 << 16) - 1)


@dataclasses.dataclass
class RunContext:
    """What the examples of one run share: the suite, the case's IDs, counters and the last
    example that failed (the minimal one, once Hypothesis has shrunk)."""

    suite: Suite
    case_id: str
    ids: tuple[str, ...]
    capabilities: set[str]
    examples: int = 0
    steps: int = 0
    calls: int = 0
    failed: Any = None  # the Executor of the last example that failed
    error: BaseException | None = None
    table: tuple[str, ...] | None = None  # the operations by weight the target can run
    #: the call mix: calls made per method (control steps as ``control:...``)
    mix: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    #: the transfer syntax every example binds (True: NDR64; None: the suite's connection's)
    ndr64: bool | None = None


class CaseMachine(RuleBasedStateMachine):
    """One example: a fresh Case on the suite, an Executor writing the program. A rule that
    finds nothing of what it would use (no handle yet) still makes its call, with a handle
    the server never issued: a negative case the documents also answer."""

    NAME = "machine"
    #: capabilities without which no rule of the machine can run (NotApplicable)
    REQUIRES: tuple[str, ...] = ()
    #: control steps run before the rules (e.g. note_connected)
    SETUP: tuple[str, ...] = ()

    def __init__(self, ctx: RunContext):
        super().__init__()
        self.ctx = ctx
        ctx.examples += 1
        self.mq = Case(ctx.suite, ctx.case_id, ctx.ids)
        if ctx.ndr64 is not None:
            self.mq.use_syntax(ctx.ndr64)
        self.ex = Executor(self.mq)
        self.broken = False

    def open_handle(self, queue: int, access: int, share: int, sub: str | None = None
                    ) -> None:
        """R_OpenQueue of queue ``queue`` (or of its subqueue ``sub``); a handle it gives is
        kept in ``self.handles``."""
        out = self.step("R_OpenQueue", IDS_OPEN, pQueueFormat=place_arg(queue, sub),
                        dwAccess=access, dwShareMode=share, pClientId={"uuid": str(CLIENT_ID)},
                        fNonRoutingServer=1)
        if out.status == 0 and not out.raised and out.pphContext:
            self.handles.append(Handle(len(self.ex.steps) - 1, queue, access, sub=sub))

    def step(self, call: str, ids: tuple[str, ...] = (), settle: bool = True,
             **args: Any) -> Any:
        """One program step: a call (``start:NAME`` starts one that may wait, ``finish``
        takes its answer; ``settle`` as Case.start's) or a control step."""
        self.ctx.steps += 1
        method = call[len("start:"):] if call.startswith("start:") else call
        if not call.startswith("control:") and call != "finish":
            self.ctx.calls += 1
        self.ctx.mix[method] += 1
        step = {"call": call, "args": args, "ids": list(ids)}
        if not settle:
            step["settle"] = False
        try:
            return self.ex.run(step)
        except BaseException as exc:
            self.broken = True
            self.ctx.failed = self.ex
            self.ctx.error = exc
            raise

    def provision(self, queues: list[dict]) -> None:
        try:
            for spec in queues:
                self.ex.add_queue(spec)
        except BaseException as exc:
            self.broken = True
            self.ctx.failed = self.ex
            self.ctx.error = exc
            raise
        for action in self.SETUP:
            self.step(f"control:{action}")

    def teardown(self) -> None:
        try:
            if not self.broken:
                self._invariants()
        finally:
            self.ex.teardown()
            self.mq.finish()

    @invariant()
    def adm_after_every_step(self) -> None:
        """After every step: the ADM rules over the example's queues and its open handles
        (Executor.invariants), and what the machine knows the oracle must hold
        (``machine_invariants``), so that a shrunk failure ends at the first step that broke one."""
        if self.broken:
            return
        problems = self.ex.invariants() + self.machine_invariants()
        if problems:
            self._broke(problems)

    def machine_invariants(self) -> list[str]:
        """The machine's own invariants over the oracle's state (none here)."""
        return []

    def _invariants(self) -> None:
        """The oracle's ADM invariants (model/invariants.py), over the whole queue manager,
        once per example."""
        problems = check_invariants(self.mq.oracle.qm.env.local_queue_manager)
        if problems:
            self._broke(problems)

    def _broke(self, problems: list[str]) -> None:
        if problems:
            self.broken = True
            self.ctx.failed = self.ex
            try:
                self.mq.assert_that(False, "the oracle breaks an ADM invariant: "
                                    + "; ".join(problems[:3]),
                                    tuple(p.split(":")[0] for p in problems[:3]))
            except CaseFailed as exc:
                self.ctx.error = exc
                raise

    @staticmethod
    def pick(items: list, n: int) -> Any:
        return items[n % len(items)]

    #: (operation, weight): the methods ``call`` draws from (module doc)
    OPERATIONS: tuple[tuple[str, int], ...] = ()

    def start(self, queues: list[dict], quiet: set[str]) -> None:
        """Begin an example: its queues, and its table of operations by weight, without the
        ones the target cannot run and the ones this example leaves out (``quiet``)."""
        table = self.ctx.table
        if table is None:
            table = self.ctx.table = tuple(
                op for op, weight in self.OPERATIONS
                if set(getattr(getattr(type(self), op), "mq_needs", ())) <= self.ctx.capabilities
                for _ in range(weight))
        self.table = tuple(op for op in table if op not in quiet) or table
        if "transactions" not in self.ctx.capabilities:
            queues = [dict(q, transactional=False) for q in queues]
        if "subqueues" not in self.ctx.capabilities:
            queues = [dict(q, subqueues=[]) for q in queues]
        self.provision(queues)

    @rule(k=CHOICES)
    def call(self, k):
        k = Choices(k)
        getattr(self, self.table[k.take(len(self.table))])(k)


MESSAGES = st.lists(st.fixed_dictionaries({
    "body": st.binary(max_size=40).map(bytes.hex),
    "label": st.text(alphabet="abcxyz", max_size=5),
    "priority": st.integers(0, 7)}), max_size=6)
#: the subqueues a queue of a program has (MS-MQDMPR 3.1.1.3: a move's destination)
SUBQUEUES = st.sampled_from([[], ["retry"], ["retry", "poison"]])
QUEUES = st.lists(st.fixed_dictionaries({"transactional": st.booleans(), "messages": MESSAGES,
                                         "subqueues": SUBQUEUES}),
                  min_size=1, max_size=2)
#: a context handle no server issued (strict context handles: an RPC fault over the wire)
NEVER_ISSUED = _hex(b"\x00" * 4 + uuid.UUID(int=0x5EED).bytes_le)
#: a message arrives: its body octets, from one rule argument
ARRIVAL_BODIES = [b"", b"m", b"arrival", bytes(range(24))]


@dataclasses.dataclass
class Handle:
    step: int  # the R_OpenQueue (or R_OpenQueueForMove) step that returned it
    queue: int
    access: int
    open: bool = True
    sub: str | None = None  # the subqueue it names, if any
    move: bool = False  # an R_OpenQueueForMove handle: its step also returned pMoveContext

    @property
    def place(self) -> tuple[int, str | None]:
        return (self.queue, self.sub)


def place_arg(queue: int, sub: str | None = None) -> dict:
    """The pQueueFormat argument of queue ``queue`` of the program, or of its subqueue."""
    return {"queue": queue} if sub is None else {"queue": queue, "subqueue": sub}


class RemoteReadMachine(CaseMachine):
    """Random RemoteRead sequences (MS-MQRR 3.1.4.1-3.1.4.9, 3.1.4.12-3.1.4.15) on queues with
    random messages, some transactional."""

    NAME = "remoteread"

    def __init__(self, ctx: RunContext):
        super().__init__(ctx)
        self.handles: list[Handle] = []
        self.cursors: list[tuple[int, int]] = []  # (handle index, R_CreateCursor step)
        self.pending: list[tuple[int, int, bool]] = []  # (handle index, request, transactional)
        self.lookups: dict[int, int] = {}  # lookup identifier -> first step that returned it
        #: lookup identifier -> the place (queue, subqueue) its message was last seen in
        self.places: dict[int, tuple[int, str | None]] = {}
        self.moves: list[int] = []  # indexes in ``handles`` of the R_OpenQueueForMove handles
        #: (handle index, request) -> the lookup identifier of the message that receive holds
        self.held: dict[tuple[int, int], int] = {}
        self.txs: list[str] = []
        self.requests = itertools.count(1)
        self.tx_names = itertools.count(1)

    OPERATIONS = (("start_receive", 6), ("open_queue", 3), ("close_queue", 1),
                  ("create_cursor", 2), ("close_cursor", 1), ("get_server_port", 1),
                  ("receive_by_lookup_id", 3), ("start_transactional_receive", 2),
                  ("end_receive", 4), ("cancel_receive", 1), ("purge_queue", 1),
                  ("enlist_transaction", 1), ("end_transaction", 1),
                  ("set_user_acknowledgement_class", 1), ("message_arrives", 3),
                  ("open_queue_for_move", 1), ("move_message", 2), ("blocking_receive", 1))

    @initialize(queues=QUEUES, quiet=st.sets(st.sampled_from([op for op, _ in OPERATIONS]),
                                             max_size=3))
    def queues(self, queues, quiet):
        self.start(queues, quiet)

    # ---------------------------------------------------------------- helpers
    def handle_arg(self, k: Choices) -> tuple[dict, int]:
        """A handle for the rule's call and its index in ``handles``: mostly an open one (the
        example opens one first if it has none); one time in 16 a closed one, or one never
        issued (index -1), for the documents' answers to a handle the server does not hold."""
        n = k.take(16)
        if n == 15:
            closed = [i for i, h in enumerate(self.handles) if not h.open]
            if closed:
                index = closed[k.take(8) % len(closed)]
                return ref(self.handles[index].step, "pphContext"), index
            return NEVER_ISSUED, -1
        live = [i for i, h in enumerate(self.handles) if h.open]
        if not live:
            self.open_queue(k)
            live = [i for i, h in enumerate(self.handles) if h.open]
            if not live:
                return NEVER_ISSUED, -1
        index = live[n % len(live)]
        return ref(self.handles[index].step, "pphContext"), index

    def machine_invariants(self) -> list[str]:
        """Every receive the machine made and has not ended has its PendingRequestEntry in
        the oracle's PendingRequestTable (MS-MQRR 3.1.1.3, 3.1.4.7: a receive adds one that
        only R_EndReceive, R_EndTransactionalReceive or R_CloseQueue remove), and every cursor
        of a descriptor the example holds open is one the example created (MS-MQRR 3.1.4.4)."""
        mq, out = self.mq, []
        server = mq.oracle.qm.remote_read
        table = server.pending_request_table.entries
        for index, request, _ in self.pending:
            mine = self.ex.results[self.handles[index].step].pphContext
            if (request, mq._contexts.get(bytes(mine))) not in table:
                out.append(f"MS-MQRR/3.1.4.7/R62: the receive of request {request} on handle "
                           f"{index} has not been ended, but the oracle's PendingRequestTable "
                           f"holds no entry for it")
        made: dict[int, set[int]] = {}
        for index, at in self.cursors:
            mine = bytes(self.ex.results[self.handles[index].step].pphContext)
            theirs = mq._cursors.get((mine, self.ex.results[at].phCursor))
            made.setdefault(index, set()).add(theirs)
        for index, held in enumerate(self.handles):
            if not held.open:
                continue
            desc = server.descriptor(mq._contexts.get(bytes(self.ex.results[held.step]
                                                            .pphContext)))
            extra = {cur.handle for cur in desc.cursor_collection} - made.get(index, set()) \
                if desc is not None else set()
            if extra:
                out.append(f"MS-MQRR/3.1.4.4/R14: handle {index}'s descriptor in the oracle "
                           f"holds cursors {sorted(extra)} the example never created")
        return out

    def lookup_arg(self, k: Choices, place: tuple[int, str | None] | None = None,
                   avoid: frozenset[int] | set[int] = frozenset()) -> Any:
        """A lookup identifier a receive returned (mostly one last seen in ``place``, when
        given and there is one; never one of ``avoid``), or one no queue holds."""
        n = k.take(8)
        if not self.lookups or n == 7:
            return UNKNOWN_LOOKUP_ID
        there = [step for lookup, step in self.lookups.items()
                 if self.places.get(lookup) == place and lookup not in avoid
                 ] if place is not None else []
        anywhere = [step for lookup, step in self.lookups.items() if lookup not in avoid]
        if not there and not anywhere:
            return UNKNOWN_LOOKUP_ID
        return ref(self.pick(there if there and n < 6 else anywhere or there, n), "lookup")

    def subqueue_of(self, queue: int, k: Choices, one_in: int = 4) -> str | None:
        """One time in ``one_in`` a subqueue of ``queue`` (if it has any), else None."""
        names = list(self.ex.subqueues[queue])
        n = k.take(one_in * len(names)) if names else 1
        return names[n // one_in] if names and n % one_in == 0 else None

    def receive_args(self, ctx: dict, size: int) -> dict:
        return {"phContext": ctx, "ulTimeout": 0, "dwRequestId": next(self.requests),
                "dwMaxBodySize": size, "dwMaxCompoundMessageSize": MAX_BODY}

    def received(self, handle: int, args: dict, out: c.Result, transactional: bool,
                 removes: bool) -> None:
        if out.status == 0 and not out.raised:
            index = len(self.ex.steps) - 1
            lookup = self.ex.lookups.get(index)
            if lookup is not None:
                self.lookups.setdefault(lookup, index)
                if handle >= 0:
                    self.places[lookup] = self.handles[handle].place
                    if removes:
                        self.held[(handle, args["dwRequestId"])] = lookup
            if removes and handle >= 0:
                self.pending.append((handle, args["dwRequestId"], transactional))

    # ---------------------------------------------------------------- rules
    # ---------------------------------------------------------------- operations
    def get_server_port(self, k):
        self.step("R_GetServerPort", IDS_PORT)

    def open_queue(self, k):
        queue = k.take(8) % len(self.ex.queues)
        access = k.of([c.RECEIVE_ACCESS, c.RECEIVE_ACCESS, c.PEEK_ACCESS, c.RECEIVE_ACCESS,
                       c.RECEIVE_ACCESS, c.PEEK_ACCESS, c.RECEIVE_ACCESS, 0x2])
        share = k.of([c.MQ_DENY_NONE, c.MQ_DENY_NONE, c.MQ_DENY_NONE, c.MQ_DENY_SHARE])
        self.open_handle(queue, access, share, self.subqueue_of(queue, k))

    def close_queue(self, k):
        handle, index = self.handle_arg(k)
        # errata close-queue-unacknowledged-message: the documents do not say what becomes of
        # a message received and not yet acknowledged when its handle is closed, so the
        # machine ends such receives first (RR_NACK) and judges only what the text fixes
        for entry in [p for p in self.pending if p[0] == index and not p[2]]:
            self.pending.remove(entry)
            self.step("R_EndReceive", IDS_END, phContext=handle, dwAck=c.RR_NACK,
                      dwRequestId=entry[1])
        out = self.step("R_CloseQueue", IDS_CLOSE, pphContext=handle)
        if index >= 0 and out.status == 0 and not out.raised:
            self.handles[index].open = False
            self.pending = [p for p in self.pending if p[0] != index]

    def create_cursor(self, k):
        handle, index = self.handle_arg(k)
        out = self.step("R_CreateCursor", IDS_CREATE_CURSOR, phContext=handle)
        if index >= 0 and out.status == 0 and out.phCursor:
            self.cursors.append((index, len(self.ex.steps) - 1))

    def close_cursor(self, k):
        if self.cursors:
            index, at = self.pick(self.cursors, k.take(8))
            handle, cursor = ref(self.handles[index].step, "pphContext"), ref(at, "phCursor")
        else:
            (handle, _), cursor = self.handle_arg(k), 0x7F
        self.step("R_CloseCursor", IDS_CLOSE_CURSOR, phContext=handle, hCursor=cursor)

    def start_receive(self, k):
        handle, index = self.handle_arg(k)
        action = k.of([c.MQ_ACTION_PEEK_CURRENT, c.MQ_ACTION_RECEIVE, c.MQ_ACTION_PEEK_NEXT])
        size = k.of([MAX_BODY, MAX_BODY, 4, 0])
        args = self.receive_args(handle, size)
        args["ulAction"] = action
        through = k.take(3)  # 0: no cursor, else one of the example's cursors
        if (through or action == c.MQ_ACTION_PEEK_NEXT) and self.cursors:
            index, at = self.pick(self.cursors, through)
            args["phContext"] = ref(self.handles[index].step, "pphContext")
            args["hCursor"] = ref(at, "phCursor")
        out = self.step("R_StartReceive", IDS_RECEIVE, **args)
        self.received(index, args, out, False, action == c.MQ_ACTION_RECEIVE)

    def receive_by_lookup_id(self, k):
        handle, index = self.handle_arg(k)
        action = k.of([c.MQ_LOOKUP_PEEK_CURRENT, c.MQ_LOOKUP_PEEK_NEXT, c.MQ_LOOKUP_PEEK_PREV,
                       c.MQ_LOOKUP_RECEIVE_CURRENT, c.MQ_LOOKUP_RECEIVE_NEXT,
                       c.MQ_LOOKUP_RECEIVE_PREV])
        args = self.receive_args(handle, MAX_BODY)
        args.update(ulAction=action, LookupId=self.lookup_arg(k))
        out = self.step("R_StartReceive", IDS_LOOKUP, **args)
        self.received(index, args, out, False, action >= c.MQ_LOOKUP_RECEIVE_CURRENT)

    @needs("transactions")
    def start_transactional_receive(self, k):
        handle, index = self.handle_arg(k)
        action = k.of([c.MQ_ACTION_RECEIVE, c.MQ_LOOKUP_RECEIVE_CURRENT,
                       c.MQ_LOOKUP_RECEIVE_NEXT, c.MQ_LOOKUP_RECEIVE_PREV,
                       c.MQ_ACTION_PEEK_CURRENT])
        args = self.receive_args(handle, MAX_BODY)
        args["ulAction"] = action
        if action in (c.MQ_LOOKUP_RECEIVE_CURRENT, c.MQ_LOOKUP_RECEIVE_NEXT,
                      c.MQ_LOOKUP_RECEIVE_PREV):
            args["LookupId"] = self.lookup_arg(k)
        t = k.take(4)
        if not self.txs or t == 3:
            self.txs.append(f"t{next(self.tx_names)}")
        args["pTransactionId"] = {"tx": self.pick(self.txs, t)}
        out = self.step("R_StartTransactionalReceive", IDS_TX_RECEIVE, **args)
        self.received(index, args, out, True, action != c.MQ_ACTION_PEEK_CURRENT)

    def end_receive(self, k):
        ack = k.of([c.RR_ACK, c.RR_NACK])
        n = k.take(8)
        bogus = k.take(8) == 7  # a request the server does not know
        if not self.pending and not bogus:
            return self.start_receive(k)
        if not bogus:
            entry = self.pick(self.pending, n)
            self.pending.remove(entry)
            index, request, transactional = entry
            handle = ref(self.handles[index].step, "pphContext")
        else:  # a request the server does not know
            (handle, _), request, transactional = self.handle_arg(k), 0x7FFF0000 + n, False
        if k.take(4) == 3 and "transactions" in self.ctx.capabilities:
            transactional = not transactional  # the other end call for this request
        name, ids = (("R_EndTransactionalReceive", IDS_TX_END) if transactional
                     else ("R_EndReceive", IDS_END))
        self.step(name, ids, phContext=handle, dwAck=ack, dwRequestId=request)
        return None

    def cancel_receive(self, k):
        handle, _ = self.handle_arg(k)
        request = self.pick(self.pending, k.take(8))[1] if self.pending else 1
        self.step("R_CancelReceive", IDS_CANCEL, phContext=handle, dwRequestId=request)

    def purge_queue(self, k):
        self.step("R_PurgeQueue", IDS_PURGE, phContext=self.handle_arg(k)[0])

    @needs("transactions")
    def enlist_transaction(self, k):
        name = f"t{next(self.tx_names)}"
        out = self.step("R_QMEnlistRemoteTransaction", IDS_ENLIST, pTransactionId={"tx": name},
                        cbPropagationToken=len(TOKEN), pbPropagationToken=_hex(TOKEN),
                        pQueueFormat={"queue": k.take(8) % len(self.ex.queues)})
        if out.status == 0:
            self.txs.append(name)

    @needs("transactions", "control:transactions")
    def end_transaction(self, k):
        if not self.txs:
            return self.start_transactional_receive(k)
        name = self.pick(self.txs, k.take(8))
        self.txs.remove(name)
        self.step("control:end_transaction", tx=name, commit=k.take(2) == 0)
        # the transaction's receives are over: their messages are deleted or back
        self.pending = [p for p in self.pending if not p[2]]
        return None

    @needs("transactions")
    def set_user_acknowledgement_class(self, k):
        handle, _ = self.handle_arg(k)
        self.step("R_SetUserAcknowledgementClass", IDS_ACK_CLASS, phContext=handle,
                  LookupId=self.lookup_arg(k), usClass=k.of([0, NACK_RECEIVE_REJECTED]))

    def message_arrives(self, k):
        queue = k.take(8) % len(self.ex.queues)
        body = ARRIVAL_BODIES[k.take(len(ARRIVAL_BODIES))] + bytes([k.take(256)])
        self.step("control:send", queue=queue,
                  message={"body": body.hex(), "priority": k.take(8)})

    # ---------------------------------------------------------------- moves (3.1.4.10-11)
    @needs("move", "subqueues")
    def open_queue_for_move(self, k):
        """R_OpenQueueForMove of a subqueue (mostly) or a queue; one time in 8 with another
        access or share mode than the documents allow."""
        queue = k.take(8) % len(self.ex.queues)
        sub = self.subqueue_of(queue, k, one_in=1 if k.take(4) else 2)
        access = k.of([c.MQ_MOVE_ACCESS] * 7 + [c.RECEIVE_ACCESS])
        share = k.of([c.MQ_DENY_NONE] * 7 + [c.MQ_DENY_SHARE])
        out = self.step("R_OpenQueueForMove", IDS_OPEN_MOVE, pQueueFormat=place_arg(queue, sub),
                        dwAccess=access, dwShareMode=share, pClientId={"uuid": str(CLIENT_ID)},
                        fNonRoutingServer=1)
        if out.status == 0 and not out.raised and out.pphContext:
            self.handles.append(Handle(len(self.ex.steps) - 1, queue, access, sub=sub,
                                       move=True))
            self.moves.append(len(self.handles) - 1)

    @needs("move", "subqueues")
    def move_message(self, k):
        """R_MoveMessage of a message the example has seen, from a handle on its queue to a
        move context (mostly one of the example's; one time in 16 none it holds), outside a
        transaction or, one time in 4, in one of the example's."""
        handle, index = self.handle_arg(k)
        if not self.moves:
            self.open_queue_for_move(k)
        n = k.take(16)
        if self.moves and n < 15:
            dest = self.handles[self.pick(self.moves, n)]
            to = ref(dest.step, "pMoveContext")
        else:
            dest, to = None, k.of([UNKNOWN_MOVE_CONTEXT, 0])
        place = self.handles[index].place if index >= 0 else None
        # errata move-received-message: the documents do not say what moving a message a
        # receive holds (received, not yet ended, outside a transaction) does to that
        # receive, so the machine moves only messages no receive of its holds
        held = {self.held.get((h, r)) for h, r, _ in self.pending}
        lookup = self.lookup_arg(k, place, avoid=held)
        tx = _hex(bytes(c.XACTUOW_SIZE))
        if k.take(4) == 3 and "transactions" in self.ctx.capabilities:
            if not self.txs or k.take(4) == 3:
                self.txs.append(f"t{next(self.tx_names)}")
            tx = {"tx": self.pick(self.txs, k.take(8))}
        out = self.step("R_MoveMessage", IDS_MOVE, phContextFrom=handle, ullContextTo=to,
                        LookupId=lookup, pTransactionId=tx)
        if out.status == 0 and dest is not None and isinstance(lookup, dict):
            moved = self.ex.value(lookup)
            self.places[moved] = dest.place

    # ---------------------------------------------------------------- receives that wait
    def blocking_receive(self, k):
        """A receive (or peek) with an infinite ulTimeout on a queue's handle, in flight on a
        second connection while the example goes on: a message that arrives completes it (3
        times in 4), or R_CancelReceive on the main connection does (MS-MQRR 3.1.4.8). On a
        queue that has a message for it, it completes at once and nothing else is made.
        Transactional on a transactional queue one time in 2."""
        live = [i for i, h in enumerate(self.handles)
                if h.open and not h.move and h.sub is None and h.access == c.RECEIVE_ACCESS]
        if not live:
            self.open_handle(k.take(8) % len(self.ex.queues), c.RECEIVE_ACCESS, c.MQ_DENY_NONE)
            live = [i for i, h in enumerate(self.handles)
                    if h.open and not h.move and h.sub is None]
            if not live:
                return self.start_receive(k)
        index = self.pick(live, k.take(8))
        held = self.handles[index]
        handle = ref(held.step, "pphContext")
        transactional = ("transactions" in self.ctx.capabilities and k.take(2) == 1
                         and bool(self.ex.queues[held.queue].get("transactional")))
        action = c.MQ_ACTION_RECEIVE if transactional else k.of(
            [c.MQ_ACTION_RECEIVE, c.MQ_ACTION_RECEIVE, c.MQ_ACTION_PEEK_CURRENT])
        # a waiting peek holds no PendingRequestEntry for R_CancelReceive to find (the model
        # answers STATUS_NOT_FOUND there): only a receive is cancelled
        cancel = k.take(4) == 3 and action != c.MQ_ACTION_PEEK_CURRENT
        args = self.receive_args(handle, MAX_BODY)
        args.update(ulAction=action, ulTimeout=c.INFINITE_TIMEOUT)
        name, ids = "R_StartReceive", IDS_RECEIVE
        if transactional:
            if not self.txs or k.take(4) == 3:
                self.txs.append(f"t{next(self.tx_names)}")
            args["pTransactionId"] = {"tx": self.pick(self.txs, k.take(8))}
            name, ids = "R_StartTransactionalReceive", IDS_TX_RECEIVE
        # a cancel must find the call waiting on the target (Case.start waits for it to get
        # there); a message that arrives completes it whether it got there first or not
        self.step(f"start:{name}", ids, settle=cancel, **args)
        at = len(self.ex.steps) - 1
        if self.ex.waiting(at):
            if cancel:
                out = self.step("R_CancelReceive", IDS_CANCEL, phContext=handle,
                                dwRequestId=args["dwRequestId"])
                cancel = out.status == 0 and not out.raised
            if not cancel:  # a message completes it (also where the cancel found nothing)
                body = ARRIVAL_BODIES[k.take(len(ARRIVAL_BODIES))] + bytes([k.take(256)])
                self.step("control:send", queue=held.queue,
                          message={"body": body.hex(), "priority": k.take(8)})
        out = self.step("finish", ids, step=at)
        self.received(index, args, out, transactional, action != c.MQ_ACTION_PEEK_CURRENT)
        return None


class QMMgmtMachine(CaseMachine):
    """Random qmmgmt sequences (MS-MQMR 3.1.4.1 R_QMMgmtGetInfo of the machine and of queues,
    3.1.4.2 R_QMMgmtAction on both) interleaved with RemoteRead calls and arrivals that change
    what the properties report (open handles, message counts, purges)."""

    NAME = "qmmgmt"
    REQUIRES = ("qmmgmt",)
    SETUP = ("note_connected",)
    #: property identifiers asked for: the tables' (MS-MQMR 2.2.3.1, 2.2.3.2) and one outside
    MACHINE_PROPS = (1, 2, 3, 4, 5, 6, 0x99)
    QUEUE_PROPS = (*range(1, 0x1C), 0x77)

    def __init__(self, ctx: RunContext):
        super().__init__(ctx)
        self.handles: list[Handle] = []
        self.pending: list[tuple[int, int]] = []
        self.requests = itertools.count(1)

    OPERATIONS = (("get_queue_info", 5), ("get_machine_info", 3), ("session_info", 1),
                  ("queue_action", 3), ("machine_action", 2), ("open_queue", 2),
                  ("receive", 3), ("end_receive", 2), ("close_queue", 1), ("purge_queue", 1),
                  ("message_arrives", 3), ("tidy", 1))

    @initialize(queues=QUEUES, outgoing=st.booleans(),
                quiet=st.sets(st.sampled_from([op for op, _ in OPERATIONS]), max_size=3))
    def queues(self, queues, outgoing, quiet):
        if outgoing and "control:outgoing" in self.ctx.capabilities:
            queues = [*queues, {"kind": "outgoing"}]
        self.start(queues, quiet)

    def object_arg(self, q: int | None) -> dict:
        if q is None:
            return {"mgmt": "MGMT_MACHINE"}
        return {"mgmt": "MGMT_QUEUE", "queue": q % len(self.ex.queues)}

    def local(self, q: int) -> int:
        return self.pick([i for i, s in enumerate(self.ex.queues) if s.get("kind") != "outgoing"],
                         q)

    @staticmethod
    def props(k: Choices, table: tuple[int, ...]) -> list[int]:
        return [k.of(table) for _ in range(1 + k.take(4))]

    # ---------------------------------------------------------------- operations
    @needs("qmmgmt")
    def get_machine_info(self, k):
        props = self.props(k, self.MACHINE_PROPS)
        self.step("R_QMMgmtGetInfo", IDS_GET_INFO, pObjectFormat=self.object_arg(None),
                  cp=len(props), aProp=props, apVar={"nulls": len(props)})

    @needs("qmmgmt")
    def get_queue_info(self, k):
        q = k.take(8)
        props = self.props(k, self.QUEUE_PROPS)
        self.step("R_QMMgmtGetInfo", IDS_GET_INFO, pObjectFormat=self.object_arg(q),
                  cp=len(props), aProp=props, apVar={"nulls": len(props)})

    @needs("qmmgmt")
    def queue_action(self, k):
        q = k.take(8)
        action = k.of(["PAUSE", "RESUME", "EOD_RESEND", "pause", "Resume", "CONNECT",
                       "NOSUCHACTION", "TIDY"])
        self.step("R_QMMgmtAction", IDS_ACTION, pObjectFormat=self.object_arg(q),
                  lpwszAction=action)

    @needs("qmmgmt")
    def machine_action(self, k):
        action = k.of(["CONNECT", "DISCONNECT", "connect", "PAUSE", "EOD_RESEND"])
        self.step("R_QMMgmtAction", IDS_ACTION, pObjectFormat=self.object_arg(None),
                  lpwszAction=action)

    @needs("qmmgmt", "control:tidy")
    def tidy(self, k):
        """R_QMMgmtAction "TIDY" on the machine, which purges every queue of the target
        (MS-MQMR 3.1.4.2's rules; model/mqmr.py choice 4), then the message count of one of
        the example's queues: run only where every queue is the suite's (SUT control of the
        reference server or the model)."""
        self.step("R_QMMgmtAction", IDS_TIDY, pObjectFormat=self.object_arg(None),
                  lpwszAction=k.of(["TIDY", "tidy"]))
        self.step("R_QMMgmtGetInfo", IDS_GET_INFO, pObjectFormat=self.object_arg(k.take(8)),
                  cp=1, aProp=[PROPID_MGMT_QUEUE_MESSAGE_COUNT], apVar={"nulls": 1})

    @needs("qmmgmt")
    def session_info(self, k):
        props = self.props(k, self.MACHINE_PROPS[:6])
        self.step("R_QMMgmtGetInfo", IDS_GET_INFO, pObjectFormat={"mgmt": "MGMT_SESSION"},
                  cp=len(props), aProp=props, apVar={"nulls": len(props)})

    # RemoteRead calls that change what qmmgmt reports
    def open_queue(self, k):
        queue = self.local(k.take(8))
        access = k.of([c.RECEIVE_ACCESS, c.PEEK_ACCESS])
        share = k.of([c.MQ_DENY_NONE, c.MQ_DENY_NONE, c.MQ_DENY_SHARE])
        self.open_handle(queue, access, share)

    def close_queue(self, k):
        live = [h for h in self.handles if h.open]
        if not live:
            return self.open_queue(k)
        handle = self.pick(live, k.take(8))
        index = self.handles.index(handle)
        # errata close-queue-unacknowledged-message (RemoteReadMachine.close_queue)
        for entry in [p for p in self.pending if p[0] == index]:
            self.pending.remove(entry)
            self.step("R_EndReceive", IDS_END, phContext=ref(handle.step, "pphContext"),
                      dwAck=c.RR_NACK, dwRequestId=entry[1])
        out = self.step("R_CloseQueue", IDS_CLOSE, pphContext=ref(handle.step, "pphContext"))
        if out.status == 0 and not out.raised:
            handle.open = False
            index = self.handles.index(handle)
            self.pending = [p for p in self.pending if p[0] != index]
        return None

    def receive(self, k):
        if not self.handles:
            return self.open_queue(k)
        index = k.take(8) % len(self.handles)
        action = k.of([c.MQ_ACTION_RECEIVE, c.MQ_ACTION_PEEK_CURRENT])
        request = next(self.requests)
        out = self.step("R_StartReceive", IDS_RECEIVE,
                        phContext=ref(self.handles[index].step, "pphContext"), ulAction=action,
                        ulTimeout=0, dwRequestId=request, dwMaxBodySize=MAX_BODY,
                        dwMaxCompoundMessageSize=MAX_BODY)
        if out.status == 0 and not out.raised and action == c.MQ_ACTION_RECEIVE:
            self.pending.append((index, request))
        return None

    def end_receive(self, k):
        if not self.pending:
            return self.receive(k)
        entry = self.pick(self.pending, k.take(8))
        self.pending.remove(entry)
        self.step("R_EndReceive", IDS_END,
                  phContext=ref(self.handles[entry[0]].step, "pphContext"),
                  dwAck=k.of([c.RR_ACK, c.RR_NACK]), dwRequestId=entry[1])
        return None

    def purge_queue(self, k):
        if not self.handles:
            return self.open_queue(k)
        self.step("R_PurgeQueue", IDS_PURGE,
                  phContext=ref(self.pick(self.handles, k.take(8)).step, "pphContext"))
        return None

    def message_arrives(self, k):
        body = ARRIVAL_BODIES[k.take(len(ARRIVAL_BODIES))] + bytes([k.take(256)])
        self.step("control:send", queue=self.local(k.take(8)), message={"body": body.hex()})


def not_runnable(machine: type[CaseMachine], capabilities: set[str]) -> tuple[str, ...]:
    """The operations of a machine that need a capability the target lacks."""
    out = []
    for name in dir(machine):
        needed = getattr(getattr(machine, name, None), "mq_needs", None)
        if needed is not None and not set(needed) <= capabilities:
            out.append(f"{name} (needs {', '.join(sorted(set(needed) - capabilities))})")
    return tuple(sorted(out))


MACHINES: dict[str, type[CaseMachine]] = {m.NAME: m for m in (RemoteReadMachine, QMMgmtMachine)}


def machine_ids(machine: type[CaseMachine]) -> tuple[str, ...]:
    """Every requirement ID the machine's rules cite (the case's ``req`` marker)."""
    names = {"remoteread": (IDS_PORT, IDS_OPEN, IDS_CLOSE, IDS_CREATE_CURSOR, IDS_CLOSE_CURSOR,
                            IDS_PURGE, IDS_RECEIVE, IDS_LOOKUP, IDS_CANCEL, IDS_END,
                            IDS_MOVE, IDS_OPEN_MOVE, IDS_ENLIST, IDS_TX_RECEIVE,
                            IDS_ACK_CLASS, IDS_TX_END),
             "qmmgmt": (IDS_GET_INFO, IDS_ACTION, IDS_TIDY, IDS_OPEN, IDS_CLOSE, IDS_RECEIVE,
                        IDS_END, IDS_PURGE)}[machine.NAME]
    return tuple(dict.fromkeys(i for group in names for i in group))


# ============================================================================== running

@dataclasses.dataclass
class StatefulRun:
    machine: str
    examples: int
    steps: int
    calls: int
    seconds: float
    failure: str | None = None
    ids: tuple[str, ...] = ()
    script: Path | None = None
    pcap: Path | None = None
    reproduced: bool | None = None
    not_run: tuple[str, ...] = ()
    #: calls made per method, control steps as ``control:...`` (RunContext.mix)
    mix: dict[str, int] = dataclasses.field(default_factory=dict)

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.seconds if self.seconds else 0.0

    def missing(self) -> list[str]:
        """The methods of RemoteRead and qmmgmt (model.calls.CALLS) this run never called."""
        return missing_methods(self.mix)


def missing_methods(mix: dict[str, int]) -> list[str]:
    """The methods of model.calls.CALLS, in opnum order per interface, that ``mix`` lacks."""
    return [call.__name__ for (_, _), call in sorted(c.CALLS.items())
            if not mix.get(call.__name__)]


def capabilities_of(suite: Suite) -> set[str]:
    """The target's declared capabilities, and what its SUT control can do that some rules
    need (``control:...``)."""
    caps = {name for name, on in suite.capabilities.declared.items() if on}
    sut = suite.sut
    commands = getattr(suite.spec, "sut_commands", {}) or {}
    if isinstance(sut, ReferenceControl) or {"commit_transaction",
                                             "abort_transaction"} <= set(commands):
        caps.add("control:transactions")
    if isinstance(sut, ReferenceControl):
        caps.add("control:outgoing")
        if suite.target_choices is not None:
            # every queue of the target is the suite's, and the oracle reads TIDY as the
            # target does (Suite._follow_choices)
            caps.add("control:tidy")
    return caps


def run_machine(mq: Case, machine: type[CaseMachine] | str, examples: int = DEFAULT_EXAMPLES,
                steps: int = DEFAULT_STEPS, seed_value: int = DEFAULT_SEED,
                report_dir: Path | str | None = None, replay_failure: bool = True,
                shrink: bool = True, ndr64: bool | None = None) -> StatefulRun:
    """Run a machine on ``mq``'s suite; the result goes into ``mq`` (a passing check with the
    figures, or the minimal failing sequence's calls and its failed check, which raises
    CaseFailed as any case does). ``shrink=False``: the first failing sequence as found.
    ``ndr64``: every example binds in NDR64 (True) or NDR (False), on an association of its
    own (Case.use_syntax; NotApplicable where the target declares no NDR64); None: over the
    suite's connection as it is bound."""
    machine = MACHINES[machine] if isinstance(machine, str) else machine
    suite = mq.suite
    caps = capabilities_of(suite)
    for cap in machine.REQUIRES:
        mq.require(cap)
    if ndr64 is not None:
        mq.use_syntax(ndr64)
    mq.queue([b"probe"])  # SUT control can provision (else Inconclusive, before any example)
    not_run = not_runnable(machine, caps)
    ctx = RunContext(suite, mq.record.case, mq.record.ids, caps, ndr64=ndr64)
    syntax = "" if ndr64 is None else " in NDR64" if ndr64 else " in NDR"
    settings = Settings(max_examples=examples, stateful_step_count=steps, deadline=None,
                        database=None, derandomize=False,
                        suppress_health_check=list(HealthCheck),
                        report_multiple_bugs=False, print_blob=False,
                        phases=(Phase.generate, Phase.shrink) if shrink else (Phase.generate,),
                        verbosity=Verbosity.quiet)

    def factory() -> CaseMachine:
        return machine(ctx)

    began = time.perf_counter()
    error = None
    try:
        run_state_machine_as_test(seed(seed_value)(factory), settings=settings)
    except BaseException as exc:  # noqa: BLE001 - reported below, with the minimal sequence
        error = exc
    run = StatefulRun(machine.NAME, ctx.examples, ctx.steps, ctx.calls,
                      time.perf_counter() - began, not_run=not_run, mix=dict(ctx.mix))
    if error is None:
        summary = (f"{machine.NAME}{syntax}: {run.examples} examples, {run.steps} steps, "
                   f"{run.calls} calls (seed {seed_value}): every result conforms"
                   + (f"; operations not run: {', '.join(not_run)}" if not_run else ""))
        # a requirement the target file expects to fail, which no step failed here, is not
        # reported as an expected failure that passed: the machine may never have reached it
        expected = suite.spec.expectations
        mq.record.ids = tuple(i for i in mq.record.ids if i not in expected)
        mq.checks.append(v.Check(mq.record.ids, True, summary))
        mq.record.messages.append(summary)
        return run
    if isinstance(error, KeyboardInterrupt):
        raise error
    failed: Executor | None = ctx.failed
    if failed is None:  # not a check of ours: a bug or a target that went away
        raise error
    cause = ctx.error if ctx.error is not None else error
    failed_checks = [ch for ch in failed.mq.checks if not ch.ok]
    run.failure = failed_checks[-1].message if failed_checks else f"{type(cause).__name__}: " \
                                                                    f"{cause}"
    # per-check attribution: a failed check whose message cites the rule that decided the
    # answer (the model's rule, a field's own) fails that rule, not every requirement the
    # machine's step exercises
    run.ids = tuple(dict.fromkeys(i for ch in failed_checks
                                  for i in (ID_IN_TEXT.findall(ch.message) or ch.ids)))
    program = dict(failed.program(), machine=machine.NAME, seed=seed_value,
                   target=suite.spec.name, failure=run.failure, ids=list(run.ids))
    if not shrink:
        program["shrunk"] = False
    if ndr64 is not None:
        program["ndr64"] = ndr64
    program["sections"] = sections_of(program)
    run.script = script_path(report_dir, machine.NAME)
    if replay_failure:
        pcap = run.script.with_suffix(".pcap")
        replayed = replay(program, suite, pcap=pcap)
        run.reproduced = replayed.failure is not None
        run.pcap = replayed.pcap
        program["replay"] = {"reproduced": run.reproduced, "failure": replayed.failure,
                             "pcap": pcap.name if run.pcap else None}
        for step, frames in zip(program["steps"], replayed.frames, strict=False):
            if frames:
                step["replay_frames"] = frames
    records = failed.call_records()
    if run.reproduced is False:
        # flaky: the first run's exchanges next to the replay's, for the two to be compared
        first = run.script.with_suffix(".first.pcap")
        recorder = getattr(suite.target, "recorder", None)
        if recorder is not None and recorder.write_exchange(
                first, [r.frames for r in records if r.frames]):
            mq.record.flaky = {"first": str(first),
                               "replay": str(run.pcap) if run.pcap else None}
            program["replay"]["first_pcap"] = first.name
        else:
            mq.record.flaky = {"first": None, "replay": str(run.pcap) if run.pcap else None}
    save_program(program, run.script)
    # the case's record: the minimal sequence's calls and its failed check
    mq.record.calls.extend(records)
    found = "shrunk to" if shrink else "not shrunk:"
    message = (f"{machine.NAME}{syntax} (seed {seed_value}), {found} {len(program['steps'])} steps "
               f"exercising {', '.join(program['sections'])}: {run.failure} "
               f"[{compact(run.ids)}]; replay: {run.script}"
               + (f" (reproduced; pcap {run.pcap})" if run.reproduced and run.pcap else
                  " (reproduced)" if run.reproduced else
                  (" (flaky: did not reproduce on replay; first run's exchanges "
                   f"{(mq.record.flaky or {}).get('first')}, the replay's {run.pcap})")
                  if run.reproduced is False else ""))
    if not isinstance(cause, CaseFailed):
        raise cause
    # the case fails on the failed check's requirements (a target file's expectation for one
    # of them makes it an expected failure), not on every one the machine's rules cite
    mq.record.ids = run.ids or mq.record.ids
    last = failed_checks[-1] if failed_checks else None
    mq.checks.append(v.Check(
        mq.record.ids, False, message,
        expected=last.expected if last is not None else None,
        observed=last.observed if last is not None else None,
        # the failing step of the shrunk program, in the script saved to replay it
        step={"path": str(run.script), "line": len(program["steps"]) - 1,
              "text": f"step {len(program['steps']) - 1}: "
                      f"{program['steps'][-1].get('call', '?')}" if program["steps"]
                      else "the machine's set-up"}))
    raise CaseFailed(message)


def compact(ids: tuple[str, ...] | list[str]) -> str:
    """``MS-MQRR/3.1.4.7/R49, R50; MS-MQRR/3.1.4.9/R8``: IDs grouped by section."""
    groups: dict[str, list[str]] = {}
    for rid in ids:
        section, _, rule_id = rid.rpartition("/")
        groups.setdefault(section, []).append(rule_id)
    return "; ".join(f"{section}/{', '.join(rules)}" for section, rules in groups.items())


def sections_of(program: dict) -> list[str]:
    """The document sections a program's steps exercise, in the order they first appear."""
    out = []
    for step in program["steps"]:
        for rid in step.get("ids", ()):
            section = rid.rpartition("/")[0]
            if section not in out:
                out.append(section)
    return out


def script_path(report_dir: Path | str | None, machine: str) -> Path:
    """A new ``<report_dir>/stateful/<machine>-<n>.py`` (a temporary directory without one)."""
    import tempfile

    base = Path(report_dir) if report_dir else Path(tempfile.mkdtemp(prefix="mqconform-"))
    out = base / "stateful"
    out.mkdir(parents=True, exist_ok=True)
    for n in itertools.count(1):
        path = out / f"{machine}-{n}.py"
        if not path.exists() and not path.with_suffix(".pcap").exists():
            path.touch()
            return path
    raise AssertionError("unreachable")


def _shown(step: dict) -> str:
    lines = (step.get("observed") or "").splitlines()
    status = lines[1].strip() if len(lines) > 1 else ""
    return f"{step['call']}  -> {status}" if status else step["call"]


def save_program(program: dict, path: Path) -> Path:
    """Write a program as a script: its docstring says what failed and how to replay it;
    ``PROGRAM`` holds the queues and steps (read back as a literal by ``load_program``)."""
    replayed = program.get("replay") or {}
    summary = ""
    if replayed:
        summary = ("Replayed on the same target when saved: "
                   + ("the failure reproduced" if replayed.get("reproduced")
                      else "it did not fail")
                   + (f"; its exchanges are in {replayed['pcap']}" if replayed.get("pcap")
                      else "")
                   + (f" (flaky: the first run's exchanges are in {replayed['first_pcap']})"
                      if replayed.get("first_pcap") else ""))
    doc = "\n".join([
        f"mqconform stateful failure: the {program['machine']} machine against "
        f"{program.get('target')}, seed {program.get('seed')}, "
        f"{'shrunk to' if program.get('shrunk', True) else 'not shrunk:'} "
        f"{len(program['steps'])} steps.",
        "",
        f"Failure: {program.get('failure')}",
        f"Requirement IDs of the failed check: {compact(program.get('ids', []))}",
        f"Sections the sequence exercises: {', '.join(program.get('sections', []))}",
        summary,
        "",
        "Replay against a target (exit 1: the failure reproduces, 0: every step conforms):",
        f"    python {path.name} --target TARGET",
        f"    mqconform replay {path.name} --target TARGET",
        "",
        "Steps (what the target answered):",
        *(f"{i:4d}. {_shown(step)}" for i, step in enumerate(program["steps"])),
    ])
    doc = doc.replace("\\", "\\\\").replace('"""', "'''")
    body = pprint.pformat(program, width=100, sort_dicts=False)
    text = (f'"""{doc}\n"""\n\nPROGRAM = {body}\n\nif __name__ == "__main__":\n'
            f"    import sys\n\n    from mqconform.conformance.stateful import replay_main\n\n"
            f"    sys.exit(replay_main(PROGRAM, sys.argv[1:], __file__))\n")
    path.write_text(text, encoding="utf-8")
    return path


# ============================================================================== replay

@dataclasses.dataclass
class Replayed:
    steps: int  # steps run
    failure: str | None  # the failed check, if a step failed
    failed_step: int | None
    case: Case
    pcap: Path | None = None
    records: list = dataclasses.field(default_factory=list)  # the calls' records
    frames: list = dataclasses.field(default_factory=list)  # per step: its frames in pcap


def replay(program: dict, suite: Suite, pcap: Path | str | None = None) -> Replayed:
    """Run a saved program on a suite's target (fresh queues, fresh transaction identifiers),
    checking every step as the machine did. Over RPC, with ``pcap``, on a connection of its
    own whose every octet is written there."""
    recorder = target = None
    ndr64 = program.get("ndr64")  # the syntax the machine bound in (None: the suite's)
    if pcap is not None and isinstance(suite.target, RpcTarget):
        recorder = Recorder()
        old = suite.target
        target = RpcTarget(old.endpoint, old.ndr64 if ndr64 is None else ndr64, name=old.name,
                           capabilities=old.capabilities, computer_name=old.computer_name,
                           recorder=recorder, **old._options)
    case = Case(suite, f"replay of {program.get('machine')}", tuple(program.get("ids", ())))
    if target is not None:
        case.target = target
    elif ndr64 is not None:
        case.use_syntax(ndr64)
    ex = Executor(case)
    failure = failed = None
    saved_frames = v.wire_frames
    v.wire_frames = recorder.claim if recorder is not None else None
    try:
        for spec in program["queues"]:
            ex.add_queue(spec)
        for step in program["steps"]:
            ex.run({k: step[k] for k in ("call", "args", "ids", "settle") if k in step})
            problems = ex.invariants()  # as the machine checks them after every step
            case.assert_that(not problems, "the oracle breaks an ADM invariant: "
                             + "; ".join(problems[:3]),
                             tuple(p.split(":")[0] for p in problems[:3]))
    except CaseFailed as exc:
        failure, failed = str(exc), len(ex.steps) - 1
    finally:
        try:
            ex.teardown()
            case.finish()
        finally:
            v.wire_frames = saved_frames
            if target is not None:
                target.close()
            if recorder is not None:
                recorder.close()
                recorder.write(pcap)
    records = [ex.record(i) for i in range(len(ex.steps))]
    return Replayed(len(ex.steps), failure, failed, case,
                    Path(pcap) if recorder is not None else None,
                    [r for r in records if r is not None],
                    [r.frames if r is not None else None for r in records])


def load_program(path: Path | str) -> dict:
    """The PROGRAM of a saved script, read as a literal (the file is not executed)."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "PROGRAM"
                                                for t in node.targets):
            return ast.literal_eval(node.value)
    raise ValueError(f"{path}: no PROGRAM = {{...}} in it")


def replay_main(program: dict, argv: list[str], script: str | None = None) -> int:
    """``python SCRIPT --target T [--pcap FILE]``: replay a saved program and say whether its
    failure reproduces (exit 1) or every step conforms (exit 0); 2 for bad usage."""
    ap = argparse.ArgumentParser(prog=f"python {Path(script).name}" if script else "replay",
                                 description="replay a shrunk stateful failure")
    ap.add_argument("--target", default="reference",
                    help="target file (YAML), reference (embedded server) or model")
    ap.add_argument("--pcap", help="write the replay's exchanges here (default: beside the "
                    "script, .replay.pcap)")
    args = ap.parse_args(argv)
    try:
        spec = load(args.target, load_catalog())
    except TargetFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    pcap = Path(args.pcap) if args.pcap else (
        Path(script).with_suffix(".replay.pcap") if script else None)
    try:
        suite = Suite(spec)
    except TargetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        out = replay(program, suite, pcap=pcap)
    except Inconclusive as exc:
        print(f"inconclusive: {exc}", file=sys.stderr)
        return 2
    finally:
        suite.close()
    for i, record in enumerate(out.records):
        print(f"{i:3d}. {record.call}\n     -> {' '.join(record.observed.split())[:160]}")
    if out.pcap is not None:
        print(f"wire: {out.pcap}")
    if out.failure is not None:
        print(f"FAILED at step {out.failed_step}: {out.failure}")
        return 1
    print(f"every one of {out.steps} steps conforms: the failure does not reproduce")
    return 0


__all__ = ["Executor", "MACHINES", "missing_methods", "QMMgmtMachine", "RemoteReadMachine",
           "StatefulRun", "load_program", "machine_ids", "replay", "replay_main", "run_machine",
           "save_program", "script_path", "NotApplicable"]
