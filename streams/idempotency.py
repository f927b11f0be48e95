"""Idempotent producers (XADD IDMP / IDMPAUTO): which (producer, idempotent ID) pairs a stream
remembers, and the entry each one added.

Each producer keeps its pairs in insertion order, which is also entry-ID order (IDMP is only
allowed with auto-generated IDs) and so time order: the oldest pair is always at the front, and
both limits — IDMP-MAXSIZE pairs per producer, IDMP-DURATION seconds — only ever drop from the
front. A lookup or a record is O(1) plus the pairs it drops.

A pair's age is read from its entry ID's milliseconds rather than from a separate clock reading:
the entry was added at that time, and a replayed or rewritten log that recreates the pair with
its entry ID recreates its expiry exactly.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Sequence

DEFAULT_DURATION = 100
DEFAULT_MAXSIZE = 100
MAX_DURATION = 86400
MAX_MAXSIZE = 10000


class Producer:
    """One producer's remembered idempotent IDs, oldest first."""

    __slots__ = ("ids", "order")

    def __init__(self) -> None:
        self.ids: dict[bytes, int] = {}
        self.order: deque[bytes] = deque()


def auto_iid(fields: Sequence[bytes]) -> bytes:
    """IDMPAUTO's idempotent ID: a digest of the field-value pairs, whatever their order.

    The pairs are sorted before hashing, so the same content sent with its fields in another
    order is the same message; each part is length-prefixed so that no two different entries
    hash the same bytes. The raw 16-byte digest is the ID (IDs are binary-safe): half the memory
    of its hex form.
    """
    if len(fields) == 2:  # the usual single pair: nothing to sort
        field, value = fields[0], fields[1]
        data = b"%d:%b%d:%b" % (len(field), field, len(value), value)
    else:
        data = b"".join([b"%d:%b%d:%b" % (len(field), field, len(value), value)
                         for field, value in sorted(zip(fields[0::2], fields[1::2], strict=True))])
    return hashlib.blake2b(data, digest_size=16).digest()


_FIRST_SWEEP = 64


class Idempotency:
    """A stream's IDMP state: its settings, the producers' pairs and the lifetime counters that
    XINFO STREAM reports (idmp-duration, idmp-maxsize, pids-tracked, iids-tracked, iids-added,
    iids-duplicates)."""

    __slots__ = ("duration", "maxsize", "producers", "tracked", "added", "duplicates", "sweep_at")

    def __init__(self, duration: int = DEFAULT_DURATION, maxsize: int = DEFAULT_MAXSIZE) -> None:
        self.duration = duration
        self.maxsize = maxsize
        self.producers: dict[bytes, Producer] = {}
        self.tracked = 0
        self.added = 0
        self.duplicates = 0
        # Producers are only expired when looked up, so ones that stopped sending would stay:
        # each time their number doubles, every producer is swept (O(1) per new producer).
        self.sweep_at = _FIRST_SWEEP

    def copy(self) -> Idempotency:
        new = Idempotency(self.duration, self.maxsize)
        for pid, p in self.producers.items():
            q = Producer()
            q.ids = dict(p.ids)
            q.order = deque(p.order)
            new.producers[pid] = q
        new.tracked = self.tracked
        new.added = self.added
        new.duplicates = self.duplicates
        return new

    def configure(self, duration: int | None, maxsize: int | None) -> None:
        """XCFGSET: a changed setting forgets every pair (the counters stay); the same value
        again changes nothing."""
        changed = False
        if duration is not None and duration != self.duration:
            self.duration = duration
            changed = True
        if maxsize is not None and maxsize != self.maxsize:
            self.maxsize = maxsize
            changed = True
        if changed:
            self.producers = {}
            self.tracked = 0

    def _expire(self, pid: bytes, p: Producer, now_ms: int) -> None:
        horizon = now_ms - self.duration * 1000
        order = p.order
        ids = p.ids
        while order:
            iid = order[0]
            if ids[iid] >> 64 > horizon:
                break
            order.popleft()
            del ids[iid]
            self.tracked -= 1
        if not order:
            del self.producers[pid]

    def find(self, pid: bytes, iid: bytes, now_ms: int) -> int | None:
        """The entry ID already added for (pid, iid), counted as a duplicate; None if the pair
        is not (or no longer) remembered."""
        p = self.producers.get(pid)
        if p is None:
            return None
        self._expire(pid, p, now_ms)
        eid = p.ids.get(iid)
        if eid is not None:
            self.duplicates += 1
        return eid

    def record(self, pid: bytes, iid: bytes, eid: int) -> None:
        """Remember that (pid, iid) added entry eid, dropping the oldest pair past IDMP-MAXSIZE
        (expired pairs go when the producer is next looked up)."""
        p = self.producers.get(pid)
        if p is None:
            if len(self.producers) >= self.sweep_at:
                self.expire_all(eid >> 64)  # the entry was just added: its time is now
                self.sweep_at = max(_FIRST_SWEEP, 2 * len(self.producers))
            p = self.producers[pid] = Producer()
        p.ids[iid] = eid
        p.order.append(iid)
        self.tracked += 1
        self.added += 1
        while len(p.order) > self.maxsize:
            del p.ids[p.order.popleft()]
            self.tracked -= 1

    def recorded(self, pid: bytes, iid: bytes, now_ms: int) -> int | None:
        """The entry ID remembered for (pid, iid), without counting a duplicate."""
        p = self.producers.get(pid)
        if p is None:
            return None
        self._expire(pid, p, now_ms)
        return p.ids.get(iid)

    def expire_all(self, now_ms: int) -> None:
        """Drop every expired pair (before reporting the counts)."""
        for pid, p in list(self.producers.items()):
            self._expire(pid, p, now_ms)

    def pairs(self, now_ms: int) -> list[tuple[bytes, bytes, int]]:
        """(pid, iid, entry ID) of every pair still remembered at now_ms: producers in byte
        order (Redis keeps them in a rax), each producer's pairs oldest first."""
        horizon = now_ms - self.duration * 1000
        out: list[tuple[bytes, bytes, int]] = []
        for pid in sorted(self.producers):
            p = self.producers[pid]
            ids = p.ids
            for iid in p.order:
                eid = ids[iid]
                if eid >> 64 > horizon:
                    out.append((pid, iid, eid))
        return out
