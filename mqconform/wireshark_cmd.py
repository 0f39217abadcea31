"""``mqconform wireshark ...``: the Lua dissector for RemoteRead and qmmgmt.

    mqconform wireshark install [--dir DIR]

writes mqconform.lua (captures/dissector.py's ``generate()``) into Wireshark's personal Lua
plugins folder, or DIR, and prints its path. Wireshark and tshark load it at their next start
(Help > About Wireshark > Plugins lists it); ``tshark -X lua_script:FILE`` loads it from
anywhere. Exit 0 when written, 2 for a folder that cannot be made or written. A connection
whose client port Wireshark registers for another protocol shows as that protocol unless
TCP's "Try heuristic sub-dissectors first" is set (captures.dissector.TSHARK_OPTIONS):
install says so.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

SCRIPT_NAME = "mqconform.lua"


def plugin_dir() -> Path:
    """Wireshark's personal plugins folder: %APPDATA%\\Wireshark\\plugins on Windows,
    ~/.local/lib/wireshark/plugins elsewhere (Linux, macOS, the BSDs)."""
    if sys.platform == "win32":
        appdata = os.environ.get("APPDATA")
        base = Path(appdata) if appdata else Path.home() / "AppData" / "Roaming"
        return base / "Wireshark" / "plugins"
    return Path.home() / ".local" / "lib" / "wireshark" / "plugins"


def cmd_install(args: argparse.Namespace) -> int:
    UsageError = args.usage_error  # noqa: N806 - the command's error class (mqconform.cli)
    from mqconform.captures.dissector import generate

    folder = Path(args.dir).expanduser() if args.dir else plugin_dir()
    target = folder / SCRIPT_NAME
    try:
        folder.mkdir(parents=True, exist_ok=True)
        target.write_text(generate(), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from None
    print(target)
    print("Set Preferences > Protocols > TCP > Try heuristic sub-dissectors first (tshark: "
          "-o tcp.try_heuristic_first:TRUE): a connection from a client port Wireshark "
          "registers for another protocol shows as that protocol otherwise.", file=sys.stderr)
    return 0


def add(sub: argparse._SubParsersAction, parser_class: type, usage_error: type) -> None:
    p = sub.add_parser("wireshark", help="the Wireshark Lua dissector for RemoteRead and "
                       "qmmgmt")
    wsub = p.add_subparsers(dest="wireshark_command", parser_class=parser_class, required=True)
    i = wsub.add_parser("install", help="write mqconform.lua where Wireshark finds personal "
                        "Lua plugins, and print its path")
    i.add_argument("--dir", help=f"write it here instead (default: {plugin_dir()})")
    i.set_defaults(func=cmd_install, usage_error=usage_error)
