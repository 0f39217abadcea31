"""The fast path of capture decoding: the trace validator's columns (model/observer.py
``observation_fields``) and the status, read with ``struct`` at fixed offsets from the stubs
of the calls that make up most traffic (the RemoteRead calls on an open handle and
R_GetServerPort), in NDR and NDR64, little-endian.

It reads only stubs whose whole layout it checks the way wire/ndr.py's decoder does (exact
length, [range] of dwAck, the SectionBuffer array of a receive's response with its referents,
conformances, enum range and alignment); anything else — another method, a big-endian stub,
a stub the checks do not pass — it declines (returns None) and the caller decodes with
wire/ndr.py, which then says what is wrong. So it never accepts what the codec refuses, and
tests/captures/test_fastpath.py holds its columns equal to the codec's on every golden pcap
and on generated and mutated stubs.

Layouts (offsets from the stub's start; MS-MQRR 6 IDL, C706 14 / MS-RPCE 2.2.5 for NDR64):
the context handle is 20 octets aligned to 4 (attributes, UUID), so a ULONGLONG after it sits
at 24; a receive's [out] parameters are pdwArriveTime @0, pSequenceId @8, pdwNumberOfSections
@16, then the SectionBuffer** (a referent id: 4 octets @20 in NDR, 8 @24 in NDR64), the array
(max_count, then 16-octet structures in NDR — SectionType an enum of 2 octets — or 24 in
NDR64), their deferred octets (max_count, octets), and the HRESULT last.
"""

from __future__ import annotations

import struct
from typing import Any

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_RECEIVE = struct.Struct("<20s4xQIIII")  # ctx, LookupId, hCursor, ulAction, ulTimeout, rid
_END = struct.Struct("<20sII")  # ctx, dwAck, dwRequestId
_CTX_U32 = struct.Struct("<20sI")
_NULL_CTX = bytes(20)


def _ctx(raw: bytes) -> str | None:
    return None if raw == _NULL_CTX else raw.hex()


# ------------------------------------------------------------------------------ requests


def _receive_request(stub: bytes, size: int) -> dict | None:
    if len(stub) != size:
        return None
    ctx, lookup, cursor, action, _timeout, rid = _RECEIVE.unpack_from(stub)
    return {"handle": _ctx(ctx), "lookup_id": lookup, "cursor": cursor, "action": action,
            "request_id": rid}


def _end_request(stub: bytes) -> dict | None:
    if len(stub) != 28:
        return None
    ctx, ack, rid = _END.unpack(stub)
    if not 1 <= ack <= 2:  # [range(1, 2)]: the codec refuses it
        return None
    return {"handle": _ctx(ctx), "ack": ack, "request_id": rid}


def _ctx_request(stub: bytes) -> dict | None:
    return {"handle": _ctx(stub)} if len(stub) == 20 else None


def _ctx_u32_request(name: str):
    def parse(stub: bytes) -> dict | None:
        if len(stub) != 24:
            return None
        ctx, value = _CTX_U32.unpack(stub)
        return {"handle": _ctx(ctx), name: value}
    return parse


def _no_request(stub: bytes) -> dict | None:
    return {} if not stub else None


# ------------------------------------------------------------------------------ responses


def _status_only(stub: bytes, ndr64: bool) -> tuple[int, dict] | None:
    return (_U32.unpack(stub)[0], {}) if len(stub) == 4 else None


def _close_response(stub: bytes, ndr64: bool) -> tuple[int, dict] | None:
    if len(stub) != 24:
        return None
    ctx, status = _CTX_U32.unpack(stub)
    return status, {"result_handle": _ctx(ctx)}


def _cursor_response(stub: bytes, ndr64: bool) -> tuple[int, dict] | None:
    if len(stub) != 8:
        return None
    cursor, status = struct.unpack("<II", stub)
    return status, {"cursor": cursor}


def _received_response(stub: bytes, ndr64: bool) -> tuple[int, dict] | None:
    """pdwArriveTime, pSequenceId, pdwNumberOfSections, ppPacketSections, HRESULT."""
    n = len(stub)
    if n < 24:
        return None
    sequence = _U64.unpack_from(stub, 8)[0]
    count = _U32.unpack_from(stub, 16)[0]
    if ndr64:
        if n < 32:
            return None
        pos = 32
        present = _U64.unpack_from(stub, 24)[0] != 0
    else:
        pos = 24
        present = _U32.unpack_from(stub, 20)[0] != 0
    if not present:
        if count:
            return None
    else:
        if ndr64:
            if n < pos + 8:
                return None
            max_count = _U64.unpack_from(stub, pos)[0]
            pos += 8
            size = 24
        else:
            if n < pos + 4:
                return None
            max_count = _U32.unpack_from(stub, pos)[0]
            pos += 4
            size = 16
        if max_count != count or count * size > n - pos:
            return None
        buffers = []
        for _ in range(count):
            if ndr64:
                pos += -pos % 8
                if n < pos + 24:
                    return None
                _kind, _alloc, length = struct.unpack_from("<III", stub, pos)
                pointer = _U64.unpack_from(stub, pos + 16)[0]
                pos += 24
            else:
                pos += -pos % 4
                if n < pos + 16:
                    return None
                kind = struct.unpack_from("<H", stub, pos)[0]
                if kind > 0x7FFF:
                    return None
                _alloc, length, pointer = struct.unpack_from("<III", stub, pos + 4)
                pos += 16
            if not pointer and length:
                return None
            buffers.append(length if pointer else None)
        for length in buffers:
            if length is None:
                continue
            if ndr64:
                pos += -pos % 8
                if n < pos + 8 or _U64.unpack_from(stub, pos)[0] != length:
                    return None
                pos += 8
            else:
                pos += -pos % 4
                if n < pos + 4 or _U32.unpack_from(stub, pos)[0] != length:
                    return None
                pos += 4
            if n < pos + length:
                return None
            pos += length
    pos += -pos % 4
    if n != pos + 4:
        return None
    return _U32.unpack_from(stub, pos)[0], {"sequence_id": sequence}


# ------------------------------------------------------------------------------ the table

#: (interface name, opnum) -> (request parser, response parser)
FAST: dict[tuple[str, int], tuple[Any, Any]] = {
    ("RemoteRead", 0): (_no_request, _status_only),  # R_GetServerPort
    ("RemoteRead", 3): (_ctx_request, _close_response),  # R_CloseQueue
    ("RemoteRead", 4): (_ctx_request, _cursor_response),  # R_CreateCursor
    ("RemoteRead", 5): (_ctx_u32_request("cursor"), _status_only),  # R_CloseCursor
    ("RemoteRead", 6): (_ctx_request, _status_only),  # R_PurgeQueue
    ("RemoteRead", 7): (lambda s: _receive_request(s, 56), _received_response),
    ("RemoteRead", 8): (_ctx_u32_request("request_id"), _status_only),  # R_CancelReceive
    ("RemoteRead", 9): (_end_request, _status_only),  # R_EndReceive
    ("RemoteRead", 13): (lambda s: _receive_request(s, 72), _received_response),
    ("RemoteRead", 15): (_end_request, _status_only),  # R_EndTransactionalReceive
}


#: the same parsers in captures/_cdecode.c, by the code it knows each method's pair by: its
#: place in FAST, from 1 (captures/_cdecode_gen.h, generated by captures/columns.py, names
#: each code FAST_<METHOD>; tests/captures/test_cdecode.py holds each equal to its Python twin)
C_PARSERS: dict[tuple[str, int], int] = {key: code for code, key in enumerate(FAST, 1)}


def observe(interface: str, opnum: int, ndr64: bool, request: bytes,
            response: bytes | None) -> tuple[int | None, dict] | None:
    """(status, the observer's columns) of one little-endian call, or None to decline.
    ``response``: the response stub, None when there is none (a fault, or not captured)."""
    parsers = FAST.get((interface, opnum))
    if parsers is None:
        return None
    fields = parsers[0](request)
    if fields is None:
        return None
    if response is None:
        return None, fields
    answer = parsers[1](response, ndr64)
    if answer is None:
        return None
    status, more = answer
    fields.update(more)
    return status, fields
