"""Throughput and latency of the reference queue manager over real DCE/RPC on 127.0.0.1.

    python bench/server.py [--calls N] [--connections M] [--rounds K]

The server runs in its own process (``mqconform serve``). Figures:

1. R_StartReceive peek calls per second on one connection (goal >= 2,000), with p50 and p99
   latency per call (goal: p99 <= 5 ms). The client is a lean one built on the project's PDU
   and NDR codecs (wire/dcerpc.py, wire/ndr.py): the request is encoded once and sent as
   bytes, and the response is read by its frag_length, so the figure is the server's. The same
   run with the impacket-based client (conformance/client.py) is printed beside it: most of its time
   is impacket marshalling in the client.
2. M concurrent connections (default 50), each doing K rounds of open / peek / close with the
   impacket-based client: calls, errors (goal: zero) and the wall time.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)

from mqconform.conformance.client import RpcClient  # noqa: E402
from mqconform.model import calls as c  # noqa: E402
from mqconform.model.formats import parse_format_name, to_queue_format  # noqa: E402

GOAL_CALLS = 2_000
GOAL_P99_MS = 5.0
QUEUES = "queues:\n  - path: private$\\bench\n    messages: [{body: 'x'}]\n"
FORMAT = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\bench"))


def start_server() -> tuple[subprocess.Popen, int]:
    folder = Path(tempfile.mkdtemp())
    (folder / "queues.yaml").write_text(QUEUES)
    proc = subprocess.Popen([sys.executable, "-P", "-m", "mqconform", "serve", "--port", "0",
                             "--queues", str(folder / "queues.yaml")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if "ncacn_ip_tcp:" not in line:
        proc.kill()
        raise SystemExit(f"server did not start: {line}{proc.stderr.read()}")
    port = int(line.split("[", 1)[1].split("]", 1)[0])
    return proc, port


def open_queue(client: RpcClient) -> bytes:
    out = client.call(c.R_OpenQueue(pQueueFormat=FORMAT, dwAccess=c.RECEIVE_ACCESS,
                                    pClientId=uuid.uuid4()))
    if out.raised:
        raise RuntimeError(f"R_OpenQueue raised 0x{out.status:08X}")
    return out.pphContext


def peek_call(ctx: bytes) -> c.R_StartReceive:
    return c.R_StartReceive(phContext=ctx, ulAction=c.MQ_ACTION_PEEK_CURRENT,
                            dwMaxBodySize=1024, dwMaxCompoundMessageSize=1024)


class LeanClient:
    """One bound RemoteRead association on a socket: bytes in, bytes out."""

    def __init__(self, port: int):
        import socket

        from mqconform.wire import dcerpc as d

        self.d = d
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.call_id = 1
        bind = d.Bind(5840, 5840, 0, (d.ContextElement(0, d.SyntaxId(c.REMOTEREAD_UUID, 1, 0),
                                                        (d.NDR,)),))
        self.sock.sendall(d.encode_pdu(bind, self.call_id))
        ack = d.decode_pdu(self._read_pdu())
        if not isinstance(ack.body, d.BindAck) or ack.body.results[0].result != 0:
            raise RuntimeError(f"bind refused: {ack.body}")

    def _read_exact(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("server closed the connection")
            data += chunk
        return data

    def _read_pdu(self) -> bytes:
        header = self._read_exact(16)
        frag_length = int.from_bytes(header[8:10], "little")
        return header + self._read_exact(frag_length - 16)

    def request(self, call: c.Call) -> bytes:
        from mqconform.wire import ndr

        self.call_id += 1
        return self.d.encode_pdu(self.d.Request(0, call.opnum, ndr.encode_request(call, False)),
                                 self.call_id)

    def roundtrip(self, pdu: bytes) -> bytes:
        """Send one single-fragment request; return the response PDU(s) as read."""
        self.sock.sendall(pdu)
        out = self._read_pdu()
        while not out[3] & 0x02 and out[2] == 2:  # a response without PFC_LAST_FRAG
            out += self._read_pdu()
        return out

    def close(self) -> None:
        self.sock.close()


def lean_one_connection(port: int, calls: int) -> tuple[float, list[float]]:
    from mqconform.wire import ndr

    client = LeanClient(port)
    try:
        open_call = c.R_OpenQueue(pQueueFormat=FORMAT, dwAccess=c.RECEIVE_ACCESS,
                                  pClientId=uuid.uuid4())
        answer = client.d.decode_pdu(client.roundtrip(client.request(open_call)))
        ctx = ndr.decode_response(open_call, answer.body.stub, False).pphContext
        pdu = client.request(peek_call(ctx))
        first = client.d.decode_pdu(client.roundtrip(pdu))
        status = int.from_bytes(first.body.stub[-4:], "little")
        if status != 0:
            raise RuntimeError(f"peek returned 0x{status:08X}")
        for _ in range(100):
            client.roundtrip(pdu)
        latencies = []
        start = time.perf_counter()
        for _ in range(calls):
            t0 = time.perf_counter()
            client.roundtrip(pdu)
            latencies.append((time.perf_counter() - t0) * 1000)
        return calls / (time.perf_counter() - start), latencies
    finally:
        client.close()


def one_connection(port: int, calls: int) -> tuple[float, list[float]]:
    with RpcClient(timeout=10) as client:
        client.connect(f"ncacn_ip_tcp:127.0.0.1[{port}]")
        ctx = open_queue(client)
        peek = peek_call(ctx)
        for _ in range(100):  # warm up
            client.call(peek)
        latencies = []
        start = time.perf_counter()
        for _ in range(calls):
            t0 = time.perf_counter()
            out = client.call(peek)
            latencies.append((time.perf_counter() - t0) * 1000)
            if out.status != 0:
                raise RuntimeError(f"peek returned 0x{out.status:08X}")
        elapsed = time.perf_counter() - start
    return calls / elapsed, latencies


def many_connections(port: int, connections: int, rounds: int) -> tuple[int, list[str], float]:
    errors: list[str] = []
    done = [0]
    lock = threading.Lock()

    def worker(n: int) -> None:
        try:
            with RpcClient(timeout=30) as client:
                client.connect(f"ncacn_ip_tcp:127.0.0.1[{port}]")
                for _ in range(rounds):
                    ctx = open_queue(client)
                    peek = client.call(peek_call(ctx))
                    if peek.status != 0:
                        raise RuntimeError(f"peek 0x{peek.status:08X}")
                    closed = client.call(c.R_CloseQueue(pphContext=ctx))
                    if closed.status != 0:
                        raise RuntimeError(f"close 0x{closed.status:08X}")
                    with lock:
                        done[0] += 3
        except Exception as exc:  # noqa: BLE001 - every failure is a figure here
            with lock:
                errors.append(f"connection {n}: {exc}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(connections)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return done[0], errors, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    proc, port = start_server()
    try:
        rate, latencies = lean_one_connection(port, args.calls)
        q = statistics.quantiles(latencies, n=100)
        p50, p99 = statistics.median(latencies), q[98]
        print(f"one connection: {rate:,.0f} R_StartReceive peek calls/s over {args.calls:,} "
              f"calls (goal {GOAL_CALLS:,}; ratio {rate / GOAL_CALLS:.2f})")
        print(f"latency: p50 {p50:.2f} ms, p99 {p99:.2f} ms (goal p99 <= {GOAL_P99_MS} ms; "
              f"ratio {p99 / GOAL_P99_MS:.2f})")
        irate, ilat = one_connection(port, args.calls)
        iq = statistics.quantiles(ilat, n=100)
        print(f"same, impacket-based client: {irate:,.0f} calls/s, p50 "
              f"{statistics.median(ilat):.2f} ms, p99 {iq[98]:.2f} ms")
        calls, errors, wall = many_connections(port, args.connections, args.rounds)
        print(f"{args.connections} concurrent connections x {args.rounds} rounds of "
              f"open/peek/close: {calls:,} calls in {wall:.2f} s, {len(errors)} errors "
              f"(goal 0)")
        for line in errors[:5]:
            print("  " + line)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
