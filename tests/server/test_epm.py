"""The endpoint mapper: ept_map over real sockets, answered from the registered interfaces."""

from __future__ import annotations

import struct
import uuid

import pytest
from impacket.dcerpc.v5 import epm, transport
from impacket.dcerpc.v5.rpcrt import DCERPCException
from impacket.uuid import uuidtup_to_bin

from mqconform.server.epm import (
    EPM_INTERFACE,
    EPT_S_NOT_REGISTERED,
    EndpointMapper,
    decode_ept_map_request,
    encode_ept_map_response,
)
from mqconform.server.rpc import Reply
from mqconform.wire import dcerpc as d

REMOTEREAD = uuid.UUID("1a9134dd-7b39-45ba-ad88-44d01ca47f28")
QMMGMT = uuid.UUID("41208ee0-e970-11d1-9b9e-00e02c064c39")
EPM = d.SyntaxId(EPM_INTERFACE, 3, 0)
NDR_TUPLE = ("8a885d04-1ceb-11c9-9fe8-08002b104860", "2.0")
NDR64_TUPLE = ("71710533-beba-4937-8319-b5dbef9ccc36", "1.0")


class MqHandler:
    def interfaces(self):
        return {REMOTEREAD: (1, 0, frozenset({"ndr", "ndr64"})),
                QMMGMT: (1, 0, frozenset({"ndr"}))}

    def call(self, conn, interface, opnum, stub, ndr64):
        return Reply.fault(d.NCA_S_OP_RNG_ERROR)

    def connection_lost(self, conn):
        pass


@pytest.fixture
def mapped(start_server):
    """(endpoint mapper address, the RPC server's port), the server's interfaces registered."""
    rpc = start_server(MqHandler())
    mapper = EndpointMapper().start()
    mapper.register_server(rpc)
    yield mapper.address, rpc.address[1]
    mapper.stop()


def impacket_map(address, iface: uuid.UUID, version="1.0", syntax=NDR_TUPLE):
    host, port = address
    dce = transport.DCERPCTransportFactory(f"ncacn_ip_tcp:{host}[{port}]").get_dce_rpc()
    dce.connect()
    try:
        return epm.hept_map(host, uuidtup_to_bin((str(iface), version)),
                            dataRepresentation=uuidtup_to_bin(syntax),
                            protocol="ncacn_ip_tcp", dce=dce)
    finally:
        dce.disconnect()


@pytest.mark.req("MS-MQRR/2.1/R1", "MS-MQMR/2.1/R1")
def test_ept_map_names_the_servers_port_for_each_registered_interface(mapped):
    address, port = mapped
    assert impacket_map(address, REMOTEREAD) == f"ncacn_ip_tcp:127.0.0.1[{port}]"
    assert impacket_map(address, QMMGMT) == f"ncacn_ip_tcp:127.0.0.1[{port}]"


@pytest.mark.req("MS-MQRR/2.2/R1", "MS-MQMR/2.2/R1")
def test_ept_map_answers_ndr64_only_for_the_interface_that_has_it(mapped):
    address, port = mapped
    assert impacket_map(address, REMOTEREAD, syntax=NDR64_TUPLE) == \
        f"ncacn_ip_tcp:127.0.0.1[{port}]"
    with pytest.raises(DCERPCException, match="ept_s_not_registered"):
        impacket_map(address, QMMGMT, syntax=NDR64_TUPLE)


@pytest.mark.parametrize("iface,version", [
    (uuid.UUID("0b6edbfa-4a24-4fc6-8a23-942b1eca65d1"), "1.0"),  # never registered
    (REMOTEREAD, "2.0"),  # other major version
    (REMOTEREAD, "1.1"),  # newer minor version than registered
])
def test_ept_map_for_an_unregistered_interface_is_ept_s_not_registered(mapped, iface, version):
    with pytest.raises(DCERPCException, match="ept_s_not_registered") as info:
        impacket_map(mapped[0], iface, version)
    assert info.value.get_error_code() == EPT_S_NOT_REGISTERED == 0x16C9A0D6


def ept_map_stub(tower: bytes | None, max_towers: int = 4, obj: bool = False) -> bytes:
    out = struct.pack("<I", 1) + uuid.uuid4().bytes_le if obj else struct.pack("<I", 0)
    if tower is None:
        out += struct.pack("<I", 0)
    else:
        out += struct.pack("<III", 2, len(tower), len(tower)) + tower
        out += bytes((-len(out)) % 4)
    return out + bytes(20) + struct.pack("<I", max_towers)


def raw_ept_map(client, stub: bytes):
    client.bind([(0, EPM, [d.NDR])])
    return client.call(0, 3, stub)


def test_the_answered_tower_has_the_five_ncacn_ip_tcp_floors(mapped, client_for):
    address, port = mapped
    asked = d.TcpTower(d.SyntaxId(REMOTEREAD, 1, 0), d.NDR64, 0, "0.0.0.0")
    answer = raw_ept_map(client_for(address), ept_map_stub(d.encode_tower(asked), obj=True))
    handle, num = answer[:20], struct.unpack("<I", answer[20:24])[0]
    assert handle == bytes(20) and num == 1
    max_count, offset, actual, ref = struct.unpack("<IIII", answer[24:40])
    assert (max_count, offset, actual) == (4, 0, 1) and ref != 0
    length, length2 = struct.unpack("<II", answer[40:48])
    assert length == length2
    tower = d.decode_tcp_tower(answer[48:48 + length])
    assert tower.interface == d.SyntaxId(REMOTEREAD, 1, 0)
    assert tower.transfer_syntax == d.NDR64
    assert (tower.port, tower.address) == (port, "127.0.0.1")
    assert [f.protocol for f in tower.floors] == [0x0D, 0x0D, 0x0B, 0x07, 0x09]
    assert struct.unpack("<I", answer[-4:])[0] == 0


def test_a_tower_for_another_protocol_sequence_is_not_registered(mapped, client_for):
    floors = [d.Floor(b"\x0d" + REMOTEREAD.bytes_le + b"\x01\x00", b"\x00\x00"),
              d.Floor(b"\x0d" + d.NDR.uuid.bytes_le + b"\x02\x00", b"\x00\x00"),
              d.Floor(b"\x0b", b"\x00\x00"),
              d.Floor(b"\x0f", b"\\pipe\\x\x00")]  # ncacn_np
    tower = struct.pack("<H", len(floors)) + b"".join(
        struct.pack("<H", len(f.lhs)) + f.lhs + struct.pack("<H", len(f.rhs)) + f.rhs
        for f in floors)
    answer = raw_ept_map(client_for(mapped[0]), ept_map_stub(tower))
    assert struct.unpack("<I", answer[20:24])[0] == 0
    assert struct.unpack("<I", answer[-4:])[0] == EPT_S_NOT_REGISTERED


def test_an_undecodable_ept_map_stub_is_a_bad_stub_fault(mapped, client_for):
    fault = raw_ept_map(client_for(mapped[0]), b"\x01\x00\x00\x00\x02")
    assert isinstance(fault, d.Fault) and fault.status == d.RPC_X_BAD_STUB_DATA


def test_the_endpoint_mapper_speaks_ndr_only_and_refuses_other_opnums(mapped, client_for):
    c = client_for(mapped[0])
    ack = c.bind([(0, EPM, [d.NDR64])])
    assert ack.body.results[0].reason == d.ProviderReason.PROPOSED_TRANSFER_SYNTAXES_NOT_SUPPORTED
    c.bind([(1, EPM, [d.NDR])], alter=True)
    assert c.call(1, 4, bytes(20)) == bytes(24)  # ept_lookup_handle_free
    assert c.call(1, 2, b"").status == d.NCA_S_OP_RNG_ERROR


def test_ept_map_request_and_response_codecs_agree_with_impacket():
    tower = d.encode_tower(d.TcpTower(d.SyntaxId(QMMGMT, 1, 0), d.NDR, 0))
    req = epm.ept_map()
    req["obj"] = b"\x00" * 16
    req["map_tower"]["tower_length"] = len(tower)
    req["map_tower"]["tower_octet_string"] = tower
    req["max_towers"] = 3
    decoded = decode_ept_map_request(req.getData())
    assert decoded.map_tower == tower and decoded.max_towers == 3
    out = encode_ept_map_response([tower, tower], 3, 0)
    resp = epm.ept_mapResponse(out)
    assert resp["num_towers"] == 2 and resp["status"] == 0
    assert b"".join(resp["ITowers"][1]["tower_octet_string"]) == tower
