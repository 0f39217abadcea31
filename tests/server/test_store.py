"""Durable queues (server/store.py, ``mqconform serve --store DIR``): recoverable messages with
all their attributes survive a restart and ``kill -9`` under load; acknowledged ones never come
back; LookupIdentifiers keep increasing; express messages do not survive (MSMQ's own rule);
a store that does not match the provisioning stops the start with one line. A damaged store
(flipped bytes in its WAL, a truncated database, an older copy) and a store another server
holds refuse the start with one line and exit 2, changing nothing; a full or failing disk
fails only the calls that must write, with MQ_ERROR_INSUFFICIENT_RESOURCES (507 or 503 from
the control API), and keeps exactly what it acknowledged."""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import json
import sqlite3
import struct
import subprocess
import sys
import types
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

from mqconform.conformance import reliability as rl
from mqconform.conformance.client import RpcClient
from mqconform.conformance.targets import ServeProcess
from mqconform.model import calls as c
from mqconform.model.adm import MessageDeliveryGuarantee
from mqconform.model.formats import MgmtObject, MgmtObjectType, parse_format_name, to_queue_format
from mqconform.model.mqmr import PROPID_MGMT_QUEUE_MESSAGE_COUNT, VT_NULL
from mqconform.model.mqrr import packet_layout
from mqconform.model.status import MQ_ERROR_INSUFFICIENT_RESOURCES, MQ_ERROR_IO_TIMEOUT
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


def bearer(server) -> dict[str, str]:
    """The control API's Authorization header for a ServeProcess (its own token); none for a
    server started in process without one."""
    token = getattr(server, "control_token", None)
    return {"Authorization": f"Bearer {token}"} if token else {}


def send(server, body: str, queue: str = "private$%5Cq", **spec) -> int:
    """A message through the control API; its LookupIdentifier."""
    url = f"{server.control_url}/queues/{queue}/messages"
    req = urllib.request.Request(url, method="POST", headers=bearer(server),
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
        if f.metadata.get("bookkeeping"):
            continue  # the model's own notes, never persisted (model/adm.py bookkeeping)
        if f.name not in REFERENCES:
            assert getattr(back, f.name) == getattr(message, f.name), f.name
    assert back.delivery_guarantee is MessageDeliveryGuarantee.Recoverable
    # a note the store does not keep is worked out again when asked: where the UserMessage ends
    assert back._user_message_size is None
    assert packet_layout(back).user_message_size == packet_layout(message).user_message_size


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
    req = urllib.request.Request(f"{s.control_url}/queues", method="POST", headers=bearer(s),
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
    first = start(port=0, control_port=0,
                  control_unauthenticated=True, queues=str(tmp_path / "queues.yaml"),
                  store=str(tmp_path / "store"))
    try:
        host, port = first.control.address
        control = types.SimpleNamespace(control_url=f"http://{host}:{port}")
        for i in range(4):
            send(control, f"later-{i}", delivery="recoverable")
    finally:
        first.stop()
    again = start(port=0, control_port=0,
                  control_unauthenticated=True, queues=str(tmp_path / "queues.yaml"),
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


# --------------------------------------------------------------------------- damaged stores

def digest(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` and the SHA-256 of its bytes."""
    return {str(f.relative_to(folder)): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted(folder.rglob("*")) if f.is_file()}


def refused_start(yaml_path: Path, store: Path) -> subprocess.CompletedProcess:
    """``mqconform serve --store`` run as a user runs it, expected to refuse: its exit code and
    output (a start that does not end within 60 s fails the test)."""
    proc = subprocess.Popen([sys.executable, "-P", "-m", "mqconform.cli", "serve", "--port", "0",
                             "--control-port", "0", "--control-unauthenticated", "--queues",
                             str(yaml_path), "--store", str(store)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"the server started on a store it had to refuse: {out!r}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def assert_refused(proc: subprocess.CompletedProcess, words: str) -> None:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and words in lines[0], lines


def acknowledged_work(s: ServeProcess, sends: int, receives: int) -> list[bytes]:
    """Recoverable sends the control API answered and receives acknowledged with RR_ACK; the
    bodies left, in queue order."""
    for i in range(sends):
        send(s, f"w{i:04d}", delivery="recoverable", priority=3)
    session = rl.Session(s.address)
    handle = rl.open_queue(session, QUEUE)
    for k in range(receives):
        assert session.call(rl.receive(handle, 100 + k)).status == 0
        assert session.call(c.R_EndReceive(phContext=handle, dwAck=c.RR_ACK,
                                           dwRequestId=100 + k)).status == 0
    session.drop()
    return rl.available(s.address, QUEUE)


def wal_frames(wal: Path) -> tuple[int, int]:
    """(page size, number of frames) of a SQLite WAL file (its 32-octet header, then frames of
    a 24-octet header and one page)."""
    data = wal.read_bytes()
    page_size = struct.unpack(">I", data[8:12])[0]
    return page_size, (len(data) - 32) // (24 + page_size)


def test_flipped_bytes_in_a_committed_wal_frame_refuse_the_start_and_change_nothing(serve,
                                                                                     tmp_path):
    """SQLite takes a WAL frame whose checksum is wrong for the end of the log and drops it and
    every frame after it: 16 flipped octets in the middle of the WAL of a server killed before
    any checkpoint would undo acknowledged sends and receives without a word. The commit
    record (server/store.py) sees that the store holds fewer commits than it acknowledged."""
    s = serve(queues_yaml(0))
    left = acknowledged_work(s, sends=100, receives=40)
    assert len(left) == 60
    s.kill()  # no checkpoint: the work is in the WAL only
    store = tmp_path / "store"
    wal = store / "queues.sqlite3-wal"
    page_size, frames = wal_frames(wal)
    assert frames > 100, frames
    frame = frames // 2
    at = 32 + frame * (24 + page_size) + 24 + page_size // 2
    data = bytearray(wal.read_bytes())
    data[at:at + 16] = bytes(b ^ 0xFF for b in data[at:at + 16])
    wal.write_bytes(bytes(data))
    before = digest(store)
    assert_refused(refused_start(tmp_path / "queues.yaml", store), "lost acknowledged work")
    assert digest(store) == before
    data[at:at + 16] = bytes(b ^ 0xFF for b in data[at:at + 16])  # the same WAL, undamaged
    wal.write_bytes(bytes(data))
    s.restart()
    assert rl.available(s.address, QUEUE) == left


def test_a_truncated_database_refuses_the_start_and_changes_nothing(serve, tmp_path):
    s = serve(queues_yaml(0))
    acknowledged_work(s, sends=150, receives=10)
    s.stop()  # a clean stop: the WAL is checkpointed into the database
    store = tmp_path / "store"
    database = store / "queues.sqlite3"
    assert not (store / "queues.sqlite3-wal").exists()
    size = database.stat().st_size
    with open(database, "r+b") as f:
        f.truncate(size // 2)
    before = digest(store)
    assert_refused(refused_start(tmp_path / "queues.yaml", store), "damaged")
    assert digest(store) == before


def test_an_older_copy_of_the_store_refuses_the_start(serve, tmp_path):
    """A database put back from before acknowledged commits (a restored backup, a lost write)
    holds fewer commits than the record beside it."""
    s = serve(queues_yaml(0))
    acknowledged_work(s, sends=5, receives=0)
    s.stop()
    store = tmp_path / "store"
    old = (store / "queues.sqlite3").read_bytes()
    s.restart()
    acknowledged_work(s, sends=5, receives=2)
    s.stop()
    (store / "queues.sqlite3").write_bytes(old)
    before = digest(store)
    assert_refused(refused_start(tmp_path / "queues.yaml", store), "lost acknowledged work")
    assert digest(store) == before


def test_a_second_server_on_the_same_store_refuses_and_the_lock_goes_with_a_killed_one(
        serve, tmp_path):
    s = serve(queues_yaml(3))
    send(s, "first", delivery="recoverable", priority=3)
    store = tmp_path / "store"
    before = digest(store)
    assert_refused(refused_start(tmp_path / "queues.yaml", store), "in use by another server")
    assert digest(store) == before
    send(s, "second", delivery="recoverable", priority=3)  # the first server goes on
    left = rl.available(s.address, QUEUE)
    assert len(left) == 5 and {b"first", b"second"} <= set(left)
    s.kill()  # kill -9: the kernel drops the lock with the process
    s.restart()
    assert rl.available(s.address, QUEUE) == left


# --------------------------------------------------------------------------- a full disk

def mgmt_message_count(client: RpcClient, name: str) -> int:
    """R_QMMgmtGetInfo PROPID_MGMT_QUEUE_MESSAGE_COUNT (qmmgmt, MS-MQMR 3.1.4.1): a read."""
    queue = MgmtObject(MgmtObjectType.MGMT_QUEUE, to_queue_format(parse_format_name(name)))
    out = client.call(c.R_QMMgmtGetInfo(pObjectFormat=queue, cp=1,
                                        aProp=(PROPID_MGMT_QUEUE_MESSAGE_COUNT,),
                                        apVar=(c.PropVariant(VT_NULL),)))
    assert out.status == 0 and not out.raised, hex(out.status)
    return out.apVar[0].value


def refused_send(server, body: str, queue: str = "private$%5Cq") -> tuple[int, dict]:
    """A recoverable send the control API must refuse: its HTTP status and JSON answer."""
    with pytest.raises(urllib.error.HTTPError) as caught:
        send(server, body, queue, delivery="recoverable", priority=3)
    return caught.value.code, json.loads(caught.value.read())


def fill(folder: Path) -> Path:
    """A file that takes every free block of the file system ``folder`` is on."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as f:
        for size in (1 << 16, 1 << 12, 1 << 9, 1):
            try:
                while True:
                    f.write(b"\0" * size)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
    return filler


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB tmpfs mounted for the test (the test is skipped where mounting is refused)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def test_a_full_disk_fails_only_the_calls_that_must_persist_and_keeps_what_it_acknowledged(
        small_disk, tmp_path):
    (tmp_path / "queues.yaml").write_text(
        "queue_manager:\n  computer_name: MQREF\nqueues:\n  - path: private$\\q\n"
        "    messages:\n" + "".join(f"      - {{body: p{i}, delivery: recoverable, "
                                    f"priority: 3}}\n" for i in range(4)))
    s = ServeProcess(args=("--queues", str(tmp_path / "queues.yaml"), "--store",
                           str(small_disk / "store")))
    client = RpcClient(timeout=10)
    try:
        send(s, "kept-before", delivery="recoverable", priority=3)
        filler = fill(small_disk)
        # what writes nothing is not affected
        client.connect(f"ncacn_ip_tcp:127.0.0.1[{s.address[1]}]")
        port = client.call(c.R_GetServerPort())
        assert port.status == s.address[1] and not port.raised
        assert rl.available(s.address, QUEUE) == [b"p0", b"p1", b"p2", b"p3", b"kept-before"]
        assert mgmt_message_count(client, QUEUE) == 5
        send(s, "express", priority=3)  # an express message needs no disk
        # what must be written fails, and is not kept
        for k in range(3):
            status, answer = refused_send(s, f"refused-{k}")
            assert status == 507 and "disk is full" in answer["error"], answer
        session = rl.Session(s.address)
        handle = rl.open_queue(session, QUEUE)
        got = session.call(rl.receive(handle, 1))  # a lock writes nothing
        assert got.status == 0 and rl.body_of(got) == b"p0"
        end = session.call(c.R_EndReceive(phContext=handle, dwAck=c.RR_ACK, dwRequestId=1))
        assert end.status == MQ_ERROR_INSUFFICIENT_RESOURCES
        purge = session.call(c.R_PurgeQueue(phContext=handle))
        assert purge.status == MQ_ERROR_INSUFFICIENT_RESOURCES
        assert rl.available(s.address, QUEUE) == [b"p0", b"p1", b"p2", b"p3", b"kept-before",
                                                  b"express"]
        assert mgmt_message_count(client, QUEUE) == 6
        # the disk is freed: writes succeed again
        filler.unlink()
        send(s, "kept-after", delivery="recoverable", priority=3)
        got = session.call(rl.receive(handle, 2))
        assert rl.body_of(got) == b"p0"
        assert session.call(c.R_EndReceive(phContext=handle, dwAck=c.RR_ACK,
                                           dwRequestId=2)).status == 0
        session.drop()
        client.close()
        s.kill()
        s.restart()
        assert rl.available(s.address, QUEUE) == [b"p1", b"p2", b"p3", b"kept-before",
                                                  b"kept-after"]
    finally:
        client.close()
        s.close()


def test_a_failing_disk_takes_back_each_refused_change_and_serves_no_refused_message(tmp_path):
    """The store's write fails as a failing disk makes it fail (an sqlite3 error in the write
    transaction): each call or request whose change could not be written is answered failed
    and its change taken back; the rest go on; a receive waiting on the queue is not given a
    message whose send failed, nor one whose move failed; after a restart the store holds
    exactly what was acknowledged."""
    (tmp_path / "queues.yaml").write_text(
        "queue_manager:\n  computer_name: MQREF\nqueues:\n  - path: private$\\q\n"
        "    subqueues: [retry]\n    messages:\n"
        + "".join(f"      - {{body: p{i}, delivery: recoverable, priority: 3}}\n"
                  for i in range(3)) + "  - path: private$\\other\n")
    store = str(tmp_path / "store")
    other = "DIRECT=OS:MQREF\\private$\\other"
    retry = "DIRECT=OS:MQREF\\private$\\q;retry"

    def failing_disk():
        raise sqlite3.OperationalError("disk I/O error")

    r = start(port=0, control_port=0,
              control_unauthenticated=True, queues=str(tmp_path / "queues.yaml"), store=store)
    try:
        host, control_port = r.control.address
        control = types.SimpleNamespace(control_url=f"http://{host}:{control_port}")
        send(control, "kept-before", delivery="recoverable", priority=3)
        r.store.write_fault = failing_disk
        client = RpcClient(timeout=10)
        client.connect(f"ncacn_ip_tcp:127.0.0.1[{r.rpc.address[1]}]")
        assert client.call(c.R_GetServerPort()).status == r.rpc.address[1]
        assert mgmt_message_count(client, QUEUE) == 4
        client.close()
        status, answer = refused_send(control, "refused")
        assert status == 503 and "the disk failed" in answer["error"], answer
        made = urllib.request.Request(f"{control.control_url}/queues", method="POST",
                                      data=json.dumps({"path": "private$\\made"}).encode())
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(made, timeout=10)
        assert caught.value.code == 503
        with urllib.request.urlopen(f"{control.control_url}/queues", timeout=10) as listed:
            assert [q["path"] for q in json.loads(listed.read())] == [
                "MQREF\\private$\\q", "MQREF\\private$\\other"]
        session = rl.Session(r.rpc.address)
        handle = rl.open_queue(session, QUEUE)
        assert rl.body_of(session.call(rl.receive(handle, 1))) == b"p0"
        end = session.call(c.R_EndReceive(phContext=handle, dwAck=c.RR_ACK, dwRequestId=1))
        assert end.status == MQ_ERROR_INSUFFICIENT_RESOURCES
        assert session.call(c.R_PurgeQueue(phContext=handle)).status \
            == MQ_ERROR_INSUFFICIENT_RESOURCES
        # a receive waits on the empty queue; a failed send does not serve it, an express
        # send does
        waiting = rl.Session(r.rpc.address)
        other_handle = rl.open_queue(waiting, other)
        call = rl.receive(other_handle, 9, timeout=20_000)
        call_id = waiting.send(call)
        assert refused_send(control, "refused-other", "private$%5Cother")[0] == 503
        send(control, "express-other", "private$%5Cother")
        assert rl.body_of(waiting.result(call_id, call)) == b"express-other"
        # a receive waits on the subqueue; the move that would serve it fails, so it waits on
        mover = rl.Session(r.rpc.address)
        sub = mover.call(c.R_OpenQueueForMove(pQueueFormat=rl.queue_format(retry),
                                              dwAccess=c.MQ_MOVE_ACCESS,
                                              pClientId=uuid.uuid4()))
        retry_handle = rl.open_queue(waiting, retry)
        call = rl.receive(retry_handle, 10, timeout=1_500)
        call_id = waiting.send(call)
        from_handle = rl.open_queue(mover, QUEUE)
        lookup = mover.call(rl.receive(from_handle, 0, action=c.MQ_ACTION_PEEK_CURRENT))
        moved = mover.call(c.R_MoveMessage(phContextFrom=from_handle,
                                           ullContextTo=sub.pMoveContext,
                                           LookupId=lookup.pSequenceId,
                                           pTransactionId=bytes(16)))
        assert moved.status == MQ_ERROR_INSUFFICIENT_RESOURCES
        assert waiting.result(call_id, call).status == MQ_ERROR_IO_TIMEOUT
        assert rl.available(r.rpc.address, retry) == []
        assert rl.available(r.rpc.address, QUEUE) == [b"p0", b"p1", b"p2", b"kept-before"]
        # the disk works again
        r.store.write_fault = None
        send(control, "kept-after", delivery="recoverable", priority=3)
        assert rl.body_of(session.call(rl.receive(handle, 2))) == b"p0"
        assert session.call(c.R_EndReceive(phContext=handle, dwAck=c.RR_ACK,
                                           dwRequestId=2)).status == 0
        for s in (session, waiting, mover):
            s.drop()
    finally:
        r.stop()
    again = start(port=0, queues=str(tmp_path / "queues.yaml"), store=store)
    try:
        assert rl.available(again.rpc.address, QUEUE) == [b"p1", b"p2", b"kept-before",
                                                          b"kept-after"]
        assert rl.available(again.rpc.address, other) == []
        assert rl.available(again.rpc.address, retry) == []
    finally:
        again.stop()


def test_a_commit_answered_as_failed_a_damaged_or_missing_commit_record_refuse_the_start(
        tmp_path):
    """The commit record's other refusals (server/store.py): the database holds the commit a
    failed write was answered for (the disk failed after its frames reached it); the record's
    two slots are both spoiled; the record is gone while the database counts commits. Each
    refuses with one line and changes nothing; the record put back, the store starts."""
    from mqconform.server.store import COMMITS, _record

    yaml_path = tmp_path / "queues.yaml"
    yaml_path.write_text(queues_yaml(3))
    store = tmp_path / "store"
    start(port=0, queues=str(yaml_path), store=str(store)).stop()
    db = sqlite3.connect(store / "queues.sqlite3")
    held = int(db.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()[0])
    db.close()
    record = (store / COMMITS).read_bytes()
    refused = bytearray(record)
    refused[512:512 + 36] = _record(1 << 20, held - 1, held)
    spoiled = bytes(len(record))
    for data, words in ((bytes(refused), f"holds commit {held}, which was answered as failed"),
                        (spoiled, "commit record queues.commits is damaged"),
                        (None, f"has {held} commits but its commit record")):
        if data is None:
            (store / COMMITS).unlink()
        else:
            (store / COMMITS).write_bytes(data)
        before = digest(store)
        with pytest.raises(ServeError, match=words):
            start(port=0, queues=str(yaml_path), store=str(store))
        assert digest(store) == before
    (store / COMMITS).write_bytes(record)
    again = start(port=0, queues=str(yaml_path), store=str(store))
    try:
        assert len(rl.available(again.rpc.address, QUEUE)) == 3
    finally:
        again.stop()
