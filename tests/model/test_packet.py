"""The message packet codec (model.packet: MS-MQRR 2.2.5, MS-MQMQ 2.2.19-2.2.20) and MS-MQDMPR
3.1.7.1.31 / 3.1.7.1.32 on top of it (model.serialization).

Byte-exact fixtures: a small packet computed by hand from MS-MQMQ, the MS-MQRR trailers computed
by hand, and the UserMessage of MS-MQQB 4.1.7 (FRAME 7), Microsoft's own annotated capture."""

from __future__ import annotations

import dataclasses
import struct
import uuid
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mqconform.model import calls as c
from mqconform.model.adm import (
    GUID_NULL,
    OBJECTID,
    LocalMessage,
    LocalMessageType,
    Message,
    MessageAcknowledgementsRequested,
    MessageAdministrationQueueType,
    MessageAuthenticationLevel,
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
    ACKNOWLEDGEMENT_FLAGS,
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
from mqconform.model.mqrr import adjust_time_to_reach_queue, packet_sections
from mqconform.model.packet import (
    CLASS_CODES,
    ENCRYPTION_CODES,
    SENT_TIME_OFFSET,
    TIME_TO_REACH_QUEUE_OFFSET,
    CompoundMessageHeader,
    DeadLetterHeader,
    ExtensionHeader,
    HostAddress,
    PacketError,
    PacketExtras,
    SessionHeader,
    SoapHeader,
    SRMPEnvelopeHeader,
    SubqueueHeader,
    decode_packet,
    encode_packet,
    set_time_to_reach_queue,
    time_to_reach_queue,
)
from mqconform.model.serialization import (
    deserialize_message_from_buffer,
    serialize_message_to_buffer,
)

SRC = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")
DST = uuid.UUID("11111111-2222-3333-4444-555555555555")
OTHER = uuid.UUID("99999999-8888-7777-6666-555544443333")
PRIVATE_ON_DST = f"PRIVATE={DST}\\00000004"

# ---------------------------------------------------------------------------------------------
# A packet computed by hand from MS-MQMQ
# ---------------------------------------------------------------------------------------------

#: MS-MQMQ 2.2.19.1 BaseHeader (offsets 0-15)
HAND_BASE = bytes.fromhex(
    "10"            # VersionNumber: MUST be 0x10
    "00"            # Reserved
    "0300"          # Flags: PR (bits 0-2) = 3; IN, SH, DH, TR clear
    "4c494f52"      # Signature 0x524F494C, little-endian ("LIOR")
    "88000000"      # PacketSize: 136, the whole packet (computed at the end)
    "00460500")     # TimeToReachQueue 0x00054600 = 345600 s (4 days)
#: MS-MQMQ 2.2.19.2 UserHeader (offsets 16-67)
HAND_USER = bytes.fromhex(
    "3322110055447766" "8899aabbccddeeff"   # SourceQueueManager 00112233-4455-6677-8899-
    #                                         aabbccddeeff: Data1-3 little-endian (MS-DTYP)
    "1111111122223333" "4444555555555555"   # QueueManagerAddress 11111111-2222-3333-4444-...
    "ffffffff"      # TimeToBeReceived: infinite
    "00000060"      # SentTime 0x60000000
    "07000000"      # MessageID 7
    "000c2000"      # Flags 0x00200C00: DQ (bits 10-12) = 0x3 private queue on the destination,
    #                 MP (bit 21) set; RC, DM, JN, JP, AQ, RQ, SH, TH, CQ, MQ, AH, HH clear
    "04000000")     # DestinationQueue: PrivateQueueFormatNameId (2.2.18.1.5.1), queue 4
#: MS-MQMQ 2.2.19.3 MessagePropertiesHeader (offsets 68-135)
HAND_PROPERTIES = bytes.fromhex(
    "00"            # Flags: no acknowledgment
    "03"            # LabelLength: "hi" and its null = 3 WCHARs
    "0000"          # MessageClass MQMSG_CLASS_NORMAL
    + "00" * 20 +   # CorrelationID: 20 zero bytes
    "11100000"      # BodyType 0x1011 (VT_VECTOR | VT_UI1)
    "2a000000"      # ApplicationTag 42
    "03000000"      # MessageSize 3
    "03000000"      # AllocationBodySize 3
    "00000000"      # PrivacyLevel: none
    "04800000"      # HashAlgorithm 0x8004 SHA-1
    "01680000"      # EncryptionAlgorithm 0x6801 RC4
    "00000000"      # ExtensionSize 0: no ExtensionData
    "680069000000"  # Label "hi\0" (offset 68 + 56 = 124)
    "616263"        # MessageBody "abc" (offset 130, not aligned: MS-MQMQ 2.2.19.3 allows it)
    "000000")       # padding: 56 + 6 + 3 = 65 bytes, to 68, a multiple of 4
HAND_PACKET = HAND_BASE + HAND_USER + HAND_PROPERTIES

HAND_STRUCTURE = UserMessagePacket(
    BaseHeader(flags=BaseHeaderFlags(pr=3), time_to_reach_queue=0x54600),
    UserHeader(source_queue_manager=SRC, queue_manager_address=DST,
               time_to_be_received=0xFFFFFFFF, sent_time=0x60000000, message_id=7,
               flags=UserHeaderFlags(dq=MessageDestinationQueueType.PrivateQueue),
               destination_queue=PRIVATE_ON_DST),
    message_properties_header=MessagePropertiesHeader(body_type=0x1011, application_tag=42,
                                                      label="hi", message_body=b"abc"))

#: MS-MQRR 2.2.5.2-2.2.5.5, following HAND_PACKET (offsets 136-331)
HAND_TRAILERS = bytes.fromhex(
    # ExtensionHeader (12 bytes)
    "0c000000"      # HeaderSize 12
    "b8000000"      # RemainingHeadersSize 184 = 148 + 8 + 28
    "13"            # Flags: DL (bit 0) | SQ (bit 1) | EA (bit 4)
    "000000"        # Reserved
    # SubqueueHeader (148 bytes)
    "94000000"      # HeaderSize 148
    "00000100"      # A (bit 0) = 0, AcknowledgementClass (bits 1-16) = 0x8000 -> 0x00010000
    "01000000"      # AbortCounter 1
    "02000000"      # MoveCounter 2
    "00000000"      # LastMoveTime: never moved
    "730071000000" + "00" * 58 +  # SubqueueName "sq\0", zero-filled to 64 bytes
    "00" * 64 +     # TargetSubqueueName: not in a transacted move
    # DeadLetterHeader (8 bytes)
    "08000000"      # HeaderSize 8
    "64000000"      # DeadLetterPathName "d\0", already on a 4-byte boundary
    # ExtendedAddressHeader (28 bytes)
    "1c000000"      # HeaderSize 28
    "0400"          # AddressLength 4
    "0100"          # AddressType IP_ADDRESS_TYPE
    "00000000"      # AddressScope 0 (IPv4)
    "0a000001" + "00" * 12)  # Address 10.0.0.1, zero-filled to 16 bytes
HAND_EXTRAS = PacketExtras(
    extension_header=ExtensionHeader(),
    subqueue_header=SubqueueHeader(subqueue_name="sq", acknowledgement_class=0x8000,
                                   abort_counter=1, move_counter=2),
    dead_letter_header=DeadLetterHeader("d"),
    extended_address_header=HostAddress.of("10.0.0.1"))

#: MS-MQQB 4.1.7 FRAME 7 (a UserMessage Packet with a SecurityHeader and a direct destination),
#: the hex dump as published up to the body; the body is 1000 x "a" in UTF-16 (MessageSize 2000)
#: and PacketSize 2224 leaves two bytes of padding
FRAME_7 = bytes.fromhex("""
10 00 03 00 4C 49 4F 52 B0 08 00 00 00 46 05 00 D1 58 73 55 50 91 95 95 49 97 B6 E6 11 EA 26 C6
00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 FF FF FF FF 4C 49 4F 52 EE 08 00 00 00 1C 28 00
1A 00 4F 00 53 00 3A 00 61 00 30 00 34 00 62 00 6D 00 30 00 32 00 5C 00 71 00 00 00 01 00 1C 00
00 00 00 00 00 00 00 00 00 00 00 00 01 05 00 00 00 00 00 05 15 00 00 00 AD 4A 9E BD 36 D9 FA 3D
63 A6 56 DA E8 03 00 00 0F 0F 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
08 00 00 00 00 00 00 00 D0 07 00 00 D0 07 00 00 00 00 00 00 04 80 00 00 01 68 00 00 00 00 00 00
6D 00 71 00 73 00 65 00 6E 00 64 00 65 00 72 00 20 00 6C 00 61 00 62 00 65 00 6C 00 00 00
""") + b"a\x00" * 1000 + bytes(2)


@pytest.mark.req("MS-MQDMPR/3.1.7.1.32/R4", "MS-MQDMPR/3.1.7.1.32/R7")
def test_a_small_packet_encodes_to_the_bytes_computed_from_ms_mqmq():
    assert len(HAND_PACKET) == 136
    assert encode_packet(HAND_STRUCTURE) == HAND_PACKET


@pytest.mark.req("MS-MQRR/3.1.1.4/R1")
def test_the_hand_computed_packet_decodes_to_its_structure_and_layout():
    decoded = decode_packet(HAND_PACKET)
    assert decoded.user_message == HAND_STRUCTURE
    assert decoded.extras == PacketExtras()
    assert decoded.type is LocalMessageType.Binary and decoded.packet_size == 136
    # headers up to the body at 130; the body with the padding that ends the header; no trailer
    assert decoded.offset == [(0, 130), (130, 6), (136, 0)]
    assert decoded.message_body == (130, 3)


@pytest.mark.req("MS-MQRR/2.2.5.2/R1", "MS-MQRR/2.2.5.2/R2", "MS-MQRR/2.2.5.2/R4",
                 "MS-MQRR/2.2.5.2/R9", "MS-MQRR/2.2.5.3/R2", "MS-MQRR/2.2.5.3/R5",
                 "MS-MQRR/2.2.5.3/R6", "MS-MQRR/2.2.5.3/R10", "MS-MQRR/2.2.5.4/R1",
                 "MS-MQRR/2.2.5.4/R2", "MS-MQRR/2.2.5.4/R3", "MS-MQRR/2.2.5.5/R2",
                 "MS-MQRR/2.2.5.5/R3", "MS-MQRR/2.2.5.5/R7")
def test_the_ms_mqrr_trailers_encode_to_the_bytes_computed_from_ms_mqrr():
    data = encode_packet(HAND_STRUCTURE, HAND_EXTRAS)
    assert data == HAND_PACKET + HAND_TRAILERS and len(data) == 332
    assert data[8:12] == b"\x88\x00\x00\x00"  # PacketSize still counts the UserMessage only
    decoded = decode_packet(data)
    assert decoded.extras == HAND_EXTRAS
    assert decoded.offset == [(0, 130), (130, 6), (136, 196)]


def test_the_user_message_of_ms_mqqb_frame_7_decodes_and_encodes_back_byte_for_byte():
    decoded = decode_packet(FRAME_7)
    p = decoded.user_message
    assert p.base_header.flags.pr == 3 and p.base_header.time_to_reach_queue == 345600
    assert p.user_header.message_id == 2286
    assert p.user_header.flags.dq is MessageDestinationQueueType.DirectQueue
    assert p.user_header.destination_queue == "DIRECT=OS:a04bm02\\q"
    assert decoded.extras.received_from is None  # a NULL GUID, not an MS-MQRR address
    sh = p.security_header
    assert sh.flags.st is MessageSenderIdentifierType.Sid and len(sh.security_data.security_id) == 28
    props = p.message_properties_header
    assert (props.label, props.body_type, len(props.message_body)) == ("mqsender label", 8, 2000)
    assert props.hash_algorithm is MessageHashAlgorithm.SHA1
    assert props.encryption_algorithm is MessageEncryptionAlgorithm.RC4
    assert decoded.packet_size == len(FRAME_7) == 2224
    assert decoded.offset == [(0, 222), (222, 2002), (2224, 0)]
    assert encode_packet(p, decoded.extras) == FRAME_7


# ---------------------------------------------------------------------------------------------
# The fields the model rewrites in an encoded packet (model/mqrr.py asks the codec)
# ---------------------------------------------------------------------------------------------


def test_the_codec_puts_time_to_reach_queue_at_12_and_sent_time_at_52_and_reads_them_back():
    assert (TIME_TO_REACH_QUEUE_OFFSET, SENT_TIME_OFFSET) == (12, 52)
    packet = replace(HAND_STRUCTURE,
                     base_header=replace(HAND_STRUCTURE.base_header, time_to_reach_queue=0x0A0B0C0D),
                     user_header=replace(HAND_STRUCTURE.user_header, sent_time=0x01020304))
    data = encode_packet(packet)
    assert data[12:16] == struct.pack("<I", 0x0A0B0C0D)
    assert data[52:56] == struct.pack("<I", 0x01020304)
    assert time_to_reach_queue(data) == (0x0A0B0C0D, 0x01020304)
    assert time_to_reach_queue(data[:55]) is None
    rewritten = set_time_to_reach_queue(data, 7)
    assert time_to_reach_queue(rewritten) == (7, 0x01020304)
    assert rewritten[:12] == data[:12] and rewritten[16:] == data[16:]


@pytest.mark.req("MS-MQRR/3.1.4.7/R45")
def test_mqrr_time_adjustment_on_an_encoded_packet_decodes_as_sent_time_plus_time_to_reach():
    packet = replace(HAND_STRUCTURE,
                     base_header=replace(HAND_STRUCTURE.base_header, time_to_reach_queue=60),
                     user_header=replace(HAND_STRUCTURE.user_header, sent_time=1_700_000_000))
    adjusted = decode_packet(adjust_time_to_reach_queue(encode_packet(packet)))
    assert adjusted.user_message.base_header.time_to_reach_queue == 1_700_000_060
    assert adjusted.user_message.user_header == packet.user_header


@pytest.mark.req("MS-MQRR/3.1.1.4/R1", "MS-MQRR/3.1.4.7/R32", "MS-MQRR/3.1.4.7/R39")
@pytest.mark.parametrize("srmp", [False, True])
def test_sections_split_at_the_offsets_rebuild_the_packet_where_a_client_puts_them(srmp):
    message = Message(body=b"0123456789", label="split", destination_queue_format_name=(
        "DIRECT=OS:h\\q"), sent_time=0, time_to_reach_queue=0)
    if srmp:
        message.soap_envelope, message.soap_compound_message = "<e/>", "POST /\r\n\r\n0123456789"
    stored = deserialize_message_from_buffer(serialize_message_to_buffer(message))
    first, second = packet_sections(stored, 1, 1)
    assert first.SectionBufferType == (c.stSrmpFirstSection if srmp else c.stBinaryFirstSection)
    # the client lays the second section at SectionSizeAlloc: the trailers land where they were
    assert first.SectionSizeAlloc + second.SectionSize == len(stored.packet)
    assert stored.packet[first.SectionSizeAlloc:] == second.pSectionBuffer
    headers_size = stored.offset[0][1]
    assert first.pSectionBuffer[:headers_size] == stored.packet[:headers_size]


# ---------------------------------------------------------------------------------------------
# Each optional header, encoded and decoded
# ---------------------------------------------------------------------------------------------

def _with(packet=HAND_STRUCTURE, base=None, user=None, **headers):
    """HAND_STRUCTURE with flags ``base`` / ``user`` changed and ``headers`` added."""
    bh = replace(packet.base_header, flags=replace(packet.base_header.flags, **(base or {})))
    uh = replace(packet.user_header, flags=replace(packet.user_header.flags, **(user or {})))
    return replace(packet, base_header=bh, user_header=uh, **headers)


TX = TransactionHeader(TransactionHeaderFlags(fa=True, fm=True, lm=False, id=0xABCDE),
                       TxSequenceId(5, 0x5F000000), 3, 2)
SEC = SecurityHeader(SecurityHeaderFlags(st=MessageSenderIdentifierType.Sid, eb=True, de=True,
                                         ai=True),
                     SecurityData(security_id=b"\x01\x01\x00\x00\x00\x00\x00\x05\x12",
                                  encryption_key=b"k" * 7, signature=b"s" * 13,
                                  sender_cert=b"c" * 5))
MQF = MultiQueueFormatHeader(destination=(PRIVATE_ON_DST, "DIRECT=OS:h\\q", f"PUBLIC={OTHER}"),
                             administration=(f"DL={OTHER}",), response=(),
                             signature=b"sig")
OPTIONAL = {
    "transaction": (_with(user={"th": True, "dm": MessageDeliveryGuarantee.Recoverable},
                          base={"pr": 0}, transaction_header=TX), PacketExtras()),
    "transaction with connector": (
        _with(user={"th": True}, transaction_header=replace(
            TX, flags=replace(TX.flags, cg=True), connector_qm_guid=OTHER)), PacketExtras()),
    "security": (_with(user={"sh": True}, security_header=SEC), PacketExtras()),
    "security with provider": (
        _with(user={"sh": True}, security_header=replace(
            SEC, flags=replace(SEC.flags, de=False),
            security_data=replace(SEC.security_data,
                                  provider_info=ProviderInfo(1, "Contoso CSP")))),
        PacketExtras()),
    "debug, no queue": (_with(base={"dh": True, "tr": True}, debug_header=DebugHeader()),
                        PacketExtras()),
    "debug queue": (_with(base={"dh": True}, debug_header=DebugHeader(
        DebugHeaderFlags(qt=1), OTHER)), PacketExtras()),
    "multiple destinations": (_with(user={"mq": True}, multi_queue_format_header=MQF),
                              PacketExtras()),
    "soap": (_with(user={"hh": True}), PacketExtras(soap_header=SoapHeader("<h/>", "<b/>"))),
    "srmp": (_with(user={"ah": True}), PacketExtras(
        srmp_envelope_header=SRMPEnvelopeHeader("<se:Envelope/>", header_id=400),
        compound_message_header=CompoundMessageHeader(b"POST /msmq HTTP/1.1\r\n\r\nabc", 23, 3,
                                                      header_id=500))),
    "session": (_with(base={"sh": True}), PacketExtras(session_header=SessionHeader(1, 2, 3, 4,
                                                                                    5, 64))),
    "connector type": (replace(_with(user={"cq": True}), user_header=replace(
        _with(user={"cq": True}).user_header, connector_type=OTHER)), PacketExtras()),
    "address overlay": (
        replace(HAND_STRUCTURE, user_header=replace(
            HAND_STRUCTURE.user_header, destination_queue="DIRECT=TCP:10.1.2.3\\private$\\q",
            queue_manager_address=uuid.UUID(bytes_le=bytes.fromhex("0400010000000000c0a80001"
                                                                   "00000000")),
            flags=UserHeaderFlags(dq=MessageDestinationQueueType.DirectQueue))),
        PacketExtras(received_from=HostAddress.of("192.168.0.1"))),
    "trailers without dead letter": (HAND_STRUCTURE, replace(HAND_EXTRAS,
                                                             dead_letter_header=None)),
    "every header": (
        _with(base={"dh": True, "sh": True, "pr": 0},
              user={"th": True, "sh": True, "mq": True, "hh": True, "ah": True},
              transaction_header=TX, security_header=SEC, debug_header=DebugHeader(),
              multi_queue_format_header=MQF),
        replace(HAND_EXTRAS, soap_header=SoapHeader("", "body only"),
                srmp_envelope_header=SRMPEnvelopeHeader("e"),
                compound_message_header=CompoundMessageHeader(b"x"),
                session_header=SessionHeader())),
}


@pytest.mark.req("MS-MQRR/2.2.5.1/R1", "MS-MQRR/2.2.5.1/R2", "MS-MQRR/2.2.5.1/R3",
                 "MS-MQRR/2.2.5.1/R4", "MS-MQRR/2.2.5.1/R7", "MS-MQRR/2.2.5.1.2.1/R1",
                 "MS-MQRR/2.2.5.1.2.1/R3", "MS-MQRR/2.2.5.1.2.2/R1", "MS-MQRR/2.2.5.1.2.2/R3",
                 "MS-MQRR/2.2.5.1.2.2/R4", "MS-MQRR/2.2.5.1.2.2/R5")
@pytest.mark.parametrize("name", OPTIONAL)
def test_each_optional_header_survives_encoding_and_decoding(name):
    packet, extras = OPTIONAL[name]
    data = encode_packet(packet, extras)
    decoded = decode_packet(data)
    assert decoded.user_message == packet
    assert decoded.extras == extras
    assert len(data) % 4 == 0
    assert decoded.packet_size == struct.unpack_from("<I", data, 8)[0]
    assert encode_packet(decoded.user_message, decoded.extras) == data


@pytest.mark.req("MS-MQRR/2.2.5.1.2/R1")
def test_an_srmp_packet_is_typed_srmp_and_its_body_is_the_compound_message_header():
    packet, extras = OPTIONAL["srmp"]
    data = encode_packet(packet, extras)
    decoded = decode_packet(data)
    assert decoded.type is LocalMessageType.SRMP
    start, size = decoded.body
    assert data[start + 8:start + 12] == struct.pack("<I", 3)  # MsgBodySize
    assert data[start + 16:start + 16 + 26] == b"POST /msmq HTTP/1.1\r\n\r\nabc"
    assert size == 16 + 28 and decoded.headers == (0, start)  # 26 bytes of data + 2 of padding


def test_with_every_header_the_body_region_ends_where_the_trailers_begin():
    packet, extras = OPTIONAL["every header"]
    data = encode_packet(packet, extras)
    decoded = decode_packet(data)
    assert decoded.body[0] + decoded.body[1] == decoded.trailers[0]
    assert decoded.trailers[0] % 4 == 0 and decoded.packet_size % 4 == 0


@pytest.mark.parametrize("aq, admin, rq, response", [
    (MessageAdministrationQueueType.PrivateQueueOnSource, f"PRIVATE={SRC}\\0000000a",
     MessageResponseQueueType.SameAsAdministrationQueue, f"PRIVATE={SRC}\\0000000a"),
    (MessageAdministrationQueueType.PrivateQueueOnDestination, f"PRIVATE={DST}\\0000000b",
     MessageResponseQueueType.PrivateQueueOnAdmin, f"PRIVATE={DST}\\0000000c"),
    (MessageAdministrationQueueType.PrivateQueueOnOther, f"PRIVATE={OTHER}\\ffffffff",
     MessageResponseQueueType.PrivateQueueOnAdmin, f"PRIVATE={OTHER}\\00000001"),
    (MessageAdministrationQueueType.PublicQueue, f"PUBLIC={OTHER}",
     MessageResponseQueueType.PrivateQueueOnSource, f"PRIVATE={SRC}\\00000002"),
    (MessageAdministrationQueueType.DirectQueue, "DIRECT=OS:admin\\private$\\acks",
     MessageResponseQueueType.PrivateQueueOnDestination, f"PRIVATE={DST}\\00000003"),
    (MessageAdministrationQueueType.None_, "",
     MessageResponseQueueType.PrivateQueueOnOther, f"PRIVATE={OTHER}\\00000005"),
    (MessageAdministrationQueueType.None_, "",
     MessageResponseQueueType.PublicQueue, f"PUBLIC={OTHER}"),
    (MessageAdministrationQueueType.None_, "",
     MessageResponseQueueType.DirectQueue, "DIRECT=HTTP://h/msmq\\q"),
])
def test_every_administration_and_response_queue_type_round_trips(aq, admin, rq, response):
    packet = replace(HAND_STRUCTURE, user_header=replace(
        HAND_STRUCTURE.user_header, admin_queue=admin, response_queue=response,
        flags=replace(HAND_STRUCTURE.user_header.flags, aq=aq, rq=rq)))
    assert decode_packet(encode_packet(packet)).user_message == packet


def test_a_private_queue_id_takes_its_computer_from_the_queue_type():
    data = bytearray(HAND_PACKET)
    struct.pack_into("<I", data, 60, 0x00200C00 | 0x2 << 13)  # AQ 0x2: private on the source
    data[68:68] = struct.pack("<I", 9)  # the AdminQueue: PrivateQueueFormatNameId 9
    struct.pack_into("<I", data, 8, len(data))
    user = decode_packet(bytes(data)).user_message.user_header
    assert user.admin_queue == f"PRIVATE={SRC}\\00000009"


def test_a_direct_name_on_the_wire_has_no_direct_prefix_and_is_padded_to_four_bytes():
    packet = replace(HAND_STRUCTURE, user_header=replace(
        HAND_STRUCTURE.user_header, destination_queue="DIRECT=OS:ab\\c",
        flags=UserHeaderFlags(dq=MessageDestinationQueueType.DirectQueue)))
    data = encode_packet(packet)
    name = "OS:ab\\c\0".encode("utf-16-le")
    assert data[64:66] == struct.pack("<H", len(name)) and data[66:66 + len(name)] == name
    assert data[66 + len(name):84] == bytes(2)  # 2 + 16 = 18 bytes, padded to 20


def test_an_ipv6_overlay_keeps_as_much_of_the_address_as_fits():
    packet, _ = OPTIONAL["address overlay"]
    address = HostAddress.of("fe80::1", scope=3)
    data = encode_packet(packet, PacketExtras(received_from=address))
    assert data[32:48] == struct.pack("<HHI", 16, 6, 3) + address.address[:8]
    assert decode_packet(data).extras.received_from == HostAddress(6, address.address[:8], 16, 3)


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("length", [0, 1, 15, 16, 40, 63, 67, 100, 123, 129, 135])
def test_a_truncated_packet_is_a_packet_error_naming_the_field(length):
    with pytest.raises(PacketError) as e:
        decode_packet(HAND_PACKET[:length])
    assert e.value.field and "left" in e.value.reason


@pytest.mark.parametrize("offset, value, field", [
    (0, b"\x11", "BaseHeader.VersionNumber"),
    (4, b"XXXX", "BaseHeader.Signature"),
    (2, b"\x0b\x00", "BaseHeader.Flags.IN"),
    (8, struct.pack("<I", 200), "BaseHeader.PacketSize"),
    (8, struct.pack("<I", 0x00400001), "BaseHeader.PacketSize"),
    (60, struct.pack("<I", 0x00200400), "UserHeader.Flags.DQ"),  # DQ 0x1
    (60, struct.pack("<I", 0x00200C40), "UserHeader.Flags.DM"),  # DM 0x2
    (60, struct.pack("<I", 0x00000C00), "UserHeader.Flags.MP"),
    (60, struct.pack("<I", 0x00240C00), "UserHeader.Flags.RQ"),  # RQ 0x4 without AQ
    (69, b"\xfb", "MessagePropertiesHeader.LabelLength"),
    (104, struct.pack("<I", 2), "MessagePropertiesHeader.AllocationBodySize"),
])
def test_a_malformed_field_is_a_packet_error_naming_it(offset, value, field):
    data = bytearray(HAND_PACKET)
    data[offset:offset + len(value)] = value
    with pytest.raises(PacketError) as e:
        decode_packet(bytes(data))
    assert e.value.field == field


def test_bytes_after_the_packet_that_are_no_extension_header_are_an_error():
    with pytest.raises(PacketError) as e:
        decode_packet(HAND_PACKET + bytes(12))
    assert e.value.field.startswith("ExtensionHeader")


@pytest.mark.parametrize("change, field", [
    (lambda p: _with(p, user={"th": True}), "UserHeader.Flags.TH"),
    (lambda p: _with(p, security_header=SEC), "UserHeader.Flags.SH"),
    (lambda p: _with(p, base={"tr": True}), "BaseHeader.Flags.TR"),
    (lambda p: _with(p, base={"in_": True}), "BaseHeader.Flags.IN"),
    (lambda p: _with(p, user={"mp": False}), "UserHeader.Flags.MP"),
    (lambda p: _with(p, user={"ah": True}), "UserHeader.Flags.AH"),
    (lambda p: _with(p, base={"pr": 8}), "BaseHeader.Flags.PR"),
    (lambda p: replace(p, user_header=replace(p.user_header, destination_queue=(
        f"PRIVATE={OTHER}\\00000004"))), "UserHeader.DestinationQueue"),
    (lambda p: replace(p, user_header=replace(p.user_header, destination_queue="nonsense")),
     "UserHeader.DestinationQueue"),
    (lambda p: replace(p, user_header=replace(p.user_header, admin_queue=PRIVATE_ON_DST)),
     "UserHeader.Flags.AQ"),
    (lambda p: replace(p, message_properties_header=replace(
        p.message_properties_header, label="x" * 250)), "MessagePropertiesHeader.LabelLength"),
    (lambda p: replace(p, message_properties_header=replace(
        p.message_properties_header, encryption_algorithm=MessageEncryptionAlgorithm.DES)),
     "MessagePropertiesHeader.EncryptionAlgorithm"),
    (lambda p: replace(p, message_properties_header=replace(
        p.message_properties_header, message_body=bytes(0x400000))), "BaseHeader.PacketSize"),
    (lambda p: _with(p, user={"mq": True}, multi_queue_format_header=MultiQueueFormatHeader(
        destination=("MULTICAST=224.1.1.1:80",))),
     "MultiQueueFormatHeader.Destination.FormatNameList[0]"),
])
def test_a_structure_with_no_wire_form_is_a_packet_error_naming_the_field(change, field):
    with pytest.raises(PacketError) as e:
        encode_packet(change(HAND_STRUCTURE))
    assert e.value.field == field


@pytest.mark.req("MS-MQRR/2.2.5.2/R4", "MS-MQRR/2.2.5.2/R9")
def test_an_extension_header_without_subqueue_or_extended_address_header_is_refused():
    for missing in ("subqueue_header", "extended_address_header"):
        with pytest.raises(PacketError) as e:
            encode_packet(HAND_STRUCTURE, replace(HAND_EXTRAS, **{missing: None}))
        assert e.value.field in ("ExtensionHeader.Flags.SQ", "ExtensionHeader.Flags.EA")


@pytest.mark.req("MS-MQRR/2.2.5.2/R1")
def test_a_wrong_remaining_headers_size_is_an_error():
    data = bytearray(HAND_PACKET + HAND_TRAILERS)
    struct.pack_into("<I", data, 140, 180)
    with pytest.raises(PacketError) as e:
        decode_packet(bytes(data))
    assert e.value.field == "ExtensionHeader.RemainingHeadersSize"


# ---------------------------------------------------------------------------------------------
# Hypothesis: packets round trip, and no bytes make the decoder fail otherwise
# ---------------------------------------------------------------------------------------------

u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFFFFFF)
blobs = st.binary(max_size=24)
texts = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"),
                max_size=12)
private = st.builds(lambda g, n: f"PRIVATE={g}\\{n:08x}", st.uuids(), u32)
public = st.builds(lambda g: f"PUBLIC={g}", st.uuids())
direct = st.builds(lambda s: f"DIRECT=OS:{s}", texts)
mqf_names = st.lists(st.one_of(private, public, direct, st.builds(lambda g: f"DL={g}",
                                                                  st.uuids())),
                     max_size=3).map(tuple)


@st.composite
def user_headers(draw):
    """A UserHeader whose queue names fit their types, and its address overlay, if any."""
    source, address = draw(st.uuids()), draw(st.uuids())
    dq = draw(st.sampled_from([None, *MessageDestinationQueueType]))
    overlay = None
    if dq is MessageDestinationQueueType.DirectQueue:  # a NULL GUID or the MS-MQRR overlay
        address = GUID_NULL
    if dq is MessageDestinationQueueType.DirectQueue and draw(st.booleans()):
        overlay = draw(st.builds(HostAddress, st.integers(1, 0xFFFF),
                                 st.binary(min_size=8, max_size=8), st.just(8), u32))
        address = uuid.UUID(bytes_le=struct.pack("<HHI", 8, overlay.address_type,
                                                 overlay.address_scope) + overlay.address)
    on = {"source": source, "destination": address}
    names = {None: st.just(""), MessageDestinationQueueType.PrivateQueue:
             st.builds(lambda n: f"PRIVATE={address}\\{n:08x}", u32),
             MessageDestinationQueueType.PublicQueue: public,
             MessageDestinationQueueType.DirectQueue: direct}
    destination = draw(names[dq])
    aq = draw(st.sampled_from(MessageAdministrationQueueType))
    A, R = MessageAdministrationQueueType, MessageResponseQueueType
    admin_guid = {A.PrivateQueueOnSource: source, A.PrivateQueueOnDestination: address,
                  A.PrivateQueueOnOther: draw(st.uuids())}.get(aq)
    if admin_guid is not None:
        admin = f"PRIVATE={admin_guid}\\{draw(u32):08x}"
    else:
        admin = {A.None_: "", A.PublicQueue: draw(public), A.DirectQueue: draw(direct)}[aq]
    rqs = [r for r in R if r is not R.PrivateQueueOnAdmin or admin_guid is not None]
    rq = draw(st.sampled_from(rqs))
    response = {R.None_: "", R.SameAsAdministrationQueue: admin, R.PublicQueue: draw(public),
                R.DirectQueue: draw(direct), R.PrivateQueueOnOther: draw(private),
                R.PrivateQueueOnSource: f"PRIVATE={on['source']}\\{draw(u32):08x}",
                R.PrivateQueueOnDestination: f"PRIVATE={address}\\{draw(u32):08x}",
                R.PrivateQueueOnAdmin: f"PRIVATE={admin_guid}\\{draw(u32):08x}"}[rq]
    connector = draw(st.none() | st.uuids())
    flags = UserHeaderFlags(rc=draw(st.integers(0, 31)),
                            dm=draw(st.sampled_from(MessageDeliveryGuarantee)),
                            jn=draw(st.booleans()), jp=draw(st.booleans()), dq=dq, aq=aq, rq=rq,
                            cq=connector is not None)
    return UserHeader(source, address, draw(u32), draw(u32), draw(u32), flags, destination,
                      admin, response, connector), overlay


def _enum_or_custom(codes: dict, values):
    return st.one_of(st.sampled_from(values),
                     st.integers(0, 0xFFFF).filter(lambda v: v not in codes.values()))


properties_headers = st.builds(
    MessagePropertiesHeader,
    flags=st.builds(MessagePropertiesHeaderFlags, st.booleans(), st.booleans(), st.booleans(),
                    st.booleans()),
    message_class=_enum_or_custom(CLASS_CODES, list(CLASS_CODES)),
    correlation_id=st.builds(OBJECTID, st.uuids(), u32), body_type=u32, application_tag=u32,
    privacy_level=st.sampled_from(MessagePrivacyLevel),
    hash_algorithm=st.sampled_from([h for h in MessageHashAlgorithm
                                    if h is not MessageHashAlgorithm.SHA]),
    encryption_algorithm=_enum_or_custom(ENCRYPTION_CODES, list(ENCRYPTION_CODES)),
    label=texts, extension_data=blobs, message_body=st.binary(max_size=40))


@st.composite
def security_headers(draw):
    de = draw(st.booleans())
    provider = None if de else draw(st.none() | st.builds(ProviderInfo, u32, texts))
    return SecurityHeader(
        SecurityHeaderFlags(st=draw(st.sampled_from(MessageSenderIdentifierType)),
                            au=draw(st.booleans()), eb=draw(st.booleans()), de=de,
                            ai=draw(st.booleans()), as_=draw(st.integers(0, 15))),
        SecurityData(draw(blobs), draw(blobs), draw(blobs), draw(blobs), provider))


@st.composite
def transaction_headers(draw):
    connector = draw(st.none() | st.uuids())
    return TransactionHeader(
        TransactionHeaderFlags(cg=connector is not None, fa=draw(st.booleans()),
                               fm=draw(st.booleans()), lm=draw(st.booleans()),
                               id=draw(st.integers(0, 0xFFFFF))),
        draw(st.builds(TxSequenceId, u32, u32)),
        draw(u32), draw(u32), connector)


@st.composite
def compound_headers(draw):
    data = draw(blobs)
    offset = draw(st.integers(0, len(data)))
    return CompoundMessageHeader(data, offset, draw(st.integers(0, len(data) - offset)),
                                 draw(u16))


@st.composite
def packets(draw):
    """Any UserMessagePacket with its extras, every flag agreeing with the headers present."""
    user, overlay = draw(user_headers())
    tx = draw(st.none() | transaction_headers())
    sec = draw(st.none() | security_headers())
    debug = draw(st.none() | st.builds(DebugHeader, st.just(DebugHeaderFlags(qt=1)), st.uuids())
                 | st.just(DebugHeader()))
    mqf = draw(st.none() | st.builds(MultiQueueFormatHeader, mqf_names, mqf_names, mqf_names,
                                     blobs))
    srmp = draw(st.booleans())
    soap = draw(st.none() | st.builds(SoapHeader, texts, texts))
    session = draw(st.none() | st.builds(SessionHeader, u16, u16, u32, u16, u16, u16))
    trailers = {}
    if draw(st.booleans()):
        trailers = {
            "extension_header": ExtensionHeader(draw(st.booleans())),
            "subqueue_header": draw(st.builds(SubqueueHeader, texts, texts, u16, u32, u32, u32)),
            "dead_letter_header": draw(st.none() | st.builds(DeadLetterHeader, texts)),
            "extended_address_header": draw(st.builds(
                lambda t, a, s: HostAddress(t, a, len(a), s), u16, st.binary(max_size=16), u32))}
        if trailers["dead_letter_header"] is None:
            trailers["extension_header"] = ExtensionHeader()  # DI is read only with DL
    extras = PacketExtras(
        received_from=overlay,
        srmp_envelope_header=draw(st.builds(SRMPEnvelopeHeader, texts, u16)) if srmp else None,
        compound_message_header=draw(compound_headers()) if srmp else None,
        soap_header=soap, session_header=session, **trailers)
    dh = debug is not None
    base = BaseHeader(flags=BaseHeaderFlags(pr=draw(st.integers(0, 7)), sh=session is not None,
                                            dh=dh, tr=dh and draw(st.booleans())),
                      time_to_reach_queue=draw(u32))
    user = replace(user, flags=replace(user.flags, th=tx is not None, sh=sec is not None,
                                       mq=mqf is not None, hh=soap is not None, ah=srmp))
    packet = UserMessagePacket(base, user, transaction_header=tx, security_header=sec,
                               message_properties_header=draw(properties_headers),
                               debug_header=debug, multi_queue_format_header=mqf)
    return packet, extras


FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(packets())
def test_any_packet_survives_encoding_and_decoding(packet_and_extras):
    packet, extras = packet_and_extras
    data = encode_packet(packet, extras)
    decoded = decode_packet(data)
    assert decoded.user_message == packet and decoded.extras == extras
    headers, body, trailers = decoded.offset
    assert headers[0] == 0 and headers[1] == body[0]  # the three parts tile the packet
    assert body[0] + body[1] == trailers[0] and trailers[0] + trailers[1] == len(data)
    assert decoded.type is (LocalMessageType.SRMP if extras.srmp_envelope_header
                            else LocalMessageType.Binary)
    start, size = decoded.message_body
    assert data[start:start + size] == packet.message_properties_header.message_body
    assert decoded.packet_size <= len(data) and len(data) % 4 == 0


def _decodes_or_refuses(data: bytes) -> None:
    """Decoding gives a DecodedPacket or a PacketError; what decodes re-encodes to a fixed
    point (or is refused by the encoder with a PacketError)."""
    try:
        decoded = decode_packet(data)
    except PacketError as e:
        assert e.field and e.reason
        return
    try:
        again = encode_packet(decoded.user_message, decoded.extras)
    except PacketError:
        return
    redecoded = decode_packet(again)
    assert encode_packet(redecoded.user_message, redecoded.extras) == again


@FUZZ
@given(st.binary(max_size=400))
def test_random_bytes_decode_or_raise_a_packet_error(data):
    _decodes_or_refuses(data)


@FUZZ
@given(st.binary(max_size=200))
def test_random_bytes_after_a_valid_base_header_decode_or_raise_a_packet_error(tail):
    _decodes_or_refuses(HAND_BASE[:8] + struct.pack("<I", 16 + len(tail)) + HAND_BASE[12:] + tail)


@FUZZ
@given(packets(), st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=4),
       st.integers(0, 10_000), st.binary(max_size=8))
def test_mutated_packets_decode_or_raise_a_packet_error(packet_and_extras, flips, cut, tail):
    data = bytearray(encode_packet(*packet_and_extras))
    for at, value in flips:
        data[at % len(data)] = value
    _decodes_or_refuses(bytes(data))
    _decodes_or_refuses(bytes(data[:cut % (len(data) + 1)]))
    _decodes_or_refuses(bytes(data) + tail)


def test_a_huge_count_is_refused_without_allocating():
    packet, extras = OPTIONAL["multiple destinations"]
    data = bytearray(encode_packet(packet, extras))
    # the MultiQueueFormatHeader follows the MessagePropertiesHeader at 136; its Destination
    # MQFAddressHeader has HeaderSize, HeaderID, Reserved, then ElementCount at 144
    assert struct.unpack_from("<IHHI", data, 136)[1:] == (0x64, 0, 3)
    struct.pack_into("<I", data, 144, 0xFFFFFFFF)
    with pytest.raises(PacketError) as e:
        decode_packet(bytes(data))
    assert e.value.field == "MultiQueueFormatHeader.Destination.ElementCount"


# ---------------------------------------------------------------------------------------------
# MS-MQDMPR 3.1.7.1.32 Serialize Message to Buffer, 3.1.7.1.31 Deserialize Message From Buffer
# ---------------------------------------------------------------------------------------------

#: the attributes both tables carry, compared after Message -> buffer -> Message
ROUND_TRIP = (
    "tracing_requested", "time_to_reach_queue", "body_type", "encryption_algorithm",
    "hash_algorithm", "application_tag", "correlation_identifier", "acknowledgements_requested",
    "class_", "extension", "label", "body", "privacy_level", "authentication_provider_type",
    "authentication_provider_name", "sender_identifier_type", "symmetric_key",
    "sender_identifier", "sender_certificate", "signature", "final_ack_required",
    "transaction_identifier", "transaction_sequence_number",
    "transaction_previous_sequence_number", "transactional_message_sequence_identifier",
    "connector_queue_manager_identifier", "first_in_transaction", "last_in_transaction",
    "destination_queue_manager_identifier", "sent_time", "destination_queue_type",
    "administration_queue_type", "response_queue_type", "time_to_be_received", "identifier",
    "source_machine_identifier", "administration_queue_format_name",
    "destination_queue_format_name", "delivery_guarantee", "positive_journaling_requested",
    "negative_journaling_requested", "response_queue_format_name", "connector_type_identifier",
    "destination_multi_queue_format_name", "administration_multi_queue_format_name",
    "response_multi_queue_format_name", "multiple_destination_signature",
    "tracing_queue_identifier", "soap_envelope", "soap_compound_message", "soap_header",
    "soap_body", "application_deadletter_queue", "priority")


def _message(**changes) -> Message:
    base = dict(
        identifier=OBJECTID(SRC, 77), source_machine_identifier=SRC,
        destination_queue_manager_identifier=DST,
        destination_queue_type=MessageDestinationQueueType.PrivateQueue,
        destination_queue_format_name=PRIVATE_ON_DST, body=b"hello", label="greeting",
        body_type=0x1011, application_tag=5, sent_time=1_700_000_000, time_to_reach_queue=60,
        time_to_be_received=3600, priority=6, class_=MessageClass.Report,
        correlation_identifier=OBJECTID(OTHER, 3), extension=b"ext",
        hash_algorithm=MessageHashAlgorithm.SHA_512,
        encryption_algorithm=MessageEncryptionAlgorithm.AES256,
        acknowledgements_requested=[MessageAcknowledgementsRequested.AckFullReachQueue],
        administration_queue_type=MessageAdministrationQueueType.PrivateQueueOnSource,
        administration_queue_format_name=f"PRIVATE={SRC}\\00000002",
        response_queue_type=MessageResponseQueueType.PublicQueue,
        response_queue_format_name=f"PUBLIC={OTHER}",
        positive_journaling_requested=True, negative_journaling_requested=False,
        delivery_guarantee=MessageDeliveryGuarantee.Recoverable)
    base.update(changes)
    return Message(**base)


def _assert_same(original: Message, copy: LocalMessage, skip=()) -> None:
    for name in ROUND_TRIP:
        if name not in skip:
            assert getattr(copy, name) == getattr(original, name), name


SERIAL = {
    "plain": {},
    "direct destination, no admin": dict(
        destination_queue_type=MessageDestinationQueueType.DirectQueue,
        destination_queue_format_name="DIRECT=TCP:10.0.0.2\\private$\\orders",
        destination_queue_manager_identifier=GUID_NULL,
        administration_queue_type=MessageAdministrationQueueType.None_,
        administration_queue_format_name="",
        response_queue_type=MessageResponseQueueType.None_, response_queue_format_name=""),
    "transactional": dict(
        transaction_identifier=uuid.UUID(int=0x12345), priority=3,
        transactional_message_sequence_identifier=TxSequenceId(9, 0x60000000),
        transaction_sequence_number=4, transaction_previous_sequence_number=3,
        first_in_transaction=False, last_in_transaction=True, final_ack_required=True,
        connector_queue_manager_identifier=OTHER),
    "signed by an alternative provider": dict(
        authentication_level=MessageAuthenticationLevel.Sig20,
        sender_identifier_type=MessageSenderIdentifierType.Sid, sender_identifier=b"S" * 12,
        signature=b"\x01" * 64, symmetric_key=b"K" * 16, sender_certificate=b"C" * 30,
        authentication_provider_type=1, authentication_provider_name="Contoso CSP",
        privacy_level=MessagePrivacyLevel.Enhanced),
    "traced": dict(tracing_requested=True, tracing_queue_identifier=OTHER),
    "traced, no queue": dict(tracing_requested=True),
    "multiple destinations": dict(
        destination_multi_queue_format_name=[PRIVATE_ON_DST, f"PUBLIC={OTHER}"],
        administration_multi_queue_format_name=["DIRECT=OS:h\\q"],
        response_multi_queue_format_name=[], multiple_destination_signature=b"mqfsig"),
    "connector": dict(connector_type_identifier=OTHER),
    "srmp": dict(soap_envelope="<se:Envelope/>",
                 soap_compound_message="POST /msmq HTTP/1.1\r\n\r\n<se:Envelope/>hello",
                 soap_header="<h/>", soap_body="<b/>"),
    "dead-letter queue": dict(application_deadletter_queue="h\\private$\\dlq"),
    "custom class": dict(class_=0x0123, acknowledgements_requested=[
        MessageAcknowledgementsRequested.AckNegReceive]),
}


@pytest.mark.req("MS-MQDMPR/3.1.7.1.32/R1", "MS-MQDMPR/3.1.7.1.32/R2", "MS-MQDMPR/3.1.7.1.32/R3",
                 "MS-MQDMPR/3.1.7.1.31/R1", "MS-MQDMPR/3.1.7.1.31/R2", "MS-MQDMPR/3.1.7.1.31/R3",
                 "MS-MQDMPR/3.1.7.1.31/R4", "MS-MQDMPR/3.1.7.1.31/R5", "MS-MQRR/3.1.1.4/R1")
@pytest.mark.parametrize("name", SERIAL)
def test_a_message_survives_serialization_attribute_by_attribute(name):
    message = _message(**SERIAL[name])
    copy = deserialize_message_from_buffer(serialize_message_to_buffer(message))
    _assert_same(message, copy)
    assert isinstance(copy, LocalMessage) and copy.packet
    srmp = name == "srmp"
    assert copy.type is (LocalMessageType.SRMP if srmp else LocalMessageType.Binary)
    assert copy.offset == decode_packet(copy.packet).offset


@pytest.mark.req("MS-MQRR/2.2.5.1/R6", "MS-MQRR/2.2.5.1.1/R1")
def test_only_a_message_with_envelope_and_compound_message_goes_as_srmp():
    half = _message(soap_envelope="<se:Envelope/>")
    decoded = decode_packet(serialize_message_to_buffer(half))
    assert not decoded.user_message.user_header.flags.ah
    assert decoded.extras.srmp_envelope_header is None
    full = _message(**SERIAL["srmp"])
    decoded = decode_packet(serialize_message_to_buffer(full))
    assert decoded.user_message.user_header.flags.ah
    compound = decoded.extras.compound_message_header
    assert compound.data[compound.msg_body_offset:][:compound.msg_body_size] == b"hello"


@pytest.mark.req("MS-MQDMPR/3.1.7.1.32/R4")
def test_packet_size_is_the_user_message_and_the_trailers_follow_it():
    data = serialize_message_to_buffer(_message())
    decoded = decode_packet(data)
    plain = serialize_message_to_buffer(_message(), trailers=False)
    assert decoded.packet_size == len(plain) < len(data)
    assert data.startswith(plain)
    assert decoded.extras.extension_header == ExtensionHeader()
    assert decoded.extras.subqueue_header == SubqueueHeader()
    assert decoded.extras.extended_address_header == HostAddress()
    assert decode_packet(plain).extras == PacketExtras()


@pytest.mark.req("MS-MQDMPR/3.1.7.1.32/R5", "MS-MQDMPR/3.1.7.1.32/R6")
def test_priority_goes_in_pr_unless_the_message_is_transactional():
    assert decode_packet(serialize_message_to_buffer(_message(priority=6))) \
        .user_message.base_header.flags.pr == 6
    tx = _message(priority=6, **{k: v for k, v in SERIAL["transactional"].items()
                                 if k != "priority"})
    data = serialize_message_to_buffer(tx)
    assert decode_packet(data).user_message.base_header.flags.pr == 0
    assert deserialize_message_from_buffer(data).priority == 3  # ignored: the ADM default


@pytest.mark.req("MS-MQDMPR/3.1.7.1.32/R9", "MS-MQDMPR/3.1.7.1.32/R10",
                 "MS-MQDMPR/3.1.7.1.32/R11", "MS-MQDMPR/3.1.7.1.32/R12",
                 "MS-MQDMPR/3.1.7.1.32/R13", "MS-MQDMPR/3.1.7.1.32/R14",
                 "MS-MQDMPR/3.1.7.1.32/R15", "MS-MQDMPR/3.1.7.1.32/R16")
@pytest.mark.parametrize("privacy, provider", [(MessagePrivacyLevel.None_, ""),
                                               (MessagePrivacyLevel.Advanced, "Contoso CSP")])
def test_the_security_header_fields_follow_the_table(privacy, provider):
    message = _message(**{**SERIAL["signed by an alternative provider"],
                          "privacy_level": privacy, "authentication_provider_name": provider})
    data = serialize_message_to_buffer(message)
    sh = decode_packet(data).user_message.security_header
    assert not sh.flags.au and sh.flags.as_ == 0
    assert sh.flags.eb == (privacy is not MessagePrivacyLevel.None_)
    assert sh.flags.de == (not provider)
    # the SecurityHeader follows the UserHeader: 16 + 48 + 4 (DQ id) + 4 (AQ id) + 16 (RQ public)
    sizes = struct.unpack_from("<HHHII", data, 88 + 2)
    assert sizes == (12, 16, 64, 30,  # SenderCertSize: MS-MQDMPR/3.1.7.1.32/R13
                     4 + 2 * (len(provider) + 1) if provider else 0)  # ProviderInfoSize: R14
    copy = deserialize_message_from_buffer(data)
    # the documents' AU/AS reading: Serialize sends 0, which reads back as None
    assert copy.authentication_level is MessageAuthenticationLevel.None_


@pytest.mark.req("MS-MQDMPR/3.1.7.1.32/R17", "MS-MQDMPR/3.1.7.1.32/R18")
def test_debug_header_qt_says_whether_a_tracing_queue_is_set():
    traced = decode_packet(serialize_message_to_buffer(_message(**SERIAL["traced"])))
    assert traced.user_message.debug_header == DebugHeader(DebugHeaderFlags(qt=1), OTHER)
    bare = decode_packet(serialize_message_to_buffer(_message(**SERIAL["traced, no queue"])))
    assert bare.user_message.debug_header == DebugHeader(DebugHeaderFlags(qt=0), None)
    assert bare.user_message.base_header.flags.dh and bare.user_message.base_header.flags.tr


@pytest.mark.req("MS-MQDMPR/3.1.7.1.32/R7", "MS-MQDMPR/3.1.7.1.32/R8")
def test_message_size_and_extension_size_are_the_sizes_of_body_and_extension():
    data = serialize_message_to_buffer(_message(body=b"x" * 1001, extension=b"e" * 7))
    # the MessagePropertiesHeader follows the UserHeader at 88 (see above): MessageSize at +32,
    # AllocationBodySize at +36, ExtensionSize at +52
    assert struct.unpack_from("<II", data, 88 + 32) == (1001, 1001)
    assert struct.unpack_from("<I", data, 88 + 52) == (7,)


def test_queue_types_a_message_leaves_unset_come_from_the_format_names():
    message = Message(destination_queue_format_name="DIRECT=OS:h\\q",
                      administration_queue_format_name=f"PRIVATE={SRC}\\00000001",
                      response_queue_format_name=f"PUBLIC={OTHER}",
                      source_machine_identifier=SRC, identifier=OBJECTID(SRC, 0))
    copy = deserialize_message_from_buffer(serialize_message_to_buffer(message))
    assert copy.destination_queue_type is MessageDestinationQueueType.DirectQueue
    assert copy.administration_queue_type is \
        MessageAdministrationQueueType.PrivateQueueOnSource
    assert copy.response_queue_type is MessageResponseQueueType.PublicQueue
    assert copy.administration_queue_format_name == f"PRIVATE={SRC}\\00000001"


@pytest.mark.parametrize("requested", [[value] for value in ACKNOWLEDGEMENT_FLAGS])
def test_each_acknowledgement_request_reads_back_as_itself(requested):
    copy = deserialize_message_from_buffer(serialize_message_to_buffer(
        _message(acknowledgements_requested=requested)))
    assert copy.acknowledgements_requested == requested


@pytest.mark.parametrize("value, code", sorted(CLASS_CODES.items(), key=lambda kv: kv[1]))
def test_every_message_class_has_its_ms_mqmq_code(value, code):
    data = serialize_message_to_buffer(_message(class_=value), trailers=False)
    assert struct.unpack_from("<H", data, 88 + 2) == (code,)  # MessagePropertiesHeader at 88
    assert deserialize_message_from_buffer(data).class_ is value


def test_hash_code_0x8003_reads_back_as_md5_as_ms_mqmq_says():
    data = serialize_message_to_buffer(_message(hash_algorithm=MessageHashAlgorithm.MD5))
    assert deserialize_message_from_buffer(data).hash_algorithm is MessageHashAlgorithm.MD5


def test_a_transaction_identifier_travels_as_its_low_20_bits():
    message = _message(**{**SERIAL["transactional"],
                          "transaction_identifier": uuid.UUID(int=(1 << 100) | 0xABCDE)})
    copy = deserialize_message_from_buffer(serialize_message_to_buffer(message))
    assert copy.transaction_identifier == uuid.UUID(int=0xABCDE)


def test_deserializing_bytes_that_are_no_packet_is_a_packet_error():
    with pytest.raises(PacketError):
        deserialize_message_from_buffer(b"\x10\x00" + bytes(30))


def test_a_message_whose_names_do_not_fit_their_types_is_a_packet_error():
    with pytest.raises(PacketError) as e:
        serialize_message_to_buffer(_message(destination_queue_format_name=f"PUBLIC={OTHER}"))
    assert e.value.field == "UserHeader.DestinationQueue"


@st.composite
def messages(draw):
    """Messages whose attributes the packet carries exactly (see ROUND_TRIP)."""
    tx = draw(st.booleans())
    security = draw(st.booleans())
    changes = dict(
        body=draw(st.binary(max_size=60)), label=draw(texts), body_type=draw(u32),
        application_tag=draw(u32), sent_time=draw(u32), time_to_reach_queue=draw(u32),
        time_to_be_received=draw(u32), priority=3 if tx else draw(st.integers(0, 7)),
        class_=draw(st.sampled_from(list(CLASS_CODES))),
        correlation_identifier=OBJECTID(draw(st.uuids()), draw(u32)),
        extension=draw(blobs), privacy_level=draw(st.sampled_from(MessagePrivacyLevel)),
        hash_algorithm=draw(st.sampled_from([h for h in MessageHashAlgorithm
                                             if h is not MessageHashAlgorithm.SHA])),
        encryption_algorithm=draw(st.sampled_from(list(ENCRYPTION_CODES))),
        acknowledgements_requested=[draw(st.sampled_from(list(ACKNOWLEDGEMENT_FLAGS)))],
        positive_journaling_requested=draw(st.booleans()),
        negative_journaling_requested=draw(st.booleans()),
        delivery_guarantee=draw(st.sampled_from(MessageDeliveryGuarantee)),
        tracing_requested=draw(st.booleans()),
        tracing_queue_identifier=draw(st.just(GUID_NULL) | st.uuids()),
        connector_type_identifier=draw(st.just(GUID_NULL) | st.uuids()),
        application_deadletter_queue=draw(texts))
    if tx:
        changes.update(transaction_identifier=uuid.UUID(int=draw(st.integers(0, 0xFFFFF))),
                       transactional_message_sequence_identifier=TxSequenceId(draw(u32),
                                                                              draw(u32)),
                       transaction_sequence_number=draw(u32),
                       transaction_previous_sequence_number=draw(u32),
                       first_in_transaction=draw(st.booleans()),
                       last_in_transaction=draw(st.booleans()),
                       final_ack_required=draw(st.booleans()),
                       connector_queue_manager_identifier=draw(st.just(GUID_NULL) | st.uuids()))
    if security:
        changes.update(authentication_level=MessageAuthenticationLevel.Sig30,
                       sender_identifier_type=draw(st.sampled_from(
                           [MessageSenderIdentifierType.Sid,
                            MessageSenderIdentifierType.QueueManagerIdentifier])),
                       sender_identifier=draw(blobs), signature=draw(blobs),
                       symmetric_key=draw(blobs), sender_certificate=draw(blobs),
                       authentication_provider_name=draw(texts),
                       authentication_provider_type=draw(u32))
    if draw(st.booleans()):
        changes.update(soap_envelope="<e/>" + draw(texts), soap_compound_message=draw(texts)
                       + "|" + draw(texts), soap_header=draw(texts), soap_body=draw(texts))
    if draw(st.booleans()):
        changes.update(destination_multi_queue_format_name=list(draw(mqf_names)) or ["DL=" + str(
            OTHER)], administration_multi_queue_format_name=list(draw(mqf_names)),
            response_multi_queue_format_name=list(draw(mqf_names)),
            multiple_destination_signature=draw(blobs))
    message = _message(**changes)
    if not security:
        message.sender_identifier_type = MessageSenderIdentifierType.Sid  # the ADM default
    if not message.authentication_provider_name:
        message.authentication_provider_type = 0
    return message


@FUZZ
@given(messages())
def test_any_message_survives_serialization_attribute_by_attribute(message):
    copy = deserialize_message_from_buffer(serialize_message_to_buffer(message))
    _assert_same(message, copy)
    if message.authentication_level is MessageAuthenticationLevel.None_:
        assert serialize_message_to_buffer(copy) == copy.packet


# ---------------------------------------------------------------------------------------------
# What a reader of the Message Packet ignores (MS-MQRR 2.2.5.1.2.x, 2.2.5.2, 2.2.5.3, 2.2.5.5)
# ---------------------------------------------------------------------------------------------

def _poke(data: bytes, at: int, raw: bytes) -> bytes:
    return data[:at] + raw + data[at + len(raw):]


@pytest.mark.req("MS-MQRR/2.2.5.1.2.1/R2", "MS-MQRR/2.2.5.1.2.2/R2", "MS-MQRR/2.2.5.2/R5",
                 "MS-MQRR/2.2.5.2/R8", "MS-MQRR/2.2.5.2/R10", "MS-MQRR/2.2.5.2/R11",
                 "MS-MQRR/2.2.5.2/R12", "MS-MQRR/2.2.5.2/R13", "MS-MQRR/2.2.5.3/R4")
def test_a_reader_ignores_the_reserved_fields_and_unused_flag_bits():
    message = _message(**SERIAL["srmp"])
    data = serialize_message_to_buffer(message)
    clean = decode_packet(data)
    # the ExtensionHeader follows the UserMessage (BaseHeader.PacketSize) and SessionHeader
    start = struct.unpack_from("<I", data, 8)[0] + (
        16 if clean.extras.session_header is not None else 0)
    assert data[start + 8] & 0b1110_0100 == 0  # X2, X5, X6, X7 clear as written
    dirty = _poke(data, start + 8, bytes([data[start + 8] | 0b1110_0100]))  # X2, X5-X7
    dirty = _poke(dirty, start + 8, bytes([dirty[start + 8] | 0b0000_1000]))  # DI, no DL
    dirty = _poke(dirty, start + 9, b"\xAB\xCD\xEF")  # ExtensionHeader.Reserved
    word_at = start + 12 + 4  # SubqueueHeader: A, AcknowledgementClass, Reserved (15 bits)
    word = int.from_bytes(dirty[word_at:word_at + 4], "little") | (0x7FFF << 17)
    dirty = _poke(dirty, word_at, word.to_bytes(4, "little"))
    body_start = clean.body[0]  # the CompoundMessageHeader; the SRMPEnvelopeHeader before it
    env_len = 8 + 2 * (len(message.soap_envelope) + 1)
    env_at = body_start - ((env_len + 3) & ~3)
    assert dirty[env_at + 2:env_at + 4] == b"\0\0" and dirty[body_start + 2:body_start + 4] == \
        b"\0\0"
    dirty = _poke(dirty, env_at + 2, b"\x5A\x5A")  # SRMPEnvelopeHeader.Reserved
    dirty = _poke(dirty, body_start + 2, b"\xA5\xA5")  # CompoundMessageHeader.Reserved
    assert dirty != data
    decoded = decode_packet(dirty)
    assert decoded.extras == clean.extras and decoded.user_message == clean.user_message
    assert not decoded.extras.extension_header.dead_letter_invalid  # DI without DL: ignored
    again = deserialize_message_from_buffer(dirty)
    assert again.soap_envelope == message.soap_envelope and again.body == message.body


@pytest.mark.req("MS-MQRR/2.2.5.3/R1", "MS-MQRR/2.2.5.5/R1", "MS-MQRR/2.2.5.5/R4")
def test_a_reader_ignores_an_unnamed_subqueue_header_and_an_address_of_type_zero():
    data = serialize_message_to_buffer(_message())
    clean = deserialize_message_from_buffer(data)
    decoded = decode_packet(data)
    assert decoded.extras.subqueue_header.subqueue_name == ""
    assert decoded.extras.extended_address_header.address_type == 0
    # counters in a SubqueueHeader whose SubqueueName is empty, and an address under
    # AddressType 0x0000: nothing of either reaches the message read
    start = struct.unpack_from("<I", data, 8)[0] + (
        16 if decoded.extras.session_header is not None else 0)
    sub = start + 12
    dirty = _poke(data, sub + 8, struct.pack("<III", 7, 9, 0x5F5E100))
    eah = len(data) - 28
    dirty = _poke(dirty, eah + 4, struct.pack("<HHI", 4, 0, 0) + bytes([192, 0, 2, 1]))
    again = deserialize_message_from_buffer(dirty)
    assert again.packet == dirty  # the message keeps its bytes; nothing else differs
    for field in dataclasses.fields(clean):
        if field.name != "packet":
            assert getattr(again, field.name) == getattr(clean, field.name), field.name
