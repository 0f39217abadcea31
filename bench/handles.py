"""One client's handles against the others: open rate as handles pile up, and what a large
rundown costs another client, over real DCE/RPC on 127.0.0.1.

    python bench/handles.py [--handles N] [--groups G] [--batch B]

The server runs in its own process (``mqconform serve --handle-limit N/G``). G clients (each
its own connection and association group) open N context handles in all on one queue
(R_OpenQueue, PEEK_ACCESS), pipelined B requests at a time. Then every one of them drops its
connection at once: the server runs the rundown of MS-MQRR 3.1.6.2 for every handle
(server/app.py: in parts of about 2 ms, the lock released between them) and closes each
connection once its rundown is done. Meanwhile a canary client peeks (R_StartReceive
MQ_ACTION_PEEK_CURRENT) on another queue, one call after the other.

Figures, with their targets beside them:

1. R_OpenQueue calls per second over each block of 10,000 handles opened (target: flat, the
   last block within 2x of the first);
2. the rundown time: from the clients' close until the server has closed every connection;
3. the canary's peek latency during the rundown: p50, p99 and max (target: max <= 50 ms).
"""

from __future__ import annotations

import argparse
import socket
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

from mqconform.model import calls as c  # noqa: E402
from mqconform.model.formats import parse_format_name, to_queue_format  # noqa: E402
from mqconform.wire import dcerpc as d  # noqa: E402
from mqconform.wire import ndr  # noqa: E402

TARGET_CANARY_MAX_MS = 50.0
TARGET_OPEN_RATIO = 2.0
BLOCK = 10_000
QUEUES = ("queues:\n  - path: private$\\bench\n    messages: [{body: 'x'}]\n"
          "  - path: private$\\canary\n    messages: [{body: 'tweet'}]\n")
BENCH = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\bench"))
CANARY = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\canary"))


def start_server(handle_limit: int) -> tuple[subprocess.Popen, int]:
    folder = Path(tempfile.mkdtemp())
    (folder / "queues.yaml").write_text(QUEUES)
    proc = subprocess.Popen([sys.executable, "-P", "-m", "mqconform", "serve", "--port", "0",
                             "--queues", str(folder / "queues.yaml"),
                             "--handle-limit", str(handle_limit)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if "ncacn_ip_tcp:" not in line:
        proc.kill()
        raise SystemExit(f"server did not start: {line}{proc.stderr.read()}")
    return proc, int(line.split("[", 1)[1].split("]", 1)[0])


def _lean_client() -> type:
    """bench/server.py's LeanClient (this script keeps bench/ off sys.path: loaded by path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_server",
                                                  Path(__file__).with_name("server.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.LeanClient


class Client(_lean_client()):
    """One bound RemoteRead association on a socket (its own association group), with
    batched calls and a drop that waits for the server's FIN."""

    def calls(self, call: c.Call, n: int) -> list[c.Result]:
        """``n`` copies of ``call`` sent back to back, then their answers read."""
        self.sock.sendall(b"".join(self.request(call) for _ in range(n)))
        out = []
        for _ in range(n):
            pdu = d.decode_pdu(self._read_pdu())
            if isinstance(pdu.body, d.Fault):
                raise RuntimeError(f"{type(call).__name__} fault 0x{pdu.body.status:08X}")
            out.append(ndr.decode_response(call, pdu.body.stub, False))
        return out

    def drop(self) -> None:
        """Close our side; the server's FIN follows its rundown (server/rpc.py)."""
        self.sock.shutdown(socket.SHUT_WR)

    def wait_closed(self) -> None:
        self.sock.settimeout(600)
        while self.sock.recv(65536):
            pass
        self.sock.close()


def open_call(fmt) -> c.R_OpenQueue:
    return c.R_OpenQueue(pQueueFormat=fmt, dwAccess=c.PEEK_ACCESS, pClientId=uuid.uuid4(),
                         fNonRoutingServer=1)


def open_handles(clients: list[Client], total: int, batch: int) -> list[float]:
    """Open ``total`` handles round-robin over ``clients``; opens/s per BLOCK."""
    call = open_call(BENCH)
    rates, opened, block_start, turn = [], 0, time.perf_counter(), 0
    while opened < total:
        n = min(batch, total - opened, BLOCK - opened % BLOCK)
        for result in clients[turn % len(clients)].calls(call, n):
            if result.raised or result.status:
                raise RuntimeError(f"R_OpenQueue 0x{result.status:08X} after {opened} handles")
        turn += 1
        opened += n
        if opened % BLOCK == 0 or opened == total:
            now = time.perf_counter()
            rates.append((opened - (opened - 1) // BLOCK * BLOCK) / (now - block_start))
            block_start = now
    return rates


def canary_loop(client: Client, ctx: bytes, stop: threading.Event, out: list[float]) -> None:
    peek = c.R_StartReceive(phContext=ctx, ulAction=c.MQ_ACTION_PEEK_CURRENT, dwRequestId=1,
                            dwMaxBodySize=1024, dwMaxCompoundMessageSize=1024)
    pdu = client.request(peek)
    while not stop.is_set():
        t0 = time.perf_counter()
        client.sock.sendall(pdu)
        client._read_pdu()
        out.append((time.perf_counter() - t0) * 1000)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--handles", type=int, default=100_000)
    ap.add_argument("--groups", type=int, default=4,
                    help="clients (association groups) the handles are spread over")
    ap.add_argument("--batch", type=int, default=32, help="requests in flight (at most 64)")
    args = ap.parse_args()
    if args.handles < 1 or args.groups < 1 or not 1 <= args.batch <= 64:
        raise SystemExit("--handles and --groups at least 1, --batch 1 to 64")
    # the batches fall unevenly on the clients by a batch or so
    per_group = -(-args.handles // args.groups) + 2 * args.batch
    proc, port = start_server(per_group)
    try:
        clients = [Client(port) for _ in range(args.groups)]
        canary = Client(port)
        [opened] = canary.calls(open_call(CANARY), 1)
        rates = open_handles(clients, args.handles, args.batch)

        latencies: list[float] = []
        stop = threading.Event()
        watcher = threading.Thread(target=canary_loop,
                                   args=(canary, opened.pphContext, stop, latencies))
        watcher.start()
        time.sleep(0.2)  # the canary's figures before the rundown are not counted
        before = len(latencies)
        start = time.perf_counter()
        for client in clients:
            client.drop()
        for client in clients:
            client.wait_closed()
        rundown = time.perf_counter() - start
        during = latencies[before:]
        stop.set()
        watcher.join()
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    print(f"{args.handles:,} handles over {args.groups} client(s) "
          f"(--handle-limit {per_group:,}), {args.batch} requests in flight")
    print("R_OpenQueue per second, per 10,000 handles opened (target: flat, last within "
          f"{TARGET_OPEN_RATIO:.0f}x of first):")
    for i, rate in enumerate(rates):
        print(f"  {i * BLOCK:>7,} - {min((i + 1) * BLOCK, args.handles):>7,}: {rate:8,.0f}/s")
    ratio = rates[0] / rates[-1] if rates[-1] else float("inf")
    print(f"  first/last: {ratio:.2f} ({'met' if ratio <= TARGET_OPEN_RATIO else 'NOT met'})")
    print(f"rundown of {args.handles:,} handles: {rundown * 1000:,.0f} ms")
    if during:
        ordered = sorted(during)
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        worst = ordered[-1]
        print(f"canary peek on another queue during the rundown ({len(during):,} calls): "
              f"p50 {statistics.median(ordered):.2f} ms, p99 {p99:.2f} ms, max {worst:.2f} ms "
              f"(target max <= {TARGET_CANARY_MAX_MS:.0f} ms: "
              f"{'met' if worst <= TARGET_CANARY_MAX_MS else 'NOT met'})")
    else:
        print("canary peek: no call completed during the rundown (target NOT met)")


if __name__ == "__main__":
    main()
