"""The rules of the abstract data model that span attributes or elements (MS-MQDMPR 3.1.1 and
3.2.1), checked over a whole queue manager: ``check_invariants(qm)`` returns one string per
violation, each starting with the requirement ID it breaks, and ``[]`` when the model is sound.

Two rules concern elements a QueueManager does not reach (nothing in the ADM refers to a
RoutingLink, nor to an OpenQueueDescriptor created for a multiple-element format name, whose
QueueReference is NULL); they have their own checks, ``check_routing_link`` and
``check_open_queue_descriptor`` (which ``check_invariants`` also applies to every descriptor it
reaches).

Besides the documents' MUST rules, three rules hold the model together:

* every MessagePosition is in exactly one MessagePositionState (MS-MQDMPR/3.1.1.11/R2);
* a MessagePosition that is not Deleted is an entry of the MessagePositionList of the queue it
  names (MS-MQDMPR/3.1.1.11/R1: QueueReference is "the Queue ... that contains this
  MessagePosition"), and it references a Message whose MessagePositionReference is that same
  position (MS-MQDMPR/3.1.1.12/R1: "the MessagePosition ... that contains this Message");
* a queue's TotalBytes is the size of the messages in it (MS-MQDMPR 3.1.1.2), whatever NACKs,
  moves and restarts happened (errata ``total-bytes``).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator

from mqconform.model.adm import (
    Cursor,
    Message,
    MessagePosition,
    MessagePositionState,
    OpenQueueDescriptor,
    OpenQueueDescriptorRemoteReadState,
    Queue,
    QueueAccessType,
    QueueManager,
    RoutingLink,
    TransactionalOperationType,
    User,
)
from mqconform.model.consumed import storage_size

#: MS-MQDMPR 3.1.1.12 Label: "MUST NOT exceed 249 characters in length"
LABEL_MAX = 249
#: MS-MQDMPR 3.1.1.8 ActualCost: "in the range from 1 to 999,999 inclusive"
ACTUAL_COST_RANGE = range(1, 999_999 + 1)
#: MS-MQDMPR 3.1.1.15 CertificateDigestList: "the 16-byte output of the MD5 algorithm"
MD5_DIGEST_SIZE = 16


def check_invariants(qm: QueueManager) -> list[str]:
    """Every ADM rule that can be checked from ``qm`` (see the module docstring)."""
    out = _queue_manager(qm)
    queues = list(_queues(qm))
    enqueuing = {id(op.message_position_reference) for t in qm.transaction_collection
                 for op in t.transactional_operation_collection
                 if op.operation_type is TransactionalOperationType.Enqueue}
    for queue in queues:
        out += _message_position_list(queue)
        out += _total_bytes(queue, enqueuing)
    out += _positions(queues, list(_all_positions(qm, queues)))
    descriptors = list(_descriptors(queues))
    out += _descriptors_rules(descriptors)
    out += _cursors([c for d in descriptors for c in d.cursor_collection])
    out += _transactions(qm)
    out += _users(c.user for c in qm.internal_certificate_collection if c.user is not None)
    return out


def check_queues(qm: QueueManager, queues: Iterable[Queue]) -> list[str]:
    """The rules of ``check_invariants`` that concern these queues and their subqueues alone:
    their MessagePositionLists, TotalBytes, the positions in them, their open descriptors and
    the descriptors' cursors. Cheap enough to run after every call that touches them."""
    todo, chosen, seen = list(queues), [], set()
    while todo:
        queue = todo.pop(0)
        if queue is None or id(queue) in seen:
            continue
        seen.add(id(queue))
        chosen.append(queue)
        todo += queue.subqueue_collection
    enqueuing = _enqueuing(qm)
    if _queues_sound(chosen, enqueuing):
        return []
    return _queue_rules(chosen, enqueuing)


def _queue_rules(chosen: list[Queue], enqueuing: set[int]) -> list[str]:
    """check_queues's rules one by one, each with its message."""
    out = []
    for queue in chosen:
        out += _message_position_list(queue)
        out += _total_bytes(queue, enqueuing)
    out += _positions(chosen, [p for q in chosen for p in q.message_position_list])
    descriptors = list(_descriptors(chosen))
    out += _descriptors_rules(descriptors)
    out += _cursors([c for d in descriptors for c in d.cursor_collection])
    return out


def _enqueuing(qm: QueueManager) -> set[int]:
    """The positions that transactions enqueued and have not committed (``_total_bytes``)."""
    out: set[int] = set()
    enqueue = TransactionalOperationType.Enqueue
    # most transactions have no operation (a receive's own is never ended): skipped in C
    for operations in filter(None, map(_OPERATIONS, qm.transaction_collection)):
        for op in operations:
            if op.operation_type is enqueue:
                out.add(id(op.message_position_reference))
    return out


_OPERATIONS = operator.attrgetter("transactional_operation_collection")


def _queues_sound(queues: list[Queue], enqueuing: set[int]) -> bool:
    """True only when ``check_queues``'s rules all hold for ``queues``: one pass over each
    list and descriptor, no message built. Any doubt (a rule that may be broken, a Multiple
    descriptor) answers False, and the rules are then checked one by one for their messages."""
    deleted = MessagePositionState.Deleted
    handles: set = set()
    contexts: set = set()
    cursors: set = set()
    for queue in queues:
        previous: Message | None = None
        present = 0
        for position in queue.message_position_list:
            state = position.state
            message = position.message_reference
            if position.queue_reference is not queue or type(state) is not MessagePositionState:
                return False  # 3.1.1.11/R1, R2
            if message is None:
                if state is deleted:
                    continue
                return False  # 3.1.1.11/R1: references no Message
            if previous is not None and (
                    previous.priority < message.priority
                    or (previous.priority == message.priority
                        and previous.arrival_time > message.arrival_time)):
                return False  # 3.1.1.2/R11
            previous = message
            if state is deleted:
                continue
            if message.message_position_reference is not position \
                    or len(message.label) > LABEL_MAX:
                return False  # 3.1.1.12/R1, R43
            if id(position) not in enqueuing:
                present += storage_size(message)
        if queue.total_bytes != present:
            return False  # 3.1.1.2 TotalBytes
        for desc in queue.open_queue_descriptor_collection:
            if desc.multiple or desc.open_queue_descriptor_collection \
                    or type(desc.access_type) is not QueueAccessType:
                return False  # 3.1.1.16/R4-R8 (and the descriptors a Multiple one owns)
            if desc.handle in handles or desc.context_value in contexts:
                return False  # 3.1.1.16/R2, R3
            handles.add(desc.handle)
            contexts.add(desc.context_value)
            for cursor in desc.cursor_collection:
                if cursor.handle in cursors:
                    return False  # 3.2.1.2/R2
                cursors.add(cursor.handle)
    return True


# ---------------------------------------------------------------------------------------------
# MS-MQDMPR 3.1.1.1 QueueManager, 3.1.1.7 Site
# ---------------------------------------------------------------------------------------------


def _queue_manager(qm: QueueManager) -> list[str]:
    out = []
    if not qm.directory_server and qm.directory_server_type is not None:
        out.append("MS-MQDMPR/3.1.1.1/R6: DirectoryServerType is set "
                   f"({qm.directory_server_type.name}) but DirectoryServer is False")
    if not qm.directory_integrated and qm.directory_offline:
        out.append("MS-MQDMPR/3.1.1.1/R9: DirectoryOffline is True but DirectoryIntegrated is "
                   "False")
    for site in qm.site_collection:
        if site.identifier not in qm.site_identifier_list:
            out.append(f"MS-MQDMPR/3.1.1.1/R11: Site {site.identifier} of SiteCollection is not "
                       "in SiteIdentifierList")
    networks = {n.identifier for n in qm.connected_network_collection}
    for identifier in qm.connected_network_identifier_list:
        if identifier not in networks:
            out.append(f"MS-MQDMPR/3.1.1.1/R12: ConnectedNetworkIdentifierList has {identifier} "
                       "but ConnectedNetworkCollection has no ConnectedNetwork with it")
    for server in qm.out_routing_server_collection:
        if server.identifier not in qm.out_routing_server_identifier_list:
            out.append(f"MS-MQDMPR/3.1.1.1/R13: QueueManager {server.identifier} of "
                       "OutRoutingServerCollection is not in OutRoutingServerIdentifierList")
    for server in qm.in_routing_server_collection:
        if server.identifier not in qm.in_routing_server_identifier_list:
            out.append(f"MS-MQDMPR/3.1.1.1/R14: QueueManager {server.identifier} of "
                       "InRoutingServerCollection is not in InRoutingServerIdentifierList")
    names = [site.name for site in qm.site_collection]
    for name in sorted({n for n in names if names.count(n) > 1}):
        out.append(f"MS-MQDMPR/3.1.1.7/R1: more than one Site is named {name!r}")
    return out


# ---------------------------------------------------------------------------------------------
# MS-MQDMPR 3.1.1.2 Queue, 3.1.1.11 MessagePosition, 3.1.1.12 Message
# ---------------------------------------------------------------------------------------------


def _message_position_list(queue: Queue) -> list[str]:
    out = []
    previous: Message | None = None
    for position in queue.message_position_list:
        if position.queue_reference is not queue:
            out.append(f"MS-MQDMPR/3.1.1.11/R1: a MessagePosition in the MessagePositionList of "
                       f"{_name(queue)} has another QueueReference")
        message = position.message_reference
        if message is None:
            continue
        if previous is not None and (
                previous.priority < message.priority
                or (previous.priority == message.priority
                    and previous.arrival_time > message.arrival_time)):
            out.append(f"MS-MQDMPR/3.1.1.2/R11: in {_name(queue)}, message "
                       f"{message.lookup_identifier:#x} (priority {message.priority}, arrival "
                       f"{message.arrival_time}) follows message {previous.lookup_identifier:#x}"
                       f" (priority {previous.priority}, arrival {previous.arrival_time})")
        previous = message
    return out


def _total_bytes(queue: Queue, enqueuing: set[int]) -> list[str]:
    """Queue.TotalBytes (MS-MQDMPR 3.1.1.2): "the storage space, in bytes, consumed by all the
    messages in a queue": the messages of its list that are not Deleted, but for those a
    transaction enqueued and has not committed (3.1.7.1.9 counts them at the commit)."""
    present = sum(storage_size(p.message_reference) for p in queue.message_position_list
                  if p.state is not MessagePositionState.Deleted and id(p) not in enqueuing
                  and p.message_reference is not None)
    if queue.total_bytes != present:
        return [f"MS-MQDMPR 3.1.1.2 TotalBytes: {_name(queue)} counts {queue.total_bytes} bytes "
                f"but its messages take {present} (errata total-bytes)"]
    return []


def _positions(queues: list[Queue], positions: list[MessagePosition]) -> list[str]:
    members = {id(q): {id(p) for p in q.message_position_list} for q in queues}
    out = []
    for position in positions:
        if not isinstance(position.state, MessagePositionState):
            out.append(f"MS-MQDMPR/3.1.1.11/R2: a MessagePosition has State {position.state!r},"
                       " not one MessagePositionState")
            continue
        if position.state is MessagePositionState.Deleted:
            continue
        queue = position.queue_reference
        if queue is None or id(position) not in members.get(id(queue), set()):
            out.append(f"MS-MQDMPR/3.1.1.11/R1: a {position.state.name} MessagePosition is not "
                       f"in the MessagePositionList of its queue ({_name(queue)})")
        message = position.message_reference
        if message is None:
            out.append(f"MS-MQDMPR/3.1.1.11/R1: a {position.state.name} MessagePosition in "
                       f"{_name(queue)} references no Message")
            continue
        if message.message_position_reference is not position:
            out.append(f"MS-MQDMPR/3.1.1.12/R1: message {message.lookup_identifier:#x} in "
                       f"{_name(queue)}: its MessagePositionReference is not the "
                       "MessagePosition that references it")
        if len(message.label) > LABEL_MAX:
            out.append(f"MS-MQDMPR/3.1.1.12/R43: message {message.lookup_identifier:#x} has a "
                       f"Label of {len(message.label)} characters (at most {LABEL_MAX})")
    return out


# ---------------------------------------------------------------------------------------------
# MS-MQDMPR 3.1.1.16 OpenQueueDescriptor, 3.2.1.2 Cursor
# ---------------------------------------------------------------------------------------------


def check_open_queue_descriptor(desc: OpenQueueDescriptor) -> list[str]:
    """The rules of one OpenQueueDescriptor (MS-MQDMPR 3.1.1.16)."""
    out = []
    if not isinstance(desc.access_type, QueueAccessType):
        out.append(f"MS-MQDMPR/3.1.1.16/R4: descriptor {desc.handle} has AccessType "
                   f"{desc.access_type!r}, not a QueueAccessType value")
    if not desc.multiple:
        if desc.open_queue_descriptor_collection:
            out.append(f"MS-MQDMPR/3.1.1.16/R5: descriptor {desc.handle} is not Multiple but "
                       "its OpenQueueDescriptorCollection is not empty")
        return out
    if desc.access_type is not QueueAccessType.SendAccess:
        out.append(f"MS-MQDMPR/3.1.1.16/R6: Multiple descriptor {desc.handle} has AccessType "
                   f"{desc.access_type!r}, not SendAccess")
    if desc.remote_read_state is not OpenQueueDescriptorRemoteReadState.None_:
        out.append(f"MS-MQDMPR/3.1.1.16/R7: Multiple descriptor {desc.handle} has "
                   f"RemoteReadState {desc.remote_read_state!r}, not None")
    if desc.queue_reference is not None:
        out.append(f"MS-MQDMPR/3.1.1.16/R8: Multiple descriptor {desc.handle} has a "
                   "QueueReference; it must be NULL")
    return out


def _descriptors_rules(descriptors: list[OpenQueueDescriptor]) -> list[str]:
    out = []
    for desc in descriptors:
        out += check_open_queue_descriptor(desc)
    for handle in _repeated(d.handle for d in descriptors):
        out.append(f"MS-MQDMPR/3.1.1.16/R2: more than one OpenQueueDescriptor has Handle "
                   f"{handle}")
    for value in _repeated(d.context_value for d in descriptors):
        out.append(f"MS-MQDMPR/3.1.1.16/R3: more than one OpenQueueDescriptor has ContextValue "
                   f"{value}")
    return out


def _cursors(cursors: list[Cursor]) -> list[str]:
    return [f"MS-MQDMPR/3.2.1.2/R2: more than one Cursor has Handle {handle}"
            for handle in _repeated(c.handle for c in cursors)]


# ---------------------------------------------------------------------------------------------
# MS-MQDMPR 3.1.1.13 TransactionalOperation, 3.1.1.15 User
# ---------------------------------------------------------------------------------------------


def _transactions(qm: QueueManager) -> list[str]:
    out = []
    for transaction in qm.transaction_collection:
        for op in transaction.transactional_operation_collection:
            where = f"in transaction {transaction.identifier}"
            if not isinstance(op.operation_type, TransactionalOperationType):
                out.append(f"MS-MQDMPR/3.1.1.13/R2: a TransactionalOperation {where} has "
                           f"OperationType {op.operation_type!r}")
            elif (op.operation_type is TransactionalOperationType.Move
                  and op.target_queue_reference is None):
                out.append(f"MS-MQDMPR/3.1.1.13/R3: a Move {where} has no TargetQueueReference")
            elif (op.operation_type is TransactionalOperationType.Dequeue
                  and op.dequeue_reason is None):
                out.append(f"MS-MQDMPR/3.1.1.13/R4: a Dequeue {where} has no DequeueReason")
    return out


def _users(users: Iterable[User]) -> list[str]:
    out = []
    for user in _unique(users):
        for digest in user.certificate_digest_list:
            if len(digest) != MD5_DIGEST_SIZE:
                out.append(f"MS-MQDMPR/3.1.1.15/R1: User {user.identifier} has a certificate "
                           f"digest of {len(digest)} bytes, not {MD5_DIGEST_SIZE}")
    return out


# ---------------------------------------------------------------------------------------------
# MS-MQDMPR 3.1.1.8 RoutingLink
# ---------------------------------------------------------------------------------------------


def check_routing_link(link: RoutingLink) -> list[str]:
    """The rules of one RoutingLink (MS-MQDMPR 3.1.1.8)."""
    out = []
    if link.actual_cost not in ACTUAL_COST_RANGE:
        out.append(f"MS-MQDMPR/3.1.1.8/R1: RoutingLink {link.identifier} has ActualCost "
                   f"{link.actual_cost}, outside 1 to 999,999")
    if link.site1_reference is not None and (
            link.site1_reference.identifier != link.site1_identifier):
        out.append(f"MS-MQDMPR/3.1.1.8/R2: RoutingLink {link.identifier}: Site1Reference's "
                   "Identifier does not match Site1Identifier")
    if link.site2_reference is not None and (
            link.site2_reference.identifier != link.site2_identifier):
        out.append(f"MS-MQDMPR/3.1.1.8/R3: RoutingLink {link.identifier}: Site2Reference's "
                   "Identifier does not match Site2Identifier")
    for gate in link.site_gate_collection:
        if gate.identifier not in link.site_gate_identifier_list:
            out.append(f"MS-MQDMPR/3.1.1.8/R4: RoutingLink {link.identifier}: site gate "
                       f"{gate.identifier} is not in SiteGateIdentifierList")
    return out


# ---------------------------------------------------------------------------------------------
# What a QueueManager reaches
# ---------------------------------------------------------------------------------------------


def _queues(qm: QueueManager) -> Iterator[Queue]:
    """The queues of QueueCollection, the system queues, and every queue they lead to (queue
    journals, subqueues) or a transaction moves messages to."""
    todo: list[Queue | None] = [*qm.queue_collection, qm.system_deadletter_queue,
                                qm.system_transactional_deadletter_queue,
                                qm.system_journal_queue]
    todo += [op.target_queue_reference for t in qm.transaction_collection
             for op in t.transactional_operation_collection]
    seen: set[int] = set()
    while todo:
        queue = todo.pop(0)
        if queue is None or id(queue) in seen:
            continue
        seen.add(id(queue))
        yield queue
        todo += [queue.journal_queue_reference, *queue.subqueue_collection]


def _all_positions(qm: QueueManager, queues: list[Queue]) -> Iterator[MessagePosition]:
    """The MessagePositions of the queues' lists and those referenced by transactions, dispatch
    entries and cursors (not the reserved Start and End entries)."""
    candidates: list[object] = [p for q in queues for p in q.message_position_list]
    candidates += [op.message_position_reference for t in qm.transaction_collection
                   for op in t.transactional_operation_collection]
    candidates += [e.message_position_reference for e in qm.dispatch_collection]
    candidates += [c.message_position_reference for d in _descriptors(queues)
                   for c in d.cursor_collection]
    yield from _unique(p for p in candidates if isinstance(p, MessagePosition))


def _descriptors(queues: list[Queue]) -> Iterator[OpenQueueDescriptor]:
    """The queues' open descriptors, and the descriptors they own."""
    todo = [d for q in queues for d in q.open_queue_descriptor_collection]
    seen: set[int] = set()
    while todo:
        desc = todo.pop(0)
        if id(desc) in seen:
            continue
        seen.add(id(desc))
        yield desc
        todo += desc.open_queue_descriptor_collection


def _unique(items: Iterable) -> Iterator:
    seen: set[int] = set()
    for item in items:
        if id(item) not in seen:
            seen.add(id(item))
            yield item


def _repeated(values: Iterable) -> list:
    seen, repeated = set(), []
    for value in values:
        if value in seen and value not in repeated:
            repeated.append(value)
        seen.add(value)
    return repeated


def _name(queue: Queue | None) -> str:
    if queue is None:
        return "no queue"
    return repr(queue.pathname) if queue.pathname else f"queue {queue.identifier}"
