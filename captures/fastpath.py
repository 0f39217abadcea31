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

The methods it reads are not listed here: they are every method of wire/ndr.METHODS whose
request stub has a fixed size (wire/ndr.fixed_layout), and whose response stub has one too or
is a receive's (read by hand below: its SectionBuffer array makes its size vary). Each one's
parser is made from its layout; the compiled decoder (captures/_cdecode.c) interprets the
same layouts, written into captures/_cdecode_gen.h by captures/columns.py.

The receive's [out] parameters (MS-MQRR 6 IDL, C706 14 / MS-RPCE 2.2.5 for NDR64):
pdwArriveTime @0, pSequenceId @8, pdwNumberOfSections @16, then the SectionBuffer** (a
referent id: 4 octets @20 in NDR, 8 @24 in NDR64), the array (max_count, then 16-octet
structures in NDR — SectionType an enum of 2 octets — or 24 in NDR64), their deferred octets
(max_count, octets), and the HRESULT last.
"""

from __future__ import annotations

import struct
from typing import Any

from mqconform.model import calls as c
from mqconform.model.observer import REQUEST_PARAMETERS, RESULT_PARAMETERS
from mqconform.wire import ndr

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_NULL_CTX = bytes(20)
_FORMATS = {"u8": "B", "u16": "H", "u32": "I", "i32": "i", "u64": "Q", "ctx": "20s"}

#: the trace validator's columns and the parameters they are read from (model/observer.py,
#: which observation_fields reads them by too; tests/captures/test_fastpath.py holds the two
#: equal)
REQUEST_COLUMNS = {name: column for name, (column, _) in REQUEST_PARAMETERS.items()}
RESPONSE_COLUMNS = {name: column for name, (column, _) in RESULT_PARAMETERS.items()} | {
    "status": "status"}


def _ctx(raw: bytes) -> str | None:
    return None if raw == _NULL_CTX else raw.hex()


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

#: responses whose size varies, read by hand: (interface, opnum) -> parser
VARIABLE_RESPONSES: dict[tuple[str, int], Any] = {
    (c.REMOTEREAD, c.R_StartReceive.opnum): _received_response,
    (c.REMOTEREAD, c.R_StartTransactionalReceive.opnum): _received_response,
}


def _plan(fields: tuple, size: int, columns: dict[str, str]) -> tuple:
    """(struct, [(column, index in the unpacked tuple, is a context handle)], [(index, lo,
    hi)] of the [range]d ones) of a fixed layout: padding skipped, octets not read."""
    fmt, at, slot, picks, ranges = "<", 0, 0, [], []
    for f in fields:
        if f.offset > at:
            fmt += f"{f.offset - at}x"
        at = f.offset + f.size
        if f.kind == "octets":
            fmt += f"{f.size}x"
            continue
        fmt += _FORMATS[f.kind]
        if f.lo is not None:
            ranges.append((slot, f.lo, f.hi))
        if f.name in columns:
            picks.append((columns[f.name], slot, f.kind == "ctx"))
        slot += 1
    if size > at:
        fmt += f"{size - at}x"
    return struct.Struct(fmt), picks, ranges


def _compile(name: str, fields: tuple, size: int, columns: dict[str, str], response: bool):
    """A parser for one fixed layout, written out as Python source and compiled (as
    collections.namedtuple does), so that each method reads at the speed of a hand-written
    parser: one length check, one struct unpack, its [range] checks, one dict."""
    layout, picks, ranges = _plan(fields, size, columns)
    status = [i for column, i, _ in picks if column == "status"]
    items = ", ".join(f"{column!r}: " + (f"None if v[{i}] == NULL else v[{i}].hex()" if ctx
                                        else f"v[{i}]")
                      for column, i, ctx in picks if column != "status")
    checks = "".join(f"    if not {lo} <= v[{i}] <= {hi}:\n        return None\n"
                     for i, lo, hi in ranges)
    result = f"v[{status[0]}], {{{items}}}" if response else f"{{{items}}}"
    source = (f"def {name}(stub{', ndr64' if response else ''}):\n"
              f"    if len(stub) != {size}:\n        return None\n"
              f"    v = unpack(stub)\n{checks}    return {result}\n")
    namespace = {"unpack": layout.unpack, "NULL": _NULL_CTX}
    exec(compile(source, f"<fast parser {name}>", "exec"), namespace)  # noqa: S102
    return namespace[name]


def _fast_methods() -> dict[tuple[str, int], tuple[Any, Any]]:
    """(interface, opnum) -> (request parser, response parser) of every method read here
    (little-endian NDR and NDR64: the layouts of these methods are the same in both, which
    is checked)."""
    out = {}
    for key in sorted(ndr.METHODS):
        syntaxes = [False, True] if ndr.NDR64 in ndr.INTERFACES[key[0]][2] else [False]
        requests = {ndr.fixed_layout(*key, n) for n in syntaxes}
        responses = {ndr.fixed_layout(*key, n, response=True) for n in syntaxes}
        if len(requests) != 1 or None in requests:
            continue
        (request,) = requests
        if key in VARIABLE_RESPONSES:
            response = VARIABLE_RESPONSES[key]
        elif len(responses) == 1 and None not in responses:
            (fields, size), = responses
            if not any(f.name == "status" for f in fields):
                continue  # a void method: its response says nothing the columns hold
            response = _compile(f"{c.CALLS[key].__name__}_response", fields, size,
                                RESPONSE_COLUMNS, True)
        else:
            continue
        out[key] = (_compile(f"{c.CALLS[key].__name__}_request", *request, REQUEST_COLUMNS,
                             False), response)
    return out


#: (interface name, opnum) -> (request parser, response parser), in (interface, opnum) order
FAST: dict[tuple[str, int], tuple[Any, Any]] = _fast_methods()

#: the same parsers in captures/_cdecode.c, by the code it knows each method's pair by: its
#: place in FAST, from 1 (captures/_cdecode_gen.h, generated by captures/columns.py, names
#: each code FAST_<METHOD> and holds its layouts; tests/captures/test_cdecode.py holds each
#: equal to its Python twin)
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
