"""The reference queue manager end to end: a real server on 127.0.0.1, the impacket-based
client (a second, independent NDR implementation) and the control API."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
import uuid

import pytest

from mqconform.conformance.client import RpcClient
from mqconform.model import calls as c
from mqconform.model.formats import parse_format_name, to_queue_format
from mqconform.model.packet import decode_packet
from mqconform.model.status import (
    MQ_ERROR_IO_TIMEOUT,
    MQ_ERROR_OPERATION_CANCELLED,
    MQ_ERROR_QUEUE_NOT_FOUND,
    MQ_OK,
)
from mqconform.server.main import start

QUEUES = """
queue_manager:
  computer_name: MQREF
queues:
  - path: private$\\orders
    messages:
      - body: first
        label: one
      - body: second
  - path: private$\\empty
"""
ORDERS = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\orders"))
EMPTY = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\empty"))


@pytest.fixture
def running(tmp_path):
    path = tmp_path / "queues.yaml"
    path.write_text(QUEUES)
    r = start(host="127.0.0.1", port=0, epm_port=0, queues=str(path), control_port=0,
              control_unauthenticated=True)
    yield r
    r.stop()


def endpoint(r) -> str:
    return f"ncacn_ip_tcp:127.0.0.1[{r.rpc.address[1]}]"


def body_of(packet: bytes) -> bytes:
    offset, size = decode_packet(packet).message_body
    return packet[offset:offset + size]


def control(r, method, path, body=None):
    host, port = r.control.address
    req = urllib.request.Request(f"http://{host}:{port}{path}", method=method,
                                 data=json.dumps(body).encode() if body is not None else None)
    with urllib.request.urlopen(req, timeout=5) as resp:
        return json.loads(resp.read())


def client(r, ndr64=False, **kw) -> RpcClient:
    cl = RpcClient(timeout=10, epm_port=r.epm.address[1], **kw)
    cl.connect(endpoint(r), ndr64=ndr64)
    return cl


def open_queue(cl, fmt=ORDERS, access=c.RECEIVE_ACCESS):
    out = cl.call(c.R_OpenQueue(pQueueFormat=fmt, dwAccess=access, pClientId=uuid.uuid4(),
                                fNonRoutingServer=1))
    assert not out.raised, f"0x{out.status:08X}"
    return out.pphContext


def receive(cl, ctx, request=1, timeout=0, action=c.MQ_ACTION_RECEIVE, **kw):
    return cl.call(c.R_StartReceive(phContext=ctx, ulAction=action, ulTimeout=timeout,
                                    dwRequestId=request, dwMaxBodySize=1 << 16,
                                    dwMaxCompoundMessageSize=1 << 16, **kw),
                   timeout=30)


@pytest.mark.req("MS-MQRR/3.1.4.1/R1")
def test_the_endpoint_mapper_and_get_server_port_name_the_server(running):
    cl = RpcClient(timeout=10, epm_port=running.epm.address[1])
    cl.connect("ncacn_ip_tcp:127.0.0.1")  # no port: ask the endpoint mapper
    assert cl.call(c.R_GetServerPort()).status == running.rpc.address[1]
    cl.close()


@pytest.mark.req("MS-MQRR/3.1.4.1/R1", "MS-MQRR/3.1.4.1/R2")
def test_a_port_in_use_moves_the_server_11_ports_up_and_get_server_port_names_it(tmp_path):
    import socket

    held = []
    for _ in range(50):  # a port whose next one 11 higher is free: hold both of the pair
        first = socket.socket()
        first.bind(("127.0.0.1", 0))
        port = first.getsockname()[1]
        if port + 22 > 0xFFFF:
            first.close()
            continue
        second = socket.socket()
        try:
            second.bind(("127.0.0.1", port + 11))
        except OSError:
            first.close()
            continue
        first.listen(1)
        second.listen(1)
        held = [first, second]
        break
    assert held, "no pair of free ports found"
    try:
        r = start(host="127.0.0.1", port=port, queues=None)
        try:
            got = r.rpc.address[1]  # port and port + 11 are taken: port + 22 (or on)
            assert got >= port + 22 and (got - port) % 11 == 0
            cl = RpcClient(timeout=10)
            cl.connect(f"ncacn_ip_tcp:127.0.0.1[{got}]")
            assert cl.call(c.R_GetServerPort()).status == got
            cl.close()
        finally:
            r.stop()
    finally:
        for s in held:
            s.close()


@pytest.mark.parametrize("ndr64", [False, True], ids=["NDR", "NDR64"])
@pytest.mark.req("MS-MQRR/3.1.4.7/R29", "MS-MQRR/3.1.4.9/R7", "MS-MQRR/2.2/R1")
def test_receive_and_acknowledge_a_provisioned_message(running, ndr64):
    with client(running, ndr64=ndr64) as cl:
        assert cl.syntax() == ("NDR64" if ndr64 else "NDR")
        ctx = open_queue(cl)
        got = receive(cl, ctx)
        assert got.status == MQ_OK and got.pdwNumberOfSections == 1
        [section] = got.ppPacketSections
        assert section.SectionBufferType == c.stFullPacket
        assert body_of(section.pSectionBuffer) == b"first"
        end = cl.call(c.R_EndReceive(phContext=ctx, dwAck=c.RR_ACK, dwRequestId=1))
        assert end.status == MQ_OK
    [orders] = [q for q in control(running, "GET", "/queues") if q["path"].endswith("orders")]
    assert orders["messages"]["Available"] == 1


@pytest.mark.req("MS-MQRR/3.1.4.2/R24")
def test_open_of_an_unknown_queue_raises_queue_not_found(running):
    with client(running) as cl:
        out = cl.call(c.R_OpenQueue(
            pQueueFormat=to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\no")),
            dwAccess=c.RECEIVE_ACCESS, pClientId=uuid.uuid4()))
        assert out.raised and out.status == MQ_ERROR_QUEUE_NOT_FOUND


def test_a_blocking_receive_does_not_block_other_clients_and_completes_on_send(running):
    with client(running) as waiting, client(running) as other:
        ctx = open_queue(waiting, EMPTY)
        result = {}
        t = threading.Thread(target=lambda: result.update(
            r=receive(waiting, ctx, timeout=10_000)))
        t.start()
        time.sleep(0.3)
        assert other.call(c.R_GetServerPort()).status == running.rpc.address[1]
        control(running, "POST", "/queues/private$%5Cempty/messages", {"body": "late"})
        t.join(10)
        got = result["r"]
        assert got.status == MQ_OK
        assert body_of(got.ppPacketSections[0].pSectionBuffer) == b"late"


@pytest.mark.req("MS-MQRR/3.1.2.1/R2")
def test_a_blocking_receive_times_out_in_real_time(running):
    with client(running) as cl:
        ctx = open_queue(cl, EMPTY)
        started = time.monotonic()
        got = receive(cl, ctx, timeout=300)
        assert got.status == MQ_ERROR_IO_TIMEOUT
        assert time.monotonic() - started >= 0.28


@pytest.mark.req("MS-MQRR/3.1.4.8/R16")
def test_cancel_receive_from_a_second_connection_of_the_same_binding(running):
    with client(running) as waiting:
        ctx = open_queue(waiting, EMPTY)
        result = {}
        t = threading.Thread(target=lambda: result.update(
            r=receive(waiting, ctx, request=7, timeout=c.INFINITE_TIMEOUT)))
        t.start()
        time.sleep(0.3)
        with client(running, assoc_group=waiting.assoc_group) as canceller:
            out = canceller.call(c.R_CancelReceive(phContext=ctx, dwRequestId=7))
            assert out.status == MQ_OK
        t.join(10)
        assert result["r"].status == MQ_ERROR_OPERATION_CANCELLED


@pytest.mark.req("MS-MQRR/2.2.4.1/R1")
def test_a_context_handle_from_another_association_is_refused(running):
    with client(running) as owner, client(running) as stranger:
        ctx = open_queue(owner)
        out = stranger.call(c.R_PurgeQueue(phContext=ctx))
        assert out.raised and out.status == 0x1C00001A  # nca_s_fault_context_mismatch


@pytest.mark.req("MS-MQRR/3.1.6.2/R8")
def test_a_dropped_connection_returns_its_locked_message(running):
    cl = client(running)
    ctx = open_queue(cl)
    assert receive(cl, ctx).status == MQ_OK
    [orders] = [q for q in control(running, "GET", "/queues") if q["path"].endswith("orders")]
    assert orders["messages"]["Locked"] == 1
    cl.close()  # no R_EndReceive: the rundown must unlock it
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        [orders] = [q for q in control(running, "GET", "/queues")
                    if q["path"].endswith("orders")]
        if orders["messages"]["Locked"] == 0:
            break
        time.sleep(0.05)
    assert orders["messages"] == {**orders["messages"], "Locked": 0, "Available": 2}


@pytest.mark.req("MS-MQMR/3.1.4.1/R1")
def test_qmmgmt_answers_over_the_same_port(running):
    from mqconform.model.formats import MgmtObject, MgmtObjectType

    with client(running) as cl:
        out = cl.call(c.R_QMMgmtGetInfo(
            pObjectFormat=MgmtObject(type=MgmtObjectType.MGMT_MACHINE, pQueueFormat=None),
            cp=1, aProp=(1,), apVar=(c.PropVariant(1),)))
        assert not out.raised


ALL_OPNUMS_QUEUES = """
queues:
  - path: private$\\tx
    transactional: true
    subqueues: [retry]
    messages: [{body: a}, {body: b}, {body: c}, {body: d}, {body: e}]
"""


@pytest.mark.parametrize("ndr64", [False, True], ids=["NDR", "NDR64"])
def test_every_remoteread_opnum_over_the_wire(tmp_path, ndr64):
    """Each RemoteRead method at least once, in NDR and in NDR64, answered as the model says."""
    path = tmp_path / "q.yaml"
    path.write_text(ALL_OPNUMS_QUEUES)
    r = start(host="127.0.0.1", port=0, queues=str(path))
    seen = set()
    try:
        with RpcClient(timeout=10) as cl:
            cl.connect(endpoint(r), ndr64=ndr64)

            def call(x):
                seen.add(x.opnum)
                return cl.call(x, timeout=30)

            tx = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\tx"))
            retry = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\tx;retry"))
            assert call(c.R_GetServerPort()).status == r.rpc.address[1]
            ctx = call(c.R_OpenQueue(pQueueFormat=tx, dwAccess=c.RECEIVE_ACCESS,
                                     pClientId=uuid.uuid4())).pphContext
            cursor = call(c.R_CreateCursor(phContext=ctx)).phCursor
            peek = call(c.R_StartReceive(phContext=ctx, hCursor=cursor,
                                         ulAction=c.MQ_ACTION_PEEK_CURRENT,
                                         dwMaxBodySize=1024))
            assert peek.status == MQ_OK
            assert call(c.R_CloseCursor(phContext=ctx, hCursor=cursor)).status == MQ_OK
            got = call(c.R_StartReceive(phContext=ctx, dwRequestId=1, dwMaxBodySize=1024))
            assert got.status == MQ_OK
            assert call(c.R_EndReceive(phContext=ctx, dwAck=c.RR_NACK,
                                       dwRequestId=1)).status == MQ_OK
            pending = call(c.R_CancelReceive(phContext=ctx, dwRequestId=99))
            assert pending.status != MQ_OK  # nothing waits under that request
            moved = call(c.R_OpenQueueForMove(pQueueFormat=retry, pClientId=uuid.uuid4()))
            assert not moved.raised
            lookup = (got.pSequenceId & ((1 << 56) - 1))
            move = call(c.R_MoveMessage(phContextFrom=ctx, ullContextTo=moved.pMoveContext,
                                        LookupId=lookup, pTransactionId=bytes(16)))
            assert move.status == MQ_OK
            xact = bytes(range(16))
            assert call(c.R_QMEnlistRemoteTransaction(
                pTransactionId=xact, cbPropagationToken=4, pbPropagationToken=b"tokn",
                pQueueFormat=tx)).status == MQ_OK
            txr = call(c.R_StartTransactionalReceive(phContext=ctx, pTransactionId=xact,
                                                     dwRequestId=2, dwMaxBodySize=1024))
            assert txr.status == MQ_OK
            ack_class = call(c.R_SetUserAcknowledgementClass(
                phContext=ctx, LookupId=txr.pSequenceId, usClass=0))
            assert ack_class.status == MQ_OK
            assert call(c.R_EndTransactionalReceive(phContext=ctx, dwAck=c.RR_ACK,
                                                    dwRequestId=2)).status == MQ_OK
            assert call(c.R_PurgeQueue(phContext=ctx)).status == MQ_OK
            closed = call(c.R_CloseQueue(pphContext=ctx))
            assert closed.status == MQ_OK and closed.pphContext is None
    finally:
        r.stop()
    assert seen == {0} | set(range(2, 16))


def test_every_qmmgmt_opnum_over_the_wire(running):
    from mqconform.model.formats import MgmtObject, MgmtObjectType

    machine = MgmtObject(type=MgmtObjectType.MGMT_MACHINE, pQueueFormat=None)
    with client(running) as cl:
        info = cl.call(c.R_QMMgmtGetInfo(pObjectFormat=machine, cp=2, aProp=(1, 2),
                                         apVar=(c.PropVariant(1), c.PropVariant(1))))
        assert info.status == MQ_OK and len(info.apVar) == 2
        queue = MgmtObject(type=MgmtObjectType.MGMT_QUEUE, pQueueFormat=ORDERS)
        action = cl.call(c.R_QMMgmtAction(pObjectFormat=queue, lpwszAction="NO-SUCH"))
        assert action.status != MQ_OK


@pytest.mark.req("MS-MQRR/3.1.6.2/R1")
def test_a_connection_dropped_during_a_pending_receive_leaves_the_message_available(running):
    cl = client(running)
    ctx = open_queue(cl, EMPTY)
    t = threading.Thread(target=lambda: _quietly(lambda: receive(cl, ctx, timeout=60_000)))
    t.start()
    time.sleep(0.3)
    cl.close()  # the receive is still pending
    t.join(10)
    time.sleep(0.3)
    control(running, "POST", "/queues/private$%5Cempty/messages", {"body": "kept"})
    [empty] = [q for q in control(running, "GET", "/queues") if q["path"].endswith("empty")]
    assert empty["messages"]["Available"] == 1 and empty["messages"]["Locked"] == 0
    assert empty["open"] == 0


def _quietly(fn):
    try:
        fn()
    except Exception:  # the connection is closed under the call on purpose
        pass
