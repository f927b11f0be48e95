"""Hashes: HSET and HGETALL of a 10-field hash with redis-benchmark, and memory per field of many
small hashes (5 fields each: Redis keeps them as listpacks, Rivulet packed)."""

from __future__ import annotations

from bench.case import Case, Options
from bench.memory import measure_load, send_batches
from bench.redis_benchmark import run_redis_benchmark
from bench.resp import RespClient, encode
from bench.stats import Metric, Sample
from bench.targets import Target
from bench.throughput import RedisBenchmarkCase, check_command, requests_for

TEN_FIELDS = [x for i in range(10) for x in (f"field{i}", f"value-{i}")]
HASH_SHAPES = [(50, 1), (50, 16)]  # (clients, pipeline)
SMALL_FIELDS = ("name", "alice", "age", "42", "city", "paris", "zip", "75001", "score", "9.5")


def _metric(command: str, clients: int, pipeline: int) -> str:
    return f"{command}.c{clients}.P{pipeline}"


class HashThroughputCase(RedisBenchmarkCase):
    name = "hashes"
    metrics = [Metric(_metric(cmd, c, p), "ops/s", True,
                      f"{cmd.upper()} of a 10-field hash, {c} clients, pipeline {p}")
               for cmd in ("hset", "hgetall") for c, p in HASH_SHAPES]

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        check_command(target, "HSET", "h", *TEN_FIELDS)
        samples = {}
        for clients, pipeline in HASH_SHAPES:
            with RespClient(target.port) as client:
                client.call("FLUSHALL")
            samples[_metric("hset", clients, pipeline)] = run_redis_benchmark(
                target, requests_for(opts, clients, pipeline), clients, pipeline,
                command=["hset", "h", *TEN_FIELDS])
            with RespClient(target.port) as client:
                client.call("FLUSHALL")
                client.call("HSET", "h", *TEN_FIELDS)
                if len(client.call("HGETALL", "h")) != 20:
                    raise RuntimeError("HGETALL did not return the 10 fields")
            samples[_metric("hgetall", clients, pipeline)] = run_redis_benchmark(
                target, requests_for(opts, clients, pipeline), clients, pipeline,
                command=["hgetall", "h"])
        return samples


class HashMemoryCase(Case):
    name = "hash-memory"
    metrics = [Metric("memory.hash_field", "B/field", False,
                      "bytes per field after HSETs of N hashes of 5 small fields "
                      "(key `h:<n>`, e.g. name alice age 42 ...)", max_ratio=2.0)]
    default_repeat = 1
    fresh_server_per_run = True

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        hashes = opts.entries
        fields = hashes * 5
        hsets = (encode("HSET", f"h:{i}", *SMALL_FIELDS) for i in range(hashes))

        def check(client: RespClient) -> None:
            if client.call("DBSIZE") != hashes or client.call("HLEN", "h:0") != 5:
                raise RuntimeError("the hashes were not all created")

        return {"memory.hash_field": measure_load(
            target, fields, lambda client: send_batches(client, hsets, 1000), check,
            {"hashes": hashes, "fields": fields})}
