"""Provisioning a queue manager from a document (the mapping ``mqconform serve --queues FILE``
reads from YAML, the control API from JSON): the document's queues and messages become ADM
state through the model's own events, with no I/O, so the reference server (server/provision.py
reads the file, keeps the security section and the wall clock) and the oracle
(conformance/targets.py ModelQueueManager) build the same queue manager from the same document.

The document (every key optional but a queue's path and a message's body):

```yaml
queue_manager:
  computer_name: MQREF            # NetBIOS name of the host (default MQREF)
  identifier: 11111111-2222-4333-8444-555555555555   # QueueManager.Identifier (default:
                                  # derived from the computer name, so restarts agree)
  quota: 1073741824               # QueueManagerQuota, bytes (MS-MQDMPR 3.1.1.1)
security: ...                     # the server's (server/security.py): passed through
queues:
  - path: private$\\orders        # the computer part is the queue manager's
    label: Orders
    transactional: false
    quota: 4096                   # Queue.Quota, kilobytes (MS-MQDMPR 3.1.1.2)
    journal: true                 # Queue.Journaling: each message received from the queue
                                  # is copied to its queue journal (model/consumed.py)
    journal_quota: 4096           # Queue.JournalQuota, kilobytes: the journal's size
    subqueues: [retry, poison]
    access: ...                   # the server's access list for the queue: to on_access
    messages:                     # sent at start, in order (keys: MESSAGE_KEYS)
      - body: "hello"             # or body_hex: "68656c6c6f"
        label: greeting
        priority: 3               # 0..7
        time_to_be_received: 60   # seconds; omitted: infinite
        sent_time: 1767225600     # Message.SentTime (seconds since 1970); omitted: 0
        time_to_reach_queue: 3600 # Message.TimeToReachQueue, seconds; omitted: 4 days (a
                                  # SHOULD: the served choice, spec/choices.yaml)
        dead_letter_queue: MQREF\\private$\\dead   # Message.ApplicationDeadletterQueue
      - body: "<order/>"          # an SRMP message (MS-MQRR 2.2.5.1.2): both keys below
        soap_envelope: "<se:Envelope>...</se:Envelope>"   # Message.SOAPEnvelope
        compound_message: "POST /msmq HTTP/1.1\r\n...\r\n\r\n<order/>"  # .SOAPCompoundMessage
        soap_header: "<h/>"       # Message.SoapHeader and SoapBody (MS-MQMQ 2.2.20.7)
        soap_body: "<b/>"
      - body: "from afar"
        received_from: 192.0.2.7  # the host it came from (IPv4 or IPv6[%scope]): the
                                  # ExtendedAddressHeader, MS-MQRR 2.2.5.5
        direct: true              # sent to DIRECT=OS:<the queue>: the UserHeader then holds
                                  # the address too (MS-MQRR 2.2.5.1)
      - body: "ask"               # the format names the sender gave (PUBLIC=, PRIVATE=,
                                  # DIRECT=; MS-MQDMPR 3.1.1.12): UserHeader.Flags.DQ, AQ, RQ
        destination_queue: "PRIVATE=5f6c3a5e-8a4b-4f1b-9d2e-6d71656e6d71\\00000003"
        admin_queue: "DIRECT=OS:client\\private$\\acks"   # .AdministrationQueueFormatName
        response_queue: "PUBLIC=8e0a4c55-7d43-4f0e-9a55-32f8c1c6b2a1"  # .ResponseQueueFormatName
        positive_journaling: true # Message.PositiveJournalingRequested (UserHeader.Flags.JP)
        negative_journaling: true # .NegativeJournalingRequested (UserHeader.Flags.JN)
        connector_type: 0f3e6c2a-4b1d-4e8f-9a7c-5d2b8e1f4a6c   # .ConnectorTypeIdentifier: sent
                                  # by a connector application (UserHeader.Flags.CQ)
        acknowledgements: [AckPosArrival, AckNegReceive]   # .AcknowledgementsRequested
                                  # (MessagePropertiesHeader.Flags; or "A,B" in one text)
        extension_hex: "0102"     # .Extension: the MessagePropertiesHeader's ExtensionData
        authentication_level: Sig20   # .AuthenticationLevel: the packet has a SecurityHeader
        sender_sid_hex: "010500000000000515000000..."   # .SenderIdentifier, a SID
                                  # (SenderIdentifierType Sid): SecurityHeader.SecurityID
        signature_hex: "9f..."    # .Signature: SecurityHeader.Signature
        privacy_level: Enhanced   # .PrivacyLevel, .EncryptionAlgorithm, .HashAlgorithm by
        encryption_algorithm: AES128  # name (MessagePropertiesHeader; SecurityHeader.Flags.EB
        hash_algorithm: SHA_256   # set when PrivacyLevel is not None)
        symmetric_key_hex: "5a..."    # .SymmetricKey: SecurityHeader.EncryptionKey
        sender_certificate_hex: "3082..."  # .SenderCertificate: SecurityHeader.SenderCert
        sender_identifier_type: None_  # .SenderIdentifierType (default Sid; sender_sid_hex
                                  # sets Sid): SecurityHeader.Flags.ST
        sender_queue_manager: 5f6c...  # or: sent by this queue manager (.SenderIdentifier its
                                  # GUID, SenderIdentifierType QueueManagerIdentifier)
        authentication_provider_name: "Contoso CSP"  # .AuthenticationProviderName and
        authentication_provider_type: 24  # .AuthenticationProviderType: an alternative
                                  # provider signed it (SecurityHeader.Flags.DE clear and a
                                  # ProviderInfo)
        destination_queues: ["DIRECT=TCP:192.0.2.44\\private$\\a", "PUBLIC=8e0a4c55-..."]
                                  # .DestinationMultiQueueFormatName: the queues it was sent
                                  # to at once (a MultiQueueFormatHeader; or "A,B" in one text)
        admin_queues: ["PUBLIC=..."]  # .AdministrationMultiQueueFormatName and
        response_queues: ["DIRECT=OS:client\\private$\\r"]  # .ResponseMultiQueueFormatName
        multiple_destination_signature_hex: "5c..."  # .MultipleDestinationSignature: with
                                  # destination_queues, the MultiQueueFormatHeader's others
      - body: "in a transaction"
        transactional: true       # a transactional message: its TransactionalMessageSequence-
                                  # Identifier is set (MS-MQDMPR 3.1.1.12), so its packet has a
                                  # TransactionHeader and its LookupIdentifier's high-order byte
                                  # is 0x07 - Priority (3.1.7.1.9)
        final_ack_required: true  # .FinalAckRequired (TransactionHeader.Flags.FA) and
        connector_queue_manager: 6b0e...  # .ConnectorQueueManagerIdentifier (ConnectorQMGuid,
                                  # Flags.CG): of a transactional message only
```

Queues are created with Set Queue Defaults and Create Queue (MS-MQDMPR 3.1.7.1.33,
3.1.7.1.3), without the directory: a queue whose path has no ``private$`` is a Public queue,
whose Identifier the directory's Create Directory Object would give (3.1.7.1.3 R13-R16); here
it is a GUID derived from the queue manager's Identifier and how many public queues it has
made (so the same sequence of queues gets the same GUIDs, as private queues get the same
numbers, and no GUID is given twice), so a client finds it by its PUBLIC= format name
(MS-MQMQ 2.1.3), which the control API lists. Messages are serialized to real packets by
the packet codec (model/packet.py, Serialize Message 3.1.7.1.31) and enqueued with Enqueue
Message (3.1.7.1.9), so what a client receives is a packet a real MSMQ client can parse. Every
error names the place in the document (``queues[1].messages[0].priority``).
"""

from __future__ import annotations

import ipaddress
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mqconform.model.adm import (
    GUID_NULL,
    LocalMessage,
    Message,
    MessageAcknowledgementsRequested,
    MessageAuthenticationLevel,
    MessageDeliveryGuarantee,
    MessageSenderIdentifierType,
    Queue,
    QueueManager,
    QueueType,
    TxSequenceId,
)
from mqconform.model.choices import REFERENCE, Choices
from mqconform.model.formats import (
    FormatNameError,
    FormatNameKind,
    QueueSuffixType,
    parse_format_name,
)
from mqconform.model.higher_layer import create_system_queues
from mqconform.model.message_ops import enqueue_message
from mqconform.model.packet import (
    ENCRYPTION_CODES,
    HASH_CODES,
    PRIVACY_CODES,
    SENDER_ID_TYPE_CODES,
    HostAddress,
    PacketError,
)
from mqconform.model.queue_management import create_queue, set_queue_defaults
from mqconform.model.runtime import Environment
from mqconform.model.serialization import (
    deserialize_message_from_buffer,
    serialize_message_to_buffer,
)
from mqconform.model.status import name_of

DEFAULT_COMPUTER_NAME = "MQREF"
NAMESPACE = uuid.UUID("5f6c3a5e-8a4b-4f1b-9d2e-6d71656e6d71")


class ProvisionError(ValueError):
    """A provisioning document that cannot be applied; the message names where and why."""


@dataclass
class Provisioned:
    env: Environment
    queues: dict[str, Queue]
    #: the server's security (server/provision.py sets it): who may call, the access lists
    security: Any = None


def _check(cond: bool, where: str, why: str) -> None:
    if not cond:
        raise ProvisionError(f"{where}: {why}")


def _int(value: Any, where: str, lo: int, hi: int) -> int:
    _check(isinstance(value, int) and not isinstance(value, bool), where, "must be an integer")
    _check(lo <= value <= hi, where, f"must be between {lo} and {hi}")
    return value


def _str(value: Any, where: str, max_len: int = 260) -> str:
    _check(isinstance(value, str), where, "must be a string")
    _check(len(value) <= max_len, where, f"must be at most {max_len} characters")
    return value


def _path_name(value: Any, where: str) -> str:
    """A queue path name (MS-MQMQ 2.1.1) as a message property holds it: no null character,
    which would end it early in a DeadLetterHeader (MS-MQRR 2.2.5.4)."""
    value = _str(value, where, 124)
    _check("\0" not in value, where, "must not contain a null character")
    return value


def check_document(data: Any, source: str = "<queues>") -> dict:
    """The top level of a provisioning document: a mapping of known keys (None: empty)."""
    if data is None:
        return {}
    _check(isinstance(data, dict), source, "the document must be a mapping")
    unknown = set(data) - {"queue_manager", "queues", "security"}
    _check(not unknown, source, f"unknown key(s) {sorted(unknown)}")
    return data


def new_queue_manager(spec: dict | None) -> QueueManager:
    spec = spec or {}
    _check(isinstance(spec, dict), "queue_manager", "must be a mapping")
    unknown = set(spec) - {"computer_name", "identifier", "quota"}
    _check(not unknown, "queue_manager", f"unknown key(s) {sorted(unknown)}")
    name = _str(spec.get("computer_name", DEFAULT_COMPUTER_NAME), "queue_manager.computer_name",
                15)
    _check(bool(name) and "\\" not in name, "queue_manager.computer_name",
           "must be a non-empty NetBIOS name")
    if "identifier" in spec:
        try:
            identifier = uuid.UUID(str(spec["identifier"]))
        except ValueError:
            raise ProvisionError("queue_manager.identifier: not a GUID") from None
    else:
        identifier = uuid.uuid5(NAMESPACE, name.upper())
    quota = _int(spec.get("quota", 1 << 30), "queue_manager.quota", 1, (1 << 63) - 1)
    qm = QueueManager(computer_name=name, qualified_computer_name=name,
                      identifier=identifier, queue_manager_quota=quota)
    create_system_queues(qm)  # what MS-MQDMPR 3.1.3 Initialization creates at start
    return qm


#: the keys of a message in a provisioning document, the control API and SUT control
MESSAGE_KEYS = frozenset({"body", "body_hex", "label", "priority", "time_to_be_received",
                          "dead_letter_queue", "soap_envelope", "compound_message",
                          "soap_header", "soap_body", "received_from", "direct",
                          "sent_time", "time_to_reach_queue", "delivery", "transactional",
                          "destination_queue", "admin_queue", "response_queue",
                          "positive_journaling", "negative_journaling", "connector_type",
                          "acknowledgements", "extension_hex", "authentication_level",
                          "sender_sid_hex", "signature_hex", "destination_queues",
                          "privacy_level", "encryption_algorithm", "hash_algorithm",
                          "symmetric_key_hex", "sender_certificate_hex",
                          "authentication_provider_type", "authentication_provider_name",
                          "sender_identifier_type", "sender_queue_manager", "admin_queues",
                          "response_queues",
                          "multiple_destination_signature_hex", "final_ack_required",
                          "connector_queue_manager"})
#: the multiple-element format name keys of a message: the Message attribute each sets
_MULTI_QUEUE_KEYS = (("destination_queues", "destination_multi_queue_format_name"),
                     ("admin_queues", "administration_multi_queue_format_name"),
                     ("response_queues", "response_multi_queue_format_name"))
#: message keys naming a value of an enumeration of MS-MQDMPR 3.1.1.12 Message: key, attribute,
#: the names taken (those a packet can carry: MS-MQMQ 2.2.19.3 has no code for the others)
_MESSAGE_ENUMERATION_KEYS = (
    ("authentication_level", "authentication_level",
     dict(MessageAuthenticationLevel.__members__)),
    ("privacy_level", "privacy_level", {v.name: v for v in PRIVACY_CODES}),
    ("encryption_algorithm", "encryption_algorithm", {v.name: v for v in ENCRYPTION_CODES}),
    ("hash_algorithm", "hash_algorithm", {v.name: v for v in HASH_CODES}),
    ("sender_identifier_type", "sender_identifier_type",
     {v.name: v for v in SENDER_ID_TYPE_CODES}))

#: the format name keys of a message: the Message attribute each sets (MS-MQDMPR 3.1.1.12)
_QUEUE_NAME_KEYS = (("destination_queue", "destination_queue_format_name"),
                    ("admin_queue", "administration_queue_format_name"),
                    ("response_queue", "response_queue_format_name"))


def _host(value: Any, where: str) -> Any:
    """``received_from``: an IPv4 address, or an IPv6 address with an optional %scope
    (RFC 2553 3.3 sin6_scope_id, a number)."""
    text = _str(value, where, 64)
    address, _, scope = text.partition("%")
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        raise ProvisionError(f"{where}: {text!r} is not an IPv4 or IPv6 address") from None
    _check(not scope or (ip.version == 6 and scope.isdigit() and int(scope) <= 0xFFFFFFFF),
           where, "a %scope is a number, for an IPv6 address only")
    return HostAddress.of(ip, int(scope or 0))


#: the kinds of format name a UserHeader carries (MS-MQMQ 2.2.19.2)
_USER_HEADER_KINDS = (FormatNameKind.PUBLIC, FormatNameKind.PRIVATE, FormatNameKind.DIRECT)


def _queue_format_name(value: Any, where: str, kinds: tuple = _USER_HEADER_KINDS) -> str:
    """A queue format name a message names (``destination_queue``, ``admin_queue``,
    ``response_queue``): PUBLIC=, PRIVATE= or DIRECT= (MS-MQMQ 2.1), the kinds a UserHeader
    can carry (MS-MQMQ 2.2.19.2); an element of a multiple-element format name may also be a
    distribution list, DL= without a domain (``kinds``: MS-MQMQ 2.2.18.1.4's
    MQFFormatNameElement)."""
    text = _str(value, where, 1024)
    try:
        parsed = parse_format_name(text)
    except FormatNameError as exc:
        raise ProvisionError(f"{where}: {exc}") from None
    *first, last = (f"{k.name}=" for k in kinds)
    names = f"{', '.join(first)} or {last}"
    _check(parsed.kind in kinds and not parsed.subqueue and parsed.domain is None
           and parsed.suffix is QueueSuffixType.QUEUE_SUFFIX_TYPE_NONE, where,
           f"must be a {names} format name of a queue (no subqueue, no suffix)")
    return str(parsed)


def _hex(value: Any, where: str, max_len: int) -> bytes:
    """Octets given in hexadecimal (``body_hex``, ``extension_hex``, ...)."""
    try:
        return bytes.fromhex(_str(value, where, max_len))
    except ValueError:
        raise ProvisionError(f"{where}: not hexadecimal") from None


def _guid(value: Any, where: str) -> uuid.UUID:
    """A GUID in its text form (``connector_type``, ``connector_queue_manager``,
    ``sender_queue_manager``)."""
    try:
        return uuid.UUID(_str(value, where, 38))
    except ValueError:
        raise ProvisionError(f"{where}: not a GUID") from None


def _acknowledgements(value: Any, where: str) -> list[MessageAcknowledgementsRequested]:
    """Message.AcknowledgementsRequested (MS-MQDMPR 3.1.1.12): a list of the enumeration's
    names, or one text of them separated by commas (a command template's placeholder)."""
    names = value.split(",") if isinstance(value, str) else value
    _check(isinstance(names, list) and all(isinstance(n, str) for n in names), where,
           "must be a list of MessageAcknowledgementsRequested names")
    known = dict(MessageAcknowledgementsRequested.__members__)  # aliases too
    out = []
    for name in (n.strip() for n in names):
        _check(name in known, where, f"{name!r} is not one of {sorted(known)}")
        out.append(known[name])
    return out


def make_message(spec: dict, where: str, destination: str = "",
                 choices: Choices = REFERENCE) -> LocalMessage:
    """A message as a client would receive it: the ADM Message serialized to a UserMessage
    packet by the wire codec and read back, so it carries its packet, Type and Offset.
    ``destination``: the path name of the queue it is sent to (for ``direct``); ``choices``:
    the queue manager's (model/choices.py; the TimeToReachQueue of a message that names
    none)."""
    _check(isinstance(spec, dict), where, "must be a mapping")
    unknown = set(spec) - MESSAGE_KEYS
    _check(not unknown, where, f"unknown key(s) {sorted(unknown)}")
    _check(("body" in spec) != ("body_hex" in spec), where, "give exactly one of body, body_hex")
    if "body" in spec:
        body = _str(spec["body"], f"{where}.body", 4 << 20).encode("utf-8")
    else:
        body = _hex(spec["body_hex"], f"{where}.body_hex", 8 << 20)
    message = Message(body=body,
                      label=_str(spec.get("label", ""), f"{where}.label", 249),
                      priority=_int(spec.get("priority", 3), f"{where}.priority", 0, 7),
                      time_to_be_received=_int(spec.get("time_to_be_received", 0xFFFFFFFF),
                                               f"{where}.time_to_be_received", 0, 0xFFFFFFFF),
                      application_deadletter_queue=_path_name(
                          spec.get("dead_letter_queue", ""), f"{where}.dead_letter_queue"),
                      soap_envelope=_str(spec.get("soap_envelope", ""),
                                         f"{where}.soap_envelope", 1 << 20),
                      soap_compound_message=_str(spec.get("compound_message", ""),
                                                 f"{where}.compound_message", 4 << 20),
                      soap_header=_str(spec.get("soap_header", ""), f"{where}.soap_header",
                                       1 << 20),
                      soap_body=_str(spec.get("soap_body", ""), f"{where}.soap_body", 1 << 20))
    if "delivery" in spec:  # Message.DeliveryGuarantee (MS-MQDMPR/3.1.1.12/R16)
        _check(spec["delivery"] in ("express", "recoverable"), f"{where}.delivery",
               "express or recoverable")
        message.delivery_guarantee = MessageDeliveryGuarantee[spec["delivery"].capitalize()]
    for key, attribute in (("positive_journaling", "positive_journaling_requested"),
                           ("negative_journaling", "negative_journaling_requested")):
        # Message.PositiveJournalingRequested, .NegativeJournalingRequested (MS-MQDMPR
        # 3.1.1.12): the source journaling the sender asked for (UserHeader.Flags.JP, JN)
        value = spec.get(key, False)
        _check(isinstance(value, bool), f"{where}.{key}", "must be true/false")
        setattr(message, attribute, value)
    if "extension_hex" in spec:  # Message.Extension (MS-MQDMPR 3.1.1.12): a second payload
        message.extension = _hex(spec["extension_hex"], f"{where}.extension_hex", 2 << 20)
    for key, attribute, names in _MESSAGE_ENUMERATION_KEYS:
        # Message.AuthenticationLevel (not None: a SecurityHeader, MS-MQDMPR 3.1.7.1.30 R7),
        # .PrivacyLevel, .EncryptionAlgorithm, .HashAlgorithm (MessagePropertiesHeader),
        # .SenderIdentifierType (SecurityHeader.Flags.ST)
        if key in spec:
            _check(spec[key] in names, f"{where}.{key}", f"one of {sorted(names)}")
            setattr(message, attribute, names[spec[key]])
    for key, attribute in (("sender_sid_hex", "sender_identifier"), ("signature_hex", "signature"),
                           ("symmetric_key_hex", "symmetric_key"),
                           ("sender_certificate_hex", "sender_certificate")):
        if key in spec:  # Message.SenderIdentifier (a SID, SenderIdentifierType Sid), .Signature,
            # .SymmetricKey, .SenderCertificate: the SecurityHeader's items (MS-MQMQ 2.2.20.6)
            setattr(message, attribute, _hex(spec[key], f"{where}.{key}", 64 << 10))
    if "authentication_provider_name" in spec:
        # Message.AuthenticationProviderName, .AuthenticationProviderType: a signature made
        # with an alternative provider (SecurityHeader.Flags.DE clear and a ProviderInfo)
        message.authentication_provider_name = _str(
            spec["authentication_provider_name"], f"{where}.authentication_provider_name")
        _check(bool(message.authentication_provider_name),
               f"{where}.authentication_provider_name", "must not be empty")
        message.authentication_provider_type = _int(
            spec.get("authentication_provider_type", 0), f"{where}.authentication_provider_type",
            0, 0xFFFFFFFF)
    else:
        _check("authentication_provider_type" not in spec, f"{where}.authentication_provider_type",
               "goes with authentication_provider_name")
    if "sender_sid_hex" in spec:
        _check(spec.get("sender_identifier_type", "Sid") == "Sid",
               f"{where}.sender_identifier_type", "a sender_sid_hex is a Sid")
        message.sender_identifier_type = MessageSenderIdentifierType.Sid
    if "sender_queue_manager" in spec:
        # a message its queue manager sent (SenderIdentifierType QueueManagerIdentifier): the
        # SecurityID is that queue manager's GUID (MS-MQMQ 2.2.20.6 ST 0x2)
        _check("sender_sid_hex" not in spec and spec.get(
            "sender_identifier_type", "QueueManagerIdentifier") == "QueueManagerIdentifier",
            f"{where}.sender_queue_manager", "names the sender by its queue manager: no "
            "sender_sid_hex, no other sender_identifier_type")
        message.sender_identifier = _guid(spec["sender_queue_manager"],
                                          f"{where}.sender_queue_manager").bytes_le
        message.sender_identifier_type = MessageSenderIdentifierType.QueueManagerIdentifier
    if "acknowledgements" in spec:
        message.acknowledgements_requested = _acknowledgements(
            spec["acknowledgements"], f"{where}.acknowledgements")
    if "connector_type" in spec:
        # Message.ConnectorTypeIdentifier (MS-MQDMPR 3.1.1.12): sent by a connector
        # application; UserHeader.Flags.CQ and .ConnectorType
        message.connector_type_identifier = _guid(spec["connector_type"],
                                                  f"{where}.connector_type")
    if "sent_time" in spec:  # Message.SentTime: seconds since 1970 (UserHeader.SentTime)
        message.sent_time = _int(spec["sent_time"], f"{where}.sent_time", 0, 0xFFFFFFFF)
    # Message.TimeToReachQueue, seconds; MS-MQDMPR/3.1.1.12/R45 (a SHOULD) when omitted
    message.time_to_reach_queue = _int(
        spec.get("time_to_reach_queue", choices.default_time_to_reach_queue),
        f"{where}.time_to_reach_queue", 0, 0xFFFFFFFF)
    _check(bool(message.soap_envelope) == bool(message.soap_compound_message), where,
           "an SRMP message needs both soap_envelope and compound_message")
    transactional = spec.get("transactional", False)
    _check(isinstance(transactional, bool), f"{where}.transactional", "must be true/false")
    if transactional:
        _check(message.priority == 3, f"{where}.priority", "a transactional message's priority "
               "does not travel in its packet (PR 0: MS-MQDMPR 3.1.7.1.32): give none, or 3")
        # a transactional message (MS-MQDMPR 3.1.1.12): sent in a transaction of its own (its
        # TransactionIdentifier, so Construct a UserMessage Packet adds a TransactionHeader:
        # 3.1.7.1.30), the first and last message of it, with the TxSequenceId the transfer
        # gives the first message of a sequence; all a function of the spec, so that the same
        # message serializes alike on the target and on the oracle
        message.transaction_identifier = uuid.uuid5(_TRANSACTIONS, repr(sorted(spec.items())))
        message.first_in_transaction = message.last_in_transaction = True
        message.transactional_message_sequence_identifier = TxSequenceId(
            ordinal=1, time_stamp=message.sent_time)
    # Message.FinalAckRequired, .ConnectorQueueManagerIdentifier (MS-MQDMPR 3.1.1.12): the
    # TransactionHeader's Flags.FA and ConnectorQMGuid (Flags.CG): a transactional message's
    final_ack = spec.get("final_ack_required", False)
    _check(isinstance(final_ack, bool), f"{where}.final_ack_required", "must be true/false")
    for key, given in (("final_ack_required", final_ack),
                       ("connector_queue_manager", "connector_queue_manager" in spec)):
        _check(transactional or not given, f"{where}.{key}", "goes with transactional: true")
    message.final_ack_required = final_ack
    if "connector_queue_manager" in spec:
        message.connector_queue_manager_identifier = _guid(
            spec["connector_queue_manager"], f"{where}.connector_queue_manager")
    direct = spec.get("direct", False)
    _check(isinstance(direct, bool), f"{where}.direct", "must be true/false")
    if direct:
        _check(bool(destination), f"{where}.direct", "needs the queue the message is sent to")
        message.destination_queue_format_name = f"DIRECT=OS:{destination}"
    for key, attribute in _QUEUE_NAME_KEYS:
        if key in spec:
            setattr(message, attribute, _queue_format_name(spec[key], f"{where}.{key}"))
    for key, attribute in _MULTI_QUEUE_KEYS:
        # Message.DestinationMultiQueueFormatName (MS-MQDMPR 3.1.1.12): every queue the message
        # was sent to at once (a multiple-element format name's elements, MS-MQMQ 2.1.7), and
        # the administration and response queues given so; a list, or one text separated by
        # commas. They travel in a MultiQueueFormatHeader, which a destination list makes.
        if key not in spec:
            continue
        _check(key == "destination_queues" or "destination_queues" in spec, f"{where}.{key}",
               "goes with destination_queues")
        names = spec[key]
        names = names.split(",") if isinstance(names, str) else names
        _check(isinstance(names, list) and names, f"{where}.{key}",
               "must be a list of format names")
        setattr(message, attribute, [
            _queue_format_name(n.strip() if isinstance(n, str) else n, f"{where}.{key}[{i}]",
                               (*_USER_HEADER_KINDS, FormatNameKind.DL))
            for i, n in enumerate(names)])
    if "multiple_destination_signature_hex" in spec:
        # Message.MultipleDestinationSignature: MultiQueueFormatHeader.Signature
        _check("destination_queues" in spec, f"{where}.multiple_destination_signature_hex",
               "goes with destination_queues")
        message.multiple_destination_signature = _hex(
            spec["multiple_destination_signature_hex"],
            f"{where}.multiple_destination_signature_hex", 64 << 10)
    if "destination_queue" in spec:
        _check(not direct, where, "give direct or destination_queue, not both")
        parsed = parse_format_name(message.destination_queue_format_name)
        if parsed.kind is FormatNameKind.PRIVATE:
            # the packet names a private destination by its number on the queue manager the
            # UserHeader's QueueManagerAddress names (MS-MQMQ 2.2.19.2, DQ 0x3)
            message.destination_queue_manager_identifier = parsed.guid
    received_from = (_host(spec["received_from"], f"{where}.received_from")
                     if "received_from" in spec else None)
    # the message is a function of the spec, the destination and its TimeToReachQueue: the same
    # arrival (a test's, a stateful machine's, on the target and on the oracle) serializes once
    try:
        key = (tuple(sorted(spec.items())), destination, message.time_to_reach_queue)
        packet = _PACKETS.get(key)
    except TypeError:  # an unhashable value in the spec: not remembered
        key, packet = None, None
    if packet is None:
        try:
            packet = serialize_message_to_buffer(message, received_from=received_from)
        except PacketError as exc:
            raise ProvisionError(f"{where}: {exc}") from None
        if key is not None and len(packet) <= _PACKET_CACHE_MAX_SIZE:
            if len(_PACKETS) >= _PACKET_CACHE_ENTRIES:
                _PACKETS.clear()  # (servers' threads send too: no eviction order to keep)
            _PACKETS[key] = packet
    return deserialize_message_from_buffer(packet)


def public_queue_identifier(qm: QueueManager) -> uuid.UUID:
    """The Identifier of the next Public queue ``qm`` makes without the directory (the module
    doc): derived from the queue manager's Identifier and the queue's ordinal among the public
    queues it has made, never the same twice in one queue manager's life. Not from the path
    name: a suite's queue names carry a token of the run, and two runs are to give the same
    results."""
    made = getattr(qm, "_public_queues_made", 0) + 1
    qm._public_queues_made = made  # (not an ADM attribute: the directory's bookkeeping)
    return uuid.uuid5(qm.identifier, f"public queue {made}")


#: the namespace of the TransactionIdentifier of a provisioned transactional message
_TRANSACTIONS = uuid.UUID("6d716330-7478-4000-8000-000000000000")
#: make_message's packets, by spec: at most this many, of at most this size each
_PACKETS: dict[tuple, bytes] = {}
_PACKET_CACHE_ENTRIES = 512
_PACKET_CACHE_MAX_SIZE = 1 << 16


def _pathname(path: str, computer_name: str, where: str) -> str:
    """A queue path name (MS-MQMQ 2.1.1): ``[computer\\]queue`` or
    ``[computer\\]private$\\queue``; the computer, if given, must be this queue manager."""
    parts = path.split("\\")
    _check(all(parts), where, "has an empty part")
    if len(parts) == 1 or parts[0].lower() == "private$":
        return f"{computer_name}\\{path}"
    _check(parts[0].lower() in (computer_name.lower(), "."), where,
           f"names computer {parts[0]!r}, not this queue manager ({computer_name})")
    return "\\".join([computer_name, *parts[1:]])


def _status_name(status: Any) -> str:
    return name_of(status) if isinstance(status, int) else str(getattr(status, "name", status))


#: what a queue's ``access`` entry becomes: the caller's (the server's access lists)
AccessHook = Callable[[Queue, Any, str], None]


def provision(document: Mapping, env: Environment | None = None, now_ms: int = 0,
              arrival_time: Callable[[], int] = lambda: 0,
              on_access: AccessHook | None = None) -> Provisioned:
    """Build (or, given ``env``, extend) a queue manager from a provisioning document (already
    parsed: a mapping). ``arrival_time``: Message.ArrivalTime for each message enqueued (the
    caller's clock: seconds since 1970, MS-MQRR/3.1.4.7/R16); ``on_access(queue, entry,
    where)``: a queue's ``access`` entry (refused when None)."""
    data = check_document(document)
    if env is None:
        env = Environment(new_queue_manager(data.get("queue_manager")), now=now_ms)
    qm = env.local_queue_manager
    queues_spec = data.get("queues") or []
    _check(isinstance(queues_spec, list), "queues", "must be a list")
    created: dict[str, Queue] = {}
    for i, spec in enumerate(queues_spec):
        where = f"queues[{i}]"
        _check(isinstance(spec, dict), where, "must be a mapping")
        unknown = set(spec) - {"path", "label", "transactional", "quota", "journal",
                               "journal_quota", "subqueues", "messages", "access"}
        _check(not unknown, where, f"unknown key(s) {sorted(unknown)}")
        _check("access" not in spec or on_access is not None, f"{where}.access",
               "access lists are the server's: not taken here")
        path = _str(spec.get("path"), f"{where}.path", 124)
        pathname = _pathname(path, qm.computer_name, f"{where}.path")
        _check(pathname.lower() not in created, f"{where}.path", "names a queue twice")
        queue = Queue(pathname=pathname)
        set_queue_defaults(env, queue)
        queue.label = _str(spec.get("label", ""), f"{where}.label", 124)
        transactional = spec.get("transactional", False)
        _check(isinstance(transactional, bool), f"{where}.transactional", "must be true/false")
        queue.transactional = transactional
        journal = spec.get("journal", False)
        _check(isinstance(journal, bool), f"{where}.journal", "must be true/false")
        queue.journaling = journal  # copied by Create Queue (MS-MQDMPR/3.1.7.1.3/R10)
        if "quota" in spec:
            queue.quota = _int(spec["quota"], f"{where}.quota", 1, 0xFFFFFFFF)
        if "journal_quota" in spec:
            queue.journal_quota = _int(spec["journal_quota"], f"{where}.journal_quota", 1,
                                       0xFFFFFFFF)
        result = create_queue(env, queue, skip_directory=True)
        _check(result.status == 0 and result.queue is not None, f"{where}.path",
               f"Create Queue refused it ({_status_name(result.status)})")
        new_queue = result.queue
        if new_queue.queue_type is QueueType.Public and new_queue.identifier == GUID_NULL:
            new_queue.identifier = public_queue_identifier(qm)
        created[pathname.lower()] = new_queue
        if "access" in spec:
            on_access(new_queue, spec["access"], f"{where}.access")
        for j, name in enumerate(spec.get("subqueues") or []):
            sub_where = f"{where}.subqueues[{j}]"
            _check(isinstance(name, str) and name and ";" not in name and len(name) <= 32,
                   sub_where, "must be a subqueue name (1-32 characters, no ';')")
            sub = Queue(pathname=f"{new_queue.pathname};{name}", queue_type=new_queue.queue_type,
                        queue_manager=qm, transactional=new_queue.transactional,
                        private_queue_number=new_queue.private_queue_number,
                        quota=new_queue.quota)
            new_queue.subqueue_collection.append(sub)
        for j, message_spec in enumerate(spec.get("messages") or []):
            m_where = f"{where}.messages[{j}]"
            message = make_message(message_spec, m_where, new_queue.pathname, env.choices)
            message.arrival_time = arrival_time()
            status = enqueue_message(env, new_queue, message)
            _check(status == 0, m_where, f"Enqueue Message refused it (rStatus {status})")
    return Provisioned(env, created)


def create_queue_from_spec(env: Environment, spec: Mapping,
                           on_access: AccessHook | None = None) -> Queue:
    """A queue from a control API spec (``POST /queues``: a queues[] entry and ``queue_type``
    Private or Connector)."""
    spec = dict(spec)
    queue_type = spec.pop("queue_type", None)
    if queue_type not in (None, "Private", "Connector"):
        raise ProvisionError("queue_type: Private or Connector")
    made = provision({"queues": [spec]}, env=env, on_access=on_access)
    [queue] = made.queues.values()
    if queue_type == "Connector":
        queue.queue_type = QueueType.Connector
        queue.private_queue_number = None
    return queue
