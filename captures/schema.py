"""The Arrow schemas of the decoder's tables, and writing them as Parquet in batches.

``calls`` (one row per DCE/RPC call: a request and its response or fault): the columns of
captures/columns.py ``CALLS``, each with its type and meaning there, in that order; the last
ones (handle ... vts) are the trace validator's (model/observer.py ``observation_fields``; null
where the method has no such parameter or the stubs were not decoded).

``errors``: capture, frame (int64, null for the file as a whole), kind (io, format, truncated,
corrupt, link, ip, tcp, gap, desync, pdu, fragment, trailer, stub), message, connection
(int32).

``files`` (one row per capture file): capture, frames, decoded, rejected, not_dcerpc, pdus,
calls, errors, gaps, bytes_read; frames = decoded + rejected + not_dcerpc.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

from mqconform.captures import columns
from mqconform.captures.decode import Call, DecodeError, FileSummary

BATCH = 8192


def _schemas() -> dict[str, Any]:
    import pyarrow as pa

    calls = pa.schema([(c.name, columns.arrow_type(c.type)) for c in columns.CALLS])
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
