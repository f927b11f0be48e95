"""The sink: `df.write` / `writeStream` rows become XADDs, pipelined, optionally exactly once.

Row -> entry: the `fields` MAP column (if any) gives the fields; otherwise every column except
`stream` (the target key, when the `stream` option is absent) and the ID column becomes a field
named after the column with its value as a string, nulls left out.

Idempotent mode, one of two ways (option idempotentMode; `auto` picks the first the server has):

* `idmp` (servers with XADD IDMP: Redis 8.6+, Rivulet): every row is an `XADD key IDMP pid iid *`,
  pipelined like the plain mode. The producer ID names the (query, partition) and a block of
  IDMP_BLOCK rows, the idempotent ID the batch and the row, so a retried or speculative attempt
  of a task sends the same pairs and the server answers them with the entries already added.
  The block is in the producer ID because the server remembers only the most recent
  IDMP-MAXSIZE pairs of each producer (100 by default): with at most IDMP_BLOCK rows per
  producer and batch, none of a batch's pairs is forgotten that way. The pairs are remembered
  for the stream's IDMP-DURATION (100 s by default, up to a day with XCFGSET): a replay later
  than that writes again.
* `marker`: a task's XADDs and a marker key named after (query, batch, partition) go in one
  MULTI/EXEC, guarded by WATCH on the marker. A retried or speculative attempt of the same task
  finds the marker and writes nothing. The marker lives for markerTtl (7 days by default).

Either way each (query, batch, partition) lands exactly once.

With Sentinel addressing a task survives a failover: a lost connection, a -READONLY reply from a
demoted master or a server still loading makes it ask Sentinel for the master again and write its
partition once more from the first row, within failoverTimeout. The idempotent modes recognise
the rows the new master already has, so each row still lands once (provided the new master had
received the old one's IDMP pairs or markers); the plain mode writes them again: at least once.
To replay its partition the task keeps the rows it has read until it ends.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa
import redis
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)

from spark import client
from spark.endpoint import FAILOVER_ERRORS
from spark.options import OptionError, WriteOptions

log = logging.getLogger("rivulet.spark")

Command = tuple[str, str, dict[str, "str | bytes"]]

# Rows per IDMP producer and batch: at most the server's default IDMP-MAXSIZE, so that every pair
# of a batch is still remembered when an attempt replays it.
IDMP_BLOCK = 100

# Local properties Spark's MicroBatchExecution sets on every task of a micro-batch.
QUERY_ID_PROPERTY = "sql.streaming.queryId"
BATCH_ID_PROPERTY = "streaming.sql.batchId"


@dataclass
class WriteResult(WriterCommitMessage):
    partition: int
    written: int
    skipped: bool  # idempotent mode: an earlier attempt had already written this partition


@dataclass(frozen=True)
class RowLayout:
    """How columns map onto XADD arguments; decided on the driver from the input schema."""

    stream_column: str | None
    id_column: str | None
    fields_column: str | None
    field_columns: tuple[str, ...]


def plan_layout(schema: Any, opts: WriteOptions) -> RowLayout:
    names = [f.name for f in schema.fields]
    types = {f.name: f.dataType.simpleString() for f in schema.fields}
    stream_column = None
    if opts.stream is None:
        if "stream" not in names:
            raise OptionError("redis_streams sink: set the option stream or give the data a `stream` column")
        stream_column = "stream"
    id_column = opts.id_column
    if id_column is not None and id_column not in names:
        raise OptionError(f"redis_streams sink: idColumn {id_column!r} is not a column ({', '.join(names)})")
    fields_column = None
    if "fields" in names and types["fields"].startswith("map<"):
        fields_column = "fields"
    skip = {stream_column, id_column, fields_column}
    field_columns = () if fields_column else tuple(n for n in names if n not in skip)
    if not fields_column and not field_columns:
        raise OptionError("redis_streams sink: no column left to become an entry field")
    return RowLayout(stream_column, id_column, fields_column, field_columns)


def to_field_value(value: Any) -> str | bytes:
    """A column value as a field value: Spark's string forms for the common types."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC)
        return value.isoformat()
    if isinstance(value, (int, Decimal, dt.date)):
        return str(value)
    return str(value)


def rows_to_commands(batch: pa.RecordBatch, layout: RowLayout, default_stream: str | None
                     ) -> Iterator[tuple[str, str, dict[str, str | bytes]]]:
    """(stream, id, fields) per row; rows with no non-null field are skipped (XADD needs one)."""
    columns = {name: batch.column(name).to_pylist() for name in batch.schema.names}
    streams = columns[layout.stream_column] if layout.stream_column else None
    ids = columns[layout.id_column] if layout.id_column else None
    for i in range(batch.num_rows):
        stream = streams[i] if streams is not None else default_stream
        if stream is None:
            raise ValueError(f"redis_streams sink: row {i} has a null `stream` column")
        entry_id = "*"
        if ids is not None and ids[i] is not None:
            entry_id = str(ids[i])
        fields: dict[str, str | bytes] = {}
        if layout.fields_column:
            pairs = columns[layout.fields_column][i] or []
            for k, v in pairs:
                if v is not None:
                    fields[str(k)] = to_field_value(v)
        else:
            for name in layout.field_columns:
                v = columns[name][i]
                if v is not None:
                    fields[name] = to_field_value(v)
        if fields:
            yield stream, entry_id, fields


def server_has_idmp(r: redis.Redis) -> bool:
    """Does the server take XADD IDMP? Asked with an XADD that adds nothing: NOMKSTREAM on a key
    that does not exist answers nil where IDMP is known, a syntax error where it is not."""
    probe = f"rivulet:spark:idmp-probe:{uuid.uuid4().hex}"
    try:
        r.execute_command("XADD", probe, "NOMKSTREAM", "IDMP", "p", "i", "*", "f", "v")
    except redis.ResponseError:
        return False
    return True


def resolve_idempotent_mode(opts: WriteOptions) -> str:
    """`idmp` or `marker` for opts (asks the server when the option says `auto`); `plain` when
    the write is not idempotent."""
    if not opts.idempotent:
        return "plain"
    if opts.idempotent_mode != "auto":
        return opts.idempotent_mode
    if opts.id_column is not None:
        return "marker"  # IDMP takes only server-generated IDs
    r = client.connect(opts.endpoint)
    try:
        return "idmp" if server_has_idmp(r) else "marker"
    finally:
        r.close()


class _OverlappedSender:
    """Pipelines of commands on one connection, each sent before the replies of the one before
    it are read: the server works through a pipeline while the task builds the next one, so the
    task never waits for a whole round trip. (redis-py's pipeline reads every reply before the
    next send, which left the task idle for the server's share of each pipeline.) At most two
    pipelines are outstanding, so neither side's buffers grow past two pipelines' worth. Any
    error reply fails the task, as a pipeline's would."""

    def __init__(self, r: redis.Redis) -> None:
        pool = r.connection_pool
        try:
            conn = pool.get_connection()
        except TypeError:  # redis-py < 5.3 wants a command name
            conn = pool.get_connection("XADD")
        self.pool = pool
        self.conn = conn
        self.owed = 0  # replies of the pipeline in flight
        self.clean = True

    def send(self, commands: list[list[Any]]) -> None:
        conn = self.conn
        self.clean = False
        # No health check once replies are owed: its PING would read one of them.
        conn.send_packed_command(conn.pack_commands(commands), check_health=self.owed == 0)
        self._read(self.owed)
        self.owed = len(commands)
        self.clean = True

    def finish(self) -> None:
        self.clean = False
        self._read(self.owed)
        self.owed = 0
        self.clean = True

    def _read(self, n: int) -> None:
        read = self.conn.read_response
        for _ in range(n):
            read()

    def release(self) -> None:
        if not self.clean or self.owed:
            self.conn.disconnect()  # replies left unread: the connection is unusable
        self.pool.release(self.conn)


class _Replay:
    """The commands of a partition, read once from Spark and kept: every iteration yields the
    ones read so far, then reads on. A write interrupted by a failover starts again from the
    first row without Spark having to recompute the partition."""

    def __init__(self, source: Iterator[Command]) -> None:
        self.source = source
        self.seen: list[Command] = []

    def __iter__(self) -> Iterator[Command]:
        yield from self.seen
        for command in self.source:
            self.seen.append(command)
            yield command


class _Writer:
    """The write logic shared by the batch and streaming writers."""

    def __init__(self, opts: WriteOptions, layout: RowLayout, write_id: str, mode: str | None = None
                 ) -> None:
        self.opts = opts
        self.layout = layout
        self.write_id = write_id
        # Decided once per writer, on the driver: every attempt of a task must write the same way.
        self.mode = mode if mode is not None else resolve_idempotent_mode(opts)

    def _xadd(self, pipe: Any, stream: str, entry_id: str, fields: dict[str, str | bytes]) -> None:
        if self.opts.maxlen is not None:
            pipe.xadd(stream, fields, id=entry_id, maxlen=self.opts.maxlen, approximate=self.opts.approximate)
        else:
            pipe.xadd(stream, fields, id=entry_id)

    def _xadd_args(self, stream: str, entry_id: str, fields: dict[str, str | bytes],
                   idmp: tuple[str, str] | None) -> list[Any]:
        # Spelled out rather than redis-py's xadd(idmp=...), which only redis-py 8.1+ has.
        args: list[Any] = ["XADD", stream]
        if idmp is not None:
            args += ("IDMP", *idmp)
        if self.opts.maxlen is not None:
            args += ("MAXLEN", "~", self.opts.maxlen) if self.opts.approximate else ("MAXLEN", self.opts.maxlen)
        args.append(entry_id)
        for item in fields.items():
            args += item
        return args

    def _commands(self, batches: Iterator[pa.RecordBatch]) -> Iterator[Command]:
        for batch in batches:
            yield from rows_to_commands(batch, self.layout, self.opts.stream)

    def write_batches(self, batches: Iterator[pa.RecordBatch], batch_id: str) -> WriteResult:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        partition = ctx.partitionId() if ctx is not None else 0
        endpoint = self.opts.endpoint
        if not endpoint.is_sentinel:
            r = client.connect(endpoint)
            try:
                return self._write(r, self._commands(batches), batch_id, partition)
            finally:
                r.close()
        commands = _Replay(self._commands(batches))
        deadline = last_failure = 0.0
        pause = 0.05
        while True:
            # No retries inside redis-py: after any failure the whole partition is written
            # again, to whichever server Sentinel names master by then.
            r = client.connect(endpoint, follow_failover=False)
            try:
                return self._write(r, iter(commands), batch_id, partition)
            except FAILOVER_ERRORS as exc:
                now = time.monotonic()
                if now - last_failure > endpoint.failover_timeout:
                    # A new failover, not the one the previous attempts waited for.
                    deadline, pause = now + endpoint.failover_timeout, 0.05
                last_failure = now
                if now >= deadline:
                    raise
                log.warning("redis_streams sink: %s; writing partition %d again to the master "
                            "Sentinel names", exc, partition)
            finally:
                r.close()
            time.sleep(pause)
            pause = min(pause * 2, 0.5)

    def _write(self, r: redis.Redis, commands: Iterable[Command], batch_id: str, partition: int
               ) -> WriteResult:
        if self.mode == "marker":
            result = self._write_once(r, list(commands), batch_id, partition)
            self._maybe_inject_failure(r)
            return result
        idmp = self.mode == "idmp"
        producer = f"{self.write_id}:{partition}:"
        written = 0
        row = 0
        sender = _OverlappedSender(r)
        try:
            queued: list[list[Any]] = []
            for stream, entry_id, fields in commands:
                pair = (f"{producer}{row // IDMP_BLOCK}", f"{batch_id}:{row}") if idmp else None
                row += 1
                queued.append(self._xadd_args(stream, entry_id, fields, pair))
                if len(queued) >= self.opts.pipeline_size:
                    sender.send(queued)
                    written += len(queued)
                    queued = []
            if queued:
                sender.send(queued)
                written += len(queued)
            sender.finish()
        finally:
            sender.release()
        self._maybe_inject_failure(r)
        return WriteResult(partition, written, False)

    def _maybe_inject_failure(self, r: redis.Redis) -> None:
        """Test hook (option injectFailureKey): fail the first task *after* its writes landed,
        once (SET NX), so Spark retries a task whose output is already in the stream."""
        key = self.opts.inject_failure_key
        if key is not None and r.set(key, "1", nx=True):
            raise RuntimeError("redis_streams sink: injected failure after the writes")

    def marker_key(self, batch_id: str, partition: int) -> str:
        return f"{self.opts.marker_prefix}:{self.write_id}:{batch_id}:{partition}"

    def _write_once(self, r: redis.Redis, commands: list[Command], batch_id: str,
                    partition: int) -> WriteResult:
        # The whole partition goes in one transaction, so the caller buffers it first.
        marker = self.marker_key(batch_id, partition)
        with r.pipeline(transaction=True) as pipe:
            try:
                pipe.watch(marker)
                if pipe.exists(marker):
                    return WriteResult(partition, 0, True)
                pipe.multi()
                for stream, entry_id, fields in commands:
                    self._xadd(pipe, stream, entry_id, fields)
                pipe.set(marker, len(commands), ex=self.opts.marker_ttl)
                pipe.execute()
            except redis.WatchError:
                # Either another attempt of this very task committed between WATCH and EXEC, or
                # the connection failed while WATCHing (redis-py reports both as WatchError):
                # only the marker tells which.
                if r.exists(marker):
                    return WriteResult(partition, 0, True)
                raise redis.ConnectionError("redis_streams sink: the connection was lost during "
                                            "the partition's transaction") from None
        return WriteResult(partition, len(commands), False)


class BatchWriter(DataSourceArrowWriter):
    def __init__(self, opts: WriteOptions, layout: RowLayout) -> None:
        # Created once per write job on the driver and shipped to every task, so all attempts of
        # a task share this ID (and the idempotent mode); writeId makes re-running the whole job
        # idempotent too.
        self.impl = _Writer(opts, layout, opts.write_id or uuid.uuid4().hex)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteResult:
        return self.impl.write_batches(iterator, "batch")


class StreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, opts: WriteOptions, layout: RowLayout) -> None:
        self.impl = _Writer(opts, layout, opts.write_id or "")

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteResult:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        batch_id = ctx.getLocalProperty(BATCH_ID_PROPERTY) if ctx is not None else None
        query_id = ctx.getLocalProperty(QUERY_ID_PROPERTY) if ctx is not None else None
        if self.impl.opts.idempotent and (batch_id is None or (query_id is None and not self.impl.write_id)):
            raise RuntimeError("redis_streams sink: no micro-batch ID in the task context; idempotent "
                               "mode needs Spark's streaming engine (writeStream)")
        if not self.impl.write_id:
            # The query ID is stored in the checkpoint, so it survives restarts: a batch replayed
            # after a crash gets the same markers as its first run.
            self.impl.write_id = query_id or ""
        return self.impl.write_batches(iterator, batch_id or "0")

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        return None

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        # Partitions that did commit keep their markers (or their IDMP pairs): a replay of this
        # batch skips them.
        return None
