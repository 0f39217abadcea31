"""examples/: every file a user copies loads as what it claims to be, and the ones that point
at something this machine runs (the reference, a bare endpoint, an authenticated endpoint)
run the suite and pass. The Windows target's SUT control is run too, with a stand-in for
pwsh that records the arguments it is given: a queue path with ``$`` and ``\\`` and a label
with quotes must reach the script as one argument each, unchanged."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mqconform import examples
from mqconform.conformance.sut import ACTIONS, CommandControl
from mqconform.conformance.targetfile import load
from mqconform.conformance.targets import ServeProcess
from mqconform.server.provision import provision

EXAMPLES = Path(examples.__file__).resolve().parent
PASSWORDS = {"MQ_ALICE": "al-Pw-7q", "MQ_ADMIN": "ad-Pw-8r", "MQ_BOB": "bo-Pw-9s",
             "MQ_PASSWORD": "x", "MQ_ADMIN_PASSWORD": "y", "MQ_READER_PASSWORD": "z",
             "MQ_CONTROL_TOKEN": "an-example-control-token"}
TARGETS = ("reference.yaml", "bare-endpoint.yaml", "authenticated.yaml", "windows.yaml")
PROVISIONING = ("queues.yaml", "queues-secure.yaml")


def _run(target: Path, out: Path, *select: str,
         env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    argv = [sys.executable, "-m", "mqconform", "run", "--target", str(target),
            "--report-dir", str(out)]
    for prefix in select:
        argv += ["--select", prefix]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600,
                          cwd=out.parent, env={**os.environ, **PASSWORDS, **(env or {})})
    results = out / "results.json"
    return proc, json.loads(results.read_text()) if results.exists() else {}


def test_the_examples_folder_holds_what_its_readme_lists():
    listed = set(re.findall(r"`([\w.-]+\.(?:yaml|ps1))`", (EXAMPLES / "README.md").read_text()))
    present = {p.name for p in EXAMPLES.iterdir() if p.suffix in (".yaml", ".ps1")}
    assert listed == present


@pytest.mark.parametrize("name", TARGETS)
def test_every_target_file_loads(name, monkeypatch):
    for k, v in PASSWORDS.items():
        monkeypatch.setenv(k, v)
    spec = load(str(EXAMPLES / name))
    assert spec.name and spec.endpoint
    assert set(spec.sut_commands) <= set(ACTIONS)


@pytest.mark.parametrize("name", PROVISIONING)
def test_every_provisioning_file_builds_a_queue_manager(name, monkeypatch):
    for k, v in PASSWORDS.items():
        monkeypatch.setenv(k, v)
    done = provision((EXAMPLES / name).read_text(encoding="utf-8"), name)
    queues = [q.pathname for q in done.env.local_queue_manager.queue_collection if q.pathname]
    assert any(q.lower().endswith("private$\\orders") for q in queues)


def test_the_reference_example_runs_the_suite(tmp_path):
    proc, results = _run(EXAMPLES / "reference.yaml", tmp_path / "out",
                         "MS-MQRR/3.1.4.8", "MS-MQMR/3.1.4.2")  # trace: ignore
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    verdicts = [c["verdict"] for c in results["cases"]]
    assert verdicts.count("pass") >= 5 and "fail" not in verdicts


def _copy_with(source: Path, dest: Path, **replace: str) -> Path:
    text = source.read_text(encoding="utf-8")
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    dest.write_text(text, encoding="utf-8")
    return dest


def test_the_bare_endpoint_example_runs_against_a_served_queue_manager(tmp_path):
    server = ServeProcess(args=("--queues", str(EXAMPLES / "queues.yaml")))
    try:
        target = _copy_with(EXAMPLES / "bare-endpoint.yaml", tmp_path / "bare.yaml",
                            **{"127.0.0.1[2103]": server.endpoint.split(":", 1)[1]})
        proc, results = _run(target, tmp_path / "out", "MS-MQRR/3.1.4.1")  # trace: ignore
    finally:
        server.close()
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    verdicts = [c["verdict"] for c in results["cases"]]
    assert "pass" in verdicts and "fail" not in verdicts


def test_the_authenticated_example_runs_against_the_secure_provisioning(tmp_path):
    server = ServeProcess(args=("--queues", str(EXAMPLES / "queues-secure.yaml")),
                          env=PASSWORDS)
    try:
        target = _copy_with(EXAMPLES / "authenticated.yaml", tmp_path / "auth.yaml",
                            **{"127.0.0.1[2103]": server.endpoint.split(":", 1)[1],
                               "http://127.0.0.1:8080": server.control_url})
        proc, results = _run(target, tmp_path / "out", "MS-MQRR/2.1",  # trace: ignore
                             "MS-MQRR/3.1.4.2",  # trace: ignore
                             env={"MQ_CONTROL_TOKEN": server.control_token})
    finally:
        server.close()
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    verdicts = {c["case"]: c["verdict"] for c in results["cases"]}
    assert any("identity" in case and v == "pass" for case, v in verdicts.items())
    assert "fail" not in verdicts.values()
    everything = proc.stdout + proc.stderr + (tmp_path / "out" / "results.json").read_text()
    assert not any(secret in everything for secret in PASSWORDS.values() if len(secret) > 2)


def test_the_windows_commands_pass_each_value_as_one_argument_unquoted(tmp_path):
    """The Windows example's commands are argument lists: no shell, no quoting. A stand-in
    `pwsh` records its arguments."""
    record = tmp_path / "argv.jsonl"
    stand_in = tmp_path / "bin" / "pwsh"
    stand_in.parent.mkdir()
    stand_in.write_text(f"#!{sys.executable}\nimport json, sys\n"
                        f"open({str(record)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n")
    stand_in.chmod(0o755)
    data = yaml.safe_load((EXAMPLES / "windows.yaml").read_text(encoding="utf-8"))
    commands = data["sut_control"]["commands"]
    assert all(isinstance(c, list) for c in commands.values())
    old_path = os.environ["PATH"]
    os.environ["PATH"] = f"{stand_in.parent}{os.pathsep}{old_path}"
    try:
        control = CommandControl(commands)
        path = "private$\\mqc-1-2"
        control.create_queue(path, transactional=True, label="it's \"quoted\" $x")
        control.create_queue(path + "-j", journal=True)
        control.send_message(path, b"hello", label="a b", priority=5)
        control.delete_queue(path)
        control.reset()
    finally:
        os.environ["PATH"] = old_path
    calls = [json.loads(line) for line in record.read_text().splitlines()]
    script = ["-NoProfile", "-File", "windows-sut.ps1"]
    assert calls == [
        script + ["create_queue", path, "true", "it's \"quoted\" $x", "false"],
        script + ["create_queue", path + "-j", "false", "", "true"],
        script + ["send_message", path, b"hello".hex(), "a b", "5"],
        script + ["delete_queue", path],
        script + ["reset"],
    ]
    ps1 = (EXAMPLES / "windows-sut.ps1").read_text(encoding="utf-8")
    for action in ("create_queue", "send_message", "delete_queue", "reset"):
        assert f"'{action}'" in ps1


def test_the_reference_sut_script_provisions_the_transfer_state(tmp_path):
    """examples/reference_sut.py carries open_outgoing's {spec} and the incoming transfers'
    {entries} to the control API as they are: the ADM holds what the suite asked for."""
    from mqconform.conformance.sut import outgoing_spec
    from mqconform.server.main import start

    running = start(host="127.0.0.1", port=0, control_port=0, control_unauthenticated=True)
    try:
        host, port = running.control.address
        url = f"http://{host}:{port}"
        remote = "DIRECT=TCP:192.0.2.20\\private$\\orders"
        spec = outgoing_spec(remote, "Waiting", next_hops=["10.1.2.3"],
                             outgoing_transfer_info={"eod_no_ack_count": 2},
                             connection_history=[{"status": "ConnectionRefused"}])
        control = CommandControl({
            "create_queue": [sys.executable, str(EXAMPLES / "reference_sut.py"), url,
                             "create_queue", "{path}", "{transactional}"],
            "open_outgoing": [sys.executable, str(EXAMPLES / "reference_sut.py"), url,
                              "open_outgoing", "{format_name}", "{state}", "{spec}"],
            "set_incoming_transactional_transfer_info": [
                sys.executable, str(EXAMPLES / "reference_sut.py"), url,
                "set_incoming_transactional_transfer_info", "{path}", "{entries}"]})
        control.open_outgoing(remote, "Waiting", **{k: spec[k] for k in (
            "next_hops", "outgoing_transfer_info", "connection_history")})
        control.create_queue("private$\\in", transactional=True)
        control.set_incoming_transactional_transfer_info(
            "private$\\in", [{"sequence_number": 5, "reject_count": 1}])
        qm = running.handler.env.local_queue_manager
        [queue] = [q for q in qm.queue_collection
                   if getattr(q, "destination_format_name", "") == remote]
        assert (queue.state.name, queue.next_hops,
                queue.outgoing_transfer_info_reference.eod_no_ack_count,
                [e.status.name for e in queue.connection_history]) == (
            "Waiting", ["10.1.2.3"], 2, ["ConnectionRefused"])
        [local] = [q for q in qm.queue_collection if q.pathname == "MQREF\\private$\\in"]
        assert [(e.sequence_number, e.reject_count)
                for e in local.incoming_transactional_transfer_info_collection] == [(5, 1)]
    finally:
        running.stop()
