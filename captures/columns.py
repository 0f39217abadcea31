"""The calls table's columns, defined once.

Everything that lays out a call row derives from ``CALLS`` below: the decoder's Call rows and
their order (captures/decode.py ``Call``, ``ROW_COLUMNS``), the Arrow schema
(captures/schema.py), the compiled decoder's column count and indices (the generated header
captures/_cdecode_gen.h, with the DCE/RPC constants and the fast parsers' codes it needs),
and the columns the trace validator reads (captures/pipeline.py; their names are the fields
of model/observer.py ``Observed`` — a column marked ``observed`` that the observer does not
have, or the other way round, fails at import).

Adding a column is one line here (and, for an observed one, how model/observer.py
``observation_fields`` fills it); then ``python -m mqconform.captures.columns`` rewrites the
header.

    python -m mqconform.captures.columns [--check]
"""

from __future__ import annotations

import functools
import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mqconform.captures import fastpath, generated
from mqconform.model import calls as c
from mqconform.model.observer import Observed
from mqconform.wire import dcerpc, ndr


@dataclass(frozen=True)
class Column:
    name: str
    #: Arrow type: string, int32, int64, uint16, uint32, uint64, float64, list<uint16>,
    #: list<uint32>
    type: str
    meaning: str
    #: read by the trace validator (a field of model/observer.py Observed, or the source of
    #: one: see OBSERVED_FROM)
    observed: bool = False


CALLS: tuple[Column, ...] = (
    Column("capture", "string", "the capture file (path as given)", True),
    Column("connection", "int32", "the TCP connection's index in the file (Wireshark "
           "tcp.stream order: connections numbered as they open)", True),
    Column("client", "string", '"ip:port" ("[ip]:port" for IPv6) of the client', True),
    Column("server", "string", '"ip:port" ("[ip]:port" for IPv6) of the server', True),
    Column("client_ip", "string", "the client's address"),
    Column("client_port", "int32", "the client's port"),
    Column("server_ip", "string", "the server's address"),
    Column("server_port", "int32", "the server's port"),
    Column("assoc_group", "uint32", "the association group bind_ack gave (null: no bind "
           "seen)"),
    Column("context_id", "uint16", "the presentation context of the request"),
    Column("interface", "string", "abstract syntax UUID (null: the bind was not captured)"),
    Column("interface_version", "string", '"major.minor"'),
    Column("interface_name", "string", "RemoteRead, qmmgmt, or null for another interface"),
    Column("transfer_syntax", "string", "NDR or NDR64 (null: unknown)"),
    Column("call_id", "uint32", "DCE/RPC call_id", True),
    Column("opnum", "uint16", "operation number (null: the request was not captured)"),
    Column("method", "string", "the method's name (R_OpenQueue, R_QMMgmtGetInfo, ...)", True),
    Column("request", "string", "JSON of the request's [in] parameters (model/calls.py "
           "names)"),
    Column("response", "string", "JSON of the [out] parameters and return value"),
    Column("status", "uint32", "the method's return value (HRESULT, or the DWORD of "
           "R_GetServerPort); null for a fault or a void method's fault", True),
    Column("fault", "uint32", "the fault PDU's status (null: no fault)"),
    Column("decode_error", "string", "why the stubs were not decoded, or the call is "
           "incomplete", True),
    Column("request_first_frame", "int64", "frame of the request's first octet", True),
    Column("request_last_frame", "int64", "frame of the request's last octet"),
    Column("response_first_frame", "int64", "frame of the response's (or fault's) first "
           "octet"),
    Column("response_last_frame", "int64", "frame of the response's (or fault's) last octet",
           True),
    Column("request_time", "float64", "seconds since 1970-01-01 UTC of the request's first "
           "frame", True),
    Column("response_time", "float64", "seconds since 1970-01-01 UTC of the response's first "
           "frame", True),
    # the trace validator's columns (model/observer.py observation_fields; null where the
    # method has no such parameter or the stubs were not decoded)
    Column("handle", "string", "the context handle the call names (hex of its 20 octets)",
           True),
    Column("result_handle", "string", "pphContext of R_OpenQueue / R_CloseQueue's response",
           True),
    Column("queue", "string", "the queue R_OpenQueue or a qmmgmt call names: its format name "
           "without a subqueue, lower case", True),
    Column("access", "uint32", "dwAccess of R_OpenQueue / R_OpenQueueForMove", True),
    Column("action", "uint32", "ulAction", True),
    Column("action_text", "string", "lpwszAction of R_QMMgmtAction", True),
    Column("request_id", "uint32", "dwRequestId", True),
    Column("lookup_id", "uint64", "LookupId of the request", True),
    Column("cursor", "uint32", "hCursor, or phCursor R_CreateCursor returned", True),
    Column("ack", "uint32", "dwAck", True),
    Column("sequence_id", "uint64", "pSequenceId of a receive's response (the lookup "
           "identifier's low 7 bytes)", True),
    Column("object_type", "uint32", "MGMT_OBJECT type of a qmmgmt call", True),
    Column("props", "list<uint32>", "aProp of R_QMMgmtGetInfo", True),
    Column("vts", "list<uint16>", "the VARTYPEs of its response's apVar", True),
)

#: decode_error of a call whose request or response was sent at packet privacy (MS-RPCE
#: 2.2.1.1.8 RPC_C_AUTHN_LEVEL_PKT_PRIVACY): its stubs are encrypted with a session key a
#: capture does not hold, so they are not decoded (and not reported malformed); the trace
#: validator counts the call as seen and sealed, never as checked
SEALED = "sealed: the stub is encrypted (packet privacy); not decoded"

#: the columns in row order
NAMES: tuple[str, ...] = tuple(c.name for c in CALLS)
INDEX: dict[str, int] = {name: i for i, name in enumerate(NAMES)}
#: where the calls table carries what model/observer.py Observed names otherwise
#: ("complete" is computed: decode_error is null)
OBSERVED_FROM = {"request_frame": "request_first_frame",
                 "response_frame": "response_last_frame", "complete": "decode_error"}
#: the columns the trace validator reads, in the calls table's order
OBSERVED: tuple[str, ...] = tuple(c.name for c in CALLS if c.observed)


def _check_observed() -> None:
    wanted = {OBSERVED_FROM.get(f, f) for f in Observed.__slots__}
    if wanted != set(OBSERVED):
        raise TypeError(f"the calls table's observed columns {sorted(set(OBSERVED))} are not "
                        f"what model/observer.py Observed reads: {sorted(wanted)}")


_check_observed()


def arrow_type(spec: str) -> Any:
    import pyarrow as pa

    if spec.startswith("list<"):
        return pa.list_(arrow_type(spec[5:-1]))
    return getattr(pa, spec)()


# --- the compiled decoder's header --------------------------------------------------------------

HEADER_PATH = Path(__file__).with_name("_cdecode_gen.h")


_PREAMBLE = ["/* GENERATED by captures/columns.py from captures/columns.py, wire/dcerpc.py and",
             " * captures/fastpath.py: do not edit; regenerate with",
             " * `python -m mqconform.captures.columns`. */"]


def _definitions() -> list[str]:
    """The header's lines after its preamble, up to its digest."""
    lines = [
        "#ifndef MQCONFORM_CDECODE_GEN_H",
        "#define MQCONFORM_CDECODE_GEN_H",
        "",
        "/* the calls table's columns, in row order (captures/columns.py CALLS) */",
        f"#define NCOLS {len(CALLS)}",
    ]
    lines += [f"#define COL_{name.upper()} {i}" for i, name in enumerate(NAMES)]
    lines.append("static const char *const COL_NAMES[NCOLS] = {"
                 + ", ".join(f'"{name}"' for name in NAMES) + "};")
    lines += ["", "/* DCE/RPC PDU types and pfc_flags (C706 12.6; wire/dcerpc.py) */"]
    lines += [f"#define PT_{t.name} {int(t)}" for t in dcerpc.PType]
    lines += [f"#define {name} 0x{getattr(dcerpc, name):02X}"
              for name in ("PFC_FIRST_FRAG", "PFC_LAST_FRAG", "PFC_OBJECT_UUID")]
    lines += [f"#define AUTHN_LEVEL_PKT_PRIVACY {dcerpc.AUTHN_LEVEL_PKT_PRIVACY}",
              "/* decode_error of a sealed call (captures/columns.py SEALED) */",
              f'#define SEALED_ERROR "{SEALED}"']
    lines += ["", "/* the fast parsers, by the code captures/fastpath.py C_PARSERS gives each "
                  "method */"]
    for (interface, opnum), code in fastpath.C_PARSERS.items():
        lines.append(f"#define FAST_{c.CALLS[(interface, opnum)].__name__.upper()} {code}")
    return lines + _c_layouts()


@functools.lru_cache(maxsize=1)
def signature() -> str:
    """The digest of the definitions the header holds: the built module exports it, and
    captures/decode.py uses a compiled decoder only if it was built from the definitions it
    runs with."""
    return hashlib.sha256("\n".join(_definitions()).encode()).hexdigest()[:16]


def c_header() -> str:
    """captures/_cdecode_gen.h: what captures/_cdecode.c takes from the Python definitions."""
    return "\n".join(_PREAMBLE + _definitions() + [
        "", "/* the digest of the definitions above (captures/decode.py compiled()) */",
        f'#define GENERATED "{signature()}"', "", "#endif", ""])


_C_KINDS = ("u8", "u16", "u32", "i32", "u64", "ctx", "octets")


def _c_layout(layout: tuple | None, picks: dict[str, str]) -> str:
    if layout is None:
        return "{0, 0, {{0}}}"
    fields, size = layout
    items = []
    for f in fields:
        column = picks.get(f.name)
        target = f"COL_{column.upper()}" if column else "-1"
        items.append(f"{{{f.offset}, FK_{f.kind.upper()}, {target}, {int(f.lo is not None)}, "
                     f"{f.lo or 0}u, {f.hi or 0}u}}")
    return f"{{{size}, {len(items)}, {{{', '.join(items) or '{0}'}}}}}"


def _c_layouts() -> list[str]:
    """The fast parsers' layouts (wire/ndr.fixed_layout of each method captures/fastpath.py
    reads, NDR's: NDR64's is the same for these methods), as a table the C code interprets."""
    most = max(len(ndr.fixed_layout(*key, False)[0]) for key in fastpath.FAST)
    lines = ["", "/* each fast method's fixed layouts (wire/ndr.py fixed_layout) */"]
    lines += [f"#define FK_{kind.upper()} {i}" for i, kind in enumerate(_C_KINDS, 1)]
    lines += [f"#define FAST_MAX_FIELDS {max(most, 4)}",
              "typedef struct { unsigned short offset; unsigned char kind; short column;",
              "                 unsigned char ranged; unsigned int lo, hi; } FastField;",
              "typedef struct { unsigned int size; unsigned char n; "
              "FastField f[FAST_MAX_FIELDS]; } FastLayout;",
              "/* response: NULL layout (n 0, size 0) and variable 1 for a receive's (read by "
              "hand) */",
              "typedef struct { FastLayout request, response; unsigned char variable; } "
              "FastPlan;",
              f"static const FastPlan FAST_PLANS[{len(fastpath.FAST) + 1}] = {{",
              "    {{0, 0, {{0}}}, {0, 0, {{0}}}, 0},  /* 0: no fast parser */"]

    for key in fastpath.FAST:
        variable = key in fastpath.VARIABLE_RESPONSES
        request = _c_layout(ndr.fixed_layout(*key, False), fastpath.REQUEST_COLUMNS)
        response = _c_layout(None if variable else ndr.fixed_layout(*key, False, True),
                             fastpath.RESPONSE_COLUMNS)
        lines.append(f"    /* {c.CALLS[key].__name__} */")
        lines.append(f"    {{{request},")
        lines.append(f"     {response}, {int(variable)}}},")
    lines.append("};")
    return lines


def main(argv: list[str] | None = None) -> int:
    return generated.main(argv, HEADER_PATH, c_header, "mqconform.captures.columns")


if __name__ == "__main__":
    sys.exit(main())
