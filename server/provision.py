"""Provisioning the reference queue manager from YAML (``mqconform serve --queues FILE``).

```yaml
queue_manager:
  computer_name: MQREF            # NetBIOS name of the host (default MQREF)
  identifier: 11111111-2222-4333-8444-555555555555   # QueueManager.Identifier (default:
                                  # derived from the computer name, so restarts agree)
  quota: 1073741824               # QueueManagerQuota, bytes (MS-MQDMPR 3.1.1.1)
queues:
  - path: private$\\orders        # the computer part is the queue manager's
    label: Orders
    transactional: false
    quota: 4096                   # Queue.Quota, kilobytes (MS-MQDMPR 3.1.1.2)
    journal_quota: 4096
    subqueues: [retry, poison]
    messages:                     # sent at start, in order
      - body: "hello"             # or body_hex: "68656c6c6f"
        label: greeting
        priority: 3               # 0..7
        time_to_be_received: 60   # seconds; omitted: infinite
        sent_time: 1767225600     # Message.SentTime (seconds since 1970); omitted: 0
        time_to_reach_queue: 3600 # Message.TimeToReachQueue, seconds; omitted: 4 days
        dead_letter_queue: MQREF\\private$\\dead   # Message.ApplicationDeadletterQueue
      - body: "<order/>"          # an SRMP message (MS-MQRR 2.2.5.1.2): both keys below
        soap_envelope: "<se:Envelope>...</se:Envelope>"   # Message.SOAPEnvelope
        compound_message: "POST /msmq HTTP/1.1\r\n...\r\n\r\n<order/>"  # .SOAPCompoundMessage
        soap_header: "<h/>"       # Message.SoapHeader and SoapBody (MS-MQMQ 2.2.20.7)
        soap_body: "<b/>"
      - body: "from afar"
        received_from: 192.0.2.7  # the host it came from (IPv4 or IPv6[%scope]): the
                                  # ExtendedAddressHeader, MS-MQRR 2.2.5.5
        direct: true              # sent to DIRECT=OS:<the queue>: the UserHeader then holds
                                  # the address too (MS-MQRR 2.2.5.1)
```

Queues are created with the model's Set Queue Defaults and Create Queue events (MS-MQDMPR
3.1.7.1.33, 3.1.7.1.3); messages are serialized to real packets by the wire codec and enqueued
with Enqueue Message (3.1.7.1.9), so what a client receives is a packet a real MSMQ client can
parse. Every error names the place in the document (``queues[1].messages[0].priority``).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from mqconform.model.adm import LocalMessage, Queue, QueueManager
from mqconform.model.message_ops import enqueue_message
from mqconform.model.queue_management import create_queue, set_queue_defaults
from mqconform.model.runtime import Environment

DEFAULT_COMPUTER_NAME = "MQREF"
NAMESPACE = uuid.UUID("5f6c3a5e-8a4b-4f1b-9d2e-6d71656e6d71")


class ProvisionError(ValueError):
    """A provisioning document that cannot be applied; the message names where and why."""


@dataclass
class Provisioned:
    env: Environment
    queues: dict[str, Queue]
    #: server/security.py: who may call, and the queues' access lists
    security: Any = None


def _check(cond: bool, where: str, why: str) -> None:
    if not cond:
        raise ProvisionError(f"{where}: {why}")


def _int(value: Any, where: str, lo: int, hi: int) -> int:
    _check(isinstance(value, int) and not isinstance(value, bool), where, "must be an integer")
    _check(lo <= value <= hi, where, f"must be between {lo} and {hi}")
    return value


def _str(value: Any, where: str, max_len: int = 260) -> str:
    _check(isinstance(value, str), where, "must be a string")
    _check(len(value) <= max_len, where, f"must be at most {max_len} characters")
    return value


def _path_name(value: Any, where: str) -> str:
    """A queue path name (MS-MQMQ 2.1.1) as a message property holds it: no null character,
    which would end it early in a DeadLetterHeader (MS-MQRR 2.2.5.4)."""
    value = _str(value, where, 124)
    _check("\0" not in value, where, "must not contain a null character")
    return value


def load_document(text: str, source: str = "<queues>") -> dict:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise ProvisionError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") \
            from None
    if data is None:
        return {}
    _check(isinstance(data, dict), source, "the document must be a mapping")
    unknown = set(data) - {"queue_manager", "queues", "security"}
    _check(not unknown, source, f"unknown key(s) {sorted(unknown)}")
    return data


def new_queue_manager(spec: dict | None) -> QueueManager:
    spec = spec or {}
    _check(isinstance(spec, dict), "queue_manager", "must be a mapping")
    unknown = set(spec) - {"computer_name", "identifier", "quota"}
    _check(not unknown, "queue_manager", f"unknown key(s) {sorted(unknown)}")
    name = _str(spec.get("computer_name", DEFAULT_COMPUTER_NAME), "queue_manager.computer_name",
                15)
    _check(bool(name) and "\\" not in name, "queue_manager.computer_name",
           "must be a non-empty NetBIOS name")
    if "identifier" in spec:
        try:
            identifier = uuid.UUID(str(spec["identifier"]))
        except ValueError:
            raise ProvisionError("queue_manager.identifier: not a GUID") from None
    else:
        identifier = uuid.uuid5(NAMESPACE, name.upper())
    quota = _int(spec.get("quota", 1 << 30), "queue_manager.quota", 1, (1 << 63) - 1)
    qm = QueueManager(computer_name=name, qualified_computer_name=name,
                      identifier=identifier, queue_manager_quota=quota)
    from mqconform.model.higher_layer import create_system_queues

    create_system_queues(qm)  # what MS-MQDMPR 3.1.3 Initialization creates at start
    return qm


def arrival_time() -> int:
    """Message.ArrivalTime for a message enqueued now: the UTC time it was added (MS-MQDMPR
    3.1.1.12), in the seconds since 1970-01-01 UTC that R_StartReceive returns as
    pdwArriveTime (MS-MQRR/3.1.4.7/R16); the model's own clock counts from the server's
    start and cannot stand in for it."""
    return int(time.time()) & 0xFFFFFFFF


#: the keys of a message in a provisioning document, the control API and SUT control
MESSAGE_KEYS = frozenset({"body", "body_hex", "label", "priority", "time_to_be_received",
                          "dead_letter_queue", "soap_envelope", "compound_message",
                          "soap_header", "soap_body", "received_from", "direct",
                          "sent_time", "time_to_reach_queue", "delivery"})


def _host(value: Any, where: str) -> Any:
    """``received_from``: an IPv4 address, or an IPv6 address with an optional %scope
    (RFC 2553 3.3 sin6_scope_id, a number)."""
    import ipaddress

    from mqconform.model.packet import HostAddress

    text = _str(value, where, 64)
    address, _, scope = text.partition("%")
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        raise ProvisionError(f"{where}: {text!r} is not an IPv4 or IPv6 address") from None
    _check(not scope or (ip.version == 6 and scope.isdigit() and int(scope) <= 0xFFFFFFFF),
           where, "a %scope is a number, for an IPv6 address only")
    return HostAddress.of(ip, int(scope or 0))


def make_message(spec: dict, where: str, destination: str = "") -> LocalMessage:
    """A message as a client would receive it: the ADM Message serialized to a UserMessage
    packet by the wire codec and read back, so it carries its packet, Type and Offset.
    ``destination``: the path name of the queue it is sent to (for ``direct``)."""
    from mqconform.model.adm import Message
    from mqconform.model.serialization import (
        deserialize_message_from_buffer,
        serialize_message_to_buffer,
    )

    _check(isinstance(spec, dict), where, "must be a mapping")
    unknown = set(spec) - MESSAGE_KEYS
    _check(not unknown, where, f"unknown key(s) {sorted(unknown)}")
    _check(("body" in spec) != ("body_hex" in spec), where, "give exactly one of body, body_hex")
    if "body" in spec:
        body = _str(spec["body"], f"{where}.body", 4 << 20).encode("utf-8")
    else:
        try:
            body = bytes.fromhex(_str(spec["body_hex"], f"{where}.body_hex", 8 << 20))
        except ValueError:
            raise ProvisionError(f"{where}.body_hex: not hexadecimal") from None
    message = Message(body=body,
                      label=_str(spec.get("label", ""), f"{where}.label", 249),
                      priority=_int(spec.get("priority", 3), f"{where}.priority", 0, 7),
                      time_to_be_received=_int(spec.get("time_to_be_received", 0xFFFFFFFF),
                                               f"{where}.time_to_be_received", 0, 0xFFFFFFFF),
                      application_deadletter_queue=_path_name(
                          spec.get("dead_letter_queue", ""), f"{where}.dead_letter_queue"),
                      soap_envelope=_str(spec.get("soap_envelope", ""),
                                         f"{where}.soap_envelope", 1 << 20),
                      soap_compound_message=_str(spec.get("compound_message", ""),
                                                 f"{where}.compound_message", 4 << 20),
                      soap_header=_str(spec.get("soap_header", ""), f"{where}.soap_header",
                                       1 << 20),
                      soap_body=_str(spec.get("soap_body", ""), f"{where}.soap_body", 1 << 20))
    if "delivery" in spec:  # Message.DeliveryGuarantee (MS-MQDMPR/3.1.1.12/R16)
        from mqconform.model.adm import MessageDeliveryGuarantee

        _check(spec["delivery"] in ("express", "recoverable"), f"{where}.delivery",
               "express or recoverable")
        message.delivery_guarantee = MessageDeliveryGuarantee[spec["delivery"].capitalize()]
    if "sent_time" in spec:  # Message.SentTime: seconds since 1970 (UserHeader.SentTime)
        message.sent_time = _int(spec["sent_time"], f"{where}.sent_time", 0, 0xFFFFFFFF)
    if "time_to_reach_queue" in spec:  # Message.TimeToReachQueue, seconds
        message.time_to_reach_queue = _int(spec["time_to_reach_queue"],
                                           f"{where}.time_to_reach_queue", 0, 0xFFFFFFFF)
    _check(bool(message.soap_envelope) == bool(message.soap_compound_message), where,
           "an SRMP message needs both soap_envelope and compound_message")
    direct = spec.get("direct", False)
    _check(isinstance(direct, bool), f"{where}.direct", "must be true/false")
    if direct:
        _check(bool(destination), f"{where}.direct", "needs the queue the message is sent to")
        message.destination_queue_format_name = f"DIRECT=OS:{destination}"
    received_from = (_host(spec["received_from"], f"{where}.received_from")
                     if "received_from" in spec else None)
    from mqconform.model.packet import PacketError

    try:
        packet = serialize_message_to_buffer(message, received_from=received_from)
    except PacketError as exc:
        raise ProvisionError(f"{where}: {exc}") from None
    return deserialize_message_from_buffer(packet)


def _pathname(path: str, computer_name: str, where: str) -> str:
    """A queue path name (MS-MQMQ 2.1.1): ``[computer\\]queue`` or
    ``[computer\\]private$\\queue``; the computer, if given, must be this queue manager."""
    parts = path.split("\\")
    _check(all(parts), where, "has an empty part")
    if len(parts) == 1 or parts[0].lower() == "private$":
        return f"{computer_name}\\{path}"
    _check(parts[0].lower() in (computer_name.lower(), "."), where,
           f"names computer {parts[0]!r}, not this queue manager ({computer_name})")
    return "\\".join([computer_name, *parts[1:]])


def _status_name(status: Any) -> str:
    from mqconform.model.status import name_of

    return name_of(status) if isinstance(status, int) else str(getattr(status, "name", status))


def provision(text: str, source: str = "<queues>", env: Environment | None = None,
              now_ms: int = 0, security: Any = None) -> Provisioned:
    """Build (or extend) a queue manager from a provisioning document. ``security``: the
    server's (server/security.py) when extending; built from the document otherwise."""
    from mqconform.server.security import SecurityError, parse_access, parse_security

    data = load_document(text, source)
    if env is None:
        env = Environment(new_queue_manager(data.get("queue_manager")), now=now_ms)
    qm = env.local_queue_manager
    try:
        if security is None:
            security = parse_security(data.get("security"), qm.computer_name)
        elif "security" in data:
            raise SecurityError("security: only the provisioning file has one")
    except SecurityError as exc:
        raise ProvisionError(str(exc)) from None
    queues_spec = data.get("queues") or []
    _check(isinstance(queues_spec, list), "queues", "must be a list")
    created: dict[str, Queue] = {}
    for i, spec in enumerate(queues_spec):
        where = f"queues[{i}]"
        _check(isinstance(spec, dict), where, "must be a mapping")
        unknown = set(spec) - {"path", "label", "transactional", "quota", "journal_quota",
                               "subqueues", "messages", "access"}
        _check(not unknown, where, f"unknown key(s) {sorted(unknown)}")
        path = _str(spec.get("path"), f"{where}.path", 124)
        pathname = _pathname(path, qm.computer_name, f"{where}.path")
        _check(pathname.lower() not in created, f"{where}.path", "names a queue twice")
        queue = Queue(pathname=pathname)
        set_queue_defaults(env, queue)
        queue.label = _str(spec.get("label", ""), f"{where}.label", 124)
        transactional = spec.get("transactional", False)
        _check(isinstance(transactional, bool), f"{where}.transactional", "must be true/false")
        queue.transactional = transactional
        if "quota" in spec:
            queue.quota = _int(spec["quota"], f"{where}.quota", 1, 0xFFFFFFFF)
        if "journal_quota" in spec:
            queue.journal_quota = _int(spec["journal_quota"], f"{where}.journal_quota", 1,
                                       0xFFFFFFFF)
        result = create_queue(env, queue, skip_directory=True)
        _check(result.status == 0 and result.queue is not None, f"{where}.path",
               f"Create Queue refused it ({_status_name(result.status)})")
        new_queue = result.queue
        created[pathname.lower()] = new_queue
        if "access" in spec:
            try:
                security.access[new_queue.pathname.lower()] = parse_access(
                    spec["access"], f"{where}.access", security)
            except SecurityError as exc:
                raise ProvisionError(str(exc)) from None
        for j, name in enumerate(spec.get("subqueues") or []):
            sub_where = f"{where}.subqueues[{j}]"
            _check(isinstance(name, str) and name and ";" not in name and len(name) <= 32,
                   sub_where, "must be a subqueue name (1-32 characters, no ';')")
            sub = Queue(pathname=f"{new_queue.pathname};{name}", queue_type=new_queue.queue_type,
                        queue_manager=qm, transactional=new_queue.transactional,
                        private_queue_number=new_queue.private_queue_number,
                        quota=new_queue.quota)
            new_queue.subqueue_collection.append(sub)
        for j, message_spec in enumerate(spec.get("messages") or []):
            m_where = f"{where}.messages[{j}]"
            message = make_message(message_spec, m_where, new_queue.pathname)
            message.arrival_time = arrival_time()
            status = enqueue_message(env, new_queue, message)
            _check(status == 0, m_where, f"Enqueue Message refused it (rStatus {status})")
    return Provisioned(env, created, security)


def provision_file(path: str | Path, env: Environment | None = None) -> Provisioned:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProvisionError(f"{path}: cannot read ({exc.strerror})") from None
    return provision(text, str(p), env)


def create_queue_from_spec(env: Environment, spec: dict, security: Any = None) -> Queue:
    """A queue from a control API spec (``POST /queues``: a queues[] entry and ``queue_type``
    Private or Connector); server/control.py and the store's restart share it."""
    import json

    from mqconform.model.adm import QueueType

    spec = dict(spec)
    queue_type = spec.pop("queue_type", None)
    if queue_type not in (None, "Private", "Connector"):
        raise ProvisionError("queue_type: Private or Connector")
    if security is None:
        from mqconform.server.security import Security

        security = Security()
    made = provision(json.dumps({"queues": [spec]}), "request", env=env, security=security)
    [queue] = made.queues.values()
    if queue_type == "Connector":
        queue.queue_type = QueueType.Connector
        queue.private_queue_number = None
    return queue
