"""A replica loading its full resynchronization from disk (repl-diskless-load disabled), as
Redis 7.4's readSyncBulkPayload does: the snapshot goes to a temp-<time>.<pid>.rdb file as it
arrives, replaces dump.rdb once complete, and is loaded from there; rdb-del-sync-files removes
it from a replica without persistence. Compared with a real Redis replica where one runs; a
scripted master cuts a transfer short and sends a damaged snapshot."""

from __future__ import annotations

import glob
import os
import shutil
from typing import Any

import pytest
import redis

from tests.replica_helpers import (
    RDB,
    RedisServer,
    ScriptedMaster,
    info,
    rivulet_server,
    wait_synced,
    wait_until,
)
from tests.serverproc import ServerProcess

REDIS70 = shutil.which("redis-server")
REDIS74 = os.environ.get("RIVULET_REDIS74", "/tmp/redis74/src/redis-server")
HAVE74 = os.access(REDIS74, os.X_OK)

needs_redis = pytest.mark.skipif(REDIS70 is None and not HAVE74,
                                 reason="no redis-server: loading a sync from disk was NOT "
                                        "tested with a Redis master nor compared with a Redis replica")


def redis_binary() -> str:
    return REDIS74 if HAVE74 else str(REDIS70)


def real(procs: list, *args: str) -> RedisServer:
    proc = RedisServer(redis_binary(), *args).start()
    procs.append(proc)
    return proc


def replica_of(procs: list, kind: str, *args: str) -> Any:
    return rivulet_server(procs, *args) if kind == "rivulet" else real(procs, *args)


def need_74_to_follow_rivulet(replica_kind: str, master_kind: str) -> None:
    """A Rivulet master sends RDB version 12, which Redis reads from 7.4 on."""
    if replica_kind == "redis" and master_kind == "rivulet" and not HAVE74:
        pytest.skip(f"no Redis 7.4 at {REDIS74}: a Redis replica loading a Rivulet master's sync "
                    "from disk was NOT tested (Debian's 7.0 cannot read RDB version 12)")


def dataset(r: redis.Redis) -> dict[bytes, Any]:
    out: dict[bytes, Any] = {}
    for key in r.keys("*"):
        kind = r.type(key)
        out[key] = r.get(key) if kind == b"string" else r.xrange(key) if kind == b"stream" \
            else r.hgetall(key)
    return out


def fill(r: redis.Redis) -> None:
    pipe = r.pipeline(transaction=False)
    for i in range(300):
        pipe.set(f"k:{i}", f"value-{i}" * 3)
    for i in range(200):
        pipe.xadd("events", {"n": i})
    pipe.hset("h", mapping={"a": 1, "b": 2})
    pipe.execute()


def temp_files(directory: str) -> list[str]:
    return glob.glob(os.path.join(directory, "temp-*.rdb"))


MASTERS = [pytest.param("rivulet", id="rivulet-master"),
           pytest.param("redis", id="redis-master", marks=needs_redis)]
REPLICAS = [pytest.param("rivulet", id="rivulet-replica"),
            pytest.param("redis", id="redis-replica", marks=needs_redis)]


@pytest.mark.parametrize("diskless_sync", ["yes", "no"], ids=["eof-mark", "sized"])
@pytest.mark.parametrize("master_kind", MASTERS)
@pytest.mark.parametrize("replica_kind", REPLICAS)
def test_the_snapshot_becomes_dump_rdb(procs, replica_kind, master_kind, diskless_sync) -> None:
    """Both forms of the payload ($EOF:<mark> from a diskless master, $<size> from a disk one)
    end as the replica's dump.rdb, which a restart of the replica alone loads."""
    need_74_to_follow_rivulet(replica_kind, master_kind)
    if master_kind == "rivulet":
        master_proc: Any = rivulet_server(procs, "--repl-diskless-sync", diskless_sync,
                                   "--repl-diskless-sync-delay", "0")
    else:
        master_proc = real(procs, "--repl-diskless-sync", diskless_sync)
    master = redis.Redis(port=master_proc.port)
    fill(master)
    replica_proc = replica_of(procs, replica_kind, "--repl-diskless-load", "disabled")
    replica = redis.Redis(port=replica_proc.port)
    replica.set("old", "gone after the sync")
    replica.execute_command("REPLICAOF", "127.0.0.1", str(master_proc.port))
    wait_synced(master, replica)
    assert dataset(replica) == dataset(master)
    dump = os.path.join(replica_proc.dir, "dump.rdb")
    assert os.path.exists(dump), os.listdir(replica_proc.dir)
    assert temp_files(replica_proc.dir) == []
    # What the file holds is the master's snapshot: a server started on it alone has it all.
    alone = ServerProcess()
    shutil.copy(dump, os.path.join(alone.dir, "dump.rdb"))
    alone.start()
    procs.append(alone)
    assert dataset(redis.Redis(port=alone.port)) == dataset(master)


@pytest.mark.parametrize("save,deleted", [("", True), ("3600 1", False)],
                         ids=["no-persistence", "save-points"])
@pytest.mark.parametrize("replica_kind", REPLICAS)
def test_rdb_del_sync_files(procs, replica_kind, save, deleted) -> None:
    """rdb-del-sync-files yes: a replica with neither save points nor the AOF removes the file
    its sync brought once loaded; one with save points keeps it (Rivulet's AOF is on by
    default, so both kinds are told appendonly no)."""
    need_74_to_follow_rivulet(replica_kind, "rivulet")
    master_proc = rivulet_server(procs, "--repl-diskless-sync", "no")
    master = redis.Redis(port=master_proc.port)
    fill(master)
    replica_proc = replica_of(procs, replica_kind, "--repl-diskless-load", "disabled",
                              "--rdb-del-sync-files", "yes", "--save", save,
                              "--appendonly", "no")
    replica = redis.Redis(port=replica_proc.port)
    replica.execute_command("REPLICAOF", "127.0.0.1", str(master_proc.port))
    wait_synced(master, replica)
    assert dataset(replica) == dataset(master)
    assert os.path.exists(os.path.join(replica_proc.dir, "dump.rdb")) == (not deleted)
    assert temp_files(replica_proc.dir) == []
    if replica_kind == "rivulet":
        removed = "Removing the RDB file obtained from the master. This replica has " \
                  "persistence disabled"
        assert (removed in replica_proc.log()) == deleted


MARK = b"m" * 40


def test_a_transfer_cut_short_leaves_no_temp_file(procs) -> None:
    master = ScriptedMaster()
    try:
        proc = rivulet_server(procs, "--repl-diskless-load", "disabled")
        replica = redis.Redis(port=proc.port)
        replica.set("old", "kept")
        replica.execute_command("REPLICAOF", "127.0.0.1", str(master.port))
        master.accept()
        assert master.handshake()[0] == b"PSYNC"
        master.send(b"+FULLRESYNC " + b"a" * 40 + b" 0\r\n$%d\r\n" % len(RDB) + RDB[:12])
        wait_until(lambda: len(temp_files(proc.dir)) == 1, 10, "the temp file")
        assert master.conn is not None
        master.conn.close()
        master.conn = None
        wait_until(lambda: info(replica)["master_sync_in_progress"] == "0", 30,
                   "the failed transfer to end")
        assert temp_files(proc.dir) == []
        assert not os.path.exists(os.path.join(proc.dir, "dump.rdb"))
        assert replica.get("old") == b"kept"
    finally:
        master.close()


def test_a_damaged_snapshot_is_refused_and_the_replica_goes_on(procs) -> None:
    master = ScriptedMaster()
    try:
        proc = rivulet_server(procs, "--repl-diskless-load", "disabled")
        replica = redis.Redis(port=proc.port)
        replica.execute_command("REPLICAOF", "127.0.0.1", str(master.port))
        master.accept()
        assert master.handshake()[0] == b"PSYNC"
        end = RDB.rindex(b"\xff")
        damaged = RDB[:end] + b"\x42" + RDB[end + 1:]  # the end-of-file opcode replaced
        master.send(b"+FULLRESYNC " + b"a" * 40 + b" 0\r\n$EOF:" + MARK + b"\r\n" + damaged + MARK)
        wait_until(lambda: "Failed trying to load the MASTER synchronization DB from disk, "
                           "check server logs." in proc.log(), 15, "the refusal in the log")
        assert replica.ping()
        assert replica.dbsize() == 0
        assert temp_files(proc.dir) == []
        # The next attempt, with a sound snapshot, loads.
        master.accept()
        assert master.handshake()[0] == b"PSYNC"
        master.send(b"+FULLRESYNC " + b"a" * 40 + b" 0\r\n$%d\r\n" % len(RDB) + RDB)
        wait_until(lambda: info(replica)["master_link_status"] == "up", 15, "the link")
        assert replica.get("x") == b"1"
    finally:
        master.close()


def test_a_large_disk_snapshot_reaches_two_replicas_in_pieces(procs) -> None:
    """A master with repl-diskless-sync no sends its snapshot file in 1 MB pieces as each
    replica's connection drains (one file descriptor per replica, never the file in memory)."""
    master_proc = rivulet_server(procs, "--repl-diskless-sync", "no")
    master = redis.Redis(port=master_proc.port)
    pipe = master.pipeline(transaction=False)
    for i in range(2500):
        pipe.set(f"big:{i}", os.urandom(10_000))  # random: the RDB's LZF cannot shrink them
    pipe.execute()
    replicas = [redis.Redis(port=rivulet_server(procs).port) for _ in range(2)]
    for replica in replicas:
        replica.execute_command("REPLICAOF", "127.0.0.1", str(master_proc.port))
    for replica in replicas:
        wait_synced(master, replica, timeout=60)
        assert replica.dbsize() == 2500
        assert replica.get("big:1234") == master.get("big:1234")
    assert "Synchronization with replica" in master_proc.log()
    assert temp_files(master_proc.dir) == []
