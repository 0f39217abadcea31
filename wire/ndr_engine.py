"""The NDR and NDR64 transfer syntaxes at the level of octets: alignment, primitive types,
pointers, conformant arrays and strings, and the strict reader that turns malformed stub data
into ``StubError``. The IDL types of MS-MQRR and MS-MQMR are built from these in wire/types.py;
the stubs of each method in wire/ndr.py.

Sources (facts only; the section of each fact sits beside its code):

* C706 (DCE 1.1 RPC) chapter 14, NDR: 14.2.2 alignment of primitive types, 14.2.5 enumerated
  types (an unsigned short), 14.3.3 conformant arrays (max_count first), 14.3.4 strings
  (conformant varying: max_count, offset, actual_count, then the elements including the
  terminator), 14.3.10 and 14.3.12 pointers (a referent id, 0 for NULL; [ref] pointers have no
  representation; referents of embedded pointers are deferred).
* MS-RPCE 2.2.5 NDR64: 2.2.5.2 enumerations are 4 octets; 2.2.5.3.1 pointers and the
  conformance/variance counts are 8 octets aligned to 8; 2.2.5.3.4.1 a structure is padded at
  its end to its alignment; 2.2.5.3.4.4 a union is aligned to its largest member, before the
  discriminant and again before the arm.
* MS-RPCE 3.1.1.5.3 and MS-MQRR/3.1.4/R1, MS-MQMR/3.1.4/R1: the strict NDR consistency checks
  the decoder applies (counts agree with their size_is, strings end with their terminator,
  [range] holds); MS-MQRR/3.1.4/R2 and MS-MQMR/3.1.4/R2: a NULL unique pointer with a nonzero
  conformant value is rejected.

Only little-endian integers with ASCII characters (data representation 0x10) are handled: the
data representation Windows and every other MS-RPCE implementation send.

Decoding never allocates from a count it has not checked against the octets that remain, so a
hostile max_count (2**31), a string without its terminator or a pointer to nowhere ends in a
``StubError`` after at most one pass over the stub.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from mqconform.wire import dcerpc

__all__ = ["StubError", "Encoder", "Decoder", "NDR_SYNTAX", "NDR64_SYNTAX"]

#: transfer syntax identifiers (C706 14; MS-RPCE 2.2.5): (uuid text, version)
NDR_SYNTAX = (str(dcerpc.NDR.uuid), dcerpc.NDR.major)
NDR64_SYNTAX = (str(dcerpc.NDR64.uuid), dcerpc.NDR64.major)

#: first referent id we hand out, and the step between two (what MIDL-generated stubs do)
_FIRST_REFERENT = 0x00020000
_REFERENT_STEP = 4

_FORMATS = {"u8": "<B", "i8": "<b", "u16": "<H", "i16": "<h", "u32": "<I", "i32": "<i",
            "u64": "<Q", "i64": "<q"}
_RANGES = {"u8": (0, 0xFF), "i8": (-0x80, 0x7F), "u16": (0, 0xFFFF), "i16": (-0x8000, 0x7FFF),
           "u32": (0, 0xFFFFFFFF), "i32": (-0x80000000, 0x7FFFFFFF),
           "u64": (0, 0xFFFFFFFFFFFFFFFF), "i64": (-(1 << 63), (1 << 63) - 1)}


class StubError(ValueError):
    """Stub data that the IDL cannot produce (or a value that cannot be encoded). ``field``
    names the parameter or member (``pQueueFormat.m_pDirectID``); the message is one line."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = " ".join(str(reason).split())
        super().__init__(f"{field}: {self.reason}")


def _is_int(v: object) -> bool:
    return isinstance(v, int)


class Encoder:
    """Writes one stub. ``pads`` records the (start, end) of every alignment gap and
    ``referents`` those of every non-NULL referent id, so that a test can compare with an
    encoder that fills gaps with other octets or numbers its pointers otherwise."""

    def __init__(self, ndr64: bool) -> None:
        self.ndr64 = ndr64
        self.buf = bytearray()
        self.pads: list[tuple[int, int]] = []
        self.referents: list[tuple[int, int]] = []
        self._next_referent = _FIRST_REFERENT

    # -------------------------------------------------------------- layout
    @property
    def ptr_size(self) -> int:
        """A pointer's referent id, a max_count, offset or actual_count: 4 or 8 octets
        (C706 14.3.3, 14.3.10; MS-RPCE 2.2.5.3.1)."""
        return 8 if self.ndr64 else 4

    def align(self, n: int) -> None:
        # C706 14.2.2: a value of n octets starts at a multiple of n from the stub's start
        gap = -len(self.buf) % n
        if gap:
            self.pads.append((len(self.buf), len(self.buf) + gap))
            self.buf += bytes(gap)

    def getvalue(self) -> bytes:
        return bytes(self.buf)

    # -------------------------------------------------------------- primitives
    def prim(self, kind: str, value: Any, field: str) -> None:
        lo, hi = _RANGES[kind]
        if not _is_int(value) or not lo <= value <= hi:
            raise StubError(field, f"{value!r} is not a {kind} ({lo}..{hi})")
        fmt = _FORMATS[kind]
        self.align(struct.calcsize(fmt))
        self.buf += struct.pack(fmt, value)

    def u8(self, v: Any, field: str) -> None:
        self.prim("u8", v, field)

    def u16(self, v: Any, field: str) -> None:
        self.prim("u16", v, field)

    def u32(self, v: Any, field: str) -> None:
        self.prim("u32", v, field)

    def u64(self, v: Any, field: str) -> None:
        self.prim("u64", v, field)

    def enum(self, v: Any, field: str) -> None:
        """An enumeration without [v1_enum]: 16 bits in NDR (C706 14.2.5, values 0..32767),
        32 bits in NDR64 (MS-RPCE 2.2.5.2)."""
        if self.ndr64:
            self.prim("u32", v, field)
        else:
            if not _is_int(v) or not 0 <= v <= 0x7FFF:
                raise StubError(field, f"{v!r} is not an NDR enum value (0..32767)")
            self.prim("u16", v, field)

    def count(self, n: int, field: str) -> None:
        """A max_count, offset or actual_count."""
        self.prim("u64" if self.ndr64 else "u32", n, field)

    def referent(self, present: bool) -> None:
        """A unique pointer: a nonzero referent id, or 0 for NULL (C706 14.3.10)."""
        rid = 0
        if present:
            rid, self._next_referent = self._next_referent, self._next_referent + _REFERENT_STEP
        self.count(rid, "referent")
        if present:
            self.referents.append((len(self.buf) - self.ptr_size, len(self.buf)))

    def raw(self, data: bytes) -> None:
        self.buf += data

    # -------------------------------------------------------------- constructed
    def conformant_array(self, items: list | tuple, field: str,
                         scalars: Callable[[Encoder, Any, str], None],
                         buffers: Callable[[Encoder, Any, str], None] | None = None) -> None:
        """max_count, the elements, then the referents their embedded pointers defer
        (C706 14.3.3, 14.3.12.3: an element's referents follow the whole array)."""
        self.count(len(items), f"{field}.max_count")
        for i, item in enumerate(items):
            scalars(self, item, f"{field}[{i}]")
        if buffers is not None:
            for i, item in enumerate(items):
                buffers(self, item, f"{field}[{i}]")

    def byte_array(self, data: Any, field: str) -> None:
        """A conformant array of octets: max_count, then the octets."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise StubError(field, f"{type(data).__name__} is not bytes")
        self.count(len(data), f"{field}.max_count")
        self.raw(bytes(data))

    def string(self, text: Any, field: str) -> None:
        """A [string] wchar_t array: max_count, offset 0, actual_count, the UTF-16 code units
        and the terminating NUL (C706 14.3.4)."""
        if not isinstance(text, str):
            raise StubError(field, f"{type(text).__name__} is not a str")
        if "\x00" in text:
            raise StubError(field, "a [string] cannot hold NUL before its terminator")
        units = text.encode("utf-16-le", "surrogatepass") + b"\x00\x00"
        n = len(units) // 2
        self.count(n, f"{field}.max_count")
        self.count(0, f"{field}.offset")
        self.count(n, f"{field}.actual_count")
        self.raw(units)


class Decoder:
    """Reads one stub, strictly: every read is bounds-checked and names its field."""

    def __init__(self, data: bytes, ndr64: bool) -> None:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise StubError("stub", f"{type(data).__name__} is not bytes")
        self.data = bytes(data)
        self.ndr64 = ndr64
        self.pos = 0
        self.nesting = 0  # how deep in nested PROPVARIANT vectors the reader is

    @property
    def ptr_size(self) -> int:
        return 8 if self.ndr64 else 4

    @property
    def remaining(self) -> int:
        return len(self.data) - self.pos

    def take(self, n: int, field: str) -> bytes:
        if n > self.remaining:
            raise StubError(field, f"stub ends at offset {len(self.data)}: {n} octets needed "
                                   f"at offset {self.pos}")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def align(self, n: int, field: str = "padding") -> None:
        # the gap's octets are not looked at: C706 leaves their value unspecified
        self.take(-self.pos % n, field)

    def prim(self, kind: str, field: str) -> int:
        fmt = _FORMATS[kind]
        size = struct.calcsize(fmt)
        self.align(size, field)
        return struct.unpack(fmt, self.take(size, field))[0]

    def u8(self, field: str) -> int:
        return self.prim("u8", field)

    def u16(self, field: str) -> int:
        return self.prim("u16", field)

    def u32(self, field: str) -> int:
        return self.prim("u32", field)

    def u64(self, field: str) -> int:
        return self.prim("u64", field)

    def enum(self, field: str) -> int:
        value = self.prim("u32" if self.ndr64 else "u16", field)
        if not self.ndr64 and value > 0x7FFF:
            raise StubError(field, f"{value:#x} is not an NDR enum value (0..32767; C706 14.2.5)")
        return value

    def count(self, field: str) -> int:
        return self.prim("u64" if self.ndr64 else "u32", field)

    def referent(self, field: str) -> bool:
        """True for a non-NULL unique pointer."""
        return self.count(field) != 0

    def check_room(self, n: int, elem_size: int, field: str) -> None:
        """Refuse an element count whose elements cannot fit in what remains (each element
        takes at least ``elem_size`` octets): this bounds every loop and allocation."""
        if n * elem_size > self.remaining:
            raise StubError(field, f"{n} elements of at least {elem_size} octets do not fit in "
                                   f"the {self.remaining} octets left")

    def conformant_array(self, field: str, min_size: int,
                         scalars: Callable[[Decoder, str], Any],
                         buffers: Callable[[Decoder, Any, str], Any] | None = None,
                         expected: int | None = None, expected_name: str = "") -> list:
        n = self.count(f"{field}.max_count")
        if expected is not None and n != expected:
            raise StubError(f"{field}.max_count",
                            f"{n} differs from {expected_name} = {expected} (size_is)")
        self.check_room(n, min_size, f"{field}.max_count")
        partial = [scalars(self, f"{field}[{i}]") for i in range(n)]
        if buffers is None:
            return partial
        return [buffers(self, p, f"{field}[{i}]") for i, p in enumerate(partial)]

    def byte_array(self, field: str, expected: int | None = None,
                   expected_name: str = "") -> bytes:
        n = self.count(f"{field}.max_count")
        if expected is not None and n != expected:
            raise StubError(f"{field}.max_count",
                            f"{n} differs from {expected_name} = {expected} (size_is)")
        return self.take(n, field)

    def string(self, field: str) -> str:
        """A [string] wchar_t array (C706 14.3.4), checked as a strict NDR consistency check
        would: offset 0, 1 <= actual_count <= max_count, the last unit the only NUL."""
        max_count = self.count(f"{field}.max_count")
        offset = self.count(f"{field}.offset")
        actual = self.count(f"{field}.actual_count")
        if offset != 0:
            raise StubError(f"{field}.offset", f"{offset} is not 0")
        if actual == 0:
            raise StubError(f"{field}.actual_count", "0: a [string] holds at least its "
                                                     "terminator")
        if actual > max_count:
            raise StubError(f"{field}.actual_count", f"{actual} exceeds max_count {max_count}")
        self.check_room(actual, 2, f"{field}.actual_count")
        units = self.take(2 * actual, field)
        if units[-2:] != b"\x00\x00":
            raise StubError(field, "the string does not end with its NUL terminator")
        text = units[:-2].decode("utf-16-le", "surrogatepass")
        if "\x00" in text:
            raise StubError(field, "the string holds a NUL before its last unit")
        return text

    def end(self, padding: int = 0) -> None:
        """Every octet read: none left but up to ``padding`` zero octets."""
        rest = self.data[self.pos:]
        if len(rest) <= padding and not rest.strip(b"\0"):
            return
        if self.remaining:
            raise StubError("stub", f"{self.remaining} octets after the last parameter "
                                    f"(offset {self.pos})")
