"""XREADGROUP COUNT 10 + XACK throughput: redis-benchmark cannot ack what it read, so a few
Python processes consume a prefilled stream through one group, each acking the batch it read.

Each worker sends the XACK of its previous batch and its next XREADGROUP in one write, the way a
real consumer pipelines them, so the client's round trips are halved.
"""

from __future__ import annotations

import multiprocessing
import time
from typing import Any

from bench.case import Case, Options
from bench.procstat import CpuMeter
from bench.resp import RespClient, TLSFiles, encode, load_stream
from bench.stats import Metric, Sample
from bench.targets import Target

KEY = "bench:group"
GROUP = "g"
COUNT = 10


def consume(port: int, consumer: str, barrier: Any, results: Any, claim: int | None = None,
            tls: TLSFiles | None = None) -> None:
    """Read and ack until the group has nothing new (nor idle, with CLAIM); report how many
    entries were processed and how many of them were claimed from another consumer."""
    client = RespClient(port, tls=tls)
    options = ("CLAIM", claim) if claim is not None else ()
    read = encode("XREADGROUP", "GROUP", GROUP, consumer, "COUNT", COUNT, *options, "STREAMS", KEY, ">")
    barrier.wait()
    processed = claimed = 0
    ids: list[bytes] = []
    while True:
        if ids:
            client.send(encode("XACK", KEY, GROUP, *ids) + read)
            reply = client.read_replies(2)[1]
        else:
            client.send(read)
            reply = client.read_replies(1)[0]
        if not reply:
            break
        entries = reply[0][1]
        ids = [entry[0] for entry in entries]
        processed += len(ids)
        if claim is not None:
            # A CLAIM reply's entries carry their delivery count: 0 for a new entry.
            claimed += sum(1 for entry in entries if entry[3])
    client.close()
    results.put((processed, claimed))


def drive(target: Target, consumers: int, claim: int | None = None,
          tls: TLSFiles | None = None) -> tuple[int, int, float, float]:
    """Start `consumers` worker processes on the prepared group and time them until it is drained:
    (entries processed, of which claimed, elapsed seconds, server CPU seconds). With `tls`, the
    workers connect to the target's TLS port."""
    port = target.tls_port if tls is not None else target.port
    ctx = multiprocessing.get_context("fork")  # no re-import per worker; the parent has no threads
    barrier = ctx.Barrier(consumers + 1)
    results = ctx.Queue()
    workers = [ctx.Process(target=consume, args=(port, f"c{i}", barrier, results, claim, tls))
               for i in range(consumers)]
    for w in workers:
        w.start()
    barrier.wait()  # every worker is connected: time only the consuming
    cpu = CpuMeter(target.pid).start()
    began = time.perf_counter()
    counts = [results.get(timeout=600) for _ in workers]
    elapsed = time.perf_counter() - began
    used = cpu.stop()
    for w in workers:
        w.join()
    return sum(c[0] for c in counts), sum(c[1] for c in counts), elapsed, used


def pending_count(target: Target) -> int:
    with RespClient(target.port) as client:
        return int(client.call("XPENDING", KEY, GROUP)[0])


class XreadgroupCase(Case):
    name = "xreadgroup"
    metrics = [Metric("xreadgroup.count10+xack", "entries/s", True,
                      "entries read with XREADGROUP COUNT 10 and acked with XACK, by N consumer processes")]

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        entries = opts.requests
        with RespClient(target.port) as client:
            client.call("FLUSHALL")
            load_stream(client, KEY, entries, ("sensor-id", "1234", "temperature", "19.8"))
            client.call("XGROUP", "CREATE", KEY, GROUP, "0")

        processed, _, elapsed, used = drive(target, opts.consumers)
        pending = pending_count(target)
        if processed != entries or pending != 0:
            raise RuntimeError(f"processed {processed} of {entries} entries, {pending} left pending")
        return {"xreadgroup.count10+xack": Sample(
            entries / elapsed, entries, used, {"consumers": opts.consumers, "entries": entries})}
