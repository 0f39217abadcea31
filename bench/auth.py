"""Authentication under load: what each level costs, and that nothing gets in that should not.

    python bench/auth.py [--calls 2000] [--attempts 500]

``mqconform serve`` (a process of its own) requires authentication at the connect level, with
two users and an access list. Figures:

1. R_StartReceive peeks per second on one connection with the impacket-based client (which
   verifies every signature the server sends back) with no authentication (a second,
   unauthenticated server), and at the connect, packet-integrity and packet-privacy levels.
2. Refusals, each an attempt on a connection of its own (goal: all refused, none answered):
   wrong passwords, unknown users, anonymous callers, calls with a tampered signature, opens
   for receive by a user the access list allows only to peek, and qmmgmt calls by a user who
   is not an administrator.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path

if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)

from mqconform.conformance.client import Credentials, RpcClient  # noqa: E402
from mqconform.conformance.targets import ServeProcess  # noqa: E402
from mqconform.model import calls as c  # noqa: E402
from mqconform.model.formats import MgmtObject, MgmtObjectType, parse_format_name, to_queue_format  # noqa: E402
from mqconform.model.status import MQ_ERROR_ACCESS_DENIED  # noqa: E402

PASSWORDS = {"MQB_ALICE": "bench-alice-pw", "MQB_BOB": "bench-bob-pw"}
QUEUES = """
queue_manager: {computer_name: MQREF}
%s
queues:
  - path: private$\\bench
    messages: [{body: x}]
    access: {peek: ["*"], receive: [alice]}
"""
SECURITY = """security:
  authentication: required
  level: connect
  users:
    - {name: alice, password_env: MQB_ALICE, administrator: true}
    - {name: bob, password_env: MQB_BOB}"""
FORMAT = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\bench"))
LEVELS = {"connect": 2, "integrity": 5, "privacy": 6}


def server(secure: bool) -> ServeProcess:
    folder = Path(tempfile.mkdtemp())
    text = QUEUES % (SECURITY if secure else "")
    if not secure:
        text = text.replace("\n    access: {peek: [\"*\"], receive: [alice]}", "")
    (folder / "queues.yaml").write_text(text)
    return ServeProcess(args=("--queues", str(folder / "queues.yaml")), env=PASSWORDS)


def client(s: ServeProcess, credentials: Credentials | None) -> RpcClient:
    cl = RpcClient(timeout=10, credentials=credentials)
    cl.connect(s.endpoint)
    return cl


def rate(s: ServeProcess, credentials: Credentials | None, calls: int) -> float:
    cl = client(s, credentials)
    opened = cl.call(c.R_OpenQueue(pQueueFormat=FORMAT, dwAccess=c.PEEK_ACCESS,
                                   pClientId=uuid.uuid4()))
    peek = c.R_StartReceive(phContext=opened.pphContext, ulAction=c.MQ_ACTION_PEEK_CURRENT,
                            dwMaxBodySize=64, dwMaxCompoundMessageSize=64)
    began = time.perf_counter()
    for _ in range(calls):
        if cl.call(peek).status != 0:
            raise SystemExit("a peek failed")
    seconds = time.perf_counter() - began
    cl.close()
    return calls / seconds


def refused(answer: c.Result) -> bool:
    return answer.raised or answer.status in (MQ_ERROR_ACCESS_DENIED, 5)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--attempts", type=int, default=500)
    args = ap.parse_args(argv)
    alice = PASSWORDS["MQB_ALICE"]
    plain = server(secure=False)
    secure = server(secure=True)
    try:
        print(f"1. R_StartReceive peeks on one connection ({args.calls} calls each):")
        print(f"   no authentication     {rate(plain, None, args.calls):8,.0f} calls/s")
        for name, level in LEVELS.items():
            per_s = rate(secure, Credentials("alice", alice, level=level), args.calls)
            print(f"   {name:<21s} {per_s:8,.0f} calls/s")
        attempts = {
            "wrong password": lambda: Credentials("alice", "not-the-password"),
            "unknown user": lambda: Credentials("mallory", "x"),
            "anonymous": lambda: None,
        }
        print(f"2. refusals ({args.attempts} attempts each, a connection each):")
        total_answered = 0
        for what, make in attempts.items():
            answered = 0
            for _ in range(args.attempts):
                cl = client(secure, make())
                if not refused(cl.call(c.R_GetServerPort())):
                    answered += 1
                cl.close()
            total_answered += answered
            print(f"   {what:<32s} refused {args.attempts - answered}, answered {answered}")
        answered = 0
        for _ in range(args.attempts):
            cl = client(secure, Credentials("alice", alice, level=5))
            dce = cl._associations[c.REMOTEREAD].dce
            dce._DCERPC_v5__clientSigningKey = bytes(16)  # sign with a wrong key
            if not refused(cl.call(c.R_GetServerPort())):
                answered += 1
            cl.close()
        total_answered += answered
        print(f"   {'tampered signature':<32s} refused {args.attempts - answered}, "
              f"answered {answered}")
        machine = MgmtObject(type=MgmtObjectType.MGMT_MACHINE)
        checks = {
            "receive without the right": c.R_OpenQueue(pQueueFormat=FORMAT,
                                                       dwAccess=c.RECEIVE_ACCESS),
            "qmmgmt by a non-administrator": c.R_QMMgmtGetInfo(
                pObjectFormat=machine, cp=1, aProp=(1,), apVar=(c.PropVariant(1),)),
        }
        bob = client(secure, Credentials("bob", PASSWORDS["MQB_BOB"], level=5))
        for what, call in checks.items():
            answered = sum(not refused(bob.call(call)) for _ in range(args.attempts))
            total_answered += answered
            print(f"   {what:<32s} refused {args.attempts - answered}, answered {answered}")
        bob.close()
    finally:
        plain.close()
        secure.close()
    print("goals met" if total_answered == 0 else "GOALS MISSED")
    return 0 if total_answered == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
