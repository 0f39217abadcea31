"""The connection-oriented PDU codec: round trips, agreement with impacket's encodings, and
malformed input always a PduError naming the field."""

from __future__ import annotations

import struct
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from impacket.dcerpc.v5 import epm, rpcrt
from impacket.uuid import uuidtup_to_bin

from mqconform.wire import dcerpc as d

IFACE = d.SyntaxId(uuid.UUID("1a9134dd-7b39-45ba-ad88-44d01ca47f28"), 1, 0)
OBJ = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")


# --- round trips -------------------------------------------------------------------------------

BODIES = [
    d.Bind(5840, 4280, 0, (d.ContextElement(0, IFACE, (d.NDR,)),
                           d.ContextElement(1, IFACE, (d.NDR64, d.NDR)))),
    d.AlterContext(5840, 5840, 7, (d.ContextElement(3, IFACE, (d.NDR,)),)),
    d.BindAck(4280, 4280, 0x1234, b"49667", (
        d.ContextResultItem(d.ContResult.ACCEPTANCE, 0, d.NDR64),
        d.ContextResultItem(d.ContResult.PROVIDER_REJECTION, 2),
        d.ContextResultItem(d.ContResult.NEGOTIATE_ACK, 2))),
    d.AlterContextResp(4280, 4280, 0x1234, b"", (d.ContextResultItem(0, 0, d.NDR),)),
    d.BindNak(d.RejectReason.PROTOCOL_VERSION_NOT_SUPPORTED),
    d.Request(1, 7, b"stub data", 9),
    d.Request(1, 7, b"with object", 11, OBJ),
    d.Response(1, b"out", 3, 2),
    d.Fault(1, d.NCA_S_OP_RNG_ERROR),
    d.Shutdown(), d.CoCancel(), d.Orphaned(), d.Auth3(),
]


@pytest.mark.parametrize("body", BODIES, ids=lambda b: type(b).__name__)
def test_every_pdu_decodes_to_what_was_encoded(body):
    raw = d.encode_pdu(body, 42)
    pdu = d.decode_pdu(raw)
    assert pdu.body == body and pdu.call_id == 42 and pdu.header.frag_length == len(raw)
    assert pdu.header.rpc_vers == 5 and pdu.header.little_endian and pdu.auth is None
    assert bool(pdu.pfc_flags & d.PFC_OBJECT_UUID) == (getattr(body, "object", None) is not None)


def test_an_auth_verifier_round_trips_and_bounds_the_stub():
    auth = d.AuthVerifier(10, 6, 0, 79231, b"\xaa" * 16)
    raw = d.encode_pdu(d.Request(0, 1, b"12345"), 3, auth=auth)
    pdu = d.decode_pdu(raw)
    assert pdu.body.stub == b"12345"
    assert pdu.auth == d.AuthVerifier(10, 6, 3, 79231, b"\xaa" * 16)
    assert pdu.header.auth_length == 16


def test_the_header_layout_is_c706s():
    raw = d.encode_pdu(d.Request(2, 3, b"abcd", 4), 0x01020304, d.PFC_WHOLE)
    assert raw[:16] == bytes([5, 0, 0, 3, 0x10, 0, 0, 0, 28, 0, 0, 0, 4, 3, 2, 1])
    assert raw[16:24] == struct.pack("<IHH", 4, 2, 3)


def test_a_big_endian_pdu_is_decoded_in_its_own_byte_order():
    body = struct.pack(">IHH", 4, 1, 9) + b"abcd"
    raw = struct.pack(">BBBB4sHHI", 5, 0, 0, 3, b"\x00\x00\x00\x00", 16 + len(body), 0, 99) + body
    pdu = d.decode_pdu(raw)
    assert not pdu.header.little_endian and not pdu.header.ndr_native
    assert pdu.call_id == 99 and pdu.body == d.Request(1, 9, b"abcd", 4)


def test_the_bind_ack_result_list_is_aligned_to_four():
    for addr in (b"", b"1", b"135", b"49667"):
        raw = d.encode_pdu(d.BindAck(1, 1, 1, addr, (d.ContextResultItem(0, 0, d.NDR),)), 1)
        sec_end = 26 + (len(addr) + 1 if addr else 0)
        assert (len(raw) - 24 - 4) % 4 == 0 and len(raw) - 28 >= sec_end
        assert d.decode_pdu(raw).body.sec_addr == addr


# --- agreement with impacket -------------------------------------------------------------------


def test_a_bind_built_by_impacket_decodes():
    bind = rpcrt.MSRPCBind()
    for ctx, syntax in ((0, d.NDR), (1, d.NDR64)):
        item = rpcrt.CtxItem()
        item["ContextID"] = ctx
        item["TransItems"] = 1
        item["AbstractSyntax"] = uuidtup_to_bin((str(IFACE.uuid), "1.0"))
        item["TransferSyntax"] = uuidtup_to_bin((str(syntax.uuid), f"{syntax.major}.0"))
        bind.addCtxItem(item)
    hdr = rpcrt.MSRPCHeader()
    hdr["type"] = rpcrt.MSRPC_BIND
    hdr["pduData"] = bind.getData()
    hdr["call_id"] = 5
    pdu = d.decode_pdu(hdr.get_packet())
    assert isinstance(pdu.body, d.Bind) and pdu.call_id == 5
    assert [(c.context_id, c.abstract_syntax, c.transfer_syntaxes) for c in pdu.body.contexts] \
        == [(0, IFACE, (d.NDR,)), (1, IFACE, (d.NDR64,))]
    assert (pdu.body.max_xmit_frag, pdu.body.max_recv_frag) == (4280, 4280)


def test_our_bind_ack_is_read_by_impacket():
    body = d.BindAck(4280, 2048, 0x77, b"49667", (
        d.ContextResultItem(d.ContResult.PROVIDER_REJECTION, 2),
        d.ContextResultItem(d.ContResult.ACCEPTANCE, 0, d.NDR64)))
    raw = d.encode_pdu(body, 1)
    ack = rpcrt.MSRPCBindAck(rpcrt.MSRPCHeader(raw).getData())
    assert (ack["max_tfrag"], ack["max_rfrag"], ack["assoc_group"]) == (4280, 2048, 0x77)
    assert ack["SecondaryAddrLen"] == 6 and ack["SecondaryAddr"].rstrip("\x00") == "49667"
    assert ack["ctx_num"] == 2
    assert ack.getCtxItem(1)["Result"] == 2 and ack.getCtxItem(1)["Reason"] == 2
    assert ack.getCtxItem(2)["TransferSyntax"] == uuidtup_to_bin((str(d.NDR64.uuid), "1.0"))


def test_a_request_built_by_impacket_decodes():
    req = rpcrt.MSRPCRequestHeader()
    req["type"] = rpcrt.MSRPC_REQUEST
    req["flags"] = d.PFC_WHOLE
    req["call_id"] = 3
    req["ctx_id"] = 1
    req["op_num"] = 12
    req["pduData"] = b"\x01\x02\x03"
    req["alloc_hint"] = 3
    pdu = d.decode_pdu(req.get_packet())
    assert pdu.body == d.Request(1, 12, b"\x01\x02\x03", 3)


def test_tower_encoding_agrees_with_impacket():
    tower = d.TcpTower(IFACE, d.NDR, 49667, "127.0.0.1")
    raw = d.encode_tower(tower)
    theirs = epm.EPMTower(raw)
    assert theirs["NumberOfFloors"] == 5
    floors = theirs["Floors"]
    assert floors[0]["InterfaceUUID"] == IFACE.uuid.bytes_le
    assert floors[1]["DataRepUuid"] == d.NDR.uuid.bytes_le
    assert epm.PrintStringBinding(floors) == "ncacn_ip_tcp:127.0.0.1[49667]"
    assert d.decode_tcp_tower(raw) == tower


# --- fragments ---------------------------------------------------------------------------------


@given(st.binary(max_size=5000), st.integers(min_value=40, max_value=6000))
def test_fragmenting_a_stub_keeps_every_octet_and_the_alignment(stub, max_frag):
    frags = d.fragment_stub(stub, max_frag, d.RESPONSE_SIZE)
    assert b"".join(c for _, c in frags) == stub
    assert frags[0][0] & d.PFC_FIRST_FRAG and frags[-1][0] & d.PFC_LAST_FRAG
    assert all(len(c) % 8 == 0 and len(c) + d.RESPONSE_SIZE <= max_frag for _, c in frags[:-1])
    assert len(frags[-1][1]) + d.RESPONSE_SIZE <= max_frag


# --- bind time feature negotiation -------------------------------------------------------------


def test_the_bind_time_feature_syntax_carries_its_bitmask():
    syntax = d.bind_time_feature_syntax(3)
    assert str(syntax.uuid).startswith("6cb71c2c-9812-4540-")
    assert d.is_bind_time_feature_negotiation(syntax) and d.feature_bitmask(syntax) == 3
    assert not d.is_bind_time_feature_negotiation(d.NDR64)


# --- malformed input ---------------------------------------------------------------------------


def good_bind() -> bytes:
    return d.encode_pdu(d.Bind(5840, 5840, 0, (d.ContextElement(0, IFACE, (d.NDR,)),)), 1)


@pytest.mark.parametrize("mutate,field", [
    (lambda b: b[:10], "header"),
    (lambda b: b"\x04" + b[1:], "rpc_vers"),
    (lambda b: b[:1] + b"\x09" + b[2:], "rpc_vers_minor"),
    (lambda b: b[:4] + b"\x20" + b[5:], "drep"),
    (lambda b: b[:8] + struct.pack("<H", 12) + b[10:], "frag_length"),
    (lambda b: b[:8] + struct.pack("<H", len(b) + 4) + b[10:], "frag_length"),
    (lambda b: b[:2] + b"\x07" + b[3:], "PTYPE"),
    (lambda b: b[:24] + b"\x05" + b[25:], "p_cont_elem[1].p_cont_id"),
    (lambda b: b[:30] + b"\x09" + b[31:], "p_cont_elem[0].transfer_syntaxes[1].if_uuid"),
    (lambda b: b[:10] + struct.pack("<H", 60) + b[12:], "auth_length"),
])
def test_a_malformed_pdu_is_a_pdu_error_naming_the_field(mutate, field):
    with pytest.raises(d.PduError) as info:
        d.decode_pdu(mutate(good_bind()))
    assert info.value.field == field


def test_a_truncated_request_names_its_missing_field():
    raw = bytearray(d.encode_pdu(d.Request(0, 1, b""), 1))[:20]
    raw[8:10] = struct.pack("<H", 20)
    with pytest.raises(d.PduError) as info:
        d.decode_pdu(bytes(raw))
    assert info.value.field == "p_cont_id"


def test_a_malformed_tower_is_a_pdu_error():
    with pytest.raises(d.PduError, match="floor_count"):
        d.decode_floors(struct.pack("<H", 7))
    with pytest.raises(d.PduError, match=r"floor\[0\]\.lhs"):
        d.decode_floors(struct.pack("<HH", 1, 200) + b"x")
    floors = d.encode_tower(d.TcpTower(IFACE, d.NDR, 1))
    with pytest.raises(d.PduError, match=r"floor\[2\]"):
        d.decode_tcp_tower(floors.replace(b"\x01\x00\x0b", b"\x01\x00\x0c"))


@settings(max_examples=400)
@given(st.binary(max_size=300))
def test_any_bytes_decode_or_raise_pdu_error(data):
    try:
        d.decode_pdu(data)
    except d.PduError:
        pass


@settings(max_examples=400)
@given(st.sampled_from(BODIES), st.data())
def test_any_mutation_of_a_valid_pdu_decodes_or_raises_pdu_error(body, data):
    raw = bytearray(d.encode_pdu(body, 1))
    for _ in range(data.draw(st.integers(1, 6))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    try:
        d.decode_pdu(bytes(raw))
    except d.PduError:
        pass
