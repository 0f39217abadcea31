"""Verification trailers (MS-RPCE 2.2.2.13) after the stub, as Windows clients and scapy's
DCE/RPC client send them on the first call after a bind: the reference server finds the
trailer, checks each command where it applies (the presentation context, the request header,
the bind's header-signing flag), runs the call, and answers a call whose trailer does not
match with rpc_s_access_denied and a malformed trailer with nca_s_proto_error."""

from __future__ import annotations

import struct
import uuid

import pytest

from mqconform.model import calls as c
from mqconform.model.formats import parse_format_name, to_queue_format
from mqconform.model.status import MQ_OK
from mqconform.server.main import start
from mqconform.server.rpc import RPC_S_ACCESS_DENIED
from mqconform.wire import dcerpc as d
from mqconform.wire import ndr

QUEUES = """
queue_manager: {computer_name: MQREF}
queues:
  - path: private$\\orders
    messages: [{body: one}]
"""
ORDERS = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\orders"))
REMOTEREAD = d.SyntaxId(c.REMOTEREAD_UUID, 1, 0)


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    path = tmp_path_factory.mktemp("vt") / "queues.yaml"
    path.write_text(QUEUES)
    r = start(host="127.0.0.1", port=0, queues=str(path))
    yield r
    r.stop()


def connect(client_for, r, header_sign: bool = True):
    """A raw connection (tests/server/conftest.py RawClient) with RemoteRead bound, the bind
    flagged PFC_SUPPORT_HEADER_SIGN as Windows flags it."""
    cl = client_for(r.rpc)
    flags = d.PFC_WHOLE | (d.PFC_SUPPORT_HEADER_SIGN if header_sign else 0)
    assert isinstance(cl.bind([(0, REMOTEREAD, [d.NDR])], flags=flags).body, d.BindAck)
    return cl


def call(cl, typed_call: c.Call, trailer: list[d.VtCommand] | bytes):
    """The call with stub padding to 4 octets and then the trailer (MS-RPCE 2.2.2.13)."""
    stub = ndr.encode_request(typed_call, False)
    tail = bytes(-len(stub) % 4) + (trailer if isinstance(trailer, bytes)
                                    else d.encode_verification_trailer(trailer))
    return cl.typed(typed_call, after_stub=tail)


def windows_trailer(cl, opnum: int) -> list[d.VtCommand]:
    """What a Windows client puts after the stub of its first call after a bind."""
    return [d.vt_bitmask(), d.vt_pcontext(REMOTEREAD, d.NDR),
            d.vt_header2(cl.call_id, 0, opnum)]


def _open(cl, trailer):
    return call(cl, c.R_OpenQueue(pQueueFormat=ORDERS, dwAccess=c.RECEIVE_ACCESS,
                                  pClientId=uuid.uuid4(), fNonRoutingServer=1), trailer)


def test_the_trailer_codec_reads_back_what_it_writes():
    commands = [d.vt_bitmask(), d.vt_pcontext(REMOTEREAD, d.NDR64), d.vt_header2(7, 1, 2)]
    body = b"\x01\x02\x03\x00" + d.encode_verification_trailer(commands)
    found = d.find_verification_trailer(body)
    assert found.offset == 4 and found.commands == tuple(commands)
    assert found.commands[1].pcontext() == (REMOTEREAD, d.NDR64)
    assert found.commands[2].header2() == (0, b"\x10\x00\x00\x00", 7, 1, 2)
    assert d.find_verification_trailer(b"\x00" * 40) is None


@pytest.mark.parametrize("method", ["R_GetServerPort", "R_OpenQueue"])
def test_a_call_with_a_windows_style_trailer_gets_its_result(running, client_for, method):
    cl = connect(client_for, running)
    if method == "R_GetServerPort":
        out = call(cl, c.R_GetServerPort(), windows_trailer(cl, 0))
        assert not isinstance(out, d.Fault) and out.status == running.rpc.address[1]
    else:  # a stub that needs padding to 4 octets before the trailer
        out = _open(cl, windows_trailer(cl, 2))
        assert not isinstance(out, d.Fault) and out.status == MQ_OK and out.pphContext
    assert cl.typed(c.R_GetServerPort()).status == running.rpc.address[1]  # and none after


@pytest.mark.parametrize("case", ["other interface", "other syntax", "other opnum",
                                  "other call id", "header signing not bound",
                                  "unknown must-process command"])
def test_a_trailer_that_does_not_match_the_call_is_refused(running, client_for, case):
    cl = connect(client_for, running, header_sign=case != "header signing not bound")
    commands = {
        "other interface": [d.vt_pcontext(d.SyntaxId(c.QMMGMT_UUID, 1, 0), d.NDR)],
        "other syntax": [d.vt_pcontext(REMOTEREAD, d.NDR64)],
        "other opnum": [d.vt_header2(cl.call_id, 0, 5)],
        "other call id": [d.vt_header2(cl.call_id + 9, 0, 0)],
        "header signing not bound": [d.vt_bitmask()],
        "unknown must-process command": [d.VtCommand(0x0077, True, b"\0" * 4)],
    }[case]
    out = call(cl, c.R_GetServerPort(), commands)
    assert isinstance(out, d.Fault) and out.status == RPC_S_ACCESS_DENIED, out


def test_an_unknown_command_the_client_does_not_insist_on_is_ignored(running, client_for):
    cl = connect(client_for, running)
    out = call(cl, c.R_GetServerPort(), [d.VtCommand(0x0077, False, b"\0" * 8),
                                         d.vt_pcontext(REMOTEREAD, d.NDR)])
    assert not isinstance(out, d.Fault) and out.status == running.rpc.address[1]


@pytest.mark.parametrize("tail", [
    d.VT_SIGNATURE + struct.pack("<HH", 0x0002, 0x28) + b"\0" * 8,  # runs past the PDU
    d.VT_SIGNATURE + struct.pack("<HH", 0x0001, 4) + b"\0" * 4 + b"\xff" * 4,  # and more
    d.VT_SIGNATURE + struct.pack("<HH", 0x8001, 8) + b"\0" * 8,  # bitmask of length 8
])
def test_a_malformed_trailer_is_a_protocol_error(running, client_for, tail):
    out = call(connect(client_for, running), c.R_GetServerPort(), tail)
    assert isinstance(out, d.Fault) and out.status == d.NCA_S_PROTO_ERROR, out


class _Tap:
    """A TCP relay on 127.0.0.1 in front of the server that keeps what the client sent."""

    def __init__(self, port: int):
        import socket
        import threading

        self.sent = bytearray()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]

        def pump(src, dst, keep):
            try:
                while chunk := src.recv(65536):
                    if keep:
                        self.sent += chunk
                    dst.sendall(chunk)
            except OSError:
                pass
            finally:
                for sock in (src, dst):
                    try:
                        sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

        def accept():
            client, _ = self._listener.accept()
            server = socket.create_connection(("127.0.0.1", port))
            threading.Thread(target=pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=pump, args=(server, client, False), daemon=True).start()

        threading.Thread(target=accept, daemon=True).start()

    def requests(self) -> list[bytes]:
        """The stubs of the request PDUs the client sent, in order."""
        out, data = [], bytes(self.sent)
        while len(data) >= 16:
            size = struct.unpack_from("<H", data, 8)[0]
            if data[2] == 0:
                out.append(data[24:size])
            data = data[size:]
        return out

    def close(self):
        self._listener.close()


def test_scapys_dcerpc_client_completes_its_first_call_after_bind(running):
    """scapy 2.8's DCERPC_Client adds a trailer to the first request on an interface (what it
    carries is read off the wire here): the call completes, and the next one too."""
    from msrpcs import ms_mqrr
    from scapy.layers.dcerpc import DCERPC_Transport, find_dcerpc_interface
    from scapy.layers.msrpce.rpcclient import DCERPC_Client

    tap = _Tap(running.rpc.address[1])
    client = DCERPC_Client(DCERPC_Transport.NCACN_IP_TCP, ndr64=False, verb=False)
    client.connect("127.0.0.1", port=tap.port)
    try:
        client.bind(find_dcerpc_interface("RemoteRead"))
        first = client.sr1_req(ms_mqrr.R_GetServerPort_Request())
        second = client.sr1_req(ms_mqrr.R_GetServerPort_Request())
    finally:
        client.close()
        tap.close()
    assert first.status == running.rpc.address[1] == second.status
    stubs = tap.requests()
    assert len(stubs) == 2
    trailer = d.find_verification_trailer(stubs[0])
    assert trailer is not None, stubs[0].hex()  # the case this test is for
    assert d.SEC_VT_COMMAND_PCONTEXT in {cmd.command for cmd in trailer.commands}
    assert d.find_verification_trailer(stubs[1]) is None


def test_impackets_client_completes_its_first_call_after_bind(running):
    from mqconform.conformance.client import RpcClient

    cl = RpcClient(timeout=10)
    cl.connect(f"ncacn_ip_tcp:127.0.0.1[{running.rpc.address[1]}]")
    try:
        assert cl.call(c.R_GetServerPort()).status == running.rpc.address[1]
    finally:
        cl.close()
