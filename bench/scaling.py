"""Scaling: reads cost the same anywhere in a long stream, and appends do not slow down as it grows.

Loads N entries (default 10,000,000, `--entries`) with explicit IDs 1-0, 2-0, ..., timing the
XADD rate of the first and of the last tenth of the load (each the median rate of its chunks of
10,000 entries); then times XRANGE COUNT 10 from the
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
# A tenth's rate is the median of its chunks' rates: a neighbour that takes the core for a
# second slows a few chunks, not the figure.
CHUNK = 10_000
CALLS = 2000


def _load(client: RespClient, first: int, last: int) -> list[tuple[int, float]]:
    """XADD ids first..last (ms-0); returns (entries, seconds) of each chunk of CHUNK entries."""
    chunks = []
    t0 = time.perf_counter()
    done = 0
    for start in range(first, last + 1, BATCH):
        stop = min(start + BATCH, last + 1)
        client.send(b"".join(encode("XADD", KEY, f"{i}-0", "sensor-id", "1234", "temperature", "19.8")
                             for i in range(start, stop)))
        client.read_replies(stop - start)
        done += stop - start
        if done >= CHUNK or stop > last:
            t1 = time.perf_counter()
            chunks.append((done, t1 - t0))
            t0, done = t1, 0
    return chunks


def _rate_sample(chunks: list[tuple[int, float]], cpu_seconds: float) -> Sample:
    """The median of the chunks' rates, with the whole stretch's rate beside it."""
    entries = sum(n for n, _ in chunks)
    whole = entries / sum(t for _, t in chunks)
    return Sample(statistics.median(n / t for n, t in chunks), entries, cpu_seconds,
                  {"whole_rate": whole})


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
        Metric("scaling.xadd_first_tenth", "entries/s", True, "XADD rate over the first tenth of the load (median of its 10,000-entry chunks)"),
        Metric("scaling.xadd_last_tenth", "entries/s", True, "XADD rate over the last tenth of the load (median of its 10,000-entry chunks)"),
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
            first = _load(client, 1, tenth)
            first_cpu = cpu.stop()
            _load(client, tenth + 1, n - tenth)
            cpu = CpuMeter(target.pid).start()
            last = _load(client, n - tenth + 1, n)
            last_cpu = cpu.stop()
            samples = {
                "scaling.xadd_first_tenth": _rate_sample(first, first_cpu),
                "scaling.xadd_last_tenth": _rate_sample(last, last_cpu),
            }
            for name, at in (("start", 1), ("middle", n // 2), ("end", n - 10)):
                cpu = CpuMeter(target.pid).start()
                samples[f"scaling.xrange_{name}"] = Sample(_xrange_us(client, at), CALLS, cpu.stop())
        return samples
