"""Connection floods against ``mqconform serve``: what they cost it, and that a fresh client
still gets in at once (server/rpc.py, Limits).

    python bench/flood.py [--sockets 3000] [--bound 1024] [--max-connections 1024]

``mqconform serve`` runs as a process of its own with its default limits (or
``--max-connections``). Figures, each read from /proc/<pid>/status (VmRSS, Threads):

1. the server at rest;
2. with ``--sockets`` idle sockets open against it that never send an octet; then a fresh
   client (the impacket-based one) connects, binds and calls R_GetServerPort: its time;
3. with ``--bound`` connections that bound (RemoteRead, NDR) and sit idle, the most the default
   limit lets a client hold with two threads each; then a fresh client again.

Exits 1 when a fresh client does not complete its call.
"""

from __future__ import annotations

import argparse
import socket
import sys
import time
from pathlib import Path

if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)

from mqconform.conformance.client import RpcClient  # noqa: E402
from mqconform.conformance.targets import ServeProcess  # noqa: E402
from mqconform.model import calls as c  # noqa: E402
from mqconform.wire import dcerpc as d  # noqa: E402

REMOTEREAD = d.SyntaxId(c.REMOTEREAD_UUID, 1, 0)


def status(pid: int) -> tuple[float, int]:
    """(RSS in MiB, threads) of a process."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text()
                  .splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["Threads"])


def settle(pid: int, seconds: float = 3.0) -> tuple[float, int]:
    """The figures once the server has caught up with what was sent (they stop changing)."""
    last, since = status(pid), time.monotonic()
    while time.monotonic() - since < seconds:
        time.sleep(0.25)
        now = status(pid)
        if now[1] != last[1]:
            since = time.monotonic()
        last = now
    return last


class Peak:
    """The highest figures of a process, sampled every 50 ms until ``stop``."""

    def __init__(self, pid: int):
        import threading

        self.pid, self.rss, self.threads = pid, 0.0, 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(0.05):
            rss, threads = status(self.pid)
            self.rss, self.threads = max(self.rss, rss), max(self.threads, threads)

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


def fresh_call(endpoint: str, port: int) -> float:
    """Seconds for a fresh client to connect, bind and complete R_GetServerPort."""
    began = time.perf_counter()
    client = RpcClient(timeout=30)
    client.connect(endpoint)
    answer = client.call(c.R_GetServerPort())
    client.close()
    if answer.raised or answer.status != port:
        raise SystemExit(f"the fresh client's call failed: {answer}")
    return time.perf_counter() - began


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sockets", type=int, default=3000)
    p.add_argument("--bound", type=int, default=1024)
    p.add_argument("--max-connections", type=int, default=None)
    args = p.parse_args(argv)
    extra = ("--max-connections", str(args.max_connections)) if args.max_connections else ()
    server = ServeProcess(args=extra)
    pid = server.proc.pid
    host, port = server.address
    ok = True
    try:
        rss, threads = settle(pid, 1.0)
        print(f"at rest: RSS {rss:.1f} MiB, {threads} threads")
        idle = []
        peak = Peak(pid)
        began = time.perf_counter()
        for _ in range(args.sockets):
            idle.append(socket.create_connection((host, port), timeout=30))
        opened = time.perf_counter() - began
        took = fresh_call(server.endpoint, port)  # accepted after every idle one
        rss, threads = status(pid)
        peak.stop()
        print(f"{args.sockets} idle sockets open (in {opened:.1f} s): RSS {rss:.1f} MiB, "
              f"{threads} threads (peak while they opened: RSS {peak.rss:.1f} MiB, "
              f"{peak.threads} threads)")
        print(f"  a fresh client connected, bound and called R_GetServerPort in {took:.3f} s")
        for s in idle:
            s.close()
        settle(pid)
        bound = []
        bind = d.encode_pdu(d.Bind(5840, 5840, 0, (d.ContextElement(0, REMOTEREAD,
                                                                    (d.NDR,)),)), 1)
        for _ in range(args.bound):
            s = socket.create_connection((host, port), timeout=30)
            s.sendall(bind)
            bound.append(s)
        for s in bound:  # each bind_ack
            head = s.recv(d.HEADER_SIZE, socket.MSG_WAITALL)
            s.recv(d.decode_header(head).frag_length - d.HEADER_SIZE, socket.MSG_WAITALL)
        rss, threads = settle(pid)
        print(f"{args.bound} bound idle connections: RSS {rss:.1f} MiB, {threads} threads")
        took = fresh_call(server.endpoint, port)
        print(f"  a fresh client connected, bound and called R_GetServerPort in {took:.3f} s")
        for s in bound:
            s.close()
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        ok = False
    finally:
        server.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
