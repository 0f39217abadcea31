"""The typed calls and results speak the IDL's names, one pair per opnum."""

from __future__ import annotations

import dataclasses
import re

import pytest

from mqconform.model import calls
from mqconform.spec.catalog import DOCUMENTS_DIR


def _idl_methods(path) -> dict[str, list[tuple[str, str]]]:
    """method -> [(direction, parameter name)] parsed from an IDL appendix."""
    text = path.read_text(encoding="utf-8").replace("\u00a0", " ")
    methods = {}
    for m in re.finditer(r"(?:HRESULT|DWORD|void)\s+(R_\w+)\s*\((.*?)\);", text, re.S):
        params = []
        for p in re.finditer(r"\[([^\]]*)\][^,\[]*?(\w+)\s*(?:\[\])?\s*(?=,|$)", m.group(2)):
            params.append((p.group(1), p.group(2)))
        methods[m.group(1)] = params
    return methods


IDL = {**_idl_methods(DOCUMENTS_DIR / "MS-MQRR" / "6.md"),
       **_idl_methods(DOCUMENTS_DIR / "MS-MQMR" / "6.txt")}


def test_every_idl_method_has_a_call_and_a_result():
    names = {c.__name__ for c in calls.CALLS.values()}
    assert names == set(IDL)
    assert set(calls.RESULTS) == set(calls.CALLS.values())


@pytest.mark.parametrize("call", list(calls.CALLS.values()), ids=lambda c: c.__name__)
def test_call_fields_are_the_idl_in_parameters(call):
    ins = [name for direction, name in IDL[call.__name__]
           if "in" in re.split(r"[,\s]+", direction) and name != "hBind"]
    assert [f.name for f in dataclasses.fields(call)] == ins


@pytest.mark.parametrize("call", list(calls.CALLS.values()), ids=lambda c: c.__name__)
def test_result_fields_are_the_idl_out_parameters_after_status(call):
    outs = [name for direction, name in IDL[call.__name__]
            if "out" in re.split(r"[,\s]+", direction)]
    fields = [f.name for f in dataclasses.fields(calls.RESULTS[call])]
    assert fields[:2] == ["status", "raised"]
    assert fields[2:] == outs


def test_opnums_are_unique_per_interface():
    for interface in (calls.REMOTEREAD, calls.QMMGMT):
        opnums = [c.opnum for c in calls.CALLS.values() if c.interface == interface]
        assert len(opnums) == len(set(opnums))
    rr = sorted(c.opnum for c in calls.CALLS.values() if c.interface == calls.REMOTEREAD)
    assert rr == [0] + list(range(2, 16))  # opnum 1 is not used on the wire


def test_void_methods_are_the_ones_the_idl_declares_void():
    void = {m.group(1) for m in re.finditer(
        r"void\s+(R_\w+)\(", (DOCUMENTS_DIR / "MS-MQRR" / "6.md").read_text(encoding="utf-8"))}
    assert {c.__name__ for c in calls.VOID_METHODS} == void


def test_action_constants_match_the_document_table():
    text = (DOCUMENTS_DIR / "MS-MQRR" / "3.1.4.7.md").read_text(encoding="utf-8")
    for name, value in re.findall(r"(MQ_(?:ACTION|LOOKUP)_[A-Z_]+) (0x[0-9A-F]{8})", text):
        assert getattr(calls, name) == int(value, 16), name
