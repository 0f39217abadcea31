"""Seeded faults (server/faults.py): off unless asked for, each departs from the documents the
way it says and logs an activation for exactly the calls it changed."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest

from mqconform.conformance.client import RpcClient
from mqconform.model import calls as c
from mqconform.model.formats import MgmtObject, MgmtObjectType, parse_format_name, to_queue_format
from mqconform.server.faults import FAULTS, FaultError, Faults
from mqconform.server.main import start

QUEUE = to_queue_format(parse_format_name("DIRECT=TCP:127.0.0.1\\private$\\orders"))


def _server(faults: Faults | None):
    from mqconform.server.control import ControlApi

    running = start(host="127.0.0.1", port=0, faults=faults)
    control = ControlApi(running.handler)
    control.create_queue({"path": "private$\\orders"})
    for i in range(5):
        control.send("private$\\orders", {"body": f"m{i}"})
    return running


def _client(running) -> RpcClient:
    rpc = RpcClient(timeout=10)
    rpc.connect(f"ncacn_ip_tcp:127.0.0.1[{running.rpc.address[1]}]")
    return rpc


def _open(rpc, access=c.RECEIVE_ACCESS) -> bytes:
    r = rpc.call(c.R_OpenQueue(pQueueFormat=QUEUE, dwAccess=access, dwShareMode=0,
                               pClientId=uuid.uuid4(), fNonRoutingServer=1, Major=6, Minor=1,
                               BuildNumber=1, fWorkgroup=1))
    assert not r.raised
    return bytes(r.pphContext)


def _receive(rpc, h, rid, action=c.MQ_ACTION_RECEIVE):
    return rpc.call(c.R_StartReceive(phContext=h, LookupId=0, hCursor=0, ulAction=action,
                                     ulTimeout=0, dwRequestId=rid, dwMaxBodySize=1024,
                                     dwMaxCompoundMessageSize=0))


def test_unknown_faults_and_rates_are_refused():
    with pytest.raises(FaultError, match="unknown fault"):
        Faults(frozenset({"nope"}))
    with pytest.raises(FaultError, match="between 0 and 1"):
        Faults(frozenset({"ack-keeps"}), rate=1.5)
    done = subprocess.run([sys.executable, "-m", "mqconform.cli", "serve", "--port", "0",
                           "--fault", "nope"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "unknown fault 'nope'" in done.stderr


def test_without_faults_the_server_is_the_reference():
    running = _server(None)
    try:
        rpc = _client(running)
        h = _open(rpc)
        first = _receive(rpc, h, 1)
        assert rpc.call(c.R_EndReceive(phContext=h, dwAck=c.RR_ACK, dwRequestId=1)).status == 0
        assert _receive(rpc, h, 2).pSequenceId != first.pSequenceId
        assert rpc.call(c.R_GetServerPort()).status == running.rpc.address[1]
        rpc.close()
    finally:
        running.stop()


@pytest.mark.req("MS-MQRR/3.1.4.9/R7")
def test_ack_keeps_returns_an_acknowledged_message_and_logs_it_then():
    faults = Faults(frozenset({"ack-keeps"}), rate=1.0)
    running = _server(faults)
    try:
        rpc = _client(running)
        h = _open(rpc)
        first = _receive(rpc, h, 1)
        assert rpc.call(c.R_EndReceive(phContext=h, dwAck=c.RR_ACK, dwRequestId=1)).status == 0
        assert faults.activations == []  # nothing visible yet
        again = _receive(rpc, h, 2, c.MQ_ACTION_PEEK_CURRENT)
        assert again.pSequenceId == first.pSequenceId
        [a] = faults.activations
        assert (a.fault, a.requirement, a.method) == ("ack-keeps", "MS-MQRR/3.1.4.9/R7",
                                                      "R_StartReceive")
        host, port = rpc._associations[c.REMOTEREAD].dce.get_rpc_transport().get_socket() \
            .getsockname()[:2]
        assert a.client == f"{host}:{port}"
        rpc.close()
    finally:
        running.stop()


@pytest.mark.req("MS-MQDMPR/3.1.7.3.2/R10")
def test_receive_locked_hands_out_a_locked_message_twice():
    faults = Faults(frozenset({"receive-locked"}), rate=1.0)
    running = _server(faults)
    try:
        a, b = _client(running), _client(running)
        ha, hb = _open(a), _open(b)
        held = _receive(a, ha, 1)
        twice = _receive(b, hb, 1)
        assert twice.status == 0 and twice.pSequenceId == held.pSequenceId
        assert b.call(c.R_EndReceive(phContext=hb, dwAck=c.RR_NACK, dwRequestId=1)).status == 0
        assert a.call(c.R_EndReceive(phContext=ha, dwAck=c.RR_ACK, dwRequestId=1)).status == 0
        assert [x.fault for x in faults.activations] == ["receive-locked"]
        a.close(), b.close()
    finally:
        running.stop()


@pytest.mark.req("MS-MQRR/3.1.4.6/R14", "MS-MQRR/3.1.4.3/R5", "MS-MQRR/3.1.4.1/R6")
def test_purge_close_and_port_faults():
    faults = Faults(frozenset({"purge-peek-access", "close-keeps-handle", "port-garbage"}))
    running = _server(faults)
    try:
        rpc = _client(running)
        h = _open(rpc, access=c.PEEK_ACCESS)
        assert rpc.call(c.R_PurgeQueue(phContext=h)).status == 0
        assert _receive(rpc, h, 1, c.MQ_ACTION_PEEK_CURRENT).status == 0  # nothing purged
        closed = rpc.call(c.R_CloseQueue(pphContext=h))
        assert closed.status == 0 and bytes(closed.pphContext) == h
        assert rpc.call(c.R_GetServerPort()).status == running.rpc.address[1] + 0x10000
        assert [x.fault for x in faults.activations] == ["purge-peek-access",
                                                         "close-keeps-handle", "port-garbage"]
        rpc.close()
    finally:
        running.stop()


@pytest.mark.req("MS-MQMR/3.1.4.1/R7", "MS-MQMR/3.1.4.2/R3")
def test_qmmgmt_faults():
    from mqconform.model.mqmr import PROPID_MGMT_MSMQ_CONNECTED, PROPID_MGMT_MSMQ_TYPE

    faults = Faults(frozenset({"mgmt-wrong-vt", "mgmt-any-action"}))
    running = _server(faults)
    try:
        rpc = _client(running)
        machine = MgmtObject(MgmtObjectType.MGMT_MACHINE)
        props = (PROPID_MGMT_MSMQ_CONNECTED, PROPID_MGMT_MSMQ_TYPE)
        r = rpc.call(c.R_QMMgmtGetInfo(pObjectFormat=machine, cp=2, aProp=props,
                                       apVar=(c.PropVariant(1), c.PropVariant(1))))
        assert r.status == 0 and r.apVar[0].vt == 0x0003  # a VT_LPWSTR property as VT_I4
        assert rpc.call(c.R_QMMgmtAction(pObjectFormat=machine,
                                         lpwszAction="FROBNICATE")).status == 0
        assert rpc.call(c.R_QMMgmtAction(pObjectFormat=machine,
                                         lpwszAction="CONNECT")).status == 0
        assert [x.fault for x in faults.activations] == ["mgmt-wrong-vt", "mgmt-any-action"]
        rpc.close()
    finally:
        running.stop()


def test_serve_says_it_is_faulty_and_writes_the_log(tmp_path):
    log = tmp_path / "faults.json"
    proc = subprocess.Popen([sys.executable, "-m", "mqconform.cli", "serve", "--port", "0",
                             "--fault", "port-garbage", "--fault-log", str(log)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()
        assert first.startswith("SEEDED FAULTS (not conformant on purpose): port-garbage")
        endpoint = proc.stdout.readline().split(" on ", 1)[1].strip()
        rpc = RpcClient(timeout=10)
        rpc.connect(endpoint)
        assert rpc.call(c.R_GetServerPort()).status > 0xFFFF
        rpc.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    [entry] = json.loads(log.read_text())
    assert entry["fault"] == "port-garbage" and entry["requirement"] == "MS-MQRR/3.1.4.1/R6"


def test_every_fault_names_a_requirement_the_observer_checks():
    from mqconform.model.observer import RULES

    assert set(FAULTS.values()) <= set(RULES)
