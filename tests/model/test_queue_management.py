"""MS-MQDMPR 3.1.7.1.1-3.1.7.1.8, 3.1.7.1.17, 3.1.7.1.26, 3.1.7.1.33 and 3.1.7.3.8: queue
management events, run on a LocalQueueManager with and without a directory."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import pytest

from mqconform.model.adm import (
    GUID_NULL,
    CursorState,
    DirectoryOperationResult,
    Message,
    MessageClass,
    MessagePositionState,
    OutgoingQueue,
    OutgoingQueueState,
    Queue,
    QueueAccessType,
    QueueManager,
    QueuePrivacyLevel,
    QueueScope,
    QueueShareMode,
    QueueType,
)
from mqconform.model.formats import FormatNameKind, parse_format_name
from mqconform.model.message_ops import dequeue_message, enqueue_message
from mqconform.model.queue_management import (
    ANONYMOUS_SID,
    MQSEC_GET_QUEUE_PERMISSIONS,
    MQSEC_GET_QUEUE_PROPERTIES,
    MQSEC_QUEUE_GENERIC_ALL,
    MQSEC_WRITE_MESSAGE,
    WORLD_SID,
    GetQueuePathResult,
    SecurityDescriptor,
    access_allowed_aces,
    cancel_waiting_message_read_request,
    close_cursor,
    close_queue,
    create_default_queue_security_descriptor,
    create_queue,
    create_transaction,
    delete_queue,
    expand_format_name,
    find_queue,
    get_queue_path,
    open_cursor,
    open_queue,
    parse_security_descriptor,
    purge_queue,
    set_queue_defaults,
    sid,
)
from mqconform.model.runtime import INFINITE, Completion, Pending
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

Receive, Send, Peek = (QueueAccessType.ReceiveAccess, QueueAccessType.SendAccess,
                       QueueAccessType.PeekAccess)
DenyNone, DenyReceive = QueueShareMode.DenyNone, QueueShareMode.DenyReceive
Success = DirectoryOperationResult.Success
NotConnected = DirectoryOperationResult.DirectoryNotConnected
QM_GUID = uuid.UUID("11111111-2222-4333-8444-555555555555")
REMOTE_GUID = uuid.UUID("99999999-2222-4333-8444-555555555555")
DOMAIN_USER = sid(5, 21, 1, 2, 3, 1104)
DOMAIN_GUEST = sid(5, 21, 1, 2, 3, 501)


class FakeDirectory:
    """A directory holding queues, queue managers and distribution lists."""

    def __init__(self):
        self.queues: dict[uuid.UUID, Queue] = {}
        self.queue_managers: dict[uuid.UUID, QueueManager] = {}
        self.lists: dict[uuid.UUID, list] = {}
        self.sids: dict[str, bytes] = {}
        self.created, self.deleted, self.reads = [], [], []
        self.next_guid = uuid.UUID("aaaaaaaa-0000-4000-8000-000000000001")

    def read_directory(self, directory_object_type, filter, attribute_list=None):
        self.reads.append((directory_object_type, filter, attribute_list))
        [(attribute, operator, value)] = filter
        assert (attribute, operator) == ("Identifier", "EQUALS")
        table = self.queues if directory_object_type == "Queue" else self.queue_managers
        found = table.get(value)
        if found is None:
            return SimpleNamespace(status=DirectoryOperationResult.ObjectNotFound)
        return SimpleNamespace(status=Success, directory_object=found)

    def create_directory_object(self, directory_object):
        self.created.append(directory_object)
        directory_object.full_path = "CN=q,CN=msmq,CN=MQREF,CN=Computers,DC=example"
        directory_object.directory_path = "example.com/Computers/MQREF/msmq/q"
        self.queues[self.next_guid] = directory_object
        return SimpleNamespace(status=Success, object_guid=self.next_guid)

    def delete_directory_object(self, directory_object):
        self.deleted.append(directory_object)
        return Success

    def resolve_distribution_list(self, dl_format_name):
        members = self.lists.get(dl_format_name.guid)
        if members is None:
            return SimpleNamespace(status=DirectoryOperationResult.ObjectNotFound)
        return SimpleNamespace(status=Success, format_name_collection=members)

    def get_object_properties_using_ldap(self, path, attributes):
        computer = path.split(",")[0].removeprefix("CN=")
        if computer not in self.sids:
            return SimpleNamespace(status=DirectoryOperationResult.ObjectNotFound)
        return SimpleNamespace(status=Success, values={"objectSid": self.sids[computer]})


@pytest.fixture
def qm_world(world):
    world.qm.identifier = QM_GUID
    world.qm.qualified_computer_name = "mqref.example.com"
    return world


def _new_queue(world, pathname, skip=False, **attributes):
    template = Queue()
    set_queue_defaults(world.env, template)
    template.pathname = pathname
    for name, value in attributes.items():
        setattr(template, name, value)
    return create_queue(world.env, template, skip_directory=skip)


def _private(world, name="orders", **attributes):
    result = _new_queue(world, f"MQREF\\private$\\{name}", **attributes)
    assert result.status == MQ_OK
    return result.queue


def _aces(security: bytes):
    return access_allowed_aces(parse_security_descriptor(security).dacl)


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.1 Open Cursor, 3.1.7.1.2 Close Cursor
# ---------------------------------------------------------------------------------------------

@pytest.mark.req("MS-MQDMPR/3.1.7.1.1/R6", "MS-MQDMPR/3.1.7.1.1/R7", "MS-MQDMPR/3.1.7.1.1/R8",
                 "MS-MQDMPR/3.1.7.1.1/R10")
def test_open_cursor_adds_an_initialized_cursor_to_the_descriptor(world):
    q = world.queue()
    desc = world.open(q)
    cursor = open_cursor(world.env, desc)
    assert desc.cursor_collection == [cursor]
    assert cursor.open_queue_descriptor_reference is desc
    assert cursor.message_position_reference is q.message_position_list.start
    assert cursor.cursor_state is CursorState.Unread and cursor.handle != 0


@pytest.mark.req("MS-MQDMPR/3.1.7.1.1/R3", "MS-MQDMPR/3.1.7.1.1/R4", "MS-MQDMPR/3.1.7.1.1/R5")
def test_open_cursor_on_a_descriptor_without_queue_gives_no_cursor(world):
    desc = world.open(world.queue())
    desc.queue_reference = None
    assert open_cursor(world.env, desc) is None
    assert desc.cursor_collection == []


@pytest.mark.req("MS-MQDMPR/3.1.7.1.2/R3", "MS-MQDMPR/3.1.7.1.2/R4", "MS-MQDMPR/3.1.7.1.2/R5",
                 "MS-MQDMPR/3.1.7.1.2/R6")
def test_close_cursor_removes_the_cursor_and_its_waiting_readers_only(world):
    q = world.queue()
    desc = world.open(q)
    mine, other = open_cursor(world.env, desc), open_cursor(world.env, desc)
    world.env.call(dequeue_message(world.env, desc, timeout=INFINITE, cursor=mine))
    world.env.call(dequeue_message(world.env, desc, timeout=INFINITE, cursor=other))
    close_cursor(mine)
    assert desc.cursor_collection == [other]
    assert [r.cursor_reference for r in desc.waiting_message_read_operation_collection] == [
        other]


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.33 Set Queue Defaults, 3.1.7.1.3.1 Create Default Queue Security Descriptor
# ---------------------------------------------------------------------------------------------

@pytest.mark.req("MS-MQDMPR/3.1.7.1.33/R3")
def test_set_queue_defaults_sets_the_table_values(world):
    q = Queue(label="x", journaling=True, quota=5, journal_quota=6, authentication=True,
              privacy_level=QueuePrivacyLevel.Body, transactional=True,
              multicast_address="234.1.1.1:8001", base_priority=7, type=uuid.uuid4())
    set_queue_defaults(world.env, q)
    assert (q.label, q.type, q.journaling, q.quota, q.journal_quota, q.authentication,
            q.privacy_level, q.transactional, q.multicast_address, q.base_priority) == (
        "", GUID_NULL, False, 0xFFFFFFFF, 0xFFFFFFFF, False, QueuePrivacyLevel.Optional, False,
        None, 0)
    assert parse_security_descriptor(q.security) is not None


@pytest.mark.req("MS-MQDMPR/3.1.7.1.3.1/R8", "MS-MQDMPR/3.1.7.1.3.1/R9",
                 "MS-MQDMPR/3.1.7.1.3.1/R10", "MS-MQDMPR/3.1.7.1.3.1/R14",
                 "MS-MQDMPR/3.1.7.1.3.1/R18")
def test_default_security_for_a_non_domain_user_gives_everyone_full_control(world):
    sd = create_default_queue_security_descriptor(world.env, Queue(), user_sid=DOMAIN_USER)
    assert sd[2:4] == (0x8004).to_bytes(2, "little")  # self-relative, DACL present
    parsed = parse_security_descriptor(sd)
    assert parsed.owner == ANONYMOUS_SID
    assert _aces(sd) == [(MQSEC_QUEUE_GENERIC_ALL, WORLD_SID)]


@pytest.mark.req("MS-MQDMPR/3.1.7.1.3.1/R11", "MS-MQDMPR/3.1.7.1.3.1/R17")
def test_default_security_for_a_domain_user_gives_the_owner_full_control(world):
    sd = create_default_queue_security_descriptor(
        world.env, Queue(), user_sid=DOMAIN_USER, is_domain_user=lambda s: s == DOMAIN_USER)
    assert parse_security_descriptor(sd).owner == DOMAIN_USER
    assert _aces(sd) == [(MQSEC_GET_QUEUE_PROPERTIES | MQSEC_GET_QUEUE_PERMISSIONS, WORLD_SID),
                         (MQSEC_QUEUE_GENERIC_ALL, DOMAIN_USER)]


@pytest.mark.req("MS-MQDMPR/3.1.7.1.3.1/R10")
def test_default_security_for_a_domain_guest_gives_everyone_full_control(world):
    sd = create_default_queue_security_descriptor(
        world.env, Queue(), user_sid=DOMAIN_GUEST, is_domain_user=lambda s: True)
    assert _aces(sd) == [(MQSEC_QUEUE_GENERIC_ALL, WORLD_SID)]


@pytest.mark.req("MS-MQDMPR/3.1.7.1.3.1/R13", "MS-MQDMPR/3.1.7.1.3.1/R15")
def test_default_security_lets_anonymous_senders_write_when_srmp_is_supported(world):
    world.qm.srmp_http_support = True
    sd = create_default_queue_security_descriptor(
        world.env, Queue(), user_sid=DOMAIN_USER, is_domain_user=lambda s: True)
    assert _aces(sd) == [
        (MQSEC_GET_QUEUE_PROPERTIES | MQSEC_GET_QUEUE_PERMISSIONS | MQSEC_WRITE_MESSAGE,
         WORLD_SID),
        (MQSEC_WRITE_MESSAGE, ANONYMOUS_SID),
        (MQSEC_QUEUE_GENERIC_ALL, DOMAIN_USER)]


@pytest.mark.req("MS-MQDMPR/3.1.7.1.3.1/R1", "MS-MQDMPR/3.1.7.1.3.1/R3",
                 "MS-MQDMPR/3.1.7.1.3.1/R12", "MS-MQDMPR/3.1.7.1.3.1/R16")
def test_default_security_grants_the_computer_account_read_access_when_directory_integrated(
        world):
    machine = sid(5, 21, 1, 2, 3, 1000)
    world.qm.directory_integrated = True
    world.env.directory = FakeDirectory()
    world.env.directory.sids["MQREF"] = machine
    sd = create_default_queue_security_descriptor(world.env, Queue(pathname="MQREF\\q"))
    assert (MQSEC_GET_QUEUE_PROPERTIES | MQSEC_GET_QUEUE_PERMISSIONS, machine) in _aces(sd)


@pytest.mark.req("MS-MQDMPR/3.1.7.1.3.1/R2")
def test_default_security_has_no_computer_ace_when_the_directory_cannot_be_read(world):
    world.qm.directory_integrated = True  # and no directory connected
    sd = create_default_queue_security_descriptor(world.env, Queue(pathname="MQREF\\q"))
    assert _aces(sd) == [(MQSEC_QUEUE_GENERIC_ALL, WORLD_SID)]


@pytest.mark.req("MS-MQDMPR/3.1.7.1.3.1/R4", "MS-MQDMPR/3.1.7.1.3.1/R5",
                 "MS-MQDMPR/3.1.7.1.3.1/R6", "MS-MQDMPR/3.1.7.1.3.1/R7")
def test_supplied_security_keeps_its_owner_dacl_and_sacl(world):
    dacl = bytes([2, 0, 8, 0, 0, 0, 0, 0])  # an empty ACL
    sacl = bytes([2, 0, 8, 0, 0, 0, 0, 0])
    supplied = SecurityDescriptor(owner=DOMAIN_USER, dacl=dacl, sacl=sacl).self_relative()
    sd = create_default_queue_security_descriptor(
        world.env, Queue(security=supplied), is_domain_user=lambda s: True)
    parsed = parse_security_descriptor(sd)
    assert (parsed.owner, parsed.dacl, parsed.sacl) == (DOMAIN_USER, dacl, sacl)


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.3 Create Queue
# ---------------------------------------------------------------------------------------------

@pytest.mark.req("MS-MQDMPR/3.1.7.1.3/R6", "MS-MQDMPR/3.1.7.1.3/R10", "MS-MQDMPR/3.1.7.1.3/R11",
                 "MS-MQDMPR/3.1.7.1.3/R24", "MS-MQDMPR/3.1.7.1.3/R25")
def test_create_queue_adds_a_private_queue_built_from_the_template(qm_world):
    world = qm_world
    world.env.now = 1_700_000_000_123
    result = _new_queue(world, "MQREF\\private$\\orders", label="Orders", quota=64,
                        transactional=True, base_priority=2)
    q = result.queue
    assert result.status == MQ_OK and world.qm.queue_collection == [q]
    assert (q.label, q.quota, q.transactional, q.base_priority) == ("Orders", 64, True, 2)
    assert q.queue_manager is world.qm and q.queue_type is QueueType.Private
    assert q.total_bytes == 0 and not q.active and len(q.message_position_list) == 0
    assert q.create_time == q.modify_time == 1_700_000_000
    assert q.qualified_pathname == "mqref.example.com\\private$\\orders"
    assert q.scope is QueueScope.Enterprise and q.full_path == q.directory_path == ""


@pytest.mark.req("MS-MQDMPR/3.1.7.1.3/R11")
def test_create_queue_gives_each_private_queue_an_unused_number(qm_world):
    a, b = _private(qm_world, "a"), _private(qm_world, "b")
    assert a.private_queue_number != b.private_queue_number


@pytest.mark.req("MS-MQDMPR/3.1.7.1.3/R11")
def test_create_queue_takes_the_queue_type_from_the_path_name(qm_world):
    system = _new_queue(qm_world, "MQREF\\system$;notify").queue
    public = _new_queue(qm_world, "MQREF\\orders", skip=True).queue
    assert system.queue_type is QueueType.System and public.queue_type is QueueType.Public
    assert system.private_queue_number is None


@pytest.mark.req("MS-MQDMPR/3.1.7.1.3/R7", "MS-MQDMPR/3.1.7.1.3/R8", "MS-MQDMPR/3.1.7.1.3/R9")
def test_create_queue_gives_a_queue_a_journal_and_a_subqueue_none(qm_world):
    queue = _private(qm_world, "orders")
    sub = _private(qm_world, "orders;retry")
    assert queue.journal_queue_reference is not None
    assert queue.journal_queue_reference.queue_type is QueueType.System
    assert sub.journal_queue_reference is None


@pytest.mark.req("MS-MQDMPR/3.1.7.1.3/R5")
@pytest.mark.parametrize("pathname", ["", "orders", "MQREF\\", "MQREF\\private$\\",
                                      "MQREF\\a b", "MQREF\\q;", "MQREF\\" + "q" * 125])
def test_create_queue_refuses_a_path_name_that_is_not_one(qm_world, pathname):
    result = _new_queue(qm_world, pathname)
    assert result.status == MQ_ERROR_ILLEGAL_QUEUE_PATHNAME and result.queue is None
    assert qm_world.qm.queue_collection == []


def test_a_created_queue_carries_messages(qm_world):
    queue = _private(qm_world)
    desc = open_queue(qm_world.env, f"PRIVATE={QM_GUID}\\{queue.private_queue_number:x}",
                      Receive, DenyNone).open_queue_descriptor
    assert enqueue_message(qm_world.env, queue, Message(body=b"hi")) == 0
    result = qm_world.env.call(dequeue_message(qm_world.env, desc, timeout=0))
    assert result.status == MQ_OK and result.message.body == b"hi"


@pytest.mark.req("MS-MQDMPR/3.1.7.1.3/R12", "MS-MQDMPR/3.1.7.1.3/R22", "MS-MQDMPR/3.1.7.1.3/R23")
def test_create_public_queue_without_a_directory_fails_with_the_directory_status(qm_world):
    result = _new_queue(qm_world, "MQREF\\orders")
    assert result.status is NotConnected and result.queue is None
    assert qm_world.qm.queue_collection == []


@pytest.mark.req("MS-MQDMPR/3.1.7.1.3/R13", "MS-MQDMPR/3.1.7.1.3/R14", "MS-MQDMPR/3.1.7.1.3/R15",
                 "MS-MQDMPR/3.1.7.1.3/R16", "MS-MQDMPR/3.1.7.1.3/R17", "MS-MQDMPR/3.1.7.1.3/R18",
                 "MS-MQDMPR/3.1.7.1.3/R19", "MS-MQDMPR/3.1.7.1.3/R20", "MS-MQDMPR/3.1.7.1.3/R21")
def test_create_public_queue_publishes_it_and_reads_back_its_paths(qm_world):
    directory = qm_world.env.directory = FakeDirectory()
    q = _new_queue(qm_world, "MQREF\\orders").queue
    assert directory.created == [q] and q.identifier == directory.next_guid
    assert directory.reads == [("Queue", [("Identifier", "EQUALS", q.identifier)],
                                ["FullPath", "DirectoryPath"])]
    assert q.full_path.startswith("CN=q") and q.directory_path.endswith("msmq/q")


@pytest.mark.req("MS-MQDMPR/3.1.7.1.3/R3")
def test_create_public_queue_with_skip_directory_leaves_the_directory_alone(qm_world):
    directory = qm_world.env.directory = FakeDirectory()
    result = _new_queue(qm_world, "MQREF\\orders", skip=True)
    assert result.status == MQ_OK and directory.created == []


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.4 Delete Queue, 3.1.7.1.7 Purge Queue, 3.1.7.1.8 Create Transaction
# ---------------------------------------------------------------------------------------------

@pytest.mark.req("MS-MQDMPR/3.1.7.1.4/R4", "MS-MQDMPR/3.1.7.1.4/R5", "MS-MQDMPR/3.1.7.1.4/R8",
                 "MS-MQDMPR/3.1.7.1.4/R9", "MS-MQDMPR/3.1.7.1.4/R10",
                 "MS-MQDMPR/3.1.7.1.4/R11", "MS-MQDMPR/3.1.7.1.4/R17")
def test_delete_queue_deletes_its_messages_and_detaches_its_descriptors(world):
    q = world.queue()
    desc = world.open(q)
    positions = [world.send(q).message_position_reference for _ in range(2)]
    assert delete_queue(world.env, q) == MQ_OK
    assert all(p.state is MessagePositionState.Deleted for p in positions)
    assert all(p._deleted_reason is MessageClass.NackQueueDeleted for p in positions)
    assert desc.queue_reference is None and q not in world.qm.queue_collection


@pytest.mark.req("MS-MQDMPR/3.1.7.1.4/R12", "MS-MQDMPR/3.1.7.1.4/R13", "MS-MQDMPR/3.1.7.1.4/R14",
                 "MS-MQDMPR/3.1.7.1.4/R15", "MS-MQDMPR/3.1.7.1.4/R16")
def test_delete_public_queue_reports_a_directory_failure(world):
    q = world.queue("MQREF\\orders", queue_type=QueueType.Public)
    assert delete_queue(world.env, q) is NotConnected
    directory = world.env.directory = FakeDirectory()
    q2 = world.queue("MQREF\\more", queue_type=QueueType.Public)
    assert delete_queue(world.env, q2) == MQ_OK and directory.deleted == [q2]


@pytest.mark.req("MS-MQDMPR/3.1.7.1.4/R2")
def test_delete_public_queue_with_skip_directory_succeeds_without_a_directory(world):
    q = world.queue("MQREF\\orders", queue_type=QueueType.Public)
    assert delete_queue(world.env, q, skip_directory=True) == MQ_OK


@pytest.mark.req("MS-MQDMPR/3.1.7.1.7/R3", "MS-MQDMPR/3.1.7.1.7/R4", "MS-MQDMPR/3.1.7.1.7/R5",
                 "MS-MQDMPR/3.1.7.1.7/R6", "MS-MQDMPR/3.1.7.1.7/R7", "MS-MQDMPR/3.1.7.1.7/R10")
def test_purge_deletes_available_messages_and_marks_locked_ones_purge_pending(world):
    q = world.queue()
    available, locked = world.send(q), world.send(q)
    locked.message_position_reference.state = MessagePositionState.Locked
    purge_queue(world.env, q)
    assert available.message_position_reference.state is MessagePositionState.Deleted
    assert available.message_position_reference._deleted_reason is MessageClass.NackQueuePurged
    assert locked.message_position_reference.state is MessagePositionState.PurgePending
    assert [p.message_reference for p in q.message_position_list] == [locked]


@pytest.mark.req("MS-MQDMPR/3.1.7.1.8/R3", "MS-MQDMPR/3.1.7.1.8/R4", "MS-MQDMPR/3.1.7.1.8/R5")
def test_create_transaction_adds_it_to_the_queue_manager(world):
    xid = uuid.UUID("12345678-0000-4000-8000-000000000000")
    transaction = create_transaction(world.env, xid)
    assert transaction.identifier == xid and world.qm.transaction_collection == [transaction]


# ---------------------------------------------------------------------------------------------
# 3.1.7.3.8 Expand Format Name
# ---------------------------------------------------------------------------------------------

DL = "DL=0badc0de-0000-4000-8000-00000000beef"


@pytest.mark.req("MS-MQDMPR/3.1.7.3.8/R4", "MS-MQDMPR/3.1.7.3.8/R5", "MS-MQDMPR/3.1.7.3.8/R6")
def test_expand_returns_a_single_name_as_it_is(world):
    result = expand_format_name(world.env, "DIRECT=OS:mqref\\private$\\q")
    assert result.status and result.output_format_name == parse_format_name(
        "DIRECT=OS:MQREF\\PRIVATE$\\Q")


def test_expand_refuses_a_string_that_is_not_a_format_name(world):
    assert not expand_format_name(world.env, "QUEUE=nothing").status


@pytest.mark.req("MS-MQDMPR/3.1.7.3.8/R8", "MS-MQDMPR/3.1.7.3.8/R10", "MS-MQDMPR/3.1.7.3.8/R11",
                 "MS-MQDMPR/3.1.7.3.8/R12", "MS-MQDMPR/3.1.7.3.8/R14",
                 "MS-MQDMPR/3.1.7.3.8/R20", "MS-MQDMPR/3.1.7.3.8/R21")
def test_expand_resolves_a_distribution_list_into_its_members(world):
    directory = world.env.directory = FakeDirectory()
    directory.lists[parse_format_name(DL).guid] = ["DIRECT=OS:b\\q", "DIRECT=OS:a\\q"]
    result = expand_format_name(world.env, DL)
    assert result.status
    assert str(result.output_format_name) == "DIRECT=OS:a\\q,DIRECT=OS:b\\q"


@pytest.mark.req("MS-MQDMPR/3.1.7.3.8/R13")
def test_expand_fails_when_a_list_cannot_be_resolved(world):
    assert not expand_format_name(world.env, DL).status  # no directory
    world.env.directory = FakeDirectory()
    assert not expand_format_name(world.env, "DIRECT=OS:a\\q," + DL).status  # unknown list


@pytest.mark.req("MS-MQDMPR/3.1.7.3.8/R2", "MS-MQDMPR/3.1.7.3.8/R15", "MS-MQDMPR/3.1.7.3.8/R16",
                 "MS-MQDMPR/3.1.7.3.8/R17", "MS-MQDMPR/3.1.7.3.8/R18")
def test_expand_sorts_and_drops_names_equal_without_case(world):
    result = expand_format_name(world.env, "DIRECT=OS:b\\q,DIRECT=OS:A\\Q,DIRECT=OS:a\\q")
    assert str(result.output_format_name).casefold() == "direct=os:a\\q,direct=os:b\\q"
    single = expand_format_name(world.env, "DIRECT=OS:a\\q,DIRECT=OS:A\\Q")
    assert single.status and single.output_format_name.kind is FormatNameKind.DIRECT


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.5 Open Queue: local queues
# ---------------------------------------------------------------------------------------------

@pytest.mark.req("MS-MQDMPR/3.1.7.1.5/R3", "MS-MQDMPR/3.1.7.1.5/R6", "MS-MQDMPR/3.1.7.1.5/R48",
                 "MS-MQDMPR/3.1.7.1.5/R116", "MS-MQDMPR/3.1.7.1.5/R117",
                 "MS-MQDMPR/3.1.7.1.5/R118", "MS-MQDMPR/3.1.7.1.5/R119",
                 "MS-MQDMPR/3.1.7.1.5/R120", "MS-MQDMPR/3.1.7.1.5/R121",
                 "MS-MQDMPR/3.1.7.1.5/R122", "MS-MQDMPR/3.1.7.1.5/R123",
                 "MS-MQDMPR/3.1.7.1.5/R124", "MS-MQDMPR/3.1.7.1.5/R125")
def test_open_queue_by_private_format_name_opens_the_local_queue(qm_world):
    q = _private(qm_world)
    name = f"PRIVATE={QM_GUID}\\{q.private_queue_number:08x}"
    result = open_queue(qm_world.env, name, Receive, DenyNone)
    desc = result.open_queue_descriptor
    assert result.status == MQ_OK and q.open_queue_descriptor_collection == [desc]
    assert (desc.access_type, desc.share_mode, desc.queue_reference, desc.multiple) == (
        Receive, DenyNone, q, False)
    assert desc.format_name == name and desc.handle != desc.context_value


def test_open_queue_by_direct_and_public_names(qm_world):
    q = _private(qm_world)
    public = qm_world.queue("MQREF\\orders", queue_type=QueueType.Public,
                            identifier=uuid.UUID(int=7))
    for name in ("DIRECT=OS:mqref\\PRIVATE$\\Orders",
                 "DIRECT=OS:mqref.example.com\\private$\\orders"):
        assert open_queue(qm_world.env, name, Peek, DenyNone).open_queue_descriptor.\
            queue_reference is q
    desc = open_queue(qm_world.env, f"PUBLIC={uuid.UUID(int=7)}", Peek, DenyNone)
    assert desc.open_queue_descriptor.queue_reference is public


def test_find_queue_follows_journal_subqueue_and_machine_names(qm_world):
    q = _private(qm_world)
    sub = Queue(pathname="MQREF\\private$\\orders;retry")
    q.subqueue_collection.append(sub)
    dead = qm_world.qm.system_deadletter_queue = Queue(queue_type=QueueType.System)
    env = qm_world.env
    assert find_queue(env, "DIRECT=OS:mqref\\private$\\orders;JOURNAL") is \
        q.journal_queue_reference
    assert find_queue(env, "DIRECT=OS:mqref\\private$\\orders;RETRY") is sub
    assert find_queue(env, f"MACHINE={QM_GUID};DEADLETTER") is dead
    assert find_queue(env, "DIRECT=OS:mqref\\SYSTEM$;DEADLETTER") is dead
    assert find_queue(env, "DIRECT=OS:elsewhere\\private$\\orders") is None
    assert find_queue(env, f"PRIVATE={REMOTE_GUID}\\{q.private_queue_number:x}") is None


@pytest.mark.req("MS-MQDMPR/3.1.7.1.5/R5")
def test_open_queue_with_a_malformed_name_fails(world):
    result = open_queue(world.env, "PRIVATE=not-a-guid\\1", Receive, DenyNone)
    assert result.status == MQ_ERROR_ILLEGAL_FORMATNAME and result.open_queue_descriptor is None


@pytest.mark.req("MS-MQDMPR/3.1.7.1.5/R49", "MS-MQDMPR/3.1.7.1.5/R50", "MS-MQDMPR/3.1.7.1.5/R51",
                 "MS-MQDMPR/3.1.7.1.5/R52")
def test_open_queue_to_receive_from_a_missing_queue_is_not_found(qm_world):
    result = open_queue(qm_world.env, "DIRECT=OS:mqref\\private$\\nothing", Receive, DenyNone)
    assert result.status == MQ_ERROR_QUEUE_NOT_FOUND


@pytest.mark.req("MS-MQDMPR/3.1.7.1.5/R53", "MS-MQDMPR/3.1.7.1.5/R54", "MS-MQDMPR/3.1.7.1.5/R55",
                 "MS-MQDMPR/3.1.7.1.5/R56", "MS-MQDMPR/3.1.7.1.5/R57", "MS-MQDMPR/3.1.7.1.5/R58",
                 "MS-MQDMPR/3.1.7.1.5/R59", "MS-MQDMPR/3.1.7.1.5/R60", "MS-MQDMPR/3.1.7.1.5/R61",
                 "MS-MQDMPR/3.1.7.1.5/R62")
@pytest.mark.parametrize("name", ["DIRECT=OS:MQREF\\private$\\nothing",
                                  "DIRECT=HTTP://mqref/msmq/private$/nothing"])
def test_open_queue_to_send_to_a_missing_local_direct_queue_is_not_found(qm_world, name):
    assert open_queue(qm_world.env, name, Send, DenyNone).status == MQ_ERROR_QUEUE_NOT_FOUND


@pytest.mark.req("MS-MQDMPR/3.1.7.1.5/R75", "MS-MQDMPR/3.1.7.1.5/R76", "MS-MQDMPR/3.1.7.1.5/R77",
                 "MS-MQDMPR/3.1.7.1.5/R78")
def test_open_queue_to_send_to_a_missing_local_private_queue_is_not_found(qm_world):
    result = open_queue(qm_world.env, f"PRIVATE={QM_GUID}\\00000042", Send, DenyNone)
    assert result.status == MQ_ERROR_QUEUE_NOT_FOUND


@pytest.mark.req("MS-MQDMPR/3.1.7.1.5/R36", "MS-MQDMPR/3.1.7.1.5/R37", "MS-MQDMPR/3.1.7.1.5/R38",
                 "MS-MQDMPR/3.1.7.1.5/R39", "MS-MQDMPR/3.1.7.1.5/R40", "MS-MQDMPR/3.1.7.1.5/R41",
                 "MS-MQDMPR/3.1.7.1.5/R42", "MS-MQDMPR/3.1.7.1.5/R43", "MS-MQDMPR/3.1.7.1.5/R44",
                 "MS-MQDMPR/3.1.7.1.5/R45", "MS-MQDMPR/3.1.7.1.5/R46", "MS-MQDMPR/3.1.7.1.5/R47")
@pytest.mark.parametrize("name, access", [
    ("DIRECT=HTTPS://mqref/msmq/private$/q", Receive),
    (f"MACHINE={QM_GUID};JOURNAL", Send),
    ("MULTICAST=234.1.1.1:8001", Peek)])
def test_open_queue_refuses_operations_a_kind_of_name_does_not_support(qm_world, name, access):
    result = open_queue(qm_world.env, name, access, DenyNone)
    assert result.status == MQ_ERROR_UNSUPPORTED_FORMATNAME_OPERATION


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.5 Open Queue: sharing
# ---------------------------------------------------------------------------------------------

@pytest.mark.req("MS-MQDMPR/3.1.7.1.5/R101", "MS-MQDMPR/3.1.7.1.5/R102",
                 "MS-MQDMPR/3.1.7.1.5/R103", "MS-MQDMPR/3.1.7.1.5/R104",
                 "MS-MQDMPR/3.1.7.1.5/R105", "MS-MQDMPR/3.1.7.1.5/R106",
                 "MS-MQDMPR/3.1.7.1.5/R107")
def test_an_exclusive_receiver_shuts_out_other_receivers_but_not_peekers(qm_world):
    q = _private(qm_world)
    name = "DIRECT=OS:mqref\\private$\\orders"
    assert open_queue(qm_world.env, name, Receive, DenyReceive).status == MQ_OK
    assert open_queue(qm_world.env, name, Peek, DenyReceive).status == \
        MQ_ERROR_SHARING_VIOLATION
    assert open_queue(qm_world.env, name, Receive, DenyNone).status == \
        MQ_ERROR_SHARING_VIOLATION
    assert open_queue(qm_world.env, name, Peek, DenyNone).status == MQ_OK
    assert len(q.open_queue_descriptor_collection) == 2


@pytest.mark.req("MS-MQDMPR/3.1.7.1.5/R108", "MS-MQDMPR/3.1.7.1.5/R109",
                 "MS-MQDMPR/3.1.7.1.5/R110", "MS-MQDMPR/3.1.7.1.5/R111")
def test_an_exclusive_peeker_shuts_out_receivers(qm_world):
    _private(qm_world)
    name = "DIRECT=OS:mqref\\private$\\orders"
    assert open_queue(qm_world.env, name, Peek, DenyReceive).status == MQ_OK
    assert open_queue(qm_world.env, name, Receive, DenyNone).status == \
        MQ_ERROR_SHARING_VIOLATION
    assert open_queue(qm_world.env, name, Peek, DenyNone).status == MQ_OK


@pytest.mark.req("MS-MQDMPR/3.1.7.1.5/R112", "MS-MQDMPR/3.1.7.1.5/R113",
                 "MS-MQDMPR/3.1.7.1.5/R114", "MS-MQDMPR/3.1.7.1.5/R115")
def test_a_shared_receiver_prevents_an_exclusive_open(qm_world):
    _private(qm_world)
    name = "DIRECT=OS:mqref\\private$\\orders"
    assert open_queue(qm_world.env, name, Receive, DenyNone).status == MQ_OK
    assert open_queue(qm_world.env, name, Receive, DenyReceive).status == \
        MQ_ERROR_SHARING_VIOLATION
    assert open_queue(qm_world.env, name, Receive, DenyNone).status == MQ_OK


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.5 Open Queue: multiple-element names and outgoing queues
# ---------------------------------------------------------------------------------------------

@pytest.mark.req("MS-MQDMPR/3.1.7.1.5/R7", "MS-MQDMPR/3.1.7.1.5/R14", "MS-MQDMPR/3.1.7.1.5/R15",
                 "MS-MQDMPR/3.1.7.1.5/R16", "MS-MQDMPR/3.1.7.1.5/R17",
                 "MS-MQDMPR/3.1.7.1.5/R18", "MS-MQDMPR/3.1.7.1.5/R19",
                 "MS-MQDMPR/3.1.7.1.5/R20", "MS-MQDMPR/3.1.7.1.5/R21",
                 "MS-MQDMPR/3.1.7.1.5/R22", "MS-MQDMPR/3.1.7.1.5/R23",
                 "MS-MQDMPR/3.1.7.1.5/R24", "MS-MQDMPR/3.1.7.1.5/R25",
                 "MS-MQDMPR/3.1.7.1.5/R26", "MS-MQDMPR/3.1.7.1.5/R27",
                 "MS-MQDMPR/3.1.7.1.5/R32", "MS-MQDMPR/3.1.7.1.5/R33",
                 "MS-MQDMPR/3.1.7.1.5/R34", "MS-MQDMPR/3.1.7.1.5/R35")
def test_open_multiple_element_name_opens_each_element_for_send(qm_world):
    a, b = _private(qm_world, "a"), _private(qm_world, "b")
    result = open_queue(qm_world.env,
                        "DIRECT=OS:mqref\\private$\\b,DIRECT=OS:mqref\\private$\\a", Send,
                        DenyNone)
    desc = result.open_queue_descriptor
    assert result.status == MQ_OK and desc.multiple and desc.queue_reference is None
    assert (desc.access_type, desc.share_mode) == (Send, DenyNone)
    assert [d.queue_reference for d in desc.open_queue_descriptor_collection] == [a, b]
    assert desc.format_name.casefold() == \
        "direct=os:mqref\\private$\\a,direct=os:mqref\\private$\\b"


@pytest.mark.req("MS-MQDMPR/3.1.7.1.5/R8", "MS-MQDMPR/3.1.7.1.5/R9", "MS-MQDMPR/3.1.7.1.5/R10",
                 "MS-MQDMPR/3.1.7.1.5/R11", "MS-MQDMPR/3.1.7.1.5/R12",
                 "MS-MQDMPR/3.1.7.1.5/R13")
def test_open_multiple_element_name_is_for_shared_send_only(qm_world):
    name = "DIRECT=OS:x\\q,DIRECT=OS:y\\q"
    assert open_queue(qm_world.env, name, Receive, DenyNone).status == \
        MQ_ERROR_UNSUPPORTED_FORMATNAME_OPERATION
    assert open_queue(qm_world.env, name, Send, DenyReceive).status == \
        MQ_ERROR_UNSUPPORTED_ACCESS_MODE


@pytest.mark.req("MS-MQDMPR/3.1.7.1.5/R28", "MS-MQDMPR/3.1.7.1.5/R29", "MS-MQDMPR/3.1.7.1.5/R30",
                 "MS-MQDMPR/3.1.7.1.5/R31")
def test_open_multiple_element_name_closes_what_it_opened_when_an_element_fails(qm_world):
    a = _private(qm_world, "a")
    result = open_queue(qm_world.env,
                        "DIRECT=OS:mqref\\private$\\a,DIRECT=OS:mqref\\private$\\missing",
                        Send, DenyNone)
    assert result.status == MQ_ERROR_QUEUE_NOT_FOUND and result.open_queue_descriptor is None
    assert a.open_queue_descriptor_collection == []


@pytest.mark.req("MS-MQDMPR/3.1.7.1.5/R79", "MS-MQDMPR/3.1.7.1.5/R80", "MS-MQDMPR/3.1.7.1.5/R81",
                 "MS-MQDMPR/3.1.7.1.5/R82", "MS-MQDMPR/3.1.7.1.5/R83",
                 "MS-MQDMPR/3.1.7.1.5/R84", "MS-MQDMPR/3.1.7.1.5/R100")
def test_open_queue_to_send_to_a_remote_queue_creates_one_outgoing_queue(qm_world):
    name = f"PRIVATE={REMOTE_GUID}\\00000003"
    first = open_queue(qm_world.env, name, Send, DenyNone).open_queue_descriptor
    outgoing = first.queue_reference
    assert isinstance(outgoing, OutgoingQueue) and outgoing.state is OutgoingQueueState.Inactive
    assert outgoing.destination_format_name == outgoing.label == name
    assert outgoing.identifier != GUID_NULL and outgoing.next_hops == []
    assert outgoing in qm_world.qm.queue_collection
    second = open_queue(qm_world.env, name.lower(), Send, DenyNone).open_queue_descriptor
    assert second.queue_reference is outgoing
    assert enqueue_message(qm_world.env, outgoing, Message(body=b"out")) == 0


@pytest.mark.req("MS-MQDMPR/3.1.7.1.5/R96", "MS-MQDMPR/3.1.7.1.5/R97", "MS-MQDMPR/3.1.7.1.5/R98",
                 "MS-MQDMPR/3.1.7.1.5/R99")
def test_outgoing_queues_are_locked_under_hardened_security_and_flag_multicast(qm_world):
    qm_world.qm.hardened_security = True
    tcp = open_queue(qm_world.env, "DIRECT=TCP:10.0.0.9\\q", Send, DenyNone)
    http = open_queue(qm_world.env, "DIRECT=HTTP://far/msmq/q", Send, DenyNone)
    multicast = open_queue(qm_world.env, "MULTICAST=234.1.1.1:8001", Send, DenyNone)
    assert tcp.open_queue_descriptor.queue_reference.state is OutgoingQueueState.Locked
    assert http.open_queue_descriptor.queue_reference.state is OutgoingQueueState.Inactive
    assert multicast.open_queue_descriptor.queue_reference.multicast


@pytest.mark.req("MS-MQDMPR/3.1.7.1.5/R63", "MS-MQDMPR/3.1.7.1.5/R64", "MS-MQDMPR/3.1.7.1.5/R65",
                 "MS-MQDMPR/3.1.7.1.5/R66", "MS-MQDMPR/3.1.7.1.5/R67",
                 "MS-MQDMPR/3.1.7.1.5/R68", "MS-MQDMPR/3.1.7.1.5/R69",
                 "MS-MQDMPR/3.1.7.1.5/R70")
def test_open_queue_to_send_to_a_public_name_needs_the_directory(qm_world):
    result = open_queue(qm_world.env, f"PUBLIC={uuid.UUID(int=9)}", Send, DenyNone)
    assert result.status == MQ_ERROR_UNSUPPORTED_FORMATNAME_OPERATION


@pytest.mark.req("MS-MQDMPR/3.1.7.1.5/R71", "MS-MQDMPR/3.1.7.1.5/R72", "MS-MQDMPR/3.1.7.1.5/R73",
                 "MS-MQDMPR/3.1.7.1.5/R74")
def test_open_queue_to_send_to_a_public_queue_the_directory_places_here_is_not_found(qm_world):
    directory = qm_world.env.directory = FakeDirectory()
    here = QueueManager(computer_name="mqref")
    directory.queues[uuid.UUID(int=9)] = Queue(queue_manager=here)
    result = open_queue(qm_world.env, f"PUBLIC={uuid.UUID(int=9)}", Send, DenyNone)
    assert result.status == MQ_ERROR_QUEUE_NOT_FOUND


@pytest.mark.req("MS-MQDMPR/3.1.7.1.5/R85", "MS-MQDMPR/3.1.7.1.5/R86", "MS-MQDMPR/3.1.7.1.5/R87",
                 "MS-MQDMPR/3.1.7.1.5/R88", "MS-MQDMPR/3.1.7.1.5/R89",
                 "MS-MQDMPR/3.1.7.1.5/R90", "MS-MQDMPR/3.1.7.1.5/R91",
                 "MS-MQDMPR/3.1.7.1.5/R92")
def test_open_queue_to_send_to_a_remote_public_queue_takes_its_base_priority(qm_world):
    directory = qm_world.env.directory = FakeDirectory()
    directory.queues[uuid.UUID(int=9)] = Queue(
        queue_manager=QueueManager(computer_name="far"), base_priority=5)
    result = open_queue(qm_world.env, f"PUBLIC={uuid.UUID(int=9)}", Send, DenyNone)
    assert result.status == MQ_OK
    assert result.open_queue_descriptor.queue_reference.base_priority == 5
    assert len(directory.reads) == 2


@pytest.mark.req("MS-MQDMPR/3.1.7.1.5/R93", "MS-MQDMPR/3.1.7.1.5/R94", "MS-MQDMPR/3.1.7.1.5/R95")
def test_open_queue_to_a_public_queue_gone_from_the_directory_is_not_found(qm_world):
    directory = qm_world.env.directory = FakeDirectory()
    directory.queues[uuid.UUID(int=9)] = Queue(queue_manager=QueueManager(computer_name="far"))
    reads = 0
    original = directory.read_directory

    def read_once(**arguments):  # the queue is deleted between the two reads
        nonlocal reads
        reads += 1
        if reads == 2:
            directory.queues.clear()
        return original(**arguments)

    directory.read_directory = read_once
    result = open_queue(qm_world.env, f"PUBLIC={uuid.UUID(int=9)}", Send, DenyNone)
    assert result.status == MQ_ERROR_QUEUE_NOT_FOUND


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.6 Close Queue, 3.1.7.1.17 Cancel Waiting Message Read Request
# ---------------------------------------------------------------------------------------------

@pytest.mark.req("MS-MQDMPR/3.1.7.1.6/R9", "MS-MQDMPR/3.1.7.1.6/R10", "MS-MQDMPR/3.1.7.1.6/R11",
                 "MS-MQDMPR/3.1.7.1.6/R12", "MS-MQDMPR/3.1.7.1.6/R13",
                 "MS-MQDMPR/3.1.7.1.6/R14", "MS-MQDMPR/3.1.7.1.6/R15",
                 "MS-MQDMPR/3.1.7.1.6/R16", "MS-MQDMPR/3.1.7.1.6/R17")
def test_close_queue_cancels_tagged_readers_closes_cursors_and_detaches(world):
    q = world.queue()
    desc = world.open(q)
    cursor = open_cursor(world.env, desc)
    pending = world.env.call(dequeue_message(world.env, desc, timeout=INFINITE, tag="r1"), "t")
    assert pending == Pending("t")
    close_queue(world.env, desc)
    [done] = world.env.take_completions()
    assert done == Completion("t", done.result)
    assert done.result.status == MQ_ERROR_OPERATION_CANCELLED
    assert desc.cursor_collection == [] and cursor.open_queue_descriptor_reference is desc
    assert q.open_queue_descriptor_collection == []
    assert desc.waiting_message_read_operation_collection == []


@pytest.mark.req("MS-MQDMPR/3.1.7.1.6/R3", "MS-MQDMPR/3.1.7.1.6/R4")
def test_close_queue_of_a_deleted_queue_does_nothing(world):
    q = world.queue()
    desc = world.open(q)
    delete_queue(world.env, q)
    close_queue(world.env, desc)
    assert q.open_queue_descriptor_collection == [desc]


@pytest.mark.req("MS-MQDMPR/3.1.7.1.6/R5", "MS-MQDMPR/3.1.7.1.6/R6", "MS-MQDMPR/3.1.7.1.6/R7",
                 "MS-MQDMPR/3.1.7.1.6/R8")
def test_close_queue_of_a_multiple_element_descriptor_closes_each_element(qm_world):
    a, b = _private(qm_world, "a"), _private(qm_world, "b")
    desc = open_queue(qm_world.env, "DIRECT=OS:mqref\\private$\\a,DIRECT=OS:mqref\\private$\\b",
                      Send, DenyNone).open_queue_descriptor
    close_queue(qm_world.env, desc)
    assert a.open_queue_descriptor_collection == b.open_queue_descriptor_collection == []


@pytest.mark.req("MS-MQDMPR/3.1.7.1.17/R3", "MS-MQDMPR/3.1.7.1.17/R4", "MS-MQDMPR/3.1.7.1.17/R5",
                 "MS-MQDMPR/3.1.7.1.17/R6", "MS-MQDMPR/3.1.7.1.17/R7",
                 "MS-MQDMPR/3.1.7.1.17/R8", "MS-MQDMPR/3.1.7.1.17/R9",
                 "MS-MQDMPR/3.1.7.1.17/R10")
def test_cancel_stops_the_reader_with_the_tag_with_the_given_status(world):
    q = world.queue()
    desc = world.open(q)
    world.env.call(dequeue_message(world.env, desc, timeout=INFINITE, tag="keep"), "keep")
    world.env.call(dequeue_message(world.env, desc, timeout=INFINITE, tag="stop"), "stop")
    assert cancel_waiting_message_read_request(world.env, q, "stop", 0xC00E0099) == MQ_OK
    [done] = world.env.take_completions()
    assert done.token == "stop" and done.result.status == 0xC00E0099
    assert [r.tag for r in desc.waiting_message_read_operation_collection] == ["keep"]


@pytest.mark.req("MS-MQDMPR/3.1.7.1.17/R11")
def test_cancel_of_an_unknown_tag_is_not_found(world):
    q = world.queue()
    desc = world.open(q)
    world.env.call(dequeue_message(world.env, desc, timeout=INFINITE), "untagged")
    assert cancel_waiting_message_read_request(world.env, q, None, 0) == STATUS_NOT_FOUND
    assert cancel_waiting_message_read_request(world.env, q, "x", 0) == STATUS_NOT_FOUND
    assert world.env.take_completions() == []


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.26 Get Queue Path
# ---------------------------------------------------------------------------------------------

@pytest.mark.req("MS-MQDMPR/3.1.7.1.26/R3", "MS-MQDMPR/3.1.7.1.26/R4", "MS-MQDMPR/3.1.7.1.26/R5",
                 "MS-MQDMPR/3.1.7.1.26/R6", "MS-MQDMPR/3.1.7.1.26/R7",
                 "MS-MQDMPR/3.1.7.1.26/R8", "MS-MQDMPR/3.1.7.1.26/R9",
                 "MS-MQDMPR/3.1.7.1.26/R10", "MS-MQDMPR/3.1.7.1.26/R35")
@pytest.mark.parametrize("name, path, machine", [
    ("DIRECT=OS:far\\private$\\q", "far\\private$\\q", "far"),
    ("DIRECT=TCP:10.0.0.9\\q;JOURNAL", "10.0.0.9\\q;JOURNAL", "10.0.0.9"),
    ("DIRECT=HTTP://far:8080/msmq\\private$\\q", "far\\private$\\q", "far")])
def test_get_queue_path_of_a_direct_name(world, name, path, machine):
    assert get_queue_path(world.env, name) == GetQueuePathResult(path, machine, MQ_OK)


@pytest.mark.req("MS-MQDMPR/3.1.7.1.26/R11", "MS-MQDMPR/3.1.7.1.26/R12",
                 "MS-MQDMPR/3.1.7.1.26/R13", "MS-MQDMPR/3.1.7.1.26/R14",
                 "MS-MQDMPR/3.1.7.1.26/R15", "MS-MQDMPR/3.1.7.1.26/R16",
                 "MS-MQDMPR/3.1.7.1.26/R19", "MS-MQDMPR/3.1.7.1.26/R20",
                 "MS-MQDMPR/3.1.7.1.26/R21")
def test_get_queue_path_of_a_public_name_reads_the_directory(world):
    directory = world.env.directory = FakeDirectory()
    directory.queues[uuid.UUID(int=9)] = Queue(
        pathname="far\\orders", queue_manager=QueueManager(computer_name="far"))
    assert get_queue_path(world.env, f"PUBLIC={uuid.UUID(int=9)}") == GetQueuePathResult(
        "far\\orders", "far", MQ_OK)


@pytest.mark.req("MS-MQDMPR/3.1.7.1.26/R17", "MS-MQDMPR/3.1.7.1.26/R18",
                 "MS-MQDMPR/3.1.7.1.26/R28", "MS-MQDMPR/3.1.7.1.26/R29")
def test_get_queue_path_without_a_directory_answer_is_an_illegal_format_name(world):
    assert get_queue_path(world.env, f"PUBLIC={uuid.UUID(int=9)}").status == \
        MQ_ERROR_ILLEGAL_FORMATNAME
    assert get_queue_path(world.env, f"PRIVATE={QM_GUID}\\1").status == \
        MQ_ERROR_ILLEGAL_FORMATNAME
    assert get_queue_path(world.env, "PRIVATE=oops").status == MQ_ERROR_ILLEGAL_FORMATNAME


@pytest.mark.req("MS-MQDMPR/3.1.7.1.26/R22", "MS-MQDMPR/3.1.7.1.26/R23",
                 "MS-MQDMPR/3.1.7.1.26/R24", "MS-MQDMPR/3.1.7.1.26/R25",
                 "MS-MQDMPR/3.1.7.1.26/R26", "MS-MQDMPR/3.1.7.1.26/R27",
                 "MS-MQDMPR/3.1.7.1.26/R30", "MS-MQDMPR/3.1.7.1.26/R31",
                 "MS-MQDMPR/3.1.7.1.26/R32", "MS-MQDMPR/3.1.7.1.26/R33",
                 "MS-MQDMPR/3.1.7.1.26/R34")
def test_get_queue_path_of_a_private_name_finds_local_private_queues(qm_world):
    q = _private(qm_world)
    directory = qm_world.env.directory = FakeDirectory()
    directory.queue_managers[QM_GUID] = qm_world.qm
    directory.queue_managers[REMOTE_GUID] = QueueManager(computer_name="far")
    number = q.private_queue_number
    assert get_queue_path(qm_world.env, f"PRIVATE={QM_GUID}\\{number:x}") == GetQueuePathResult(
        "MQREF\\private$\\orders", "MQREF", MQ_OK)
    assert get_queue_path(qm_world.env, f"PRIVATE={REMOTE_GUID}\\{number:x}") == GetQueuePathResult(
        "", "far", MQ_OK)
