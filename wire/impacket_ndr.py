"""RemoteRead (MS-MQRR 6) and qmmgmt (MS-MQMR 6) in impacket's NDR engine: a second NDR
implementation, written from the IDL, independent of the scapy-based codec (wire/ndr.py), so
that the two can be compared byte for byte.

The module has three parts: a few base classes that adapt impacket's NDR machinery to the
rules below; one impacket class per IDL type and one request/response pair per opnum (named
as in the IDL); and the conversion between the typed calls/results of model.calls and these
structures (``encode_request``, ``decode_request``, ``encode_response``, ``decode_response``).

Sources (facts only, restated; the section is cited where the fact is used):

* MS-MQRR 6 (RemoteRead IDL), MS-MQMR 6 (qmmgmt IDL), both in spec/documents.
* MS-MQMQ 2.2.6-2.2.10 (QUEUE_FORMAT and its arms; also model/formats.py), 2.2.12 (VARTYPE
  values), 2.2.13-2.2.16 (PROPVARIANT, VARIANT_BOOL, BLOB, the CA* counted arrays).
* C706 chapter 14 (NDR): 14.2.2 alignment of primitives; 14.3.3 and 14.3.4 conformant
  arrays and strings (maximum count, then offset and actual count for a string); 14.3.7.1
  structures holding a conformant array (the count moves to the front); 14.3.8 unions; the
  pointer sections 14.3.10-14.3.12 (a top-level pointer parameter without attribute is [ref]:
  its referent in place, no referent ID; embedded pointers are deferred until after the
  top-level parameter that contains them, 14.3.12.3). Microsoft's NDR engine, read for the
  facts of the two union rules and of the empty array (no alignment gap after a count of 0).
* MS-RPCE 2.2.4.5 (ms_union: not enabled by either document) and Microsoft's description of
  union format strings ("RPC unions", learn.microsoft.com/windows/win32/rpc/unions-tfs): for
  a DCE union the arm alignment nibble is zero, so NDR marshals the discriminant at its own
  alignment and the selected arm at the arm's own alignment; the union aligns the enclosing
  structure to the largest of the discriminant and all arms.
* MS-RPCE 2.2.5 (NDR64): enumerations are 4 octets, pointers and conformance/variance counts
  8 octets, a structure's size is a multiple of its alignment (trailing pad), a union is
  aligned to the largest alignment of its discriminant and arms before the discriminant and
  its arm to that alignment after it.

Layouts (NDR / NDR64), derived by hand from those rules and tested byte for byte:

=====================  =======  =======  ==================================================
type                   NDR      NDR64    notes
=====================  =======  =======  ==================================================
GUID                   16 @4    16 @4    MS-DTYP 2.3.4.2: Data1 LE, Data2 LE, Data3 LE, 8 oct.
XACTUOW                16 @1    16 @1    byte rgb[16]
context handle         20 @4    20 @4    attributes DWORD + UUID, opaque here
QUEUE_FORMAT           @4       @8       qft, flags, reserved, then union(uchar discriminant)
MGMT_OBJECT            8 @4     (none)   enum16 type, enum16 discriminant, arm @4
PROPVARIANT            @8       (none)   vt, 2 x uchar, ulong, union(ushort discriminant)
SectionBuffer          16 @4    24 @8    enum, DWORD, DWORD, unique pointer
=====================  =======  =======  ==================================================

Where impacket cannot express the IDL, and what we did (each marked "impacket:" at its code):

1. Alignment gaps: impacket fills them with marker octets (0xbf, 0xaa, ...). NDR leaves their
   value unspecified (C706 14.2.2); so that what we send is what Microsoft's stubs send
   (zeros) and encodings compare byte for byte, the fill octets impacket wrote where wire/ndr.py
   leaves an alignment gap are zeroed in impacket's output (``_zero_fill``). impacket itself
   is not changed, so other users of it in the same process see it as it is.
2. Referent IDs: impacket draws random ones. Ours are 0x00020000, 0x00020004, ... in wire
   order (as Microsoft's stubs number them), reset for every encoding.
3. Unions: impacket always pads to 4 (NDR) or 8 (NDR64) after the discriminant and aligns a
   union only by its discriminant, which is wrong for PROPVARIANT (a VT_I2 arm follows its
   discriminant at offset 10) and for a structure holding QUEUE_FORMAT. ``NdrUnion`` marshals
   by the rules above, with empty arms (QUEUE_FORMAT_TYPE_UNKNOWN, VT_NULL) and with unknown
   discriminants encoded as an empty arm (so malformed requests can be sent).
4. Structures: alignment is declared per type (impacket computes it from field sizes, taking
   16 for a '16s' GUID); NDR64 trailing padding, which impacket leaves out, is added.
5. Byte arrays (section buffers up to megabytes): marshalled as one block instead of one
   impacket item per octet; their conformance is checked against the data available.
6. NDR64: impacket has the 8-octet pointers and counts; with 3. and 4. it covers
   QUEUE_FORMAT and SectionBuffer, the only constructed types RemoteRead sends in NDR64.
   qmmgmt is NDR only (MS-MQMR 2.2), so MGMT_OBJECT and PROPVARIANT have no NDR64 form here:
   encoding a qmmgmt call in NDR64 is an ``EncodeError``.
7. Decoding: impacket stops silently at the end of the data (short strings and arrays) and
   raises whatever its struct calls raise; every decode here checks counts and lengths, takes
   at most ``MAX_ELEMENTS`` array elements per stub (impacket builds some 2.4 KB of objects
   per element) and turns any failure, deep nesting included, into ``DecodeError`` naming
   the parameter.

Choices where the IDL leaves room (marked "choice N" at their code):

1. A NULL context handle is 20 zero octets and decodes as None.
2. A None GUID for the [ref] pClientId is the nil GUID.
3. An empty BLOB, vector, section list or ``ppPacketSections`` is sent as a NULL pointer (and a
   NULL pointer decodes as empty).
4. ``[string]`` values are UTF-16LE with lone surrogates passed through, a NUL terminator is
   added on encoding and required on decoding, and a NUL inside the string is refused both
   ways (a [string] ends at its first NUL).
"""

from __future__ import annotations

import contextvars
import dataclasses
import logging
import struct
import uuid
from collections.abc import Callable
from typing import Any

from impacket.dcerpc.v5.ndr import (
    NDR,
    NDRCALL,
    NDRENUM,
    NDRHYPER,
    NDRLONG,
    NDRPOINTER,
    NDRSHORT,
    NDRSMALL,
    NDRSTRUCT,
    NDRUHYPER,
    NDRULONG,
    NDRUNION,
    NDRUSHORT,
    NDRUSMALL,
    NDRUniConformantArray,
)

from mqconform.model import calls as c
from mqconform.model.formats import (
    UNION_ARMS,
    DlId,
    MgmtObject,
    MgmtObjectType,
    MulticastId,
    ObjectId,
    QueueFormat,
    QueueFormatType,
)
from mqconform.wire import dcerpc, ndr

__all__ = [
    "EncodeError", "DecodeError", "NDR_SYNTAX", "NDR64_SYNTAX", "encode_request",
    "decode_request", "encode_response", "decode_response", "REQUESTS", "RESPONSES",
    "referent_offsets",
]

# impacket logs every exception of its NDR engine at ERROR level before re-raising it; the
# decoders below turn those exceptions into DecodeError, so the log lines are noise
logging.getLogger("impacket").addHandler(logging.NullHandler())

#: transfer syntaxes (C706 14; MS-RPCE 2.2.5), as impacket's bind() takes them
NDR_SYNTAX = (str(dcerpc.NDR.uuid), f"{dcerpc.NDR.major}.{dcerpc.NDR.minor}")
NDR64_SYNTAX = (str(dcerpc.NDR64.uuid), f"{dcerpc.NDR64.major}.{dcerpc.NDR64.minor}")


class EncodeError(ValueError):
    """A typed call or result that cannot be put on the wire; ``field`` names the parameter
    (dotted path into it), the message says why."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class DecodeError(ValueError):
    """Stub data that is not a valid encoding of the expected call or result; ``field``
    names the parameter where decoding failed."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


# =============================================================================== impacket fixes

#: the octets impacket.dcerpc.v5.ndr fills alignment gaps with (module doc, point 1)
IMPACKET_FILL = frozenset(b"\xaa\xab\xbb\xbc\xbd\xbe\xbf\xca\xcb\xcc\xce\xee\xef")
#: what the strict codec may raise for values impacket still encodes (malformed requests)
_REFUSED = (ndr.StubError, ValueError, TypeError, OverflowError, struct.error, RecursionError)


def _zero_fill(data: bytes, encoder: Any) -> bytes:
    """impacket's encoding with its fill octets zeroed in the alignment gaps wire/ndr.py's
    encoder (``encoder``; None when it refuses the values) leaves; an octet that is not one of
    impacket's fill octets is left as it is, so a layout difference still shows."""
    if encoder is None or not encoder.pads:
        return data
    out = bytearray(data)
    for start, end in encoder.pads:
        for i in range(start, min(end, len(out))):
            if out[i] in IMPACKET_FILL:
                out[i] = 0
    return bytes(out)


#: the referent ID counter of the encoding in progress (module doc, point 2)
_next_referent: contextvars.ContextVar[list[int]] = contextvars.ContextVar("_next_referent")
REFERENT_BASE = 0x00020000


def _referent_id() -> int:
    counter = _next_referent.get(None)
    if counter is None:  # an encoding outside encode_*: still deterministic
        counter = [REFERENT_BASE]
        _next_referent.set(counter)
    value = counter[0]
    counter[0] += 4
    return value


def _align(offset: int, n: int) -> int:
    return (-offset) % n


# =============================================================================== base classes

class NdrStruct(NDRSTRUCT):
    """A structure with its alignment declared (``align`` for NDR, ``align64`` for NDR64) and,
    in NDR64, the trailing pad that makes its size a multiple of it (MS-RPCE 2.2.5, NDR64)."""

    align = 4
    align64 = 8

    def getAlignment(self):  # impacket: computed from field sizes otherwise (point 4)
        return self.align

    def getData(self, soFar=0):
        data = NDRSTRUCT.getData(self, soFar)
        if self._isNDR64:
            data += b"\x00" * _align(soFar + len(data), self.align)
        return data

    def fromString(self, data, offset=0):
        size = NDRSTRUCT.fromString(self, data, offset)
        if self._isNDR64:
            size += _align(offset + size, self.align)
        return size


class NdrUnion(NDRUNION):
    """A non-encapsulated union (C706 14.3.8) marshalled as module doc point 3 says.

    ``union`` maps each discriminant to ``(arm name, arm class)`` or None for an empty arm;
    ``tag_class`` is the discriminant's type; ``align``/``align64`` is the largest alignment of
    the discriminant and all arms (what the union adds to an enclosing structure)."""

    tag_class: type = NDRULONG
    union: dict[int, tuple[str, type] | None] = {}
    align = 4
    align64 = 8

    def __init__(self, data=None, isNDR64=False, topLevel=False):
        self.commonHdr = (("tag", self.tag_class),)
        self.commonHdr64 = self.commonHdr
        NDRUNION.__init__(self, data, isNDR64, topLevel)

    def __setitem__(self, key, value):
        if key != "tag":
            return NDRUNION.__setitem__(self, key, value)
        arm = self.union.get(value)
        self.structure = () if arm is None else (arm,)
        NDRUNION.__init__(self, None, isNDR64=self._isNDR64, topLevel=self.topLevel)
        self.fields["tag"]["Data"] = value

    @property
    def arm_name(self) -> str | None:
        return self.structure[0][0] if self.structure else None

    def getAlignment(self):
        return self.align

    def getData(self, soFar=0):
        data = b""
        if self._isNDR64:  # MS-RPCE 2.2.5 (NDR64): align the union before its discriminant
            data += b"\x00" * _align(soFar, self.align)
        data += self.fields["tag"].getData(soFar + len(data))  # aligns to its own type
        if self._isNDR64:  # ... and its arm to the same alignment
            data += b"\x00" * _align(soFar + len(data), self.align)
        for name, kind in self.structure:  # the arm aligns itself (DCE union, NDR)
            data += self.pack(name, kind, soFar + len(data))
        return data

    def fromString(self, data, offset=0):
        start = offset
        if self._isNDR64:
            offset += _align(offset, self.align)
        tag = self.tag_class(isNDR64=self._isNDR64)
        offset += tag.fromString(data, offset)
        self["tag"] = tag["Data"]
        if self._isNDR64:
            offset += _align(offset, self.align)
        for name, kind in self.structure:
            offset += self.unpack(name, kind, data, offset)
        return offset - start


class NdrPointer(NDRPOINTER):
    """A unique pointer (pointer_default(unique), MS-MQRR 6 / MS-MQMR 6) whose referent ID is
    assigned in wire order; ReferentID 0 is NULL (C706 14.3.10, 14.3.12)."""

    def __init__(self, data=None, isNDR64=False, topLevel=False):
        NDRPOINTER.__init__(self, data, isNDR64, topLevel)
        if data is None:
            self.fields["ReferentID"] = REFERENT_BASE  # non-NULL until set_null()

    def set_null(self) -> None:
        self.fields["ReferentID"] = 0

    @property
    def is_null(self) -> bool:
        return self.fields["ReferentID"] == 0

    def getData(self, soFar=0):
        size = 8 if self._isNDR64 else 4
        if self.is_null:
            return b"\x00" * (_align(soFar, size) + size)
        self.fields["ReferentID"] = _referent_id()
        return NDRPOINTER.getData(self, soFar)

    def getAlignment(self):
        return 8 if self._isNDR64 else 4


class ByteArray(NDRUniConformantArray):
    """A conformant array of octets marshalled as one block (impacket: point 5)."""

    structure = (("Data", ":"),)
    structure64 = structure

    def __init__(self, data=None, isNDR64=False):
        NDRUniConformantArray.__init__(self, data, isNDR64)
        self.fields["Data"] = b""
        self.arraySize = 0

    def getArraySize(self):
        return len(self.fields["Data"])

    def getArrayMaximumSize(self, fieldName=None):
        return len(self.fields["Data"])

    def getDataLen(self, data, offset=0):
        if self.arraySize > len(data) - offset:
            raise DecodeError("array", f"{self.arraySize} octets announced, "
                                       f"{max(len(data) - offset, 0)} present")
        return self.arraySize

    def getAlignment(self):
        return 1


#: decoding builds several impacket objects (some 2.4 KB) per array element, so a stub may
#: announce at most this many elements in all its arrays (a flood of small PROPVARIANTs in a
#: 16 MiB response would otherwise take gigabytes); octet arrays are not counted
MAX_ELEMENTS = 1 << 16
_element_budget: contextvars.ContextVar[list[int]] = contextvars.ContextVar("_element_budget")


class ItemArray(NDRUniConformantArray):
    """A conformant array of ``item`` (an impacket class or a struct format)."""

    def fromString(self, data, offset=0):
        budget = _element_budget.get(None)
        if budget is not None:
            budget[0] -= self.getArraySize()
            if budget[0] < 0:
                raise DecodeError("array", f"{self.getArraySize()} elements announced; a stub "
                                           f"may hold {MAX_ELEMENTS} in all its arrays")
        return NDRUniConformantArray.fromString(self, data, offset)

    def getAlignment(self):
        if isinstance(self.item, str):
            return struct.calcsize(self.item)
        return self.item(isNDR64=self._isNDR64).getAlignment()


def _ptr(referent_class: type, name: str | None = None) -> type:
    """A unique pointer class to ``referent_class``."""
    return type(name or f"P{referent_class.__name__}", (NdrPointer,),
                {"referent": (("Data", referent_class),)})


class ENUM16(NDRENUM):
    """An IDL enum: 2 octets in NDR (C706 14.2), 4 in NDR64 (MS-RPCE 2.2.5.2)."""

    structure = (("Data", "<H=0"),)
    structure64 = (("Data", "<L=0"),)


# =============================================================================== MS-DTYP, MS-MQMQ

DWORD = ULONG = NDRULONG
LONG = NDRLONG
USHORT = NDRUSHORT
SHORT = NDRSHORT
UCHAR = NDRUSMALL
CHAR = NDRSMALL
ULONGLONG = NDRUHYPER
LONGLONG = NDRHYPER


class GUID(NdrStruct):
    """MS-DTYP 2.3.4.2 GUID on the wire: Data1 (4), Data2 (2), Data3 (2) little-endian, then
    Data4 (8): uuid.UUID.bytes_le. Alignment 4 (its largest member)."""

    structure = (("Data", "16s=b''"),)
    align = align64 = 4


class XACTUOW(NdrStruct):
    """MS-MQMQ / MS-DTCO XACTUOW: byte rgb[16]; alignment 1."""

    structure = (("rgb", "16s=b''"),)
    align = align64 = 1


class CONTEXT_HANDLE(NdrStruct):
    """A context handle on the wire (C706's ndr_context_handle; MS-MQRR 2.2.4): attributes
    DWORD then UUID, 20 octets, opaque here; alignment 4 in NDR and NDR64."""

    structure = (("Data", "20s=b''"),)
    align = align64 = 4


class WSTR(NdrStruct):
    """A conformant varying string of wchar_t (C706 14.3.4): maximum count, offset, actual
    count (4 octets each in NDR, 8 in NDR64), then the characters and their NUL."""

    commonHdr = (("MaximumCount", "<L=len(Data)//2"), ("Offset", "<L=0"),
                 ("ActualCount", "<L=len(Data)//2"))
    commonHdr64 = (("MaximumCount", "<Q=len(Data)//2"), ("Offset", "<Q=0"),
                   ("ActualCount", "<Q=len(Data)//2"))
    structure = (("Data", ":"),)
    align = 4
    align64 = 8

    def getDataLen(self, data, offset=0):
        need = self.fields["ActualCount"] * 2
        if need > len(data) - offset:
            raise DecodeError("string", f"{self.fields['ActualCount']} characters announced, "
                                        f"{max(len(data) - offset, 0)} octets present")
        return need

    def getData(self, soFar=0):  # no NDR64 trailing pad: a string is not a structure
        return NDRSTRUCT.getData(self, soFar)

    def fromString(self, data, offset=0):
        return NDRSTRUCT.fromString(self, data, offset)


LPWSTR = _ptr(WSTR, "LPWSTR")


class OBJECTID(NdrStruct):
    """MS-MQMQ 2.2.8 OBJECTID: GUID Lineage, DWORD Uniquifier."""

    structure = (("Lineage", GUID), ("Uniquifier", DWORD))
    align = align64 = 4


class DL_ID(NdrStruct):
    """MS-MQMQ 2.2.9 DL_ID: GUID m_DlGuid, [string] wchar_t* m_pwzDomain."""

    structure = (("m_DlGuid", GUID), ("m_pwzDomain", LPWSTR))
    align = 4
    align64 = 8


class MULTICAST_ID(NdrStruct):
    """MS-MQMQ 2.2.10 MULTICAST_ID: ULONG m_address, ULONG m_port."""

    structure = (("m_address", ULONG), ("m_port", ULONG))
    align = align64 = 4


_QFT = QueueFormatType


class QUEUE_FORMAT_UNION(NdrUnion):
    """MS-MQMQ 2.2.7: [switch_is(m_qft)] union; the discriminant has m_qft's type (unsigned
    char). Largest arm alignment: 4 in NDR (GUID, pointers), 8 in NDR64 (pointers)."""

    tag_class = UCHAR
    union = {
        int(_QFT.QUEUE_FORMAT_TYPE_UNKNOWN): None,
        int(_QFT.QUEUE_FORMAT_TYPE_PUBLIC): ("m_gPublicID", GUID),
        int(_QFT.QUEUE_FORMAT_TYPE_PRIVATE): ("m_oPrivateID", OBJECTID),
        int(_QFT.QUEUE_FORMAT_TYPE_DIRECT): ("m_pDirectID", LPWSTR),
        int(_QFT.QUEUE_FORMAT_TYPE_MACHINE): ("m_gMachineID", GUID),
        int(_QFT.QUEUE_FORMAT_TYPE_CONNECTOR): ("m_GConnectorID", GUID),
        int(_QFT.QUEUE_FORMAT_TYPE_DL): ("m_DlID", DL_ID),
        int(_QFT.QUEUE_FORMAT_TYPE_MULTICAST): ("m_MulticastID", MULTICAST_ID),
        int(_QFT.QUEUE_FORMAT_TYPE_SUBQUEUE): ("m_pDirectSubqueueID", LPWSTR),
    }
    align = 4
    align64 = 8


class QUEUE_FORMAT(NdrStruct):
    """MS-MQMQ 2.2.7 QUEUE_FORMAT."""

    structure = (("m_qft", UCHAR), ("m_SuffixAndFlags", UCHAR), ("m_reserved", USHORT),
                 ("u", QUEUE_FORMAT_UNION))
    align = 4
    align64 = 8


PQUEUE_FORMAT = _ptr(QUEUE_FORMAT, "PQUEUE_FORMAT")


# MS-MQMQ 2.2.12 VARTYPE values (the model's are in model/mqmr.py; restated to keep the wire
# layer free of the model's protocol servers)
VT_EMPTY, VT_NULL, VT_I2, VT_I4, VT_BOOL, VT_VARIANT = 0, 1, 2, 3, 11, 12
VT_I1, VT_UI1, VT_UI2, VT_UI4, VT_I8, VT_UI8 = 16, 17, 18, 19, 20, 21
VT_LPWSTR, VT_BLOB, VT_CLSID, VT_VECTOR = 31, 65, 72, 0x1000


def _counted(name: str, element: type | str, doc: str) -> type:
    """A counted array structure of MS-MQMQ 2.2.15/2.2.16: ULONG count, [size_is] pointer."""
    if element == "c":
        array = ByteArray
    else:
        array = type(f"{name}_ARRAY", (ItemArray,), {"item": element})
    count = "cbSize" if name == "BLOB" else "cElems"
    ptr = "pBlobData" if name == "BLOB" else "pElems"
    return type(name, (NdrStruct,), {
        "__doc__": doc, "structure": ((count, ULONG), (ptr, _ptr(array, f"P{name}_ARRAY"))),
        "align": 4, "align64": 8, "count_name": count, "pointer_name": ptr})


class LARGE_INTEGER(NdrStruct):
    structure = (("QuadPart", LONGLONG),)
    align = align64 = 8


class ULARGE_INTEGER(NdrStruct):
    structure = (("QuadPart", ULONGLONG),)
    align = align64 = 8


BLOB = _counted("BLOB", "c", "MS-MQMQ 2.2.15 BLOB: cbSize, [size_is(cbSize)] BYTE* pBlobData.")
CAUB = _counted("CAUB", "c", "MS-MQMQ 2.2.16.1 CAUB: counted array of UCHAR.")
CAUI = _counted("CAUI", "<H", "MS-MQMQ 2.2.16.2 CAUI: counted array of USHORT.")
CAL = _counted("CAL", "<l", "MS-MQMQ 2.2.16.3 CAL: counted array of LONG.")
CAUL = _counted("CAUL", "<L", "MS-MQMQ 2.2.16.4 CAUL: counted array of ULONG.")
CAUH = _counted("CAUH", ULARGE_INTEGER, "MS-MQMQ 2.2.16.5 CAUH: counted array of ULARGE_INTEGER.")
CACLSID = _counted("CACLSID", GUID, "MS-MQMQ 2.2.16.6 CACLSID: counted array of GUID.")
CALPWSTR = _counted("CALPWSTR", LPWSTR, "MS-MQMQ 2.2.16.7 CALPWSTR: counted array of LPWSTR.")


class PROPVARIANT_UNION(NdrUnion):
    """MS-MQMQ 2.2.13 _varUnion, [switch_is(vt)] with vt's type VARTYPE (unsigned short).
    Largest arm alignment 8 (LARGE_INTEGER / ULARGE_INTEGER)."""

    tag_class = USHORT
    union: dict[int, tuple[str, type] | None] = {
        VT_EMPTY: None, VT_NULL: None,
        VT_I1: ("cVal", CHAR), VT_UI1: ("bVal", UCHAR),
        VT_I2: ("iVal", SHORT), VT_UI2: ("uiVal", USHORT),
        VT_I4: ("lVal", LONG), VT_UI4: ("ulVal", ULONG),
        VT_I8: ("hVal", LARGE_INTEGER), VT_UI8: ("uhVal", ULARGE_INTEGER),
        VT_BOOL: ("boolVal", SHORT),  # MS-MQMQ 2.2.14 VARIANT_BOOL: a short
        VT_CLSID: ("puuid", _ptr(GUID, "PCLSID")),
        VT_BLOB: ("blob", BLOB),
        VT_LPWSTR: ("pwszVal", LPWSTR),
        VT_VECTOR | VT_UI1: ("caub", CAUB),
        VT_VECTOR | VT_UI2: ("caui", CAUI),
        VT_VECTOR | VT_I4: ("cal", CAL),
        VT_VECTOR | VT_UI4: ("caul", CAUL),
        VT_VECTOR | VT_UI8: ("cauh", CAUH),
        VT_VECTOR | VT_CLSID: ("cauuid", CACLSID),
        VT_VECTOR | VT_LPWSTR: ("calpwstr", CALPWSTR),
        # VT_VECTOR | VT_VARIANT: CAPROPVARIANT, added below (it refers to PROPVARIANT)
    }
    align = align64 = 8


class PROPVARIANT(NdrStruct):
    """MS-MQMQ 2.2.13 tag_inner_PROPVARIANT: VARTYPE vt, UCHAR wReserved1, UCHAR wReserved2,
    ULONG wReserved3, _varUnion. Alignment 8 (the union's), so each element of an array of
    PROPVARIANT starts on 8."""

    structure = (("vt", USHORT), ("wReserved1", UCHAR), ("wReserved2", UCHAR),
                 ("wReserved3", ULONG), ("u", PROPVARIANT_UNION))
    align = align64 = 8


CAPROPVARIANT = _counted("CAPROPVARIANT", PROPVARIANT,
                         "MS-MQMQ 2.2.16.8 CAPROPVARIANT: counted array of PROPVARIANT.")
PROPVARIANT_UNION.union[VT_VECTOR | VT_VARIANT] = ("capropvar", CAPROPVARIANT)


class PROPVARIANT_ARRAY(ItemArray):
    item = PROPVARIANT


class ULONG_ARRAY(ItemArray):
    item = "<L"


class TopLevelArray(NdrStruct):
    """A conformant array passed as a top-level parameter (``[size_is(n)] T a[]``, or the
    referent of a [ref] ``T*``): maximum count, then the elements at their alignment (C706
    14.3.3). impacket: NDRCALL aligns such elements as if the count were not there (an
    8-aligned PROPVARIANT would land on 4), so the array is wrapped in a one-member structure,
    which impacket marshals with the count in front (C706 14.3.7.1): the same octets."""

    array_class: type = ByteArray

    def __init__(self, data=None, isNDR64=False):
        self.structure = (("array", self.array_class),)
        self.structure64 = self.structure
        NdrStruct.__init__(self, data, isNDR64)

    def getAlignment(self):
        # the elements align after the count, but an empty array has none to align: no gap
        # (Microsoft's NDR engine returns before aligning when the count is 0)
        array = self.fields["array"]
        count = len(array.fields["Data"]) or getattr(array, "arraySize", 0)
        return array.getAlignment() if count else 1

    def getData(self, soFar=0):  # no trailing pad: the wrapper is not on the wire
        return NDRSTRUCT.getData(self, soFar)

    def fromString(self, data, offset=0):
        return NDRSTRUCT.fromString(self, data, offset)


def _top_level(array_class: type) -> type:
    return type(f"TOP_{array_class.__name__}", (TopLevelArray,), {"array_class": array_class})


TOP_BYTE_ARRAY = _top_level(ByteArray)
TOP_ULONG_ARRAY = _top_level(ULONG_ARRAY)
TOP_PROPVARIANT_ARRAY = _top_level(PROPVARIANT_ARRAY)


# =============================================================================== MS-MQRR

class SECTION_TYPE(ENUM16):
    """MS-MQRR 2.2.7 SectionType (an enum: 2 octets NDR, 4 NDR64)."""


class SectionBuffer(NdrStruct):
    """MS-MQRR 2.2.6 SectionBuffer."""

    structure = (("SectionBufferType", SECTION_TYPE), ("SectionSizeAlloc", DWORD),
                 ("SectionSize", DWORD), ("pSectionBuffer", _ptr(ByteArray, "PBYTE_ARRAY")))
    align = 4
    align64 = 8


class SECTIONBUFFER_ARRAY(ItemArray):
    item = SectionBuffer


PSECTIONBUFFER_ARRAY = _ptr(SECTIONBUFFER_ARRAY, "PSECTIONBUFFER_ARRAY")


class _Call(NDRCALL):
    """A request or response stub: the [in] or [out] parameters in IDL order."""

    opnum = -1


def _call(name: str, opnum: int, fields: tuple) -> type:
    return type(name, (_Call,), {"opnum": opnum, "structure": fields})


_OPEN_FIELDS = (("pQueueFormat", QUEUE_FORMAT), ("dwAccess", DWORD), ("dwShareMode", DWORD),
                ("pClientId", GUID), ("fNonRoutingServer", LONG), ("Major", UCHAR),
                ("Minor", UCHAR), ("BuildNumber", USHORT), ("fWorkgroup", LONG))
_RECEIVE_FIELDS = (("phContext", CONTEXT_HANDLE), ("LookupId", ULONGLONG), ("hCursor", DWORD),
                   ("ulAction", DWORD), ("ulTimeout", DWORD), ("dwRequestId", DWORD),
                   ("dwMaxBodySize", DWORD), ("dwMaxCompoundMessageSize", DWORD))
_RECEIVE_OUT = (("pdwArriveTime", DWORD), ("pSequenceId", ULONGLONG),
                ("pdwNumberOfSections", DWORD), ("ppPacketSections", PSECTIONBUFFER_ARRAY),
                ("ErrorCode", DWORD))
_STATUS = (("ErrorCode", DWORD),)  # the HRESULT / DWORD return value, read unsigned

# MS-MQRR 6: [in] parameters (requests) and [out] parameters + return value (responses).
# Top-level pointers without attribute are [ref] (C706 14.3.11): their referent in place.
_RR = c.REMOTEREAD
REQUESTS: dict[tuple[str, int], type] = {
    (_RR, 0): _call("R_GetServerPort", 0, ()),
    (_RR, 2): _call("R_OpenQueue", 2, _OPEN_FIELDS),
    (_RR, 3): _call("R_CloseQueue", 3, (("pphContext", CONTEXT_HANDLE),)),
    (_RR, 4): _call("R_CreateCursor", 4, (("phContext", CONTEXT_HANDLE),)),
    (_RR, 5): _call("R_CloseCursor", 5, (("phContext", CONTEXT_HANDLE), ("hCursor", DWORD))),
    (_RR, 6): _call("R_PurgeQueue", 6, (("phContext", CONTEXT_HANDLE),)),
    (_RR, 7): _call("R_StartReceive", 7, _RECEIVE_FIELDS),
    (_RR, 8): _call("R_CancelReceive", 8, (("phContext", CONTEXT_HANDLE),
                                           ("dwRequestId", DWORD))),
    (_RR, 9): _call("R_EndReceive", 9, (("phContext", CONTEXT_HANDLE), ("dwAck", DWORD),
                                        ("dwRequestId", DWORD))),
    (_RR, 10): _call("R_MoveMessage", 10, (("phContextFrom", CONTEXT_HANDLE),
                                           ("ullContextTo", ULONGLONG), ("LookupId", ULONGLONG),
                                           ("pTransactionId", XACTUOW))),
    (_RR, 11): _call("R_OpenQueueForMove", 11, _OPEN_FIELDS),
    (_RR, 12): _call("R_QMEnlistRemoteTransaction", 12, (
        ("pTransactionId", XACTUOW), ("cbPropagationToken", DWORD),
        ("pbPropagationToken", TOP_BYTE_ARRAY), ("pQueueFormat", QUEUE_FORMAT))),
    (_RR, 13): _call("R_StartTransactionalReceive", 13,
                     _RECEIVE_FIELDS + (("pTransactionId", XACTUOW),)),
    (_RR, 14): _call("R_SetUserAcknowledgementClass", 14, (
        ("phContext", CONTEXT_HANDLE), ("LookupId", ULONGLONG), ("usClass", USHORT))),
    (_RR, 15): _call("R_EndTransactionalReceive", 15, (
        ("phContext", CONTEXT_HANDLE), ("dwAck", DWORD), ("dwRequestId", DWORD))),
}
RESPONSES: dict[tuple[str, int], type] = {
    (_RR, 0): _call("R_GetServerPortResponse", 0, _STATUS),
    (_RR, 2): _call("R_OpenQueueResponse", 2, (("pphContext", CONTEXT_HANDLE),)),  # void
    (_RR, 3): _call("R_CloseQueueResponse", 3, (("pphContext", CONTEXT_HANDLE),) + _STATUS),
    (_RR, 4): _call("R_CreateCursorResponse", 4, (("phCursor", DWORD),) + _STATUS),
    (_RR, 5): _call("R_CloseCursorResponse", 5, _STATUS),
    (_RR, 6): _call("R_PurgeQueueResponse", 6, _STATUS),
    (_RR, 7): _call("R_StartReceiveResponse", 7, _RECEIVE_OUT),
    (_RR, 8): _call("R_CancelReceiveResponse", 8, _STATUS),
    (_RR, 9): _call("R_EndReceiveResponse", 9, _STATUS),
    (_RR, 10): _call("R_MoveMessageResponse", 10, _STATUS),
    (_RR, 11): _call("R_OpenQueueForMoveResponse", 11, (("pMoveContext", ULONGLONG),
                                                        ("pphContext", CONTEXT_HANDLE))),  # void
    (_RR, 12): _call("R_QMEnlistRemoteTransactionResponse", 12, _STATUS),
    (_RR, 13): _call("R_StartTransactionalReceiveResponse", 13, _RECEIVE_OUT),
    (_RR, 14): _call("R_SetUserAcknowledgementClassResponse", 14, _STATUS),
    (_RR, 15): _call("R_EndTransactionalReceiveResponse", 15, _STATUS),
}


# =============================================================================== MS-MQMR

class MGMT_OBJECT_TYPE(ENUM16):
    """MS-MQMR 2.2.2.1 MgmtObjectType (an enum)."""


class MGMT_OBJECT_UNION(NdrUnion):
    """MS-MQMR 2.2.1.2: [switch_is(type)] union; discriminant of type MgmtObjectType."""

    tag_class = MGMT_OBJECT_TYPE
    union = {
        int(MgmtObjectType.MGMT_QUEUE): ("pQueueFormat", PQUEUE_FORMAT),
        int(MgmtObjectType.MGMT_MACHINE): ("Reserved1", DWORD),
        int(MgmtObjectType.MGMT_SESSION): ("Reserved2", DWORD),
    }
    align = 4
    align64 = 8


class MGMT_OBJECT(NdrStruct):
    """MS-MQMR 2.2.1.2 MGMT_OBJECT: MgmtObjectType type, then the union (NDR: 8 octets)."""

    structure = (("type", MGMT_OBJECT_TYPE), ("u", MGMT_OBJECT_UNION))
    align = 4
    align64 = 8


_MR = c.QMMGMT
REQUESTS.update({
    (_MR, 0): _call("R_QMMgmtGetInfo", 0, (
        ("pObjectFormat", MGMT_OBJECT), ("cp", DWORD), ("aProp", TOP_ULONG_ARRAY),
        ("apVar", TOP_PROPVARIANT_ARRAY))),
    (_MR, 1): _call("R_QMMgmtAction", 1, (("pObjectFormat", MGMT_OBJECT),
                                          ("lpwszAction", WSTR))),
})
RESPONSES.update({
    (_MR, 0): _call("R_QMMgmtGetInfoResponse", 0, (("apVar", TOP_PROPVARIANT_ARRAY),) + _STATUS),
    (_MR, 1): _call("R_QMMgmtActionResponse", 1, _STATUS),
})


# =============================================================================== typed -> NDR

_U32, _U16, _U8, _U64 = 0xFFFFFFFF, 0xFFFF, 0xFF, 0xFFFFFFFFFFFFFFFF


def _int(value: Any, field: str, top: int, signed: bool = False) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise EncodeError(field, f"expected an integer, not {type(value).__name__}")
    low, high = (-(top + 1) // 2, top // 2) if signed else (0, top)
    if not low <= value <= high:
        raise EncodeError(field, f"{value} does not fit ({low}..{high})")
    return value


def _guid_bytes(value: Any, field: str) -> bytes:
    if value is None:
        return bytes(16)  # choice 2: the nil GUID
    if not isinstance(value, uuid.UUID):
        raise EncodeError(field, f"expected a uuid.UUID, not {type(value).__name__}")
    return value.bytes_le  # MS-DTYP 2.3.4.2


def _fixed(value: Any, field: str, size: int, none_ok: bool = True) -> bytes:
    if value is None and none_ok:
        return bytes(size)  # choice 1: a NULL context handle is 20 zero octets
    if not isinstance(value, (bytes, bytearray)) or len(value) != size:
        shown = len(value) if isinstance(value, (bytes, bytearray)) else type(value).__name__
        raise EncodeError(field, f"expected {size} octets, not {shown}")
    return bytes(value)


def _utf16(text: Any, field: str) -> bytes:
    if not isinstance(text, str):
        raise EncodeError(field, f"expected a string, not {type(text).__name__}")
    if "\x00" in text:  # a [string] ends at its first NUL (C706 14.3.4)
        raise EncodeError(field, "a [string] cannot hold NUL before its terminator")
    return (text + "\x00").encode("utf-16le", "surrogatepass")


def _set_prim(obj: NDR, name: str, value: int) -> None:
    obj.fields[name]["Data"] = value


def _set_string(ptr: NDRPOINTER, text: Any, field: str) -> None:
    if text is None:
        ptr.set_null()
        return
    wstr = ptr.fields["Data"]
    wstr.fields["Data"] = _utf16(text, field)
    wstr.fields["MaximumCount"] = wstr.fields["ActualCount"] = None


def _fill_wstr(wstr: WSTR, text: Any, field: str) -> None:
    wstr.fields["Data"] = _utf16(text, field)
    wstr.fields["MaximumCount"] = wstr.fields["ActualCount"] = None


def _fill_queue_format(qf_obj: QUEUE_FORMAT, qf: Any, field: str) -> None:
    """MS-MQMQ 2.2.7 QueueFormat -> QUEUE_FORMAT. Malformed structures (a reserved value, an
    unknown m_qft) are encoded as given, so the suite can send them."""
    if not isinstance(qf, QueueFormat):
        raise EncodeError(field, f"expected a QueueFormat, not {type(qf).__name__}")
    qft = _int(qf.m_qft, f"{field}.m_qft", _U8)
    _set_prim(qf_obj, "m_qft", qft)
    _set_prim(qf_obj, "m_SuffixAndFlags", _int(qf.m_SuffixAndFlags,
                                               f"{field}.m_SuffixAndFlags", _U8))
    _set_prim(qf_obj, "m_reserved", _int(qf.m_reserved, f"{field}.m_reserved", _U16))
    u = qf_obj.fields["u"]
    u["tag"] = qft
    arm = u.arm_name
    if arm is None:
        return
    v, where = qf.value, f"{field}.{arm}"
    expected = UNION_ARMS[QueueFormatType(qft)][1]
    if v is None and expected is str:  # a union's embedded pointer is unique: NULL goes
        _set_string(u.fields[arm], None, where)
        return
    if not isinstance(v, expected):
        raise EncodeError(where, f"expected {expected.__name__}, not {type(v).__name__}")
    target = u.fields[arm]
    if isinstance(v, uuid.UUID):
        target["Data"] = _guid_bytes(v, where)
    elif isinstance(v, ObjectId):
        target.fields["Lineage"]["Data"] = _guid_bytes(v.Lineage, f"{where}.Lineage")
        _set_prim(target, "Uniquifier", _int(v.Uniquifier, f"{where}.Uniquifier", _U32))
    elif isinstance(v, str):
        _set_string(target, v, where)
    elif isinstance(v, DlId):
        target.fields["m_DlGuid"]["Data"] = _guid_bytes(v.m_DlGuid, f"{where}.m_DlGuid")
        _set_string(target.fields["m_pwzDomain"], v.m_pwzDomain, f"{where}.m_pwzDomain")
    elif isinstance(v, MulticastId):
        _set_prim(target, "m_address", _int(v.m_address, f"{where}.m_address", _U32))
        _set_prim(target, "m_port", _int(v.m_port, f"{where}.m_port", _U32))


def _fill_mgmt_object(obj: MGMT_OBJECT, mo: Any, field: str) -> None:
    """MS-MQMR 2.2.1.2 MgmtObject -> MGMT_OBJECT; an unknown type gets an empty arm."""
    if not isinstance(mo, MgmtObject):
        raise EncodeError(field, f"expected a MgmtObject, not {type(mo).__name__}")
    kind = _int(mo.type, f"{field}.type", _U16)  # an enum: 16 bits on the wire (NDR)
    _set_prim(obj, "type", kind)
    u = obj.fields["u"]
    u["tag"] = kind
    if u.arm_name == "pQueueFormat":
        if mo.pQueueFormat is None:
            u.fields["pQueueFormat"].set_null()
        else:
            _fill_queue_format(u.fields["pQueueFormat"].fields["Data"], mo.pQueueFormat,
                               f"{field}.pQueueFormat")
    elif u.arm_name in ("Reserved1", "Reserved2"):
        value = getattr(mo, u.arm_name)
        _set_prim(u, u.arm_name, _int(value, f"{field}.{u.arm_name}", _U32))


def _vector(value: Any, field: str) -> list:
    if isinstance(value, (bytes, bytearray)):
        return list(value)
    if not isinstance(value, (list, tuple)):
        raise EncodeError(field, f"expected a list, not {type(value).__name__}")
    return list(value)


def _fill_counted(obj: NdrStruct, items: list, field: str,
                  fill_item: Callable[[Any, Any, str], Any] | None) -> None:
    """A CA* / BLOB structure: count and (choice 3: NULL when empty) the pointer's array."""
    _set_prim(obj, obj.count_name, len(items))
    ptr = obj.fields[obj.pointer_name]
    if not items:
        ptr.set_null()
        return
    array = ptr.fields["Data"]
    if isinstance(array, ByteArray):
        try:
            array.fields["Data"] = bytes(items)
        except (TypeError, ValueError):
            raise EncodeError(field, "expected octets 0..255") from None
        return
    elements = []
    for i, item in enumerate(items):
        elements.append(fill_item(array, item, f"{field}[{i}]"))
    array.fields["Data"] = elements
    array.fields["MaximumCount"] = None


_SCALARS: dict[int, tuple[int, bool]] = {  # vt -> (bound, signed)
    VT_I1: (_U8, True), VT_UI1: (_U8, False), VT_I2: (_U16, True), VT_UI2: (_U16, False),
    VT_I4: (_U32, True), VT_UI4: (_U32, False), VT_BOOL: (_U16, True),
}
_VECTOR_SCALARS: dict[int, tuple[int, bool]] = {
    VT_VECTOR | VT_UI1: (_U8, False), VT_VECTOR | VT_UI2: (_U16, False),
    VT_VECTOR | VT_I4: (_U32, True), VT_VECTOR | VT_UI4: (_U32, False),
}


def _fill_propvariant(pv_obj: PROPVARIANT, pv: Any, field: str) -> PROPVARIANT:
    """MS-MQMQ 2.2.13 PropVariant -> PROPVARIANT (reserved fields 0)."""
    if not isinstance(pv, c.PropVariant):
        raise EncodeError(field, f"expected a PropVariant, not {type(pv).__name__}")
    vt = _int(pv.vt, f"{field}.vt", _U16)
    _set_prim(pv_obj, "vt", vt)
    u = pv_obj.fields["u"]
    u["tag"] = vt
    arm, value, where = u.arm_name, pv.value, f"{field}.value"
    if arm is None:
        return pv_obj  # VT_EMPTY, VT_NULL, or an unknown vt: no data (MS-MQMQ 2.2.12)
    target = u.fields[arm]
    if vt in _SCALARS:
        bound, signed = _SCALARS[vt]
        _set_prim(u, arm, _int(value, where, bound, signed))
    elif vt in (VT_I8, VT_UI8):
        _set_prim(target, "QuadPart", _int(value, where, _U64, signed=vt == VT_I8))
    elif vt == VT_CLSID:
        if value is None:
            target.set_null()
        else:
            target.fields["Data"]["Data"] = _guid_bytes(value, where)
    elif vt == VT_LPWSTR:
        _set_string(target, value, where)
    elif vt == VT_BLOB:
        if not isinstance(value, (bytes, bytearray)):
            raise EncodeError(where, f"expected bytes, not {type(value).__name__}")
        _fill_counted(target, list(value), where, None)
    elif vt in _VECTOR_SCALARS:
        bound, signed = _VECTOR_SCALARS[vt]
        items = [_int(x, f"{where}[{i}]", bound, signed)
                 for i, x in enumerate(_vector(value, where))]
        _fill_counted(target, items, where, None if vt == VT_VECTOR | VT_UI1
                      else lambda array, x, f: x)
    elif vt == VT_VECTOR | VT_UI8:
        def uh(array, x, f):
            e = ULARGE_INTEGER(isNDR64=array._isNDR64)
            _set_prim(e, "QuadPart", _int(x, f, _U64))
            return e
        _fill_counted(target, _vector(value, where), where, uh)
    elif vt == VT_VECTOR | VT_CLSID:
        def guid(array, x, f):
            if not isinstance(x, uuid.UUID):
                raise EncodeError(f, f"expected a uuid.UUID, not {type(x).__name__}")
            e = GUID(isNDR64=array._isNDR64)
            e["Data"] = x.bytes_le
            return e
        _fill_counted(target, _vector(value, where), where, guid)
    elif vt == VT_VECTOR | VT_LPWSTR:
        def string(array, x, f):
            e = LPWSTR(isNDR64=array._isNDR64)
            _set_string(e, x, f)
            return e
        _fill_counted(target, _vector(value, where), where, string)
    elif vt == VT_VECTOR | VT_VARIANT:
        def variant(array, x, f):
            return _fill_propvariant(PROPVARIANT(isNDR64=array._isNDR64), x, f)
        _fill_counted(target, _vector(value, where), where, variant)
    return pv_obj


def _fill_section(sb_obj: SectionBuffer, sb: Any, field: str) -> SectionBuffer:
    if not isinstance(sb, c.SectionBuffer):
        raise EncodeError(field, f"expected a SectionBuffer, not {type(sb).__name__}")
    _set_prim(sb_obj, "SectionBufferType", _int(sb.SectionBufferType,
                                                f"{field}.SectionBufferType", _U16))
    _set_prim(sb_obj, "SectionSizeAlloc", _int(sb.SectionSizeAlloc,
                                               f"{field}.SectionSizeAlloc", _U32))
    size = _int(sb.SectionSize, f"{field}.SectionSize", _U32)
    _set_prim(sb_obj, "SectionSize", size)
    ptr = sb_obj.fields["pSectionBuffer"]
    if sb.pSectionBuffer is None:
        if size:  # MS-MQMR/3.1.4/R2's rule for NDR: no NULL pointer with a nonzero size
            raise EncodeError(f"{field}.pSectionBuffer", f"NULL with SectionSize {size}")
        ptr.set_null()
        return sb_obj
    if not isinstance(sb.pSectionBuffer, (bytes, bytearray)):
        raise EncodeError(f"{field}.pSectionBuffer", "expected bytes")
    if len(sb.pSectionBuffer) != size:  # size_is(SectionSize) (MS-MQRR 2.2.6)
        raise EncodeError(f"{field}.pSectionBuffer",
                          f"{len(sb.pSectionBuffer)} octets, SectionSize is {size}")
    ptr.fields["Data"].fields["Data"] = bytes(sb.pSectionBuffer)
    return sb_obj


def _fill(obj: _Call, name: str, value: Any, call_name: str) -> None:
    """Put one typed parameter into its impacket field, by the field's class."""
    field = f"{call_name}.{name}"
    target = obj.fields[name]
    if isinstance(target, TopLevelArray):
        target = target.fields["array"]
    kind = type(target)
    if kind is CONTEXT_HANDLE:
        target["Data"] = _fixed(value, field, c.CONTEXT_HANDLE_SIZE)
    elif kind is XACTUOW:
        target["rgb"] = _fixed(value, field, c.XACTUOW_SIZE, none_ok=False)
    elif kind is GUID:
        target["Data"] = _guid_bytes(value, field)
    elif kind is QUEUE_FORMAT:
        _fill_queue_format(target, value, field)
    elif kind is MGMT_OBJECT:
        _fill_mgmt_object(target, value, field)
    elif kind is WSTR:
        _fill_wstr(target, value, field)
    elif kind is ByteArray:
        if not isinstance(value, (bytes, bytearray)):
            raise EncodeError(field, f"expected bytes, not {type(value).__name__}")
        target.fields["Data"] = bytes(value)
    elif kind is ULONG_ARRAY:
        target["Data"] = [_int(x, f"{field}[{i}]", _U32) for i, x in enumerate(
            _vector(value, field))]
    elif kind is PROPVARIANT_ARRAY:
        target["Data"] = [_fill_propvariant(PROPVARIANT(isNDR64=obj._isNDR64), x,
                                            f"{field}[{i}]")
                          for i, x in enumerate(_vector(value, field))]
    elif kind is PSECTIONBUFFER_ARRAY:
        sections = _vector(value, field)
        if not sections:
            target.set_null()  # choice 3: no sections, NULL pointer
        else:
            target.fields["Data"]["Data"] = [
                _fill_section(SectionBuffer(isNDR64=obj._isNDR64), s, f"{field}[{i}]")
                for i, s in enumerate(sections)]
    else:
        bounds = {NDRULONG: (_U32, False), NDRLONG: (_U32, True), NDRUSHORT: (_U16, False),
                  NDRUSMALL: (_U8, False), NDRUHYPER: (_U64, False)}
        top, signed = bounds[kind]
        target["Data"] = _int(value, field, top, signed)


def _check_counts(call: Any) -> None:
    """size_is/length parameters that the typed call carries twice must agree."""
    if isinstance(call, c.R_QMEnlistRemoteTransaction):
        token = call.pbPropagationToken
        if isinstance(token, (bytes, bytearray)) and call.cbPropagationToken != len(token):
            raise EncodeError("R_QMEnlistRemoteTransaction.pbPropagationToken",
                              f"{len(token)} octets, cbPropagationToken is "
                              f"{call.cbPropagationToken}")  # size_is(cbPropagationToken)
    if isinstance(call, c.R_QMMgmtGetInfo):
        for name in ("aProp", "apVar"):
            n = len(getattr(call, name)) if isinstance(getattr(call, name), (list, tuple)) \
                else None
            if n is not None and n != call.cp:
                raise EncodeError(f"R_QMMgmtGetInfo.{name}",
                                  f"{n} elements, cp is {call.cp}")  # size_is(cp)


def _encode(obj: _Call) -> bytes:
    token = _next_referent.set([REFERENT_BASE])
    try:
        return obj.getData()
    finally:
        _next_referent.reset(token)


def _names(kind: type) -> list[str]:
    return [f.name for f in dataclasses.fields(kind) if f.name not in ("status", "raised")]


def encode_request(call: c.Call, ndr64: bool = False) -> bytes:
    """The stub data of a request: the [in] parameters of ``call`` in NDR (C706 14) or NDR64
    (MS-RPCE 2.2.5). Raises EncodeError naming the field that cannot be encoded."""
    key = _key(type(call))
    if ndr64 and key[0] == c.QMMGMT:
        raise EncodeError(type(call).__name__, "qmmgmt is NDR only (MS-MQMR 2.2)")
    obj = REQUESTS[key](isNDR64=ndr64)
    _check_counts(call)
    try:
        for name in _names(type(call)):
            if name in obj.fields:
                _fill(obj, name, getattr(call, name), type(call).__name__)
        data = _encode(obj)
    except RecursionError:
        raise EncodeError(type(call).__name__, "values nested too deeply") from None
    try:
        encoder = ndr._encode_request(call, ndr64)
    except _REFUSED:  # a request only impacket encodes: its fill octets stay
        encoder = None
    return _zero_fill(data, encoder)


def _call_for(call_type: type[c.Call], result: c.Result) -> c.Call:
    """A request ``result`` can answer (R_QMMgmtGetInfo's apVar is sized by its cp)."""
    if call_type is c.R_QMMgmtGetInfo:
        n = len(result.apVar)
        return c.R_QMMgmtGetInfo(cp=n, aProp=(0,) * n, apVar=(c.PropVariant(1),) * n)
    return call_type()


def encode_response(result: c.Result, call_type: type[c.Call], ndr64: bool = False) -> bytes:
    """The stub data of a response: the [out] parameters of ``result`` and, for a method
    that returns one, its status. A result with ``raised`` has no stub (it is a fault PDU):
    EncodeError."""
    key = _key(call_type)
    if result.raised:
        raise EncodeError(type(result).__name__, "a raised status is a fault PDU, not a stub")
    if ndr64 and key[0] == c.QMMGMT:
        raise EncodeError(type(result).__name__, "qmmgmt is NDR only (MS-MQMR 2.2)")
    obj = RESPONSES[key](isNDR64=ndr64)
    values = {n: getattr(result, n) for n in _names(type(result))}
    values["ErrorCode"] = result.status
    if isinstance(result, (c.R_StartReceiveResult, c.R_StartTransactionalReceiveResult)):
        n = len(result.ppPacketSections)
        if result.pdwNumberOfSections != n:  # size_is(, *pdwNumberOfSections)
            raise EncodeError(f"{type(result).__name__}.ppPacketSections",
                              f"{n} sections, pdwNumberOfSections is "
                              f"{result.pdwNumberOfSections}")
    try:
        for name, value in values.items():
            if name in obj.fields:
                _fill(obj, name, value, type(result).__name__)
        data = _encode(obj)
    except RecursionError:
        raise EncodeError(type(result).__name__, "values nested too deeply") from None
    try:
        encoder = ndr._encode_response(_call_for(call_type, result), result, ndr64)
    except _REFUSED:
        encoder = None
    return _zero_fill(data, encoder)


def _key(call_type: type) -> tuple[str, int]:
    key = (call_type.interface, call_type.opnum)
    if key not in REQUESTS:
        raise EncodeError(call_type.__name__, "not a RemoteRead or qmmgmt method")
    return key


# =============================================================================== NDR -> typed

def _parse(kind: type, data: bytes, ndr64: bool, what: str) -> _Call:
    """Parse a whole stub with impacket, parameter by parameter, so a failure names the
    parameter; ``left_over`` is what remains after the last one."""
    obj = kind(isNDR64=ndr64)
    budget = _element_budget.set([MAX_ELEMENTS])
    try:
        _parse_fields(obj, kind, data, ndr64, what)
    finally:
        _element_budget.reset(budget)
    return obj


def _parse_fields(obj: _Call, kind: type, data: bytes, ndr64: bool, what: str) -> None:
    offset = 0
    for name, field_type in obj.commonHdr + obj.structure:
        try:
            sub = NDRCALL.__new__(kind)
            sub._isNDR64 = ndr64
            sub.fields = obj.fields
            sub.commonHdr, sub.structure = (), ((name, field_type),)
            offset += NDRCALL.fromString(sub, data, offset)
        except DecodeError as e:
            raise DecodeError(f"{what}.{name}", e.reason) from None
        except Exception as e:  # noqa: BLE001 - impacket raises whatever its parsing meets
            if offset >= len(data):
                raise DecodeError(f"{what}.{name}", "stub data ends before it") from None
            raise DecodeError(f"{what}.{name}", f"malformed ({type(e).__name__}: {e})") \
                from None
        if offset > len(data):
            raise DecodeError(f"{what}.{name}", "stub data ends inside it")
    obj.left_over = len(data) - offset


def _prim(obj: NDR) -> int:
    return obj["Data"]


def _get_string(ptr: NDRPOINTER, field: str) -> str | None:
    if ptr.fields["ReferentID"] == 0:
        return None
    return _wstr_text(ptr.fields["Data"], field)


def _wstr_text(wstr: WSTR, field: str) -> str:
    f = wstr.fields
    if f["Offset"] != 0:  # C706 14.3.4: a string's offset is 0
        raise DecodeError(field, f"string offset {f['Offset']}, not 0")
    if f["ActualCount"] > f["MaximumCount"]:
        raise DecodeError(field, f"actual count {f['ActualCount']} exceeds maximum count "
                                 f"{f['MaximumCount']}")
    raw = f["Data"]
    if len(raw) != 2 * f["ActualCount"]:
        raise DecodeError(field, "string shorter than its actual count")
    units = [raw[i:i + 2] for i in range(0, len(raw), 2)]
    if not units or units[-1] != b"\x00\x00":
        raise DecodeError(field, "string without its NUL terminator")
    if b"\x00\x00" in units[:-1]:
        raise DecodeError(field, "NUL before the string's terminator")
    return raw[:-2].decode("utf-16le", "surrogatepass")


def _guid(obj: GUID) -> uuid.UUID:
    return uuid.UUID(bytes_le=obj["Data"])


def _handle(obj: CONTEXT_HANDLE) -> bytes | None:
    raw = obj["Data"]
    return None if raw == bytes(c.CONTEXT_HANDLE_SIZE) else raw


def _items(array: NDRUniConformantArray, field: str) -> list:
    """The elements of a decoded conformant array, checked against its maximum count."""
    items = array.fields["Data"]
    expected = array.getArraySize() if not isinstance(array, ByteArray) else array.arraySize
    if isinstance(items, (bytes, bytearray)):
        if len(items) != expected:
            raise DecodeError(field, f"{expected} octets announced, {len(items)} present")
        return list(items)
    if len(items) != expected:
        raise DecodeError(field, f"{expected} elements announced, {len(items)} present")
    return items


def _read_queue_format(qf_obj: QUEUE_FORMAT, field: str) -> QueueFormat:
    qft = _prim(qf_obj.fields["m_qft"])
    u = qf_obj.fields["u"]
    if _prim(u.fields["tag"]) != qft:  # the union's discriminant repeats m_qft (C706 14.3.8)
        raise DecodeError(field, f"union discriminant {_prim(u.fields['tag'])} is not "
                                 f"m_qft {qft}")
    arm, value = u.arm_name, None
    if arm is not None:
        target, where = u.fields[arm], f"{field}.{arm}"
        if isinstance(target, GUID):
            value = _guid(target)
        elif isinstance(target, OBJECTID):
            value = ObjectId(_guid(target.fields["Lineage"]), _prim(target.fields["Uniquifier"]))
        elif isinstance(target, DL_ID):
            value = DlId(_guid(target.fields["m_DlGuid"]),
                         _get_string(target.fields["m_pwzDomain"], f"{where}.m_pwzDomain"))
        elif isinstance(target, MULTICAST_ID):
            value = MulticastId(_prim(target.fields["m_address"]),
                                _prim(target.fields["m_port"]))
        else:
            value = _get_string(target, where)
    return QueueFormat(qft, _prim(qf_obj.fields["m_SuffixAndFlags"]),
                       _prim(qf_obj.fields["m_reserved"]), value)


def _read_mgmt_object(obj: MGMT_OBJECT, field: str) -> MgmtObject:
    kind = _prim(obj.fields["type"])
    u = obj.fields["u"]
    if _prim(u.fields["tag"]) != kind:
        raise DecodeError(field, f"union discriminant {_prim(u.fields['tag'])} is not "
                                 f"type {kind}")
    arm = u.arm_name
    if arm == "pQueueFormat":
        ptr = u.fields[arm]
        qf = None if ptr.fields["ReferentID"] == 0 else _read_queue_format(
            ptr.fields["Data"], f"{field}.pQueueFormat")
        return MgmtObject(kind, pQueueFormat=qf)
    if arm == "Reserved1":
        return MgmtObject(kind, Reserved1=_prim(u.fields[arm]))
    if arm == "Reserved2":
        return MgmtObject(kind, Reserved2=_prim(u.fields[arm]))
    return MgmtObject(kind)


def _counted_items(obj: NdrStruct, field: str) -> list:
    count = _prim(obj.fields[obj.count_name])
    ptr = obj.fields[obj.pointer_name]
    if ptr.fields["ReferentID"] == 0:
        if count:  # MS-MQMR/3.1.4/R2: a NULL pointer with a nonzero conformant value
            raise DecodeError(field, f"NULL {obj.pointer_name} with {obj.count_name} {count}")
        return []
    items = _items(ptr.fields["Data"], field)
    if len(items) != count:  # size_is(cElems)
        raise DecodeError(field, f"{len(items)} elements, {obj.count_name} is {count}")
    return items


def _read_propvariant(pv_obj: PROPVARIANT, field: str) -> c.PropVariant:
    vt = _prim(pv_obj.fields["vt"])
    u = pv_obj.fields["u"]
    if _prim(u.fields["tag"]) != vt:
        raise DecodeError(field, f"union discriminant {_prim(u.fields['tag'])} is not vt {vt}")
    arm = u.arm_name
    if arm is None:
        return c.PropVariant(vt)
    target, where = u.fields[arm], f"{field}.value"
    if vt in _SCALARS:
        return c.PropVariant(vt, _prim(target))
    if vt in (VT_I8, VT_UI8):
        return c.PropVariant(vt, _prim(target.fields["QuadPart"]))
    if vt == VT_CLSID:
        return c.PropVariant(vt, None if target.fields["ReferentID"] == 0
                             else _guid(target.fields["Data"]))
    if vt == VT_LPWSTR:
        return c.PropVariant(vt, _get_string(target, where))
    items = _counted_items(target, where)
    if vt == VT_BLOB:
        return c.PropVariant(vt, bytes(items))
    if vt in _VECTOR_SCALARS:
        return c.PropVariant(vt, list(items))
    if vt == VT_VECTOR | VT_UI8:
        return c.PropVariant(vt, [_prim(e.fields["QuadPart"]) for e in items])
    if vt == VT_VECTOR | VT_CLSID:
        return c.PropVariant(vt, [_guid(e) for e in items])
    if vt == VT_VECTOR | VT_LPWSTR:
        return c.PropVariant(vt, [_get_string(e, f"{where}[{i}]") for i, e in enumerate(items)])
    return c.PropVariant(vt, [_read_propvariant(e, f"{where}[{i}]")
                              for i, e in enumerate(items)])


def _read_sections(ptr: NDRPOINTER, count: int, field: str) -> tuple[c.SectionBuffer, ...]:
    if ptr.fields["ReferentID"] == 0:
        if count:
            raise DecodeError(field, f"NULL with pdwNumberOfSections {count}")
        return ()
    items = _items(ptr.fields["Data"], field)
    if len(items) != count:  # size_is(, *pdwNumberOfSections)
        raise DecodeError(field, f"{len(items)} sections, pdwNumberOfSections is {count}")
    out = []
    for i, sb in enumerate(items):
        size = _prim(sb.fields["SectionSize"])
        p = sb.fields["pSectionBuffer"]
        data = None
        if p.fields["ReferentID"] != 0:
            data = bytes(_items(p.fields["Data"], f"{field}[{i}].pSectionBuffer"))
            if len(data) != size:  # size_is(SectionSize), MS-MQRR 2.2.6
                raise DecodeError(f"{field}[{i}].pSectionBuffer",
                                  f"{len(data)} octets, SectionSize is {size}")
        elif size:
            raise DecodeError(f"{field}[{i}].pSectionBuffer", f"NULL with SectionSize {size}")
        out.append(c.SectionBuffer(_prim(sb.fields["SectionBufferType"]),
                                   _prim(sb.fields["SectionSizeAlloc"]), size, data))
    return tuple(out)


def _read(obj: _Call, name: str, field: str, values: dict) -> Any:
    target = obj.fields[name]
    if isinstance(target, TopLevelArray):
        target = target.fields["array"]
    kind = type(target)
    if kind is CONTEXT_HANDLE:
        return _handle(target)
    if kind is XACTUOW:
        return target["rgb"]
    if kind is GUID:
        return _guid(target)
    if kind is QUEUE_FORMAT:
        return _read_queue_format(target, field)
    if kind is MGMT_OBJECT:
        return _read_mgmt_object(target, field)
    if kind is WSTR:
        return _wstr_text(target, field)
    if kind is ByteArray:
        return bytes(_items(target, field))
    if kind is ULONG_ARRAY:
        return tuple(_items(target, field))
    if kind is PROPVARIANT_ARRAY:
        return tuple(_read_propvariant(e, f"{field}[{i}]")
                     for i, e in enumerate(_items(target, field)))
    if kind is PSECTIONBUFFER_ARRAY:
        return _read_sections(target, values["pdwNumberOfSections"], field)
    return _prim(target)


def _decode_into(obj: _Call, what: str) -> dict:
    """The typed values of a parsed stub; then the stub must be used up to alignment padding
    (< 8 octets), checked last so that a field's own error is reported first."""
    values: dict[str, Any] = {}
    for name in [n for n, _ in obj.commonHdr + obj.structure]:
        try:
            values[name] = _read(obj, name, f"{what}.{name}", values)
        except DecodeError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as e:
            raise DecodeError(f"{what}.{name}", f"malformed ({type(e).__name__})") from None
    if obj.left_over >= 8:
        raise DecodeError(what, f"{obj.left_over} octets left after the last parameter")
    return values


def decode_request(call_type: type[c.Call], data: bytes, ndr64: bool = False) -> c.Call:
    """The typed call whose [in] parameters ``data`` encodes. Raises DecodeError."""
    key = _key(call_type)
    what = call_type.__name__
    if ndr64 and key[0] == c.QMMGMT:
        raise DecodeError(what, "qmmgmt is NDR only (MS-MQMR 2.2)")
    values = _decode_into(_parse(REQUESTS[key], bytes(data), ndr64, what), what)
    if isinstance(values.get("aProp"), tuple):
        for name in ("aProp", "apVar"):
            if len(values[name]) != values["cp"]:  # size_is(cp)
                raise DecodeError(f"{what}.{name}",
                                  f"{len(values[name])} elements, cp is {values['cp']}")
    if "pbPropagationToken" in values and \
            len(values["pbPropagationToken"]) != values["cbPropagationToken"]:
        raise DecodeError(f"{what}.pbPropagationToken",
                          f"{len(values['pbPropagationToken'])} octets, cbPropagationToken is "
                          f"{values['cbPropagationToken']}")
    return call_type(**values)


def decode_response(call_type: type[c.Call], data: bytes, ndr64: bool = False) -> c.Result:
    """The typed result whose [out] parameters (and status) ``data`` encodes."""
    key = _key(call_type)
    result_type = c.RESULTS[call_type]
    what = result_type.__name__
    if ndr64 and key[0] == c.QMMGMT:
        raise DecodeError(what, "qmmgmt is NDR only (MS-MQMR 2.2)")
    values = _decode_into(_parse(RESPONSES[key], bytes(data), ndr64, what), what)
    status = values.pop("ErrorCode", 0)
    return result_type(status=status, **values)


def referent_offsets(encode: Callable[[], bytes]) -> set[int]:
    """The offsets of the octets of non-NULL referent IDs in ``encode()``'s output: encodes
    twice with two numbering bases and returns where the outputs differ (used to compare with
    encoders that number referents differently)."""
    global REFERENT_BASE
    first = encode()
    saved = REFERENT_BASE
    try:
        REFERENT_BASE = 0xA5A5A5A5  # every octet differs from the first numbering's
        second = encode()
    finally:
        REFERENT_BASE = saved
    return {i for i, (a, b) in enumerate(zip(first, second, strict=True)) if a != b}
