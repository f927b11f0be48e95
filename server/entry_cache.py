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

from protocol.encoder import ARR_HDR_CACHE
from protocol.reply import Raw
from server.commands.stream_common import entry_template, odd_entry_resp
from streams.storage import Node

_MEMO_OVERHEAD = 120  # the memo's list, bytearray and array headers, and its LRU slot


class EntryCache:
    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.used = 0
        # Nodes holding a memo, least recently read first -> the bytes their memo accounts for.
        # Weak references: a dropped node leaves by itself (see _forget).
        self._lru: OrderedDict[weakref.ref[Node], int] = OrderedDict()

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
            base, buf, offs, ref = memo
            if reverse:
                for k in range(j - 1 - base, i - 1 - base, -1):
                    append(buf[offs[k]:offs[k + 1]])
            else:
                append(buf[offs[i - base]:offs[j - base]])
            if ref is not None:
                self._lru.move_to_end(ref)
        return Raw(b"".join(parts))

    def _fill(self, node: Node, i: int, j: int) -> list[Any]:
        """Make node's memo cover entries i..j-1: extend it up to j (through any deleted
        entries in between, so that the runs of one node share one memo), or start a new one at
        i when the read begins before it."""
        memo = node.memo
        if memo is not None and memo[0] <= i:
            base, buf, offs, ref = memo
            top = base + len(offs) - 1
        else:
            if memo is not None:
                self._drop(memo[3])
            base, top = i, i
            buf = bytearray()
            offs = array("I", [0])
            ref = None
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
        if not self.budget:
            return [base, buf, offs, None]  # no cache: used for this read only
        size = len(buf) + offs.itemsize * len(offs) + _MEMO_OVERHEAD
        if ref is None:
            ref = weakref.ref(node, self._forget)
            memo = node.memo = [base, buf, offs, ref]
        else:
            self.used -= self._lru[ref]
        self._lru[ref] = size
        self._lru.move_to_end(ref)
        self.used += size
        self._evict()
        return memo if node.memo is not None else [base, buf, offs, None]

    def _evict(self) -> None:
        lru = self._lru
        while self.used > self.budget and lru:
            self._drop(next(iter(lru)))

    def _drop(self, ref: weakref.ref[Node]) -> None:
        size = self._lru.pop(ref, None)
        if size is None:
            return
        self.used -= size
        node = ref()
        if node is not None:
            node.memo = None

    def _forget(self, ref: weakref.ref[Node]) -> None:
        # The node is gone (trimmed, deleted, its stream dropped): its memo went with it.
        size = self._lru.pop(ref, None)
        if size is not None:
            self.used -= size

