"""Pub/Sub: PUBLISH throughput to one channel with N subscribers connected.

redis-benchmark cannot subscribe, so a helper process (`python -m bench.pubsub_bench drain PORT
CHANNEL N`) opens N connections, subscribes each to the channel and reads everything they are
sent, as fast as it comes; redis-benchmark then runs `PUBLISH channel <32-byte message>`. Each
PUBLISH costs the server one message per subscriber, so the figure measures delivery, not only
the command. The subscribers must all still be there at the end (a server that dropped them
would look fast): the run fails otherwise.
"""

from __future__ import annotations

import selectors
import socket
import subprocess
import sys

from bench.case import Options
from bench.redis_benchmark import run_redis_benchmark
from bench.resp import RespClient
from bench.stats import Metric, Sample
from bench.targets import Target
from bench.throughput import RedisBenchmarkCase, check_command, requests_for

CHANNEL = "bench:channel"
MESSAGE = "m" * 32
SHAPES = [(1, 50, 1), (1, 50, 16), (10, 50, 16), (100, 50, 16)]  # (subscribers, clients, pipeline)


def metric(subscribers: int, clients: int, pipeline: int) -> str:
    return f"publish.sub{subscribers}.c{clients}.P{pipeline}"


class PublishCase(RedisBenchmarkCase):
    name = "publish"
    metrics = [Metric(metric(s, c, p), "ops/s", True,
                      f"PUBLISH to one channel with {s} subscriber(s) reading, {c} clients, "
                      f"pipeline {p}")
               for s, c, p in SHAPES]

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        check_command(target, "PUBLISH", CHANNEL, "x")
        samples: dict[str, Sample] = {}
        for subscribers, clients, pipeline in SHAPES:
            with Subscribers(target.port, subscribers):
                samples[metric(subscribers, clients, pipeline)] = run_redis_benchmark(
                    target, requests_for(opts, clients, pipeline), clients, pipeline,
                    command=["publish", CHANNEL, MESSAGE])
                with RespClient(target.port) as client:
                    left = client.call("PUBSUB", "NUMSUB", CHANNEL)[1]
                if left != subscribers:
                    raise RuntimeError(f"{subscribers - left} subscriber(s) were disconnected")
        return samples


class Subscribers:
    """The drain process, for the duration of a with block."""

    def __init__(self, port: int, count: int) -> None:
        self.port = port
        self.count = count
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Subscribers:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.pubsub_bench", "drain", str(self.port), CHANNEL,
             str(self.count)], stdout=subprocess.PIPE)
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != b"ready":
            self.proc.kill()
            raise RuntimeError("the subscribers did not subscribe")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)


def drain(port: int, channel: str, count: int) -> None:
    """Subscribe `count` connections to channel, say "ready", then read until killed."""
    sel = selectors.DefaultSelector()
    confirmation = b"*3\r\n$9\r\nsubscribe\r\n"
    command = b"*2\r\n$9\r\nSUBSCRIBE\r\n$%d\r\n%s\r\n" % (len(channel), channel.encode())
    conns = []
    for _ in range(count):
        conn = socket.create_connection(("127.0.0.1", port))
        conn.sendall(command)
        got = b""
        while not got.endswith(b":1\r\n"):
            chunk = conn.recv(4096)
            if not chunk:
                raise RuntimeError("connection closed while subscribing")
            got += chunk
        if not got.startswith(confirmation):
            raise RuntimeError(f"unexpected confirmation {got!r}")
        conn.setblocking(False)
        sel.register(conn, selectors.EVENT_READ)
        conns.append(conn)
    print("ready", flush=True)
    # One buffer for every read: recv(n) would allocate (and trim) n bytes of heap each time,
    # client CPU taken from the server on a 2-core machine.
    buf = bytearray(1 << 20)
    while True:
        for key, _ in sel.select():
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            try:
                if not sock.recv_into(buf):
                    sel.unregister(sock)
            except BlockingIOError:
                pass


if __name__ == "__main__" and len(sys.argv) == 5 and sys.argv[1] == "drain":
    drain(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
