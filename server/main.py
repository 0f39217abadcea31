"""``mqconform serve``: run the reference queue manager until interrupted."""

from __future__ import annotations

import gc
import ipaddress
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from mqconform.model.runtime import Environment
from mqconform.server.provision import ProvisionError, new_queue_manager, provision_file

DEFAULT_PORT = 2103  # MS-MQRR 3.1.4.1: the default RemoteRead port
#: server/app.py DEFAULT_HANDLE_LIMIT (not imported here: app loads the model and the wire)
DEFAULT_HANDLE_LIMIT = 4096
#: how long a thread of ``mqconform serve`` holds the interpreter before another may take it
#: (seconds; sys.setswitchinterval)
SWITCH_INTERVAL = 0.001
#: the shortest control token accepted (a token is as strong as a password an attacker may try
#: at the speed of HTTP requests)
MIN_TOKEN = 16


class QuietCollector:
    """Python's cyclic garbage collector in a long-running server, without the pauses.

    A full collection (generation 2) examines every object the collector tracks, with the
    interpreter held: with 100,000 open handles (five tracked objects each) that is a pause of
    more than 100 ms for every client, several times while they pile up. The server's objects
    are freed by their reference counts (100,000 opens and their rundown, counted with
    gc.callbacks, left no cyclic garbage), so what survived a collection of the older
    generations (1 or 2) is moved out of the collector's sight (``gc.freeze``), the objects of
    the start-up first: each collection then examines only what came since the last one.
    Freezing only after full collections was not enough: 10,000 receives coming in made
    90,000 new objects between two full collections, each a pause of 45 ms. Cyclic garbage
    among the frozen objects is collected when ``tick`` finds ``every`` seconds have passed
    (``gc.unfreeze`` and a full collection, then the survivors frozen again) and at
    ``close``."""

    def __init__(self, every: float = 600.0):
        self.every = every
        self._last = time.monotonic()

    def install(self) -> QuietCollector:
        gc.collect()
        gc.freeze()
        gc.callbacks.append(self._after)
        return self

    def _after(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "stop" and info.get("generation", 0) >= 1:  # (class doc)
            gc.freeze()

    def tick(self) -> None:
        if time.monotonic() - self._last >= self.every:
            self.thaw()

    def thaw(self) -> None:
        self._last = time.monotonic()
        gc.unfreeze()
        gc.collect()  # (its end freezes the survivors again: _after)

    def close(self) -> None:
        if self._after in gc.callbacks:
            gc.callbacks.remove(self._after)
        gc.unfreeze()


class ServeError(Exception):
    """The server cannot start (a port in use, a bad provisioning file); one line, exit 2."""


@dataclass
class Running:
    handler: Any
    rpc: Any
    epm: Any
    control: Any
    store: Any = None
    control_token: bool = False  # the control API asks for a token

    def endpoints(self) -> list[str]:
        host, port = self.rpc.address
        lines = [f"RemoteRead and qmmgmt on ncacn_ip_tcp:{host}[{port}]"]
        if self.epm is not None:
            lines.append(f"endpoint mapper on ncacn_ip_tcp:{host}[{self.epm.address[1]}]")
        if self.control is not None:
            chost, cport = self.control.address
            chost = f"[{chost}]" if ":" in chost else chost
            guard = "token required" if self.control_token else "UNAUTHENTICATED"
            lines.append(f"control API on http://{chost}:{cport}/ (not part of MSMQ; {guard})")
        return lines

    def stop(self) -> None:
        for part in (self.control, self.epm, self.rpc):
            if part is not None:
                part.stop()
        self.handler.stop()
        if self.store is not None:
            self.store.close()


def start(host: str = "127.0.0.1", port: int = DEFAULT_PORT, epm_port: int | None = None,
          queues: str | None = None, control_port: int | None = None,
          faults: Any = None, store: str | None = None,
          store_sync: str = "FULL", control_host: str = "127.0.0.1",
          choices: str = "reference", handle_limit: int | None = DEFAULT_HANDLE_LIMIT,
          limits: dict[str, Any] | None = None, control_token: str | None = None,
          control_unauthenticated: bool = False) -> Running:
    """``faults``: a server.faults.Faults to install (testing a validator only); ``store``: a
    directory that keeps recoverable messages across restarts (server/store.py); ``choices``:
    a name of model/choices.py PROFILES (what the server does where the documents leave it
    free); ``handle_limit``: the most context handles and cursors one client (association
    group) may hold, None for no limit (server/app.py); ``limits``: RpcServer keyword
    arguments of server/rpc.py LIMITS (connections, timeouts, reassembly budget), for the
    queue manager and the endpoint mapper alike. The control API (``control_port``) needs
    ``control_token`` (check_control says when ``control_unauthenticated`` may stand for it)."""
    from mqconform.model.choices import PROFILES
    from mqconform.server.app import serve
    from mqconform.server.control import ControlServer
    from mqconform.server.security import Security

    if choices not in PROFILES:
        raise ServeError(f"--choices {choices}: one of {', '.join(sorted(PROFILES))}")
    if handle_limit is not None and handle_limit < 1:
        raise ServeError(f"--handle-limit {handle_limit}: at least 1 (0 for no limit is not "
                         "accepted; give a number of handles)")
    try:
        if queues:
            provisioned = provision_file(queues, choices=PROFILES[choices])
            env, security = provisioned.env, provisioned.security
        else:
            env = Environment(new_queue_manager(None))
            env.choices = PROFILES[choices]
            security = Security(domain=env.local_queue_manager.computer_name)
    except ProvisionError as exc:
        raise ServeError(str(exc)) from None
    if control_port is not None:
        check_control(control_host, control_token, control_unauthenticated,
                      security.configured)
    durable = None
    if store is not None:
        from mqconform.server.provision import create_queue_from_spec
        from mqconform.server.store import Store, StoreError

        try:
            durable = Store(store, store_sync)
            durable.attach(env, lambda e, spec: create_queue_from_spec(e, spec, security))
        except (StoreError, ProvisionError) as exc:
            if durable is not None:
                durable.close()
            raise ServeError(str(exc)) from None
    try:
        handler, rpc, epm = serve(env, host=host, port=port, epm_port=epm_port,
                                  security=security, handle_limit=handle_limit,
                                  **(limits or {}))
    except ValueError as exc:  # a limit out of range
        if durable is not None:
            durable.close()
        raise ServeError(str(exc)) from None
    except OSError as exc:
        if durable is not None:
            durable.close()
        raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    handler.store = durable
    if faults is not None:
        faults.install(handler)
    control = None
    if control_port is not None:
        try:
            control = ControlServer(handler, host=control_host, port=control_port,
                                    token=control_token).start()
        except OSError as exc:
            rpc.stop()
            handler.stop()
            if durable is not None:
                durable.close()
            raise ServeError(f"cannot listen on {control_host}:{control_port} for the control API: "
                             f"{exc.strerror or exc}") from None
    return Running(handler, rpc, epm, control, durable, control_token is not None)


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def check_control(host: str, token: str | None, unauthenticated: bool,
                  secured: bool) -> None:
    """When the control API may run (README, "The reference queue manager"): with a token of
    MIN_TOKEN characters or more; without one only when asked (``--control-unauthenticated``),
    on a loopback address, for a server whose provisioning file has no ``security`` section
    (the control API would otherwise bypass the access checks it sets). ServeError else; the
    token is never quoted."""
    if token is not None:
        if unauthenticated:
            raise ServeError("--control-unauthenticated and a control token: give one of them")
        if len(token) < MIN_TOKEN:
            raise ServeError(f"the control token has fewer than {MIN_TOKEN} characters "
                             "(value not shown)")
        return
    if not unauthenticated:
        raise ServeError("the control API needs a token: --control-token-env NAME (NAME an "
                         "environment variable holding it), or --control-unauthenticated on "
                         "loopback for a server without a security section")
    if secured:
        raise ServeError("--control-unauthenticated: the provisioning file has a security "
                         "section; give the control API a token (--control-token-env NAME)")
    if not _loopback(host):
        raise ServeError(f"--control-unauthenticated: the control API would listen on {host}, "
                         "not a loopback address; give it a token (--control-token-env NAME)")


def control_token_from(name: str | None) -> str | None:
    """The token named by ``--control-token-env NAME``; ServeError (the value never shown)."""
    if name is None:
        return None
    value = os.environ.get(name) if isinstance(name, str) else None
    if not value:
        raise ServeError("--control-token-env names no set environment variable "
                         "(value not shown)")
    return value


def _limits(args: Any) -> dict[str, Any]:
    """The serve flags of server/rpc.py's limits that were given (argparse defaults included)."""
    out: dict[str, Any] = {}
    for name in ("max_connections", "idle_timeout", "unbound_timeout", "pdu_timeout",
                 "min_rate"):
        if getattr(args, name, None) is not None:
            out[name] = getattr(args, name)
    if getattr(args, "reassembly_budget", None) is not None:
        out["reassembly_budget"] = args.reassembly_budget << 20  # MiB
    return out


def run(args: Any) -> int:
    faults = None
    if getattr(args, "fault", None):
        from mqconform.server.faults import FaultError, Faults

        try:
            faults = Faults(frozenset(args.fault), args.fault_rate, args.fault_seed)
        except FaultError as exc:
            raise ServeError(str(exc)) from None
    token_env = getattr(args, "control_token_env", None)
    unauthenticated = getattr(args, "control_unauthenticated", False)
    if args.control_port is None and (token_env is not None or unauthenticated):
        raise ServeError("--control-token-env and --control-unauthenticated need --control-port")
    # The server's process is its own: its threads (the I/O thread, the workers, the
    # departures) take the interpreter in turns of SWITCH_INTERVAL rather than Python's 5 ms,
    # so a short call waits less behind a long one (bench/floods.py, 25 clients pipelining
    # opens: a canary's peek p99 16.9 -> 11.4 ms)
    sys.setswitchinterval(SWITCH_INTERVAL)
    running = start(host=args.host, port=args.port, epm_port=args.epm_port,
                    queues=args.queues, control_port=args.control_port, faults=faults,
                    store=getattr(args, "store", None),
                    store_sync=getattr(args, "store_sync", "FULL"),
                    control_host=getattr(args, "control_host", "127.0.0.1"),
                    choices=getattr(args, "choices", "reference"),
                    handle_limit=getattr(args, "handle_limit", DEFAULT_HANDLE_LIMIT),
                    limits=_limits(args),
                    control_token=control_token_from(token_env),
                    control_unauthenticated=unauthenticated)
    if running.handler.env.choices.name != "reference":
        print(f"CHOICES: {running.handler.env.choices.name} (where the documents leave the "
              "server free, another allowed value; spec/choices.yaml)", flush=True)
    if faults is not None:
        print(f"SEEDED FAULTS (not conformant on purpose): {', '.join(sorted(faults.names))} "
              f"at rate {faults.rate}", flush=True)
    stopped = threading.Event()

    def _stop(*_: Any) -> None:
        stopped.set()

    # before the endpoints are printed: a client that reads them and is done at once may
    # send SIGTERM straight away, and the stop (the fault log) must still run
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    for line in running.endpoints():
        print(line, flush=True)
    collector = QuietCollector().install()
    try:
        while not stopped.wait(0.5):
            collector.tick()
    finally:
        collector.close()
        running.stop()
        if faults is not None and args.fault_log:
            faults.write(args.fault_log)
    print("stopped", file=sys.stderr)
    return 0
