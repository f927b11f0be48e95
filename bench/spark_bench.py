"""Spark source and sink throughput (`python -m bench.spark_bench`; needs the [spark] extra + Java).

Source: a batch read of N entries through `redis_streams` into Spark's `noop` sink (so only the
read path is measured), and a streaming availableNow read of the same entries. Sink: N rows
written with `df.write.format("redis_streams")`: plain, idempotent with marker keys, and
idempotent with XADD IDMP where the server has it. Each figure is entries/second over the Spark
job's wall time, on fresh Rivulet and redis-server processes; the sinks also report the server's
CPU time per entry, the figure a busy machine disturbs least.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

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


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def bench_target(spark, name: str, n: int, partitions: int, runs: int
                 ) -> dict[str, tuple[float, float | None]]:
    """entries/s per way, with the server's CPU microseconds per entry for the sinks (medians of
    `runs` runs after one untimed run)."""
    results: dict[str, tuple[float, float | None]] = {}
    with start(name) as target:
        url = f"redis://127.0.0.1:{target.port}/0"
        _fill(target.port, "bench", n)

        def batch_read() -> None:
            (spark.read.format("redis_streams").option("url", url).option("streams", "bench")
             .option("partitionsPerStream", str(partitions)).option("batchSize", "2000")
             .load().write.format("noop").mode("overwrite").save())

        batch_read()  # warm-up: Python workers, JIT
        results["source batch (noop)"] = (n / _timed(batch_read), None)

        def stream_read() -> None:
            with tempfile.TemporaryDirectory() as cp:
                q = (spark.readStream.format("redis_streams").option("url", url).option("streams", "bench")
                     .option("startingOffsets", "earliest").option("partitionsPerStream", str(partitions))
                     .option("batchSize", "2000").load()
                     .writeStream.format("noop").option("checkpointLocation", cp)
                     .trigger(availableNow=True).start())
                q.awaitTermination()

        # Each way is run once untimed first: a Spark query's first run in the JVM loads and
        # compiles its classes, which would count against whichever server is measured first.
        stream_read()
        results["source stream availableNow (noop)"] = (n / _timed(stream_read), None)

        rows = spark.range(n, numPartitions=partitions).selectExpr(
            "concat('sensor-', cast(id % 10 as string)) as sensor", "cast(id as string) as seq",
            "20.5 + (id % 7) as temperature").cache()
        rows.count()
        probe = redis.Redis(port=target.port)
        ways = [("sink", {}), ("sink idempotent marker", {"idempotent": "true", "idempotentMode": "marker"})]
        if server_has_idmp(probe):
            ways.append(("sink idempotent idmp", {"idempotent": "true", "idempotentMode": "idmp"}))
        for label, options in ways:
            rates, cpus = [], []
            for run in range(runs + 1):
                key = f"out:{label}:{run}"
                meter = CpuMeter(target.pid).start()

                def write(key: str = key, options: dict = options) -> None:
                    w = rows.write.format("redis_streams").mode("append").option("url", url).option("stream", key)
                    for k, v in options.items():
                        w = w.option(k, v)
                    w.save()

                seconds = _timed(write)
                cpu = meter.stop()
                assert probe.xlen(key) == n
                probe.delete(key)
                if run:  # the first run warms up the JVM's and the workers' code for this way
                    rates.append(n / seconds)
                    cpus.append(cpu / n * 1e6)
            results[label] = (statistics.median(rates), statistics.median(cpus))
        probe.close()
        rows.unpersist()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3, help="timed runs per sink way (median)")
    parser.add_argument("--redis-first", action="store_true", help="measure redis-server first")
    args = parser.parse_args()
    spark = _spark()
    names = [RIVULET] + ([REDIS] if redis_available() else [])
    if args.redis_first:
        names.reverse()
    print(f"Spark redis_streams throughput, {args.entries} entries, {args.partitions} partitions "
          f"(entries/s; sinks: median of {args.runs}, server CPU per entry)")
    table: dict[str, dict[str, tuple[float, float | None]]] = {}
    for name in names:
        table[name] = bench_target(spark, name, args.entries, args.partitions, args.runs)
        for label, (rate, cpu) in table[name].items():
            extra = f"  {cpu:5.2f} us server CPU/entry" if cpu is not None else ""
            print(f"  {name:<8} {label:<36} {rate:>10,.0f}{extra}", flush=True)
    if len(table) == 2:
        for label, (rate, _) in table[RIVULET].items():
            if label in table[REDIS]:
                print(f"  rivulet/redis {label:<31} {rate / table[REDIS][label][0]:>10.2f}x")
        if "sink idempotent idmp" in table[RIVULET]:
            idmp = table[RIVULET]["sink idempotent idmp"][0]
            print(f"  rivulet idmp/marker idempotent sink        {idmp / table[RIVULET]['sink idempotent marker'][0]:>10.2f}x")
    spark.stop()


if __name__ == "__main__":
    main()
