"""The servers under test: a fresh Rivulet process and a fresh redis-server, started the tests' way."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from typing import Any

from tests.serverproc import RedisProcess, ServerProcess

RIVULET = "rivulet"
REDIS = "redis"

INSTALL_HINT = ("install Debian's Redis with `make tools` "
                "(or `apt-get install redis-server redis-tools`) to compare against it")


def redis_available() -> bool:
    return RedisProcess.available()


def redis_benchmark_available() -> bool:
    return shutil.which("redis-benchmark") is not None


@dataclass
class Target:
    """A running server: its name (rivulet/redis), port and pid."""

    name: str
    port: int
    pid: int
    handle: Any = field(repr=False)
    tls_port: int = 0  # also listening with TLS (the tls case)

    def stop(self) -> None:
        self.handle.cleanup()

    def __enter__(self) -> Target:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start(name: str, *args: str, tls_port: int = 0) -> Target:
    """A fresh server process: nothing loaded, nothing persisted (no RDB/AOF writes during runs).

    Both servers run without persistence, so that the comparison measures the same work. `args`
    are more options for either server (with `tls_port`, the TLS ones).
    """
    proc: ServerProcess | RedisProcess
    if name == RIVULET:
        proc = ServerProcess("--appendonly", "no", *args).start()
    elif name == REDIS:
        proc = RedisProcess(*args).start()
    else:
        raise ValueError(f"unknown target {name!r}")
    assert proc.proc is not None
    return Target(name, proc.port, proc.proc.pid, proc, tls_port)
