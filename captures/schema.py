"""The Arrow schemas of the decoder's tables, and writing them as Parquet in batches.

``calls`` (one row per DCE/RPC call: a request and its response or fault):

=====================  ==========  ============================================================
column                 type        meaning
=====================  ==========  ============================================================
capture                string      the capture file (path as given)
connection             int32       the TCP connection's index in the file (Wireshark tcp.stream
                                   order: connections numbered as they open)
client, server         string      "ip:port" ("[ip]:port" for IPv6) of each end
client_ip, server_ip   string      addresses
client_port,           int32       ports
server_port
assoc_group            uint32      the association group bind_ack gave (null: no bind seen)
context_id             uint16      the presentation context of the request
interface              string      abstract syntax UUID (null: the bind was not captured)
interface_version      string      "major.minor"
interface_name         string      RemoteRead, qmmgmt, or null for another interface
transfer_syntax        string      NDR or NDR64 (null: unknown)
call_id                uint32      DCE/RPC call_id
opnum                  uint16      operation number (null: the request was not captured)
method                 string      the method's name (R_OpenQueue, R_QMMgmtGetInfo, ...)
request                string      JSON of the request's [in] parameters (model/calls.py names)
response               string      JSON of the [out] parameters and return value
status                 uint32      the method's return value (HRESULT, or the DWORD of
                                   R_GetServerPort); null for a fault or a void method's fault
fault                  uint32      the fault PDU's status (null: no fault)
decode_error           string      why the stubs were not decoded, or the call is incomplete
request_first_frame,   int64       frames of the request's first and last octets
request_last_frame
response_first_frame,  int64       frames of the response's (or fault's)
response_last_frame
request_time,          float64     seconds since 1970-01-01 UTC of the first frame of each
response_time
=====================  ==========  ============================================================

Then the columns the trace validator reads (model/observer.py ``observation_fields``; null
where the method has no such parameter or the stubs were not decoded):

=====================  ==========  ============================================================
handle                 string      the context handle the call names (hex of its 20 octets)
result_handle          string      pphContext of R_OpenQueue / R_CloseQueue's response
queue                  string      the queue R_OpenQueue or a qmmgmt call names: its format
                                   name without a subqueue, lower case
access                 uint32      dwAccess of R_OpenQueue / R_OpenQueueForMove
action                 uint32      ulAction
action_text            string      lpwszAction of R_QMMgmtAction
request_id             uint32      dwRequestId
lookup_id              uint64      LookupId of the request
cursor                 uint32      hCursor, or phCursor R_CreateCursor returned
ack                    uint32      dwAck
sequence_id            uint64      pSequenceId of a receive's response (the lookup identifier's
                                   low 7 bytes)
object_type            uint32      MGMT_OBJECT type of a qmmgmt call
props                  list<u32>   aProp of R_QMMgmtGetInfo
vts                    list<u16>   the VARTYPEs of its response's apVar
=====================  ==========  ============================================================

``errors``: capture, frame (int64, null for the file as a whole), kind (io, format, truncated,
corrupt, link, ip, tcp, gap, desync, pdu, fragment, stub), message, connection (int32).

``files`` (one row per capture file): capture, frames, decoded, rejected, not_dcerpc, pdus,
calls, errors, gaps, bytes_read; frames = decoded + rejected + not_dcerpc.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

from mqconform.captures.decode import Call, DecodeError, FileSummary

BATCH = 8192


def _schemas() -> dict[str, Any]:
    import pyarrow as pa

    calls = pa.schema([
        ("capture", pa.string()), ("connection", pa.int32()),
        ("client", pa.string()), ("server", pa.string()),
        ("client_ip", pa.string()), ("client_port", pa.int32()),
        ("server_ip", pa.string()), ("server_port", pa.int32()),
        ("assoc_group", pa.uint32()), ("context_id", pa.uint16()),
        ("interface", pa.string()), ("interface_version", pa.string()),
        ("interface_name", pa.string()), ("transfer_syntax", pa.string()),
        ("call_id", pa.uint32()), ("opnum", pa.uint16()), ("method", pa.string()),
        ("request", pa.string()), ("response", pa.string()),
        ("status", pa.uint32()), ("fault", pa.uint32()), ("decode_error", pa.string()),
        ("request_first_frame", pa.int64()), ("request_last_frame", pa.int64()),
        ("response_first_frame", pa.int64()), ("response_last_frame", pa.int64()),
        ("request_time", pa.float64()), ("response_time", pa.float64()),
        ("handle", pa.string()), ("result_handle", pa.string()), ("queue", pa.string()),
        ("access", pa.uint32()), ("action", pa.uint32()), ("action_text", pa.string()),
        ("request_id", pa.uint32()), ("lookup_id", pa.uint64()), ("cursor", pa.uint32()),
        ("ack", pa.uint32()), ("sequence_id", pa.uint64()), ("object_type", pa.uint32()),
        ("props", pa.list_(pa.uint32())), ("vts", pa.list_(pa.uint16())),
    ])
    errors = pa.schema([("capture", pa.string()), ("frame", pa.int64()), ("kind", pa.string()),
                        ("message", pa.string()), ("connection", pa.int32())])
    files = pa.schema([("capture", pa.string()), ("frames", pa.int64()),
                       ("decoded", pa.int64()), ("rejected", pa.int64()),
                       ("not_dcerpc", pa.int64()), ("pdus", pa.int64()), ("calls", pa.int64()),
                       ("errors", pa.int64()), ("gaps", pa.int64()),
                       ("bytes_read", pa.int64())])
    return {"calls": calls, "errors": errors, "files": files}


SCHEMAS: dict[str, Any] = {}


def schema(table: str) -> Any:
    if not SCHEMAS:
        SCHEMAS.update(_schemas())
    return SCHEMAS[table]


def to_batch(table: str, rows: list[Any]) -> Any:
    """A pyarrow RecordBatch of Call, DecodeError or FileSummary objects."""
    import pyarrow as pa

    s = schema(table)
    columns = {name: [getattr(r, name) for r in rows] for name in s.names}
    return pa.RecordBatch.from_pydict(columns, schema=s)


def batches(items: Iterable[Call | DecodeError | FileSummary], size: int = BATCH
            ) -> Iterator[tuple[str, Any]]:
    """(table name, RecordBatch) of decoder output, ``size`` rows at most per batch."""
    kinds = {Call: "calls", DecodeError: "errors", FileSummary: "files"}
    pending: dict[str, list] = {"calls": [], "errors": [], "files": []}
    for item in items:
        table = kinds[type(item)]
        rows = pending[table]
        rows.append(item)
        if len(rows) >= size:
            yield table, to_batch(table, rows)
            rows.clear()
    for table, rows in pending.items():
        if rows:
            yield table, to_batch(table, rows)


def write_parquet(items: Iterable[Call | DecodeError | FileSummary], calls_path: Path
                  ) -> dict[str, Path]:
    """The calls table at ``calls_path``; errors and files beside it (``<stem>.errors.parquet``,
    ``<stem>.files.parquet``). Written in batches, so memory holds one batch per table."""
    import pyarrow.parquet as pq

    calls_path = Path(calls_path)
    stem = calls_path.name[:-len(".parquet")] if calls_path.name.endswith(".parquet") \
        else calls_path.name
    paths = {"calls": calls_path,
             "errors": calls_path.with_name(f"{stem}.errors.parquet"),
             "files": calls_path.with_name(f"{stem}.files.parquet")}
    writers = {t: pq.ParquetWriter(str(p), schema(t)) for t, p in paths.items()}
    try:
        for table, batch in batches(items):
            writers[table].write_batch(batch)
    finally:
        for w in writers.values():
            w.close()
    return paths


def call_fields() -> list[str]:
    return [f.name for f in fields(Call)]
