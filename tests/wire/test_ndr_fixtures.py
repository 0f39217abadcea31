"""Byte-for-byte fixtures for the places where scapy-rpc 0.0.8 gets RemoteRead or qmmgmt wrong
(ARCHITECTURE.md, "The wire": defects 1-5, and 6: NDR64 union arms), each checked three ways:
against octets computed by hand from the NDR rules (the derivation is written beside the hex),
against impacket's NDR engine as an independent encoder, and against scapy-rpc's class, which
must differ.

The rules used in the derivations: C706 14.2.2 (a primitive of n octets starts at a multiple
of n), 14.2.5 (an enum is 2 octets in NDR), 14.3.3 (a conformant array is max_count then its
elements), 14.3.4 (a string is max_count, offset, actual_count, then the characters and the
NUL), 14.3.8 with MS-RPCE 2.2.4.8 (a union repeats its discriminant), 14.3.10-14.3.12 (a [ref]
parameter has no octets of its own; a unique pointer is a referent id, 0 for NULL; embedded
pointers' referents follow the outermost structure or array); MS-RPCE 2.2.5 for NDR64
(8-octet pointers and counts, 4-octet enums, trailing gaps, unions aligned to 8 before the
discriminant and the arm). Referent ids are 0x00020000, 0x00020004, ... in wire order.
"""

from __future__ import annotations

import struct
import uuid

import pytest
from impacket.dcerpc.v5.dtypes import LPWSTR, WSTR
from impacket.dcerpc.v5.ndr import (
    NDRCALL,
    NDRENUM,
    NDRPOINTER,
    NDRPOINTERNULL,
    NDRSTRUCT,
    NDRUHYPER,
    NDRULONG,
    NDRUNION,
    NDRUSHORT,
    NDRUSMALL,
    NDRUniConformantArray,
)
from msrpcs import ms_mqmr, ms_mqrr
from scapy.layers.dcerpc import NDRContextHandle

from mqconform.model import calls as c
from mqconform.model.formats import MgmtObject, QueueFormat
from mqconform.wire import ndr
from mqconform.wire.ndr import (
    StubError,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)

CTX = bytes.fromhex("00000000" "0102030405060708090a0b0c0d0e0f10")
GUID_Q = uuid.UUID("11111111-2222-3333-4444-555555555555")
GUID_C = uuid.UUID("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")


def h(*parts: str) -> bytes:
    return bytes.fromhex("".join(parts).replace(" ", ""))


def masked(data: bytes, pads: list[tuple[int, int]]) -> bytes:
    """``data`` with the octets of our alignment gaps zeroed (impacket fills gaps with marker
    octets; NDR leaves their value unspecified)."""
    out = bytearray(data)
    for start, end in pads:
        out[start:end] = bytes(end - start)
    return bytes(out)


# ============================================================================ impacket types
# Written from the IDL (MS-MQRR 6, MS-MQMR 6, MS-MQMQ 2.2.13), in impacket's vocabulary.


class CONTEXT_HANDLE(NDRSTRUCT):
    structure = (("Data", "20s=b''"),)

    def getAlignment(self):
        return 4


class SECTION_TYPE(NDRENUM):
    pass


class BYTE_ARRAY(NDRUniConformantArray):
    item = "c"


class PBYTE_ARRAY(NDRPOINTER):
    referent = (("Data", BYTE_ARRAY),)


class SECTION_BUFFER(NDRSTRUCT):
    structure = (("SectionBufferType", SECTION_TYPE), ("SectionSizeAlloc", NDRULONG),
                 ("SectionSize", NDRULONG), ("pSectionBuffer", PBYTE_ARRAY))


class SECTION_BUFFER_ARRAY(NDRUniConformantArray):
    item = SECTION_BUFFER


class PSECTION_BUFFER_ARRAY(NDRPOINTER):
    referent = (("Data", SECTION_BUFFER_ARRAY),)


class R_OpenQueueResponse(NDRCALL):
    structure = (("pphContext", CONTEXT_HANDLE),)


class R_OpenQueueForMoveResponse(NDRCALL):
    structure = (("pMoveContext", NDRUHYPER), ("pphContext", CONTEXT_HANDLE))


class R_StartReceiveResponse(NDRCALL):
    structure = (("pdwArriveTime", NDRULONG), ("pSequenceId", NDRUHYPER),
                 ("pdwNumberOfSections", NDRULONG), ("ppPacketSections", PSECTION_BUFFER_ARRAY),
                 ("ErrorCode", NDRULONG))


class MGMT_OBJECT_UNION(NDRUNION):
    commonHdr = (("tag", NDRUSHORT),)  # the MgmtObjectType enum: 2 octets in NDR
    union = {1: ("Reserved1", NDRULONG), 3: ("Reserved2", NDRULONG)}


class MGMT_OBJECT(NDRSTRUCT):
    structure = (("type", NDRUSHORT), ("u", MGMT_OBJECT_UNION))


class R_QMMgmtActionRequest(NDRCALL):
    structure = (("pObjectFormat", MGMT_OBJECT), ("lpwszAction", WSTR))


class BLOB(NDRSTRUCT):
    structure = (("cbSize", NDRULONG), ("pBlobData", PBYTE_ARRAY))


class PROPVARIANT_UNION(NDRUNION):
    commonHdr = (("tag", NDRUSHORT),)  # VARTYPE
    union = {0x13: ("ulVal", NDRULONG), 0x1F: ("pwszVal", LPWSTR), 0x41: ("blob", BLOB)}


class PROPVARIANT(NDRSTRUCT):
    structure = (("vt", NDRUSHORT), ("wReserved1", NDRUSMALL), ("wReserved2", NDRUSMALL),
                 ("wReserved3", NDRULONG), ("_varUnion", PROPVARIANT_UNION))

    def getAlignment(self):
        return 8  # the VT_I8 / VT_UI8 arms are hypers (MS-MQMQ 2.2.13)


class PROPVARIANT_ARRAY(NDRUniConformantArray):
    item = PROPVARIANT


def impacket_getinfo_response(elements: list, status: int = 0) -> bytes:
    """apVar then the status. impacket's NDRCALL aligns the elements of a top-level conformant
    array as if they began where its max_count does (it passes the offset without the count),
    which misplaces 8-aligned elements; so the stub is put together here from impacket's
    array encoding taken at its true offset (4, after the count)."""
    array = PROPVARIANT_ARRAY()
    array["Data"] = elements
    body = struct.pack("<I", len(elements)) + array.getData(4)
    return body + bytes(-len(body) % 4) + struct.pack("<I", status)


def _byte_ptr(data: bytes, referent: int, ndr64: bool = False):
    p = PBYTE_ARRAY(isNDR64=ndr64)
    p["ReferentID"] = referent
    p["Data"] = list(data)
    return p


def _propvariant(vt: int, arm: str | None = None, value=None):
    pv = PROPVARIANT()
    pv["vt"] = vt
    pv["wReserved1"] = pv["wReserved2"] = pv["wReserved3"] = 0
    pv["_varUnion"]["tag"] = vt
    if arm is not None:
        pv["_varUnion"][arm] = value
    return pv


# ============================================================================ (1) void methods


# R_OpenQueue returns void: the response is its one [out] parameter, pphContext, a [ref]
# pointer to a context handle: no referent id, the 20 octets of the handle. No status.
OPEN_QUEUE_RESPONSE = h(
    "00000000",                          # pphContext: attributes                 offset 0
    "0102030405060708090a0b0c0d0e0f10",  # pphContext: uuid                              4
)                                        # 20 octets

# R_OpenQueueForMove returns void: pMoveContext (ULONGLONG, at 0: 8-aligned) then pphContext.
OPEN_QUEUE_FOR_MOVE_RESPONSE = h(
    "efcdab8967452301",                  # pMoveContext = 0x0123456789abcdef             0
    "00000000",                          # pphContext: attributes                         8
    "0102030405060708090a0b0c0d0e0f10",  # pphContext: uuid                              12
)                                        # 28 octets


@pytest.mark.req("MS-MQRR/2.2/R1")
@pytest.mark.parametrize("ndr64", [False, True])
def test_void_open_queue_response_holds_the_context_handle_only(ndr64):
    call, result = c.R_OpenQueue(), c.R_OpenQueueResult(pphContext=CTX)
    stub = encode_response(call, result, ndr64)
    assert stub == OPEN_QUEUE_RESPONSE
    assert decode_response(call, stub, ndr64) == result
    theirs = R_OpenQueueResponse(isNDR64=ndr64)
    theirs["pphContext"] = CTX
    assert theirs.getData() == stub
    scapy = ms_mqrr.R_OpenQueue_Response(
        pphContext=NDRContextHandle(attributes=0, uuid=CTX[4:]), status=0, ndr64=ndr64)
    assert len(bytes(scapy)) == 24  # defect (1): a status DWORD that R_OpenQueue lacks


@pytest.mark.parametrize("ndr64", [False, True])
def test_void_open_queue_for_move_response_holds_move_context_and_handle(ndr64):
    call = c.R_OpenQueueForMove()
    result = c.R_OpenQueueForMoveResult(pMoveContext=0x0123456789ABCDEF, pphContext=CTX)
    stub = encode_response(call, result, ndr64)
    assert stub == OPEN_QUEUE_FOR_MOVE_RESPONSE
    assert decode_response(call, stub, ndr64) == result
    theirs = R_OpenQueueForMoveResponse(isNDR64=ndr64)
    theirs["pMoveContext"] = 0x0123456789ABCDEF
    theirs["pphContext"] = CTX
    assert theirs.getData() == stub
    scapy = ms_mqrr.R_OpenQueueForMove_Response(
        pMoveContext=0x0123456789ABCDEF, pphContext=NDRContextHandle(uuid=CTX[4:]),
        ndr64=ndr64)
    assert len(bytes(scapy)) == 32


@pytest.mark.parametrize("ndr64", [False, True])
def test_void_response_with_a_status_dword_is_refused(ndr64):
    with pytest.raises(StubError) as err:
        decode_response(c.R_OpenQueue(), OPEN_QUEUE_RESPONSE + bytes(4), ndr64)
    assert err.value.field == "stub"


def test_raised_result_of_a_void_method_is_a_fault_not_a_stub():
    with pytest.raises(StubError) as err:
        encode_response(c.R_OpenQueue(), c.R_OpenQueueResult(status=0xC00E0003, raised=True),
                        False)
    assert err.value.field == "raised"


# ============================================================================ (2) SectionBuffer**

SECTIONS = (c.SectionBuffer(1, 100, 3, b"abc"), c.SectionBuffer(2, 5, 0, None))
RECEIVED = c.R_StartReceiveResult(status=0, pdwArriveTime=5, pSequenceId=6,
                                  pdwNumberOfSections=2, ppPacketSections=SECTIONS)

# [out, size_is(, *pdwNumberOfSections)] SectionBuffer** ppPacketSections: the parameter is a
# [ref] pointer (no octets) to a unique pointer (a referent id) to a conformant array of
# SectionBuffer structures (size_is(, n) sizes the second level: MIDL "Multiple Levels of
# Pointers", Proc7). The array holds the structures, not pointers to them; the octets of each
# pSectionBuffer follow the whole array (C706 14.3.12.3).
START_RECEIVE_RESPONSE_NDR = h(
    "05000000",          # pdwArriveTime = 5                                         0
    "00000000",          # gap: a ULONGLONG starts at a multiple of 8                4
    "0600000000000000",  # pSequenceId = 6                                           8
    "02000000",          # pdwNumberOfSections = 2                                  16
    "00000200",          # ppPacketSections: referent id of the array pointer       20
    "02000000",          # max_count = *pdwNumberOfSections = 2                     24
    "0100", "0000",      # [0].SectionBufferType = 1 (enum: 2 octets), gap          28
    "64000000",          # [0].SectionSizeAlloc = 100                               32
    "03000000",          # [0].SectionSize = 3                                      36
    "04000200",          # [0].pSectionBuffer: referent id                          40
    "0200", "0000",      # [1].SectionBufferType = 2, gap                           44
    "05000000",          # [1].SectionSizeAlloc = 5                                 48
    "00000000",          # [1].SectionSize = 0                                      52
    "00000000",          # [1].pSectionBuffer: NULL                                 56
    "03000000",          # [0].pSectionBuffer's referent: max_count 3               60
    "616263", "00",      # its octets, gap                                          64
    "00000000",          # status (HRESULT) = MQ_OK                                 68
)

START_RECEIVE_RESPONSE_NDR64 = h(
    "05000000", "00000000",  # pdwArriveTime, gap                                    0
    "0600000000000000",      # pSequenceId                                           8
    "02000000", "00000000",  # pdwNumberOfSections, gap (pointers align to 8)       16
    "0000020000000000",      # referent id of the array pointer (8 octets)          24
    "0200000000000000",      # max_count (8 octets)                                 32
    "01000000",              # [0].SectionBufferType (enum: 4 octets in NDR64)      40
    "64000000", "03000000",  # [0].SectionSizeAlloc, SectionSize                    44
    "00000000",              # gap                                                  52
    "0400020000000000",      # [0].pSectionBuffer referent id                       56
    "02000000", "05000000", "00000000", "00000000",  # [1] ...                      64
    "0000000000000000",      # [1].pSectionBuffer: NULL                             80
    "0300000000000000",      # [0]'s octets: max_count                              88
    "616263", "00",          # the octets, gap                                      96
    "00000000",              # status                                              100
)


def _impacket_start_receive(ndr64: bool) -> bytes:
    resp = R_StartReceiveResponse(isNDR64=ndr64)
    resp["pdwArriveTime"], resp["pSequenceId"], resp["pdwNumberOfSections"] = 5, 6, 2
    sections = resp.fields["ppPacketSections"]
    sections["ReferentID"] = 0x20000
    items = []
    for sb, referent in zip(SECTIONS, (0x20004, None), strict=True):
        item = SECTION_BUFFER(isNDR64=ndr64)
        item["SectionBufferType"] = sb.SectionBufferType
        item["SectionSizeAlloc"], item["SectionSize"] = sb.SectionSizeAlloc, sb.SectionSize
        item["pSectionBuffer"] = (NDRPOINTERNULL(isNDR64=ndr64) if referent is None
                                  else _byte_ptr(sb.pSectionBuffer, referent, ndr64))
        items.append(item)
    sections["Data"] = items
    resp["ErrorCode"] = 0
    return resp.getData()


@pytest.mark.req("MS-MQRR/2.2.6/R5", "MS-MQRR/2.2.6/R6")
@pytest.mark.parametrize("ndr64, fixture", [(False, START_RECEIVE_RESPONSE_NDR),
                                            (True, START_RECEIVE_RESPONSE_NDR64)])
def test_section_buffers_are_a_pointer_to_an_array_of_structures(ndr64, fixture):
    call = c.R_StartReceive()
    enc = ndr._encode_response(call, RECEIVED, ndr64)
    assert enc.getvalue() == fixture
    assert decode_response(call, fixture, ndr64) == RECEIVED
    assert masked(_impacket_start_receive(ndr64), enc.pads) == fixture
    transactional = c.R_StartTransactionalReceive()
    result = c.R_StartTransactionalReceiveResult(**vars(RECEIVED))
    assert encode_response(transactional, result, ndr64) == fixture


def test_scapy_rpc_lays_out_section_buffers_as_an_array_of_pointers():
    scapy = ms_mqrr.R_StartReceive_Response(
        pdwArriveTime=5, pSequenceId=6, pdwNumberOfSections=2,
        ppPacketSections=[ms_mqrr.SectionBuffer(SectionBufferType=1, SectionSizeAlloc=100,
                                                SectionSize=3, pSectionBuffer=b"abc"),
                          ms_mqrr.SectionBuffer(SectionBufferType=2, SectionSizeAlloc=5,
                                                SectionSize=0)], status=0, ndr64=False)
    octets = bytes(scapy)
    # defect (2): at offset 20 scapy-rpc writes max_count, where the array pointer's
    # referent id belongs, and then one pointer per element
    assert struct.unpack_from("<I", octets, 20)[0] == 2
    assert octets != START_RECEIVE_RESPONSE_NDR


@pytest.mark.req("MS-MQRR/3.1.4/R2")
def test_null_sections_with_a_nonzero_count_are_refused():
    stub = h("05000000", "00000000", "0600000000000000", "02000000", "00000000", "00000000")
    with pytest.raises(StubError) as err:
        decode_response(c.R_StartReceive(), stub, False)
    assert err.value.field == "ppPacketSections"


def test_section_count_that_disagrees_with_pdwNumberOfSections_is_refused():
    stub = bytearray(START_RECEIVE_RESPONSE_NDR)
    stub[16] = 3  # pdwNumberOfSections = 3, max_count still 2
    with pytest.raises(StubError) as err:
        decode_response(c.R_StartReceive(), bytes(stub), False)
    assert err.value.field == "ppPacketSections.max_count"


# ============================================================================ (3) lpwszAction

# [in] const wchar_t* lpwszAction, "a null-terminated Unicode string" (MS-MQMR 3.1.4.2): a
# [ref] pointer (no octets) to a conformant varying wchar_t string.
ACTION_REQUEST = h(
    "0100",              # pObjectFormat.type = MGMT_MACHINE (enum: 2 octets)             0
    "0100",              # the union's discriminant, again (an enum: 2 octets)             2
    "00000000",          # Reserved1 (the MGMT_MACHINE arm, a DWORD at its alignment)      4
    "08000000",          # lpwszAction: max_count = 8 ("CONNECT" and its NUL)              8
    "00000000",          # offset = 0                                                     12
    "08000000",          # actual_count = 8                                               16
    "43004f004e004e00450043005400", "0000",  # "CONNECT" in UTF-16LE, NUL                 20
)


@pytest.mark.req("MS-MQMR/3.1.4.2/R1")
def test_action_is_a_null_terminated_wide_string():
    call = c.R_QMMgmtAction(pObjectFormat=MgmtObject(1), lpwszAction="CONNECT")
    enc = ndr._encode_request(call, False)
    assert enc.getvalue() == ACTION_REQUEST
    assert decode_request("qmmgmt", 1, ACTION_REQUEST, False) == call
    theirs = R_QMMgmtActionRequest()
    theirs["pObjectFormat"]["type"] = 1
    theirs["pObjectFormat"]["u"]["tag"] = 1
    theirs["pObjectFormat"]["u"]["Reserved1"] = 0
    theirs["lpwszAction"] = "CONNECT\x00"
    assert masked(theirs.getData(), enc.pads) == ACTION_REQUEST
    scapy = ms_mqmr.R_QMMgmtAction_Request(
        pObjectFormat=ms_mqmr.MGMT_OBJECT(type=1, value=_scapy_union(1, 0)), lpwszAction=0,
        ndr64=False)
    assert len(bytes(scapy)) == 10  # defect (3): an unsigned short


@pytest.mark.parametrize("tail, field", [
    (h("08000000", "00000000", "08000000", "43004f004e004e00450043005400", "4100"),
     "lpwszAction"),  # the last unit is not NUL
    (h("08000000", "00000000", "09000000", "43004f004e004e00450043005400", "0000", "0000"),
     "lpwszAction.actual_count"),  # actual_count above max_count
    (h("08000000", "01000000", "08000000"), "lpwszAction.offset"),
    (h("00000080", "00000000", "00000080"), "lpwszAction.actual_count"),  # 2**31 units
    (h("08000000", "00000000", "08000000", "4300"), "lpwszAction.actual_count"),  # truncated
])
def test_malformed_action_string_is_refused(tail, field):
    with pytest.raises(StubError) as err:
        decode_request("qmmgmt", 1, ACTION_REQUEST[:8] + tail, False)
    assert err.value.field == field


# ============================================================================ (4) and (5)

GETINFO = c.R_QMMgmtGetInfo(pObjectFormat=MgmtObject(1), cp=2, aProp=(7, 1),
                            apVar=(c.PropVariant(1), c.PropVariant(1)))
GETINFO_RESULT = c.R_QMMgmtGetInfoResult(apVar=(c.PropVariant(0x13, 7),
                                                c.PropVariant(0x1F, "q")))

# [in, out, size_is(cp)] PROPVARIANT apVar[]: cp is an [in] parameter, not in the response;
# the response's max_count must equal the request's cp.
GETINFO_RESPONSE = h(
    "02000000",          # apVar: max_count = cp = 2                                       0
    "00000000",          # gap: a PROPVARIANT aligns to 8 (its VT_I8 arm is a hyper)        4
    "1300", "00", "00",  # [0].vt = VT_UI4, wReserved1, wReserved2                          8
    "00000000",          # [0].wReserved3                                                  12
    "1300", "0000",      # the discriminant again, gap                                     16
    "07000000",          # ulVal = 7                                                       20
    "1f00", "00", "00",  # [1].vt = VT_LPWSTR (24 is a multiple of 8: no gap)              24
    "00000000",          # [1].wReserved3                                                  28
    "1f00", "0000",      # the discriminant, gap                                           32
    "00000200",          # pwszVal: referent id                                            36
    "02000000", "00000000", "02000000",  # the deferred string: max_count, offset, actual  40
    "7100", "0000",      # "q", NUL                                                        52
    "00000000",          # status                                                          56
)


@pytest.mark.req("MS-MQMR/3.1.4.1/R1")
def test_getinfo_response_is_sized_by_the_requests_cp():
    enc = ndr._encode_response(GETINFO, GETINFO_RESULT, False)
    assert enc.getvalue() == GETINFO_RESPONSE
    assert decode_response(GETINFO, GETINFO_RESPONSE, False) == GETINFO_RESULT
    string = LPWSTR()
    string["ReferentID"] = 0x20000
    string["Data"] = "q\x00"
    theirs = impacket_getinfo_response([_propvariant(0x13, "ulVal", 7),
                                        _propvariant(0x1F, "pwszVal", string)])
    assert masked(theirs, enc.pads) == GETINFO_RESPONSE


def test_getinfo_response_whose_count_differs_from_cp_is_refused():
    call = c.R_QMMgmtGetInfo(pObjectFormat=MgmtObject(1), cp=3, aProp=(7, 1, 2),
                             apVar=(c.PropVariant(1),) * 3)
    with pytest.raises(StubError) as err:
        decode_response(call, GETINFO_RESPONSE, False)
    assert err.value.field == "apVar.max_count"


def test_scapy_rpc_cannot_parse_a_getinfo_response():
    # defect (4): size_is(cp) names a field the response does not have
    with pytest.raises(Exception):  # noqa: B017 - whatever scapy raises, it does not parse
        ms_mqmr.R_QMMgmtGetInfo_Response(GETINFO_RESPONSE, ndr64=False).apVar  # noqa: B018


def test_failed_getinfo_sends_apvar_back_as_it_came():
    failed = c.R_QMMgmtGetInfoResult(status=0xC00E0006)
    stub = encode_response(GETINFO, failed, False)
    assert decode_response(GETINFO, stub, False) == c.R_QMMgmtGetInfoResult(
        status=0xC00E0006, apVar=GETINFO.apVar)


BLOB_THEN_UI4 = c.R_QMMgmtGetInfoResult(apVar=(c.PropVariant(0x41, b"abc"),
                                               c.PropVariant(0x13, 5)))

# Each element of a PROPVARIANT array starts at a multiple of 8: a VT_BLOB element is 20
# octets, so 4 octets of gap precede the next (scapy-rpc starts it at 28).
ALIGNED_PROPVARIANTS = h(
    "02000000", "00000000",            # max_count, gap                                    0
    "4100", "00", "00", "00000000",    # [0].vt = VT_BLOB, wReserved1..3                   8
    "4100", "0000",                    # discriminant, gap                                16
    "03000000",                        # blob.cbSize = 3                                  20
    "00000200",                        # blob.pBlobData: referent id                      24
    "00000000",                        # gap: [1] starts at 32                            28
    "1300", "00", "00", "00000000",    # [1].vt = VT_UI4, wReserved1..3                   32
    "1300", "0000", "05000000",        # discriminant, gap, ulVal = 5                     40
    "03000000", "616263", "00",        # [0]'s deferred blob: max_count, octets, gap      48
    "00000000",                        # status                                           56
)


def test_propvariant_array_elements_align_to_8():
    enc = ndr._encode_response(GETINFO, BLOB_THEN_UI4, False)
    assert enc.getvalue() == ALIGNED_PROPVARIANTS
    assert decode_response(GETINFO, ALIGNED_PROPVARIANTS, False) == BLOB_THEN_UI4
    blob = BLOB()
    blob["cbSize"] = 3
    blob["pBlobData"] = _byte_ptr(b"abc", 0x20000)
    theirs = impacket_getinfo_response([_propvariant(0x41, "blob", blob),
                                        _propvariant(0x13, "ulVal", 5)])
    assert masked(theirs, enc.pads) == ALIGNED_PROPVARIANTS
    request = c.R_QMMgmtGetInfo(pObjectFormat=MgmtObject(1), cp=2, aProp=(1, 2),
                                apVar=BLOB_THEN_UI4.apVar)
    scapy = ms_mqmr.R_QMMgmtGetInfo_Request(
        pObjectFormat=ms_mqmr.MGMT_OBJECT(type=1, value=_scapy_union(1, 0)), cp=2,
        aProp=[1, 2], apVar=[
            ms_mqmr.tag_inner_PROPVARIANT(vt=0x41, _varUnion=_scapy_union(
                0x41, ms_mqmr.BLOB(cbSize=3, pBlobData=b"abc"))),
            ms_mqmr.tag_inner_PROPVARIANT(vt=0x13, _varUnion=_scapy_union(0x13, 5))],
        ndr64=False)
    # defect (5): after MGMT_OBJECT (8), cp (4), aProp (4 + 2 x 4) and apVar's max_count (4),
    # the first PROPVARIANT belongs at 32; scapy-rpc starts it at 28, and the second at 48
    # where it belongs at 56
    ours, theirs = encode_request(request, False), bytes(scapy)
    assert ours[32:34] == theirs[28:30] == b"\x41\x00"
    assert ours[56:58] == theirs[48:50] == b"\x13\x00"


def test_propvariant_short_arm_follows_its_discriminant():
    # NDR aligns a union arm to its own type (no ms_union, MS-RPCE 2.2.4.5): a VT_I2 value
    # sits at offset 10 of its PROPVARIANT, right after the 2-octet discriminant
    result = c.R_QMMgmtGetInfoResult(apVar=(c.PropVariant(0x02, -2), c.PropVariant(0x11, 9)))
    assert encode_response(GETINFO, result, False) == h(
        "02000000", "00000000",          # max_count, gap                                  0
        "0200", "00", "00", "00000000",  # [0].vt = VT_I2, reserved                        8
        "0200", "feff",                  # discriminant, iVal = -2                         16
        "00000000",                      # gap: [1] starts at 24                           20
        "1100", "00", "00", "00000000",  # [1].vt = VT_UI1                                 24
        "1100", "09",                    # discriminant, bVal = 9                          32
        "00",                            # gap                                             35
        "00000000",                      # status                                          36
    )


# ============================================================================ (6) NDR64 unions

# In NDR64 a union is aligned to its largest member before the discriminant and again before
# the arm (MS-RPCE 2.2.5.3.4.4). QUEUE_FORMAT's union holds pointers (8), so a GUID arm
# (alignment 4) starts at 16, not right after the discriminant's 4-aligned successor.
OPEN_QUEUE_REQUEST_NDR64 = h(
    "01", "00", "0000",    # m_qft = PUBLIC, m_SuffixAndFlags, m_reserved                  0
    "00000000",            # gap: the union aligns to 8                                    4
    "01",                  # discriminant = m_qft                                          8
    "00000000000000",      # gap: the arm aligns to 8                                      9
    "1111111122223333", "4444555555555555",  # m_gPublicID (GUID, little-endian fields)   16
    "01000000",            # dwAccess = RECEIVE_ACCESS                                    32
    "00000000",            # dwShareMode                                                  36
    "aaaaaaaabbbbcccc", "ddddeeeeeeeeeeee",  # pClientId ([ref]: the GUID in place)       40
    "01000000",            # fNonRoutingServer                                            56
    "06", "01", "b01d",    # Major, Minor, BuildNumber = 7600                             60
    "00000000",            # fWorkgroup                                                   64
)
OPEN_QUEUE = c.R_OpenQueue(pQueueFormat=QueueFormat(1, 0, 0, GUID_Q), pClientId=GUID_C,
                           Major=6, Minor=1, BuildNumber=7600)


def test_ndr64_union_arm_aligns_to_the_union():
    assert encode_request(OPEN_QUEUE, True) == OPEN_QUEUE_REQUEST_NDR64
    assert decode_request("RemoteRead", 2, OPEN_QUEUE_REQUEST_NDR64, True) == OPEN_QUEUE
    scapy = ms_mqrr.R_OpenQueue_Request(
        pQueueFormat=ms_mqrr.QUEUE_FORMAT(m_qft=1, value=_scapy_union(1, _scapy_guid(GUID_Q))),
        dwAccess=1, pClientId=_scapy_guid(GUID_C), fNonRoutingServer=1, Major=6, Minor=1,
        BuildNumber=7600, ndr64=True)
    assert bytes(scapy)[12:28] == GUID_Q.bytes_le  # (6): scapy-rpc puts the arm at 12


def test_ndr_union_arm_follows_the_discriminant_at_its_own_alignment():
    # NDR: m_qft..m_reserved (4), discriminant at 4, gap, the GUID at 8
    assert encode_request(OPEN_QUEUE, False)[:24] == h("01000000", "01000000") + GUID_Q.bytes_le


# ============================================================================ helpers


def _scapy_union(tag, value):
    from scapy.layers.dcerpc import NDRUnion
    return NDRUnion(tag=tag, value=value)


def _scapy_guid(u: uuid.UUID):
    return ms_mqrr.GUID(Data1=u.fields[0], Data2=u.fields[1], Data3=u.fields[2],
                        Data4=u.bytes[8:])
