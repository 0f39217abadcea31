"""The Wireshark Lua dissector for RemoteRead (MS-MQRR) and qmmgmt (MS-MQMR), generated from
wire/'s and model/'s definitions: ``generate()`` returns the script; the copy checked in as
captures/wireshark/mqconform.lua is held equal to it by tests/captures/test_dissector.py, and
``mqconform wireshark install`` writes it where Wireshark looks for personal Lua plugins.

    python -m mqconform.captures.dissector           # rewrite captures/wireshark/mqconform.lua
    python -m mqconform.captures.dissector --check   # exit 1 if it differs from generate()

What is generated and from where (nothing of it is written twice by hand):

* interfaces by UUID, version and transfer syntaxes: wire.ndr.INTERFACES, wire.ndr.NDR/NDR64;
* methods by interface and opnum, with the [in] and [out] parameters of each in IDL order and
  the layout of each parameter (a descriptor the Lua walks: primitives, [range], [ref]
  structures, conformant arrays, strings, SectionBuffer**): wire.ndr.METHODS; the void
  methods: model.calls.VOID_METHODS;
* the alignment and minimum size of each IDL type and the arms of the QUEUE_FORMAT and
  PROPVARIANT unions: wire.types (GUID, QUEUE_FORMAT, ..., _QF_ARMS, _VT_ARMS, VARTYPES);
* names of values: MQ statuses (model.status.STATUS_NAMES), QUEUE_FORMAT_TYPE,
  QUEUE_SUFFIX_TYPE and MgmtObjectType (model.formats), SectionType, ulAction, dwAccess,
  dwShareMode, dwAck and ulTimeout constants (model.calls), PROPIDs of the machine and queue
  tables and the action strings (model.mqmr);
* the Wireshark fields: one protocol per interface (``mqrr`` RemoteRead, ``mqmr`` qmmgmt),
  common fields (method, status, ...) and one field per parameter, named by the parameter's
  IDL name without its Hungarian prefix, in lower case (dwAccess: ``mqrr.access``,
  lpwszAction: ``mqmr.action``; two parameters that would share a name with different types
  keep their whole names: ``mqrr.cbpropagationtoken``, ``mqrr.pbpropagationtoken``).

The Lua runtime below (``_RUNTIME``) is the part that is not data: how NDR and NDR64 lay out
each kind of type (the two phases of C706 14.3.12.3, as wire/types.py does them), how a
connection's binds give its presentation contexts, how fragments join, how the tree is drawn.
A kind of type or of parameter codec the runtime does not know makes ``generate()`` raise, so
that a change in wire/ cannot reach the script half-done.

How it hooks into Wireshark: Wireshark has no dissector for these interfaces (their stubs show
as "Stub data"), so the script registers a postdissector that runs after Wireshark's own
DCE/RPC dissector on every frame. For each DCE/RPC PDU of the frame it finds the PDU through
the ``dcerpc.pkt_type`` field (its data source and offset: the frame, or the TCP reassembly of
the PDU), reads the connection-oriented header, follows bind / alter_context and their acks per
TCP stream (``tcp.stream``) and presentation context (which interface, NDR or NDR64),
reassembles request and response fragments per call_id, and walks the stub.
"""

from __future__ import annotations

import re
import sys
import uuid
from pathlib import Path
from typing import Any

from mqconform.captures import generated
from mqconform.model import calls as c
from mqconform.model import formats, mqmr
from mqconform.model import status as st
from mqconform.wire import dcerpc, ndr
from mqconform.wire import types as wt

__all__ = ["generate", "SCRIPT_PATH", "TSHARK_OPTIONS", "field_abbrevs", "main"]

#: the checked-in copy of generate()'s output
SCRIPT_PATH = Path(__file__).with_name("wireshark") / "mqconform.lua"

#: for tshark (and, as a preference, Wireshark) reading a capture of ncacn_ip_tcp: DCE/RPC's
#: heuristic before the protocol registered for a TCP port. A connection's ephemeral client
#: port can be one of those (44818 EtherNet/IP, 48898 ADS, 57000 IRC, ...: 253 ports of
#: 1024-65535 in Wireshark 4.0, 7 of them in Linux's ephemeral range), and Wireshark tries the
#: lower of the two ports first: the whole connection then shows as that protocol, its
#: binds unseen. In Wireshark: Preferences > Protocols > TCP > "Try heuristic sub-dissectors
#: first".
TSHARK_OPTIONS = ("-o", "tcp.try_heuristic_first:TRUE")

#: Wireshark protocol per interface: (filter name, title)
PROTOCOLS = {c.REMOTEREAD: ("mqrr", "MSMQ RemoteRead (MS-MQRR)"),
             c.QMMGMT: ("mqmr", "MSMQ qmmgmt (MS-MQMR)")}

#: the kinds of wire.types types the Lua runtime walks
_TYPE_KINDS = ("guid", "context_handle", "xactuow", "objectid", "multicast_id", "dl_id",
               "queue_format", "mgmt_object", "section_buffer", "propvariant")

#: Hungarian prefixes of the IDL's parameter names (dropped from field names)
_HUNGARIAN = re.compile(r"^(?:lpwsz|pdw|pph|ull|dw|ul|us|cb|pb|ph|pp|ap|p|h|f|a)(?=[A-Z])")

#: parameters whose values are named constants of model.calls: IDL name -> (which names,
#: base, how: "vals" a value_string (others show as Unknown), "append" the name after the
#: number when one matches (dwAccess is a set of bits; ulTimeout a number of milliseconds))
_PARAM_CONSTANTS = {
    "ulAction": (lambda n: n.startswith(("MQ_ACTION_", "MQ_LOOKUP_")), "HEX", "vals"),
    "dwAccess": (lambda n: n.endswith("_ACCESS"), "HEX", "append"),
    "dwShareMode": (lambda n: n.startswith("MQ_DENY_"), "HEX", "vals"),
    "dwAck": (lambda n: n.startswith("RR_") and n.endswith("ACK"), "HEX", "vals"),
    "ulTimeout": (lambda n: n == "INFINITE_TIMEOUT", "DEC", "append"),
}


# ============================================================================ descriptors


def _type_kind(t: Any) -> str | None:
    """The kind name of one of wire.types' public type objects (GUID -> "guid")."""
    for name in wt.__all__:
        if getattr(wt, name, None) is t and name.lower() in _TYPE_KINDS:
            return name.lower()
    return None


def _type_desc(t: Any) -> dict:
    """A wire.types type as a descriptor the Lua runtime walks."""
    kind = _type_kind(t)
    if kind is not None:
        return {"t": kind}
    if isinstance(t, wt._Prim):  # ULONG, the primitive arms (and _LargeInteger)
        return {"t": "prim", "k": t.kind}
    if isinstance(t, wt._Unique):
        return {"t": "unique", "target": "string" if t.target == "string"
                else _type_desc(t.target)}
    if isinstance(t, wt._Counted):
        d = {"t": "counted", "name": t.name, "count": t.count_name}
        if t.elem is not None:
            d["elem"] = _type_desc(t.elem)
        return d
    raise TypeError(f"the Lua dissector has no walker for {t!r} (wire/types.py)")


def _codec_desc(codec: Any) -> dict:
    """A parameter codec of wire/ndr.py as a descriptor."""
    if isinstance(codec, ndr._Range):
        return {"t": "prim", "k": codec.kind, "lo": codec.lo, "hi": codec.hi}
    if isinstance(codec, ndr._Prim):
        return {"t": "prim", "k": codec.kind}
    if isinstance(codec, ndr._Ref):
        return _type_desc(codec.type)
    if isinstance(codec, ndr._RefString):
        return {"t": "string"}
    if isinstance(codec, ndr._ConformantArray):
        return {"t": "carray", "elem": _type_desc(codec.elem), "size": codec.size}
    if isinstance(codec, ndr._ByteArray):
        return {"t": "bytes", "size": codec.size}
    if isinstance(codec, ndr._Sections):
        return {"t": "sections", "size": codec.SIZE}
    raise TypeError(f"the Lua dissector has no walker for {codec!r} (wire/ndr.py)")


def _kinds(desc: dict, out: set[str]) -> set[str]:
    """Every kind a descriptor reaches, arms of the unions included."""
    kind = desc["t"]
    new = kind not in out
    out.add(kind)
    for key in ("elem", "target"):
        if isinstance(desc.get(key), dict):
            _kinds(desc[key], out)
    if not new:  # its arms are in already (and PROPVARIANT holds PROPVARIANTs)
        return out
    arms = {"queue_format": _qf_arms(), "propvariant": _vt_arms(),
            "mgmt_object": {0: {"t": "queue_format"}}, "dl_id": {0: {"t": "string"}},
            "objectid": {0: {"t": "guid"}},
            "sections": {0: {"t": "section_buffer"}}}.get(kind, {})
    for arm in arms.values():
        if arm is not None:
            _kinds(arm, out)
    return out


def _qf_arms() -> dict[int, dict | None]:
    return {qft: None if arm is None else _type_desc(arm) for qft, arm in wt._QF_ARMS.items()}


def _vt_arms() -> dict[int, dict | None]:
    return {vt: None if arm is None else _type_desc(arm) for vt, arm in wt._VT_ARMS.items()}


# ============================================================================ fields


def _short(name: str) -> str:
    return _HUNGARIAN.sub("", name).lower()


def _param_ftype(desc: dict) -> tuple[str, str]:
    """(ProtoField constructor, base) of a parameter's field."""
    kind = desc["t"]
    if kind == "prim":
        return {"u8": ("uint8", "DEC"), "u16": ("uint16", "DEC"), "u32": ("uint32", "DEC"),
                "i32": ("int32", "DEC"), "u64": ("uint64", "DEC"), "i8": ("int8", "DEC"),
                "i16": ("int16", "DEC"), "i64": ("int64", "DEC")}[desc["k"]]
    if kind in ("context_handle", "xactuow", "bytes"):
        return "bytes", "NONE"
    if kind == "guid":
        return "guid", "NONE"
    if kind == "string":
        return "string", "NONE"
    if kind == "carray" and desc["elem"]["t"] == "prim":  # aProp: the field is its elements'
        return _param_ftype(desc["elem"])
    return "none", "NONE"  # a subtree: QUEUE_FORMAT, MGMT_OBJECT, arrays, sections


def _params(interface: str) -> list[tuple[str, dict]]:
    """(IDL name, descriptor) of every parameter of an interface's methods, first seen first."""
    seen: dict[str, dict] = {}
    for (iface, _opnum), method in sorted(ndr.METHODS.items(), key=lambda kv: kv[0][1]):
        if iface != interface:
            continue
        for name, codec in method.request + method.response:
            if name != "status":
                seen.setdefault(name, _codec_desc(codec))
    return list(seen.items())


def field_abbrevs(interface: str) -> dict[str, str]:
    """IDL parameter name -> the field's name after the protocol (``dwAccess`` -> ``access``).
    Parameters whose short names meet with different field types keep their whole names."""
    params = _params(interface)
    types: dict[str, set] = {}
    for name, desc in params:
        types.setdefault(_short(name), set()).add(_param_ftype(desc))
    return {name: _short(name) if len(types[_short(name)]) == 1 else name.lower()
            for name, _ in params}


def _constant_names(pick: Any) -> dict[int, str]:
    """value -> name of model.calls' constants ``pick`` selects; a value with several names
    takes the one with the MQ_ prefix (then the first defined)."""
    out: dict[int, str] = {}
    for name, value in vars(c).items():
        if not name.isupper() or not isinstance(value, int) or not pick(name):
            continue
        if value not in out or (name.startswith("MQ_") and not out[value].startswith("MQ_")):
            out[value] = name
    return dict(sorted(out.items()))


def _fields(interface: str) -> list[dict]:
    """The fields of the interface's protocol, in the order Wireshark lists them."""
    proto = PROTOCOLS[interface][0]
    fields = [
        {"key": "interface", "name": "Interface", "type": "string"},
        {"key": "method", "name": "Method", "type": "string"},
        {"key": "opnum", "name": "Opnum", "type": "uint16", "base": "DEC"},
        {"key": "type", "name": "PDU type", "type": "string",
         "desc": "request, response, fault, or bind for a presentation context"},
        {"key": "call_id", "name": "Call ID", "type": "uint32", "base": "DEC"},
        {"key": "ctx_id", "name": "Context ID", "type": "uint16", "base": "DEC"},
        {"key": "transfer_syntax", "name": "Transfer syntax", "type": "string",
         "desc": "NDR or NDR64, as the bind_ack accepted it"},
        {"key": "request_in", "name": "Request in frame", "type": "framenum"},
        {"key": "response_in", "name": "Response in frame", "type": "framenum"},
        {"key": "stub_len", "name": "Stub length", "type": "uint32", "base": "DEC"},
        {"key": "sealed", "name": "Sealed", "type": "bool",
         "desc": "the stub was sent at packet privacy (MS-RPCE 2.2.1.1.8): it is encrypted "
                 "and not decoded"},
        {"key": "status", "name": "Status", "type": "uint32", "base": "HEX",
         "desc": "the return value (HRESULT or DWORD), or the fault PDU's status"},
        {"key": "status_name", "name": "Status name", "type": "string",
         "desc": "the MQ name of the status, or 0xXXXXXXXX"},
        {"key": "fault", "name": "Fault status", "type": "uint32", "base": "HEX",
         "desc": "the fault PDU's status: a void method's MQ status, or an RPC code"},
    ]
    abbrevs = field_abbrevs(interface)
    added: dict[str, dict] = {}
    kinds: set[str] = set()
    for name, desc in _params(interface):
        _kinds(desc, kinds)
        key = abbrevs[name]
        if key in added:
            if name not in added[key]["name"].split(", "):
                added[key]["name"] += f", {name}"
            continue
        ftype, base = _param_ftype(desc)
        field = {"key": key, "name": name, "type": ftype, "base": base,
                 "desc": f"{name} (IDL parameter)"}
        if name in _PARAM_CONSTANTS:
            _, field["base"], how = _PARAM_CONSTANTS[name]
            if how == "vals":
                field["vals"] = name
        added[key] = field
        fields.append(field)
    sub = []
    if "queue_format" in kinds:
        sub += [{"key": "queueformat.type", "name": "m_qft", "type": "uint8", "base": "DEC",
                 "vals": "qft"},
                {"key": "queueformat.suffix", "name": "Suffix type", "type": "uint8",
                 "base": "DEC", "vals": "suffix", "mask": formats.QUEUE_FORMAT_SUFFIX_MASK},
                {"key": "queueformat.flags", "name": "Flags", "type": "uint8", "base": "HEX",
                 "mask": formats.QUEUE_FORMAT_FLAGS_MASK},
                {"key": "queueformat.name", "name": "Queue", "type": "string",
                 "desc": "the value of the QUEUE_FORMAT union's arm, as text"},
                {"key": "queueformat.format_name", "name": "Format name", "type": "string"}]
    if "mgmt_object" in kinds:
        sub += [{"key": "mgmt.type", "name": "MgmtObjectType", "type": "uint32",
                 "base": "DEC", "vals": "mgmt"}]
    if "sections" in kinds:
        sub += [{"key": "section.type", "name": "SectionBufferType", "type": "uint32",
                 "base": "DEC", "vals": "section"},
                {"key": "section.size_alloc", "name": "SectionSizeAlloc", "type": "uint32",
                 "base": "DEC"},
                {"key": "section.size", "name": "SectionSize", "type": "uint32", "base": "DEC"},
                {"key": "section.data", "name": "pSectionBuffer", "type": "bytes"}]
    if "propvariant" in kinds:
        sub += [{"key": "vt", "name": "vt", "type": "uint16", "base": "HEX", "vals": "vt"},
                {"key": "value", "name": "Value", "type": "string"},
                {"key": "propid_name", "name": "Property", "type": "string",
                 "desc": "the PROPID's name in the machine or queue table of MS-MQMR 2.2.3"}]
    fields += sub
    for f in fields:
        f["abbrev"] = f"{proto}.{f['key']}"
        f.setdefault("base", "NONE")
    return fields


# ============================================================================ the data block


def _methods(interface: str) -> dict[int, dict]:
    abbrevs = field_abbrevs(interface)
    out = {}
    for (iface, opnum), method in sorted(ndr.METHODS.items(), key=lambda kv: kv[0][1]):
        if iface != interface:
            continue

        def params(items: list) -> list[dict]:
            return [{"n": name, "f": "status" if name == "status" else abbrevs[name],
                     "d": {"t": "status"} if name == "status" else _codec_desc(codec)}
                    for name, codec in items]

        out[opnum] = {"name": method.call.__name__, "void": method.call in c.VOID_METHODS,
                      "request": params(method.request), "response": params(method.response)}
    return out


def _fault_names() -> dict[int, str]:
    """The DCE/RPC runtime's fault codes wire/dcerpc.py names (nca_s_*, rpc_x_*): value ->
    name, the first name of a value winning."""
    out: dict[int, str] = {}
    for name, value in vars(dcerpc).items():
        if name.startswith(("NCA_S_", "RPC_X_")) and isinstance(value, int):
            out.setdefault(value, name.lower())
    return dict(sorted(out.items()))


def _data() -> dict:
    types = {}
    for name in wt.__all__:
        obj = getattr(wt, name)
        kind = _type_kind(obj)
        if kind is not None:
            types[kind] = {"align": list(obj.ALIGN), "min": obj.min_size}
    missing = set(_TYPE_KINDS) - set(types)
    if missing:
        raise TypeError(f"wire.types no longer defines {sorted(missing)}")
    interfaces = {}
    for name, (iface_uuid, version, syntaxes) in ndr.INTERFACES.items():
        proto, title = PROTOCOLS[name]
        interfaces[str(iface_uuid)] = {
            "name": name, "proto": proto, "version": f"{version[0]}.{version[1]}",
            "syntaxes": ["NDR64" if s == ndr.NDR64 else "NDR" for s in syntaxes]}
    suffix_text = {int(v): k for k, v in formats._SUFFIX_KEYWORDS.items()}
    keywords = {int(qft): kind.value for kind, qft in formats._KIND_QFT.items()}
    keywords[int(formats.QueueFormatType.QUEUE_FORMAT_TYPE_SUBQUEUE)] = \
        formats.FormatNameKind.DIRECT.value
    return {
        "interfaces": interfaces,
        "syntaxes": {str(ndr.NDR[0]): "NDR", str(ndr.NDR64[0]): "NDR64"},
        # C706 12.6: PDU types and the pfc_flags the dissector reads (wire/dcerpc.py)
        "ptype": {t.name: int(t) for t in dcerpc.PType},
        "pfc": {"FIRST_FRAG": dcerpc.PFC_FIRST_FRAG, "LAST_FRAG": dcerpc.PFC_LAST_FRAG,
                "OBJECT_UUID": dcerpc.PFC_OBJECT_UUID},
        # MS-RPCE 2.2.1.1.8: the auth_level whose stubs are encrypted
        "privacy": dcerpc.AUTHN_LEVEL_PKT_PRIVACY,
        "protocols": [{"abbrev": PROTOCOLS[i][0], "title": PROTOCOLS[i][1],
                       "interface": i, "fields": _fields(i)} for i in ndr.INTERFACES],
        "methods": {i: _methods(i) for i in ndr.INTERFACES},
        "types": types,
        "qf_arms": _qf_arms(),
        "qf_arm_names": {int(k): v[0] for k, v in formats.UNION_ARMS.items() if v},
        "vt_arms": _vt_arms(),
        "max_pv_depth": wt.MAX_PROPVARIANT_DEPTH,
        "mgmt_queue": int(formats.MgmtObjectType.MGMT_QUEUE),
        "mgmt_machine": int(formats.MgmtObjectType.MGMT_MACHINE),
        "format_keywords": keywords,
        "suffix_keywords": suffix_text,
        "vals": {
            "status": dict(sorted(st.STATUS_NAMES.items())),
            "qft": {int(v): v.name for v in formats.QueueFormatType},
            "suffix": {int(v): v.name for v in formats.QueueSuffixType},
            "mgmt": {int(v): v.name for v in formats.MgmtObjectType},
            "section": dict(sorted(c.SECTION_TYPES.items())),
            "vt": dict(wt.VARTYPES),
            "machine_propid": {k: p.name for k, p in sorted(mqmr.MACHINE_PROPERTIES.items())},
            "queue_propid": {k: p.name for k, p in sorted(mqmr.QUEUE_PROPERTIES.items())},
            **{name: _constant_names(pick) for name, (pick, *_) in _PARAM_CONSTANTS.items()},
        },
        "append_names": [name for name, (*_, how) in _PARAM_CONSTANTS.items()
                         if how == "append"],
        "known_strings": {"lpwszAction": sorted(mqmr.ACTIONS)},  # MS-MQMR 3.1.4.2
        "fault_names": _fault_names(),
    }


def _lua(value: Any, indent: int = 0, lead: int = 0) -> str:
    """A Python value as a Lua literal (dicts keep their order; None is left out). ``lead``:
    the characters before the value on its line, so that lines stay within 100 columns."""
    pad = "  " * (indent + 1)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, uuid.UUID):
        return _lua(str(value))
    if isinstance(value, (list, tuple)):
        parts = [(v, "") for v in value]
    elif isinstance(value, dict):
        parts = []
        for k, v in value.items():
            if v is None:
                continue
            key = k if isinstance(k, str) and re.fullmatch(r"[A-Za-z_]\w*", k) \
                else f"[{_lua(k)}]"
            parts.append((v, f"{key} = "))
    else:
        raise TypeError(f"{value!r} has no Lua literal")
    one = "{" + ", ".join(key + _lua(v, indent + 1, 0) for v, key in parts) + "}"
    if lead + len(one) + 1 <= 100 and "\n" not in one:
        return one
    lines = [f"{pad}{key}{_lua(v, indent + 1, len(pad) + len(key))},\n" for v, key in parts]
    return "{\n" + "".join(lines) + "  " * indent + "}"


def generate() -> str:
    """The Lua script (text)."""
    return _HEADER + "local G = " + _lua(_data(), 0, len("local G = ")) + "\n" + _RUNTIME


_HEADER = """\
-- mqconform.lua: a Wireshark dissector for MSMQ's RemoteRead (MS-MQRR) and qmmgmt (MS-MQMR)
-- DCE/RPC interfaces. GENERATED by captures/dissector.py from mqconform's wire/ and model/
-- definitions: do not edit; regenerate with `python -m mqconform.captures.dissector`.
--
-- Install: `mqconform wireshark install`, or copy this file into Wireshark's personal Lua
-- plugins folder (~/.local/lib/wireshark/plugins/, %APPDATA%\\Wireshark\\plugins), or run
-- `tshark -X lua_script:mqconform.lua ...`.
--
-- A postdissector on top of Wireshark's DCE/RPC dissector: it follows each TCP stream's binds
-- (interface and NDR / NDR64 per presentation context), joins fragments, and shows for each
-- request and response the method, its parameters and the return status by its MQ name.
-- Filters: mqrr.method, mqrr.status, mqrr.status_name, mqrr.access, mqrr.action,
-- mqrr.lookupid, mqrr.cursor, mqrr.requestid, mqrr.queueformat.name, mqrr.section.type,
-- mqmr.method, mqmr.action, mqmr.prop, mqmr.propid_name, ... (Analyze > Display Filter
-- Expression, protocols MQRR and MQMR, lists them all).

"""

_RUNTIME = r"""
-- ============================================================================ runtime
-- Not generated: how NDR lays types out (C706 14, MS-RPCE 2.2.5), DCE/RPC PDUs (C706 12.6),
-- and the tree. Every read is bounds-checked; a stub that does not decode ends in an expert
-- info, never in a Lua error.

local f_pkt_type = Field.new("dcerpc.pkt_type")
local f_stream = Field.new("tcp.stream")

local P = {}           -- protocol abbrev -> {proto, f = fields by key, e = experts}
local BY_IFACE = {}    -- interface name -> P entry

local BASES = {DEC = base.DEC, HEX = base.HEX, NONE = base.NONE}

local function make_field(abbrev, fd)
  local b = BASES[fd.base] or base.NONE
  local vals = fd.vals and G.vals[fd.vals] or nil
  local t = fd.type
  if t == "string" then return ProtoField.string(abbrev, fd.name, base.UNICODE, fd.desc) end
  if t == "bytes" then return ProtoField.bytes(abbrev, fd.name, base.NONE, fd.desc) end
  if t == "guid" then return ProtoField.guid(abbrev, fd.name, fd.desc) end
  if t == "none" then return ProtoField.none(abbrev, fd.name, fd.desc) end
  if t == "framenum" then return ProtoField.framenum(abbrev, fd.name, base.NONE) end
  return ProtoField[t](abbrev, fd.name, b, vals, fd.mask, fd.desc)
end

for _, spec in ipairs(G.protocols) do
  local proto = Proto(spec.abbrev, spec.title)
  local fields, list = {}, {}
  for _, fd in ipairs(spec.fields) do
    local pf = make_field(fd.abbrev, fd)
    fields[fd.key] = pf
    list[#list + 1] = pf
  end
  proto.fields = list
  local a = spec.abbrev
  local e = {
    malformed = ProtoExpert.new(a .. ".malformed", "Malformed stub",
                                expert.group.MALFORMED, expert.severity.ERROR),
    trailing = ProtoExpert.new(a .. ".trailing", "Octets after the last parameter",
                               expert.group.MALFORMED, expert.severity.WARN),
    unknown = ProtoExpert.new(a .. ".unknown_opnum", "Unknown opnum",
                              expert.group.UNDECODED, expert.severity.WARN),
    unmatched = ProtoExpert.new(a .. ".unmatched", "Response without its request",
                                expert.group.SEQUENCE, expert.severity.NOTE),
    failure = ProtoExpert.new(a .. ".failure", "Failure status",
                              expert.group.RESPONSE_CODE, expert.severity.NOTE),
    fault = ProtoExpert.new(a .. ".fault", "Fault",
                            expert.group.RESPONSE_CODE, expert.severity.WARN),
    syntax = ProtoExpert.new(a .. ".syntax", "Transfer syntax the interface does not support",
                             expert.group.PROTOCOL, expert.severity.WARN),
    truncated = ProtoExpert.new(a .. ".truncated", "PDU cut short",
                                expert.group.MALFORMED, expert.severity.ERROR),
    sealed = ProtoExpert.new(a .. ".sealed", "Sealed stub (packet privacy): not decoded",
                             expert.group.UNDECODED, expert.severity.CHAT),
    internal = ProtoExpert.new(a .. ".internal", "Dissector error",
                               expert.group.DEBUG, expert.severity.WARN),
  }
  proto.experts = {e.malformed, e.trailing, e.unknown, e.unmatched, e.failure, e.fault,
                   e.syntax, e.truncated, e.internal, e.sealed}
  local names, types = {}, {}
  for _, fd in ipairs(spec.fields) do names[fd.key], types[fd.key] = fd.name, fd.type end
  P[a] = {proto = proto, f = fields, e = e, spec = spec, names = names, types = types}
  BY_IFACE[spec.interface] = P[a]
end

local MAIN = P[G.protocols[1].abbrev]
local APPEND = {}
for _, name in ipairs(G.append_names) do APPEND[name] = G.vals[name] end

-- ---------------------------------------------------------------------------- numbers

local function hex32(v)
  return string.format("0x%04X%04X", math.floor(v / 65536) % 65536, v % 65536)
end

local function status_name(v)
  return G.vals.status[v] or hex32(v)
end

local function num(v)  -- any integer a double holds, whatever the C long's size
  return string.format("%.0f", v)
end

local function status_label(v)
  local name = G.vals.status[v]
  return name and (name .. " (" .. hex32(v) .. ")") or hex32(v)
end

local function bit_set(v, mask)  -- mask: a power of two
  return math.floor(v / mask) % 2 == 1
end

-- ---------------------------------------------------------------------------- the reader

local Fail = {}  -- error marker: {Fail, field, reason}

local function fail(field, reason)
  error({Fail, field, reason}, 0)
end

local SIZES = {u8 = 1, i8 = 1, u16 = 2, i16 = 2, u32 = 4, i32 = 4, u64 = 8, i64 = 8}

local function reader(tvb, base_off, len, le, ndr64)
  return {tvb = tvb, base = base_off, len = len, pos = 0, le = le, ndr64 = ndr64, depth = 0}
end

local function take(r, n, field)
  if n < 0 or r.pos + n > r.len then
    fail(field, string.format("stub ends at offset %s: %s octets needed at offset %s",
                              num(r.len), num(n), num(r.pos)))
  end
  local at = r.base + r.pos
  r.pos = r.pos + n
  return at
end

local function align(r, n, field)
  local gap = (n - r.pos % n) % n
  if gap > 0 then take(r, gap, field or "padding") end
end

local function uint_at(r, at, n)
  local rng = r.tvb:range(at, n)
  if r.le then return rng:le_uint() end
  return rng:uint()
end

-- an unsigned or signed integer of n octets as a Lua number (64-bit ones may lose precision
-- beyond 2^53: they are counts, referent ids and identifiers, shown through their fields)
local function read_int(r, kind, field)
  local n = SIZES[kind]
  align(r, n, field)
  local at = take(r, n, field)
  local v
  if n == 8 then
    local lo, hi
    if r.le then lo, hi = uint_at(r, at, 4), uint_at(r, at + 4, 4)
    else hi, lo = uint_at(r, at, 4), uint_at(r, at + 4, 4) end
    v = hi * 4294967296 + lo
    if kind == "i64" and hi >= 2147483648 then v = v - 18446744073709551616 end
  else
    v = uint_at(r, at, n)
    if kind:sub(1, 1) == "i" and v >= 2 ^ (8 * n - 1) then v = v - 2 ^ (8 * n) end
  end
  return v, at, n
end

local function ptr_size(r) return r.ndr64 and 8 or 4 end
local function count(r, field) return read_int(r, r.ndr64 and "u64" or "u32", field) end

local function check_room(r, n, size, field)
  if n * size > r.len - r.pos then
    fail(field, string.format("%s elements of at least %s octets do not fit in the %s " ..
                              "octets left", num(n), num(size), num(r.len - r.pos)))
  end
end

local function guid_text(r, at)
  local t = r.tvb
  local function u(o, n)
    local rng = t:range(at + o, n)
    return r.le and rng:le_uint() or rng:uint()
  end
  local tail = {}
  for i = 8, 15 do tail[#tail + 1] = string.format("%02x", t:range(at + i, 1):uint()) end
  local d1 = u(0, 4)
  return string.format("%04x%04x-%04x-%04x-%s-%s", math.floor(d1 / 65536), d1 % 65536,
                       u(4, 2), u(6, 2), table.concat(tail, "", 1, 2),
                       table.concat(tail, "", 3, 8))
end

-- ---------------------------------------------------------------------------- nodes
-- A node is what one value becomes in the tree: {name, at, len, f (field key), v (value for
-- the field; nil: read from the range), text (shown after the name), kids}.

local function node(name, at, len, f, text, v)
  return {name = name, at = at, len = len, f = f, text = text, v = v, kids = {}}
end

local function kid(parent, n)
  parent.kids[#parent.kids + 1] = n
  return n
end

local W = {}  -- kind -> {scalars = function(r, d, name) -> node, buffers = function(r, d, n)}

local function scalars(r, d, name)
  local w = W[d.t]
  if not w then fail(name, "no walker for " .. tostring(d.t)) end
  return w.scalars(r, d, name)
end

local function buffers(r, d, n)
  local w = W[d.t]
  if w.buffers then w.buffers(r, d, n) end
end

local function dec(r, d, name)
  local start = r.pos
  local n = scalars(r, d, name)
  buffers(r, d, n)
  if n.at == nil then n.at = r.base + start end
  if d.t ~= "prim" and d.t ~= "guid" and not n.keep_range then n.len = r.pos - start end
  return n
end

local function type_align(r, kind)
  local a = G.types[kind].align
  return r.ndr64 and a[2] or a[1]
end

local function trailing_gap(r, n, field)  -- MS-RPCE 2.2.5.3.4.1 (NDR64 only)
  if r.ndr64 then align(r, n, field) end
end

W.prim = {scalars = function(r, d, name)
  local v, at, n = read_int(r, d.k, name)
  if d.lo and (v < d.lo or v > d.hi) then
    fail(name, string.format("%s is outside [range(%s, %s)]", num(v), num(d.lo), num(d.hi)))
  end
  local nd = node(name, at, n, nil, tostring(v), v)
  if n == 8 then  -- a 64-bit field takes its value from the octets (a UInt64), exactly
    nd.from_range = true
    local rng = r.tvb:range(at, 8)
    if d.k == "i64" then
      nd.text = tostring(r.le and rng:le_int64() or rng:int64())
    else
      nd.text = tostring(r.le and rng:le_uint64() or rng:uint64())
    end
  end
  return nd
end}

local function enum(r, name)
  local v, at, n = read_int(r, r.ndr64 and "u32" or "u16", name)
  if not r.ndr64 and v > 32767 then
    fail(name, hex32(v) .. " is not an NDR enum value (0..32767)")
  end
  return v, at, n
end

W.guid = {scalars = function(r, d, name)
  align(r, 4, name)
  local at = take(r, 16, name)
  return node(name, at, 16, nil, guid_text(r, at))
end}

W.context_handle = {scalars = function(r, d, name)
  align(r, 4, name)
  local at = take(r, 20, name)
  local null = true
  for i = 0, 19 do
    if r.tvb:range(at + i, 1):uint() ~= 0 then null = false break end
  end
  return node(name, at, 20, nil, null and "NULL" or tostring(r.tvb:range(at, 20):bytes()))
end}

W.xactuow = {scalars = function(r, d, name)
  local at = take(r, 16, name)
  return node(name, at, 16, nil, tostring(r.tvb:range(at, 16):bytes()))
end}

W.objectid = {scalars = function(r, d, name)
  local start = r.pos
  local g = W.guid.scalars(r, nil, "Lineage")
  local u = W.prim.scalars(r, {k = "u32"}, "Uniquifier")
  local n = node(name, r.base + start, r.pos - start, nil,
                 string.format("%s\\%08x", g.text, u.v))
  kid(n, g)
  kid(n, u)
  n.guid, n.uniquifier = g.text, u.v
  return n
end}

W.multicast_id = {scalars = function(r, d, name)
  local start = r.pos
  local a = W.prim.scalars(r, {k = "u32"}, "m_address")
  local p = W.prim.scalars(r, {k = "u32"}, "m_port")
  local v = a.v
  local dotted = string.format("%d.%d.%d.%d", v % 256, math.floor(v / 256) % 256,
                               math.floor(v / 65536) % 256, math.floor(v / 16777216) % 256)
  local n = node(name, r.base + start, r.pos - start, nil, dotted .. ":" .. p.v)
  kid(n, a)
  kid(n, p)
  return n
end}

-- [string] wchar_t*: max_count, offset, actual_count, the units with their NUL (C706 14.3.4)
local function string_units(r, name)
  local start = r.pos
  local max = count(r, name .. ".max_count")
  local offset = count(r, name .. ".offset")
  local actual = count(r, name .. ".actual_count")
  if offset ~= 0 then fail(name .. ".offset", offset .. " is not 0") end
  if actual == 0 then fail(name .. ".actual_count", "0: a [string] holds its terminator") end
  if actual > max then
    fail(name .. ".actual_count", actual .. " exceeds max_count " .. max)
  end
  check_room(r, actual, 2, name .. ".actual_count")
  local at = take(r, 2 * actual, name)
  if uint_at(r, at + 2 * actual - 2, 2) ~= 0 then
    fail(name, "the string does not end with its NUL terminator")
  end
  local text = ""
  if actual > 1 then
    local rng = r.tvb:range(at, 2 * actual - 2)
    text = r.le and rng:le_ustring() or rng:ustring()
  end
  return node(name, r.base + start, r.pos - start, nil, '"' .. text .. '"', text)
end

W.string = {scalars = function(r, d, name) return string_units(r, name) end}

W.unique = {
  scalars = function(r, d, name)
    local v, at, n = count(r, name)
    local nd = node(name, at, n, nil, v == 0 and "NULL" or nil)
    nd.present = v ~= 0
    return nd
  end,
  buffers = function(r, d, nd)
    if not nd.present then return end
    local target = d.target == "string" and {t = "string"} or d.target
    local inner = dec(r, target, nd.name)
    -- the pointer shows its referent: the node takes the referent's text and kids
    nd.text, nd.v, nd.kids, nd.referent = inner.text, inner.v, inner.kids, inner
  end,
}

W.dl_id = {
  scalars = function(r, d, name)
    local start = r.pos
    align(r, type_align(r, "dl_id"), name)
    local g = W.guid.scalars(r, nil, "m_DlGuid")
    local p = W.unique.scalars(r, {}, "m_pwzDomain")
    trailing_gap(r, 8, name)
    local n = node(name, r.base + start, r.pos - start, nil, g.text)
    kid(n, g)
    kid(n, p)
    n.guid, n.domain_ptr = g.text, p
    return n
  end,
  buffers = function(r, d, n)
    W.unique.buffers(r, {target = "string"}, n.domain_ptr)
    if n.domain_ptr.present then
      n.domain = n.domain_ptr.v
      n.text = n.guid .. "@" .. n.domain
    end
  end,
}

local function qf_format_name(qft, saf, value_text)
  local kw = G.format_keywords[qft]
  if not kw or value_text == nil then return nil end
  local text = kw .. "=" .. value_text
  local suffix = G.suffix_keywords[saf % 16]
  if suffix and not value_text:upper():find(";" .. suffix, 1, true) then
    text = text .. ";" .. suffix
  end
  return text
end

W.queue_format = {
  scalars = function(r, d, name)
    local start = r.pos
    align(r, type_align(r, "queue_format"), name)
    local qft, qat = read_int(r, "u8", name .. ".m_qft")
    local saf, sat = read_int(r, "u8", name .. ".m_SuffixAndFlags")
    read_int(r, "u16", name .. ".m_reserved")
    trailing_gap(r, 8, name)
    local tag = read_int(r, "u8", name .. ".m_qft")
    if tag ~= qft then
      fail(name .. ".m_qft", string.format("union discriminant %s differs from m_qft %s",
                                           num(tag), num(qft)))
    end
    local arm = G.qf_arms[qft]
    if arm == nil and G.vals.qft[qft] == nil then
      fail(name .. ".m_qft", qft .. " selects no arm of the QUEUE_FORMAT union")
    end
    trailing_gap(r, 8, name)
    local n = node(name, r.base + start, nil, nil)
    local t = kid(n, node("m_qft", qat, 1, "queueformat.type"))
    t.fallback = "m_qft: " .. (G.vals.qft[qft] or qft)
    kid(n, node("Suffix type", sat, 1, "queueformat.suffix"))
    kid(n, node("Flags", sat, 1, "queueformat.flags"))
    if arm then
      n.arm = arm
      n.armnode = scalars(r, arm, G.qf_arm_names[qft] or "value")
    end
    trailing_gap(r, 8, name)
    n.qft, n.saf, n.scalar_len = qft, saf, r.pos - start
    return n
  end,
  buffers = function(r, d, n)
    local value
    if n.arm then
      buffers(r, n.arm, n.armnode)
      value = n.armnode.v
      if type(value) ~= "string" then value = n.armnode.text end
      if n.armnode.present == false then value = nil end
    end
    n.value_text = value
    n.format_name = qf_format_name(n.qft, n.saf, value)
    n.text = n.format_name or value or (G.vals.qft[n.qft] or tostring(n.qft))
    if n.armnode then kid(n, n.armnode) end
    if value ~= nil then
      local at = n.armnode.referent and n.armnode.referent.at or n.armnode.at
      local len = n.armnode.referent and n.armnode.referent.len or n.armnode.len
      kid(n, node("Queue", at, len, "queueformat.name", nil, value))
    end
    if n.format_name then
      local fnode = kid(n, node("Format name", n.at, 0, "queueformat.format_name", nil,
                                n.format_name))
      fnode.generated = true
    end
  end,
}

W.mgmt_object = {
  scalars = function(r, d, name)
    local start = r.pos
    align(r, type_align(r, "mgmt_object"), name)
    local kind, kat, klen = enum(r, name .. ".type")
    trailing_gap(r, 8, name)
    local tag = enum(r, name .. ".type")
    if tag ~= kind then
      fail(name .. ".type", string.format("union discriminant %s differs from type %s",
                                          num(tag), num(kind)))
    end
    if G.vals.mgmt[kind] == nil then
      fail(name .. ".type", kind .. " selects no arm of the MGMT_OBJECT union")
    end
    trailing_gap(r, 8, name)
    local n = node(name, r.base + start, nil, nil, G.vals.mgmt[kind])
    kid(n, node("type", kat, klen, "mgmt.type", nil, kind))
    if kind == G.mgmt_queue then
      n.qf_ptr = W.unique.scalars(r, {}, "pQueueFormat")
    else
      kid(n, W.prim.scalars(r, {k = "u32"}, kind == G.mgmt_machine and "Reserved1"
                                                     or "Reserved2"))
    end
    trailing_gap(r, 8, name)
    n.kind = kind
    return n
  end,
  buffers = function(r, d, n)
    if not n.qf_ptr then return end
    if n.qf_ptr.present then
      local qf = dec(r, {t = "queue_format"}, "pQueueFormat")
      n.text = n.text .. ": " .. (qf.text or "")
      kid(n, qf)
      n.queue_format = qf
    else
      kid(n, n.qf_ptr)
    end
  end,
}

W.section_buffer = {
  scalars = function(r, d, name)
    local start = r.pos
    align(r, type_align(r, "section_buffer"), name)
    local kind, kat, klen = enum(r, name .. ".SectionBufferType")
    local alloc, aat = read_int(r, "u32", name .. ".SectionSizeAlloc")
    local size, sat = read_int(r, "u32", name .. ".SectionSize")
    local ref = count(r, name .. ".pSectionBuffer")
    trailing_gap(r, 8, name)
    if ref == 0 and size ~= 0 then
      fail(name .. ".pSectionBuffer", "NULL with SectionSize " .. size)
    end
    local n = node(name, r.base + start, r.pos - start, nil,
                   string.format("%s, %s octets", G.vals.section[kind] or num(kind), num(size)))
    kid(n, node("SectionBufferType", kat, klen, "section.type", nil, kind))
    kid(n, node("SectionSizeAlloc", aat, 4, "section.size_alloc", nil, alloc))
    kid(n, node("SectionSize", sat, 4, "section.size", nil, size))
    n.kind, n.size, n.alloc, n.present = kind, size, alloc, ref ~= 0
    return n
  end,
  buffers = function(r, d, n)
    if not n.present then return end
    local m = count(r, n.name .. ".pSectionBuffer.max_count")
    if m ~= n.size then
      fail(n.name .. ".pSectionBuffer.max_count",
           string.format("%s differs from SectionSize = %s (size_is)", num(m), num(n.size)))
    end
    local at = take(r, m, n.name .. ".pSectionBuffer")
    kid(n, node("pSectionBuffer", at, m, "section.data"))
  end,
}

-- conformant array: max_count, the elements' scalars, then their buffers (C706 14.3.12.3)
local function elements(r, elem, name, min_size, expected)
  local m, mat, mlen = count(r, name .. ".max_count")
  if expected ~= nil and m ~= expected then
    fail(name .. ".max_count", string.format("%s differs from %s (size_is)", num(m),
                                             num(expected)))
  end
  check_room(r, m, min_size, name .. ".max_count")
  local items = {}
  for i = 1, m do items[i] = scalars(r, elem, string.format("%s[%d]", name, i - 1)) end
  for i = 1, m do buffers(r, elem, items[i]) end
  return items, m
end

local function min_size(r, d)
  if d.t == "prim" then return SIZES[d.k] end
  if d.t == "unique" then return ptr_size(r) end
  return G.types[d.t].min
end

W.counted = {
  scalars = function(r, d, name)
    local start = r.pos
    align(r, r.ndr64 and 8 or 4, name)
    local n_elems = read_int(r, "u32", name .. "." .. d.count)
    local ref = count(r, name)
    trailing_gap(r, 8, name)
    if ref == 0 and n_elems ~= 0 then
      fail(name, string.format("NULL with %s %s", d.count, num(n_elems)))
    end
    local n = node(name, r.base + start, r.pos - start, nil)
    n.n_elems, n.present = n_elems, ref ~= 0
    return n
  end,
  buffers = function(r, d, n)
    if not n.present then
      n.text = d.elem and "0 elements" or "0 octets"
      return
    end
    if not d.elem then  -- BLOB
      local m = count(r, n.name .. ".max_count")
      if m ~= n.n_elems then fail(n.name .. ".max_count", m .. " differs from " .. d.count) end
      local at = take(r, m, n.name)
      n.text = m .. " octets"
      kid(n, node("pBlobData", at, m, nil, tostring(r.tvb:range(at, math.min(m, 32)):bytes())
                                              .. (m > 32 and "..." or "")))
      return
    end
    local items = elements(r, d.elem, "", min_size(r, d.elem), n.n_elems)
    local texts = {}
    for i, it in ipairs(items) do
      it.name = string.format("[%d]", i - 1)
      kid(n, it)
      if i <= 4 then texts[#texts + 1] = it.text or "" end
    end
    n.text = string.format("%d elements", #items)
    if #items > 0 then
      n.text = n.text .. ": " .. table.concat(texts, ", ") .. (#items > 4 and ", ..." or "")
    end
  end,
}

W.propvariant = {
  scalars = function(r, d, name)
    local start = r.pos
    align(r, 8, name)
    local vt, vat = read_int(r, "u16", name .. ".vt")
    read_int(r, "u8", name .. ".wReserved1")
    read_int(r, "u8", name .. ".wReserved2")
    read_int(r, "u32", name .. ".wReserved3")
    trailing_gap(r, 8, name)
    local tag = read_int(r, "u16", name .. ".vt")
    if tag ~= vt then
      fail(name .. ".vt", string.format("union discriminant 0x%x differs from vt 0x%x",
                                        tag, vt))
    end
    if G.vals.vt[vt] == nil then
      fail(name .. ".vt", string.format("0x%x is not a VARTYPE of the PROPVARIANT union", vt))
    end
    trailing_gap(r, 8, name)
    local arm = G.vt_arms[vt]
    local n = node(name, r.base + start, nil, nil)
    kid(n, node("vt", vat, 2, "vt", nil, vt))
    n.vt, n.arm = vt, arm
    if arm then n.armnode = scalars(r, arm, "value") end
    trailing_gap(r, 8, name)
    return n
  end,
  buffers = function(r, d, n)
    if n.arm then
      r.depth = r.depth + 1
      if r.depth > G.max_pv_depth then
        fail(n.name, "PROPVARIANT vectors nested deeper than " .. G.max_pv_depth)
      end
      buffers(r, n.arm, n.armnode)
      r.depth = r.depth - 1
    end
    local vt_name = G.vals.vt[n.vt]
    local value = n.armnode and n.armnode.text or nil
    n.text = vt_name .. (value and (" " .. value) or "")
    if n.armnode then
      local raw = type(n.armnode.v) == "string" and n.armnode.v or value
      local vn = kid(n, node("value", n.armnode.at, n.armnode.len, "value", nil, raw or ""))
      vn.kids = n.armnode.kids
    end
  end,
}

W.carray = {scalars = function(r, d, name)
  local start = r.pos
  local items = elements(r, d.elem, name, min_size(r, d.elem))
  local n = node(name, r.base + start, r.pos - start, nil, #items .. " elements")
  n.items = items
  for i, it in ipairs(items) do
    it.name = string.format("[%d]", i - 1)
    kid(n, it)
  end
  return n
end}

W.bytes = {scalars = function(r, d, name)
  local start = r.pos
  local m = count(r, name .. ".max_count")
  local at = take(r, m, name)
  local n = node(name, at, m, nil, m .. " octets")  -- the field shows the octets
  n.keep_range = true
  return n
end}

W.sections = {scalars = function(r, d, name)
  local start = r.pos
  local ref = count(r, name)
  local n = node(name, r.base + start, nil, nil)
  n.items = {}
  if ref == 0 then
    n.text = "NULL"
  else
    local items = elements(r, {t = "section_buffer"}, name, G.types.section_buffer.min)
    local kinds = {}
    for i, it in ipairs(items) do
      it.name = string.format("[%d]", i - 1)
      kid(n, it)
      kinds[#kinds + 1] = it.text
    end
    n.items = items
    n.text = #items .. " sections" .. (#items > 0 and (": " .. table.concat(kinds, "; ")) or "")
  end
  n.len = r.pos - start
  return n
end}

W.status = {scalars = function(r, d, name)
  local v, at = read_int(r, "u32", name)
  return node(name, at, 4, "status", nil, v)
end}

-- ---------------------------------------------------------------------------- stubs

-- decode one stub: the parameters of one direction of a method; returns the nodes, the
-- error (field, reason) or nil, and the count of octets left over
local function decode_stub(tvb, at, len, le, ndr64, params)
  local r = reader(tvb, at, len, le, ndr64)
  local nodes = {}
  local ok, err = pcall(function()
    for _, p in ipairs(params) do
      local n = dec(r, p.d, p.n)
      n.f, n.param = p.f, p
      if p.d.t == "carray" and p.d.elem.t == "prim" then  -- the field is the elements'
        for _, it in ipairs(n.items) do it.f = p.f end
        n.f = nil
      end
      nodes[#nodes + 1] = n
    end
  end)
  if not ok then
    if type(err) == "table" and err[1] == Fail then return nodes, err[2] .. ": " .. err[3], 0 end
    return nodes, "stub: " .. tostring(err), 0
  end
  return nodes, nil, r.len - r.pos
end

-- ---------------------------------------------------------------------------- state
-- streams[tcp.stream] = {ctx = {[ctx_id] = {iface, syntax}}, binds = {[call_id] = proposed},
--                        calls = {[call_id] = request record}, frags = {[key] = parts}}
-- frames[frame number] = the records of the frame's PDUs (computed on the first pass)

local streams, frames = {}, {}

function MAIN.proto.init()
  streams, frames = {}, {}
end

local function stream_state(id)
  local s = streams[id]
  if not s then
    s = {ctx = {}, binds = {}, calls = {}, frags = {}}
    streams[id] = s
  end
  return s
end

local function hdr_uint(tvb, at, n, le)
  local rng = tvb:range(at, n)
  return le and rng:le_uint() or rng:uint()
end

local function uuid_at(tvb, at, le)
  return guid_text({tvb = tvb, le = le}, at)
end

-- p_cont_elem_t list of bind / alter_context (C706 12.6.3.1, 12.6.4.3)
local function parse_bind(tvb, off, frag, le)
  local out = {}
  if frag < 28 then return out end
  local n = tvb:range(off + 24, 1):uint()
  local pos = off + 28
  for _ = 1, n do
    if pos + 24 > off + frag then break end
    local ctx = hdr_uint(tvb, pos, 2, le)
    local ntrans = tvb:range(pos + 2, 1):uint()
    local item = {ctx = ctx, iface = uuid_at(tvb, pos + 4, le),
                  major = hdr_uint(tvb, pos + 20, 2, le),
                  minor = hdr_uint(tvb, pos + 22, 2, le), at = pos}
    pos = pos + 24 + 20 * ntrans
    item.len = 24 + 20 * ntrans
    if pos > off + frag then break end
    out[#out + 1] = item
  end
  return out
end

-- p_result_list of bind_ack / alter_context_resp (C706 12.6.4.4)
local function parse_ack(tvb, off, frag, le)
  local out = {}
  if frag < 26 then return out end
  local sec = hdr_uint(tvb, off + 24, 2, le)
  local pos = 26 + sec
  pos = pos + (4 - pos % 4) % 4
  if pos + 4 > frag then return out end
  local n = tvb:range(off + pos, 1):uint()
  pos = off + pos + 4
  for _ = 1, n do
    if pos + 24 > off + frag then break end
    out[#out + 1] = {result = hdr_uint(tvb, pos, 2, le),
                     syntax = G.syntaxes[uuid_at(tvb, pos + 4, le)] or "other", at = pos}
    pos = pos + 24
  end
  return out
end

local PT_REQUEST, PT_RESPONSE, PT_FAULT = G.ptype.REQUEST, G.ptype.RESPONSE, G.ptype.FAULT
local PT_BIND, PT_BIND_ACK, PT_BIND_NAK = G.ptype.BIND, G.ptype.BIND_ACK, G.ptype.BIND_NAK
local PT_ALTER, PT_ALTER_RESP = G.ptype.ALTER_CONTEXT, G.ptype.ALTER_CONTEXT_RESP

-- the records of a frame's PDUs; updates the stream state (first pass only)
local function analyse(fis, frame_no, stream)
  local recs = {}
  local s = stream_state(stream or -1)
  for i, fi in ipairs(fis) do
    local tvb = fi.source
    local off = fi.offset - 2
    local rec = {i = i}
    recs[#recs + 1] = rec
    if not tvb or off < 0 or tvb:len() < off + 16 or tvb:range(off, 1):uint() ~= 5 then
      rec.skip = true
    else
      local le = bit_set(tvb:range(off + 4, 1):uint(), 16)
      local ptype = tvb:range(off + 2, 1):uint()
      local flags = tvb:range(off + 3, 1):uint()
      local frag = hdr_uint(tvb, off + 8, 2, le)
      local auth = hdr_uint(tvb, off + 10, 2, le)
      local call_id = hdr_uint(tvb, off + 12, 4, le)
      rec.ptype, rec.call_id, rec.le, rec.frag = ptype, call_id, le, frag
      if tvb:len() < off + frag or frag < 16 then
        rec.truncated = true
      elseif ptype == PT_BIND or ptype == PT_ALTER then
        s.binds[call_id] = parse_bind(tvb, off, frag, le)
        rec.skip = true
      elseif ptype == PT_BIND_ACK or ptype == PT_ALTER_RESP then
        local proposed = s.binds[call_id] or {}
        s.binds[call_id] = nil
        rec.contexts = {}
        for k, res in ipairs(parse_ack(tvb, off, frag, le)) do
          local p = proposed[k]
          local iface = p and G.interfaces[p.iface]
          if iface then
            local c = {ctx = p.ctx, iface = iface.name, syntax = res.syntax,
                       accepted = res.result == 0, version = p.major .. "." .. p.minor,
                       at = res.at, syntaxes = iface.syntaxes, supported = false}
            for _, sname in ipairs(iface.syntaxes) do
              c.supported = c.supported or sname == res.syntax
            end
            rec.contexts[#rec.contexts + 1] = c
            if c.accepted then s.ctx[p.ctx] = c else s.ctx[p.ctx] = nil end
          elseif p and res.result == 0 then
            s.ctx[p.ctx] = nil
          end
        end
        if #rec.contexts == 0 then rec.skip = true end
      elseif ptype == PT_BIND_NAK then
        s.binds[call_id] = nil
        rec.skip = true
      elseif ptype == PT_REQUEST or ptype == PT_RESPONSE or ptype == PT_FAULT then
        if frag < 24 then
          rec.truncated = true
        else
          local body_end = frag
          if auth > 0 and frag >= 24 + 8 + auth then
            local pad = tvb:range(off + frag - auth - 8 + 2, 1):uint()
            body_end = math.max(24, frag - auth - 8 - pad)
            -- MS-RPCE 2.2.2.11: auth_level after auth_type; packet privacy seals the stub
            rec.sealed = tvb:range(off + frag - auth - 8 + 1, 1):uint() == G.privacy
          end
          rec.ctx = hdr_uint(tvb, off + 20, 2, le)
          local stub_at = 24
          if ptype == PT_REQUEST then
            rec.opnum = hdr_uint(tvb, off + 22, 2, le)
            if bit_set(flags, G.pfc.OBJECT_UUID) then stub_at = 40 end
          end
          stub_at = math.min(stub_at, body_end)
          local bound = s.ctx[rec.ctx]
          local req
          if ptype ~= PT_REQUEST then
            req = s.calls[call_id]
            if req then
              rec.opnum, rec.req_frame = req.opnum, req.frame
              req.response_in = frame_no
              bound = bound or req.bound
            end
          end
          if bound then
            rec.iface, rec.syntax, rec.bound = bound.iface, bound.syntax, bound
          end
          if ptype == PT_FAULT then
            if frag >= 28 then rec.fault = hdr_uint(tvb, off + 24, 4, le) end
            s.calls[call_id] = nil
          else
            local first, last = bit_set(flags, G.pfc.FIRST_FRAG), bit_set(flags, G.pfc.LAST_FRAG)
            local key = (ptype == PT_REQUEST and "q" or "r") .. call_id
            rec.first, rec.last = first, last
            if first and last then
              rec.stub_at, rec.stub_len = off + stub_at, body_end - stub_at
              s.frags[key] = nil
            else
              local chunk = tvb:range(off + stub_at, body_end - stub_at):bytes()
              if first then s.frags[key] = {chunk} elseif s.frags[key] then
                table.insert(s.frags[key], chunk)
              else
                rec.orphan_fragment = true
              end
              if s.frags[key] then
                s.frags[key].sealed = s.frags[key].sealed or rec.sealed
                rec.sealed = s.frags[key].sealed
              end
              if last and ptype == PT_REQUEST then rec.state = s.calls[call_id] end
              if last and s.frags[key] then
                local whole = ByteArray.new()
                for _, part in ipairs(s.frags[key]) do whole:append(part) end
                rec.stub_bytes = whole
                rec.nfrags = #s.frags[key]
                s.frags[key] = nil
              elseif not last then
                rec.fragment = true
              end
            end
            if ptype == PT_REQUEST and first then
              s.calls[call_id] = {opnum = rec.opnum, frame = frame_no, bound = bound, rec = rec}
              rec.state = s.calls[call_id]
            elseif ptype == PT_RESPONSE and last then
              s.calls[call_id] = nil
            end
          end
        end
      else
        rec.skip = true
      end
    end
  end
  return recs
end

-- ---------------------------------------------------------------------------- the tree

local function render(tree, pe, n, le)
  local field = n.f and pe.f[n.f] or nil
  local rng
  if n.at ~= nil and n.len ~= nil and n.tvb then rng = n.tvb:range(n.at, n.len) end
  local item
  if field then
    local empty = rng and n.len == 0 and n.v == nil
    if n.v ~= nil and not (n.from_range and rng) then
      item = rng and tree:add(field, rng, n.v) or tree:add(field, n.v)
    elseif empty and pe.types[n.f] == "bytes" then  -- no octets: an empty value, not MISSING
      item = tree:add(field, rng, "")
    elseif rng then
      if le then item = tree:add_le(field, rng) else item = tree:add(field, rng) end
    else
      item = tree:add(field)
    end
    local merged = (pe.names[n.f] or ""):find(", ", 1, true)
    if n.text and (n.kids[1] or n.force_text or merged or empty or pe.types[n.f] == "none") then
      item:set_text(n.name .. ": " .. n.text)
    end
    local names = n.param and APPEND[n.param.n]
    if names and names[n.v] then item:append_text(" (" .. names[n.v] .. ")") end
    local known = n.param and G.known_strings[n.param.n]
    if known and type(n.v) == "string" then
      local found = false
      for _, k in ipairs(known) do found = found or k == n.v:upper() end
      if not found then item:append_text(" (not one of " .. table.concat(known, ", ") .. ")") end
    end
    if n.generated then item:set_generated() end
  else
    local label = n.name .. (n.text and (": " .. n.text) or "")
    if n.fallback then label = n.fallback end
    item = rng and tree:add(rng, label) or tree:add(label)
  end
  for _, k in ipairs(n.kids) do
    k.tvb = k.tvb or n.tvb
    render(item, pe, k, le)
  end
  return item
end

local function set_tvb(n, tvb)
  n.tvb = tvb
  for _, k in ipairs(n.kids) do set_tvb(k, tvb) end
end

-- the names of the aProp PROPIDs, by the MGMT_OBJECT's type (MS-MQMR 2.2.3)
local function name_propids(nodes)
  local mgmt, props
  for _, n in ipairs(nodes) do
    if n.param and n.param.d.t == "mgmt_object" then mgmt = n end
    if n.param and n.param.d.t == "carray" and n.param.d.elem.t == "prim" then props = n end
  end
  if not (mgmt and props) then return end
  local table_ = mgmt.kind == G.mgmt_queue and G.vals.queue_propid or G.vals.machine_propid
  for _, it in ipairs(props.items) do
    local name = table_[it.v]
    it.text = name and (name .. " (" .. it.v .. ")") or tostring(it.v)
    it.force_text = true
    if name then
      local nn = kid(it, node("Property", it.at, it.len, "propid_name", nil, name))
      nn.generated = true
    end
  end
end

local function summary(nodes)
  local parts = {}
  for _, n in ipairs(nodes) do
    local d = n.param and n.param.d
    local t = d and d.t
    if t == "queue_format" or t == "mgmt_object" or t == "string" or t == "sections" then
      parts[#parts + 1] = n.name .. "=" .. (n.text or "")
    elseif n.param and (n.param.n == "ulAction" or n.param.n == "LookupId"
                        or n.param.n == "dwRequestId" or n.param.n == "hCursor") then
      local vals = G.vals[n.param.n]
      parts[#parts + 1] = n.name .. "=" .. ((vals and vals[n.v]) or n.text or "")
    end
  end
  return table.concat(parts, " ")
end

local PTYPE_NAMES = {[PT_REQUEST] = "request", [PT_RESPONSE] = "response", [PT_FAULT] = "fault"}

-- one PDU record: the protocol subtree; returns the Info column text
local function show(rec, fi, tree)
  local iface = rec.iface
  local pe = iface and BY_IFACE[iface] or nil
  local tvb = fi.source
  if rec.contexts then  -- a bind_ack / alter_context_resp that bound our interfaces
    local texts = {}
    for _, c in ipairs(rec.contexts) do
      local cpe = BY_IFACE[c.iface]
      local verdict = c.accepted and "accepted" or "rejected"
      texts[#texts + 1] = string.format("%s ctx %d %s %s", c.iface, c.ctx, c.syntax, verdict)
      if tree then
        local sub = tree:add(cpe.proto, tvb:range(c.at, 24),
                             string.format("%s: presentation context %d, %s, %s", c.iface,
                                           c.ctx, c.syntax, verdict))
        sub:add(cpe.f.interface, c.iface):set_generated()
        sub:add(cpe.f.type, "bind"):set_generated()
        sub:add(cpe.f.ctx_id, c.ctx):set_generated()
        sub:add(cpe.f.transfer_syntax, c.syntax):set_generated()
        if c.accepted and not c.supported then
          sub:add_proto_expert_info(cpe.e.syntax, c.iface .. " supports " ..
                                    table.concat(c.syntaxes, " and ") .. " only")
        end
      end
    end
    return table.concat(texts, ", ")
  end
  if not pe then return nil end
  local off = fi.offset - 2
  local method = rec.opnum and G.methods[iface][rec.opnum] or nil
  local mname = method and method.name or ("opnum " .. tostring(rec.opnum or "?"))
  local pname = PTYPE_NAMES[rec.ptype]
  local info = mname .. " " .. pname
  local sub
  if tree then
    sub = tree:add(pe.proto, tvb:range(off, math.min(rec.frag, tvb:len() - off)),
                   string.format("%s, %s %s, call_id %s", pe.spec.title, mname, pname,
                                 num(rec.call_id)))
    sub:add(pe.f.interface, iface):set_generated()
    if method then sub:add(pe.f.method, method.name):set_generated() end
    if rec.opnum then sub:add(pe.f.opnum, rec.opnum):set_generated() end
    sub:add(pe.f.type, pname):set_generated()
    sub:add(pe.f.call_id, rec.call_id):set_generated()
    sub:add(pe.f.ctx_id, rec.ctx):set_generated()
    sub:add(pe.f.transfer_syntax, rec.syntax):set_generated()
    if rec.req_frame then sub:add(pe.f.request_in, rec.req_frame):set_generated() end
    if rec.state and rec.state.response_in then
      sub:add(pe.f.response_in, rec.state.response_in):set_generated()
    end
    if not method and rec.opnum then
      sub:add_proto_expert_info(pe.e.unknown, string.format("%s has no method with opnum %d",
                                                           iface, rec.opnum))
    end
    if rec.ptype ~= PT_REQUEST and not rec.opnum then
      sub:add_proto_expert_info(pe.e.unmatched, string.format(
        "call_id %s: the request is not in the capture (method unknown)", num(rec.call_id)))
    end
  end
  if rec.ptype == PT_FAULT then
    if rec.fault then
      local name = status_name(rec.fault)
      info = info .. ": " .. name
      if sub then
        local it = sub:add(pe.f.status, tvb:range(off + 24, 4), rec.fault)
        it:set_text("Status: " .. status_label(rec.fault))
        sub:add(pe.f.status_name, tvb:range(off + 24, 4), name):set_generated()
        local fault_name = G.fault_names[rec.fault] or G.vals.status[rec.fault]
        it = sub:add(pe.f.fault, tvb:range(off + 24, 4), rec.fault)
        if fault_name then it:append_text(" (" .. fault_name .. ")") end
        sub:add_proto_expert_info(pe.e.fault, "Fault: " .. (fault_name or name))
      end
    end
    return info
  end
  if rec.fragment or rec.orphan_fragment then
    if sub then sub:add(tvb:range(off, 0), "Fragment: the stub is shown with the last one") end
    return info .. " (fragment)"
  end
  if not method then return info end
  -- the stub: in place, or joined from the fragments
  local stvb, sat, slen = tvb, rec.stub_at, rec.stub_len
  if rec.stub_bytes then
    stvb = rec.stub_bytes:tvb("MSMQ stub (" .. rec.nfrags .. " fragments)")
    sat, slen = 0, rec.stub_bytes:len()
  end
  if not sat then return info end
  if rec.sealed then  -- encrypted: nothing of it is read, nothing of it is malformed
    if sub then
      sub:add(pe.f.stub_len, stvb:range(sat, 0), slen):set_generated()
      sub:add(pe.f.sealed, stvb:range(sat, slen), true)
      sub:add_proto_expert_info(pe.e.sealed, string.format(
        "Sealed stub: %d octets encrypted at packet privacy, not decoded", slen))
    end
    return info .. " (sealed)"
  end
  local params = rec.ptype == PT_REQUEST and method.request or method.response
  local nodes, err, left = decode_stub(stvb, sat, slen, rec.le, rec.syntax == "NDR64", params)
  local status, status_node, from_tail
  for _, n in ipairs(nodes) do
    if n.param.d.t == "status" then status, status_node = n.v, n end
  end
  if rec.ptype == PT_RESPONSE and status == nil then
    if method.void and not err then
      status = 0  -- a void method's response: no return value, no exception
    elseif err and slen >= 4 and not method.void then
      status = hdr_uint(stvb, sat + slen - 4, 4, rec.le)  -- the last [out] value
      from_tail = true
    end
  end
  if sub then
    sub:add(pe.f.stub_len, stvb:range(sat, 0), slen):set_generated()
    if rec.ptype == PT_REQUEST then name_propids(nodes) end
    for _, n in ipairs(nodes) do
      set_tvb(n, stvb)
      if n == status_node then
        local it = sub:add(pe.f.status, stvb:range(n.at, 4), n.v)
        it:set_text("Status: " .. status_label(n.v))
      else
        render(sub, pe, n, rec.le)
      end
    end
    if err then
      sub:add_proto_expert_info(pe.e.malformed, "Malformed stub: " .. err)
    elseif left > 0 then
      sub:add_proto_expert_info(pe.e.trailing, string.format(
        "%d octets after the last parameter", left))
    end
    if status ~= nil then
      local name = status_name(status)
      local it
      if status_node then
        it = sub:add(pe.f.status_name, stvb:range(status_node.at, 4), name)
      elseif from_tail then
        it = sub:add(pe.f.status, stvb:range(sat + slen - 4, 4), status)
        it:set_text("Status: " .. status_label(status) ..
                    ", read from the stub's last 4 octets")
        it = sub:add(pe.f.status_name, stvb:range(sat + slen - 4, 4), name)
      else
        it = sub:add(pe.f.status, status)
        it:set_text("Status: " .. status_label(status) .. ": " .. method.name ..
                    " returns void")
        it:set_generated()
        it = sub:add(pe.f.status_name, name)
      end
      it:set_generated()
      if bit_set(status, 2147483648) then
        sub:add_proto_expert_info(pe.e.failure, method.name .. ": " .. name)
      end
    end
  end
  if status ~= nil then
    info = info .. ": " .. status_name(status)
  elseif rec.ptype == PT_REQUEST then
    local s = summary(nodes)
    if s ~= "" then info = info .. " " .. s end
  end
  if err then info = info .. " [malformed]" end
  return info
end

local function dissect(tvb, pinfo, tree)
  local fis = {f_pkt_type()}
  if #fis == 0 then return end
  local frame_no = pinfo.number
  local recs = frames[frame_no]
  if not recs then
    local sf = f_stream()
    recs = analyse(fis, frame_no, sf and sf.value or nil)
    frames[frame_no] = recs
  end
  local infos, protos = {}, {}
  for _, rec in ipairs(recs) do
    local fi = fis[rec.i]
    if fi and not rec.skip then
      if rec.truncated then
        if tree then
          local item = tree:add(MAIN.proto, tvb:range(0, 0))
          item:add_proto_expert_info(MAIN.e.truncated, string.format(
            "DCE/RPC PDU (call_id %s) of %s octets is cut short", num(rec.call_id),
            num(rec.frag)))
        end
      else
        local ok, text = pcall(show, rec, fi, tree)
        if not ok then
          if tree then
            local item = tree:add(MAIN.proto, tvb:range(0, 0))
            item:add_proto_expert_info(MAIN.e.internal, "mqconform.lua: " .. tostring(text))
          end
        elseif text then
          infos[#infos + 1] = text
          local pe = rec.iface and BY_IFACE[rec.iface]
          if pe then protos[pe.spec.abbrev:upper()] = true end
          if rec.contexts then
            for _, c in ipairs(rec.contexts) do protos[BY_IFACE[c.iface].spec.abbrev:upper()] =
              true end
          end
        end
      end
    end
  end
  if #infos > 0 then
    local names = {}
    for k in pairs(protos) do names[#names + 1] = k end
    table.sort(names)
    pinfo.cols.protocol:set(table.concat(names, "/"))
    pinfo.cols.info:set(table.concat(infos, "; "))
  end
end

function MAIN.proto.dissector(tvb, pinfo, tree)
  local ok, err = pcall(dissect, tvb, pinfo, tree)
  if not ok and tree then
    local item = tree:add(MAIN.proto, tvb:range(0, 0))
    item:add_proto_expert_info(MAIN.e.internal, "mqconform.lua: " .. tostring(err))
  end
end

register_postdissector(MAIN.proto)
"""


def main(argv: list[str] | None = None) -> int:
    return generated.main(argv, SCRIPT_PATH, generate, "mqconform.captures.dissector")


if __name__ == "__main__":
    sys.exit(main())
