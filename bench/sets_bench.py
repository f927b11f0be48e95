"""Sets: SADD and SISMEMBER throughput (redis-benchmark), bytes per member of a large set.

Throughput runs random 12-digit members (`__rand_int__`, zero-padded, so strings to both servers)
out of a million into one set; SISMEMBER asks about random members of a prefilled set, half of
them present. Memory is measured as in bench/memory.py: our RSS growth against Redis's
used_memory growth.
"""

from __future__ import annotations

from bench.case import Case, Options
from bench.redis_benchmark import run_redis_benchmark
from bench.resp import RespClient, encode
from bench.stats import Metric, Sample
from bench.targets import Target
from bench.throughput import RedisBenchmarkCase, check_command, requests_for

SHAPES = [(50, 1), (50, 16)]  # (clients, pipeline)
KEYSPACE = 1_000_000  # redis-benchmark -r: members drawn from this many
PREFILL = 500_000  # members of the set SISMEMBER reads: every other one of the keyspace
MEMORY_KEY = "bench:set"
BATCH = 1000


def metric(command: str, clients: int, pipeline: int) -> str:
    return f"{command}.c{clients}.P{pipeline}"


def _prefill(client: RespClient, key: str, members: int, step: int = 1) -> None:
    """SADD key with `members` members, `%012d` of 0, step, 2*step...: redis-benchmark's form."""
    batch: list[bytes] = []
    pending = 0
    for i in range(members):
        batch.append(b"%012d" % (i * step))
        if len(batch) == BATCH:
            client.send(encode("SADD", key, *batch))
            pending += 1
            batch = []
        if pending == 50:
            client.read_replies(pending)
            pending = 0
    if batch:
        client.send(encode("SADD", key, *batch))
        pending += 1
    client.read_replies(pending)


class SetsCase(RedisBenchmarkCase):
    name = "sets"
    metrics = [Metric(metric(cmd, c, p), "ops/s", True,
                      f"{cmd.upper()} s <random 12-digit member>, {c} clients, pipeline {p}"
                      + (f" ({PREFILL} members, half the asked ones present)"
                         if cmd == "sismember" else ""))
               for cmd in ("sadd", "sismember") for c, p in SHAPES]

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        check_command(target, "SADD", "s", "m")
        samples = {}
        for clients, pipeline in SHAPES:
            with RespClient(target.port) as client:
                client.call("FLUSHALL")
            samples[metric("sadd", clients, pipeline)] = run_redis_benchmark(
                target, requests_for(opts, clients, pipeline), clients, pipeline,
                command=["-r", str(KEYSPACE), "sadd", "s", "__rand_int__"])
        with RespClient(target.port) as client:
            client.call("FLUSHALL")
            _prefill(client, "s", PREFILL, step=2)
            if client.call("SCARD", "s") != PREFILL:
                raise RuntimeError("the SISMEMBER set was not filled")
        for clients, pipeline in SHAPES:
            samples[metric("sismember", clients, pipeline)] = run_redis_benchmark(
                target, requests_for(opts, clients, pipeline), clients, pipeline,
                command=["-r", str(KEYSPACE), "sismember", "s", "__rand_int__"])
        return samples


class SetsMemoryCase(Case):
    name = "sets-memory"
    metrics = [Metric("memory.set_member", "B/member", False,
                      "bytes per member of one set after N SADDs of 12-digit members "
                      "(a hashtable in both servers)", max_ratio=2.0)]
    default_repeat = 1
    fresh_server_per_run = True

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        from bench.memory import measure_load

        n = opts.entries

        def check(client: RespClient) -> None:
            size = client.call("SCARD", MEMORY_KEY)
            if size != n:
                raise RuntimeError(f"SCARD is {size} after {n} members")

        return {"memory.set_member": measure_load(
            target, n, lambda client: _prefill(client, MEMORY_KEY, n), check, {"members": n})}
