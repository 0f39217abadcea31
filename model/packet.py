"""The message packet codec: MS-MQRR 2.2.5 Message Packet Structure, whose UserMessage (MS-MQRR
2.2.5.1) is MS-MQMQ 2.2.20's UserMessage Packet with MS-MQRR's field overlays and SRMP headers,
followed by MS-MQRR's ExtensionHeader, SubqueueHeader, DeadLetterHeader and
ExtendedAddressHeader (2.2.5.2 to 2.2.5.5). The one codec for message packets: everything else
(serialization.py, the server, the capture decoder) calls ``encode_packet`` and
``decode_packet``.

The headers of MS-MQMQ 2.2.20 are the frozen dataclasses of :mod:`model.dispatch`, which MS-MQDMPR
3.1.7.1.30 (Construct a UserMessage Packet) fills with ADM values; this module encodes exactly that
structure and computes the wire fields it leaves out (sizes, counts, reserved fields, padding,
numeric codes). The parts 3.1.7.1.30 does not construct (the SRMP headers, SoapHeader,
SessionHeader, the UserHeader address overlay and the MS-MQRR trailers) are the dataclasses
below, grouped in :class:`PacketExtras`.

Packet order (MS-MQRR 2.2.5, 2.2.5.1; MS-MQMQ 2.2.20), each header starting on a 4-byte
boundary of the packet::

    BaseHeader               16 bytes           always
    UserHeader               48 + queues (+16)  always
    TransactionHeader        20 or 36           UserHeader.Flags.TH
    SecurityHeader           16 + items         UserHeader.Flags.SH
    MessagePropertiesHeader  56 + label, extension, body, padding   always (Flags.MP)
    DebugHeader              4 or 20            BaseHeader.Flags.DH
    SRMPEnvelopeHeader       8 + data           UserHeader.Flags.AH
    CompoundMessageHeader    16 + data          UserHeader.Flags.AH
    SoapHeader               16 + header, body  UserHeader.Flags.HH
    MultiQueueFormatHeader   3 x MQFAddressHeader + MQFSignatureHeader   UserHeader.Flags.MQ
    -- BaseHeader.PacketSize ends here --
    SessionHeader            16 bytes           BaseHeader.Flags.SH
    ExtensionHeader          12 bytes           present when bytes follow
    SubqueueHeader           148 bytes          ExtensionHeader.Flags.SQ
    DeadLetterHeader         4 + path           ExtensionHeader.Flags.DL
    ExtendedAddressHeader    28 bytes           ExtensionHeader.Flags.EA

All integers are little-endian (MS-MQMQ 2.2.18); a GUID is MS-DTYP 2.3.4's 16 bytes (Data1,
Data2, Data3 little-endian: ``uuid.UUID.bytes_le``). Bit fields are numbered from the least
significant bit, as the annotated capture of MS-MQQB 4.1.7 (FRAME 7) shows them.

Where the documents leave a choice, this codec takes the following (each is tested):

1. BaseHeader.PacketSize counts the UserMessage Packet of MS-MQMQ 2.2.20, which ends with the
   MultiQueueFormatHeader: not the SessionHeader (MS-MQMQ 2.2.19.1 says so) and not MS-MQRR's
   trailers, which MS-MQMQ does not know. The decoder also accepts a PacketSize equal to the whole
   buffer.
2. The MessageBody field takes AllocationBodySize bytes ("the data allocated for the MessageBody
   field", MS-MQMQ 2.2.19.3), of which the first MessageSize are the body; the encoder writes
   AllocationBodySize = MessageSize.
3. MS-MQRR 3.1.1.4's Offset tiles the packet: the headers run from 0 to the body; the body (or,
   for SRMP, the CompoundMessageHeader) runs to the end of the MessagePropertiesHeader (or of the
   CompoundMessageHeader), padding included; the trailers are the rest, "from beyond the end of"
   that header as MS-MQRR 2.2.7 (stBinarySecondSection, stSrmpSecondSection) puts it. So headers
   + body + trailers is the packet, which is what a client reassembling SectionBuffers needs.
4. Queue names in the UserHeader and the MultiQueueFormatHeader are format name strings (the ADM's
   form). A direct name goes on the wire without "DIRECT=" (MS-MQQB 4.1.7 shows "OS:a04bm02\\q");
   a PrivateQueueFormatNameId carries only the queue number, its computer GUID being the one the
   queue type names (SourceQueueManager, QueueManagerAddress, or the administration queue's).
   Decoded names are canonical: ``PUBLIC=<guid>``, ``PRIVATE=<guid>\\<8 hex digits>``,
   ``DIRECT=<wire string>``, ``DL=<guid>``.
5. Counted strings: SRMPEnvelopeHeader.DataLength, SoapHeader.HeaderDataLength and
   BodyDataLength count WCHARs including the terminating null (as MS-MQMQ 2.2.20.7 says for the
   SoapHeader); an empty string is sent as length 0 with no terminator. Each of SoapHeader's two
   sections (0x0320, 0x0384) and each variable header ends on a 4-byte boundary.
6. The GUID of a public queue in an MQFFormatNameElement starts on a 4-byte boundary, as
   MS-MQMQ 2.2.18.1.7.2 and 2.2.18.1.4.2 say for the private and distribution-list forms.
7. ProviderInfoSize is 4 + the provider name's bytes with its terminating null.
8. TransactionHeader.Flags.ID is 20 bits; the ADM's TransactionIdentifier (a GUID) goes as its
   low 20 bits, and an int is written as is.
9. The UserHeader overlay of MS-MQRR 2.2.5.1 (the host a message came from, in place of
   QueueManagerAddress, for a direct destination) is ``PacketExtras.received_from``; decoded only
   when the destination is direct and the 16 bytes are not all zero (a NULL GUID is what MS-MQMQ
   2.2.19.2 puts there).
10. SubqueueHeader's second ULONG holds A (bit 0), AcknowledgementClass (bits 1-16) and Reserved
    (bits 17-31), as the diagram of MS-MQRR 2.2.5.3 numbers them.
11. Enumerated codes without an ADM value decode to the int (MessageClass: custom classes, MS-MQMQ
    2.2.18.1.6); DQ, AQ, RQ, DM and DebugHeader.QT, which decide the layout, must be known values.

Errors: :class:`PacketError` (a ValueError) naming the field and the reason, for any input.
Decoding never reads past the buffer and allocates nothing larger than it.
"""

from __future__ import annotations

import ipaddress
import uuid
from dataclasses import dataclass
from enum import Enum
from typing import Any

from mqconform.model.adm import (
    OBJECTID,
    LocalMessageType,
    MessageAdministrationQueueType,
    MessageClass,
    MessageDeliveryGuarantee,
    MessageDestinationQueueType,
    MessageEncryptionAlgorithm,
    MessageHashAlgorithm,
    MessagePrivacyLevel,
    MessageResponseQueueType,
    MessageSenderIdentifierType,
    TxSequenceId,
)
from mqconform.model.dispatch import (
    BaseHeader,
    BaseHeaderFlags,
    DebugHeader,
    DebugHeaderFlags,
    MessagePropertiesHeader,
    MessagePropertiesHeaderFlags,
    MultiQueueFormatHeader,
    ProviderInfo,
    SecurityData,
    SecurityHeader,
    SecurityHeaderFlags,
    TransactionHeader,
    TransactionHeaderFlags,
    UserHeader,
    UserHeaderFlags,
    UserMessagePacket,
)
from mqconform.model.formats import (
    FormatNameError,
    FormatNameKind,
    QueueSuffixType,
    parse_format_name,
)


class PacketError(ValueError):
    """A packet that cannot be encoded or decoded: ``field`` names the field (MS-MQMQ's or
    MS-MQRR's name, ``Header.Field``), ``reason`` says what is wrong with it."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


# ---------------------------------------------------------------------------------------------
# Sizes, offsets and constants
# ---------------------------------------------------------------------------------------------

#: MS-MQMQ 2.2.19.1: PacketSize "has a maximum value of 0x00400000"
MAX_PACKET_SIZE = 0x00400000
BASE_HEADER_SIZE = 16  # MS-MQMQ 2.2.19.1
#: MS-MQMQ 2.2.19.2: SourceQueueManager (16), QueueManagerAddress (16), TimeToBeReceived (4),
#: SentTime (4), MessageID (4), Flags (4); the queue fields follow
USER_HEADER_FIXED_SIZE = 48
#: MS-MQMQ 2.2.19.1: VersionNumber (1), Reserved (1), Flags (2), Signature (4), PacketSize (4),
#: then TimeToReachQueue
PACKET_SIZE_OFFSET = 8
TIME_TO_REACH_QUEUE_OFFSET = 12
#: MS-MQMQ 2.2.19.2: SentTime follows SourceQueueManager, QueueManagerAddress, TimeToBeReceived
SENT_TIME_OFFSET = BASE_HEADER_SIZE + 16 + 16 + 4
MESSAGE_PROPERTIES_FIXED_SIZE = 56  # MS-MQMQ 2.2.19.3, Flags to ExtensionSize
SESSION_HEADER_SIZE = 16  # MS-MQMQ 2.2.20.4
EXTENSION_HEADER_SIZE = 12  # MS-MQRR 2.2.5.2
SUBQUEUE_HEADER_SIZE = 148  # MS-MQRR 2.2.5.3
EXTENDED_ADDRESS_HEADER_SIZE = 28  # MS-MQRR 2.2.5.5
SUBQUEUE_NAME_SIZE = 64  # MS-MQRR 2.2.5.3: SubqueueName, TargetSubqueueName
MAX_LABEL_LENGTH = 0xFA  # MS-MQMQ 2.2.19.3 LabelLength, WCHARs with the terminating null

BASE_HEADER_SIGNATURE = 0x524F494C  # MS-MQMQ 2.2.19.1
BASE_HEADER_VERSION = 0x10  # MS-MQMQ 2.2.19.1
#: MS-MQMQ 2.2.20.2 MQFAddressHeader.HeaderID and 2.2.20.3 MQFSignatureHeader.ID
MQF_DESTINATION_ID, MQF_ADMIN_ID, MQF_RESPONSE_ID, MQF_SIGNATURE_ID = 0x64, 0xC8, 0x12C, 0x15E
#: MS-MQMQ 2.2.20.7 SoapHeader.HeaderSectionID and BodySectionID
SOAP_HEADER_SECTION_ID, SOAP_BODY_SECTION_ID = 0x0320, 0x0384
#: MS-MQRR 2.2.5.1 and 2.2.5.5 AddressType
IP_ADDRESS_TYPE, IPV6_ADDRESS_TYPE = 0x0001, 0x0006

# ---------------------------------------------------------------------------------------------
# Code tables: the ADM enumerations and their wire values
# ---------------------------------------------------------------------------------------------

C = MessageClass
#: MS-MQMQ 2.2.18.1.6 MESSAGE_CLASS_VALUES (the MS-MQDMPR 3.1.7.1.31 and 3.1.7.1.32 tables), with
#: the three classes only MC-MQAC 2.2.2.9 MQMSGCLASS gives a value: 0x8008, 0x800C, 0xC003
CLASS_CODES: dict[MessageClass, int] = {
    C.Normal: 0x0000, C.Report: 0x0001, C.AckReachQueue: 0x0002, C.OrderAck: 0x00FF,
    C.AckReceive: 0x4000, C.NackBadDestQueue: 0x8000, C.NackPurged: 0x8001,
    C.NackReachQueueTimeout: 0x8002, C.NackQueueExceedQuota: 0x8003,
    C.NackAccessDenied: 0x8004, C.NackHopCountExceeded: 0x8005, C.NackBadSignature: 0x8006,
    C.NackBadEncryption: 0x8007, C.NackCouldNotEncrypt: 0x8008,
    C.NackNotTransactionalQueue: 0x8009, C.NackNotTransactionalMessage: 0x800A,
    C.NackUnsupportedCryptoProvider: 0x800B, C.NackSourceComputerGuidChanged: 0x800C,
    C.NackQueueDeleted: 0xC000, C.NackQueuePurged: 0xC001, C.NackReceiveTimeout: 0xC002,
    C.NackReceiveTimeoutAtSender: 0xC003, C.NackReceiveRejected: 0xC004,
}
del C
#: MS-MQMQ 2.2.19.3 PrivacyLevel (MS-MQDMPR 3.1.7.1.32's table)
PRIVACY_CODES = {MessagePrivacyLevel.None_: 0x0, MessagePrivacyLevel.Base: 0x1,
                 MessagePrivacyLevel.Enhanced: 0x3, MessagePrivacyLevel.Advanced: 0x5}
H = MessageHashAlgorithm
#: MS-MQMQ 2.2.19.3 HashAlgorithm (MS-MQDMPR 3.1.7.1.32's table). SHA is CALG_SHA, the same
#: ALG_ID as CALG_SHA1 (0x8004), which decodes as SHA1. 3.1.7.1.31's table maps 0x8003 to "MD4":
#: MS-MQMQ 2.2.19.3 and 3.1.7.1.32 say MD5, and so does this table.
HASH_CODES = {H.MD2: 0x8001, H.MD4: 0x8002, H.MD5: 0x8003, H.SHA1: 0x8004, H.SHA: 0x8004,
              H.SHA_256: 0x800C, H.SHA_512: 0x800E}
del H
E = MessageEncryptionAlgorithm
#: MS-MQMQ 2.2.19.3 EncryptionAlgorithm (MS-MQDMPR 3.1.7.1.32's table); the ADM's other values
#: (RSA, DSS, RSA_KEYS, DES, SEAL) have no code in either document
ENCRYPTION_CODES = {E.RC2: 0x6602, E.RC4: 0x6801, E.AES256: 0x6610, E.AES128: 0x660E,
                    E.AES192: 0x660F}
del E
#: MS-MQMQ 2.2.20.6 SecurityHeader.Flags.ST (MS-MQDMPR 3.1.7.1.32's table)
SENDER_ID_TYPE_CODES = {MessageSenderIdentifierType.None_: 0x0,
                        MessageSenderIdentifierType.Sid: 0x1,
                        MessageSenderIdentifierType.QueueManagerIdentifier: 0x2}
#: MS-MQMQ 2.2.19.2 UserHeader.Flags.DM
DELIVERY_CODES = {MessageDeliveryGuarantee.Express: 0x0, MessageDeliveryGuarantee.Recoverable: 0x1}
D = MessageDestinationQueueType
#: MS-MQMQ 2.2.19.2 Flags.DQ (MS-MQDMPR 3.1.7.1.32's QueueFormatType table); None is 0x0
DESTINATION_CODES: dict[Any, int] = {None: 0x0, D.PrivateQueue: 0x3, D.PublicQueue: 0x5,
                                     D.DirectQueue: 0x7}
del D
A = MessageAdministrationQueueType
#: MS-MQMQ 2.2.19.2 Flags.AQ
ADMINISTRATION_CODES: dict[Any, int] = {
    A.None_: 0x0, A.PrivateQueueOnSource: 0x2, A.PrivateQueueOnDestination: 0x3,
    A.PublicQueue: 0x5, A.PrivateQueueOnOther: 0x6, A.DirectQueue: 0x7}
del A
R = MessageResponseQueueType
#: MS-MQMQ 2.2.19.2 Flags.RQ
RESPONSE_CODES: dict[Any, int] = {
    R.None_: 0x0, R.SameAsAdministrationQueue: 0x1, R.PrivateQueueOnSource: 0x2,
    R.PrivateQueueOnDestination: 0x3, R.PrivateQueueOnAdmin: 0x4, R.PublicQueue: 0x5,
    R.PrivateQueueOnOther: 0x6, R.DirectQueue: 0x7}
del R


def _inverse(table: dict) -> dict[int, Any]:
    out: dict[int, Any] = {}
    for value, code in table.items():
        out.setdefault(code, value)  # the first value listed wins (SHA1 before SHA)
    return out


_CLASS_VALUES = _inverse(CLASS_CODES)
_PRIVACY_VALUES = _inverse(PRIVACY_CODES)
_HASH_VALUES = _inverse(HASH_CODES)
_ENCRYPTION_VALUES = _inverse(ENCRYPTION_CODES)
_SENDER_ID_TYPE_VALUES = _inverse(SENDER_ID_TYPE_CODES)
_DELIVERY_VALUES = _inverse(DELIVERY_CODES)
_DESTINATION_VALUES = _inverse(DESTINATION_CODES)
_ADMINISTRATION_VALUES = _inverse(ADMINISTRATION_CODES)
_RESPONSE_VALUES = _inverse(RESPONSE_CODES)

#: The layout of a queue name field (MS-MQMQ 2.2.19.2's three tables and 2.2.18.1.5):
#: ("id", whose GUID) PrivateQueueFormatNameId, "public" PublicQueueFormatName, "private"
#: PrivateQueueFormatName, "direct" DirectQueueFormatName, "same" nothing (RQ 0x1), None nothing
_DQ_LAYOUT = {0x0: None, 0x3: ("id", "destination"), 0x5: "public", 0x7: "direct"}
_AQ_LAYOUT = {0x0: None, 0x2: ("id", "source"), 0x3: ("id", "destination"), 0x5: "public",
              0x6: "private", 0x7: "direct"}
_RQ_LAYOUT = {0x0: None, 0x1: "same", 0x2: ("id", "source"), 0x3: ("id", "destination"),
              0x4: ("id", "admin"), 0x5: "public", 0x6: "private", 0x7: "direct"}


# ---------------------------------------------------------------------------------------------
# The headers model.dispatch has no place for
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HostAddress:
    """A host address as MS-MQRR 2.2.5.1's UserHeader overlay (Address: 8 bytes) and 2.2.5.5's
    ExtendedAddressHeader (Address: 16 bytes) hold it. ``address`` is the bytes in the field (as
    much of the address as fits, MS-MQRR/2.2.5.1/R5), ``address_length`` the AddressLength field
    (the address's actual length, MS-MQRR/2.2.5.1/R1, MS-MQRR/2.2.5.5/R2)."""

    # IP_ADDRESS_TYPE, IPV6_ADDRESS_TYPE (MS-MQRR/2.2.5.1/R2, MS-MQRR/2.2.5.5/R3); 0x0000: the
    # ExtendedAddressHeader is to be ignored (MS-MQRR/2.2.5.5/R1, MS-MQRR/2.2.5.5/R4)
    address_type: int = 0
    address: bytes = b""  # MS-MQRR/2.2.5.1/R4, MS-MQRR/2.2.5.5/R6
    address_length: int = 0
    address_scope: int = 0  # the IPv6 scope, else 0 (MS-MQRR/2.2.5.1/R3, MS-MQRR/2.2.5.5/R5)

    @classmethod
    def of(cls, address: str | ipaddress.IPv4Address | ipaddress.IPv6Address,
           scope: int = 0) -> HostAddress:
        """The HostAddress of an IPv4 or IPv6 address (MS-MQRR/2.2.5.5/R7, R8)."""
        ip = ipaddress.ip_address(address)
        if ip.version == 4:
            return cls(IP_ADDRESS_TYPE, ip.packed, 4, 0)
        return cls(IPV6_ADDRESS_TYPE, ip.packed, 16, scope)


@dataclass(frozen=True)
class SRMPEnvelopeHeader:
    """MS-MQRR 2.2.5.1.2.1 SRMPEnvelopeHeader: the SOAP envelope of a message that came over HTTP
    (MC-MQSRM 2.2.2). HeaderId has no value in the document; it is kept as read."""

    data: str = ""  # WCHARs; DataLength counts them with the terminating null (choice 5)
    header_id: int = 0


@dataclass(frozen=True)
class CompoundMessageHeader:
    """MS-MQRR 2.2.5.1.2.2 CompoundMessageHeader: the SRMP message with the HTTP POST that
    carried it; MsgBodyOffset and MsgBodySize place the message body within ``data``."""

    data: bytes = b""  # HTTPBodySize is its size (MS-MQRR/2.2.5.1.2.2/R3)
    msg_body_offset: int = 0  # MS-MQRR/2.2.5.1.2.2/R5
    msg_body_size: int = 0  # MS-MQRR/2.2.5.1.2.2/R4
    header_id: int = 0


@dataclass(frozen=True)
class SoapHeader:
    """MS-MQMQ 2.2.20.7 SoapHeader: two application-defined Unicode strings."""

    header: str = ""  # HeaderSectionID 0x0320
    body: str = ""  # BodySectionID 0x0384


@dataclass(frozen=True)
class SessionHeader:
    """MS-MQMQ 2.2.20.4 SessionHeader (16 bytes): a session acknowledgment piggy-backed on the
    packet (MS-MQRR/2.2.5.1/R7: present if and only if BaseHeader.Flags.SH)."""

    ack_sequence_number: int = 0  # 2 bytes
    recoverable_msg_ack_seq_number: int = 0  # 2 bytes
    recoverable_msg_ack_flags: int = 0  # 4 bytes
    user_msg_sequence_number: int = 0  # 2 bytes
    recoverable_msg_seq_number: int = 0  # 2 bytes
    window_size: int = 0x0040  # 2 bytes (SHOULD be 0x0040); Reserved (2) follows


@dataclass(frozen=True)
class ExtensionHeader:
    """MS-MQRR 2.2.5.2 ExtensionHeader (12 bytes). HeaderSize, RemainingHeadersSize and the DL,
    SQ and EA flags follow from the headers present; DI is the one fact it carries."""

    dead_letter_invalid: bool = False  # DI (MS-MQRR/2.2.5.2/R6, R7)


@dataclass(frozen=True)
class SubqueueHeader:
    """MS-MQRR 2.2.5.3 SubqueueHeader (148 bytes); the A (TM) bit is always 0
    (MS-MQRR/2.2.5.3/R2) and is not kept, nor are the Reserved bits (MS-MQRR/2.2.5.3/R4). A
    reader ignores the header when ``subqueue_name`` is empty (MS-MQRR/2.2.5.3/R1); the codec
    keeps it as read."""

    subqueue_name: str = ""  # at most 31 WCHARs: 64 bytes with the null (R5, R6, R7)
    target_subqueue_name: str = ""  # R8, R9, R10
    acknowledgement_class: int = 0  # a MESSAGE_CLASS_VALUES value (MS-MQRR/2.2.5.3/R3)
    abort_counter: int = 0
    move_counter: int = 0
    last_move_time: int = 0  # milliseconds since 1970-01-01, 0 if never moved


@dataclass(frozen=True)
class DeadLetterHeader:
    """MS-MQRR 2.2.5.4 DeadLetterHeader: the application's dead-letter queue."""

    dead_letter_path_name: str = ""  # null-terminated, padded with zeros (R2, R3)


@dataclass(frozen=True)
class PacketExtras:
    """The parts of an MS-MQRR 2.2.5 Message Packet that MS-MQDMPR 3.1.7.1.30's
    UserMessagePacket has no place for, in packet order. A trailer header is present only with
    an ExtensionHeader; SubqueueHeader and ExtendedAddressHeader go with every ExtensionHeader
    (SQ and EA "MUST be set to 1": MS-MQRR/2.2.5.2/R4, MS-MQRR/2.2.5.2/R9)."""

    received_from: HostAddress | None = None  # UserHeader overlay, direct destinations (choice 9)
    srmp_envelope_header: SRMPEnvelopeHeader | None = None
    compound_message_header: CompoundMessageHeader | None = None
    soap_header: SoapHeader | None = None
    session_header: SessionHeader | None = None
    extension_header: ExtensionHeader | None = None
    subqueue_header: SubqueueHeader | None = None
    dead_letter_header: DeadLetterHeader | None = None
    extended_address_header: HostAddress | None = None


@dataclass(frozen=True)
class DecodedPacket:
    """A decoded message packet: its headers, and where its parts are.

    ``headers``, ``body`` and ``trailers`` are the (offset, size) pairs of MS-MQRR 3.1.1.4's
    Offset (choice 3): ``offset`` lists them in that order, as LocalMessage.offset holds them;
    ``type`` is Message.Type. ``message_body`` is the MessageBody field itself (offset,
    MessageSize)."""

    user_message: UserMessagePacket
    extras: PacketExtras
    type: LocalMessageType
    packet_size: int  # BaseHeader.PacketSize as read
    headers: tuple[int, int]
    body: tuple[int, int]
    trailers: tuple[int, int]
    message_body: tuple[int, int]
    #: where the UserMessage ends and the headers after it begin (the SessionHeader if
    #: BaseHeader.Flags.SH, then the ExtensionHeader); the trailers of Offset begin earlier,
    #: at the body's end, and hold the DebugHeader, SoapHeader, MultiQueueFormatHeader too
    user_message_size: int = 0

    @property
    def offset(self) -> list[tuple[int, int]]:
        """MS-MQRR 3.1.1.4 Message.Offset: headers, body, trailers."""
        return [self.headers, self.body, self.trailers]


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------


def _uint(field: str, value: Any, top: int) -> int:
    if isinstance(value, bool):
        value = int(value)
    if not isinstance(value, int) or not 0 <= value <= top:
        raise PacketError(field, f"{value!r} is not an integer 0-{top:#x}")
    return value


def _flag(field: str, value: Any) -> int:
    if not isinstance(value, bool):
        raise PacketError(field, f"{value!r} is not a bool")
    return int(value)


def _code(field: str, table: dict, value: Any, top: int) -> int:
    """The wire code of an ADM enumeration value, or an int sent as is."""
    if isinstance(value, Enum) or value is None:
        if value not in table:
            raise PacketError(field, f"{value!r} has no code on the wire")
        return table[value]
    return _uint(field, value, top)


def _wchars(field: str, text: Any) -> bytes:
    if not isinstance(text, str):
        raise PacketError(field, f"{type(text).__name__} is not a str")
    return text.encode("utf-16-le", "surrogatepass")


def _counted(field: str, text: Any) -> tuple[int, bytes]:
    """(WCHAR count with the null, bytes with the null); "" is (0, b"") (choice 5)."""
    raw = _wchars(field, text)
    if not raw:
        return 0, b""
    return len(raw) // 2 + 1, raw + b"\0\0"


def _blob(field: str, value: Any) -> bytes:
    if not isinstance(value, (bytes, bytearray)):
        raise PacketError(field, f"{type(value).__name__} is not bytes")
    return bytes(value)


class _Writer:
    def __init__(self) -> None:
        self.buf = bytearray()

    def u8(self, field: str, value: Any) -> None:
        self.buf += _uint(field, value, 0xFF).to_bytes(1, "little")

    def u16(self, field: str, value: Any) -> None:
        self.buf += _uint(field, value, 0xFFFF).to_bytes(2, "little")

    def u32(self, field: str, value: Any) -> None:
        self.buf += _uint(field, value, 0xFFFFFFFF).to_bytes(4, "little")

    def guid(self, field: str, value: Any) -> None:
        if not isinstance(value, uuid.UUID):
            raise PacketError(field, f"{value!r} is not a GUID (uuid.UUID)")
        self.buf += value.bytes_le

    def raw(self, data: bytes) -> None:
        self.buf += data

    def pad4(self) -> None:
        """Zeros up to the next 4-byte boundary of the packet."""
        self.buf += bytes(-len(self.buf) % 4)

    def patch32(self, at: int, value: int) -> None:
        self.buf[at:at + 4] = value.to_bytes(4, "little")


def _format_name(field: str, name: Any, kind: FormatNameKind) -> Any:
    if not isinstance(name, str):
        raise PacketError(field, f"{type(name).__name__} is not a format name string")
    try:
        parsed = parse_format_name(name)
    except FormatNameError as e:
        raise PacketError(field, str(e)) from None
    if parsed.kind is not kind or parsed.suffix is not QueueSuffixType.QUEUE_SUFFIX_TYPE_NONE:
        raise PacketError(field, f"{name!r} is not a {kind.value}= name without suffix")
    return parsed


def _direct_string(field: str, name: Any) -> str:
    """The wire form of a direct format name: without "DIRECT=" (choice 4)."""
    if not isinstance(name, str) or name[:7].upper() != "DIRECT=":
        raise PacketError(field, f"{name!r} is not a DIRECT= format name")
    return name[7:]


def _put_queue(w: _Writer, field: str, layout: Any, name: Any, guids: dict[str, Any]) -> None:
    """One queue name field of the UserHeader (MS-MQMQ 2.2.19.2, 2.2.18.1.5, 2.2.18.1.7)."""
    if layout is None or layout == "same":
        return
    if isinstance(layout, tuple):  # PrivateQueueFormatNameId (2.2.18.1.5.1)
        parsed = _format_name(field, name, FormatNameKind.PRIVATE)
        expected = guids.get(layout[1])
        if parsed.guid != expected:
            raise PacketError(field, f"{name!r}: a PrivateQueueFormatNameId names a queue on "
                                     f"{expected} (the {layout[1]} queue manager) only")
        w.u32(field, parsed.queue_number)
    elif layout == "public":  # PublicQueueFormatName (2.2.18.1.7.1)
        w.guid(field, _format_name(field, name, FormatNameKind.PUBLIC).guid)
    elif layout == "private":  # PrivateQueueFormatName (2.2.18.1.7.2)
        parsed = _format_name(field, name, FormatNameKind.PRIVATE)
        w.guid(field, parsed.guid)
        w.u32(field, parsed.queue_number)
    else:  # DirectQueueFormatName (2.2.18.1.5.2): Count, WCHARs with the null, padding
        raw = _wchars(field, _direct_string(field, name)) + b"\0\0"
        w.u16(f"{field}.Count", len(raw))
        w.raw(raw)
        w.pad4()  # "padded up to the next 4-byte boundary"


def _queue_layout(field: str, table: dict, layouts: dict, value: Any, name: Any) -> Any:
    code = _code(field, table, value, 0x7)
    if code not in layouts:
        raise PacketError(field, f"{code:#x} is not a queue type of MS-MQMQ 2.2.19.2")
    layout = layouts[code]
    if layout is None and name not in ("", None):
        raise PacketError(field, f"queue type {code:#x} (none) cannot carry {name!r}")
    return code, layout


def _overlay(field: str, address: HostAddress, size: int, truncate: bool) -> bytes:
    """AddressLength, AddressType, AddressScope, Address (MS-MQRR 2.2.5.1, 2.2.5.5)."""
    if not isinstance(address, HostAddress):
        raise PacketError(field, f"{address!r} is not a HostAddress")
    data = _blob(f"{field}.Address", address.address)
    if len(data) > size:
        if not truncate:
            raise PacketError(f"{field}.Address", f"{len(data)} bytes do not fit in {size}")
        data = data[:size]  # "as much of the address as can fit" (MS-MQRR/2.2.5.1/R5)
    w = _Writer()
    w.u16(f"{field}.AddressLength", address.address_length)
    w.u16(f"{field}.AddressType", address.address_type)
    w.u32(f"{field}.AddressScope", address.address_scope)
    return bytes(w.buf) + data + bytes(size - len(data))


def _put_user_header(w: _Writer, uh: UserHeader, received_from: HostAddress | None) -> None:
    """MS-MQMQ 2.2.19.2 UserHeader, with MS-MQRR 2.2.5.1's overlay."""
    f = uh.flags
    dq, dq_layout = _queue_layout("UserHeader.Flags.DQ", DESTINATION_CODES, _DQ_LAYOUT, f.dq,
                                  uh.destination_queue)
    aq, aq_layout = _queue_layout("UserHeader.Flags.AQ", ADMINISTRATION_CODES, _AQ_LAYOUT, f.aq,
                                  uh.admin_queue)
    rq, rq_layout = _queue_layout("UserHeader.Flags.RQ", RESPONSE_CODES, _RQ_LAYOUT, f.rq,
                                  uh.response_queue)
    if rq_layout == "same" and uh.response_queue not in ("", uh.admin_queue):
        raise PacketError("UserHeader.ResponseQueue", "RQ 0x1 (same as the administration "
                                                      "queue) with another queue name")
    if f.cq != (uh.connector_type is not None):
        raise PacketError("UserHeader.Flags.CQ", "set if and only if ConnectorType is present")
    w.guid("UserHeader.SourceQueueManager", uh.source_queue_manager)
    destination_guid = uh.queue_manager_address
    if received_from is not None:
        if dq != 0x7:
            raise PacketError("UserHeader.QueueManagerAddress",
                              "the address overlay goes with a direct destination only "
                              "(MS-MQRR 2.2.5.1)")
        overlay = _overlay("UserHeader", received_from, 8, truncate=True)
        destination_guid = uuid.UUID(bytes_le=overlay)  # what a reader finds there
        w.raw(overlay)
    else:
        w.guid("UserHeader.QueueManagerAddress", uh.queue_manager_address)
    w.u32("UserHeader.TimeToBeReceived", uh.time_to_be_received)
    w.u32("UserHeader.SentTime", uh.sent_time)
    w.u32("UserHeader.MessageID", uh.message_id)
    flags = (_uint("UserHeader.Flags.RC", f.rc, 0x1F)
             | _code("UserHeader.Flags.DM", DELIVERY_CODES, f.dm, 0x3) << 5
             | _flag("UserHeader.Flags.JN", f.jn) << 8
             | _flag("UserHeader.Flags.JP", f.jp) << 9
             | dq << 10 | aq << 13 | rq << 16
             | _flag("UserHeader.Flags.SH", f.sh) << 19
             | _flag("UserHeader.Flags.TH", f.th) << 20
             | _flag("UserHeader.Flags.MP", f.mp) << 21
             | _flag("UserHeader.Flags.CQ", f.cq) << 22
             | _flag("UserHeader.Flags.MQ", f.mq) << 23
             | _flag("UserHeader.Flags.AH", f.ah) << 25
             | _flag("UserHeader.Flags.HH", f.hh) << 28)
    w.u32("UserHeader.Flags", flags)
    admin_guid = None
    if isinstance(aq_layout, tuple) or aq_layout == "private":
        admin_guid = _format_name("UserHeader.AdminQueue", uh.admin_queue,
                                  FormatNameKind.PRIVATE).guid
    guids = {"source": uh.source_queue_manager, "destination": destination_guid,
             "admin": admin_guid}
    if rq_layout == ("id", "admin") and admin_guid is None:
        raise PacketError("UserHeader.Flags.RQ", "0x4 (private queue on the administration "
                                                 "queue's host) needs a private AdminQueue")
    _put_queue(w, "UserHeader.DestinationQueue", dq_layout, uh.destination_queue, guids)
    _put_queue(w, "UserHeader.AdminQueue", aq_layout, uh.admin_queue, guids)
    _put_queue(w, "UserHeader.ResponseQueue", rq_layout, uh.response_queue, guids)
    if uh.connector_type is not None:
        w.guid("UserHeader.ConnectorType", uh.connector_type)


def _transaction_id(value: Any) -> int:
    """TransactionHeader.Flags.ID (20 bits) of the ADM's TransactionIdentifier (choice 8)."""
    if isinstance(value, uuid.UUID):
        return value.int & 0xFFFFF
    if value is None:
        return 0
    return _uint("TransactionHeader.Flags.ID", value, 0xFFFFF)


def _put_transaction_header(w: _Writer, th: TransactionHeader) -> None:
    """MS-MQMQ 2.2.20.5 TransactionHeader."""
    f = th.flags
    if f.cg != (th.connector_qm_guid is not None):
        raise PacketError("TransactionHeader.Flags.CG",
                          "set if and only if ConnectorQMGuid is present")
    w.u32("TransactionHeader.Flags",
          _flag("TransactionHeader.Flags.CG", f.cg) | _flag("TransactionHeader.Flags.FA", f.fa) << 1
          | _flag("TransactionHeader.Flags.FM", f.fm) << 2
          | _flag("TransactionHeader.Flags.LM", f.lm) << 3 | _transaction_id(f.id) << 4)
    seq = th.tx_sequence_id if th.tx_sequence_id is not None else TxSequenceId()
    if not isinstance(seq, tuple) or len(seq) != 2:
        raise PacketError("TransactionHeader.TxSequenceID", f"{seq!r} is not a TxSequenceId")
    w.u32("TransactionHeader.TxSequenceID.Ordinal", seq[0])
    w.u32("TransactionHeader.TxSequenceID.TimeStamp", seq[1])
    w.u32("TransactionHeader.TxSequenceNumber", th.tx_sequence_number)
    w.u32("TransactionHeader.PreviousTxSequenceNumber", th.previous_tx_sequence_number)
    if th.connector_qm_guid is not None:
        w.guid("TransactionHeader.ConnectorQMGuid", th.connector_qm_guid)


def _put_security_header(w: _Writer, sh: SecurityHeader) -> None:
    """MS-MQMQ 2.2.20.6 SecurityHeader: Flags, five sizes, then the items, each padded."""
    f, d = sh.flags, sh.security_data
    items = [_blob("SecurityHeader.SecurityData.SecurityID", d.security_id),
             _blob("SecurityHeader.SecurityData.EncryptionKey", d.encryption_key),
             _blob("SecurityHeader.SecurityData.Signature", d.signature),
             _blob("SecurityHeader.SecurityData.SenderCert", d.sender_cert)]
    provider = b""
    if d.provider_info is not None:
        if f.de:
            raise PacketError("SecurityHeader.Flags.DE", "ProviderInfo goes only with DE clear "
                                                         "(an alternative provider)")
        info = d.provider_info
        pw = _Writer()
        pw.u32("SecurityHeader.SecurityData.ProviderInfo.ProviderType", info.provider_type)
        provider = bytes(pw.buf) + _wchars("SecurityHeader.SecurityData.ProviderInfo."
                                           "ProviderName", info.provider_name) + b"\0\0"
    w.u16("SecurityHeader.Flags",
          _code("SecurityHeader.Flags.ST", SENDER_ID_TYPE_CODES, f.st, 0xF)
          | _flag("SecurityHeader.Flags.AU", f.au) << 4
          | _flag("SecurityHeader.Flags.EB", f.eb) << 5
          | _flag("SecurityHeader.Flags.DE", f.de) << 6
          | _flag("SecurityHeader.Flags.AI", f.ai) << 7
          | _uint("SecurityHeader.Flags.AS", f.as_, 0xF) << 8)
    w.u16("SecurityHeader.SenderIdSize", len(items[0]))
    w.u16("SecurityHeader.EncryptionKeySize", len(items[1]))
    w.u16("SecurityHeader.SignatureSize", len(items[2]))
    w.u32("SecurityHeader.SenderCertSize", len(items[3]))
    w.u32("SecurityHeader.ProviderInfoSize", len(provider))
    for item in (*items, provider):  # "Each field MUST be aligned up to the next 4-byte boundary"
        w.raw(item)
        w.pad4()


def _put_message_properties_header(w: _Writer, mp: MessagePropertiesHeader) -> None:
    """MS-MQMQ 2.2.19.3 MessagePropertiesHeader; padded to a multiple of 4 bytes."""
    f = mp.flags
    label = _wchars("MessagePropertiesHeader.Label", mp.label)
    if "\0" in mp.label:
        raise PacketError("MessagePropertiesHeader.Label", "a label has no null character "
                                                           "before its end (MS-MQMQ 2.2.19.3)")
    label_length = len(label) // 2 + 1 if label else 0
    if label_length > MAX_LABEL_LENGTH:
        raise PacketError("MessagePropertiesHeader.LabelLength",
                          f"{label_length} WCHARs with the null exceed 0xFA")
    extension = _blob("MessagePropertiesHeader.ExtensionData", mp.extension_data)
    body = _blob("MessagePropertiesHeader.MessageBody", mp.message_body)
    correlation = mp.correlation_id
    if not isinstance(correlation, tuple) or len(correlation) != 2:
        raise PacketError("MessagePropertiesHeader.CorrelationID",
                          f"{correlation!r} is not an OBJECTID")
    w.u8("MessagePropertiesHeader.Flags",
         _flag("MessagePropertiesHeader.Flags.PA", f.pa)
         | _flag("MessagePropertiesHeader.Flags.PR", f.pr) << 1
         | _flag("MessagePropertiesHeader.Flags.NA", f.na) << 2
         | _flag("MessagePropertiesHeader.Flags.NR", f.nr) << 3)
    w.u8("MessagePropertiesHeader.LabelLength", label_length)
    w.u16("MessagePropertiesHeader.MessageClass",
          _code("MessagePropertiesHeader.MessageClass", CLASS_CODES, mp.message_class, 0xFFFF))
    w.guid("MessagePropertiesHeader.CorrelationID", correlation[0])
    w.u32("MessagePropertiesHeader.CorrelationID", correlation[1])
    w.u32("MessagePropertiesHeader.BodyType", mp.body_type)
    w.u32("MessagePropertiesHeader.ApplicationTag", mp.application_tag)
    w.u32("MessagePropertiesHeader.MessageSize", len(body))  # MS-MQDMPR/3.1.7.1.32/R7
    w.u32("MessagePropertiesHeader.AllocationBodySize", len(body))  # choice 2
    w.u32("MessagePropertiesHeader.PrivacyLevel",
          _code("MessagePropertiesHeader.PrivacyLevel", PRIVACY_CODES, mp.privacy_level,
                0xFFFFFFFF))
    w.u32("MessagePropertiesHeader.HashAlgorithm",
          _code("MessagePropertiesHeader.HashAlgorithm", HASH_CODES, mp.hash_algorithm,
                0xFFFFFFFF))
    w.u32("MessagePropertiesHeader.EncryptionAlgorithm",
          _code("MessagePropertiesHeader.EncryptionAlgorithm", ENCRYPTION_CODES,
                mp.encryption_algorithm, 0xFFFFFFFF))
    w.u32("MessagePropertiesHeader.ExtensionSize", len(extension))  # MS-MQDMPR/3.1.7.1.32/R8
    if label:
        w.raw(label + b"\0\0")
    w.raw(extension)
    w.raw(body)
    w.pad4()  # "MUST be a multiple of 4 bytes in length"


def _put_debug_header(w: _Writer, dh: DebugHeader) -> None:
    """MS-MQMQ 2.2.20.8 DebugHeader."""
    qt = _uint("DebugHeader.Flags.QT", dh.flags.qt, 0x1)
    if (qt == 0x1) != (dh.queue_identifier is not None):
        raise PacketError("DebugHeader.Flags.QT", "0x1 if and only if QueueIdentifier is "
                                                  "present")
    w.u16("DebugHeader.Flags", qt)
    w.u16("DebugHeader.Reserved", 0)
    if dh.queue_identifier is not None:
        w.guid("DebugHeader.QueueIdentifier", dh.queue_identifier)


def _put_srmp_headers(w: _Writer, env: SRMPEnvelopeHeader, cmh: CompoundMessageHeader) -> None:
    """MS-MQRR 2.2.5.1.2.1 SRMPEnvelopeHeader and 2.2.5.1.2.2 CompoundMessageHeader."""
    if not isinstance(env, SRMPEnvelopeHeader):
        raise PacketError("SRMPEnvelopeHeader", f"{env!r} is not an SRMPEnvelopeHeader")
    if not isinstance(cmh, CompoundMessageHeader):
        raise PacketError("CompoundMessageHeader", f"{cmh!r} is not a CompoundMessageHeader")
    count, raw = _counted("SRMPEnvelopeHeader.Data", env.data)
    w.u16("SRMPEnvelopeHeader.HeaderId", env.header_id)
    w.u16("SRMPEnvelopeHeader.Reserved", 0)
    w.u32("SRMPEnvelopeHeader.DataLength", count)  # MS-MQRR/2.2.5.1.2.1/R3 (choice 5)
    w.raw(raw)
    w.pad4()
    data = _blob("CompoundMessageHeader.Data", cmh.data)
    offset = _uint("CompoundMessageHeader.MsgBodyOffset", cmh.msg_body_offset, 0xFFFFFFFF)
    size = _uint("CompoundMessageHeader.MsgBodySize", cmh.msg_body_size, 0xFFFFFFFF)
    if offset + size > len(data):
        raise PacketError("CompoundMessageHeader.MsgBodyOffset",
                          f"the body ({offset}, {size} bytes) is not within the {len(data)} "
                          f"bytes of Data")
    w.u16("CompoundMessageHeader.HeaderId", cmh.header_id)
    w.u16("CompoundMessageHeader.Reserved", 0)
    w.u32("CompoundMessageHeader.HTTPBodySize", len(data))  # MS-MQRR/2.2.5.1.2.2/R3
    w.u32("CompoundMessageHeader.MsgBodySize", size)  # MS-MQRR/2.2.5.1.2.2/R4
    w.u32("CompoundMessageHeader.MsgBodyOffset", offset)  # MS-MQRR/2.2.5.1.2.2/R5
    w.raw(data)
    w.pad4()


def _put_soap_header(w: _Writer, soap: SoapHeader) -> None:
    """MS-MQMQ 2.2.20.7 SoapHeader: two sections, each padded (choice 5)."""
    if not isinstance(soap, SoapHeader):
        raise PacketError("SoapHeader", f"{soap!r} is not a SoapHeader")
    for name, section_id, text in (("Header", SOAP_HEADER_SECTION_ID, soap.header),
                                   ("Body", SOAP_BODY_SECTION_ID, soap.body)):
        count, raw = _counted(f"SoapHeader.{name}", text)
        w.u16(f"SoapHeader.{name}SectionID", section_id)
        w.u16("SoapHeader.Reserved", 0)
        w.u32(f"SoapHeader.{name}DataLength", count)
        w.raw(raw)
        w.pad4()


_MQF_TYPES = {FormatNameKind.PUBLIC: 0x1, FormatNameKind.PRIVATE: 0x2,
              FormatNameKind.DIRECT: 0x3, FormatNameKind.DL: 0x6}


def _put_mqf_address(w: _Writer, field: str, header_id: int, names: Any) -> None:
    """MS-MQMQ 2.2.20.2 MQFAddressHeader with MQFFormatNameElements (2.2.18.1.4)."""
    if not isinstance(names, (tuple, list)):
        raise PacketError(field, f"{names!r} is not a sequence of format names")
    start = len(w.buf)
    w.u32(f"{field}.HeaderSize", 0)
    w.u16(f"{field}.HeaderID", header_id)
    w.u16(f"{field}.Reserved", 0)
    w.u32(f"{field}.ElementCount", len(names))
    for i, name in enumerate(names):
        element = f"{field}.FormatNameList[{i}]"
        if isinstance(name, str) and name[:7].upper() == "DIRECT=":
            w.u16(f"{element}.FormatType", 0x3)  # MQFDirectQueueFormatName (2.2.18.1.4.1)
            w.raw(_wchars(element, _direct_string(element, name)) + b"\0\0")
            continue
        if not isinstance(name, str):
            raise PacketError(element, f"{type(name).__name__} is not a format name string")
        try:
            parsed = parse_format_name(name)
        except FormatNameError as e:
            raise PacketError(element, str(e)) from None
        if (parsed.kind not in _MQF_TYPES or parsed.domain is not None
                or parsed.suffix is not QueueSuffixType.QUEUE_SUFFIX_TYPE_NONE):
            raise PacketError(element, f"{name!r} has no MQFFormatNameElement form "
                                       f"(PUBLIC=, PRIVATE=, DIRECT=, DL= without domain)")
        w.u16(f"{element}.FormatType", _MQF_TYPES[parsed.kind])
        w.pad4()  # the GUID "is rounded up to the next 4-byte boundary" (choice 6)
        w.guid(element, parsed.guid)
        if parsed.kind is FormatNameKind.PRIVATE:
            w.u32(element, parsed.queue_number)
    w.pad4()  # "The end of this field is rounded up to the next 4-byte boundary"
    w.patch32(start, len(w.buf) - start)


def _put_multi_queue_format_header(w: _Writer, mq: MultiQueueFormatHeader) -> None:
    """MS-MQMQ 2.2.20.1 MultiQueueFormatHeader: Destination, Administration, Response
    (MQFAddressHeaders) and Signature (MQFSignatureHeader, 2.2.20.3)."""
    _put_mqf_address(w, "MultiQueueFormatHeader.Destination", MQF_DESTINATION_ID,
                     mq.destination)
    _put_mqf_address(w, "MultiQueueFormatHeader.Administration", MQF_ADMIN_ID,
                     mq.administration)
    _put_mqf_address(w, "MultiQueueFormatHeader.Response", MQF_RESPONSE_ID, mq.response)
    signature = _blob("MultiQueueFormatHeader.Signature", mq.signature)
    w.u16("MQFSignatureHeader.ID", MQF_SIGNATURE_ID)
    w.u16("MQFSignatureHeader.Reserved", 0)
    w.u32("MQFSignatureHeader.Size", len(signature))
    w.raw(signature)
    w.pad4()


def _put_session_header(w: _Writer, s: SessionHeader) -> None:
    """MS-MQMQ 2.2.20.4 SessionHeader."""
    if not isinstance(s, SessionHeader):
        raise PacketError("SessionHeader", f"{s!r} is not a SessionHeader")
    w.u16("SessionHeader.AckSequenceNumber", s.ack_sequence_number)
    w.u16("SessionHeader.RecoverableMsgAckSeqNumber", s.recoverable_msg_ack_seq_number)
    w.u32("SessionHeader.RecoverableMsgAckFlags", s.recoverable_msg_ack_flags)
    w.u16("SessionHeader.UserMsgSequenceNumber", s.user_msg_sequence_number)
    w.u16("SessionHeader.RecoverableMsgSeqNumber", s.recoverable_msg_seq_number)
    w.u16("SessionHeader.WindowSize", s.window_size)
    w.u16("SessionHeader.Reserved", 0)


def _subqueue_name(field: str, name: Any) -> bytes:
    raw = _wchars(field, name)
    if "\0" in name or len(raw) + 2 > SUBQUEUE_NAME_SIZE:
        raise PacketError(field, f"{name!r} is not a name of at most 31 WCHARs without null")
    return raw + bytes(SUBQUEUE_NAME_SIZE - len(raw))  # zero-filled (MS-MQRR/2.2.5.3/R6, R9)


def _trailers(extras: PacketExtras) -> bytes:
    """MS-MQRR 2.2.5.2 to 2.2.5.5: ExtensionHeader, SubqueueHeader, DeadLetterHeader,
    ExtendedAddressHeader."""
    ext, sq, dl, ea = (extras.extension_header, extras.subqueue_header,
                       extras.dead_letter_header, extras.extended_address_header)
    if ext is None:
        if (sq, dl, ea) != (None, None, None):
            raise PacketError("ExtensionHeader", "the trailer headers need an ExtensionHeader")
        return b""
    if not isinstance(ext, ExtensionHeader):
        raise PacketError("ExtensionHeader", f"{ext!r} is not an ExtensionHeader")
    if sq is None:
        raise PacketError("ExtensionHeader.Flags.SQ", "MUST be set: a SubqueueHeader is "
                                                      "required (MS-MQRR/2.2.5.2/R4)")
    if ea is None:
        raise PacketError("ExtensionHeader.Flags.EA", "MUST be set: an ExtendedAddressHeader "
                                                      "is required (MS-MQRR/2.2.5.2/R9)")
    w = _Writer()
    if not isinstance(sq, SubqueueHeader):
        raise PacketError("SubqueueHeader", f"{sq!r} is not a SubqueueHeader")
    w.u32("SubqueueHeader.HeaderSize", SUBQUEUE_HEADER_SIZE)
    # A (TM) is 0 (MS-MQRR/2.2.5.3/R2); AcknowledgementClass bits 1-16 (choice 10)
    w.u32("SubqueueHeader.AcknowledgementClass",
          _uint("SubqueueHeader.AcknowledgementClass", sq.acknowledgement_class, 0xFFFF) << 1)
    w.u32("SubqueueHeader.AbortCounter", sq.abort_counter)
    w.u32("SubqueueHeader.MoveCounter", sq.move_counter)
    w.u32("SubqueueHeader.LastMoveTime", sq.last_move_time)
    w.raw(_subqueue_name("SubqueueHeader.SubqueueName", sq.subqueue_name))
    w.raw(_subqueue_name("SubqueueHeader.TargetSubqueueName", sq.target_subqueue_name))
    if dl is not None:
        if not isinstance(dl, DeadLetterHeader):
            raise PacketError("DeadLetterHeader", f"{dl!r} is not a DeadLetterHeader")
        path = _wchars("DeadLetterHeader.DeadLetterPathName", dl.dead_letter_path_name)
        if "\0" in dl.dead_letter_path_name:
            raise PacketError("DeadLetterHeader.DeadLetterPathName", "has a null character")
        path += b"\0\0"  # MS-MQRR/2.2.5.4/R2
        path += bytes(-len(path) % 4)  # MS-MQRR/2.2.5.4/R3
        w.u32("DeadLetterHeader.HeaderSize", 4 + len(path))  # MS-MQRR/2.2.5.4/R1
        w.raw(path)
    w.u32("ExtendedAddressHeader.HeaderSize", EXTENDED_ADDRESS_HEADER_SIZE)
    w.raw(_overlay("ExtendedAddressHeader", ea, 16, truncate=False))
    following = bytes(w.buf)
    flags = (int(dl is not None)  # DL: MS-MQRR/2.2.5.2/R2, MS-MQRR/2.2.5.2/R3
             | 1 << 1  # SQ: MS-MQRR/2.2.5.2/R4
             | _flag("ExtensionHeader.Flags.DI", ext.dead_letter_invalid) << 3  # R6, R7
             | 1 << 4)  # EA: MS-MQRR/2.2.5.2/R9
    head = _Writer()
    head.u32("ExtensionHeader.HeaderSize", EXTENSION_HEADER_SIZE)
    head.u32("ExtensionHeader.RemainingHeadersSize", len(following))  # MS-MQRR/2.2.5.2/R1
    head.u8("ExtensionHeader.Flags", flags)
    head.raw(bytes(3))  # Reserved
    return bytes(head.buf) + following


#: SubqueueHeader.SubqueueName within the SubqueueHeader (MS-MQRR 2.2.5.3: HeaderSize,
#: the A/AcknowledgementClass ULONG, AbortCounter, MoveCounter, LastMoveTime come first)
SUBQUEUE_NAME_OFFSET = 20


def time_to_reach_queue(packet: bytes) -> tuple[int, int] | None:
    """(BaseHeader.TimeToReachQueue, UserHeader.SentTime) of an encoded packet, or None when
    it is too short to hold both (MS-MQMQ 2.2.19.1, 2.2.19.2)."""
    if len(packet) < SENT_TIME_OFFSET + 4:
        return None
    return (int.from_bytes(packet[TIME_TO_REACH_QUEUE_OFFSET:TIME_TO_REACH_QUEUE_OFFSET + 4],
                           "little"),
            int.from_bytes(packet[SENT_TIME_OFFSET:SENT_TIME_OFFSET + 4], "little"))


def set_time_to_reach_queue(packet: bytes, value: int) -> bytes:
    """The encoded packet with BaseHeader.TimeToReachQueue set to ``value`` (what MS-MQRR
    3.1.4.7 asks of a packet handed to a client); every other octet as it was."""
    if len(packet) < TIME_TO_REACH_QUEUE_OFFSET + 4:
        raise PacketError("BaseHeader.TimeToReachQueue", "the packet is too short")
    value = _uint("BaseHeader.TimeToReachQueue", value, 0xFFFFFFFF)
    return (packet[:TIME_TO_REACH_QUEUE_OFFSET] + value.to_bytes(4, "little")
            + packet[TIME_TO_REACH_QUEUE_OFFSET + 4:])


def with_subqueue_name(packet: bytes, user_message_size: int, subqueue: str | None) -> bytes:
    """The encoded packet with SubqueueHeader.SubqueueName naming ``subqueue``: the
    null-terminated name padded with 0x00 (MS-MQRR/2.2.5.3/R5, MS-MQRR/2.2.5.3/R6), or all
    0x00 outside a subqueue (MS-MQRR/2.2.5.3/R7). ``user_message_size``: where the UserMessage
    ends (DecodedPacket.user_message_size: the SessionHeader, if BaseHeader.Flags.SH, then
    the ExtensionHeader; not Offset's trailers, which begin at the body's end). A packet
    without a SubqueueHeader is returned as it is (the same object); a name longer than the
    field takes is cut to what it holds."""
    if len(packet) < 4:
        return packet
    ext = user_message_size + (SESSION_HEADER_SIZE
                            if int.from_bytes(packet[2:4], "little") >> 4 & 1 else 0)
    if len(packet) < ext + EXTENSION_HEADER_SIZE or not packet[ext + 8] >> 1 & 1:  # Flags.SQ
        return packet
    field = ext + EXTENSION_HEADER_SIZE + SUBQUEUE_NAME_OFFSET
    name = (subqueue or "")[:SUBQUEUE_NAME_SIZE // 2 - 1].encode("utf-16-le")
    return packet[:field] + name.ljust(SUBQUEUE_NAME_SIZE, b"\0") \
        + packet[field + SUBQUEUE_NAME_SIZE:]


def _check_presence(p: UserMessagePacket, extras: PacketExtras) -> None:
    """The flags that announce headers agree with the headers present (MS-MQMQ 2.2.20,
    MS-MQRR 2.2.5.1)."""
    bf, uf = p.base_header.flags, p.user_header.flags
    rules = (
        ("BaseHeader.Flags.IN", bf.in_, False,
         "MUST NOT be set in a UserMessage Packet (MS-MQMQ 2.2.20)"),
        ("BaseHeader.Flags.SH", bf.sh, extras.session_header is not None,
         "set if and only if a SessionHeader is present (MS-MQRR/2.2.5.1/R7)"),
        ("BaseHeader.Flags.DH", bf.dh, p.debug_header is not None,
         "set if and only if a DebugHeader is present (MS-MQMQ 2.2.19.1)"),
        ("UserHeader.Flags.TH", uf.th, p.transaction_header is not None,
         "set if and only if a TransactionHeader is present (MS-MQMQ 2.2.20)"),
        ("UserHeader.Flags.SH", uf.sh, p.security_header is not None,
         "set if and only if a SecurityHeader is present (MS-MQMQ 2.2.20)"),
        ("UserHeader.Flags.MP", uf.mp, True,
         "MUST always be set (MS-MQMQ 2.2.19.2)"),
        ("MessagePropertiesHeader", p.message_properties_header is not None, True,
         "MUST be present (MS-MQMQ 2.2.20)"),
        ("UserHeader.Flags.MQ", uf.mq, p.multi_queue_format_header is not None,
         "set if and only if a MultiQueueFormatHeader is present (MS-MQMQ 2.2.20)"),
        ("UserHeader.Flags.HH", uf.hh, extras.soap_header is not None,
         "set if and only if a SoapHeader is present (MS-MQMQ 2.2.20)"),
        # MS-MQRR/2.2.5.1.2.1/R1 MS-MQRR/2.2.5.1.2.2/R1: the SRMP headers only with AH
        ("UserHeader.Flags.AH", uf.ah, extras.srmp_envelope_header is not None,
         "set if and only if the SRMP headers are present (MS-MQRR/2.2.5.1.1/R1, "
         "MS-MQRR/2.2.5.1.2/R1)"),
        ("CompoundMessageHeader", extras.compound_message_header is not None,
         extras.srmp_envelope_header is not None,
         "goes with an SRMPEnvelopeHeader (MS-MQRR/2.2.5.1.2/R1)"),
    )
    for field, actual, wanted, reason in rules:
        if bool(actual) != bool(wanted):
            raise PacketError(field, reason)
    if bf.tr and not bf.dh:
        raise PacketError("BaseHeader.Flags.TR", "set without DH (MS-MQMQ 2.2.19.1)")


def encode_packet(p: UserMessagePacket, extras: PacketExtras | None = None) -> bytes:
    """The bytes of a message packet: ``p`` (MS-MQDMPR 3.1.7.1.30's structure) with the parts
    in ``extras``. Computes every size and count and sets BaseHeader.PacketSize (choice 1).
    Raises PacketError for a value that has no wire form."""
    if not isinstance(p, UserMessagePacket):
        raise PacketError("UserMessage", f"{type(p).__name__} is not a UserMessagePacket")
    extras = PacketExtras() if extras is None else extras
    if not isinstance(extras, PacketExtras):
        raise PacketError("UserMessage", f"{type(extras).__name__} is not PacketExtras")
    _check_presence(p, extras)
    w = _Writer()
    base = p.base_header
    bf = base.flags
    w.u8("BaseHeader.VersionNumber", base.version_number)
    w.u8("BaseHeader.Reserved", 0)
    w.u16("BaseHeader.Flags",
          _uint("BaseHeader.Flags.PR", bf.pr, 0x7) | _flag("BaseHeader.Flags.IN", bf.in_) << 3
          | _flag("BaseHeader.Flags.SH", bf.sh) << 4 | _flag("BaseHeader.Flags.DH", bf.dh) << 5
          | _flag("BaseHeader.Flags.TR", bf.tr) << 8)
    w.u32("BaseHeader.Signature", base.signature)
    w.u32("BaseHeader.PacketSize", 0)  # set below
    w.u32("BaseHeader.TimeToReachQueue", base.time_to_reach_queue)
    _put_user_header(w, p.user_header, extras.received_from)
    if p.transaction_header is not None:
        _put_transaction_header(w, p.transaction_header)
    if p.security_header is not None:
        _put_security_header(w, p.security_header)
    _put_message_properties_header(w, p.message_properties_header)
    if p.debug_header is not None:
        _put_debug_header(w, p.debug_header)
    if extras.srmp_envelope_header is not None:
        _put_srmp_headers(w, extras.srmp_envelope_header, extras.compound_message_header)
    if extras.soap_header is not None:
        _put_soap_header(w, extras.soap_header)
    if p.multi_queue_format_header is not None:
        _put_multi_queue_format_header(w, p.multi_queue_format_header)
    packet_size = len(w.buf)
    if packet_size > MAX_PACKET_SIZE:
        raise PacketError("BaseHeader.PacketSize", f"{packet_size} bytes exceed the maximum "
                                                   f"0x00400000 (MS-MQMQ 2.2.19.1)")
    w.patch32(PACKET_SIZE_OFFSET, packet_size)  # MS-MQDMPR/3.1.7.1.32/R4
    if extras.session_header is not None:
        _put_session_header(w, extras.session_header)
    w.raw(_trailers(extras))
    return bytes(w.buf)


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------


class _Reader:
    """Reads fields from ``data[pos:end]``; running out is a PacketError naming the field."""

    def __init__(self, data: bytes, pos: int = 0, end: int | None = None) -> None:
        self.data = data
        self.pos = pos
        self.end = len(data) if end is None else end

    def take(self, n: int, field: str) -> bytes:
        if n < 0 or n > self.end - self.pos:
            raise PacketError(field, f"needs {n} bytes at offset {self.pos}; "
                                     f"{max(self.end - self.pos, 0)} are left")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def u8(self, field: str) -> int:
        return self.take(1, field)[0]

    def u16(self, field: str) -> int:
        return int.from_bytes(self.take(2, field), "little")

    def u32(self, field: str) -> int:
        return int.from_bytes(self.take(4, field), "little")

    def guid(self, field: str) -> uuid.UUID:
        return uuid.UUID(bytes_le=self.take(16, field))

    def align4(self, field: str) -> None:
        """Skips the padding to the next 4-byte boundary of the packet (any values)."""
        self.take(-self.pos % 4, f"{field} (padding)")

    def wchars(self, count: int, field: str) -> str:
        """``count`` WCHARs; the terminating null, if there, is not part of the string."""
        text = self.take(2 * count, field).decode("utf-16-le", "surrogatepass")
        return text[:-1] if text.endswith("\0") else text

    def wstring(self, field: str) -> str:
        """A null-terminated WCHAR string."""
        at = self.pos
        while True:
            hit = self.data.find(b"\0\0", at, self.end)
            if hit < 0:
                raise PacketError(field, f"no terminating null after offset {self.pos}")
            if (hit - self.pos) % 2 == 0:
                break
            at = hit + 1
        return self.wchars((hit - self.pos) // 2 + 1, field)


def _bits(value: int, shift: int, width: int) -> int:
    return value >> shift & ((1 << width) - 1)


def _known(field: str, values: dict, code: int) -> Any:
    if code not in values:
        raise PacketError(field, f"{code:#x} is not one of the values of MS-MQMQ 2.2.19.2")
    return values[code]


def _read_queue(r: _Reader, field: str, layout: Any,
                guids: dict[str, Any]) -> tuple[str, uuid.UUID | None]:
    """One queue name field: its format name (choice 4) and, for a private queue, the GUID of
    the queue manager that hosts it."""
    if layout is None or layout == "same":
        return "", None
    if isinstance(layout, tuple):
        number = r.u32(field)
        guid = guids[layout[1]]
        return f"PRIVATE={guid}\\{number:08x}", guid
    if layout == "public":
        return f"PUBLIC={r.guid(field)}", None
    if layout == "private":
        guid = r.guid(field)
        return f"PRIVATE={guid}\\{r.u32(field):08x}", guid
    count = r.u16(f"{field}.Count")
    if count % 2 or count == 0:
        raise PacketError(f"{field}.Count", f"{count} is not a positive even number of bytes")
    name = r.wchars(count // 2, field)
    r.align4(field)
    return "DIRECT=" + name, None


def _read_user_header(r: _Reader) -> tuple[UserHeader, HostAddress | None]:
    source = r.guid("UserHeader.SourceQueueManager")
    raw_address = r.take(16, "UserHeader.QueueManagerAddress")
    time_to_be_received = r.u32("UserHeader.TimeToBeReceived")
    sent_time = r.u32("UserHeader.SentTime")
    message_id = r.u32("UserHeader.MessageID")
    flags = r.u32("UserHeader.Flags")
    dq, aq, rq = _bits(flags, 10, 3), _bits(flags, 13, 3), _bits(flags, 16, 3)
    for field, layouts, code in (("UserHeader.Flags.DQ", _DQ_LAYOUT, dq),
                                 ("UserHeader.Flags.AQ", _AQ_LAYOUT, aq),
                                 ("UserHeader.Flags.RQ", _RQ_LAYOUT, rq)):
        _known(field, layouts, code)  # any other value "MUST be treated as an error"
    address = uuid.UUID(bytes_le=raw_address)
    received_from = None
    if dq == 0x7 and any(raw_address):  # MS-MQRR 2.2.5.1 overlay (choice 9)
        length = int.from_bytes(raw_address[0:2], "little")
        received_from = HostAddress(int.from_bytes(raw_address[2:4], "little"),
                                    raw_address[8:8 + min(length, 8)], length,
                                    int.from_bytes(raw_address[4:8], "little"))
    guids: dict[str, Any] = {"source": source, "destination": address, "admin": None}
    destination, _ = _read_queue(r, "UserHeader.DestinationQueue", _DQ_LAYOUT[dq], guids)
    admin, guids["admin"] = _read_queue(r, "UserHeader.AdminQueue", _AQ_LAYOUT[aq], guids)
    if rq == 0x4 and guids["admin"] is None:
        raise PacketError("UserHeader.Flags.RQ", "0x4 (private queue on the administration "
                                                 "queue's host) without a private AdminQueue")
    response, _ = _read_queue(r, "UserHeader.ResponseQueue", _RQ_LAYOUT[rq], guids)
    if rq == 0x1:
        response = admin  # "the response queue is the same as the administration queue"
    cq = bool(flags >> 22 & 1)
    connector = r.guid("UserHeader.ConnectorType") if cq else None
    dm = _known("UserHeader.Flags.DM", _DELIVERY_VALUES, _bits(flags, 5, 2))
    user_flags = UserHeaderFlags(
        rc=_bits(flags, 0, 5), dm=dm, jn=bool(flags >> 8 & 1), jp=bool(flags >> 9 & 1),
        dq=_DESTINATION_VALUES[dq], aq=_ADMINISTRATION_VALUES[aq], rq=_RESPONSE_VALUES[rq],
        sh=bool(flags >> 19 & 1), th=bool(flags >> 20 & 1), mp=bool(flags >> 21 & 1), cq=cq,
        mq=bool(flags >> 23 & 1), ah=bool(flags >> 25 & 1), hh=bool(flags >> 28 & 1))
    return UserHeader(source_queue_manager=source, queue_manager_address=address,
                      time_to_be_received=time_to_be_received, sent_time=sent_time,
                      message_id=message_id, flags=user_flags, destination_queue=destination,
                      admin_queue=admin, response_queue=response,
                      connector_type=connector), received_from


def _read_transaction_header(r: _Reader) -> TransactionHeader:
    flags = r.u32("TransactionHeader.Flags")
    seq = TxSequenceId(r.u32("TransactionHeader.TxSequenceID.Ordinal"),
                       r.u32("TransactionHeader.TxSequenceID.TimeStamp"))
    number = r.u32("TransactionHeader.TxSequenceNumber")
    previous = r.u32("TransactionHeader.PreviousTxSequenceNumber")
    cg = bool(flags & 1)
    connector = r.guid("TransactionHeader.ConnectorQMGuid") if cg else None
    return TransactionHeader(
        flags=TransactionHeaderFlags(cg=cg, fa=bool(flags >> 1 & 1), fm=bool(flags >> 2 & 1),
                                     lm=bool(flags >> 3 & 1), id=_bits(flags, 4, 20)),
        tx_sequence_id=seq, tx_sequence_number=number, previous_tx_sequence_number=previous,
        connector_qm_guid=connector)


def _read_security_header(r: _Reader) -> SecurityHeader:
    flags = r.u16("SecurityHeader.Flags")
    sizes = [r.u16("SecurityHeader.SenderIdSize"), r.u16("SecurityHeader.EncryptionKeySize"),
             r.u16("SecurityHeader.SignatureSize"), r.u32("SecurityHeader.SenderCertSize")]
    provider_size = r.u32("SecurityHeader.ProviderInfoSize")
    items = []
    for name, size in zip(("SecurityID", "EncryptionKey", "Signature", "SenderCert"), sizes,
                          strict=True):
        items.append(r.take(size, f"SecurityHeader.SecurityData.{name}"))
        r.align4(f"SecurityHeader.SecurityData.{name}")
    de = bool(flags >> 6 & 1)
    provider = None
    if provider_size:
        if de:
            raise PacketError("SecurityHeader.ProviderInfoSize", "nonzero with Flags.DE set: "
                                                                 "ProviderInfo MUST NOT be "
                                                                 "included")
        if provider_size < 4 or provider_size % 2:
            raise PacketError("SecurityHeader.ProviderInfoSize",
                              f"{provider_size} is not 4 + an even number of bytes")
        info = _Reader(r.take(provider_size, "SecurityHeader.SecurityData.ProviderInfo"))
        provider_type = info.u32("SecurityHeader.SecurityData.ProviderInfo.ProviderType")
        provider = ProviderInfo(provider_type, info.wchars(
            (provider_size - 4) // 2, "SecurityHeader.SecurityData.ProviderInfo.ProviderName"))
        r.align4("SecurityHeader.SecurityData.ProviderInfo")
    st = _bits(flags, 0, 4)
    return SecurityHeader(
        flags=SecurityHeaderFlags(st=_SENDER_ID_TYPE_VALUES.get(st, st), au=bool(flags >> 4 & 1),
                                  eb=bool(flags >> 5 & 1), de=de, ai=bool(flags >> 7 & 1),
                                  as_=_bits(flags, 8, 4)),
        security_data=SecurityData(*items, provider_info=provider))


def _read_message_properties_header(r: _Reader) -> tuple[MessagePropertiesHeader, int, int]:
    """The header, the body's offset and where the header ends (its padding included)."""
    flags = r.u8("MessagePropertiesHeader.Flags")
    label_length = r.u8("MessagePropertiesHeader.LabelLength")
    if label_length > MAX_LABEL_LENGTH:
        raise PacketError("MessagePropertiesHeader.LabelLength",
                          f"{label_length} is above 0xFA (MS-MQMQ 2.2.19.3)")
    message_class = r.u16("MessagePropertiesHeader.MessageClass")
    correlation = OBJECTID(r.guid("MessagePropertiesHeader.CorrelationID"),
                           r.u32("MessagePropertiesHeader.CorrelationID"))
    body_type = r.u32("MessagePropertiesHeader.BodyType")
    application_tag = r.u32("MessagePropertiesHeader.ApplicationTag")
    message_size = r.u32("MessagePropertiesHeader.MessageSize")
    allocation = r.u32("MessagePropertiesHeader.AllocationBodySize")
    if allocation < message_size:
        raise PacketError("MessagePropertiesHeader.AllocationBodySize",
                          f"{allocation} is less than MessageSize {message_size}")
    privacy = r.u32("MessagePropertiesHeader.PrivacyLevel")
    hash_algorithm = r.u32("MessagePropertiesHeader.HashAlgorithm")
    encryption = r.u32("MessagePropertiesHeader.EncryptionAlgorithm")
    extension_size = r.u32("MessagePropertiesHeader.ExtensionSize")
    label = r.wchars(label_length, "MessagePropertiesHeader.Label")
    extension = r.take(extension_size, "MessagePropertiesHeader.ExtensionData")
    body_offset = r.pos
    allocated = r.take(allocation, "MessagePropertiesHeader.MessageBody")  # choice 2
    r.align4("MessagePropertiesHeader")
    header = MessagePropertiesHeader(
        flags=MessagePropertiesHeaderFlags(pa=bool(flags & 1), pr=bool(flags >> 1 & 1),
                                           na=bool(flags >> 2 & 1), nr=bool(flags >> 3 & 1)),
        message_class=_CLASS_VALUES.get(message_class, message_class),
        correlation_id=correlation, body_type=body_type, application_tag=application_tag,
        privacy_level=_PRIVACY_VALUES.get(privacy, privacy),
        hash_algorithm=_HASH_VALUES.get(hash_algorithm, hash_algorithm),
        encryption_algorithm=_ENCRYPTION_VALUES.get(encryption, encryption),
        label=label, extension_data=extension, message_body=allocated[:message_size])
    return header, body_offset, r.pos


def _read_debug_header(r: _Reader) -> DebugHeader:
    flags = r.u16("DebugHeader.Flags")
    r.u16("DebugHeader.Reserved")
    qt = _bits(flags, 0, 2)
    if qt not in (0x0, 0x1):
        raise PacketError("DebugHeader.Flags.QT", f"{qt:#x} is not 0x0 or 0x1 "
                                                  f"(MS-MQMQ 2.2.20.8)")
    queue = r.guid("DebugHeader.QueueIdentifier") if qt == 0x1 else None
    return DebugHeader(DebugHeaderFlags(qt=qt), queue_identifier=queue)


def _read_srmp_headers(r: _Reader) -> tuple[SRMPEnvelopeHeader, CompoundMessageHeader, int, int]:
    """The two SRMP headers, and where the CompoundMessageHeader starts and ends."""
    header_id = r.u16("SRMPEnvelopeHeader.HeaderId")
    r.u16("SRMPEnvelopeHeader.Reserved")  # MS-MQRR/2.2.5.1.2.1/R2: ignored
    length = r.u32("SRMPEnvelopeHeader.DataLength")
    envelope = SRMPEnvelopeHeader(r.wchars(length, "SRMPEnvelopeHeader.Data"), header_id)
    r.align4("SRMPEnvelopeHeader")
    start = r.pos
    cmh_id = r.u16("CompoundMessageHeader.HeaderId")
    r.u16("CompoundMessageHeader.Reserved")  # MS-MQRR/2.2.5.1.2.2/R2: ignored
    size = r.u32("CompoundMessageHeader.HTTPBodySize")
    body_size = r.u32("CompoundMessageHeader.MsgBodySize")
    body_offset = r.u32("CompoundMessageHeader.MsgBodyOffset")
    data = r.take(size, "CompoundMessageHeader.Data")
    if body_offset + body_size > size:
        raise PacketError("CompoundMessageHeader.MsgBodyOffset",
                          f"the body ({body_offset}, {body_size} bytes) is not within the "
                          f"{size} bytes of Data")
    r.align4("CompoundMessageHeader")
    return envelope, CompoundMessageHeader(data, body_offset, body_size, cmh_id), start, r.pos


def _read_soap_header(r: _Reader) -> SoapHeader:
    texts = []
    for name, section_id in (("Header", SOAP_HEADER_SECTION_ID), ("Body", SOAP_BODY_SECTION_ID)):
        found = r.u16(f"SoapHeader.{name}SectionID")
        if found != section_id:
            raise PacketError(f"SoapHeader.{name}SectionID",
                              f"{found:#06x} is not {section_id:#06x} (MS-MQMQ 2.2.20.7)")
        r.u16("SoapHeader.Reserved")
        length = r.u32(f"SoapHeader.{name}DataLength")
        texts.append(r.wchars(length, f"SoapHeader.{name}"))
        r.align4(f"SoapHeader.{name}")
    return SoapHeader(*texts)


_MQF_KINDS = {0x1: "PUBLIC", 0x2: "PRIVATE", 0x3: "DIRECT", 0x6: "DL"}


def _read_mqf_address(r: _Reader, field: str, header_id: int) -> tuple[str, ...]:
    start = r.pos
    size = r.u32(f"{field}.HeaderSize")
    if size < 12 or size > r.end - start:
        raise PacketError(f"{field}.HeaderSize", f"{size} is not 12 to the {r.end - start} "
                                                 f"bytes left")
    found = r.u16(f"{field}.HeaderID")
    if found != header_id:
        raise PacketError(f"{field}.HeaderID", f"{found:#06x} is not {header_id:#06x} "
                                               f"(MS-MQMQ 2.2.20.2)")
    r.u16(f"{field}.Reserved")
    count = r.u32(f"{field}.ElementCount")
    inner = _Reader(r.data, r.pos, start + size)
    if count > (inner.end - inner.pos) // 4:  # every element takes at least 4 bytes
        raise PacketError(f"{field}.ElementCount", f"{count} elements do not fit in {size} "
                                                   f"bytes")
    names = []
    for i in range(count):
        element = f"{field}.FormatNameList[{i}]"
        kind = inner.u16(f"{element}.FormatType")
        if kind not in _MQF_KINDS:
            raise PacketError(f"{element}.FormatType", f"{kind:#06x} is not 0x0001, 0x0002, "
                                                       f"0x0003 or 0x0006 (MS-MQMQ 2.2.18.1.4)")
        if kind == 0x3:
            names.append("DIRECT=" + inner.wstring(element))
            continue
        inner.align4(element)
        guid = inner.guid(element)
        if kind == 0x2:
            names.append(f"PRIVATE={guid}\\{inner.u32(element):08x}")
        else:
            names.append(f"{_MQF_KINDS[kind]}={guid}")
    r.pos = start + size
    r.align4(field)
    return tuple(names)


def _read_multi_queue_format_header(r: _Reader) -> MultiQueueFormatHeader:
    destination = _read_mqf_address(r, "MultiQueueFormatHeader.Destination", MQF_DESTINATION_ID)
    administration = _read_mqf_address(r, "MultiQueueFormatHeader.Administration",
                                       MQF_ADMIN_ID)
    response = _read_mqf_address(r, "MultiQueueFormatHeader.Response", MQF_RESPONSE_ID)
    found = r.u16("MQFSignatureHeader.ID")
    if found != MQF_SIGNATURE_ID:
        raise PacketError("MQFSignatureHeader.ID", f"{found:#06x} is not 0x015e "
                                                   f"(MS-MQMQ 2.2.20.3)")
    r.u16("MQFSignatureHeader.Reserved")
    signature = r.take(r.u32("MQFSignatureHeader.Size"), "MQFSignatureHeader.Signature")
    r.align4("MQFSignatureHeader")
    return MultiQueueFormatHeader(destination, administration, response, signature)


def _read_session_header(r: _Reader) -> SessionHeader:
    header = SessionHeader(r.u16("SessionHeader.AckSequenceNumber"),
                           r.u16("SessionHeader.RecoverableMsgAckSeqNumber"),
                           r.u32("SessionHeader.RecoverableMsgAckFlags"),
                           r.u16("SessionHeader.UserMsgSequenceNumber"),
                           r.u16("SessionHeader.RecoverableMsgSeqNumber"),
                           r.u16("SessionHeader.WindowSize"))
    r.u16("SessionHeader.Reserved")
    return header


def _header_size(r: _Reader, field: str, minimum: int) -> tuple[int, int]:
    start = r.pos
    size = r.u32(f"{field}.HeaderSize")
    if size < minimum or size > r.end - start:
        raise PacketError(f"{field}.HeaderSize", f"{size} is not {minimum} to the "
                                                 f"{r.end - start} bytes left")
    return start, size


def _name_field(r: _Reader, field: str, size: int) -> str:
    """A null-terminated name in a fixed field (MS-MQRR 2.2.5.3, 2.2.5.4)."""
    return _Reader(r.take(size, field)).wstring(field)


def _read_trailers(r: _Reader) -> dict[str, Any]:
    """MS-MQRR 2.2.5.2 to 2.2.5.5, to the end of the buffer."""
    start, size = _header_size(r, "ExtensionHeader", EXTENSION_HEADER_SIZE)
    remaining = r.u32("ExtensionHeader.RemainingHeadersSize")
    flags = r.u8("ExtensionHeader.Flags")  # X2, X5, X6, X7 ignored (MS-MQRR/2.2.5.2/R5 ...)
    r.pos = start + size  # Reserved ignored (MS-MQRR/2.2.5.2/R13)
    if remaining != r.end - r.pos:  # MS-MQRR/2.2.5.2/R1
        raise PacketError("ExtensionHeader.RemainingHeadersSize",
                          f"{remaining} is not the {r.end - r.pos} bytes that follow")
    found: dict[str, Any] = {"extension_header": ExtensionHeader(
        # DI is ignored when there is no DeadLetterHeader (MS-MQRR/2.2.5.2/R8)
        dead_letter_invalid=bool(flags & 1 and flags >> 3 & 1))}
    if flags >> 1 & 1:  # SQ
        start, size = _header_size(r, "SubqueueHeader", SUBQUEUE_HEADER_SIZE)
        word = r.u32("SubqueueHeader.AcknowledgementClass")  # A, class, Reserved (choice 10)
        found["subqueue_header"] = SubqueueHeader(
            acknowledgement_class=_bits(word, 1, 16),
            abort_counter=r.u32("SubqueueHeader.AbortCounter"),
            move_counter=r.u32("SubqueueHeader.MoveCounter"),
            last_move_time=r.u32("SubqueueHeader.LastMoveTime"),
            subqueue_name=_name_field(r, "SubqueueHeader.SubqueueName", SUBQUEUE_NAME_SIZE),
            target_subqueue_name=_name_field(r, "SubqueueHeader.TargetSubqueueName",
                                             SUBQUEUE_NAME_SIZE))
        r.pos = start + size
    if flags & 1:  # DL
        start, size = _header_size(r, "DeadLetterHeader", 4)
        found["dead_letter_header"] = DeadLetterHeader(
            _name_field(r, "DeadLetterHeader.DeadLetterPathName", size - 4))
    if flags >> 4 & 1:  # EA
        start, size = _header_size(r, "ExtendedAddressHeader", EXTENDED_ADDRESS_HEADER_SIZE)
        length = r.u16("ExtendedAddressHeader.AddressLength")
        address_type = r.u16("ExtendedAddressHeader.AddressType")
        scope = r.u32("ExtendedAddressHeader.AddressScope")
        address = r.take(16, "ExtendedAddressHeader.Address")[:min(length, 16)]
        found["extended_address_header"] = HostAddress(address_type, address, length, scope)
        r.pos = start + size
    if r.pos != r.end:
        raise PacketError("ExtensionHeader.Flags", f"{r.end - r.pos} bytes follow the headers "
                                                   f"the flags announce")
    return found


def decode_packet(data: bytes) -> DecodedPacket:
    """Decode a message packet (MS-MQRR 2.2.5). Raises PacketError, naming the field, for
    anything that is not one; never another exception."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise PacketError("UserMessage", f"{type(data).__name__} is not bytes")
    data = bytes(data)
    r = _Reader(data)
    version = r.u8("BaseHeader.VersionNumber")
    if version != BASE_HEADER_VERSION:
        raise PacketError("BaseHeader.VersionNumber", f"{version:#04x} is not 0x10")
    r.u8("BaseHeader.Reserved")  # ignored on receipt
    base_flags = r.u16("BaseHeader.Flags")
    signature = r.u32("BaseHeader.Signature")
    if signature != BASE_HEADER_SIGNATURE:
        raise PacketError("BaseHeader.Signature", f"{signature:#010x} is not 0x524f494c")
    packet_size = r.u32("BaseHeader.PacketSize")
    if packet_size > MAX_PACKET_SIZE:
        raise PacketError("BaseHeader.PacketSize", f"{packet_size} is above 0x00400000")
    ttrq = r.u32("BaseHeader.TimeToReachQueue")
    if base_flags >> 3 & 1:
        raise PacketError("BaseHeader.Flags.IN", "set: an internal packet, not a UserMessage "
                                                 "(MS-MQMQ 2.2.20)")
    base = BaseHeader(version_number=version, signature=signature, time_to_reach_queue=ttrq,
                      flags=BaseHeaderFlags(pr=_bits(base_flags, 0, 3), in_=False,
                                            sh=bool(base_flags >> 4 & 1),
                                            dh=bool(base_flags >> 5 & 1),
                                            tr=bool(base_flags >> 8 & 1)))
    user, received_from = _read_user_header(r)
    uf = user.flags
    if not uf.mp:
        raise PacketError("UserHeader.Flags.MP", "clear; it MUST always be set "
                                                 "(MS-MQMQ 2.2.19.2)")
    transaction = _read_transaction_header(r) if uf.th else None
    security = _read_security_header(r) if uf.sh else None
    properties, body_offset, properties_end = _read_message_properties_header(r)
    debug = _read_debug_header(r) if base.flags.dh else None
    extras: dict[str, Any] = {"received_from": received_from}
    body_region = (body_offset, properties_end - body_offset)
    headers_end = body_offset
    if uf.ah:  # an SRMP message (MS-MQRR/2.2.5.1.2/R1)
        envelope, compound, cmh_start, cmh_end = _read_srmp_headers(r)
        extras["srmp_envelope_header"] = envelope
        extras["compound_message_header"] = compound
        body_region, headers_end = (cmh_start, cmh_end - cmh_start), cmh_start
    if uf.hh:
        extras["soap_header"] = _read_soap_header(r)
    multi = _read_multi_queue_format_header(r) if uf.mq else None
    user_message_size = r.pos
    if packet_size not in (user_message_size, len(data)):  # choice 1
        raise PacketError("BaseHeader.PacketSize", f"{packet_size} is neither the "
                                                   f"{user_message_size} bytes of the "
                                                   f"UserMessage nor the {len(data)} of the "
                                                   f"packet")
    if base.flags.sh:
        extras["session_header"] = _read_session_header(r)
    if r.pos < len(data):
        extras.update(_read_trailers(r))
    packet = UserMessagePacket(base, user, transaction_header=transaction,
                               security_header=security,
                               message_properties_header=properties, debug_header=debug,
                               multi_queue_format_header=multi)
    trailers_start = body_region[0] + body_region[1]
    return DecodedPacket(
        user_message=packet, extras=PacketExtras(**extras),
        type=LocalMessageType.SRMP if uf.ah else LocalMessageType.Binary,
        packet_size=packet_size, headers=(0, headers_end), body=body_region,
        trailers=(trailers_start, len(data) - trailers_start),
        message_body=(body_offset, len(properties.message_body)),
        user_message_size=user_message_size)


__all__ = [
    "PacketError", "HostAddress", "SRMPEnvelopeHeader", "CompoundMessageHeader", "SoapHeader",
    "SessionHeader", "ExtensionHeader", "SubqueueHeader", "DeadLetterHeader", "PacketExtras",
    "DecodedPacket", "encode_packet", "decode_packet", "TIME_TO_REACH_QUEUE_OFFSET",
    "SENT_TIME_OFFSET", "MAX_PACKET_SIZE", "CLASS_CODES", "PRIVACY_CODES", "HASH_CODES",
    "ENCRYPTION_CODES", "SENDER_ID_TYPE_CODES", "DELIVERY_CODES", "DESTINATION_CODES",
    "ADMINISTRATION_CODES", "RESPONSE_CODES",
]
