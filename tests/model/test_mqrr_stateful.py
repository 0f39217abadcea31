"""Random RemoteRead call sequences against the model, checking its invariants after every step:

* a message is delivered at most once after RR_ACK;
* every message position is in exactly one state;
* NACK, cancel, the cleanup timer and rundown return Locked messages to Available;
* purge turns Locked messages into PurgePending, deleted at Dequeue Message End;
* lookup identifiers increase in enqueue order, and pSequenceId is their low 7 bytes;
* cursors never move past End;
* the ADM invariants of model.invariants hold.
"""

from __future__ import annotations

import uuid

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from mqconform.model import calls as c
from mqconform.model.adm import (
    LocalMessage,
    LocalMessageType,
    MessagePositionState,
    Queue,
    QueueManager,
    QueueType,
)
from mqconform.model.formats import parse_format_name, to_queue_format
from mqconform.model.invariants import check_invariants
from mqconform.model.message_ops import enqueue_message
from mqconform.model.mqrr import RemoteReadServer
from mqconform.model.runtime import Environment, Pending
from mqconform.model.status import MQ_OK

LOW7 = (1 << 56) - 1
Available, Locked, Deleted, PurgePending = (MessagePositionState.Available,
                                            MessagePositionState.Locked,
                                            MessagePositionState.Deleted,
                                            MessagePositionState.PurgePending)


class RemoteReadMachine(RuleBasedStateMachine):
    @initialize()
    def setup(self):
        self.qm = QueueManager(computer_name="MQREF", queue_manager_quota=1 << 40,
                               identifier=uuid.UUID("11111111-2222-4333-8444-555555555555"))
        self.env = Environment(self.qm)
        self.queue = Queue(pathname="mqref\\private$\\q", queue_type=QueueType.Private,
                           queue_manager=self.qm, private_queue_number=1)
        self.qm.queue_collection.append(self.queue)
        self.server = RemoteReadServer(self.env, cleanup_ms=10_000)
        self.fmt = to_queue_format(parse_format_name("DIRECT=OS:mqref\\private$\\q"))
        self.handles: list[bytes] = []
        self.messages: list[LocalMessage] = []
        self.acked: list[int] = []  # lookup identifiers acknowledged with RR_ACK
        self.received: dict[tuple[bytes, int], int] = {}  # (handle, request) -> lookup id
        self.waiting: dict[object, tuple[bytes, int]] = {}  # token -> (handle, request)
        self.cursors: list[tuple[bytes, int]] = []
        self.next_request = 1
        self.last_lookup = 0

    # ------------------------------------------------------------------ helpers
    def _by_lookup(self, lookup_id):
        for m in self.messages:
            if m.lookup_identifier == lookup_id:
                return m
        return None

    def _collect(self):
        for done in self.server.take_completions():
            handle, request = self.waiting.pop(done.token)
            out = done.result
            if out.status == MQ_OK:
                self._note_receive(handle, request, out.result)

    def _note_receive(self, handle, request, result):
        lookup = None
        for m in self.messages:
            if m.lookup_identifier & LOW7 == result.pSequenceId:
                lookup = m.lookup_identifier
        assert lookup is not None, "pSequenceId is not the low 7 bytes of a lookup identifier"
        assert lookup not in self.acked, "a message acknowledged earlier was delivered again"
        self.received[(handle, request)] = lookup

    def _assert_returned(self, m):
        """A message given back (NACK, cleanup, rundown) is Available again, or Deleted by a
        purge, or Locked by a receive that took it since (and then maybe PurgePending, when a
        purge came after that receive) - never left locked by nobody."""
        state = m.message_position_reference.state
        if state in (Locked, PurgePending):
            assert m.lookup_identifier in self.received.values(), \
                "a returned message is still locked but no receive holds it"
        else:
            assert state in (Available, Deleted)

    # ------------------------------------------------------------------ rules
    @rule(priority=st.integers(0, 7), size=st.integers(0, 64))
    def send(self, priority, size):
        m = LocalMessage(body=bytes(size), priority=priority, type=LocalMessageType.Binary)
        assert enqueue_message(self.env, self.queue, m) == 0
        assert m.lookup_identifier > self.last_lookup, "lookup identifiers must increase"
        self.last_lookup = m.lookup_identifier
        self.messages.append(m)
        self._collect()

    @rule(peek_only=st.booleans())
    def open(self, peek_only):
        out = self.server.call(c.R_OpenQueue(
            pQueueFormat=self.fmt, dwAccess=c.PEEK_ACCESS if peek_only else c.RECEIVE_ACCESS,
            pClientId=uuid.uuid4()))
        assert out.status == MQ_OK
        if not peek_only:
            self.handles.append(out.result.pphContext)

    @precondition(lambda self: self.handles)
    @rule(data=st.data(), timeout=st.sampled_from([0, 0, 500, c.INFINITE_TIMEOUT]))
    def start_receive(self, data, timeout):
        handle = data.draw(st.sampled_from(self.handles))
        request = self.next_request
        self.next_request += 1
        token = ("recv", request)
        out = self.server.call(c.R_StartReceive(
            phContext=handle, ulAction=c.MQ_ACTION_RECEIVE, ulTimeout=timeout,
            dwRequestId=request, dwMaxBodySize=1 << 16, dwMaxCompoundMessageSize=1 << 16),
            token=token)
        if isinstance(out, Pending):
            self.waiting[token] = (handle, request)
        elif out.status == MQ_OK:
            self._note_receive(handle, request, out.result)

    @precondition(lambda self: self.handles)
    @rule(data=st.data())
    def peek(self, data):
        handle = data.draw(st.sampled_from(self.handles))
        out = self.server.call(c.R_StartReceive(phContext=handle,
                                                ulAction=c.MQ_ACTION_PEEK_CURRENT,
                                                dwMaxBodySize=1 << 16))
        if out.status == MQ_OK:
            m = next(m for m in self.messages
                     if m.lookup_identifier & LOW7 == out.result.pSequenceId)
            assert m.message_position_reference.state is Available

    @precondition(lambda self: self.received)
    @rule(data=st.data(), ack=st.booleans())
    def end_receive(self, data, ack):
        handle, request = data.draw(st.sampled_from(sorted(self.received)))
        lookup = self.received.pop((handle, request))
        out = self.server.call(c.R_EndReceive(phContext=handle,
                                              dwAck=c.RR_ACK if ack else c.RR_NACK,
                                              dwRequestId=request))
        m = self._by_lookup(lookup)
        if out.status != MQ_OK:
            return  # e.g. the cleanup timer or a purge ended it first
        if ack:
            self.acked.append(lookup)
            assert m.message_position_reference.state is Deleted
        else:
            assert m.message_position_reference.state in (Available, Deleted, Locked)
        self._collect()

    @precondition(lambda self: self.waiting)
    @rule(data=st.data())
    def cancel(self, data):
        token = data.draw(st.sampled_from(sorted(self.waiting, key=str)))
        handle, request = self.waiting[token]
        out = self.server.call(c.R_CancelReceive(phContext=handle, dwRequestId=request))
        assert out.status == MQ_OK
        self._collect()
        assert token not in self.waiting

    @precondition(lambda self: self.handles)
    @rule(data=st.data())
    def purge(self, data):
        handle = data.draw(st.sampled_from(self.handles))
        locked = [m for m in self.messages if m.message_position_reference.state is Locked]
        assert self.server.call(c.R_PurgeQueue(phContext=handle)).status == MQ_OK
        for m in locked:
            assert m.message_position_reference.state is PurgePending
        assert all(m.message_position_reference.state is not Available for m in self.messages)

    @precondition(lambda self: self.handles)
    @rule(data=st.data(), action=st.sampled_from([c.MQ_ACTION_PEEK_CURRENT,
                                                  c.MQ_ACTION_PEEK_NEXT]))
    def cursor_peek(self, data, action):
        handle = data.draw(st.sampled_from(self.handles))
        out = self.server.call(c.R_CreateCursor(phContext=handle))
        assert out.status == MQ_OK
        self.cursors.append((handle, out.result.phCursor))
        for cursor_handle in (h for ctx, h in self.cursors if ctx == handle):
            self.server.call(c.R_StartReceive(phContext=handle, hCursor=cursor_handle,
                                              ulAction=action, dwMaxBodySize=1 << 16))

    @rule(ms=st.integers(1, 20_000))
    def advance(self, ms):
        before = {k: self._by_lookup(v) for k, v in self.received.items()}
        self.env.advance(self.env.now + ms)
        self._collect()
        for key, m in before.items():
            handle, request = key
            if (request, handle) not in self.server.pending_request_table.entries:
                # cleaned up by the timer: the message is back (or was purged), or a receive
                # that was waiting has taken it at once
                self.received.pop(key, None)
                self._assert_returned(m)

    @precondition(lambda self: self.handles)
    @rule(data=st.data())
    def rundown(self, data):
        handle = data.draw(st.sampled_from(self.handles))
        self.handles.remove(handle)
        held = [self._by_lookup(v) for k, v in self.received.items() if k[0] == handle]
        assert self.server.rundown(handle) == MQ_OK
        self.received = {k: v for k, v in self.received.items() if k[0] != handle}
        self._collect()  # the handle's waiting receives end as cancelled; others may take
        assert not [t for t, v in self.waiting.items() if v[0] == handle]
        for m in held:
            self._assert_returned(m)
        self.cursors = [x for x in self.cursors if x[0] != handle]

    # ------------------------------------------------------------------ invariants
    @invariant()
    def every_position_has_one_state(self):
        for m in self.messages:
            assert isinstance(m.message_position_reference.state, MessagePositionState)

    @invariant()
    def acknowledged_messages_stay_deleted(self):
        for lookup in self.acked:
            assert self._by_lookup(lookup).message_position_reference.state is Deleted

    @invariant()
    def locked_messages_are_held_by_a_pending_request(self):
        held = set(self.received.values()) | {
            e.lookup_identifier for e in self.server.pending_request_table.entries.values()}
        for m in self.messages:
            if m.message_position_reference.state in (Locked, PurgePending):
                assert m.lookup_identifier in held

    @invariant()
    def cursors_never_pass_end(self):
        positions = self.queue.message_position_list
        for desc in self.queue.open_queue_descriptor_collection:
            for cursor in desc.cursor_collection:
                ref = cursor.message_position_reference
                assert ref is positions.start or ref is positions.end or hasattr(ref, "_key")

    @invariant()
    def adm_invariants_hold(self):
        assert check_invariants(self.qm) == []


TestRemoteReadModel = RemoteReadMachine.TestCase
TestRemoteReadModel.settings = settings(max_examples=200, stateful_step_count=50, deadline=None,
                                        suppress_health_check=[HealthCheck.too_slow])
