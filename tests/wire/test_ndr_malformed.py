"""Stubs the IDL cannot produce — hostile sizes, truncation, unknown union arms, broken
size_is and [range] — are refused with a StubError that names the field; values that cannot
be encoded likewise. Nothing here may raise anything else, allocate from an unchecked count
or loop over one."""

from __future__ import annotations

import struct
import uuid

import pytest

from mqconform.model import calls as c
from mqconform.model.formats import MgmtObject, QueueFormat
from mqconform.wire.ndr import (
    INTERFACES,
    NDR,
    NDR64,
    StubError,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)
from mqconform.wire.types import MAX_PROPVARIANT_DEPTH

GUID = uuid.UUID("11111111-2222-3333-4444-555555555555")
DIRECT = QueueFormat(3, 0, 0, "TCP:10.0.0.1\\q")


def u32(*values: int) -> bytes:
    return struct.pack(f"<{len(values)}I", *values)


def refused(interface: str, opnum: int, stub: bytes, ndr64: bool = False) -> StubError:
    with pytest.raises(StubError) as err:
        decode_request(interface, opnum, stub, ndr64)
    assert "\n" not in str(err.value)
    return err.value


def test_interfaces_name_uuid_version_and_transfer_syntaxes():
    assert INTERFACES["RemoteRead"] == (c.REMOTEREAD_UUID, (1, 0), (NDR, NDR64))
    assert INTERFACES["qmmgmt"] == (c.QMMGMT_UUID, (1, 0), (NDR,))
    assert NDR == (uuid.UUID("8a885d04-1ceb-11c9-9fe8-08002b104860"), 2)
    assert NDR64 == (uuid.UUID("71710533-beba-4937-8319-b5dbef9ccc36"), 1)


@pytest.mark.parametrize("interface, opnum, ndr64, field", [
    ("RemoteRead", 1, False, "opnum"),  # Opnum1NotUsedOnWire
    ("RemoteRead", 16, False, "opnum"),
    ("qmmgmt", 2, False, "opnum"),
    ("qmmgmt", 0, True, "ndr64"),  # MS-MQMR/2.2/R1: NDR only
    ("epmapper", 0, False, "interface"),
])
@pytest.mark.req("MS-MQMR/2.2/R1")
def test_unknown_method_or_syntax_is_refused(interface, opnum, ndr64, field):
    assert refused(interface, opnum, b"", ndr64).field == field


# ---------------------------------------------------------------------------- hostile sizes


@pytest.mark.parametrize("ndr64", [False, True])
def test_section_count_of_two_to_the_31_is_refused_before_reading(ndr64):
    call = c.R_StartReceive()
    n = 1 << 31
    if ndr64:
        stub = struct.pack("<IIQIIQQ", 0, 0, 0, n, 0, 0x20000, n) + bytes(24)
    else:
        stub = struct.pack("<IIQIII", 0, 0, 0, n, 0x20000, n) + bytes(16)
    with pytest.raises(StubError) as err:
        decode_response(call, stub, ndr64)
    assert err.value.field == "ppPacketSections.max_count"


def test_propagation_token_longer_than_the_stub_is_refused():
    stub = bytes(16) + u32(131072, 131072) + b"\x01\x02"
    assert refused("RemoteRead", 12, stub).field == "pbPropagationToken"


def test_blob_of_two_to_the_31_octets_is_refused():
    call = c.R_QMMgmtGetInfo(MgmtObject(1), 1, (1,), (c.PropVariant(1),))
    stub = u32(1, 0) + struct.pack("<HBBIHH", 0x41, 0, 0, 0, 0x41, 0) + u32(1 << 31, 0x20000)
    stub += u32(1 << 31) + b"abc"
    with pytest.raises(StubError) as err:
        decode_response(call, stub, False)
    assert err.value.field == "apVar[0].value"


def test_vector_of_two_to_the_31_propvariants_is_refused():
    call = c.R_QMMgmtGetInfo(MgmtObject(1), 1, (1,), (c.PropVariant(1),))
    stub = u32(1, 0) + struct.pack("<HBBIHH", 0x100C, 0, 0, 0, 0x100C, 0)
    stub += u32(1 << 31, 0x20000, 1 << 31, 0) + bytes(64)
    with pytest.raises(StubError) as err:
        decode_response(call, stub, False)
    assert err.value.field == "apVar[0].value.max_count"


def test_string_of_two_to_the_31_units_is_refused():
    stub = u32(3, 3, 0x20000) + u32(1 << 31, 0, 1 << 31) + b"T\x00"
    stub += bytes(4) + bytes(16) + bytes(16)
    assert refused("RemoteRead", 2, stub).field == "pQueueFormat.value.actual_count"


def test_pointer_to_nowhere_is_refused():
    # a DIRECT QUEUE_FORMAT whose m_pDirectID has a referent id, and the stub ends
    assert refused("RemoteRead", 2, u32(3, 3, 0x20000)).field == \
        "pQueueFormat.value.max_count"


def test_nesting_deeper_than_the_limit_is_refused():
    value = c.PropVariant(0x13, 1)
    for _ in range(MAX_PROPVARIANT_DEPTH + 1):
        value = c.PropVariant(0x100C, [value])
    call = c.R_QMMgmtGetInfo(MgmtObject(1), 1, (1,), (value,))
    with pytest.raises(StubError) as err:
        decode_request("qmmgmt", 0, encode_request(call, False), False)
    assert "nested deeper" in str(err.value)


# ---------------------------------------------------------------------------- union arms


@pytest.mark.parametrize("ndr64", [False, True])
def test_unknown_queue_format_type_is_refused(ndr64):
    stub = bytearray(encode_request(c.R_OpenQueue(pQueueFormat=QueueFormat(1, 0, 0, GUID),
                                                  pClientId=GUID), ndr64))
    stub[0] = 9
    stub[8 if ndr64 else 4] = 9
    assert refused("RemoteRead", 2, bytes(stub), ndr64).field == "pQueueFormat.m_qft"


def test_discriminant_that_differs_from_m_qft_is_refused():
    stub = bytearray(encode_request(c.R_OpenQueue(pQueueFormat=QueueFormat(1, 0, 0, GUID),
                                                  pClientId=GUID), False))
    stub[4] = 4
    assert "differs from m_qft" in str(refused("RemoteRead", 2, bytes(stub)))


@pytest.mark.req("MS-MQMR/2.2.1.2/R1")
def test_mgmt_object_type_outside_1_to_3_is_refused():
    stub = struct.pack("<HHI", 4, 4, 0) + u32(1) + u32(1, 1) + u32(1, 0)
    stub += struct.pack("<HBBIHH", 1, 0, 0, 0, 1, 0)
    assert refused("qmmgmt", 0, stub).field == "pObjectFormat.type"
    with pytest.raises(StubError):
        encode_request(c.R_QMMgmtAction(MgmtObject(4), "TIDY"), False)


def test_unknown_vartype_is_refused():
    call = c.R_QMMgmtGetInfo(MgmtObject(1), 1, (1,), (c.PropVariant(1),))
    stub = bytearray(encode_request(call, False))
    stub[32:34] = stub[40:42] = b"\x99\x00"  # vt and discriminant of apVar[0]
    assert refused("qmmgmt", 0, bytes(stub)).field == "apVar[0].vt"
    with pytest.raises(StubError):
        encode_request(c.R_QMMgmtGetInfo(MgmtObject(1), 1, (1,), (c.PropVariant(0x99),)),
                       False)


def test_enum_value_above_32767_is_refused():
    call = c.R_StartReceive()
    result = c.R_StartReceiveResult(pdwNumberOfSections=1,
                                    ppPacketSections=(c.SectionBuffer(0, 0, 0, None),))
    stub = bytearray(encode_response(call, result, False))
    stub[28:30] = b"\x00\x80"
    with pytest.raises(StubError) as err:
        decode_response(call, bytes(stub), False)
    assert err.value.field == "ppPacketSections[0].SectionBufferType"


# ---------------------------------------------------------------------------- size_is, range


@pytest.mark.req("MS-MQMR/3.1.4.1/R1")
@pytest.mark.parametrize("cp", [0, 129, 1 << 31])
def test_cp_outside_its_range_is_refused(cp):
    stub = struct.pack("<HHI", 1, 1, 0) + u32(cp)
    assert refused("qmmgmt", 0, stub).field == "cp"


@pytest.mark.req("MS-MQMR/3.1.4.1/R5")
def test_aprop_count_that_differs_from_cp_is_refused():
    stub = struct.pack("<HHI", 1, 1, 0) + u32(2, 3, 1, 2, 3)
    assert refused("qmmgmt", 0, stub).field == "aProp.max_count"


@pytest.mark.parametrize("dw_ack", [0, 3])
def test_dwack_outside_1_to_2_is_refused(dw_ack):
    stub = bytes(20) + u32(dw_ack, 0)
    assert refused("RemoteRead", 9, stub).field == "dwAck"
    assert refused("RemoteRead", 15, stub).field == "dwAck"
    # encoding carries it, so that a client can test a server with it
    call = c.R_EndReceive(dwAck=dw_ack)
    assert encode_request(call, False) == stub


def test_propagation_token_size_above_131072_is_refused():
    assert refused("RemoteRead", 12, bytes(16) + u32(131073)).field == "cbPropagationToken"


def test_propagation_token_count_that_differs_from_cb_is_refused():
    stub = bytes(16) + u32(2, 3) + b"abc"
    assert refused("RemoteRead", 12, stub).field == "pbPropagationToken.max_count"


@pytest.mark.req("MS-MQMR/3.1.4/R2")
def test_null_blob_with_a_nonzero_size_is_refused():
    call = c.R_QMMgmtGetInfo(MgmtObject(1), 1, (1,), (c.PropVariant(1),))
    stub = u32(1, 0) + struct.pack("<HBBIHH", 0x41, 0, 0, 0, 0x41, 0) + u32(3, 0) + u32(0)
    with pytest.raises(StubError) as err:
        decode_response(call, stub, False)
    assert "NULL" in str(err.value)


@pytest.mark.req("MS-MQRR/3.1.4/R2")
def test_null_section_buffer_with_a_nonzero_size_is_refused():
    result = c.R_StartReceiveResult(pdwNumberOfSections=1,
                                    ppPacketSections=(c.SectionBuffer(0, 9, 9, None),))
    stub = encode_response(c.R_StartReceive(), result, False)
    with pytest.raises(StubError) as err:
        decode_response(c.R_StartReceive(), stub, False)
    assert err.value.field == "ppPacketSections[0].pSectionBuffer"


def test_section_octets_that_differ_from_section_size_are_refused():
    result = c.R_StartReceiveResult(pdwNumberOfSections=1,
                                    ppPacketSections=(c.SectionBuffer(0, 9, 2, b"abc"),))
    stub = encode_response(c.R_StartReceive(), result, False)
    with pytest.raises(StubError) as err:
        decode_response(c.R_StartReceive(), stub, False)
    assert err.value.field == "ppPacketSections[0].pSectionBuffer.max_count"


# ---------------------------------------------------------------------------- encoding


@pytest.mark.parametrize("call, field", [
    (c.R_OpenQueue(pQueueFormat=DIRECT), "pClientId"),  # [ref] GUID*
    (c.R_OpenQueue(pClientId=GUID), "pQueueFormat"),
    (c.R_MoveMessage(), "pTransactionId"),  # [ref] XACTUOW*
    (c.R_StartTransactionalReceive(), "pTransactionId"),
    (c.R_QMMgmtAction(MgmtObject(1)), "lpwszAction"),
    (c.R_QMMgmtGetInfo(None, 1, (1,), (c.PropVariant(1),)), "pObjectFormat"),
])
def test_null_for_a_ref_pointer_cannot_be_encoded(call, field):
    with pytest.raises(StubError) as err:
        encode_request(call, False)
    assert err.value.field == field
    assert "[ref]" in str(err.value)


@pytest.mark.parametrize("call, field", [
    (c.R_CloseCursor(hCursor=-1), "hCursor"),
    (c.R_CloseCursor(hCursor=1 << 32), "hCursor"),
    (c.R_CloseCursor(hCursor="1"), "hCursor"),
    (c.R_CloseCursor(phContext=b"short"), "phContext"),
    (c.R_QMMgmtAction(MgmtObject(1), "A\x00B"), "lpwszAction"),
    (c.R_OpenQueue(pQueueFormat=QueueFormat(1, 0, 0, "not a guid"), pClientId=GUID),
     "pQueueFormat.value"),
    (c.R_OpenQueue(pQueueFormat=QueueFormat(0, 0, 0, GUID), pClientId=GUID),
     "pQueueFormat.value"),
])
def test_values_outside_their_type_cannot_be_encoded(call, field):
    with pytest.raises(StubError) as err:
        encode_request(call, False)
    assert err.value.field == field


def test_result_of_another_method_cannot_be_encoded():
    with pytest.raises(StubError):
        encode_response(c.R_CloseCursor(), c.R_PurgeQueueResult(), False)


def test_null_context_handle_is_twenty_zero_octets():
    stub = encode_request(c.R_PurgeQueue(phContext=None), False)
    assert stub == bytes(20)
    assert decode_request("RemoteRead", 6, stub, False) == c.R_PurgeQueue(phContext=None)
