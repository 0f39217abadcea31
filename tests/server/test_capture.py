"""A session with the reference server, captured on the loopback interface by dumpcap (as an
operator captures), is read by Wireshark's own dissector (tshark) as DCE/RPC: binds to the
RemoteRead and qmmgmt interface UUIDs, and every request and response with the opnum we sent.

Needs tshark and dumpcap and a raw socket on lo (root); .ci/run installs tshark and runs as
root. Outside CI the test is skipped when one is missing; under CI=true it fails instead."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import struct
import subprocess
import time
import uuid

import pytest

from mqconform.captures.dissector import TSHARK_OPTIONS
from mqconform.conformance.client import RpcClient
from mqconform.model import calls as c
from mqconform.model.formats import MgmtObject, MgmtObjectType, parse_format_name, to_queue_format
from mqconform.server.main import start

QUEUES = "queues:\n  - path: private$\\orders\n    messages: [{body: one}, {body: two}]\n"


def _requirements() -> str | None:
    for tool in ("tshark", "dumpcap"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install tshark)"
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


def _packets(pcap) -> int:
    """Enhanced packet blocks (pcapng block type 6) written so far to a file being captured."""
    data = pcap.read_bytes() if pcap.exists() else b""
    pos = count = 0
    while pos + 12 <= len(data):
        kind, length = struct.unpack_from("<II", data, pos)
        if length < 12 or pos + length > len(data):
            break
        count += kind == 6
        pos += length
    return count


def test_tshark_dissects_every_frame_of_a_session_as_dcerpc(tmp_path, capture_tools):
    path = tmp_path / "queues.yaml"
    path.write_text(QUEUES)
    server = start(host="127.0.0.1", port=0, queues=str(path))
    port = server.rpc.address[1]
    pcap = tmp_path / "session.pcapng"
    dumpcap = subprocess.Popen(["dumpcap", "-i", "lo", "-f", f"tcp port {port}", "-w", str(pcap)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        # dumpcap says "Capturing on 'Loopback: lo'" once its filter is in place
        started = dumpcap.stderr.readline() if dumpcap.stderr else ""
        while started and "Capturing on" not in started:
            started = dumpcap.stderr.readline()
        assert "Capturing on" in started, "dumpcap did not start"
        # it may still miss the first packets: knock on the port until a knock is in the file
        deadline = time.monotonic() + 30
        while not _packets(pcap):
            assert time.monotonic() < deadline, "dumpcap captured nothing on lo"
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
            time.sleep(0.3)
        sent = _session(port)
    finally:
        server.stop()
        # libpcap hands packets over in blocks, a block at the latest 1 s after its first
        # packet; a capture stopped sooner can lose the last block
        time.sleep(1.5)
        dumpcap.send_signal(signal.SIGINT)  # it writes what it holds and closes the file
        dumpcap.communicate(timeout=60)
    fields = ["frame.number", "dcerpc.pkt_type", "dcerpc.cn_bind_to_uuid", "dcerpc.opnum"]
    out = subprocess.run(
        ["tshark", *TSHARK_OPTIONS, "-r", str(pcap), "-d", f"tcp.port=={port},dcerpc", "-Y", "dcerpc",
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
