"""SUT control: how the suite sets up a case's preconditions on the system under test.

* ``ReferenceControl``: the reference server's control API (server/control.py), over HTTP, or
  in process for a ModelTarget (any object with ControlApi's methods);
* ``CommandControl``: shell templates per action from the target file, e.g.
  ``create_queue: "powershell -c New-MsmqQueue -Name {name}"``; every value is shell-quoted
  before it is put in the template;
* ``NoControl``: nothing can be set up.

An action that cannot be carried out raises ``Inconclusive``: the case is reported as
inconclusive, never passed.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote

ACTIONS = ("create_queue", "send_message", "delete_queue", "reset")


class Inconclusive(Exception):
    """A precondition that could not be provisioned; the message says why."""


class SutControl:
    kind = "none"

    def create_queue(self, path: str, transactional: bool = False, label: str = "") -> None:
        raise Inconclusive(f"sut_control {self.kind}: cannot create queue {path}")

    def send_message(self, path: str, body: bytes, label: str = "", priority: int = 3) -> None:
        raise Inconclusive(f"sut_control {self.kind}: cannot send a message to {path}")

    def delete_queue(self, path: str) -> None:
        raise Inconclusive(f"sut_control {self.kind}: cannot delete queue {path}")

    def reset(self) -> None:
        raise Inconclusive(f"sut_control {self.kind}: cannot reset")

    def provision(self, path: str, messages: list[dict] | None = None,
                  transactional: bool = False) -> None:
        """Create a queue and send it messages ({"body": bytes, "label", "priority"})."""
        self.create_queue(path, transactional=transactional)
        for m in messages or []:
            self.send_message(path, m["body"], m.get("label", ""), m.get("priority", 3))


class NoControl(SutControl):
    kind = "none"


class ReferenceControl(SutControl):
    """The control API: ``api`` is a server.control.ControlApi (in process) or None with a
    ``url`` (http://host:port) of a running server's control API."""

    kind = "reference"

    def __init__(self, url: str | None = None, api: Any = None, timeout: float = 10.0):
        self.url = url.rstrip("/") if url else None
        self.api = api
        self.timeout = timeout

    def _http(self, method: str, path: str, body: dict | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, method=method, data=data,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:200]
            raise Inconclusive(f"control API {method} {path}: {exc.code} {detail}") from None
        except OSError as exc:
            raise Inconclusive(f"control API at {self.url}: {exc}") from None

    def _do(self, name: str, *args: Any) -> Any:
        from server.provision import ProvisionError

        try:
            return getattr(self.api, name)(*args)
        except (ProvisionError, LookupError) as exc:
            raise Inconclusive(f"control {name}: {exc}") from None

    def create_queue(self, path: str, transactional: bool = False, label: str = "") -> None:
        spec = {"path": path, "transactional": transactional, "label": label}
        if self.api is not None:
            self._do("create_queue", spec)
        else:
            self._http("POST", "/queues", spec)

    def send_message(self, path: str, body: bytes, label: str = "", priority: int = 3) -> None:
        spec = {"body_hex": body.hex(), "label": label, "priority": priority}
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


class CommandControl(SutControl):
    """Shell templates per action. Placeholders: {path} (queue path name), {name} (the queue
    name without ``private$\\``), {transactional} (true/false), {body} (text), {body_hex},
    {label}, {priority}. Values are quoted with shlex.quote."""

    kind = "command"

    def __init__(self, templates: dict[str, str], timeout: float = 60.0):
        self.templates = dict(templates)
        self.timeout = timeout

    def run(self, action: str, **values: Any) -> str:
        template = self.templates.get(action)
        if not template:
            raise Inconclusive(f"sut_control command: no template for {action}")
        quoted = {k: shlex.quote(str(v)) for k, v in values.items()}
        try:
            line = template.format(**quoted)
        except (KeyError, IndexError, ValueError) as exc:
            raise Inconclusive(f"sut_control command {action}: bad template ({exc})") from None
        try:
            done = subprocess.run(line, shell=True, capture_output=True, text=True,
                                  timeout=self.timeout)
        except subprocess.TimeoutExpired:
            raise Inconclusive(f"{action}: `{line}` did not finish in {self.timeout} s") \
                from None
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or [""])[-1][:200]
            raise Inconclusive(f"{action}: `{line}` exited {done.returncode}: {last}")
        return done.stdout

    @staticmethod
    def _values(path: str) -> dict[str, str]:
        return {"path": path, "name": path.split("\\")[-1]}

    def create_queue(self, path: str, transactional: bool = False, label: str = "") -> None:
        self.run("create_queue", transactional=str(transactional).lower(), label=label,
                 **self._values(path))

    def send_message(self, path: str, body: bytes, label: str = "", priority: int = 3) -> None:
        self.run("send_message", body=body.decode("utf-8", "replace"), body_hex=body.hex(),
                 label=label, priority=priority, **self._values(path))

    def delete_queue(self, path: str) -> None:
        self.run("delete_queue", **self._values(path))

    def reset(self) -> None:
        self.run("reset")
