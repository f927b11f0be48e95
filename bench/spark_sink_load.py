"""The Spark sink's load without Spark (`python -m bench.spark_sink_load`; needs the [spark] extra).

Each of `--partitions` processes plays one Spark task: it builds the Arrow batches Spark hands a
Python data source writer (10,000 rows each, the columns of bench/spark_bench.py's sink rows) and
runs the sink's own writer on them (spark/writer.py), so the commands, their pipelining and the
connections are exactly the sink's. What is left out is the JVM and the Python workers' share of
the cores, which is what makes this the steadier figure for the server's part. Reported per mode
and server: entries/s over the wall time of all tasks, and server CPU microseconds per entry.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import time
from decimal import Decimal
from typing import Any

import redis

from bench.procstat import CpuMeter
from bench.targets import REDIS, RIVULET, redis_available, start

ARROW_BATCH_ROWS = 10_000  # spark.sql.execution.arrow.maxRecordsPerBatch


def _batches(first: int, n: int) -> list[Any]:
    import pyarrow as pa

    out = []
    for lo in range(first, first + n, ARROW_BATCH_ROWS):
        ids = range(lo, min(lo + ARROW_BATCH_ROWS, first + n))
        out.append(pa.RecordBatch.from_arrays(
            [pa.array([f"sensor-{i % 10}" for i in ids]), pa.array([str(i) for i in ids]),
             pa.array([Decimal(20.5) + i % 7 for i in ids], type=pa.decimal128(22, 1))],
            names=["sensor", "seq", "temperature"]))
    return out


def _task(url: str, key: str, options: dict[str, str], partition: int, batches: list[Any],
          ready: Any, go: Any) -> None:
    from spark.options import parse_write_options
    from spark.writer import RowLayout, _Writer

    opts = parse_write_options({"url": url, "stream": key, **options})
    layout = RowLayout(None, None, None, tuple(batches[0].schema.names))
    writer = _Writer(opts, layout, f"{key}:{partition}")
    ready.release()
    go.wait()
    writer.write_batches(iter(batches), "0")


def run_once(port: int, key: str, options: dict[str, str], n: int, partitions: int) -> float:
    """Seconds for `partitions` concurrent tasks to write n rows to key (n / partitions each)."""
    url = f"redis://127.0.0.1:{port}/0"
    per = n // partitions
    ctx = mp.get_context("fork")
    ready = ctx.Semaphore(0)
    go = ctx.Event()
    procs = [ctx.Process(target=_task, args=(url, key, options, p, _batches(p * per, per), ready, go))
             for p in range(partitions)]
    for p in procs:
        p.start()
    for _ in procs:
        ready.acquire()
    t0 = time.perf_counter()
    go.set()
    for p in procs:
        p.join()
        if p.exitcode:
            raise RuntimeError(f"a sink task failed (exit code {p.exitcode})")
    return time.perf_counter() - t0


MODES = {"plain": {}, "marker": {"idempotent": "true", "idempotentMode": "marker"},
         "idmp": {"idempotent": "true", "idempotentMode": "idmp"}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--servers", default=f"{RIVULET},{REDIS}")
    args = parser.parse_args()
    servers = [s for s in args.servers.split(",") if s != REDIS or redis_available()]
    modes = {m: MODES[m] for m in args.modes.split(",")}
    # XADD IDMP is Redis 8.6's: the Redis here (7.x) has only the other two.
    print(f"sink load without Spark: {args.entries} entries, {args.partitions} tasks, "
          f"median of {args.runs}")
    for mode, options in modes.items():
        for name in servers:
            if mode == "idmp" and name == REDIS:
                continue
            rates, cpus = [], []
            with start(name) as target:
                for run in range(args.runs + 1):
                    key = f"out:{mode}:{run}"
                    meter = CpuMeter(target.pid).start()
                    seconds = run_once(target.port, key, options, args.entries, args.partitions)
                    cpu = meter.stop()
                    written = redis.Redis(port=target.port).xlen(key)
                    assert written == args.entries, (name, mode, written)
                    if run:  # the first run warms up the server
                        rates.append(args.entries / seconds)
                        cpus.append(cpu / args.entries * 1e6)
            print(f"  {mode:<11} {name:<8} {statistics.median(rates):>10,.0f} entries/s  "
                  f"{statistics.median(cpus):5.2f} us server CPU/entry  "
                  f"(runs: {', '.join(f'{r:,.0f}' for r in rates)})", flush=True)


if __name__ == "__main__":
    main()
