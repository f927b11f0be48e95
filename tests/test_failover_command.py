"""FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]: errors compared with Debian's Redis 7.0,
the coordinated hand-over between Rivulet servers (writes paused, the target caught up, PSYNC
FAILOVER, the old master a replica of the new one, nothing lost), timeouts, FORCE and ABORT,
master_failover_state in INFO; and with real Redis on the other side: a Redis 7.0 master
failing over to a Rivulet replica (Rivulet answering PSYNC FAILOVER), and a Rivulet master
failing over to a Redis 7.4 replica when built (Redis 7.0 cannot follow a Rivulet master: it
reads RDB up to version 10)."""

from __future__ import annotations

import os
import signal
import threading

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

rivulet = rivulet_server


def replica_of(procs: list, master_port: int) -> ServerProcess:
    return rivulet(procs, "--replicaof", "127.0.0.1", str(master_port))


def error_of(r: redis.Redis, *args) -> str:
    try:
        r.execute_command(*args)
    except redis.ResponseError as exc:
        return str(exc)
    raise AssertionError(f"{args} did not fail")


def failover_state(r: redis.Redis) -> str:
    return info(r)["master_failover_state"]


ERROR_CASES = [
    ("FAILOVER", "ABORT"),
    ("FAILOVER", "TIMEOUT", "0"),
    ("FAILOVER", "TIMEOUT", "-5"),
    ("FAILOVER", "TIMEOUT", "abc"),
    ("FAILOVER", "TIMEOUT", "10", "TIMEOUT", "10"),
    ("FAILOVER", "TO", "127.0.0.1", "notaport"),
    ("FAILOVER", "TO", "127.0.0.1"),
    ("FAILOVER", "FORCE", "FORCE"),
    ("FAILOVER", "bogus"),
    ("FAILOVER", "ABORT", "TIMEOUT", "10"),
    ("FAILOVER",),
    ("FAILOVER", "FORCE"),
    ("FAILOVER", "TO", "127.0.0.1", "1", "FORCE"),
]


@pytest.mark.skipif(REDIS70 is None, reason="redis-server is not installed: FAILOVER's errors "
                                            "were NOT compared with Redis")
def test_errors_as_redis_on_a_master_without_replicas(procs):
    real = RedisServer(REDIS70).start()
    procs.append(real)
    ours = rivulet(procs)
    for case in ERROR_CASES:
        assert error_of(redis.Redis(port=ours.port), *case) == error_of(real.client(), *case), case


@pytest.mark.skipif(REDIS70 is None, reason="redis-server is not installed: FAILOVER's errors "
                                            "were NOT compared with Redis")
def test_errors_as_redis_with_replicas_and_on_replicas(procs):
    real = RedisServer(REDIS70).start()
    real_replica = RedisServer(REDIS70, "--replicaof", "127.0.0.1", str(real.port)).start()
    procs += [real, real_replica]
    ours = rivulet(procs)
    our_replica = replica_of(procs, ours.port)
    m, r = redis.Redis(port=ours.port), redis.Redis(port=our_replica.port)
    wait_synced(m, r)
    wait_synced(real.client(), real_replica.client())
    cases = [
        ("FAILOVER", "FORCE"),
        ("FAILOVER", "TIMEOUT", "100", "FORCE"),
        ("FAILOVER", "TO", "127.0.0.1", "1", "FORCE"),
        ("FAILOVER", "TO", "127.0.0.1", "1"),
        ("FAILOVER", "TO", "10.9.9.9", "1", "TIMEOUT", "5"),
    ]
    for case in cases:
        assert error_of(m, *case) == error_of(real.client(), *case), case
    for case in [("FAILOVER",), ("FAILOVER", "ABORT"), ("FAILOVER", "TIMEOUT", "10")]:
        assert error_of(r, *case) == error_of(real_replica.client(), *case), case
    # PSYNC FAILOVER to a master, and with a replication ID that is not the replica's.
    for case in [("PSYNC", "?", "-1", "FAILOVER")]:
        assert error_of(m, *case) == error_of(real.client(), *case), case
    case = ("PSYNC", "0" * 40, "1", "FAILOVER")
    assert error_of(r, *case) == error_of(real_replica.client(), *case)
    # A wrong offset, as Redis answers it.
    case = ("PSYNC", "?", "x")
    assert error_of(m, *case) == error_of(real.client(), *case)


def test_failover_to_a_rivulet_replica(procs):
    master = rivulet(procs)
    m = redis.Redis(port=master.port)
    a = replica_of(procs, master.port)
    b = replica_of(procs, master.port)
    ra, rb = redis.Redis(port=a.port), redis.Redis(port=b.port)
    for i in range(200):
        m.set(f"k{i}", i)
        m.xadd("s", {"i": i})
    wait_synced(m, ra)
    wait_synced(m, rb)
    assert failover_state(m) == "no-failover"
    old_replid = info(m)["master_replid"]
    assert m.execute_command("FAILOVER", "TO", "127.0.0.1", str(a.port)) == b"OK"
    wait_until(lambda: info(ra)["role"] == "master" and info(m)["role"] == "slave"
               and info(m)["master_link_status"] == "up", 20, "the hand-over")
    assert failover_state(m) == "no-failover"
    assert info(m)["master_port"] == str(a.port)
    # The new master continues the old history: the old master resynchronized partially.
    new = info(ra)
    assert new["master_replid2"] == old_replid
    assert info(ra, "stats")["sync_partial_ok"] == "1"
    assert info(ra, "stats")["sync_full"] == "0"
    # Writes go to the new master and reach the old one; the old one refuses them.
    ra.set("after", "x")
    wait_synced(ra, m)
    assert m.get("after") == b"x" and m.xlen("s") == 200
    with pytest.raises(redis.ReadOnlyError):
        m.set("nope", 1)
    assert "Failover target 127.0.0.1:%d is synced, failing over." % a.port in master.log()
    assert "MASTER MODE enabled (failover request from" in a.log()
    # The other replica still follows its master, now a replica itself: a chain.
    wait_synced(m, rb)
    assert info(rb)["master_port"] == str(master.port) and rb.get("after") == b"x"


def test_failover_to_any_replica_and_writes_postponed(procs):
    master = rivulet(procs)
    m = redis.Redis(port=master.port)
    a = replica_of(procs, master.port)
    ra = redis.Redis(port=a.port)
    m.set("k", 1)
    wait_synced(m, ra)
    # The replica cannot acknowledge: the failover waits, and writes with it.
    os.kill(a.proc.pid, signal.SIGSTOP)
    try:
        assert m.execute_command("FAILOVER") == b"OK"
        assert failover_state(m) == "waiting-for-sync"
        assert error_of(m, "FAILOVER") == "FAILOVER already in progress."
        assert error_of(m, "REPLICAOF", "127.0.0.1", "1") == \
            "REPLICAOF not allowed while failing over."
        # No new replica meanwhile (Redis's syncCommand).
        assert error_of(redis.Redis(port=master.port), "PSYNC", "?", "-1") == \
            "NOMASTERLINK Can't SYNC while failing over"
        results: list = []
        writer = redis.Redis(port=master.port)

        def write() -> None:
            try:
                results.append(writer.set("during", 1))
            except redis.RedisError as exc:
                results.append(exc)

        thread = threading.Thread(target=write)
        thread.start()
        wait_until(lambda: info(m, "clients")["blocked_clients"] == "1", 5,
                   "the write to be postponed")
        assert m.get("k") == b"1"  # reads go on
        assert results == []
    finally:
        os.kill(a.proc.pid, signal.SIGCONT)
    thread.join(20)
    wait_until(lambda: info(ra)["role"] == "master", 20, "the hand-over")
    # The postponed write ran after the hand-over: the server is a replica now.
    assert len(results) == 1 and isinstance(results[0], redis.ReadOnlyError)
    assert ra.get("during") is None and ra.get("k") == b"1"


def master_and_stopped_replica(procs: list) -> tuple[ServerProcess, redis.Redis, ServerProcess]:
    """A master and its replica, in sync, then the replica stopped (SIGSTOP: it acknowledges
    nothing more) and one more write on the master. The procs fixture resumes it at the end."""
    master = rivulet(procs)
    m = redis.Redis(port=master.port)
    a = replica_of(procs, master.port)
    wait_synced(m, redis.Redis(port=a.port))
    assert a.proc is not None
    os.kill(a.proc.pid, signal.SIGSTOP)
    m.set("x", 1)  # the replica cannot acknowledge it
    return master, m, a


def test_timeout_aborts_and_writes_resume(procs):
    master, m, a = master_and_stopped_replica(procs)
    assert m.execute_command("FAILOVER", "TO", "127.0.0.1", str(a.port), "TIMEOUT", "300") \
        == b"OK"
    wait_until(lambda: failover_state(m) == "no-failover", 10, "the timeout")
    assert info(m)["role"] == "master"
    assert m.set("again", 1)
    assert "FAILOVER to 127.0.0.1:%d aborted: Replica never caught up before timeout" \
        % a.port in master.log()


def test_force_fails_over_after_the_timeout(procs):
    master, m, a = master_and_stopped_replica(procs)
    ra = redis.Redis(port=a.port)
    assert m.execute_command("FAILOVER", "TO", "127.0.0.1", str(a.port), "FORCE",
                             "TIMEOUT", "200") == b"OK"
    wait_until(lambda: failover_state(m) == "failover-in-progress", 10, "the forced hand-over")
    assert "time out exceeded, failing over." in master.log()
    assert a.proc is not None
    os.kill(a.proc.pid, signal.SIGCONT)
    wait_until(lambda: info(ra)["role"] == "master" and failover_state(m) == "no-failover"
               and info(m)["master_link_status"] == "up", 20, "the hand-over to end")
    wait_synced(ra, m)
    # What the target had not read yet was in its socket: both ends agree, nothing is lost.
    assert ra.get("x") == m.get("x") == b"1"


def test_abort_while_waiting(procs):
    master, m, a = master_and_stopped_replica(procs)
    assert m.execute_command("FAILOVER", "TO", "127.0.0.1", str(a.port)) == b"OK"
    writer = redis.Redis(port=master.port)
    results: list = []
    thread = threading.Thread(target=lambda: results.append(writer.incr("x")))
    thread.start()
    wait_until(lambda: info(m, "clients")["blocked_clients"] == "1", 5, "the postponed write")
    assert m.execute_command("FAILOVER", "ABORT") == b"OK"
    thread.join(10)
    assert results == [2]
    assert failover_state(m) == "no-failover" and info(m)["role"] == "master"
    assert "FAILOVER to 127.0.0.1:%d aborted: Failover manually aborted" % a.port \
        in master.log()


@pytest.mark.skipif(REDIS70 is None, reason="redis-server is not installed: a Redis master "
                                            "failing over to a Rivulet replica was NOT tested")
def test_redis70_master_fails_over_to_rivulet(procs):
    real = RedisServer(REDIS70).start()
    procs.append(real)
    m = real.client()
    ours = replica_of(procs, real.port)
    r = redis.Redis(port=ours.port)
    for i in range(100):
        m.set(f"k{i}", i)
        m.xadd("s", {"i": i})
    wait_synced(m, r)
    assert m.execute_command("FAILOVER", "TO", "127.0.0.1", str(ours.port), "TIMEOUT", "5000") \
        == b"OK"
    wait_until(lambda: info(r)["role"] == "master" and info(m)["role"] == "slave"
               and info(m)["master_link_status"] == "up", 20, "Redis to hand over to Rivulet")
    assert info(m)["master_failover_state"] == "no-failover"
    # Redis continued partially from Rivulet.
    assert info(r, "stats")["sync_partial_ok"] == "1"
    r.set("from-rivulet", 1)
    wait_synced(r, m)
    assert m.get("from-rivulet") == b"1" and m.xlen("s") == 100


@pytest.mark.skipif(not os.access(REDIS74, os.X_OK),
                    reason=f"no Redis 7.4 at {REDIS74}: a Rivulet master failing over to a Redis "
                           "replica was NOT tested")
def test_rivulet_master_fails_over_to_redis74(procs):
    master = rivulet(procs)
    m = redis.Redis(port=master.port)
    real = redis_replica(procs, REDIS74, master.port)
    rr = real.client()
    for i in range(100):
        m.set(f"k{i}", i)
    wait_synced(m, rr, timeout=30)
    assert m.execute_command("FAILOVER", "TO", "127.0.0.1", str(real.port)) == b"OK"
    wait_until(lambda: info(rr)["role"] == "master" and info(m)["role"] == "slave"
               and info(m)["master_link_status"] == "up", 20, "Rivulet to hand over to Redis")
    assert info(rr, "stats")["sync_partial_ok"] == "1"
    rr.set("from-redis", 1)
    wait_synced(rr, m)
    assert m.get("from-redis") == b"1" and m.get("k99") == b"99"
