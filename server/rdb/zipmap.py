"""Redis's zipmap (zipmap.c): the hash encoding of RDB_TYPE_HASH_ZIPMAP (files of Redis 2.4 and older)."""

from __future__ import annotations

from server.rdb.primitives import RdbError

_BIGLEN = 254
_END = 255


def _length(blob: bytes, p: int, last: int) -> tuple[int, int]:
    if p > last:
        raise RdbError("zipmap entry runs past the end", p)
    b = blob[p]
    if b < _BIGLEN:
        return b, p + 1
    if p + 5 > last:
        raise RdbError("zipmap entry runs past the end", p)
    return int.from_bytes(blob[p + 1 : p + 5], "little"), p + 5


def unpack(blob: bytes) -> list[bytes]:
    """field, value, field, value... of a zipmap, validated as zipmapValidateIntegrity (deep)."""
    size = len(blob)
    if size < 2 or blob[size - 1] != _END:
        raise RdbError("zipmap without its terminator", size - 1)
    last = size - 1
    out: list[bytes] = []
    p = 1
    while blob[p] != _END:
        n, p = _length(blob, p, last)
        if p + n > last:
            raise RdbError("zipmap field runs past the end", p)
        out.append(blob[p : p + n])
        p += n
        n, p = _length(blob, p, last)
        if p >= last:
            raise RdbError("zipmap value runs past the end", p)
        free = blob[p]
        p += 1
        if p + n + free > last:
            raise RdbError("zipmap value runs past the end", p)
        out.append(blob[p : p + n])
        p += n + free
    count = len(out) // 2
    if count == 0:
        raise RdbError("empty zipmap", 0)
    if blob[0] != _BIGLEN and blob[0] != count:
        raise RdbError("zipmap count disagrees with its entries", 0)
    return out
