"""Steps that speak to the target's RPC runtime directly, one PDU at a time (MS-MQRR 2.1, 2.2,
3.1.3, 3.1.4): the transfer syntaxes it accepts and the stubs it refuses. They open their own
TCP connection to the target's RemoteRead port; a target without an RPC runtime (the model) is
not applicable."""

from __future__ import annotations

import re
import socket
import struct
import time
import uuid
from collections.abc import Callable
from typing import Any

from pytest_bdd import parsers, then, when

from mqconform.conformance import sources
from mqconform.conformance.session import Inconclusive, NotApplicable, message_body
from mqconform.conformance.steps.remoteread_more import _assert, _open_call, _place, _state
from mqconform.conformance.targets import RpcTarget
from mqconform.model import calls as c
from mqconform.wire import dcerpc as d
from mqconform.wire import ndr

REMOTEREAD_VERSION = (1, 0)
TIMEOUT_S = 10.0


class _Recorded:
    """A TCP connection whose octets also go to the run's recorder (wire.pcap), as the
    connections of conformance.client do."""

    def __init__(self, sock: socket.socket, recorder: Any):
        self.sock = sock
        self.tap = recorder.connection(sock) if recorder is not None else None
        self.pending = b""  # octets read beyond the last whole PDU (_read_pdu)

    def sendall(self, data: bytes) -> None:
        self.sock.sendall(data)
        if self.tap is not None:
            self.tap.sent(data)

    def recv(self, size: int) -> bytes:
        data = self.sock.recv(size)
        if data and self.tap is not None:
            self.tap.received(data)
        return data

    def __enter__(self) -> _Recorded:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.tap is not None:
            self.tap.closed()
        self.sock.close()


def _connect(mq, record: bool = True) -> _Recorded:
    target = mq.target if hasattr(mq, "target") else None
    if not isinstance(target, RpcTarget):
        raise NotApplicable("the target has no RPC runtime to bind to (it is not an "
                            "ncacn_ip_tcp endpoint)")
    if target._options.get("credentials") is not None:
        raise NotApplicable("these steps send unauthenticated PDUs of their own, and the "
                            "target file gives credentials: the target requires "
                            "authentication")
    sock = socket.create_connection((target.client.endpoint.host, target.port), TIMEOUT_S)
    return _Recorded(sock, getattr(target, "recorder", None) if record else None)


def _read_pdu(sock: _Recorded, chunk: int = 65536, pause: float = 0.0):
    """The next PDU, framed by its frag_length (C706 12.6.3.1); what was read beyond it waits
    for the next call. ``chunk``: the most octets one read takes; ``pause``: seconds between
    reads (a slow reader)."""
    data = sock.pending
    while len(data) < d.HEADER_SIZE or len(data) < struct.unpack_from("<H", data, 8)[0]:
        more = sock.recv(chunk)
        if not more:
            raise ConnectionError("the target closed the connection")
        data += more
        if pause:
            time.sleep(pause)
    size = struct.unpack_from("<H", data, 8)[0]
    sock.pending = data[size:]
    return d.decode_pdu(data[:size])


def _request(call_id: int, opnum: int, stub: bytes, context_id: int = 0) -> bytes:
    """A request PDU of a presentation context (RemoteRead's first, 0, by default), whole in
    one fragment."""
    return d.encode_pdu(d.Request(context_id=context_id, opnum=opnum, stub=stub,
                                  alloc_hint=len(stub)), call_id=call_id)


def _note_call(recorder: Any, mark: int) -> None:
    """One call of wire.pcap: what this thread sent and received since ``mark``."""
    if recorder is not None:
        recorder.note_call(mark)
        recorder.claim()


def _bind(sock: _Recorded, syntaxes: tuple[str, ...], assoc_group: int = 0,
          flags: int | None = None):
    interface = d.SyntaxId(c.REMOTEREAD_UUID, *REMOTEREAD_VERSION)
    contexts = tuple(d.ContextElement(i, interface, (d.TRANSFER_SYNTAXES[name],))
                     for i, name in enumerate(syntaxes))
    sock.sendall(d.encode_pdu(d.Bind(d.MUST_RECV_FRAG_SIZE, d.MUST_RECV_FRAG_SIZE, assoc_group,
                                     contexts),
                              call_id=1, pfc_flags=d.PFC_WHOLE if flags is None else flags))
    return _read_pdu(sock)


def _bind_accepted(mq, sock: _Recorded, syntaxes: tuple[str, ...], assoc_group: int = 0,
                   flags: int | None = None) -> d.BindAck:
    """_bind, checked: the target accepts it (a bind_ack); its body."""
    ack = _bind(sock, syntaxes, assoc_group, flags).body
    _assert(mq, isinstance(ack, d.BindAck), "the target accepts the bind")
    return ack


def _one_call(mq, opnum: int, stub: bytes, syntax: str = "ndr", assoc_group: int = 0,
              flags: int | None = None):
    """A new connection binds RemoteRead in ``syntax`` (naming ``assoc_group``) and sends one
    request (call_id 2, context 0); the bind_ack's body and the answer's PDU. The call is one
    call of wire.pcap: its request and its answer."""
    with _connect(mq) as sock:
        ack = _bind_accepted(mq, sock, (syntax,), assoc_group, flags)
        recorder = getattr(mq.target, "recorder", None)
        mark = recorder.mark() if recorder is not None else 0
        sock.sendall(_request(2, opnum, stub))
        answer = _read_pdu(sock)
        _note_call(recorder, mark)
    return ack, answer


def _target_syntax(mq) -> str:
    """The transfer syntax the suite's client binds RemoteRead with on this target."""
    return "ndr64" if getattr(getattr(mq, "target", None), "ndr64", False) else "ndr"


@when(parsers.parse("the client binds RemoteRead over ncacn_ip_tcp proposing {syntaxes} in "
                    "separate presentation contexts"))
def binds_remoteread(mq, scenario, syntaxes):
    names = tuple(s.strip().lower() for s in syntaxes.split(" and "))
    if "ndr64" in names:
        mq.require("ndr64")
    with _connect(mq) as sock:
        scenario["bind"] = (names, _bind(sock, names))


@then("the target accepts every presentation context with the transfer syntax proposed in it")
def accepts_every_context(mq, scenario):
    names, pdu = scenario["bind"]
    body = pdu.body
    _assert(mq, isinstance(body, d.BindAck), f"the target answers the bind with bind_ack (it "
                                             f"sent {type(body).__name__})")
    _assert(mq, len(body.results) == len(names),
            f"bind_ack has a result for each of the {len(names)} presentation contexts")
    for name, result in zip(names, body.results, strict=False):
        _assert(mq, result.result == d.ContResult.ACCEPTANCE,
                f"the {name.upper()} presentation context is accepted (result {result.result}, "
                f"reason {result.reason})")
        _assert(mq, result.transfer_syntax == d.TRANSFER_SYNTAXES[name],
                f"the accepted transfer syntax is {name.upper()}")


@when(parsers.re(r"a new connection sends (?P<what>a bind proposing RemoteRead in NDR and in "
                 r"NDR64, each in a presentation context of its own|a bind proposing RemoteRead "
                 r"twice under one p_cont_id|an alter_context that proposes its bound p_cont_id "
                 r"again for qmmgmt)$"))
def sends_contexts(mq, scenario, what):
    """Presentation contexts a server answers one by one (C706 12.6.4.3, 12.6.4.1): RemoteRead
    in NDR (context 0) and NDR64 (context 1); RemoteRead in NDR twice as context 0; or, after a
    bind of RemoteRead as context 0, an alter_context proposing context 0 for qmmgmt (a live
    context cannot change, MS-RPCE 3.3.1.5.6). The answer goes into the scenario, with the
    number of contexts proposed."""
    remoteread = d.SyntaxId(c.REMOTEREAD_UUID, *REMOTEREAD_VERSION)
    ndr = d.TRANSFER_SYNTAXES["ndr"]
    with _connect(mq, record=False) as sock:  # wire.pcap holds accepted associations only
        if what.startswith("an alter_context"):
            _bind_accepted(mq, sock, ("ndr",))
            contexts = (d.ContextElement(0, d.SyntaxId(c.QMMGMT_UUID, 1, 0), (ndr,)),)
            sock.sendall(d.encode_pdu(d.AlterContext(d.MUST_RECV_FRAG_SIZE,
                                                     d.MUST_RECV_FRAG_SIZE, 0, contexts),
                                      call_id=2))
        else:
            if "twice" in what:
                contexts = (d.ContextElement(0, remoteread, (ndr,)),
                            d.ContextElement(0, remoteread, (ndr,)))
            else:
                contexts = (d.ContextElement(0, remoteread, (ndr,)),
                            d.ContextElement(1, remoteread, (d.TRANSFER_SYNTAXES["ndr64"],)))
            sock.sendall(d.encode_pdu(d.Bind(d.MUST_RECV_FRAG_SIZE, d.MUST_RECV_FRAG_SIZE, 0,
                                             contexts), call_id=1))
        answer = _answer_or_close(sock)
    scenario["contexts"] = (what, len(contexts), answer)


@then(parsers.re(r"the target answers with one result for each presentation context proposed"
                 r"(?P<accepting>, accepting RemoteRead in one of them)?$"))
def one_result_each(mq, scenario, accepting):
    """C706 12.6.3.1: p_result_list holds one p_result_t per p_cont_elem_t of the bind or
    alter_context, in order (12.6.4.4, 12.6.4.2)."""
    what, proposed, answer = scenario["contexts"]
    wanted = d.AlterContextResp if what.startswith("an alter_context") else d.BindAck
    _assert(mq, isinstance(answer, wanted),
            f"the target answers {what} with {wanted.__name__} (C706 12.6.4), not "
            f"{_answer_name(answer)}")
    _assert(mq, len(answer.results) == proposed,
            f"the answer has one result for each of the {proposed} presentation contexts "
            f"proposed (C706 12.6.3.1 p_result_list), not {len(answer.results)}")
    if accepting:
        accepted = [r for r in answer.results if r.result == d.ContResult.ACCEPTANCE]
        _assert(mq, len(accepted) == 1,
                f"one of the presentation contexts proposing RemoteRead is accepted (MS-RPCE "
                f"3.3.1.5.6: at most one transfer syntax per interface), not {len(accepted)}")


@when("the client binds proposing RemoteRead and an interface the server does not offer, each "
      "in a presentation context of its own")
def binds_remoteread_and_unknown(mq, scenario):
    """Context 0: RemoteRead in the target's transfer syntax; context 1: an interface no
    server offers (a fresh UUID, version 1.0) in NDR. Then R_GetServerPort on context 0."""
    unknown = d.SyntaxId(sources.uuid4(), 1, 0)
    _bind_beside_remoteread(mq, scenario, d.ContextElement(1, unknown, (d.NDR,)), "ndr",
                            "R_GetServerPort beside the rejected context")


def _bind_beside_remoteread(mq, scenario, second: d.ContextElement, note: Any,
                            port_call: str) -> None:
    """A bind of two presentation contexts: 0, RemoteRead in the target's transfer syntax, and
    ``second``; then R_GetServerPort on context 0 if the bind is acknowledged. The bind's
    answer goes into the scenario with ``note`` (what the Then step needs to know)."""
    syntax = _target_syntax(mq)
    remoteread = d.SyntaxId(c.REMOTEREAD_UUID, *REMOTEREAD_VERSION)
    contexts = (d.ContextElement(0, remoteread, (d.TRANSFER_SYNTAXES[syntax],)), second)
    with _connect(mq) as sock:
        sock.sendall(d.encode_pdu(d.Bind(d.MUST_RECV_FRAG_SIZE, d.MUST_RECV_FRAG_SIZE, 0,
                                         contexts), call_id=1))
        ack = _read_pdu(sock)
        scenario["bind"] = ((syntax, note), ack)
        if isinstance(ack.body, d.BindAck):
            scenario["port_answer"] = _port_call(mq, sock, 2, 0, syntax)
            scenario["port_call"] = port_call


def _remoteread_accepted_beside(mq, scenario) -> tuple[Any, Any]:
    """The bind_ack of ``_bind_beside_remoteread``, checked to answer both contexts in order
    and to accept RemoteRead's; the note and the second context's result."""
    (syntax, note), pdu = scenario["bind"]
    body = pdu.body
    _assert(mq, isinstance(body, d.BindAck), f"the target answers the bind with bind_ack (it "
                                             f"sent {type(body).__name__})")
    _assert(mq, len(body.results) == 2,
            f"bind_ack has a result for each of the 2 presentation contexts, in order (C706 "
            f"12.6.4.4); it has {len(body.results)}")
    first, second = body.results
    _assert(mq, first.result == d.ContResult.ACCEPTANCE
            and first.transfer_syntax == d.TRANSFER_SYNTAXES[syntax],
            f"RemoteRead's presentation context is accepted in {syntax.upper()} (result "
            f"{first.result}, reason {first.reason})")
    return note, second


@then("the target accepts RemoteRead's presentation context and rejects the other's abstract "
      "syntax")
def accepts_remoteread_rejects_unknown(mq, scenario):
    _, second = _remoteread_accepted_beside(mq, scenario)
    _assert(mq, second.result == d.ContResult.PROVIDER_REJECTION
            and second.reason == d.ProviderReason.ABSTRACT_SYNTAX_NOT_SUPPORTED,
            f"the other interface's context is a provider_rejection with reason "
            f"abstract_syntax_not_supported (C706 12.6.3.1; result {second.result}, reason "
            f"{second.reason})")


@when(parsers.parse("the client binds proposing RemoteRead and, in a presentation context of "
                    "its own, a bind time feature negotiation offering {bits}"))
def binds_with_feature_negotiation(mq, scenario, bits):
    """Context 0: RemoteRead in the target's transfer syntax; context 1: RemoteRead with the
    transfer syntax 6CB71C2C-9812-4540-<bitmask> (MS-RPCE 2.2.2.14, 3.3.1.5.3), as Windows
    clients bind. Then R_GetServerPort on context 0."""
    offered = int(bits, 16)
    remoteread = d.SyntaxId(c.REMOTEREAD_UUID, *REMOTEREAD_VERSION)
    feature = d.SyntaxId(uuid.UUID(f"6cb71c2c-9812-4540-{offered:02x}00-000000000000"), 1, 0)
    _bind_beside_remoteread(mq, scenario, d.ContextElement(1, remoteread, (feature,)), offered,
                            "R_GetServerPort beside the feature negotiation")


@then("the target accepts RemoteRead's presentation context and answers the other with "
      "negotiate_ack granting only features offered, or rejects it")
def answers_feature_negotiation(mq, scenario):
    offered, second = _remoteread_accepted_beside(mq, scenario)
    if second.result == d.ContResult.NEGOTIATE_ACK:
        _assert(mq, second.reason & ~offered == 0,
                f"negotiate_ack grants only features the client offered (MS-RPCE 3.3.1.5.3: "
                f"0x{offered:02X} offered, 0x{second.reason:02X} granted)")
    else:  # a server without bind time feature negotiation does not know the syntax
        _assert(mq, second.result == d.ContResult.PROVIDER_REJECTION,
                f"the feature negotiation context is answered with negotiate_ack or a "
                f"provider_rejection (result {second.result})")


@when(parsers.parse("the client sends R_OpenQueue with a stub cut to {size:d} octets"))
def sends_a_cut_stub(mq, scenario, size):
    _send_request(mq, scenario, c.R_OpenQueue.opnum, bytes(range(256))[:size])


@when(parsers.parse("the client sends a RemoteRead request with opnum {opnum:d}"))
def sends_an_opnum(mq, scenario, opnum):
    _send_request(mq, scenario, opnum, bytes(8))


@then("the target answers with the fault nca_op_rng_error")
def answers_op_rng_error(mq, scenario):
    body = scenario["answer"].body
    _assert(mq, isinstance(body, d.Fault),
            f"the target refuses an operation number the interface does not have with a "
            f"fault PDU (it sent {type(body).__name__})")
    _assert(mq, body.status == d.NCA_S_OP_RNG_ERROR,
            f"the fault status is nca_op_rng_error (0x{d.NCA_S_OP_RNG_ERROR:08X}; C706 "
            f"appendix E), not 0x{body.status:08X}")


def _send_request(mq, scenario, opnum: int, stub: bytes) -> None:
    scenario["answer"] = _one_call(mq, opnum, stub)[1]


@then("the target answers with a fault, not a response")
def answers_with_a_fault(mq, scenario):
    body = scenario["answer"].body
    _assert(mq, isinstance(body, d.Fault),
            f"the target refuses {scenario.get('refused', 'the malformed stub')} with a fault "
            f"PDU (it sent {type(body).__name__})")
    _assert(mq, body.status != 0, f"the fault carries a status (0x{body.status:08X})")


# ---------------------------------------------------------------- association groups

def _join_and_call(mq, scenario, assoc_group: int, action: int) -> None:
    """A new connection binds RemoteRead naming ``assoc_group`` (C706 12.6.4.3
    assoc_group_id) and calls R_StartReceive with the case's context handle; the group the
    target put it in and the answer go into the scenario."""
    syntax = _target_syntax(mq)
    call = c.R_StartReceive(phContext=scenario["context"], ulAction=action, dwRequestId=77,
                            dwMaxBodySize=1 << 16, dwMaxCompoundMessageSize=1 << 16)
    ack, answer = _one_call(mq, call.opnum, ndr.encode_request(call, syntax == "ndr64"),
                            syntax, assoc_group)
    scenario["join"] = {"asked": assoc_group, "given": ack.assoc_group_id,
                        "answer": answer.body if isinstance(answer.body, d.Fault)
                        else ndr.decode_response(call, answer.body.stub, syntax == "ndr64")}


@when("a new connection binds naming an association group the target never issued and calls "
      "R_StartReceive with MQ_ACTION_RECEIVE and the client's handle")
def joins_an_unissued_group(mq, scenario):
    import secrets

    own = getattr(getattr(getattr(mq, "target", None), "client", None), "assoc_group", 0)
    asked = own
    while asked in (0, own):
        asked = secrets.randbits(32)
    _join_and_call(mq, scenario, asked, c.MQ_ACTION_RECEIVE)


@when("a new connection binds naming the client's association group and calls "
      "R_StartReceive with MQ_ACTION_PEEK_CURRENT and the client's handle")
def joins_the_clients_group(mq, scenario):
    target = getattr(mq, "target", None)
    _join_and_call(mq, scenario, getattr(getattr(target, "client", None), "assoc_group", 0),
                   c.MQ_ACTION_PEEK_CURRENT)


@then("the target puts that connection in another association group than the one named")
def put_in_another_group(mq, scenario):
    join = scenario["join"]
    _assert(mq, join["given"] not in (0, join["asked"]),
            f"a bind naming an association group the target never issued gets a group of the "
            f"target's own (bind_ack assoc_group_id 0x{join['given']:08X}, asked "
            f"0x{join['asked']:08X}): a client cannot choose another's group")


@then("the target puts that connection in the client's association group")
def put_in_the_clients_group(mq, scenario):
    join = scenario["join"]
    _assert(mq, join["given"] == join["asked"] != 0,
            f"a connection from the same machine joins the association group it names "
            f"(MS-RPCE 3.3.1.5.7; bind_ack assoc_group_id 0x{join['given']:08X}, asked "
            f"0x{join['asked']:08X})")


@then("that call is refused with a fault")
def that_call_is_refused(mq, scenario):
    answer = scenario["join"]["answer"]
    _assert(mq, isinstance(answer, d.Fault) or (answer.raised and answer.status),
            "the handle of another association group is refused (strict context handle): "
            f"the target answered {type(answer).__name__} with status "
            f"0x{getattr(answer, 'status', 0):08X}")


@then(parsers.parse('that call returns the message "{body}"'))
def that_call_returns(mq, scenario, body):
    answer = scenario["join"]["answer"]
    _assert(mq, not isinstance(answer, d.Fault) and answer.status == 0
            and message_body(answer) == body.encode(),
            f"the handle serves every connection of its association group: the peek returns "
            f"the message {body!r}")


# ---------------------------------------------------------------- verification trailer

@when("the client binds RemoteRead and calls R_GetServerPort with a verification trailer "
      "after the stub, as Windows clients send it")
def calls_with_a_verification_trailer(mq, scenario):
    """MS-RPCE 2.2.2.13: after the stub of the first request on a binding, a Windows client
    sends rpc_sec_vt_bitmask (its bind flagged PFC_SUPPORT_HEADER_SIGN), rpc_sec_vt_pcontext
    and rpc_sec_vt_header2, the last marked SEC_VT_COMMAND_END."""
    _call_port_with_trailer(mq, scenario, d.vt_bitmask())


#: commands a verification trailer may carry that a server must let pass (MS-RPCE 2.2.2.13):
#: a command it does not know without SEC_VT_MUST_PROCESS_COMMAND (only with it MUST the
#: server reject the request), and a bitmask with a bit it does not understand (2.2.2.13.2:
#: "A server MUST ignore bits it does not understand")
LENIENT_COMMANDS = {
    "a command the server need not process": d.VtCommand(0x0005, False, bytes(4)),
    "a bitmask bit the server does not understand": d.vt_bitmask(0x00000002),
}


@when(parsers.parse("the client binds RemoteRead and calls R_GetServerPort with a verification "
                    "trailer that carries {command}"))
def calls_with_a_lenient_trailer(mq, scenario, command):
    _call_port_with_trailer(mq, scenario, LENIENT_COMMANDS[command])


def _call_port_with_trailer(mq, scenario, first: d.VtCommand, opnum_named: int | None = None
                            ) -> None:
    """R_GetServerPort on a new connection whose bind has PFC_SUPPORT_HEADER_SIGN, with a
    verification trailer of ``first``, rpc_sec_vt_pcontext and rpc_sec_vt_header2 (naming
    ``opnum_named``, the request's own opnum by default). A closed connection is noted as
    None."""
    interface = d.SyntaxId(c.REMOTEREAD_UUID, *REMOTEREAD_VERSION)
    syntax = _target_syntax(mq)
    ndr64 = syntax == "ndr64"
    call = c.R_GetServerPort()
    stub = ndr.encode_request(call, ndr64)
    stub += bytes(-len(stub) % 4) + d.encode_verification_trailer(  # call_id 2: _one_call's
        [first, d.vt_pcontext(interface, d.TRANSFER_SYNTAXES[syntax]),
         d.vt_header2(call_id=2, context_id=0,
                      opnum=call.opnum if opnum_named is None else opnum_named)])
    try:
        _, answer = _one_call(mq, call.opnum, stub, syntax,
                              flags=d.PFC_WHOLE | d.PFC_SUPPORT_HEADER_SIGN)
    except ConnectionError:
        scenario["port_call"], scenario["port_answer"] = "the request", None
        return
    _note_port_answer(scenario, "a request with a verification trailer after its stub "
                                "(MS-RPCE 2.2.2.13)", call, answer, ndr64)


#: trailers a server must refuse the request for (MS-RPCE 2.2.2.13): a command it does not
#: know marked SEC_VT_MUST_PROCESS_COMMAND, and an rpc_sec_vt_header2 whose opnum is not the
#: request's (2.2.2.13.3: the server compares them and rejects a mismatch)
STRICT_TRAILERS = {
    "a command the server must process and does not know": (
        d.VtCommand(0x0005, True, bytes(4)), None),
    "a header naming another opnum than the request's": (d.vt_bitmask(), 5),
}


@when(parsers.parse("the client binds RemoteRead and calls R_GetServerPort with a verification "
                    "trailer the server must refuse: {trailer}"))
def calls_with_a_strict_trailer(mq, scenario, trailer):
    first, opnum = STRICT_TRAILERS[trailer]
    _call_port_with_trailer(mq, scenario, first, opnum)


@when(parsers.parse("the client binds RemoteRead and calls R_GetServerPort {count:d} times with "
                    "a verification trailer the server must refuse, then once without one"))
def calls_refused_many_times(mq, scenario, count):
    """On one connection (its bind flagged PFC_SUPPORT_HEADER_SIGN), ``count`` R_GetServerPort
    requests whose trailer carries a command the server must process and does not know (MS-RPCE
    2.2.2.13), then one without a trailer. A refused call is over (C706 12.6.4.7: its fault
    ends it): however many were refused, the connection serves the next. The answers by
    call_id go into the scenario (None: the connection closed; "silence")."""
    interface = d.SyntaxId(c.REMOTEREAD_UUID, *REMOTEREAD_VERSION)
    syntax = _target_syntax(mq)
    ndr64 = syntax == "ndr64"
    call = c.R_GetServerPort()
    stub = ndr.encode_request(call, ndr64)
    first, _ = STRICT_TRAILERS["a command the server must process and does not know"]
    answers: dict[int | None, Any] = {}
    with _connect(mq, record=False) as sock:
        _bind_accepted(mq, sock, (syntax,), flags=d.PFC_WHOLE | d.PFC_SUPPORT_HEADER_SIGN)
        last = count + 2
        try:
            for call_id in range(2, last):
                trailer = d.encode_verification_trailer(
                    [first, d.vt_pcontext(interface, d.TRANSFER_SYNTAXES[syntax]),
                     d.vt_header2(call_id=call_id, context_id=0, opnum=call.opnum)])
                sock.sendall(_request(call_id, call.opnum,
                                      stub + bytes(-len(stub) % 4) + trailer))
                pdu = _read_pdu(sock)
                answers[pdu.header.call_id] = pdu.body
            sock.sendall(_request(last, call.opnum, stub))
            pdu = _read_pdu(sock)
            answers[pdu.header.call_id] = (
                pdu.body if isinstance(pdu.body, d.Fault)
                else ndr.decode_response(call, pdu.body.stub, ndr64))
        except ConnectionError:
            answers[None] = None
        except TimeoutError:
            answers[None] = "silence"
    scenario["refused_calls"] = (count, answers)


@then("each of them is refused with a fault whose status is not 0 and the last call returns "
      "the port, or the connection closes")
def each_refused_then_the_port(mq, scenario):
    count, answers = scenario["refused_calls"]
    _assert(mq, answers.get(None) != "silence",
            f"the target answers every call or closes the connection within {TIMEOUT_S} s; it "
            f"answered {len(answers)} of {count + 1}")
    if None in answers:
        return  # MS-RPCE 3.3.3.5.1: a server may close the connection instead
    refused = [answers.get(cid) for cid in range(2, count + 2)]
    _assert(mq, all(isinstance(b, d.Fault) and b.status != 0 for b in refused),
            "every request with the trailer is refused with a fault whose status is not 0 "
            "(MS-RPCE 2.2.2.13, 3.3.3.5.1)")
    port = answers.get(count + 2)
    _assert(mq, not isinstance(port, d.Fault) and port is not None
            and port.status == mq.target.port,
            f"the call after {count} refused ones returns the port {mq.target.port}, not "
            f"{port!r} (MS-MQRR/3.1.4.1/R6): refused calls hold nothing")


@when(parsers.parse("a new connection opens the queue, starts {count:d} receives that wait, and "
                    "calls R_GetServerPort"))
def many_calls_in_flight(mq, scenario, count):
    """One connection: R_OpenQueue on the (empty) queue, then ``count`` R_StartReceive calls
    that wait (half a minute each), then R_GetServerPort while they are all in flight. The
    answer to R_GetServerPort (or None: the connection closed; "silence") goes into the
    scenario; closing the connection ends the waits (its handle is run down, MS-MQRR
    3.1.6.2)."""
    syntax = _target_syntax(mq)
    ndr64 = syntax == "ndr64"
    opened = _open_call(_place(_state(scenario), "the queue"))
    port = c.R_GetServerPort()
    with _connect(mq, record=False) as sock:  # wire.pcap holds calls answered in turn
        _bind_accepted(mq, sock, (syntax,))
        sock.sendall(_request(2, opened.opnum, ndr.encode_request(opened, ndr64)))
        pdu = _read_pdu(sock)
        _assert(mq, isinstance(pdu.body, d.Response), "the target answers R_OpenQueue")
        handle = ndr.decode_response(opened, pdu.body.stub, ndr64).pphContext
        _assert(mq, bool(handle), "R_OpenQueue returned a handle")
        for n in range(count):
            receive = c.R_StartReceive(phContext=handle, ulAction=c.MQ_ACTION_RECEIVE,
                                       ulTimeout=30_000, dwRequestId=n + 1,
                                       dwMaxBodySize=1 << 16, dwMaxCompoundMessageSize=1 << 16)
            sock.sendall(_request(3 + n, receive.opnum, ndr.encode_request(receive, ndr64)))
        last = 3 + count
        sock.sendall(_request(last, port.opnum, ndr.encode_request(port, ndr64)))
        answer: Any = "silence"
        try:
            while True:
                pdu = _read_pdu(sock)
                if pdu.header.call_id == last:
                    answer = (pdu.body if isinstance(pdu.body, d.Fault)
                              else ndr.decode_response(port, pdu.body.stub, ndr64))
                    break
        except ConnectionError:
            answer = None
        except TimeoutError:
            pass
    scenario["busy_answer"] = answer


@then("R_GetServerPort is answered, with the port or a fault whose status is not 0, or the "
      "connection closes")
def busy_answered(mq, scenario):
    answer = scenario["busy_answer"]
    _assert(mq, answer != "silence",
            f"the target answers R_GetServerPort or closes the connection within {TIMEOUT_S} s "
            f"while the connection's other calls wait (MS-RPCE 3.3.3.5.1: a call it does not "
            f"run is refused with a fault); it did neither")
    if answer is None:
        return
    if isinstance(answer, d.Fault):
        _assert(mq, answer.status != 0, "the fault carries a status (MS-RPCE 3.3.3.5.1)")
    else:
        _assert(mq, answer.status == mq.target.port,
                f"R_GetServerPort returns the port {mq.target.port}, not {answer.status}")


@then("the target refuses the call with a fault whose status is not 0, or closes the connection")
def refuses_with_a_fault(mq, scenario):
    answer = scenario["port_answer"]
    if answer is None:
        return  # MS-RPCE 3.3.3.5.1: a server may close the connection instead
    _assert(mq, isinstance(answer, d.Fault),
            f"{scenario['port_call']} is refused, not run (it returned {answer!r})")
    _assert(mq, answer.status != 0,
            "the fault refusing the request carries a status (MS-RPCE 3.3.3.5.1: never 0)")


def _note_port_answer(scenario, what: str, call: c.Call, answer, ndr64: bool) -> None:
    """For answers_the_port: what was asked, and the answer (a Fault, or the decoded result)."""
    scenario["port_call"] = what
    scenario["port_answer"] = (answer.body if isinstance(answer.body, d.Fault)
                               else ndr.decode_response(call, answer.body.stub, ndr64))


@when("a connection sends the first 10 octets of a bind PDU and stops")
def stops_in_a_pdu(mq, scenario):
    """A client stopped in the middle of a PDU (C706 12.6.3.1: frag_length is not yet even
    known), for longer than a server takes to look at its connections."""
    sock = _connect(mq, record=False)  # wire.pcap holds whole PDUs (its readers check so)
    interface = d.SyntaxId(c.REMOTEREAD_UUID, *REMOTEREAD_VERSION)
    bind = d.encode_pdu(d.Bind(d.MUST_RECV_FRAG_SIZE, d.MUST_RECV_FRAG_SIZE, 0,
                               (d.ContextElement(0, interface, (d.NDR,)),)), call_id=1)
    sock.sendall(bind[:10])
    scenario["stalled"] = sock
    time.sleep(STALLED_S)


def _answer_or_close(sock: _Recorded, whole: bool = False) -> Any:
    """The body of the next PDU the target sends (the PDU if ``whole``), None if it closes the
    connection first, or "silence" if it does neither within the socket's timeout."""
    try:
        pdu = _read_pdu(sock)
        return pdu if whole else pdu.body
    except ConnectionError:
        return None
    except TimeoutError:
        return "silence"


def _answer_name(answer: Any) -> str:
    """What _answer_or_close returned, for a message: silence, a closed connection, or the PDU
    body's type."""
    return ("silence" if answer == "silence" else "a closed connection" if answer is None
            else type(answer).__name__)


def _check_bind_nak(mq, answer: Any, what: str, rule: str, reason: int,
                    reason_text: str) -> None:
    """The answer to ``what`` is a bind_nak (``rule``) whose reason is ``reason``."""
    _assert(mq, isinstance(answer, d.BindNak),
            f"the target answers {what} with a bind_nak ({rule}), not {_answer_name(answer)}")
    _assert(mq, answer.reason == reason,
            f"the bind_nak's reason is {reason_text}, not {answer.reason}")


def _cut_short(pdu: bytes, keep: int) -> bytes:
    """A PDU's first ``keep`` octets with frag_length saying so: the header frames it (C706
    12.6.3.1), its body stops short of the PDU type's fixed fields."""
    raw = bytearray(pdu[:keep])
    struct.pack_into("<H", raw, 8, keep)
    return bytes(raw)


@when(parsers.re(r"a new connection (?P<how>binds RemoteRead and sends a request PDU|sends a "
                 r"bind PDU) whose body stops short of its fixed fields$"))
def sends_a_cut_pdu(mq, scenario, how):
    """A request of 20 octets (4 of its 8 octets of alloc_hint, p_cont_id and opnum), or a bind
    of 20 (4 of max_xmit_frag, max_recv_frag and assoc_group_id): malformed PDUs (MS-RPCE
    3.3.3.5.1: a fault, or the connection closed). What the target sent back, or None for a
    connection it closed, goes into the scenario."""
    sock = _connect(mq, record=False)  # wire.pcap holds well-formed PDUs (its readers check so)
    with sock:
        if how.startswith("binds"):
            _bind_accepted(mq, sock, (_target_syntax(mq),))
            sock.sendall(_cut_short(_request(2, c.R_GetServerPort.opnum, b""), 20))
            scenario["cut"] = "request"
        else:
            interface = d.SyntaxId(c.REMOTEREAD_UUID, *REMOTEREAD_VERSION)
            bind = d.encode_pdu(d.Bind(d.MUST_RECV_FRAG_SIZE, d.MUST_RECV_FRAG_SIZE, 0,
                                       (d.ContextElement(0, interface, (d.NDR,)),)), call_id=1)
            sock.sendall(_cut_short(bind, 20))
            scenario["cut"] = "bind"
        scenario["cut_answer"] = _answer_or_close(sock)


#: PDUs a server cannot serve, and what it may answer each with (or close the connection):
#: a PDU type no connection-oriented PDU has (C706 12.6: malformed; MS-RPCE 3.3.3.5.1), and a
#: bind or alter_context that proposes no presentation context (C706 12.6.4.3-5, 12.6.4.1-2)
UNSERVABLE = {
    "binds RemoteRead and sends a PDU of PTYPE 20, which no connection-oriented PDU has":
        (d.Fault,),
    "sends a bind that proposes no presentation context": (d.BindAck, d.BindNak),
    "binds RemoteRead and sends an alter_context that proposes no presentation context":
        (d.AlterContextResp, d.Fault),
}


@when(parsers.re("a new connection (?P<what>" + "|".join(re.escape(w) for w in UNSERVABLE)
                 + ")$"))
def sends_an_unservable_pdu(mq, scenario, what):
    with _connect(mq, record=False) as sock:  # wire.pcap holds well-formed PDUs
        if what.startswith("binds"):
            _bind_accepted(mq, sock, (_target_syntax(mq),))
        if "PTYPE 20" in what:
            pdu = struct.pack("<BBBB4sHHI", d.RPC_VERS, 0, 20, d.PFC_WHOLE, d.DREP_LE,
                              d.HEADER_SIZE, 0, 2)
        else:
            kind = d.AlterContext if "alter_context" in what else d.Bind
            pdu = d.encode_pdu(kind(d.MUST_RECV_FRAG_SIZE, d.MUST_RECV_FRAG_SIZE, 0, ()),
                               call_id=2)
        sock.sendall(pdu)
        scenario["unservable"] = (what, _answer_or_close(sock, whole=True))


@then("the target answers it or closes the connection; it does not leave it unanswered")
def answers_the_unservable_pdu(mq, scenario):
    what, answer = scenario["unservable"]
    _assert(mq, answer != "silence",
            f"the target answers the PDU or closes the connection within {TIMEOUT_S} s "
            f"(MS-RPCE 3.3.3.5.1); it did neither")
    if answer is None:
        return
    wanted = UNSERVABLE[what]
    _assert(mq, isinstance(answer.body, wanted) and answer.header.call_id == 2,
            f"the answer is a {' or a '.join(t.__name__ for t in wanted)} for call 2, not a "
            f"{type(answer.body).__name__} for call {answer.header.call_id}")
    if isinstance(answer.body, d.Fault):
        _assert(mq, answer.body.status != 0, "the fault carries a status (MS-RPCE 3.3.3.5.1)")


@when("a new connection binds RemoteRead and sends the last fragment of a request whose first "
      "fragment it never sent")
def sends_a_lone_last_fragment(mq, scenario):
    """A request PDU with PFC_LAST_FRAG and without PFC_FIRST_FRAG (C706 12.6.3.1) for a call_id
    no fragment came for before: there is no call to add it to (C706 12.6.4.9), a malformed
    call (MS-RPCE 3.3.3.5.1: a fault, or the connection closed)."""
    with _connect(mq, record=False) as sock:  # wire.pcap holds whole calls only
        _bind_accepted(mq, sock, (_target_syntax(mq),))
        sock.sendall(d.encode_pdu(d.Request(context_id=0, opnum=c.R_GetServerPort.opnum,
                                            stub=b"", alloc_hint=0),
                                  call_id=2, pfc_flags=d.PFC_LAST_FRAG))
        scenario["cut"] = "request"
        scenario["cut_answer"] = _answer_or_close(sock)


@when(parsers.parse("a new connection binds RemoteRead and sends a request PDU in RPC version "
                    "{major:d}.{minor:d}"))
def sends_a_request_in_another_version(mq, scenario, major, minor):
    """After a bind in 5.0, a request whose rpc_vers and rpc_vers_minor are ``major``.``minor``
    (C706 12.6.3.1): a malformed PDU, which no bind_nak answers (that is a bind's answer)."""
    with _connect(mq, record=False) as sock:  # wire.pcap holds RPC 5.0 PDUs only
        _bind_accepted(mq, sock, (_target_syntax(mq),))
        request = bytearray(_request(2, c.R_GetServerPort.opnum, b""))
        request[0], request[1] = major, minor
        sock.sendall(bytes(request))
        scenario["cut"] = "request"
        scenario["cut_answer"] = _answer_or_close(sock)


def _in_big_endian(request: bytes) -> bytes:
    """A request PDU encode_pdu made, its drep announcing big-endian integers (C706 14.1: the
    high nibble of octet 0 is 0) and every integer of its header and body in that order; the
    stub's octets as they are (the caller's stub reads alike in both orders)."""
    raw = bytearray(request)
    raw[4] &= 0x0F
    struct.pack_into(">HHI", raw, 8, *struct.unpack_from("<HHI", raw, 8))
    struct.pack_into(">IHH", raw, 16, *struct.unpack_from("<IHH", raw, 16))
    return bytes(raw)


@when("a new connection binds RemoteRead and calls R_GetServerPort in big-endian NDR, then in "
      "little-endian NDR")
def calls_in_big_endian(mq, scenario):
    """Each PDU says in its drep how its integers are ordered (C706 14.1; 12.6.3.1), and the
    receiver makes right; R_GetServerPort's request stub is empty, so only the header and the
    request's fixed fields change order. Then the same call in little-endian NDR."""
    call = c.R_GetServerPort()
    syntax = _target_syntax(mq)
    stub = ndr.encode_request(call, syntax == "ndr64")
    with _connect(mq, record=False) as sock:  # wire.pcap holds little-endian PDUs only
        _bind_accepted(mq, sock, (syntax,))
        sock.sendall(_in_big_endian(_request(2, call.opnum, stub)))
        first = _answer_or_close(sock, whole=True)
        second = None
        if first not in (None, "silence"):
            sock.sendall(_request(3, call.opnum, stub))
            second = _answer_or_close(sock, whole=True)
    scenario["endian_answers"] = (first, second, syntax == "ndr64")


@then("the target answers the big-endian call once, with the port it listens on or a fault "
      "whose status is not 0, and then the little-endian one with the port")
def answers_the_big_endian_call(mq, scenario):
    first, second, ndr64 = scenario["endian_answers"]
    _assert(mq, first != "silence",
            f"the target answers the big-endian request or closes the connection within "
            f"{TIMEOUT_S} s; it did neither")
    if first is None:
        return  # MS-RPCE 3.3.3.5.1: a server may close a connection it cannot serve
    _assert(mq, first.header.call_id == 2,
            f"the first answer is call 2's, not call {first.header.call_id}'s")
    if isinstance(first.body, d.Fault):
        _assert(mq, first.body.status != 0,
                "the fault refusing the big-endian request carries a status (MS-RPCE "
                "3.3.3.5.1: never 0)")
    else:
        _assert(mq, isinstance(first.body, d.Response),
                f"the big-endian request is answered with a response or a fault, not a "
                f"{type(first.body).__name__}")
        port = ndr.decode_response(c.R_GetServerPort(), first.body.stub, ndr64)
        _assert(mq, port.status == mq.target.port,
                f"R_GetServerPort in big-endian NDR returns {port.status}, not the port "
                f"{mq.target.port} the target listens on (MS-MQRR 3.1.4.1)")
    _assert(mq, second not in (None, "silence") and second.header.call_id == 3
            and isinstance(second.body, d.Response),
            f"the connection then serves R_GetServerPort in little-endian NDR (it got "
            f"{_answer_name(second if second in (None, 'silence') else second.body)})")


def _big_endian_bind(call_id: int, syntax: str) -> bytes:
    """A bind for RemoteRead 1.0 in one transfer syntax whose drep announces big-endian
    integers (C706 14.1): the header's and the body's integers in that order, each UUID a
    big-endian uuid_t, each version MS-RPCE 2.2.2.7's RPC_VERSION (two unsigned shorts, major
    first: C706's u_int32 if_version would put the minor first in this order)."""
    def syntax_id(s: d.SyntaxId) -> bytes:
        return s.uuid.bytes + struct.pack(">HH", s.major, s.minor)

    interface = d.SyntaxId(c.REMOTEREAD_UUID, *REMOTEREAD_VERSION)
    body = (struct.pack(">HHI", d.MUST_RECV_FRAG_SIZE, d.MUST_RECV_FRAG_SIZE, 0)
            + struct.pack(">BBH", 1, 0, 0) + struct.pack(">HBB", 0, 1, 0)
            + syntax_id(interface) + syntax_id(d.TRANSFER_SYNTAXES[syntax]))
    return struct.pack(">BBBB4sHHI", d.RPC_VERS, 0, d.PType.BIND, d.PFC_WHOLE, bytes(4),
                       d.HEADER_SIZE + len(body), 0, call_id) + body


@when("a new connection sends a bind for RemoteRead in big-endian NDR")
def sends_a_big_endian_bind(mq, scenario):
    with _connect(mq, record=False) as sock:  # wire.pcap holds little-endian PDUs only
        sock.sendall(_big_endian_bind(1, _target_syntax(mq)))
        scenario["be_bind_answer"] = _answer_or_close(sock, whole=True)


@then("the target answers it with a bind_ack or a bind_nak for its call_id")
def answers_the_big_endian_bind(mq, scenario):
    answer = scenario["be_bind_answer"]
    _assert(mq, answer not in (None, "silence"),
            f"the target answers a bind in big-endian NDR (C706 12.6.4.3-5: a bind_ack or a "
            f"bind_nak), not with {_answer_name(answer)}")
    _assert(mq, isinstance(answer.body, (d.BindAck, d.BindNak))
            and answer.header.call_id == 1,
            f"the answer is a bind_ack or a bind_nak for call 1, not a "
            f"{type(answer.body).__name__} for call {answer.header.call_id}")


@when("the client sends the first fragment of call 2, then a whole request with the same "
      "call_id, then calls R_GetServerPort as call 3")
def restarts_a_fragmented_call(mq, scenario):
    """A first fragment (PFC_FIRST_FRAG) of call 2, then a whole R_GetServerPort request that
    names call 2 too, then call 3 (C706 12.6.4.9: a request's fragments come in order, the
    first flagged PFC_FIRST_FRAG; a second first fragment for a call under reassembly is a
    protocol error). The PDUs answering each call_id go into the scenario, in order (None
    where the target closed the connection), until call 3 is answered and call 2 too, or the
    target stays silent."""
    syntax = _target_syntax(mq)
    call = c.R_GetServerPort()
    stub = ndr.encode_request(call, syntax == "ndr64")
    with _connect(mq, record=False) as sock:  # wire.pcap holds whole calls only
        _bind_accepted(mq, sock, (syntax,))
        answers: list[tuple[int | None, Any]] = []
        try:
            sock.sendall(d.encode_pdu(d.Request(context_id=0, opnum=call.opnum,
                                                stub=bytes(8), alloc_hint=24),
                                      call_id=2, pfc_flags=d.PFC_FIRST_FRAG)
                         + _request(2, call.opnum, stub) + _request(3, call.opnum, stub))
            _read_until(sock, answers, lambda: {2, 3} <= {cid for cid, _ in answers})
        except ConnectionError:
            answers.append((None, None))
        except TimeoutError:
            answers.append((None, "silence"))
    scenario["restart_answers"] = answers


def _read_until(sock: _Recorded, answers: list, done: Callable[[], bool]) -> None:
    """Read PDUs, each noted as (call_id, body) in ``answers``, until ``done()``."""
    while not done():
        pdu = _read_pdu(sock)
        answers.append((pdu.header.call_id, pdu.body))


@then("the target answers call 2 once, with a fault whose status is not 0 or the port, and "
      "call 3 with the port, or closes the connection")
def answers_the_restarted_call(mq, scenario):
    answers = scenario["restart_answers"]
    _assert(mq, (None, "silence") not in answers,
            f"the target answers calls 2 and 3 or closes the connection within {TIMEOUT_S} s "
            f"(MS-RPCE 3.3.3.5.1: a request is never left unanswered on a connection that goes "
            f"on); it answered only call(s) {sorted({cid for cid, _ in answers if cid})}")
    if (None, None) in answers:
        return  # MS-RPCE 3.3.3.5.1: a server may close the connection instead
    for_2 = [b for cid, b in answers if cid == 2]
    _assert(mq, len(for_2) == 1, f"call 2 is answered once, not {len(for_2)} times")
    _assert(mq, isinstance(for_2[0], d.Response)
            or (isinstance(for_2[0], d.Fault) and for_2[0].status != 0),
            f"call 2 is answered with the port or a fault whose status is not 0, not "
            f"{for_2[0]!r}")
    for_3 = [b for cid, b in answers if cid == 3]
    _assert(mq, len(for_3) == 1 and isinstance(for_3[0], d.Response),
            f"call 3 is answered with the port, not {for_3!r}")


@when("the client sends a request in three fragments whose second names another opnum than "
      "its first, then calls R_GetServerPort on the same connection")
def sends_a_broken_fragmented_request(mq, scenario):
    """Call 2: a first fragment (R_GetServerPort's opnum), a middle one naming opnum 5, a last
    one naming the first's again (C706 12.6.4.9: every fragment of a request carries the
    call's opnum); then call 3, R_GetServerPort whole. The PDUs answering each call_id, in
    order, go into the scenario (None where the target closed the connection)."""
    syntax = _target_syntax(mq)
    opnum = c.R_GetServerPort.opnum
    with _connect(mq, record=False) as sock:  # wire.pcap holds whole calls only
        _bind_accepted(mq, sock, (syntax,))

        def fragment(op: int, flags: int) -> bytes:
            return d.encode_pdu(d.Request(context_id=0, opnum=op, stub=bytes(8), alloc_hint=24),
                                call_id=2, pfc_flags=flags)

        answers: list[tuple[int, Any]] = []
        try:
            sock.sendall(fragment(opnum, d.PFC_FIRST_FRAG) + fragment(5, 0))
            first = _read_pdu(sock)
            answers.append((first.header.call_id, first.body))
            call = c.R_GetServerPort()
            sock.sendall(fragment(opnum, d.PFC_LAST_FRAG)
                         + _request(3, opnum, ndr.encode_request(call, syntax == "ndr64")))
            _read_until(sock, answers, lambda: any(cid == 3 for cid, _ in answers))
        except ConnectionError:
            answers.append((None, None))
        except TimeoutError:
            answers.append((None, "silence"))
    scenario["fragment_answers"] = answers


@then("the target answers the broken call with one fault, then answers R_GetServerPort, or "
      "closes the connection")
def one_fault_for_the_broken_call(mq, scenario):
    answers = scenario["fragment_answers"]
    _assert(mq, (None, "silence") not in answers,
            f"the target answers or closes the connection within {TIMEOUT_S} s (it sent "
            f"{[type(b).__name__ for _, b in answers if b not in (None, 'silence')]})")
    for_2 = [b for cid, b in answers if cid == 2]
    _assert(mq, len(for_2) <= 1,
            f"call 2 is answered once (C706 12.6.4.7: one fault ends a call; its last fragment, "
            f"after the fault, is not a call of its own); it got {len(for_2)} answers")
    _assert(mq, all(isinstance(b, d.Fault) and b.status != 0 for b in for_2),
            f"the broken call is answered with a fault, not {[type(b).__name__ for b in for_2]}")
    if (None, None) in answers:
        return  # MS-RPCE 3.3.3.5.1: a server may close the connection instead
    _assert(mq, len(for_2) == 1, "the broken call is answered with a fault before the next")
    port = [b for cid, b in answers if cid == 3]
    _assert(mq, len(port) == 1 and isinstance(port[0], d.Response),
            f"R_GetServerPort after the broken call is run on the same connection (it got "
            f"{[type(b).__name__ for b in port]})")


@then("the target refuses it with a fault or a bind_nak, or closes the connection")
def refuses_the_cut_pdu(mq, scenario):
    answer, kind = scenario["cut_answer"], scenario["cut"]
    _assert(mq, answer != "silence",
            f"the target answers the malformed {kind} PDU or closes the connection within "
            f"{TIMEOUT_S} s (MS-RPCE 3.3.3.5.1: a fault PDU, else the connection closed); it "
            f"did neither")
    if answer is None:
        return
    wanted = d.BindNak if kind.endswith("bind") else d.Fault
    _assert(mq, type(answer) is wanted,
            f"the target answers the {kind} PDU it refuses with a "
            f"{'bind_nak' if wanted is d.BindNak else 'fault'} (C706 12.6.4; MS-RPCE "
            f"3.3.3.5.1), not a {type(answer).__name__}")
    if wanted is d.Fault:
        _assert(mq, answer.status != 0, "the fault carries a status")


@when(parsers.re(r"a new connection sends (?P<what>an alter_context PDU before any bind|a "
                 r"second bind PDU after its first was accepted)$"))
def sends_out_of_order_bind(mq, scenario, what):
    """An alter_context on a connection with no association yet (C706 12.6.4.1: there is
    nothing to alter), or a bind on an association already bound (MS-RPCE 2.2.2.5: a protocol
    error in bind). What the target sent back, or None for a closed connection, goes into the
    scenario."""
    interface = d.SyntaxId(c.REMOTEREAD_UUID, *REMOTEREAD_VERSION)
    contexts = (d.ContextElement(0, interface, (d.TRANSFER_SYNTAXES[_target_syntax(mq)],)),)
    with _connect(mq, record=False) as sock:  # wire.pcap holds accepted associations only
        if what.startswith("an alter_context"):
            sock.sendall(d.encode_pdu(d.AlterContext(d.MUST_RECV_FRAG_SIZE,
                                                     d.MUST_RECV_FRAG_SIZE, 0, contexts),
                                      call_id=1))
            scenario["cut"] = "early alter_context"
        else:
            ack = _bind(sock, (_target_syntax(mq),)).body
            _assert(mq, isinstance(ack, d.BindAck), "the target accepts the first bind")
            sock.sendall(d.encode_pdu(d.Bind(d.MUST_RECV_FRAG_SIZE, d.MUST_RECV_FRAG_SIZE, 0,
                                             contexts), call_id=2))
            scenario["cut"] = "second bind"
        scenario["cut_answer"] = _answer_or_close(sock)


@when(parsers.parse("a new connection sends a bind PDU in RPC version {major:d}.{minor:d}"))
def sends_a_bind_in_another_version(mq, scenario, major, minor):
    """A bind whose rpc_vers and rpc_vers_minor (C706 12.6.3.1) are ``major``.``minor``; what
    the target sent back, or None for a connection it closed, goes into the scenario."""
    interface = d.SyntaxId(c.REMOTEREAD_UUID, *REMOTEREAD_VERSION)
    bind = bytearray(d.encode_pdu(d.Bind(d.MUST_RECV_FRAG_SIZE, d.MUST_RECV_FRAG_SIZE, 0,
                                         (d.ContextElement(0, interface, (d.NDR,)),)),
                                  call_id=VERSION_CALL_ID))
    bind[0], bind[1] = major, minor
    with _connect(mq, record=False) as sock:  # wire.pcap holds RPC 5.0 PDUs only
        sock.sendall(bytes(bind))
        pdu = _answer_or_close(sock, whole=True)
        scenario["version_answer"] = getattr(pdu, "body", pdu)
        scenario["version_call_id"] = getattr(getattr(pdu, "header", None), "call_id", None)


@then("the target answers with a bind_nak for protocol_version_not_supported that names "
      "version 5.0")
def answers_version_nak(mq, scenario):
    answer = scenario["version_answer"]
    _check_bind_nak(mq, answer, "a bind in a version it does not speak", "C706 12.6.4.5",
                    d.RejectReason.PROTOCOL_VERSION_NOT_SUPPORTED,
                    "protocol_version_not_supported (4)")
    _assert(mq, (d.RPC_VERS, 0) in tuple(answer.versions),
            f"the bind_nak names the versions the server speaks, 5.0 among them, not "
            f"{list(answer.versions)}")
    _assert(mq, scenario["version_call_id"] == VERSION_CALL_ID,
            f"the bind_nak carries the bind's call_id {VERSION_CALL_ID} (C706 12.6.4.5), not "
            f"{scenario['version_call_id']}")


#: the call_id of the bind in another RPC version (any value but the usual 1 shows it is read)
VERSION_CALL_ID = 0x2A
#: an auth_type no security provider has (MS-RPCE 2.2.1.1.7 lists 0x00, 0x09, 0x0A, 0x0E,
#: 0x10, 0x44 and 0xFF), so no server's table of providers (3.1.3.1.1) holds it
UNKNOWN_AUTH_TYPE = 0x7F


def _unknown_provider_verifier() -> d.AuthVerifier:
    """A sec_trailer (MS-RPCE 2.2.2.11) naming UNKNOWN_AUTH_TYPE at packet integrity, around
    an NTLM NEGOTIATE message (MS-NLMP 2.2.1.1): what an NTLM bind carries, but for the
    auth_type, so that only the auth_type makes it unknown."""
    from impacket import ntlm

    token = ntlm.getNTLMSSPType1("", "", signingRequired=True).getData()
    return d.AuthVerifier(UNKNOWN_AUTH_TYPE, 5, 0, 0, token)


@when(parsers.re(r"a new connection sends (?P<what>a bind|an alter_context after its bind) "
                 r"whose verifier names an authentication type no security provider has$"))
def sends_unknown_provider(mq, scenario, what):
    """MS-RPCE 3.3.3.5.3: a bind or alter_context whose auth_type names a provider the server
    does not have. The bind: RemoteRead's context and the verifier (call_id VERSION_CALL_ID);
    the alter_context: the same context again on an association bound without one. What the
    target sent back, or None for a closed connection, goes into the scenario."""
    interface = d.SyntaxId(c.REMOTEREAD_UUID, *REMOTEREAD_VERSION)
    contexts = (d.ContextElement(0, interface, (d.TRANSFER_SYNTAXES[_target_syntax(mq)],)),)
    verifier = _unknown_provider_verifier()
    with _connect(mq, record=False) as sock:  # wire.pcap holds accepted associations only
        if what == "a bind":
            sock.sendall(d.encode_pdu(d.Bind(d.MUST_RECV_FRAG_SIZE, d.MUST_RECV_FRAG_SIZE, 0,
                                             contexts), call_id=VERSION_CALL_ID, auth=verifier))
            pdu = _answer_or_close(sock, whole=True)
            scenario["auth_answer"] = getattr(pdu, "body", pdu)
            scenario["auth_call_id"] = getattr(getattr(pdu, "header", None), "call_id", None)
        else:
            _bind_accepted(mq, sock, (_target_syntax(mq),))
            sock.sendall(d.encode_pdu(d.AlterContext(d.MUST_RECV_FRAG_SIZE,
                                                     d.MUST_RECV_FRAG_SIZE, 0, contexts),
                                      call_id=2, auth=verifier))
            scenario["cut"] = "alter_context naming an unknown security provider"
            scenario["cut_answer"] = _answer_or_close(sock)


#: the auth_context_id of the security context an alter_context begins (any value: the
#: connection has none yet)
ALTER_AUTH_CONTEXT_ID = 0x4D51
#: RPC_C_AUTHN_WINNT (MS-RPCE 2.2.1.1.7) and RPC_C_AUTHN_LEVEL_PKT_INTEGRITY (2.2.1.1.8)
AUTHN_WINNT, LEVEL_INTEGRITY = 10, 5


@when("a new connection binds RemoteRead without authentication and sends an alter_context "
      "carrying an NTLM NEGOTIATE")
def alter_context_negotiates(mq, scenario):
    """MS-RPCE 3.3.1.5.2.1: a client that has sent its bind begins a security context with an
    alter_context. The bind: RemoteRead's context, no verifier; the alter_context: the same
    context with an NTLM NEGOTIATE (MS-NLMP 2.2.1.1) at packet integrity. Only for a target
    that takes NTLM callers (the target file names identities); not applicable where the
    target refuses a bind without authentication."""
    from impacket import ntlm

    syntax = _target_syntax(mq)
    interface = d.SyntaxId(c.REMOTEREAD_UUID, *REMOTEREAD_VERSION)
    contexts = (d.ContextElement(0, interface, (d.TRANSFER_SYNTAXES[syntax],)),)
    token = ntlm.getNTLMSSPType1("", "", signingRequired=True).getData()
    verifier = d.AuthVerifier(AUTHN_WINNT, LEVEL_INTEGRITY, 0, ALTER_AUTH_CONTEXT_ID, token)
    with _connect(mq, record=False) as sock:  # wire.pcap holds calls answered in turn
        if not mq.suite.spec.identities:  # (after _connect: a target without RPC runtime, or
            # one requiring authentication, makes the case not applicable instead)
            raise Inconclusive("the target file names no identity: whether the target takes "
                               "NTLM callers at all is not known")
        ack = _bind(sock, (syntax,)).body
        if not isinstance(ack, d.BindAck):
            raise NotApplicable(f"the target answers a bind without authentication with "
                                f"{_answer_name(ack)}")
        sock.sendall(d.encode_pdu(d.AlterContext(d.MUST_RECV_FRAG_SIZE, d.MUST_RECV_FRAG_SIZE,
                                                 0, contexts), call_id=2, auth=verifier))
        scenario["alter_answer"] = _answer_or_close(sock, whole=True)


#: an NTLM CHALLENGE_MESSAGE begins with its Signature and MessageType 2 (MS-NLMP 2.2.1.2)
NTLM_CHALLENGE = b"NTLMSSP\0" + struct.pack("<L", 2)


@then("the target answers with an alter_context_resp whose verifier carries an NTLM CHALLENGE "
      "for that security context")
def answers_alter_with_challenge(mq, scenario):
    """MS-RPCE 3.3.1.5.2.1: the server MUST answer an alter_context that builds a security
    context with an alter_context_resp (a fault only in error); the provider's next message,
    NTLM's CHALLENGE, rides in its verifier, which names the context the alter_context began
    (2.2.2.11 auth_context_id)."""
    pdu = scenario["alter_answer"]
    body = getattr(pdu, "body", pdu)
    _assert(mq, isinstance(body, d.AlterContextResp),
            f"the target answers the alter_context that begins a security context with an "
            f"alter_context_resp (MS-RPCE 3.3.1.5.2.1), not {_answer_name(body)}")
    auth = pdu.auth
    _assert(mq, auth is not None and auth.auth_value[:12] == NTLM_CHALLENGE,
            "the alter_context_resp's verifier carries an NTLM CHALLENGE_MESSAGE (MS-NLMP "
            "2.2.1.2)")
    _assert(mq, auth.auth_context_id == ALTER_AUTH_CONTEXT_ID,
            f"the verifier names the security context the alter_context began "
            f"({ALTER_AUTH_CONTEXT_ID:#x}, MS-RPCE 2.2.2.11), not {auth.auth_context_id:#x}")


@then("the target answers with a bind_nak for authentication_type_not_recognized")
def answers_unknown_provider_nak(mq, scenario):
    answer = scenario["auth_answer"]
    _check_bind_nak(mq, answer, "a bind naming an unknown security provider",
                    "MS-RPCE 3.3.3.5.3", d.RejectReason.AUTHENTICATION_TYPE_NOT_RECOGNIZED,
                    "authentication_type_not_recognized (8, MS-RPCE 2.2.2.5)")
    _assert(mq, scenario["auth_call_id"] == VERSION_CALL_ID,
            f"the bind_nak carries the bind's call_id {VERSION_CALL_ID} (C706 12.6.4.5), not "
            f"{scenario['auth_call_id']}")


#: how long stops_in_a_pdu's client waits, stopped, before the next step
STALLED_S = 0.5


@when("another connection binds RemoteRead and calls R_GetServerPort")
def another_calls_the_port(mq, scenario):
    syntax = _target_syntax(mq)
    call = c.R_GetServerPort()
    try:
        _, answer = _one_call(mq, call.opnum, ndr.encode_request(call, syntax == "ndr64"),
                              syntax)
    finally:
        stalled = scenario.pop("stalled", None)
        if stalled is not None:
            stalled.__exit__(None, None, None)
    _note_port_answer(scenario, "R_GetServerPort on a connection of its own", call, answer,
                      syntax == "ndr64")


@then("the target answers with the port it listens on, not a fault")
def answers_the_port(mq, scenario):
    answer = scenario["port_answer"]
    _assert(mq, not isinstance(answer, d.Fault),
            f"{scenario.get('port_call', 'the request')} is run, not refused (fault "
            f"0x{getattr(answer, 'status', 0):08X})")
    _assert(mq, answer.status == mq.target.port,
            f"R_GetServerPort answers the port it listens on ({mq.target.port}), not "
            f"{answer.status} (MS-MQRR/3.1.4.1/R6)")


# ---------------------------------------------------------------- answers the client reads late

@when(parsers.parse("a new connection opens the queue and sends {count:d} peeks of it before "
                    "reading any answer"))
def peeks_read_late(mq, scenario, count):
    """Calls pipelined on one connection (C706 12.6.3: a client may have several calls
    outstanding on an association), their answers read only after a pause: answers larger than
    the connection's buffers wait in the target while nobody reads, and must then come whole,
    each in its call's fragments, in order."""
    fmt = scenario["queue"]
    syntax = _target_syntax(mq)
    ndr64 = syntax == "ndr64"
    with _connect(mq) as sock:
        _bind_accepted(mq, sock, (syntax,))
        recorder = getattr(mq.target, "recorder", None)
        mark = recorder.mark() if recorder is not None else 0
        opened = _call_on(sock, 2, c.R_OpenQueue(pQueueFormat=fmt, dwAccess=c.RECEIVE_ACCESS,
                                                 pClientId=sources.uuid4(),
                                                 fNonRoutingServer=1), ndr64)
        _note_call(recorder, mark)
        _assert(mq, opened.status == 0 and not opened.raised and opened.pphContext,
                f"R_OpenQueue on the new connection: status 0x{opened.status:08X}")
        peeks = [c.R_StartReceive(phContext=opened.pphContext,
                                  ulAction=c.MQ_ACTION_PEEK_CURRENT, dwRequestId=i + 1,
                                  dwMaxBodySize=LATE_BODY_MAX,
                                  dwMaxCompoundMessageSize=LATE_BODY_MAX)
                 for i in range(count)]
        marks = []
        for call_id, call in enumerate(peeks, start=3):
            marks.append(recorder.mark() if recorder is not None else 0)
            sock.sendall(_request(call_id, call.opnum, ndr.encode_request(call, ndr64)))
        time.sleep(LATE_READ_S)
        stubs = _read_answers(sock, range(3, 3 + count), chunk=SLOW_CHUNK, pause=SLOW_PAUSE_S)
        for each in marks:  # one call of wire.pcap each
            _note_call(recorder, each)
    scenario["late"] = [stub if isinstance(stub, d.Fault) else
                        ndr.decode_response(call, stub, ndr64)
                        for call, stub in zip(peeks, stubs, strict=True)]


#: the answers of peeks_read_late are read after this pause; each may hold a body this long
LATE_READ_S = 0.5
LATE_BODY_MAX = 4_194_304  # MSMQ's largest message (MS-MQMQ 2.2.19: 4 MB)
#: and then read slowly: this many octets at a time, with this pause between reads
SLOW_CHUNK = 1 << 16
SLOW_PAUSE_S = 0.002


def _call_on(sock: _Recorded, call_id: int, call: c.Call, ndr64: bool = False) -> c.Result:
    sock.sendall(_request(call_id, call.opnum, ndr.encode_request(call, ndr64)))
    [answer] = _read_answers(sock, [call_id])
    if isinstance(answer, d.Fault):
        return c.RESULTS[type(call)](status=answer.status, raised=True)
    return ndr.decode_response(call, answer, ndr64)


def _read_answers(sock: _Recorded, call_ids, chunk: int = 1 << 20, pause: float = 0.0
                  ) -> list:
    """The answers of these calls, in this order, as they come: a call's stub (its response
    fragments joined) or its Fault. Fragments of another call_id, or a PDU that is neither a
    response nor a fault, break the association (C706 12.6.3). ``chunk``: the most octets one
    read takes; ``pause``: seconds between reads (a slow reader)."""
    wanted = list(call_ids)
    answers: dict[int, Any] = {}
    parts: list[bytes] = []
    while len(answers) < len(wanted):
        try:
            pdu = _read_pdu(sock, chunk, pause)
        except ConnectionError:
            raise ConnectionError(f"the target closed the connection with "
                                  f"{len(wanted) - len(answers)} answer(s) to come") from None
        expected = wanted[len(answers)]
        if pdu.header.call_id != expected:
            raise ConnectionError(f"a PDU of call_id {pdu.header.call_id} where the answer "
                                  f"of call_id {expected} was under way")
        if isinstance(pdu.body, d.Fault):
            answers[expected] = pdu.body
        elif isinstance(pdu.body, d.Response):
            parts.append(pdu.body.stub)
            if pdu.header.pfc_flags & d.PFC_LAST_FRAG:
                answers[expected] = b"".join(parts)
                parts = []
        else:
            raise ConnectionError(f"a {type(pdu.body).__name__} PDU where an answer was due")
    return [answers[i] for i in wanted]


@then("each peek returns the whole message")
def each_peek_whole(mq, scenario):
    body = scenario["body"]
    for i, answer in enumerate(scenario["late"], start=1):
        _assert(mq, not isinstance(answer, d.Fault) and answer.status == 0,
                f"peek {i}: {'fault' if isinstance(answer, d.Fault) else 'status'} "
                f"0x{getattr(answer, 'status', 0):08X}")
        _assert(mq, message_body(answer) == body,
                f"peek {i} returns the message's {len(body)} body bytes whole, not "
                f"{len(message_body(answer) or b'')}")


# ---------------------------------------------------------------- one connection, several PDUs

def _port_call(mq, sock: _Recorded, call_id: int, context_id: int, syntax: str):
    """R_GetServerPort on ``context_id`` of a bound connection: one call of wire.pcap; the
    Fault or the decoded result."""
    call = c.R_GetServerPort()
    recorder = getattr(mq.target, "recorder", None)
    mark = recorder.mark() if recorder is not None else 0
    sock.sendall(_request(call_id, call.opnum, ndr.encode_request(call, syntax == "ndr64"),
                          context_id))
    [answer] = _read_answers(sock, [call_id])
    _note_call(recorder, mark)
    return _port_answer(call, answer, syntax)


def _port_answer(call: c.R_GetServerPort, answer: Any, syntax: str):
    """An answer of _read_answers: its Fault, or its stub decoded."""
    return answer if isinstance(answer, d.Fault) else \
        ndr.decode_response(call, answer, syntax == "ndr64")


def _bound(mq) -> tuple[_Recorded, str]:
    """A new connection bound to RemoteRead (presentation context 0, the target's syntax)."""
    syntax = _target_syntax(mq)
    sock = _connect(mq)
    ack = _bind(sock, (syntax,)).body
    if not isinstance(ack, d.BindAck):
        sock.__exit__(None, None, None)
        _assert(mq, False, f"the target accepts the bind (it sent {type(ack).__name__})")
    return sock, syntax


@when("the client binds RemoteRead, adds a second presentation context with alter_context and "
      "calls R_GetServerPort on it")
def alter_context_and_call(mq, scenario):
    """C706 12.6.4.1: alter_context proposes more presentation contexts on a bound
    association (here RemoteRead again, as context 1); 12.6.4.2: alter_context_resp answers
    it, one result per context proposed."""
    sock, syntax = _bound(mq)
    with sock:
        interface = d.SyntaxId(c.REMOTEREAD_UUID, *REMOTEREAD_VERSION)
        sock.sendall(d.encode_pdu(d.AlterContext(
            d.MUST_RECV_FRAG_SIZE, d.MUST_RECV_FRAG_SIZE, 0,
            (d.ContextElement(1, interface, (d.TRANSFER_SYNTAXES[syntax],)),)), call_id=2))
        scenario["altered"] = _read_pdu(sock).body
        if isinstance(scenario["altered"], d.AlterContextResp):
            scenario["port_call"] = "R_GetServerPort on the context alter_context added"
            scenario["port_answer"] = _port_call(mq, sock, 3, 1, syntax)


@then("the target accepts the added context in an alter_context_resp")
def accepts_the_added_context(mq, scenario):
    body = scenario["altered"]
    _assert(mq, isinstance(body, d.AlterContextResp),
            f"the target answers an alter_context with an alter_context_resp (C706 12.6.4.2), "
            f"not a {type(body).__name__}")
    results = [r.result for r in body.results]
    _assert(mq, results == [d.ContResult.ACCEPTANCE],
            f"the alter_context_resp has one result for the one context proposed, acceptance "
            f"(0): {results}")


@when("the client binds RemoteRead, sends a co_cancel and an orphaned for a call it never made, "
      "and calls R_GetServerPort")
def cancel_and_orphan_nothing(mq, scenario):
    """C706 12.6.4.6 (co_cancel) and 12.6.4.8 (orphaned) name a call of the connection by its
    call_id; for a call_id that names none there is nothing to cancel, and the association
    goes on."""
    sock, syntax = _bound(mq)
    with sock:
        sock.sendall(d.encode_pdu(d.CoCancel(), call_id=41))
        sock.sendall(d.encode_pdu(d.Orphaned(), call_id=42))
        scenario["port_call"] = "R_GetServerPort after a co_cancel and an orphaned"
        try:
            scenario["port_answer"] = _port_call(mq, sock, 43, 0, syntax)
        except ConnectionError as e:
            _assert(mq, False, f"the connection carries on after a co_cancel and an orphaned "
                               f"for no call in progress ({e})")


@when(parsers.parse("the client binds RemoteRead, sends {count:d} R_GetServerPort requests in "
                    "one segment, reads their answers and calls R_GetServerPort again"))
def pipelined_then_one_more(mq, scenario, count):
    """Calls outstanding together on one connection (C706 12.6.3), written in one send, so
    the target reads them at once; then one more call after their answers."""
    sock, syntax = _bound(mq)
    call = c.R_GetServerPort()
    recorder = getattr(mq.target, "recorder", None)
    stub = ndr.encode_request(call, syntax == "ndr64")
    pdus = [_request(i, call.opnum, stub) for i in range(2, 2 + count)]
    with sock:
        sock.sock.sendall(b"".join(pdus))
        marks = []
        for pdu in pdus:  # wire.pcap: one call each, in the order sent
            marks.append(recorder.mark() if recorder is not None else 0)
            if sock.tap is not None:
                sock.tap.sent(pdu)
        answers = _read_answers(sock, range(2, 2 + count))
        for mark in marks:
            _note_call(recorder, mark)
        answers = [_port_answer(call, a, syntax) for a in answers]
        answers.append(_port_call(mq, sock, 2 + count, 0, syntax))
    scenario["port_answers"] = answers


@then("every answer is the port it listens on")
def every_answer_is_the_port(mq, scenario):
    answers = scenario["port_answers"]
    ports = [None if isinstance(a, d.Fault) else a.status for a in answers]
    _assert(mq, ports == [mq.target.port] * len(answers),
            f"each of the {len(answers)} R_GetServerPort calls answers the port the target "
            f"listens on ({mq.target.port}): {ports} (MS-MQRR/3.1.4.1/R6)")


@when(parsers.re(r"a connection waits (?P<seconds>\d+(?:\.\d+)?) seconds?, then binds "
                 r"RemoteRead and calls R_GetServerPort"))
def waits_then_binds(mq, scenario, seconds):
    """A client that connects and takes its time before the bind (C706 12.6.4.3 sets no time
    for it), as a client busy elsewhere does."""
    seconds = float(seconds)
    syntax = _target_syntax(mq)
    with _connect(mq) as sock:
        time.sleep(seconds)
        ack = _bind(sock, (syntax,)).body
        _assert(mq, isinstance(ack, d.BindAck),
                f"the target accepts the bind (it sent {type(ack).__name__})")
        scenario["port_call"] = f"R_GetServerPort after {seconds:g} s without a word"
        scenario["port_answer"] = _port_call(mq, sock, 2, 0, syntax)


@when(parsers.parse("the client binds RemoteRead and sends a request on presentation context "
                    "{context:d}, which it never negotiated"))
def request_on_an_unknown_context(mq, scenario, context):
    """C706 12.6.4.9: p_cont_id names the presentation context of the call, one the
    association negotiated; a request naming another cannot be run."""
    sock, syntax = _bound(mq)
    call = c.R_GetServerPort()
    stub = ndr.encode_request(call, syntax == "ndr64")
    recorder = getattr(mq.target, "recorder", None)
    with sock:
        mark = recorder.mark() if recorder is not None else 0
        sock.sendall(_request(2, call.opnum, stub, context))
        scenario["answer"] = _read_pdu(sock)
        _note_call(recorder, mark)
    scenario["refused"] = f"a request on presentation context {context}, never negotiated"
