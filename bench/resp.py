"""A minimal blocking RESP2 client for loading data fast: pipelined batches over one socket.

redis-py pipelines cost more client CPU than the servers spend on XADD, which would make the
client the bottleneck on a 2-core machine; pre-encoded batches parsed by hiredis do not.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import hiredis

Arg = bytes | str | int | float


def encode(*args: Arg) -> bytes:
    """One command in RESP multibulk form."""
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


class RespError(Exception):
    pass


@dataclass(frozen=True)
class TLSFiles:
    """What a TLS client needs (file paths, so that it crosses to worker processes)."""

    ca: str
    cert: str
    key: str

    def context(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(self.ca)
        ctx.load_cert_chain(self.cert, self.key)
        return ctx

    def redis_benchmark_args(self) -> list[str]:
        return ["--tls", "--cacert", self.ca, "--cert", self.cert, "--key", self.key]


class RespClient:
    """One connection to 127.0.0.1:port; replies are hiredis's Python objects (bytes, int, list).
    With `tls`, the connection is a TLS one with that client certificate."""

    def __init__(self, port: int, timeout: float = 120.0, tls: TLSFiles | None = None) -> None:
        sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if tls is not None:
            sock = tls.context().wrap_socket(sock, server_hostname="127.0.0.1")
        self.sock = sock
        self.reader = hiredis.Reader()
        # Replies are read into one buffer, made once: recv(n) allocates n bytes at every call,
        # and for a 1 MB read that is heap growth and trimming (brk, page faults) that made each
        # round trip of a latency case about 40 µs longer, for either server.
        self._buf = bytearray(1 << 20)

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_replies(self, n: int, raise_errors: bool = True) -> list[Any]:
        replies: list[Any] = []
        while len(replies) < n:
            reply = self.reader.gets()
            if reply is False:
                got = self.sock.recv_into(self._buf)
                if not got:
                    raise ConnectionError("server closed the connection")
                self.reader.feed(self._buf, 0, got)
                continue
            if raise_errors and isinstance(reply, hiredis.ReplyError):
                raise RespError(str(reply))
            replies.append(reply)
        return replies

    def call(self, *args: Arg) -> Any:
        self.send(encode(*args))
        return self.read_replies(1)[0]

    def pipeline(self, commands: Sequence[Sequence[Arg]]) -> list[Any]:
        self.send(b"".join(encode(*c) for c in commands))
        return self.read_replies(len(commands))

    def repeat(self, command: bytes, times: int) -> None:
        """Send one pre-encoded command `times` times in a single write; check the replies."""
        self.send(command * times)
        self.read_replies(times)

    def info(self, section: str) -> dict[str, str]:
        text = self.call("INFO", section).decode()
        fields = {}
        for line in text.splitlines():
            if ":" in line and not line.startswith("#"):
                key, _, value = line.partition(":")
                fields[key] = value
        return fields

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> RespClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def load_stream(client: RespClient, key: str, entries: int, fields: Sequence[Arg], batch: int = 1000) -> None:
    """XADD `entries` entries with auto IDs, `batch` commands per write."""
    command = encode("XADD", key, "*", *fields)
    done = 0
    while done < entries:
        n = min(batch, entries - done)
        client.repeat(command, n)
        done += n
