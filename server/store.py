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
nothing is dropped silently.

Format: table ``messages(queue, lookup_id, ord, message)``; ``message`` is JSON of the
Message's attributes (bytes as hex, enumerations by name, GUIDs as text). Enumerations, named
tuples and dataclasses are named by a type tag, the name the documents give them (the class
name in model/adm.py: ``MessageDeliveryGuarantee``); nothing is executed on reading. Stores
written before the tags named ``module:qualname`` (``model.adm:MessageDeliveryGuarantee``);
they load the same.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import sqlite3
import uuid
from pathlib import Path
from typing import Any

from mqconform.model import adm
from mqconform.model.adm import LocalMessage, MessageDeliveryGuarantee, MessagePositionState
from mqconform.model.message_ops import restore_message

FORMAT = 1
#: Message attributes that are references to other ADM elements, not values
REFERENCES = frozenset({"message_position_reference"})


class StoreError(Exception):
    """The store cannot be opened or does not match the provisioning: one line, exit 2."""


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


class Store:
    """One queue manager's store in ``directory`` (module doc)."""

    def __init__(self, directory: str | Path, synchronous: str = "FULL"):
        if synchronous not in ("FULL", "NORMAL"):
            raise StoreError(f"synchronous: FULL or NORMAL, not {synchronous!r}")
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.directory / "queues.sqlite3",
                                      isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute(f"PRAGMA synchronous={synchronous}")
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
        #: path -> (id of its list, list version) and the lookup ids written for it
        self._seen: dict[str, tuple[int, int]] = {}
        self._written: dict[str, set[int]] = {}

    def close(self) -> None:
        self.db.close()

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
            self.sync(env)
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('format', ?), "
                            "('initialized', '1')", (str(FORMAT),))
            self.initialized = True
            return 0
        try:
            stored = self.db.execute("SELECT queue, lookup_id, message FROM messages "
                                     "ORDER BY queue, ord").fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"store {self.directory}: {exc}") from None
        missing = sorted({q for q, _, _ in stored if q not in queues})
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
        for path, lookup_id, text in stored:
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
        qm.sequential_id = max(qm.sequential_id, self._sequential_id)
        self._seen.clear()
        self._written.clear()
        self.db.execute("DELETE FROM messages")  # written again with the new order
        self.sync(env)
        return len(stored)

    def remember_queue(self, pathname: str, spec: dict) -> None:
        """A queue the control API created (its spec, replayed at the next start)."""
        self.db.execute("INSERT OR REPLACE INTO queues VALUES (?, ?)",
                        (pathname.lower(), json.dumps(spec)))

    def forget_queue(self, pathname: str) -> None:
        self.db.execute("DELETE FROM queues WHERE path = ?", (pathname.lower(),))

    # -- running
    def sync(self, env: Any, rewrite: tuple[str, int] | None = None) -> None:
        """Write what changed since the last sync, in one transaction (module doc).
        ``rewrite``: (queue path, lookup id) of a message whose attributes a call changed."""
        queues = _queues(env)
        qm = env.local_queue_manager
        changes: list[tuple[str, dict[int, Any], set[int]]] = []
        for path, queue in queues.items():
            plist = queue.message_position_list
            if self._seen.get(path) == (id(plist), plist.version):
                continue
            # ord: the list's own order of arrival, which a restart's restore follows
            current = {p.message_reference.lookup_identifier: (plist.arrival_of(p),
                                                               p.message_reference)
                       for p in plist
                       if p.state in _KEPT and _recoverable(p.message_reference)}
            written = self._written.get(path, set())
            added = {i: current[i] for i in current.keys() - written}
            removed = written - current.keys()
            if added or removed:
                changes.append((path, added, removed))
            else:  # a lock taken or released: nothing to write
                self._seen[path] = (id(plist), plist.version)
        gone = [p for p in self._written if p not in queues]
        fix = None
        if rewrite is not None:
            path, lookup_id = rewrite[0].lower(), rewrite[1]
            position = None
            if path in queues:
                for p in queues[path].message_position_list:
                    if p.message_reference.lookup_identifier == lookup_id:
                        position = p
                        break
            if position is not None and _recoverable(position.message_reference):
                fix = (path, lookup_id, position.message_reference)
        if not changes and not gone and fix is None and qm.sequential_id == self._sequential_id:
            return
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            for path, added, removed in changes:
                db.executemany("DELETE FROM messages WHERE queue = ? AND lookup_id = ?",
                               [(path, _signed(i)) for i in removed])
                db.executemany("INSERT OR REPLACE INTO messages VALUES (?, ?, ?, ?)",
                               [(path, _signed(i), k, json.dumps(encode(m)))
                                for i, (k, m) in added.items()])
            for path in gone:
                db.execute("DELETE FROM messages WHERE queue = ?", (path,))
            if fix is not None:
                db.execute("UPDATE messages SET message = ? WHERE queue = ? AND lookup_id = ?",
                           (json.dumps(encode(fix[2])), fix[0], _signed(fix[1])))
            if qm.sequential_id != self._sequential_id:
                db.execute("INSERT OR REPLACE INTO meta VALUES ('sequential_id', ?)",
                           (str(qm.sequential_id),))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        for path, added, removed in changes:
            plist = queues[path].message_position_list
            self._seen[path] = (id(plist), plist.version)
            self._written[path] = (self._written.get(path, set()) - removed) | set(added)
        for path in gone:
            self._written.pop(path, None)
            self._seen.pop(path, None)
        self._sequential_id = qm.sequential_id
