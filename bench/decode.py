"""Capture decoding speed and memory: our decoder against tshark on the same file.

    python bench/decode.py [--frames 1000000] [--memory-gb 2] [--keep DIR]

1. A synthetic corpus: the wire.pcap of a real run of the suite against the reference server
   (every RemoteRead and qmmgmt method, NDR, faults, fragments), copied over and over with
   each copy's connections on their own client address and port, until it holds ``--frames``
   frames.
2. Our decoder on it, in this process (one core): the compiled path (captures/_cdecode.c via
   decode.scan, what the trace validator runs: every call's stubs read into the validator's
   columns), and the Python decoder without stub decoding (what tshark does too: it has no MSMQ
   dissector, so it decodes DCE/RPC headers and leaves the stubs) and with every stub decoded
   into typed fields.
3. ``tshark -r FILE -Y dcerpc`` on the same file, output discarded, timed the same way, with
   personal plugins disabled: tshark has no option for that, so it runs with HOME,
   XDG_CONFIG_HOME and WIRESHARK_CONFIG_DIR on an empty directory (its personal plugin, Lua
   plugin and configuration folders, ``tshark -G folders``, are then empty). tshark is
   single-threaded, so every figure is per core. Goal: the compiled path's frames/s /
   tshark's >= 1.0, printed side by side. Like for like with the stubs: tshark with our Lua
   dissector (captures/wireshark/mqconform.lua, which decodes every stub's fields),
   ``-Y "mqrr || mqmr"``, against ours with every stub decoded.
4. Memory: the decoder in a child process on files of 1/16, 1/2 and all of ``--memory-gb``
   GB; peak RSS of each (ru_maxrss). Streaming means the RSS levels off: the state kept is
   the open connections and a bounded memory of ended ones, never the file.
"""

from __future__ import annotations

import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_capture(directory: Path) -> Path:
    done = subprocess.run([sys.executable, "-P", "-m", "mqconform.cli", "run", "--report-dir",
                           str(directory)], capture_output=True, text=True, cwd=directory)
    pcap = directory / "wire.pcap"
    if not pcap.exists():
        raise SystemExit(f"the suite wrote no wire.pcap (exit {done.returncode})")
    return pcap


def corpus(seed: Path, out: Path, frames: int) -> int:
    """Copies of ``seed``'s frames, each copy's client on its own IPv4 address and port."""
    from mqconform.captures import pcapio
    from mqconform.captures.recorder import pcap_header

    records = [r for r in pcapio.records(seed) if isinstance(r, pcapio.Record)]
    server_port = 0
    for r in records:  # the server's port: the destination of the first SYN
        if r.data[47] & 0x02 and not r.data[47] & 0x10:
            server_port = struct.unpack_from(">H", r.data, 36)[0]
            break
    written = 0
    copy = 0
    start = records[0].ts
    with open(out, "wb") as f:
        f.write(pcap_header())
        while written < frames:
            copy += 1
            addr = struct.pack(">BBH", 10, 200, copy & 0xFFFF)
            shift = copy * (records[-1].ts - start + 1.0)
            chunk = bytearray()
            for r in records:
                data = bytearray(r.data)
                sport, dport = struct.unpack_from(">HH", data, 34)
                if dport == server_port:  # client -> server: rewrite the source
                    data[26:30] = addr
                    struct.pack_into(">H", data, 34, 20000 + (sport + copy) % 40000)
                else:
                    data[30:34] = addr
                    struct.pack_into(">H", data, 36, 20000 + (dport + copy) % 40000)
                ts = r.ts + shift
                sec = int(ts)
                chunk += struct.pack("<IIII", sec, int((ts - sec) * 1e6), len(data), len(data))
                chunk += data
                written += 1
                if written >= frames:
                    break
            f.write(chunk)
    return written


def ours(path: Path, stubs: bool) -> tuple[float, dict]:
    from mqconform.captures.decode import Decoder, FileSummary

    began = time.perf_counter()
    summary = None
    for item in Decoder(str(path), decode_stubs=stubs).run(path):
        if isinstance(item, FileSummary):
            summary = item
    wall = time.perf_counter() - began
    return wall, {"frames": summary.frames, "calls": summary.calls, "errors": summary.errors,
                  "reconciles": summary.reconciles}


def compiled(path: Path) -> tuple[float, dict]:
    """The compiled decoder over the file (its stubs read), in this process."""
    from mqconform.captures import decode

    if not decode.compiled():
        raise SystemExit("the compiled decoder is not built (pip install -e . with gcc)")
    began = time.perf_counter()
    summary, rows = None, 0
    for item in decode.scan(path, str(path)):
        if type(item) is list:
            rows += len(item[0])
        elif isinstance(item, decode.FileSummary):
            summary = item
    wall = time.perf_counter() - began
    return wall, {"frames": summary.frames, "calls": summary.calls, "rows": rows,
                  "errors": summary.errors, "reconciles": summary.reconciles}


def no_personal_plugins(home: Path) -> dict:
    """tshark's environment with its personal folders (plugins, Lua plugins, configuration)
    on an empty directory: the global plugins only, as a fresh installation has them."""
    home.mkdir(parents=True, exist_ok=True)
    return {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "WIRESHARK_CONFIG_DIR": str(home / ".config" / "wireshark")}


def tshark(path: Path, env: dict, lua: bool = False) -> float:
    exe = shutil.which("tshark")
    if exe is None:
        raise SystemExit("tshark is not installed")
    from mqconform.captures.dissector import SCRIPT_PATH, TSHARK_OPTIONS

    cmd = [exe, *TSHARK_OPTIONS, "-r", str(path), "-Y", "dcerpc"]
    if lua:
        cmd = [exe, *TSHARK_OPTIONS, "-X", f"lua_script:{SCRIPT_PATH}", "-r", str(path),
               "-Y", "mqrr || mqmr"]
    began = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   env=env)
    return time.perf_counter() - began


def peak_rss(path: Path) -> tuple[float, int]:
    """(seconds, peak RSS in MiB) of decoding ``path`` (no stubs) in a child process."""
    code = ("import resource, time\n"
            "from mqconform.captures.decode import Decoder\n"
            "t=time.perf_counter()\n"
            f"for _ in Decoder('m', decode_stubs=False).run({str(path)!r}): pass\n"
            "print(time.perf_counter()-t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    out = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    return float(out[0]), int(out[1]) // 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=1_000_000)
    ap.add_argument("--memory-gb", type=float, default=2.0, help="0: skip the memory run")
    ap.add_argument("--keep", help="directory for the corpus (default: a temporary one)")
    args = ap.parse_args(argv)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="mqconform-decode-"))
    work.mkdir(parents=True, exist_ok=True)
    seed = run_capture(work)
    big = work / "corpus.pcap"
    n = corpus(seed, big, args.frames)
    size = big.stat().st_size
    print(f"corpus: {n} frames, {size / 1e6:.0f} MB, from {seed} "
          f"({os.cpu_count()} cores; every figure below is one process, one core)")
    env = no_personal_plugins(work / "tshark-home")
    folders = subprocess.run(["tshark", "-G", "folders"], capture_output=True, text=True,
                             env=env).stdout
    print("tshark's personal folders (empty): " + "; ".join(
        line.split("\t")[-1] for line in folders.splitlines() if line.startswith("Personal")))
    t_tshark = tshark(big, env)
    t_c, s_c = compiled(big)
    print(f"tshark -Y dcerpc (no personal plugins) {t_tshark:7.1f} s  {n / t_tshark:9.0f} "
          f"frames/s | compiled, stubs read {t_c:7.1f} s  {n / t_c:9.0f} frames/s | "
          f"compiled / tshark {t_tshark / t_c:.2f} (goal >= 1.0)  calls {s_c['calls']}, "
          f"errors {s_c['errors']}, reconciles {s_c['reconciles']}", flush=True)
    t_fast, s_fast = ours(big, stubs=False)
    t_full, s_full = ours(big, stubs=True)
    t_lua = tshark(big, env, lua=True)
    print(f"tshark -Y dcerpc      {t_tshark:7.1f} s  {n / t_tshark:9.0f} frames/s")
    print(f"Python, headers only  {t_fast:7.1f} s  {n / t_fast:9.0f} frames/s  ratio "
          f"{t_tshark / t_fast:.2f}  (goal >= 1.0)  calls {s_fast['calls']}, "
          f"reconciles {s_fast['reconciles']}")
    print(f"Python, stubs decoded {t_full:7.1f} s  {n / t_full:9.0f} frames/s  ratio "
          f"{t_tshark / t_full:.2f}  calls {s_full['calls']}, errors {s_full['errors']}")
    print(f"tshark + mqconform.lua {t_lua:6.1f} s  {n / t_lua:9.0f} frames/s  (every stub "
          f"decoded in Lua; Python with stubs / this: {t_lua / t_full:.2f}, compiled / this: "
          f"{t_lua / t_c:.2f})")
    if args.memory_gb > 0:
        target = int(args.memory_gb * 1e9)
        per_frame = size / n
        figures = []
        for part in (16, 2, 1):
            path = work / f"memory-{part}.pcap"
            corpus(seed, path, int(target / per_frame / part))
            seconds, rss = peak_rss(path)
            figures.append((path.stat().st_size / 1e9, rss, seconds))
            path.unlink()
        print("memory (headers only, one process): " + "; ".join(
            f"{gb:.2f} GB -> peak RSS {rss} MiB ({sec:.0f} s)" for gb, rss, sec in figures)
            + f"; last doubling {figures[2][1] / max(figures[1][1], 1):.2f}x")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
