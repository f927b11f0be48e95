"""Shared fixtures: a real server process per test session, clients in RESP2 and RESP3."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest
import redis
import redis.asyncio

from server.native import REBUILD_HINT, stale_modules
from tests.helpers import node_max_entries, plain
from tests.serverproc import RawConnection, RedisProcess, ServerProcess


@pytest.fixture(scope="session")
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess().start()
    yield proc
    proc.cleanup()


@pytest.fixture
def server_factory() -> Iterator:
    """Start extra servers with their own options; all are stopped after the test."""
    started: list[ServerProcess] = []

    def start(*args: str, **kwargs) -> ServerProcess:
        proc = ServerProcess(*args, **kwargs).start()
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.cleanup()


@pytest.fixture
def procs() -> Iterator[list]:
    """Servers a test starts (Rivulet's or Redis's, anything with `proc` and `cleanup()`):
    each is cleaned up after the test, resumed first if the test stopped it (SIGSTOP)."""
    started: list = []
    yield started
    # All resumed before any is stopped: a master stopping waits (shutdown-timeout) for a
    # stopped replica to catch up.
    for proc in started:
        popen = getattr(proc, "proc", None)
        if popen is not None and popen.poll() is None:
            os.kill(popen.pid, signal.SIGCONT)
    for proc in started:
        proc.cleanup()


def _flush(port: int) -> None:
    with redis.Redis(port=port) as c:
        c.flushall()


def _client(port: int, protocol: int) -> Iterator[redis.Redis]:
    _flush(port)
    client = redis.Redis(port=port, protocol=protocol)
    yield client
    client.close()


@pytest.fixture
def r(server: ServerProcess) -> Iterator[redis.Redis]:
    """A RESP2 redis-py client on a flushed server."""
    yield from _client(server.port, 2)


@pytest.fixture
def r3(server: ServerProcess) -> Iterator[redis.Redis]:
    """A RESP3 redis-py client (HELLO 3 handshake) on a flushed server."""
    yield from _client(server.port, 3)


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def rc(request, server: ServerProcess) -> Iterator[redis.Redis]:
    """The same test in RESP2 and RESP3."""
    yield from _client(server.port, request.param)


@pytest.fixture
def raw_r(r: redis.Redis) -> redis.Redis:
    """The RESP2 client without redis-py's reply callbacks: replies exactly as sent."""
    return plain(r)


@pytest.fixture
def raw_rc(rc: redis.Redis) -> redis.Redis:
    """The RESP2/RESP3 client without redis-py's reply callbacks: replies exactly as sent."""
    return plain(rc)


@pytest.fixture
def small_nodes(r: redis.Redis) -> Iterator[redis.Redis]:
    """The RESP2 client, its server using 10-entry stream nodes for the test (restored afterwards)."""
    with node_max_entries(r, 10):
        yield r


@pytest.fixture
async def ar(server: ServerProcess):
    """An asyncio redis-py client (RESP3)."""
    _flush(server.port)
    client = redis.asyncio.Redis(port=server.port, protocol=3)
    yield client
    await client.aclose()


@pytest.fixture
def raw(server: ServerProcess) -> Iterator[RawConnection]:
    _flush(server.port)
    conn = RawConnection(server.port)
    yield conn
    conn.close()


@pytest.fixture(scope="session")
def real_redis() -> Iterator[RedisProcess]:
    if not RedisProcess.available():
        pytest.skip("redis-server is not installed (make test installs Debian's redis-server)")
    proc = RedisProcess().start()
    yield proc
    proc.cleanup()


def _is_spark(nodeid: str) -> bool:
    return nodeid.split("::", 1)[0].rsplit("/", 1)[-1].startswith("test_spark")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The Spark files first (stable sort: the rest keeps its order): the longest unit of work
    # (below) starts at once, while the other worker takes the short files.
    items.sort(key=lambda item: not _is_spark(item.nodeid))


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, absent when it is not loaded
def pytest_xdist_make_scheduler(config: pytest.Config, log):  # noqa: ANN201 - xdist's scheduler
    """With --dist loadfile, the Spark files go to one worker together: each worker running
    Spark tests starts its own JVM with a 1 GB heap, which a 2-core machine pays twice
    otherwise. Files are handed out in collection order (not by their number of tests, xdist's
    default), so that this long unit starts first."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SparkTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "spark" if _is_spark(nodeid) else super()._split_scope(nodeid)

    config.option.loadscopereorder = False
    return SparkTogether(config, log)


def pytest_sessionstart(session: pytest.Session) -> None:
    # Python imports a compiled module before its .py: after an edit, the old code would be tested.
    stale = stale_modules()
    if stale:
        pytest.exit(f"compiled modules are older than their sources ({', '.join(stale)}): "
                    f"{REBUILD_HINT}", returncode=1)
