"""The target file (YAML): what the suite runs against.

```yaml
name: windows-2022               # shown in reports (default: the endpoint)
endpoint: ncacn_ip_tcp:10.0.0.5[2103]   # or `reference` (start the embedded server) or `model`
choices: reference               # reference or model only: `alternate` serves another allowed
                                 # value wherever the documents leave a choice (spec/choices.yaml)
ndr64: false                     # bind RemoteRead with NDR64
computer_name: MQREF             # the target's NetBIOS name, used in queue format names
epm_port: 135                    # endpoint mapper, when the endpoint has no [port]
timeout: 10                      # seconds per call
credentials:                     # NTLM (MS-RPCE RPC_C_AUTHN_WINNT); omit: unauthenticated
  user: alice
  password_env: MQ_PASSWORD      # or password: ... or nt_hash: <32 hex digits>
  domain: MQREF                  # optional
  level: integrity               # connect | integrity (default) | privacy
identities:                      # other callers, for the access-check scenarios (MS-MQRR 2.1,
  administrator: {user: mqadmin, password_env: MQ_ADMIN_PASSWORD}   # MS-MQMR 3); same keys
  reader: {user: mqreader, password_env: MQ_READER_PASSWORD}        # as credentials
capabilities: {ndr64: true, transactions: true, subqueues: true, move: true, qmmgmt: true}
sut_control:
  kind: reference                # reference | command | none
  url: http://127.0.0.1:8080     # reference with an external endpoint: its control API
  token_env: MQ_CONTROL_TOKEN    # the environment variable holding its token (serve
                                 # --control-token-env); omit for one run without a token
  commands:                      # command: per action, an argument list (no shell) or a
    create_queue: [pwsh, -NoProfile, -File, sut.ps1, create_queue, "{path}"]  # shell line
    delete_queue: "my-sut delete {name}"   # (values shell-quoted) (conformance/sut.py)
profile: windows                 # expect the departures the product documents for itself
                                 # in the product behaviour notes (spec/profiles/windows.yaml)
expectations:                    # known deviations: the case fails, the run does not
  - id: MS-MQRR/3.1.4.6/R14
    reason: purge without receive access answers MQ_ERROR_ACCESS_DENIED
```

Every error is one line naming the key (``capabilities.ndr64: must be true or false``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mqconform.conformance.sut import ACTIONS
from mqconform.conformance.targets import DEFAULT_CAPABILITIES

KEYS = {"name", "endpoint", "choices", "ndr64", "computer_name", "epm_port", "timeout",
        "credentials", "identities", "capabilities", "sut_control", "expectations", "profile"}
#: ``--target reference:alternate`` (or model:alternate): the embedded server with its choices
BUILT_IN = re.compile(r"^(reference|model)(?::(\w+))?$")
#: the roles the access-check scenarios call as (features/MS-MQRR/2.1, features/MS-MQMR/3):
#: an administrator of the target, and a user who is not one
ROLES = ("administrator", "reader")
ENDPOINT = re.compile(r"^ncacn_ip_tcp:[^\[\]\s]+(\[\d{1,5}\])?$")


class TargetFileError(ValueError):
    """A target file that cannot be used; one line naming the key."""


@dataclass
class TargetSpec:
    endpoint: str
    name: str
    ndr64: bool = False
    computer_name: str = "MQREF"
    epm_port: int = 135
    timeout: float = 10.0
    credentials: Any = None  # conformance.client.Credentials
    identities: dict[str, Any] = field(default_factory=dict)  # role -> Credentials
    capabilities: dict[str, bool] = field(default_factory=lambda: dict(DEFAULT_CAPABILITIES))
    sut_kind: str = "reference"
    choices: str = "reference"  # model/choices.py PROFILES, for endpoint reference or model
    profile: str | None = None  # spec/profiles/<name>.yaml, joined to the expectations
    sut_url: str | None = None
    sut_token: str | None = field(default=None, repr=False)  # the control API's token
    sut_commands: dict[str, str | list[str]] = field(default_factory=dict)
    expectations: dict[str, str] = field(default_factory=dict)
    source: str = "<target>"


def _need(cond: bool, where: str, why: str) -> None:
    if not cond:
        raise TargetFileError(f"{where}: {why}")


def parse(data: Any, source: str = "<target>", catalog: Any = None) -> TargetSpec:
    _need(isinstance(data, dict), source, "the document must be a mapping")
    unknown = sorted(set(data) - KEYS)
    _need(not unknown, f"{source}: {unknown[0]}" if unknown else source, "unknown key")
    endpoint = data.get("endpoint")
    _need(isinstance(endpoint, str), f"{source}: endpoint", "required, a string")
    _need(endpoint in ("reference", "model") or bool(ENDPOINT.match(endpoint)),
          f"{source}: endpoint", "must be ncacn_ip_tcp:HOST[PORT], reference or model")
    spec = TargetSpec(endpoint=endpoint, name=str(data.get("name") or endpoint), source=source)
    if "choices" in data:
        from mqconform.model.choices import PROFILES

        _need(endpoint in ("reference", "model"), f"{source}: choices",
              "only for endpoint reference or model (the embedded server)")
        _need(data["choices"] in PROFILES, f"{source}: choices",
              f"one of {', '.join(sorted(PROFILES))}")
        spec.choices = data["choices"]
        if "name" not in data and spec.choices != "reference":
            spec.name = f"{endpoint}:{spec.choices}"
    for key in ("ndr64",):
        if key in data:
            _need(isinstance(data[key], bool), f"{source}: {key}", "must be true or false")
            spec.ndr64 = data[key]
    if "computer_name" in data:
        v = data["computer_name"]
        _need(isinstance(v, str) and 0 < len(v) <= 15 and "\\" not in v,
              f"{source}: computer_name", "must be a NetBIOS name (1-15 characters)")
        spec.computer_name = v
    if "epm_port" in data:
        v = data["epm_port"]
        _need(isinstance(v, int) and not isinstance(v, bool) and 0 < v < 65536,
              f"{source}: epm_port", "must be a TCP port")
        spec.epm_port = v
    if "timeout" in data:
        v = data["timeout"]
        _need(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0,
              f"{source}: timeout", "must be a positive number of seconds")
        spec.timeout = float(v)
    if "credentials" in data:
        spec.credentials = _credentials(data["credentials"], f"{source}: credentials")
    if "identities" in data:
        ids = data["identities"]
        _need(isinstance(ids, dict), f"{source}: identities", "must be a mapping of roles")
        for role, creds in ids.items():
            _need(role in ROLES, f"{source}: identities.{role}",
                  f"unknown role (the roles are {', '.join(ROLES)})")
            spec.identities[role] = _credentials(creds, f"{source}: identities.{role}")
    caps = data.get("capabilities", {})
    _need(isinstance(caps, dict), f"{source}: capabilities", "must be a mapping")
    for k, v in caps.items():
        _need(isinstance(v, bool), f"{source}: capabilities.{k}", "must be true or false")
        spec.capabilities[str(k)] = v
    if spec.ndr64:
        _need(spec.capabilities.get("ndr64", True), f"{source}: ndr64",
              "set, but capabilities.ndr64 is false")
    _sut(data.get("sut_control"), spec, source)
    _expectations(data.get("expectations"), spec, source, catalog)
    if "profile" in data:
        _profile(data["profile"], spec, source, catalog)
    return spec


def _sut(sut: Any, spec: TargetSpec, source: str) -> None:
    if sut is None:
        spec.sut_kind = "reference" if spec.endpoint in ("reference", "model") else "none"
        return
    if isinstance(sut, str):
        sut = {"kind": sut}
    _need(isinstance(sut, dict), f"{source}: sut_control", "must be a mapping or a kind")
    unknown = sorted(set(sut) - {"kind", "url", "commands", "token_env"})
    _need(not unknown, f"{source}: sut_control.{unknown[0] if unknown else ''}", "unknown key")
    kind = sut.get("kind")
    _need(kind in ("reference", "command", "none"), f"{source}: sut_control.kind",
          "must be reference, command or none")
    spec.sut_kind = kind
    if kind == "reference":
        url = sut.get("url")
        if spec.endpoint in ("reference", "model"):
            _need(url is None, f"{source}: sut_control.url", "only for an external endpoint")
        else:
            _need(isinstance(url, str) and url.startswith("http://"),
                  f"{source}: sut_control.url", "required for an external endpoint: "
                  "http://HOST:PORT of its control API")
        spec.sut_url = url
        if "token_env" in sut:
            _need(url is not None, f"{source}: sut_control.token_env",
                  "only with sut_control.url (the embedded server's token is its own)")
            name = sut["token_env"]
            value = os.environ.get(name) if isinstance(name, str) else None
            # the value is never quoted: a token written here by mistake stays off the terminal
            _need(bool(value), f"{source}: sut_control.token_env",
                  "names no set environment variable (value not shown)")
            spec.sut_token = value
    elif "token_env" in sut:
        _need(False, f"{source}: sut_control.token_env", "only for kind reference")
    if kind == "command":
        commands = sut.get("commands")
        _need(isinstance(commands, dict) and bool(commands), f"{source}: sut_control.commands",
              "required: a mapping of action to shell template")
        for action, template in commands.items():
            _need(action in ACTIONS, f"{source}: sut_control.commands.{action}",
                  f"unknown action (one of {', '.join(ACTIONS)})")
            _need((isinstance(template, str) and bool(template.strip()))
                  or (isinstance(template, list) and bool(template)
                      and all(isinstance(a, str | int | float) and not isinstance(a, bool)
                              for a in template)),
                  f"{source}: sut_control.commands.{action}",
                  "must be a shell line or a list of arguments")
        spec.sut_commands = {a: [str(x) for x in c] if isinstance(c, list) else c
                             for a, c in commands.items()}


def _profile(name: Any, spec: TargetSpec, source: str, catalog: Any) -> None:
    """The profile's departures join the expectations (the file's own reason wins)."""
    from mqconform.spec import profiles

    _need(isinstance(name, str) and name in profiles.names(), f"{source}: profile",
          f"one of {', '.join(profiles.names())}")
    if catalog is None:
        from mqconform.spec.catalog import load

        catalog = load()
    try:
        expected = profiles.expectations(name, catalog)
    except profiles.ProfileError as exc:
        raise TargetFileError(f"{source}: profile: {exc}") from None
    spec.profile = name
    for rid, reason in expected.items():
        spec.expectations.setdefault(rid, reason)


def _expectations(items: Any, spec: TargetSpec, source: str, catalog: Any) -> None:
    if items is None:
        return
    _need(isinstance(items, list), f"{source}: expectations", "must be a list")
    if catalog is None:
        from mqconform.spec.catalog import load

        catalog = load()
    known = {r.id for r in catalog}
    for i, item in enumerate(items):
        where = f"{source}: expectations[{i}]"
        _need(isinstance(item, dict), where, "must be a mapping with id and reason")
        unknown = sorted(set(item) - {"id", "reason"})
        _need(not unknown, f"{where}.{unknown[0] if unknown else ''}", "unknown key")
        rid = item.get("id")
        _need(isinstance(rid, str), f"{where}.id", "required, a requirement ID")
        _need(rid in known, f"{where}.id", f"unknown requirement ID {rid}")
        reason = item.get("reason")
        _need(isinstance(reason, str) and reason.strip(), f"{where}.reason",
              "required: why the deviation is expected")
        spec.expectations[rid] = reason


def load(target: str, catalog: Any = None) -> TargetSpec:
    """``target``: ``reference``, ``model``, an endpoint (no SUT control) or the path of a
    target file."""
    built_in = BUILT_IN.match(target)
    if built_in and built_in.group(2):
        return parse({"endpoint": built_in.group(1), "choices": built_in.group(2)}, target,
                     catalog)
    if target in ("reference", "model") or ENDPOINT.match(target):
        return parse({"endpoint": target}, target, catalog)
    p = Path(target)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise TargetFileError(f"{target}: cannot read ({exc.strerror or exc})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{target}:{mark.line + 1}" if mark else target
        raise TargetFileError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") \
            from None
    return parse(data, target, catalog)


def _credentials(data: Any, where: str) -> Any:
    """The credentials mapping (module doc); errors never quote a secret."""
    from mqconform.conformance.client import Credentials
    from mqconform.wire.auth import AUTH_LEVELS as LEVELS
    from mqconform.wire.auth import secret_from

    _need(isinstance(data, dict), where, "must be a mapping")
    unknown = set(data) - {"user", "password", "password_env", "nt_hash", "domain", "level"}
    _need(not unknown, where, f"unknown key(s) {sorted(unknown)}")
    user = data.get("user")
    _need(isinstance(user, str) and bool(user), f"{where}.user", "must be a user name")
    try:
        password, nt_hash = secret_from(data, where)
    except ValueError as exc:
        raise TargetFileError(str(exc)) from None
    domain = data.get("domain", "")
    _need(isinstance(domain, str), f"{where}.domain", "must be a string")
    level = data.get("level", "integrity")
    _need(level in LEVELS, f"{where}.level", f"must be one of {', '.join(LEVELS)}")
    return Credentials(user, password, domain, nt_hash, LEVELS[level])
