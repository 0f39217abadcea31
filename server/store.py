"""Durable queues: the reference queue manager's recoverable messages in SQLite (WAL mode), so
that they survive a restart, a crash or ``kill -9`` (``mqconform serve --store DIR``).

What is kept (MS-MQDMPR 3.1.1.12: every attribute of a message is persistent when its
DeliveryGuarantee is Recoverable, MS-MQDMPR/3.1.1.12/R66; an Express message is not, and is
gone after a restart, as in MSMQ):

- each recoverable message in a queue's MessagePositionList that is Available or Locked (a
  lock belongs to a connection or a transaction, which a restart ends, so a locked message
  comes back Available, as the rundown of MS-MQRR 3.1.6.2 or an abort would make it; a
  PurgePending one was purged, a Deleted one moved or consumed), with all its attributes,
  under its queue's path name and its LookupIdentifier, in the list's order;
- the queue manager's SequentialId, so that LookupIdentifiers keep increasing across restarts
  (MS-MQDMPR 3.1.7.1.9: each enqueue takes the next one);
- the queues created through the control API, so that their messages have a queue to return
  to.

When: ``sync`` runs under the server's lock after every call, before its answer is sent, after
each model timer and after each control API request; it writes, in one transaction, what
changed since the last one (only queues whose list changed are compared). So an answer that
says a message was consumed (R_EndReceive ACK, a committed transactional receive, a purge) is
sent only once the deletion is on disk, and a message the control API accepted is on disk
before it says so. ``synchronous`` is FULL by default (each transaction reaches the disk
before the answer: survives power loss); NORMAL survives a process crash and kill -9 only.

First start with an empty DIR: the messages the provisioning file (queues.yaml) put in the
queues are written. Every later start: the queues come from the provisioning file and the
store's own list, but their messages only from the store (the file's messages are not sent
again). A stored message whose queue no longer exists stops the start with an error naming it:
nothing is dropped silently. A start writes nothing but what it must: ``ord`` goes on from the
largest one stored in each queue, so the stored rows keep their order as they are.

Format: table ``messages(queue, lookup_id, ord, message)``; ``message`` is JSON of the
Message's attributes (bytes as hex, enumerations by name, GUIDs as text). Enumerations, named
tuples and dataclasses are named by a type tag, the name the documents give them (the class
name in model/adm.py: ``MessageDeliveryGuarantee``); nothing is executed on reading. Stores
written before the tags named ``module:qualname`` (``model.adm:MessageDeliveryGuarantee``);
they load the same, and the start writes them back with the tags.

One server per store. The server holds an exclusive ``flock`` on the directory DIR itself for
its whole life (the lock is the kernel's: it goes with the process, ``kill -9`` included). A
second server on the same DIR refuses to start, one line and exit 2, before it opens or reads
anything there. Locking the directory rather than a file in it means that a refused start
creates nothing in DIR.

A store that does not lie: the commit record. SQLite reads a WAL up to its first frame whose
checksum is wrong and silently ignores that frame and every one after it: flipped bits in a
committed frame, or a WAL cut short, would undo acknowledged work without a word. So every
write transaction also sets ``meta.commit`` to the next number, and once its COMMIT has
returned, the number is written to ``queues.commits`` beside the database (fsynced, with
``synchronous`` FULL), before the answer that reports the change goes out. The file is
outside the WAL and the database: two fixed 512-octet slots written in turn, each with a write
sequence number and a CRC-32, overwritten in place (a full disk cannot refuse a write that
needs no new block; a torn write spoils one slot, and the other holds the record before it).
It holds the last acknowledged commit and, after a COMMIT that failed, the number of that
commit ("refused"). Why this is enough: an answer is sent only after the record names its
commit, so every commit a client was told of is at most the recorded one; SQLite keeps
commits in order, so a store that lost any of them holds a ``meta.commit`` below the record.
The number in the database can be one above the record (a crash between the COMMIT and the
record's write: that answer was never sent), never below.

At every start, before SQLite may touch DIR (a read-write open of a damaged WAL would
checkpoint its good prefix into the database and delete it), the database and its WAL are
copied to a temporary directory and the copy is opened: ``PRAGMA integrity_check`` must
answer ok, and its ``meta.commit`` must be at least the recorded one. The start is refused,
one line on stderr and exit 2, with nothing in DIR changed, when:

- the database is damaged or truncated (integrity_check), or not a database at all;
- it holds fewer commits than were acknowledged (a damaged WAL, a WAL or database cut short or
  replaced by an older copy, a missing database);
- it holds a commit that was answered as failed (the disk failed after the frames reached it,
  so SQLite would bring back a change its callers were told was not made);
- the commit record is missing while the database has commits, or unreadable.

A store written before the commit record existed starts, and is counted from then on.

A full or failing disk. A write that fails (SQLITE_FULL, SQLITE_IOERR, ...) is rolled back and
reported as ``StoreWriteError``; ``revert`` then takes the model's queues back to what the
store holds: a message added since the last write is taken out again (as Transaction Abort
takes out an enqueue, MS-MQDMPR 3.1.4.5), and one deleted, purged or moved since then is put
back where its order key places it, Available (or Locked again when a purge left it
PurgePending under its lock; a Time To Be Received timer that had ended starts again, as at a
restart). Express messages are taken back with the rest: a call answered failed changed
nothing. (A queue journal's copy of a message whose receive is taken back stays: journals
are not kept by the store.) The caller answers the call failed (server/app.py:
MQ_ERROR_INSUFFICIENT_RESOURCES; the control API: 507 or 503). Memory and disk agree again
after every failed write, so a call that changes nothing kept (R_GetServerPort, peeks,
qmmgmt reads, receives that only lock, express sends) writes nothing and is not affected.
The one write that is not the caller's own change, SequentialId alone (an express message
took a LookupIdentifier), is tried and, on failure, left for the next write: express messages
do not outlive the process, and at a restart SequentialId is raised past every stored
message's LookupIdentifier, so a recoverable message's identifier is never given twice.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import logging
import os
import shutil
import sqlite3
import struct
import tempfile
import time
import uuid
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mqconform.model import adm
from mqconform.model.adm import (
    LocalMessage,
    MessageDeliveryGuarantee,
    MessagePosition,
    MessagePositionState,
)
from mqconform.model.consumed import (
    count_bytes,
    message_position_available,
    time_to_be_received_timer_key,
    time_to_be_received_timer_start,
)
from mqconform.model.message_ops import restore_message

log = logging.getLogger(__name__)

FORMAT = 1
#: Message attributes that are references to other ADM elements, not values
REFERENCES = frozenset({"message_position_reference"})


class StoreError(Exception):
    """The store cannot be opened, is damaged, is another server's, or does not match the
    provisioning: one line, exit 2."""


# --------------------------------------------------------------------------- the value codec

def encode(value: Any) -> Any:
    """An attribute value as JSON data (module doc)."""
    if value is None or isinstance(value, bool | str | float):
        return value
    if isinstance(value, enum.Enum):
        return {"enum": _name(type(value)), "member": value.name}
    if isinstance(value, int):
        return value
    if isinstance(value, bytes | bytearray):
        return {"hex": bytes(value).hex()}
    if isinstance(value, uuid.UUID):
        return {"uuid": str(value)}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {"tuple": _name(type(value)), "items": [encode(v) for v in value]}
    if isinstance(value, tuple):
        return {"items": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"class": _name(type(value)),
                "fields": {f.name: encode(getattr(value, f.name))
                           for f in dataclasses.fields(value) if f.name not in REFERENCES
                           and not f.metadata.get("bookkeeping")}}
    raise StoreError(f"cannot store a {type(value).__name__}: {value!r:.80}")


def decode(data: Any) -> Any:
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    if "enum" in data:
        return _class(data["enum"])[data["member"]]
    if "hex" in data:
        return bytes.fromhex(data["hex"])
    if "uuid" in data:
        return uuid.UUID(data["uuid"])
    if "tuple" in data:
        return _class(data["tuple"])(*[decode(v) for v in data["items"]])
    if "items" in data:
        return tuple(decode(v) for v in data["items"])
    if "class" in data:
        return _class(data["class"])(**{k: decode(v) for k, v in data["fields"].items()})
    raise StoreError(f"unreadable value {data!r:.80}")


#: the type tags: the ADM's classes by the names the documents give them
TYPES: dict[str, type] = {
    name: value for name, value in vars(adm).items()
    if isinstance(value, type) and value.__module__ == adm.__name__}


def _name(cls: type) -> str:
    if TYPES.get(cls.__qualname__) is not cls:
        raise StoreError(f"cannot store a {cls.__qualname__}: not an element of the ADM")
    return cls.__qualname__


def _class(name: str) -> Any:
    """The class of a type tag; the older ``module:qualname`` form (``model.adm:X``, from
    before the package was named mqconform) names the same classes."""
    module, colon, qualname = name.rpartition(":")
    if colon and module not in ("model.adm", adm.__name__):
        raise StoreError(f"the store names {name!r}, not a class of the model")
    found = TYPES.get(qualname)
    if found is None:
        raise StoreError(f"the store names {name!r}, not a class of the model")
    return found


# --------------------------------------------------------------------------- the store

DATABASE = "queues.sqlite3"
#: the commit record (module doc)
COMMITS = "queues.commits"
_SLOT = 512
_RECORD = struct.Struct("<8sQQQ")  # magic, write sequence, acknowledged, refused
_MAGIC = b"MQCOMMIT"
_CRC = struct.Struct("<I")
#: the low 56 bits of a LookupIdentifier: the SequentialId it was made from (3.1.7.1.9), the
#: value a receive answers as pSequenceId
SEQUENCE_MASK = (1 << 56) - 1
#: SQLite's primary result code for a full disk
SQLITE_FULL = 13


class StoreWriteError(Exception):
    """A write the store could not make (a full or failing disk); nothing of it was kept.
    ``full``: the disk is full (SQLITE_FULL), else it failed otherwise."""

    def __init__(self, directory: Path, cause: BaseException):
        code = getattr(cause, "sqlite_errorcode", None)
        self.full = (code is not None and code & 0xFF == SQLITE_FULL) or "full" in str(cause)
        what = "the disk is full" if self.full else "the disk failed"
        super().__init__(f"store {directory}: cannot write, {what} ({cause}); the change was "
                         f"not kept")


def _queues(env: Any) -> dict[str, Any]:
    """Every local queue and subqueue that has a path name, by path name (lower case)."""
    out = {}
    for q in env.local_queue_manager.queue_collection:
        if q.pathname:
            out[q.pathname.lower()] = q
            for s in q.subqueue_collection:
                out[s.pathname.lower()] = s
    return out


def _recoverable(message: Any) -> bool:
    return message.delivery_guarantee is MessageDeliveryGuarantee.Recoverable


#: the states of a position whose message is still the queue's: a Deleted position stays in
#: the list for a while (a move marks it so, 3.1.4.4), and a PurgePending one is gone once
#: its lock ends (the purge was answered MQ_OK)
_KEPT = frozenset({MessagePositionState.Available, MessagePositionState.Locked})


def _signed(n: int) -> int:
    return n - (1 << 64) if n >= 1 << 63 else n


def _kept(queue: Any) -> dict[int, Any]:
    """The queue's positions whose message is still the queue's, by LookupIdentifier."""
    return {p.message_reference.lookup_identifier: p for p in queue.message_position_list
            if p.state in _KEPT}


_AVAILABLE, _LOCKED = MessagePositionState.Available, MessagePositionState.Locked
_RECOVERABLE = MessageDeliveryGuarantee.Recoverable


def _split(queue: Any) -> tuple[dict[int, Any], dict[int, Any]]:
    """The queue's kept positions of recoverable messages, and its kept express messages, by
    LookupIdentifier (one pass: it runs for every write)."""
    recoverable: dict[int, Any] = {}
    express: dict[int, Any] = {}
    for position in queue.message_position_list:
        state = position.state
        if state is _AVAILABLE or state is _LOCKED:
            message = position.message_reference
            if message.delivery_guarantee is _RECOVERABLE:
                recoverable[message.lookup_identifier] = position
            else:
                express[message.lookup_identifier] = message
    return recoverable, express


def _lock(directory: Path) -> int:
    """An exclusive flock on the directory itself, held by the returned descriptor."""
    import fcntl

    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise StoreError(f"store {directory} is in use by another server (one server per "
                         f"store); nothing was started") from None
    except OSError as exc:
        os.close(fd)
        raise StoreError(f"store {directory}: cannot lock it: {exc.strerror or exc}") from None
    return fd


def _record(sequence: int, acknowledged: int, refused: int) -> bytes:
    body = _RECORD.pack(_MAGIC, sequence, acknowledged, refused)
    return body + _CRC.pack(zlib.crc32(body))


class Store:
    """One queue manager's store in ``directory`` (module doc)."""

    def __init__(self, directory: str | Path, synchronous: str = "FULL"):
        if synchronous not in ("FULL", "NORMAL"):
            raise StoreError(f"synchronous: FULL or NORMAL, not {synchronous!r}")
        self.directory = Path(directory)
        self.synchronous = synchronous
        #: called inside every write transaction just before its COMMIT; what it raises (an
        #: sqlite3.Error) fails the write as a failing disk would: how the tests stand for one
        self.write_fault: Callable[[], None] | None = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"store {self.directory}: {exc.strerror or exc}") from None
        self._lock_fd = _lock(self.directory)
        self._commits_fd = -1
        self.db: sqlite3.Connection | None = None
        try:
            self._open()
        except BaseException:
            self.close()
            raise

    def _open(self) -> None:
        recorded = self.check()
        try:
            if recorded is None:
                self._create_commit_record()
                recorded = (0, 0, 0)
            self._record_sequence = recorded[0]
            self._commits_fd = os.open(self.directory / COMMITS, os.O_RDWR)
            self.db = sqlite3.connect(self.directory / DATABASE, isolation_level=None,
                                      check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute(f"PRAGMA synchronous={self.synchronous}")
            self.db.executescript("""
                CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS queues(path TEXT PRIMARY KEY, spec TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS messages(
                    queue TEXT NOT NULL, lookup_id INTEGER NOT NULL, ord INTEGER NOT NULL,
                    message TEXT NOT NULL, PRIMARY KEY (queue, lookup_id));
            """)
            meta = dict(self.db.execute("SELECT key, value FROM meta"))
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"store {self.directory}: {exc}") from None
        if meta and int(meta.get("format", 0)) != FORMAT:
            raise StoreError(f"store {self.directory}: format {meta.get('format')} is not "
                             f"{FORMAT}")
        self.initialized = meta.get("initialized") == "1"
        self._sequential_id = int(meta.get("sequential_id", 0))
        self._sequential_retry = 0.0
        self._commit = int(meta.get("commit", 0))
        #: path -> (id of its list, list version) when the store last matched it
        self._seen: dict[str, tuple[int, int]] = {}
        #: path -> the messages the store holds for it, by LookupIdentifier
        self._written: dict[str, dict[int, Any]] = {}
        #: path -> its express messages when the store last matched it (kept in memory only:
        #: a call that fails is taken back whole, express messages included)
        self._express: dict[str, dict[int, Any]] = {}
        #: path -> the largest ``ord`` stored before this start (new rows go on from it)
        self._ord_base: dict[str, int] = {}

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None
        for name in ("_commits_fd", "_lock_fd"):
            fd = getattr(self, name, -1)
            if fd >= 0:
                os.close(fd)
                setattr(self, name, -1)

    # -- the checks of a start (module doc)
    def _read_commit_record(self) -> tuple[int, int, int] | None:
        """(write sequence, acknowledged, refused) of the newest whole slot of the commit
        record; None when there is no record."""
        path = self.directory / COMMITS
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"store {self.directory}: cannot read {COMMITS}: "
                             f"{exc.strerror or exc}") from None
        slots = []
        for k in (0, 1):
            chunk = data[k * _SLOT:k * _SLOT + _RECORD.size + _CRC.size]
            if len(chunk) != _RECORD.size + _CRC.size:
                continue
            body, (crc,) = chunk[:_RECORD.size], _CRC.unpack(chunk[_RECORD.size:])
            magic, sequence, acknowledged, refused = _RECORD.unpack(body)
            if magic == _MAGIC and crc == zlib.crc32(body):
                slots.append((sequence, acknowledged, refused))
        if not slots:
            raise StoreError(f"store {self.directory}: its commit record {COMMITS} is damaged, "
                             f"so what was acknowledged cannot be checked; nothing was started, "
                             f"nothing changed")
        return max(slots)

    def check(self) -> tuple[int, int, int] | None:
        """Refuse a damaged store (module doc) with StoreError; changes nothing in the
        directory. Returns the commit record (None: the store has none yet)."""
        where = f"store {self.directory}"
        unchanged = "nothing was started, nothing changed"
        recorded = self._read_commit_record()
        acknowledged, refused = (recorded[1], recorded[2]) if recorded else (0, 0)
        database = self.directory / DATABASE
        wal = self.directory / (DATABASE + "-wal")
        if not database.exists():
            if acknowledged:
                raise StoreError(f"{where}: the database {DATABASE} is missing, yet "
                                 f"{acknowledged} writes were acknowledged; {unchanged}")
            if wal.exists():
                raise StoreError(f"{where}: a WAL without its database {DATABASE}; {unchanged}")
            return recorded
        try:
            with tempfile.TemporaryDirectory(prefix="mqconform-store-check-") as scratch:
                copy = Path(scratch) / DATABASE
                shutil.copyfile(database, copy)
                if wal.exists():
                    shutil.copyfile(wal, Path(scratch) / (DATABASE + "-wal"))
                db = sqlite3.connect(copy, isolation_level=None)
                try:
                    problems = [row[0] for row in db.execute("PRAGMA integrity_check")]
                    held = None
                    if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' "
                                  "AND name = 'meta'").fetchone():
                        row = db.execute("SELECT value FROM meta WHERE key = 'commit'"
                                         ).fetchone()
                        held = int(row[0]) if row else None
                finally:
                    db.close()
        except sqlite3.Error as exc:
            raise StoreError(f"{where}: the database is damaged or unreadable ({exc}); "
                             f"{unchanged}") from None
        except OSError as exc:
            raise StoreError(f"{where}: cannot check it: {exc.strerror or exc}") from None
        if problems != ["ok"]:
            more = f" and {len(problems) - 1} more problem(s)" if len(problems) > 1 else ""
            raise StoreError(f"{where}: the database is damaged ({problems[0]}{more}); "
                             f"{unchanged}")
        if recorded is None:
            if held is not None:
                raise StoreError(f"{where}: the database has {held} commits but its commit "
                                 f"record {COMMITS} is missing; {unchanged}")
            return None  # a store from before the commit record
        if (held or 0) < acknowledged:
            raise StoreError(f"{where} has lost acknowledged work: it holds {held or 0} of the "
                             f"{acknowledged} commits it acknowledged (a damaged or truncated "
                             f"WAL or database, or an older copy); {unchanged}")
        if refused and (held or 0) >= refused:
            raise StoreError(f"{where} holds commit {refused}, which was answered as failed "
                             f"when the disk failed under it; {unchanged}")
        return recorded

    def _create_commit_record(self) -> None:
        """The record of a store that has none: written whole under another name, then
        renamed, so that it is either absent or complete."""
        path = self.directory / COMMITS
        new = self.directory / (COMMITS + ".new")
        data = bytearray(2 * _SLOT)
        data[0:_RECORD.size + _CRC.size] = _record(0, 0, 0)
        fd = os.open(new, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, bytes(data))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(new, path)
        directory = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)

    def _write_commit_record(self, acknowledged: int, refused: int) -> None:
        """The commit record after a write (module doc). A failure is logged, not raised: the
        COMMIT it follows stands, and the check at the next start only sees less."""
        self._record_sequence += 1
        sequence = self._record_sequence
        try:
            os.pwrite(self._commits_fd, _record(sequence, acknowledged, refused),
                      (sequence % 2) * _SLOT)
            if self.synchronous == "FULL":
                os.fdatasync(self._commits_fd)
        except OSError as exc:
            log.error("store %s: cannot write the commit record %s: %s", self.directory,
                      COMMITS, exc)

    # -- writing
    def _write(self, statements: Callable[[sqlite3.Connection], None]) -> None:
        """One write transaction: ``statements`` and the next commit number; the commit
        record follows. StoreWriteError when SQLite cannot write it (all rolled back)."""
        db = self.db
        number = self._commit + 1
        try:
            db.execute("BEGIN IMMEDIATE")
            statements(db)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('commit', ?)", (str(number),))
            if self.write_fault is not None:
                self.write_fault()
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            self._write_commit_record(self._commit, number)
            raise StoreWriteError(self.directory, exc) from None
        except BaseException:
            self._rollback()
            raise
        self._commit = number
        self._write_commit_record(number, 0)

    def _rollback(self) -> None:
        # SQLite rolls a transaction back by itself after some errors (SQLITE_FULL)
        if self.db.in_transaction:
            try:
                self.db.execute("ROLLBACK")
            except sqlite3.Error as exc:
                log.error("store %s: rollback failed: %s", self.directory, exc)

    # -- start
    def attach(self, env: Any, create_queue: Any) -> int:
        """Bring ``env`` (provisioned from the file) and the store together (module doc);
        ``create_queue(env, spec)`` makes a queue from a control API spec. Returns the number
        of messages restored."""
        for path, spec in self.db.execute("SELECT path, spec FROM queues ORDER BY rowid"):
            if path not in _queues(env):
                create_queue(env, json.loads(spec))
        queues = _queues(env)
        if not self.initialized:
            plan = self._plan(env)

            def first(db: sqlite3.Connection) -> None:
                self._statements(plan)(db)
                db.execute("INSERT OR REPLACE INTO meta VALUES ('format', ?), "
                           "('initialized', '1')", (str(FORMAT),))
            try:
                self._write(first)
            except StoreWriteError as exc:
                raise StoreError(str(exc)) from None
            self._settled(env, plan)
            self.initialized = True
            return 0
        try:
            stored = self.db.execute("SELECT queue, lookup_id, ord, message FROM messages "
                                     "ORDER BY queue, ord").fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"store {self.directory}: {exc}") from None
        missing = sorted({q for q, _, _, _ in stored if q not in queues})
        if missing:
            raise StoreError(f"store {self.directory} holds messages for queue(s) the "
                             f"provisioning does not define: {', '.join(missing)}; define them "
                             f"again, or start without this store")
        for queue in queues.values():  # the file's messages were sent in an earlier life
            for position in list(queue.message_position_list):
                queue.message_position_list.remove(position)
            queue._positions_by_lookup_id = None
            queue.total_bytes = 0  # restore_message counts the stored ones
        qm = env.local_queue_manager
        old_tags = []
        for path, lookup_id, order, text in stored:
            where = f"store {self.directory}: message {lookup_id} of {path}"
            try:
                message = decode(json.loads(text))
            except StoreError as exc:
                raise StoreError(f"{where}: {exc}") from None
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                raise StoreError(f"{where} is unreadable ({type(exc).__name__}: {exc}); "
                                 f"nothing was started, nothing changed") from None
            if not isinstance(message, LocalMessage):
                raise StoreError(f"{where}: a {type(message).__name__} where a message was "
                                 f"expected")
            restore_message(env, queues[path], message)
            self._written.setdefault(path, {})[message.lookup_identifier] = message
            self._ord_base[path] = max(self._ord_base.get(path, 0), order)
            if '"model.adm:' in text:
                old_tags.append((json.dumps(encode(message)), path, lookup_id))
        qm.sequential_id = max(qm.sequential_id, self._sequential_id)
        for path, queue in queues.items():
            plist = queue.message_position_list
            self._seen[path] = (id(plist), plist.version)
        if old_tags:  # written back with the tags; they load the same if this cannot be
            try:
                self._write(lambda db: db.executemany(
                    "UPDATE messages SET message = ? WHERE queue = ? AND lookup_id = ?",
                    old_tags))
            except StoreWriteError as exc:
                log.warning("%s", exc)
        return len(stored)

    def remember_queue(self, env: Any, pathname: str, spec: dict) -> None:
        """A queue the control API created (its spec, replayed at the next start), written
        with its messages in one transaction."""
        plan = self._plan(env)
        statements = self._statements(plan)

        def run(db: sqlite3.Connection) -> None:
            statements(db)
            db.execute("INSERT OR REPLACE INTO queues VALUES (?, ?)",
                       (pathname.lower(), json.dumps(spec)))
        self._write(run)
        self._settled(env, plan)

    def forget_queue(self, queue: Any) -> None:
        """Before the queue is deleted: its spec and the messages of it and its subqueues
        go, in one write."""
        paths = [queue.pathname.lower()] + [s.pathname.lower()
                                            for s in queue.subqueue_collection if s.pathname]

        def statements(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM queues WHERE path = ?", (paths[0],))
            db.executemany("DELETE FROM messages WHERE queue = ?", [(p,) for p in paths])
        self._write(statements)
        for path in paths:
            self._written.pop(path, None)
            self._express.pop(path, None)
            self._seen.pop(path, None)

    def forget_all(self) -> None:
        """Before every queue is deleted (the control API's reset): one write."""
        def statements(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM queues")
            db.execute("DELETE FROM messages")
        self._write(statements)
        self._written.clear()
        self._express.clear()
        self._seen.clear()

    # -- running
    def _plan(self, env: Any, rewrite: tuple[str, int] | None = None) -> dict:
        """What changed since the last write (module doc): ``changes`` to write, per queue
        whose recoverable messages changed; ``quiet``, the queues whose list changed but not
        what is written (a lock, an express message), matched once the write is made."""
        queues = _queues(env)
        changes: list[tuple[str, Any, dict[int, Any], set[int], dict[int, Any]]] = []
        quiet: list[tuple[str, Any, dict[int, Any]]] = []
        for path, queue in queues.items():
            plist = queue.message_position_list
            if self._seen.get(path) == (id(plist), plist.version):
                continue
            current, express = _split(queue)
            written = self._written.get(path, {})
            added = {i: current[i] for i in current.keys() - written.keys()}
            removed = written.keys() - current.keys()
            if added or removed:
                changes.append((path, queue, added, removed, express))
            else:
                quiet.append((path, queue, express))
        gone = [p for p in self._written if p not in queues]
        fix = None
        if rewrite is not None:
            path, lookup_id = rewrite[0].lower(), rewrite[1]
            position = _kept(queues[path]).get(lookup_id) if path in queues else None
            if position is not None and lookup_id in self._written.get(path, {}):
                text = json.dumps(encode(position.message_reference))
                row = self.db.execute("SELECT message FROM messages WHERE queue = ? AND "
                                      "lookup_id = ?", (path, _signed(lookup_id))).fetchone()
                if row is None or row[0] != text:  # an attribute the call changed
                    fix = (path, lookup_id, text)
        return {"changes": changes, "quiet": quiet, "gone": gone, "fix": fix,
                "sequential_id": env.local_queue_manager.sequential_id}

    def _statements(self, plan: dict) -> Callable[[sqlite3.Connection], None]:
        def run(db: sqlite3.Connection) -> None:
            for path, queue, added, removed, _ in plan["changes"]:
                base = self._ord_base.get(path, 0)
                plist = queue.message_position_list
                db.executemany("DELETE FROM messages WHERE queue = ? AND lookup_id = ?",
                               [(path, _signed(i)) for i in removed])
                # ord: the list's own order of arrival, which a restart's restore follows
                db.executemany("INSERT OR REPLACE INTO messages VALUES (?, ?, ?, ?)",
                               [(path, _signed(i), base + plist.arrival_of(p),
                                 json.dumps(encode(p.message_reference)))
                                for i, p in added.items()])
            for path in plan["gone"]:
                db.execute("DELETE FROM messages WHERE queue = ?", (path,))
            if plan["fix"] is not None:
                path, lookup_id, text = plan["fix"]
                db.execute("UPDATE messages SET message = ? WHERE queue = ? AND lookup_id = ?",
                           (text, path, _signed(lookup_id)))
            if plan["sequential_id"] != self._sequential_id:
                db.execute("INSERT OR REPLACE INTO meta VALUES ('sequential_id', ?)",
                           (str(plan["sequential_id"]),))
        return run

    def _matched(self, plan: dict) -> None:
        """The queues that needed no write match the store again."""
        for path, queue, express in plan["quiet"]:
            plist = queue.message_position_list
            self._seen[path] = (id(plist), plist.version)
            self._express[path] = express

    def _settled(self, env: Any, plan: dict) -> None:
        """The bookkeeping once ``plan`` is on disk."""
        self._matched(plan)
        for path, queue, added, removed, express in plan["changes"]:
            plist = queue.message_position_list
            self._seen[path] = (id(plist), plist.version)
            self._express[path] = express
            written = self._written.setdefault(path, {})
            for i in removed:
                written.pop(i, None)
            for i, p in added.items():
                written[i] = p.message_reference
        for path in plan["gone"]:
            self._written.pop(path, None)
            self._express.pop(path, None)
            self._seen.pop(path, None)
        self._sequential_id = plan["sequential_id"]

    def sync(self, env: Any, rewrite: tuple[str, int] | None = None) -> None:
        """Write what changed since the last sync, in one transaction (module doc).
        ``rewrite``: (queue path, lookup id) of a message whose attributes a call may have
        changed. StoreWriteError when it cannot be written: nothing of it is kept, and the
        model still holds the change (``revert`` takes it back)."""
        plan = self._plan(env, rewrite)
        if not (plan["changes"] or plan["gone"] or plan["fix"]):
            self._matched(plan)
            if (plan["sequential_id"] != self._sequential_id
                    and time.monotonic() >= self._sequential_retry):
                try:  # SequentialId alone (module doc): tried, and left for the next write
                    self._write(self._statements(plan))
                except StoreWriteError as exc:
                    log.warning("%s (SequentialId %d, written with the next change)", exc,
                                plan["sequential_id"])
                    self._sequential_retry = time.monotonic() + 1.0  # not at every call
                    return
                self._sequential_id = plan["sequential_id"]
            return
        self._write(self._statements(plan))
        self._settled(env, plan)

    def revert(self, env: Any) -> set[int]:
        """After a failed write: the model's queues as they were at the last write, which
        is what the store holds (module doc), their express messages included. Returns the
        SequentialIds (LookupIdentifier & SEQUENCE_MASK) of the messages taken out, so that
        a receive that was given one of them can be run again."""
        queues = _queues(env)
        qm = env.local_queue_manager
        known = {path: {**self._written.get(path, {}), **self._express.get(path, {})}
                 for path in queues}
        taken_out: set[int] = set()
        for path, queue in queues.items():
            for lookup_id, position in _kept(queue).items():
                if lookup_id not in known[path]:
                    _take_out(env, qm, queue, position)
                    taken_out.add(lookup_id & SEQUENCE_MASK)
        for path in self._written.keys() - queues.keys():
            log.error("store %s: queue %s is gone from memory, its stored messages stay "
                      "stored", self.directory, path)
        for path, queue in queues.items():
            kept = _kept(queue)
            for lookup_id, message in known[path].items():
                if lookup_id not in kept:
                    _put_back(env, queue, message)
        for path, queue in queues.items():
            plist = queue.message_position_list
            self._seen[path] = (id(plist), plist.version)
        return taken_out


def _take_out(env: Any, qm: Any, queue: Any, position: Any) -> None:
    """A message the store does not hold leaves the queue as if it had never come: no
    transaction holds it, it is unlinked and its bytes and its Time To Be Received timer
    go (as Transaction Abort takes out an enqueue, MS-MQDMPR 3.1.4.5)."""
    for transaction in qm.transaction_collection:
        operations = transaction.transactional_operation_collection
        for operation in [o for o in operations if o.message_position_reference is position]:
            operations.remove(operation)
    count_bytes(queue, position, False)
    position.state = MessagePositionState.Deleted
    queue.message_position_list.remove(position)
    message = position.message_reference
    index = queue._positions_by_lookup_id
    if index is not None and index.get(message.lookup_identifier) is position:
        del index[message.lookup_identifier]
    if message.message_position_reference is position:
        env.cancel_timer(time_to_be_received_timer_key(message))


def _put_back(env: Any, queue: Any, message: Any) -> None:
    """A message the store holds comes back to its queue where its order key places it:
    Locked again if a purge left it PurgePending under its lock, else Available (Message
    Position Available, MS-MQDMPR 3.1.7.2.2, which also serves a waiting reader)."""
    candidates = [message.message_position_reference]
    candidates += [p for p in queue.message_position_list if p.message_reference is message]
    position = next((p for p in candidates
                     if p is not None and p.queue_reference is queue), None)
    if position is None:
        position = MessagePosition(message_reference=message, queue_reference=queue)
    if position.state is MessagePositionState.PurgePending and position._linked:
        position.state = MessagePositionState.Locked
        message.message_position_reference = position
        return
    queue.message_position_list.reinsert(position)
    index = queue._positions_by_lookup_id
    if index is not None:
        index[message.lookup_identifier] = position
    message.message_position_reference = position
    if env.timer_deadline(time_to_be_received_timer_key(message)) is None:
        time_to_be_received_timer_start(env, message)
    message_position_available(env, queue, position)
