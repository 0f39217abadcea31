"""Every call and result of RemoteRead (NDR and NDR64) and qmmgmt (NDR) survives encoding and
decoding unchanged, for values drawn by Hypothesis; and any truncation or corruption of a
valid stub decodes to the same value, another value, or a StubError — never another
exception."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wire_strategies import CALLS, SETTINGS, result_for, syntaxes

from mqconform.model import calls as c
from mqconform.model.formats import MgmtObject
from mqconform.wire.ndr import (
    StubError,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)
from mqconform.wire.types import VARTYPES

u8 = st.integers(0, 0xFF)

CASES = [pytest.param(t, ndr64, id=f"{t.__name__}-{'ndr64' if ndr64 else 'ndr'}")
         for t in CALLS for ndr64 in syntaxes(t)]


@pytest.mark.req("MS-MQRR/2.2/R1", "MS-MQMR/2.2/R1")
@pytest.mark.parametrize("call_type, ndr64", CASES)
@SETTINGS
@given(data=st.data())
def test_call_and_result_survive_encoding(call_type, ndr64, data):
    call = data.draw(CALLS[call_type])
    stub = encode_request(call, ndr64)
    assert decode_request(call.interface, call.opnum, stub, ndr64) == call
    result = data.draw(result_for(call))
    stub = encode_response(call, result, ndr64)
    assert decode_response(call, stub, ndr64) == result


@pytest.mark.parametrize("call_type, ndr64", CASES)
@SETTINGS
@given(data=st.data())
def test_truncated_or_corrupted_stub_decodes_or_raises_stub_error(call_type, ndr64, data):
    call = data.draw(CALLS[call_type])
    result = data.draw(result_for(call))
    for stub, decode in ((encode_request(call, ndr64),
                          lambda b: decode_request(call.interface, call.opnum, b, ndr64)),
                         (encode_response(call, result, ndr64),
                          lambda b: decode_response(call, b, ndr64))):
        if stub:
            cut = data.draw(st.integers(0, len(stub) - 1), label="cut")
            with pytest.raises(StubError):
                decode(stub[:cut])  # every octet of a stub is needed
            flips = data.draw(st.lists(st.tuples(st.integers(0, len(stub) - 1), u8),
                                       min_size=1, max_size=4), label="flips")
            corrupted = bytearray(stub)
            for at, octet in flips:
                corrupted[at] = octet
            try:
                decode(bytes(corrupted))
            except StubError as err:
                assert err.field and "\n" not in str(err)
        with pytest.raises(StubError) as err:
            decode(stub + b"\x00")
        assert err.value.field == "stub"


@pytest.mark.parametrize("call_type", list(CALLS))
@settings(max_examples=40, deadline=None)
@given(garbage=st.binary(max_size=300))
def test_garbage_decodes_or_raises_stub_error(call_type, garbage):
    for ndr64 in syntaxes(call_type):
        try:
            decode_request(call_type.interface, call_type.opnum, garbage, ndr64)
        except StubError:
            pass


@pytest.mark.parametrize("vt", sorted(VARTYPES))
def test_every_vartype_of_the_union_round_trips(vt):
    value = {0x00: None, 0x01: None, 0x48: uuid.UUID(int=5), 0x41: b"\x01\x02", 0x1F: "x",
             0x100C: [c.PropVariant(0x13, 1)], 0x1048: [uuid.UUID(int=1)],
             0x101F: ["a", None]}.get(vt, [1, 2] if vt & 0x1000 else 1)
    call = c.R_QMMgmtGetInfo(MgmtObject(1), 1, (1,), (c.PropVariant(vt, value),))
    stub = encode_request(call, False)
    assert decode_request(c.QMMGMT, 0, stub, False) == call
