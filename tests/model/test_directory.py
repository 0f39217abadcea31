"""MS-MQDMPR 3.1.7.1.18-3.1.7.1.25 directory events, the directory timers (3.1.2.1, 3.1.2.2,
3.1.2.5) and their events (3.1.6.1, 3.1.6.2), against the in-memory Directory."""

from __future__ import annotations

import uuid

import pytest

from mqconform.model import directory as d
from mqconform.model.adm import (
    GUID_NULL,
    DirectoryOperationResult,
    Enterprise,
    Queue,
    QueueManager,
    QueueManagerOperatingSystemType,
    QueueType,
    RoutingLink,
    Site,
)
from mqconform.model.directory import (
    ChangeNotification,
    ChangeNotificationOperation,
    Directory,
    check_directory_online,
    create_directory_object,
    delete_directory_object,
    read_directory,
    read_directory_begin,
    read_directory_end,
    read_directory_next,
    write_directory,
)
from mqconform.model.invariants import check_invariants
from mqconform.model.runtime import Environment

R = DirectoryOperationResult
MINUTE, HOUR = 60_000, 3_600_000


def _guid(n: int) -> uuid.UUID:
    return uuid.UUID(int=0xD1000 + n)


@pytest.fixture
def world(world):
    """The model's world, directory-integrated, with a Directory that holds its queue manager."""
    world.qm.identifier = _guid(1)
    world.qm.directory_integrated = True
    world.directory = Directory(world.env)
    world.directory.add(world.qm)
    return world


def _public_queue(world, pathname="mqref\\orders", **kw) -> Queue:
    return world.queue(pathname, queue_type=QueueType.Public, **kw)


def _by_id(guid):
    return [("Identifier", "EQUALS", guid)]


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.18 Create Directory Object and 3.1.7.1.20 Read Directory
# ---------------------------------------------------------------------------------------------


@pytest.mark.req("MS-MQDMPR/3.1.7.1.18/R2", "MS-MQDMPR/3.1.7.1.20/R22",
                 "MS-MQDMPR/3.1.7.1.20/R28", "MS-MQDMPR/3.1.7.1.20/R29")
def test_created_public_queue_is_read_back_with_a_new_guid_and_a_change_notification(world):
    q = _public_queue(world, label="orders", quota=64)
    created = create_directory_object(world.env, q)
    assert created.status is R.Success and created.object_guid != GUID_NULL
    assert q.identifier == GUID_NULL  # the caller (Create Queue) sets it from rObjectGUID
    read = read_directory(world.env, "Queue", _by_id(created.object_guid))
    assert read.status is R.Success
    found = read.directory_object
    assert found is not q and found.identifier == created.object_guid
    assert (found.label, found.quota, found.pathname) == ("orders", 64, "mqref\\orders")
    assert found.queue_type is QueueType.Public and found.queue_manager is world.qm
    assert world.directory.change_notifications == [
        ChangeNotification(ChangeNotificationOperation.QueueCreation, q)]


@pytest.mark.req("MS-MQDMPR/3.1.7.1.18/R2")
def test_creating_a_private_queue_object_sends_no_change_notification(world):
    q = world.queue()
    assert create_directory_object(world.env, q).status is R.Success
    assert world.directory.change_notifications == []


@pytest.mark.req("MS-MQDMPR/3.1.7.1.18/R2")
def test_creating_an_object_whose_identifier_exists_gives_object_already_exists(world):
    site = Site(identifier=_guid(7), name="west")
    assert create_directory_object(world.env, site).object_guid == _guid(7)
    again = create_directory_object(world.env, Site(identifier=_guid(7), name="east"))
    assert again.status is R.ObjectAlreadyExists
    assert read_directory(world.env, "Site", _by_id(_guid(7))).directory_object.name == "west"


@pytest.mark.req("MS-MQDMPR/3.1.7.1.20/R4", "MS-MQDMPR/3.1.7.1.18/R2")
def test_attribute_list_limits_what_is_published_and_what_is_read(world):
    q = _public_queue(world, label="orders", full_path="CN=orders", directory_path="LDAP://x")
    guid = create_directory_object(world.env, q, ["Label", "FullPath"]).object_guid
    read = read_directory(world.env, "Queue", _by_id(guid), ["FullPath"])
    assert read.status is R.Success
    assert read.directory_object.full_path == "CN=orders"
    assert read.directory_object.label == ""  # not read: left at its default
    missing = read_directory(world.env, "Queue", _by_id(guid), ["FullPath", "DirectoryPath"])
    assert missing.status is R.AttributeNotFound  # DirectoryPath was not published


@pytest.mark.req("MS-MQDMPR/3.1.7.1.20/R2", "MS-MQDMPR/3.1.7.1.20/R28")
def test_a_filter_that_matches_nothing_gives_object_not_found(world):
    read = read_directory(world.env, "QueueManager", [("ComputerName", "EQUALS", "NOBODY")])
    assert read.status is R.ObjectNotFound
    assert world.qm.directory_offline is False


@pytest.mark.req("MS-MQDMPR/3.1.7.1.20/R2", "MS-MQDMPR/3.1.7.1.20/R5")
def test_the_first_object_satisfying_every_expression_is_returned(world):
    for n, cost in ((1, 50), (2, 5), (3, 7)):
        world.directory.add(RoutingLink(identifier=_guid(10 + n), actual_cost=cost,
                                        description=f"link{n}"))
    read = read_directory(world.env, "RoutingLink",
                          [("ActualCost", "LESS-THAN", 10), ("Description", "NOT-EQUALS", "link2")])
    assert read.status is R.Success and read.directory_object.description == "link3"
    assert read.directory_object.actual_cost < 10


@pytest.mark.req("MS-MQDMPR/3.1.7.1.20/R3")
def test_a_null_filter_returns_the_first_object_of_the_type(world):
    world.directory.add(Enterprise(identifier=_guid(20), name="corp",
                                   non_ldap_capable_queue_manager_notification=True))
    read = read_directory(world.env, "Enterprise", None, "NonLDAPCapableQueueManagerNotification")
    assert read.status is R.Success
    assert read.directory_object.non_ldap_capable_queue_manager_notification is True


def test_filters_compare_enumerations_by_their_spelling(world):
    world.qm.operating_system_type = QueueManagerOperatingSystemType.WinServer
    assert write_directory(world.env, world.qm, ["OperatingSystemType"]) is R.Success
    read = read_directory(world.env, "QueueManager",
                          [("operating_system_type", "EQUALS", "WinServer")])
    assert read.status is R.Success and read.directory_object.identifier == world.qm.identifier


def test_invalid_filters_and_types_give_directory_statuses_not_exceptions(world):
    assert read_directory(world.env, "Printer").status is R.GenericError
    assert read_directory(world.env, "Queue", [("Label", "LIKE", "x")]).status is R.GenericError
    assert read_directory(world.env, "Queue", [("Colour", "EQUALS", 1)]).status is (
        R.AttributeNotFound)


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.24 Write Directory and 3.1.7.1.19 Delete Directory Object
# ---------------------------------------------------------------------------------------------


@pytest.mark.req("MS-MQDMPR/3.1.7.1.24/R3", "MS-MQDMPR/3.1.7.1.24/R9",
                 "MS-MQDMPR/3.1.7.1.24/R10", "MS-MQDMPR/3.1.7.1.24/R11",
                 "MS-MQDMPR/3.1.7.1.24/R12", "MS-MQDMPR/3.1.7.1.24/R13")
def test_writing_a_public_queue_updates_the_directory_and_notifies(world):
    q = _public_queue(world, label="old")
    q.identifier = create_directory_object(world.env, q).object_guid
    world.directory.change_notifications.clear()
    q.label, q.quota = "new", 10
    assert write_directory(world.env, q, ["Label"]) is R.Success
    found = read_directory(world.env, "Queue", _by_id(q.identifier)).directory_object
    assert (found.label, found.quota) == ("new", 0xFFFFFFFF)  # only Label was written
    assert world.directory.change_notifications == [
        ChangeNotification(ChangeNotificationOperation.QueueUpdate, q)]


@pytest.mark.req("MS-MQDMPR/3.1.7.1.24/R15", "MS-MQDMPR/3.1.7.1.24/R16",
                 "MS-MQDMPR/3.1.7.1.24/R17")
def test_writing_the_queue_manager_sends_a_queue_manager_update(world):
    world.qm.journal_quota = 99
    assert write_directory(world.env, world.qm) is R.Success
    assert world.directory.lookup(world.qm.identifier).journal_quota == 99
    assert [n.operation for n in world.directory.change_notifications] == [
        ChangeNotificationOperation.QueueManagerUpdate]


@pytest.mark.req("MS-MQDMPR/3.1.7.1.24/R9", "MS-MQDMPR/3.1.7.1.24/R10")
def test_writing_an_object_the_directory_lacks_gives_object_not_found_and_no_notification(world):
    q = _public_queue(world)
    q.identifier = _guid(99)
    assert write_directory(world.env, q) is R.ObjectNotFound
    assert world.directory.change_notifications == []


@pytest.mark.req("MS-MQDMPR/3.1.7.1.19/R3", "MS-MQDMPR/3.1.7.1.19/R4",
                 "MS-MQDMPR/3.1.7.1.19/R5", "MS-MQDMPR/3.1.7.1.19/R7",
                 "MS-MQDMPR/3.1.7.1.19/R13")
def test_deleted_object_is_gone_and_deleting_again_gives_object_not_found(world):
    q = _public_queue(world)
    q.identifier = create_directory_object(world.env, q).object_guid
    assert delete_directory_object(world.env, q) is R.Success
    assert read_directory(world.env, "Queue", _by_id(q.identifier)).status is R.ObjectNotFound
    assert delete_directory_object(world.env, q) is R.ObjectNotFound
    assert [n.operation for n in world.directory.change_notifications] == [
        ChangeNotificationOperation.QueueCreation, ChangeNotificationOperation.QueueDeletion,
        ChangeNotificationOperation.QueueDeletion]


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.21-3.1.7.1.23 Read Directory Begin, Next, End
# ---------------------------------------------------------------------------------------------


def _sites(world):
    for n, (name, interval) in enumerate((("b", 5), ("c", 9), ("a", 5), ("z", 1)), 1):
        world.directory.add(Site(identifier=_guid(30 + n), name=name,
                                 intra_site_replication_interval=interval))


def _drain(env, handle):
    out = []
    while True:
        got = read_directory_next(env, handle)
        if got.status is not R.Success:
            return out, got.status
        out.append(got.directory_object)


@pytest.mark.req("MS-MQDMPR/3.1.7.1.21/R2", "MS-MQDMPR/3.1.7.1.21/R5",
                 "MS-MQDMPR/3.1.7.1.22/R2", "MS-MQDMPR/3.1.7.1.23/R2")
def test_enumeration_returns_the_matching_objects_in_sort_order_then_end_of_data(world):
    _sites(world)
    begun = read_directory_begin(world.env, "Site",
                                 [("IntraSiteReplicationInterval", "GREATER-THAN-OR-EQUAL", 5)],
                                 ["IntraSiteReplicationInterval", "Name"],
                                 [(2, False), (1, True)])  # interval descending, then name
    assert begun.status is R.Success
    objects, last = _drain(world.env, begun.query_handle)
    assert [(s.intra_site_replication_interval, s.name) for s in objects] == [
        (9, "c"), (5, "a"), (5, "b")]
    assert last is R.EndOfData
    assert read_directory_next(world.env, begun.query_handle).status is R.EndOfData
    assert read_directory_end(world.env, begun.query_handle) is R.Success
    assert world.directory.query_handles == []
    assert read_directory_next(world.env, begun.query_handle).status is R.GenericError
    assert read_directory_end(world.env, begun.query_handle) is R.GenericError


@pytest.mark.req("MS-MQDMPR/3.1.7.1.21/R3", "MS-MQDMPR/3.1.7.1.21/R4")
def test_a_null_filter_enumerates_every_object_with_only_the_listed_attributes(world):
    _sites(world)
    begun = read_directory_begin(world.env, "Site", None, ["Name"])
    objects, last = _drain(world.env, begun.query_handle)
    assert [s.name for s in objects] == ["b", "c", "a", "z"] and last is R.EndOfData
    assert all(s.intra_site_replication_interval == 0 for s in objects)  # not read
    read_directory_end(world.env, begun.query_handle)


@pytest.mark.req("MS-MQDMPR/3.1.7.1.21/R2")
def test_enumeration_of_nothing_and_concurrent_enumerations_have_their_own_handles(world):
    _sites(world)
    empty = read_directory_begin(world.env, "Site", [("Name", "EQUALS", "nowhere")])
    every = read_directory_begin(world.env, "Site")
    assert empty.query_handle != every.query_handle
    assert read_directory_next(world.env, empty.query_handle).status is R.EndOfData
    assert read_directory_next(world.env, every.query_handle).directory_object.name == "b"
    assert sorted(world.directory.query_handles) == sorted([empty.query_handle,
                                                            every.query_handle])


# ---------------------------------------------------------------------------------------------
# A disconnected directory: DirectoryNotConnected, DirectoryOffline, Directory Online Timer
# ---------------------------------------------------------------------------------------------


@pytest.mark.req("MS-MQDMPR/3.1.7.1.18/R2", "MS-MQDMPR/3.1.2.5/R1")
def test_create_on_a_disconnected_directory_takes_the_queue_manager_offline(world):
    world.directory.connected = False
    world.env.advance(1_000)
    created = create_directory_object(world.env, _public_queue(world))
    assert created.status is R.DirectoryNotConnected
    assert world.qm.directory_offline is True
    assert world.env.timer_deadline(d.DIRECTORY_ONLINE_TIMER) == 1_000 + MINUTE


@pytest.mark.req("MS-MQDMPR/3.1.7.1.20/R23", "MS-MQDMPR/3.1.7.1.20/R24",
                 "MS-MQDMPR/3.1.7.1.20/R25", "MS-MQDMPR/3.1.7.1.20/R26")
def test_read_on_a_disconnected_directory_starts_the_online_timer_only_once(world):
    world.directory.connected = False
    read = read_directory(world.env, "Site", None)
    assert read.status is R.DirectoryNotConnected and world.qm.directory_offline is True
    world.qm.directory_offline = False  # read again, as if offline had been cleared
    world.env.advance(20_000)
    read_directory(world.env, "Site", None)
    assert world.env.timer_deadline(d.DIRECTORY_ONLINE_TIMER) == MINUTE  # not restarted


@pytest.mark.req("MS-MQDMPR/3.1.7.1.24/R4", "MS-MQDMPR/3.1.7.1.24/R5",
                 "MS-MQDMPR/3.1.7.1.24/R6", "MS-MQDMPR/3.1.7.1.24/R7",
                 "MS-MQDMPR/3.1.7.1.19/R8", "MS-MQDMPR/3.1.7.1.19/R9",
                 "MS-MQDMPR/3.1.7.1.19/R10", "MS-MQDMPR/3.1.7.1.19/R11")
def test_write_and_delete_on_a_disconnected_directory_go_offline_without_notifying(world):
    q = _public_queue(world)
    q.identifier = create_directory_object(world.env, q).object_guid
    world.directory.change_notifications.clear()
    world.directory.connected = False
    assert write_directory(world.env, q) is R.DirectoryNotConnected
    assert world.directory.change_notifications == []  # written nothing: nothing to notify
    assert world.qm.directory_offline and d.directory_online_timer_active(world.env)
    world.qm.directory_offline = False
    assert delete_directory_object(world.env, q) is R.DirectoryNotConnected
    assert world.qm.directory_offline is True


@pytest.mark.req("MS-MQDMPR/3.1.7.1.23/R2", "MS-MQDMPR/3.1.7.1.22/R2",
                 "MS-MQDMPR/3.1.7.1.21/R5")
def test_enumeration_on_a_disconnected_directory_is_not_connected(world):
    begun = read_directory_begin(world.env, "QueueManager")
    world.directory.connected = False
    assert read_directory_next(world.env, begun.query_handle).status is R.DirectoryNotConnected
    assert read_directory_end(world.env, begun.query_handle) is R.DirectoryNotConnected
    assert read_directory_begin(world.env, "QueueManager").status is R.DirectoryNotConnected
    assert world.qm.directory_offline is False  # Begin, Next and End only delegate


@pytest.mark.req("MS-MQDMPR/3.1.7.1.20/R23", "MS-MQDMPR/3.1.7.1.20/R28")
def test_a_forced_read_of_a_disconnected_directory_does_not_go_offline(world):
    world.directory.connected = False
    read = read_directory(world.env, "QueueManager", None, force_directory_read=True)
    assert read.status is R.DirectoryNotConnected
    assert world.qm.directory_offline is False
    assert not d.directory_online_timer_active(world.env)


def test_a_queue_manager_not_integrated_with_a_directory_never_goes_offline(world):
    world.qm.directory_integrated = False
    world.directory.connected = False
    assert read_directory(world.env, "Queue", None).status is R.DirectoryNotConnected
    assert world.qm.directory_offline is False  # it MUST stay False (3.1.1.1)
    assert not d.directory_online_timer_active(world.env)
    assert check_invariants(world.qm) == []


def test_an_environment_without_a_directory_is_a_directory_not_connected():
    env = Environment(QueueManager(directory_integrated=True))
    assert read_directory(env, "Queue", None).status is R.DirectoryNotConnected
    assert create_directory_object(env, Site()).status is R.DirectoryNotConnected
    assert read_directory_begin(env, "Site").status is R.DirectoryNotConnected
    assert env.local_queue_manager.directory_offline is True


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.20: reading while offline uses the local queue manager
# ---------------------------------------------------------------------------------------------


@pytest.mark.req("MS-MQDMPR/3.1.7.1.20/R7", "MS-MQDMPR/3.1.7.1.20/R8",
                 "MS-MQDMPR/3.1.7.1.20/R9", "MS-MQDMPR/3.1.7.1.20/R12",
                 "MS-MQDMPR/3.1.7.1.20/R13", "MS-MQDMPR/3.1.7.1.20/R14")
def test_offline_read_of_a_queue_finds_it_in_the_local_queue_collection(world):
    q = _public_queue(world, label="local")
    q.identifier = _guid(50)
    world.qm.directory_offline = True
    read = read_directory(world.env, "Queue", _by_id(_guid(50)))
    assert read.status is R.Success and read.directory_object is q


@pytest.mark.req("MS-MQDMPR/3.1.7.1.20/R9", "MS-MQDMPR/3.1.7.1.20/R10",
                 "MS-MQDMPR/3.1.7.1.20/R11")
def test_offline_read_of_an_unknown_queue_gives_object_not_found(world):
    world.qm.directory_offline = True
    assert read_directory(world.env, "Queue", _by_id(_guid(51))).status is R.ObjectNotFound


@pytest.mark.req("MS-MQDMPR/3.1.7.1.20/R15", "MS-MQDMPR/3.1.7.1.20/R16",
                 "MS-MQDMPR/3.1.7.1.20/R17", "MS-MQDMPR/3.1.7.1.20/R18",
                 "MS-MQDMPR/3.1.7.1.20/R19", "MS-MQDMPR/3.1.7.1.20/R20")
def test_offline_read_serves_the_local_queue_manager_and_nothing_else(world):
    world.qm.directory_offline = True
    mine = read_directory(world.env, "QueueManager", _by_id(world.qm.identifier))
    assert mine.status is R.Success and mine.directory_object is world.qm
    other = read_directory(world.env, "QueueManager", _by_id(_guid(52)))
    assert other.status is R.DirectoryNotConnected
    site = read_directory(world.env, "Site", None)  # the directory is connected but not asked
    assert site.status is R.DirectoryNotConnected


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.25 Check Directory Online and the Directory Online Timer (3.1.2.5)
# ---------------------------------------------------------------------------------------------


@pytest.mark.req("MS-MQDMPR/3.1.2.5/R1", "MS-MQDMPR/3.1.7.1.25/R3", "MS-MQDMPR/3.1.7.1.25/R8",
                 "MS-MQDMPR/3.1.7.1.25/R9", "MS-MQDMPR/3.1.7.1.25/R10",
                 "MS-MQDMPR/3.1.7.1.25/R11", "MS-MQDMPR/3.1.7.1.25/R12",
                 "MS-MQDMPR/3.1.7.1.25/R17", "MS-MQDMPR/3.1.7.1.25/R18")
def test_online_timer_brings_the_queue_manager_back_and_refreshes_public_queues(world):
    q = _public_queue(world, label="before")
    q.identifier = create_directory_object(world.env, q).object_guid
    private = world.queue(label="mine")
    world.directory.connected = False
    assert read_directory(world.env, "Queue", _by_id(q.identifier)).status is (
        R.DirectoryNotConnected)
    assert world.qm.directory_offline is True
    # meanwhile, in the directory: the queue and the queue manager changed
    world.directory.connected = True
    stored_q = world.directory.lookup(q.identifier)
    stored_q.label = "after"
    world.directory.dssm_write_directory(world.env, stored_q, ["Label"])
    stored_qm = world.directory.lookup(world.qm.identifier)
    stored_qm.journal_quota = 1234
    world.directory.dssm_write_directory(world.env, stored_qm, ["JournalQuota"])

    assert world.env.advance(MINUTE - 1) == 0
    assert world.qm.directory_offline is True
    assert world.env.advance(MINUTE) == 1
    assert world.qm.directory_offline is False
    assert world.qm.journal_quota == 1234 and q.label == "after"
    assert private.label == "mine" and q.queue_manager is world.qm
    assert not d.directory_online_timer_active(world.env)


@pytest.mark.req("MS-MQDMPR/3.1.7.1.25/R19", "MS-MQDMPR/3.1.7.1.25/R20")
def test_online_timer_keeps_polling_while_the_directory_stays_disconnected(world):
    world.directory.connected = False
    read_directory(world.env, "Site", None)
    for minute in (1, 2, 3):
        assert world.env.advance(minute * MINUTE) == 1
        assert world.qm.directory_offline is True
        assert world.env.timer_deadline(d.DIRECTORY_ONLINE_TIMER) == (minute + 1) * MINUTE
    world.directory.connected = True
    world.env.advance(4 * MINUTE)
    assert world.qm.directory_offline is False
    assert not d.directory_online_timer_active(world.env)


@pytest.mark.req("MS-MQDMPR/3.1.7.1.25/R9", "MS-MQDMPR/3.1.7.1.25/R19")
def test_check_directory_online_when_the_queue_manager_is_not_published_stays_offline(world):
    world.qm.directory_offline = True
    world.directory.dssm_delete_directory_object(world.env, world.qm)
    check_directory_online(world.env)  # ObjectNotFound: not Success
    assert world.qm.directory_offline is True
    assert d.directory_online_timer_active(world.env)


# ---------------------------------------------------------------------------------------------
# 3.1.2.1 / 3.1.6.1 Directory Sites Update, 3.1.2.2 / 3.1.6.2 Directory Site Gates Update
# ---------------------------------------------------------------------------------------------


@pytest.mark.req("MS-MQDMPR/3.1.2.1/R1", "MS-MQDMPR/3.1.6.1/R3", "MS-MQDMPR/3.1.6.1/R4",
                 "MS-MQDMPR/3.1.6.1/R9", "MS-MQDMPR/3.1.6.1/R10")
def test_sites_update_timer_refreshes_the_local_sites_after_twelve_hours(world):
    site = Site(identifier=_guid(60), name="west", foreign_site=False)
    world.directory.add(site)
    local = Site(identifier=_guid(60), name="west")
    unknown = Site(identifier=_guid(61), name="gone")
    world.qm.site_collection += [local, unknown]
    stored = world.directory.lookup(_guid(60))
    stored.name, stored.foreign_site = "west-renamed", True
    world.directory.dssm_write_directory(world.env, stored)

    d.directory_sites_update_timer_start(world.env)
    assert world.env.advance(12 * HOUR - 1) == 0 and local.name == "west"
    assert world.env.advance(12 * HOUR) == 1
    assert (local.name, local.foreign_site) == ("west-renamed", True)
    assert unknown.name == "gone"  # ObjectNotFound: left as it was


@pytest.mark.req("MS-MQDMPR/3.1.2.1/R2")
def test_sites_update_timer_expiration_can_be_configured(world):
    d.directory_sites_update_timer_start(world.env, expiration=5 * MINUTE)
    assert world.env.timer_deadline(d.DIRECTORY_SITES_UPDATE_TIMER) == 5 * MINUTE


@pytest.mark.req("MS-MQDMPR/3.1.2.2/R1", "MS-MQDMPR/3.1.2.2/R2", "MS-MQDMPR/3.1.6.2/R3",
                 "MS-MQDMPR/3.1.6.2/R4", "MS-MQDMPR/3.1.6.2/R5", "MS-MQDMPR/3.1.6.2/R10",
                 "MS-MQDMPR/3.1.6.2/R11")
def test_site_gates_update_timer_refreshes_the_site_gates_after_an_hour(world):
    gate = QueueManager(identifier=_guid(70), computer_name="GATE1", routing_server=False)
    world.directory.add(gate)
    stored = world.directory.lookup(_guid(70))
    stored.routing_server = True
    world.directory.dssm_write_directory(world.env, stored, ["RoutingServer"])
    local_gate = QueueManager(identifier=_guid(70), computer_name="GATE1")
    world.qm.site_collection.append(Site(identifier=_guid(71), site_gate_collection=[local_gate]))

    d.directory_site_gates_update_timer_start(world.env)
    assert world.env.timer_deadline(d.DIRECTORY_SITE_GATES_UPDATE_TIMER) == HOUR
    world.env.advance(HOUR)
    assert local_gate.routing_server is True and local_gate.computer_name == "GATE1"


@pytest.mark.req("MS-MQDMPR/3.1.6.1/R9")
def test_sites_update_while_offline_changes_nothing(world):
    local = Site(identifier=_guid(80), name="old")
    world.directory.add(Site(identifier=_guid(80), name="new"))
    world.qm.site_collection.append(local)
    world.qm.directory_offline = True
    d.directory_sites_update(world.env)
    assert local.name == "old"


# ---------------------------------------------------------------------------------------------
# The Directory's own methods are the events
# ---------------------------------------------------------------------------------------------


def test_directory_methods_are_the_events(world):
    directory = world.env.directory
    assert directory is world.directory
    q = _public_queue(world, label="via-method")
    created = directory.create_directory_object(q)
    assert created.status is R.Success
    q.identifier = created.object_guid
    assert directory.read_directory("Queue", _by_id(q.identifier),
                                    ["Label"]).directory_object.label == "via-method"
    begun = directory.read_directory_begin("Queue", ("Label", "EQUALS", "via-method"))
    assert directory.read_directory_next(begun.query_handle).status is R.Success
    assert directory.read_directory_next(begun.query_handle).status is R.EndOfData
    assert directory.read_directory_end(begun.query_handle) is R.Success
    q.label = "changed"
    assert directory.write_directory(q) is R.Success
    assert directory.delete_directory_object(q) is R.Success
    directory.connected = False
    assert directory.read_directory("Queue", None).status is R.DirectoryNotConnected
    assert world.qm.directory_offline is True
