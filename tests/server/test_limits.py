"""What no client, nor a few thousand sockets, may hold (server/rpc.py, Limits), on real
sockets: idle and dripping connections time out; a full connection table evicts the
connection that costs least to drop so a newcomer binds and calls at once, and says
bind_nak local_limit_exceeded only when each connection has a call in flight; fragmented
requests share one reassembly budget whose octets come back; the endpoint mapper has the
same limits."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from mqconform.model import calls as c
from mqconform.model.formats import parse_format_name, to_queue_format
from mqconform.model.status import MQ_OK
from mqconform.server import rpc
from mqconform.server.epm import EndpointMapper
from mqconform.server.main import start
from mqconform.server.rpc import Reply
from mqconform.wire import dcerpc as d
from mqconform.wire import ndr
from tests.server.test_epm import EPM, MqHandler, impacket_map
from tests.server.test_rpc import ECHO_IF, OP_ECHO, OP_WAIT, EchoHandler, wait_for

BIND = d.encode_pdu(d.Bind(5840, 5840, 0, (d.ContextElement(0, ECHO_IF, (d.NDR,)),)), 1)
REMOTEREAD = d.SyntaxId(c.REMOTEREAD_UUID, 1, 0)
QUEUES = """
queue_manager: {computer_name: MQREF}
queues:
  - path: private$\\orders
"""
ORDERS = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\orders"))


def serves(address, client_for) -> bool:
    """A fresh client binds and completes a call."""
    cl = client_for(address)
    ack = cl.bind([(0, ECHO_IF, [d.NDR])])
    return isinstance(ack.body, d.BindAck) and cl.call(0, OP_ECHO, b"hi") == b"32:hi"


def fragment(call_id: int, stub: bytes, flags: int) -> bytes:
    return d.encode_pdu(d.Request(0, OP_ECHO, stub, len(stub)), call_id, flags)


class Dripper(threading.Thread):
    """A slowloris: a bind sent one octet at a time, never finished (frag_length under the
    limit), until the server closes the connection."""

    def __init__(self, client, every: float = 0.05):
        super().__init__(daemon=True)
        self.client, self.every, self.sent = client, every, 0
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set() and self.sent < len(BIND) - 1:
            try:
                self.client.send(BIND[self.sent:self.sent + 1])
            except OSError:
                return
            self.sent += 1
            self.stop.wait(self.every)


# --- timeouts ----------------------------------------------------------------------------------


def test_a_bound_idle_connection_is_closed_after_idle_timeout(start_server, client_for):
    handler = EchoHandler()
    srv = start_server(handler, idle_timeout=0.3)
    cl = client_for(srv)
    cl.bind([(0, ECHO_IF, [d.NDR])])
    assert cl.call(0, OP_ECHO, b"x") == b"32:x"
    assert cl.closed_by_peer(timeout=10)
    assert handler.lost_event.wait(5)
    assert serves(srv.address, client_for)


def test_a_connection_that_never_binds_is_closed_after_unbound_timeout(start_server,
                                                                        client_for):
    srv = start_server(EchoHandler(), unbound_timeout=0.3)
    assert client_for(srv).closed_by_peer(timeout=10)
    assert wait_for(lambda: not srv.connections)


def test_a_call_in_flight_keeps_its_connection_past_idle_timeout(start_server, client_for):
    handler = EchoHandler()
    srv = start_server(handler, idle_timeout=0.2)
    cl = client_for(srv)
    cl.bind([(0, ECHO_IF, [d.NDR])])
    cid = cl.request(0, OP_WAIT, b"w")
    _, waiter = handler.waiters.get(timeout=5)
    time.sleep(1.0)  # several idle timeouts: the call is in flight, the connection stays
    assert waiter.complete(Reply.stub(b"done"))
    got, answer, _ = cl.response()
    assert (got, answer) == (cid, b"done")


def test_a_dripping_pdu_is_closed_by_its_deadline(start_server, client_for):
    handler = EchoHandler()
    srv = start_server(handler, pdu_timeout=0.5, min_rate=0)
    drip = Dripper(client_for(srv))
    drip.start()
    assert drip.client.closed_by_peer(timeout=10)
    drip.stop.set()
    drip.join(5)
    assert drip.sent < len(BIND)  # it never finished its bind
    assert serves(srv.address, client_for)


def test_a_drip_below_the_minimum_rate_is_closed_well_before_pdu_timeout(start_server,
                                                                         client_for):
    srv = start_server(EchoHandler(), pdu_timeout=3600, min_rate=1000)
    drip = Dripper(client_for(srv), every=0.2)
    drip.start()
    assert drip.client.closed_by_peer(timeout=30)
    drip.stop.set()
    assert drip.sent < len(BIND)


# --- a full connection table ---------------------------------------------------------------------


def test_idle_sockets_do_not_lock_a_new_client_out(start_server, client_for):
    n = 4
    srv = start_server(EchoHandler(), max_connections=n)
    idle = [client_for(srv) for _ in range(n)]
    assert wait_for(lambda: len(srv.connections) == n)
    assert serves(srv.address, client_for)
    assert srv.evictions >= 1
    assert idle[0].closed_by_peer()  # the oldest never-bound one made room
    assert len(srv.connections) <= n


def test_slowloris_drippers_do_not_lock_a_new_client_out(start_server, client_for):
    n = 4
    srv = start_server(EchoHandler(), max_connections=n, pdu_timeout=3600, min_rate=0)
    drippers = [Dripper(client_for(srv), every=0.2) for _ in range(n)]
    for dr in drippers:
        dr.start()
    assert wait_for(lambda: len(srv.connections) == n and
                    all(conn.pdu_started is not None for conn in srv.connections))
    for _ in range(3):  # again and again: each newcomer gets in at once
        assert serves(srv.address, client_for)
    assert srv.evictions >= 3
    for dr in drippers:
        dr.stop.set()


def test_a_thousand_idle_sockets_leave_a_fresh_client_its_call(start_server, client_for):
    srv = start_server(EchoHandler(), max_connections=32)
    flood = [client_for(srv) for _ in range(1000)]
    assert serves(srv.address, client_for)
    assert len(srv.connections) <= 32
    assert flood  # held open until the end of the test


def test_a_bound_clients_call_is_answered_in_the_middle_of_setting_up_newcomers(
        start_server, client_for, monkeypatch):
    """Newcomers are set up in long passes (a flood of them); the connections that have bound
    are watched apart and served inside such a pass, not after it (server/rpc.py, Bursts).
    Each setting up is slowed to 10 ms, so 200 newcomers make a pass of about two seconds:
    the call is answered while newcomers still wait in the lobby."""
    monkeypatch.setattr(rpc, "_TAKE_IN_FOR", 60.0)
    srv = start_server(EchoHandler(), max_connections=512)
    bound = client_for(srv)
    bound.bind([(0, ECHO_IF, [d.NDR])])
    assert bound.call(0, OP_ECHO, b"a") == b"32:a"
    real = rpc.Connection.__init__

    def slow_setup(self, *args, **kwargs):
        time.sleep(0.01)
        real(self, *args, **kwargs)

    monkeypatch.setattr(rpc.Connection, "__init__", slow_setup)
    flood = [client_for(srv) for _ in range(200)]
    assert wait_for(lambda: len(srv._lobby) >= 50)
    assert bound.call(0, OP_ECHO, b"b") == b"32:b"
    assert len(srv._lobby) > 0  # the pass goes on
    assert wait_for(lambda: not srv._lobby and len(srv.connections) == 201, timeout=20)
    assert flood


def test_only_bound_connections_are_watched_apart_and_none_stays_watched(start_server,
                                                                        client_for):
    srv = start_server(EchoHandler(), max_connections=8)
    sel = srv._io.sel
    if sel._epoll is None:
        pytest.skip("no epoll here: one selector watches every socket")
    newcomer = client_for(srv)
    bound = client_for(srv)
    bound.bind([(0, ECHO_IF, [d.NDR])])
    assert bound.call(0, OP_ECHO, b"x") == b"32:x"
    assert wait_for(lambda: len(srv.connections) == 2)
    by_bound = {conn.bound: conn for conn in srv.connections}
    assert wait_for(lambda: by_bound[True]._sock.fileno() in sel._hot_fds)
    assert by_bound[False]._sock.fileno() not in sel._hot_fds
    bound.close()
    newcomer.close()
    assert wait_for(lambda: not srv.connections)
    assert not sel._hot_fds
    assert set(sel._handlers.values()) == {None, srv}  # the wake-up socket, the listener


def test_connections_that_never_sent_a_whole_pdu_are_ended_once_each(start_server, client_for):
    """Evicted before a whole PDU came, or closed for an oversized frag_length: each client
    sees the server's FIN, the handler hears of each connection once, none stays listed."""
    n = 4
    handler = EchoHandler()
    srv = start_server(handler, max_connections=n, pdu_timeout=3600, min_rate=0)
    half = [client_for(srv) for _ in range(n)]
    assert wait_for(lambda: len(srv.connections) == n)
    for cl in half:
        cl.send(BIND[:5])  # inside a PDU, never finished
    oversized = client_for(srv)
    oversized.send(BIND[:8] + (0xFFFF).to_bytes(2, "little") + BIND[10:16])  # frag_length too big
    assert oversized.closed_by_peer()
    assert serves(srv.address, client_for)
    # evicted for the newcomer: the oldest activity the server saw, which is the order in which
    # it read the four half PDUs (one poll can hand it several at once), not the order sent
    assert srv.evictions >= 1
    assert any(cl.closed_by_peer(timeout=1.0) for cl in half)
    for cl in half:
        cl.close()
    assert wait_for(lambda: len(srv.connections) == 1)  # the newcomer, still open
    assert wait_for(lambda: len(handler.lost) == n + 1)  # the four and the oversized
    assert len(set(handler.lost)) == len(handler.lost)


@pytest.fixture
def queue_manager(tmp_path):
    """The reference queue manager with room for three connections."""
    path = tmp_path / "queues.yaml"
    path.write_text(QUEUES)
    r = start(port=0, queues=str(path), limits={"max_connections": 3})
    yield r
    r.stop()


def open_queue(cl) -> bytes:
    ack = cl.bind([(0, REMOTEREAD, [d.NDR])])
    assert isinstance(ack.body, d.BindAck)
    out = cl.typed(c.R_OpenQueue(pQueueFormat=ORDERS, dwAccess=c.RECEIVE_ACCESS,
                                 pClientId=uuid.uuid4(), fNonRoutingServer=1))
    return out.pphContext


def test_eviction_spares_a_client_in_a_call_and_one_holding_handles(queue_manager, client_for):
    rpc = queue_manager.rpc
    waiting = client_for(rpc)  # its handle in a receive that waits (an empty queue)
    ctx = open_queue(waiting)
    waiting.request(0, c.R_StartReceive.opnum, ndr.encode_request(c.R_StartReceive(
        phContext=ctx, ulAction=c.MQ_ACTION_RECEIVE, ulTimeout=600_000, dwRequestId=1,
        dwMaxBodySize=64, dwMaxCompoundMessageSize=64), False))
    assert wait_for(lambda: queue_manager.handler.host.waiting() == 1)
    holder = client_for(rpc)  # bound and idle, but its closing would run its handle down
    held = open_queue(holder)
    client_for(rpc)  # never binds
    assert wait_for(lambda: len(rpc.connections) == 3)
    for _ in range(3):  # each newcomer evicts the cheapest: the unbound, then the idle
        fresh = client_for(rpc)
        ack = fresh.bind([(0, REMOTEREAD, [d.NDR])])
        assert isinstance(ack.body, d.BindAck)
        assert fresh.typed(c.R_GetServerPort()).status == rpc.address[1]
    assert rpc.evictions == 3
    local = {cl.sock.getsockname()[1] for cl in (waiting, holder)}
    assert local <= {conn.peer[1] for conn in rpc.connections}
    assert queue_manager.handler.host.waiting() == 1  # the receive still waits
    peek = holder.typed(c.R_StartReceive(phContext=held, ulAction=c.MQ_ACTION_PEEK_CURRENT,
                                         dwRequestId=2, dwMaxBodySize=64,
                                         dwMaxCompoundMessageSize=64))
    assert not isinstance(peek, d.Fault)  # the handle was not run down
    assert peek.status != MQ_OK  # (the queue is empty)


def test_with_a_call_in_flight_on_every_connection_a_bind_gets_local_limit_exceeded(
        start_server, client_for):
    handler = EchoHandler()
    srv = start_server(handler, max_connections=2)
    for _ in range(2):
        busy = client_for(srv)
        busy.bind([(0, ECHO_IF, [d.NDR])])
        busy.request(0, OP_WAIT)
        handler.waiters.get(timeout=5)
    late = client_for(srv)
    late.send(BIND)
    nak = late.recv_pdu()
    assert isinstance(nak.body, d.BindNak)
    assert nak.body.reason == d.RejectReason.LOCAL_LIMIT_EXCEEDED
    assert late.closed_by_peer()
    assert srv.refusals == 1 and srv.evictions == 0


# --- the reassembly budget -----------------------------------------------------------------------


def test_past_the_reassembly_budget_a_request_is_faulted_and_its_octets_freed(start_server,
                                                                            client_for):
    srv = start_server(EchoHandler(), reassembly_budget=10_000)
    first, second = client_for(srv), client_for(srv)
    for cl in (first, second):
        cl.bind([(0, ECHO_IF, [d.NDR])])
    first.send(fragment(7, b"a" * 4000, d.PFC_FIRST_FRAG))
    first.send(fragment(7, b"b" * 4000, 0))
    assert wait_for(lambda: srv.reassembly_octets == 8000)
    second.send(fragment(9, b"c" * 1000, d.PFC_FIRST_FRAG))
    second.send(fragment(9, b"d" * 4000, 0))  # 13,000 octets: past the budget
    got, fault, _ = second.response()
    assert got == 9 and isinstance(fault, d.Fault)
    assert fault.status == d.NCA_S_FAULT_REMOTE_NO_MEMORY
    assert srv.reassembly_octets == 8000  # the refused request's 1,000 octets are gone
    second.send(fragment(9, b"e" * 10, d.PFC_LAST_FRAG))  # its rest is ignored
    assert second.call(0, OP_ECHO, b"ok") == b"32:ok"
    first.send(fragment(7, b"c" * 10, d.PFC_LAST_FRAG))
    got, stub, _ = first.response()
    assert got == 7 and stub == b"32:" + b"a" * 4000 + b"b" * 4000 + b"c" * 10
    assert srv.reassembly_octets == 0


def test_the_octets_of_a_connection_are_freed_when_it_closes(start_server, client_for):
    srv = start_server(EchoHandler())
    cl = client_for(srv)
    cl.bind([(0, ECHO_IF, [d.NDR])])
    cl.send(fragment(3, b"x" * 5000, d.PFC_FIRST_FRAG))
    assert wait_for(lambda: srv.reassembly_octets == 5000)
    cl.close()
    assert wait_for(lambda: srv.reassembly_octets == 0)


def test_a_request_whose_fragments_stop_coming_is_dropped_with_its_octets(start_server,
                                                                         client_for):
    handler = EchoHandler()
    srv = start_server(handler, pdu_timeout=0.3)
    cl = client_for(srv)
    cl.bind([(0, ECHO_IF, [d.NDR])])
    cl.send(fragment(3, b"x" * 5000, d.PFC_FIRST_FRAG))
    assert cl.closed_by_peer(timeout=10)
    assert wait_for(lambda: srv.reassembly_octets == 0)


def test_limits_out_of_range_are_refused_in_one_line(start_server):
    for options in ({"max_connections": 0}, {"idle_timeout": 0}, {"reassembly_budget": -1},
                    {"min_rate": float("nan")}):
        with pytest.raises(ValueError, match=next(iter(options))):
            start_server(EchoHandler(), **options)


# --- the endpoint mapper -------------------------------------------------------------------------


@pytest.fixture
def mapper(start_server):
    rpc = start_server(MqHandler())
    epm = EndpointMapper(max_connections=3, idle_timeout=0.3, unbound_timeout=60).start()
    epm.register_server(rpc)
    yield epm
    epm.stop()


def test_the_endpoint_mapper_evicts_idle_sockets_for_a_new_client(mapper, client_for):
    idle = [client_for(mapper.address) for _ in range(3)]
    assert wait_for(lambda: len(mapper.server.connections) == 3)
    port = mapper.registrations()[0].port
    assert impacket_map(mapper.address, c.REMOTEREAD_UUID) == f"ncacn_ip_tcp:127.0.0.1[{port}]"
    assert mapper.server.evictions >= 1 and idle[0].closed_by_peer()


def test_the_endpoint_mapper_closes_an_idle_bound_connection(mapper, client_for):
    cl = client_for(mapper.address)
    ack = cl.bind([(0, EPM, [d.NDR])])
    assert isinstance(ack.body, d.BindAck)
    assert cl.closed_by_peer(timeout=10)
    assert wait_for(lambda: not mapper.server.connections)


def test_serve_gives_the_endpoint_mapper_the_same_limits(tmp_path, client_for):
    r = start(port=0, epm_port=0, limits={"max_connections": 2, "unbound_timeout": 0.3})
    try:
        assert r.epm.server.max_connections == 2
        assert client_for(r.epm.address).closed_by_peer(timeout=10)
    finally:
        r.stop()


@pytest.mark.parametrize("flag,value", [("--max-connections", "0"), ("--idle-timeout", "0"),
                                        ("--pdu-timeout", "nan"), ("--min-rate", "-1"),
                                        ("--reassembly-budget", "0"),
                                        ("--unbound-timeout", "-3")])
def test_serve_refuses_a_limit_out_of_range_in_one_line(flag, value, capsys):
    from mqconform.cli import main

    assert main(["serve", "--port", "0", flag, value]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and flag in err


def test_memory_goes_back_once_connections_have_closed_and_no_newcomer_comes():
    """server/rpc.py _MemoryGiver: glibc's malloc_trim (the real one, counted) runs on the
    acceptor's idle tick after a connection has closed, at most once per ``every`` seconds,
    and not at all while no connection closed."""
    from mqconform.server.rpc import _MemoryGiver

    giver = _MemoryGiver(every=3600.0)
    if giver._trim is None:
        pytest.skip("no glibc malloc_trim on this system")
    calls = []
    real = giver._trim
    giver._trim = lambda pad: (calls.append(pad), real(pad))[1]
    giver.quiet()
    assert calls == []  # nothing closed yet
    giver.closed()
    giver.quiet()
    assert calls == [0]
    giver.closed()
    giver.quiet()  # within `every` of the last one
    assert calls == [0]
    giver._last -= 3600.0
    giver.quiet()
    assert calls == [0, 0]


def test_memory_goes_back_once_a_burst_of_closes_is_over():
    """_MemoryGiver: within ``every`` of the last trim, a trim is due again once no connection
    has closed for ``settle`` seconds (the end of a flood is not left holding its memory)."""
    from mqconform.server.rpc import _MemoryGiver

    giver = _MemoryGiver(every=3600.0, settle=0.2)
    if giver._trim is None:
        pytest.skip("no glibc malloc_trim on this system")
    giver.closed()
    giver.quiet()
    assert not giver.due(time.monotonic())  # just trimmed
    giver.closed()
    assert not giver.due(time.monotonic())  # still closing
    time.sleep(0.25)
    assert giver.due(time.monotonic())  # the closes stopped: due, though `every` has not passed
    giver.quiet()
    assert not giver.due(time.monotonic())
