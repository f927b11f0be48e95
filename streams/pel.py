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

A consumer's own pending entries are a `PendingIds`: the same ordered-list scheme, holding IDs
only (the records are the group's).

Large lists work on *keys* instead of IDs (see `mix`): every method takes and returns IDs, and
converts at the boundary.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from itertools import islice
from typing import Any, Final

from sortedcontainers import SortedList

_MISSING: Final[Any] = object()
_SLACK: Final = 64  # stale slots tolerated before a rebuild, so small lists never rebuild
_SMALL: Final = 512  # up to this many slots an out-of-order insertion is a list insert, not a mode switch

# A stream ID is ms << 64 | seq, and Python hashes an int modulo 2**61 - 1, where 2**64 is 8: the
# hash is 8 * ms + seq, so (ms, seq) and (ms + 1, seq - 8) collide. A million IDs written in
# bursts of 1,000 per millisecond have about 9,000 distinct hashes, and a dict of them compares a
# hundred keys per lookup. Past _MIX_AT entries (below it, collision chains stay a few keys
# long) a list keys its entries by mix(id) = ms * _BASE + seq instead: one-to-one and in the
# same order as the IDs (seq < 2**64 < _BASE), and hashing as ms * (8 + _MIX) + seq, which
# scatters neighbouring milliseconds. The keys replace the IDs (not added to them: an int of
# this size is 40 bytes), so a large list converts an ID once per call and back when it hands
# IDs out.
_MIX: Final = 0x9E3779B97F4A7C15
_BASE: Final = (1 << 64) + _MIX
_MIX_AT: Final = 1024
# Runs of live flags for PendingIds, by length: a delivered batch's, without making one per call.
_LIVE: Final = [b"\x01" * n for n in range(64)]


def mix(eid: int) -> int:
    return eid + (eid >> 64) * _MIX


def unmix(key: int) -> int:
    ms, seq = divmod(key, _BASE)
    return ms << 64 | seq


class PendingList:
    __slots__ = ("_map", "_order", "_head", "_sorted", "mixed")

    def __init__(self) -> None:
        self._map: dict[int, Any] = {}  # key -> value
        # Append mode: keys ascending from _head, live ones and stale slots; _order[_head] and
        # _order[-1] are live whenever the list is not empty.
        self._order: list[int] = []
        self._head = 0
        self._sorted: SortedList | None = None  # sorted mode: exactly the live keys
        self.mixed = False  # keys are mix(id) (else the IDs themselves)

    def __len__(self) -> int:
        return len(self._map)

    def __bool__(self) -> bool:
        return bool(self._map)

    def _key(self, eid: int) -> int:
        return eid + (eid >> 64) * _MIX if self.mixed else eid

    def _eid(self, key: int) -> int:
        return unmix(key) if self.mixed else key

    def __contains__(self, eid: int) -> bool:
        return self._key(eid) in self._map

    def __getitem__(self, eid: int) -> Any:
        return self._map[self._key(eid)]

    def get(self, eid: int, default: Any = None) -> Any:
        return self._map.get(self._key(eid), default)

    def __setitem__(self, eid: int, pe: Any) -> None:
        m = self._map
        key = self._key(eid)
        if key in m:
            m[key] = pe
            return
        sl = self._sorted
        if sl is not None:
            sl.add(key)
        else:
            order = self._order
            if not order or key > order[-1]:
                order.append(key)
            else:
                head = self._head
                i = bisect_left(order, key, head)
                if i < len(order) and order[i] == key:
                    pass  # its stale slot comes back to life
                elif i == head and i > 0:
                    # Just before the first live key: over the stale slot in front of it.
                    order[i - 1] = key
                    self._head = i - 1
                elif len(order) - head <= _SMALL:
                    order.insert(i, key)  # a short move: stay in append mode
                else:
                    self._to_sorted(key)
        m[key] = pe
        if not self.mixed and len(m) > _MIX_AT:
            self._start_mixing()

    def extend_new(self, eids: list[int], values: list[Any]) -> list[int]:
        """Add entries whose IDs ascend and are all greater than every ID held (`last()`); the
        keys they are held under (the list's own objects, for a consumer's `extend_keys`).

        What XREADGROUP `>` delivers: one dict update and one list extend for the whole batch,
        instead of an insertion per entry. The caller checks the precondition.
        """
        keys = [eid + (eid >> 64) * _MIX for eid in eids] if self.mixed else eids
        self._map.update(zip(keys, values, strict=True))
        return self._append_keys(keys)

    def extend_same(self, eids: list[int], value: Any) -> list[int]:
        """`extend_new` with one value for every ID: a batch delivered together shares one
        record (records are never changed in place, only replaced)."""
        keys = [eid + (eid >> 64) * _MIX for eid in eids] if self.mixed else eids
        m = self._map
        for key in keys:  # compiled: a direct dict store each, cheaper than dict.fromkeys + update
            m[key] = value
        return self._append_keys(keys)

    def _append_keys(self, keys: list[int]) -> list[int]:
        if self._sorted is not None:
            self._sorted.update(keys)
        else:
            self._order.extend(keys)
        if not self.mixed and len(self._map) > _MIX_AT:
            self._start_mixing()
            if self._sorted is None:
                return self._order[-len(keys):] if keys else []
            return [mix(eid) for eid in keys]
        return keys

    def _start_mixing(self) -> None:
        m = self._map
        if self._sorted is not None:
            self._sorted = SortedList([mix(k) for k in self._sorted])
        else:
            self._order = [mix(k) for k in islice(self._order, self._head, None) if k in m]
            self._head = 0
        self._map = {mix(k): v for k, v in m.items()}
        self.mixed = True

    def pop(self, eid: int, default: Any = _MISSING) -> Any:
        m = self._map
        key = self._key(eid)
        pe = m.pop(key, _MISSING)
        if pe is _MISSING:
            if default is _MISSING:
                raise KeyError(eid)
            return default
        if not m:
            self._emptied()
        elif self._sorted is not None:
            self._sorted.remove(key)
        else:
            # Keep both ends live and the stale slots bounded.
            order = self._order
            head = self._head
            if order[head] == key:  # acknowledgements mostly come in delivery order
                head += 1
                while order[head] not in m:
                    head += 1
                if head > _SLACK and head > len(order) >> 1:
                    # Drop the consumed front (a new list, so nothing shifts under an index).
                    self._order = order[head:]
                    head = 0
                self._head = head
            elif order[-1] == key:
                order.pop()
                while order[-1] not in m:
                    order.pop()
            elif len(order) - head > 2 * len(m) + _SLACK:
                self._order = [k for k in islice(order, head, None) if k in m]
                self._head = 0
        return pe

    def pop_many(self, eids: list[int]) -> list[Any]:
        """Remove every ID present (repeats and absent IDs are skipped); their values in order.

        XACK's path: a dict pop per ID, and the order list repaired once for the whole batch.
        """
        m = self._map
        mixed = self.mixed
        popped = []
        removed = []
        for eid in eids:
            key = eid + (eid >> 64) * _MIX if mixed else eid
            # get + del: compiled, both are direct dict calls where pop() is a method call.
            pe = m.get(key)
            if pe is not None:  # (values are records, never None)
                del m[key]
                popped.append(pe)
                removed.append(key)
        if not popped:
            return popped
        if not m:
            self._emptied()
        elif self._sorted is not None:
            for key in removed:
                self._sorted.remove(key)
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
        # The last entry left: back to append mode and plain IDs, with a fresh list.
        self._order = []
        self._head = 0
        self._sorted = None
        self.mixed = False

    def __delitem__(self, eid: int) -> None:
        self.pop(eid)

    def _to_sorted(self, key: int) -> None:
        m = self._map
        sl = SortedList([k for k in islice(self._order, self._head, None) if k in m])
        sl.add(key)
        self._sorted = sl
        self._order = []
        self._head = 0

    # --- ordered access ------------------------------------------------------------------------

    def first(self) -> int | None:
        if not self._map:
            return None
        return self._eid(self._sorted[0] if self._sorted is not None else self._order[self._head])

    def last(self) -> int | None:
        if not self._map:
            return None
        return self._eid(self._sorted[-1] if self._sorted is not None else self._order[-1])

    def irange(self, minimum: int | None = None, maximum: int | None = None) -> Iterator[int]:
        """IDs in [minimum, maximum] (either end open when None), ascending."""
        lo = None if minimum is None else self._key(minimum)
        hi = None if maximum is None else self._key(maximum)
        mixed = self.mixed
        sl = self._sorted
        if sl is not None:
            for key in sl.irange(lo, hi):
                yield unmix(key) if mixed else key
            return
        order = self._order
        m = self._map
        i = self._head if lo is None else bisect_left(order, lo, self._head)
        # An index walk, not islice(order, i, None), which would step over the first i slots.
        n = len(order)
        while i < n:
            key = order[i]
            if hi is not None and key > hi:
                return
            if key in m:
                yield unmix(key) if mixed else key
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
    entry), this keeps the keys ascending in `_order` with a live flag each in `_live`: nine
    bytes an entry, the key objects being the group's (`extend_keys`). Removal clears the flag;
    as in `PendingList`, both ends of the list stay live and the stale slots are dropped once
    they outnumber the live ones. A long list that gets an ID below its last one switches to a
    SortedList of the live keys. Its keys are mixed IDs when the group's are (`extend_keys`
    follows the group's mode).
    """

    __slots__ = ("_order", "_live", "_head", "_len", "_sorted", "mixed")

    def __init__(self) -> None:
        self._order: list[int] = []
        self._live = bytearray()
        self._head = 0
        self._len = 0
        self._sorted: SortedList | None = None
        self.mixed = False

    def __len__(self) -> int:
        return self._len

    def __bool__(self) -> bool:
        return self._len > 0

    def _key(self, eid: int) -> int:
        return eid + (eid >> 64) * _MIX if self.mixed else eid

    def _find(self, key: int) -> int:
        """The slot of key in append mode, or -1."""
        order = self._order
        i = bisect_left(order, key, self._head)
        if i < len(order) and order[i] == key:
            return i
        return -1

    def __contains__(self, eid: int) -> bool:
        key = self._key(eid)
        sl = self._sorted
        if sl is not None:
            return key in sl
        i = self._find(key)
        return i >= 0 and self._live[i] == 1

    def set_mixed(self, mixed: bool) -> None:
        """Hold keys in the given mode (converting what is held)."""
        if mixed == self.mixed:
            return
        convert = mix if mixed else unmix
        ids = [convert(k) for k in self._live_keys()]
        self._reset()
        self.mixed = mixed
        if ids:
            self._order = ids
            self._live = bytearray(b"\x01" * len(ids))
            self._len = len(ids)

    def add(self, eid: int) -> None:
        """Own eid (nothing happens if it is owned already)."""
        key = self._key(eid)
        sl = self._sorted
        if sl is not None:
            if key not in sl:
                sl.add(key)
                self._len += 1
            return
        if not self._len:
            self._reset()
        order = self._order
        live = self._live
        if not order or key > order[-1]:
            order.append(key)
            live.append(1)
            self._len += 1
            return
        head = self._head
        i = bisect_left(order, key, head)
        if i < len(order) and order[i] == key:
            if not live[i]:
                live[i] = 1  # its stale slot comes back to life
                self._len += 1
            return
        if i == head and i > 0:
            # Just before the first live key: over the consumed slot in front of it.
            order[i - 1] = key
            live[i - 1] = 1
            self._head = i - 1
        elif len(order) - head <= _SMALL:
            order.insert(i, key)
            live.insert(i, 1)
        else:
            self._sorted = SortedList(self._live_keys())
            self._sorted.add(key)
            self._order = []
            self._live = bytearray()
            self._head = 0
        self._len += 1

    def extend_keys(self, keys: list[int], mixed: bool) -> None:
        """Own the IDs whose keys (in the `mixed` mode) are given: ascending, and all greater
        than every ID held (XREADGROUP `>`). The key objects are the group PEL's, shared."""
        if mixed != self.mixed:
            self.set_mixed(mixed)
        if self._sorted is not None:
            self._sorted.update(keys)
        else:
            if not self._len:
                self._reset()
            self._order.extend(keys)
            n = len(keys)
            self._live += _LIVE[n] if n < 64 else b"\x01" * n
        self._len += len(keys)

    def extend_new(self, eids: list[int]) -> None:
        """Own IDs that ascend and are all greater than every ID held."""
        self.extend_keys([self._key(eid) for eid in eids] if self.mixed else eids, self.mixed)

    def discard(self, eid: int) -> bool:
        """Stop owning eid; whether it was owned."""
        key = self._key(eid)
        sl = self._sorted
        if sl is not None:
            if key not in sl:
                return False
            sl.remove(key)
            self._len -= 1
            if not self._len:
                self._reset()
            return True
        order = self._order
        live = self._live
        head = self._head
        if head < len(order) and order[head] == key:  # acknowledgements mostly come in order
            i = head
        else:
            i = self._find(key)
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

    def discard_many(self, eids: list[int]) -> int:
        """Stop owning every ID given (repeats and IDs not owned are skipped); how many were."""
        if not self.mixed and self._sorted is None:
            # A consumer acknowledging all it holds, in order (its last batch): no slot lookups.
            order = self._order
            head = self._head
            held = len(order) - head
            if held == self._len == len(eids) and held and order[head:] == eids:
                self._len = 0
                self._reset()
                return held
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
            keys = self._live_keys()
            self._order = keys
            self._live = bytearray(b"\x01" * len(keys))
            self._head = 0

    def _live_keys(self) -> list[int]:
        if self._sorted is not None:
            return list(self._sorted)
        live = self._live
        return [k for i, k in enumerate(self._order) if i >= self._head and live[i]]

    def _reset(self) -> None:
        # The mode stays: it follows the group's, which may still be mixed.
        self._order = []
        self._live = bytearray()
        self._head = 0
        self._sorted = None

    def irange(self, minimum: int | None = None, maximum: int | None = None) -> Iterator[int]:
        """Owned IDs in [minimum, maximum] (either end open when None), ascending."""
        lo = None if minimum is None else self._key(minimum)
        hi = None if maximum is None else self._key(maximum)
        mixed = self.mixed
        sl = self._sorted
        if sl is not None:
            for key in sl.irange(lo, hi):
                yield unmix(key) if mixed else key
            return
        order = self._order
        live = self._live
        i = self._head if lo is None else bisect_left(order, lo, self._head)
        n = len(order)
        while i < n:
            key = order[i]
            if hi is not None and key > hi:
                return
            if live[i]:
                yield unmix(key) if mixed else key
            i += 1

    def __iter__(self) -> Iterator[int]:
        return self.irange()

    def __repr__(self) -> str:
        return f"PendingIds({list(self)!r})"
