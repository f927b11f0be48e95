"""Batch reads (`spark.read`) and the per-partition read shared with streaming reads.

A partition is one stream's ID range (start, end]. Reading it is deterministic: stream IDs only
grow, so no entry can appear inside a range that was already planned; a retried task re-reads
exactly the same entries (unless they were deleted meanwhile, which the data-loss check reports).

With Sentinel addressing a task survives a failover (or the loss of its replica): it connects
again, to the new master or another replica, and goes on after the last entry it handed to Spark.
Whatever server it reads from must hold the whole range: a replica is used once its copy of the
stream reaches the range's end, the master otherwise.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
import redis
from pyspark.sql.datasource import DataSourceReader, InputPartition

from spark import client
from spark.endpoint import FAILOVER_ERRORS, Endpoint
from spark.offsets import ZERO, StreamId, split_range
from spark.options import ReadOptions, resolve_bound
from spark.schema import Column, entries_to_batch

log = logging.getLogger("rivulet.spark")

# How long a task waits for a replica that has not yet received the whole range it is to read,
# before it reads the range from the master instead.
REPLICA_CATCH_UP = 2.0


class DataLossError(RuntimeError):
    """Entries the query had not read yet were deleted (trimmed) from the stream."""


class RangePartition(InputPartition):
    """One task's work: entries of `stream` with start < ID <= end (IDs kept as strings).

    `added` is how many entries had ever been added up to `start`, when known: with XINFO's
    entries-added and length it tells whether entries after `start` were trimmed.
    """

    def __init__(self, stream: str, start: StreamId, end: StreamId, added: int | None = None) -> None:
        self.stream, self.start, self.end, self.added = stream, str(start), str(end), added


@dataclass(frozen=True)
class ReadConfig:
    """Everything an executor needs to read a partition; plain data, picklable."""

    endpoint: Endpoint
    batch_size: int
    fail_on_data_loss: bool
    failfast: bool
    columns: list[Column]
    arrow_schema: pa.Schema
    inject_failure_key: str | None
    read_from: str = "master"


def check_data_loss(state: client.StreamState | None, key: str, start: StreamId, end: StreamId,
                    added: int | None, fail: bool) -> None:
    """Raise (or log) when entries in (start, end] were deleted before the query read them.

    XDEL leaves a trace in XINFO STREAM's max-deleted-entry-id. Trimming (XTRIM, XADD MAXLEN/MINID)
    does not, but it only ever removes the head: once the first entry lies beyond `start`, every
    entry up to `start` is gone, and if more entries were removed in total (entries-added -
    length) than had been added up to `start` (`added`), the rest were entries after `start`.
    A server whose stream ends before `end` lacks entries the plan saw on another server: the
    new master of a failover that had not received them (replication is asynchronous).
    """
    if end <= start:
        return
    reason = None
    if state is None:
        reason = "the stream no longer exists"
    elif state.max_deleted is not None and start < state.max_deleted <= end:
        reason = f"entry {state.max_deleted} was deleted (XDEL; XINFO max-deleted-entry-id)"
    elif (added is not None and state.removed is not None
          and (state.first_entry is None or state.first_entry > start)
          and state.removed > added):
        lost = state.removed - added
        reason = (f"{lost} entr{'y was' if lost == 1 else 'ies were'} trimmed (XTRIM/MAXLEN/MINID; "
                  f"the first entry is now {state.first_entry or 'none'})")
    elif state.last_generated < end:
        reason = (f"the server's copy of the stream ends at {state.last_generated}, before {end} "
                  "(entries lost in a failover: the new master had not received them)")
    if reason is None:
        return
    message = (
        f"redis_streams: data loss in stream {key!r}: entries after ID {start} were removed before "
        f"the query read them: {reason}. The stream is trimmed faster than the query consumes it. "
        "Set failOnDataLoss=false to log this and continue with the entries that remain."
    )
    if fail:
        raise DataLossError(message)
    log.warning("%s (failOnDataLoss=false: skipping them)", message)


def _open_for_range(cfg: ReadConfig, key: str, end: StreamId) -> tuple[redis.Redis, client.StreamState | None]:
    """A connection to a server holding every entry of `key` up to `end`, and the stream's state
    there.

    With readFrom=replica: a replica (a random live one, as redis-py's slave_for picks) once its
    copy of the stream has generated `end`: entries replicate in ID order, so it then holds
    every entry the plan saw. A replica still behind after REPLICA_CATCH_UP, or none at all,
    sends the read to the master.
    """
    # With Sentinel, calls do not retry by themselves: a retry could land on another server
    # unseen, so read_partition reconnects itself and checks the new server again.
    retries = not cfg.endpoint.is_sentinel
    if cfg.read_from == "replica":
        r = client.connect(cfg.endpoint, replica=True, follow_failover=retries)
        deadline = time.monotonic() + REPLICA_CATCH_UP
        try:
            while True:
                state = client.stream_state(r, key)
                if state is not None and state.last_generated >= end:
                    return r, state
                if time.monotonic() >= deadline:
                    break
                time.sleep(0.02)
        except BaseException:
            r.close()
            raise
        r.close()
        log.info("redis_streams: no replica holds stream %r up to %s yet: reading it from the master",
                 key, end)
    r = client.connect(cfg.endpoint, follow_failover=retries)
    try:
        return r, client.stream_state(r, key)
    except BaseException:
        r.close()
        raise


def _wait_for_failover(cfg: ReadConfig, exc: Exception, deadline: float | None) -> float:
    """Re-raise `exc` unless Sentinel may yet name a server to go on with; then pause briefly."""
    if not cfg.endpoint.is_sentinel:
        raise exc
    now = time.monotonic()
    if deadline is None:
        deadline = now + cfg.endpoint.failover_timeout
    if now >= deadline:
        raise exc
    log.warning("redis_streams: %s; asking Sentinel for the servers again", exc)
    time.sleep(0.2)
    return deadline


def read_partition(cfg: ReadConfig, part: RangePartition) -> Iterator[pa.RecordBatch]:
    start, end = StreamId.parse(part.start), StreamId.parse(part.end)
    cursor = start  # the last entry handed to Spark: after a reconnect, reading goes on from here
    injected = cfg.inject_failure_key is None
    deadline: float | None = None
    while True:
        try:
            r, state = _open_for_range(cfg, part.stream, end)
        except FAILOVER_ERRORS as exc:
            deadline = _wait_for_failover(cfg, exc, deadline)
            continue
        try:
            check_data_loss(state, part.stream, cursor, end, part.added if cursor == start else None,
                            cfg.fail_on_data_loss)
            for page in client.xrange_pages(r, part.stream, cursor, end, cfg.batch_size):
                batch = entries_to_batch(part.stream, page, cfg.columns, cfg.arrow_schema, cfg.failfast)
                cursor = StreamId.parse(page[-1][0])
                deadline = None  # progress: a later failure is a new failover
                yield batch
                if not injected:
                    injected = True
                    with client.connect(cfg.endpoint) as master:
                        _maybe_inject_failure(master, cfg.inject_failure_key or "", part)
            return
        except FAILOVER_ERRORS as exc:
            deadline = _wait_for_failover(cfg, exc, deadline)
        finally:
            r.close()


def _maybe_inject_failure(r, key: str, part: RangePartition) -> None:
    """Test hook (option injectFailureKey): fail the first task that gets here, once.

    SET NX makes "once" hold across retries, executors and restarts; the retry then re-reads the
    same range, which is what the exactly-once tests check.
    """
    if r.set(key, f"{part.stream}:{part.start}:{part.end}", nx=True):
        raise RuntimeError(f"redis_streams: injected failure after the first page of {part}")


def resolve_keys(r, opts: ReadOptions) -> list[str]:
    if opts.pattern:
        return client.discover_streams(r, opts.pattern)
    return list(opts.streams)


def resolve_start(r, opts: ReadOptions, key: str) -> client.Position:
    bound = resolve_bound(opts.start_for(key))
    if bound == "earliest":
        return client.earliest_position(r, key)
    if bound == "latest":
        return client.latest_position(r, key)
    assert isinstance(bound, StreamId)
    # A user-given ID: how many entries preceded it is unknown, so only XDEL and deletion of
    # the whole stream are detected for this first range.
    return bound, None


def plan_ranges(start: StreamId, end: StreamId, key: str, parts: int, added: int | None) -> list[RangePartition]:
    # Only the first piece knows its count; it alone detects trimming into the whole range,
    # since a trim past any later piece's start also passed the first piece's start.
    pieces = split_range(start, end, parts)
    return [RangePartition(key, a, b, added if i == 0 else None) for i, (a, b) in enumerate(pieces)]


class BatchReader(DataSourceReader):
    def __init__(self, opts: ReadOptions, cfg: ReadConfig) -> None:
        self.opts = opts
        self.cfg = cfg

    def partitions(self) -> list[RangePartition]:
        r = client.connect(self.opts.endpoint, replica=self.opts.read_from == "replica")
        try:
            parts: list[RangePartition] = []
            for key in resolve_keys(r, self.opts):
                head = client.last_entry_id(r, key)
                if head is None:
                    continue
                start, added = resolve_start(r, self.opts, key)
                bound = resolve_bound(self.opts.end_for(key))
                if bound == "earliest":
                    continue
                end = head if bound == "latest" else min(head, bound)  # type: ignore[type-var]
                parts.extend(plan_ranges(start, end, key, self.opts.partitions_per_stream, added))
            # Spark needs at least one partition; an empty range reads nothing.
            return parts or [RangePartition("", ZERO, ZERO)]
        finally:
            r.close()

    def read(self, partition: RangePartition) -> Iterator[pa.RecordBatch]:
        if not partition.stream:
            return iter(())
        return read_partition(self.cfg, partition)
