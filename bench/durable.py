"""Durable queues under crashes: ``mqconform serve --store DIR`` killed with SIGKILL under a
mixed load, restarted, checked, again and again (conformance/reliability.py crash_cycles).

    python bench/durable.py [--cycles 20] [--messages 2000] [--consumers 4] [--sync FULL]

Each cycle: consumers receive with random ACK (70 %) and NACK while a sender adds recoverable
messages through the control API; after about ``--load`` seconds the server is killed
(SIGKILL, mid-call), restarted on the same store and checked against everything it confirmed
since the first cycle: acknowledged messages that came back (goal 0), recoverable messages it
accepted and no client acknowledged that are missing (goal 0), duplicates (goal 0), and a new
message's LookupIdentifier above every one given before (goal: every cycle). Also printed:
calls per second under the store and the restart time with the store's contents.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)

from mqconform.conformance import reliability as rl  # noqa: E402
from mqconform.conformance.targets import ServeProcess  # noqa: E402

QUEUE = "DIRECT=OS:MQREF\\private$\\q"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=20)
    ap.add_argument("--messages", type=int, default=2000, help="recoverable messages at first")
    ap.add_argument("--consumers", type=int, default=4)
    ap.add_argument("--load", type=float, default=2.0, help="seconds of load per cycle")
    ap.add_argument("--sync", choices=("FULL", "NORMAL"), default="FULL")
    ap.add_argument("--seed", type=int, default=20261121)
    args = ap.parse_args(argv)
    folder = Path(tempfile.mkdtemp())
    body = "\n".join(f"      - {{body: m{i:06d}, delivery: recoverable, priority: {i % 8}}}"
                     for i in range(args.messages))
    (folder / "queues.yaml").write_text(
        f"queue_manager:\n  computer_name: MQREF\nqueues:\n  - path: private$\\q\n"
        f"    messages:\n{body}\n")
    server = ServeProcess(args=("--queues", str(folder / "queues.yaml"), "--store",
                                str(folder / "store"), "--store-sync", args.sync))
    recoverable = [f"m{i:06d}".encode() for i in range(args.messages)]
    try:
        cycles = rl.crash_cycles(server, QUEUE, "private$\\q", recoverable, args.cycles,
                                 load_seconds=args.load, consumers=args.consumers,
                                 seed=args.seed)
    finally:
        server.close()
    calls = sum(2 * c.deliveries + c.sent for c in cycles)
    print(f"{len(cycles)} cycles of load, kill -9 and restart (store synchronous={args.sync}, "
          f"{args.consumers} consumers and a sender, ~{args.load:.0f} s of load each)")
    for k, c in enumerate(cycles):
        print(f"  {k:2d}: {c.deliveries} deliveries, {c.acked} ACK answered (+{c.acked_perhaps} "
              f"unanswered), {c.sent} sent; restart {c.restart_seconds:.2f} s, "
              f"{c.available} available; came back {len(c.recovery.came_back)}, lost "
              f"{len(c.recovery.lost)}, duplicated {len(c.recovery.duplicated)}, lookup ids "
              f"increase: {c.lookup_ids_increase}")
    came_back = sum(len(c.recovery.came_back) for c in cycles)
    lost = sum(len(c.recovery.lost) for c in cycles)
    duplicated = sum(len(c.recovery.duplicated) for c in cycles)
    print(f"total: {sum(c.deliveries for c in cycles)} deliveries, "
          f"{sum(c.acked for c in cycles)} acknowledged, {sum(c.sent for c in cycles)} sent "
          f"({calls / (args.load * len(cycles)):,.0f} calls and sends/s, roughly); "
          f"acknowledged that came back {came_back}, lost {lost}, duplicated {duplicated}; "
          f"lookup ids increased after {sum(c.lookup_ids_increase for c in cycles)} of "
          f"{len(cycles)} restarts")
    ok = not (came_back or lost or duplicated) and all(c.lookup_ids_increase for c in cycles)
    print("goals met" if ok else "GOALS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
