"""Consumer groups: the group PEL, consumers and their PELs, and the group commands' logic.

One `PendingEntry` exists per delivered-but-unacknowledged entry; the group PEL and the owning
consumer's PEL both reference that same object (as Redis shares one streamNACK), so ownership
changes and delivery counters are a single update. PELs are `PendingList`s keyed by the int ID
(see pel.py), so they iterate in ID order like Redis's rax; consumers are a SortedDict keyed by
name bytes, which gives Redis's name order for XPENDING and XINFO CONSUMERS.

Methods that need entry data take the `Stream` as an argument; times are passed in as `now_ms`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from heapq import heapify, heappop, heappush
from itertools import islice
from typing import TYPE_CHECKING, Any

from sortedcontainers import SortedDict

from .errors import ENTRIESREAD_NEGATIVE, StreamError
from .ids import MAX_ID
from .pel import PendingIds, PendingList

if TYPE_CHECKING:
    from .storage import Run
    from .stream import Stream

Entry = tuple[int, list[bytes]]
# (id, fields, ms idle before this delivery, deliveries before it): what XREADGROUP CLAIM serves.
ClaimedEntry = tuple[int, list[bytes], int, int]

LLONG_MAX = (1 << 63) - 1
_ID_MASK = (1 << 128) - 1  # a time-index key is delivery_time << 128 | id
# XNACK modes: how each changes the delivery counter of the entries it releases.
NACK_SILENT = 0  # -1: the delivery does not count
NACK_FAIL = 1  # unchanged
NACK_FATAL = 2  # LLONG_MAX: never worth retrying


class PendingEntry:
    """A delivered, not yet acknowledged entry (Redis's streamNACK).

    Records are values: never changed in place, replaced by a new one when a claim, a
    re-delivery or XNACK changes them. So the entries one XREADGROUP delivers together share
    one record (same owner, delivery time and count), which is what keeps a million pending
    entries small. Its ID is the key it is held under in the group's PEL, not kept here. An
    entry released by XNACK has no consumer (it is in no consumer's PEL) and a delivery time
    of 0, as in Redis: it is idle enough for any claim.
    """

    __slots__ = ("consumer", "delivery_time", "delivery_count")

    def __init__(self, consumer: Consumer | None, delivery_time: int,
                 delivery_count: int = 1) -> None:
        self.consumer = consumer
        self.delivery_time = delivery_time
        self.delivery_count = delivery_count


class Consumer:
    """A consumer: `seen_time` is its last attempted interaction, `active_time` its last
    successful read/claim (-1 if never), `pel` the IDs of its own pending entries (their
    records are in the group's PEL)."""

    __slots__ = ("name", "seen_time", "active_time", "pel")

    def __init__(self, name: bytes, now_ms: int) -> None:
        self.name = name
        self.seen_time = now_ms
        self.active_time = -1
        self.pel = PendingIds()


def normalize_entries_read(entries_read: int | None) -> int | None:
    """ENTRIESREAD value: None or -1 means unknown; other negatives are Redis's error."""
    if entries_read is None or entries_read == -1:
        return None
    if entries_read < 0:
        raise StreamError(ENTRIESREAD_NEGATIVE)
    return entries_read


class ConsumerGroup:
    """A consumer group. `entries_read` is None when unknown (Redis's -1 / XINFO null)."""

    __slots__ = ("name", "last_id", "entries_read", "pel", "consumers", "nacked", "by_time")

    def __init__(self, name: bytes, last_id: int, entries_read: int | None = None) -> None:
        self.name = name
        self.last_id = last_id
        self.entries_read = normalize_entries_read(entries_read)
        self.pel = PendingList()  # id -> PendingEntry
        self.consumers: SortedDict = SortedDict()  # name -> Consumer
        # The IDs released by XNACK and not claimed since, oldest release first (Redis's NACK
        # zone at the head of its PEL by time): XREADGROUP CLAIM serves them before any other.
        self.nacked: dict[int, None] = {}
        # Owned pending records by delivery time, for XREADGROUP CLAIM (Redis's pel_by_time): a
        # heap of delivery_time << 128 | id, built at a group's first CLAIM read and kept from
        # then on. A delivery pushes a key and leaves the record's previous one behind: a key
        # is current while its record is pending, owned and delivered at that time.
        self.by_time: list[int] | None = None

    def copy(self) -> ConsumerGroup:
        """An independent deep copy: each pending entry is copied once, and the copy sits in
        both the group's PEL and its consumer's, as the original does."""
        new = ConsumerGroup(self.name, self.last_id, self.entries_read)
        for name, c in self.consumers.items():
            nc = new.consumers[name] = Consumer(name, c.seen_time)
            nc.active_time = c.active_time
        copies: dict[int, PendingEntry] = {}  # id() of a record -> its copy: shared stays shared
        for eid, pe in self.pel.items():
            npe = copies.get(id(pe))
            owner = pe.consumer
            if npe is None:
                npe = copies[id(pe)] = PendingEntry(
                    None if owner is None else new.consumers[owner.name],
                    pe.delivery_time, pe.delivery_count)
            new.pel[eid] = npe
            if owner is not None:
                new.consumers[owner.name].pel.add(eid)
        new.nacked = dict(self.nacked)
        return new

    # --- XGROUP ----------------------------------------------------------------------------

    def set_id(self, last_id: int, entries_read: int | None = None) -> None:
        """XGROUP SETID: like Redis, omitting ENTRIESREAD makes entries_read unknown."""
        self.entries_read = normalize_entries_read(entries_read)
        self.last_id = last_id

    def create_consumer(self, name: bytes, now_ms: int) -> bool:
        """XGROUP CREATECONSUMER: True if created, False if it already existed."""
        if name in self.consumers:
            return False
        self.consumers[name] = Consumer(name, now_ms)
        return True

    def touch_consumer(self, name: bytes, now_ms: int) -> tuple[Consumer, bool]:
        """Look up or create a consumer and set its seen_time, as XREADGROUP, XCLAIM and
        XAUTOCLAIM do first. Returns (consumer, created) — `created` is for the
        "xgroup-createconsumer" keyspace event."""
        consumer = self.consumers.get(name)
        created = consumer is None
        if consumer is None:
            consumer = self.consumers[name] = Consumer(name, now_ms)
        consumer.seen_time = now_ms
        return consumer, created

    def delete_consumer(self, name: bytes) -> int:
        """XGROUP DELCONSUMER: drop the consumer and its pending entries; returns how many it
        had pending (0 if it did not exist)."""
        consumer = self.consumers.pop(name, None)
        if consumer is None:
            return 0
        pel = self.pel
        for eid in consumer.pel:
            del pel[eid]
        return len(consumer.pel)

    # --- reads -----------------------------------------------------------------------------

    def read_new(
        self, stream: Stream, consumer: Consumer, count: int | None, noack: bool, now_ms: int,
    ) -> list[Entry]:
        """XREADGROUP `>`: deliver up to `count` (None/0 = all) entries after `last_id`.

        An empty list means nothing could be served (reply nil or block). `deliver_new` does
        the delivering; this decodes what it delivered.
        """
        runs, _eids = self.deliver_new(stream, consumer, count, noack, now_ms)
        return [entry for run in runs for entry in run.entries()]

    def deliver_new(
        self, stream: Stream, consumer: Consumer, count: int | None, noack: bool, now_ms: int,
    ) -> tuple[list[Run], list[int]]:
        """XREADGROUP `>` as storage runs (`storage.Run`) and the IDs they hold, in order.

        Nothing delivered (both empty) means nil or block. Advances last_id and entries_read
        like streamReplyWithRange, and unless `noack` records each entry in the PEL
        (re-assigning an entry already pending for someone else, possible after SETID, with a
        delivery count reset to 1) and sets the consumer's active_time. A reader that encodes
        the runs itself (the XREADGROUP reply) decodes each entry once, straight to its output.
        """
        # (Entries after last_id that were all deleted: the runs below come back empty.)
        if not stream.length or stream.last_id <= self.last_id:
            return [], []
        if count is not None and count <= 0:
            count = None
        runs = stream.store.runs_from(self.last_id + 1, count)
        out: list[int] = []
        for run in runs:
            out += run.ids()
        if not out:
            return runs, out
        # Every entry is past last_id. entries_read counts them one by one, except where the
        # stream may hide tombstones (then Redis estimates the distance, entry by entry too).
        mdi = stream.max_deleted_id
        tombstones_upto = mdi if stream.range_has_tombstones(mdi, mdi) else -1
        # A group left behind by trimming (its position before the first entry) cannot count
        # on: the entries trimmed unread are not in its counter (Redis 8 estimates instead).
        behind = self.last_id < stream.first_id
        if self.entries_read is not None and not behind and out[0] > tombstones_upto:
            self.entries_read += len(out)
        else:
            for eid in out:
                if self.entries_read is not None and not behind and eid > tombstones_upto:
                    self.entries_read += 1
                elif stream.entries_added:
                    self.entries_read = stream.estimate_distance(eid)
                behind = False
        self.last_id = out[-1]
        if not noack:
            pel = self.pel
            cpel = consumer.pel
            last = pel.last()
            if last is None or out[0] > last:
                # The usual case: nothing delivered is pending yet, and it all goes after
                # what is (the consumer's PEL is part of the group's).
                keys = pel.extend_same(out, PendingEntry(consumer, now_ms, 1))
                cpel.extend_keys(keys, pel.mixed)
                consumer.active_time = now_ms
                if self.by_time is not None:
                    self._index(out, now_ms)
                return runs, out
            delivered = PendingEntry(consumer, now_ms)
            for eid in out:
                pe = pel.get(eid)
                if pe is not None:
                    # Already pending (possible after SETID): re-assigned, delivery count reset.
                    self._disown(eid, pe)
                pel[eid] = delivered
                cpel.add(eid)
            consumer.active_time = now_ms
            if self.by_time is not None:
                self._index(out, now_ms)
        return runs, out

    def peek_history(
        self, stream: Stream, consumer: Consumer, after: int, count: int | None
    ) -> list[tuple[int, list[bytes] | None]]:
        """What `read_history` would return, without counting a delivery: for a reader that
        decides how many of them to take before taking them (MAXSIZE)."""
        out: list[tuple[int, list[bytes] | None]] = []
        if after >= MAX_ID:
            return out
        for eid in consumer.pel.irange(minimum=after + 1):
            if count is not None and 0 < count <= len(out):
                break
            out.append((eid, stream.get(eid)))
        return out

    def read_history(
        self, stream: Stream, consumer: Consumer, after: int, count: int | None, now_ms: int
    ) -> list[tuple[int, list[bytes] | None]]:
        """XREADGROUP with an explicit ID: the consumer's own pending entries with ID > after.

        Entries no longer in the stream come back as (id, None) (a nil fields array) and keep
        their counters; the others get delivery_count += 1 and delivery_time = now_ms.
        The reply always includes this stream, even when the list is empty.
        """
        if after >= MAX_ID:
            return []
        if count is not None and count <= 0:
            count = None
        pel = self.pel
        out: list[tuple[int, list[bytes] | None]] = []
        by_time = self.by_time
        for eid in consumer.pel.irange(minimum=after + 1):
            if count is not None and len(out) >= count:
                break
            fields = stream.get(eid)
            if fields is not None:
                pel[eid] = PendingEntry(consumer, now_ms, pel[eid].delivery_count + 1)
                if by_time is not None:
                    heappush(by_time, now_ms << 128 | eid)
            out.append((eid, fields))
        if by_time is not None:
            self._compact()
        return out

    # --- XACK / XPENDING -------------------------------------------------------------------

    def ack(self, ids: list[int]) -> int:
        """XACK: remove the IDs from the PELs; returns how many were pending."""
        acked: list[PendingEntry] = self.pel.pop_many(ids)
        if acked:
            nacked = self.nacked
            if nacked:
                for eid in ids:
                    nacked.pop(eid, None)
            # Usually one consumer acks its own batch. A consumer's PEL holds exactly the group's
            # entries it owns, so popping every ID from the first owner's takes just its share.
            owner = acked[0].consumer
            if owner is None or owner.pel.discard_many(ids) != len(acked):
                # Others' entries too (or released ones, which no consumer holds): each other
                # owner's PEL gives up the IDs it holds.
                done: list[Consumer] = [] if owner is None else [owner]
                for pe in acked:
                    c = pe.consumer
                    if c is not None and all(c is not d for d in done):
                        done.append(c)
                        c.pel.discard_many(ids)
            if self.by_time and not self.pel:
                self.by_time = []  # every key outdated
        return len(acked)

    def pending_summary(self) -> tuple[int, int | None, int | None, list[tuple[bytes, int]]]:
        """XPENDING key group: (count, smallest ID, greatest ID, [(consumer, count), ...]).

        With an empty PEL the IDs are None (nil replies) and the list is empty (Redis replies a
        null array there). Consumers without pending entries are left out; name order.
        """
        pel = self.pel
        if not pel:
            return 0, None, None, []
        per = [(name, len(c.pel)) for name, c in self.consumers.items() if c.pel]
        return len(pel), pel.first(), pel.last(), per

    def pending_range(
        self,
        start: int,
        end: int,
        count: int,
        now_ms: int,
        consumer: bytes | None = None,
        min_idle: int = 0,
    ) -> list[tuple[int, bytes, int, int]]:
        """XPENDING key group [IDLE min] start end count [consumer].

        Rows (id, consumer name, idle ms (>= 0), delivery_count) for pending IDs in
        [start, end], at most `count` (<= 0 gives nothing), skipping entries idle less than
        `min_idle` when it is non-zero. An unknown consumer gives [].
        """
        pel = self.pel
        ids: PendingIds | PendingList = pel
        if consumer is not None:
            c = self.consumers.get(consumer)
            if c is None:
                return []
            ids = c.pel
        out: list[tuple[int, bytes, int, int]] = []
        if count <= 0 or start > end:
            return out
        for eid in ids.irange(start, end):
            pe = pel[eid]
            idle = now_ms - pe.delivery_time
            if min_idle and idle < min_idle:
                continue
            owner = pe.consumer
            # A released entry has no owner: Redis shows an empty consumer name.
            out.append((eid, b"" if owner is None else owner.name, max(idle, 0), pe.delivery_count))
            if len(out) >= count:
                break
        return out

    # --- XCLAIM / XAUTOCLAIM ---------------------------------------------------------------

    def _drop(self, eid: int) -> None:
        self._disown(eid, self.pel.pop(eid))

    def _disown(self, eid: int, pe: PendingEntry) -> None:
        """Take eid out of its owner's PEL, or out of the released IDs when it has no owner."""
        owner = pe.consumer
        if owner is not None:
            owner.pel.discard(eid)
        else:
            self.nacked.pop(eid, None)

    def claim(
        self,
        stream: Stream,
        consumer: Consumer,
        ids: Iterable[int],
        min_idle: int,
        now_ms: int,
        *,
        delivery_time: int | None = None,
        retry_count: int | None = None,
        force: bool = False,
        justid: bool = False,
        last_id: int | None = None,
        dropped: list[int] | None = None,
    ) -> list[int] | list[Entry]:
        """XCLAIM, given a consumer from `touch_consumer`.

        `delivery_time` is the new last-delivery time: TIME ms as given, IDLE ms as
        now_ms - ms (out of [0, now_ms] it becomes now_ms; None = now_ms). `retry_count` is
        RETRYCOUNT; `last_id` is LASTID (raises group last_id if greater).
        Pending IDs whose entry left the stream are dropped from the PEL and not returned
        (and appended to `dropped` when given);
        FORCE creates PEL records for entries that exist but are not pending. The delivery
        count is incremented unless JUSTID or RETRYCOUNT. Returns IDs (justid) or entries.
        """
        if last_id is not None and last_id > self.last_id:
            self.last_id = last_id
        if min_idle < 0:
            min_idle = 0
        if delivery_time is None or delivery_time < 0 or delivery_time > now_ms:
            delivery_time = now_ms
        out: list[Any] = []
        pel = self.pel
        for eid in ids:
            pe = pel.get(eid)
            fields = stream.get(eid)
            if fields is None:
                if pe is not None:
                    self._drop(eid)
                    if dropped is not None:
                        dropped.append(eid)
                continue
            if pe is None:
                if not force:
                    continue
                # Created pending for `consumer` at once: no idle time to respect, no previous
                # owner to take it from (Redis creates it ownerless and assigns it below).
                delivered = 1
                consumer.pel.add(eid)
            elif min_idle and now_ms - pe.delivery_time < min_idle:
                continue
            else:
                delivered = pe.delivery_count
                if pe.consumer is not consumer:
                    self._disown(eid, pe)
                    consumer.pel.add(eid)
            if retry_count is not None and retry_count >= 0:
                delivered = retry_count
            elif not justid and delivered < LLONG_MAX:
                delivered += 1
            pel[eid] = PendingEntry(consumer, delivery_time, delivered)
            if self.by_time is not None:
                heappush(self.by_time, delivery_time << 128 | eid)
            out.append(eid if justid else (eid, fields))
            consumer.active_time = now_ms
        if self.by_time is not None:
            self._compact()
        return out

    def autoclaim(
        self,
        stream: Stream,
        consumer: Consumer,
        start: int,
        min_idle: int,
        now_ms: int,
        count: int = 100,
        justid: bool = False,
    ) -> tuple[int, list[int] | list[Entry], list[int]]:
        """XAUTOCLAIM, given a consumer from `touch_consumer`.

        Scans the group PEL from `start` (inclusive), claiming entries idle >= min_idle, up to
        `count` results (deleted entries count too) and count*10 PEL entries examined.
        Returns (next cursor ID, 0 when the scan reached the end; claimed IDs or entries;
        IDs that were pending but no longer exist in the stream — now removed from the PEL).
        COUNT must be validated (1 ..) by the command layer ("ERR COUNT must be > 0").
        """
        if min_idle < 0:
            min_idle = 0
        attempts = count * 10
        pel = self.pel
        claimed: list[Any] = []
        deleted: list[int] = []
        cursor = 0
        for eid in pel.irange(minimum=start):
            if attempts <= 0 or count <= 0:
                cursor = eid
                break
            attempts -= 1
            pe = pel[eid]
            fields = stream.get(eid)
            if fields is None:
                deleted.append(eid)  # dropped after the scan: a PEL must not change under it
                count -= 1
                continue
            if min_idle and now_ms - pe.delivery_time < min_idle:
                continue
            if pe.consumer is not consumer:
                self._disown(eid, pe)
                consumer.pel.add(eid)
            delivered = pe.delivery_count
            if not justid and delivered < LLONG_MAX:
                delivered += 1
            pel[eid] = PendingEntry(consumer, now_ms, delivered)
            if self.by_time is not None:
                heappush(self.by_time, now_ms << 128 | eid)
            claimed.append(eid if justid else (eid, fields))
            count -= 1
            consumer.active_time = now_ms
        for eid in deleted:
            self._drop(eid)
        if self.by_time is not None:
            self._compact()
        return cursor, claimed, deleted

    # --- XREADGROUP CLAIM / XNACK ----------------------------------------------------------

    def claim_idle(
        self, stream: Stream, consumer: Consumer, min_idle: int, count: int | None, now_ms: int,
        dropped: list[int],
    ) -> list[ClaimedEntry]:
        """XREADGROUP CLAIM's first phase: give `consumer` up to `count` (None = all) pending
        entries idle at least `min_idle` ms: the released ones (XNACK) first, in release order,
        then the others longest idle first (ties in ID order).

        Each comes with its idle time and delivery count from before this delivery, which
        takes it over (owner, delivery time now, count + 1). Records whose entry left the
        stream are dropped from the PEL (their IDs appended to `dropped`) and not served.
        """
        out: list[ClaimedEntry] = []
        pel = self.pel
        if not pel or (count is not None and count <= 0):
            return out
        served: list[int] = []
        nacked = self.nacked
        while nacked and (count is None or len(out) < count):
            # Serving (or dropping) a released record takes it out of `nacked`.
            self._serve_claim(stream, consumer, next(iter(nacked)), now_ms, out, served, dropped)
        heap = self._time_index()
        cutoff = now_ms - min_idle
        done: set[int] = set(served)
        while heap and (count is None or len(out) < count):
            key = heap[0]
            t = key >> 128
            if t > cutoff:
                break
            heappop(heap)
            eid = key & _ID_MASK
            pe = pel.get(eid)
            if pe is None or pe.consumer is None or pe.delivery_time != t or eid in done:
                continue  # an outdated key (the record moved on), or one served just now
            done.add(eid)
            self._serve_claim(stream, consumer, eid, now_ms, out, served, dropped)
        if out:
            consumer.active_time = now_ms
            self._index(served, now_ms)
        return out

    def _serve_claim(self, stream: Stream, consumer: Consumer, eid: int, now_ms: int,
                     out: list[ClaimedEntry], served: list[int], dropped: list[int]) -> None:
        fields = stream.get(eid)
        if fields is None:
            self._drop(eid)
            dropped.append(eid)
            return
        pe = self.pel[eid]
        before = pe.delivery_count
        idle = now_ms - pe.delivery_time
        if pe.consumer is not consumer:
            self._disown(eid, pe)
            consumer.pel.add(eid)
        self.pel[eid] = PendingEntry(consumer, now_ms, before + 1 if before < LLONG_MAX else before)
        out.append((eid, fields, idle if idle > 0 else 0, before))
        served.append(eid)

    def _time_index(self) -> list[int]:
        """The delivery-time heap, built now if the group has none, rebuilt when outdated keys
        outnumber the current ones."""
        heap = self.by_time
        if heap is None or len(heap) > 2 * len(self.pel) + 64:
            heap = [pe.delivery_time << 128 | eid for eid, pe in self.pel.items()
                    if pe.consumer is not None]
            heapify(heap)
            self.by_time = heap
        return heap

    def _index(self, eids: list[int], now_ms: int) -> None:
        heap = self.by_time
        assert heap is not None
        t = now_ms << 128
        for eid in eids:
            heappush(heap, t | eid)
        self._compact()

    def _compact(self) -> None:
        """Rebuild the time index once its outdated keys outnumber the current ones, so that a
        group read with CLAIM once and then only plain keeps an index its PEL's size."""
        heap = self.by_time
        if heap is not None and len(heap) > 2 * len(self.pel) + 64:
            self.by_time = None
            self._time_index()

    def next_claimable(self, min_idle: int) -> int | None:
        """When the first pending entry becomes idle for `min_idle` ms (a past time if one
        already is), or None with nothing pending: when to re-run a blocked CLAIM reader."""
        if self.nacked:
            return 0
        heap = self._time_index()
        pel = self.pel
        while heap:
            key = heap[0]
            pe = pel.get(key & _ID_MASK)
            if pe is not None and pe.consumer is not None and pe.delivery_time == key >> 128:
                return (key >> 128) + min_idle
            heappop(heap)
        return None

    def nack(
        self, stream: Stream, ids: Sequence[int], mode: int, retry_count: int | None, force: bool,
    ) -> list[int]:
        """XNACK: release pending entries to the group, in the order given; returns the IDs
        released (repeats included), for the reply's count and the effects.

        A released entry leaves its owner's PEL and stays in the group's, ownerless, with
        delivery time 0, at the end of the released ones (a repeat release moves it there).
        Its delivery count goes down by one (SILENT, not below 0), stays (FAIL) or becomes
        LLONG_MAX (FATAL); RETRYCOUNT sets it instead. FORCE first creates a record (count 1)
        for an ID that is not pending but is in the stream; other unknown IDs are skipped.
        """
        pel = self.pel
        nacked = self.nacked
        out: list[int] = []
        for eid in ids:
            pe = pel.get(eid)
            if pe is None:
                if not force or not stream.contains(eid):
                    continue
                delivered = 1
            else:
                self._disown(eid, pe)
                delivered = pe.delivery_count
            if retry_count is not None:
                delivered = retry_count
            elif mode == NACK_SILENT:
                if delivered > 0:
                    delivered -= 1
            elif mode == NACK_FATAL:
                delivered = LLONG_MAX
            pel[eid] = PendingEntry(None, 0, delivered)
            nacked[eid] = None
            out.append(eid)
        return out

    # --- XINFO -----------------------------------------------------------------------------

    def lag(self, stream: Stream) -> int | None:
        """Entries not yet delivered to the group, or None when it cannot be known (XINFO)."""
        # Redis 8's streamReplyWithCGLag, branch by branch (8.0 added the emptied-stream branch).
        if not stream.entries_added or not len(stream):
            return 0  # never written, or every entry deleted since
        if self.last_id < stream.first_id and stream.max_deleted_id < stream.first_id:
            return len(stream)  # the group and every deletion are behind the first entry
        if self.entries_read is not None and not stream.range_has_tombstones(self.last_id, None):
            return stream.entries_added - self.entries_read
        er = stream.estimate_distance(self.last_id)
        return None if er is None else stream.entries_added - er

    def info(self, stream: Stream) -> dict[str, Any]:
        """XINFO GROUPS row (entries-read / lag None = nil)."""
        return {
            "name": self.name,
            "consumers": len(self.consumers),
            "pending": len(self.pel),
            "last-delivered-id": self.last_id,
            "entries-read": self.entries_read,
            "lag": self.lag(stream),
        }

    def consumers_info(self, now_ms: int) -> list[dict[str, Any]]:
        """XINFO CONSUMERS rows, name order: idle = since seen_time, inactive = since
        active_time (-1 if never active)."""
        rows = []
        for c in self.consumers.values():
            rows.append({
                "name": c.name,
                "pending": len(c.pel),
                "idle": max(now_ms - c.seen_time, 0),
                "inactive": now_ms - c.active_time if c.active_time != -1 else -1,
            })
        return rows

    def info_full(self, stream: Stream, count: int) -> dict[str, Any]:
        """The group part of XINFO STREAM FULL; count 0 = all PEL rows."""
        pel = self.pel

        def head(ids: PendingIds | PendingList) -> list[tuple[int, PendingEntry]]:
            return [(eid, pel[eid]) for eid in islice(ids, count or None)]

        return {
            "name": self.name,
            "last-delivered-id": self.last_id,
            "entries-read": self.entries_read,
            "lag": self.lag(stream),
            "pel-count": len(self.pel),
            "pending": [
                (eid, b"" if pe.consumer is None else pe.consumer.name, pe.delivery_time,
                 pe.delivery_count) for eid, pe in head(self.pel)
            ],
            "consumers": [
                {
                    "name": c.name,
                    "seen-time": c.seen_time,
                    "active-time": c.active_time,
                    "pel-count": len(c.pel),
                    "pending": [(eid, pe.delivery_time, pe.delivery_count) for eid, pe in head(c.pel)],
                }
                for c in self.consumers.values()
            ],
            "nacked-count": len(self.nacked),
        }
