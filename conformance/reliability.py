"""MSMQ's promise under dropped connections and concurrent consumers: a message is neither lost
nor delivered twice (MS-MQRR 3.1.4.7 and 3.1.4.9: R_StartReceive locks a message and
R_EndReceive ACK deletes it, NACK makes it available again; 3.1.6.2: a connection that goes
away runs the rundown of its context handles, so nothing stays locked).

    report = disconnects(address, QUEUE, EMPTY, connections=1000, seed=1)
    history = consume(address, QUEUE, consumers=16, seed=1)
    check(expected_bodies, history.acked, available(address, QUEUE))

Both drive any RemoteRead endpoint through ``Session``: one association on a socket with the
project's codecs (wire/dcerpc.py, wire/ndr.py), calls pipelined by call_id, so that a receive
can wait while a cancel for it goes out on the same connection, and a connection can be cut
at any point (FIN or RST).

- ``disconnects``: each connection opens the queue and is cut at a random point: with a
  blocking receive pending (on the empty queue), between R_StartReceive and R_EndReceive,
  with cursors open and messages peeked, half-way through sending a request, right after
  R_EndReceive ACK (the one case that consumes a message), or after R_CloseQueue. Returns
  the bodies acknowledged (consumed) and the count of each drop point.
- ``consume``: consumers on connections of their own receive from one queue until it stays
  empty, each received message ACKed or NACKed at random, some receives cancelled with
  R_CancelReceive while they wait; the history of every delivery and its ending.
- ``available``: the bodies a fresh connection can peek (cursor, PEEK_CURRENT then
  PEEK_NEXT): a message left Locked is not among them.
- ``check``: lost (expected, not acknowledged, not available), duplicated (acknowledged
  twice, or both acknowledged and available), unknown.
"""

from __future__ import annotations

import random
import socket
import struct
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from mqconform.conformance import sources
from mqconform.model import calls as c
from mqconform.model.formats import parse_format_name, to_queue_format
from mqconform.model.packet import decode_packet
from mqconform.model.status import MQ_ERROR_IO_TIMEOUT, MQ_ERROR_OPERATION_CANCELLED
from mqconform.wire import dcerpc as d
from mqconform.wire import ndr


class SessionError(Exception):
    """The endpoint broke the association or answered what no call can be answered with."""


class Session:
    """One RemoteRead association (NDR) on a TCP connection; calls may be pipelined."""

    def __init__(self, address: tuple[str, int], timeout: float = 30.0):
        self.sock = socket.create_connection(address, timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._call_id = 1
        self._answers: dict[int, bytes | int] = {}
        self._partial: dict[int, list[bytes]] = {}
        bind = d.Bind(5840, 5840, 0, (d.ContextElement(0, d.SyntaxId(c.REMOTEREAD_UUID, 1, 0),
                                                       (d.NDR,)),))
        self.sock.sendall(d.encode_pdu(bind, self._next()))
        ack = d.decode_pdu(self._read_pdu())
        if not isinstance(ack.body, d.BindAck) or ack.body.results[0].result != 0:
            raise SessionError(f"bind refused: {ack.body}")

    def _next(self) -> int:
        self._call_id += 1
        return self._call_id - 1

    def request(self, call: c.Call) -> bytes:
        """The request PDU of ``call`` (call_id taken now), to send whole or in part."""
        stub = ndr.encode_request(call, False)
        return d.encode_pdu(d.Request(0, call.opnum, stub, len(stub)), self._next())

    def send(self, call: c.Call) -> int:
        pdu = self.request(call)
        self.sock.sendall(pdu)
        return int.from_bytes(pdu[12:16], "little")

    def result(self, call_id: int, call: c.Call) -> c.Result:
        while call_id not in self._answers:
            raw = self._read_pdu()
            cid = int.from_bytes(raw[12:16], "little")
            if raw[2] == d.PType.FAULT:
                self._answers[cid] = int.from_bytes(raw[24:28], "little")
            elif raw[2] == d.PType.RESPONSE:
                self._partial.setdefault(cid, []).append(raw[24:])
                if raw[3] & d.PFC_LAST_FRAG:
                    self._answers[cid] = b"".join(self._partial.pop(cid))
            else:
                raise SessionError(f"PDU type {raw[2]} where a response was expected")
        answer = self._answers.pop(call_id)
        if isinstance(answer, int):
            return c.RESULTS[type(call)](status=answer, raised=True)
        return ndr.decode_response(call, answer, False)

    def call(self, call: c.Call) -> c.Result:
        return self.result(self.send(call), call)

    def drop(self, reset: bool = False) -> None:
        """Cut the connection: an RST if ``reset``, else a FIN."""
        if reset:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()

    def _read_pdu(self) -> bytes:
        raw = read_pdu(self.sock)
        if raw is None:
            raise SessionError("the endpoint closed the connection")
        return raw


def read_pdu(sock: socket.socket) -> bytes | None:
    """One PDU framed by its frag_length (C706 12.6.3.1), or None if the connection ends
    first."""
    head = _read_exact(sock, 16)
    if head is None:
        return None
    rest = _read_exact(sock, max(0, int.from_bytes(head[8:10], "little") - 16))
    return None if rest is None else head + rest


def _read_exact(sock: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def queue_format(name: str):
    return to_queue_format(parse_format_name(name))


def open_queue(s: Session, name: str, access: int = c.RECEIVE_ACCESS) -> bytes:
    out = s.call(c.R_OpenQueue(pQueueFormat=queue_format(name), dwAccess=access,
                               pClientId=sources.uuid4()))
    if out.raised or not out.pphContext:
        raise SessionError(f"R_OpenQueue {name} raised {out.status:#010x}")
    return bytes(out.pphContext)


def receive(handle: bytes, request_id: int, timeout: int = 0,
            action: int = c.MQ_ACTION_RECEIVE, cursor: int = 0) -> c.R_StartReceive:
    return c.R_StartReceive(phContext=handle, ulAction=action, ulTimeout=timeout,
                            dwRequestId=request_id, hCursor=cursor, dwMaxBodySize=1 << 16,
                            dwMaxCompoundMessageSize=1 << 16)


def body_of(result: c.Result) -> bytes:
    packet = result.ppPacketSections[0].pSectionBuffer or b""
    offset, size = decode_packet(packet).message_body
    return bytes(packet[offset:offset + size])


# --------------------------------------------------------------------------- disconnects

DROP_POINTS = ("blocking receive pending", "between R_StartReceive and R_EndReceive",
               "cursors open", "half a request sent", "after R_EndReceive ACK",
               "after R_CloseQueue")


@dataclass
class DropReport:
    connections: int = 0
    points: Counter[str] = field(default_factory=Counter)
    acked: list[bytes] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def disconnects(address: tuple[str, int], queue: str, empty: str, connections: int,
                seed: int = 0, workers: int = 8) -> DropReport:
    """Connections cut at random points (module doc)."""
    report = DropReport()
    lock = threading.Lock()

    def one(i: int) -> None:
        rng = random.Random(f"{seed}/{i}")
        point = rng.choice(DROP_POINTS)
        acked: bytes | None = None
        try:
            s = Session(address)
            try:
                handle = open_queue(s, empty if point == DROP_POINTS[0] else queue)
                if point == DROP_POINTS[0]:
                    s.send(receive(handle, 1, timeout=c.INFINITE_TIMEOUT))
                elif point == DROP_POINTS[1]:
                    got = s.call(receive(handle, 1))
                    if got.raised or got.status not in (0, MQ_ERROR_IO_TIMEOUT):
                        raise SessionError(f"R_StartReceive {got.status:#010x}")
                elif point == DROP_POINTS[2]:
                    for _ in range(rng.randint(1, 3)):
                        cur = s.call(c.R_CreateCursor(phContext=handle))
                        if cur.raised or cur.status:
                            raise SessionError(f"R_CreateCursor {cur.status:#010x}")
                        for k in range(rng.randint(0, 3)):
                            s.call(receive(handle, 0, action=c.MQ_ACTION_PEEK_CURRENT if k == 0
                                           else c.MQ_ACTION_PEEK_NEXT, cursor=cur.phCursor))
                elif point == DROP_POINTS[3]:
                    pdu = s.request(receive(handle, 1))
                    s.sock.sendall(pdu[:rng.randrange(1, len(pdu))])
                elif point == DROP_POINTS[4]:
                    got = s.call(receive(handle, 1))
                    if got.status == 0 and not got.raised:
                        end = s.call(c.R_EndReceive(phContext=handle, dwAck=c.RR_ACK,
                                                    dwRequestId=1))
                        if end.raised or end.status:
                            raise SessionError(f"R_EndReceive ACK {end.status:#010x}")
                        acked = body_of(got)
                else:
                    s.call(c.R_CloseQueue(pphContext=handle))
            finally:
                s.drop(reset=rng.random() < 0.5)
        except (OSError, SessionError) as exc:
            with lock:
                report.errors.append(f"connection {i} ({point}): {exc}")
        with lock:
            report.connections += 1
            report.points[point] += 1
            if acked is not None:
                report.acked.append(acked)

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, range(connections)))
    return report


# --------------------------------------------------------------------------- consumers

@dataclass
class History:
    deliveries: int = 0
    acked: list[bytes] = field(default_factory=list)
    nacked: list[bytes] = field(default_factory=list)
    cancelled: int = 0
    errors: list[str] = field(default_factory=list)


def consume(address: tuple[str, int], queue: str, consumers: int = 16, seed: int = 0,
            ack_rate: float = 0.8, cancel_rate: float = 0.05, idle_rounds: int = 3
            ) -> History:
    """Consumers on one queue until it stays empty (module doc)."""
    history = History()
    lock = threading.Lock()

    def consumer(k: int) -> None:
        rng = random.Random(f"{seed}/{k}")
        s = Session(address)
        try:
            handle = open_queue(s, queue)
            # request ids unique across the consumers, not only per handle: MS-MQRR 3.1.4.8
            # cancels by iQueue and iTag = dwRequestId alone (MS-MQDMPR 3.1.7.1.17), so equal
            # ids on two handles of one queue would cancel each other's waits (MS-MQRR 3.2.4.x:
            # "uniquely identifies this call from all other pending calls to this protocol")
            request, empty = k << 20, 0
            while empty < idle_rounds:
                request += 1
                if empty or rng.random() < cancel_rate:
                    # a receive that waits, cancelled on the same connection while it waits
                    # (always once the queue looked empty: then it surely waits)
                    call = receive(handle, request, timeout=60_000)
                    waiting = s.send(call)
                    cancel = c.R_CancelReceive(phContext=handle, dwRequestId=request)
                    s.result(s.send(cancel), cancel)
                    got = s.result(waiting, call)
                    if got.status == MQ_ERROR_OPERATION_CANCELLED:
                        with lock:
                            history.cancelled += 1
                        empty += 1 if empty else 0
                        continue
                else:
                    got = s.call(receive(handle, request, timeout=rng.choice((0, 20))))
                if got.status == MQ_ERROR_IO_TIMEOUT:
                    empty += 1
                    continue
                if got.raised or got.status:
                    raise SessionError(f"R_StartReceive {got.status:#010x}")
                empty = 0
                body = body_of(got)
                ack = rng.random() < ack_rate
                end = s.call(c.R_EndReceive(phContext=handle, dwRequestId=request,
                                            dwAck=c.RR_ACK if ack else c.RR_NACK))
                if end.raised or end.status:
                    raise SessionError(f"R_EndReceive {end.status:#010x}")
                with lock:
                    history.deliveries += 1
                    (history.acked if ack else history.nacked).append(body)
            s.call(c.R_CloseQueue(pphContext=handle))
        except (OSError, SessionError) as exc:
            with lock:
                history.errors.append(f"consumer {k}: {exc}")
        finally:
            s.drop()

    with ThreadPoolExecutor(consumers) as pool:
        list(pool.map(consumer, range(consumers)))
    return history


# --------------------------------------------------------------------------- the checks

def available(address: tuple[str, int], queue: str) -> list[bytes]:
    """The bodies of the messages a fresh connection can peek, in queue order."""
    s = Session(address)
    try:
        handle = open_queue(s, queue, c.PEEK_ACCESS)
        cur = s.call(c.R_CreateCursor(phContext=handle))
        bodies = []
        action = c.MQ_ACTION_PEEK_CURRENT
        while True:
            got = s.call(receive(handle, 0, action=action, cursor=cur.phCursor))
            if got.status == MQ_ERROR_IO_TIMEOUT:
                return bodies
            if got.raised or got.status:
                raise SessionError(f"peek {got.status:#010x}")
            bodies.append(body_of(got))
            action = c.MQ_ACTION_PEEK_NEXT
    finally:
        s.drop()


@dataclass
class Verdict:
    expected: int
    acked: int
    available: int
    lost: list[bytes]
    duplicated: list[bytes]
    unknown: list[bytes]

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.unknown)


def check(expected: list[bytes], acked: list[bytes], left: list[bytes]) -> Verdict:
    """Every expected message acknowledged exactly once or still available, never both."""
    seen = Counter(acked) + Counter(left)
    want = set(expected)
    return Verdict(len(expected), len(acked), len(left),
                   lost=sorted(b for b in want if seen[b] == 0),
                   duplicated=sorted(b for b, n in seen.items() if n > 1),
                   unknown=sorted(b for b in seen if b not in want))


# --------------------------------------------------------------------------- crash and restart

@dataclass
class Ledger:
    """What a client was told before the server died: acknowledged for sure (R_EndReceive ACK
    answered MQ_OK), perhaps (the ACK was sent, its answer never came), and messages the
    server accepted (the control API answered) with the LookupIdentifiers it gave them."""

    acked: list[bytes] = field(default_factory=list)
    acked_perhaps: list[bytes] = field(default_factory=list)
    sent: list[bytes] = field(default_factory=list)
    sent_perhaps: list[bytes] = field(default_factory=list)
    lookup_ids: list[int] = field(default_factory=list)
    deliveries: int = 0


def mixed_load(address: tuple[str, int], control: tuple[str, int], queue: str, path: str,
               stop: threading.Event, consumers: int = 4, seed: int = 0,
               prefix: str = "s", token: str | None = None) -> Ledger:
    """Consumers (random ACK and NACK) and a sender of recoverable messages (through the
    reference server's control API, at ``path``, with its ``token``) until ``stop`` is set or
    the server goes away; the ledger of what the server confirmed."""
    import http.client
    import json
    import urllib.error
    import urllib.parse
    import urllib.request

    ledger = Ledger()
    lock = threading.Lock()

    def consumer(k: int) -> None:
        rng = random.Random(f"{seed}/{k}")
        try:
            s = Session(address, timeout=10)
            handle = open_queue(s, queue)
        except (OSError, SessionError):
            return
        request = k << 20
        while not stop.is_set():
            request += 1
            try:
                got = s.call(receive(handle, request, timeout=50))
                if got.status == MQ_ERROR_IO_TIMEOUT:
                    continue
                if got.raised or got.status:
                    return
                body = body_of(got)
                ack = rng.random() < 0.7
                with lock:
                    ledger.deliveries += 1
                    if ack:
                        ledger.acked_perhaps.append(body)
                end = s.call(c.R_EndReceive(phContext=handle, dwRequestId=request,
                                            dwAck=c.RR_ACK if ack else c.RR_NACK))
                if ack and not end.raised and end.status == 0:
                    with lock:
                        ledger.acked_perhaps.remove(body)
                        ledger.acked.append(body)
            except (OSError, SessionError):
                return

    def sender() -> None:
        url = (f"http://{control[0]}:{control[1]}/queues/{urllib.parse.quote(path)}"
               f"/messages")
        n = 0
        while not stop.is_set():
            n += 1
            body = f"{prefix}{n:06d}".encode()
            with lock:
                ledger.sent_perhaps.append(body)
            try:
                request = urllib.request.Request(url, method="POST", data=json.dumps(
                    {"body": body.decode(), "delivery": "recoverable"}).encode(),
                    headers={"Authorization": f"Bearer {token}"} if token else {})
                with urllib.request.urlopen(request, timeout=10) as answer:
                    lookup_id = json.loads(answer.read())["lookup_id"]
            except (OSError, urllib.error.URLError, http.client.HTTPException, ValueError):
                return  # the server went away mid-answer: the message stays "perhaps"
            with lock:
                ledger.sent_perhaps.remove(body)
                ledger.sent.append(body)
                ledger.lookup_ids.append(lookup_id)

    threads = [threading.Thread(target=consumer, args=(k,), daemon=True)
               for k in range(consumers)] + [threading.Thread(target=sender, daemon=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return ledger


@dataclass
class Recovery:
    came_back: list[bytes]  # acknowledged for sure, available again
    lost: list[bytes]  # accepted and never acknowledged, not available
    duplicated: list[bytes]  # available twice

    @property
    def ok(self) -> bool:
        return not (self.came_back or self.lost or self.duplicated)


def check_recovery(recoverable: list[bytes], ledger: Ledger, left: list[bytes]) -> Recovery:
    """After a restart: no acknowledged message comes back; every recoverable message the
    server accepted and no client surely or perhaps acknowledged is there; none twice."""
    present = Counter(left)
    settled = set(ledger.acked) | set(ledger.acked_perhaps)
    must = (set(recoverable) | set(ledger.sent)) - settled
    return Recovery(came_back=sorted(set(ledger.acked) & set(present)),
                    lost=sorted(b for b in must if b not in present),
                    duplicated=sorted(b for b, n in present.items() if n > 1))


@dataclass
class Cycle:
    deliveries: int
    acked: int
    acked_perhaps: int
    sent: int
    available: int
    recovery: Recovery
    lookup_ids_increase: bool
    restart_seconds: float


def crash_cycles(server: Any, queue: str, path: str, recoverable: list[bytes], cycles: int,
                 load_seconds: float = 1.0, consumers: int = 4, seed: int = 0,
                 rng: random.Random | None = None) -> list[Cycle]:
    """``cycles`` times: mixed load, ``kill -9`` of ``server`` (a
    conformance.targets.ServeProcess with ``--store``) at a random moment, restart, and the
    recovery checked against everything the server confirmed since the first cycle; after
    each restart a new message must get a LookupIdentifier above every one given before."""
    import json
    import time
    import urllib.parse
    import urllib.request

    rng = rng or random.Random(seed)
    ledger = Ledger()
    out = []
    for cycle in range(cycles):
        stop = threading.Event()
        parts: list[Ledger] = []
        load = threading.Thread(target=lambda n=cycle, into=parts, until=stop: into.append(
            mixed_load(server.address, server.control_address, queue, path, until,
                       consumers, seed=seed * 1000 + n, prefix=f"c{n}-",
                       token=server.control_token)))
        load.start()
        time.sleep(load_seconds * rng.uniform(0.5, 1.5))
        server.kill()
        stop.set()
        load.join(60)
        [part] = parts
        for name in ("acked", "acked_perhaps", "sent", "sent_perhaps", "lookup_ids"):
            getattr(ledger, name).extend(getattr(part, name))
        began = time.perf_counter()
        server.restart()
        restart = time.perf_counter() - began
        left = available(server.address, queue)
        recovery = check_recovery(recoverable, ledger, left)
        body = f"after-{cycle}"
        url = f"{server.control_url}/queues/{urllib.parse.quote(path)}/messages"
        request = urllib.request.Request(url, method="POST", data=json.dumps(
            {"body": body, "delivery": "recoverable"}).encode(),
            headers={"Authorization": f"Bearer {server.control_token}"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            lookup_id = json.loads(answer.read())["lookup_id"]
        increase = lookup_id > max(ledger.lookup_ids, default=0)
        ledger.sent.append(body.encode())
        ledger.lookup_ids.append(lookup_id)
        out.append(Cycle(part.deliveries, len(part.acked), len(part.acked_perhaps),
                         len(part.sent), len(left), recovery, increase, restart))
    return out
