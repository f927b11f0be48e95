"""Latency during an AOF rewrite: no client may wait more than 50 ms for a reply
while a rewrite of 1,000,000 stream entries runs.

Both servers get `appendonly yes`, are loaded with N entries, then BGREWRITEAOF is sent while one
client keeps sending XADDs (one at a time, 5 ms apart) and measures each reply's wait, until the
server reports the rewrite finished. The figures are the worst and the 99th-percentile wait.
"""

from __future__ import annotations

import time

from bench.case import Case, Options
from bench.procstat import CpuMeter
from bench.resp import RespClient, load_stream
from bench.stats import Metric, Sample
from bench.targets import Target

KEY = "bench:rewrite"
FIELDS = ("sensor-id", "1234", "temperature", "19.8")


def _rewriting(client: RespClient) -> bool:
    info = client.info("persistence")
    return info.get("aof_rewrite_in_progress") == "1" or info.get("aof_rewrite_scheduled") == "1"


def _wait_idle(client: RespClient, limit: float = 300) -> None:
    deadline = time.monotonic() + limit
    while _rewriting(client):
        if time.monotonic() > deadline:
            raise RuntimeError("a rewrite did not finish in time")
        time.sleep(0.05)


class RewriteLatencyCase(Case):
    name = "rewrite"
    metrics = [
        Metric("rewrite.max_wait", "ms", False,
               "worst reply wait of an XADD client during BGREWRITEAOF of N entries (target < 50 ms)"),
        Metric("rewrite.p99_wait", "ms", False, "99th percentile of the same waits"),
    ]
    default_repeat = 1
    fresh_server_per_run = True

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        with RespClient(target.port) as client:
            client.call("CONFIG", "SET", "appendonly", "yes")
            _wait_idle(client)  # Redis writes its first AOF in the background
            load_stream(client, KEY, opts.entries, FIELDS)
            _wait_idle(client)  # an automatic rewrite may have started while loading
            cpu = CpuMeter(target.pid).start()
            client.call("BGREWRITEAOF")
            waits: list[float] = []
            deadline = time.monotonic() + 600
            while True:
                t0 = time.perf_counter()
                client.call("XADD", "bench:during", "*", "f", "v")
                waits.append((time.perf_counter() - t0) * 1000)
                if not _rewriting(client) or time.monotonic() > deadline:
                    break
                time.sleep(0.005)
            used = cpu.stop()
        waits.sort()
        p99 = waits[min(len(waits) - 1, int(len(waits) * 0.99))]
        extra = {"requests_during_rewrite": len(waits), "entries": opts.entries}
        return {
            "rewrite.max_wait": Sample(waits[-1], len(waits), used, extra),
            "rewrite.p99_wait": Sample(p99, len(waits), used, extra),
        }
