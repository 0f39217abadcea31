"""Reading capture files as a stream of records: classic pcap (both byte orders, microsecond and
nanosecond timestamps) and pcapng (Section Header, Interface Description, Enhanced and Simple
Packet blocks; other blocks are skipped), whatever their size: records are read one at a time
from a buffered file, never the whole file.

``records(path)`` yields, in file order, ``Record`` (a frame: its number, counted from 1 as
Wireshark does, timestamp, link type and bytes) or ``RecordError`` (what is wrong and where). A
file that cannot be read further (a truncated record, a corrupt length, a foreign format) ends
with one RecordError; the records before it were yielded, so nothing already read is lost.
Sources: the pcap format (draft-ietf-opsawg-pcap, tcpdump's pcap-savefile) and pcapng
(draft-ietf-opsawg-pcapng): block types, byte-order magic, if_tsresol.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

PCAP_MAGIC_US = 0xA1B2C3D4
PCAP_MAGIC_NS = 0xA1B23C4D
PCAPNG_SHB = 0x0A0D0D0A
PCAPNG_BYTE_ORDER = 0x1A2B3C4D
PCAPNG_IDB, PCAPNG_SPB, PCAPNG_EPB, PCAPNG_OPB = 0x00000001, 0x00000003, 0x00000006, 0x00000002
#: a record longer than this is taken for corruption (snap lengths top out at 256 KiB; jumbo
#: and loopback frames stay far below)
MAX_RECORD = 16 << 20

LINKTYPE_NULL, LINKTYPE_ETHERNET, LINKTYPE_RAW = 0, 1, 101
LINKTYPE_LINUX_SLL, LINKTYPE_LINUX_SLL2, LINKTYPE_IPV4, LINKTYPE_IPV6 = 113, 276, 228, 229


@dataclass(slots=True)
class Record:
    number: int  # frame number, from 1
    ts: float  # seconds since 1970-01-01 UTC
    linktype: int
    data: bytes
    orig_len: int


@dataclass(slots=True)
class RecordError:
    number: int | None  # the frame it concerns, None for the file as a whole
    offset: int  # byte offset in the file
    kind: str  # truncated, corrupt, format, io
    message: str


def records(source: str | Path | BinaryIO, buffer_size: int = 1 << 20
            ) -> Iterator[Record | RecordError]:
    """The records of a pcap or pcapng file (a path or an open binary file)."""
    if isinstance(source, (str, Path)):
        try:
            f = open(source, "rb", buffering=buffer_size)  # noqa: SIM115 - closed below
        except OSError as exc:
            yield RecordError(None, 0, "io", f"cannot open: {exc.strerror or exc}")
            return
        try:
            yield from _records(f)
        finally:
            f.close()
    else:
        yield from _records(source)


def _records(f: BinaryIO) -> Iterator[Record | RecordError]:
    try:
        head = f.read(4)
    except OSError as exc:
        yield RecordError(None, 0, "io", f"cannot read: {exc}")
        return
    if len(head) < 4:
        yield RecordError(None, 0, "format", f"{len(head)} bytes: not a pcap or pcapng file")
        return
    (magic_le,) = struct.unpack("<I", head)
    (magic_be,) = struct.unpack(">I", head)
    if magic_le == PCAPNG_SHB:
        yield from _pcapng(f, head)
    elif PCAP_MAGIC_US in (magic_le, magic_be) or PCAP_MAGIC_NS in (magic_le, magic_be):
        yield from _pcap(f, "<" if magic_le in (PCAP_MAGIC_US, PCAP_MAGIC_NS) else ">",
                         PCAP_MAGIC_NS in (magic_le, magic_be))
    else:
        yield RecordError(None, 0, "format", f"magic 0x{magic_le:08X}: not a pcap or pcapng "
                                             f"file")


def _pcap(f: BinaryIO, order: str, nano: bool) -> Iterator[Record | RecordError]:
    rest = f.read(20)
    if len(rest) < 20:
        yield RecordError(None, 4, "truncated", "the pcap file header is cut short")
        return
    _major, _minor, _zone, _sigfigs, _snaplen, network = struct.unpack(order + "HHiIII", rest)
    linktype = network & 0x0FFFFFFF
    header = struct.Struct(order + "IIII")
    scale = 1e-9 if nano else 1e-6
    number, offset = 0, 24
    read = f.read
    while True:
        raw = read(16)
        if not raw:
            return
        number += 1
        if len(raw) < 16:
            yield RecordError(number, offset, "truncated",
                              f"the record header is cut short ({len(raw)} of 16 bytes)")
            return
        sec, frac, caplen, orig = header.unpack(raw)
        if caplen > MAX_RECORD or (nano and frac >= 1_000_000_000) or \
                (not nano and frac >= 1_000_000):
            yield RecordError(number, offset, "corrupt",
                              f"record header says {caplen} bytes, fraction {frac}: "
                              f"not a record (the rest of the file cannot be framed)")
            return
        data = read(caplen)
        if len(data) < caplen:
            yield RecordError(number, offset, "truncated",
                              f"the record is cut short ({len(data)} of {caplen} bytes)")
            return
        yield Record(number, sec + frac * scale, linktype, data, orig)
        offset += 16 + caplen


def _pcapng(f: BinaryIO, head: bytes) -> Iterator[Record | RecordError]:
    read = f.read
    order = "<"
    interfaces: list[tuple[int, float]] = []  # (linktype, seconds per tick)
    number, offset = 0, 0
    block_type_raw = head
    while True:
        if block_type_raw is None:
            block_type_raw = read(4)
            if not block_type_raw:
                return
        if len(block_type_raw) < 4:
            yield RecordError(None, offset, "truncated", "a block header is cut short")
            return
        length_raw = read(4)
        if len(length_raw) < 4:
            yield RecordError(None, offset, "truncated", "a block header is cut short")
            return
        if struct.unpack("<I", block_type_raw)[0] == PCAPNG_SHB:
            body_head = read(4)
            if len(body_head) < 4:
                yield RecordError(None, offset, "truncated", "a section header is cut short")
                return
            (bom_le,) = struct.unpack("<I", body_head)
            if bom_le == PCAPNG_BYTE_ORDER:
                order = "<"
            elif struct.unpack(">I", body_head)[0] == PCAPNG_BYTE_ORDER:
                order = ">"
            else:
                yield RecordError(None, offset, "corrupt", "section header without the "
                                                          "byte-order magic")
                return
            interfaces = []  # a new section: new interfaces
            (length,) = struct.unpack(order + "I", length_raw)
            consumed = 12
        else:
            (length,) = struct.unpack(order + "I", length_raw)
            consumed = 8
            body_head = b""
        block_type = struct.unpack(order + "I", block_type_raw)[0]
        if length < 12 or length % 4 or length > MAX_RECORD:
            yield RecordError(None, offset, "corrupt", f"block length {length} at offset "
                                                       f"{offset}: not a block")
            return
        body = body_head + read(length - consumed)
        if len(body) < length - 8:
            is_packet = block_type in (PCAPNG_EPB, PCAPNG_SPB, PCAPNG_OPB)
            yield RecordError(number + 1 if is_packet else None, offset, "truncated",
                              f"a block of {length} bytes is cut short ({len(body) + 8} bytes)")
            return
        body, trailer = body[:-4], body[-4:]
        if struct.unpack(order + "I", trailer)[0] != length:
            yield RecordError(None, offset, "corrupt", f"block at offset {offset}: its two "
                                                       f"lengths differ")
            return
        if block_type == PCAPNG_IDB:
            if len(body) < 8:
                yield RecordError(None, offset, "corrupt", "interface description too short")
                return
            linktype = struct.unpack_from(order + "H", body, 0)[0]
            interfaces.append((linktype, _tsresol(body[8:], order)))
        elif block_type in (PCAPNG_EPB, PCAPNG_OPB):
            number += 1
            if len(body) < 20:
                yield RecordError(number, offset, "corrupt", "packet block too short")
            else:
                if block_type == PCAPNG_EPB:
                    iface, high, low, caplen, orig = struct.unpack_from(order + "IIIII", body, 0)
                else:
                    iface, _drops, high, low, caplen, orig = struct.unpack_from(
                        order + "HHIIII", body, 0)
                if iface >= len(interfaces) or 20 + caplen > len(body):
                    yield RecordError(number, offset, "corrupt",
                                      f"packet block names interface {iface} of "
                                      f"{len(interfaces)} or {caplen} bytes of {len(body) - 20}")
                else:
                    linktype, tick = interfaces[iface]
                    yield Record(number, ((high << 32) | low) * tick, linktype,
                                 body[20:20 + caplen], orig)
        elif block_type == PCAPNG_SPB:
            number += 1
            if not interfaces or len(body) < 4:
                yield RecordError(number, offset, "corrupt", "simple packet block without an "
                                                             "interface")
            else:
                (orig,) = struct.unpack_from(order + "I", body, 0)
                yield Record(number, 0.0, interfaces[0][0], body[4:4 + orig], orig)
        offset += length
        block_type_raw = None


def _tsresol(options: bytes, order: str) -> float:
    """if_tsresol (option 9) of an interface: seconds per timestamp tick (default 1e-6)."""
    pos = 0
    while pos + 4 <= len(options):
        code, size = struct.unpack_from(order + "HH", options, pos)
        if code == 0:
            break
        if code == 9 and size >= 1:
            value = options[pos + 4]
            return 2.0 ** -(value & 0x7F) if value & 0x80 else 10.0 ** -value
        pos += 4 + size + (-size % 4)
    return 1e-6
