"""MS-MQDMPR 3.1.3 Initialization and 3.1.4 Higher-Layer Triggered Events."""

from __future__ import annotations

import struct
import sys
import types
import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from mqconform import model
from mqconform.model.adm import (
    DirectoryOperationResult,
    Enterprise,
    Message,
    MessageClass,
    MessageDeliveryGuarantee,
    MessagePositionState,
    OutgoingQueue,
    OutgoingQueueState,
    QueueManager,
    QueueManagerState,
    QueueType,
    Site,
    Transaction,
)
from mqconform.model.higher_layer import (
    CRYPTOGRAPHIC_SERVICE_PROVIDERS,
    REENLISTMENT_TIMEOUT,
    TXUSER_ENLISTMENT_MTAG_ABORTREQ,
    TXUSER_ENLISTMENT_MTAG_ABORTREQDONE,
    TXUSER_ENLISTMENT_MTAG_COMMITREQ,
    TXUSER_ENLISTMENT_MTAG_COMMITREQDONE,
    TXUSER_ENLISTMENT_MTAG_PREPAREREQ,
    TXUSER_ENLISTMENT_MTAG_PREPAREREQDONE,
    TXUSER_ENLISTMENT_PREPAREREQDONE_OK,
    DtcMessage,
    DtcTransactionObject,
    Host,
    ReenlistmentOutcome,
    RsaPublicKey,
    bring_online,
    dtc_reenlistment_abort,
    dtc_reenlistment_commit,
    dtc_reenlistment_timeout,
    dtc_transaction_abort,
    dtc_transaction_commit,
    dtc_transaction_prepare,
    initialization,
    pause_queue,
    queue_manager_started,
    queue_manager_stopped,
    resume_queue,
    take_offline,
    transaction_abort,
    transaction_commit,
    transaction_prepare,
)
from mqconform.model.invariants import check_invariants
from mqconform.model.message_ops import dequeue_message, enqueue_message, move_message
from mqconform.model.runtime import INFINITE, Pending
from mqconform.model.status import (
    MQ_ERROR_TRANSACTION_SEQUENCE,
    MQ_OK,
    STATUS_ACCESS_DENIED,
)

Available, Locked, Deleted, PurgePending = (MessagePositionState.Available,
                                            MessagePositionState.Locked,
                                            MessagePositionState.Deleted,
                                            MessagePositionState.PurgePending)


def _transaction(world, identifier="tx-1", single_phase=True) -> Transaction:
    tx = Transaction(identifier=identifier, single_phase=single_phase)
    world.qm.transaction_collection.append(tx)
    return tx


def _receive(world, desc, tx=None, timeout=0):
    return world.env.call(dequeue_message(world.env, desc, timeout=timeout, transaction=tx))


def _messages(queue):
    return [p.message_reference for p in queue.message_position_list]


def _available(queue):
    return [p.message_reference for p in queue.message_position_list if p.state is Available]


# ---------------------------------------------------------------------------------------------
# 3.1.4.3 Transaction Prepare
# ---------------------------------------------------------------------------------------------

@pytest.mark.req("MS-MQDMPR/3.1.4.3/R3", "MS-MQDMPR/3.1.4.3/R4", "MS-MQDMPR/3.1.4.3/R6",
                 "MS-MQDMPR/3.1.4.3/R7", "MS-MQDMPR/3.1.4.3/R8")
def test_prepare_marks_the_first_and_last_message_of_the_transaction(world):
    q = world.queue()
    tx = _transaction(world, single_phase=False)
    first, middle, last = Message(body=b"1"), Message(body=b"2"), Message(body=b"3")
    for m in (first, middle, last):
        enqueue_message(world.env, q, m, transaction=tx)
    assert transaction_prepare(world.env, "tx-1") == MQ_OK
    assert tx.single_phase is True  # iSinglePhase defaults to True
    assert (first.first_in_transaction, first.last_in_transaction) == (True, False)
    assert (middle.first_in_transaction, middle.last_in_transaction) == (False, False)
    assert (last.first_in_transaction, last.last_in_transaction) == (False, True)


@pytest.mark.req("MS-MQDMPR/3.1.4.3/R5", "MS-MQDMPR/3.1.4.4/R4", "MS-MQDMPR/3.1.4.5/R4")
def test_an_unknown_transaction_is_a_sequence_error(world):
    assert transaction_prepare(world.env, "nope") == MQ_ERROR_TRANSACTION_SEQUENCE
    assert transaction_commit(world.env, "nope") == MQ_ERROR_TRANSACTION_SEQUENCE
    assert transaction_abort(world.env, "nope") == MQ_ERROR_TRANSACTION_SEQUENCE


# ---------------------------------------------------------------------------------------------
# 3.1.4.4 Transaction Commit, 3.1.4.5 Transaction Abort
# ---------------------------------------------------------------------------------------------

@pytest.mark.req("MS-MQDMPR/3.1.4.4/R10", "MS-MQDMPR/3.1.4.4/R11", "MS-MQDMPR/3.1.4.4/R14",
                 "MS-MQDMPR/3.1.4.4/R21", "MS-MQDMPR/3.1.4.4/R22", "MS-MQDMPR/3.1.4.4/R23")
def test_committed_transactional_receive_deletes_the_message(world):
    q = world.queue(transactional=True)
    desc = world.open(q)
    m = world.send(q)
    tx = _transaction(world)
    assert _receive(world, desc, tx).message is m
    assert m.message_position_reference.state is Locked
    assert transaction_commit(world.env, "tx-1") == MQ_OK
    assert m.message_position_reference.state is Deleted
    assert m.message_position_reference._deleted_reason is MessageClass.AckReceive
    assert _messages(q) == []
    assert tx.transactional_operation_collection == []
    assert world.qm.transaction_collection == []
    assert _receive(world, desc).status != MQ_OK  # nothing left to receive
    assert check_invariants(world.qm) == []


@pytest.mark.req("MS-MQDMPR/3.1.4.5/R6", "MS-MQDMPR/3.1.4.5/R12", "MS-MQDMPR/3.1.4.5/R13",
                 "MS-MQDMPR/3.1.4.5/R14", "MS-MQDMPR/3.1.4.5/R15", "MS-MQDMPR/3.1.4.5/R18",
                 "MS-MQDMPR/3.1.4.5/R19", "MS-MQDMPR/3.1.4.5/R20")
def test_aborted_transactional_receive_gives_the_message_to_a_waiting_reader(world):
    q = world.queue(transactional=True)
    desc, other = world.open(q), world.open(q)
    desc.context_value, other.context_value = 1, 2
    m = world.send(q)
    tx = _transaction(world)
    assert _receive(world, desc, tx).message is m
    waiting = _receive(world, other, timeout=INFINITE)  # the queue has nothing available
    assert isinstance(waiting, Pending)
    assert transaction_abort(world.env, "tx-1") == MQ_OK
    [done] = world.env.take_completions()
    assert done.token == waiting.token
    assert (done.result.status, done.result.message) == (MQ_OK, m)
    assert world.qm.transaction_collection == []
    assert check_invariants(world.qm) == []


def test_aborted_transactional_receive_puts_the_message_back(world):
    q = world.queue(transactional=True)
    desc = world.open(q)
    m = world.send(q)
    _receive(world, desc, _transaction(world))
    assert _available(q) == []
    transaction_abort(world.env, "tx-1")
    assert _available(q) == [m]
    assert _receive(world, desc).message is m


@pytest.mark.req("MS-MQDMPR/3.1.4.4/R5", "MS-MQDMPR/3.1.4.4/R6", "MS-MQDMPR/3.1.4.4/R7",
                 "MS-MQDMPR/3.1.4.4/R8", "MS-MQDMPR/3.1.4.4/R9")
def test_committed_transactional_send_makes_the_messages_available_in_order(world):
    q = world.queue(transactional=True)
    desc = world.open(q)
    waiting = _receive(world, desc, timeout=INFINITE)
    tx = _transaction(world)
    a, b = Message(body=b"a"), Message(body=b"b")
    enqueue_message(world.env, q, a, transaction=tx)
    enqueue_message(world.env, q, b, transaction=tx)
    assert world.env.take_completions() == []  # invisible before the commit
    assert transaction_commit(world.env, "tx-1") == MQ_OK
    [done] = world.env.take_completions()
    assert done.token == waiting.token and done.result.message is a
    assert _available(q) == [b]
    assert check_invariants(world.qm) == []


@pytest.mark.req("MS-MQDMPR/3.1.4.5/R16", "MS-MQDMPR/3.1.4.5/R17")
def test_aborted_transactional_send_removes_the_messages(world):
    q = world.queue(transactional=True)
    desc = world.open(q)
    tx = _transaction(world)
    m = Message(body=b"x")
    enqueue_message(world.env, q, m, transaction=tx)
    assert _messages(q) == [m]
    assert transaction_abort(world.env, "tx-1") == MQ_OK
    assert _messages(q) == [] and q.total_bytes == 0
    assert _receive(world, desc).status != MQ_OK
    assert check_invariants(world.qm) == []


@pytest.mark.req("MS-MQDMPR/3.1.4.4/R15", "MS-MQDMPR/3.1.4.4/R16", "MS-MQDMPR/3.1.4.4/R17",
                 "MS-MQDMPR/3.1.4.4/R18", "MS-MQDMPR/3.1.4.4/R19", "MS-MQDMPR/3.1.4.4/R20")
def test_committed_transactional_move_puts_the_message_in_the_target_queue(world):
    source, target = world.queue(".\\private$\\a"), world.queue(".\\private$\\b")
    m = world.send(source)
    old_position = m.message_position_reference
    move_message(world.env, old_position, target, transaction=_transaction(world))
    assert old_position.state is Locked and _available(target) == []
    assert transaction_commit(world.env, "tx-1") == MQ_OK
    assert old_position.state is Deleted
    assert _available(source) == [] and _available(target) == [m]
    assert m.message_position_reference.queue_reference is target
    assert _receive(world, world.open(target)).message is m
    assert check_invariants(world.qm) == []


def test_aborted_transactional_move_leaves_the_message_in_the_source_queue(world):
    source, target = world.queue(".\\private$\\a"), world.queue(".\\private$\\b")
    m = world.send(source)
    move_message(world.env, m.message_position_reference, target,
                 transaction=_transaction(world))
    assert transaction_abort(world.env, "tx-1") == MQ_OK
    assert _available(source) == [m] and _messages(target) == []


@pytest.mark.req("MS-MQDMPR/3.1.4.5/R7", "MS-MQDMPR/3.1.4.5/R8", "MS-MQDMPR/3.1.4.5/R9",
                 "MS-MQDMPR/3.1.4.5/R10", "MS-MQDMPR/3.1.4.5/R11")
def test_abort_deletes_a_received_message_that_a_purge_marked(world):
    q = world.queue(transactional=True)
    m = world.send(q)
    _receive(world, world.open(q), _transaction(world))
    m.message_position_reference.state = PurgePending  # as Purge Queue marks a locked message
    assert transaction_abort(world.env, "tx-1") == MQ_OK
    assert m.message_position_reference.state is Deleted
    assert _messages(q) == []


def test_commit_works_through_the_operations_first_in_first_out(world):
    q = world.queue(transactional=True)
    desc = world.open(q)
    old = world.send(q, b"old")
    tx = _transaction(world)
    _receive(world, desc, tx)
    new = Message(body=b"new")
    enqueue_message(world.env, q, new, transaction=tx)
    assert transaction_commit(world.env, "tx-1") == MQ_OK
    assert _messages(q) == [new] and old.message_position_reference.state is Deleted


# ---------------------------------------------------------------------------------------------
# 3.1.4.6-3.1.4.11 DTC
# ---------------------------------------------------------------------------------------------

@pytest.mark.req("MS-MQDMPR/3.1.4.6/R3", "MS-MQDMPR/3.1.4.6/R4", "MS-MQDMPR/3.1.4.6/R5",
                 "MS-MQDMPR/3.1.4.6/R6", "MS-MQDMPR/3.1.4.6/R7", "MS-MQDMPR/3.1.4.6/R8")
def test_dtc_two_phase_prepare_answers_prepare_done_and_waits_for_the_outcome(world):
    q = world.queue(transactional=True)
    tx = _transaction(world, "dtc-1", single_phase=True)
    m = Message(body=b"x")
    enqueue_message(world.env, q, m, transaction=tx)
    sent = dtc_transaction_prepare(world.env,
                                   DtcMessage(TXUSER_ENLISTMENT_MTAG_PREPAREREQ, "dtc-1"))
    assert sent == (DtcMessage(TXUSER_ENLISTMENT_MTAG_PREPAREREQDONE, "dtc-1",
                               prepare_req_done=TXUSER_ENLISTMENT_PREPAREREQDONE_OK),)
    assert tx.single_phase is False  # a DTC transaction
    assert m.first_in_transaction and m.last_in_transaction
    assert m.message_position_reference.state is Locked  # no outcome yet


@pytest.mark.req("MS-MQDMPR/3.1.4.6/R9", "MS-MQDMPR/3.1.4.7/R3", "MS-MQDMPR/3.1.4.7/R4",
                 "MS-MQDMPR/3.1.4.7/R5")
def test_dtc_single_phase_prepare_commits_at_once(world):
    q = world.queue(transactional=True)
    m = Message(body=b"x")
    enqueue_message(world.env, q, m, transaction=_transaction(world, "dtc-1"))
    sent = dtc_transaction_prepare(
        world.env, DtcMessage(TXUSER_ENLISTMENT_MTAG_PREPAREREQ, "dtc-1", single_phase=1))
    assert sent == (DtcMessage(TXUSER_ENLISTMENT_MTAG_COMMITREQDONE, "dtc-1"),)
    assert _available(q) == [m] and world.qm.transaction_collection == []


@pytest.mark.req("MS-MQDMPR/3.1.4.6/R10", "MS-MQDMPR/3.1.4.6/R11", "MS-MQDMPR/3.1.4.8/R5")
def test_dtc_prepare_of_an_unknown_transaction_answers_abort_done(world):
    sent = dtc_transaction_prepare(world.env,
                                   DtcMessage(TXUSER_ENLISTMENT_MTAG_PREPAREREQ, "unknown"))
    assert sent == (DtcMessage(TXUSER_ENLISTMENT_MTAG_ABORTREQDONE, "unknown"),)


def test_dtc_commit_after_prepare_delivers_the_message(world):
    q = world.queue(transactional=True)
    m = Message(body=b"x")
    enqueue_message(world.env, q, m, transaction=_transaction(world, "dtc-1"))
    dtc_transaction_prepare(world.env, DtcMessage(TXUSER_ENLISTMENT_MTAG_PREPAREREQ, "dtc-1"))
    sent = dtc_transaction_commit(world.env,
                                  DtcMessage(TXUSER_ENLISTMENT_MTAG_COMMITREQ, "dtc-1"))
    assert sent == (DtcMessage(TXUSER_ENLISTMENT_MTAG_COMMITREQDONE, "dtc-1"),)
    assert _available(q) == [m]


@pytest.mark.req("MS-MQDMPR/3.1.4.8/R3", "MS-MQDMPR/3.1.4.8/R4", "MS-MQDMPR/3.1.4.8/R5")
def test_dtc_abort_returns_a_received_message(world):
    q = world.queue(transactional=True)
    m = world.send(q)
    _receive(world, world.open(q), _transaction(world, "dtc-1", single_phase=False))
    sent = dtc_transaction_abort(world.env,
                                 DtcMessage(TXUSER_ENLISTMENT_MTAG_ABORTREQ, "dtc-1"))
    assert sent == (DtcMessage(TXUSER_ENLISTMENT_MTAG_ABORTREQDONE, "dtc-1"),)
    assert _available(q) == [m]


def test_dtc_reenlistment_commit_and_abort_resolve_in_doubt_transactions(world):
    q = world.queue(transactional=True)
    desc = world.open(q)
    kept, returned = world.send(q, b"1"), world.send(q, b"2")
    _receive(world, desc, _transaction(world, "t-commit", single_phase=False))
    _receive(world, desc, _transaction(world, "t-abort", single_phase=False))
    dtc_reenlistment_commit(world.env, DtcTransactionObject("t-commit"))
    dtc_reenlistment_abort(world.env, DtcTransactionObject("t-abort"))
    assert kept.message_position_reference.state is Deleted
    assert _available(q) == [returned]
    assert world.qm.transaction_collection == []
    assert dtc_reenlistment_timeout(world.env) == REENLISTMENT_TIMEOUT


# ---------------------------------------------------------------------------------------------
# 3.1.3 Initialization
# ---------------------------------------------------------------------------------------------

DOMAIN_GUID = uuid.UUID("11111111-2222-4333-8444-555555555555")
SITE = uuid.UUID("66666666-7777-4888-8999-aaaaaaaaaaaa")
# odd moduli of exactly 512 and 1024 bits (not real keys: the model checks what a public key
# shows of PKCS #1's validity condition, not that the modulus has two prime factors)
KEY_512 = RsaPublicKey((1 << 511) | 0x1234567 | 1)
KEY_1024 = RsaPublicKey((1 << 1023) | 0x7654321 | 1)
KEYS = {name: (KEY_512 if bits == 512 else KEY_1024)
        for name, bits, _ in CRYPTOGRAPHIC_SERVICE_PROVIDERS}


def _host(**kw) -> Host:
    defaults: dict[str, Any] = dict(domain_guid=DOMAIN_GUID, dns_domain_name="corp.example",
                                    domain_name="MQREF")
    defaults.update(kw)
    return Host(**defaults)


def _parse_keys(blob: bytes) -> list[tuple[str, int, int, int]]:
    """(provider name, provider type, bitLen, pubExp) of each MQDSPUBLICKEY."""
    length, count = struct.unpack_from("<II", blob)
    assert length == len(blob)
    out, at = [], 8
    for _ in range(count):
        key_len, name_len, provider_type = struct.unpack_from("<III", blob, at)
        at += 12
        name = blob[at:at + name_len].decode("utf-16-le")
        assert name.endswith("\0")
        at += name_len
        b_type, b_version, _, alg, magic, bits, exp = struct.unpack_from("<BBHIIII", blob, at)
        assert (b_type, b_version, alg, magic) == (0x06, 0x02, 0xA400, 0x31415352)
        assert key_len == 20 + bits // 8
        at += key_len
        out.append((name[:-1], provider_type, bits, exp))
    assert at == len(blob)
    return out


@pytest.mark.req("MS-MQDMPR/3.1.3/R1", "MS-MQDMPR/3.1.3/R2", "MS-MQDMPR/3.1.3/R3",
                 "MS-MQDMPR/3.1.3/R4", "MS-MQDMPR/3.1.3/R5", "MS-MQDMPR/3.1.3/R6")
def test_initialization_takes_the_computer_names_from_the_lsa(world):
    result = initialization(world.env, False, _host(policy_handle="h1"))
    assert result.completed
    assert world.qm.machine_domain_id == DOMAIN_GUID
    assert world.qm.computer_name == "MQREF"
    assert world.qm.qualified_computer_name == "MQREF.corp.example"
    assert [(r.name, dict(r.arguments).get("InformationClass")) for r in result.requests] == [
        ("LsarOpenPolicy2", None),
        ("LsarQueryInformationPolicy2", "PolicyDnsDomainInformation"),
        ("LsarQueryInformationPolicy2", "PolicyLocalAccountDomainInformation"),
        ("LsarClose", None)]
    assert dict(result.requests[0].arguments) == {
        "SystemName": "", "DesiredAccess": "POLICY_VIEW_LOCAL_INFORMATION"}
    assert all(dict(r.arguments)["PolicyHandle"] == "h1" for r in result.requests[1:])


@pytest.mark.parametrize("failing", ["open_policy_status", "dns_domain_status",
                                     "account_domain_status"])
def test_initialization_takes_no_further_action_when_the_lsa_fails(world, failing):
    result = initialization(world.env, False, _host(**{failing: STATUS_ACCESS_DENIED}))
    assert not result.completed and "0xc0000022" in result.reason
    assert world.qm.system_deadletter_queue is None  # nothing after the failed call
    assert result.requests[-1].name != "LsarClose"


@pytest.mark.req("MS-MQDMPR/3.1.3/R15")
def test_initialization_creates_the_system_queues_once(world):
    qm = world.qm
    initialization(world.env, False, _host())
    system = [qm.system_deadletter_queue, qm.system_transactional_deadletter_queue,
              qm.system_journal_queue]
    hidden = [qm.order_acknowledgment_queue, qm.change_notification_queue]
    assert all(q.queue_type is QueueType.System and q.queue_manager is qm
               for q in system + hidden)
    assert len({id(q) for q in system + hidden}) == 5
    assert qm.system_transactional_deadletter_queue.transactional
    assert all(q in qm.queue_collection for q in system)
    assert not any(q in qm.queue_collection for q in hidden)  # not reachable by applications
    initialization(world.env, False, _host())  # a restart keeps the same queues
    assert [qm.system_deadletter_queue, qm.system_transactional_deadletter_queue,
            qm.system_journal_queue] == system
    assert len(qm.queue_collection) == 3


def test_initialization_sets_the_state_of_outgoing_queues(world):
    def outgoing(state, format_name):
        q = OutgoingQueue(queue_type=QueueType.Private, state=state,
                          destination_format_name=format_name, queue_manager=world.qm)
        world.qm.queue_collection.append(q)
        return q

    locked = outgoing(OutgoingQueueState.Locked, "DIRECT=OS:other\\q")
    initialization(world.env, False, _host())
    assert locked.state is OutgoingQueueState.Waiting
    world.qm.hardened_security = True
    tcp = outgoing(OutgoingQueueState.Inactive, "DIRECT=TCP:10.0.0.1\\q")
    http = outgoing(OutgoingQueueState.Inactive, "DIRECT=HTTP://other/msmq/q")
    initialization(world.env, False, _host())
    assert tcp.state is OutgoingQueueState.Locked and locked.state is OutgoingQueueState.Locked
    assert http.state is OutgoingQueueState.Inactive


@pytest.mark.req("MS-MQDMPR/3.1.3/R7", "MS-MQDMPR/3.1.3/R8", "MS-MQDMPR/3.1.3/R9",
                 "MS-MQDMPR/3.1.3/R10", "MS-MQDMPR/3.1.3/R11", "MS-MQDMPR/3.1.3/R12",
                 "MS-MQDMPR/3.1.3/R13", "MS-MQDMPR/3.1.3/R14")
def test_directory_integrated_provisioning_sets_up_the_directory_attributes(world, monkeypatch):
    monkeypatch.setitem(sys.modules, "mqconform.model.directory", types.ModuleType("mqconform.model.directory"))
    qm = world.qm
    qm.directory_integrated, qm.initialization_retry_timer_duration = True, 30
    result = initialization(world.env, True, _host(
        site_identifier=SITE, domain_controllers=("dc1.corp.example", "dc2.corp.example"),
        encryption_keys=KEYS, signing_keys=KEYS))
    assert result.completed
    assert qm.initialization_retry_timer_duration == 120
    assert qm.site_identifier_list == [SITE]
    assert qm.directory_server_list == ["dc1.corp.example", "dc2.corp.example"]
    names = [r.name for r in result.requests]
    assert ("SRV", "_ldap._tcp.dc._msdcs.corp.example") in result.requests[4].arguments
    assert "Start the Directory Server List Update Timer ([MS-MQSO] 6.4.1.2)" in names
    expected = [("Microsoft Base Cryptographic Provider v1.0", 0x01, 512, 65537),
                ("Microsoft Enhanced Cryptographic Provider v1.0", 0x01, 1024, 65537),
                ("Microsoft Enhanced RSA and AES Cryptographic Provider", 0x18, 1024, 65537)]
    assert _parse_keys(qm.public_encryption_key_list) == expected
    assert _parse_keys(qm.public_signing_key_list) == expected
    # a directory module without its events: the steps that need them are reported
    assert len(result.skipped) == 3


@pytest.mark.req("MS-MQDMPR/3.1.3/R11", "MS-MQDMPR/3.1.3/R16")
def test_a_key_of_the_wrong_length_is_an_error_raised_to_the_caller(world):
    world.qm.directory_integrated = True
    keys = dict(KEYS)
    keys["Microsoft Enhanced Cryptographic Provider v1.0"] = KEY_512
    result = initialization(world.env, True, _host(encryption_keys=keys))
    assert not result.completed and "512 bits, not 1024" in result.reason
    assert world.qm.public_encryption_key_list == b""


def test_a_workgroup_queue_manager_leaves_the_directory_alone(world):
    result = initialization(world.env, True, _host(site_identifier=SITE,
                                                   encryption_keys=KEYS))
    assert result.completed and result.skipped == ()
    assert world.qm.site_identifier_list == [] and world.qm.public_encryption_key_list == b""


@dataclass
class _Read:
    status: DirectoryOperationResult
    directory_object: Any = None


def _fake_directory(monkeypatch, answers: dict[str, _Read]):
    calls, started = [], []
    fake = types.ModuleType("mqconform.model.directory")

    def read_directory(env, directory_object_type, filter=None, attribute_list=None):
        calls.append((directory_object_type, filter, attribute_list))
        return answers[directory_object_type]

    fake.read_directory = read_directory
    fake.directory_sites_update_timer_start = lambda env: started.append("sites")
    fake.directory_site_gates_update_timer_start = lambda env: started.append("site gates")
    monkeypatch.setitem(sys.modules, "mqconform.model.directory", fake)
    monkeypatch.setattr(model, "directory", fake, raising=False)
    return calls, started


def test_initialization_synchronizes_with_the_directory_and_starts_its_timers(world,
                                                                             monkeypatch):
    qm = world.qm
    qm.directory_integrated, qm.identifier = True, uuid.uuid4()
    in_directory = QueueManager(identifier=qm.identifier, computer_name="MQREF",
                                site_identifier_list=[SITE], routing_server=True)
    site = Site(identifier=SITE, name="Default-First-Site")
    calls, started = _fake_directory(monkeypatch, {
        "QueueManager": _Read(DirectoryOperationResult.Success, in_directory),
        "Site": _Read(DirectoryOperationResult.Success, site),
        "Enterprise": _Read(DirectoryOperationResult.AttributeNotFound)})
    result = initialization(world.env, False, _host())
    assert result.completed and result.skipped == ()
    assert calls[0] == ("QueueManager", (("Identifier", "EQUALS", qm.identifier),), None)
    assert calls[1] == ("Site", (("Identifier", "EQUALS", SITE),), None)
    assert calls[2] == ("Enterprise", None, ("NonLDAPCapableQueueManagerNotification",))
    assert qm.routing_server and qm.site_collection == [site]
    assert isinstance(qm.enterprise_reference, Enterprise)
    assert qm.enterprise_reference.non_ldap_capable_queue_manager_notification
    assert started == ["sites", "site gates"]
    assert check_invariants(qm) == []


@pytest.mark.req("MS-MQDMPR/3.1.3/R16")
def test_an_unhandled_directory_result_is_raised_to_the_caller(world, monkeypatch):
    world.qm.directory_integrated = True
    world.qm.site_identifier_list = [SITE]
    answers = {"QueueManager": _Read(DirectoryOperationResult.Success, QueueManager(
                   site_identifier_list=[SITE])),
               "Site": _Read(DirectoryOperationResult.ObjectNotFound),
               "Enterprise": _Read(DirectoryOperationResult.Success, Enterprise())}
    _fake_directory(monkeypatch, answers)
    assert initialization(world.env, True, _host()).completed  # provisioning: carry on
    result = initialization(world.env, False, _host())
    assert not result.completed and "ObjectNotFound" in result.reason


def test_initialization_applies_the_outcome_of_dtc_recovery_and_aborts_non_dtc_work(world):
    q = world.queue(transactional=True)
    desc = world.open(q)
    committed, aborted, local = (world.send(q, b"1"), world.send(q, b"2"),
                                 world.send(q, b"3"))
    _receive(world, desc, _transaction(world, "dtc-c", single_phase=False))
    _receive(world, desc, _transaction(world, "dtc-a", single_phase=False))
    _receive(world, desc, _transaction(world, "local", single_phase=True))
    in_doubt = _transaction(world, "dtc-unresolved", single_phase=False)
    result = initialization(world.env, False, _host(reenlistment=(
        (DtcTransactionObject("dtc-c"), ReenlistmentOutcome.Committed),
        (DtcTransactionObject("dtc-a"), ReenlistmentOutcome.Aborted))))
    assert result.completed
    assert committed.message_position_reference.state is Deleted
    assert _available(q) == [aborted, local]
    assert world.qm.transaction_collection == [in_doubt]


def test_a_reenlistment_timeout_stops_initialization(world):
    q = world.queue(transactional=True)
    m = world.send(q)
    _receive(world, world.open(q), _transaction(world, "local", single_phase=True))
    result = initialization(world.env, False, _host(reenlistment=(
        (DtcTransactionObject("dtc-x"), ReenlistmentOutcome.Timeout),)))
    assert not result.completed and result.reason == REENLISTMENT_TIMEOUT
    assert m.message_position_reference.state is Locked  # the non-DTC abort never ran


# ---------------------------------------------------------------------------------------------
# 3.1.4.1 Queue Manager Started, 3.1.4.2 Queue Manager Stopped
# ---------------------------------------------------------------------------------------------

@pytest.mark.req("MS-MQDMPR/3.1.4.1/R1", "MS-MQDMPR/3.1.4.1/R2", "MS-MQDMPR/3.1.4.1/R3")
def test_queue_manager_started_initializes_and_becomes_ready(world):
    result = queue_manager_started(world.env, _host())
    assert result.completed
    assert world.qm.queue_manager_state is QueueManagerState.Ready
    assert world.qm.system_journal_queue is not None


def test_a_start_whose_initialization_fails_stays_initializing(world):
    queue_manager_started(world.env, _host(open_policy_status=STATUS_ACCESS_DENIED))
    assert world.qm.queue_manager_state is QueueManagerState.Initializing


@pytest.mark.req("MS-MQDMPR/3.1.4.2/R1")
def test_stop_and_restart_keep_recoverable_messages_and_undo_local_transactions(world):
    queue_manager_started(world.env, _host())
    q = world.queue(transactional=True)
    desc = world.open(q)
    kept = world.send(q, b"kept", delivery_guarantee=MessageDeliveryGuarantee.Recoverable)
    taken = world.send(q, b"taken", delivery_guarantee=MessageDeliveryGuarantee.Recoverable)
    _receive(world, desc, _transaction(world, "local", single_phase=True))  # takes `kept`
    queue_manager_stopped(world.env)
    assert world.qm.queue_manager_state is QueueManagerState.Stopped
    assert _messages(q) == [kept, taken]  # nothing persistent is dropped
    assert world.qm.transaction_collection != []
    assert queue_manager_started(world.env, _host()).completed
    assert world.qm.queue_manager_state is QueueManagerState.Ready
    assert _available(q) == [kept, taken] and world.qm.transaction_collection == []
    assert _receive(world, desc).message is kept
    assert check_invariants(world.qm) == []


# ---------------------------------------------------------------------------------------------
# 3.1.4.12-3.1.4.15
# ---------------------------------------------------------------------------------------------

@pytest.mark.req("MS-MQDMPR/3.1.4.12/R1", "MS-MQDMPR/3.1.4.12/R2", "MS-MQDMPR/3.1.4.12/R3",
                 "MS-MQDMPR/3.1.4.13/R1", "MS-MQDMPR/3.1.4.13/R2", "MS-MQDMPR/3.1.4.13/R3")
def test_take_offline_and_bring_online_switch_connection_active_only(world):
    q = world.queue()
    m = world.send(q, delivery_guarantee=MessageDeliveryGuarantee.Recoverable)
    bring_online(world.env)
    assert world.qm.connection_active is True
    take_offline(world.env)
    assert world.qm.connection_active is False
    assert _available(q) == [m]  # nothing is lost offline
    bring_online(world.env)
    assert world.qm.connection_active is True


@pytest.mark.req("MS-MQDMPR/3.1.4.14/R1", "MS-MQDMPR/3.1.4.14/R2", "MS-MQDMPR/3.1.4.14/R3",
                 "MS-MQDMPR/3.1.4.14/R4", "MS-MQDMPR/3.1.4.15/R1", "MS-MQDMPR/3.1.4.15/R2",
                 "MS-MQDMPR/3.1.4.15/R3", "MS-MQDMPR/3.1.4.15/R4")
def test_pause_and_resume_an_outgoing_queue(world):
    q = OutgoingQueue(queue_type=QueueType.Private, state=OutgoingQueueState.Connected,
                      destination_format_name="DIRECT=OS:other\\q", queue_manager=world.qm)
    pause_queue(q)
    assert q.state is OutgoingQueueState.OnHold
    resume_queue(q)
    assert q.state is OutgoingQueueState.Inactive


def test_initialization_against_the_model_directory(world):
    directory = pytest.importorskip("mqconform.model.directory")
    qm = world.qm
    qm.directory_integrated = True
    service = directory.Directory(world.env)
    qm.identifier = service.add(QueueManager(computer_name="MQREF", site_identifier_list=[SITE],
                                             routing_server=True))
    service.add(Site(identifier=SITE, name="Default-First-Site"))
    service.add(Enterprise(name="corp", non_ldap_capable_queue_manager_notification=True))
    result = initialization(world.env, False, _host())
    assert result.completed and result.skipped == ()
    assert qm.routing_server and [s.name for s in qm.site_collection] == ["Default-First-Site"]
    assert qm.enterprise_reference.non_ldap_capable_queue_manager_notification
    assert world.env.timer_deadline(directory.DIRECTORY_SITES_UPDATE_TIMER) is not None
    assert world.env.timer_deadline(directory.DIRECTORY_SITE_GATES_UPDATE_TIMER) is not None


def test_an_unreachable_directory_stops_initialization_for_a_retry(world):
    directory = pytest.importorskip("mqconform.model.directory")
    world.qm.directory_integrated = True
    world.qm.site_identifier_list = [SITE]
    directory.Directory(world.env, connected=False)
    result = initialization(world.env, False, _host())
    assert not result.completed and "DirectoryNotConnected" in result.reason
    assert world.qm.directory_offline  # as Read Directory records it
