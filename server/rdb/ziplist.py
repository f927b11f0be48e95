"""Redis's ziplist (ziplist.c): the packed list of RDB types 10, 12, 13 and 14 (files before Redis 7.0)."""

from __future__ import annotations

from server.rdb.primitives import RdbError

_HEADER = 10
_END = 0xFF
_BIG_PREVLEN = 0xFE
_COUNT_UNKNOWN = 0xFFFF


def unpack(blob: bytes) -> list[bytes | int]:
    """The entries of a ziplist (integer-encoded ones as ints), validated as
    ziplistValidateIntegrity does with deep checks; RdbError when damaged."""
    size = len(blob)
    if size < _HEADER + 1:
        raise RdbError("ziplist shorter than its header", 0)
    if int.from_bytes(blob[0:4], "little") != size:
        raise RdbError("ziplist total bytes disagree with its size", 0)
    tail = int.from_bytes(blob[4:8], "little")
    count = blob[8] | (blob[9] << 8)
    if tail > size - 1:
        raise RdbError("ziplist tail offset out of range", 4)
    if blob[size - 1] != _END:
        raise RdbError("ziplist without its terminator", size - 1)
    last = size - 1
    out: list[bytes | int] = []
    p = _HEADER
    prev_len = 0
    prev_start = -1
    from_bytes = int.from_bytes
    while p < last:
        start = p
        b = blob[p]
        if b < _BIG_PREVLEN:
            prevlen = b
            p += 1
        else:
            if b != _BIG_PREVLEN or p + 5 > last:
                raise RdbError("ziplist entry with a bad previous length", p)
            prevlen = from_bytes(blob[p + 1 : p + 5], "little")
            p += 5
        if prevlen != prev_len:
            raise RdbError("ziplist entry's previous length disagrees", start)
        if p >= last:
            raise RdbError("ziplist entry runs past the end", p)
        e = blob[p]
        kind = e >> 6
        if kind == 0:
            n = e & 0x3F
            p += 1
        elif kind == 1:
            if p + 2 > last:
                raise RdbError("ziplist entry runs past the end", p)
            n = ((e & 0x3F) << 8) | blob[p + 1]
            p += 2
        elif kind == 2:
            if e != 0x80 or p + 5 > last:
                raise RdbError("ziplist entry with a bad encoding", p)
            n = from_bytes(blob[p + 1 : p + 5], "big")
            p += 5
        else:
            if e == 0xC0:
                width = 2
            elif e == 0xD0:
                width = 4
            elif e == 0xE0:
                width = 8
            elif e == 0xF0:
                width = 3
            elif e == 0xFE:
                width = 1
            elif 0xF1 <= e <= 0xFD:
                width = 0
            else:
                raise RdbError("ziplist entry with a bad encoding", p)
            p += 1
            if p + width > last:
                raise RdbError("ziplist entry runs past the end", p)
            if width:
                out.append(from_bytes(blob[p : p + width], "little", signed=True))
            else:
                out.append((e & 0x0F) - 1)
            p += width
            prev_len = p - start
            prev_start = start
            continue
        if p + n > last:
            raise RdbError("ziplist entry runs past the end", p)
        out.append(blob[p : p + n])
        p += n
        prev_len = p - start
        prev_start = start
    if p != last:
        raise RdbError("ziplist entries do not end at its terminator", p)
    if tail != (prev_start if prev_start >= 0 else _HEADER):
        raise RdbError("ziplist tail offset disagrees with its last entry", 4)
    if count != _COUNT_UNKNOWN and count != len(out):
        raise RdbError("ziplist count disagrees with its entries", 8)
    return out


def pack(items: list[bytes | int]) -> bytes:
    """A ziplist of `items` as Redis 6 wrote it (used to make test payloads of the older types)."""
    from server.rdb.primitives import string_to_int64

    body = bytearray()
    prev_len = 0
    tail = _HEADER
    for item in items:
        start = len(body)
        entry = bytearray()
        if prev_len < _BIG_PREVLEN:
            entry.append(prev_len)
        else:
            entry.append(_BIG_PREVLEN)
            entry += prev_len.to_bytes(4, "little")
        v = item if isinstance(item, int) else string_to_int64(item)
        if v is not None:
            if 0 <= v <= 12:
                entry.append(0xF1 + v)
            elif -128 <= v <= 127:
                entry += b"\xfe" + (v & 0xFF).to_bytes(1, "little")
            elif -32768 <= v <= 32767:
                entry += b"\xc0" + (v & 0xFFFF).to_bytes(2, "little")
            elif -(1 << 23) <= v < (1 << 23):
                entry += b"\xf0" + (v & 0xFFFFFF).to_bytes(3, "little")
            elif -(1 << 31) <= v < (1 << 31):
                entry += b"\xd0" + (v & 0xFFFFFFFF).to_bytes(4, "little")
            else:
                entry += b"\xe0" + (v & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little")
        else:
            assert isinstance(item, bytes)
            n = len(item)
            if n < 64:
                entry.append(n)
            elif n < 16384:
                entry += bytes((0x40 | (n >> 8), n & 0xFF))
            else:
                entry += b"\x80" + n.to_bytes(4, "big")
            entry += item
        tail = _HEADER + start
        body += entry
        prev_len = len(entry)
    total = _HEADER + len(body) + 1
    return (total.to_bytes(4, "little") + tail.to_bytes(4, "little")
            + min(len(items), _COUNT_UNKNOWN).to_bytes(2, "little") + bytes(body) + b"\xff")
