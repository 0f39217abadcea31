"""The suite against a server that requires authentication: ``mqconform run`` with a target
file's credentials (packet integrity) and identities runs the scenarios, including the
access checks, and no password reaches the terminal or any report."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mqconform.conformance.targetfile import load
from mqconform.conformance.targets import ServeProcess

ROOT = Path(__file__).resolve().parents[2]
PASSWORDS = {"MQT_SUITE": "suite-Pw-41x", "MQT_ADMIN": "admin-Pw-52y", "MQT_READER": "rd-Pw-63z"}
SERVER = """
security:
  authentication: required
  level: integrity
  users:
    - {name: suite, password_env: MQT_SUITE, administrator: true}
    - {name: boss, password_env: MQT_ADMIN, administrator: true}
    - {name: reader, password_env: MQT_READER}
"""


def test_the_suite_runs_authenticated_and_keeps_secrets_out_of_reports(tmp_path, monkeypatch):
    for name, value in PASSWORDS.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "queues.yaml").write_text(SERVER)
    server = ServeProcess(args=("--queues", str(tmp_path / "queues.yaml")), env=PASSWORDS)
    try:
        target = tmp_path / "target.yaml"
        target.write_text(f"""
endpoint: {server.endpoint}
credentials: {{user: suite, password_env: MQT_SUITE, level: integrity}}
identities:
  administrator: {{user: boss, password_env: MQT_ADMIN}}
  reader: {{user: reader, password_env: MQT_READER}}
sut_control: {{kind: reference, url: {server.control_url}, token_env: MQT_CONTROL}}
""")
        monkeypatch.setenv("MQT_CONTROL", server.control_token)
        token = server.control_token
        spec = load(str(target))
        assert "suite-Pw" not in repr(spec)
        proc = subprocess.run(
            [sys.executable, "-m", "mqconform", "run", "--target", str(target),
             "--report-dir", str(tmp_path / "out"), "--select", "MS-MQRR/2.1",  # trace: ignore
             "--select", "MS-MQRR/3.1.4.2", "--select", "MS-MQMR/3/",  # trace: ignore
             "--select", "MS-MQMR/2.1"],  # trace: ignore (a qmmgmt binding of its own)
            cwd=ROOT, capture_output=True, text=True, timeout=600)
    finally:
        server.close()
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    verdicts = {c["case"]: c["verdict"] for c in results["cases"]}
    assert verdicts and all(v in ("pass", "not-applicable") for v in verdicts.values())
    assert any("identity" in name and v == "pass" for name, v in verdicts.items())
    everything = proc.stdout + proc.stderr + "".join(
        p.read_text(errors="replace") for p in (tmp_path / "out").rglob("*")
        if p.is_file() and p.suffix in (".json", ".xml", ".html"))
    for secret in (*PASSWORDS.values(), token):
        assert secret not in everything


def tshark(pcap: Path, *args: str) -> str:
    return subprocess.run(["tshark", "-r", str(pcap), *args], capture_output=True, text=True,
                          timeout=120, check=True).stdout


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
def test_redact_auth_zeroes_the_ntlmssp_exchange_in_wire_pcap(tmp_path, monkeypatch):
    """wire.pcap of an authenticated run holds the NTLMv2 exchange (tshark reads the
    response); with --redact-auth it holds none of it: no NTLMSSP message, none of the
    response's octets, and the same binds and rpc_auth_3 PDUs still dissect as DCE/RPC."""
    for name, value in PASSWORDS.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "queues.yaml").write_text(SERVER)
    server = ServeProcess(args=("--queues", str(tmp_path / "queues.yaml")), env=PASSWORDS)
    monkeypatch.setenv("MQT_CONTROL", server.control_token)
    try:
        target = tmp_path / "target.yaml"
        target.write_text(f"""
endpoint: {server.endpoint}
credentials: {{user: suite, password_env: MQT_SUITE, level: integrity}}
sut_control: {{kind: reference, url: {server.control_url}, token_env: MQT_CONTROL}}
""")
        runs = {}
        for name, extra in (("plain", []), ("redacted", ["--redact-auth"])):
            proc = subprocess.run(
                [sys.executable, "-m", "mqconform", "run", "--target", str(target),
                 "--report-dir", str(tmp_path / name), "--select",
                 "MS-MQRR/3.1.4.1", *extra],  # trace: ignore
                cwd=ROOT, capture_output=True, text=True, timeout=600)
            assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
            runs[name] = tmp_path / name / "wire.pcap"
    finally:
        server.close()
    responses = tshark(runs["plain"], "-Y", "ntlmssp.ntlmv2_response", "-T", "fields",
                       "-e", "ntlmssp.ntlmv2_response").split()
    assert responses, "the plain run's wire.pcap holds no NTLMv2 response"
    # tshark still names the provider (the sec_trailer's auth_type), but finds no message
    assert tshark(runs["redacted"], "-Y", "ntlmssp.ntlmv2_response || ntlmssp.messagetype != 0 "
                  "|| ntlmssp.ntlmserverchallenge || ntlmssp.auth.username").strip() == ""
    verbose = tshark(runs["redacted"], "-Y", "ntlmssp", "-V")
    assert "Unrecognized NTLMSSP Message" in verbose
    assert "NTLMv2 Response" not in verbose and "NTLM Server Challenge" not in verbose
    data = runs["redacted"].read_bytes()
    assert b"NTLMSSP\0" not in data
    for response in responses:  # the NTProofStr and the client challenge are gone
        proof = bytes.fromhex(response.replace(":", ""))[:16]
        assert proof not in data
    kinds = "dcerpc.pkt_type == 11 || dcerpc.pkt_type == 12 || dcerpc.pkt_type == 16"
    assert len(tshark(runs["redacted"], "-Y", kinds).splitlines()) == \
        len(tshark(runs["plain"], "-Y", kinds).splitlines()) > 0
    results = json.loads((tmp_path / "redacted" / "results.json").read_text())
    assert results["wire"]["auth_redacted"] is True
