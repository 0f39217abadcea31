"""wire/ndr.py fixed_layout: for every method whose stub has one size, the offsets the capture
fast paths are generated from are where the encoder writes each parameter, in NDR and NDR64."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mqconform.model import calls as c
from mqconform.wire import ndr

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wire_strategies import CALLS, SETTINGS, result_for  # noqa: E402

FORMATS = {"u8": "<B", "u16": "<H", "u32": "<I", "i32": "<i", "u64": "<Q"}
CASES = [pytest.param(key, ndr64, response, id=f"{c.CALLS[key].__name__}-"
                      f"{'ndr64' if ndr64 else 'ndr'}-{'out' if response else 'in'}")
         for key in sorted(ndr.METHODS) for ndr64 in (False, True)
         if not ndr64 or ndr.NDR64 in ndr.INTERFACES[key[0]][2] for response in (False, True)]


def _value(field, stub):
    raw = stub[field.offset:field.offset + field.size]
    if field.kind == "ctx":
        return None if raw == bytes(20) else raw
    if field.kind == "octets":
        return raw
    return struct.unpack(FORMATS[field.kind], raw)[0]


@pytest.mark.parametrize("key, ndr64, response", CASES)
@SETTINGS
@given(data=st.data())
def test_each_parameter_is_where_the_encoder_writes_it(key, ndr64, response, data):
    layout = ndr.fixed_layout(*key, ndr64, response=response)
    call = data.draw(CALLS[c.CALLS[key]])
    if not response:
        stub, obj = ndr.encode_request(call, ndr64), call
    else:
        obj = data.draw(result_for(call))
        stub = ndr.encode_response(call, obj, ndr64)
    if layout is None:  # its size follows the values: nothing to check here
        return
    fields, size = layout
    assert len(stub) == size
    for field in fields:
        assert _value(field, stub) == getattr(obj, field.name), field


def test_the_methods_with_fixed_requests_are_the_ones_expected():
    fixed = {c.CALLS[key].__name__ for key in ndr.METHODS if ndr.fixed_layout(*key, False)}
    assert fixed == {"R_GetServerPort", "R_CloseQueue", "R_CreateCursor", "R_CloseCursor",
                     "R_PurgeQueue", "R_StartReceive", "R_CancelReceive", "R_EndReceive",
                     "R_MoveMessage", "R_StartTransactionalReceive",
                     "R_SetUserAcknowledgementClass", "R_EndTransactionalReceive"}
