"""The control API of the reference queue manager: how a test suite sets up preconditions.

It is not part of MSMQ and is off unless ``mqconform serve --control-port`` asks for it; it
listens on the server's host (127.0.0.1 by default) and speaks JSON over HTTP:

    GET    /queues                          the queues with their message counts by state
    POST   /queues                          {"path", "transactional", "label", "quota",
                                             "subqueues"} (the provisioning document's keys)
    DELETE /queues/<path>                   Delete Queue (MS-MQDMPR 3.1.7.1.4)
    POST   /queues/<path>/messages          {"body" | "body_hex", "label", "priority",
                                             "time_to_be_received"} -> {"lookup_id"}
    POST   /transactions/<hex>/commit|abort Transaction Commit/Abort (MS-MQDMPR 3.1.4.4/5)
    POST   /reset                           delete every queue the control API or the
                                            provisioning document created

``<path>`` is URL-encoded. Every request runs under the queue manager's lock, like an RPC call.
Errors answer 400 (bad request) or 404 (no such queue) with {"error": "..."}.
"""

from __future__ import annotations

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

from model.adm import MessagePositionState
from model.message_ops import enqueue_message
from server.provision import ProvisionError, make_message, provision

log = logging.getLogger(__name__)
MAX_BODY = 16 << 20


class ControlApi:
    """Operations on a running ReferenceQueueManager (``app``: server.app)."""

    def __init__(self, app: Any):
        self.app = app

    @property
    def env(self):
        return self.app.env

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
                out.append({"path": q.pathname, "transactional": q.transactional,
                            "messages": states, "open": len(q.open_queue_descriptor_collection),
                            "subqueues": [s.pathname for s in q.subqueue_collection]})
        return out

    def create_queue(self, spec: dict) -> dict:
        with self.app.lock:
            made = provision(json.dumps({"queues": [spec]}), "request", env=self.env)
            [queue] = made.queues.values()
            return {"path": queue.pathname}

    def delete_queue(self, path: str) -> dict:
        from model.queue_management import delete_queue

        with self.app.lock:
            queue = self._queue(path)
            status = delete_queue(self.env, queue, skip_directory=True)
            return {"status": int(getattr(status, "value", status) or 0)
                    if isinstance(status, int) else str(status)}

    def send(self, path: str, spec: dict) -> dict:
        with self.app.lock:
            queue = self._queue(path)
            message = make_message(spec, "message")
            message.arrival_time = self.env.now // 1000
            status = enqueue_message(self.env, queue, message)
            if status != 0:
                raise ProvisionError(f"message: Enqueue Message refused it (rStatus {status})")
            self.app._deliver()  # a waiting receive may have taken it
            return {"lookup_id": message.lookup_identifier}

    def end_transaction(self, identifier: bytes, commit: bool) -> dict:
        from model.higher_layer import transaction_abort, transaction_commit

        with self.app.lock:
            status = (transaction_commit if commit else transaction_abort)(self.env, identifier)
            self.app._deliver()
            return {"status": status}

    def reset(self) -> dict:
        from model.queue_management import delete_queue

        with self.app.lock:
            qm = self.env.local_queue_manager
            deleted = 0
            for q in [q for q in qm.queue_collection if q.pathname]:
                delete_queue(self.env, q, skip_directory=True)
                if q in qm.queue_collection:
                    qm.queue_collection.remove(q)
                deleted += 1
            qm.transaction_collection.clear()
            self.app._deliver()
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
            length = int(self.headers.get("Content-Length") or 0)
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

        def _route(self, method: str) -> None:
            parts = [unquote(p) for p in self.path.split("?", 1)[0].strip("/").split("/") if p]
            try:
                if method == "GET" and parts == ["queues"]:
                    return self._send(200, api.queues())
                if method == "POST" and parts == ["queues"]:
                    return self._send(201, api.create_queue(self._body()))
                if method == "DELETE" and len(parts) == 2 and parts[0] == "queues":
                    return self._send(200, api.delete_queue(parts[1]))
                if (method == "POST" and len(parts) == 3 and parts[0] == "queues"
                        and parts[2] == "messages"):
                    return self._send(201, api.send(parts[1], self._body()))
                if (method == "POST" and len(parts) == 3 and parts[0] == "transactions"
                        and parts[2] in ("commit", "abort")):
                    try:
                        identifier = bytes.fromhex(parts[1])
                    except ValueError:
                        raise ProvisionError("transaction identifier: not hexadecimal") from None
                    return self._send(200, api.end_transaction(identifier, parts[2] == "commit"))
                if method == "POST" and parts == ["reset"]:
                    return self._send(200, api.reset())
                return self._send(404, {"error": f"no route {method} /{'/'.join(parts)}"})
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
