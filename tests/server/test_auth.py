"""Authentication and authorisation of the reference server (server/ntlm.py, server/security.py,
server/rpc.py), driven by the impacket-based client with NTLM credentials (conformance/client.py,
which also verifies the server's signatures): the three levels, refusals (wrong password,
unknown user, no authentication, too low a level, a tampered signature), the queues' access
lists (MS-MQRR 2.1), administrators for qmmgmt (MS-MQMR 3), unauthenticated mode, and no
secret in any log line or error message."""

from __future__ import annotations

import logging
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from mqconform.conformance.client import Credentials, RpcClient
from mqconform.model import calls as c
from mqconform.model.formats import MgmtObject, MgmtObjectType, parse_format_name, to_queue_format
from mqconform.model.status import MQ_ERROR_ACCESS_DENIED
from mqconform.server.main import ServeError, start
from mqconform.server.ntlm import nt_hash
from mqconform.server.rpc import RPC_S_ACCESS_DENIED, RPC_S_SEC_PKG_ERROR
from mqconform.wire import dcerpc as d

ROOT = Path(__file__).resolve().parents[2]
SECRETS = ("alice-pw-7Q", "bob-pw-3Z", "carol-pw-9X")
SECURE = f"""
queue_manager: {{computer_name: MQREF}}
security:
  authentication: required
  level: integrity
  users:
    - {{name: alice, password: {SECRETS[0]}, administrator: true}}
    - {{name: bob, password: {SECRETS[1]}}}
    - {{name: carol, password_env: MQ_TEST_CAROL}}
queues:
  - path: private$\\orders
    messages: [{{body: one}}, {{body: two}}]
    subqueues: [retry]
    access: {{peek: ["*"], receive: [alice, carol], purge: [alice]}}
  - path: private$\\open
    messages: [{{body: free}}]
"""
MACHINE = MgmtObject(type=MgmtObjectType.MGMT_MACHINE)
QUERY = c.R_QMMgmtGetInfo(pObjectFormat=MACHINE, cp=1, aProp=(1,), apVar=(c.PropVariant(1),))
ORDERS = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\orders"))
OPEN = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\open"))


@pytest.fixture
def secure(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("MQ_TEST_CAROL", SECRETS[2])
    caplog.set_level(logging.DEBUG)
    path = tmp_path / "queues.yaml"
    path.write_text(SECURE)
    r = start(port=0, queues=str(path))
    yield r
    r.stop()
    # every phase's records (caplog.records holds the teardown's only)
    text = "".join(f"{rec.getMessage()} {rec.args}" for phase in ("setup", "call", "teardown")
                   for rec in caplog.get_records(phase))
    for secret in SECRETS:  # no password, nor its NT hash, in any log line
        assert secret not in text and nt_hash(secret).hex() not in text.lower()


def client(r, user=None, password="", level=5, **kw) -> RpcClient:
    cl = RpcClient(timeout=5, credentials=Credentials(user, password, level=level, **kw)
                   if user else None)
    cl.connect(f"ncacn_ip_tcp:127.0.0.1[{r.rpc.address[1]}]")
    return cl


def open_queue(cl, fmt=ORDERS, access=c.RECEIVE_ACCESS):
    return cl.call(c.R_OpenQueue(pQueueFormat=fmt, dwAccess=access, pClientId=uuid.uuid4()))


def peek(cl, handle):
    return cl.call(c.R_StartReceive(phContext=handle, ulAction=c.MQ_ACTION_PEEK_CURRENT,
                                    dwMaxBodySize=64, dwMaxCompoundMessageSize=64))


@pytest.mark.req("MS-MQRR/2.1/R3")
@pytest.mark.parametrize("level", [2, 5, 6], ids=["connect", "integrity", "privacy"])
def test_alice_authenticates_at_each_level_the_policy_allows(tmp_path, monkeypatch, level):
    monkeypatch.setenv("MQ_TEST_CAROL", SECRETS[2])
    path = tmp_path / "queues.yaml"
    path.write_text(SECURE.replace("level: integrity", "level: connect"))
    r = start(port=0, queues=str(path))
    try:
        cl = client(r, "alice", SECRETS[0], level)
        opened = open_queue(cl)
        assert not opened.raised
        # at integrity and privacy every response was signed, and conformance/client.py verified it
        got = peek(cl, opened.pphContext)
        assert got.status == 0 and got.ppPacketSections
        assert cl.call(QUERY).status == 0
        cl.close()
    finally:
        r.stop()


def test_a_lower_level_than_required_is_access_denied(secure):
    cl = client(secure, "alice", SECRETS[0], level=2)  # connect; integrity required
    opened = open_queue(cl)
    assert opened.raised and opened.status == RPC_S_ACCESS_DENIED


@pytest.mark.parametrize("user,password", [("alice", "wrong"), ("mallory", "x"), (None, "")],
                         ids=["wrong-password", "unknown-user", "anonymous"])
def test_no_proof_no_service(secure, user, password):
    cl = client(secure, user, password)
    for call in (c.R_GetServerPort(), c.R_OpenQueue(pQueueFormat=OPEN,
                                                    dwAccess=c.PEEK_ACCESS)):
        answer = cl.call(call)
        assert answer.raised and answer.status == RPC_S_ACCESS_DENIED


def test_a_tampered_signature_is_refused(secure):
    cl = client(secure, "alice", SECRETS[0], level=5)
    assert cl.call(c.R_GetServerPort()).status == secure.rpc.address[1]
    dce = cl._associations[c.REMOTEREAD].dce
    dce._DCERPC_v5__clientSigningKey = bytes(16)  # the client signs with the wrong key
    answer = cl.call(c.R_GetServerPort())
    assert answer.raised and answer.status == RPC_S_SEC_PKG_ERROR


@pytest.mark.req("MS-MQRR/2.1/R3")
def test_access_lists_peek_receive_and_purge(secure):
    bob = client(secure, "bob", SECRETS[1])
    denied = open_queue(bob)  # bob may peek only
    assert denied.raised and denied.status == MQ_ERROR_ACCESS_DENIED
    opened = open_queue(bob, access=c.PEEK_ACCESS)
    assert not opened.raised and peek(bob, opened.pphContext).status == 0
    carol = client(secure, "carol", SECRETS[2])  # receive, but not purge
    handle = open_queue(carol).pphContext
    assert carol.call(c.R_PurgeQueue(phContext=handle)).status == MQ_ERROR_ACCESS_DENIED
    alice = client(secure, "alice", SECRETS[0])
    handle = open_queue(alice).pphContext
    assert alice.call(c.R_PurgeQueue(phContext=handle)).status == 0
    # a queue without an access list: any authenticated caller may receive
    assert not open_queue(bob, OPEN).raised
    # a refused open leaves no descriptor behind
    [orders] = [q for q in secure.handler.env.local_queue_manager.queue_collection
                if q.pathname.endswith("orders")]
    assert len(orders.open_queue_descriptor_collection) == 3  # bob peek, carol, alice


@pytest.mark.req("MS-MQRR/3.1.4.7/R6", "MS-MQRR/3.1.4.6/R14", "MS-MQRR/3.1.4.10/R4")
def test_a_handle_opened_to_peek_takes_no_message_whoever_holds_it(secure):
    """The rights of a handle are those it was opened with, checked at every call that uses
    it: alice may receive, purge and move, but through her PEEK_ACCESS handle every call that
    would take a message out of the queue fails, and both messages stay."""
    alice = client(secure, "alice", SECRETS[0])
    handle = open_queue(alice, access=c.PEEK_ACCESS).pphContext
    first = peek(alice, handle)
    assert first.status == 0
    lookup = first.pSequenceId  # the message's lookup identifier
    retry = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\orders;retry"))
    to = alice.call(c.R_OpenQueueForMove(pQueueFormat=retry, pClientId=uuid.uuid4()))
    assert not to.raised and to.pMoveContext
    refused = {
        "receive": c.R_StartReceive(phContext=handle, ulAction=c.MQ_ACTION_RECEIVE,
                                    dwRequestId=1, dwMaxBodySize=64,
                                    dwMaxCompoundMessageSize=64),
        "lookup receive": c.R_StartReceive(phContext=handle, LookupId=lookup,
                                           ulAction=c.MQ_LOOKUP_RECEIVE_CURRENT,
                                           dwRequestId=2, dwMaxBodySize=64,
                                           dwMaxCompoundMessageSize=64),
        "purge": c.R_PurgeQueue(phContext=handle),
        "move": c.R_MoveMessage(phContextFrom=handle, ullContextTo=to.pMoveContext,
                                LookupId=lookup, pTransactionId=bytes(c.XACTUOW_SIZE)),
    }
    for what, call in refused.items():
        out = alice.call(call)
        assert out.raised or out.status & 0x80000000, f"{what} through a peek handle: {out}"
    [orders] = [q for q in secure.handler.env.local_queue_manager.queue_collection
                if q.pathname.endswith("orders")]
    assert [p.message_reference.body for p in orders.message_position_list] == [b"one", b"two"]
    assert alice.call(c.R_PurgeQueue(phContext=open_queue(alice).pphContext)).status == 0


@pytest.mark.req("MS-MQMR/3/R1")
def test_qmmgmt_is_for_administrators(secure):
    assert client(secure, "bob", SECRETS[1]).call(QUERY).status == MQ_ERROR_ACCESS_DENIED
    action = c.R_QMMgmtAction(pObjectFormat=MACHINE, lpwszAction="TIDY")
    assert client(secure, "bob", SECRETS[1]).call(action).status == MQ_ERROR_ACCESS_DENIED
    assert client(secure, "alice", SECRETS[0]).call(QUERY).status == 0


def test_unauthenticated_mode_lets_anonymous_callers_do_everything(tmp_path):
    path = tmp_path / "queues.yaml"
    path.write_text("queues:\n  - path: private$\\orders\n    messages: [{body: one}]\n")
    r = start(port=0, queues=str(path))
    try:
        cl = client(r)
        handle = open_queue(cl).pphContext
        assert cl.call(c.R_PurgeQueue(phContext=handle)).status == 0
        assert cl.call(QUERY).status == 0
        with pytest.raises(Exception, match="bind"):  # no NTLM is offered without users
            client(r, "alice", "x")
    finally:
        r.stop()


def test_optional_authentication_identifies_who_authenticates(tmp_path, monkeypatch):
    monkeypatch.setenv("MQ_TEST_CAROL", SECRETS[2])
    path = tmp_path / "queues.yaml"
    path.write_text(SECURE.replace("authentication: required", "authentication: none")
                    .replace('peek: ["*"]', 'peek: ["*", anonymous]'))
    r = start(port=0, queues=str(path))
    try:
        anonymous = client(r)
        assert not open_queue(anonymous, access=c.PEEK_ACCESS).raised
        assert open_queue(anonymous).status == MQ_ERROR_ACCESS_DENIED  # not on the list
        assert not open_queue(client(r, "carol", SECRETS[2])).raised
    finally:
        r.stop()


@pytest.mark.parametrize("text,where", [
    ("security: {authentication: maybe}", "security.authentication"),
    ("security: {level: high}", "security.level"),
    ("security: {authentication: required}", "security.users"),
    ("security: {users: [{name: a}]}", "give exactly one of password"),
    ("security: {users: [{name: a, password: s3cr3t-XY, nt_hash: '00'}]}",
     "give exactly one of password"),
    ("security: {users: [{name: a, nt_hash: 'zz'}]}", "security.users[0].nt_hash"),
    ("security: {users: [{name: a, password_env: NO_SUCH_VARIABLE_42}]}", "password_env"),
    ("security: {users: [{name: a, password: s3cr3t-XY}]}\nqueues:\n  - path: q\n"
     "    access: {receive: [b]}", "b is not a user"),
])
def test_bad_security_sections_are_one_line_without_the_secret(tmp_path, text, where):
    path = tmp_path / "queues.yaml"
    path.write_text(text)
    with pytest.raises(ServeError) as caught:
        start(port=0, queues=str(path))
    message = str(caught.value)
    assert where in message and "s3cr3t-XY" not in message and "\n" not in message


def test_secrets_stay_out_of_reprs_and_the_servers_output(tmp_path, monkeypatch):
    assert SECRETS[0] not in repr(Credentials("alice", SECRETS[0]))
    monkeypatch.setenv("MQ_TEST_CAROL", SECRETS[2])
    path = tmp_path / "queues.yaml"
    path.write_text(SECURE)
    proc = subprocess.Popen([sys.executable, "-m", "mqconform", "serve", "--port", "0",
                             "--queues", str(path)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        port = int(line.split("[", 1)[1].split("]", 1)[0])
        for user, password in (("alice", SECRETS[0]), ("bob", "wrong-guess")):
            cl = RpcClient(timeout=5, credentials=Credentials(user, password))
            cl.connect(f"ncacn_ip_tcp:127.0.0.1[{port}]")
            cl.call(c.R_GetServerPort())
            cl.close()
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=10)
    for secret in (*SECRETS, "wrong-guess"):
        assert secret not in out + err and nt_hash(secret).hex() not in (out + err).lower()


def test_security_defaults_loopback_and_no_control_api(tmp_path):
    r = start(port=0)
    try:
        assert r.rpc.address[0] == "127.0.0.1" and r.control is None and r.epm is None
    finally:
        r.stop()
    from mqconform.cli import build_parser

    args = build_parser().parse_args(["serve"])
    assert args.host == "127.0.0.1" and args.control_port is None and args.epm_port is None


@pytest.mark.parametrize("level", [5, 6], ids=["integrity", "privacy"])
def test_fragmented_requests_and_responses_are_signed_and_sealed_fragment_by_fragment(
        tmp_path, level):
    path = tmp_path / "queues.yaml"
    path.write_text("queue_manager: {computer_name: MQREF}\nsecurity:\n"
                    "  authentication: required\n  level: integrity\n"
                    "  users: [{name: alice, password: pw-1}]\nqueues:\n"
                    f"  - path: private$\\big\n    messages: [{{body: {'x' * 60000}}}]\n")
    r = start(port=0, queues=str(path))
    try:
        cl = client(r, "alice", "pw-1", level)
        fmt = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\big"))
        handle = open_queue(cl, fmt, c.PEEK_ACCESS).pphContext
        for _ in range(2):  # ~11 response fragments, each verified by the client
            got = cl.call(c.R_StartReceive(phContext=handle, ulAction=c.MQ_ACTION_PEEK_CURRENT,
                                           dwMaxBodySize=1 << 17,
                                           dwMaxCompoundMessageSize=1 << 17))
            assert got.status == 0 and sum(len(s.pSectionBuffer or b"")
                                           for s in got.ppPacketSections) > 60000
        token = b"\x01" * 20000  # a request of 4 fragments, each signed (and sealed)
        enlisted = cl.call(c.R_QMEnlistRemoteTransaction(
            pTransactionId=uuid.uuid4().bytes, cbPropagationToken=len(token),
            pbPropagationToken=token, pQueueFormat=fmt))
        assert not enlisted.raised
        assert cl.call(c.R_GetServerPort()).status == r.rpc.address[1]
    finally:
        r.stop()


@pytest.mark.parametrize("level", [5, 6], ids=["integrity", "privacy"])
def test_a_rejected_signed_request_leaves_the_next_signed_call_working(secure, level):
    """MS-NLMP 3.4.4: a message that does not verify does not move the receiver's sequence
    number (nor, server/ntlm.py, its RC4 stream): the client's next message verifies."""
    cl = client(secure, "alice", SECRETS[0], level=level)
    transport = cl._associations[c.REMOTEREAD].dce.get_rpc_transport()
    sent = []
    send = transport.send
    transport.send = lambda data, *a, **kw: (sent.append(bytes(data)), send(data, *a, **kw))[1]
    port = secure.rpc.address[1]
    assert cl.call(c.R_GetServerPort()).status == port
    tampered = bytearray(sent[-1])
    tampered[-5] ^= 0x01  # a byte of the checksum (MS-NLMP 2.2.2.9.1)
    send(bytes(tampered))
    fault = d.decode_pdu(transport.recv())
    assert isinstance(fault.body, d.Fault) and fault.body.status == RPC_S_SEC_PKG_ERROR
    for _ in range(2):  # signed (and sealed) by the client's next sequence numbers
        answer = cl.call(c.R_GetServerPort())
        assert not answer.raised and answer.status == port
    cl.close()


# ------------------------------------------------------------------ domains and throttling

@pytest.mark.parametrize(("domain", "admitted"), [
    ("", True), ("MQREF", True), ("mqref", True), ("EVIL", False), ("MQREF2", False)])
def test_the_authenticate_messages_domain_must_be_the_accounts(secure, domain, admitted):
    """The users of SECURE have no domain of their own: theirs is security.domain, which
    defaults to the computer name MQREF. The right password under another domain is refused
    (an empty domain names the account's own)."""
    cl = client(secure, "alice", SECRETS[0], domain=domain)
    answer = cl.call(c.R_GetServerPort())
    assert answer.raised is not admitted, answer
    if not admitted:
        assert answer.status == RPC_S_ACCESS_DENIED


def test_a_users_own_domain_is_the_one_that_logs_on(tmp_path):
    path = tmp_path / "queues.yaml"
    path.write_text("security:\n  authentication: required\n  domain: MQREF\n  users:\n"
                    "    - {name: dora, domain: CORP, password: dora-Pw-5}\n")
    r = start(port=0, queues=str(path))
    try:
        assert not client(r, "dora", "dora-Pw-5", domain="corp").call(c.R_GetServerPort()).raised
        assert client(r, "dora", "dora-Pw-5", domain="MQREF").call(c.R_GetServerPort()).raised
    finally:
        r.stop()


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def throttled_server(tmp_path, monkeypatch, failures=3, backoff=30):
    monkeypatch.setenv("MQ_TEST_CAROL", SECRETS[2])
    path = tmp_path / "queues.yaml"
    path.write_text(SECURE.replace("  level: integrity\n", "  level: integrity\n  lockout: "
                                   f"{{failures: {failures}, window: 60, backoff: {backoff}}}\n"))
    r = start(port=0, queues=str(path))
    clock = FakeClock()
    r.rpc.security.throttle._clock = clock  # the back-off ends when the test says
    return r, clock


def served(r, user, password) -> bool:
    cl = client(r, user, password)
    try:
        return not cl.call(c.R_GetServerPort()).raised
    finally:
        cl.close()


def test_k_wrong_passwords_refuse_the_right_one_for_the_back_off_and_no_other_client(
        tmp_path, monkeypatch):
    r, clock = throttled_server(tmp_path, monkeypatch, failures=3, backoff=30)
    try:
        assert served(r, "alice", SECRETS[0])
        for _ in range(3):
            assert not served(r, "alice", "guess")
        assert not served(r, "alice", SECRETS[0])  # in the back-off: refused unverified
        assert served(r, "bob", SECRETS[1])  # another client is served
        clock.now += 29
        assert not served(r, "alice", SECRETS[0])  # still in it
        clock.now += 2
        assert served(r, "alice", SECRETS[0])  # the back-off is over
    finally:
        r.stop()


def test_failures_below_k_or_outside_the_window_do_not_lock_out(tmp_path, monkeypatch):
    r, clock = throttled_server(tmp_path, monkeypatch, failures=3, backoff=30)
    try:
        for _ in range(2):
            assert not served(r, "alice", "guess")
        clock.now += 61  # the window has passed: the two failures no longer count
        assert not served(r, "alice", "guess")
        assert served(r, "alice", SECRETS[0])
        for _ in range(2):  # a success forgets the failures before it
            assert not served(r, "alice", "guess")
        assert served(r, "alice", SECRETS[0])
    finally:
        r.stop()


def test_the_throttle_keys_on_address_and_user():
    from mqconform.server.security import Throttle

    clock = FakeClock()
    throttle = Throttle(failures=2, window=60, backoff=10, clock=clock)
    for _ in range(2):
        throttle.failed("192.0.2.1", "Alice")
    assert throttle.refused("192.0.2.1", "alice")
    assert not throttle.refused("192.0.2.2", "alice") and not throttle.refused("192.0.2.1", "bob")
    off = Throttle(failures=0, clock=clock)
    for _ in range(100):
        off.failed("192.0.2.1", "alice")
    assert not off.refused("192.0.2.1", "alice")


@pytest.mark.parametrize(("lockout", "where"), [
    ("{failures: -1}", "security.lockout.failures"),
    ("{window: 0}", "security.lockout.window"),
    ("{backoff: x}", "security.lockout.backoff"),
    ("{tries: 3}", "security.lockout"),
])
def test_a_bad_lockout_entry_is_one_line(tmp_path, lockout, where):
    path = tmp_path / "queues.yaml"
    path.write_text(f"security:\n  lockout: {lockout}\n  users: [{{name: a, password: p}}]\n")
    with pytest.raises(ServeError) as caught:
        start(port=0, queues=str(path))
    assert where in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("value", ["Hunter2-pw!", "HUNTER2_PASSWORD", "MQ_NOT_SET_42"])
def test_a_password_in_password_env_is_not_echoed_by_serve(tmp_path, value):
    """A value of password_env that names no set variable is never shown, whatever its shape
    (a password can look like a variable's name)."""
    path = tmp_path / "queues.yaml"
    path.write_text(f"security:\n  users:\n    - {{name: a, password_env: '{value}'}}\n")
    proc = subprocess.run([sys.executable, "-m", "mqconform", "serve", "--port", "0",
                           "--queues", str(path)], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2 and "password_env" in proc.stderr, proc.stderr
    assert "value not shown" in proc.stderr and value not in proc.stderr + proc.stdout
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.req("MS-MQRR/2.1/R1", "MS-MQRR/2.1/R3")
@pytest.mark.parametrize("level,ndr64", [(5, False), (6, False), (6, True)],
                         ids=["integrity", "privacy", "privacy-ndr64"])
def test_signed_and_sealed_first_calls_with_a_verification_trailer_are_run(secure, level, ndr64):
    """The suite's client sends a verification trailer in its first request, as Windows
    clients do (conformance/client.py decision 6), signed or sealed with the stub: the server
    finds it after the stub, checks it against the call, and runs the call."""
    cl = RpcClient(timeout=5, verification_trailer=True,
                   credentials=Credentials("alice", SECRETS[0], level=level))
    cl.connect(f"ncacn_ip_tcp:127.0.0.1[{secure.rpc.address[1]}]", ndr64=ndr64)
    opened = open_queue(cl)
    assert not opened.raised and opened.pphContext
    assert cl._associations[c.REMOTEREAD].trailer_sent
    assert peek(cl, opened.pphContext).status == 0
    assert cl.call(QUERY).status == 0  # qmmgmt's association: its own first request
    cl.close()
