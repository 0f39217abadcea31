"""Differential test of the two NDR implementations: the impacket one (wire/impacket_ndr.py,
written from the IDL alone) and the scapy-based codec (wire/ndr.py, written independently).
Every request type, in NDR and (RemoteRead) NDR64, on Hypothesis-generated well-formed calls,
must encode to the same octets.

Referent IDs are the one thing NDR leaves to the encoder (C706 14.3.10: any value, nonzero
for a non-NULL pointer): where ours has a referent ID the other encoding must have a nonzero
one; every other octet, alignment gaps included, must be equal.

Responses likewise: every result type on generated well-formed results.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mqconform.model import calls as c
from mqconform.model.formats import MgmtObject, QueueFormat
from mqconform.wire import impacket_ndr as ours

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

theirs = importlib.import_module("mqconform.wire.ndr")


def _load_strategies():
    """The call strategies of test_client.py (one source for both tests)."""
    spec = importlib.util.spec_from_file_location("_wire_client_strategies",
                                                  HERE.parent / "conformance" / "test_client.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


S = _load_strategies()
KNOWN_VTS = set(ours.PROPVARIANT_UNION.union)


def _well_formed(value) -> bool:
    """No union discriminant outside its IDL cases (those are encodings of malformed
    requests, where the two codecs may rightly differ on whether to refuse them)."""
    if isinstance(value, QueueFormat):
        return 0 <= value.m_qft <= 8
    if isinstance(value, MgmtObject):
        return value.type in (1, 2, 3) and (value.pQueueFormat is None
                                            or _well_formed(value.pQueueFormat))
    if isinstance(value, c.PropVariant):
        return value.vt in KNOWN_VTS and (not isinstance(value.value, list) or all(
            _well_formed(v) for v in value.value))
    if isinstance(value, tuple):
        return all(_well_formed(v) for v in value)
    if isinstance(value, c.Call):
        return all(_well_formed(getattr(value, f)) for f in value.__dataclass_fields__
                   if f not in ("interface", "opnum"))
    return True


def _compare(call: c.Call, ndr64: bool) -> None:
    _compare_octets(lambda: ours.encode_request(call, ndr64), theirs.encode_request(call, ndr64),
                    f"{type(call).__name__} ({'NDR64' if ndr64 else 'NDR'})", call)


def _compare_octets(encode_ours, other: bytes, name: str, call) -> None:
    mine = encode_ours()
    masked = ours.referent_offsets(encode_ours)
    assert len(other) == len(mine), (
        f"{name}: {len(other)} octets from wire/ndr.py, {len(mine)} from impacket\n"
        f"  impacket:    {mine.hex()}\n  wire/ndr.py: {other.hex()}")
    for i, (a, b) in enumerate(zip(mine, other, strict=True)):
        if i not in masked and a != b:
            raise AssertionError(
                f"{name}: octet {i} differs ({a:02x} impacket, {b:02x} wire/ndr.py)\n"
                f"  impacket:    {mine[max(0, i - 16):i + 16].hex()}\n"
                f"  wire/ndr.py: {other[max(0, i - 16):i + 16].hex()}\n  call: {call!r}")
    for start in sorted(i for i in masked if i - 1 not in masked):
        assert any(other[start:start + 4]), f"{name}: NULL where impacket has a referent " \
                                            f"ID at octet {start}"


@pytest.mark.req("MS-MQRR/2.2/R1", "MS-MQMR/2.2/R1")
@pytest.mark.parametrize("call_type, ndr64", S.CASES, ids=S.CASE_IDS)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.filter_too_much])
@given(data=st.data())
def test_both_codecs_encode_every_request_to_the_same_octets(call_type, ndr64, data):
    call = data.draw(S.CALLS[call_type].filter(_well_formed))
    _compare(call, ndr64)


@pytest.mark.parametrize("name, call, ndr64, octets", S.FIXTURES,
                         ids=[f[0] for f in S.FIXTURES])
def test_both_codecs_encode_the_hand_derived_fixtures_alike(name, call, ndr64, octets):
    _compare(call, ndr64)


@pytest.mark.req("MS-MQRR/2.2/R1", "MS-MQMR/2.2/R1")
@pytest.mark.parametrize("call_type, ndr64", S.CASES, ids=S.CASE_IDS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.filter_too_much])
@given(data=st.data())
def test_both_codecs_encode_every_response_to_the_same_octets(call_type, ndr64, data):
    result = data.draw(S.RESULTS[call_type].filter(_well_formed_result))
    call = ours._call_for(call_type, result)
    _compare_octets(lambda: ours.encode_response(result, call_type, ndr64),
                    theirs.encode_response(call, result, ndr64),
                    f"{call_type.__name__} response ({'NDR64' if ndr64 else 'NDR'})", result)


def _well_formed_result(result: c.Result) -> bool:
    return all(_well_formed(getattr(result, f)) for f in result.__dataclass_fields__)


def test_impacket_itself_is_left_as_it_is():
    """Only our output is changed (its fill octets zeroed where wire/ndr.py leaves a gap):
    impacket's NDR engine, which other code in the same process may use, keeps its own fill."""
    from impacket.dcerpc.v5 import ndr as impacket_ndr_engine

    def consts(code):
        for k in code.co_consts:
            yield from consts(k) if hasattr(k, "co_consts") else (k,)

    fills = {k for cls in vars(impacket_ndr_engine).values() if isinstance(cls, type)
             for f in vars(cls).values() if hasattr(f, "__code__") for k in consts(f.__code__)
             if isinstance(k, bytes) and len(k) == 1 and k[0] in ours.IMPACKET_FILL}
    assert fills, "impacket's fill octets were replaced in its code"
    call = c.R_StartReceive(phContext=bytes(range(1, 21)), LookupId=1, hCursor=0, ulAction=0,
                            ulTimeout=0, dwRequestId=1, dwMaxBodySize=0,
                            dwMaxCompoundMessageSize=0)
    assert ours.encode_request(call)[20:24] == bytes(4)  # the gap before LookupId, zeroed
