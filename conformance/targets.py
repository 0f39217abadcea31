"""Targets: what the suite's cases call, in the model's vocabulary (model.calls).

``ModelTarget`` runs the model (model/mqrr.py, model/mqmr.py) in process on an Environment built
by model/provisioning.py, as the reference server builds its own; ``RpcTarget`` speaks DCE/RPC to
any ``ncacn_ip_tcp:host[port]`` through conformance.client.RpcClient. Both answer
``call(typed_call)`` with a typed Result and block while a call waits (a receive with a
timeout); both open a second
connection of the same association group with ``connect_second()`` (to cancel a waiting receive
as a Windows client does).

A ModelTarget's time is either ``real`` (model milliseconds follow time.monotonic, as in the
reference server) or ``virtual`` (a waiting call advances model time straight to the next timer:
the oracle's clock, which makes a 10 s receive timeout instant).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Protocol

import yaml

from mqconform.conformance import sources
from mqconform.conformance.client import ArgumentError, RpcClient, RpcError
from mqconform.model import calls as c
from mqconform.model.host import QueueManagerHost, Refused
from mqconform.model.outcome import Outcome
from mqconform.model.provisioning import ProvisionError, new_queue_manager, provision
from mqconform.model.runtime import Environment, Pending

DEFAULT_CAPABILITIES = {"ndr64": True, "transactions": True, "subqueues": True, "move": True,
                        "qmmgmt": True}


class TargetError(Exception):
    """A target that cannot be reached or used; one line."""


class NotApplicable(Exception):
    """The target declares a capability the case needs absent."""


#: the capability a call needs, by its type: the qmmgmt interface (MS-MQMR) as a whole, and
#: the move methods of RemoteRead (MS-MQRR 3.1.4.11, 3.1.4.10), which a server may leave out
MOVE_CALLS = (c.R_OpenQueueForMove, c.R_MoveMessage)


def needed_capability(typed_call: c.Call) -> str | None:
    if typed_call.interface == c.QMMGMT:
        return "qmmgmt"
    if isinstance(typed_call, MOVE_CALLS):
        return "move"
    return None


def require_capability(capabilities: Capabilities, typed_call: c.Call) -> None:
    """A call the target declares it cannot take makes its case not applicable: it is never
    sent (a target without qmmgmt would refuse the bind, and the case would read failed)."""
    needed = needed_capability(typed_call)
    if needed is not None and not capabilities.has(needed):
        raise NotApplicable(f"the target declares no {needed} ({type(typed_call).__name__})")


@dataclass
class Capabilities:
    declared: dict[str, bool] = field(default_factory=lambda: dict(DEFAULT_CAPABILITIES))

    def has(self, name: str) -> bool:
        return bool(self.declared.get(name, False))


class Target(Protocol):
    name: str
    capabilities: Capabilities

    def call(self, typed_call: c.Call) -> c.Result: ...

    def connect_second(self) -> Target: ...

    def close(self) -> None: ...


# ------------------------------------------------------------------------------ the model

class CallListener(Protocol):
    """What a model queue manager tells of the calls made on it, when it has a listener
    (conformance/golden.py records them as the golden vectors' conversations). ``conn``: the
    connection a call is made on (a ModelTarget, a session.ModelAssociation); ``like``: the
    connection whose association group a new one joins; ``token``: the model's token of the
    call, matched with ``on_completion`` when it waited."""

    def on_connect(self, conn: object, like: object | None = None) -> None: ...

    def on_request(self, conn: object, call: c.Call) -> int: ...

    def on_answer(self, conn: object, ref: int, result: c.Result,
                  token: int | None = None) -> None: ...

    def on_completion(self, token: int) -> None: ...

    def on_close(self, conn: object) -> None: ...


class ModelQueueManager:
    """One model queue manager shared by the ModelTarget connections on it: a clock (real or
    virtual) around the model's queue-manager host (model/host.py), which routes the calls and
    owns the association groups. It has the ``env``, ``lock`` and ``_deliver`` that
    server.control.ControlApi needs, so the reference SUT control drives it exactly as it
    drives the server. ``listener`` (a CallListener): told of every call, if set."""

    def __init__(self, env: Environment, port: int = 2103, clock: str = "real",
                 monotonic: Callable[[], float] = time.monotonic):
        self.env = env
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.host = QueueManagerHost(env, port=port)
        self.clock = clock
        self._monotonic = monotonic
        self._start = monotonic()
        self._tokens = itertools.count(1)
        self._done: dict[int, Outcome] = {}
        self._last = threading.local()  # the token of this thread's last call
        self.listener: CallListener | None = None

    @classmethod
    def from_yaml(cls, text: str = "", port: int = 2103, clock: str = "real",
                  computer_name: str | None = None, choices: str = "reference"
                  ) -> ModelQueueManager:
        """``choices``: a name of model/choices.py PROFILES."""
        from mqconform.model.choices import PROFILES

        if text.strip():
            try:
                document = yaml.safe_load(text)
            except yaml.YAMLError as exc:
                raise ProvisionError(f"<model>: not valid YAML ({exc})") from None
            # access lists are the server's security, which the oracle does not model
            env = provision(document, arrival_time=sources.arrival_time,
                            on_access=lambda queue, entry, where: None).env
        else:
            env = Environment(new_queue_manager({"computer_name": computer_name}
                                                if computer_name else None))
        env.choices = PROFILES[choices]
        return cls(env, port=port, clock=clock)

    @property
    def remote_read(self):
        return self.host.remote_read

    @property
    def qmmgmt(self):
        return self.host.qmmgmt

    def _now(self) -> int:
        return int((self._monotonic() - self._start) * 1000)

    def _advance(self) -> None:
        if self.clock == "real":
            self.env.advance(max(self.env.now, self._now()))

    def _deliver(self) -> None:
        done = []
        for token, outcome in self.host.completions():
            self._done[token] = outcome
            done.append(token)
        if self.listener is not None:
            for token in sorted(done):
                self.listener.on_completion(token)
        self.changed.notify_all()

    def last_token(self) -> int | None:
        """The token of the last call this thread made."""
        return getattr(self._last, "token", None)

    def start(self, typed_call: c.Call, group: Hashable | None = None
              ) -> Outcome | Pending | Refused:
        """Run one call in ``group`` (None: outside any association group); Pending if it
        waits (its Outcome lands in the table of done calls)."""
        with self.lock:
            self._advance()
            token = self._last.token = next(self._tokens)
            out = self.host.call(group, typed_call, token=token)
            self._deliver()
            return out

    def outcome(self, typed_call: c.Call, wait_limit: float = 60.0,
                group: Hashable | None = None) -> Outcome:
        """Run one call and return the model's Outcome, waiting for it if it waits. A call
        the host refuses (a context handle of another association group) comes back as the
        RPC fault a runtime raises."""
        with self.lock:
            out = self.start(typed_call, group)
            if isinstance(out, Refused):
                return Outcome(c.RESULTS[type(typed_call)](status=out.fault, raised=True),
                               out.rule)
            if not isinstance(out, Pending):
                return out
            token = out.token
            give_up = time.monotonic() + wait_limit
            while token not in self._done:
                deadline = self.env.next_deadline()
                if self.clock == "virtual":
                    if deadline is None:
                        raise TargetError(f"{type(typed_call).__name__} waits and nothing "
                                          f"can end the wait")
                    self.env.advance(int(deadline))
                    self._deliver()
                    continue
                if time.monotonic() > give_up:
                    raise TargetError(f"{type(typed_call).__name__}: no answer within "
                                      f"{wait_limit} s")
                wait = 0.05 if deadline is None else max(0.0, (deadline - self._now()) / 1000)
                self.changed.wait(timeout=min(wait, 0.05) + 0.001)
                self._advance()
                self._deliver()
            return self._done.pop(token)


class ModelTarget:
    """The model in process (ARCHITECTURE.md "The suite")."""

    def __init__(self, qm: ModelQueueManager | None = None, name: str = "model",
                 capabilities: Capabilities | None = None):
        self.qm = qm or ModelQueueManager.from_yaml()
        self.name = name
        self.capabilities = capabilities or Capabilities()
        self.endpoint = "model"

    @property
    def computer_name(self) -> str:
        return self.qm.env.local_queue_manager.computer_name

    def outcome(self, typed_call: c.Call) -> Outcome:
        return self.qm.outcome(typed_call)

    def call(self, typed_call: c.Call) -> c.Result:
        require_capability(self.capabilities, typed_call)
        listener = self.qm.listener
        if listener is None:
            return self.qm.outcome(typed_call).result
        ref = listener.on_request(self, typed_call)
        result = self.qm.outcome(typed_call).result
        listener.on_answer(self, ref, result, self.qm.last_token())
        return result

    def connect_second(self) -> ModelTarget:
        second = ModelTarget(self.qm, self.name, self.capabilities)
        if self.qm.listener is not None:
            self.qm.listener.on_connect(second, like=self)
        return second

    def close(self) -> None:
        if self.qm.listener is not None:
            self.qm.listener.on_close(self)


# ------------------------------------------------------------------------------ over RPC

#: The recorder (captures.recorder.Recorder) an RpcTarget records to when it is given none:
#: conformance.plugin sets it for a run, so the targets the session opens are all recorded.
RECORDER = None


class RpcTarget:
    """Any RemoteRead/qmmgmt endpoint over ncacn_ip_tcp (conformance.client.RpcClient). With a
    ``recorder`` (or the module's RECORDER), every octet exchanged goes into it, and each call
    notes its frames there (``recorder.note_call``) for the call record to claim."""

    def __init__(self, endpoint: str, ndr64: bool = False, name: str | None = None,
                 capabilities: Capabilities | None = None, timeout: float = 10.0,
                 epm_port: int = 135, computer_name: str = "MQREF", assoc_group: int = 0,
                 recorder=None, credentials=None, verification_trailer: bool = False):
        self.endpoint = endpoint
        self.ndr64 = ndr64
        self.name = name or endpoint
        self.capabilities = capabilities or Capabilities()
        self.computer_name = computer_name
        # recorder=False: not recorded at all (a probe of whether the target still answers)
        self.recorder = None if recorder is False else \
            recorder if recorder is not None else RECORDER
        # every connection this target opens (second clients, replays) authenticates alike
        self._options = {"timeout": timeout, "epm_port": epm_port, "credentials": credentials,
                         "verification_trailer": verification_trailer}
        self.client = RpcClient(assoc_group=assoc_group, recorder=self.recorder,
                                **self._options)
        try:
            self.client.connect(endpoint, ndr64=ndr64)
        except (RpcError, ArgumentError) as exc:
            raise TargetError(f"{endpoint}: {exc}") from None

    @property
    def port(self) -> int:
        return self.client._associations[c.REMOTEREAD].port

    def call(self, typed_call: c.Call) -> c.Result:
        require_capability(self.capabilities, typed_call)
        mark = self.recorder.mark() if self.recorder is not None else None
        try:
            return self.client.call(typed_call)
        except RpcError as exc:
            raise TargetError(f"{self.endpoint}: {exc}") from None
        finally:
            if mark is not None:
                self.recorder.note_call(mark)

    def connect_second(self) -> RpcTarget:
        return RpcTarget(self.endpoint, self.ndr64, self.name, self.capabilities,
                         computer_name=self.computer_name,
                         assoc_group=self.client.assoc_group, recorder=self.recorder,
                         **self._options)

    def close(self, wait: float = 0.0) -> None:
        """``wait``: seconds to wait for the server's side to close after ours (the rundown of
        a server that closes its side after it is likely done)."""
        self.client.close(wait)


# ------------------------------------------------------------------ the embedded reference

class ServeProcess:
    """The embedded reference server for ``--target reference``: ``mqconform serve`` on
    127.0.0.1, free ports, started as a process of its own (as a user starts it), so that the
    suite and the server share no interpreter, no lock and no memory. ``endpoint`` and
    ``control_url`` are read from the two lines it prints; its stderr goes to a temporary file
    that a failure to start quotes, or to ``self.proc.stderr`` with ``pipe_stderr`` (a reader
    must drain it). ``args``: more options of ``mqconform serve`` (``--queues``, ``--store``);
    the benchmarks and the durability tests start, kill and restart it."""

    #: the environment variable that hands the control token to the server
    TOKEN_ENV = "MQC_CONTROL_TOKEN"

    def __init__(self, start_timeout: float = 30.0, args: tuple[str, ...] = (),
                 pipe_stderr: bool = False, env: dict[str, str] | None = None):
        """``env``: variables added to the server's environment (passwords named by
        ``password_env`` in its provisioning file, which then holds no secret). The control
        API's token (``control_token``) is made here for this server and handed over in its
        environment: it is in no argument list, log or report."""
        import os
        import secrets
        import subprocess
        import sys
        import tempfile

        self.control_token = secrets.token_urlsafe(32)
        # -P: the working directory is not put on sys.path (a folder there named mqconform,
        # a checkout of it say, must not stand in for the installed package)
        self.command = [sys.executable, "-P", "-m", "mqconform.cli", "serve", "--host",
                        "127.0.0.1", "--port", "0", "--control-port", "0",
                        "--control-token-env", self.TOKEN_ENV, *args]
        self.start_timeout = start_timeout
        self._pipe = pipe_stderr
        self._env = {**os.environ, **(env or {}), self.TOKEN_ENV: self.control_token}
        self._log = None if pipe_stderr else tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(
            self.command, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if pipe_stderr else self._log, stdin=subprocess.DEVNULL,
            text=True, env=self._env)
        self._read_endpoints()

    def _read_endpoints(self) -> None:
        import re

        lines: list[str] = []

        def read() -> None:
            while len(lines) < 2:
                line = self.proc.stdout.readline()
                if not line:
                    return
                if line.startswith(("RemoteRead", "control API")):
                    lines.append(line)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(self.start_timeout)
        endpoint = re.search(r"ncacn_ip_tcp:\S+", lines[0]) if lines else None
        control = re.search(r"http://[\w.]+:\d+", lines[1]) if len(lines) > 1 else None
        if endpoint is None or control is None:
            self.stop()
            why = "no output"
            if self._log is not None:
                self._log.seek(0)
                why = (self._log.read().strip().splitlines() or [why])[-1][:200]
            raise TargetError(f"the embedded reference server did not start: {why}")
        self.endpoint, self.control_url = endpoint.group(0), control.group(0)

    @property
    def address(self) -> tuple[str, int]:
        """(host, port) of RemoteRead and qmmgmt."""
        host, port = self.endpoint.split(":", 1)[1].rstrip("]").split("[")
        return host, int(port)

    @property
    def control_address(self) -> tuple[str, int]:
        host, port = self.control_url.split("//", 1)[1].rsplit(":", 1)
        return host, int(port)

    def kill(self) -> None:
        """SIGKILL: the server gets no chance to write or close anything."""
        self.proc.kill()
        self.proc.wait(timeout=10)

    def restart(self) -> None:
        """The same command again (after ``stop`` or ``kill``)."""
        import subprocess

        self.proc = subprocess.Popen(
            self.command, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if self._pipe else self._log, stdin=subprocess.DEVNULL,
            text=True, env=self._env)
        self._read_endpoints()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except Exception:  # noqa: BLE001 - a server that does not stop is killed
                self.proc.kill()
                self.proc.wait(timeout=10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def close(self) -> None:
        self.stop()
        if self._log is not None:
            self._log.close()
