"""The order of a sorted set: (score, member) pairs kept sorted in blocks.

A list of sorted blocks of at most 2 * LOAD pairs each. A block is a list of its scores beside a
list of its members; the last pair of every block is kept in `max_scores` / `max_members`.
Finding a pair bisects the scores with the searches below, which mypyc compiles to loops
comparing C doubles (no Python call or object per probe, unlike `bisect` on a sequence), and
the members only among equal scores. On a large set each probe of a block is a cache miss (the
float object a list entry points to), and an insertion or removal moves a block's worth of
references in two lists: LOAD is 128 rather than 256 because the moves then cost fewer
instructions and data-cache misses per change, while the search's misses stay as they were.
Ranks need the number of pairs before each block: that prefix sum is rebuilt on
demand after the sizes change (O(blocks)). Compiled with mypyc (setup.py).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator

Score = float
Scores = list[float]

LOAD = 128


def _first_not_below(scores: Scores, score: float, lo: int, hi: int) -> int:
    """The first index in lo..hi whose score is >= score (bisect_left)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if scores[mid] < score:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _first_above(scores: Scores, score: float, lo: int, hi: int) -> int:
    """The first index in lo..hi whose score is > score (bisect_right)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if score < scores[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _position(scores: Scores, members: list[bytes], score: Score, member: bytes,
              right: bool) -> int:
    """Where (score, member) goes in one block: before an equal pair, or after it when right."""
    n = len(scores)
    lo = _first_not_below(scores, score, 0, n)
    if lo == n or scores[lo] != score:
        return lo
    hi = _first_above(scores, score, lo, n)
    if right:
        return bisect_right(members, member, lo, hi)
    return bisect_left(members, member, lo, hi)


class Order:
    __slots__ = ("scores", "members", "max_scores", "max_members", "offsets", "size")

    def __init__(self) -> None:
        self.scores: list[Scores] = []
        self.members: list[list[bytes]] = []
        self.max_scores: Scores = []
        self.max_members: list[bytes] = []
        self.offsets: list[int] = []  # pairs before each block; empty when stale
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def _block_of(self, score: Score, member: bytes, right: bool) -> int:
        """The first block whose last pair is >= (score, member), or > it when right."""
        maxes = self.max_scores
        n = len(maxes)
        lo = _first_not_below(maxes, score, 0, n)
        if lo == n or maxes[lo] != score:
            return lo
        hi = _first_above(maxes, score, lo, n)
        if right:
            return bisect_right(self.max_members, member, lo, hi)
        return bisect_left(self.max_members, member, lo, hi)

    def add(self, score: Score, member: bytes) -> None:
        if self.offsets:
            self.offsets = []
        self.size += 1
        maxes = self.max_scores
        if not maxes:
            self.scores.append([score])
            self.members.append([member])
            maxes.append(score)
            self.max_members.append(member)
            return
        pos = self._block_of(score, member, True)
        if pos == len(maxes):
            pos -= 1
            block_scores = self.scores[pos]
            block_members = self.members[pos]
            block_scores.append(score)
            block_members.append(member)
            maxes[pos] = score
            self.max_members[pos] = member
        else:
            block_scores = self.scores[pos]
            block_members = self.members[pos]
            i = _position(block_scores, block_members, score, member, True)
            block_scores.insert(i, score)
            block_members.insert(i, member)
        if len(block_scores) > 2 * LOAD:
            self._split(pos)

    def _split(self, pos: int) -> None:
        # Two new lists of exact size each: the grown one would keep its spare capacity.
        scores = self.scores[pos]
        members = self.members[pos]
        self.scores[pos:pos + 1] = [scores[:LOAD], scores[LOAD:]]
        self.members[pos:pos + 1] = [members[:LOAD], members[LOAD:]]
        self.max_scores[pos:pos + 1] = [scores[LOAD - 1], scores[-1]]
        self.max_members[pos:pos + 1] = [members[LOAD - 1], members[-1]]

    def remove(self, score: Score, member: bytes) -> None:
        """Remove a pair known to be present."""
        pos = self._block_of(score, member, False)
        block_scores = self.scores[pos]
        block_members = self.members[pos]
        i = _position(block_scores, block_members, score, member, False)
        del block_scores[i]
        del block_members[i]
        self._removed_from(pos)

    def _removed_from(self, pos: int) -> None:
        self.size -= 1
        if self.offsets:
            self.offsets = []
        block_scores = self.scores[pos]
        if not block_scores:
            del self.scores[pos]
            del self.members[pos]
            del self.max_scores[pos]
            del self.max_members[pos]
            return
        self.max_scores[pos] = block_scores[-1]
        self.max_members[pos] = self.members[pos][-1]
        # Keep blocks from thinning out: a small one joins its neighbour.
        if len(block_scores) < LOAD // 4 and len(self.scores) > 1:
            left = pos - 1 if pos > 0 else pos
            self.scores[left:left + 2] = [self.scores[left] + self.scores[left + 1]]
            self.members[left:left + 2] = [self.members[left] + self.members[left + 1]]
            del self.max_scores[left]
            del self.max_members[left]
            if len(self.scores[left]) > 2 * LOAD:
                self._split(left)

    def pop(self, last: bool) -> tuple[Score, bytes]:
        pos = len(self.scores) - 1 if last else 0
        if last:
            score = self.scores[pos].pop()
            member = self.members[pos].pop()
        else:
            score = self.scores[pos].pop(0)
            member = self.members[pos].pop(0)
        self._removed_from(pos)
        return score, member

    def _offsets(self) -> list[int]:
        offsets = self.offsets
        if len(offsets) != len(self.scores):
            offsets = []
            total = 0
            for block in self.scores:
                offsets.append(total)
                total += len(block)
            self.offsets = offsets
        return offsets

    def _locate(self, index: int) -> tuple[int, int]:
        """The block and position in it of the pair of rank index (0 <= index < size)."""
        pos = bisect_right(self._offsets(), index) - 1
        return pos, index - self.offsets[pos]

    def at(self, index: int) -> tuple[Score, bytes]:
        if index < 0:
            index += self.size
        if not 0 <= index < self.size:
            raise IndexError("rank out of range")
        pos, i = self._locate(index)
        return self.scores[pos][i], self.members[pos][i]

    def index(self, score: Score, member: bytes) -> int:
        """The rank of a pair known to be present."""
        pos = self._block_of(score, member, False)
        return self._offsets()[pos] + _position(self.scores[pos], self.members[pos], score, member,
                                                False)

    def bisect_left(self, score: Score, member: bytes) -> int:
        """How many pairs sort before (score, member)."""
        pos = self._block_of(score, member, False)
        if pos == len(self.scores):
            return self.size
        return self._offsets()[pos] + _position(self.scores[pos], self.members[pos], score, member,
                                                False)

    def islice(self, start: int, stop: int, reverse: bool = False) -> Iterator[tuple[Score, bytes]]:
        """The pairs of ranks start..stop-1 (clamped), backwards when reverse."""
        start = max(start, 0)
        stop = min(stop, self.size)
        if start >= stop:
            return iter(())
        if reverse:
            return self._backward(start, stop)
        return self._forward(start, stop)

    def _forward(self, start: int, stop: int) -> Iterator[tuple[Score, bytes]]:
        pos, i = self._locate(start)
        left = stop - start
        while left > 0:
            chunk = self.scores[pos][i:i + left]
            yield from zip(chunk, self.members[pos][i:i + left], strict=True)
            left -= len(chunk)
            pos += 1
            i = 0

    def _backward(self, start: int, stop: int) -> Iterator[tuple[Score, bytes]]:
        pos, i = self._locate(stop - 1)
        left = stop - start
        while left > 0:
            lo = max(0, i + 1 - left)
            chunk = self.scores[pos][lo:i + 1]
            members = self.members[pos][lo:i + 1]
            chunk.reverse()
            members.reverse()
            yield from zip(chunk, members, strict=True)
            left -= len(chunk)
            pos -= 1
            if pos >= 0:
                i = len(self.scores[pos]) - 1

    def delete_range(self, start: int, stop: int) -> None:
        """Remove the pairs of ranks start..stop-1 (0 <= start < stop <= size)."""
        if stop - start <= 32:
            for _ in range(stop - start):
                pos, i = self._locate(start)
                del self.scores[pos][i]
                del self.members[pos][i]
                self._removed_from(pos)
            return
        scores: Scores = []
        for block in self.scores:
            scores.extend(block)
        members = [member for block in self.members for member in block]
        del scores[start:stop]
        del members[start:stop]
        self._rebuild(scores, members)

    def load_sorted(self, scores: list[Score], members: list[bytes]) -> None:
        """Replace the content with pairs already in order (a loaded value), in full blocks."""
        self._rebuild(scores, members)

    def _rebuild(self, scores: Scores, members: list[bytes]) -> None:
        self.scores = [scores[i:i + LOAD] for i in range(0, len(scores), LOAD)]
        self.members = [members[i:i + LOAD] for i in range(0, len(members), LOAD)]
        self.max_scores = [block[-1] for block in self.scores]
        self.max_members = [block[-1] for block in self.members]
        self.offsets = []
        self.size = len(scores)

    def __iter__(self) -> Iterator[tuple[Score, bytes]]:
        for scores, members in zip(self.scores, self.members, strict=True):
            yield from zip(scores, members, strict=True)

    def copy(self) -> Order:
        dup = Order()
        dup.scores = [list(block) for block in self.scores]
        dup.members = [list(block) for block in self.members]
        dup.max_scores = list(self.max_scores)
        dup.max_members = list(self.max_members)
        dup.size = self.size
        return dup
