"""model/host.py: the handle limit per association group (choice 1), the rundown in parts
(``depart`` / ``run_down``: the same end as ``leave``), and model/refs.py's collections that
keep an open's cost independent of the handles others hold."""

from __future__ import annotations

import sys
import uuid

from mqconform.model import calls as c
from mqconform.model.adm import MessagePositionState, QueueAccessType, QueueShareMode
from mqconform.model.formats import parse_format_name, to_queue_format
from mqconform.model.host import NCA_S_FAULT_CONTEXT_MISMATCH, QueueManagerHost, Refused
from mqconform.model.provisioning import provision
from mqconform.model.refs import CursorCollection, DescriptorCollection
from mqconform.model.status import MQ_ERROR_INSUFFICIENT_RESOURCES, MQ_OK

ORDERS = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\orders"))
DOCUMENT = {"queue_manager": {"computer_name": "MQREF"},
            "queues": [{"path": "private$\\orders",
                        "messages": [{"body": "one"}, {"body": "two"}, {"body": "three"}]}]}


def make(handle_limit=None) -> QueueManagerHost:
    return QueueManagerHost(provision(DOCUMENT).env, handle_limit=handle_limit)


def open_call(access=c.PEEK_ACCESS, move=False):
    if move:
        return c.R_OpenQueueForMove(pQueueFormat=ORDERS, dwAccess=c.MQ_MOVE_ACCESS,
                                    dwShareMode=c.MQ_DENY_NONE, pClientId=uuid.uuid4(),
                                    fNonRoutingServer=1)
    return c.R_OpenQueue(pQueueFormat=ORDERS, dwAccess=access, dwShareMode=c.MQ_DENY_NONE,
                         pClientId=uuid.uuid4(), fNonRoutingServer=1)


def opened(h, group, **kw) -> bytes:
    out = h.call(group, open_call(**kw))
    assert out.status == MQ_OK and not out.result.raised
    return bytes(out.result.pphContext)


def orders(h):
    [q] = [q for q in h.env.local_queue_manager.queue_collection if q.pathname.endswith("orders")]
    return q


def test_the_limit_counts_handles_cursors_and_move_handles_of_one_group():
    h = make(handle_limit=3)
    h.join("a", 1)
    h.join("b", 2)
    ctx = opened(h, "a")
    opened(h, "a", move=True)
    assert h.call("a", c.R_CreateCursor(phContext=ctx)).status == MQ_OK
    over = h.call("a", open_call(move=True))
    assert over.result.raised and over.status == MQ_ERROR_INSUFFICIENT_RESOURCES
    assert over.any_failure and over.rule == "MS-MQRR/3.1.4.11/R25"
    over = h.call("a", open_call())
    assert over.result.raised and over.status == MQ_ERROR_INSUFFICIENT_RESOURCES
    cur = h.call("a", c.R_CreateCursor(phContext=ctx))
    assert not cur.result.raised and cur.status == MQ_ERROR_INSUFFICIENT_RESOURCES
    assert len(h.remote_read.contexts()) == 2  # nothing created past the limit
    opened(h, "b")  # another group is not counted with this one
    assert h.call("a", c.R_CloseQueue(pphContext=ctx)).status == MQ_OK  # the cursor with it
    assert h.groups["a"].held == 1
    opened(h, "a")


def test_calls_outside_any_group_are_not_limited():
    h = make(handle_limit=1)
    for _ in range(3):
        opened(h, None)


def test_a_rundown_in_parts_ends_as_leave_does():
    """Handles with many cursors (closed a part at a time), a waiting receive, received and
    unacknowledged messages: every handle run down, every message back, the waits ended."""
    results = []
    for parts in (False, True):
        h = make()
        h.join("g", 1)
        receiver = opened(h, "g", access=c.RECEIVE_ACCESS)
        for request_id in (1, 2):
            out = h.call("g", c.R_StartReceive(phContext=receiver, ulAction=c.MQ_ACTION_RECEIVE,
                                               dwRequestId=request_id, dwMaxBodySize=64,
                                               dwMaxCompoundMessageSize=1024))
            assert out.status == MQ_OK
        peekers = [opened(h, "g") for _ in range(20)]
        for ctx in peekers[:3]:
            for _ in range(40):
                assert h.call("g", c.R_CreateCursor(phContext=ctx)).status == MQ_OK
        rundown = h.depart("g", 1) if parts else None
        if parts:
            assert h.check(h.join("other", 9), c.R_CloseQueue(pphContext=peekers[0])) == \
                Refused(NCA_S_FAULT_CONTEXT_MISMATCH, "MS-MQRR/2.2.4.2/R1")
            steps = 0
            while not h.run_down(rundown, 8):
                steps += 1
            assert steps >= 15 and rundown.done == 21  # 120 cursors, 8 a part
        else:
            assert h.leave("g", 1) == 21
        q = orders(h)
        results.append(([p.state for p in q.message_position_list],
                        len(q.open_queue_descriptor_collection),
                        len(h.remote_read.contexts()),
                        len(h.remote_read.pending_request_table.entries)))
    assert results[0] == results[1] == ([MessagePositionState.Available] * 3, 0, 0, 0)


def test_a_handle_named_in_a_departed_group_is_refused_while_its_rundown_goes_on():
    h = make()
    h.join("g", 1)
    ctx = opened(h, "g")
    rundown = h.depart("g", 1)
    h.join("g", 2)  # a new member of a group of that id holds none of the old handles
    refused = h.call("g", c.R_CloseQueue(pphContext=ctx))
    assert isinstance(refused, Refused) and refused.fault == NCA_S_FAULT_CONTEXT_MISMATCH
    assert h.run_down(rundown, 10) and not h.remote_read.contexts()


class _Desc:
    def __init__(self, share, access):
        self.share_mode, self.access_type = share, access


def test_the_descriptor_collection_counts_share_mode_and_access():
    deny, none = QueueShareMode.DenyReceive, QueueShareMode.DenyNone
    peek, receive = QueueAccessType.PeekAccess, QueueAccessType.ReceiveAccess
    a, b = _Desc(deny, receive), _Desc(none, peek)
    coll = DescriptorCollection([a, b])
    assert coll == [a, b] and coll.has(deny, receive) and coll.has(none, receive, peek)
    coll.remove(a)
    assert not coll.has(deny, receive) and coll == [b] and a not in coll
    assert not coll.discard(a)


class _Cursor:
    handle = 0


def test_the_cursor_collection_finds_a_cursor_by_the_handle_set_after_it_was_added():
    coll = CursorCollection()
    first, second = _Cursor(), _Cursor()
    coll.append(first)
    first.handle = 7  # Initialize (MS-MQDMPR 3.2.7.1) sets it after Open Cursor adds it
    coll.append(second)
    second.handle = 9
    assert coll.find(7) is first and coll.find(9) is second and coll.find(8) is None
    coll.remove(first)
    assert coll.find(7) is None and coll == [second]


def test_a_collection_emptied_after_a_flood_gives_its_table_back_and_keeps_its_order():
    none, peek = QueueShareMode.DenyNone, QueueAccessType.PeekAccess
    descs = [_Desc(none, peek) for _ in range(20_000)]
    coll = DescriptorCollection(descs)
    grown = sys.getsizeof(coll._items)
    for d in descs[:19_990]:
        coll.remove(d)
    assert sys.getsizeof(coll._items) < grown // 50
    assert coll == descs[19_990:] and coll.first() is descs[19_990] and coll.has(none, peek)


def test_the_server_gives_back_the_tables_of_its_handles_once_they_are_closed():
    h = make()
    server = h.remote_read
    contexts = [opened(h, 1) for _ in range(3000)]
    moves = [opened(h, 1, move=True) for _ in range(3000)]
    grown = sys.getsizeof(server._contexts), sys.getsizeof(server._move_contexts)
    for context in contexts + moves[:-1]:
        out = h.call(1, c.R_CloseQueue(pphContext=context))
        assert out.status == MQ_OK
    assert sys.getsizeof(server._contexts) < grown[0] // 5
    assert sys.getsizeof(server._move_contexts) < grown[1] // 5
    assert server.descriptor(moves[-1]) is not None
