"""MS-MQDMPR 3.1.7.2 Events Consumed By Related Protocols (3.1.7.2.1-3.1.7.2.7) and the Time To
Be Received Timer (3.1.2.4) that raises the last of them.

Message Position Deleted is also where a queue with Journaling True keeps its queue journal: a
message a receiver consumed leaves a copy in the queue's JournalQueueReference
(``journal_message``, choice 2; errata queue-journal).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from mqconform.model.adm import (
    MessageClass,
    MessagePositionState,
    TransactionalOperation,
    TransactionalOperationType,
)
from mqconform.model.internal import release_next_reader, waiting_message_read_satisfied
from mqconform.model.runtime import Environment

INFINITE_TTBR = 0xFFFFFFFF


def storage_size(message: Any) -> int:
    """The storage space, in bytes, consumed by the headers and body of a message. The document
    leaves the measure to the implementation (choice 1): the model counts the serialized packet
    when the message has one, else its body and extension."""
    packet = getattr(message, "packet", None)
    if packet:
        return len(packet)
    return len(message.body or b"") + len(getattr(message, "extension", b"") or b"")


def count_bytes(queue: Any, position: Any, present: bool) -> None:
    """Keep Queue.TotalBytes what MS-MQDMPR 3.1.1.2 defines: "the storage space, in bytes,
    consumed by all the messages in a queue".

    Message Position Available adds a message's size each time the message becomes Available
    (3.1.7.2.2/R3), also when a Locked message comes back (RR_NACK, an abort, the Pending
    Request Cleanup Timer, a rundown), while Message Position Deleted subtracts it once
    (3.1.7.2.1/R3): read literally, the count grows at every NACK and never returns (errata
    ``total-bytes``, ``mqconform spec errata``). The model counts each position's message
    once, from its first Available until it leaves the queue, whichever way it leaves (Move
    Message and a committed move set Deleted without the event)."""
    if position._counted is present:
        return
    size = storage_size(position.message_reference)
    queue.total_bytes += size if present else -size
    position._counted = present


def message_position_deleted(env: Environment, queue: Any, position: Any, reason: Any) -> None:
    """MS-MQDMPR 3.1.7.2.1 Message Position Deleted (MS-MQDMPR/3.1.7.2.1/R1
    MS-MQDMPR/3.1.7.2.1/R2). ``reason`` is a MessageClass value for consuming protocols; a
    message a receiver consumed (AckReceive) is copied to the queue journal of a queue with
    Journaling True (``journal_message``, choice 2)."""
    count_bytes(queue, position, False)  # MS-MQDMPR/3.1.7.2.1/R3
    position.state = MessagePositionState.Deleted  # MS-MQDMPR/3.1.7.2.1/R4
    queue.message_position_list.remove(position)  # MS-MQDMPR/3.1.7.2.1/R5
    index = queue._positions_by_lookup_id
    if index is not None:
        index.pop(position.message_reference.lookup_identifier, None)
    env.cancel_timer(time_to_be_received_timer_key(position.message_reference))
    position._deleted_reason = reason
    # MS-MQDMPR/3.1.7.2/R1: the core queue manager processes the event; keeping the queue
    # journal is the processing 3.1.7.2 lets the queue manager add (choice 2)
    if reason is MessageClass.AckReceive:
        journal_message(env, queue, position.message_reference)


def journal_message(env: Environment, queue: Any, message: Any) -> int | None:
    """Copy a message a receiver consumed from ``queue`` to the queue's journal when the queue's
    Journaling is True (choice 2). Returns Enqueue Message's rStatus for the copy (0: it is in
    the journal), or None when the queue keeps no journal.

    MS-MQDMPR 3.1.1.2 says that Journaling "specifies whether journaling is enabled for the
    queue" and that JournalQueueReference is "a reference to the queue journal for this queue"
    (Create Queue makes it "to act as the queue journal", MS-MQDMPR/3.1.7.1.3/R8); MS-MQMR
    3.1.4.1 reports the journal's messages and bytes. No event says what enters the journal;
    the glossary says a queue journal "can be a subqueue that holds a copy of each message
    consumed from its parent queue" (and, under "queue journal", copies of messages sent with
    positive source journaling, which 3.1.1.12 sends to the system queue journal: errata
    queue-journal). The queue manager here:

    * journals what a receiver consumed: Message Position Deleted with iReason AckReceive,
      which every receive that removes a message ends in (Dequeue Message, Dequeue Message End
      with iDeleteMessage, Read Message By Lookup Identifier, Transaction Commit of a
      transactional receive). A peek removes nothing; a purge (NackQueuePurged), a deleted
      queue (NackQueueDeleted), an expired message (NackReceiveTimeout) and a receive its
      transaction rejected (NackReceiveRejected) consume nothing; a moved message (Move
      Message) stays in the queue's subqueue. None of them is journaled. A queue without a
      JournalQueueReference (a subqueue, MS-MQDMPR/3.1.7.1.3/R7) journals nothing.
    * puts in the journal a new Message with every attribute of the consumed one (its headers
      and body, so the storage space it consumes, are the same) by Enqueue Message
      (MS-MQDMPR/3.1.7.1.9/R1): the copy takes the next LookupIdentifier and counts in the
      journal's TotalBytes. Enqueue Message refuses a copy that would exceed the journal queue's
      Quota (the queue's JournalQuota, model/queue_management.py Create Queue) or the
      QueueManagerQuota; that copy is discarded, as MS-MQDMPR/3.1.1.12/R20 discards a message
      over the quota of the system queue journal, and the receive is not affected.
    * gives the copy, as ArrivalTime, the time it was added to the journal's
      MessagePositionList (3.1.1.12): the model has no clock of its own, so that is the
      message's ArrivalTime, or the ArrivalTime of the last copy of its priority in the journal
      if that is later (the journal's list stays in arrival order within priority,
      MS-MQDMPR/3.1.1.2/R11).
    """
    journal = queue.journal_queue_reference
    if not queue.journaling or journal is None:
        return None
    from mqconform.model.message_ops import enqueue_message  # 3.1.7.1.9 raises this module's

    copy = copy_of_message(message)
    last = journal.message_position_list.last_of_priority(copy.priority)
    if last is not None and last.message_reference is not None:
        copy.arrival_time = max(copy.arrival_time, last.message_reference.arrival_time)
    return enqueue_message(env, journal, copy)  # MS-MQDMPR/3.1.7.1.9/R1


def copy_of_message(message: Any) -> Any:
    """A new Message ADM element instance with the attributes of ``message`` (its lists copied),
    in no MessagePositionList yet."""
    values = {f.name: getattr(message, f.name) for f in fields(message) if f.init}
    values["message_position_reference"] = None
    return type(message)(**{name: list(value) if isinstance(value, list) else value
                            for name, value in values.items()})


def message_position_available(env: Environment, queue: Any, position: Any) -> None:
    """MS-MQDMPR 3.1.7.2.2 Message Position Available (MS-MQDMPR/3.1.7.2.2/R1
    MS-MQDMPR/3.1.7.2.2/R2)."""
    count_bytes(queue, position, True)  # MS-MQDMPR/3.1.7.2.2/R3 (once: count_bytes)
    position.state = MessagePositionState.Available  # MS-MQDMPR/3.1.7.2.2/R4
    for queue_desc in list(queue.open_queue_descriptor_collection):  # MS-MQDMPR/3.1.7.2.2/R5
        for reader in list(  # MS-MQDMPR/3.1.7.2.2/R6
                queue_desc.waiting_message_read_operation_collection):
            if not env.is_waiting(reader):
                continue  # satisfied or cancelled earlier in this loop
            queue._released_reader = False
            waiting_message_read_satisfied(env,  # MS-MQDMPR/3.1.7.2.2/R7
                                           reader=reader,  # MS-MQDMPR/3.1.7.2.2/R8
                                           position=position)  # MS-MQDMPR/3.1.7.2.2/R9
            if reader.destructive_read:  # MS-MQDMPR/3.1.7.2.2/R10
                return  # MS-MQDMPR/3.1.7.2.2/R11
            # MS-MQDMPR/3.1.7.2.2/R12 MS-MQDMPR/3.1.7.2.2/R13: the satisfied peek ran to its
            # end inside Waiting Message Read Satisfied and released the next reader there
            if not queue._released_reader:
                release_next_reader(env, queue)
            if position.state is not MessagePositionState.Available:
                return  # a reader took it (a receive cannot follow on a gone message)


def pause_queue(queue: Any) -> None:
    """MS-MQDMPR 3.1.7.2.3 Pause Queue (MS-MQDMPR/3.1.7.2.3/R1 MS-MQDMPR/3.1.7.2.3/R2)."""
    from mqconform.model.adm import OutgoingQueueState

    queue.state = OutgoingQueueState.OnHold  # MS-MQDMPR/3.1.7.2.3/R3


def resume_queue(queue: Any) -> None:
    """MS-MQDMPR 3.1.7.2.4 Resume Queue (MS-MQDMPR/3.1.7.2.4/R1 MS-MQDMPR/3.1.7.2.4/R2)."""
    from mqconform.model.adm import OutgoingQueueState

    queue.state = OutgoingQueueState.Inactive  # MS-MQDMPR/3.1.7.2.4/R3


def begin_flow_control(env: Environment) -> None:
    """MS-MQDMPR 3.1.7.2.5 Begin Flow Control (MS-MQDMPR/3.1.7.2.5/R1
    MS-MQDMPR/3.1.7.2.5/R2)."""
    env.local_queue_manager.throttled = True  # MS-MQDMPR/3.1.7.2.5/R3


def end_flow_control(env: Environment) -> None:
    """MS-MQDMPR 3.1.7.2.6 End Flow Control (MS-MQDMPR/3.1.7.2.6/R1
    MS-MQDMPR/3.1.7.2.6/R2)."""
    env.local_queue_manager.throttled = False  # MS-MQDMPR/3.1.7.2.6/R3


def time_to_be_received_timer_start(env: Environment, message: Any) -> None:
    """MS-MQDMPR 3.1.2.4 Time To Be Received Timer: started for a message as it is enqueued;
    not enabled for 0xFFFFFFFF, expires at once for 0. TimeToBeReceived counts seconds."""
    ttbr = message.time_to_be_received
    if ttbr is None or ttbr == INFINITE_TTBR:
        return
    env.start_timer(int(ttbr) * 1000, lambda: _time_to_be_received_timer_fired(env, message),
                    key=time_to_be_received_timer_key(message))


def time_to_be_received_timer_key(message: Any) -> object:
    """The one object that names a message's Time To Be Received Timer."""
    key = message._ttbr_timer_key
    if key is None:
        key = message._ttbr_timer_key = object()
    return key


def _time_to_be_received_timer_fired(env: Environment, message: Any) -> None:
    position = message.message_position_reference
    if position is None or position.state is MessagePositionState.Deleted:
        return
    # MS-MQDMPR/3.1.2.4/R1: only if that message is still in the queue
    time_to_be_received_timer_expired(env, message)


def time_to_be_received_timer_expired(env: Environment, message: Any) -> None:
    """MS-MQDMPR 3.1.7.2.7 Time To Be Received Timer Expired (MS-MQDMPR/3.1.7.2.7/R1
    MS-MQDMPR/3.1.7.2.7/R2)."""
    position = message.message_position_reference
    if message.transaction_identifier is not None:  # MS-MQDMPR/3.1.7.2.7/R3
        position.state = MessagePositionState.Locked  # MS-MQDMPR/3.1.7.2.7/R4
        operation = TransactionalOperation(  # MS-MQDMPR/3.1.7.2.7/R5
            operation_type=TransactionalOperationType.Dequeue,  # MS-MQDMPR/3.1.7.2.7/R6
            message_position_reference=position,  # MS-MQDMPR/3.1.7.2.7/R7
            dequeue_reason=MessageClass.NackReceiveTimeout)  # MS-MQDMPR/3.1.7.2.7/R8
        for transaction in env.local_queue_manager.transaction_collection:  # .../R9
            if transaction.identifier == message.transaction_identifier:
                transaction.transactional_operation_collection.append(operation)
                break
        return
    # MS-MQDMPR/3.1.7.2.7/R10
    message_position_deleted(env,  # MS-MQDMPR/3.1.7.2.7/R11
                             queue=position.queue_reference,  # MS-MQDMPR/3.1.7.2.7/R12
                             position=position,  # MS-MQDMPR/3.1.7.2.7/R13
                             reason=MessageClass.NackReceiveTimeout)  # MS-MQDMPR/3.1.7.2.7/R14
