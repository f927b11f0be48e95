"""The order of a sorted set: (score, member) pairs kept sorted in blocks.

A list of sorted blocks of at most 2 * LOAD pairs each. A block is its scores, packed as C
doubles in one buffer (a `librt.vecs.vec[float]`, mypy's native array), beside a list of its
members; the last pair of every block is kept in `max_scores` / `max_members`. Finding a pair
bisects the packed scores, which mypyc compiles to loops over the buffer: a probe reads a
double in place, where a list of floats made it follow a pointer to an object somewhere else
in memory, a cache miss per probe on a large set (the cost that bounded ZADD). The members are
compared only among equal scores. An insertion or removal moves a block's worth of doubles and
of member references. LOAD is 128 rather than 256 because the moves then cost fewer
instructions and data-cache misses per change. Ranks need the number of pairs before each
block: that prefix sum is rebuilt on demand after the sizes change (O(blocks)). Compiled with
mypyc (setup.py); as plain Python, `vec` is librt's extension type and behaves the same.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator

from librt.vecs import append, pop, vec
from mypy_extensions import i64

Score = float
Scores = vec[float]

LOAD = 128


def _first_not_below(scores: Scores, score: float, lo: i64, hi: i64) -> i64:
    """The first index in lo..hi whose score is >= score (bisect_left)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if scores[mid] < score:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _first_above(scores: Scores, score: float, lo: i64, hi: i64) -> i64:
    """The first index in lo..hi whose score is > score (bisect_right)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if score < scores[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _position(scores: Scores, members: list[bytes], score: Score, member: bytes,
              right: bool) -> i64:
    """Where (score, member) goes in one block: before an equal pair, or after it when right."""
    n = len(scores)
    lo = _first_not_below(scores, score, 0, n)
    if lo == n or scores[lo] != score:
        return lo
    hi = _first_above(scores, score, lo, n)
    if right:
        return bisect_right(members, member, lo, hi)
    return bisect_left(members, member, lo, hi)


def _found(scores: Scores, members: list[bytes], score: Score, member: bytes) -> i64:
    """Where a pair known to be in this block is. When no other pair of the block has its
    score, that is the first index of the score, found without reading a member: comparing
    members follows a pointer to each one compared, a cache miss on a large set."""
    n = len(scores)
    lo = _first_not_below(scores, score, 0, n)
    if lo + 1 == n or scores[lo + 1] != score:
        return lo
    return bisect_left(members, member, lo, _first_above(scores, score, lo + 1, n))


def _inserted(scores: Scores, i: i64, score: float) -> Scores:
    """scores with score inserted at index i."""
    scores = append(scores, score)
    j = len(scores) - 1
    while j > i:
        scores[j] = scores[j - 1]
        j -= 1
    scores[i] = score
    return scores


def _half(scores: Scores) -> Scores:
    """A block made by a split: its buffer holds the largest size the block can reach (2 *
    LOAD, and the pair that splits it), so that its insertions never reallocate it. Other
    blocks (a small set's, a loaded set's) start at their size and grow as vecs do."""
    return vec[float](scores, capacity=2 * LOAD + 1)


class Order:
    __slots__ = ("scores", "members", "max_scores", "max_members", "offsets", "size")

    def __init__(self) -> None:
        self.scores: vec[Scores] = vec[Scores]()
        self.members: list[list[bytes]] = []
        self.max_scores: Scores = vec[float]()
        self.max_members: list[bytes] = []
        self.offsets: list[int] = []  # pairs before each block; empty when stale
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def _block_of(self, score: Score, member: bytes, right: bool) -> i64:
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
        if not len(maxes):
            self.scores = append(self.scores, vec[float]([score]))
            self.members.append([member])
            self.max_scores = append(maxes, score)
            self.max_members.append(member)
            return
        pos = self._block_of(score, member, True)
        block_members: list[bytes]
        if pos == len(maxes):
            pos -= 1
            block_scores = append(self.scores[pos], score)
            block_members = self.members[pos]
            block_members.append(member)
            maxes[pos] = score
            self.max_members[pos] = member
        else:
            block_scores = self.scores[pos]
            block_members = self.members[pos]
            i = _position(block_scores, block_members, score, member, True)
            block_scores = _inserted(block_scores, i, score)
            block_members.insert(i, member)
        self.scores[pos] = block_scores
        if len(block_scores) > 2 * LOAD:
            self._split(pos)

    def _split(self, pos: i64) -> None:
        # Two new member lists of exact size each: the grown one would keep its spare capacity.
        scores = self.scores[pos]
        members = self.members[pos]
        self.scores[pos] = _half(scores[:LOAD])
        self.scores = _inserted_block(self.scores, pos + 1, _half(scores[LOAD:]))
        self.members[pos:pos + 1] = [members[:LOAD], members[LOAD:]]
        self.max_scores[pos] = scores[LOAD - 1]
        self.max_scores = _inserted(self.max_scores, pos + 1, scores[len(scores) - 1])
        self.max_members[pos:pos + 1] = [members[LOAD - 1], members[-1]]

    def remove(self, score: Score, member: bytes) -> None:
        """Remove a pair known to be present."""
        pos = self._block_of(score, member, False)
        block_scores = self.scores[pos]
        block_members = self.members[pos]
        i = _found(block_scores, block_members, score, member)
        block_scores, _ = pop(block_scores, i)
        self.scores[pos] = block_scores
        del block_members[i]
        self._removed_from(pos)

    def _removed_from(self, pos: i64) -> None:
        self.size -= 1
        if self.offsets:
            self.offsets = []
        block_scores = self.scores[pos]
        n = len(block_scores)
        if not n:
            self.scores, _ = pop(self.scores, pos)
            del self.members[pos]
            self.max_scores, _ = pop(self.max_scores, pos)
            del self.max_members[pos]
            return
        self.max_scores[pos] = block_scores[n - 1]
        self.max_members[pos] = self.members[pos][-1]
        # Keep blocks from thinning out: a small one joins its neighbour.
        if n < LOAD // 4 and len(self.scores) > 1:
            left = pos - 1 if pos > 0 else pos
            right = self.scores[left + 1]
            joined = vec[float](self.scores[left], capacity=len(self.scores[left]) + len(right))
            for x in right:
                joined = append(joined, x)
            self.scores[left] = joined
            self.scores, _ = pop(self.scores, left + 1)
            self.members[left:left + 2] = [self.members[left] + self.members[left + 1]]
            self.max_scores, _ = pop(self.max_scores, left)
            del self.max_members[left]
            if len(joined) > 2 * LOAD:
                self._split(left)

    def pop(self, last: bool) -> tuple[Score, bytes]:
        pos: i64 = len(self.scores) - 1 if last else 0
        block = self.scores[pos]
        block, score = pop(block, -1 if last else 0)
        self.scores[pos] = block
        if last:
            member = self.members[pos].pop()
        else:
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
        return self._offsets()[pos] + _found(self.scores[pos], self.members[pos], score, member)

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
            block = self.scores[pos]
            members = self.members[pos]
            end = min(len(block), i + left)
            for j in range(i, end):
                yield block[j], members[j]
            left -= end - i
            pos += 1
            i = 0

    def _backward(self, start: int, stop: int) -> Iterator[tuple[Score, bytes]]:
        pos, i = self._locate(stop - 1)
        left = stop - start
        while left > 0:
            lo = max(0, i + 1 - left)
            block = self.scores[pos]
            members = self.members[pos]
            for j in range(i, lo - 1, -1):
                yield block[j], members[j]
            left -= i + 1 - lo
            pos -= 1
            if pos >= 0:
                i = len(self.scores[pos]) - 1

    def delete_range(self, start: int, stop: int) -> None:
        """Remove the pairs of ranks start..stop-1 (0 <= start < stop <= size)."""
        if stop - start <= 32:
            for _ in range(stop - start):
                pos, i = self._locate(start)
                block, _ = pop(self.scores[pos], i)
                self.scores[pos] = block
                del self.members[pos][i]
                self._removed_from(pos)
            return
        scores: list[float] = []
        for block in self.scores:
            scores.extend(block)
        members = [member for block in self.members for member in block]
        del scores[start:stop]
        del members[start:stop]
        self._rebuild(scores, members)

    def load_sorted(self, scores: list[Score], members: list[bytes]) -> None:
        """Replace the content with pairs already in order (a loaded value), in full blocks."""
        self._rebuild(scores, members)

    def _rebuild(self, scores: list[float], members: list[bytes]) -> None:
        blocks = vec[Scores]()
        maxes = vec[float]()
        for i in range(0, len(scores), LOAD):
            block = vec[float](scores[i:i + LOAD])
            blocks = append(blocks, block)
            maxes = append(maxes, block[len(block) - 1])
        self.scores = blocks
        self.max_scores = maxes
        self.members = [members[i:i + LOAD] for i in range(0, len(members), LOAD)]
        self.max_members = [block[-1] for block in self.members]
        self.offsets = []
        self.size = len(scores)

    def __iter__(self) -> Iterator[tuple[Score, bytes]]:
        for pos in range(len(self.members)):
            block = self.scores[pos]
            members = self.members[pos]
            for j in range(len(members)):
                yield block[j], members[j]

    def copy(self) -> Order:
        dup = Order()
        blocks = vec[Scores]()
        for block in self.scores:
            blocks = append(blocks, vec[float](block))
        dup.scores = blocks
        dup.members = [list(block) for block in self.members]
        dup.max_scores = vec[float](self.max_scores)
        dup.max_members = list(self.max_members)
        dup.size = self.size
        return dup


def _inserted_block(blocks: vec[Scores], i: i64, block: Scores) -> vec[Scores]:
    """blocks with block inserted at index i."""
    blocks = append(blocks, block)
    j = len(blocks) - 1
    while j > i:
        blocks[j] = blocks[j - 1]
        j -= 1
    blocks[i] = block
    return blocks
