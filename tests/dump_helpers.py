"""Shared by the DUMP/RESTORE tests: a Redis 7.4 process when one is on this machine, and the
parts of a DUMP payload."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.serverproc import free_port, wait_for_port

REDIS74_DEFAULT = "/tmp/redis74/src/redis-server"


def redis74_binary() -> str | None:
    path = os.environ.get("RIVULET_REDIS74") or REDIS74_DEFAULT
    return path if Path(path).is_file() and os.access(path, os.X_OK) else None


@pytest.fixture(scope="session")
def redis74() -> Iterator[redis.Redis]:
    """A Redis built from 7.4 sources (RDB version 12, hash field expiry), for byte-level comparisons
    with what 7.4 writes. The committed payloads in tests/data/rdb/values/ cover CI machines."""
    binary = redis74_binary()
    if binary is None:
        pytest.skip(
            "NOT TESTED against a live Redis 7.4: no binary at RIVULET_REDIS74 or "
            f"{REDIS74_DEFAULT}; the committed 7.4 payloads are still checked"
        )
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="redis74-test-")
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", workdir],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, proc)
        client = redis.Redis(port=port)
        yield client
        client.close()
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)


def payload_body(payload: bytes) -> bytes:
    """A DUMP payload without its 2-byte version and 8-byte CRC trailer."""
    return payload[:-10]


def snapshot(client: redis.Redis, key: str, field_times: bool = True) -> list:
    """What a key holds, read back with commands, in a form that compares across servers: the type,
    the OBJECT ENCODING, then the content (sets and hashes sorted: their table order is Redis's
    hashing), and with `field_times` each hash field's expiry time (HPEXPIRETIME, Redis 7.4)."""
    kind = client.type(key).decode()
    out: list = [kind, client.object("encoding", key).decode()]
    if kind == "string":
        out.append(client.get(key).hex())
    elif kind == "list":
        out.append([x.hex() for x in client.lrange(key, 0, -1)])
    elif kind == "set":
        out.append(sorted(x.hex() for x in client.smembers(key)))
    elif kind == "zset":
        out.append([[m.hex(), repr(s)] for m, s in client.zrange(key, 0, -1, withscores=True)])
    elif kind == "hash":
        pairs = sorted(client.hgetall(key).items())
        out.append([[f.hex(), v.hex()] for f, v in pairs])
        if field_times and pairs:
            times = client.execute_command("HPEXPIRETIME", key, "FIELDS", len(pairs), *[f for f, _ in pairs])
            out.append(list(times))
    return out
