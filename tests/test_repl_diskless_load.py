"""repl-diskless-load disabled | on-empty-db | swapdb on a Rivulet replica, as Redis 7.4 does it.

The configuration (CONFIG GET/SET, the configuration file, CONFIG SET's error) is compared with
real Redis. Full resynchronizations in each mode from a Rivulet master and from a real Redis
master with repl-diskless-sync yes. Snapshots cut short by a scripted master show
what clients of the replica see meanwhile: the old dataset while the snapshot is received
(disabled, and on-empty-db with data), -LOADING and INFO loading:1 from the start of the transfer
(on-empty-db on an empty replica, swapdb), the old dataset and INFO async_loading:1 (swapdb when
the resynchronization continues the same history). A master lost mid-transfer (the scripted
one, or a real Redis master killed) leaves a swapdb replica with its old dataset and an
on-empty-db one empty; those scenarios run on a Redis replica too, the reference."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from tests.replica_helpers import RDB, RedisServer, ScriptedMaster, info, wait_synced, wait_until
from tests.serverproc import ServerProcess

REDIS70 = shutil.which("redis-server")
REDIS74 = os.environ.get("RIVULET_REDIS74", "/tmp/redis74/src/redis-server")
HAVE74 = os.access(REDIS74, os.X_OK)
MODES = ("disabled", "on-empty-db", "swapdb")

needs_redis = pytest.mark.skipif(REDIS70 is None and not HAVE74,
                                 reason="no redis-server: repl-diskless-load was NOT tested "
                                        "with a Redis master nor compared with a Redis replica")


def redis_binary() -> str:
    return REDIS74 if HAVE74 else str(REDIS70)


@pytest.fixture
def procs() -> Iterator[list]:
    started: list = []
    yield started
    for proc in reversed(started):
        proc.cleanup()


def rivulet(procs: list, *args: str) -> ServerProcess:
    proc = ServerProcess(*args).start()
    procs.append(proc)
    return proc


def real(procs: list, *args: str, binary: str | None = None) -> RedisServer:
    proc = RedisServer(binary or redis_binary(), *args).start()
    procs.append(proc)
    return proc


def persistence(r: redis.Redis) -> dict[str, str]:
    return info(r, "persistence")


def dataset(r: redis.Redis) -> dict[bytes, bytes]:
    return {k: r.get(k) for k in r.keys("*")}


# --- configuration ---------------------------------------------------------------------------

@needs_redis
@pytest.mark.parametrize("value", [*MODES, "SWAPDB", "bogus", "", "yes"])
def test_config_set_as_redis(procs, value) -> None:
    mine = redis.Redis(port=rivulet(procs).port)
    theirs = redis.Redis(port=real(procs).port)

    def outcome(r: redis.Redis) -> Any:
        try:
            r.config_set("repl-diskless-load", value)
        except redis.ResponseError as exc:
            return str(exc)
        return r.config_get("repl-diskless-load")

    assert outcome(mine) == outcome(theirs)


def test_default_and_configuration_file(procs, tmp_path) -> None:
    assert redis.Redis(port=rivulet(procs).port).config_get("repl-diskless-load") == \
        {"repl-diskless-load": "disabled"}
    conf = tmp_path / "rivulet.conf"
    conf.write_text("repl-diskless-load swapdb\n")
    proc = ServerProcess()
    proc.args.insert(0, str(conf))  # the file first, as redis-server takes it
    proc.start()
    procs.append(proc)
    assert redis.Redis(port=proc.port).config_get("repl-diskless-load") == \
        {"repl-diskless-load": "swapdb"}


# --- full resynchronizations -------------------------------------------------------------------

def _fill(r: redis.Redis, n: int = 200, prefix: str = "k", size: int = 0) -> None:
    pipe = r.pipeline(transaction=False)
    for i in range(n):
        pipe.set(f"{prefix}:{i}", f"v{i}".ljust(size, "x"))
    pipe.execute()


MASTERS = [
    pytest.param("rivulet", id="rivulet-master"),
    pytest.param("redis", id="redis-master", marks=needs_redis),
]


@pytest.mark.parametrize("master_kind", MASTERS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("replica_has_data", [False, True], ids=["empty", "with-data"])
def test_full_sync_replaces_the_dataset(procs, master_kind, mode, replica_has_data) -> None:
    if master_kind == "rivulet":
        master_proc: Any = rivulet(procs, "--repl-diskless-sync", "yes",
                                   "--repl-diskless-sync-delay", "0")
    else:
        master_proc = real(procs, "--repl-diskless-sync", "yes")
    master = redis.Redis(port=master_proc.port)
    _fill(master, 100, "m")
    replica_proc = rivulet(procs, "--repl-diskless-load", mode)
    replica = redis.Redis(port=replica_proc.port)
    if replica_has_data:
        _fill(replica, 50, "old")
    replica.execute_command("REPLICAOF", "127.0.0.1", str(master_proc.port))
    wait_synced(master, replica)
    assert dataset(replica) == dataset(master)
    log = replica_proc.log()
    to_parser = mode == "swapdb" or (mode == "on-empty-db" and not replica_has_data)
    assert ("to parser" in log) == to_parser and ("to disk" in log) != to_parser
    assert ("Swapping active DB with loaded DB" in log) == (mode == "swapdb")
    # The stream goes on after the load.
    master.set("after", "1")
    wait_synced(master, replica)
    assert replica.get("after") == b"1"


# --- transfers under control: what clients of the replica see ------------------------------------
#
# A scripted master (tests/replica_helpers.py) sends +FULLRESYNC and the snapshot in two parts,
# or closes the link after the first. A Redis replica loading from the socket (on-empty-db on an
# empty dataset, swapdb) blocks in that read and answers no client until it ends: it is the
# reference for what the replica keeps, Rivulet alone is asked while the snapshot is cut short.

MARK = b"m" * 40


def _start_transfer(master: ScriptedMaster, replica: redis.Redis, replid: bytes) -> None:
    replica.execute_command("REPLICAOF", "127.0.0.1", str(master.port))
    master.accept()
    assert master.handshake()[0] == b"PSYNC"
    master.send(b"+FULLRESYNC " + replid + b" 0\r\n$EOF:" + MARK + b"\r\n" + RDB[:12])
    time.sleep(0.5)


def _during(replica: redis.Redis) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    try:
        seen["get"] = replica.get("old")
    except redis.BusyLoadingError:
        seen["get"] = "LOADING"
    p = persistence(replica)
    seen["loading"], seen["async_loading"] = p["loading"], p["async_loading"]
    return seen


def _replica(procs: list, kind: str, mode: str) -> tuple[Any, redis.Redis]:
    proc: Any
    if kind == "rivulet":
        proc = rivulet(procs, "--repl-diskless-load", mode)
    else:
        proc = real(procs, "--repl-diskless-load", mode)
    return proc, redis.Redis(port=proc.port, socket_timeout=20)


REPLICAS = [pytest.param("rivulet", id="rivulet-replica"),
            pytest.param("redis", id="redis-replica", marks=needs_redis)]

# (mode, the replica holds data, same history, what a client sees while the snapshot is cut)
DURING = [
    ("disabled", True, False, {"get": b"old", "loading": "0", "async_loading": "0"}),
    ("on-empty-db", True, False, {"get": b"old", "loading": "0", "async_loading": "0"}),
    ("on-empty-db", False, False, {"get": "LOADING", "loading": "1", "async_loading": "0"}),
    ("swapdb", True, False, {"get": "LOADING", "loading": "1", "async_loading": "0"}),
    ("swapdb", True, True, {"get": b"old", "loading": "0", "async_loading": "1"}),
]


@pytest.mark.parametrize("mode,has_data,same_history,expected", DURING)
def test_clients_during_the_transfer(procs, mode, has_data, same_history, expected) -> None:
    master = ScriptedMaster()
    try:
        _proc, replica = _replica(procs, "rivulet", mode)
        if has_data:
            replica.set("old", "old")
        own = info(replica)["master_replid"].encode()
        _start_transfer(master, replica, own if same_history else b"a" * 40)
        if not has_data and expected["get"] != "LOADING":
            expected = {**expected, "get": None}
        assert _during(replica) == expected
        master.send(RDB[12:] + MARK)
        wait_until(lambda: info(replica)["master_link_status"] == "up", 10, "the load to end")
        p = persistence(replica)
        assert (p["loading"], p["async_loading"]) == ("0", "0")
        assert replica.get("old") is None and replica.get("x") == b"1"
    finally:
        master.close()


@pytest.mark.parametrize("mode,has_data,same_history,after", [
    ("swapdb", True, False, [b"old"]),
    ("swapdb", True, True, [b"old"]),
    ("disabled", True, False, [b"old"]),
    ("on-empty-db", True, False, [b"old"]),
    ("on-empty-db", False, False, []),
])
@pytest.mark.parametrize("kind", REPLICAS)
def test_master_lost_mid_transfer(procs, kind, mode, has_data, same_history, after) -> None:
    """The master goes away in the middle of the snapshot: swapdb keeps the old dataset (and
    disabled, which had not touched it yet); on-empty-db discards what it had loaded."""
    master = ScriptedMaster()
    try:
        proc, replica = _replica(procs, kind, mode)
        if has_data:
            replica.set("old", "old")
        own = info(replica)["master_replid"].encode()
        _start_transfer(master, replica, own if same_history else b"a" * 40)
        assert master.conn is not None
        master.conn.close()
        master.conn = None
        wait_until(lambda: info(replica)["master_sync_in_progress"] == "0"
                   and persistence(replica)["loading"] == "0", 30, "the failed transfer to end")
        assert [replica.get(k) for k in replica.keys("*")] == after
        p = persistence(replica)
        assert (p["loading"], p["async_loading"]) == ("0", "0")
        assert info(replica)["master_link_status"] == "down"
        if kind == "rivulet" and mode == "swapdb":
            log = proc.log()
            assert "Discarding temporary DB in background" in log
            assert "Swapping active DB" not in log
    finally:
        master.close()


@needs_redis
@pytest.mark.parametrize("kind", REPLICAS)
def test_swapdb_master_killed_mid_transfer_keeps_old_data(procs, kind) -> None:
    """A real Redis master (repl-diskless-sync yes, its snapshot slowed by rdb-key-save-delay)
    killed in the middle of the snapshot: a swapdb replica keeps its dataset. The values are
    random (not compressed) so that the snapshot leaves the master's child in parts."""
    master = real(procs, "--repl-diskless-sync", "yes", "--rdb-key-save-delay", "10000")
    pipe = redis.Redis(port=master.port).pipeline(transaction=False)
    for i in range(300):
        pipe.set(f"m:{i}", os.urandom(1000))
    pipe.execute()
    proc, replica = _replica(procs, kind, "swapdb")
    _fill(replica, 20, "old")
    replica.execute_command("REPLICAOF", "127.0.0.1", str(master.port))
    wait_until(lambda: info(replica).get("master_sync_in_progress") == "1", 15,
               "the transfer to start")
    time.sleep(1.0)
    if kind == "rivulet":
        assert "receiving streamed RDB from master with EOF to parser" in proc.log()
        assert persistence(replica)["loading"] == "1"
    master.stop(kill=True)
    wait_until(lambda: info(replica).get("master_sync_in_progress") == "0"
               and persistence(replica)["loading"] == "0", 30, "the transfer to fail")
    assert sorted(replica.keys("*")) == sorted(f"old:{i}".encode() for i in range(20))
    if kind == "rivulet":
        log = proc.log()
        assert "Discarding temporary DB in background" in log
        assert "Swapping active DB" not in log
