"""Streaming reads (`spark.readStream`): per-stream offsets in the checkpoint, admission control.

An offset is {"streams": {key: last-covered-ID}}. Batch N reads (offset N-1, offset N] for every
stream, so a restart resumes exactly after the last committed entry and a replayed batch reads
the same entries. A stream first seen (pattern discovery) or reset (deleted and re-created) in a
batch also records where its range starts under "discovered", so planning that batch again after
a restart gives the same ranges.
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from spark import client
from spark.offsets import ZERO, StreamId, decode_added, decode_offset, encode_offset
from spark.options import ReadOptions
from spark.reader import (
    DataLossError,
    RangePartition,
    ReadConfig,
    check_data_loss,
    plan_ranges,
    read_partition,
    resolve_keys,
    resolve_start,
)

log = logging.getLogger("rivulet.spark")


class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, opts: ReadOptions, cfg: ReadConfig) -> None:
        self.opts = opts
        self.cfg = cfg
        self._redis: Any = None
        self._master_redis: Any = None
        # Set by prepareForTriggerAvailableNow: the heads at query start, never read past.
        self._target: dict[str, client.Position] | None = None

    # -- driver side ------------------------------------------------------------------------

    def _r(self) -> Any:
        # The driver-side reader lives for the whole query in one Python process: keep one
        # connection instead of reconnecting on every trigger. With Sentinel addressing its calls
        # wait out a failover; with readFrom=replica it reads a replica, like the tasks.
        if self._redis is None:
            self._redis = client.connect(self.opts.endpoint, replica=self.opts.read_from == "replica")
        return self._redis

    def _master(self) -> Any:
        if self.opts.read_from != "replica":
            return self._r()
        if self._master_redis is None:
            self._master_redis = client.connect(self.opts.endpoint)
        return self._master_redis

    def initialOffset(self) -> dict:
        r = self._r()
        positions: dict[str, StreamId] = {}
        added: dict[str, int | None] = {}
        for key in resolve_keys(r, self.opts):
            positions[key], added[key] = resolve_start(r, self.opts, key)
        return encode_offset(positions, added)

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.opts.max_entries_per_trigger:
            return ReadMaxRows(self.opts.max_entries_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        r = self._r()
        self._target = {}
        for key in resolve_keys(r, self.opts):
            state = client.stream_state(r, key)
            if state is not None and state.last_entry is not None:
                self._target[key] = (state.last_entry, state.count_up_to_head())

    def _heads(self, positions: dict[str, StreamId], added: dict[str, int | None]
               ) -> dict[str, client.Position | None]:
        """Each stream's newest entry and its count, from one atomic XINFO STREAM per stream.

        The same reply tells whether entries after the query's position were trimmed: checking
        here fails the query at planning time, instead of after Spark retried a task 4 times.
        """
        r = self._r()
        heads: dict[str, client.Position | None] = {}
        for key in sorted(positions):
            state = client.stream_state(r, key)
            if state is not None and state.last_entry is not None:
                check_data_loss(state, key, positions[key], state.last_entry, added.get(key),
                                self.opts.fail_on_data_loss)
            if state is None or state.last_entry is None:
                heads[key] = None
            else:
                heads[key] = (state.last_entry, state.count_up_to_head())
            if self._target is not None:
                cap = self._target.get(key)
                head = heads[key]
                if cap is None or head is None:
                    heads[key] = None
                elif cap[0] < head[0]:
                    heads[key] = cap
        return heads

    def _positions(self, start: dict) -> tuple[dict[str, StreamId], dict[str, int | None], dict[str, StreamId]]:
        """The start of every stream this batch covers, their counts, and the streams not in `start`."""
        r = self._r()
        positions = decode_offset(start)
        added = decode_added(start)
        discovered: dict[str, StreamId] = {}
        if self.opts.pattern:
            for key in resolve_keys(r, self.opts):
                if key not in positions:
                    # Created after the query started: read it from its first entry, so
                    # nothing written before discovery is missed.
                    discovered[key], added[key] = client.earliest_position(r, key)
        for key, pos in positions.items():
            state = client.stream_state(r, key)
            if state is not None and state.last_generated < pos and self.opts.read_from == "replica":
                # A replica behind the query's position (a different one than last trigger's):
                # only the master tells a lagging copy from a stream that went backwards.
                state = client.stream_state(self._master(), key)
            if state is not None and state.last_generated < pos:
                # IDs went backwards: the key was deleted and re-created (or a failover's new
                # master had not received the newest entries). Its new entries lie below our
                # position and would never be read.
                message = (
                    f"redis_streams: stream {key!r} was deleted and re-created, or lost entries in "
                    f"a failover (its last generated ID {state.last_generated} is below the "
                    f"query's position {pos})"
                )
                if self.opts.fail_on_data_loss:
                    raise DataLossError(message + "; set failOnDataLoss=false to read it from the start")
                log.warning("%s: reading it again from its first entry", message)
                discovered[key], added[key] = client.earliest_position(r, key)
        positions.update(discovered)
        return positions, added, discovered

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        positions, added, discovered = self._positions(start)
        ends = dict(positions)
        end_added = dict(added)
        for key, head in self._heads(positions, added).items():
            if head is not None and head[0] > positions[key]:
                ends[key], end_added[key] = head
        if isinstance(limit, ReadMaxRows):
            ends, end_added = self._cap(positions, added, ends, end_added, limit.max_rows)
        offset = encode_offset(ends, end_added)
        if discovered:
            offset["discovered"] = {key: str(pos) for key, pos in sorted(discovered.items())}
            counts = {key: added[key] for key in discovered if added.get(key) is not None}
            if counts:
                offset["discoveredAdded"] = counts
        return offset

    def _cap(self, positions: dict[str, StreamId], added: dict[str, int | None], ends: dict[str, StreamId],
             end_added: dict[str, int | None], budget: int
             ) -> tuple[dict[str, StreamId], dict[str, int | None]]:
        """Keep the `budget` oldest entries across all streams (merged by ID, i.e. by time).

        This needs the IDs of up to `budget` entries per stream, fetched with XRANGE on the driver;
        Redis has no "ID of the Nth entry after X" command.
        """
        r = self._r()
        candidates: list[list[tuple[StreamId, str]]] = []
        for key in sorted(ends):
            if ends[key] > positions[key]:
                ids = client.xrange_ids(r, key, positions[key], ends[key], budget)
                candidates.append([(entry_id, key) for entry_id in ids])
        capped = dict(positions)
        taken: dict[str, int] = {}
        for entry_id, key in heapq.merge(*candidates):
            if budget == 0:
                break
            capped[key] = entry_id
            taken[key] = taken.get(key, 0) + 1
            budget -= 1
        capped_added: dict[str, int | None] = {}
        for key in capped:
            if capped[key] == ends[key]:
                capped_added[key] = end_added.get(key)
            elif key in taken and added.get(key) is not None:
                capped_added[key] = added[key] + taken[key]  # type: ignore[operator]
            else:
                capped_added[key] = added.get(key)
        return capped, capped_added

    def reportLatestOffset(self) -> dict | None:
        r = self._r()
        heads = {}
        for key in resolve_keys(r, self.opts):
            head = client.last_entry_id(r, key)
            if head is not None:
                heads[key] = head
        return encode_offset(heads)

    def partitions(self, start: dict, end: dict) -> list[RangePartition]:
        begin = decode_offset(start)
        begin_added = decode_added(start)
        # Streams first seen (or reset) in this batch start where "discovered" says.
        begin.update(decode_offset({"streams": end.get("discovered", {})}))
        discovered_added = decode_added({"added": end.get("discoveredAdded", {})})
        for key in end.get("discovered", {}):
            begin_added[key] = discovered_added.get(key)
        parts: list[RangePartition] = []
        for key, stop in sorted(decode_offset(end).items()):
            parts.extend(plan_ranges(begin.get(key, ZERO), stop, key, self.opts.partitions_per_stream,
                                     begin_added.get(key)))
        return parts

    def commit(self, end: dict) -> None:
        # Nothing to release: the offsets live in Spark's checkpoint, not in Redis.
        return None

    def stop(self) -> None:
        for attr in ("_redis", "_master_redis"):
            conn = getattr(self, attr)
            if conn is not None:
                conn.close()
                setattr(self, attr, None)

    # -- executor side ----------------------------------------------------------------------

    def read(self, partition: RangePartition) -> Iterator[pa.RecordBatch]:
        return read_partition(self.cfg, partition)

    def __getstate__(self) -> dict:
        # Never ship the driver's live connection inside a pickled reader.
        state = dict(self.__dict__)
        state["_redis"] = state["_master_redis"] = None
        return state
