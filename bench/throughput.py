"""Throughput with redis-benchmark: PING, XADD (1/50 clients x pipeline 1/16), XADD IDMP / IDMPAUTO,
XRANGE COUNT 10."""

from __future__ import annotations

from bench.case import Case, Options
from bench.redis_benchmark import run_redis_benchmark
from bench.resp import RespClient, encode, load_stream
from bench.stats import Metric, Sample
from bench.targets import Target, redis_benchmark_available

XADD_SHAPES = [(1, 1), (1, 16), (50, 1), (50, 16)]  # (clients, pipeline)
XRANGE_PREFILL = 1000


def check_command(target: Target, *args: str) -> None:
    """Run the command once so an unsupported one fails loudly, not as redis-benchmark noise."""
    with RespClient(target.port) as client:
        client.call(*args)
        client.call("FLUSHALL")


def requests_for(opts: Options, clients: int, pipeline: int) -> int:
    # One client without pipelining pays a full round trip per request: a quarter of the requests
    # measures it just as well and keeps `make bench` short. Pipelined runs are so fast that the
    # server's CPU time (10 ms ticks) needs four times the requests to be read to a few percent.
    if clients == 1 and pipeline == 1:
        return max(opts.requests // 4, 1)
    return opts.requests * 4 if pipeline > 1 else opts.requests


class RedisBenchmarkCase(Case):
    def missing_tool(self) -> str | None:
        if not redis_benchmark_available():
            return "redis-benchmark is not installed (make tools, or apt-get install redis-tools)"
        return None


class PingCase(RedisBenchmarkCase):
    name = "ping"
    metrics = [Metric("ping", "ops/s", True, "PING (redis-benchmark -t ping_mbulk), 50 clients")]

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        return {"ping": run_redis_benchmark(target, opts.requests, 50, 1, tests="ping_mbulk")}


def xadd_metric(clients: int, pipeline: int) -> str:
    return f"xadd.c{clients}.P{pipeline}"


class XaddCase(RedisBenchmarkCase):
    name = "xadd"
    metrics = [Metric(xadd_metric(c, p), "ops/s", True, f"XADD s * f v, {c} client(s), pipeline {p}")
               for c, p in XADD_SHAPES]

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        check_command(target, "XADD", "s", "*", "f", "v")
        samples = {}
        for clients, pipeline in XADD_SHAPES:
            with RespClient(target.port) as client:
                client.call("FLUSHALL")  # every shape starts from an empty stream
            samples[xadd_metric(clients, pipeline)] = run_redis_benchmark(
                target, requests_for(opts, clients, pipeline), clients, pipeline,
                command=["xadd", "s", "*", "f", "v"])
        return samples


IDMP_SHAPE = (50, 16)
IDMP_COMMANDS = {
    # Random idempotent IDs out of a million: nearly every XADD adds an entry, and each producer's
    # pairs stay at IDMP-MAXSIZE (the default 100), one evicted per XADD, as under steady load.
    "xadd_idmp.plain": ["xadd", "s", "*", "f", "__rand_int__"],
    "xadd_idmp.idmp": ["xadd", "s", "IDMP", "p", "__rand_int__", "*", "f", "v"],
    "xadd_idmp.idmpauto": ["xadd", "s", "IDMPAUTO", "p", "*", "f", "__rand_int__"],
}


class XaddIdmpCase(RedisBenchmarkCase):
    """XADD with IDMP / IDMPAUTO (Redis 8.6) beside plain XADD in the same run, for their cost
    relative to it; Redis 7 has no IDMP, so this runs on Rivulet only."""

    name = "xadd-idmp"
    rivulet_only = True
    metrics = [Metric(name, "ops/s", True, f"XADD {' '.join(cmd[2:-3])} ..., 50 clients, pipeline 16",
                      baseline=None if name == "xadd_idmp.plain" else "xadd_idmp.plain")
               for name, cmd in IDMP_COMMANDS.items()]

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        if target.name != "rivulet":
            raise RuntimeError("XADD IDMP is Redis 8.6's: not in the Redis compared with")
        check_command(target, "XADD", "s", "IDMP", "p", "i", "*", "f", "v")
        clients, pipeline = IDMP_SHAPE
        samples = {}
        for metric, command in IDMP_COMMANDS.items():
            with RespClient(target.port) as client:
                client.call("FLUSHALL")
            samples[metric] = run_redis_benchmark(
                target, requests_for(opts, clients, pipeline), clients, pipeline,
                command=["-r", "1000000", *command])
        return samples


class XrangeCase(RedisBenchmarkCase):
    name = "xrange"
    metrics = [Metric("xrange.count10", "ops/s", True,
                      f"XRANGE s - + COUNT 10 on a {XRANGE_PREFILL}-entry stream, 50 clients")]

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        with RespClient(target.port) as client:
            client.call("FLUSHALL")
            load_stream(client, "s", XRANGE_PREFILL, ("sensor-id", "1234", "temperature", "19.8"))
            client.send(encode("XRANGE", "s", "-", "+", "COUNT", 10))
            if len(client.read_replies(1)[0]) != 10:
                raise RuntimeError("XRANGE COUNT 10 did not return 10 entries")
        return {"xrange.count10": run_redis_benchmark(
            target, opts.requests, 50, 1, command=["xrange", "s", "-", "+", "COUNT", "10"])}
