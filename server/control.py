"""The control API of the reference queue manager: how a test suite sets up preconditions.

It is not part of MSMQ and is off unless ``mqconform serve --control-port`` asks for it; it
listens on 127.0.0.1 whatever the RPC interfaces' ``--host`` (``--control-host`` moves it) and
speaks JSON over HTTP:

    GET    /queues                          the queues with their message counts by state
                                            and the messages in their queue journals; a
                                            private queue's "format_name" is its PRIVATE=
                                            format name (MS-MQMQ 2.1.4), a public queue's
                                            its PUBLIC= format name (2.1.3)
    POST   /queues                          {"path", "transactional", "label", "quota",
                                             "journal", "journal_quota", "subqueues"} (the
                                             provisioning document's keys) and "queue_type"
                                            ("Connector": a connector queue)
    DELETE /queues/<path>                   Delete Queue (MS-MQDMPR 3.1.7.1.4)
    POST   /queues/<path>/messages          {"body" | "body_hex", "label", "priority",
                                             "time_to_be_received", "dead_letter_queue",
                                             "soap_envelope", "compound_message",
                                             "soap_header", "soap_body", "received_from",
                                             "direct", "sent_time", "time_to_reach_queue",
                                             "transactional", "delivery",
                                             "destination_queue", "admin_queue",
                                             "response_queue"}
                                             (server/provision.py) -> {"lookup_id"}
    POST   /transactions/<hex>/commit|abort Transaction Commit/Abort (MS-MQDMPR 3.1.4.4/5)
    POST   /queue_manager                   {"directory_integrated", "directory_offline",
                                             "foreign_system", "directory_server_list"}:
                                            set these QueueManager attributes (MS-MQDMPR
                                            3.1.1.1) -> their previous values
    POST   /outgoing                        {"format_name", "state", "next_hops",
                                             "outgoing_transfer_info", "connection_history"}:
                                            an outgoing queue, as an application that opens a
                                            remote format name for send makes one (Open Queue
                                            with SendAccess, MS-MQDMPR 3.1.7.1.5, then Close
                                            Queue); the other keys (optional) stand for the
                                            transfer protocol this server does not run: they
                                            set OutgoingQueue.State, .NextHops,
                                            .OutgoingTransferInfoReference and
                                            .ConnectionHistory (MS-MQDMPR 3.1.1.3, 3.1.1.4;
                                            OUTGOING_KEYS below); "messages" (the keys of
                                            POST /queues/<path>/messages) are put in it,
                                            awaiting a transfer that never runs
    POST   /queues/<path>/incoming_transactional_transfer_info
                                            {"entries": [...]}: the queue's
                                            IncomingTransactionalTransferInfoCollection
                                            (MS-MQDMPR 3.1.1.2, 3.1.1.5; INCOMING_KEYS below),
                                            which the transfer protocol would keep
    POST   /settings                        {"pending_request_cleanup_ms": N} -> {"previous"}
    POST   /reset                           delete every queue the control API or the
                                            provisioning document created

The transfer state is given by the ADM attributes' names in snake case (EodLastAck is
``eod_last_ack``), with the value ranges of the properties that report them (MS-MQMR 3.1.4.1):

* ``outgoing_transfer_info``: an object of OutgoingTransferInfo attributes (MS-MQDMPR 3.1.1.4),
  each optional (omitted: 0): ``eod_first_non_ack``, ``eod_last_ack``, ``eod_last_non_ack``,
  ``eod_next_seq`` (SEQUENCE_INFO, MS-MQMQ 2.2.5: {"seq_id": a 64-bit signed integer,
  "seq_no", "prev_no": 32-bit unsigned}), ``eod_last_ack_count``, ``eod_no_ack_count``,
  ``eod_no_read_count``, ``eod_resend_count``, ``eod_resend_interval`` (32-bit unsigned),
  ``eod_last_ack_time``, ``eod_resend_time`` (seconds since 1970, 32-bit signed: VT_I4);
* ``connection_history``: a list of {"status": a ConnectionHistory Status name (MS-MQDMPR
  3.1.1.3: InProcess ... LowResource), "connection_history_time" (32-bit signed), "error" (an
  HRESULT, 32-bit signed: 0x80004005 is -2147467259), "address_list": [addresses]};
* ``next_hops``: a list of addresses (MS-MQMQ 2.1);
* ``entries`` of an incoming queue: a list of {"format_name" (a format name, MS-MQMQ 2.1),
  "sender_identifier" (a GUID), "sequence_identifier" ({"ordinal", "time_stamp"}: 32-bit
  unsigned each, TxSequenceId of MS-MQMQ 2.2.18.1.2; every transactional message has one, so
  it is never null), "sequence_number", "reject_count" (32-bit unsigned), "last_access_time"
  (32-bit signed)}.

A key outside these, or a value outside its range, is refused with a one-line error naming the
key (``outgoing.outgoing_transfer_info.eod_last_ack.seq_no: ...``), before anything changes.

``<path>`` is URL-encoded. Every request runs under the queue manager's lock, like an RPC call,
and a request that changes what the store keeps (``--store``) is written before it is answered.
Errors answer 400 (bad request) or 404 (no such queue) with {"error": "..."}; a change the
store could not write answers 507 (the disk is full) or 503 (the disk failed), with an error
naming the disk, and nothing of it was kept: a message it refused is never delivered.

Who may call it, and how much a caller may send (the control API changes every queue, so it is
guarded as an administrator's interface):

* a token: with one (``ControlServer(token=...)``, ``serve --control-token-env NAME``) every
  request carries ``Authorization: Bearer <token>`` (RFC 6750 2.1); a missing or wrong one
  answers 401 with {"error": ...} before the body is read. The comparison is of the SHA-256
  digests of the two, in constant time (hmac.compare_digest), so neither the token's octets
  nor its length leak through the time an answer takes. server/main.py decides when a server
  may run without one.
* the body: one Content-Length of decimal digits (RFC 9110 8.6) up to MAX_BODY; a negative,
  non-numeric or repeated one answers 400, one over MAX_BODY 413, a POST without one 411, and
  Transfer-Encoding (chunked, RFC 9112 6.1) 411: nothing past the limit is ever read, and the
  connection is closed after the answer.
* threads: at most ``max_threads`` requests are served at once; a connection past that is
  answered 503 at once and closed, without a thread. Each read of a connection waits at most
  ``timeout`` seconds (a request line, headers and body that do not come in time close the
  connection), so idle connections give their threads back.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import socket
import threading
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

from mqconform.model.adm import (
    GUID_NULL,
    SEQUENCE_INFO,
    ConnectionHistoryEntry,
    ConnectionHistoryStatus,
    IncomingTransactionalTransferInfo,
    MessageDeliveryGuarantee,
    MessagePositionState,
    OutgoingQueue,
    OutgoingQueueState,
    OutgoingTransferInfo,
    QueueAccessType,
    QueueShareMode,
    QueueType,
    TxSequenceId,
)
from mqconform.model.formats import (
    FormatName,
    FormatNameError,
    FormatNameKind,
    parse_format_name,
)
from mqconform.model.higher_layer import transaction_abort, transaction_commit
from mqconform.model.message_ops import enqueue_message
from mqconform.model.queue_management import (
    close_queue,
    create_transaction,
    delete_queue,
    open_queue,
)
from mqconform.server.provision import (
    ProvisionError,
    arrival_time,
    create_queue_from_spec,
    make_message,
)
from mqconform.server.store import StoreWriteError

log = logging.getLogger(__name__)
MAX_BODY = 16 << 20
#: requests served at once, and the seconds each read of a connection may wait
MAX_THREADS = 16
READ_TIMEOUT = 10.0

#: the ranges of the numbers: VT_UI4 and VT_I4 (MS-MQMQ 2.2.12), LONGLONG (SEQUENCE_INFO.SeqID)
U32 = (0, 0xFFFFFFFF)
I32 = (-(1 << 31), (1 << 31) - 1)
I64 = (-(1 << 63), (1 << 63) - 1)
#: the keys of POST /outgoing
OUTGOING_KEYS = ("format_name", "state", "next_hops", "outgoing_transfer_info",
                 "connection_history", "messages")
#: SEQUENCE_INFO (MS-MQMQ 2.2.5): SeqID, SeqNo, PrevNo
SEQUENCE_INFO_KEYS = {"seq_id": I64, "seq_no": U32, "prev_no": U32}
#: the OutgoingTransferInfo attributes (MS-MQDMPR 3.1.1.4) by key: a SEQUENCE_INFO, or the
#: range of a number (a VT_I4 time, a VT_UI4 count of MS-MQMR 3.1.4.1)
TRANSFER_INFO_KEYS: dict[str, Any] = {
    "eod_first_non_ack": SEQUENCE_INFO, "eod_last_ack": SEQUENCE_INFO,
    "eod_last_ack_count": U32, "eod_last_ack_time": I32, "eod_last_non_ack": SEQUENCE_INFO,
    "eod_next_seq": SEQUENCE_INFO, "eod_no_ack_count": U32, "eod_no_read_count": U32,
    "eod_resend_count": U32, "eod_resend_interval": U32, "eod_resend_time": I32}
#: the members of a ConnectionHistory structure (MS-MQDMPR 3.1.1.3)
CONNECTION_HISTORY_KEYS = ("status", "connection_history_time", "error", "address_list")
#: the IncomingTransactionalTransferInfo attributes (MS-MQDMPR 3.1.1.5) but QueueReference
INCOMING_KEYS = ("format_name", "sender_identifier", "sequence_identifier", "sequence_number",
                 "last_access_time", "reject_count")
#: TxSequenceId (MS-MQMQ 2.2.18.1.2): Ordinal, TimeStamp
TX_SEQUENCE_ID_KEYS = ("ordinal", "time_stamp")


def _integer(value: Any, where: str, bounds: tuple[int, int]) -> int:
    lo, hi = bounds
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise ProvisionError(f"{where}: an integer from {lo} to {hi}")
    return value


def _object(value: Any, where: str, keys: Any) -> dict:
    """A JSON object with only these keys."""
    if not isinstance(value, dict):
        raise ProvisionError(f"{where}: a JSON object")
    unknown = set(value) - set(keys)
    if unknown:
        raise ProvisionError(f"{where}: unknown key(s) {sorted(unknown)}")
    return value


def _list(value: Any, where: str) -> list:
    if not isinstance(value, list):
        raise ProvisionError(f"{where}: a JSON array")
    return value


def _addresses(value: Any, where: str, separator: str | None = None) -> list[str]:
    """Address strings (MS-MQMQ 2.1): non-empty, without ``separator`` (the one
    PROPID_MGMT_QUEUE_CONNECTION_HISTORY joins them with)."""
    for i, address in enumerate(_list(value, where)):
        if not isinstance(address, str) or not address or len(address) > 260 or (
                separator is not None and separator in address):
            without = f" without {separator!r}" if separator else ""
            raise ProvisionError(f"{where}[{i}]: an address, a string of 1 to 260 "
                                 f"characters{without}")
    return list(value)


def sequence_info(value: Any, where: str) -> SEQUENCE_INFO:
    """A SEQUENCE_INFO (MS-MQMQ 2.2.5) from {"seq_id", "seq_no", "prev_no"} (omitted: 0)."""
    spec = _object(value, where, SEQUENCE_INFO_KEYS)
    return SEQUENCE_INFO(**{key: _integer(spec.get(key, 0), f"{where}.{key}", bounds)
                            for key, bounds in SEQUENCE_INFO_KEYS.items()})


def outgoing_transfer_info(value: Any, where: str) -> OutgoingTransferInfo:
    """An OutgoingTransferInfo (MS-MQDMPR 3.1.1.4) from TRANSFER_INFO_KEYS (omitted: 0)."""
    spec = _object(value, where, TRANSFER_INFO_KEYS)
    info = OutgoingTransferInfo()
    for key, kind in TRANSFER_INFO_KEYS.items():
        if key in spec:
            setattr(info, key, sequence_info(spec[key], f"{where}.{key}")
                    if kind is SEQUENCE_INFO else _integer(spec[key], f"{where}.{key}", kind))
    return info


def connection_history(value: Any, where: str) -> list[ConnectionHistoryEntry]:
    """OutgoingQueue.ConnectionHistory (MS-MQDMPR 3.1.1.3): each entry's Status is required
    (it MUST have one of the values, MS-MQDMPR/3.1.1.3/R2); the time and Error are 0 and the
    AddressList empty when omitted."""
    entries = []
    for i, item in enumerate(_list(value, where)):
        at = f"{where}[{i}]"
        spec = _object(item, at, CONNECTION_HISTORY_KEYS)
        status = spec.get("status")
        if status not in ConnectionHistoryStatus.__members__:
            raise ProvisionError(f"{at}.status: one of "
                                 f"{list(ConnectionHistoryStatus.__members__)}")
        entries.append(ConnectionHistoryEntry(
            status=ConnectionHistoryStatus[status],
            connection_history_time=_integer(spec.get("connection_history_time", 0),
                                             f"{at}.connection_history_time", I32),
            error=_integer(spec.get("error", 0), f"{at}.error", I32),
            address_list=_addresses(spec.get("address_list", []), f"{at}.address_list",
                                    separator=",")))
    return entries


def incoming_transactional_transfer_info(value: Any, where: str
                                         ) -> list[IncomingTransactionalTransferInfo]:
    """IncomingTransactionalTransferInfo elements (MS-MQDMPR 3.1.1.5) from INCOMING_KEYS
    (omitted: the empty format name, GUID_NULL, 0). SequenceIdentifier is the
    TransactionalMessageSequenceIdentifier of the last message the remote queue manager sent,
    a transactional one, which always has one (MS-MQDMPR 3.1.1.12): an object, never null
    (omitted: Ordinal and TimeStamp 0)."""
    entries = []
    for i, item in enumerate(_list(value, where)):
        at = f"{where}[{i}]"
        spec = _object(item, at, INCOMING_KEYS)
        entry = IncomingTransactionalTransferInfo()
        if "format_name" in spec:
            text = spec["format_name"]
            try:
                parse_format_name(text)
            except FormatNameError as exc:
                raise ProvisionError(f"{at}.format_name: {exc}") from None
            entry.format_name = text
        if "sender_identifier" in spec:
            try:
                entry.sender_identifier = uuid.UUID(spec["sender_identifier"])
            except (TypeError, ValueError, AttributeError):
                raise ProvisionError(f"{at}.sender_identifier: a GUID") from None
        sequence = _object(spec.get("sequence_identifier", {}), f"{at}.sequence_identifier",
                           TX_SEQUENCE_ID_KEYS)
        entry.sequence_identifier = TxSequenceId(**{
            key: _integer(sequence.get(key, 0), f"{at}.sequence_identifier.{key}", U32)
            for key in TX_SEQUENCE_ID_KEYS})
        entry.sequence_number = _integer(spec.get("sequence_number", 0),
                                         f"{at}.sequence_number", U32)
        entry.last_access_time = _integer(spec.get("last_access_time", 0),
                                          f"{at}.last_access_time", I32)
        entry.reject_count = _integer(spec.get("reject_count", 0), f"{at}.reject_count", U32)
        entries.append(entry)
    return entries


class ControlApi:
    """Operations on a running ReferenceQueueManager (``app``: server.app)."""

    def __init__(self, app: Any, arrival_time: Callable[[], int] | None = None):
        """``arrival_time``: Message.ArrivalTime of a message sent now (default: the wall
        clock, server/provision.py)."""
        self.app = app
        self._arrival_time = arrival_time

    @property
    def store(self) -> Any:
        """The server's store (server/store.py) when its queues are durable, else None."""
        return getattr(self.app, "store", None)

    @property
    def env(self):
        return self.app.env

    def _settle(self) -> None:
        """Under the lock, after a change: the store writes it (a StoreWriteError after the
        server took it back), then the waiting receives it served are answered."""
        persist = getattr(self.app, "persist", None)  # a server with durable queues
        if persist is not None:
            persist()
        self.app._deliver()

    def _queue(self, path: str):
        qm = self.env.local_queue_manager
        wanted = path.lower()
        for q in qm.queue_collection:
            names = {q.pathname.lower(), q.pathname.split("\\", 1)[-1].lower()}
            if wanted in names:
                return q
        raise LookupError(f"no queue {path!r}")

    def queues(self) -> list[dict]:
        out = []
        with self.app.lock:
            for q in self.env.local_queue_manager.queue_collection:
                if not q.pathname:
                    continue  # outgoing queues
                states = {s.name: 0 for s in MessagePositionState}
                for p in q.message_position_list:
                    states[p.state.name] += 1
                journal = q.journal_queue_reference
                out.append({"path": q.pathname, "transactional": q.transactional,
                            "messages": states, "open": len(q.open_queue_descriptor_collection),
                            "subqueues": [s.pathname for s in q.subqueue_collection],
                            "journaling": q.journaling,
                            "journal": (len(journal.message_position_list)
                                        if journal is not None else None),
                            "format_name": self._format_name(q)})
        return out

    def _format_name(self, queue: Any) -> str | None:
        """PRIVATE=ComputerGuid\\QueueNumber (MS-MQMQ 2.1.4): the identifier of the queue
        manager hosting the queue and its PrivateQueueNumber (MS-MQDMPR 3.1.1.2);
        PUBLIC=QueueGuid (2.1.3) for a public queue: its Identifier; None for other queues."""
        if queue.queue_type is QueueType.Public and queue.identifier != GUID_NULL:
            return str(FormatName(FormatNameKind.PUBLIC, guid=queue.identifier))
        if queue.queue_type is not QueueType.Private or queue.private_queue_number is None:
            return None
        qm = queue.queue_manager or self.env.local_queue_manager
        return str(FormatName(FormatNameKind.PRIVATE, guid=qm.identifier,
                              queue_number=queue.private_queue_number))

    def create_queue(self, spec: dict) -> dict:
        with self.app.lock:
            queue = create_queue_from_spec(self.env, spec, getattr(self.app, "security", None))
            if self.store is not None:
                try:  # the queue and the messages of the spec, in one write
                    self.store.remember_queue(self.env, queue.pathname,
                                              {**spec, "messages": []})
                except StoreWriteError:
                    # made just now, no descriptor, nothing of it stored: it goes as it came
                    delete_queue(self.env, queue, skip_directory=True)
                    raise
            self._settle()
            return {"path": queue.pathname}

    #: the QueueManager attributes POST /queue_manager sets: the configuration a queue manager
    #: gets from its installation and its directory, which no protocol message changes
    CONFIGURABLE = ("directory_integrated", "directory_offline", "foreign_system",
                    "directory_server_list")

    def configure(self, spec: dict) -> dict:
        """Set QueueManager attributes of CONFIGURABLE; returns their previous values (a
        document to POST back). DirectoryOffline is False whenever DirectoryIntegrated is
        (MS-MQDMPR 3.1.1.1): a request that breaks the rule is refused."""
        unknown = set(spec) - set(self.CONFIGURABLE)
        if unknown:
            raise ProvisionError(f"queue_manager: unknown key(s) {sorted(unknown)}")
        for key, value in spec.items():
            if key == "directory_server_list":
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise ProvisionError(f"queue_manager.{key}: a list of strings")
            elif not isinstance(value, bool):
                raise ProvisionError(f"queue_manager.{key}: true or false")
        with self.app.lock:
            qm = self.env.local_queue_manager
            merged = {k: spec.get(k, getattr(qm, k)) for k in self.CONFIGURABLE}
            if merged["directory_offline"] and not merged["directory_integrated"]:
                raise ProvisionError("queue_manager.directory_offline: only when "
                                     "directory_integrated")
            previous = {k: (list(getattr(qm, k)) if k == "directory_server_list"
                            else getattr(qm, k)) for k in spec}
            for key, value in spec.items():
                setattr(qm, key, list(value) if key == "directory_server_list" else value)
            return previous

    def delete_queue(self, path: str) -> dict:
        with self.app.lock:
            queue = self._queue(path)
            if self.store is not None:  # the store first: a refused write deletes nothing
                self.store.forget_queue(queue)
            status = delete_queue(self.env, queue, skip_directory=True)
            self._settle()
            return {"status": int(getattr(status, "value", status) or 0)
                    if isinstance(status, int) else str(status)}

    def send(self, path: str, spec: dict) -> dict:
        with self.app.lock:
            queue = self._queue(path)
            message = make_message(spec, "message", queue.pathname, self.env.choices)
            message.arrival_time = (self._arrival_time or arrival_time)()
            if (self.store is not None
                    and message.delivery_guarantee is MessageDeliveryGuarantee.Recoverable):
                return self._send_kept(queue, message)
            status = enqueue_message(self.env, queue, message)
            if status != 0:
                raise ProvisionError(f"message: Enqueue Message refused it (rStatus {status})")
            self._settle()  # a waiting receive may have taken it
            return {"lookup_id": message.lookup_identifier}

    def _send_kept(self, queue: Any, message: Any) -> dict:
        """A recoverable message on a durable server is on disk before any reader can have
        it: Enqueue Message in a transaction of the queue manager's own puts it in the queue
        Locked (MS-MQDMPR 3.1.7.1.9), the store writes it, and Transaction Commit makes it
        Available (3.1.4.4), serving a waiting receive. When the store cannot write it, the
        server takes it out again, as Transaction Abort would (3.1.4.5), and the send is
        answered failed."""
        identifier = uuid.uuid4().bytes
        transaction = create_transaction(self.env, identifier)
        status = enqueue_message(self.env, queue, message, transaction=transaction)
        if status != 0:
            transaction_abort(self.env, identifier)
            raise ProvisionError(f"message: Enqueue Message refused it (rStatus {status})")
        try:
            self.app.persist()
        except BaseException:  # not written (a StoreWriteError has taken it out already)
            transaction_abort(self.env, identifier)
            raise
        transaction_commit(self.env, identifier)
        self._settle()
        return {"lookup_id": message.lookup_identifier}

    def end_transaction(self, identifier: bytes, commit: bool) -> dict:
        with self.app.lock:
            status = (transaction_commit if commit else transaction_abort)(self.env, identifier)
            self._settle()
            return {"status": status}

    def open_outgoing(self, spec: dict) -> dict:
        """An OutgoingQueue for ``spec["format_name"]`` (a remote queue): Open Queue with
        SendAccess and DenyNone, then Close Queue (the queue stays in the QueueCollection, as
        after an application sent to it). The reference server runs no transfer protocol that
        would set the rest, so the spec can: ``state`` (OutgoingQueue.State), ``next_hops``,
        ``outgoing_transfer_info`` (a new OutgoingTransferInfo for the queue, MS-MQDMPR
        3.1.1.4; null: none) and ``connection_history`` (module doc). Every key is checked
        before the queue is opened: a spec refused changes nothing."""
        unknown = set(spec) - set(OUTGOING_KEYS)
        if unknown:
            raise ProvisionError(f"outgoing: unknown key(s) {sorted(unknown)}")
        text = spec.get("format_name")
        if not isinstance(text, str) or not text:
            raise ProvisionError("outgoing.format_name: a format name is required")
        try:
            name = parse_format_name(text)
        except FormatNameError as exc:
            raise ProvisionError(f"outgoing.format_name: {exc}") from None
        if name.kind in (FormatNameKind.MULTIPLE_ELEMENT, FormatNameKind.DL):
            # Open Queue would make an outgoing queue per destination (MS-MQDMPR 3.1.7.1.5),
            # more than the one this call answers for (a MULTICAST address is one)
            raise ProvisionError(f"outgoing.format_name: {text!r} names more than one "
                                 "destination (MS-MQMQ 2.1.5, 2.1.7); an outgoing queue has one")
        state = spec.get("state")
        if state is not None and state not in OutgoingQueueState.__members__:
            raise ProvisionError(f"outgoing.state: not one of "
                                 f"{sorted(OutgoingQueueState.__members__)}")
        next_hops = (_addresses(spec["next_hops"], "outgoing.next_hops")
                     if "next_hops" in spec else None)
        info = (outgoing_transfer_info(spec["outgoing_transfer_info"],
                                       "outgoing.outgoing_transfer_info")
                if spec.get("outgoing_transfer_info") is not None else None)
        history = (connection_history(spec["connection_history"], "outgoing.connection_history")
                   if "connection_history" in spec else None)
        messages = spec.get("messages", [])
        if not isinstance(messages, list):
            raise ProvisionError("outgoing.messages: must be a list of messages")
        made = [make_message(m, f"outgoing.messages[{i}]", "", self.env.choices)
                for i, m in enumerate(messages)]
        with self.app.lock:
            opened = open_queue(self.env, name, QueueAccessType.SendAccess,
                                QueueShareMode.DenyNone)
            desc = opened.open_queue_descriptor
            if opened.status != 0 or desc is None:
                raise ProvisionError(f"outgoing: Open Queue refused {text!r} "
                                     f"(rStatus {opened.status})")
            queue = desc.queue_reference
            close_queue(self.env, desc)
            if not isinstance(queue, OutgoingQueue):
                raise ProvisionError(f"outgoing: {text!r} names a local queue")
            if state is not None:
                queue.state = OutgoingQueueState[state]
            if next_hops is not None:
                queue.next_hops = next_hops
            if "outgoing_transfer_info" in spec:
                if info is not None:
                    info.outgoing_queue_reference = queue
                queue.outgoing_transfer_info_reference = info
            if history is not None:
                queue.connection_history = history
            for i, message in enumerate(made):  # awaiting transfer: the queue is Active
                message.arrival_time = (self._arrival_time or arrival_time)()
                status = enqueue_message(self.env, queue, message)
                if status != 0:
                    raise ProvisionError(f"outgoing.messages[{i}]: Enqueue Message refused it "
                                         f"(rStatus {status})")
            return {"format_name": queue.destination_format_name,
                    "state": queue.state.name if queue.state is not None else None}

    def set_incoming_transactional_transfer_info(self, path: str, spec: dict) -> dict:
        """Replace the IncomingTransactionalTransferInfoCollection of the queue at ``path``
        (MS-MQDMPR 3.1.1.2) with ``spec["entries"]`` (module doc), each entry's QueueReference
        the queue: what the transactional transfer of messages from remote queue managers
        would have left (MS-MQDMPR 3.1.1.5)."""
        _object(spec, "incoming_transactional_transfer_info", ("entries",))
        if "entries" not in spec:
            raise ProvisionError("incoming_transactional_transfer_info.entries: a JSON array "
                                 "is required")
        entries = incoming_transactional_transfer_info(
            spec["entries"], "incoming_transactional_transfer_info.entries")
        with self.app.lock:
            queue = self._queue(path)
            for entry in entries:
                entry.queue_reference = queue
            queue.incoming_transactional_transfer_info_collection = entries
            return {"path": queue.pathname, "entries": len(entries)}

    def settings(self, spec: dict) -> dict:
        """Server settings a test needs to change: ``pending_request_cleanup_ms`` (the
        implementation-dependent Pending Request Cleanup Timer of MS-MQRR 3.1.2.2)."""
        unknown = set(spec) - {"pending_request_cleanup_ms"}
        if unknown:
            raise ProvisionError(f"settings: unknown key(s) {sorted(unknown)}")
        previous = {}
        with self.app.lock:
            if "pending_request_cleanup_ms" in spec:
                value = spec["pending_request_cleanup_ms"]
                if not isinstance(value, int) or isinstance(value, bool) or not \
                        1 <= value <= 86_400_000:
                    raise ProvisionError("settings.pending_request_cleanup_ms: an integer "
                                         "from 1 to 86400000")
                previous["previous"] = self.app.remote_read.cleanup_ms
                self.app.remote_read.cleanup_ms = value
        return previous

    def current_settings(self) -> dict:
        """What ``GET /settings`` answers: the allowed choices this server serves (a name of
        model/choices.py PROFILES, spec/choices.yaml) and the Pending Request Cleanup Timer."""
        with self.app.lock:
            return {"choices": self.env.choices.name,
                    "pending_request_cleanup_ms": self.app.remote_read.cleanup_ms}

    def reset(self) -> dict:
        with self.app.lock:
            qm = self.env.local_queue_manager
            deleted = 0
            if self.store is not None:  # the store first: a refused write deletes nothing
                self.store.forget_all()
            for q in [q for q in qm.queue_collection if q.pathname]:
                delete_queue(self.env, q, skip_directory=True)
                if q in qm.queue_collection:
                    qm.queue_collection.remove(q)
                deleted += 1
            qm.transaction_collection.clear()
            self._settle()
            return {"deleted": deleted}


class _Refused(Exception):
    """A request refused before its body is read: the HTTP status and the one-line error."""

    def __init__(self, status: int, error: str):
        super().__init__(error)
        self.status = status


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def _handler_class(api: ControlApi, token: str | None,
                   timeout: float) -> type[BaseHTTPRequestHandler]:
    wanted = _digest(token) if token is not None else None

    class Handler(BaseHTTPRequestHandler):
        server_version = "mqconform-control/1"

        def setup(self) -> None:
            self.timeout = timeout  # StreamRequestHandler: each read waits this long at most
            super().setup()

        def log_message(self, fmt: str, *args: Any) -> None:
            log.debug("control: " + fmt, *args)

        def _send(self, status: int, payload: Any, close: bool = False) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if status == 401:  # RFC 6750 3
                self.send_header("WWW-Authenticate", 'Bearer realm="mqconform-control"')
            if close:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(data)

        def _authorized(self) -> bool:
            if wanted is None:
                return True
            given = self.headers.get_all("Authorization") or []
            scheme, _, value = (given[0] if len(given) == 1 else "").partition(" ")
            # both digests are computed whatever was sent: one comparison, in constant time
            ok = hmac.compare_digest(_digest(value.strip()), wanted)
            return ok and scheme.lower() == "bearer"

        def _length(self) -> int:
            """The body's length from its one Content-Length (module doc); _Refused else."""
            if self.headers.get_all("Transfer-Encoding"):
                raise _Refused(411, "Transfer-Encoding is not accepted: send the body with a "
                                    "Content-Length")
            lengths = self.headers.get_all("Content-Length") or []
            if len(lengths) > 1:
                raise _Refused(400, "more than one Content-Length")
            if not lengths:
                if self.command == "POST":
                    raise _Refused(411, "a POST needs a Content-Length")
                return 0
            text = lengths[0].strip()
            if not (text.isascii() and text.isdigit()):  # "-1" would read to the end
                raise _Refused(400, f"Content-Length {text[:20]!r}: not a number of octets")
            length = int(text)
            if length > MAX_BODY:
                raise _Refused(413, f"request body over {MAX_BODY} bytes")
            return length

        def _body(self) -> dict:
            length = self._length_checked
            try:
                raw = self.rfile.read(length) if length else b"{}"
            except OSError:  # the body did not come in time
                raise _Refused(408, "the request body did not arrive in time") from None
            if len(raw) < length:
                raise _Refused(400, "the connection ended inside the request body")
            try:
                data = json.loads(raw or b"{}")
            except ValueError:
                raise ProvisionError("request body is not JSON") from None
            if not isinstance(data, dict):
                raise ProvisionError("request body must be a JSON object")
            return data

        def _done(self, status: int, payload: Any) -> None:
            """The answer to a request that changed the queue manager: the request wrote its
            change to the store (if any) under the lock (ControlApi._settle)."""
            self._send(status, payload)

        def _route(self, method: str) -> None:
            parts = [unquote(p) for p in self.path.split("?", 1)[0].strip("/").split("/") if p]
            try:
                if method == "GET" and parts == ["queues"]:
                    return self._send(200, api.queues())  # reads only
                if method == "POST" and parts == ["queues"]:
                    return self._done(201, api.create_queue(self._body()))
                if method == "DELETE" and len(parts) == 2 and parts[0] == "queues":
                    return self._done(200, api.delete_queue(parts[1]))
                if (method == "POST" and len(parts) == 3 and parts[0] == "queues"
                        and parts[2] == "messages"):
                    return self._done(201, api.send(parts[1], self._body()))
                if (method == "POST" and len(parts) == 3 and parts[0] == "queues"
                        and parts[2] == "incoming_transactional_transfer_info"):
                    return self._done(200, api.set_incoming_transactional_transfer_info(
                        parts[1], self._body()))
                if (method == "POST" and len(parts) == 3 and parts[0] == "transactions"
                        and parts[2] in ("commit", "abort")):
                    try:
                        identifier = bytes.fromhex(parts[1])
                    except ValueError:
                        raise ProvisionError("transaction identifier: not hexadecimal") from None
                    return self._done(200, api.end_transaction(identifier, parts[2] == "commit"))
                if method == "POST" and parts == ["queue_manager"]:
                    return self._done(200, api.configure(self._body()))
                if method == "POST" and parts == ["outgoing"]:
                    return self._done(201, api.open_outgoing(self._body()))
                if method == "GET" and parts == ["settings"]:
                    return self._send(200, api.current_settings())  # reads only
                if method == "POST" and parts == ["settings"]:
                    return self._done(200, api.settings(self._body()))
                if method == "POST" and parts == ["reset"]:
                    return self._done(200, api.reset())
                return self._send(404, {"error": f"no route {method} /{'/'.join(parts)}"})
            except _Refused as exc:
                return self._send(exc.status, {"error": str(exc)}, close=True)
            except StoreWriteError as exc:  # nothing of the request was kept
                return self._send(507 if exc.full else 503, {"error": str(exc)})
            except LookupError as exc:
                return self._send(404, {"error": str(exc).strip("'\"")})
            except (ProvisionError, ValueError) as exc:
                return self._send(400, {"error": str(exc)})
            except Exception as exc:  # a bug must not take the server down
                log.exception("control request failed")
                return self._send(500, {"error": f"internal error: {exc}"})

        def _serve(self, method: str) -> None:
            """The checks of every request before its route: the token, then the length."""
            if not self._authorized():
                return self._send(401, {"error": "missing or wrong control token "
                                                 "(Authorization: Bearer <token>)"}, close=True)
            try:
                self._length_checked = self._length()
            except _Refused as exc:
                return self._send(exc.status, {"error": str(exc)}, close=True)
            self._route(method)

        def do_GET(self) -> None:  # noqa: N802
            self._serve("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._serve("POST")

        def do_DELETE(self) -> None:  # noqa: N802
            self._serve("DELETE")

    return Handler


class _BoundedHTTPServer(ThreadingHTTPServer):
    """ThreadingHTTPServer with at most ``max_threads`` handler threads (module doc)."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type, max_threads: int):
        self._slots = threading.BoundedSemaphore(max_threads)
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self._busy(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        """ThreadingMixIn's, with the slot given back before the connection is closed: a
        client that sees its connection end can count on the slot being free."""
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self._slots.release()
            self.shutdown_request(request)

    def _busy(self, request: socket.socket) -> None:
        """503 at once, on the accepting thread, without reading the request."""
        body = b'{"error": "the control API is serving as many requests as it may; retry"}'
        try:
            request.settimeout(1.0)
            request.sendall(b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: "
                            b"application/json\r\nRetry-After: 1\r\nConnection: close\r\n"
                            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        except OSError:
            pass
        self.shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("control: a connection from %s ended in error", client_address[0],
                  exc_info=True)


class ControlServer:
    """The control API on ``host``:``port``; ``token``: the bearer token every request must
    carry (None: no token, which server/main.py allows on loopback only)."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0,
                 token: str | None = None, max_threads: int = MAX_THREADS,
                 timeout: float = READ_TIMEOUT):
        self.api = ControlApi(app)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        server_class = type("_Server", (_BoundedHTTPServer,), {"address_family": family})
        self.httpd = server_class((host, port), _handler_class(self.api, token, timeout),
                                  max_threads)
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="control",
                                        daemon=True)
    @property
    def address(self) -> tuple[str, int]:
        return self.httpd.server_address[:2]

    def start(self) -> ControlServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)
