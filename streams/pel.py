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


class PendingList:
    __slots__ = ("_map", "_order", "_head", "_sorted")

    def __init__(self) -> None:
        self._map: dict[int, Any] = {}
        # Append mode: IDs ascending from _head, live ones and stale slots; _order[_head] and
        # _order[-1] are live whenever the list is not empty.
        self._order: list[int] = []
        self._head = 0
        self._sorted: SortedList | None = None  # sorted mode: exactly the live IDs

    def __len__(self) -> int:
        return len(self._map)

    def __bool__(self) -> bool:
        return bool(self._map)

    def __contains__(self, eid: int) -> bool:
        return eid in self._map

    def __getitem__(self, eid: int) -> Any:
        return self._map[eid]

    def get(self, eid: int, default: Any = None) -> Any:
        return self._map.get(eid, default)

    def __setitem__(self, eid: int, pe: Any) -> None:
        m = self._map
        if eid not in m:
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
        m[eid] = pe

    def extend_new(self, eids: list[int], values: list[Any]) -> None:
        """Add entries whose IDs ascend and are all greater than every ID held (`last()`).

        What XREADGROUP `>` delivers: one dict update and one list extend for the whole batch,
        instead of an insertion per entry. The caller checks the precondition.
        """
        self._map.update(zip(eids, values, strict=True))
        if self._sorted is not None:
            self._sorted.update(eids)
        else:
            self._order.extend(eids)

    def pop(self, eid: int, default: Any = _MISSING) -> Any:
        m = self._map
        pe = m.pop(eid, _MISSING)
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
                while order[head] not in m:
                    head += 1
                if head > _SLACK and head > len(order) >> 1:
                    # Drop the consumed front (a new list, so nothing shifts under an index).
                    self._order = order[head:]
                    head = 0
                self._head = head
            elif order[-1] == eid:
                order.pop()
                while order[-1] not in m:
                    order.pop()
            elif len(order) - head > 2 * len(m) + _SLACK:
                self._order = [k for k in islice(order, head, None) if k in m]
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
            pe = m.pop(eid, _MISSING)
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
            while order[head] not in m:
                head += 1
            while order[-1] not in m:
                order.pop()
            if head > _SLACK and head > len(order) >> 1:
                self._order = order[head:]
                head = 0
            elif len(order) - head > 2 * len(m) + _SLACK:
                self._order = [k for k in islice(order, head, None) if k in m]
                head = 0
            self._head = head
        return popped

    def _emptied(self) -> None:
        # The last entry left: back to append mode, with a fresh list.
        self._order = []
        self._head = 0
        self._sorted = None

    def __delitem__(self, eid: int) -> None:
        self.pop(eid)

    def _to_sorted(self, eid: int) -> None:
        m = self._map
        sl = SortedList([k for k in islice(self._order, self._head, None) if k in m])
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
        m = self._map
        i = self._head if minimum is None else bisect_left(order, minimum, self._head)
        for eid in islice(order, i, None):
            if maximum is not None and eid > maximum:
                return
            if eid in m:
                yield eid

    def __iter__(self) -> Iterator[int]:
        return self.irange()

    def values(self) -> Iterator[Any]:
        m = self._map
        for eid in self.irange():
            yield m[eid]

    def items(self) -> Iterator[tuple[int, Any]]:
        m = self._map
        for eid in self.irange():
            yield eid, m[eid]

    def __repr__(self) -> str:
        return f"PendingList({dict(self.items())!r})"
