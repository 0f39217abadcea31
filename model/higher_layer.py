"""MS-MQDMPR 3.1.3 Initialization and 3.1.4 Higher-Layer Triggered Events (3.1.4.1-3.1.4.15).
3.1.5 Processing Events and Sequencing Rules says "None": it has no rules to transcribe.

How the sections fit together:

* Transactions (3.1.4.3-3.1.4.5). The message operations (model/message_ops.py) record what a
  transaction does as TransactionalOperations (Enqueue, Dequeue, Move) on a Transaction of
  LocalQueueManager.TransactionCollection, with the message positions Locked. Transaction
  Commit makes that work take effect (enqueued messages become Available, dequeued ones are
  deleted, moved ones reach their target queue); Transaction Abort undoes it (dequeued and
  moved messages become Available again, enqueued ones leave their queue). Both go through the
  consumed events Message Position Available and Message Position Deleted (model/consumed.py),
  so an aborted receive wakes a reader that waits on the queue.
* DTC (3.1.4.6-3.1.4.11). The queue manager is a resource manager of MS-DTCO (3.5); MS-DTCO
  itself is outside the model. A message from the transaction manager arrives as a
  :class:`DtcMessage` that already carries the Transaction Object.Identifier the resource
  manager's Durable Log gives for it (MS-DTCO 3.5.1), and each event returns the user messages
  the queue manager sends back to its local transaction manager.
* Initialization (3.1.3), Queue Manager Started and Stopped (3.1.4.1, 3.1.4.2). Initialization
  needs answers from outside the model: the local security authority ([MS-LSAD]), DNS, the
  cryptographic service providers' keys and the outcome of DTC recovery. They come in as one
  :class:`Host` value; the calls the section makes outside the model are listed, in order, in
  the :class:`InitializationResult`. The directory events and timers (Read Directory 3.1.7.1.20;
  the timers of 3.1.2.1 and 3.1.2.2) live in model/directory.py, which is written separately:
  they are looked up there when the module exists, and the steps that need them are reported
  as skipped when it does not (see :func:`_directory`).
* Take Offline, Bring Online, Pause Queue, Resume Queue (3.1.4.12-3.1.4.15): one step each.

Nothing here discards state the document keeps: Queue Manager Stopped and Take Offline change
one attribute each, so Recoverable messages (persistent, MS-MQDMPR 3.1.1.12) stay in the ADM,
and a later Initialization finds them there.
"""

from __future__ import annotations

import enum
import importlib
import importlib.util
import struct
import sys
from dataclasses import dataclass, field
from typing import Any

from mqconform.model.adm import (
    DIRECTORY_ATTRIBUTES,
    GUID,
    DirectoryObject,
    DirectoryOperationResult,
    Enterprise,
    MessagePosition,
    MessagePositionState,
    OutgoingQueue,
    OutgoingQueueState,
    Queue,
    QueueManager,
    QueueManagerState,
    QueueType,
    TransactionalOperationType,
)
from mqconform.model.consumed import (
    count_bytes,
    message_position_available,
    message_position_deleted,
    time_to_be_received_timer_key,
)
from mqconform.model.consumed import pause_queue as consumed_pause_queue
from mqconform.model.consumed import resume_queue as consumed_resume_queue
from mqconform.model.runtime import Environment
from mqconform.model.status import MQ_ERROR_TRANSACTION_SEQUENCE, MQ_OK, STATUS_SUCCESS

Enqueue = TransactionalOperationType.Enqueue
Dequeue = TransactionalOperationType.Dequeue
Move = TransactionalOperationType.Move
PurgePending = MessagePositionState.PurgePending


def _find_transaction(env: Environment, transaction_identifier: Any) -> Any:
    """The Transaction of LocalQueueManager.TransactionCollection whose Identifier matches."""
    for transaction in env.local_queue_manager.transaction_collection:
        if transaction.identifier == transaction_identifier:
            return transaction
    return None


def _index_position(queue: Any, position: Any) -> None:
    """Keep message_ops' lookup-identifier index of ``queue`` (when it has one) in step."""
    index = queue._positions_by_lookup_id
    if index is not None:
        index[position.message_reference.lookup_identifier] = position


def _unindex_position(queue: Any, position: Any) -> None:
    index = queue._positions_by_lookup_id
    lookup_id = position.message_reference.lookup_identifier
    if index is not None and index.get(lookup_id) is position:
        del index[lookup_id]


# ---------------------------------------------------------------------------------------------
# 3.1.4.3 Transaction Prepare
# ---------------------------------------------------------------------------------------------

def transaction_prepare(env: Environment, transaction_identifier: Any,
                        single_phase: bool = True) -> int:
    """MS-MQDMPR 3.1.4.3 Transaction Prepare (MS-MQDMPR/3.1.4.3/R1 MS-MQDMPR/3.1.4.3/R2).
    Returns rStatus: MQ_OK or MQ_ERROR_TRANSACTION_SEQUENCE."""
    trans_obj = _find_transaction(env, transaction_identifier)  # MS-MQDMPR/3.1.4.3/R3
    if trans_obj is None:  # MS-MQDMPR/3.1.4.3/R5
        return MQ_ERROR_TRANSACTION_SEQUENCE  # MS-MQDMPR/3.1.4.3/R5
    # The document sets SinglePhase before it checks that transObj was found; SinglePhase can
    # only be set on a transaction that exists, so the check comes first.
    trans_obj.single_phase = single_phase  # MS-MQDMPR/3.1.4.3/R4
    operations = trans_obj.transactional_operation_collection
    if operations:  # an empty collection has no first or last operation to mark
        first = operations[0].message_position_reference.message_reference
        first.first_in_transaction = True  # MS-MQDMPR/3.1.4.3/R6
        last = operations[-1].message_position_reference.message_reference
        last.last_in_transaction = True  # MS-MQDMPR/3.1.4.3/R7
    return MQ_OK  # MS-MQDMPR/3.1.4.3/R8


# ---------------------------------------------------------------------------------------------
# 3.1.4.4 Transaction Commit
# ---------------------------------------------------------------------------------------------

def _left_the_queue(trans_op: Any) -> bool:
    """A Dequeue or Move operation whose message position is Deleted already: MS-MQRR
    R_EndReceive with RR_ACK, given the dwRequestId of an R_StartTransactionalReceive, ends the
    dequeue outside the transaction (Dequeue Message End with iTransactional false deletes the
    position), and neither Transaction Commit nor Transaction Abort says what becomes of an
    operation whose message has left the queue. Taken literally, the commit deletes it a
    second time and the abort makes a message that is gone Available again (errata
    end-receive-of-transactional-receive): the model lets the operation end with nothing
    more to do."""
    return (trans_op.operation_type in (Dequeue, Move)
            and trans_op.message_position_reference.state is MessagePositionState.Deleted)


def transaction_commit(env: Environment, transaction_identifier: Any) -> int:
    """MS-MQDMPR 3.1.4.4 Transaction Commit (MS-MQDMPR/3.1.4.4/R1 MS-MQDMPR/3.1.4.4/R2).
    Returns rStatus: MQ_OK or MQ_ERROR_TRANSACTION_SEQUENCE."""
    trans_obj = _find_transaction(env, transaction_identifier)  # MS-MQDMPR/3.1.4.4/R3
    if trans_obj is None:  # MS-MQDMPR/3.1.4.4/R4
        return MQ_ERROR_TRANSACTION_SEQUENCE  # MS-MQDMPR/3.1.4.4/R4
    operations = trans_obj.transactional_operation_collection
    for trans_op in list(operations):  # MS-MQDMPR/3.1.4.4/R5 (first-in, first-out)
        position = trans_op.message_position_reference
        if _left_the_queue(trans_op):  # errata end-receive-of-transactional-receive
            operations.remove(trans_op)
            continue
        if trans_op.operation_type is Enqueue:  # MS-MQDMPR/3.1.4.4/R6
            message_position_available(env,  # MS-MQDMPR/3.1.4.4/R7
                                       queue=position.queue_reference,  # MS-MQDMPR/3.1.4.4/R8
                                       position=position)  # MS-MQDMPR/3.1.4.4/R9
        elif trans_op.operation_type is Dequeue:  # MS-MQDMPR/3.1.4.4/R10
            message_position_deleted(env,  # MS-MQDMPR/3.1.4.4/R11
                                     queue=position.queue_reference,  # MS-MQDMPR/3.1.4.4/R12
                                     position=position,  # MS-MQDMPR/3.1.4.4/R13
                                     reason=trans_op.dequeue_reason)  # MS-MQDMPR/3.1.4.4/R14
        elif trans_op.operation_type is Move:  # MS-MQDMPR/3.1.4.4/R15
            position.state = MessagePositionState.Deleted  # MS-MQDMPR/3.1.4.4/R16
            count_bytes(position.queue_reference, position, False)  # it left its queue
            target = trans_op.target_queue_reference
            message = position.message_reference
            # MS-MQDMPR/3.1.4.4/R17: created in the target queue by the list's rules
            new_message_pos = MessagePosition(message_reference=message, queue_reference=target)
            target.message_position_list.insert(new_message_pos)
            # bookkeeping as Move Message (3.1.7.1.16) keeps it: the message references its
            # new position, and the lookup indexes follow it
            message.message_position_reference = new_message_pos
            _unindex_position(position.queue_reference, position)
            _index_position(target, new_message_pos)
            message_position_available(env,  # MS-MQDMPR/3.1.4.4/R18
                                       queue=target,  # MS-MQDMPR/3.1.4.4/R19
                                       position=new_message_pos)  # MS-MQDMPR/3.1.4.4/R20
        operations.remove(trans_op)  # MS-MQDMPR/3.1.4.4/R21
    env.local_queue_manager.transaction_collection.remove(trans_obj)  # MS-MQDMPR/3.1.4.4/R22
    return MQ_OK  # MS-MQDMPR/3.1.4.4/R23


# ---------------------------------------------------------------------------------------------
# 3.1.4.5 Transaction Abort
# ---------------------------------------------------------------------------------------------

def transaction_abort(env: Environment, transaction_identifier: Any) -> int:
    """MS-MQDMPR 3.1.4.5 Transaction Abort (MS-MQDMPR/3.1.4.5/R1 MS-MQDMPR/3.1.4.5/R2).
    Returns rStatus: MQ_OK or MQ_ERROR_TRANSACTION_SEQUENCE."""
    trans_obj = _find_transaction(env, transaction_identifier)  # MS-MQDMPR/3.1.4.5/R3
    if trans_obj is None:  # MS-MQDMPR/3.1.4.5/R4
        return MQ_ERROR_TRANSACTION_SEQUENCE  # MS-MQDMPR/3.1.4.5/R4
    operations = trans_obj.transactional_operation_collection
    for trans_op in list(operations):  # MS-MQDMPR/3.1.4.5/R5 (first-in, first-out)
        position = trans_op.message_position_reference
        if _left_the_queue(trans_op):  # errata end-receive-of-transactional-receive
            operations.remove(trans_op)
            continue
        if trans_op.operation_type in (Dequeue, Move):  # MS-MQDMPR/3.1.4.5/R6
            queue = position.queue_reference
            if position.state is PurgePending:  # MS-MQDMPR/3.1.4.5/R7
                # For a Move, DequeueReason is undefined (3.1.1.13): the document passes it
                # all the same, and so does the model (None).
                message_position_deleted(env,  # MS-MQDMPR/3.1.4.5/R8
                                         queue=queue,  # MS-MQDMPR/3.1.4.5/R9
                                         position=position,  # MS-MQDMPR/3.1.4.5/R10
                                         reason=trans_op.dequeue_reason)  # MS-MQDMPR/3.1.4.5/R11
            else:  # MS-MQDMPR/3.1.4.5/R12
                message_position_available(env,  # MS-MQDMPR/3.1.4.5/R13
                                           queue=queue,  # MS-MQDMPR/3.1.4.5/R14
                                           position=position)  # MS-MQDMPR/3.1.4.5/R15
        else:  # MS-MQDMPR/3.1.4.5/R16: Enqueue
            queue = position.queue_reference
            queue.message_position_list.remove(position)  # MS-MQDMPR/3.1.4.5/R17
            # bookkeeping only: the lookup index and the Time To Be Received timer that Enqueue
            # Message started must not outlive the position
            _unindex_position(queue, position)
            env.cancel_timer(time_to_be_received_timer_key(position.message_reference))
        operations.remove(trans_op)  # MS-MQDMPR/3.1.4.5/R18
    env.local_queue_manager.transaction_collection.remove(trans_obj)  # MS-MQDMPR/3.1.4.5/R19
    return MQ_OK  # MS-MQDMPR/3.1.4.5/R20


# ---------------------------------------------------------------------------------------------
# 3.1.4.6-3.1.4.11 DTC events ([MS-DTCO] outside the model)
# ---------------------------------------------------------------------------------------------

#: CONNTYPE_TXUSER_ENLISTMENT user messages ([MS-DTCO] 2.2.10.2.2.x) these events read and send
TXUSER_ENLISTMENT_MTAG_ABORTREQ = "TXUSER_ENLISTMENT_MTAG_ABORTREQ"  # 2.2.10.2.2.1
TXUSER_ENLISTMENT_MTAG_ABORTREQDONE = "TXUSER_ENLISTMENT_MTAG_ABORTREQDONE"  # 2.2.10.2.2.2
TXUSER_ENLISTMENT_MTAG_COMMITREQ = "TXUSER_ENLISTMENT_MTAG_COMMITREQ"  # 2.2.10.2.2.3
TXUSER_ENLISTMENT_MTAG_COMMITREQDONE = "TXUSER_ENLISTMENT_MTAG_COMMITREQDONE"  # 2.2.10.2.2.4
TXUSER_ENLISTMENT_MTAG_PREPAREREQ = "TXUSER_ENLISTMENT_MTAG_PREPAREREQ"  # 2.2.10.2.2.11
TXUSER_ENLISTMENT_MTAG_PREPAREREQDONE = "TXUSER_ENLISTMENT_MTAG_PREPAREREQDONE"  # 2.2.10.2.2.12

#: [MS-DTCO] 2.2.6.3 TXUSER_ENLISTMENT_PREPAREREQDONE_RESPONSE, the prepareReqDone field of
#: TXUSER_ENLISTMENT_MTAG_PREPAREREQDONE (2.2.10.2.2.12)
TXUSER_ENLISTMENT_PREPAREREQDONE_OK = 0  # prepared; the enlistment needs the outcome
TXUSER_ENLISTMENT_PREPAREREQDONE_ABORT = 1
TXUSER_ENLISTMENT_PREPAREREQDONE_READONLY = 2
TXUSER_ENLISTMENT_PREPAREREQDONE_SINGLEPHASE_COMMIT = 3


@dataclass(frozen=True)
class DtcMessage:
    """A user message on the queue manager's enlistment connection with its local transaction
    manager ([MS-DTCO] 2.2.10.2.2), reduced to what the events read and write.

    ``transaction_identifier`` is the Transaction Object.Identifier that the resource manager's
    Durable Log gives for the enlistment the message belongs to ([MS-DTCO] 3.5.1): the resource
    manager (outside the model) resolves it and hands it in with the message."""

    mtag: str
    transaction_identifier: Any
    single_phase: int = 0  # fSinglePhase of PREPAREREQ: nonzero allows single-phase commit
    prepare_req_done: int | None = None  # prepareReqDone of PREPAREREQDONE


@dataclass(frozen=True)
class DtcTransactionObject:
    """[MS-DTCO] 3.1.1 Transaction Object, of which these events read the Identifier field."""

    identifier: Any


def dtc_transaction_prepare(env: Environment, tx_message: DtcMessage) -> tuple[DtcMessage, ...]:
    """MS-MQDMPR 3.1.4.6 DTC Transaction Prepare (MS-MQDMPR/3.1.4.6/R1 MS-MQDMPR/3.1.4.6/R2).
    ``tx_message`` is lTxMessage, a TXUSER_ENLISTMENT_MTAG_PREPAREREQ. Returns the messages
    sent to the local transaction manager (the event itself returns nothing)."""
    status = transaction_prepare(
        env,  # MS-MQDMPR/3.1.4.6/R3
        transaction_identifier=tx_message.transaction_identifier,  # MS-MQDMPR/3.1.4.6/R4
        single_phase=False)  # MS-MQDMPR/3.1.4.6/R5
    if status == MQ_OK:  # MS-MQDMPR/3.1.4.6/R6
        if tx_message.single_phase == 0:  # MS-MQDMPR/3.1.4.6/R7
            # prepareReqDone: the section names no value; the prepare succeeded and the
            # queue manager waits for the outcome, which is PREPAREREQDONE_OK ([MS-DTCO] 2.2.6.3)
            return (DtcMessage(TXUSER_ENLISTMENT_MTAG_PREPAREREQDONE,  # MS-MQDMPR/3.1.4.6/R8
                               tx_message.transaction_identifier,
                               prepare_req_done=TXUSER_ENLISTMENT_PREPAREREQDONE_OK),)
        # A single-phase prepare commits at once and answers COMMITREQDONE, as the section
        # says (not PREPAREREQDONE_SINGLEPHASE_COMMIT, which [MS-DTCO] 2.2.6.3 also defines).
        return dtc_transaction_commit(env, tx_message)  # MS-MQDMPR/3.1.4.6/R9
    # MS-MQDMPR/3.1.4.6/R10
    return dtc_transaction_abort(env, tx_message)  # MS-MQDMPR/3.1.4.6/R11


def dtc_transaction_commit(env: Environment, tx_message: DtcMessage) -> tuple[DtcMessage, ...]:
    """MS-MQDMPR 3.1.4.7 DTC Transaction Commit (MS-MQDMPR/3.1.4.7/R1 MS-MQDMPR/3.1.4.7/R2).
    ``tx_message`` is lTxMessage (TXUSER_ENLISTMENT_MTAG_COMMITREQ, or the PREPAREREQ of a
    single-phase prepare). Returns the messages sent to the local transaction manager."""
    identifier = tx_message.transaction_identifier  # MS-MQDMPR/3.1.4.7/R4
    transaction_commit(env,  # MS-MQDMPR/3.1.4.7/R3
                       transaction_identifier=identifier)
    return (DtcMessage(TXUSER_ENLISTMENT_MTAG_COMMITREQDONE,  # MS-MQDMPR/3.1.4.7/R5
                       identifier),)


def dtc_transaction_abort(env: Environment, tx_message: DtcMessage) -> tuple[DtcMessage, ...]:
    """MS-MQDMPR 3.1.4.8 DTC Transaction Abort (MS-MQDMPR/3.1.4.8/R1 MS-MQDMPR/3.1.4.8/R2).
    ``tx_message`` is lTxMessage (TXUSER_ENLISTMENT_MTAG_ABORTREQ, or the PREPAREREQ of a
    failed prepare). Returns the messages sent to the local transaction manager."""
    identifier = tx_message.transaction_identifier  # MS-MQDMPR/3.1.4.8/R4
    transaction_abort(env,  # MS-MQDMPR/3.1.4.8/R3
                      transaction_identifier=identifier)
    return (DtcMessage(TXUSER_ENLISTMENT_MTAG_ABORTREQDONE,  # MS-MQDMPR/3.1.4.8/R5
                       identifier),)


def dtc_reenlistment_commit(env: Environment, transaction_object: DtcTransactionObject) -> None:
    """MS-MQDMPR 3.1.4.9 DTC Reenlistment Commit: TXUSER_REENLIST_MTAG_REENLIST_COMMITTED
    received while recovering ``transaction_object`` (iTransactionObject, [MS-DTCO] 3.5.7.1).
    The catalog has no entries for this section (it has no MUST sentence)."""
    transaction_commit(env, transaction_identifier=transaction_object.identifier)


def dtc_reenlistment_abort(env: Environment, transaction_object: DtcTransactionObject) -> None:
    """MS-MQDMPR 3.1.4.10 DTC Reenlistment Abort: TXUSER_REENLIST_MTAG_REENLIST_ABORTED received
    while recovering ``transaction_object`` (iTransactionObject, [MS-DTCO] 3.5.7.1)."""
    transaction_abort(env, transaction_identifier=transaction_object.identifier)


#: the error DTC Reenlistment Timeout reports to the higher-layer application
REENLISTMENT_TIMEOUT = "DTC Reenlistment Timeout (MS-MQDMPR 3.1.4.11)"


def dtc_reenlistment_timeout(env: Environment) -> str:
    """MS-MQDMPR 3.1.4.11 DTC Reenlistment Timeout ([MS-DTCO] 3.5.7.5). Returns the error it
    reports to the higher-layer application; :func:`initialization` stops on it."""
    return REENLISTMENT_TIMEOUT


# ---------------------------------------------------------------------------------------------
# 3.1.3 Initialization: what the host answers, what the model asks of it
# ---------------------------------------------------------------------------------------------

class ReenlistmentOutcome(enum.Enum):
    """How [MS-DTCO]'s recovery of one transaction ended (3.1.3: the resource manager
    "notifies the queue manager regarding the outcome of reenlistment")."""

    Committed = "TXUSER_REENLIST_MTAG_REENLIST_COMMITTED"  # [MS-DTCO] 3.5.5.3.1.1 -> 3.1.4.9
    Aborted = "TXUSER_REENLIST_MTAG_REENLIST_ABORTED"  # [MS-DTCO] 3.5.5.3.1.2 -> 3.1.4.10
    Timeout = "Reenlistment Timeout"  # [MS-DTCO] 3.5.7.5 -> 3.1.4.11


@dataclass(frozen=True)
class RsaPublicKey:
    """An RSA public key (modulus n, public exponent e) that a cryptographic service provider
    generated for the queue manager; the model generates no keys (it draws no random numbers)."""

    modulus: int
    public_exponent: int = 65537


@dataclass(frozen=True)
class Host:
    """What the queue manager's host and neighbours answer during Initialization.

    The [MS-LSAD] results stand for the three calls 3.1.3 makes (a status and the fields it
    reads); ``domain_controllers`` for the answer to the DNS SRV query; ``site_identifier`` for
    the user-configured site GUID; the keys for what each CSP generated, by CSP name; and
    ``reenlistment`` for the outcome of [MS-DTCO] recovery, one entry per transaction of the
    resource manager's Durable Log, in the order recovery reports them."""

    open_policy_status: int = STATUS_SUCCESS  # LsarOpenPolicy2
    policy_handle: Any = "PolicyHandle"
    dns_domain_status: int = STATUS_SUCCESS  # LsarQueryInformationPolicy2, DNS domain
    domain_guid: GUID | None = None  # LSAPR_POLICY_DNS_DOMAIN_INFO.DomainGuid
    dns_domain_name: str = ""  # LSAPR_POLICY_DNS_DOMAIN_INFO.DnsDomainName
    account_domain_status: int = STATUS_SUCCESS  # LsarQueryInformationPolicy2, account domain
    domain_name: str = ""  # LSAPR_POLICY_ACCOUNT_DOM_INFO.DomainName
    site_identifier: GUID | None = None
    domain_controllers: tuple[str, ...] = ()
    encryption_keys: dict[str, RsaPublicKey] = field(default_factory=dict)
    signing_keys: dict[str, RsaPublicKey] = field(default_factory=dict)
    reenlistment: tuple[tuple[DtcTransactionObject, ReenlistmentOutcome], ...] = ()


@dataclass(frozen=True)
class HostRequest:
    """A call Initialization makes outside the model, with its arguments."""

    name: str
    arguments: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class InitializationResult:
    """How Initialization ended. ``completed`` is False when a step said "take no further
    action", when DTC Reenlistment Timeout stopped it, or when an error was raised to the
    caller (MS-MQDMPR/3.1.3/R16); ``reason`` says which. ``requests`` are the calls made outside
    the model, in order; ``skipped`` the steps left out because model/directory.py (Read
    Directory, the directory timers) is not there."""

    completed: bool
    reason: str = ""
    requests: tuple[HostRequest, ...] = ()
    skipped: tuple[str, ...] = ()


#: The CSPs of 3.1.3's two lists, with the key length the section gives each and the provider
#: type MQDSPUBLICKEY.ulProviderType names ([MS-MQMQ] 2.2.1: PROV_RSA_FULL 0x00000001 or
#: PROV_RSA_AES 0x00000018; the AES provider is of type PROV_RSA_AES, the others PROV_RSA_FULL,
#: as Windows' CryptoAPI documents its providers).
PROV_RSA_FULL = 0x00000001
PROV_RSA_AES = 0x00000018
CRYPTOGRAPHIC_SERVICE_PROVIDERS: tuple[tuple[str, int, int], ...] = (
    ("Microsoft Base Cryptographic Provider v1.0", 512, PROV_RSA_FULL),
    ("Microsoft Enhanced Cryptographic Provider v1.0", 1024, PROV_RSA_FULL),
    ("Microsoft Enhanced RSA and AES Cryptographic Provider", 1024, PROV_RSA_AES),
)

_PUBLICKEYBLOB = 0x06  # [MS-MQDS] 2.2.19 BLOBHEADER.bType
_BLOB_VERSION = 0x02  # [MS-MQDS] 2.2.19 BLOBHEADER.bVersion
_CALG_RSA_KEYX = 0x0000A400  # [MS-MQMQ] 2.2.1: the aiKeyAlg of every MQDSPUBLICKEY.aBuf
_RSA1 = 0x31415352  # [MS-MQDS] 2.2.18 RSAPUBKEY.magic


def rsa_key_problem(key: RsaPublicKey, bit_length: int) -> str | None:
    """Why ``key`` is not a valid RSA public key of ``bit_length`` bits, or None. Checks what a
    public key shows of [PKCS1] 3.1's validity condition: the modulus, a product of distinct odd
    primes, is odd and has the stated length; the exponent lies between 3 and n - 1 and is odd
    (GCD(e, lambda(n)) = 1 with lambda(n) even); and it fits RSAPUBKEY.pubExp's 32 bits."""
    n, e = key.modulus, key.public_exponent
    if n.bit_length() != bit_length:
        return f"the modulus has {n.bit_length()} bits, not {bit_length}"
    if n % 2 == 0:
        return "the modulus is even, not a product of odd primes"
    if not 3 <= e <= n - 1 or e % 2 == 0 or e > 0xFFFFFFFF:
        return f"the public exponent {e} is not an odd integer from 3 to n - 1 (32 bits)"
    return None


def mqdspublickey(provider_name: str, provider_type: int, key: RsaPublicKey) -> bytes:
    """One MQDSPUBLICKEY ([MS-MQMQ] 2.2.1): ulKeyLen, ulProviderLen (bytes, terminating null
    included), ulProviderType, sProviderName (null-terminated UTF-16LE), aBuf: a BLOBHEADER
    ([MS-MQDS] 2.2.19) and an RSAPUBKEY ([MS-MQDS] 2.2.18) with the modulus's bitLen / 8 bytes,
    least significant byte first (the order of CryptoAPI key BLOBs; 2.2.18 names none)."""
    bit_length = key.modulus.bit_length()
    a_buf = (struct.pack("<BBHI", _PUBLICKEYBLOB, _BLOB_VERSION, 0, _CALG_RSA_KEYX)
             + struct.pack("<III", _RSA1, bit_length, key.public_exponent)
             + key.modulus.to_bytes((bit_length + 7) // 8, "little"))
    name = (provider_name + "\0").encode("utf-16-le")
    return struct.pack("<III", len(a_buf), len(name), provider_type) + name + a_buf


def mqdspublickeys(keys: list[bytes]) -> bytes:
    """MQDSPUBLICKEYS ([MS-MQMQ] 2.2.2): ulLen (the structure's size in bytes), cNumofKeys and
    the MQDSPUBLICKEY structures."""
    body = b"".join(keys)
    return struct.pack("<II", 8 + len(body), len(keys)) + body


def _public_key_list(keys: dict[str, RsaPublicKey], purpose: str) -> tuple[bytes, str | None]:
    """MQDSPUBLICKEYS with one MQDSPUBLICKEY per listed CSP the host has a key of, in the list's
    order; or the reason a key is not valid."""
    structures = []
    for name, bit_length, provider_type in CRYPTOGRAPHIC_SERVICE_PROVIDERS:
        key = keys.get(name)
        if key is None:
            continue  # <18>/<19>: older Windows versions have no AES provider key
        problem = rsa_key_problem(key, bit_length)
        if problem is not None:
            return b"", f"the {purpose} key of {name!r}: {problem}"
        structures.append(mqdspublickey(name, provider_type, key))
    return mqdspublickeys(structures), None


def _directory(name: str) -> Any:
    """An event or timer of model/directory.py (Read Directory 3.1.7.1.20; the Directory Sites
    Update and Directory Site Gates Update timers, 3.1.2.1 and 3.1.2.2), or None.

    model/directory.py is written separately. It is imported here, when Initialization runs,
    not at the top of the module, so that this module works without it (a module that exists
    but fails to import still raises); the steps that need what it lacks are reported in
    InitializationResult.skipped. Expected (and so written in model/directory.py today):
    ``read_directory(env, directory_object_type, filter=None, attribute_list=None)`` returning
    ``.status`` (a DirectoryOperationResult) and ``.directory_object``, a filter being a tuple of
    (attribute, operator, value) triples; ``update_adm_attributes(target, source)`` (optional);
    ``directory_sites_update_timer_start(env)`` and
    ``directory_site_gates_update_timer_start(env)``."""
    if ("mqconform.model.directory" not in sys.modules
            and importlib.util.find_spec("mqconform.model.directory") is None):
        return None
    directory = importlib.import_module("mqconform.model.directory")
    return getattr(directory, name, None)


#: the ADM attributes Read Directory returns for a QueueManager: its directory attributes
_QUEUE_MANAGER_DIRECTORY_ATTRIBUTES = (DIRECTORY_ATTRIBUTES[DirectoryObject]
                                       + DIRECTORY_ATTRIBUTES[QueueManager])


def _synchronize_directory(env: Environment, provisioning: bool,
                           skipped: list[str]) -> str | None:
    """The "Synchronize the directory attributes of the LocalQueueManager" steps of 3.1.3.
    Returns the error to raise to the caller (MS-MQDMPR/3.1.3/R16), or None.

    The rules handle some Read Directory results and not others; by R16 an unhandled result is
    an error raised to the caller: a failed read of the QueueManager, a failed read of a Site
    other than ObjectNotFound while provisioning, a failed read of the Enterprise other than
    AttributeNotFound."""
    qm = env.local_queue_manager
    read_directory = _directory("read_directory")
    if read_directory is None:
        skipped.append("Synchronize the directory attributes (Read Directory, 3.1.7.1.20)")
        return None
    result = read_directory(env, directory_object_type="QueueManager",
                            filter=(("Identifier", "EQUALS", qm.identifier),),
                            attribute_list=None)
    if result.status is not DirectoryOperationResult.Success:
        return f"Read Directory of the QueueManager returned {result.status.name}"
    update_adm_attributes = _directory("update_adm_attributes")
    if update_adm_attributes is not None:  # the attributes the read returned
        update_adm_attributes(qm, result.directory_object)
    elif result.directory_object is not qm:
        for name in _QUEUE_MANAGER_DIRECTORY_ATTRIBUTES:
            setattr(qm, name, getattr(result.directory_object, name))
    for site_identifier in list(qm.site_identifier_list):
        result = read_directory(env, directory_object_type="Site",
                                filter=(("Identifier", "EQUALS", site_identifier),),
                                attribute_list=None)
        if result.status is DirectoryOperationResult.Success:
            if result.directory_object not in qm.site_collection:  # once, on a restart too
                qm.site_collection.append(result.directory_object)
        elif (result.status is DirectoryOperationResult.ObjectNotFound and provisioning):
            continue
        else:
            return f"Read Directory of Site {site_identifier} returned {result.status.name}"
    result = read_directory(env, directory_object_type="Enterprise", filter=None,
                            attribute_list=("NonLDAPCapableQueueManagerNotification",))
    if result.status is DirectoryOperationResult.Success:
        qm.enterprise_reference = result.directory_object
    elif result.status is DirectoryOperationResult.AttributeNotFound:
        new_enterprise_object = Enterprise(non_ldap_capable_queue_manager_notification=True)
        qm.enterprise_reference = new_enterprise_object
    else:
        return f"Read Directory of the Enterprise returned {result.status.name}"
    return None


def _is_http_format_name(format_name: str) -> bool:
    """Whether a destination format name is an HTTP one (DIRECT=HTTP:// or DIRECT=HTTPS://,
    [MS-MQMQ] 2.1.2). A name that does not parse is not an HTTP format name."""
    from mqconform.model.formats import (
        DirectProtocol,
        FormatNameError,
        FormatNameKind,
        parse_format_name,
    )

    try:
        name = parse_format_name(format_name)
    except FormatNameError:
        return False
    return (name.kind is FormatNameKind.DIRECT
            and name.protocol in (DirectProtocol.HTTP, DirectProtocol.HTTPS))


def _system_queue(qm: Any, **attributes: Any) -> Queue:
    return Queue(queue_type=QueueType.System, queue_manager=qm, **attributes)


def create_system_queues(qm: Any) -> None:
    """The system queues Initialization (3.1.3) creates where they are missing: the
    dead-letter, transactional dead-letter and journal queues in QueueCollection, the
    order-acknowledgment and change-notification queues outside it."""
    if qm.system_deadletter_queue is None:
        qm.system_deadletter_queue = _system_queue(qm)
        qm.queue_collection.append(qm.system_deadletter_queue)
    if qm.system_transactional_deadletter_queue is None:
        # the transactional dead-letter queue holds transactional messages: Transactional
        qm.system_transactional_deadletter_queue = _system_queue(qm, transactional=True)
        qm.queue_collection.append(qm.system_transactional_deadletter_queue)
    if qm.system_journal_queue is None:
        qm.system_journal_queue = _system_queue(qm)
        qm.queue_collection.append(qm.system_journal_queue)
    # MS-MQDMPR/3.1.3/R15: kept out of QueueCollection, where Open Queue looks queues up
    if qm.order_acknowledgment_queue is None:
        qm.order_acknowledgment_queue = _system_queue(qm)
    if qm.change_notification_queue is None:
        qm.change_notification_queue = _system_queue(qm)


# ---------------------------------------------------------------------------------------------
# 3.1.3 Initialization
# ---------------------------------------------------------------------------------------------

def initialization(env: Environment, provisioning: bool, host: Host) -> InitializationResult:
    """MS-MQDMPR 3.1.3 Initialization (MS-MQDMPR/3.1.3/R1 MS-MQDMPR/3.1.3/R2).

    Nesting: the extracted text lost the bullet levels. The reading taken: the steps from the
    provisioning ones to the start of the Directory Sites and Site Gates timers depend on
    DirectoryIntegrated (each concerns the directory); the system queues, the outgoing queues,
    DTC recovery and the abort of non-DTC transactions are done in every case.

    On a restart the ADM already holds the system queues (their attributes are persistent:
    a System queue is not Public, 3.1.1.2): they are created only where missing."""
    qm = env.local_queue_manager
    requests: list[HostRequest] = []
    skipped: list[str] = []

    def stop(reason: str) -> InitializationResult:
        return InitializationResult(False, reason, tuple(requests), tuple(skipped))

    # [MS-LSAD]: the computer's names
    requests.append(HostRequest("LsarOpenPolicy2", (  # MS-MQDMPR/3.1.3/R3
        ("SystemName", ""), ("DesiredAccess", "POLICY_VIEW_LOCAL_INFORMATION"))))
    if host.open_policy_status != STATUS_SUCCESS:
        return stop(f"LsarOpenPolicy2 returned {host.open_policy_status:#010x}")
    stored_policy_handle = host.policy_handle
    requests.append(HostRequest("LsarQueryInformationPolicy2", (  # MS-MQDMPR/3.1.3/R4
        ("PolicyHandle", stored_policy_handle),
        ("InformationClass", "PolicyDnsDomainInformation"))))
    if host.dns_domain_status != STATUS_SUCCESS:
        return stop(f"LsarQueryInformationPolicy2 (PolicyDnsDomainInformation) returned "
                    f"{host.dns_domain_status:#010x}")
    qm.machine_domain_id = host.domain_guid
    fqdn_domain = host.dns_domain_name
    requests.append(HostRequest("LsarQueryInformationPolicy2", (  # MS-MQDMPR/3.1.3/R5
        ("PolicyHandle", stored_policy_handle),
        ("InformationClass", "PolicyLocalAccountDomainInformation"))))
    if host.account_domain_status != STATUS_SUCCESS:
        return stop(f"LsarQueryInformationPolicy2 (PolicyLocalAccountDomainInformation) "
                    f"returned {host.account_domain_status:#010x}")
    qm.computer_name = host.domain_name
    qm.qualified_computer_name = f"{qm.computer_name}.{fqdn_domain}"
    requests.append(HostRequest("LsarClose",  # MS-MQDMPR/3.1.3/R6
                                (("PolicyHandle", stored_policy_handle),)))

    # the directory
    if qm.directory_integrated:
        if provisioning:
            qm.initialization_retry_timer_duration = 120
            if (host.site_identifier is not None
                    and host.site_identifier not in qm.site_identifier_list):
                qm.site_identifier_list.append(host.site_identifier)
        requests.append(HostRequest("DNS query", (  # MS-MQDMPR/3.1.3/R7
            ("SRV", f"_ldap._tcp.dc._msdcs.{fqdn_domain}"),)))
        for name in host.domain_controllers:  # MS-MQDMPR/3.1.3/R7 (each name once)
            if name not in qm.directory_server_list:
                qm.directory_server_list.append(name)
        # MS-MQDMPR/3.1.3/R8: an [MS-MQSO] 6.4.1.2 timer, outside this model: the host starts it
        requests.append(HostRequest("Start the Directory Server List Update Timer "
                                    "([MS-MQSO] 6.4.1.2)"))
        # MS-MQDMPR/3.1.3/R9 MS-MQDMPR/3.1.3/R10 MS-MQDMPR/3.1.3/R11 (keys checked, then stored)
        encryption_keys, problem = _public_key_list(host.encryption_keys, "encryption")
        if problem is not None:
            return stop(problem)  # MS-MQDMPR/3.1.3/R16
        qm.public_encryption_key_list = encryption_keys  # MS-MQDMPR/3.1.3/R9
        # MS-MQDMPR/3.1.3/R12 MS-MQDMPR/3.1.3/R13 MS-MQDMPR/3.1.3/R14
        signing_keys, problem = _public_key_list(host.signing_keys, "signing")
        if problem is not None:
            return stop(problem)  # MS-MQDMPR/3.1.3/R16
        qm.public_signing_key_list = signing_keys  # MS-MQDMPR/3.1.3/R12
        error = _synchronize_directory(env, provisioning, skipped)
        if error is not None:
            return stop(error)  # MS-MQDMPR/3.1.3/R16
        for timer in ("directory_sites_update_timer_start",  # 3.1.2.1
                      "directory_site_gates_update_timer_start"):  # 3.1.2.2
            start = _directory(timer)
            if start is None:
                skipped.append(f"Start the timer: {timer} (model/directory.py)")
            else:
                start(env)

    # the system queues
    create_system_queues(qm)

    # the outgoing queues
    for queue in qm.queue_collection:
        if not isinstance(queue, OutgoingQueue):
            continue
        if queue.state is OutgoingQueueState.Locked and not qm.hardened_security:
            queue.state = OutgoingQueueState.Waiting
        elif (not _is_http_format_name(queue.destination_format_name)
              and qm.hardened_security):
            queue.state = OutgoingQueueState.Locked

    # the queue manager as an [MS-DTCO] resource manager: the outcome of recovery
    for transaction_object, outcome in host.reenlistment:
        if outcome is ReenlistmentOutcome.Committed:
            dtc_reenlistment_commit(env, transaction_object)
        elif outcome is ReenlistmentOutcome.Aborted:
            dtc_reenlistment_abort(env, transaction_object)
        else:
            return stop(dtc_reenlistment_timeout(env))

    # abort the non-DTC transactions
    for transaction in list(qm.transaction_collection):
        if transaction.single_phase:
            transaction_abort(env, transaction_identifier=transaction.identifier)
    return InitializationResult(True, "", tuple(requests), tuple(skipped))


# ---------------------------------------------------------------------------------------------
# 3.1.4.1 Queue Manager Started, 3.1.4.2 Queue Manager Stopped
# ---------------------------------------------------------------------------------------------

def queue_manager_started(env: Environment, host: Host,
                          provisioning: bool = False) -> InitializationResult:
    """MS-MQDMPR 3.1.4.1 Queue Manager Started (MS-MQDMPR/3.1.4.1/R1 MS-MQDMPR/3.1.4.1/R2): no
    argument in the document; ``host`` and ``provisioning`` are what Initialization needs.

    [MS-MQSO] 6.6.2, whose actions the section names, is not among this project's documents.
    What the model does of it is MS-MQDMPR's own part: the Initialization of the ADM (3.1.3,
    which points to [MS-MQSO] 6.6 for system initialization), framed by the QueueManagerState
    values 3.1.1.1 defines: Initializing while the queue manager "performs internal
    initialization", Ready when it is "fully functional". An Initialization that does not
    complete leaves the state Initializing (the caller retries or stops the queue manager)."""
    qm = env.local_queue_manager
    qm.queue_manager_state = QueueManagerState.Initializing
    result = initialization(env, provisioning, host)  # MS-MQDMPR/3.1.4.1/R3
    if result.completed:
        qm.queue_manager_state = QueueManagerState.Ready
    return result


def queue_manager_stopped(env: Environment) -> None:
    """MS-MQDMPR 3.1.4.2 Queue Manager Stopped (MS-MQDMPR/3.1.4.2/R1): "no further processing
    steps for this event in this protocol".

    The model records what the event reports, QueueManagerState Stopped ("does not perform any
    of its functions", 3.1.1.1), and nothing else: no queue, message or transaction is dropped.
    Recoverable messages and TransactionCollection are persistent (3.1.1.12, 3.1.1.1) and the
    model has no disk, so they simply stay in the ADM for the next Queue Manager Started."""
    env.local_queue_manager.queue_manager_state = QueueManagerState.Stopped


# ---------------------------------------------------------------------------------------------
# 3.1.4.12-3.1.4.15
# ---------------------------------------------------------------------------------------------

def take_offline(env: Environment) -> None:
    """MS-MQDMPR 3.1.4.12 Take Offline (MS-MQDMPR/3.1.4.12/R1 MS-MQDMPR/3.1.4.12/R2)."""
    env.local_queue_manager.connection_active = False  # MS-MQDMPR/3.1.4.12/R3


def bring_online(env: Environment) -> None:
    """MS-MQDMPR 3.1.4.13 Bring Online (MS-MQDMPR/3.1.4.13/R1 MS-MQDMPR/3.1.4.13/R2)."""
    env.local_queue_manager.connection_active = True  # MS-MQDMPR/3.1.4.13/R3


def pause_queue(queue: OutgoingQueue) -> None:
    """MS-MQDMPR 3.1.4.14 Pause Queue (MS-MQDMPR/3.1.4.14/R1 MS-MQDMPR/3.1.4.14/R2): the
    administrator pauses an outgoing queue."""
    consumed_pause_queue(  # MS-MQDMPR/3.1.4.14/R3
        queue=queue)  # MS-MQDMPR/3.1.4.14/R4


def resume_queue(queue: OutgoingQueue) -> None:
    """MS-MQDMPR 3.1.4.15 Resume Queue (MS-MQDMPR/3.1.4.15/R1 MS-MQDMPR/3.1.4.15/R2): the
    administrator resumes an outgoing queue."""
    consumed_resume_queue(  # MS-MQDMPR/3.1.4.15/R3
        queue=queue)  # MS-MQDMPR/3.1.4.15/R4
