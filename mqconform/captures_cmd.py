"""``mqconform captures ...``: capture files.

    mqconform captures decode FILES... --out calls.parquet
    mqconform captures validate INPUTS... --out DIR [--master URL | --remote URL] [--labels F]
    mqconform captures synth --servers N --connections M --fault-rate R --out DIR

decode (one machine, no Spark)
writes the calls table (captures/schema.py) and, beside it, ``<stem>.errors.parquet`` and
``<stem>.files.parquet``; prints per file the frames read, decoded, rejected and not DCE/RPC,
the calls and the errors. Exit 0 when every file was read to its end, 1 when a file had
errors (its rows are still written), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
from pathlib import Path

#: what the Spark stack of the ``spark`` extra brings, by the commands that need it
SPARK_EXTRA = {"decode": ("pyarrow",), "validate": ("pyspark", "pyarrow", "pandas")}


def require_extra(command: str, usage_error: type) -> None:
    """Stop with one line (exit 2) when the ``spark`` extra is not installed."""
    missing = [m for m in SPARK_EXTRA[command] if importlib.util.find_spec(m) is None]
    if missing:
        raise usage_error(f"mqconform captures {command} needs {', '.join(missing)}: "
                          f"pip install 'mqconform[spark]'")


def cmd_decode(args: argparse.Namespace) -> int:
    UsageError = args.usage_error  # noqa: N806 - the command's error class (mqconform.cli)
    paths: list[str] = []
    for pattern in args.files:
        found = sorted(glob.glob(pattern)) if any(ch in pattern for ch in "*?[") else [pattern]
        if not found or not all(Path(f).is_file() for f in found):
            raise UsageError(f"{pattern}: no such file")
        paths += found
    out = Path(args.out)
    if not out.parent.exists():
        raise UsageError(f"--out {out}: directory {out.parent} does not exist")
    require_extra("decode", UsageError)
    from rich.console import Console

    from mqconform.captures.decode import Decoder, FileSummary
    from mqconform.captures.schema import write_parquet

    console = Console(highlight=False, soft_wrap=True)
    summaries: list[FileSummary] = []

    def items():
        for path in paths:
            for item in Decoder(path, decode_stubs=not args.no_stubs).run(path):
                if isinstance(item, FileSummary):
                    summaries.append(item)
                yield item

    written = write_parquet(items(), out)
    bad = 0
    for s in summaries:
        bad += bool(s.errors)
        console.print(f"{s.capture}: {s.frames} frames ({s.decoded} decoded, {s.rejected} "
                      f"rejected, {s.not_dcerpc} not DCE/RPC), {s.calls} calls, {s.errors} "
                      f"errors{', ' + str(s.gaps) + ' gaps' if s.gaps else ''}")
    for table, path in written.items():
        console.print(f"{table}: {path}")
    return 1 if bad else 0


def _some(names: list[str], shown: int = 3) -> str:
    """A few names, and how many more."""
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def cmd_validate(args: argparse.Namespace) -> int:
    """Exit 0: no violation and every file read whole (violations and decoding errors a
    conformance run lists as deliberate beside its capture excepted); 1: a violation or a file
    error; 2: bad arguments (no such input, bad master URL, an unreadable list) or an input
    the task that read it could not open or read (a relative path a worker resolves in its
    own directory, a path not mounted there: the report lists them)."""
    UsageError = args.usage_error  # noqa: N806
    require_extra("validate", UsageError)
    from rich.console import Console

    from mqconform.captures import pipeline

    console = Console(highlight=False, soft_wrap=True, stderr=False)
    try:
        paths = pipeline.expand(args.inputs)
    except pipeline.PipelineError as exc:
        raise UsageError(str(exc)) from None
    if args.master and args.remote:
        raise UsageError("--master and --remote: one or the other")
    if args.master and not args.master.startswith(("local", "spark://", "yarn", "k8s://")):
        raise UsageError(f"--master {args.master}: not a Spark master URL (local[N], "
                         f"spark://host:port, yarn, k8s://...)")
    if args.remote and not args.remote.startswith("sc://"):
        raise UsageError(f"--remote {args.remote}: not a Spark Connect URL (sc://host:port)")
    labels = None
    if args.labels:
        import json

        try:
            labels = json.loads(Path(args.labels).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"--labels {args.labels}: {exc}") from None
    try:
        pipeline.out_dir(args.out)
    except pipeline.PipelineError as exc:
        raise UsageError(str(exc)) from None
    with console.status("starting Spark") as status:
        try:
            result = pipeline.run(paths, args.out, master=args.master, remote=args.remote,
                                  progress=lambda text: console.print(f"[dim]{text}[/dim]"),
                                  tasks=lambda text: status.update(text),
                                  partitions=args.partitions, json_fields=args.full_fields,
                                  history=args.history)
        except pipeline.PipelineError as exc:  # an input its task could not read, say
            raise UsageError(str(exc)) from None
    console.print(f"{result.files} file(s), {result.frames} frames, {result.calls} calls "
                  f"({result.checked} of {result.seen} RemoteRead/qmmgmt calls checked), "
                  f"{result.errors} decoding error(s), {result.violations} violation(s) in "
                  f"{result.seconds:.1f} s")
    if not result.seen:
        console.print("  no RemoteRead or qmmgmt call was read: nothing was checked")
    if result.checked < result.seen:
        console.print(f"  {result.seen - result.checked} call(s) not checked: an answer whose "
                      f"request is not in the capture, or a call whose bind is not and whose "
                      f"stubs settled no interface (errors table: kind unbound)")
    for requirement, count in sorted(result.by_requirement.items()):
        console.print(f"  {requirement}: {count}")
    known = _expected(paths, result.out, UsageError, args.expected)
    if known is not None:
        console.print(f"expected: {known['violations']} violation(s) and {known['errors']} "
                      f"decoding error(s) are the deliberate departures of a conformance run, "
                      f"listed in {_some(known['files'])}; unexpected: "
                      f"{result.violations - known['violations']} violation(s), "
                      f"{result.errors - known['errors']} decoding error(s)")
        pipeline.mark_expected(result.out, known)
    for table in pipeline.TABLES:
        console.print(f"{table}: {result.out / table}")
    console.print(f"report: {result.out / 'index.html'} and {result.out / 'report.json'}")
    if labels is not None:
        score = pipeline.score_against(labels, result.out)
        console.print(f"against {args.labels}: {score['faulty_flows']} faulty flows, recall "
                      f"{score['recall']:.1%}, {score['false_positive_flows']} false "
                      f"positive flow(s) of {score['clean_flows']} clean")
    if known is not None:
        return 1 if (result.violations > known["violations"]
                     or result.errors > known["errors"]) else 0
    return 1 if result.violations or result.errors else 0


def _expected(paths: list[str], out: Path, usage_error: type,
              lists: list[str] | None = None) -> dict | None:
    """How many of the violations and decoding errors found are listed as deliberate: beside
    their capture (``wire.expected.json`` of ``mqconform run``; captures/expected.py), matched
    by frame, or in ``lists`` (--expected: the lists of runs whose traffic another capture
    holds, as dumpcap's), matched by the call's endpoints and call_id. None when there is no
    list."""
    import pyarrow.parquet as pq

    from mqconform.captures import expected

    wanted: set[tuple] = set()
    flows: set[tuple] = set()
    files = []
    for path in paths:
        try:
            entries = expected.load(path)
        except expected.ExpectedError as exc:
            raise usage_error(str(exc)) from None
        if entries is not None:
            wanted |= expected.keys(path, entries)
            files.append(expected.sidecar(path).name)
    for path in lists or []:
        try:
            entries = expected.load_list(path)
        except expected.ExpectedError as exc:
            raise usage_error(f"--expected {exc}") from None
        flows |= expected.flow_keys(entries)
        files.append(Path(path).name)
    if not files:
        return None
    found: dict = {"violations": 0, "errors": 0, "files": files, "by_requirement": {}}
    if (out / "violations").exists():
        table = pq.read_table(out / "violations",
                              columns=["capture", "request_frame", "requirement", "client",
                                       "server", "call_id"])
        for row in table.to_pylist():
            if expected.violation_key(row["capture"], row["request_frame"],
                                      row["requirement"]) in wanted or (
                    "violation", row["client"], row["server"], row["call_id"],
                    row["requirement"]) in flows:
                found["violations"] += 1
                by = found["by_requirement"]
                by[row["requirement"]] = by.get(row["requirement"], 0) + 1
    if (out / "errors").exists():
        calls = {}
        if flows:  # an error row names its frame: the call there gives endpoints and call_id
            for row in pq.read_table(out / "calls", columns=[
                    "capture", "request_first_frame", "request_last_frame", "client",
                    "server", "call_id"]).to_pylist():
                for frame in (row["request_first_frame"], row["request_last_frame"]):
                    calls[(row["capture"], frame)] = (row["client"], row["server"],
                                                      row["call_id"])
        for row in pq.read_table(out / "errors", columns=["capture", "frame", "kind"]
                                 ).to_pylist():
            call = calls.get((row["capture"], row["frame"]))
            if expected.error_key(row["capture"], row["frame"], row["kind"]) in wanted or (
                    call is not None and ("error", *call, row["kind"]) in flows):
                found["errors"] += 1
    return found


def cmd_synth(args: argparse.Namespace) -> int:
    UsageError = args.usage_error  # noqa: N806
    from mqconform.server.faults import FAULTS

    if args.servers < 1 or args.connections < 1 or args.steps < 1:
        raise UsageError("--servers, --connections and --steps: at least 1")
    if not 0.0 <= args.fault_rate <= 1.0:
        raise UsageError(f"--fault-rate {args.fault_rate}: between 0 and 1")
    unknown = [f for f in args.fault or () if f not in FAULTS]
    if unknown:
        raise UsageError(f"--fault {unknown[0]}: known faults are {', '.join(FAULTS)}")
    from mqconform.conformance.synth import synth

    labels = synth(args.out, servers=args.servers, connections=args.connections,
                   fault_rate=args.fault_rate, seed=args.seed, steps=args.steps,
                   faulty_servers=args.faulty_servers, faults=tuple(args.fault or ()) or None,
                   progress=lambda i, n: print(f"server {i}/{n} done", flush=True))
    faulty = {(a["capture"], a["client"]) for a in labels["activations"]}
    print(f"{args.out}: {len(labels['servers'])} capture(s), {len(labels['activations'])} "
          f"fault activation(s) in {len(faulty)} flow(s); labels: "
          f"{Path(args.out) / 'labels.json'}")
    return 0


def add(sub: argparse._SubParsersAction, parser_class: type, usage_error: type) -> None:
    p = sub.add_parser("captures", help="capture files: decode, validate (Spark), synth")
    csub = p.add_subparsers(dest="captures_command", parser_class=parser_class, required=True)
    d = csub.add_parser("decode", help="pcap/pcapng files to a Parquet calls table")
    d.add_argument("files", metavar="FILE", nargs="+", help="capture files (globs allowed)")
    d.add_argument("--out", default="calls.parquet", help="the calls table (default "
                   "calls.parquet); errors and files tables are written beside it")
    d.add_argument("--no-stubs", action="store_true", help="skip decoding the stubs "
                   "(request and response stay null)")
    d.set_defaults(func=cmd_decode, usage_error=usage_error)
    v = csub.add_parser("validate", help="check captured traffic against the documents "
                        "(Spark): calls, violations, errors, files, summary, report")
    v.add_argument("inputs", metavar="INPUT", nargs="+", help="capture files, directories or "
                   "globs; local or URIs (file://, hdfs://, s3://, ...)")
    v.add_argument("--out", required=True, help="output directory (Parquet tables, "
                   "report.json, index.html)")
    v.add_argument("--master", help="Spark master (default local[*]; spark://host:7077)")
    v.add_argument("--remote", help="Spark Connect server (sc://host:15002)")
    v.add_argument("--partitions", type=int, help="partitions for the per-server stage")
    v.add_argument("--labels", help="a synth corpus's labels.json: print recall and false "
                   "positives")
    v.add_argument("--full-fields", action="store_true", help="fill the calls table's request "
                   "and response JSON columns too (every stub decoded in full: slower)")
    v.add_argument("--expected", action="append", default=[], metavar="LIST",
                   help="a run's wire.expected.json whose traffic these captures hold (a "
                   "dumpcap capture made during mqconform run): its deliberate departures "
                   "are matched by endpoints and call_id and reported as expected; "
                   "repeatable")
    v.add_argument("--history", choices=("auto", "per-file", "joined"), default="auto",
                   help="how one server's calls in several files make its history: auto "
                   "(files join when they continue each other in time, as ring-buffer chunks "
                   "do; files that overlap are separate lifetimes; a file repeating "
                   "another's calls counts once), per-file, or joined (one history per "
                   "server address)")
    v.set_defaults(func=cmd_validate, usage_error=usage_error)
    s = csub.add_parser("synth", help="a synthetic corpus: real clients against reference "
                        "servers, some with seeded faults, with ground-truth labels")
    s.add_argument("--servers", type=int, default=4)
    s.add_argument("--connections", type=int, default=8, help="client connections per server")
    s.add_argument("--steps", type=int, default=60, help="calls per connection (about)")
    s.add_argument("--fault-rate", type=float, default=0.3,
                   help="probability an armed fault acts at each chance (0: no faults)")
    s.add_argument("--faulty-servers", type=int, help="servers with faults armed (default "
                   "half, rounded up)")
    s.add_argument("--fault", action="append", help="arm only these faults (repeatable; "
                   "default all of server/faults.py)")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--out", required=True)
    s.set_defaults(func=cmd_synth, usage_error=usage_error)
