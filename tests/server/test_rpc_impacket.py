"""impacket's DCE/RPC client (transport, rpcrt) as an independent client of the runtime."""

from __future__ import annotations

import uuid

import pytest
from impacket.dcerpc.v5 import transport
from impacket.dcerpc.v5.rpcrt import DCERPCException
from impacket.uuid import uuidtup_to_bin

from mqconform.server.rpc import Reply

TEST_IF = uuid.UUID("6a3f0f52-51c8-4c5e-9d2b-0d8b1c7f4e11")
NDR64 = ("71710533-BEBA-4937-8319-B5DBEF9CCC36", "1.0")


class ReverseHandler:
    """opnum 0: the stub reversed, then b"/64" or b"/32"; opnum 1: n octets; else op_rng."""

    def __init__(self):
        self.seen: list[tuple[int, int, bool]] = []
        self.lost = 0

    def interfaces(self):
        return {TEST_IF: (1, 0, frozenset({"ndr", "ndr64"}))}

    def call(self, conn, interface, opnum, stub, ndr64):
        self.seen.append((opnum, len(stub), ndr64))
        if opnum == 0:
            return Reply.stub(stub[::-1] + (b"/64" if ndr64 else b"/32"))
        if opnum == 1:
            n = int.from_bytes(stub[:4], "little")
            return Reply.stub(bytes(i % 256 for i in range(n)))
        return Reply.fault(0x1C010002)

    def connection_lost(self, conn):
        self.lost += 1


@pytest.fixture
def impacket_dce(start_server):
    """connect(**server_options) -> (impacket DCERPC_v5 connected to a fresh server, handler)."""
    opened = []

    def connect(**options):
        handler = ReverseHandler()
        host, port = start_server(handler, **options).address
        dce = transport.DCERPCTransportFactory(f"ncacn_ip_tcp:{host}[{port}]").get_dce_rpc()
        dce.connect()
        opened.append(dce)
        return dce, handler

    yield connect
    for dce in opened:
        try:
            dce.disconnect()
        except Exception:
            pass


def test_impacket_binds_with_ndr_and_calls(impacket_dce):
    dce, handler = impacket_dce()
    dce.bind(uuidtup_to_bin((str(TEST_IF), "1.0")))
    dce.call(0, b"impacket")
    assert dce.recv() == b"tekcapmi/32"
    assert handler.seen == [(0, 8, False)]


def test_impacket_binds_with_ndr64_and_calls(impacket_dce):
    dce, handler = impacket_dce()
    dce.bind(uuidtup_to_bin((str(TEST_IF), "1.0")), transfer_syntax=NDR64)
    dce.call(0, b"abc")
    assert dce.recv() == b"cba/64"
    assert handler.seen == [(0, 3, True)]


def test_impacket_reassembles_a_response_fragmented_by_the_server(impacket_dce):
    dce, _ = impacket_dce(max_frag=512)
    dce.bind(uuidtup_to_bin((str(TEST_IF), "1.0")))
    dce.call(1, (70000).to_bytes(4, "little"))
    assert dce.recv() == bytes(i % 256 for i in range(70000))


def test_a_request_fragmented_by_impacket_is_reassembled(impacket_dce):
    dce, handler = impacket_dce()
    dce.bind(uuidtup_to_bin((str(TEST_IF), "1.0")))
    dce.set_max_fragment_size(200)  # impacket then sends pieces of a few hundred octets
    payload = bytes(range(256)) * 40
    dce.call(0, payload)
    assert dce.recv() == payload[::-1] + b"/32"
    assert handler.seen == [(0, len(payload), False)]


def test_impacket_sees_the_fault_for_an_unknown_opnum(impacket_dce):
    dce, _ = impacket_dce()
    dce.bind(uuidtup_to_bin((str(TEST_IF), "1.0")))
    dce.call(42, b"")
    with pytest.raises(DCERPCException, match="nca_s_op_rng_error"):
        dce.recv()


def test_impacket_is_told_an_unknown_interface_is_not_supported(impacket_dce):
    dce, _ = impacket_dce()
    with pytest.raises(DCERPCException, match="abstract_syntax_not_supported"):
        dce.bind(uuidtup_to_bin((str(uuid.uuid4()), "1.0")))
