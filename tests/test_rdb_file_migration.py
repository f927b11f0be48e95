"""Moving data between Redis and Rivulet through dump.rdb: files written by Redis 7.0 and 7.4 load
into Rivulet, Rivulet's files load into Redis 7.4, and Redis 7.0 refuses them (version 12)."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest
import redis

from tests.dump_helpers import redis74_binary
from tests.rdb_file_helpers import (
    FILES,
    run_dataset,
    snapshot,
    start_redis_on,
    start_server_on,
    stop,
    wait_until,
)
from tests.serverproc import RedisProcess, free_port

REDIS_FILES = sorted(p.name for p in FILES.glob("*.rdb"))


def _is_74(name: str) -> bool:
    return name.startswith("redis74")


def _policy(name: str) -> tuple[str, ...]:
    if "-lfu" in name:
        return ("--maxmemory-policy", "allkeys-lfu")
    if "-lru" in name:
        return ("--maxmemory-policy", "allkeys-lru")
    return ()


def test_the_committed_files_are_there() -> None:
    assert {"redis70.rdb", "redis74.rdb"} <= set(REDIS_FILES)
    for name in REDIS_FILES:
        data = (FILES / name).read_bytes()
        assert data[:9] == (b"REDIS0012" if _is_74(name) else b"REDIS0010")


@pytest.mark.parametrize("name", REDIS_FILES)
def test_a_redis_file_loads_as_the_commands_that_built_it(server_factory, name: str) -> None:
    proc, port, work = start_server_on(FILES / name, *_policy(name))
    try:
        loaded = snapshot(port, field_ttls=_is_74(name))
        info = redis.Redis(port=port).info("persistence")
        # "gone" was alive when Redis saved the file and has expired since: skipped, as a master
        # skips it.
        assert info["rdb_last_load_keys_expired"] == 1
        assert info["rdb_last_load_keys_loaded"] == len(loaded)
        assert (0, b"gone") not in loaded
    finally:
        stop(proc, work)
    built = server_factory("--appendonly", "no", *_policy(name))
    run_dataset(built.port, _is_74(name))
    assert loaded == snapshot(built.port, field_ttls=_is_74(name))


def test_lfu_counters_come_back_from_a_redis_file() -> None:
    # Redis wrote a FREQ byte per key (allkeys-lfu): the counter survives the move.
    proc, port, work = start_server_on(FILES / "redis74-lfu.rdb", "--maxmemory-policy", "allkeys-lfu")
    try:
        c = redis.Redis(port=port)
        # Every key was written once: the counter of a new key (5), decayed by the minutes since
        # the file was made (lfu-decay-time 1), is what OBJECT FREQ answers.
        assert 0 <= c.object("freq", "str:int") <= 5
    finally:
        stop(proc, work)


@pytest.mark.skipif(not RedisProcess.available(), reason="redis-server (7.0) is not installed")
@pytest.mark.parametrize("name", [n for n in REDIS_FILES if not _is_74(n)])
def test_a_redis_70_file_reads_the_same_in_rivulet_and_in_redis_70(name: str) -> None:
    theirs_proc, theirs, theirs_dir = start_redis_on("redis-server", FILES / name, *_policy(name))
    ours_proc, ours, ours_dir = start_server_on(FILES / name, *_policy(name))
    try:
        # Encodings are left out: Redis 7.0 has no listpack sets or single-node listpack lists
        # (7.2 added them), and Rivulet encodes as 7.4 does: a small set of strings loaded from
        # a 7.0 file is "listpack" here and in 7.4, "hashtable" in 7.0.
        assert (snapshot(ours, field_ttls=False, encodings=False)
                == snapshot(theirs, field_ttls=False, encodings=False))
    finally:
        stop(theirs_proc, theirs_dir)
        stop(ours_proc, ours_dir)


def _need_74() -> str:
    binary = redis74_binary()
    if binary is None:
        pytest.skip("NOT TESTED: no Redis 7.4 binary (RIVULET_REDIS74 or /tmp/redis74/src/redis-server): "
                    "Rivulet's dump.rdb was not loaded by a real Redis 7.4 here, nor the committed "
                    "7.4 files compared with it live")
    return binary


@pytest.mark.parametrize("name", [n for n in REDIS_FILES if _is_74(n)])
def test_a_redis_74_file_reads_the_same_in_rivulet_and_in_redis_74(name: str) -> None:
    binary = _need_74()
    theirs_proc, theirs, theirs_dir = start_redis_on(binary, FILES / name, *_policy(name))
    ours_proc, ours, ours_dir = start_server_on(FILES / name, *_policy(name))
    try:
        assert snapshot(ours) == snapshot(theirs)
    finally:
        stop(theirs_proc, theirs_dir)
        stop(ours_proc, ours_dir)


def _rivulet_file(server_factory, *args: str) -> tuple[bytes, dict]:
    srv = server_factory("--appendonly", "no", *args)
    run_dataset(srv.port, True)
    c = redis.Redis(port=srv.port)
    assert c.save() is True
    return (Path(srv.dir) / "dump.rdb").read_bytes(), snapshot(srv.port)


@pytest.mark.parametrize("args", [(), ("--rdbcompression", "no"), ("--rdbchecksum", "no"),
                                  ("--maxmemory-policy", "allkeys-lru"),
                                  ("--maxmemory-policy", "volatile-lfu")])
def test_a_rivulet_file_loads_in_redis_74_as_it_was(server_factory, args: tuple[str, ...]) -> None:
    binary = _need_74()
    data, ours = _rivulet_file(server_factory, *args)
    assert data[:9] == b"REDIS0012"
    proc, port, work = start_redis_on(binary, data, *args)
    try:
        assert snapshot(port) == ours
        assert redis.Redis(port=port).dbsize() == sum(1 for db, _ in ours if db == 0)
    finally:
        stop(proc, work)
    # And Redis 7.4's own checker finds nothing wrong with it.
    with tempfile.TemporaryDirectory() as tmp:
        checker = Path(tmp) / "redis-check-rdb"
        checker.symlink_to(binary)
        path = Path(tmp) / "dump.rdb"
        path.write_bytes(data)
        done = subprocess.run([str(checker), str(path)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout
        assert "RDB looks OK!" in done.stdout


@pytest.mark.skipif(not RedisProcess.available(), reason="redis-server (7.0) is not installed")
def test_redis_70_refuses_a_version_12_file(server_factory) -> None:
    # Rivulet writes the format of Redis 7.4 (RDB 12), as Redis 7.4 itself does: Redis 7.0 knows
    # up to version 10 and stops rather than guess.
    data, _ = _rivulet_file(server_factory)
    with tempfile.TemporaryDirectory() as work:
        (Path(work) / "dump.rdb").write_bytes(data)
        done = subprocess.run(["redis-server", "--port", str(free_port()), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no", "--dir", work],
                              capture_output=True, text=True, timeout=30)
        assert done.returncode != 0
        assert "Can't handle RDB format version 12" in done.stdout
        assert (Path(work) / "dump.rdb").read_bytes() == data


def test_bgsave_from_a_redis_file_round_trips(server_factory) -> None:
    # Loaded from Redis's file, saved by Rivulet, loaded again: nothing changes on the way.
    proc, port, work = start_server_on(FILES / "redis74.rdb")
    try:
        before = snapshot(port)
        c = redis.Redis(port=port)
        c.bgsave()
        wait_until(lambda: c.info("persistence")["rdb_bgsave_in_progress"] == 0, what="BGSAVE")
        assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
        assert c.execute_command("DEBUG", "RELOAD") == b"OK"
        assert snapshot(port) == before
        data = (Path(work) / "dump.rdb").read_bytes()
    finally:
        stop(proc, work)
    proc, port, work = start_server_on(data)
    try:
        assert snapshot(port) == before
    finally:
        stop(proc, work)
