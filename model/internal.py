"""MS-MQDMPR 3.1.7.3 Internal Events (3.1.7.3.1-3.1.7.3.7), with the Waiting Message Read Timer
(3.1.2.3) and its expiry event (3.1.6.3).

How a wait works here (see model/runtime.py): Wait For New Message adds a
WaitingMessageReadOperation ``readOp`` to the descriptor, starts the timer and yields
``Wait(readOp)``. Whichever comes first resumes it: Waiting Message Read Satisfied
(``("Satisfied", position)``, raised by Message Position Available, 3.1.7.2.2) or Waiting Message
Read Timer Stop (``("Stop", status)``, raised by the timer's expiry with MQ_ERROR_IO_TIMEOUT or by
Cancel Waiting Message Read Request, 3.1.7.1.17, with the caller's status).

Time: the document gives iTimeout in seconds. The model carries milliseconds, so that MS-MQRR's
ulTimeout (milliseconds) reaches the timer unrounded; ``INFINITE`` is the document's Infinite.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from mqconform.model.adm import MessagePositionState, WaitingMessageReadOperation
from mqconform.model.runtime import INFINITE, Environment, Wait
from mqconform.model.status import MQ_ERROR_IO_TIMEOUT

Available = MessagePositionState.Available
Locked = MessagePositionState.Locked


@dataclass(frozen=True)
class WaitResult:
    """rStatus ("Success", "Failed", or the status a Timer Stop carried) and rMessagePosition."""

    status: Any
    message_position: Any = None


# ---------------------------------------------------------------------------------------------
# 3.1.7.3.1 Wait For New Message
# ---------------------------------------------------------------------------------------------

def wait_for_new_message(env: Environment, queue_desc: Any, timeout: float,
                         destructive_read: bool, tag: Any = None,
                         cursor: Any = None) -> Generator[Wait, Any, WaitResult]:
    """MS-MQDMPR 3.1.7.3.1 Wait For New Message (MS-MQDMPR/3.1.7.3.1/R1
    MS-MQDMPR/3.1.7.3.1/R2). ``timeout`` in milliseconds."""
    if queue_desc.queue_reference is None:  # MS-MQDMPR/3.1.7.3.1/R3
        return WaitResult("Failed")  # MS-MQDMPR/3.1.7.3.1/R4 MS-MQDMPR/3.1.7.3.1/R5
    if timeout <= 0:  # MS-MQDMPR/3.1.7.3.1/R6
        return WaitResult("Failed")  # MS-MQDMPR/3.1.7.3.1/R7 MS-MQDMPR/3.1.7.3.1/R8
    # MS-MQDMPR/3.1.7.3.1/R9
    read_op = WaitingMessageReadOperation(  # MS-MQDMPR/3.1.7.3.1/R10
        destructive_read=destructive_read,  # MS-MQDMPR/3.1.7.3.1/R11
        tag=tag,  # MS-MQDMPR/3.1.7.3.1/R12
        cursor_reference=cursor)  # MS-MQDMPR/3.1.7.3.1/R13
    queue_desc.waiting_message_read_operation_collection.append(read_op)  # MS-MQDMPR/3.1.7.3.1/R14
    waiting_message_read_timer_start(env,  # MS-MQDMPR/3.1.7.3.1/R15
                                     reader=read_op,  # MS-MQDMPR/3.1.7.3.1/R16
                                     timeout=timeout)  # MS-MQDMPR/3.1.7.3.1/R17
    kind, value = yield Wait(read_op, "Wait For New Message")  # MS-MQDMPR/3.1.7.3.1/R18
    if kind == "Stop":  # MS-MQDMPR/3.1.7.3.1/R19
        result = WaitResult(value)  # MS-MQDMPR/3.1.7.3.1/R20
    else:  # MS-MQDMPR/3.1.7.3.1/R21
        result = WaitResult("Success",  # MS-MQDMPR/3.1.7.3.1/R22
                            value)  # MS-MQDMPR/3.1.7.3.1/R23
        env.cancel_timer(read_op)  # MS-MQDMPR/3.1.7.3.1/R24
    collection = queue_desc.waiting_message_read_operation_collection
    if read_op in collection:  # a cancel (3.1.7.1.17) has removed it already
        collection.remove(read_op)  # MS-MQDMPR/3.1.7.3.1/R25
    return result


# ---------------------------------------------------------------------------------------------
# 3.1.7.3.2 Seek Available Message Position
# ---------------------------------------------------------------------------------------------

def seek_available_message_position(initial_position: Any, queue: Any, peek_operation: bool,
                                    seek_direction: str = "Forward") -> Any:
    """MS-MQDMPR 3.1.7.3.2 Seek Available Message Position (MS-MQDMPR/3.1.7.3.2/R1
    MS-MQDMPR/3.1.7.3.2/R3). Returns rMessagePosition: an available position, or End (Start when
    seeking backward) when none is. ``seek_direction`` is "Forward" or "Backward"
    (MS-MQDMPR/3.1.7.3.2/R2)."""
    positions = queue.message_position_list
    iterator = initial_position  # MS-MQDMPR/3.1.7.3.2/R4
    if seek_direction == "Forward":  # MS-MQDMPR/3.1.7.3.2/R5
        if iterator is positions.start:  # MS-MQDMPR/3.1.7.3.2/R6
            iterator = positions.head  # MS-MQDMPR/3.1.7.3.2/R7
        else:  # MS-MQDMPR/3.1.7.3.2/R8
            iterator = positions.next_of(initial_position)  # MS-MQDMPR/3.1.7.3.2/R9
        while iterator is not positions.end and iterator.state is not Available:  # .../R10
            if (iterator.state is Locked and peek_operation  # MS-MQDMPR/3.1.7.3.2/R11
                    and iterator.message_reference.allow_peek_when_locked):
                return iterator  # MS-MQDMPR/3.1.7.3.2/R12 MS-MQDMPR/3.1.7.3.2/R13
            iterator = positions.next_of(iterator)  # MS-MQDMPR/3.1.7.3.2/R14
    else:  # MS-MQDMPR/3.1.7.3.2/R15
        if iterator is positions.end:  # MS-MQDMPR/3.1.7.3.2/R16
            iterator = positions.tail  # MS-MQDMPR/3.1.7.3.2/R17
        else:  # MS-MQDMPR/3.1.7.3.2/R18
            iterator = positions.previous_of(initial_position)  # MS-MQDMPR/3.1.7.3.2/R19
        while iterator is not positions.start and iterator.state is not Available:  # .../R20
            if (iterator.state is Locked and peek_operation  # MS-MQDMPR/3.1.7.3.2/R21
                    and iterator.message_reference.allow_peek_when_locked):
                return iterator  # MS-MQDMPR/3.1.7.3.2/R22 MS-MQDMPR/3.1.7.3.2/R23
            iterator = positions.previous_of(iterator)  # MS-MQDMPR/3.1.7.3.2/R24
    return iterator  # MS-MQDMPR/3.1.7.3.2/R25


# ---------------------------------------------------------------------------------------------
# 3.1.7.3.3 Seek Available Message Position With Id
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SeekResult:
    status: int
    message_position: Any = None


def _find_by_lookup_id(queue: Any, lookup_id: int) -> Any:
    index = queue._positions_by_lookup_id
    if index is not None:
        position = index.get(lookup_id)
        return position if position is not None and position._linked else None
    for position in queue.message_position_list:
        if position.message_reference.lookup_identifier == lookup_id:
            return position
    return None


def seek_available_message_position_with_id(queue: Any, lookup_id: int, peek_operation: bool,
                                            lookup_action: Any) -> SeekResult:
    """MS-MQDMPR 3.1.7.3.3 Seek Available Message Position With Id (MS-MQDMPR/3.1.7.3.3/R1
    MS-MQDMPR/3.1.7.3.3/R2). ``lookup_action`` is a MessageSeekAction."""
    from mqconform.model.status import (
        MQ_ERROR_MESSAGE_ALREADY_RECEIVED,
        MQ_ERROR_MESSAGE_NOT_FOUND,
        MQ_ERROR_TRANSACTION_USAGE,
        MQ_OK,
    )

    status = MQ_OK  # MS-MQDMPR/3.1.7.3.3/R3
    positions = queue.message_position_list
    initial_position = _find_by_lookup_id(queue, lookup_id)  # MS-MQDMPR/3.1.7.3.3/R4
    if initial_position is None:  # MS-MQDMPR/3.1.7.3.3/R5
        return SeekResult(MQ_ERROR_MESSAGE_NOT_FOUND)  # MS-MQDMPR/3.1.7.3.3/R6 .../R7
    action = lookup_action.name  # MS-MQDMPR/3.1.7.3.3/R8
    if action == "SeekFirst":  # MS-MQDMPR/3.1.7.3.3/R9
        position = seek_available_message_position(  # MS-MQDMPR/3.1.7.3.3/R10
            positions.start,  # MS-MQDMPR/3.1.7.3.3/R11
            queue,  # MS-MQDMPR/3.1.7.3.3/R12
            peek_operation,  # MS-MQDMPR/3.1.7.3.3/R13
            "Forward")  # MS-MQDMPR/3.1.7.3.3/R14
        return SeekResult(status, position)  # MS-MQDMPR/3.1.7.3.3/R15
    if action == "SeekPrevious":  # MS-MQDMPR/3.1.7.3.3/R16
        position = seek_available_message_position(  # MS-MQDMPR/3.1.7.3.3/R17
            initial_position,  # MS-MQDMPR/3.1.7.3.3/R18
            queue,  # MS-MQDMPR/3.1.7.3.3/R19
            peek_operation,  # MS-MQDMPR/3.1.7.3.3/R20
            "Backward")  # MS-MQDMPR/3.1.7.3.3/R21
        return SeekResult(status, position)  # MS-MQDMPR/3.1.7.3.3/R22
    if action == "SeekCurrent":  # MS-MQDMPR/3.1.7.3.3/R23
        message_pos = _find_by_lookup_id(queue, lookup_id)  # MS-MQDMPR/3.1.7.3.3/R24
        if message_pos is None:  # MS-MQDMPR/3.1.7.3.3/R25
            return SeekResult(MQ_ERROR_MESSAGE_NOT_FOUND)  # MS-MQDMPR/3.1.7.3.3/R26
        # MS-MQDMPR/3.1.7.3.3/R27
        if message_pos.state is Available:  # MS-MQDMPR/3.1.7.3.3/R28
            return SeekResult(status, message_pos)  # MS-MQDMPR/3.1.7.3.3/R29
        if peek_operation:  # MS-MQDMPR/3.1.7.3.3/R30
            if message_pos.state is Locked:  # MS-MQDMPR/3.1.7.3.3/R31
                # the document spells the attribute AllowPeekWhileLocked here and
                # AllowPeekWhenLocked in 3.1.7.3.2; it is the one Message attribute
                if message_pos.message_reference.allow_peek_when_locked:  # .../R32
                    return SeekResult(status, message_pos)  # MS-MQDMPR/3.1.7.3.3/R33
                # MS-MQDMPR/3.1.7.3.3/R34
                return SeekResult(MQ_ERROR_TRANSACTION_USAGE)  # MS-MQDMPR/3.1.7.3.3/R35
            if message_pos.state is MessagePositionState.Deleted:  # MS-MQDMPR/3.1.7.3.3/R36
                return SeekResult(MQ_ERROR_MESSAGE_ALREADY_RECEIVED)  # .../R37
            # MS-MQDMPR/3.1.7.3.3/R38
            return SeekResult(MQ_ERROR_MESSAGE_NOT_FOUND)  # MS-MQDMPR/3.1.7.3.3/R39
        # Not available, not a peek: the document sets no status (rStatus stays MQ_OK) and no
        # rMessagePosition. Returning End makes the caller see "no message" consistently.
        return SeekResult(MQ_ERROR_MESSAGE_NOT_FOUND)
    if action == "SeekNext":  # MS-MQDMPR/3.1.7.3.3/R40
        position = seek_available_message_position(  # MS-MQDMPR/3.1.7.3.3/R41
            initial_position,  # MS-MQDMPR/3.1.7.3.3/R42
            queue,  # MS-MQDMPR/3.1.7.3.3/R43
            peek_operation,  # MS-MQDMPR/3.1.7.3.3/R44
            "Forward")  # MS-MQDMPR/3.1.7.3.3/R45
        return SeekResult(status, position)  # MS-MQDMPR/3.1.7.3.3/R46
    if action == "SeekLast":  # MS-MQDMPR/3.1.7.3.3/R47
        position = seek_available_message_position(  # MS-MQDMPR/3.1.7.3.3/R48
            positions.end,  # MS-MQDMPR/3.1.7.3.3/R49
            queue,  # MS-MQDMPR/3.1.7.3.3/R50
            peek_operation,  # MS-MQDMPR/3.1.7.3.3/R51
            "Backward")  # MS-MQDMPR/3.1.7.3.3/R52
        return SeekResult(status, position)  # MS-MQDMPR/3.1.7.3.3/R53
    raise ValueError(f"not a MessageSeekAction: {lookup_action!r}")


# ---------------------------------------------------------------------------------------------
# 3.1.7.3.4-3.1.7.3.7 and the Waiting Message Read Timer (3.1.2.3, 3.1.6.3)
# ---------------------------------------------------------------------------------------------

def waiting_message_read_timer_start(env: Environment, reader: WaitingMessageReadOperation,
                                     timeout: float) -> None:
    """MS-MQDMPR 3.1.7.3.4 Waiting Message Read Timer Start (MS-MQDMPR/3.1.7.3.4/R1
    MS-MQDMPR/3.1.7.3.4/R2)."""
    # MS-MQDMPR/3.1.7.3.4/R3 MS-MQDMPR/3.1.2.3/R1: duration and reader given at initialization;
    # MS-MQDMPR/3.1.2.3/R2 expires after the duration; MS-MQDMPR/3.1.2.3/R3 Infinite never does
    env.start_timer(INFINITE if timeout == INFINITE else timeout,
                    lambda: waiting_message_read_timer_expired(env, reader), key=reader)


def waiting_message_read_timer_expired(env: Environment,
                                       reader: WaitingMessageReadOperation) -> None:
    """MS-MQDMPR 3.1.6.3 Waiting Message Read Timer Expired (MS-MQDMPR/3.1.6.3/R1
    MS-MQDMPR/3.1.6.3/R2)."""
    waiting_message_read_timer_stop(env,  # MS-MQDMPR/3.1.6.3/R3
                                    reader=reader,  # MS-MQDMPR/3.1.6.3/R4
                                    status=MQ_ERROR_IO_TIMEOUT)  # MS-MQDMPR/3.1.6.3/R5


def waiting_message_read_timer_stop(env: Environment, reader: WaitingMessageReadOperation,
                                    status: int) -> int:
    """MS-MQDMPR 3.1.7.3.5 Waiting Message Read Timer Stop (MS-MQDMPR/3.1.7.3.5/R1
    MS-MQDMPR/3.1.7.3.5/R2); consumed by Wait For New Message."""
    env.cancel_timer(reader)
    env.resume(reader, ("Stop", status))  # MS-MQDMPR/3.1.7.3.5/R3
    return status


def waiting_message_read_satisfied(env: Environment, reader: WaitingMessageReadOperation,
                                   position: Any) -> None:
    """MS-MQDMPR 3.1.7.3.6 Waiting Message Read Satisfied (MS-MQDMPR/3.1.7.3.6/R1); consumed by
    Wait For New Message, which continues at once with ``position``."""
    env.resume(reader, ("Satisfied", position))


def release_next_reader(env: Environment, release_on_queue: Any) -> None:
    """MS-MQDMPR 3.1.7.3.7 Release Next Reader (MS-MQDMPR/3.1.7.3.7/R1); consumed by Message
    Position Available, which waits for it after satisfying a non-destructive reader. The
    satisfied reader runs to completion inside Waiting Message Read Satisfied, so the release
    is recorded here and found by Message Position Available when that returns."""
    release_on_queue._released_reader = True
