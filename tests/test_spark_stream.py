"""Streaming reads: checkpointed offsets, limits, availableNow, retries, data loss, group mode."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.spark_conftest import Target

pytest_plugins = ["tests.spark_conftest"]


def fill(target: Target, key: str, n: int, start_ms: int, step: int = 1) -> list[str]:
    pipe = target.r.pipeline(transaction=False)
    ids = [f"{start_ms + i * step}-0" for i in range(n)]
    for i, entry_id in enumerate(ids):
        pipe.xadd(key, {"n": str(i)}, id=entry_id)
    pipe.execute()
    return ids


def run(spark, target: Target, workdir: str, **options: str) -> list[int]:
    """One availableNow run into a parquet sink (Spark's exactly-once file sink); returns the
    number of input rows of each micro-batch."""
    reader = spark.readStream.format("redis_streams").option("url", target.url)
    for name, value in options.items():
        reader = reader.option(name, value)
    query = (
        reader.load().writeStream.format("parquet")
        .option("path", os.path.join(workdir, "out"))
        .option("checkpointLocation", os.path.join(workdir, "checkpoint"))
        .trigger(availableNow=True).start()
    )
    try:
        query.awaitTermination(120)
    finally:
        query.stop()
    return [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]


def output_ids(spark, workdir: str) -> list[tuple[str, str]]:
    path = os.path.join(workdir, "out")
    if not os.path.exists(path):
        return []
    return [(r.stream, r.id) for r in spark.read.parquet(path).select("stream", "id").collect()]


def test_available_now_limits_and_restart(spark, target: Target, tmp_path) -> None:
    a, b = target.key("avail:a"), target.key("avail:b")
    ids_a = fill(target, a, 150, start_ms=1_000, step=2)  # even ms
    ids_b = fill(target, b, 100, start_ms=1_001, step=2)  # odd ms, interleaved in time with a
    work = str(tmp_path)
    batches = run(spark, target, work, streams=f"{a},{b}", startingOffsets="earliest",
                  maxEntriesPerTrigger="100", batchSize="30")
    assert batches == [100, 100, 50]
    first = output_ids(spark, work)
    assert sorted(first) == sorted([(a, i) for i in ids_a] + [(b, i) for i in ids_b])

    # Restart from the checkpoint after more data arrived: only the new entries, once each.
    more_a = fill(target, a, 30, start_ms=5_000)
    more_b = fill(target, b, 40, start_ms=5_000)
    batches = run(spark, target, work, streams=f"{a},{b}", startingOffsets="earliest",
                  maxEntriesPerTrigger="100", batchSize="30")
    assert batches == [70]
    got = output_ids(spark, work)
    assert len(got) == len(set(got)) == 320
    assert set(got) == set(first) | {(a, i) for i in more_a} | {(b, i) for i in more_b}
    # Nothing new: a third run reads nothing.
    assert run(spark, target, work, streams=f"{a},{b}", maxEntriesPerTrigger="100") == []


def test_starting_latest_skips_existing_entries(spark, rivulet: Target, tmp_path) -> None:
    key = rivulet.key("latest")
    fill(rivulet, key, 10, start_ms=1_000)
    work = str(tmp_path)
    assert run(spark, rivulet, work, streams=key) == []  # default startingOffsets=latest
    new = fill(rivulet, key, 5, start_ms=2_000)
    assert run(spark, rivulet, work, streams=key) == [5]
    assert sorted(i for _, i in output_ids(spark, work)) == new


def test_task_failure_mid_batch_is_retried_exactly_once(spark, rivulet: Target, tmp_path) -> None:
    a, b = rivulet.key("fail:a"), rivulet.key("fail:b")
    ids = fill(rivulet, a, 120, start_ms=1_000) + fill(rivulet, b, 80, start_ms=1_000)
    marker = rivulet.key("fail:marker")
    work = str(tmp_path)
    # The first task to finish its first page (10 entries) raises; Spark retries it.
    batches = run(spark, rivulet, work, streams=f"{a},{b}", startingOffsets="earliest",
                  partitionsPerStream="2", batchSize="10", injectFailureKey=marker)
    assert rivulet.r.exists(marker), "the failure was never injected"
    assert sum(batches) == 200
    got = output_ids(spark, work)
    assert len(got) == len(set(got)) == 200
    assert sorted(i for _, i in got) == sorted(ids)


def test_pattern_picks_up_new_streams_from_their_start(spark, rivulet: Target, tmp_path) -> None:
    prefix = rivulet.key("disc")
    fill(rivulet, f"{prefix}:1", 5, start_ms=1_000)
    work = str(tmp_path)
    assert run(spark, rivulet, work, pattern=f"{prefix}:*", startingOffsets="earliest") == [5]
    # A stream created after the query started is read from its first entry.
    fill(rivulet, f"{prefix}:2", 7, start_ms=500)
    fill(rivulet, f"{prefix}:1", 2, start_ms=9_000)
    assert run(spark, rivulet, work, pattern=f"{prefix}:*", startingOffsets="earliest") == [9]
    got = output_ids(spark, work)
    assert sorted(s for s, _ in got).count(f"{prefix}:2") == 7
    assert len(got) == len(set(got)) == 14


def test_data_loss_detected_after_xtrim(spark, target: Target, tmp_path) -> None:
    key = target.key("trim")
    fill(target, key, 20, start_ms=1_000)
    work = str(tmp_path)
    assert run(spark, target, work, streams=key, startingOffsets="earliest") == [20]
    # 30 more, then trim to the last 10: 20 entries the query never read are gone.
    fill(target, key, 30, start_ms=2_000)
    target.r.xtrim(key, maxlen=10, approximate=False)
    with pytest.raises(Exception, match=r"data loss in stream .*20 entries were trimmed"):
        run(spark, target, work, streams=key)
    # failOnDataLoss=false logs and goes on with what remains.
    assert run(spark, target, work, streams=key, failOnDataLoss="false") == [10]
    assert len(output_ids(spark, work)) == 30

    # Trimming entries the query has already read is not data loss.
    fill(target, key, 5, start_ms=3_000)
    target.r.xtrim(key, maxlen=3, approximate=False)
    with pytest.raises(Exception, match="data loss"):
        run(spark, target, work, streams=key)  # 2 of the 5 new ones were trimmed unread
    fill(target, key, 4, start_ms=4_000)
    # The loss was caught while planning, so no batch was logged: one batch of 3 + 4 follows.
    assert run(spark, target, work, streams=key, failOnDataLoss="false") == [7]
    target.r.xtrim(key, maxlen=1, approximate=False)  # only already-read entries go
    fill(target, key, 2, start_ms=5_000)
    assert run(spark, target, work, streams=key) == [2]


def run_group(spark, target: Target, key: str, workdir: str, **options: str) -> list[tuple[list[str], int]]:
    """An availableNow group-mode run; per batch: the IDs read and what XPENDING showed for our
    consumer while the batch was being processed."""
    seen: list[tuple[list[str], int]] = []

    def each(df, batch_id: int) -> None:
        pending = target.r.xpending(key, "g")
        mine = {c["name"]: c["pending"] for c in pending["consumers"]}.get("spark-1", 0)
        seen.append((sorted(r.id for r in df.select("id").collect()), mine))

    reader = spark.readStream.format("redis_streams").option("url", target.url)
    for name, value in {"streams": key, "group": "g", "consumer": "spark-1", **options}.items():
        reader = reader.option(name, value)
    query = (reader.load().writeStream.foreachBatch(each)
             .option("checkpointLocation", os.path.join(workdir, "checkpoint"))
             .trigger(availableNow=True).start())
    try:
        query.awaitTermination(120)
    finally:
        query.stop()
    return [s for s in seen if s[0]]


def test_group_mode_claims_and_acks_on_commit(spark, target: Target, tmp_path) -> None:
    key = target.key("grp")
    ids = fill(target, key, 30, start_ms=1_000)
    target.r.xgroup_create(key, "g", id="0")
    # Another member of the group takes the first 5 entries: the query must not process them.
    target.r.xreadgroup("g", "other", {key: ">"}, count=5)
    work = str(tmp_path)
    batches = run_group(spark, target, key, work, maxEntriesPerTrigger="10")
    assert [b[0] for b in batches] == [ids[5:15], ids[15:25], ids[25:30]]
    # While a batch runs, its entries are pending for our consumer (claimed by XREADGROUP); the
    # previous batch was XACKed when Spark committed it, i.e. when it planned this one.
    assert [b[1] for b in batches] == [10, 10, 5]
    groups = {g["name"]: g for g in target.r.xinfo_groups(key)}
    assert groups["g"]["last-delivered-id"] == ids[-1]
    consumers = {c["name"]: c["pending"] for c in target.r.xinfo_consumers(key, "g")}
    assert consumers == {"other": 5, "spark-1": 0}

    # A restarted query (same checkpoint) reads only the new entries.
    new = fill(target, key, 4, start_ms=9_000)
    batches = run_group(spark, target, key, work)
    assert [b[0] for b in batches] == [new]
    consumers = {c["name"]: c["pending"] for c in target.r.xinfo_consumers(key, "g")}
    assert consumers == {"other": 5, "spark-1": 0}
