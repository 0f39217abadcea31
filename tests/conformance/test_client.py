"""The impacket NDR definitions (wire/impacket_ndr.py), the client over impacket's DCE/RPC
runtime (conformance/client.py) and ``mqconform call``.

Encodings are checked against octets derived by hand from the IDL (MS-MQRR 6, MS-MQMR 6,
MS-MQMQ 2.2) and the NDR rules (C706 14, MS-RPCE 2.2.5): each fixture says, offset by offset,
what the octets are. Transport behaviour is checked against a small DCE/RPC listener written
here with ``struct`` (no impacket on the server side): enough of C706 12 to accept a bind and
answer requests with a response, a fault, silence or a closed connection.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import uuid
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mqconform.conformance.client import (
    ArgumentError,
    ConnectError,
    ConnectionLost,
    Credentials,
    Endpoint,
    ProtocolError,
    RpcClient,
    RpcTimeout,
    call_from_arguments,
    format_result,
    parse_endpoint,
    result_to_dict,
)
from mqconform.model import calls as c
from mqconform.model.formats import DlId, MgmtObject, MulticastId, ObjectId, QueueFormat
from mqconform.wire import impacket_ndr as ndr
from mqconform.wire.impacket_ndr import (
    DecodeError,
    EncodeError,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)

G = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")
G_LE = "33221100554477668899aabbccddeeff"  # MS-DTYP 2.3.4.2: Data1..3 little-endian
CLIENT_ID = uuid.UUID("01020304-0506-0708-090a-0b0c0d0e0f10")
HANDLE = bytes(range(20))


def h(*parts: str) -> bytes:
    """Hex fixture: parts joined, spaces ignored."""
    return bytes.fromhex("".join(parts).replace(" ", ""))


def utf16(text: str) -> str:
    return (text + "\x00").encode("utf-16le").hex()


# =============================================================================== fixtures

DIRECT = QueueFormat(3, 0, 0, r"OS:host\private$\q")  # 18 characters + NUL = 19 = 0x13
OPEN_QUEUE = c.R_OpenQueue(pQueueFormat=DIRECT, dwAccess=c.MQ_RECEIVE_ACCESS,
                           dwShareMode=c.MQ_DENY_NONE, pClientId=CLIENT_ID, fNonRoutingServer=1,
                           Major=6, Minor=1, BuildNumber=7601, fWorkgroup=0)

OPEN_QUEUE_NDR = h(
    "03 00 0000",        # 0   m_qft DIRECT, m_SuffixAndFlags, m_reserved
    "03 000000",         # 4   union discriminant (unsigned char, m_qft's type), pad to 4
    "00000200",          # 8   m_pDirectID: unique pointer, referent ID 0x00020000
    "13000000 00000000 13000000",  # 12 deferred string: max count 19, offset 0, actual 19
    utf16(r"OS:host\private$\q"),  # 24 38 octets
    "0000",              # 62  pad to 4
    "01000000",          # 64  dwAccess MQ_RECEIVE_ACCESS
    "00000000",          # 68  dwShareMode
    "04030201 0605 0807 090a0b0c0d0e0f10",  # 72 pClientId ([ref] GUID in place)
    "01000000",          # 88  fNonRoutingServer
    "06 01 b11d",        # 92  Major, Minor, BuildNumber 7601
    "00000000",          # 96  fWorkgroup; 100 octets
)
OPEN_QUEUE_NDR64 = h(
    "03 00 0000 00000000",  # 0   m_qft, flags, reserved; union aligned to 8 (pointer arm)
    "03 00000000000000",    # 8   discriminant, arm aligned to 8
    "0000020000000000",     # 16  referent ID, 8 octets; QUEUE_FORMAT is 24 octets
    "1300000000000000 0000000000000000 1300000000000000",  # 24 counts are 8 octets
    utf16(r"OS:host\private$\q"),  # 48
    "0000",                 # 86  pad to 4
    "01000000 00000000",    # 88  dwAccess, dwShareMode
    "04030201 0605 0807 090a0b0c0d0e0f10",  # 96 pClientId
    "01000000 06 01 b11d 00000000",  # 112 ...; 124 octets
)

GET_INFO = c.R_QMMgmtGetInfo(pObjectFormat=MgmtObject(2, QueueFormat(2, 0, 0, ObjectId(G, 5))),
                             cp=2, aProp=(7, 2), apVar=(c.PropVariant(1), c.PropVariant(1)))
GET_INFO_NDR = h(
    "0200",              # 0   MGMT_OBJECT.type MGMT_QUEUE (enum: 2 octets in NDR)
    "0200",              # 2   union discriminant (MgmtObjectType), at its own alignment
    "00000200",          # 4   pQueueFormat: referent ID; MGMT_OBJECT is 8 octets
    "02 00 0000",        # 8   deferred QUEUE_FORMAT: PRIVATE
    "02 000000",         # 12  discriminant, pad to 4 (OBJECTID is 4-aligned)
    G_LE, "05000000",    # 16  Lineage, Uniquifier 5
    "02000000",          # 36  cp
    "02000000 07000000 02000000",  # 40 aProp: max count 2, then the ULONGs
    "02000000",          # 52  apVar: max count 2
    "0100 00 00 00000000 0100",  # 56 PROPVARIANT VT_NULL (8-aligned), discriminant, no arm
    "000000000000",      # 66  pad: the next element aligns to 8
    "0100 00 00 00000000 0100",  # 72 second VT_NULL; 82 octets
)

ACTION_MACHINE = c.R_QMMgmtAction(pObjectFormat=MgmtObject(1), lpwszAction="PAUSE")
ACTION_MACHINE_NDR = h(
    "0100 0100 00000000",  # 0  MGMT_MACHINE, discriminant, Reserved1 (DWORD arm at 4)
    "06000000 00000000 06000000", utf16("PAUSE"),  # 8 [ref, string] wchar_t*: in place
)
ACTION_QUEUE = c.R_QMMgmtAction(pObjectFormat=MgmtObject(2, QueueFormat(3, 0, 0, r"OS:h\q")),
                                lpwszAction="RESUME")
ACTION_QUEUE_NDR = h(
    "0200 0200 00000200",  # 0  MGMT_QUEUE, discriminant, pQueueFormat referent ID
    "03 00 0000 03 000000 04000200",  # 8 deferred QUEUE_FORMAT (DIRECT), its pointer
    "07000000 00000000 07000000", utf16(r"OS:h\q"),  # 20 that pointer's string, deferred
    "0000",                # 46 pad to 4
    "07000000 00000000 07000000", utf16("RESUME"),  # 48 lpwszAction; 74 octets
)

ENLIST = c.R_QMEnlistRemoteTransaction(pTransactionId=bytes(range(16)), cbPropagationToken=3,
                                       pbPropagationToken=b"\xaa\xbb\xcc",
                                       pQueueFormat=QueueFormat(1, 0, 0, G))
ENLIST_NDR = h(
    "000102030405060708090a0b0c0d0e0f",  # 0  XACTUOW (alignment 1)
    "03000000",            # 16 cbPropagationToken
    "03000000 aabbcc",     # 20 pbPropagationToken: max count, octets
    "00",                  # 27 pad: QUEUE_FORMAT is 4-aligned
    "01 00 0000 01 000000", G_LE,  # 28 PUBLIC, discriminant, m_gPublicID; 52 octets
)
ENLIST_NDR64 = h(
    "000102030405060708090a0b0c0d0e0f 03000000",  # 0 XACTUOW, cbPropagationToken
    "00000000 0300000000000000 aabbcc",  # 20 pad to 8, max count (8 octets), octets
    "0000000000",          # 35 pad: QUEUE_FORMAT is 8-aligned in NDR64
    "01 00 0000 00000000 01 00000000000000", G_LE,  # 40 union and arm on 8; 72 octets
)

START_RECEIVE = c.R_StartReceive(phContext=HANDLE, LookupId=0x1122334455667788, hCursor=1,
                                 ulAction=c.MQ_LOOKUP_PEEK_NEXT, ulTimeout=0, dwRequestId=7,
                                 dwMaxBodySize=100, dwMaxCompoundMessageSize=200)
START_RECEIVE_NDR = h(
    HANDLE.hex(),          # 0  context handle, 20 octets
    "00000000",            # 20 pad: ULONGLONG is 8-aligned
    "8877665544332211",    # 24 LookupId
    "01000000 11000040 00000000 07000000 64000000 c8000000",  # 32 the DWORDs; 56 octets
)

RECEIVED = c.R_StartReceiveResult(pdwArriveTime=5, pSequenceId=9, pdwNumberOfSections=2,
                                  ppPacketSections=(c.SectionBuffer(1, 10, 3, b"abc"),
                                                    c.SectionBuffer(2, 2, 2, b"de")))
RECEIVED_NDR = h(
    "05000000 00000000",   # 0  pdwArriveTime, pad
    "0900000000000000",    # 8  pSequenceId
    "02000000",            # 16 pdwNumberOfSections
    "00000200",            # 20 *ppPacketSections: unique pointer
    "02000000",            # 24 max count 2
    "0100 0000 0a000000 03000000 04000200",  # 28 SectionBuffer: enum16, pad, DWORDs, pointer
    "0200 0000 02000000 02000000 08000200",  # 44 second SectionBuffer
    "03000000 616263 00",  # 60 deferred: first pSectionBuffer (max count, octets), pad
    "02000000 6465 0000",  # 68 second
    "00000000",            # 76 HRESULT; 80 octets
)
RECEIVED_NDR64 = h(
    "05000000 00000000 0900000000000000 02000000 00000000",  # 0 pad before the 8-octet ptr
    "0000020000000000",    # 24 *ppPacketSections
    "0200000000000000",    # 32 max count
    "01000000 0a000000 03000000 00000000 0400020000000000",  # 40 SectionBuffer: 24 octets
    "02000000 02000000 02000000 00000000 0800020000000000",  # 64
    "0300000000000000 616263 0000000000",  # 88
    "0200000000000000 6465 0000",  # 104
    "00000000",            # 116 HRESULT; 120 octets
)

PROPERTIES = c.R_QMMgmtGetInfoResult(apVar=(
    c.PropVariant(19, 7), c.PropVariant(31, "ab"), c.PropVariant(2, -2), c.PropVariant(20, -5)))
PROPERTIES_NDR = h(
    "04000000 00000000",   # 0  max count 4, pad: PROPVARIANT is 8-aligned
    "1300 00 00 00000000 1300 0000 07000000",  # 8  VT_UI4: discriminant at 16, ULONG at 20
    "1f00 00 00 00000000 1f00 0000 00000200",  # 24 VT_LPWSTR: pointer at 36
    "0200 00 00 00000000 0200 feff",  # 40 VT_I2: the SHORT right after its discriminant
    "00000000",            # 52 pad to 8
    "1400 00 00 00000000 1400 000000000000 fbffffffffffffff",  # 56 VT_I8: arm at 72
    "03000000 00000000 03000000", utf16("ab"),  # 80 the deferred string of element 1
    "0000 00000000",       # 98 pad, HRESULT; 104 octets
)

FIXTURES = [
    ("R_GetServerPort request", c.R_GetServerPort(), False, b""),
    ("R_OpenQueue NDR", OPEN_QUEUE, False, OPEN_QUEUE_NDR),
    ("R_OpenQueue NDR64", OPEN_QUEUE, True, OPEN_QUEUE_NDR64),
    ("R_QMMgmtGetInfo NDR", GET_INFO, False, GET_INFO_NDR),
    ("R_QMMgmtAction machine", ACTION_MACHINE, False, ACTION_MACHINE_NDR),
    ("R_QMMgmtAction queue", ACTION_QUEUE, False, ACTION_QUEUE_NDR),
    ("R_QMEnlistRemoteTransaction NDR", ENLIST, False, ENLIST_NDR),
    ("R_QMEnlistRemoteTransaction NDR64", ENLIST, True, ENLIST_NDR64),
    ("R_StartReceive NDR", START_RECEIVE, False, START_RECEIVE_NDR),
    ("R_StartReceive NDR64", START_RECEIVE, True, START_RECEIVE_NDR),  # no pointers: same
    ("R_CloseQueue", c.R_CloseQueue(pphContext=HANDLE), False, HANDLE),
    ("R_SetUserAcknowledgementClass", c.R_SetUserAcknowledgementClass(
        phContext=HANDLE, LookupId=1, usClass=0x8000), False,
     h(HANDLE.hex(), "00000000 0100000000000000 0080")),
]
RESPONSE_FIXTURES = [
    ("R_GetServerPort", c.R_GetServerPortResult(status=2103), False, h("37080000")),
    ("R_OpenQueue (void: no status)", c.R_OpenQueueResult(pphContext=HANDLE), False, HANDLE),
    ("R_OpenQueueForMove NDR", c.R_OpenQueueForMoveResult(pMoveContext=3, pphContext=HANDLE),
     False, h("0300000000000000", HANDLE.hex())),
    ("R_CloseQueue (NULL handle)", c.R_CloseQueueResult(pphContext=None), False,
     bytes(20) + bytes(4)),
    ("R_StartReceive NDR", RECEIVED, False, RECEIVED_NDR),
    ("R_StartReceive NDR64", RECEIVED, True, RECEIVED_NDR64),
    ("R_StartReceive failure", c.R_StartReceiveResult(status=0xC00E001B), False,
     h("00000000 00000000 0000000000000000 00000000 00000000 1b000ec0")),  # NULL sections
    ("R_QMMgmtGetInfo", PROPERTIES, False, PROPERTIES_NDR),
]

REQ_WIRE = ("MS-MQRR/2.2/R1", "MS-MQMR/2.2/R1")


@pytest.mark.req(*REQ_WIRE)
@pytest.mark.parametrize("name, call, ndr64, octets", FIXTURES, ids=[f[0] for f in FIXTURES])
def test_request_encoding_matches_the_octets_derived_from_the_idl(name, call, ndr64, octets):
    assert encode_request(call, ndr64).hex() == octets.hex()
    assert decode_request(type(call), octets, ndr64) == call


@pytest.mark.req(*REQ_WIRE, "MS-MQRR/2.2.6/R5")
@pytest.mark.parametrize("name, result, ndr64, octets", RESPONSE_FIXTURES,
                         ids=[f[0] for f in RESPONSE_FIXTURES])
def test_response_encoding_matches_the_octets_derived_from_the_idl(name, result, ndr64, octets):
    call_type = next(k for k, v in c.RESULTS.items() if v is type(result))
    assert encode_response(result, call_type, ndr64).hex() == octets.hex()
    assert decode_response(call_type, octets, ndr64) == result


def test_alignment_gaps_are_zero_and_referent_ids_count_up_in_wire_order():
    octets = encode_request(ACTION_QUEUE)
    assert octets[4:8] == h("00000200") and octets[16:20] == h("04000200")
    assert b"\xbf" not in encode_request(OPEN_QUEUE) and b"\xaa" not in OPEN_QUEUE_NDR


def test_referent_offsets_find_exactly_the_referent_ids():
    offsets = ndr.referent_offsets(lambda: encode_request(ACTION_QUEUE))
    assert offsets == set(range(4, 8)) | set(range(16, 20))


# =============================================================================== strategies

u8, u16 = st.integers(0, 0xFF), st.integers(0, 0xFFFF)
u32, u64 = st.integers(0, 0xFFFFFFFF), st.integers(0, 2**64 - 1)
i32 = st.integers(-(2**31), 2**31 - 1)
text = st.text(st.characters(exclude_characters="\x00"), max_size=12)
handles = st.one_of(st.none(), st.binary(min_size=20, max_size=20).filter(any))

QF_ARMS = {
    0: st.none(), 1: st.uuids(), 2: st.builds(ObjectId, st.uuids(), u32), 3: text,
    4: st.uuids(), 5: st.uuids(), 6: st.builds(DlId, st.uuids(), st.none() | text),
    7: st.builds(MulticastId, u32, u32), 8: text,
}
queue_formats = st.one_of(
    *[st.builds(QueueFormat, st.just(qft), u8, u16, arm) for qft, arm in QF_ARMS.items()],
    st.builds(QueueFormat, st.sampled_from([9, 200, 255]), u8, u16, st.none()))  # malformed
mgmt_objects = st.one_of(
    st.builds(MgmtObject, st.just(2), st.none() | queue_formats),
    st.builds(lambda r: MgmtObject(1, Reserved1=r), u32),
    st.builds(lambda r: MgmtObject(3, Reserved2=r), u32),
    st.builds(MgmtObject, st.sampled_from([0, 4, 0x7FFF])))  # no arm

VT = ndr  # the VARTYPE constants (MS-MQMQ 2.2.12)
SCALAR_VTS = {VT.VT_I1: st.integers(-128, 127), VT.VT_UI1: u8, VT.VT_I2: st.integers(-32768, 32767),
              VT.VT_UI2: u16, VT.VT_I4: i32, VT.VT_UI4: u32, VT.VT_BOOL: st.sampled_from([0, -1]),
              VT.VT_I8: st.integers(-(2**63), 2**63 - 1), VT.VT_UI8: u64,
              VT.VT_CLSID: st.none() | st.uuids(), VT.VT_LPWSTR: st.none() | text,
              VT.VT_BLOB: st.binary(max_size=9)}
VECTOR_VTS = {VT.VT_UI1: u8, VT.VT_UI2: u16, VT.VT_I4: i32, VT.VT_UI4: u32, VT.VT_UI8: u64,
              VT.VT_CLSID: st.uuids(), VT.VT_LPWSTR: st.none() | text}
leaf_variants = st.one_of(
    st.builds(c.PropVariant, st.sampled_from([VT.VT_EMPTY, VT.VT_NULL, 8, 0x1010])),  # 8, .. unknown
    *[st.builds(c.PropVariant, st.just(vt), s) for vt, s in SCALAR_VTS.items()],
    *[st.builds(c.PropVariant, st.just(VT.VT_VECTOR | vt), st.lists(s, max_size=3))
      for vt, s in VECTOR_VTS.items()])
propvariants = st.recursive(leaf_variants, lambda inner: st.builds(
    c.PropVariant, st.just(VT.VT_VECTOR | VT.VT_VARIANT), st.lists(inner, max_size=3)),
    max_leaves=8)
sections = st.builds(lambda t, a, d: c.SectionBuffer(t, a, 0 if d is None else len(d), d),
                     st.integers(0, 0x7FFF), u32, st.none() | st.binary(max_size=40))


def _open(cls):
    return st.builds(cls, pQueueFormat=queue_formats, dwAccess=u32, dwShareMode=u32,
                     pClientId=st.uuids(), fNonRoutingServer=i32, Major=u8, Minor=u8,
                     BuildNumber=u16, fWorkgroup=i32)


def _receive(cls, **extra):
    return st.builds(cls, phContext=handles, LookupId=u64, hCursor=u32, ulAction=u32,
                     ulTimeout=u32, dwRequestId=u32, dwMaxBodySize=u32,
                     dwMaxCompoundMessageSize=u32, **extra)


def _get_info():
    return st.builds(lambda o, props, pvs: c.R_QMMgmtGetInfo(
        pObjectFormat=o, cp=len(props), aProp=tuple(props), apVar=tuple(pvs[:len(props)]) + (
            c.PropVariant(1),) * (len(props) - len(pvs[:len(props)]))),
        mgmt_objects, st.lists(u32, max_size=5), st.lists(propvariants, max_size=5))


CALLS = {
    c.R_GetServerPort: st.just(c.R_GetServerPort()),
    c.R_OpenQueue: _open(c.R_OpenQueue),
    c.R_CloseQueue: st.builds(c.R_CloseQueue, pphContext=handles),
    c.R_CreateCursor: st.builds(c.R_CreateCursor, phContext=handles),
    c.R_CloseCursor: st.builds(c.R_CloseCursor, phContext=handles, hCursor=u32),
    c.R_PurgeQueue: st.builds(c.R_PurgeQueue, phContext=handles),
    c.R_StartReceive: _receive(c.R_StartReceive),
    c.R_CancelReceive: st.builds(c.R_CancelReceive, phContext=handles, dwRequestId=u32),
    c.R_EndReceive: st.builds(c.R_EndReceive, phContext=handles, dwAck=u32, dwRequestId=u32),
    c.R_MoveMessage: st.builds(c.R_MoveMessage, phContextFrom=handles, ullContextTo=u64,
                               LookupId=u64, pTransactionId=st.binary(min_size=16,
                                                                      max_size=16)),
    c.R_OpenQueueForMove: _open(c.R_OpenQueueForMove),
    c.R_QMEnlistRemoteTransaction: st.builds(
        lambda x, tok, qf: c.R_QMEnlistRemoteTransaction(x, len(tok), tok, qf),
        st.binary(min_size=16, max_size=16), st.binary(max_size=30), queue_formats),
    c.R_StartTransactionalReceive: _receive(c.R_StartTransactionalReceive,
                                            pTransactionId=st.binary(min_size=16,
                                                                     max_size=16)),
    c.R_SetUserAcknowledgementClass: st.builds(c.R_SetUserAcknowledgementClass,
                                               phContext=handles, LookupId=u64, usClass=u16),
    c.R_EndTransactionalReceive: st.builds(c.R_EndTransactionalReceive, phContext=handles,
                                           dwAck=u32, dwRequestId=u32),
    c.R_QMMgmtGetInfo: _get_info(),
    c.R_QMMgmtAction: st.builds(c.R_QMMgmtAction, pObjectFormat=mgmt_objects,
                                lpwszAction=text),
}


def _received(cls):
    return st.builds(lambda s, t, q, secs: cls(status=s, pdwArriveTime=t, pSequenceId=q,
                                               pdwNumberOfSections=len(secs),
                                               ppPacketSections=tuple(secs)),
                     u32, u32, u64, st.lists(sections, max_size=3))


RESULTS = {
    c.R_GetServerPort: st.builds(c.R_GetServerPortResult, status=u32),
    c.R_OpenQueue: st.builds(c.R_OpenQueueResult, pphContext=handles),
    c.R_CloseQueue: st.builds(c.R_CloseQueueResult, status=u32, pphContext=handles),
    c.R_CreateCursor: st.builds(c.R_CreateCursorResult, status=u32, phCursor=u32),
    c.R_StartReceive: _received(c.R_StartReceiveResult),
    c.R_StartTransactionalReceive: _received(c.R_StartTransactionalReceiveResult),
    c.R_OpenQueueForMove: st.builds(c.R_OpenQueueForMoveResult, pMoveContext=u64,
                                    pphContext=handles),
    c.R_QMMgmtGetInfo: st.builds(lambda s, pvs: c.R_QMMgmtGetInfoResult(status=s,
                                                                          apVar=tuple(pvs)),
                                 u32, st.lists(propvariants, max_size=5)),
    **{t: st.builds(c.RESULTS[t], status=u32) for t in (
        c.R_CloseCursor, c.R_PurgeQueue, c.R_CancelReceive, c.R_EndReceive, c.R_MoveMessage,
        c.R_QMEnlistRemoteTransaction, c.R_SetUserAcknowledgementClass,
        c.R_EndTransactionalReceive, c.R_QMMgmtAction)},
}
assert set(CALLS) == set(c.CALLS.values()) == set(RESULTS)


def syntaxes(call_type) -> list[bool]:
    return [False] if call_type.interface == c.QMMGMT else [False, True]


CASES = [(t, n) for t in CALLS for n in syntaxes(t)]
CASE_IDS = [f"{t.__name__}-{'NDR64' if n else 'NDR'}" for t, n in CASES]
QUICK = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# =============================================================================== round trips

@pytest.mark.req(*REQ_WIRE)
@pytest.mark.parametrize("call_type, ndr64", CASES, ids=CASE_IDS)
@QUICK
@given(data=st.data())
def test_every_request_round_trips_through_the_impacket_structures(call_type, ndr64, data):
    call = data.draw(CALLS[call_type])
    octets = encode_request(call, ndr64)
    assert decode_request(call_type, octets, ndr64) == call
    assert encode_request(decode_request(call_type, octets, ndr64), ndr64) == octets


@pytest.mark.req(*REQ_WIRE, "MS-MQRR/2.2.6/R5")
@pytest.mark.parametrize("call_type, ndr64", CASES, ids=CASE_IDS)
@QUICK
@given(data=st.data())
def test_every_response_round_trips_through_the_impacket_structures(call_type, ndr64, data):
    result = data.draw(RESULTS[call_type])
    octets = encode_response(result, call_type, ndr64)
    assert decode_response(call_type, octets, ndr64) == result


# =============================================================================== bad input

@pytest.mark.parametrize("call, field", [
    (c.R_OpenQueue(pQueueFormat=None), "R_OpenQueue.pQueueFormat"),
    (c.R_OpenQueue(pQueueFormat=QueueFormat(1, 0, 0, "not a guid")),
     "R_OpenQueue.pQueueFormat.m_gPublicID"),
    (c.R_CloseCursor(phContext=b"short"), "R_CloseCursor.phContext"),
    (c.R_CloseCursor(phContext=HANDLE, hCursor=-1), "R_CloseCursor.hCursor"),
    (c.R_MoveMessage(phContextFrom=HANDLE, pTransactionId=None), "R_MoveMessage.pTransactionId"),
    (c.R_QMEnlistRemoteTransaction(bytes(16), 5, b"ab", DIRECT),
     "R_QMEnlistRemoteTransaction.pbPropagationToken"),
    (c.R_QMMgmtGetInfo(MgmtObject(1), 2, (1,), (c.PropVariant(1),)), "R_QMMgmtGetInfo.aProp"),
    (c.R_QMMgmtGetInfo(MgmtObject(1), 1, (1,), (c.PropVariant(19, "x"),)),
     "R_QMMgmtGetInfo.apVar[0].value"),
    (c.R_QMMgmtAction(MgmtObject(1), None), "R_QMMgmtAction.lpwszAction"),
    (c.R_QMMgmtAction(MgmtObject(1, Reserved1=2**32), "x"), "R_QMMgmtAction.pObjectFormat.Reserved1"),
])
def test_a_call_that_cannot_be_encoded_names_the_field(call, field):
    with pytest.raises(EncodeError) as err:
        encode_request(call)
    assert err.value.field == field


@pytest.mark.req("MS-MQMR/2.2/R1")
def test_qmmgmt_has_no_ndr64_encoding():
    with pytest.raises(EncodeError, match="NDR only"):
        encode_request(ACTION_MACHINE, ndr64=True)


def test_values_nested_too_deeply_are_an_encode_error():
    deep = c.PropVariant(VT.VT_NULL)
    for _ in range(3000):
        deep = c.PropVariant(VT.VT_VECTOR | VT.VT_VARIANT, [deep])
    with pytest.raises(EncodeError, match="nested"):
        encode_response(c.R_QMMgmtGetInfoResult(apVar=(deep,)), c.R_QMMgmtGetInfo)


@pytest.mark.parametrize("name, call, ndr64, octets", FIXTURES, ids=[f[0] for f in FIXTURES])
def test_every_truncated_request_is_a_decode_error_naming_the_call(name, call, ndr64, octets):
    for cut in range(len(octets) - 3):  # the last 3 octets may be alignment padding
        with pytest.raises(DecodeError) as err:
            decode_request(type(call), octets[:cut], ndr64)
        assert err.value.field.startswith(type(call).__name__)


@pytest.mark.parametrize("name, result, ndr64, octets", RESPONSE_FIXTURES,
                         ids=[f[0] for f in RESPONSE_FIXTURES])
def test_every_truncated_response_is_a_decode_error_naming_the_result(name, result, ndr64,
                                                                      octets):
    call_type = next(k for k, v in c.RESULTS.items() if v is type(result))
    for cut in range(len(octets) - 3):
        with pytest.raises(DecodeError) as err:
            decode_response(call_type, octets[:cut], ndr64)
        assert err.value.field.startswith(type(result).__name__)


@settings(max_examples=300, deadline=None)
@given(call_type=st.sampled_from(sorted(CALLS, key=lambda t: t.__name__)),
       octets=st.binary(max_size=300), ndr64=st.booleans())
def test_arbitrary_octets_decode_or_raise_decode_error(call_type, octets, ndr64):
    for decode in (decode_request, decode_response):
        try:
            decode(call_type, octets, ndr64 and call_type.interface == c.REMOTEREAD)
        except DecodeError:
            pass


@pytest.mark.req("MS-MQMR/3.1.4/R2")
def test_hostile_counts_are_decode_errors_not_allocations():
    huge = h("ffffffff 00000000")  # 4 billion PROPVARIANTs announced, none present
    with pytest.raises(DecodeError, match="apVar"):
        decode_response(c.R_QMMgmtGetInfo, huge + bytes(8))
    sections = bytearray(RECEIVED_NDR)
    sections[60:64] = h("ffffff7f")  # the first pSectionBuffer claims 2 GiB
    with pytest.raises(DecodeError, match="ppPacketSections"):
        decode_response(c.R_StartReceive, bytes(sections))
    null_with_count = bytearray(PROPERTIES_NDR)
    null_with_count[36:40] = bytes(4)  # VT_LPWSTR pointer NULL: fine, value None
    assert decode_response(c.R_QMMgmtGetInfo, bytes(null_with_count[:80]) + bytes(4)) \
        .apVar[1] == c.PropVariant(31, None)


def test_a_flood_of_small_elements_is_refused_before_it_is_built():
    count = ndr.MAX_ELEMENTS + 1  # valid VT_EMPTY PROPVARIANTs, 16 octets each
    octets = struct.pack("<II", count, 0) + bytes(16) * count + bytes(4)
    with pytest.raises(DecodeError, match="elements announced"):
        decode_response(c.R_QMMgmtGetInfo, octets)
    fits = struct.pack("<II", 1000, 0) + bytes(16) * 1000 + bytes(4)
    assert len(decode_response(c.R_QMMgmtGetInfo, fits).apVar) == 1000


@pytest.mark.req("MS-MQRR/2.2.6/R5")
def test_a_section_size_that_disagrees_with_its_buffer_is_a_decode_error():
    octets = bytearray(RECEIVED_NDR)
    octets[36:40] = h("04000000")  # SectionSize 4, buffer of 3 octets
    with pytest.raises(DecodeError, match=r"ppPacketSections\[0\]"):
        decode_response(c.R_StartReceive, bytes(octets))


def test_a_section_count_that_disagrees_with_the_array_is_a_decode_error():
    octets = bytearray(RECEIVED_NDR)
    octets[16:20] = h("03000000")  # pdwNumberOfSections 3, array of 2
    with pytest.raises(DecodeError, match="pdwNumberOfSections"):
        decode_response(c.R_StartReceive, bytes(octets))


def test_deeply_nested_propvariants_in_a_response_are_a_decode_error():
    unit = h("0c10 0000 00000000 0c10 0000 01000000 00000200")  # a CAPROPVARIANT of one: 20
    nested = [h("01000000 00000000") + unit + (h("01000000") + unit) * depth
              + h("01000000") + bytes(16) for depth in (2, 3000)]  # innermost VT_EMPTY, HRESULT
    assert decode_response(c.R_QMMgmtGetInfo, nested[0]).apVar[0].value[0].value[0].value[0] \
        == c.PropVariant(ndr.VT_EMPTY)
    with pytest.raises(DecodeError, match="apVar"):
        decode_response(c.R_QMMgmtGetInfo, nested[1])


def test_strings_without_terminator_or_with_an_offset_are_decode_errors():
    good = ACTION_MACHINE_NDR
    no_nul = good[:8] + h("05000000 00000000 05000000") + "PAUSE".encode("utf-16le")
    with pytest.raises(DecodeError, match="NUL"):
        decode_request(c.R_QMMgmtAction, no_nul)
    offset = bytearray(good)
    offset[12:16] = h("01000000")
    with pytest.raises(DecodeError, match="offset"):
        decode_request(c.R_QMMgmtAction, bytes(offset))


def test_a_union_discriminant_that_contradicts_its_field_is_a_decode_error():
    octets = bytearray(OPEN_QUEUE_NDR)
    octets[4] = 1  # discriminant PUBLIC, m_qft DIRECT
    with pytest.raises(DecodeError, match="pQueueFormat"):
        decode_request(c.R_OpenQueue, bytes(octets))


# =============================================================================== a listener

NDR_TS = uuid.UUID("8a885d04-1ceb-11c9-9fe8-08002b104860")
NDR64_TS = uuid.UUID("71710533-beba-4937-8319-b5dbef9ccc36")
EPM = uuid.UUID("e1af8308-5d1f-11c9-91a4-08002b14a0fa")  # the endpoint mapper, C706 appendix O


def _floor(lhs: bytes, rhs: bytes) -> bytes:
    return struct.pack("<H", len(lhs)) + lhs + struct.pack("<H", len(rhs)) + rhs


def ept_map_answer(port: int | None) -> bytes:
    """The ept_map response stub (C706 appendix O): entry_handle, num_towers, towers[] (a
    conformant varying array of tower pointers), the towers, status; one tower of five floors
    (C706 appendix L: interface, NDR, RPC connection-oriented, TCP port, IP) naming ``port``,
    or none and EPT_S_NOT_REGISTERED when ``port`` is None."""
    if port is None:
        return bytes(20) + struct.pack("<IIIII", 0, 4, 0, 0, 0x16C9A0D6)
    tower = struct.pack("<H", 5) + b"".join([
        _floor(b"\x0d" + c.REMOTEREAD_UUID.bytes_le + struct.pack("<H", 1), b"\x00\x00"),
        _floor(b"\x0d" + NDR_TS.bytes_le + struct.pack("<H", 2), b"\x00\x00"),
        _floor(b"\x0b", b"\x00\x00"), _floor(b"\x07", struct.pack(">H", port)),
        _floor(b"\x09", socket.inet_aton("127.0.0.1"))])
    body = bytes(20) + struct.pack("<IIIII", 1, 4, 0, 1, 0x00020000)
    body += struct.pack("<II", len(tower), len(tower)) + tower
    return body + bytes(-len(body) % 4) + struct.pack("<I", 0)


def _pdu(ptype: int, call_id: int, body: bytes, flags: int = 0x03) -> bytes:
    """C706 12.6.3.1 common header (little-endian drep) + body."""
    return struct.pack("<BBBB4sHHI", 5, 0, ptype, flags, b"\x10\x00\x00\x00", 16 + len(body),
                       0, call_id) + body


class Listener:
    """A DCE/RPC server of a few dozen lines (C706 12.6.4): accepts the first presentation
    context of a bind (or rejects NDR64 if told), answers each request through ``answer``.

    ``answer(opnum, stub, ndr64)`` returns ("response", stub), ("fragments", [stubs]),
    ("fault", status), ("silence",) or ("close",)."""

    def __init__(self, answer: Callable, reject_ndr64: bool = False,
                 registered: bool = True):
        self.answer = answer
        self.reject_ndr64 = reject_ndr64
        self.registered = registered  # what its endpoint mapper says about RemoteRead
        self.binds: list[tuple[uuid.UUID, uuid.UUID]] = []
        self.requests: list[tuple[int, bytes]] = []
        self.call_ids: list[int] = []  # of the requests, in the same order
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.endpoint = f"ncacn_ip_tcp:127.0.0.1[{self.port}]"
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    @staticmethod
    def _read(conn, n):
        data = b""
        while len(data) < n:
            chunk = conn.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def _serve(self, conn):
        ndr64, stub, abstract = False, b"", None
        try:
            while True:
                header = self._read(conn, 16)
                ptype, flags = header[2], header[3]
                frag_len, _, call_id = struct.unpack_from("<HHI", header, 8)
                body = self._read(conn, frag_len - 16)
                if ptype == 11:  # bind
                    abstract = uuid.UUID(bytes_le=body[16:32])
                    syntax = uuid.UUID(bytes_le=body[36:52])
                    self.binds.append((abstract, syntax))
                    ndr64 = syntax == NDR64_TS
                    ok = not (ndr64 and self.reject_ndr64)
                    result = (struct.pack("<HH", 0, 0) + body[36:56]) if ok else \
                        (struct.pack("<HH", 2, 2) + bytes(20))
                    sec_addr = b"%d\x00" % self.port
                    ack = struct.pack("<HHIH", 4280, 4280, 0x1234, len(sec_addr)) + sec_addr
                    ack += bytes(-(16 + len(ack)) % 4) + struct.pack("<BBH", 1, 0, 0) + result
                    conn.sendall(_pdu(12, call_id, ack))
                elif ptype == 0:  # request: alloc_hint, p_cont_id, opnum, stub
                    stub += body[8:]
                    if not flags & 0x02:
                        continue
                    opnum = struct.unpack_from("<H", body, 6)[0]
                    self.requests.append((opnum, stub))
                    self.call_ids.append(call_id)
                    if abstract == EPM:  # ept_map: this listener serves RemoteRead too
                        reply = ("response", ept_map_answer(self.port if self.registered
                                                            else None))
                    else:
                        reply = self.answer(opnum, stub, ndr64)
                    stub = b""
                    if reply[0] == "response":
                        conn.sendall(_pdu(2, call_id, struct.pack("<IHBB", len(reply[1]), 0, 0,
                                                                  0) + reply[1]))
                    elif reply[0] == "fragments":
                        parts = reply[1]
                        for i, part in enumerate(parts):
                            flags = (1 if i == 0 else 0) | (2 if i == len(parts) - 1 else 0)
                            conn.sendall(_pdu(2, call_id, struct.pack("<IHBB", len(part), 0,
                                                                      0, 0) + part, flags))
                    elif reply[0] == "fault":
                        conn.sendall(_pdu(3, call_id, struct.pack("<IHBBII", 32, 0, 0, 0,
                                                                  reply[1], 0)))
                    elif reply[0] == "close":
                        conn.close()
                        return
                    elif reply[0] == "raw":
                        conn.sendall(reply[1])
        except (EOFError, OSError):
            pass

    def close(self):
        self.sock.close()
        for conn in self.conns:
            conn.close()


def model_answer(opnum, stub, ndr64, interface=c.REMOTEREAD):
    """Decode with our codec and answer with a fixed result per method."""
    call_type = c.CALLS[(interface, opnum)]
    decode_request(call_type, stub, ndr64)
    result = {c.R_GetServerPort: c.R_GetServerPortResult(status=2103),
              c.R_OpenQueue: c.R_OpenQueueResult(pphContext=HANDLE),
              c.R_StartReceive: RECEIVED,
              c.R_QMMgmtGetInfo: PROPERTIES}.get(call_type, c.RESULTS[call_type]())
    return ("response", encode_response(result, call_type, ndr64))


@pytest.fixture
def listener():
    made = []

    def make(answer=model_answer, **kw):
        made.append(Listener(answer, **kw))
        return made[-1]

    yield make
    for each in made:
        each.close()


# =============================================================================== the client

@pytest.mark.req("MS-MQRR/2.1/R1", "MS-MQRR/3.2.3/R1", "MS-MQRR/3.2.4.1/R2")
def test_a_call_returns_the_typed_result_of_the_response(listener):
    server = listener()
    with RpcClient(timeout=5) as client:
        client.connect(server.endpoint)
        assert client.call(c.R_GetServerPort()) == c.R_GetServerPortResult(status=2103)
        assert client.call(OPEN_QUEUE) == c.R_OpenQueueResult(pphContext=HANDLE)
    assert server.binds[0] == (c.REMOTEREAD_UUID, NDR_TS)
    assert server.requests[1] == (2, OPEN_QUEUE_NDR)


@pytest.mark.req("MS-MQRR/2.2/R1")
def test_ndr64_is_negotiated_for_remoteread_and_used_for_the_stub(listener):
    server = listener()
    with RpcClient(timeout=5) as client:
        client.connect(server.endpoint, ndr64=True)
        assert client.syntax() == "NDR64"
        assert client.call(OPEN_QUEUE) == c.R_OpenQueueResult(pphContext=HANDLE)
        assert client.call(START_RECEIVE) == RECEIVED
    assert server.binds[0][1] == NDR64_TS
    assert server.requests[0] == (2, OPEN_QUEUE_NDR64)


@pytest.mark.req("MS-MQMR/2.2/R1", "MS-MQMR/2.1/R1")
def test_qmmgmt_binds_ndr_on_its_own_association_even_when_ndr64_is_asked(listener):
    server = listener(lambda o, s, n: model_answer(o, s, n, c.QMMGMT))
    with RpcClient(timeout=5) as client:
        client.connect(server.endpoint, ndr64=True, interface=c.QMMGMT)
        assert client.call(GET_INFO) == PROPERTIES
        assert client.syntax(c.QMMGMT) == "NDR"
    assert server.binds == [(c.QMMGMT_UUID, NDR_TS)]


def test_a_fault_becomes_a_raised_result_for_void_and_other_methods(listener):
    server = listener(lambda o, s, n: ("fault", 0xC00E0003 if o == 2 else 0x1C00001A))
    with RpcClient(timeout=5) as client:
        client.connect(server.endpoint)
        assert client.call(OPEN_QUEUE) == c.R_OpenQueueResult(status=0xC00E0003, raised=True)
        assert client.call(c.R_PurgeQueue(phContext=HANDLE)) == \
            c.R_PurgeQueueResult(status=0x1C00001A, raised=True)
        assert client.call(c.R_GetServerPort()).raised  # the association survives faults


def test_a_fragmented_response_is_reassembled(listener):
    def answer(opnum, stub, ndr64):
        octets = encode_response(RECEIVED, c.R_StartReceive, ndr64)
        return ("fragments", [octets[:7], octets[7:30], octets[30:]])

    server = listener(answer)
    with RpcClient(timeout=5) as client:
        client.connect(server.endpoint)
        assert client.call(START_RECEIVE) == RECEIVED


def test_a_rejected_ndr64_bind_is_a_connect_error(listener):
    server = listener(reject_ndr64=True)
    with RpcClient(timeout=5) as client, pytest.raises(ConnectError, match="NDR64"):
        client.connect(server.endpoint, ndr64=True)


def test_no_answer_times_out_and_closes_the_association(listener):
    server = listener(lambda o, s, n: ("silence",))
    with RpcClient(timeout=0.3) as client:
        client.connect(server.endpoint)
        with pytest.raises(RpcTimeout):
            client.call(c.R_GetServerPort())
        with pytest.raises(ConnectionLost, match="connect"):
            client.call(c.R_GetServerPort())


def test_a_closed_connection_is_reported_and_not_reused(listener):
    server = listener(lambda o, s, n: ("close",))
    with RpcClient(timeout=5) as client:
        client.connect(server.endpoint)
        with pytest.raises(ConnectionLost):
            client.call(c.R_GetServerPort())
        with pytest.raises(ConnectionLost):
            client.call(c.R_GetServerPort())


def test_an_unreachable_endpoint_is_a_connect_error():
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    with RpcClient(timeout=2) as client, pytest.raises(ConnectError, match="cannot connect"):
        client.connect(f"ncacn_ip_tcp:127.0.0.1[{port}]")


def test_a_response_beyond_the_bound_is_a_protocol_error(listener):
    server = listener(lambda o, s, n: ("response", bytes(5000)))
    with RpcClient(timeout=5, max_response=4096) as client:
        client.connect(server.endpoint)
        with pytest.raises(ProtocolError, match="exceeds"):
            client.call(c.R_GetServerPort())


def test_a_pdu_that_is_not_a_response_is_a_protocol_error(listener):
    server = listener(lambda o, s, n: ("raw", _pdu(13, 1, bytes(12))))  # a bind_nak
    with RpcClient(timeout=5) as client:
        client.connect(server.endpoint)
        with pytest.raises(ProtocolError, match="type 13"):
            client.call(c.R_GetServerPort())


def test_a_malformed_response_stub_is_a_decode_error(listener):
    server = listener(lambda o, s, n: ("response", b"\x01\x02"))
    with RpcClient(timeout=5) as client:
        client.connect(server.endpoint)
        with pytest.raises(DecodeError, match="R_GetServerPortResult"):
            client.call(c.R_GetServerPort())


@pytest.mark.req("MS-MQRR/2.1/R1")
def test_without_a_port_the_endpoint_mapper_names_it(listener):
    server = listener()
    with RpcClient(timeout=5, epm_port=server.port) as client:
        client.connect("ncacn_ip_tcp:127.0.0.1")
        assert client.call(c.R_GetServerPort()).status == 2103
    assert [b[0] for b in server.binds] == [EPM, c.REMOTEREAD_UUID]


def test_an_interface_the_endpoint_mapper_does_not_know_is_a_connect_error(listener):
    server = listener(registered=False)
    with RpcClient(timeout=5, epm_port=server.port) as client, \
            pytest.raises(ConnectError, match="endpoint mapper"):
        client.connect("ncacn_ip_tcp:127.0.0.1")


@pytest.mark.req("MS-MQRR/3.1.4.1/R3", "MS-MQRR/3.1.4.1/R4", "MS-MQRR/3.2.4.1/R3",
                 "MS-MQRR/3.2.4.1/R4")
def test_follow_server_port_rebinds_to_the_port_r_getserverport_names(listener):
    second = listener()
    first = listener(lambda o, s, n: ("response", struct.pack("<I", second.port)))
    with RpcClient(timeout=5) as client:
        client.connect(first.endpoint, follow_server_port=True)
        client.call(c.R_PurgeQueue(phContext=HANDLE))
    assert [op for op, _ in first.requests] == [0]
    assert [op for op, _ in second.requests] == [6]


def test_blocking_receives_get_their_ulTimeout_added_to_the_call_timeout():
    client = RpcClient(timeout=10)
    assert client._call_timeout(c.R_StartReceive(ulTimeout=2500), None) == 12.5
    assert client._call_timeout(c.R_StartReceive(ulTimeout=c.INFINITE_TIMEOUT), None) is None
    assert client._call_timeout(c.R_StartReceive(ulTimeout=2500), 1.0) == 1.0
    assert client._call_timeout(c.R_PurgeQueue(), None) == 10


def test_calls_before_connect_raise_connection_lost():
    with pytest.raises(ConnectionLost, match="connect"):
        RpcClient().call(c.R_GetServerPort())


# =============================================================================== arguments

def test_endpoints_parse_with_and_without_port():
    assert parse_endpoint("ncacn_ip_tcp:127.0.0.1[2103]") == Endpoint("127.0.0.1", 2103)
    assert parse_endpoint("ncacn_ip_tcp:mq.example") == Endpoint("mq.example", None)
    for bad in ("tcp:1", "ncacn_ip_tcp:h[70000]", "ncacn_np:h[\\pipe\\x]", ""):
        with pytest.raises(ArgumentError):
            parse_endpoint(bad)


def test_call_arguments_take_ints_constants_format_names_and_hex():
    call = call_from_arguments("R_OpenQueue", [r"pQueueFormat=DIRECT=OS:host\private$\q",
                                               "dwAccess=RECEIVE_ACCESS|PEEK_ACCESS",
                                               "dwShareMode=0x1", f"pClientId={CLIENT_ID}"])
    assert call == c.R_OpenQueue(pQueueFormat=DIRECT, dwAccess=0x21, dwShareMode=1,
                                 pClientId=CLIENT_ID)
    call = call_from_arguments("R_StartReceive", [f"phContext={HANDLE.hex()}",
                                                  "ulAction=MQ_ACTION_PEEK_NEXT",
                                                  "ulTimeout=INFINITE_TIMEOUT"])
    assert (call.phContext, call.ulAction, call.ulTimeout) == (HANDLE, 0x80000001, 0xFFFFFFFF)
    call = call_from_arguments("R_QMMgmtGetInfo", [
        "pObjectFormat=MACHINE", "aProp=PROPID_MGMT_MSMQ_PRIVATEQ,5"])
    assert call == c.R_QMMgmtGetInfo(MgmtObject(1), 2, (2, 5),
                                     (c.PropVariant(1), c.PropVariant(1)))
    call = call_from_arguments("R_QMEnlistRemoteTransaction", [
        f"pTransactionId={bytes(16).hex()}", "pbPropagationToken=aabb",
        r"pQueueFormat=DIRECT=TCP:10.0.0.1\q"])
    assert call.cbPropagationToken == 2


@pytest.mark.parametrize("method, pairs, message", [
    ("R_Nope", [], "unknown method"),
    ("R_OpenQueue", ["nope=1"], "no field 'nope'"),
    ("R_OpenQueue", ["dwAccess"], "KEY=VALUE"),
    ("R_OpenQueue", ["dwAccess=lots"], "not an integer"),
    ("R_OpenQueue", ["pQueueFormat=DIRECT=XX:h"], "pQueueFormat"),
    ("R_CloseQueue", ["pphContext=00ff"], "20"),
    ("R_CloseCursor", ["hCursor=0x1ffffffff"], "hCursor"),
    ("R_OpenQueue", ["pClientId=xyz"], "GUID"),
])
def test_bad_call_arguments_are_one_line_argument_errors(method, pairs, message):
    with pytest.raises(ArgumentError, match=message) as err:
        call_from_arguments(method, pairs)
    assert "\n" not in str(err.value)


def test_results_print_handles_as_hex_and_summarize_sections():
    text = format_result(RECEIVED)
    assert "2 section(s)" in text and "stBinaryFirstSection alloc=10 size=3 data=616263" in text
    assert HANDLE.hex() in format_result(c.R_OpenQueueResult(pphContext=HANDLE))
    assert "MQ_ERROR_QUEUE_NOT_FOUND" in format_result(
        c.R_OpenQueueResult(status=0xC00E0003, raised=True))
    d = json.loads(json.dumps(result_to_dict(PROPERTIES)))
    assert d["apVar"][1] == {"vt": 31, "vt_name": "VT_LPWSTR", "value": "ab"}


# =============================================================================== mqconform call

def _one_line_error(proc) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


@pytest.mark.parametrize("args, message", [
    (["ncacn_ip_tcp:127.0.0.1[9]", "R_Nope"], "unknown method"),
    (["ncacn_ip_tcp:127.0.0.1[9]", "R_OpenQueue", "zz=1"], "no field"),
    (["ncacn_ip_tcp:127.0.0.1[9]", "R_CloseCursor", "hCursor=abc"], "hCursor"),
    (["ncacn_ip_tcp:127.0.0.1[9]", "R_CloseCursor", "hCursor=-1"], "hCursor"),
    (["nowhere", "R_GetServerPort"], "endpoint"),
])
def test_mqconform_call_rejects_bad_input_with_exit_2(mqconform, args, message):
    proc = mqconform("call", *args)
    assert proc.returncode == 2
    assert message in _one_line_error(proc)


def test_mqconform_call_reports_an_unreachable_endpoint_with_exit_1(mqconform):
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    proc = mqconform("call", f"ncacn_ip_tcp:127.0.0.1[{port}]", "R_GetServerPort")
    assert proc.returncode == 1
    assert "cannot connect" in _one_line_error(proc)


def test_mqconform_call_prints_the_result(mqconform, listener):
    server = listener()
    proc = mqconform("call", server.endpoint, "R_OpenQueue",
                     r"pQueueFormat=DIRECT=OS:host\private$\q", "dwAccess=RECEIVE_ACCESS",
                     check=True)
    assert f"pphContext: {HANDLE.hex()}" in proc.stdout
    proc = mqconform("call", server.endpoint, "R_StartReceive", f"phContext={HANDLE.hex()}",
                     "--ndr64", "--json", check=True)
    out = json.loads(proc.stdout)
    assert out["status_name"] == "MQ_OK" and out["pdwNumberOfSections"] == 2
    assert out["ppPacketSections"][0]["pSectionBuffer"] == "616263"
    assert server.binds[-1][1] == NDR64_TS


def test_the_first_request_of_each_association_carries_a_verification_trailer(listener):
    """Decision 6 (MS-RPCE 2.2.2.13): rpc_sec_vt_pcontext naming what the bind bound and
    rpc_sec_vt_header2 repeating the request's header, after the 4-octet aligned stub, on the
    first request only."""
    from mqconform.wire import dcerpc as d
    from mqconform.wire.association import strip_verification_trailer

    def answer(opnum, stub, ndr64):
        bare, _padding, why = strip_verification_trailer(stub)
        assert why is None
        return model_answer(opnum, bare, ndr64)

    server = listener(answer)
    with RpcClient(timeout=5, verification_trailer=True) as client:
        client.connect(server.endpoint)
        assert client.call(c.R_GetServerPort()).status == 2103
        assert client.call(c.R_GetServerPort()).status == 2103
    (first_opnum, first), (second_opnum, second) = server.requests
    trailer = d.find_verification_trailer(first)
    assert trailer is not None and trailer.offset % 4 == 0
    assert first[:trailer.offset] == ndr.encode_request(c.R_GetServerPort(), False) + bytes(
        -len(ndr.encode_request(c.R_GetServerPort(), False)) % 4)
    commands = {cmd.command: cmd for cmd in trailer.commands}
    assert set(commands) == {d.SEC_VT_COMMAND_PCONTEXT, d.SEC_VT_COMMAND_HEADER2}
    assert all(cmd.must_process for cmd in trailer.commands)
    assert commands[d.SEC_VT_COMMAND_PCONTEXT].pcontext() == (
        d.SyntaxId(c.REMOTEREAD_UUID, 1, 0), d.NDR)
    assert commands[d.SEC_VT_COMMAND_HEADER2].header2() == (
        0, b"\x10\x00\x00\x00", server.call_ids[0], 0, first_opnum)
    assert d.find_verification_trailer(second) is None and second_opnum == 0
    assert second == ndr.encode_request(c.R_GetServerPort(), False)


# ------------------------------------------------------------------ decision 7

SIGNING_SERVER = """
queue_manager: {computer_name: MQREF}
security:
  authentication: required
  level: integrity
  users:
    - {name: alice, password: alice-pw-7Q, administrator: true}
"""


@pytest.fixture
def signing_server(tmp_path):
    """The reference requiring NTLM at packet integrity or above (SIGNING_SERVER), and its
    endpoint."""
    from mqconform.server.main import start

    (tmp_path / "queues.yaml").write_text(SIGNING_SERVER)
    r = start(port=0, queues=str(tmp_path / "queues.yaml"))
    try:
        yield r, f"ncacn_ip_tcp:127.0.0.1[{r.rpc.address[1]}]"
    finally:
        r.stop()


@pytest.mark.parametrize("level", [5, 6], ids=["integrity", "privacy"])
def test_a_signature_altered_on_its_way_is_refused_and_ends_the_association(signing_server,
                                                                            level):
    """Decision 7: the next request only, one octet of its checksum changed after signing
    (what the transport is handed is the altered PDU); the server refuses it (the reference:
    fault RPC_S_SEC_PKG_ERROR), the association is closed after it, and a new one works."""
    from mqconform.server.rpc import RPC_S_SEC_PKG_ERROR

    r, endpoint = signing_server
    cl = RpcClient(timeout=5, credentials=Credentials("alice", "alice-pw-7Q", level=level))
    cl.connect(endpoint)
    assert cl.call(c.R_GetServerPort()).status == r.rpc.address[1]
    transport = cl._associations[c.REMOTEREAD].dce.get_rpc_transport()
    sent = []
    send = transport.send
    transport.send = lambda data, *a: (sent.append(bytes(data)), send(data, *a))[1]
    cl.alter_next_signature()
    answer = cl.call(c.R_GetServerPort())
    assert answer.raised and answer.status == RPC_S_SEC_PKG_ERROR
    [request] = sent
    assert request[2] == 0 and struct.unpack_from("<H", request, 10)[0] == 16  # signed
    with pytest.raises(ConnectionLost):
        cl.call(c.R_GetServerPort())
    cl.connect(endpoint)
    for _ in range(2):  # only the one request was altered
        assert cl.call(c.R_GetServerPort()).status == r.rpc.address[1]
    cl.close()


@pytest.mark.parametrize("method", ["alter_next_signature", "name_another_security_context"])
@pytest.mark.parametrize("credentials", [None, Credentials("alice", "pw", level=2)],
                         ids=["anonymous", "connect"])
def test_no_signature_to_alter_where_requests_are_not_signed(credentials, method):
    """Decisions 7 and 8 need an association that signs."""
    with pytest.raises(ArgumentError, match="does not sign"):
        getattr(RpcClient(credentials=credentials), method)()


# ------------------------------------------------------------------ decision 8


def _tapped_client(endpoint: str, level: int) -> tuple[RpcClient, list[bytes]]:
    """A client of the signing reference at ``level``, connected, and the list its RemoteRead
    transport appends every PDU it sends to from now on."""
    cl = RpcClient(timeout=5, credentials=Credentials("alice", "alice-pw-7Q", level=level))
    cl.connect(endpoint)
    transport = cl._associations[c.REMOTEREAD].dce.get_rpc_transport()
    sent: list[bytes] = []
    send = transport.send
    transport.send = lambda data, *a, **k: (sent.append(bytes(data)), send(data, *a, **k))[1]
    return cl, sent


def _auth_context_id(pdu: bytes) -> int:
    """The auth_context_id of a PDU's sec_trailer (MS-RPCE 2.2.2.11)."""
    frag_length, auth_length = struct.unpack_from("<HH", pdu, 8)
    return struct.unpack_from("<L", pdu, frag_length - auth_length - 4)[0]


@pytest.mark.parametrize("level", [5, 6], ids=["integrity", "privacy"])
def test_a_request_naming_another_security_context_is_signed_as_sent_and_refused(
        signing_server, level):
    """Decision 8: the next request's sec_trailer names auth_context_id + 1, and its signature
    is the one impacket made over it (the reference then refuses it for the context, fault
    RPC_S_SEC_PKG_ERROR, not for the signature: a server that checked only the signature would
    serve it); the association is closed after it, and a new one works."""
    from mqconform.server.rpc import RPC_S_SEC_PKG_ERROR

    r, endpoint = signing_server
    cl, sent = _tapped_client(endpoint, level)
    assert cl.call(c.R_GetServerPort()).status == r.rpc.address[1]
    cl.name_another_security_context()
    answer = cl.call(c.R_GetServerPort())
    assert answer.raised and answer.status == RPC_S_SEC_PKG_ERROR
    good, shifted = sent
    assert _auth_context_id(shifted) == _auth_context_id(good) + 1
    with pytest.raises(ConnectionLost):
        cl.call(c.R_GetServerPort())
    cl.connect(endpoint)
    assert cl.call(c.R_GetServerPort()).status == r.rpc.address[1]
    cl.close()


def test_an_rpc_auth_3_naming_another_security_context_leaves_the_caller_unproven(
        signing_server):
    """Decision 8 with ``auth3``: the qmmgmt association's rpc_auth_3 names auth_context_id + 1
    (its bind's is unchanged); the reference completes no security context, so the signed call
    that follows is refused; the RemoteRead association, bound before, is served."""

    r, endpoint = signing_server
    cl = RpcClient(timeout=5, credentials=Credentials("alice", "alice-pw-7Q", level=5))
    cl.connect(endpoint)
    with pytest.raises(ArgumentError, match="bound already"):
        cl.name_another_security_context(c.REMOTEREAD, auth3=True)
    cl.name_another_security_context(c.QMMGMT, auth3=True)
    answer = cl.call(c.R_QMMgmtGetInfo(pObjectFormat=MgmtObject(1), cp=1, aProp=(1,),
                                       apVar=(c.PropVariant(1),)))
    assert answer.raised and answer.status != 0
    assert cl.call(c.R_GetServerPort()).status == r.rpc.address[1]
    cl.close()


# ------------------------------------------------------------------ decision 9


@pytest.mark.parametrize("level", [5, 6], ids=["integrity", "privacy"])
def test_a_request_naming_an_object_carries_it_outside_the_sealed_stub_and_is_served(
        signing_server, level):
    """Decision 9: the next request only names the object (PFC_OBJECT_UUID, the object after
    the opnum, C706 12.6.4.9), in the clear even at packet privacy; the reference serves it."""
    r, endpoint = signing_server
    cl, sent = _tapped_client(endpoint, level)
    named = uuid.UUID("6d2f1f4e-5b8a-4c3e-9f61-0a7b2c4d8e19")
    cl.name_an_object(named)
    assert cl.call(c.R_GetServerPort()).status == r.rpc.address[1]
    assert cl.call(c.R_GetServerPort()).status == r.rpc.address[1]
    first, second = sent
    assert first[3] & 0x80 and first[24:40] == named.bytes_le  # PFC_OBJECT_UUID, the object
    assert not second[3] & 0x80
    cl.close()
