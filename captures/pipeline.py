"""``mqconform captures validate``: the trace validator over a capture corpus, on Spark.

    mqconform captures validate INPUTS... --out DIR [--master URL | --remote URL]

INPUTS are capture files, directories or globs, local or any URI pyarrow's filesystems read
(``file://``, ``hdfs://``, ``s3://``, ``gs://``). The job:

1. lists the files on the driver (directories recursively, globs expanded) and makes one
   partition per file, so each file is one task (stage 1: an RDD of paths, ``file_rows``;
   with Spark Connect, which has no RDDs, the same work through ``mapInArrow``,
   ``file_task``);
2. each task decodes its file by path, streamed in 4 MiB reads (no binaryFile, no 2 GB
   limit, memory bounded by the open connections) by the compiled decoder
   (captures/_cdecode.c) where it is built and takes the file, else by captures/decode.py;
   the task writes the file's calls and errors itself (``calls/part-NNNNN.parquet``,
   ``errors/part-NNNNN.parquet``, pyarrow), so no table travels through the JVM;
3. each task also runs the model's observer (model/observer.py) over the servers of its
   file, each server's calls in time order across connections (sorted by ORDER, as Spark
   sorts), and writes their violations (``violations/part-NNNNN.parquet``); it hands the
   driver one small result: the file's summary, its error kinds, the servers it saw, and per
   requirement the violations' count, flows, servers and first five examples;
4. a server seen in several files (or in a file of more than OBSERVE_IN_TASK calls, too many
   to hold and sort in a task) is observed across files instead (stage 2, only when there
   is such a server): a SparkSession on the context reads the calls table, keeps those
   servers' calls, repartitions them by server, sorts within partitions and streams each
   partition to the observer (``mapInArrow``, ``shuffle_task``); the violations the file
   tasks found for those servers are dropped. Both ways feed the observer the same calls in
   the same order (tests hold the tables equal);
5. the driver merges the tasks' results into the ``files`` and ``summary`` tables (one row
   per requirement) and writes ``report.json`` and ``index.html`` beside the tables. The
   calls table has every column of captures/schema.py; the request/response JSON columns
   are filled only with ``--full-fields`` (then captures/decode.py decodes every stub).

A bad file never fails the job: it is listed in ``errors`` and ``files`` (an unexpected
exception in a task becomes an error row of kind ``internal`` for that file). A file its task
cannot open or read is another matter (on a cluster: a path that is not on the worker, or not
readable there): the run writes its tables and report, which lists the file, and fails
(UnreadableInputs; ``mqconform captures validate`` exits 2). Inputs and ``--out`` are resolved
to absolute paths on the driver, so relative ones mean the same on every worker.

Spark: ``local[*]`` by default (PySpark's own JVM: Java 17); ``--master spark://host:7077``
for a standalone cluster, ``--remote sc://host`` for Spark Connect. ``run`` starts a
SparkContext alone (the SQL engine only if stage 2 runs), its JVM from a class-data archive
(``_class_archive``); the driver binds to 127.0.0.1 when the master is there (local mode,
spark://127.0.0.1 or localhost) unless the user chose its address. The executors import this
package: on a cluster, install mqconform on every worker (``pip install mqconform``), and give
``--out`` a directory every worker can write (a shared file system). Unsigned columns of the
decoder's tables (captures/schema.py) are signed in Spark's: uint16 -> int32, uint32 -> int64,
and the 64-bit ``lookup_id`` as the two's complement of the ULONGLONG (Spark has no unsigned
types).
"""

from __future__ import annotations

import fnmatch
import functools
import heapq
import json
import os
import shutil
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from mqconform.captures import columns
from mqconform.model.observer import Violation

CAPTURE_SUFFIXES = (".pcap", ".pcapng", ".cap", ".pcap.gz", ".pcapng.gz", ".cap.gz")
TABLES = ("calls", "violations", "errors", "files", "summary")
BATCH = 8192

#: decode_error of a sealed call (captures/columns.py)
_SEALED = columns.SEALED


class PipelineError(Exception):
    """Bad inputs or options (one line, exit 2)."""


# ------------------------------------------------------------------------------ schemas


def _signed(t: Any) -> Any:
    import pyarrow as pa

    if pa.types.is_list(t):
        return pa.list_(_signed(t.value_type))
    return {pa.uint8(): pa.int16(), pa.uint16(): pa.int32(), pa.uint32(): pa.int64(),
            pa.uint64(): pa.int64()}.get(t, t)


def _schemas() -> dict[str, Any]:
    import pyarrow as pa

    from mqconform.captures.schema import schema

    calls = pa.schema([(f.name, _signed(f.type)) for f in schema("calls")])
    errors = pa.schema([(f.name, _signed(f.type)) for f in schema("errors")])
    # the decoder's columns, and the calls the observer read whole (_checked)
    files = pa.schema([(f.name, _signed(f.type)) for f in schema("files")]
                      + [("seen", pa.int64()), ("checked", pa.int64())])
    violations = pa.schema([
        ("requirement", pa.string()), ("actor", pa.string()), ("severity", pa.string()),
        ("capture", pa.string()), ("server", pa.string()), ("client", pa.string()),
        ("connection", pa.int32()), ("call_id", pa.int64()), ("method", pa.string()),
        ("request_frame", pa.int64()), ("response_frame", pa.int64()),
        ("time", pa.float64()), ("explanation", pa.string()), ("lifetime", pa.string())])
    summary = pa.schema([("requirement", pa.string()), ("actor", pa.string()),
                         ("severity", pa.string()), ("violations", pa.int64()),
                         ("flows", pa.int64()), ("servers", pa.int64())])
    # one row per file task (stage 1) and per shuffle partition (stage 2): what the driver
    # merges (the tables themselves are written by the tasks)
    result = pa.schema([("index", pa.int64()), ("capture", pa.string()),
                        ("summary", pa.string()), ("error_kinds", pa.string()),
                        ("servers", pa.list_(pa.string())), ("observed", pa.bool_()),
                        ("partials", pa.string()), ("spans", pa.string()),
                        ("unreadable", pa.string())])
    return {"calls": calls, "errors": errors, "files": files, "violations": violations,
            "summary": summary, "result": result}


_SCHEMAS: dict[str, Any] = {}


def arrow_schema(name: str) -> Any:
    if not _SCHEMAS:
        _SCHEMAS.update(_schemas())
    return _SCHEMAS[name]


def spark_schema(name: str) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(arrow_schema(name))


# ------------------------------------------------------------------------------ inputs


def _is_uri(text: str) -> bool:
    return "://" in text


def expand(inputs: list[str]) -> list[str]:
    """Capture files named by ``inputs`` (files, directories searched recursively for
    capture suffixes, globs), in a stable order. Local files are named by absolute paths,
    resolved here, on the driver, against its working directory (a task runs in another:
    a worker's); URIs other than ``file://`` are kept as given. Raises PipelineError for an
    input that names nothing."""
    import glob

    out: list[str] = []
    for item in inputs:
        if _is_uri(item) and not item.startswith("file://"):
            found = _expand_uri(item)
        else:
            local = os.path.abspath(os.path.expanduser(
                item[len("file://"):] if item.startswith("file://") else item))
            if any(ch in local for ch in "*?["):
                found = sorted(p for p in glob.glob(local, recursive=True)
                               if Path(p).is_file())
            elif Path(local).is_dir():
                found = sorted(str(p) for p in Path(local).rglob("*")
                               if p.is_file() and p.name.lower().endswith(CAPTURE_SUFFIXES))
            elif Path(local).is_file():
                found = [local]
            else:
                raise PipelineError(f"{item}: no such file or directory")
        if not found:
            raise PipelineError(f"{item}: no capture files there")
        out += found
    return list(dict.fromkeys(out))


def _expand_uri(uri: str) -> list[str]:
    from pyarrow import fs as pafs

    scheme = uri.split("://", 1)[0]
    try:
        filesystem, path = pafs.FileSystem.from_uri(uri.split("*")[0].rsplit("/", 1)[0]
                                                    if "*" in uri else uri)
    except Exception as exc:  # unknown scheme, no client library, unreachable
        raise PipelineError(f"{uri}: {exc}") from None
    prefix = uri[:uri.index(path)] if path and path in uri else f"{scheme}://"
    if "*" in uri or "?" in uri:
        pattern = uri[len(prefix):]
        infos = filesystem.get_file_info(pafs.FileSelector(path, recursive=True))
        return sorted(prefix + i.path for i in infos
                      if i.type == pafs.FileType.File and fnmatch.fnmatch(i.path, pattern))
    info = filesystem.get_file_info(path)
    if info.type == pafs.FileType.File:
        return [uri]
    if info.type == pafs.FileType.Directory:
        infos = filesystem.get_file_info(pafs.FileSelector(path, recursive=True))
        return sorted(prefix + i.path for i in infos if i.type == pafs.FileType.File
                      and i.path.lower().endswith(CAPTURE_SUFFIXES))
    raise PipelineError(f"{uri}: no such file or directory")


def out_dir(out: str | Path) -> Path:
    """``--out`` as the absolute directory the driver and every task write under (resolved
    on the driver: a relative one would be each worker's own directory). ``file://`` URIs
    are taken as paths; other URIs are refused (the driver writes the report there)."""
    text = str(out)
    if _is_uri(text) and not text.startswith("file://"):
        raise PipelineError(f"--out {text}: a directory of a file system the driver and every "
                            f"worker mount (a shared one on a cluster); URIs other than "
                            f"file:// are not supported for the output")
    return Path(os.path.abspath(os.path.expanduser(
        text[len("file://"):] if text.startswith("file://") else text)))


def _unreadable(path: str) -> str | None:
    """None when this process can open the file and read from it; else why not, in a few
    words naming the host (a task runs where its worker is: a path the driver reads may not
    be there, or not readable)."""
    import socket

    where = socket.gethostname()
    try:
        source = _open(path)
        if isinstance(source, str):
            source = open(source, "rb")  # noqa: SIM115 - closed below
    except Exception as exc:  # noqa: BLE001 - any failure to open is the answer
        return f"cannot open on {where}: {_why(exc)}"
    try:
        source.read(1)
    except Exception as exc:  # noqa: BLE001
        return f"cannot read on {where}: {_why(exc)}"
    finally:
        source.close()
    return None


def _why(exc: BaseException) -> str:
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return " ".join(f"{type(exc).__name__}: {text}".split())


def _open(path: str) -> Any:
    """A path for the decoder, or an open stream for a URI (pyarrow filesystems)."""
    if not _is_uri(path):
        return path
    if path.startswith("file://"):
        return path[len("file://"):]
    from pyarrow import fs as pafs

    filesystem, inner = pafs.FileSystem.from_uri(path)
    return filesystem.open_input_stream(inner, buffer_size=1 << 20)


# ------------------------------------------------------------------------------ stage 1


def _wrap64(v: int | None) -> int | None:
    return v - (1 << 64) if v is not None and v >= 1 << 63 else v


#: a file with more calls than this is not observed in its own task (its calls would have to
#: be held and sorted there): its servers go through the shuffle, which sorts out of core
OBSERVE_IN_TASK = 250_000
#: nor is a file larger than this (about OBSERVE_IN_TASK calls of ordinary traffic): its
#: calls are not even begun to be held
OBSERVE_IN_TASK_BYTES = 128 << 20


def file_task(batches: Iterator[Any], out: str = "", json_fields: bool = False,
              limit: int = OBSERVE_IN_TASK,
              limit_bytes: int = OBSERVE_IN_TASK_BYTES) -> Iterator[Any]:
    """mapInArrow, stage 1: rows (index, path) -> per file, written by this task:
    ``calls/part-<index>.parquet``, ``errors/part-<index>.parquet`` and, when the file has at
    most ``limit`` calls (``limit`` < 0: never), the violations of its servers,
    ``violations/part-<index>.parquet``; yields one row of the "result" schema per file."""
    import pyarrow as pa

    for batch in batches:
        for index, path in zip(batch.column("index").to_pylist(),
                               batch.column("path").to_pylist(), strict=True):
            row = _one_file(index, path, out, json_fields, limit, limit_bytes)
            yield pa.RecordBatch.from_pylist([row], schema=arrow_schema("result"))


def file_rows(rows: Iterator[tuple[int, str]], out: str = "", json_fields: bool = False,
              limit: int = OBSERVE_IN_TASK,
              limit_bytes: int = OBSERVE_IN_TASK_BYTES) -> Iterator[dict]:
    """RDD mapPartitions, stage 1 (file_task's twin without the SQL engine): (index, path)
    -> the same per-file result, as a dict."""
    for index, path in rows:
        yield _one_file(index, path, out, json_fields, limit, limit_bytes)


def _one_file(index: int, path: str, out: str, json_fields: bool, limit: int,
              limit_bytes: int = OBSERVE_IN_TASK_BYTES) -> dict:
    from mqconform.captures.decode import ROW_COLUMNS, DecodeError

    column = {n: i for i, n in enumerate(ROW_COLUMNS)}
    name = f"part-{index:05d}.parquet"
    unreadable = _unreadable(path)  # the file is still decoded: its error row says it too
    writer = _writer(f"{out}/calls", name, "calls")
    observed = [column[n] for n in _OBSERVED_COLUMNS]
    if limit >= 0 and _size(path) > limit_bytes:
        limit = -1  # the shuffle observes this file's servers
    kept: list[list] | None = [[] for _ in observed] if limit >= 0 else None
    rows = 0
    others: list = []
    servers: set = set()
    spans = _Spans(column)
    counts = [0, 0, 0]  # calls seen, checked, sealed (_checked)
    try:
        for kind, columns in decode_one(path, json_fields):
            if kind == "calls":
                writer.write_batch(_call_batch(columns))
                rows += len(columns[0])
                _checked(columns, column, counts)
                servers.update(columns[column["server"]])
                spans.add(columns)
                if kept is not None:
                    for mine, i in zip(kept, observed, strict=True):
                        mine += columns[i]
                    if rows > limit:  # too many to hold: the shuffle observes them
                        kept = None
            elif kind == "restart":  # the file's calls begin again
                writer.close()
                writer = _writer(f"{out}/calls", name, "calls")
                kept = [[] for _ in observed] if limit >= 0 else None
                rows = 0
                counts = [0, 0, 0]
                servers.clear()
                spans = _Spans(column)
            else:
                others = columns
    finally:
        writer.close()
    errors = [o for o in others if isinstance(o, DecodeError)]
    [summary] = [o for o in others if not isinstance(o, DecodeError)]
    partials: dict = {}
    if kept is not None:
        try:
            violations = [v for found in _observe_columns(dict(zip(_OBSERVED_COLUMNS, kept,
                                                                   strict=True)))
                          for v in found]
        except Exception as exc:  # a defect must not fail the job: the file's error row
            violations = []
            errors.append(DecodeError(path, None, "internal", f"the observer failed: "
                                                              f"{type(exc).__name__}: {exc}"))
            summary.errors += 1
        violations = [_named(v, lifetime_name(v.server, path)) for v in violations]
        violations.sort(key=lambda v: (_nulls_first(v.request_frame), v.requirement))
        _write_violations(f"{out}/violations", name, violations)
        partials = _partials(violations)
    errors.sort(key=lambda e: (_nulls_first(e.frame), e.kind, e.message))
    _write_table(f"{out}/errors", name, "errors",
                 [{f: getattr(e, f) for f in arrow_schema("errors").names} for e in errors])
    return _file_result(index, path, summary, errors, counts, servers,
                        observed=kept is not None, partials=json.dumps(partials),
                        spans=json.dumps(spans.result()), unreadable=unreadable)


def _file_result(index: int, path: str, summary: Any, errors: list, counts: list[int],
                 servers: set, **rest: Any) -> dict:
    """A file's row of the "result" schema: its summary with the calls seen and checked, its
    errors by kind and its servers; ``rest``: observed, partials, spans, unreadable."""
    kinds = Counter(e.kind for e in errors)
    return {"index": index, "capture": path,
            "summary": json.dumps(asdict(summary) | {"seen": counts[0],
                                                      "checked": counts[1],
                                                      "sealed": counts[2]}),
            "error_kinds": json.dumps(dict(kinds)), "servers": sorted(servers - {None}),
            **rest}


def _checked(columns: list[list], column: dict[str, int], counts: list[int]) -> None:
    """Adds to ``counts`` [seen, checked, sealed] a batch's calls: seen, every call but those of an
    interface other than RemoteRead and qmmgmt that a bind named (the endpoint mapper's, for
    one); checked, those of them the observer reads: the interface known (bound, or inferred
    from the stubs: decode.Decoder._infer) and the request in the capture. A checked call's
    stubs may not decode (an error row says why: a stub error is a finding, not a loss); an
    unchecked one is an answer whose request is not in the capture, or a call whose bind is
    not and whose stubs settled nothing (error kind unbound). A sealed call (its stubs sent at
    packet privacy, columns.SEALED) is seen, counted as sealed and not checked: nothing of it
    can be read without the session key."""
    for interface, name, opnum, error in zip(columns[column["interface"]],
                                             columns[column["interface_name"]],
                                             columns[column["opnum"]],
                                             columns[column["decode_error"]], strict=True):
        if error == _SEALED:
            counts[0] += 1
            counts[2] += 1
        elif name is not None:
            counts[0] += 1
            counts[1] += opnum is not None
        elif interface is None:
            counts[0] += 1


def chain_rows(rows: Iterator[tuple[int, str]], out: str = "", json_fields: bool = False
               ) -> Iterator[dict]:
    """RDD mapPartitions, stage 1b: (the first index, the chain's (index, path) pairs as
    JSON) -> per file of the chain, its result (_one_chain)."""
    for _, chain in rows:
        yield from _one_chain(json.loads(chain), out, json_fields)


def chain_task(batches: Iterator[Any], out: str = "", json_fields: bool = False
               ) -> Iterator[Any]:
    """mapInArrow twin of chain_rows (Spark Connect)."""
    import pyarrow as pa

    for batch in batches:
        for chain in batch.column("chain").to_pylist():
            rows = list(_one_chain(json.loads(chain), out, json_fields))
            yield pa.RecordBatch.from_pylist(rows, schema=arrow_schema("result"))


def _one_chain(chain: list[list], out: str, json_fields: bool) -> Iterator[dict]:
    """Files that continue each other (plan_chains), decoded again as one stream
    (decode.Decoder.run_chain): the calls and errors of the chain in the part of its first
    file, the parts of the others emptied; the violations are the shuffle's (observed
    False). Yields each file's result, as _one_file does."""
    import operator

    from mqconform.captures.decode import ROW_COLUMNS, Call, DecodeError, Decoder

    column = {n: i for i, n in enumerate(ROW_COLUMNS)}
    row = operator.attrgetter(*ROW_COLUMNS)
    names = [f"part-{index:05d}.parquet" for index, _ in chain]
    paths = [path for _, path in chain]
    for name in names[1:]:
        for table in ("calls", "errors"):
            _write_table(f"{out}/{table}", name, table, [])
    for name in names:  # stage 1's, if it observed the file: the shuffle's now
        _write_table(f"{out}/violations", name, "violations", [])
    per_file = {path: {"counts": [0, 0, 0], "servers": set(), "errors": []} for path in paths}
    summaries = []
    sources = []
    unreadable = {path: _unreadable(path) for path in paths}
    writer = _writer(f"{out}/calls", names[0], "calls")
    try:
        for path in paths:  # an unreadable one by its name: the decoder's error row says it
            sources.append((path, path if unreadable[path] else _open(path)))
        rows: list[tuple] = []

        def flush() -> None:
            if rows:
                columns = [list(c) for c in zip(*rows, strict=True)]
                writer.write_batch(_call_batch(columns))
                for capture in set(columns[column["capture"]]):
                    mine = [[v for v, f in zip(c, columns[column["capture"]], strict=True)
                             if f == capture] for c in columns]
                    _checked(mine, column, per_file[capture]["counts"])
                    per_file[capture]["servers"].update(mine[column["server"]])
                rows.clear()

        for item in Decoder(paths[0], json_fields=json_fields).run_chain(sources):
            if type(item) is Call:
                rows.append(row(item))
                if len(rows) >= BATCH:
                    flush()
            elif type(item) is DecodeError:
                per_file[item.capture]["errors"].append(item)
            else:
                summaries.append(item)
        flush()
    finally:
        writer.close()
        for _, source in sources:
            if hasattr(source, "close"):
                source.close()
    errors = sorted((e for f in per_file.values() for e in f["errors"]),
                    key=lambda e: (e.capture, _nulls_first(e.frame), e.kind, e.message))
    _write_table(f"{out}/errors", names[0], "errors",
                 [{f: getattr(e, f) for f in arrow_schema("errors").names} for e in errors])
    for (index, path), summary in zip(chain, summaries, strict=True):
        mine = per_file[path]
        yield _file_result(index, path, summary, mine["errors"], mine["counts"],
                           mine["servers"], observed=False, partials="{}", spans="{}",
                           unreadable=unreadable[path])


def plan_chains(plan: dict, results: list[dict]) -> list[list[int]]:
    """The files to decode again as one stream (_one_chain), from plan_lifetimes: a file that
    continues another in a server's lifetime (auto) is in one chain with it; each chain's
    files in the order of their first calls. Only chains of two or more files."""
    parent = {r["index"]: r["index"] for r in results}

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for indexes in plan["files"].values():
        for a, b in zip(indexes, indexes[1:], strict=False):
            parent[root(b)] = root(a)
    first: dict[int, float] = {}
    for r in results:
        times = [span[0] for span in json.loads(r.get("spans") or "{}").values()
                 if span[0] is not None]
        first[r["index"]] = min(times) if times else float("inf")
    groups: dict[int, list[int]] = {}
    for r in results:
        groups.setdefault(root(r["index"]), []).append(r["index"])
    return [sorted(g, key=lambda i: (first[i], i)) for _, g in sorted(groups.items())
            if len(g) > 1]


#: what a duplicate of a server's calls repeats: the call's times first, then every other
#: column the observer reads, and the transfer syntax
_TIMES = ("request_time", "response_time")
_FINGERPRINTED = (*_TIMES, *(c for c in columns.OBSERVED if c not in ("capture", *_TIMES)),
                  "transfer_syntax")


class _Spans:
    """Per server of one file: the time of its first and last call, a fingerprint of its
    calls (_FINGERPRINTED, in the file's order), its clients, and those
    of them whose connection's bind is not in the file (a connection the file joined
    midway), from which the driver tells a file that continues another from a copy of it
    (plan_lifetimes)."""

    def __init__(self, column: dict[str, int]):
        self._column = column
        self._spans: dict[str, list] = {}

    def add(self, columns: list[list]) -> None:
        import hashlib

        col = self._column
        for server, client, version, *values in zip(
                columns[col["server"]], columns[col["client"]],
                columns[col["interface_version"]],
                *(columns[col[k]] for k in _FINGERPRINTED), strict=True):
            if server is None:
                continue
            t = values[0] if values[0] is not None else values[1]
            span = self._spans.get(server)
            if span is None:
                span = self._spans[server] = [t, t, hashlib.sha256(), 0, set(), set()]
            span[4].add(client)
            if version is None:  # no bind in the file: none, or inferred (Decoder._infer)
                span[5].add(client)
            if t is not None:
                span[0] = t if span[0] is None else min(span[0], t)
                span[1] = t if span[1] is None else max(span[1], t)
            span[2].update(repr(values).encode())
            span[3] += 1

    def result(self) -> dict[str, list]:
        return {server: [a, b, h.hexdigest(), n, sorted(map(str, clients)),
                         sorted(map(str, midway))]
                for server, (a, b, h, n, clients, midway) in self._spans.items()}


#: ``--history``: how the calls of one server in several files make histories
HISTORIES = ("auto", "per-file", "joined")
#: auto: a file continues an earlier one of the same server when its first call of that
#: server comes no sooner than the earlier file's last, at most this many seconds after, and
#: it carries on one of that file's connections (plan_lifetimes)
CONTINUES_WITHIN_S = 300.0


def plan_lifetimes(results: list[dict], history: str = "auto") -> dict:
    """The server lifetimes of a job's files, from stage 1's spans: {"of": {(server, file
    index): lifetime name}, "files": {lifetime: [file indexes]}, "duplicates": [{server,
    capture, copy_of}]}. A file whose calls of a server repeat those of an earlier file as
    the observer reads them (same fingerprint: the same times to the microsecond, calls and
    answers; a copy of the file, or the same traffic in another container) is a duplicate:
    counted once, its violations of that server dropped (they would be the earlier file's
    again). Otherwise,
    ``auto``: files join one history when they continue each other (following time ranges,
    as ring-buffer chunks and editcap -c pieces do: CONTINUES_WITHIN_S); files that overlap
    in time are separate lifetimes (different captures, or a server restarted between them
    with its clock unchanged); ``per-file``: every file its own; ``joined``: one per server.
    A lifetime is named after its server and its first file (lifetime_name).

    The evidence that file B continues file A (auto): B's first call to the server comes at
    or after A's last, within CONTINUES_WITHIN_S, and a client of the server in A has, in B,
    a connection whose bind B does not hold (the connection went on across the cut, as at a
    ring-buffer or editcap -c boundary). Files that each hold their connections whole are
    separate lifetimes: a server restarted between two captures, or captures of separate
    runs that reuse addresses, are never joined by accident; the cost is that a history cut
    where no connection was open is checked as two."""
    if history not in HISTORIES:
        raise PipelineError(f"--history {history}: one of {', '.join(HISTORIES)}")
    per_server: dict[str, list] = {}
    for r in results:
        for server, (first, last, digest, n, clients, midway) in json.loads(
                r.get("spans") or "{}").items():
            per_server.setdefault(server, []).append((first, last, digest, n, r["index"],
                                                      r["capture"], set(clients),
                                                      set(midway)))
    of: dict[tuple[str, int], str] = {}
    files: dict[str, list[int]] = {}
    duplicates: list[dict] = []
    for server, spans in sorted(per_server.items()):
        spans.sort(key=lambda s: (s[0] if s[0] is not None else float("-inf"), s[4]))
        seen: dict[str, str] = {}
        open_: list[list] = []  # [lifetime, last time, clients of its last file]
        for first, last, digest, n, index, capture, clients, midway in spans:
            if digest in seen and history != "joined":
                duplicates.append({"server": server, "capture": capture,
                                   "copy_of": seen[digest], "calls": n})
                continue
            seen.setdefault(digest, capture)
            target = None
            if history == "joined" and open_:
                target = open_[0]
            elif history == "auto" and first is not None:
                follows = [lt for lt in open_ if lt[1] is not None and lt[1] <= first
                           <= lt[1] + CONTINUES_WITHIN_S and midway & lt[2]]
                target = max(follows, key=lambda lt: lt[1]) if follows else None
            if target is None:
                target = [lifetime_name(server, capture), last, clients]
                open_.append(target)
            else:
                if last is not None:
                    target[1] = last if target[1] is None else max(target[1], last)
                target[2] = clients
            of[(server, index)] = target[0]
            files.setdefault(target[0], []).append(index)
    return {"of": of, "files": files, "duplicates": duplicates}


def lifetime_name(server: str | None, capture: str) -> str | None:
    """A lifetime is named after its server and its first file, as given (a path or URI):
    unique, so that two captures of one name in different folders are never one history."""
    return None if server is None else f"{server} from {capture}"


#: between a server and its lifetime in the server label the shuffle's observers get
LIFETIME_SEP = "\x1f"


def _named(v: Any, lifetime: str | None = None) -> Any:
    """A Violation with the lifetime it belongs to: given, or read from a shuffle label."""
    fields = {f: getattr(v, f) for f in Violation.__dataclass_fields__}
    if fields["server"] and LIFETIME_SEP in fields["server"]:
        fields["server"], lifetime = fields["server"].split(LIFETIME_SEP, 1)
    return _Named(**fields, lifetime=lifetime)


@dataclass(slots=True)
class _Named(Violation):
    """A Violation and the server lifetime it belongs to (plan_lifetimes)."""

    lifetime: str | None = None


def shuffle_task(batches: Iterator[Any], out: str = "") -> Iterator[Any]:
    """mapInArrow, stage 2: the calls of the servers seen in several files, partitioned by
    server and sorted (ORDER) -> their violations, ``violations/part-s<partition>.parquet``
    (in the observer's order: by server, then time), written as they come so that a
    partition's memory stays one batch and the observers' state; yields one "result" row
    (index: the partition)."""
    import pyarrow as pa
    from pyspark import TaskContext

    context = TaskContext.get()
    partition = context.partitionId() if context is not None else 0
    partials = _Partials()
    writer = None
    try:
        for found in _violations(batches):
            if not found:
                continue
            found = [_named(v) for v in found]
            if writer is None:
                writer = _writer(f"{out}/violations", f"part-s{partition:05d}.parquet",
                                 "violations")
            writer.write_table(_violations_table(found))
            partials.add(found)
    finally:
        if writer is not None:
            writer.close()
    yield pa.RecordBatch.from_pylist(
        [{"index": partition, "capture": None, "summary": None, "error_kinds": None,
          "servers": [], "observed": True, "partials": json.dumps(partials.result()),
          "unreadable": None}],
        schema=arrow_schema("result"))


def _size(path: str) -> int:
    """A capture file's size in octets (0 when it cannot be told)."""
    try:
        if not _is_uri(path) or path.startswith("file://"):
            return os.path.getsize(path[len("file://"):] if path.startswith("file://")
                                   else path)
        from pyarrow import fs as pafs

        filesystem, inner = pafs.FileSystem.from_uri(path)
        return filesystem.get_file_info(inner).size or 0
    except Exception:  # noqa: BLE001 - unreadable: decode_one reports it
        return 0


def _nulls_first(value: Any) -> tuple:
    """A sort key that puts None first (Spark's ascending order)."""
    return (0, 0) if value is None else (1, value)


def _partials(violations: list) -> dict:
    """Per requirement, what the summary merges (module doc, 3): the count, the flows
    (capture, client) and servers it was seen on, and the first five examples in the
    report's order. Flows and servers are counted where they occur: a flow's calls and a
    server's are all in one task (a file's, or the shuffle partition of its server)."""
    partials = _Partials()
    partials.add(violations)
    return partials.result()


class _Partials:
    """_partials, added to batch by batch (the examples kept: the five first so far)."""

    def __init__(self) -> None:
        self.by: dict[str, dict] = {}

    def add(self, violations: list) -> None:
        for v in violations:
            p = self.by.get(v.requirement)
            if p is None:
                p = self.by[v.requirement] = {"actor": v.actor, "severity": v.severity,
                                              "violations": 0, "flows": set(),
                                              "servers": set(), "examples": []}
            p["violations"] += 1
            if v.capture is not None and v.client is not None:
                p["flows"].add((v.capture, v.client))
            if v.server is not None:
                p["servers"].add(v.server)
            p["examples"].append(v)
        for p in self.by.values():
            if len(p["examples"]) > 5:
                p["examples"] = heapq.nsmallest(5, p["examples"], key=_example_key)

    def result(self) -> dict:
        return {requirement: {**p, "flows": len(p["flows"]), "servers": len(p["servers"]),
                              "examples": [_example(v) for v in
                                           sorted(p["examples"], key=_example_key)]}
                for requirement, p in self.by.items()}


EXAMPLE_FIELDS = ("capture", "request_frame", "response_frame", "server", "client", "method",
                  "explanation")


def _example_key(v: Any) -> tuple:
    get = (lambda k: v[k]) if isinstance(v, dict) else (lambda k: getattr(v, k))
    return tuple(_nulls_first(get(k)) for k in ("capture", "request_frame", "response_frame",
                                                  "client", "explanation"))


def _example(v: Any) -> dict:
    return {k: getattr(v, k) for k in EXAMPLE_FIELDS}


def _writer(directory: str, name: str, schema: str = "calls") -> Any:
    """A Parquet writer of that schema at directory/name (local path or URI)."""
    import pyarrow.parquet as pq

    if _is_uri(directory) and not directory.startswith("file://"):
        from pyarrow import fs as pafs

        filesystem, inner = pafs.FileSystem.from_uri(directory)
        filesystem.create_dir(inner, recursive=True)
        return pq.ParquetWriter(f"{inner}/{name}", arrow_schema(schema),
                                filesystem=filesystem)
    local = Path(directory[len("file://"):] if directory.startswith("file://") else directory)
    local.mkdir(parents=True, exist_ok=True)
    return pq.ParquetWriter(str(local / name), arrow_schema(schema))


def _write_table(directory: str, name: str, schema: str, rows: list[dict] | Any) -> None:
    """directory/name: one Parquet file of that schema, from dict rows or an Arrow table."""
    import pyarrow as pa

    table = rows if isinstance(rows, pa.Table) else pa.Table.from_pylist(
        rows, schema=arrow_schema(schema))
    writer = _writer(directory, name, schema)
    try:
        writer.write_table(table)
    finally:
        writer.close()


def _violations_table(violations: list) -> Any:
    import pyarrow as pa

    schema = arrow_schema("violations")
    return pa.Table.from_arrays([pa.array([getattr(v, f.name) for v in violations], f.type)
                                 for f in schema], schema=schema)


def _write_violations(directory: str, name: str, violations: list) -> None:
    _write_table(directory, name, "violations", _violations_table(violations))


def _read_table(directory: str, name: str) -> Any:
    """A Parquet file a task wrote (``_writer``'s counterpart)."""
    import pyarrow.parquet as pq

    where = f"{directory}/{name}"
    if _is_uri(directory) and not directory.startswith("file://"):
        from pyarrow import fs as pafs

        filesystem, inner = pafs.FileSystem.from_uri(where)
        return pq.read_table(inner, filesystem=filesystem)
    return pq.read_table(where[len("file://"):] if where.startswith("file://") else where)


def decode_one(path: str, json_fields: bool = False) -> Iterator[tuple[str, Any]]:
    """One file: ("calls", a batch of the calls schema) as they come, then ("side", its
    errors and summary). The compiled decoder (captures/_cdecode.c) reads the file where it is
    built and takes the file; where it gives the file up part-way, ("restart", None) says the
    calls yielded so far are void, and decode.Decoder reads the file from its start."""
    from mqconform.captures import decode

    if not json_fields and decode.compiled():
        try:
            yield from _decode_compiled(path)
            return
        except Exception:  # noqa: BLE001 - Unsupported, or anything else: Decoder decides
            yield "restart", None
    yield from _decode_python(path, json_fields)


def _decode_compiled(path: str) -> Iterator[tuple[str, Any]]:
    from mqconform.captures.decode import scan

    others: list[Any] = []
    source = _open(path)
    try:
        for item in scan(source, path):
            if type(item) is list:
                yield "calls", item
            else:
                others.append(item)
    finally:
        if hasattr(source, "close"):
            source.close()
    yield "side", others


def _decode_python(path: str, json_fields: bool) -> Iterator[tuple[str, Any]]:
    import operator

    from mqconform.captures.decode import ROW_COLUMNS, Call, DecodeError, Decoder, FileSummary

    row = operator.attrgetter(*ROW_COLUMNS)
    rows: list[tuple] = []
    others: list[Any] = []
    decoder = Decoder(path, json_fields=json_fields)
    try:
        source = _open(path)
        try:
            for item in decoder.run(source):
                if type(item) is Call:
                    rows.append(row(item))
                    if len(rows) >= BATCH:
                        yield "calls", [list(c) for c in zip(*rows, strict=True)]
                        rows.clear()
                else:
                    others.append(item)
        finally:
            if hasattr(source, "close"):
                source.close()
    except Exception as exc:  # a defect must not fail the job: the file's error row says it
        summary = decoder.summary
        others = [o for o in others if not isinstance(o, FileSummary)]
        others.append(DecodeError(path, None, "internal",
                                  f"{type(exc).__name__}: {exc} (after {summary.frames} "
                                  f"frames)"))
        summary.errors += 1
        summary.rejected += max(0, summary.frames - summary.decoded - summary.rejected
                                - summary.not_dcerpc)
        others.append(FileSummary(**{f.name: getattr(summary, f.name)
                                     for f in fields(FileSummary)}))
    if rows:
        yield "calls", [list(c) for c in zip(*rows, strict=True)]
    yield "side", others


def _call_batch(columns: list[list]) -> Any:
    """Call rows as columns (a list per column of decode.ROW_COLUMNS, the calls schema's) as
    a batch of the calls schema."""
    import pyarrow as pa

    schema = arrow_schema("calls")
    arrays = []
    for f, column in zip(schema, columns, strict=True):
        if f.name == "lookup_id":
            column = [_wrap64(v) for v in column]
        arrays.append(pa.array(column, f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


# ------------------------------------------------------------------------------ stage 2

_OBSERVED_COLUMNS = columns.OBSERVED


#: the order the observer reads a server's calls in (also the shuffle path's sort)
ORDER = ("server", "_t", "capture", "connection", "call_id")


def _observe_columns(cols: dict[str, list]) -> Iterator[list]:
    """The violations of every server of one file's calls (the observed columns as Python
    lists, as decode_one gives them): sorted as the shuffle path sorts (ORDER, nulls first,
    by Arrow), and read with the values the calls table gives back (lookup_id signed, props
    and vts lists), so both paths feed the observer alike."""
    import operator

    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(cols["server"])
    if not n:
        return
    t = [a if a is not None else b for a, b in zip(cols["request_time"],
                                                    cols["response_time"], strict=True)]
    keys = pa.table({"server": pa.array(cols["server"], pa.string()),
                     "_t": pa.array(t, pa.float64()),
                     "capture": pa.array(cols["capture"], pa.string()),
                     "connection": pa.array(cols["connection"], pa.int64()),
                     "call_id": pa.array(cols["call_id"], pa.int64())})
    order = pc.sort_indices(keys, sort_keys=[(k, "ascending", "at_start")
                                             for k in ORDER]).to_pylist()
    pick = operator.itemgetter(*order) if n > 1 else (lambda col: (col[order[0]],))
    values = dict(cols)
    values["lookup_id"] = [_wrap64(v) for v in cols["lookup_id"]]
    for name in ("props", "vts"):
        values[name] = [None if v is None else list(v) for v in cols[name]]
    values["complete"] = [e is None for e in cols["decode_error"]]
    yield from _run_observer(zip(*(pick(values[_SOURCE.get(f, f)]) for f in _fields()),
                                 strict=True))


def _violations(batches: Iterator[Any]) -> Iterator[list]:
    """The observer over Arrow batches of calls sorted by (server, time): lists of
    Violation."""
    def rows() -> Iterator[tuple]:
        for batch in batches:
            cols = {n: batch.column(n).to_pylist() for n in _OBSERVED_COLUMNS}
            cols["complete"] = [e is None for e in cols["decode_error"]]
            yield from zip(*(cols[_SOURCE.get(f, f)] for f in _fields()), strict=True)

    yield from _run_observer(rows())


#: the columns the Observed fields are read from (where the names differ; "complete" is
#: computed from decode_error)
_SOURCE = {f: c for f, c in columns.OBSERVED_FROM.items() if f != "complete"}


def _fields() -> tuple[str, ...]:
    """The Observed fields, in their order."""
    from mqconform.model.observer import Observed

    return Observed.__slots__


def _run_observer(rows: Iterator[tuple]) -> Iterator[list]:
    """One Observer per server over rows in Observed's field order, sorted by (server,
    time): lists of Violation."""
    from mqconform.model.observer import Observed, Observer

    observer: Observer | None = None
    out: list = []
    for row in rows:
        call = Observed(*row)
        if observer is None or observer.server != call.server:
            if observer is not None:
                out.extend(observer.finish())
            observer = Observer(call.server)
        out.extend(observer.feed(call))
        if len(out) >= BATCH:
            yield out
            out = []
    if observer is not None:
        out.extend(observer.finish())
    yield out


# ------------------------------------------------------------------------------ the job


@dataclass
class Result:
    out: Path
    files: int
    frames: int
    calls: int
    errors: int
    violations: int
    seconds: float
    seen: int = 0  # calls of RemoteRead, qmmgmt or an interface not known (_checked)
    checked: int = 0  # of them, those the observer reads (_checked)
    by_requirement: dict[str, int] = field(default_factory=dict)
    tables: dict[str, str] = field(default_factory=dict)
    #: inputs the task that read them could not open or read: [{capture, reason}]
    unreadable: list[dict] = field(default_factory=list)


class UnreadableInputs(PipelineError):
    """Inputs listed on the driver that their tasks could not read (a path that is not on
    the worker, or not readable there): the run's error, not a finding of the captures. The
    tables and the report are written (the report lists them); ``result`` is the run's."""

    def __init__(self, result: Result):
        self.result = result
        first = result.unreadable[0]
        more = len(result.unreadable) - 1
        super().__init__(f"{first['capture']}: {first['reason']}"
                         + (f" (and {more} more input(s) not read)" if more else "")
                         + f"; nothing of it was validated (report: {result.out / 'report.json'})")


#: the driver's address settings: the user's, when any of them is given
DRIVER_ADDRESS = ("spark.driver.host", "spark.driver.bindAddress")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")


def loopback_master(master: str | None) -> bool:
    """Local mode, or a standalone master (every one of an HA list) on a loopback address."""
    if not master or master.startswith("local"):
        return True
    if not master.startswith("spark://"):
        return False
    hosts = master[len("spark://"):].split("/")[0].split(",")
    return all(_host(h) in LOOPBACK_HOSTS for h in hosts)


def _host(hostport: str) -> str:
    """host of host:port, [v6]:port, or a bare host."""
    if hostport.startswith("["):
        return hostport[:hostport.index("]") + 1] if "]" in hostport else hostport
    return hostport.rsplit(":", 1)[0] if hostport.count(":") == 1 else hostport


def _address_given(config: dict[str, str] | None) -> bool:
    """The user chose the driver's address: in ``config``, SPARK_LOCAL_IP, or Spark's
    defaults file (spark-defaults.conf of SPARK_CONF_DIR or SPARK_HOME/conf)."""
    if any(k in (config or {}) for k in DRIVER_ADDRESS) or os.environ.get("SPARK_LOCAL_IP"):
        return True
    conf_dir = os.environ.get("SPARK_CONF_DIR") or (
        os.path.join(os.environ["SPARK_HOME"], "conf") if os.environ.get("SPARK_HOME")
        else None)
    if conf_dir is None:
        return False
    try:
        text = Path(conf_dir, "spark-defaults.conf").read_text(encoding="utf-8")
    except OSError:
        return False
    return any(line.split(None, 1)[0] in DRIVER_ADDRESS for line in text.splitlines()
               if line.strip() and not line.lstrip().startswith("#"))


def _settings(master: str | None, config: dict[str, str] | None = None
              ) -> list[tuple[str, str]]:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # the Python workers start in the working directory, which Python would put first on
    # their sys.path: a folder there named mqconform (a checkout of it, say) would stand in
    # for the installed package (PYTHONSAFEPATH, Python >= 3.11; the executors get it too)
    os.environ.setdefault("PYTHONSAFEPATH", "1")
    # the driver's address follows the master's: a master on loopback reaches a driver on
    # loopback (Spark's default would be the host's first non-loopback address, which the
    # master and workers of a cluster on 127.0.0.1 may not reach, or which may not exist)
    address: list[tuple[str, str]] = []
    if loopback_master(master) and not _address_given(config):
        address = [(k, "127.0.0.1") for k in DRIVER_ADDRESS]
    if (master or "local").startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    return [("spark.master", master or "local[*]"), *address,
            ("spark.app.name", "mqconform captures validate"),
            ("spark.pyspark.python", sys.executable),
            ("spark.executorEnv.PYTHONSAFEPATH", "1"),
            ("spark.ui.enabled", "false"),
            ("spark.ui.showConsoleProgress", "false"),
            # stage 2's batches: the JVM's Arrow buffers and the Python lists of one batch
            ("spark.sql.execution.arrow.maxRecordsPerBatch", str(BATCH)),
            ("spark.driver.extraJavaOptions", " ".join(["-Dlog4j2.level=ERROR", "-Xlog:cds*=off",
                                                         *_local_jvm(master),
                                                         *_class_archive()]))]


def _local_jvm(master: str | None) -> list[str]:
    """In local mode the driver JVM is the executor too, and does little of the work (the
    Python tasks do): a serial collector and the client compiler keep its own memory and CPU
    small (G1's remembered sets and C2's compilations cost both)."""
    if not (master or "local").startswith("local"):
        return []
    return ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]


def _merged(settings: list[tuple[str, str]], config: dict[str, str] | None
            ) -> list[tuple[str, str]]:
    """``config`` over the settings; JVM options given there are added to the settings'
    (their class archive and log level stay)."""
    out = dict(settings)
    for key, value in (config or {}).items():
        if key == "spark.driver.extraJavaOptions" and key in out:
            value = f"{out[key]} {value}"
        out[key] = value
    return list(out.items())


def _class_archive() -> list[str]:
    """The driver JVM's class-data sharing archive (JDK 13+ dynamic CDS): the classes Spark
    loads at start, mapped from one file instead of read from the jars, which takes 1-2 s
    off each start. Made by the first start on this machine (for this java and pyspark, in
    the user's cache), used by the next; a JVM that cannot use it ignores it.
    MQCONFORM_SPARK_CDS=0 turns it off."""
    import hashlib
    import shutil as sh

    if os.environ.get("MQCONFORM_SPARK_CDS", "1") == "0":
        return []
    java = sh.which("java", path=os.path.join(os.environ["JAVA_HOME"], "bin")
                    if os.environ.get("JAVA_HOME") else None)
    if java is None:
        return []
    try:
        import pyspark

        real = os.path.realpath(java)
        key = f"{real}:{os.stat(real).st_mtime_ns}:{pyspark.__version__}"
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mqconform"
        cache.mkdir(parents=True, exist_ok=True)
    except OSError:
        return []
    archive = cache / f"spark-{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsa"
    if archive.is_file() and archive.stat().st_size > 0:
        return [f"-XX:SharedArchiveFile={archive}"]
    return [f"-XX:ArchiveClassesAtExit={archive}"]


def session(master: str | None = None, remote: str | None = None,
            config: dict[str, str] | None = None) -> Any:
    """A SparkSession: Spark Connect for ``remote``, else ``master`` (default local[*])."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("mqconform captures validate")
    if remote:
        builder = builder.remote(remote)
        for key, value in (config or {}).items():
            builder = builder.config(key, value)
    else:
        for key, value in _merged(_settings(master, config), config):
            builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if not remote:
        spark.sparkContext.setLogLevel("ERROR")
    return spark


def context(master: str | None = None, config: dict[str, str] | None = None) -> Any:
    """A SparkContext alone (``master``, default local[*]): all the job needs unless servers
    span files, and quicker to start than a SparkSession (no SQL engine); ``run`` makes the
    session on the context only when the shuffle is needed."""
    from pyspark import SparkConf, SparkContext

    conf = SparkConf()
    for key, value in _merged(_settings(master, config), config):
        conf.set(key, value)
    sc = SparkContext.getOrCreate(conf)
    sc.setLogLevel("ERROR")
    return sc


def _context_of(spark: Any) -> Any:
    """The SparkContext of a context or a (classic) session."""
    from pyspark import SparkContext

    return spark if isinstance(spark, SparkContext) else spark.sparkContext


def _session_of(spark: Any) -> Any:
    """A session on a context (made now), or the session itself (classic or Connect)."""
    from pyspark import SparkContext

    if not isinstance(spark, SparkContext):
        return spark
    from pyspark.sql import SparkSession

    return SparkSession(spark)


class TaskCounts(str):
    """What ``tasks(text)`` hears: the running stages' task counts as a line of text, and as
    numbers (``done`` of ``total`` tasks, summed over the running stages) for a progress bar.
    In stage 1 a task is one capture file."""

    done: int
    total: int

    def __new__(cls, text: str, done: int, total: int) -> TaskCounts:
        self = super().__new__(cls, text)
        self.done, self.total = done, total
        return self


class _Tasks:
    """Shows the running stages' tasks (done/total) while the job runs (not with Connect)."""

    def __init__(self, spark: Any, show: Any, every: float = 0.5):
        import threading

        self.tracker = _context_of(spark).statusTracker()
        self.show = show
        self.every = every
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self.stop.wait(self.every):
            parts, done, total = [], 0, 0
            for sid in self.tracker.getActiveStageIds():
                info = self.tracker.getStageInfo(sid)
                if info is not None:
                    parts.append(f"stage {sid}: {info.numCompletedTasks}/{info.numTasks} tasks")
                    done += info.numCompletedTasks
                    total += info.numTasks
            if parts:
                self.show(TaskCounts("; ".join(parts), done, total))

    def __enter__(self) -> _Tasks:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        self.thread.join(timeout=2)


def run(inputs: list[str], out: str | Path, master: str | None = None,
        remote: str | None = None, spark: Any = None, progress: Any = None,
        partitions: int | None = None, tasks: Any = None, json_fields: bool = False,
        per_file: bool = True, history: str = "auto") -> Result:
    """The whole job (module doc). ``spark``: an existing session to use (kept open).
    ``progress(text)`` hears the phases, ``tasks(text)`` the running stages' task counts.
    ``json_fields``: fill the calls table's request/response JSON columns (slower).
    ``per_file=False``: every server through the shuffle (module doc, 3). ``history``: how
    one server's calls in several files make histories (plan_lifetimes). Inputs and ``out``
    are resolved on the driver (expand, out_dir); an input its task could not read raises
    UnreadableInputs once the tables and the report are written."""
    import contextlib

    if history not in HISTORIES:
        raise PipelineError(f"--history {history}: one of {', '.join(HISTORIES)}")
    began = time.perf_counter()
    paths = expand(inputs)
    out = out_dir(out)
    out.mkdir(parents=True, exist_ok=True)
    own = spark is None
    if own:  # a SparkContext alone where the job can: the SQL engine only if it is needed
        spark = session(master, remote) if remote else context(master)
    say = progress or (lambda text: None)
    watch = _Tasks(spark, tasks) if tasks is not None and not remote \
        else contextlib.nullcontext()
    try:
        with watch:
            summary = _job(spark, paths, out, say, partitions, remote, json_fields, per_file,
                           history)
    finally:
        if own:
            spark.stop()
    report = _report(out, summary, paths, time.perf_counter() - began)
    result = Result(out=out, files=len(paths), frames=report["totals"]["frames"],
                  calls=report["totals"]["calls"], seen=report["totals"]["seen"],
                  checked=report["totals"]["checked"],
                  errors=report["totals"]["errors"],
                  violations=report["totals"]["violations"], seconds=report["seconds"],
                  by_requirement={r["requirement"]: r["violations"]
                                  for r in report["requirements"]},
                  tables={t: str(out / t) for t in TABLES},
                  unreadable=report["unreadable"])
    if result.unreadable:
        raise UnreadableInputs(result)
    return result


def _job(spark: Any, paths: list[str], out: Path, say: Any, partitions: int | None,
         remote: str | None, json_fields: bool, per_file: bool = True,
         history: str = "auto") -> dict:
    """Stage 1, one task per file; stage 2 (the shuffle) only for the servers seen in several
    files (or in a file too big to be observed in its task); then the summary from what the
    tasks handed back (module doc)."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's own convention

    say(f"{len(paths)} capture file(s); decoding and validating, one task per file")
    for table in ("calls", "errors", "violations", "files", "summary", "_side"):
        shutil.rmtree(out / table, ignore_errors=True)
    # the largest files first: the last tasks to start are the short ones, so the cores
    # finish together (indexes, and so the part names, stay in the order of ``paths``)
    rows = sorted(enumerate(paths), key=lambda r: -_size(r[1]))
    limit = OBSERVE_IN_TASK if per_file else -1
    if remote:  # Spark Connect: no RDDs; the same tasks through mapInArrow
        files_df = spark.createDataFrame(rows, "index long, path string").repartition(
            len(paths), "index")
        stage1 = [r.asDict() for r in files_df.mapInArrow(
            functools.partial(file_task, out=str(out), json_fields=json_fields, limit=limit,
                              limit_bytes=OBSERVE_IN_TASK_BYTES),
            spark_schema("result")).collect()]
    else:  # one file per partition; only paths in and a small result per file out
        stage1 = _context_of(spark).parallelize(rows, len(rows)).mapPartitions(
            functools.partial(file_rows, out=str(out), json_fields=json_fields,
                              limit=limit, limit_bytes=OBSERVE_IN_TASK_BYTES)).collect()
    results = sorted(stage1, key=lambda r: r["index"])
    auto = plan_lifetimes(results, "auto") if history == "auto" else None
    plan = auto if auto and per_file else plan_lifetimes(results, history if per_file
                                                         else "joined")
    captures = {r["index"]: r["capture"] for r in results}
    # the files that continue each other: auto's, whichever path observes them
    chains = plan_chains(auto, results) if auto else []
    if chains:
        # files that continue each other, read again as one stream: a bind, a PDU or a call
        # cut by a file boundary goes on in the next file
        say(f"{len(chains)} chain(s) of files that continue each other (ring-buffer or "
            f"editcap -c pieces): {sum(map(len, chains))} file(s) decoded again as one "
            f"stream each")
        pairs = [(chain[0], json.dumps([[i, captures[i]] for i in chain])) for chain in chains]
        if remote:
            again = [r.asDict() for r in spark.createDataFrame(
                pairs, "first long, chain string").repartition(len(pairs), "first").mapInArrow(
                functools.partial(chain_task, out=str(out), json_fields=json_fields),
                spark_schema("result")).collect()]
        else:
            again = _context_of(spark).parallelize(pairs, len(pairs)).mapPartitions(
                functools.partial(chain_rows, out=str(out), json_fields=json_fields)).collect()
        redone = {r["index"]: r for r in again}
        results = [dict(redone[r["index"]], spans=r["spans"]) if r["index"] in redone else r
                   for r in results]
    by_capture = {capture: index for index, capture in captures.items()}
    copies = {(d["server"], by_capture[d["capture"]]) for d in plan["duplicates"]}
    joined = {lt for lt, indexes in plan["files"].items() if len(indexes) > 1}
    # through the shuffle: the servers of lifetimes over several files, and every server of
    # a file too big to be observed in its task (or all, without per_file)
    shuffled = {pair: lt for pair, lt in plan["of"].items() if lt in joined}
    for r in results:
        if not r["observed"] or not per_file:
            for server in r["servers"]:
                if (server, r["index"]) in plan["of"]:
                    shuffled[(server, r["index"])] = plan["of"][(server, r["index"])]
    partials = []
    for r in results:
        if not r["observed"]:
            continue
        drop = {s for s in r["servers"] if (s, r["index"]) in shuffled or
                (s, r["index"]) in copies}
        if drop:  # its violations of those servers: from stage 2, or none (a copy)
            partials.append(_drop_servers(out, r["index"], drop))
        else:
            partials.append(json.loads(r["partials"]))
    if shuffled:
        lifetimes = sorted(set(shuffled.values()))
        say(f"validating {len(lifetimes)} server lifetime(s) through the shuffle (seen in "
            f"several files, or in a file too big for its task)")
        spark = _session_of(spark)
        nparts = partitions or max(1, min(len(lifetimes), 2 * (
            spark.sparkContext.defaultParallelism if not remote else 2)))
        pairs = spark.createDataFrame(
            [(server, captures[index], lt) for (server, index), lt in sorted(shuffled.items())],
            "server string, capture string, _lifetime string")
        # a URI: a path with no scheme is of Hadoop's default file system (HDFS, where it
        # is configured), not the local one the tasks wrote to
        calls = spark.read.schema(spark_schema("calls")).parquet(
            (out / "calls").as_uri()).select(
            *_OBSERVED_COLUMNS)
        calls = calls.join(F.broadcast(pairs), ["server", "capture"]).withColumn(
            "server", F.concat_ws(LIFETIME_SEP, "server", "_lifetime")).drop("_lifetime")
        stage2 = (calls.withColumn("_t", F.coalesce("request_time", "response_time"))
                  .repartition(nparts, "server")
                  .sortWithinPartitions(*ORDER)
                  .drop("_t")
                  .mapInArrow(functools.partial(shuffle_task, out=str(out)),
                              spark_schema("result"))
                  .collect())
        partials += [json.loads(r["partials"]) for r in stage2]
    if plan["duplicates"]:
        say(f"{len(plan['duplicates'])} duplicate(s): a server's calls in a file that "
            f"repeat another file's (same times, calls and answers), counted once "
            f"(report.json: duplicates)")
    say("summarising")
    summary = _summary(out, results, partials)
    summary["lifetimes"] = [{"lifetime": lt, "captures": [captures[i] for i in indexes]}
                            for lt, indexes in sorted(plan["files"].items())]
    summary["duplicates"] = plan["duplicates"]
    summary["history"] = history if per_file else "joined"
    summary["unreadable"] = [{"capture": r["capture"], "reason": r["unreadable"]}
                             for r in results if r.get("unreadable")]
    return summary


def _drop_servers(out: Path, index: int, servers: set[str]) -> dict:
    """A file's violations without those of ``servers``, rewritten, and their partials."""
    import pyarrow as pa
    import pyarrow.compute as pc

    name = f"part-{index:05d}.parquet"
    table = _read_table(str(out / "violations"), name)
    keep = pc.invert(pc.is_in(table["server"], value_set=pa.array(sorted(servers))))
    violations = [_Named(**row) for row in table.filter(keep).to_pylist()]
    _write_violations(str(out / "violations"), name, violations)
    return _partials(violations)


def _summary(out: Path, results: list[dict], partials: list[dict]) -> dict:
    """The files and summary tables and the report's figures, merged on the driver from the
    tasks' results (files: one row each; requirements: the partials of each task)."""
    files = [json.loads(r["summary"]) for r in results]
    _write_table(str(out / "files"), "part-00000.parquet", "files",
                 sorted(files, key=lambda f: f["capture"]))
    kinds: dict[str, int] = {}
    for r in results:
        for kind, n in json.loads(r["error_kinds"]).items():
            kinds[kind] = kinds.get(kind, 0) + n
    merged: dict[str, dict] = {}
    for part in partials:
        for requirement, p in part.items():
            m = merged.setdefault(requirement, {"requirement": requirement,
                                                "actor": p["actor"],
                                                "severity": p["severity"], "violations": 0,
                                                "flows": 0, "servers": 0, "examples": []})
            for k in ("violations", "flows", "servers"):
                m[k] += p[k]
            m["examples"] += p["examples"]
    rows, examples = [], {}
    for requirement in sorted(merged):
        m = merged[requirement]
        examples[requirement] = heapq.nsmallest(5, m.pop("examples"), key=_example_key)
        rows.append(m)
    _write_table(str(out / "summary"), "part-00000.parquet", "summary", rows)
    return {"requirements": rows, "examples": examples, "files": files,
            "error_kinds": kinds}


#: the report lists (report.json, index.html) up to this many violations per requirement and
#: errors per kind, in the order of their capture and frame; the Parquet tables hold them all
LISTED_PER_REQUIREMENT = 200
LISTED_PER_KIND = 500


def _listed(directory: Path, by: str, values: list[str], limit: int, sort: list[str],
            columns: list[str]) -> list[dict]:
    """Up to ``limit`` rows of a table for each value of its column ``by`` (nulls first in
    ``sort``'s order), as dicts."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    if not directory.is_dir() or not any(directory.glob("*.parquet")):
        return []
    table = pq.read_table(str(directory), columns=columns)
    rows: list[dict] = []
    for value in values:
        mine = table.filter(pc.equal(table[by], pa.scalar(value, pa.string())))
        if mine.num_rows:
            order = pc.sort_indices(mine, sort_keys=[(k, "ascending", "at_start")
                                                     for k in sort])
            rows += mine.take(order.slice(0, limit)).to_pylist()
    return rows


def _verdict(files: list[dict], totals: dict) -> tuple[str, str | None]:
    """The run in one word, and why when nothing could be checked: "failed" (every file
    unreadable, no frame read, or none of the calls seen checked: an all-error run, never a
    clean one), "violations", "errors" (decoding errors, no violation), "clean"."""
    why = None
    if files and all(not f["frames"] and f["errors"] for f in files):
        why = f"none of the {len(files)} capture file(s) could be read"
    elif not totals["frames"]:
        why = "no frame was read from the capture file(s)"
    elif totals["seen"] and not totals["checked"]:
        why = (f"none of the {totals['seen']} RemoteRead/qmmgmt call(s) seen could be "
               f"checked")
        if totals.get("sealed"):
            why += (f" ({totals['sealed']} sealed: sent at packet privacy, their stubs are "
                    f"encrypted; capture at packet integrity to validate them)")
    if why:
        return "failed", why
    if totals["violations"]:
        return "violations", None
    return ("errors" if totals["errors"] else "clean"), None


def _report(out: Path, summary: dict, paths: list[str], seconds: float) -> dict:
    from mqconform.model.observer import NOT_OBSERVABLE, RULES

    files = sorted(summary["files"], key=lambda f: f["capture"])
    totals = {k: sum(f[k] or 0 for f in files) for k in
              ("frames", "decoded", "rejected", "not_dcerpc", "calls", "seen", "checked",
               "sealed", "errors",
               "gaps")}
    totals["files"] = len(paths)
    totals["violations"] = sum(r["violations"] for r in summary["requirements"])
    totals["reconciles"] = all(f["frames"] == f["decoded"] + f["rejected"] + f["not_dcerpc"]
                               for f in files)
    totals["unreadable"] = sum(1 for f in files if not f["frames"] and f["errors"])
    verdict, failed = _verdict(files, totals)
    requirements = []
    for r in summary["requirements"]:
        requirements.append({**r, "text": _text(r["requirement"]),
                             "section": _section(r["requirement"]),
                             "examples": summary["examples"].get(r["requirement"], [])})
    violations = _listed(out / "violations", "requirement",
                         [r["requirement"] for r in requirements], LISTED_PER_REQUIREMENT,
                         ["capture", "request_frame", "response_frame", "client"],
                         ["requirement", "actor", "severity", "capture", "server", "client",
                          "lifetime", "method", "request_frame", "response_frame",
                          "explanation"])
    errors = _listed(out / "errors", "kind", sorted(summary["error_kinds"]), LISTED_PER_KIND,
                     ["capture", "frame", "message"],
                     ["kind", "capture", "frame", "connection", "message"])
    report = {
        "tool": "mqconform captures validate", "seconds": round(seconds, 3),
        "verdict": verdict, "failed": failed,
        "totals": totals, "requirements": requirements,
        "error_kinds": summary["error_kinds"],
        # every violation and decoding error up to LISTED_PER_REQUIREMENT / LISTED_PER_KIND
        # (the tables hold all): what the report's filters act on
        "violations": violations, "errors": errors,
        "listed": {"violations": len(violations), "errors": len(errors),
                   "per_requirement": LISTED_PER_REQUIREMENT, "per_kind": LISTED_PER_KIND},
        "files": files,
        # the servers' histories (plan_lifetimes): --history, each lifetime's files, and the
        # copies counted once
        "history": summary.get("history"),
        "lifetimes": summary.get("lifetimes", []),
        "duplicates": summary.get("duplicates", []),
        # inputs the task that read them could not open or read (the run's error: exit 2)
        "unreadable": summary.get("unreadable", []),
        "rules": [{"requirement": k, "actor": a, "severity": s, "checks": t,
                   "text": _text(k), "section": _section(k)}
                  for k, (a, s, t) in sorted(RULES.items())],
        "not_observable": [{"requirement": k, "reason": why}
                           for k, why in sorted(NOT_OBSERVABLE.items())],
    }
    (out / "report.json").write_text(json.dumps(report, indent=1, default=str),
                                     encoding="utf-8")
    _html(out, report)
    return report


def mark_expected(out: Path, known: dict) -> dict:
    """Add to report.json and index.html which violations and decoding errors are the
    deliberate departures listed beside their captures (``known``: counts, per requirement
    too, from the ``wire.expected.json`` files; mqconform/captures_cmd.py). ``known``'s
    "violation_keys" ((capture, request_frame, requirement)) and "error_keys" ((capture,
    frame, kind)), when given, mark each listed violation and error expected or not."""
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    by_requirement = known.get("by_requirement", {})
    for q in report["requirements"]:
        q["expected"] = by_requirement.get(q["requirement"], 0)
    violation_keys = {tuple(k) for k in known.get("violation_keys", ())}
    error_keys = {tuple(k) for k in known.get("error_keys", ())}
    for v in report.get("violations", []):
        v["expected"] = (v["capture"], v["request_frame"], v["requirement"]) in violation_keys
    for e in report.get("errors", []):
        e["expected"] = (e["capture"], e["frame"], e["kind"]) in error_keys
    totals = report["totals"]
    report["expected"] = {
        "violations": known["violations"], "errors": known["errors"],
        "files": list(known["files"]),
        "unexpected_violations": totals["violations"] - known["violations"],
        "unexpected_errors": totals["errors"] - known["errors"]}
    (out / "report.json").write_text(json.dumps(report, indent=1, default=str),
                                     encoding="utf-8")
    _html(out, report)
    return report


def _text(requirement: str) -> str:
    """A requirement's whole sentence as the document states it: a step with the sentence
    that leads its list ("When processing this call, the server MUST: ..."), a parameter's
    sentence with the parameter it describes ("pphContext: ...")."""
    try:
        from mqconform.spec.catalog import load

        global _CATALOG
        if _CATALOG is None:
            _CATALOG = {r.id: r for r in load()}
        r = _CATALOG.get(requirement)
        if r is None:
            return ""
        if r.context and not r.text.startswith(r.context):
            lead = r.context.strip()
            return f"{lead} {r.text}" if lead.endswith(":") else f"{lead}: {r.text}"
        return r.text
    except Exception:
        return ""


def _section(requirement: str) -> str:
    """The document, section number and title a requirement stands in."""
    _text(requirement)
    r = (_CATALOG or {}).get(requirement)
    return f"{r.doc} {r.section} {r.title}" if r is not None else ""


_CATALOG: dict | None = None


def _html(out: Path, report: dict) -> None:
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(loader=PackageLoader("mqconform.captures", "templates"),
                      autoescape=select_autoescape())
    from markupsafe import Markup

    from mqconform.spec.report import filter_js

    (out / "index.html").write_text(env.get_template("validate.html").render(
        r=report, filter_js=Markup(filter_js())), encoding="utf-8")


def score(labels: dict, violations: list[dict], flows: set[tuple[str, str]]) -> dict:
    """Recall and false positives of a validator's ``violations`` (dicts with capture, client,
    requirement; capture as a file name or path) against the labels. ``flows``: every
    (capture name, client) the corpus holds."""
    def name(path: str) -> str:
        return Path(path).name

    truth: dict[tuple[str, str], set[str]] = {}
    for a in labels["activations"]:
        truth.setdefault((name(a["capture"]), a["client"]), set()).add(a["requirement"])
    flagged: dict[tuple[str, str], set[str]] = {}
    for v in violations:
        flagged.setdefault((name(v["capture"]), v["client"]), set()).add(v["requirement"])
    missed = {f: sorted(r - flagged.get(f, set())) for f, r in truth.items()
              if r - flagged.get(f, set())}
    false = {f: sorted(r) for f, r in flagged.items() if f not in truth}
    per_requirement: dict[str, dict[str, int]] = {}
    for f, reqs in truth.items():
        for r in reqs:
            row = per_requirement.setdefault(r, {"faulty_flows": 0, "flagged": 0})
            row["faulty_flows"] += 1
            row["flagged"] += r in flagged.get(f, set())
    faulty = len(truth)
    return {"flows": len(flows | set(truth)), "faulty_flows": faulty,
            "clean_flows": len(flows - set(truth)),
            "recall": (faulty - len(missed)) / faulty if faulty else 1.0,
            "missed": {f"{k[0]} {k[1]}": v for k, v in missed.items()},
            "false_positive_flows": len(false),
            "false_positives": {f"{k[0]} {k[1]}": v for k, v in false.items()},
            "per_requirement": per_requirement}


def score_against(labels: dict, out: Path) -> dict:
    """``score`` of the violations written under ``out``."""
    import pyarrow.parquet as pq

    violations = pq.read_table(str(Path(out) / "violations"),
                               columns=["capture", "client", "requirement"]).to_pylist()
    calls = pq.read_table(str(Path(out) / "calls"), columns=["capture", "client"])
    flows = {(Path(c).name, cl) for c, cl in zip(calls.column("capture").to_pylist(),
                                                  calls.column("client").to_pylist(),
                                                  strict=True)}
    return score(labels, violations, flows)


def result_json(result: Result) -> dict:
    d = asdict(result)
    d["out"] = str(result.out)
    return d
