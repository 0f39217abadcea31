"""Association groups owned by the server (server/rpc.py AssociationGroups) and handles no
client can guess (server/app.py UnguessableIds): ids are the server's to issue, a join is
honoured only for a live group from its creator's address and by its principal, and the
context handles, cursor handles and move contexts of one group are refused in another. The
attacks these close: a client binding into another's group to receive, acknowledge and close
its handles, with or without authentication."""

from __future__ import annotations

import time
import uuid

import pytest

from mqconform.conformance.client import Credentials, RpcClient
from mqconform.model import calls as c
from mqconform.model.formats import parse_format_name, to_queue_format
from mqconform.model.status import MQ_OK
from mqconform.server.app import NCA_S_FAULT_CONTEXT_MISMATCH, UnguessableIds
from mqconform.server.main import start
from mqconform.server.rpc import RPC_S_ACCESS_DENIED
from mqconform.wire import dcerpc as d

QUEUES = """
queue_manager: {computer_name: MQREF}
queues:
  - path: private$\\orders
    subqueues: [retry]
    messages: [{body: one}, {body: two}, {body: three}]
"""
SECURE = """
queue_manager: {computer_name: MQREF}
security:
  authentication: none
  users:
    - {name: alice, password: alice-Pw-1}
    - {name: bob, password: bob-Pw-2}
queues:
  - path: private$\\orders
    messages: [{body: alices}]
    access: {peek: ["*", anonymous], receive: [alice]}
"""
ORDERS = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\orders"))
RETRY = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\orders;retry"))
REMOTEREAD = d.SyntaxId(c.REMOTEREAD_UUID, 1, 0)


@pytest.fixture
def running(tmp_path):
    path = tmp_path / "queues.yaml"
    path.write_text(QUEUES)
    r = start(host="127.0.0.1", port=0, queues=str(path))
    yield r
    r.stop()


@pytest.fixture
def secure(tmp_path):
    path = tmp_path / "queues.yaml"
    path.write_text(SECURE)
    r = start(host="127.0.0.1", port=0, queues=str(path))
    yield r
    r.stop()


def client(r, user: str | None = None, password: str = "", assoc_group: int = 0) -> RpcClient:
    cl = RpcClient(timeout=10, assoc_group=assoc_group,
                   credentials=Credentials(user, password, level=5) if user else None)
    cl.connect(f"ncacn_ip_tcp:127.0.0.1[{r.rpc.address[1]}]")
    return cl


def open_queue(cl, fmt=ORDERS, access=c.RECEIVE_ACCESS) -> bytes:
    out = cl.call(c.R_OpenQueue(pQueueFormat=fmt, dwAccess=access, pClientId=uuid.uuid4(),
                                fNonRoutingServer=1))
    assert not out.raised and out.status == MQ_OK, f"0x{out.status:08X}"
    return out.pphContext


def receive(cl, ctx, action=c.MQ_ACTION_RECEIVE):
    return cl.call(c.R_StartReceive(phContext=ctx, ulAction=action, dwRequestId=1,
                                    dwMaxBodySize=1 << 16, dwMaxCompoundMessageSize=1 << 16))


def bind(cl, assoc_group: int = 0) -> int:
    """Bind RemoteRead on a raw connection (tests/server/conftest.py RawClient), asking for
    ``assoc_group``; the group the server put it in."""
    ack = cl.bind([(0, REMOTEREAD, [d.NDR])], assoc_group=assoc_group)
    assert isinstance(ack.body, d.BindAck), ack
    return ack.body.assoc_group_id


def test_group_ids_are_issued_by_the_server_and_not_guessable(running, client_for):
    ids = []
    for _ in range(12):
        conn = client_for(running.rpc)
        ids.append(bind(conn))
        conn.close()
    assert 0 not in ids and len(set(ids)) == len(ids)
    steps = {b - a for a, b in zip(ids, ids[1:], strict=False)}
    assert len(steps) > 1  # not a counter


@pytest.mark.parametrize("asked", [0xDEADBEEF, 0x1000, 1])
def test_a_bind_naming_an_unissued_group_gets_a_new_server_issued_one(running, client_for,
                                                                       asked):
    given = bind(client_for(running.rpc), asked)
    assert given not in (0, asked)
    assert bind(client_for(running.rpc), given) == given  # the issued one is joinable


def test_a_group_whose_connections_are_gone_is_not_joined(running, client_for):
    first = client_for(running.rpc)
    gone = bind(first)
    first.close()
    deadline = time.monotonic() + 5
    while len(running.rpc.groups) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert bind(client_for(running.rpc), gone) != gone


def test_a_join_from_another_address_is_refused_and_the_handles_stay_the_owners(running,
                                                                               client_for):
    owner = client(running)
    try:
        ctx = open_queue(owner)
        stranger = client_for(running.rpc, source="127.0.0.2")
        assert bind(stranger, owner.assoc_group) != owner.assoc_group
        fault = stranger.typed(c.R_StartReceive(
            phContext=ctx, ulAction=c.MQ_ACTION_RECEIVE, dwRequestId=1,
            dwMaxBodySize=64, dwMaxCompoundMessageSize=64))
        assert isinstance(fault, d.Fault) and fault.status == NCA_S_FAULT_CONTEXT_MISMATCH
        assert bind(client_for(running.rpc), owner.assoc_group) == owner.assoc_group
        assert receive(owner, ctx).status == MQ_OK  # the first message is still the owner's
    finally:
        owner.close()


def test_a_join_by_another_principal_cannot_use_the_groups_handles(secure):
    """bob (authenticated, no receive right) and an anonymous caller bind into alice's
    group: every call they make there is refused; alice's message stays hers."""
    alice = client(secure, "alice", "alice-Pw-1")
    try:
        ctx = open_queue(alice)
        bob = client(secure, "bob", "bob-Pw-2", assoc_group=alice.assoc_group)
        anonymous = client(secure, assoc_group=alice.assoc_group)
        try:
            for intruder in (bob, anonymous):
                assert intruder.assoc_group == alice.assoc_group  # same machine: joined
                for call in (c.R_StartReceive(phContext=ctx, ulAction=c.MQ_ACTION_RECEIVE,
                                              dwRequestId=2, dwMaxBodySize=64,
                                              dwMaxCompoundMessageSize=64),
                             c.R_CloseQueue(pphContext=ctx), c.R_GetServerPort()):
                    out = intruder.call(call)
                    assert out.raised and out.status == RPC_S_ACCESS_DENIED, call
        finally:
            bob.close()
            anonymous.close()
        got = receive(alice, ctx)
        assert got.status == MQ_OK and got.ppPacketSections
    finally:
        alice.close()


def test_context_handles_are_random_and_cursor_handles_are_not_a_counter(running):
    cl = client(running)
    try:
        contexts = [open_queue(cl) for _ in range(6)]
        guids = [uuid.UUID(bytes_le=bytes(h)[4:]) for h in contexts]
        assert all(g.version == 4 for g in guids) and len(set(guids)) == 6
        cursors = []
        for h in contexts:
            out = cl.call(c.R_CreateCursor(phContext=h))
            assert out.status == MQ_OK
            cursors.append(out.phCursor)
        steps = {b - a for a, b in zip(cursors, cursors[1:], strict=False)}
        assert 0 not in cursors and len(steps) > 1
    finally:
        cl.close()


def test_a_move_context_of_another_group_is_refused(running):
    """R_MoveMessage's ullContextTo names a queue opened for move by R_OpenQueueForMove
    (MS-MQRR 3.1.4.11): one opened in another association group moves nothing; the same move
    with the group's own move context does."""
    owner, other = client(running), client(running)
    try:
        def move_with(cl, move_context: int):
            source = open_queue(cl)
            peeked = receive(cl, source, action=c.MQ_ACTION_PEEK_CURRENT)
            assert peeked.status == MQ_OK
            return cl.call(c.R_MoveMessage(phContextFrom=source, ullContextTo=move_context,
                                           LookupId=peeked.pSequenceId,
                                           pTransactionId=bytes(16)))

        theirs = owner.call(c.R_OpenQueueForMove(pQueueFormat=RETRY, pClientId=uuid.uuid4()))
        assert theirs.status == MQ_OK
        refused = move_with(other, theirs.pMoveContext)
        assert refused.raised or refused.status != MQ_OK
        mine = other.call(c.R_OpenQueueForMove(pQueueFormat=RETRY, pClientId=uuid.uuid4()))
        moved = move_with(other, mine.pMoveContext)
        assert not moved.raised and moved.status == MQ_OK, f"0x{moved.status:08X}"
    finally:
        owner.close()
        other.close()


def test_the_handle_permutation_never_repeats_and_is_keyed():
    ids = UnguessableIds(key=b"k" * 16)
    values = [ids.handle() for _ in range(50_000)]
    assert len(set(values)) == len(values) and 0 not in values
    assert values != [UnguessableIds(key=b"j" * 16).handle() for _ in range(50_000)]
