"""The ``mqconform`` command.

    mqconform spec export --format json|csv     the whole catalog
    mqconform spec show ID                      one requirement: text, section, notes, citations
    mqconform spec list [filters]               requirements matching --doc/--section/...
    mqconform spec stats                        counts and coverage checks
    mqconform spec trace                        citations of requirement IDs in the tree
    mqconform spec report --out DIR             catalog.json + index.html (traceability)
    mqconform spec errata [--format json]       where the documents contradict themselves
    mqconform spec choices [--format json]      where they leave the server free (what
                                                `serve --choices alternate` flips)
    mqconform spec profile NAME                 departures a product documents for itself
    mqconform call ENDPOINT METHOD [KEY=VALUE ...]  one RemoteRead/qmmgmt call, by hand
    mqconform run [--target T] [--report-dir D] [--select ID] [--strict] [-- PYTEST ARGS]
                                                the conformance suite (exit 0 conformant,
                                                1 a failure, 3 incomplete, 4 internal error)
    mqconform replay SCRIPT [--target T]        replay a shrunk stateful failure (exit 1: it
                                                reproduces, 0: every step conforms)

Exit codes: 0 success; 1 a check failed (stats, trace) or an endpoint could not be reached;
2 bad usage, an unknown ID, method or field, or a bad value.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from pathlib import Path

from mqconform import __version__


class UsageError(Exception):
    """Bad input from the user: reported in one line, exit 2."""


def _catalog():
    from mqconform.spec.catalog import load

    return load()


# ---------------------------------------------------------------------------- spec export

EXPORT_FIELDS = ("id", "doc", "section", "title", "kind", "level", "actor", "testability",
                 "reason", "notes", "text", "context", "line", "retired", "curated")


def cmd_spec_export(args: argparse.Namespace) -> int:
    catalog = _catalog()
    rows = [r for r in catalog if args.include_retired or not r.retired]
    out = sys.stdout
    if args.format == "json":
        json.dump([r.as_dict() for r in rows], out, indent=1, ensure_ascii=False)
        out.write("\n")
    else:
        writer = csv.DictWriter(out, fieldnames=EXPORT_FIELDS, lineterminator="\n")
        writer.writeheader()
        for r in rows:
            d = r.as_dict()
            d["notes"] = " ".join(str(n) for n in r.notes)
            writer.writerow(d)
    return 0


# ---------------------------------------------------------------------------- spec show

def cmd_spec_show(args: argparse.Namespace) -> int:
    from mqconform.spec.catalog import UnknownRequirement
    from mqconform.spec.trace import scan

    catalog = _catalog()
    try:
        r = catalog.get(args.id)
    except UnknownRequirement as exc:
        raise UsageError(str(exc)) from None
    path = catalog.section_file(r.doc, r.section)
    cites = scan(catalog=catalog).by_id().get(r.id, [])
    if args.format == "json":
        d = r.as_dict()
        d["document_file"] = str(path) if path else None
        d["product_notes"] = {n: catalog.note(r.doc, n) for n in r.notes}
        d["citations"] = [{"path": c.path, "line": c.line, "role": c.role} for c in cites]
        json.dump(d, sys.stdout, indent=1, ensure_ascii=False)
        print()
        return 0
    from rich.console import Console
    from rich.markup import escape

    console = Console(highlight=False, soft_wrap=True)
    status = " [red](retired)[/]" if r.retired else ""
    console.print(f"[bold]{r.id}[/]{status}  {r.level}  {r.kind}  actor: {r.actor}")
    console.print(f"{r.doc} section {r.section} {escape(r.title)}")
    if path:
        console.print(f"source: {path}:{r.line}")
    console.print()
    if r.context:
        console.print(f"[dim]{escape(r.context)}[/]")
    console.print(escape(r.text))
    console.print()
    console.print(f"testability: {r.testability}" + (f" — {escape(r.reason)}" if r.reason else ""))
    for n in r.notes:
        note = catalog.note(r.doc, n)
        if note:
            console.print(f"<{n}> (section {note['section']}): {escape(note['text'])}")
        else:
            console.print(f"<{n}> not in the seeds: the note belongs to a later edition's "
                          f"appendix")
    if cites:
        console.print("\ncited by:")
        for c in cites:
            console.print(f"  {c.role:9} {c.path}:{c.line}")
    else:
        console.print("\ncited by: nothing yet")
    if args.section_text and path:
        console.print("\n" + escape(path.read_text(encoding="utf-8")))
    return 0


# ---------------------------------------------------------------------------- spec list

def _filter(catalog, args: argparse.Namespace):
    for r in catalog:
        if r.retired and not args.include_retired:
            continue
        if args.doc and r.doc != args.doc:
            continue
        if args.section and not (r.section == args.section
                                 or r.section.startswith(args.section.rstrip(".") + ".")):
            continue
        if args.level and r.level != args.level:
            continue
        if args.testability and r.testability != args.testability:
            continue
        if args.kind and r.kind != args.kind:
            continue
        if args.actor and r.actor != args.actor:
            continue
        yield r


def cmd_spec_list(args: argparse.Namespace) -> int:
    rows = list(_filter(_catalog(), args))
    if args.format == "json":
        json.dump([r.as_dict() for r in rows], sys.stdout, indent=1, ensure_ascii=False)
        print()
        return 0
    for r in rows:
        text = r.text if len(r.text) <= 110 else r.text[:107] + "..."
        print(f"{r.id}\t{r.level}\t{r.testability}\t{text}")
    print(f"{len(rows)} requirements", file=sys.stderr)
    return 0


# ---------------------------------------------------------------------------- spec stats

def cmd_spec_stats(args: argparse.Namespace) -> int:
    from mqconform.spec.stats import compute

    stats = compute(_catalog())
    if args.format == "json":
        json.dump(stats, sys.stdout, indent=1)
        print()
    else:
        from mqconform.spec.stats import render

        render(stats, by_section=args.by_section)
    return 0 if stats["checks"]["ok"] else 1


# ---------------------------------------------------------------------------- spec trace

def cmd_spec_trace(args: argparse.Namespace) -> int:
    from mqconform.spec.trace import scan

    root = Path(args.root) if args.root else None
    if root is not None and not root.is_dir():
        raise UsageError(f"--root {args.root}: not a directory")
    result = scan(root)
    for e in result.errors:
        print(str(e), file=sys.stderr)
    by_id = result.by_id()
    if args.verbose:
        for rid, cites in sorted(by_id.items()):
            print(rid, " ".join(f"{c.path}:{c.line}" for c in cites))
    print(f"{len(result.citations)} citations of {len(by_id)} requirements; "
          f"{len(result.errors)} errors")
    return 1 if result.errors else 0


# ---------------------------------------------------------------------------- spec errata

def cmd_spec_errata(args: argparse.Namespace) -> int:
    from mqconform.spec import errata

    try:
        entries = errata.load()
    except errata.ErrataError as exc:
        print(f"mqconform spec errata: {exc}", file=sys.stderr)
        return 1
    if not args.include_retired:
        entries = [e for e in entries if not e.retired]
    if args.format == "json":
        json.dump([e.as_dict() for e in entries], sys.stdout, indent=1, ensure_ascii=False)
        print()
    else:
        print(errata.render(entries))
    return 0


# ---------------------------------------------------------------------------- spec choices

def cmd_spec_choices(args: argparse.Namespace) -> int:
    from mqconform.spec import choices

    try:
        entries = choices.load()
    except choices.ChoicesError as exc:
        print(f"mqconform spec choices: {exc}", file=sys.stderr)
        return 1
    catalog = _catalog()
    if args.format == "json":
        json.dump(choices.as_json(entries, catalog), sys.stdout, indent=1, ensure_ascii=False)
        print()
    else:
        print(choices.render(entries, catalog))
    return 0


# ---------------------------------------------------------------------------- spec profile

def cmd_spec_profile(args: argparse.Namespace) -> int:
    from mqconform.spec import profiles

    catalog = _catalog()
    try:
        expected = profiles.expectations(args.name, catalog)
    except profiles.ProfileError as exc:
        raise UsageError(f"spec profile: {exc}") from None
    if args.format == "json":
        json.dump([{"id": rid, "reason": reason} for rid, reason in expected.items()],
                  sys.stdout, indent=1, ensure_ascii=False)
        print()
        return 0
    for rid, reason in expected.items():
        print(f"{rid}: {reason}")
    print(f"{len(expected)} documented departure(s) expected by profile {args.name}")
    return 0


# ---------------------------------------------------------------------------- spec report

def cmd_spec_report(args: argparse.Namespace) -> int:
    from mqconform.spec.report import write_report

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {args.out}: exists and is not a directory")
    paths = write_report(_catalog(), out)
    for p in paths:
        print(f"wrote {p}")
    return 0


# ---------------------------------------------------------------------------- call

def cmd_call(args: argparse.Namespace) -> int:
    from mqconform.conformance import client as wc

    try:
        call = wc.call_from_arguments(args.method, args.fields)
        endpoint = wc.parse_endpoint(args.endpoint)
    except wc.ArgumentError as exc:
        raise UsageError(str(exc)) from None
    try:
        with wc.RpcClient(timeout=args.timeout, epm_port=args.epm_port) as client:
            client.connect(endpoint, ndr64=args.ndr64, interface=call.interface)
            result = client.call(call)
    except wc.EncodeError as exc:  # a value that does not fit its field
        raise UsageError(str(exc)) from None
    except (wc.RpcError, wc.DecodeError) as exc:  # unreachable, timed out, bad answer
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        json.dump(wc.result_to_dict(result), sys.stdout, indent=1, ensure_ascii=False)
        print()
    else:
        print(wc.format_result(result))
    return 0


# ---------------------------------------------------------------------------- run

def cmd_run(args: argparse.Namespace) -> int:
    """The conformance suite: pytest on the installed conformance/cases with the suite's
    plugin (conformance/plugin.py). Exit codes as ``mqconform run --help`` gives them
    (RUN_EXIT_CODES): 2 for a bad target file, an unreachable endpoint, an unknown requirement ID
    or a pytest option the suite cannot honour (checked before any case runs); 3 for a run
    interrupted, before its first case too: a signal while pytest starts is noted
    (conformance/interrupts.py) and ends the run when its session begins."""
    try:
        return _run(args)
    except KeyboardInterrupt:
        print("mqconform run: incomplete: interrupted before the run began", file=sys.stderr)
        return 3


def _run(args: argparse.Namespace) -> int:
    import pytest

    from mqconform.conformance import interrupts
    from mqconform.conformance.plugin import cases_dir
    from mqconform.conformance.targetfile import TargetFileError, load
    from mqconform.conformance.targets import RpcTarget, TargetError

    for arg in args.pytest_args:
        if arg in ("-n", "--dist", "--numprocesses") or arg.startswith(
                ("-n", "--dist=", "--numprocesses=")) and not arg.startswith("--no"):
            raise UsageError(f"run -- {arg}: pytest-xdist is not supported (the cases share "
                             f"one target and one report); run without it")
    catalog = _catalog()
    ids = [r.id for r in catalog]
    for prefix in args.select:
        if not any(i == prefix or i.startswith(prefix.rstrip("/") + "/")
                   or i.startswith(prefix + ".") for i in ids):
            raise UsageError(f"--select {prefix}: unknown requirement ID")
    target = args.target or "reference"
    try:
        spec = load(target, catalog)
    except TargetFileError as exc:
        raise UsageError(str(exc)) from None
    if spec.endpoint not in ("reference", "model"):
        try:  # reachable? (one line, exit 2, rather than every case failing)
            RpcTarget(spec.endpoint, spec.ndr64, timeout=spec.timeout,
                      epm_port=spec.epm_port).close()
        except TargetError as exc:
            raise UsageError(f"target {spec.name}: unreachable: {exc}") from None
    cases = cases_dir()
    report_dir = Path(args.report_dir).resolve()
    # rootdir: the tree holding conformance/ (the checkout, or the installed package), so
    # node IDs read conformance/cases/...; pytest's cache (--lf, --ff) beside the reports
    argv = [str(cases), "-c", str(cases / "suite.ini"), "--rootdir", str(cases.parent.parent),
            "-o", f"cache_dir={report_dir / '.pytest_cache'}",
            "-p", "mqconform.conformance.plugin", "--mq-target", target,
            "--mq-report-dir", str(report_dir)]
    # a progress bar and a summary (conformance/progress.py) in place of pytest's reporter,
    # unless pytest's own output is asked for (-v, or --pytest-output)
    verbose = any(a.startswith("-v") for a in args.pytest_args)
    if args.pytest_output or verbose:
        argv += [] if verbose else ["-q"]
    else:
        argv += ["-p", "no:terminal", "-p", "mqconform.conformance.progress"]
    for prefix in args.select:
        argv += ["--mq-select", prefix]
    if args.strict:
        argv.append("--mq-strict")
    if args.redact_auth:
        argv.append("--mq-redact-auth")
    if args.allow_inconclusive:
        argv.append("--mq-allow-inconclusive")
    if args.min_coverage is not None:
        if not 0 <= args.min_coverage <= 100:
            raise UsageError(f"--min-coverage {args.min_coverage:g}: a percentage, 0 to 100")
        argv += ["--mq-min-coverage", str(args.min_coverage)]
    results = report_dir / "results.json"
    try:
        results.unlink(missing_ok=True)  # a verdict read below is this run's, or none
    except OSError as exc:
        raise UsageError(f"--report-dir {report_dir}: {exc.strerror or exc}") from None
    replaced = interrupts.install()
    try:
        rc = pytest.main(argv + list(args.pytest_args))
    finally:
        interrupts.restore(replaced)
    if rc == pytest.ExitCode.USAGE_ERROR:
        return 2
    try:
        _write_expected(report_dir)
    except KeyboardInterrupt:
        print("mqconform run: interrupted while writing wire.expected.json; the run's other "
              "reports are whole", file=sys.stderr)
    try:
        verdict = json.loads(results.read_text(encoding="utf-8"))["exit"]
    except (OSError, ValueError, KeyError, TypeError):
        if rc == pytest.ExitCode.INTERRUPTED or interrupts.PENDING.is_set():
            raise KeyboardInterrupt from None  # before the session began: nothing to report
        print(f"mqconform run: internal error: no results.json was written (pytest exit "
              f"status {int(rc)})", file=sys.stderr)
        return 4
    if verdict["code"] == 3:
        print(f"mqconform run: incomplete: {'; '.join(_incomplete(results))}", file=sys.stderr)
    elif verdict["code"] == 4:
        print("mqconform run: internal error of mqconform (tracebacks in "
              f"{report_dir / 'errors'})", file=sys.stderr)
    return int(verdict["code"])


def _incomplete(results: Path) -> list[str]:
    try:
        return json.loads(results.read_text(encoding="utf-8")).get("incomplete") or ["?"]
    except (OSError, ValueError):
        return ["?"]


def _write_expected(report_dir: Path) -> None:
    """wire.expected.json beside wire.pcap: the run's deliberate departures, which
    ``mqconform captures validate`` reports as expected (captures/expected.py)."""
    capture, results = report_dir / "wire.pcap", report_dir / "results.json"
    if not (capture.is_file() and results.is_file()):
        return
    from mqconform.captures import expected

    try:
        path = expected.write(capture, results)
    except Exception as exc:  # the run's verdicts stand; say why the list is missing
        print(f"mqconform run: {expected.sidecar(capture).name} not written: "
              f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return
    print(f"deliberate departures: {path}")


# ---------------------------------------------------------------------------- replay

def cmd_replay(args: argparse.Namespace) -> int:
    """A program a stateful machine saved (conformance/stateful.py), run again on a target."""
    from mqconform.conformance.stateful import load_program, replay_main

    try:
        program = load_program(args.script)
    except (OSError, ValueError, SyntaxError) as exc:
        raise UsageError(f"{args.script}: not a saved stateful program ({exc})") from None
    argv = ["--target", args.target] + (["--pcap", args.pcap] if args.pcap else [])
    return replay_main(program, argv, args.script)


# ---------------------------------------------------------------------------- serve

def cmd_serve(args: argparse.Namespace) -> int:
    from mqconform.server.main import ServeError, run

    for name in ("port", "epm_port", "control_port"):
        value = getattr(args, name)
        if value is not None and not 0 <= value <= 65535:
            raise UsageError(f"--{name.replace('_', '-')} {value}: not a TCP port")
    for name in ("max_connections", "reassembly_budget"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name.replace('_', '-')} {getattr(args, name)}: must be at "
                             "least 1")
    for name in ("idle_timeout", "unbound_timeout", "pdu_timeout"):
        if not getattr(args, name) > 0:  # also refuses nan
            raise UsageError(f"--{name.replace('_', '-')} {getattr(args, name)}: must be a "
                             "positive number of seconds")
    if not 0 <= args.min_rate < float("inf"):
        raise UsageError(f"--min-rate {args.min_rate}: must be a number of octets >= 0")
    if getattr(args, "command_line", False):
        _with_the_system_allocator()
    try:
        return run(args)
    except ServeError as exc:
        raise UsageError(str(exc)) from None


#: glibc's malloc as ``mqconform serve`` runs it (_with_the_system_allocator): one arena for
#: every thread, and no per-thread cache of freed chunks. Measured with bench/floods.py
#: (10,000 receives, then every client gone): RSS after 43 MiB with glibc's defaults, 35 with
#: these (33 before the flood); bench/server.py's calls per second the same within noise.
MALLOC_TUNABLES = {"glibc.malloc.arena_max": "1", "glibc.malloc.tcache_count": "0"}


def _with_the_system_allocator() -> None:
    """``mqconform serve`` run as a command on Linux starts again, the same process
    (``exec``) with the same arguments, with PYTHONMALLOC=malloc (unless PYTHONMALLOC is
    set): Python's own allocator keeps a 1 MiB arena as long as one object in it lives, so
    after a flood of clients the server would hold tens of MiB it no longer uses; glibc's
    malloc gives them back (server/rpc.py: malloc_trim once connections have closed). Its
    tunables get MALLOC_TUNABLES where GLIBC_TUNABLES does not name them already: with an
    arena per thread, and freed chunks kept in a cache per thread, what a few objects
    surviving the flood hold is pages in every arena."""
    if os.environ.get("PYTHONMALLOC") or not sys.platform.startswith("linux"):
        return
    from mqconform.server.rpc import _malloc_trim

    if _malloc_trim() is None:  # not glibc: nothing would give the memory back either
        return
    os.environ["PYTHONMALLOC"] = "malloc"
    before = os.environ.get("GLIBC_TUNABLES")
    given = [item for item in (before or "").split(":") if item]
    named = {item.split("=", 1)[0] for item in given}
    os.environ["GLIBC_TUNABLES"] = ":".join(
        given + [f"{k}={v}" for k, v in MALLOC_TUNABLES.items() if k not in named])
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])
    except OSError:  # cannot start again: serve as we are
        del os.environ["PYTHONMALLOC"]
        if before is None:
            del os.environ["GLIBC_TUNABLES"]
        else:
            os.environ["GLIBC_TUNABLES"] = before


def cmd_fuzz(args: argparse.Namespace) -> int:
    """Malformed PDUs and stubs at an endpoint while a canary session keeps working
    (conformance/fuzz.py); exit 1 on a finding."""
    import time

    from mqconform.conformance import fuzz
    from mqconform.conformance.client import ArgumentError, parse_endpoint

    try:
        endpoint = parse_endpoint(args.endpoint)
    except ArgumentError as exc:
        raise UsageError(str(exc)) from None
    if endpoint.port is None:
        raise UsageError(f"{args.endpoint}: give the port (ncacn_ip_tcp:HOST[PORT])")
    if args.inputs < 1 or args.workers < 1:
        raise UsageError("--inputs and --workers: at least 1")
    refill = None
    if args.control:
        host, _, port = args.control.removeprefix("http://").rstrip("/").rpartition(":")
        if not port.isdigit():
            raise UsageError(f"--control {args.control}: http://HOST:PORT")
        token = None
        if args.control_token_env is not None:
            token = os.environ.get(args.control_token_env)
            if not token:
                raise UsageError("--control-token-env names no set environment variable "
                                 "(value not shown)")
        refill = fuzz.control_refill((host, int(port)), token)
    try:
        fuzzer = fuzz.Fuzzer((endpoint.host, endpoint.port), args.queue, args.canary_queue,
                             refill=refill)
    except Exception as exc:  # noqa: BLE001 - a bad format name
        raise UsageError(f"--queue/--canary-queue: {exc}") from None
    began = time.monotonic()
    try:
        with fuzzer.canary() as canary:
            fuzzer.run_many((fuzz.mutation(i, args.seed) for i in range(args.inputs)),
                            args.workers)
    except OSError as exc:
        raise UsageError(f"{args.endpoint}: {exc}") from None
    seconds = time.monotonic() - began
    print(f"{fuzzer.inputs} inputs (seed {args.seed}) in {seconds:.0f} s; canary "
          f"{canary.rounds} rounds, {len(canary.failures)} failed")
    for outcome, n in fuzzer.outcomes.most_common():
        print(f"  {n:7d}  {outcome}")
    for f in fuzzer.findings:
        print(f"FINDING {f.what}\n  input: {f.input}")
    return 1 if fuzzer.findings else 0


def _add_fuzz(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fuzz", help="send malformed PDUs and stubs to an endpoint while a "
                                    "canary session checks it still serves")
    p.add_argument("endpoint", metavar="ENDPOINT", help="ncacn_ip_tcp:HOST[PORT]")
    p.add_argument("--queue", required=True, metavar="FORMAT",
                   help="a queue the inputs may open, read and empty (DIRECT=OS:...)")
    p.add_argument("--canary-queue", metavar="FORMAT",
                   help="a queue with one message the canary peeks (default: --queue)")
    p.add_argument("--inputs", type=int, default=3000)
    p.add_argument("--workers", type=int, default=8, help="connections at a time")
    p.add_argument("--seed", type=int, default=0, help="the same seed, the same inputs")
    p.add_argument("--control", metavar="URL", help="a reference server's control API, to "
                   "refill queues the inputs empty")
    p.add_argument("--control-token-env", metavar="NAME",
                   help="the environment variable holding that control API's token")
    p.set_defaults(func=cmd_fuzz)


# ---------------------------------------------------------------------------- parser

class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2 (argparse's default prints usage too)
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    from mqconform.spec.catalog import DOCS

    parser = _Parser(prog="mqconform", description="MSMQ RemoteRead/qmmgmt conformance suite, "
                     "reference model and requirement catalog.")
    parser.add_argument("--version", action="version", version=f"mqconform {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, required=True)

    spec = sub.add_parser("spec", help="the requirement catalog")
    spec_sub = spec.add_subparsers(dest="spec_command", parser_class=_Parser, required=True)

    p = spec_sub.add_parser("export", help="print the whole catalog")
    p.add_argument("--format", choices=("json", "csv"), default="json")
    p.add_argument("--include-retired", action="store_true")
    p.set_defaults(func=cmd_spec_export)

    p = spec_sub.add_parser("show", help="one requirement with its section and citations")
    p.add_argument("id", metavar="ID", help="e.g. MS-MQRR/3.1.4.9/R4")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--section-text", action="store_true", help="print the whole section too")
    p.set_defaults(func=cmd_spec_show)

    p = spec_sub.add_parser("list", help="requirements matching filters")
    p.add_argument("--doc", choices=DOCS)
    p.add_argument("--section", help="section number prefix, e.g. 3.1.4.7")
    p.add_argument("--level", choices=("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY"))
    p.add_argument("--testability", choices=("wire", "trace", "model", "client", "none"))
    p.add_argument("--kind", choices=("sentence", "step"))
    p.add_argument("--actor", choices=("server", "client", "queue manager"))
    p.add_argument("--include-retired", action="store_true")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=cmd_spec_list)

    p = spec_sub.add_parser("stats", help="counts by document, section, level, testability")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--by-section", action="store_true", help="one row per section")
    p.set_defaults(func=cmd_spec_stats)

    p = spec_sub.add_parser("trace", help="find requirement IDs cited in the source tree")
    p.add_argument("--root", help="tree to scan (default: this checkout)")
    p.add_argument("-v", "--verbose", action="store_true", help="list every citation")
    p.set_defaults(func=cmd_spec_trace)

    p = spec_sub.add_parser("errata", help="where the documents contradict themselves or each "
                            "other, and what the model does there")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--include-retired", action="store_true")
    p.set_defaults(func=cmd_spec_errata)

    p = spec_sub.add_parser("choices", help="where the documents leave the server free, what "
                            "the reference does there and what --choices alternate serves")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=cmd_spec_choices)

    p = spec_sub.add_parser("profile", help="the departures a product documents for itself "
                            "(product behaviour notes) that `profile: NAME` in a target file "
                            "expects")
    p.add_argument("name", help="a profile (spec/profiles/NAME.yaml): windows")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=cmd_spec_profile)

    p = spec_sub.add_parser("report", help="write catalog.json and index.html")
    p.add_argument("--out", default="reports", help="directory (default: reports)")
    p.set_defaults(func=cmd_spec_report)

    p = sub.add_parser("call", help="call one RemoteRead or qmmgmt method on an endpoint")
    p.add_argument("endpoint", metavar="ENDPOINT", help="ncacn_ip_tcp:HOST[PORT]; without "
                   "[PORT] the endpoint mapper is asked")
    p.add_argument("method", metavar="METHOD", help="e.g. R_GetServerPort, R_OpenQueue")
    p.add_argument("fields", metavar="KEY=VALUE", nargs="*",
                   help="fields of the call (ints, constant names, format names, hex octets)")
    p.add_argument("--ndr64", action="store_true", help="bind RemoteRead with NDR64")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds (default 10)")
    p.add_argument("--epm-port", type=int, default=135, help="endpoint mapper port")
    p.set_defaults(func=cmd_call)
    _add_serve(sub)
    _add_run(sub)
    _add_fuzz(sub)
    from mqconform import captures_cmd

    captures_cmd.add(sub, _Parser, UsageError)
    __import__("mqconform.wireshark_cmd").wireshark_cmd.add(sub, _Parser, UsageError)
    p = sub.add_parser("replay", help="replay a shrunk stateful failure on a target")
    p.add_argument("script", metavar="SCRIPT", help="a reports/stateful/<machine>-<n>.py")
    p.add_argument("--target", default="reference", help="target file (YAML), reference "
                   "(default: the embedded server) or model")
    p.add_argument("--pcap", help="write the replay's exchanges here")
    p.set_defaults(func=cmd_replay)
    return parser


RUN_EXIT_CODES = """exit codes:
  0  conformant: the run completed, at least one case ran, no unexpected failure, no
     inconclusive case (unless --allow-inconclusive), wire coverage at or above any
     --min-coverage
  1  non-conformant: an unexpected failure
  2  usage or configuration error (arguments, target file, unreachable endpoint before the
     run, unknown requirement ID); nothing ran
  3  incomplete: no case ran, interrupted (Ctrl-C or SIGTERM), the target stopped answering
     (the cases after it are listed as not run), inconclusive cases not allowed, coverage
     below --min-coverage
  4  internal error of mqconform (tracebacks in REPORT_DIR/errors/, not on the terminal)
results.json says the same: complete, incomplete (the reasons), exit {code, meaning}."""


def _add_run(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run the conformance suite against a target",
                       epilog=RUN_EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--target", help="target file (YAML), an endpoint ncacn_ip_tcp:HOST[PORT] "
                   "(no set-up: cases that need queues are inconclusive), reference (default: "
                   "the embedded server), reference:alternate (the embedded server with another "
                   "allowed value wherever the documents leave a choice) or model")
    p.add_argument("--report-dir", default="reports", help="results.json, junit.xml, "
                   "index.html and wire.pcap (default: reports)")
    p.add_argument("--select", action="append", default=[], metavar="ID",
                   help="only cases of requirement IDs with this prefix (repeatable)")
    p.add_argument("--strict", action="store_true", help="SHOULD-level failures fail the run")
    p.add_argument("--redact-auth", action="store_true",
                   help="zero the NTLMSSP tokens of the binds in wire.pcap: with credentials "
                        "it holds the NTLMv2 exchange, from which a password can be attacked "
                        "offline")
    p.add_argument("--allow-inconclusive", action="store_true",
                   help="inconclusive cases (a precondition SUT control could not set up) do "
                        "not make the run incomplete")
    p.add_argument("--min-coverage", type=float, default=None, metavar="PCT",
                   help="the run is incomplete below this wire coverage: the percentage of "
                        "the wire-testable requirements of MS-MQRR and MS-MQMR that a passing "
                        "case covers")
    p.add_argument("--pytest-output", action="store_true",
                   help="pytest's own terminal output instead of the progress bar and summary")
    p.add_argument("pytest_args", nargs="*", metavar="-- PYTEST ARGS",
                   help="passed to pytest after --: -x, --lf, -k EXPR, -m MS-MQRR/3.1.4.7 "
                        "(a section or requirement ID as a marker); not -n (pytest-xdist)")
    p.set_defaults(func=cmd_run)


def _handle_limit(text: str) -> int | None:
    """``--handle-limit``: a positive number, or ``none``."""
    if text.strip().lower() == "none":
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (or 'none')") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: at least 1 (or 'none' for no limit)")
    return value


def _add_serve(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the reference queue manager (RemoteRead, qmmgmt)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on "
                   "(default 127.0.0.1)")
    p.add_argument("--port", type=int, default=2103,
                   help="RemoteRead/qmmgmt port (default 2103; 0 picks a free one)")
    p.add_argument("--epm-port", type=int, default=None,
                   help="run an endpoint mapper on this port (135 needs root; 0 = any)")
    p.add_argument("--queues", help="provisioning file (YAML): queue manager, queues, messages")
    p.add_argument("--control-port", type=int, default=None,
                   help="enable the control API (JSON over HTTP; not MSMQ) on this port")
    p.add_argument("--control-host", default="127.0.0.1",
                   help="address of the control API (default 127.0.0.1 whatever --host is); "
                        "off loopback it needs --control-token-env")
    p.add_argument("--control-token-env", metavar="NAME",
                   help="the control API's bearer token is in environment variable NAME (at "
                        "least 16 characters); every request sends Authorization: Bearer TOKEN")
    p.add_argument("--control-unauthenticated", action="store_true",
                   help="run the control API without a token: loopback only, and refused "
                        "when the provisioning file has a security section")
    p.add_argument("--store", metavar="DIR", help="keep recoverable messages in DIR (SQLite, "
                   "WAL) across restarts; the first start writes the provisioned ones")
    p.add_argument("--store-sync", choices=("FULL", "NORMAL"), default="FULL",
                   help="FULL (default): every change on disk before its answer, surviving "
                        "power loss; NORMAL: surviving a crash of the server only")
    p.add_argument("--choices", choices=("reference", "alternate"), default="reference",
                   help="where the documents leave the server free (spec/choices.yaml; "
                        "`mqconform spec choices`): the reference's values (default), or "
                        "another allowed value for every switch")
    limits = p.add_argument_group(
        "limits", "what clients may hold (server/rpc.py, Limits); the endpoint mapper's too")
    limits.add_argument("--max-connections", type=int, default=1024, metavar="N",
                        help="connections served at once (default 1024); past it a newcomer "
                             "evicts the one that costs least to drop")
    limits.add_argument("--idle-timeout", type=float, default=900.0, metavar="SECONDS",
                        help="close a bound connection silent this long with nothing in "
                             "flight and no context handle to run down (default 900)")
    limits.add_argument("--unbound-timeout", type=float, default=15.0, metavar="SECONDS",
                        help="close a connection silent this long before its bind (default 15)")
    limits.add_argument("--pdu-timeout", type=float, default=10.0, metavar="SECONDS",
                        help="a PDU once begun, or the next fragment of a request, must come "
                             "within this (default 10)")
    limits.add_argument("--min-rate", type=float, default=1024.0, metavar="OCTETS",
                        help="a PDU must arrive at this many octets a second, after 2 s of "
                             "grace (default 1024; 0: no rate)")
    limits.add_argument("--reassembly-budget", type=int, default=64, metavar="MIB",
                        help="MiB of fragmented requests under reassembly on all connections "
                             "together (default 64)")
    limits.add_argument("--handle-limit", type=_handle_limit, default=4096, metavar="N",
                        help="the most context handles and cursors one client (association group) "
                             "may hold; past it an open or a cursor fails with "
                             "MQ_ERROR_INSUFFICIENT_RESOURCES (default 4096; 'none': no limit)")
    p.add_argument("--fault", action="append", default=[], metavar="NAME",
                   help="TESTING ONLY: depart from the documents on purpose (server/faults.py "
                        "lists the faults; repeatable), to measure a trace validator")
    p.add_argument("--fault-rate", type=float, default=1.0,
                   help="probability that an armed fault acts at each chance (default 1)")
    p.add_argument("--fault-seed", type=int, default=0)
    p.add_argument("--fault-log", help="write the faults' activations (JSON) here on exit")
    p.set_defaults(func=cmd_serve)


def main(argv: list[str] | None = None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        args.command_line = argv is None  # this process runs mqconform as a command
        return args.func(args)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `mqconform spec export | head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
