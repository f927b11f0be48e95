"""A pending entries list: ID -> PendingEntry, iterated in ID order (Redis keeps a rax).

The common life of a pending entry is: delivered by XREADGROUP `>` (its ID is greater than every
ID the list ever held) and acknowledged soon after, mostly in delivery order. A general sorted map
makes each of those steps a few microseconds of Python; here they are a dict operation plus, at
most, a list append or an index step:

* `_map` holds the entries;
* `_order` holds their IDs ascending. An ID greater than the last is appended. A removal leaves
  the ID in place as a *stale* slot (the dict no longer has it): removing the first or the last
  live ID moves `_head` forward or pops the tail past the stale slots, and the list is rebuilt
  without them once they outnumber the live IDs, so every operation stays amortised O(1);
* an insertion *below* the last ID (XCLAIM or XAUTOCLAIM into a consumer that already has newer
  entries, FORCE, a re-delivery after XGROUP SETID) is a plain list insert while the list is
  short; in a long one it switches the list to a SortedList (O(log n) everything, eager
  removals) until it empties.

Iteration (`__iter__`, `items`, `values`, `irange`) is lazy and in ID order. A PEL must not be
changed while it is being iterated; callers collect first and change afterwards.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

from sortedcontainers import SortedList

_MISSING: Any = object()
_SLACK = 64  # stale slots tolerated before a rebuild, so small lists never rebuild
_SMALL = 512  # up to this many slots an out-of-order insertion is a list insert, not a mode switch
# A stream ID is ms << 64 | seq, and Python hashes an int modulo 2**61 - 1, where 2**64 is 8: the
# hash is 8 * ms + seq, so (ms, seq) and (ms + 1, seq - 8) collide. A million IDs written in
# bursts of 1,000 per millisecond have only about 9,000 distinct hashes, and a dict of them
# compares a hundred keys per lookup. Past _MIX_AT entries (below it, collision chains stay a
# few keys long) a PEL keys its map by mix(eid) = eid + ms * _MIX: injective (ms * _MIX < 2**64),
# and hashing as ms * (8 + _MIX) + seq, which scatters neighbouring milliseconds.
_MIX = 0x9E3779B97F4A7C15
_MIX_AT = 1024


class PendingList:
    __slots__ = ("_map", "_order", "_head", "_sorted", "_mixed")

    def __init__(self) -> None:
        self._map: dict[int, Any] = {}
        # Append mode: IDs ascending from _head, live ones and stale slots; _order[_head] and
        # _order[-1] are live whenever the list is not empty.
        self._order: list[int] = []
        self._head = 0
        self._sorted: SortedList | None = None  # sorted mode: exactly the live IDs
        # Past _MIX_AT entries, _map is keyed by mix(eid) instead of eid (see mix()).
        self._mixed = False

    def __len__(self) -> int:
        return len(self._map)

    def __bool__(self) -> bool:
        return bool(self._map)

    def _key(self, eid: int) -> int:
        return eid + (eid >> 64) * _MIX if self._mixed else eid

    def _live(self, eid: int) -> bool:
        return (eid + (eid >> 64) * _MIX if self._mixed else eid) in self._map

    def _grown(self) -> None:
        if not self._mixed and len(self._map) > _MIX_AT:
            self._mixed = True
            self._map = {eid + (eid >> 64) * _MIX: pe for eid, pe in self._map.items()}

    def __contains__(self, eid: int) -> bool:
        return self._key(eid) in self._map

    def __getitem__(self, eid: int) -> Any:
        return self._map[self._key(eid)]

    def get(self, eid: int, default: Any = None) -> Any:
        return self._map.get(self._key(eid), default)

    def __setitem__(self, eid: int, pe: Any) -> None:
        m = self._map
        key = self._key(eid)
        if key not in m:
            sl = self._sorted
            if sl is not None:
                sl.add(eid)
            else:
                order = self._order
                if not order or eid > order[-1]:
                    order.append(eid)
                else:
                    head = self._head
                    i = bisect_left(order, eid, head)
                    if i < len(order) and order[i] == eid:
                        pass  # its stale slot comes back to life
                    elif i == head and i > 0:
                        # Just before the first live ID: over the stale slot in front of it.
                        order[i - 1] = eid
                        self._head = i - 1
                    elif len(order) - head <= _SMALL:
                        order.insert(i, eid)  # a short move: stay in append mode
                    else:
                        self._to_sorted(eid)
            m[key] = pe
            self._grown()
        else:
            m[key] = pe

    def extend_new(self, eids: list[int], values: list[Any]) -> None:
        """Add entries whose IDs ascend and are all greater than every ID held (`last()`).

        What XREADGROUP `>` delivers: one dict update and one list extend for the whole batch,
        instead of an insertion per entry. The caller checks the precondition.
        """
        if self._mixed:
            self._map.update(zip([eid + (eid >> 64) * _MIX for eid in eids], values, strict=True))
        else:
            self._map.update(zip(eids, values, strict=True))
            self._grown()
        if self._sorted is not None:
            self._sorted.update(eids)
        else:
            self._order.extend(eids)

    def extend_same(self, eids: list[int], value: Any) -> None:
        """`extend_new` with one value for every ID: a batch delivered together shares one
        record (records are never changed in place, only replaced)."""
        if self._mixed:
            self._map.update(dict.fromkeys([eid + (eid >> 64) * _MIX for eid in eids], value))
        else:
            self._map.update(dict.fromkeys(eids, value))
            self._grown()
        if self._sorted is not None:
            self._sorted.update(eids)
        else:
            self._order.extend(eids)

    def pop(self, eid: int, default: Any = _MISSING) -> Any:
        m = self._map
        pe = m.pop(self._key(eid), _MISSING)
        if pe is _MISSING:
            if default is _MISSING:
                raise KeyError(eid)
            return default
        if not m:
            self._emptied()
        elif self._sorted is not None:
            self._sorted.remove(eid)
        else:
            # Keep both ends live and the stale slots bounded.
            order = self._order
            head = self._head
            if order[head] == eid:  # acknowledgements mostly come in delivery order
                head += 1
                while not self._live(order[head]):
                    head += 1
                if head > _SLACK and head > len(order) >> 1:
                    # Drop the consumed front (a new list, so nothing shifts under an index).
                    self._order = order[head:]
                    head = 0
                self._head = head
            elif order[-1] == eid:
                order.pop()
                while not self._live(order[-1]):
                    order.pop()
            elif len(order) - head > 2 * len(m) + _SLACK:
                self._order = [k for k in islice(order, head, None) if self._live(k)]
                self._head = 0
        return pe

    def pop_many(self, eids: Iterable[int]) -> list[Any]:
        """Remove every ID present (repeats and absent IDs are skipped); their values in order.

        XACK's path: a dict pop per ID, and the order list repaired once for the whole batch.
        """
        m = self._map
        popped = []
        removed = []
        for eid in eids:
            pe = m.pop(self._key(eid), _MISSING)
            if pe is not _MISSING:
                popped.append(pe)
                removed.append(eid)
        if not popped:
            return popped
        if not m:
            self._emptied()
        elif self._sorted is not None:
            for eid in removed:
                self._sorted.remove(eid)
        else:
            order = self._order
            head = self._head
            while not self._live(order[head]):
                head += 1
            while not self._live(order[-1]):
                order.pop()
            if head > _SLACK and head > len(order) >> 1:
                self._order = order[head:]
                head = 0
            elif len(order) - head > 2 * len(m) + _SLACK:
                self._order = [k for k in islice(order, head, None) if self._live(k)]
                head = 0
            self._head = head
        return popped

    def _emptied(self) -> None:
        # The last entry left: back to append mode, with a fresh list.
        self._order = []
        self._head = 0
        self._sorted = None
        self._mixed = False

    def __delitem__(self, eid: int) -> None:
        self.pop(eid)

    def _to_sorted(self, eid: int) -> None:
        sl = SortedList([k for k in islice(self._order, self._head, None) if self._live(k)])
        sl.add(eid)
        self._sorted = sl
        self._order = []
        self._head = 0

    # --- ordered access ------------------------------------------------------------------------

    def first(self) -> int | None:
        if not self._map:
            return None
        return self._sorted[0] if self._sorted is not None else self._order[self._head]

    def last(self) -> int | None:
        if not self._map:
            return None
        return self._sorted[-1] if self._sorted is not None else self._order[-1]

    def irange(self, minimum: int | None = None, maximum: int | None = None) -> Iterator[int]:
        """IDs in [minimum, maximum] (either end open when None), ascending."""
        sl = self._sorted
        if sl is not None:
            yield from sl.irange(minimum, maximum)
            return
        order = self._order
        i = self._head if minimum is None else bisect_left(order, minimum, self._head)
        # An index walk, not islice(order, i, None), which would step over the first i slots.
        n = len(order)
        while i < n:
            eid = order[i]
            if maximum is not None and eid > maximum:
                return
            if self._live(eid):
                yield eid
            i += 1

    def __iter__(self) -> Iterator[int]:
        return self.irange()

    def values(self) -> Iterator[Any]:
        for eid in self.irange():
            yield self[eid]

    def items(self) -> Iterator[tuple[int, Any]]:
        for eid in self.irange():
            yield eid, self[eid]

    def __repr__(self) -> str:
        return f"PendingList({dict(self.items())!r})"


class PendingIds:
    """A consumer's pending entries: their IDs only, in ID order.

    The records themselves (owner, delivery time, count) live once, in the group's PEL; a
    consumer needs only which IDs it owns, in order (XPENDING ... consumer, XREADGROUP with an
    ID, XGROUP DELCONSUMER, XINFO). So instead of a second ID -> record map (about 50 bytes an
    entry), this keeps the IDs ascending in `_order` with a live flag each in `_live`: nine
    bytes an entry, the ID objects being shared with the group's PEL. Removal marks the flag;
    as in `PendingList`, both ends of the list stay live and the stale slots are dropped once
    they outnumber the live ones. A long list that gets an ID below its last one switches to a
    SortedList of the live IDs.
    """

    __slots__ = ("_order", "_live", "_head", "_len", "_sorted")

    def __init__(self) -> None:
        self._order: list[int] = []
        self._live = bytearray()
        self._head = 0
        self._len = 0
        self._sorted: SortedList | None = None

    def __len__(self) -> int:
        return self._len

    def __bool__(self) -> bool:
        return self._len > 0

    def _find(self, eid: int) -> int:
        """The slot of eid in append mode, or -1."""
        order = self._order
        i = bisect_left(order, eid, self._head)
        if i < len(order) and order[i] == eid:
            return i
        return -1

    def __contains__(self, eid: int) -> bool:
        sl = self._sorted
        if sl is not None:
            return eid in sl
        i = self._find(eid)
        return i >= 0 and self._live[i] == 1

    def add(self, eid: int) -> None:
        """Own eid (nothing happens if it is owned already)."""
        sl = self._sorted
        if sl is not None:
            if eid not in sl:
                sl.add(eid)
                self._len += 1
            return
        order = self._order
        live = self._live
        if not self._len:
            self._reset()
            order = self._order
            live = self._live
        if not order or eid > order[-1]:
            order.append(eid)
            live.append(1)
            self._len += 1
            return
        head = self._head
        i = bisect_left(order, eid, head)
        if i < len(order) and order[i] == eid:
            if not live[i]:
                live[i] = 1  # its stale slot comes back to life
                self._len += 1
            return
        if i == head and i > 0:
            # Just before the first live ID: over the consumed slot in front of it.
            order[i - 1] = eid
            live[i - 1] = 1
            self._head = i - 1
        elif len(order) - head <= _SMALL:
            order.insert(i, eid)
            live.insert(i, 1)
        else:
            self._sorted = SortedList(self._live_ids())
            self._sorted.add(eid)
            self._order = []
            self._live = bytearray()
            self._head = 0
        self._len += 1

    def extend_new(self, eids: list[int]) -> None:
        """Own IDs that ascend and are all greater than every ID held (XREADGROUP `>`)."""
        if self._sorted is not None:
            self._sorted.update(eids)
        else:
            if not self._len:
                self._reset()
            self._order.extend(eids)
            self._live.extend(b"\x01" * len(eids))
        self._len += len(eids)

    def discard(self, eid: int) -> bool:
        """Stop owning eid; whether it was owned."""
        sl = self._sorted
        if sl is not None:
            if eid not in sl:
                return False
            sl.remove(eid)
            self._len -= 1
            if not self._len:
                self._reset()
            return True
        order = self._order
        live = self._live
        head = self._head
        if head < len(order) and order[head] == eid:  # acknowledgements mostly come in order
            i = head
        else:
            i = self._find(eid)
            if i < 0:
                return False
        if not live[i]:
            return False
        live[i] = 0
        self._len -= 1
        if not self._len:
            self._reset()
            return True
        if i == head:
            head += 1
            while not live[head]:
                head += 1
            self._head = head
        elif i == len(order) - 1:
            while not live[-1]:
                order.pop()
                live.pop()
        self._tidy()
        return True

    def discard_many(self, eids: Iterable[int]) -> int:
        """Stop owning every ID given (repeats and IDs not owned are skipped); how many were."""
        n = 0
        for eid in eids:
            if self.discard(eid):
                n += 1
        return n

    def _tidy(self) -> None:
        order = self._order
        head = self._head
        if head > _SLACK and head > len(order) >> 1:
            # Drop the consumed front (new lists, so nothing shifts under an index).
            self._order = order[head:]
            self._live = self._live[head:]
            self._head = 0
        elif len(order) - head > 2 * self._len + _SLACK:
            ids = self._live_ids()
            self._order = ids
            self._live = bytearray(b"\x01" * len(ids))
            self._head = 0

    def _live_ids(self) -> list[int]:
        live = self._live
        return [eid for i, eid in enumerate(self._order) if i >= self._head and live[i]]

    def _reset(self) -> None:
        self._order = []
        self._live = bytearray()
        self._head = 0
        self._sorted = None

    def irange(self, minimum: int | None = None, maximum: int | None = None) -> Iterator[int]:
        """Owned IDs in [minimum, maximum] (either end open when None), ascending."""
        sl = self._sorted
        if sl is not None:
            yield from sl.irange(minimum, maximum)
            return
        order = self._order
        live = self._live
        i = self._head if minimum is None else bisect_left(order, minimum, self._head)
        n = len(order)
        while i < n:
            eid = order[i]
            if maximum is not None and eid > maximum:
                return
            if live[i]:
                yield eid
            i += 1

    def __iter__(self) -> Iterator[int]:
        return self.irange()

    def __repr__(self) -> str:
        return f"PendingIds({list(self)!r})"
