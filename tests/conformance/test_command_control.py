"""SUT control by command, as an implementer hooks up their own server: the reference driven
only through command templates (examples/reference_sut.py against its control API) gets the
same verdict in every case as through the reference adapter, and no case is inconclusive."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from pathlib import Path

import yaml

from mqconform.server.main import start

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
OPTIONAL = ("dead_letter_queue", "time_to_be_received", "sent_time", "time_to_reach_queue",
            "received_from", "direct", "soap_envelope", "compound_message", "soap_header",
            "soap_body", "delivery", "transactional", "destination_queue", "admin_queue",
            "response_queue", "positive_journaling", "negative_journaling",
            "connector_type", "acknowledgements", "extension_hex", "authentication_level",
            "sender_sid_hex", "signature_hex", "destination_queues", "privacy_level",
            "encryption_algorithm", "hash_algorithm", "symmetric_key_hex",
            "sender_certificate_hex", "authentication_provider_type",
            "authentication_provider_name", "sender_identifier_type", "sender_queue_manager",
            "admin_queues",
            "response_queues", "multiple_destination_signature_hex", "final_ack_required",
            "connector_queue_manager")


def templates(url: str) -> dict[str, list[str]]:
    """One argument list per action of conformance/sut.py ACTIONS but create_subqueue (the
    reference makes a queue's subqueues with it, through create_queue_from)."""
    # -I -S: the script needs the standard library only, and starts twice as fast without
    # site-packages (the suite runs it some thousand times)
    script = [sys.executable, "-I", "-S", str(EXAMPLES / "reference_sut.py"), url]
    return {
        "create_queue": [*script, "create_queue", "{path}", "{transactional}", "{label}",
                         "{journal}"],
        "create_queue_from": [*script, "create_queue_from", "{spec}"],
        "send_message": [*script, "send_message", "{path}", "body_file={body_file}",
                         "label={label}", "priority={priority}",
                         *(f"{k}={{{k}}}" for k in OPTIONAL)],
        "delete_queue": [*script, "delete_queue", "{path}"],
        "reset": [*script, "reset"],
        "commit_transaction": [*script, "commit_transaction", "{transaction}"],
        "abort_transaction": [*script, "abort_transaction", "{transaction}"],
        "set_cleanup_timer": [*script, "set_cleanup_timer", "{ms}"],
        "open_outgoing": [*script, "open_outgoing", "{format_name}", "{state}", "{spec}"],
        "set_incoming_transactional_transfer_info": [
            *script, "set_incoming_transactional_transfer_info", "{path}", "{entries}"],
        "configure_queue_manager": [*script, "configure_queue_manager", "{settings}"],
        "private_format_name": [*script, "private_format_name", "{path}"],
        "public_format_name": [*script, "public_format_name", "{path}"],
    }


def run(tmp_path: Path, name: str, target: dict, env: dict) -> dict:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(target))
    out = subprocess.run([sys.executable, "-m", "mqconform.cli", "run", "--target", str(path),
                          "--report-dir", str(tmp_path / name)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=1200, env=env)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    return json.loads((tmp_path / name / "results.json").read_text())


def test_command_templates_get_the_reference_adapters_verdicts(tmp_path, monkeypatch):
    import os

    passwords = {role: secrets.token_urlsafe(12) for role in ("administrator", "reader")}
    for role, password in passwords.items():
        monkeypatch.setenv(f"MQC_{role.upper()}_PASSWORD", password)
    (tmp_path / "queues.yaml").write_text(yaml.safe_dump({"security": {
        "authentication": "none",
        "users": [{"name": "mqc-admin", "password_env": "MQC_ADMINISTRATOR_PASSWORD",
                   "administrator": True},
                  {"name": "mqc-reader", "password_env": "MQC_READER_PASSWORD",
                   "administrator": False}]}}))
    # a security section: the control API asks for a token, which reference_sut.py and the
    # target file's sut_control read from MQ_CONTROL_TOKEN
    token = secrets.token_urlsafe(24)
    monkeypatch.setenv("MQ_CONTROL_TOKEN", token)
    server = start(port=0, control_port=0, control_token=token,
                   queues=str(tmp_path / "queues.yaml"))
    try:
        host, port = server.rpc.address
        chost, cport = server.control.address
        url = f"http://{chost}:{cport}"
        common = {"endpoint": f"ncacn_ip_tcp:{host}[{port}]", "identities": {
            "administrator": {"user": "mqc-admin", "password_env": "MQC_ADMINISTRATOR_PASSWORD"},
            "reader": {"user": "mqc-reader", "password_env": "MQC_READER_PASSWORD"}}}
        env = dict(os.environ)
        by_api = run(tmp_path, "api", {**common, "name": "by-api", "sut_control": {
            "kind": "reference", "url": url, "token_env": "MQ_CONTROL_TOKEN"}}, env)
        by_command = run(tmp_path, "command", {**common, "name": "by-command", "sut_control": {
            "kind": "command", "commands": templates(url)}}, env)
    finally:
        server.stop()
    verdicts = {c["case"]: c["verdict"] for c in by_api["cases"]}
    assert by_command["summary"]["inconclusive"] == 0, [
        (c["case"], c["messages"][:1]) for c in by_command["cases"]
        if c["verdict"] == "inconclusive"][:10]
    assert {c["case"]: c["verdict"] for c in by_command["cases"]} == verdicts
    assert by_api["summary"]["pass"] >= 400 and by_api["summary"]["fail"] == 0


def test_a_target_whose_control_cannot_make_the_transfer_state_gets_inconclusive_cases(
        tmp_path):
    """The scenarios that need an outgoing queue's transfer state or a queue's incoming
    transfers (MS-MQMR 3.1.4.1's NEXTHOPS, EOD and CONNECTION_HISTORY rows) are inconclusive,
    never passed, where the open_outgoing template takes no {spec} and there is no
    set_incoming_transactional_transfer_info template; a queue in a State alone is still made
    (PROPID_MGMT_QUEUE_STATE's scenarios pass)."""
    import os

    server = start(port=0, control_port=0, control_unauthenticated=True)
    try:
        host, port = server.rpc.address
        chost, cport = server.control.address
        commands = templates(f"http://{chost}:{cport}")
        commands["open_outgoing"] = commands["open_outgoing"][:-1]  # without {spec}
        del commands["set_incoming_transactional_transfer_info"]
        path = tmp_path / "target.yaml"
        path.write_text(yaml.safe_dump({
            "endpoint": f"ncacn_ip_tcp:{host}[{port}]", "name": "no-transfer-state",
            "sut_control": {"kind": "command", "commands": commands}}))
        out = subprocess.run(
            [sys.executable, "-m", "mqconform.cli", "run", "--target", str(path),
             "--report-dir", str(tmp_path / "out"), "--", "-k",
             "NEXTHOPS or EOD_LAST_ACK or EOD_SOURCE_INFO or outgoingtransferinfo "
             "or CONNECTION_HISTORY or STATE_of_an_outgoing"],
            cwd=tmp_path, capture_output=True, text=True, timeout=600, env=dict(os.environ))
    finally:
        server.stop()
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    verdicts = {c["case"].split("::")[-1]: (c["verdict"], c["messages"][:1])
                for c in results["cases"]}
    transfer = {case: v for case, v in verdicts.items() if "state_of_an_outgoing" not in case}
    states = {case: v for case, v in verdicts.items() if "state_of_an_outgoing" in case}
    assert len(transfer) == 29 and len(states) == 8, (sorted(verdicts), out.stdout[-2000:])
    assert {v for v, _ in transfer.values()} == {"inconclusive"}, transfer
    assert any("takes no {spec}" in m[0] for _, m in transfer.values() if m)
    assert any("set_incoming_transactional_transfer_info" in m[0]
               for _, m in transfer.values() if m)
    assert {v for v, _ in states.values()} == {"pass"}, states
