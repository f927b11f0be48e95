"""Sorted sets: ZADD throughput, ZRANGE 0 -1 WITHSCORES over a 1,000-member set, and memory per
member of one large sorted set (1,000,000 members by default: --entries)."""

from __future__ import annotations

from collections.abc import Iterator

from bench.case import Case, Options
from bench.memory import measure_load, send_batches
from bench.resp import RespClient, encode
from bench.stats import Metric, Sample
from bench.targets import Target
from bench.throughput import RedisBenchmarkCase, check_command, requests_for, run_redis_benchmark

ZADD_SHAPES = [(50, 1), (50, 16)]  # (clients, pipeline)
ZRANGE_MEMBERS = 1000
MEMORY_KEY = "bench:zset"
PAIRS_PER_ZADD = 100


def zadd_metric(clients: int, pipeline: int) -> str:
    return f"zadd.c{clients}.P{pipeline}"


class ZaddCase(RedisBenchmarkCase):
    name = "zadd"
    metrics = [Metric(zadd_metric(c, p), "ops/s", True,
                      f"ZADD z <random score> <one of 100,000 members>, {c} clients, pipeline {p}")
               for c, p in ZADD_SHAPES]

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        check_command(target, "ZADD", "z", "1", "m")
        samples = {}
        for clients, pipeline in ZADD_SHAPES:
            with RespClient(target.port) as client:
                client.call("FLUSHALL")
            # -r: __rand_int__ spans 100,000 values, so the set grows and members get new scores.
            samples[zadd_metric(clients, pipeline)] = run_redis_benchmark(
                target, requests_for(opts, clients, pipeline), clients, pipeline,
                command=["-r", "100000", "zadd", "z", "__rand_int__", "m:__rand_int__"])
        return samples


class ZrangeCase(RedisBenchmarkCase):
    name = "zrange"
    metrics = [Metric("zrange.withscores", "ops/s", True,
                      f"ZRANGE z 0 -1 WITHSCORES on a {ZRANGE_MEMBERS}-member set, 50 clients")]

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        with RespClient(target.port) as client:
            client.call("FLUSHALL")
            pairs: list[str | int] = []
            for i in range(ZRANGE_MEMBERS):
                # Scores as an application keeps them: timestamps with a fractional part.
                pairs += [f"{1700000000 + i * 7}.{i % 1000:03d}", f"member:{i}"]
            client.call("ZADD", "z", *pairs)
            if len(client.call("ZRANGE", "z", "0", "-1", "WITHSCORES")) != 2 * ZRANGE_MEMBERS:
                raise RuntimeError("ZRANGE WITHSCORES did not return every member")
        return {"zrange.withscores": run_redis_benchmark(
            target, max(opts.requests // 5, 1), 50, 1,
            command=["zrange", "z", "0", "-1", "WITHSCORES"])}


class ZsetMemoryCase(Case):
    name = "zset-memory"
    metrics = [Metric("memory.zset_member", "B/member", False,
                      "bytes per member of one sorted set of N members (`member:<i>`, score i)",
                      max_ratio=2.0)]
    default_repeat = 1
    fresh_server_per_run = True

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        n = opts.entries

        def zadds() -> Iterator[bytes]:
            for done in range(0, n, PAIRS_PER_ZADD):
                pairs: list[str | int] = []
                for i in range(done, min(done + PAIRS_PER_ZADD, n)):
                    pairs += [i, f"member:{i}"]
                yield encode("ZADD", MEMORY_KEY, *pairs)

        def check(client: RespClient) -> None:
            size = client.call("ZCARD", MEMORY_KEY)
            if size != n:
                raise RuntimeError(f"ZCARD is {size} after {n} members")

        return {"memory.zset_member": measure_load(
            target, n, lambda client: send_batches(client, zadds(), 100), check, {"members": n})}
