"""The control API: precondition set-up for the suite, with clear errors; not part of MSMQ."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from mqconform.server.main import start


@pytest.fixture
def running():
    r = start(host="127.0.0.1", port=0, control_port=0)
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


@pytest.mark.parametrize("length", ["-1", "abc", "99999999999"])
def test_a_content_length_that_is_not_a_bounded_count_is_refused_at_once(running, length):
    """Content-Length -1 once read to the end of the stream, past the body cap."""
    import socket

    host, port = running.control.address
    with socket.create_connection((host, port), timeout=5) as s:
        s.sendall(f"POST /queues HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n"
                  .encode() + b"{" * 1000)
        answer = s.recv(65536).decode("latin-1")
    assert answer.startswith("HTTP/1.") and " 400 " in answer.split("\r\n")[0], answer[:200]


def test_the_control_api_listens_on_loopback_whatever_the_rpc_host():
    r = start(host="127.0.0.2", port=0, control_port=0)
    try:
        assert r.rpc.address[0] == "127.0.0.2"
        assert r.control.address[0] == "127.0.0.1"
    finally:
        r.stop()


@pytest.mark.parametrize("choices", ["reference", "alternate"])
def test_the_settings_say_which_allowed_choices_the_server_serves(choices):
    """GET /settings names the profile of spec/choices.yaml the server was started with, so
    the suite's oracle can read TIDY as the server does; it changes nothing."""
    r = start(host="127.0.0.1", port=0, control_port=0, choices=choices)
    try:
        status, settings = request(r, "GET", "/settings")
        assert status == 200
        assert settings == {"choices": choices,
                            "pending_request_cleanup_ms": 300_000 if choices == "reference"
                            else 240_000}
        assert request(r, "GET", "/settings")[1] == settings
    finally:
        r.stop()
