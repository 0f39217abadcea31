"""Authentication settings the server and the suite's client share (no socket, no NTLM):
the MS-RPCE authentication levels by name, and reading a secret from the provisioning
file's users or a target file's credentials without ever quoting it."""

from __future__ import annotations

import os
import re

#: MS-RPCE 2.2.1.1.8 authentication levels a client may ask for by name
AUTH_LEVELS = {"connect": 2, "integrity": 5, "privacy": 6}


def secret_from(spec: dict, where: str) -> tuple[str, str]:
    """(password, NT hash in hex) from a mapping that gives exactly one of ``password``,
    ``password_env`` (the name of an environment variable holding it) or ``nt_hash`` (32 hex
    digits); the other is "". A ValueError "where.key: why" names the key, never the
    secret (the provisioning file's users and a target file's credentials share it)."""
    given = [k for k in ("password", "password_env", "nt_hash") if k in spec]
    if len(given) != 1:
        raise ValueError(f"{where}: give exactly one of password, password_env, nt_hash")
    if "password" in spec:
        if not isinstance(spec["password"], str) or not spec["password"]:
            raise ValueError(f"{where}.password: must be a non-empty string")
        return spec["password"], ""
    if "password_env" in spec:
        name = spec["password_env"]
        if not isinstance(name, str) or not os.environ.get(name):
            # a password put here by mistake must not reach the terminal, and a password can
            # be shaped like a variable's name (HUNTER2_PW): the value is never quoted
            raise ValueError(f"{where}.password_env: names no set environment variable "
                             "(value not shown)")
        return os.environ[name], ""
    text = spec["nt_hash"]
    if not isinstance(text, str) or not re.fullmatch(r"[0-9a-fA-F]{32}", text):
        raise ValueError(f"{where}.nt_hash: must be 32 hexadecimal digits")
    return "", text
