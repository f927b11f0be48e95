"""The cost of replication on a master, and how far its replicas trail under load.

XADD with 50 clients at pipeline 16 (redis-benchmark) on a master alone, then on the same master
with two replicas of the same kind attached (Rivulet replicas of Rivulet, Redis replicas of Redis),
each run from an empty stream. While the load runs, a sampler asks the master and both replicas
for their replication offsets every 20 ms: the bytes a replica trails by. When the load ends, the
time until both replicas hold everything the master wrote.

Both servers are measured in two layouts, the same way. Shared: every process on every core, as
the machine schedules them (the replicas and the benchmark client then take CPU the master
would have had: on a 2-core machine even Redis loses half its speed). Pinned: the master alone
on one core, the replicas, the benchmark client and the sampler on another (as replicas on other
machines would be): what is left is what replicas cost the master itself, which its CPU time per
XADD, with and without replicas, measures directly.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from bench.case import Case, Options
from bench.redis_benchmark import run_redis_benchmark
from bench.resp import RespClient
from bench.stats import Metric, Sample
from bench.targets import RIVULET, Target, redis_benchmark_available
from tests.serverproc import ServerProcess, free_port, wait_for_port

SHAPE = (50, 16)
NONE = "replication.xadd.none"
TWO = "replication.xadd.two_replicas"
LAG = "replication.lag_bytes"
CATCH_UP = "replication.catch_up_ms"
PINNED_NONE = "replication.pinned.xadd.none"
PINNED_TWO = "replication.pinned.xadd.two_replicas"
PINNED_LAG = "replication.pinned.lag_bytes"
PINNED_CATCH_UP = "replication.pinned.catch_up_ms"


def pinning_cores() -> tuple[int, int] | None:
    """The master's core and the other processes' core, or None with fewer than two cores."""
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    return (cores[0], cores[1]) if len(cores) >= 2 else None


def pin(pid: int, cores: set[int]) -> None:
    """Every thread of process pid onto cores (a process's affinity is per thread)."""
    try:
        tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        tids = [pid]
    for tid in tids:
        try:
            os.sched_setaffinity(tid, cores)
        except OSError:
            pass  # a thread that ended meanwhile


@contextmanager
def _layout(master_pid: int, replica_pids: list[int], cores: tuple[int, int] | None) -> Iterator[None]:
    """Pinned (cores given): the master on cores[0]; the replicas, this process and whatever it
    starts (the benchmark client) on cores[1]. Shared (None): everything on every core."""
    everywhere = os.sched_getaffinity(0)
    if cores is None:
        yield
        return
    master, others = {cores[0]}, {cores[1]}
    pin(master_pid, master)
    for pid in replica_pids:
        pin(pid, others)
    pin(os.getpid(), others)
    try:
        yield
    finally:
        pin(os.getpid(), everywhere)
        for pid in [master_pid, *replica_pids]:
            pin(pid, everywhere)


def _info_field(client: RespClient, name: str) -> str | None:
    text = client.call("INFO", "replication")
    for line in text.decode().split("\r\n"):
        key, _, value = line.partition(":")
        if key == name:
            return value
    return None


class _Replica:
    """A replica process of the target's kind, following 127.0.0.1:master_port."""

    def __init__(self, kind: str, master_port: int) -> None:
        self.proc: subprocess.Popen | None = None
        self.rivulet: ServerProcess | None = None
        if kind == RIVULET:
            self.rivulet = ServerProcess("--appendonly", "no", "--replicaof", f"127.0.0.1 {master_port}").start()
            self.port = self.rivulet.port
            assert self.rivulet.proc is not None
            self.pid = self.rivulet.proc.pid
        else:
            self.port = free_port()
            self.dir = tempfile.mkdtemp(prefix="redis-replica-")
            self.proc = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", self.dir, "--replicaof", "127.0.0.1", str(master_port)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_for_port(self.port, self.proc)
            self.pid = self.proc.pid

    def wait_link_up(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        with RespClient(self.port) as client:
            while _info_field(client, "master_link_status") != "up":
                if time.monotonic() > deadline:
                    raise RuntimeError(f"replica on port {self.port}: link to the master not up in {timeout}s")
                time.sleep(0.05)

    def stop(self) -> None:
        if self.rivulet is not None:
            self.rivulet.cleanup()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


class _LagSampler(threading.Thread):
    """Offsets of the master and its replicas every 20 ms while the load runs."""

    def __init__(self, master_port: int, replica_ports: list[int]) -> None:
        super().__init__(daemon=True)
        self.master_port = master_port
        self.replica_ports = replica_ports
        self.lags: list[int] = []
        self.stopping = threading.Event()

    def run(self) -> None:
        with RespClient(self.master_port) as master:
            replicas = [RespClient(p) for p in self.replica_ports]
            try:
                while not self.stopping.wait(0.02):
                    offsets = [int(_info_field(r, "slave_repl_offset") or 0) for r in replicas]
                    head = int(_info_field(master, "master_repl_offset") or 0)
                    self.lags.append(max(0, head - min(offsets)))
            finally:
                for r in replicas:
                    r.close()


class ReplicationCase(Case):
    name = "replication"
    metrics = [
        Metric(NONE, "ops/s", True, "XADD s * f v, 50 clients, pipeline 16, no replicas"),
        Metric(TWO, "ops/s", True, "the same with two replicas attached", baseline=NONE),
        Metric(LAG, "bytes", False, "how far the farther replica trails during that load (median of 20 ms samples)"),
        Metric(CATCH_UP, "ms", False, "from the end of the load until both replicas hold everything"),
        Metric(PINNED_NONE, "ops/s", True, "no replicas, the master pinned to one core, the client to the other"),
        Metric(PINNED_TWO, "ops/s", True, "two replicas on the client's core, the master alone on its own",
               baseline=PINNED_NONE),
        Metric(PINNED_LAG, "bytes", False, "how far the farther replica trails, pinned"),
        Metric(PINNED_CATCH_UP, "ms", False, "catch-up after the load, pinned"),
    ]

    def missing_tool(self) -> str | None:
        if not redis_benchmark_available():
            return "redis-benchmark is not installed (make tools, or apt-get install redis-tools)"
        return None

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        requests = opts.requests * 4
        cores = pinning_cores()
        samples: dict[str, Sample] = {}
        layouts = [(None, NONE, TWO, LAG, CATCH_UP)]
        if cores is not None:
            layouts.append((cores, PINNED_NONE, PINNED_TWO, PINNED_LAG, PINNED_CATCH_UP))
        for layout, none, *_ in layouts:
            with _layout(target.pid, [], layout):
                samples[none] = self._load(target, requests)
        replicas = [_Replica(target.name, target.port) for _ in range(2)]
        try:
            for r in replicas:
                r.wait_link_up()
            for layout, _, two, lag, catch_up in layouts:
                with _layout(target.pid, [r.pid for r in replicas], layout):
                    samples[two], samples[lag], samples[catch_up] = self._replicated(target, replicas, requests)
        finally:
            for r in replicas:
                r.stop()
        return samples

    def _load(self, target: Target, requests: int) -> Sample:
        with RespClient(target.port) as client:
            client.call("FLUSHALL")
        clients, pipeline = SHAPE
        return run_redis_benchmark(target, requests, clients, pipeline, command=["xadd", "s", "*", "f", "v"])

    def _replicated(self, target: Target, replicas: list[_Replica], requests: int) -> tuple[Sample, Sample, Sample]:
        """The load with the replicas attached, how far they trailed, and their catch-up."""
        sampler = _LagSampler(target.port, [r.port for r in replicas])
        sampler.start()
        try:
            load = self._load(target, requests)
        finally:
            sampler.stopping.set()
            sampler.join()
        ended = time.monotonic()
        with RespClient(target.port) as client:
            head = int(_info_field(client, "master_repl_offset") or 0)
        for r in replicas:
            with RespClient(r.port) as client:
                while int(_info_field(client, "slave_repl_offset") or 0) < head:
                    if time.monotonic() - ended > 60:
                        raise RuntimeError(f"replica on port {r.port} did not catch up within 60 s")
                    time.sleep(0.002)
        catch_up_ms = (time.monotonic() - ended) * 1000
        lags = sorted(sampler.lags) or [0]
        lag = Sample(float(lags[len(lags) // 2]), requests, 0.0, {"max": lags[-1], "samples": len(lags)})
        return load, lag, Sample(catch_up_ms, requests, 0.0)
