"""The stub data of every RemoteRead (MS-MQRR 6: opnums 0, 2-15) and qmmgmt (MS-MQMR 6: opnums
0-1) call, in NDR and NDR64, to and from the typed calls and results of model.calls.

Public interface (the server, the captures decoder and the tests use these only)::

    encode_request(call, ndr64) -> bytes
    decode_request(interface, opnum, stub, ndr64) -> Call
    encode_response(call, result, ndr64) -> bytes
    decode_response(call, stub, ndr64) -> Result
    StubError            (ValueError with .field and a one-line message)
    INTERFACES           name -> (uuid, (major, minor), transfer syntaxes)

A request stub holds the [in] parameters in IDL order, a response stub the [out] parameters
then, for a method that returns HRESULT or DWORD, the return value (``Result.status``). Each
parameter is laid out by wire/types.py; this module says which parameters a stub holds and how
they depend on each other (size_is, [range]).

How the IDL reads here (C706 14.3.10-14.3.12, MIDL's rules for parameters):

* A top-level pointer parameter without a pointer attribute is [ref]: it has no octets of its
  own, its referent is written in place, and it cannot be NULL (``StubError`` on encode).
  pointer_default(unique) applies to the pointers below it.
* ``[out, size_is(, *pdwNumberOfSections)] SectionBuffer** ppPacketSections`` (R_StartReceive,
  R_StartTransactionalReceive): the parameter is a [ref] pointer to a unique pointer to a
  conformant array of *pdwNumberOfSections SectionBuffer structures (MIDL "Multiple Levels of
  Pointers": ``size_is(, n)`` sizes the second level). On the wire: the referent id of the
  array pointer (0 for NULL), max_count, the SectionBuffer structures themselves (each with
  the referent id of its pSectionBuffer), then, in array order, each pSectionBuffer's
  max_count and octets (deferred, C706 14.3.12.3). The array is not one of pointers.
* R_OpenQueue and R_OpenQueueForMove return void: their response stubs hold the [out]
  parameters only; a failure is an RPC fault, never a stub (``encode_response`` refuses a
  result with ``raised``).
* R_QMMgmtGetInfo's apVar is [in, out, size_is(cp)]: the response holds cp PROPVARIANTs, cp
  being the request's; ``decode_response`` takes it from the call and checks the stub's
  conformance against it. A failed call sends apVar back as it came (MS-MQMR 3.1.4.1: "MUST
  NOT set any [out] parameter values"): a failure result without apVar is encoded with the
  request's apVar.
* ``[in] const wchar_t* lpwszAction`` is "a null-terminated Unicode string" (MS-MQMR
  3.1.4.2): a [string] wchar_t array, max_count, offset, actual_count and the characters
  with their terminator.

Encoding writes any value the transfer syntax can carry, so that a test client can send what a
[range] or a size_is forbids; decoding applies the strict NDR consistency checks MS-MQRR
3.1.4 and MS-MQMR 3.1.4 ask the RPC runtime for, and refuses what they refuse.

scapy-rpc 0.0.8 (msrpcs.ms_mqrr, msrpcs.ms_mqmr) generates classes from the same IDL; where they
are right, tests/wire/test_scapy_rpc.py holds our octets equal to theirs. ``SCAPY_RPC_OVERRIDES``
lists the classes whose layout is wrong, and why.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from mqconform.model import calls as c
from mqconform.wire.ndr_engine import NDR64_SYNTAX, NDR_SYNTAX, Decoder, Encoder, StubError
from mqconform.wire.types import (
    CONTEXT_HANDLE,
    GUID,
    MGMT_OBJECT,
    PROPVARIANT,
    QUEUE_FORMAT,
    SECTION_BUFFER,
    ULONG,
    XACTUOW,
)

__all__ = ["encode_request", "decode_request", "encode_response", "decode_response",
           "StubError", "INTERFACES", "NDR", "NDR64", "SCAPY_RPC_OVERRIDES"]

#: transfer syntaxes as (uuid, major version)
NDR = (uuid.UUID(NDR_SYNTAX[0]), NDR_SYNTAX[1])
NDR64 = (uuid.UUID(NDR64_SYNTAX[0]), NDR64_SYNTAX[1])

#: interface name -> (uuid, version, supported transfer syntaxes)
INTERFACES: dict[str, tuple[uuid.UUID, tuple[int, int], tuple[tuple[uuid.UUID, int], ...]]] = {
    # MS-MQRR/2.2/R1: NDR and NDR64
    c.REMOTEREAD: (c.REMOTEREAD_UUID, (1, 0), (NDR, NDR64)),
    # MS-MQMR/2.2/R1: NDR only
    c.QMMGMT: (c.QMMGMT_UUID, (1, 0), (NDR,)),
}


# ============================================================================ parameter codecs


class _Prim:
    def __init__(self, kind: str) -> None:
        self.kind = kind

    def enc(self, e: Encoder, v: Any, field: str, env: dict) -> None:
        e.prim(self.kind, v, field)

    def dec(self, d: Decoder, field: str, env: dict) -> Any:
        return d.prim(self.kind, field)


class _Range(_Prim):
    """A DWORD with a [range(lo, hi)] attribute: checked when decoding (MS-RPCE strict NDR
    consistency check; MS-MQRR/3.1.4/R1, MS-MQMR/3.1.4/R1)."""

    def __init__(self, lo: int, hi: int) -> None:
        super().__init__("u32")
        self.lo, self.hi = lo, hi

    def dec(self, d: Decoder, field: str, env: dict) -> Any:
        value = d.u32(field)
        if not self.lo <= value <= self.hi:
            raise StubError(field, f"{value} is outside [range({self.lo}, {self.hi})]")
        return value


class _Ref:
    """A [ref] pointer parameter (or a by-value parameter): its referent, in place."""

    def __init__(self, type_: Any, pointer: bool = True) -> None:
        self.type, self.pointer = type_, pointer

    def enc(self, e: Encoder, v: Any, field: str, env: dict) -> None:
        if v is None and self.pointer:
            raise StubError(field, "a [ref] pointer parameter cannot be NULL (C706 14.3.10)")
        self.type.enc(e, v, field)

    def dec(self, d: Decoder, field: str, env: dict) -> Any:
        return self.type.dec(d, field)


class _RefString:
    """``[in] const wchar_t*`` read as a null-terminated string (MS-MQMR 3.1.4.2)."""

    def enc(self, e: Encoder, v: Any, field: str, env: dict) -> None:
        if v is None:
            raise StubError(field, "a [ref] pointer parameter cannot be NULL (C706 14.3.10)")
        e.string(v, field)

    def dec(self, d: Decoder, field: str, env: dict) -> str:
        return d.string(field)


class _ConformantArray:
    """A top-level [size_is(size)] array: max_count, the elements, their deferred referents.
    ``size`` names the parameter that sizes it; ``from_call`` takes it from the request."""

    def __init__(self, elem: Any, size: str, from_call: bool = False) -> None:
        self.elem, self.size, self.from_call = elem, size, from_call

    def enc(self, e: Encoder, v: Any, field: str, env: dict) -> None:
        if not isinstance(v, (list, tuple)):
            raise StubError(field, f"{type(v).__name__} is not a sequence")
        e.conformant_array(v, field, self.elem.enc_scalars, self.elem.enc_buffers)

    def dec(self, d: Decoder, field: str, env: dict) -> tuple:
        expected = env[self.size]
        return tuple(d.conformant_array(field, self.elem.min_size, self.elem.dec_scalars,
                                        self.elem.dec_buffers, expected, self.size))


class _ByteArray:
    """``[in, size_is(size)] unsigned char*``: a [ref] pointer to a conformant octet array."""

    def __init__(self, size: str) -> None:
        self.size = size

    def enc(self, e: Encoder, v: Any, field: str, env: dict) -> None:
        e.byte_array(v, field)

    def dec(self, d: Decoder, field: str, env: dict) -> bytes:
        return d.byte_array(field, env[self.size], self.size)


class _Sections:
    """``[out, size_is(, *pdwNumberOfSections)] SectionBuffer** ppPacketSections``: the
    referent id of the array pointer, then max_count, the SectionBuffer structures and their
    deferred octets (see the module docstring). An empty tuple is the NULL pointer."""

    SIZE = "pdwNumberOfSections"

    def enc(self, e: Encoder, v: Any, field: str, env: dict) -> None:
        if not isinstance(v, (list, tuple)):
            raise StubError(field, f"{type(v).__name__} is not a sequence of SectionBuffer")
        e.referent(bool(v))
        if v:
            e.conformant_array(v, field, SECTION_BUFFER.enc_scalars, SECTION_BUFFER.enc_buffers)

    def dec(self, d: Decoder, field: str, env: dict) -> tuple:
        count = env[self.SIZE]
        if not d.referent(field):
            if count:  # MS-MQRR/3.1.4/R2: NULL with a nonzero conformant value
                raise StubError(field, f"NULL with {self.SIZE} {count}: a NULL pointer with a "
                                       f"nonzero size_is")
            return ()
        min_size = 24 if d.ndr64 else 16  # a SectionBuffer's size
        return tuple(d.conformant_array(field, min_size, SECTION_BUFFER.dec_scalars,
                                        SECTION_BUFFER.dec_buffers, count, self.SIZE))


_U8, _U16, _U32, _I32, _U64 = (_Prim(k) for k in ("u8", "u16", "u32", "i32", "u64"))
#: a context handle parameter; QUEUE_CONTEXT_HANDLE_SERIALIZE* pphContext is a [ref] pointer to
#: one: the same 20 octets. NULL is the all-zero context handle (None in the model).
_CTX = _CTX_PTR = _Ref(CONTEXT_HANDLE, pointer=False)
_STATUS = ("status", _U32)  # the HRESULT or DWORD return value

_OPEN = [("pQueueFormat", _Ref(QUEUE_FORMAT)), ("dwAccess", _U32), ("dwShareMode", _U32),
         ("pClientId", _Ref(GUID)), ("fNonRoutingServer", _I32), ("Major", _U8),
         ("Minor", _U8), ("BuildNumber", _U16), ("fWorkgroup", _I32)]
_RECEIVE = [("phContext", _CTX), ("LookupId", _U64), ("hCursor", _U32), ("ulAction", _U32),
            ("ulTimeout", _U32), ("dwRequestId", _U32), ("dwMaxBodySize", _U32),
            ("dwMaxCompoundMessageSize", _U32)]
_RECEIVED = [("pdwArriveTime", _U32), ("pSequenceId", _U64), ("pdwNumberOfSections", _U32),
             ("ppPacketSections", _Sections()), _STATUS]
_END = [("phContext", _CTX), ("dwAck", _Range(1, 2)), ("dwRequestId", _U32)]


@dataclass(frozen=True)
class _Method:
    call: type[c.Call]
    request: list
    response: list


#: (interface, opnum) -> the [in] parameters and the [out] parameters (MS-MQRR 6, MS-MQMR 6)
METHODS: dict[tuple[str, int], _Method] = {(m.call.interface, m.call.opnum): m for m in [
    _Method(c.R_GetServerPort, [], [_STATUS]),
    _Method(c.R_OpenQueue, _OPEN, [("pphContext", _CTX_PTR)]),  # void: no status
    _Method(c.R_CloseQueue, [("pphContext", _CTX_PTR)], [("pphContext", _CTX_PTR), _STATUS]),
    _Method(c.R_CreateCursor, [("phContext", _CTX)], [("phCursor", _U32), _STATUS]),
    _Method(c.R_CloseCursor, [("phContext", _CTX), ("hCursor", _U32)], [_STATUS]),
    _Method(c.R_PurgeQueue, [("phContext", _CTX)], [_STATUS]),
    _Method(c.R_StartReceive, _RECEIVE, _RECEIVED),
    _Method(c.R_CancelReceive, [("phContext", _CTX), ("dwRequestId", _U32)], [_STATUS]),
    _Method(c.R_EndReceive, _END, [_STATUS]),
    _Method(c.R_MoveMessage, [("phContextFrom", _CTX), ("ullContextTo", _U64),
                              ("LookupId", _U64), ("pTransactionId", _Ref(XACTUOW))],
            [_STATUS]),
    _Method(c.R_OpenQueueForMove, _OPEN,  # void: no status
            [("pMoveContext", _U64), ("pphContext", _CTX_PTR)]),
    _Method(c.R_QMEnlistRemoteTransaction,
            [("pTransactionId", _Ref(XACTUOW)), ("cbPropagationToken", _Range(0, 131072)),
             ("pbPropagationToken", _ByteArray("cbPropagationToken")),
             ("pQueueFormat", _Ref(QUEUE_FORMAT))], [_STATUS]),
    _Method(c.R_StartTransactionalReceive, _RECEIVE + [("pTransactionId", _Ref(XACTUOW))],
            _RECEIVED),
    _Method(c.R_SetUserAcknowledgementClass,
            [("phContext", _CTX), ("LookupId", _U64), ("usClass", _U16)], [_STATUS]),
    _Method(c.R_EndTransactionalReceive, _END, [_STATUS]),
    _Method(c.R_QMMgmtGetInfo,
            [("pObjectFormat", _Ref(MGMT_OBJECT)),
             ("cp", _Range(1, 128)),  # MS-MQMR/3.1.4.1/R1
             ("aProp", _ConformantArray(ULONG, "cp")),
             ("apVar", _ConformantArray(PROPVARIANT, "cp"))],
            [("apVar", _ConformantArray(PROPVARIANT, "cp", from_call=True)), _STATUS]),
    _Method(c.R_QMMgmtAction,
            [("pObjectFormat", _Ref(MGMT_OBJECT)), ("lpwszAction", _RefString())], [_STATUS]),
]}


# ============================================================================ fixed layouts


@dataclass(frozen=True)
class FixedField:
    """One parameter of a fixed-size stub: where it is and how it reads. ``kind``: a
    primitive (u8, u16, u32, i32, u64), ``ctx`` (a context handle, 20 octets) or ``octets``
    (``size`` octets, e.g. an XACTUOW); ``lo``/``hi``: its [range] when it has one."""

    name: str
    offset: int
    kind: str
    size: int
    lo: int | None = None
    hi: int | None = None


def _fixed(codec: Any, ndr64: bool) -> tuple[str, int, int, int | None, int | None] | None:
    """(kind, size, alignment, lo, hi) of a parameter whose encoding has one size, or None."""
    if isinstance(codec, _Range):
        return "u32", 4, 4, codec.lo, codec.hi
    if isinstance(codec, _Prim):
        size = {"u8": 1, "u16": 2, "u32": 4, "i32": 4, "u64": 8}[codec.kind]
        return codec.kind, size, size, None, None
    if isinstance(codec, _Ref):
        if codec.type is CONTEXT_HANDLE:
            return "ctx", 20, CONTEXT_HANDLE.ALIGN[ndr64], None, None
        if codec.type in (XACTUOW, GUID):
            return "octets", 16, codec.type.ALIGN[ndr64], None, None
    return None


def fixed_layout(interface: str, opnum: int, ndr64: bool, response: bool = False
                 ) -> tuple[tuple[FixedField, ...], int] | None:
    """The layout of a method's request stub (or response stub) when every parameter in it
    has a fixed size: (its parameters at their offsets, the stub's size), the offsets those
    of the encoder (each parameter aligned from the stub's start, C706 14.2.2; MS-RPCE
    2.2.5.3.4.1 for NDR64); None when one parameter's size depends on the values. The capture
    fast paths (captures/fastpath.py, captures/_cdecode.c) are generated from it."""
    method = _method(interface, opnum, ndr64)
    fields, offset = [], 0
    for name, codec in (method.response if response else method.request):
        fixed = _fixed(codec, ndr64)
        if fixed is None:
            return None
        kind, size, align, lo, hi = fixed
        offset += -offset % align
        fields.append(FixedField(name, offset, kind, size, lo, hi))
        offset += size
    return tuple(fields), offset


# ============================================================================ public interface


def _method(interface: str, opnum: int, ndr64: bool) -> _Method:
    if interface not in INTERFACES:
        raise StubError("interface", f"{interface!r} is neither RemoteRead nor qmmgmt")
    method = METHODS.get((interface, opnum))
    if method is None:
        raise StubError("opnum", f"{interface} has no method with opnum {opnum!r}")
    if ndr64 and NDR64 not in INTERFACES[interface][2]:
        raise StubError("ndr64", f"{interface} supports the NDR transfer syntax only "
                                 f"(MS-MQMR 2.2)")
    return method


def _method_of(call: Any, ndr64: bool) -> _Method:
    if not isinstance(call, c.Call):
        raise StubError("call", f"{type(call).__name__} is not a model.calls.Call")
    return _method(call.interface, call.opnum, ndr64)


def encode_request(call: c.Call, ndr64: bool) -> bytes:
    """The request stub of ``call``: its [in] parameters in IDL order."""
    return _encode_request(call, ndr64).getvalue()


def _encode_request(call: c.Call, ndr64: bool) -> Encoder:
    """The encoder after writing the request (its ``pads`` locate the alignment gaps)."""
    method = _method_of(call, ndr64)
    e = Encoder(ndr64)
    for name, codec in method.request:
        codec.enc(e, getattr(call, name), name, {})
    return e


def decode_request(interface: str, opnum: int, stub: bytes, ndr64: bool,
                   padding: int = 0) -> c.Call:
    """The call a request stub carries. Raises ``StubError`` (naming the field) for a stub
    the IDL cannot produce: truncated, trailing octets, counts that disagree, [range].
    ``padding``: at most that many zero octets may follow the last parameter (stub padding
    before a verification trailer, MS-RPCE 2.2.2.13)."""
    method = _method(interface, opnum, ndr64)
    d = Decoder(stub, ndr64)
    values: dict[str, Any] = {}
    for name, codec in method.request:
        values[name] = codec.dec(d, name, values)
    d.end(padding)
    return method.call(**values)


def _response_values(call: c.Call, result: c.Result) -> dict[str, Any]:
    values = {name: getattr(result, name) for name in vars(result)}
    if isinstance(call, c.R_QMMgmtGetInfo) and not result.apVar:
        # MS-MQMR 3.1.4.1: a failed call sets no [out] value; apVar goes back as it came
        values["apVar"] = call.apVar
    return values


def encode_response(call: c.Call, result: c.Result, ndr64: bool) -> bytes:
    """The response stub of ``call`` answered with ``result``: the [out] parameters, then the
    return value. A void method's raised result is a fault, not a stub: ``StubError``."""
    return _encode_response(call, result, ndr64).getvalue()


def _encode_response(call: c.Call, result: c.Result, ndr64: bool) -> Encoder:
    method = _method_of(call, ndr64)
    expected = c.RESULTS[type(call)]
    if not isinstance(result, expected):
        raise StubError("result", f"{type(result).__name__} is not a {expected.__name__}")
    if type(call) in c.VOID_METHODS and result.raised:
        raise StubError("raised", f"{type(call).__name__} returns void: a raised status "
                                  f"{result.status:#010x} is sent as an RPC fault, not a stub")
    values = _response_values(call, result)
    e = Encoder(ndr64)
    for name, codec in method.response:
        codec.enc(e, values[name], name, {})
    return e


def decode_response(call: c.Call, stub: bytes, ndr64: bool) -> c.Result:
    """The result a response stub carries, for the request ``call`` (whose [in] parameters
    size the [out] arrays: R_QMMgmtGetInfo's cp)."""
    method = _method_of(call, ndr64)
    d = Decoder(stub, ndr64)
    env = {name: getattr(call, name) for name, _ in method.request}
    values: dict[str, Any] = {}
    for name, codec in method.response:
        value = codec.dec(d, name, values if not getattr(codec, "from_call", False) else env)
        values[name] = value
    d.end()
    return c.RESULTS[type(call)](**values)


# ============================================================================ scapy-rpc 0.0.8

#: scapy-rpc classes whose layout differs from the IDL, and why. Every other class of
#: msrpcs.ms_mqrr and msrpcs.ms_mqmr encodes as wire/ does (tests/wire/test_scapy_rpc.py).
SCAPY_RPC_OVERRIDES: dict[str, str] = {
    "ms_mqrr.R_OpenQueue_Response":
        "(1) adds a status DWORD: R_OpenQueue returns void, its response holds pphContext "
        "only (20 octets)",
    "ms_mqrr.R_OpenQueueForMove_Response":
        "(1) adds a status DWORD: R_OpenQueueForMove returns void, its response holds "
        "pMoveContext and pphContext only (28 octets)",
    "ms_mqrr.R_StartReceive_Response":
        "(2) lays out SectionBuffer** as max_count and one pointer per element; the IDL's "
        "size_is(, n) makes it a unique pointer to an array of n SectionBuffer structures",
    "ms_mqrr.R_StartTransactionalReceive_Response":
        "(2) as R_StartReceive_Response",
    "ms_mqmr.R_QMMgmtAction_Request":
        "(3) declares lpwszAction an unsigned short; it is a null-terminated wchar_t string",
    "ms_mqmr.R_QMMgmtGetInfo_Response":
        "(4) size_is(cp) names the request's cp, absent from the response: unparseable; "
        "and (5) as R_QMMgmtGetInfo_Request",
    "ms_mqmr.R_QMMgmtGetInfo_Request":
        "(5) builds each PROPVARIANT of apVar from offset 0, so an element after one whose "
        "size is not a multiple of 8 (VT_BLOB, vectors: 20 octets) starts unaligned; "
        "PROPVARIANT aligns to 8",
    "ms_mqmr.CAPROPVARIANT":
        "(5) as R_QMMgmtGetInfo_Request: the PROPVARIANTs of pElems (VT_VECTOR | VT_VARIANT) "
        "are each built from offset 0",
    "ms_mqmr.CAUH":
        "(5) aligns its ULARGE_INTEGER elements from the start of the array, not of the "
        "stub: after a max_count that ends 4 octets past a multiple of 8 they start 4 octets "
        "early",
    "ms_mqrr.QUEUE_FORMAT@ndr64":
        "(6) in NDR64 aligns a union arm to the arm's own alignment; MS-RPCE 2.2.5.3.4.4 "
        "aligns it to the union's (8): the GUID, OBJECTID and MULTICAST_ID arms start 4 "
        "octets early; the same in every class holding a QUEUE_FORMAT (R_OpenQueue_Request, "
        "R_OpenQueueForMove_Request, R_QMEnlistRemoteTransaction_Request, ms_mqmr's copy)",
    "ms_mqmr.tag_inner_PROPVARIANT@ndr64":
        "(6) as QUEUE_FORMAT@ndr64 (qmmgmt is NDR only, so this never reaches the wire)",
    "ms_mqmr.MGMT_OBJECT@ndr64":
        "(6) as QUEUE_FORMAT@ndr64 (qmmgmt is NDR only)",
}
