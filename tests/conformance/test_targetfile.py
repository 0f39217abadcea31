"""Target files and SUT control: one-line errors naming the key; `mqconform run` exit 2."""

from __future__ import annotations

import pytest

from mqconform.cli import main
from mqconform.conformance.sut import CommandControl, Inconclusive
from mqconform.conformance.targetfile import TargetFileError, load, parse


@pytest.mark.parametrize("doc,key", [
    ({"endpoint": "tcp://x"}, "endpoint"),
    ({}, "endpoint"),
    ({"endpoint": "model", "colour": 1}, "colour"),
    ({"endpoint": "model", "ndr64": "yes"}, "ndr64"),
    ({"endpoint": "model", "capabilities": {"move": 1}}, "capabilities.move"),
    ({"endpoint": "model", "sut_control": {"kind": "ssh"}}, "sut_control.kind"),
    ({"endpoint": "model", "sut_control": {"kind": "command"}}, "sut_control.commands"),
    ({"endpoint": "model", "sut_control": {"kind": "command", "commands": {"fly": "x"}}},
     "sut_control.commands.fly"),
    ({"endpoint": "ncacn_ip_tcp:h[1]", "sut_control": "reference"}, "sut_control.url"),
    ({"endpoint": "model",
      "expectations": [{"id": "MS-MQRR/9.9/R1", "reason": "x"}]},  # trace: ignore
     "expectations[0].id"),
    ({"endpoint": "model", "expectations": [{"id": "MS-MQRR/3.1.4.3/R15"}]},
     "expectations[0].reason"),
])
def test_a_bad_target_file_names_the_key(doc, key):
    with pytest.raises(TargetFileError) as err:
        parse(doc, "t.yaml")
    message = str(err.value)
    assert f"t.yaml: {key}" in message and "\n" not in message


def test_a_good_target_file_loads(tmp_path):
    p = tmp_path / "t.yaml"
    p.write_text("endpoint: 'ncacn_ip_tcp:10.0.0.5[2103]'\nndr64: true\n"
                 "capabilities: {transactions: false}\n"
                 "sut_control: {kind: command, commands: {create_queue: 'true {path}'}}\n"
                 "expectations:\n  - {id: MS-MQRR/3.1.4.6/R14, reason: differs}\n")
    spec = load(str(p))
    assert spec.ndr64 and not spec.capabilities["transactions"]
    assert spec.capabilities["move"] and spec.sut_kind == "command"
    assert spec.expectations == {"MS-MQRR/3.1.4.6/R14": "differs"}


@pytest.mark.parametrize("text,needle", [
    ("endpoint: [", "not valid YAML"),
    ("endpoint: model\nexpectations: [{id: NOPE/1, reason: r}]", "unknown requirement ID"),
])
def test_mqconform_run_rejects_a_bad_target_file_with_exit_2(tmp_path, capsys, text, needle):
    p = tmp_path / "t.yaml"
    p.write_text(text)
    assert main(["run", "--target", str(p)]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_mqconform_run_rejects_an_unknown_requirement_and_an_unreachable_endpoint(capsys):
    assert main(["run", "--target", "model", "--select", "MS-MQRR/99"]) == 2  # trace: ignore
    assert "unknown requirement ID" in capsys.readouterr().err
    assert main(["run", "--target", "ncacn_ip_tcp:127.0.0.1[1]"]) == 2
    err = capsys.readouterr().err
    assert "unreachable" in err and err.count("\n") == 1


def test_command_control_quotes_values_for_the_shell(tmp_path):
    out = tmp_path / "made"
    control = CommandControl({"create_queue": f"printf %s {{path}} > {out}"})
    hostile = "private$\\q; touch " + str(tmp_path / "pwned")
    control.create_queue(hostile)
    assert out.read_text() == hostile
    assert not (tmp_path / "pwned").exists()


def test_command_control_failure_or_missing_template_is_inconclusive():
    control = CommandControl({"create_queue": "echo no such queue >&2; exit 3"})
    with pytest.raises(Inconclusive, match="exited 3: no such queue"):
        control.create_queue("private$\\q")
    with pytest.raises(Inconclusive, match="no template for send_message"):
        control.send_message("private$\\q", b"x")


def test_command_control_sends_only_the_message_keys_its_template_takes(tmp_path):
    out = tmp_path / "sent"
    control = CommandControl({"send_message": f"printf '%s|%s' {{body}} {{received_from}} "
                                              f"> {out}"})
    control.send_message("private$\\q", b"x", received_from="192.0.2.1")
    assert out.read_text() == "x|192.0.2.1"
    with pytest.raises(Inconclusive, match=r"takes no \{compound_message\}, \{soap_envelope\}"):
        control.send_message("private$\\q", b"x", soap_envelope="<e/>",
                             compound_message="POST")


@pytest.mark.parametrize("credentials,key", [
    ("alice", "credentials"),
    ({"password": "x-S3cret"}, "credentials.user"),
    ({"user": "alice"}, "give exactly one of password"),
    ({"user": "alice", "password": "x-S3cret", "nt_hash": "00" * 16}, "give exactly one of"),
    ({"user": "alice", "nt_hash": "xyz"}, "credentials.nt_hash"),
    ({"user": "alice", "password_env": "NO_SUCH_VARIABLE_42"}, "credentials.password_env"),
    ({"user": "alice", "password": "x-S3cret", "level": "high"}, "credentials.level"),
    ({"user": "alice", "password": "x-S3cret", "colour": 1}, "credentials"),
])
def test_bad_credentials_name_the_key_and_never_the_password(credentials, key):
    with pytest.raises(TargetFileError) as err:
        parse({"endpoint": "model", "credentials": credentials})
    assert key in str(err.value) and "x-S3cret" not in str(err.value)


def test_identities_take_the_known_roles_only(monkeypatch):
    monkeypatch.setenv("MQ_T_PW", "pw")
    spec = parse({"endpoint": "model", "identities": {
        "administrator": {"user": "a", "password_env": "MQ_T_PW"},
        "reader": {"user": "r", "nt_hash": "11" * 16, "level": "privacy"}}})
    assert spec.identities["administrator"].password == "pw"
    assert spec.identities["reader"].level == 6 and "pw" not in repr(spec.identities)
    with pytest.raises(TargetFileError, match="identities.owner"):
        parse({"endpoint": "model", "identities": {"owner": {"user": "o", "password": "p"}}})


def test_a_password_written_into_password_env_is_not_shown_in_the_error(tmp_path):
    """password_env names a variable; a password put there by mistake stays off the
    terminal, even one shaped like a variable's name: the value is never shown."""
    from mqconform.conformance.targetfile import TargetFileError, load

    for value, shown in (("hunter2-Pa55", False), ("s3cret pass", False),
                         ("HUNTER2_PASSWORD", False), ("NO_SUCH_VARIABLE_42", False)):
        path = tmp_path / "t.yaml"
        path.write_text("endpoint: ncacn_ip_tcp:127.0.0.1[2103]\n"
                        f"credentials: {{user: alice, password_env: \"{value}\"}}\n")
        with pytest.raises(TargetFileError) as raised:
            load(str(path))
        assert (value in str(raised.value)) is shown, str(raised.value)
        assert "password_env" in str(raised.value) and "\n" not in str(raised.value)



def test_command_control_gives_optional_keys_a_message_does_not_set_as_empty(tmp_path):
    """A template may use every optional message key; a message that does not set one reads
    it as an empty text (it used to raise KeyError: every send inconclusive)."""
    out = tmp_path / "sent"
    control = CommandControl({"send_message": f"printf '%s|%s|%s' {{body}} {{sent_time}} "
                                              f"{{received_from}} > {out}"})
    control.send_message("private$\\q", b"plain")
    assert out.read_text() == "plain||"
    control.send_message("private$\\q", b"x", sent_time=1767225600)
    assert out.read_text() == "x|1767225600|"


def test_command_control_refuses_a_message_its_template_cannot_express(tmp_path):
    """A dead-letter queue, label or priority the message sets and the template ignores would
    send another message than the case relies on: inconclusive, and nothing is sent."""
    out = tmp_path / "sent"
    control = CommandControl({"send_message": f"printf %s {{body}} > {out}"})
    for kw, key in (({"dead_letter_queue": "DIRECT=OS:.\\private$\\dlq"}, "dead_letter_queue"),
                    ({"label": "greeting"}, "label"), ({"priority": 7}, "priority")):
        with pytest.raises(Inconclusive, match=r"takes no \{" + key + r"\}"):
            control.send_message("private$\\q", b"x", **kw)
    assert not out.exists()
    control.send_message("private$\\q", b"x", priority=3, label="")  # the defaults: sent
    assert out.read_text() == "x"


def test_command_control_cleanup_timer_returns_the_previous_duration_or_resets(tmp_path):
    told = tmp_path / "told"
    control = CommandControl({"set_cleanup_timer": f"echo {{ms}} >> {told}; echo 300000"})
    assert control.set_cleanup_timer(2000) == 300000
    reset = tmp_path / "reset"
    silent = CommandControl({"set_cleanup_timer": "true", "reset": f"touch {reset}"})
    with pytest.raises(Inconclusive, match="printed no previous duration"):
        silent.set_cleanup_timer(2000)
    assert reset.exists()  # the target is set back before the case gives up


def test_sut_control_token_env_reads_the_token_and_never_shows_a_value(monkeypatch):
    """sut_control.token_env names the variable holding the control API's token; a token
    written there by mistake is not shown, nor is the token in the spec's repr."""
    monkeypatch.setenv("MQ_T_CONTROL", "a-control-token-of-some-length")
    spec = parse({"endpoint": "ncacn_ip_tcp:127.0.0.1[2103]", "sut_control": {
        "kind": "reference", "url": "http://127.0.0.1:8080", "token_env": "MQ_T_CONTROL"}})
    assert spec.sut_token == "a-control-token-of-some-length"
    assert "a-control-token" not in repr(spec)
    for value in ("pasted-token-Value-1234", "MQ_T_NOT_SET"):
        with pytest.raises(TargetFileError) as err:
            parse({"endpoint": "ncacn_ip_tcp:127.0.0.1[2103]", "sut_control": {
                "kind": "reference", "url": "http://127.0.0.1:8080", "token_env": value}})
        assert "sut_control.token_env" in str(err.value) and value not in str(err.value)
    with pytest.raises(TargetFileError, match="only with sut_control.url"):
        parse({"endpoint": "reference", "sut_control": {"kind": "reference",
                                                        "token_env": "MQ_T_CONTROL"}})
