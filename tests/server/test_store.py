"""Durable queues (server/store.py, ``mqconform serve --store DIR``): recoverable messages with
all their attributes survive a restart and ``kill -9`` under load; acknowledged ones never come
back; LookupIdentifiers keep increasing; express messages do not survive (MSMQ's own rule);
a store that does not match the provisioning stops the start with one line."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import types
import urllib.request
from pathlib import Path

import pytest

from mqconform.conformance import reliability as rl
from mqconform.conformance.targets import ServeProcess
from mqconform.model.adm import MessageDeliveryGuarantee
from mqconform.server.main import ServeError, start
from mqconform.server.provision import make_message
from mqconform.server.store import REFERENCES, StoreError, decode, encode

ROOT = Path(__file__).resolve().parents[2]
QUEUE = "DIRECT=OS:MQREF\\private$\\q"


def queues_yaml(n: int, express: int = 0) -> str:
    msgs = [f"      - {{body: m{i:04d}, delivery: recoverable, priority: {i % 8}}}"
            for i in range(n)] + [f"      - {{body: x{i:04d}}}" for i in range(express)]
    return ("queue_manager:\n  computer_name: MQREF\nqueues:\n  - path: private$\\q\n"
            "    messages:\n" + "\n".join(msgs) + "\n  - path: private$\\other\n")


def send(server, body: str, queue: str = "private$%5Cq", **spec) -> int:
    """A message through the control API; its LookupIdentifier."""
    url = f"{server.control_url}/queues/{queue}/messages"
    req = urllib.request.Request(url, method="POST",
                                 data=json.dumps({"body": body, **spec}).encode())
    with urllib.request.urlopen(req, timeout=10) as answer:
        return json.loads(answer.read())["lookup_id"]


@pytest.fixture
def serve(tmp_path):
    made = []

    def make(yaml_text: str) -> ServeProcess:
        (tmp_path / "queues.yaml").write_text(yaml_text)
        s = ServeProcess(args=("--queues", str(tmp_path / "queues.yaml"),
                               "--store", str(tmp_path / "store")))
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


def test_every_attribute_of_a_message_round_trips_through_the_codec():
    message = make_message({"body": "b", "label": "l", "priority": 6, "delivery": "recoverable",
                            "dead_letter_queue": "MQREF\\private$\\dlq",
                            "soap_envelope": "<e/>", "compound_message": "cm",
                            "soap_header": "<h/>", "soap_body": "<b/>", "sent_time": 7},
                           "message", "MQREF\\private$\\q")
    message.lookup_identifier = (3 << 56) | 99
    back = decode(json.loads(json.dumps(encode(message))))
    assert type(back) is type(message)
    for f in dataclasses.fields(message):
        if f.name not in REFERENCES:
            assert getattr(back, f.name) == getattr(message, f.name), f.name
    assert back.delivery_guarantee is MessageDeliveryGuarantee.Recoverable


def test_the_codec_names_only_model_classes():
    with pytest.raises(StoreError, match="not a class of the model"):
        decode({"class": "os:system", "fields": {}})
    with pytest.raises(StoreError, match="not a class of the model"):
        decode({"class": "system", "fields": {}})
    with pytest.raises(StoreError, match="not a class of the model"):
        decode({"enum": "mqconform.server.store:Store", "member": "x"})


def test_type_tags_are_the_adm_names_and_stores_of_the_module_path_form_still_load(serve, tmp_path):
    """Stores written before the package was named mqconform name classes ``model.adm:X``;
    they load as they are, and are written back with the tags."""
    import re
    import sqlite3

    s = serve(queues_yaml(6))
    before = rl.available(s.address, QUEUE)
    s.stop()
    db = sqlite3.connect(tmp_path / "store" / "queues.sqlite3")
    rows = db.execute("SELECT queue, lookup_id, message FROM messages").fetchall()
    assert rows and all('"MessageDeliveryGuarantee"' in m for _, _, m in rows)
    for queue, lookup_id, text in rows:
        old = re.sub(r'"(enum|tuple|class)": "(\w+)"', r'"\1": "model.adm:\2"', text)
        assert old != text
        db.execute("UPDATE messages SET message = ? WHERE queue = ? AND lookup_id = ?",
                   (old, queue, lookup_id))
    db.commit()
    db.close()
    s.restart()
    assert rl.available(s.address, QUEUE) == before
    s.stop()
    db = sqlite3.connect(tmp_path / "store" / "queues.sqlite3")
    assert not any("model.adm:" in m for (m,) in db.execute("SELECT message FROM messages"))
    db.close()


def test_a_restart_keeps_recoverable_messages_in_order_and_drops_express_ones(serve):
    s = serve(queues_yaml(20, express=5))
    before = rl.available(s.address, QUEUE)
    assert len(before) == 25
    s.stop()
    s.restart()
    after = rl.available(s.address, QUEUE)
    assert after == [b for b in before if b.startswith(b"m")]  # priority order kept
    s.stop()
    s.restart()  # a second restart: the file's messages are not provisioned again
    assert rl.available(s.address, QUEUE) == after


def test_kill_9_under_load_loses_nothing_returns_no_acked_message_ids_increase(serve):
    s = serve(queues_yaml(300))
    recoverable = [f"m{i:04d}".encode() for i in range(300)]
    cycles = rl.crash_cycles(s, QUEUE, "private$\\q", recoverable, cycles=3, seed=7)
    for k, cycle in enumerate(cycles):
        print(f"\ncycle {k}: {cycle.deliveries} deliveries, {cycle.acked} acknowledged "
              f"(+{cycle.acked_perhaps} unanswered), {cycle.sent} sent; after kill -9 and "
              f"restart: {cycle.available} available, came back "
              f"{len(cycle.recovery.came_back)}, lost {len(cycle.recovery.lost)}, "
              f"duplicated {len(cycle.recovery.duplicated)}")
        assert cycle.deliveries > 20 and cycle.acked and cycle.sent
        assert cycle.recovery.ok, cycle.recovery
        assert cycle.lookup_ids_increase


def test_a_store_with_messages_for_a_queue_no_longer_provisioned_refuses_to_start(tmp_path):
    yaml_path = tmp_path / "queues.yaml"
    yaml_path.write_text(queues_yaml(3))
    r = start(port=0, queues=str(yaml_path), store=str(tmp_path / "store"))
    r.stop()
    yaml_path.write_text("queue_manager:\n  computer_name: MQREF\nqueues:\n"
                         "  - path: private$\\other\n")
    with pytest.raises(ServeError, match=r"queue\(s\) the provisioning does not define: "
                                         r"mqref\\private\$\\q"):
        start(port=0, queues=str(yaml_path), store=str(tmp_path / "store"))
    proc = subprocess.run([sys.executable, "-m", "mqconform", "serve", "--port", "0",
                           "--queues", str(yaml_path), "--store", str(tmp_path / "store")],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "does not define" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_queue_created_through_the_control_api_comes_back_with_its_messages(serve):
    s = serve(queues_yaml(0))
    req = urllib.request.Request(f"{s.control_url}/queues", method="POST",
                                 data=json.dumps({"path": "private$\\made"}).encode())
    urllib.request.urlopen(req, timeout=10).read()
    send(s, "kept", "private$%5Cmade", delivery="recoverable")
    send(s, "express", "private$%5Cmade")
    s.kill()
    s.restart()
    assert rl.available(s.address, "DIRECT=OS:MQREF\\private$\\made") == [b"kept"]


def test_a_store_that_is_not_a_database_or_holds_an_unreadable_message_refuses_to_start(
        tmp_path):
    import sqlite3

    yaml_path = tmp_path / "queues.yaml"
    yaml_path.write_text(queues_yaml(2))
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "queues.sqlite3").write_bytes(b"not a database at all" * 100)
    with pytest.raises(ServeError, match="store .*junk"):
        start(port=0, queues=str(yaml_path), store=str(tmp_path / "junk"))
    r = start(port=0, queues=str(yaml_path), store=str(tmp_path / "store"))
    r.stop()
    db = sqlite3.connect(tmp_path / "store" / "queues.sqlite3")
    db.execute("UPDATE messages SET message = '{\"class\": \"os:system\", \"fields\": {}}' "
               "WHERE rowid = (SELECT min(rowid) FROM messages)")
    db.commit()
    db.close()
    with pytest.raises(ServeError, match="message .* of mqref.*not a class of the model"):
        start(port=0, queues=str(yaml_path), store=str(tmp_path / "store"))
    db = sqlite3.connect(tmp_path / "store" / "queues.sqlite3")
    assert db.execute("SELECT count(*) FROM messages").fetchone()[0] == 2  # nothing dropped
    db.close()


def test_a_message_moved_to_a_subqueue_or_purged_while_locked_stays_so_after_a_restart(
        tmp_path):
    import uuid

    from mqconform.model import calls as c
    from mqconform.model.formats import parse_format_name, to_queue_format

    yaml_path = tmp_path / "queues.yaml"
    yaml_path.write_text("queue_manager: {computer_name: MQREF}\nqueues:\n"
                         "  - path: private$\\q\n    subqueues: [retry]\n    messages:\n"
                         "      - {body: a, delivery: recoverable}\n"
                         "      - {body: b, delivery: recoverable}\n"
                         "      - {body: c, delivery: recoverable}\n")
    store = str(tmp_path / "store")
    r = start(port=0, queues=str(yaml_path), store=store)
    try:
        s = rl.Session(r.rpc.address)
        handle = rl.open_queue(s, QUEUE)
        retry = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\q;retry"))
        sub = s.call(c.R_OpenQueueForMove(pQueueFormat=retry, dwAccess=c.MQ_MOVE_ACCESS,
                                          pClientId=uuid.uuid4()))
        moved = s.call(c.R_MoveMessage(phContextFrom=handle, ullContextTo=sub.pMoveContext,
                                       LookupId=1, pTransactionId=bytes(16)))
        assert moved.status == 0
        locked = s.call(rl.receive(handle, 7))  # b, Locked by this receive
        assert rl.body_of(locked) == b"b"
        assert s.call(c.R_PurgeQueue(phContext=handle)).status == 0  # c deleted, b pending
    finally:
        r.stop()  # the receive of b never ends: the purge stands
    r = start(port=0, queues=str(yaml_path), store=store)
    try:
        assert rl.available(r.rpc.address, QUEUE) == []
        assert rl.available(r.rpc.address, "DIRECT=OS:MQREF\\private$\\q;retry") == [b"a"]
    finally:
        r.stop()


def test_after_a_restart_the_byte_counts_are_those_of_the_stored_messages(tmp_path):
    """MS-MQDMPR 3.1.1.2 TotalBytes after a restart: the stored messages' sizes, not those of
    the provisioning file's messages (which are not sent again) nor zero."""
    from mqconform.model.invariants import check_invariants

    (tmp_path / "queues.yaml").write_text(queues_yaml(3))
    first = start(port=0, control_port=0, queues=str(tmp_path / "queues.yaml"),
                  store=str(tmp_path / "store"))
    try:
        host, port = first.control.address
        control = types.SimpleNamespace(control_url=f"http://{host}:{port}")
        for i in range(4):
            send(control, f"later-{i}", delivery="recoverable")
    finally:
        first.stop()
    again = start(port=0, control_port=0, queues=str(tmp_path / "queues.yaml"),
                  store=str(tmp_path / "store"))
    try:
        qm = again.handler.env.local_queue_manager
        [queue] = [q for q in qm.queue_collection
                   if q.pathname.lower().endswith("private$\\q")]
        assert len(queue.message_position_list) == 7
        assert queue.total_bytes > 0
        assert check_invariants(qm) == []
    finally:
        again.stop()
