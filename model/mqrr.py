"""MS-MQRR 3.1: the RemoteRead server, on the MS-MQDMPR events.

One method per opnum (3.1.4.1-3.1.4.15), the Pending Request Cleanup Timer event (3.1.5.1) and
the two local events (3.1.6.1 RPC Failure, 3.1.6.2 Queue Context Handles Rundown). Calls and
results are the typed values of model.calls.

Every call returns an :class:`Outcome`: the result, the requirement ID of the step that decided
the status, and whether the document asks for one status code or for "a failure HRESULT" (then
any failure is conforming). R_StartReceive and R_StartTransactionalReceive can wait: ``call``
returns ``Pending(token)`` and the outcome arrives later from ``take_completions`` (after
``env.advance`` fires a timer, or another call makes a message available or cancels the wait).

Where the text leaves the server a choice, the choice is named here once (each marked "choice
N" at its code, listed in spec/choices.yaml, switched by model/choices.py):

1. "return a failure HRESULT" for an unknown handle: MQ_ERROR_INVALID_HANDLE (the code the
   document uses for unknown handles in 3.1.4.9 and 3.1.4.15), marked ``any_failure``;
2. a handle opened with PEEK_ACCESS used to receive (3.1.4.7 R6, 3.1.4.2's dwAccess table):
   MQ_ERROR_INVALID_PARAMETER, the code 3.1.4.7 gives for invalid input, marked ``any_failure``;
3. the Pending Request Cleanup Timer's duration is implementation-dependent (3.1.2.2 R2):
   ``cleanup_ms``, five minutes unless configured;
4. R_CloseQueue removes the handle's PendingRequestEntry instances (3.1.4.3) but, unlike the
   rundown (3.1.6.2), ends no dequeue: a received, unacknowledged message stays Locked; the
   text says nothing of it (errata close-queue-unacknowledged-message).
5. A waiting receive whose PendingRequestEntry the Pending Request Cleanup Timer removed, and
   which then gets a message, registers its entry again with a new timer (errata
   cleanup-timer-vs-waiting-receive; see ``_set_lookup``).
6. R_CancelReceive ends only a read waiting through the handle the call names, as its
   phContext says, not any handle's read on the queue with that dwRequestId as Cancel Waiting
   Message Read Request walks them: otherwise a client holding only a peek handle on the queue
   cancels another client's receive by guessing its request id (errata
   cancel-receive-across-handles; ``cancel_through_own_handle``).
7. R_MoveMessage from a source handle not opened with RECEIVE_ACCESS fails with
   MQ_ERROR_ACCESS_DENIED, marked ``any_failure`` (errata move-message-source-access).
8. A receive (not a peek) by lookup identifier of a message in the queue that is not
   Available (a receive holds it): Seek Available Message Position With Id (MS-MQDMPR
   3.1.7.3.3) sets no status for it; MQ_ERROR_MESSAGE_NOT_FOUND, as for a peek at a message
   that is neither Locked nor Deleted (R38, R39), marked ``any_failure``.
"""

from __future__ import annotations

import functools
import sys
import uuid
from collections.abc import Generator
from dataclasses import dataclass, replace
from typing import Any

from mqconform.model import calls as c
from mqconform.model import packet as packet_codec
from mqconform.model.adm import (
    LocalMessageType,
    MessageClass,
    MessagePositionState,
    MessageSeekAction,
    OpenQueueDescriptor,
    OpenQueueDescriptorRemoteReadState,
    PendingRequestEntry,
    PendingRequestTable,
    QueueAccessType,
    QueueShareMode,
)
from mqconform.model.choices import REFERENCE
from mqconform.model.formats import from_queue_format
from mqconform.model.message_ops import (
    dequeue_message_begin,
    dequeue_message_end,
    move_message,
    peek_message,
    peek_next_message,
    read_message_by_lookup_identifier,
)
from mqconform.model.outcome import Outcome, status_only
from mqconform.model.packet import set_time_to_reach_queue, time_to_reach_queue
from mqconform.model.queue_management import (
    cancel_waiting_message_read_request,
    close_cursor,
    close_queue,
    create_transaction,
    find_queue,
    open_cursor,
    open_queue,
    purge_queue,
    subqueue_name,
)
from mqconform.model.refs import sparse
from mqconform.model.runtime import INFINITE, Completion, Environment, Pending, Wait
from mqconform.model.status import (
    MQ_ERROR_ACCESS_DENIED,
    MQ_ERROR_INVALID_HANDLE,
    MQ_ERROR_INVALID_PARAMETER,
    MQ_ERROR_MESSAGE_LOCKED_UNDER_TRANSACTION,
    MQ_ERROR_MESSAGE_NOT_FOUND,
    MQ_ERROR_OPERATION_CANCELLED,
    MQ_ERROR_QUEUE_NOT_FOUND,
    MQ_ERROR_TRANSACTION_SEQUENCE,
    MQ_ERROR_TRANSACTION_USAGE,
    MQ_OK,
    STATUS_ACCESS_DENIED,
    STATUS_INVALID_HANDLE,
    STATUS_INVALID_PARAMETER,
)

DEFAULT_PORT = 2103  # the default port (MS-MQRR 3.1.4.1); see MS-MQRR/3.1.4.1/R2
DEFAULT_CLEANUP_MS = REFERENCE.cleanup_ms

RECEIVE_ACTIONS = frozenset({c.MQ_ACTION_RECEIVE, c.MQ_LOOKUP_RECEIVE_CURRENT,
                             c.MQ_LOOKUP_RECEIVE_NEXT, c.MQ_LOOKUP_RECEIVE_PREV})
LOOKUP_ACTIONS = frozenset({c.MQ_LOOKUP_PEEK_PREV, c.MQ_LOOKUP_PEEK_CURRENT,
                            c.MQ_LOOKUP_PEEK_NEXT, c.MQ_LOOKUP_RECEIVE_PREV,
                            c.MQ_LOOKUP_RECEIVE_CURRENT, c.MQ_LOOKUP_RECEIVE_NEXT})
CURSOR_ACTIONS = frozenset({c.MQ_ACTION_RECEIVE, c.MQ_ACTION_PEEK_CURRENT,
                            c.MQ_ACTION_PEEK_NEXT})
PLAIN_ACTIONS = frozenset({c.MQ_ACTION_RECEIVE, c.MQ_ACTION_PEEK_CURRENT})
PEEK_ACTIONS = frozenset({c.MQ_ACTION_PEEK_CURRENT, c.MQ_ACTION_PEEK_NEXT,
                          c.MQ_LOOKUP_PEEK_CURRENT, c.MQ_LOOKUP_PEEK_NEXT, c.MQ_LOOKUP_PEEK_PREV})
#: what R_StartReceive and R_StartTransactionalReceive answer when they refuse a call before
#: they create its PendingRequestEntry: an invalid parameter or access (3.1.4.7/R6), an unknown
#: handle, an unknown or closed cursor (STATUS_INVALID_HANDLE, 3.1.4.7 hCursor), a transaction
#: refused (3.1.4.13/R68, R69)
REFUSED_BEFORE_ENTRY = frozenset({MQ_ERROR_INVALID_PARAMETER, MQ_ERROR_INVALID_HANDLE,
                                  STATUS_INVALID_HANDLE, MQ_ERROR_TRANSACTION_USAGE})


# ---------------------------------------------------------------------------------------------
# What an answer says about the PendingRequestTable and the OpenQueueDescriptors. The server
# below changes its state by these predicates; the observer (model/observer.py), which sees only
# calls and answers, learns the state by the same ones: the two cannot disagree on what a
# pending request, a lock or a closed handle is.
# ---------------------------------------------------------------------------------------------


def registers_pending_request(action: int, status: int) -> bool:
    """Whether a receive with this ulAction, answered with this status, left a
    PendingRequestEntry in the PendingRequestTable (MS-MQRR 3.1.1.3).

    MQ_ACTION_RECEIVE creates its entry before Dequeue Message Begin (3.1.4.7), so the entry
    stays whatever the wait's outcome (until R_EndReceive, R_CancelReceive on the same handle,
    the Pending Request Cleanup Timer or a rundown ends it), unless the call was refused before
    that step. A receive by lookup identifier has an entry once it got its message (see
    _start_receive). A peek never has one."""
    if status in REFUSED_BEFORE_ENTRY:
        return False
    if action == c.MQ_ACTION_RECEIVE:
        return True
    return action in RECEIVE_ACTIONS and status == MQ_OK


def holds_lock(action: int, status: int) -> bool:
    """Whether the receive's PendingRequestEntry holds a message Locked: its LookupIdentifier
    was set, because the receive returned the message (3.1.4.7 "If the rStatus ... is MQ_OK")."""
    return action in RECEIVE_ACTIONS and status == MQ_OK


def ends_pending_request(method: type[c.Call], status: int) -> bool:
    """Whether R_EndReceive, R_EndTransactionalReceive or R_CancelReceive, answered with this
    status, removed the PendingRequestEntry it named. The end methods remove it as soon as they
    find it (3.1.4.9, 3.1.4.15: "Otherwise, remove"), so every answer but the two refusals
    before that step (no entry for the handle: MQ_ERROR_INVALID_HANDLE; none for the
    dwRequestId, or an invalid dwAck: MQ_ERROR_INVALID_PARAMETER) means it is gone. A cancel
    removes it only when it succeeded (3.1.4.8/R14, R15)."""
    if method is c.R_CancelReceive:
        return status == MQ_OK
    return status not in (MQ_ERROR_INVALID_HANDLE, MQ_ERROR_INVALID_PARAMETER)


def closes_handle(method: type[c.Call], status: int) -> bool:
    """Whether the call closed the OpenQueueDescriptor its handle names: R_CloseQueue answered
    MQ_OK (3.1.4.3/R15); its PendingRequestEntry instances go with it (3.1.4.3/R13)."""
    return method is c.R_CloseQueue and status == MQ_OK


#: ulAction -> (peek, MessageSeekAction) for the lookup actions (3.1.4.7, 3.1.4.13)
LOOKUP_TABLE = {
    c.MQ_LOOKUP_PEEK_CURRENT: (True, MessageSeekAction.SeekCurrent),
    c.MQ_LOOKUP_PEEK_NEXT: (True, MessageSeekAction.SeekNext),
    c.MQ_LOOKUP_PEEK_PREV: (True, MessageSeekAction.SeekPrevious),
    c.MQ_LOOKUP_RECEIVE_CURRENT: (False, MessageSeekAction.SeekCurrent),
    c.MQ_LOOKUP_RECEIVE_NEXT: (False, MessageSeekAction.SeekNext),
    c.MQ_LOOKUP_RECEIVE_PREV: (False, MessageSeekAction.SeekPrevious),
}
#: QUEUE_FORMAT types R_OpenQueue accepts (MS-MQRR 3.1.4.2, pQueueFormat)
OPEN_QUEUE_FORMAT_TYPES = frozenset({1, 2, 3, 4, 8})  # PUBLIC PRIVATE DIRECT MACHINE SUBQUEUE
XACTUOW_ZERO = bytes(c.XACTUOW_SIZE)
#: cbPropagationToken: [range(0, 131072)] in the IDL (MS-MQRR 6)
MAX_PROPAGATION_TOKEN = 131072




# ---------------------------------------------------------------------------------------------
# SectionBuffer construction (MS-MQRR 3.1.4.7, ppPacketSections)
# ---------------------------------------------------------------------------------------------

def adjust_time_to_reach_queue(packet: bytes) -> bytes:
    """Set UserMessage.BaseHeader.TimeToReachQueue to UserHeader.SentTime + TimeToReachQueue
    (MS-MQRR 3.1.4.7, ppPacketSections, last rule); a packet too short to hold both fields is
    returned unchanged."""
    times = time_to_reach_queue(packet)
    if times is None:
        return packet
    ttrq, sent = times
    return set_time_to_reach_queue(packet, (sent + ttrq) & 0xFFFFFFFF)


@dataclass(frozen=True)
class PacketLayout:
    """A message packet and where its parts are (MS-MQRR 3.1.1.4 Message.Type and .Offset)."""

    packet: bytes
    srmp: bool
    header_size: int
    body_offset: int  # the body (binary) or the CompoundMessageHeader (SRMP)
    body_size: int
    trailers: bytes
    #: where the UserMessage ends: the SessionHeader and ExtensionHeader begin there, inside
    #: the trailers, after a DebugHeader, SoapHeader or MultiQueueFormatHeader if any
    user_message_size: int = 0


def _user_message_size(message: Any, packet: bytes) -> int:
    """packet.DecodedPacket.user_message_size of the message's packet: kept on the message
    when it was deserialized, else decoded once and kept (a message read back from the
    store); the packet's length for one that does not decode."""
    size = getattr(message, "_user_message_size", None)
    if size is None:
        try:
            size = packet_codec.decode_packet(packet).user_message_size
        except packet_codec.PacketError:
            size = len(packet)
        try:
            message._user_message_size = size
        except AttributeError:  # not an ADM message (a model test's stand-in)
            pass
    return size


def packet_layout(message: Any) -> PacketLayout:
    """The layout of a message's packet. A message the wire layer serialized carries its
    packet with Type and Offset (headers, body, trailers); one that never went through it (made
    in a model test) is laid out as its body alone."""
    packet = getattr(message, "packet", b"") or b""
    offsets = getattr(message, "offset", None) or []
    srmp = getattr(message, "type", None) is LocalMessageType.SRMP
    if packet and len(offsets) >= 2:
        (h_off, h_size), (b_off, b_size) = offsets[0], offsets[1]
        t_off, t_size = offsets[2] if len(offsets) > 2 else (b_off + b_size, 0)
        return PacketLayout(packet, srmp, h_off + h_size, b_off, b_size,
                            packet[t_off:t_off + t_size], _user_message_size(message, packet))
    body = message.body or b""
    return PacketLayout(body, srmp, 0, 0, len(body), b"")


#: the SectionBuffer rules, stated twice: for R_StartReceive (3.1.4.7) and for
#: R_StartTransactionalReceive (3.1.4.13)
SECTION_STEPS = {
    "3.1.4.7": {
        "fill": "MS-MQRR/3.1.4.7/R19 MS-MQRR/3.1.4.7/R20 MS-MQRR/3.1.4.7/R21",
        "binary": "MS-MQRR/3.1.4.7/R22 MS-MQRR/3.1.4.7/R23 MS-MQRR/3.1.4.7/R24",
        "srmp": "MS-MQRR/3.1.4.7/R25 MS-MQRR/3.1.4.7/R26 MS-MQRR/3.1.4.7/R27",
        "full": "MS-MQRR/3.1.4.7/R28 MS-MQRR/3.1.4.7/R29 MS-MQRR/3.1.4.7/R30"
                " MS-MQRR/3.1.4.7/R31",
        "first": "MS-MQRR/3.1.4.7/R32 MS-MQRR/3.1.4.7/R33 MS-MQRR/3.1.4.7/R34"
                 " MS-MQRR/3.1.4.7/R35 MS-MQRR/3.1.4.7/R36 MS-MQRR/3.1.4.7/R37"
                 " MS-MQRR/3.1.4.7/R38",
        "second": "MS-MQRR/3.1.4.7/R39 MS-MQRR/3.1.4.7/R40 MS-MQRR/3.1.4.7/R41"
                  " MS-MQRR/3.1.4.7/R42 MS-MQRR/3.1.4.7/R43 MS-MQRR/3.1.4.7/R44",
        "ttrq": "MS-MQRR/3.1.4.7/R45",
    },
    "3.1.4.13": {
        "fill": "MS-MQRR/3.1.4.13/R17 MS-MQRR/3.1.4.13/R18 MS-MQRR/3.1.4.13/R19",
        "binary": "MS-MQRR/3.1.4.13/R20 MS-MQRR/3.1.4.13/R21 MS-MQRR/3.1.4.13/R22",
        "srmp": "MS-MQRR/3.1.4.13/R23 MS-MQRR/3.1.4.13/R24 MS-MQRR/3.1.4.13/R25",
        "full": "MS-MQRR/3.1.4.13/R26 MS-MQRR/3.1.4.13/R27 MS-MQRR/3.1.4.13/R28"
                " MS-MQRR/3.1.4.13/R29",
        "first": "MS-MQRR/3.1.4.13/R30 MS-MQRR/3.1.4.13/R31 MS-MQRR/3.1.4.13/R32"
                 " MS-MQRR/3.1.4.13/R33 MS-MQRR/3.1.4.13/R34 MS-MQRR/3.1.4.13/R35"
                 " MS-MQRR/3.1.4.13/R36",
        "second": "MS-MQRR/3.1.4.13/R37 MS-MQRR/3.1.4.13/R38 MS-MQRR/3.1.4.13/R39"
                  " MS-MQRR/3.1.4.13/R40 MS-MQRR/3.1.4.13/R41 MS-MQRR/3.1.4.13/R42",
        "ttrq": "MS-MQRR/3.1.4.13/R43",
    },
}


#: the server SHOULD ignore dwMaxBodySize for an SRMP message and dwMaxCompoundMessageSize for a
#: binary one: packet_sections reads only the one that applies
SHOULD_IGNORE = ("MS-MQRR/3.1.4.7/R13 MS-MQRR/3.1.4.7/R15 MS-MQRR/3.1.4.13/R11"
                 " MS-MQRR/3.1.4.13/R13")


def with_subqueue_name(layout: PacketLayout, subqueue: str | None) -> PacketLayout:
    """The layout with SubqueueHeader.SubqueueName naming the subqueue the message is in now
    (MS-MQRR/2.2.5.3/R5, MS-MQRR/2.2.5.3/R6, MS-MQRR/2.2.5.3/R7; the packet codec writes the
    field). The packet was serialized when the message was enqueued; a move to a subqueue
    changes where it is, so the field is written here."""
    if not layout.trailers:
        return layout
    start = len(layout.packet) - len(layout.trailers)
    packet = packet_codec.with_subqueue_name(layout.packet, layout.user_message_size, subqueue)
    return layout if packet is layout.packet else replace(layout, packet=packet,
                                                          trailers=packet[start:])


def packet_sections(message: Any, max_body_size: int, max_compound_message_size: int,
                    subqueue: str | None = None) -> tuple[c.SectionBuffer, ...]:
    """The ppPacketSections array of MS-MQRR 3.1.4.7 and 3.1.4.13 (SECTION_STEPS names the
    steps of each section this function carries out, in the order below). ``subqueue``: the
    name of the subqueue the message is read from, None for a queue."""
    layout = with_subqueue_name(packet_layout(message), subqueue)
    # fill: maxMessageSize and actualMessageSize
    if not layout.srmp:  # binary; dwMaxCompoundMessageSize is ignored (SHOULD_IGNORE)
        max_message_size = max_body_size
    else:  # srmp: the CompoundMessageHeader stands where a binary message has its body;
        max_message_size = max_compound_message_size  # dwMaxBodySize is ignored
    actual_message_size = layout.body_size
    if max_message_size >= actual_message_size:  # full: one entry, the whole packet
        packet = adjust_time_to_reach_queue(layout.packet)  # ttrq
        return (c.SectionBuffer(SectionBufferType=c.stFullPacket,
                                SectionSizeAlloc=len(packet), SectionSize=len(packet),
                                pSectionBuffer=packet),)
    # first: headers and the first maxMessageSize bytes of the body
    first_type = c.stSrmpFirstSection if layout.srmp else c.stBinaryFirstSection
    headers = layout.packet[:layout.header_size]
    body = layout.packet[layout.body_offset:layout.body_offset + layout.body_size]
    first = adjust_time_to_reach_queue(headers + body[:max_message_size])  # ttrq
    sections = [c.SectionBuffer(SectionBufferType=first_type,
                                SectionSizeAlloc=layout.header_size + actual_message_size,
                                SectionSize=len(first), pSectionBuffer=first)]
    if layout.trailers:  # second: the trailers
        second_type = c.stSrmpSecondSection if layout.srmp else c.stBinarySecondSection
        sections.append(c.SectionBuffer(SectionBufferType=second_type,
                                        SectionSizeAlloc=len(layout.trailers),
                                        SectionSize=len(layout.trailers),
                                        pSectionBuffer=layout.trailers))
    return tuple(sections)


# ---------------------------------------------------------------------------------------------
# The server
# ---------------------------------------------------------------------------------------------

@functools.cache
def _handler_name(method: type[c.Call]) -> str:
    """The name of the RemoteReadServer method that runs ``method``'s calls: the class name in
    lower case, made once and interned, so that the attribute lookup of every call names one
    string object (a string made afresh for each call lives on in the interpreter's lookup
    cache, scattered over the heap, and keeps memory a flood of calls freed from going back)."""
    return sys.intern(method.__name__.lower())


def _context_bytes(guid: uuid.UUID) -> bytes:
    """An NDR context handle: attributes 0 and a UUID (MS-RPCE 2.2.5.3.1 / C706 context handle
    wire form), little-endian UUID fields as NDR sends them."""
    return b"\x00\x00\x00\x00" + guid.bytes_le


#: R_StartReceive (3.1.4.7) and R_StartTransactionalReceive (3.1.4.13) share their processing;
#: each role names the section's steps (the first ID is the one an Outcome reports)
RECEIVE_STEPS = {
    "3.1.4.7": {
        "invalid": "MS-MQRR/3.1.4.7/R50",
        "find_desc": "MS-MQRR/3.1.4.7/R51",
        "not_found": "MS-MQRR/3.1.4.7/R52",
        "cursor": "MS-MQRR/3.1.4.7/R53 MS-MQRR/3.1.4.7/R7 MS-MQRR/3.1.4.7/R8",
        "receive": "MS-MQRR/3.1.4.7/R54",
        "entry": "MS-MQRR/3.1.4.7/R55 MS-MQRR/3.1.4.7/R56 MS-MQRR/3.1.4.7/R57"
                 " MS-MQRR/3.1.4.7/R58 MS-MQRR/3.1.4.7/R59",
        "cleanup_timer": "MS-MQRR/3.1.4.7/R60",
        "add_entry": "MS-MQRR/3.1.4.7/R61",
        "begin": "MS-MQRR/3.1.4.7/R62 MS-MQRR/3.1.4.7/R63 MS-MQRR/3.1.4.7/R64"
                 " MS-MQRR/3.1.4.7/R65 MS-MQRR/3.1.4.7/R66",
        "set_lookup": "MS-MQRR/3.1.4.7/R67",
        "peek_current": "MS-MQRR/3.1.4.7/R68 MS-MQRR/3.1.4.7/R69 MS-MQRR/3.1.4.7/R70"
                        " MS-MQRR/3.1.4.7/R71",
        "peek_next": "MS-MQRR/3.1.4.7/R72 MS-MQRR/3.1.4.7/R73 MS-MQRR/3.1.4.7/R74"
                     " MS-MQRR/3.1.4.7/R75",
        "lookup_peek_current": "MS-MQRR/3.1.4.7/R76 MS-MQRR/3.1.4.7/R77"
                               " MS-MQRR/3.1.4.7/R78 MS-MQRR/3.1.4.7/R79 MS-MQRR/3.1.4.7/R80",
        "lookup_peek_next": "MS-MQRR/3.1.4.7/R81 MS-MQRR/3.1.4.7/R82 MS-MQRR/3.1.4.7/R83"
                            " MS-MQRR/3.1.4.7/R84 MS-MQRR/3.1.4.7/R85",
        "lookup_peek_prev": "MS-MQRR/3.1.4.7/R86 MS-MQRR/3.1.4.7/R87 MS-MQRR/3.1.4.7/R88"
                            " MS-MQRR/3.1.4.7/R89 MS-MQRR/3.1.4.7/R90",
        "lookup_receive_current": "MS-MQRR/3.1.4.7/R91 MS-MQRR/3.1.4.7/R92"
                                  " MS-MQRR/3.1.4.7/R93 MS-MQRR/3.1.4.7/R94"
                                  " MS-MQRR/3.1.4.7/R95 MS-MQRR/3.1.4.7/R96",
        "lookup_receive_next": "MS-MQRR/3.1.4.7/R97 MS-MQRR/3.1.4.7/R98"
                               " MS-MQRR/3.1.4.7/R99 MS-MQRR/3.1.4.7/R100"
                               " MS-MQRR/3.1.4.7/R101 MS-MQRR/3.1.4.7/R102",
        "lookup_receive_prev": "MS-MQRR/3.1.4.7/R103 MS-MQRR/3.1.4.7/R104"
                               " MS-MQRR/3.1.4.7/R105 MS-MQRR/3.1.4.7/R106"
                               " MS-MQRR/3.1.4.7/R107 MS-MQRR/3.1.4.7/R108",
        "ok": "MS-MQRR/3.1.4.7/R109 MS-MQRR/3.1.4.7/R47",
        "sections": "MS-MQRR/3.1.4.7/R110",
        "arrive": "MS-MQRR/3.1.4.7/R111 MS-MQRR/3.1.4.7/R16",
        "sequence": "MS-MQRR/3.1.4.7/R17",
        "count": "MS-MQRR/3.1.4.7/R18",
        "return": "MS-MQRR/3.1.4.7/R46",
    },
    "3.1.4.13": {
        "invalid": "MS-MQRR/3.1.4.13/R48",
        "find_desc": "MS-MQRR/3.1.4.13/R65",
        "not_found": "MS-MQRR/3.1.4.13/R66",
        "cursor": "MS-MQRR/3.1.4.13/R67 MS-MQRR/3.1.4.13/R5 MS-MQRR/3.1.4.13/R6",
        "receive": "MS-MQRR/3.1.4.13/R75",
        "entry": "MS-MQRR/3.1.4.13/R76 MS-MQRR/3.1.4.13/R77 MS-MQRR/3.1.4.13/R78"
                 " MS-MQRR/3.1.4.13/R79 MS-MQRR/3.1.4.13/R80",
        "cleanup_timer": "MS-MQRR/3.1.4.13/R81",
        "add_entry": "MS-MQRR/3.1.4.13/R82",
        "begin": "MS-MQRR/3.1.4.13/R83 MS-MQRR/3.1.4.13/R84 MS-MQRR/3.1.4.13/R85"
                 " MS-MQRR/3.1.4.13/R86 MS-MQRR/3.1.4.13/R87 MS-MQRR/3.1.4.13/R88",
        "set_lookup": "MS-MQRR/3.1.4.13/R89",
        "lookup_receive_current": "MS-MQRR/3.1.4.13/R90 MS-MQRR/3.1.4.13/R91"
                                  " MS-MQRR/3.1.4.13/R92 MS-MQRR/3.1.4.13/R93"
                                  " MS-MQRR/3.1.4.13/R94 MS-MQRR/3.1.4.13/R95"
                                  " MS-MQRR/3.1.4.13/R96",
        "lookup_receive_next": "MS-MQRR/3.1.4.13/R97 MS-MQRR/3.1.4.13/R98"
                               " MS-MQRR/3.1.4.13/R99 MS-MQRR/3.1.4.13/R100"
                               " MS-MQRR/3.1.4.13/R101 MS-MQRR/3.1.4.13/R102"
                               " MS-MQRR/3.1.4.13/R103",
        "lookup_receive_prev": "MS-MQRR/3.1.4.13/R104 MS-MQRR/3.1.4.13/R105"
                               " MS-MQRR/3.1.4.13/R106 MS-MQRR/3.1.4.13/R107"
                               " MS-MQRR/3.1.4.13/R108 MS-MQRR/3.1.4.13/R109"
                               " MS-MQRR/3.1.4.13/R110",
        "ok": "MS-MQRR/3.1.4.13/R111 MS-MQRR/3.1.4.13/R45",
        "sections": "MS-MQRR/3.1.4.13/R112",
        "arrive": "MS-MQRR/3.1.4.13/R113 MS-MQRR/3.1.4.13/R14",
        "sequence": "MS-MQRR/3.1.4.13/R15",
        "count": "MS-MQRR/3.1.4.13/R16",
        "return": "MS-MQRR/3.1.4.13/R114 MS-MQRR/3.1.4.13/R44",
    },
}

#: R_EndReceive (3.1.4.9) and R_EndTransactionalReceive (3.1.4.15)
END_STEPS = {
    "3.1.4.9": {
        "ack": "MS-MQRR/3.1.4.9/R6",
        "no_entries": "MS-MQRR/3.1.4.9/R13",
        "lookup_entry": "MS-MQRR/3.1.4.9/R14",
        "find_desc": "MS-MQRR/3.1.4.9/R15",
        "not_found": "MS-MQRR/3.1.4.9/R16",
        "find_message": "MS-MQRR/3.1.4.9/R17",
        "no_message": "MS-MQRR/3.1.4.9/R18",
        # ACK removes the message (MS-MQRR/3.1.4.9/R7), NACK keeps it (MS-MQRR/3.1.4.9/R8)
        "end": "MS-MQRR/3.1.4.9/R19 MS-MQRR/3.1.4.9/R20 MS-MQRR/3.1.4.9/R21"
               " MS-MQRR/3.1.4.9/R22 MS-MQRR/3.1.4.9/R7 MS-MQRR/3.1.4.9/R8",
        "return": "MS-MQRR/3.1.4.9/R23 MS-MQRR/3.1.4.9/R10 MS-MQRR/3.1.4.9/R11",
    },
    "3.1.4.15": {
        "ack": "MS-MQRR/3.1.4.15/R6",
        "no_entries": "MS-MQRR/3.1.4.15/R13",
        "lookup_entry": "MS-MQRR/3.1.4.15/R14",
        "find_desc": "MS-MQRR/3.1.4.15/R15",
        "not_found": "MS-MQRR/3.1.4.15/R16",
        "find_message": "MS-MQRR/3.1.4.15/R17",
        "no_message": "MS-MQRR/3.1.4.15/R18",
        # the transaction's outcome, not this call, removes or keeps the message
        # (MS-MQRR/3.1.4.15/R7 MS-MQRR/3.1.4.15/R8)
        "end": "MS-MQRR/3.1.4.15/R19 MS-MQRR/3.1.4.15/R20 MS-MQRR/3.1.4.15/R21"
               " MS-MQRR/3.1.4.15/R22 MS-MQRR/3.1.4.15/R23",
        "return": "MS-MQRR/3.1.4.15/R24 MS-MQRR/3.1.4.15/R10 MS-MQRR/3.1.4.15/R11",
    },
}


def _first(ids: str) -> str:
    return ids.split()[0]


class RemoteReadServer:
    """The RemoteRead interface of one queue manager (MS-MQRR 3.1)."""

    def __init__(self, env: Environment, port: int = DEFAULT_PORT,
                 cleanup_ms: int | None = None):
        self.env = env
        self.port = port
        # choice 3 (env.choices.cleanup_ms unless given)
        self.cleanup_ms = env.choices.cleanup_ms if cleanup_ms is None else cleanup_ms
        self.pending_request_table = PendingRequestTable()  # MS-MQRR 3.1.1.3
        # MS-MQRR/3.1.2/R1: the RPC Call Timeout Timer is the wait's own timer (3.1.2.1, see
        # _start_receive); the Pending Request Cleanup Timer is started per entry (_add_entry)
        self._contexts: dict[bytes, OpenQueueDescriptor] = {}
        self._move_contexts: dict[int, OpenQueueDescriptor] = {}
        self._peaks = [0, 0]  # the most entries each has held (model/refs.py: sparse)
        self._completions: list[tuple[Any, Outcome]] = []

    # ------------------------------------------------------------------ driving
    def call(self, call: c.Call, token: Any = None) -> Outcome | Pending:
        """Process one call. Returns its Outcome, or Pending(token) if it waits."""
        handler = getattr(self, _handler_name(call.__class__))
        result = self.env.call(handler(call), token)
        if isinstance(result, Outcome):
            return self.env.choices.answer(result)
        return result

    def take_completions(self) -> list[Completion]:
        """Outcomes of calls that waited and have now finished."""
        answer = self.env.choices.answer
        return [replace(done, result=answer(done.result)) if isinstance(done.result, Outcome)
                else done for done in self.env.take_completions()]

    #: a context handle names a descriptor only if the server returned it and it has not been
    #: closed, and NULL names none: the "handle MUST have been returned by the server ... and
    #: MUST NOT have been closed" and "MUST NOT be NULL" rules of every method are enforced
    #: here (each method answers a failure for a handle this finds nothing for: choice 1)
    HANDLE_RULES = (
        "MS-MQRR/3.1.4.3/R3 MS-MQRR/3.1.4.3/R4 MS-MQRR/3.1.4.4/R3 MS-MQRR/3.1.4.4/R4"
        " MS-MQRR/3.1.4.5/R4 MS-MQRR/3.1.4.5/R5 MS-MQRR/3.1.4.6/R3 MS-MQRR/3.1.4.6/R4"
        " MS-MQRR/3.1.4.7/R4 MS-MQRR/3.1.4.7/R5 MS-MQRR/3.1.4.8/R3 MS-MQRR/3.1.4.8/R4"
        " MS-MQRR/3.1.4.9/R4 MS-MQRR/3.1.4.9/R5 MS-MQRR/3.1.4.10/R4 MS-MQRR/3.1.4.10/R5"
        " MS-MQRR/3.1.4.10/R7 MS-MQRR/3.1.4.13/R4 MS-MQRR/3.1.4.14/R4 MS-MQRR/3.1.4.14/R5"
        " MS-MQRR/3.1.4.15/R4 MS-MQRR/3.1.4.15/R5")

    def descriptor(self, context: bytes | None) -> OpenQueueDescriptor | None:
        """The OpenQueueDescriptor a context handle names (its Handle ADM attribute), if any
        (HANDLE_RULES)."""
        if context is None:
            return None
        desc = self._contexts.get(bytes(context))
        return desc if desc is not None and desc.queue_reference is not None else None

    def contexts(self) -> list[bytes]:
        return list(self._contexts)

    def _new_context(self, desc: OpenQueueDescriptor) -> bytes:
        context = _context_bytes(self.env.ids.guid())
        self._contexts[context] = desc
        self._peaks[0] = max(self._peaks[0], len(self._contexts))
        desc._context_handle = context
        return context

    @staticmethod
    def _cursor(desc: OpenQueueDescriptor, handle: int) -> Any:
        return desc.cursor_collection.find(handle)

    # ------------------------------------------------------------------ 3.1.4.1
    def r_getserverport(self, call: c.R_GetServerPort) -> Outcome:
        """MS-MQRR 3.1.4.1 R_GetServerPort (Opnum 0)."""
        if not 0 < self.port < 0x10000:  # MS-MQRR/3.1.4.1/R7
            return Outcome(c.R_GetServerPortResult(status=0), "MS-MQRR/3.1.4.1/R7")
        # MS-MQRR/3.1.4.1/R1 MS-MQRR/3.1.4.1/R6: the TCP port of RemoteRead, nonzero
        return Outcome(c.R_GetServerPortResult(status=self.port), "MS-MQRR/3.1.4.1/R6")

    # ------------------------------------------------------------------ 3.1.4.2 / 3.1.4.11
    def _validate_open(self, call: Any, move: bool) -> str | None:
        """The input checks of R_OpenQueue / R_OpenQueueForMove; a reason or None."""
        qf = call.pQueueFormat  # MS-MQRR/3.1.4.2/R3 MS-MQRR/3.1.4.11/R3: a QUEUE_FORMAT
        if qf is None:
            return "pQueueFormat is NULL"  # MS-MQRR/3.1.4.11/R4
        qft = getattr(qf, "m_qft", None)
        if qft not in OPEN_QUEUE_FORMAT_TYPES:  # MS-MQRR/3.1.4.11/R5
            return f"m_qft {qft} is not one R_OpenQueue accepts"
        reason = qf.validate() if hasattr(qf, "validate") else None
        if reason:
            return reason
        if move:
            if call.dwAccess != c.MQ_MOVE_ACCESS:  # MS-MQRR/3.1.4.11/R6
                return "dwAccess is not MQ_MOVE_ACCESS"
            if call.dwShareMode != c.MQ_DENY_NONE:  # MS-MQRR/3.1.4.11/R7
                return "dwShareMode is not MQ_DENY_NONE"
        else:
            if call.dwAccess not in (c.RECEIVE_ACCESS, c.PEEK_ACCESS):
                return "dwAccess is neither RECEIVE_ACCESS nor PEEK_ACCESS"
            if call.dwShareMode not in (c.MQ_DENY_NONE, c.MQ_DENY_SHARE):
                return "dwShareMode is neither MQ_DENY_NONE nor MQ_DENY_SHARE"
        # pClientId: NULL is invalid (MS-MQRR/3.1.4.11/R10) unless fNonRoutingServer is FALSE,
        # when the server ignores it (MS-MQRR/3.1.4.2/R9 MS-MQRR/3.1.4.11/R13); the server
        # otherwise ignores its value (MS-MQRR/3.1.4.2/R5 MS-MQRR/3.1.4.11/R9) and imposes no
        # limit on callers (MS-MQRR/3.1.4.2/R6 allows one); it ignores Major, Minor and
        # BuildNumber (MS-MQRR/3.1.4.2/R11 MS-MQRR/3.1.4.2/R13 MS-MQRR/3.1.4.2/R15
        # MS-MQRR/3.1.4.11/R15 MS-MQRR/3.1.4.11/R17 MS-MQRR/3.1.4.11/R19) and fWorkgroup: the
        # model has no authentication levels to base on it (MS-MQRR/3.1.4.2/R18
        # MS-MQRR/3.1.4.11/R22 allow it)
        if call.fNonRoutingServer and call.pClientId is None:
            return "pClientId is NULL"
        return None

    #: R_OpenQueue (3.1.4.2) and R_OpenQueueForMove (3.1.4.11) share their processing
    OPEN_STEPS = {
        False: {"invalid": "MS-MQRR/3.1.4.2/R23", "lookup": "MS-MQRR/3.1.4.2/R24",
                "open": "MS-MQRR/3.1.4.2/R25 MS-MQRR/3.1.4.2/R26 MS-MQRR/3.1.4.2/R27"
                        " MS-MQRR/3.1.4.2/R28",
                "ok": "MS-MQRR/3.1.4.2/R29", "context": "MS-MQRR/3.1.4.2/R30"
                                                       " MS-MQRR/3.1.4.2/R19"},
        True: {"invalid": "MS-MQRR/3.1.4.11/R5", "lookup": "MS-MQRR/3.1.4.11/R28",
               "open": "MS-MQRR/3.1.4.11/R29 MS-MQRR/3.1.4.11/R30 MS-MQRR/3.1.4.11/R31"
                       " MS-MQRR/3.1.4.11/R32",
               "ok": "MS-MQRR/3.1.4.11/R33", "context": "MS-MQRR/3.1.4.11/R34"
                                                       " MS-MQRR/3.1.4.11/R24",
               "move_context": "MS-MQRR/3.1.4.11/R35 MS-MQRR/3.1.4.11/R23"},
    }

    def _open(self, call: Any, result_type: type[c.Result], move: bool) -> Outcome:
        steps = self.OPEN_STEPS[move]
        if self._validate_open(call, move) is not None:  # invalid
            # R_OpenQueue names the status (MS-MQRR/3.1.4.2/R23); R_OpenQueueForMove's
            # processing names none for its parameter rules, only that a failure is thrown
            # and that the client treats all thrown HRESULTs alike (MS-MQRR/3.1.4.11/R25)
            return status_only(result_type, MQ_ERROR_INVALID_PARAMETER, _first(steps["invalid"]),
                               raised=True, any_failure=move)
        format_name = from_queue_format(call.pQueueFormat)
        if find_queue(self.env, format_name) is None:  # lookup
            return status_only(result_type, MQ_ERROR_QUEUE_NOT_FOUND, _first(steps["lookup"]),
                               raised=True)
        if move:
            access = QueueAccessType.MoveAccess
        elif call.dwAccess == c.RECEIVE_ACCESS:
            access = QueueAccessType.ReceiveAccess
        else:
            access = QueueAccessType.PeekAccess
        share = (QueueShareMode.DenyNone if call.dwShareMode == c.MQ_DENY_NONE
                 else QueueShareMode.DenyReceive)
        opened = open_queue(self.env, format_name, access, share)  # open
        if opened.status != MQ_OK:  # ok
            return status_only(result_type, opened.status, _first(steps["ok"]), raised=True)
        desc = opened.open_queue_descriptor
        desc.remote_read_state = OpenQueueDescriptorRemoteReadState.Opened
        context = self._new_context(desc)  # context
        if move:
            # move_context: a value that logically references the handle; taken from the
            # context handle's UUID so that it is unpredictable to other clients: its last 8
            # octets, where the handles' UUIDs differ (Environment.ids counts in the last 48
            # bits), so that no two open handles share one
            move_context = int.from_bytes(context[-8:], "little") or desc.handle
            self._move_contexts[move_context] = desc
            self._peaks[1] = max(self._peaks[1], len(self._move_contexts))
            desc._move_context = move_context
            return Outcome(c.R_OpenQueueForMoveResult(pMoveContext=move_context,
                                                      pphContext=context),
                           _first(steps["context"]))
        return Outcome(c.R_OpenQueueResult(pphContext=context), _first(steps["context"]))

    def r_openqueue(self, call: c.R_OpenQueue) -> Outcome:
        """MS-MQRR 3.1.4.2 R_OpenQueue (Opnum 2) (MS-MQRR/3.1.4.2/R22)."""
        return self._open(call, c.R_OpenQueueResult, move=False)

    def r_openqueueformove(self, call: c.R_OpenQueueForMove) -> Outcome:
        """MS-MQRR 3.1.4.11 R_OpenQueueForMove (Opnum 11) (MS-MQRR/3.1.4.11/R27)."""
        return self._open(call, c.R_OpenQueueForMoveResult, move=True)

    # ------------------------------------------------------------------ 3.1.4.3
    def r_closequeue(self, call: c.R_CloseQueue) -> Outcome:
        """MS-MQRR 3.1.4.3 R_CloseQueue (Opnum 3) (MS-MQRR/3.1.4.3/R8)."""
        desc = self.descriptor(call.pphContext)  # MS-MQRR/3.1.4.3/R9
        if desc is None:  # MS-MQRR/3.1.4.3/R10
            return Outcome(c.R_CloseQueueResult(status=MQ_ERROR_INVALID_HANDLE,  # .../R7
                                                pphContext=call.pphContext),
                           "MS-MQRR/3.1.4.3/R10", any_failure=True)  # MS-MQRR/3.1.4.3/R7
        close_queue(self.env,  # MS-MQRR/3.1.4.3/R11
                    desc)  # MS-MQRR/3.1.4.3/R12
        # MS-MQRR/3.1.4.3/R13: remove the pending requests of this handle
        for key in self.pending_request_table.keys_of(bytes(call.pphContext)):
            entry = self._remove_entry(key)
            # choice 4: a received, unacknowledged message stays as Dequeue Message Begin left
            # it, unless env.choices returns it to the queue as the rundown does (3.1.6.2)
            if self.env.choices.close_returns_unacknowledged and entry.lookup_identifier:
                message = self._message_by_lookup_id(desc, entry.lookup_identifier)
                if message is not None:
                    dequeue_message_end(self.env, desc, message, delete_message=False)
        self._forget(desc, call.pphContext)
        return Outcome(c.R_CloseQueueResult(status=MQ_OK,  # MS-MQRR/3.1.4.3/R15 .../R6
                                            pphContext=None),  # MS-MQRR/3.1.4.3/R14
                       # MS-MQRR/3.1.4.3/R6 MS-MQRR/3.1.4.3/R5
                       "MS-MQRR/3.1.4.3/R15")

    def _forget(self, desc: OpenQueueDescriptor, context: bytes) -> None:
        self._contexts.pop(bytes(context), None)
        self._contexts = self._compact(self._contexts, 0)
        move_context = desc._move_context
        if move_context is not None and self._move_contexts.get(move_context) is desc:
            del self._move_contexts[move_context]
            self._move_contexts = self._compact(self._move_contexts, 1)

    def _compact(self, table: dict, which: int) -> dict:
        """``table`` (peak ``self._peaks[which]``), or a compact copy once it is sparse
        (model/refs.py)."""
        if not sparse(table, self._peaks[which]):
            return table
        self._peaks[which] = len(table)
        return dict(table)

    # ------------------------------------------------------------------ 3.1.4.4 / 3.1.4.5
    def r_createcursor(self, call: c.R_CreateCursor) -> Outcome:
        """MS-MQRR 3.1.4.4 R_CreateCursor (Opnum 4) (MS-MQRR/3.1.4.4/R9)."""
        desc = self.descriptor(call.phContext)  # MS-MQRR/3.1.4.4/R10
        if desc is None:  # MS-MQRR/3.1.4.4/R11
            return status_only(c.R_CreateCursorResult, MQ_ERROR_INVALID_HANDLE,
                               "MS-MQRR/3.1.4.4/R11",
                               any_failure=True)  # MS-MQRR/3.1.4.4/R7
        cursor = open_cursor(self.env,  # MS-MQRR/3.1.4.4/R12
                             desc)  # MS-MQRR/3.1.4.4/R13
        return Outcome(c.R_CreateCursorResult(status=MQ_OK,  # MS-MQRR/3.1.4.4/R15 .../R6
                                              # MS-MQRR/3.1.4.4/R14 MS-MQRR/3.1.4.4/R5
                                              phCursor=cursor.handle),  # MS-MQRR/3.1.4.4/R6
                       "MS-MQRR/3.1.4.4/R15")

    def r_closecursor(self, call: c.R_CloseCursor) -> Outcome:
        """MS-MQRR 3.1.4.5 R_CloseCursor (Opnum 5) (MS-MQRR/3.1.4.5/R10)."""
        desc = self.descriptor(call.phContext)  # MS-MQRR/3.1.4.5/R11
        cursor = self._cursor(desc, call.hCursor) if desc else None  # MS-MQRR/3.1.4.5/R12
        if cursor is None:  # MS-MQRR/3.1.4.5/R13
            # MS-MQRR/3.1.4.5/R7: an unknown or closed cursor; MS-MQRR/3.1.4.5/R9
            return status_only(c.R_CloseCursorResult, MQ_ERROR_INVALID_HANDLE,
                               "MS-MQRR/3.1.4.5/R13",
                               any_failure=True)
        close_cursor(  # MS-MQRR/3.1.4.5/R14
                     cursor)  # MS-MQRR/3.1.4.5/R15
        return status_only(c.R_CloseCursorResult, MQ_OK,  # MS-MQRR/3.1.4.5/R8
                           "MS-MQRR/3.1.4.5/R16")

    # ------------------------------------------------------------------ 3.1.4.6
    def r_purgequeue(self, call: c.R_PurgeQueue) -> Outcome:
        """MS-MQRR 3.1.4.6 R_PurgeQueue (Opnum 6) (MS-MQRR/3.1.4.6/R7)."""
        queue_desc = self.descriptor(call.phContext)  # MS-MQRR/3.1.4.6/R8
        if queue_desc is None:  # MS-MQRR/3.1.4.6/R9
            return status_only(c.R_PurgeQueueResult, MQ_ERROR_INVALID_HANDLE, "MS-MQRR/3.1.4.6/R9",
                               any_failure=True)  # MS-MQRR/3.1.4.6/R6
        if queue_desc.access_type is QueueAccessType.ReceiveAccess:  # MS-MQRR/3.1.4.6/R10
            purge_queue(self.env,  # MS-MQRR/3.1.4.6/R11
                        queue_desc.queue_reference)  # MS-MQRR/3.1.4.6/R12
            return status_only(c.R_PurgeQueueResult, MQ_OK,  # MS-MQRR/3.1.4.6/R5
                               "MS-MQRR/3.1.4.6/R13")
        return status_only(c.R_PurgeQueueResult, STATUS_ACCESS_DENIED, "MS-MQRR/3.1.4.6/R14")

    # ------------------------------------------------------------------ 3.1.4.7
    @staticmethod
    def _validate_receive(call: Any) -> str | None:
        """The parameter table of R_StartReceive (3.1.4.7 LookupId, hCursor, ulAction,
        ulTimeout); a reason or None."""
        action = call.ulAction
        if call.LookupId != 0:
            if call.ulTimeout != 0:  # MS-MQRR 3.1.4.7 LookupId: ulTimeout 0
                return "LookupId is set, so ulTimeout must be 0"
            if call.hCursor != 0:
                return "LookupId is set, so hCursor must be 0"
            if action not in LOOKUP_ACTIONS:
                return "LookupId is set, so ulAction must be an MQ_LOOKUP_ action"
            # the ulAction table says LookupId 0 for MQ_LOOKUP_RECEIVE_PREV; the list under
            # LookupId and the action's own meaning need a nonzero LookupId: the list wins
            return None
        if action in LOOKUP_ACTIONS:
            return "ulAction is an MQ_LOOKUP_ action but LookupId is 0"
        if call.hCursor != 0:
            if action not in CURSOR_ACTIONS:
                return "hCursor is set, so ulAction must be RECEIVE, PEEK_CURRENT or PEEK_NEXT"
            return None
        if action not in PLAIN_ACTIONS:
            return "without LookupId or hCursor, ulAction must be RECEIVE or PEEK_CURRENT"
        return None

    def _start_receive(self, call: Any, result_type: type[c.Result], transaction: Any,
                       steps: dict[str, str]) -> Generator[Wait, Any, Outcome]:
        """The shared body of R_StartReceive and R_StartTransactionalReceive after their own
        first checks; ``steps`` names the section's requirement IDs (RECEIVE_STEPS)."""
        queue_desc = self.descriptor(call.phContext)  # find_desc
        if queue_desc is None:  # not_found
            return status_only(result_type, MQ_ERROR_INVALID_HANDLE, _first(steps["not_found"]),
                               any_failure=True)
        cursor = None
        if call.hCursor != 0:  # cursor
            cursor = self._cursor(queue_desc, call.hCursor)
            if cursor is None:
                # "return STATUS_INVALID_HANDLE (0xC0000008)", a code the Return Values table
                # does not list; the client treats every failure alike: any failure passes
                return status_only(result_type, STATUS_INVALID_HANDLE, _first(steps["cursor"]),
                                   any_failure=True)
        if (call.ulAction in RECEIVE_ACTIONS
                and queue_desc.access_type is not QueueAccessType.ReceiveAccess):
            # MS-MQRR/3.1.4.7/R6: a PEEK_ACCESS handle allows only peek actions (choice 2)
            return status_only(result_type, MQ_ERROR_INVALID_PARAMETER, "MS-MQRR/3.1.4.7/R6",
                               any_failure=True)
        # MS-MQRR/3.1.2.1/R1 MS-MQRR/3.1.2.1/R2: the call waits at most ulTimeout
        timeout = INFINITE if call.ulTimeout == c.INFINITE_TIMEOUT else call.ulTimeout
        action = call.ulAction
        if action == c.MQ_ACTION_RECEIVE:  # receive
            entry = PendingRequestEntry(  # entry
                request_id=call.dwRequestId, queue_context_handle=bytes(call.phContext),
                lookup_identifier=0, time_stamp=self.env.now & 0xFFFFFFFF)
            self._add_entry(entry)  # cleanup_timer add_entry
            result = yield from dequeue_message_begin(  # begin
                self.env, queue_desc, timeout=timeout, cursor=cursor, tag=call.dwRequestId,
                transaction=transaction)
            if holds_lock(action, result.status):  # set_lookup
                _set_lookup(self, entry, result.message)
        elif action == c.MQ_ACTION_PEEK_CURRENT:  # peek_current
            result = yield from peek_message(self.env, queue_desc, timeout=timeout,
                                             cursor=cursor)
        elif action == c.MQ_ACTION_PEEK_NEXT:  # peek_next
            result = yield from peek_next_message(self.env, queue_desc, cursor, timeout=timeout)
        else:  # lookup_peek_* and lookup_receive_* (LOOKUP_TABLE)
            peek, seek = LOOKUP_TABLE[action]
            result = read_message_by_lookup_identifier(
                self.env, queue_desc, call.LookupId, peek_operation=peek, lookup_operation=seek,
                transaction=None if peek else transaction,
                two_phase_read=not peek and transaction is None)
            if registers_pending_request(action, result.status):
                # the text registers no PendingRequestEntry for a receive by lookup
                # identifier, yet R_EndReceive (3.1.4.9) ends every two-phase receive through
                # that table: register it, or the message would stay locked until rundown
                self._add_entry(PendingRequestEntry(
                    request_id=call.dwRequestId, queue_context_handle=bytes(call.phContext),
                    lookup_identifier=result.message.lookup_identifier,
                    time_stamp=self.env.now & 0xFFFFFFFF))
        if result.status != MQ_OK:  # ok
            return status_only(result_type, result.status, _first(steps["ok"]),
                               any_failure=self._not_available(call, queue_desc, result.status))
        message = result.message
        sections = packet_sections(message, call.dwMaxBodySize,  # sections
                                   call.dwMaxCompoundMessageSize,
                                   subqueue_name(queue_desc.queue_reference))
        return Outcome(result_type(
            status=MQ_OK,  # return
            pdwArriveTime=message.arrival_time & 0xFFFFFFFF,  # arrive
            pSequenceId=message.lookup_identifier & 0x00FFFFFFFFFFFFFF,  # sequence
            pdwNumberOfSections=len(sections),  # count
            ppPacketSections=sections), _first(steps["return"]))

    def r_startreceive(self, call: c.R_StartReceive) -> Generator[Wait, Any, Outcome]:
        """MS-MQRR 3.1.4.7 R_StartReceive (Opnum 7) (MS-MQRR/3.1.4.7/R49)."""
        steps = RECEIVE_STEPS["3.1.4.7"]
        if self._validate_receive(call) is not None:  # invalid
            # errata lookup-receive-prev-lookup-id: the ulAction table gives LookupId 0 for
            # MQ_LOOKUP_RECEIVE_PREV, the LookupId list forbids it; read by the table, no
            # message precedes "message 0" either: any failure follows one reading or the other
            table_reading = call.ulAction == c.MQ_LOOKUP_RECEIVE_PREV and call.LookupId == 0
            return status_only(c.R_StartReceiveResult, MQ_ERROR_INVALID_PARAMETER,
                               _first(steps["invalid"]), any_failure=table_reading)
        return (yield from self._start_receive(call, c.R_StartReceiveResult, None, steps))

    def r_starttransactionalreceive(self, call: c.R_StartTransactionalReceive
                                    ) -> Generator[Wait, Any, Outcome]:
        """MS-MQRR 3.1.4.13 R_StartTransactionalReceive (Opnum 13) (MS-MQRR/3.1.4.13/R47)."""
        steps = RECEIVE_STEPS["3.1.4.13"]
        result_type = c.R_StartTransactionalReceiveResult
        if self._validate_receive(call) is not None:  # MS-MQRR/3.1.4.13/R48
            return status_only(result_type, MQ_ERROR_INVALID_PARAMETER, "MS-MQRR/3.1.4.13/R48")
        if call.pTransactionId is None:  # MS-MQRR/3.1.4.13/R49
            # MS-MQRR/3.1.4.13/R51: the same binding
            plain = c.R_StartReceive(  # MS-MQRR/3.1.4.13/R50
                phContext=call.phContext,  # MS-MQRR/3.1.4.13/R52
                LookupId=call.LookupId,  # MS-MQRR/3.1.4.13/R53
                hCursor=call.hCursor,  # MS-MQRR/3.1.4.13/R54
                ulAction=call.ulAction,  # MS-MQRR/3.1.4.13/R55
                ulTimeout=call.ulTimeout,  # MS-MQRR/3.1.4.13/R56
                dwRequestId=call.dwRequestId,  # MS-MQRR/3.1.4.13/R57
                dwMaxBodySize=call.dwMaxBodySize,  # MS-MQRR/3.1.4.13/R58
                # MS-MQRR/3.1.4.13/R59
                dwMaxCompoundMessageSize=call.dwMaxCompoundMessageSize)
            outcome = yield from self.r_startreceive(plain)
            # MS-MQRR/3.1.4.13/R60 MS-MQRR/3.1.4.13/R61 MS-MQRR/3.1.4.13/R62
            # MS-MQRR/3.1.4.13/R63: the [out] values pass on
            r = outcome.result
            return Outcome(result_type(  # MS-MQRR/3.1.4.13/R64
                status=r.status, raised=r.raised, pdwArriveTime=r.pdwArriveTime,
                pSequenceId=r.pSequenceId, pdwNumberOfSections=r.pdwNumberOfSections,
                ppPacketSections=r.ppPacketSections), outcome.rule, outcome.any_failure)
        queue_desc = self.descriptor(call.phContext)  # MS-MQRR/3.1.4.13/R65
        if queue_desc is None:  # MS-MQRR/3.1.4.13/R66
            return status_only(result_type, MQ_ERROR_INVALID_HANDLE, "MS-MQRR/3.1.4.13/R66",
                               any_failure=True)
        if call.hCursor != 0 and self._cursor(queue_desc, call.hCursor) is None:  # .../R67
            return status_only(result_type, STATUS_INVALID_HANDLE, "MS-MQRR/3.1.4.13/R67",
                               any_failure=True)
        if not queue_desc.queue_reference.transactional:  # MS-MQRR/3.1.4.13/R68
            return status_only(result_type, MQ_ERROR_TRANSACTION_USAGE, "MS-MQRR/3.1.4.13/R68")
        if call.ulAction in PEEK_ACTIONS:  # MS-MQRR/3.1.4.13/R69
            return status_only(result_type, MQ_ERROR_TRANSACTION_USAGE, "MS-MQRR/3.1.4.13/R69")
        # MS-MQRR/3.1.4.13/R70
        transaction = _find_transaction(self.env, bytes(call.pTransactionId))
        if transaction is None:  # MS-MQRR/3.1.4.13/R71
            transaction = create_transaction(self.env,  # MS-MQRR/3.1.4.13/R72
                                             None)  # MS-MQRR/3.1.4.13/R73 MS-MQRR/3.1.4.13/R74
        return (yield from self._start_receive(call, result_type, transaction, steps))

    # ------------------------------------------------------------------ pending requests
    def _add_entry(self, entry: PendingRequestEntry) -> None:
        key = (entry.request_id, entry.queue_context_handle)
        old = self.pending_request_table.entries.get(key)
        if old is not None:
            self.env.cancel_timer(old)
        self.pending_request_table.entries[key] = entry  # MS-MQRR 3.1.1.3
        # MS-MQRR/3.1.2.2/R1 MS-MQRR/3.1.2.2/R2: a per-request cleanup timer
        self.env.start_timer(self.cleanup_ms,
                             lambda: self.pending_request_cleanup_timer_event(entry), key=entry)

    def _remove_entry(self, key: tuple[int, bytes]) -> PendingRequestEntry | None:
        entry = self.pending_request_table.entries.pop(key, None)
        if entry is not None:
            self.env.cancel_timer(entry)
        return entry

    def _not_available(self, call: Any, desc: OpenQueueDescriptor, status: int) -> bool:
        """A receive (not a peek) by lookup identifier that found its message in the queue but
        not Available: the seek gives it no status (MS-MQDMPR 3.1.7.3.3 R27-R39 set one for
        a peek only), so any failure conforms (choice 8)."""
        return (status == MQ_ERROR_MESSAGE_NOT_FOUND
                and LOOKUP_TABLE.get(call.ulAction) == (False, MessageSeekAction.SeekCurrent)
                and self._message_by_lookup_id(desc, call.LookupId) is not None)

    @staticmethod
    def _message_by_lookup_id(desc: OpenQueueDescriptor, lookup_id: int) -> Any:
        queue = desc.queue_reference
        index = queue._positions_by_lookup_id
        position = index.get(lookup_id) if index is not None else None
        if position is None:
            # a position Move Message left Deleted (MS-MQDMPR 3.1.7.1.16: it stays in the
            # list) holds a message that is no longer in this queue
            for p in queue.message_position_list:
                if (p.message_reference.lookup_identifier == lookup_id
                        and p.state is not MessagePositionState.Deleted):
                    position = p
                    break
        return position.message_reference if position is not None else None

    # ------------------------------------------------------------------ 3.1.4.8
    def r_cancelreceive(self, call: c.R_CancelReceive) -> Outcome:
        """MS-MQRR 3.1.4.8 R_CancelReceive (Opnum 8) (MS-MQRR/3.1.4.8/R8)."""
        queue_desc = self.descriptor(call.phContext)  # MS-MQRR/3.1.4.8/R9
        if queue_desc is None:  # MS-MQRR/3.1.4.8/R10
            return status_only(c.R_CancelReceiveResult, MQ_ERROR_INVALID_HANDLE,
                               "MS-MQRR/3.1.4.8/R10",
                               any_failure=True)
        # MS-MQRR/3.1.4.8/R16: the cancelled R_StartReceive answers MQ_ERROR_OPERATION_CANCELLED,
        # carried to it by the wait's Timer Stop
        status = cancel_waiting_message_read_request(  # MS-MQRR/3.1.4.8/R11
            self.env, queue_desc.queue_reference,  # MS-MQRR/3.1.4.8/R12
            call.dwRequestId,  # MS-MQRR/3.1.4.8/R13
            MQ_ERROR_OPERATION_CANCELLED,
            # choice 6: only the reads waiting through this handle (MS-MQRR/3.1.4.8/R2)
            only=queue_desc if self.env.choices.cancel_through_own_handle else None)
        if not ends_pending_request(c.R_CancelReceive, status):  # MS-MQRR/3.1.4.8/R14
            return status_only(c.R_CancelReceiveResult, status, "MS-MQRR/3.1.4.8/R14",
                               any_failure=True)  # MS-MQRR/3.1.4.8/R7
        self._remove_entry((call.dwRequestId, bytes(call.phContext)))  # MS-MQRR/3.1.4.8/R15
        return status_only(c.R_CancelReceiveResult, MQ_OK, "MS-MQRR/3.1.4.8/R6")

    # ------------------------------------------------------------------ 3.1.4.9 / 3.1.4.15
    def _end_receive(self, call: Any, result_type: type[c.Result], transactional: bool,
                     steps: dict[str, str]) -> Outcome:
        """The body of R_EndReceive and R_EndTransactionalReceive (END_STEPS)."""
        context = bytes(call.phContext) if call.phContext is not None else b""
        if call.dwAck not in (c.RR_ACK, c.RR_NACK):  # dwAck: range(1,2) in the IDL
            # the RPC runtime's strict NDR check (MS-MQRR/3.1.4/R1) refuses the value with a
            # fault before the method runs; the method itself is given no status for it
            return status_only(result_type, MQ_ERROR_INVALID_PARAMETER, _first(steps["ack"]),
                               any_failure=True)
        if not self.pending_request_table.keys_of(context):  # no_entries
            # a NULL, closed or unknown handle never reaches the method over RPC: the runtime
            # refuses it first (strict context handles, MS-MQRR 2.2.4), with a fault
            return status_only(result_type, MQ_ERROR_INVALID_HANDLE, _first(steps["no_entries"]),
                               any_failure=self.descriptor(call.phContext) is None)
        entry = self._remove_entry((call.dwRequestId, context))  # lookup_entry
        if entry is None:
            return status_only(result_type, MQ_ERROR_INVALID_PARAMETER,
                               _first(steps["lookup_entry"]))
        queue_desc = self.descriptor(call.phContext)  # find_desc
        if queue_desc is None:  # not_found
            return status_only(result_type, MQ_ERROR_INVALID_HANDLE, _first(steps["not_found"]),
                               any_failure=True)
        message = self._message_by_lookup_id(queue_desc,  # find_message
                                             entry.lookup_identifier)
        if message is None:  # no_message
            return status_only(result_type, MQ_ERROR_MESSAGE_NOT_FOUND, _first(steps["no_message"]))
        status = dequeue_message_end(self.env, queue_desc, message,  # end
                                     delete_message=call.dwAck == c.RR_ACK,
                                     transactional=transactional)
        return status_only(result_type, status, _first(steps["return"]))

    def r_endreceive(self, call: c.R_EndReceive) -> Outcome:
        """MS-MQRR 3.1.4.9 R_EndReceive (Opnum 9) (MS-MQRR/3.1.4.9/R12)."""
        return self._end_receive(call, c.R_EndReceiveResult, False, END_STEPS["3.1.4.9"])

    def r_endtransactionalreceive(self, call: c.R_EndTransactionalReceive) -> Outcome:
        """MS-MQRR 3.1.4.15 R_EndTransactionalReceive (Opnum 15) (MS-MQRR/3.1.4.15/R12)."""
        return self._end_receive(call, c.R_EndTransactionalReceiveResult, True,
                                 END_STEPS["3.1.4.15"])

    # ------------------------------------------------------------------ 3.1.4.10
    def r_movemessage(self, call: c.R_MoveMessage) -> Outcome:
        """MS-MQRR 3.1.4.10 R_MoveMessage (Opnum 10) (MS-MQRR/3.1.4.10/R14)."""
        source = self.descriptor(call.phContextFrom)  # MS-MQRR/3.1.4.10/R15
        if source is None:  # MS-MQRR/3.1.4.10/R16
            return status_only(c.R_MoveMessageResult, MQ_ERROR_INVALID_HANDLE,
                               "MS-MQRR/3.1.4.10/R16",
                               any_failure=True)  # MS-MQRR/3.1.4.10/R13
        if source.access_type is not QueueAccessType.ReceiveAccess:
            # MS-MQRR/3.1.4.10/R4: the source is a handle R_OpenQueue returned for
            # RECEIVE_ACCESS; the steps (R15, R16) look only for its descriptor (errata
            # move-message-source-access). A handle opened to peek, or for move, moves no
            # message out of its queue (choice 7)
            return status_only(c.R_MoveMessageResult, MQ_ERROR_ACCESS_DENIED,
                               "MS-MQRR/3.1.4.10/R4", any_failure=True)  # MS-MQRR/3.1.4.10/R13
        destination = self._move_contexts.get(call.ullContextTo)  # MS-MQRR/3.1.4.10/R17
        if (destination is None or destination.queue_reference is None  # MS-MQRR/3.1.4.10/R18
                or destination.access_type is not QueueAccessType.MoveAccess):
            return status_only(c.R_MoveMessageResult, MQ_ERROR_INVALID_HANDLE,
                               "MS-MQRR/3.1.4.10/R18")
        src_q, dst_q = source.queue_reference, destination.queue_reference
        related = (src_q in dst_q.subqueue_collection  # MS-MQRR/3.1.4.10/R20
                   or dst_q in src_q.subqueue_collection  # MS-MQRR/3.1.4.10/R21
                   or _parent_pathname(src_q.pathname)  # MS-MQRR/3.1.4.10/R22
                   == _parent_pathname(dst_q.pathname))
        if not related:  # MS-MQRR/3.1.4.10/R19 MS-MQRR/3.1.4.10/R1
            return status_only(c.R_MoveMessageResult, STATUS_INVALID_PARAMETER,
                               "MS-MQRR/3.1.4.10/R19")
        tx_id = call.pTransactionId
        has_tx = tx_id is not None and bytes(tx_id) != XACTUOW_ZERO
        if has_tx and not dst_q.transactional:  # MS-MQRR/3.1.4.10/R23 MS-MQRR/3.1.4.10/R10
            return status_only(c.R_MoveMessageResult, MQ_ERROR_TRANSACTION_USAGE,
                               "MS-MQRR/3.1.4.10/R23")
        # MS-MQRR/3.1.4.10/R24: the text compares PendingRequestEntry.LookupIdentifier; the
        # call carries the message's LookupId, which is what identifies it here
        message = self._message_by_lookup_id(source, call.LookupId)
        if message is None:  # MS-MQRR/3.1.4.10/R25
            return status_only(c.R_MoveMessageResult, MQ_ERROR_MESSAGE_NOT_FOUND,
                               "MS-MQRR/3.1.4.10/R25")
        if _in_a_transaction(self.env, message.message_position_reference):  # .../R26
            return status_only(c.R_MoveMessageResult, MQ_ERROR_MESSAGE_LOCKED_UNDER_TRANSACTION,
                               "MS-MQRR/3.1.4.10/R26")
        transaction = None
        if has_tx:  # MS-MQRR/3.1.4.10/R27
            transaction = _find_transaction(self.env, bytes(tx_id))
            if transaction is None:  # MS-MQRR/3.1.4.10/R28
                return status_only(c.R_MoveMessageResult, MQ_ERROR_TRANSACTION_SEQUENCE,
                                   "MS-MQRR/3.1.4.10/R28")
        move_message(self.env,  # MS-MQRR/3.1.4.10/R29
                     message.message_position_reference,  # MS-MQRR/3.1.4.10/R30
                     dst_q,  # MS-MQRR/3.1.4.10/R31
                     transaction=transaction)  # MS-MQRR/3.1.4.10/R32
        return status_only(c.R_MoveMessageResult, MQ_OK,  # MS-MQRR/3.1.4.10/R12
                           "MS-MQRR/3.1.4.10/R33")

    # ------------------------------------------------------------------ 3.1.4.12
    def r_qmenlistremotetransaction(self, call: c.R_QMEnlistRemoteTransaction) -> Outcome:
        """MS-MQRR 3.1.4.12 R_QMEnlistRemoteTransaction (Opnum 12) (MS-MQRR/3.1.4.12/R13)."""
        tx_id = call.pTransactionId
        if tx_id is None or len(bytes(tx_id)) != c.XACTUOW_SIZE:  # MS-MQRR/3.1.4.12/R5
            return status_only(c.R_QMEnlistRemoteTransactionResult, MQ_ERROR_INVALID_PARAMETER,
                               "MS-MQRR/3.1.4.12/R5", any_failure=True)
        token = call.pbPropagationToken
        # MS-MQRR/3.1.4.12/R6 MS-MQRR/3.1.4.12/R8: a token, and cbPropagationToken its size
        if not token or call.cbPropagationToken != len(token):
            return status_only(c.R_QMEnlistRemoteTransactionResult, MQ_ERROR_INVALID_PARAMETER,
                               "MS-MQRR/3.1.4.12/R8", any_failure=True)
        # [range(0, 131072)] on cbPropagationToken (MS-MQRR 6): the RPC runtime's strict NDR
        # check (MS-MQRR/3.1.4/R1) refuses a larger token before the method runs
        if call.cbPropagationToken > MAX_PROPAGATION_TOKEN:
            return status_only(c.R_QMEnlistRemoteTransactionResult, MQ_ERROR_INVALID_PARAMETER,
                               "MS-MQRR/3.1.4.12/R6", any_failure=True)
        # MS-MQRR/3.1.4.12/R9 MS-MQRR/3.1.4.12/R10: pQueueFormat is ignored
        # MS-MQRR/3.1.4.12/R12: the failures above
        # MS-MQRR/3.1.4.12/R1 MS-MQRR/3.1.4.12/R14: enlisting with the transaction manager
        # (MS-DTCO) is outside the model; the transaction is recorded so that later calls
        # find it by its identifier
        if _find_transaction(self.env, bytes(tx_id)) is None:
            create_transaction(self.env,  # MS-MQRR/3.1.4.12/R15
                               bytes(tx_id))  # MS-MQRR/3.1.4.12/R16
        return status_only(c.R_QMEnlistRemoteTransactionResult, MQ_OK,  # MS-MQRR/3.1.4.12/R11
                           "MS-MQRR/3.1.4.12/R17")

    # ------------------------------------------------------------------ 3.1.4.13
    # ------------------------------------------------------------------ 3.1.4.14
    def r_setuseracknowledgementclass(self, call: c.R_SetUserAcknowledgementClass) -> Outcome:
        """MS-MQRR 3.1.4.14 R_SetUserAcknowledgementClass (Opnum 14) (MS-MQRR/3.1.4.14/R10)."""
        result_type = c.R_SetUserAcknowledgementClassResult
        desc = self.descriptor(call.phContext)  # MS-MQRR/3.1.4.14/R11
        if desc is None:  # MS-MQRR/3.1.4.14/R12
            return status_only(result_type, MQ_ERROR_INVALID_HANDLE, "MS-MQRR/3.1.4.14/R12",
                               any_failure=True)  # MS-MQRR/3.1.4.14/R9
        message = self._message_by_lookup_id(desc, call.LookupId)  # MS-MQRR/3.1.4.14/R13
        if message is None:  # MS-MQRR/3.1.4.14/R14
            return status_only(result_type, MQ_ERROR_MESSAGE_NOT_FOUND, "MS-MQRR/3.1.4.14/R14")
        position = message.message_position_reference
        operation = None
        # MS-MQRR/3.1.4.14/R15
        for transaction in self.env.local_queue_manager.transaction_collection:
            for op in transaction.transactional_operation_collection:
                if op.message_position_reference is position:
                    operation = op
        if operation is None:  # MS-MQRR/3.1.4.14/R16
            return status_only(result_type, MQ_ERROR_TRANSACTION_USAGE, "MS-MQRR/3.1.4.14/R16")
        if call.usClass != 0:  # MS-MQRR/3.1.4.14/R17
            operation.dequeue_reason = MessageClass.NackReceiveRejected
        return status_only(result_type, MQ_OK, "MS-MQRR/3.1.4.14/R18")  # MS-MQRR/3.1.4.14/R8

    # ------------------------------------------------------------------ 3.1.5.1, 3.1.6
    def pending_request_cleanup_timer_event(self, entry: PendingRequestEntry) -> None:
        """MS-MQRR 3.1.5.1 Pending Request Cleanup Timer Event (MS-MQRR/3.1.5.1/R1)."""
        key = (entry.request_id, entry.queue_context_handle)
        if self.pending_request_table.entries.get(key) is not entry:
            return
        desc = self.descriptor(entry.queue_context_handle)  # MS-MQRR/3.1.5.1/R2
        # MS-MQRR/3.1.5.1/R3
        message = (self._message_by_lookup_id(desc, entry.lookup_identifier)
                   if desc is not None and entry.lookup_identifier else None)
        if message is not None:
            dequeue_message_end(self.env,  # MS-MQRR/3.1.5.1/R4
                                desc,  # MS-MQRR/3.1.5.1/R5
                                message,  # MS-MQRR/3.1.5.1/R6
                                delete_message=False)  # MS-MQRR/3.1.5.1/R7
        del self.pending_request_table.entries[key]  # MS-MQRR/3.1.5.1/R8

    def rpc_failure(self, context: bytes) -> None:
        """MS-MQRR 3.1.6.1 RPC Failure Event (MS-MQRR/3.1.6.1/R1)."""
        desc = self.descriptor(context)  # MS-MQRR/3.1.6.1/R2
        if desc is None:  # MS-MQRR/3.1.6.1/R3
            return
        for cursor in list(desc.cursor_collection):  # MS-MQRR/3.1.6.1/R4 MS-MQRR/3.1.6.1/R5
            close_cursor(  # MS-MQRR/3.1.6.1/R6
                         cursor)  # MS-MQRR/3.1.6.1/R7
        close_queue(self.env,  # MS-MQRR/3.1.6.1/R8
                    desc)  # MS-MQRR/3.1.6.1/R9

    def end_waits(self, desc: OpenQueueDescriptor) -> None:
        """The first steps of Close Queue (MS-MQDMPR 3.1.7.1.6 R9-R13), on their own: the
        descriptor's waiting reads are cancelled. A rundown done in parts (model/host.py
        ``run_down``) takes them before it closes a handle's cursors a part at a time."""
        for read_op in list(desc.waiting_message_read_operation_collection):
            if read_op.tag is not None:
                cancel_waiting_message_read_request(self.env, desc.queue_reference, read_op.tag,
                                                    MQ_ERROR_OPERATION_CANCELLED)

    @staticmethod
    def close_cursors(cursors: list[Any]) -> None:
        """Close Queue's next steps (MS-MQDMPR 3.1.7.1.6 R14-R16) for some of a descriptor's
        cursors: each closed by Close Cursor (3.1.7.1.2)."""
        for cursor in cursors:
            close_cursor(cursor)

    def rundown(self, context: bytes) -> int:
        """MS-MQRR 3.1.6.2 Queue Context Handles Rundown Routine (MS-MQRR/3.1.6.2/R1): the
        client went away holding ``context``."""
        desc = self.descriptor(context)  # MS-MQRR/3.1.6.2/R2
        if desc is None:  # MS-MQRR/3.1.6.2/R3
            return MQ_ERROR_INVALID_HANDLE
        close_queue(self.env,  # MS-MQRR/3.1.6.2/R4
                    desc)  # MS-MQRR/3.1.6.2/R5
        for key in self.pending_request_table.keys_of(bytes(context)):  # MS-MQRR/3.1.6.2/R6
            entry = self.pending_request_table.entries[key]
            message = self._message_by_lookup_id(  # MS-MQRR/3.1.6.2/R7
                desc, entry.lookup_identifier) if entry.lookup_identifier else None
            if message is not None:
                dequeue_message_end(self.env,  # MS-MQRR/3.1.6.2/R8
                                    desc,  # MS-MQRR/3.1.6.2/R9
                                    message,  # MS-MQRR/3.1.6.2/R10
                                    delete_message=False)  # MS-MQRR/3.1.6.2/R11
            self._remove_entry(key)  # MS-MQRR/3.1.6.2/R12
        self._forget(desc, context)  # MS-MQRR/3.1.6.2/R13
        return MQ_OK  # MS-MQRR/3.1.6.2/R14


def _parent_pathname(pathname: str) -> str:
    """A queue's path name without its subqueue part (";name"), case-folded (MS-MQMQ 2.1)."""
    return pathname.split(";", 1)[0].casefold()


def _find_transaction(env: Environment, identifier: bytes) -> Any:
    for transaction in env.local_queue_manager.transaction_collection:
        if transaction.identifier == identifier:
            return transaction
    return None


def _in_a_transaction(env: Environment, position: Any) -> bool:
    for transaction in env.local_queue_manager.transaction_collection:
        for op in transaction.transactional_operation_collection:
            if op.message_position_reference is position:
                return True
    return False


def _set_lookup(server: RemoteReadServer, entry: PendingRequestEntry, message: Any) -> None:
    """3.1.4.7: "set the LookupIdentifier ADM attribute of the new PendingRequestEntry" once
    Dequeue Message Begin returns a message. The entry's Pending Request Cleanup Timer started
    when it was added, before the call waited (3.1.2.2), so a receive that waits longer than
    the timer finds its entry removed by 3.1.5.1, which had no message to end. The documents
    leave that case open (choice 5); taken literally the message would stay Locked with no entry for
    R_EndReceive, R_CancelReceive or the rundown (3.1.6.2) to end it. The entry is added again
    (with a new timer), as the first time: the message is then ended by the client, by the
    timer or by the rundown, as every other received message is."""
    entry.lookup_identifier = message.lookup_identifier
    key = (entry.request_id, entry.queue_context_handle)
    if server.pending_request_table.entries.get(key) is not entry:
        server._add_entry(entry)


__all__ = ["RemoteReadServer", "Outcome", "packet_sections", "adjust_time_to_reach_queue"]
