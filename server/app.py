"""The reference queue manager: the model's RemoteRead and qmmgmt servers on DCE/RPC.

``ReferenceQueueManager`` is the RPC runtime's handler (server/rpc.py): threads, the clock,
the wire and security around the model's queue-manager host (model/host.py). For each call it
decodes the stub (wire/ndr.py), has the host run it under one lock (in the caller's
association group: the host checks the context handles and routes the call to RemoteRead or
qmmgmt), and encodes the answer. Model time follows real time: before each call, and whenever
a model timer is due, the host advances to the milliseconds since the server started, so
receive timeouts, the Pending Request Cleanup Timer and Time To Be Received fire on time. A
call that waits (a receive with a timeout) is answered later through the runtime's Waiter and
blocks nothing else.

Context handles belong to an association group (model/host.py): the connections a client binds
into one group (a Windows client opens a second connection of the same binding to cancel a
receive that waits on the first) share the handles the group was given; a handle from another
group is refused (MS-MQRR 2.2.4: strict context handles); and when the group's last connection
goes away the rundown of MS-MQRR 3.1.6.2 runs for every handle it still holds, so no message
stays locked.

One client cannot stall or starve the others. A group holds at most ``handle_limit`` context
handles and cursors together (the limit of model/host.py, registered in spec/choices.yaml as
host-handle-limit: past it an open or a cursor fails with MQ_ERROR_INSUFFICIENT_RESOURCES). A
call's work does not grow with the handles other clients hold (model/refs.py). And a rundown,
whose work grows with what the departed group held, runs in parts of about ``RUNDOWN_SLICE``
seconds under the lock, the lock released between them, so another client's call waits at most
one part; the group's handles belong to no group from the first part on, so no call can use
them while the rundown goes on.
The runtime owns the groups (server/rpc.py AssociationGroups: server-issued, unguessable ids;
a join only from the creating address and by the group's principal), and the queue manager's
identifiers come from ``UnguessableIds``: context handles are random 128-bit GUIDs, cursor
handles and move contexts a keyed permutation no client can run forward.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import os
import queue
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from mqconform.model import calls as c
from mqconform.model.host import (
    NCA_S_FAULT_CONTEXT_MISMATCH,
    OPENING_CALLS,
    RPC_X_SS_IN_NULL_CONTEXT,
    QueueManagerHost,
    Refused,
)
from mqconform.model.outcome import Outcome
from mqconform.model.refs import taken
from mqconform.model.runtime import Environment, Pending
from mqconform.model.status import MQ_ERROR_ACCESS_DENIED, MQ_ERROR_INSUFFICIENT_RESOURCES
from mqconform.server.epm import EndpointMapper
from mqconform.server.rpc import LIMITS, Connection, Reply, RpcServer, Waiter
from mqconform.server.store import StoreWriteError
from mqconform.wire import ndr
from mqconform.wire.dcerpc import RPC_X_BAD_STUB_DATA

log = logging.getLogger(__name__)

NCA_OP_RNG_ERROR = 0x1C010002  # C706 appendix E: the opnum is out of range
#: the context handles and cursors one association group may hold by default (model/host.py,
#: spec/choices.yaml host-handle-limit; ``mqconform serve --handle-limit``)
DEFAULT_HANDLE_LIMIT = 4096
#: how long one part of a rundown holds the lock, in seconds (about)
RUNDOWN_SLICE = 0.002
#: the pause between two parts of a rundown, in seconds
RUNDOWN_PAUSE = 0.0005
#: the units of work (a handle or a cursor) between two looks at the clock within a part
RUNDOWN_STEP = 16
#: the faults of a refused context handle (model/host.py), named here for the server's users
__all__ = ["NCA_S_FAULT_CONTEXT_MISMATCH", "RPC_X_SS_IN_NULL_CONTEXT", "ReferenceQueueManager",
           "UnguessableIds", "serve"]


class _OneAtATime:
    """Runs the functions given to ``run`` on one thread of its own, in the order given; the
    caller waits for its function to end (and gets its exception, if it raises)."""

    def __init__(self, name: str):
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def run(self, work: Callable[[], None]) -> None:
        if threading.current_thread() is self._thread:  # from the work itself: at once
            work()
            return
        done = threading.Event()
        failed: list[BaseException] = []
        self._queue.put((work, done, failed))
        done.wait()
        if failed:
            raise failed[0]

    def _loop(self) -> None:
        while True:
            work, done, failed = self._queue.get()
            try:
                work()
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                failed.append(exc)
            finally:
                done.set()


class ReferenceQueueManager:
    """The handler that serves one model queue manager over RPC."""

    def __init__(self, env: Environment, clock: Callable[[], float] = time.monotonic,
                 handle_limit: int | None = DEFAULT_HANDLE_LIMIT):
        """``handle_limit``: the most context handles and cursors one association group may
        hold (None: no limit)."""
        if handle_limit is not None and handle_limit < 1:
            raise ValueError(f"handle_limit {handle_limit}: at least 1, or None for no limit")
        self.env = env
        self.lock = threading.RLock()
        self.host = QueueManagerHost(env, handle_limit=handle_limit)
        #: parts of rundowns run (a count others can watch: tests, benches)
        self.rundown_parts = 0
        #: the rundowns in progress (model/host.py Rundown)
        self.rundowns: list[Any] = []
        #: calls waiting for the lock: a rundown lets them in between its parts
        self._contenders = 0
        self._contenders_lock = threading.Lock()
        self._clock = clock
        self._start = clock()
        #: the host's token of each waiting call -> how to answer it
        self._waiting: dict[int, tuple[Waiter, c.Call, Connection, bool]] = {}
        #: the tokens of each connection's waiting calls (connection id -> tokens)
        self._waits_of: dict[int, set[int]] = {}
        self._wake = threading.Condition(self.lock)
        self._stopping = False
        #: a server.store.Store when queues are durable (``mqconform serve --store``)
        self.store: Any = None
        #: server/security.py Security: accounts, administrators, the queues' access lists
        self.security: Any = None
        self._timer = threading.Thread(target=self._timer_loop, name="model-timers",
                                       daemon=True)
        self._timer.start()
        #: the work a departing connection leaves (its waits abandoned, its group's rundown)
        #: runs here, one connection after another, while that connection's own thread waits
        self._departures = _OneAtATime("departures")

    # the host's servers (server/faults.py wraps them in place)
    @property
    def remote_read(self) -> Any:
        return self.host.remote_read

    @remote_read.setter
    def remote_read(self, server: Any) -> None:
        self.host.remote_read = server

    @property
    def qmmgmt(self) -> Any:
        return self.host.qmmgmt

    @qmmgmt.setter
    def qmmgmt(self, server: Any) -> None:
        self.host.qmmgmt = server

    # ------------------------------------------------------------------ runtime interface
    def interfaces(self) -> dict[uuid.UUID, tuple[int, int, frozenset[str]]]:
        return {c.REMOTEREAD_UUID: (1, 0, frozenset({"ndr", "ndr64"})),  # MS-MQRR/2.1/R1
                c.QMMGMT_UUID: (1, 0, frozenset({"ndr"}))}

    def call(self, conn: Connection, interface: uuid.UUID, opnum: int, stub: bytes,
             ndr64: bool, padding: int = 0) -> Reply:
        """``padding``: how many zero octets after the stub's last parameter are stub padding
        before a verification trailer the runtime took off (MS-RPCE 2.2.2.13)."""
        name = c.REMOTEREAD if interface == c.REMOTEREAD_UUID else c.QMMGMT
        if (name, opnum) not in c.CALLS:
            return Reply.fault(NCA_OP_RNG_ERROR)
        try:
            call = ndr.decode_request(name, opnum, stub, ndr64, padding=padding)
        except ndr.StubError as exc:
            log.info("%s: bad stub for %s opnum %d: %s", conn, name, opnum, exc)
            return Reply.fault(RPC_X_BAD_STUB_DATA)
        with self._contenders_lock:
            self._contenders += 1
        with self.lock:
            with self._contenders_lock:
                self._contenders -= 1
            group = self._group_of(conn)
            self.host.join(group, conn.id)
            conn.state["joined"] = True  # connection_lost has a group to leave
            admitted = self.host.admit(group, call)  # strict context handles first
            if isinstance(admitted, Refused):
                return Reply.fault(admitted.fault)
            self._advance()
            self._persist()  # what the timers did is not this call's to answer for
            denied = self._access_before(conn, call, ndr64)
            if denied is not None:
                return denied
            out = self.host.run(group, admitted)
            denied = self._access_after(conn, call, out, ndr64)
            if denied is not None:
                return denied
            if isinstance(out, Pending):
                token = out.token
                waiter = Waiter(on_abandon=lambda: self._abandon(token))
                self._waiting[token] = (waiter, call, conn, ndr64)
                self._waits_of.setdefault(conn.id, set()).add(token)
                self._wake.notify()
                reply = Reply.later(waiter)
            else:
                reply = self._reply(conn, call, out, ndr64)
            if not self._persist(call) and not isinstance(out, Pending):
                reply = self._unwritten(call, ndr64)
            self._deliver()
        return reply

    def connection_lost(self, conn: Connection) -> None:
        """MS-MQRR 3.1.6.2: when a group's last connection is gone, run the rundown for every
        context handle the group still holds: in parts of about RUNDOWN_SLICE seconds, the
        lock released between them (module doc). Returns once the rundown is complete. The
        work runs on the departures thread, one departing connection at a time: two hundred
        connections dropped at once would otherwise be two hundred threads taking turns at the
        lock and the interpreter, and every other client's call would wait behind them. A
        connection that never made a call (never bound, or bound and silent) left nothing to
        run down: nothing runs."""
        if not conn.state.get("joined"):
            return
        self._departures.run(lambda: self._connection_lost(conn))

    def _connection_lost(self, conn: Connection) -> None:
        if self._contenders:  # a thousand departures in a row must not keep calls waiting
            self._let_others_in()
        with self.lock:
            tokens = sorted(self._waits_of.pop(conn.id, ()), reverse=True)
        while tokens:  # its waits end (the client is gone), in parts as the rundown
            with self.lock:
                deadline = self._clock() + RUNDOWN_SLICE
                while tokens and self._clock() < deadline:
                    token = tokens.pop()
                    if taken(self._waiting, token) is not None:
                        self.host.abandon(token)
                self._persist()
                self._deliver()
            self._let_others_in()
        with self.lock:
            rundown = self.host.depart(self._group_of(conn), conn.id)  # MS-MQRR/3.1.6.2/R1
            if rundown is None:
                self._persist()
                self._deliver()
                return
            self.rundowns.append(rundown)
        try:
            finished = False
            while not finished:
                with self.lock:
                    deadline = self._clock() + RUNDOWN_SLICE
                    while not finished and self._clock() < deadline:
                        finished = self.host.run_down(rundown, RUNDOWN_STEP)
                    self.rundown_parts += 1
                    self._persist()
                    self._deliver()
                self._let_others_in()
        finally:
            with self.lock:
                self.rundowns.remove(rundown)

    def _let_others_in(self) -> None:
        """Between two parts of a departure's work: a pause, in which the other threads get
        the interpreter (a part would otherwise keep it for the switch interval, 5 ms) and,
        as Python's lock is not fair, the calls waiting for the lock go first (a bounded
        wait)."""
        time.sleep(RUNDOWN_PAUSE)
        for _ in range(50):
            if not self._contenders:
                break
            time.sleep(0.0001)

    def holds_handles(self, conn: Connection) -> bool:
        """Would closing ``conn`` run the rundown of MS-MQRR 3.1.6.2: is it the last
        connection of a group that holds context handles? (The runtime evicts such a
        connection last and never times it out: server/rpc.py, Limits.)"""
        with self.lock:
            group = self.host.groups.get(self._group_of(conn))
            return group is not None and bool(group.contexts) and group.members <= {conn.id}

    def stop(self) -> None:
        with self.lock:
            self._stopping = True
            self._wake.notify()
        self._timer.join(timeout=5)

    # ------------------------------------------------------------------ access checks
    def _access_before(self, conn: Connection, call: c.Call, ndr64: bool) -> Reply | None:
        """MS-MQMR 3: the caller of qmmgmt MUST be an administrator; MS-MQRR 2.1: the caller's
        identity for method-specific checks (R_PurgeQueue: the queue's purge right). None
        when the call may go on. In unauthenticated mode an anonymous caller may do all."""
        security = self.security
        if security is None:
            return None
        user = getattr(conn, "identity", None)
        if call.interface == c.QMMGMT and (security.required or user is not None) \
                and not security.administrator(user):
            log.info("%s: %s refused: %s is not an administrator", conn, type(call).__name__,
                     user or "an anonymous caller")
            return self._denied(call, ndr64)
        if isinstance(call, c.R_PurgeQueue) and call.phContext:
            desc = self.remote_read.descriptor(call.phContext)
            if desc is not None and not security.allows(
                    _base_path(desc.queue_reference.pathname), "purge", user):
                return self._denied(call, ndr64)
        return None

    def _access_after(self, conn: Connection, call: c.Call, out: Any,
                      ndr64: bool) -> Reply | None:
        """R_OpenQueue / R_OpenQueueForMove: the opened queue's access list for the access
        asked for; a refused open is closed again and answered MQ_ERROR_ACCESS_DENIED."""
        security = self.security
        if security is None or not isinstance(call, OPENING_CALLS) or isinstance(out, Pending) \
                or out.result.raised or not out.result.pphContext:
            return None
        handle = bytes(out.result.pphContext)
        desc = self.remote_read.descriptor(handle)
        if desc is None:
            return None
        user = getattr(conn, "identity", None)
        right = "peek" if call.dwAccess == c.PEEK_ACCESS else "receive"
        if security.allows(_base_path(desc.queue_reference.pathname), right, user):
            return None
        self.host.call(self._group_of(conn), c.R_CloseQueue(pphContext=handle))
        log.info("%s: %s of %s refused: %s may not %s", conn, type(call).__name__,
                 desc.queue_reference.pathname, user or "an anonymous caller", right)
        return self._denied(call, ndr64)

    @staticmethod
    def _denied(call: c.Call, ndr64: bool) -> Reply:
        if type(call) in c.VOID_METHODS:  # an RPC exception carrying the HRESULT
            return Reply.fault(MQ_ERROR_ACCESS_DENIED)
        result = c.RESULTS[type(call)](status=MQ_ERROR_ACCESS_DENIED)
        return Reply.stub(ndr.encode_response(call, result, ndr64))

    def persist(self, call: c.Call | None = None) -> None:
        """Write what the last call or request changed to the store, if queues are durable,
        before its answer goes out (server/store.py). Under the lock. When the store cannot
        write it (a full or failing disk), the change is taken back (``_take_back``) and
        server.store.StoreWriteError raised: the caller answers failure."""
        if self.store is None:
            return
        with self.lock:
            rewrite = None
            if isinstance(call, c.R_SetUserAcknowledgementClass) and call.phContext:
                desc = self.remote_read.descriptor(call.phContext)
                if desc is not None:  # the call may change an attribute of one message
                    rewrite = (desc.queue_reference.pathname, call.LookupId)
            try:
                self.store.sync(self.env, rewrite)
            except StoreWriteError as exc:
                log.warning("%s", exc)
                self._take_back()
                raise

    def _persist(self, call: c.Call | None = None) -> bool:
        """``persist``: False when the change could not be written and was taken back."""
        try:
            self.persist(call)
        except StoreWriteError:
            return False
        return True

    def _take_back(self) -> None:
        """After a failed write: the queues as the store holds them (server/store.py
        ``revert``). A waiting receive or peek the change had served, and whose answer is
        not sent yet, was given a message the store does not hold: it runs again under the
        same token (it waits again, or is served by what the queue holds); the other
        completed waits are answered as usual."""
        done = self.host.completions()
        taken_out = self.store.revert(self.env)
        answer = []
        for token, outcome in done:
            entry = self._waiting.get(token)
            result = outcome.result
            if (entry is not None and taken_out and not result.raised and result.status == 0
                    and getattr(result, "pSequenceId", None) in taken_out):
                _, call, conn, _ = entry
                outcome = self.host.run(self._group_of(conn), call, token)
                if isinstance(outcome, Pending):
                    continue  # waits again; its waiter stays
            answer.append((token, outcome))
        self._deliver(answer)

    def _unwritten(self, call: c.Call, ndr64: bool) -> Reply:
        """The answer of a call whose change the store could not write (a full or failing
        disk): MQ_ERROR_INSUFFICIENT_RESOURCES (MS-MQMQ 2.4: not enough resources to perform
        the operation; MSMQ's own answer when it cannot store a message for lack of disk
        space), as a fault for a method that returns nothing."""
        if type(call) in c.VOID_METHODS:
            return Reply.fault(MQ_ERROR_INSUFFICIENT_RESOURCES)
        result = c.RESULTS[type(call)](status=MQ_ERROR_INSUFFICIENT_RESOURCES)
        return Reply.stub(ndr.encode_response(call, result, ndr64))

    # ------------------------------------------------------------------ helpers
    def now_ms(self) -> int:
        return int((self._clock() - self._start) * 1000)

    def _advance(self) -> None:
        self.host.advance(self.now_ms())

    @staticmethod
    def _group_of(conn: Connection) -> int:
        """The association group the runtime put the connection in (server/rpc.py
        AssociationGroups), or one of its own before any bind."""
        return conn.assoc_group_id or -conn.id

    @staticmethod
    def _reply(conn: Connection, call: c.Call, out: Outcome, ndr64: bool) -> Reply:
        result = out.result
        if result.raised:  # a void method's failure: an RPC exception carrying the HRESULT
            return Reply.fault(result.status or 0x80004005)
        return Reply.stub(ndr.encode_response(call, result, ndr64))

    def _deliver(self, done: list[tuple[Any, Outcome]] | None = None) -> None:
        """Answer the waiting calls the model has completed (``done``: those already taken
        from the host)."""
        for token, outcome in (done if done is not None else []) + self.host.completions():
            entry = self._take_wait(token)
            if entry is None:
                continue  # the caller is gone (rundown or orphaned)
            waiter, call, conn, ndr64 = entry
            try:
                reply = self._reply(conn, call, outcome, ndr64)
            except Exception:  # never leave a client waiting on an encoding failure
                log.exception("encoding the completion of %s failed", call)
                reply = Reply.fault(RPC_X_BAD_STUB_DATA)
            waiter.complete(reply)

    def _abandon(self, token: int) -> None:
        """The client dropped a waiting call (orphaned PDU, or its connection is gone): end the
        model's wait, which is what R_CancelReceive does (MS-MQRR 3.1.4.8); on the departures
        thread, as connection_lost. The waits of a connection that has closed are left to its
        connection_lost, which ends them together."""
        entry = self._waiting.get(token)
        if entry is None or entry[2].closed:
            return
        self._departures.run(lambda: self._abandon_now(token))

    def _abandon_now(self, token: int) -> None:
        with self.lock:
            if self._take_wait(token) is None:
                return
            self.host.abandon(token)
            self._persist()
            self._deliver()

    def _take_wait(self, token: int) -> tuple[Waiter, c.Call, Connection, bool] | None:
        """A waiting call's entry, taken out of ``_waiting`` and its connection's index."""
        entry = taken(self._waiting, token)
        if entry is not None:
            self._waits_of.get(entry[2].id, set()).discard(token)
        return entry

    def _timer_loop(self) -> None:
        with self.lock:
            while not self._stopping:
                self._advance()
                try:
                    self._persist()
                except Exception:  # a bug in writing must not stop the timers
                    log.exception("writing the store after a timer failed")
                self._deliver()
                deadline = self.host.next_deadline()
                wait = 1.0 if deadline is None else max(0.0, (deadline - self.now_ms()) / 1000)
                self._wake.wait(timeout=min(wait, 1.0) + 0.001)


class UnguessableIds:
    """``env.ids`` of a served queue manager (model/runtime.py SequentialIds' interface).
    ``guid()``: a random version-4 GUID (122 random bits: the context handles of
    R_OpenQueue/R_OpenQueueForMove, MS-MQRR 2.2.4); ``handle()``: the next value of a counter
    through a 4-round Feistel permutation of 32 bits keyed at random per process (cursor
    handles, OpenQueueDescriptor.Handle and ContextValue, the move context): never repeated
    within 2**32 values, never 0, and not predictable from the ones a client has seen."""

    def __init__(self, key: bytes | None = None):
        self._key = key if key is not None else os.urandom(16)
        self._counter = itertools.count(1)

    def _round(self, n: int, half: int) -> int:
        digest = hashlib.blake2b(bytes((n,)) + half.to_bytes(2, "little"), key=self._key,
                                 digest_size=2).digest()
        return int.from_bytes(digest, "little")

    def _permute(self, value: int) -> int:
        left, right = value >> 16, value & 0xFFFF
        for n in range(4):
            left, right = right, left ^ self._round(n, right)
        return (left << 16) | right

    def handle(self) -> int:
        while True:
            value = self._permute(next(self._counter) & 0xFFFFFFFF)
            if value:
                return value

    def guid(self) -> uuid.UUID:
        return uuid.UUID(bytes=os.urandom(16), version=4)


def _base_path(pathname: str) -> str:
    """A subqueue's access list is its queue's (MS-MQDMPR 3.1.1.2: a subqueue is a part of its
    queue)."""
    return pathname.split(";", 1)[0]


def serve(env: Environment, host: str = "127.0.0.1", port: int = 0, epm_port: int | None = None,
          security: Any = None, handle_limit: int | None = DEFAULT_HANDLE_LIMIT,
          **rpc_options: Any):
    """Start the reference queue manager; returns (handler, rpc_server, endpoint_mapper).
    ``security``: server/security.py (who may call and do what); None: anyone, anything.
    ``handle_limit``: the most context handles and cursors one association group may hold."""
    if not isinstance(env.ids, UnguessableIds):
        env.ids = UnguessableIds()  # clients must not guess another's handles
    handler = ReferenceQueueManager(env, handle_limit=handle_limit)
    handler.security = security
    rpc = RpcServer(handler, host=host, port=port, security=security, **rpc_options).start()
    # the addresses that name this computer in a DIRECT=TCP format name (MS-MQMQ 2.1.2; MS-MQRR
    # 2.2.3 supports TCP): the one it listens on, and loopback (model/queue_management.py
    # _is_local_machine reads env.local_addresses)
    env.local_addresses = tuple(dict.fromkeys(
        a for a in (host, "127.0.0.1") if a not in ("", "0.0.0.0", "::")))
    handler.remote_read.port = rpc.address[1]  # R_GetServerPort answers the real port
    epm = None
    if epm_port is not None:
        # the same limits and timeouts as the queue manager's runtime (server/rpc.py)
        limits = {k: v for k, v in rpc_options.items() if k in LIMITS}
        epm = EndpointMapper(host=host, port=epm_port, **limits)
        epm.register_server(rpc)
        epm.start()
    return handler, rpc, epm
