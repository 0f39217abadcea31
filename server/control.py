"""The control API of the reference queue manager: how a test suite sets up preconditions.

It is not part of MSMQ and is off unless ``mqconform serve --control-port`` asks for it; it
listens on the server's host (127.0.0.1 by default) and speaks JSON over HTTP:

    GET    /queues                          the queues with their message counts by state
                                            and the messages in their queue journals
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
                                             "transactional"}
                                             (server/provision.py) -> {"lookup_id"}
    POST   /transactions/<hex>/commit|abort Transaction Commit/Abort (MS-MQDMPR 3.1.4.4/5)
    POST   /queue_manager                   {"directory_integrated", "directory_offline",
                                             "foreign_system", "directory_server_list"}:
                                            set these QueueManager attributes (MS-MQDMPR
                                            3.1.1.1) -> their previous values
    POST   /outgoing                        {"format_name", "state"}: an outgoing queue, as an
                                            application that opens a remote format name for
                                            send makes one (Open Queue with SendAccess,
                                            MS-MQDMPR 3.1.7.1.5, then Close Queue); "state"
                                            (an OutgoingQueueState name, optional) stands for
                                            the transfer protocol this server does not run
    POST   /settings                        {"pending_request_cleanup_ms": N} -> {"previous"}
    POST   /reset                           delete every queue the control API or the
                                            provisioning document created

``<path>`` is URL-encoded. Every request runs under the queue manager's lock, like an RPC call,
and a request that changes what the store keeps (``--store``) is written before it is answered.
Errors answer 400 (bad request) or 404 (no such queue) with {"error": "..."}; a change the
store could not write answers 507 (the disk is full) or 503 (the disk failed), with an error
naming the disk, and nothing of it was kept: a message it refused is never delivered.
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

from mqconform.model.adm import (
    MessageDeliveryGuarantee,
    MessagePositionState,
    OutgoingQueue,
    OutgoingQueueState,
    QueueAccessType,
    QueueShareMode,
)
from mqconform.model.formats import FormatNameError, parse_format_name
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
                                        if journal is not None else None)})
        return out

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
        after an application sent to it). ``spec["state"]``, if given, is then put in
        OutgoingQueue.State: the reference server runs no transfer protocol that would move
        the queue there."""
        unknown = set(spec) - {"format_name", "state"}
        if unknown:
            raise ProvisionError(f"outgoing: unknown key(s) {sorted(unknown)}")
        text = spec.get("format_name")
        if not isinstance(text, str) or not text:
            raise ProvisionError("outgoing.format_name: a format name is required")
        try:
            name = parse_format_name(text)
        except FormatNameError as exc:
            raise ProvisionError(f"outgoing.format_name: {exc}") from None
        state = spec.get("state")
        if state is not None and state not in OutgoingQueueState.__members__:
            raise ProvisionError(f"outgoing.state: not one of "
                                 f"{sorted(OutgoingQueueState.__members__)}")
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
            return {"format_name": queue.destination_format_name,
                    "state": queue.state.name if queue.state is not None else None}

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


def _handler_class(api: ControlApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "mqconform-control/1"

        def log_message(self, fmt: str, *args: Any) -> None:
            log.debug("control: " + fmt, *args)

        def _send(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> dict:
            text = (self.headers.get("Content-Length") or "0").strip()
            if not text.isdigit():  # "-1" would read to the end of the stream, unbounded
                raise ProvisionError(f"Content-Length {text[:20]!r}: not a number of octets")
            length = int(text)
            if length > MAX_BODY:
                raise ProvisionError(f"request body over {MAX_BODY} bytes")
            raw = self.rfile.read(length) if length else b"{}"
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
            except StoreWriteError as exc:  # nothing of the request was kept
                return self._send(507 if exc.full else 503, {"error": str(exc)})
            except LookupError as exc:
                return self._send(404, {"error": str(exc).strip("'\"")})
            except (ProvisionError, ValueError) as exc:
                return self._send(400, {"error": str(exc)})
            except Exception as exc:  # a bug must not take the server down
                log.exception("control request failed")
                return self._send(500, {"error": f"internal error: {exc}"})

        def do_GET(self) -> None:  # noqa: N802
            self._route("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._route("POST")

        def do_DELETE(self) -> None:  # noqa: N802
            self._route("DELETE")

    return Handler


class ControlServer:
    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0):
        self.api = ControlApi(app)
        self.httpd = ThreadingHTTPServer((host, port), _handler_class(self.api))
        self.httpd.daemon_threads = True
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
