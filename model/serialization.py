"""MS-MQDMPR 3.1.7.1.32 Serialize Message to Buffer and 3.1.7.1.31 Deserialize Message From
Buffer: a Message ADM element to the bytes of its UserMessage Packet and back, through the one
packet codec (:mod:`model.packet`).

How they fit: Serialize takes iBuffer, "a UserMessage Packet that has been constructed from
iMessage", which is MS-MQDMPR 3.1.7.1.30's job (``construct_a_user_message_packet`` in
model.dispatch decides which headers there are); it then sets every field of its table from
iMessage, row by row below, and the codec computes the sizes and PacketSize. Deserialize
decodes the packet and reads its table back into a new Message; a header the flags say is
absent is skipped, so its attributes keep their ADM defaults. Both tables are transcribed in
the documents' row order, one line per row, commented with the packet field.

Beyond the two tables, for the MS-MQRR message packet (MS-MQRR 2.2.5) the server hands out:

* SRMP: a message whose SOAPEnvelope and SOAPCompoundMessage are both populated goes as an SRMP
  Message, UserHeader.Flags.AH set, with the SRMPEnvelopeHeader and CompoundMessageHeader
  (MS-MQRR/2.2.5.1/R6); SoapHeader and SoapBody go in a SoapHeader (MS-MQMQ 2.2.20.7), Header and
  Body by name. Deserialize reads all four back.
* The trailers of MS-MQRR 2.2.5 (``trailers=True``): ExtensionHeader, SubqueueHeader (empty
  names: MS-MQRR/2.2.5.3/R7), DeadLetterHeader when ApplicationDeadletterQueue is set (read back
  by Deserialize) and ExtendedAddressHeader: AddressType 0x0000 (no address) unless the caller
  names the host the message was received from (``received_from``), which also goes in the
  UserHeader overlay when the destination is a direct format name.
* Deserialize also reads back the three fields 3.1.7.1.32's table writes and 3.1.7.1.31's table
  has no row for: SecurityData.Signature, TransactionHeader.PreviousTxSequenceNumber and
  UserHeader.ConnectorType (marked "row missing from 3.1.7.1.31" below).

Readings where the documents leave a choice (spec/choices.yaml):

1. BaseHeader.Flags.DH: the row gives TracingRequested, but MS-MQMQ 2.2.19.1 wants DH set if and
   only if there is a DebugHeader, which 3.1.7.1.30 also adds for a TracingQueueIdentifier; so DH
   is set exactly when the DebugHeader is there.
2. DQ, AQ, RQ: where the Message leaves its queue type unset (DestinationQueueType None,
   AdministrationQueueType or ResponseQueueType None while a format name is given) the format
   name says which type it is: DIRECT= direct, PUBLIC= public, PRIVATE= a private queue on the
   source, on the destination, or on another queue manager by its GUID.
3. UserHeader.MessageID is Identifier's Uniquifier (4 bytes); Deserialize makes Identifier from
   SourceQueueManager and MessageID, the MessageIdentifier of MS-MQMQ 2.2.18.1.3.
4. TransactionIdentifier (a GUID) travels in the 20-bit Flags.ID as its low 20 bits; Deserialize
   gives back ``uuid.UUID(int=ID)``. Priority is not read from a transactional packet, whose PR is 0
   and "the receiver MUST ignore it" (MS-MQDMPR/3.1.7.1.32/R5).
5. AuthenticationLevel: 3.1.7.1.31 keys its table (0x0, 0x1, 0x3, 0x5) on Flags.AU, a one-bit
   field; the values 0x3 and 0x5 only fit in the four-bit Flags.AS ("the authentication signature
   type"), so the key is AS when AS is nonzero and AU otherwise. Serialize sets both to 0
   (MS-MQDMPR/3.1.7.1.32/R9, R10), so a packet this module writes reads back as None.
6. AcknowledgementsRequested: the PA, PR, NA, NR bits read back as the one value whose bits they
   are (model.dispatch.ACKNOWLEDGEMENT_FLAGS), else as one value per bit, else [None].
7. A DIRECT destination's QueueManagerAddress holds MS-MQRR 2.2.5.1's address overlay when the
   packet came from a host; DestinationQueueManagerIdentifier is then not read from it.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

from mqconform.model.adm import (
    GUID_NULL,
    OBJECTID,
    LocalMessage,
    MessageAcknowledgementsRequested,
    MessageAdministrationQueueType,
    MessageAuthenticationLevel,
    MessageDestinationQueueType,
    MessagePrivacyLevel,
    MessageResponseQueueType,
    MessageSenderIdentifierType,
)
from mqconform.model.dispatch import (
    ACKNOWLEDGEMENT_FLAGS,
    MessagePropertiesHeaderFlags,
    ProviderInfo,
    UserMessagePacket,
    construct_a_user_message_packet,
)
from mqconform.model.formats import FormatNameError, FormatNameKind, parse_format_name
from mqconform.model.packet import (
    CompoundMessageHeader,
    DeadLetterHeader,
    ExtensionHeader,
    HostAddress,
    PacketExtras,
    SoapHeader,
    SRMPEnvelopeHeader,
    SubqueueHeader,
    decode_packet,
    encode_packet,
)

#: MS-MQDMPR 3.1.7.1.31: "UserHeader.SecurityHeader.Flags.AU" to rMessage.AuthenticationLevel
AUTHENTICATION_LEVELS = {0x0: MessageAuthenticationLevel.None_,
                         0x1: MessageAuthenticationLevel.Sig10,
                         0x3: MessageAuthenticationLevel.Sig20,
                         0x5: MessageAuthenticationLevel.Sig30}


# ---------------------------------------------------------------------------------------------
# Queue types a Message leaves unset (see the module docstring)
# ---------------------------------------------------------------------------------------------


def _kind(name: str) -> Any:
    try:
        return parse_format_name(name)
    except FormatNameError:
        return None  # the codec reports the name, naming the field


def _destination_type(message: Any) -> MessageDestinationQueueType | None:
    if message.destination_queue_type is not None or not message.destination_queue_format_name:
        return message.destination_queue_type
    parsed = _kind(message.destination_queue_format_name)
    kinds = {FormatNameKind.DIRECT: MessageDestinationQueueType.DirectQueue,
             FormatNameKind.PUBLIC: MessageDestinationQueueType.PublicQueue,
             FormatNameKind.PRIVATE: MessageDestinationQueueType.PrivateQueue}
    return kinds.get(parsed.kind) if parsed is not None else None


def _private_type(message: Any, name: str, enum: Any) -> Any:
    parsed = _kind(name)
    if parsed is None:
        return enum.None_
    if parsed.kind is FormatNameKind.DIRECT:
        return enum.DirectQueue
    if parsed.kind is FormatNameKind.PUBLIC:
        return enum.PublicQueue
    if parsed.kind is not FormatNameKind.PRIVATE:
        return enum.None_
    if parsed.guid == message.source_machine_identifier:
        return enum.PrivateQueueOnSource
    if parsed.guid == message.destination_queue_manager_identifier != GUID_NULL:
        return enum.PrivateQueueOnDestination
    return enum.PrivateQueueOnOther


def _administration_type(message: Any) -> MessageAdministrationQueueType:
    value = message.administration_queue_type
    if value is not MessageAdministrationQueueType.None_ or not (
            message.administration_queue_format_name):
        return value
    return _private_type(message, message.administration_queue_format_name,
                         MessageAdministrationQueueType)


def _response_type(message: Any) -> MessageResponseQueueType:
    value = message.response_queue_type
    if value is not MessageResponseQueueType.None_ or not message.response_queue_format_name:
        return value
    return _private_type(message, message.response_queue_format_name, MessageResponseQueueType)


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.32 Serialize Message to Buffer
# ---------------------------------------------------------------------------------------------


def _compound_message(message: Any) -> CompoundMessageHeader:
    """The CompoundMessageHeader of Message.SOAPCompoundMessage (text, sent as UTF-8); the
    message body is found in it by value (MS-MQRR/2.2.5.1.2.2/R4, MS-MQRR/2.2.5.1.2.2/R5)."""
    data = message.soap_compound_message.encode("utf-8", "surrogateescape")
    at = data.find(message.body) if message.body else -1
    if at < 0:
        return CompoundMessageHeader(data)
    return CompoundMessageHeader(data, msg_body_offset=at, msg_body_size=len(message.body))


def serialize_message_to_buffer(message: Any, *, trailers: bool = True,
                                received_from: HostAddress | None = None) -> bytes:
    """MS-MQDMPR 3.1.7.1.32 Serialize Message to Buffer (MS-MQDMPR/3.1.7.1.32/R1): the
    packet of iMessage. With ``trailers`` the MS-MQRR 2.2.5 trailers follow the UserMessage.
    ``received_from``: the host the message was received from (the ADM keeps no such
    attribute; the queue manager that takes a message from the network knows it): it goes in
    the ExtendedAddressHeader (MS-MQRR 2.2.5.5) and, for a direct destination, in the UserHeader
    overlay of MS-MQRR 2.2.5.1. Raises model.packet.PacketError for an attribute the packet
    cannot carry."""
    i_buffer: UserMessagePacket = construct_a_user_message_packet(message)  # iBuffer
    tx = i_buffer.transaction_header
    sec = i_buffer.security_header
    mqf = i_buffer.multi_queue_format_header
    debug = i_buffer.debug_header
    # MS-MQDMPR/3.1.7.1.32/R2 MS-MQDMPR/3.1.7.1.32/R3: the table, row by row
    base_flags = replace(
        i_buffer.base_header.flags,
        pr=0x0 if tx is not None else message.priority,  # PR: MS-MQDMPR/3.1.7.1.32/R5 R6
        tr=message.tracing_requested,  # BaseHeader.Flags.TR
        dh=message.tracing_requested or debug is not None)  # BaseHeader.Flags.DH (docstring)
    base_header = replace(i_buffer.base_header, flags=base_flags,
                          time_to_reach_queue=message.time_to_reach_queue)  # .TimeToReachQueue
    acknowledgements = set().union(*(ACKNOWLEDGEMENT_FLAGS.get(value, frozenset())
                                     for value in message.acknowledgements_requested))
    properties = replace(
        i_buffer.message_properties_header,
        # LabelLength: "the string length of Message.Label", computed by the codec
        body_type=message.body_type,  # MessagePropertiesHeader.BodyType
        # MessageSize (MS-MQDMPR/3.1.7.1.32/R7), ExtensionSize (MS-MQDMPR/3.1.7.1.32/R8):
        # the sizes of Body and Extension, computed by the codec
        encryption_algorithm=message.encryption_algorithm,  # .EncryptionAlgorithm
        hash_algorithm=message.hash_algorithm,  # .HashAlgorithm
        application_tag=message.application_tag,  # .ApplicationTag: Message.AppSpecific
        correlation_id=message.correlation_identifier,  # .CorrelationID
        flags=MessagePropertiesHeaderFlags(  # .Flags: Message.AcknowledgementsRequested
            **{bit: True for bit in acknowledgements}),
        message_class=message.class_,  # .MessageClass
        extension_data=message.extension,  # .ExtensionData
        label=message.label,  # .Label
        message_body=message.body,  # .MessageBody
        privacy_level=message.privacy_level)  # .PrivacyLevel
    security_header = None
    if sec is not None:
        alternative = bool(message.authentication_provider_name)
        security_flags = replace(
            sec.flags,
            au=False,  # SecurityHeader.Flags.AU: MS-MQDMPR/3.1.7.1.32/R9
            as_=0,  # SecurityHeader.Flags.AS: MS-MQDMPR/3.1.7.1.32/R10
            # SecurityHeader.Flags.EB: MS-MQDMPR/3.1.7.1.32/R11 MS-MQDMPR/3.1.7.1.32/R12
            eb=message.privacy_level is not MessagePrivacyLevel.None_,
            # SenderCertSize (MS-MQDMPR/3.1.7.1.32/R13), ProviderInfoSize
            # (MS-MQDMPR/3.1.7.1.32/R14): computed by the codec
            # SecurityHeader.Flags.DE: MS-MQDMPR/3.1.7.1.32/R15 MS-MQDMPR/3.1.7.1.32/R16
            de=not alternative,
            st=message.sender_identifier_type)  # SecurityHeader.Flags.ST
        security_data = replace(
            sec.security_data,
            provider_info=ProviderInfo(
                message.authentication_provider_type,  # ...ProviderInfo.ProviderType
                message.authentication_provider_name)  # ...ProviderInfo.ProviderName
            if alternative else None,
            signature=message.signature,  # SecurityHeader.SecurityData.Signature
            encryption_key=message.symmetric_key,  # SecurityHeader.SecurityData.EncryptionKey
            # SecurityHeader.SecurityData.SecurityID (none when ST is 0x0: MS-MQMQ 2.2.20.6)
            security_id=(message.sender_identifier if message.sender_identifier_type
                         is not MessageSenderIdentifierType.None_ else b""),
            sender_cert=message.sender_certificate)  # SecurityHeader.SecurityData.SenderCert
        security_header = replace(sec, flags=security_flags, security_data=security_data)
    transaction_header = None
    if tx is not None:
        connector = message.connector_queue_manager_identifier
        transaction_header = replace(
            tx,
            flags=replace(tx.flags,
                          fa=message.final_ack_required,  # TransactionHeader.Flags.FA
                          id=message.transaction_identifier,  # TransactionHeader.Flags.ID
                          fm=message.first_in_transaction,  # TransactionHeader.Flags.FM
                          lm=message.last_in_transaction,  # TransactionHeader.Flags.LM
                          cg=connector != GUID_NULL),
            tx_sequence_number=message.transaction_sequence_number,  # .TxSequenceNumber
            previous_tx_sequence_number=(  # TransactionHeader.PreviousTxSequenceNumber
                message.transaction_previous_sequence_number),
            tx_sequence_id=message.transactional_message_sequence_identifier,  # .TxSequenceID
            connector_qm_guid=connector if connector != GUID_NULL else None)  # .ConnectorQMGuid
    connector_type = message.connector_type_identifier
    user_flags = replace(
        i_buffer.user_header.flags,
        cq=connector_type != GUID_NULL,
        dq=_destination_type(message),  # UserHeader.Flags.DQ: Message.DestinationQueueType
        aq=_administration_type(message),  # UserHeader.Flags.AQ
        rq=_response_type(message),  # UserHeader.Flags.RQ
        dm=message.delivery_guarantee,  # UserHeader.Flags.DM
        jp=message.positive_journaling_requested,  # UserHeader.Flags.JP
        jn=message.negative_journaling_requested)  # UserHeader.Flags.JN
    user_header = replace(
        i_buffer.user_header,
        queue_manager_address=(  # UserHeader.QueueManagerAddress
            message.destination_queue_manager_identifier),
        connector_type=connector_type if connector_type != GUID_NULL else None,  # .ConnectorType
        sent_time=message.sent_time,  # UserHeader.SentTime
        time_to_be_received=message.time_to_be_received,  # UserHeader.TimeToBeReceived
        message_id=message.identifier.uniquifier,  # UserHeader.MessageID: Message.Identifier
        source_queue_manager=message.source_machine_identifier,  # .SourceQueueManager
        admin_queue=message.administration_queue_format_name,  # UserHeader.AdminQueue
        destination_queue=message.destination_queue_format_name,  # .DestinationQueue
        response_queue=message.response_queue_format_name,  # UserHeader.ResponseQueue
        flags=user_flags)
    multi_queue_format_header = None
    if mqf is not None:
        multi_queue_format_header = replace(
            mqf,
            destination=tuple(message.destination_multi_queue_format_name),  # .Destination
            administration=tuple(  # MultiQueueFormatHeader.Administration
                message.administration_multi_queue_format_name),
            response=tuple(message.response_multi_queue_format_name),  # .Response
            signature=message.multiple_destination_signature)  # .Signature
    debug_header = None
    if debug is not None:
        tracing_queue = message.tracing_queue_identifier
        traced = tracing_queue != GUID_NULL
        debug_header = replace(
            debug,
            # DebugHeader.Flags.QT: MS-MQDMPR/3.1.7.1.32/R17 MS-MQDMPR/3.1.7.1.32/R18
            flags=replace(debug.flags, qt=0x1 if traced else 0x0),
            queue_identifier=tracing_queue if traced else None)  # DebugHeader.QueueIdentifier
    # MS-MQRR 2.2.5.1: the SRMP headers and the SoapHeader (module docstring)
    srmp = bool(message.soap_envelope and message.soap_compound_message)
    soap = bool(message.soap_header or message.soap_body)
    user_header = replace(user_header, flags=replace(user_header.flags,
                                                     ah=srmp,  # MS-MQRR/2.2.5.1/R6
                                                     hh=soap))
    direct = user_header.flags.dq is MessageDestinationQueueType.DirectQueue
    extras = PacketExtras(
        # MS-MQRR/2.2.5.1/R1 .. R5: the address overlay, for a direct destination only
        received_from=received_from if direct else None,
        srmp_envelope_header=SRMPEnvelopeHeader(message.soap_envelope) if srmp else None,
        compound_message_header=_compound_message(message) if srmp else None,
        soap_header=SoapHeader(message.soap_header, message.soap_body) if soap else None)
    if trailers:  # MS-MQRR 2.2.5
        dead_letter = message.application_deadletter_queue
        extras = replace(extras, extension_header=ExtensionHeader(),
                         subqueue_header=SubqueueHeader(),  # MS-MQRR/2.2.5.3/R7
                         dead_letter_header=DeadLetterHeader(dead_letter) if dead_letter else None,
                         # MS-MQRR/2.2.5.5/R6: the host the message came from; AddressType
                         # 0x0000 when it came from none (MS-MQRR/2.2.5.5/R1)
                         extended_address_header=received_from or HostAddress())
    i_buffer = UserMessagePacket(base_header, user_header,
                                 transaction_header=transaction_header,
                                 security_header=security_header,
                                 message_properties_header=properties,
                                 debug_header=debug_header,
                                 multi_queue_format_header=multi_queue_format_header)
    # MS-MQDMPR/3.1.7.1.32/R4: the codec sets BaseHeader.PacketSize to the packet's size
    return encode_packet(i_buffer, extras)


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.31 Deserialize Message From Buffer
# ---------------------------------------------------------------------------------------------


def _acknowledgements(flags: Any) -> list[MessageAcknowledgementsRequested]:
    """MessagePropertiesHeader.Flags to AcknowledgementsRequested (module docstring)."""
    bits = frozenset(bit for bit in ("pa", "pr", "na", "nr") if getattr(flags, bit))
    if not bits:
        return [MessageAcknowledgementsRequested.None_]
    for value, value_bits in ACKNOWLEDGEMENT_FLAGS.items():
        if value_bits == bits:
            return [value]
    return [value for bit in ("pa", "pr", "na", "nr") if bit in bits
            for value, value_bits in ACKNOWLEDGEMENT_FLAGS.items() if value_bits == {bit}]


def deserialize_message_from_buffer(buffer: bytes) -> LocalMessage:
    """MS-MQDMPR 3.1.7.1.31 Deserialize Message From Buffer (MS-MQDMPR/3.1.7.1.31/R1
    MS-MQDMPR/3.1.7.1.31/R2): rMessage, a local Message (MS-MQRR 3.1.1.4) with its packet, Type
    and Offset. Raises model.packet.PacketError for bytes that are not a message packet."""
    decoded = decode_packet(buffer)
    i_buffer = decoded.user_message
    r_message = LocalMessage()  # MS-MQDMPR/3.1.7.1.31/R3
    # MS-MQDMPR/3.1.7.1.31/R4: the table; a header the BaseHeader and UserHeader flags say is
    # absent is skipped, and the attributes it would set keep their defaults
    base, user, props = (i_buffer.base_header, i_buffer.user_header,
                         i_buffer.message_properties_header)
    sec, tx = i_buffer.security_header, i_buffer.transaction_header
    if sec is not None:  # AuthenticationLevel: MS-MQDMPR/3.1.7.1.31/R5 (module docstring)
        key = sec.flags.as_ or int(sec.flags.au)
        if key in AUTHENTICATION_LEVELS:
            r_message.authentication_level = AUTHENTICATION_LEVELS[key]
    if tx is None:  # Priority: BaseHeader.Flags.PR, ignored with a TransactionHeader
        r_message.priority = base.flags.pr
    r_message.tracing_requested = base.flags.tr  # BaseHeader.Flags.TR
    r_message.time_to_reach_queue = base.time_to_reach_queue  # BaseHeader.TimeToReachQueue
    r_message.body_type = props.body_type  # MessagePropertiesHeader.BodyType
    r_message.encryption_algorithm = props.encryption_algorithm  # .EncryptionAlgorithm
    r_message.hash_algorithm = props.hash_algorithm  # .HashAlgorithm
    r_message.application_tag = props.application_tag  # AppSpecific: .ApplicationTag
    r_message.correlation_identifier = props.correlation_id  # .CorrelationID
    r_message.acknowledgements_requested = _acknowledgements(props.flags)  # .Flags
    r_message.class_ = props.message_class  # .MessageClass
    r_message.extension = props.extension_data  # .ExtensionData
    r_message.label = props.label  # .Label
    r_message.body = props.message_body  # .MessageBody
    r_message.privacy_level = props.privacy_level  # .PrivacyLevel
    if sec is not None:
        data = sec.security_data
        if data.provider_info is not None:
            r_message.authentication_provider_type = (  # ...ProviderInfo.ProviderType
                data.provider_info.provider_type)
            r_message.authentication_provider_name = (  # ...ProviderInfo.ProviderName
                data.provider_info.provider_name)
        r_message.sender_identifier_type = sec.flags.st  # SecurityHeader.Flags.ST
        r_message.symmetric_key = data.encryption_key  # ...SecurityData.EncryptionKey
        r_message.sender_identifier = data.security_id  # ...SecurityData.SecurityID
        r_message.sender_certificate = data.sender_cert  # ...SecurityData.SenderCert
        r_message.signature = data.signature  # ...Signature: row missing from 3.1.7.1.31
    if tx is not None:
        r_message.final_ack_required = tx.flags.fa  # TransactionHeader.Flags.FA
        r_message.transaction_identifier = uuid.UUID(int=tx.flags.id)  # .Flags.ID
        r_message.transaction_sequence_number = tx.tx_sequence_number  # .TxSequenceNumber
        r_message.transactional_message_sequence_identifier = tx.tx_sequence_id  # .TxSequenceID
        if tx.connector_qm_guid is not None:
            r_message.connector_queue_manager_identifier = tx.connector_qm_guid  # .ConnectorQMGuid
        r_message.first_in_transaction = tx.flags.fm  # TransactionHeader.Flags.FM
        r_message.last_in_transaction = tx.flags.lm  # TransactionHeader.Flags.LM
        r_message.transaction_previous_sequence_number = (  # row missing from 3.1.7.1.31
            tx.previous_tx_sequence_number)
    uf = user.flags
    # MS-MQDMPR/3.1.7.1.31/R5: the UserHeader, MultiQueueFormatHeader and DebugHeader rows
    if decoded.extras.received_from is None:  # else MS-MQRR 2.2.5.1's address overlay
        r_message.destination_queue_manager_identifier = (  # UserHeader.QueueManagerAddress
            user.queue_manager_address)
    r_message.sent_time = user.sent_time  # UserHeader.SentTime
    r_message.destination_queue_type = uf.dq  # UserHeader.Flags.DQ
    r_message.administration_queue_type = uf.aq  # UserHeader.Flags.AQ
    r_message.response_queue_type = uf.rq  # UserHeader.Flags.RQ
    r_message.time_to_be_received = user.time_to_be_received  # UserHeader.TimeToBeReceived
    r_message.identifier = OBJECTID(user.source_queue_manager, user.message_id)  # .MessageID
    r_message.source_machine_identifier = user.source_queue_manager  # .SourceQueueManager
    r_message.administration_queue_format_name = user.admin_queue  # UserHeader.AdminQueue
    r_message.destination_queue_format_name = user.destination_queue  # .DestinationQueue
    r_message.delivery_guarantee = uf.dm  # UserHeader.Flags.DM
    r_message.positive_journaling_requested = uf.jp  # UserHeader.Flags.JP
    r_message.negative_journaling_requested = uf.jn  # UserHeader.Flags.JN
    r_message.response_queue_format_name = user.response_queue  # UserHeader.ResponseQueue
    if user.connector_type is not None:  # UserHeader.ConnectorType: row missing from 3.1.7.1.31
        r_message.connector_type_identifier = user.connector_type
    mqf = i_buffer.multi_queue_format_header
    if mqf is not None:
        r_message.destination_multi_queue_format_name = list(mqf.destination)  # .Destination
        r_message.administration_multi_queue_format_name = list(  # .Administration
            mqf.administration)
        r_message.response_multi_queue_format_name = list(mqf.response)  # .Response
        r_message.multiple_destination_signature = mqf.signature  # .Signature
    debug = i_buffer.debug_header
    if debug is not None and debug.queue_identifier is not None:
        r_message.tracing_queue_identifier = debug.queue_identifier  # .QueueIdentifier
    # MS-MQRR 2.2.5.1 and 2.2.5.4 (module docstring)
    extras = decoded.extras
    if extras.srmp_envelope_header is not None:
        r_message.soap_envelope = extras.srmp_envelope_header.data
        r_message.soap_compound_message = extras.compound_message_header.data.decode(
            "utf-8", "surrogateescape")
    if extras.soap_header is not None:
        r_message.soap_header = extras.soap_header.header
        r_message.soap_body = extras.soap_header.body
    if extras.dead_letter_header is not None:
        r_message.application_deadletter_queue = extras.dead_letter_header.dead_letter_path_name
    # MS-MQRR/3.1.1.4/R1: the local Message's private state, Type and Offset, with its packet
    r_message.packet = bytes(buffer)
    r_message.type = decoded.type
    r_message.offset = decoded.offset
    r_message._user_message_size = decoded.user_message_size
    return r_message


__all__ = ["serialize_message_to_buffer", "deserialize_message_from_buffer",
           "AUTHENTICATION_LEVELS"]
