"""The sink: df.write / writeStream -> XADD, field mapping, explicit IDs, MAXLEN, idempotency."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.spark_conftest import Target

pytest_plugins = ["tests.spark_conftest"]


def save(df, target: Target, **options: str) -> None:
    writer = df.write.format("redis_streams").mode("append").option("url", target.url)
    for name, value in options.items():
        writer = writer.option(name, value)
    writer.save()


def test_columns_become_fields_nulls_left_out(spark, target: Target) -> None:
    key = target.key("sink:cols")
    df = spark.createDataFrame(
        [(1, "a", 1.5, True), (2, None, None, False), (3, "c", 2.25, None)],
        "n INT, name STRING, value DOUBLE, ok BOOLEAN",
    ).coalesce(1)
    save(df, target, stream=key)
    entries = target.r.xrange(key)
    assert [fields for _, fields in entries] == [
        {"n": "1", "name": "a", "value": "1.5", "ok": "true"},
        {"n": "2", "ok": "false"},
        {"n": "3", "name": "c", "value": "2.25"},
    ]


def test_stream_column_fields_map_explicit_ids_and_maxlen(spark, rivulet: Target) -> None:
    a, b = rivulet.key("sink:a"), rivulet.key("sink:b")
    rows = [(a if i % 2 else b, f"{100 + i}-1", {"i": str(i), "none": None}) for i in range(300)]
    df = spark.createDataFrame(rows, "stream STRING, id STRING, fields MAP<STRING,STRING>").coalesce(1)
    save(df, rivulet, idColumn="id")
    got_a = rivulet.r.xrange(a)
    assert [entry_id for entry_id, _ in got_a] == [f"{100 + i}-1" for i in range(1, 300, 2)]
    assert got_a[0][1] == {"i": "1"}  # the map's null value is left out
    assert rivulet.r.xlen(b) == 150

    # maxlen trims approximately (whole nodes) but never below the bound.
    c = rivulet.key("sink:c")
    df = spark.range(2000).selectExpr("cast(id as string) as n").coalesce(1)
    save(df, rivulet, stream=c, maxlen="100")
    length = rivulet.r.xlen(c)
    assert 100 <= length < 2000
    assert rivulet.r.xrevrange(c, count=1)[0][1] == {"n": "1999"}
    save(df.limit(150), rivulet, stream=c, maxlen="100", approximate="false")
    assert rivulet.r.xlen(c) == 100


def test_sink_round_trip_through_source(spark, target: Target) -> None:
    src, dst = target.key("copy:src"), target.key("copy:dst")
    pipe = target.r.pipeline(transaction=False)
    for i in range(500):
        pipe.xadd(src, {"n": str(i), "k": "v"})
    pipe.execute()
    df = spark.read.format("redis_streams").option("url", target.url).option("streams", src).load()
    save(df, target, stream=dst)  # the `fields` map becomes the entry's fields
    assert sorted(int(f["n"]) for _, f in target.r.xrange(dst)) == list(range(500))


@pytest.mark.parametrize("mode", ["marker", "auto"])
def test_idempotent_batch_write_survives_retry(spark, rivulet: Target, mode: str) -> None:
    """`auto` is XADD IDMP here: 250 rows per task, more than the 100 pairs a producer keeps by
    default, so the retried task's first rows are only found again through the producer blocks."""
    df = spark.range(0, 1000, numPartitions=4).selectExpr("cast(id as string) as n")
    # Without idempotency a task that fails after its XADDs are in duplicates them on retry.
    plain = rivulet.key("sink:plain")
    save(df, rivulet, stream=plain, injectFailureKey=rivulet.key("inj"))
    assert rivulet.r.xlen(plain) == 1250

    once = rivulet.key("sink:once")
    marker = rivulet.key("inj")
    markers_before = set(rivulet.r.scan_iter(match="rivulet:spark:sink:*"))
    opts = {"stream": once, "idempotent": "true", "idempotentMode": mode}
    save(df, rivulet, writeId="job-1", injectFailureKey=marker, **opts)
    assert rivulet.r.exists(marker)
    assert rivulet.r.xlen(once) == 1000
    assert sorted(int(f["n"]) for _, f in rivulet.r.xrange(once)) == list(range(1000))
    markers = set(rivulet.r.scan_iter(match="rivulet:spark:sink:*")) - markers_before
    fields = rivulet.r.xinfo_stream(once)
    if mode == "auto":
        assert not markers
        assert fields["iids-duplicates"] == 250  # the retried task, every row answered
        assert fields["pids-tracked"] == 4 * 3  # (writeId, partition, block of 100 rows)
    else:
        assert len(markers) == 4
        assert fields["iids-added"] == 0
    # Re-running the same job (same writeId) writes nothing; a new writeId writes again.
    save(df, rivulet, writeId="job-1", **opts)
    assert rivulet.r.xlen(once) == 1000
    save(df, rivulet, writeId="job-2", **opts)
    assert rivulet.r.xlen(once) == 2000


@pytest.mark.parametrize("mode", ["marker", "auto"])
def test_idempotent_streaming_sink_exactly_once(spark, target: Target, tmp_path, mode: str) -> None:
    """Marker mode everywhere; `auto` is XADD IDMP on Rivulet and the marker mode on Redis 7."""
    src, dst = target.key("ss:src"), target.key("ss:dst")
    pipe = target.r.pipeline(transaction=False)
    for i in range(300):
        pipe.xadd(src, {"n": str(i)}, id=f"{1000 + i}-0")
    pipe.execute()
    marker = target.key("ss:inj")

    def run(**extra: str) -> None:
        query = (
            spark.readStream.format("redis_streams").option("url", target.url).option("streams", src)
            .option("startingOffsets", "earliest").option("maxEntriesPerTrigger", "120")
            .option("partitionsPerStream", "2").load()
            .writeStream.format("redis_streams").option("url", target.url).option("stream", dst)
            .option("idempotent", "true").option("idempotentMode", mode)
            .options(**extra)
            .option("checkpointLocation", os.path.join(str(tmp_path), "cp"))
            .trigger(availableNow=True).start()
        )
        try:
            query.awaitTermination(120)
        finally:
            query.stop()
        assert query.exception() is None

    markers_before = set(target.r.scan_iter(match="rivulet:spark:sink:*"))
    run(injectFailureKey=marker)
    assert target.r.exists(marker)
    got = sorted(int(f["n"]) for _, f in target.r.xrange(dst))
    assert got == list(range(300))
    # Markers are per (query, batch, partition) and expire; XADD IDMP needs none.
    markers = set(target.r.scan_iter(match="rivulet:spark:sink:*")) - markers_before
    if mode == "auto" and target.name == "rivulet":
        assert not markers
        assert target.r.xinfo_stream(dst)["iids-duplicates"] > 0  # the retried task's rows, answered from the pairs
    else:
        assert markers and all(0 < target.r.ttl(m) <= 7 * 24 * 3600 for m in markers)
    for i in range(300, 350):
        target.r.xadd(src, {"n": str(i)}, id=f"{1000 + i}-0")
    run()
    assert sorted(int(f["n"]) for _, f in target.r.xrange(dst)) == list(range(350))


def test_sink_option_errors(spark, rivulet: Target) -> None:
    df = spark.createDataFrame([(1,)], "n INT")
    with pytest.raises(Exception, match="set the option stream or give the data a `stream` column"):
        save(df, rivulet)
    with pytest.raises(Exception, match="idColumn 'id' is not a column"):
        save(df, rivulet, stream="x", idColumn="id")
