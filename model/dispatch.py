"""MS-MQDMPR events on the sending side of the queue manager: Enqueue Message To An Open Queue
(3.1.7.1.27), the dispatch collection (Add Message To Dispatch Collection 3.1.7.1.28, Remove
Message From Dispatch Collection 3.1.7.1.29, Remove Messages From Dispatch Collection By Queue
3.1.7.1.34, Dispatch Send Message 3.1.7.3.9) and Construct a UserMessage Packet (3.1.7.1.30).

How they fit: an application's message goes into a queue through an open descriptor (3.1.7.1.27;
a multiple-element descriptor fans out, one copy per element). A message in an outgoing queue is
offered for transfer by adding it to ``LocalQueueManager.DispatchCollection`` (3.1.7.1.28);
every change to that collection raises Dispatch Send Message (3.1.7.3.9), which hands the
highest-priority entry to a message transfer protocol when none is being sent. The protocol
removes the entry once the transfer is over (3.1.7.1.29), which lets the next one go.

The hand-off is the model's edge: Dispatch Send Message raises MS-MQQB's or MC-MQSRM's Send User
Message Wrapper event, which belongs to those protocols. The model records each one as a
:class:`SendUserMessageWrapper` appended to the list ``env.dispatched`` on the Environment (made
on first use; read it with :func:`dispatched`) and does no I/O.

Construct a UserMessage Packet decides which headers of MS-MQMQ 2.2.20 a packet carries and what
they hold; it returns a structured :class:`UserMessagePacket`, not bytes. Byte layouts, sizes
(PacketSize, LabelLength, MessageSize, ...) and the numeric codes of enumerated fields belong to
the wire layer (and to Serialize Message to Buffer, 3.1.7.1.32, whose tables give the codes):
here a field holds the Message attribute's value as the ADM holds it (a MessageClass, a
MessageDeliveryGuarantee, ...). Which attribute fills which field is the pairing of 3.1.7.1.32's
table. Header and field names are MS-MQMQ's (facts only; each class names its section).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from mqconform.model.adm import (
    GUID,
    GUID_NULL,
    OBJECTID,
    DispatchEntry,
    MessageAcknowledgementsRequested,
    MessageAdministrationQueueType,
    MessageAuthenticationLevel,
    MessageClass,
    MessageDeliveryGuarantee,
    MessageDestinationQueueType,
    MessageEncryptionAlgorithm,
    MessageHashAlgorithm,
    MessagePositionState,
    MessagePrivacyLevel,
    MessageResponseQueueType,
    MessageSenderIdentifierType,
    TxSequenceId,
)
from mqconform.model.message_ops import enqueue_message
from mqconform.model.runtime import Environment
from mqconform.model.status import MQ_ERROR_QUEUE_NOT_AVAILABLE, MQ_OK

# ---------------------------------------------------------------------------------------------
# 3.1.7.1.27 Enqueue Message To An Open Queue
# ---------------------------------------------------------------------------------------------


def _copy_message(message: Any) -> Any:
    """MessageCopy: a Message with iMessage's attribute values, its own lists, and in no queue
    yet (Enqueue Message gives it its MessagePosition)."""
    message_copy = copy.copy(message)
    for name, value in vars(message).items():
        if isinstance(value, list):
            setattr(message_copy, name, list(value))
    message_copy.message_position_reference = None
    return message_copy


def enqueue_message_to_an_open_queue(env: Environment, open_queue_descriptor: Any, message: Any,
                                     transaction: Any = None) -> int:
    """MS-MQDMPR 3.1.7.1.27 Enqueue Message To An Open Queue (MS-MQDMPR/3.1.7.1.27/R1
    MS-MQDMPR/3.1.7.1.27/R2). Returns rStatus: 0 no error, 1 queue quota, 2 queue manager
    quota, 3 timed out in transit (Enqueue Message's values), or MQ_ERROR_QUEUE_NOT_AVAILABLE
    for a descriptor whose queue is gone (see below)."""
    if not open_queue_descriptor.multiple:  # MS-MQDMPR/3.1.7.1.27/R3
        queue = open_queue_descriptor.queue_reference
        if queue is None:
            # The document lists no status for a descriptor that no longer references a queue
            # (Delete Queue, 3.1.7.1.4, leaves descriptors without one); the model answers as
            # every other event on such a descriptor does, instead of failing.
            return MQ_ERROR_QUEUE_NOT_AVAILABLE
        status = enqueue_message(env,  # MS-MQDMPR/3.1.7.1.27/R4
                                 queue,  # MS-MQDMPR/3.1.7.1.27/R5
                                 message,  # MS-MQDMPR/3.1.7.1.27/R6
                                 transaction)  # MS-MQDMPR/3.1.7.1.27/R7
        return status  # MS-MQDMPR/3.1.7.1.27/R8 MS-MQDMPR/3.1.7.1.27/R9
    # DestinationMultiQueueFormatName is a collection of queue names (3.1.1.12); FormatName is a
    # multiple-element format name, whose elements are separated by commas (MS-MQMQ 2.1.7).
    # A list or DL name of one element gives a collection of one.
    message.destination_multi_queue_format_name = (  # MS-MQDMPR/3.1.7.1.27/R10
        open_queue_descriptor.format_name.split(","))
    for single_open_queue in list(  # MS-MQDMPR/3.1.7.1.27/R11
            open_queue_descriptor.open_queue_descriptor_collection):
        message_copy = _copy_message(message)  # MS-MQDMPR/3.1.7.1.27/R12
        # "DestinationFormatName": the Message attribute is DestinationQueueFormatName (3.1.1.12)
        message_copy.destination_queue_format_name = (  # MS-MQDMPR/3.1.7.1.27/R13
            single_open_queue.format_name)
        # "iQueue := SingleOpenQueue": SingleOpenQueue is an OpenQueueDescriptor and iQueue a
        # Queue (3.1.7.1.9), so the queue is the one SingleOpenQueue references
        queue = single_open_queue.queue_reference
        if queue is None:
            return MQ_ERROR_QUEUE_NOT_AVAILABLE  # as in the single case above
        status = enqueue_message(env,  # MS-MQDMPR/3.1.7.1.27/R14
                                 queue,  # MS-MQDMPR/3.1.7.1.27/R15
                                 message_copy,  # MS-MQDMPR/3.1.7.1.27/R16
                                 transaction)  # MS-MQDMPR/3.1.7.1.27/R17
        if status != MQ_OK:  # MS-MQDMPR/3.1.7.1.27/R18
            return status
    return MQ_OK  # MS-MQDMPR/3.1.7.1.27/R19


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.28, 3.1.7.1.29, 3.1.7.1.34: the dispatch collection
# ---------------------------------------------------------------------------------------------


def add_message_to_dispatch_collection(env: Environment, data: Any, position: Any) -> None:
    """MS-MQDMPR 3.1.7.1.28 Add Message To Dispatch Collection (MS-MQDMPR/3.1.7.1.28/R1
    MS-MQDMPR/3.1.7.1.28/R2). ``data`` is the protocol-specific data (NULL: ``None``)."""
    new_dispatch_entry = DispatchEntry(  # MS-MQDMPR/3.1.7.1.28/R3
        message_position_reference=position,  # MS-MQDMPR/3.1.7.1.28/R4
        protocol_data=data,  # MS-MQDMPR/3.1.7.1.28/R5
        priority=(position.queue_reference.base_priority  # MS-MQDMPR/3.1.7.1.28/R6
                  + position.message_reference.priority),
        send_in_progress=False)  # MS-MQDMPR/3.1.7.1.28/R7
    # the model runs one event at a time: every change is atomic
    env.local_queue_manager.dispatch_collection.append(  # MS-MQDMPR/3.1.7.1.28/R8
        new_dispatch_entry)
    dispatch_send_message(env)  # MS-MQDMPR/3.1.7.1.28/R9


def remove_message_from_dispatch_collection(env: Environment, position: Any) -> None:
    """MS-MQDMPR 3.1.7.1.29 Remove Message From Dispatch Collection (MS-MQDMPR/3.1.7.1.29/R1
    MS-MQDMPR/3.1.7.1.29/R2)."""
    collection = env.local_queue_manager.dispatch_collection
    for entry in collection:  # MS-MQDMPR/3.1.7.1.29/R3
        if entry.message_position_reference is position:
            collection.remove(entry)
            break
    dispatch_send_message(env)  # MS-MQDMPR/3.1.7.1.29/R4


def remove_messages_from_dispatch_collection_by_queue(env: Environment,
                                                      outgoing_queue: Any) -> None:
    """MS-MQDMPR 3.1.7.1.34 Remove Messages From Dispatch Collection By Queue
    (MS-MQDMPR/3.1.7.1.34/R1 MS-MQDMPR/3.1.7.1.34/R2). "MessagePositionReference.Queue" is the
    position's QueueReference (3.1.1.11). The section raises no Dispatch Send Message."""
    qm = env.local_queue_manager
    qm.dispatch_collection[:] = [  # MS-MQDMPR/3.1.7.1.34/R3
        entry for entry in qm.dispatch_collection
        if entry.message_position_reference.queue_reference is not outgoing_queue]


# ---------------------------------------------------------------------------------------------
# 3.1.7.3.9 Dispatch Send Message
# ---------------------------------------------------------------------------------------------

#: the two Send User Message Wrapper events that Dispatch Send Message can raise
MS_MQQB = "MS-MQQB 3.1.7.16"
MC_MQSRM = "MC-MQSRM 3.1.7.8"


@dataclass(frozen=True)
class SendUserMessageWrapper:
    """A Send User Message Wrapper event raised for a protocol (``MS_MQQB`` or ``MC_MQSRM``):
    the record of one hand-off, with the event's arguments iPosition and iMessagePosition."""

    protocol: str
    position: Any  # iPosition: the entry's ProtocolData, or NULL (None) for MC-MQSRM
    message_position: Any  # iMessagePosition: the MessagePosition to send
    entry: DispatchEntry | None = field(repr=False, compare=False, default=None)


def dispatched(env: Environment) -> list[SendUserMessageWrapper]:
    """The Send User Message Wrapper events raised in ``env`` so far, oldest first."""
    return vars(env).setdefault("dispatched", [])


def dispatch_send_message(env: Environment) -> SendUserMessageWrapper | None:
    """MS-MQDMPR 3.1.7.3.9 Dispatch Send Message (MS-MQDMPR/3.1.7.3.9/R1
    MS-MQDMPR/3.1.7.3.9/R2: one atomic step, as every model event is). Returns the hand-off it
    made (also appended to ``env.dispatched``), or None when it made none."""
    collection = env.local_queue_manager.dispatch_collection
    if any(entry.send_in_progress for entry in collection):  # MS-MQDMPR/3.1.7.3.9/R3
        return None
    # "the Queue.Active ADM attribute of the MessagePosition": a MessagePosition has no Active;
    # it is the Active of the queue the position is in (its QueueReference). Ties between equal
    # priorities, on which the document is silent, go to the entry added first; with no entry
    # eligible there is nothing to send.
    candidates = [  # MS-MQDMPR/3.1.7.3.9/R4
        entry for entry in collection
        if entry.message_position_reference.queue_reference is not None
        and entry.message_position_reference.queue_reference.active
        and entry.message_position_reference.state is not MessagePositionState.Deleted]
    if not candidates:
        return None
    next_entry_to_be_dispatched = max(candidates, key=lambda entry: entry.priority)
    next_entry_to_be_dispatched.send_in_progress = True  # MS-MQDMPR/3.1.7.3.9/R5
    if next_entry_to_be_dispatched.protocol_data is not None:  # MS-MQDMPR/3.1.7.3.9/R6
        hand_off = SendUserMessageWrapper(
            MS_MQQB,
            position=next_entry_to_be_dispatched.protocol_data,  # MS-MQDMPR/3.1.7.3.9/R7
            message_position=(  # MS-MQDMPR/3.1.7.3.9/R8
                next_entry_to_be_dispatched.message_position_reference),
            entry=next_entry_to_be_dispatched)
    else:  # MS-MQDMPR/3.1.7.3.9/R9
        hand_off = SendUserMessageWrapper(
            MC_MQSRM,
            position=None,  # MS-MQDMPR/3.1.7.3.9/R10
            message_position=(  # MS-MQDMPR/3.1.7.3.9/R11
                next_entry_to_be_dispatched.message_position_reference),
            entry=next_entry_to_be_dispatched)
    dispatched(env).append(hand_off)
    return hand_off


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.30 Construct a UserMessage Packet: the headers (MS-MQMQ 2.2.19, 2.2.20)
# ---------------------------------------------------------------------------------------------

#: MS-MQMQ 2.2.19.1: BaseHeader.VersionNumber and BaseHeader.Signature are fixed values
BASE_HEADER_VERSION_NUMBER = 0x10
BASE_HEADER_SIGNATURE = 0x524F494C
#: MS-MQMQ 2.2.19.1 / 2.2.19.2: TimeToReachQueue and TimeToBeReceived, 0xFFFFFFFF is infinite
INFINITE_TIME = 0xFFFFFFFF


@dataclass(frozen=True)
class BaseHeaderFlags:
    """MS-MQMQ 2.2.19.1 BaseHeader.Flags (16 bits; the reserved X bits are never set)."""

    pr: int = 0x3  # PR, 3 bits: priority 0-7 (default 3); 0 in a transactional packet
    in_: bool = False  # IN: internal packet (connection, session ack); never a UserMessage
    sh: bool = False  # SH: a SessionHeader is present
    dh: bool = False  # DH: a DebugHeader is present (if and only if)
    tr: bool = False  # TR: message tracing is enabled; DH must then be set as well


@dataclass(frozen=True)
class BaseHeader:
    """MS-MQMQ 2.2.19.1 BaseHeader (16 bytes). Its PacketSize is the encoded packet's size,
    which only the wire layer knows (MS-MQDMPR 3.1.7.1.32 sets it after serializing)."""

    version_number: int = BASE_HEADER_VERSION_NUMBER  # 1 byte, MUST be 0x10
    flags: BaseHeaderFlags = BaseHeaderFlags()  # 2 bytes
    signature: int = BASE_HEADER_SIGNATURE  # 4 bytes, MUST be 0x524F494C
    time_to_reach_queue: int = INFINITE_TIME  # 4 bytes, seconds


@dataclass(frozen=True)
class UserHeaderFlags:
    """MS-MQMQ 2.2.19.2 UserHeader.Flags (32 bits). DM, DQ, AQ and RQ hold the Message
    attribute they come from; the wire layer encodes them (DM 0x0 Express / 0x1 Recoverable;
    DQ 0x0/0x3/0x5/0x7, AQ and RQ 0x0-0x7: MS-MQMQ 2.2.19.2, MS-MQDMPR 3.1.7.1.32)."""

    rc: int = 0  # RC, 5 bits: routing servers that processed the packet (0x00-0x1D)
    dm: MessageDeliveryGuarantee = MessageDeliveryGuarantee.Express  # DM, 2 bits
    jn: bool = False  # JN: negative source journaling
    jp: bool = False  # JP: positive source journaling
    dq: MessageDestinationQueueType | None = None  # DQ, 3 bits: type of DestinationQueue
    aq: MessageAdministrationQueueType = MessageAdministrationQueueType.None_  # AQ, 3 bits
    rq: MessageResponseQueueType = MessageResponseQueueType.None_  # RQ, 3 bits
    sh: bool = False  # SH: a SecurityHeader is present
    th: bool = False  # TH: a TransactionHeader is present (DM then not Express)
    mp: bool = True  # MP: a MessagePropertiesHeader is present; MUST always be set
    cq: bool = False  # CQ: the ConnectorType field is present
    mq: bool = False  # MQ: a MultiQueueFormatHeader is present
    ah: bool = False  # AH: received over HTTP (MS-MQRR 2.2.5.1); MUST NOT be set when sent
    hh: bool = False  # HH: a SoapHeader is present


@dataclass(frozen=True)
class UserHeader:
    """MS-MQMQ 2.2.19.2 UserHeader (variable): source and destination of the message. The
    queue fields hold format names; their layout (by DQ, AQ, RQ) is the wire layer's."""

    source_queue_manager: GUID = GUID_NULL  # 16 bytes: the original sender
    queue_manager_address: GUID = GUID_NULL  # 16 bytes: destination QM; NULL GUID for direct
    time_to_be_received: int = INFINITE_TIME  # 4 bytes, seconds
    sent_time: int = 0  # 4 bytes, seconds since 1970-01-01 UTC
    message_id: int = 0  # 4 bytes: the sending queue manager's message identifier
    flags: UserHeaderFlags = UserHeaderFlags()  # 4 bytes
    destination_queue: str = ""
    admin_queue: str = ""  # absent when AQ is None
    response_queue: str = ""  # absent when RQ is None or SameAsAdministrationQueue
    connector_type: GUID | None = None  # 16 bytes, present if and only if Flags.CQ


@dataclass(frozen=True)
class TransactionHeaderFlags:
    """MS-MQMQ 2.2.20.5 TransactionHeader.Flags (32 bits; the X bits are never set)."""

    cg: bool = False  # CG: ConnectorQMGuid is present
    fa: bool = False  # FA: a FinalAck Packet is required
    fm: bool = False  # FM: first message sent in the transaction
    lm: bool = False  # LM: last message sent in the transaction
    id: Any = None  # ID, 20 bits: correlates the packet with its transaction


@dataclass(frozen=True)
class TransactionHeader:
    """MS-MQMQ 2.2.20.5 TransactionHeader (variable): present for a transactional message."""

    flags: TransactionHeaderFlags = TransactionHeaderFlags()  # 4 bytes
    tx_sequence_id: TxSequenceId | None = None  # 8 bytes (MS-MQMQ 2.2.18.1.2)
    tx_sequence_number: int = 0  # 4 bytes, 0x00000001-0xFFFFFFFF
    previous_tx_sequence_number: int = 0  # 4 bytes, 0 when there is no previous message
    connector_qm_guid: GUID | None = None  # 16 bytes, present if and only if Flags.CG


@dataclass(frozen=True)
class SecurityHeaderFlags:
    """MS-MQMQ 2.2.20.6 SecurityHeader.Flags (16 bits; the X bits are never set). ST holds the
    Message's SenderIdentifierType (0x0 None, 0x1 Sid, 0x2 QueueManagerIdentifier on the wire)."""

    st: MessageSenderIdentifierType = MessageSenderIdentifierType.None_  # ST, 4 bits
    au: bool = False  # AU: MUST be 0
    eb: bool = False  # EB: the message body is encrypted
    de: bool = True  # DE: the default cryptographic provider is used
    ai: bool = False  # AI: the SecurityData field is present
    as_: int = 0  # AS, 4 bits: authentication signature type, MUST be 0


@dataclass(frozen=True)
class ProviderInfo:
    """MS-MQMQ 2.2.20.6 SecurityData.ProviderInfo: the alternative provider that signed."""

    provider_type: int = 0  # 4 bytes
    provider_name: str = ""  # null-terminated Unicode


@dataclass(frozen=True)
class SecurityData:
    """MS-MQMQ 2.2.20.6 SecurityData: the items in wire order (the sizes are the wire's)."""

    security_id: bytes = b""  # the sender's SID or the sending queue manager's GUID
    encryption_key: bytes = b""  # the sender's symmetric key
    signature: bytes = b""
    sender_cert: bytes = b""  # X.509
    provider_info: ProviderInfo | None = None  # present only if Flags.DE is clear


@dataclass(frozen=True)
class SecurityHeader:
    """MS-MQMQ 2.2.20.6 SecurityHeader (variable)."""

    flags: SecurityHeaderFlags = SecurityHeaderFlags()  # 2 bytes
    security_data: SecurityData = SecurityData()


@dataclass(frozen=True)
class MessagePropertiesHeaderFlags:
    """MS-MQMQ 2.2.19.3 MessagePropertiesHeader.Flags (8 bits): the administration
    acknowledgments requested."""

    pa: bool = False  # PA: positive acknowledgment when delivered to the destination queue
    pr: bool = False  # PR: positive acknowledgment when retrieved by the application
    na: bool = False  # NA: negative acknowledgment when not delivered
    nr: bool = False  # NR: negative acknowledgment when not retrieved


@dataclass(frozen=True)
class MessagePropertiesHeader:
    """MS-MQMQ 2.2.19.3 MessagePropertiesHeader (variable). LabelLength, MessageSize,
    AllocationBodySize and ExtensionSize are sizes of the fields below: the wire's. The
    enumerated fields hold the Message attribute (codes: MS-MQMQ 2.2.19.3, 2.2.18.1.6)."""

    flags: MessagePropertiesHeaderFlags = MessagePropertiesHeaderFlags()  # 1 byte
    message_class: MessageClass | int = MessageClass.Normal  # 2 bytes
    correlation_id: OBJECTID = OBJECTID()  # 20 bytes
    body_type: int = 0  # 4 bytes: a PROPVARIANT type constant
    application_tag: int = 0  # 4 bytes
    privacy_level: MessagePrivacyLevel = MessagePrivacyLevel.None_  # 4 bytes
    hash_algorithm: MessageHashAlgorithm = MessageHashAlgorithm.SHA1  # 4 bytes
    encryption_algorithm: MessageEncryptionAlgorithm = MessageEncryptionAlgorithm.RC4  # 4 bytes
    label: str = ""  # at most 250 WCHARs with the terminating null
    extension_data: bytes = b""
    message_body: bytes = b""


@dataclass(frozen=True)
class DebugHeaderFlags:
    """MS-MQMQ 2.2.20.8 DebugHeader.Flags (16 bits; the X bits are never set)."""

    qt: int = 0  # QT, 2 bits: 0x0 no queue, 0x1 public queue (QueueIdentifier present)


@dataclass(frozen=True)
class DebugHeader:
    """MS-MQMQ 2.2.20.8 DebugHeader: the queue that receives trace messages for the packet."""

    flags: DebugHeaderFlags = DebugHeaderFlags()  # 2 bytes
    queue_identifier: GUID | None = None  # 16 bytes, present if and only if Flags.QT is 0x1


@dataclass(frozen=True)
class MultiQueueFormatHeader:
    """MS-MQMQ 2.2.20.1 MultiQueueFormatHeader: every destination of a message sent to several
    queues. Destination, Administration and Response are MQFAddressHeaders (2.2.20.2: header
    IDs 0x0064, 0x00C8, 0x012C), each a list of format names; Signature is an
    MQFSignatureHeader (2.2.20.3, ID 0x015E)."""

    destination: tuple[str, ...] = ()
    administration: tuple[str, ...] = ()
    response: tuple[str, ...] = ()
    signature: bytes = b""


@dataclass(frozen=True)
class UserMessagePacket:
    """MS-MQMQ 2.2.20 UserMessage Packet, as MS-MQDMPR 3.1.7.1.30 constructs it: the headers in
    the order 2.2.20 gives, None where a header is absent. BaseHeader, UserHeader and
    MessagePropertiesHeader are always present. SoapHeader and SessionHeader (2.2.20.4, 2.2.20.7)
    are not among the headers 3.1.7.1.30 constructs, so this value has no place for them."""

    base_header: BaseHeader
    user_header: UserHeader
    transaction_header: TransactionHeader | None = None
    security_header: SecurityHeader | None = None
    message_properties_header: MessagePropertiesHeader | None = None
    debug_header: DebugHeader | None = None
    multi_queue_format_header: MultiQueueFormatHeader | None = None

    @property
    def headers(self) -> tuple[Any, ...]:
        """The headers present, in packet order."""
        return tuple(h for h in (self.base_header, self.user_header, self.transaction_header,
                                 self.security_header, self.message_properties_header,
                                 self.debug_header, self.multi_queue_format_header)
                     if h is not None)


A = MessageAcknowledgementsRequested
#: MessagePropertiesHeader.Flags bits (PA, PR, NA, NR) for each AcknowledgementsRequested value,
#: matching the definitions of MS-MQDMPR 3.1.1.12 to the bits of MS-MQMQ 2.2.19.3
ACKNOWLEDGEMENT_FLAGS: dict[MessageAcknowledgementsRequested, frozenset[str]] = {
    A.None_: frozenset(),
    A.AckPosArrival: frozenset({"pa"}),
    A.AckPosReceive: frozenset({"pr"}),
    A.AckNegArrival: frozenset({"na"}),  # AckNackReachQueue is the same member
    A.AckNegReceive: frozenset({"nr"}),
    A.AckFullReachQueue: frozenset({"pa", "na"}),
    A.AckNackReceive: frozenset({"na", "nr"}),
    A.AckFullReceive: frozenset({"na", "pr", "nr"}),
}
del A


def _acknowledgement_flags(requested: list[MessageAcknowledgementsRequested]
                           ) -> MessagePropertiesHeaderFlags:
    bits = set().union(*(ACKNOWLEDGEMENT_FLAGS.get(value, frozenset()) for value in requested))
    return MessagePropertiesHeaderFlags(**{bit: True for bit in bits})


def _transaction_header(message: Any) -> TransactionHeader:
    connector = message.connector_queue_manager_identifier
    connector_qm_guid = connector if connector != GUID_NULL else None
    return TransactionHeader(
        flags=TransactionHeaderFlags(cg=connector_qm_guid is not None,
                                     fa=message.final_ack_required,
                                     fm=message.first_in_transaction,
                                     lm=message.last_in_transaction,
                                     id=message.transaction_identifier),
        tx_sequence_id=message.transactional_message_sequence_identifier,
        tx_sequence_number=message.transaction_sequence_number,
        previous_tx_sequence_number=message.transaction_previous_sequence_number,
        connector_qm_guid=connector_qm_guid)


def _security_header(message: Any) -> SecurityHeader:
    sender_type = message.sender_identifier_type
    # MS-MQMQ 2.2.20.6 ST 0x0: no SecurityID. DE: the default provider, unless the message
    # names an alternative one (AuthenticationProviderName), whose ProviderInfo then goes along
    default_provider = not message.authentication_provider_name
    data = SecurityData(
        security_id=(message.sender_identifier
                     if sender_type is not MessageSenderIdentifierType.None_ else b""),
        encryption_key=message.symmetric_key,
        signature=message.signature,
        sender_cert=message.sender_certificate,
        provider_info=(None if default_provider else ProviderInfo(
            message.authentication_provider_type, message.authentication_provider_name)))
    present = any((data.security_id, data.encryption_key, data.signature, data.sender_cert,
                   data.provider_info))
    return SecurityHeader(
        flags=SecurityHeaderFlags(st=sender_type, au=False,
                                  eb=message.privacy_level is not MessagePrivacyLevel.None_,
                                  de=default_provider, ai=present, as_=0),
        security_data=data)


def _message_properties_header(message: Any) -> MessagePropertiesHeader:
    return MessagePropertiesHeader(
        flags=_acknowledgement_flags(message.acknowledgements_requested),
        message_class=message.class_,
        correlation_id=message.correlation_identifier,
        body_type=message.body_type,
        application_tag=message.application_tag,  # "AppSpecific" in 3.1.7.1.30 and 3.1.7.1.32
        privacy_level=message.privacy_level,
        hash_algorithm=message.hash_algorithm,
        encryption_algorithm=message.encryption_algorithm,
        label=message.label,
        extension_data=message.extension,
        message_body=message.body)  # "MessageBody" and "Body" in 3.1.7.1.30: both Message.Body


def construct_a_user_message_packet(message: Any) -> UserMessagePacket:
    """MS-MQDMPR 3.1.7.1.30 Construct a UserMessage Packet (MS-MQDMPR/3.1.7.1.30/R1
    MS-MQDMPR/3.1.7.1.30/R2). Returns rUserMessage.

    Two readings the rest of the documents require:

    * MessagePropertiesHeader: 3.1.7.1.30 includes it when one of a list of attributes is
      "specified"; MS-MQMQ 2.2.20, which the packet must conform to, requires it in every packet
      (and UserHeader.Flags.MP always set). Some of those attributes always have a value
      (HashAlgorithm, EncryptionAlgorithm, PrivacyLevel have defaults), so both agree: always.
    * DebugHeader: 3.1.7.1.30 says UserHeader.Flags.DH, but UserHeader.Flags has no DH bit;
      BaseHeader.Flags.DH is the bit that announces a DebugHeader (MS-MQMQ 2.2.19.1, 2.2.20),
      so that is the one set. MS-MQMQ 2.2.19.1 also requires DH whenever TR (tracing) is set,
      so a message that requests tracing carries a DebugHeader too, with no queue (QT 0x0) if
      TracingQueueIdentifier is not specified.

    "Specified" reads as: TransactionIdentifier not empty (None), TracingQueueIdentifier not
    GUID_NULL (its default), DestinationMultiQueueFormatName not an empty collection."""
    # MS-MQDMPR/3.1.7.1.30/R5: each header below is built from the attributes of iMessage
    transaction_header = (_transaction_header(message)  # MS-MQDMPR/3.1.7.1.30/R6
                          if message.transaction_identifier is not None else None)
    security_header = (_security_header(message)  # MS-MQDMPR/3.1.7.1.30/R7
                       if message.authentication_level is not MessageAuthenticationLevel.None_
                       else None)
    # always present: see the docstring
    message_properties_header = _message_properties_header(message)  # MS-MQDMPR/3.1.7.1.30/R8
    tracing_queue = message.tracing_queue_identifier
    if tracing_queue != GUID_NULL:  # MS-MQDMPR/3.1.7.1.30/R9
        debug_header = DebugHeader(DebugHeaderFlags(qt=0x1), queue_identifier=tracing_queue)
    elif message.tracing_requested:  # MS-MQMQ 2.2.19.1: TR needs DH, DH needs the header
        debug_header = DebugHeader(DebugHeaderFlags(qt=0x0), queue_identifier=None)
    else:
        debug_header = None
    multi_queue_format_header = (  # MS-MQDMPR/3.1.7.1.30/R10
        MultiQueueFormatHeader(
            destination=tuple(message.destination_multi_queue_format_name),
            administration=tuple(message.administration_multi_queue_format_name),
            response=tuple(message.response_multi_queue_format_name),
            signature=message.multiple_destination_signature)
        if message.destination_multi_queue_format_name else None)
    connector = message.connector_type_identifier
    base_header = BaseHeader(
        flags=BaseHeaderFlags(
            # MS-MQMQ 2.2.19.1: PR is 0x0 in a packet that carries a transactional message
            pr=0x0 if transaction_header is not None else message.priority,
            in_=False,  # MS-MQMQ 2.2.20: never set in a UserMessage Packet
            sh=False,  # a SessionHeader is the message transfer protocol's to add
            dh=debug_header is not None,  # MS-MQDMPR/3.1.7.1.30/R9 (BaseHeader: docstring)
            tr=message.tracing_requested),
        time_to_reach_queue=message.time_to_reach_queue)
    user_header = UserHeader(
        source_queue_manager=message.source_machine_identifier,
        queue_manager_address=message.destination_queue_manager_identifier,
        time_to_be_received=message.time_to_be_received,
        sent_time=message.sent_time,
        message_id=message.identifier.uniquifier,  # OBJECTID: lineage is the QM, then the ID
        flags=UserHeaderFlags(
            rc=0,  # no routing server has processed a packet its sender builds
            dm=message.delivery_guarantee,
            jn=message.negative_journaling_requested,
            jp=message.positive_journaling_requested,
            dq=message.destination_queue_type,
            aq=message.administration_queue_type,
            rq=message.response_queue_type,
            sh=security_header is not None,  # MS-MQDMPR/3.1.7.1.30/R7
            th=transaction_header is not None,  # MS-MQDMPR/3.1.7.1.30/R6
            mp=True,  # MS-MQDMPR/3.1.7.1.30/R8
            cq=connector != GUID_NULL,
            mq=multi_queue_format_header is not None,  # MS-MQDMPR/3.1.7.1.30/R10
            ah=False,  # MS-MQMQ 2.2.19.2: MUST NOT be set when sent
            hh=False),  # no SoapHeader: 3.1.7.1.30 constructs none
        destination_queue=message.destination_queue_format_name,
        admin_queue=message.administration_queue_format_name,
        response_queue=message.response_queue_format_name,
        connector_type=connector if connector != GUID_NULL else None)
    user_message = UserMessagePacket(  # MS-MQDMPR/3.1.7.1.30/R3: headers as MS-MQMQ 2.2.20 has
        base_header, user_header,
        transaction_header=transaction_header,
        security_header=security_header,
        message_properties_header=message_properties_header,
        debug_header=debug_header,
        multi_queue_format_header=multi_queue_format_header)
    return user_message  # MS-MQDMPR/3.1.7.1.30/R4
