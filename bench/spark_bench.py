"""Spark source and sink throughput (`python -m bench.spark_bench`; needs the [spark] extra + Java).

Source: a batch read of N entries through `redis_streams` into Spark's `noop` sink (so only the
read path is measured), and a streaming availableNow read of the same entries. Sink: N rows
written with `df.write.format("redis_streams")`: plain, idempotent with marker keys, and
idempotent with XADD IDMP where the server has it. Each figure is entries/second over the Spark
job's wall time, on fresh Rivulet and redis-server processes running side by side, with the
server's CPU time per entry, the figure a busy machine disturbs least.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack

import redis

from bench.procstat import CpuMeter
from bench.targets import REDIS, RIVULET, redis_available, start
from spark.writer import server_has_idmp


def _spark():
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from spark import register

    session = (SparkSession.builder.master("local[2]").appName("rivulet-spark-bench")
               .config("spark.driver.memory", "1g").config("spark.sql.shuffle.partitions", "2")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    return session


def _fill(port: int, key: str, n: int) -> None:
    r = redis.Redis(port=port)
    pipe = r.pipeline(transaction=False)
    for i in range(n):
        pipe.xadd(key, {"sensor": f"sensor-{i % 10}", "temperature": f"{20 + i % 7}.5", "seq": str(i)})
        if len(pipe) >= 5000:
            pipe.execute()
    pipe.execute()
    r.close()


Result = tuple[float, float]  # entries/s, server CPU microseconds per entry


def bench_targets(spark, names: list[str], n: int, partitions: int, runs: int
                  ) -> dict[str, dict[str, Result]]:
    """Every way on every server: medians of `runs` runs after one untimed run each.

    The servers run side by side and take turns within each way (A B, then B A, ...): the JVM
    keeps compiling and the machine's load drifts during a bench, and measuring one server's
    ways all before the other's gave the first one 0.3x-2.4x of the second's figures on the very
    same source, depending on which went first.
    """
    rows = spark.range(n, numPartitions=partitions).selectExpr(
        "concat('sensor-', cast(id % 10 as string)) as sensor", "cast(id as string) as seq",
        "20.5 + (id % 7) as temperature").cache()
    rows.count()

    def batch_read(url: str, key: str, options: dict) -> None:
        (spark.read.format("redis_streams").option("url", url).option("streams", "bench")
         .option("partitionsPerStream", str(partitions)).option("batchSize", "2000")
         .load().write.format("noop").mode("overwrite").save())

    def stream_read(url: str, key: str, options: dict) -> None:
        with tempfile.TemporaryDirectory() as cp:
            q = (spark.readStream.format("redis_streams").option("url", url).option("streams", "bench")
                 .option("startingOffsets", "earliest").option("partitionsPerStream", str(partitions))
                 .option("batchSize", "2000").load()
                 .writeStream.format("noop").option("checkpointLocation", cp)
                 .trigger(availableNow=True).start())
            q.awaitTermination()

    def write(url: str, key: str, options: dict) -> None:
        w = rows.write.format("redis_streams").mode("append").option("url", url).option("stream", key)
        for k, v in options.items():
            w = w.option(k, v)
        w.save()

    ways = [
        ("source batch (noop)", batch_read, {}),
        ("source stream availableNow (noop)", stream_read, {}),
        ("sink", write, {}),
        ("sink idempotent marker", write, {"idempotent": "true", "idempotentMode": "marker"}),
        ("sink idempotent idmp", write, {"idempotent": "true", "idempotentMode": "idmp"}),
    ]
    results: dict[str, dict[str, Result]] = {name: {} for name in names}
    with ExitStack() as stack:
        targets = [stack.enter_context(start(name)) for name in names]
        clients = {t.name: stack.enter_context(redis.Redis(port=t.port)) for t in targets}
        idmp = {t.name: server_has_idmp(clients[t.name]) for t in targets}
        for t in targets:
            _fill(t.port, "bench", n)
        for label, fn, options in ways:
            here = [t for t in targets if idmp[t.name] or "idmp" not in label]
            samples: dict[str, tuple[list[float], list[float]]] = {t.name: ([], []) for t in here}
            for run in range(runs + 1):
                for t in (here if run % 2 else here[::-1]):
                    key = f"out:{label}:{run}"
                    meter = CpuMeter(t.pid).start()
                    t0 = time.perf_counter()
                    fn(f"redis://127.0.0.1:{t.port}/0", key, options)
                    seconds = time.perf_counter() - t0
                    cpu = meter.stop()
                    if fn is write:
                        assert clients[t.name].xlen(key) == n
                        clients[t.name].delete(key)
                    if run:  # the first run of each way loads and compiles its code in the JVM
                        samples[t.name][0].append(n / seconds)
                        samples[t.name][1].append(cpu / n * 1e6)
            for name, (rates, cpus) in samples.items():
                results[name][label] = (statistics.median(rates), statistics.median(cpus))
    rows.unpersist()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3, help="timed runs per sink way (median)")
    args = parser.parse_args()
    spark = _spark()
    names = [RIVULET] + ([REDIS] if redis_available() else [])
    print(f"Spark redis_streams throughput, {args.entries} entries, {args.partitions} partitions "
          f"(entries/s and server CPU per entry, medians of {args.runs}, the servers taking turns)")
    table = bench_targets(spark, names, args.entries, args.partitions, args.runs)
    for name in names:
        for label, (rate, cpu) in table[name].items():
            print(f"  {name:<8} {label:<36} {rate:>10,.0f}  {cpu:5.2f} us server CPU/entry")
    if len(table) == 2:
        for label, (rate, _) in table[RIVULET].items():
            if label in table[REDIS]:
                print(f"  rivulet/redis {label:<31} {rate / table[REDIS][label][0]:>10.2f}x")
    ours = table[RIVULET]
    if "sink idempotent idmp" in ours:
        ratio = ours["sink idempotent idmp"][0] / ours["sink idempotent marker"][0]
        print(f"  rivulet idempotent sink, idmp/marker{ratio:>22.2f}x")
    spark.stop()


if __name__ == "__main__":
    main()
