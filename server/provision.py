"""Provisioning the reference queue manager from YAML (``mqconform serve --queues FILE``).

The document (its keys: model/provisioning.py's docstring) becomes ADM state in the model
(model/provisioning.py, which the oracle shares); this module reads the file (YAML), keeps the
``security`` section and the queues' ``access`` lists (server/security.py), and gives each
message its arrival time from the wall clock. Every error names the place in the document
(``queues[1].messages[0].priority``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import yaml

from mqconform.model import provisioning
from mqconform.model.adm import Queue
from mqconform.model.choices import Choices
from mqconform.model.provisioning import (  # noqa: F401  (the server's names for them)
    MESSAGE_KEYS,
    Provisioned,
    ProvisionError,
    make_message,
    new_queue_manager,
)
from mqconform.model.runtime import Environment
from mqconform.server.security import Security, SecurityError, parse_access, parse_security


def load_document(text: str, source: str = "<queues>") -> dict:
    """A provisioning document's text (YAML) as the mapping model/provisioning.py takes."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise ProvisionError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") \
            from None
    return provisioning.check_document(data, source)


def arrival_time() -> int:
    """Message.ArrivalTime for a message enqueued now: the UTC time it was added (MS-MQDMPR
    3.1.1.12), in the seconds since 1970-01-01 UTC that R_StartReceive returns as
    pdwArriveTime (MS-MQRR/3.1.4.7/R16); the model's own clock counts from the server's
    start and cannot stand in for it."""
    return int(time.time()) & 0xFFFFFFFF


def _access_hook(security: Security):
    def on_access(queue: Queue, entry: Any, where: str) -> None:
        try:
            security.access[queue.pathname.lower()] = parse_access(entry, where, security)
        except SecurityError as exc:
            raise ProvisionError(str(exc)) from None
    return on_access


def provision(text: str, source: str = "<queues>", env: Environment | None = None,
              now_ms: int = 0, security: Any = None, choices: Choices | None = None
              ) -> Provisioned:
    """Build (or extend) a queue manager from a provisioning document. ``security``: the
    server's (server/security.py) when extending; built from the document otherwise.
    ``choices``: those of a queue manager built here (model/choices.py)."""
    data = load_document(text, source)
    computer_name = env.local_queue_manager.computer_name if env is not None else None
    if env is None:
        env = Environment(new_queue_manager(data.get("queue_manager")), now=now_ms)
        computer_name = env.local_queue_manager.computer_name
        env.choices = choices or env.choices
    try:
        if security is None:
            security = parse_security(data.get("security"), computer_name)
        elif "security" in data:
            raise SecurityError("security: only the provisioning file has one")
    except SecurityError as exc:
        raise ProvisionError(str(exc)) from None
    # arrival_time is looked up at each call (conformance/golden.py pins it)
    made = provisioning.provision(data, env, now_ms, lambda: arrival_time(),
                                  _access_hook(security))
    made.security = security
    return made


def provision_file(path: str | Path, env: Environment | None = None,
                   choices: Choices | None = None) -> Provisioned:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProvisionError(f"{path}: cannot read ({exc.strerror})") from None
    return provision(text, str(p), env, choices=choices)


def create_queue_from_spec(env: Environment, spec: dict, security: Any = None) -> Queue:
    """A queue from a control API spec (``POST /queues``: a queues[] entry and ``queue_type``
    Private or Connector); server/control.py and the store's restart share it."""
    return provisioning.create_queue_from_spec(env, spec, _access_hook(security or Security()))
