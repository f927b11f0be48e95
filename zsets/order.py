"""The order of a sorted set: (score, member) pairs kept sorted in blocks.

A list of sorted blocks of at most 2 * LOAD pairs each, with each block's last pair in `maxes`:
an insertion or removal bisects `maxes`, then one block, and moves at most one block's worth of
references. Ranks need the number of pairs before each block: that prefix sum is rebuilt on
demand after the sizes change (O(blocks)). Compiled with mypyc (setup.py).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterator
from typing import Any

# A (score, member) tuple. Typed Any on purpose: mypyc would otherwise unbox a tuple[float, bytes]
# on the way in and box a new tuple and float on the way out, doubling the objects stored.
Pair = Any

LOAD = 512


class Order:
    __slots__ = ("blocks", "maxes", "offsets", "size")

    def __init__(self) -> None:
        self.blocks: list[list[Pair]] = []
        self.maxes: list[Pair] = []
        self.offsets: list[int] = []  # pairs before each block; empty when stale
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def add(self, pair: Pair) -> None:
        maxes = self.maxes
        blocks = self.blocks
        self.offsets = []
        self.size += 1
        if not maxes:
            blocks.append([pair])
            maxes.append(pair)
            return
        pos = bisect_right(maxes, pair)
        if pos == len(maxes):
            pos -= 1
            block = blocks[pos]
            block.append(pair)
            maxes[pos] = pair
        else:
            block = blocks[pos]
            insort(block, pair)
        if len(block) > 2 * LOAD:
            # Two new lists of exact size: the grown one would keep its spare capacity.
            first = block[:LOAD]
            half = block[LOAD:]
            blocks[pos] = first
            maxes[pos] = first[-1]
            blocks.insert(pos + 1, half)
            maxes.insert(pos + 1, half[-1])

    def remove(self, pair: Pair) -> None:
        """Remove a pair known to be present."""
        pos = bisect_left(self.maxes, pair)
        block = self.blocks[pos]
        del block[bisect_left(block, pair)]
        self._removed_from(pos)

    def _removed_from(self, pos: int) -> None:
        self.size -= 1
        self.offsets = []
        block = self.blocks[pos]
        if not block:
            del self.blocks[pos]
            del self.maxes[pos]
            return
        self.maxes[pos] = block[-1]
        # Keep blocks from thinning out: a small one joins its neighbour.
        if len(block) < LOAD // 4 and len(self.blocks) > 1:
            left = pos - 1 if pos > 0 else pos
            merged = self.blocks[left] + self.blocks[left + 1]
            del self.blocks[left + 1]
            del self.maxes[left + 1]
            self.blocks[left] = merged
            self.maxes[left] = merged[-1]
            if len(merged) > 2 * LOAD:
                half = merged[LOAD:]
                del merged[LOAD:]
                self.maxes[left] = merged[-1]
                self.blocks.insert(left + 1, half)
                self.maxes.insert(left + 1, half[-1])

    def pop(self, last: bool) -> Pair:
        pos = len(self.blocks) - 1 if last else 0
        block = self.blocks[pos]
        pair = block.pop() if last else block.pop(0)
        self._removed_from(pos)
        return pair

    def _offsets(self) -> list[int]:
        offsets = self.offsets
        if len(offsets) != len(self.blocks):
            offsets = []
            total = 0
            for block in self.blocks:
                offsets.append(total)
                total += len(block)
            self.offsets = offsets
        return offsets

    def _locate(self, index: int) -> tuple[int, int]:
        """The block and position in it of the pair of rank index (0 <= index < size)."""
        pos = bisect_right(self._offsets(), index) - 1
        return pos, index - self.offsets[pos]

    def at(self, index: int) -> Pair:
        if index < 0:
            index += self.size
        if not 0 <= index < self.size:
            raise IndexError("rank out of range")
        pos, i = self._locate(index)
        return self.blocks[pos][i]

    def index(self, pair: Pair) -> int:
        """The rank of a pair known to be present."""
        pos = bisect_left(self.maxes, pair)
        return self._offsets()[pos] + bisect_left(self.blocks[pos], pair)

    def bisect_left(self, pair: Pair) -> int:
        """How many pairs sort before `pair`."""
        pos = bisect_left(self.maxes, pair)
        if pos == len(self.maxes):
            return self.size
        return self._offsets()[pos] + bisect_left(self.blocks[pos], pair)

    def islice(self, start: int, stop: int, reverse: bool = False) -> Iterator[Pair]:
        """The pairs of ranks start..stop-1 (clamped), backwards when reverse."""
        start = max(start, 0)
        stop = min(stop, self.size)
        if start >= stop:
            return iter(())
        if reverse:
            return self._backward(start, stop)
        return self._forward(start, stop)

    def _forward(self, start: int, stop: int) -> Iterator[Pair]:
        pos, i = self._locate(start)
        left = stop - start
        blocks = self.blocks
        while left > 0:
            block = blocks[pos]
            chunk = block[i:i + left]
            yield from chunk
            left -= len(chunk)
            pos += 1
            i = 0

    def _backward(self, start: int, stop: int) -> Iterator[Pair]:
        pos, i = self._locate(stop - 1)
        left = stop - start
        blocks = self.blocks
        while left > 0:
            block = blocks[pos]
            lo = max(0, i + 1 - left)
            chunk = block[lo:i + 1]
            chunk.reverse()
            yield from chunk
            left -= len(chunk)
            pos -= 1
            if pos >= 0:
                i = len(blocks[pos]) - 1

    def delete_range(self, start: int, stop: int) -> None:
        """Remove the pairs of ranks start..stop-1 (0 <= start < stop <= size)."""
        if stop - start <= 32:
            for _ in range(stop - start):
                pos, i = self._locate(start)
                del self.blocks[pos][i]
                self._removed_from(pos)
            return
        kept = [pair for block in self.blocks for pair in block]
        del kept[start:stop]
        self._rebuild(kept)

    def _rebuild(self, pairs: list[Pair]) -> None:
        self.blocks = [pairs[i:i + LOAD] for i in range(0, len(pairs), LOAD)]
        self.maxes = [block[-1] for block in self.blocks]
        self.offsets = []
        self.size = len(pairs)

    def __iter__(self) -> Iterator[Pair]:
        for block in self.blocks:
            yield from block

    def copy(self) -> Order:
        dup = Order()
        dup.blocks = [list(block) for block in self.blocks]
        dup.maxes = list(self.maxes)
        dup.size = self.size
        return dup
