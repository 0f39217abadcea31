"""The queue manager's abstract data model: MS-MQDMPR 3.1.1 (the shared ADM elements and the
enumerations of 3.1.1.17), MS-MQDMPR 3.2.1 (the Cursor) and, at the end, the ADM elements private
to MS-MQRR (3.1.1.2 to 3.1.1.4).

The classes follow the documents section by section. How to read them:

* One dataclass per ADM element, named as the document names it; its fields are the ADM
  attributes in document order, in snake_case (``MessagePositionReference`` ->
  ``message_position_reference``; ``Message.Class`` is ``class_``, a Python keyword). Elements
  that "extend the DirectoryObject ADM element" subclass :class:`DirectoryObject`.
* Defaults are the document's where it states one (a requirement ID beside the field when the
  default is stated with MUST or SHOULD). Where it states none: numbers 0, strings "", blobs
  b"", Booleans False, GUIDs GUID_NULL, lists empty, references None, and an enumeration
  without an initial value None ("not set yet"; the event that creates the element sets it).
* References to other elements are plain Python references; a collection of elements is a list
  (a dict only for PendingRequestTable, which the document calls a hash table; an ordered set
  with an index, model/refs.py, for a queue's descriptors and a descriptor's cursors, which
  every open and close looks into). References and
  collections of elements are left out of ``repr``: the elements form a graph.
* Enumerations are :class:`Enumeration` classes named as the document names them; one defined
  inline in an attribute's description is named ``<Element><Attribute>`` with a repeated word
  said once (``Message.DeliveryGuarantee`` -> ``MessageDeliveryGuarantee``,
  ``Queue.QueueType`` -> ``QueueType``, ``Cursor.CursorState`` -> ``CursorState``,
  ``TransactionalOperation.OperationType`` -> ``TransactionalOperationType``). Members are
  spelled as the document spells them; a member's value is that spelling, so the document's
  ``None`` (a Python keyword) is the member ``None_`` with the value ``"None"``.
* Which attributes are Directory or Persistent attributes (MS-MQDMPR 3.1.1) is one table at the
  end of the file, read through :func:`attribute_category`.

Structures of MS-MQMQ that the ADM names (OBJECTID, SEQUENCE_INFO, TxSequenceId) are small
named tuples; the ones the model never looks inside (security descriptors, MQDSPUBLICKEYS,
MQUSERSIGNCERTS, SIDs, certificates) are bytes. GUIDs are ``uuid.UUID`` and times are ints.
The MS-MQDMPR invariants that span elements are checked by :mod:`model.invariants`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, fields
from enum import Enum, auto
from typing import Any, NamedTuple

from mqconform.model.positionlist import MessagePositionList
from mqconform.model.refs import CursorCollection, DescriptorCollection

# ---------------------------------------------------------------------------------------------
# Shared types
# ---------------------------------------------------------------------------------------------

GUID = uuid.UUID
GUID_NULL = uuid.UUID(int=0)


class OBJECTID(NamedTuple):
    """MS-MQMQ 2.2.8 OBJECTID: a message identifier."""

    lineage: GUID = GUID_NULL
    uniquifier: int = 0x00000000


class SEQUENCE_INFO(NamedTuple):
    """MS-MQMQ 2.2.5 SEQUENCE_INFO: where a message stands in a stream of messages."""

    seq_id: int = 0
    seq_no: int = 0
    prev_no: int = 0


class TxSequenceId(NamedTuple):
    """MS-MQMQ 2.2.18.1.2 TxSequenceId: the two monotonically increasing values that place a
    transactional message in its sequence (as MS-MQDMPR 3.1.1.12 describes them)."""

    ordinal: int = 0
    time_stamp: int = 0


class Enumeration(Enum):
    """An ADM enumeration: each member's value is its name as the document spells it."""

    @staticmethod
    def _generate_next_value_(name: str, start: int, count: int, last_values: list) -> str:
        return name.removesuffix("_")  # None_ -> "None"


def ref() -> Any:
    """A reference to another ADM element instance (None until set)."""
    return field(default=None, repr=False)


def refs() -> Any:
    """A collection of references to ADM element instances (empty)."""
    return field(default_factory=list, repr=False)


def empty() -> Any:
    """A list of values (identifiers, names, digests): empty."""
    return field(default_factory=list)


def bookkeeping(default: Any = None) -> Any:
    """An index or a note the model keeps on an element for its own work (not an attribute
    of the documents): not an argument, not shown, not compared, never persisted
    (``metadata["bookkeeping"]``: server/store.py skips it)."""
    return field(default=default, init=False, repr=False, compare=False,
                 metadata={"bookkeeping": True})


# ---------------------------------------------------------------------------------------------
# MS-MQDMPR 3.1.1 Abstract Data Model
# ---------------------------------------------------------------------------------------------


@dataclass(eq=False)
class DirectoryObject:
    """MS-MQDMPR 3.1.1 DirectoryObject: the base of the ADM elements that can be published in a
    directory."""

    identifier: GUID = GUID_NULL  # directory attribute; does not change once assigned
    #: the directory attributes a directory read returned (model/directory.py), when not all
    _directory_attributes_read: tuple[str, ...] | None = bookkeeping()


# ---------------------------------------------------------------------------------------------
# MS-MQDMPR 3.1.1.1 QueueManager
# ---------------------------------------------------------------------------------------------


class QueueManagerOperatingSystemType(Enumeration):
    """MS-MQDMPR 3.1.1.1 QueueManager.OperatingSystemType (MS-MQDMPR/3.1.1.1/R2)."""

    Foreign = auto()
    Win95 = auto()
    WinClient = auto()
    WinServer = auto()
    WinEnt = auto()
    Other = auto()


class QueueManagerDirectoryServerType(Enumeration):
    """MS-MQDMPR 3.1.1.1 QueueManager.DirectoryServerType (MS-MQDMPR/3.1.1.1/R7).

    The current edition of 3.1.1.1 introduces the list of values but lists none; these are the
    values of the superseded edition (spec/documents/MS-MQDMPR/superseded/3.1.1.1.txt)."""

    Standalone = auto()
    BackupSiteController = auto()
    PrimarySiteController = auto()
    PrimaryEnterpriseController = auto()


class QueueManagerState(Enumeration):
    """MS-MQDMPR 3.1.1.1 QueueManager.QueueManagerState (MS-MQDMPR/3.1.1.1/R10)."""

    Stopped = auto()
    Initializing = auto()
    Ready = auto()
    Stopping = auto()


@dataclass(eq=False)
class QueueManager(DirectoryObject):
    """MS-MQDMPR 3.1.1.1 QueueManager: an MSMQ queue manager.

    The rules between its attributes (3.1.1.1 R6, R9, R11 to R14) are checked by
    model.invariants."""

    # directory ADM attributes
    computer_name: str = ""
    queue_manager_version: str = ""  # MS-MQDMPR/3.1.1.1/R1: a string; empty if no version <2>
    operating_system_version: str = ""
    operating_system_type: QueueManagerOperatingSystemType | None = None
    qualified_computer_name: str = ""
    create_time: int = 0  # seconds since 1970-01-01 UTC
    modify_time: int = 0
    queue_manager_quota: int = 0x00100000  # bytes; MS-MQDMPR/3.1.1.1/R3
    journal_quota: int = 0xFFFFFFFF  # kilobytes
    foreign_system: bool = False
    full_path: str = ""
    site_identifier_list: list[GUID] = empty()
    connected_network_identifier_list: list[GUID] = empty()  # MS-MQDMPR/3.1.1.1/R4
    out_routing_server_identifier_list: list[GUID] = empty()
    in_routing_server_identifier_list: list[GUID] = empty()
    directory_server: bool = False
    remote_access_server: bool = False
    routing_server: bool = False
    supporting_server: bool = False  # MS-MQDMPR/3.1.1.1/R5
    # None while DirectoryServer is False: the value is then undefined (MS-MQDMPR/3.1.1.1/R6)
    directory_server_type: QueueManagerDirectoryServerType | None = None
    public_encryption_key_list: bytes = b""  # MQDSPUBLICKEYS; empty when provisioned
    public_signing_key_list: bytes = b""  # MQDSPUBLICKEYS; empty when provisioned
    security: bytes = b""  # security descriptor (MQQMACCESSMASK rights)
    clustered: bool = False
    # ADM attributes that cannot be published in the directory
    machine_domain_id: GUID | None = None
    last_domain: GUID | None = None  # persistent; empty (None) when provisioned
    directory_server_list: list[str] = empty()  # persistent
    directory_integrated: bool = False  # persistent
    srmp_http_support: bool = False  # persistent
    srmp_pgm_support: bool = False  # persistent
    directory_offline: bool = False  # False whenever DirectoryIntegrated is False
    throttled: bool = False
    connection_active: bool = False
    hardened_security: bool = False  # persistent
    queue_manager_state: QueueManagerState = QueueManagerState.Stopped  # "the initial state"
    system_deadletter_queue: Queue | None = ref()
    system_transactional_deadletter_queue: Queue | None = ref()
    system_journal_queue: Queue | None = ref()
    # Initialization (3.1.3) creates two more System queues that applications MUST NOT access
    # directly (MS-MQDMPR/3.1.3/R15); the document names no attribute for them, so these two
    # hold them, outside QueueCollection, where no Open Queue lookup can reach them
    order_acknowledgment_queue: Queue | None = ref()
    change_notification_queue: Queue | None = ref()
    queue_collection: list[Queue] = refs()
    site_collection: list[Site] = refs()
    connected_network_collection: list[ConnectedNetwork] = refs()
    transaction_collection: list[Transaction] = refs()  # persistent
    out_routing_server_collection: list[QueueManager] = refs()
    in_routing_server_collection: list[QueueManager] = refs()
    # 3.1.1.1 calls it a collection; the events (3.1.3) set it to one Enterprise
    enterprise_reference: Enterprise | None = ref()
    initialization_retry_timer_duration: int = 120  # seconds; MS-MQDMPR/3.1.1.1/R15
    sequential_id: int = 0  # 64-bit unsigned; persistent
    dispatch_collection: list[DispatchEntry] = refs()
    internal_certificate_collection: list[InternalCertificate] = refs()


# ---------------------------------------------------------------------------------------------
# MS-MQDMPR 3.1.1.2 Queue
# ---------------------------------------------------------------------------------------------


class QueuePrivacyLevel(Enumeration):
    """MS-MQDMPR 3.1.1.2 Queue.PrivacyLevel (MS-MQDMPR/3.1.1.2/R5)."""

    None_ = auto()
    Optional = auto()
    Body = auto()


class QueueScope(Enumeration):
    """MS-MQDMPR 3.1.1.2 Queue.Scope (MS-MQDMPR/3.1.1.2/R8)."""

    Site = auto()
    Enterprise = auto()


class QueueType(Enumeration):
    """MS-MQDMPR 3.1.1.2 Queue.QueueType (MS-MQDMPR/3.1.1.2/R10)."""

    Private = auto()
    Public = auto()
    System = auto()
    Connector = auto()


@dataclass(eq=False)
class Queue(DirectoryObject):
    """MS-MQDMPR 3.1.1.2 Queue: a queue hosted by the queue manager.

    Where the document gives no default, the defaults are those the Set Queue Defaults event
    (MS-MQDMPR 3.1.7.1.33) assigns, and Create Queue (3.1.7.1.3) sets QueueType. Active is
    computed (a property, below the fields)."""

    # directory attributes of a public queue, persistent attributes of any other queue
    label: str = ""
    create_time: int = 0  # seconds since 1970-01-01 UTC
    modify_time: int = 0
    type: GUID = GUID_NULL  # application-specific; never interpreted
    pathname: str = ""  # MS-MQMQ 2.1.1
    qualified_pathname: str = ""  # Pathname with an FQDN computer name
    private_queue_number: int | None = None  # valid only when QueueType is Private
    journaling: bool = False
    quota: int = 0xFFFFFFFF  # kilobytes
    journal_quota: int = 0xFFFFFFFF  # kilobytes
    authentication: bool = False
    privacy_level: QueuePrivacyLevel = QueuePrivacyLevel.Optional
    transactional: bool = False
    multicast_address: str | None = None  # NULL: no IP multicast address
    security: bytes = b""  # security descriptor (MQQUEUEACCESSMASK rights)
    base_priority: int = 0
    full_path: str = ""
    directory_path: str = ""
    scope: QueueScope = QueueScope.Enterprise  # constant; not a directory attribute: 3.1.1.2/R7
    # attributes that cannot be published in the directory (Active: the property below)
    total_bytes: int = 0
    queue_manager: QueueManager | None = ref()
    queue_type: QueueType | None = None  # persistent
    journal_queue_reference: Queue | None = ref()
    subqueue_collection: list[Queue] = refs()
    incoming_transactional_transfer_info_collection: list[IncomingTransactionalTransferInfo] = (
        refs())
    # ordered by arrival time within priority, Head is End when empty: model/positionlist.py
    message_position_list: MessagePositionList = field(default_factory=MessagePositionList,
                                                       repr=False)
    #: counted by ShareMode and AccessType for Open Queue's checks (model/refs.py)
    open_queue_descriptor_collection: DescriptorCollection = field(
        default_factory=DescriptorCollection, repr=False)
    #: LookupIdentifier -> MessagePosition of the positions in the list (model/message_ops.py)
    _positions_by_lookup_id: dict[int, MessagePosition] | None = bookkeeping()
    #: Message Position Available released the next reader already (model/internal.py)
    _released_reader: bool = bookkeeping(False)

    @property
    def active(self) -> bool:
        """Active: computed, never stored (MS-MQDMPR/3.1.1.2/R9). True if the queue is an
        outgoing queue with at least one message awaiting transfer (a position not Deleted),
        or if its OpenQueueDescriptorCollection is not empty."""
        if isinstance(self, OutgoingQueue) and any(
                p.state is not MessagePositionState.Deleted for p in self.message_position_list):
            return True
        return bool(self.open_queue_descriptor_collection)


# ---------------------------------------------------------------------------------------------
# MS-MQDMPR 3.1.1.3 OutgoingQueue
# ---------------------------------------------------------------------------------------------


class OutgoingQueueState(Enumeration):
    """MS-MQDMPR 3.1.1.3 OutgoingQueue.State (MS-MQDMPR/3.1.1.3/R1)."""

    Connected = auto()
    Disconnected = auto()
    Disconnecting = auto()
    Inactive = auto()
    Locked = auto()
    NeedValidation = auto()
    Waiting = auto()
    OnHold = auto()


class ConnectionHistoryStatus(Enumeration):
    """MS-MQDMPR 3.1.1.3 OutgoingQueue.ConnectionHistory[].Status (MS-MQDMPR/3.1.1.3/R2)."""

    InProcess = auto()
    EstablishPacketReceived = auto()
    Established = auto()
    UnknownFailure = auto()
    PingFailure = auto()
    SocketCreateFailure = auto()
    SocketBindFailure = auto()
    SocketConnectFailure = auto()
    TcpNotEnabled = auto()
    SocketSendFailure = auto()
    ConnectionNotReady = auto()
    DnsFailure = auto()
    CertificateValidationFailure = auto()
    ConnectionLimitReached = auto()
    ConnectionRefused = auto()
    RoutingDataNotAvailable = auto()
    LowResource = auto()


@dataclass(eq=False)
class ConnectionHistoryEntry:
    """MS-MQDMPR 3.1.1.3: one structure of the OutgoingQueue.ConnectionHistory array (the
    document does not name the structure)."""

    status: ConnectionHistoryStatus | None = None
    connection_history_time: int = 0  # seconds since 1970-01-01 UTC
    error: int = 0  # HRESULT, zero if no error occurred
    address_list: list[str] = empty()


@dataclass(eq=False)
class OutgoingQueue(Queue):
    """MS-MQDMPR 3.1.1.3 OutgoingQueue: holds messages in transit to a queue on a remote queue
    manager."""

    destination_format_name: str = ""  # persistent
    next_hops: list[str] = empty()  # MS-MQMQ 2.1 address strings
    multicast: bool = False  # persistent
    outgoing_transfer_info_reference: OutgoingTransferInfo | None = ref()
    state: OutgoingQueueState | None = None
    connection_history: list[ConnectionHistoryEntry] = empty()


# ---------------------------------------------------------------------------------------------
# MS-MQDMPR 3.1.1.4 OutgoingTransferInfo, 3.1.1.5 IncomingTransactionalTransferInfo
# ---------------------------------------------------------------------------------------------


@dataclass(eq=False)
class OutgoingTransferInfo:
    """MS-MQDMPR 3.1.1.4 OutgoingTransferInfo: transfer from a local outgoing queue to the
    destination queue on a remote queue manager."""

    outgoing_queue_reference: OutgoingQueue | None = ref()
    eod_first_non_ack: SEQUENCE_INFO = SEQUENCE_INFO()
    eod_last_ack: SEQUENCE_INFO = SEQUENCE_INFO()
    eod_last_ack_count: int = 0
    eod_last_ack_time: int = 0
    eod_last_non_ack: SEQUENCE_INFO = SEQUENCE_INFO()
    eod_next_seq: SEQUENCE_INFO = SEQUENCE_INFO()
    eod_no_ack_count: int = 0
    eod_no_read_count: int = 0
    eod_resend_count: int = 0
    eod_resend_interval: int = 0  # seconds
    eod_resend_time: int = 0


@dataclass(eq=False)
class IncomingTransactionalTransferInfo:
    """MS-MQDMPR 3.1.1.5 IncomingTransactionalTransferInfo: transactional transfer from a remote
    queue manager to a local queue."""

    queue_reference: Queue | None = ref()
    format_name: str = ""
    sender_identifier: GUID = GUID_NULL  # Identifier of the remote QueueManager
    sequence_identifier: TxSequenceId | None = None
    sequence_number: int = 0
    last_access_time: int = 0
    reject_count: int = 0


# ---------------------------------------------------------------------------------------------
# MS-MQDMPR 3.1.1.6 Enterprise, 3.1.1.7 Site, 3.1.1.8 RoutingLink, 3.1.1.9 ConnectedNetwork
# ---------------------------------------------------------------------------------------------


@dataclass(eq=False)
class Enterprise(DirectoryObject):
    """MS-MQDMPR 3.1.1.6 Enterprise."""

    name: str = ""
    weakened_security: bool = False
    non_ldap_capable_queue_manager_notification: bool = False
    default_time_to_live: int = 0  # seconds
    old_directory: bool = False
    security: bytes = b""  # security descriptor (MQENTACCESSMASK rights)


@dataclass(eq=False)
class Site(DirectoryObject):
    """MS-MQDMPR 3.1.1.7 Site: an MSMQ site. Its Name is unique in the enterprise (3.1.1.7 R1,
    checked by model.invariants)."""

    name: str = ""
    primary_site_controller: str = ""  # NetBIOS name
    intra_site_replication_interval: int = 0  # seconds
    inter_site_replication_interval: int = 0  # seconds
    full_path: str = ""
    foreign_site: bool = False
    public_signing_key_list: bytes = b""  # MQDSPUBLICKEYS
    migrated_from_msmq10: bool = False
    security: bytes = b""  # security descriptor (MQSITEACCESSMASK rights)
    # cannot be published in the directory
    site_gate_collection: list[QueueManager] = refs()


@dataclass(eq=False)
class RoutingLink(DirectoryObject):
    """MS-MQDMPR 3.1.1.8 RoutingLink: a link between two MSMQ sites. Its rules (3.1.1.8 R1 to
    R4) are checked by model.invariants.check_routing_link."""

    description: str = ""
    full_path: str = ""
    actual_cost: int = 1  # 1 to 999,999 inclusive (no default given: the least valid cost)
    site1_identifier: GUID = GUID_NULL
    site2_identifier: GUID = GUID_NULL
    site_gate_identifier_list: list[GUID] = empty()
    # cannot be published in the directory
    site1_reference: Site | None = ref()
    site2_reference: Site | None = ref()
    site_gate_collection: list[QueueManager] = refs()


@dataclass(eq=False)
class ConnectedNetwork(DirectoryObject):
    """MS-MQDMPR 3.1.1.9 ConnectedNetwork."""

    name: str = ""
    security: bytes = b""  # security descriptor (MQCNACCESSMASK rights)


# ---------------------------------------------------------------------------------------------
# MS-MQDMPR 3.1.1.10 WaitingMessageReadOperation
# ---------------------------------------------------------------------------------------------


@dataclass(eq=False)
class WaitingMessageReadOperation:
    """MS-MQDMPR 3.1.1.10 WaitingMessageReadOperation: a subscriber to the Waiting Message Read
    Satisfied event (3.1.7.3.6); it has the attributes listed (MS-MQDMPR/3.1.1.10/R1)."""

    destructive_read: bool = False
    tag: Any = None  # optional identifier of the subscriber
    cursor_reference: Cursor | None = ref()  # NULL when no cursor: MS-MQDMPR/3.1.1.10/R2


# ---------------------------------------------------------------------------------------------
# MS-MQDMPR 3.1.1.11 MessagePosition
# ---------------------------------------------------------------------------------------------


class MessagePositionState(Enumeration):
    """MS-MQDMPR 3.1.1.11 MessagePosition.State (MS-MQDMPR/3.1.1.11/R2)."""

    Available = auto()
    Locked = auto()
    Deleted = auto()
    PurgePending = auto()


@dataclass(eq=False)
class MessagePosition:
    """MS-MQDMPR 3.1.1.11 MessagePosition: a slot in a queue where a message can be stored; it
    has the attributes listed (MS-MQDMPR/3.1.1.11/R1).

    State and MessageReference are persistent when the message is Recoverable
    (MS-MQDMPR/3.1.1.11/R3; see attribute_category). Next and Previous are maintained by the
    queue's MessagePositionList (model/positionlist.py), which also gives each linked position
    its bookkeeping attributes ``_key`` and ``_linked``."""

    # no default given; Available, as Message Position Available (3.1.7.2.2) sets it
    state: MessagePositionState = MessagePositionState.Available
    message_reference: Message | None = ref()
    next: Any = ref()  # a MessagePosition, or the list's reserved End entry
    previous: Any = ref()  # a MessagePosition, or the list's reserved Start entry
    queue_reference: Queue | None = ref()
    _key: Any = bookkeeping()  # its order in the MessagePositionList (model/positionlist.py)
    _linked: bool = bookkeeping(False)  # in a MessagePositionList now
    _deleted_reason: Any = bookkeeping()  # why Message Position Deleted ran (3.1.7.2.1)
    _counted: bool = bookkeeping(False)  # its size is in Queue.TotalBytes (consumed.count_bytes)

    def __setattr__(self, name: str, value: Any) -> None:
        # MessagePositionList.version counts changes of the queue's live messages (a copy
        # such as the server's store, server/store.py, watches it): besides inserts and
        # removes, a position that becomes Deleted or PurgePending, or stops being so
        if name == "state":
            old = self.__dict__.get("state", value)
            if old is not value and (old in _GONE or value in _GONE):
                queue = self.__dict__.get("queue_reference")
                positions = getattr(queue, "message_position_list", None)
                if positions is not None and hasattr(positions, "version"):
                    positions.version += 1
        object.__setattr__(self, name, value)


#: position states whose message is no longer the queue's to deliver (MessagePosition above)
_GONE = frozenset({MessagePositionState.Deleted, MessagePositionState.PurgePending})


# ---------------------------------------------------------------------------------------------
# MS-MQDMPR 3.1.1.12 Message
# ---------------------------------------------------------------------------------------------


class MessageClass(Enumeration):
    """MS-MQDMPR 3.1.1.12 Message.Class. Message.class_ holds one of these or an int, the
    application's custom value (MS-MQDMPR/3.1.1.12/R3)."""

    Normal = auto()
    Report = auto()
    AckReachQueue = auto()
    OrderAck = auto()
    AckReceive = auto()
    NackBadDestQueue = auto()
    NackPurged = auto()
    NackReachQueueTimeout = auto()
    NackQueueExceedQuota = auto()
    NackAccessDenied = auto()
    NackHopCountExceeded = auto()
    NackBadSignature = auto()
    NackBadEncryption = auto()
    NackCouldNotEncrypt = auto()
    NackNotTransactionalQueue = auto()
    NackNotTransactionalMessage = auto()
    NackUnsupportedCryptoProvider = auto()
    NackSourceComputerGuidChanged = auto()
    NackQueueDeleted = auto()
    NackQueuePurged = auto()
    NackReceiveTimeout = auto()
    NackReceiveTimeoutAtSender = auto()
    NackReceiveRejected = auto()


class MessagePrivacyLevel(Enumeration):
    """MS-MQDMPR 3.1.1.12 Message.PrivacyLevel (MS-MQDMPR/3.1.1.12/R4)."""

    None_ = auto()
    Base = auto()
    Enhanced = auto()
    Advanced = auto()


class MessageAuthenticationLevel(Enumeration):
    """MS-MQDMPR 3.1.1.12 Message.AuthenticationLevel (MS-MQDMPR/3.1.1.12/R9)."""

    None_ = auto()
    Sig10 = auto()
    Sig20 = auto()
    Sig30 = auto()
    XmlSig = auto()


class MessageDeliveryGuarantee(Enumeration):
    """MS-MQDMPR 3.1.1.12 Message.DeliveryGuarantee (MS-MQDMPR/3.1.1.12/R16)."""

    Express = auto()
    Recoverable = auto()


class MessageAcknowledgementsRequested(Enumeration):
    """MS-MQDMPR 3.1.1.12 Message.AcknowledgementsRequested: the values of the list
    (MS-MQDMPR/3.1.1.12/R34). AckNackReachQueue is "Same as AckNegArrival": an alias."""

    None_ = auto()
    AckPosArrival = auto()
    AckPosReceive = auto()
    AckNegArrival = auto()
    AckNegReceive = auto()
    AckNackReachQueue = "AckNegArrival"
    AckFullReachQueue = auto()
    AckNackReceive = auto()
    AckFullReceive = auto()


class MessageHashAlgorithm(Enumeration):
    """MS-MQDMPR 3.1.1.12 Message.HashAlgorithm (MS-MQDMPR/3.1.1.12/R46)."""

    MD2 = auto()
    MD4 = auto()
    MD5 = auto()
    SHA1 = auto()
    SHA = auto()
    SHA_256 = auto()
    SHA_512 = auto()


class MessageEncryptionAlgorithm(Enumeration):
    """MS-MQDMPR 3.1.1.12 Message.EncryptionAlgorithm."""

    RSA = auto()
    DSS = auto()
    RSA_KEYS = auto()
    DES = auto()
    RC2 = auto()
    AES256 = auto()
    AES128 = auto()
    AES192 = auto()
    RC4 = auto()
    SEAL = auto()


class MessageDestinationQueueType(Enumeration):
    """MS-MQDMPR 3.1.1.12 Message.DestinationQueueType (MS-MQDMPR/3.1.1.12/R49)."""

    PrivateQueue = auto()
    PublicQueue = auto()
    DirectQueue = auto()


class MessageAdministrationQueueType(Enumeration):
    """MS-MQDMPR 3.1.1.12 Message.AdministrationQueueType (MS-MQDMPR/3.1.1.12/R50)."""

    None_ = auto()
    PrivateQueueOnSource = auto()
    PrivateQueueOnDestination = auto()
    PublicQueue = auto()
    PrivateQueueOnOther = auto()
    DirectQueue = auto()


class MessageResponseQueueType(Enumeration):
    """MS-MQDMPR 3.1.1.12 Message.ResponseQueueType (MS-MQDMPR/3.1.1.12/R51)."""

    None_ = auto()
    SameAsAdministrationQueue = auto()
    PrivateQueueOnDestination = auto()
    PrivateQueueOnSource = auto()
    PrivateQueueOnAdmin = auto()
    PublicQueue = auto()
    PrivateQueueOnOther = auto()
    DirectQueue = auto()


class MessageSenderIdentifierType(Enumeration):
    """MS-MQDMPR 3.1.1.12 Message.SenderIdentifierType (MS-MQDMPR/3.1.1.12/R52)."""

    None_ = auto()
    Sid = auto()
    QueueManagerIdentifier = auto()


@dataclass(eq=False)
class Message:
    """MS-MQDMPR 3.1.1.12 Message; it has the attributes listed (MS-MQDMPR/3.1.1.12/R1).

    All its attributes are persistent when DeliveryGuarantee is Recoverable
    (MS-MQDMPR/3.1.1.12/R66; see attribute_category). Label is at most 249 characters (3.1.1.12
    R43, checked by model.invariants)."""

    lookup_identifier: int = 0  # 64-bit unsigned; position within the MessagePositionList
    identifier: OBJECTID = OBJECTID()
    allow_peek_when_locked: bool = False
    application_deadletter_queue: str = ""  # a path name (MS-MQMQ 2.1.1)
    arrival_time: int = 0
    class_: MessageClass | int = MessageClass.Normal  # custom int values: MS-MQDMPR/3.1.1.12/R3
    privacy_level: MessagePrivacyLevel = MessagePrivacyLevel.None_  # MS-MQDMPR/3.1.1.12/R4
    # MS-MQDMPR/3.1.1.12/R9
    authentication_level: MessageAuthenticationLevel = MessageAuthenticationLevel.None_
    # MS-MQDMPR/3.1.1.12/R16
    delivery_guarantee: MessageDeliveryGuarantee = MessageDeliveryGuarantee.Express
    tracing_requested: bool = False
    tracing_queue_identifier: GUID = GUID_NULL
    priority: int = 3  # 0 (lowest) to 7 (highest)
    positive_journaling_requested: bool = False
    negative_journaling_requested: bool = False
    response_queue_format_name: str = ""
    response_multi_queue_format_name: list[str] = empty()
    destination_queue_format_name: str = ""  # never a multiple-element format name
    destination_multi_queue_format_name: list[str] = empty()
    administration_queue_format_name: str = ""
    administration_multi_queue_format_name: list[str] = empty()
    multiple_destination_signature: bytes = b""
    application_tag: int = 0
    source_machine_identifier: GUID = GUID_NULL
    body: bytes = b""
    body_type: int = 0
    correlation_identifier: OBJECTID = OBJECTID(GUID_NULL, 0x00000000)
    # a list (MS-MQDMPR/3.1.1.12/R33) of values (MS-MQDMPR/3.1.1.12/R34); default "None"
    acknowledgements_requested: list[MessageAcknowledgementsRequested] = field(
        default_factory=lambda: [MessageAcknowledgementsRequested.None_])
    label: str = ""
    sent_time: int = 0
    # seconds (4 days); MS-MQDMPR/3.1.1.12/R45, a SHOULD (choice 1: model/choices.py)
    time_to_reach_queue: int = 0x54600
    time_to_be_received: int = 0xFFFFFFFF  # seconds
    # MS-MQDMPR/3.1.1.12/R46 (values), MS-MQDMPR/3.1.1.12/R47 (default)
    hash_algorithm: MessageHashAlgorithm = MessageHashAlgorithm.SHA1
    # MS-MQDMPR/3.1.1.12/R48
    encryption_algorithm: MessageEncryptionAlgorithm = MessageEncryptionAlgorithm.RC4
    destination_queue_manager_identifier: GUID = GUID_NULL
    destination_queue_type: MessageDestinationQueueType | None = None  # MS-MQDMPR/3.1.1.12/R49
    # MS-MQDMPR/3.1.1.12/R50
    administration_queue_type: MessageAdministrationQueueType = (
        MessageAdministrationQueueType.None_)
    # MS-MQDMPR/3.1.1.12/R51
    response_queue_type: MessageResponseQueueType = MessageResponseQueueType.None_
    # a SID or a QueueManager Identifier; the document's default is the current user's SID
    sender_identifier: bytes = b""
    sender_certificate: bytes = b""  # X.509
    # MS-MQDMPR/3.1.1.12/R52
    sender_identifier_type: MessageSenderIdentifierType = MessageSenderIdentifierType.Sid
    extension: bytes = b""
    connector_type_identifier: GUID = GUID_NULL
    connector_queue_manager_identifier: GUID = GUID_NULL
    transaction_status_queue_format_name: str = ""
    symmetric_key: bytes = b""
    signature: bytes = b""
    authentication_provider_type: int = 0
    authentication_provider_name: str = ""
    # empty (None) for a non-transactional message
    transactional_message_sequence_identifier: TxSequenceId | None = None
    transaction_sequence_number: int = 0
    transaction_previous_sequence_number: int = 0
    transaction_identifier: GUID | None = None
    final_ack_required: bool = False
    first_in_transaction: bool = False
    last_in_transaction: bool = False
    soap_envelope: str = ""
    soap_compound_message: str = ""
    soap_body: str = ""
    soap_header: str = ""
    message_position_reference: MessagePosition | None = ref()
    #: the one object that names its Time To Be Received Timer (model/consumed.py)
    _ttbr_timer_key: object | None = bookkeeping()


# ---------------------------------------------------------------------------------------------
# MS-MQDMPR 3.1.1.13 TransactionalOperation, 3.1.1.14 Transaction
# ---------------------------------------------------------------------------------------------


class TransactionalOperationType(Enumeration):
    """MS-MQDMPR 3.1.1.13 TransactionalOperation.OperationType (MS-MQDMPR/3.1.1.13/R2)."""

    Enqueue = auto()
    Dequeue = auto()
    Move = auto()


@dataclass(eq=False)
class TransactionalOperation:
    """MS-MQDMPR 3.1.1.13 TransactionalOperation: a transactional Enqueue, Dequeue or Move of one
    MessagePosition. All its attributes are persistent (MS-MQDMPR/3.1.1.13/R1; see
    attribute_category). Which attribute must be supplied for which OperationType (3.1.1.13 R3,
    R4) is checked by model.invariants."""

    operation_type: TransactionalOperationType | None = None
    message_position_reference: MessagePosition | None = ref()
    target_queue_reference: Queue | None = ref()  # supplied for Move
    dequeue_reason: MessageClass | int | None = None  # supplied for Dequeue


@dataclass(eq=False)
class Transaction:
    """MS-MQDMPR 3.1.1.14 Transaction: a unit of work; all its attributes are persistent."""

    identifier: GUID = GUID_NULL
    transactional_operation_collection: list[TransactionalOperation] = refs()  # first-in/first-out
    single_phase: bool = False  # True: a non-DTC transaction


# ---------------------------------------------------------------------------------------------
# MS-MQDMPR 3.1.1.15 User, 3.1.1.16 OpenQueueDescriptor
# ---------------------------------------------------------------------------------------------


@dataclass(eq=False)
class User(DirectoryObject):
    """MS-MQDMPR 3.1.1.15 User: a user's SID and certificates."""

    security_identifier: bytes = b""  # SID (MS-DTYP 2.4.2)
    certificate_digest_list: list[bytes] = empty()  # 16-byte MD5 digests: 3.1.1.15/R1
    certificates: bytes = b""  # MQUSERSIGNCERTS (MS-MQMQ 2.2.21)


class OpenQueueDescriptorRemoteReadState(Enumeration):
    """MS-MQDMPR 3.1.1.16 OpenQueueDescriptor.RemoteReadState (MS-MQDMPR/3.1.1.16/R9)."""

    None_ = auto()
    Opened = auto()
    ReadyForRead = auto()


@dataclass(eq=False)
class OpenQueueDescriptor:
    """MS-MQDMPR 3.1.1.16 OpenQueueDescriptor: a queue opened by one of the MSMQ protocols; it
    has the attributes listed (MS-MQDMPR/3.1.1.16/R1). Handle and ContextValue are unique on
    the queue manager (3.1.1.16 R2, R3), and Multiple constrains the others (R5 to R8):
    model.invariants checks both."""

    handle: int = 0
    context_value: int = 0
    # 3.1.1.16 says "a list of values that MUST contain one of the QueueAccessType values"; the
    # events (Open Queue, 3.1.7.1.5) set and test one value, so one value it is (3.1.1.16/R4)
    access_type: QueueAccessType | None = None
    share_mode: QueueShareMode | None = None
    queue_reference: Queue | None = ref()  # NULL when Multiple
    format_name: str = ""
    multiple: bool = False
    open_queue_descriptor_collection: list[OpenQueueDescriptor] = refs()  # empty unless Multiple
    # not created for Remote Read unless an event says so (the document gives no default)
    remote_read_state: OpenQueueDescriptorRemoteReadState = (
        OpenQueueDescriptorRemoteReadState.None_)
    #: with its cursors by Handle (model/refs.py)
    cursor_collection: CursorCollection = field(default_factory=CursorCollection, repr=False)
    waiting_message_read_operation_collection: list[WaitingMessageReadOperation] = refs()  # FIFO
    _context_handle: bytes | None = bookkeeping()  # the RemoteRead context handle (mqrr.py)
    _move_context: int | None = bookkeeping()  # R_OpenQueueForMove's pMoveContext (mqrr.py)


# ---------------------------------------------------------------------------------------------
# MS-MQDMPR 3.1.1.17 Enumerations
# ---------------------------------------------------------------------------------------------


class DirectoryOperationResult(Enumeration):
    """MS-MQDMPR 3.1.1.17 DirectoryOperationResult (MS-MQDMPR/3.1.1.17/R1)."""

    Success = auto()
    GenericError = auto()
    DirectoryNotConnected = auto()
    ObjectNotFound = auto()
    AttributeNotFound = auto()
    EndOfData = auto()
    ObjectAlreadyExists = auto()


class MessageSeekAction(Enumeration):
    """MS-MQDMPR 3.1.1.17 MessageSeekAction (MS-MQDMPR/3.1.1.17/R2)."""

    SeekFirst = auto()
    SeekPrevious = auto()
    SeekCurrent = auto()
    SeekNext = auto()
    SeekLast = auto()


class QueueAccessType(Enumeration):
    """MS-MQDMPR 3.1.1.17 QueueAccessType (MS-MQDMPR/3.1.1.17/R3)."""

    ReceiveAccess = auto()
    SendAccess = auto()
    PeekAccess = auto()
    MoveAccess = auto()
    ReceiveAdminAccess = auto()
    PeekAdminAccess = auto()


class QueueShareMode(Enumeration):
    """MS-MQDMPR 3.1.1.17 QueueShareMode (MS-MQDMPR/3.1.1.17/R4)."""

    DenyNone = auto()
    DenyReceive = auto()


# ---------------------------------------------------------------------------------------------
# MS-MQDMPR 3.1.1.18 DispatchEntry, 3.1.1.19 InternalCertificate
# ---------------------------------------------------------------------------------------------


@dataclass(eq=False)
class DispatchEntry:
    """MS-MQDMPR 3.1.1.18 DispatchEntry: an entry of QueueManager.DispatchCollection; it has
    the attributes listed (MS-MQDMPR/3.1.1.18/R1)."""

    message_position_reference: MessagePosition | None = ref()
    protocol_data: Any = None  # "a protocol-specific data item"
    priority: int = 0  # higher values are sent first
    send_in_progress: bool = False


@dataclass(eq=False)
class InternalCertificate:
    """MS-MQDMPR 3.1.1.19 InternalCertificate: a certificate the server generated for a User."""

    certificate: bytes = b""  # X.509-encoded
    user: User | None = ref()


# ---------------------------------------------------------------------------------------------
# MS-MQDMPR 3.2.1 Cursor
# ---------------------------------------------------------------------------------------------


class CursorState(Enumeration):
    """MS-MQDMPR 3.2.1.2 Cursor.CursorState (MS-MQDMPR/3.2.1.2/R3). The transitions between
    these states (3.2.1.1) are the events' business."""

    Unread = auto()
    WaitReceive = auto()
    WaitPeek = auto()
    Read = auto()


@dataclass(eq=False)
class Cursor:
    """MS-MQDMPR 3.2.1.2 Cursor: an iterator over a queue's MessagePositionList; it has the
    attributes listed (MS-MQDMPR/3.2.1.2/R1). Handle is unique on the queue manager (3.2.1.2
    R2, checked by model.invariants)."""

    handle: int = 0
    open_queue_descriptor_reference: OpenQueueDescriptor | None = ref()
    # a MessagePosition, or the Start or End entry of the queue's MessagePositionList; the Open
    # Cursor event (3.2.7.1) sets it to Start
    message_position_reference: Any = ref()
    cursor_state: CursorState = CursorState.Unread  # as Open Cursor (3.2.7.1) sets it
    #: the state a Wait* state returns to (model/cursor.py TRANSITIONS "before")
    _state_before_wait: CursorState | None = bookkeeping()


# ---------------------------------------------------------------------------------------------
# MS-MQRR 3.1.1.2 to 3.1.1.4: the ADM elements private to RemoteRead
# ---------------------------------------------------------------------------------------------


@dataclass(eq=False)
class PendingRequestEntry:
    """MS-MQRR 3.1.1.2 PendingRequestEntry: a pending request to peek or receive a message."""

    request_id: int = 0  # supplied by the client
    lookup_identifier: int = 0  # Message.LookupIdentifier of the message of the request
    queue_context_handle: bytes = b""  # QUEUE_CONTEXT_HANDLE_NOSERIALIZE (MS-MQRR 2.2.4.1)
    time_stamp: int = 0  # 32-bit unsigned, milliseconds: when the request was received


@dataclass(eq=False)
class PendingRequestTable:
    """MS-MQRR 3.1.1.3 PendingRequestTable: a hash table of PendingRequestEntry instances keyed
    on {RequestId, QueueContextHandle}; here ``entries[(request_id, queue_context_handle)]``.
    ``keys_of(handle)``: the keys of one QueueContextHandle's entries, in the order they were
    added (R_CloseQueue, R_EndReceive and the rundown look for them: MS-MQRR 3.1.4.3 R13,
    3.1.4.9, 3.1.6.2 R6), without walking every client's entries."""

    entries: dict[tuple[int, bytes], PendingRequestEntry] = field(
        default_factory=lambda: PendingRequestEntries(), repr=False)

    def keys_of(self, queue_context_handle: bytes) -> list[tuple[int, bytes]]:
        return self.entries.keys_of(queue_context_handle)


class PendingRequestEntries(dict):
    """The table's dict, indexed by QueueContextHandle as it changes."""

    def __init__(self) -> None:
        super().__init__()
        self._by_handle: dict[bytes, dict[tuple[int, bytes], None]] = {}

    def __setitem__(self, key: tuple[int, bytes], entry: PendingRequestEntry) -> None:
        super().__setitem__(key, entry)
        self._by_handle.setdefault(bytes(key[1]), {})[key] = None

    def __delitem__(self, key: tuple[int, bytes]) -> None:
        super().__delitem__(key)
        self._unindex(key)
        if not self:
            self.clear()  # (the table it grew to goes: model/refs.py, sparse)

    _MISSING = object()

    def pop(self, key: tuple[int, bytes], default: Any = _MISSING) -> Any:
        if key in self:
            entry = super().pop(key)
            self._unindex(key)
            if not self:
                self.clear()  # (as __delitem__)
            return entry
        if default is PendingRequestEntries._MISSING:
            raise KeyError(key)
        return default

    def clear(self) -> None:
        super().clear()
        self._by_handle.clear()

    def keys_of(self, handle: bytes) -> list[tuple[int, bytes]]:
        return list(self._by_handle.get(bytes(handle), ()))

    def _unindex(self, key: tuple[int, bytes]) -> None:
        keys = self._by_handle.get(bytes(key[1]))
        if keys is not None:
            keys.pop(key, None)
            if not keys:
                del self._by_handle[bytes(key[1])]

    def __reduce__(self) -> tuple:
        return (_pending_entries, (list(self.items()),))

    def update(self, *args: Any, **kwargs: Any) -> None:  # keep the index true
        for key, entry in dict(*args, **kwargs).items():
            self[key] = entry

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def popitem(self) -> tuple[Any, Any]:
        key = next(reversed(self))
        return key, self.pop(key)


def _pending_entries(items: list) -> PendingRequestEntries:
    table = PendingRequestEntries()
    for key, entry in items:
        table[key] = entry
    return table


class LocalMessageType(Enumeration):
    """MS-MQRR 3.1.1.4 Message.Type: the type of the message packet, binary or SRMP."""

    Binary = auto()
    SRMP = auto()


@dataclass(eq=False)
class LocalMessage(Message):
    """MS-MQRR 3.1.1.4 Message: "the local Message ADM element", which extends the base Message
    of MS-MQDMPR with the server's private state for each message (MS-MQRR/3.1.1.4/R1)."""

    type: LocalMessageType | None = None
    # (offset, byte size) of the message headers, the message body and the message trailers
    offset: list[tuple[int, int]] = empty()
    # the message packet those offsets point into (MS-MQRR 2.2.5), as the wire codec wrote it
    packet: bytes = b""
    #: where the packet's UserMessage ends (packet.DecodedPacket.user_message_size), once known
    _user_message_size: int | None = bookkeeping()


# ---------------------------------------------------------------------------------------------
# MS-MQDMPR 3.1.1: Directory, Persistent and volatile attributes
# ---------------------------------------------------------------------------------------------


class AttributeCategory(Enumeration):
    """MS-MQDMPR 3.1.1: an ADM attribute is a Directory attribute, a Persistent attribute, or
    (neither said) volatile (MS-MQDMPR/3.1.1/R1, MS-MQDMPR/3.1.1/R4)."""

    Directory = auto()
    Persistent = auto()
    Volatile = auto()


#: the attributes each section lists as directory attributes (a subclass inherits its bases')
DIRECTORY_ATTRIBUTES: dict[type, tuple[str, ...]] = {
    DirectoryObject: ("identifier",),
    QueueManager: (
        "computer_name", "queue_manager_version", "operating_system_version",
        "operating_system_type", "qualified_computer_name", "create_time", "modify_time",
        "queue_manager_quota", "journal_quota", "foreign_system", "full_path",
        "site_identifier_list", "connected_network_identifier_list",
        "out_routing_server_identifier_list", "in_routing_server_identifier_list",
        "directory_server", "remote_access_server", "routing_server", "supporting_server",
        "directory_server_type", "public_encryption_key_list", "public_signing_key_list",
        "security", "clustered"),
    # Scope is in this list in 3.1.1.2 but "SHOULD NOT be treated as a directory attribute"
    Queue: (
        "label", "create_time", "modify_time", "type", "pathname", "qualified_pathname",
        "private_queue_number", "journaling", "quota", "journal_quota", "authentication",
        "privacy_level", "transactional", "multicast_address", "security", "base_priority",
        "full_path", "directory_path"),
    Enterprise: ("name", "weakened_security", "non_ldap_capable_queue_manager_notification",
                 "default_time_to_live", "old_directory", "security"),
    Site: ("name", "primary_site_controller", "intra_site_replication_interval",
           "inter_site_replication_interval", "full_path", "foreign_site",
           "public_signing_key_list", "migrated_from_msmq10", "security"),
    RoutingLink: ("description", "full_path", "actual_cost", "site1_identifier",
                  "site2_identifier", "site_gate_identifier_list"),
    ConnectedNetwork: ("name", "security"),
    User: ("security_identifier", "certificate_digest_list", "certificates"),
}

#: the attributes each section calls persistent (Message and MessagePosition: see below)
PERSISTENT_ATTRIBUTES: dict[type, tuple[str, ...]] = {
    QueueManager: (
        "last_domain", "directory_server_list", "directory_integrated", "srmp_http_support",
        "srmp_pgm_support", "hardened_security", "transaction_collection",
        "initialization_retry_timer_duration",  # survives restarts: MS-MQDMPR/3.1.1.1/R15
        "sequential_id"),
    Queue: ("scope", "queue_type"),  # MS-MQDMPR/3.1.1.2/R7
    OutgoingQueue: ("destination_format_name", "multicast"),
    TransactionalOperation: ("operation_type", "message_position_reference",  # 3.1.1.13/R1
                             "target_queue_reference", "dequeue_reason"),
    Transaction: ("identifier", "transactional_operation_collection", "single_phase"),
}


def attribute_category(element: object, name: str) -> AttributeCategory:
    """MS-MQDMPR 3.1.1: whether the ADM attribute ``name`` of ``element`` is a Directory
    attribute, a Persistent attribute, or volatile. Raises ValueError for a name that is not
    an attribute of the element (a programming error, not a protocol input)."""
    if name not in {f.name for f in fields(element)}:
        raise ValueError(f"{type(element).__name__} has no ADM attribute {name!r}")
    if isinstance(element, Message):
        # MS-MQDMPR/3.1.1.12/R66: all attributes of a Recoverable message are persistent
        # (MS-MQDMPR/3.1.1.12/R18: a Recoverable message is recovered after an interruption)
        if element.delivery_guarantee is MessageDeliveryGuarantee.Recoverable:
            return AttributeCategory.Persistent
        return AttributeCategory.Volatile
    if isinstance(element, MessagePosition):
        message = element.message_reference
        if (name in ("state", "message_reference") and message is not None
                and message.delivery_guarantee is MessageDeliveryGuarantee.Recoverable):
            return AttributeCategory.Persistent  # MS-MQDMPR/3.1.1.11/R3
        return AttributeCategory.Volatile
    for cls in type(element).__mro__:
        if name in PERSISTENT_ATTRIBUTES.get(cls, ()):
            return AttributeCategory.Persistent
        if name in DIRECTORY_ATTRIBUTES.get(cls, ()):
            if isinstance(element, Queue) and element.queue_type is not QueueType.Public:
                return AttributeCategory.Persistent  # MS-MQDMPR/3.1.1.2/R2
            return AttributeCategory.Directory  # MS-MQDMPR/3.1.1.2/R1 for a public queue
    return AttributeCategory.Volatile  # MS-MQDMPR/3.1.1/R4
