"""MS-MQDMPR 3.1.7.1: the queue management events that related protocols raise: Open Cursor
(3.1.7.1.1), Close Cursor (3.1.7.1.2), Create Queue (3.1.7.1.3) with Create Default Queue Security
Descriptor (3.1.7.1.3.1), Delete Queue (3.1.7.1.4), Open Queue (3.1.7.1.5), Close Queue
(3.1.7.1.6), Purge Queue (3.1.7.1.7), Create Transaction (3.1.7.1.8), Cancel Waiting Message Read
Request (3.1.7.1.17), Get Queue Path (3.1.7.1.26) and Set Queue Defaults (3.1.7.1.33); and the
internal event Expand Format Name (3.1.7.3.8), which Open Queue raises first.

How they fit: a caller prepares a Queue with Set Queue Defaults and hands it to Create Queue,
which builds the queue the message operations (model/message_ops.py) work on. Open Queue turns a
format name (model/formats.py) into an OpenQueueDescriptor: it expands distribution lists, finds
the local queue the name designates (``find_queue``: the match rules in one place) or, for a
send to a remote queue, an OutgoingQueue. Close Queue undoes it, cancelling tagged readers (Cancel
Waiting Message Read Request, which resumes the waiting operation through Waiting Message Read
Timer Stop) and closing cursors (Close Cursor).

The directory. Create Queue, Delete Queue, Open Queue and Get Queue Path consult the directory
(Create Directory Object 3.1.7.1.18, Delete Directory Object 3.1.7.1.19, Read Directory
3.1.7.1.20), Expand Format Name resolves distribution lists through it (MS-MQDSSM 3.1.6.9) and
the default security descriptor may read a computer's SID from it (MS-MQDSSM 3.1.6.14). Those
events are not transcribed here: they are called through ``env.directory``, an object with the
methods ``read_directory(directory_object_type=, filter=, attribute_list=)``,
``create_directory_object(directory_object=)``, ``delete_directory_object(directory_object=)``,
``resolve_distribution_list(dl_format_name=)`` and
``get_object_properties_using_ldap(path=, attributes=)``. Each returns an object with
``status`` (a DirectoryOperationResult) and the document's other rValue in snake_case
(``directory_object``, ``object_guid``, ``format_name_collection``, ``values``), or a tuple in
that order. A filter is a list of ``(attribute, operator, value)`` triples such as
``("Identifier", "EQUALS", guid)``. When ``env.directory`` is None (or lacks a method) every call
ends as a directory that is not connected does: ``DirectoryOperationResult.DirectoryNotConnected``.

Choices where the document leaves room (each marked "choice N" at its code, listed in
spec/choices.yaml):

1. "." names the local computer in a path name (the shorthand path names use).
2. Open Queue finds or creates one OutgoingQueue per destination format name (the glossary's
   "outgoing queue" holds the messages for one format name).
3. A queue whose Pathname is not set yet is created on the local computer, whose name stands in
   for the "computer name portion" (Create Queue's security steps).
4. A new private queue takes the first unused number from ``env.choices.first_private_queue_number``
   (any unused number satisfies 3.1.7.1.3).
5. Security bytes that are not a self-relative security descriptor count as not set.
6. The ComputerName stands in for the QualifiedComputerName when the queue manager has none.
7. A distribution list met again while resolving (one list inside another) adds nothing new.
"""

from __future__ import annotations

import functools
import struct
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mqconform.model import cursor as cursor_events
from mqconform.model.adm import (
    GUID_NULL,
    Cursor,
    DirectoryOperationResult,
    MessageClass,
    MessagePositionState,
    OpenQueueDescriptor,
    OpenQueueDescriptorRemoteReadState,
    OutgoingQueue,
    OutgoingQueueState,
    Queue,
    QueueAccessType,
    QueuePrivacyLevel,
    QueueScope,
    QueueShareMode,
    QueueType,
    Transaction,
)
from mqconform.model.consumed import message_position_deleted
from mqconform.model.formats import (
    DirectProtocol,
    FormatName,
    FormatNameError,
    FormatNameKind,
    QueueSuffixType,
    parse_format_name,
)
from mqconform.model.internal import waiting_message_read_timer_stop
from mqconform.model.positionlist import MessagePositionList
from mqconform.model.refs import DescriptorCollection
from mqconform.model.runtime import Environment
from mqconform.model.status import (
    MQ_ERROR_ILLEGAL_FORMATNAME,
    MQ_ERROR_ILLEGAL_QUEUE_PATHNAME,
    MQ_ERROR_OPERATION_CANCELLED,
    MQ_ERROR_QUEUE_NOT_FOUND,
    MQ_ERROR_SHARING_VIOLATION,
    MQ_ERROR_UNSUPPORTED_ACCESS_MODE,
    MQ_ERROR_UNSUPPORTED_FORMATNAME_OPERATION,
    MQ_OK,
    STATUS_NOT_FOUND,
)

Success = DirectoryOperationResult.Success
DirectoryNotConnected = DirectoryOperationResult.DirectoryNotConnected
SendAccess = QueueAccessType.SendAccess
ReceiveAccess = QueueAccessType.ReceiveAccess
DenyNone = QueueShareMode.DenyNone
DenyReceive = QueueShareMode.DenyReceive
_SFX = QueueSuffixType


# ---------------------------------------------------------------------------------------------
# The directory, through env.directory (see the module docstring)
# ---------------------------------------------------------------------------------------------

def _directory_call(env: Environment, method: str, rvalue: str | None, **arguments: Any):
    """Call ``env.directory.<method>`` and return (rStatus, the other rValue or None)."""
    directory = getattr(env, "directory", None)
    function = getattr(directory, method, None) if directory is not None else None
    if function is None:
        return DirectoryNotConnected, None
    result = function(**arguments)
    if isinstance(result, DirectoryOperationResult):
        return result, None
    if isinstance(result, tuple):
        return result[0], (result[1] if len(result) > 1 else None)
    return result.status, (getattr(result, rvalue, None) if rvalue else None)


def _read_directory(env: Environment, directory_object_type: str, filter_: list,
                    attribute_list: list[str] | None = None):
    """MS-MQDMPR 3.1.7.1.20 Read Directory: (rStatus, rDirectoryObject)."""
    arguments: dict[str, Any] = {"directory_object_type": directory_object_type,
                                 "filter": filter_}
    if attribute_list is not None:
        arguments["attribute_list"] = attribute_list
    return _directory_call(env, "read_directory", "directory_object", **arguments)


# ---------------------------------------------------------------------------------------------
# Format names and path names: which local queue a name designates
# ---------------------------------------------------------------------------------------------

def _as_format_name(format_name: FormatName | str) -> FormatName | None:
    """A FormatName, or None when ``format_name`` is not a format name (MS-MQMQ 2.1)."""
    if isinstance(format_name, FormatName):
        return format_name
    try:
        return parse_format_name(format_name)
    except FormatNameError:
        return None


def _fold(text: str | None) -> str:
    return (text or "").casefold()


def _is_local_machine(env: Environment, machine_name: str | None) -> bool:
    """Whether ``machine_name`` names the computer that hosts the local queue manager: its
    ComputerName or QualifiedComputerName, case-insensitively (MS-MQMQ 2.1.1 computer names
    compare without case); "." (choice 1: the local-computer shorthand of path names); and
    the addresses in ``env.local_addresses`` when the environment lists them (MS-MQDMPR 3.1.7.1.5
    calls machineName "the name or address of the computer")."""
    qm = env.local_queue_manager
    return _fold(machine_name) in _local_names(qm.computer_name, qm.qualified_computer_name,
                                               tuple(env.local_addresses))


@functools.lru_cache(maxsize=64)
def _local_names(computer_name: str | None, qualified_computer_name: str | None,
                 addresses: tuple[str, ...]) -> frozenset[str]:
    """The names of the local computer, case folded (_is_local_machine); remembered per
    value of the names, which change only when SUT control sets them."""
    names = {".", computer_name, qualified_computer_name, *addresses}
    return frozenset(_fold(n) for n in names if n)


# MS-MQMQ 2.1.1 Path Names: QueuePathName = Computer "\" QueueName / Computer "\private$\"
# QueueName / Computer "\system$;" QueueName; Computer = 1*256 VCHAR; QueueName = 1*124 name
# characters [";" Subqueue] (MSMQ 4.0 and later); Subqueue = 1*32 name characters. The name
# characters are %x21 / %x23-2A / %x2D-3A / %x3C-5B / %x5D-7F: no space, '"', '+', ',', ';' or
# '\'. As model/formats.py does (its seventh choice), printable non-ASCII characters are
# accepted too.
# model/formats.py parses format names, not path names: this small parser is private here.
_NAME_ASCII = frozenset(chr(c) for c in [0x21, *range(0x23, 0x2B), *range(0x2D, 0x3B),
                                         *range(0x3C, 0x5C), *range(0x5D, 0x80)])
_PRIVATE_PREFIX = "PRIVATE$\\"
_SYSTEM_PREFIX = "SYSTEM$;"


def _name_ok(text: str, top: int) -> bool:
    return 1 <= len(text) <= top and all(
        c in _NAME_ASCII or (c > "\x7f" and c.isprintable()) for c in text)


@dataclass(frozen=True)
class _PathName:
    """A queue path name (MS-MQMQ 2.1.1), split into its parts."""

    computer: str
    form: QueueType  # Private, System or Public: the form the path name has
    queue_name: str
    subqueue: str | None

    @property
    def queue_path(self) -> str:
        """The path without the computer and without the subqueue."""
        prefix = {QueueType.Private: "private$\\", QueueType.System: "system$;"}.get(self.form,
                                                                                    "")
        return prefix + self.queue_name


def _parse_pathname(text: Any) -> _PathName | None:
    """The parts of a queue path name, or None if ``text`` is not one (MS-MQMQ 2.1.1)."""
    if not isinstance(text, str):
        return None
    return _parse_pathname_text(text)


@functools.lru_cache(maxsize=1 << 16)
def _parse_pathname_text(text: str) -> _PathName | None:
    """_parse_pathname of a string, remembered: a lookup by format name compares it with
    every queue's path name (find_queue), so each path is parsed once, not once per lookup."""
    computer, backslash, rest = text.partition("\\")
    if not backslash or not 1 <= len(computer) <= 256 or not all(
            "\x21" <= c <= "\x7e" or (c > "\x7f" and c.isprintable()) for c in computer):
        return None
    form = QueueType.Public
    if rest[:len(_PRIVATE_PREFIX)].upper() == _PRIVATE_PREFIX:
        form, rest = QueueType.Private, rest[len(_PRIVATE_PREFIX):]
    elif rest[:len(_SYSTEM_PREFIX)].upper() == _SYSTEM_PREFIX:
        form, rest = QueueType.System, rest[len(_SYSTEM_PREFIX):]
    name, semicolon, subqueue = rest.partition(";")
    if not _name_ok(name, 124) or (semicolon and not _name_ok(subqueue, 32)):
        return None
    return _PathName(computer, form, name, subqueue if semicolon else None)


#: MS-MQMQ 2.1.2 / 2.1.6: MACHINE=guid;suffix and DIRECT=...\SYSTEM$;suffix name a computer's
#: system queues: its journal, its dead-letter queue and its transactional dead-letter queue
_SYSTEM_QUEUE_BY_SUFFIX = {
    _SFX.QUEUE_SUFFIX_TYPE_JOURNAL: "system_journal_queue",
    _SFX.QUEUE_SUFFIX_TYPE_DEADLETTER: "system_deadletter_queue",
    _SFX.QUEUE_SUFFIX_TYPE_DEADXACT: "system_transactional_deadletter_queue",
}


def _names_base_queue(env: Environment, queue: Queue, name: FormatName) -> bool:
    """Whether a PRIVATE= or PUBLIC= ``name``, without its suffix or subqueue, designates the
    local ``queue`` (a DIRECT= name: ``_direct_key``, in find_queue)."""
    if name.is_private:
        # MS-MQMQ 2.1.4: PRIVATE=ComputerGuid\QueueNumber: the hosting queue manager's
        # identifier and the queue's private queue number
        qm = queue.queue_manager if queue.queue_manager is not None else env.local_queue_manager
        return (queue.queue_type is QueueType.Private and qm.identifier == name.guid
                and queue.private_queue_number == name.queue_number)
    if name.is_public:
        # MS-MQMQ 2.1.3: PUBLIC=QueueGuid: the public queue's identifier
        return queue.queue_type is QueueType.Public and queue.identifier == name.guid
    return False


@functools.lru_cache(maxsize=1 << 16)
def _direct_key_text(text: str) -> str | None:
    path = _parse_pathname_text(text)
    return _fold(path.queue_path) if path is not None and path.subqueue is None else None


def _direct_key(pathname: Any) -> str | None:
    """What a DIRECT= name's queue path must be, case folded, to designate the queue of this
    Pathname (MS-MQMQ 2.1.2: DIRECT=Protocol:Address\\QueuePath, the queue's path name without
    its computer part, compared without case, MS-MQMQ 2.1.1); None for a subqueue or a Pathname
    that is not a path name."""
    return _direct_key_text(pathname) if isinstance(pathname, str) else None


def subqueue_name(queue: Queue) -> str | None:
    """The name of the subqueue ``queue`` is, None for a queue that is not a subqueue."""
    path = _parse_pathname(queue.pathname)
    if path is not None and path.subqueue is not None:
        return path.subqueue
    return queue.pathname.rpartition(";")[2] if ";" in queue.pathname else None


def _same_destination(queue: OutgoingQueue, name: FormatName) -> bool:
    destination = _as_format_name(queue.destination_format_name)
    return destination is not None and destination == name


def find_queue(env: Environment, format_name: FormatName | str) -> Queue | None:
    """The Queue in LocalQueueManager.QueueCollection "which matches" ``format_name``
    (MS-MQDMPR 3.1.7.1.5), or None. The match rules, from MS-MQMQ 2.1 (format names) and
    2.2.11 (suffixes):

    * PRIVATE=ComputerGuid\\QueueNumber (2.1.4): a Private queue whose QueueManager.Identifier
      is ComputerGuid and whose PrivateQueueNumber is QueueNumber;
    * PUBLIC=QueueGuid (2.1.3): a Public queue whose Identifier is QueueGuid;
    * DIRECT=Protocol:Address\\QueuePath (2.1.2): Address names the local computer and the
      queue's Pathname, without its computer part, is QueuePath (case-insensitively);
    * a ;Subqueue element (2.1.2): the queue of that name in the SubqueueCollection of the queue
      the rest of the name designates; a ;JOURNAL suffix (2.2.11): its JournalQueueReference;
    * MACHINE=ComputerGuid;JOURNAL|DEADLETTER|DEADXACT (2.1.6) and DIRECT=...\\SYSTEM$;suffix
      (2.1.2): the local queue manager's SystemJournalQueue, SystemDeadletterQueue or
      SystemTransactionalDeadletterQueue;
    * any other name (a connector, multicast or remote queue): the OutgoingQueue whose
      DestinationFormatName is that name (choice 2: Open Queue creates one per destination; the
      glossary's "outgoing queue" holds the messages for one format name).
    """
    name = _as_format_name(format_name)
    if name is None or name.is_multiple_element:
        return None
    qm = env.local_queue_manager
    system = (name.is_machine and name.guid == qm.identifier) or (
        name.is_direct and _fold(name.direct_queue_path) == "system$"
        and _is_local_machine(env, name.direct_host))
    if system:
        return getattr(qm, _SYSTEM_QUEUE_BY_SUFFIX[name.suffix], None)
    if name.is_direct:
        # MS-MQMQ 2.1.2: the local computer and the queue's path name without its computer
        # part, the computer looked at once, not once per queue of the collection
        wanted = (_fold(name.direct_queue_path) if _is_local_machine(env, name.direct_host)
                  else None)
        base = None if wanted is None else next(
            (q for q in qm.queue_collection
             if not isinstance(q, OutgoingQueue) and _direct_key(q.pathname) == wanted), None)
    else:
        base = next((q for q in qm.queue_collection
                     if not isinstance(q, OutgoingQueue) and _names_base_queue(env, q, name)),
                    None)
    if base is not None:
        if name.suffix is _SFX.QUEUE_SUFFIX_TYPE_JOURNAL:
            return base.journal_queue_reference
        if name.suffix is _SFX.QUEUE_SUFFIX_TYPE_SUBQUEUE:
            return next((s for s in base.subqueue_collection
                         if _fold(subqueue_name(s)) == _fold(name.subqueue_name)), None)
        return base
    return next((q for q in qm.queue_collection
                 if isinstance(q, OutgoingQueue) and _same_destination(q, name)), None)


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.1 Open Cursor, 3.1.7.1.2 Close Cursor
# ---------------------------------------------------------------------------------------------

def open_cursor(env: Environment, queue_desc: OpenQueueDescriptor) -> Cursor | None:
    """MS-MQDMPR 3.1.7.1.1 Open Cursor (MS-MQDMPR/3.1.7.1.1/R1 MS-MQDMPR/3.1.7.1.1/R2).
    Returns rCursor."""
    if queue_desc.queue_reference is None:  # MS-MQDMPR/3.1.7.1.1/R3
        return None  # MS-MQDMPR/3.1.7.1.1/R4 MS-MQDMPR/3.1.7.1.1/R5
    new_cursor = Cursor()  # MS-MQDMPR/3.1.7.1.1/R6
    queue_desc.cursor_collection.append(new_cursor)  # MS-MQDMPR/3.1.7.1.1/R7
    cursor_events.initialize(env, new_cursor,  # MS-MQDMPR/3.1.7.1.1/R8
                             queue_desc)  # MS-MQDMPR/3.1.7.1.1/R9
    return new_cursor  # MS-MQDMPR/3.1.7.1.1/R10


def close_cursor(cursor: Cursor) -> None:
    """MS-MQDMPR 3.1.7.1.2 Close Cursor (MS-MQDMPR/3.1.7.1.2/R1 MS-MQDMPR/3.1.7.1.2/R2)."""
    queue_desc = cursor.open_queue_descriptor_reference
    if queue_desc is None:  # never initialized (Open Cursor on a closed descriptor)
        return
    readers = queue_desc.waiting_message_read_operation_collection
    for read_op in list(readers):  # MS-MQDMPR/3.1.7.1.2/R3
        if read_op.cursor_reference is cursor:  # MS-MQDMPR/3.1.7.1.2/R4
            readers.remove(read_op)  # MS-MQDMPR/3.1.7.1.2/R5
    queue_desc.cursor_collection.discard(cursor)  # MS-MQDMPR/3.1.7.1.2/R6


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.3.1 Create Default Queue Security Descriptor (with the MS-DTYP structures it builds)
# ---------------------------------------------------------------------------------------------

# MS-MQMQ 2.2.24 MQQUEUEACCESSMASK
MQSEC_DELETE_MESSAGE = 0x00000001
MQSEC_PEEK_MESSAGE = 0x00000002
MQSEC_WRITE_MESSAGE = 0x00000004
MQSEC_DELETE_JOURNAL_MESSAGE = 0x00000008
MQSEC_SET_QUEUE_PROPERTIES = 0x00000010
MQSEC_GET_QUEUE_PROPERTIES = 0x00000020
MQSEC_DELETE_QUEUE = 0x00010000
MQSEC_GET_QUEUE_PERMISSIONS = 0x00020000
MQSEC_CHANGE_QUEUE_PERMISSIONS = 0x00040000
MQSEC_TAKE_QUEUE_OWNERSHIP = 0x00080000
MQSEC_RECEIVE_MESSAGE = MQSEC_DELETE_MESSAGE | MQSEC_PEEK_MESSAGE
MQSEC_RECEIVE_JOURNAL_MESSAGE = MQSEC_DELETE_JOURNAL_MESSAGE | MQSEC_PEEK_MESSAGE
MQSEC_QUEUE_GENERIC_ALL = (
    MQSEC_RECEIVE_MESSAGE | MQSEC_RECEIVE_JOURNAL_MESSAGE | MQSEC_WRITE_MESSAGE
    | MQSEC_SET_QUEUE_PROPERTIES | MQSEC_GET_QUEUE_PROPERTIES | MQSEC_DELETE_QUEUE
    | MQSEC_GET_QUEUE_PERMISSIONS | MQSEC_CHANGE_QUEUE_PERMISSIONS | MQSEC_TAKE_QUEUE_OWNERSHIP)

# MS-DTYP 2.4.6 SECURITY_DESCRIPTOR Control bits; 2.4.4.1 ACE_HEADER AceType; 2.4.5 ACL
SE_DACL_PRESENT = 0x0004
SE_SACL_PRESENT = 0x0010
SE_SELF_RELATIVE = 0x8000
ACCESS_ALLOWED_ACE_TYPE = 0x00
ACL_REVISION = 0x02
DOMAIN_USER_RID_GUEST = 0x000001F5  # MS-SAMR 2.2.1.14


def sid(authority: int, *sub_authorities: int) -> bytes:
    """MS-DTYP 2.4.2.2 SID: Revision 1, SubAuthorityCount, IdentifierAuthority (6 bytes, big
    endian), SubAuthority (little-endian DWORDs)."""
    return (bytes([1, len(sub_authorities)]) + authority.to_bytes(6, "big")
            + b"".join(struct.pack("<I", s) for s in sub_authorities))


WORLD_SID = sid(1, 0)  # S-1-1-0: SECURITY_WORLD_SID_AUTHORITY, SECURITY_WORLD_RID
ANONYMOUS_SID = sid(5, 7)  # S-1-5-7: SECURITY_NT_AUTHORITY, SECURITY_ANONYMOUS_LOGON_RID


def _sid_at(data: bytes, offset: int) -> bytes | None:
    if offset + 8 > len(data) or data[offset] != 1:
        return None
    end = offset + 8 + 4 * data[offset + 1]
    return data[offset:end] if end <= len(data) else None


def _sub_authorities(value: bytes) -> tuple[int, tuple[int, ...]]:
    return (int.from_bytes(value[2:8], "big"),
            struct.unpack(f"<{value[1]}I", value[8:8 + 4 * value[1]]))


@dataclass(frozen=True)
class SecurityDescriptor:
    """MS-DTYP 2.4.6 SECURITY_DESCRIPTOR, its parts as bytes (a SID, an ACL) or None."""

    owner: bytes | None = None
    group: bytes | None = None
    sacl: bytes | None = None
    dacl: bytes | None = None

    @property
    def empty(self) -> bool:
        return self.owner is None and self.group is None and self.sacl is None \
            and self.dacl is None

    def self_relative(self) -> bytes:
        """The self-relative form (MS-DTYP 2.4.6): the 20-byte header, then the SACL, the
        DACL, the owner and the group, each at the offset the header gives (0: absent)."""
        control = SE_SELF_RELATIVE
        body, offsets = b"", {}
        for part in ("sacl", "dacl", "owner", "group"):
            value = getattr(self, part)
            offsets[part] = 20 + len(body) if value is not None else 0
            body += value or b""
        control |= SE_SACL_PRESENT if self.sacl is not None else 0
        control |= SE_DACL_PRESENT if self.dacl is not None else 0
        return struct.pack("<BBHIIII", 1, 0, control, offsets["owner"], offsets["group"],
                           offsets["sacl"], offsets["dacl"]) + body


def parse_security_descriptor(data: bytes) -> SecurityDescriptor | None:
    """A self-relative SECURITY_DESCRIPTOR (MS-DTYP 2.4.6), or None if ``data`` is not one."""
    if len(data) < 20 or data[0] != 1:
        return None
    _, _, control, o_owner, o_group, o_sacl, o_dacl = struct.unpack_from("<BBHIIII", data)

    def acl(offset: int, present: int) -> bytes | None:
        if not control & present or offset == 0 or offset + 8 > len(data):
            return None
        size = struct.unpack_from("<H", data, offset + 2)[0]
        return data[offset:offset + size] if offset + size <= len(data) else None

    return SecurityDescriptor(owner=_sid_at(data, o_owner) if o_owner else None,
                              group=_sid_at(data, o_group) if o_group else None,
                              sacl=acl(o_sacl, SE_SACL_PRESENT),
                              dacl=acl(o_dacl, SE_DACL_PRESENT))


def access_allowed_aces(acl: bytes) -> list[tuple[int, bytes]]:
    """The (Mask, Sid) of each ACCESS_ALLOWED_ACE in an ACL (MS-DTYP 2.4.5, 2.4.4.2)."""
    out, offset = [], 8
    for _ in range(struct.unpack_from("<H", acl, 4)[0]):
        ace_type, _, size = struct.unpack_from("<BBH", acl, offset)
        if ace_type == ACCESS_ALLOWED_ACE_TYPE:
            mask = struct.unpack_from("<I", acl, offset + 4)[0]
            out.append((mask, acl[offset + 8:offset + size]))
        offset += size
    return out


def _access_allowed_ace(mask: int, ace_sid: bytes) -> bytes:
    # MS-DTYP 2.4.4.2: ACE_HEADER (AceType, AceFlags, AceSize), Mask, SidStart
    return struct.pack("<BBHI", ACCESS_ALLOWED_ACE_TYPE, 0, 8 + len(ace_sid), mask) + ace_sid


def _acl(aces: list[bytes]) -> bytes:
    # MS-DTYP 2.4.5 ACL: AclRevision, Sbz1, AclSize, AceCount, Sbz2
    body = b"".join(aces)
    return struct.pack("<BBHHH", ACL_REVISION, 0, 8 + len(body), len(aces), 0) + body


def _is_guest(value: bytes) -> bool:
    """A domain's guest account: S-1-5-21-...-501 (MS-SAMR 2.2.1.14 DOMAIN_USER_RID_GUEST)."""
    authority, subs = _sub_authorities(value)
    return authority == 5 and len(subs) >= 2 and subs[0] == 21 and subs[-1] == \
        DOMAIN_USER_RID_GUEST


def _no_domain_users(value: bytes) -> bool:
    return False


def _machine_sid(env: Environment, queue: Queue) -> bytes | None:
    """Step 2: the objectSid of the computer object, read through MS-MQDSSM 3.1.6.14."""
    path = _parse_pathname(queue.pathname)
    # choice 3: a queue whose Pathname is not set yet (Set Queue Defaults runs first) is created
    # on the local computer, whose name stands in for the "computer name portion"
    computer = path.computer if path is not None and path.computer != "." else \
        env.local_queue_manager.computer_name
    root = getattr(getattr(env, "directory", None), "root", "")
    # MS-MQDSSM 2.2.1: a computer object is CN=<computer name>, CN=Computers, <root>
    status, values = _directory_call(  # MS-MQDMPR/3.1.7.1.3.1/R1
        env, "get_object_properties_using_ldap", "values",
        path=f"CN={computer},CN=Computers,{root}".rstrip(","), attributes=["objectSid"])
    if status is not Success or not values or not values.get("objectSid"):
        return None  # MS-MQDMPR/3.1.7.1.3.1/R2
    return bytes(values["objectSid"])  # MS-MQDMPR/3.1.7.1.3.1/R3


def create_default_queue_security_descriptor(
        env: Environment, queue: Queue, user_sid: bytes = ANONYMOUS_SID,
        is_domain_user: Callable[[bytes], bool] = _no_domain_users) -> bytes:
    """MS-MQDMPR 3.1.7.1.3.1 Create Default Queue Security Descriptor, for ``queue`` (the
    document's iQueue and iDirectoryObject). Returns the self-relative SECURITY_DESCRIPTOR.

    What the model cannot see is an argument: ``user_sid`` is the SID of the user under whose
    identity the current thread runs (the caller's; default S-1-5-7, an anonymous caller), and
    ``is_domain_user`` tells whether a SID is a domain user's (default: none is, the situation
    of a queue manager in a workgroup)."""
    qm = env.local_queue_manager
    machine_sid = None  # step 1: zero
    if qm.directory_integrated:  # step 2
        machine_sid = _machine_sid(env, queue)
    supplied = SecurityDescriptor()  # step 3: SuppliedSecurity and FinalSecurity, empty
    final_sacl = final_dacl = None
    if queue.security:
        # choice 5: bytes that are not a self-relative security descriptor count as not set
        supplied = parse_security_descriptor(  # MS-MQDMPR/3.1.7.1.3.1/R4
            queue.security) or SecurityDescriptor()
    owner_sid = None  # step 5: zero
    if not supplied.empty:  # step 6
        owner_sid = supplied.owner  # MS-MQDMPR/3.1.7.1.3.1/R5
        if supplied.dacl is not None:
            final_dacl = supplied.dacl  # MS-MQDMPR/3.1.7.1.3.1/R6
        if supplied.sacl is not None:
            final_sacl = supplied.sacl  # MS-MQDMPR/3.1.7.1.3.1/R7
    if owner_sid is None:
        owner_sid = user_sid  # MS-MQDMPR/3.1.7.1.3.1/R8
    if not is_domain_user(owner_sid):
        owner_sid = ANONYMOUS_SID  # MS-MQDMPR/3.1.7.1.3.1/R9
    # Step 9 says "if the FinalSecurity.Dacl field was not updated in step 7"; step 7 sets
    # OwnerSid and only step 6.2 updates the DACL, so step 6.2 is the step meant.
    if final_dacl is None:
        world = owner = machine = anonymous = 0  # step 9.1
        if _is_guest(owner_sid) or not is_domain_user(owner_sid):
            world = MQSEC_QUEUE_GENERIC_ALL  # MS-MQDMPR/3.1.7.1.3.1/R10
        else:
            # MS-MQDMPR/3.1.7.1.3.1/R11
            world = MQSEC_GET_QUEUE_PROPERTIES | MQSEC_GET_QUEUE_PERMISSIONS
            owner = MQSEC_QUEUE_GENERIC_ALL
        if machine_sid is not None:
            # MS-MQDMPR/3.1.7.1.3.1/R12
            machine = MQSEC_GET_QUEUE_PROPERTIES | MQSEC_GET_QUEUE_PERMISSIONS
        # "if messages can be sent to this queue using SRMP": the queue manager accepts SRMP
        # messages (over HTTP or PGM); Windows XP and Windows Server 2003 skip this step <20>
        if qm.srmp_http_support or qm.srmp_pgm_support:  # MS-MQDMPR/3.1.7.1.3.1/R13
            world |= MQSEC_WRITE_MESSAGE
            anonymous = MQSEC_WRITE_MESSAGE
        aces = [_access_allowed_ace(world, WORLD_SID)]  # MS-MQDMPR/3.1.7.1.3.1/R14
        if anonymous:
            # MS-MQDMPR/3.1.7.1.3.1/R15
            aces.append(_access_allowed_ace(anonymous, ANONYMOUS_SID))
        if machine:
            # MS-MQDMPR/3.1.7.1.3.1/R16
            aces.append(_access_allowed_ace(machine, machine_sid))
        if owner:
            aces.append(_access_allowed_ace(owner, owner_sid))  # MS-MQDMPR/3.1.7.1.3.1/R17
        final_dacl = _acl(aces)
    # The steps compute OwnerSid but never say where it goes; it is FinalSecurity's owner (the
    # owner that the owner ACE, when there is one, names).
    final = SecurityDescriptor(owner=owner_sid, sacl=final_sacl, dacl=final_dacl)
    return final.self_relative()  # MS-MQDMPR/3.1.7.1.3.1/R18


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.33 Set Queue Defaults, 3.1.7.1.3 Create Queue
# ---------------------------------------------------------------------------------------------

def set_queue_defaults(env: Environment, queue: Queue, user_sid: bytes = ANONYMOUS_SID,
                       is_domain_user: Callable[[bytes], bool] = _no_domain_users) -> None:
    """MS-MQDMPR 3.1.7.1.33 Set Queue Defaults (MS-MQDMPR/3.1.7.1.33/R1
    MS-MQDMPR/3.1.7.1.33/R2). ``user_sid`` and ``is_domain_user`` go to Create Default Queue
    Security Descriptor."""
    # MS-MQDMPR/3.1.7.1.33/R3: the table, row by row
    queue.label = ""
    queue.type = GUID_NULL
    queue.journaling = False
    queue.quota = 0xFFFFFFFF
    queue.journal_quota = 0xFFFFFFFF
    queue.authentication = False
    queue.privacy_level = QueuePrivacyLevel.Optional
    queue.transactional = False
    queue.multicast_address = None
    queue.security = create_default_queue_security_descriptor(env, queue, user_sid,
                                                              is_domain_user)
    queue.base_priority = 0


@dataclass(frozen=True)
class CreateQueueResult:
    """rStatus (MQ_OK, an error, or the Create Directory Object rStatus) and rQueue."""

    status: Any
    queue: Queue | None = None


#: 3.1.7.1.3: the attributes Create Queue copies from iQueue
_COPIED_ATTRIBUTES = ("label", "type", "pathname", "journaling", "quota", "journal_quota",
                      "authentication", "privacy_level", "transactional", "multicast_address",
                      "security", "base_priority")


def _unused_private_queue_number(qm: Any, first: int = 1) -> int:
    used = {q.private_queue_number for q in qm.queue_collection
            if q.queue_type is QueueType.Private}
    # choice 4: the smallest number from ``first`` not in use (any unused number satisfies
    # the text)
    return next(n for n in range(first, first + len(used) + 1) if n not in used)


def create_queue(env: Environment, queue: Queue, skip_directory: bool = False
                 ) -> CreateQueueResult:
    """MS-MQDMPR 3.1.7.1.3 Create Queue (MS-MQDMPR/3.1.7.1.3/R1 MS-MQDMPR/3.1.7.1.3/R4).
    ``queue`` has been initialized with Set Queue Defaults (MS-MQDMPR/3.1.7.1.3/R2)."""
    qm = env.local_queue_manager
    path = _parse_pathname(queue.pathname)
    if path is None:  # MS-MQDMPR/3.1.7.1.3/R5
        return CreateQueueResult(MQ_ERROR_ILLEGAL_QUEUE_PATHNAME)
    new_queue = Queue()  # MS-MQDMPR/3.1.7.1.3/R6
    new_queue.journal_queue_reference = None  # MS-MQDMPR/3.1.7.1.3/R7
    if path.subqueue is None:
        # The document says no more of the journal than that it is a queue; it is a System
        # queue ("used for ... journaling messages", 3.1.1.2) of the local queue manager, of
        # the size the queue's JournalQuota allows.
        new_journal_queue = Queue(  # MS-MQDMPR/3.1.7.1.3/R8
            queue_manager=qm, queue_type=QueueType.System, quota=queue.journal_quota)
        new_queue.journal_queue_reference = new_journal_queue  # MS-MQDMPR/3.1.7.1.3/R9
    for name in _COPIED_ATTRIBUTES:  # MS-MQDMPR/3.1.7.1.3/R10
        setattr(new_queue, name, getattr(queue, name))
    # MS-MQDMPR/3.1.7.1.3/R11: the second table (Active is computed: False while no descriptor
    # is open)
    new_queue.queue_manager = qm
    new_queue.total_bytes = 0
    new_queue.queue_type = path.form
    new_queue.subqueue_collection = []
    new_queue.incoming_transactional_transfer_info_collection = []
    new_queue.message_position_list = MessagePositionList()
    new_queue.open_queue_descriptor_collection = DescriptorCollection()
    # CreateTime and ModifyTime count seconds since 1970; env.now counts milliseconds
    new_queue.create_time = new_queue.modify_time = env.now // 1000
    # choice 6: the ComputerName stands in when the queue manager has no qualified name
    qualified = qm.qualified_computer_name or qm.computer_name
    new_queue.qualified_pathname = qualified + new_queue.pathname[len(path.computer):]
    new_queue.scope = QueueScope.Enterprise
    if new_queue.queue_type is QueueType.Private:
        new_queue.private_queue_number = _unused_private_queue_number(
            qm, env.choices.first_private_queue_number)
    new_queue.full_path = ""
    new_queue.directory_path = ""
    if (new_queue.queue_type is QueueType.Public  # MS-MQDMPR/3.1.7.1.3/R12
            and not skip_directory):  # MS-MQDMPR/3.1.7.1.3/R3
        status, object_guid = _directory_call(  # MS-MQDMPR/3.1.7.1.3/R13
            env, "create_directory_object", "object_guid",
            directory_object=new_queue)  # MS-MQDMPR/3.1.7.1.3/R14
        if status is Success:  # MS-MQDMPR/3.1.7.1.3/R15
            new_queue.identifier = object_guid  # MS-MQDMPR/3.1.7.1.3/R16
            read_status, directory_object = _read_directory(  # MS-MQDMPR/3.1.7.1.3/R17
                env, "Queue",  # MS-MQDMPR/3.1.7.1.3/R18
                [("Identifier", "EQUALS", new_queue.identifier)],  # MS-MQDMPR/3.1.7.1.3/R19
                ["FullPath", "DirectoryPath"])  # MS-MQDMPR/3.1.7.1.3/R20
            if read_status is Success:  # MS-MQDMPR/3.1.7.1.3/R21
                new_queue.full_path = directory_object.full_path
                new_queue.directory_path = directory_object.directory_path
        else:  # MS-MQDMPR/3.1.7.1.3/R22
            return CreateQueueResult(status)  # MS-MQDMPR/3.1.7.1.3/R23
    qm.queue_collection.append(new_queue)  # MS-MQDMPR/3.1.7.1.3/R24
    return CreateQueueResult(MQ_OK, new_queue)  # MS-MQDMPR/3.1.7.1.3/R25


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.4 Delete Queue, 3.1.7.1.7 Purge Queue, 3.1.7.1.8 Create Transaction
# ---------------------------------------------------------------------------------------------

def delete_queue(env: Environment, queue: Queue, skip_directory: bool = False) -> Any:
    """MS-MQDMPR 3.1.7.1.4 Delete Queue (MS-MQDMPR/3.1.7.1.4/R1 MS-MQDMPR/3.1.7.1.4/R3).
    Returns rStatus: MQ_OK, or the Delete Directory Object rStatus when that failed."""
    for message_position in list(queue.message_position_list):  # MS-MQDMPR/3.1.7.1.4/R4
        message_position_deleted(env,  # MS-MQDMPR/3.1.7.1.4/R5
                                 queue=queue,  # MS-MQDMPR/3.1.7.1.4/R6
                                 position=message_position,  # MS-MQDMPR/3.1.7.1.4/R7
                                 reason=MessageClass.NackQueueDeleted)  # MS-MQDMPR/3.1.7.1.4/R8
    for queue_desc in queue.open_queue_descriptor_collection:  # MS-MQDMPR/3.1.7.1.4/R9
        queue_desc.queue_reference = None  # MS-MQDMPR/3.1.7.1.4/R10
    collection = env.local_queue_manager.queue_collection
    if queue in collection:
        collection.remove(queue)  # MS-MQDMPR/3.1.7.1.4/R11
    if (queue.queue_type is QueueType.Public  # MS-MQDMPR/3.1.7.1.4/R12
            and not skip_directory):  # MS-MQDMPR/3.1.7.1.4/R2
        status, _ = _directory_call(env, "delete_directory_object",  # MS-MQDMPR/3.1.7.1.4/R13
                                    None, directory_object=queue)  # MS-MQDMPR/3.1.7.1.4/R14
        if status is not Success:  # MS-MQDMPR/3.1.7.1.4/R15
            return status  # MS-MQDMPR/3.1.7.1.4/R16
    return MQ_OK  # MS-MQDMPR/3.1.7.1.4/R17


def purge_queue(env: Environment, queue: Queue) -> None:
    """MS-MQDMPR 3.1.7.1.7 Purge Queue (MS-MQDMPR/3.1.7.1.7/R1 MS-MQDMPR/3.1.7.1.7/R2)."""
    for message_position in list(queue.message_position_list):  # MS-MQDMPR/3.1.7.1.7/R3
        # a Deleted position that Move Message left in the list (MS-MQDMPR 3.1.7.1.16 does
        # not remove it) holds a message that is now another queue's: R4's "not Available"
        # would make it PurgePending again, and a later Message Position Deleted would take
        # the moved message's bytes from this queue; it is not one of this queue's messages
        if message_position.state is MessagePositionState.Deleted:
            continue
        # MS-MQDMPR/3.1.7.1.7/R4
        if message_position.state is not MessagePositionState.Available:
            message_position.state = MessagePositionState.PurgePending  # MS-MQDMPR/3.1.7.1.7/R5
        else:  # MS-MQDMPR/3.1.7.1.7/R6
            message_position_deleted(env,  # MS-MQDMPR/3.1.7.1.7/R7
                                     queue=queue,  # MS-MQDMPR/3.1.7.1.7/R8
                                     position=message_position,  # MS-MQDMPR/3.1.7.1.7/R9
                                     # MS-MQDMPR/3.1.7.1.7/R10
                                     reason=MessageClass.NackQueuePurged)


def create_transaction(env: Environment, transaction_identifier: uuid.UUID) -> Transaction:
    """MS-MQDMPR 3.1.7.1.8 Create Transaction (MS-MQDMPR/3.1.7.1.8/R1
    MS-MQDMPR/3.1.7.1.8/R2). Returns rTransaction."""
    new_transaction = Transaction(identifier=transaction_identifier)  # MS-MQDMPR/3.1.7.1.8/R3
    env.local_queue_manager.transaction_collection.append(  # MS-MQDMPR/3.1.7.1.8/R4
        new_transaction)
    return new_transaction  # MS-MQDMPR/3.1.7.1.8/R5


# ---------------------------------------------------------------------------------------------
# 3.1.7.3.8 Expand Format Name
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ExpandFormatNameResult:
    """rStatus (True: expanded) and rOutputFormatName (undefined, None, when rStatus is
    False)."""

    status: bool
    output_format_name: FormatName | None = None


def expand_format_name(env: Environment, input_format_name: FormatName | str
                       ) -> ExpandFormatNameResult:
    """MS-MQDMPR 3.1.7.3.8 Expand Format Name (MS-MQDMPR/3.1.7.3.8/R1
    MS-MQDMPR/3.1.7.3.8/R3). A string is parsed first; one that is not a format name of
    MS-MQMQ 2.1.2-2.1.7 cannot be expanded (rStatus False)."""
    name = _as_format_name(input_format_name)
    if name is None:
        return ExpandFormatNameResult(False)
    # MS-MQDMPR/3.1.7.3.8/R4
    if not name.is_distribution_list and not name.is_multiple_element:
        return ExpandFormatNameResult(True,  # MS-MQDMPR/3.1.7.3.8/R6 MS-MQDMPR/3.1.7.3.8/R7
                                      name)  # MS-MQDMPR/3.1.7.3.8/R5
    output_elements = (  # MS-MQDMPR/3.1.7.3.8/R8
        [name] if name.is_distribution_list else list(name.elements))
    resolved: set[FormatName] = set()
    index = 0
    while index < len(output_elements):  # MS-MQDMPR/3.1.7.3.8/R9
        single_format_name = output_elements[index]
        if not single_format_name.is_distribution_list:  # MS-MQDMPR/3.1.7.3.8/R10
            index += 1
            continue
        del output_elements[index]
        if single_format_name in resolved:
            continue  # choice 7: a list met again (one list inside another) adds nothing new
        resolved.add(single_format_name)
        status, members = _directory_call(  # MS-MQDMPR/3.1.7.3.8/R11
            env, "resolve_distribution_list", "format_name_collection",
            dl_format_name=single_format_name)  # MS-MQDMPR/3.1.7.3.8/R12
        if status is not Success:  # MS-MQDMPR/3.1.7.3.8/R13
            return ExpandFormatNameResult(False)
        for member in members or ():  # MS-MQDMPR/3.1.7.3.8/R14
            member_name = _as_format_name(member)
            if member_name is None:
                return ExpandFormatNameResult(False)  # the directory gave no format name
            output_elements.append(member_name)
    # MS-MQDMPR/3.1.7.3.8/R15: sorted without case; of names equal without case, one stays,
    # so that the output has no duplicate elements (MS-MQDMPR/3.1.7.3.8/R2)
    unique: dict[str, FormatName] = {}
    for element in sorted(output_elements, key=lambda e: str(e).casefold()):
        unique.setdefault(str(element).casefold(), element)
    output_elements = list(unique.values())
    if not output_elements:
        return ExpandFormatNameResult(False)  # empty lists: no format name to return
    if len(output_elements) == 1:  # MS-MQDMPR/3.1.7.3.8/R16
        return ExpandFormatNameResult(True,  # MS-MQDMPR/3.1.7.3.8/R18 MS-MQDMPR/3.1.7.3.8/R19
                                      output_elements[0])  # MS-MQDMPR/3.1.7.3.8/R17
    try:
        output = FormatName(FormatNameKind.MULTIPLE_ELEMENT,  # MS-MQDMPR/3.1.7.3.8/R20
                            elements=tuple(output_elements))
    except FormatNameError:
        # a list member (a journal, say) that no multiple-element name may hold (MS-MQMQ 2.1.7)
        return ExpandFormatNameResult(False)
    return ExpandFormatNameResult(True, output)  # MS-MQDMPR/3.1.7.3.8/R21


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.5 Open Queue, 3.1.7.1.6 Close Queue, 3.1.7.1.17 Cancel Waiting Message Read Request
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class OpenQueueResult:
    """rStatus and rOpenQueueDescriptor."""

    status: int
    open_queue_descriptor: OpenQueueDescriptor | None = None


#: Open Queue's rStatus when Expand Format Name fails: the event says only "an error code";
#: MS-MQMQ 2.4 gives MQ_ERROR_ILLEGAL_FORMATNAME for a format name that cannot be used
EXPAND_FAILED = MQ_ERROR_ILLEGAL_FORMATNAME


def _has_descriptor(queue: Queue, share_mode: QueueShareMode, *access: QueueAccessType) -> bool:
    """Is one of the queue's open descriptors of ``share_mode`` and one of ``access``? Counted
    by the collection (model/refs.py), not walked: an open costs the same however many
    handles are open on the queue."""
    return queue.open_queue_descriptor_collection.has(share_mode, *access)


def open_queue(env: Environment, format_name: FormatName | str,
               required_access: QueueAccessType, shared_mode: QueueShareMode
               ) -> OpenQueueResult:
    """MS-MQDMPR 3.1.7.1.5 Open Queue (MS-MQDMPR/3.1.7.1.5/R1 MS-MQDMPR/3.1.7.1.5/R2)."""
    qm = env.local_queue_manager
    expanded = expand_format_name(env,  # MS-MQDMPR/3.1.7.1.5/R3
                                  format_name)  # MS-MQDMPR/3.1.7.1.5/R4
    if not expanded.status:  # MS-MQDMPR/3.1.7.1.5/R5
        return OpenQueueResult(EXPAND_FAILED)
    format_name = expanded.output_format_name  # MS-MQDMPR/3.1.7.1.5/R6
    if format_name.is_multiple_element:  # MS-MQDMPR/3.1.7.1.5/R7
        if required_access is not SendAccess:  # MS-MQDMPR/3.1.7.1.5/R8
            # MS-MQDMPR/3.1.7.1.5/R9 MS-MQDMPR/3.1.7.1.5/R10
            return OpenQueueResult(MQ_ERROR_UNSUPPORTED_FORMATNAME_OPERATION)
        if shared_mode is not DenyNone:  # MS-MQDMPR/3.1.7.1.5/R11
            # MS-MQDMPR/3.1.7.1.5/R12 MS-MQDMPR/3.1.7.1.5/R13
            return OpenQueueResult(MQ_ERROR_UNSUPPORTED_ACCESS_MODE)
        new_desc = OpenQueueDescriptor(  # MS-MQDMPR/3.1.7.1.5/R14
            access_type=SendAccess,  # MS-MQDMPR/3.1.7.1.5/R15
            share_mode=DenyNone,  # MS-MQDMPR/3.1.7.1.5/R16
            format_name=str(format_name),  # MS-MQDMPR/3.1.7.1.5/R17
            multiple=True,  # MS-MQDMPR/3.1.7.1.5/R18
            queue_reference=None,  # MS-MQDMPR/3.1.7.1.5/R19
            # MS-MQDMPR/3.1.7.1.5/R20
            remote_read_state=OpenQueueDescriptorRemoteReadState.None_,
            handle=env.ids.handle(),  # MS-MQDMPR/3.1.7.1.5/R21
            context_value=env.ids.handle())  # MS-MQDMPR/3.1.7.1.5/R22
        for single_format_name in format_name.elements:  # MS-MQDMPR/3.1.7.1.5/R23
            opened = open_queue(env,  # MS-MQDMPR/3.1.7.1.5/R24
                                single_format_name,  # MS-MQDMPR/3.1.7.1.5/R25
                                SendAccess,  # MS-MQDMPR/3.1.7.1.5/R26
                                DenyNone)  # MS-MQDMPR/3.1.7.1.5/R27
            if opened.status != MQ_OK:  # MS-MQDMPR/3.1.7.1.5/R28
                close_queue(env, new_desc)  # MS-MQDMPR/3.1.7.1.5/R29
                # MS-MQDMPR/3.1.7.1.5/R30 MS-MQDMPR/3.1.7.1.5/R31
                return OpenQueueResult(opened.status)
            new_desc.open_queue_descriptor_collection.append(  # MS-MQDMPR/3.1.7.1.5/R32
                opened.open_queue_descriptor)
        # MS-MQDMPR/3.1.7.1.5/R33 MS-MQDMPR/3.1.7.1.5/R35
        return OpenQueueResult(MQ_OK, new_desc)  # MS-MQDMPR/3.1.7.1.5/R34
    if format_name.is_direct and format_name.is_http:  # MS-MQDMPR/3.1.7.1.5/R36
        if required_access is not SendAccess:  # MS-MQDMPR/3.1.7.1.5/R37
            # MS-MQDMPR/3.1.7.1.5/R38 MS-MQDMPR/3.1.7.1.5/R39
            return OpenQueueResult(MQ_ERROR_UNSUPPORTED_FORMATNAME_OPERATION)
    if format_name.is_machine:  # MS-MQDMPR/3.1.7.1.5/R40
        if required_access is SendAccess:  # MS-MQDMPR/3.1.7.1.5/R41
            # MS-MQDMPR/3.1.7.1.5/R42 MS-MQDMPR/3.1.7.1.5/R43
            return OpenQueueResult(MQ_ERROR_UNSUPPORTED_FORMATNAME_OPERATION)
    if format_name.is_multicast:  # MS-MQDMPR/3.1.7.1.5/R44
        if required_access is not SendAccess:  # MS-MQDMPR/3.1.7.1.5/R45
            # MS-MQDMPR/3.1.7.1.5/R46 MS-MQDMPR/3.1.7.1.5/R47
            return OpenQueueResult(MQ_ERROR_UNSUPPORTED_FORMATNAME_OPERATION)
    queue_obj = find_queue(env, format_name)  # MS-MQDMPR/3.1.7.1.5/R48
    if queue_obj is None:  # MS-MQDMPR/3.1.7.1.5/R49
        if required_access is not SendAccess:  # MS-MQDMPR/3.1.7.1.5/R50
            # MS-MQDMPR/3.1.7.1.5/R51 MS-MQDMPR/3.1.7.1.5/R52
            return OpenQueueResult(MQ_ERROR_QUEUE_NOT_FOUND)
        if format_name.is_direct:  # MS-MQDMPR/3.1.7.1.5/R53
            # MS-MQDMPR/3.1.7.1.5/R54 MS-MQDMPR/3.1.7.1.5/R55
            protocol = format_name.direct_protocol
            # MS-MQDMPR/3.1.7.1.5/R56
            if protocol in (DirectProtocol.HTTP, DirectProtocol.HTTPS):
                machine_name = format_name.direct_host  # MS-MQDMPR/3.1.7.1.5/R57
            else:  # MS-MQDMPR/3.1.7.1.5/R58
                machine_name = format_name.direct_address  # MS-MQDMPR/3.1.7.1.5/R59
            if _is_local_machine(env, machine_name):  # MS-MQDMPR/3.1.7.1.5/R60
                # MS-MQDMPR/3.1.7.1.5/R61 MS-MQDMPR/3.1.7.1.5/R62
                return OpenQueueResult(MQ_ERROR_QUEUE_NOT_FOUND)
        if format_name.is_public:  # MS-MQDMPR/3.1.7.1.5/R63
            public_queue_guid = format_name.public_queue_guid  # MS-MQDMPR/3.1.7.1.5/R64
            status, i_queue = _read_directory(  # MS-MQDMPR/3.1.7.1.5/R65
                env, "Queue",  # MS-MQDMPR/3.1.7.1.5/R66
                [("Identifier", "EQUALS",  # MS-MQDMPR/3.1.7.1.5/R67 MS-MQDMPR/3.1.7.1.5/R68
                  public_queue_guid)])
            if status is not Success:  # MS-MQDMPR/3.1.7.1.5/R69
                # MS-MQDMPR/3.1.7.1.5/R70
                return OpenQueueResult(MQ_ERROR_UNSUPPORTED_FORMATNAME_OPERATION)
            # MS-MQDMPR/3.1.7.1.5/R71: i_queue is the returned rDirectoryObject
            host = i_queue.queue_manager
            # MS-MQDMPR/3.1.7.1.5/R72
            if host is not None and _fold(host.computer_name) == _fold(qm.computer_name):
                # MS-MQDMPR/3.1.7.1.5/R73 MS-MQDMPR/3.1.7.1.5/R74
                return OpenQueueResult(MQ_ERROR_QUEUE_NOT_FOUND)
        if format_name.is_private:  # MS-MQDMPR/3.1.7.1.5/R75
            if format_name.private_computer_guid == qm.identifier:  # MS-MQDMPR/3.1.7.1.5/R76
                # MS-MQDMPR/3.1.7.1.5/R77 MS-MQDMPR/3.1.7.1.5/R78
                return OpenQueueResult(MQ_ERROR_QUEUE_NOT_FOUND)
        new_queue = OutgoingQueue(  # MS-MQDMPR/3.1.7.1.5/R79
            identifier=env.ids.guid(),  # MS-MQDMPR/3.1.7.1.5/R80
            label=str(format_name),  # MS-MQDMPR/3.1.7.1.5/R81
            destination_format_name=str(format_name),  # MS-MQDMPR/3.1.7.1.5/R82
            next_hops=[],  # MS-MQDMPR/3.1.7.1.5/R83: NULL, no next hop known yet
            state=OutgoingQueueState.Inactive)  # MS-MQDMPR/3.1.7.1.5/R84
        if format_name.is_public:  # MS-MQDMPR/3.1.7.1.5/R85
            public_queue_guid = format_name.public_queue_guid  # MS-MQDMPR/3.1.7.1.5/R86
            status, directory_object = _read_directory(  # MS-MQDMPR/3.1.7.1.5/R87
                env, "Queue",  # MS-MQDMPR/3.1.7.1.5/R88
                [("Identifier", "EQUALS",  # MS-MQDMPR/3.1.7.1.5/R89 MS-MQDMPR/3.1.7.1.5/R90
                  public_queue_guid)])
            if status is Success:  # MS-MQDMPR/3.1.7.1.5/R91
                # MS-MQDMPR/3.1.7.1.5/R92
                new_queue.base_priority = directory_object.base_priority
            else:  # MS-MQDMPR/3.1.7.1.5/R93
                # MS-MQDMPR/3.1.7.1.5/R94 MS-MQDMPR/3.1.7.1.5/R95
                return OpenQueueResult(MQ_ERROR_QUEUE_NOT_FOUND)
        if not format_name.is_http and qm.hardened_security:  # MS-MQDMPR/3.1.7.1.5/R96
            new_queue.state = OutgoingQueueState.Locked  # MS-MQDMPR/3.1.7.1.5/R97
        if format_name.is_multicast:  # MS-MQDMPR/3.1.7.1.5/R98
            new_queue.multicast = True  # MS-MQDMPR/3.1.7.1.5/R99
        queue_obj = new_queue  # MS-MQDMPR/3.1.7.1.5/R100
        # The step stops there, but Initialization (3.1.3) walks LocalQueueManager's
        # QueueCollection for its OutgoingQueues: the new queue is hosted by the local queue
        # manager and belongs to that collection (where the next open of the name finds it).
        new_queue.queue_manager = qm
        qm.queue_collection.append(new_queue)
    if _has_descriptor(queue_obj, DenyReceive, ReceiveAccess):  # MS-MQDMPR/3.1.7.1.5/R101
        if shared_mode is DenyReceive:  # MS-MQDMPR/3.1.7.1.5/R102
            # MS-MQDMPR/3.1.7.1.5/R103 MS-MQDMPR/3.1.7.1.5/R104
            return OpenQueueResult(MQ_ERROR_SHARING_VIOLATION)
        # MS-MQDMPR/3.1.7.1.5/R105
        if shared_mode is DenyNone and required_access is ReceiveAccess:
            # MS-MQDMPR/3.1.7.1.5/R106 MS-MQDMPR/3.1.7.1.5/R107
            return OpenQueueResult(MQ_ERROR_SHARING_VIOLATION)
    elif _has_descriptor(queue_obj, DenyReceive,  # MS-MQDMPR/3.1.7.1.5/R108
                         QueueAccessType.PeekAccess, QueueAccessType.PeekAdminAccess):
        if required_access is ReceiveAccess:  # MS-MQDMPR/3.1.7.1.5/R109
            # MS-MQDMPR/3.1.7.1.5/R110 MS-MQDMPR/3.1.7.1.5/R111
            return OpenQueueResult(MQ_ERROR_SHARING_VIOLATION)
    elif _has_descriptor(queue_obj, DenyNone, ReceiveAccess):  # MS-MQDMPR/3.1.7.1.5/R112
        if shared_mode is DenyReceive:  # MS-MQDMPR/3.1.7.1.5/R113
            # MS-MQDMPR/3.1.7.1.5/R114 MS-MQDMPR/3.1.7.1.5/R115
            return OpenQueueResult(MQ_ERROR_SHARING_VIOLATION)
    new_desc = OpenQueueDescriptor(  # MS-MQDMPR/3.1.7.1.5/R116
        access_type=required_access,  # MS-MQDMPR/3.1.7.1.5/R117
        # The list leaves ShareMode out, yet the checks above read the ShareMode of open
        # descriptors: it is iSharedMode, as for a multiple-element open (R16)
        share_mode=shared_mode,
        queue_reference=queue_obj,  # MS-MQDMPR/3.1.7.1.5/R118
        format_name=str(format_name),  # MS-MQDMPR/3.1.7.1.5/R119
        multiple=False,  # MS-MQDMPR/3.1.7.1.5/R120
        handle=env.ids.handle(),  # MS-MQDMPR/3.1.7.1.5/R121
        context_value=env.ids.handle())  # MS-MQDMPR/3.1.7.1.5/R122
    queue_obj.open_queue_descriptor_collection.append(new_desc)  # MS-MQDMPR/3.1.7.1.5/R123
    # MS-MQDMPR/3.1.7.1.5/R124
    return OpenQueueResult(MQ_OK, new_desc)  # MS-MQDMPR/3.1.7.1.5/R125


def close_queue(env: Environment, queue_desc: OpenQueueDescriptor) -> None:
    """MS-MQDMPR 3.1.7.1.6 Close Queue (MS-MQDMPR/3.1.7.1.6/R1 MS-MQDMPR/3.1.7.1.6/R2)."""
    # A Multiple descriptor's QueueReference is always NULL (3.1.1.16, Open Queue R19), yet the
    # Multiple branch exists and Open Queue (R29) relies on it to close the elements opened so
    # far: the NULL test applies to a descriptor that is not Multiple.
    # MS-MQDMPR/3.1.7.1.6/R3
    if queue_desc.queue_reference is None and not queue_desc.multiple:
        return  # MS-MQDMPR/3.1.7.1.6/R4
    if queue_desc.multiple:  # MS-MQDMPR/3.1.7.1.6/R5
        # MS-MQDMPR/3.1.7.1.6/R6
        for element in list(queue_desc.open_queue_descriptor_collection):
            close_queue(env, element)  # MS-MQDMPR/3.1.7.1.6/R7
        return  # MS-MQDMPR/3.1.7.1.6/R8
    for read_op in list(  # MS-MQDMPR/3.1.7.1.6/R9
            queue_desc.waiting_message_read_operation_collection):
        if read_op.tag is not None:  # MS-MQDMPR/3.1.7.1.6/R10
            cancel_waiting_message_read_request(
                env,
                queue=queue_desc.queue_reference,  # MS-MQDMPR/3.1.7.1.6/R11
                tag=read_op.tag,  # MS-MQDMPR/3.1.7.1.6/R12
                status=MQ_ERROR_OPERATION_CANCELLED)  # MS-MQDMPR/3.1.7.1.6/R13
    for cursor_obj in list(queue_desc.cursor_collection):  # MS-MQDMPR/3.1.7.1.6/R14
        close_cursor(cursor_obj)  # MS-MQDMPR/3.1.7.1.6/R15 MS-MQDMPR/3.1.7.1.6/R16
    descriptors = queue_desc.queue_reference.open_queue_descriptor_collection
    descriptors.discard(queue_desc)  # MS-MQDMPR/3.1.7.1.6/R17


def cancel_waiting_message_read_request(env: Environment, queue: Queue, tag: Any,
                                        status: int, only: Any = None) -> int:
    """MS-MQDMPR 3.1.7.1.17 Cancel Waiting Message Read Request (MS-MQDMPR/3.1.7.1.17/R1
    MS-MQDMPR/3.1.7.1.17/R2). Returns rStatus: MQ_OK or STATUS_NOT_FOUND. ``only``: an
    OpenQueueDescriptor whose reads alone are looked at (R_CancelReceive's own handle,
    model/mqrr.py choice 6); None walks every descriptor of the queue, as the text does."""
    descriptors = queue.open_queue_descriptor_collection if only is None else (
        [only] if only in queue.open_queue_descriptor_collection else [])
    for queue_desc in list(descriptors):  # MS-MQDMPR/3.1.7.1.17/R3
        readers = queue_desc.waiting_message_read_operation_collection
        for read_op in list(readers):  # MS-MQDMPR/3.1.7.1.17/R4
            if read_op.tag is not None and read_op.tag == tag:  # MS-MQDMPR/3.1.7.1.17/R5
                # "from iQueue.WaitingMessageReadOperationCollection": a Queue has no such
                # collection; the one the loop walks is queueDesc's
                readers.remove(read_op)  # MS-MQDMPR/3.1.7.1.17/R6
                waiting_message_read_timer_stop(env,  # MS-MQDMPR/3.1.7.1.17/R7
                                                reader=read_op,  # MS-MQDMPR/3.1.7.1.17/R8
                                                status=status)  # MS-MQDMPR/3.1.7.1.17/R9
                return MQ_OK  # MS-MQDMPR/3.1.7.1.17/R10
    return STATUS_NOT_FOUND  # MS-MQDMPR/3.1.7.1.17/R11


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.26 Get Queue Path
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class GetQueuePathResult:
    """rPathName, rMachineName and rStatus."""

    path_name: str
    machine_name: str
    status: int


def get_queue_path(env: Environment, format_name: FormatName | str) -> GetQueuePathResult:
    """MS-MQDMPR 3.1.7.1.26 Get Queue Path (MS-MQDMPR/3.1.7.1.26/R1 MS-MQDMPR/3.1.7.1.26/R2).
    A string that is not a format name gives MQ_ERROR_ILLEGAL_FORMATNAME."""
    qm = env.local_queue_manager
    path_name = machine_name = ""  # MS-MQDMPR/3.1.7.1.26/R3
    name = _as_format_name(format_name)
    if name is None:
        return GetQueuePathResult(path_name, machine_name, MQ_ERROR_ILLEGAL_FORMATNAME)
    if name.is_direct:  # MS-MQDMPR/3.1.7.1.26/R4
        address = name.direct_address  # MS-MQDMPR/3.1.7.1.26/R5
        # MS-MQDMPR/3.1.7.1.26/R6
        if name.direct_protocol in (DirectProtocol.HTTP, DirectProtocol.HTTPS):
            machine_name = name.direct_host  # MS-MQDMPR/3.1.7.1.26/R7
        else:  # MS-MQDMPR/3.1.7.1.26/R8
            machine_name = address  # MS-MQDMPR/3.1.7.1.26/R9
        # the text as given (a string keeps its spelling), else the canonical text
        text = format_name if isinstance(format_name, str) else str(name)
        right = text[text.index(address) + len(address):]
        path_name = machine_name + right  # MS-MQDMPR/3.1.7.1.26/R10
    if name.is_public:  # MS-MQDMPR/3.1.7.1.26/R11
        public_queue_guid = name.public_queue_guid  # MS-MQDMPR/3.1.7.1.26/R12
        status, i_queue = _read_directory(  # MS-MQDMPR/3.1.7.1.26/R13
            env, "Queue",  # MS-MQDMPR/3.1.7.1.26/R14
            [("Identifier", "EQUALS",  # MS-MQDMPR/3.1.7.1.26/R15 MS-MQDMPR/3.1.7.1.26/R16
              public_queue_guid)])
        if status is not Success:  # MS-MQDMPR/3.1.7.1.26/R17
            # MS-MQDMPR/3.1.7.1.26/R18
            return GetQueuePathResult(path_name, machine_name, MQ_ERROR_ILLEGAL_FORMATNAME)
        # MS-MQDMPR/3.1.7.1.26/R19 MS-MQDMPR/3.1.7.1.26/R20: i_queue is rDirectoryObject
        path_name = i_queue.pathname  # MS-MQDMPR/3.1.7.1.26/R21
        host = i_queue.queue_manager
        machine_name = host.computer_name if host is not None else ""
    if name.is_private:  # MS-MQDMPR/3.1.7.1.26/R22
        private_queue_qm_guid = name.private_computer_guid  # MS-MQDMPR/3.1.7.1.26/R23
        status, i_queue_manager = _read_directory(  # MS-MQDMPR/3.1.7.1.26/R24
            env, "QueueManager",  # MS-MQDMPR/3.1.7.1.26/R25
            [("Identifier", "EQUALS",  # MS-MQDMPR/3.1.7.1.26/R26 MS-MQDMPR/3.1.7.1.26/R27
              private_queue_qm_guid)])
        if status is not Success:  # MS-MQDMPR/3.1.7.1.26/R28
            # MS-MQDMPR/3.1.7.1.26/R29
            return GetQueuePathResult(path_name, machine_name, MQ_ERROR_ILLEGAL_FORMATNAME)
        # MS-MQDMPR/3.1.7.1.26/R30 MS-MQDMPR/3.1.7.1.26/R31: i_queue_manager is
        # rDirectoryObject
        machine_name = i_queue_manager.computer_name  # MS-MQDMPR/3.1.7.1.26/R32
        # "iQueueManager.Identifier EQUALS the QueueGuid component": a private format name has
        # a ComputerGuid, not a QueueGuid, and the queue manager read has that identifier
        # already. What the test must settle is whether the local QueueCollection, searched
        # next, belongs to that queue manager: LocalQueueManager.Identifier is ComputerGuid.
        match = next((q for q in qm.queue_collection
                      if q.queue_type is QueueType.Private
                      and q.private_queue_number == name.private_queue_number), None)
        # MS-MQDMPR/3.1.7.1.26/R33
        if qm.identifier == private_queue_qm_guid and match is not None:
            path_name = match.pathname  # MS-MQDMPR/3.1.7.1.26/R34
    return GetQueuePathResult(path_name, machine_name, MQ_OK)  # MS-MQDMPR/3.1.7.1.26/R35
