"""Scaling: reads cost the same anywhere in a long stream, and appends do not slow down as it grows.

Loads N entries (default 10,000,000, `--entries`) with explicit IDs 1-0, 2-0, ..., timing the
XADD rate of the first and of the last tenth of the load; then times XRANGE COUNT 10 from the
start, the middle and the end of the stream (median over 2,000 calls each). A seek that is
O(log N) shows the same time at the three places.
"""

from __future__ import annotations

import statistics
import time

from bench.case import Case, Options
from bench.procstat import CpuMeter
from bench.resp import RespClient, encode
from bench.stats import Metric, Sample
from bench.targets import Target

KEY = "bench:scale"
BATCH = 1000
CALLS = 2000


def _load(client: RespClient, first: int, last: int) -> float:
    """XADD ids first..last (ms-0); returns entries per second."""
    t0 = time.perf_counter()
    for start in range(first, last + 1, BATCH):
        stop = min(start + BATCH, last + 1)
        client.send(b"".join(encode("XADD", KEY, f"{i}-0", "sensor-id", "1234", "temperature", "19.8")
                             for i in range(start, stop)))
        client.read_replies(stop - start)
    return (last - first + 1) / (time.perf_counter() - t0)


def _xrange_us(client: RespClient, at: int) -> float:
    command = encode("XRANGE", KEY, f"{at}-0", "+", "COUNT", 10)
    times = []
    for _ in range(CALLS):
        t0 = time.perf_counter()
        client.send(command)
        client.read_replies(1)
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


class ScalingCase(Case):
    name = "scaling"
    metrics = [
        Metric("scaling.xadd_first_tenth", "entries/s", True, "XADD rate over the first tenth of the load"),
        Metric("scaling.xadd_last_tenth", "entries/s", True, "XADD rate over the last tenth of the load"),
        Metric("scaling.xrange_start", "us", False, "XRANGE COUNT 10 at the start of the stream"),
        Metric("scaling.xrange_middle", "us", False, "XRANGE COUNT 10 in the middle of the stream"),
        Metric("scaling.xrange_end", "us", False, "XRANGE COUNT 10 at the end of the stream"),
    ]
    default_repeat = 1
    fresh_server_per_run = True

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        n = max(opts.entries, 10 * BATCH)
        tenth = n // 10
        with RespClient(target.port) as client:
            # Each tenth's own server CPU: on a shared machine the rates move with the
            # neighbours, the CPU per entry shows whether appending got dearer.
            cpu = CpuMeter(target.pid).start()
            first_rate = _load(client, 1, tenth)
            first_cpu = cpu.stop()
            _load(client, tenth + 1, n - tenth)
            cpu = CpuMeter(target.pid).start()
            last_rate = _load(client, n - tenth + 1, n)
            last_cpu = cpu.stop()
            samples = {
                "scaling.xadd_first_tenth": Sample(first_rate, tenth, first_cpu),
                "scaling.xadd_last_tenth": Sample(last_rate, tenth, last_cpu),
            }
            for name, at in (("start", 1), ("middle", n // 2), ("end", n - 10)):
                cpu = CpuMeter(target.pid).start()
                samples[f"scaling.xrange_{name}"] = Sample(_xrange_us(client, at), CALLS, cpu.stop())
        return samples
