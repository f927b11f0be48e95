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
