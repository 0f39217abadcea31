"""MS-MQMR 3 and 3.1: the qmmgmt server, on the MS-MQDMPR data model and events.

Two methods (3.1.4): R_QMMgmtGetInfo (opnum 0) reads properties of the queue manager or of one
queue; R_QMMgmtAction (opnum 1) acts on them. The server keeps no state of its own: no timers
(3.1.2, 3.1.5), no local events (3.1.6); the ADM it reads and changes is the shared one of
MS-MQDMPR 3.1.1 (3.1.1, 3.1.1.1): QueueManager, Queue, OutgoingQueue, OutgoingTransferInfo,
IncomingTransactionalTransferInfo and OpenQueueDescriptor (model/adm.py).

How it reads: ``QMMgmtServer(env).call(call)`` takes a typed call of model.calls and returns an
:class:`~model.outcome.Outcome` (the result, the requirement ID of the step that decided the
status, and ``any_failure`` where the document asks only for "a failure HRESULT" or says the
code "MAY be" one). R_QMMgmtGetInfo fills apVar from two tables, ``MACHINE_PROPERTIES``
(2.2.3.1) and ``QUEUE_PROPERTIES`` (2.2.3.2): property identifier -> name, VARTYPE and the
function of the ADM that the table of 3.1.4.1 gives. R_QMMgmtAction looks the action up in
``ACTIONS`` (3.1.4.2) and generates the MS-MQDMPR event of its row.

Sources for the numbers (facts only): the property identifiers are MS-MQMR 2.2.3.1 / 2.2.3.2;
the VARTYPE values are MS-MQMQ 2.2.12 (PROPVARIANT Type Constants, the VARENUM of MS-OAUT);
SEQUENCE_INFO is MS-MQMQ 2.2.5.1 (SeqID 8 bytes signed, SeqNo 4, PrevNo 4), TxSequenceID is
MS-MQMQ 2.2.18.1.2 (a 64-bit value, Ordinal the low half, TimeStamp the high half); the vectors
of PROPID_MGMT_QUEUE_EOD_SOURCE_INFO and PROPID_MGMT_QUEUE_CONNECTION_HISTORY are MS-MQMQ
2.3.12.24 and 2.3.12.25; MQ_ERROR_ACCESS_DENIED is MS-MQMQ 2.4.

Where the text leaves a gap or contradicts itself, the choice is named once here (each is marked
"choice" at its code):

1. Statuses where the text asks only for a failure: MQ_ERROR_INVALID_PARAMETER for malformed
   input (the code 3.1.4.1 and 3.1.4.2 name for MGMT_SESSION), MQ_ERROR_ILLEGAL_PROPID for a
   property identifier outside the table (3.1.4.1 names it), MQ_ERROR_QUEUE_NOT_FOUND for a
   queue that is not there, MQ_ERROR (3.1.4.1's "an MQ_ERROR HRESULT value") when Open Queue
   fails; all marked ``any_failure``.
2. A table row whose conditions all fail gives no value (NEXTHOPS in a state other than
   Connected or Waiting, the EOD_* rows of a local queue, TYPE of a queue without a QueueType):
   the apVar entry stays VT_NULL, as the client sent it (MS-MQMQ describes the same for these
   properties of a local queue; note <14> does it for DSSERVER).
3. The Open Queue descriptor R_QMMgmtGetInfo opens is closed (Close Queue) once apVar is
   filled. The text does not say so; left open it would keep the queue Active for ever.
4. "TIDY" purges every queue: 3.1.4.2's processing rules say so, although its table calls the
   action a clean-up of empty message files (which the ADM cannot see). The rules are followed.
5. "EOD_RESEND" generates a Resend Transactional Sequence event that MS-MQDMPR does not define.
   The model records it, as model/dispatch.py records hand-offs to transfer protocols, in the
   list ``env.resend_transactional_sequence`` (read it with :func:`resent`); nothing else moves.
6. PROPID_MGMT_QUEUE_CONNECTION_HISTORY: the excerpt of MS-MQMQ 2.3.12.25 at hand names the
   first three vectors (VT_UI4, VT_I4, VT_I4) and announces four; the fourth is taken to be
   the addresses (see ``connection_history``).
7. A queue's name in PROPID_MGMT_MSMQ_ACTIVEQUEUES is its Pathname (MS-MQMQ 2.1.1); an
   OutgoingQueue that Open Queue created has none, and its DestinationFormatName stands in.
8. "QueueManager" in the FOREIGN rows is the LocalQueueManager, the one element of that name
   the section uses, not the queue's QueueManager reference.
9. A machine action on a queue, or a queue action on the machine, is not a value of the table
   for that object ("A machine action", "A queue action"): refused like an unknown action.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mqconform.model import calls as c
from mqconform.model.adm import (
    ConnectionHistoryStatus,
    MessagePositionState,
    OutgoingQueue,
    OutgoingQueueState,
    Queue,
    QueueAccessType,
    QueueManager,
    QueueShareMode,
    QueueType,
)
from mqconform.model.consumed import pause_queue, resume_queue
from mqconform.model.formats import FormatNameError, MgmtObject, MgmtObjectType, from_queue_format
from mqconform.model.higher_layer import bring_online, take_offline
from mqconform.model.outcome import Outcome, status_only
from mqconform.model.queue_management import close_queue, find_queue, open_queue, purge_queue
from mqconform.model.runtime import Environment
from mqconform.model.status import (
    MQ_ERROR,
    MQ_ERROR_ACCESS_DENIED,
    MQ_ERROR_ILLEGAL_PROPID,
    MQ_ERROR_INVALID_PARAMETER,
    MQ_ERROR_QUEUE_NOT_FOUND,
    MQ_OK,
)

# ---------------------------------------------------------------------------------------------
# MS-MQMQ 2.2.12 PROPVARIANT Type Constants (VARENUM)
# ---------------------------------------------------------------------------------------------

VT_EMPTY = 0x0000
VT_NULL = 0x0001
VT_I2 = 0x0002
VT_I4 = 0x0003
VT_BOOL = 0x000B
VT_VARIANT = 0x000C  # only with VT_VECTOR (a CAPROPVARIANT)
VT_I1 = 0x0010
VT_UI1 = 0x0011
VT_UI2 = 0x0012
VT_UI4 = 0x0013
VT_I8 = 0x0014
VT_UI8 = 0x0015
VT_LPWSTR = 0x001F
VT_BLOB = 0x0041
VT_CLSID = 0x0048
VT_VECTOR = 0x1000

# ---------------------------------------------------------------------------------------------
# MS-MQMR 2.2.3.1 Management Machine Property Identifiers
# ---------------------------------------------------------------------------------------------

PROPID_MGMT_MSMQ_ACTIVEQUEUES = 0x00000001
PROPID_MGMT_MSMQ_PRIVATEQ = 0x00000002
PROPID_MGMT_MSMQ_DSSERVER = 0x00000003
PROPID_MGMT_MSMQ_CONNECTED = 0x00000004
PROPID_MGMT_MSMQ_TYPE = 0x00000005
PROPID_MGMT_MSMQ_BYTES_IN_ALL_QUEUES = 0x00000006

# ---------------------------------------------------------------------------------------------
# MS-MQMR 2.2.3.2 Management Queue Property Identifiers
# ---------------------------------------------------------------------------------------------

PROPID_MGMT_QUEUE_PATHNAME = 0x00000001
PROPID_MGMT_QUEUE_FORMATNAME = 0x00000002
PROPID_MGMT_QUEUE_TYPE = 0x00000003
PROPID_MGMT_QUEUE_LOCATION = 0x00000004
PROPID_MGMT_QUEUE_XACT = 0x00000005
PROPID_MGMT_QUEUE_FOREIGN = 0x00000006
PROPID_MGMT_QUEUE_MESSAGE_COUNT = 0x00000007
PROPID_MGMT_QUEUE_BYTES_IN_QUEUE = 0x00000008
PROPID_MGMT_QUEUE_JOURNAL_MESSAGE_COUNT = 0x00000009
PROPID_MGMT_QUEUE_BYTES_IN_JOURNAL = 0x0000000A
PROPID_MGMT_QUEUE_STATE = 0x0000000B
PROPID_MGMT_QUEUE_NEXTHOPS = 0x0000000C
PROPID_MGMT_QUEUE_EOD_LAST_ACK = 0x0000000D
PROPID_MGMT_QUEUE_EOD_LAST_ACK_TIME = 0x0000000E
PROPID_MGMT_QUEUE_EOD_LAST_ACK_COUNT = 0x0000000F
PROPID_MGMT_QUEUE_EOD_FIRST_NON_ACK = 0x00000010
PROPID_MGMT_QUEUE_EOD_LAST_NON_ACK = 0x00000011
PROPID_MGMT_QUEUE_EOD_NEXT_SEQ = 0x00000012
PROPID_MGMT_QUEUE_EOD_NO_READ_COUNT = 0x00000013
PROPID_MGMT_QUEUE_EOD_NO_ACK_COUNT = 0x00000014
PROPID_MGMT_QUEUE_EOD_RESEND_TIME = 0x00000015
PROPID_MGMT_QUEUE_EOD_RESEND_INTERVAL = 0x00000016
PROPID_MGMT_QUEUE_EOD_RESEND_COUNT = 0x00000017
PROPID_MGMT_QUEUE_EOD_SOURCE_INFO = 0x00000018
PROPID_MGMT_QUEUE_CONNECTION_HISTORY = 0x00000019
PROPID_MGMT_QUEUE_SUBQUEUE_COUNT = 0x0000001A
PROPID_MGMT_QUEUE_SUBQUEUE_NAMES = 0x0000001B

#: cp: [in, range(1,128)] (MS-MQMR 3.1.4.1)
CP_MIN, CP_MAX = 1, 128


# ---------------------------------------------------------------------------------------------
# The RPC interface (MS-MQMR 2.1, 3.1.4): what the server tells the RPC runtime
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RpcInterfaceSettings:
    """What the qmmgmt server indicates to the RPC runtime when it registers the interface; the
    wire layer applies them (the model never sees NDR)."""

    uuid: Any
    version: tuple[int, int]
    transfer_syntaxes: tuple[str, ...]
    strict_ndr_consistency_check_target_level: str
    reject_null_pointer_with_nonzero_conformant_value: bool
    strict_context_handle: bool


QMMGMT_RPC_SETTINGS = RpcInterfaceSettings(
    uuid=c.QMMGMT_UUID,  # MS-MQMR/2.1/R1: the UUID of section 1.9
    version=(1, 0),
    transfer_syntaxes=("NDR",),  # MS-MQMR/2.2/R1: NDR only
    strict_ndr_consistency_check_target_level="6.0",  # MS-MQMR/3.1.4/R1
    reject_null_pointer_with_nonzero_conformant_value=True,  # MS-MQMR/3.1.4/R2
    strict_context_handle=True)  # MS-MQMR/3.1.4/R3


# ---------------------------------------------------------------------------------------------
# Value formats (MS-MQMQ 2.2.5.1, 2.2.18.1.2, 2.3.12.24, 2.3.12.25)
# ---------------------------------------------------------------------------------------------

def sequence_info_bytes(info: Any) -> bytes:
    """A SEQUENCE_INFO (MS-MQMQ 2.2.5.1) as the bytes of a VT_BLOB: SeqID (64-bit signed),
    SeqNo and PrevNo (32-bit unsigned), little-endian as MSMQ packets are."""
    return struct.pack("<QII", info.seq_id & 0xFFFFFFFFFFFFFFFF, info.seq_no & 0xFFFFFFFF,
                       info.prev_no & 0xFFFFFFFF)


def tx_sequence_id_value(sequence_id: Any) -> int:
    """A TxSequenceID as the 64-bit value of MS-MQMQ 2.2.18.1.2: Ordinal low, TimeStamp high
    (0 when the ADM holds none)."""
    if sequence_id is None:
        return 0
    return ((sequence_id.time_stamp & 0xFFFFFFFF) << 32) | (sequence_id.ordinal & 0xFFFFFFFF)


#: MS-MQMQ 2.3.12.25: the Status codes of PROPID_MGMT_QUEUE_CONNECTION_HISTORY, in the order
#: MS-MQDMPR 3.1.1.3 lists ConnectionHistory's Status values (the two tables match row by row)
CONNECTION_HISTORY_STATUS = {
    ConnectionHistoryStatus.InProcess: 0x00000000,
    ConnectionHistoryStatus.EstablishPacketReceived: 0x00000001,
    ConnectionHistoryStatus.Established: 0x00000002,
    ConnectionHistoryStatus.UnknownFailure: 0x80000000,
    ConnectionHistoryStatus.PingFailure: 0x80000001,
    ConnectionHistoryStatus.SocketCreateFailure: 0x80000002,
    ConnectionHistoryStatus.SocketBindFailure: 0x80000003,
    ConnectionHistoryStatus.SocketConnectFailure: 0x80000004,
    ConnectionHistoryStatus.TcpNotEnabled: 0x80000005,
    ConnectionHistoryStatus.SocketSendFailure: 0x80000006,
    ConnectionHistoryStatus.ConnectionNotReady: 0x80000007,
    ConnectionHistoryStatus.DnsFailure: 0x80000008,
    ConnectionHistoryStatus.CertificateValidationFailure: 0x80000009,
    ConnectionHistoryStatus.ConnectionLimitReached: 0x8000000A,
    ConnectionHistoryStatus.ConnectionRefused: 0x8000000B,
    ConnectionHistoryStatus.RoutingDataNotAvailable: 0x8000000C,
    ConnectionHistoryStatus.LowResource: 0x8000000D,
}


def _vector(vt: int, values: list) -> c.PropVariant:
    return c.PropVariant(VT_VECTOR | vt, list(values))


def eod_source_info(infos: list) -> list[c.PropVariant]:
    """IncomingTransactionalTransferInfoCollection as the six vectors of MS-MQMQ 2.3.12.24:
    format names, sender GUIDs, sequence IDs, sequence numbers, last access times, reject
    counts (one entry per IncomingTransactionalTransferInfo)."""
    return [_vector(VT_LPWSTR, [i.format_name for i in infos]),
            _vector(VT_CLSID, [i.sender_identifier for i in infos]),
            _vector(VT_UI8, [tx_sequence_id_value(i.sequence_identifier) for i in infos]),
            _vector(VT_UI4, [i.sequence_number for i in infos]),
            _vector(VT_I4, [i.last_access_time for i in infos]),
            _vector(VT_UI4, [i.reject_count for i in infos])]


def connection_history(entries: list) -> list[c.PropVariant]:
    """OutgoingQueue.ConnectionHistory as the vectors of MS-MQMQ 2.3.12.25: Status codes,
    times, error values, and the addresses. Choice 6: the excerpt of 2.3.12.25 we hold names the
    first three items (VT_UI4, VT_I4, VT_I4 vectors) and announces four; the fourth is taken to
    be the entry's AddressList, one VT_LPWSTR per entry with its addresses separated by ","
    (MS-MQDMPR 3.1.1.3's AddressList is "an address or a list of possible addresses")."""
    return [_vector(VT_UI4, [CONNECTION_HISTORY_STATUS.get(e.status, 0x80000000)
                             for e in entries]),
            _vector(VT_I4, [e.connection_history_time for e in entries]),
            _vector(VT_I4, [e.error for e in entries]),
            _vector(VT_LPWSTR, [",".join(e.address_list) for e in entries])]


def _subqueue_name(queue: Queue) -> str:
    """A subqueue's name: the part of its path name after ";" (MS-MQMQ 2.1.1)."""
    return queue.pathname.rpartition(";")[2]


# ---------------------------------------------------------------------------------------------
# 3.1.4.1: the machine property table
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MgmtProperty:
    """One row of a property table of MS-MQMR 3.1.4.1: the identifier's name, its VARTYPE and
    its value as a function of the ADM (None: no value, the entry stays VT_NULL; choice 2)."""

    name: str
    vt: int
    value: Callable[..., Any]


def _queue_name(queue: Queue) -> str:
    """A queue's name for PROPID_MGMT_MSMQ_ACTIVEQUEUES. Choice 7: its Pathname (MS-MQMQ 2.1.1);
    an OutgoingQueue that Open Queue created has none, and its DestinationFormatName is then
    the only name it has."""
    if not queue.pathname and isinstance(queue, OutgoingQueue):
        return queue.destination_format_name
    return queue.pathname


def _ds_server(qm: QueueManager) -> str | None:
    # the first directory server; VT_NULL when not integrated with a directory, and when the
    # list is empty (the server cannot retrieve a value: note <14>)
    if not qm.directory_integrated or not qm.directory_server_list:
        return None
    return qm.directory_server_list[0]


#: MS-MQMR/3.1.4.1/R12 MS-MQMR/3.1.4.1/R18: for MGMT_MACHINE, only these properties, computed
#: from the QueueManager and its Queue elements
MACHINE_PROPERTIES: dict[int, MgmtProperty] = {
    PROPID_MGMT_MSMQ_ACTIVEQUEUES: MgmtProperty(
        "PROPID_MGMT_MSMQ_ACTIVEQUEUES", VT_VECTOR | VT_LPWSTR,
        lambda qm: [_queue_name(q) for q in qm.queue_collection if q.active]),
    PROPID_MGMT_MSMQ_PRIVATEQ: MgmtProperty(
        "PROPID_MGMT_MSMQ_PRIVATEQ", VT_VECTOR | VT_LPWSTR,
        lambda qm: [q.pathname for q in qm.queue_collection
                    if q.queue_type is QueueType.Private]),
    PROPID_MGMT_MSMQ_DSSERVER: MgmtProperty("PROPID_MGMT_MSMQ_DSSERVER", VT_LPWSTR, _ds_server),
    PROPID_MGMT_MSMQ_CONNECTED: MgmtProperty(
        "PROPID_MGMT_MSMQ_CONNECTED", VT_LPWSTR,
        lambda qm: "CONNECTED" if qm.connection_active else "DISCONNECTED"),
    PROPID_MGMT_MSMQ_TYPE: MgmtProperty(
        "PROPID_MGMT_MSMQ_TYPE", VT_LPWSTR,
        lambda qm: ""),  # MS-MQMR/3.1.4.1/R19: the empty string the row allows
    PROPID_MGMT_MSMQ_BYTES_IN_ALL_QUEUES: MgmtProperty(
        "PROPID_MGMT_MSMQ_BYTES_IN_ALL_QUEUES", VT_I8,
        lambda qm: sum(q.total_bytes for q in qm.queue_collection)),
}


# ---------------------------------------------------------------------------------------------
# 3.1.4.1: the queue property table (``q`` is rOpenQueueDescriptor.QueueReference)
# ---------------------------------------------------------------------------------------------

def _queue_type(qm: QueueManager, q: Queue) -> str | None:
    if isinstance(q, OutgoingQueue) and q.multicast:
        return "MULTICAST"  # MS-MQMR/3.1.4.1/R28
    if q.queue_type is QueueType.Public:
        return "PUBLIC"  # MS-MQMR/3.1.4.1/R29
    if q.queue_type is QueueType.Private:
        return "PRIVATE"  # MS-MQMR/3.1.4.1/R30
    if q.queue_type is QueueType.System:
        return "MACHINE"  # MS-MQMR/3.1.4.1/R31
    if q.queue_type is QueueType.Connector:
        return "CONNECTOR"  # MS-MQMR/3.1.4.1/R32
    return None  # choice 2: an OutgoingQueue made by Open Queue has no QueueType


def _location(qm: QueueManager, q: Queue) -> str:
    if isinstance(q, OutgoingQueue):
        return "REMOTE"
    return "LOCAL"  # MS-MQMR/3.1.4.1/R33


def _xact(qm: QueueManager, q: Queue) -> str:
    if q.transactional:
        return "YES"  # MS-MQMR/3.1.4.1/R34
    return "NO"  # MS-MQMR/3.1.4.1/R35


def _foreign(qm: QueueManager, q: Queue) -> str:
    # choice 8: "QueueManager" is the LocalQueueManager, the one element of that name the
    # section uses (as in the machine table), not the queue's QueueManager reference
    if qm.directory_offline:  # MS-MQMR/3.1.4.1/R35
        if q.queue_type is QueueType.Private:
            return "NO"  # MS-MQMR/3.1.4.1/R36
        return "Unknown"  # MS-MQMR/3.1.4.1/R37
    if qm.foreign_system:
        return "YES"  # MS-MQMR/3.1.4.1/R38
    return "NO"  # MS-MQMR/3.1.4.1/R39


def _message_count(qm: QueueManager, q: Queue) -> int:
    return sum(1 for p in q.message_position_list  # MS-MQMR/3.1.4.1/R40
               if p.state is not MessagePositionState.Deleted)


def _journal_message_count(qm: QueueManager, q: Queue) -> int:
    # the row gives no value when JournalQueueReference is NULL; BYTES_IN_JOURNAL, the row
    # below it, gives 0 in the same case, and so does this one (an empty journal)
    if q.journal_queue_reference is None:
        return 0
    return len(q.journal_queue_reference.message_position_list)


def _bytes_in_journal(qm: QueueManager, q: Queue) -> int:
    if q.journaling and q.journal_queue_reference is not None:
        return q.journal_queue_reference.total_bytes
    return 0


#: PROPID_MGMT_QUEUE_STATE of an OutgoingQueue, by its State
QUEUE_STATE_NAMES = {
    OutgoingQueueState.Connected: "CONNECTED",  # MS-MQMR/3.1.4.1/R42
    OutgoingQueueState.Disconnected: "DISCONNECTED",  # MS-MQMR/3.1.4.1/R43
    OutgoingQueueState.Disconnecting: "DISCONNECTING",  # MS-MQMR/3.1.4.1/R43
    OutgoingQueueState.Inactive: "INACTIVE",  # MS-MQMR/3.1.4.1/R44
    OutgoingQueueState.Locked: "LOCKED",  # MS-MQMR/3.1.4.1/R45
    OutgoingQueueState.NeedValidation: "NEED VALIDATION",  # MS-MQMR/3.1.4.1/R46
    OutgoingQueueState.Waiting: "WAITING",  # MS-MQMR/3.1.4.1/R46
    OutgoingQueueState.OnHold: "ONHOLD",  # MS-MQMR/3.1.4.1/R47
}


def _state(qm: QueueManager, q: Queue) -> str | None:
    if not isinstance(q, OutgoingQueue):
        return "LOCAL CONNECTION"  # MS-MQMR/3.1.4.1/R41
    return QUEUE_STATE_NAMES.get(q.state)  # QUEUE_STATE_NAMES: MS-MQMR/3.1.4.1/R42 to R47


def _next_hops(qm: QueueManager, q: Queue) -> list[str] | None:
    if not isinstance(q, OutgoingQueue):
        return None
    if q.state is OutgoingQueueState.Connected:
        if q.multicast:
            return [q.qualified_pathname]
        return list(q.next_hops)
    if q.state is OutgoingQueueState.Waiting:
        return list(q.next_hops)
    return None  # choice 2


def _transfer_info(q: Queue) -> Any:
    """OutgoingTransferInfoReference of an OutgoingQueue (None for any other queue, and for an
    outgoing queue without one: choice 2)."""
    return q.outgoing_transfer_info_reference if isinstance(q, OutgoingQueue) else None


def _eod(attribute: str, serialize: Callable[[Any], Any] = lambda v: v
         ) -> Callable[[QueueManager, Queue], Any]:
    """An EOD_* row: OutgoingTransferInfoReference.<attribute> of an OutgoingQueue."""
    def value(qm: QueueManager, q: Queue) -> Any:
        info = _transfer_info(q)
        return None if info is None else serialize(getattr(info, attribute))
    return value


def _eod_last_ack(qm: QueueManager, q: Queue) -> bytes | None:
    info = _transfer_info(q)
    if info is None or not info.eod_no_ack_count > 0:
        return None
    return sequence_info_bytes(info.eod_last_ack)


def _connection_history(qm: QueueManager, q: Queue) -> list[c.PropVariant] | None:
    if not isinstance(q, OutgoingQueue):
        return None
    return connection_history(q.connection_history)


#: MS-MQMR/3.1.4.1/R13 MS-MQMR/3.1.4.1/R20: for MGMT_QUEUE, only these properties, computed
#: from the Queue, OutgoingQueue and OutgoingTransferInfo elements (and, for SOURCE_INFO, the
#: IncomingTransactionalTransferInfo elements 3.1.1.1 lists); each function takes the
#: LocalQueueManager and rOpenQueueDescriptor.QueueReference
QUEUE_PROPERTIES: dict[int, MgmtProperty] = {
    PROPID_MGMT_QUEUE_PATHNAME: MgmtProperty(
        "PROPID_MGMT_QUEUE_PATHNAME", VT_LPWSTR, lambda qm, q: q.pathname),
    # the row says QualifiedPathname, not a format name: transcribed as written
    PROPID_MGMT_QUEUE_FORMATNAME: MgmtProperty(
        "PROPID_MGMT_QUEUE_FORMATNAME", VT_LPWSTR, lambda qm, q: q.qualified_pathname),
    PROPID_MGMT_QUEUE_TYPE: MgmtProperty("PROPID_MGMT_QUEUE_TYPE", VT_LPWSTR, _queue_type),
    PROPID_MGMT_QUEUE_LOCATION: MgmtProperty(
        "PROPID_MGMT_QUEUE_LOCATION", VT_LPWSTR, _location),
    PROPID_MGMT_QUEUE_XACT: MgmtProperty("PROPID_MGMT_QUEUE_XACT", VT_LPWSTR, _xact),
    PROPID_MGMT_QUEUE_FOREIGN: MgmtProperty("PROPID_MGMT_QUEUE_FOREIGN", VT_LPWSTR, _foreign),
    PROPID_MGMT_QUEUE_MESSAGE_COUNT: MgmtProperty(
        "PROPID_MGMT_QUEUE_MESSAGE_COUNT", VT_UI4, _message_count),
    PROPID_MGMT_QUEUE_BYTES_IN_QUEUE: MgmtProperty(
        "PROPID_MGMT_QUEUE_BYTES_IN_QUEUE", VT_UI4, lambda qm, q: q.total_bytes),
    PROPID_MGMT_QUEUE_JOURNAL_MESSAGE_COUNT: MgmtProperty(
        "PROPID_MGMT_QUEUE_JOURNAL_MESSAGE_COUNT", VT_UI4, _journal_message_count),
    PROPID_MGMT_QUEUE_BYTES_IN_JOURNAL: MgmtProperty(
        "PROPID_MGMT_QUEUE_BYTES_IN_JOURNAL", VT_UI4, _bytes_in_journal),
    PROPID_MGMT_QUEUE_STATE: MgmtProperty("PROPID_MGMT_QUEUE_STATE", VT_LPWSTR, _state),
    PROPID_MGMT_QUEUE_NEXTHOPS: MgmtProperty(
        "PROPID_MGMT_QUEUE_NEXTHOPS", VT_VECTOR | VT_LPWSTR, _next_hops),
    PROPID_MGMT_QUEUE_EOD_LAST_ACK: MgmtProperty(
        "PROPID_MGMT_QUEUE_EOD_LAST_ACK", VT_BLOB, _eod_last_ack),
    PROPID_MGMT_QUEUE_EOD_LAST_ACK_TIME: MgmtProperty(
        "PROPID_MGMT_QUEUE_EOD_LAST_ACK_TIME", VT_I4, _eod("eod_last_ack_time")),
    PROPID_MGMT_QUEUE_EOD_LAST_ACK_COUNT: MgmtProperty(
        "PROPID_MGMT_QUEUE_EOD_LAST_ACK_COUNT", VT_UI4, _eod("eod_last_ack_count")),
    # the three SEQUENCE_INFO rows below name the attribute without "serialized into a byte
    # array"; their VT_BLOB needs it, as EOD_LAST_ACK's row spells out
    PROPID_MGMT_QUEUE_EOD_FIRST_NON_ACK: MgmtProperty(
        "PROPID_MGMT_QUEUE_EOD_FIRST_NON_ACK", VT_BLOB,
        _eod("eod_first_non_ack", sequence_info_bytes)),
    PROPID_MGMT_QUEUE_EOD_LAST_NON_ACK: MgmtProperty(
        "PROPID_MGMT_QUEUE_EOD_LAST_NON_ACK", VT_BLOB,
        _eod("eod_last_non_ack", sequence_info_bytes)),
    PROPID_MGMT_QUEUE_EOD_NEXT_SEQ: MgmtProperty(
        "PROPID_MGMT_QUEUE_EOD_NEXT_SEQ", VT_BLOB, _eod("eod_next_seq", sequence_info_bytes)),
    PROPID_MGMT_QUEUE_EOD_NO_READ_COUNT: MgmtProperty(
        "PROPID_MGMT_QUEUE_EOD_NO_READ_COUNT", VT_UI4, _eod("eod_no_read_count")),
    PROPID_MGMT_QUEUE_EOD_NO_ACK_COUNT: MgmtProperty(
        "PROPID_MGMT_QUEUE_EOD_NO_ACK_COUNT", VT_UI4, _eod("eod_no_ack_count")),
    PROPID_MGMT_QUEUE_EOD_RESEND_TIME: MgmtProperty(
        "PROPID_MGMT_QUEUE_EOD_RESEND_TIME", VT_I4, _eod("eod_resend_time")),
    PROPID_MGMT_QUEUE_EOD_RESEND_INTERVAL: MgmtProperty(
        "PROPID_MGMT_QUEUE_EOD_RESEND_INTERVAL", VT_UI4, _eod("eod_resend_interval")),
    PROPID_MGMT_QUEUE_EOD_RESEND_COUNT: MgmtProperty(
        "PROPID_MGMT_QUEUE_EOD_RESEND_COUNT", VT_UI4, _eod("eod_resend_count")),
    PROPID_MGMT_QUEUE_EOD_SOURCE_INFO: MgmtProperty(
        "PROPID_MGMT_QUEUE_EOD_SOURCE_INFO", VT_VECTOR | VT_VARIANT,
        lambda qm, q: eod_source_info(q.incoming_transactional_transfer_info_collection)),
    PROPID_MGMT_QUEUE_CONNECTION_HISTORY: MgmtProperty(
        "PROPID_MGMT_QUEUE_CONNECTION_HISTORY", VT_VECTOR | VT_VARIANT, _connection_history),
    PROPID_MGMT_QUEUE_SUBQUEUE_COUNT: MgmtProperty(
        "PROPID_MGMT_QUEUE_SUBQUEUE_COUNT", VT_UI4, lambda qm, q: len(q.subqueue_collection)),
    PROPID_MGMT_QUEUE_SUBQUEUE_NAMES: MgmtProperty(
        "PROPID_MGMT_QUEUE_SUBQUEUE_NAMES", VT_VECTOR | VT_VARIANT,
        lambda qm, q: [c.PropVariant(VT_LPWSTR, _subqueue_name(s))
                       for s in q.subqueue_collection]),
}


def _populate(table: dict[int, MgmtProperty], a_prop: tuple[int, ...], *adm: Any
              ) -> tuple[c.PropVariant, ...]:
    """apVar for aProp: entry i holds the value of aProp[i] (MS-MQMR/3.1.4.1/R4
    MS-MQMR/3.1.4.1/R7); a row that gives no value leaves VT_NULL (choice 2)."""
    values = []
    for propid in a_prop:  # MS-MQMR/3.1.4.1/R27
        row = table[propid]
        value = row.value(*adm)  # MS-MQMR/3.1.4.1/R17
        values.append(c.PropVariant(VT_NULL) if value is None else c.PropVariant(row.vt, value))
    return tuple(values)


# ---------------------------------------------------------------------------------------------
# 3.1.4.2: the actions and the Resend Transactional Sequence record (choice 5)
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ResendTransactionalSequence:
    """The Resend Transactional Sequence event that "EOD_RESEND" generates (MS-MQMR 3.1.4.2),
    with its one input, iQueue. MS-MQDMPR defines no such event: the model records it."""

    queue: Queue


def resent(env: Environment) -> list[ResendTransactionalSequence]:
    """The Resend Transactional Sequence events generated so far (choice 5)."""
    return vars(env).setdefault("resend_transactional_sequence", [])


@dataclass(frozen=True)
class MgmtAction:
    """One row of the lpwszAction table of MS-MQMR 3.1.4.2: the object it applies to ("A
    machine action", "A queue action"), whether it is valid for outgoing queues only, and the
    method of QMMgmtServer that generates its events."""

    object_type: MgmtObjectType
    outgoing_only: bool
    handler: str


#: MS-MQMR/3.1.4.2/R1: the values of lpwszAction, compared without regard to case
ACTIONS: dict[str, MgmtAction] = {
    "CONNECT": MgmtAction(MgmtObjectType.MGMT_MACHINE, False, "_connect"),
    "DISCONNECT": MgmtAction(MgmtObjectType.MGMT_MACHINE, False, "_disconnect"),
    "TIDY": MgmtAction(MgmtObjectType.MGMT_MACHINE, False, "_tidy"),
    "PAUSE": MgmtAction(MgmtObjectType.MGMT_QUEUE, True, "_pause"),
    "RESUME": MgmtAction(MgmtObjectType.MGMT_QUEUE, True, "_resume"),
    "EOD_RESEND": MgmtAction(MgmtObjectType.MGMT_QUEUE, False, "_eod_resend"),
}


def _action_key(action: Any) -> str | None:
    """lpwszAction folded for the table: ASCII case only, so that no non-ASCII character can
    fold into one of the table's names."""
    if not isinstance(action, str) or not action.isascii():
        return None
    return action.upper()


# ---------------------------------------------------------------------------------------------
# The server
# ---------------------------------------------------------------------------------------------

class QMMgmtServer:
    """The qmmgmt interface of one queue manager (MS-MQMR 3.1)."""

    #: the methods in opnum order (MS-MQMR 3.1.4)
    METHODS: dict[type[c.Call], str] = {
        c.R_QMMgmtGetInfo: "r_qmmgmtgetinfo",  # MS-MQMR/3.1.4.1/R11: opnum 0
        c.R_QMMgmtAction: "r_qmmgmtaction",  # MS-MQMR/3.1.4.2/R5: opnum 1
    }

    def __init__(self, env: Environment):
        self.env = env  # no timers (MS-MQMR 3.1.2), no state of its own

    def call(self, call: c.Call, caller_is_administrator: bool = True) -> Outcome:
        """Process one call and return its Outcome. A method never throws (MS-MQMR/3.1.4/R4):
        every result carries ``raised=False`` and its status in ``status``.

        ``caller_is_administrator`` stands for the access check: "The client MUST have
        administrator privileges on the server machine" (MS-MQMR/3/R1), checked against the
        identity the server gets from RPC (MS-RPCE 3.3.3.4.3), which the model cannot see; the
        caller of the model says it. A client without those privileges is refused with
        MQ_ERROR_ACCESS_DENIED, the MSMQ code for "Access denied" (MS-MQMQ 2.4); the document
        names no code, so any failure conforms (``any_failure``)."""
        method = self.METHODS.get(type(call))
        if method is None:
            raise TypeError(f"{type(call).__name__} is not a qmmgmt call")
        if not caller_is_administrator:  # MS-MQMR/3/R1
            return self.env.choices.answer(status_only(
                c.RESULTS[type(call)], MQ_ERROR_ACCESS_DENIED, "MS-MQMR/3/R1", any_failure=True))
        return self.env.choices.answer(getattr(self, method)(call))

    # ------------------------------------------------------------------ helpers
    def _queue(self, pObjectFormat: MgmtObject) -> Queue | None:
        """The Queue "specified by pQueueFormat from pObjectFormat" (MS-MQDMPR 3.1.7.1.5's
        match rules, model.queue_management.find_queue), or None."""
        try:
            format_name = from_queue_format(pObjectFormat.pQueueFormat)
        except FormatNameError:
            return None
        return find_queue(self.env, format_name)

    # ------------------------------------------------------------------ 3.1.4.1
    def _check_get_info(self, call: c.R_QMMgmtGetInfo) -> Outcome | None:
        """The input rules of R_QMMgmtGetInfo; the failing Outcome, or None (choice 1)."""
        result = c.R_QMMgmtGetInfoResult
        obj = call.pObjectFormat
        if not isinstance(obj, MgmtObject) or obj.validate() is not None:  # MS-MQMR/2.2.1.2/R1
            return status_only(result, MQ_ERROR_INVALID_PARAMETER, "MS-MQMR/3.1.4.1/R10",
                               any_failure=True)
        if obj.type == MgmtObjectType.MGMT_SESSION:  # MS-MQMR/3.1.4.1/R14
            return status_only(result, MQ_ERROR_INVALID_PARAMETER, "MS-MQMR/3.1.4.1/R14",
                               any_failure=True)
        cp = call.cp
        if not isinstance(cp, int) or not CP_MIN <= cp <= CP_MAX:  # MS-MQMR/3.1.4.1/R1
            return status_only(result, MQ_ERROR_INVALID_PARAMETER, "MS-MQMR/3.1.4.1/R1",
                               any_failure=True)
        if len(call.aProp) < 1 or len(call.aProp) != cp:  # MS-MQMR/3.1.4.1/R2 MS-MQMR/3.1.4.1/R5
            return status_only(result, MQ_ERROR_INVALID_PARAMETER, "MS-MQMR/3.1.4.1/R5",
                               any_failure=True)
        if len(call.apVar) < 1 or len(call.apVar) != cp:  # MS-MQMR/3.1.4.1/R6 MS-MQMR/3.1.4.1/R8
            return status_only(result, MQ_ERROR_INVALID_PARAMETER, "MS-MQMR/3.1.4.1/R8",
                               any_failure=True)
        if obj.type == MgmtObjectType.MGMT_MACHINE:
            table, rule = MACHINE_PROPERTIES, "MS-MQMR/3.1.4.1/R15"
        else:
            table, rule = QUEUE_PROPERTIES, "MS-MQMR/3.1.4.1/R16"
        # MS-MQMR/3.1.4.1/R3 MS-MQMR/3.1.4.1/R15 MS-MQMR/3.1.4.1/R16
        if any(propid not in table for propid in call.aProp):
            return status_only(result, MQ_ERROR_ILLEGAL_PROPID, rule, any_failure=True)
        # MS-MQMR/3.1.4.1/R7: every apVar entry MUST be VT_NULL before the call
        if any(not isinstance(v, c.PropVariant) or v.vt != VT_NULL for v in call.apVar):
            return status_only(result, MQ_ERROR_INVALID_PARAMETER, "MS-MQMR/3.1.4.1/R7",
                               any_failure=True)
        return None

    def r_qmmgmtgetinfo(self, call: c.R_QMMgmtGetInfo) -> Outcome:
        """MS-MQMR 3.1.4.1 R_QMMgmtGetInfo (Opnum 0). On failure the result carries no apVar
        (MS-MQMR/3.1.4.1/R10: no [out] parameter is set)."""
        refused = self._check_get_info(call)
        if refused is not None:
            return refused  # MS-MQMR/3.1.4.1/R10
        qm = self.env.local_queue_manager
        if call.pObjectFormat.type == MgmtObjectType.MGMT_MACHINE:  # MS-MQMR/3.1.4.1/R12
            ap_var = _populate(MACHINE_PROPERTIES, call.aProp, qm)  # MS-MQMR/3.1.4.1/R18
            return Outcome(c.R_QMMgmtGetInfoResult(status=MQ_OK,  # MS-MQMR/3.1.4.1/R9
                                                   apVar=ap_var), "MS-MQMR/3.1.4.1/R9")
        # MGMT_QUEUE: MS-MQMR/3.1.4.1/R13 MS-MQMR/3.1.4.1/R20
        # MS-MQMR/3.1.4.1/R21: Open Queue gives the OpenQueueDescriptor
        try:
            format_name = from_queue_format(  # MS-MQMR/3.1.4.1/R23
                call.pObjectFormat.pQueueFormat)
        except FormatNameError:  # a QUEUE_FORMAT with no format name: no queue to open
            return status_only(c.R_QMMgmtGetInfoResult, MQ_ERROR, "MS-MQMR/3.1.4.1/R26",
                               any_failure=True)
        opened = open_queue(self.env,  # MS-MQMR/3.1.4.1/R22
                            format_name,  # MS-MQMR/3.1.4.1/R23
                            QueueAccessType.ReceiveAccess,  # MS-MQMR/3.1.4.1/R24
                            QueueShareMode.DenyNone)  # MS-MQMR/3.1.4.1/R25
        if opened.status != MQ_OK:  # MS-MQMR/3.1.4.1/R26 (choice 1: MQ_ERROR)
            return status_only(c.R_QMMgmtGetInfoResult, MQ_ERROR, "MS-MQMR/3.1.4.1/R26",
                               any_failure=True)
        desc = opened.open_queue_descriptor
        ap_var = _populate(QUEUE_PROPERTIES, call.aProp,  # MS-MQMR/3.1.4.1/R27
                           qm, desc.queue_reference)
        close_queue(self.env, desc)  # choice 3
        return Outcome(c.R_QMMgmtGetInfoResult(status=MQ_OK,  # MS-MQMR/3.1.4.1/R9
                                               apVar=ap_var), "MS-MQMR/3.1.4.1/R9")

    # ------------------------------------------------------------------ 3.1.4.2
    def r_qmmgmtaction(self, call: c.R_QMMgmtAction) -> Outcome:
        """MS-MQMR 3.1.4.2 R_QMMgmtAction (Opnum 1): the server uses the QueueManager and Queue
        elements (MS-MQMR/3.1.4.2/R6) and generates the events of MS-MQMR/3.1.4.2/R7 as
        MS-MQMR/3.1.4.2/R13 says, one per action of ``ACTIONS``."""
        result = c.R_QMMgmtActionResult
        obj = call.pObjectFormat
        if not isinstance(obj, MgmtObject) or obj.validate() is not None:  # MS-MQMR/2.2.1.2/R1
            return status_only(result, MQ_ERROR_INVALID_PARAMETER, "MS-MQMR/3.1.4.2/R4",
                               any_failure=True)
        if obj.type == MgmtObjectType.MGMT_SESSION:  # MS-MQMR/3.1.4.2/R3 (choice 1)
            return status_only(result, MQ_ERROR_INVALID_PARAMETER, "MS-MQMR/3.1.4.2/R3",
                               any_failure=True)
        action = ACTIONS.get(_action_key(call.lpwszAction))  # MS-MQMR/3.1.4.2/R1
        # choice 9: a machine action on a queue, or a queue action on the machine, is not a
        # value of the table for that object ("A machine action", "A queue action")
        if action is None or action.object_type != obj.type:  # MS-MQMR/3.1.4.2/R3
            return status_only(result, MQ_ERROR_INVALID_PARAMETER, "MS-MQMR/3.1.4.2/R3",
                               any_failure=True)
        queue = None
        if action.object_type == MgmtObjectType.MGMT_QUEUE:
            queue = self._queue(obj)
            if queue is None:  # MS-MQMR/3.1.4.2/R4 (choice 1)
                return status_only(result, MQ_ERROR_QUEUE_NOT_FOUND, "MS-MQMR/3.1.4.2/R4",
                                   any_failure=True)
            # "Valid for outgoing queues only" (PAUSE, RESUME): another queue is an error
            # (MS-MQMR/3.1.4.2/R4)
            if action.outgoing_only and not isinstance(queue, OutgoingQueue):
                return status_only(result, MQ_ERROR_INVALID_PARAMETER, "MS-MQMR/3.1.4.2/R4",
                                   any_failure=True)
        getattr(self, action.handler)(queue)
        return status_only(result, MQ_OK, "MS-MQMR/3.1.4.2/R2")  # MS-MQMR/3.1.4.2/R2

    # the events of each action (MS-MQMR/3.1.4.2/R13)
    def _connect(self, queue: None) -> None:
        bring_online(self.env)  # MS-MQMR/3.1.4.2/R14 MS-MQMR/3.1.4.2/R8

    def _disconnect(self, queue: None) -> None:
        take_offline(self.env)  # MS-MQMR/3.1.4.2/R15 MS-MQMR/3.1.4.2/R9

    def _tidy(self, queue: None) -> None:
        # choice 4: every queue is purged, as the rule says (env.choices.tidy_purges_queues)
        if not self.env.choices.tidy_purges_queues:
            return
        queues = self.env.local_queue_manager.queue_collection
        for element in list(queues):  # MS-MQMR/3.1.4.2/R16
            purge_queue(self.env,  # MS-MQMR/3.1.4.2/R10
                        element)  # MS-MQMR/3.1.4.2/R17

    def _pause(self, queue: OutgoingQueue) -> None:
        pause_queue(  # MS-MQMR/3.1.4.2/R18 MS-MQMR/3.1.4.2/R11
            queue)  # MS-MQMR/3.1.4.2/R19

    def _resume(self, queue: OutgoingQueue) -> None:
        resume_queue(  # MS-MQMR/3.1.4.2/R20 MS-MQMR/3.1.4.2/R12
            queue)  # MS-MQMR/3.1.4.2/R21

    def _eod_resend(self, queue: Queue) -> None:
        resent(self.env).append(ResendTransactionalSequence(  # MS-MQMR/3.1.4.2/R22 (choice 5)
            queue=queue))  # MS-MQMR/3.1.4.2/R23


__all__ = [
    "QMMgmtServer", "MACHINE_PROPERTIES", "QUEUE_PROPERTIES", "ACTIONS", "MgmtProperty",
    "MgmtAction", "ResendTransactionalSequence", "resent", "QMMGMT_RPC_SETTINGS",
    "RpcInterfaceSettings", "sequence_info_bytes", "tx_sequence_id_value", "eod_source_info",
    "connection_history", "CONNECTION_HISTORY_STATUS", "QUEUE_STATE_NAMES",
]
