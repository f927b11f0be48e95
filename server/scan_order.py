"""The cursor order of SCAN, HSCAN, SSCAN and ZSCAN over hashtables.

A cursor is a position in a fixed order of all possible keys (or fields, or members): the 64-bit
hash of the item, 0 being reserved for "start/done". A call returns the items whose position is
>= the cursor, in position order, and the position of the next item as the new cursor. Since an
item's position never changes, an item present for the whole iteration is returned exactly once,
however the collection changes meanwhile. Callers keep a snapshot of the items sorted by
position (`ordered`) and rebuild it when an iteration starts on a changed collection; any
snapshot taken after an iteration started holds every item present since its start, so the
latest one serves all iterations in progress, and items added later may or may not be returned,
as Redis allows.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable
from typing import Any

_MASK64 = (1 << 64) - 1


def position(item: bytes) -> int:
    return (hash(item) & _MASK64) or 1


def ordered(items: Iterable[bytes]) -> tuple[array, list[bytes]]:
    """The items sorted by position, and their positions."""
    by_position = sorted(items, key=position)
    return array("Q", map(position, by_position)), by_position


def walk(positions: array | list[int], items: list[bytes], live: Any, cursor: int,
         count: int) -> tuple[int, list[bytes]]:
    """Up to `count` items of the snapshot still in `live`, from `cursor` on (never splitting
    items of equal position), and the next cursor. `live` answers `item in live`. Items gone since the snapshot are skipped,
    but at most 10*count of them per call, like Redis's bound on empty buckets."""
    n = len(positions)
    i = bisect_left(positions, cursor)
    found: list[bytes] = []
    budget = count * 10
    while i < n and len(found) < count and budget > 0:
        item = items[i]
        if item in live:
            found.append(item)
        else:
            budget -= 1
        i += 1
    while 0 < i < n and positions[i] == positions[i - 1]:
        if items[i] in live:
            found.append(items[i])
        i += 1
    return (positions[i] if i < n else 0), found
