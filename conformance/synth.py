"""A synthetic capture corpus with ground truth: real clients (conformance/client.py, impacket's
DCE/RPC over TCP) against real reference servers (``mqconform serve``'s queue manager, one per
server, each on its own port of 127.0.0.1), recorded by the run recorder (one pcap per server),
some servers with seeded faults (server/faults.py) whose activations are the labels.

    mqconform captures synth --servers N --connections M --fault-rate R --out DIR

writes ``DIR/server-NN.pcap`` and ``DIR/labels.json``::

    {"servers": [{"server": "127.0.0.1:PORT", "capture": "server-00.pcap",
                  "faults": [...], "rate": R}, ...],
     "activations": [{"server", "capture", "client", "fault", "requirement", "method",
                      "time"}, ...]}

A *flow* is one TCP connection (capture, client address and port); a flow is faulty when an
activation names it, and ``score`` compares a validator's violations with the labels: recall
(faulty flows flagged with their requirement) and false positives (violations on clean flows).

The clients are conformant (the validator's client rules must stay silent on them): request
ids unique per handle, every receive ended (RR_ACK or RR_NACK) or the handle closed only after,
no handle or cursor used after it was closed. What they do, drawn from a seeded generator, in the
proportions of a consuming application (open a queue or two, then mostly read): open queues
with receive or peek access (3 % of calls), peek or receive (33 %) and end receives later, with
RR_ACK or RR_NACK (about a third: receives of different clients overlap), walk cursors (10 %:
a new cursor's first read peeks at its current message, later ones mostly at the next; with
receive access a quarter of them receive the cursor's message),
purge (4 %, mostly with peek access: a conformant client may try, and must be refused), ask
R_GetServerPort (2 %), read qmmgmt properties (5 %), ask for qmmgmt actions (2 %, sometimes
one not in the table, which must be refused), close a handle (2 %). One server's clients take
turns call by call (the order across connections is the generator's), so capture time orders
the calls as the server ran them. Queues are refilled through the control API, which is not
on the wire: the validator learns queue contents from what it sees.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mqconform.captures.recorder import Recorder
from mqconform.conformance.client import RpcClient
from mqconform.model import calls as c
from mqconform.model.formats import MgmtObject, MgmtObjectType, parse_format_name, to_queue_format
from mqconform.model.mqmr import MACHINE_PROPERTIES, QUEUE_PROPERTIES
from mqconform.server.control import ControlApi
from mqconform.server.faults import FAULTS, Faults
from mqconform.server.main import start

QUEUES = ("orders", "invoices", "audit")
SOURCE = "DIRECT=TCP:127.0.0.1\\private$\\"
MESSAGES_PER_QUEUE = 20


@dataclass
class _Client:
    rpc: Any
    steps: int
    handles: dict = field(default_factory=dict)  # handle -> (queue, access)
    pending: dict = field(default_factory=dict)  # handle -> [request ids]
    cursors: dict = field(default_factory=dict)  # handle -> [cursors]
    #: (handle, cursor) of the cursors that rest on a message they peeked (MS-MQDMPR 3.2:
    #: state Read), where PEEK_NEXT may go on; a new cursor, or one whose message was
    #: received through it, is Unread: PEEK_NEXT there is MQ_ERROR_ILLEGAL_CURSOR_ACTION
    on_message: set = field(default_factory=set)
    next_id: int = 1
    client_id: Any = None  # pClientId: a GUID that identifies the client (3.1.4.2/R4)


def _queue_format(name: str) -> Any:
    return to_queue_format(parse_format_name(SOURCE + name))


def _mgmt(queue: str | None) -> Any:
    if queue is None:
        return MgmtObject(MgmtObjectType.MGMT_MACHINE)
    return MgmtObject(MgmtObjectType.MGMT_QUEUE, _queue_format(queue))


class _Server:
    """One reference server, its recorder, clients and fault log."""

    def __init__(self, index: int, faults: frozenset[str], rate: float, seed: int):
        self.index = index
        self.faults = Faults(faults, rate, seed) if faults else None
        self.running = start(host="127.0.0.1", port=0, faults=self.faults)
        host, port = self.running.rpc.address
        self.address = f"{host}:{port}"
        self.control = ControlApi(self.running.handler)
        for name in QUEUES:
            self.control.create_queue({"path": f"private$\\{name}"})
        self.sent = 0
        self.recorder = Recorder()

    def refill(self) -> None:
        for q in self.control.queues():
            if q["path"].lower().endswith(QUEUES) and q["messages"]["Available"] < 5:
                for _ in range(MESSAGES_PER_QUEUE):
                    self.sent += 1
                    self.control.send(q["path"], {"body": f"message {self.sent}",
                                                  "label": f"m{self.sent}"})

    def client(self, steps: int) -> _Client:
        rpc = RpcClient(timeout=10.0, recorder=self.recorder)
        rpc.connect(f"ncacn_ip_tcp:127.0.0.1[{self.running.rpc.address[1]}]")
        return _Client(rpc, steps)

    def stop(self) -> None:
        self.running.stop()


def _step(cl: _Client, rnd: random.Random) -> None:
    """One call (or a few, to close a handle conformantly) of one client."""
    call = cl.rpc.call
    handles = list(cl.handles)
    choice = rnd.random()
    if not handles or (choice < 0.03 and len(handles) < 3):
        queue = rnd.choice(QUEUES)
        access = c.RECEIVE_ACCESS if rnd.random() < 0.7 else c.PEEK_ACCESS
        if cl.client_id is None:
            import uuid

            cl.client_id = uuid.UUID(int=rnd.getrandbits(128), version=4)
        r = call(c.R_OpenQueue(pQueueFormat=_queue_format(queue), dwAccess=access,
                               dwShareMode=c.MQ_DENY_NONE, pClientId=cl.client_id,
                               fNonRoutingServer=1, Major=6, Minor=1, BuildNumber=7601,
                               fWorkgroup=1))
        if not r.raised and r.pphContext:
            cl.handles[bytes(r.pphContext)] = (queue, access)
        return
    h = rnd.choice(handles)
    queue, access = cl.handles[h]
    pending = cl.pending.setdefault(h, [])
    if pending and choice < 0.35:  # end a receive made earlier
        rid = pending.pop(rnd.randrange(len(pending)))
        ack = c.RR_ACK if rnd.random() < 0.75 else c.RR_NACK
        call(c.R_EndReceive(phContext=h, dwAck=ack, dwRequestId=rid))
    elif choice < 0.68:
        receive = access == c.RECEIVE_ACCESS and rnd.random() < 0.7
        rid = cl.next_id
        cl.next_id += 1
        action = c.MQ_ACTION_RECEIVE if receive else c.MQ_ACTION_PEEK_CURRENT
        r = call(c.R_StartReceive(phContext=h, LookupId=0, hCursor=0, ulAction=action,
                                  ulTimeout=0, dwRequestId=rid, dwMaxBodySize=4096,
                                  dwMaxCompoundMessageSize=0))
        if receive and r.status == 0:
            pending.append(rid)
    elif choice < 0.78:
        cursors = cl.cursors.setdefault(h, [])
        if cursors and rnd.random() < 0.6:
            _cursor_read(cl, h, rnd.choice(cursors), access, rnd)
        elif cursors and rnd.random() < 0.5:
            cursor = cursors.pop()
            cl.on_message.discard((h, cursor))
            call(c.R_CloseCursor(phContext=h, hCursor=cursor))
        else:
            r = call(c.R_CreateCursor(phContext=h))
            if r.status == 0:
                cursors.append(r.phCursor)
    elif choice < 0.82:
        if access != c.RECEIVE_ACCESS or rnd.random() < 0.1:
            call(c.R_PurgeQueue(phContext=h))
    elif choice < 0.84:
        call(c.R_GetServerPort())
    elif choice < 0.89:
        on_queue = rnd.random() < 0.6
        table = QUEUE_PROPERTIES if on_queue else MACHINE_PROPERTIES
        props = tuple(rnd.sample(sorted(table), k=min(3, len(table))))
        call(c.R_QMMgmtGetInfo(pObjectFormat=_mgmt(queue if on_queue else None),
                               cp=len(props), aProp=props,
                               apVar=tuple(c.PropVariant(0x0001) for _ in props)))
    elif choice < 0.91:
        action = rnd.choice(("PAUSE", "RESUME", "FROBNICATE", "EOD_RESEND", "Tidy-Up"))
        call(c.R_QMMgmtAction(pObjectFormat=_mgmt(queue), lpwszAction=action))
    elif choice < 0.93:
        _close(cl, h)
    elif pending:
        rid = pending.pop()
        call(c.R_EndReceive(phContext=h, dwAck=c.RR_NACK, dwRequestId=rid))


def _cursor_read(cl: _Client, h: bytes, cursor: int, access: int, rnd: random.Random) -> None:
    """One read through a cursor (MS-MQRR 3.1.4.7, MS-MQDMPR 3.2.7): on a cursor that rests
    on no message yet, PEEK_CURRENT (it moves to the first available message); on one that
    does, mostly PEEK_NEXT (the next one), else PEEK_CURRENT again; with receive access,
    sometimes a receive of the cursor's message (ended later, as the other receives), after
    which the cursor rests on no message again."""
    rid = cl.next_id
    cl.next_id += 1
    key = (h, cursor)
    if access == c.RECEIVE_ACCESS and rnd.random() < 0.25:
        action = c.MQ_ACTION_RECEIVE
    elif key in cl.on_message and rnd.random() < 0.8:
        action = c.MQ_ACTION_PEEK_NEXT
    else:
        action = c.MQ_ACTION_PEEK_CURRENT
    r = cl.rpc.call(c.R_StartReceive(phContext=h, LookupId=0, hCursor=cursor,
                                     ulAction=action, ulTimeout=0, dwRequestId=rid,
                                     dwMaxBodySize=4096, dwMaxCompoundMessageSize=0))
    if r.raised or r.status != 0:  # the cursor stays where it was (Read or Unread)
        return
    if action == c.MQ_ACTION_RECEIVE:
        cl.pending.setdefault(h, []).append(rid)
        cl.on_message.discard(key)
    else:
        cl.on_message.add(key)


def _close(cl: _Client, h: bytes) -> None:
    """End every receive on the handle, close its cursors, then close it (MS-MQRR 3.2.4.13)."""
    for rid in cl.pending.pop(h, []):
        cl.rpc.call(c.R_EndReceive(phContext=h, dwAck=c.RR_NACK, dwRequestId=rid))
    for cursor in cl.cursors.pop(h, []):
        cl.on_message.discard((h, cursor))
        cl.rpc.call(c.R_CloseCursor(phContext=h, hCursor=cursor))
    cl.rpc.call(c.R_CloseQueue(pphContext=h))
    del cl.handles[h]


def synth(out: str | Path, servers: int = 4, connections: int = 8, fault_rate: float = 0.3,
          seed: int = 1, steps: int = 60, faulty_servers: int | None = None,
          faults: tuple[str, ...] | None = None, progress: Any = None) -> dict:
    """Make the corpus; returns what labels.json holds."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    names = frozenset(faults or FAULTS)
    if faulty_servers is None:
        faulty_servers = (servers + 1) // 2 if fault_rate > 0 else 0
    labels: dict = {"servers": [], "activations": [],
                    "parameters": {"servers": servers, "connections": connections,
                                   "fault_rate": fault_rate, "seed": seed, "steps": steps,
                                   "faulty_servers": faulty_servers}}
    for index in range(servers):
        rnd = random.Random(seed * 1000 + index)
        armed = names if index < faulty_servers and fault_rate > 0 else frozenset()
        server = _Server(index, armed, fault_rate, seed * 1000 + index)
        capture = f"server-{index:02d}.pcap"
        try:
            server.refill()
            clients = [server.client(rnd.randint(steps // 2, steps * 3 // 2))
                       for _ in range(connections)]
            live = list(clients)
            while live:
                cl = rnd.choice(live)
                if cl.steps <= 0:
                    for h in list(cl.handles):
                        _close(cl, h)
                    cl.rpc.close()
                    live.remove(cl)
                    continue
                cl.steps -= 1
                _step(cl, rnd)
                server.refill()
        finally:
            server.stop()
        server.recorder.close()
        server.recorder.write(out / capture)
        labels["servers"].append({"server": server.address, "capture": capture,
                                  "faults": sorted(armed), "rate": fault_rate if armed else 0})
        for a in (server.faults.activations if server.faults else []):
            labels["activations"].append({"server": server.address, "capture": capture,
                                          **a.to_json()})
        if progress is not None:
            progress(index + 1, servers)
    (out / "labels.json").write_text(json.dumps(labels, indent=1), encoding="utf-8")
    return labels


# ------------------------------------------------------------------------------ scoring
