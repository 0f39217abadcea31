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
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

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
    if head[:2] == GZIP_MAGIC:  # a gzipped capture (.pcap.gz, .pcapng.gz): read through
        import gzip

        stream = Unzipped(gzip.GzipFile(fileobj=_Prefixed(head, f), mode="rb"))
        try:
            yield from _records(stream)
        except (OSError, EOFError, zlib.error) as exc:  # a corrupt or cut gzip stream
            yield RecordError(None, 0, "truncated", f"gzip: {exc}")
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


CHUNK = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"  # RFC 1952 2.3.1


class _Prefixed:
    """A stream whose first octets were read already: ``head`` then the rest of ``f``."""

    def __init__(self, head: bytes, f: BinaryIO):
        self._head, self._f = head, f

    def read(self, n: int = -1) -> bytes:
        if not self._head:
            return self._f.read(n)
        if n is None or n < 0:
            out, self._head = self._head + self._f.read(), b""
            return out
        out, self._head = self._head[:n], self._head[n:]
        if len(out) < n:
            out += self._f.read(n - len(out))
        return out


class Unzipped:
    """A gzip stream read so that damage loses as little as can be before it, and the same
    whoever reads it in whatever sizes: decompressed in pieces of ``PIECE`` octets (a cut or
    corrupt part loses the piece it is in), the octets of the pieces before it returned, and
    the error raised by the read that finds nothing more."""

    PIECE = 1 << 16

    def __init__(self, stream: Any):
        self._stream = stream
        self._buf = bytearray()
        self._error: BaseException | None = None
        self._end = False

    def read(self, n: int = -1) -> bytes:
        buf = self._buf
        while (n is None or n < 0 or len(buf) < n) and not self._end:
            try:
                piece = self._stream.read1(self.PIECE)
            except (OSError, EOFError, zlib.error) as exc:
                self._error, self._end = exc, True
                break
            if not piece:
                self._end = True
                break
            buf += piece
        if not buf and self._error is not None:
            raise self._error
        if n is None or n < 0 or n >= len(buf):
            out = bytes(buf)
            buf.clear()
        else:
            out = bytes(buf[:n])
            del buf[:n]
        return out


def _pcap(f: BinaryIO, order: str, nano: bool) -> Iterator[Record | RecordError]:
    rest = f.read(20)
    if len(rest) < 20:
        yield RecordError(None, 4, "truncated", "the pcap file header is cut short")
        return
    _major, _minor, _zone, _sigfigs, _snaplen, network = struct.unpack(order + "HHiIII", rest)
    linktype = network & 0x0FFFFFFF
    unpack = struct.Struct(order + "IIII").unpack_from
    scale = 1e-9 if nano else 1e-6
    limit = 1_000_000_000 if nano else 1_000_000
    number, offset = 0, 24  # offset: of buf[0] in the file
    buf, pos = b"", 0
    read = f.read
    while True:
        if len(buf) - pos < 16:
            buf, offset, pos = buf[pos:] + read(CHUNK), offset + pos, 0
            if len(buf) < 16:
                if buf:
                    yield RecordError(number + 1, offset, "truncated",
                                      f"the record header is cut short ({len(buf)} of 16 "
                                      f"bytes)")
                return
        sec, frac, caplen, orig = unpack(buf, pos)
        number += 1
        if caplen > MAX_RECORD or frac >= limit:
            yield RecordError(number, offset + pos, "corrupt",
                              f"record header says {caplen} bytes, fraction {frac}: "
                              f"not a record (the rest of the file cannot be framed)")
            return
        end = pos + 16 + caplen
        if end > len(buf):
            buf, offset = buf[pos:] + read(max(CHUNK, end - len(buf))), offset + pos
            end, pos = end - pos, 0
            if end > len(buf):
                yield RecordError(number, offset, "truncated",
                                  f"the record is cut short ({len(buf) - 16} of {caplen} "
                                  f"bytes)")
                return
        yield Record(number, sec + frac * scale, linktype, buf[pos + 16:end], orig)
        pos = end


def _pcapng(f: BinaryIO, head: bytes) -> Iterator[Record | RecordError]:
    read = f.read
    order = "<"
    interfaces: list[tuple[int, float, int]] = []  # (linktype, s per tick, ticks per s)
    number = 0
    buf, pos, offset = head + read(CHUNK), 0, 0  # offset: of buf[0] in the file
    epb = struct.Struct("<IIIII").unpack_from
    while True:
        if len(buf) - pos < 12:
            buf, offset, pos = buf[pos:] + read(CHUNK), offset + pos, 0
            if not buf:
                return
            if len(buf) < 12:
                yield RecordError(None, offset, "truncated", "a block header is cut short")
                return
        at = offset + pos
        (block_type,) = struct.unpack_from(order + "I", buf, pos)
        if struct.unpack_from("<I", buf, pos)[0] == PCAPNG_SHB:
            (bom_le,) = struct.unpack_from("<I", buf, pos + 8)
            if bom_le == PCAPNG_BYTE_ORDER:
                order = "<"
            elif struct.unpack_from(">I", buf, pos + 8)[0] == PCAPNG_BYTE_ORDER:
                order = ">"
            else:
                yield RecordError(None, at, "corrupt", "section header without the "
                                                       "byte-order magic")
                return
            epb = struct.Struct(order + "IIIII").unpack_from
            block_type = PCAPNG_SHB
            interfaces = []  # a new section: new interfaces
        (length,) = struct.unpack_from(order + "I", buf, pos + 4)
        if length < 12 or length % 4 or length > MAX_RECORD:
            yield RecordError(None, at, "corrupt", f"block length {length} at offset {at}: "
                                                   f"not a block")
            return
        end = pos + length
        if end > len(buf):
            buf, offset = buf[pos:] + read(max(CHUNK, end - len(buf))), offset + pos
            end, pos = end - pos, 0
            if end > len(buf):
                is_packet = block_type in (PCAPNG_EPB, PCAPNG_SPB, PCAPNG_OPB)
                yield RecordError(number + 1 if is_packet else None, at, "truncated",
                                  f"a block of {length} bytes is cut short "
                                  f"({len(buf)} bytes)")
                return
        if struct.unpack_from(order + "I", buf, end - 4)[0] != length:
            yield RecordError(None, at, "corrupt", f"block at offset {at}: its two lengths "
                                                   f"differ")
            return
        body = pos + 8  # the block body runs from body to end - 4
        if block_type in (PCAPNG_EPB, PCAPNG_OPB) and length < 32:
            number += 1
            yield RecordError(number, at, "corrupt", f"packet block of {length} bytes: too "
                                                     f"short for its fields")
        elif block_type == PCAPNG_EPB:
            number += 1
            iface, high, low, caplen, orig = epb(buf, body)
            if iface >= len(interfaces) or 28 + caplen > length - 4:
                yield RecordError(number, at, "corrupt",
                                  f"packet block names interface {iface} of "
                                  f"{len(interfaces)} or {caplen} bytes of {length - 32}")
            else:
                linktype, tick, per = interfaces[iface]
                ticks = (high << 32) | low
                # whole seconds apart, as a classic pcap's seconds and fraction are, so that
                # one capture in either format gives the same float times
                ts = ticks // per + ticks % per * tick if per else ticks * tick
                yield Record(number, ts, linktype, buf[body + 20:body + 20 + caplen], orig)
        elif block_type == PCAPNG_IDB:
            if length < 20:
                yield RecordError(None, at, "corrupt", "interface description too short")
                return
            linktype = struct.unpack_from(order + "H", buf, body)[0]
            interfaces.append((linktype, *_tsresol(buf[body + 8:end - 4], order)))
        elif block_type == PCAPNG_OPB:
            number += 1
            iface, _drops, high, low, caplen, orig = struct.unpack_from(order + "HHIIII", buf,
                                                                        body)
            if iface >= len(interfaces) or 28 + caplen > length - 4:
                yield RecordError(number, at, "corrupt", "packet block does not fit")
            else:
                linktype, tick, per = interfaces[iface]
                ticks = (high << 32) | low
                # whole seconds apart, as a classic pcap's seconds and fraction are, so that
                # one capture in either format gives the same float times
                ts = ticks // per + ticks % per * tick if per else ticks * tick
                yield Record(number, ts, linktype, buf[body + 20:body + 20 + caplen], orig)
        elif block_type == PCAPNG_SPB:
            number += 1
            if not interfaces or length < 16:
                yield RecordError(number, at, "corrupt", "simple packet block without an "
                                                         "interface")
            else:
                (orig,) = struct.unpack_from(order + "I", buf, body)
                size = min(orig, length - 16)
                yield Record(number, 0.0, interfaces[0][0], buf[body + 4:body + 4 + size],
                             orig)
        pos = end


def _tsresol(options: bytes, order: str) -> tuple[float, int]:
    """if_tsresol (option 9) of an interface: seconds per timestamp tick (default 1e-6), and
    ticks per second where that is a power of ten up to 10**19 (0 otherwise)."""
    pos = 0
    while pos + 4 <= len(options):
        code, size = struct.unpack_from(order + "HH", options, pos)
        if code == 0:
            break
        if code == 9 and size >= 1 and pos + 4 < len(options):  # cut: the default
            value = options[pos + 4]
            if value & 0x80:
                return 2.0 ** -(value & 0x7F), 0
            return 10.0 ** -value, 10 ** value if value <= 19 else 0
        pos += 4 + size + (-size % 4)
    return 1e-6, 1_000_000
