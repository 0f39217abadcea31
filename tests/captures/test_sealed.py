"""Calls sent at packet privacy (MS-RPCE 2.2.1.1.8: the stubs are encrypted with the NTLM
session's sealing key) in a capture: the decoder (Python and compiled), the Wireshark script
and the trace validator show them as sealed -- method known, stubs not decoded -- and never as
malformed stubs; a run whose calls are all sealed checked nothing and says so, never green."""

from __future__ import annotations

import json
import operator
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from mqconform.captures import columns, decode
from mqconform.conformance.targets import ServeProcess
from mqconform.wire import association as a
from mqconform.wire import dcerpc as d

ROOT = Path(__file__).resolve().parents[2]
TSHARK = shutil.which("tshark")
SCRIPT = ROOT / "captures" / "wireshark" / "mqconform.lua"
PASSWORDS = {"MQT_SUITE": "suite-Pw-41x", "MQT_ADMIN": "admin-Pw-52y", "MQT_READER": "rd-Pw-63z"}


def _server_yaml(level: str) -> str:
    return f"""
security:
  authentication: required
  level: {level}
  users:
    - {{name: suite, password_env: MQT_SUITE, administrator: true}}
    - {{name: boss, password_env: MQT_ADMIN, administrator: true}}
    - {{name: reader, password_env: MQT_READER}}
"""


def _run(out: Path, level: str) -> Path:
    """The suite at ``level`` against a reference that requires it; its wire.pcap."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "queues.yaml").write_text(_server_yaml(level))
    server = ServeProcess(args=("--queues", str(out / "queues.yaml")), env=PASSWORDS)
    try:
        target = out / "target.yaml"
        target.write_text(f"""
endpoint: {server.endpoint}
credentials: {{user: suite, password_env: MQT_SUITE, level: {level}}}
identities:
  administrator: {{user: boss, password_env: MQT_ADMIN}}
  reader: {{user: reader, password_env: MQT_READER}}
sut_control: {{kind: reference, url: {server.control_url}, token_env: MQT_CONTROL}}
""")
        proc = subprocess.run(
            [sys.executable, "-m", "mqconform", "run", "--target", str(target),
             "--report-dir", str(out / "report"), "--select", "MS-MQRR/3.1.4.7",  # trace: ignore
             "--select", "MS-MQMR/3.1.4.1"],  # trace: ignore
            cwd=ROOT, capture_output=True, text=True, timeout=600,
            env={**os.environ, **PASSWORDS, "MQT_CONTROL": server.control_token})
    finally:
        server.close()
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return out / "report" / "wire.pcap"


@pytest.fixture(scope="module")
def sealed_pcap(tmp_path_factory) -> Path:
    return _run(tmp_path_factory.mktemp("privacy"), "privacy")


@pytest.fixture(scope="module")
def signed_pcap(tmp_path_factory) -> Path:
    return _run(tmp_path_factory.mktemp("integrity"), "integrity")


def _calls(pcap: Path) -> tuple[list, list]:
    calls, errors = [], []
    for item in decode.Decoder(str(pcap)).run(open(pcap, "rb")):
        if type(item) is decode.DecodeError:
            errors.append(item)
        elif type(item) is not decode.FileSummary:
            calls.append(item)
    return calls, errors


def test_every_call_at_packet_privacy_is_sealed_and_none_is_malformed(sealed_pcap):
    calls, errors = _calls(sealed_pcap)
    assert len(calls) > 200
    assert not errors, errors[:5]
    assert {c.decode_error for c in calls} == {columns.SEALED}
    assert {c.status for c in calls} == {None}
    # the method is still known: the bind in clear names the interface, the header the opnum
    assert {c.method for c in calls} >= {"R_OpenQueue", "R_StartReceive", "R_QMMgmtGetInfo"}


def test_calls_at_packet_integrity_are_decoded_not_sealed(signed_pcap):
    calls, errors = _calls(signed_pcap)
    assert len(calls) > 200  # (the suite's deliberately malformed requests are stub errors)
    assert columns.SEALED not in {c.decode_error for c in calls}
    assert sum(c.status is not None for c in calls) > 200


@pytest.mark.skipif(not decode.compiled(), reason="the compiled decoder is not built")
def test_the_compiled_decoder_reads_sealed_calls_as_the_python_one(sealed_pcap):
    rows, errors = [], []
    for item in decode.scan(str(sealed_pcap), str(sealed_pcap)):
        if type(item) is list:
            rows += zip(*item, strict=True)
        elif type(item) is decode.DecodeError:
            errors.append(item)
    python, python_errors = _calls(sealed_pcap)
    row = operator.attrgetter(*decode.ROW_COLUMNS)
    assert rows == [row(c) for c in python]
    assert errors == python_errors == []


def _request(call_id: int, flags: int, stub: bytes, level: int) -> bytes:
    """A request PDU with an NTLM-shaped auth verifier at ``level`` (MS-RPCE 2.2.2.11)."""
    pad = -len(stub) % 4
    body = struct.pack("<IHH", len(stub), 0, 2) + stub + b"\0" * pad
    trailer = struct.pack("<BBBBI", 10, level, pad, 0, 0) + b"\x01" + b"\0" * 15
    frag = 16 + len(body) + len(trailer)
    header = struct.pack("<BBBB4sHHI", 5, 0, d.PType.REQUEST, flags, b"\x10\0\0\0", frag, 16,
                         call_id)
    return header + body + trailer


@pytest.mark.parametrize("level,sealed", [(d.AUTHN_LEVEL_PKT_PRIVACY, True), (5, False)])
def test_a_fragmented_request_is_sealed_when_any_fragment_is_at_packet_privacy(level, sealed):
    first = _request(7, d.PFC_FIRST_FRAG, b"A" * 40, 5)
    last = _request(7, d.PFC_LAST_FRAG, b"B" * 40, level)
    obs = a.Association()
    events = list(obs.feed(first)) + list(obs.feed(last))
    assert not [e for e in events if isinstance(e, a.Error)], events
    request = obs.awaiting[7]
    assert request.sealed is sealed
    assert request.stub == b"A" * 40 + b"B" * 40


@pytest.mark.skipif(TSHARK is None, reason="tshark is not installed")
def test_wireshark_shows_sealed_stubs_as_sealed_never_malformed(sealed_pcap):
    done = subprocess.run([TSHARK, "-n", "-X", f"lua_script:{SCRIPT}", "-r", str(sealed_pcap),
                           "-T", "fields", "-E", "separator=|", "-e", "mqrr.method",
                           "-e", "mqmr.method", "-e", "mqrr.sealed", "-e", "mqmr.sealed",
                           "-e", "dcerpc.pkt_type", "-e", "dcerpc.cn_flags",
                           "-e", "_ws.expert.message"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line.split("|") for line in done.stdout.splitlines()]
    assert not [f for f in lines if "Malformed stub" in f[6] or "Lua" in f[6]]
    sealed = [f for f in lines if "Sealed stub" in f[6]]
    assert len(sealed) > 400 and all("1" in f[2] + f[3] for f in sealed)
    # every other frame of these interfaces is a fault or a fragment before the last
    other = [f for f in lines if (f[0] or f[1]) and "Sealed stub" not in f[6]]
    assert all("3" in f[4].split(",") or not int(f[5].split(",")[-1], 16) & d.PFC_LAST_FRAG
               for f in other), other[:3]


@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java 17")
def test_validating_only_sealed_calls_fails_and_says_why(sealed_pcap, tmp_path):
    out = tmp_path / "v"
    done = subprocess.run([sys.executable, "-m", "mqconform.cli", "captures", "validate",
                           str(sealed_pcap), "--out", str(out), "--master", "local[1]"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode != 0, done.stdout[-2000:]
    report = json.loads((out / "report.json").read_text())
    assert report["verdict"] == "failed"
    assert report["totals"]["sealed"] == report["totals"]["seen"] > 200
    assert report["totals"]["checked"] == 0 and report["totals"]["errors"] == 0
    assert "sealed" in report["failed"] and "sealed" in done.stdout + done.stderr
