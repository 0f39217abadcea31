"""Preconditions of the RemoteRead scenarios on moves, transactions, the Pending Request Cleanup
Timer and rundown (MS-MQRR 3.1.4.10-3.1.4.15, 3.1.5.1, 3.1.6) that the Case's own helpers do
not make. Every function takes the ``mq`` fixture (conformance.session.Case) and acts on the
target through its SUT control and, identically, on the oracle through the in-process control
API, so that the oracle computes what the documents ask of the same state. A SUT control that
cannot make a precondition raises ``Inconclusive``; a capability the target declares absent
(subqueues, transactions) raises ``NotApplicable``.

* ``queue_with_subqueues``: a queue (transactional or not) with named subqueues;
* ``end_transaction``: Transaction Commit or Abort (MS-MQDMPR 3.1.4.4, 3.1.4.5) of a
  transaction the client enlisted with R_QMEnlistRemoteTransaction;
* ``short_cleanup_timer`` / ``let_cleanup_timer_expire``: the Pending Request Cleanup Timer
  (MS-MQRR 3.1.2.2) is implementation-dependent (Windows: 5 minutes, RpcCancelTimeout). The
  suite shortens it through SUT control (``set_cleanup_timer``); when the control cannot, the
  environment variable MQCONFORM_CLEANUP_TIMER (seconds) says how long the target's timer runs
  and that the suite may wait that long; without either the case is Inconclusive;
* ``client_of_its_own`` / ``Client.drop``: a client in an association group of its own whose
  connection then fails, so that the server runs the RPC Failure Event and the rundown of its
  context handles (MS-MQRR 3.1.6.1, 3.1.6.2). The in-process model has no connections: there
  the client is a ModelTarget on the same queue manager, and dropping it raises the two events
  in the model, as the RPC runtime does for the reference server. The oracle always gets both
  events for the handles the client held.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from mqconform.conformance.session import NotApplicable
from mqconform.conformance.sut import Inconclusive
from mqconform.conformance.targets import ModelTarget, RpcTarget
from mqconform.model.formats import QueueFormat

#: how long the suite waits for a server to notice a dropped connection and run it down
RUNDOWN_LIMIT_S = 10.0
#: MQCONFORM_CLEANUP_TIMER: the target's Pending Request Cleanup Timer in seconds, when SUT
#: control cannot shorten it; its presence allows the suite to wait that long
CLEANUP_TIMER_ENV = "MQCONFORM_CLEANUP_TIMER"
#: the timer the suite sets when SUT control can set it, and the margin it waits beyond
SHORT_CLEANUP_MS = 200
CLEANUP_MARGIN_S = 0.5


def _not_applicable(why: str) -> Exception:
    return NotApplicable(why)


def require(mq, capability: str) -> None:
    if not mq.capabilities.has(capability):
        raise _not_applicable(f"the target declares no {capability}")


# ------------------------------------------------------------------------------ queues

def queue_with_subqueues(mq, messages: list[bytes | dict] = (), subqueues: tuple[str, ...] = (),
                         transactional: bool = False
                         ) -> tuple[QueueFormat, dict[str, QueueFormat]]:
    """A new queue with these messages and subqueues, on the target and on the oracle; returns
    its format and those of its subqueues (``DIRECT=OS:computer\\path;name``)."""
    if subqueues:
        require(mq, "subqueues")
    if transactional:
        require(mq, "transactions")
    path = mq.suite.queue_path()
    specs = [m if isinstance(m, dict) else {"body": m} for m in messages]
    if hasattr(mq, "note_messages"):
        mq.note_messages(specs)
    for control in (mq.sut, mq.suite.oracle_sut):
        control.provision(path, specs, transactional=transactional, subqueues=tuple(subqueues))
    fmt = mq.format_of(path)
    paths = getattr(mq, "_paths", None)
    if isinstance(paths, dict):  # lets mq.send and mq.path_of know the queue
        paths[fmt] = path
    return fmt, {name: mq.format_of(f"{path};{name}") for name in subqueues}


# ------------------------------------------------------------------------------ transactions

def end_transaction(mq, identifier: bytes, commit: bool) -> None:
    """Commit (or abort) a transaction on the target and on the oracle."""
    require(mq, "transactions")
    mq.sut.end_transaction(identifier, commit)
    mq.suite.oracle_sut.end_transaction(identifier, commit)


# ------------------------------------------------------------------------------ cleanup timer

def short_cleanup_timer(mq) -> tuple[float, Callable[[], None]]:
    """Make the Pending Request Cleanup Timer of the requests started from now on short enough
    to wait for, on the target and on the oracle (the same duration on both). Returns the
    seconds to wait for it on the target and a function that restores both."""
    ms, restore_target = SHORT_CLEANUP_MS, None
    try:
        previous = mq.sut.set_cleanup_timer(SHORT_CLEANUP_MS)
        if previous is not None:
            def restore_target() -> None:
                mq.sut.set_cleanup_timer(previous)
        wait = SHORT_CLEANUP_MS / 1000 + CLEANUP_MARGIN_S
    except Inconclusive as exc:
        configured = os.environ.get(CLEANUP_TIMER_ENV, "").strip()
        if not configured:
            raise Inconclusive(
                f"{exc}; the target's Pending Request Cleanup Timer (MS-MQRR 3.1.2.2; Windows: "
                f"5 minutes, RpcCancelTimeout) cannot be shortened, and waiting for it is not "
                f"configured (set {CLEANUP_TIMER_ENV} to its duration in seconds)") from None
        try:
            seconds = float(configured)
        except ValueError:
            raise Inconclusive(f"{CLEANUP_TIMER_ENV}={configured!r}: not a number of "
                               f"seconds") from None
        ms = int(seconds * 1000)
        wait = seconds + 2.0
    old_oracle = mq.suite.oracle_sut.set_cleanup_timer(ms)

    def restore() -> None:
        if restore_target is not None:
            restore_target()
        if old_oracle is not None:
            mq.suite.oracle_sut.set_cleanup_timer(old_oracle)

    return wait, restore


def let_cleanup_timer_expire(mq, wait: float) -> None:
    """Let the cleanup timers started since ``short_cleanup_timer`` expire."""
    let_time_pass(mq, wait)


def let_time_pass(mq, seconds: float) -> None:
    """``seconds`` with no call: real time on the target, the same time on the oracle's clock
    (whose timers fire as the target's do)."""
    time.sleep(seconds)
    qm = mq.oracle.qm
    with qm.lock:
        qm.env.advance(qm.env.now + int(seconds * 1000))
        qm._deliver()


# ------------------------------------------------------------------------------ clients

class Client:
    """Another client: ``target`` is what ``mq.call(..., target=client.target)`` calls; its
    context handles are recorded with ``holds`` so that ``drop`` can run them down."""

    def __init__(self, mq, target: Any):
        self.mq = mq
        self.target = target
        self.contexts: list[bytes] = []
        self.dropped = False

    def holds(self, context: bytes) -> bytes:
        self.contexts.append(bytes(context))
        return context

    def drop(self) -> None:
        """The client's connection fails: the target's server sees it go (over RPC), or the
        model's RPC Failure Event and rundown run for its handles (in process); the oracle's
        run for the same handles."""
        if self.dropped:
            return
        if isinstance(self.target, ModelTarget) and self.target.qm.listener is not None:
            self.target.qm.listener.on_close(self.target)
        self.dropped = True
        if isinstance(self.target, ModelTarget):
            _run_down(self.target.qm, self.contexts)
        else:  # FIN, then the server's: its rundown has usually run then (settle checks)
            self.target.close(wait=RUNDOWN_WAIT_S)
        oracle = self.mq.oracle
        mapped = getattr(self.mq, "_contexts", {})
        _run_down(oracle.qm, [mapped.get(ctx, ctx) for ctx in self.contexts])
        # a call still waiting on this connection ends with it (the rundown ends a waiting
        # read in the model, the closed socket an RPC one): wait for its thread, so that what
        # the case does next does not depend on when that thread runs (a cancel sent at the
        # case's end to a call not yet seen to end is a call of the golden pcaps and wire.pcap)
        for pending in list(getattr(self.mq, "_pending", ())):
            if pending.target is self.target:
                pending.done.wait(CALL_END_WAIT_S)


def _run_down(qm: Any, contexts: list[bytes]) -> None:
    """MS-MQRR 3.1.6.1 then 3.1.6.2 for each handle, as the RPC runtime raises them when a
    connection fails."""
    with qm.lock:
        for context in contexts:
            qm.remote_read.rpc_failure(context)
            qm.remote_read.rundown(context)
        qm._deliver()


def client_of_its_own(mq) -> Client:
    """A client in an association group of its own (MS-MQRR 2.2.4: the handles it opens are
    not the suite client's)."""
    target = mq.target
    if isinstance(target, ModelTarget):
        return Client(mq, ModelTarget(target.qm, target.name, target.capabilities))
    if not isinstance(target, RpcTarget):
        raise _not_applicable(f"{type(target).__name__}: no second client")
    separate = getattr(mq, "separate", None)
    if separate is not None:
        return Client(mq, separate())
    return Client(mq, RpcTarget(target.endpoint, target.ndr64, name=target.name,
                                capabilities=target.capabilities,
                                computer_name=target.computer_name,
                                **getattr(target, "_options", {})))


#: how long a dropped client waits for the server to close its side of the connection
RUNDOWN_WAIT_S = 2.0
#: how long a dropped client's waiting call may take to end (its thread to see the end)
CALL_END_WAIT_S = 5.0


def settle(mq, probe: Callable[[], bool], limit: float = RUNDOWN_LIMIT_S) -> bool:
    """After a client over RPC dropped, give the server time to notice: ``probe`` (calls on the
    target that change nothing and are not checked) until it answers True or ``limit``
    seconds pass. In process the events ran already."""
    if isinstance(mq.target, ModelTarget):
        return True
    give_up = time.monotonic() + limit
    while True:
        if probe():
            return True
        if time.monotonic() > give_up:
            return False
        time.sleep(0.05)


__all__ = ["Client", "client_of_its_own", "end_transaction", "let_cleanup_timer_expire",
           "queue_with_subqueues", "settle", "short_cleanup_timer", "require"]
