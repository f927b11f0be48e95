"""A replica spoken over a raw socket, as Redis's replica speaks to its master (REPLCONF,
PSYNC, the snapshot in either framing, then the stream of commands and REPLCONF ACK), and
helpers to read what it receives byte for byte."""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time

from tests.serverproc import ServerProcess


def encode(*args: bytes | str | int) -> bytes:
    parts = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


class RawReplica:
    """One replication link to a master, driven by hand."""

    def __init__(self, port: int, timeout: float = 10.0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""
        # Every stream byte received after the snapshot, in order.
        self.stream = b""
        # The master offset of the first stream byte minus one (what +FULLRESYNC / PSYNC said).
        self.base_offset = 0

    def close(self) -> None:
        self.sock.close()

    def send(self, *args: bytes | str | int) -> None:
        self.sock.sendall(encode(*args))

    def _fill(self) -> None:
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("the master closed the link")
        self.buf += chunk

    def line(self) -> bytes:
        while b"\r\n" not in self.buf:
            self._fill()
        line, _, self.buf = self.buf.partition(b"\r\n")
        return line

    def exactly(self, n: int) -> bytes:
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def command(self, *args: bytes | str | int) -> bytes:
        """Send one handshake command and return its reply line."""
        self.send(*args)
        return self.line()

    def handshake(self, port: int = 7777, eof: bool = True, psync2: bool = True) -> None:
        assert self.command("PING") == b"+PONG"
        assert self.command("REPLCONF", "listening-port", port) == b"+OK"
        capa: list[bytes | str | int] = ["REPLCONF"]
        if eof:
            capa += ["capa", "eof"]
        if psync2:
            capa += ["capa", "psync2"]
        if len(capa) > 1:
            assert self.command(*capa) == b"+OK"

    def psync(self, replid: str = "?", offset: int = -1) -> list[bytes]:
        """PSYNC; the reply's words (newlines sent while it waits are skipped)."""
        self.send("PSYNC", replid, offset)
        while True:
            while self.buf.startswith(b"\n"):
                self.buf = self.buf[1:]
            line = self.line()
            if line:
                break
        words = line.split()
        if words[0] == b"+FULLRESYNC":
            self.base_offset = int(words[2])
        elif words[0] == b"+CONTINUE":
            self.base_offset = offset - 1
        return words

    def rdb(self) -> tuple[bytes, str]:
        """The snapshot's payload and its framing ("eof" or "bulk")."""
        while True:
            while self.buf.startswith(b"\n"):
                self.buf = self.buf[1:]
            if not self.buf:
                self._fill()
                continue
            break
        header = self.line()
        assert header.startswith(b"$"), header
        if header.startswith(b"$EOF:"):
            mark = header[5:]
            assert len(mark) == 40
            while not self.buf.endswith(mark) or len(self.buf) < 40:
                self._fill()
            payload, self.buf = self.buf[:-40], b""
            return payload, "eof"
        return self.exactly(int(header[1:])), "bulk"

    def read_stream(self, n: int, timeout: float = 5.0) -> bytes:
        """At least n more stream bytes (all that arrived), appended to self.stream."""
        deadline = time.monotonic() + timeout
        while len(self.buf) < n and time.monotonic() < deadline:
            self.sock.settimeout(max(deadline - time.monotonic(), 0.01))
            try:
                self._fill()
            except TimeoutError:
                break
        self.sock.settimeout(10.0)
        data, self.buf = self.buf, b""
        self.stream += data
        return data

    def read_commands(self, count: int, timeout: float = 5.0) -> list[list[bytes]]:
        """The next count commands of the stream (their bytes go to self.stream)."""
        commands = []
        deadline = time.monotonic() + timeout
        self.sock.settimeout(timeout)
        try:
            for _ in range(count):
                header = self.line()
                assert header.startswith(b"*"), header
                argv = []
                raw = header + b"\r\n"
                for _ in range(int(header[1:])):
                    size_line = self.line()
                    size = int(size_line[1:])
                    arg = self.exactly(size + 2)[:-2]
                    raw += size_line + b"\r\n" + arg + b"\r\n"
                    argv.append(arg)
                self.stream += raw
                commands.append(argv)
                if time.monotonic() > deadline:
                    break
        finally:
            self.sock.settimeout(10.0)
        return commands

    def follow(self, duration: float) -> bytes:
        """Read the stream for duration seconds, acknowledging it every 0.2 s as a replica
        does (Redis starts a diskless replica's stream at an ACK received once it is online)."""
        got = b""
        deadline = time.monotonic() + duration
        while time.monotonic() < deadline:
            self.ack()
            got += self.read_stream(1 << 30, timeout=0.2)
        return got

    @property
    def offset(self) -> int:
        """The master offset of the last stream byte received."""
        return self.base_offset + len(self.stream)

    def ack(self, offset: int | None = None) -> None:
        self.send("REPLCONF", "ACK", self.offset if offset is None else offset)

    def sync_full(self, port: int = 7777) -> tuple[bytes, str]:
        """Handshake, PSYNC ? -1, the snapshot; a diskless payload is acknowledged so that the
        stream starts."""
        self.handshake(port)
        words = self.psync()
        assert words[0] == b"+FULLRESYNC", words
        payload, framing = self.rdb()
        if framing == "eof":
            self.ack()
        return payload, framing


def wait_for(predicate, timeout: float = 10.0, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


def load_with_rivulet(payload: bytes) -> ServerProcess:
    """Start a Rivulet server on the payload as its dump.rdb (the caller stops it)."""
    data_dir = tempfile.mkdtemp(prefix="rivulet-repl-rdb-")
    with open(os.path.join(data_dir, "dump.rdb"), "wb") as fh:
        fh.write(payload)
    proc = ServerProcess("--appendonly", "no", data_dir=data_dir).start()
    return proc


def check_rdb_with(binary: str, payload: bytes) -> subprocess.CompletedProcess:
    with tempfile.NamedTemporaryFile(suffix=".rdb", delete=False) as fh:
        fh.write(payload)
    try:
        return subprocess.run([binary, fh.name], capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(fh.name)
