"""``mqconform captures ...``: capture files on one machine.

    mqconform captures decode FILES... --out calls.parquet

writes the calls table (captures/schema.py) and, beside it, ``<stem>.errors.parquet`` and
``<stem>.files.parquet``; prints per file the frames read, decoded, rejected and not DCE/RPC,
the calls and the errors. Exit 0 when every file was read to its end, 1 when a file had
errors (its rows are still written), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import glob
from pathlib import Path


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
    from rich.console import Console

    from captures.decode import Decoder, FileSummary
    from captures.schema import write_parquet

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


def add(sub: argparse._SubParsersAction, parser_class: type, usage_error: type) -> None:
    p = sub.add_parser("captures", help="capture files: decode DCE/RPC calls")
    csub = p.add_subparsers(dest="captures_command", parser_class=parser_class, required=True)
    d = csub.add_parser("decode", help="pcap/pcapng files to a Parquet calls table")
    d.add_argument("files", metavar="FILE", nargs="+", help="capture files (globs allowed)")
    d.add_argument("--out", default="calls.parquet", help="the calls table (default "
                   "calls.parquet); errors and files tables are written beside it")
    d.add_argument("--no-stubs", action="store_true", help="skip decoding the stubs "
                   "(request and response stay null)")
    d.set_defaults(func=cmd_decode, usage_error=usage_error)
