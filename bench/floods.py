"""Floods against ``mqconform serve``: does a well-behaved client still get served while the
server is flooded, and does the server give its memory back afterwards?

    python bench/floods.py [--only NAME] [--scale FACTOR] [--hold S] [--json FILE]

Each flood runs against a fresh ``mqconform serve`` (a process of its own, RLIMIT_NOFILE raised
to its hard limit, a queue ``private$\\flood`` holding messages and an empty ``private$\\empty``),
over raw sockets and the project's PDU and NDR codecs (wire/dcerpc.py, wire/ndr.py):

1. ``idle``: 3,000 TCP connections that send nothing, and 3,000 that bind and go silent;
2. ``slowloris``: 1,000 sockets each sending a PDU header whose frag_length (4,000) is under the
   server's limit, then one octet every ``--drip`` seconds; 1,000 more announcing 65,535,
   over it (C706 12.6.3.1: frag_length frames every PDU);
3. ``fragments``: on 60 connections, a request's first fragment, then fragments without
   PFC_LAST_FRAG (C706 12.6.3.1, 12.6.4.9) up to the per-connection reassembly cap (8 MiB,
   the server's default ``max_request``), held there;
4. ``opens``: 100,000 R_OpenQueue (MS-MQRR 3.1.4.2) over 10 connections, each its own
   association group, 32 calls in flight on each (or as many as ``--build-limit`` seconds
   allow: the figures say where it stopped); then every connection drops, so the server runs
   the rundown of every handle (MS-MQRR 3.1.6.2);
5. ``receives``: 10,000 blocking R_StartReceive (MS-MQRR 3.1.4.7, a one-hour timeout) on the
   empty queue, 50 per connection (under the server's 64 calls in flight per connection); then
   every connection drops (rundown).

While the idle and slowloris floods are held they go on opening a connection every 0.1 s, as
a flood that keeps the server's connection table full does.

Throughout, a canary (a process of its own, so that the flood's own work does not slow it)
peeks (R_StartReceive, MQ_ACTION_PEEK_CURRENT) every 0.2 s; once the flood is in place it
connects afresh (a new TCP connection, bind, R_OpenQueue; its earlier connection closed only
after that attempt, so the place that one held is not handed back to it), and it reconnects
whenever its connection is gone. One sample is one tick: the peek, or the reconnection and the
peek; the samples are counted by phase (the flood building, held, gone). A sample is ``ok``
(MQ_OK and a message),
``documented`` (an answer by which a server says it is busy: a bind_nak for temporary congestion
or a local limit, C706 12.6.3.1 p_reject_reason_t; a fault nca_s_server_too_busy or
nca_s_fault_remote_no_memory, C706 appendix E; RPC_S_SERVER_TOO_BUSY; MQ_ERROR_INSUFFICIENT_
RESOURCES, MS-MQMQ 2.4) or ``failed`` (anything else: a connection closed with no answer, a
timeout, a wrong answer). Both of the last two count as canary failures here.

Per flood: the flood's own counts (sockets the server kept, calls answered), canary p50/p99/max
latency over every sample, failures (count and the first), the server's VmRSS before the flood,
at its peak and after it (every flood connection closed: the server's sockets and threads
back to their count before, or 30 s),
its thread count at the peak, whether it survived (alive, and a fresh client opens and peeks).
Goals beside them: 0 canary failures, p99 <= 50 ms, max <= 1 s, RSS after within 10 % of
before, survived. Exit status 1 if a goal is missed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import resource
import select
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)  # bench/model.py is not the model package

from mqconform.model import calls as c  # noqa: E402
from mqconform.model.formats import parse_format_name, to_queue_format  # noqa: E402
from mqconform.model.status import MQ_ERROR_INSUFFICIENT_RESOURCES  # noqa: E402
from mqconform.wire import dcerpc as d  # noqa: E402
from mqconform.wire import ndr  # noqa: E402

FLOODS = ("idle", "slowloris", "fragments", "opens", "receives")
MESSAGES = 20
QUEUES = ("queue_manager:\n  computer_name: MQREF\nqueues:\n  - path: private$\\flood\n"
          "    messages:\n" + "".join(f"      - body: canary-{i:02d}\n" for i in range(MESSAGES))
          + "  - path: private$\\empty\n")
FLOOD_QUEUE = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\flood"))
EMPTY_QUEUE = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\empty"))

GOAL_P99_MS = 50.0
GOAL_MAX_MS = 1000.0
GOAL_RSS_GROWTH = 0.10
EVERY = 0.2  # seconds between canary samples
CANARY_TIMEOUT = 5.0
MAX_FRAG = 5840  # what our binds propose; the server's default max_frag (server/rpc.py)
REQUEST_CAP = 8 << 20  # the server's default max_request (server/rpc.py): octets per connection

RPC_S_SERVER_TOO_BUSY = 0x000006BB  # [MS-ERREF] 2.2: "The RPC server is too busy"
#: the answers by which a server says it is busy (module doc), by kind
BUSY_FAULTS = {d.NCA_S_SERVER_TOO_BUSY: "nca_s_server_too_busy",
               d.NCA_S_FAULT_REMOTE_NO_MEMORY: "nca_s_fault_remote_no_memory",
               RPC_S_SERVER_TOO_BUSY: "RPC_S_SERVER_TOO_BUSY",
               MQ_ERROR_INSUFFICIENT_RESOURCES: "MQ_ERROR_INSUFFICIENT_RESOURCES"}
BUSY_NAKS = {d.RejectReason.TEMPORARY_CONGESTION, d.RejectReason.LOCAL_LIMIT_EXCEEDED}


def raise_nofile() -> None:
    """RLIMIT_NOFILE up to its hard limit (this process, and the server through preexec_fn)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


# --- PDUs on raw sockets -------------------------------------------------------------------------


class Refusal(Exception):
    """A canary step that did not get its answer; ``documented``: the server said it is busy."""

    def __init__(self, text: str, documented: bool = False):
        super().__init__(text)
        self.documented = documented


def bind_pdu(call_id: int = 1) -> bytes:
    """A bind of RemoteRead 1.0 in NDR, a new association group (C706 12.6.4.3)."""
    ctx = d.ContextElement(0, d.SyntaxId(c.REMOTEREAD_UUID, 1, 0), (d.NDR,))
    return d.encode_pdu(d.Bind(MAX_FRAG, MAX_FRAG, 0, (ctx,)), call_id)


def request_pdu(call: c.Call, call_id: int) -> bytes:
    return d.encode_pdu(d.Request(0, call.opnum, ndr.encode_request(call, False)), call_id)


def header(ptype: int, frag_length: int, call_id: int = 1, flags: int = d.PFC_WHOLE) -> bytes:
    """A common header alone (C706 12.6.3.1)."""
    return struct.pack("<BBBB4sHHI", d.RPC_VERS, 0, ptype, flags, d.DREP_LE, frag_length, 0,
                       call_id)


def readable(sock: socket.socket, timeout: float | None) -> bool:
    """poll(2), not select(2): a flood's descriptors go far past FD_SETSIZE (1024)."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(None if timeout is None else max(0, int(timeout * 1000))))


class Framer:
    """PDUs out of what a socket delivers, framed by frag_length (C706 12.6.3.1)."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buf = bytearray()
        self.eof = False

    def _one(self) -> bytes | None:
        if len(self.buf) < d.HEADER_SIZE:
            return None
        length = int.from_bytes(self.buf[8:10], "little")
        if length < d.HEADER_SIZE or len(self.buf) < length:
            return None
        pdu = bytes(self.buf[:length])
        del self.buf[:length]
        return pdu

    def read(self, timeout: float | None) -> bytes | None:
        """The next PDU; None at EOF or when ``timeout`` passes (``eof`` tells which)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            pdu = self._one()
            if pdu is not None or self.eof:
                return pdu
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                return None
            if not readable(self.sock, wait):
                return None
            try:
                chunk = self.sock.recv(1 << 16)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                chunk = b""
            if not chunk:
                self.eof = True
            self.buf += chunk

    def ready(self) -> list[bytes]:
        """Every PDU that has arrived, without waiting."""
        out = []
        while (pdu := self.read(0)) is not None:
            out.append(pdu)
        return out


def connect(port: int, timeout: float) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def answer_of(raw: bytes | None, framer: Framer) -> d.Pdu:
    """The decoded answer, or Refusal: no answer, or a refusal (documented or not)."""
    if raw is None:
        raise Refusal("the server closed the connection without an answer" if framer.eof
                      else "no answer in time")
    pdu = d.decode_pdu(raw)
    if isinstance(pdu.body, d.BindNak):
        reason = pdu.body.reason
        name = d.RejectReason(reason).name if reason in set(d.RejectReason) else reason
        raise Refusal(f"bind_nak {name}", documented=reason in BUSY_NAKS)
    if isinstance(pdu.body, d.Fault):
        status = pdu.body.status
        raise Refusal(f"fault 0x{status:08X} {BUSY_FAULTS.get(status, '')}".rstrip(),
                      documented=status in BUSY_FAULTS)
    return pdu


def _answers_in(conns: list[tuple[socket.socket, Framer]], notes: dict[str, int]) -> int:
    """How many answers the server has sent on ``conns`` so far (read without waiting); each
    refusal among them counted in ``notes`` by its text."""
    answered = 0
    for _s, framer in conns:
        for raw in framer.ready():
            answered += 1
            try:
                answer_of(raw, framer)
            except Refusal as exc:
                notes[str(exc)] = notes.get(str(exc), 0) + 1
    return answered


class LeanClient:
    """One RemoteRead association: bind, open a queue, peek; every failure a Refusal."""

    def __init__(self, port: int, timeout: float = CANARY_TIMEOUT):
        self.timeout = timeout
        self.call_id = 1
        try:
            self.sock = connect(port, timeout)
        except OSError as exc:
            raise Refusal(f"connect: {exc}") from None
        self.framer = Framer(self.sock)
        try:
            self.sock.sendall(bind_pdu())
            ack = answer_of(self.framer.read(timeout), self.framer)
        except BaseException:
            self.close()
            raise
        if not isinstance(ack.body, d.BindAck) or ack.body.results[0].result != 0:
            self.close()
            raise Refusal(f"bind not accepted: {ack.body}")

    def call(self, call: c.Call) -> c.Result:
        self.call_id += 1
        try:
            self.sock.sendall(request_pdu(call, self.call_id))
        except OSError as exc:
            raise Refusal(f"send: {exc}") from None
        stub = b""
        while True:
            pdu = answer_of(self.framer.read(self.timeout), self.framer)
            if not isinstance(pdu.body, d.Response):
                raise Refusal(f"{type(pdu.body).__name__} where a response was expected")
            stub += pdu.body.stub
            if pdu.pfc_flags & d.PFC_LAST_FRAG:
                return ndr.decode_response(call, stub, False)

    def open(self, queue: object, access: int = c.PEEK_ACCESS) -> bytes:
        out = self.call(c.R_OpenQueue(pQueueFormat=queue, dwAccess=access,
                                      pClientId=uuid.uuid4()))
        return out.pphContext

    def peek(self, handle: bytes) -> None:
        out = self.call(c.R_StartReceive(phContext=handle, ulAction=c.MQ_ACTION_PEEK_CURRENT,
                                         dwMaxBodySize=1024, dwMaxCompoundMessageSize=4096))
        if out.status == MQ_ERROR_INSUFFICIENT_RESOURCES:
            raise Refusal("peek: MQ_ERROR_INSUFFICIENT_RESOURCES", documented=True)
        if out.status != 0 or not out.ppPacketSections:
            raise Refusal(f"peek: status 0x{out.status:08X}, "
                          f"{len(out.ppPacketSections)} sections")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


def canary_main(port: int, every: float) -> int:
    """The canary process: one line per sample on stdout (time, ms, verdict, kind, text).
    On stdin, "reconnect" drops its connection (the next sample connects afresh); "stop" or
    EOF ends it."""
    client: LeanClient | None = None
    previous: LeanClient | None = None  # kept open while the canary connects afresh
    handle = b""
    while True:
        began = time.perf_counter()
        kind = "peek" if client is not None else "connect+peek"
        try:
            if client is None:
                client = LeanClient(port)
                handle = client.open(FLOOD_QUEUE)
            client.peek(handle)
            verdict, text = "ok", ""
        except (Refusal, d.PduError, ndr.StubError, OSError) as exc:
            documented = getattr(exc, "documented", False)
            verdict, text = ("documented" if documented else "failed"), " ".join(str(exc).split())
            if client is not None:
                client.close()
            client = None
        if previous is not None:  # only now: its place on the server is not the canary's
            previous.close()
            previous = None
        ms = (time.perf_counter() - began) * 1000
        print(f"{time.time():.3f}\t{ms:.2f}\t{verdict}\t{kind}\t{text}", flush=True)
        wait = max(0.0, every - (time.perf_counter() - began))
        if select.select([sys.stdin], [], [], wait)[0]:
            if sys.stdin.readline().strip() != "reconnect":
                break  # "stop" or EOF
            previous, client = client, None  # connect afresh, now that the flood is in place
    for left in (client, previous):
        if left is not None:
            left.close()
    return 0


@dataclass
class Sample:
    at: float
    ms: float
    verdict: str
    kind: str
    text: str


class Canary:
    """The canary process and what it reported."""

    def __init__(self, port: int, every: float = EVERY):
        self.samples: list[Sample] = []
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--canary", str(port),
             "--every", str(every)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            at, ms, verdict, kind, text = line.rstrip("\n").split("\t", 4)
            self.samples.append(Sample(float(at), float(ms), verdict, kind, text))

    def wait_first(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.samples and time.monotonic() < deadline and self.proc.poll() is None:
            time.sleep(0.05)

    def reconnect(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.stdin.write("reconnect\n")
            self.proc.stdin.flush()

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.stdin.write("stop\n")
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=CANARY_TIMEOUT * 3)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(5)


# --- the server ----------------------------------------------------------------------------------


def status_of(pid: int) -> tuple[int, int]:
    """(VmRSS in KiB, threads) from /proc/<pid>/status; (0, 0) once the process is gone."""
    rss = threads = 0
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0, 0
    for line in text.splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
        elif line.startswith("Threads:"):
            threads = int(line.split()[1])
    return rss, threads


def sockets_of(pid: int) -> int:
    """How many sockets the process holds open (its /proc/<pid>/fd entries that are sockets):
    the listeners, the canary's connection and whatever the flood still holds."""
    try:
        links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
    except OSError:
        return 0
    return sum(link.startswith("socket:") for link in links)


class Server:
    """``mqconform serve`` on a free port, provisioned with QUEUES; its stderr in a file."""

    def __init__(self, serve_args: tuple[str, ...] = ()) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="floods-")
        queues = Path(self.folder.name) / "queues.yaml"
        queues.write_text(QUEUES)
        self.log = open(Path(self.folder.name) / "serve.log", "w+")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "mqconform", "serve", "--port", "0",
             "--queues", str(queues), *serve_args],
            stdout=subprocess.PIPE, stderr=self.log, stdin=subprocess.DEVNULL, text=True,
            preexec_fn=raise_nofile)
        self.pid = self.proc.pid
        line = self._endpoint_line(30.0)
        if "ncacn_ip_tcp:" not in line:
            self.close()
            raise SystemExit(f"the server did not start: {line.strip() or self.last_log()}")
        self.port = int(line.split("[", 1)[1].split("]", 1)[0])
        self.samples: list[tuple[float, int, int]] = []
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def _endpoint_line(self, timeout: float) -> str:
        found: list[str] = []

        def read() -> None:
            for line in self.proc.stdout:
                if line.startswith("RemoteRead"):
                    found.append(line)
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(timeout)
        return found[0] if found else ""

    def _sample(self) -> None:
        while not self._stop.wait(0.1):
            rss, threads = status_of(self.pid)
            if rss:
                self.samples.append((time.monotonic(), rss, threads))

    def status(self) -> tuple[int, int]:
        return status_of(self.pid)

    def sockets(self) -> int:
        return sockets_of(self.pid)

    def peak(self, since: float) -> tuple[int, int]:
        window = [(rss, threads) for at, rss, threads in self.samples if at >= since]
        return (max((r for r, _ in window), default=0), max((t for _, t in window), default=0))

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def last_log(self) -> str:
        self.log.flush()
        self.log.seek(0)
        lines = self.log.read().strip().splitlines()
        return lines[-1][:200] if lines else ""

    def crashes(self) -> list[str]:
        self.log.flush()
        self.log.seek(0)
        return [line for line in self.log.read().splitlines() if "Traceback" in line]

    def close(self) -> None:
        self._stop_sampler()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        self.log.close()
        self.folder.cleanup()

    def _stop_sampler(self) -> None:
        self._stop.set()
        if getattr(self, "_sampler", None) is not None:
            self._sampler.join(2)


# --- the floods ----------------------------------------------------------------------------------


class Flood:
    """Builds its sockets (``build``), keeps them busy for the hold (``hold``), lets go
    (``release``). ``figures``: what the flood saw, for the report."""

    name = ""
    what = ""

    #: seconds a flood may take to build before it stops where it is (``--build-limit``)
    build_limit = 300.0

    def __init__(self, port: int, scale: float):
        self.port = port
        self.scale = scale
        self.socks: list[socket.socket] = []
        self.figures: dict[str, object] = {}

    def n(self, full: int) -> int:
        return max(1, round(full * self.scale))

    def build(self) -> None:
        raise NotImplementedError

    #: while held, open one more connection every 0.1 s (sending ``knock_with``), as a flood
    #: that keeps the server's connection table full does: a place a client gives up goes
    #: to the flood, not back to the canary
    knocks = False
    knock_with = b""

    def hold(self, seconds: float) -> None:
        self.wait(seconds)

    def wait(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            time.sleep(min(0.1, left))
            if self.knocks:
                self.knock()

    def knock(self) -> None:
        try:
            s = connect(self.port, 1.0)
        except OSError:
            self.figures["knocks refused"] = self.figures.get("knocks refused", 0) + 1
            return
        self.socks.append(s)
        self.figures["knocks"] = self.figures.get("knocks", 0) + 1
        if self.knock_with:
            with contextlib.suppress(OSError):
                s.sendall(self.knock_with)

    def kept(self, socks: list[socket.socket]) -> int:
        """How many of ``socks`` the server still holds open (no EOF, no reset, waiting)."""
        alive = 0
        for s in socks:
            try:
                s.setblocking(False)
                data = s.recv(1, socket.MSG_PEEK)
                alive += bool(data)  # an answer waiting: the connection is still open
            except (BlockingIOError, InterruptedError):
                alive += 1
            except OSError:
                pass
        return alive

    def release(self) -> None:
        for s in self.socks:
            with contextlib.suppress(OSError):
                s.close()
        self.socks = []


def connect_many(port: int, count: int, timeout: float = 5.0) -> tuple[list[socket.socket], str]:
    """``count`` TCP connections; stops at the first that cannot be made (its error)."""
    socks: list[socket.socket] = []
    for _ in range(count):
        try:
            socks.append(connect(port, timeout))
        except OSError as exc:
            return socks, f"connect: {exc}"
    return socks, ""


class Idle(Flood):
    name = "idle"
    what = "3,000 silent TCP connections + 3,000 bound and silent"

    def build(self) -> None:
        count = self.n(3000)
        idle, err1 = connect_many(self.port, count)
        self.socks += idle
        bound: list[socket.socket] = []
        acked = 0
        err2 = ""
        for _ in range(count):
            try:
                s = connect(self.port, 5.0)
            except OSError as exc:
                err2 = f"connect: {exc}"
                break
            bound.append(s)
            framer = Framer(s)
            try:
                s.sendall(bind_pdu())
                pdu = framer.read(5.0)
                acked += pdu is not None and pdu[2] == d.PType.BIND_ACK
            except OSError:
                pass
        self.socks += bound
        self._idle, self._bound = idle, bound
        self.figures.update({"idle connections": len(idle), "bound connections": acked,
                             "of": count, "connect error": err1 or err2})

    knocks = True

    def hold(self, seconds: float) -> None:
        self.wait(seconds)
        self.figures["idle kept by the server at the end"] = self.kept(self._idle)
        self.figures["bound kept by the server at the end"] = self.kept(self._bound)


class Slowloris(Flood):
    name = "slowloris"
    what = "1,000 PDUs under the frag_length limit, dripped; 1,000 over it"
    knocks = True
    knock_with = header(d.PType.BIND, 4000)

    def __init__(self, port: int, scale: float, drip: float = 3.0):
        super().__init__(port, scale)
        self.drip = drip

    def build(self) -> None:
        count = self.n(1000)
        below, err1 = connect_many(self.port, count)
        above, err2 = connect_many(self.port, count)
        self.socks += below + above
        for s, frag_length in [(s, 4000) for s in below] + [(s, 0xFFFF) for s in above]:
            with contextlib.suppress(OSError):
                s.sendall(header(d.PType.BIND, frag_length))
        self._below, self._above = below, above
        self.figures.update({"under the limit (4,000)": len(below),
                             "over the limit (65,535)": len(above), "of": count,
                             "connect error": err1 or err2, "octets dripped": 0})

    def hold(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        dripped = 0
        while True:
            wait = min(self.drip, end - time.monotonic())
            if wait <= 0:
                break
            self.wait(wait)
            if time.monotonic() >= end:
                break
            for s in self._below + self._above:
                try:
                    s.send(b"\x00", socket.MSG_DONTWAIT)
                    dripped += 1
                except OSError:
                    pass
        self.figures["octets dripped"] = dripped
        self.figures["under the limit kept at the end"] = self.kept(self._below)
        self.figures["over the limit kept at the end"] = self.kept(self._above)


class Fragments(Flood):
    name = "fragments"
    what = "60 connections of request fragments without PFC_LAST_FRAG, each up to 8 MiB"

    def build(self) -> None:
        count = self.n(60)
        sent = 0
        notes: dict[str, int] = {}
        conns: list[tuple[socket.socket, Framer]] = []
        for _ in range(count):
            try:
                s = connect(self.port, 5.0)
            except OSError as exc:
                notes[f"connect: {exc}"] = notes.get(f"connect: {exc}", 0) + 1
                continue
            self.socks.append(s)
            framer = Framer(s)
            try:
                s.sendall(bind_pdu())
                ack = answer_of(framer.read(5.0), framer)
            except (Refusal, OSError) as exc:
                notes[f"bind: {exc}"] = notes.get(f"bind: {exc}", 0) + 1
                continue
            # a fragment as large as the server receives (C706 12.6.4.4); every stub chunk but
            # the last a multiple of 8 (wire.dcerpc.fragment_stub)
            frag = min(ack.body.max_recv_frag, MAX_FRAG)
            chunk = bytes(((frag - d.REQUEST_SIZE) // 8) * 8)
            first = d.encode_pdu(d.Request(0, 7, chunk, alloc_hint=REQUEST_CAP), 2,
                                 d.PFC_FIRST_FRAG)
            middle = d.encode_pdu(d.Request(0, 7, chunk, alloc_hint=REQUEST_CAP), 2, 0)
            pieces = (REQUEST_CAP - 1) // len(chunk)  # stay under the cap
            try:
                s.sendall(first)
                done = 1
                while done < pieces:
                    batch = min(64, pieces - done)
                    s.sendall(middle * batch)
                    done += batch
                sent += done * len(chunk)
            except OSError as exc:
                notes[f"send: {exc}"] = notes.get(f"send: {exc}", 0) + 1
            conns.append((s, framer))
        answered = _answers_in(conns, notes)
        self._conns = conns
        self.figures.update({"connections": len(conns), "of": count,
                             "stub octets sent (MiB)": round(sent / (1 << 20), 1),
                             "answers": answered, "notes": notes})

    def hold(self, seconds: float) -> None:
        time.sleep(seconds)
        self.figures["kept by the server at the end"] = self.kept([s for s, _ in self._conns])


class Opens(Flood):
    name = "opens"
    what = "100,000 R_OpenQueue over 25 connections, then every connection dropped"

    def build(self) -> None:
        total = self.n(100_000)
        # each connection binds its own association group, and one group may hold 4,096
        # handles (serve --handle-limit): 25 of them hold 100,000
        nconn = min(25, total)
        conns: list[list] = []  # [sock, framer, remaining, call_id]
        notes: dict[str, int] = {}
        for i in range(nconn):
            try:
                s = connect(self.port, 5.0)
                self.socks.append(s)
                framer = Framer(s)
                s.sendall(bind_pdu())
                answer_of(framer.read(5.0), framer)
            except (Refusal, OSError) as exc:
                notes[f"bind: {exc}"] = notes.get(f"bind: {exc}", 0) + 1
                continue
            share = total // nconn + (i < total % nconn)
            stub = ndr.encode_request(c.R_OpenQueue(pQueueFormat=FLOOD_QUEUE,
                                                    dwAccess=c.PEEK_ACCESS,
                                                    pClientId=uuid.uuid4()), False)
            conns.append([s, framer, share, 2, stub])
        opened = 0
        began = time.perf_counter()
        while conns:
            if time.perf_counter() - began > self.build_limit:
                self.figures["stopped at the build limit (s)"] = self.build_limit
                break
            batches = []
            for conn in conns:
                s, _framer, remaining, call_id, stub = conn
                batch = min(32, remaining)
                pdus = b"".join(d.encode_pdu(d.Request(0, 2, stub), call_id + k)
                                for k in range(batch))
                try:
                    s.sendall(pdus)
                except OSError as exc:
                    notes[f"send: {exc}"] = notes.get(f"send: {exc}", 0) + 1
                    batch = 0
                conn[2] -= batch
                conn[3] += batch
                batches.append(batch)
            for conn, batch in zip(list(conns), batches, strict=True):
                s, framer = conn[0], conn[1]
                for _ in range(batch):
                    raw = framer.read(60.0)
                    try:
                        pdu = answer_of(raw, framer)
                    except Refusal as exc:
                        notes[str(exc)] = notes.get(str(exc), 0) + 1
                        if raw is None:
                            conn[2] = 0
                            break
                        continue
                    opened += isinstance(pdu.body, d.Response)
                if conn[2] <= 0 or batch == 0:
                    conns.remove(conn)
        seconds = time.perf_counter() - began
        self.figures.update({"opened": opened, "of": total, "connections": nconn,
                             "opens/s": round(opened / seconds) if seconds else 0,
                             "notes": notes})


class Receives(Flood):
    name = "receives"
    what = "10,000 blocking R_StartReceive, 50 per connection, then every connection dropped"
    per_connection = 50

    def build(self) -> None:
        total = self.n(10_000)
        nconn = math.ceil(total / self.per_connection)
        notes: dict[str, int] = {}
        sent = 0
        conns: list[tuple[socket.socket, Framer]] = []
        for i in range(nconn):
            count = min(self.per_connection, total - i * self.per_connection)
            try:
                s = connect(self.port, 5.0)
                self.socks.append(s)
                framer = Framer(s)
                s.sendall(bind_pdu())
                answer_of(framer.read(5.0), framer)
                open_call = c.R_OpenQueue(pQueueFormat=EMPTY_QUEUE, dwAccess=c.RECEIVE_ACCESS,
                                          pClientId=uuid.uuid4())
                s.sendall(request_pdu(open_call, 2))
                opened = answer_of(framer.read(10.0), framer)
                handle = ndr.decode_response(open_call, opened.body.stub, False).pphContext
                s.sendall(b"".join(
                    request_pdu(c.R_StartReceive(phContext=handle, ulAction=c.MQ_ACTION_RECEIVE,
                                                 ulTimeout=3_600_000, dwRequestId=k + 1,
                                                 dwMaxBodySize=1024,
                                                 dwMaxCompoundMessageSize=4096), 3 + k)
                    for k in range(count)))
            except (Refusal, OSError, d.PduError, ndr.StubError) as exc:
                key = " ".join(str(exc).split())
                notes[key] = notes.get(key, 0) + 1
                continue
            sent += count
            conns.append((s, framer))
        self._conns = conns
        self.figures.update({"receives sent": sent, "of": total, "connections": len(conns),
                             "connections tried": nconn, "notes": notes})

    def hold(self, seconds: float) -> None:
        time.sleep(seconds)
        answered = _answers_in(self._conns, self.figures["notes"])
        self.figures["answered before the drop (should be 0)"] = answered
        self.figures["still pending at the drop"] = self.figures["receives sent"] - answered
        self.figures["connections kept at the end"] = self.kept([s for s, _ in self._conns])


KINDS = {"idle": Idle, "slowloris": Slowloris, "fragments": Fragments, "opens": Opens,
         "receives": Receives}


# --- one run -------------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def fresh_client(port: int) -> str:
    """'ok' if a new client connects, opens and peeks; else what went wrong."""
    try:
        client = LeanClient(port, timeout=10.0)
    except (Refusal, OSError, d.PduError) as exc:
        return f"connect: {exc}"
    try:
        client.peek(client.open(FLOOD_QUEUE))
        return "ok"
    except (Refusal, OSError, d.PduError, ndr.StubError) as exc:
        return str(exc)
    finally:
        client.close()


def run_flood(name: str, scale: float, hold: float, drip: float = 3.0,
              settle: float = 30.0, serve_args: tuple[str, ...] = ()) -> dict:
    """One flood against a fresh server (``serve_args``: more `mqconform serve` options, e.g.
    a smaller --max-connections): the figures as a dict (the JSON of --json)."""
    server = Server(serve_args)
    flood: Flood | None = None
    canary: Canary | None = None
    try:
        for _ in range(3):  # warm up: the server's first calls import and allocate
            fresh_client(server.port)
        idle_rss, idle_threads = server.status()
        canary = Canary(server.port)
        canary.wait_first()
        time.sleep(0.5)
        before_rss, before_threads = server.status()
        before_sockets = server.sockets()
        began = time.monotonic()
        cls = KINDS[name]
        flood = cls(server.port, scale, drip) if cls is Slowloris else cls(server.port, scale)
        t0 = time.perf_counter()
        flood.build()
        build_s = time.perf_counter() - t0
        built = time.time()
        canary.reconnect()  # the canary connects afresh while the flood is in place
        flood.hold(hold)
        t1 = time.perf_counter()
        released = time.time()
        flood.release()
        # after: every flood connection gone from the server (its sockets and threads back to
        # where they were with the canary alone), or ``settle`` seconds
        deadline = time.monotonic() + settle
        while time.monotonic() < deadline and server.alive and (
                server.sockets() > before_sockets or server.status()[1] > before_threads):
            time.sleep(0.2)
        settled_s = time.perf_counter() - t1
        time.sleep(1.0)
        canary.stop()
        after_rss, after_threads = server.status()
        peak_rss, peak_threads = server.peak(began)
        alive = server.alive
        fresh = fresh_client(server.port) if alive else "the server is gone"
        samples = canary.samples
    finally:
        if canary is not None:
            canary.stop()
        if flood is not None:
            flood.release()
        crashes = server.crashes()
        server.close()
    latencies = [s.ms for s in samples]
    bad = [s for s in samples if s.verdict != "ok"]

    def phase(s: Sample) -> str:
        return "build" if s.at < built else "hold" if s.at < released else "after"

    by_phase = {p: {"samples": sum(phase(s) == p for s in samples),
                    "failures": sum(phase(s) == p for s in bad),
                    "max_ms": round(max((s.ms for s in samples if phase(s) == p),
                                        default=0.0), 2)}
                for p in ("build", "hold", "after")}
    slowest = max(samples, key=lambda s: s.ms, default=None)
    return {
        "flood": name, "what": KINDS[name].what, "scale": scale, "hold_s": hold,
        "build_s": round(build_s, 2), "release_to_settled_s": round(settled_s, 2),
        "figures": flood.figures,
        "canary": {
            "samples": len(samples), "ok": len(samples) - len(bad),
            "documented": sum(s.verdict == "documented" for s in bad),
            "failed": sum(s.verdict == "failed" for s in bad),
            "reconnects": sum(s.kind == "connect+peek" for s in samples),
            "first_error": f"{bad[0].kind}: {bad[0].text}" if bad else "",
            "errors": sorted({s.text for s in bad})[:10],
            "p50_ms": round(statistics.median(latencies), 2) if latencies else 0.0,
            "p99_ms": round(percentile(latencies, 0.99), 2),
            "max_ms": round(max(latencies, default=0.0), 2),
            "by_phase": by_phase,
            "slowest": (f"{slowest.kind} in the {phase(slowest)} phase, {slowest.ms:.1f} ms"
                        if slowest is not None else ""),
            "verdicts": [s.verdict for s in samples],
        },
        "rss_kib": {"idle": idle_rss, "before": before_rss, "peak": peak_rss,
                    "after": after_rss},
        "threads": {"idle": idle_threads, "before": before_threads, "peak": peak_threads,
                    "after": after_threads},
        "survived": alive, "fresh_client": fresh, "tracebacks": len(crashes),
    }


def goals(result: dict) -> dict[str, bool]:
    can, rss = result["canary"], result["rss_kib"]
    return {"no canary failures": can["documented"] + can["failed"] == 0 and can["samples"] > 0,
            "p99": can["p99_ms"] <= GOAL_P99_MS,
            "max": can["max_ms"] <= GOAL_MAX_MS,
            "RSS after": rss["after"] <= rss["before"] * (1 + GOAL_RSS_GROWTH),
            "survived": result["survived"] and result["fresh_client"] == "ok"}


def report(result: dict) -> list[str]:
    can, rss, thr = result["canary"], result["rss_kib"], result["threads"]
    mib = {k: v / 1024 for k, v in rss.items()}
    growth = (rss["after"] - rss["before"]) / rss["before"] * 100 if rss["before"] else 0.0
    figures = ", ".join(f"{k} {v}" for k, v in result["figures"].items()
                        if v not in ("", {}) and k != "notes")
    notes = result["figures"].get("notes") or {}
    lines = [f"{result['flood']}: {result['what']} (scale {result['scale']})",
             f"  flood: {figures}; built in {result['build_s']} s, held {result['hold_s']} s, "
             f"settled {result['release_to_settled_s']} s after the drop"]
    if notes:
        lines.append("  answers/errors met by the flood: "
                     + "; ".join(f"{k} x{v}" for k, v in list(notes.items())[:5]))
    lines += [
        f"  canary: {can['samples']} samples ({can['reconnects']} with a reconnection), "
        f"{can['ok']} ok; p50 {can['p50_ms']:.1f} ms, p99 {can['p99_ms']:.1f} ms (goal <= "
        f"{GOAL_P99_MS:.0f}; ratio {can['p99_ms'] / GOAL_P99_MS:.2f}), max "
        f"{can['max_ms']:.0f} ms (goal <= {GOAL_MAX_MS:.0f}; ratio "
        f"{can['max_ms'] / GOAL_MAX_MS:.2f}); max by phase: "
        + ", ".join(f"{p} {v['max_ms']:.0f}" for p, v in can["by_phase"].items())
        + (f"; slowest: {can['slowest']}" if can["slowest"] else ""),
        f"  canary failures: {can['documented'] + can['failed']} (goal 0; {can['documented']} "
        f"a documented busy answer, {can['failed']} other)"
        + "; by phase: " + ", ".join(f"{p} {v['failures']}/{v['samples']}"
                                     for p, v in can["by_phase"].items())
        + (f"; first: {can['first_error']}" if can["first_error"] else ""),
        f"  server RSS: before {mib['before']:.1f} MiB, peak {mib['peak']:.1f} MiB "
        f"({rss['peak'] / max(rss['before'], 1):.2f}x), after {mib['after']:.1f} MiB "
        f"({growth:+.1f} %, goal within 10 %); threads before {thr['before']}, peak "
        f"{thr['peak']}, after {thr['after']}",
        f"  survived: {'yes' if result['survived'] else 'NO'}; a fresh client after: "
        f"{result['fresh_client']}; tracebacks in the server's log: {result['tracebacks']}"]
    return lines


def summary(results: list[dict]) -> list[str]:
    head = (f"{'flood':<10} {'samples':>7} {'fail':>5} {'p50 ms':>7} {'p99 ms':>7} "
            f"{'max ms':>7} {'RSS MiB before/peak/after':>26} {'thr pk':>6}  goals")
    rows = [head, "-" * len(head)]
    for r in results:
        can, rss = r["canary"], r["rss_kib"]
        missed = [k for k, ok in goals(r).items() if not ok]
        trio = "/".join(f"{rss[k] / 1024:.0f}" for k in ("before", "peak", "after"))
        rows.append(f"{r['flood']:<10} {can['samples']:>7} "
                    f"{can['documented'] + can['failed']:>5} {can['p50_ms']:>7.1f} "
                    f"{can['p99_ms']:>7.1f} {can['max_ms']:>7.0f} {trio:>26} "
                    f"{r['threads']['peak']:>6}  "
                    + ("met" if not missed else "MISSED: " + ", ".join(missed)))
    rows.append(f"goals: 0 canary failures, p99 <= {GOAL_P99_MS:.0f} ms, max <= "
                f"{GOAL_MAX_MS:.0f} ms, RSS after within 10 % of before, the server alive "
                "and serving a fresh client")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", choices=FLOODS, metavar="NAME",
                    help=f"run this flood only (repeatable): {', '.join(FLOODS)}")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiply every flood's size by FACTOR (default 1)")
    ap.add_argument("--hold", type=float, default=10.0,
                    help="seconds each flood is held before it lets go (default 10; scaled, "
                         "at least 2)")
    ap.add_argument("--drip", type=float, default=3.0,
                    help="seconds between the slowloris octets (default 3)")
    ap.add_argument("--build-limit", type=float, default=Flood.build_limit, metavar="S",
                    help="seconds the opens flood may take to open its handles before it "
                         "stops where it is (default 300)")
    ap.add_argument("--serve-arg", action="append", default=[], metavar="ARG",
                    help="an option for every `mqconform serve` the floods start (repeatable; "
                         "e.g. --serve-arg=--max-connections --serve-arg=256)")
    ap.add_argument("--json", metavar="FILE", help="write the results here (JSON)")
    ap.add_argument("--canary", type=int, metavar="PORT", help=argparse.SUPPRESS)
    ap.add_argument("--every", type=float, default=EVERY, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.canary is not None:
        return canary_main(args.canary, args.every)
    if not 0 < args.scale <= 10:
        ap.error(f"--scale {args.scale}: a factor in (0, 10]")
    if not args.build_limit > 0:
        ap.error(f"--build-limit {args.build_limit}: seconds, more than 0")
    Flood.build_limit = args.build_limit
    raise_nofile()
    # SIGTERM unwinds like ^C: every finally closes its sockets and the server
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    hold = max(2.0, args.hold * min(args.scale, 1.0))
    print(f"floods against mqconform serve (pid per flood), scale {args.scale}, hold {hold:.0f} s, "
          f"canary every {EVERY} s; RLIMIT_NOFILE {resource.getrlimit(resource.RLIMIT_NOFILE)[0]}",
          flush=True)
    results = []
    for name in args.only or FLOODS:
        result = run_flood(name, args.scale, hold, min(args.drip, hold / 3),
                           serve_args=tuple(args.serve_arg))
        results.append(result)
        for line in report(result):
            print(line, flush=True)
    print()
    for line in summary(results):
        print(line)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str) + "\n")
    ok = all(all(goals(r).values()) for r in results)
    print("goals met" if ok else "GOALS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
