"""Regenerate the dump.rdb files of this directory with real Redis servers.

    python tests/data/rdb/files/generate.py [path/to/redis-7.4-server]

Each file is the SAVE of a Redis that ran the commands of `dataset()` (every value type, small
and large encodings, TTLs, several databases, a stream with consumer groups and pending entries,
on 7.4 hash fields with TTLs, and a key whose TTL runs out right after the save). Redis 7.0 is
the system's `redis-server`; Redis 7.4 defaults to $RIVULET_REDIS74 or
/tmp/redis74/src/redis-server. The tests load each file into Rivulet and compare it, command by
command, with a Rivulet that ran the same commands (and with the real Redis when present).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_74 = "/tmp/redis74/src/redis-server"

Command = tuple[Any, ...]

# 2100-01-01: far enough for the files to stay valid, fixed so that regenerating changes nothing.
FAR = 4102444800000


def dataset(redis74: bool) -> list[tuple[int, list[Command]]]:
    """(database, commands) pairs; the 7.4-only commands only when redis74."""
    db0: list[Command] = [
        ("SET", "str:int", "12345"),
        ("SET", "str:neg", "-9000000000"),
        ("SET", "str:short", "hello"),
        ("SET", "str:empty", ""),
        ("SET", "str:long", "abcdefgh" * 100),  # LZF-compressed
        ("SET", "str:binary", bytes(range(256))),
        ("SET", "str:ttl", "v", "PXAT", FAR),
        ("RPUSH", "list:small", "a", "b", "1", "-2", "c" * 100),
        ("RPUSH", "list:big", *[f"item-{i}" * 3 for i in range(2000)]),
        ("HSET", "hash:small", "f1", "v1", "f2", "2", "f3", ""),
        ("HSET", "hash:big", *[x for i in range(600) for x in (f"field{i}", f"value{i}")]),
        ("HSET", "hash:longvalue", "f", "x" * 100),
        ("SADD", "set:ints", *range(0, 300, 3)),
        ("SADD", "set:small", "a", "b", "c"),
        ("SADD", "set:big", *[f"m{i}" for i in range(300)]),
        ("ZADD", "zset:small", 1, "a", 2.5, "b", -3, "c"),
        ("ZADD", "zset:big", *[x for i in range(200) for x in (i * 0.5, f"member{i}")]),
        ("ZADD", "zset:inf", "inf", "up", "-inf", "down", 0, "zero"),
        ("PEXPIREAT", "list:small", FAR),
        ("XADD", "stream", "1-1", "f", "v"),
        *[("XADD", "stream", f"{i}-0", "k", i, "w", "abc" * (i % 4)) for i in range(2, 300)],
        ("XDEL", "stream", "5-0", "6-0"),
        ("XGROUP", "CREATE", "stream", "g1", "0"),
        ("XGROUP", "CREATE", "stream", "g2", "$"),
        ("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", "stream", ">"),
        ("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "2", "STREAMS", "stream", ">"),
        ("XACK", "stream", "g1", "2-0"),
        ("XGROUP", "CREATECONSUMER", "stream", "g2", "carol"),
        ("XADD", "stream:empty", "MAXLEN", "0", "1-0", "f", "v"),
        # Saved alive, expired by the time anything loads the file: a loader skips it.
        ("SET", "gone", "soon", "PX", 1500),
    ]
    if redis74:
        db0 += [
            ("HSET", "hash:ttl", "a", "1", "b", "2", "c", "3"),
            ("HPEXPIREAT", "hash:ttl", FAR, "FIELDS", 2, "a", "b"),
            ("HSET", "hash:bigttl", *[x for i in range(600) for x in (f"f{i}", f"v{i}")]),
            ("HPEXPIREAT", "hash:bigttl", FAR, "FIELDS", 2, "f1", "f2"),
        ]
    db1: list[Command] = [("SET", "in-db1", "x"), ("RPUSH", "l1", "a")]
    db9: list[Command] = [("SET", "in-db9", "y", "PXAT", FAR)]
    return [(0, db0), (1, db1), (9, db9)]


# File name -> (server: "70" or "74", extra config).
FILES: dict[str, tuple[str, list[str]]] = {
    "redis70.rdb": ("70", []),
    "redis70-lfu-nocompress.rdb": ("70", ["--maxmemory-policy", "allkeys-lfu", "--rdbcompression", "no"]),
    "redis70-lru-nochecksum.rdb": ("70", ["--maxmemory-policy", "allkeys-lru", "--rdbchecksum", "no"]),
    "redis74.rdb": ("74", []),
    "redis74-lfu.rdb": ("74", ["--maxmemory-policy", "allkeys-lfu"]),
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _encode(cmd: Command) -> bytes:
    parts = [p if isinstance(p, bytes) else str(p).encode() for p in cmd]
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


def run_commands(port: int, commands: list[tuple[int, list[Command]]]) -> None:
    """Send the commands (SELECTing each database) and read every reply."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        for db, cmds in commands:
            for cmd in [("SELECT", db), *cmds]:
                sock.sendall(_encode(cmd))
                _read_reply(sock.makefile("rb"))


def _read_reply(fh: Any) -> None:
    line = fh.readline()
    kind = line[:1]
    if kind == b"$":
        n = int(line[1:])
        if n >= 0:
            fh.read(n + 2)
    elif kind == b"*":
        for _ in range(max(int(line[1:]), 0)):
            _read_reply(fh)
    elif kind == b"-":
        raise RuntimeError(line.decode())


def generate(server: str, name: str, extra: list[str], redis74: bool) -> None:
    work = tempfile.mkdtemp(prefix="rdbgen-")
    port = _free_port()
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", work, *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port)).close()
                break
            except OSError:
                time.sleep(0.05)
        run_commands(port, dataset(redis74))
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(_encode(("SAVE",)))
            assert sock.makefile("rb").readline() == b"+OK\r\n"
        shutil.copy(os.path.join(work, "dump.rdb"), HERE / name)
        print(f"wrote {HERE / name}")
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    server74 = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("RIVULET_REDIS74", DEFAULT_74)
    for name, (version, extra) in FILES.items():
        server = "redis-server" if version == "70" else server74
        generate(server, name, extra, version == "74")
    return 0


if __name__ == "__main__":
    sys.exit(main())
