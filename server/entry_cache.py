"""Encoded stream entries, kept per storage node and reused by XRANGE, XREVRANGE and XREAD.

A stream's entries are usually read more than once: every XREAD client tailing a stream reads
the same new entries, dashboards page through the same ranges. Turning an entry into RESP is
most of a read's cost in Python (decoding the packed node, formatting the ID and the values), so
each node keeps, in its `memo` slot, the encoding of a contiguous stretch of its entries, and a
read then serves a run of consecutive live entries (`EntryStore.runs`) with one slice.

The memo never needs invalidating: an entry does not change once appended. XDEL and exact
trimming only hide entries, and the runs a read gets skip them; a node that is dropped takes its
memo with it. An entry reply is an array of bulk strings, the same bytes in RESP2 and RESP3.

Memory is bounded by `stream-read-cache-bytes`: when the memos outgrow it, the nodes read least
recently lose theirs first (0 turns the cache off: entries are then encoded for each read).
"""

from __future__ import annotations

import weakref
from array import array
from collections import OrderedDict
from typing import Any

from mypy_extensions import mypyc_attr

from protocol.encoder import ARR_HDR_CACHE
from protocol.reply import Raw
from server.commands.stream_common import entry_template, odd_entry_resp
from streams.storage import Node

_MEMO_OVERHEAD = 160  # the memo's list, bytearray and array headers, its token and LRU slot


@mypyc_attr(native_class=False)  # compiled classes (Node) take no weak references: this one does
class _Token:
    """Held by a node's memo alone, so it dies with the node; the cache's weak reference to it
    (`ref`, the cache's key for the memo) then tells the cache that the memo is gone."""

    __slots__ = ("ref", "__weakref__")
    ref: weakref.ref[_Token]


class EntryCache:
    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.used = 0
        # Memos, least recently read first: the weak reference to each one's token -> [bytes it
        # accounts for, its buffer, its offsets]. A dropped node leaves by itself (see _forget).
        self._lru: OrderedDict[weakref.ref[_Token], list[Any]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._lru)

    def set_budget(self, budget: int) -> None:
        self.budget = budget
        self._evict()

    def reply(self, runs: list[tuple[Node, int, int]], reverse: bool) -> Raw:
        """The entries of `runs` (see EntryStore.runs) as one RESP array."""
        n = 0
        for _node, i, j in runs:
            n += j - i
        parts = [ARR_HDR_CACHE[n] if n < 1024 else b"*%d\r\n" % n]
        append = parts.append
        for node, i, j in runs:
            memo = node.memo
            if memo is None or i < memo[0] or j >= memo[0] + len(memo[2]):
                memo = self._fill(node, i, j)
            base, buf, offs, token = memo
            if reverse:
                for k in range(j - 1 - base, i - 1 - base, -1):
                    append(buf[offs[k]:offs[k + 1]])
            else:
                append(buf[offs[i - base]:offs[j - base]])
            if token is not None:
                self._lru.move_to_end(token.ref)
        return Raw(b"".join(parts))

    def _fill(self, node: Node, i: int, j: int) -> list[Any]:
        """Make node's memo cover entries i..j-1: extend it up to j (through any deleted
        entries in between, so that the runs of one node share one memo), or start a new one at
        i when the read begins before it (or when eviction emptied it)."""
        memo = node.memo
        if memo is not None and memo[2] and memo[0] <= i:
            base, buf, offs, token = memo
            top = base + len(offs) - 1
        else:
            if memo is not None and memo[3] is not None:
                self._drop(memo[3].ref)
            base, top = i, i
            buf = bytearray()
            offs = array("I", [0])
            token = None
        template = entry_template(node.fields)
        ms0, msd, seq = node.ms0, node.msd, node.seq
        for k in range(top, j):
            names, items = node.split_at(k)
            sid = b"%d-%d" % (ms0 + msd[k], seq[k])
            if names is not None:
                buf += template % (len(sid), sid, *items)
            else:
                buf += odd_entry_resp(sid, items)
            offs.append(len(buf))
        size = len(buf) + offs.itemsize * len(offs) + _MEMO_OVERHEAD
        if size > self.budget:  # (0: the cache is off) kept for this read only
            if token is not None:
                self._forget(token.ref)  # the buffer is this read's now: not emptied
                node.memo = None
            return [base, buf, offs, None]
        if token is None:
            token = _Token()
            token.ref = weakref.ref(token, self._forget)
            memo = node.memo = [base, buf, offs, token]
            self._lru[token.ref] = [size, buf, offs]
        else:
            held = self._lru[token.ref]
            self.used -= held[0]
            held[0] = size
        self._lru.move_to_end(token.ref)
        self.used += size
        self._evict()  # never this memo: it is the most recent, and fits the budget alone
        return memo

    def _evict(self) -> None:
        lru = self._lru
        while self.used > self.budget and lru:
            self._drop(next(iter(lru)))

    def _drop(self, ref: weakref.ref[_Token]) -> None:
        # Emptied in place (the cache holds no reference to the node): the node's memo then
        # reads as absent (see _fill), and the memory goes now rather than when the node does.
        held = self._lru.pop(ref, None)
        if held is None:
            return
        size, buf, offs = held
        self.used -= size
        del buf[:]
        del offs[:]

    def _forget(self, ref: weakref.ref[_Token]) -> None:
        # The node is gone (trimmed, deleted, its stream dropped): its memo went with it.
        held = self._lru.pop(ref, None)
        if held is not None:
            self.used -= held[0]
