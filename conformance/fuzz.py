"""Fuzzing a RemoteRead / qmmgmt endpoint: malformed PDUs and NDR stubs, each on a connection of
its own, while a canary session on another connection checks that the server still serves.

    fuzzer = Fuzzer(("127.0.0.1", port), queue="DIRECT=OS:MQREF\\private$\\fuzz")
    with fuzzer.canary():
        for i in range(3000):
            fuzzer.run(mutation(i, seed=1))
    fuzzer.findings  # what went wrong, with the input that did it

Inputs (``Input``: what is sent on one fresh connection, and how the connection ends):

- **Mutations** (``mutation(i, seed)``): the request stubs of the golden pcaps
  (captures/golden, every opnum of both interfaces in NDR and NDR64), with live context handles
  put where the golden ones were (a prelude opens a queue on the connection first), then
  changed: bits flipped, aligned words set to boundary values (conformant sizes, offsets,
  referent IDs: NULL and wild pointers), truncated, extended, spliced with another stub, sent
  under another opnum or transfer syntax, with a stale, zero or random context handle; and
  PDU-level faults: wrong frag_length (short, long, past the data), bad version, drep, PDU
  type or flags, an auth trailer that lies, a huge alloc_hint, unknown presentation contexts,
  fragments out of order, duplicated, missing their first or last, interleaved with another
  call, binds to unknown interfaces and transfer syntaxes, requests before any bind, PDUs only
  a server sends, cancels and orphans of calls that do not exist, a hundred calls at once,
  plain garbage; and another client's values: a bind naming an association group it was not
  issued (none, a random id, 0xDEADBEEF), then calls through the context handle, cursor or
  move context of a victim session (``Fuzzer.victim``, a connection of its own). Input ``i``
  of ``seed`` is the same on every run (``random.Random``), so a finding is replayed by its
  number.
- **Structural** (``structural()``): a Hypothesis strategy of inputs built field by field
  (PDU header fields, context ids, opnums 0-255, stubs from the golden ones with words set to
  generated values, fragmentations); tests/conformance/test_fuzz.py runs it under Hypothesis,
  so a finding is shrunk to a minimal input.

Findings (``Finding``): the server process died or logged a crash (``health`` says so: an
exception out of a connection's thread or out of the handler), a valid bind or R_OpenQueue in
a prelude failed, or the canary failed (a round of R_OpenQueue, R_StartReceive peek of the
queue's first message, R_CloseQueue on its own long-lived connection, compared with what it
read first). For another client's values: a bind put in the group it named, a call through
them that succeeds, or a victim session whose handle, cursor or move context no longer works
afterwards. What the server answers a malformed input with (a fault, bind_nak or a closed
connection: C706 12.6, MS-RPCE 3.3.3.5.1) is recorded per input (``outcomes``), not judged:
the runtime scenarios of features/ judge those.
"""

from __future__ import annotations

import contextlib
import logging
import random
import socket
import struct
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from mqconform.captures.decode import Call, decode_file
from mqconform.conformance import sources
from mqconform.conformance.client import RpcClient
from mqconform.conformance.reliability import read_pdu
from mqconform.model import calls as c
from mqconform.model.formats import parse_format_name, to_queue_format
from mqconform.model.packet import decode_packet
from mqconform.model.status import (
    MQ_ERROR_INVALID_HANDLE,
    MQ_ERROR_IO_TIMEOUT,
    STATUS_INVALID_HANDLE,
)
from mqconform.wire import dcerpc as d
from mqconform.wire import ndr

GOLDEN = Path(__file__).resolve().parent.parent / "captures" / "golden"
#: a provisioning file for a reference server to fuzz (``mqconform serve --queues``): a queue
#: the inputs may empty (FUZZ_QUEUE) and one only the canary reads (CANARY_QUEUE)
QUEUES = """
queue_manager:
  computer_name: MQREF
queues:
  - path: private$\\fuzz
    messages: [{body: one}, {body: two}, {body: three}]
  - path: private$\\canary
    messages: [{body: canary}]
"""
FUZZ_QUEUE = "DIRECT=OS:MQREF\\private$\\fuzz"
CANARY_QUEUE = "DIRECT=OS:MQREF\\private$\\canary"
#: the presentation contexts every prelude binds (a client may name any of them)
CONTEXTS = ((0, c.REMOTEREAD, d.NDR), (1, c.REMOTEREAD, d.NDR64), (2, c.QMMGMT, d.NDR))
_UUIDS = {c.REMOTEREAD: c.REMOTEREAD_UUID, c.QMMGMT: c.QMMGMT_UUID}
#: seconds a canary refills and retries before an empty canary queue is a failure
CANARY_PATIENCE = 2.0
#: the call_id of the probe that ends an input (``Fuzzer._answers``)
PROBE = 0x7FFFFFF0
HANDLE_SIZE = 20  # context_handle: attributes (4) + UUID (16), C706 / MS-RPCE 2.2.4.x
INTERESTING32 = (0, 1, 2, 3, 4, 7, 8, 0x10, 0x7F, 0x80, 0xFF, 0x100, 0xFFF, 0x1000, 0x7FFF,
                 0x8000, 0xFFFF, 0x10000, 0x20000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE,
                 0xFFFFFFFF, 0x00020000, 0x41414141)
INTERESTING64 = (*INTERESTING32, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF,
                 0x100000000)


# --------------------------------------------------------------------------- the seeds

@dataclass(frozen=True)
class Seed:
    """A golden request: its stub, where its context handles are, and how it travels."""

    interface: str
    opnum: int
    ndr64: bool
    stub: bytes
    handles: tuple[int, ...]  # offsets of the context handles in the stub

    @property
    def context_id(self) -> int:
        return 2 if self.interface == c.QMMGMT else (1 if self.ndr64 else 0)


@cache
def seeds() -> tuple[Seed, ...]:
    """Every request stub of the golden pcaps, once each, with its context handles located."""
    found: dict[tuple, Seed] = {}
    for path in sorted(GOLDEN.rglob("*.pcap")):
        for item in decode_file(path, decode_stubs=False, keep_stubs=True):
            if type(item) is not Call or item.request_stub is None or item.opnum is None \
                    or item.interface_name not in _UUIDS:
                continue
            ndr64 = item.transfer_syntax == "NDR64"
            key = (item.interface_name, item.opnum, ndr64, item.request_stub)
            if key in found:
                continue
            found[key] = Seed(item.interface_name, item.opnum, ndr64, item.request_stub,
                              _handle_offsets(item.interface_name, item.opnum, ndr64,
                                              item.request_stub))
    if not found:
        raise RuntimeError(f"no golden request stubs under {GOLDEN}")
    return tuple(found.values())


def _handle_offsets(interface: str, opnum: int, ndr64: bool, stub: bytes) -> tuple[int, ...]:
    try:
        call = ndr.decode_request(interface, opnum, stub, ndr64)
    except ndr.StubError:
        return ()
    offsets = []
    for name in ("phContext", "pphContext", "phContextFrom"):
        value = getattr(call, name, None)
        if value:
            at = stub.find(bytes(value))
            if at >= 0:
                offsets.append(at)
    return tuple(offsets)


# --------------------------------------------------------------------------- the inputs

@dataclass(frozen=True)
class Input:
    """What one connection carries: after the prelude (a bind of CONTEXTS, then an R_OpenQueue
    whose handle replaces the golden ones at ``handles``), the ``pdus`` in order; then the
    client ends it (``end``: "close" sends a FIN, "reset" an RST, "read" waits for the answers
    first)."""

    name: str  # what was done, in words
    pdus: tuple[bytes, ...]
    bind: bool = True
    open: bool = True
    handles: tuple[tuple[int, int], ...] = ()  # (pdu index, offset in the PDU) of handles
    end: str = "read"
    #: the assoc_group_id the prelude's bind names (0: a new group, C706 12.6.4.3)
    group: int = 0
    #: (pdu index, offset in the PDU, kind) where a value of another association group goes:
    #: the ``Fuzzer``'s victim session's context handle ("handle"), cursor ("cursor") or
    #: move context ("move"); every call of such an input must fail (``Fuzzer._judge``)
    foreign: tuple[tuple[int, int, str], ...] = ()

    def describe(self) -> str:
        shown = b"".join(self.pdus)
        text = shown[:96].hex()
        return f"{self.name}: {len(self.pdus)} PDU(s), {len(shown)} octets: {text}" + (
            "..." if len(shown) > 96 else "")


def _header(ptype: int, flags: int, frag_length: int, auth_length: int, call_id: int,
            drep: bytes = d.DREP_LE, vers: int = 5, minor: int = 0) -> bytes:
    return struct.pack("<BBBB4sHHI", vers, minor, ptype, flags, drep, frag_length,
                       auth_length, call_id)


def request_pdu(context_id: int, opnum: int, stub: bytes, call_id: int,
                flags: int = d.PFC_WHOLE, alloc_hint: int | None = None) -> bytes:
    """A request PDU (C706 12.6.4.9) built by hand, so that any field may be wrong."""
    body = struct.pack("<IHH", len(stub) if alloc_hint is None else alloc_hint, context_id,
                       opnum) + stub
    return _header(0, flags, 16 + len(body) & 0xFFFF, 0, call_id) + body


def _request(seed: Seed, stub: bytes, call_id: int, context_id: int | None = None,
             opnum: int | None = None) -> tuple[bytes, tuple[int, ...]]:
    pdu = request_pdu(seed.context_id if context_id is None else context_id,
                      seed.opnum if opnum is None else opnum, stub, call_id)
    return pdu, tuple(24 + o for o in seed.handles if o + HANDLE_SIZE <= len(stub))


def bind_pdu(contexts: tuple[tuple[int, uuid.UUID, int, d.SyntaxId], ...], call_id: int = 1,
             alter: bool = False, group: int = 0) -> bytes:
    elems = tuple(d.ContextElement(cid, d.SyntaxId(u, major, 0), (ts,))
                  for cid, u, major, ts in contexts)
    body = (d.AlterContext if alter else d.Bind)(5840, 5840, group, elems)
    return d.encode_pdu(body, call_id)


def _set_word(stub: bytearray, at: int, value: int, size: int) -> None:
    if at + size <= len(stub):
        stub[at:at + size] = value.to_bytes(size, "little")


def _stub_mutation(rng: random.Random, seed: Seed) -> tuple[str, bytes, bool]:
    """(what, the mutated stub, whether the live handles stay where they were)."""
    stub = bytearray(seed.stub)
    word = 8 if seed.ndr64 else 4
    op = rng.randrange(9)
    if op == 0 and stub:
        n = rng.randint(1, 8)
        for _ in range(n):
            bit = rng.randrange(len(stub) * 8)
            stub[bit // 8] ^= 1 << (bit % 8)
        return f"{n} bit(s) flipped", bytes(stub), True
    if op in (1, 2) and len(stub) >= 4:
        n = rng.randint(1, 3)
        for _ in range(n):
            size = rng.choice((4, word))
            at = rng.randrange(0, max(1, len(stub) - size + 1), 4)
            value = rng.choice(INTERESTING64 if size == 8 else INTERESTING32)
            if rng.random() < 0.2:
                value = len(stub) + rng.randint(-8, 8) & ((1 << (8 * size)) - 1)
            _set_word(stub, at, value, size)
        return f"{n} aligned word(s) set to boundary values", bytes(stub), True
    if op == 3:
        cut = rng.randrange(len(stub) + 1)
        return f"truncated to {cut} of {len(stub)} octets", bytes(stub[:cut]), True
    if op == 4:
        extra = rng.choice((b"\0" * rng.randint(1, 64), rng.randbytes(rng.randint(1, 256)),
                            b"\xff" * rng.randint(1, 4096)))
        return f"{len(extra)} octets appended", bytes(stub) + extra, True
    if op == 5:
        other = rng.choice(seeds())
        a, b = rng.randrange(len(stub) + 1), rng.randrange(len(other.stub) + 1)
        return (f"spliced with a {other.interface} opnum {other.opnum} stub",
                bytes(stub[:a]) + other.stub[b:], False)
    if op == 6 and stub:
        a = rng.randrange(len(stub))
        b = rng.randrange(a, min(len(stub), a + 64) + 1)
        if rng.random() < 0.5:
            return f"octets {a}..{b} deleted", bytes(stub[:a] + stub[b:]), False
        return f"octets {a}..{b} repeated", bytes(stub[:b] + stub[a:b] * rng.randint(1, 50)
                                                 + stub[b:]), False
    if op == 7 and seed.handles:
        at = rng.choice(seed.handles)
        kind = rng.choice(("zero", "random", "stale"))
        value = {"zero": bytes(HANDLE_SIZE), "random": rng.randbytes(HANDLE_SIZE),
                 "stale": seed.stub[at:at + HANDLE_SIZE]}[kind]
        stub[at:at + HANDLE_SIZE] = value
        return f"context handle {kind}", bytes(stub), False
    return "random octets", rng.randbytes(rng.choice((0, 1, 4, 8, 16, 64, 512, 4000))), False


def mutation(i: int, seed: int = 0) -> Input:
    """Input ``i`` of the mutation stream ``seed`` (module doc)."""
    rng = random.Random(f"{seed}/{i}")
    base = rng.choice(seeds())
    kind = rng.random()
    if kind < 0.55:  # a mutated stub in a well-formed request
        what, stub, keep = _stub_mutation(rng, base)
        context_id, opnum = None, None
        r = rng.random()
        if r < 0.08:
            opnum = rng.choice([s.opnum for s in seeds() if s.interface == base.interface])
            what += f", sent as opnum {opnum}"
        elif r < 0.12 and base.interface == c.REMOTEREAD:
            context_id = 0 if base.ndr64 else 1
            what += f", sent on the {'NDR' if base.ndr64 else 'NDR64'} context"
        pdu, handles = _request(base, stub, 2, context_id, opnum)
        return Input(f"{base.interface} opnum {base.opnum}: {what}", (pdu,),
                     handles=tuple((0, h) for h in handles) if keep else ())
    if kind < 0.75:
        return _pdu_mutation(rng, base)
    if kind < 0.9:
        return _fragments(rng, base)
    return _association(rng, base)


def _pdu_mutation(rng: random.Random, seed: Seed) -> Input:
    pdu, handles = _request(seed, seed.stub, 2)
    raw = bytearray(pdu)
    name = f"{seed.interface} opnum {seed.opnum}"
    op = rng.randrange(10)
    if op == 0:
        value = rng.choice((0, 1, 15, 16, 17, 23, 24, len(raw) - 1, len(raw) + 1,
                            len(raw) + 100, 0xFFFF)) & 0xFFFF
        struct.pack_into("<H", raw, 8, value)
        # a frag_length past the data: the server waits for octets that never come
        return Input(f"{name}: frag_length {value} for {len(raw)} octets", (bytes(raw),),
                     end="close" if value > len(raw) else "read")
    if op == 1:
        raw[0], raw[1] = rng.choice(((4, 0), (5, 2), (6, 0), (0, 0), (255, 255)))
        return Input(f"{name}: version {raw[0]}.{raw[1]}", (bytes(raw),))
    if op == 2:
        raw[2] = rng.choice((1, 4, 5, 6, 7, 8, 9, 10, 20, 99, 255))
        return Input(f"{name}: PDU type {raw[2]}", (bytes(raw),))
    if op == 3:
        raw[4:8] = rng.choice((b"\x00\x00\x00\x00", b"\x10\x01\x00\x00", b"\x11\x00\x00\x00",
                               b"\xff\xff\xff\xff"))
        return Input(f"{name}: drep {bytes(raw[4:8]).hex()}", (bytes(raw),))
    if op == 4:
        raw[3] = rng.randrange(256)
        return Input(f"{name}: pfc_flags {raw[3]:#04x}", (bytes(raw),),
                     handles=tuple((0, h) for h in handles))
    if op == 5:
        n = rng.choice((1, 8, 16, 200, 0xFFFF))
        struct.pack_into("<H", raw, 10, n)
        trailer = rng.randbytes(rng.choice((0, 8, 16, 40)))
        raw += trailer
        struct.pack_into("<H", raw, 8, len(raw) & 0xFFFF)
        return Input(f"{name}: auth_length {n} with {len(trailer)} octets of trailer",
                     (bytes(raw),))
    if op == 6:
        hint = rng.choice((0, 0x7FFFFFFF, 0xFFFFFFFF, 8 << 20))
        struct.pack_into("<I", raw, 16, hint)
        return Input(f"{name}: alloc_hint {hint:#x}", (bytes(raw),),
                     handles=tuple((0, h) for h in handles))
    if op == 7:
        ctx = rng.choice((3, 7, 255, 0xFFFF))
        struct.pack_into("<H", raw, 20, ctx)
        return Input(f"{name}: presentation context {ctx}", (bytes(raw),),
                     handles=tuple((0, h) for h in handles))
    if op == 8:
        opnum = rng.choice((17, 18, 100, 200, 255, 0xFFFF))
        struct.pack_into("<H", raw, 22, opnum)
        return Input(f"{name}: opnum {opnum}", (bytes(raw),))
    cut = rng.randrange(1, len(raw))
    return Input(f"{name}: the connection ends after {cut} of {len(raw)} octets",
                 (bytes(raw[:cut]),), end=rng.choice(("close", "reset")))


def _fragments(rng: random.Random, seed: Seed) -> Input:
    """Requests split into fragments that do not add up."""
    stub = seed.stub + bytes(rng.choice((0, 8, 64, 2048)))
    chunks = [stub[i:i + 8 * rng.randint(1, 16)] for i in range(0, len(stub), 128)] or [b""]
    pdus = []
    for k, chunk in enumerate(chunks):
        flags = (d.PFC_FIRST_FRAG if k == 0 else 0) | (
            d.PFC_LAST_FRAG if k == len(chunks) - 1 else 0)
        pdus.append(request_pdu(seed.context_id, seed.opnum, chunk, 2, flags, len(stub)))
    op = rng.randrange(7)
    what = f"{seed.interface} opnum {seed.opnum} in {len(pdus)} fragment(s)"
    if op == 0:
        rng.shuffle(pdus)
        what += ", shuffled"
    elif op == 1:
        pdus = pdus[1:] or pdus
        what += ", the first missing"
    elif op == 2:
        pdus = pdus[:-1] or pdus
        what += ", the last missing"
    elif op == 3:
        pdus = pdus + [pdus[-1]] + pdus
        what += ", sent twice"
    elif op == 4:
        other = request_pdu(seed.context_id, seed.opnum, seed.stub, 3, d.PFC_FIRST_FRAG)
        pdus.insert(rng.randrange(len(pdus) + 1), other)
        what += ", another call's first fragment among them"
    elif op == 5:
        k = rng.randrange(len(pdus))
        raw = bytearray(pdus[k])
        struct.pack_into("<I", raw, 12, 99)
        pdus[k] = bytes(raw)
        what += f", fragment {k} with another call_id"
    else:
        raw = bytearray(pdus[-1])
        raw[3] = d.PFC_FIRST_FRAG  # never finished
        pdus = pdus[:-1] + [bytes(raw)] * rng.randint(1, 300)
        what += ", never finished, many times"
    return Input(what, tuple(pdus), end=rng.choice(("read", "close", "reset")))


def _association(rng: random.Random, seed: Seed) -> Input:
    """Binds, alters, PDUs out of place, load; another association group's values."""
    op = rng.randrange(10)
    if op == 9:
        return _foreign(rng)
    if op == 0:
        iface = rng.choice((uuid.UUID(int=rng.getrandbits(128)), c.REMOTEREAD_UUID,
                            c.QMMGMT_UUID))
        major = rng.choice((0, 1, 2, 0xFFFF))
        ts = rng.choice((d.NDR, d.NDR64, d.SyntaxId(uuid.UUID(int=rng.getrandbits(128)), 1, 0)))
        return Input(f"bind to {iface} v{major} with {ts.uuid}",
                     (bind_pdu(((0, iface, major, ts),)),), bind=False, open=False)
    if op == 1:
        n = rng.choice((0, 1, 40, 255))
        body = struct.pack("<HHIB3x", 5840, 5840, 0, n) + b"".join(
            struct.pack("<HBx", k, 1) + c.REMOTEREAD_UUID.bytes_le + b"\1\0\0\0"
            + d.NDR.uuid.bytes_le + b"\2\0\0\0" for k in range(min(n, 255)))
        pdu = _header(11, 3, (16 + len(body)) & 0xFFFF, 0, 1) + body
        return Input(f"bind with {n} context elements", (pdu,), bind=False, open=False)
    if op == 2:
        pdu, _ = _request(seed, seed.stub, 2)
        return Input(f"{seed.interface} opnum {seed.opnum} before any bind", (pdu,),
                     bind=False, open=False)
    if op == 3:
        alter = bind_pdu(((rng.choice((0, 5)), uuid.UUID(int=rng.getrandbits(128)), 1, d.NDR),),
                         call_id=7, alter=True)
        pdu, handles = _request(seed, seed.stub, 2)
        return Input("alter_context to an unknown interface, then a request",
                     (alter, pdu), handles=tuple((1, h) for h in handles))
    if op == 4:
        ptype = rng.choice((2, 3, 12, 13, 15, 16, 17, 18, 19))
        body = rng.randbytes(rng.choice((0, 8, 24, 100)))
        pdu = _header(ptype, 3, 16 + len(body), 0, rng.choice((2, 1000)), ) + body
        return Input(f"PDU type {ptype} from the client, {len(body)} octets of body", (pdu,))
    if op == 5:
        n = rng.choice((65, 100, 200))
        pdus = []
        for k in range(n):
            pdu, _ = _request(seed, seed.stub, 10 + k)
            pdus.append(pdu)
        return Input(f"{n} calls at once without reading", tuple(pdus),
                     end=rng.choice(("close", "reset")))
    if op == 6:
        return Input("random octets", (rng.randbytes(rng.choice((1, 15, 16, 100, 5000))),),
                     bind=rng.random() < 0.5, open=False)
    if op == 7:
        # a request that blocks (a receive with INFINITE timeout on the queue), then the end
        pdu = request_pdu(0, c.R_StartReceive.opnum, ndr.encode_request(c.R_StartReceive(
            phContext=bytes(HANDLE_SIZE), ulAction=c.MQ_ACTION_RECEIVE, ulTimeout=0xFFFFFFFF,
            dwRequestId=1, dwMaxBodySize=64, dwMaxCompoundMessageSize=64), False), 2)
        return Input("a blocking receive, then the connection ends", (pdu,),
                     handles=((0, 24),), end=rng.choice(("close", "reset")))
    cancel = _header(18, 3, 16, 0, rng.choice((2, 999)))
    orphan = _header(19, 3, 16, 0, rng.choice((2, 999)))
    return Input("co_cancel and orphaned for calls that do not exist", (cancel, orphan))


#: placeholders the runner replaces: the input's own context handle (``Input.handles``), and
#: the victim session's handle, cursor and move context (``Input.foreign``)
_OWN = b"\xee" * HANDLE_SIZE
_FOREIGN = {"handle": b"\xf0" * HANDLE_SIZE, "cursor": b"\xf1" * 4, "move": b"\xf2" * 8}
#: the lookup identifier the victim check moves: no message has it
VICTIM_LOOKUP_ID = 0x00FF_FFFF_FFFF_FFF7
#: a group id no server issues to a fuzz input: a client naming it must get a group of its own
UNISSUED_GROUP = 0xDEADBEEF


def _foreign(rng: random.Random) -> Input:
    """A client that names another client's association group values (MS-RPCE 3.3.1.5.7,
    MS-MQRR 2.2.4: context handles are strict, valid in the group they were given to): a bind
    naming a group it was not issued (none, a random id, UNISSUED_GROUP), then up to three
    calls through the victim session's queue handle, its cursor or its move context. Every
    such call must fail (a fault, or a failure HRESULT), and the victim's handle, cursor and
    move context must work after it (``Fuzzer``)."""
    cursor = int.from_bytes(_FOREIGN["cursor"], "little")
    move = int.from_bytes(_FOREIGN["move"], "little")
    peek = dict(dwRequestId=1, dwMaxBodySize=64, dwMaxCompoundMessageSize=64)
    calls = {
        "R_StartReceive through its handle": (c.R_StartReceive(
            phContext=_FOREIGN["handle"], ulAction=c.MQ_ACTION_RECEIVE, **peek), ("handle",)),
        "R_PurgeQueue through its handle": (c.R_PurgeQueue(phContext=_FOREIGN["handle"]),
                                            ("handle",)),
        "R_CloseQueue of its handle": (c.R_CloseQueue(pphContext=_FOREIGN["handle"]),
                                       ("handle",)),
        "R_CreateCursor on its handle": (c.R_CreateCursor(phContext=_FOREIGN["handle"]),
                                         ("handle",)),
        "R_StartReceive with its cursor": (c.R_StartReceive(
            phContext=_OWN, hCursor=cursor, ulAction=c.MQ_ACTION_PEEK_CURRENT, **peek),
            ("cursor",)),
        "R_CloseCursor of its cursor": (c.R_CloseCursor(phContext=_OWN, hCursor=cursor),
                                        ("cursor",)),
        "R_MoveMessage to its move context": (c.R_MoveMessage(
            phContextFrom=_OWN, ullContextTo=move,
            LookupId=rng.getrandbits(64), pTransactionId=bytes(c.XACTUOW_SIZE)), ("move",)),
        "R_MoveMessage from its handle": (c.R_MoveMessage(
            phContextFrom=_FOREIGN["handle"], ullContextTo=move,
            LookupId=rng.getrandbits(64), pTransactionId=bytes(c.XACTUOW_SIZE)),
            ("handle", "move")),
    }
    names = rng.sample(sorted(calls), rng.randint(1, 3))
    group = rng.choice((0, rng.getrandbits(32) | 1, UNISSUED_GROUP))
    pdus, handles, foreign = [], [], []
    for k, name in enumerate(names):
        call, kinds = calls[name]
        pdu = request_pdu(0, call.opnum, ndr.encode_request(call, False), 2 + k)
        at = pdu.find(_OWN)
        if at >= 0:
            handles.append((k, at))
        for kind in kinds:
            at = pdu.find(_FOREIGN[kind])
            if at < 0:
                raise AssertionError(f"{name}: no place for the {kind}")
            foreign.append((k, at, kind))
        pdus.append(pdu)
    return Input(f"another group's values, bind naming group {group:#x}: " + "; ".join(names),
                 tuple(pdus), handles=tuple(handles), group=group, foreign=tuple(foreign))


# --------------------------------------------------------------------------- structural

def structural() -> Any:
    """A Hypothesis strategy of Inputs built field by field (module doc)."""
    from hypothesis import strategies as st

    def build(seed: Seed, edits: list, cut: int | None, ctx: int, opnum: int | None,
              frags: int, flags: int | None, call_id: int, vers: tuple[int, int]) -> Input:
        stub = bytearray(seed.stub)
        for at, size, value in edits:
            _set_word(stub, (at * 4) % max(1, len(stub)), value & ((1 << (8 * size)) - 1), size)
        if cut is not None:
            stub = stub[:cut]
        op = seed.opnum if opnum is None else opnum
        step = max(8, (len(stub) // frags + 7) // 8 * 8)
        chunks = [bytes(stub[i:i + step]) for i in range(0, len(stub), step)] or [b""]
        pdus = []
        for k, chunk in enumerate(chunks):
            f = (d.PFC_FIRST_FRAG if k == 0 else 0) | (
                d.PFC_LAST_FRAG if k == len(chunks) - 1 else 0)
            raw = bytearray(request_pdu(ctx, op, chunk, call_id,
                                        f if flags is None else flags, len(stub)))
            raw[0], raw[1] = vers
            pdus.append(bytes(raw))
        keep = not edits and cut is None and frags == 1 and flags is None
        return Input(f"{seed.interface} opnum {seed.opnum} as opnum {op} on context {ctx}, "
                     f"{len(edits)} word(s) set, cut at {cut}, {len(chunks)} fragment(s), "
                     f"flags {flags}, call_id {call_id}, version {vers}", tuple(pdus),
                     handles=tuple((0, 24 + o) for o in seed.handles) if keep else ())

    words = st.tuples(st.integers(0, 255), st.sampled_from((4, 8)),
                      st.one_of(st.sampled_from(INTERESTING64), st.integers(0, 2 ** 64 - 1)))
    pool = seeds()
    return st.builds(
        build, st.integers(0, len(pool) - 1).map(pool.__getitem__),
        st.lists(words, max_size=4),
        st.none() | st.integers(0, 600), st.sampled_from((0, 1, 2, 3, 0xFFFF)),
        st.none() | st.integers(0, 255), st.integers(1, 6),
        st.none() | st.integers(0, 255), st.integers(0, 2 ** 32 - 1),
        st.sampled_from(((5, 0), (5, 0), (5, 0), (5, 1), (4, 0), (6, 0))))


# --------------------------------------------------------------------------- the driver

@dataclass
class Finding:
    what: str
    input: str


@dataclass
class Canary:
    rounds: int = 0
    failures: list[str] = field(default_factory=list)
    slowest: float = 0.0
    refills: int = 0


class Fuzzer:
    """Runs Inputs against ``address`` (module doc). ``health()`` returns the crashes seen so
    far (a list of lines; the caller knows how its server reports them)."""

    def __init__(self, address: tuple[str, int], queue: str, canary_queue: str | None = None,
                 health: Callable[[], list[str]] = lambda: [],
                 refill: Callable[[str, bytes], None] | None = None, probe_timeout: float = 1.0,
                 timeout: float = 5.0):
        self.address = address
        self.queue_format = to_queue_format(parse_format_name(queue))
        self.queue = queue
        self.canary_queue = canary_queue or queue
        self.canary_format = to_queue_format(parse_format_name(self.canary_queue))
        self.health = health
        self.refill = refill
        self.probe_timeout = probe_timeout
        self.timeout = timeout
        self.findings: list[Finding] = []
        self.outcomes: Counter[str] = Counter()
        self.inputs = 0
        self._crashes = 0
        self._lock = threading.Lock()
        self.canary_state = Canary()
        self.canary_body = b"canary"
        #: the victim session (``victim``): its client and the values other groups name
        self._victim: dict[str, bytes] | None = None
        self._victim_client: Any = None
        self._victim_lock = threading.Lock()

    # -- one input
    def run(self, item: Input) -> str:
        """Send ``item`` on a fresh connection; returns its outcome (``outcomes`` counts
        them) and records findings."""
        try:
            outcome = self._run(item)
        except _PreludeFailed as exc:
            outcome = "prelude failed"
            self._find(f"a valid {exc} failed", item)
        except OSError as exc:
            outcome = f"connect failed: {type(exc).__name__}"
            self._find(f"could not connect: {exc}", item)
        except Exception as exc:  # noqa: BLE001 - e.g. a prelude answer that does not decode
            outcome = "prelude answer undecodable"
            self._find(f"a valid prelude got an answer that does not decode: {exc}", item)
        if item.foreign and outcome != "prelude failed":
            broken = self._victim_broken()
            if broken:
                self._find(f"another group's input broke the victim session: {broken}", item)
        crashes = self.health()
        with self._lock:
            self.inputs += 1
            self.outcomes[outcome] += 1
            new = crashes[self._crashes:]
            self._crashes = len(crashes)
        for line in new:
            self._find(f"server crash: {line}", item)
        if self.refill is not None and self.inputs % 50 == 0:
            self.refill(self.queue, b"fuzz")
        return outcome

    def run_many(self, inputs: Iterator[Input], workers: int = 8) -> None:
        """Run ``inputs`` on ``workers`` connections at a time."""
        import itertools
        from concurrent.futures import ThreadPoolExecutor

        inputs = iter(inputs)
        with ThreadPoolExecutor(workers, thread_name_prefix="fuzz") as pool:
            while batch := list(itertools.islice(inputs, workers * 64)):  # bounded memory
                for _ in pool.map(self.run, batch):
                    pass

    def _find(self, what: str, item: Input) -> None:
        with self._lock:
            self.findings.append(Finding(what, item.describe()))

    def _run(self, item: Input) -> str:
        sock = socket.create_connection(self.address, timeout=self.timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            handle = bytes(HANDLE_SIZE)
            if item.bind:
                # MS-RPCE 3.3.1.5.6: one transfer syntax per interface in a bind; the
                # second one for RemoteRead comes by alter_context
                first, second = CONTEXTS[::2], CONTEXTS[1:2]
                sock.sendall(bind_pdu(tuple((cid, _UUIDS[i], 1, ts) for cid, i, ts in first),
                                      group=item.group))
                sock.sendall(bind_pdu(tuple((cid, _UUIDS[i], 1, ts) for cid, i, ts in second),
                                      call_id=1, alter=True))
                for ptype, name in ((12, "bind"), (15, "alter_context")):
                    ack = read_pdu(sock)
                    if ack is None or ack[2] != ptype or _rejected(ack):
                        raise _PreludeFailed(name)
                    if ptype == 12 and item.group and \
                            int.from_bytes(ack[20:24], "little") == item.group:
                        # C706 12.6.4.3, MS-RPCE 3.3.1.5.7: a group is the server's to issue
                        self._find(f"the bind was put in association group {item.group:#x}, "
                                   "which it named and was never issued", item)
                if item.open:
                    call = c.R_OpenQueue(pQueueFormat=self.queue_format,
                                         dwAccess=c.RECEIVE_ACCESS, pClientId=sources.uuid4())
                    sock.sendall(request_pdu(0, 2, ndr.encode_request(call, False), 1))
                    answer = read_pdu(sock)
                    if answer is None or answer[2] != 2:
                        raise _PreludeFailed("R_OpenQueue")
                    result = ndr.decode_response(call, answer[24:], False)
                    handle = bytes(result.pphContext)
            victim = self.victim() if item.foreign else {}
            for k, pdu in enumerate(item.pdus):
                if item.handles or item.foreign:
                    raw = bytearray(pdu)
                    for index, at in item.handles:
                        if index == k and at + HANDLE_SIZE <= len(raw):
                            raw[at:at + HANDLE_SIZE] = handle
                    for index, at, kind in item.foreign:
                        if index == k:
                            raw[at:at + len(victim[kind])] = victim[kind]
                    pdu = bytes(raw)
                sock.sendall(pdu)
            if item.foreign:
                return self._judge(sock, item)
            if item.end == "reset":
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return "reset by the client"
            if item.end == "close":
                return "closed by the client"
            return self._answers(sock)
        except (ConnectionError, BrokenPipeError):
            return "closed by the server"
        finally:
            sock.close()

    def _judge(self, sock: socket.socket, item: Input) -> str:
        """The answers to an input made of another group's values: each call must fail (a
        fault, or a response whose HRESULT is a failure); one that succeeds is a finding."""
        kinds: list[str] = []
        sock.settimeout(self.probe_timeout)
        try:
            for _ in item.pdus:
                raw = read_pdu(sock)
                if raw is None:
                    kinds.append("closed by the server")
                    break
                if raw[2] == 2 and len(raw) >= 28:
                    status = int.from_bytes(raw[-4:], "little")  # the HRESULT comes last
                    if not status & 0x80000000:
                        self._find("a call through another association group's value "
                                   f"succeeded (call_id {int.from_bytes(raw[12:16], 'little')}"
                                   f", status {status:#010x})", item)
                    kinds.append("response (failure)" if status & 0x80000000
                                 else "response (success)")
                else:
                    kinds.append(_ptype_name(raw[2]))
        except TimeoutError:
            kinds.append("unanswered")
        return " + ".join(sorted(set(kinds)))

    def victim(self) -> dict[str, bytes]:
        """The victim session, on a connection of its own kept open: a RECEIVE_ACCESS handle
        on the fuzzed queue, a cursor on it and a move context for the queue, as the octets
        that inputs of another group put in their calls (``Input.foreign``)."""
        with self._victim_lock:
            if self._victim is None:
                host, port = self.address
                client = RpcClient(timeout=self.timeout)
                client.connect(f"ncacn_ip_tcp:{host}[{port}]")
                give_up = time.monotonic() + CANARY_PATIENCE
                while True:  # an input may hold the queue with a deny share mode a moment
                    opened = client.call(c.R_OpenQueue(pQueueFormat=self.queue_format,
                                                       dwAccess=c.RECEIVE_ACCESS,
                                                       pClientId=sources.uuid4()))
                    if not opened.raised or time.monotonic() > give_up:
                        break
                    time.sleep(0.05)
                if opened.raised or not opened.pphContext:
                    client.close()
                    raise _PreludeFailed("R_OpenQueue of the victim session")
                cursor = client.call(c.R_CreateCursor(phContext=opened.pphContext))
                move = client.call(c.R_OpenQueueForMove(pQueueFormat=self.queue_format,
                                                        pClientId=sources.uuid4()))
                if cursor.raised or cursor.status or move.raised or not move.pMoveContext:
                    client.close()
                    raise _PreludeFailed("R_CreateCursor or R_OpenQueueForMove of the victim "
                                         "session")
                self._victim_client = client
                self._victim = {"handle": bytes(opened.pphContext),
                                "cursor": cursor.phCursor.to_bytes(4, "little"),
                                "move": move.pMoveContext.to_bytes(8, "little")}
            return self._victim

    def close(self) -> None:
        """End the victim session (its connection, so its handles are run down)."""
        with self._victim_lock:
            if self._victim_client is not None:
                with contextlib.suppress(Exception):
                    self._victim_client.close()
            self._victim, self._victim_client = None, None

    def _victim_broken(self) -> str | None:
        """What another group's input did to the victim session, if anything: its handle and
        cursor still peek (no invalid-handle answer), its move context still names a queue
        opened for move (R_MoveMessage of an unknown message is not MQ_ERROR_INVALID_HANDLE,
        MS-MQRR 3.1.4.10)."""
        with self._victim_lock:
            if self._victim is None:
                return None
            v, client = self._victim, self._victim_client
            handle = v["handle"]
            try:
                peek = client.call(c.R_StartReceive(
                    phContext=handle, hCursor=int.from_bytes(v["cursor"], "little"),
                    ulAction=c.MQ_ACTION_PEEK_CURRENT, ulTimeout=0, dwRequestId=1,
                    dwMaxBodySize=64, dwMaxCompoundMessageSize=64))
                moved = client.call(c.R_MoveMessage(
                    phContextFrom=handle, ullContextTo=int.from_bytes(v["move"], "little"),
                    LookupId=VICTIM_LOOKUP_ID, pTransactionId=bytes(c.XACTUOW_SIZE)))
            except Exception as exc:  # noqa: BLE001 - the victim's connection is gone
                with contextlib.suppress(Exception):
                    client.close()
                self._victim = None
                return f"its connection failed: {type(exc).__name__}: {exc}"
        if peek.raised or peek.status in (MQ_ERROR_INVALID_HANDLE, STATUS_INVALID_HANDLE):
            return f"R_StartReceive peek through its handle and cursor answered {peek.status:#010x}"
        if moved.raised or moved.status == MQ_ERROR_INVALID_HANDLE:
            return f"R_MoveMessage to its move context answered {moved.status:#010x}"
        return None

    def _answers(self, sock: socket.socket) -> str:
        """Send the probe (a well-formed R_GetServerPort on context 0 with call_id PROBE)
        and read what comes back until its answer, the end of the connection, or
        ``timeout``: the kinds of PDU the input was answered with."""
        sock.sendall(request_pdu(0, 0, _probe_stub(), PROBE))
        kinds: list[str] = []
        sock.settimeout(self.probe_timeout)
        buf = b""
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    kinds.append("closed by the server")
                    break
                buf += chunk
                answered = False
                while len(buf) >= 16:
                    n = int.from_bytes(buf[8:10], "little")
                    if n < 16 or len(buf) < n:
                        break
                    if int.from_bytes(buf[12:16], "little") == PROBE:
                        answered = True
                    else:
                        kinds.append(_ptype_name(buf[2]))
                    buf = buf[n:]
                if answered:
                    break
        except TimeoutError:
            kinds.append("probe unanswered")
        return " + ".join(sorted(set(kinds))) or "nothing before the probe"

    # -- the canary
    @contextlib.contextmanager
    def canary(self, every: float = 0.1) -> Iterator[Canary]:
        """A long-lived session on its own connection, a round every ``every`` seconds while
        the block runs; its failures are findings."""
        state = self.canary_state
        stop = threading.Event()
        host, port = self.address
        client = RpcClient(timeout=self.timeout)
        client.connect(f"ncacn_ip_tcp:{host}[{port}]")
        first = self.canary_body = self._canary_round(client)

        def loop() -> None:
            while not stop.wait(every):
                began = time.monotonic()
                try:
                    seen = self._canary_round(client)
                    if seen != first:
                        raise AssertionError(f"read {_short(seen)}, first {_short(first)}")
                except Exception as exc:  # noqa: BLE001 - every failure is a finding
                    state.failures.append(f"{type(exc).__name__}: {exc}")
                    with self._lock:
                        self.findings.append(Finding(f"canary failed: {exc}", "(canary)"))
                    with contextlib.suppress(Exception):
                        client.close()
                        client.connect(f"ncacn_ip_tcp:{host}[{port}]")
                state.rounds += 1
                state.slowest = max(state.slowest, time.monotonic() - began)

        thread = threading.Thread(target=loop, name="fuzz-canary", daemon=True)
        thread.start()
        try:
            yield state
        finally:
            stop.set()
            thread.join(self.timeout * 4)
            client.close()
            self.close()

    def _canary_round(self, client: Any) -> bytes:
        """One round: open the canary queue, peek its first message, close; the body read.
        The queue may have been emptied by an input on the way (an administrator's purge or
        TIDY through qmmgmt is a legitimate call, and a hundred of them pipelined purge for a
        while): then ``refill`` puts a message back and the round is tried again, for up to
        CANARY_PATIENCE seconds."""
        give_up = time.monotonic() + CANARY_PATIENCE
        while True:
            opened = client.call(c.R_OpenQueue(pQueueFormat=self.canary_format,
                                               dwAccess=c.PEEK_ACCESS, pClientId=sources.uuid4()))
            if opened.raised:
                raise AssertionError(f"R_OpenQueue raised {opened.status:#010x}")
            try:
                peek = client.call(c.R_StartReceive(
                    phContext=opened.pphContext, ulAction=c.MQ_ACTION_PEEK_CURRENT,
                    ulTimeout=0, dwRequestId=1, dwMaxBodySize=4096,
                    dwMaxCompoundMessageSize=4096))
            finally:
                closed = client.call(c.R_CloseQueue(pphContext=opened.pphContext))
            if closed.raised or closed.status:
                raise AssertionError(f"R_CloseQueue answered {closed.status:#010x}")
            if peek.status == MQ_ERROR_IO_TIMEOUT and self.refill \
                    and time.monotonic() < give_up:
                self.canary_state.refills += 1
                self.refill(self.canary_queue, self.canary_body)
                continue
            if peek.raised or peek.status or not peek.ppPacketSections:
                raise AssertionError(f"R_StartReceive peek answered {peek.status:#010x}")
            packet = peek.ppPacketSections[0].pSectionBuffer or b""
            offset, size = decode_packet(packet).message_body
            return packet[offset:offset + size]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


@cache
def _probe_stub() -> bytes:
    return ndr.encode_request(c.R_GetServerPort(), False)


def control_refill(address: tuple[str, int],
                   token: str | None = None) -> Callable[[str, bytes], None]:
    """A ``refill`` through the reference server's control API at ``address`` (with its
    ``token``): sends a message with ``body`` to the queue a DIRECT=OS format name names."""
    import json
    import urllib.parse
    import urllib.request

    def refill(queue: str, body: bytes) -> None:
        path = queue.split("\\", 1)[1]
        url = f"http://{address[0]}:{address[1]}/queues/{urllib.parse.quote(path)}/messages"
        data = json.dumps({"body_hex": body.hex()}).encode()
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        with urllib.request.urlopen(urllib.request.Request(url, data=data, method="POST",
                                                           headers=headers),
                                    timeout=10) as answer:
            answer.read()

    return refill


#: what a crash looks like in the reference server's log (server/rpc.py): an exception out of a
#: connection's loop, out of the handler, or out of a thread
CRASH_MARKS = ("unexpected error", "handler failed", "Traceback", "Exception in thread",
               "connection_lost failed", "callback failed")


class LogWatch(logging.Handler):
    """The crashes an in-process reference server logs (``health`` for a Fuzzer); also
    catches exceptions that escape any thread."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.crashes: list[str] = []
        self._hook = threading.excepthook

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info or any(m in text for m in CRASH_MARKS):
            self.crashes.append(text.splitlines()[0][:300])

    def _thread_died(self, args: Any) -> None:
        self.crashes.append(f"thread {args.thread.name if args.thread else '?'} died: "
                            f"{args.exc_type.__name__}: {args.exc_value}")
        self._hook(args)

    def __enter__(self) -> LogWatch:
        logging.getLogger("mqconform.server").addHandler(self)
        threading.excepthook = self._thread_died
        return self

    def __exit__(self, *exc: Any) -> None:
        logging.getLogger("mqconform.server").removeHandler(self)
        threading.excepthook = self._hook

    def __call__(self) -> list[str]:
        return self.crashes


class StreamWatch:
    """The crashes a server process writes to a stream (its stderr), read by a thread."""

    def __init__(self, stream: Any) -> None:
        self.crashes: list[str] = []
        self.lines = 0
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            self.lines += 1
            if any(m in line for m in CRASH_MARKS):
                self.crashes.append(line.strip()[:300])

    def __call__(self) -> list[str]:
        return self.crashes


def _ptype_name(ptype: int) -> str:
    try:
        return d.PType(ptype).name.lower()
    except ValueError:
        return f"PDU type {ptype}"


class _PreludeFailed(Exception):
    pass


def _rejected(ack: bytes) -> bool:
    return any(r.result != 0 for r in d.decode_pdu(ack).body.results)
