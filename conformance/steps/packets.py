"""Steps that read the Message Packet a receive returned, field by field (MS-MQRR 2.2.5).

The checks read the bytes of the returned stFullPacket section themselves, with the offsets
MS-MQRR 2.2.5.2 to 2.2.5.5 give; the packet codec (wire/packet.py) is used only to find where
the trailers begin (after BaseHeader.PacketSize and the SessionHeader) and to read the
UserHeader flags, so a codec that agreed with a wrong server could not hide the fault.
"""

from __future__ import annotations

import struct

from pytest_bdd import given, parsers, then, when

from conformance.steps.remoteread_more import PLACE, _assert, _settled_peek, _state
from model import calls as c
from wire.packet import EXTENDED_ADDRESS_HEADER_SIZE as EXTENDED_ADDRESS_HEADER
from wire.packet import EXTENSION_HEADER_SIZE as EXTENSION_HEADER
from wire.packet import SUBQUEUE_HEADER_SIZE as SUBQUEUE_HEADER
from wire.packet import SUBQUEUE_NAME_SIZE as NAME_FIELD

#: MS-MQRR 2.2.5.5 AddressType values and the address length each implies
ADDRESS_LENGTHS = {0x0000: 0, 0x0001: 4, 0x0006: 16}


def _packet(mq, scenario: dict) -> bytes:
    result: c.Result = scenario["result"]
    _assert(mq, result.status == 0 and not result.raised,
            f"the receive returned a message (0x{result.status:08X})")
    sections = list(result.ppPacketSections or ())
    _assert(mq, len(sections) == 1 and sections[0].SectionBufferType == c.stFullPacket,
            "the message came back whole in one stFullPacket section")
    return bytes(sections[0].pSectionBuffer)


def _trailers(mq, scenario: dict) -> dict:
    """Where the ExtensionHeader and the headers after it lie, read from the raw bytes; read
    once per result, however many steps check it."""
    from wire.packet import PacketError, decode_packet

    cached = scenario.get("trailers")
    if cached is not None and cached["result"] is scenario["result"]:
        return cached
    data = _packet(mq, scenario)
    try:
        decoded = decode_packet(data)
    except PacketError as e:
        _assert(mq, False, f"the Message Packet is well formed ({e})")
    start = decoded.trailers[0]
    session = decoded.extras.session_header is not None
    pos = start + (16 if session else 0)
    _assert(mq, len(data) >= pos + EXTENSION_HEADER,
            f"an ExtensionHeader follows the message packet at offset {pos}")
    size, remaining, flags = struct.unpack_from("<IIB", data, pos)
    scenario["trailers"] = {"result": scenario["result"], "data": data, "decoded": decoded,
                            "session": session, "size": size,
                            "remaining": remaining, "flags": flags,
                            "after": pos + EXTENSION_HEADER}
    return scenario["trailers"]


def _name(raw: bytes) -> tuple[str, bytes]:
    """A 64-byte name field: the WCHARs up to the first null, and the bytes after it."""
    for i in range(0, len(raw), 2):
        if raw[i:i + 2] == b"\0\0":
            return raw[:i].decode("utf-16-le", "replace"), raw[i + 2:]
    return raw.decode("utf-16-le", "replace"), b""


def _subqueue_header(mq, t: dict) -> tuple[int, bytes, bytes]:
    _assert(mq, t["flags"] >> 1 & 1 == 1, "ExtensionHeader.Flags.SQ is set")
    pos = t["after"]
    size, word = struct.unpack_from("<II", t["data"], pos)
    _assert(mq, size == SUBQUEUE_HEADER, f"SubqueueHeader.HeaderSize is {SUBQUEUE_HEADER} "
                                          f"(it is {size})")
    names = t["data"][pos + 20:pos + 20 + 2 * NAME_FIELD]
    return word, names[:NAME_FIELD], names[NAME_FIELD:]


@when(parsers.re(rf"the client peeks at (?P<place>{PLACE})"))
def the_client_peeks_at(mq, scenario, place):
    scenario["result"] = _settled_peek(mq, _state(scenario), place)


@then("the packet is a Binary Message: UserHeader.Flags.AH is clear and no SRMP header is present")
def binary_message(mq, scenario):
    t = _trailers(mq, scenario)
    decoded = t["decoded"]
    # the suite's messages carry neither SOAPEnvelope nor SOAPCompoundMessage (2.2.5.1/R6)
    _assert(mq, not decoded.user_message.user_header.flags.ah, "UserHeader.Flags.AH is clear")
    _assert(mq, decoded.extras.srmp_envelope_header is None,
            "no SRMPEnvelopeHeader without UserHeader.Flags.AH")
    _assert(mq, decoded.extras.compound_message_header is None,
            "no CompoundMessageHeader without UserHeader.Flags.AH")


@then("the SessionHeader is present exactly when BaseHeader.Flags.SH is set")
def session_header(mq, scenario):
    t = _trailers(mq, scenario)
    sh = bool(struct.unpack_from("<H", t["data"], 2)[0] >> 4 & 1)  # BaseHeader.Flags.SH
    _assert(mq, t["session"] == sh, f"BaseHeader.Flags.SH is {int(sh)} and a SessionHeader is "
                                    f"{'present' if t['session'] else 'absent'}")
    _assert(mq, t["size"] == EXTENSION_HEADER,
            f"the ExtensionHeader (HeaderSize {EXTENSION_HEADER}) begins right after the "
            f"{'SessionHeader' if sh else 'message packet'} (HeaderSize there is {t['size']})")


@then(parsers.parse("the ExtensionHeader counts the headers that follow it, sets SQ and EA, "
                    "and DL is {dl:d}"))
def extension_header(mq, scenario, dl):
    t = _trailers(mq, scenario)
    following = len(t["data"]) - t["after"]
    _assert(mq, t["remaining"] == following,
            f"ExtensionHeader.RemainingHeadersSize {t['remaining']} is the {following} bytes of "
            f"the headers that follow it")
    _assert(mq, t["flags"] >> 1 & 1 == 1, "ExtensionHeader.Flags.SQ is 1")
    _assert(mq, t["flags"] >> 4 & 1 == 1, "ExtensionHeader.Flags.EA is 1")
    _assert(mq, t["flags"] & 1 == dl, f"ExtensionHeader.Flags.DL is {dl}")
    if dl == 0:
        # SubqueueHeader then ExtendedAddressHeader, nothing between them
        _assert(mq, following == SUBQUEUE_HEADER + EXTENDED_ADDRESS_HEADER,
                f"without DL the headers that follow are a SubqueueHeader and an "
                f"ExtendedAddressHeader ({SUBQUEUE_HEADER + EXTENDED_ADDRESS_HEADER} bytes, "
                f"not {following})")


@then("the SubqueueHeader names no subqueue and no target subqueue, and TM is clear")
def subqueue_header_empty(mq, scenario):
    t = _trailers(mq, scenario)
    word, name, target = _subqueue_header(mq, t)
    _assert(mq, word & 1 == 0, "SubqueueHeader.TM is 0")
    _assert(mq, name == bytes(NAME_FIELD), "SubqueueHeader.SubqueueName is all zero bytes for "
                                           "a message in no subqueue")
    _assert(mq, target == bytes(NAME_FIELD), "SubqueueHeader.TargetSubqueueName is all zero "
                                             "bytes for a message in no transacted move")


@then(parsers.parse('the SubqueueHeader names subqueue "{sub}", padded with zero bytes'))
def subqueue_header_named(mq, scenario, sub):
    t = _trailers(mq, scenario)
    word, name, target = _subqueue_header(mq, t)
    text, rest = _name(name)
    _assert(mq, text == sub, f'SubqueueHeader.SubqueueName is "{sub}" (it is "{text}")')
    _assert(mq, rest == bytes(len(rest)),
            "the bytes after the SubqueueName's terminating null are 0x00")
    _assert(mq, word & 1 == 0, "SubqueueHeader.TM is 0")
    _assert(mq, target == bytes(NAME_FIELD), "SubqueueHeader.TargetSubqueueName is all zero "
                                             "bytes for a message in no transacted move")


@then("the ExtendedAddressHeader has a known AddressType, its AddressLength and AddressScope")
def extended_address_header(mq, scenario):
    t = _trailers(mq, scenario)
    pos = len(t["data"]) - EXTENDED_ADDRESS_HEADER
    size, length, kind, scope = struct.unpack_from("<IHHI", t["data"], pos)
    _assert(mq, size == EXTENDED_ADDRESS_HEADER,
            f"ExtendedAddressHeader.HeaderSize is {EXTENDED_ADDRESS_HEADER} (it is {size})")
    _assert(mq, kind in ADDRESS_LENGTHS,
            f"ExtendedAddressHeader.AddressType 0x{kind:04X} is 0x0000, IP_ADDRESS_TYPE or "
            f"IPV6_ADDRESS_TYPE")
    if kind in ADDRESS_LENGTHS:
        _assert(mq, length == ADDRESS_LENGTHS[kind],
                f"ExtendedAddressHeader.AddressLength {length} is the length of the address "
                f"(AddressType 0x{kind:04X})")
    if kind != 0x0006:
        _assert(mq, scope == 0, f"ExtendedAddressHeader.AddressScope is 0 when the address is "
                                f"not IPv6 (it is {scope})")


@given(parsers.parse('a queue with a message whose dead-letter queue is "{path}"'))
def a_queue_with_a_dead_letter_queue(mq, scenario, path):
    scenario["body"] = b"dead-letter"
    scenario["queue"] = mq.queue([{"body": scenario["body"], "dead_letter_queue": path}])


@then(parsers.parse('the DeadLetterHeader holds "{path}", null-terminated and padded to 4 bytes'))
def dead_letter_header(mq, scenario, path):
    t = _trailers(mq, scenario)
    _assert(mq, t["flags"] & 1 == 1, "ExtensionHeader.Flags.DL is 1")
    pos = t["after"] + (SUBQUEUE_HEADER if t["flags"] >> 1 & 1 else 0)
    end = len(t["data"]) - (EXTENDED_ADDRESS_HEADER if t["flags"] >> 4 & 1 else 0)
    (size,) = struct.unpack_from("<I", t["data"], pos)
    _assert(mq, size == end - pos, f"DeadLetterHeader.HeaderSize {size} is the header's "
                                   f"{end - pos} bytes")
    field = t["data"][pos + 4:end]
    want = path.encode("utf-16-le") + b"\0\0"
    _assert(mq, field[:len(want)] == want,
            f'DeadLetterHeader.DeadLetterPathName is "{path}" with its terminating null '
            f'(it is {field[:len(want)].decode("utf-16-le", "replace")!r})')
    padding = field[len(want):]
    _assert(mq, padding == bytes(len(padding)) and len(padding) < 4 and len(field) % 4 == 0,
            f"DeadLetterPathName is padded with {len(padding)} zero byte(s) to a multiple of 4 "
            f"({len(field)} bytes)")
