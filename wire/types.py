"""The IDL types of RemoteRead (MS-MQRR 6) and qmmgmt (MS-MQMR 6) in NDR and NDR64, converted to
and from the model's typed values: GUID (uuid.UUID), context handles (20 octets), XACTUOW (16
octets), QUEUE_FORMAT with OBJECTID, DL_ID and MULTICAST_ID (model.formats.QueueFormat ...),
MGMT_OBJECT (model.formats.MgmtObject), SectionBuffer and PROPVARIANT (model.calls).

Each type is an object with the two phases of NDR marshalling: ``enc_scalars`` /
``dec_scalars`` write or read the type's own octets (an embedded pointer is its referent id
only), ``enc_buffers`` / ``dec_buffers`` the referents of its embedded pointers, which C706
14.3.12.3 defers to the end of the outermost constructed type. ``enc`` / ``dec`` do both, for a
top-level parameter or the referent of a pointer. ``dec_scalars`` returns a partial value that
``dec_buffers`` completes.

Sources (facts only):

* MS-MQMQ 2.2.7 QUEUE_FORMAT (m_qft and m_SuffixAndFlags unsigned char, m_reserved unsigned
  short, a union switched on m_qft whose arms are GUID, OBJECTID, [string] wchar_t*, DL_ID and
  MULTICAST_ID), 2.2.8 OBJECTID (GUID Lineage, DWORD Uniquifier), 2.2.9 DL_ID (GUID m_DlGuid,
  [string] wchar_t* m_pwzDomain), 2.2.10 MULTICAST_ID (ULONG m_address, ULONG m_port),
  2.2.18.1.8 XACTUOW (BYTE rgb[16]); 2.2.12 / 2.2.13 PROPVARIANT (VARTYPE vt, UCHAR wReserved1,
  UCHAR wReserved2, ULONG wReserved3, a union switched on vt) and the VARTYPE constants.
* MS-MQMR 2.2.1.2 MGMT_OBJECT (MgmtObjectType type, a union switched on type: QUEUE_FORMAT*,
  DWORD, DWORD); MS-MQRR 2.2.6 SectionBuffer (SectionType enum, two DWORDs, [unique,
  size_is(SectionSize)] byte*); MS-MQRR 2.2.4 context handles (C706's ndr_context_handle: a
  DWORD of attributes and a UUID, 20 octets, aligned to 4).
* pointer_default(unique) in both IDLs (MS-MQRR 6, MS-MQMR 6): embedded pointers are unique.
* NDR unions (C706 14.3.8, MS-RPCE 2.2.4.8): the discriminant is sent again as the first part
  of the union; in NDR it is aligned to its own type and so is the arm (neither interface
  enables ms_union, MS-RPCE 2.2.4.5); in NDR64 both are aligned to the union's largest member
  (MS-RPCE 2.2.5.3.4.4). An unknown discriminant has no arm and is refused: none of these
  unions has a [default] arm.
"""

from __future__ import annotations

import uuid
from typing import Any

from mqconform.model.calls import PropVariant, SectionBuffer
from mqconform.model.formats import DlId, MgmtObject, MulticastId, ObjectId, QueueFormat
from mqconform.wire.ndr_engine import Decoder, Encoder, StubError

__all__ = [
    "GUID", "CONTEXT_HANDLE", "XACTUOW", "OBJECTID", "DL_ID", "MULTICAST_ID", "QUEUE_FORMAT",
    "MGMT_OBJECT", "SECTION_BUFFER", "PROPVARIANT", "ULONG", "VARTYPES",
    "MAX_PROPVARIANT_DEPTH",
]


class _Type:
    """An IDL type. ``align`` is its alignment in NDR and NDR64; ``min_size`` a lower bound of
    its size, used to refuse element counts that cannot fit."""

    ALIGN = (1, 1)
    min_size = 1

    def align(self, ndr64: bool) -> int:
        return self.ALIGN[ndr64]

    def enc_scalars(self, e: Encoder, v: Any, field: str) -> None:
        raise NotImplementedError

    def enc_buffers(self, e: Encoder, v: Any, field: str) -> None:
        pass

    def dec_scalars(self, d: Decoder, field: str) -> Any:
        raise NotImplementedError

    def dec_buffers(self, d: Decoder, partial: Any, field: str) -> Any:
        return partial

    def enc(self, e: Encoder, v: Any, field: str) -> None:
        self.enc_scalars(e, v, field)
        self.enc_buffers(e, v, field)

    def dec(self, d: Decoder, field: str) -> Any:
        return self.dec_buffers(d, self.dec_scalars(d, field), field)


def _trailing_gap(e_or_d: Encoder | Decoder, align: int, field: str) -> None:
    """MS-RPCE 2.2.5.3.4.1: in NDR64 a structure ends at a multiple of its alignment."""
    if e_or_d.ndr64:
        if isinstance(e_or_d, Encoder):
            e_or_d.align(align)
        else:
            e_or_d.align(align, field)


# ============================================================================ fixed-size types


class _Guid(_Type):
    """GUID (MS-DTYP 2.3.4.1): Data1 (4), Data2 (2), Data3 (2), Data4 (8), aligned to 4 —
    exactly the octets of ``uuid.UUID.bytes_le``."""

    ALIGN = (4, 4)
    min_size = 16

    def enc_scalars(self, e: Encoder, v: Any, field: str) -> None:
        if not isinstance(v, uuid.UUID):
            raise StubError(field, f"{type(v).__name__} is not a uuid.UUID")
        e.align(4)
        e.raw(v.bytes_le)

    def dec_scalars(self, d: Decoder, field: str) -> uuid.UUID:
        d.align(4, field)
        return uuid.UUID(bytes_le=d.take(16, field))


class _ContextHandle(_Type):
    """An NDR context handle (C706 ndr_context_handle): attributes DWORD and a UUID, 20 octets
    aligned to 4.
    The all-zero handle is the NULL context handle: ``None`` in the model."""

    ALIGN = (4, 4)
    min_size = 20

    def enc_scalars(self, e: Encoder, v: Any, field: str) -> None:
        if v is None:
            v = bytes(20)
        if not isinstance(v, (bytes, bytearray)) or len(v) != 20:
            raise StubError(field, "a context handle is 20 octets (or None for NULL)")
        e.align(4)
        e.raw(bytes(v))

    def dec_scalars(self, d: Decoder, field: str) -> bytes | None:
        d.align(4, field)
        raw = d.take(20, field)
        return None if raw == bytes(20) else raw


class _Xactuow(_Type):
    """XACTUOW (MS-MQMQ 2.2.18.1.8): BYTE rgb[16], alignment 1."""

    ALIGN = (1, 1)
    min_size = 16

    def enc_scalars(self, e: Encoder, v: Any, field: str) -> None:
        if not isinstance(v, (bytes, bytearray)) or len(v) != 16:
            raise StubError(field, "an XACTUOW is 16 octets")
        e.raw(bytes(v))

    def dec_scalars(self, d: Decoder, field: str) -> bytes:
        return d.take(16, field)


class _ObjectId(_Type):
    """OBJECTID (MS-MQMQ 2.2.8): GUID Lineage, DWORD Uniquifier."""

    ALIGN = (4, 4)
    min_size = 20

    def enc_scalars(self, e: Encoder, v: Any, field: str) -> None:
        if not isinstance(v, ObjectId):
            raise StubError(field, f"{type(v).__name__} is not an ObjectId")
        GUID.enc_scalars(e, v.Lineage, f"{field}.Lineage")
        e.u32(v.Uniquifier, f"{field}.Uniquifier")

    def dec_scalars(self, d: Decoder, field: str) -> ObjectId:
        lineage = GUID.dec_scalars(d, f"{field}.Lineage")
        return ObjectId(lineage, d.u32(f"{field}.Uniquifier"))


class _MulticastId(_Type):
    """MULTICAST_ID (MS-MQMQ 2.2.10): ULONG m_address, ULONG m_port."""

    ALIGN = (4, 4)
    min_size = 8

    def enc_scalars(self, e: Encoder, v: Any, field: str) -> None:
        if not isinstance(v, MulticastId):
            raise StubError(field, f"{type(v).__name__} is not a MulticastId")
        e.u32(v.m_address, f"{field}.m_address")
        e.u32(v.m_port, f"{field}.m_port")

    def dec_scalars(self, d: Decoder, field: str) -> MulticastId:
        address = d.u32(f"{field}.m_address")
        return MulticastId(address, d.u32(f"{field}.m_port"))


# ============================================================================ pointers


class _Unique:
    """A unique pointer embedded in a constructed type: the referent id among the scalars,
    the referent among the buffers. ``None`` is NULL."""

    def __init__(self, target: _Type | str) -> None:
        self.target = target  # a type, or "string" for [string] wchar_t*

    def enc_scalars(self, e: Encoder, v: Any, field: str) -> None:
        e.referent(v is not None)

    def enc_buffers(self, e: Encoder, v: Any, field: str) -> None:
        if v is None:
            return
        if self.target == "string":
            e.string(v, field)
        else:
            self.target.enc(e, v, field)

    def dec_scalars(self, d: Decoder, field: str) -> bool:
        return d.referent(field)

    def dec_buffers(self, d: Decoder, present: bool, field: str) -> Any:
        if not present:
            return None
        if self.target == "string":
            return d.string(field)
        return self.target.dec(d, field)


_STRING_PTR = _Unique("string")


# ============================================================================ QUEUE_FORMAT


class _DlId(_Type):
    """DL_ID (MS-MQMQ 2.2.9): GUID m_DlGuid, [unique, string] wchar_t* m_pwzDomain."""

    ALIGN = (4, 8)
    min_size = 20

    def enc_scalars(self, e: Encoder, v: Any, field: str) -> None:
        if not isinstance(v, DlId):
            raise StubError(field, f"{type(v).__name__} is not a DlId")
        e.align(self.align(e.ndr64))
        GUID.enc_scalars(e, v.m_DlGuid, f"{field}.m_DlGuid")
        _STRING_PTR.enc_scalars(e, v.m_pwzDomain, f"{field}.m_pwzDomain")
        _trailing_gap(e, 8, field)

    def enc_buffers(self, e: Encoder, v: DlId, field: str) -> None:
        _STRING_PTR.enc_buffers(e, v.m_pwzDomain, f"{field}.m_pwzDomain")

    def dec_scalars(self, d: Decoder, field: str) -> tuple:
        d.align(self.align(d.ndr64), field)
        guid = GUID.dec_scalars(d, f"{field}.m_DlGuid")
        present = _STRING_PTR.dec_scalars(d, f"{field}.m_pwzDomain")
        _trailing_gap(d, 8, field)
        return guid, present

    def dec_buffers(self, d: Decoder, partial: tuple, field: str) -> DlId:
        guid, present = partial
        return DlId(guid, _STRING_PTR.dec_buffers(d, present, f"{field}.m_pwzDomain"))


GUID = _Guid()
CONTEXT_HANDLE = _ContextHandle()
XACTUOW = _Xactuow()
OBJECTID = _ObjectId()
MULTICAST_ID = _MulticastId()
DL_ID = _DlId()


def _union_align(e_or_d: Encoder | Decoder, align: int, field: str) -> None:
    """MS-RPCE 2.2.5.3.4.4: an NDR64 union is aligned to its largest member, before the
    discriminant and before the arm. NDR aligns each to its own type (MS-RPCE 2.2.4.5: no
    ms_union here)."""
    _trailing_gap(e_or_d, align, field)


#: MS-MQMQ 2.2.7: the arm each m_qft selects (None: the empty arm of QUEUE_FORMAT_TYPE_UNKNOWN)
_QF_ARMS: dict[int, Any] = {
    0: None,  # QUEUE_FORMAT_TYPE_UNKNOWN
    1: GUID,  # PUBLIC: m_gPublicID
    2: OBJECTID,  # PRIVATE: m_oPrivateID
    3: _STRING_PTR,  # DIRECT: [string] wchar_t* m_pDirectID
    4: GUID,  # MACHINE: m_gMachineID
    5: GUID,  # CONNECTOR: m_GConnectorID
    6: DL_ID,  # DL: m_DlID
    7: MULTICAST_ID,  # MULTICAST: m_MulticastID
    8: _STRING_PTR,  # SUBQUEUE: [string] wchar_t* m_pDirectSubqueueID
}


class _QueueFormat(_Type):
    """QUEUE_FORMAT (MS-MQMQ 2.2.7). Its alignment is the union's: 4 in NDR (GUID, OBJECTID,
    pointers, DL_ID and MULTICAST_ID all align to 4), 8 in NDR64 (pointers)."""

    ALIGN = (4, 8)
    min_size = 5

    def enc_scalars(self, e: Encoder, v: Any, field: str) -> None:
        if not isinstance(v, QueueFormat):
            raise StubError(field, f"{type(v).__name__} is not a QueueFormat")
        e.align(self.align(e.ndr64))
        e.u8(v.m_qft, f"{field}.m_qft")
        e.u8(v.m_SuffixAndFlags, f"{field}.m_SuffixAndFlags")
        e.u16(v.m_reserved, f"{field}.m_reserved")
        if v.m_qft not in _QF_ARMS:
            raise StubError(f"{field}.m_qft", f"{v.m_qft} selects no arm of the QUEUE_FORMAT "
                                              f"union (MS-MQMQ 2.2.7)")
        _union_align(e, 8, field)
        e.u8(v.m_qft, f"{field}.m_qft")  # the discriminant, again (C706 14.3.8)
        _union_align(e, 8, field)
        arm = _QF_ARMS[v.m_qft]
        if arm is None:
            if v.value is not None:
                raise StubError(f"{field}.value", "QUEUE_FORMAT_TYPE_UNKNOWN has no value")
        elif arm is _STRING_PTR:
            if v.value is not None and not isinstance(v.value, str):
                raise StubError(f"{field}.value", f"{type(v.value).__name__} is not a str")
            arm.enc_scalars(e, v.value, f"{field}.value")
        else:
            arm.enc_scalars(e, v.value, f"{field}.value")
        _trailing_gap(e, 8, field)

    def enc_buffers(self, e: Encoder, v: QueueFormat, field: str) -> None:
        arm = _QF_ARMS[v.m_qft]
        if arm is not None:
            arm.enc_buffers(e, v.value, f"{field}.value")

    def dec_scalars(self, d: Decoder, field: str) -> tuple:
        d.align(self.align(d.ndr64), field)
        qft = d.u8(f"{field}.m_qft")
        saf = d.u8(f"{field}.m_SuffixAndFlags")
        reserved = d.u16(f"{field}.m_reserved")
        _union_align(d, 8, field)
        tag = d.u8(f"{field}.m_qft")
        if tag != qft:
            raise StubError(f"{field}.m_qft", f"union discriminant {tag} differs from m_qft "
                                              f"{qft}")
        if qft not in _QF_ARMS:
            raise StubError(f"{field}.m_qft", f"{qft} selects no arm of the QUEUE_FORMAT "
                                              f"union (MS-MQMQ 2.2.7)")
        _union_align(d, 8, field)
        arm = _QF_ARMS[qft]
        partial = None if arm is None else arm.dec_scalars(d, f"{field}.value")
        _trailing_gap(d, 8, field)
        return qft, saf, reserved, partial

    def dec_buffers(self, d: Decoder, partial: tuple, field: str) -> QueueFormat:
        qft, saf, reserved, value = partial
        arm = _QF_ARMS[qft]
        if arm is not None:
            value = arm.dec_buffers(d, value, f"{field}.value")
        return QueueFormat(qft, saf, reserved, value)


QUEUE_FORMAT = _QueueFormat()
_QUEUE_FORMAT_PTR = _Unique(QUEUE_FORMAT)


# ============================================================================ MGMT_OBJECT


class _MgmtObject(_Type):
    """MGMT_OBJECT (MS-MQMR 2.2.1.2): the MgmtObjectType enum, then the union switched on it
    (MGMT_QUEUE: a unique QUEUE_FORMAT*, MGMT_MACHINE: DWORD Reserved1, MGMT_SESSION: DWORD
    Reserved2). NDR: enum (2) + discriminant (2) + arm (4) = 8 octets, aligned to 4."""

    ALIGN = (4, 8)
    min_size = 8

    def enc_scalars(self, e: Encoder, v: Any, field: str) -> None:
        if not isinstance(v, MgmtObject):
            raise StubError(field, f"{type(v).__name__} is not a MgmtObject")
        e.align(self.align(e.ndr64))
        e.enum(v.type, f"{field}.type")
        if v.type not in (1, 2, 3):  # MS-MQMR/2.2.1.2/R1
            raise StubError(f"{field}.type", f"{v.type} selects no arm of the MGMT_OBJECT "
                                             f"union (MS-MQMR 2.2.1.2)")
        _union_align(e, 8, field)
        e.enum(v.type, f"{field}.type")  # the discriminant, again
        _union_align(e, 8, field)
        if v.type == 2:
            _QUEUE_FORMAT_PTR.enc_scalars(e, v.pQueueFormat, f"{field}.pQueueFormat")
        elif v.type == 1:
            e.u32(v.Reserved1, f"{field}.Reserved1")
        else:
            e.u32(v.Reserved2, f"{field}.Reserved2")
        _trailing_gap(e, 8, field)

    def enc_buffers(self, e: Encoder, v: MgmtObject, field: str) -> None:
        if v.type == 2:
            _QUEUE_FORMAT_PTR.enc_buffers(e, v.pQueueFormat, f"{field}.pQueueFormat")

    def dec_scalars(self, d: Decoder, field: str) -> tuple:
        d.align(self.align(d.ndr64), field)
        kind = d.enum(f"{field}.type")
        _union_align(d, 8, field)
        tag = d.enum(f"{field}.type")
        if tag != kind:
            raise StubError(f"{field}.type", f"union discriminant {tag} differs from type "
                                             f"{kind}")
        if kind not in (1, 2, 3):  # MS-MQMR/2.2.1.2/R1
            raise StubError(f"{field}.type", f"{kind} selects no arm of the MGMT_OBJECT union "
                                             f"(MS-MQMR 2.2.1.2)")
        _union_align(d, 8, field)
        if kind == 2:
            arm = _QUEUE_FORMAT_PTR.dec_scalars(d, f"{field}.pQueueFormat")
        else:
            arm = d.u32(f"{field}.Reserved{1 if kind == 1 else 2}")
        _trailing_gap(d, 8, field)
        return kind, arm

    def dec_buffers(self, d: Decoder, partial: tuple, field: str) -> MgmtObject:
        kind, arm = partial
        if kind == 2:
            return MgmtObject(2, pQueueFormat=_QUEUE_FORMAT_PTR.dec_buffers(
                d, arm, f"{field}.pQueueFormat"))
        if kind == 1:
            return MgmtObject(1, Reserved1=arm)
        return MgmtObject(3, Reserved2=arm)


MGMT_OBJECT = _MgmtObject()


# ============================================================================ SectionBuffer


class _SectionBuffer(_Type):
    """SectionBuffer (MS-MQRR 2.2.6): SectionType (an enum: 2 octets in NDR, 4 in NDR64),
    SectionSizeAlloc, SectionSize, [unique, size_is(SectionSize)] byte* pSectionBuffer.
    NDR: 16 octets aligned to 4; NDR64: 24 octets aligned to 8."""

    ALIGN = (4, 8)
    min_size = 16

    def enc_scalars(self, e: Encoder, v: Any, field: str) -> None:
        if not isinstance(v, SectionBuffer):
            raise StubError(field, f"{type(v).__name__} is not a SectionBuffer")
        e.align(self.align(e.ndr64))
        e.enum(v.SectionBufferType, f"{field}.SectionBufferType")
        e.u32(v.SectionSizeAlloc, f"{field}.SectionSizeAlloc")
        e.u32(v.SectionSize, f"{field}.SectionSize")
        if v.pSectionBuffer is not None and not isinstance(v.pSectionBuffer,
                                                           (bytes, bytearray)):
            raise StubError(f"{field}.pSectionBuffer",
                            f"{type(v.pSectionBuffer).__name__} is not bytes")
        e.referent(v.pSectionBuffer is not None)
        _trailing_gap(e, 8, field)

    def enc_buffers(self, e: Encoder, v: SectionBuffer, field: str) -> None:
        if v.pSectionBuffer is not None:
            e.byte_array(v.pSectionBuffer, f"{field}.pSectionBuffer")

    def dec_scalars(self, d: Decoder, field: str) -> tuple:
        d.align(self.align(d.ndr64), field)
        kind = d.enum(f"{field}.SectionBufferType")
        alloc = d.u32(f"{field}.SectionSizeAlloc")
        size = d.u32(f"{field}.SectionSize")
        present = d.referent(f"{field}.pSectionBuffer")
        _trailing_gap(d, 8, field)
        if not present and size:  # MS-MQRR/3.1.4/R2
            raise StubError(f"{field}.pSectionBuffer", f"NULL with SectionSize {size}: a NULL "
                                                       f"pointer with a nonzero size_is")
        return kind, alloc, size, present

    def dec_buffers(self, d: Decoder, partial: tuple, field: str) -> SectionBuffer:
        kind, alloc, size, present = partial
        data = None
        if present:
            data = d.byte_array(f"{field}.pSectionBuffer", size, "SectionSize")
        return SectionBuffer(kind, alloc, size, data)


SECTION_BUFFER = _SectionBuffer()


# ============================================================================ PROPVARIANT

#: MS-MQMQ 2.2.12 VARTYPE values
VT_EMPTY, VT_NULL, VT_I2, VT_I4, VT_BOOL, VT_VARIANT = 0x00, 0x01, 0x02, 0x03, 0x0B, 0x0C
VT_I1, VT_UI1, VT_UI2, VT_UI4, VT_I8, VT_UI8 = 0x10, 0x11, 0x12, 0x13, 0x14, 0x15
VT_LPWSTR, VT_BLOB, VT_CLSID, VT_VECTOR = 0x1F, 0x41, 0x48, 0x1000

#: nesting of VT_VECTOR | VT_VARIANT allowed when decoding (MSMQ nests one level; a hostile
#: stub could nest until Python's stack gives out)
MAX_PROPVARIANT_DEPTH = 8


class _Prim(_Type):
    """A primitive arm or vector element."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.min_size = {"i8": 1, "u8": 1, "i16": 2, "u16": 2}.get(kind, 4 if "32" in kind
                                                                   else 8)
        self.ALIGN = (self.min_size, self.min_size)

    def enc_scalars(self, e: Encoder, v: Any, field: str) -> None:
        e.prim(self.kind, v, field)

    def dec_scalars(self, d: Decoder, field: str) -> int:
        return d.prim(self.kind, field)


ULONG = _Prim("u32")


class _Counted(_Type):
    """A counted array struct: ULONG count, [unique, size_is(count)] T* elements — BLOB
    (MS-MQMQ 2.2.13) and the CA* vectors (CAUB, CAUI, CAL, CAUL, CAUH, CACLSID, CALPWSTR,
    CAPROPVARIANT). Values are bytes (BLOB) or lists. Choice 1: an empty value (or None) is sent
    as a NULL pointer with count 0, and a NULL pointer (or an empty array) decodes as empty."""

    ALIGN = (4, 8)
    min_size = 8

    def __init__(self, name: str, elem: Any, count_name: str) -> None:
        self.name, self.elem, self.count_name = name, elem, count_name

    def _elem_buffers(self) -> Any:
        return getattr(self.elem, "enc_buffers", None)

    def enc_scalars(self, e: Encoder, v: Any, field: str) -> None:
        if self.elem is None:
            if v is not None and not isinstance(v, (bytes, bytearray)):
                raise StubError(field, f"{type(v).__name__} is not bytes (a BLOB)")
        elif v is not None and not isinstance(v, (list, tuple)) and not (
                self.name == "CAUB" and isinstance(v, (bytes, bytearray))):
            raise StubError(field, f"{type(v).__name__} is not a list ({self.name})")
        e.align(self.align(e.ndr64))
        e.u32(len(v) if v else 0, f"{field}.{self.count_name}")
        e.referent(bool(v))
        _trailing_gap(e, 8, field)

    def enc_buffers(self, e: Encoder, v: Any, field: str) -> None:
        if not v:
            return
        if self.elem is None:
            e.byte_array(v, field)
        else:  # CALPWSTR's elements are pointers: their strings follow the array
            e.conformant_array(v, field, self.elem.enc_scalars, self.elem.enc_buffers)

    def dec_scalars(self, d: Decoder, field: str) -> tuple:
        d.align(self.align(d.ndr64), field)
        count = d.u32(f"{field}.{self.count_name}")
        present = d.referent(field)
        _trailing_gap(d, 8, field)
        if not present and count:  # MS-MQMR/3.1.4/R2
            raise StubError(field, f"NULL with {self.count_name} {count}: a NULL pointer with "
                                   f"a nonzero size_is")
        return count, present

    def dec_buffers(self, d: Decoder, partial: tuple, field: str) -> Any:
        count, present = partial
        if not present:
            return b"" if self.elem is None else []
        if self.elem is None:
            return d.byte_array(field, count, self.count_name)
        min_size = d.ptr_size if isinstance(self.elem, _Unique) else self.elem.min_size
        return d.conformant_array(field, min_size, self.elem.dec_scalars, self.elem.dec_buffers,
                                  count, self.count_name)


class _PropVariant(_Type):
    """PROPVARIANT (MS-MQMQ 2.2.13): vt, wReserved1, wReserved2, wReserved3, then the union
    switched on vt. Aligned to 8 in NDR as in NDR64 (the VT_I8 / VT_UI8 arms are hypers), so
    each element of an array of PROPVARIANTs starts at a multiple of 8."""

    ALIGN = (8, 8)
    min_size = 10

    def enc_scalars(self, e: Encoder, v: Any, field: str) -> None:
        if not isinstance(v, PropVariant):
            raise StubError(field, f"{type(v).__name__} is not a PropVariant")
        if not isinstance(v.vt, int) or v.vt not in _VT_ARMS:
            raise StubError(f"{field}.vt", f"{v.vt!r} is not a VARTYPE of the PROPVARIANT "
                                           f"union (MS-MQMQ 2.2.13)")
        arm = _VT_ARMS[v.vt]
        e.align(8)
        e.u16(v.vt, f"{field}.vt")
        e.u8(0, f"{field}.wReserved1")
        e.u8(0, f"{field}.wReserved2")
        e.u32(0, f"{field}.wReserved3")
        _union_align(e, 8, field)
        e.u16(v.vt, f"{field}.vt")  # the discriminant, again
        _union_align(e, 8, field)
        if arm is None:
            if v.value is not None:
                raise StubError(f"{field}.value", f"VARTYPE {v.vt:#x} carries no value")
        else:
            arm.enc_scalars(e, v.value, f"{field}.value")
        _trailing_gap(e, 8, field)

    def enc_buffers(self, e: Encoder, v: PropVariant, field: str) -> None:
        arm = _VT_ARMS[v.vt]
        if arm is not None:
            arm.enc_buffers(e, v.value, f"{field}.value")

    def dec_scalars(self, d: Decoder, field: str) -> tuple:
        d.align(8, field)
        vt = d.u16(f"{field}.vt")
        d.u8(f"{field}.wReserved1")
        d.u8(f"{field}.wReserved2")
        d.u32(f"{field}.wReserved3")
        _union_align(d, 8, field)
        tag = d.u16(f"{field}.vt")
        if tag != vt:
            raise StubError(f"{field}.vt", f"union discriminant {tag:#x} differs from vt "
                                           f"{vt:#x}")
        if vt not in _VT_ARMS:
            raise StubError(f"{field}.vt", f"{vt:#x} is not a VARTYPE of the PROPVARIANT union "
                                           f"(MS-MQMQ 2.2.13)")
        _union_align(d, 8, field)
        arm = _VT_ARMS[vt]
        partial = None if arm is None else arm.dec_scalars(d, f"{field}.value")
        _trailing_gap(d, 8, field)
        return vt, partial

    def dec_buffers(self, d: Decoder, partial: tuple, field: str) -> PropVariant:
        vt, value = partial
        arm = _VT_ARMS[vt]
        if arm is not None:
            if vt == VT_VECTOR | VT_VARIANT:
                if d.nesting >= MAX_PROPVARIANT_DEPTH:
                    raise StubError(field, f"PROPVARIANT vectors nested deeper than "
                                           f"{MAX_PROPVARIANT_DEPTH}")
                d.nesting += 1
                try:
                    value = arm.dec_buffers(d, value, f"{field}.value")
                finally:
                    d.nesting -= 1
            else:
                value = arm.dec_buffers(d, value, f"{field}.value")
        return PropVariant(vt, value)


PROPVARIANT = _PropVariant()


class _LargeInteger(_Prim):
    """LARGE_INTEGER / ULARGE_INTEGER: a struct of one hyper, aligned to 8."""


#: MS-MQMQ 2.2.13: the arm of each VARTYPE (None: no value), as scapy-rpc's ms_mqmr lists them
_VT_ARMS: dict[int, Any] = {
    VT_EMPTY: None,
    VT_NULL: None,
    VT_I1: _Prim("i8"),
    VT_UI1: _Prim("u8"),
    VT_I2: _Prim("i16"),
    VT_UI2: _Prim("u16"),
    VT_I4: _Prim("i32"),
    VT_UI4: _Prim("u32"),
    VT_I8: _LargeInteger("i64"),
    VT_UI8: _LargeInteger("u64"),
    VT_BOOL: _Prim("i16"),  # VARIANT_BOOL
    VT_CLSID: _Unique(GUID),  # GUID* puuid
    VT_BLOB: _Counted("BLOB", None, "cbSize"),
    VT_LPWSTR: _STRING_PTR,  # [string] wchar_t* pwszVal
    VT_VECTOR | VT_UI1: _Counted("CAUB", _Prim("u8"), "cElems"),
    VT_VECTOR | VT_UI2: _Counted("CAUI", _Prim("u16"), "cElems"),
    VT_VECTOR | VT_I4: _Counted("CAL", _Prim("i32"), "cElems"),
    VT_VECTOR | VT_UI4: _Counted("CAUL", _Prim("u32"), "cElems"),
    VT_VECTOR | VT_UI8: _Counted("CAUH", _LargeInteger("u64"), "cElems"),
    VT_VECTOR | VT_CLSID: _Counted("CACLSID", GUID, "cElems"),
    VT_VECTOR | VT_LPWSTR: _Counted("CALPWSTR", _STRING_PTR, "cElems"),
    VT_VECTOR | VT_VARIANT: _Counted("CAPROPVARIANT", PROPVARIANT, "cElems"),
}

#: the VARTYPEs a PROPVARIANT can carry on the wire, by name
VARTYPES: dict[int, str] = {
    VT_EMPTY: "VT_EMPTY", VT_NULL: "VT_NULL", VT_I1: "VT_I1", VT_UI1: "VT_UI1", VT_I2: "VT_I2",
    VT_UI2: "VT_UI2", VT_I4: "VT_I4", VT_UI4: "VT_UI4", VT_I8: "VT_I8", VT_UI8: "VT_UI8",
    VT_BOOL: "VT_BOOL", VT_CLSID: "VT_CLSID", VT_BLOB: "VT_BLOB", VT_LPWSTR: "VT_LPWSTR",
    VT_VECTOR | VT_UI1: "VT_VECTOR|VT_UI1", VT_VECTOR | VT_UI2: "VT_VECTOR|VT_UI2",
    VT_VECTOR | VT_I4: "VT_VECTOR|VT_I4", VT_VECTOR | VT_UI4: "VT_VECTOR|VT_UI4",
    VT_VECTOR | VT_UI8: "VT_VECTOR|VT_UI8", VT_VECTOR | VT_CLSID: "VT_VECTOR|VT_CLSID",
    VT_VECTOR | VT_LPWSTR: "VT_VECTOR|VT_LPWSTR", VT_VECTOR | VT_VARIANT: "VT_VECTOR|VT_VARIANT",
}
