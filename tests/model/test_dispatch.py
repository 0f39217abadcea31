"""MS-MQDMPR 3.1.7.1.27 Enqueue Message To An Open Queue, the dispatch collection (3.1.7.1.28,
3.1.7.1.29, 3.1.7.1.34, 3.1.7.3.9) and 3.1.7.1.30 Construct a UserMessage Packet."""

from __future__ import annotations

import uuid

import pytest

from mqconform.model.adm import (
    GUID_NULL,
    OBJECTID,
    DispatchEntry,
    Message,
    MessageAcknowledgementsRequested,
    MessageAuthenticationLevel,
    MessageClass,
    MessageDeliveryGuarantee,
    MessagePositionState,
    MessagePrivacyLevel,
    MessageSenderIdentifierType,
    OpenQueueDescriptor,
    OutgoingQueue,
    QueueAccessType,
    QueueType,
    Transaction,
    TxSequenceId,
)
from mqconform.model.consumed import message_position_deleted
from mqconform.model.dispatch import (
    MC_MQSRM,
    MS_MQQB,
    BaseHeader,
    DebugHeader,
    MessagePropertiesHeader,
    MultiQueueFormatHeader,
    SecurityHeader,
    TransactionHeader,
    UserHeader,
    add_message_to_dispatch_collection,
    construct_a_user_message_packet,
    dispatch_send_message,
    dispatched,
    enqueue_message_to_an_open_queue,
    remove_message_from_dispatch_collection,
    remove_messages_from_dispatch_collection_by_queue,
)
from mqconform.model.message_ops import QUEUE_QUOTA_EXCEEDED, enqueue_message
from mqconform.model.status import MQ_ERROR_QUEUE_NOT_AVAILABLE, MQ_OK

A = MessageAcknowledgementsRequested


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.27 Enqueue Message To An Open Queue
# ---------------------------------------------------------------------------------------------

def _multiple(world, *queues):
    """A multiple-element descriptor over ``queues`` (its elements are single descriptors)."""
    singles = [OpenQueueDescriptor(handle=world.env.ids.handle(),
                                   access_type=QueueAccessType.SendAccess, queue_reference=q,
                                   format_name=f"DIRECT=OS:mqref\\private$\\{q.pathname}")
               for q in queues]
    return OpenQueueDescriptor(handle=world.env.ids.handle(),
                               access_type=QueueAccessType.SendAccess, multiple=True,
                               format_name=",".join(d.format_name for d in singles),
                               open_queue_descriptor_collection=singles)


@pytest.mark.req("MS-MQDMPR/3.1.7.1.27/R3", "MS-MQDMPR/3.1.7.1.27/R4", "MS-MQDMPR/3.1.7.1.27/R5",
                 "MS-MQDMPR/3.1.7.1.27/R6", "MS-MQDMPR/3.1.7.1.27/R8")
def test_enqueue_to_a_single_descriptor_puts_the_message_itself_in_its_queue(world):
    q = world.queue()
    desc = world.open(q, access=QueueAccessType.SendAccess)
    message = Message(body=b"hello")
    assert enqueue_message_to_an_open_queue(world.env, desc, message) == MQ_OK
    assert [p.message_reference for p in q.message_position_list] == [message]
    assert message.destination_multi_queue_format_name == []


@pytest.mark.req("MS-MQDMPR/3.1.7.1.27/R8", "MS-MQDMPR/3.1.7.1.27/R9")
def test_enqueue_to_a_single_descriptor_returns_the_enqueue_status(world):
    q = world.queue(quota=1)  # kilobytes
    desc = world.open(q, access=QueueAccessType.SendAccess)
    status = enqueue_message_to_an_open_queue(world.env, desc, Message(body=b"x" * 2000))
    assert status == QUEUE_QUOTA_EXCEEDED
    assert len(q.message_position_list) == 0


@pytest.mark.req("MS-MQDMPR/3.1.7.1.27/R7", "MS-MQDMPR/3.1.7.1.27/R17")
def test_enqueue_to_an_open_queue_passes_the_transaction_on(world):
    q1, q2 = world.queue(".\\private$\\a"), world.queue(".\\private$\\b")
    tx = Transaction(identifier=uuid.UUID(int=7))
    single = world.open(q1, access=QueueAccessType.SendAccess)
    assert enqueue_message_to_an_open_queue(world.env, single, Message(), tx) == MQ_OK
    assert enqueue_message_to_an_open_queue(world.env, _multiple(world, q1, q2), Message(),
                                            tx) == MQ_OK
    assert len(tx.transactional_operation_collection) == 3
    assert all(p.state is MessagePositionState.Locked
               for q in (q1, q2) for p in q.message_position_list)


@pytest.mark.req("MS-MQDMPR/3.1.7.1.27/R10", "MS-MQDMPR/3.1.7.1.27/R11",
                 "MS-MQDMPR/3.1.7.1.27/R12", "MS-MQDMPR/3.1.7.1.27/R13",
                 "MS-MQDMPR/3.1.7.1.27/R14", "MS-MQDMPR/3.1.7.1.27/R15",
                 "MS-MQDMPR/3.1.7.1.27/R16", "MS-MQDMPR/3.1.7.1.27/R19")
def test_enqueue_to_a_multiple_element_descriptor_puts_a_copy_in_each_queue(world):
    q1, q2 = world.queue(".\\private$\\a"), world.queue(".\\private$\\b")
    desc = _multiple(world, q1, q2)
    message = Message(body=b"fan out", label="L")
    assert enqueue_message_to_an_open_queue(world.env, desc, message) == MQ_OK
    names = [d.format_name for d in desc.open_queue_descriptor_collection]
    assert message.destination_multi_queue_format_name == names
    copies = [q.message_position_list.head.message_reference for q in (q1, q2)]
    assert all(c is not message and c.body == b"fan out" and c.label == "L" for c in copies)
    assert [c.destination_queue_format_name for c in copies] == names
    assert all(c.destination_multi_queue_format_name == names for c in copies)
    assert copies[0].destination_multi_queue_format_name is not (
        copies[1].destination_multi_queue_format_name)
    assert message.message_position_reference is None  # the original is in no queue


@pytest.mark.req("MS-MQDMPR/3.1.7.1.27/R18")
def test_enqueue_to_a_multiple_element_descriptor_stops_at_the_first_failure(world):
    q1 = world.queue(".\\private$\\a", quota=1)
    q2 = world.queue(".\\private$\\b")
    desc = _multiple(world, q1, q2)
    status = enqueue_message_to_an_open_queue(world.env, desc, Message(body=b"x" * 2000))
    assert status == QUEUE_QUOTA_EXCEEDED
    assert len(q1.message_position_list) == 0 and len(q2.message_position_list) == 0


def test_enqueue_to_a_descriptor_without_a_queue_reports_the_queue_not_available(world):
    desc = OpenQueueDescriptor(access_type=QueueAccessType.SendAccess, queue_reference=None)
    assert (enqueue_message_to_an_open_queue(world.env, desc, Message())
            == MQ_ERROR_QUEUE_NOT_AVAILABLE)


# ---------------------------------------------------------------------------------------------
# The dispatch collection and Dispatch Send Message
# ---------------------------------------------------------------------------------------------

def _outgoing(world, name="DIRECT=TCP:10.0.0.1\\private$\\q", base_priority=0):
    q = OutgoingQueue(pathname=name, destination_format_name=name, queue_type=QueueType.Private,
                      queue_manager=world.qm, base_priority=base_priority)
    world.qm.queue_collection.append(q)
    return q


def _position(world, queue, priority=3):
    message = Message(body=b"m", priority=priority)
    assert enqueue_message(world.env, queue, message) == 0
    return message.message_position_reference


@pytest.mark.req("MS-MQDMPR/3.1.7.1.28/R3", "MS-MQDMPR/3.1.7.1.28/R4", "MS-MQDMPR/3.1.7.1.28/R5",
                 "MS-MQDMPR/3.1.7.1.28/R6", "MS-MQDMPR/3.1.7.1.28/R8")
def test_add_to_dispatch_collection_makes_an_entry_with_the_summed_priority(world):
    q = _outgoing(world, base_priority=2)
    pos = _position(world, q, priority=5)
    add_message_to_dispatch_collection(world.env, "session-1", pos)
    [entry] = world.qm.dispatch_collection
    assert entry.message_position_reference is pos
    assert entry.protocol_data == "session-1"
    assert entry.priority == 7


@pytest.mark.req("MS-MQDMPR/3.1.7.1.28/R7", "MS-MQDMPR/3.1.7.1.28/R9", "MS-MQDMPR/3.1.7.3.9/R3",
                 "MS-MQDMPR/3.1.7.3.9/R5", "MS-MQDMPR/3.1.7.3.9/R6", "MS-MQDMPR/3.1.7.3.9/R7",
                 "MS-MQDMPR/3.1.7.3.9/R8")
def test_adding_to_an_idle_dispatch_collection_hands_the_message_to_mqqb(world):
    q = _outgoing(world)
    pos = _position(world, q)
    add_message_to_dispatch_collection(world.env, "session-1", pos)
    [entry] = world.qm.dispatch_collection
    assert entry.send_in_progress is True
    [hand_off] = dispatched(world.env)
    assert (hand_off.protocol, hand_off.position, hand_off.message_position) == (
        MS_MQQB, "session-1", pos)


@pytest.mark.req("MS-MQDMPR/3.1.7.3.9/R9", "MS-MQDMPR/3.1.7.3.9/R10", "MS-MQDMPR/3.1.7.3.9/R11")
def test_an_entry_without_protocol_data_goes_to_srmp(world):
    q = _outgoing(world, "DIRECT=HTTP://host/msmq/private$/q")
    pos = _position(world, q)
    add_message_to_dispatch_collection(world.env, None, pos)
    [hand_off] = dispatched(world.env)
    assert (hand_off.protocol, hand_off.position, hand_off.message_position) == (
        MC_MQSRM, None, pos)


@pytest.mark.req("MS-MQDMPR/3.1.7.3.9/R3")
def test_nothing_more_is_sent_while_a_send_is_in_progress(world):
    q = _outgoing(world)
    add_message_to_dispatch_collection(world.env, "s", _position(world, q, priority=1))
    add_message_to_dispatch_collection(world.env, "s", _position(world, q, priority=7))
    assert len(world.qm.dispatch_collection) == 2
    assert len(dispatched(world.env)) == 1
    assert dispatch_send_message(world.env) is None
    assert [e.send_in_progress for e in world.qm.dispatch_collection] == [True, False]


@pytest.mark.req("MS-MQDMPR/3.1.7.1.29/R3", "MS-MQDMPR/3.1.7.1.29/R4", "MS-MQDMPR/3.1.7.3.9/R4")
def test_removing_the_sent_entry_sends_the_highest_priority_one_next(world):
    q = _outgoing(world)
    first = _position(world, q, priority=3)
    add_message_to_dispatch_collection(world.env, "s", first)
    low, high, mid = (_position(world, q, priority=p) for p in (1, 6, 4))
    for pos in (low, high, mid):
        add_message_to_dispatch_collection(world.env, "s", pos)
    remove_message_from_dispatch_collection(world.env, first)
    assert first not in [e.message_position_reference for e in world.qm.dispatch_collection]
    assert [h.message_position for h in dispatched(world.env)] == [first, high]


@pytest.mark.req("MS-MQDMPR/3.1.7.1.29/R3", "MS-MQDMPR/3.1.7.1.29/R4")
def test_removing_a_message_that_is_not_there_still_raises_dispatch(world):
    q = _outgoing(world)
    add_message_to_dispatch_collection(world.env, "s", _position(world, q))
    world.qm.dispatch_collection[0].send_in_progress = False  # as if the protocol reset it
    remove_message_from_dispatch_collection(world.env, _position(world, q))
    assert len(world.qm.dispatch_collection) == 1
    assert len(dispatched(world.env)) == 2


@pytest.mark.req("MS-MQDMPR/3.1.7.3.9/R4")
def test_dispatch_skips_deleted_positions_and_inactive_queues(world):
    q = _outgoing(world)
    inactive = world.queue(".\\private$\\idle")  # not outgoing, nobody has it open
    idle_pos = _position(world, inactive, priority=7)
    gone = _position(world, q, priority=7)
    kept = _position(world, q, priority=0)
    message_position_deleted(world.env, q, gone, MessageClass.AckReceive)
    for pos in (idle_pos, gone, kept):
        world.qm.dispatch_collection.append(
            DispatchEntry(message_position_reference=pos, protocol_data="s", priority=10))
    hand_off = dispatch_send_message(world.env)
    assert hand_off.message_position is kept
    assert [e.send_in_progress for e in world.qm.dispatch_collection] == [False, False, True]


def test_dispatch_with_nothing_eligible_sends_nothing(world):
    assert dispatch_send_message(world.env) is None
    assert dispatched(world.env) == []


@pytest.mark.req("MS-MQDMPR/3.1.7.1.34/R3")
def test_remove_by_queue_drops_every_entry_of_that_queue_only(world):
    q1, q2 = _outgoing(world, "DIRECT=TCP:10.0.0.1\\q"), _outgoing(world, "DIRECT=TCP:10.0.0.2\\q")
    for q in (q1, q2, q1):
        add_message_to_dispatch_collection(world.env, "s", _position(world, q))
    remove_messages_from_dispatch_collection_by_queue(world.env, q1)
    assert [e.message_position_reference.queue_reference for e in world.qm.dispatch_collection] \
        == [q2]
    assert len(dispatched(world.env)) == 1  # the section raises no Dispatch Send Message


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.30 Construct a UserMessage Packet
# ---------------------------------------------------------------------------------------------

@pytest.mark.req("MS-MQDMPR/3.1.7.1.30/R3", "MS-MQDMPR/3.1.7.1.30/R4", "MS-MQDMPR/3.1.7.1.30/R8")
def test_a_plain_message_gets_base_user_and_properties_headers(world):
    message = Message(body=b"payload", label="hi", priority=5, application_tag=9,
                      body_type=0x11, destination_queue_format_name="DIRECT=OS:h\\q")
    packet = construct_a_user_message_packet(message)
    assert [type(h) for h in packet.headers] == [BaseHeader, UserHeader, MessagePropertiesHeader]
    base, user, props = packet.headers
    assert (base.version_number, base.signature) == (0x10, 0x524F494C)
    assert base.flags.pr == 5 and not base.flags.in_ and not base.flags.dh
    flags = user.flags
    assert flags.mp and not (flags.th or flags.sh or flags.mq or flags.ah or flags.hh)
    assert user.destination_queue == "DIRECT=OS:h\\q"
    assert (props.message_body, props.label, props.application_tag, props.body_type) == (
        b"payload", "hi", 9, 0x11)


@pytest.mark.req("MS-MQDMPR/3.1.7.1.30/R5", "MS-MQDMPR/3.1.7.1.30/R6")
def test_a_transactional_message_carries_a_transaction_header(world):
    tx_id = uuid.UUID(int=42)
    message = Message(transaction_identifier=tx_id, priority=6,
                      delivery_guarantee=MessageDeliveryGuarantee.Recoverable,
                      transactional_message_sequence_identifier=TxSequenceId(1, 2),
                      transaction_sequence_number=3, transaction_previous_sequence_number=2,
                      first_in_transaction=True, final_ack_required=True)
    packet = construct_a_user_message_packet(message)
    th = packet.transaction_header
    assert isinstance(th, TransactionHeader)
    assert packet.user_header.flags.th
    assert packet.headers.index(th) == 2  # right after the UserHeader
    assert (th.flags.id, th.flags.fm, th.flags.lm, th.flags.fa, th.flags.cg) == (
        tx_id, True, False, True, False)
    assert (th.tx_sequence_id, th.tx_sequence_number, th.previous_tx_sequence_number) == (
        TxSequenceId(1, 2), 3, 2)
    assert packet.base_header.flags.pr == 0  # MS-MQMQ 2.2.19.1: 0 for a transactional message


@pytest.mark.req("MS-MQDMPR/3.1.7.1.30/R6", "MS-MQDMPR/3.1.7.1.30/R7")
def test_no_transaction_or_security_header_unless_the_message_calls_for_them(world):
    packet = construct_a_user_message_packet(Message())
    assert packet.transaction_header is None and packet.security_header is None
    assert not packet.user_header.flags.th and not packet.user_header.flags.sh


@pytest.mark.req("MS-MQDMPR/3.1.7.1.30/R7")
def test_an_authenticated_message_carries_a_security_header(world):
    message = Message(authentication_level=MessageAuthenticationLevel.Sig30,
                      sender_identifier=b"SID", signature=b"sig",
                      sender_identifier_type=MessageSenderIdentifierType.Sid,
                      privacy_level=MessagePrivacyLevel.Enhanced)
    packet = construct_a_user_message_packet(message)
    sh = packet.security_header
    assert isinstance(sh, SecurityHeader) and packet.user_header.flags.sh
    assert (sh.flags.st, sh.flags.au, sh.flags.as_, sh.flags.eb, sh.flags.de, sh.flags.ai) == (
        MessageSenderIdentifierType.Sid, False, 0, True, True, True)
    assert (sh.security_data.security_id, sh.security_data.signature) == (b"SID", b"sig")
    assert sh.security_data.provider_info is None


@pytest.mark.req("MS-MQDMPR/3.1.7.1.30/R8")
def test_acknowledgements_requested_become_the_properties_header_flags(world):
    message = Message(acknowledgements_requested=[A.AckFullReachQueue, A.AckPosReceive],
                      class_=MessageClass.Report, correlation_identifier=OBJECTID(GUID_NULL, 5))
    props = construct_a_user_message_packet(message).message_properties_header
    assert (props.flags.pa, props.flags.pr, props.flags.na, props.flags.nr) == (
        True, True, True, False)
    assert props.message_class is MessageClass.Report
    assert props.correlation_id == OBJECTID(GUID_NULL, 5)


@pytest.mark.req("MS-MQDMPR/3.1.7.1.30/R9")
def test_a_tracing_queue_adds_a_debug_header_announced_by_the_base_header(world):
    trace_q = uuid.UUID(int=99)
    packet = construct_a_user_message_packet(
        Message(tracing_queue_identifier=trace_q, tracing_requested=True))
    dh = packet.debug_header
    assert isinstance(dh, DebugHeader)
    assert (dh.flags.qt, dh.queue_identifier) == (0x1, trace_q)
    assert packet.base_header.flags.dh and packet.base_header.flags.tr
    assert construct_a_user_message_packet(Message()).debug_header is None


def test_tracing_without_a_tracing_queue_still_carries_a_debug_header(world):
    packet = construct_a_user_message_packet(Message(tracing_requested=True))
    assert packet.debug_header == DebugHeader()  # QT 0x0, no QueueIdentifier
    assert packet.base_header.flags.dh


@pytest.mark.req("MS-MQDMPR/3.1.7.1.30/R10")
def test_a_multiple_destination_message_carries_a_multi_queue_format_header(world):
    names = ["DIRECT=OS:a\\q", "DIRECT=OS:b\\q"]
    message = Message(destination_multi_queue_format_name=names,
                      destination_queue_format_name=names[1])
    packet = construct_a_user_message_packet(message)
    mq = packet.multi_queue_format_header
    assert isinstance(mq, MultiQueueFormatHeader) and packet.user_header.flags.mq
    assert mq.destination == tuple(names)
    assert packet.headers[-1] is mq
    assert construct_a_user_message_packet(Message()).multi_queue_format_header is None


@pytest.mark.req("MS-MQDMPR/3.1.7.1.27/R10", "MS-MQDMPR/3.1.7.1.30/R10")
def test_each_copy_of_a_fanned_out_message_lists_all_destinations(world):
    q1, q2 = world.queue(".\\private$\\a"), world.queue(".\\private$\\b")
    desc = _multiple(world, q1, q2)
    enqueue_message_to_an_open_queue(world.env, desc, Message(body=b"x"))
    copy_ = q2.message_position_list.head.message_reference
    packet = construct_a_user_message_packet(copy_)
    assert packet.multi_queue_format_header.destination == tuple(desc.format_name.split(","))
    assert packet.user_header.destination_queue == (
        desc.open_queue_descriptor_collection[1].format_name)
