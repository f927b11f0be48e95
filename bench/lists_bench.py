"""Lists: LPUSH / RPOP throughput (redis-benchmark's own tests), the BLPOP hand-off latency, and
memory per element of one long list."""

from __future__ import annotations

import multiprocessing
import statistics
import time
from typing import Any

from bench.case import Case, Options
from bench.memory import measure_load, send_batches
from bench.procstat import CpuMeter
from bench.redis_benchmark import run_redis_benchmark
from bench.resp import RespClient, encode
from bench.stats import Metric, Sample
from bench.targets import Target
from bench.throughput import RedisBenchmarkCase, requests_for

LIST_SHAPES = [(50, 1), (50, 16)]  # (clients, pipeline)


def list_metric(test: str, clients: int, pipeline: int) -> str:
    return f"{test}.c{clients}.P{pipeline}"


class ListPushPopCase(RedisBenchmarkCase):
    """redis-benchmark -t lpush, then -t rpop on the list it built (its key `mylist`, 3-byte
    elements), for each shape."""

    name = "lists"
    metrics = [Metric(list_metric(t, c, p), "ops/s", True,
                      f"{t.upper()} mylist xxx, {c} clients, pipeline {p}")
               for c, p in LIST_SHAPES for t in ("lpush", "rpop")]

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        samples = {}
        for clients, pipeline in LIST_SHAPES:
            with RespClient(target.port) as client:
                client.call("FLUSHALL")
            n = requests_for(opts, clients, pipeline)
            for test in ("lpush", "rpop"):
                samples[list_metric(test, clients, pipeline)] = run_redis_benchmark(
                    target, n, clients, pipeline, tests=test)
        return samples


HANDOFF_KEY = "bench:handoff"
HANDOFFS = 2000
PUSH_INTERVAL = 0.002  # seconds between pushes: the popper is parked again before each


def _popper(port: int, n: int, results: Any) -> None:
    client = RespClient(port)
    command = encode("BLPOP", HANDOFF_KEY, 0)
    waits: list[float] = []
    for _ in range(n):
        client.send(command)
        reply = client.read_replies(1)[0]
        waits.append((time.time() - float(reply[1])) * 1e6)
    client.close()
    results.put(waits)


class BlpopHandoffCase(Case):
    """A client parked in BLPOP and another that LPUSHes the send time every 2 ms: the time from
    the push being sent to the popper holding the element, median of the hand-offs."""

    name = "blpop-handoff"
    metrics = [Metric("blpop.handoff.p50", "us", False,
                      f"LPUSH -> woken BLPOP reply, median of {HANDOFFS} hand-offs"),
               Metric("blpop.handoff.p99", "us", False, "99th percentile of the same")]
    default_repeat = 3

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        ctx = multiprocessing.get_context("fork")
        results = ctx.Queue()
        popper = ctx.Process(target=_popper, args=(target.port, HANDOFFS, results))
        cpu = CpuMeter(target.pid)
        with RespClient(target.port) as pusher:
            pusher.call("DEL", HANDOFF_KEY)
            popper.start()
            time.sleep(0.2)
            cpu.start()
            for _ in range(HANDOFFS):
                pusher.call("LPUSH", HANDOFF_KEY, repr(time.time()))
                time.sleep(PUSH_INTERVAL)
            waits = sorted(results.get(timeout=60))
            used = cpu.stop()
        popper.join(10)
        p50 = statistics.median(waits)
        p99 = waits[min(len(waits) - 1, int(len(waits) * 0.99))]
        return {"blpop.handoff.p50": Sample(p50, len(waits), used),
                "blpop.handoff.p99": Sample(p99, len(waits), used)}


MEMORY_KEY = "bench:list"
PER_PUSH = 100  # elements per RPUSH while loading


def element(i: int) -> str:
    return f"job:{i:08d}"  # 12 bytes, as an id in a work queue


class ListMemoryCase(Case):
    """Bytes per element of one list of N elements (RPUSH, 100 per command)."""

    name = "list-memory"
    metrics = [Metric("memory.list_element", "B/element", False,
                      "bytes per element after RPUSHing N 12-byte elements to one list",
                      max_ratio=2.0)]
    default_repeat = 1
    fresh_server_per_run = True

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        n = opts.entries
        rpushes = (encode("RPUSH", MEMORY_KEY, *[element(j) for j in range(i, min(i + PER_PUSH, n))])
                   for i in range(0, n, PER_PUSH))

        def check(client: RespClient) -> None:
            length = client.call("LLEN", MEMORY_KEY)
            if length != n:
                raise RuntimeError(f"LLEN is {length} after RPUSHing {n} elements")
            if client.call("LINDEX", MEMORY_KEY, n // 2) != element(n // 2).encode():
                raise RuntimeError("LINDEX of the middle element is wrong")

        return {"memory.list_element": measure_load(
            target, n, lambda client: send_batches(client, rpushes, 50), check, {"elements": n})}
