"""No message lost, none delivered twice (conformance/reliability.py) against the reference
server over TCP: connections dropped at random points, and concurrent consumers with random
ACK, NACK and cancels. Each check is also shown to fail on a server that breaks the property
(a seeded fault, a rundown that does not run). The full-size runs (1,000 dropped connections,
16 consumers on 10,000 messages) are bench/reliability.py."""

from __future__ import annotations

import time

import pytest

from mqconform.conformance import reliability as rl
from mqconform.server.faults import Faults
from mqconform.server.main import start

QUEUE = "DIRECT=OS:MQREF\\private$\\q"
EMPTY = "DIRECT=OS:MQREF\\private$\\empty"


def bodies(n: int) -> list[bytes]:
    return [f"m{i:05d}".encode() for i in range(n)]


def queues_yaml(n: int) -> str:
    msgs = "\n".join(f"      - body: {b.decode()}" for b in bodies(n))
    return (f"queue_manager:\n  computer_name: MQREF\nqueues:\n  - path: private$\\q\n"
            f"    messages:\n{msgs}\n  - path: private$\\empty\n")


@pytest.fixture
def serve(tmp_path):
    running = []

    def make(n: int):
        path = tmp_path / f"queues-{len(running)}.yaml"
        path.write_text(queues_yaml(n))
        r = start(host="127.0.0.1", port=0, queues=str(path))
        running.append(r)
        return r

    yield make
    for r in running:
        r.stop()


def held(r) -> dict:
    """What the server still holds for clients, once their connections are gone."""
    deadline = time.monotonic() + 10
    while True:
        h = r.handler
        with h.lock:
            queues = h.env.local_queue_manager.queue_collection
            state = {"connections": len(r.rpc.connections), "groups": len(h.host.groups) + len(r.rpc.groups),
                     "context handles": len(h.remote_read._contexts),
                     "pending requests": len(h.remote_read.pending_request_table.entries),
                     "open queues": sum(len(q.open_queue_descriptor_collection)
                                        for q in queues),
                     "locked": sum(1 for q in queues for p in q.message_position_list
                                   if p.state.name == "Locked")}
        if not any(state.values()) or time.monotonic() > deadline:
            return state
        time.sleep(0.05)


NOTHING = {"connections": 0, "groups": 0, "context handles": 0, "pending requests": 0,
           "open queues": 0, "locked": 0}


@pytest.mark.req("MS-MQRR/3.1.6.2/R1")
def test_300_dropped_connections_lose_nothing_and_leave_nothing(serve):
    r = serve(600)
    report = rl.disconnects(r.rpc.address, QUEUE, EMPTY, connections=300, seed=11)
    assert not report.errors, report.errors[:5]
    assert report.connections == 300 and set(report.points) == set(rl.DROP_POINTS)
    assert held(r) == NOTHING
    verdict = rl.check(bodies(600), report.acked, rl.available(r.rpc.address, QUEUE))
    print(f"\n300 dropped connections {dict(report.points)}: {verdict.acked} acknowledged, "
          f"{verdict.available} available, lost {len(verdict.lost)}, duplicated "
          f"{len(verdict.duplicated)}")
    assert verdict.ok, verdict
    assert verdict.acked > 20 and verdict.available == 600 - verdict.acked


def test_without_the_rundown_the_dropped_receives_are_lost(serve):
    r = serve(100)
    r.handler.remote_read.rundown = lambda context: None  # a server that skips 3.1.6.2
    report = rl.disconnects(r.rpc.address, QUEUE, EMPTY, connections=60, seed=11)
    verdict = rl.check(bodies(100), report.acked, rl.available(r.rpc.address, QUEUE))
    assert report.points["between R_StartReceive and R_EndReceive"] > 0
    assert len(verdict.lost) >= report.points["between R_StartReceive and R_EndReceive"] - 1
    assert not verdict.ok


@pytest.mark.req("MS-MQRR/3.1.4.9/R7", "MS-MQRR/3.1.4.8/R6")
def test_16_consumers_each_message_consumed_once_nacked_ones_return(serve):
    r = serve(2000)
    history = rl.consume(r.rpc.address, QUEUE, consumers=16, seed=5)
    assert not history.errors, history.errors[:5]
    left = rl.available(r.rpc.address, QUEUE)
    verdict = rl.check(bodies(2000), history.acked, left)
    print(f"\n16 consumers on 2000 messages: {history.deliveries} deliveries, "
          f"{len(history.acked)} ACK, {len(history.nacked)} NACK, {history.cancelled} "
          f"cancelled; lost {len(verdict.lost)}, duplicated {len(verdict.duplicated)}")
    assert verdict.ok, verdict
    assert len(history.acked) == 2000 and not left
    assert len(history.nacked) > 100 and history.cancelled > 0
    assert set(history.nacked) <= set(history.acked)  # every NACKed message came back
    assert held(r) == NOTHING


def test_an_ack_that_keeps_the_message_is_found_as_a_duplicate(serve):
    r = serve(200)
    Faults(frozenset({"ack-keeps"}), 0.05, 1).install(r.handler)
    history = rl.consume(r.rpc.address, QUEUE, consumers=4, seed=5)
    verdict = rl.check(bodies(200), history.acked, rl.available(r.rpc.address, QUEUE))
    assert verdict.duplicated and not verdict.ok


@pytest.mark.req("MS-MQRR/3.1.5.1/R1", "MS-MQRR/3.1.6.2/R1")
def test_a_receive_that_waits_longer_than_the_cleanup_timer_leaves_nothing_locked(tmp_path):
    """The Pending Request Cleanup Timer starts before the receive waits (MS-MQRR 3.1.2.2);
    a message that arrives after it expired must still be ended by the rundown."""
    import json
    import urllib.request

    path = tmp_path / "queues.yaml"
    path.write_text(queues_yaml(0))
    r = start(host="127.0.0.1", port=0, queues=str(path), control_port=0,
              control_unauthenticated=True)
    try:
        base = f"http://{r.control.address[0]}:{r.control.address[1]}"

        def post(route, body):
            req = urllib.request.Request(base + route, method="POST",
                                         data=json.dumps(body).encode())
            with urllib.request.urlopen(req, timeout=10) as answer:
                return json.loads(answer.read())

        post("/settings", {"pending_request_cleanup_ms": 200})
        s = rl.Session(r.rpc.address)
        handle = rl.open_queue(s, QUEUE)
        call = rl.receive(handle, 1, timeout=rl.c.INFINITE_TIMEOUT)
        waiting = s.send(call)
        time.sleep(0.6)  # the entry's cleanup timer expires while the call waits
        post("/queues/private$%5Cq/messages", {"body": "late"})
        got = s.result(waiting, call)
        assert got.status == 0 and rl.body_of(got) == b"late"
        s.drop()  # no R_EndReceive: the rundown must return it
        assert held(r) == NOTHING
        assert rl.available(r.rpc.address, QUEUE) == [b"late"]
    finally:
        r.stop()
