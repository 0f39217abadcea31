"""The fast path (captures/fastpath.py) against the codec (wire/ndr.py, then model/observer.py
observation_fields): on every golden pcap, and on Hypothesis-generated calls and results of
each method it reads, in NDR and NDR64, whole, truncated, extended and with octets changed —
the fast path either declines or gives the codec's status and columns, and never accepts a
stub the codec refuses."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mqconform.captures import fastpath
from mqconform.captures.decode import decode_file
from mqconform.conformance import golden
from mqconform.model import calls as c
from mqconform.model.observer import observation_fields
from mqconform.wire import ndr

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "wire"))
from wire_strategies import CALLS, SETTINGS, result_for  # noqa: E402

COLUMNS = ("status", "decode_error", "handle", "result_handle", "queue", "access", "action",
           "action_text", "request_id", "lookup_id", "cursor", "ack", "sequence_id",
           "object_type", "props", "vts")
FAST_TYPES = [c.CALLS[(name, opnum)] for name, opnum in fastpath.FAST]


def _columns(call) -> tuple:
    return tuple(tuple(v) if isinstance(v, list) else v for v in
                 (getattr(call, n) for n in COLUMNS))


def test_the_fast_path_reads_every_golden_pcap_as_the_codec_does():
    from mqconform.captures.decode import Decoder

    files = sorted(golden.GOLDEN.rglob("*.pcap"))
    fast_calls = 0
    for path in files:
        slow = [_columns(x) for x in decode_file(path) if hasattr(x, "call_id")]
        decoded = [x for x in Decoder(str(path), json_fields=False).run(path)
                   if hasattr(x, "call_id")]
        fast = [_columns(x) for x in decoded]
        assert fast == slow, path.relative_to(golden.GOLDEN)
        fast_calls += sum(1 for x in decoded if (x.interface_name, x.opnum) in fastpath.FAST)
    assert fast_calls > 500


def _slow(call_type, ndr64, request: bytes, response: bytes | None):
    """(status, columns) by the codec, or None when it refuses a stub."""
    try:
        call = ndr.decode_request(call_type.interface, call_type.opnum, request, ndr64)
        result = None if response is None else ndr.decode_response(call, response, ndr64)
    except ndr.StubError:
        return None
    return (None if result is None else result.status), observation_fields(call, result)


def _agree(call_type, ndr64, request, response):
    got = fastpath.observe(call_type.interface, call_type.opnum, ndr64, request, response)
    want = _slow(call_type, ndr64, request, response)
    if got is None:
        return False  # declined: the codec decides
    assert want is not None, "the fast path accepted a stub the codec refuses"
    status, fields = got
    assert status == want[0]
    assert {k: v for k, v in fields.items()} == {k: v for k, v in want[1].items()
                                                 if v is not None or k in fields}
    return True


CASES = [pytest.param(t, ndr64, id=f"{t.__name__}-{'ndr64' if ndr64 else 'ndr'}")
         for t in FAST_TYPES for ndr64 in (False, True)]


@pytest.mark.parametrize("call_type, ndr64", CASES)
@SETTINGS
@given(data=st.data())
def test_generated_calls_read_alike(call_type, ndr64, data):
    call = data.draw(CALLS[call_type])
    request = ndr.encode_request(call, ndr64)
    result = data.draw(result_for(call))
    response = ndr.encode_response(call, result, ndr64)
    assert _agree(call_type, ndr64, request, response)  # valid stubs: never declined
    assert _agree(call_type, ndr64, request, None)


@pytest.mark.parametrize("call_type, ndr64", CASES)
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_damaged_stubs_are_declined_or_read_alike(call_type, ndr64, data):
    call = data.draw(CALLS[call_type])
    result = data.draw(result_for(call))
    stubs = [bytearray(ndr.encode_request(call, ndr64)),
             bytearray(ndr.encode_response(call, result, ndr64))]
    which = data.draw(st.integers(0, 1))
    stub = stubs[which]
    how = data.draw(st.sampled_from(["cut", "extend", "flip"]))
    if how == "cut" and stub:
        del stub[data.draw(st.integers(0, len(stub) - 1)):]
    elif how == "extend":
        stub += data.draw(st.binary(min_size=1, max_size=12))
    elif stub:
        for _ in range(data.draw(st.integers(1, 4))):
            i = data.draw(st.integers(0, len(stub) - 1))
            stub[i] = data.draw(st.integers(0, 255))
    _agree(call_type, ndr64, bytes(stubs[0]), bytes(stubs[1]))
