"""Bitmap throughput: SETBIT at random offsets and BITCOUNT of the whole bitmap.

Bitmaps of 100,000 and 1,000,000 bits (12.5 KB and 125 KB, the size of a typical per-day
activity bitmap), filled with random bytes before each metric. Strings are immutable in
Rivulet, so every SETBIT that changes a bit copies the bitmap once; the two sizes show that cost.

redis-benchmark cannot drive SETBIT at random offsets (its __rand_int__ is zero-padded, which no
integer argument accepts), so SETBIT uses a driver of its own: one connection sending pre-encoded
batches of SETBITs with random offsets (and, for the mixed metric, a BITCOUNT every 16
commands), one batch in flight at a time, the same requests to both servers. BITCOUNT of an
unchanging bitmap runs under redis-benchmark, 50 clients; Rivulet remembers a large value's
count, so that figure is its lookup, not a scan.
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
BATCH = 64  # commands per round trip
MIXED_EVERY = 16  # the mixed metric: one BITCOUNT after every 15 SETBITs
BITCOUNT_CLIENTS = 50


def _metric(kind: str, bits: int) -> str:
    return f"bits.{kind}.{bits // 1000}k"


def _fill(client: RespClient, bits: int) -> None:
    data = random.Random(bits).randbytes(bits // 8)
    client.call("FLUSHALL")
    client.call("SET", "bm", data)
    if client.call("STRLEN", "bm") != bits // 8:
        raise RuntimeError("the bitmap was not stored whole")


def run_driver(target: Target, requests: int, bits: int, mixed: bool) -> Sample:
    """SETBIT bm <random offset> <random bit> (with a BITCOUNT bm every MIXED_EVERY commands
    when `mixed`), BATCH per round trip: ops/s and the server's CPU."""
    rng = random.Random(7)
    bitcount = encode("BITCOUNT", "bm")

    def command(i: int) -> bytes:
        if mixed and i % MIXED_EVERY == MIXED_EVERY - 1:
            return bitcount
        return encode("SETBIT", "bm", rng.randrange(bits), rng.randrange(2))

    batches = [b"".join(command(i) for i in range(BATCH)) for _ in range(max(requests // BATCH, 1))]
    with RespClient(target.port) as client:
        _fill(client, bits)
        sock = client.sock
        cpu = CpuMeter(target.pid).start()
        began = time.perf_counter()
        for payload in batches:
            sock.sendall(payload)
            # Every reply is one non-negative integer: one line each.
            got = b""
            while got.count(b"\r\n") < BATCH:
                chunk = sock.recv(65536)
                if not chunk:
                    raise ConnectionError("server closed the connection")
                got += chunk
            if b"-" in got:
                raise RuntimeError(f"unexpected replies: {got[:80]!r}")
        elapsed = time.perf_counter() - began
        used = cpu.stop()
    ops = len(batches) * BATCH
    return Sample(ops / elapsed, ops, used, {"pipeline": BATCH, "clients": 1, "bits": bits})


class BitsCase(RedisBenchmarkCase):
    name = "bits"
    metrics = [m for bits in BITMAP_BITS for m in (
        Metric(_metric("setbit", bits), "ops/s", True,
               f"SETBIT at random offsets of a {bits}-bit bitmap, 1 client, pipeline {BATCH}"),
        Metric(_metric("setbit_bitcount", bits), "ops/s", True,
               f"15 SETBITs then a BITCOUNT, repeated, on a {bits}-bit bitmap, 1 client, "
               f"pipeline {BATCH}"),
        Metric(_metric("bitcount", bits), "ops/s", True,
               f"BITCOUNT of an unchanging {bits}-bit bitmap, {BITCOUNT_CLIENTS} clients"))]

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        check_command(target, "SETBIT", "bm", "7", "1")
        samples = {}
        for bits in BITMAP_BITS:
            samples[_metric("setbit", bits)] = run_driver(target, opts.requests * 2, bits, False)
            samples[_metric("setbit_bitcount", bits)] = run_driver(
                target, opts.requests * 2, bits, True)
            with RespClient(target.port) as client:
                _fill(client, bits)
            samples[_metric("bitcount", bits)] = run_redis_benchmark(
                target, opts.requests, BITCOUNT_CLIENTS, 1, command=["BITCOUNT", "bm"])
        return samples
