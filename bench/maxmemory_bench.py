"""XADD under maxmemory, with redis-benchmark: without a limit, with a limit never reached (the
cost of the check before each command), and with allkeys-lru evicting all along."""

from __future__ import annotations

from bench.case import Options
from bench.redis_benchmark import run_redis_benchmark
from bench.resp import RespClient
from bench.stats import Metric, Sample
from bench.targets import Target
from bench.throughput import RedisBenchmarkCase, requests_for

SHAPE = (50, 16)  # (clients, pipeline)
STREAMS = 100_000  # keys the evicting run spreads its XADDs over
EVICTING = -1  # the limit of the evicting run: the memory used when it starts + HEADROOM
HEADROOM = 3 * 1024 * 1024  # (Redis counts its clients' buffers too: ~1.5 MB for 50)

# metric -> (maxmemory, policy, command)
RUNS = {
    "xadd_maxmemory.unlimited": (0, "noeviction", ["xadd", "s", "*", "f", "v"]),
    "xadd_maxmemory.limit": (16 * 1024**3, "noeviction", ["xadd", "s", "*", "f", "v"]),
    "xadd_maxmemory.evicting": (EVICTING, "allkeys-lru",
                                ["-r", str(STREAMS), "xadd", "s:__rand_int__", "*", "f", "v"]),
}
DESCRIPTIONS = {
    "xadd_maxmemory.unlimited": "XADD s * f v, no maxmemory",
    "xadd_maxmemory.limit": "XADD s * f v, maxmemory 16gb (never reached)",
    "xadd_maxmemory.evicting": f"XADD to one of {STREAMS} streams, allkeys-lru, maxmemory = used + 3mb",
}


class XaddMaxmemoryCase(RedisBenchmarkCase):
    name = "xadd-maxmemory"
    metrics = [Metric(name, "ops/s", True, f"{DESCRIPTIONS[name]}, {SHAPE[0]} clients, "
                                           f"pipeline {SHAPE[1]}") for name in RUNS]

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        clients, pipeline = SHAPE
        samples = {}
        for name, (limit, policy, command) in RUNS.items():
            with RespClient(target.port) as client:
                client.call("CONFIG", "SET", "maxmemory", "0")
                client.call("FLUSHALL")
                client.call("CONFIG", "SET", "maxmemory-policy", policy)
                if limit == EVICTING:
                    # Rivulet's used_memory is the data's figure only while a limit is set.
                    client.call("CONFIG", "SET", "maxmemory", str(16 * 1024**3))
                    limit = _used_memory(client) + HEADROOM
                client.call("CONFIG", "SET", "maxmemory", str(limit))
                before = _evicted(client)
            samples[name] = run_redis_benchmark(
                target, requests_for(opts, clients, pipeline), clients, pipeline, command=command)
            with RespClient(target.port) as client:
                client.call("CONFIG", "SET", "maxmemory", "0")
                if (policy != "noeviction") != (_evicted(client) > before):
                    raise RuntimeError(f"{name}: evictions not as intended")
        return samples


def _info_field(client: RespClient, section: str, field: bytes) -> int:
    info = client.call("INFO", section)
    return int(info.split(field + b":")[1].split(b"\r\n")[0])


def _evicted(client: RespClient) -> int:
    return _info_field(client, "stats", b"evicted_keys")


def _used_memory(client: RespClient) -> int:
    return _info_field(client, "memory", b"used_memory")
