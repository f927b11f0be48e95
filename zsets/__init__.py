"""Sorted sets: members ordered by score, then by member bytes (memcmp order).

Pure data structure: no I/O, no RESP, no server imports. A `ZSet` holds a dict member -> score
(ZSCORE, membership) and the (score, member) pairs in order (zsets.order: ranks, ranges),
sharing the score objects. Whether Redis would keep the set as a listpack or a skiplist is tracked separately
(`listpack`), converted past the configured limits exactly where Redis converts, because OBJECT
ENCODING reports it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from typing import Any

from zsets.order import Order

INF = math.inf

# Lexicographic range bounds beyond every member ("-" and "+").
LEX_MIN = b"-"
LEX_MAX = b"+"


class LexBound:
    """One end of a lexicographic range: a member, "-" or "+" (`kind`), open or closed."""

    __slots__ = ("value", "exclusive", "kind")

    def __init__(self, value: bytes, exclusive: bool, kind: int = 0) -> None:
        self.value = value
        self.exclusive = exclusive
        self.kind = kind  # -1: "-" (below all), 1: "+" (above all), 0: value


def parse_lex_bound(arg: bytes) -> LexBound | None:
    """Redis's zslParseLexRangeItem: "(" open, "[" closed, "-" and "+" alone; None otherwise."""
    if not arg:
        return None
    first = arg[0]
    if first == 0x2B or first == 0x2D:  # '+' '-'
        if len(arg) > 1 and arg[1] != 0:
            return None
        return LexBound(b"", True, 1 if first == 0x2B else -1)
    if first == 0x28:  # '('
        return LexBound(arg[1:], True)
    if first == 0x5B:  # '['
        return LexBound(arg[1:], False)
    return None


def lex_range_empty(lo: LexBound, hi: LexBound) -> bool:
    """No member can be in the range (min above max, or equal and one end open)."""
    if lo.kind == 1 or hi.kind == -1:
        return True
    if lo.kind == -1 or hi.kind == 1:
        return False
    return lo.value > hi.value or (lo.value == hi.value and (lo.exclusive or hi.exclusive))


def lex_gte_min(member: bytes, lo: LexBound) -> bool:
    if lo.kind:
        return lo.kind < 0
    return member > lo.value if lo.exclusive else member >= lo.value


def lex_lte_max(member: bytes, hi: LexBound) -> bool:
    if hi.kind:
        return hi.kind > 0
    return member < hi.value if hi.exclusive else member <= hi.value


def _next_up(x: float) -> float:
    return math.nextafter(x, INF)


class ZSet:
    __slots__ = ("scores", "order", "listpack", "scan_snapshot", "lru")

    def __init__(self, listpack: bool = True) -> None:
        # OBJECT IDLETIME / FREQ's access data, Redis's robj.lru (see server/keyspace.py).
        self.lru = 0
        self.scores: dict[bytes, float] = {}
        self.order = Order()
        self.listpack = listpack
        # ZSCAN's member order of the current members; dropped by every change.
        self.scan_snapshot: Any = None

    def __len__(self) -> int:
        return len(self.scores)

    # --- writes ----------------------------------------------------------------------------

    def insert(self, member: bytes, score: float) -> None:
        """Add a member known to be absent."""
        if score == 0 and self.listpack:
            score = 0.0  # a listpack stores a zero score as the integer 0: -0 is lost
        self.scan_snapshot = None
        self.scores[member] = score
        self.order.add(score, member)

    def set_score(self, member: bytes, old: float, score: float) -> None:
        """Move a present member from `old` to a different `score`."""
        if score == 0 and self.listpack:
            score = 0.0
        self.scan_snapshot = None
        order = self.order
        order.remove(old, member)
        self.scores[member] = score
        order.add(score, member)

    def remove(self, member: bytes) -> bool:
        score = self.scores.pop(member, None)
        if score is None:
            return False
        self.scan_snapshot = None
        self.order.remove(score, member)
        return True

    def delete_index_range(self, start: int, stop: int) -> int:
        """Remove the members of ranks start..stop-1; how many."""
        if start >= stop:
            return 0
        self.scan_snapshot = None
        order = self.order
        scores = self.scores
        for _score, member in order.islice(start, stop):
            del scores[member]
        order.delete_range(start, stop)
        return stop - start

    def pop(self, from_max: bool) -> tuple[bytes, float]:
        self.scan_snapshot = None
        score, member = self.order.pop(from_max)
        del self.scores[member]
        return member, score

    # --- reads -----------------------------------------------------------------------------

    def score(self, member: bytes) -> float | None:
        return self.scores.get(member)

    def rank(self, member: bytes) -> int | None:
        score = self.scores.get(member)
        if score is None:
            return None
        return self.order.index(score, member)

    def at(self, index: int) -> tuple[float, bytes]:
        return self.order.at(index)

    def items(self, start: int, stop: int, reverse: bool = False) -> Iterator[tuple[float, bytes]]:
        """The (score, member) pairs of ranks start..stop-1, backwards when reverse."""
        return self.order.islice(start, stop, reverse)

    def __iter__(self) -> Iterator[tuple[float, bytes]]:
        return iter(self.order)

    def score_bounds(self, lo: float, lo_ex: bool, hi: float, hi_ex: bool) -> tuple[int, int]:
        """The ranks [start, stop) of the members whose scores are in the range."""
        order = self.order
        n = len(order)
        if lo_ex:
            start = n if lo == INF else order.bisect_left(_next_up(lo), b"")
        else:
            start = order.bisect_left(lo, b"")
        if hi_ex:
            stop = order.bisect_left(hi, b"")
        else:
            stop = n if hi == INF else order.bisect_left(_next_up(hi), b"")
        return start, max(start, stop)

    def lex_bounds(self, lo: LexBound, hi: LexBound, reverse: bool = False) -> tuple[int, int]:
        """The ranks [start, stop) of the members in the lexicographic range.

        Meaningful when all scores are equal, as in Redis; otherwise the members are walked as
        Redis walks a listpack: from the first member (or, reverse, the last) on the right side
        of one bound while the others stay within the other bound."""
        order = self.order
        n = len(order)
        if n == 0 or lex_range_empty(lo, hi):
            return 0, 0
        if order.at(0)[0] == order.at(-1)[0]:
            start = 0 if lo.kind == -1 else self._lex_search(lo.value, lo.exclusive)
            stop = n if hi.kind == 1 else self._lex_search(hi.value, not hi.exclusive)
            return start, max(start, stop)
        if not (lex_gte_min(order.at(-1)[1], lo) and lex_lte_max(order.at(0)[1], hi)):
            return 0, 0
        if reverse:
            stop = n
            while stop > 0 and not lex_lte_max(order.at(stop - 1)[1], hi):
                stop -= 1
            if stop == 0 or not lex_gte_min(order.at(stop - 1)[1], lo):
                return 0, 0
            start = stop - 1
            while start > 0 and lex_gte_min(order.at(start - 1)[1], lo):
                start -= 1
            return start, stop
        start = 0
        while start < n and not lex_gte_min(order.at(start)[1], lo):
            start += 1
        if start == n or not lex_lte_max(order.at(start)[1], hi):
            return 0, 0
        stop = start + 1
        while stop < n and lex_lte_max(order.at(stop)[1], hi):
            stop += 1
        return start, stop

    def _lex_search(self, value: bytes, after_equal: bool) -> int:
        # The first rank whose member is >= value (after_equal: > value), bisecting on members.
        order = self.order
        lo, hi = 0, len(order)
        while lo < hi:
            mid = (lo + hi) // 2
            member = order.at(mid)[1]
            if member < value or (after_equal and member == value):
                lo = mid + 1
            else:
                hi = mid
        return lo

    def random_member(self) -> tuple[float, bytes]:
        return self.order.at(random.randrange(len(self.order)))

    def copy(self) -> ZSet:
        dup = ZSet(self.listpack)
        dup.scores = dict(self.scores)
        dup.order = self.order.copy()
        return dup

    def to_listpack(self) -> None:
        """Mark as listpack-encoded, with the zero scores a listpack would store."""
        self.listpack = True
        for member, score in list(self.scores.items()):
            if score == 0 and math.copysign(1.0, score) < 0:
                self.set_score(member, score, 0.0)

    def max_member_len(self) -> int:
        return max((len(m) for m in self.scores), default=0)
