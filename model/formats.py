"""Queue format names (MS-MQMQ 2.1) and the QUEUE_FORMAT structure (MS-MQMQ 2.2.6-2.2.11) as
typed values that the model, the wire codec and the test suite share; and MS-MQMR's MGMT_OBJECT
(MS-MQMR 2.2.1.2, 2.2.2.1), which carries a QUEUE_FORMAT.

Sources (facts only, restated in our words; the section of each fact sits beside its code):

* MS-MQMQ 2.1.1 Path Names, 2.1.2 Direct, 2.1.3 Public, 2.1.4 Private, 2.1.5 Distribution List,
  2.1.6 Machine / Connector / Multicast and 2.1.7 Multiple-Element Format Names: the grammar.
* MS-MQMQ 2.2.6 QUEUE_FORMAT_TYPE, 2.2.7 QUEUE_FORMAT, 2.2.8 OBJECTID, 2.2.9 DL_ID,
  2.2.10 MULTICAST_ID, 2.2.11 QUEUE_SUFFIX_TYPE: the structure and its rules.
* MS-MQMR 2.2.1.2 MGMT_OBJECT and 2.2.2.1 MgmtObjectType (2.2.1.1, 2.2.1.3-2.2.1.5 only point
  back to MS-MQMQ); MS-MQRR 2.2.3: the subset of QUEUE_FORMAT that RemoteRead supports.

How the pieces fit: a format name is text (``PUBLIC=...``, ``DIRECT=TCP:...``);
``parse_format_name`` turns it into a ``FormatName`` value and ``str()`` turns it back into the
canonical text. A ``QueueFormat`` is the RPC structure; ``to_queue_format`` and
``from_queue_format`` convert between the two for every kind that has both forms (a
multiple-element name has no QUEUE_FORMAT; QUEUE_FORMAT_TYPE_UNKNOWN has no format name).
``FormatName.__post_init__`` holds the format-name rules, so a value that exists is well formed
whether it came from the parser, a conversion or a constructor; ``QueueFormat.validate`` and
``MgmtObject.validate`` report broken structures as a one-line reason and never raise.

Choices where the documents leave room (each marked "choice" at its code):

1. Case. ABNF quoted strings are case-insensitive (RFC 5234), so keywords (``DIRECT=``, ``TCP``,
   ``PRIVATE$``, ``;JOURNAL``) and GUID hex digits are matched in any case. Path names (computer
   names, queue and subqueue names, HTTP hosts, DL domains) keep the spelling they were written
   with, for ``str()``, but compare case-insensitively, character by character: MS-MQDMPR
   3.1.7.3.8 treats two format names that differ only in case as the same element.
2. ``m_pDirectID`` holds the direct name without ``DIRECT=`` and without the ``;JOURNAL``,
   ``;DEADLETTER`` or ``;DEADXACT`` suffix, which ``m_SuffixAndFlags`` carries;
   ``m_pDirectSubqueueID`` keeps its ``;subqueue`` element (MS-MQMQ 2.2.7 requires it there).
   ``from_queue_format`` also accepts a direct string that repeats the structure's suffix.
3. ``MULTICAST_ID.m_address`` holds the IPv4 address as a Windows ``in_addr`` does (network
   byte order in memory): the first dotted octet is the least significant byte of the integer.
4. MS-MQMQ 2.1.2's grammar names the SPX-over-IPX protocol ``IPX``; MSMQ's own documentation
   writes ``SPX``. Both are accepted, as two spellings (``DirectProtocol.IPX`` / ``.SPX``).
5. HTTP/HTTPS names may separate ``/MSMQ``, ``PRIVATE$`` and the queue name with ``/`` as well
   as ``\\``; the value stores ``\\``, the separator of MS-MQMQ 2.1.2's grammar.
6. ``PUBLIC=guid;JOURNAL`` is accepted although 2.1.3's grammar shows no suffix: 2.2.7 allows
   a journal suffix with m_qft PUBLIC. ``MACHINE=`` needs a suffix (2.2.7 forbids none with
   m_qft MACHINE); ``CONNECTOR=guid;XACTONLY`` comes from 2.2.7 / 2.2.11 alone.
7. Queue, subqueue, computer and domain names take the ASCII characters the grammar lists plus
   any printable non-ASCII character (Windows queue names are Unicode; the ABNF is ASCII only).
8. Multicast ports: 2.1.6's Port rule is garbled (it cannot spell 20-99); we take 0-65535
   without leading zeros. TCP addresses are dotted IPv4 (2.1.2 says "IP address").
9. Canonical text: keywords upper case, GUIDs lower case, private queue numbers as 8 lower-case
   hex digits, names as written.
"""

from __future__ import annotations

import enum
import functools
import re
import uuid
from dataclasses import dataclass, field

__all__ = [
    "QueueFormatType", "QueueSuffixType", "QUEUE_FORMAT_FLAG_NOT_SYSTEM",
    "QUEUE_FORMAT_FLAG_SYSTEM", "QUEUE_FORMAT_SUFFIX_MASK", "QUEUE_FORMAT_FLAGS_MASK",
    "ObjectId", "DlId", "MulticastId", "QueueFormat", "MgmtObjectType", "MgmtObject",
    "FormatNameKind", "DirectProtocol", "FormatName", "FormatNameError", "parse_format_name",
    "to_queue_format", "from_queue_format", "REMOTEREAD_QUEUE_FORMAT_TYPES",
    "REMOTEREAD_DIRECT_PROTOCOLS", "remoteread_unsupported", "multicast_address_to_int",
    "multicast_address_from_int", "SUFFIX_RULES", "UNION_ARMS",
]

_DWORD_MAX = 0xFFFFFFFF


# ============================================================================ the structure


class QueueFormatType(enum.IntEnum):
    """MS-MQMQ 2.2.6 QUEUE_FORMAT_TYPE: the discriminant ``m_qft`` of QUEUE_FORMAT."""

    QUEUE_FORMAT_TYPE_UNKNOWN = 0
    QUEUE_FORMAT_TYPE_PUBLIC = 1
    QUEUE_FORMAT_TYPE_PRIVATE = 2
    QUEUE_FORMAT_TYPE_DIRECT = 3
    QUEUE_FORMAT_TYPE_MACHINE = 4
    QUEUE_FORMAT_TYPE_CONNECTOR = 5
    QUEUE_FORMAT_TYPE_DL = 6
    QUEUE_FORMAT_TYPE_MULTICAST = 7
    QUEUE_FORMAT_TYPE_SUBQUEUE = 8  # MSMQ 4.0 and later


class QueueSuffixType(enum.IntEnum):
    """MS-MQMQ 2.2.11 QUEUE_SUFFIX_TYPE: the low 4 bits of ``m_SuffixAndFlags``."""

    QUEUE_SUFFIX_TYPE_NONE = 0
    QUEUE_SUFFIX_TYPE_JOURNAL = 1  # the queue's journal (or the computer journal)
    QUEUE_SUFFIX_TYPE_DEADLETTER = 2  # the computer's non-transactional dead-letter queue
    QUEUE_SUFFIX_TYPE_DEADXACT = 3  # the computer's transactional dead-letter queue
    QUEUE_SUFFIX_TYPE_XACTONLY = 4  # the transactional queue of a connector
    QUEUE_SUFFIX_TYPE_SUBQUEUE = 5  # a subqueue named in the direct string


_QFT = QueueFormatType
_SFX = QueueSuffixType

# MS-MQMQ 2.2.7: m_SuffixAndFlags = Flags (high 4 bits) | Suffix type (low 4 bits)
QUEUE_FORMAT_SUFFIX_MASK = 0x0F
QUEUE_FORMAT_FLAGS_MASK = 0xF0
QUEUE_FORMAT_FLAG_NOT_SYSTEM = 0x00
QUEUE_FORMAT_FLAG_SYSTEM = 0x80


@dataclass(frozen=True)
class _SuffixRule:
    """One row of MS-MQMQ 2.2.7's suffix table."""

    flags: int | None  # the value the Flags subfield MUST have; None: the row states none
    m_qft_must_be: frozenset[int] | None  # "The m_qft member MUST be set to ..."
    m_qft_must_not_be: frozenset[int]  # "The m_qft member MUST NOT be set to ..."


def _qfts(*types: QueueFormatType) -> frozenset[int]:
    return frozenset(int(t) for t in types)


#: MS-MQMQ 2.2.7, the Suffix type table, row by row
SUFFIX_RULES: dict[QueueSuffixType, _SuffixRule] = {
    _SFX.QUEUE_SUFFIX_TYPE_NONE: _SuffixRule(
        QUEUE_FORMAT_FLAG_NOT_SYSTEM, None, _qfts(_QFT.QUEUE_FORMAT_TYPE_MACHINE)),
    _SFX.QUEUE_SUFFIX_TYPE_JOURNAL: _SuffixRule(
        QUEUE_FORMAT_FLAG_SYSTEM, None,
        _qfts(_QFT.QUEUE_FORMAT_TYPE_CONNECTOR, _QFT.QUEUE_FORMAT_TYPE_DL,
              _QFT.QUEUE_FORMAT_TYPE_MULTICAST)),
    _SFX.QUEUE_SUFFIX_TYPE_DEADLETTER: _SuffixRule(
        QUEUE_FORMAT_FLAG_SYSTEM, None,
        _qfts(_QFT.QUEUE_FORMAT_TYPE_PUBLIC, _QFT.QUEUE_FORMAT_TYPE_PRIVATE,
              _QFT.QUEUE_FORMAT_TYPE_CONNECTOR, _QFT.QUEUE_FORMAT_TYPE_DL,
              _QFT.QUEUE_FORMAT_TYPE_MULTICAST)),
    _SFX.QUEUE_SUFFIX_TYPE_DEADXACT: _SuffixRule(
        QUEUE_FORMAT_FLAG_SYSTEM,
        _qfts(_QFT.QUEUE_FORMAT_TYPE_DIRECT, _QFT.QUEUE_FORMAT_TYPE_MACHINE), frozenset()),
    _SFX.QUEUE_SUFFIX_TYPE_XACTONLY: _SuffixRule(
        None, _qfts(_QFT.QUEUE_FORMAT_TYPE_CONNECTOR), frozenset()),
    _SFX.QUEUE_SUFFIX_TYPE_SUBQUEUE: _SuffixRule(
        QUEUE_FORMAT_FLAG_NOT_SYSTEM, _qfts(_QFT.QUEUE_FORMAT_TYPE_SUBQUEUE), frozenset()),
}


@dataclass(frozen=True)
class ObjectId:
    """MS-MQMQ 2.2.8 OBJECTID (MS-MQMR 2.2.1.4). In a private queue's QUEUE_FORMAT the Lineage
    is the computer's GUID and the Uniquifier the queue number (MS-MQMQ 2.1.4)."""

    Lineage: uuid.UUID
    Uniquifier: int  # DWORD


@dataclass(frozen=True)
class DlId:
    """MS-MQMQ 2.2.9 DL_ID (MS-MQMR 2.2.1.1): a distribution list's GUID and, optionally, its
    Active Directory domain."""

    m_DlGuid: uuid.UUID
    m_pwzDomain: str | None = None


@dataclass(frozen=True)
class MulticastId:
    """MS-MQMQ 2.2.10 MULTICAST_ID (MS-MQMR 2.2.1.3): IPv4 address and port, both ULONG.
    ``m_address`` holds the octets in network order in memory (choice 3 of the module doc)."""

    m_address: int
    m_port: int


#: MS-MQMQ 2.2.7: the union member that each m_qft selects, and the Python type it holds here
UNION_ARMS: dict[QueueFormatType, tuple[str, type] | None] = {
    _QFT.QUEUE_FORMAT_TYPE_UNKNOWN: None,
    _QFT.QUEUE_FORMAT_TYPE_PUBLIC: ("m_gPublicID", uuid.UUID),
    _QFT.QUEUE_FORMAT_TYPE_PRIVATE: ("m_oPrivateID", ObjectId),
    _QFT.QUEUE_FORMAT_TYPE_DIRECT: ("m_pDirectID", str),
    _QFT.QUEUE_FORMAT_TYPE_MACHINE: ("m_gMachineID", uuid.UUID),
    _QFT.QUEUE_FORMAT_TYPE_CONNECTOR: ("m_GConnectorID", uuid.UUID),
    _QFT.QUEUE_FORMAT_TYPE_DL: ("m_DlID", DlId),
    _QFT.QUEUE_FORMAT_TYPE_MULTICAST: ("m_MulticastID", MulticastId),
    _QFT.QUEUE_FORMAT_TYPE_SUBQUEUE: ("m_pDirectSubqueueID", str),
}

QueueFormatValue = uuid.UUID | ObjectId | str | DlId | MulticastId | None


@dataclass(frozen=True)
class QueueFormat:
    """MS-MQMQ 2.2.7 QUEUE_FORMAT (MS-MQMR 2.2.1.5). ``value`` is the union member that
    ``m_qft`` selects (see ``UNION_ARMS``); the properties named after the members read it."""

    m_qft: int
    m_SuffixAndFlags: int = 0
    m_reserved: int = 0  # padding: clients SHOULD send 0, servers MUST NOT use it (2.2.7)
    value: QueueFormatValue = None

    @property
    def suffix_type(self) -> int:
        return self.m_SuffixAndFlags & QUEUE_FORMAT_SUFFIX_MASK

    @property
    def flags(self) -> int:
        return self.m_SuffixAndFlags & QUEUE_FORMAT_FLAGS_MASK

    def _arm(self, qft: QueueFormatType):
        return self.value if self.m_qft == qft else None

    @property
    def m_gPublicID(self) -> uuid.UUID | None:
        return self._arm(_QFT.QUEUE_FORMAT_TYPE_PUBLIC)

    @property
    def m_oPrivateID(self) -> ObjectId | None:
        return self._arm(_QFT.QUEUE_FORMAT_TYPE_PRIVATE)

    @property
    def m_pDirectID(self) -> str | None:
        return self._arm(_QFT.QUEUE_FORMAT_TYPE_DIRECT)

    @property
    def m_gMachineID(self) -> uuid.UUID | None:
        return self._arm(_QFT.QUEUE_FORMAT_TYPE_MACHINE)

    @property
    def m_GConnectorID(self) -> uuid.UUID | None:
        return self._arm(_QFT.QUEUE_FORMAT_TYPE_CONNECTOR)

    @property
    def m_DlID(self) -> DlId | None:
        return self._arm(_QFT.QUEUE_FORMAT_TYPE_DL)

    @property
    def m_MulticastID(self) -> MulticastId | None:
        return self._arm(_QFT.QUEUE_FORMAT_TYPE_MULTICAST)

    @property
    def m_pDirectSubqueueID(self) -> str | None:
        return self._arm(_QFT.QUEUE_FORMAT_TYPE_SUBQUEUE)

    def validate(self) -> str | None:
        """None if the structure obeys MS-MQMQ 2.2.7-2.2.10, else a one-line reason naming the
        rule. For DIRECT and SUBQUEUE the string, with the suffix of m_SuffixAndFlags, must
        form a direct format name (MS-MQMQ 2.1.2; choice 2 of the module doc). Never raises."""
        reason = self._structure_reason()
        if reason is None and self.m_qft in (_QFT.QUEUE_FORMAT_TYPE_DIRECT,
                                             _QFT.QUEUE_FORMAT_TYPE_SUBQUEUE):
            try:
                _direct_from_queue_format(self)
            except FormatNameError as e:
                return str(e)
        return reason

    def _structure_reason(self) -> str | None:
        """The rules of MS-MQMQ 2.2.7-2.2.10 that need no format-name grammar."""
        qft, saf = self.m_qft, self.m_SuffixAndFlags
        # MS-MQMQ 2.2.7: m_qft MUST be one of the QUEUE_FORMAT_TYPE values (2.2.6)
        if not _is_uint(qft, 0xFF) or qft not in _QFT._value2member_map_:
            return f"m_qft {qft!r} is not a QUEUE_FORMAT_TYPE value (MS-MQMQ 2.2.6, 2.2.7)"
        qft = _QFT(qft)
        if not _is_uint(saf, 0xFF):
            return f"m_SuffixAndFlags {saf!r} is not an unsigned char (MS-MQMQ 2.2.7)"
        if not _is_uint(self.m_reserved, 0xFFFF):
            return f"m_reserved {self.m_reserved!r} is not an unsigned short (MS-MQMQ 2.2.7)"
        suffix, flags = saf & QUEUE_FORMAT_SUFFIX_MASK, saf & QUEUE_FORMAT_FLAGS_MASK
        # MS-MQMQ 2.2.7: the Suffix type and Flags subfields take the values of its tables
        if suffix not in _SFX._value2member_map_:
            return f"suffix type {suffix:#04x} is not a QUEUE_SUFFIX_TYPE value (MS-MQMQ 2.2.7)"
        if flags not in (QUEUE_FORMAT_FLAG_NOT_SYSTEM, QUEUE_FORMAT_FLAG_SYSTEM):
            return f"Flags {flags:#04x} is neither 0x00 nor 0x80 (MS-MQMQ 2.2.7)"
        suffix = _SFX(suffix)
        rule = SUFFIX_RULES[suffix]
        if rule.flags is not None and flags != rule.flags:
            return (f"{suffix.name} needs Flags {rule.flags:#04x}, not {flags:#04x} "
                    f"(MS-MQMQ 2.2.7)")
        if (rule.m_qft_must_be is not None and qft not in rule.m_qft_must_be) or (
                qft in rule.m_qft_must_not_be):
            return f"{suffix.name} is not allowed with m_qft {qft.name} (MS-MQMQ 2.2.7)"
        return _union_reason(qft, self.value)


def _union_reason(qft: QueueFormatType, value: object) -> str | None:
    """MS-MQMQ 2.2.7-2.2.10: the union member selected by m_qft, with its field types."""
    arm = UNION_ARMS[qft]
    if arm is None:
        return None if value is None else f"{qft.name} selects no union member (MS-MQMQ 2.2.7)"
    name, kind = arm
    if not isinstance(value, kind):
        return f"{qft.name} needs {name} of type {kind.__name__} (MS-MQMQ 2.2.7)"
    if isinstance(value, ObjectId):  # MS-MQMQ 2.2.8
        if not isinstance(value.Lineage, uuid.UUID) or not _is_uint(value.Uniquifier, _DWORD_MAX):
            return "m_oPrivateID needs a GUID Lineage and a DWORD Uniquifier (MS-MQMQ 2.2.8)"
    elif isinstance(value, DlId):  # MS-MQMQ 2.2.9
        if not isinstance(value.m_DlGuid, uuid.UUID):
            return "m_DlID.m_DlGuid must be a GUID (MS-MQMQ 2.2.9)"
        if value.m_pwzDomain is not None and not isinstance(value.m_pwzDomain, str):
            return "m_DlID.m_pwzDomain must be a string (MS-MQMQ 2.2.9)"
    elif isinstance(value, MulticastId):  # MS-MQMQ 2.2.10
        if not (_is_uint(value.m_address, _DWORD_MAX) and _is_uint(value.m_port, _DWORD_MAX)):
            return "m_MulticastID needs ULONG m_address and m_port (MS-MQMQ 2.2.10)"
    return None


def _is_uint(v: object, top: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= top


# ============================================================================ MGMT_OBJECT


class MgmtObjectType(enum.IntEnum):
    """MS-MQMR 2.2.2.1 MgmtObjectType: the discriminant of MGMT_OBJECT."""

    MGMT_MACHINE = 1
    MGMT_QUEUE = 2
    MGMT_SESSION = 3


@dataclass(frozen=True)
class MgmtObject:
    """MS-MQMR 2.2.1.2 MGMT_OBJECT: a machine, a queue (``pQueueFormat``) or a session.
    ``Reserved1`` / ``Reserved2`` are the DWORD arms for MGMT_MACHINE / MGMT_SESSION."""

    type: int
    pQueueFormat: QueueFormat | None = None
    Reserved1: int = 0
    Reserved2: int = 0

    def validate(self) -> str | None:
        """None if the structure obeys MS-MQMR 2.2.1.2 (and, for a queue, MS-MQMQ 2.2.7), else
        a one-line reason. Never raises."""
        # MS-MQMR/2.2.1.2/R1: type MUST be 1, 2 or 3 (MS-MQMR 2.2.2.1)
        if not _is_uint(self.type, _DWORD_MAX) or self.type not in (1, 2, 3):
            return f"type {self.type!r} is not 1, 2 or 3 (MS-MQMR 2.2.1.2, 2.2.2.1)"
        if self.type == MgmtObjectType.MGMT_QUEUE:
            if not isinstance(self.pQueueFormat, QueueFormat):
                return "MGMT_QUEUE needs pQueueFormat, a QUEUE_FORMAT (MS-MQMR 2.2.1.2)"
            reason = self.pQueueFormat.validate()
            return None if reason is None else f"pQueueFormat: {reason}"
        if self.pQueueFormat is not None:
            return (f"{MgmtObjectType(self.type).name} selects no pQueueFormat "
                    f"(MS-MQMR 2.2.1.2)")
        reserved = self.Reserved1 if self.type == MgmtObjectType.MGMT_MACHINE else self.Reserved2
        if not _is_uint(reserved, _DWORD_MAX):
            return f"Reserved {reserved!r} is not a 32-bit unsigned integer (MS-MQMR 2.2.1.2)"
        return None


# ============================================================================ format names


class FormatNameError(ValueError):
    """A malformed format name, or a value with no format-name form; the message is one line
    and names the rule (MS-MQMQ section)."""


class FormatNameKind(enum.Enum):
    """The kinds of format name of MS-MQMQ 2.1, by their keyword."""

    PUBLIC = "PUBLIC"  # 2.1.3
    PRIVATE = "PRIVATE"  # 2.1.4
    DIRECT = "DIRECT"  # 2.1.2
    DL = "DL"  # 2.1.5 distribution list
    MACHINE = "MACHINE"  # 2.1.6
    CONNECTOR = "CONNECTOR"  # 2.1.6
    MULTICAST = "MULTICAST"  # 2.1.6
    MULTIPLE_ELEMENT = "MULTIPLE-ELEMENT"  # 2.1.7 (no keyword: elements joined by commas)


class DirectProtocol(enum.Enum):
    """MS-MQMQ 2.1.2 Protocol of a direct format name (choice 4: IPX and SPX both)."""

    OS = "OS"  # a computer name of the operating system
    TCP = "TCP"  # an IP address
    SPX = "SPX"  # SPX over IPX: network number ":" host number
    IPX = "IPX"
    HTTP = "HTTP"  # "//" Host [":" Port] "/MSMQ"
    HTTPS = "HTTPS"


_KINDS = {k.value: k for k in FormatNameKind if k is not FormatNameKind.MULTIPLE_ELEMENT}
_PROTOCOLS = {p.value: p for p in DirectProtocol}
_HTTP_PROTOCOLS = frozenset({DirectProtocol.HTTP, DirectProtocol.HTTPS})
_HTTP_DEFAULT_PORT = {DirectProtocol.HTTP: 80, DirectProtocol.HTTPS: 443}  # MS-MQMQ 2.1.2

#: the suffix keywords of format names and the QUEUE_SUFFIX_TYPE each stands for (2.2.11)
_SUFFIX_KEYWORDS = {
    "JOURNAL": _SFX.QUEUE_SUFFIX_TYPE_JOURNAL,
    "DEADLETTER": _SFX.QUEUE_SUFFIX_TYPE_DEADLETTER,
    "DEADXACT": _SFX.QUEUE_SUFFIX_TYPE_DEADXACT,
    "XACTONLY": _SFX.QUEUE_SUFFIX_TYPE_XACTONLY,
}
_SUFFIX_TEXT = {v: k for k, v in _SUFFIX_KEYWORDS.items()}
_SYSTEM_SUFFIXES = frozenset({_SFX.QUEUE_SUFFIX_TYPE_JOURNAL, _SFX.QUEUE_SUFFIX_TYPE_DEADLETTER,
                              _SFX.QUEUE_SUFFIX_TYPE_DEADXACT})
_NONE = _SFX.QUEUE_SUFFIX_TYPE_NONE

#: which suffixes each kind of format name takes (MS-MQMQ 2.1.2-2.1.6 with 2.2.7's table)
_KIND_SUFFIXES: dict[FormatNameKind, frozenset[QueueSuffixType]] = {
    FormatNameKind.PUBLIC: frozenset({_NONE, _SFX.QUEUE_SUFFIX_TYPE_JOURNAL}),
    FormatNameKind.PRIVATE: frozenset({_NONE, _SFX.QUEUE_SUFFIX_TYPE_JOURNAL}),
    FormatNameKind.DIRECT: frozenset({_NONE, *_SYSTEM_SUFFIXES, _SFX.QUEUE_SUFFIX_TYPE_SUBQUEUE}),
    FormatNameKind.MACHINE: _SYSTEM_SUFFIXES,
    FormatNameKind.CONNECTOR: frozenset({_NONE, _SFX.QUEUE_SUFFIX_TYPE_XACTONLY}),
    FormatNameKind.DL: frozenset({_NONE}),
    FormatNameKind.MULTICAST: frozenset({_NONE}),
    FormatNameKind.MULTIPLE_ELEMENT: frozenset({_NONE}),
}

#: the fields that identify each kind; every other identifying field must stay None
_KIND_FIELDS: dict[FormatNameKind, frozenset[str]] = {
    FormatNameKind.PUBLIC: frozenset({"guid"}),
    FormatNameKind.PRIVATE: frozenset({"guid", "queue_number"}),
    FormatNameKind.DIRECT: frozenset({"protocol", "address", "queue_path", "subqueue"}),
    FormatNameKind.MACHINE: frozenset({"guid"}),
    FormatNameKind.CONNECTOR: frozenset({"guid"}),
    FormatNameKind.DL: frozenset({"guid", "domain"}),
    FormatNameKind.MULTICAST: frozenset({"multicast_address", "port"}),
    FormatNameKind.MULTIPLE_ELEMENT: frozenset(),
}
_OPTIONAL_FIELDS = frozenset({"domain", "subqueue"})
_ID_FIELDS = ("guid", "queue_number", "domain", "protocol", "address", "queue_path",
              "multicast_address", "port", "subqueue")

#: MS-MQMQ 2.1.7: the kinds a multiple-element name may hold
_ELEMENT_KINDS = frozenset({FormatNameKind.DIRECT, FormatNameKind.PUBLIC,
                            FormatNameKind.PRIVATE, FormatNameKind.DL,
                            FormatNameKind.CONNECTOR, FormatNameKind.MULTICAST})

# --- character classes and token patterns --------------------------------------------------

#: MS-MQMQ 2.1.1 QueueName / Subqueue (MSMQ 2.0 and later): %x21 / %x23-2A / %x2D-3A /
#: %x3C-5B / %x5D-7F -- no space, '"', '+', ',', ';' or '\'
_NAME_ASCII = frozenset(chr(c) for c in [0x21, *range(0x23, 0x2B), *range(0x2D, 0x3B),
                                         *range(0x3C, 0x5C), *range(0x5D, 0x80)])
#: MS-MQMQ 2.1.1 Computer and 2.1.5 DomainName are VCHAR (%x21-7E); we leave out the
#: characters that separate parts of a format name: ',' ';' '\'
_HOST_ASCII = frozenset(chr(c) for c in range(0x21, 0x7F)) - set(",;\\")
_HTTP_HOST_ASCII = _HOST_ASCII - set(":/")
_DOMAIN_ASCII = _HOST_ASCII - set("@")

_MAX_QUEUE_NAME = 124  # MS-MQMQ 2.1.1
_MAX_SUBQUEUE = 32  # MS-MQMQ 2.1.1
_MAX_COMPUTER = 256  # MS-MQMQ 2.1.1
_MAX_DOMAIN = 255  # MS-MQMQ 2.1.5

_HEX = "[0-9A-Fa-f]"
#: MS-MQMQ 2.1.3 Guid = 8HexDig "-" 3(4HexDig "-") 12HexDig
_GUID = re.compile(rf"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}")
_DEC_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])"
_IPV4 = re.compile(rf"{_DEC_OCTET}(?:\.{_DEC_OCTET}){{3}}")
#: MS-MQMQ 2.1.6 Address: first octet 224-239 (an IPv4 multicast address)
_MULTICAST_IPV4 = re.compile(rf"(?:22[4-9]|23[0-9])(?:\.{_DEC_OCTET}){{3}}")
_PORT = re.compile(r"0|[1-9][0-9]{0,4}")
#: MS-MQMQ 2.1.2 IPX: network number ":" host number (IPX net 4 bytes, node 6 bytes)
_SPX_ADDRESS = re.compile(rf"{_HEX}{{1,8}}:{_HEX}{{1,12}}")
#: MS-MQMQ 2.1.2 HTTP/HTTPS ProtocolAddressSpecification = "//" Host [":" Port] "/MSMQ"
_HTTP_ADDRESS = re.compile(r"//(?P<host>[^:/\\;,]+)(?::(?P<port>[0-9]+))?/msmq", re.IGNORECASE)
_PRIVATE_PREFIX = "PRIVATE$"
_SYSTEM_PATH = "SYSTEM$"


def _chars_ok(text: str, ascii_set: frozenset[str]) -> bool:
    """Every character is in the grammar's ASCII set or is printable non-ASCII (choice 7)."""
    return all(c in ascii_set or (c > "\x7f" and c.isprintable()) for c in text)


def _is_name(text: str, top: int) -> bool:
    return 1 <= len(text) <= top and _chars_ok(text, _NAME_ASCII)


def _fold(text: str | None) -> str | None:
    """Case-insensitive comparison key, one character at a time (choice 1)."""
    if text is None:
        return None
    return "".join(u if len(u := c.upper()) == 1 else c for c in text)


def _show(text: str, limit: int = 60) -> str:
    """The offending text, quoted and shortened so that a message stays one line."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _port_ok(text: str) -> bool:
    return _PORT.fullmatch(text) is not None and int(text) <= 0xFFFF


def _direct_address_reason(protocol: DirectProtocol, address: str) -> str | None:
    """MS-MQMQ 2.1.2, the ProtocolAddressSpecification table."""
    if protocol is DirectProtocol.OS:
        if not (1 <= len(address) <= _MAX_COMPUTER and _chars_ok(address, _HOST_ASCII)):
            return (f"OS needs a computer name of 1-256 characters, not {_show(address)} "
                    f"(MS-MQMQ 2.1.1, 2.1.2)")
    elif protocol is DirectProtocol.TCP:
        if _IPV4.fullmatch(address) is None:
            return f"TCP needs a dotted IPv4 address, not {_show(address)} (MS-MQMQ 2.1.2)"
    elif protocol in (DirectProtocol.SPX, DirectProtocol.IPX):
        if _SPX_ADDRESS.fullmatch(address) is None:
            return (f"{protocol.value} needs network number ':' host number in hex, "
                    f"not {_show(address)} (MS-MQMQ 2.1.2)")
    else:
        m = _HTTP_ADDRESS.fullmatch(address)
        if m is None or not (len(m["host"]) <= _MAX_COMPUTER
                             and _chars_ok(m["host"], _HTTP_HOST_ASCII)):
            return (f"{protocol.value} needs '//' Host [':' Port] '/MSMQ', not {_show(address)} "
                    f"(MS-MQMQ 2.1.2)")
        if m["port"] is not None and not _port_ok(m["port"]):
            return f"{protocol.value} port {m['port']!r} is not 0-65535 (MS-MQMQ 2.1.2)"
    return None


def _queue_path_reason(path: str) -> str | None:
    """MS-MQMQ 2.1.1 / 2.1.2: SYSTEM$, PRIVATE$\\QueueName or QueueName."""
    if path.upper() == _SYSTEM_PATH:
        return None
    name = path
    if path.upper().startswith(_PRIVATE_PREFIX + "\\"):
        name = path[len(_PRIVATE_PREFIX) + 1:]
    elif path.upper() == _PRIVATE_PREFIX:
        return "PRIVATE$ needs '\\' and a queue name (MS-MQMQ 2.1.2)"
    if not _is_name(name, _MAX_QUEUE_NAME):
        return (f"queue name {_show(name)} is not 1-124 characters without space, "
                f"'\"', '+', ',', ';' or '\\' (MS-MQMQ 2.1.1)")
    return None


@dataclass(frozen=True, eq=False)
class FormatName:
    """A format name (MS-MQMQ 2.1), parsed and checked. Build one with ``parse_format_name``
    or with the constructor (which checks the same rules and raises ``FormatNameError``).

    Identifying parts by kind: PUBLIC ``guid`` (the queue's); PRIVATE ``guid`` (the computer's)
    and ``queue_number``; DIRECT ``protocol``, ``address`` (the ProtocolAddressSpecification
    as written) and ``queue_path`` (``orders``, ``private$\\orders`` or ``SYSTEM$``), with an
    optional ``subqueue``; MACHINE and CONNECTOR ``guid``; DL ``guid`` and optional ``domain``;
    MULTICAST ``multicast_address`` (dotted) and ``port``; MULTIPLE_ELEMENT ``elements``.
    ``suffix`` is the QUEUE_SUFFIX_TYPE the name carries (SUBQUEUE exactly when ``subqueue`` is
    set). Equality and hashing fold the case of path names (choice 1 of the module doc).
    """

    kind: FormatNameKind
    guid: uuid.UUID | None = None
    queue_number: int | None = None
    domain: str | None = None
    protocol: DirectProtocol | None = None
    address: str | None = None
    queue_path: str | None = None
    multicast_address: str | None = None
    port: int | None = None
    suffix: QueueSuffixType = QueueSuffixType.QUEUE_SUFFIX_TYPE_NONE
    subqueue: str | None = None
    elements: tuple[FormatName, ...] = field(default=())

    def __post_init__(self) -> None:
        if isinstance(self.elements, list):
            object.__setattr__(self, "elements", tuple(self.elements))
        path = self.queue_path
        if (self.protocol in _HTTP_PROTOCOLS and isinstance(path, str)
                and path[:9].upper() == _PRIVATE_PREFIX + "/"):
            # choice 5: an HTTP name may write PRIVATE$/name; we keep PRIVATE$\name
            object.__setattr__(self, "queue_path", f"{path[:8]}\\{path[9:]}")
        reason = self._reason()
        if reason is not None:
            raise FormatNameError(reason)

    # ----------------------------------------------------------------- the rules
    def _reason(self) -> str | None:
        kind = self.kind
        if not isinstance(kind, FormatNameKind):
            return f"kind {kind!r} is not a FormatNameKind"
        if not isinstance(self.suffix, QueueSuffixType):
            return f"suffix {self.suffix!r} is not a QueueSuffixType"
        wanted = _KIND_FIELDS[kind]
        for name in _ID_FIELDS:
            present = getattr(self, name) is not None
            if present and name not in wanted:
                return f"a {kind.value} format name has no {name}"
            if not present and name in wanted and name not in _OPTIONAL_FIELDS:
                return f"a {kind.value} format name needs {name}"
        if "guid" in wanted and not isinstance(self.guid, uuid.UUID):
            return f"guid {self.guid!r} is not a uuid.UUID"
        if kind is not FormatNameKind.MULTIPLE_ELEMENT and self.elements:
            return f"a {kind.value} format name has no elements"
        if self.suffix not in _KIND_SUFFIXES[kind]:
            return self._suffix_reason()
        check = {FormatNameKind.PRIVATE: self._private_reason,
                 FormatNameKind.DIRECT: self._direct_reason,
                 FormatNameKind.DL: self._dl_reason,
                 FormatNameKind.MULTICAST: self._multicast_reason,
                 FormatNameKind.MULTIPLE_ELEMENT: self._multiple_element_reason}.get(kind)
        return check() if check is not None else None

    def _suffix_reason(self) -> str:
        kind, text = self.kind, _SUFFIX_TEXT.get(self.suffix, self.suffix.name)
        if kind is FormatNameKind.MACHINE and self.suffix is _NONE:
            # MS-MQMQ 2.2.7: QUEUE_SUFFIX_TYPE_NONE MUST NOT go with m_qft MACHINE
            return "MACHINE= needs ;JOURNAL, ;DEADLETTER or ;DEADXACT (MS-MQMQ 2.2.7)"
        allowed = sorted(";" + _SUFFIX_TEXT[s] for s in _KIND_SUFFIXES[kind] if s in _SUFFIX_TEXT)
        section = {FormatNameKind.PUBLIC: "2.1.3", FormatNameKind.PRIVATE: "2.1.4",
                   FormatNameKind.DIRECT: "2.1.2", FormatNameKind.DL: "2.1.5",
                   FormatNameKind.MULTIPLE_ELEMENT: "2.1.7"}.get(kind, "2.1.6")
        takes = f"takes only {', '.join(allowed)}" if allowed else "takes no suffix"
        return f"a {kind.value} format name {takes}, not ;{text} (MS-MQMQ {section}, 2.2.7)"

    def _private_reason(self) -> str | None:
        # MS-MQMQ 2.1.4: 1*8HEXDIG; it is the OBJECTID Uniquifier, a DWORD (2.2.8)
        if not _is_uint(self.queue_number, _DWORD_MAX):
            return f"queue_number {self.queue_number!r} is not 0-0xFFFFFFFF (MS-MQMQ 2.1.4)"
        return None

    def _dl_reason(self) -> str | None:
        d = self.domain
        if d is not None and not (isinstance(d, str) and 1 <= len(d) <= _MAX_DOMAIN
                                  and _chars_ok(d, _DOMAIN_ASCII)):
            return f"DL domain {_show(str(d))} is not 1-255 visible characters (MS-MQMQ 2.1.5)"
        return None

    def _multicast_reason(self) -> str | None:
        a, p = self.multicast_address, self.port
        if not isinstance(a, str) or _MULTICAST_IPV4.fullmatch(a) is None:
            return (f"{_show(str(a))} is not an IPv4 address in 224.0.0.0-239.255.255.255 "
                    f"(MS-MQMQ 2.1.6)")
        if not _is_uint(p, 0xFFFF):
            return f"multicast port {p!r} is not 0-65535 (MS-MQMQ 2.1.6)"
        return None

    def _direct_reason(self) -> str | None:
        if not isinstance(self.protocol, DirectProtocol):
            return f"protocol {self.protocol!r} is not a DirectProtocol"
        if not isinstance(self.address, str) or not isinstance(self.queue_path, str):
            return "address and queue_path must be strings"
        reason = (_direct_address_reason(self.protocol, self.address)
                  or _queue_path_reason(self.queue_path))
        if reason is not None:
            return reason
        system = self.queue_path.upper() == _SYSTEM_PATH
        if system and self.suffix not in _SYSTEM_SUFFIXES:
            # MS-MQMQ 2.1.2 MachineQueuePath: SYSTEM$; then JOURNAL, DEADLETTER or DEADXACT
            return "SYSTEM$ needs ;JOURNAL, ;DEADLETTER or ;DEADXACT (MS-MQMQ 2.1.2)"
        if not system and self.suffix in (_SFX.QUEUE_SUFFIX_TYPE_DEADLETTER,
                                          _SFX.QUEUE_SUFFIX_TYPE_DEADXACT):
            return (f";{_SUFFIX_TEXT[self.suffix]} follows only SYSTEM$; a queue path takes "
                    f";JOURNAL or a subqueue (MS-MQMQ 2.1.2)")
        sub = self.subqueue
        if (sub is not None) != (self.suffix is _SFX.QUEUE_SUFFIX_TYPE_SUBQUEUE):
            return "suffix QUEUE_SUFFIX_TYPE_SUBQUEUE goes with a subqueue name and only with it"
        if sub is not None:
            if system:
                return "SYSTEM$ has no subqueues (MS-MQMQ 2.1.1)"
            if not isinstance(sub, str) or not _is_name(sub, _MAX_SUBQUEUE):
                return (f"subqueue name {_show(str(sub))} is not 1-32 characters without "
                        f"space, '\"', '+', ',', ';' or '\\' (MS-MQMQ 2.1.1)")
            if sub.upper() in _SUFFIX_KEYWORDS:
                return f"subqueue name {sub!r} is a suffix keyword"
        return None

    def _multiple_element_reason(self) -> str | None:
        # MS-MQMQ 2.1.7: two or more elements (one alone is just that format name) of the kinds
        # listed, none of them a read-only queue (a journal or a dead-letter queue)
        if not isinstance(self.elements, tuple) or len(self.elements) < 2:
            return "a multiple-element format name needs two or more elements (MS-MQMQ 2.1.7)"
        for i, e in enumerate(self.elements, 1):
            if not isinstance(e, FormatName) or e.kind not in _ELEMENT_KINDS:
                what = e.kind.value if isinstance(e, FormatName) else type(e).__name__
                return f"element {i}: a {what} name cannot be an element (MS-MQMQ 2.1.7)"
            if e.suffix in _SYSTEM_SUFFIXES:
                return (f"element {i}: ;{_SUFFIX_TEXT[e.suffix]} names a read-only queue, not "
                        f"allowed in a multiple-element format name (MS-MQMQ 2.1.7)")
        return None

    # ----------------------------------------------------------------- text and equality
    def __str__(self) -> str:
        k = self.kind
        if k is FormatNameKind.MULTIPLE_ELEMENT:
            return ",".join(str(e) for e in self.elements)
        if k is FormatNameKind.PRIVATE:
            core = f"PRIVATE={self.guid}\\{self.queue_number:08x}"
        elif k is FormatNameKind.DIRECT:
            core = f"DIRECT={self._direct_id()}"
        elif k is FormatNameKind.DL:
            core = f"DL={self.guid}" + (f"@{self.domain}" if self.domain is not None else "")
        elif k is FormatNameKind.MULTICAST:
            core = f"MULTICAST={self.multicast_address}:{self.port}"
        else:  # PUBLIC, MACHINE, CONNECTOR
            core = f"{k.value}={self.guid}"
        if self.subqueue is not None:
            return f"{core};{self.subqueue}"
        if self.suffix is not _NONE:
            return f"{core};{_SUFFIX_TEXT[self.suffix]}"
        return core

    def _direct_id(self) -> str:
        """Protocol ':' ProtocolAddressSpecification '\\' path, without suffix or subqueue."""
        return f"{self.protocol.value}:{self.address}\\{self.queue_path}"

    def _key(self) -> tuple:
        """What equality and hashing compare; made once per name (a FormatName is immutable)."""
        key = self.__dict__.get("_folded_key")
        if key is None:
            key = (self.kind, self.guid, self.queue_number, _fold(self.domain), self.protocol,
                   _fold(self.address), _fold(self.queue_path), self.multicast_address,
                   self.port, self.suffix, _fold(self.subqueue),
                   tuple(e._key() for e in self.elements))
            object.__setattr__(self, "_folded_key", key)
        return key

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FormatName):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    # ----------------------------------------------------------------- predicates
    # What MS-MQDMPR 3.1.7.1.5 Open Queue and 3.1.7.3.8 Expand Format Name ask of a name.
    @property
    def is_multiple_element(self) -> bool:
        return self.kind is FormatNameKind.MULTIPLE_ELEMENT

    @property
    def is_direct(self) -> bool:
        return self.kind is FormatNameKind.DIRECT

    @property
    def is_public(self) -> bool:
        return self.kind is FormatNameKind.PUBLIC

    @property
    def is_private(self) -> bool:
        """A private format name (PRIVATE=, MS-MQMQ 2.1.4); not a direct name of a private
        queue (see ``is_direct_private_queue``)."""
        return self.kind is FormatNameKind.PRIVATE

    @property
    def is_machine(self) -> bool:
        return self.kind is FormatNameKind.MACHINE

    @property
    def is_connector(self) -> bool:
        return self.kind is FormatNameKind.CONNECTOR

    @property
    def is_distribution_list(self) -> bool:
        return self.kind is FormatNameKind.DL

    @property
    def is_multicast(self) -> bool:
        return self.kind is FormatNameKind.MULTICAST

    @property
    def is_http(self) -> bool:
        """A direct name whose protocol is HTTP or HTTPS."""
        return self.protocol in _HTTP_PROTOCOLS

    @property
    def system(self) -> bool:
        """QUEUE_FORMAT_FLAG_SYSTEM: the name designates a journal or dead-letter queue
        (MS-MQMQ 2.2.7 ties the flag to those suffixes)."""
        return self.suffix in _SYSTEM_SUFFIXES

    @property
    def direct_protocol(self) -> DirectProtocol | None:
        return self.protocol

    @property
    def direct_address(self) -> str | None:
        """The ProtocolAddressSpecification, as written (MS-MQMQ 2.1.2)."""
        return self.address

    @property
    def direct_host(self) -> str | None:
        """The computer the direct name points at: the Host of an HTTP(S) address, else the
        whole address (MS-MQDMPR 3.1.7.1.5 "machineName")."""
        if self.address is None:
            return None
        if self.is_http:
            return _HTTP_ADDRESS.fullmatch(self.address)["host"]
        return self.address

    @property
    def direct_port(self) -> int | None:
        """The HTTP(S) port, or its default 80 / 443 (MS-MQMQ 2.1.2); None for other names."""
        if not self.is_http:
            return None
        port = _HTTP_ADDRESS.fullmatch(self.address)["port"]
        return int(port) if port is not None else _HTTP_DEFAULT_PORT[self.protocol]

    @property
    def direct_queue_path(self) -> str | None:
        """The queue's path part of a direct name: ``orders``, ``private$\\orders`` or
        ``SYSTEM$``; no suffix, no subqueue."""
        return self.queue_path

    @property
    def direct_queue_name(self) -> str | None:
        """The QueueName of a direct name (``orders`` for ``private$\\orders``); None for
        SYSTEM$ and for other kinds."""
        p = self.queue_path
        if p is None or p.upper() == _SYSTEM_PATH:
            return None
        return p[len(_PRIVATE_PREFIX) + 1:] if self.is_direct_private_queue else p

    @property
    def is_direct_private_queue(self) -> bool:
        path = self.queue_path
        return path is not None and path.upper().startswith(_PRIVATE_PREFIX + "\\")

    @property
    def public_queue_guid(self) -> uuid.UUID | None:
        return self.guid if self.kind is FormatNameKind.PUBLIC else None

    @property
    def private_computer_guid(self) -> uuid.UUID | None:
        return self.guid if self.kind is FormatNameKind.PRIVATE else None

    @property
    def private_queue_number(self) -> int | None:
        return self.queue_number

    @property
    def subqueue_name(self) -> str | None:
        return self.subqueue


# ============================================================================ parsing


def parse_format_name(text: str) -> FormatName:
    """Parse a format name (MS-MQMQ 2.1.2-2.1.7). Raises ``FormatNameError`` with a one-line
    reason for malformed input, and no other exception."""
    if not isinstance(text, str):
        raise FormatNameError(f"a format name is a string, not {type(text).__name__}")
    if text == "":
        raise FormatNameError("empty format name (MS-MQMQ 2.1)")
    parts = text.split(",")
    if len(parts) == 1:
        return _parse_single(text)
    elements = []
    for i, part in enumerate(parts, 1):
        if part == "":
            raise FormatNameError(f"element {i} of a multiple-element format name is empty "
                                  f"(MS-MQMQ 2.1.7)")
        try:
            elements.append(_parse_single(part))
        except FormatNameError as e:
            raise FormatNameError(f"element {i}: {e}") from None
    return FormatName(FormatNameKind.MULTIPLE_ELEMENT, elements=tuple(elements))


def _parse_single(text: str) -> FormatName:
    keyword, eq, body = text.partition("=")
    kind = _KINDS.get(keyword.upper()) if eq else None
    if kind is None:
        raise FormatNameError(f"{_show(text)} does not start with PUBLIC=, PRIVATE=, DIRECT=, "
                              f"DL=, MACHINE=, CONNECTOR= or MULTICAST= (MS-MQMQ 2.1)")
    if kind is FormatNameKind.DIRECT:
        return _parse_direct(body)
    core, semi, tail = body.partition(";")
    suffix = _NONE
    if semi:
        suffix = _SUFFIX_KEYWORDS.get(tail.upper())
        if suffix is None:
            raise FormatNameError(f"unknown suffix ;{_show(tail)} after {kind.value}= "
                                  f"(MS-MQMQ 2.1, 2.2.11)")
    if kind is FormatNameKind.MULTICAST:
        address, colon, port = core.rpartition(":")
        if not colon or not _port_ok(port):
            raise FormatNameError(f"MULTICAST= needs Address ':' Port (0-65535), not "
                                  f"{_show(core)} (MS-MQMQ 2.1.6)")
        return FormatName(kind, multicast_address=address, port=int(port), suffix=suffix)
    if kind is FormatNameKind.PRIVATE:
        guid_text, slash, number = core.partition("\\")
        if not slash or re.fullmatch(f"{_HEX}{{1,8}}", number) is None:
            raise FormatNameError(f"PRIVATE= needs ComputerGuid '\\' 1-8 hex digits, not "
                                  f"{_show(core)} (MS-MQMQ 2.1.4)")
        return FormatName(kind, guid=_parse_guid(guid_text, "2.1.4"),
                          queue_number=int(number, 16), suffix=suffix)
    if kind is FormatNameKind.DL:
        guid_text, at, domain = core.partition("@")
        return FormatName(kind, guid=_parse_guid(guid_text, "2.1.5"),
                          domain=domain if at else None, suffix=suffix)
    return FormatName(kind, guid=_parse_guid(core, "2.1.3" if kind is FormatNameKind.PUBLIC
                                             else "2.1.6"), suffix=suffix)


def _parse_guid(text: str, section: str) -> uuid.UUID:
    # MS-MQMQ 2.1.3 Guid: 8-4-4-4-12 hex digits, no braces; hex digits in either case
    if _GUID.fullmatch(text) is None:
        raise FormatNameError(f"{_show(text)} is not a GUID xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx "
                              f"(MS-MQMQ {section})")
    return uuid.UUID(text)


@functools.lru_cache(maxsize=1 << 12)
def _parse_direct(body: str) -> FormatName:
    """MS-MQMQ 2.1.2: Protocol ':' ProtocolAddressSpecification '\\' path [';' suffix].
    Remembered: a FormatName is immutable, and the same few direct strings come in every
    call that names a queue (a malformed one raises again each time)."""
    proto_text, colon, rest = body.partition(":")
    protocol = _PROTOCOLS.get(proto_text.upper()) if colon else None
    if protocol is None:
        raise FormatNameError(f"DIRECT= needs a protocol OS:, TCP:, SPX:/IPX:, HTTP: or HTTPS:, "
                              f"not {_show(body)} (MS-MQMQ 2.1.2)")
    if protocol in _HTTP_PROTOCOLS:
        m = _HTTP_ADDRESS.match(rest)
        if m is None or rest[m.end():m.end() + 1] not in ("\\", "/"):
            raise FormatNameError(f"{protocol.value}: needs '//' Host [':' Port] '/MSMQ' then a "
                                  f"queue path, not {_show(rest)} (MS-MQMQ 2.1.2)")
        # choice 5: '/' may stand for '\' here and after PRIVATE$ (FormatName stores '\')
        address, path_text = m.group(0), rest[m.end() + 1:]
    else:
        address, slash, path_text = rest.partition("\\")
        if not slash:
            raise FormatNameError(f"DIRECT={protocol.value}: needs '\\' between address and "
                                  f"queue, in {_show(rest)} (MS-MQMQ 2.1.2)")
    path, semi, tail = path_text.partition(";")
    suffix, subqueue = _NONE, None
    if semi:
        if tail == "":
            raise FormatNameError("empty subqueue name or suffix after ';' (MS-MQMQ 2.1.1)")
        if tail.upper() in _SUFFIX_KEYWORDS:
            suffix = _SUFFIX_KEYWORDS[tail.upper()]
        else:
            suffix, subqueue = _SFX.QUEUE_SUFFIX_TYPE_SUBQUEUE, tail
    return FormatName(FormatNameKind.DIRECT, protocol=protocol, address=address,
                      queue_path=path, suffix=suffix, subqueue=subqueue)


# ============================================================================ conversions


def multicast_address_to_int(dotted: str) -> int:
    """MULTICAST_ID.m_address of a dotted IPv4 address (choice 3: first octet lowest)."""
    octets = [int(o) for o in dotted.split(".")]
    return octets[0] | octets[1] << 8 | octets[2] << 16 | octets[3] << 24


def multicast_address_from_int(m_address: int) -> str:
    return ".".join(str(m_address >> shift & 0xFF) for shift in (0, 8, 16, 24))


_KIND_QFT = {
    FormatNameKind.PUBLIC: _QFT.QUEUE_FORMAT_TYPE_PUBLIC,
    FormatNameKind.PRIVATE: _QFT.QUEUE_FORMAT_TYPE_PRIVATE,
    FormatNameKind.DIRECT: _QFT.QUEUE_FORMAT_TYPE_DIRECT,
    FormatNameKind.MACHINE: _QFT.QUEUE_FORMAT_TYPE_MACHINE,
    FormatNameKind.CONNECTOR: _QFT.QUEUE_FORMAT_TYPE_CONNECTOR,
    FormatNameKind.DL: _QFT.QUEUE_FORMAT_TYPE_DL,
    FormatNameKind.MULTICAST: _QFT.QUEUE_FORMAT_TYPE_MULTICAST,
}


def to_queue_format(name: FormatName) -> QueueFormat:
    """The QUEUE_FORMAT (MS-MQMQ 2.2.7) of a single-element format name. A multiple-element
    name has none: ``FormatNameError``."""
    if name.kind is FormatNameKind.MULTIPLE_ELEMENT:
        raise FormatNameError("a multiple-element format name has no QUEUE_FORMAT "
                              "(MS-MQMQ 2.2.7)")
    # MS-MQMQ 2.2.7: Flags 0x80 with JOURNAL / DEADLETTER / DEADXACT, 0x00 with NONE and
    # SUBQUEUE; XACTONLY's row states no Flags value and we send 0x00
    flags = QUEUE_FORMAT_FLAG_SYSTEM if name.system else QUEUE_FORMAT_FLAG_NOT_SYSTEM
    qft = _KIND_QFT[name.kind]
    value: QueueFormatValue
    if name.kind is FormatNameKind.PRIVATE:
        value = ObjectId(name.guid, name.queue_number)  # MS-MQMQ 2.1.4 with 2.2.8
    elif name.kind is FormatNameKind.DIRECT:
        value = name._direct_id()  # choice 2: without "DIRECT=" and without the suffix
        if name.subqueue is not None:
            qft, value = _QFT.QUEUE_FORMAT_TYPE_SUBQUEUE, f"{value};{name.subqueue}"
    elif name.kind is FormatNameKind.DL:
        value = DlId(name.guid, name.domain)
    elif name.kind is FormatNameKind.MULTICAST:
        value = MulticastId(multicast_address_to_int(name.multicast_address), name.port)
    else:  # PUBLIC, MACHINE, CONNECTOR: a GUID
        value = name.guid
    return QueueFormat(int(qft), flags | int(name.suffix), 0, value)


def from_queue_format(qf: QueueFormat) -> FormatName:
    """The format name of a QUEUE_FORMAT. Raises ``FormatNameError`` if the structure breaks
    MS-MQMQ 2.2.7's rules or has no format name (QUEUE_FORMAT_TYPE_UNKNOWN)."""
    reason = qf._structure_reason() if isinstance(qf, QueueFormat) else "not a QueueFormat"
    if reason is not None:
        raise FormatNameError(reason)
    qft, suffix = _QFT(qf.m_qft), _SFX(qf.suffix_type)
    v = qf.value
    if qft is _QFT.QUEUE_FORMAT_TYPE_UNKNOWN:
        raise FormatNameError("QUEUE_FORMAT_TYPE_UNKNOWN has no format name (MS-MQMQ 2.2.6)")
    if qft in (_QFT.QUEUE_FORMAT_TYPE_DIRECT, _QFT.QUEUE_FORMAT_TYPE_SUBQUEUE):
        return _direct_from_queue_format(qf)
    if qft is _QFT.QUEUE_FORMAT_TYPE_PRIVATE:
        return FormatName(FormatNameKind.PRIVATE, guid=v.Lineage, queue_number=v.Uniquifier,
                          suffix=suffix)
    if qft is _QFT.QUEUE_FORMAT_TYPE_DL:
        return FormatName(FormatNameKind.DL, guid=v.m_DlGuid, domain=v.m_pwzDomain,
                          suffix=suffix)
    if qft is _QFT.QUEUE_FORMAT_TYPE_MULTICAST:
        if v.m_port > 0xFFFF:
            raise FormatNameError(f"m_port {v.m_port} is not 0-65535 (MS-MQMQ 2.1.6)")
        return FormatName(FormatNameKind.MULTICAST,
                          multicast_address=multicast_address_from_int(v.m_address),
                          port=v.m_port, suffix=suffix)
    kind = {_QFT.QUEUE_FORMAT_TYPE_PUBLIC: FormatNameKind.PUBLIC,
            _QFT.QUEUE_FORMAT_TYPE_MACHINE: FormatNameKind.MACHINE,
            _QFT.QUEUE_FORMAT_TYPE_CONNECTOR: FormatNameKind.CONNECTOR}[qft]
    return FormatName(kind, guid=v, suffix=suffix)


def _direct_from_queue_format(qf: QueueFormat) -> FormatName:
    """m_pDirectID / m_pDirectSubqueueID with the structure's suffix (choice 2)."""
    suffix, text = _SFX(qf.suffix_type), qf.value
    if not isinstance(text, str):
        raise FormatNameError("the direct string is missing (MS-MQMQ 2.2.7)")
    written = text.rpartition(";")[2].upper() if ";" in text else None
    if suffix in _SUFFIX_TEXT and written != _SUFFIX_TEXT[suffix]:
        text = f"{text};{_SUFFIX_TEXT[suffix]}"
    try:
        name = _parse_direct(text)
    except FormatNameError as e:
        raise FormatNameError(f"direct string {_show(qf.value)}: {e}") from None
    if name.suffix in _SUFFIX_TEXT and suffix is _NONE:
        raise FormatNameError(f"direct string {_show(qf.value)} carries ;"
                              f"{_SUFFIX_TEXT[name.suffix]} but m_SuffixAndFlags has no "
                              f"suffix (MS-MQMQ 2.2.7)")
    if qf.m_qft == _QFT.QUEUE_FORMAT_TYPE_SUBQUEUE and name.subqueue is None:
        # MS-MQMQ 2.2.7: m_pDirectSubqueueID MUST contain the Subqueue element
        raise FormatNameError(f"m_pDirectSubqueueID {_show(qf.value)} has no ;subqueue "
                              f"(MS-MQMQ 2.2.7)")
    if qf.m_qft == _QFT.QUEUE_FORMAT_TYPE_DIRECT and name.subqueue is not None:
        raise FormatNameError(f"m_pDirectID {_show(qf.value)} names a subqueue; that is "
                              f"QUEUE_FORMAT_TYPE_SUBQUEUE (MS-MQMQ 2.2.6)")
    return name


# ============================================================================ MS-MQRR 2.2.3

#: MS-MQRR 2.2.3: the m_qft values RemoteRead supports
REMOTEREAD_QUEUE_FORMAT_TYPES = _qfts(
    _QFT.QUEUE_FORMAT_TYPE_UNKNOWN, _QFT.QUEUE_FORMAT_TYPE_PUBLIC,
    _QFT.QUEUE_FORMAT_TYPE_PRIVATE, _QFT.QUEUE_FORMAT_TYPE_DIRECT,
    _QFT.QUEUE_FORMAT_TYPE_MACHINE, _QFT.QUEUE_FORMAT_TYPE_SUBQUEUE)
#: MS-MQRR 2.2.3: the protocols RemoteRead supports when m_qft is QUEUE_FORMAT_TYPE_DIRECT
REMOTEREAD_DIRECT_PROTOCOLS = frozenset({DirectProtocol.TCP, DirectProtocol.OS})


def remoteread_unsupported(qf: QueueFormat) -> str | None:
    """None if ``qf`` lies in the subset of QUEUE_FORMAT that MS-MQRR 2.2.3 supports, else a
    one-line reason. Only the subset is checked here, not MS-MQMQ's rules (``validate``)."""
    if not _is_uint(qf.m_qft, 0xFF) or qf.m_qft not in REMOTEREAD_QUEUE_FORMAT_TYPES:
        name = _QFT(qf.m_qft).name if qf.m_qft in _QFT._value2member_map_ else repr(qf.m_qft)
        return f"m_qft {name} is outside RemoteRead's subset (MS-MQRR 2.2.3)"
    if qf.m_qft == _QFT.QUEUE_FORMAT_TYPE_DIRECT and isinstance(qf.value, str):
        proto = _PROTOCOLS.get(qf.value.partition(":")[0].upper())
        if proto not in REMOTEREAD_DIRECT_PROTOCOLS:
            return (f"direct protocol of {_show(qf.value)} is not TCP or OS "
                    f"(MS-MQRR 2.2.3)")
    return None
