"""MS-MQDMPR 3.1.7.1.9-3.1.7.1.16: the message operations that related protocols raise: Enqueue
Message, Dequeue Message, Dequeue Message Begin, Dequeue Message End, Read Message By Lookup
Identifier, Peek Next Message, Peek Message and Move Message.

Dequeue Message, Dequeue Message Begin, Peek Next Message and Peek Message can wait (Wait For New
Message); they are generators (see model/runtime.py) and return an :class:`EventResult`.
Timeouts are milliseconds (see model/internal.py).

Where the document leaves a gap the code closes it the way the rest of the document requires,
with a comment saying so:

1. The dequeue and peek seeks start from Start (which Seek Available Message Position turns
   into Head) where the text says Head, because starting the seek at Head would skip the first
   message (errata seek-from-head-skips-first).
2. A wait that ends with "Failed" (a zero timeout) is reported as MQ_ERROR_IO_TIMEOUT, the
   status the events list for a wait that produced no message.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from mqconform.model import cursor as cursor_events
from mqconform.model.adm import (
    MessageClass,
    MessagePosition,
    MessagePositionState,
    QueueType,
    TransactionalOperation,
    TransactionalOperationType,
)
from mqconform.model.consumed import (
    count_bytes,
    message_position_available,
    message_position_deleted,
    storage_size,
    time_to_be_received_timer_start,
)
from mqconform.model.internal import (
    WaitResult,
    release_next_reader,
    seek_available_message_position,
    seek_available_message_position_with_id,
    wait_for_new_message,
)
from mqconform.model.runtime import INFINITE, Environment, Wait
from mqconform.model.status import (
    MQ_ERROR_ILLEGAL_CURSOR_ACTION,
    MQ_ERROR_IO_TIMEOUT,
    MQ_ERROR_MESSAGE_ALREADY_RECEIVED,
    MQ_ERROR_MESSAGE_NOT_FOUND,
    MQ_ERROR_QUEUE_NOT_AVAILABLE,
    MQ_ERROR_TRANSACTION_SEQUENCE,
    MQ_OK,
)

Available = MessagePositionState.Available
Locked = MessagePositionState.Locked
Deleted = MessagePositionState.Deleted
PurgePending = MessagePositionState.PurgePending

#: Enqueue Message's rStatus values (3.1.7.1.9)
ENQUEUE_OK, QUEUE_QUOTA_EXCEEDED, QUEUE_MANAGER_QUOTA_EXCEEDED, TIMED_OUT_IN_TRANSIT = 0, 1, 2, 3


@dataclass(frozen=True)
class EventResult:
    """rStatus and rMessage of a message operation."""

    status: int
    message: Any = None


def _wait_status(result: WaitResult) -> int:
    # "Failed" comes from a wait that could not start (zero timeout): no message arrived in
    # the time allowed, which the events report as MQ_ERROR_IO_TIMEOUT.
    return MQ_ERROR_IO_TIMEOUT if result.status == "Failed" else result.status


def _index(queue: Any) -> dict[int, Any]:
    index = queue._positions_by_lookup_id
    if index is None:
        index = {p.message_reference.lookup_identifier: p for p in queue.message_position_list}
        queue._positions_by_lookup_id = index
    return index


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.9 Enqueue Message
# ---------------------------------------------------------------------------------------------

def restore_message(env: Environment, queue: Any, message: Any) -> None:
    """A recoverable message read back from persistent storage after a restart: put in the
    queue's MessagePositionList as Enqueue Message (3.1.7.1.9) would, keeping the
    LookupIdentifier it was given then (its attributes are all persistent:
    MS-MQDMPR/3.1.1.12/R66), and the queue manager's SequentialId past it so that identifiers
    keep increasing; its Time-To-Be-Received timer starts again."""
    qm = queue.queue_manager if queue.queue_manager is not None else env.local_queue_manager
    position = MessagePosition(message_reference=message, queue_reference=queue)
    message.message_position_reference = position
    qm.sequential_id = max(qm.sequential_id, message.lookup_identifier & 0x00FFFFFFFFFFFFFF)
    queue.message_position_list.insert(position)
    _index(queue)[message.lookup_identifier] = position
    count_bytes(queue, position, True)
    time_to_be_received_timer_start(env, message)


def enqueue_message(env: Environment, queue: Any, message: Any, transaction: Any = None) -> int:
    """MS-MQDMPR 3.1.7.1.9 Enqueue Message (MS-MQDMPR/3.1.7.1.9/R1 MS-MQDMPR/3.1.7.1.9/R2).
    Returns rStatus: 0 no error, 1 queue quota, 2 queue manager quota, 3 timed out in transit."""
    qm = queue.queue_manager if queue.queue_manager is not None else env.local_queue_manager
    size = storage_size(message)
    used = sum(q.total_bytes for q in qm.queue_collection)
    # QueueManagerQuota counts bytes, Queue.Quota kilobytes (3.1.1.1, 3.1.1.2)
    if qm.throttled or used + size > qm.queue_manager_quota:  # MS-MQDMPR/3.1.7.1.9/R3
        return QUEUE_MANAGER_QUOTA_EXCEEDED  # MS-MQDMPR/3.1.7.1.9/R4 MS-MQDMPR/3.1.7.1.9/R5
    if queue.total_bytes + size > queue.quota * 1024:  # MS-MQDMPR/3.1.7.1.9/R6
        return QUEUE_QUOTA_EXCEEDED  # MS-MQDMPR/3.1.7.1.9/R7 MS-MQDMPR/3.1.7.1.9/R8
    new_message_pos = MessagePosition(message_reference=message,  # MS-MQDMPR/3.1.7.1.9/R9
                                      queue_reference=queue)
    message.message_position_reference = new_message_pos
    qm.sequential_id = (qm.sequential_id + 1) & 0xFFFFFFFFFFFFFFFF  # MS-MQDMPR/3.1.7.1.9/R10
    if message.transactional_message_sequence_identifier:  # MS-MQDMPR/3.1.7.1.9/R11
        high = (0x07 - message.priority) & 0xFF
    else:
        high = 0x00
    message.lookup_identifier = (high << 56) | (  # MS-MQDMPR/3.1.7.1.9/R12
        qm.sequential_id & 0x00FFFFFFFFFFFFFF)
    queue.message_position_list.insert(new_message_pos)  # MS-MQDMPR/3.1.7.1.9/R13
    _index(queue)[message.lookup_identifier] = new_message_pos
    time_to_be_received_timer_start(env, message)  # MS-MQDMPR/3.1.7.1.9/R14
    if transaction is not None:  # MS-MQDMPR/3.1.7.1.9/R15
        new_message_pos.state = Locked  # MS-MQDMPR/3.1.7.1.9/R16
        operation = TransactionalOperation(  # MS-MQDMPR/3.1.7.1.9/R17
            operation_type=TransactionalOperationType.Enqueue,  # MS-MQDMPR/3.1.7.1.9/R18
            message_position_reference=new_message_pos)  # MS-MQDMPR/3.1.7.1.9/R19
        transaction.transactional_operation_collection.append(operation)  # .../R20
    else:  # MS-MQDMPR/3.1.7.1.9/R21
        message_position_available(env,  # MS-MQDMPR/3.1.7.1.9/R22
                                   queue=queue,  # MS-MQDMPR/3.1.7.1.9/R23
                                   position=new_message_pos)  # MS-MQDMPR/3.1.7.1.9/R24
    return ENQUEUE_OK  # MS-MQDMPR/3.1.7.1.9/R25


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.10 Dequeue Message and 3.1.7.1.11 Dequeue Message Begin
# ---------------------------------------------------------------------------------------------

def dequeue_message(env: Environment, queue_desc: Any, timeout: float = INFINITE,
                    cursor: Any = None, transaction: Any = None, tag: Any = None,
                    two_phase_read: bool = False) -> Generator[Wait, Any, EventResult]:
    """MS-MQDMPR 3.1.7.1.10 Dequeue Message (MS-MQDMPR/3.1.7.1.10/R1 MS-MQDMPR/3.1.7.1.10/R4).
    ``transaction`` and ``two_phase_read`` are mutually exclusive (MS-MQDMPR/3.1.7.1.10/R3);
    with ``two_phase_read`` the message is not deleted (MS-MQDMPR/3.1.7.1.10/R2)."""
    if queue_desc.queue_reference is None:  # MS-MQDMPR/3.1.7.1.10/R5
        return EventResult(MQ_ERROR_QUEUE_NOT_AVAILABLE)  # MS-MQDMPR/3.1.7.1.10/R6 .../R7
    if timeout is None:  # MS-MQDMPR/3.1.7.1.10/R8
        timeout = INFINITE
    queue = queue_desc.queue_reference  # MS-MQDMPR/3.1.7.1.10/R9
    position = None  # MS-MQDMPR/3.1.7.1.10/R10
    if cursor is not None:  # MS-MQDMPR/3.1.7.1.10/R11
        found = cursor_events.get_next_message_for_dequeue(  # MS-MQDMPR/3.1.7.1.10/R12
            cursor, no_wait=(timeout == 0))  # MS-MQDMPR/3.1.7.1.10/R13
        if found.status == "Succeeded":  # MS-MQDMPR/3.1.7.1.10/R14
            position = found.position  # MS-MQDMPR/3.1.7.1.10/R15
        elif found.status == "AlreadyReceived":  # MS-MQDMPR/3.1.7.1.10/R16
            return EventResult(MQ_ERROR_MESSAGE_ALREADY_RECEIVED)  # .../R17 .../R18
        elif found.status == "NotFound":  # MS-MQDMPR/3.1.7.1.10/R19
            return EventResult(MQ_ERROR_MESSAGE_NOT_FOUND)  # .../R20 MS-MQDMPR/3.1.7.1.10/R21
        elif found.status == "IllegalCursorAction":  # the cursor waits already (model.cursor)
            return EventResult(MQ_ERROR_ILLEGAL_CURSOR_ACTION)
        elif found.status == "Waiting":  # MS-MQDMPR/3.1.7.1.10/R22
            waited = yield from wait_for_new_message(  # MS-MQDMPR/3.1.7.1.10/R23
                env, queue_desc,  # MS-MQDMPR/3.1.7.1.10/R24
                timeout,  # MS-MQDMPR/3.1.7.1.10/R25
                destructive_read=True,  # MS-MQDMPR/3.1.7.1.10/R26
                tag=tag,  # MS-MQDMPR/3.1.7.1.10/R27
                cursor=cursor)  # MS-MQDMPR/3.1.7.1.10/R28
            if waited.status == "Success":  # MS-MQDMPR/3.1.7.1.10/R29
                position = waited.message_position  # MS-MQDMPR/3.1.7.1.10/R30
                cursor_events.message_available(  # MS-MQDMPR/3.1.7.1.10/R31
                    cursor, waited.message_position)  # MS-MQDMPR/3.1.7.1.10/R32
            else:  # MS-MQDMPR/3.1.7.1.10/R33
                cursor_events.wait_time_expired(cursor)  # MS-MQDMPR/3.1.7.1.10/R34
                return EventResult(_wait_status(waited))  # .../R35 MS-MQDMPR/3.1.7.1.10/R36
    else:  # MS-MQDMPR/3.1.7.1.10/R37
        positions = queue.message_position_list
        # the text seeks from Head; from Start the seek includes the Head itself (see module)
        found_position = seek_available_message_position(  # MS-MQDMPR/3.1.7.1.10/R38
            positions.start,  # MS-MQDMPR/3.1.7.1.10/R39
            queue,  # MS-MQDMPR/3.1.7.1.10/R40
            peek_operation=False,  # MS-MQDMPR/3.1.7.1.10/R41
            seek_direction="Forward")  # MS-MQDMPR/3.1.7.1.10/R42
        if found_position is positions.end:
            waited = yield from wait_for_new_message(  # MS-MQDMPR/3.1.7.1.10/R43
                env, queue_desc,  # MS-MQDMPR/3.1.7.1.10/R44
                timeout,  # MS-MQDMPR/3.1.7.1.10/R45
                destructive_read=True,  # MS-MQDMPR/3.1.7.1.10/R46
                tag=tag,  # MS-MQDMPR/3.1.7.1.10/R47
                cursor=None)  # MS-MQDMPR/3.1.7.1.10/R48
            if waited.status == "Success":  # MS-MQDMPR/3.1.7.1.10/R49
                position = waited.message_position  # MS-MQDMPR/3.1.7.1.10/R50
            else:  # MS-MQDMPR/3.1.7.1.10/R51
                return EventResult(_wait_status(waited))  # .../R52 MS-MQDMPR/3.1.7.1.10/R53
        else:
            position = found_position
    # MS-MQDMPR/3.1.7.1.10/R54: position is in the queue and Available
    assert position is not None and position.state is Available, position
    if transaction is not None:  # MS-MQDMPR/3.1.7.1.10/R55
        if transaction.identifier is not None:  # MS-MQDMPR/3.1.7.1.10/R56
            position.state = Locked  # MS-MQDMPR/3.1.7.1.10/R57
            transaction.transactional_operation_collection.append(  # MS-MQDMPR/3.1.7.1.10/R62
                TransactionalOperation(  # MS-MQDMPR/3.1.7.1.10/R58
                    operation_type=TransactionalOperationType.Dequeue,  # .../R59
                    message_position_reference=position,  # MS-MQDMPR/3.1.7.1.10/R60
                    dequeue_reason=MessageClass.AckReceive))  # MS-MQDMPR/3.1.7.1.10/R61
    else:  # MS-MQDMPR/3.1.7.1.10/R63
        if two_phase_read:  # MS-MQDMPR/3.1.7.1.10/R64
            position.state = Locked  # MS-MQDMPR/3.1.7.1.10/R65
        else:  # MS-MQDMPR/3.1.7.1.10/R66
            message_position_deleted(env,  # MS-MQDMPR/3.1.7.1.10/R67
                                     queue=queue,  # MS-MQDMPR/3.1.7.1.10/R68
                                     position=position,  # MS-MQDMPR/3.1.7.1.10/R69
                                     reason=MessageClass.AckReceive)  # .../R70
    return EventResult(MQ_OK,  # MS-MQDMPR/3.1.7.1.10/R72
                       position.message_reference)  # MS-MQDMPR/3.1.7.1.10/R71


def dequeue_message_begin(env: Environment, queue_desc: Any, timeout: float = INFINITE,
                          cursor: Any = None, tag: Any = None,
                          transaction: Any = None) -> Generator[Wait, Any, EventResult]:
    """MS-MQDMPR 3.1.7.1.11 Dequeue Message Begin (MS-MQDMPR/3.1.7.1.11/R1
    MS-MQDMPR/3.1.7.1.11/R2)."""
    if queue_desc.queue_reference is None:  # MS-MQDMPR/3.1.7.1.11/R3
        return EventResult(MQ_ERROR_QUEUE_NOT_AVAILABLE)  # .../R4 MS-MQDMPR/3.1.7.1.11/R5
    if timeout is None:  # MS-MQDMPR/3.1.7.1.11/R6
        timeout = INFINITE
    result = yield from dequeue_message(  # MS-MQDMPR/3.1.7.1.11/R7
        env, queue_desc,  # MS-MQDMPR/3.1.7.1.11/R8
        timeout=timeout,  # MS-MQDMPR/3.1.7.1.11/R9
        cursor=cursor,  # MS-MQDMPR/3.1.7.1.11/R10
        # MS-MQDMPR/3.1.7.1.11/R11: iTransaction and iTwoPhaseRead are mutually exclusive
        # (MS-MQDMPR/3.1.7.1.10/R3); a transactional begin locks through the transaction
        transaction=transaction,
        tag=tag,  # MS-MQDMPR/3.1.7.1.11/R12
        two_phase_read=transaction is None)  # MS-MQDMPR/3.1.7.1.11/R13
    return EventResult(result.status,  # MS-MQDMPR/3.1.7.1.11/R15
                       result.message)  # MS-MQDMPR/3.1.7.1.11/R14


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.12 Dequeue Message End
# ---------------------------------------------------------------------------------------------

def dequeue_message_end(env: Environment, queue_desc: Any, message: Any, delete_message: bool,
                        transactional: bool = False) -> int:
    """MS-MQDMPR 3.1.7.1.12 Dequeue Message End (MS-MQDMPR/3.1.7.1.12/R1
    MS-MQDMPR/3.1.7.1.12/R2)."""
    if queue_desc.queue_reference is None:  # MS-MQDMPR/3.1.7.1.12/R3
        return MQ_ERROR_QUEUE_NOT_AVAILABLE  # MS-MQDMPR/3.1.7.1.12/R4 MS-MQDMPR/3.1.7.1.12/R5
    position = message.message_position_reference
    if position.state is Available:  # MS-MQDMPR/3.1.7.1.12/R6
        return MQ_ERROR_TRANSACTION_SEQUENCE  # MS-MQDMPR/3.1.7.1.12/R7 MS-MQDMPR/3.1.7.1.12/R8
    if transactional:  # MS-MQDMPR/3.1.7.1.12/R9
        return MQ_OK  # MS-MQDMPR/3.1.7.1.12/R10 MS-MQDMPR/3.1.7.1.12/R11
    if delete_message or position.state is PurgePending:  # MS-MQDMPR/3.1.7.1.12/R12
        message_position_deleted(  # MS-MQDMPR/3.1.7.1.12/R13
            env,
            queue=queue_desc.queue_reference,  # MS-MQDMPR/3.1.7.1.12/R14
            position=position,  # MS-MQDMPR/3.1.7.1.12/R15
            reason=(MessageClass.NackQueuePurged  # MS-MQDMPR/3.1.7.1.12/R16
                    if position.state is PurgePending else MessageClass.AckReceive))
    else:  # MS-MQDMPR/3.1.7.1.12/R17
        message_position_available(env,  # MS-MQDMPR/3.1.7.1.12/R18
                                   queue=queue_desc.queue_reference,  # MS-MQDMPR/3.1.7.1.12/R19
                                   position=position)  # MS-MQDMPR/3.1.7.1.12/R20
    return MQ_OK  # MS-MQDMPR/3.1.7.1.12/R21


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.13 Read Message By Lookup Identifier
# ---------------------------------------------------------------------------------------------

def read_message_by_lookup_identifier(env: Environment, queue_desc: Any, lookup_id: int,
                                      peek_operation: bool, lookup_operation: Any,
                                      transaction: Any = None,
                                      two_phase_read: bool = False) -> EventResult:
    """MS-MQDMPR 3.1.7.1.13 Read Message By Lookup Identifier (MS-MQDMPR/3.1.7.1.13/R1
    MS-MQDMPR/3.1.7.1.13/R5). With ``peek_operation`` the message stays in the queue
    (MS-MQDMPR/3.1.7.1.13/R2) and no transaction may be given (MS-MQDMPR/3.1.7.1.13/R3); with
    ``two_phase_read`` it is not deleted (MS-MQDMPR/3.1.7.1.13/R4)."""
    if queue_desc.queue_reference is None:  # MS-MQDMPR/3.1.7.1.13/R6
        return EventResult(MQ_ERROR_QUEUE_NOT_AVAILABLE)  # .../R7 MS-MQDMPR/3.1.7.1.13/R8
    queue = queue_desc.queue_reference  # MS-MQDMPR/3.1.7.1.13/R9
    # MS-MQDMPR/3.1.7.1.13/R10
    seek = seek_available_message_position_with_id(  # MS-MQDMPR/3.1.7.1.13/R11
        queue,  # MS-MQDMPR/3.1.7.1.13/R12
        lookup_id,  # MS-MQDMPR/3.1.7.1.13/R13
        peek_operation,  # MS-MQDMPR/3.1.7.1.13/R14
        lookup_operation)  # MS-MQDMPR/3.1.7.1.13/R15
    position = seek.message_position  # MS-MQDMPR/3.1.7.1.13/R16
    if seek.status != MQ_OK:  # MS-MQDMPR/3.1.7.1.13/R17
        return EventResult(seek.status)  # MS-MQDMPR/3.1.7.1.13/R18 MS-MQDMPR/3.1.7.1.13/R19
    positions = queue.message_position_list
    if position is None or position is positions.end or position is positions.start:
        # the seek ran off the list: no message there (the document's "End position
        # indicates that no message is available", 3.1.7.3.3)
        return EventResult(MQ_ERROR_MESSAGE_NOT_FOUND)
    # MS-MQDMPR/3.1.7.1.13/R20: position is Available or Locked
    if not peek_operation:  # MS-MQDMPR/3.1.7.1.13/R21
        if transaction is not None:  # MS-MQDMPR/3.1.7.1.13/R22
            if transaction.identifier is not None:  # MS-MQDMPR/3.1.7.1.13/R23
                position.state = Locked  # MS-MQDMPR/3.1.7.1.13/R24
                transaction.transactional_operation_collection.append(  # .../R29
                    TransactionalOperation(  # MS-MQDMPR/3.1.7.1.13/R25
                        operation_type=TransactionalOperationType.Dequeue,  # .../R26
                        message_position_reference=position,  # MS-MQDMPR/3.1.7.1.13/R27
                        dequeue_reason=MessageClass.AckReceive))  # MS-MQDMPR/3.1.7.1.13/R28
        else:  # MS-MQDMPR/3.1.7.1.13/R30
            if two_phase_read:  # MS-MQDMPR/3.1.7.1.13/R31
                position.state = Locked  # MS-MQDMPR/3.1.7.1.13/R32
            else:  # MS-MQDMPR/3.1.7.1.13/R33
                message_position_deleted(env,  # MS-MQDMPR/3.1.7.1.13/R34
                                         queue=queue,  # MS-MQDMPR/3.1.7.1.13/R35
                                         position=position,  # MS-MQDMPR/3.1.7.1.13/R36
                                         reason=MessageClass.AckReceive)  # .../R37
    return EventResult(MQ_OK,  # MS-MQDMPR/3.1.7.1.13/R39
                       position.message_reference)  # MS-MQDMPR/3.1.7.1.13/R38


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.14 Peek Next Message and 3.1.7.1.15 Peek Message
# ---------------------------------------------------------------------------------------------

def peek_next_message(env: Environment, queue_desc: Any, cursor: Any,
                      timeout: float = INFINITE) -> Generator[Wait, Any, EventResult]:
    """MS-MQDMPR 3.1.7.1.14 Peek Next Message (MS-MQDMPR/3.1.7.1.14/R1
    MS-MQDMPR/3.1.7.1.14/R2)."""
    if queue_desc.queue_reference is None:  # MS-MQDMPR/3.1.7.1.14/R3
        return EventResult(MQ_ERROR_QUEUE_NOT_AVAILABLE)  # .../R4 MS-MQDMPR/3.1.7.1.14/R5
    queue = queue_desc.queue_reference  # MS-MQDMPR/3.1.7.1.14/R6
    if timeout is None:  # MS-MQDMPR/3.1.7.1.14/R7
        timeout = INFINITE
    found = cursor_events.get_next_message_for_peek(cursor)  # MS-MQDMPR/3.1.7.1.14/R8
    if found.status == "Succeeded":  # MS-MQDMPR/3.1.7.1.14/R9
        return EventResult(MQ_OK,  # MS-MQDMPR/3.1.7.1.14/R11 MS-MQDMPR/3.1.7.1.14/R12
                           found.position.message_reference)  # MS-MQDMPR/3.1.7.1.14/R10
    if found.status == "IllegalCursorAction":  # MS-MQDMPR/3.1.7.1.14/R13
        return EventResult(MQ_ERROR_ILLEGAL_CURSOR_ACTION)  # .../R14 .../R15
    # MS-MQDMPR/3.1.7.1.14/R16: Waiting
    waited = yield from wait_for_new_message(  # MS-MQDMPR/3.1.7.1.14/R17
        env, queue_desc,  # MS-MQDMPR/3.1.7.1.14/R18
        timeout,  # MS-MQDMPR/3.1.7.1.14/R19
        destructive_read=False,  # MS-MQDMPR/3.1.7.1.14/R20
        tag=None,  # MS-MQDMPR/3.1.7.1.14/R21
        cursor=cursor)  # MS-MQDMPR/3.1.7.1.14/R22
    if waited.status == "Success":  # MS-MQDMPR/3.1.7.1.14/R23
        message = waited.message_position.message_reference  # MS-MQDMPR/3.1.7.1.14/R24
        cursor_events.message_available(  # MS-MQDMPR/3.1.7.1.14/R25
            cursor, waited.message_position)  # MS-MQDMPR/3.1.7.1.14/R26
        release_next_reader(env,  # MS-MQDMPR/3.1.7.1.14/R27
                            release_on_queue=queue)  # MS-MQDMPR/3.1.7.1.14/R28
        return EventResult(MQ_OK, message)  # MS-MQDMPR/3.1.7.1.14/R29 .../R30
    # MS-MQDMPR/3.1.7.1.14/R31
    cursor_events.wait_time_expired(cursor)  # MS-MQDMPR/3.1.7.1.14/R32
    return EventResult(_wait_status(waited))  # .../R33 MS-MQDMPR/3.1.7.1.14/R34


def peek_message(env: Environment, queue_desc: Any, timeout: float = INFINITE,
                 cursor: Any = None) -> Generator[Wait, Any, EventResult]:
    """MS-MQDMPR 3.1.7.1.15 Peek Message (MS-MQDMPR/3.1.7.1.15/R1 MS-MQDMPR/3.1.7.1.15/R2)."""
    if queue_desc.queue_reference is None:  # MS-MQDMPR/3.1.7.1.15/R3
        return EventResult(MQ_ERROR_QUEUE_NOT_AVAILABLE)  # .../R4 MS-MQDMPR/3.1.7.1.15/R5
    queue = queue_desc.queue_reference  # MS-MQDMPR/3.1.7.1.15/R6
    if timeout is None:  # MS-MQDMPR/3.1.7.1.15/R7
        timeout = INFINITE
    # MS-MQDMPR/3.1.7.1.15/R8
    if cursor is not None:  # MS-MQDMPR/3.1.7.1.15/R9
        found = cursor_events.get_message_for_peek(cursor)  # MS-MQDMPR/3.1.7.1.15/R10
        if found.status == "Succeeded":  # MS-MQDMPR/3.1.7.1.15/R11
            return EventResult(MQ_OK,  # MS-MQDMPR/3.1.7.1.15/R13 MS-MQDMPR/3.1.7.1.15/R14
                               found.position.message_reference)  # MS-MQDMPR/3.1.7.1.15/R12
        if found.status == "AlreadyReceived":  # MS-MQDMPR/3.1.7.1.15/R15
            return EventResult(MQ_ERROR_MESSAGE_ALREADY_RECEIVED)  # .../R16 .../R17
        if found.status == "IllegalCursorAction":  # the cursor waits already (model.cursor)
            return EventResult(MQ_ERROR_ILLEGAL_CURSOR_ACTION)
        # MS-MQDMPR/3.1.7.1.15/R18: Waiting
        waited = yield from wait_for_new_message(  # MS-MQDMPR/3.1.7.1.15/R19
            env, queue_desc,  # MS-MQDMPR/3.1.7.1.15/R20
            timeout,  # MS-MQDMPR/3.1.7.1.15/R21
            destructive_read=False,  # MS-MQDMPR/3.1.7.1.15/R22
            tag=None,  # MS-MQDMPR/3.1.7.1.15/R23
            cursor=cursor)  # MS-MQDMPR/3.1.7.1.15/R24
        if waited.status == "Success":  # MS-MQDMPR/3.1.7.1.15/R25
            message = waited.message_position.message_reference  # MS-MQDMPR/3.1.7.1.15/R26
            cursor_events.message_available(  # MS-MQDMPR/3.1.7.1.15/R27
                cursor, waited.message_position)  # MS-MQDMPR/3.1.7.1.15/R28
            release_next_reader(env,  # MS-MQDMPR/3.1.7.1.15/R29
                                release_on_queue=queue)  # MS-MQDMPR/3.1.7.1.15/R30
            return EventResult(MQ_OK, message)  # MS-MQDMPR/3.1.7.1.15/R31 .../R32
        # MS-MQDMPR/3.1.7.1.15/R33
        cursor_events.wait_time_expired(cursor)  # MS-MQDMPR/3.1.7.1.15/R34
        return EventResult(_wait_status(waited))  # .../R35 MS-MQDMPR/3.1.7.1.15/R36
    # MS-MQDMPR/3.1.7.1.15/R37
    positions = queue.message_position_list
    # the text seeks from Head; from Start the seek includes the Head itself (see module)
    found_position = seek_available_message_position(  # MS-MQDMPR/3.1.7.1.15/R38
        positions.start,  # MS-MQDMPR/3.1.7.1.15/R39
        queue,  # MS-MQDMPR/3.1.7.1.15/R40
        peek_operation=True,  # MS-MQDMPR/3.1.7.1.15/R41
        seek_direction="Forward")  # MS-MQDMPR/3.1.7.1.15/R42
    if found_position is positions.end:  # MS-MQDMPR/3.1.7.1.15/R43
        waited = yield from wait_for_new_message(  # MS-MQDMPR/3.1.7.1.15/R44
            env, queue_desc,  # MS-MQDMPR/3.1.7.1.15/R45
            timeout,  # MS-MQDMPR/3.1.7.1.15/R46
            destructive_read=False,  # MS-MQDMPR/3.1.7.1.15/R47
            tag=None,  # MS-MQDMPR/3.1.7.1.15/R48
            cursor=None)  # MS-MQDMPR/3.1.7.1.15/R49
        if waited.status == "Success":  # MS-MQDMPR/3.1.7.1.15/R50
            # a peek that waited releases the next reader like the cursor peeks do, so that
            # Message Position Available goes on to the readers behind it (3.1.7.2.2)
            release_next_reader(env, release_on_queue=queue)
            return EventResult(MQ_OK,  # MS-MQDMPR/3.1.7.1.15/R52 MS-MQDMPR/3.1.7.1.15/R53
                               waited.message_position.message_reference)  # .../R51
        # MS-MQDMPR/3.1.7.1.15/R54
        return EventResult(_wait_status(waited))  # .../R55 MS-MQDMPR/3.1.7.1.15/R56
    # MS-MQDMPR/3.1.7.1.15/R57
    return EventResult(MQ_OK,  # MS-MQDMPR/3.1.7.1.15/R59 MS-MQDMPR/3.1.7.1.15/R60
                       found_position.message_reference)  # MS-MQDMPR/3.1.7.1.15/R58


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.16 Move Message
# ---------------------------------------------------------------------------------------------

def move_message(env: Environment, message_pos: Any, target_queue: Any,
                 transaction: Any = None) -> None:
    """MS-MQDMPR 3.1.7.1.16 Move Message (MS-MQDMPR/3.1.7.1.16/R1 MS-MQDMPR/3.1.7.1.16/R3).
    No transaction may be given for a System target queue (MS-MQDMPR/3.1.7.1.16/R2)."""
    if transaction is None:  # MS-MQDMPR/3.1.7.1.16/R4
        message_pos.state = Deleted  # MS-MQDMPR/3.1.7.1.16/R5
        count_bytes(message_pos.queue_reference, message_pos, False)  # it left its queue
        message = message_pos.message_reference
        new_message_pos = MessagePosition(  # MS-MQDMPR/3.1.7.1.16/R6
            message_reference=message, state=Available, queue_reference=target_queue)
        target_queue.message_position_list.insert(new_message_pos)
        _index(target_queue)[message.lookup_identifier] = new_message_pos
        source = message_pos.queue_reference
        if source is not None and _index(source).get(message.lookup_identifier) is message_pos:
            del _index(source)[message.lookup_identifier]
        message.message_position_reference = new_message_pos
        if target_queue.queue_type is not QueueType.System:  # MS-MQDMPR/3.1.7.1.16/R7
            message_position_available(env,  # MS-MQDMPR/3.1.7.1.16/R8
                                       queue=target_queue,  # MS-MQDMPR/3.1.7.1.16/R9
                                       position=new_message_pos)  # MS-MQDMPR/3.1.7.1.16/R10
        return
    # MS-MQDMPR/3.1.7.1.16/R11
    message_pos.state = Locked  # MS-MQDMPR/3.1.7.1.16/R12
    transaction.transactional_operation_collection.append(  # MS-MQDMPR/3.1.7.1.16/R17
        TransactionalOperation(  # MS-MQDMPR/3.1.7.1.16/R13
            operation_type=TransactionalOperationType.Move,  # MS-MQDMPR/3.1.7.1.16/R14
            message_position_reference=message_pos,  # MS-MQDMPR/3.1.7.1.16/R15
            target_queue_reference=target_queue))  # MS-MQDMPR/3.1.7.1.16/R16
