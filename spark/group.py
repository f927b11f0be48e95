"""Consumer-group mode (options `group`, `consumer`): the query is a member of a consumer group.

Planning a micro-batch claims entries for the query's consumer with XREADGROUP, so XPENDING and
XINFO GROUPS show its progress and other members of the group get other entries. The batch's
offsets are still ID ranges; a task reads its range with XRANGE and keeps the entries pending for
this consumer (XPENDING ... consumer), so a retried task or a batch replayed after a restart reads
the same entries. When Spark commits a batch the source XACKs its entries.

Delivery is at-least-once: Spark commits batch N to the source (`commit`) only when it plans batch
N+1, so after a crash the entries of the last batch are still pending and are read again; and an
entry claimed from us by another member (XCLAIM/XAUTOCLAIM) is processed by that member too.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import redis

from spark import client
from spark.offsets import ZERO, StreamId, decode_offset, encode_offset, split_range
from spark.options import resolve_bound
from spark.reader import DataLossError, RangePartition, ReadConfig, resolve_keys
from spark.schema import entries_to_batch
from spark.stream_reader import StreamReader

log = logging.getLogger("rivulet.spark")


class GroupPartition(RangePartition):
    def __init__(self, stream: str, start: StreamId, end: StreamId, group: str, consumer: str) -> None:
        super().__init__(stream, start, end, None)
        self.group, self.consumer = group, consumer


def pending_ids(r: redis.Redis, key: str, group: str, consumer: str, start: StreamId,
                end: StreamId | str, limit: int | None = None) -> list[StreamId]:
    """IDs pending for `consumer` with start < ID <= end, oldest first (XPENDING, paged)."""
    out: list[StreamId] = []
    cursor = start.successor()
    page_size = 1000
    while True:
        want = page_size if limit is None else min(page_size, limit - len(out))
        if want <= 0:
            return out
        page = r.xpending_range(key, group, min=str(cursor), max=str(end), count=want, consumername=consumer)
        ids = [StreamId.parse(p["message_id"]) for p in page]
        out.extend(ids)
        if len(ids) < want:
            return out
        cursor = ids[-1].successor()


class GroupStreamReader(StreamReader):
    @property
    def group(self) -> str:
        assert self.opts.group is not None
        return self.opts.group

    @property
    def consumer(self) -> str:
        assert self.opts.consumer is not None
        return self.opts.consumer

    def _ensure_group(self, r: redis.Redis, key: str) -> None:
        bound = resolve_bound(self.opts.start_for(key))
        start = "0" if bound == "earliest" else "$" if bound == "latest" else str(bound)
        try:
            r.xgroup_create(key, self.group, id=start, mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    def _group_position(self, r: redis.Redis, key: str) -> StreamId:
        """Where this consumer stands: before its oldest pending entry, else the group's cursor."""
        self._ensure_group(r, key)
        pending = pending_ids(r, key, self.group, self.consumer, ZERO, "+", limit=1)
        if pending:
            return pending[0].predecessor()
        for info in r.xinfo_groups(key):
            if info["name"] == self.group:
                return StreamId.parse(info["last-delivered-id"])
        return ZERO

    def initialOffset(self) -> dict:
        r = self._r()
        return encode_offset({key: self._group_position(r, key) for key in resolve_keys(r, self.opts)})

    def _ack_through(self, r: redis.Redis, key: str, end: StreamId) -> int:
        acked = 0
        while True:
            ids = pending_ids(r, key, self.group, self.consumer, ZERO, end, limit=1000)
            if not ids:
                return acked
            acked += r.xack(key, self.group, *[str(i) for i in ids])
            if len(ids) < 1000:
                return acked

    def latestOffset(self, start: dict, limit: Any) -> dict:
        from pyspark.sql.streaming.datasource import ReadMaxRows

        r = self._r()
        positions = decode_offset(start)
        if self.opts.pattern:
            for key in resolve_keys(r, self.opts):
                if key not in positions:
                    positions[key] = self._group_position(r, key)
        budget = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        ends = dict(positions)
        for key in sorted(positions):
            pos = positions[key]
            # Everything up to `start` belongs to committed batches: make sure it is acked (a crash
            # may have come between Spark's commit and ours).
            self._ack_through(r, key, pos)
            target = None
            if self._target is not None:
                cap = self._target.get(key)
                if cap is None:
                    continue
                target = cap[0]
            # Entries already delivered to us but in no batch yet (e.g. claimed before a crash).
            claimed = pending_ids(r, key, self.group, self.consumer, pos, target or "+", limit=budget)
            if budget is not None:
                budget -= len(claimed)
            new: list[StreamId] = []
            if budget is None or budget > 0:
                new = self._claim(r, key, budget, target)
                if budget is not None:
                    budget -= len(new)
            newest = max(claimed + new, default=None)
            if newest is not None and newest > pos:
                ends[key] = newest if target is None else min(newest, target)
        return encode_offset(ends)

    def _claim(self, r: redis.Redis, key: str, budget: int | None, target: StreamId | None) -> list[StreamId]:
        """XREADGROUP new entries for our consumer (fields are dropped: the tasks read them)."""
        count = budget if budget is not None else 10_000
        out: list[StreamId] = []
        while True:
            reply = r.xreadgroup(self.group, self.consumer, {key: ">"}, count=count)
            ids = [StreamId.parse(entry_id) for _, entries in reply or [] for entry_id, _ in entries]
            out.extend(ids)
            # Without a limit, keep claiming until the stream is drained, past the target, or a
            # generous cap (a constantly fed stream would otherwise never end a trigger).
            if (budget is not None or len(ids) < count or len(out) >= 100_000
                    or (target is not None and ids and ids[-1] >= target)):
                return out

    def partitions(self, start: dict, end: dict) -> list[RangePartition]:
        begin = decode_offset(start)
        parts: list[RangePartition] = []
        for key, stop in sorted(decode_offset(end).items()):
            for a, b in split_range(begin.get(key, ZERO), stop, self.opts.partitions_per_stream):
                parts.append(GroupPartition(key, a, b, self.group, self.consumer))
        return parts

    def commit(self, end: dict) -> None:
        r = self._r()
        for key, pos in decode_offset(end).items():
            self._ack_through(r, key, pos)

    def read(self, partition: RangePartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, GroupPartition)
        return read_group_partition(self.cfg, partition)


def read_group_partition(cfg: ReadConfig, part: GroupPartition) -> Iterator[pa.RecordBatch]:
    start, end = StreamId.parse(part.start), StreamId.parse(part.end)
    r = client.connect(cfg.endpoint)
    try:
        mine = set(pending_ids(r, part.stream, part.group, part.consumer, start, end))
        seen = 0
        for page in client.xrange_pages(r, part.stream, start, end, cfg.batch_size):
            kept = [entry for entry in page if StreamId.parse(entry[0]) in mine]
            seen += len(kept)
            if kept:
                yield entries_to_batch(part.stream, kept, cfg.columns, cfg.arrow_schema, cfg.failfast)
        if seen < len(mine):
            # Pending for us but gone from the stream: trimmed or XDELed before we read them.
            message = (
                f"redis_streams: data loss in stream {part.stream!r}: {len(mine) - seen} entries "
                f"pending for consumer {part.consumer!r} of group {part.group!r} in ({start}, {end}] "
                "were removed from the stream before the query read them. Set failOnDataLoss=false "
                "to log this and continue."
            )
            if cfg.fail_on_data_loss:
                raise DataLossError(message)
            log.warning(message)
    finally:
        r.close()
