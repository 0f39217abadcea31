"""Steps that read the Message Packet a receive returned, field by field (MS-MQRR 2.2.5).

The checks read the bytes of the returned stFullPacket section themselves, with the offsets
MS-MQRR 2.2.5.2 to 2.2.5.5 give; the packet codec (model/packet.py) is used only to find where
the trailers begin (after BaseHeader.PacketSize and the SessionHeader) and to read the
UserHeader flags, so a codec that agreed with a wrong server could not hide the fault.
"""

from __future__ import annotations

import struct
import uuid

from pytest_bdd import given, parsers, then, when

from mqconform.conformance.steps.remoteread import (
    _body_of,
    _private_names,
    _public_names,
    _receive,
)
from mqconform.conformance.steps.remoteread_more import PLACE, _assert, _settled_peek, _state
from mqconform.model import calls as c
from mqconform.model.adm import (
    MessageClass,
    MessageDeliveryGuarantee,
    MessageEncryptionAlgorithm,
    MessageHashAlgorithm,
    MessagePrivacyLevel,
    MessageSenderIdentifierType,
)
from mqconform.model.formats import FormatNameError, parse_format_name
from mqconform.model.packet import (
    BASE_HEADER_SIZE,
    CLASS_CODES,
    ENCRYPTION_CODES,
    HASH_CODES,
    PRIVACY_CODES,
    SENDER_ID_TYPE_CODES,
    PacketError,
    decode_packet,
)
from mqconform.model.packet import EXTENDED_ADDRESS_HEADER_SIZE as EXTENDED_ADDRESS_HEADER
from mqconform.model.packet import EXTENSION_HEADER_SIZE as EXTENSION_HEADER
from mqconform.model.packet import SUBQUEUE_HEADER_SIZE as SUBQUEUE_HEADER
from mqconform.model.packet import SUBQUEUE_NAME_SIZE as NAME_FIELD

#: MS-MQRR 2.2.5.5 AddressType values and the address length each implies
ADDRESS_LENGTHS = {0x0000: 0, 0x0001: 4, 0x0006: 16}


def _packet(mq, scenario: dict) -> bytes:
    result: c.Result = scenario["result"]
    _assert(mq, result.status == 0 and not result.raised,
            f"the receive returned a message (0x{result.status:08X})")
    sections = list(result.ppPacketSections or ())
    _assert(mq, len(sections) == 1 and sections[0].SectionBufferType == c.stFullPacket,
            "the message came back whole in one stFullPacket section")
    return bytes(sections[0].pSectionBuffer)


def _trailers(mq, scenario: dict) -> dict:
    """Where the ExtensionHeader and the headers after it lie, read from the raw bytes; read
    once per result, however many steps check it."""
    cached = scenario.get("trailers")
    if cached is not None and cached["result"] is scenario["result"]:
        return cached
    data = _packet(mq, scenario)
    try:
        decoded = decode_packet(data)
    except PacketError as e:
        _assert(mq, False, f"the Message Packet is well formed ({e})")
    # the headers after the UserMessage (MS-MQRR 2.2.5): a SoapHeader, a DebugHeader or a
    # MultiQueueFormatHeader lies between the body and them
    start = decoded.user_message_size
    session = decoded.extras.session_header is not None
    pos = start + (16 if session else 0)
    _assert(mq, len(data) >= pos + EXTENSION_HEADER,
            f"an ExtensionHeader follows the message packet at offset {pos}")
    size, remaining, flags = struct.unpack_from("<IIB", data, pos)
    scenario["trailers"] = {"result": scenario["result"], "data": data, "decoded": decoded,
                            "session": session, "size": size,
                            "remaining": remaining, "flags": flags,
                            "after": pos + EXTENSION_HEADER}
    return scenario["trailers"]


def _name(raw: bytes) -> tuple[str, bytes]:
    """A 64-byte name field: the WCHARs up to the first null, and the bytes after it."""
    for i in range(0, len(raw), 2):
        if raw[i:i + 2] == b"\0\0":
            return raw[:i].decode("utf-16-le", "replace"), raw[i + 2:]
    return raw.decode("utf-16-le", "replace"), b""


def _subqueue_header(mq, t: dict) -> tuple[int, bytes, bytes]:
    _assert(mq, t["flags"] >> 1 & 1 == 1, "ExtensionHeader.Flags.SQ is set")
    pos = t["after"]
    size, word = struct.unpack_from("<II", t["data"], pos)
    _assert(mq, size == SUBQUEUE_HEADER, f"SubqueueHeader.HeaderSize is {SUBQUEUE_HEADER} "
                                          f"(it is {size})")
    names = t["data"][pos + 20:pos + 20 + 2 * NAME_FIELD]
    return word, names[:NAME_FIELD], names[NAME_FIELD:]


@when(parsers.re(rf"the client peeks at (?P<place>{PLACE})"))
def the_client_peeks_at(mq, scenario, place):
    scenario["result"] = _settled_peek(mq, _state(scenario), place)


@then("the packet is a Binary Message: UserHeader.Flags.AH is clear and no SRMP header is present")
def binary_message(mq, scenario):
    t = _trailers(mq, scenario)
    decoded = t["decoded"]
    # the suite's messages carry neither SOAPEnvelope nor SOAPCompoundMessage (2.2.5.1/R6)
    _assert(mq, not decoded.user_message.user_header.flags.ah, "UserHeader.Flags.AH is clear")
    _assert(mq, decoded.extras.srmp_envelope_header is None,
            "no SRMPEnvelopeHeader without UserHeader.Flags.AH")
    _assert(mq, decoded.extras.compound_message_header is None,
            "no CompoundMessageHeader without UserHeader.Flags.AH")


@then("MessagePropertiesHeader.HashAlgorithm holds a hash algorithm's code, SHA1's for a "
      "message that names none")
def hash_algorithm_code(mq, scenario):
    """MS-MQDMPR 3.1.1.12: Message.HashAlgorithm MUST be one of the enumeration's values (the
    codes of the mapping of 3.1.7.1.32: 0x00008001 MD2 ... 0x0000800E SHA_512), and its
    default SHOULD be SHA1 (0x00008004); the suite's messages name none."""
    t = _trailers(mq, scenario)
    value = t["decoded"].user_message.message_properties_header.hash_algorithm
    known = isinstance(value, MessageHashAlgorithm)
    shown = value.name if known else f"0x{value:08X}"
    _assert(mq, known, f"MessagePropertiesHeader.HashAlgorithm is {shown}, no hash algorithm's "
                       f"code (MS-MQDMPR/3.1.1.12/R46)")
    _assert(mq, value is MessageHashAlgorithm.SHA1,
            f"the default HashAlgorithm is SHA1 (0x00008004), not {shown} "
            f"(MS-MQDMPR/3.1.1.12/R47)")


def _header(mq, scenario: dict):
    """The MessagePropertiesHeader of the message the scenario's call returned."""
    return _trailers(mq, scenario)["decoded"].user_message.message_properties_header


def _is_default(mq, value, default, field: str, what: str, digits: int) -> None:
    """A field of the packet holds ``default`` (an enumeration's member; ``what`` names it and
    the rule), shown by name, or in hexadecimal of ``digits`` digits where no member has it."""
    shown = value.name if isinstance(value, type(default)) else f"0x{value:0{digits}X}"
    _assert(mq, value is default, f"{field} is {shown}, not {what}")


@then("MessagePropertiesHeader.MessageClass is MQMSG_CLASS_NORMAL (0x0000), for a message "
      "that names no class")
def normal_class(mq, scenario):
    """MS-MQDMPR 3.1.1.12: "The default value of this ADM attribute [Class] is Normal", a
    message an application sent; the packet carries it as MessagePropertiesHeader's
    MessageClass, 0x0000 for Normal (3.1.7.1.32's mapping of MS-MQMQ's class codes). The
    suite's messages name none."""
    _is_default(mq, _header(mq, scenario).message_class, MessageClass.Normal,
                "MessagePropertiesHeader.MessageClass", "MQMSG_CLASS_NORMAL (0x0000), the default "
                "Class (MS-MQDMPR/3.1.1.12/R3)", 4)


@then("MessagePropertiesHeader.PrivacyLevel is MQMSG_PRIV_LEVEL_NONE (0x0), for a message that "
      "names no privacy level")
def no_privacy(mq, scenario):
    """MS-MQDMPR 3.1.1.12: "The default value of this ADM attribute [PrivacyLevel] is None";
    the packet carries it as MessagePropertiesHeader's PrivacyLevel, 0x0 for None (3.1.7.1.32's
    table). The suite's messages name none."""
    _is_default(mq, _header(mq, scenario).privacy_level, MessagePrivacyLevel.None_,
                "MessagePropertiesHeader.PrivacyLevel", "MQMSG_PRIV_LEVEL_NONE (0x0), the default "
                "PrivacyLevel (MS-MQDMPR/3.1.1.12/R4)", 1)


@then("MessagePropertiesHeader.EncryptionAlgorithm holds RC4's code (0x6801), for a message "
      "that names no encryption algorithm")
def rc4_by_default(mq, scenario):
    """MS-MQDMPR 3.1.1.12: "The default value of this ADM attribute [EncryptionAlgorithm]
    SHOULD be RC4"; the packet carries it as MessagePropertiesHeader's EncryptionAlgorithm,
    CALG_RC4 0x00006801 (3.1.7.1.32's table). The suite's messages name none."""
    _is_default(mq, _header(mq, scenario).encryption_algorithm, MessageEncryptionAlgorithm.RC4,
                "MessagePropertiesHeader.EncryptionAlgorithm", "RC4 (0x00006801), the default "
                "EncryptionAlgorithm (MS-MQDMPR/3.1.1.12/R48)", 8)


@then("UserHeader.Flags.DM says express delivery (0x0), for a message that names no delivery "
      "guarantee")
def express_by_default(mq, scenario):
    """MS-MQDMPR 3.1.1.12: "The default value of this ADM attribute [DeliveryGuarantee] is
    Express"; the packet carries it as UserHeader.Flags.DM, 0x0 for Express (MS-MQMQ 2.2.19.2;
    3.1.7.1.32's table). The suite's messages name none."""
    _is_default(mq, _trailers(mq, scenario)["decoded"].user_message.user_header.flags.dm,
                MessageDeliveryGuarantee.Express, "UserHeader.Flags.DM", "Express (0x0), the "
                "default DeliveryGuarantee (MS-MQDMPR/3.1.1.12/R16, R17)", 1)


@given(parsers.parse("a queue with a recoverable message of {size:d} bytes"))
def a_queue_with_a_recoverable_message(mq, scenario, size):
    """A message whose DeliveryGuarantee is Recoverable (MS-MQDMPR 3.1.1.12; SUT control's
    ``delivery``)."""
    scenario["body"] = _body_of(size)
    scenario["queue"] = mq.queue([{"body": scenario["body"], "delivery": "recoverable"}])


@then("UserHeader.Flags.DM says recoverable delivery (0x1), for a message sent recoverable")
def recoverable_delivery(mq, scenario):
    """MS-MQDMPR 3.1.7.1.32 serializes Message.DeliveryGuarantee into UserHeader.Flags.DM
    (R2, R3: the field MUST be set to the attribute), whose code for Recoverable is 0x1
    (MS-MQMQ 2.2.19.2). A server that kept the message, but not its guarantee, would hand a
    reader an express message, which a restart may lose."""
    _is_default(mq, _trailers(mq, scenario)["decoded"].user_message.user_header.flags.dm,
                MessageDeliveryGuarantee.Recoverable, "UserHeader.Flags.DM", "Recoverable "
                "(0x1), the message's DeliveryGuarantee (MS-MQDMPR/3.1.7.1.32/R3)", 1)


@given(parsers.parse("a queue with a message sent with positive journaling {jp:d} and "
                     "negative journaling {jn:d}"))
def a_queue_with_a_journaling_message(mq, scenario, jp, jn):
    """Message.PositiveJournalingRequested and NegativeJournalingRequested (MS-MQDMPR
    3.1.1.12; SUT control's ``positive_journaling`` and ``negative_journaling``): the source
    journaling its sender asked for."""
    scenario["body"] = b"journaling asked for"
    scenario["queue"] = mq.queue([{"body": scenario["body"], "positive_journaling": bool(jp),
                                   "negative_journaling": bool(jn)}])


@then(parsers.parse("UserHeader.Flags.JP is {jp:d} and UserHeader.Flags.JN is {jn:d}, as the "
                    "message was sent"))
def journaling_flags(mq, scenario, jp, jn):
    """MS-MQDMPR 3.1.7.1.32 (R2, R3) sets UserHeader.Flags.JP to PositiveJournalingRequested
    and JN to NegativeJournalingRequested; JN is bit 8 and JP bit 9 of the flags (MS-MQMQ
    2.2.19.2), read here from the packet's octets."""
    flags = _user_flags(mq, scenario)
    for name, bit, want in (("JP", 9, jp), ("JN", 8, jn)):
        got = flags >> bit & 1
        _assert(mq, got == want, f"UserHeader.Flags.{name} is {got}, not {want}, the message's "
                                 f"{'Positive' if name == 'JP' else 'Negative'}"
                                 f"JournalingRequested (MS-MQDMPR/3.1.7.1.32/R3)")


@given("a queue with a message sent alone in a transaction")
def a_queue_with_a_message_alone_in_a_transaction(mq, scenario):
    """A transactional message (SUT control's ``transactional``: each sent in a transaction of
    its own) in a transactional queue."""
    scenario["body"] = b"alone in its transaction"
    scenario["queue"] = mq.queue([{"body": scenario["body"], "transactional": True}],
                                 transactional=True)


@then("UserHeader.Flags.TH is set and the TransactionHeader marks the message the first and "
      "the last of its transaction, with no connector queue manager")
def first_and_last_in_transaction(mq, scenario):
    """A message whose TransactionIdentifier is set gets a TransactionHeader and
    UserHeader.Flags.TH (MS-MQDMPR 3.1.7.1.30 R6). Transaction Prepare marks the first and the
    last of a transaction's operations FirstInTransaction and LastInTransaction (MS-MQDMPR
    3.1.4.3 R6, R7): both, for the one message of a transaction; serialization writes them to
    TransactionHeader.Flags.FM and LM (3.1.7.1.32 R3), and CG is set only with a
    ConnectorQMGuid, which a message sent to no connector has none of (MS-MQMQ 2.2.20.5)."""
    header = _announced(mq, scenario, "TH", "transaction_header", "TransactionHeader",
                        "a message sent in a transaction", "MS-MQDMPR/3.1.7.1.30/R6")
    f = header.flags
    _assert(mq, f.fm and f.lm, f"TransactionHeader.Flags.FM is {int(f.fm)} and LM "
                               f"{int(f.lm)}: the one message of its transaction is its first "
                               f"and its last (MS-MQDMPR/3.1.4.3/R6, MS-MQDMPR/3.1.4.3/R7, "
                               f"MS-MQDMPR/3.1.7.1.32/R3)")
    _assert(mq, not f.cg and header.connector_qm_guid is None,
            "TransactionHeader.Flags.CG is clear and no ConnectorQMGuid follows, for a message "
            "sent to no connector (MS-MQDMPR/3.1.7.1.32/R3)")
    _assert(mq, not f.fa, "TransactionHeader.Flags.FA is clear: the message's FinalAckRequired "
                          "is False (MS-MQDMPR/3.1.7.1.32/R3)")


@given(parsers.parse("a queue with a transactional message that asks for a final "
                     'acknowledgement through the connector queue manager "{guid}"'))
def a_queue_with_a_message_through_a_connector(mq, scenario, guid):
    """Message.FinalAckRequired and .ConnectorQueueManagerIdentifier (MS-MQDMPR 3.1.1.12; SUT
    control's ``final_ack_required``, ``connector_queue_manager``) of a transactional
    message."""
    scenario["body"] = b"through a connector queue manager"
    scenario["connector"] = uuid.UUID(guid)
    scenario["queue"] = mq.queue([{"body": scenario["body"], "transactional": True,
                                   "final_ack_required": True,
                                   "connector_queue_manager": guid}], transactional=True)


@then("the TransactionHeader has Flags.FA set, Flags.CG set and the connector queue manager as "
      "ConnectorQMGuid")
def final_ack_and_connector(mq, scenario):
    """MS-MQDMPR 3.1.7.1.32 R3: TransactionHeader.Flags.FA is FinalAckRequired, ConnectorQMGuid
    the ConnectorQueueManagerIdentifier; MS-MQMQ 2.2.20.5: Flags.CG says it is present."""
    header = _announced(mq, scenario, "TH", "transaction_header", "TransactionHeader",
                        "a message sent in a transaction", "MS-MQDMPR/3.1.7.1.30/R6")
    f = header.flags
    _assert(mq, f.fa, "TransactionHeader.Flags.FA is set: the message's FinalAckRequired is "
                      "True (MS-MQDMPR/3.1.7.1.32/R3)")
    _assert(mq, f.cg and header.connector_qm_guid == scenario["connector"],
            f"TransactionHeader.Flags.CG is {int(f.cg)} and ConnectorQMGuid "
            f"{header.connector_qm_guid}, not set and the message's "
            f"ConnectorQueueManagerIdentifier {scenario['connector']} "
            f"(MS-MQDMPR/3.1.7.1.32/R3)")


@given(parsers.parse('a queue with a message sent by a connector application of type "{guid}"'))
def a_queue_with_a_connector_message(mq, scenario, guid):
    """Message.ConnectorTypeIdentifier (MS-MQDMPR 3.1.1.12; SUT control's ``connector_type``):
    a message a connector application sent."""
    scenario["body"] = b"from a connector application"
    scenario["connector_type"] = guid
    scenario["queue"] = mq.queue([{"body": scenario["body"], "connector_type": guid}])


@then("UserHeader.Flags.CQ is set and UserHeader.ConnectorType is the type the message was "
      "sent with")
def connector_type(mq, scenario):
    """MS-MQDMPR 3.1.7.1.32 R3 writes Message.ConnectorTypeIdentifier into
    UserHeader.ConnectorType, which is present exactly when UserHeader.Flags.CQ (bit 22) is
    set (MS-MQMQ 2.2.19.2); the server does not interpret the GUID (MS-MQDMPR 3.1.1.12) but
    carries it."""
    flags = _user_flags(mq, scenario)
    _assert(mq, flags >> 22 & 1 == 1, "UserHeader.Flags.CQ is set for a message a connector "
                                      "application sent (MS-MQDMPR/3.1.7.1.32/R3)")
    carried = _trailers(mq, scenario)["decoded"].user_message.user_header.connector_type
    want = uuid.UUID(scenario["connector_type"])
    _assert(mq, carried == want, f"UserHeader.ConnectorType is {carried}, not {want}, the "
                                 f"message's ConnectorTypeIdentifier (MS-MQDMPR/3.1.7.1.32/R3)")


@given(parsers.parse('a queue with a message that requests the acknowledgements "{names}"'))
def a_queue_with_a_message_requesting(mq, scenario, names):
    """Message.AcknowledgementsRequested (MS-MQDMPR 3.1.1.12; SUT control's
    ``acknowledgements``: the enumeration's names, separated by commas)."""
    scenario["body"] = b"acknowledge me"
    scenario["queue"] = mq.queue([{"body": scenario["body"], "acknowledgements": names}])


@then(parsers.parse("MessagePropertiesHeader.Flags has exactly {bits}"))
def acknowledgement_bits(mq, scenario, bits):
    """MS-MQDMPR 3.1.7.1.32 R3 writes Message.AcknowledgementsRequested into
    MessagePropertiesHeader.Flags: PA bit 0, PR bit 1, NA bit 2, NR bit 3 (MS-MQMQ 2.2.19.3);
    ``bits``: the names of the bits set, "PA and NR", or "none"."""
    flags = _trailers(mq, scenario)["decoded"].user_message.message_properties_header.flags
    want = set() if bits == "none" else {b.strip().lower() for b in bits.split(" and ")}
    got = {name for name in ("pa", "pr", "na", "nr") if getattr(flags, name)}
    _assert(mq, got == want, f"MessagePropertiesHeader.Flags has {sorted(got) or 'none'} set, "
                             f"not {sorted(want) or 'none'}, for the acknowledgements the "
                             f"message requests (MS-MQDMPR/3.1.7.1.32/R3)")


def _label_of(length: int) -> str:
    """A label of ``length`` characters, not all alike, none outside the BMP."""
    return "".join("label\u00e9-0123456789"[i % 17] for i in range(length))


@given(parsers.parse("a queue with a message whose label is {length:d} characters long"))
def a_queue_with_a_labelled_message(mq, scenario, length):
    """Message.Label (MS-MQDMPR 3.1.1.12; SUT control's ``label``): at most 249 characters,
    which with the terminating null is LabelLength's most, 0xFA (MS-MQMQ 2.2.19.3)."""
    scenario["body"] = b"labelled"
    scenario["label"] = _label_of(length)
    scenario["queue"] = mq.queue([{"body": scenario["body"], "label": scenario["label"]}])


@then("the MessagePropertiesHeader carries the label, its LabelLength counting the null")
def label_carried(mq, scenario):
    """MS-MQDMPR 3.1.7.1.32 R3 writes Message.Label into MessagePropertiesHeader.Label;
    LabelLength is its length in WCHARs with the terminating null, 0 for no label (MS-MQMQ
    2.2.19.3). The codec reads the label by that count, so a wrong count or label reads back
    as another label (or not at all)."""
    label = scenario["label"]
    mp = _trailers(mq, scenario)["decoded"].user_message.message_properties_header
    _assert(mq, mp.label == label, f"MessagePropertiesHeader.Label holds {len(mp.label)} "
                                   f"characters ({mp.label[:24]!r}...), not the message's "
                                   f"{len(label)} ({label[:24]!r}...) (MS-MQDMPR/3.1.7.1.32/R3)")


@given(parsers.parse("a queue with a message with {size:d} bytes of extension data"))
def a_queue_with_an_extended_message(mq, scenario, size):
    """Message.Extension (MS-MQDMPR 3.1.1.12; SUT control's ``extension_hex``)."""
    scenario["body"] = b"with an extension"
    scenario["extension"] = bytes((7 * i + 3) % 256 for i in range(size))
    scenario["queue"] = mq.queue([{"body": scenario["body"],
                                   "extension_hex": scenario["extension"].hex()}])


@then("the MessagePropertiesHeader carries the extension data, ExtensionSize its size in bytes")
def extension_carried(mq, scenario):
    """MS-MQDMPR 3.1.7.1.32: ExtensionData is Message.Extension (R3) and ExtensionSize its size
    in bytes (R8); the codec reads ExtensionSize octets of ExtensionData, so a wrong size or
    data reads back as other data (or not at all)."""
    want = scenario["extension"]
    mp = _trailers(mq, scenario)["decoded"].user_message.message_properties_header
    got = bytes(mp.extension_data)
    _assert(mq, got == want, f"MessagePropertiesHeader.ExtensionData holds {len(got)} bytes "
                             f"{got[:12].hex()}..., not the message's {len(want)} "
                             f"{want[:12].hex()}... (MS-MQDMPR/3.1.7.1.32/R3, "
                             f"MS-MQDMPR/3.1.7.1.32/R8)")
    _assert(mq, mp.message_body == scenario["body"], "the body follows the extension data "
                                                     "as it was sent")


#: a SID (MS-DTYP 2.4.2.2) of a domain user: S-1-5-21-1004336348-1177238915-682003330-1001
SENDER_SID = bytes.fromhex("010500000000000515000000dcf4dc3b833d2b46828ba628e9030000")


@given(parsers.parse("a queue with a message signed at {level} by a sender with a SID"))
def a_queue_with_a_signed_message(mq, scenario, level):
    """Message.AuthenticationLevel, SenderIdentifier (a SID: SenderIdentifierType Sid) and
    Signature (MS-MQDMPR 3.1.1.12; SUT control's ``authentication_level``, ``sender_sid_hex``,
    ``signature_hex``)."""
    scenario["body"] = b"signed"
    scenario["signature"] = bytes(range(0x80, 0x80 + 64))
    scenario["queue"] = mq.queue([{"body": scenario["body"], "authentication_level": level,
                                   "sender_sid_hex": SENDER_SID.hex(),
                                   "signature_hex": scenario["signature"].hex()}])


@then("UserHeader.Flags.SH is set and the SecurityHeader carries the sender's SID and the "
      "signature, with AU and AS zero")
def security_header(mq, scenario):
    """MS-MQDMPR 3.1.7.1.30 R7: a message whose AuthenticationLevel is not None gets a
    SecurityHeader and UserHeader.Flags.SH (bit 19); 3.1.7.1.32 writes it: Flags.AU zero (R9),
    Flags.AS zero (R10), ST the SenderIdentifierType (0x1: a SID, MS-MQMQ 2.2.20.6), the
    SecurityID the SenderIdentifier and the Signature the message's (R3)."""
    header = _announced(mq, scenario, "SH", "security_header", "SecurityHeader",
                        "a message whose AuthenticationLevel is not None",
                        "MS-MQDMPR/3.1.7.1.30/R7")
    f, d = header.flags, header.security_data
    _assert(mq, not f.au, "SecurityHeader.Flags.AU is zero (MS-MQDMPR/3.1.7.1.32/R9)")
    _assert(mq, f.as_ == 0, f"SecurityHeader.Flags.AS is {f.as_}, not zero "
                            f"(MS-MQDMPR/3.1.7.1.32/R10)")
    _assert(mq, f.st is MessageSenderIdentifierType.Sid,
            f"SecurityHeader.Flags.ST is {f.st}, not a SID (0x1), the message's "
            f"SenderIdentifierType (MS-MQDMPR/3.1.7.1.32/R3)")
    _assert(mq, bytes(d.security_id) == SENDER_SID,
            f"SecurityHeader.SecurityID is {bytes(d.security_id).hex()}, not the sender's SID "
            f"{SENDER_SID.hex()} (MS-MQDMPR/3.1.7.1.32/R3)")
    _assert(mq, bytes(d.signature) == scenario["signature"],
            "SecurityHeader.Signature is the message's Signature (MS-MQDMPR/3.1.7.1.32/R3)")


@then("SecurityHeader.Flags.EB is clear and SecurityHeader.Flags.DE is set")
def not_private_signed_by_the_queuing_system(mq, scenario):
    """MS-MQDMPR 3.1.7.1.32: EB is zero when Message.PrivacyLevel is None (R12); DE is 0x1 when
    the queuing system produced the signature (R15: no AuthenticationProviderName given)."""
    f = _trailers(mq, scenario)["decoded"].user_message.security_header.flags
    _assert(mq, not f.eb, "SecurityHeader.Flags.EB is zero for a message whose PrivacyLevel "
                          "is None (MS-MQDMPR/3.1.7.1.32/R12)")
    _assert(mq, f.de, "SecurityHeader.Flags.DE is 0x1 for a message the queuing system signed "
                      "(MS-MQDMPR/3.1.7.1.32/R15)")


#: a symmetric key (Message.SymmetricKey) of a private message: opaque octets to the queue
SYMMETRIC_KEY = bytes(range(0x40, 0x40 + 24))


@given(parsers.parse("a queue with a message signed at Sig20, sent at {privacy} privacy, "
                     "encrypted with {encryption} and hashed with {hash_}"))
def a_queue_with_a_private_message(mq, scenario, privacy, encryption, hash_):
    """Message.PrivacyLevel, EncryptionAlgorithm, HashAlgorithm and SymmetricKey (MS-MQDMPR
    3.1.1.12; SUT control's ``privacy_level``, ``encryption_algorithm``, ``hash_algorithm``,
    ``symmetric_key_hex``): the body as the application gave it, the queue holding octets."""
    scenario["body"] = b"private"
    scenario["privacy"] = (MessagePrivacyLevel[privacy], MessageEncryptionAlgorithm[encryption],
                           MessageHashAlgorithm[hash_])
    scenario["queue"] = mq.queue([{"body": scenario["body"], "authentication_level": "Sig20",
                                   "sender_sid_hex": SENDER_SID.hex(),
                                   "signature_hex": bytes(range(16)).hex(),
                                   "privacy_level": privacy, "encryption_algorithm": encryption,
                                   "hash_algorithm": hash_,
                                   "symmetric_key_hex": SYMMETRIC_KEY.hex()}])


@then("the MessagePropertiesHeader carries the privacy level and the algorithms, the "
      "SecurityHeader the symmetric key with Flags.EB set")
def privacy_carried(mq, scenario):
    """MS-MQDMPR 3.1.7.1.32 R3: MessagePropertiesHeader.PrivacyLevel, .EncryptionAlgorithm and
    .HashAlgorithm are the message's, coded as its tables list them (PrivacyLevel Base 0x1,
    Enhanced 0x3, Advanced 0x5; the ALG_IDs of MS-MQMQ 2.2.19.3), the SecurityHeader's
    EncryptionKey its SymmetricKey; Flags.EB is 1 as PrivacyLevel is not None (R11)."""
    user = _trailers(mq, scenario)["decoded"].user_message
    mp = user.message_properties_header
    privacy, encryption, hash_ = scenario["privacy"]
    for field, got, want, codes in (
            ("PrivacyLevel", mp.privacy_level, privacy, PRIVACY_CODES),
            ("EncryptionAlgorithm", mp.encryption_algorithm, encryption, ENCRYPTION_CODES),
            ("HashAlgorithm", mp.hash_algorithm, hash_, HASH_CODES)):
        # compared as codes: SHA and SHA1 are one ALG_ID (CALG_SHA = CALG_SHA1, 0x8004)
        _assert(mq, codes.get(got, got) == codes[want],
                f"MessagePropertiesHeader.{field} reads {_code_name(got)}, not the message's "
                f"{want.name} ({codes[want]:#06x}) (MS-MQDMPR/3.1.7.1.32/R3)")
    header = _announced(mq, scenario, "SH", "security_header", "SecurityHeader",
                        "a message whose AuthenticationLevel is not None",
                        "MS-MQDMPR/3.1.7.1.30/R7")
    _assert(mq, header.flags.eb, "SecurityHeader.Flags.EB is 1 for a message whose "
                                 "PrivacyLevel is not None (MS-MQDMPR/3.1.7.1.32/R11)")
    key = bytes(header.security_data.encryption_key)
    _assert(mq, key == SYMMETRIC_KEY,
            f"SecurityHeader.EncryptionKey holds {len(key)} bytes {key[:8].hex()}..., not the "
            f"message's SymmetricKey (MS-MQDMPR/3.1.7.1.32/R3)")


def _code_name(value) -> str:
    """A decoded code: its enumeration name, or the number no table lists."""
    return value.name if hasattr(value, "name") else f"0x{value:X}"


#: the queue manager that sent a message itself (SUT control's ``sender_queue_manager``)
SENDER_QM = uuid.UUID("3b7e2c91-4f0a-4d6e-8a5c-9e1f2d3c4b5a")
#: the senders of a message signed by an alternative provider: the SUT control keys that say who
#: sent it (``sender_identifier_type``; ``sender_sid_hex`` and ``sender_queue_manager`` set
#: the type too), and the Message.SenderIdentifierType and SenderIdentifier that makes
PROVIDER_SENDERS = {
    "no identity": ({"sender_identifier_type": "None_"},
                    MessageSenderIdentifierType.None_, b""),
    "a sender's SID": ({"sender_sid_hex": SENDER_SID.hex()},
                       MessageSenderIdentifierType.Sid, SENDER_SID),
    "a queue manager": ({"sender_queue_manager": str(SENDER_QM)},
                        MessageSenderIdentifierType.QueueManagerIdentifier, SENDER_QM.bytes_le)}


@given(parsers.parse('a queue with a message of {sender} signed at Sig30 by the provider '
                     '"{provider}" of type {kind:d} with a {size:d}-byte sender certificate'))
def a_queue_with_a_message_of_another_provider(mq, scenario, sender, provider, kind, size):
    """Message.AuthenticationProviderName, .AuthenticationProviderType and .SenderCertificate
    (MS-MQDMPR 3.1.1.12; SUT control's ``authentication_provider_name``,
    ``authentication_provider_type``, ``sender_certificate_hex``), with or without the
    sender's identity (PROVIDER_SENDERS); a signature of 29 bytes."""
    scenario["body"] = b"provider"
    scenario["provider"] = (kind, provider)
    keys, *scenario["sender"] = PROVIDER_SENDERS[sender]
    scenario["certificate"] = bytes((0x30 + i) % 256 for i in range(size))
    scenario["queue"] = mq.queue([{"body": scenario["body"], "authentication_level": "Sig30",
                                   "signature_hex": bytes(range(29)).hex(),
                                   **keys,
                                   "authentication_provider_name": provider,
                                   "authentication_provider_type": kind,
                                   "sender_certificate_hex": scenario["certificate"].hex()}])


@then("SecurityHeader.Flags.DE is clear and the SecurityHeader carries the ProviderInfo and the "
      "sender certificate")
def provider_carried(mq, scenario):
    """MS-MQDMPR 3.1.7.1.32: DE is 0x0 for a signature of an alternative provider (R16); ST is
    the SenderIdentifierType, None (0x0) with no SecurityID, Sid (0x1) with the SID or
    QueueManagerIdentifier (0x2) with the queue manager's GUID (R3); the
    ProviderInfo's ProviderType and ProviderName are the message's (R3), ProviderInfoSize their
    size (R14: the name read back whole, with or without its null, as the
    packet-provider-info-null choice allows); SenderCert the certificate, SenderCertSize its
    size (R13: the codec reads SenderCertSize octets, so a wrong size reads other data)."""
    header = _announced(mq, scenario, "SH", "security_header", "SecurityHeader",
                        "a message whose AuthenticationLevel is not None",
                        "MS-MQDMPR/3.1.7.1.30/R7")
    _assert(mq, not header.flags.de, "SecurityHeader.Flags.DE is 0x0 for a signature produced "
                                     "by an alternative provider (MS-MQDMPR/3.1.7.1.32/R16)")
    want, sender = scenario["sender"]
    got = bytes(header.security_data.security_id)
    _assert(mq, header.flags.st is want and got == sender,
            f"SecurityHeader.Flags.ST reads {_code_name(header.flags.st)} and SecurityID "
            f"{got.hex() or 'nothing'}; the message's SenderIdentifierType is {want.name} "
            f"({SENDER_ID_TYPE_CODES[want]:#x}) and its SenderIdentifier "
            f"{sender.hex() or 'none'} (MS-MQDMPR/3.1.7.1.32/R3, MS-MQMQ 2.2.20.6)")
    info = header.security_data.provider_info
    kind, provider = scenario["provider"]
    got = None if info is None else (info.provider_type, info.provider_name)
    _assert(mq, got == (kind, provider),
            f"SecurityHeader.ProviderInfo reads {got}, not the message's provider type {kind} "
            f"and name {provider!r} (MS-MQDMPR/3.1.7.1.32/R3, MS-MQDMPR/3.1.7.1.32/R14)")
    cert = bytes(header.security_data.sender_cert)
    want = scenario["certificate"]
    _assert(mq, cert == want, f"SecurityHeader.SenderCert holds {len(cert)} bytes, not the "
                              f"message's {len(want)}-byte SenderCertificate "
                              f"(MS-MQDMPR/3.1.7.1.32/R3, MS-MQDMPR/3.1.7.1.32/R13)")


@given(parsers.parse('a queue with a message sent at once to the queues "{names}"'))
def a_queue_with_a_message_sent_to_several(mq, scenario, names):
    """Message.DestinationMultiQueueFormatName (MS-MQDMPR 3.1.1.12; SUT control's
    ``destination_queues``, names separated by commas): the queues the sender named in one
    multiple-element format name (MS-MQMQ 2.1.7)."""
    scenario["body"] = b"to several queues"
    scenario["names"] = [n.strip() for n in names.split(",")]
    scenario["queue"] = mq.queue([{"body": scenario["body"], "destination_queues": names}])


@then("UserHeader.Flags.MQ is set and the MultiQueueFormatHeader lists every queue the message "
      "was sent to")
def multi_queue_format_header(mq, scenario):
    """MS-MQDMPR 3.1.7.1.30 R10: a message whose DestinationMultiQueueFormatName is specified
    gets a MultiQueueFormatHeader and UserHeader.Flags.MQ (bit 23); its Destination lists the
    collection (3.1.7.1.32 R3, MS-MQMQ 2.2.20.1, 2.2.20.2)."""
    header = _announced(mq, scenario, "MQ", "multi_queue_format_header",
                        "MultiQueueFormatHeader", "a message sent to several queues at once",
                        "MS-MQDMPR/3.1.7.1.30/R10")
    listed = list(header.destination)
    want = scenario["names"]
    _assert(mq, len(listed) == len(want)
            and all(_same_name(w, got) for w, got in zip(want, listed, strict=True)),
            f"MultiQueueFormatHeader.Destination lists {listed}, not {want} "
            f"(MS-MQDMPR/3.1.7.1.32/R3)")


@given(parsers.parse('a queue with a message sent at once to the queues "{names}" with the '
                     'administration queues "{admin}" and the response queues "{response}" and '
                     'a {size:d}-byte signature'))
def a_queue_with_a_message_of_multiple_queue_names(mq, scenario, names, admin, response, size):
    """Message.DestinationMultiQueueFormatName, AdministrationMultiQueueFormatName,
    ResponseMultiQueueFormatName and MultipleDestinationSignature (MS-MQDMPR 3.1.1.12; SUT
    control's ``destination_queues``, ``admin_queues``, ``response_queues``,
    ``multiple_destination_signature_hex``)."""
    scenario["body"] = b"to several queues, answers to several"
    scenario["lists"] = {field: [n.strip() for n in given.split(",")] for field, given in
                         (("Destination", names), ("Administration", admin),
                          ("Response", response))}
    scenario["signature"] = bytes((0xA0 + i) % 256 for i in range(size))
    scenario["queue"] = mq.queue([{"body": scenario["body"], "destination_queues": names,
                                   "admin_queues": admin, "response_queues": response,
                                   "multiple_destination_signature_hex":
                                       scenario["signature"].hex()}])


@then("the MultiQueueFormatHeader lists the destination, administration and response queues and "
      "carries the signature")
def multi_queue_format_header_whole(mq, scenario):
    """MS-MQDMPR 3.1.7.1.30's table (3.1.7.1.32 R3): MultiQueueFormatHeader.Destination,
    .Administration and .Response are the message's multiple-element format names,
    .Signature its MultipleDestinationSignature (MS-MQMQ 2.2.20.1-2.2.20.3: each
    MQFAddressHeader's HeaderSize covers its elements rounded up to 4 bytes, MQFSignatureHeader
    its Size bytes; the codec reads them so, a missing pad reads the next header askew)."""
    header = _announced(mq, scenario, "MQ", "multi_queue_format_header",
                        "MultiQueueFormatHeader", "a message sent to several queues at once",
                        "MS-MQDMPR/3.1.7.1.30/R10")
    for field, want in scenario["lists"].items():
        listed = list(getattr(header, field.lower()))
        _assert(mq, len(listed) == len(want)
                and all(_same_name(w, got) for w, got in zip(want, listed, strict=True)),
                f"MultiQueueFormatHeader.{field} lists {listed}, not {want} "
                f"(MS-MQDMPR/3.1.7.1.32/R3)")
    got = bytes(header.signature)
    _assert(mq, got == scenario["signature"],
            f"MultiQueueFormatHeader.Signature holds {len(got)} bytes {got[:8].hex()}..., not "
            f"the message's {len(scenario['signature'])}-byte MultipleDestinationSignature "
            f"(MS-MQDMPR/3.1.7.1.32/R3)")


# ------------------------------------------------------------------- queue names and types

#: where UserHeader.Flags lies in a packet: after the BaseHeader (16 bytes) and the UserHeader's
#: SourceQueueManager, QueueManagerAddress, TimeToBeReceived, SentTime and MessageID (MS-MQMQ
#: 2.2.19.1, 2.2.19.2)
USER_FLAGS_AT = BASE_HEADER_SIZE + 16 + 16 + 4 + 4 + 4
#: UserHeader.Flags' DQ, AQ and RQ: three bits each, from bit 10 (MS-MQMQ 2.2.19.2)
QUEUE_TYPE_BITS = {"DQ": 10, "AQ": 13, "RQ": 16}


def _user_flags(mq, scenario: dict) -> int:
    """UserHeader.Flags as the packet's octets hold them (MS-MQMQ 2.2.19.2)."""
    data = _packet(mq, scenario)
    _assert(mq, len(data) >= USER_FLAGS_AT + 4, "the packet holds a UserHeader")
    (flags,) = struct.unpack_from("<I", data, USER_FLAGS_AT)
    return flags


#: the UserHeader.Flags bits that announce a header (MS-MQMQ 2.2.19.2)
HEADER_BITS = {"SH": 19, "TH": 20, "MQ": 23}


def _announced(mq, scenario: dict, flag: str, attribute: str, name: str, which: str,
               rule: str):
    """The header UserHeader.Flags.``flag`` announces, checked set (the bit read from the
    octets) and present (decoded), for ``which`` message ``rule`` gives one."""
    flags = _user_flags(mq, scenario)
    _assert(mq, flags >> HEADER_BITS[flag] & 1 == 1,
            f"UserHeader.Flags.{flag} is set for {which} ({rule})")
    header = getattr(_trailers(mq, scenario)["decoded"].user_message, attribute)
    _assert(mq, header is not None, f"the packet has a {name} ({rule})")
    return header


def _queue_type(mq, scenario: dict, field: str) -> int:
    """UserHeader.Flags.DQ, AQ or RQ as the packet holds it."""
    flags = _user_flags(mq, scenario)
    return flags >> QUEUE_TYPE_BITS[field] & 0x7


def _same_name(given: str, carried: str | None) -> bool:
    """Two format names of one queue: the same kind, GUID, number, host and path (GUIDs and
    hex digits are not case-sensitive, MS-MQMQ 2.1)."""
    try:
        return carried is not None and parse_format_name(carried) == parse_format_name(given)
    except FormatNameError:
        return False


@given("a queue with a message sent to the queue's PRIVATE= format name")
def a_message_sent_to_the_private_name(mq, scenario):
    """Message.DestinationQueueFormatName is the queue's PRIVATE= format name (SUT control's
    ``destination_queue``); the name differs between the target and the oracle."""
    scenario["queue"] = mq.queue([])
    _send_to_its_name(mq, scenario, *_private_names(mq, scenario), b"to a private format name")


def _send_to_its_name(mq, scenario: dict, theirs, ours, body: bytes) -> None:
    """Send ``body`` to the case's queue by the format name it has on the target (``theirs``)
    and on the oracle (``ours``): Message.DestinationQueueFormatName (SUT control's
    ``destination_queue``)."""
    scenario["body"] = body
    scenario["sent_to"] = str(theirs)
    mq.send(scenario["queue"], {"body": body, "destination_queue": str(theirs)},
            oracle_message={"body": body, "destination_queue": str(ours)})


@then("UserHeader.Flags.DQ says a private queue on the destination queue manager (0x3), and "
      "the UserHeader names the queue by the PRIVATE= format name it was sent to")
def private_destination(mq, scenario):
    """MS-MQDMPR 3.1.7.1.32 (R2, R3) writes Message.DestinationQueueType into
    UserHeader.Flags.DQ and DestinationQueueFormatName into UserHeader.DestinationQueue; a
    PRIVATE= name is code 0x3, a PrivateQueueFormatNameId (the queue number) whose queue
    manager is the one QueueManagerAddress names (MS-MQMQ 2.2.19.2)."""
    dq = _queue_type(mq, scenario, "DQ")
    _assert(mq, dq == 0x3, f"UserHeader.Flags.DQ is 0x{dq:X}, not 0x3 (a private queue, "
                           f"MS-MQDMPR/3.1.1.12/R49)")
    user = _trailers(mq, scenario)["decoded"].user_message.user_header
    sent = parse_format_name(scenario["sent_to"])
    _assert(mq, user.queue_manager_address == sent.guid,
            f"UserHeader.QueueManagerAddress is {user.queue_manager_address}, not {sent.guid}, "
            f"the queue manager of {scenario['sent_to']}")
    _assert(mq, _same_name(scenario["sent_to"], user.destination_queue),
            f"UserHeader.DestinationQueue names {user.destination_queue!r}, not "
            f"{scenario['sent_to']!r} (MS-MQDMPR/3.1.7.1.32/R3)")


@given("a public queue with a message sent to the queue's PUBLIC= format name")
def a_message_sent_to_the_public_name(mq, scenario):
    """Message.DestinationQueueFormatName is the public queue's PUBLIC= format name (SUT
    control's ``destination_queue``; MS-MQMQ 2.1.3: its Identifier, which differs between the
    target and the oracle)."""
    scenario["queue"] = mq.queue([], public=True)
    _send_to_its_name(mq, scenario, *_public_names(mq, scenario), b"to a public format name")


@then("UserHeader.Flags.DQ says a public queue (0x5), and the UserHeader names the queue by "
      "the PUBLIC= format name it was sent to")
def public_destination(mq, scenario):
    """MS-MQDMPR 3.1.7.1.32 (R2, R3) writes Message.DestinationQueueType into
    UserHeader.Flags.DQ and DestinationQueueFormatName into UserHeader.DestinationQueue; a
    PUBLIC= name is code 0x5, a PublicQueueFormatName: the queue's GUID (MS-MQMQ 2.2.19.2,
    2.2.18.1.7.1)."""
    dq = _queue_type(mq, scenario, "DQ")
    _assert(mq, dq == 0x5, f"UserHeader.Flags.DQ is 0x{dq:X}, not 0x5 (a public queue, "
                           f"MS-MQDMPR/3.1.1.12/R49)")
    user = _trailers(mq, scenario)["decoded"].user_message.user_header
    _assert(mq, _same_name(scenario["sent_to"], user.destination_queue),
            f"UserHeader.DestinationQueue names {user.destination_queue!r}, not "
            f"{scenario['sent_to']!r} (MS-MQDMPR/3.1.7.1.32/R3)")


@given(parsers.parse('a queue with a message whose administration queue is "{admin}" and '
                     'response queue is "{response}"'))
def a_message_with_admin_and_response(mq, scenario, admin, response):
    """Message.AdministrationQueueFormatName and ResponseQueueFormatName (MS-MQDMPR 3.1.1.12;
    SUT control's ``admin_queue`` and ``response_queue``): names of queues elsewhere, the
    same on the target and on the oracle."""
    scenario["body"] = b"with queues to answer"
    scenario["names"] = {"AQ": admin, "RQ": response}
    scenario["queue"] = mq.queue([{"body": scenario["body"], "admin_queue": admin,
                                   "response_queue": response}])


@then(parsers.parse("UserHeader.Flags.AQ is {aq} and UserHeader.Flags.RQ is {rq}, and the "
                    "UserHeader names both queues as the message gave them"))
def admin_and_response_types(mq, scenario, aq, rq):
    """MS-MQDMPR 3.1.7.1.32 (R2, R3): AdministrationQueueType and ResponseQueueType go to
    UserHeader.Flags.AQ and RQ, the format names to UserHeader.AdminQueue and ResponseQueue;
    MS-MQMQ 2.2.19.2 gives each kind of name its code (0x5 PUBLIC=, 0x6 PRIVATE= of a queue
    manager that is neither the source nor the destination, 0x7 DIRECT=)."""
    user = _trailers(mq, scenario)["decoded"].user_message.user_header
    for field, want, carried, rule in (("AQ", aq, user.admin_queue, "MS-MQDMPR/3.1.1.12/R50"),
                                       ("RQ", rq, user.response_queue,
                                        "MS-MQDMPR/3.1.1.12/R51")):
        got = _queue_type(mq, scenario, field)
        _assert(mq, got == int(want, 16), f"UserHeader.Flags.{field} is 0x{got:X}, not {want} "
                                          f"for {scenario['names'][field]} ({rule})")
        _assert(mq, _same_name(scenario["names"][field], carried),
                f"the UserHeader names {carried!r} for {field}, not "
                f"{scenario['names'][field]!r} (MS-MQDMPR/3.1.7.1.32/R3)")


@then("UserHeader.Flags.AQ and RQ are 0x0, for a message that names no administration or "
      "response queue")
def no_admin_or_response(mq, scenario):
    """MS-MQMQ 2.2.19.2: AQ 0x0 "no administration queue", RQ 0x0 "no response queue"; a
    message whose AdministrationQueueFormatName and ResponseQueueFormatName are empty
    (MS-MQDMPR 3.1.1.12) carries them so (3.1.7.1.32 R2, R3)."""
    for field in ("AQ", "RQ"):
        got = _queue_type(mq, scenario, field)
        _assert(mq, got == 0, f"UserHeader.Flags.{field} is 0x{got:X}, not 0x0 for a message "
                              f"that names no such queue (MS-MQDMPR/3.1.7.1.32/R3)")


@then("MessagePropertiesHeader.CorrelationID is the default OBJECTID, GUID_NULL and 0, for a "
      "message that names none")
def default_correlation_id(mq, scenario):
    """MS-MQDMPR 3.1.1.12: "The default value of CorrelationIdentifier.Lineage is GUID_NULL;
    the default value of CorrelationIdentifier.Uniquifier is 0x00000000", and the server MUST
    NOT interpret or modify it (R32); the packet carries it as MessagePropertiesHeader's
    CorrelationID (MS-MQMQ 2.2.20.4: a 16-byte GUID and a 4-byte uniquifier). The suite's
    messages name none."""
    t = _trailers(mq, scenario)
    lineage, uniquifier = t["decoded"].user_message.message_properties_header.correlation_id
    _assert(mq, (lineage, uniquifier) == (uuid.UUID(int=0), 0),
            f"MessagePropertiesHeader.CorrelationID is {lineage}/{uniquifier:#010x}, not the "
            f"default {uuid.UUID(int=0)}/0x00000000 (MS-MQDMPR/3.1.1.12/R32)")


@then("the SessionHeader is present exactly when BaseHeader.Flags.SH is set")
def session_header(mq, scenario):
    t = _trailers(mq, scenario)
    sh = bool(struct.unpack_from("<H", t["data"], 2)[0] >> 4 & 1)  # BaseHeader.Flags.SH
    _assert(mq, t["session"] == sh, f"BaseHeader.Flags.SH is {int(sh)} and a SessionHeader is "
                                    f"{'present' if t['session'] else 'absent'}")
    _assert(mq, t["size"] == EXTENSION_HEADER,
            f"the ExtensionHeader (HeaderSize {EXTENSION_HEADER}) begins right after the "
            f"{'SessionHeader' if sh else 'message packet'} (HeaderSize there is {t['size']})")


@then(parsers.parse("the ExtensionHeader counts the headers that follow it, sets SQ and EA, "
                    "and DL is {dl:d}"))
def extension_header(mq, scenario, dl):
    t = _trailers(mq, scenario)
    following = len(t["data"]) - t["after"]
    _assert(mq, t["remaining"] == following,
            f"ExtensionHeader.RemainingHeadersSize {t['remaining']} is the {following} bytes of "
            f"the headers that follow it")
    _assert(mq, t["flags"] >> 1 & 1 == 1, "ExtensionHeader.Flags.SQ is 1")
    _assert(mq, t["flags"] >> 4 & 1 == 1, "ExtensionHeader.Flags.EA is 1")
    _assert(mq, t["flags"] & 1 == dl, f"ExtensionHeader.Flags.DL is {dl}")
    if dl == 0:
        # SubqueueHeader then ExtendedAddressHeader, nothing between them
        _assert(mq, following == SUBQUEUE_HEADER + EXTENDED_ADDRESS_HEADER,
                f"without DL the headers that follow are a SubqueueHeader and an "
                f"ExtendedAddressHeader ({SUBQUEUE_HEADER + EXTENDED_ADDRESS_HEADER} bytes, "
                f"not {following})")


@then("the SubqueueHeader names no subqueue and no target subqueue, and TM is clear")
def subqueue_header_empty(mq, scenario):
    t = _trailers(mq, scenario)
    word, name, target = _subqueue_header(mq, t)
    _assert(mq, word & 1 == 0, "SubqueueHeader.TM is 0")
    # MS-MQMQ 2.2.18.1.6: MQMSG_CLASS_NORMAL (0x0000), the class of a message sent by an
    # application and never acknowledged
    _assert(mq, word >> 1 & 0xFFFF == 0,
            f"SubqueueHeader.AcknowledgementClass is MQMSG_CLASS_NORMAL (0x0000) for a normal "
            f"message (it is 0x{word >> 1 & 0xFFFF:04X})")
    _assert(mq, name == bytes(NAME_FIELD), "SubqueueHeader.SubqueueName is all zero bytes for "
                                           "a message in no subqueue")
    _assert(mq, target == bytes(NAME_FIELD), "SubqueueHeader.TargetSubqueueName is all zero "
                                             "bytes for a message in no transacted move")


@then(parsers.parse('the SubqueueHeader names subqueue "{sub}", padded with zero bytes'))
def subqueue_header_named(mq, scenario, sub):
    t = _trailers(mq, scenario)
    word, name, target = _subqueue_header(mq, t)
    text, rest = _name(name)
    _assert(mq, text == sub, f'SubqueueHeader.SubqueueName is "{sub}" (it is "{text}")')
    _assert(mq, rest == bytes(len(rest)),
            "the bytes after the SubqueueName's terminating null are 0x00")
    _assert(mq, word & 1 == 0, "SubqueueHeader.TM is 0")
    _assert(mq, target == bytes(NAME_FIELD), "SubqueueHeader.TargetSubqueueName is all zero "
                                             "bytes for a message in no transacted move")


@then("SubqueueHeader.AcknowledgementClass is the class the MessagePropertiesHeader gives")
def subqueue_header_class(mq, scenario):
    """MS-MQRR 2.2.5.3: AcknowledgementClass MUST specify the message's acknowledgment class
    (MS-MQQB 2.2.18.1.6), the MessageClass its MessagePropertiesHeader carries; bits 1-16 of
    the header's second ULONG (spec/choices.yaml packet-subqueue-header-bits). The header
    counts for a message in a subqueue: one with an empty SubqueueName is ignored (R1)."""
    t = _trailers(mq, scenario)
    word, _, _ = _subqueue_header(mq, t)
    given = t["decoded"].user_message.message_properties_header.message_class
    code = CLASS_CODES.get(given, given)
    carried = word >> 1 & 0xFFFF
    _assert(mq, carried == code, f"SubqueueHeader.AcknowledgementClass is 0x{carried:04X}, not "
                                 f"0x{code:04X}, the MessageClass of the message "
                                 f"(MS-MQRR/2.2.5.3/R3)")


@then("the ExtendedAddressHeader has a known AddressType, its AddressLength and AddressScope")
def extended_address_header(mq, scenario):
    t = _trailers(mq, scenario)
    pos = len(t["data"]) - EXTENDED_ADDRESS_HEADER
    size, length, kind, scope = struct.unpack_from("<IHHI", t["data"], pos)
    _assert(mq, size == EXTENDED_ADDRESS_HEADER,
            f"ExtendedAddressHeader.HeaderSize is {EXTENDED_ADDRESS_HEADER} (it is {size})")
    _assert(mq, kind in ADDRESS_LENGTHS,
            f"ExtendedAddressHeader.AddressType 0x{kind:04X} is 0x0000, IP_ADDRESS_TYPE or "
            f"IPV6_ADDRESS_TYPE")
    if kind in ADDRESS_LENGTHS:
        _assert(mq, length == ADDRESS_LENGTHS[kind],
                f"ExtendedAddressHeader.AddressLength {length} is the length of the address "
                f"(AddressType 0x{kind:04X})")
    if kind != 0x0006:
        _assert(mq, scope == 0, f"ExtendedAddressHeader.AddressScope is 0 when the address is "
                                f"not IPv6 (it is {scope})")


@given(parsers.parse('a queue with a message whose dead-letter queue is "{path}"'))
def a_queue_with_a_dead_letter_queue(mq, scenario, path):
    scenario["body"] = b"dead-letter"
    scenario["queue"] = mq.queue([{"body": scenario["body"], "dead_letter_queue": path}])


@given("a queue with a message whose dead-letter queue is another queue that exists")
def a_queue_with_an_existing_dead_letter_queue(mq, scenario):
    dead = mq.queue()
    scenario["dead_letter_queue"] = f"{mq.suite.spec.computer_name}\\{mq.path_of(dead)}"
    a_queue_with_a_dead_letter_queue(mq, scenario, scenario["dead_letter_queue"])


@then("the DeadLetterHeader names that queue, and ExtensionHeader.Flags.DI is 0: the queue is "
      "valid")
def dead_letter_header_valid(mq, scenario):
    dead_letter_header(mq, scenario, scenario["dead_letter_queue"])
    t = _trailers(mq, scenario)
    _assert(mq, t["flags"] >> 3 & 1 == 0, "ExtensionHeader.Flags.DI is 0 for a dead-letter "
                                          "queue that exists")


@then(parsers.parse('the DeadLetterHeader holds "{path}", null-terminated and padded to 4 bytes'))
def dead_letter_header(mq, scenario, path):
    t = _trailers(mq, scenario)
    _assert(mq, t["flags"] & 1 == 1, "ExtensionHeader.Flags.DL is 1")
    pos = t["after"] + (SUBQUEUE_HEADER if t["flags"] >> 1 & 1 else 0)
    end = len(t["data"]) - (EXTENDED_ADDRESS_HEADER if t["flags"] >> 4 & 1 else 0)
    (size,) = struct.unpack_from("<I", t["data"], pos)
    _assert(mq, size == end - pos, f"DeadLetterHeader.HeaderSize {size} is the header's "
                                   f"{end - pos} bytes")
    field = t["data"][pos + 4:end]
    want = path.encode("utf-16-le") + b"\0\0"
    _assert(mq, field[:len(want)] == want,
            f'DeadLetterHeader.DeadLetterPathName is "{path}" with its terminating null '
            f'(it is {field[:len(want)].decode("utf-16-le", "replace")!r})')
    padding = field[len(want):]
    _assert(mq, padding == bytes(len(padding)) and len(padding) < 4 and len(field) % 4 == 0,
            f"DeadLetterPathName is padded with {len(padding)} zero byte(s) to a multiple of 4 "
            f"({len(field)} bytes)")


# ------------------------------------------------------------------------- SOAP headers

@then("the packet's SoapHeader holds the SOAP header and the SOAP body the message was sent with")
def soap_header_as_sent(mq, scenario):
    """Checked against the texts the scenario provisioned, not the oracle's packet: the
    server writes the SubqueueHeader's name into the trailers when it returns a message, and
    the SoapHeader lies in the trailers too (after the body, before the ExtensionHeader)."""
    header, body = scenario["soap"]
    data = _packet(mq, scenario)
    try:
        soap = decode_packet(data).extras.soap_header
    except PacketError as e:
        _assert(mq, False, f"the Message Packet is well formed ({e})")
    _assert(mq, soap is not None, "the packet of a message with a SOAP header carries a "
                                  "SoapHeader (UserHeader.Flags.HH)")
    _assert(mq, (soap.header, soap.body) == (header, body),
            f"the SoapHeader holds the header {header!r} and the body {body!r} the message was "
            f"sent with, not {soap.header!r} and {soap.body!r}: the whole packet, as it was "
            f"sent")


# ------------------------------------------------------------------------- SRMP messages

#: an SRMP message as an HTTP client sends it (MC-MQSRM 2.2.2, 4.1): the SOAP envelope, and the
#: HTTP POST that carried it with the body as its last MIME part
ENVELOPE = ('<se:Envelope xmlns:se="http://schemas.xmlsoap.org/soap/envelope/">'
            '<se:Header><srmp:path xmlns:srmp="http://schemas.xmlsoap.org/srmp/"/>'
            '</se:Header><se:Body/></se:Envelope>')


def _compound(path: str, body: bytes, last: bool = False) -> str:
    """The HTTP POST of an SRMP message with ``body`` in it, padded in its headers so that
    its size is a multiple of 4 (so the CompoundMessageHeader ends on a 4-byte boundary and
    its size has one reading, padded or not). ``last``: the body ends the HTTP body (no
    closing boundary after it), so MsgBodyOffset + MsgBodySize is HTTPBodySize."""
    head = (f"POST /msmq/{path.replace(chr(92), '/')} HTTP/1.1\r\n"
            f"Host: mqref\r\nContent-Type: multipart/related; boundary=\"MSMQ\"\r\n"
            f"X-Pad: ")
    tail = "\r\n\r\n--MSMQ\r\nContent-Type: application/octet-stream\r\n\r\n"
    end = "" if last else "\r\n--MSMQ--\r\n"
    size = len((head + tail + end).encode()) + len(body)
    return head + " " * (-size % 4) + tail + body.decode("latin-1") + end


@given(parsers.re(r"a (?P<tx>transactional )?queue with an SRMP message of (?P<n>\d+) body "
                  r"bytes(?P<last> that end its HTTP body)?$"))
def a_queue_with_an_srmp_message(mq, scenario, tx, n, last=None):
    body = bytes(0x41 + i % 26 for i in range(int(n)))
    compound = _compound("private$/q", body, last=bool(last))
    scenario["body"] = body
    scenario["srmp"] = {"envelope": ENVELOPE, "compound": compound.encode("latin-1"),
                        "body": body}
    scenario["queue"] = mq.queue([{"body": body, "soap_envelope": ENVELOPE,
                                   "compound_message": compound}], transactional=bool(tx))
    _state(scenario)["places"]["the queue"] = scenario["queue"]


def _srmp_headers(mq, scenario: dict, data: bytes) -> tuple[int, int, int]:
    """(where the SRMPEnvelopeHeader begins, where the CompoundMessageHeader begins, where it
    ends), found by their contents in the raw packet."""
    srmp = scenario["srmp"]
    wide = srmp["envelope"].encode("utf-16-le")
    at = data.find(wide)
    _assert(mq, at >= 8, "the packet holds the SOAP envelope in WCHARs (SRMPEnvelopeHeader.Data)")
    envelope = at - 8
    compound_data = data.find(srmp["compound"])
    _assert(mq, compound_data >= 16, "the packet holds the HTTP POST of the SRMP message "
                                     "(CompoundMessageHeader.Data)")
    compound = compound_data - 16
    return envelope, compound, compound_data + len(srmp["compound"])


@then("the packet is an SRMP Message: UserHeader.Flags.AH is set, and the SRMPEnvelopeHeader "
      "and CompoundMessageHeader describe the envelope, the HTTP body and the message body in it")
def srmp_message(mq, scenario):
    data = _packet(mq, scenario)
    try:
        decoded = decode_packet(data)
    except PacketError as e:
        _assert(mq, False, f"the Message Packet is well formed ({e})")
    _assert(mq, decoded.user_message.user_header.flags.ah,
            "UserHeader.Flags.AH is set for a message with SOAPEnvelope and "
            "SOAPCompoundMessage")
    srmp = scenario["srmp"]
    envelope, compound, _ = _srmp_headers(mq, scenario, data)
    (length,) = struct.unpack_from("<I", data, envelope + 4)
    chars = len(srmp["envelope"]) + 1  # the Data is WCHARs including the null terminator
    # "the length of the data in the Data field": in WCHARs or in bytes, the null counted
    _assert(mq, length in (chars, 2 * chars),
            f"SRMPEnvelopeHeader.DataLength {length} is the length of Data ({chars} WCHARs "
            f"with the null, {2 * chars} bytes)")
    _assert(mq, data[envelope + 8 + 2 * chars - 2:envelope + 8 + 2 * chars] == b"\0\0",
            "SRMPEnvelopeHeader.Data ends with its null terminator")
    http_size, body_size, body_offset = struct.unpack_from("<III", data, compound + 4)
    _assert(mq, http_size == len(srmp["compound"]),
            f"CompoundMessageHeader.HTTPBodySize {http_size} is the size of Data "
            f"({len(srmp['compound'])} bytes)")
    _assert(mq, body_size == len(srmp["body"]),
            f"CompoundMessageHeader.MsgBodySize {body_size} is the size of the message body "
            f"({len(srmp['body'])} bytes)")
    inner = data[compound + 16:compound + 16 + http_size]
    _assert(mq, inner[body_offset:body_offset + body_size] == srmp["body"],
            f"CompoundMessageHeader.MsgBodyOffset {body_offset} places the message body within "
            f"Data")
    _assert(mq, envelope < compound, "the SRMPEnvelopeHeader comes before the "
                                     "CompoundMessageHeader")


@given("the client has peeked the whole SRMP packet")
def peeked_whole_srmp(mq, scenario):
    out = _receive(mq, scenario, c.MQ_ACTION_PEEK_CURRENT)
    sections = list(out.ppPacketSections or ())
    _assert(mq, out.status == 0 and len(sections) == 1
            and sections[0].SectionBufferType == c.stFullPacket,
            "a peek with room for the whole CompoundMessageHeader returns one stFullPacket")
    scenario["whole"] = bytes(sections[0].pSectionBuffer)


@then(parsers.parse("the SRMP packet comes back in a stSrmpFirstSection with the headers and "
                    "{kept:d} bytes of the CompoundMessageHeader, and a stSrmpSecondSection "
                    "with the trailers"))
def srmp_sections(mq, scenario, kept):
    out = scenario["result"]
    _assert(mq, out.status == 0 and not out.raised, f"the receive returned a message "
                                                    f"(0x{out.status:08X})")
    whole = scenario["whole"]
    _, compound, end = _srmp_headers(mq, scenario, whole)
    sections = list(out.ppPacketSections or ())
    _assert(mq, out.pdwNumberOfSections == len(sections) == 2,
            f"two sections (pdwNumberOfSections {out.pdwNumberOfSections}, "
            f"{len(sections)} in the array)")
    first, second = sections
    _assert(mq, first.SectionBufferType == c.stSrmpFirstSection,
            f"the first SectionBufferType is stSrmpFirstSection ({first.SectionBufferType})")
    actual = end - compound  # actualMessageSize: the CompoundMessageHeader's size in bytes
    _assert(mq, first.SectionSizeAlloc == compound + actual,
            f"the first SectionSizeAlloc {first.SectionSizeAlloc} is the headers' {compound} "
            f"bytes plus the CompoundMessageHeader's {actual}")
    buffer = bytes(first.pSectionBuffer)
    _assert(mq, first.SectionSize == len(buffer) == compound + kept,
            f"the first section holds the headers and the first {kept} bytes of the "
            f"CompoundMessageHeader ({compound + kept} bytes; SectionSize {first.SectionSize}, "
            f"{len(buffer)} in the buffer)")
    _assert(mq, buffer[12:compound + kept] == whole[12:compound + kept] and
            buffer[:8] == whole[:8],
            "the first section is the packet's headers and the start of its "
            "CompoundMessageHeader (BaseHeader.PacketSize aside)")
    _assert(mq, second.SectionBufferType == c.stSrmpSecondSection,
            f"the second SectionBufferType is stSrmpSecondSection ({second.SectionBufferType})")
    _assert(mq, bytes(second.pSectionBuffer) == whole[end:]
            and second.SectionSize == second.SectionSizeAlloc == len(whole) - end,
            f"the second section is the {len(whole) - end} bytes of trailers after the "
            f"CompoundMessageHeader")


# ------------------------------------------------------------------------- host addresses

@given(parsers.re(r'a queue with a message received from host "(?P<host>[^"]+)"(?P<direct> '
                  r"sent to a direct format name)?"))
def a_queue_with_a_message_from_a_host(mq, scenario, host, direct):
    scenario["body"] = b"from afar"
    scenario["host"] = host
    spec = {"body": scenario["body"], "received_from": host}
    if direct:
        spec["direct"] = True
    scenario["queue"] = mq.queue([spec])


def _host(scenario: dict) -> tuple[int, bytes, int]:
    import ipaddress

    address, _, scope = scenario["host"].partition("%")
    ip = ipaddress.ip_address(address)
    return (0x0001 if ip.version == 4 else 0x0006), ip.packed, int(scope or 0)


@then("the ExtendedAddressHeader holds the host's address, its type, length and scope")
def extended_address_holds_host(mq, scenario):
    t = _trailers(mq, scenario)
    kind, packed, scope = _host(scenario)
    pos = len(t["data"]) - EXTENDED_ADDRESS_HEADER
    size, length, got_kind, got_scope = struct.unpack_from("<IHHI", t["data"], pos)
    address = t["data"][pos + 12:pos + 28]
    _assert(mq, got_kind == kind, f"ExtendedAddressHeader.AddressType is 0x{kind:04X} "
                                  f"(it is 0x{got_kind:04X})")
    _assert(mq, length == len(packed), f"ExtendedAddressHeader.AddressLength is "
                                       f"{len(packed)} (it is {length})")
    _assert(mq, got_scope == scope, f"ExtendedAddressHeader.AddressScope is {scope} "
                                    f"(it is {got_scope})")
    _assert(mq, address[:len(packed)] == packed,
            f"ExtendedAddressHeader.Address holds {scenario['host']} in "
            f"{'IPv4' if kind == 1 else 'IPv6'} format (it holds {address.hex()})")


@then("the UserHeader holds the host's address where a direct destination has it")
def user_header_overlay(mq, scenario):
    t = _trailers(mq, scenario)
    kind, packed, scope = _host(scenario)
    flags = t["decoded"].user_message.user_header.flags
    _assert(mq, str(getattr(flags.dq, "name", flags.dq)) == "DirectQueue",
            "UserHeader.Flags.DQ says the destination is a direct format name")
    # BaseHeader (16 bytes), then UserHeader.SourceQueueManager (16): the overlay at 32
    length, got_kind, got_scope = struct.unpack_from("<HHI", t["data"], 32)
    address = t["data"][40:48]
    _assert(mq, got_kind == kind, f"UserHeader.AddressType is 0x{kind:04X} (it is "
                                  f"0x{got_kind:04X})")
    _assert(mq, length == len(packed), f"UserHeader.AddressLength is the address's actual "
                                       f"length, {len(packed)} (it is {length})")
    _assert(mq, got_scope == scope, f"UserHeader.AddressScope is {scope} (it is {got_scope})")
    fits = packed[:8]
    _assert(mq, address[:len(fits)] == fits,
            f"UserHeader.Address holds as much of {scenario['host']} as fits in 8 bytes "
            f"({fits.hex()}; it holds {address.hex()})")


# ------------------------------------------------------------------------- TimeToReachQueue

@given(parsers.re(r"a (?P<tx>transactional )?queue with a message sent at (?P<sent>\d+) that "
                  r"may take (?P<ttrq>\d+) seconds to reach its queue"))
def a_queue_with_a_sent_message(mq, scenario, tx, sent, ttrq):
    scenario["body"] = b"on its way"
    scenario["queue"] = mq.queue([{"body": scenario["body"], "sent_time": int(sent),
                                   "time_to_reach_queue": int(ttrq)}], transactional=bool(tx))
    _state(scenario)["places"]["the queue"] = scenario["queue"]


@then(parsers.parse("the first section's BaseHeader.TimeToReachQueue is {sent:d} + {ttrq:d}, "
                    "the absolute expiry"))
def absolute_time_to_reach_queue(mq, scenario, sent, ttrq):
    out = scenario["result"]
    _assert(mq, out.status == 0 and not out.raised and out.ppPacketSections,
            f"the receive returned a message (0x{out.status:08X})")
    first = bytes(out.ppPacketSections[0].pSectionBuffer)
    # MS-MQMQ 2.2.19.1: BaseHeader.TimeToReachQueue at 12; 2.2.19.2: UserHeader (at 16) holds
    # SourceQueueManager (16), QueueManagerAddress (16), TimeToBeReceived (4), then SentTime
    (ttrq_field,) = struct.unpack_from("<I", first, 12)
    (sent_field,) = struct.unpack_from("<I", first, 16 + 16 + 16 + 4)
    _assert(mq, sent_field == sent, f"UserHeader.SentTime is {sent} (it is {sent_field})")
    want = (sent + ttrq) & 0xFFFFFFFF
    _assert(mq, ttrq_field == want,
            f"BaseHeader.TimeToReachQueue is SentTime + TimeToReachQueue = {want} (it is "
            f"{ttrq_field})")
