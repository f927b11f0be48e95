"""A restarted replica, or a restarted master, continues the replication history its dump.rdb
carries (the repl-stream-db / repl-id / repl-offset AUX fields): the first PSYNC after the
restart gets +CONTINUE, counted in the master's INFO sync_partial_ok, with nothing lost or
duplicated. Rivulet with Rivulet, Rivulet replicas of Debian's Redis 7.0, and a Redis 7.4
replica (when built) of a Rivulet master. Redis 7.0 cannot follow a Rivulet master at all (it
reads RDB up to version 10; Rivulet writes version 12): that combination is not tested."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
import redis

from tests.replica_helpers import (
    REDIS70,
    REDIS74,
    RedisServer,
    info,
    redis_replica,
    rivulet_server,
    wait_synced,
    wait_until,
)
from tests.serverproc import ServerProcess


def rivulet(procs: list, *args: str, **kwargs) -> ServerProcess:
    # Redis's persistence default: the history is in dump.rdb (an AOF carries none, as in Redis).
    return rivulet_server(procs, "--appendonly", "no", *args, **kwargs)


def aux_fields(path: str) -> dict[bytes, bytes]:
    """The AUX fields of an RDB file, read by Redis's own tool where possible is overkill: the
    fields sit before the first database, as `0xFA <string> <string>`, plain strings here."""
    data = open(path, "rb").read()
    fields: dict[bytes, bytes] = {}
    pos = 9
    while pos < len(data) and data[pos] == 0xFA:
        pos += 1
        parts = []
        for _ in range(2):
            head = data[pos]
            kind = head >> 6
            if kind == 0:
                n, pos = head & 0x3F, pos + 1
                parts.append(data[pos:pos + n])
                pos += n
            elif kind == 3:  # an integer-encoded string
                width = {0: 1, 1: 2, 2: 4}[head & 0x3F]
                parts.append(b"%d" % int.from_bytes(data[pos + 1:pos + 1 + width], "little",
                                                    signed=True))
                pos += 1 + width
            else:
                raise AssertionError(f"unexpected AUX string encoding at {pos}")
        fields[parts[0]] = parts[1]
    return fields


def syncs(m: redis.Redis) -> tuple[int, int]:
    """(sync_full, sync_partial_ok) from the master's INFO stats."""
    stats = info(m, "stats")
    return int(stats["sync_full"]), int(stats["sync_partial_ok"])


def write_some(m: redis.Redis, start: int, n: int = 50) -> None:
    for i in range(start, start + n):
        m.set(f"k{i}", i)
        m.xadd("s", {"i": i})


def rivulet_pair(procs: list) -> tuple:
    """A Rivulet master with 50 writes, followed by a Rivulet replica in sync with it."""
    master = rivulet(procs)
    m = redis.Redis(port=master.port)
    replica = rivulet(procs, "--replicaof", "127.0.0.1", str(master.port))
    r = redis.Redis(port=replica.port)
    write_some(m, 0)
    wait_synced(m, r)
    return master, m, replica, r


def rivulet_and_redis74_replica(procs: list) -> tuple:
    """A Rivulet master with 50 writes, followed by a Redis 7.4 replica in sync with it."""
    master = rivulet(procs)
    m = redis.Redis(port=master.port)
    replica = redis_replica(procs, REDIS74, master.port)
    r = replica.client()
    write_some(m, 0)
    wait_synced(m, r)
    return master, m, replica, r


def continues_after_restart(m: redis.Redis, start_again: Callable[[], redis.Redis]) -> redis.Redis:
    """Writes while the replica is down, then start_again() (a client of the restarted
    replica): it catches up with one more partial resynchronization and no full one."""
    write_some(m, 50)  # from the master's backlog, after the restart
    before = syncs(m)
    r = start_again()
    wait_synced(m, r)
    assert syncs(m) == (before[0], before[1] + 1)
    assert r.xlen("s") == 100 and r.get("k99") == b"99"
    return r


def restart(procs: list, proc: ServerProcess, *args: str) -> ServerProcess:
    return rivulet(procs, *args, data_dir=proc.dir, port=proc.port)


def test_rdb_carries_the_history_only_in_a_replication_chain(procs):
    master = rivulet(procs)
    m = redis.Redis(port=master.port)
    m.set("a", 1)
    m.save()
    fields = aux_fields(os.path.join(master.dir, "dump.rdb"))
    # No replica ever: no backlog, no history worth saving (rdbPopulateSaveInfo returns NULL).
    assert b"repl-id" not in fields and b"repl-offset" not in fields
    replica = rivulet(procs, "--replicaof", "127.0.0.1", str(master.port))
    r = redis.Redis(port=replica.port)
    wait_synced(m, r)
    m.set("b", 2)
    wait_synced(m, r)
    for server, conn in ((master, m), (replica, r)):
        conn.save()
        fields = aux_fields(os.path.join(server.dir, "dump.rdb"))
        mine = info(conn)
        assert fields[b"repl-id"] == mine["master_replid"].encode()
        assert fields[b"repl-offset"] == mine["master_repl_offset"].encode()
        assert fields[b"repl-stream-db"] == b"0"
    # Field order as Redis's rdbSaveInfoAuxFields: after used-mem, before aof-base.
    names = list(aux_fields(os.path.join(replica.dir, "dump.rdb")))
    assert names.index(b"used-mem") < names.index(b"repl-stream-db") < names.index(b"repl-id") \
        < names.index(b"repl-offset") < names.index(b"aof-base")


def test_restarted_replica_continues_partially(procs):
    master, m, replica, r = rivulet_pair(procs)
    offset = int(info(r)["slave_repl_offset"])
    replid = info(m)["master_replid"]
    r.shutdown(save=True)
    replica.stop()
    r = continues_after_restart(m, lambda: redis.Redis(port=restart(
        procs, replica, "--replicaof", "127.0.0.1", str(master.port)).port))
    assert "Partial resynchronization request from" in master.log()
    assert f"Trying a partial resynchronization (request {replid}:{offset + 1})" \
        in procs[-1].log()
    assert r.dbsize() == m.dbsize()


def test_restarted_master_continues_its_replicas(procs):
    master, m, replica, r = rivulet_pair(procs)
    # Once the replica acknowledged everything: a replica still behind at SHUTDOWN is sent a
    # REPLCONF GETACK first, which moves the offset the snapshot records.
    wait_until(lambda: "offset=%s," % info(m)["master_repl_offset"] in info(m)["slave0"], 10,
               "the replica's acknowledgement")
    old = info(m)
    m.shutdown(save=True)
    master.stop()
    master = restart(procs, master)
    m = redis.Redis(port=master.port)
    wait_synced(m, r)
    new = info(m)
    # The old history is the secondary one, valid up to where it stopped; a new one starts.
    assert new["master_replid2"] == old["master_replid"]
    assert int(new["second_repl_offset"]) == int(old["master_repl_offset"]) + 1
    assert new["master_replid"] != old["master_replid"]
    assert syncs(m) == (0, 1)
    write_some(m, 50)
    wait_synced(m, r)
    assert r.xlen("s") == 100 and r.dbsize() == m.dbsize()
    assert info(r)["master_replid"] == new["master_replid"]


def test_without_history_a_restarted_replica_syncs_fully(procs):
    master = rivulet(procs)
    m = redis.Redis(port=master.port)
    write_some(m, 0, 5)
    # A dump.rdb saved by a server in no replication chain carries no history.
    replica = rivulet(procs)
    redis.Redis(port=replica.port).shutdown(save=True)
    replica.stop()
    replica = restart(procs, replica, "--replicaof", "127.0.0.1", str(master.port))
    r = redis.Redis(port=replica.port)
    wait_synced(m, r)
    assert syncs(m) == (1, 0)
    assert "Partial resynchronization not possible (no cached master)" in replica.log()


@pytest.mark.skipif(REDIS70 is None, reason="redis-server is not installed: a Rivulet replica "
                                            "of a restarted-against Redis 7.0 master was NOT tested")
def test_rivulet_replica_of_redis_restarted_continues(procs):
    master = RedisServer(REDIS70).start()
    procs.append(master)
    m = master.client()
    replica = rivulet(procs, "--replicaof", "127.0.0.1", str(master.port))
    r = redis.Redis(port=replica.port)
    write_some(m, 0)
    wait_synced(m, r)
    r.shutdown(save=True)
    replica.stop()
    continues_after_restart(m, lambda: redis.Redis(port=restart(
        procs, replica, "--replicaof", "127.0.0.1", str(master.port)).port))


@pytest.mark.skipif(not os.access(REDIS74, os.X_OK),
                    reason=f"no Redis 7.4 at {REDIS74}: a restarted Redis replica of a Rivulet "
                           "master was NOT tested (Redis 7.0 cannot read Rivulet's RDB 12)")
def test_redis74_replica_restarted_continues_from_rivulet(procs):
    master, m, replica, r = rivulet_and_redis74_replica(procs)
    r.shutdown(save=True)
    wait_until(lambda: replica.proc is not None and replica.proc.poll() is not None, 10,
               "Redis to exit")

    def start_again() -> redis.Redis:
        again = RedisServer(REDIS74, "--replicaof", "127.0.0.1", str(master.port),
                            port=replica.port, data_dir=replica.dir).start()
        procs.append(again)
        return again.client()

    continues_after_restart(m, start_again)


@pytest.mark.skipif(not os.access(REDIS74, os.X_OK),
                    reason=f"no Redis 7.4 at {REDIS74}: Redis reading Rivulet's saved history "
                           "was NOT tested")
def test_restarted_rivulet_master_continues_a_redis74_replica(procs):
    master, m, _replica, r = rivulet_and_redis74_replica(procs)
    m.shutdown(save=True)
    master.stop()
    master = restart(procs, master)
    m = redis.Redis(port=master.port)
    wait_synced(m, r, timeout=30)
    assert syncs(m) == (0, 1)
    write_some(m, 50)
    wait_synced(m, r)
    assert r.xlen("s") == 100
