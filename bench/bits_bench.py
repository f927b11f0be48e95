"""Bitmap throughput: SETBIT at random offsets and BITCOUNT of the whole bitmap.

Bitmaps of 100,000 and 1,000,000 bits (12.5 KB and 125 KB, the size of a typical per-day
activity bitmap), filled with random bytes before each metric. Strings are immutable in
Rivulet, so every SETBIT that changes a bit copies the bitmap once; the two sizes show that cost.

redis-benchmark cannot drive SETBIT at random offsets (its __rand_int__ is zero-padded, which no
integer argument accepts), so SETBIT uses a driver of its own: one connection sending pre-encoded
batches of SETBITs with random offsets, one batch in flight at a time, the same requests to both
servers. BITCOUNT runs under redis-benchmark, 50 clients.
"""

from __future__ import annotations

import random
import time

from bench.case import Options
from bench.procstat import CpuMeter
from bench.redis_benchmark import run_redis_benchmark
from bench.resp import RespClient, encode
from bench.stats import Metric, Sample
from bench.targets import Target
from bench.throughput import RedisBenchmarkCase, check_command

BITMAP_BITS = (100_000, 1_000_000)
BATCH = 16  # SETBITs per round trip
BITCOUNT_CLIENTS = 50


def _setbit_metric(bits: int) -> str:
    return f"bits.setbit.{bits // 1000}k"


def _bitcount_metric(bits: int) -> str:
    return f"bits.bitcount.{bits // 1000}k"


def _fill(client: RespClient, bits: int) -> None:
    data = random.Random(bits).randbytes(bits // 8)
    client.call("FLUSHALL")
    client.call("SET", "bm", data)
    if client.call("STRLEN", "bm") != bits // 8:
        raise RuntimeError("the bitmap was not stored whole")


def run_setbit(target: Target, requests: int, bits: int) -> Sample:
    """SETBIT bm <random offset> <random bit>, BATCH per round trip: ops/s and server CPU."""
    rng = random.Random(7)
    batches = [b"".join(encode("SETBIT", "bm", rng.randrange(bits), rng.randrange(2))
                        for _ in range(BATCH)) for _ in range(max(requests // BATCH, 1))]
    with RespClient(target.port) as client:
        _fill(client, bits)
        sock = client.sock
        cpu = CpuMeter(target.pid).start()
        began = time.perf_counter()
        for payload in batches:
            sock.sendall(payload)
            # Each reply is ":0\r\n" or ":1\r\n": BATCH of them are 4 * BATCH bytes.
            got = b""
            while len(got) < 4 * BATCH:
                chunk = sock.recv(65536)
                if not chunk:
                    raise ConnectionError("server closed the connection")
                got += chunk
            if got.count(b":") != BATCH:
                raise RuntimeError(f"unexpected SETBIT replies: {got[:80]!r}")
        elapsed = time.perf_counter() - began
        used = cpu.stop()
    ops = len(batches) * BATCH
    return Sample(ops / elapsed, ops, used, {"pipeline": BATCH, "clients": 1, "bits": bits})


class BitsCase(RedisBenchmarkCase):
    name = "bits"
    metrics = [m for bits in BITMAP_BITS for m in (
        Metric(_setbit_metric(bits), "ops/s", True,
               f"SETBIT at random offsets of a {bits}-bit bitmap, 1 client, pipeline {BATCH}"),
        Metric(_bitcount_metric(bits), "ops/s", True,
               f"BITCOUNT of a {bits}-bit bitmap, {BITCOUNT_CLIENTS} clients"))]

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        check_command(target, "SETBIT", "bm", "7", "1")
        samples = {}
        for bits in BITMAP_BITS:
            samples[_setbit_metric(bits)] = run_setbit(target, opts.requests * 2, bits)
            with RespClient(target.port) as client:
                _fill(client, bits)
            samples[_bitcount_metric(bits)] = run_redis_benchmark(
                target, opts.requests, BITCOUNT_CLIENTS, 1, command=["BITCOUNT", "bm"])
        return samples
