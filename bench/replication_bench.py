"""The cost of replication on a master, and how far its replicas trail under load.

XADD with 50 clients at pipeline 16 (redis-benchmark) on a master alone, then on the same master
with two replicas of the same kind attached (Rivulet replicas of Rivulet, Redis replicas of Redis),
each run from an empty stream. While the load runs, a sampler asks the master and both replicas
for their replication offsets every 20 ms: the bytes a replica trails by. When the load ends, the
time until both replicas hold everything the master wrote.
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
import time

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
        else:
            self.port = free_port()
            self.dir = tempfile.mkdtemp(prefix="redis-replica-")
            self.proc = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", self.dir, "--replicaof", "127.0.0.1", str(master_port)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_for_port(self.port, self.proc)

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
    ]

    def missing_tool(self) -> str | None:
        if not redis_benchmark_available():
            return "redis-benchmark is not installed (make tools, or apt-get install redis-tools)"
        return None

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        clients, pipeline = SHAPE
        requests = opts.requests * 4
        command = ["xadd", "s", "*", "f", "v"]
        samples: dict[str, Sample] = {}
        with RespClient(target.port) as client:
            client.call("FLUSHALL")
        samples[NONE] = run_redis_benchmark(target, requests, clients, pipeline, command=command)
        replicas = [_Replica(target.name, target.port) for _ in range(2)]
        try:
            for r in replicas:
                r.wait_link_up()
            with RespClient(target.port) as client:
                client.call("FLUSHALL")
            sampler = _LagSampler(target.port, [r.port for r in replicas])
            sampler.start()
            samples[TWO] = run_redis_benchmark(target, requests, clients, pipeline, command=command)
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
            samples[LAG] = Sample(float(lags[len(lags) // 2]), requests, 0.0,
                                  {"max": lags[-1], "samples": len(lags)})
            samples[CATCH_UP] = Sample(catch_up_ms, requests, 0.0)
        finally:
            for r in replicas:
                r.stop()
        return samples
