"""The reference queue manager: the model's RemoteRead and qmmgmt servers on DCE/RPC.

``ReferenceQueueManager`` is the RPC runtime's handler (server/rpc.py). For each call it
decodes the stub (wire/ndr.py), runs the model (model/mqrr.py, model/mqmr.py) under one lock,
and encodes the answer. Model time follows real time: before each call, and whenever a model
timer is due, ``env.advance`` runs with the milliseconds since the server started, so receive
timeouts, the Pending Request Cleanup Timer and Time To Be Received fire on time. A call that
waits (a receive with a timeout) is answered later through the runtime's Waiter and blocks
nothing else.

Context handles belong to an association group: the connections a client binds into one group
(a Windows client opens a second connection of the same binding to cancel a receive that waits
on the first) share the handles the group was given; a handle from another group is refused
(MS-MQRR 2.2.4: strict context handles); and when the group's last connection goes away the
rundown of MS-MQRR 3.1.6.2 runs for every handle it still holds, so no message stays locked.
The runtime takes a client's group id as given (there is no authentication yet), so a client
that knows another's group id can use its handles.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from mqconform.model import calls as c
from mqconform.model.mqmr import QMMgmtServer
from mqconform.model.mqrr import RemoteReadServer
from mqconform.model.outcome import Outcome
from mqconform.model.runtime import Environment, Pending
from mqconform.server.rpc import Connection, Reply, Waiter
from mqconform.wire import ndr
from mqconform.wire.dcerpc import RPC_X_BAD_STUB_DATA

log = logging.getLogger(__name__)

NCA_OP_RNG_ERROR = 0x1C010002  # C706 appendix E: the opnum is out of range
#: C706 appendix E nca_s_fault_context_mismatch: a context handle the association does not hold
NCA_S_FAULT_CONTEXT_MISMATCH = 0x1C00001A
#: MS-RPCE 2.2.2.11 / C706: a NULL context handle passed where one is required
RPC_X_SS_IN_NULL_CONTEXT = 0x000006EF

CONTEXT_FIELDS = ("phContext", "pphContext", "phContextFrom")
#: calls whose context handle may be one the association has not been given: none; calls that
#: create a handle take none in
OPENING_CALLS = (c.R_OpenQueue, c.R_OpenQueueForMove)


class ReferenceQueueManager:
    """The handler that serves one model queue manager over RPC."""

    def __init__(self, env: Environment, clock: Callable[[], float] = time.monotonic):
        self.env = env
        self.lock = threading.RLock()
        self.remote_read = RemoteReadServer(env)
        self.qmmgmt = QMMgmtServer(env)
        self._clock = clock
        self._start = clock()
        self._tokens = itertools.count(1)
        self._waiting: dict[int, tuple[Waiter, c.Call, Connection, bool]] = {}
        #: association group id -> {"contexts": set of handles, "connections": set of ids}
        self._groups: dict[int, dict[str, set]] = {}
        self._wake = threading.Condition(self.lock)
        self._stopping = False
        #: a server.store.Store when queues are durable (``mqconform serve --store``)
        self.store: Any = None
        #: server/security.py Security: accounts, administrators, the queues' access lists
        self.security: Any = None
        self._timer = threading.Thread(target=self._timer_loop, name="model-timers",
                                       daemon=True)
        self._timer.start()

    # ------------------------------------------------------------------ runtime interface
    def interfaces(self) -> dict[uuid.UUID, tuple[int, int, frozenset[str]]]:
        return {c.REMOTEREAD_UUID: (1, 0, frozenset({"ndr", "ndr64"})),  # MS-MQRR/2.1/R1
                c.QMMGMT_UUID: (1, 0, frozenset({"ndr"}))}

    def call(self, conn: Connection, interface: uuid.UUID, opnum: int, stub: bytes,
             ndr64: bool) -> Reply:
        name = c.REMOTEREAD if interface == c.REMOTEREAD_UUID else c.QMMGMT
        if (name, opnum) not in c.CALLS:
            return Reply.fault(NCA_OP_RNG_ERROR)
        try:
            call = ndr.decode_request(name, opnum, stub, ndr64)
        except ndr.StubError as exc:
            log.info("%s: bad stub for %s opnum %d: %s", conn, name, opnum, exc)
            return Reply.fault(RPC_X_BAD_STUB_DATA)
        with self.lock:
            refused = self._check_context(conn, call)
            if refused:
                return Reply.fault(refused)
            self._advance()
            denied = self._access_before(conn, call, ndr64)
            if denied is not None:
                return denied
            token = next(self._tokens)
            server = self.remote_read if name == c.REMOTEREAD else self.qmmgmt
            out = server.call(call, token=token) if server is self.remote_read \
                else server.call(call)
            denied = self._access_after(conn, call, out, ndr64)
            if denied is not None:
                return denied
            if isinstance(out, Pending):
                waiter = Waiter(on_abandon=lambda: self._abandon(token))
                self._waiting[token] = (waiter, call, conn, ndr64)
                self._wake.notify()
                reply = Reply.later(waiter)
            else:
                reply = self._reply(conn, call, out, ndr64)
            self._deliver()
            self.persist(call)
        return reply

    def connection_lost(self, conn: Connection) -> None:
        """MS-MQRR 3.1.6.2: when a group's last connection is gone, run the rundown for every
        context handle the group still holds."""
        with self.lock:
            for token, (_, _, owner, _) in list(self._waiting.items()):
                if owner is conn:
                    self._waiting.pop(token, None)
            key = self._group_key(conn)
            group = self._groups.get(key)
            if group is not None:
                group["connections"].discard(conn.id)
                if not group["connections"]:
                    for context in list(group["contexts"]):
                        self.remote_read.rundown(context)  # MS-MQRR/3.1.6.2/R1
                    del self._groups[key]
            self._deliver()
            self.persist()

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
        self.remote_read.call(c.R_CloseQueue(pphContext=handle))
        log.info("%s: %s of %s refused: %s may not %s", conn, type(call).__name__,
                 desc.queue_reference.pathname, user or "an anonymous caller", right)
        return self._denied(call, ndr64)

    @staticmethod
    def _denied(call: c.Call, ndr64: bool) -> Reply:
        from mqconform.model.status import MQ_ERROR_ACCESS_DENIED

        if type(call) in c.VOID_METHODS:  # an RPC exception carrying the HRESULT
            return Reply.fault(MQ_ERROR_ACCESS_DENIED)
        result = c.RESULTS[type(call)](status=MQ_ERROR_ACCESS_DENIED)
        return Reply.stub(ndr.encode_response(call, result, ndr64))

    def persist(self, call: c.Call | None = None) -> None:
        """Write what the last call changed to the store, if queues are durable, before its
        answer goes out (server/store.py). Under the lock."""
        if self.store is None:
            return
        with self.lock:
            rewrite = None
            if isinstance(call, c.R_SetUserAcknowledgementClass) and call.phContext:
                desc = self.remote_read.descriptor(call.phContext)
                if desc is not None:  # the call changed an attribute of one message
                    rewrite = (desc.queue_reference.pathname, call.LookupId)
            self.store.sync(self.env, rewrite)

    # ------------------------------------------------------------------ helpers
    def now_ms(self) -> int:
        return int((self._clock() - self._start) * 1000)

    def _advance(self) -> None:
        self.env.advance(self.now_ms())

    @staticmethod
    def _group_key(conn: Connection) -> int:
        return conn.assoc_group_id or -conn.id

    def _held(self, conn: Connection) -> set:
        group = self._groups.setdefault(self._group_key(conn),
                                        {"contexts": set(), "connections": set()})
        group["connections"].add(conn.id)
        return group["contexts"]

    def _check_context(self, conn: Connection, call: c.Call) -> int:
        """MS-MQRR 2.2.4.1/2.2.4.2: context handles are strict; the runtime refuses a handle the
        association was not given (and a NULL one where the IDL requires one)."""
        held = self._held(conn)
        if isinstance(call, OPENING_CALLS):
            return 0
        for field_name in CONTEXT_FIELDS:
            if not hasattr(call, field_name):
                continue
            value = getattr(call, field_name)
            if value is None:
                return RPC_X_SS_IN_NULL_CONTEXT
            if bytes(value) not in held:
                return NCA_S_FAULT_CONTEXT_MISMATCH  # MS-MQRR/2.2.4.1/R1 MS-MQRR/2.2.4.2/R1
        return 0

    def _reply(self, conn: Connection, call: c.Call, out: Outcome, ndr64: bool) -> Reply:
        result = out.result
        if result.raised:  # a void method's failure: an RPC exception carrying the HRESULT
            return Reply.fault(result.status or 0x80004005)
        held = self._held(conn)
        if isinstance(call, OPENING_CALLS) and result.pphContext:
            held.add(bytes(result.pphContext))
        elif isinstance(call, c.R_CloseQueue) and result.status == 0 and call.pphContext:
            held.discard(bytes(call.pphContext))
        return Reply.stub(ndr.encode_response(call, result, ndr64))

    def _deliver(self) -> None:
        """Answer the waiting calls the model has completed."""
        for done in self.env.take_completions():
            entry = self._waiting.pop(done.token, None)
            if entry is None:
                continue  # the caller is gone (rundown or orphaned)
            waiter, call, conn, ndr64 = entry
            try:
                reply = self._reply(conn, call, done.result, ndr64)
            except Exception:  # never leave a client waiting on an encoding failure
                log.exception("encoding the completion of %s failed", call)
                reply = Reply.fault(RPC_X_BAD_STUB_DATA)
            waiter.complete(reply)

    def _abandon(self, token: int) -> None:
        """The client dropped a waiting call (orphaned PDU): end the model's wait, which is
        what R_CancelReceive does (MS-MQRR 3.1.4.8)."""
        with self.lock:
            entry = self._waiting.pop(token, None)
            if entry is None:
                return
            _, call, _, _ = entry
            context = getattr(call, "phContext", None)
            request = getattr(call, "dwRequestId", None)
            if context is not None and request is not None:
                self.remote_read.call(c.R_CancelReceive(phContext=context,
                                                        dwRequestId=request))
            self._deliver()
            self.persist()

    def _timer_loop(self) -> None:
        with self.lock:
            while not self._stopping:
                self._advance()
                self._deliver()
                try:
                    self.persist()
                except Exception:  # the next call's sync writes it, or fails that call
                    log.exception("writing the store after a timer failed")
                deadline = self.env.next_deadline()
                wait = 1.0 if deadline is None else max(0.0, (deadline - self.now_ms()) / 1000)
                self._wake.wait(timeout=min(wait, 1.0) + 0.001)


def _base_path(pathname: str) -> str:
    """A subqueue's access list is its queue's (MS-MQDMPR 3.1.1.2: a subqueue is a part of its
    queue)."""
    return pathname.split(";", 1)[0]


def serve(env: Environment, host: str = "127.0.0.1", port: int = 0, epm_port: int | None = None,
          security: Any = None, **rpc_options: Any):
    """Start the reference queue manager; returns (handler, rpc_server, endpoint_mapper).
    ``security``: server/security.py (who may call and do what); None: anyone, anything."""
    from mqconform.server.epm import EndpointMapper
    from mqconform.server.rpc import RpcServer

    handler = ReferenceQueueManager(env)
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
        epm = EndpointMapper(host=host, port=epm_port)
        epm.register_server(rpc)
        epm.start()
    return handler, rpc, epm
