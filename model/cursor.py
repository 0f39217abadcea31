"""MS-MQDMPR 3.2 Cursor: an iterator over a queue's MessagePositionList.

The state machine of 3.2.1.1 is the table ``TRANSITIONS`` below: for each event and each
outcome the event can have in a state, the state the cursor is in afterwards. Every event
function computes its outcome by the steps of its section and then takes its next state from the
table, so the table and the steps cannot drift apart (tests/model/test_cursor.py checks that
each row is reachable and that the functions obey it).

Events: Initialize (3.2.7.1), Get Message For Peek (3.2.7.2), Get Next Message For Peek
(3.2.7.3), Get Next Message For Dequeue (3.2.7.4), Message Available (3.2.7.5), Wait Time
Expired (3.2.7.6). Their rStatus values are the strings the document names ("Succeeded",
"AlreadyReceived", "NotFound", "IllegalCursorAction", "Waiting").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mqconform.model.adm import Cursor, CursorState, MessagePositionState
from mqconform.model.internal import seek_available_message_position

Unread, WaitReceive, WaitPeek, Read = (CursorState.Unread, CursorState.WaitReceive,
                                       CursorState.WaitPeek, CursorState.Read)

#: (state before, event, outcome) -> state after; "same" keeps the state. Each row cites the
#: step that sets the state (or, for "same", the step that returns without changing it).
TRANSITIONS: dict[tuple[CursorState, str, str], CursorState | str] = {
    (Unread, "get_message_for_peek", "Waiting"): WaitPeek,  # MS-MQDMPR/3.2.7.2/R12
    (Unread, "get_message_for_peek", "Succeeded"): Read,  # MS-MQDMPR/3.2.7.2/R16
    (Read, "get_message_for_peek", "Succeeded"): "same",  # MS-MQDMPR/3.2.7.2/R25
    (Read, "get_message_for_peek", "AlreadyReceived"): "same",  # MS-MQDMPR/3.2.7.2/R28
    (Unread, "get_next_message_for_peek", "IllegalCursorAction"): "same",  # MS-MQDMPR/3.2.7.3/R7
    (Read, "get_next_message_for_peek", "Waiting"): WaitPeek,  # MS-MQDMPR/3.2.7.3/R15
    (Read, "get_next_message_for_peek", "Succeeded"): Read,  # MS-MQDMPR/3.2.7.3/R19
    (Unread, "get_next_message_for_dequeue", "NotFound"): "same",  # MS-MQDMPR/3.2.7.4/R15
    (Unread, "get_next_message_for_dequeue", "Waiting"): WaitReceive,  # MS-MQDMPR/3.2.7.4/R16
    (Unread, "get_next_message_for_dequeue", "Succeeded"): "same",  # MS-MQDMPR/3.2.7.4/R23
    (Read, "get_next_message_for_dequeue", "Succeeded"): Unread,  # MS-MQDMPR/3.2.7.4/R26
    (Read, "get_next_message_for_dequeue", "AlreadyReceived"): "same",  # MS-MQDMPR/3.2.7.4/R30
    (WaitPeek, "message_available", "done"): Read,  # MS-MQDMPR/3.2.7.5/R4
    (WaitReceive, "message_available", "done"): Unread,  # MS-MQDMPR/3.2.7.5/R6
    (Unread, "message_available", "done"): "same",  # MS-MQDMPR/3.2.7.5/R5
    (Read, "message_available", "done"): "same",  # MS-MQDMPR/3.2.7.5/R5
    (WaitReceive, "wait_time_expired", "done"): Unread,  # MS-MQDMPR/3.2.7.6/R5
    # not in the text: 3.2.7.6 resets only WaitReceive, which would leave a cursor whose peek
    # timed out in WaitPeek, where no event is defined; it returns to the state it waited from
    (WaitPeek, "wait_time_expired", "done"): "before",  # MS-MQDMPR/3.2.7.6/R3
    (Unread, "wait_time_expired", "done"): "same",  # MS-MQDMPR/3.2.7.6/R3
    (Read, "wait_time_expired", "done"): "same",  # MS-MQDMPR/3.2.7.6/R3
    # not in the text: a second operation on a cursor whose first is still waiting (two calls
    # at once on one cursor) has no rule; it is refused as an illegal cursor action
    (WaitPeek, "get_message_for_peek", "IllegalCursorAction"): "same",
    (WaitReceive, "get_message_for_peek", "IllegalCursorAction"): "same",
    (WaitPeek, "get_next_message_for_peek", "IllegalCursorAction"): "same",
    (WaitReceive, "get_next_message_for_peek", "IllegalCursorAction"): "same",
    (WaitPeek, "get_next_message_for_dequeue", "IllegalCursorAction"): "same",
    (WaitReceive, "get_next_message_for_dequeue", "IllegalCursorAction"): "same",
}


class CursorStateError(RuntimeError):
    """An event reached a (state, outcome) pair the state machine does not have: a model bug,
    never a protocol outcome (the protocol layer maps unusual states to status codes first)."""


def _transition(cursor: Cursor, event: str, outcome: str) -> None:
    before = cursor.cursor_state
    after = TRANSITIONS.get((before, event, outcome))
    if after is None:
        raise CursorStateError(f"{event} gave {outcome} in state {before.name}")
    if after == "before":
        cursor.cursor_state = (Unread if cursor._state_before_wait is None
                               else cursor._state_before_wait)
    elif after != "same":
        cursor.cursor_state = after
        if after in (WaitPeek, WaitReceive):
            cursor._state_before_wait = before


@dataclass(frozen=True)
class CursorResult:
    status: str
    position: Any = None


def _queue_of(cursor: Cursor) -> Any:
    return cursor.open_queue_descriptor_reference.queue_reference


def initialize(env: Any, cursor: Cursor, queue_desc: Any) -> None:
    """MS-MQDMPR 3.2.7.1 Initialize (MS-MQDMPR/3.2.7.1/R1 MS-MQDMPR/3.2.7.1/R2)."""
    if queue_desc.queue_reference is None:  # MS-MQDMPR/3.2.7.1/R3
        return  # MS-MQDMPR/3.2.7.1/R4
    cursor.handle = env.ids.handle()  # MS-MQDMPR/3.2.7.1/R5 MS-MQDMPR/3.2.1.2/R2
    cursor.open_queue_descriptor_reference = queue_desc  # MS-MQDMPR/3.2.7.1/R6
    cursor.message_position_reference = (  # MS-MQDMPR/3.2.7.1/R7
        queue_desc.queue_reference.message_position_list.start)
    cursor.cursor_state = Unread  # MS-MQDMPR/3.2.7.1/R8


def get_message_for_peek(cursor: Cursor) -> CursorResult:
    """MS-MQDMPR 3.2.7.2 Get Message For Peek (MS-MQDMPR/3.2.7.2/R1 MS-MQDMPR/3.2.7.2/R2)."""
    queue = _queue_of(cursor)  # MS-MQDMPR/3.2.7.2/R3
    state = cursor.cursor_state  # MS-MQDMPR/3.2.7.2/R4
    if state is Unread:  # MS-MQDMPR/3.2.7.2/R5
        position = seek_available_message_position(  # MS-MQDMPR/3.2.7.2/R6
            cursor.message_position_reference,  # MS-MQDMPR/3.2.7.2/R7
            queue,  # MS-MQDMPR/3.2.7.2/R8
            peek_operation=True,  # MS-MQDMPR/3.2.7.2/R9
            seek_direction="Forward")  # MS-MQDMPR/3.2.7.2/R10
        if position is queue.message_position_list.end:  # MS-MQDMPR/3.2.7.2/R11
            _transition(cursor, "get_message_for_peek", "Waiting")
            return CursorResult("Waiting")  # MS-MQDMPR/3.2.7.2/R13 MS-MQDMPR/3.2.7.2/R14
        # MS-MQDMPR/3.2.7.2/R15
        _transition(cursor, "get_message_for_peek", "Succeeded")
        cursor.message_position_reference = position  # MS-MQDMPR/3.2.7.2/R17
        return CursorResult("Succeeded",  # MS-MQDMPR/3.2.7.2/R19 MS-MQDMPR/3.2.7.2/R20
                            cursor.message_position_reference)  # MS-MQDMPR/3.2.7.2/R18
    if state is Read:  # MS-MQDMPR/3.2.7.2/R21
        if cursor.message_position_reference.state is MessagePositionState.Available:
            # MS-MQDMPR/3.2.7.2/R22
            _transition(cursor, "get_message_for_peek", "Succeeded")
            return CursorResult("Succeeded",  # MS-MQDMPR/3.2.7.2/R24
                                cursor.message_position_reference)  # MS-MQDMPR/3.2.7.2/R23
        # MS-MQDMPR/3.2.7.2/R26
        _transition(cursor, "get_message_for_peek", "AlreadyReceived")
        return CursorResult("AlreadyReceived")  # MS-MQDMPR/3.2.7.2/R27
    # a wait state: see TRANSITIONS
    _transition(cursor, "get_message_for_peek", "IllegalCursorAction")
    return CursorResult("IllegalCursorAction")


def get_next_message_for_peek(cursor: Cursor) -> CursorResult:
    """MS-MQDMPR 3.2.7.3 Get Next Message For Peek (MS-MQDMPR/3.2.7.3/R1
    MS-MQDMPR/3.2.7.3/R2)."""
    queue = _queue_of(cursor)  # MS-MQDMPR/3.2.7.3/R3
    state = cursor.cursor_state  # MS-MQDMPR/3.2.7.3/R4
    if state is Unread:  # MS-MQDMPR/3.2.7.3/R5
        _transition(cursor, "get_next_message_for_peek", "IllegalCursorAction")
        return CursorResult("IllegalCursorAction")  # MS-MQDMPR/3.2.7.3/R6
    if state is Read:  # MS-MQDMPR/3.2.7.3/R8
        position = seek_available_message_position(  # MS-MQDMPR/3.2.7.3/R9
            cursor.message_position_reference,  # MS-MQDMPR/3.2.7.3/R10
            queue,  # MS-MQDMPR/3.2.7.3/R11
            peek_operation=True,  # MS-MQDMPR/3.2.7.3/R12
            seek_direction="Forward")  # MS-MQDMPR/3.2.7.3/R13
        if position is queue.message_position_list.end:  # MS-MQDMPR/3.2.7.3/R14
            _transition(cursor, "get_next_message_for_peek", "Waiting")
            return CursorResult("Waiting")  # MS-MQDMPR/3.2.7.3/R16 MS-MQDMPR/3.2.7.3/R17
        # MS-MQDMPR/3.2.7.3/R18
        _transition(cursor, "get_next_message_for_peek", "Succeeded")
        cursor.message_position_reference = position  # MS-MQDMPR/3.2.7.3/R20
        return CursorResult("Succeeded",  # MS-MQDMPR/3.2.7.3/R22 MS-MQDMPR/3.2.7.3/R23
                            cursor.message_position_reference)  # MS-MQDMPR/3.2.7.3/R21
    # a wait state: see TRANSITIONS
    _transition(cursor, "get_next_message_for_peek", "IllegalCursorAction")
    return CursorResult("IllegalCursorAction")


def get_next_message_for_dequeue(cursor: Cursor, no_wait: bool) -> CursorResult:
    """MS-MQDMPR 3.2.7.4 Get Next Message For Dequeue (MS-MQDMPR/3.2.7.4/R1
    MS-MQDMPR/3.2.7.4/R3). ``no_wait`` is iNoWait (MS-MQDMPR/3.2.7.4/R2)."""
    queue = _queue_of(cursor)  # MS-MQDMPR/3.2.7.4/R4
    state = cursor.cursor_state  # MS-MQDMPR/3.2.7.4/R5
    if state is Unread:  # MS-MQDMPR/3.2.7.4/R6
        position = seek_available_message_position(  # MS-MQDMPR/3.2.7.4/R7
            cursor.message_position_reference,  # MS-MQDMPR/3.2.7.4/R8
            queue,  # MS-MQDMPR/3.2.7.4/R9
            peek_operation=False,  # MS-MQDMPR/3.2.7.4/R10
            seek_direction="Forward")  # MS-MQDMPR/3.2.7.4/R11
        if position is queue.message_position_list.end:  # MS-MQDMPR/3.2.7.4/R12
            if no_wait:  # MS-MQDMPR/3.2.7.4/R13
                _transition(cursor, "get_next_message_for_dequeue", "NotFound")
                return CursorResult("NotFound")  # MS-MQDMPR/3.2.7.4/R14
            _transition(cursor, "get_next_message_for_dequeue", "Waiting")
            return CursorResult("Waiting")  # MS-MQDMPR/3.2.7.4/R17 MS-MQDMPR/3.2.7.4/R18
        # MS-MQDMPR/3.2.7.4/R19
        cursor.message_position_reference = position  # MS-MQDMPR/3.2.7.4/R20
        _transition(cursor, "get_next_message_for_dequeue", "Succeeded")
        return CursorResult("Succeeded",  # MS-MQDMPR/3.2.7.4/R22
                            cursor.message_position_reference)  # MS-MQDMPR/3.2.7.4/R21
    if state is Read:  # MS-MQDMPR/3.2.7.4/R24
        if cursor.message_position_reference.state is MessagePositionState.Available:
            # MS-MQDMPR/3.2.7.4/R25
            _transition(cursor, "get_next_message_for_dequeue", "Succeeded")
            return CursorResult("Succeeded",  # MS-MQDMPR/3.2.7.4/R28
                                cursor.message_position_reference)  # MS-MQDMPR/3.2.7.4/R27
        # MS-MQDMPR/3.2.7.4/R29
        _transition(cursor, "get_next_message_for_dequeue", "AlreadyReceived")
        return CursorResult("AlreadyReceived")
    # a wait state: see TRANSITIONS
    _transition(cursor, "get_next_message_for_dequeue", "IllegalCursorAction")
    return CursorResult("IllegalCursorAction")


def message_available(cursor: Cursor, message_position: Any) -> None:
    """MS-MQDMPR 3.2.7.5 Message Available (MS-MQDMPR/3.2.7.5/R1 MS-MQDMPR/3.2.7.5/R2)."""
    # MS-MQDMPR/3.2.7.5/R3 MS-MQDMPR/3.2.7.5/R5: the table holds both branches
    _transition(cursor, "message_available", "done")
    # The extracted text lost its indentation, so whether this step belongs to the WaitReceive
    # branch alone cannot be read off it. It applies to both: a peek cursor that waited (Peek
    # Next Message, 3.1.7.1.14) must rest on the message it was given, or its next peek would
    # return the previous message again.
    cursor.message_position_reference = message_position  # MS-MQDMPR/3.2.7.5/R7


def wait_time_expired(cursor: Cursor) -> None:
    """MS-MQDMPR 3.2.7.6 Wait Time Expired (MS-MQDMPR/3.2.7.6/R1 MS-MQDMPR/3.2.7.6/R2)."""
    if cursor.cursor_state is WaitReceive:  # MS-MQDMPR/3.2.7.6/R3
        cursor.message_position_reference = (  # MS-MQDMPR/3.2.7.6/R4
            _queue_of(cursor).message_position_list.end)
    _transition(cursor, "wait_time_expired", "done")
