"""``mqconform captures ...``: capture files.

    mqconform captures decode FILES... --out calls.parquet
    mqconform captures validate INPUTS... --out DIR [--master URL | --remote URL] [--labels F]
    mqconform captures synth --servers N --connections M --fault-rate R --out DIR

decode (one machine, no Spark)
writes the calls table (captures/schema.py) and, beside it, ``<stem>.errors.parquet`` and
``<stem>.files.parquet``; prints per file, as it ends, the frames read, decoded, rejected and
not DCE/RPC, the calls and the errors (a progress bar over the files on a terminal), then each
error kind with its count and the reasons of its first errors. Exit 0 when every file was
read to its end, 1 when a file had errors (its rows are still written) or no frame was read,
2 for bad arguments.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
from pathlib import Path

#: what the Spark stack of the ``spark`` extra brings, by the commands that need it
SPARK_EXTRA = {"decode": ("pyarrow",), "validate": ("pyspark", "pyarrow", "pandas")}


def require_extra(command: str, usage_error: type) -> None:
    """Stop with one line (exit 2) when the ``spark`` extra is not installed."""
    missing = [m for m in SPARK_EXTRA[command] if importlib.util.find_spec(m) is None]
    if missing:
        raise usage_error(f"mqconform captures {command} needs {', '.join(missing)}: "
                          f"pip install 'mqconform[spark]'")


class Progress:
    """A job's progress: on a terminal a rich progress bar (``done`` of ``total``, a spinner
    while nothing is counted yet); elsewhere (a CI log, a pipe) plain lines, one when the count
    changes and at most one every ``every`` seconds, so that the log shows the job moving
    without a line per second."""

    def __init__(self, console, unit: str, total: int | None = None, every: float = 5.0):
        import time

        self.console = console
        self.unit = unit
        self.total = total
        self.done = 0
        self.every = every
        self._clock = time.monotonic
        self._said: tuple = (None, float("-inf"))
        self._bar = None
        self._task = None
        self.live = console.is_terminal

    def __enter__(self) -> Progress:
        if self.live:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )
            from rich.progress import Progress as Bar

            self._bar = Bar(
                SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                MofNCompleteColumn(), TimeElapsedColumn(), console=self.console,
                transient=True)
            self._bar.__enter__()
            self._task = self._bar.add_task(self.unit, total=self.total)
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)

    def say(self, text: str) -> None:
        """A phase of the job, as a line above the bar (or in the log)."""
        if self._bar is not None:
            self._bar.console.print(f"[dim]{text}[/dim]")
        else:
            self.console.print(text)

    def update(self, done: int, total: int | None = None, unit: str | None = None) -> None:
        """``done`` of ``total`` ``unit`` (the unit, the total: as before when not given)."""
        self.done = done
        if total is not None:
            self.total = total
        if unit is not None:
            self.unit = unit
        if self._bar is not None:
            self._bar.update(self._task, completed=done, total=self.total,
                             description=self.unit)
            return
        now = self._clock()
        key = (self.unit, done, self.total)
        if key != self._said[0] and (now - self._said[1] >= self.every
                                     or done == self.total):
            self._said = (key, now)
            of = f"/{self.total}" if self.total is not None else ""
            self.console.print(f"{self.unit}: {done}{of} done")


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

    from mqconform.captures.decode import DecodeError, Decoder, FileSummary
    from mqconform.captures.schema import write_parquet

    console = Console(highlight=False, soft_wrap=True)
    summaries: list[FileSummary] = []
    errors: list[DecodeError] = []

    with Progress(console, "files", total=len(paths), every=2.0) as progress:
        def items():
            for path in paths:
                for item in Decoder(path, decode_stubs=not args.no_stubs).run(path):
                    if isinstance(item, FileSummary):
                        summaries.append(item)
                        progress.say(_file_line(item))
                        progress.update(len(summaries))
                    elif isinstance(item, DecodeError):
                        errors.append(item)
                    yield item

        written = write_parquet(items(), out)
    bad = sum(1 for s in summaries if s.errors)
    unreadable = sum(1 for s in summaries if not s.frames and s.errors)
    _print_errors(console, [{"kind": e.kind, "capture": e.capture, "frame": e.frame,
                             "message": e.message} for e in errors])
    for table, path in written.items():
        console.print(f"{table}: {path}")
    if summaries and unreadable == len(summaries):
        console.print(f"[bold red]none of the {len(summaries)} file(s) could be read: no "
                      f"call decoded[/]")
    elif not sum(s.frames for s in summaries):
        console.print("[bold red]no frame was read from the file(s)[/]")
    elif bad:
        console.print(f"[red]{bad} of {len(summaries)} file(s) had errors[/]")
    else:
        console.print("[green]every file read to its end[/]")
    return 1 if bad or not sum(s.frames for s in summaries) else 0


def _file_line(s) -> str:
    """One file's counts (a FileSummary, or a files-table row as a dict)."""
    get = (lambda k: s[k]) if isinstance(s, dict) else (lambda k: getattr(s, k))
    gaps = get("gaps")
    return (f"{get('capture')}: {get('frames')} frames ({get('decoded')} decoded, "
            f"{get('rejected')} rejected, {get('not_dcerpc')} not DCE/RPC), {get('calls')} "
            f"calls, {get('errors')} errors{', ' + str(gaps) + ' gaps' if gaps else ''}")


#: the errors printed per kind on the terminal (the report and the errors table have all)
SHOWN_PER_KIND = 3


def _print_errors(console, errors: list[dict], counts: dict[str, int] | None = None) -> None:
    """Every error kind with its count, and the reasons of its first SHOWN_PER_KIND errors
    (capture, frame: message)."""
    from rich.markup import escape

    if counts is None:
        counts = {}
        for e in errors:
            counts[e["kind"]] = counts.get(e["kind"], 0) + 1
    for kind in sorted(counts):
        console.print(f"[red]error {kind}: {counts[kind]}[/]")
        mine = [e for e in errors if e["kind"] == kind]
        for e in mine[:SHOWN_PER_KIND]:
            where = e["capture"] + (f" frame {e['frame']}" if e["frame"] is not None else "")
            console.print(f"  {escape(where)}: {escape(e['message'] or '')}")
        if counts[kind] > SHOWN_PER_KIND:
            console.print(f"  and {counts[kind] - min(len(mine), SHOWN_PER_KIND)} more")


def _some(names: list[str], shown: int = 3) -> str:
    """A few names, and how many more."""
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def cmd_validate(args: argparse.Namespace) -> int:
    """Exit 0: no violation and every file read whole (violations and decoding errors a
    conformance run lists as deliberate beside its capture excepted); 1: a violation or a file
    error, or nothing could be checked (every file unreadable, no frame read, none of the
    calls seen checked); 2: bad arguments (no such input, bad master URL, an unreadable
    list) or an input the task that read it could not open or read (a relative path a
    worker resolves in its own directory, a path not mounted there: the report lists
    them)."""
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
        try:
            labels = json.loads(Path(args.labels).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"--labels {args.labels}: {exc}") from None
    try:
        pipeline.out_dir(args.out)
    except pipeline.PipelineError as exc:
        raise UsageError(str(exc)) from None
    with Progress(console, "starting Spark", total=len(paths)) as bar:
        phases: list[str] = []

        def said(text: str) -> None:
            if len(phases) == 1:  # stage 1 has ended: every file read
                bar.update(len(paths), len(paths), "files")
            bar.say(text)
            if not phases:  # Spark is up: stage 1 begins
                bar.update(0, len(paths), "files")
            phases.append(text)

        def counted(text) -> None:
            # stage 1's tasks are the files, one each; later stages' are chains or lifetimes
            done, total = getattr(text, "done", None), getattr(text, "total", None)
            if done is not None:
                bar.update(done, total, "files" if len(phases) <= 1 else "tasks")

        try:
            result = pipeline.run(paths, args.out, master=args.master, remote=args.remote,
                                  progress=said, tasks=counted,
                                  partitions=args.partitions, json_fields=args.full_fields,
                                  history=args.history)
        except pipeline.PipelineError as exc:  # an input its task could not read, say
            raise UsageError(str(exc)) from None
    report = json.loads((result.out / "report.json").read_text(encoding="utf-8"))
    totals = report["totals"]
    failed = report.get("failed")
    unreadable = totals.get("unreadable", 0)
    console.print(f"{result.files} file(s){f' ({unreadable} unreadable)' if unreadable else ''}"
                  f", {result.frames} frames, {result.calls} calls, "
                  f"{result.errors} decoding error(s), {result.violations} violation(s) in "
                  f"{result.seconds:.1f} s")
    style = "red" if result.seen and not result.checked else (
        "yellow" if result.checked < result.seen else "")
    checked = f"{result.checked} of {result.seen}"
    console.print(f"calls checked: {f'[{style}]{checked}[/]' if style else checked} "
                  f"RemoteRead/qmmgmt call(s) seen")
    if result.checked < result.seen:
        console.print(f"  {result.seen - result.checked} call(s) not checked: an answer whose "
                      f"request is not in the capture, or a call whose bind is not and whose "
                      f"stubs settled no interface (errors table: kind unbound)")
    _print_errors(console, report.get("errors", []), report.get("error_kinds", {}))
    texts = {q["requirement"]: q.get("checks") for q in report.get("rules", [])}
    if result.by_requirement:
        console.print("violations by requirement:")
    for requirement, count in sorted(result.by_requirement.items()):
        what = texts.get(requirement)
        console.print(f"  {requirement}: {count}{f' ({what})' if what else ''}")
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
    if failed:
        console.print(f"[bold red]nothing was checked: {failed}; no violation is reported "
                      f"because none could be found[/]")
        return 1
    if known is not None:
        bad = (result.violations > known["violations"] or result.errors > known["errors"])
    else:
        bad = bool(result.violations or result.errors)
    if bad:
        console.print(f"[bold red]{result.violations} violation(s), {result.errors} decoding "
                      f"error(s){' (some unexpected)' if known is not None else ''}[/]")
    elif known is not None:
        console.print("[green]nothing unexpected[/]")
    elif not result.seen:
        console.print("[yellow]no RemoteRead or qmmgmt call in the capture(s): nothing to "
                      "check[/]")
    else:
        console.print(f"[green]no violation in the {result.checked} call(s) checked; every "
                      f"file read whole[/]")
    return 1 if bad else 0


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
    found: dict = {"violations": 0, "errors": 0, "files": files, "by_requirement": {},
                   "violation_keys": [], "error_keys": []}
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
                found["violation_keys"].append((row["capture"], row["request_frame"],
                                                row["requirement"]))
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
                found["error_keys"].append((row["capture"], row["frame"], row["kind"]))
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
