"""The connection-oriented DCE/RPC runtime of the reference server, on ncacn_ip_tcp.

It frames PDUs, negotiates presentation contexts, reassembles request fragments, hands the
stub of each call to a ``Handler`` and sends back, fragmented, the stub or the fault the handler
answers with. It knows nothing of MSMQ: the handler decodes stubs and runs the model.

Sources (facts, cited where used): [C706] chapter 12 (the connection-oriented protocol and its
PDUs, through wire.dcerpc) and appendix E (status codes); [MS-RPCE] 3.3.1.5.3 (bind time feature
negotiation), 3.3.1.5.6 (presentation context and transfer syntax negotiation), 3.3.3.5.1
(failure semantics: a fault PDU, else close the connection), 3.1.3.5.2 (0x6F7 for an invalid
octet stream), 2.2.2.5 (bind_nak reasons), 2.2.2.8 (fault PDUs carry no stub).

Threads: a fixed few, however many clients. One I/O thread watches the listener and every
socket (epoll on Linux, else a selector): it accepts, reads, frames PDUs by frag_length, sends what
a socket did not take at once, and keeps the time limits; it never runs a handler, so a slow
call holds up no other client's octets. ``workers`` threads (4) run the PDUs: a connection
with PDUs waiting is in one line; a worker takes it, handles its next PDU (negotiation,
authentication, reassembly, the handler's call) and, if more wait, puts it back at the end of
the line, so no client keeps the workers from the others, and one connection's
PDUs are never handled by two workers at once. A connection with 16 PDUs waiting is read no
more until they are down to 4. An answer is sent by the thread that has it, at once if the
socket takes it, else by the I/O thread when the socket can take more. One departures thread
runs what follows a connection's end, one connection at a time: the handler's
``connection_lost`` (the rundown), then the socket's close. A handler that cannot answer at
once returns ``Reply.later(waiter)`` and completes it from any thread with
``waiter.complete(reply)``; the worker goes on with the next PDU meanwhile. ``stop()`` closes
every socket, waits for every connection's ``connection_lost`` and joins every thread.

Bursts: the connections that have bound are watched apart from the others (an epoll of
their own). The I/O thread serves what a poll found ready with the bound connections first,
then the others for a few milliseconds (the rest come again at the next poll).
Newcomers are taken from the kernel into a lobby and set up newest first, their first octets
(a bind) read at once; in a long round the listener is looked at every 2 ms. Inside every
long pass (a round's connections that have not bound, taking newcomers from the kernel,
setting them up) the bound connections that are ready are served every millisecond, and a
PDU handed to the workers is followed by a short sleep that lets a worker take the
interpreter at once. So a flood of connections that never bind holds up a client's call for
a millisecond or two, not for the whole flood. A connection that ends before a whole PDU
came is torn down on the I/O thread at once (no worker ever saw it), its socket closed when
nothing waits to be read.

Limits: no client, nor a few thousand sockets, can starve the others.

- Time. A connection that never bound is closed after ``unbound_timeout`` seconds of silence
  (a client binds as soon as it connects); a bound one after ``idle_timeout`` seconds with no
  octet received, no call in flight, no request under reassembly and no context handle that its
  closing would run down. Windows clients keep one idle connection open for as long as their
  association holds context handles, precisely so that the server does not run them down
  (Windows RPC "idle connection cleanup": the client closes idle pooled connections but leaves
  one while the association has context handles), so such a connection is not timed out: it is
  only evicted, last of all (below). A PDU once begun must be whole within
  min(``pdu_timeout``, 2 s + frag_length / ``min_rate``) seconds, so a drip of a few octets at
  a time holds a slot for seconds, not minutes; between the fragments of a request under
  reassembly no more than ``pdu_timeout`` seconds may pass.
- Connections. At most ``max_connections`` are served. When the table is full a new one does
  not wait: the connection that costs least to drop is closed for it, in this order: one that
  never bound (or is inside a slow PDU before its bind), oldest activity first; a bound one
  stalled inside a PDU or between a request's fragments; a bound one with nothing in flight
  whose closing runs down nothing (no context handle, or another connection of its association
  group still holds them); last, a bound idle one whose closing runs its group's rundown
  (MS-MQRR 3.1.6.2: its handles are closed, as when its client goes away). A connection with a
  call in flight (the handler running it, or a call waiting, such as a receive) is never
  evicted. Only when every connection has a call in flight is the newcomer refused, politely:
  its first PDU, if a bind, is answered with a bind_nak whose reason is local_limit_exceeded
  ("the server could not complete the request due to lack of resources": C706 12.6.3.1;
  MS-RPCE 2.2.2.5), then the connection is closed.
- Memory. The requests under reassembly hold at most ``max_request`` octets per connection and
  ``reassembly_budget`` octets across all connections: a fragment that would pass either is
  refused with a fault (nca_s_fault_remote_no_memory) and its request's octets are freed at
  once, and its later fragments ignored; a connection's octets are freed when it closes or its
  fragments stop coming.

Errors, as C706 12.6 and MS-RPCE 3.3.3.5.1 say: what can be answered with a fault (unknown
presentation context, bad fragment sequence, an oversized request, a handler's failure) is
answered with a fault for that call_id and the connection goes on; a bind that cannot be served
gets a bind_nak; what breaks the framing (bad version, drep or frag_length, a PDU type a client
does not send, a PDU that never completes) closes the connection. Nothing a client sends makes a
thread raise out of its loop or wait forever.
"""

from __future__ import annotations

import collections
import dataclasses
import errno
import gc
import itertools
import logging
import queue
import secrets
import select
import selectors
import socket
import struct
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from mqconform.server.ntlm import (
    AUTHN_WINNT,
    LEVEL_INTEGRITY,
    LEVEL_PRIVACY,
    LEVELS,
    SIGNATURE_SIZE,
    AuthError,
    NtlmAcceptor,
    Throttled,
)
from mqconform.wire import association as a
from mqconform.wire import dcerpc as d
from mqconform.wire.association import Binding, bind_time_feature_offers, negotiate_contexts
from mqconform.wire.dcerpc import RPC_S_ACCESS_DENIED

log = logging.getLogger(__name__)

#: MS-RPCE 2.2.2.14 features this server grants: it keeps the connection after an orphaned
#: PDU (3.3.1.5.10); one security context per connection, so no security context multiplexing.
SERVER_FEATURES = d.KEEP_CONNECTION_ON_ORPHAN
#: a signed PDU whose verifier is missing, is not this connection's, or does not verify
#: (RPC_S_SEC_PKG_ERROR: "a security package-specific error occurred")
RPC_S_SEC_PKG_ERROR = 0x00000721

#: RpcServer's keyword arguments that bound what clients may hold (module doc: Limits)
LIMITS = ("max_connections", "max_calls", "max_request", "reassembly_budget", "idle_timeout",
          "unbound_timeout", "pdu_timeout", "min_rate", "io_timeout")

#: the I/O thread looks at the connections' deadlines at most this often, and at least
#: this often (seconds)
_SWEEP_MIN = 0.05
_SWEEP_MAX = 0.25
#: octets read from a socket at a time
_RECV_SIZE = 65536
#: whole PDUs a connection may have waiting for a worker before its socket is read no more;
#: it is read again once no more than _RESUME_AT wait
_MAX_QUEUED = 16
_RESUME_AT = 4
#: PDUs a worker handles on one connection before the others get their turn: one, so that a
#: call arriving on a quiet connection waits for one PDU of each busy connection, however many
#: each has in flight (25 clients pipelining opens: a canary's peek waited ~25 ms at four)
_BATCH = 1
#: how long the I/O thread takes newcomers from the kernel into its lobby, then how long it
#: sets up those of the lobby, before it looks at the other sockets (seconds; _take_in)
_ACCEPT_FOR = 0.01
_TAKE_IN_FOR = 0.003
#: newcomers the lobby may hold, per connection the table may hold: taken from the kernel
#: (cheap) well ahead of their setting up, so that the newest is soon set up first
_LOBBY_PER_SLOT = 4
#: in a long round of ready sockets, the I/O thread looks for newcomers this often (seconds)
_ACCEPT_EVERY = 0.002
#: how long a round serves the ready connections that have not bound (_IO._round)
_ROUND_FOR = 0.005
#: inside its long loops (a round's connections that have not bound, taking newcomers in,
#: setting them up) the I/O thread serves the bound connections this often (seconds; _IO.hot)
_HOT_EVERY = 0.001
#: how long the I/O thread sleeps to hand the interpreter to a worker (_IO.hand_off)
_HANDOFF = 0.0002
#: how long an eviction order is reused (seconds)
_RANK_FOR = 0.25
#: no newcomer for this long (seconds): a moment to give memory back
_QUIET = 0.25
#: at most this many connections left: the moment to give memory back collects first
#: (_MemoryGiver)
_COLLECT_AMONG = 8
#: sockets of untouched connections whose closing waits for a moment with nothing to read
#: (_IO.close_later): at most this many wait, and this many are closed at a time
_CLOSE_BACKLOG = 1024
_CLOSE_BATCH = 64
#: what a PDU may take beyond its octets at the minimum rate (round trips, a retransmission)
_PDU_GRACE = 2.0

#: the fault statuses a failure inside the handler turns into (MS-RPCE 3.1.3.5.2: an octet
#: stream the stub cannot decode is 0x6F7; anything else is unspecified)
_BAD_STUB_EXCEPTIONS = (ValueError, struct.error, IndexError, UnicodeError)


# --- the handler side --------------------------------------------------------------------------


class Waiter:
    """A call that completes later: the handler returns ``Reply.later(waiter)`` and calls
    ``waiter.complete(reply)`` from any thread when the answer is known.

    ``on_abandon`` runs (once, on the runtime's thread) if the call is dropped before it
    completes: the client sent an orphaned PDU for it, or the connection went away.
    ``on_cancel`` runs for each co_cancel PDU the client sends for it (C706 12.6.4.6); the call
    is not ended by it: the handler decides, and the response carries the cancel count.
    """

    def __init__(self, on_abandon: Callable[[], None] | None = None,
                 on_cancel: Callable[[], None] | None = None):
        self._lock = threading.Lock()
        self._reply: Reply | None = None
        self._sink: Callable[[Reply], bool] | None = None
        self._attached = False
        self._abandoned = False
        self._on_abandon = on_abandon
        self._on_cancel = on_cancel
        self.cancel_count = 0

    @property
    def done(self) -> bool:
        return self._reply is not None

    @property
    def abandoned(self) -> bool:
        return self._abandoned

    def complete(self, reply: Reply) -> bool:
        """Answer the call. False if it was already answered or has been abandoned."""
        if not isinstance(reply, Reply) or reply.kind == "later":
            raise ValueError("a waiter completes with Reply.stub(...) or Reply.fault(...)")
        with self._lock:
            if self._reply is not None or self._abandoned:
                return False
            self._reply = reply
            sink = self._sink
        return sink(reply) if sink is not None else True

    # runtime side
    def _attach(self, sink: Callable[[Reply], bool]) -> None:
        with self._lock:
            if self._attached:
                raise ValueError("this waiter already belongs to a call")
            self._attached = True
            self._sink = sink
            reply = self._reply
        if reply is not None:
            sink(reply)

    def _abandon(self) -> None:
        with self._lock:
            if self._reply is not None or self._abandoned:
                return
            self._abandoned = True
            self._sink = None
        if self._on_abandon is not None:
            try:
                self._on_abandon()
            except Exception:  # the handler's callback must not take the runtime down
                log.exception("on_abandon callback failed")

    def _cancel(self) -> None:
        self.cancel_count += 1
        if self._on_cancel is not None:
            try:
                self._on_cancel()
            except Exception:
                log.exception("on_cancel callback failed")


@dataclass(frozen=True)
class Reply:
    """What a handler answers: ``Reply.stub(bytes)``, ``Reply.fault(status)`` or
    ``Reply.later(waiter)``."""

    kind: str
    data: bytes = b""
    status: int = 0
    waiter: Waiter | None = field(default=None, compare=False)

    @classmethod
    def stub(cls, data: bytes) -> Reply:
        return cls("stub", data=bytes(data))

    @classmethod
    def fault(cls, status: int) -> Reply:
        # MS-RPCE 3.3.3.5.1: a server MUST NOT send status 0 (ERROR_SUCCESS) in a fault
        if not 0 < status <= 0xFFFFFFFF:
            raise ValueError(f"fault status {status:#x} is not a nonzero 32-bit value")
        return cls("fault", status=status)

    @classmethod
    def later(cls, waiter: Waiter) -> Reply:
        return cls("later", waiter=waiter)


class Handler(Protocol):
    def interfaces(self) -> dict[uuid.UUID, tuple[int, int, frozenset[str]]]:
        """The interfaces served: UUID -> (major, minor, {"ndr", "ndr64"})."""
        ...

    def call(self, conn: Connection, interface: uuid.UUID, opnum: int, stub: bytes,
             ndr64: bool) -> Reply:
        """One call's stub (reassembled); the opnum range is the handler's to check."""
        ...

    def connection_lost(self, conn: Connection) -> None:
        """The connection is gone (once per accepted connection): run the rundown."""
        ...


# --- one connection ------------------------------------------------------------------------------


class _Closing(Exception):
    """The connection must close (after what is queued has been sent)."""


#: MS-RPCE 3.3.1.5.7's group's principal before any call was made in it
_UNSET = object()


@dataclass
class _Group:
    id: int
    address: str  # the client's IP address (MS-RPCE 3.3.1.5.7: for RPC over TCP)
    members: set[int] = field(default_factory=set)  # connection ids
    principal: Any = _UNSET  # the caller identity of its first call (None: anonymous)


class AssociationGroups:
    """The association groups of one server (MS-RPCE 3.3.1.5.7; C706 12.6.4.3 "association
    group"), owned by the server:

    - ids are issued by the server only, drawn from a CSPRNG (never 0, never one in use): a
      client cannot name a group it was not told;
    - a bind naming a live group joins it only from the client address that created it
      (MS-RPCE 3.3.1.5.7: the server SHOULD establish from the transport whether the
      connection comes from the same machine, and SHOULD NOT allow it otherwise; for RPC over
      TCP by the client's IP address); a bind naming any other id (0, unissued, a group whose
      connections are gone, another address's) gets a new group, whose id the bind_ack says;
    - a group's principal is the identity of its first call; a call made in the group by a
      connection authenticated as anyone else (or not at all) is refused with
      rpc_s_access_denied, so no client acts through another's handles (MS-MQRR 2.2.4: the
      context handles are the group's).
    """

    def __init__(self, randbits: Callable[[int], int] = secrets.randbits):
        self._randbits = randbits
        self._lock = threading.Lock()
        self._groups: dict[int, _Group] = {}

    def __len__(self) -> int:
        with self._lock:
            return len(self._groups)

    def bind(self, conn: Connection, requested: int) -> int:
        """The group a binding connection is in (the one it asked for, or a new one); its
        context handles are the group's alone (MS-MQRR/2.2.4.1/R1)."""
        address = conn.peer[0]
        with self._lock:
            group = self._groups.get(requested) if requested else None
            if group is None or group.address != address:
                if group is not None:
                    log.info("%r: join of association group %#x refused: created from %s",
                             conn, requested, group.address)
                group_id = 0
                while not group_id or group_id in self._groups:
                    group_id = self._randbits(32)
                group = self._groups[group_id] = _Group(group_id, address)
            group.members.add(conn.id)
            return group.id

    def admit(self, conn: Connection) -> bool:
        """May this connection call in its group? Fixes the group's principal at its first
        call."""
        with self._lock:
            group = self._groups.get(conn.assoc_group_id)
            if group is None or conn.id not in group.members:
                return False
            if group.principal is _UNSET:
                group.principal = conn.identity
            return group.principal == conn.identity

    def leave(self, conn: Connection) -> None:
        with self._lock:
            group = self._groups.get(conn.assoc_group_id)
            if group is not None:
                group.members.discard(conn.id)
                if not group.members:
                    del self._groups[group.id]


@dataclass
class _Call:
    call_id: int
    context_id: int
    waiter: Waiter | None = None
    cancel_count: int = 0


class Connection:
    """One accepted transport connection and the association on it (MS-RPCE 3.3.1.1.1)."""

    def __init__(self, server: RpcServer, sock: socket.socket, conn_id: int,
                 peer: tuple[str, int] | None = None, accepted: float | None = None):
        self.server = server
        self.id = conn_id
        #: monotonic times: accepted, last octet received or answer sent, the PDU under way
        #: began (None between PDUs)
        self.accepted = self.last_activity = time.monotonic() if accepted is None else accepted
        self.pdu_started: float | None = None
        #: closed by the server to make room for another connection
        self.evicted = False
        self._charged = 0  # reassembly octets counted in the server's budget
        self.peer: tuple[str, int] = (peer or sock.getpeername())[:2]
        self._local: tuple[str, int] | None = None
        #: the handler's per-connection state (e.g. the context handles it gave out)
        self.state: dict = {}
        #: the association on the connection (wire/association.py): presentation contexts,
        #: the group, requests under reassembly, calls awaiting their answer
        self.assoc = a.Association(a.SERVER, max_partial_calls=server.max_calls,
                                   max_partial_octets=server.max_request,
                                   max_discarded=4 * server.max_calls)
        self.features = 0
        #: the bind carried PFC_SUPPORT_HEADER_SIGN (MS-RPCE 2.2.2.3)
        self.header_sign = False
        #: authentication (server/ntlm.py): the acceptor while binding, then the account;
        #: ``identity`` is the authenticated user's name, None for an anonymous caller
        self.ntlm: Any = None
        self.identity: str | None = None
        self.auth_level = 1  # RPC_C_AUTHN_LEVEL_NONE until an rpc_auth_3 completes
        self.auth_context_id = 0
        self.auth_failed = False
        # until a bind negotiates them: what C706 lets us assume of any peer
        self.max_xmit_frag = min(server.max_frag, d.MUST_RECV_FRAG_SIZE)
        self.max_recv_frag = self.max_xmit_frag
        self._recv_limit = max(server.max_frag, d.MUST_RECV_FRAG_SIZE)
        self._sock = sock
        self._lock = threading.Lock()
        self._calls: dict[int, _Call] = {}
        self._closed = False
        self._dropped: list[_Call] = []  # the calls in flight when it closed
        # input (the I/O thread's): octets not yet framed, the header of the PDU under way
        self._inbuf = bytearray()
        self._head: d.Header | None = None
        self._reading = True  # until the input ends (EOF, an error, a timeout, close())
        self._paused = False  # too many whole PDUs wait for a worker
        self._events = 0  # what the selector watches for
        self._hot = False  # watched among the bound connections (_Poller)
        # PDUs framed and not yet handled, and whether the connection is with a worker
        self._qlock = threading.Lock()
        self._pdus: collections.deque = collections.deque()
        self._running = False
        self._handed = False  # a PDU of it has gone to a worker (_frame)
        # output: what the socket did not take at once, and when it last took some
        self._wlock = threading.Lock()
        self._outq: collections.deque = collections.deque()
        self._out_progress = self.accepted
        self._departing = False  # handed to the departures thread
        self._drain_until: float | None = None  # closed: its output may drain until then

    def __repr__(self) -> str:
        return f"<Connection {self.id} {self.peer[0]}:{self.peer[1]}>"

    @property
    def local(self) -> tuple[str, int]:
        """The address the client reached the server at."""
        if self._local is None:
            try:
                self._local = self._sock.getsockname()[:2]
            except OSError:  # closed
                return ("", 0)
        return self._local

    @property
    def contexts(self) -> dict[int, Binding]:
        return self.assoc.contexts

    @property
    def bound(self) -> bool:
        return self.assoc.bound

    @property
    def assoc_group_id(self) -> int:
        return self.assoc.assoc_group or 0

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Drop the connection: what it sent before is handled, then it is torn down (from
        any thread)."""
        self._soon(lambda: self._end_input("closed by the server"))

    def _soon(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` on the I/O thread (nothing once the server has stopped)."""
        io = self.server._io
        if io is not None:
            io.call_soon(fn)

    @property
    def in_flight(self) -> int:
        """Calls the handler is running or that wait for their answer."""
        with self._lock:
            return len(self._calls)

    @property
    def partial_octets(self) -> int:
        """Octets of the requests under reassembly."""
        with self._lock:
            return self.assoc.partial_octets

    def _account(self) -> bool:
        """Bring the server's count of reassembly octets to this connection's (under
        ``self._lock``). False, counting nothing, if growth would pass the server's budget."""
        now = self.assoc.partial_octets
        if not self.server._charge(now - self._charged):
            return False
        self._charged = now
        return True

    def _idle_deadline(self) -> tuple[float | None, str]:
        """When the silence between two PDUs ends the connection (module doc: Limits)."""
        server = self.server
        with self._lock:
            busy = bool(self._calls)
            partial = self.assoc.partial_octets
        if busy:
            return None, ""
        if partial:
            return self.last_activity + server.pdu_timeout, "a request's fragments stopped"
        if not self.bound:
            return self.last_activity + server.unbound_timeout, "no bind"
        deadline = self.last_activity + server.idle_timeout
        if time.monotonic() >= deadline and server._holds_handles(self):
            return None, ""  # its closing would run down its group's context handles
        return deadline, "idle"

    def _pdu_deadline(self) -> float:
        """When the PDU under way must be whole: within pdu_timeout, and at no less than
        min_rate octets a second (module doc: Limits)."""
        server = self.server
        allowed = server.pdu_timeout
        if server.min_rate:
            length = self._head.frag_length if self._head is not None else d.HEADER_SIZE
            allowed = min(allowed, _PDU_GRACE + length / server.min_rate)
        assert self.pdu_started is not None
        return self.pdu_started + allowed

    # --- input (on the I/O thread) ---

    def _deadline(self) -> tuple[float | None, str]:
        """When the input ends for want of octets (None: not now), and why."""
        if not self._reading:
            return None, ""
        if self.pdu_started is not None:
            return self._pdu_deadline(), "PDU not completed in time"
        with self._qlock:
            if self._running or self._pdus:  # a worker has its PDUs: the silence is ours
                return None, ""
        return self._idle_deadline()

    def _on_readable(self) -> None:
        received = self.server._io.received  # (one buffer for every read of the I/O thread)
        try:
            count = self._sock.recv_into(received)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._end_input(f"receive failed: {exc}")
            return
        if not count:
            if self._inbuf:
                need = self._head.frag_length if self._head is not None else d.HEADER_SIZE
                self._end_input(f"connection closed inside a PDU ({len(self._inbuf)}/{need} "
                                "octets)")
            else:
                self._end_input(None)
            return
        self.last_activity = now = time.monotonic()
        if self.pdu_started is None:
            self.pdu_started = now
        self._inbuf += received[:count]
        self._frame()

    def _frame(self) -> None:
        """Cut the whole PDUs out of what was received, framed by frag_length (C706
        12.6.3.1), and hand them to a worker."""
        buf = self._inbuf
        framed = 0
        while self._reading:
            if self._head is None:
                if len(buf) < d.HEADER_SIZE:
                    break
                head = bytes(buf[:d.HEADER_SIZE])
                try:
                    self._head = d.decode_header(head)
                except d.PduError as exc:
                    if exc.field in ("rpc_vers", "rpc_vers_minor") and head[2] == d.PType.BIND:
                        # C706 12.6.4.5: a bind in a version we do not speak gets a bind_nak
                        # naming the versions we do (5.0), then the connection closes
                        call_id = struct.unpack("<I", head[12:16])[0]
                        nak = d.BindNak(d.RejectReason.PROTOCOL_VERSION_NOT_SUPPORTED)
                        self._send([d.encode_pdu(nak, call_id)])
                    self._end_input(f"bad header: {exc}")
                    break
                limit = self._recv_limit
                if self._head.frag_length > limit:
                    self._end_input(f"frag_length {self._head.frag_length} exceeds the "
                                    f"{limit}-octet limit")
                    break
            length = self._head.frag_length
            if len(buf) < length:
                break
            raw = bytes(buf[:length])
            del buf[:length]
            self._head = None
            framed += 1
            self._handed = True
            with self._qlock:
                self._pdus.append(raw)
                if len(self._pdus) >= _MAX_QUEUED:
                    self._paused = True
                self._schedule()
        if not buf:
            self.pdu_started = None
        elif framed:
            self.pdu_started = time.monotonic()  # the next PDU began with these octets
        if framed:
            self.server._io.handed = True
        self._interest()

    def _end_input(self, why: str | None) -> None:
        """Nothing more is read; what was framed is handled, then the connection closes."""
        if not self._reading:
            return
        if not self._handed and not self._outq:
            self._close_untouched(why)
            return
        self._stop_reading()
        with self._qlock:
            self._pdus.append(_End(why))
            self._schedule()
        self._interest()

    def _close_untouched(self, why: str | None) -> None:
        """(I/O thread) The end of a connection no worker ever saw (no whole PDU came, nothing
        waits to be sent): it has no call, no association group and no context handle, so
        it is torn down here at once, not handed from thread to thread as a connection
        that made calls is (_close_down, _teardown). A flood of connections that never
        send a whole PDU (slowloris, or the newcomers evicted for others) costs the other
        clients no more than their accepting and closing."""
        if why:
            log.debug("%r closing: %s", self, why)
        self._stop_reading()
        self._closed = True
        self._interest_off()
        self._departing = True
        self._lost()
        io = self.server._io
        if io is not None:
            io.close_later(self._sock)
        else:  # (the server has stopped)
            self._sock.close()
        self.server._forget(self)

    def _lost(self) -> None:
        """The handler hears the connection is gone (once: _close_untouched or _teardown)."""
        try:
            self.server.handler.connection_lost(self)
        except Exception:
            log.exception("%r: connection_lost failed", self)

    def _stop_reading(self) -> None:
        self._reading = False
        self._inbuf = bytearray()
        self.pdu_started = None

    def _resume(self) -> None:
        if self._paused:
            self._paused = False
            self._interest()

    def _interest(self) -> None:
        """Watch the socket for what the connection waits for (I/O thread only), among the
        bound connections once it has bound (_Poller)."""
        if self._departing:
            return
        events = (_READ if self._reading and not self._paused else 0) | (
            _WRITE if self._outq else 0)
        hot = self.assoc.bound
        if events == self._events and hot == self._hot:
            return
        sel = self.server._io.sel
        try:
            if not self._events:
                if events:
                    sel.register(self._sock, events, self, hot)
            elif not events:
                sel.unregister(self._sock)
            else:
                sel.modify(self._sock, events, self, hot)
        except (OSError, ValueError, KeyError) as exc:  # the socket is gone under us
            log.debug("%r: selector: %s", self, exc)
            events = 0
        self._events = events
        self._hot = hot and bool(events)

    # --- a worker's turn ---

    def _schedule(self) -> None:
        """(under ``self._qlock``) Give the connection to a worker unless one has it."""
        if not self._running and self._pdus:
            self._running = True
            self.server._runq.put(self)

    def _drain(self) -> None:
        """A worker's turn on this connection: its next ``_BATCH`` PDUs, in order; then, if more
        wait, back to the end of the line, so that no connection keeps the workers from the
        others."""
        for _ in range(_BATCH):
            with self._qlock:
                if not self._pdus:
                    self._running = False
                    return
                item = self._pdus.popleft()
                if self._paused and len(self._pdus) <= _RESUME_AT:
                    self._soon(self._resume)
            if self._closed:
                continue  # what came after the end is dropped
            if type(item) is _End:
                if item.why:
                    log.debug("%r closing: %s", self, item.why)
                self._close_down()
                continue
            try:
                self._on_pdu(item)
            except _Closing as exc:
                log.debug("%r closing: %s", self, exc)
                self._close_down()
            except Exception:  # a bug here must end one connection, not the server
                log.exception("%r: unexpected error; closing", self)
                self._close_down()
        with self._qlock:
            if self._pdus:
                self.server._runq.put(self)
            else:
                self._running = False

    def _close_down(self) -> None:
        """The connection ends: what is queued for it is sent (for at most io_timeout
        seconds), then the departures thread abandons its calls in flight and runs the
        rest."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            calls = list(self._calls.values())
            self._calls.clear()
            self.assoc.close()  # the octets under reassembly are freed
            self._account()
        self._dropped = calls  # abandoned on the departures thread, not on a worker's time
        self._soon(self._retire)

    def _retire(self) -> None:
        """(I/O thread) Reads no more; departs once its output is out."""
        self._stop_reading()
        if self._outq:
            self._drain_until = time.monotonic() + self.server.io_timeout
            self._interest()
        else:
            self._depart()

    def _depart(self) -> None:
        """(I/O thread) Off the selector and the connection table; the departures thread
        runs the rundown and closes the socket."""
        if self._departing:
            return
        self._interest_off()
        self._departing = True
        self.server._departing(self)

    def _interest_off(self) -> None:
        if self._events:
            try:
                self.server._io.sel.unregister(self._sock)
            except (OSError, ValueError, KeyError):
                pass
            self._events = 0

    def _teardown(self) -> None:
        """(departures thread) Its calls in flight abandoned (``Waiter``: on_abandon), the
        rundown (MS-MQRR 3.1.6.2), then this side's FIN: a
        client that waits for the FIN after its own knows the handles it held are
        released."""
        with self._wlock:
            self._outq.clear()
        for call in self._dropped:
            if call.waiter is not None:
                call.waiter._abandon()
        self._dropped = []
        self._lost()
        self.server.groups.leave(self)
        try:
            self._sock.close()
        except OSError:
            pass
        self.server._forget(self)

    # --- output ---

    def _send(self, frames: list[bytes]) -> None:
        """Send whole PDUs, in order, from any thread: what the socket does not take at once
        waits for the I/O thread."""
        data = frames[0] if len(frames) == 1 else b"".join(frames)
        with self._wlock:
            if self._departing:
                return
            if self._outq:
                self._outq.append(data)
                return
            try:
                sent = self._sock.send(data)
            except (BlockingIOError, InterruptedError):
                sent = 0
            except OSError as exc:
                log.debug("%r: send failed: %s", self, exc)
                why = f"send failed: {exc}"
                self._soon(lambda: self._end_input(why))
                return
            if sent == len(data):
                return
            self._outq.append(memoryview(data)[sent:])
            self._out_progress = time.monotonic()
        self._soon(self._interest)

    def _on_writable(self) -> None:
        failed = None
        with self._wlock:
            while self._outq:
                head = self._outq[0]
                try:
                    sent = self._sock.send(head)
                except (BlockingIOError, InterruptedError):
                    break
                except OSError as exc:
                    failed = f"send failed: {exc}"
                    self._outq.clear()
                    break
                self._out_progress = time.monotonic()
                if sent < len(head):
                    self._outq[0] = memoryview(head)[sent:]
                    break
                self._outq.popleft()
            empty = not self._outq
        if failed:
            log.debug("%r: %s", self, failed)
            self._end_input(failed)
        if empty and self._closed and self._drain_until is not None:
            self._depart()
        else:
            self._interest()

    def _check_time(self, now: float) -> float | None:
        """(I/O thread, the sweep) End what has run out of time; the next deadline."""
        if self._departing:
            return None
        if self._outq and now - self._out_progress > self.server.io_timeout:
            with self._wlock:
                self._outq.clear()
            log.debug("%r: a send did not finish within %.1fs", self, self.server.io_timeout)
            if self._drain_until is not None:
                self._depart()
                return None
            self._end_input("send timed out")
            return None
        if self._drain_until is not None:
            if now >= self._drain_until:
                self._depart()
                return None
            return self._drain_until
        if self.server.stopping:
            self._end_input("server stopping")
            return None
        until, why = self._deadline()
        if until is not None and now >= until:
            self._end_input(f"timed out: {why}")
            return None
        return until

    # --- dispatch ---

    def _on_pdu(self, raw: bytes) -> None:
        try:
            pdu = d.decode_pdu(raw)
        except d.PduError as exc:
            self._on_malformed(raw, exc)
            return
        body = pdu.body
        if isinstance(body, d.AlterContext):
            self._on_bind(pdu, alter=True)
        elif isinstance(body, d.Bind):
            self._on_bind(pdu, alter=False)
        elif isinstance(body, d.Request):
            self._on_request(pdu, raw)
        elif isinstance(body, d.Orphaned | d.CoCancel):
            if self.identity is not None and pdu.auth is not None:
                self._verify(pdu, raw)  # a signed PDU counts in the client's sequence
            if isinstance(body, d.Orphaned):
                self._on_orphaned(pdu.call_id)
            else:
                self._on_cancel(pdu.call_id)
        elif isinstance(body, d.Auth3):
            self._on_auth3(pdu)
        elif isinstance(body, d.Shutdown):
            pass  # shutdown is the server's to send
        else:  # bind_ack, response, fault, ...: server-to-client PDUs (C706 12.6.4)
            raise _Closing(f"a client does not send {d.PType(pdu.ptype).name}")

    def _on_malformed(self, raw: bytes, exc: d.PduError) -> None:
        """The header framed it but the body does not decode."""
        h = d.decode_header(raw)
        log.debug("%r: malformed PDU: %s", self, exc)
        if h.ptype == d.PType.BIND:
            # MS-RPCE 2.2.2.5: a protocol error while processing a bind
            nak = d.BindNak(d.RejectReason.PROTOCOL_VERSION_NOT_SUPPORTED)
            self._send([d.encode_pdu(nak, h.call_id)])
        elif h.ptype in (d.PType.REQUEST, d.PType.ALTER_CONTEXT):
            with self._lock:
                self.assoc.abandon(h.call_id, last=True)
                self._account()
            self._fault(h.call_id, 0, d.NCA_S_PROTO_ERROR)
        elif h.ptype in (d.PType.CO_CANCEL, d.PType.ORPHANED, d.PType.AUTH3):
            pass
        else:
            raise _Closing(f"undecodable PDU: {exc}")

    def _fault(self, call_id: int, context_id: int, status: int, executed: bool = False,
               cancel_count: int = 0) -> None:
        """A fault PDU (C706 12.6.4.7; no stub, MS-RPCE 2.2.2.8); a call the runtime refused
        before the handler saw it is flagged PFC_DID_NOT_EXECUTE."""
        flags = d.PFC_WHOLE | (0 if executed else d.PFC_DID_NOT_EXECUTE)
        body = d.Fault(context_id, status, cancel_count=min(cancel_count, 255))
        self._send([d.encode_pdu(body, call_id, flags)])

    # bind / alter_context

    def _on_bind(self, pdu: d.Pdu, alter: bool) -> None:
        h, b = pdu.header, pdu.body
        assert isinstance(b, d.Bind)
        refusal = self.assoc.bind_refusal(alter)
        if isinstance(refusal, d.BindNak):
            self._send([d.encode_pdu(refusal, h.call_id)])
            return
        if refusal is not None:
            self._fault(h.call_id, refusal.context_id, refusal.status)
            return
        challenge = None
        if pdu.auth is not None:
            challenge = self._bind_auth(pdu.auth, alter)
            if challenge is None:
                self._refuse_bind(h.call_id, alter,
                                  d.RejectReason.AUTHENTICATION_TYPE_NOT_RECOGNIZED)
                return
        if not b.contexts:
            self._refuse_bind(h.call_id, alter, d.RejectReason.PROTOCOL_VERSION_NOT_SUPPORTED)
            return
        if not alter and bind_time_feature_offers(b.contexts) > 1:
            # as Windows: bind_nak, then the connection is closed (bind_time_feature_offers)
            self._refuse_bind(h.call_id, alter, d.RejectReason.REASON_NOT_SPECIFIED)
            raise _Closing("two bind time feature negotiation contexts in one bind")
        try:
            served = dict(self.server.handler.interfaces())
        except Exception:
            log.exception("%r: handler.interfaces() failed", self)
            served = {}
        results, _accepted, features = negotiate_contexts(
            b.contexts, served, self.server.prefer_ndr64, self.contexts, SERVER_FEATURES)
        if features is not None:
            self.features = features
        flags = d.PFC_WHOLE | (h.pfc_flags & d.PFC_CONC_MPX)
        if alter:
            group = self.assoc_group_id
            body = d.AlterContextResp(self.max_xmit_frag, self.max_recv_frag, group, b"",
                                      results)
        else:
            # C706 12.6.4.4: the server's fragment sizes may not exceed what the client
            # proposed; MustRecvFragSize (1432) is the floor every implementation receives
            limit = self.server.max_frag
            floor = min(limit, d.MUST_RECV_FRAG_SIZE)
            self.max_xmit_frag = max(min(limit, b.max_recv_frag), floor)
            self.max_recv_frag = max(min(limit, b.max_xmit_frag), floor)
            self._recv_limit = max(self.max_recv_frag, d.MUST_RECV_FRAG_SIZE)
            group = self.server.groups.bind(self, b.assoc_group_id)
            self.header_sign = bool(h.pfc_flags & d.PFC_SUPPORT_HEADER_SIGN)
            port = str(self.server.address[1]).encode("ascii")
            body = d.BindAck(self.max_xmit_frag, self.max_recv_frag, group, port, results)
        with self._lock:  # the contexts the proposal and this answer put in force
            self.assoc.propose(h.call_id, b.contexts)
            self.assoc.acknowledge(h.call_id, results, group, bind=not alter)
        verifier = None
        if challenge:  # the CHALLENGE rides in the bind_ack (MS-RPCE 3.3.1.5.2)
            v = pdu.auth
            verifier = d.AuthVerifier(v.auth_type, v.auth_level, 0, v.auth_context_id, challenge)
        self._send([d.encode_pdu(body, h.call_id, flags, auth=verifier)])
        if not alter:
            io = self.server._io
            if io is not None:
                io.promote(self)  # its calls now come before any newcomer's octets

    def _refuse_bind(self, call_id: int, alter: bool, reason: d.RejectReason) -> None:
        """A bind is refused with a bind_nak (MS-RPCE 2.2.2.5), an alter_context, which has
        no nak, with a fault."""
        if alter:
            self._fault(call_id, 0, d.NCA_S_PROTO_ERROR)
        else:
            self._send([d.encode_pdu(d.BindNak(reason), call_id)])

    # authentication (server/ntlm.py; MS-RPCE 3.3.1.5.2)

    def _bind_auth(self, auth: d.AuthVerifier, alter: bool) -> bytes | None:
        """A bind's (or alter_context's) verifier: the CHALLENGE to send back, b"" for one that
        needs no answer (alter_context on an established context), None to refuse."""
        security = self.server.security
        if security is None or not security.accounts or auth.auth_type != AUTHN_WINNT \
                or auth.auth_level not in LEVELS.values():
            log.info("%r: refused an authenticated bind (type %d, level %d)", self,
                     auth.auth_type, auth.auth_level)
            return None
        if alter and self.identity is not None:
            ok = (auth.auth_context_id == self.auth_context_id
                  and auth.auth_level == self.auth_level)
            return b"" if ok else None
        if self.ntlm is not None:  # one security context per connection
            return None
        acceptor = NtlmAcceptor(security.accounts, security.domain, security.domain)
        try:
            challenge = acceptor.negotiate(auth.auth_value)
        except AuthError as exc:
            log.info("%r: NTLM negotiation refused: %s", self, exc)
            return None
        self.ntlm = acceptor
        self.auth_context_id = auth.auth_context_id
        self._pending_level = auth.auth_level
        return challenge

    def _on_auth3(self, pdu: d.Pdu) -> None:
        """rpc_auth_3 (MS-RPCE 2.2.2.10): the AUTHENTICATE leg; no answer either way. A
        failure leaves the caller anonymous (and refused where authentication is
        required)."""
        a = pdu.auth
        if self.ntlm is None or self.identity is not None or a is None \
                or a.auth_context_id != self.auth_context_id:
            log.info("%r: rpc_auth_3 without a security context under way; ignored", self)
            return
        throttle = self.server.security.throttle
        address = self.peer[0]

        def admit(user: str) -> None:  # server/security.py: failed logons per client
            if throttle.refused(address, user):
                raise Throttled(f"{user}: too many failed logons from {address}; refused "
                                f"for up to {throttle.backoff:g} s without checking the proof")

        try:
            account = self.ntlm.authenticate(a.auth_value, admit)
        except AuthError as exc:
            log.info("%r: authentication failed: %s", self, exc)
            if exc.user and not isinstance(exc, Throttled):
                throttle.failed(address, exc.user)
            self.ntlm = None
            self.auth_failed = True
            return
        throttle.succeeded(address, account.name)
        self.identity = account.name
        self.auth_level = self._pending_level
        log.info("%r: authenticated %s at level %d", self, account.identity, self.auth_level)

    def _verify(self, pdu: d.Pdu, raw: bytes) -> tuple[int, bytes | None]:
        """A PDU of an authenticated connection at packet integrity or privacy: (0, the
        body's clear octets before the verifier's padding is cut, or None when the PDU is not
        sealed) or (a fault status, None)."""
        a = pdu.auth
        if self.auth_level < LEVEL_INTEGRITY:  # connect level: PDUs carry no signature
            return 0, None
        if a is None or a.auth_level != self.auth_level or \
                a.auth_context_id != self.auth_context_id or len(a.auth_value) != SIGNATURE_SIZE:
            return RPC_S_SEC_PKG_ERROR, None
        h = pdu.header
        trailer = h.frag_length - h.auth_length - d.SEC_TRAILER_SIZE
        start = d.HEADER_SIZE + (8 if isinstance(pdu.body, d.Request) else 0) + (
            16 if isinstance(pdu.body, d.Request) and pdu.body.object is not None else 0)
        clear = None
        signed = raw[:-SIGNATURE_SIZE]
        if self.auth_level == LEVEL_PRIVACY and isinstance(pdu.body, d.Request):
            clear = self.ntlm.unseal(raw[start:trailer])
            signed = raw[:start] + clear + raw[trailer:-SIGNATURE_SIZE]
        if not self.ntlm.verify(signed, a.auth_value):
            log.info("%r: a PDU's signature does not verify", self)
            return RPC_S_SEC_PKG_ERROR, None
        return 0, clear

    def _admit(self, pdu: d.Pdu, raw: bytes) -> tuple[int, d.Pdu]:
        """The authentication checks of a request PDU: (fault status or 0, the PDU with its
        stub in the clear)."""
        security = self.server.security
        if self.identity is None:
            if self.auth_failed:  # the caller tried and did not prove who it is
                return RPC_S_ACCESS_DENIED, pdu
            if pdu.auth is not None:  # a verifier without a security context
                return d.NCA_S_PROTO_ERROR, pdu
            if security is not None and security.required:
                return RPC_S_ACCESS_DENIED, pdu
            return 0, pdu
        status, clear = self._verify(pdu, raw)
        if status:
            return status, pdu
        if clear is not None:
            pad = pdu.auth.auth_pad_length if pdu.auth else 0
            stub = clear[:len(clear) - pad] if pad else clear
            pdu = dataclasses.replace(pdu, body=dataclasses.replace(pdu.body, stub=stub))
        if security is not None and security.required and self.auth_level < security.level:
            return RPC_S_ACCESS_DENIED, pdu
        return 0, pdu

    def _protect(self, pdu: bytes) -> bytes:
        """Sign (and at packet privacy, seal) one response PDU encoded with a 16-octet
        placeholder signature."""
        if self.auth_level == LEVEL_PRIVACY:
            end = len(pdu) - SIGNATURE_SIZE - d.SEC_TRAILER_SIZE
            sealed = self.ntlm.seal(pdu[d.RESPONSE_SIZE:end])
            signature = self.ntlm.sign(pdu[:-SIGNATURE_SIZE])
            return pdu[:d.RESPONSE_SIZE] + sealed + pdu[end:-SIGNATURE_SIZE] + signature
        return pdu[:-SIGNATURE_SIZE] + self.ntlm.sign(pdu[:-SIGNATURE_SIZE])

    # request fragments (C706 12.6.4.9; fragment rules of 12.6 "Fragmentation")

    def _on_request(self, pdu: d.Pdu, raw: bytes) -> None:
        status, pdu = self._admit(pdu, raw)
        h, req = pdu.header, pdu.body
        assert isinstance(req, d.Request)
        try:
            with self._lock:
                last = bool(h.pfc_flags & d.PFC_LAST_FRAG)
                if status:
                    self.assoc.abandon(h.call_id, last)
                    ready = a.Refused(h.call_id, req.context_id, status, "not admitted")
                else:
                    ready = self.assoc.request_fragment(h.call_id, h.pfc_flags,
                                                        req.context_id, req.opnum, req.stub,
                                                        h.drep)
                    if not self._account():
                        # past the server's reassembly budget: the request's octets go now
                        log.info("%r: call %d refused: the reassembly budget (%d octets) is "
                                 "spent", self, h.call_id, self.server.reassembly_budget)
                        self.assoc.abandon(h.call_id, last)
                        ready = a.Refused(h.call_id, req.context_id,
                                          d.NCA_S_FAULT_REMOTE_NO_MEMORY,
                                          "the reassembly budget is spent")
                self._account()
        except a.Abort as exc:
            raise _Closing(str(exc)) from None
        if ready is None:
            return
        if type(ready) is a.Refused:
            self._fault(ready.call_id, ready.context_id, ready.status)
            return
        self._dispatch(ready)

    def _refuse(self, request: a.Request, status: int) -> None:
        """A whole request refused before the handler saw it."""
        with self._lock:
            self.assoc.answered(request.call_id)
        self._fault(request.call_id, request.context_id, status)

    def _dispatch(self, request: a.Request) -> None:
        cid, context_id, opnum = request.call_id, request.context_id, request.opnum
        binding = self.contexts.get(context_id)
        if binding is None:
            # C706 appendix E: nca_s_invalid_pres_context_id
            self._refuse(request, d.NCA_S_INVALID_PRES_CONTEXT_ID)
            return
        if not request.ndr_native:
            # our stubs are little-endian/ASCII/IEEE NDR only (C706 14.1)
            self._refuse(request, d.NCA_S_UNSUPPORTED_TYPE)
            return
        with self._lock:
            if len(self._calls) >= self.server.max_calls:
                busy = True
            else:
                busy = False
                call = _Call(cid, context_id)
                self._calls[cid] = call
        if busy:
            self._refuse(request, d.NCA_S_SERVER_TOO_BUSY)
            return
        try:
            # MS-MQRR/2.1/R1: RPC over TCP/IP as MS-RPCE specifies it, trailers included
            stub, padding = a.check_verification_trailer(
                request.stub, binding, cid, context_id, opnum, request.drep, self.header_sign)
        except a.TrailerRefused as refused:
            log.info("%r: call %d refused: %s", self, cid, refused.why)
            with self._lock:
                self._calls.pop(cid, None)
            self._refuse(request, refused.status)
            return
        if not self.server.groups.admit(self):
            # the group is another principal's (AssociationGroups): its handles are not ours
            log.info("%r: call refused: %s is not the principal of association group %#x",
                     self, self.identity or "an anonymous caller", self.assoc_group_id)
            with self._lock:
                self._calls.pop(cid, None)
            self._refuse(request, RPC_S_ACCESS_DENIED)
            return
        try:
            extra = {"padding": padding} if padding else {}
            reply = self.server.handler.call(self, binding.interface, opnum, stub, binding.ndr64,
                                             **extra)
            if not isinstance(reply, Reply):
                raise TypeError(f"handler returned {type(reply).__name__}, not a Reply")
            if reply.kind == "later":
                assert reply.waiter is not None
                call.waiter = reply.waiter
                reply.waiter._attach(lambda r: self._finish(cid, r))
                return
        except Exception as exc:
            status = (d.RPC_X_BAD_STUB_DATA if isinstance(exc, _BAD_STUB_EXCEPTIONS)
                      else d.NCA_S_FAULT_UNSPEC)
            log.warning("%r: handler failed on opnum %d: %r -> fault %#x", self, opnum, exc,
                        status)
            reply = Reply.fault(status)
        self._finish(cid, reply)

    def _finish(self, cid: int, reply: Reply) -> bool:
        """Send a call's answer (response fragments or a fault). False if the call is gone."""
        self.last_activity = time.monotonic()
        with self._lock:
            call = self._calls.pop(cid, None)
            self.assoc.answered(cid)
            if call is None or self._closed:
                return False
            cancels = min(call.cancel_count, 255)
            if reply.kind == "fault":
                body = d.Fault(call.context_id, reply.status, cancel_count=cancels)
                self._send([d.encode_pdu(body, cid)])
                return True
            frames = []
            remaining = len(reply.data)
            offset = 0

            signed = self.auth_level >= LEVEL_INTEGRITY
            # room for the verifier: padding (< 4), sec_trailer (8) and the signature (16)
            room = self.max_xmit_frag - (32 if signed else 0)
            for flags, chunk in d.fragment_stub(reply.data, room, d.RESPONSE_SIZE):
                # C706 12.6.4.10: alloc_hint, the octets of stub still to come
                body = d.Response(call.context_id, chunk, remaining - offset, cancels)
                if signed:
                    verifier = d.AuthVerifier(AUTHN_WINNT, self.auth_level, 0,
                                              self.auth_context_id, bytes(SIGNATURE_SIZE))
                    frames.append(self._protect(d.encode_pdu(body, cid, flags, auth=verifier)))
                else:
                    frames.append(d.encode_pdu(body, cid, flags))
                offset += len(chunk)
            self._send(frames)
            return True

    # orphaned / co_cancel

    def _on_orphaned(self, cid: int) -> None:
        """C706 12.6.4.8: the client abandons the call: no response will be sent for it."""
        with self._lock:
            self.assoc.orphaned(cid)
            self._account()
            call = self._calls.pop(cid, None)
        if call is not None and call.waiter is not None:
            call.waiter._abandon()

    def _on_cancel(self, cid: int) -> None:
        """C706 12.6.4.6: a cancel request for a call in progress; counted and passed on."""
        with self._lock:
            call = self._calls.get(cid)
            if call is not None:
                call.cancel_count += 1
        if call is not None and call.waiter is not None:
            call.waiter._cancel()


# --- the server ----------------------------------------------------------------------------------


class _End:
    """The input of a connection has ended (in its PDU queue, after the PDUs before it)."""

    __slots__ = ("why",)

    def __init__(self, why: str | None):
        self.why = why


#: what a socket is watched for (_Poller)
_READ, _WRITE = selectors.EVENT_READ, selectors.EVENT_WRITE


class _Poller:
    """Which sockets are ready, for the I/O thread: epoll itself where there is one (Linux),
    else the selectors module. Each connection a burst brings is registered and unregistered
    once, and the selectors module's bookkeeping around those calls costs as much as the
    system calls themselves. ``poll`` gives (handler, events): _READ when there is input, an
    end of input or an error to read, _WRITE when a watched socket can be written (or
    failed).

    With epoll, the bound connections (``hot``) are watched by an epoll of their own, itself
    watched by the main one: ``poll`` gives them first, and ``poll_hot`` gives them alone at
    no cost proportional to the other sockets, so the I/O thread can serve a client's call
    in the middle of a long pass over a flood's newcomers."""

    def __init__(self) -> None:
        self._epoll = select.epoll() if hasattr(select, "epoll") else None
        self._sel = None if self._epoll is not None else selectors.DefaultSelector()
        self._handlers: dict[int, Any] = {}  # fd -> handler (epoll)
        self._hot = select.epoll() if self._epoll is not None else None
        self._hot_fds: set[int] = set()
        if self._hot is not None:
            self._epoll.register(self._hot.fileno(), select.EPOLLIN)

    @staticmethod
    def _mask(events: int) -> int:
        return (select.EPOLLIN if events & _READ else 0) | (
            select.EPOLLOUT if events & _WRITE else 0)

    def register(self, sock: socket.socket, events: int, handler: Any,
                 hot: bool = False) -> None:
        self._watch(sock, events, handler, True, hot)

    def modify(self, sock: socket.socket, events: int, handler: Any, hot: bool = False) -> None:
        self._watch(sock, events, handler, False, hot)

    def _watch(self, sock: socket.socket, events: int, handler: Any, first: bool,
               hot: bool) -> None:
        if self._epoll is None:
            (self._sel.register if first else self._sel.modify)(sock, events, handler)
            return
        fd = sock.fileno()
        mask = self._mask(events)
        hot_fds = self._hot_fds
        if first:
            (self._hot if hot else self._epoll).register(fd, mask)
        elif (fd in hot_fds) == hot:
            (self._hot if hot else self._epoll).modify(fd, mask)
        else:  # from one set to the other
            (self._epoll if hot else self._hot).unregister(fd)
            (self._hot if hot else self._epoll).register(fd, mask)
        if hot:
            hot_fds.add(fd)
        else:
            hot_fds.discard(fd)
        self._handlers[fd] = handler

    def unregister(self, sock: socket.socket) -> None:
        """(before ``sock`` is closed) KeyError if it is not watched."""
        if self._epoll is None:
            self._sel.unregister(sock)
            return
        fd = sock.fileno()
        del self._handlers[fd]
        if fd in self._hot_fds:
            self._hot_fds.discard(fd)
            self._hot.unregister(fd)
        else:
            self._epoll.unregister(fd)

    def _ready(self, events: list[tuple[int, int]], ready: list[tuple[Any, int]]) -> None:
        handlers = self._handlers
        for fd, ev in events:
            handler = handlers.get(fd)
            if handler is None and fd not in handlers:
                continue  # unregistered by an earlier event of this round
            readable = _READ if ev & _EPOLL_IN else 0
            ready.append((handler, readable | (_WRITE if ev & _EPOLL_OUT else 0)))

    def poll(self, timeout: float) -> list[tuple[Any, int]]:
        """What is ready, the bound connections first."""
        if self._epoll is None:
            return [(key.data, events) for key, events in self._sel.select(timeout)]
        events = self._epoll.poll(timeout)
        ready: list[tuple[Any, int]] = []
        if self._hot_fds:
            self._ready(self._hot.poll(0), ready)
        self._ready(events, ready)  # (the epoll of the bound ones has no handler: passed over)
        return ready

    def poll_hot(self) -> list[tuple[Any, int]]:
        """Which bound connections are ready (at once)."""
        ready: list[tuple[Any, int]] = []
        if self._hot_fds:
            self._ready(self._hot.poll(0), ready)
        return ready

    def close(self) -> None:
        if self._epoll is None:
            self._sel.close()
        else:
            self._epoll.close()
            self._hot.close()
            self._handlers.clear()
            self._hot_fds.clear()


if hasattr(select, "epoll"):
    # input, its end or an error: read (recv says which); room or an error: write
    _EPOLL_IN = select.EPOLLIN | select.EPOLLHUP | select.EPOLLERR | select.EPOLLRDHUP
    _EPOLL_OUT = select.EPOLLOUT | select.EPOLLHUP | select.EPOLLERR


class _IO:
    """The I/O thread: one poller over the listener and every connection's socket. It
    accepts, reads and frames PDUs, sends what a socket did not take at once, and keeps the
    time limits; it never runs a handler. Other threads hand it work with ``call_soon``."""

    def __init__(self, server: RpcServer):
        self.server = server
        self.sel = _Poller()
        self._tasks: collections.deque = collections.deque()
        self._closing: collections.deque = collections.deque()  # (close_later)
        #: a PDU has gone to the workers since the I/O thread last let them run (hand_off)
        self.handed = False
        #: connections that have bound, to be watched among the bound ones (promote)
        self._promoted: collections.deque = collections.deque()
        self._hot_at = 0.0  # when the bound connections are next served in a long pass
        #: what a read takes from a socket goes here first, then to the connection's input:
        #: a buffer of its own for every read would be 64 KiB allocated and shrunk to what
        #: came, the rest of the heap fragmented around what stays
        self.received = memoryview(bytearray(_RECV_SIZE))
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self.sel.register(self._wake_r, _READ, None)
        self._stopped = False
        self.thread = threading.Thread(target=self._run, daemon=True,
                                       name=f"rpc-io-{server.address[1]}")

    def call_soon(self, fn: Callable[[], None]) -> None:
        self._tasks.append(fn)
        if threading.current_thread() is not self.thread:
            try:
                self._wake_w.send(b"\0")
            except (BlockingIOError, InterruptedError):
                pass  # a wake-up is already pending
            except OSError:
                pass  # stopped

    def stop(self) -> None:
        self._stopped = True
        self.call_soon(lambda: None)

    def promote(self, conn: Connection) -> None:
        """(any thread) ``conn`` has bound: from now on the I/O thread serves it with the
        bound connections, before the newcomers (``hot``)."""
        self._promoted.append(conn)
        if threading.current_thread() is not self.thread:
            try:
                self._wake_w.send(b"\0")
            except OSError:
                pass  # a wake-up is already pending, or stopped

    def hot(self, now: float) -> None:
        """(I/O thread, inside a long pass over newcomers or connections that have not
        bound) Every _HOT_EVERY seconds, serve the bound connections that are ready: a
        client's call waits for a millisecond of a flood's newcomers, not for the whole
        pass."""
        if now < self._hot_at:
            return
        self._hot_at = now + _HOT_EVERY
        promoted = self._promoted
        while promoted:
            promoted.popleft()._interest()
        for handler, mask in self.sel.poll_hot():
            self._serve(handler, mask)
        self.hand_off()

    def hand_off(self) -> None:
        """(I/O thread, in a long pass) If a PDU went to the workers since the last time,
        let a worker take the interpreter now rather than at the next forced switch
        (``sys.setswitchinterval``): the call is answered while the pass goes on."""
        if self.handed:
            self.handed = False
            time.sleep(_HANDOFF)

    def close_later(self, sock: socket.socket) -> None:
        """(I/O thread) Close ``sock``, off the selector already, when nothing waits to be
        read: closing a TCP socket costs the kernel as much as accepting one (its FIN), and
        a burst of connections closed for others (evicted, oversized, timed out) must not
        delay the client the I/O thread would serve next."""
        self._closing.append(sock)
        if len(self._closing) > _CLOSE_BACKLOG:
            self._close_some(len(self._closing) - _CLOSE_BACKLOG)

    def _close_some(self, count: int) -> None:
        for _ in range(min(count, len(self._closing))):
            try:
                self._closing.popleft().close()
            except OSError:
                pass

    def _run(self) -> None:
        server = self.server
        next_sweep = 0.0
        try:
            while not self._stopped:
                now = time.monotonic()
                wait = max(0.0, next_sweep - now)
                if self._tasks or self._closing or server._lobby:
                    wait = 0.0
                ready = self.sel.poll(wait)
                if not ready and self._closing:
                    self._close_some(_CLOSE_BATCH)
                promoted = self._promoted
                while promoted:
                    promoted.popleft()._interest()
                self._hot_at = time.monotonic() + _HOT_EVERY
                self._round(ready)
                while self._tasks:
                    try:
                        self._tasks.popleft()()
                    except Exception:
                        log.exception("I/O thread: a task failed")
                if server._lobby:
                    try:
                        server._take_in()
                    except Exception:
                        log.exception("I/O thread: admitting newcomers failed")
                now = time.monotonic()
                if now >= next_sweep:
                    next_sweep = server._sweep(now)
        finally:
            self._close_some(len(self._closing))
            self.sel.close()
            self._wake_r.close()
            self._wake_w.close()



    def _round(self, ready: list[tuple[Any, int]]) -> None:
        """Serve what one poll found ready: the connections that have bound first (with the
        listener and the wake-up), then those that have not, the latter for at most
        _ROUND_FOR seconds (the sockets left over are ready still and come again at the next
        poll, after the bound ones). A burst of connections that never bind (a slowloris
        flood) so holds up a bound client's call for a few milliseconds, not for the whole
        burst. Every _ACCEPT_EVERY seconds of a long round the listener is looked at too:
        newcomers are not kept waiting to its end either."""
        server = self.server
        later = []
        look_at = time.monotonic() + _ACCEPT_EVERY
        for handler, mask in ready:
            if type(handler) is Connection and not handler.bound:
                later.append((handler, mask))
            else:
                self._serve(handler, mask)
        if later:
            self.hand_off()
        until = time.monotonic() + _ROUND_FOR
        for i, (handler, mask) in enumerate(later):
            if i & 15 == 15:
                now = time.monotonic()
                if now >= until:
                    return
                self.hot(now)
                if now >= look_at and server._listening:
                    try:
                        server._on_acceptable()
                    except Exception:
                        log.exception("I/O thread: accepting failed")
                    look_at = time.monotonic() + _ACCEPT_EVERY
            self._serve(handler, mask)

    def _serve(self, handler: Any, mask: int) -> None:
        server = self.server
        try:
            if handler is None:
                self._wake_r.recv(4096)
            elif handler is server:
                server._on_acceptable()
            else:
                watched = handler._events  # (what it was registered for)
                if mask & _WRITE and watched & _WRITE:
                    handler._on_writable()
                if mask & _READ and watched & _READ and handler._reading:
                    handler._on_readable()
        except (BlockingIOError, InterruptedError):
            pass
        except Exception:  # one connection's bug must not stop the others
            log.exception("I/O thread: %r failed", handler)
            if isinstance(handler, Connection):
                handler._end_input("unexpected error")


class _MemoryGiver:
    """After a burst of connections has ended, what they allocated goes back to the system.
    Freed, that memory stays mapped in glibc's malloc arenas (one per thread that allocated,
    up to eight per core) and counted in the server's RSS until malloc_trim releases the free
    pages of every arena. The server has it run (on the departures thread) when no newcomer
    has come for a moment and connections have closed since the last time: once they have
    stopped closing for ``settle`` seconds, and during a long burst of closes every ``every``
    seconds. Elsewhere than on glibc it does nothing. (``mqconform serve`` runs with glibc's
    malloc for Python's objects too: mqconform/cli.py.)

    When few connections are left (``collect``), a full collection runs first. It finds little
    garbage (the server's objects are freed by their reference counts), but it empties
    Python's free lists of tuples, lists and dicts: thousands of those, kept from the burst,
    each hold a page of the heap that malloc_trim cannot give back (measured: a receives
    flood left 10 MiB so held). With few connections alive it examines few objects (those
    that survived the last one are frozen: server/main.py, QuietCollector); with a thousand
    alive it would hold the interpreter for as long as every client would wait."""

    def __init__(self, every: float = 2.0, settle: float = 0.25):
        self.every = every
        self.settle = settle
        self._closed = 0
        self._last = -float("inf")  # (not 0: the monotonic clock may start near it)
        self._last_close = -float("inf")
        self._trim = _malloc_trim()

    def closed(self) -> None:
        self._closed += 1
        self._last_close = time.monotonic()

    def due(self, now: float) -> bool:
        """Would ``quiet()`` give memory back now: a connection closed since the last time,
        and either none has closed for ``settle`` seconds (a burst is over) or ``every``
        seconds have passed (a long burst)?"""
        return self._trim is not None and bool(self._closed) and (
            now - self._last_close >= self.settle or now - self._last >= self.every)

    def quiet(self, collect: bool = False) -> None:
        now = time.monotonic()
        if not self.due(now):
            return
        self._closed = 0
        self._last = now
        if self._trim is None:
            return
        if collect:
            gc.collect()
        try:
            self._trim(0)  # ctypes releases the GIL for the call: other threads go on
        except OSError:  # pragma: no cover - the symbol resolved but failed
            self._trim = None


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None (another C library, or none found)."""
    try:
        import ctypes
        import ctypes.util

        name = ctypes.util.find_library("c")
        if name is None:
            return None
        libc = ctypes.CDLL(name)
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


class RpcServer:
    """Serves ``handler`` over ncacn_ip_tcp on ``host``:``port`` (0: any free port).

    ``max_frag`` is the largest fragment the server sends or accepts (negotiated down to what
    the client proposes, never below C706's 1432 unless max_frag itself is smaller); the
    requests being reassembled on a connection hold at most ``max_request`` octets together,
    on all connections at most ``reassembly_budget``; at most ``max_connections`` connections
    (a newcomer evicts the cheapest to drop), each with at most ``max_calls`` calls in flight;
    a connection silent for ``unbound_timeout`` seconds before its bind, or ``idle_timeout``
    after it with nothing in flight, is closed; a PDU once begun must arrive within
    ``pdu_timeout`` seconds and at ``min_rate`` octets a second (0: no rate); a send that does
    not finish within ``io_timeout`` seconds drops the connection. The module doc says how.
    """

    def __init__(self, handler: Handler, host: str = "127.0.0.1", port: int = 0,
                 max_frag: int = 5840, *, max_request: int = 8 << 20,
                 max_connections: int = 1024, max_calls: int = 64,
                 reassembly_budget: int = 64 << 20, idle_timeout: float = 900.0,
                 unbound_timeout: float = 15.0, pdu_timeout: float = 10.0,
                 min_rate: float = 1024.0, io_timeout: float = 30.0,
                 prefer_ndr64: bool = True, security: Any = None, workers: int = 4):
        if not 64 <= max_frag <= d.MAX_FRAG_LENGTH:
            raise ValueError(f"max_frag {max_frag} is outside 64..{d.MAX_FRAG_LENGTH}")
        for name, value in (("max_connections", max_connections), ("max_calls", max_calls),
                            ("max_request", max_request),
                            ("reassembly_budget", reassembly_budget), ("workers", workers)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} {value!r} is not a positive whole number")
        for name, value in (("idle_timeout", idle_timeout),
                            ("unbound_timeout", unbound_timeout),
                            ("pdu_timeout", pdu_timeout), ("io_timeout", io_timeout)):
            if not value > 0:
                raise ValueError(f"{name} {value!r} is not a positive number of seconds")
        if not min_rate >= 0:
            raise ValueError(f"min_rate {min_rate!r} is not a number of octets a second >= 0")
        self.handler = handler
        self.host = host
        self.port = port
        self.max_frag = max_frag
        self.max_request = max_request
        self.max_connections = max_connections
        self.max_calls = max_calls
        self.reassembly_budget = reassembly_budget
        self.idle_timeout = idle_timeout
        self.unbound_timeout = unbound_timeout
        self.pdu_timeout = pdu_timeout
        self.min_rate = min_rate
        self.io_timeout = io_timeout
        self.prefer_ndr64 = prefer_ndr64
        #: server/security.py Security: the accounts NTLM checks, whether authentication is
        #: required and at what level (None: no authentication is offered)
        self.security = security
        self.stopping = False
        self.workers = workers
        self._listener: socket.socket | None = None
        self._io: _IO | None = None
        self._threads: list[threading.Thread] = []
        #: connections with PDUs for a worker (each at most once: Connection._schedule)
        self._runq: queue.SimpleQueue = queue.SimpleQueue()
        #: what the departures thread runs: connections' teardowns, giving memory back
        self._departures: queue.SimpleQueue = queue.SimpleQueue()
        self._conns: dict[int, Connection] = {}
        #: connections out of the table (evicted, or ended) still tearing down (outside the
        #: limit; awaited by stop())
        self._leaving: dict[int, Connection] = {}
        #: gives the heap back to the system once a burst of connections has closed
        self._memory = _MemoryGiver()
        self._last_accept = 0.0
        #: accept() failed (out of descriptors): the listener is watched again from then on
        self._accept_paused_until: float | None = None
        #: newcomers accepted and not yet given a connection (_take_in)
        self._lobby: list[tuple[socket.socket, Any, float]] = []  # (socket, peer, accepted)
        self._lock = threading.Lock()
        self._budget_lock = threading.Lock()
        #: stub octets under reassembly on all connections (at most reassembly_budget)
        self.reassembly_octets = 0
        #: connections evicted to make room, and newcomers refused (module doc: Limits)
        self.evictions = 0
        self.refusals = 0
        self._refuser: _Refuser | None = None
        self._ids = itertools.count(1)
        #: the eviction order worked out for the last newcomer, reused for a moment
        self._victims: collections.deque = collections.deque()
        self._victims_until = 0.0
        self._ranked_upto = 0
        #: the association groups its clients bind into (server-issued ids)
        self.groups = AssociationGroups()
        self._address: tuple[str, int] | None = None

    @property
    def address(self) -> tuple[str, int]:
        if self._address is None:
            raise RuntimeError("the server is not started")
        return self._address

    @property
    def connections(self) -> list[Connection]:
        with self._lock:
            return list(self._conns.values())

    def start(self) -> RpcServer:
        """Listen (MS-MQRR 3.1.3: the server listens on the protocol sequence of 2.1)."""
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        port = self.port
        while True:
            try:
                sock.bind((self.host, port))
                break
            except OSError as exc:
                # MS-MQRR/3.1.4.1/R2: a port in use -> the next one 11 higher, until one is
                # free (a free port chosen by the system, port 0, is never in use)
                if exc.errno != errno.EADDRINUSE or not port or port + 11 > 0xFFFF:
                    sock.close()
                    raise
                port += 11
        # a burst of connections waits in the kernel (up to net.core.somaxconn), not in SYN
        # retries of a second or more
        sock.listen(4096)
        sock.setblocking(False)
        self._listener = sock
        self._address = sock.getsockname()[:2]
        self.stopping = False
        self._io = _IO(self)
        self._io.sel.register(sock, _READ, self)
        port = self._address[1]
        self._threads = [self._io.thread, threading.Thread(
            target=self._departures_loop, daemon=True, name=f"rpc-departures-{port}")]
        self._threads += [threading.Thread(target=self._work, daemon=True,
                                           name=f"rpc-worker-{port}-{i}")
                          for i in range(self.workers)]
        for thread in self._threads:
            thread.start()
        return self

    def __enter__(self) -> RpcServer:
        return self if self._listener is not None else self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def _listening(self) -> bool:
        """(I/O thread) Is the listener watched (not stopped, not paused)?"""
        return (self._listener is not None and self._accept_paused_until is None
                and not self.stopping)

    def _on_acceptable(self) -> None:
        """(I/O thread) Take the newcomers the kernel holds into the lobby, for at most
        _ACCEPT_FOR seconds, then admit them (``_take_in``)."""
        assert self._listener is not None
        until = time.monotonic() + _ACCEPT_FOR
        lobby = self._lobby
        io = self._io
        while len(lobby) < _LOBBY_PER_SLOT * self.max_connections:
            now = time.monotonic()
            if now >= until:
                break
            io.hot(now)
            try:
                sock, peer = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:  # out of descriptors, say: the newcomers wait a moment
                log.warning("accept failed: %s", exc)
                self._io.sel.unregister(self._listener)
                self._accept_paused_until = time.monotonic() + 0.05
                break
            lobby.append((sock, peer, time.monotonic()))
        self._last_accept = time.monotonic()
        self._take_in()

    def _take_in(self) -> None:
        """(I/O thread) Give the newcomers in the lobby their connections, the newest first,
        for at most _TAKE_IN_FOR seconds (the sockets already served get their turn, and
        the I/O thread comes back to the rest at once). The kernel hands newcomers over in
        the order they came: when a burst of them (a flood) is ahead of a client, the
        client waits while they are accepted, which costs little, but not also while each
        of them is set up and evicted again; it is set up first."""
        until = time.monotonic() + _TAKE_IN_FOR
        lobby = self._lobby
        io = self._io
        while lobby:
            now = time.monotonic()
            if now >= until:
                break
            io.hot(now)
            sock, peer, accepted = lobby.pop()
            with self._lock:
                full = len(self._conns) >= self.max_connections
            if full and not self._make_room():
                log.warning("connection limit (%d) reached with a call in flight on each; "
                            "refusing one", self.max_connections)
                self.refusals += 1
                if self._refuser is None:
                    self._refuser = _Refuser(self)
                self._refuser.refuse(sock)
                continue
            try:
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                conn = Connection(self, sock, next(self._ids), peer, accepted)
            except OSError:
                sock.close()
                continue
            with self._lock:
                self._conns[conn.id] = conn
            conn._interest()
            conn._on_readable()  # what it sent already (its bind), without waiting for a poll
            io.hand_off()

    def _sweep(self, now: float) -> float:
        """(I/O thread) End the connections whose time has run out; when to look again."""
        paused = self._accept_paused_until
        if paused is not None and now >= paused and self._listener is not None:
            self._accept_paused_until = None
            self._io.sel.register(self._listener, _READ, self)
        with self._lock:
            conns = list(self._conns.values()) + list(self._leaving.values())
        soonest = now + _SWEEP_MAX
        for conn in conns:
            until = conn._check_time(now)
            if until is not None and until < soonest:
                soonest = until
        if self._victims and now >= self._victims_until:
            self._victims.clear()  # an old eviction order keeps closed connections alive
        if now - self._last_accept > _QUIET and self._memory.due(now):
            few = len(self._conns) <= _COLLECT_AMONG
            self._departures.put(lambda: self._memory.quiet(few))  # not here: it takes time
        return max(soonest, now + _SWEEP_MIN)

    def _work(self) -> None:
        """A worker: the connections with PDUs waiting, in turn (Connection._drain)."""
        _run_each(self._runq, Connection._drain, "worker")

    def _departures_loop(self) -> None:
        """What follows a connection's end (its teardown), and giving memory back."""
        _run_each(self._departures, lambda work: work(), "departures")

    def _departing(self, conn: Connection) -> None:
        """(I/O thread) Out of the table; its teardown to the departures thread."""
        with self._lock:
            if self._conns.pop(conn.id, None) is not None or conn.id in self._leaving:
                self._leaving[conn.id] = conn
        self._departures.put(conn._teardown)

    def _forget(self, conn: Connection) -> None:
        with self._lock:
            self._conns.pop(conn.id, None)
            self._leaving.pop(conn.id, None)
        self._memory.closed()

    def _charge(self, octets: int) -> bool:
        """Count ``octets`` more (or fewer) reassembly octets; False, counting nothing, when
        growth would pass the budget."""
        with self._budget_lock:
            if octets > 0 and self.reassembly_octets + octets > self.reassembly_budget:
                return False
            self.reassembly_octets += octets
            return True

    def _holds_handles(self, conn: Connection) -> bool:
        """Would closing ``conn`` run down context handles (the handler's optional
        ``holds_handles``)?"""
        holds = getattr(self.handler, "holds_handles", None)
        if holds is None:
            return False
        try:
            return bool(holds(conn))
        except Exception:
            log.exception("%r: handler.holds_handles failed", conn)
            return True

    def _cost(self, conn: Connection, now: float) -> tuple[int, float, int] | None:
        """What dropping ``conn`` costs, cheapest first (module doc: Limits): never bound,
        stalled inside a PDU or between a request's fragments, bound and idle, bound and idle
        with its group's context handles to run down; then oldest activity first. None: it
        has a call in flight (or is gone) and may not be evicted."""
        if conn.closed or conn.in_flight:
            return None
        started = conn.pdu_started
        if not conn.bound:
            rank = 0
        elif (started is not None and now - started > 1.0) or (
                conn.partial_octets and now - conn.last_activity > 1.0):
            rank = 1
        else:
            rank = 3 if self._holds_handles(conn) else 2
        return rank, conn.last_activity, conn.id

    def _victim(self) -> Connection | None:
        """The connection that costs least to drop, or None when each has a call in flight.
        The order worked out for one newcomer serves the next ones for a moment (a flood of
        newcomers would otherwise rank the whole table for each): its head is weighed
        against the connections accepted since; one in it that has gone, or has a call in
        flight, is passed over; one whose closing would run down context handles is taken
        only from an order worked out afresh."""
        now = time.monotonic()
        fresh = now >= self._victims_until
        while True:
            if fresh:
                with self._lock:
                    conns = list(self._conns.values())
                    self._ranked_upto = max(self._conns, default=0)
                costs = [(cost, conn) for conn in conns
                         if (cost := self._cost(conn, now)) is not None]
                costs.sort(key=lambda e: e[0])
                self._victims = collections.deque(costs)
                self._victims_until = now + _RANK_FOR
            head = None
            while self._victims:
                cost, conn = self._victims[0]
                if conn.id in self._conns and not conn.closed and not conn.in_flight:
                    head = self._victims[0]
                    break
                self._victims.popleft()
            if head is not None and head[0][0] == 3 and not fresh:
                fresh = True  # the last resort: only on an order worked out now
                continue
            if head is not None and head[0][0] == 0:
                # never bound: a connection accepted since is no older, so none is cheaper
                self._victims.popleft()
                return head[1]
            newer = None
            with self._lock:
                recent = []
                for conn_id in reversed(self._conns):
                    if conn_id <= self._ranked_upto:
                        break
                    recent.append(self._conns[conn_id])
            for conn in recent:
                cost = self._cost(conn, now)
                if cost is not None and cost[0] < 3 and (newer is None or cost < newer[0]):
                    newer = (cost, conn)
            if newer is not None and (head is None or newer[0] < head[0]):
                return newer[1]
            if head is not None:
                self._victims.popleft()
                return head[1]
            if fresh:
                return None
            fresh = True  # the order is spent: work it out afresh

    def _make_room(self) -> bool:
        """Evict one connection for a newcomer; False if none may go."""
        victim = self._victim()
        if victim is None:
            return False
        with self._lock:
            if self._conns.pop(victim.id, None) is None:
                return True  # it went away meanwhile: room all the same
            self._leaving[victim.id] = victim
            self.evictions += 1
        victim.evicted = True
        log.info("%r evicted for a new connection (%s)", victim,
                 "bound" if victim.bound else "never bound")
        victim._end_input("closed by the server")  # (this is the I/O thread: _on_acceptable)
        return True

    def stop(self, timeout: float = 5.0) -> None:
        """Close the listener and every connection; each connection's connection_lost runs
        before this returns (unless a handler call hangs), then the threads end."""
        if self._io is None:
            return
        self.stopping = True
        io = self._io
        listener = self._listener

        def close_all() -> None:
            if listener is not None:
                if self._accept_paused_until is None:
                    try:
                        io.sel.unregister(listener)
                    except (KeyError, ValueError):
                        pass
                listener.close()
            for sock, _, _ in self._lobby:
                sock.close()
            self._lobby.clear()
            for conn in self.connections:
                conn._end_input("server stopping")

        io.call_soon(close_all)
        deadline = time.monotonic() + timeout
        if self._refuser is not None:
            self._refuser.stop()
            self._refuser = None
        while time.monotonic() < deadline:
            with self._lock:
                if not self._conns and not self._leaving:
                    break
            time.sleep(0.01)
        with self._lock:
            left = list(self._conns.values()) + list(self._leaving.values())
        for conn in left:
            log.warning("%r did not finish within %.1fs (a handler call hangs?)", conn, timeout)
        io.stop()
        for _ in range(self.workers):
            self._runq.put(None)
        self._departures.put(None)
        for thread in self._threads:
            thread.join(max(0.1, deadline - time.monotonic()))
        self._threads = []
        self._io = None
        self._listener = None


def _run_each(line: queue.SimpleQueue, run: Callable[[Any], None], name: str) -> None:
    """Run ``run`` on each item of ``line`` until None; a failure is logged, not raised."""
    while True:
        item = line.get()
        if item is None:
            return
        try:
            run(item)
        except Exception:
            log.exception("%s: %r failed", name, item)
        item = None  # (a departed connection is not kept alive while the thread waits)


class _Refuser:
    """Refuses connections politely when none may be evicted (module doc: Limits): one thread
    reads each newcomer's first PDU and, if a bind, answers bind_nak local_limit_exceeded
    (C706 12.6.3.1; MS-RPCE 2.2.2.5); then the connection is closed. At most ``MAX_PENDING``
    wait at once (the others are closed at once), each at most ``TIMEOUT`` seconds."""

    MAX_PENDING = 64
    TIMEOUT = 2.0

    def __init__(self, server: RpcServer):
        self._server = server
        self._sel = selectors.DefaultSelector()
        self._lock = threading.Lock()
        self._pending: dict[socket.socket, list] = {}  # sock -> [deadline, buffer, answered]
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._sel.register(self._wake_r, selectors.EVENT_READ)
        self._stopping = False
        self._thread = threading.Thread(target=self._run, daemon=True, name="rpc-refuse")
        self._thread.start()

    def refuse(self, sock: socket.socket) -> None:
        with self._lock:
            if self._stopping or len(self._pending) >= self.MAX_PENDING:
                sock.close()
                return
            sock.setblocking(False)
            self._pending[sock] = [time.monotonic() + self.TIMEOUT, bytearray(), False]
            self._sel.register(sock, selectors.EVENT_READ)
        self._wake_w.send(b"\0")

    def stop(self) -> None:
        with self._lock:
            self._stopping = True
        self._wake_w.send(b"\0")
        self._thread.join(5)

    def _drop(self, sock: socket.socket) -> None:
        with self._lock:
            if self._pending.pop(sock, None) is None:
                return
            self._sel.unregister(sock)
        sock.close()

    def _run(self) -> None:
        try:
            while True:
                with self._lock:
                    if self._stopping:
                        break
                for key, _ in self._sel.select(0.25):
                    if key.fileobj is self._wake_r:
                        try:
                            self._wake_r.recv(4096)
                        except OSError:
                            pass
                        continue
                    self._read(key.fileobj)
                now = time.monotonic()
                with self._lock:
                    late = [s for s, p in self._pending.items() if p[0] <= now]
                for sock in late:
                    self._drop(sock)
        finally:
            with self._lock:
                socks = list(self._pending)
            for sock in socks:
                self._drop(sock)
            self._sel.close()
            self._wake_r.close()
            self._wake_w.close()

    def _read(self, sock: socket.socket) -> None:
        with self._lock:
            state = self._pending.get(sock)
        if state is None:
            return
        try:
            chunk = sock.recv(d.MUST_RECV_FRAG_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._drop(sock)
            return
        if state[2]:  # answered: what follows is read and dropped until the client closes
            return
        buf = state[1]
        buf += chunk
        if len(buf) < d.HEADER_SIZE:
            return
        try:
            h = d.decode_header(bytes(buf[:d.HEADER_SIZE]))
        except d.PduError:
            self._drop(sock)
            return
        if h.ptype != d.PType.BIND or h.frag_length > d.MUST_RECV_FRAG_SIZE:
            self._drop(sock)
            return
        if len(buf) < h.frag_length:
            return
        nak = d.encode_pdu(d.BindNak(d.RejectReason.LOCAL_LIMIT_EXCEEDED), h.call_id)
        try:
            sock.send(nak)
            sock.shutdown(socket.SHUT_WR)  # then wait for the client's close (no reset)
        except OSError:
            self._drop(sock)
            return
        state[2] = True
