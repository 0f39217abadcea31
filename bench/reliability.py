"""Dropped connections and concurrent consumers against ``mqconform serve`` in a process of its
own (conformance/reliability.py): messages lost or delivered twice, locks and open queues left.

    python bench/reliability.py [--messages 10000] [--connections 1000] [--consumers 16]

1. ``--connections`` connections, each cut at a random point (a blocking receive pending,
   between R_StartReceive and R_EndReceive, cursors open, half a request sent, after an ACK,
   after R_CloseQueue), 8 at a time, on a queue of ``--messages`` messages.
2. ``--consumers`` consumers empty the queue: random ACK (80 %) and NACK, receives cancelled
   while they wait.
3. The check: every message acknowledged exactly once (across 1 and 2) and none left; what the
   server still holds, read from its control API: messages Locked, queues open. Exit status 1
   if anything is lost, duplicated or left.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)

from mqconform.conformance import reliability as rl  # noqa: E402
from mqconform.conformance.targets import ServeProcess  # noqa: E402

QUEUE = "DIRECT=OS:MQREF\\private$\\q"
EMPTY = "DIRECT=OS:MQREF\\private$\\empty"


def start_server(messages: int) -> ServeProcess:
    folder = Path(tempfile.mkdtemp())
    body = "\n".join(f"      - body: m{i:06d}" for i in range(messages))
    (folder / "queues.yaml").write_text(
        f"queue_manager:\n  computer_name: MQREF\nqueues:\n  - path: private$\\q\n"
        f"    messages:\n{body}\n  - path: private$\\empty\n")
    return ServeProcess(args=("--queues", str(folder / "queues.yaml")))


def held(control: int) -> dict:
    deadline = time.monotonic() + 15
    while True:
        with urllib.request.urlopen(f"http://127.0.0.1:{control}/queues", timeout=10) as r:
            queues = json.loads(r.read())
        state = {"locked": sum(q["messages"]["Locked"] for q in queues),
                 "open": sum(q["open"] for q in queues)}
        if not any(state.values()) or time.monotonic() > deadline:
            return state
        time.sleep(0.1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=10_000)
    ap.add_argument("--connections", type=int, default=1_000)
    ap.add_argument("--consumers", type=int, default=16)
    ap.add_argument("--seed", type=int, default=20261121)
    args = ap.parse_args(argv)
    expected = [f"m{i:06d}".encode() for i in range(args.messages)]
    server = start_server(args.messages)
    address, control = server.address, server.control_address[1]
    try:
        t0 = time.perf_counter()
        drops = rl.disconnects(address, QUEUE, EMPTY, args.connections, args.seed)
        t1 = time.perf_counter()
        after_drops = held(control)
        middle = rl.check(expected, drops.acked, rl.available(address, QUEUE))
        t2 = time.perf_counter()
        history = rl.consume(address, QUEUE, args.consumers, args.seed)
        t3 = time.perf_counter()
        left = rl.available(address, QUEUE)
        final = rl.check(expected, drops.acked + history.acked, left)
        after_all = held(control)
    finally:
        server.close()
    print(f"1. {drops.connections} connections dropped in {t1 - t0:.1f} s: "
          + ", ".join(f"{k} {v}" for k, v in drops.points.most_common())
          + f"; client errors {len(drops.errors)}")
    print(f"   then: {middle.acked} acknowledged, {middle.available} available of "
          f"{middle.expected}; lost {len(middle.lost)}, duplicated {len(middle.duplicated)}; "
          f"left Locked {after_drops['locked']}, queues left open {after_drops['open']}")
    print(f"2. {args.consumers} consumers in {t3 - t2:.1f} s: {history.deliveries} deliveries, "
          f"{len(history.acked)} ACK, {len(history.nacked)} NACK (all came back: "
          f"{set(history.nacked) <= set(history.acked)}), {history.cancelled} receives "
          f"cancelled while waiting; client errors {len(history.errors)}")
    print(f"3. of {final.expected} messages: acknowledged {final.acked}, still available "
          f"{final.available}; lost {len(final.lost)}, duplicated {len(final.duplicated)}, "
          f"unknown {len(final.unknown)}; left Locked {after_all['locked']}, queues left open "
          f"{after_all['open']}")
    ok = (middle.ok and final.ok and not left and not drops.errors and not history.errors
          and not any(after_drops.values()) and not any(after_all.values())
          and set(history.nacked) <= set(history.acked))
    print("goals met" if ok else "GOALS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
