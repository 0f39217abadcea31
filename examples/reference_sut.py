"""SUT control by command, worked for the reference queue manager: every action of the
``command`` adapter (README, "Hooking up your own implementation"), carried out through the
reference's control API (``mqconform serve --control-port``; JSON over HTTP). Copy it and
replace the HTTP requests with what your implementation offers. The control API's token is read
from the environment variable MQ_CONTROL_TOKEN (``serve --control-token-env MQ_CONTROL_TOKEN``)
and sent as ``Authorization: Bearer``; unset, no token is sent.

    python reference_sut.py URL ACTION ARGS...

    create_queue PATH TRANSACTIONAL LABEL JOURNAL TRANSACTIONAL, JOURNAL: true | false
    create_queue_from SPEC                        SPEC: the JSON queue entry (the queues
                                                  create_queue cannot make, and a queue with
                                                  its subqueues)
    send_message PATH KEY=VALUE...                body_file=... (or body_hex=...), label=...,
                                                  priority=..., and
                                                  the optional keys; an empty VALUE: not set
    delete_queue PATH
    reset
    commit_transaction XACTUOW | abort_transaction XACTUOW   (hex)
    set_cleanup_timer MS                          prints the previous duration (ms)
    open_outgoing FORMAT_NAME STATE [SPEC]        STATE: an OutgoingQueue.State name, or "";
                                                  SPEC: the JSON document of POST /outgoing
                                                  (the State, NextHops, OutgoingTransferInfo
                                                  and ConnectionHistory the suite needs)
    set_incoming_transactional_transfer_info PATH ENTRIES
                                                  ENTRIES: a JSON array (the queue's
                                                  IncomingTransactionalTransferInfoCollection)
    configure_queue_manager SETTINGS              SETTINGS: a JSON object; prints the
                                                  previous values (a JSON object)
    private_format_name PATH                      prints the queue's PRIVATE= format name
                                                  (PRIVATE=ComputerGuid\\QueueNumber)
    public_format_name PATH                       prints the queue's PUBLIC= format name
                                                  (PUBLIC=QueueGuid)

Exit status 0 when done; otherwise 1 with one line on stderr (the suite then reports the case
inconclusive with that line).

The matching target file (argument lists: no shell, nothing quoted twice):

    endpoint: ncacn_ip_tcp:127.0.0.1[2103]
    sut_control:
      kind: command
      commands:
        create_queue: [python, reference_sut.py, URL, create_queue, "{path}",
                       "{transactional}", "{label}", "{journal}"]
        send_message: [python, reference_sut.py, URL, send_message, "{path}",
                       "body_file={body_file}", "label={label}", "priority={priority}", ...]
        ...

(``tests/conformance/test_command_control.py`` builds the whole file.)
"""

from __future__ import annotations

import http.client
import json
import os
import sys
from urllib.parse import quote, urlsplit

#: message keys whose value is a number or true/false (the others are texts)
NUMBERS = {"priority", "time_to_be_received", "sent_time", "time_to_reach_queue",
           "authentication_provider_type"}
FLAGS = {"direct", "transactional", "positive_journaling", "negative_journaling",
         "final_ack_required"}
#: the environment variable holding the control API's token
TOKEN_ENV = "MQ_CONTROL_TOKEN"


class Failed(Exception):
    pass


def call(url: str, method: str, path: str, body: object = None) -> object:
    """One request to the control API (http://HOST:PORT); its JSON answer."""
    address = urlsplit(url)
    data = json.dumps(body).encode() if body is not None else None
    try:
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
        headers = {"Content-Type": "application/json"}
        if os.environ.get(TOKEN_ENV):
            headers["Authorization"] = f"Bearer {os.environ[TOKEN_ENV]}"
        connection.request(method, path, body=data, headers=headers)
        answer = connection.getresponse()
        text = answer.read()
        connection.close()
    except (OSError, http.client.HTTPException) as exc:
        raise Failed(f"{url}: {exc}") from None
    if answer.status >= 300:
        raise Failed(f"{method} {path}: {answer.status} "
                     f"{text.decode('utf-8', 'replace')[:200]}")
    return json.loads(text or b"null")


def queue_path(path: str) -> str:
    return "/queues/" + quote(path, safe="")


def message(pairs: list[str]) -> dict:
    spec: dict = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise Failed(f"send_message: {pair!r} is not KEY=VALUE")
        if value == "" and key not in ("body", "body_hex"):
            continue  # not set: the server's default
        if key == "body_file":  # the body in a file (a body too long for an argument)
            with open(value, "rb") as source:
                spec["body_hex"] = source.read().hex()
            continue
        if key in NUMBERS:
            spec[key] = int(value)
        elif key in FLAGS:
            spec[key] = value.lower() == "true"
        else:
            spec[key] = value
    return spec


def run(url: str, action: str, args: list[str]) -> str | None:
    if action == "create_queue":
        given = dict(zip(("path", "transactional", "label", "journal"), args, strict=False))
        path, transactional = given["path"], given.get("transactional", "false")
        label, journal = given.get("label", ""), given.get("journal", "false")
        call(url, "POST", "/queues", {"path": path, "label": label,
                                      "transactional": transactional == "true",
                                      "journal": journal == "true"})
    elif action == "create_queue_from":
        call(url, "POST", "/queues", json.loads(args[0]))
    elif action == "send_message":
        call(url, "POST", queue_path(args[0]) + "/messages", message(args[1:]))
    elif action == "delete_queue":
        call(url, "DELETE", queue_path(args[0]))
    elif action == "reset":
        call(url, "POST", "/reset", {})
    elif action in ("commit_transaction", "abort_transaction"):
        answer = call(url, "POST", f"/transactions/{args[0]}/{action.split('_')[0]}", {})
        status = answer.get("status", 0) if isinstance(answer, dict) else 0
        if status:
            raise Failed(f"{action} {args[0]}: status {status:#x}")
    elif action == "set_cleanup_timer":
        answer = call(url, "POST", "/settings", {"pending_request_cleanup_ms": int(args[0])})
        return str(answer["previous"])
    elif action == "open_outgoing":
        if len(args) > 2 and args[2]:  # the whole document: format name, state and the rest
            spec = json.loads(args[2])
        else:
            spec = {"format_name": args[0]}
            if len(args) > 1 and args[1]:
                spec["state"] = args[1]
        call(url, "POST", "/outgoing", spec)
    elif action == "set_incoming_transactional_transfer_info":
        call(url, "POST", queue_path(args[0]) + "/incoming_transactional_transfer_info",
             {"entries": json.loads(args[1])})
    elif action == "configure_queue_manager":
        return json.dumps(call(url, "POST", "/queue_manager", json.loads(args[0])))
    elif action in ("private_format_name", "public_format_name"):
        kind = action.split("_")[0]
        wanted = args[0].lower()
        for queue in call(url, "GET", "/queues"):
            if wanted in (queue["path"].lower(), queue["path"].lower().split("\\", 1)[-1]):
                name = queue.get("format_name") or ""
                if not name.upper().startswith(kind.upper() + "="):
                    raise Failed(f"{args[0]} is not a {kind} queue")
                return name
        raise Failed(f"no queue {args[0]}")
    else:
        raise Failed(f"unknown action {action!r}")
    return None


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: reference_sut.py URL ACTION ARGS...", file=sys.stderr)
        return 1
    try:
        printed = run(argv[0], argv[1], argv[2:])
    except (Failed, ValueError, IndexError, KeyError) as exc:
        print(f"{argv[1]}: {exc}", file=sys.stderr)
        return 1
    if printed is not None:
        print(printed)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
