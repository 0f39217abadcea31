"""SUT control: how the suite sets up a case's preconditions on the system under test.

* ``ReferenceControl``: the reference server's control API (server/control.py), over HTTP, or
  in process for a ModelTarget (any object with ControlApi's methods);
* ``CommandControl``: a command per action from the target file, either an argument list
  run without a shell (``create_queue: [pwsh, -NoProfile, -File, sut.ps1, create_queue,
  "{path}"]``: each value becomes one argument as it is, nothing to quote) or a POSIX shell
  line (``create_queue: "my-sut create {name}"``: every value is shell-quoted first);
* ``NoControl``: nothing can be set up.

A queue may be journaled (``journal``: Queue.Journaling of MS-MQDMPR 3.1.1.2, a copy of each
message received from it goes to its queue journal). Besides queues and messages, a control can
end a transaction (``end_transaction``: Transaction
Commit or Abort, MS-MQDMPR 3.1.4.4/3.1.4.5) and set the Pending Request Cleanup Timer
(``set_cleanup_timer``, MS-MQRR 3.1.2.2: its duration is implementation-dependent).

The state a transfer protocol keeps, which no RemoteRead or qmmgmt call sets, is provisioned
as the ADM names it: an outgoing queue's State, NextHops, OutgoingTransferInfo (the EOD
sequence data) and ConnectionHistory (``open_outgoing``, MS-MQDMPR 3.1.1.3 and 3.1.1.4), and a
local queue's IncomingTransactionalTransferInfoCollection
(``set_incoming_transactional_transfer_info``, MS-MQDMPR 3.1.1.5). Their values are JSON as the
control API takes them (server/control.py: ADM attribute names in snake case).

An action that cannot be carried out raises ``Inconclusive``: the case is reported as
inconclusive, never passed.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote

from mqconform.model.provisioning import MESSAGE_KEYS, ProvisionError

ACTIONS = ("create_queue", "send_message", "delete_queue", "reset", "create_subqueue",
           "commit_transaction", "abort_transaction", "set_cleanup_timer", "open_outgoing",
           "configure_queue_manager", "create_queue_from",
           "set_incoming_transactional_transfer_info", "private_format_name",
           "public_format_name")
#: what open_outgoing may set besides the State: OutgoingQueue.NextHops,
#: .OutgoingTransferInfoReference and .ConnectionHistory (MS-MQDMPR 3.1.1.3), as the keys of
#: the control API's POST /outgoing
TRANSFER_KEYS = ("next_hops", "outgoing_transfer_info", "connection_history", "messages")


def outgoing_spec(format_name: str, state: str | None = None, **transfer: Any) -> dict:
    """The control API's POST /outgoing document: the format name, the State if given, and
    the TRANSFER_KEYS given (None: not set)."""
    unknown = set(transfer) - set(TRANSFER_KEYS)
    if unknown:
        raise TypeError(f"open_outgoing: unknown key(s) {sorted(unknown)}")
    spec: dict[str, Any] = {"format_name": format_name}
    if state is not None:
        spec["state"] = state
    spec.update({k: v for k, v in transfer.items() if v is not None})
    return spec


class Inconclusive(Exception):
    """A precondition that could not be provisioned; the message says why."""


class SutControl:
    kind = "none"

    def create_queue(self, path: str, transactional: bool = False, label: str = "",
                     subqueues: list[str] | tuple[str, ...] = (),
                     journal: bool = False) -> None:
        """Create a queue; ``journal``: with Queue.Journaling True (MS-MQDMPR 3.1.1.2)."""
        raise Inconclusive(f"sut_control {self.kind}: cannot create queue {path}")

    def send_message(self, path: str, body: bytes, label: str = "", priority: int = 3,
                     dead_letter_queue: str = "", **more: Any) -> None:
        """Send a message to a queue. ``more``: the other message keys of the provisioning
        document (model/provisioning.py MESSAGE_KEYS: soap_envelope, compound_message,
        soap_header, soap_body, received_from, direct)."""
        raise Inconclusive(f"sut_control {self.kind}: cannot send a message to {path}")

    def delete_queue(self, path: str) -> None:
        raise Inconclusive(f"sut_control {self.kind}: cannot delete queue {path}")

    def reset(self) -> None:
        raise Inconclusive(f"sut_control {self.kind}: cannot reset")

    def open_outgoing(self, format_name: str, state: str | None = None,
                      **transfer: Any) -> None:
        """An outgoing queue for a remote format name (what an application that opens it for
        send leaves), optionally in an OutgoingQueue.State (MS-MQDMPR 3.1.1.3) by name, and
        with what its transfer protocol would have set (``transfer``, TRANSFER_KEYS:
        ``next_hops``, a list of addresses; ``outgoing_transfer_info``, an object of
        OutgoingTransferInfo attributes, MS-MQDMPR 3.1.1.4; ``connection_history``, a list of
        ConnectionHistory entries; ``messages``, messages awaiting transfer, each a mapping of
        send_message's keys)."""
        raise Inconclusive(f"sut_control {self.kind}: cannot make an outgoing queue for "
                           f"{format_name}")

    def set_incoming_transactional_transfer_info(self, path: str, entries: list[dict]
                                                 ) -> None:
        """Set the IncomingTransactionalTransferInfoCollection of the queue at ``path``
        (MS-MQDMPR 3.1.1.2, 3.1.1.5): one object per remote queue manager that sent
        transactional messages to it (format_name, sender_identifier, sequence_identifier,
        sequence_number, last_access_time, reject_count)."""
        raise Inconclusive(f"sut_control {self.kind}: cannot set the incoming transactional "
                           f"transfer information of {path}")

    def configure_queue_manager(self, spec: dict) -> dict:
        """Set QueueManager configuration attributes (MS-MQDMPR 3.1.1.1: directory_integrated,
        directory_offline, foreign_system, directory_server_list); returns the previous
        values, to be set back."""
        raise Inconclusive(f"sut_control {self.kind}: cannot configure the queue manager "
                           f"({', '.join(sorted(spec))})")

    def create_queue_from(self, spec: dict) -> None:
        """Create a queue from a provisioning document's queue entry (path, transactional,
        label, journal, subqueues, ...); only the keys create_queue takes unless overridden."""
        if set(spec) - {"path", "transactional", "label", "journal"}:
            raise Inconclusive(f"sut_control {self.kind}: cannot create queue "
                               f"{spec.get('path')} with {sorted(set(spec) - {'path'})}")
        extra = {"journal": True} if spec.get("journal") else {}
        self.create_queue(spec["path"], transactional=spec.get("transactional", False),
                          label=spec.get("label", ""), **extra)

    def end_transaction(self, identifier: bytes, commit: bool) -> None:
        """Commit or abort the transaction with this identifier (its 16 XACTUOW bytes)."""
        raise Inconclusive(f"sut_control {self.kind}: cannot "
                           f"{'commit' if commit else 'abort'} a transaction")

    def set_cleanup_timer(self, ms: int) -> int | None:
        """Set the Pending Request Cleanup Timer (MS-MQRR 3.1.2.2) of the requests that start
        from now on to ``ms`` milliseconds; returns the previous setting if known."""
        raise Inconclusive(f"sut_control {self.kind}: cannot set the Pending Request Cleanup "
                           f"Timer")

    def private_format_name(self, path: str) -> str:
        """The PRIVATE= format name of the private queue at ``path`` (MS-MQMQ 2.1.4:
        PRIVATE=ComputerGuid\\QueueNumber, the queue manager's identifier and the queue's
        PrivateQueueNumber, MS-MQDMPR 3.1.1.1 and 3.1.1.2), which only the target knows."""
        raise Inconclusive(f"sut_control {self.kind}: cannot tell the PRIVATE= format name of "
                           f"{path}")

    def public_format_name(self, path: str) -> str:
        """The PUBLIC= format name of the public queue at ``path`` (MS-MQMQ 2.1.3:
        PUBLIC=QueueGuid, the queue's Identifier, MS-MQDMPR 3.1.1.2, which the directory
        gives it), which only the target knows."""
        raise Inconclusive(f"sut_control {self.kind}: cannot tell the PUBLIC= format name of "
                           f"{path}")

    def choices(self) -> str | None:
        """The name of the allowed choices the target serves (model/choices.py PROFILES,
        spec/choices.yaml), where its control says; None where it cannot."""
        return None

    def provision(self, path: str, messages: list[dict] | None = None,
                  transactional: bool = False,
                  subqueues: list[str] | tuple[str, ...] = (), journal: bool = False) -> None:
        """Create a queue (with these subqueues; journaled if ``journal``) and send it
        messages ({"body": bytes, "label", "priority", "dead_letter_queue"})."""
        extra: dict[str, Any] = {}
        if subqueues:
            extra["subqueues"] = tuple(subqueues)
        if journal:
            extra["journal"] = True
        self.create_queue(path, transactional=transactional, **extra)
        for m in messages or []:
            self.send_message(path, **m)


class NoControl(SutControl):
    kind = "none"


class ReferenceControl(SutControl):
    """The control API: ``api`` is a server.control.ControlApi (in process) or None with a
    ``url`` (http://host:port) of a running server's control API and the ``token`` it asks
    for (sent as ``Authorization: Bearer``; None: a server run without one)."""

    kind = "reference"

    def __init__(self, url: str | None = None, api: Any = None, timeout: float = 10.0,
                 token: str | None = None):
        self.url = url.rstrip("/") if url else None
        self.api = api
        self.timeout = timeout
        self._token = token

    def __repr__(self) -> str:  # never the token
        return f"ReferenceControl({self.url or 'in process'})"

    def _http(self, method: str, path: str, body: dict | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"}
        if self._token is not None:
            headers["Authorization"] = f"Bearer {self._token}"
        req = urllib.request.Request(self.url + path, method=method, data=data,
                                     headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:200]
            raise Inconclusive(f"control API {method} {path}: {exc.code} {detail}") from None
        except OSError as exc:
            raise Inconclusive(f"control API at {self.url}: {exc}") from None

    def _do(self, name: str, *args: Any) -> Any:
        try:
            return getattr(self.api, name)(*args)
        except (ProvisionError, LookupError) as exc:
            raise Inconclusive(f"control {name}: {exc}") from None

    def create_queue(self, path: str, transactional: bool = False, label: str = "",
                     subqueues: list[str] | tuple[str, ...] = (),
                     journal: bool = False) -> None:
        spec: dict[str, Any] = {"path": path, "transactional": transactional, "label": label}
        if subqueues:
            spec["subqueues"] = list(subqueues)
        if journal:
            spec["journal"] = True
        if self.api is not None:
            self._do("create_queue", spec)
        else:
            self._http("POST", "/queues", spec)

    def send_message(self, path: str, body: bytes, label: str = "", priority: int = 3,
                     dead_letter_queue: str = "", **more: Any) -> None:
        spec = {"body_hex": body.hex(), "label": label, "priority": priority, **more}
        if dead_letter_queue:
            spec["dead_letter_queue"] = dead_letter_queue
        if self.api is not None:
            self._do("send", path, spec)
        else:
            self._http("POST", f"/queues/{quote(path, safe='')}/messages", spec)

    def delete_queue(self, path: str) -> None:
        if self.api is not None:
            self._do("delete_queue", path)
        else:
            self._http("DELETE", f"/queues/{quote(path, safe='')}")

    def reset(self) -> None:
        if self.api is not None:
            self._do("reset")
        else:
            self._http("POST", "/reset", {})

    def private_format_name(self, path: str) -> str:
        """``GET /queues``: the queue's "format_name"."""
        return self._listed_format_name(path, "PRIVATE=") or super().private_format_name(path)

    def public_format_name(self, path: str) -> str:
        """``GET /queues``: the queue's "format_name"."""
        return self._listed_format_name(path, "PUBLIC=") or super().public_format_name(path)

    def _listed_format_name(self, path: str, kind: str) -> str | None:
        """The "format_name" ``GET /queues`` lists for the queue at ``path``, if of this kind."""
        queues = self._do("queues") if self.api is not None else self._http("GET", "/queues")
        wanted = path.lower()
        for queue in queues if isinstance(queues, list) else ():
            pathname = str(queue.get("path", "")).lower()
            if wanted in (pathname, pathname.split("\\", 1)[-1]):
                name = queue.get("format_name")
                if isinstance(name, str) and name.upper().startswith(kind):
                    return name
                break
        return None

    def end_transaction(self, identifier: bytes, commit: bool) -> None:
        if self.api is not None:
            out = self._do("end_transaction", bytes(identifier), commit)
        else:
            out = self._http("POST", f"/transactions/{bytes(identifier).hex()}/"
                             f"{'commit' if commit else 'abort'}", {})
        status = (out or {}).get("status", 0) if isinstance(out, dict) else 0
        if status:
            raise Inconclusive(f"control: transaction {bytes(identifier).hex()} "
                               f"{'commit' if commit else 'abort'} answered {status:#x}")

    def set_cleanup_timer(self, ms: int) -> int | None:
        """In process, the queue manager's RemoteRead server; over HTTP, ``POST /settings``
        {"pending_request_cleanup_ms"} (a control API without that route: Inconclusive)."""
        if self.api is not None:
            app = getattr(self.api, "app", None)
            server = getattr(app, "remote_read", None)
            if server is None or not hasattr(server, "cleanup_ms"):
                return super().set_cleanup_timer(ms)
            with app.lock:
                previous, server.cleanup_ms = server.cleanup_ms, int(ms)
            return previous
        out = self._http("POST", "/settings", {"pending_request_cleanup_ms": int(ms)})
        return out.get("previous") if isinstance(out, dict) else None

    def choices(self) -> str | None:
        """``GET /settings`` "choices" (in process, the queue manager's own)."""
        if self.api is not None:
            settings = getattr(self.api, "current_settings", None)
            return settings()["choices"] if settings is not None else None
        try:
            out = self._http("GET", "/settings")
        except Inconclusive:  # a control API without the route
            return None
        name = out.get("choices") if isinstance(out, dict) else None
        return name if isinstance(name, str) else None

    def open_outgoing(self, format_name: str, state: str | None = None,
                      **transfer: Any) -> None:
        """``POST /outgoing``; a control API that refuses a key (one without the transfer
        keys) makes the case inconclusive."""
        spec = outgoing_spec(format_name, state, **transfer)
        if self.api is not None:
            self._do("open_outgoing", spec)
        else:
            self._http("POST", "/outgoing", spec)

    def set_incoming_transactional_transfer_info(self, path: str, entries: list[dict]
                                                 ) -> None:
        """``POST /queues/<path>/incoming_transactional_transfer_info``; an in-process control
        without the operation cannot (Inconclusive), nor can a control API without the route
        (its 404)."""
        spec = {"entries": list(entries)}
        if self.api is not None:
            if not hasattr(self.api, "set_incoming_transactional_transfer_info"):
                return super().set_incoming_transactional_transfer_info(path, entries)
            self._do("set_incoming_transactional_transfer_info", path, spec)
        else:
            self._http("POST", f"/queues/{quote(path, safe='')}/"
                       f"incoming_transactional_transfer_info", spec)

    def configure_queue_manager(self, spec: dict) -> dict:
        if self.api is not None:
            return self._do("configure", dict(spec))
        return self._http("POST", "/queue_manager", dict(spec))

    def create_queue_from(self, spec: dict) -> None:
        if self.api is not None:
            self._do("create_queue", dict(spec))
        else:
            self._http("POST", "/queues", dict(spec))


#: the optional message keys a send_message template may use, and what they read when a
#: message does not set them (an empty text: the template's command keeps its own default)
OPTIONAL_MESSAGE_KEYS = tuple(sorted(MESSAGE_KEYS - {"body", "body_hex", "label", "priority"}))
#: the longest text one command argument may be (Linux: MAX_ARG_STRLEN, 32 pages); a body
#: whose {body} or {body_hex} would be longer goes by {body_file}
MAX_ARGUMENT = 128 * 1024 - 1
#: the values a send_message template must consume when a message sets them otherwise than
#: this: a template that ignores one would send another message than the case relies on
DEFAULTS = {"label": "", "priority": 3}


def _compact(value: dict) -> str:
    """A JSON value for one template placeholder: one line, keys in order."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


class CommandControl(SutControl):
    """Command templates per action: an argument list (run as it is, no shell; each placeholder's
    value is put into its argument unquoted) or a shell line (run by /bin/sh; values quoted with
    shlex.quote). Placeholders: {path} (queue path name), {name} (the queue name without
    ``private$\\``), {transactional} (true/false), {journal} (true/false: the queue's Journaling)
    for create_queue, {body} (text), {body_hex}, {body_file} (a file holding the body, for
    bodies too long for an argument: some 64 KiB and more), {label}, {priority}, and the optional
    message keys
    (OPTIONAL_MESSAGE_KEYS: an empty text when the message does not set one); {subqueue} for
    create_subqueue; {transaction} (the XACTUOW in hex) for commit_transaction and
    abort_transaction; {ms} for set_cleanup_timer, whose command prints the previous duration in
    milliseconds (the suite restores it after the case); {format_name}, {state} (an
    OutgoingQueue.State name, empty for none) and {spec} (the JSON document of the control API's
    POST /outgoing: format_name, state, next_hops, outgoing_transfer_info, connection_history) for
    open_outgoing; {path}, {name} and {entries} (a JSON array of IncomingTransactionalTransferInfo
    objects) for set_incoming_transactional_transfer_info; {settings} (a JSON object of QueueManager
    attributes) for configure_queue_manager, whose command prints the previous values as a JSON
    object on its last line (the suite sets them back after the case); {spec} (the JSON queue entry
    of the control API's POST /queues: path, queue_type, subqueues, access, ...) and {path}, {name}
    for create_queue_from, which makes the queues create_queue cannot (a connector queue, a queue
    with an access list); {path}, {name} for private_format_name, whose command prints the
    queue's PRIVATE= format name (MS-MQMQ 2.1.4) on its last line. Without a create_subqueue
    template, subqueues are taken to exist implicitly (as Windows MSMQ creates them on first
    use). A journaled queue needs a create_queue
    template that takes {journal}, or else create_queue_from; with neither the case is inconclusive.
    So is an outgoing queue with NextHops, an OutgoingTransferInfo or a ConnectionHistory whose
    open_outgoing template takes no {spec}: nothing is run.

    A case never runs on a message the template could not express: a message that sets a key
    (or a label or priority other than the defaults) its template does not take is not sent,
    and the case is inconclusive."""

    kind = "command"

    def __init__(self, templates: dict[str, str | list[str]], timeout: float = 60.0):
        self.templates = dict(templates)
        self.timeout = timeout

    def run(self, action: str, **values: Any) -> str:
        template = self.templates.get(action)
        if not template:
            raise Inconclusive(f"sut_control command: no template for {action}")
        try:
            if isinstance(template, list):  # an argument list: no shell, nothing quoted
                raw = {k: str(v) for k, v in values.items()}
                argv: list[str] | str = [str(a).format(**raw) for a in template]
                line = shlex.join(argv)
            else:
                argv = line = template.format(**{k: shlex.quote(str(v))
                                                 for k, v in values.items()})
        except (KeyError, IndexError, ValueError) as exc:
            raise Inconclusive(f"sut_control command {action}: bad template ({exc})") from None
        try:
            done = subprocess.run(argv, shell=isinstance(argv, str), capture_output=True,
                                  text=True, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            raise Inconclusive(f"{action}: `{line}` did not finish in {self.timeout} s") \
                from None
        except OSError as exc:  # an argument list whose program is missing
            raise Inconclusive(f"{action}: `{line}` did not start: {exc.strerror or exc}") \
                from None
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or [""])[-1][:200]
            raise Inconclusive(f"{action}: `{line}` exited {done.returncode}: {last}")
        return done.stdout

    @staticmethod
    def _values(path: str) -> dict[str, str]:
        return {"path": path, "name": path.split("\\")[-1]}

    def create_queue(self, path: str, transactional: bool = False, label: str = "",
                     subqueues: list[str] | tuple[str, ...] = (),
                     journal: bool = False) -> None:
        """Subqueues by create_subqueue; without that template, by create_queue_from (the
        queue and its subqueues at once) if there is one, else taken to exist implicitly. A
        journaled queue by a create_queue template that takes {journal}, else by
        create_queue_from; with neither it cannot be made (Inconclusive): a queue made
        without journaling would be another queue than the case relies on."""
        journal_by_template = "{journal}" in self._text("create_queue")
        if journal and not journal_by_template and "create_queue_from" not in self.templates:
            raise Inconclusive("sut_control command: the create_queue template takes no "
                               "{journal} and there is no create_queue_from template, so a "
                               "journaled queue cannot be made")
        via_spec = (subqueues and "create_subqueue" not in self.templates) or \
            (journal and not journal_by_template)
        if via_spec and "create_queue_from" in self.templates:
            spec: dict[str, Any] = {"path": path, "transactional": transactional,
                                    "label": label}
            if subqueues:
                spec["subqueues"] = list(subqueues)
            if journal:
                spec["journal"] = True
            self.run("create_queue_from", spec=_compact(spec), **self._values(path))
            return
        self.run("create_queue", transactional=str(transactional).lower(), label=label,
                 journal=str(journal).lower(), **self._values(path))
        if "create_subqueue" in self.templates:
            for name in subqueues:
                self.run("create_subqueue", subqueue=name, **self._values(path))

    def _text(self, action: str) -> str:
        """The template of an action as one text (an argument list joined), to look for its
        placeholders; empty when there is none."""
        template = self.templates.get(action, "")
        return " ".join(map(str, template)) if isinstance(template, list) else str(template)

    def send_message(self, path: str, body: bytes, label: str = "", priority: int = 3,
                     dead_letter_queue: str = "", **more: Any) -> None:
        """Every value the message sets (``more``, a dead-letter queue, a label or priority
        other than the defaults) must be a placeholder of the send_message template: a
        template that does not take one would send another message (Inconclusive). The
        optional keys a message does not set read as empty texts."""
        template = self._text("send_message")
        given = {k: v for k, v in more.items() if v not in (None, "")}
        if dead_letter_queue:
            given["dead_letter_queue"] = dead_letter_queue
        given.update({k: v for k, v in (("label", label), ("priority", priority))
                      if v != DEFAULTS[k]})
        missing = sorted(k for k in given if "{" + k + "}" not in template)
        by_file = "{body_file}" in template
        if template and not by_file and "{body}" not in template \
                and "{body_hex}" not in template:
            missing.insert(0, "body")
        if missing:
            raise Inconclusive(f"sut_control command: the send_message template takes no "
                               f"{', '.join('{' + k + '}' for k in missing)}, which this "
                               f"message sets")
        if not by_file and 2 * len(body) > MAX_ARGUMENT:
            raise Inconclusive(f"sut_control command: a body of {len(body)} bytes is more than "
                               f"one command argument holds; give the send_message template "
                               f"{{body_file}} (a file holding the body)")
        values = {k: "" for k in OPTIONAL_MESSAGE_KEYS}
        values.update({k: ("" if v is None else v) for k, v in more.items()})
        with tempfile.TemporaryDirectory(prefix="mqc-body-") as folder:
            body_file = os.path.join(folder, "body")
            if by_file:
                with open(body_file, "wb") as out:
                    out.write(body)
            self.run("send_message", **{**values, "body": body.decode("utf-8", "replace"),
                                        "body_hex": "" if by_file else body.hex(),
                                        "body_file": body_file, "label": label,
                                        "priority": priority,
                                        "dead_letter_queue": dead_letter_queue,
                                        **self._values(path)})

    def delete_queue(self, path: str) -> None:
        self.run("delete_queue", **self._values(path))

    def open_outgoing(self, format_name: str, state: str | None = None,
                      **transfer: Any) -> None:
        """A template that takes no {spec} can make only a queue in a State: one that must
        also have NextHops, an OutgoingTransferInfo or a ConnectionHistory is not made
        (Inconclusive), as a queue without them would be another queue than the case relies
        on."""
        spec = outgoing_spec(format_name, state, **transfer)
        given = sorted(set(spec) & set(TRANSFER_KEYS))
        if given and "{spec}" not in self._text("open_outgoing"):
            raise Inconclusive(f"sut_control command: the open_outgoing template takes no "
                               f"{{spec}}, which an outgoing queue with {', '.join(given)} "
                               f"needs")
        self.run("open_outgoing", format_name=format_name, state=state or "",
                 spec=_compact(spec))

    def set_incoming_transactional_transfer_info(self, path: str, entries: list[dict]
                                                 ) -> None:
        self.run("set_incoming_transactional_transfer_info",
                 entries=json.dumps(list(entries), separators=(",", ":"), sort_keys=True),
                 **self._values(path))

    def configure_queue_manager(self, spec: dict) -> dict:
        """The command prints the previous values (a JSON object) on its last line; without
        them the target could not be set back: ``reset`` is run and the case is
        inconclusive."""
        out = self.run("configure_queue_manager",
                       settings=_compact(spec))
        last = (out.strip().splitlines() or [""])[-1].strip()
        try:
            previous = json.loads(last)
        except ValueError:
            previous = None
        if isinstance(previous, dict) and set(previous) == set(spec):
            return previous
        if "reset" in self.templates:
            self.run("reset")
        raise Inconclusive(f"sut_control command configure_queue_manager printed no previous "
                           f"values ({last[:60]!r}), so they cannot be set back after the "
                           f"case: print a JSON object with the keys it was given")

    def create_queue_from(self, spec: dict) -> None:
        """A queue create_queue (and create_subqueue) can make goes through them; any other
        (a queue_type, an access list, ...) needs the create_queue_from template."""
        if not set(spec) - {"path", "transactional", "label", "subqueues", "journal"}:
            self.create_queue(spec["path"], transactional=spec.get("transactional", False),
                              label=spec.get("label", ""),
                              subqueues=tuple(spec.get("subqueues") or ()),
                              journal=bool(spec.get("journal", False)))
            return
        if "create_queue_from" not in self.templates:
            raise Inconclusive(f"sut_control command: no template for create_queue_from, "
                               f"which a queue with {sorted(set(spec) - {'path'})} needs")
        self.run("create_queue_from", spec=_compact(spec),
                 **self._values(spec["path"]))

    def reset(self) -> None:
        self.run("reset")

    def private_format_name(self, path: str) -> str:
        """The command prints the queue's PRIVATE= format name on its last line."""
        return self._printed_format_name("private_format_name", path, "PRIVATE=")

    def public_format_name(self, path: str) -> str:
        """The command prints the queue's PUBLIC= format name on its last line."""
        return self._printed_format_name("public_format_name", path, "PUBLIC=")

    def _printed_format_name(self, action: str, path: str, kind: str) -> str:
        out = self.run(action, **self._values(path))
        last = (out.strip().splitlines() or [""])[-1].strip()
        if not last.upper().startswith(kind):
            raise Inconclusive(f"sut_control command {action} printed {last[:60]!r}, not a "
                               f"{kind} format name")
        return last

    def end_transaction(self, identifier: bytes, commit: bool) -> None:
        self.run("commit_transaction" if commit else "abort_transaction",
                 transaction=bytes(identifier).hex())

    def set_cleanup_timer(self, ms: int) -> int | None:
        """The command prints the previous duration (ms) on its last line, for the suite to
        set back after the case. A command that prints none leaves the target changed for
        the cases after it: the ``reset`` template (if any) is run, and the case is
        inconclusive."""
        out = self.run("set_cleanup_timer", ms=int(ms))
        last = (out.strip().splitlines() or [""])[-1].strip()
        try:
            return int(last)
        except ValueError:
            pass
        if "reset" in self.templates:
            self.run("reset")
        raise Inconclusive(f"sut_control command set_cleanup_timer printed no previous "
                           f"duration ({last[:60]!r}), so it cannot be set back after the "
                           f"case: print the previous value in milliseconds")
