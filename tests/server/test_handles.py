"""One client's handles cannot stall or starve the others (server/app.py, model/host.py): a
group holds at most ``handle_limit`` context handles and cursors (past it an open or a cursor
fails with MQ_ERROR_INSUFFICIENT_RESOURCES, model/host.py choice 1), and the rundown of a
departed group (MS-MQRR 3.1.6.2) runs in parts that let other clients' calls in between.
Real RPC on 127.0.0.1."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from mqconform.conformance.client import RpcClient
from mqconform.model import calls as c
from mqconform.model.adm import MessagePositionState
from mqconform.model.formats import parse_format_name, to_queue_format
from mqconform.model.status import MQ_ERROR_INSUFFICIENT_RESOURCES, MQ_OK
from mqconform.server.main import start
from mqconform.wire import dcerpc as d
from mqconform.wire import ndr

QUEUES = """
queue_manager: {computer_name: MQREF}
queues:
  - path: private$\\orders
    messages: [{body: one}, {body: two}, {body: three}, {body: four}]
  - path: private$\\canary
    messages: [{body: tweet}]
  - path: private$\\empty
"""
ORDERS = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\orders"))
CANARY = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\canary"))
EMPTY = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\empty"))
REMOTEREAD = d.SyntaxId(c.REMOTEREAD_UUID, 1, 0)


def serve(tmp_path, handle_limit):
    path = tmp_path / "queues.yaml"
    path.write_text(QUEUES)
    return start(host="127.0.0.1", port=0, queues=str(path), handle_limit=handle_limit)


@pytest.fixture
def limited(tmp_path):
    r = serve(tmp_path, handle_limit=3)
    yield r
    r.stop()


@pytest.fixture
def unlimited(tmp_path):
    r = serve(tmp_path, handle_limit=None)
    yield r
    r.stop()


def client(r) -> RpcClient:
    cl = RpcClient(timeout=30)
    cl.connect(f"ncacn_ip_tcp:127.0.0.1[{r.rpc.address[1]}]")
    return cl


def open_call(fmt=ORDERS, access=c.PEEK_ACCESS) -> c.R_OpenQueue:
    return c.R_OpenQueue(pQueueFormat=fmt, dwAccess=access, pClientId=uuid.uuid4(),
                         fNonRoutingServer=1)


def opened(cl, fmt=ORDERS, access=c.PEEK_ACCESS) -> bytes:
    out = cl.call(open_call(fmt, access))
    assert not out.raised and out.status == MQ_OK, f"0x{out.status:08X}"
    return out.pphContext


def cursor(cl, ctx) -> c.R_CreateCursorResult:
    return cl.call(c.R_CreateCursor(phContext=ctx))


def peek(cl, ctx, request_id=1) -> c.Result:
    return cl.call(c.R_StartReceive(phContext=ctx, ulAction=c.MQ_ACTION_PEEK_CURRENT,
                                    dwRequestId=request_id, dwMaxBodySize=1 << 16,
                                    dwMaxCompoundMessageSize=1 << 16))


def receive(cl, ctx, request_id) -> c.Result:
    return cl.call(c.R_StartReceive(phContext=ctx, ulAction=c.MQ_ACTION_RECEIVE,
                                    dwRequestId=request_id, dwMaxBodySize=1 << 16,
                                    dwMaxCompoundMessageSize=1 << 16))


def queue(r, name):
    [found] = [q for q in r.handler.env.local_queue_manager.queue_collection
               if q.pathname.lower().endswith(name)]
    return found


def wait_for(predicate, what: str, limit: float = 60.0) -> None:
    """Poll until ``predicate()`` holds (a bound against hanging, not a measurement)."""
    deadline = time.monotonic() + limit
    while not predicate():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.005)


def test_past_the_handle_limit_opens_and_cursors_fail_with_insufficient_resources(limited):
    with client(limited) as cl:
        first = opened(cl)
        second = opened(cl)
        made = cursor(cl, first)
        assert made.status == MQ_OK  # 3 held: two handles and a cursor
        refused = cl.call(open_call())
        assert refused.raised and refused.status == MQ_ERROR_INSUFFICIENT_RESOURCES
        assert cursor(cl, second).status == MQ_ERROR_INSUFFICIENT_RESOURCES
        with limited.handler.lock:  # nothing was created for the refused calls
            assert len(limited.handler.remote_read.contexts()) == 2
            assert len(queue(limited, "orders").open_queue_descriptor_collection) == 2
        # closing makes room again: a cursor for a cursor, a handle for a handle
        assert cl.call(c.R_CloseCursor(phContext=first, hCursor=made.phCursor)).status == MQ_OK
        again = cursor(cl, second)
        assert again.status == MQ_OK
        assert cl.call(open_call()).status == MQ_ERROR_INSUFFICIENT_RESOURCES
        assert cl.call(c.R_CloseQueue(pphContext=second)).status == MQ_OK  # and its cursor
        opened(cl)
        assert cursor(cl, first).status == MQ_OK
        assert cursor(cl, first).status == MQ_ERROR_INSUFFICIENT_RESOURCES


def test_the_handle_limit_is_per_client(limited):
    with client(limited) as greedy, client(limited) as other:
        for _ in range(3):
            opened(greedy)
        assert greedy.call(open_call()).status == MQ_ERROR_INSUFFICIENT_RESOURCES
        ctx = opened(other, CANARY)  # another group: its own three
        assert cursor(other, ctx).status == MQ_OK
        assert peek(other, ctx).status == MQ_OK


def test_a_departed_clients_handles_count_no_more(limited):
    greedy = client(limited)
    for _ in range(3):
        opened(greedy)
    greedy.close()
    wait_for(lambda: not limited.handler.remote_read.contexts(), "the rundown")
    with client(limited) as fresh:
        for _ in range(3):
            opened(fresh)


def test_a_large_rundown_runs_in_parts_while_another_client_is_served(unlimited):
    """20,000 handles, a few with cursors and received, unacknowledged messages: another
    client's peek on another queue completes while the rundown is still going on, and when it
    ends every handle is gone and every message is back in its queue."""
    r = unlimited
    handler = r.handler
    greedy = client(r)
    held = [opened(greedy) for _ in range(20_000)]
    receiver = opened(greedy, access=c.RECEIVE_ACCESS)
    for request_id in range(1, 5):  # the four messages locked, never acknowledged
        assert receive(greedy, receiver, request_id).status == MQ_OK
    for ctx in held[:50]:
        assert cursor(greedy, ctx).status == MQ_OK
    orders = queue(r, "orders")
    assert [p.state for p in orders.message_position_list] == [MessagePositionState.Locked] * 4

    canary = client(r)
    canary_ctx = opened(canary, CANARY)
    parts_before = handler.rundown_parts
    closer = threading.Thread(target=greedy.close)
    closer.start()
    wait_for(lambda: handler.rundowns and handler.rundowns[0].done > 0, "the rundown starts")
    rundown = handler.rundowns[0]
    total = len(rundown.contexts)
    assert total == 20_001

    answer = peek(canary, canary_ctx)  # waits for at most one part, not the whole rundown
    done_when_answered = rundown.done
    assert answer.status == MQ_OK
    assert done_when_answered < total, "the other client's call waited for the whole rundown"

    closer.join()
    wait_for(lambda: not handler.rundowns, "the rundown ends")
    assert rundown.finished and rundown.done == total
    assert handler.rundown_parts - parts_before > 1
    with handler.lock:
        assert handler.remote_read.contexts() == [canary_ctx]
        assert len(orders.open_queue_descriptor_collection) == 0
        assert [p.state for p in orders.message_position_list] == \
            [MessagePositionState.Available] * 4
        assert not handler.remote_read.pending_request_table.entries
    canary.close()


def test_64_pending_receives_of_a_connection_are_ended_when_it_drops(limited, client_for):
    """As many waiting receives as a connection may have in flight (server/rpc.py max_calls,
    64): the connection drops, and the rundown ends every one of them."""
    handler = limited.handler
    raw = client_for(limited.rpc)
    ack = raw.bind([(0, REMOTEREAD, [d.NDR])])
    assert isinstance(ack.body, d.BindAck)
    answer = raw.typed(open_call(EMPTY, c.RECEIVE_ACCESS))
    ctx = answer.pphContext
    for request_id in range(1, 65):
        call = c.R_StartReceive(phContext=ctx, ulAction=c.MQ_ACTION_RECEIVE, ulTimeout=600_000,
                                dwRequestId=request_id, dwMaxBodySize=1024,
                                dwMaxCompoundMessageSize=1024)
        raw.request(0, call.opnum, ndr.encode_request(call, False))
    wait_for(lambda: handler.host.waiting() == 64, "64 receives waiting")
    [empty] = [q for q in handler.env.local_queue_manager.queue_collection
               if q.pathname.lower().endswith("empty")]
    [desc] = empty.open_queue_descriptor_collection
    assert len(desc.waiting_message_read_operation_collection) == 64
    raw.close()
    wait_for(lambda: not handler.remote_read.contexts(), "the rundown")
    with handler.lock:
        assert handler.host.waiting() == 0 and not handler._waiting
        assert not desc.waiting_message_read_operation_collection
        assert not empty.open_queue_descriptor_collection
        assert not handler.remote_read.pending_request_table.entries
