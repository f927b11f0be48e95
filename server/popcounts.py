"""The population count of whole large strings, remembered per value object, so that BITCOUNT of
a bitmap that has not changed is a lookup and SETBIT + BITCOUNT never rescans it.

An entry holds its value (so the object, and its id, stay alive while remembered). A `bytes`
value never changes, so its count stays right whatever key holds it. A string edited in place
(a `bytearray`, server/keyspace.py) does change: SETBIT, which knows the bit it flipped, moves
the count with `adjust`; every other in-place edit (SETRANGE, APPEND, BITFIELD, growth) calls
`forget`. The entries keep deleted values alive until evicted, hence the bounds.
"""

from __future__ import annotations

MIN_SIZE = 1024
_MAX_ENTRIES = 256
_MAX_BYTES = 64 << 20

_counted: dict[int, tuple[bytes | bytearray, int, int]] = {}  # id -> (value, count, size)
_counted_bytes = 0


def popcount(data: bytes | bytearray) -> int:
    return int.from_bytes(data, "big").bit_count()


def forget(value: bytes | bytearray) -> None:
    global _counted_bytes
    entry = _counted.get(id(value))
    if entry is not None and entry[0] is value:
        del _counted[id(value)]
        _counted_bytes -= entry[2]


def _remember(value: bytes | bytearray, count: int) -> None:
    global _counted_bytes
    forget(value)
    size = len(value)
    if size < MIN_SIZE or size > _MAX_BYTES:
        return
    while _counted and (len(_counted) >= _MAX_ENTRIES or _counted_bytes + size > _MAX_BYTES):
        oldest = _counted.pop(next(iter(_counted)))
        _counted_bytes -= oldest[2]
    _counted[id(value)] = (value, count, size)
    _counted_bytes += size


def whole(value: bytes | bytearray) -> int:
    """The count of set bits in all of value."""
    if len(value) < MIN_SIZE:
        return popcount(value)
    entry = _counted.get(id(value))
    if entry is not None and entry[0] is value:
        return entry[1]
    count = popcount(value)
    _remember(value, count)
    return count


def adjust(value: bytearray, delta: int) -> None:
    """SETBIT flipped one bit of value in place, changing its count by delta (same length)."""
    entry = _counted.get(id(value))
    if entry is not None and entry[0] is value:
        _counted[id(value)] = (value, entry[1] + delta, entry[2])


def move(old: bytes | bytearray, new: bytes | bytearray, delta: int) -> None:
    """new replaced old as a key's value, with delta more set bits: a remembered count goes
    with it."""
    entry = _counted.get(id(old))
    if entry is None or entry[0] is not old:
        return
    forget(old)
    _remember(new, entry[1] + delta)
