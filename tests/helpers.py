"""Helpers shared by the test modules: raw RESP calls, reply shapes, stream set-up, differential runs
against a real Redis, and server restarts. Fixtures live in tests/conftest.py."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import hiredis
import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from tests.serverproc import RawConnection, ServerProcess


def no_retry() -> Retry:
    """No retries, for a client that expects to be refused: redis-py takes a refused AUTH
    (AuthenticationError) for a connection error and retries it after backoffs of up to a second,
    each retry one more refusal in ACL LOG."""
    return Retry(NoBackoff(), 0)


# --- raw RESP -------------------------------------------------------------------------------------


def encode_command(*args: bytes | str | int) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def _read_line(conn: RawConnection) -> bytes:
    while b"\r\n" not in conn.buf:
        chunk = conn.sock.recv(65536)
        if not chunk:
            raise ConnectionError("connection closed")
        conn.buf += chunk
    line, _, conn.buf = conn.buf.partition(b"\r\n")
    return line + b"\r\n"


def read_reply(conn: RawConnection) -> bytes:
    """The exact bytes of one complete RESP2/RESP3 reply."""
    line = _read_line(conn)
    kind, rest = line[:1], line[1:-2]
    if kind in (b"$", b"=", b"!") and rest != b"-1":
        return line + conn.read_exactly(int(rest) + 2)
    if kind in (b"*", b">", b"~", b"%", b"|") and rest != b"-1":
        count = int(rest) * (2 if kind in (b"%", b"|") else 1)
        return line + b"".join(read_reply(conn) for _ in range(count))
    return line


def call_raw(conn: RawConnection, *args: bytes | str | int) -> bytes:
    conn.send(encode_command(*args))
    return read_reply(conn)


# --- differential runs against a real Redis -------------------------------------------------------


def run_script(port: int, script: list[tuple]) -> list[bytes]:
    """Run commands on a flushed server, returning each raw reply."""
    conn = RawConnection(port)
    try:
        call_raw(conn, "FLUSHALL")
        return [call_raw(conn, *cmd) for cmd in script]
    finally:
        conn.close()


def run_pipelined(port: int, script: list[tuple], flush: bool = True) -> list[bytes]:
    """Send every command in one write (on a flushed server unless flush=False) and return
    each raw reply: what a client's pipeline does, and what the run handlers take as a batch."""
    conn = RawConnection(port)
    try:
        if flush:
            call_raw(conn, "FLUSHALL")
        conn.send(b"".join(encode_command(*cmd) for cmd in script))
        return [read_reply(conn) for _ in script]
    finally:
        conn.close()


def parse_aof(data: bytes) -> list[list[bytes]]:
    """The commands of an AOF (or any RESP command stream), in order."""
    reader = hiredis.Reader()
    reader.feed(data)
    commands = []
    while (cmd := reader.gets()) is not False:
        commands.append(cmd)
    return commands


def assert_same_as_redis(server, real_redis, script: list[tuple]) -> None:
    ours = run_script(server.port, script)
    theirs = run_script(real_redis.port, script)
    for cmd, mine, ref in zip(script, ours, theirs, strict=True):
        assert mine == ref, f"{cmd!r}: rivulet {mine!r} != redis {ref!r}"


def run_plain(port: int, script) -> list:
    """Run commands on a flushed server through a RESP2 client without reply callbacks: each reply
    as sent, or ("error", message) for an error reply."""
    with redis.Redis(port=port, protocol=2) as c:
        plain(c)
        c.flushall()
        out = []
        for argv in script:
            try:
                out.append(c.execute_command(*argv))
            except redis.ResponseError as exc:
                out.append(("error", str(exc)))
        return out


def _read_one_reply(conn: RawConnection) -> bytes:
    """The raw bytes of exactly one complete reply (hiredis tells where it ends)."""
    reader = hiredis.Reader()
    data = b""
    while True:
        chunk = conn.sock.recv(65536)
        if not chunk:
            return data
        data += chunk
        reader.feed(chunk)
        if reader.gets() is not False:
            return data


def resp3_reply_bytes(port: int, command: bytes) -> bytes:
    """What one inline command gets on a fresh HELLO 3 connection, as raw bytes."""
    conn = RawConnection(port)
    try:
        conn.send(b"HELLO 3\r\n")
        _read_one_reply(conn)
        conn.send(command)
        return _read_one_reply(conn)
    finally:
        conn.close()


# --- clients and replies --------------------------------------------------------------------------


def plain(r: redis.Redis) -> redis.Redis:
    """The client without redis-py's reply callbacks: replies as the protocol delivers them."""
    r.response_callbacks.clear()
    return r


def as_map(reply) -> dict:
    """A map reply as a dict, checking the RESP2 form is a flat array of pairs."""
    if isinstance(reply, dict):
        return reply
    assert isinstance(reply, list) and len(reply) % 2 == 0
    return dict(zip(reply[::2], reply[1::2], strict=True))


def err(r: redis.Redis, *argv) -> str:
    """The message of the error reply that the command must get."""
    with pytest.raises(redis.ResponseError) as exc:
        r.execute_command(*argv)
    return str(exc.value)


def blocked_clients(r: redis.Redis) -> int:
    """INFO's blocked_clients, with or without redis-py's reply callbacks."""
    info = r.execute_command("INFO", "clients")
    if isinstance(info, dict):
        return int(info["blocked_clients"])
    info = info.decode() if isinstance(info, bytes) else info
    return int(info.split("blocked_clients:")[1].split()[0])


def wait_blocked(r: redis.Redis, n: int, timeout: float = 3.0) -> None:
    """Wait until exactly n clients are blocked."""
    deadline = time.monotonic() + timeout
    while (have := blocked_clients(r)) != n:
        assert time.monotonic() < deadline, f"expected {n} blocked clients, got {have}"
        time.sleep(0.005)


def exec_after_change(port: int, prepare: Callable, keys: tuple[str, ...], change: Callable) -> list:
    """On a flushed server: prepare(client), WATCH keys, change(another client), then MULTI, GET k,
    EXEC: EXEC's replies (redis.WatchError when the change aborted the transaction)."""
    c = redis.Redis(port=port)
    other = redis.Redis(port=port)
    try:
        c.flushall()
        prepare(c)
        pipe = c.pipeline()
        pipe.watch(*keys)
        change(other)
        pipe.multi()
        pipe.get("k")
        return pipe.execute()
    finally:
        c.close()
        other.close()


# --- streams --------------------------------------------------------------------------------------


def fill_stream(r: redis.Redis, n: int, key: str = "s") -> None:
    """Entries 1-0 .. n-0, each {"i": its number}."""
    pipe = r.pipeline(transaction=False)
    for i in range(1, n + 1):
        pipe.xadd(key, {"i": i}, id=f"{i}-0")
    pipe.execute()


def add_entries(r: redis.Redis, key: str = "s", n: int = 4) -> None:
    """Entries 1-1 .. 1-n, each {"f": its number}."""
    for i in range(1, n + 1):
        r.execute_command("XADD", key, f"1-{i}", "f", str(i))


def xinfo_stream(r: redis.Redis, key: str = "s") -> dict:
    """XINFO STREAM as a dict with str keys (RESP2 or RESP3)."""
    reply = r.execute_command("XINFO", "STREAM", key)
    if isinstance(reply, list):
        reply = dict(zip(reply[::2], reply[1::2], strict=True))
    return {k.decode() if isinstance(k, bytes) else k: v for k, v in reply.items()}


@contextmanager
def node_max_entries_reset(*ports: int) -> Iterator[None]:
    """Set stream-node-max-entries back to its default (100) on the servers afterwards."""
    try:
        yield
    finally:
        for port in ports:
            with redis.Redis(port=port) as c:
                c.config_set("stream-node-max-entries", 100)


# --- restarts -------------------------------------------------------------------------------------


def aof_path(srv: ServerProcess) -> Path:
    return Path(srv.dir) / "appendonly.aof"


def restart(srv: ServerProcess, *args: str) -> ServerProcess:
    """Stop the server and start another on its data directory and port."""
    srv.stop()
    return ServerProcess(*args, data_dir=srv.dir, port=srv.port).start()


# XINFO STREAM FULL fields that differ between two servers holding the same data: consumers'
# clock readings, and the node layout (a rewrite or a replay packs entries as it likes).
_MOVING = {b"seen-time", b"active-time", b"radix-tree-keys", b"radix-tree-nodes"}


def strip_moving_fields(value: Any, also: frozenset[bytes] = frozenset()) -> Any:
    """A raw XINFO STREAM FULL reply without the fields in _MOVING or `also` (and their values)."""
    moving = _MOVING | also if also else _MOVING
    if isinstance(value, list):
        out: list[Any] = []
        skip = False
        for i, item in enumerate(value):
            if skip:
                skip = False
                continue
            if isinstance(item, bytes) and item in moving and i + 1 < len(value):
                skip = True
                continue
            out.append(strip_moving_fields(item, also))
        return out
    return value


@contextmanager
def node_max_entries(r: redis.Redis, n: int) -> Iterator[redis.Redis]:
    """The server of `r` with `n`-entry stream nodes while inside (the setting restored after)."""
    old = r.config_get("stream-node-max-entries")["stream-node-max-entries"]
    r.config_set("stream-node-max-entries", n)
    try:
        yield r
    finally:
        r.config_set("stream-node-max-entries", old)
