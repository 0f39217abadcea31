"""The model as observer (model/observer.py): each rule reports what a history proves and
nothing it does not; learned state (handles opened before the capture, lost calls) never
yields a violation; conformant clients against the model itself give none."""

from __future__ import annotations

import random
import threading

import pytest

from mqconform.model import calls as c
from mqconform.model.observer import RULES, Observed, Observer, observation_fields, observe
from mqconform.model.status import MQ_ERROR_IO_TIMEOUT, MQ_ERROR_MESSAGE_NOT_FOUND

H1, H2, H3 = "00" * 19 + "01", "00" * 19 + "02", "00" * 19 + "03"
Q = "direct=tcp:127.0.0.1\\private$\\orders"
OK, DENIED, BAD = 0, 0xC0000022, 0xC00E0006


class History:
    """Calls of one server, one after another (each answered before the next is sent)
    unless ``overlap`` says otherwise; frames count up."""

    def __init__(self) -> None:
        self.calls: list[Observed] = []
        self.t = 100.0

    def add(self, method: str, status: int | None = OK, client: str = "10.0.0.1:50000",
            respond_after: float = 0.001, **fields) -> Observed:
        self.t += 0.01
        n = len(self.calls) + 1
        call = Observed(method=method, request_time=self.t, response_time=self.t + respond_after,
                        status=status, capture="c.pcap", server="10.0.0.9:2103", client=client,
                        connection=int(client.rsplit(":", 1)[1]) % 100, call_id=n,
                        request_frame=2 * n, response_frame=2 * n + 1, **fields)
        self.calls.append(call)
        return call

    def open(self, handle: str = H1, access: int = c.RECEIVE_ACCESS, **kw) -> Observed:
        return self.add("R_OpenQueue", queue=Q, access=access, result_handle=handle, **kw)

    def receive(self, handle: str, rid: int, lookup: int, action: int = c.MQ_ACTION_RECEIVE,
                **kw) -> Observed:
        return self.add("R_StartReceive", handle=handle, request_id=rid, action=action,
                        sequence_id=lookup, cursor=kw.pop("cursor", 0), **kw)

    def end(self, handle: str, rid: int, ack: int = c.RR_ACK, **kw) -> Observed:
        return self.add("R_EndReceive", handle=handle, request_id=rid, ack=ack, **kw)

    def violations(self) -> list[tuple[str, int]]:
        """(requirement, call_id) of each violation."""
        return sorted((v.requirement, v.call_id) for v in observe(self.calls, "srv"))


@pytest.fixture
def h() -> History:
    return History()


def test_a_clean_history_has_no_violation(h):
    h.open(H1)
    h.open(H2, access=c.PEEK_ACCESS)
    h.receive(H1, 1, 7)
    h.receive(H2, 1, 8, action=c.MQ_ACTION_PEEK_CURRENT)
    h.end(H1, 1, c.RR_ACK)
    h.receive(H1, 2, 8)
    h.end(H1, 2, c.RR_NACK)
    h.receive(H2, 2, 8, action=c.MQ_ACTION_PEEK_CURRENT)  # NACKed: back in the queue
    h.add("R_PurgeQueue", status=DENIED, handle=H2)
    h.add("R_CreateCursor", handle=H1, cursor=5)
    h.add("R_CloseCursor", handle=H1, cursor=5)
    h.add("R_CloseQueue", handle=H1, result_handle=None)
    h.add("R_CloseQueue", handle=H2, result_handle=None)
    h.open(H1)  # a handle value may come back once closed
    h.receive(H1, 1, 9)
    h.end(H1, 1)
    assert h.violations() == []


# ------------------------------------------------------------------ acknowledged messages


@pytest.mark.req("MS-MQRR/3.1.4.9/R7")
def test_an_acknowledged_message_returned_again_is_a_violation(h):
    h.open(H1)
    h.open(H2, access=c.PEEK_ACCESS)
    h.receive(H1, 1, 7)
    h.end(H1, 1, c.RR_ACK)
    peek = h.receive(H2, 1, 7, action=c.MQ_ACTION_PEEK_CURRENT)
    again = h.receive(H1, 2, 7)
    assert h.violations() == [("MS-MQRR/3.1.4.9/R7", peek.call_id),
                              ("MS-MQRR/3.1.4.9/R7", again.call_id)]
    [v, _] = observe(h.calls, "srv")
    assert (v.actor, v.severity, v.request_frame) == ("server", "error", peek.request_frame)
    assert "acknowledged by call_id 4" in v.explanation


def test_a_negative_acknowledgement_lets_the_message_come_back(h):
    h.open(H1)
    h.receive(H1, 1, 7)
    h.end(H1, 1, c.RR_NACK)
    h.receive(H1, 2, 7)
    h.end(H1, 2)
    assert h.violations() == []


def test_a_read_that_overlaps_the_acknowledgement_proves_nothing(h):
    h.open(H1)
    h.open(H2, access=c.PEEK_ACCESS)
    h.receive(H1, 1, 7)
    end = h.end(H1, 1, respond_after=0.05)  # answered late
    h.t = end.request_time + 0.001  # a peek sent before the ACK was answered
    h.receive(H2, 1, 7, action=c.MQ_ACTION_PEEK_CURRENT)
    assert h.violations() == []


def test_a_transactional_acknowledgement_is_not_a_removal_yet(h):
    h.open(H1)
    h.add("R_StartTransactionalReceive", handle=H1, request_id=1, action=c.MQ_ACTION_RECEIVE,
          sequence_id=7, cursor=0)
    h.add("R_EndTransactionalReceive", handle=H1, request_id=1, ack=c.RR_ACK)
    h.receive(H1, 2, 7)  # the transaction aborted
    h.end(H1, 2)
    assert h.violations() == []


# ------------------------------------------------------------------ locked messages


@pytest.mark.req("MS-MQDMPR/3.1.7.3.2/R10", "MS-MQDMPR/3.1.7.3.2/R11")
def test_a_locked_message_returned_to_another_is_a_violation_once_the_lock_is_proven(h):
    h.open(H1)
    h.open(H2)
    h.receive(H1, 1, 7)
    twice = h.receive(H2, 1, 7)
    peeked = h.receive(H2, 2, 7, action=c.MQ_ACTION_PEEK_CURRENT)
    h.end(H2, 1, c.RR_NACK)
    h.end(H1, 1)  # succeeds: the lock was held all along
    assert h.violations() == [("MS-MQDMPR/3.1.7.3.2/R10", twice.call_id),
                              ("MS-MQDMPR/3.1.7.3.2/R11", peeked.call_id)]
    severities = {v.requirement: v.severity for v in observe(h.calls, "srv")}
    assert severities["MS-MQDMPR/3.1.7.3.2/R11"] == "warning"  # AllowPeekWhenLocked unseen


def test_a_lock_the_server_may_have_released_proves_nothing(h):
    h.open(H1)
    h.open(H2)
    h.receive(H1, 1, 7)
    h.receive(H2, 1, 7)  # the cleanup timer may have unlocked it:
    h.end(H2, 1)
    h.end(H1, 1, status=BAD)  # ... and the holder's end fails, as it then must
    assert h.violations() == []


def test_a_lock_whose_holder_never_ends_proves_nothing(h):
    h.open(H1)
    h.open(H2)
    h.receive(H1, 1, 7, client="10.0.0.1:50001")  # its connection dropped: rundown
    h.receive(H2, 1, 7)
    h.end(H2, 1)
    assert h.violations() == []


# ------------------------------------------------------------------ handles


@pytest.mark.req("MS-MQRR/3.1.4.3/R5")
def test_close_must_send_back_null(h):
    h.open(H1)
    close = h.add("R_CloseQueue", handle=H1, result_handle=H1)
    assert h.violations() == [("MS-MQRR/3.1.4.3/R5", close.call_id)]


@pytest.mark.req("MS-MQRR/3.1.4.2/R19", "MS-MQDMPR/3.1.7.1.5/R21")
def test_open_must_give_a_handle_not_already_open(h):
    h.open(H1)
    dup = h.open(H1)
    null = h.add("R_OpenQueue", queue=Q, access=1, result_handle=None)
    h.add("R_OpenQueue", status=BAD, queue=Q, access=1, result_handle=None)  # a failure
    assert h.violations() == [("MS-MQDMPR/3.1.7.1.5/R21", dup.call_id),
                              ("MS-MQRR/3.1.4.2/R19", null.call_id)]


@pytest.mark.req("MS-MQDMPR/3.1.7.1.5/R21")
def test_a_handle_given_again_to_another_client_is_a_violation_only_while_its_holder_lives(h):
    """A handle whose connection ended was run down (MS-MQRR 3.1.6.2): a server restarted,
    or reusing the values of handles run down, may return it again. Only the holder naming
    it after the second open proves that it was still open."""
    h.open(H1, client="10.0.0.1:50001")
    h.open(H1, client="10.0.0.3:50003")  # the first holder is gone (restart or rundown)
    assert h.violations() == []
    h.open(H2, client="10.0.0.1:50001")
    again = h.open(H2, client="10.0.0.3:50003")
    h.add("R_CreateCursor", handle=H2, client="10.0.0.1:50001", cursor=7)  # still its holder's
    assert h.violations() == [("MS-MQDMPR/3.1.7.1.5/R21", again.call_id)]


@pytest.mark.req("MS-MQRR/3.1.4.6/R14")
def test_purge_needs_receive_access(h):
    h.open(H1, access=c.PEEK_ACCESS)
    h.open(H2, access=c.RECEIVE_ACCESS)
    purged = h.add("R_PurgeQueue", handle=H1)
    h.add("R_PurgeQueue", handle=H2)
    h.add("R_PurgeQueue", handle=H3)  # learned handle: its access is unknown
    assert h.violations() == [("MS-MQRR/3.1.4.6/R14", purged.call_id)]


@pytest.mark.req("MS-MQRR/3.1.4.7/R52", "MS-MQRR/3.1.4.7/R3", "MS-MQRR/3.1.4.5/R4")
def test_a_closed_handle_used_again_is_the_clients_fault_and_success_the_servers(h):
    h.open(H1)
    h.add("R_CloseQueue", handle=H1, result_handle=None)
    refused = h.receive(H1, 1, None, status=0xC00E0007)
    taken = h.receive(H1, 2, 9)
    assert h.violations() == [("MS-MQRR/3.1.4.7/R3", refused.call_id),
                              ("MS-MQRR/3.1.4.7/R3", taken.call_id),
                              ("MS-MQRR/3.1.4.7/R52", taken.call_id)]
    actors = {(v.requirement, v.actor) for v in observe(h.calls, "srv")}
    assert ("MS-MQRR/3.1.4.7/R3", "client") in actors
    assert ("MS-MQRR/3.1.4.7/R52", "server") in actors


@pytest.mark.req("MS-MQRR/3.1.4.7/R53", "MS-MQRR/3.1.4.5/R7", "MS-MQRR/3.1.4.5/R13")
def test_a_closed_cursor_used_again(h):
    h.open(H1)
    h.add("R_CreateCursor", handle=H1, cursor=5)
    h.add("R_CloseCursor", handle=H1, cursor=5)
    peek = h.receive(H1, 1, 7, action=c.MQ_ACTION_PEEK_NEXT, cursor=5)
    close = h.add("R_CloseCursor", handle=H1, cursor=5)
    h.add("R_CreateCursor", handle=H1, cursor=5)  # the value comes back
    h.receive(H1, 2, 7, action=c.MQ_ACTION_PEEK_NEXT, cursor=5)
    assert h.violations() == [("MS-MQRR/3.1.4.5/R13", close.call_id),
                              ("MS-MQRR/3.1.4.5/R7", peek.call_id),
                              ("MS-MQRR/3.1.4.5/R7", close.call_id),
                              ("MS-MQRR/3.1.4.7/R53", peek.call_id)]


# ------------------------------------------------------------------ request ids, pairing


@pytest.mark.req("MS-MQRR/3.1.4.9/R9", "MS-MQRR/3.1.4.9/R14")
def test_an_end_for_a_request_no_receive_made(h):
    h.open(H1)
    taken = h.end(H1, 4)
    refused = h.end(H1, 5, status=BAD)
    assert h.violations() == [("MS-MQRR/3.1.4.9/R14", taken.call_id),
                              ("MS-MQRR/3.1.4.9/R9", taken.call_id),
                              ("MS-MQRR/3.1.4.9/R9", refused.call_id)]


def test_an_end_on_a_handle_opened_before_the_capture_proves_nothing(h):
    h.end(H3, 4)  # its receive may be older than the capture
    assert h.violations() == []


def test_a_lost_call_makes_the_server_incomplete_for_whole_history_rules(h):
    h.open(H1)
    lost = h.receive(H1, 4, None, status=None)
    lost.complete, lost.response_time = False, None  # no answer in the capture
    h.add("R_Something", status=None).complete = False
    h.end(H1, 4)
    h.end(H1, 6)
    assert h.violations() == []


@pytest.mark.req("MS-MQRR/3.1.4.7/R11")
def test_a_request_id_in_use_must_not_be_used_again(h):
    h.open(H1)
    h.receive(H1, 1, 7)
    reused = h.receive(H1, 1, 8)
    h.end(H1, 1)
    h.receive(H1, 1, 9)  # once the end completed, the id is free
    h.end(H1, 1)
    h.receive(H1, 2, 10, action=c.MQ_ACTION_PEEK_CURRENT)
    h.receive(H1, 2, 10, action=c.MQ_ACTION_PEEK_CURRENT)  # peeks leave nothing pending
    assert ("MS-MQRR/3.1.4.7/R11", reused.call_id) in h.violations()
    assert [r for r, _ in h.violations()] == ["MS-MQRR/3.1.4.7/R11"]


@pytest.mark.req("MS-MQRR/3.1.4.8/R14", "MS-MQRR/3.1.4.9/R14", "MS-MQRR/3.1.4.9/R9")
def test_a_failed_cancel_leaves_the_receive_pending_for_its_end(h):
    """MS-MQRR 3.1.4.8 removes the PendingRequestEntry only when the cancel succeeds; a cancel
    of a receive that already returned its message fails and the entry stays, locked, so the
    R_EndReceive that follows ends it: no violation on either side (the reference's own
    traffic showed R14 and R9 here while the observer forgot the entry at any cancel)."""
    h.open(H1)
    h.receive(H1, 1, 7)
    h.add("R_CancelReceive", handle=H1, request_id=1, status=BAD)
    h.end(H1, 1)
    h.receive(H1, 1, 8)  # the id is free again once the end completed
    h.end(H1, 1)
    assert h.violations() == []


@pytest.mark.req("MS-MQRR/3.1.4.9/R14", "MS-MQRR/3.1.4.9/R9")
def test_a_cancel_that_succeeded_ends_the_receive(h):
    h.open(H1)
    h.receive(H1, 1, 7)
    h.add("R_CancelReceive", handle=H1, request_id=1)
    ended = h.end(H1, 1)  # MQ_OK for an entry the cancel removed; the client named it again
    assert h.violations() == [("MS-MQRR/3.1.4.9/R14", ended.call_id),
                              ("MS-MQRR/3.1.4.9/R9", ended.call_id)]


@pytest.mark.req("MS-MQRR/3.1.4.9/R14", "MS-MQRR/3.1.4.7/R11")
def test_an_end_sent_while_its_receive_still_waits_ends_that_receives_entry(h):
    """A receive (MQ_ACTION_RECEIVE) has its PendingRequestEntry from the start of its wait;
    an R_EndReceive for it sent while it still waits removes that entry and finds no message
    (MQ_ERROR_MESSAGE_NOT_FOUND); the receive times out later. Nothing is pending after it,
    so the next receive with that dwRequestId reuses nothing (the oracle's reading; found by
    tests/model/test_observer_oracle.py)."""
    h.open(H1)
    h.receive(H1, 1, None, status=MQ_ERROR_IO_TIMEOUT, respond_after=0.5)
    h.end(H1, 1, ack=c.RR_NACK, status=MQ_ERROR_MESSAGE_NOT_FOUND)  # during the wait
    observer = Observer("srv")
    for call in h.calls:
        observer.feed(call)
    observer.finish()
    assert observer.handles[H1].pending == {}
    h.t += 1.0
    h.receive(H1, 1, 9)
    h.end(H1, 1)
    h.add("R_CloseQueue", handle=H1, result_handle=None)
    assert h.violations() == []


@pytest.mark.req("MS-MQRR/3.1.4.7/R1")
def test_a_receive_must_be_ended_or_cancelled_before_the_handle_closes(h):
    h.open(H1)
    forgotten = h.receive(H1, 1, 7)
    h.receive(H1, 2, 8)
    h.add("R_CancelReceive", handle=H1, request_id=2, status=BAD)  # paired, if in vain
    h.add("R_CloseQueue", handle=H1, result_handle=None)
    assert h.violations() == [("MS-MQRR/3.1.4.7/R1", forgotten.call_id)]
    [v] = observe(h.calls, "srv")
    assert v.actor == "client"


# ------------------------------------------------------------------ stateless rules


@pytest.mark.req("MS-MQRR/3.1.4.1/R6")
def test_the_server_port_must_be_a_port(h):
    h.add("R_GetServerPort", status=2103)
    h.add("R_GetServerPort", status=0)  # the failure value (3.1.4.1/R7)
    bad = h.add("R_GetServerPort", status=0x10000 + 2103)
    assert h.violations() == [("MS-MQRR/3.1.4.1/R6", bad.call_id)]


@pytest.mark.req("MS-MQMR/3.1.4.1/R7", "MS-MQMR/3.1.4.1/R14")
def test_qmmgmt_property_types_and_sessions(h):
    from mqconform.model.formats import MgmtObjectType as T
    from mqconform.model.mqmr import (
        PROPID_MGMT_MSMQ_CONNECTED,
        PROPID_MGMT_QUEUE_MESSAGE_COUNT,
        PROPID_MGMT_QUEUE_PATHNAME,
        QUEUE_PROPERTIES,
    )

    props = (PROPID_MGMT_QUEUE_PATHNAME, PROPID_MGMT_QUEUE_MESSAGE_COUNT)
    right = tuple(QUEUE_PROPERTIES[p].vt for p in props)
    h.add("R_QMMgmtGetInfo", object_type=T.MGMT_QUEUE, queue=Q, props=props, vts=right)
    h.add("R_QMMgmtGetInfo", object_type=T.MGMT_QUEUE, queue=Q, props=props, vts=(1, 1))
    wrong = h.add("R_QMMgmtGetInfo", object_type=T.MGMT_QUEUE, queue=Q, props=props,
                  vts=(right[1], right[1]))
    session = h.add("R_QMMgmtGetInfo", object_type=T.MGMT_SESSION,
                    props=(PROPID_MGMT_MSMQ_CONNECTED,), vts=(0x1F,))
    h.add("R_QMMgmtGetInfo", status=BAD, object_type=T.MGMT_QUEUE, queue=Q, props=props,
          vts=(3, 3))  # a failure sends apVar back as it came
    assert h.violations() == [("MS-MQMR/3.1.4.1/R14", session.call_id),
                              ("MS-MQMR/3.1.4.1/R7", wrong.call_id)]


@pytest.mark.req("MS-MQMR/3.1.4.2/R3")
def test_qmmgmt_actions_outside_the_table_must_fail(h):
    from mqconform.model.formats import MgmtObjectType as T

    h.add("R_QMMgmtAction", object_type=T.MGMT_MACHINE, action_text="connect")
    h.add("R_QMMgmtAction", status=BAD, object_type=T.MGMT_MACHINE, action_text="FROB")
    taken = h.add("R_QMMgmtAction", object_type=T.MGMT_MACHINE, action_text="FROB")
    session = h.add("R_QMMgmtAction", object_type=T.MGMT_SESSION, action_text="CONNECT")
    assert h.violations() == [("MS-MQMR/3.1.4.2/R3", taken.call_id),
                              ("MS-MQMR/3.1.4.2/R3", session.call_id)]


def test_every_rule_is_a_requirement_of_the_catalog():
    from mqconform.spec.catalog import load

    ids = {r.id for r in load() if not r.retired}
    assert set(RULES) <= ids, sorted(set(RULES) - ids)


def test_events_are_taken_in_time_order_across_connections(h):
    """Calls fed by request time; a response is applied when its time comes, before a later
    request of another connection."""
    obs = Observer("srv")
    h.open(H1)
    h.open(H2, access=c.PEEK_ACCESS)
    h.receive(H1, 1, 7)
    end = h.end(H1, 1, respond_after=0.002)
    peek = h.receive(H2, 1, 7, action=c.MQ_ACTION_PEEK_CURRENT)
    assert peek.request_time > end.response_time
    found = []
    for call in h.calls:
        found += obs.feed(call)
    found += obs.finish()
    assert [(v.requirement, v.call_id) for v in found] == [("MS-MQRR/3.1.4.9/R7",
                                                            peek.call_id)]


# ------------------------------------------------------------------ against the model


class _App:
    """What server.control.ControlApi needs of a server, on the bare model."""

    def __init__(self, env):
        self.env = env
        self.lock = threading.RLock()

    def _deliver(self) -> None:
        pass


class _ModelRpc:
    """A client whose calls the model answers in process; records Observed rows."""

    def __init__(self, servers, history: list, clock: list, client: str):
        self.servers, self.history, self.clock, self.client = servers, history, clock, client

    def call(self, typed: c.Call) -> c.Result:
        server = self.servers[0] if typed.interface == c.REMOTEREAD else self.servers[1]
        self.clock[0] += 0.001
        t = self.clock[0]
        out = server.call(typed, token=None) if typed.interface == c.REMOTEREAD \
            else server.call(typed)
        result = out.result
        self.clock[0] += 0.001
        fields = observation_fields(typed, None if result.raised else result)
        self.history.append(Observed(
            method=type(typed).__name__, request_time=t, response_time=self.clock[0],
            status=None if result.raised else result.status, capture="model",
            server="model", client=self.client, call_id=len(self.history) + 1, **fields))
        return result

    def close(self) -> None:
        pass


@pytest.mark.parametrize("seed", range(6, 12))  # seeds whose draws reach every method below
def test_conformant_clients_against_the_model_give_no_violation(seed):
    """The synthetic corpus's clients (conformance/synth.py), answered by the model in process:
    the observer must find nothing, the model being the reference; their cursors peek at
    messages (the first read of a cursor at its current one, later ones at the next)."""
    from mqconform.conformance import synth
    from mqconform.model.mqmr import QMMgmtServer
    from mqconform.model.mqrr import RemoteReadServer
    from mqconform.model.provisioning import new_queue_manager
    from mqconform.model.runtime import Environment
    from mqconform.server.control import ControlApi

    env = Environment(new_queue_manager(None))
    env.local_addresses = ("127.0.0.1",)
    servers = (RemoteReadServer(env), QMMgmtServer(env))
    control = ControlApi(_App(env))
    for name in synth.QUEUES:
        control.create_queue({"path": f"private$\\{name}"})
    history: list[Observed] = []
    clock = [1000.0]
    rnd = random.Random(seed)
    clients = [synth._Client(_ModelRpc(servers, history, clock, f"10.0.0.{i}:5000{i}"), 80)
               for i in range(5)]
    live = list(clients)
    sent = 0
    while live:
        cl = rnd.choice(live)
        if cl.steps <= 0:
            for handle in list(cl.handles):
                synth._close(cl, handle)
            live.remove(cl)
            continue
        cl.steps -= 1
        synth._step(cl, rnd)
        for q in control.queues():
            if q["messages"]["Available"] < 5 and q["path"].lower().endswith(synth.QUEUES):
                for _ in range(10):
                    sent += 1
                    control.send(q["path"], {"body": f"m{sent}"})
    methods = {o.method for o in history}
    assert {"R_OpenQueue", "R_StartReceive", "R_EndReceive", "R_CloseQueue",
            "R_QMMgmtGetInfo", "R_PurgeQueue"} <= methods
    returned = {o.action for o in history
                if o.method == "R_StartReceive" and o.cursor and o.status == 0}
    assert {c.MQ_ACTION_PEEK_CURRENT, c.MQ_ACTION_PEEK_NEXT} <= returned
    assert observe(history, "model") == []


@pytest.mark.parametrize("status", [0x00000001, 0x12345678, 0x400E0001])
def test_a_status_neither_mq_ok_nor_a_failure_hresult(h, status):
    h.open(H1)
    h.add("R_CloseQueue", status=status, handle=H1)
    h.add("R_QMMgmtAction", status=status, object_type=1, action_text="CONNECT")
    assert h.violations() == [("MS-MQMR/3.1.4.2/R4", 3), ("MS-MQRR/3.1.4.3/R7", 2)]


def test_failures_of_any_code_are_in_the_documented_set(h):
    h.open(H1)
    h.add("R_CloseQueue", status=0xC00E0007, handle=H1)
    h.add("R_PurgeQueue", status=DENIED, handle=H1)
    h.add("R_GetServerPort", status=2103)
    assert h.violations() == []


def test_a_receive_needs_receive_access_and_a_peek_does_not(h):
    h.open(H1, access=c.PEEK_ACCESS)
    h.receive(H1, 1, 7, action=c.MQ_ACTION_PEEK_CURRENT)
    h.receive(H1, 2, 7, action=c.MQ_ACTION_RECEIVE)
    assert h.violations() == [("MS-MQRR/3.1.4.7/R6", 3)]


def test_a_transactional_receive_must_refuse_peeking(h):
    h.open(H1)
    h.add("R_StartTransactionalReceive", handle=H1, request_id=1, sequence_id=5,
          action=c.MQ_ACTION_PEEK_CURRENT, cursor=0)
    assert h.violations() == [("MS-MQRR/3.1.4.13/R69", 2)]


def test_a_receive_by_lookup_id_returns_that_message(h):
    h.open(H1)
    h.receive(H1, 1, 7, action=c.MQ_LOOKUP_PEEK_CURRENT, lookup_id=7)
    h.receive(H1, 2, 8, action=c.MQ_LOOKUP_PEEK_CURRENT, lookup_id=7)
    h.receive(H1, 3, 9, action=c.MQ_LOOKUP_PEEK_NEXT, lookup_id=7)  # another, rightly
    assert h.violations() == [("MS-MQRR/3.1.4.7/R17", 3)]


def test_a_purged_message_must_not_come_back_on_the_handle(h):
    h.open(H1)
    h.receive(H1, 1, 7, action=c.MQ_ACTION_PEEK_CURRENT)
    h.add("R_PurgeQueue", handle=H1)
    h.receive(H1, 2, 7, action=c.MQ_ACTION_PEEK_CURRENT)
    h.receive(H1, 3, 8, action=c.MQ_ACTION_PEEK_CURRENT)  # a new message
    assert h.violations() == [("MS-MQRR/3.1.4.6/R11", 4)]
    assert [v.severity for v in observe(h.calls, "srv")] == ["warning"]


def test_a_message_moved_away_and_back_may_outlive_a_purge(h):
    h.open(H1)
    h.receive(H1, 1, 7, action=c.MQ_ACTION_PEEK_CURRENT)
    h.add("R_MoveMessage", handle=H1, lookup_id=7)
    h.add("R_PurgeQueue", handle=H1)
    h.receive(H1, 2, 7, action=c.MQ_ACTION_PEEK_CURRENT)
    assert h.violations() == []


def test_purge_refused_for_access_must_say_access_denied(h):
    h.open(H1, access=c.PEEK_ACCESS)
    h.add("R_PurgeQueue", status=DENIED, handle=H1)
    h.add("R_PurgeQueue", status=0xC00E0007, handle=H1)
    assert h.violations() == [("MS-MQRR/3.1.4.6/R14", 3)]
    # on another connection the handle may have been run down: any failure will do
    h.add("R_PurgeQueue", status=0xC00E0007, handle=H1, client="10.0.0.1:50001")
    assert h.violations() == [("MS-MQRR/3.1.4.6/R14", 3)]
