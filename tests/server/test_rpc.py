"""The DCE/RPC runtime on real sockets: binds, calls, fragments, waiting calls, hostile input."""

from __future__ import annotations

import queue
import select
import socket
import struct
import threading
import time
import uuid

import pytest

from mqconform.server.rpc import Reply, RpcServer, Waiter
from mqconform.wire import dcerpc as d
from mqconform.wire.association import negotiate_contexts

#: made-up interfaces: one with both transfer syntaxes, one NDR only
ECHO_IF = d.SyntaxId(uuid.UUID("5c0a1e7e-0000-4d1b-9c3e-3f1b0e5a7c01"), 1, 0)
NDR_ONLY_IF = d.SyntaxId(uuid.UUID("5c0a1e7e-0000-4d1b-9c3e-3f1b0e5a7c02"), 2, 1)

OP_ECHO = 0  # stub back, prefixed b"64:" or b"32:" by transfer syntax
OP_WAIT = 1  # answered when the test completes the waiter
OP_BAD_STUB = 2  # the handler's decoder fails (raises ValueError)
OP_BIG = 3  # u32 n in the stub -> n octets (i % 251)
OP_CRASH = 4  # the handler fails with a non-decoding error


class EchoHandler:
    """The handler interface of server.rpc, serving ECHO_IF and NDR_ONLY_IF."""

    def __init__(self):
        self.calls: list[tuple[int, uuid.UUID, int, bytes, bool]] = []
        self.waiters: queue.Queue = queue.Queue()
        self.lost: list[int] = []
        self.lost_event = threading.Event()
        self.abandoned: list[int] = []
        self.cancelled: list[int] = []

    def interfaces(self):
        return {ECHO_IF.uuid: (1, 0, frozenset({"ndr", "ndr64"})),
                NDR_ONLY_IF.uuid: (2, 1, frozenset({"ndr"}))}

    def call(self, conn, interface, opnum, stub, ndr64):
        self.calls.append((conn.id, interface, opnum, stub, ndr64))
        conn.state["calls"] = conn.state.get("calls", 0) + 1
        if opnum == OP_ECHO:
            return Reply.stub((b"64:" if ndr64 else b"32:") + stub)
        if opnum == OP_WAIT:
            n = len(self.calls)
            waiter = Waiter(on_abandon=lambda: self.abandoned.append(n),
                            on_cancel=lambda: self.cancelled.append(n))
            self.waiters.put((stub, waiter))
            return Reply.later(waiter)
        if opnum == OP_BAD_STUB:
            raise ValueError("stub does not decode")
        if opnum == OP_BIG:
            n, = struct.unpack("<I", stub[:4])
            return Reply.stub(bytes(i % 251 for i in range(n)))
        if opnum == OP_CRASH:
            raise RuntimeError("bug")
        return Reply.fault(d.NCA_S_OP_RNG_ERROR)

    def connection_lost(self, conn):
        self.lost.append(conn.id)
        self.lost_event.set()


@pytest.fixture
def handler():
    return EchoHandler()


@pytest.fixture
def make_server(start_server, handler):
    """make_server(**options): an RpcServer for ``handler`` (or options["handler"])."""
    return lambda **options: start_server(options.pop("handler", handler), **options)


@pytest.fixture
def server(make_server):
    return make_server()

UNKNOWN_IF = d.SyntaxId(uuid.UUID("5c0a1e7e-0000-4d1b-9c3e-3f1b0e5a7cff"), 1, 0)
REMOTEREAD = d.SyntaxId(uuid.UUID("1a9134dd-7b39-45ba-ad88-44d01ca47f28"), 1, 0)
QMMGMT = d.SyntaxId(uuid.UUID("41208ee0-e970-11d1-9b9e-00e02c064c39"), 1, 0)
ACCEPT, PROVIDER_REJECTION = d.ContResult.ACCEPTANCE, d.ContResult.PROVIDER_REJECTION
ABSTRACT_NOT_SUPPORTED = d.ProviderReason.ABSTRACT_SYNTAX_NOT_SUPPORTED
SYNTAXES_NOT_SUPPORTED = d.ProviderReason.PROPOSED_TRANSFER_SYNTAXES_NOT_SUPPORTED


def results(pdu):
    return [(r.result, r.reason, r.transfer_syntax) for r in pdu.body.results]


def wait_for(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def still_serves(srv, client_for):
    c = client_for(srv)
    ack = c.bind([(0, ECHO_IF, [d.NDR])])
    return results(ack)[0][0] == ACCEPT and c.call(0, OP_ECHO, b"ok") == b"32:ok"


# --- binding -----------------------------------------------------------------------------------


def test_bind_with_ndr_is_accepted_and_a_call_gets_its_stub_back(server, client_for, handler):
    c = client_for(server)
    ack = c.bind([(0, ECHO_IF, [d.NDR])])
    assert isinstance(ack.body, d.BindAck) and ack.call_id == 1
    assert results(ack) == [(ACCEPT, 0, d.NDR)]
    assert ack.body.sec_addr == str(server.address[1]).encode()
    assert ack.body.assoc_group_id != 0
    assert c.call(0, OP_ECHO, b"hello") == b"32:hello"
    assert handler.calls[-1][1:] == (ECHO_IF.uuid, OP_ECHO, b"hello", False)


def test_bind_with_ndr64_is_accepted_and_the_handler_is_told_ndr64(server, client_for, handler):
    c = client_for(server)
    assert results(c.bind([(0, ECHO_IF, [d.NDR64])])) == [(ACCEPT, 0, d.NDR64)]
    assert c.call(0, OP_ECHO, b"x") == b"64:x"
    assert handler.calls[-1][4] is True


def test_offering_both_syntaxes_in_two_elements_accepts_one_preferring_ndr64(server, client_for):
    c = client_for(server)
    ack = c.bind([(0, ECHO_IF, [d.NDR]), (1, ECHO_IF, [d.NDR64])])
    assert results(ack) == [(PROVIDER_REJECTION, SYNTAXES_NOT_SUPPORTED, d.NULL_SYNTAX),
                            (ACCEPT, 0, d.NDR64)]
    assert c.call(1, OP_ECHO, b"a") == b"64:a"
    answer = c.call(0, OP_ECHO, b"a")
    assert isinstance(answer, d.Fault) and answer.status == d.NCA_S_INVALID_PRES_CONTEXT_ID


def test_offering_both_syntaxes_in_one_element_accepts_the_preferred(server, client_for):
    c = client_for(server)
    assert results(c.bind([(0, ECHO_IF, [d.NDR, d.NDR64])])) == [(ACCEPT, 0, d.NDR64)]


def test_a_server_preferring_ndr_accepts_ndr_when_both_are_offered(make_server, client_for):
    c = client_for(make_server(prefer_ndr64=False))
    ack = c.bind([(0, ECHO_IF, [d.NDR64]), (1, ECHO_IF, [d.NDR])])
    assert results(ack) == [(PROVIDER_REJECTION, SYNTAXES_NOT_SUPPORTED, d.NULL_SYNTAX),
                            (ACCEPT, 0, d.NDR)]


def test_ndr64_for_an_ndr_only_interface_is_rejected_as_unsupported_syntax(server, client_for):
    c = client_for(server)
    ack = c.bind([(0, NDR_ONLY_IF, [d.NDR64])])
    assert results(ack) == [(PROVIDER_REJECTION, SYNTAXES_NOT_SUPPORTED, d.NULL_SYNTAX)]
    odd = d.SyntaxId(d.NDR.uuid, 1, 0)  # NDR's UUID in a version that does not exist
    assert results(c.bind([(1, NDR_ONLY_IF, [odd])], alter=True))[0][:2] == (
        PROVIDER_REJECTION, SYNTAXES_NOT_SUPPORTED)


@pytest.mark.parametrize("abstract", [
    UNKNOWN_IF,
    d.SyntaxId(ECHO_IF.uuid, 2, 0),  # other major version
    d.SyntaxId(NDR_ONLY_IF.uuid, 2, 2),  # newer minor version than served (2.1)
])
def test_an_interface_not_served_is_rejected_as_abstract_syntax_not_supported(
        server, client_for, abstract):
    c = client_for(server)
    assert results(c.bind([(0, abstract, [d.NDR])])) == [
        (PROVIDER_REJECTION, ABSTRACT_NOT_SUPPORTED, d.NULL_SYNTAX)]


def test_an_older_minor_version_of_a_served_interface_is_accepted(server, client_for):
    c = client_for(server)
    older = d.SyntaxId(NDR_ONLY_IF.uuid, 2, 0)
    assert results(c.bind([(0, older, [d.NDR])])) == [(ACCEPT, 0, d.NDR)]


def test_several_contexts_in_one_bind_each_select_interface_and_syntax(server, client_for,
                                                                        handler):
    c = client_for(server)
    ack = c.bind([(0, ECHO_IF, [d.NDR64]), (1, NDR_ONLY_IF, [d.NDR]), (2, UNKNOWN_IF, [d.NDR])])
    assert [r[0] for r in results(ack)] == [ACCEPT, ACCEPT, PROVIDER_REJECTION]
    assert c.call(1, OP_ECHO, b"q") == b"32:q"
    assert handler.calls[-1][1] == NDR_ONLY_IF.uuid
    assert c.call(0, OP_ECHO, b"q") == b"64:q"
    assert handler.calls[-1][1] == ECHO_IF.uuid
    answer = c.call(2, OP_ECHO, b"q")
    assert isinstance(answer, d.Fault) and answer.status == d.NCA_S_INVALID_PRES_CONTEXT_ID


def test_alter_context_adds_a_context_to_the_association(server, client_for, handler):
    c = client_for(server)
    c.bind([(0, ECHO_IF, [d.NDR])])
    resp = c.bind([(1, NDR_ONLY_IF, [d.NDR]), (2, ECHO_IF, [d.NDR64])], alter=True)
    assert isinstance(resp.body, d.AlterContextResp)
    assert results(resp) == [(ACCEPT, 0, d.NDR), (ACCEPT, 0, d.NDR64)]
    assert c.call(2, OP_ECHO, b"z") == b"64:z"
    assert c.call(1, OP_ECHO, b"z") == b"32:z" and handler.calls[-1][1] == NDR_ONLY_IF.uuid
    assert c.call(0, OP_ECHO, b"z") == b"32:z"  # the first context still works


def test_alter_context_cannot_rebind_a_live_context_id_to_another_interface(server, client_for):
    c = client_for(server)
    c.bind([(0, ECHO_IF, [d.NDR])])
    resp = c.bind([(0, NDR_ONLY_IF, [d.NDR])], alter=True)
    assert results(resp)[0][:2] == (PROVIDER_REJECTION, d.ProviderReason.REASON_NOT_SPECIFIED)
    assert c.call(0, OP_ECHO, b"s") == b"32:s"


def test_bind_time_feature_negotiation_is_answered_negotiate_ack(server, client_for):
    c = client_for(server)
    offer = d.bind_time_feature_syntax(d.SECURITY_CONTEXT_MULTIPLEXING
                                       | d.KEEP_CONNECTION_ON_ORPHAN)
    assert str(offer.uuid) == "6cb71c2c-9812-4540-0300-000000000000"
    ack = c.bind([(0, ECHO_IF, [d.NDR]), (1, ECHO_IF, [offer])])
    assert results(ack) == [(ACCEPT, 0, d.NDR),
                            (d.ContResult.NEGOTIATE_ACK, d.KEEP_CONNECTION_ON_ORPHAN,
                             d.NULL_SYNTAX)]


def test_a_bind_time_feature_element_answers_its_first_offer_and_ignores_the_rest(
        server, client_for):
    """MS-RPCE 3.3.1.5.3; Windows answers the first bitmask of the element and ignores the
    other transfer syntaxes (Samba's raw_protocol tests, *_ignore_additional)."""
    c = client_for(server)
    first = d.bind_time_feature_syntax(d.KEEP_CONNECTION_ON_ORPHAN)
    second = d.bind_time_feature_syntax(d.SECURITY_CONTEXT_MULTIPLEXING)
    ack = c.bind([(0, ECHO_IF, [d.NDR]), (1, d.NDR64, [first, second, d.NULL_SYNTAX])])
    assert results(ack) == [(ACCEPT, 0, d.NDR),
                            (d.ContResult.NEGOTIATE_ACK, d.KEEP_CONNECTION_ON_ORPHAN,
                             d.NULL_SYNTAX)]
    assert c.call(0, OP_ECHO, b"q") == b"32:q"


def test_two_bind_time_feature_elements_in_one_bind_get_bind_nak_and_a_close(server,
                                                                          client_for):
    """As Windows does (Samba's raw_protocol test_no_auth_bind_time_twice): bind_nak, reason
    not specified, then the connection is closed."""
    c = client_for(server)
    nak = c.bind([(1, d.NULL_SYNTAX, [d.bind_time_feature_syntax(d.KEEP_CONNECTION_ON_ORPHAN)]),
                  (2, d.NULL_SYNTAX,
                   [d.bind_time_feature_syntax(d.SECURITY_CONTEXT_MULTIPLEXING)])])
    assert isinstance(nak.body, d.BindNak)
    assert nak.body.reason == d.RejectReason.REASON_NOT_SPECIFIED
    assert c.closed_by_peer()
    other = client_for(server)  # the server goes on
    assert results(other.bind([(0, ECHO_IF, [d.NDR])]))[0][0] == ACCEPT


def test_fragment_sizes_are_negotiated_down_to_what_the_client_proposes(make_server,
                                                                        client_for):
    c = client_for(make_server(max_frag=5840))
    ack = c.bind([(0, ECHO_IF, [d.NDR])], max_xmit=2048, max_recv=3000)
    assert (ack.body.max_xmit_frag, ack.body.max_recv_frag) == (3000, 2048)
    c.request(0, OP_BIG, struct.pack("<I", 10000))
    _, stub, frags = c.response()
    assert stub == bytes(i % 251 for i in range(10000))
    assert max(f.header.frag_length for f in frags) <= 3000 and len(frags) > 3


class MqHandler:
    """Serves the two MSMQ interfaces with the transfer syntaxes their documents require."""

    def interfaces(self):
        return {REMOTEREAD.uuid: (1, 0, frozenset({"ndr", "ndr64"})),
                QMMGMT.uuid: (1, 0, frozenset({"ndr"}))}

    def call(self, conn, interface, opnum, stub, ndr64):
        return Reply.stub(b"64" if ndr64 else b"32")

    def connection_lost(self, conn):
        pass


@pytest.mark.req("MS-MQRR/2.1/R1", "MS-MQRR/3.1.3/R1", "MS-MQRR/2.2/R1")
def test_remoteread_is_served_over_ncacn_ip_tcp_with_ndr_and_ndr64(make_server, client_for):
    srv = make_server(handler=MqHandler())
    for syntax in (d.NDR, d.NDR64):
        c = client_for(srv)
        assert results(c.bind([(0, REMOTEREAD, [syntax])])) == [(ACCEPT, 0, syntax)]
        assert c.call(0, 0) == (b"64" if syntax == d.NDR64 else b"32")
    c = client_for(srv)  # both offered: one chosen (MS-RPCE 3.3.1.5.6)
    assert [r[0] for r in results(c.bind([(0, REMOTEREAD, [d.NDR]),
                                          (1, REMOTEREAD, [d.NDR64])]))].count(ACCEPT) == 1


@pytest.mark.req("MS-MQMR/2.1/R1", "MS-MQMR/2.2/R1", "MS-MQMR/3.1.3/R1")
def test_qmmgmt_is_served_with_ndr_only(make_server, client_for):
    c = client_for(make_server(handler=MqHandler()))
    ack = c.bind([(0, QMMGMT, [d.NDR64]), (1, QMMGMT, [d.NDR])])
    assert results(ack) == [(PROVIDER_REJECTION, SYNTAXES_NOT_SUPPORTED, d.NULL_SYNTAX),
                            (ACCEPT, 0, d.NDR)]
    assert c.call(1, 0) == b"32"
    other = d.SyntaxId(QMMGMT.uuid, 2, 0)
    assert results(c.bind([(2, other, [d.NDR])], alter=True))[0][1] == ABSTRACT_NOT_SUPPORTED


def test_negotiation_is_a_pure_function_of_the_proposal():
    served = {ECHO_IF.uuid: (1, 0, frozenset({"ndr", "ndr64"}))}
    proposal = [d.ContextElement(0, ECHO_IF, (d.NDR,)), d.ContextElement(0, ECHO_IF, (d.NDR64,))]
    res, accepted, features = negotiate_contexts(proposal, served)
    assert [r.result for r in res] == [ACCEPT, PROVIDER_REJECTION]  # one p_cont_id twice
    assert accepted[0].ndr64 is False and features is None


# --- fragments ---------------------------------------------------------------------------------


def test_a_fragmented_request_is_reassembled_in_order(server, client_for, handler):
    c = client_for(server)
    c.bind([(0, ECHO_IF, [d.NDR])])
    parts = [b"A" * 16, b"B" * 16, b"C" * 5]
    flags = [d.PFC_FIRST_FRAG, 0, d.PFC_LAST_FRAG]
    for part, f in zip(parts, flags, strict=True):
        c.request(0, OP_ECHO, part, call_id=7, flags=f)
    cid, stub, _ = c.response()
    assert (cid, stub) == (7, b"32:" + b"".join(parts))
    assert handler.calls[-1][3] == b"".join(parts)


def test_fragments_of_two_calls_may_interleave(server, client_for):
    c = client_for(server)
    c.bind([(0, ECHO_IF, [d.NDR])])
    c.request(0, OP_ECHO, b"1a", call_id=10, flags=d.PFC_FIRST_FRAG)
    c.request(0, OP_ECHO, b"2a", call_id=11, flags=d.PFC_FIRST_FRAG)
    c.request(0, OP_ECHO, b"2b", call_id=11, flags=d.PFC_LAST_FRAG)
    c.request(0, OP_ECHO, b"1b", call_id=10, flags=d.PFC_LAST_FRAG)
    answers = dict(c.response()[:2] for _ in range(2))
    assert answers == {11: b"32:2a2b", 10: b"32:1a1b"}


def test_a_response_is_fragmented_to_the_server_fragment_size(make_server, client_for):
    c = client_for(make_server(max_frag=256))
    ack = c.bind([(0, ECHO_IF, [d.NDR])])
    assert ack.body.max_xmit_frag == 256
    c.request(0, OP_BIG, struct.pack("<I", 5000))
    _, stub, frags = c.response()
    assert stub == bytes(i % 251 for i in range(5000))
    assert all(f.header.frag_length <= 256 for f in frags)
    assert frags[0].pfc_flags & d.PFC_FIRST_FRAG and frags[-1].pfc_flags & d.PFC_LAST_FRAG
    assert not any(f.pfc_flags & d.PFC_LAST_FRAG for f in frags[:-1])
    assert not any(f.pfc_flags & d.PFC_FIRST_FRAG for f in frags[1:])
    assert all(len(f.body.stub) % 8 == 0 for f in frags[:-1])
    assert frags[0].body.alloc_hint == 5000
    assert [f.body.alloc_hint for f in frags] == [5000 - sum(len(g.body.stub) for g in frags[:i])
                                                   for i in range(len(frags))]


def test_an_empty_stub_is_one_whole_response(server, client_for):
    c = client_for(server)
    c.bind([(0, ECHO_IF, [d.NDR])])
    c.request(0, OP_BIG, struct.pack("<I", 0))
    _, stub, frags = c.response()
    assert stub == b"" and len(frags) == 1 and frags[0].pfc_flags & d.PFC_WHOLE == d.PFC_WHOLE


def test_a_middle_fragment_without_a_first_is_a_protocol_error_fault(server, client_for):
    c = client_for(server)
    c.bind([(0, ECHO_IF, [d.NDR])])
    c.request(0, OP_ECHO, b"orphan", call_id=5, flags=0)
    c.request(0, OP_ECHO, b"orphan", call_id=5, flags=d.PFC_LAST_FRAG)  # ignored
    cid, fault, frags = c.response()
    assert cid == 5 and fault.status == d.NCA_S_PROTO_ERROR
    assert frags[0].pfc_flags & d.PFC_DID_NOT_EXECUTE
    assert c.call(0, OP_ECHO, b"next") == b"32:next"


def test_fragments_switching_opnum_mid_call_are_a_protocol_error(server, client_for):
    c = client_for(server)
    c.bind([(0, ECHO_IF, [d.NDR])])
    c.request(0, OP_ECHO, b"a" * 8, call_id=3, flags=d.PFC_FIRST_FRAG)
    c.request(0, OP_BIG, b"b" * 8, call_id=3, flags=0)
    c.request(0, OP_BIG, b"c", call_id=3, flags=d.PFC_LAST_FRAG)
    cid, fault, _ = c.response()
    assert cid == 3 and fault.status == d.NCA_S_PROTO_ERROR
    assert c.call(0, OP_ECHO, b"ok") == b"32:ok"


def test_a_request_larger_than_the_limit_is_faulted_and_its_rest_ignored(make_server,
                                                                         client_for, handler):
    c = client_for(make_server(max_request=1000))
    c.bind([(0, ECHO_IF, [d.NDR])])
    c.request(0, OP_ECHO, b"x" * 600, call_id=9, flags=d.PFC_FIRST_FRAG)
    c.request(0, OP_ECHO, b"x" * 600, call_id=9, flags=0)
    c.request(0, OP_ECHO, b"x" * 600, call_id=9, flags=d.PFC_LAST_FRAG)
    cid, fault, _ = c.response()
    assert cid == 9 and fault.status == d.NCA_S_FAULT_REMOTE_NO_MEMORY
    assert c.call(0, OP_ECHO, b"ok") == b"32:ok"
    assert all(call[3] != b"x" * 1800 for call in handler.calls)


# --- calls that wait ---------------------------------------------------------------------------


def test_a_waiting_call_does_not_block_other_connections(server, client_for, handler):
    a, b = client_for(server), client_for(server)
    a.bind([(0, ECHO_IF, [d.NDR])])
    b.bind([(0, ECHO_IF, [d.NDR])])
    cid = a.request(0, OP_WAIT, b"slow")
    stub, waiter = handler.waiters.get(timeout=5)
    assert stub == b"slow" and not waiter.done
    for i in range(3):
        assert b.call(0, OP_ECHO, bytes([i])) == b"32:" + bytes([i])
    assert waiter.complete(Reply.stub(b"done")) is True
    assert a.response()[:2] == (cid, b"done")
    assert waiter.complete(Reply.stub(b"again")) is False


def test_a_waiting_call_does_not_block_other_calls_on_its_connection(server, client_for,
                                                                     handler):
    c = client_for(server)
    c.bind([(0, ECHO_IF, [d.NDR])])
    slow = c.request(0, OP_WAIT, b"")
    _, waiter = handler.waiters.get(timeout=5)
    fast = c.request(0, OP_ECHO, b"f")
    assert c.response()[:2] == (fast, b"32:f")
    waiter.complete(Reply.fault(0xC00E0001))
    cid, fault, frags = c.response()
    assert cid == slow and fault.status == 0xC00E0001
    assert not frags[0].pfc_flags & d.PFC_DID_NOT_EXECUTE  # the handler ran it


def test_a_call_completed_later_from_another_thread_is_fragmented_too(make_server, client_for,
                                                                     handler):
    c = client_for(make_server(max_frag=128))
    c.bind([(0, ECHO_IF, [d.NDR])])
    c.request(0, OP_WAIT, b"")
    _, waiter = handler.waiters.get(timeout=5)
    big = bytes(range(256)) * 4
    threading.Thread(target=waiter.complete, args=(Reply.stub(big),)).start()
    _, stub, frags = c.response()
    assert stub == big and len(frags) == 10


def test_an_orphaned_call_is_abandoned_and_gets_no_response(server, client_for, handler):
    c = client_for(server)
    c.bind([(0, ECHO_IF, [d.NDR])])
    cid = c.request(0, OP_WAIT, b"")
    _, waiter = handler.waiters.get(timeout=5)
    c.send(d.encode_pdu(d.Orphaned(), cid))
    assert wait_for(lambda: waiter.abandoned)
    assert handler.abandoned and waiter.complete(Reply.stub(b"late")) is False
    assert c.call(0, OP_ECHO, b"after") == b"32:after"  # nothing else was sent before it


def test_co_cancel_reaches_the_waiting_call_and_is_counted_in_its_response(server, client_for,
                                                                           handler):
    c = client_for(server)
    c.bind([(0, ECHO_IF, [d.NDR])])
    cid = c.request(0, OP_WAIT, b"")
    _, waiter = handler.waiters.get(timeout=5)
    c.send(d.encode_pdu(d.CoCancel(), cid))
    assert wait_for(lambda: waiter.cancel_count == 1) and handler.cancelled
    waiter.complete(Reply.stub(b"r"))
    _, stub, frags = c.response()
    assert stub == b"r" and frags[0].body.cancel_count == 1


def test_too_many_calls_in_flight_are_refused_as_server_too_busy(make_server, client_for,
                                                                handler):
    c = client_for(make_server(max_calls=2))
    c.bind([(0, ECHO_IF, [d.NDR])])
    c.request(0, OP_WAIT)
    c.request(0, OP_WAIT)
    third = c.request(0, OP_WAIT)
    cid, fault, _ = c.response()
    assert cid == third and fault.status == d.NCA_S_SERVER_TOO_BUSY
    for _ in range(2):
        handler.waiters.get(timeout=5)[1].complete(Reply.stub(b""))


# --- faults ------------------------------------------------------------------------------------


def test_an_unknown_opnum_is_answered_with_op_rng_error(server, client_for):
    c = client_for(server)
    c.bind([(0, ECHO_IF, [d.NDR])])
    fault = c.call(0, 99, b"")
    assert isinstance(fault, d.Fault) and fault.status == 0x1C010002 == d.NCA_S_OP_RNG_ERROR


def test_a_stub_the_handler_cannot_decode_is_answered_with_bad_stub_data(server, client_for):
    c = client_for(server)
    c.bind([(0, ECHO_IF, [d.NDR])])
    fault = c.call(0, OP_BAD_STUB, b"\xff")
    assert fault.status == 0x000006F7 == d.RPC_X_BAD_STUB_DATA
    assert c.call(0, OP_CRASH).status == d.NCA_S_FAULT_UNSPEC
    assert c.call(0, OP_ECHO, b"still") == b"32:still"


def test_a_request_before_any_bind_is_faulted_as_unknown_context(server, client_for):
    c = client_for(server)
    fault = c.call(0, OP_ECHO, b"")
    assert fault.status == d.NCA_S_INVALID_PRES_CONTEXT_ID


def test_a_big_endian_request_is_refused_as_unsupported(server, client_for):
    c = client_for(server)
    c.bind([(0, ECHO_IF, [d.NDR])])
    stub = b"abcd"
    body = struct.pack(">IHH", len(stub), 0, OP_ECHO) + stub
    head = struct.pack(">BBBB4sHHI", 5, 0, 0, d.PFC_WHOLE, b"\x00\x00\x00\x00",
                       16 + len(body), 0, 77)
    c.send(head + body)
    cid, fault, _ = c.response()
    assert cid == 77 and fault.status == d.NCA_S_UNSUPPORTED_TYPE


def test_a_second_bind_on_an_association_gets_bind_nak(server, client_for):
    c = client_for(server)
    c.bind([(0, ECHO_IF, [d.NDR])])
    nak = c.bind([(1, ECHO_IF, [d.NDR])])
    assert isinstance(nak.body, d.BindNak)
    assert c.call(0, OP_ECHO, b"kept") == b"32:kept"


def test_a_bind_asking_for_authentication_gets_bind_nak(server, client_for):
    c = client_for(server)
    auth = d.AuthVerifier(10, 2, 0, 0, b"NTLMSSP\x00" + bytes(24))
    bind = d.Bind(5840, 5840, 0, (d.ContextElement(0, ECHO_IF, (d.NDR,)),))
    c.send(d.encode_pdu(bind, 1, auth=auth))
    nak = c.recv_pdu()
    assert nak.body.reason == d.RejectReason.AUTHENTICATION_TYPE_NOT_RECOGNIZED
    assert results(c.bind([(0, ECHO_IF, [d.NDR])]))[0][0] == ACCEPT  # may bind without


def test_a_bind_whose_body_does_not_decode_gets_bind_nak(server, client_for):
    c = client_for(server)
    good = d.encode_pdu(d.Bind(5840, 5840, 0, (d.ContextElement(0, ECHO_IF, (d.NDR,)),)), 1)
    bad = bytearray(good[:-8])  # transfer syntax cut short; frag_length adjusted
    bad[8:10] = struct.pack("<H", len(bad))
    c.send(bytes(bad))
    nak = c.recv_pdu()
    assert isinstance(nak.body, d.BindNak)
    assert nak.body.reason == d.RejectReason.PROTOCOL_VERSION_NOT_SUPPORTED


# --- hostile input -----------------------------------------------------------------------------


@pytest.mark.parametrize("garbage", [
    b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
    bytes(64),
    b"\x05\x00\x0b\x03\x10\x00\x00\x00\x08\x00\x00\x00\x01\x00\x00\x00",  # frag_length 8
    b"\x05\x00\x02\x03\x10\x00\x00\x00\x10\x00\x00\x00\x01\x00\x00\x00",  # a response
    b"\x05\x00\x63\x03\x10\x00\x00\x00\x10\x00\x00\x00\x01\x00\x00\x00",  # PTYPE 99
    b"\x05\x00\x00\x03\x70\x00\x00\x00\x10\x00\x00\x00\x01\x00\x00\x00",  # drep 7
])
def test_garbage_closes_the_connection_and_the_server_serves_the_next_client(
        server, client_for, garbage):
    c = client_for(server)
    c.send(garbage)
    assert c.closed_by_peer()
    assert still_serves(server, client_for)


def test_a_truncated_pdu_is_given_up_after_the_pdu_timeout(make_server, client_for, handler):
    srv = make_server(pdu_timeout=0.3)
    c = client_for(srv)
    whole = d.encode_pdu(d.Bind(5840, 5840, 0, (d.ContextElement(0, ECHO_IF, (d.NDR,)),)), 1)
    c.send(whole[:30])
    assert c.closed_by_peer(timeout=5)
    assert handler.lost_event.wait(5)
    assert still_serves(srv, client_for)


def test_a_pdu_cut_by_the_client_closing_ends_the_connection(server, client_for, handler):
    c = client_for(server)
    c.bind([(0, ECHO_IF, [d.NDR])])
    c.send(d.encode_pdu(d.Request(0, OP_ECHO, b"x" * 100), 2)[:50])
    c.sock.shutdown(socket.SHUT_WR)
    assert c.closed_by_peer()
    assert handler.lost_event.wait(5)
    assert still_serves(server, client_for)


def test_an_oversized_frag_length_closes_the_connection(server, client_for):
    c = client_for(server)
    c.bind([(0, ECHO_IF, [d.NDR])])
    c.send(struct.pack("<BBBB4sHHI", 5, 0, 0, 3, d.DREP_LE, 60000, 0, 2) + bytes(64))
    assert c.closed_by_peer()
    assert still_serves(server, client_for)


def test_a_fragment_larger_than_negotiated_closes_the_connection(server, client_for):
    c = client_for(server)
    c.bind([(0, ECHO_IF, [d.NDR])], max_xmit=2000)
    c.request(0, OP_ECHO, b"x" * 3000)
    assert c.closed_by_peer()


def test_a_bind_in_another_rpc_version_gets_bind_nak_and_close(server, client_for):
    c = client_for(server)
    bind = bytearray(d.encode_pdu(
        d.Bind(5840, 5840, 0, (d.ContextElement(0, ECHO_IF, (d.NDR,)),)), 4))
    bind[0] = 4
    c.send(bytes(bind))
    nak = c.recv_pdu()
    assert isinstance(nak.body, d.BindNak) and nak.call_id == 4
    assert nak.body.reason == d.RejectReason.PROTOCOL_VERSION_NOT_SUPPORTED
    assert nak.body.versions == ((5, 0),)
    assert c.closed_by_peer()
    assert still_serves(server, client_for)


def test_a_request_in_another_rpc_version_closes_the_connection(server, client_for):
    c = client_for(server)
    c.bind([(0, ECHO_IF, [d.NDR])])
    req = bytearray(d.encode_pdu(d.Request(0, OP_ECHO, b"x"), 2))
    req[1] = 7  # rpc_vers_minor
    c.send(bytes(req))
    assert c.closed_by_peer()


def test_random_pdus_never_take_the_server_down(server, client_for):
    import random

    rng = random.Random(1234)
    pdus = [d.encode_pdu(d.Bind(5840, 5840, 0, (d.ContextElement(0, ECHO_IF, (d.NDR,)),)), 1),
            d.encode_pdu(d.Request(0, OP_ECHO, b"abcdefgh" * 4), 2),
            d.encode_pdu(d.AlterContext(5840, 5840, 0, (d.ContextElement(1, ECHO_IF,
                                                                         (d.NDR64,)),)), 3)]
    for _ in range(60):
        raw = bytearray(rng.choice(pdus))
        for _ in range(rng.randint(1, 4)):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        c = client_for(server, timeout=2)
        try:  # the server may already have closed on the first bad octets
            c.send(bytes(raw))
            c.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        c.closed_by_peer(timeout=2)
        c.close()
    assert still_serves(server, client_for)


# --- connection lifecycle ----------------------------------------------------------------------


def test_connection_lost_runs_when_the_client_disconnects(server, client_for, handler):
    c = client_for(server)
    c.bind([(0, ECHO_IF, [d.NDR])])
    c.call(0, OP_ECHO, b"")
    [conn] = server.connections
    assert conn.state["calls"] == 1 and conn.peer[0] == "127.0.0.1"
    c.close()
    assert handler.lost_event.wait(5)
    assert handler.lost == [conn.id]
    assert wait_for(lambda: not server.connections)


def test_a_dropped_connection_abandons_its_waiting_calls(server, client_for, handler):
    c = client_for(server)
    c.bind([(0, ECHO_IF, [d.NDR])])
    c.request(0, OP_WAIT)
    _, waiter = handler.waiters.get(timeout=5)
    c.close()
    assert handler.lost_event.wait(5)
    assert waiter.abandoned and waiter.complete(Reply.stub(b"")) is False


def test_stop_closes_connections_and_runs_connection_lost(handler, client_for):
    srv = RpcServer(handler).start()
    c = client_for(srv)
    c.bind([(0, ECHO_IF, [d.NDR])])
    c.request(0, OP_WAIT)
    handler.waiters.get(timeout=5)
    srv.stop()
    assert handler.lost and c.closed_by_peer()
    with pytest.raises(OSError):
        socket.create_connection(srv.address, timeout=1)


def test_reply_fault_refuses_status_zero():
    with pytest.raises(ValueError):
        Reply.fault(0)


def test_without_epoll_the_server_serves_through_the_selectors_module(monkeypatch, handler,
                                                                     make_server, client_for):
    """Where there is no epoll (not Linux) the I/O thread polls through a selector: binds,
    calls, an eviction and a disconnect go as with epoll."""
    monkeypatch.delattr(select, "epoll")
    srv = make_server(max_connections=2)
    assert srv._io.sel._epoll is None
    c = client_for(srv)
    c.bind([(0, ECHO_IF, [d.NDR])])
    assert c.call(0, OP_ECHO, b"x" * 4000) == b"32:" + b"x" * 4000
    [conn] = srv.connections
    idle = client_for(srv)  # never binds: evicted for the next newcomer
    assert wait_for(lambda: len(srv.connections) == 2)
    other = client_for(srv)
    other.bind([(0, ECHO_IF, [d.NDR])])
    assert other.call(0, OP_ECHO, b"y") == b"32:y"
    assert idle.closed_by_peer()
    c.close()
    assert wait_for(lambda: conn.id in handler.lost)
