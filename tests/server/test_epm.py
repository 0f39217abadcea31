"""The endpoint mapper: ept_map over real sockets, answered from the registered interfaces."""

from __future__ import annotations

import struct
import uuid

import pytest
from impacket.dcerpc.v5 import epm, transport
from impacket.dcerpc.v5.rpcrt import DCERPCException
from impacket.uuid import bin_to_string, uuidtup_to_bin

from mqconform.server.epm import (
    EPM_INTERFACE,
    EPT_S_NOT_REGISTERED,
    RPC_C_EP_ALL_ELTS,
    RPC_C_EP_MATCH_BY_IF,
    RPC_C_EP_MATCH_BY_OBJ,
    RPC_C_VERS_ALL,
    RPC_C_VERS_COMPATIBLE,
    RPC_C_VERS_EXACT,
    RPC_C_VERS_UPTO,
    EndpointMapper,
    decode_ept_lookup_request,
    decode_ept_map_request,
    encode_ept_lookup_response,
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
    for opnum in (0, 1, 5, 6):  # ept_insert, ept_delete, ept_inq_object, ept_mgmt_delete
        assert c.call(1, opnum, b"").status == d.NCA_S_OP_RNG_ERROR


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


# --- ept_lookup (C706 appendix O), as impacket's rpcdump asks it -------------------------------

def impacket_lookup(address, **kw):
    host, port = address
    dce = transport.DCERPCTransportFactory(f"ncacn_ip_tcp:{host}[{port}]").get_dce_rpc()
    dce.connect()
    try:
        return epm.hept_lookup(host, dce=dce, **kw)
    finally:
        dce.disconnect()


def _towers(entries) -> set[tuple[str, str, str]]:
    """(interface "uuid vX.Y", transfer syntax, string binding) of each entry's tower, as
    impacket's EPMTower and PrintStringBinding (what rpcdump prints) read it."""
    out = set()
    for entry in entries:
        tower = entry["tower"] if isinstance(entry["tower"], epm.EPMTower) else epm.EPMTower(
            b"".join(entry["tower"]["tower_octet_string"]))
        floors = tower["Floors"]
        out.add((str(floors[0]).lower(), bin_to_string(floors[1]["DataRepUuid"]).lower(),
                 epm.PrintStringBinding(floors)))
    return out


def test_ept_lookup_lists_every_interface_and_transfer_syntax_as_rpcdump_reads_them(mapped):
    address, port = mapped
    entries = impacket_lookup(address)
    assert _towers(entries) == {
        (f"{REMOTEREAD} v1.0", NDR_TUPLE[0], f"ncacn_ip_tcp:127.0.0.1[{port}]"),
        (f"{REMOTEREAD} v1.0", NDR64_TUPLE[0], f"ncacn_ip_tcp:127.0.0.1[{port}]"),
        (f"{QMMGMT} v1.0", NDR_TUPLE[0], f"ncacn_ip_tcp:127.0.0.1[{port}]")}
    assert all(e["object"] == b"\x00" * 16 and e["annotation"] == b"\x00" for e in entries)


def _lookup_request(inquiry: int, iface: d.SyntaxId | None = None, vers_option: int = 0,
                    handle: bytes = bytes(20), max_ents: int = 500) -> epm.ept_lookup:
    """An ept_lookup request made with impacket's NDR. (impacket's own hept_lookup writes an
    interface's version octets into the USHORT fields as bytes, which encodes 0.0: the
    version is set here as numbers.)"""
    req = epm.ept_lookup()
    req["inquiry_type"] = inquiry
    if iface is not None:
        req["Ifid"]["Uuid"] = iface.uuid.bytes_le
        req["Ifid"]["VersMajor"] = iface.major
        req["Ifid"]["VersMinor"] = iface.minor
    req["vers_option"] = vers_option
    entry = epm.ept_lookup_handle_t()
    entry.fromString(handle)
    req["entry_handle"] = entry
    req["max_ents"] = max_ents
    return req


def _ask(address, req) -> epm.ept_lookupResponse:
    host, port = address
    dce = transport.DCERPCTransportFactory(f"ncacn_ip_tcp:{host}[{port}]").get_dce_rpc()
    dce.connect()
    try:
        dce.bind(epm.MSRPC_UUID_PORTMAP)
        return dce.request(req)
    finally:
        dce.disconnect()


@pytest.mark.parametrize("version,option,found", [
    ((1, 0), RPC_C_VERS_EXACT, True),
    ((1, 1), RPC_C_VERS_EXACT, False),
    ((1, 1), RPC_C_VERS_UPTO, True),
    ((0, 9), RPC_C_VERS_UPTO, False),
    ((1, 0), RPC_C_VERS_COMPATIBLE, True),
    ((1, 1), RPC_C_VERS_COMPATIBLE, False),  # 1.0 does not offer what 1.1 has
    ((7, 7), RPC_C_VERS_ALL, True),
])
def test_ept_lookup_by_interface_follows_the_version_option(mapped, version, option, found):
    address, port = mapped
    req = _lookup_request(RPC_C_EP_MATCH_BY_IF, d.SyntaxId(QMMGMT, *version), option)
    if not found:
        with pytest.raises(DCERPCException) as exc:
            _ask(address, req)
        assert exc.value.get_error_code() == EPT_S_NOT_REGISTERED
        return
    resp = _ask(address, req)
    assert _towers(resp["entries"][i] for i in range(resp["num_ents"])) == {
        (f"{QMMGMT} v1.0", NDR_TUPLE[0], f"ncacn_ip_tcp:127.0.0.1[{port}]")}


def test_ept_lookup_pages_through_max_ents_with_its_entry_handle(mapped):
    handle, seen = bytes(20), []
    for _ in range(4):
        resp = _ask(mapped[0], _lookup_request(RPC_C_EP_ALL_ELTS, vers_option=RPC_C_VERS_ALL,
                                               handle=handle, max_ents=1))
        assert resp["status"] == 0 and resp["num_ents"] == 1
        seen.append(b"".join(resp["entries"][0]["tower"]["tower_octet_string"]))
        handle = resp["entry_handle"].getData()
        if handle == bytes(20):
            break
    assert len(seen) == 3 and len(set(seen)) == 3  # three entries, one a call, then the end


def test_ept_lookup_of_an_object_nothing_is_registered_with_is_not_registered(mapped):
    with pytest.raises(DCERPCException) as exc:
        impacket_lookup(mapped[0], inquiry_type=RPC_C_EP_MATCH_BY_OBJ,
                        objectUUID=uuid.uuid4().bytes_le)
    assert exc.value.get_error_code() == EPT_S_NOT_REGISTERED


def test_ept_lookup_codecs_agree_with_impacket():
    req = _lookup_request(RPC_C_EP_MATCH_BY_IF, d.SyntaxId(QMMGMT, 1, 2), RPC_C_VERS_COMPATIBLE,
                          max_ents=7)
    got = decode_ept_lookup_request(req.getData())
    assert (got.inquiry_type, got.interface, got.vers_option, got.max_ents) == (
        1, d.SyntaxId(QMMGMT, 1, 2), RPC_C_VERS_COMPATIBLE, 7)
    assert got.object in (None, uuid.UUID(int=0))  # impacket sends a pointer to the nil UUID
    tower = d.encode_tower(d.TcpTower(d.SyntaxId(QMMGMT, 1, 0), d.NDR, 2103))
    out = encode_ept_lookup_response([(uuid.UUID(int=0), tower, "qmmgmt"),
                                      (uuid.UUID(int=5), tower + b"", "")], 7, 0)
    resp = epm.ept_lookupResponse(out)
    assert resp["num_ents"] == 2 and resp["status"] == 0
    assert b"".join(resp["entries"][0]["annotation"]) == b"qmmgmt\x00"
    assert b"".join(resp["entries"][1]["tower"]["tower_octet_string"]) == tower
    assert uuid.UUID(bytes_le=resp["entries"][1]["object"]) == uuid.UUID(int=5)


def test_an_undecodable_ept_lookup_stub_is_a_bad_stub_fault(mapped, client_for):
    c = client_for(mapped[0])
    c.bind([(0, EPM, [d.NDR])])
    fault = c.call(0, 2, b"\x00\x00\x00\x00\x01")
    assert isinstance(fault, d.Fault) and fault.status == d.RPC_X_BAD_STUB_DATA
