"""Files generated from the project's definitions and checked in (the Wireshark dissector, the
compiled decoder's header): written, or checked to be up to date (``--check``, exit 1 if not)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def main(argv: list[str] | None, path: Path, generate: Callable[[], str], module: str) -> int:
    """The command line of one generator: ``python -m <module> [--check]``."""
    ap = argparse.ArgumentParser(prog=f"python -m {module}",
                                 description=f"regenerate {path.parent.name}/{path.name}")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if the checked-in file is not what would be generated")
    args = ap.parse_args(argv)
    text = generate()
    if args.check:
        same = path.exists() and path.read_text(encoding="utf-8") == text
        print(f"{path}: {'up to date' if same else f'STALE (python -m {module})'}",
              file=sys.stdout if same else sys.stderr)
        return 0 if same else 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")
    return 0
