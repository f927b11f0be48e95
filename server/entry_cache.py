"""Encoded stream entries kept for reads that come back: XRANGE, XREVRANGE and XREAD.

Some ranges are read again and again: every XREAD client tailing a stream reads the same new
entries, dashboards poll the same page. For those, serving entries already encoded beats
encoding them again. A backlog read once from end to end (a batch job, a consumer catching up)
gains nothing from keeping what it read, so the cache only keeps a node's entries from the
second time it is read: the first read encodes them straight to the reply and only notes the
node (its `Run.key`, which no other node ever has).

What is kept per node is each entry's encoding (protocol/stream_resp.py: the one encoder), from
the first entry read up to the last, deleted entries in between included, so that the runs a
read gets (split by deletions, or the tail node growing) share it. It never needs invalidating:
entry k of a node never changes, and a read only asks for live entries.

Memory is bounded by `stream-read-cache-bytes`: the nodes read least recently lose their
entries first (0 turns the cache off). The cache holds nothing of the stream itself, so the
entries of a node that was deleted, trimmed or dropped with its stream stay until they are the
least recently read (they are never served again: no node gets that key again).
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING

from protocol.reply import Raw
from protocol.stream_resp import append_run, reply_end, reply_start

if TYPE_CHECKING:
    from streams.storage import Run

_MEMO_OVERHEAD = 200  # the memo object, its buffer's and offsets' headers, its LRU slot
# Nodes read once that are remembered (their keys only), the oldest forgotten first: a node read
# again soon after is hot (tailing readers, a polled page); one read again only after hundreds
# of others (a second pass over a backlog) would be let go before it is read a third time.
_SEEN_MAX = 256


class _Memo:
    """Entries base..base+len(offs)-2 of one node: entry base+i is buf[offs[i]:offs[i + 1]]."""

    __slots__ = ("base", "buf", "offs", "size")

    def __init__(self, base: int) -> None:
        self.base = base
        self.buf = b""
        self.offs = array("I", [0])
        self.size = _MEMO_OVERHEAD

    def top(self) -> int:
        """The first entry after those held."""
        return self.base + len(self.offs) - 1


class EntryCache:
    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.used = 0
        # Node key -> its memo, least recently read first (a dict keeps insertion order: a memo
        # read is moved to the end by taking it out and putting it back).
        self._lru: dict[int, _Memo] = {}
        # Keys of nodes read once and not kept (yet): a second read keeps them.
        self._seen: dict[int, None] = {}

    def __len__(self) -> int:
        return len(self._lru)

    def set_budget(self, budget: int) -> None:
        self.budget = budget
        self._evict()
        if not budget:
            self._seen.clear()

    def reply(self, runs: list[Run], reverse: bool, prefix: bytes = b"") -> Raw:
        """The entries of `runs` (`Stream.range_runs` / `runs_after`) as one RESP array, after
        `prefix` (see stream_resp.reply_start)."""
        n = 0
        for run in runs:
            n += run.hi - run.lo
        parts = reply_start(n, prefix)
        if not self.budget:
            for run in runs:
                append_run(parts, run, reverse)
            return reply_end(parts)
        lru = self._lru
        for run in runs:
            key = run.key
            memo: _Memo | None = lru.get(key)
            if memo is not None and memo.base <= run.lo and run.hi <= memo.top():
                del lru[key]
                lru[key] = memo
            elif memo is None:
                seen = self._seen
                if key not in seen:
                    if len(seen) >= _SEEN_MAX:
                        del seen[next(iter(seen))]
                    seen[key] = None
                    append_run(parts, run, reverse)
                    continue
                del self._seen[key]
                memo = self._fill(run, memo)
            else:
                memo = self._fill(run, memo)
            if memo is None:  # too big to keep: this read only
                append_run(parts, run, reverse)
                continue
            buf = memo.buf
            offs = memo.offs
            lo = run.lo - memo.base
            hi = run.hi - memo.base
            if reverse:
                for k in range(hi - 1, lo - 1, -1):
                    parts.append(buf[offs[k]:offs[k + 1]])
            else:
                parts.append(buf[offs[lo]:offs[hi]])
        return reply_end(parts)

    def _fill(self, run: Run, memo: _Memo | None) -> _Memo | None:
        """The memo of run's node made to cover the run, and made the most recently read: extended
        up to the run's end (through any deleted entries in between), or started anew at the run
        when it begins before the memo; None when that would not fit in the budget."""
        lo = run.lo
        hi = run.hi
        key = run.key
        if memo is not None:
            top = memo.top()
            if lo < memo.base:
                self._drop(key)
                memo = None
        held = memo is not None
        if memo is None:
            memo = _Memo(lo)
            top = lo
        added: list[bytes] = []
        append_run([], run.span(top, hi), False, added)
        size = memo.size + 4 * len(added)
        for entry in added:
            size += len(entry)
        if size > self.budget:
            if held:
                self._drop(key)
            return None
        offs = memo.offs
        end = len(memo.buf)
        for entry in added:
            end += len(entry)
            offs.append(end)
        memo.buf += b"".join(added)
        self.used += size - memo.size if held else size
        memo.size = size
        self._lru.pop(key, None)
        self._lru[key] = memo
        self._evict()  # never this memo: it is the most recent, and fits the budget alone
        return memo

    def _evict(self) -> None:
        lru = self._lru
        while self.used > self.budget and lru:
            self.used -= lru.pop(next(iter(lru))).size

    def _drop(self, key: int) -> None:
        memo = self._lru.pop(key, None)
        if memo is not None:
            self.used -= memo.size
