"""A session with the reference server, captured on the loopback interface, is read by
Wireshark's own dissector (tshark) as DCE/RPC: binds to the RemoteRead and qmmgmt interface
UUIDs, and every request and response with the opnum we sent.

Needs tshark and a raw socket on lo (root); .ci/run installs tshark and runs as root. Outside
CI the test is skipped when either is missing; under CI=true it fails instead."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
import uuid

import pytest

from mqconform.conformance.client import RpcClient
from mqconform.model import calls as c
from mqconform.model.formats import MgmtObject, MgmtObjectType, parse_format_name, to_queue_format
from mqconform.server.main import start

QUEUES = "queues:\n  - path: private$\\orders\n    messages: [{body: one}, {body: two}]\n"


def _requirements() -> str | None:
    if shutil.which("tshark") is None:
        return "tshark is not installed (apt-get install tshark)"
    if os.geteuid() != 0:
        return "capturing on lo needs root"
    return None


@pytest.fixture
def capture_tools():
    missing = _requirements()
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the capture test: {missing}")
        pytest.skip(missing)


def _session(port: int) -> list[int]:
    """Calls of both interfaces, in NDR and NDR64; returns the opnums in order."""
    opnums = []
    fmt = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\orders"))
    for ndr64 in (False, True):
        with RpcClient(timeout=10) as cl:
            cl.connect(f"ncacn_ip_tcp:127.0.0.1[{port}]", ndr64=ndr64)
            for call in (c.R_GetServerPort(),):
                cl.call(call)
                opnums.append(call.opnum)
            ctx = cl.call(c.R_OpenQueue(pQueueFormat=fmt, dwAccess=c.RECEIVE_ACCESS,
                                        pClientId=uuid.uuid4())).pphContext
            opnums.append(2)
            for call in (c.R_StartReceive(phContext=ctx, ulAction=c.MQ_ACTION_PEEK_CURRENT,
                                          dwMaxBodySize=4096),
                         c.R_CloseQueue(pphContext=ctx)):
                cl.call(call)
                opnums.append(call.opnum)
            if not ndr64:
                machine = MgmtObject(type=MgmtObjectType.MGMT_MACHINE, pQueueFormat=None)
                cl.call(c.R_QMMgmtGetInfo(pObjectFormat=machine, cp=1, aProp=(1,),
                                          apVar=(c.PropVariant(1),)))
                opnums.append(0)
    return opnums


def test_tshark_dissects_every_frame_of_a_session_as_dcerpc(tmp_path, capture_tools):
    from scapy.all import AsyncSniffer, wrpcap

    path = tmp_path / "queues.yaml"
    path.write_text(QUEUES)
    server = start(host="127.0.0.1", port=0, queues=str(path))
    port = server.rpc.address[1]
    listening = threading.Event()
    sniffer = AsyncSniffer(iface="lo", store=True, started_callback=listening.set,
                           lfilter=lambda p: p.haslayer("TCP") and port in (p["TCP"].sport,
                                                                           p["TCP"].dport))
    sniffer.start()
    assert listening.wait(30), "the sniffer did not start"
    time.sleep(0.2)
    try:
        sent = _session(port)
    finally:
        time.sleep(0.5)
        packets = sniffer.stop()
        server.stop()
    pcap = tmp_path / "session.pcap"
    wrpcap(str(pcap), packets)
    fields = ["frame.number", "dcerpc.pkt_type", "dcerpc.cn_bind_to_uuid", "dcerpc.opnum"]
    out = subprocess.run(
        ["tshark", "-r", str(pcap), "-d", f"tcp.port=={port},dcerpc", "-Y", "dcerpc",
         "-T", "fields", *sum((["-e", f] for f in fields), [])],
        capture_output=True, text=True, timeout=120, check=True).stdout
    rows = [line.split("\t") for line in out.splitlines() if line.strip()]
    assert rows, "tshark found no DCE/RPC frame"
    binds = {r[2].lower() for r in rows if r[1] == "11"}  # 11: bind
    assert str(c.REMOTEREAD_UUID) in binds and str(c.QMMGMT_UUID) in binds
    requests = [int(r[3]) for r in rows if r[1] == "0"]  # 0: request
    responses = [int(r[3]) for r in rows if r[1] == "2" and r[3]]  # 2: response
    assert requests == sent
    assert responses == sent
