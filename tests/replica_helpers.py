"""Helpers for the replication tests: real Redis masters (7.0 from Debian, 7.4 when built),
waiting for a link to catch up, and comparing two servers' datasets."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import Any

import hiredis
import pytest
import redis

from tests.helpers import plain
from tests.serverproc import ServerProcess, free_port, wait_for_port

REDIS70 = shutil.which("redis-server")
REDIS74 = os.environ.get("RIVULET_REDIS74", "/tmp/redis74/src/redis-server")


def master_binaries() -> list[Any]:
    """The Redis builds to replicate from: Debian's 7.0, and 7.4 where it was built."""
    return [
        pytest.param(REDIS70, id="redis70", marks=pytest.mark.skipif(
            REDIS70 is None, reason="redis-server is not installed: replication from Redis was "
                                    "NOT tested")),
        pytest.param(REDIS74, id="redis74", marks=pytest.mark.skipif(
            not os.access(REDIS74, os.X_OK), reason=f"no Redis 7.4 at {REDIS74}: replication from "
                                                "Redis 7.4 was NOT tested")),
    ]


class RedisServer:
    """A real redis-server on a free port with its own directory and options."""

    def __init__(self, binary: str | None = None, *args: str, port: int | None = None,
                 data_dir: str | None = None) -> None:
        self.binary = binary or REDIS70 or "redis-server"
        self.port = port or free_port()
        self.own_dir = data_dir is None
        self.dir = data_dir or tempfile.mkdtemp(prefix="redis-repl-")
        self.args = list(args)
        self.proc: subprocess.Popen | None = None

    def start(self) -> RedisServer:
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.dir, "--repl-diskless-sync-delay", "0",
             "--logfile", os.path.join(self.dir, "redis.log"), *self.args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port, self.proc)
        return self

    def client(self, **kwargs: Any) -> redis.Redis:
        return redis.Redis(port=self.port, **kwargs)

    def stop(self, kill: bool = False) -> None:
        if self.proc is not None and self.proc.poll() is None:
            if kill:
                self.proc.kill()
            else:
                self.proc.terminate()
            self.proc.wait(10)

    def cleanup(self) -> None:
        self.stop()
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)


def rivulet_server(procs: list, *args: str, **kwargs: Any) -> ServerProcess:
    """A Rivulet server (ServerProcess's options), started and added to procs."""
    proc = ServerProcess(*args, **kwargs).start()
    procs.append(proc)
    return proc


def redis_replica(procs: list, binary: str, master_port: int, *args: str) -> RedisServer:
    """A real Redis replica of the server at master_port, started and added to procs."""
    replica = RedisServer(binary, "--replicaof", "127.0.0.1", str(master_port), *args).start()
    procs.append(replica)
    return replica


def wait_until(check: Callable[[], Any], timeout: float = 15.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = check()
        except (redis.ConnectionError, redis.ResponseError):
            result = None
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def raw_client(r: redis.Redis) -> redis.Redis:
    """A client of the same server on its own connection, replies as sent (no parsing)."""
    kwargs = r.connection_pool.connection_kwargs
    return plain(redis.Redis(port=kwargs["port"], password=kwargs.get("password"),
                             single_connection_client=True))


def info(r: redis.Redis, section: str = "replication") -> dict[str, str]:
    """INFO's fields as the server wrote them."""
    with raw_client(r) as c:
        text = c.execute_command("INFO", section)
    if isinstance(text, bytes):
        text = text.decode()
    out: dict[str, str] = {}
    for line in str(text).splitlines():
        if ":" in line and not line.startswith("#"):
            name, _, value = line.partition(":")
            out[name] = value
    return out


def wait_synced(master: redis.Redis, replica: redis.Redis, timeout: float = 20.0) -> None:
    """Until the replica's link is up and it applied everything the master has sent."""

    def caught_up() -> bool:
        mine = info(replica)
        return (mine.get("master_link_status") == "up"
                and mine.get("slave_repl_offset") == info(master)["master_repl_offset"])

    wait_until(caught_up, timeout, "the replica to catch up with its master")


# XINFO STREAM FULL fields whose values depend on the server's clock or node layout.
MOVING = {"seen-time", "active-time", "radix-tree-keys", "radix-tree-nodes"}


def _pairs(reply: Any) -> dict[str, Any]:
    """A map reply (or a flat name/value list) with str keys."""
    if isinstance(reply, dict):
        items = list(reply.items())
    else:
        items = list(zip(reply[::2], reply[1::2], strict=True))
    return {k.decode() if isinstance(k, bytes) else k: v for k, v in items}


def stream_full(client: redis.Redis, key: bytes) -> dict[str, Any]:
    """XINFO STREAM FULL as nested dicts, without the fields in MOVING."""
    with raw_client(client) as r:
        return _stream_full(r, key)


def _stream_full(r: redis.Redis, key: bytes) -> dict[str, Any]:
    top = _pairs(r.execute_command("XINFO", "STREAM", key, "FULL"))
    groups = []
    for raw in top.get("groups") or []:
        group = _pairs(raw)
        group["consumers"] = [{k: v for k, v in _pairs(c).items() if k not in MOVING}
                              for c in group.get("consumers") or []]
        groups.append(group)
    top["groups"] = groups
    return {k: v for k, v in top.items() if k not in MOVING}


def restrict(reference: Any, other: Any) -> Any:
    """`other` with only the dict keys `reference` has (Rivulet reports fields Redis 7.0
    does not: those are not compared)."""
    if isinstance(reference, dict) and isinstance(other, dict):
        return {k: restrict(reference[k], other[k]) for k in reference if k in other}
    if (isinstance(reference, (list, tuple)) and type(other) is type(reference)
            and len(reference) == len(other)):
        return type(other)(restrict(a, b) for a, b in zip(reference, other, strict=True))
    return other


def dataset(client: redis.Redis, databases: int = 16) -> dict[int, dict[bytes, Any]]:
    """Every key of every database with its type, value and whether it has a TTL."""
    with raw_client(client) as r:
        return _dataset(r, databases)


def _dataset(r: redis.Redis, databases: int) -> dict[int, dict[bytes, Any]]:
    out: dict[int, dict[bytes, Any]] = {}
    for db in range(databases):
        r.execute_command("SELECT", db)
        keys = sorted(r.execute_command("KEYS", "*"))
        if not keys:
            continue
        found: dict[bytes, Any] = {}
        for key in keys:
            kind = r.execute_command("TYPE", key)
            kind = kind.decode() if isinstance(kind, bytes) else kind
            if kind == "string":
                value: Any = r.execute_command("GET", key)
            elif kind == "list":
                value = r.execute_command("LRANGE", key, 0, -1)
            elif kind == "hash":
                value = sorted(r.execute_command("HGETALL", key))
            elif kind == "set":
                value = sorted(r.execute_command("SMEMBERS", key))
            elif kind == "zset":
                value = r.execute_command("ZRANGE", key, 0, -1, "WITHSCORES")
            elif kind == "stream":
                value = _stream_full(r, key)
            else:
                value = kind
            found[key] = (kind, value, r.execute_command("PTTL", key) > 0)
        out[db] = found
    r.execute_command("SELECT", 0)
    return out


def _without(value: Any, names: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: _without(v, names) for k, v in value.items() if k not in names}
    if isinstance(value, (list, tuple)):
        return type(value)(_without(v, names) for v in value)
    return value


def same_dataset(master: redis.Redis, replica: redis.Redis,
                 ignore: frozenset[str] = frozenset()) -> None:
    """The replica holds what the master holds (streams compared on Redis's fields, less the
    fields named in `ignore`)."""
    theirs = _without(dataset(master), ignore)
    ours = restrict(theirs, _without(dataset(replica), ignore))
    if ours != theirs:
        diffs = []
        for db in sorted(set(ours) | set(theirs)):
            a, b = ours.get(db, {}), theirs.get(db, {})
            for key in sorted(set(a) | set(b)):
                if a.get(key) != b.get(key):
                    diffs.append(f"db{db} {key!r}:\n  replica {a.get(key)!r}\n  master  {b.get(key)!r}")
        raise AssertionError("datasets differ:\n" + "\n".join(diffs))


# An RDB file holding x = "1" in database 0, without a checksum (zero: not checked).
RDB = b"REDIS0011" + b"\xfe\x00" + b"\x00\x01x\x011" + b"\xff" + b"\x00" * 8


class ScriptedMaster:
    """A listening socket that plays the master's part, one connection at a time."""

    def __init__(self) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(4)
        self.listener.settimeout(15)
        self.port = self.listener.getsockname()[1]
        self.conn: socket.socket | None = None
        self.reader = hiredis.Reader()

    def accept(self) -> None:
        """The replica's next connection (the current one is closed after, not before: its
        end must not be what makes the replica connect again)."""
        old = self.conn
        self.conn, _ = self.listener.accept()
        if old is not None:
            old.close()
        self.conn.settimeout(10)
        self.reader = hiredis.Reader()

    def expect(self) -> list[bytes]:
        """The next command the replica sends."""
        assert self.conn is not None
        while True:
            message = self.reader.gets()
            if message is not False:
                return message
            data = self.conn.recv(65536)
            if not data:
                raise ConnectionError("the replica closed the link")
            self.reader.feed(data)

    def expect_ack(self, offset: int, timeout: float = 5.0) -> None:
        """ACKs until one says `offset` (earlier periodic ones may say less, never more)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = self.expect()
            assert message[:2] == [b"REPLCONF", b"ACK"], message
            acked = int(message[2])
            assert acked <= offset
            if acked == offset:
                return
        raise AssertionError(f"no REPLCONF ACK {offset}")

    def send(self, data: bytes) -> None:
        assert self.conn is not None
        self.conn.sendall(data)

    def handshake(self, auth: bool = False, ip: bool = False) -> list[bytes]:
        """Answer the handshake up to PSYNC; returns the PSYNC command."""
        assert self.expect() == [b"PING"]
        self.send(b"+PONG\r\n")
        expected = 3 + int(auth) + int(ip)
        for _ in range(expected - 1):
            assert self.expect()[0] in (b"AUTH", b"REPLCONF")
            self.send(b"+OK\r\n")
        return self.expect()

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
        self.listener.close()
