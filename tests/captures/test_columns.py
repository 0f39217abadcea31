"""captures/columns.py: the one definition of the calls table's columns, and the header the
compiled decoder is built from."""

from __future__ import annotations

import dataclasses
import os

from mqconform.captures import columns, decode, fastpath, schema
from mqconform.model import calls as c
from mqconform.model.observer import Observed
from mqconform.wire import dcerpc


def test_the_generated_header_is_up_to_date():
    assert columns.main(["--check"]) == 0, "python -m mqconform.captures.columns"


def test_every_layout_of_a_call_row_is_the_definitions():
    names = columns.NAMES
    assert decode.ROW_COLUMNS == names
    assert tuple(f.name for f in dataclasses.fields(decode.Call))[:len(names)] == names
    assert tuple(schema.schema("calls").names) == names
    assert [str(schema.schema("calls").field(col.name).type) for col in columns.CALLS] == [
        col.type.replace("list<uint32>", "list<item: uint32>").replace(
            "list<uint16>", "list<item: uint16>").replace("float64", "double")
        for col in columns.CALLS]


def test_the_observed_columns_are_what_the_observer_reads():
    read = {columns.OBSERVED_FROM.get(f, f) for f in Observed.__slots__}
    assert read == set(columns.OBSERVED)


def test_the_header_names_what_the_compiled_decoder_needs():
    text = columns.c_header()
    assert f"#define NCOLS {len(columns.CALLS)}\n" in text
    for i, name in enumerate(columns.NAMES):
        assert f"#define COL_{name.upper()} {i}\n" in text
    for t in dcerpc.PType:
        assert f"#define PT_{t.name} {int(t)}\n" in text
    for (interface, opnum), code in fastpath.C_PARSERS.items():
        assert f"#define FAST_{c.CALLS[(interface, opnum)].__name__.upper()} {code}\n" in text
    assert sorted(fastpath.C_PARSERS.values()) == list(range(1, len(fastpath.FAST) + 1))


def test_a_compiled_decoder_is_used_only_if_built_from_these_definitions():
    if decode._cdecode is None:
        assert not decode.compiled()
        return
    assert decode._cdecode.GENERATED == columns.signature()
    assert decode.compiled() is (not os.environ.get("MQCONFORM_PURE_DECODER"))
