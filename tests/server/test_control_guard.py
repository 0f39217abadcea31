"""The control API's guards: a bearer token, loopback unless asked, bodies that cannot pass
their limit, and a bounded number of handler threads (server/control.py, server/main.py)."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import pytest

from mqconform.server.control import MAX_BODY, ControlServer
from mqconform.server.main import ServeError, start

TOKEN = "control-token-for-the-tests-0123456789"
SECURE = """
security:
  authentication: required
  users:
    - {name: alice, password: alice-Pw-1}
queues:
  - path: private$\\alice
"""


def request(address, method, path, body=None, token=None):
    host, port = address
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    req = urllib.request.Request(f"http://{host}:{port}{path}", method=method, data=data,
                                 headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def raw(address, data: bytes) -> str:
    """One request as bytes; the status line and whatever the server answered."""
    with socket.create_connection(address, timeout=10) as s:
        s.sendall(data)
        chunks = []
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks).decode("latin-1")


@pytest.fixture
def secure(tmp_path, caplog):
    """A server with a security section and a control token; afterwards, neither the token
    nor the password is in any log line, DEBUG included."""
    caplog.set_level(logging.DEBUG)
    (tmp_path / "queues.yaml").write_text(SECURE)
    r = start(host="127.0.0.1", port=0, control_port=0, queues=str(tmp_path / "queues.yaml"),
              control_token=TOKEN)
    yield r
    r.stop()
    records = [rec for phase in ("setup", "call", "teardown")
               for rec in caplog.get_records(phase)]
    text = "".join(f"{rec.getMessage()} {rec.args}" for rec in records)
    assert TOKEN not in text and "alice-Pw-1" not in text
    assert any(rec.name.endswith("control") for rec in records)  # it did log


def test_without_the_token_a_secured_server_deletes_nothing(secure):
    status, answer = request(secure.control.address, "DELETE", "/queues/private$%5Calice")
    assert status == 401 and "token" in answer["error"] and "\n" not in answer["error"]
    assert request(secure.control.address, "DELETE", "/queues/private$%5Calice",
                   token="wrong" + TOKEN)[0] == 401
    assert request(secure.control.address, "DELETE", "/queues/private$%5Calice",
                   token=TOKEN[:-1])[0] == 401
    listed = request(secure.control.address, "GET", "/queues", token=TOKEN)
    assert listed[0] == 200 and [q["path"] for q in listed[1]] == ["MQREF\\private$\\alice"]


def test_with_the_token_the_control_api_works(secure):
    address = secure.control.address
    assert request(address, "POST", "/queues", {"path": "private$\\q"}, token=TOKEN)[0] == 201
    assert request(address, "DELETE", "/queues/private$%5Calice", token=TOKEN)[0] == 200
    assert [q["path"] for q in request(address, "GET", "/queues", token=TOKEN)[1]] == [
        "MQREF\\private$\\q"]


def test_a_401_is_one_line_of_json_and_never_quotes_the_token(secure):
    answer = raw(secure.control.address,
                 f"GET /queues HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}x\r\n\r\n"
                 .encode())
    head, _, body = answer.partition("\r\n\r\n")
    assert " 401 " in head.split("\r\n")[0] and 'WWW-Authenticate: Bearer' in head
    assert TOKEN not in answer and "\n" not in body and "error" in json.loads(body)


def test_a_secured_server_without_a_token_refuses_to_start(tmp_path):
    (tmp_path / "queues.yaml").write_text(SECURE)
    for unauthenticated in (False, True):
        with pytest.raises(ServeError) as refused:
            start(port=0, control_port=0, queues=str(tmp_path / "queues.yaml"),
                  control_unauthenticated=unauthenticated)
        assert "--control-token-env" in str(refused.value) and "\n" not in str(refused.value)


def test_no_token_is_refused_unless_the_control_api_is_explicitly_unauthenticated():
    with pytest.raises(ServeError, match="needs a token"):
        start(port=0, control_port=0)
    with pytest.raises(ServeError, match="not a loopback address"):
        start(port=0, control_port=0, control_host="0.0.0.0", control_unauthenticated=True)
    with pytest.raises(ServeError, match="fewer than 16"):
        start(port=0, control_port=0, control_token="short")


def test_serve_reads_the_token_from_the_environment_and_never_prints_a_value(tmp_path):
    """``serve --control-token-env NAME`` with NAME unset: one line, the value not shown (a
    token written in place of the name stays off the terminal); the security section without
    a token flag: one line."""
    (tmp_path / "queues.yaml").write_text(SECURE)
    secret = "Pasted-Token-Value-9876543210"
    for extra, words in ((("--control-token-env", secret), "value not shown"),
                         ((), "needs a token")):
        proc = subprocess.run([sys.executable, "-m", "mqconform", "serve", "--port", "0",
                               "--control-port", "0", "--queues", str(tmp_path / "queues.yaml"),
                               *extra], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and words in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and secret not in proc.stderr


def test_the_control_api_stays_on_loopback_when_rpc_listens_on_every_address():
    r = start(host="0.0.0.0", port=0, control_port=0, control_token=TOKEN)
    try:
        assert r.rpc.address[0] == "0.0.0.0"
        assert r.control.address[0] == "127.0.0.1"
        assert request(r.control.address, "GET", "/settings", token=TOKEN)[0] == 200
    finally:
        r.stop()


@pytest.mark.parametrize(("headers", "status"), [
    ("Content-Length: -1", 400),
    ("Content-Length: +5", 400),
    ("Content-Length: 0x10", 400),
    ("Content-Length: 5\r\nContent-Length: 5", 400),
    (f"Content-Length: {MAX_BODY + 1}", 413),
    ("Transfer-Encoding: chunked", 411),
    ("Transfer-Encoding: chunked\r\nContent-Length: 5", 411),
    ("", 411),  # a POST with a body and no Content-Length
])
def test_a_body_whose_length_is_not_one_bounded_count_is_refused_before_it_is_read(
        secure, headers, status):
    """The answer comes without the server waiting for the body the headers announce (the
    body never comes: a server that read it would wait for its read timeout, and the test
    would see a 408 or nothing), and the queue is not made."""
    line = f"{headers}\r\n" if headers else ""
    answer = raw(secure.control.address,
                 (f"POST /queues HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
                  f"{line}\r\n").encode())
    head, _, body = answer.partition("\r\n\r\n")
    assert f" {status} " in head.split("\r\n")[0], answer[:300]
    assert "\n" not in body and json.loads(body)["error"]
    assert request(secure.control.address, "GET", "/queues", token=TOKEN)[1][0]["path"] \
        == "MQREF\\private$\\alice"


def test_the_token_is_checked_before_any_length(secure):
    answer = raw(secure.control.address,
                 b"POST /queues HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n")
    assert " 401 " in answer.split("\r\n")[0]


def control_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name.startswith("Thread-"))


def test_idle_connections_hold_at_most_max_threads_and_a_fresh_request_is_answered(secure):
    """40 idle connections to a control API of 4 threads: at most 4 handler threads, the
    others answered 503 and closed at once; a fresh request is answered (200, or 503 while
    the four are busy); once the idle connections go, a request is served."""
    control = ControlServer(secure.handler, token=TOKEN, max_threads=4, timeout=60).start()
    idle: list[socket.socket] = []
    try:
        before = threading.active_count()
        for _ in range(40):
            idle.append(socket.create_connection(control.address, timeout=10))
        busy = 0
        for s in idle[4:]:  # the connections past the four are answered at once
            answer = s.recv(4096)
            busy += b" 503 " in answer.split(b"\r\n")[0]
        assert busy >= 36 - 1  # one of the first four may have been answered before a slot
        assert threading.active_count() - before <= 4
        fresh = raw(control.address,
                    f"GET /settings HTTP/1.0\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode())
        assert fresh.split("\r\n")[0].split()[1] in ("200", "503")
    finally:
        for s in idle:
            s.close()
    try:
        for _ in range(200):  # the four threads see their connections end, and free a slot
            status = raw(control.address, f"GET /settings HTTP/1.0\r\nAuthorization: Bearer "
                                          f"{TOKEN}\r\n\r\n".encode()).split()[1]
            if status == "200":
                break
            threading.Event().wait(0.05)
        assert status == "200"
    finally:
        control.stop()


def test_an_idle_connection_is_closed_after_the_read_timeout_and_frees_its_thread(secure):
    control = ControlServer(secure.handler, token=TOKEN, max_threads=1, timeout=0.2).start()
    try:
        with socket.create_connection(control.address, timeout=30) as s:
            assert s.recv(4096) == b""  # closed by the server, unanswered
        answer = raw(control.address,
                     f"GET /settings HTTP/1.0\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode())
        assert " 200 " in answer.split("\r\n")[0]
    finally:
        control.stop()
