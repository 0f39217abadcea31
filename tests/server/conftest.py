"""A raw DCE/RPC client on real sockets, and servers started on 127.0.0.1 for one test."""

from __future__ import annotations

import socket

import pytest

from mqconform.server.rpc import RpcServer
from mqconform.wire import dcerpc as d


class RawClient:
    """Speaks DCE/RPC PDUs over a plain socket: what a test needs to send anything at all."""

    def __init__(self, address, timeout: float = 5.0, source: str | None = None):
        """``source``: the local address to connect from (another loopback address: another
        machine, as far as the server can tell)."""
        self.sock = socket.create_connection(address, timeout=timeout,
                                             source_address=(source, 0) if source else None)
        self.call_id = 1

    def close(self):
        self.sock.close()

    def send(self, data: bytes):
        self.sock.sendall(data)

    def _recv_exact(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError(f"closed after {len(buf)} of {n} octets")
            buf += chunk
        return buf

    def recv_pdu(self) -> d.Pdu:
        head = self._recv_exact(d.HEADER_SIZE)
        h = d.decode_header(head)
        return d.decode_pdu(head + self._recv_exact(h.frag_length - d.HEADER_SIZE))

    def closed_by_peer(self, timeout: float = 5.0) -> bool:
        """True if the server closes the connection (reads to EOF) within ``timeout``."""
        self.sock.settimeout(timeout)
        try:
            while True:
                if not self.sock.recv(65536):
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except TimeoutError:
            return False

    def next_call_id(self) -> int:
        self.call_id += 1
        return self.call_id - 1

    def bind(self, contexts, max_xmit=5840, max_recv=5840, alter=False, flags=d.PFC_WHOLE,
             assoc_group=0):
        """contexts: [(context_id, SyntaxId, [transfer SyntaxId, ...]), ...]"""
        elems = tuple(d.ContextElement(c, a, tuple(ts)) for c, a, ts in contexts)
        cls = d.AlterContext if alter else d.Bind
        self.send(d.encode_pdu(cls(max_xmit, max_recv, assoc_group, elems), self.next_call_id(),
                               flags))
        return self.recv_pdu()

    def typed(self, call, after_stub: bytes = b"", context_id: int = 0):
        """A typed call (model.calls) in NDR on ``context_id``, with ``after_stub`` appended
        to its stub: its Result, or the Fault."""
        from mqconform.wire import ndr

        stub = ndr.encode_request(call, False) + after_stub
        self.request(context_id, call.opnum, stub)
        _, answer, _ = self.response()
        return answer if isinstance(answer, d.Fault) else ndr.decode_response(call, answer,
                                                                              False)

    def request(self, context_id: int, opnum: int, stub: bytes = b"", call_id=None,
                flags=d.PFC_WHOLE) -> int:
        call_id = self.next_call_id() if call_id is None else call_id
        self.send(d.encode_pdu(d.Request(context_id, opnum, stub, len(stub)), call_id, flags))
        return call_id

    def response(self) -> tuple[int, bytes | d.Fault, list[d.Pdu]]:
        """Read one whole answer: (call_id, reassembled stub or the Fault, the fragments)."""
        frags = []
        while True:
            pdu = self.recv_pdu()
            frags.append(pdu)
            if isinstance(pdu.body, d.Fault):
                return pdu.call_id, pdu.body, frags
            assert isinstance(pdu.body, d.Response), pdu
            if pdu.pfc_flags & d.PFC_LAST_FRAG:
                stub = b"".join(f.body.stub for f in frags)
                return pdu.call_id, stub, frags

    def call(self, context_id: int, opnum: int, stub: bytes = b""):
        cid = self.request(context_id, opnum, stub)
        got_cid, answer, _ = self.response()
        assert got_cid == cid
        return answer


@pytest.fixture
def start_server():
    """start_server(handler, **options): an RpcServer on 127.0.0.1, stopped afterwards."""
    started = []

    def make(handler, **options):
        srv = RpcServer(handler, "127.0.0.1", 0, **options).start()
        started.append(srv)
        return srv

    yield make
    for srv in started:
        srv.stop()


@pytest.fixture
def client_for():
    """client_for(server or (host, port)) -> RawClient; closed afterwards."""
    clients = []

    def make(target, timeout: float = 5.0, source: str | None = None):
        c = RawClient(target if isinstance(target, tuple) else target.address, timeout, source)
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.close()
