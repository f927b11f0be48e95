"""What applying its master's stream costs a replica: CPU per applied XADD.

The server under test becomes the replica (REPLICAOF) of a master played by this process, which
answers the handshake with an empty snapshot and then writes a fixed stream: the XADDs a
producer's pipeline becomes (`XADD s <ms>-<seq> f v`, about 230 per millisecond as a busy
master gives them), 64 calls per write. Two ways: as fast as the replica reads (the speed it
applies at), and paced at 150,000 XADDs per second (a loaded master's pace, where each read of
the link brings less). The run ends when the replica acknowledges the stream's last byte
(REPLCONF GETACK); the figure to compare is the replica's CPU per XADD (cpu us/op).
"""

from __future__ import annotations

import socket
import time

import hiredis

from bench.case import Case, Options
from bench.procstat import cpu_seconds
from bench.resp import RespClient
from bench.stats import Metric, Sample
from bench.targets import Target

FAST = "replica.apply.xadd"
PACED = "replica.apply.xadd_paced"
CALLS_PER_WRITE = 64
PACE = 150_000
# An empty dataset as RDB version 9 (read by Redis 7.0 and Rivulet), checksum 0: not checked.
EMPTY_RDB = b"REDIS0009" + b"\xff" + b"\x00" * 8
GETACK = b"*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n"


def stream_writes(count: int, start_ms: int) -> list[bytes]:
    """The stream as the master writes it: a SELECT, then count XADDs, CALLS_PER_WRITE a write."""
    calls = []
    ms, seq = start_ms, 0
    for i in range(count):
        if i and i % 230 == 0:
            ms, seq = ms + 1, 0
        eid = b"%d-%d" % (ms, seq)
        seq += 1
        calls.append(b"*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$%d\r\n%b\r\n$1\r\nf\r\n$1\r\nv\r\n" % (len(eid), eid))
    writes = [b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n"]
    writes += [b"".join(calls[i:i + CALLS_PER_WRITE]) for i in range(0, count, CALLS_PER_WRITE)]
    return writes


class _Master:
    """The master's side of one link: the handshake, then the stream."""

    def __init__(self) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.listener.settimeout(30)
        self.port = self.listener.getsockname()[1]
        self.conn: socket.socket | None = None
        self.reader = hiredis.Reader()

    def command(self) -> list[bytes]:
        assert self.conn is not None
        while (message := self.reader.gets()) is False:
            data = self.conn.recv(65536)
            if not data:
                raise ConnectionError("the replica closed the link")
            self.reader.feed(data)
        return message

    def attach(self) -> None:
        self.conn, _ = self.listener.accept()
        self.conn.settimeout(60)
        while True:
            name = self.command()[0].upper()
            if name == b"PING":
                self.conn.sendall(b"+PONG\r\n")
            elif name in (b"PSYNC", b"SYNC"):
                self.conn.sendall(b"+FULLRESYNC " + b"a" * 40 + b" 0\r\n"
                                  + b"$%d\r\n" % len(EMPTY_RDB) + EMPTY_RDB)
                return
            else:
                self.conn.sendall(b"+OK\r\n")

    def wait_ack(self, offset: int) -> None:
        """Ask until the replica acknowledges offset (all it was sent)."""
        assert self.conn is not None
        while True:
            self.conn.sendall(GETACK)
            message = self.command()
            while message[:2] != [b"REPLCONF", b"ACK"]:
                message = self.command()
            if int(message[2]) >= offset:
                return
            time.sleep(0.005)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
        self.listener.close()


class ReplicaApplyCase(Case):
    name = "replica-apply"
    metrics = [
        Metric(FAST, "XADD/s", True, "a replica applying XADD s <id> f v from its master, "
               f"{CALLS_PER_WRITE} calls per write, as fast as it reads"),
        Metric(PACED, "XADD/s", True, f"the same paced at {PACE:,} XADDs per second"),
    ]
    fresh_server_per_run = True

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        count = opts.requests * 8
        master = _Master()
        try:
            with RespClient(target.port) as client:
                client.call("REPLICAOF", "127.0.0.1", str(master.port))
            master.attach()
            time.sleep(0.5)  # the replica loads the snapshot
            start_ms = int(time.time() * 1000) - 10**7
            samples = {}
            offset = 0
            for metric, pace in ((FAST, 0), (PACED, PACE)):
                writes = stream_writes(count, start_ms)
                start_ms += count
                size = sum(len(w) for w in writes)
                cpu0 = cpu_seconds(target.pid)
                t0 = time.perf_counter()
                due = t0
                assert master.conn is not None
                for data in writes:
                    master.conn.sendall(data)
                    if pace:
                        due += CALLS_PER_WRITE / pace
                        delay = due - time.perf_counter()
                        if delay > 0:
                            time.sleep(delay)
                master.wait_ack(offset + size)
                elapsed = time.perf_counter() - t0
                offset += size + len(GETACK)  # (every GETACK counts once it ran)
                samples[metric] = Sample(count / elapsed, count, cpu_seconds(target.pid) - cpu0,
                                         {"bytes": size})
                # Where its ACK said more than asked, the GETACKs sent meanwhile.
                with RespClient(target.port) as client:
                    text = client.call("INFO", "replication").decode()
                offset = int(text.split("slave_repl_offset:")[1].split("\r\n")[0])
            return samples
        finally:
            master.close()
