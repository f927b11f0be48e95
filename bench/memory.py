"""Memory: bytes per stream entry, and per pending entry of a consumer group.

Ours is the growth of the server's RSS (VmRSS): a Python process has no allocator-exact figure,
and RSS is what the machine pays. Redis's is the growth of INFO `used_memory` (what its allocator
hands out). Both are recorded for both servers in the JSON; the printed ratio is ours-RSS over
Redis-used_memory: what each server costs the machine against what Redis's allocator holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from bench.case import Case, Options, PartialRun
from bench.procstat import CpuMeter, rss_bytes
from bench.resp import RespClient, encode, load_stream
from bench.stats import Metric, Sample
from bench.targets import RIVULET, Target

KEY = "bench:mem"
GROUP = "g"
FIELDS = ("sensor-id", "1234", "temperature", "19.8")
READ_COUNT = 10_000


def memory_now(target: Target, client: RespClient) -> dict[str, int]:
    return {"rss": rss_bytes(target.pid), "used_memory": int(client.info("memory")["used_memory"])}


def growth(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {k: after[k] - before[k] for k in before}


def measure_load(target: Target, items: int, load: Callable[[RespClient], None],
                 check: Callable[[RespClient], None], extra: dict[str, Any]) -> Sample:
    """Bytes per item that `load` adds to a fresh server (our RSS, Redis's used_memory: see
    bench/README.md), with the server's CPU for the load; `check` raises if the data is not
    all there."""
    figure = "rss" if target.name == RIVULET else "used_memory"
    with RespClient(target.port) as client:
        client.call("PING")
        start = memory_now(target, client)
        cpu = CpuMeter(target.pid).start()
        load(client)
        used = cpu.stop()
        loaded = memory_now(target, client)
        check(client)
    grown = growth(start, loaded)
    return Sample(grown[figure] / items, items, used, {"figure": figure, "growth": grown, **extra})


def send_batches(client: RespClient, commands: Iterable[bytes], per_write: int) -> None:
    """Send the encoded commands `per_write` to a write, reading each write's replies."""
    batch: list[bytes] = []
    for command in commands:
        batch.append(command)
        if len(batch) == per_write:
            client.send(b"".join(batch))
            client.read_replies(len(batch))
            batch = []
    if batch:
        client.send(b"".join(batch))
        client.read_replies(len(batch))


class MemoryCase(Case):
    name = "memory"
    metrics = [
        Metric("memory.entry", "B/entry", False,
               "bytes per entry after N XADDs of `sensor-id 1234 temperature 19.8` (auto IDs)",
               max_ratio=3.0),
        Metric("memory.pending", "B/pending", False,
               "bytes per pending entry after the N entries are delivered to one consumer group",
               max_ratio=1.5),
    ]
    # One run of 1,000,000 entries takes most of a minute on our server, and the figure barely moves.
    default_repeat = 1
    fresh_server_per_run = True

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        n = opts.entries
        figure = "rss" if target.name == RIVULET else "used_memory"
        with RespClient(target.port) as client:
            client.call("PING")
            start = memory_now(target, client)
            cpu = CpuMeter(target.pid).start()
            load_stream(client, KEY, n, FIELDS)
            load_cpu = cpu.stop()
            loaded = memory_now(target, client)
            length = client.call("XLEN", KEY)
            if length != n:
                raise RuntimeError(f"XLEN is {length} after {n} XADDs")
            entry_growth = growth(start, loaded)
            samples = {"memory.entry": Sample(entry_growth[figure] / n, n, load_cpu,
                                              {"figure": figure, "growth": entry_growth, "entries": n})}
            try:
                client.call("XGROUP", "CREATE", KEY, GROUP, "0")
                cpu.start()
                delivered = deliver_all(client)
                deliver_cpu = cpu.stop()
                pending_mem = memory_now(target, client)
                pending = client.call("XPENDING", KEY, GROUP)[0]
                if delivered != n or pending != n:
                    raise RuntimeError(f"delivered {delivered}, pending {pending}, expected {n}")
            except Exception as exc:
                raise PartialRun(samples, exc) from exc

        pending_growth = growth(loaded, pending_mem)
        samples["memory.pending"] = Sample(pending_growth[figure] / n, n, deliver_cpu,
                                           {"figure": figure, "growth": pending_growth, "entries": n})
        return samples


def deliver_all(client: RespClient) -> int:
    """XREADGROUP ... COUNT 10000 STREAMS key > until the group has seen every entry."""
    read = encode("XREADGROUP", "GROUP", GROUP, "alice", "COUNT", READ_COUNT, "STREAMS", KEY, ">")
    delivered = 0
    while True:
        client.send(read)
        reply = client.read_replies(1)[0]
        if not reply:  # nil (RESP2) or empty: nothing new left
            return delivered
        delivered += len(reply[0][1])
