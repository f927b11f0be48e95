"""Pipelined XADD without replicas, and with one replica taking the replication stream: what
feeding a replica costs the master (server CPU per XADD), against Redis in the same run.

The replica is a raw socket that syncs (REPLCONF capa eof, PSYNC ? -1), reads the snapshot,
acknowledges it (a diskless replica's stream starts at its first ACK) and then drains the
stream between batches, as a replica that keeps up would.
"""

from __future__ import annotations

import socket
import time

from bench.case import Case, Options
from bench.procstat import CpuMeter
from bench.stats import Metric, Sample
from bench.targets import Target

BATCH = 500
_XADD = b"*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$1\r\n*\r\n$1\r\nf\r\n$5\r\nvalue\r\n"


def _call(sock: socket.socket, *args: bytes) -> bytes:
    sock.sendall(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args))
    return sock.recv(1 << 16)


def _attach_replica(port: int) -> socket.socket:
    replica = socket.create_connection(("127.0.0.1", port), timeout=30)
    assert _call(replica, b"REPLCONF", b"capa", b"eof").startswith(b"+OK")
    replica.sendall(b"*3\r\n$5\r\nPSYNC\r\n$1\r\n?\r\n$2\r\n-1\r\n")
    buf = b""
    while b"$EOF:" not in buf or len(buf) < buf.index(b"$EOF:") + 47:
        buf += replica.recv(1 << 16)
    start = buf.index(b"$EOF:") + 5
    mark = buf[start:start + 40]
    buf = buf[start + 42:]
    while not buf.endswith(mark) or len(buf) < 40:
        buf += replica.recv(1 << 16)
    replica.sendall(b"*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$1\r\n0\r\n")
    replica.setblocking(False)
    return replica


def _drain(replica: socket.socket | None) -> int:
    if replica is None:
        return 0
    got = 0
    try:
        while True:
            chunk = replica.recv(1 << 20)
            if not chunk:
                raise ConnectionError("the master dropped the replica")
            got += len(chunk)
    except BlockingIOError:
        return got


def _xadds(client: socket.socket, replica: socket.socket | None, count: int) -> int:
    batch = _XADD * BATCH
    streamed = 0
    for _ in range(count // BATCH):
        client.sendall(batch)
        buf = b""
        # Each reply is a bulk string: two CRLFs.
        while buf.count(b"\r\n") < 2 * BATCH:
            buf += client.recv(1 << 20)
        streamed += _drain(replica)
    return streamed


class XaddReplicaCase(Case):
    name = "xadd-replica"
    metrics = [Metric("xadd_replica.none", "ops/s", True,
                      f"XADD s * f value, one client, pipeline {BATCH}, no replica"),
               Metric("xadd_replica.one", "ops/s", True,
                      f"XADD s * f value, one client, pipeline {BATCH}, one replica reading the stream")]

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        count = max(opts.requests * 4 // BATCH, 2) * BATCH
        samples = {}
        client = socket.create_connection(("127.0.0.1", target.port), timeout=30)
        try:
            _call(client, b"CONFIG", b"SET", b"repl-diskless-sync-delay", b"0")
            for metric, with_replica in (("xadd_replica.none", False), ("xadd_replica.one", True)):
                _call(client, b"FLUSHALL")
                replica = _attach_replica(target.port) if with_replica else None
                try:
                    _xadds(client, replica, 20 * BATCH)  # warm-up
                    meter = CpuMeter(target.pid).start()
                    t0 = time.perf_counter()
                    streamed = _xadds(client, replica, count)
                    elapsed = time.perf_counter() - t0
                    cpu = meter.stop()
                    if replica is not None:
                        streamed += _drain(replica)
                finally:
                    if replica is not None:
                        replica.close()
                samples[metric] = Sample(count / elapsed, count, cpu,
                                         {"stream_bytes": streamed})
        finally:
            client.close()
        return samples
