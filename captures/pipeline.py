"""``mqconform captures validate``: the trace validator over a capture corpus, on Spark.

    mqconform captures validate INPUTS... --out DIR [--master URL | --remote URL]

INPUTS are capture files, directories or globs, local or any URI pyarrow's filesystems read
(``file://``, ``hdfs://``, ``s3://``, ``gs://``). The job:

1. lists the files on the driver (directories recursively, globs expanded) and makes one row
   per file, spread one file per partition, so each file is one task;
2. decodes each file in its task by path (``mapInArrow``), streamed in 1 MiB chunks by
   captures/decode.py (no binaryFile, no 2 GB limit, memory bounded by the open
   connections): the task writes the file's calls as Parquet and hands the file's errors and
   summary back as Arrow batches;
3. groups the calls by server (address and port, across files and connections), orders each
   server's calls by time, and runs the model's observer (model/observer.py) over them:
   violations. A server whose calls are all in one file is observed in that file's own task
   (it reads the file's calls back with pyarrow and sorts them there: no shuffle); the
   servers seen in several files go through Spark (repartition by server, sort within
   partitions, a second ``mapInArrow`` that streams each sorted partition). Both ways feed
   the observer the same calls in the same order, so the violations are the same (a test
   holds them equal);
4. writes Parquet tables ``calls``, ``violations``, ``errors``, ``files`` and ``summary``
   (one row per requirement) under DIR, and ``report.json`` and ``index.html`` beside them.
   Each decode task writes its file's calls itself (``calls/part-NNNNN.parquet``, pyarrow),
   so calls do not travel through the JVM twice; errors and file summaries go through Spark.
   The calls table has every column of captures/schema.py; the request/response JSON columns
   are filled only with ``--full-fields`` (the validator reads the key columns, which the
   struct-based fast path, captures/fastpath.py, gives for the common calls).

A bad file never fails the job: it is listed in ``errors`` and ``files`` (an unexpected
exception in a task becomes an error row of kind ``internal`` for that file).

Spark: ``local[*]`` by default (PySpark's own JVM: Java 17); ``--master spark://host:7077``
for a standalone cluster, ``--remote sc://host`` for Spark Connect. The executors import this
package: on a cluster, install mqconform on every worker (``pip install mqconform``), and give
``--out`` a directory every worker can write (a shared file system). Unsigned columns of the
decoder's tables (captures/schema.py) are signed in Spark's: uint16 -> int32, uint32 -> int64,
and the 64-bit ``lookup_id`` as the two's complement of the ULONGLONG (Spark has no unsigned
types).
"""

from __future__ import annotations

import fnmatch
import functools
import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

CAPTURE_SUFFIXES = (".pcap", ".pcapng", ".cap", ".pcap.gz")
TABLES = ("calls", "violations", "errors", "files", "summary")
BATCH = 8192


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

    from captures.schema import schema

    calls = pa.schema([(f.name, _signed(f.type)) for f in schema("calls")])
    errors = pa.schema([(f.name, _signed(f.type)) for f in schema("errors")])
    files = pa.schema([(f.name, _signed(f.type)) for f in schema("files")])
    record = pa.schema(
        [("record", pa.string())] + list(calls)
        + [pa.field("error_frame", pa.int64()), pa.field("error_kind", pa.string()),
           pa.field("error_message", pa.string())]
        + [pa.field(f"file_{f.name}", f.type) for f in files if f.name != "capture"])
    violations = pa.schema([
        ("requirement", pa.string()), ("actor", pa.string()), ("severity", pa.string()),
        ("capture", pa.string()), ("server", pa.string()), ("client", pa.string()),
        ("connection", pa.int32()), ("call_id", pa.int64()), ("method", pa.string()),
        ("request_frame", pa.int64()), ("response_frame", pa.int64()),
        ("time", pa.float64()), ("explanation", pa.string())])
    side = pa.schema([f for f in record if f.name not in calls.names or f.name in
                      ("capture", "connection")])
    return {"calls": calls, "errors": errors, "files": files, "record": record,
            "side": side, "violations": violations}


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
    capture suffixes, globs), in a stable order. Raises PipelineError for an input that
    names nothing."""
    import glob

    out: list[str] = []
    for item in inputs:
        if _is_uri(item) and not item.startswith("file://"):
            found = _expand_uri(item)
        else:
            local = item[len("file://"):] if item.startswith("file://") else item
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


def decode_partition(batches: Iterator[Any], calls_dir: str = "",
                     json_fields: bool = False) -> Iterator[Any]:
    """mapInArrow: rows (index, path) -> each file's calls written as
    ``calls_dir/part-<index>.parquet`` by this task; yields its errors and its summary
    (schema "side")."""
    for batch in batches:
        for index, path in zip(batch.column("index").to_pylist(),
                               batch.column("path").to_pylist(), strict=True):
            name = f"part-{index:05d}.parquet"
            writer = _writer(calls_dir, name)
            try:
                for kind, record in decode_one(path, json_fields):
                    if kind == "calls":
                        writer.write_batch(record)
                    elif kind == "restart":  # the file's calls begin again
                        writer.close()
                        writer = _writer(calls_dir, name)
                    else:
                        yield record
            finally:
                writer.close()


def _writer(directory: str, name: str) -> Any:
    """A Parquet writer of the calls schema at directory/name (local path or URI)."""
    import pyarrow.parquet as pq

    if _is_uri(directory) and not directory.startswith("file://"):
        from pyarrow import fs as pafs

        filesystem, inner = pafs.FileSystem.from_uri(directory)
        return pq.ParquetWriter(f"{inner}/{name}", arrow_schema("calls"),
                                filesystem=filesystem)
    local = directory[len("file://"):] if directory.startswith("file://") else directory
    return pq.ParquetWriter(str(Path(local) / name), arrow_schema("calls"))


def _read_calls(directory: str, name: str, columns: list[str]) -> Any:
    """The Parquet file a decode task wrote (``_writer``'s counterpart): these columns."""
    import pyarrow.parquet as pq

    if _is_uri(directory) and not directory.startswith("file://"):
        from pyarrow import fs as pafs

        filesystem, inner = pafs.FileSystem.from_uri(directory)
        return pq.read_table(f"{inner}/{name}", columns=columns, filesystem=filesystem)
    local = directory[len("file://"):] if directory.startswith("file://") else directory
    return pq.read_table(str(Path(local) / name), columns=columns)


#: the order the observer reads a server's calls in (also the shuffle path's sort)
ORDER = ("server", "_t", "capture", "connection", "call_id")
#: more servers than this in several files: all go through the shuffle (the list of those
#: servers travels to every file's task otherwise)
MAX_SPANNING = 50_000


def observe_files(batches: Iterator[Any], calls_dir: str = "",
                  spanning: frozenset[str] = frozenset()) -> Iterator[Any]:
    """mapInArrow: rows (index, path) -> the violations of the servers seen in that file
    only (not in ``spanning``), observed in the file's own task (module doc, 3)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for batch in batches:
        for index in batch.column("index").to_pylist():
            table = _read_calls(calls_dir, f"part-{index:05d}.parquet",
                                list(_OBSERVED_COLUMNS))
            if spanning and table.num_rows:
                keep = pc.invert(pc.is_in(table["server"],
                                          value_set=pa.array(sorted(spanning), pa.string())))
                table = table.filter(keep)
            if not table.num_rows:
                continue
            table = table.append_column(
                "_t", pc.coalesce(table["request_time"], table["response_time"]))
            # Spark's ascending sort puts nulls first; so does this one
            table = table.sort_by([(k, "ascending") for k in ORDER],
                                  null_placement="at_start").drop_columns(["_t"])
            yield from observe_partition(iter(table.to_batches(BATCH)))


def decode_one(path: str, json_fields: bool = False) -> Iterator[tuple[str, Any]]:
    """One file: ("calls", a batch of the calls schema) as they come, then ("side", its
    errors and summary). The compiled decoder (captures/_cdecode.c) reads the file where it is
    built and takes the file; where it gives the file up part-way, ("restart", None) says the
    calls yielded so far are void, and decode.Decoder reads the file from its start."""
    from captures import decode

    if not json_fields and decode.compiled():
        try:
            yield from _decode_compiled(path)
            return
        except Exception:  # noqa: BLE001 - Unsupported, or anything else: Decoder decides
            yield "restart", None
    yield from _decode_python(path, json_fields)


def _decode_compiled(path: str) -> Iterator[tuple[str, Any]]:
    from captures.decode import scan

    rows: list[tuple] = []
    others: list[Any] = []
    source = _open(path)
    try:
        for item in scan(source, path):
            if type(item) is list:
                rows += item
                while len(rows) >= BATCH:
                    yield "calls", _call_batch(rows[:BATCH])
                    del rows[:BATCH]
            else:
                others.append(item)
    finally:
        if hasattr(source, "close"):
            source.close()
    if rows:
        yield "calls", _call_batch(rows)
    yield "side", _other_batch(others)


def _decode_python(path: str, json_fields: bool) -> Iterator[tuple[str, Any]]:
    import operator

    from captures.decode import ROW_COLUMNS, Call, DecodeError, Decoder, FileSummary

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
                        yield "calls", _call_batch(rows)
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
        yield "calls", _call_batch(rows)
    yield "side", _other_batch(others)


def _call_batch(rows: list[tuple]) -> Any:
    """Call rows (tuples in decode.ROW_COLUMNS order, the calls schema's) as a batch of the
    calls schema: transposed by zip, one Arrow array per column."""
    import pyarrow as pa

    schema = arrow_schema("calls")
    arrays = []
    for f, column in zip(schema, zip(*rows, strict=True), strict=True):
        if f.name == "lookup_id":
            column = [_wrap64(v) for v in column]
        arrays.append(pa.array(column, f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _other_batch(items: list[Any]) -> Any:
    """A file's errors and summary as a batch of the "side" schema."""
    import pyarrow as pa

    from captures.decode import DecodeError

    schema = arrow_schema("side")
    cols: dict[str, list] = {n: [None] * len(items) for n in schema.names}
    file_names = [n[len("file_"):] for n in schema.names if n.startswith("file_")]
    for i, item in enumerate(items):
        error = isinstance(item, DecodeError)
        cols["record"][i] = "error" if error else "file"
        cols["capture"][i] = item.capture
        if error:
            cols["connection"][i] = item.connection
            cols["error_frame"][i] = item.frame
            cols["error_kind"][i] = item.kind
            cols["error_message"][i] = item.message
        else:
            for n in file_names:
                cols[f"file_{n}"][i] = getattr(item, n)
    return pa.RecordBatch.from_pydict(cols, schema=schema)


# ------------------------------------------------------------------------------ stage 2

_OBSERVED_COLUMNS = ("method", "request_time", "response_time", "status", "fault",
                     "decode_error", "capture", "server", "client", "connection", "call_id",
                     "request_first_frame", "response_last_frame", "handle", "result_handle",
                     "queue", "access", "action", "action_text", "request_id", "lookup_id",
                     "cursor", "ack", "sequence_id", "object_type", "props", "vts")


def observe_partition(batches: Iterator[Any]) -> Iterator[Any]:
    """mapInArrow over calls sorted by (server, time): violations (schema "violations")."""
    import pyarrow as pa

    from model.observer import Observed, Observer

    schema = arrow_schema("violations")
    names = schema.names
    out: list = []
    observer: Observer | None = None

    def emit() -> Any:
        batch = pa.RecordBatch.from_pydict(
            {n: [getattr(v, n) for v in out] for n in names}, schema=schema)
        out.clear()
        return batch

    #: the Observed fields in their order, read from these columns ("complete" is computed)
    order = [f for f in Observed.__slots__]
    source = {"request_frame": "request_first_frame", "response_frame": "response_last_frame"}
    for batch in batches:
        cols = {n: batch.column(n).to_pylist() for n in _OBSERVED_COLUMNS}
        cols["complete"] = [e is None for e in cols["decode_error"]]
        rows = zip(*(cols[source.get(f, f)] for f in order), strict=True)
        for row in rows:
            call = Observed(*row)
            if observer is None or observer.server != call.server:
                if observer is not None:
                    out.extend(observer.finish())
                observer = Observer(call.server)
            out.extend(observer.feed(call))
            if len(out) >= BATCH:
                yield emit()
    if observer is not None:
        out.extend(observer.finish())
    if out:
        yield emit()


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
    by_requirement: dict[str, int] = field(default_factory=dict)
    tables: dict[str, str] = field(default_factory=dict)


def session(master: str | None = None, remote: str | None = None,
            config: dict[str, str] | None = None) -> Any:
    """A SparkSession: Spark Connect for ``remote``, else ``master`` (default local[*])."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if not remote and (master or "local").startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("mqconform captures validate")
    if remote:
        builder = builder.remote(remote)
    else:
        builder = (builder.master(master or "local[*]")
                   .config("spark.pyspark.python", sys.executable)
                   .config("spark.ui.enabled", "false")
                   .config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(8 * BATCH))
                   .config("spark.driver.extraJavaOptions", "-Dlog4j2.level=ERROR"))
    for key, value in (config or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if not remote:
        spark.sparkContext.setLogLevel("ERROR")
    return spark


class _Tasks:
    """Shows the running stages' tasks (done/total) while the job runs (not with Connect)."""

    def __init__(self, spark: Any, show: Any):
        import threading

        self.tracker = spark.sparkContext.statusTracker()
        self.show = show
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self.stop.wait(1.0):
            parts = []
            for sid in self.tracker.getActiveStageIds():
                info = self.tracker.getStageInfo(sid)
                if info is not None:
                    parts.append(f"stage {sid}: {info.numCompletedTasks}/{info.numTasks} tasks")
            if parts:
                self.show("; ".join(parts))

    def __enter__(self) -> _Tasks:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        self.thread.join(timeout=2)


def run(inputs: list[str], out: str | Path, master: str | None = None,
        remote: str | None = None, spark: Any = None, progress: Any = None,
        partitions: int | None = None, tasks: Any = None, json_fields: bool = False,
        per_file: bool = True) -> Result:
    """The whole job (module doc). ``spark``: an existing session to use (kept open).
    ``progress(text)`` hears the phases, ``tasks(text)`` the running stages' task counts.
    ``json_fields``: fill the calls table's request/response JSON columns (slower).
    ``per_file=False``: every server through the shuffle (module doc, 3)."""
    import contextlib

    began = time.perf_counter()
    paths = expand(inputs)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    own = spark is None
    if own:
        spark = session(master, remote)
    say = progress or (lambda text: None)
    watch = _Tasks(spark, tasks) if tasks is not None and not remote \
        else contextlib.nullcontext()
    try:
        with watch:
            summary = _job(spark, paths, out, say, partitions, remote, json_fields, per_file)
    finally:
        if own:
            spark.stop()
    report = _report(out, summary, paths, time.perf_counter() - began)
    return Result(out=out, files=len(paths), frames=report["totals"]["frames"],
                  calls=report["totals"]["calls"], errors=report["totals"]["errors"],
                  violations=report["totals"]["violations"], seconds=report["seconds"],
                  by_requirement={r["requirement"]: r["violations"]
                                  for r in report["requirements"]},
                  tables={t: str(out / t) for t in TABLES})


def _job(spark: Any, paths: list[str], out: Path, say: Any, partitions: int | None,
         remote: str | None, json_fields: bool, per_file: bool = True) -> dict:
    from pyspark.sql import functions as F  # noqa: N812 - Spark's own convention

    say(f"{len(paths)} capture file(s); decoding, one task per file")
    calls_dir = out / "calls"
    for stale in (calls_dir, out / "_side"):
        shutil.rmtree(stale, ignore_errors=True)
    calls_dir.mkdir(parents=True)
    files_df = spark.createDataFrame([(i, p) for i, p in enumerate(paths)],
                                     "index long, path string")
    files_df = files_df.repartitionByRange(len(paths), "index")
    side = files_df.mapInArrow(functools.partial(decode_partition, calls_dir=str(calls_dir),
                                                 json_fields=json_fields),
                               spark_schema("side"))
    side.write.mode("overwrite").parquet(str(out / "_side"))
    side = spark.read.parquet(str(out / "_side"))
    errors = side.filter(F.col("record") == "error").select(
        "capture", F.col("error_frame").alias("frame"), F.col("error_kind").alias("kind"),
        F.col("error_message").alias("message"), "connection")
    file_cols = [n for n in arrow_schema("files").names if n != "capture"]
    files = side.filter(F.col("record") == "file").select(
        "capture", *[F.col(f"file_{n}").alias(n) for n in file_cols])
    errors.orderBy("capture", "frame", "kind", "message").write.mode("overwrite").parquet(
        str(out / "errors"))
    files.orderBy("capture").write.mode("overwrite").parquet(str(out / "files"))
    shutil.rmtree(out / "_side", ignore_errors=True)
    calls = spark.read.schema(spark_schema("calls")).parquet(str(calls_dir))
    say("validating each server's calls in time order")
    nparts = partitions or max(1, min(spark.sparkContext.defaultParallelism
                                      if not remote else 2, len(paths)) * 2)
    keyed = calls.select(*_OBSERVED_COLUMNS).withColumn(
        "_t", F.coalesce("request_time", "response_time"))
    parts = []
    spanning: list[str] | None = None
    if per_file:
        spanning = [r["server"] for r in calls.select("server", "capture").distinct()
                    .groupBy("server").count().filter(F.col("count") > 1)
                    .select("server").collect()]
        if len(spanning) > MAX_SPANNING:
            spanning = None
    if spanning is not None:
        parts.append(files_df.mapInArrow(
            functools.partial(observe_files, calls_dir=str(calls_dir),
                              spanning=frozenset(spanning)),
            spark_schema("violations")))
        keyed = keyed.filter(F.col("server").isin(spanning)) if spanning else None
    if keyed is not None:
        parts.append(keyed.repartition(nparts, "server")
                     .sortWithinPartitions(*ORDER)
                     .drop("_t")
                     .mapInArrow(observe_partition, spark_schema("violations")))
    violations = functools.reduce(lambda a, b: a.unionByName(b), parts)
    violations.orderBy("capture", "request_frame", "requirement").write.mode(
        "overwrite").parquet(str(out / "violations"))
    say("summarising")
    return _summary(spark, out)


def _summary(spark: Any, out: Path) -> dict:
    """The summary table (per requirement), from the written tables (small reads)."""
    from pyspark.sql import functions as F  # noqa: N812

    v = spark.read.parquet(str(out / "violations"))
    per = (v.groupBy("requirement", "actor", "severity")
           .agg(F.count("*").alias("violations"),
                F.countDistinct("capture", "client").alias("flows"),
                F.countDistinct("server").alias("servers"))
           .orderBy("requirement"))
    per.write.mode("overwrite").parquet(str(out / "summary"))
    rows = [r.asDict() for r in per.collect()]
    from pyspark.sql import Window

    first = Window.partitionBy("requirement").orderBy(
        "capture", "request_frame", "response_frame", "client", "explanation")
    chosen = (v.withColumn("_n", F.row_number().over(first)).filter(F.col("_n") <= 5)
              .orderBy("requirement", "_n").collect())  # five examples each, in any corpus
    examples: dict[str, list] = {}
    for r in chosen:
        examples.setdefault(r["requirement"], []).append(
            {k: r[k] for k in ("capture", "request_frame", "response_frame", "server",
                               "client", "method", "explanation")})
    files = [r.asDict() for r in spark.read.parquet(str(out / "files")).collect()]
    kinds = {r["kind"]: r["count"] for r in spark.read.parquet(str(out / "errors"))
             .groupBy("kind").count().collect()}
    return {"requirements": rows, "examples": examples, "files": files,
            "error_kinds": kinds}


def _report(out: Path, summary: dict, paths: list[str], seconds: float) -> dict:
    from model.observer import NOT_OBSERVABLE, RULES

    files = sorted(summary["files"], key=lambda f: f["capture"])
    totals = {k: sum(f[k] or 0 for f in files) for k in
              ("frames", "decoded", "rejected", "not_dcerpc", "calls", "errors", "gaps")}
    totals["files"] = len(paths)
    totals["violations"] = sum(r["violations"] for r in summary["requirements"])
    totals["reconciles"] = all(f["frames"] == f["decoded"] + f["rejected"] + f["not_dcerpc"]
                               for f in files)
    requirements = []
    for r in summary["requirements"]:
        requirements.append({**r, "text": _text(r["requirement"]),
                             "examples": summary["examples"].get(r["requirement"], [])})
    report = {
        "tool": "mqconform captures validate", "seconds": round(seconds, 3),
        "totals": totals, "requirements": requirements,
        "error_kinds": summary["error_kinds"],
        "files": files,
        "rules": [{"requirement": k, "actor": a, "severity": s, "checks": t,
                   "text": _text(k)} for k, (a, s, t) in sorted(RULES.items())],
        "not_observable": [{"requirement": k, "reason": why}
                           for k, why in sorted(NOT_OBSERVABLE.items())],
    }
    (out / "report.json").write_text(json.dumps(report, indent=1, default=str),
                                     encoding="utf-8")
    _html(out, report)
    return report


def _text(requirement: str) -> str:
    try:
        from spec.catalog import load

        global _CATALOG
        if _CATALOG is None:
            _CATALOG = {r.id: r for r in load()}
        r = _CATALOG.get(requirement)
        return r.text if r is not None else ""
    except Exception:
        return ""


_CATALOG: dict | None = None


def _html(out: Path, report: dict) -> None:
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(loader=PackageLoader("captures", "templates"),
                      autoescape=select_autoescape())
    (out / "index.html").write_text(env.get_template("validate.html").render(r=report),
                                    encoding="utf-8")


def score_against(labels: dict, out: Path) -> dict:
    """captures/synth.py ``score`` of the violations written under ``out``."""
    import pyarrow.parquet as pq

    from captures.synth import score

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
