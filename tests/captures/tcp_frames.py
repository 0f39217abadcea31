"""The TCP frames of a generated DCE/RPC conversation, for the tests that hold the capture
decoders to each other on generated inputs (test_slowpath.py, test_cdecode.py)."""

from __future__ import annotations

from mqconform.captures.recorder import ACK, FIN, PSH, SYN, build_frame


def tcp_frames(pdus: list[tuple[int, bytes]], client: tuple[str, int],
               server: tuple[str, int], mss: int, coalesce: bool,
               fin: bool = True) -> tuple[list[bytes], list[int]]:
    """SYN and SYN-ACK, then the PDUs ((direction, PDU): 0 client -> server, 1 back) cut into
    segments of at most ``mss`` octets; with ``coalesce`` the client's PDUs wait for the
    server's next one (several PDUs in one segment); what is left is sent at the end, then a
    FIN each way when ``fin``. Returns the frames and each side's next sequence number."""
    seq = [1000, 7000]
    ends = [client, server]
    frames = [build_frame(client[0], server[0], client[1], server[1], 999, 0, SYN, b"", 1),
              build_frame(server[0], client[0], server[1], client[1], 6999, 1000, SYN | ACK,
                          b"", 1)]
    streams = [b"", b""]
    for direction, pdu in pdus:
        streams[direction] += pdu
        if not coalesce or direction == 1:  # a client may put several PDUs in one segment
            for side in (0, 1):
                data, streams[side] = streams[side], b""
                a, b = ends[side], ends[1 - side]
                for i in range(0, len(data), mss):
                    piece = data[i:i + mss]
                    frames.append(build_frame(a[0], b[0], a[1], b[1], seq[side],
                                              seq[1 - side], PSH | ACK, piece, len(frames)))
                    seq[side] += len(piece)
    for side in (0, 1):
        a, b = ends[side], ends[1 - side]
        if streams[side]:
            frames.append(build_frame(a[0], b[0], a[1], b[1], seq[side], seq[1 - side],
                                      PSH | ACK, streams[side], len(frames)))
            seq[side] += len(streams[side])
        if fin:
            frames.append(build_frame(a[0], b[0], a[1], b[1], seq[side], seq[1 - side],
                                      FIN | ACK, b"", len(frames)))
    return frames, seq
