"""The Wireshark Lua dissector (captures/dissector.py, captures/wireshark/mqconform.lua): the
checked-in script is what generate() makes from wire/ and model/; tshark with the script shows,
for every call our decoder (captures/decode.py) finds in a real run's capture, NDR and NDR64,
RemoteRead and qmmgmt, the method on the request and response frames, the status by its MQ name
on the response frame, and the same parameter values the decoder read; fragmented, coalesced,
big-endian and malformed PDUs end in expert infos, never in a Lua error."""

from __future__ import annotations

import json
import random
import shutil
import struct
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from mqconform.captures import dissector
from mqconform.captures.decode import decode_all
from mqconform.captures.dissector import SCRIPT_PATH, TSHARK_OPTIONS, field_abbrevs, generate
from mqconform.captures.recorder import ACK, FIN, PSH, SYN, build_frame, pcap_header, pcap_record
from mqconform.model import calls as c
from mqconform.model import status as st
from mqconform.model.formats import DlId, MgmtObject, MulticastId, ObjectId, QueueFormat
from mqconform.wire import dcerpc as dce
from mqconform.wire import ndr
from mqconform.wire.types import VARTYPES

TSHARK = shutil.which("tshark")
needs_tshark = pytest.mark.skipif(TSHARK is None, reason="tshark is not installed")
PROTO = {c.REMOTEREAD: "mqrr", c.QMMGMT: "mqmr"}
SEP = "\x1f"  # tshark's aggregator between the occurrences of a field in one frame


# ------------------------------------------------------------------------- generation


def test_the_checked_in_script_is_what_generate_makes():
    assert SCRIPT_PATH.read_text(encoding="utf-8") == generate(), \
        "stale: run python -m mqconform.captures.dissector"


def test_the_script_is_generated_from_wire_and_model():
    text = generate()
    for method in ndr.METHODS.values():
        assert f'name = "{method.call.__name__}"' in text
        for name, _codec in method.request + method.response:
            assert f'n = "{name}"' in text
    for value, name in st.STATUS_NAMES.items():
        assert f'[{value}] = "{name}"' in text
    for name in ("PROPID_MGMT_QUEUE_MESSAGE_COUNT", "PROPID_MGMT_MSMQ_ACTIVEQUEUES",
                 "MQ_LOOKUP_PEEK_NEXT", "MQ_DENY_SHARE", "MQ_MOVE_ACCESS", "RR_NACK",
                 "INFINITE_TIMEOUT", "stBinarySecondSection", "QUEUE_FORMAT_TYPE_SUBQUEUE",
                 "QUEUE_SUFFIX_TYPE_DEADXACT", "MGMT_SESSION", "nca_s_op_rng_error",
                 *VARTYPES.values()):
        assert f'"{name}"' in text, name


def test_a_new_opnum_or_status_reaches_the_script_by_regeneration(monkeypatch):
    monkeypatch.setattr(st, "STATUS_NAMES", {**st.STATUS_NAMES, 0xC00E7777: "MQ_ERROR_TEST"})

    class R_Test(c.Call):  # noqa: N801 - named as the IDL names methods
        interface, opnum = c.REMOTEREAD, 16

    monkeypatch.setitem(ndr.METHODS, (c.REMOTEREAD, 16), ndr._Method(
        R_Test, [("phContext", ndr._CTX), ("dwTestValue", ndr._U32)], [ndr._STATUS]))
    text = generate()
    assert '[3222173559] = "MQ_ERROR_TEST"' in text
    assert 'name = "R_Test"' in text and 'f = "testvalue"' in text
    assert 'abbrev = "mqrr.testvalue"' in text


def test_a_layout_the_runtime_cannot_walk_stops_generation(monkeypatch):
    class Strange:
        pass

    monkeypatch.setitem(ndr.METHODS, (c.REMOTEREAD, 16), ndr._Method(
        c.R_CloseCursor, [("x", Strange())], [ndr._STATUS]))
    with pytest.raises(TypeError, match="no walker"):
        generate()


def test_fields_are_named_by_the_idl_name_without_its_hungarian_prefix():
    rr, mr = field_abbrevs(c.REMOTEREAD), field_abbrevs(c.QMMGMT)
    assert (rr["dwAccess"], rr["dwShareMode"], rr["ulAction"], rr["ulTimeout"]) == \
        ("access", "sharemode", "action", "timeout")
    assert (rr["LookupId"], rr["hCursor"], rr["phCursor"], rr["dwRequestId"], rr["dwAck"]) == \
        ("lookupid", "cursor", "cursor", "requestid", "ack")
    assert rr["pQueueFormat"] == "queueformat" and rr["ppPacketSections"] == "packetsections"
    # same short name, different types: the whole names
    assert (rr["cbPropagationToken"], rr["pbPropagationToken"]) == \
        ("cbpropagationtoken", "pbpropagationtoken")
    assert (mr["lpwszAction"], mr["aProp"], mr["pObjectFormat"]) == \
        ("action", "prop", "objectformat")


def test_the_module_checks_and_rewrites_the_script(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(dissector, "SCRIPT_PATH", tmp_path / "w" / "mqconform.lua")
    assert dissector.main(["--check"]) == 1
    assert dissector.main([]) == 0
    assert dissector.main(["--check"]) == 0
    assert (tmp_path / "w" / "mqconform.lua").read_text(encoding="utf-8") == generate()


# ------------------------------------------------------------------------- install


def test_mqconform_wireshark_install_writes_the_script_and_prints_its_path(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mqconform.cli", "wireshark", "install",
                           "--dir", str(tmp_path / "plugins")], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    path = Path(done.stdout.strip())
    assert path == tmp_path / "plugins" / "mqconform.lua"
    assert path.read_text(encoding="utf-8") == generate()


def test_install_defaults_to_wiresharks_personal_plugins_folder(tmp_path, monkeypatch):
    from mqconform import wireshark_cmd

    monkeypatch.setattr(Path, "home", classmethod(lambda cls: tmp_path))
    monkeypatch.setattr(sys, "platform", "linux")
    assert wireshark_cmd.plugin_dir() == tmp_path / ".local" / "lib" / "wireshark" / "plugins"
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setenv("APPDATA", str(tmp_path / "Roaming"))
    assert wireshark_cmd.plugin_dir() == tmp_path / "Roaming" / "Wireshark" / "plugins"


def test_install_into_a_folder_that_cannot_be_made_is_a_usage_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    done = subprocess.run([sys.executable, "-m", "mqconform.cli", "wireshark", "install",
                           "--dir", str(blocker / "sub")], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "cannot write" in done.stderr


@needs_tshark
def test_tshark_loads_the_installed_plugin_from_the_personal_folder(tmp_path):
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "mqconform.cli", "wireshark", "install"],
                          capture_output=True, text=True, timeout=60,
                          env={**env, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert done.returncode == 0, done.stderr
    fields = subprocess.run([TSHARK, "-G", "fields"], capture_output=True, text=True,
                            timeout=120, env=env).stdout
    assert "\tmqrr.status_name\t" in fields and "\tmqmr.action\t" in fields


# ------------------------------------------------------------------------- tshark


def _tshark(pcap: Path, fields: list[str], *extra: str) -> dict[int, dict[str, list[str]]]:
    """frame number -> field -> its values in the frame, with the script loaded."""
    cmd = [TSHARK, *TSHARK_OPTIONS, "-X", f"lua_script:{SCRIPT_PATH}", "-r", str(pcap), *extra,
           "-T", "fields",
           "-E", "occurrence=a", "-E", f"aggregator={SEP}", "-e", "frame.number",
           "-e", "_ws.expert.message"]
    for f in fields:
        cmd += ["-e", f]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Lua" not in done.stderr and "mqconform.lua" not in done.stderr, done.stderr
    rows = {}
    for line in done.stdout.splitlines():
        parts = line.split("\t")
        row = {f: parts[i + 2].split(SEP) if parts[i + 2] else [] for i, f in enumerate(fields)}
        row["expert"] = parts[1].split(SEP) if parts[1] else []
        assert not [m for m in row["expert"] if "mqconform.lua" in m], (parts[0], row)
        rows[int(parts[0])] = row
    return rows


def _fields() -> tuple[list[str], dict[tuple[str, str], str]]:
    params = {(proto, name): f"{proto}.{short}" for iface, proto in PROTO.items()
              for name, short in field_abbrevs(iface).items()}
    common = [f"{p}.{f}" for p in PROTO.values()
              for f in ("method", "opnum", "status_name", "transfer_syntax", "call_id",
                        "queueformat.name", "queueformat.type")]
    return sorted(set(params.values()) | set(common) | {
        "mqrr.section.type", "mqrr.section.size", "mqmr.propid_name",
        "frame.protocols", "tcp.stream", "tcp.srcport", "tcp.dstport"}), params


def _norm(text: str) -> int | str:
    try:
        return int(text, 0)
    except ValueError:
        return text.replace(":", "").lower()


def _compare(pcap: Path, *extra: str) -> tuple[list[str], int, set]:
    """Every call the decoder finds, against what tshark shows with the script: problems,
    the number of values compared and the (interface, syntax, method) seen."""
    fields, params = _fields()
    rows = _tshark(pcap, fields, *extra)
    decoded = decode_all([pcap])
    problems: list[str] = []
    compared = 0
    seen = set()
    for call in decoded.calls:
        proto = PROTO.get(call.interface_name)
        if proto is None:
            continue
        seen.add((call.interface_name, call.transfer_syntax, call.method))
        where = f"{call.method or call.opnum} call_id {call.call_id}"
        for side, frame, text in (("request", call.request_last_frame, call.request),
                                  ("response", call.response_last_frame, call.response)):
            if frame is None:
                continue
            row = rows[frame]
            if call.method is None:  # an opnum the interface does not have
                if str(call.opnum) not in row[f"{proto}.opnum"]:
                    problems.append(f"{where}: frame {frame} shows no opnum")
                continue
            if call.method not in row[f"{proto}.method"]:
                problems.append(f"{where}: {side} frame {frame} shows no method "
                                f"{row[f'{proto}.method']} (tcp.stream {row['tcp.stream']}, "
                                f"ports {row['tcp.srcport']}>{row['tcp.dstport']}, "
                                f"{row['frame.protocols']})")
            if call.transfer_syntax not in row[f"{proto}.transfer_syntax"]:
                problems.append(f"{where}: {side} frame {frame} syntax")
            if side == "response" and call.decode_error is None:
                want = st.name_of(call.fault if call.fault is not None else call.status)
                compared += 1
                if want not in row[f"{proto}.status_name"]:
                    problems.append(f"{where}: frame {frame} status "
                                    f"{row[f'{proto}.status_name']}, decoder {want}")
            for name, value in (json.loads(text) if text else {}).items():
                field = params.get((proto, name))
                if field is None or isinstance(value, bool):
                    continue
                got = [_norm(v) for v in row[field]]
                compared += 1
                if name == "ppPacketSections":
                    ok = ([_norm(v) for v in row["mqrr.section.type"]],
                          [_norm(v) for v in row["mqrr.section.size"]]) == (
                        [s["SectionBufferType"] for s in value],
                        [s["SectionSize"] for s in value])
                elif isinstance(value, int):
                    ok = value in got
                elif isinstance(value, str):
                    ok = value in row[field] or (value == "" and got in ([], [""]))
                elif isinstance(value, dict) and "hex" in value:  # octets, as tshark's hex
                    raw = [v.replace(":", "").lower() for v in row[field]]
                    ok = value["hex"] in raw or (value["hex"] == "" and raw in ([], [
                        "<missing>"]))  # tshark's text for no octets
                elif isinstance(value, list) and all(isinstance(v, int) for v in value):
                    ok = got == value
                elif isinstance(value, dict) and "m_qft" in value:
                    ok = value["m_qft"] in [_norm(v) for v in
                                            row[f"{proto}.queueformat.type"]]
                    if isinstance(value["value"], str):
                        ok = ok and value["value"] in row[f"{proto}.queueformat.name"]
                elif value is None:
                    ok = True
                else:
                    compared -= 1
                    continue
                if not ok:
                    problems.append(f"{where}: {side} frame {frame} {name}={value!r}, "
                                    f"tshark {field}={row[field]}")
    return problems, compared, seen


def _run(out: Path, *args: str) -> Path:
    done = subprocess.run([sys.executable, "-m", "mqconform.cli", "run", *args,
                           "--report-dir", str(out)], capture_output=True, text=True,
                          timeout=600, cwd=out)
    assert done.returncode == 0, done.stdout + done.stderr
    return out / "wire.pcap"


@pytest.fixture(scope="module")
def ndr_pcap(tmp_path_factory) -> Path:
    """A real run over NDR: the suite against the reference server."""
    return _run(tmp_path_factory.mktemp("ndr"), "--select", "MS-MQRR/3.1.4.7",  # trace: ignore
                "--select", "MS-MQRR/3.1.4.10", "--select", "MS-MQMR/3.1.4")  # trace: ignore


@pytest.fixture(scope="module")
def ndr64_pcap(tmp_path_factory) -> Path:
    """A real run binding RemoteRead with NDR64 (qmmgmt stays NDR: MS-MQMR 2.2)."""
    out = tmp_path_factory.mktemp("ndr64")
    (out / "target.yaml").write_text("endpoint: reference\nndr64: true\n")
    return _run(out, "--target", str(out / "target.yaml"),
                "--select", "MS-MQRR/2.2", "--select", "MS-MQRR/3.1.4.7",  # trace: ignore
                "--select", "MS-MQRR/3.1.4.11", "--select", "MS-MQRR/3.1.4.12",  # trace: ignore
                "--select", "MS-MQRR/3.1.4.13", "--select", "MS-MQMR/3.1.4.2")  # trace: ignore


@needs_tshark
def test_every_call_of_an_ndr_run_shows_its_method_status_and_fields(ndr_pcap):
    problems, compared, seen = _compare(ndr_pcap)
    assert not problems, "\n".join(problems[:20])
    assert {(i, s) for i, s, _ in seen} == {(c.REMOTEREAD, "NDR"), (c.QMMGMT, "NDR")}
    assert {m for _, _, m in seen} >= {"R_OpenQueue", "R_StartReceive", "R_EndReceive",
                                       "R_CreateCursor", "R_QMMgmtGetInfo", "R_QMMgmtAction"}
    assert compared > 2000


@needs_tshark
def test_every_call_of_an_ndr64_run_shows_its_method_status_and_fields(ndr64_pcap):
    problems, compared, seen = _compare(ndr64_pcap)
    assert not problems, "\n".join(problems[:20])
    assert {(i, s) for i, s, _ in seen} == {(c.REMOTEREAD, "NDR64"), (c.QMMGMT, "NDR")}
    assert {m for i, s, m in seen if s == "NDR64"} >= {
        "R_OpenQueue", "R_OpenQueueForMove", "R_MoveMessage", "R_QMEnlistRemoteTransaction",
        "R_StartReceive", "R_StartTransactionalReceive", "R_CreateCursor"}
    assert compared > 2000


GOLDEN_OPNUMS = sorted((Path(__file__).resolve().parents[2] / "captures" / "golden"
                        / "opnums").glob("*/*.pcap"))


@needs_tshark
@pytest.mark.skipif(not GOLDEN_OPNUMS, reason="no golden pcaps (python -m mqconform.conformance.golden)")
def test_every_golden_opnum_pcap_shows_its_method_status_and_fields():
    seen, compared = set(), 0
    for pcap in GOLDEN_OPNUMS:
        problems, n, calls = _compare(pcap)
        assert not problems, f"{pcap.name}: " + "\n".join(problems[:20])
        seen |= calls
        compared += n
    assert {m for _, _, m in seen} >= {cls.__name__ for cls in c.CALLS.values()}
    assert {(i, s) for i, s, _ in seen} == {(c.REMOTEREAD, "NDR"), (c.REMOTEREAD, "NDR64"),
                                            (c.QMMGMT, "NDR")}
    assert compared > 100


def _with_client_port(pcap: Path, port: int, out: Path) -> Path:
    """``pcap`` (one connection, Ethernet and IPv4) with its client's TCP port replaced."""
    data = pcap.read_bytes()
    parts, at, client = [data[:24]], 24, None
    while at < len(data):
        (incl,) = struct.unpack_from("<I", data, at + 8)
        frame = bytearray(data[at + 16:at + 16 + incl])
        tcp = 14 + (frame[14] & 0x0F) * 4
        sport, dport = struct.unpack_from("!HH", frame, tcp)
        client = sport if client is None else client  # the first frame is the client's SYN
        struct.pack_into("!HH", frame, tcp, port if sport == client else sport,
                         port if dport == client else dport)
        parts += [data[at:at + 16], bytes(frame)]
        at += 16 + incl
    out.write_bytes(b"".join(parts))
    return out


@needs_tshark
def test_a_client_port_wireshark_gives_another_protocol_still_shows_the_calls(tmp_path):
    """44818 is EtherNet/IP's port in Wireshark and in Linux's ephemeral range: a connection
    from it showed as ENIP, its bind unseen, unless DCE/RPC's heuristic goes first
    (TSHARK_OPTIONS)."""
    golden = Path(__file__).resolve().parents[2] / "captures" / "golden" / "opnums"
    pcap = _with_client_port(golden / "RemoteRead" / "02-R_OpenQueue-ndr.pcap", 44818,
                             tmp_path / "enip-port.pcap")
    fields = ["-T", "fields", "-e", "frame.number", "-e", "mqrr.method"]
    bare = subprocess.run([TSHARK, "-X", f"lua_script:{SCRIPT_PATH}", "-r", str(pcap), *fields],
                          capture_output=True, text=True, timeout=120, check=True).stdout
    assert "R_OpenQueue" not in bare  # what the option is for
    problems, compared, seen = _compare(pcap)
    assert not problems, "\n".join(problems)
    assert {m for _, _, m in seen} == {"R_OpenQueue"} and compared > 3


@needs_tshark
def test_two_pass_dissection_links_requests_and_responses(ndr64_pcap):
    # a display filter makes tshark build the tree on its first pass too (without one the
    # postdissector sees no fields then, and the second pass cannot look ahead)
    rows = _tshark(ndr64_pcap, ["mqrr.request_in", "mqrr.response_in", "mqrr.method"], "-2",
                   "-Y", "mqrr")
    pairs = {(int(r["mqrr.request_in"][0]), n) for n, r in rows.items() if r["mqrr.request_in"]}
    assert len(pairs) > 100
    # an answer of many fragments spans frames, each linked to the request; the request links
    # to the frame that completes it
    last: dict[int, int] = {}
    for request, response in pairs:
        last[request] = max(last.get(request, 0), response)
        assert rows[request]["mqrr.method"] == rows[response]["mqrr.method"]
    for request, response in last.items():
        assert rows[request]["mqrr.response_in"] == [str(response)]


@needs_tshark
def test_filters_select_calls_by_status_name_action_and_access(ndr_pcap):
    rows = _tshark(ndr_pcap, ["mqmr.action", "mqmr.status_name"], "-Y",
                   'mqmr.action == "PAUSE" or mqmr.status_name == "MQ_ERROR_INVALID_PARAMETER"')
    assert rows and all(r["mqmr.action"] == ["PAUSE"] or
                        r["mqmr.status_name"] == ["MQ_ERROR_INVALID_PARAMETER"]
                        for r in rows.values())
    rows = _tshark(ndr_pcap, ["mqrr.access"], "-Y", "mqrr.access == 0x1")
    assert rows and all(r["mqrr.access"] == ["0x00000001"] for r in rows.values())


# ------------------------------------------------------------------------- synthetic captures

_CTX = bytes(4) + uuid.UUID(int=0x1234).bytes
_GUID = uuid.UUID("6f9619ff-8b86-d011-b42d-00c04fc964ff")
_QF = QueueFormat(3, 0, 0, r"OS:host\private$\q1")
_XACT = bytes(range(16))


def _samples() -> list[tuple[c.Call, c.Result]]:
    """A call and a result of every opnum, and the arms of QUEUE_FORMAT and PROPVARIANT."""
    big = c.SectionBuffer(c.stBinaryFirstSection, 9000, 9000, bytes(range(256)) * 35 + b"x" * 40)
    small = c.SectionBuffer(c.stBinarySecondSection, 64, 3, b"abc")
    received = dict(pdwArriveTime=1700000000, pSequenceId=2 ** 60 + 3,
                    pdwNumberOfSections=2, ppPacketSections=(big, small))
    receive = dict(phContext=_CTX, LookupId=2 ** 62 + 9, hCursor=5,
                   ulAction=c.MQ_LOOKUP_PEEK_NEXT, ulTimeout=c.INFINITE_TIMEOUT, dwRequestId=77,
                   dwMaxBodySize=65536, dwMaxCompoundMessageSize=65536)
    pv = c.PropVariant
    out = [
        (c.R_GetServerPort(), c.R_GetServerPortResult(status=2103)),
        (c.R_OpenQueue(pQueueFormat=_QF, pClientId=_GUID), c.R_OpenQueueResult(pphContext=_CTX)),
        (c.R_OpenQueue(pQueueFormat=QueueFormat(1, 0, 0, _GUID), pClientId=_GUID),
         c.R_OpenQueueResult(status=st.MQ_ERROR_QUEUE_NOT_FOUND, raised=True)),
        (c.R_OpenQueue(pQueueFormat=QueueFormat(2, 0x81, 0, ObjectId(_GUID, 0x2A)),
                       pClientId=_GUID, dwAccess=c.PEEK_ACCESS, dwShareMode=c.MQ_DENY_SHARE),
         c.R_OpenQueueResult(pphContext=_CTX)),
        (c.R_OpenQueue(pQueueFormat=QueueFormat(6, 0, 0, DlId(_GUID, "example.com")),
                       pClientId=_GUID), c.R_OpenQueueResult(pphContext=_CTX)),
        (c.R_OpenQueue(pQueueFormat=QueueFormat(7, 0, 0, MulticastId(0x010000E0, 8001)),
                       pClientId=_GUID), c.R_OpenQueueResult(pphContext=_CTX)),
        (c.R_OpenQueue(pQueueFormat=QueueFormat(8, 5, 0, r"OS:host\private$\q1;sub"),
                       pClientId=_GUID), c.R_OpenQueueResult(pphContext=_CTX)),
        (c.R_CloseQueue(pphContext=_CTX), c.R_CloseQueueResult(pphContext=None)),
        (c.R_CreateCursor(phContext=_CTX), c.R_CreateCursorResult(phCursor=5)),
        (c.R_CloseCursor(phContext=_CTX, hCursor=5),
         c.R_CloseCursorResult(status=st.MQ_ERROR_INVALID_HANDLE)),
        (c.R_PurgeQueue(phContext=_CTX), c.R_PurgeQueueResult()),
        (c.R_StartReceive(**receive), c.R_StartReceiveResult(**received)),
        (c.R_StartReceive(**receive), c.R_StartReceiveResult(status=st.MQ_ERROR_IO_TIMEOUT)),
        (c.R_CancelReceive(phContext=_CTX, dwRequestId=77), c.R_CancelReceiveResult()),
        (c.R_EndReceive(phContext=_CTX, dwAck=c.RR_NACK, dwRequestId=77),
         c.R_EndReceiveResult()),
        (c.R_MoveMessage(phContextFrom=_CTX, ullContextTo=2 ** 63 + 1, LookupId=12,
                         pTransactionId=_XACT), c.R_MoveMessageResult()),
        (c.R_OpenQueueForMove(pQueueFormat=_QF, pClientId=_GUID),
         c.R_OpenQueueForMoveResult(pMoveContext=99, pphContext=_CTX)),
        (c.R_QMEnlistRemoteTransaction(pTransactionId=_XACT, cbPropagationToken=5,
                                       pbPropagationToken=b"token", pQueueFormat=_QF),
         c.R_QMEnlistRemoteTransactionResult()),
        (c.R_QMEnlistRemoteTransaction(pTransactionId=_XACT, cbPropagationToken=9000,
                                       pbPropagationToken=b"t" * 9000, pQueueFormat=_QF),
         c.R_QMEnlistRemoteTransactionResult()),  # a request in three fragments
        (c.R_StartTransactionalReceive(**receive, pTransactionId=_XACT),
         c.R_StartTransactionalReceiveResult(**received)),
        (c.R_SetUserAcknowledgementClass(phContext=_CTX, LookupId=12, usClass=0x8000),
         c.R_SetUserAcknowledgementClassResult()),
        (c.R_EndTransactionalReceive(phContext=_CTX, dwAck=c.RR_ACK, dwRequestId=3),
         c.R_EndTransactionalReceiveResult()),
        (c.R_QMMgmtAction(pObjectFormat=MgmtObject(2, pQueueFormat=_QF),
                          lpwszAction="PAUSE"), c.R_QMMgmtActionResult()),
    ]
    props = (1, 7, 24, 25, 2, 27)
    values = (pv(0x1F, "q1"), pv(0x13, 3), pv(0x100C, [pv(0x101F, ["a", "b"]),
                                                      pv(0x1048, [_GUID]),
                                                      pv(0x1015, [2 ** 40])]),
              pv(0x41, b"\x01\x02\x03"), pv(0x48, _GUID), pv(0x1, None))
    out.append((c.R_QMMgmtGetInfo(pObjectFormat=MgmtObject(2, pQueueFormat=_QF), cp=6,
                                  aProp=props, apVar=tuple(pv(1) for _ in props)),
                c.R_QMMgmtGetInfoResult(apVar=values)))
    out.append((c.R_QMMgmtGetInfo(pObjectFormat=MgmtObject(1), cp=1, aProp=(4,),
                                  apVar=(pv(1),)),
                c.R_QMMgmtGetInfoResult(status=st.MQ_ERROR_ILLEGAL_PROPID)))
    return out


def _bind(iface: uuid.UUID, syntax: dce.SyntaxId, call_id: int, ctx: int = 0) -> list:
    bind = dce.encode_pdu(dce.Bind(5840, 5840, 0, (dce.ContextElement(
        ctx, dce.SyntaxId(iface, 1, 0), (syntax,)),)), call_id=call_id)
    ack = dce.encode_pdu(dce.BindAck(5840, 5840, 0x77, b"2103", (dce.ContextResultItem(
        0, 0, syntax),)), call_id=call_id)
    return [("c", bind), ("s", ack)]


def _pdus(kind: str, body_of, stub: bytes, call_id: int, max_frag: int) -> list[bytes]:
    out = []
    for flags, chunk in dce.fragment_stub(stub, max_frag, 24):
        out.append(dce.encode_pdu(body_of(chunk, len(stub)), call_id=call_id, pfc_flags=flags))
    return out


def _exchange(call: c.Call, result: c.Result | None, ndr64: bool, call_id: int,
              ctx: int = 0, max_frag: int = 4280, req_stub: bytes | None = None,
              resp_stub: bytes | None = None) -> list:
    stub = ndr.encode_request(call, ndr64) if req_stub is None else req_stub
    out = [("c", p) for p in _pdus("q", lambda ch, n: dce.Request(ctx, call.opnum, ch, n), stub,
                                   call_id, max_frag)]
    if resp_stub is None and result is not None and result.raised:
        out.append(("s", dce.encode_pdu(dce.Fault(ctx, result.status), call_id=call_id)))
        return out
    if resp_stub is None:
        resp_stub = ndr.encode_response(call, result, ndr64)
    out += [("s", p) for p in _pdus("r", lambda ch, n: dce.Response(ctx, ch, n), resp_stub,
                                    call_id, max_frag)]
    return out


def _capture(path: Path, connections: list[list], mss: int = 1460,
             coalesce: bool = False) -> Path:
    """TCP conversations (one per list of (side, PDU)), segments of at most ``mss`` octets;
    with ``coalesce``, consecutive PDUs of one side share segments."""
    frames = []
    ts = 1.0
    for n, pdus in enumerate(connections):
        cli, srv = ("10.0.0.1", 50000 + n), ("10.0.0.2", 2103)
        seq = {"c": 1000, "s": 9000}
        ends = {"c": cli, "s": srv}

        def send(side: str, payload: bytes, flags: int = PSH | ACK, seq: dict = seq,
                 ends: dict = ends) -> None:
            nonlocal ts
            a, b = ends[side], ends["s" if side == "c" else "c"]
            for i in range(0, max(len(payload), 1), mss):
                chunk = payload[i:i + mss]
                frames.append((ts, build_frame(a[0], b[0], a[1], b[1], seq[side],
                                               seq["s" if side == "c" else "c"], flags,
                                               chunk, len(frames) + 1)))
                seq[side] += len(chunk) + (1 if flags & (SYN | FIN) else 0)
                ts += 0.001

        send("c", b"", SYN)
        seq["c"] = 1001
        frames.append((ts, build_frame(srv[0], cli[0], srv[1], cli[1], 8999, 1001, SYN | ACK,
                                       b"", 1)))
        seq["s"] = 9000
        i = 0
        while i < len(pdus):
            side, payload = pdus[i]
            i += 1
            while coalesce and i < len(pdus) and pdus[i][0] == side:
                payload += pdus[i][1]
                i += 1
            send(side, payload)
    path.write_bytes(pcap_header() + b"".join(pcap_record(t, f) for t, f in frames))
    return path


def _conversations(ndr64: bool) -> list[list]:
    rr, mr = [], []
    rr += _bind(c.REMOTEREAD_UUID, dce.NDR64 if ndr64 else dce.NDR, 1)
    mr += _bind(c.QMMGMT_UUID, dce.NDR, 1)
    call_id = 2
    for call, result in _samples():
        if call.interface == c.REMOTEREAD:
            rr += _exchange(call, result, ndr64, call_id)
        else:
            mr += _exchange(call, result, False, call_id)
        call_id += 1
    return [rr, mr]


@needs_tshark
@pytest.mark.parametrize("ndr64", [False, True], ids=["NDR", "NDR64"])
def test_every_opnum_and_every_union_arm_fragmented_and_segmented(tmp_path, ndr64):
    pcap = _capture(tmp_path / "all.pcap", _conversations(ndr64), mss=700)
    problems, compared, seen = _compare(pcap)
    assert not problems, "\n".join(problems[:20])
    assert {m for _, _, m in seen} == {cls.__name__ for cls in c.CALLS.values()}
    assert compared > 150
    rows = _tshark(pcap, ["mqrr.queueformat.format_name", "mqmr.vt", "mqmr.propid_name",
                          "mqrr.fault", "mqrr.lookupid"])
    names = {v for r in rows.values() for v in r["mqrr.queueformat.format_name"]}
    assert {r"DIRECT=OS:host\private$\q1", f"PUBLIC={_GUID}",
            f"PRIVATE={_GUID}\\0000002a;JOURNAL", f"DL={_GUID}@example.com",
            "MULTICAST=224.0.0.1:8001", r"DIRECT=OS:host\private$\q1;sub"} <= names
    vts = {int(v, 0) for r in rows.values() for v in r["mqmr.vt"]}
    assert {0x1F, 0x13, 0x100C, 0x101F, 0x1048, 0x1015, 0x41, 0x48, 0x1} <= vts
    assert {"PROPID_MGMT_QUEUE_CONNECTION_HISTORY", "PROPID_MGMT_MSMQ_CONNECTED"} <= {
        v for r in rows.values() for v in r["mqmr.propid_name"]}
    assert str(2 ** 62 + 9) in {v for r in rows.values() for v in r["mqrr.lookupid"]}


@needs_tshark
def test_coalesced_pdus_in_one_segment_are_each_shown(tmp_path):
    conv = _bind(c.REMOTEREAD_UUID, dce.NDR, 1)
    calls = [(c.R_CreateCursor(phContext=_CTX), c.R_CreateCursorResult(phCursor=n))
             for n in range(3)]
    requests = [p for n, (call, _) in enumerate(calls)
                for p in _exchange(call, None, False, 10 + n, resp_stub=b"")[:1]]
    answers = [("s", dce.encode_pdu(dce.Response(0, ndr.encode_response(call, res, False)),
                                    call_id=10 + n)) for n, (call, res) in enumerate(calls)]
    pcap = _capture(tmp_path / "c.pcap", [conv + requests + answers], coalesce=True)
    rows = _tshark(pcap, ["mqrr.method", "mqrr.call_id", "mqrr.cursor", "mqrr.status_name"])
    shown = [r for r in rows.values() if len(r["mqrr.call_id"]) == 3]
    assert len(shown) == 2  # the three requests in one segment, the three answers in another
    assert shown[1]["mqrr.cursor"] == ["0", "1", "2"]
    assert shown[1]["mqrr.status_name"] == ["MQ_OK"] * 3


@needs_tshark
def test_big_endian_pdus_are_decoded_too(tmp_path):
    """C706 14.1: the header and the stub in the sender's byte order (drep 0x00)."""
    conv = _bind(c.REMOTEREAD_UUID, dce.NDR, 1)
    stub = _CTX + struct.pack(">I", 0x01020304)
    request = bytearray(dce.encode_pdu(dce.Request(0, 5, stub), call_id=2))
    response = bytearray(dce.encode_pdu(dce.Response(0, struct.pack(">I", st.MQ_ERROR)),
                                        call_id=2))
    for pdu in (request, response):
        pdu[4] = 0x00
        for at, fmt in ((8, "H"), (10, "H"), (12, "I"), (16, "I"), (20, "H")):
            value = struct.unpack_from("<" + fmt, pdu, at)[0]
            struct.pack_into(">" + fmt, pdu, at, value)
    struct.pack_into(">H", request, 22, 5)  # opnum
    pcap = _capture(tmp_path / "be.pcap", [conv + [("c", bytes(request)), ("s", bytes(response))]])
    rows = _tshark(pcap, ["mqrr.method", "mqrr.cursor", "mqrr.status_name"])
    assert ["R_CloseCursor"] in [r["mqrr.method"] for r in rows.values()]
    assert [str(0x01020304)] in [r["mqrr.cursor"] for r in rows.values()]
    assert ["MQ_ERROR"] in [r["mqrr.status_name"] for r in rows.values()]


def _mutants(stub: bytes, rnd: random.Random) -> list[bytes]:
    cuts = sorted({0, 1, 3, 4, len(stub) // 2, max(len(stub) - 1, 0)})
    out = [stub[:n] for n in cuts if n < len(stub)]
    out.append(stub + b"\x00\x01\x02")  # trailing octets
    out.append(bytes(rnd.randrange(256) for _ in range(len(stub) or 8)))  # garbage
    out.append(b"\xff" * max(len(stub), 16))  # every count 2**32 - 1 (or 2**64 - 1)
    flipped = bytearray(stub)
    for _ in range(3):
        if flipped:
            flipped[rnd.randrange(len(flipped))] ^= 1 << rnd.randrange(8)
    out.append(bytes(flipped))
    return out


@needs_tshark
@pytest.mark.parametrize("ndr64", [False, True], ids=["NDR", "NDR64"])
def test_malformed_stubs_are_expert_infos_never_lua_errors(tmp_path, ndr64):
    rnd = random.Random(6)
    rr = _bind(c.REMOTEREAD_UUID, dce.NDR64 if ndr64 else dce.NDR, 1)
    mr = _bind(c.QMMGMT_UUID, dce.NDR, 1)
    call_id = 2
    for call, result in _samples():
        syntax64 = ndr64 and call.interface == c.REMOTEREAD
        req = ndr.encode_request(call, syntax64)
        resp = ndr.encode_response(call, result, syntax64) if not result.raised else b""
        conv = rr if call.interface == c.REMOTEREAD else mr
        for bad_req in _mutants(req, rnd):
            conv += _exchange(call, result, syntax64, call_id, req_stub=bad_req, resp_stub=resp)
            call_id += 1
        for bad_resp in _mutants(resp, rnd):
            conv += _exchange(call, result, syntax64, call_id, resp_stub=bad_resp)
            call_id += 1
    # a request on a context that was never bound, and an opnum the interface lacks
    rr += [("c", dce.encode_pdu(dce.Request(9, 2, b"\x00" * 8), call_id=call_id)),
           ("c", dce.encode_pdu(dce.Request(0, 99, b""), call_id=call_id + 1)),
           ("s", dce.encode_pdu(dce.Response(0, b"\x00"), call_id=call_id + 1))]
    pcap = _capture(tmp_path / "bad.pcap", [rr, mr], mss=512)
    rows = _tshark(pcap, ["mqrr.method", "mqmr.method", "mqrr.call_id", "mqmr.call_id"])
    experts = [m for r in rows.values() for m in r["expert"]]
    assert sum("Malformed stub" in m for m in experts) > 100
    assert any("octets after the last parameter" in m for m in experts)
    assert any("has no method with opnum 99" in m for m in experts)
    decoded = decode_all([pcap])
    for call in decoded.calls:
        if call.method is None:
            continue
        proto = PROTO[call.interface_name]
        for frame in (call.request_last_frame, call.response_last_frame):
            assert frame is not None
            assert call.method in rows[frame][f"{proto}.method"], (call.call_id, frame)


@needs_tshark
def test_a_pdu_cut_short_by_the_snapshot_length_is_an_expert_info(tmp_path):
    call, result = _samples()[11]  # R_StartReceive with a 9000-octet section
    conv = _bind(c.REMOTEREAD_UUID, dce.NDR, 1) + _exchange(call, result, False, 2,
                                                             max_frag=16000)
    whole = _capture(tmp_path / "whole.pcap", [conv], mss=16000).read_bytes()
    records, pos = [], 24
    while pos < len(whole):
        sec, usec, incl, orig = struct.unpack_from("<IIII", whole, pos)
        records.append((sec, usec, whole[pos + 16:pos + 16 + incl]))
        pos += 16 + incl
    out = bytearray(whole[:24])
    for sec, usec, data in records:  # keep 200 octets of each frame: a snapshot length
        out += struct.pack("<IIII", sec, usec, min(len(data), 200), len(data)) + data[:200]
    (tmp_path / "snap.pcap").write_bytes(bytes(out))
    rows = _tshark(tmp_path / "snap.pcap", ["mqrr.method"])
    experts = [m for r in rows.values() for m in r["expert"]]
    assert any("is cut short" in m for m in experts), experts


GOLDEN_SCENARIOS = sorted((Path(__file__).resolve().parents[2] / "captures" / "golden"
                           / "scenarios").rglob("*.pcap"))


@needs_tshark
@pytest.mark.skipif(not GOLDEN_SCENARIOS, reason="no golden pcaps (python -m mqconform.conformance.golden)")
def test_every_call_of_every_golden_scenario_pcap_shows_its_method_and_status(tmp_path):
    """The scenario pcaps read in one tshark run (conformance.golden.concatenate)."""
    from mqconform.conformance import golden

    merged = tmp_path / "golden-scenarios.pcap"
    merged.write_bytes(golden.concatenate(GOLDEN_SCENARIOS)[0])
    problems, compared, seen = _compare(merged)
    assert not problems, "\n".join(problems[:20])
    assert compared > 1000 and len(seen) >= 15  # the scenarios reach 18 methods
