"""Hypothesis strategies for the typed values the wire carries: every call and result of
model.calls, QUEUE_FORMAT, MGMT_OBJECT, SectionBuffer and PROPVARIANT (with its vectors), drawn
over the whole range of what NDR can carry (the model's own rules are not the wire's concern).
Imported by the tests of tests/wire (their conftest puts this folder on sys.path)."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from mqconform.model import calls as c
from mqconform.model.formats import DlId, MgmtObject, MulticastId, ObjectId, QueueFormat
from mqconform.wire.types import VARTYPES

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

u8 = st.integers(0, 0xFF)
u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFFFFFF)
i32 = st.integers(-0x80000000, 0x7FFFFFFF)
u64 = st.integers(0, 0xFFFFFFFFFFFFFFFF)
guids = st.uuids()
# any Unicode text without NUL; code points outside the BMP travel as surrogate pairs
unicode_texts = st.text(st.characters(exclude_characters="\x00"), max_size=24)
ascii_texts = st.text(st.characters(min_codepoint=1, max_codepoint=0x7F), max_size=24)
contexts = st.one_of(st.none(), st.binary(min_size=20, max_size=20).filter(any))
xactuows = st.binary(min_size=16, max_size=16)


def build(texts: st.SearchStrategy[str]) -> dict:
    """The strategies, with strings drawn from ``texts``."""

    @st.composite
    def queue_formats(draw) -> QueueFormat:
        """Any QUEUE_FORMAT the wire can carry: every m_qft with a value of its arm (the model's
        own rules, MS-MQMQ 2.2.7, are not the wire's business)."""
        qft = draw(st.integers(0, 8))
        value = {
            0: st.none(),
            1: guids, 4: guids, 5: guids,
            2: st.builds(ObjectId, guids, u32),
            3: st.one_of(st.none(), texts), 8: st.one_of(st.none(), texts),
            6: st.builds(DlId, guids, st.one_of(st.none(), texts)),
            7: st.builds(MulticastId, u32, u32),
        }[qft]
        return QueueFormat(qft, draw(u8), draw(u16), draw(value))


    mgmt_objects = st.one_of(
        st.builds(MgmtObject, st.just(1), st.none(), u32),
        st.builds(MgmtObject, st.just(2), st.one_of(st.none(), queue_formats())),
        st.builds(lambda r: MgmtObject(3, Reserved2=r), u32),
    )


    def _prim(kind: str):
        lo, hi = {"i8": (-128, 127), "u8": (0, 255), "i16": (-0x8000, 0x7FFF), "u16": (0, 0xFFFF),
                  "i32": (-0x80000000, 0x7FFFFFFF), "u32": (0, 0xFFFFFFFF),
                  "i64": (-(1 << 63), (1 << 63) - 1), "u64": (0, (1 << 64) - 1)}[kind]
        return st.integers(lo, hi)


    _SCALAR_VALUES = {
        0x00: st.none(), 0x01: st.none(), 0x10: _prim("i8"), 0x11: _prim("u8"),
        0x02: _prim("i16"), 0x12: _prim("u16"), 0x03: _prim("i32"), 0x13: _prim("u32"),
        0x14: _prim("i64"), 0x15: _prim("u64"), 0x0B: _prim("i16"),
        0x48: st.one_of(st.none(), guids), 0x41: st.binary(max_size=24),
        0x1F: st.one_of(st.none(), texts),
        0x1011: st.lists(_prim("u8"), max_size=6), 0x1012: st.lists(_prim("u16"), max_size=6),
        0x1003: st.lists(_prim("i32"), max_size=6), 0x1013: st.lists(_prim("u32"), max_size=6),
        0x1015: st.lists(_prim("u64"), max_size=6), 0x1048: st.lists(guids, max_size=4),
        0x101F: st.lists(st.one_of(st.none(), texts), max_size=4),
    }
    assert set(_SCALAR_VALUES) | {0x100C} == set(VARTYPES)


    def _leaf():
        return st.sampled_from(sorted(_SCALAR_VALUES)).flatmap(
            lambda vt: _SCALAR_VALUES[vt].map(lambda v: c.PropVariant(vt, v)))


    #: PROPVARIANTs, VT_VECTOR | VT_VARIANT nesting them (as PROPID_MGMT_QUEUE_EOD_SOURCE_INFO)
    propvariants = st.recursive(
        _leaf(), lambda inner: st.lists(inner, max_size=4).map(lambda v: c.PropVariant(0x100C, v)),
        max_leaves=8)

    sections = st.builds(c.SectionBuffer, st.integers(0, 4), u32, st.just(0),
                         st.one_of(st.none(), st.binary(max_size=40))).map(
        lambda s: c.SectionBuffer(s.SectionBufferType, s.SectionSizeAlloc,
                                  len(s.pSectionBuffer or b""), s.pSectionBuffer))


    @st.composite
    def getinfo_calls(draw) -> c.R_QMMgmtGetInfo:
        cp = draw(st.integers(1, 6))
        return c.R_QMMgmtGetInfo(draw(mgmt_objects), cp, tuple(draw(st.lists(u32, min_size=cp,
                                                                              max_size=cp))),
                                 tuple(draw(st.lists(propvariants, min_size=cp, max_size=cp))))


    @st.composite
    def enlist_calls(draw) -> c.R_QMEnlistRemoteTransaction:
        token = draw(st.binary(max_size=64))
        return c.R_QMEnlistRemoteTransaction(draw(xactuows), len(token), token,
                                             draw(queue_formats()))


    _open = dict(pQueueFormat=queue_formats(), dwAccess=u32, dwShareMode=u32, pClientId=guids,
                 fNonRoutingServer=i32, Major=u8, Minor=u8, BuildNumber=u16, fWorkgroup=i32)
    _receive = dict(phContext=contexts, LookupId=u64, hCursor=u32, ulAction=u32, ulTimeout=u32,
                    dwRequestId=u32, dwMaxBodySize=u32, dwMaxCompoundMessageSize=u32)

    CALLS = {
        c.R_GetServerPort: st.builds(c.R_GetServerPort),
        c.R_OpenQueue: st.builds(c.R_OpenQueue, **_open),
        c.R_CloseQueue: st.builds(c.R_CloseQueue, pphContext=contexts),
        c.R_CreateCursor: st.builds(c.R_CreateCursor, phContext=contexts),
        c.R_CloseCursor: st.builds(c.R_CloseCursor, phContext=contexts, hCursor=u32),
        c.R_PurgeQueue: st.builds(c.R_PurgeQueue, phContext=contexts),
        c.R_StartReceive: st.builds(c.R_StartReceive, **_receive),
        c.R_CancelReceive: st.builds(c.R_CancelReceive, phContext=contexts, dwRequestId=u32),
        c.R_EndReceive: st.builds(c.R_EndReceive, phContext=contexts, dwAck=st.integers(1, 2),
                                  dwRequestId=u32),
        c.R_MoveMessage: st.builds(c.R_MoveMessage, phContextFrom=contexts, ullContextTo=u64,
                                   LookupId=u64, pTransactionId=xactuows),
        c.R_OpenQueueForMove: st.builds(c.R_OpenQueueForMove, **_open),
        c.R_QMEnlistRemoteTransaction: enlist_calls(),
        c.R_StartTransactionalReceive: st.builds(c.R_StartTransactionalReceive, **_receive,
                                                 pTransactionId=xactuows),
        c.R_SetUserAcknowledgementClass: st.builds(c.R_SetUserAcknowledgementClass,
                                                   phContext=contexts, LookupId=u64, usClass=u16),
        c.R_EndTransactionalReceive: st.builds(c.R_EndTransactionalReceive, phContext=contexts,
                                               dwAck=st.integers(1, 2), dwRequestId=u32),
        c.R_QMMgmtGetInfo: getinfo_calls(),
        c.R_QMMgmtAction: st.builds(c.R_QMMgmtAction, pObjectFormat=mgmt_objects,
                                    lpwszAction=texts),
    }
    assert set(CALLS) == set(c.CALLS.values())


    @st.composite
    def received(draw, result_type):
        items = tuple(draw(st.lists(sections, max_size=4)))
        return result_type(status=draw(u32), pdwArriveTime=draw(u32), pSequenceId=draw(u64),
                           pdwNumberOfSections=len(items), ppPacketSections=items)


    def result_for(call: c.Call):
        """A strategy of results of ``call``'s type (apVar sized by the call's cp)."""
        kind = c.RESULTS[type(call)]
        if isinstance(call, c.R_QMMgmtGetInfo):
            return st.builds(kind, status=u32, apVar=st.lists(
                propvariants, min_size=call.cp, max_size=call.cp).map(tuple))
        specific = {
            c.R_OpenQueueResult: dict(status=st.just(0), pphContext=contexts),
            c.R_OpenQueueForMoveResult: dict(status=st.just(0), pMoveContext=u64,
                                             pphContext=contexts),
            c.R_CloseQueueResult: dict(status=u32, pphContext=contexts),
            c.R_CreateCursorResult: dict(status=u32, phCursor=u32),
        }.get(kind)
        if kind in (c.R_StartReceiveResult, c.R_StartTransactionalReceiveResult):
            return received(kind)
        return st.builds(kind, **(specific or dict(status=u32)))

    return {name: value for name, value in locals().items() if name in _EXPORTED}


_EXPORTED = {"queue_formats", "mgmt_objects", "propvariants", "sections", "getinfo_calls",
             "enlist_calls", "CALLS", "received", "result_for"}
#: the strategies over all of Unicode (the names below) and over ASCII (for scapy-rpc, which
#: counts a non-ASCII wchar string in UTF-8 octets)
globals().update(build(unicode_texts))
ASCII = SimpleNamespace(**build(ascii_texts))


def syntaxes(call_type) -> list[bool]:
    """NDR and NDR64 for RemoteRead, NDR for qmmgmt (MS-MQRR 2.2, MS-MQMR 2.2)."""
    return [False] if call_type.interface == c.QMMGMT else [False, True]
