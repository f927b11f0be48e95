"""The source and sink behind Redis Sentinel: sentinel:// urls, readFrom=replica, failover.

Real processes: three redis-sentinel processes (tests/sentinel_helpers.py) watching either a
redis-server master and a `--replicaof` replica, or a Rivulet master and two Rivulet replicas
(every test that takes a group runs with both), and a local SparkSession. Failover tests SIGKILL the
master in the middle of a write and check what lands on the master Sentinel promotes.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import redis

pytest_plugins = ["tests.spark_conftest"]

from spark import client  # noqa: E402
from spark import reader as spark_reader  # noqa: E402
from spark.endpoint import Endpoint, parse_sentinel_url  # noqa: E402
from spark.offsets import StreamId  # noqa: E402
from spark.options import OptionError, parse_read_options, parse_write_options  # noqa: E402
from spark.reader import DataLossError, RangePartition, ReadConfig, read_partition  # noqa: E402
from spark.schema import default_schema, plan_columns  # noqa: E402
from tests.sentinel_helpers import SentinelGroup, redis_available, redis_node, rivulet_node  # noqa: E402

pytestmark = pytest.mark.timeout(120)

STREAM_COMMANDS = ("xrange", "xrevrange", "xinfo|stream", "xread", "scan")


def test_sentinel_urls_parse_like_redis_urls() -> None:
    a = parse_sentinel_url("sentinel://10.0.0.1:26380,10.0.0.2,[::1]:5000/mymaster/3")
    assert a.sentinels == (("10.0.0.1", 26380), ("10.0.0.2", 26379), ("::1", 5000))
    assert (a.service, a.tls) == ("mymaster", False)
    assert dict(a.connection_kwargs)["db"] == 3
    b = parse_sentinel_url("sentinels://app:p%40ss@h:1/svc?ssl_cert_reqs=none")
    kwargs = dict(b.connection_kwargs)
    assert (b.tls, kwargs["ssl"], kwargs["ssl_cert_reqs"]) == (True, True, "none")
    assert (kwargs["username"], kwargs["password"], kwargs["db"]) == ("app", "p@ss", 0)
    for bad, message in (("sentinel://h:1", "names the master"),
                         ("sentinel://h:1/m/x", "must be a number"),
                         ("sentinel://h:port/m", "bad sentinel port"),
                         ("sentinel:///m", "no sentinel address"),
                         ("sentinel://h:1/a/1/extra", "names the master")):
        with pytest.raises(OptionError, match=message):
            parse_read_options({"url": bad, "streams": "s"}, streaming=False)


def test_read_from_and_sentinel_option_errors() -> None:
    url = "sentinel://127.0.0.1:26379/mymaster"
    opts = parse_read_options({"url": url, "streams": "s", "readFrom": "REPLICA",
                               "sentinelPassword": "pw", "failoverTimeout": "5"}, streaming=True)
    assert opts.read_from == "replica"
    assert opts.endpoint == Endpoint(url, None, "pw", 5.0)
    assert parse_read_options({"url": url, "streams": "s"}, streaming=False).read_from == "master"
    cases = [
        ({"url": url, "readFrom": "nearest"}, "readFrom must be master or replica, got 'nearest'"),
        ({"url": "redis://h:1/0", "readFrom": "replica"}, "readFrom=replica needs a sentinel:// url"),
        ({"url": url, "readFrom": "replica", "group": "g"}, "cannot be combined with group"),
        ({"url": "redis://h:1/0", "sentinelPassword": "x"}, "need a sentinel:// url"),
        ({"url": url, "failoverTimeout": "-1"}, "failoverTimeout must be >= 0"),
    ]
    for options, message in cases:
        with pytest.raises(OptionError, match=message):
            parse_read_options({"streams": "s", **options}, streaming=True)
    assert parse_write_options({"url": url, "stream": "s"}).endpoint.is_sentinel
    with pytest.raises(OptionError, match="unknown write option"):
        parse_write_options({"url": url, "stream": "s", "readFrom": "replica"})


# -- a running group: master, one replica, three sentinels -----------------------------------

def _need_redis() -> None:
    if not redis_available():
        pytest.skip("redis-server / redis-sentinel are not installed: Sentinel addressing, "
                    "readFrom=replica and failover were NOT tested")


# The data servers a group is made of: Debian's redis-server (one replica), or Rivulet (two
# replicas), always watched by Debian's redis-sentinel.
NODES = [pytest.param((redis_node, 1), id="redis-nodes"),
         pytest.param((rivulet_node, 2), id="rivulet-nodes")]


@pytest.fixture(scope="module", params=NODES)
def group(request) -> Iterator[SentinelGroup]:
    _need_redis()
    factory, replicas = request.param
    g = SentinelGroup(factory, replicas=replicas).start()
    yield g
    g.cleanup()


@pytest.fixture(params=NODES)
def fresh_group(request) -> Iterator[SentinelGroup]:
    """A group of its own, for a test that kills its master."""
    _need_redis()
    factory, replicas = request.param
    g = SentinelGroup(factory, replicas=replicas).start()
    yield g
    g.cleanup()


def test_passwords_of_servers_and_sentinels() -> None:
    """The url's password is the data servers', sentinelPassword the sentinels' (Redis keeps them
    apart: requirepass on each server, requirepass in each sentinel's config)."""
    _need_redis()
    g = SentinelGroup(redis_node, password="data-pw", sentinel_password="sentinel-pw").start()
    try:
        url = g.url()
        assert url.startswith("sentinel://:data-pw@")
        options = parse_read_options({"url": url, "streams": "s", "sentinelPassword": "sentinel-pw",
                                      "failoverTimeout": "0"}, streaming=False)
        with client.connect(options.endpoint) as master:
            master.xadd("auth:s", {"f": "v"})
            assert master.execute_command("ROLE")[0] == "master"
        g.wait_replicated()
        with client.connect(options.endpoint, replica=True) as replica:
            assert replica.execute_command("ROLE")[0] == "slave"
            assert replica.xlen("auth:s") == 1
        # Without the sentinels' password no master can be found; without the servers' the
        # master refuses the connection.
        with pytest.raises(redis.ConnectionError, match="No master found"), \
                client.connect(Endpoint(url, failover_timeout=0)) as r:
            r.ping()
        with pytest.raises(redis.AuthenticationError), \
                client.connect(Endpoint(url.replace(":data-pw@", ""), None, "sentinel-pw", 0)) as r:
            r.ping()
    finally:
        g.cleanup()


def _stream_calls(*ports: int) -> dict[str, int]:
    """The stream commands' calls, summed over the servers at ports."""
    total = dict.fromkeys(STREAM_COMMANDS, 0)
    for port in ports:
        with redis.Redis(port=port, decode_responses=True) as r:
            stats = r.info("commandstats")
        for c in STREAM_COMMANDS:
            total[c] += stats.get(f"cmdstat_{c}", {}).get("calls", 0)
    return total


def _reset_stats(*ports: int) -> None:
    for port in ports:
        with redis.Redis(port=port) as r:
            r.config_resetstat()


def _fill(group: SentinelGroup, n: int) -> str:
    key = f"repl:{uuid.uuid4().hex[:8]}"
    with group.master_client() as m:
        pipe = m.pipeline(transaction=False)
        for i in range(n):
            pipe.xadd(key, {"n": str(i)})
        pipe.execute()
    group.wait_replicated()  # WAIT 1 on the master
    return key


def test_batch_read_from_replica(spark, group: SentinelGroup) -> None:
    key = _fill(group, 500)
    master, replicas = group.master_addr()[1], group.replica_ports()

    def read(**options: str) -> list[int]:
        df = (spark.read.format("redis_streams").option("url", group.url()).option("streams", key)
              .option("partitionsPerStream", "2").option("batchSize", "64").options(**options).load())
        return sorted(int(row.fields["n"]) for row in df.collect())

    _reset_stats(master, *replicas)
    assert read(readFrom="replica") == list(range(500))
    on_master, on_replicas = _stream_calls(master), _stream_calls(*replicas)
    assert not any(on_master.values()), on_master
    assert on_replicas["xrange"] >= 500 // 64 and on_replicas["xinfo|stream"] >= 2
    # The default reads the master, through the same sentinel url.
    _reset_stats(master, *replicas)
    assert read() == list(range(500))
    assert _stream_calls(master)["xrange"] >= 500 // 64
    assert not any(_stream_calls(*replicas).values())


def test_streaming_read_from_replica(spark, group: SentinelGroup, tmp_path) -> None:
    key = _fill(group, 300)
    master, replicas = group.master_addr()[1], group.replica_ports()
    _reset_stats(master, *replicas)
    got: list[int] = []
    lock = threading.Lock()

    def collect(df: Any, _batch: int) -> None:
        rows = [int(row.fields["n"]) for row in df.collect()]
        with lock:
            got.extend(rows)

    query = (spark.readStream.format("redis_streams").option("url", group.url()).option("streams", key)
             .option("readFrom", "replica").option("startingOffsets", "earliest")
             .option("maxEntriesPerTrigger", "120").load()
             .writeStream.foreachBatch(collect)
             .option("checkpointLocation", str(tmp_path / "cp")).trigger(availableNow=True).start())
    try:
        assert query.awaitTermination(90)
    finally:
        query.stop()
    assert query.exception() is None
    assert sorted(got) == list(range(300))
    assert not any(_stream_calls(master).values())
    assert _stream_calls(*replicas)["xinfo|stream"] > 0


def _config(url: str, fail: bool = True, read_from: str = "replica") -> ReadConfig:
    columns, arrow_schema = plan_columns(default_schema())
    return ReadConfig(endpoint=Endpoint(url, failover_timeout=10), batch_size=100,
                      fail_on_data_loss=fail, failfast=False, columns=columns,
                      arrow_schema=arrow_schema, inject_failure_key=None, read_from=read_from)


def test_task_reads_the_master_when_no_replica_has_the_range(group: SentinelGroup, monkeypatch) -> None:
    """A range planned up to an ID no replica has generated yet is read from the master; when the
    master has not got it either (a failover lost it), that is data loss, not a short read."""
    monkeypatch.setattr(spark_reader, "REPLICA_CATCH_UP", 0.3)
    key = _fill(group, 10)
    master, replicas = group.master_addr()[1], group.replica_ports()
    with group.master_client() as m:
        last = StreamId.parse(m.xrevrange(key, count=1)[0][0])
    beyond = RangePartition(key, StreamId(0, 0), StreamId(last.ms + 60_000, 0), None)
    _reset_stats(master, *replicas)
    with pytest.raises(DataLossError, match=rf"stream ends at {last}, before {beyond.end}"):
        list(read_partition(_config(group.url()), beyond))
    assert _stream_calls(*replicas)["xinfo|stream"] >= 2  # asked, waited, gave up
    assert _stream_calls(master)["xinfo|stream"] == 1
    batches = list(read_partition(_config(group.url(), fail=False), beyond))
    assert sum(b.num_rows for b in batches) == 10
    # A range the replica holds is read there alone.
    _reset_stats(master, *replicas)
    held = RangePartition(key, StreamId(0, 0), last, 0)
    assert sum(b.num_rows for b in read_partition(_config(group.url()), held)) == 10
    assert not any(_stream_calls(master).values())


def test_sink_writes_to_the_master_sentinel_names(spark, group: SentinelGroup) -> None:
    key = f"sink:{uuid.uuid4().hex[:8]}"
    df = spark.range(0, 400, numPartitions=2).selectExpr("cast(id as string) as n")
    df.write.format("redis_streams").mode("append").option("url", group.url()) \
        .option("stream", key).option("idempotent", "true").save()
    with group.master_client() as m:
        assert sorted(int(f["n"]) for _, f in m.xrange(key)) == list(range(400))
    group.wait_replicated()
    with redis.Redis(port=group.replica_ports()[0], decode_responses=True) as r:
        assert r.xlen(key) == 400


# -- failover in the middle of a write ---------------------------------------------------------

def _gate(directory: str, at: int, min_attempt: int):
    """A UDF that, in task attempts >= min_attempt, stops at row `at` until the test opens the
    gate: the test then kills the master while the write is under way. Its values are padded to
    2 kB: the UDF's Python worker buffers 64 kB of results before they move on to the writer."""

    def gate(n: int) -> str:
        import os
        import time

        from pyspark import TaskContext

        ctx = TaskContext.get()
        if n == at and ctx is not None and ctx.attemptNumber() >= min_attempt:
            open(os.path.join(directory, "reached"), "w").close()
            deadline = time.monotonic() + 60
            while not os.path.exists(os.path.join(directory, "open")) and time.monotonic() < deadline:
                time.sleep(0.05)
        return str(n).rjust(2000)

    return gate


def _wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _write_through_failover(spark, group: SentinelGroup, tmp_path, rows: int, at: int,
                            min_attempt: int, ready, **options: str) -> dict[int, int]:
    """Write `rows` rows (one partition) through the sentinel url; when the task reaches row `at`
    and `ready(old_master_client)` holds, kill the master, wait for Sentinel to promote the
    replica, let the task go on. Returns how many times each row is in the new master's stream."""
    from pyspark.sql import functions as F

    key = f"fo:{uuid.uuid4().hex[:8]}"
    gate_dir = str(tmp_path)
    gate = F.udf(_gate(gate_dir, at, min_attempt), "string")
    df = spark.range(0, rows, numPartitions=1).select(gate("id").alias("n"))
    errors: list[BaseException] = []
    promoted: list[tuple[str, int]] = []

    def fail_over() -> None:
        # Beside the write (which runs in the test's thread: Spark finds the format there).
        try:
            _wait_for(lambda: os.path.exists(os.path.join(gate_dir, "reached")), 60, "the gate row")
            with group.master_client() as old:
                try:
                    _wait_for(lambda: ready(old, key), 30, "the writes before the gate")
                except AssertionError:
                    raise AssertionError(f"the old master has {old.xlen(key)} rows") from None
            group.wait_replicated()
            old_addr = group.kill_master()
            promoted.append(group.wait_failover(old_addr))
        except BaseException as exc:  # noqa: BLE001 -- reported by the test thread
            errors.append(exc)
        finally:
            open(os.path.join(gate_dir, "open"), "w").close()

    previous = spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch")
    # Small Arrow batches: the rows before the gate reach the writer (and the master) first.
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "50")
    helper = threading.Thread(target=fail_over, daemon=True)
    helper.start()
    try:
        (df.write.format("redis_streams").mode("append").option("url", group.url())
         .option("stream", key).option("pipelineSize", "20").option("failoverTimeout", "30")
         .options(**options).save())
    finally:
        open(os.path.join(gate_dir, "open"), "w").close()
        spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", previous)
        helper.join(60)
    assert not errors, errors
    new_addr = promoted[0]
    with redis.Redis(*new_addr, decode_responses=True) as r:
        return dict(Counter(int(f["n"]) for _, f in r.xrange(key)))


def _settled(old: redis.Redis, key: str, seen: list[int]) -> bool:
    """The old master holds some rows and no more arrive (the task waits at the gate)."""
    seen.append(old.xlen(key))
    return len(seen) > 10 and seen[-1] > 0 and seen[-1] == seen[-11]


def test_failover_mid_write_plain_mode_writes_the_partition_again(spark, fresh_group, tmp_path) -> None:
    """The task loses its master part-way through its rows; it writes its partition again, from
    the first row, to the promoted replica: at least once, the rows the old master had twice."""
    seen: list[int] = []
    counts = _write_through_failover(spark, fresh_group, tmp_path, rows=600, at=300, min_attempt=0,
                                     ready=lambda old, key: _settled(old, key, seen))
    before = seen[-1]
    assert 0 < before <= 300
    assert counts == {n: 2 if n < before else 1 for n in range(600)}


def test_failover_mid_job_idempotent_mode_writes_each_row_once(spark, fresh_group, tmp_path) -> None:
    """The first attempt writes the partition on the old master and then fails (injected); the
    master dies before the retry writes; the retry, against the promoted replica, finds the
    partition's marker there and adds nothing."""
    inject = f"inj:{uuid.uuid4().hex[:8]}"
    counts = _write_through_failover(
        spark, fresh_group, tmp_path, rows=600, at=300, min_attempt=1,
        ready=lambda old, key: old.xlen(key) == 600 and old.exists(inject) == 1,
        idempotent="true", idempotentMode="marker", injectFailureKey=inject)
    assert counts == {n: 1 for n in range(600)}


def test_streaming_pipeline_survives_failover(spark, fresh_group: SentinelGroup, tmp_path) -> None:
    """A running query (source and idempotent sink through the sentinel url) loses its master
    between two micro-batches: it goes on against the promoted replica, each entry once."""
    group = fresh_group
    src, dst = f"pipe:src:{uuid.uuid4().hex[:8]}", f"pipe:dst:{uuid.uuid4().hex[:8]}"

    def produce(client: redis.Redis, first: int, n: int) -> None:
        pipe = client.pipeline(transaction=False)
        for i in range(first, first + n):
            pipe.xadd(src, {"n": str(i)})
        pipe.execute()

    with group.master_client() as m:
        produce(m, 0, 200)
    query = (spark.readStream.format("redis_streams").option("url", group.url()).option("streams", src)
             .option("startingOffsets", "earliest").option("maxEntriesPerTrigger", "100").load()
             .writeStream.format("redis_streams").option("url", group.url()).option("stream", dst)
             .option("idempotent", "true").option("idempotentMode", "marker")
             .option("checkpointLocation", str(tmp_path / "cp")).trigger(processingTime="200 milliseconds")
             .start())
    try:
        with group.master_client() as old:
            _wait_for(lambda: old.xlen(dst) >= 200, 60, "the first entries in the sink")
        group.wait_replicated()
        new_addr = group.wait_failover(group.kill_master())
        with redis.Redis(*new_addr, decode_responses=True) as new:
            produce(new, 200, 200)
            _wait_for(lambda: new.xlen(dst) >= 400 or query.exception() is not None, 60,
                      "the entries written after the failover")
            assert query.exception() is None, query.exception()
            counts = Counter(int(f["n"]) for _, f in new.xrange(dst))
    finally:
        query.stop()
    assert counts == {n: 1 for n in range(400)}
    # The old master is down: readFrom=replica reads the replica left (Sentinel makes it follow
    # the new master), or the new master when there is none.
    assert len(group.replica_ports()) == group.replica_count - 1
    if group.replica_ports():
        group.wait_replicated(30_000)
    df = (spark.read.format("redis_streams").option("url", group.url()).option("streams", dst)
          .option("readFrom", "replica").load())
    assert sorted(int(row.fields["n"]) for row in df.collect()) == list(range(400))
