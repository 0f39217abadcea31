"""The control API: precondition set-up for the suite, with clear errors; not part of MSMQ."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from mqconform.server.main import start


@pytest.fixture
def running():
    r = start(host="127.0.0.1", port=0, control_port=0, control_unauthenticated=True)
    yield r
    r.stop()


def request(r, method, path, body=None, raw=None):
    host, port = r.control.address
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(f"http://{host}:{port}{path}", method=method, data=data)
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_create_send_list_delete_reset(running):
    assert request(running, "POST", "/queues", {"path": "private$\\q1"})[0] == 201
    status, sent = request(running, "POST", "/queues/private$%5Cq1/messages", {"body": "x"})
    assert status == 201 and sent["lookup_id"] > 0
    [q] = request(running, "GET", "/queues")[1]
    assert q["path"] == "MQREF\\private$\\q1" and q["messages"]["Available"] == 1
    assert request(running, "DELETE", "/queues/private$%5Cq1")[0] == 200
    assert request(running, "GET", "/queues")[1] == []
    request(running, "POST", "/queues", {"path": "private$\\q2"})
    assert request(running, "POST", "/reset")[1] == {"deleted": 1}


@pytest.mark.req("MS-MQMR/3.1.4.1/R20", "MS-MQMR/3.1.4.1/R27", "MS-MQDMPR/3.1.7.2.1/R5")
def test_a_journaled_queue_journals_what_a_client_receives_over_rpc(running):
    """POST /queues {"journal": true} makes a queue with Journaling True: a message a client
    receives and acknowledges over RemoteRead is copied to its queue journal, which GET /queues
    and R_QMMgmtGetInfo count; a queue made without it keeps an empty journal."""
    import uuid

    from mqconform.conformance.client import RpcClient
    from mqconform.model import calls as c
    from mqconform.model.formats import (
        MgmtObject,
        MgmtObjectType,
        parse_format_name,
        to_queue_format,
    )
    from mqconform.model.mqmr import (
        PROPID_MGMT_QUEUE_BYTES_IN_JOURNAL,
        PROPID_MGMT_QUEUE_BYTES_IN_QUEUE,
        PROPID_MGMT_QUEUE_JOURNAL_MESSAGE_COUNT,
        PROPID_MGMT_QUEUE_MESSAGE_COUNT,
        VT_NULL,
    )

    for name, journal in (("kept", True), ("plain", False)):
        assert request(running, "POST", "/queues",
                       {"path": f"private$\\{name}", "journal": journal})[0] == 201
        for body in ("one", "two"):
            assert request(running, "POST", f"/queues/private$%5C{name}/messages",
                           {"body": body})[0] == 201
    props = (PROPID_MGMT_QUEUE_MESSAGE_COUNT, PROPID_MGMT_QUEUE_BYTES_IN_QUEUE,
             PROPID_MGMT_QUEUE_JOURNAL_MESSAGE_COUNT, PROPID_MGMT_QUEUE_BYTES_IN_JOURNAL)
    cl = RpcClient(timeout=10)
    cl.connect(f"ncacn_ip_tcp:127.0.0.1[{running.rpc.address[1]}]")
    try:
        values = {}
        for name in ("kept", "plain"):
            fmt = to_queue_format(parse_format_name(f"DIRECT=OS:MQREF\\private$\\{name}"))
            mgmt = MgmtObject(MgmtObjectType.MGMT_QUEUE, fmt)

            def info(mgmt=mgmt):
                out = cl.call(c.R_QMMgmtGetInfo(pObjectFormat=mgmt, cp=4, aProp=props,
                                                apVar=(c.PropVariant(VT_NULL),) * 4))
                assert out.status == 0, hex(out.status)
                return [v.value for v in out.apVar]

            before = info()
            opened = cl.call(c.R_OpenQueue(pQueueFormat=fmt, dwAccess=c.RECEIVE_ACCESS,
                                           pClientId=uuid.uuid4(), fNonRoutingServer=1))
            ctx = opened.pphContext
            got = cl.call(c.R_StartReceive(phContext=ctx, ulAction=c.MQ_ACTION_RECEIVE,
                                           dwRequestId=7, dwMaxBodySize=1 << 16,
                                           dwMaxCompoundMessageSize=1 << 16), timeout=30)
            assert got.status == 0, hex(got.status)
            assert cl.call(c.R_EndReceive(phContext=ctx, dwAck=c.RR_ACK,
                                          dwRequestId=7)).status == 0
            cl.call(c.R_CloseQueue(pphContext=ctx))
            values[name] = (before, info())
    finally:
        cl.close()
    (kept_before, kept_after), (plain_before, plain_after) = values["kept"], values["plain"]
    assert kept_before[:1] == [2] and kept_before[2:] == [0, 0]
    received = kept_before[1] - kept_after[1]  # the bytes the received message took
    assert received > 0
    assert kept_after == [1, kept_before[1] - received, 1, received]
    assert plain_before[2:] == [0, 0] and plain_after[2:] == [0, 0]
    assert plain_after[0] == 1 and plain_after[1] < plain_before[1]
    queues = {q["path"]: q for q in request(running, "GET", "/queues")[1]}
    assert (queues["MQREF\\private$\\kept"]["journaling"],
            queues["MQREF\\private$\\kept"]["journal"]) == (True, 1)
    assert (queues["MQREF\\private$\\plain"]["journaling"],
            queues["MQREF\\private$\\plain"]["journal"]) == (False, 0)


def _opens_and_peeks(running, format_name: str) -> None:
    """R_OpenQueue with ``format_name`` opens a queue whose first message a peek returns."""
    import uuid

    from mqconform.conformance.client import RpcClient
    from mqconform.model import calls as c
    from mqconform.model.formats import parse_format_name, to_queue_format

    cl = RpcClient(timeout=10)
    cl.connect(f"ncacn_ip_tcp:127.0.0.1[{running.rpc.address[1]}]")
    try:
        opened = cl.call(c.R_OpenQueue(pQueueFormat=to_queue_format(parse_format_name(format_name)),
                                       dwAccess=c.RECEIVE_ACCESS, pClientId=uuid.uuid4(),
                                       fNonRoutingServer=1))
        assert opened.status == 0 and not opened.raised
        peeked = cl.call(c.R_StartReceive(phContext=opened.pphContext,
                                          ulAction=c.MQ_ACTION_PEEK_CURRENT, dwRequestId=1,
                                          dwMaxBodySize=1 << 16,
                                          dwMaxCompoundMessageSize=1 << 16), timeout=10)
        assert peeked.status == 0 and peeked.pdwNumberOfSections > 0
    finally:
        cl.close()


def test_a_public_queue_is_listed_with_its_public_format_name(running):
    """GET /queues gives a public queue's PUBLIC= format name (MS-MQMQ 2.1.3): the queue's
    Identifier, a GUID of its own; R_OpenQueue with it opens that queue."""
    request(running, "POST", "/queues", {"path": "outward"})
    request(running, "POST", "/queues", {"path": "onward"})
    request(running, "POST", "/queues/outward/messages", {"body": "x"})
    queues = {q["path"]: q["format_name"] for q in request(running, "GET", "/queues")[1]}
    outward, onward = queues["MQREF\\outward"], queues["MQREF\\onward"]
    assert outward.startswith("PUBLIC=") and onward.startswith("PUBLIC=")
    assert outward != onward and outward != "PUBLIC=00000000-0000-0000-0000-000000000000"
    _opens_and_peeks(running, outward)


def test_a_private_queue_is_listed_with_its_private_format_name(running):
    """GET /queues gives a private queue's PRIVATE= format name (MS-MQMQ 2.1.4): the queue
    manager's identifier and the queue's number; R_OpenQueue with it opens that queue. A
    connector queue has none."""
    request(running, "POST", "/queues", {"path": "private$\\first"})
    request(running, "POST", "/queues", {"path": "private$\\second"})
    request(running, "POST", "/queues", {"path": "private$\\link", "queue_type": "Connector"})
    request(running, "POST", "/queues/private$%5Csecond/messages", {"body": "x"})
    queues = {q["path"]: q["format_name"] for q in request(running, "GET", "/queues")[1]}
    first, second = queues["MQREF\\private$\\first"], queues["MQREF\\private$\\second"]
    assert queues["MQREF\\private$\\link"] is None
    qm = running.handler.env.local_queue_manager.identifier
    assert first.startswith(f"PRIVATE={qm}\\") and second.startswith(f"PRIVATE={qm}\\")
    assert first != second and len(first.split("\\")[1]) == 8
    _opens_and_peeks(running, second)


@pytest.mark.parametrize("method,path,body,code,text", [
    ("POST", "/queues/private$%5Cnope/messages", {"body": "x"}, 404, "no queue"),
    ("POST", "/queues", {"path": "a", "bad": 1}, 400, "unknown key"),
    ("POST", "/queues", {"path": "a", "journal": "yes"}, 400, "journal: must be true/false"),
    ("POST", "/queues/x/messages", None, 404, "no queue"),
    ("GET", "/elsewhere", None, 404, "no route"),
    ("POST", "/transactions/zz/commit", None, 400, "not hexadecimal"),
])
def test_bad_requests_get_an_error_and_the_server_keeps_serving(running, method, path, body,
                                                                code, text):
    status, answer = request(running, method, path, body)
    assert status == code and text in answer["error"]
    assert request(running, "GET", "/queues")[0] == 200


def test_a_transactional_message_is_sent_with_its_lookup_identifier_above_2_56(running):
    """{"transactional": true}: a message sent in a transaction, whose lookup identifier has
    the high-order byte 0x07 - Priority (MS-MQDMPR 3.1.7.1.9); a value that is not true/false,
    or a priority its packet cannot carry, is one line of 400."""
    request(running, "POST", "/queues", {"path": "private$\\tx", "transactional": True})
    path = "/queues/private$%5Ctx/messages"
    status, sent = request(running, "POST", path, {"body": "t", "transactional": True})
    assert status == 201 and sent["lookup_id"] >> 56 == 0x04
    for body, text in (({"body": "t", "transactional": "yes"},
                        "message.transactional: must be true/false"),
                       ({"body": "t", "transactional": True, "priority": 0},
                        "message.priority: a transactional message's priority")):
        status, answer = request(running, "POST", path, body)
        assert status == 400 and answer["error"].startswith(text), answer
        assert "\n" not in answer["error"]


def test_a_body_that_is_not_json_is_refused(running):
    status, answer = request(running, "POST", "/queues", raw=b"{not json")
    assert status == 400 and "not JSON" in answer["error"]


@pytest.mark.parametrize(("length", "status"), [("-1", 400), ("abc", 400),
                                                 ("99999999999", 413)])
def test_a_content_length_that_is_not_a_bounded_count_is_refused_at_once(running, length,
                                                                         status):
    """Content-Length -1 once read to the end of the stream, past the body cap."""
    import socket

    host, port = running.control.address
    with socket.create_connection((host, port), timeout=5) as s:
        s.sendall(f"POST /queues HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n"
                  .encode() + b"{" * 1000)
        answer = s.recv(65536).decode("latin-1")
    assert answer.startswith("HTTP/1.") and f" {status} " in answer.split("\r\n")[0], \
        answer[:200]


def test_the_control_api_listens_on_loopback_whatever_the_rpc_host():
    r = start(host="127.0.0.2", port=0, control_port=0, control_unauthenticated=True)
    try:
        assert r.rpc.address[0] == "127.0.0.2"
        assert r.control.address[0] == "127.0.0.1"
    finally:
        r.stop()


@pytest.mark.parametrize("choices", ["reference", "alternate"])
def test_the_settings_say_which_allowed_choices_the_server_serves(choices):
    """GET /settings names the profile of spec/choices.yaml the server was started with, so
    the suite's oracle can read TIDY as the server does; it changes nothing."""
    r = start(host="127.0.0.1", port=0, control_port=0,
              control_unauthenticated=True, choices=choices)
    try:
        status, settings = request(r, "GET", "/settings")
        assert status == 200
        assert settings == {"choices": choices,
                            "pending_request_cleanup_ms": 300_000 if choices == "reference"
                            else 240_000}
        assert request(r, "GET", "/settings")[1] == settings
    finally:
        r.stop()


# ------------------------------------------------------------------ the transfer state

REMOTE = "DIRECT=TCP:192.0.2.20\\private$\\orders"
SENDER = "0b0b0b0b-0000-4000-8000-000000000002"


def queue_info(running, format_name: str | None, props: tuple[int, ...]) -> list:
    """R_QMMgmtGetInfo over RPC, as a client of the server reads the properties (of the
    machine when ``format_name`` is None)."""
    from mqconform.conformance.client import RpcClient
    from mqconform.model import calls as c
    from mqconform.model.formats import (
        MgmtObject,
        MgmtObjectType,
        parse_format_name,
        to_queue_format,
    )
    from mqconform.model.mqmr import VT_NULL

    mgmt = (MgmtObject(MgmtObjectType.MGMT_MACHINE) if format_name is None else
            MgmtObject(MgmtObjectType.MGMT_QUEUE, to_queue_format(parse_format_name(format_name))))
    cl = RpcClient(timeout=10)
    cl.connect(f"ncacn_ip_tcp:127.0.0.1[{running.rpc.address[1]}]")
    try:
        out = cl.call(c.R_QMMgmtGetInfo(pObjectFormat=mgmt, cp=len(props), aProp=props,
                                        apVar=(c.PropVariant(VT_NULL),) * len(props)))
    finally:
        cl.close()
    assert out.status == 0, hex(out.status)
    return list(out.apVar)


@pytest.mark.req("MS-MQMR/3.1.4.1/R17", "MS-MQMR/3.1.4.1/R20", "MS-MQMR/3.1.4.1/R27")
def test_an_outgoing_queue_has_the_transfer_state_post_outgoing_gives_it(running):
    """POST /outgoing sets the State, NextHops, OutgoingTransferInfo and ConnectionHistory of
    the outgoing queue, and R_QMMgmtGetInfo reports them over RPC as MS-MQMR 3.1.4.1 and
    MS-MQMQ give them: SEQUENCE_INFO octets, VT_I4 times, VT_UI4 counts, the Status codes."""
    from mqconform.model import mqmr
    from mqconform.model.calls import PropVariant as PV

    status, answer = request(running, "POST", "/outgoing", {
        "format_name": REMOTE, "state": "Connected", "next_hops": ["10.1.2.3", "10.1.2.4"],
        "outgoing_transfer_info": {
            "eod_first_non_ack": {"seq_id": 0x0102030405060708, "seq_no": 11, "prev_no": 10},
            "eod_last_ack": {"seq_id": -2, "seq_no": 10, "prev_no": 9},
            "eod_last_ack_count": 2, "eod_last_ack_time": 1_700_000_100,
            "eod_last_non_ack": {"seq_id": 0x0102030405060708, "seq_no": 13},
            "eod_next_seq": {"seq_id": 0x0102030405060708, "seq_no": 14, "prev_no": 13},
            "eod_no_ack_count": 1, "eod_no_read_count": 4, "eod_resend_count": 5,
            "eod_resend_interval": 30, "eod_resend_time": -1},
        "connection_history": [
            {"status": "UnknownFailure", "connection_history_time": 1_700_000_000,
             "error": -2147467259, "address_list": ["10.1.2.3", "10.1.2.4"]},
            {"status": "Established", "connection_history_time": 1_700_000_060}]})
    assert (status, answer) == (201, {"format_name": REMOTE, "state": "Connected"})
    values = queue_info(running, REMOTE, tuple(range(11, 26)))
    assert values == [
        PV(mqmr.VT_LPWSTR, "CONNECTED"),
        PV(mqmr.VT_VECTOR | mqmr.VT_LPWSTR, ["10.1.2.3", "10.1.2.4"]),
        PV(mqmr.VT_BLOB, bytes.fromhex("FEFFFFFFFFFFFFFF 0A000000 09000000")),
        PV(mqmr.VT_I4, 1_700_000_100),
        PV(mqmr.VT_UI4, 2),
        PV(mqmr.VT_BLOB, bytes.fromhex("0807060504030201 0B000000 0A000000")),
        PV(mqmr.VT_BLOB, bytes.fromhex("0807060504030201 0D000000 00000000")),
        PV(mqmr.VT_BLOB, bytes.fromhex("0807060504030201 0E000000 0D000000")),
        PV(mqmr.VT_UI4, 4),
        PV(mqmr.VT_UI4, 1),
        PV(mqmr.VT_I4, -1),
        PV(mqmr.VT_UI4, 30),
        PV(mqmr.VT_UI4, 5),
        PV(mqmr.VT_VECTOR | mqmr.VT_VARIANT, [
            PV(mqmr.VT_VECTOR | vt, []) for vt in (mqmr.VT_LPWSTR, mqmr.VT_CLSID, mqmr.VT_UI8,
                                                   mqmr.VT_UI4, mqmr.VT_I4, mqmr.VT_UI4)]),
        PV(mqmr.VT_VECTOR | mqmr.VT_VARIANT, [
            PV(mqmr.VT_VECTOR | mqmr.VT_UI4, [0x80000000, 0x00000002]),
            PV(mqmr.VT_VECTOR | mqmr.VT_I4, [1_700_000_000, 1_700_000_060]),
            PV(mqmr.VT_VECTOR | mqmr.VT_I4, [-2147467259, 0]),
            PV(mqmr.VT_VECTOR | mqmr.VT_LPWSTR, ["10.1.2.3,10.1.2.4", ""])])]
    [queue] = [q for q in running.handler.env.local_queue_manager.queue_collection
               if getattr(q, "destination_format_name", "") == REMOTE]
    assert queue.outgoing_transfer_info_reference.outgoing_queue_reference is queue


@pytest.mark.req("MS-MQMR/3.1.4.1/R18", "MS-MQDMPR/3.1.1.2/R9")
def test_an_outgoing_queue_with_messages_awaiting_transfer_is_active(running):
    """POST /outgoing with "messages" puts them in the outgoing queue, as a send the transfer
    protocol has not carried yet: the queue is Active with no handle open, and ACTIVEQUEUES
    lists it by its destination's format name (model/mqmr.py choice 7)."""
    status, _ = request(running, "POST", "/outgoing", {
        "format_name": REMOTE, "messages": [{"body": "one"}, {"body_hex": "74776f"}]})
    assert status == 201
    [queue] = [q for q in running.handler.env.local_queue_manager.queue_collection
               if getattr(q, "destination_format_name", "") == REMOTE]
    assert [p.message_reference.body for p in queue.message_position_list] == [b"one", b"two"]
    assert queue.active and not queue.open_queue_descriptor_collection
    from mqconform.model.mqmr import PROPID_MGMT_MSMQ_ACTIVEQUEUES

    listed = queue_info(running, None, (PROPID_MGMT_MSMQ_ACTIVEQUEUES,))[0].value
    assert REMOTE in listed


def test_posting_an_outgoing_queue_again_replaces_only_what_the_spec_gives(running):
    """The same format name opens the same outgoing queue: a second POST /outgoing changes the
    keys it gives and keeps the others; "outgoing_transfer_info": null removes it."""
    request(running, "POST", "/outgoing", {
        "format_name": REMOTE, "state": "Waiting", "next_hops": ["10.1.2.3"],
        "outgoing_transfer_info": {"eod_no_ack_count": 3},
        "connection_history": [{"status": "PingFailure"}]})
    assert request(running, "POST", "/outgoing", {"format_name": REMOTE, "state": "OnHold"}
                   )[1] == {"format_name": REMOTE, "state": "OnHold"}
    [queue] = [q for q in running.handler.env.local_queue_manager.queue_collection
               if getattr(q, "destination_format_name", "") == REMOTE]
    assert queue.next_hops == ["10.1.2.3"]
    assert queue.outgoing_transfer_info_reference.eod_no_ack_count == 3
    assert [e.status.name for e in queue.connection_history] == ["PingFailure"]
    request(running, "POST", "/outgoing", {"format_name": REMOTE, "next_hops": [],
                                           "outgoing_transfer_info": None,
                                           "connection_history": []})
    assert (queue.next_hops, queue.outgoing_transfer_info_reference,
            queue.connection_history) == ([], None, [])
    assert queue.state.name == "OnHold"


@pytest.mark.req("MS-MQMR/3.1.4.1/R20", "MS-MQMR/3.1.4.1/R27")
def test_a_queue_has_the_incoming_transactional_transfers_the_control_api_gives_it(running):
    """POST /queues/<path>/incoming_transactional_transfer_info replaces the queue's
    IncomingTransactionalTransferInfoCollection; R_QMMgmtGetInfo reports it as the six vectors
    of MS-MQMQ 2.3.12.24 (the TxSequenceID as TimeStamp high, Ordinal low: 2.2.18.1.2)."""
    import uuid

    from mqconform.model import mqmr
    from mqconform.model.calls import PropVariant as PV

    assert request(running, "POST", "/queues", {"path": "private$\\in",
                                                "transactional": True})[0] == 201
    path = "/queues/private$%5Cin/incoming_transactional_transfer_info"
    status, answer = request(running, "POST", path, {"entries": [
        {"format_name": "DIRECT=TCP:192.0.2.10\\private$\\in", "sender_identifier": SENDER,
         "sequence_identifier": {"ordinal": 7, "time_stamp": 0x65000000},
         "sequence_number": 12, "last_access_time": 1_700_000_000, "reject_count": 2},
        {"format_name": "PUBLIC=1b4e28ba-2fa1-41d2-883f-0016d3cca427",
         "sequence_identifier": {"ordinal": 0xFFFFFFFF, "time_stamp": 0xFFFFFFFF},
         "sequence_number": 0xFFFFFFFF, "last_access_time": -5},
        {}]})
    assert (status, answer) == (200, {"path": "MQREF\\private$\\in", "entries": 3})
    [value] = queue_info(running, "DIRECT=OS:MQREF\\private$\\in",
                         (mqmr.PROPID_MGMT_QUEUE_EOD_SOURCE_INFO,))
    assert value == PV(mqmr.VT_VECTOR | mqmr.VT_VARIANT, [
        PV(mqmr.VT_VECTOR | mqmr.VT_LPWSTR, ["DIRECT=TCP:192.0.2.10\\private$\\in",
                                             "PUBLIC=1b4e28ba-2fa1-41d2-883f-0016d3cca427", ""]),
        PV(mqmr.VT_VECTOR | mqmr.VT_CLSID, [uuid.UUID(SENDER)] + [uuid.UUID(int=0)] * 2),
        PV(mqmr.VT_VECTOR | mqmr.VT_UI8, [0x6500000000000007, 0xFFFFFFFFFFFFFFFF, 0]),
        PV(mqmr.VT_VECTOR | mqmr.VT_UI4, [12, 0xFFFFFFFF, 0]),
        PV(mqmr.VT_VECTOR | mqmr.VT_I4, [1_700_000_000, -5, 0]),
        PV(mqmr.VT_VECTOR | mqmr.VT_UI4, [2, 0, 0])])
    assert request(running, "POST", path, {"entries": []}) == (
        200, {"path": "MQREF\\private$\\in", "entries": 0})
    [value] = queue_info(running, "DIRECT=OS:MQREF\\private$\\in",
                         (mqmr.PROPID_MGMT_QUEUE_EOD_SOURCE_INFO,))
    assert all(item.value == [] for item in value.value)


OUTGOING_REFUSED = [
    ({"outgoing_transfer_info": [1]}, "outgoing.outgoing_transfer_info: a JSON object"),
    ({"outgoing_transfer_info": {"eod_nope": 1}},
     "outgoing.outgoing_transfer_info: unknown key(s) ['eod_nope']"),
    ({"outgoing_transfer_info": {"eod_last_ack": {"seq_no": -1}}},
     "outgoing.outgoing_transfer_info.eod_last_ack.seq_no: an integer from 0 to 4294967295"),
    ({"outgoing_transfer_info": {"eod_next_seq": {"seq_id": 1 << 63}}},
     "outgoing.outgoing_transfer_info.eod_next_seq.seq_id: an integer from "
     "-9223372036854775808 to 9223372036854775807"),
    ({"outgoing_transfer_info": {"eod_first_non_ack": {"seqno": 1}}},
     "outgoing.outgoing_transfer_info.eod_first_non_ack: unknown key(s) ['seqno']"),
    ({"outgoing_transfer_info": {"eod_last_non_ack": 5}},
     "outgoing.outgoing_transfer_info.eod_last_non_ack: a JSON object"),
    ({"outgoing_transfer_info": {"eod_no_ack_count": True}},
     "outgoing.outgoing_transfer_info.eod_no_ack_count: an integer from 0 to 4294967295"),
    ({"outgoing_transfer_info": {"eod_resend_interval": 1 << 32}},
     "outgoing.outgoing_transfer_info.eod_resend_interval: an integer from 0 to 4294967295"),
    ({"outgoing_transfer_info": {"eod_last_ack_time": 1 << 31}},
     "outgoing.outgoing_transfer_info.eod_last_ack_time: an integer from -2147483648 to "
     "2147483647"),
    ({"outgoing_transfer_info": {"eod_resend_time": "soon"}},
     "outgoing.outgoing_transfer_info.eod_resend_time: an integer from -2147483648 to "
     "2147483647"),
    ({"connection_history": {}}, "outgoing.connection_history: a JSON array"),
    ({"connection_history": [{"error": 0}]}, "outgoing.connection_history[0].status: one of "),
    ({"connection_history": [{"status": "Sleeping"}]},
     "outgoing.connection_history[0].status: one of "),
    ({"connection_history": [{"status": "PingFailure", "when": 1}]},
     "outgoing.connection_history[0]: unknown key(s) ['when']"),
    ({"connection_history": [{"status": "PingFailure", "error": 0x80004005}]},
     "outgoing.connection_history[0].error: an integer from -2147483648 to 2147483647"),
    ({"connection_history": [{"status": "PingFailure", "connection_history_time": 1.5}]},
     "outgoing.connection_history[0].connection_history_time: an integer from"),
    ({"connection_history": [{"status": "PingFailure"}, {"status": "PingFailure",
                                                        "address_list": ["a,b"]}]},
     "outgoing.connection_history[1].address_list[0]: an address, a string of 1 to 260 "
     "characters without ','"),
    ({"next_hops": "10.0.0.1"}, "outgoing.next_hops: a JSON array"),
    ({"next_hops": ["10.0.0.1", ""]},
     "outgoing.next_hops[1]: an address, a string of 1 to 260 characters"),
    ({"state": "Sleeping"}, "outgoing.state: not one of"),
    ({"hops": []}, "outgoing: unknown key(s) ['hops']"),
    ({"messages": {"body": "x"}}, "outgoing.messages: must be a list of messages"),
    ({"messages": [{"body": "x", "priority": 9}]},
     "outgoing.messages[0].priority: must be between 0 and 7"),
]


@pytest.mark.parametrize("name", [
    REMOTE + ",DIRECT=TCP:192.0.2.21\\private$\\orders",
    "DL=11111111-2222-3333-4444-555555555555",
])
def test_an_outgoing_format_name_of_several_destinations_is_refused_and_opens_none(running,
                                                                                  name):
    before = list(running.handler.env.local_queue_manager.queue_collection)
    status, answer = request(running, "POST", "/outgoing", {"format_name": name})
    assert status == 400 and answer["error"].startswith("outgoing.format_name: "), answer
    assert "more than one destination" in answer["error"]
    assert list(running.handler.env.local_queue_manager.queue_collection) == before


@pytest.mark.parametrize("spec,error", OUTGOING_REFUSED)
def test_a_refused_outgoing_spec_names_its_key_and_changes_nothing(running, spec, error):
    status, answer = request(running, "POST", "/outgoing", {"format_name": REMOTE, **spec})
    assert status == 400 and answer["error"].startswith(error), answer
    assert "\n" not in answer["error"]
    assert not [q for q in running.handler.env.local_queue_manager.queue_collection
                if getattr(q, "destination_format_name", "") == REMOTE]


INCOMING_REFUSED = [
    ({}, "incoming_transactional_transfer_info.entries: a JSON array is required"),
    ({"entries": [], "more": 1}, "incoming_transactional_transfer_info: unknown key(s) "
                                 "['more']"),
    ({"entries": {}}, "incoming_transactional_transfer_info.entries: a JSON array"),
    ({"entries": [7]}, "incoming_transactional_transfer_info.entries[0]: a JSON object"),
    ({"entries": [{"queue_reference": "x"}]},
     "incoming_transactional_transfer_info.entries[0]: unknown key(s) ['queue_reference']"),
    ({"entries": [{"format_name": "NOPE=x"}]},
     "incoming_transactional_transfer_info.entries[0].format_name: "),
    ({"entries": [{"format_name": 5}]},
     "incoming_transactional_transfer_info.entries[0].format_name: "),
    ({"entries": [{}, {"sender_identifier": "nope"}]},
     "incoming_transactional_transfer_info.entries[1].sender_identifier: a GUID"),
    ({"entries": [{"sender_identifier": 5}]},
     "incoming_transactional_transfer_info.entries[0].sender_identifier: a GUID"),
    ({"entries": [{"sequence_identifier": None}]},
     "incoming_transactional_transfer_info.entries[0].sequence_identifier: a JSON object"),
    ({"entries": [{"sequence_identifier": {"ordinal": -1}}]},
     "incoming_transactional_transfer_info.entries[0].sequence_identifier.ordinal: an integer "
     "from 0 to 4294967295"),
    ({"entries": [{"sequence_identifier": {"timestamp": 1}}]},
     "incoming_transactional_transfer_info.entries[0].sequence_identifier: unknown key(s) "
     "['timestamp']"),
    ({"entries": [{"sequence_number": 1.5}]},
     "incoming_transactional_transfer_info.entries[0].sequence_number: an integer from 0 to "
     "4294967295"),
    ({"entries": [{"last_access_time": "now"}]},
     "incoming_transactional_transfer_info.entries[0].last_access_time: an integer from "
     "-2147483648 to 2147483647"),
    ({"entries": [{"reject_count": 1 << 32}]},
     "incoming_transactional_transfer_info.entries[0].reject_count: an integer from 0 to "
     "4294967295"),
]


@pytest.mark.parametrize("spec,error", INCOMING_REFUSED)
def test_a_refused_incoming_spec_names_its_key_and_changes_nothing(running, spec, error):
    request(running, "POST", "/queues", {"path": "private$\\in"})
    path = "/queues/private$%5Cin/incoming_transactional_transfer_info"
    assert request(running, "POST", path, {"entries": [{"reject_count": 1}]})[0] == 200
    status, answer = request(running, "POST", path, spec)
    assert status == 400 and answer["error"].startswith(error), answer
    assert "\n" not in answer["error"]
    [queue] = [q for q in running.handler.env.local_queue_manager.queue_collection
               if q.pathname == "MQREF\\private$\\in"]
    assert [e.reject_count for e in queue.incoming_transactional_transfer_info_collection] == [1]


def test_incoming_transfers_of_a_queue_that_does_not_exist_answer_404(running):
    status, answer = request(running, "POST",
                             "/queues/private$%5Cnope/incoming_transactional_transfer_info",
                             {"entries": []})
    assert status == 404 and "no queue" in answer["error"]
