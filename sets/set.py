"""The set value: Redis 7.4's three set encodings and the conversions between them (t_set.c).

An intset holds integers only, as a sorted `array('q')`; a listpack holds up to
`set-max-listpack-entries` short members in insertion order, as a list (a deletion closes the gap,
as lpDelete does); a hashtable is a Python set. Members are bytes at the interface whatever the
encoding: an intset stores the canonical integer form (string2ll) only, so converting back gives
the same bytes.
"""

from __future__ import annotations

import random
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any, Final

# Final: compiled, a constant in the code rather than a dictionary lookup at every test.
INTSET: Final = 0
LISTPACK: Final = 1
HASHTABLE: Final = 2
ENCODING_NAMES = (b"intset", b"listpack", b"hashtable")

_INTSET_HARD_MAX = 1 << 30  # intsetMaxEntries: intset internals cap it
_SMALL = 64  # a hashtable this small is walked for a random pick, not listed


def as_int(member: bytes) -> int | None:
    """The 64-bit integer a member spells in canonical form (string2ll), or None."""
    n = len(member)
    if n == 0 or n > 20:
        return None
    first = member[0]
    if first == 0x2D:  # '-'
        if n == 1 or not (0x31 <= member[1] <= 0x39) or not member[1:].isdigit():
            return None
        v = -int(member[1:])
        return v if v >= -(1 << 63) else None
    if first == 0x30:
        return 0 if n == 1 else None
    if not (0x31 <= first <= 0x39) or not member.isdigit():
        return None
    v = int(member)
    return v if v < (1 << 63) else None


class Limits:
    """The encoding thresholds of the running configuration."""

    __slots__ = ("intset_entries", "listpack_entries", "listpack_value")

    def __init__(self, intset_entries: int = 512, listpack_entries: int = 128,
                 listpack_value: int = 64) -> None:
        self.intset_entries = min(intset_entries, _INTSET_HARD_MAX)
        self.listpack_entries = listpack_entries
        self.listpack_value = listpack_value


class Set:
    """A set value. `enc` is INTSET, LISTPACK or HASHTABLE; `data` the matching container."""

    __slots__ = ("enc", "data", "scan_state", "pool", "lru")

    def __init__(self, enc: int = LISTPACK, data: Any = None) -> None:
        # OBJECT IDLETIME / FREQ's access data, Redis's robj.lru (see server/keyspace.py).
        self.lru = 0
        self.enc = enc
        if data is None:
            data = array("q") if enc == INTSET else [] if enc == LISTPACK else set()
        self.data: Any = data
        # SSCAN's snapshot of a hashtable (see server/commands/sets.py); dropped on any change.
        self.scan_state: Any = None
        # A hashtable's members as a list, for O(1) random picks: (the set it lists, the list).
        # Removed members stay in it until it is rebuilt (picks skip them); any addition drops it.
        self.pool: Any = None

    # --- creation ------------------------------------------------------------------------

    @staticmethod
    def create(first: bytes, size_hint: int, limits: Limits) -> Set:
        """An empty set able to hold `first`, sized for `size_hint` members (setTypeCreate)."""
        if size_hint <= limits.intset_entries and as_int(first) is not None:
            return Set(INTSET)
        if size_hint <= limits.listpack_entries:
            return Set(LISTPACK)
        return Set(HASHTABLE)

    def maybe_convert(self, size_hint: int, limits: Limits) -> None:
        """Go to a hashtable before adding about `size_hint` members that would not fit."""
        enc = self.enc
        if ((enc == LISTPACK and size_hint > limits.listpack_entries)
                or (enc == INTSET and size_hint > limits.intset_entries)):
            self.to_hashtable()

    def copy(self) -> Set:
        data = self.data
        return Set(self.enc, array("q", data) if self.enc == INTSET else
                   list(data) if self.enc == LISTPACK else set(data))

    # --- conversions ---------------------------------------------------------------------

    def to_hashtable(self) -> None:
        if self.enc == HASHTABLE:
            return
        self.data = set(self.members())
        self.enc = HASHTABLE

    def maybe_to_intset(self, limits: Limits) -> None:
        """When every member is an integer: an intset, if the set is small enough for one."""
        if self.enc == INTSET or len(self.data) > limits.intset_entries:
            return
        values = array("q", sorted(int(m) for m in self.data))
        self.data = values
        self.enc = INTSET

    # --- reads ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.data)

    def members(self) -> Iterable[bytes]:
        """Members in the encoding's order: ascending for an intset, insertion for a listpack."""
        if self.enc == INTSET:
            return [b"%d" % v for v in self.data]
        return self.data  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.members())

    def contains(self, member: bytes) -> bool:
        enc = self.enc
        if enc == HASHTABLE or enc == LISTPACK:
            return member in self.data
        v = as_int(member)
        if v is None:
            return False
        data = self.data
        i = bisect_left(data, v)
        return i < len(data) and data[i] == v

    def random_member(self) -> bytes:
        data = self.data
        if self.enc == HASHTABLE:
            n = len(data)
            if n <= _SMALL:
                return next(islice(data, random.randrange(n), None))  # type: ignore[no-any-return]
            pool = self.pool
            if pool is None or pool[0] is not data or 2 * n < len(pool[1]):
                pool = self.pool = (data, list(data))
            members = pool[1]
            while True:
                member = members[random.randrange(len(members))]
                if member in data:
                    return member  # type: ignore[no-any-return]
        if self.enc == INTSET:
            return b"%d" % data[random.randrange(len(data))]
        return data[random.randrange(len(data))]  # type: ignore[no-any-return]

    # --- writes --------------------------------------------------------------------------

    def add(self, member: bytes, limits: Limits) -> bool:
        """Add a member (setTypeAdd), converting the encoding as Redis does. True if new."""
        enc = self.enc
        data = self.data
        if enc == HASHTABLE:
            if member in data:
                return False
            data.add(member)
            self.pool = None
            return True
        if enc == LISTPACK:
            if member in data:
                return False
            if len(data) < limits.listpack_entries and len(member) <= limits.listpack_value:
                data.append(member)
            else:
                self.to_hashtable()
                self.data.add(member)
            return True
        v = as_int(member)
        if v is not None:
            i = bisect_left(data, v)
            if i < len(data) and data[i] == v:
                return False
            data.insert(i, v)
            if len(data) > limits.intset_entries:
                self.to_hashtable()
            return True
        # A non-integer into an intset: a listpack if everything fits one, else a hashtable.
        n = len(data)
        longest = max(len(b"%d" % data[0]), len(b"%d" % data[-1])) if n else 0
        if (n < limits.listpack_entries and len(member) <= limits.listpack_value
                and longest <= limits.listpack_value):
            self.data = [b"%d" % x for x in data]
            self.data.append(member)
            self.enc = LISTPACK
        else:
            self.to_hashtable()
            self.data.add(member)
        return True

    def remove(self, member: bytes) -> bool:
        enc = self.enc
        data = self.data
        if enc == HASHTABLE:
            if member in data:
                data.remove(member)
                return True
            return False
        if enc == LISTPACK:
            if member in data:
                data.remove(member)
                return True
            return False
        v = as_int(member)
        if v is None:
            return False
        i = bisect_left(data, v)
        if i < len(data) and data[i] == v:
            del data[i]
            return True
        return False

    def pop_random(self) -> bytes:
        member = self.random_member()
        self.remove(member)
        return member

    def remove_many(self, members: list[bytes]) -> None:
        """Remove members known to be present."""
        if self.enc == HASHTABLE:
            self.data.difference_update(members)
        elif self.enc == LISTPACK:
            gone = set(members)
            self.data = [m for m in self.data if m not in gone]
        else:
            gone_ints = {int(m) for m in members}
            self.data = array("q", [v for v in self.data if v not in gone_ints])
