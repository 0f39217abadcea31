"""What a conformance run did on purpose, beside its capture: ``wire.pcap`` ->
``wire.expected.json``.

The suite's negative cases break client rules on purpose (a handle used after R_CloseQueue, a
dwRequestId no receive used, a receive never paired) and send requests that do not decode (a
MGMT_OBJECT union arm that does not exist). A trace validator that reads the run's capture sees
them as a client's violations and as decoding errors. ``mqconform run`` therefore lists them in
a file beside the capture, each with the case that made it; ``mqconform captures validate``
reads the file next to each capture it is given and reports those as expected, apart from the
rest, and they do not fail the validation.

How the list is made: the suite's own client is the only client in its capture, and it is
driven only by the scenarios; the run's capture is observed with the same observer the trace
validator uses (model/observer.py), and each client violation and each request that does not
decode is attributed to the case whose frames hold it (results.json). A server violation is
never listed: what the server did is never the suite's to excuse. Nothing is listed for frames
no case claims.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from pathlib import Path
from typing import Any

from mqconform.captures import columns
from mqconform.captures.decode import decode_all
from mqconform.model.observer import Observed, Violation, observe

SUFFIX = ".expected.json"
FORMAT = 1


def sidecar(capture: str | Path) -> Path:
    """The list beside a capture: ``wire.pcap`` -> ``wire.expected.json``."""
    path = Path(capture)
    name = path.name
    for ext in (".gz", ".pcapng", ".pcap", ".cap"):
        if name.endswith(ext):
            name = name[: -len(ext)]
    return path.with_name(name + SUFFIX)


def observed_calls(calls: list[Any]) -> dict[str, list[Observed]]:
    """The decoded calls as the observer reads them, by server."""
    out: dict[str, list[Observed]] = {}
    for call in calls:
        values = {f: getattr(call, columns.OBSERVED_FROM.get(f, f)) for f in Observed.__slots__
                  if f != "complete"}
        values["complete"] = call.decode_error is None
        out.setdefault(call.server, []).append(Observed(**values))
    return out


class _Cases:
    """Which case's frames hold a frame (results.json: each case's first and last frame)."""

    def __init__(self, cases: list[dict]):
        spans = sorted((c["frames"]["first"], c["frames"]["last"], c["case"])
                       for c in cases if c.get("frames"))
        self.firsts = [s[0] for s in spans]
        self.spans = spans

    def at(self, frame: int | None) -> str | None:
        if frame is None:
            return None
        i = bisect_right(self.firsts, frame) - 1
        if i >= 0 and self.spans[i][0] <= frame <= self.spans[i][1]:
            return self.spans[i][2]
        return None


def deliberate(capture: str | Path, cases: list[dict]) -> dict:
    """The run's deliberate departures in ``capture`` (see the module doc), as the sidecar's
    content."""
    decoded = decode_all([capture])
    owner = _Cases(cases)
    violations: list[Violation] = []
    for server, calls in observed_calls(decoded.calls).items():
        violations += observe(calls, server)
    entries = []
    for v in violations:
        case = owner.at(v.request_frame)
        if v.actor != "client" or case is None:
            continue
        entries.append({"kind": "violation", "requirement": v.requirement,
                        "frame": v.request_frame, "connection": v.connection,
                        "client": v.client, "server": v.server,
                        "call_id": v.call_id, "method": v.method, "case": case})
    requests = {f: c for c in decoded.calls for f in (c.request_first_frame,
                                                       c.request_last_frame)}
    for e in decoded.errors:
        case = owner.at(e.frame)
        call = requests.get(e.frame)
        if e.kind != "stub" or call is None or case is None:
            continue  # only requests the suite sent malformed on purpose
        entries.append({"kind": "error", "error_kind": e.kind, "frame": e.frame,
                        "connection": e.connection, "client": call.client,
                        "server": call.server, "call_id": call.call_id,
                        "message": e.message, "case": case})
    entries.sort(key=lambda x: (x["frame"], x["kind"], x.get("requirement", "")))
    return {"format": FORMAT, "capture": Path(capture).name,
            "about": "the suite's deliberate departures from client rules and its deliberately "
                     "malformed requests in this capture, each with its case "
                     "(mqconform captures validate reports them as expected)",
            "expected": entries}


def write(capture: str | Path, results: str | Path) -> Path:
    """``mqconform run``'s last step: the sidecar of its capture, from its results.json."""
    cases = json.loads(Path(results).read_text(encoding="utf-8"))["cases"]
    path = sidecar(capture)
    path.write_text(json.dumps(deliberate(capture, cases), indent=1) + "\n", encoding="utf-8")
    return path


class ExpectedError(ValueError):
    """A sidecar that cannot be read: one line."""


def load(capture: str | Path) -> list[dict] | None:
    """The sidecar beside a capture, or None when there is none."""
    path = sidecar(capture)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        entries = data["expected"]
        if not isinstance(entries, list):
            raise TypeError("expected: not a list")
        return entries
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ExpectedError(f"{path}: unreadable ({exc})") from None


def load_list(path: str | Path) -> list[dict]:
    """A list given by name (``--expected``), not found beside a capture."""
    path = Path(path)
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))["expected"]
        if not isinstance(entries, list):
            raise TypeError("expected: not a list")
        return entries
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ExpectedError(f"{path}: unreadable ({exc})") from None


def violation_key(capture: str, frame: int | None, requirement: str) -> tuple:
    return ("violation", str(capture), frame, requirement)


def error_key(capture: str, frame: int | None, kind: str) -> tuple:
    return ("error", str(capture), frame, kind)


def flow_keys(entries: list[dict]) -> set[tuple]:
    """The entries by the call they name on the wire (client and server endpoints, call_id),
    not by frame: what matches them in another capture of the same traffic (dumpcap's beside
    the run's wire.pcap, or a ring buffer's chunks). Entries of a sidecar without endpoints
    (written before they were listed) give none."""
    out = set()
    for e in entries:
        if not (e.get("client") and e.get("server")) or e.get("call_id") is None:
            continue
        what = e.get("requirement") if e.get("kind") == "violation" else e.get("error_kind")
        out.add((e.get("kind"), e["client"], e["server"], e["call_id"], what))
    return out


def keys(capture: str | Path, entries: list[dict]) -> set[tuple]:
    out = set()
    for e in entries:
        if e.get("kind") == "violation":
            out.add(violation_key(str(capture), e.get("frame"), e.get("requirement")))
        elif e.get("kind") == "error":
            out.add(error_key(str(capture), e.get("frame"), e.get("error_kind")))
    return out
