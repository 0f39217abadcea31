"""Throughput of the reference model: RemoteRead calls per second for a peek / receive / ack
mix, in process, on one core. Goal (issue: the model must run millions of steps): 20,000
calls/s.

    python bench/model.py [--iterations N]

Each iteration sends one message (through the model's Enqueue Message, not counted as a call)
and makes three RemoteRead calls: R_StartReceive peek, R_StartReceive receive, R_EndReceive
ACK. The figure is calls / wall-clock second (best of three runs).
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

# run as a script, this file's folder comes first on sys.path and its name (model.py) would
# hide the model package
if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)

from mqconform.model import calls as c  # noqa: E402
from mqconform.model.adm import LocalMessage, LocalMessageType, Queue, QueueManager, QueueType  # noqa: E402
from mqconform.model.formats import parse_format_name, to_queue_format  # noqa: E402
from mqconform.model.message_ops import enqueue_message  # noqa: E402
from mqconform.model.mqrr import RemoteReadServer  # noqa: E402
from mqconform.model.runtime import Environment  # noqa: E402

GOAL = 20_000


def setup():
    qm = QueueManager(computer_name="MQREF", queue_manager_quota=1 << 40,
                      identifier=uuid.UUID("11111111-2222-4333-8444-555555555555"))
    env = Environment(qm)
    queue = Queue(pathname="mqref\\private$\\bench", queue_type=QueueType.Private,
                  queue_manager=qm, private_queue_number=1)
    qm.queue_collection.append(queue)
    server = RemoteReadServer(env)
    fmt = to_queue_format(parse_format_name("DIRECT=OS:mqref\\private$\\bench"))
    out = server.call(c.R_OpenQueue(pQueueFormat=fmt, dwAccess=c.RECEIVE_ACCESS,
                                    pClientId=uuid.uuid4()))
    assert out.status == 0, out
    return env, queue, server, out.result.pphContext


def run(iterations: int) -> float:
    env, queue, server, ctx = setup()
    body = b"x" * 100
    peek = c.R_StartReceive(phContext=ctx, ulAction=c.MQ_ACTION_PEEK_CURRENT,
                            dwMaxBodySize=1024, dwMaxCompoundMessageSize=1024)
    start = time.perf_counter()
    for i in range(iterations):
        m = LocalMessage(body=body, type=LocalMessageType.Binary)
        enqueue_message(env, queue, m)
        assert server.call(peek).status == 0
        got = server.call(c.R_StartReceive(phContext=ctx, ulAction=c.MQ_ACTION_RECEIVE,
                                           dwRequestId=i, dwMaxBodySize=1024,
                                           dwMaxCompoundMessageSize=1024))
        assert got.status == 0
        assert server.call(c.R_EndReceive(phContext=ctx, dwAck=c.RR_ACK,
                                          dwRequestId=i)).status == 0
    elapsed = time.perf_counter() - start
    assert len(queue.message_position_list) == 0
    return 3 * iterations / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20_000)
    args = parser.parse_args()
    best = max(run(args.iterations) for _ in range(3))
    print(f"model: {best:,.0f} RemoteRead calls/s (peek/receive/ack mix, "
          f"{args.iterations:,} iterations, best of 3)")
    print(f"goal: {GOAL:,} calls/s; ratio {best / GOAL:.2f}")


if __name__ == "__main__":
    main()
