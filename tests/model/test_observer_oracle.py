"""The observer follows the oracle: random RemoteRead call sequences run against the model's
RemoteReadServer, and every call with its answer is fed to an Observer as a capture would show
it. After every step the observer must have found no server violation, and what it learned
from the answers alone must be what the oracle holds: the same PendingRequestEntry keys, the
same LookupIdentifier locked by each, the same closed handles. Both read the predicates of
model/mqrr.py (registers_pending_request, holds_lock, ends_pending_request, closes_handle);
this machine shows that reading them from the answers gives the oracle's state.

The Pending Request Cleanup Timer is set beyond any clock the machine reaches: an entry it
removes leaves no trace in a capture, so no observer can follow it. Likewise a dwRequestId
used again on a handle while a receive with it still waits (the client breaks
MS-MQRR/3.1.4.7/R11, which the observer reports): the table keeps one entry per key, and which
receive's entry it keeps then depends on events no capture shows. Such keys are left out of
the comparison.
"""

from __future__ import annotations

import itertools
import uuid

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from mqconform.model import calls as c
from mqconform.model.adm import LocalMessage, LocalMessageType, Queue, QueueManager, QueueType
from mqconform.model.formats import parse_format_name, to_queue_format
from mqconform.model.message_ops import enqueue_message
from mqconform.model.mqrr import RemoteReadServer
from mqconform.model.observer import Observed, Observer, observation_fields
from mqconform.model.runtime import Environment, Pending
from mqconform.model.status import MQ_OK

REQUEST_IDS = st.integers(1, 6)  # few, so that ids meet again on a handle


class ObserverFollowsOracle(RuleBasedStateMachine):
    @initialize()
    def setup(self):
        qm = QueueManager(computer_name="MQREF", queue_manager_quota=1 << 40,
                          identifier=uuid.UUID("11111111-2222-4333-8444-555555555555"))
        self.env = Environment(qm)
        queue = Queue(pathname="mqref\\private$\\q", queue_type=QueueType.Private,
                      queue_manager=qm, private_queue_number=1)
        qm.queue_collection.append(queue)
        self.queue = queue
        self.server = RemoteReadServer(self.env, cleanup_ms=1 << 40)
        self.fmt = to_queue_format(parse_format_name("DIRECT=OS:mqref\\private$\\q"))
        self.observer = Observer("server")
        self.clock = itertools.count(1)
        #: DCE/RPC call_ids: never one of a call still outstanding on the connection (C706
        #: 12.6.3.1); counting the calls not yet fed reused the id of a receive still waiting
        self.call_ids = itertools.count(1)
        self.handles: list[bytes] = []  # opened, maybe closed since
        self.lookups: list[int] = []
        self.calls: list[Observed] = []  # in request order, fed once all before have answers
        self.waiting: dict[object, tuple[Observed, c.Call]] = {}
        self.cursors: list[tuple[bytes, int]] = []
        self.ambiguous: set[tuple[int, str]] = set()  # (dwRequestId, handle hex): see above

    # ------------------------------------------------------------------ driving
    def _call(self, call: c.Call) -> Observed:
        if isinstance(call, c.R_StartReceive) and any(
                isinstance(w, c.R_StartReceive) and w.phContext == call.phContext
                and w.dwRequestId == call.dwRequestId for _, w in self.waiting.values()):
            self.ambiguous.add((call.dwRequestId, bytes(call.phContext).hex()))
        token = object()
        seen = Observed(method=type(call).__name__, request_time=float(next(self.clock)),
                        response_time=None, status=None, connection=1,
                        call_id=next(self.call_ids))
        self.calls.append(seen)
        out = self.server.call(call, token=token)
        if isinstance(out, Pending):
            self.waiting[token] = (seen, call)
        else:
            self._answered(seen, call, out.result)
        self._collect()
        return seen

    def _answered(self, seen: Observed, call: c.Call, result: c.Result) -> None:
        seen.response_time = float(next(self.clock))
        seen.status = result.status
        for name, value in observation_fields(call, result).items():
            setattr(seen, name, value)

    def _collect(self) -> None:
        for done in self.server.take_completions():
            seen, call = self.waiting.pop(done.token)
            self._answered(seen, call, done.result.result)
        while self.calls and self.calls[0].response_time is not None:
            self.observer.feed(self.calls.pop(0))

    # ------------------------------------------------------------------ rules
    @rule(size=st.integers(0, 32))
    def send(self, size):
        m = LocalMessage(body=bytes(size), type=LocalMessageType.Binary)
        assert enqueue_message(self.env, self.queue, m) == MQ_OK
        self.lookups.append(m.lookup_identifier)
        self._collect()

    @rule(peek_only=st.booleans())
    def open(self, peek_only):
        seen = self._call(c.R_OpenQueue(
            pQueueFormat=self.fmt, dwAccess=c.PEEK_ACCESS if peek_only else c.RECEIVE_ACCESS,
            pClientId=uuid.uuid4()))
        assert seen.status == MQ_OK
        self.handles.append(bytes.fromhex(seen.result_handle))

    @precondition(lambda self: self.handles)
    @rule(data=st.data(), request=REQUEST_IDS,
          action=st.sampled_from([c.MQ_ACTION_RECEIVE, c.MQ_ACTION_RECEIVE,
                                  c.MQ_ACTION_PEEK_CURRENT]),
          timeout=st.sampled_from([0, 300, c.INFINITE_TIMEOUT]))
    def start_receive(self, data, request, action, timeout):
        self._call(c.R_StartReceive(
            phContext=data.draw(st.sampled_from(self.handles)), ulAction=action,
            ulTimeout=timeout, dwRequestId=request, dwMaxBodySize=1 << 16,
            dwMaxCompoundMessageSize=1 << 16))

    @precondition(lambda self: self.handles and self.lookups)
    @rule(data=st.data(), request=REQUEST_IDS,
          action=st.sampled_from([c.MQ_LOOKUP_RECEIVE_CURRENT, c.MQ_LOOKUP_PEEK_CURRENT]))
    def receive_by_lookup(self, data, request, action):
        self._call(c.R_StartReceive(
            phContext=data.draw(st.sampled_from(self.handles)), ulAction=action,
            LookupId=data.draw(st.sampled_from(self.lookups)), dwRequestId=request,
            dwMaxBodySize=1 << 16, dwMaxCompoundMessageSize=1 << 16))

    @precondition(lambda self: self.handles)
    @rule(data=st.data(), request=REQUEST_IDS, ack=st.sampled_from([c.RR_ACK, c.RR_NACK, 7]))
    def end_receive(self, data, request, ack):
        self._call(c.R_EndReceive(phContext=data.draw(st.sampled_from(self.handles)),
                                  dwAck=ack, dwRequestId=request))

    @precondition(lambda self: self.handles)
    @rule(data=st.data(), request=REQUEST_IDS)
    def cancel(self, data, request):
        self._call(c.R_CancelReceive(phContext=data.draw(st.sampled_from(self.handles)),
                                     dwRequestId=request))

    @precondition(lambda self: self.handles)
    @rule(data=st.data())
    def purge(self, data):
        self._call(c.R_PurgeQueue(phContext=data.draw(st.sampled_from(self.handles))))

    @precondition(lambda self: self.handles)
    @rule(data=st.data())
    def cursor_receive(self, data):
        handle = data.draw(st.sampled_from(self.handles))
        seen = self._call(c.R_CreateCursor(phContext=handle))
        if seen.status == MQ_OK:
            self.cursors.append((handle, seen.cursor))
        if self.cursors:
            handle, cursor = data.draw(st.sampled_from(self.cursors))
            if data.draw(st.booleans()):
                self._call(c.R_CloseCursor(phContext=handle, hCursor=cursor))
            self._call(c.R_StartReceive(phContext=handle, hCursor=cursor,
                                        ulAction=c.MQ_ACTION_RECEIVE,
                                        dwRequestId=data.draw(REQUEST_IDS),
                                        dwMaxBodySize=1 << 16))

    @precondition(lambda self: self.handles)
    @rule(data=st.data())
    def close(self, data):
        self._call(c.R_CloseQueue(pphContext=data.draw(st.sampled_from(self.handles))))

    @rule(ms=st.integers(1, 1_000))
    def advance(self, ms):
        self.env.advance(self.env.now + ms)
        self._collect()

    # ------------------------------------------------------------------ invariants
    @invariant()
    def no_server_violation(self):
        server = [v for v in self.observer.violations if v.actor == "server"]
        assert not server, server

    @invariant()
    def the_observer_learned_the_oracles_state(self):
        if self.calls:  # a receive still waits: the observer has not been told everything
            return
        self.observer.finish()
        oracle = {(rid, ctx.hex()): e.lookup_identifier or None
                  for (rid, ctx), e in self.server.pending_request_table.entries.items()}
        learned = {(rid, key): entry.lookup_identifier
                   for key, h in self.observer.handles.items()
                   for rid, entry in h.pending.items()}
        for key in self.ambiguous:
            oracle.pop(key, None)
            learned.pop(key, None)
        assert learned == oracle, "pending requests and their locks"
        for ctx in self.handles:
            closed = self.observer.handles[ctx.hex()].closed
            assert closed == (self.server.descriptor(ctx) is None), "closed handles"


TestObserverFollowsOracle = ObserverFollowsOracle.TestCase
TestObserverFollowsOracle.settings = settings(max_examples=500, stateful_step_count=40,
                                              deadline=None,
                                              suppress_health_check=[HealthCheck.too_slow])
