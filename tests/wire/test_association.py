"""wire/association.py: one DCE/RPC association, sans-IO, as an observer of both directions and
as a server's; PDUs built by wire/dcerpc.py's encoder, nothing sent anywhere."""

from __future__ import annotations

import uuid

import pytest

from mqconform.wire import association as a
from mqconform.wire import dcerpc as d

IFACE = d.SyntaxId(uuid.UUID("1a9134dd-7b39-45ba-ad88-44d01ca47f28"), 1, 0)
OTHER = d.SyntaxId(uuid.UUID("41208ee0-e970-11d1-9b9e-00e02c064c39"), 1, 0)
ACCEPT = d.ContResult.ACCEPTANCE


def _bind(call_id=1, alter=False, contexts=((0, IFACE, (d.NDR, d.NDR64)),)):
    elements = tuple(d.ContextElement(cid, iface, syntaxes) for cid, iface, syntaxes in contexts)
    body = (d.AlterContext if alter else d.Bind)(5840, 5840, 0, elements)
    return d.encode_pdu(body, call_id)


def _ack(call_id=1, group=0x1234, results=None, alter=False):
    results = results or (d.ContextResultItem(ACCEPT, 0, d.NDR64),)
    body = (d.AlterContextResp if alter else d.BindAck)(5840, 5840, group, b"135", results)
    return d.encode_pdu(body, call_id)


def _request(call_id, stub, flags=d.PFC_WHOLE, context_id=0, opnum=3):
    return d.encode_pdu(d.Request(context_id, opnum, stub), call_id, flags)


def _response(call_id, stub, flags=d.PFC_WHOLE, context_id=0):
    return d.encode_pdu(d.Response(context_id, stub), call_id, flags)


def _fault(call_id, status=d.NCA_S_PROTO_ERROR):
    return d.encode_pdu(d.Fault(0, status), call_id)


def _observe(*pdus):
    assoc = a.Association(a.OBSERVER)
    events = []
    for i, pdu in enumerate(pdus):
        events += assoc.feed(pdu, at=(i, float(i)), until=(i, float(i)))
    return assoc, events


def test_a_bind_and_its_ack_put_the_accepted_contexts_in_force():
    assoc, events = _observe(
        _bind(contexts=((0, IFACE, (d.NDR,)), (1, IFACE, (d.NDR64,)), (2, OTHER, (d.NDR,)))),
        _ack(results=(d.ContextResultItem(ACCEPT, 0, d.NDR),
                      d.ContextResultItem(d.ContResult.PROVIDER_REJECTION, 2),
                      d.ContextResultItem(ACCEPT, 0, d.NDR))))
    assert assoc.contexts == {0: a.Binding(IFACE.uuid, (1, 0), d.NDR),
                              2: a.Binding(OTHER.uuid, (1, 0), d.NDR)}
    assert assoc.assoc_group == 0x1234 and assoc.bound
    bind, answered = events
    assert (type(bind), bind.call_id, bind.alter, [e.context_id for e in bind.contexts]) == (
        a.Bind, 1, False, [0, 1, 2])
    assert (type(answered), answered.accepted, answered.assoc_group, answered.at) == (
        a.BindAnswered, assoc.contexts, 0x1234, (1, 1.0))


def test_an_ack_captured_before_its_bind_is_applied_when_the_bind_comes():
    assoc, _ = _observe(_ack(call_id=4), _bind(call_id=4))
    assert assoc.contexts[0].ndr64


def test_a_bind_nak_puts_nothing_in_force_and_an_alter_context_adds_to_it():
    assoc, events = _observe(_bind(1),
                             d.encode_pdu(d.BindNak(d.RejectReason.LOCAL_LIMIT_EXCEEDED), 1),
                             _ack(1))
    assert assoc.contexts == {}  # the ack of a refused proposal names nothing proposed
    assert (type(events[1]), events[1].reason) == (a.BindRefused,
                                                    d.RejectReason.LOCAL_LIMIT_EXCEEDED)
    assoc, _ = _observe(_bind(1), _ack(1), _bind(2, alter=True, contexts=((5, OTHER, (d.NDR,)),)),
                        _ack(2, group=0, alter=True,
                             results=(d.ContextResultItem(ACCEPT, 0, d.NDR),)))
    assert sorted(assoc.contexts) == [0, 5] and assoc.assoc_group == 0x1234


def test_each_answer_is_paired_with_its_request_whatever_the_order():
    assoc, events = _observe(_bind(), _ack(), _request(7, b"A" * 8), _request(8, b"B" * 8),
                             _response(8, b"b"), _fault(7, 0x5))
    calls = [e for e in events if isinstance(e, a.Call)]
    assert [(c.call_id, c.request.stub, c.answer.stub, c.answer.fault) for c in calls] == [
        (8, b"B" * 8, b"b", None), (7, b"A" * 8, b"", 0x5)]
    assert all(c.binding == assoc.contexts[0] for c in calls)
    # an answer seen before its request (frames out of order in the capture)
    _, events = _observe(_response(3, b"r"), _request(3, b"q"))
    (call,) = events
    assert (call.request.stub, call.answer.stub, call.request.at, call.answer.at) == (
        b"q", b"r", (1, 1.0), (0, 0.0))


def test_fragments_are_joined_and_tagged_with_their_first_and_last_pdu():
    _, events = _observe(_request(1, b"a" * 8, d.PFC_FIRST_FRAG), _request(1, b"b" * 8, 0),
                         _request(1, b"c", d.PFC_LAST_FRAG), _response(1, b"x", d.PFC_FIRST_FRAG),
                         _response(1, b"y", d.PFC_LAST_FRAG))
    (call,) = events
    assert call.request.stub == b"a" * 8 + b"b" * 8 + b"c" and call.answer.stub == b"xy"
    assert (call.request.at, call.request.until) == ((0, 0.0), (2, 2.0))
    assert (call.answer.at, call.answer.until) == ((3, 3.0), (4, 4.0))


def test_an_observer_reports_broken_fragment_sequences_and_carries_on():
    assoc, events = _observe(_request(1, b"old", d.PFC_FIRST_FRAG), _request(1, b"new", d.PFC_WHOLE),
                             _request(2, b"orphan", d.PFC_LAST_FRAG),
                             _request(3, b"never", d.PFC_FIRST_FRAG))
    assert [(e.kind, e.at) for e in events] == [("fragment", (0, 0.0)), ("fragment", (2, 2.0))]
    assert "a new first fragment before the last one" in events[0].message
    assert "a fragment without its first" in events[1].message
    closing = assoc.close()
    assert [type(e).__name__ for e in closing] == ["Error", "Call"]
    assert "the last fragment never came" in closing[0].message
    assert closing[1].request.stub == b"new" and closing[1].answer is None
    assert assoc.close() == []


def test_a_call_id_used_again_before_its_answer_leaves_the_first_call_unanswered():
    _, events = _observe(_request(1, b"one"), _request(1, b"two"), _response(1, b"r"))
    assert [(c.request.stub, c.answer and c.answer.stub) for c in events] == [
        (b"one", None), (b"two", b"r")]


def test_an_auth_verifier_and_its_padding_are_not_stub():
    verifier = d.AuthVerifier(10, 6, 0, 0, bytes(16))
    pdu = d.encode_pdu(d.Request(0, 3, b"12345"), 1, d.PFC_WHOLE, auth=verifier)
    _, events = _observe(pdu, _response(1, b""))
    assert events[0].request.stub == b"12345"
    _, events = _observe(pdu[:20])  # not the whole PDU its frag_length says
    assert events[0].kind == "pdu" and "not the frag_length" in events[0].message
    too_long = bytearray(_request(2, b"1234"))
    too_long[10] = 0x40  # auth_length 64 in a PDU of 28 octets
    _, events = _observe(bytes(too_long))
    assert events[0].kind == "pdu" and "does not fit" in events[0].message


def test_an_observer_cuts_a_verification_trailer_off_the_method_stub():
    trailer = d.encode_verification_trailer([d.vt_pcontext(IFACE, d.NDR64),
                                             d.vt_header2(1, 0, 3)])
    _, events = _observe(_request(1, b"\x01\x00\x00\x00\x02\x00" + b"\0\0" + trailer),
                         _response(1, b""))
    assert (events[0].request.stub, events[0].request.padding) == (
        b"\x01\x00\x00\x00\x02\x00\0\0", 3)  # zero octets that may be padding
    _, events = _observe(_request(1, b"\x01\x00\x00\x00" + d.VT_SIGNATURE + b"\x01\x00\xff\x00"))
    assert events[0].kind == "trailer" and "runs past" in events[0].message


def test_a_server_refuses_what_c706_does_not_allow_and_ignores_the_rest_of_the_call():
    assoc = a.Association(a.SERVER, max_partial_calls=2, max_partial_octets=64, max_discarded=3)
    first, last, none = d.PFC_FIRST_FRAG, d.PFC_LAST_FRAG, 0
    assert assoc.request_fragment(1, first, 0, 3, b"a" * 8) is None
    assert assoc.request_fragment(1, none, 0, 4, b"b").status == d.NCA_S_PROTO_ERROR  # opnum
    assert assoc.request_fragment(1, last, 0, 4, b"c") is None  # the rest is ignored
    assert assoc.request_fragment(2, last, 0, 3, b"x").status == d.NCA_S_PROTO_ERROR
    ready = assoc.request_fragment(3, d.PFC_WHOLE, 0, 3, b"whole")
    assert isinstance(ready, a.Request) and ready.stub == b"whole"
    refused = assoc.request_fragment(3, d.PFC_WHOLE, 0, 3, b"again")  # still awaiting
    assert isinstance(refused, a.Refused) and refused.status == d.NCA_S_PROTO_ERROR
    assoc.answered(3)
    assert isinstance(assoc.request_fragment(3, d.PFC_WHOLE, 0, 3, b"again"), a.Request)
    assert assoc.request_fragment(4, first, 0, 3, b"y" * 40) is None
    assert assoc.request_fragment(5, first, 0, 3, b"z" * 40).status == \
        d.NCA_S_FAULT_REMOTE_NO_MEMORY
    assert assoc.request_fragment(4, none, 0, 3, b"w" * 30).status == \
        d.NCA_S_FAULT_REMOTE_NO_MEMORY  # all calls' octets together count
    assert assoc.request_fragment(7, first, 0, 3, b"v" * 8) is None
    assert assoc.request_fragment(8, first, 0, 3, b"u" * 8) is None
    assert assoc.request_fragment(9, first, 0, 3, b"t").status == d.NCA_S_SERVER_TOO_BUSY
    assoc.orphaned(7)
    assert assoc.request_fragment(9, first, 0, 3, b"t") is None
    assoc.abandon(10, last=False)  # ignoring the rest of 4, 5 and 10
    with pytest.raises(a.Abort):
        assoc.abandon(11, last=False)


def test_a_role_is_one_of_two():
    with pytest.raises(ValueError, match="role"):
        a.Association("client")


def test_a_verification_trailer_is_checked_against_the_call():
    binding = a.Binding(IFACE.uuid, (1, 0), d.NDR64)
    good = d.encode_verification_trailer([d.vt_pcontext(IFACE, d.NDR64), d.vt_header2(1, 0, 3)])
    assert a.check_verification_trailer(b"stub" + good, binding, 1, 0, 3, d.DREP_LE, False) == (
        b"stub", 0)
    wrong = d.encode_verification_trailer([d.vt_pcontext(OTHER, d.NDR64)])
    with pytest.raises(a.TrailerRefused) as refused:
        a.check_verification_trailer(b"stub" + wrong, binding, 1, 0, 3, d.DREP_LE, False)
    assert refused.value.status == d.RPC_S_ACCESS_DENIED
    signing = d.encode_verification_trailer([d.vt_bitmask()])
    with pytest.raises(a.TrailerRefused):
        a.check_verification_trailer(b"stub" + signing, binding, 1, 0, 3, d.DREP_LE, False)
    assert a.check_verification_trailer(b"stub" + signing, binding, 1, 0, 3, d.DREP_LE,
                                        True)[0] == b"stub"


def test_a_live_context_re_proposed_as_bound_stays_in_force():
    """A server serving version 1.3 accepts 1.0; the context in force is the one the client
    bound (1.0), so re-proposing it unchanged in an alter_context is no change."""
    served = {IFACE.uuid: (1, 3, frozenset({"ndr"}))}
    assoc = a.Association(a.SERVER)
    proposal = (d.ContextElement(0, IFACE, (d.NDR,)),)
    results, accepted, _ = a.negotiate_contexts(proposal, served, existing=assoc.contexts)
    assoc.propose(1, proposal)
    assert assoc.acknowledge(1, results, 0x77, bind=True) == accepted == {
        0: a.Binding(IFACE.uuid, (1, 0), d.NDR)}
    again, accepted, _ = a.negotiate_contexts(proposal, served, existing=assoc.contexts)
    assert [r.result for r in again] == [ACCEPT] and accepted == assoc.contexts
    newer = (d.ContextElement(0, d.SyntaxId(IFACE.uuid, 1, 2), (d.NDR,)),)
    changed, _, _ = a.negotiate_contexts(newer, served, existing=assoc.contexts)
    assert changed[0].result == d.ContResult.PROVIDER_REJECTION  # a live context cannot change


def test_an_early_ack_leaves_the_group_a_later_ack_named():
    assoc, _ = _observe(_ack(5, group=0x1111), _bind(7), _ack(7, group=0x2222), _bind(5))
    assert assoc.assoc_group == 0x2222 and 0 in assoc.contexts


def test_a_server_takes_one_bind_and_alters_only_after_it():
    assoc = a.Association(a.SERVER)
    assert isinstance(assoc.bind_refusal(alter=True), a.Refused)
    assert assoc.bind_refusal(alter=False) is None
    assoc.propose(1, (d.ContextElement(0, IFACE, (d.NDR,)),))
    assoc.acknowledge(1, (d.ContextResultItem(ACCEPT, 0, d.NDR),), 0x42, bind=True)
    nak = assoc.bind_refusal(alter=False)
    assert isinstance(nak, d.BindNak) and nak.reason == d.RejectReason.PROTOCOL_VERSION_NOT_SUPPORTED
    assert assoc.bind_refusal(alter=True) is None
