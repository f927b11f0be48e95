"""Throughput of reads that count as key accesses (GET, which updates the key's access data for
OBJECT IDLETIME / FREQ) and of the generic TOUCH, with redis-benchmark."""

from __future__ import annotations

from bench.case import Options
from bench.redis_benchmark import run_redis_benchmark
from bench.resp import RespClient
from bench.stats import Metric, Sample
from bench.targets import Target
from bench.throughput import RedisBenchmarkCase, requests_for

SHAPES = [(50, 1), (50, 16)]  # (clients, pipeline)
KEYS = 1000


class KeyAccessCase(RedisBenchmarkCase):
    name = "key-access"
    metrics = [Metric(f"{cmd}.c{c}.P{p}", "ops/s", True,
                      f"{cmd.upper()} of one of {KEYS} string keys, {c} clients, pipeline {p}")
               for cmd in ("get", "touch") for c, p in SHAPES]

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        with RespClient(target.port) as client:
            client.call("FLUSHALL")
            client.pipeline([("SET", f"key:{i:012d}", "value") for i in range(KEYS)])
            if client.call("TOUCH", "key:000000000001") != 1:
                raise RuntimeError("TOUCH did not find the key")
        samples = {}
        for cmd in ("get", "touch"):
            for clients, pipeline in SHAPES:
                samples[f"{cmd}.c{clients}.P{pipeline}"] = run_redis_benchmark(
                    target, requests_for(opts, clients, pipeline), clients, pipeline,
                    command=["-r", str(KEYS), cmd, "key:__rand_int__"])
        return samples

