"""The stateful machines of conformance/stateful.py: a short run on the model and one over TCP
on the reference server conform; a target with a seeded fault (the reference server whose
R_EndReceive deletes the message on RR_NACK, as on RR_ACK) is caught, the failure is shrunk
to a few steps and saved as a script whose replay, by ``python SCRIPT`` and by ``mqconform
replay``, reproduces it over RPC; the suite runs the machines as cases."""

from __future__ import annotations

import dataclasses
import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from mqconform.captures.dissector import TSHARK_OPTIONS
from mqconform.conformance import stateful
from mqconform.conformance.session import Case, CaseFailed, NotApplicable, Suite
from mqconform.conformance.targetfile import parse
from mqconform.model import calls as c
from mqconform.server.main import start

MQCONFORM = [sys.executable, "-m", "mqconform.cli"]


@pytest.fixture
def reference():
    running = start(host="127.0.0.1", port=0, control_port=0, control_unauthenticated=True)
    yield running
    running.stop()


def target_document(running, name: str = "reference-over-tcp") -> dict:
    host, port = running.rpc.address
    chost, cport = running.control.address
    return {"name": name, "endpoint": f"ncacn_ip_tcp:{host}[{port}]",
            "sut_control": {"kind": "reference", "url": f"http://{chost}:{cport}"}}


def target_file(path: Path, document: dict) -> Path:
    path.write_text(json.dumps(document))  # JSON is YAML
    return path


def case_on(spec_document: dict | str) -> tuple[Suite, Case]:
    from mqconform.conformance.targetfile import load

    spec = load(spec_document) if isinstance(spec_document, str) else parse(spec_document)
    suite = Suite(spec)
    return suite, Case(suite, "stateful-test", ("MS-MQRR/3.1.4.9/R8",))


def nack_deletes(running) -> None:
    """The seeded fault: RR_NACK removes the message (MS-MQRR/3.1.4.9/R8 says it stays), in
    the server's own RemoteRead server only (the suite's oracle is another instance)."""
    server = running.handler.remote_read
    original = server.r_endreceive

    def faulty(call: c.R_EndReceive):
        if call.dwAck == c.RR_NACK:
            call = dataclasses.replace(call, dwAck=c.RR_ACK)
        return original(call)

    server.r_endreceive = faulty


def pcap_frames(path: Path) -> int:
    data = path.read_bytes()
    assert struct.unpack_from("<L", data)[0] == 0xA1B2C3D4
    count, at = 0, 24
    while at < len(data):
        at += 16 + struct.unpack_from("<L", data, at + 8)[0]
        count += 1
    return count


@pytest.mark.parametrize("machine", ["remoteread", "qmmgmt"])
def test_a_short_run_on_the_model_conforms(machine):
    suite, mq = case_on({"endpoint": "model"})
    try:
        run = stateful.run_machine(mq, machine, examples=4, steps=30)
    finally:
        suite.close()
    assert run.failure is None and run.steps >= 30 and run.calls > 0
    assert [ch for ch in mq.checks if ch.ok and machine in ch.message]


@pytest.mark.parametrize("machine", ["remoteread", "qmmgmt"])
def test_a_short_run_over_tcp_on_the_reference_server_conforms(reference, machine):
    suite, mq = case_on(target_document(reference))
    try:
        run = stateful.run_machine(mq, machine, examples=3, steps=25)
    finally:
        suite.close()
    assert run.failure is None and run.calls > 0


def test_the_machines_call_every_method_of_both_interfaces_on_the_model():
    suite, mq = case_on({"endpoint": "model"})
    try:
        runs = [stateful.run_machine(mq, machine, examples=8, steps=100)
                for machine in stateful.MACHINES]
    finally:
        suite.close()
    mix: dict[str, int] = {}
    for run in runs:
        assert run.failure is None
        for method, count in run.mix.items():
            mix[method] = mix.get(method, 0) + count
    assert stateful.missing_methods(mix) == [], mix
    # the flows, not only the methods: waits completed, moves made, TIDY on the machine
    assert mix.get("finish") and mix.get("control:send") and mix.get("control:end_transaction")


def test_a_capability_the_target_lacks_leaves_rules_out_or_the_machine_not_applicable():
    document = {"endpoint": "model", "capabilities": {"transactions": False, "qmmgmt": False}}
    suite, mq = case_on(document)
    try:
        with pytest.raises(NotApplicable):
            stateful.run_machine(mq, "qmmgmt", examples=2, steps=10)
        run = stateful.run_machine(mq, "remoteread", examples=3, steps=20)
    finally:
        suite.close()
    assert "start_transactional_receive (needs transactions)" in run.not_run
    assert "enlist_transaction (needs transactions)" in run.not_run


def test_a_faulty_target_fails_shrinks_and_its_script_replays_the_failure(reference, tmp_path):
    nack_deletes(reference)
    suite, mq = case_on(target_document(reference, "faulty"))
    try:
        with pytest.raises(CaseFailed) as failed:
            stateful.run_machine(mq, "remoteread", examples=100, steps=30,
                                 report_dir=tmp_path)
    finally:
        suite.close()
    message = str(failed.value)
    # the minimal sequence: open, receive, end with RR_NACK, read again (a few steps)
    script = next((tmp_path / "stateful").glob("remoteread-*.py"))
    program = stateful.load_program(script)
    # (a receive that waits is three steps: start, the message that arrives, finish)
    calls = [s["call"] for s in program["steps"]
             if not s["call"].startswith(("control:", "start:"))]
    assert len(program["steps"]) <= 8, calls
    assert "R_EndReceive" in calls and calls[-1] in ("R_StartReceive",
                                                     "R_StartTransactionalReceive", "finish")
    end = next(s for s in program["steps"] if s["call"] == "R_EndReceive")
    assert end["args"]["dwAck"] == c.RR_NACK
    assert "MS-MQRR/3.1.4.9" in program["sections"] and "MS-MQRR/3.1.4.9" in message  # trace: ignore
    assert all(s.get("expected") and s.get("observed") for s in program["steps"]
               if not s["call"].startswith(("control:", "start:")))
    assert program["replay"]["reproduced"] is True and "reproduced" in message
    # the case's record is the minimal sequence, and its failed check names the IDs
    steps = program["steps"]
    named = [steps[s["args"]["step"]]["call"][len("start:"):] if s["call"] == "finish"
             else s["call"] for s in steps if not s["call"].startswith(("control:", "start:"))]
    assert [r.call.split("(")[0] for r in mq.record.calls] == named
    assert not mq.checks[-1].ok and mq.checks[-1].ids == tuple(program["ids"])
    # a pcap of just that sequence: handshake, bind, the calls, the close
    pcap = script.with_suffix(".pcap")
    assert pcap_frames(pcap) >= 3 + 2 + 2 * len(calls)
    # the script replays the failure over RPC (a fresh queue, the same steps): exit 1 ...
    target = target_file(tmp_path / "faulty.yaml", target_document(reference, "faulty"))
    out = subprocess.run([sys.executable, str(script), "--target", str(target)],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    # the same step fails again (the read after the RR_NACK: the message is gone, so the
    # target answers MQ_ERROR_IO_TIMEOUT or returns the next message)
    assert f"FAILED at step {len(program['steps']) - 1}:" in out.stdout, out.stdout
    assert pcap_frames(script.with_suffix(".replay.pcap")) > 0
    out = subprocess.run([*MQCONFORM, "replay", str(script), "--target", str(target)],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    # ... and passes on a target without the fault (the model): exit 0
    out = subprocess.run([*MQCONFORM, "replay", str(script), "--target", "model"],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "does not reproduce" in out.stdout


def test_replay_of_a_file_that_is_not_a_program_is_a_usage_error(tmp_path):
    path = tmp_path / "nothing.py"
    path.write_text("x = 1\n")
    out = subprocess.run([*MQCONFORM, "replay", str(path), "--target", "model"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr


def test_the_suite_runs_the_machines_as_cases_with_its_options(tmp_path):
    out = subprocess.run([*MQCONFORM, "run", "--target", "model", "--report-dir",
                          str(tmp_path / "r"), "--", "-k",
                          "test_remoteread_machine or test_qmmgmt_machine",
                          "--mq-stateful-examples", "3", "--mq-stateful-steps", "20",
                          "--mq-stateful-seed", "7"],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    cases = {c["case"].rsplit("::", 1)[1]: c for c in results["cases"]}
    assert set(cases) == {f"test_{m}_machine[{s}]" for m in ("remoteread", "qmmgmt")
                          for s in ("NDR", "NDR64")}
    for name, case in cases.items():
        if name.endswith("[NDR64]"):  # the model in process has no transfer syntax
            assert case["verdict"] == "not-applicable", case
            continue
        assert case["verdict"] == "pass" and "(seed 7)" in case["messages"][0]
        assert "MS-MQRR/3.1.4.7/R49" in case["ids"]


def test_over_rpc_each_machine_runs_in_ndr_and_in_ndr64(tmp_path):
    """Against the reference over RPC each machine runs twice; the NDR64 run's examples bind
    RemoteRead and qmmgmt with the NDR64 transfer syntax (MS-RPCE 2.2.5) on associations of
    their own, and every one of its calls is answered there (tshark reads them from wire.pcap)."""
    out = subprocess.run([*MQCONFORM, "run", "--target", "reference", "--report-dir",
                          str(tmp_path / "r"), "--", "-k",
                          "test_remoteread_machine or test_qmmgmt_machine",
                          "--mq-stateful-examples", "3", "--mq-stateful-steps", "15"],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    cases = {c["case"].rsplit("::", 1)[1]: c for c in results["cases"]}
    assert len(cases) == 4 and all(c["verdict"] == "pass" for c in cases.values()), cases
    for machine in ("remoteread", "qmmgmt"):
        assert f"{machine} in NDR64: 3 examples" in \
            cases[f"test_{machine}_machine[NDR64]"]["messages"][0]
        assert f"{machine} in NDR: 3 examples" in \
            cases[f"test_{machine}_machine[NDR]"]["messages"][0]
    ndr64 = "71710533-beba-4937-8319-b5dbef9ccc36"

    def fields(display_filter, *names):
        shown = subprocess.run(["tshark", *TSHARK_OPTIONS, "-r", str(tmp_path / "r" / "wire.pcap"),
                                "-Y", display_filter, "-T", "fields",
                                *(a for n in names for a in ("-e", n))],
                               capture_output=True, text=True, timeout=300)
        assert shown.returncode == 0, shown.stderr
        return [line.split("\t") for line in shown.stdout.splitlines()]

    # the streams whose bind_ack accepted NDR64, and the methods called on them
    acks = fields(f"dcerpc.pkt_type == 12 && dcerpc.cn_ack_trans_id == {ndr64}", "tcp.stream")
    streams = {row[0] for row in acks}
    assert len(streams) >= 6, streams  # 3 examples per machine, each on its own association
    calls = fields("dcerpc.pkt_type == 0", "tcp.stream", "dcerpc.opnum")
    opnums = {row[1] for row in calls if row[0] in streams}
    assert "0" in opnums and len(opnums) >= 6, opnums  # R_QMMgmtGetInfo and RemoteRead


def test_a_failure_that_does_not_reproduce_is_flaky_with_both_runs_pcaps(tmp_path):
    """A server that misbehaves at random (a seeded fault at rate 0.5): the shrunk sequence
    passes on replay, so the case is marked flaky, with the first run's exchanges and the
    replay's, both readable by tshark's DCE/RPC dissector."""
    import json
    import subprocess
    import sys

    from mqconform.server.faults import Faults
    from mqconform.server.main import start

    server = start(port=0, control_port=0, control_unauthenticated=True,
                   faults=Faults(frozenset({"port-garbage"}), rate=0.5, seed=1))
    try:
        host, port = server.rpc.address
        chost, cport = server.control.address
        target = tmp_path / "t.yaml"
        target.write_text(f'endpoint: "ncacn_ip_tcp:{host}[{port}]"\n'
                          f"sut_control: {{kind: reference, url: 'http://{chost}:{cport}'}}\n")
        out = subprocess.run([sys.executable, "-m", "mqconform.cli", "run", "--target",
                              str(target), "--report-dir", str(tmp_path / "r"), "--",
                              "-k", "test_remoteread_machine and not NDR64"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=600)
    finally:
        server.stop()
    assert out.returncode == 1, out.stdout[-2000:] + out.stderr[-2000:]
    [case] = json.loads((tmp_path / "r" / "results.json").read_text())["cases"]
    assert case["verdict"] == "fail" and case["flaky"], case["messages"]
    assert "flaky: did not reproduce on replay" in case["messages"][-1]
    for key in ("first", "replay"):
        pcap = case["flaky"][key]
        shown = subprocess.run(["tshark", *TSHARK_OPTIONS, "-r", pcap, "-Y", "dcerpc.opnum == 0"],
                               capture_output=True, text=True, timeout=120)
        assert shown.returncode == 0 and "Request" in shown.stdout, (key, shown.stderr)
    script = (tmp_path / "r" / "stateful").glob("*.py")
    assert any("flaky: the first run's exchanges" in p.read_text() for p in script)
