"""Rivulet as a replica of a real Redis master (Debian's 7.0; 7.4 when built): the full
resynchronization of every type, the live stream, partial resynchronization, promotion, the
replica's refusals (READONLY, MASTERDOWN), expiry on a replica, blocked readers woken by the
master's writes, replicaof in a config file and CONFIG REWRITE, and the live migration path."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
import redis

from tests.helpers import call_raw
from tests.replica_helpers import (
    REDIS70,
    RedisServer,
    info,
    master_binaries,
    restrict,
    same_dataset,
    stream_full,
    wait_synced,
    wait_until,
)
from tests.serverproc import RawConnection, ServerProcess, free_port

pytestmark = pytest.mark.skipif(
    not os.path.exists("/usr/bin/redis-server"),
    reason="redis-server is not installed: replication from Redis was NOT tested")


@pytest.fixture
def procs():
    started: list = []
    yield started
    for proc in started:
        proc.cleanup()


def redis_master(procs: list, binary: str | None = None, *args: str) -> RedisServer:
    master = RedisServer(binary, *args).start()
    procs.append(master)
    return master


def rivulet(procs: list, *args: str, **kwargs) -> ServerProcess:
    proc = ServerProcess(*args, **kwargs).start()
    procs.append(proc)
    return proc


def populate(m: redis.Redis) -> None:
    """One of each type and encoding, streams with consumer groups and PELs, TTLs, two dbs."""
    m.set("str", "hello")
    m.set("int", 12345)
    m.set("big", "x" * 20000)
    m.set("ttl", "soon", ex=3600)
    m.rpush("list", *[f"e{i}" for i in range(10)])
    m.rpush("biglist", *[f"item-{i}" * 5 for i in range(600)])
    m.hset("hash", mapping={f"f{i}": f"v{i}" for i in range(5)})
    m.hset("bighash", mapping={f"f{i}": "v" * 100 for i in range(600)})
    m.sadd("intset", *range(20))
    m.sadd("set", *[f"m{i}" for i in range(20)])
    m.sadd("bigset", *[f"member-{i}" for i in range(700)])
    m.zadd("zset", {f"z{i}": i / 3 for i in range(10)})
    m.zadd("bigzset", {f"z{i}": i * 1.5 for i in range(300)})
    for i in range(250):
        m.xadd("stream", {"n": str(i), "pad": "p" * (i % 7)}, id=f"{1000 + i}-{i % 3}")
    m.xgroup_create("stream", "g1", id="0")
    m.xgroup_create("stream", "g2", id="1100-0")
    m.xreadgroup("g1", "alice", {"stream": ">"}, count=30)
    m.xreadgroup("g1", "bob", {"stream": ">"}, count=5)
    m.xack("stream", "g1", "1000-0", "1001-1")
    m.xreadgroup("g2", "carol", {"stream": ">"}, count=3)
    m.xdel("stream", "1010-1", "1011-2")
    m.xadd("empty-after-trim", {"a": "b"})
    m.xtrim("empty-after-trim", maxlen=0)
    m.execute_command("SELECT", 5)
    m.set("db5key", "five")
    m.xadd("db5stream", {"k": "v"}, id="5-5")
    m.execute_command("SELECT", 0)


@pytest.mark.parametrize("binary", master_binaries())
@pytest.mark.parametrize("diskless", ["yes", "no"], ids=["diskless-eof", "bulk-len"])
def test_full_sync_brings_every_type(procs, binary, diskless):
    master = redis_master(procs, binary, "--repl-diskless-sync", diskless)
    m = master.client()
    populate(m)
    replica = rivulet(procs, "--replicaof", f"127.0.0.1 {master.port}")
    r = redis.Redis(port=replica.port)
    wait_synced(m, r)
    same_dataset(m, r)
    mine = info(r)
    assert mine["role"] == "slave"
    assert mine["master_host"] == "127.0.0.1" and mine["master_port"] == str(master.port)
    assert mine["master_replid"] == info(m)["master_replid"]
    assert mine["master_repl_offset"] == info(m)["master_repl_offset"]
    log = replica.log()
    form = "streamed RDB from master with EOF" if diskless == "yes" else "bytes from master"
    assert form in log
    assert r.execute_command("ROLE") == [b"slave", b"127.0.0.1", master.port, b"connected",
                                         int(mine["slave_repl_offset"])]
    # The master lists us with the port we announced, online. After a diskless sync Redis
    # lists the replica as wait_bgsave until its cron has seen the child that streamed the RDB
    # exit, which can be after the replica caught up.
    assert f"port={replica.port}," in info(m)["slave0"]
    wait_until(lambda: f"port={replica.port},state=online" in info(m)["slave0"], 10,
               "the master to list its replica online")


@pytest.mark.parametrize("binary", master_binaries())
def test_live_writes_follow(procs, binary):
    """A sequence of writes and group commands on the master: our replica ends up with what a
    real Redis replica of the same master holds, XINFO STREAM FULL included."""
    master = redis_master(procs, binary)
    m = master.client()
    populate(m)
    theirs = redis_master(procs, binary, "--replicaof", "127.0.0.1", str(master.port))
    t = theirs.client()
    replica = rivulet(procs, "--replicaof", f"127.0.0.1 {master.port}")
    r = redis.Redis(port=replica.port)
    wait_synced(m, r)
    wait_synced(m, t)
    m.xadd("stream", {"n": "new"}, id="5000-0")
    m.xreadgroup("g1", "alice", {"stream": ">"}, count=10)
    m.xreadgroup("g1", "dave", {"stream": ">"}, count=2)
    m.xack("stream", "g1", "1002-2", "1003-0", "1004-1")
    m.xclaim("stream", "g1", "bob", 0, ["1040-1", "1041-2"])
    m.xautoclaim("stream", "g2", "erin", 0, "0-0", count=2)
    m.xgroup_createconsumer("stream", "g2", "frank")
    m.xgroup_delconsumer("stream", "g1", "dave")
    m.xgroup_setid("stream", "g2", "1200-0", entries_read=200)
    m.xgroup_create("stream", "g3", id="$", mkstream=True)
    m.xadd("stream", {"n": "more"}, id="5001-0")
    m.xreadgroup("g3", "gina", {"stream": ">"})
    m.xtrim("stream", minid="1020")
    m.xdel("stream", "1030-0")
    with m.pipeline(transaction=True) as p:
        p.incr("counter")
        p.xadd("stream", {"n": "in-multi"}, id="6000-0")
        p.hset("hash", "multi", "yes")
        p.execute()
    m.execute_command("SELECT", 9)
    m.set("db9", "nine")
    m.lpush("db9list", "a", "b")
    m.execute_command("SELECT", 0)
    m.lpop("list")
    m.zincrby("zset", 10, "z1")
    m.srem("set", "m1")
    m.expire("str", 1000)
    m.set("gone", "x", px=50)
    time.sleep(0.2)
    m.get("gone")  # the master expires it, and its DEL reaches the replica
    m.delete("int")
    wait_synced(m, r)
    wait_synced(m, t)
    # XINFO STREAM FULL as Redis's replica has it, entries-read and lag included.
    same_dataset(t, r)
    ours = restrict(stream_full(t, b"stream"), stream_full(r, b"stream"))
    assert ours == stream_full(t, b"stream")
    # And the master's data. Redis 7.0 propagates XREADGROUP's deliveries without the group's
    # entries-read counter (7.2 added XGROUP SETID ... ENTRIESREAD to the propagation), so its
    # replicas, Redis's and ours, keep the counter as it was and compute the lag from it.
    same_dataset(m, r, ignore=frozenset({"entries-read", "lag"}) if binary == REDIS70
                 else frozenset())
    assert r.exists("gone") == 0 and r.dbsize() == m.dbsize()


def test_blocked_xread_on_replica_woken_by_master_write(procs):
    master = redis_master(procs)
    m = master.client()
    m.xadd("s", {"a": "1"}, id="1-0")
    replica = rivulet(procs, "--replicaof", f"127.0.0.1 {master.port}")
    r = redis.Redis(port=replica.port)
    wait_synced(m, r)
    result: list = []

    def reader() -> None:
        with redis.Redis(port=replica.port) as c:
            result.append(c.xread({"s": "$"}, block=10000))

    thread = threading.Thread(target=reader)
    thread.start()
    wait_until(lambda: info(r, "clients")["blocked_clients"] == "1", what="the XREAD to block")
    m.xadd("s", {"b": "2"}, id="2-0")
    thread.join(10)
    assert result == [[[b"s", [(b"2-0", {b"b": b"2"})]]]]


def test_keyspace_events_fire_for_replicated_writes(procs):
    master = redis_master(procs)
    m = master.client()
    replica = rivulet(procs, "--replicaof", f"127.0.0.1 {master.port}",
                      "--notify-keyspace-events", "KEA")
    r = redis.Redis(port=replica.port)
    wait_synced(m, r)
    p = r.pubsub()
    p.psubscribe("__keyspace@0__:*")
    wait_until(lambda: p.get_message(timeout=0.1), what="the psubscribe confirmation")
    m.xadd("events", {"a": "1"})
    msg = wait_until(lambda: p.get_message(timeout=0.1), what="a keyspace event")
    assert msg["channel"] == b"__keyspace@0__:events" and msg["data"] == b"xadd"
    p.close()


def _replies(port: int, commands: list[tuple]) -> list:
    out = []
    with redis.Redis(port=port) as c:
        for cmd in commands:
            try:
                out.append(c.execute_command(*cmd))
            except redis.ResponseError as exc:
                out.append(f"ERR:{exc}")
    return out


def test_read_only_replica_refuses_writes_like_redis(procs):
    """The same commands to a Redis 7.0 replica and to ours, of the same master."""
    master = redis_master(procs)
    m = master.client()
    m.set("k", "v")
    m.xadd("s", {"a": "1"}, id="1-0")
    m.xgroup_create("s", "g", id="0")
    theirs = redis_master(procs, None, "--replicaof", "127.0.0.1", str(master.port))
    ours = rivulet(procs, "--replicaof", f"127.0.0.1 {master.port}")
    wait_synced(m, theirs.client())
    wait_synced(m, redis.Redis(port=ours.port))
    script = [("SET", "k", "x"), ("GET", "k"), ("XADD", "s", "*", "a", "b"),
              ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"), ("XRANGE", "s", "-", "+"),
              ("XACK", "s", "g", "1-0"), ("DEL", "k"), ("INCR", "n"), ("EXPIRE", "k", "10"),
              ("FLUSHALL",), ("MULTI",), ("SET", "a", "b"), ("GET", "k"), ("EXEC",),
              ("PING",), ("CONFIG", "GET", "replica-read-only"), ("DBSIZE",)]
    assert _replies(ours.port, script) == _replies(theirs.port, script)
    # replica-read-only no: the replica takes writes.
    for port in (ours.port, theirs.port):
        redis.Redis(port=port).config_set("replica-read-only", "no")
    script = [("SET", "local", "1"), ("GET", "local"), ("GET", "k")]
    assert _replies(ours.port, script) == _replies(theirs.port, script) == [True, b"1", b"v"]


def test_masterdown_with_serve_stale_data_no_like_redis(procs):
    dead = free_port()
    theirs = redis_master(procs, None, "--replicaof", "127.0.0.1", str(dead),
                          "--replica-serve-stale-data", "no")
    ours = rivulet(procs, "--replicaof", f"127.0.0.1 {dead}", "--replica-serve-stale-data", "no")
    script = [("GET", "k"), ("PING",), ("SET", "k", "v"), ("DBSIZE",), ("XLEN", "s"),
              ("CONFIG", "GET", "replica-serve-stale-data"), ("ROLE",), ("MULTI",), ("GET", "x"),
              ("EXEC",), ("REPLICAOF", "NO", "ONE"), ("GET", "k")]
    ours_replies = _replies(ours.port, script)
    theirs_replies = _replies(theirs.port, script)
    # ROLE's state may differ (Redis and we may be between two connection attempts).
    role = script.index(("ROLE",))
    assert ours_replies[role][:3] == theirs_replies[role][:3] == [b"slave", b"127.0.0.1", dead]
    ours_replies[role] = theirs_replies[role] = None
    assert ours_replies == theirs_replies
    r = redis.Redis(port=ours.port)
    r.execute_command("REPLICAOF", "127.0.0.1", dead)
    conn = RawConnection(ours.port)
    assert call_raw(conn, "GET", "k") == (b"-MASTERDOWN Link with MASTER is down and "
                                          b"replica-serve-stale-data is set to 'no'.\r\n")
    conn.close()
    down = info(r)
    assert down["master_link_status"] == "down"
    assert down["master_link_down_since_seconds"] == "-1"  # never up
    assert info(r, "server")["tcp_port"] == str(ours.port)  # INFO is a `stale` command


def test_expired_keys_are_hidden_not_deleted_until_master_del(procs):
    master = redis_master(procs, None, "--enable-debug-command", "yes")
    m = master.client()
    m.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")  # only the master's lookups expire
    replica = rivulet(procs, "--replicaof", f"127.0.0.1 {master.port}")
    r = redis.Redis(port=replica.port)
    wait_synced(m, r)
    m.set("short", "v", px=100)
    m.xadd("shortstream", {"a": "1"})
    m.pexpire("shortstream", 100)
    wait_synced(m, r)
    time.sleep(0.3)
    # Logically expired on the replica: reads miss it; nothing deletes it there.
    assert r.get("short") is None and r.exists("short", "shortstream") == 0
    assert r.xlen("shortstream") == 0
    assert r.pttl("short") == -2
    time.sleep(1.2)  # several active-expiry cycles of the replica
    assert r.dbsize() == 2
    assert info(r, "stats")["expired_keys"] == "0"
    m.get("short")  # the master's lookup expires it and sends DEL
    wait_synced(m, r)
    assert r.dbsize() == 1
    m.exists("shortstream")
    wait_synced(m, r)
    assert r.dbsize() == 0


def test_expired_keys_from_the_snapshot_are_kept_until_master_del(procs):
    master = redis_master(procs, None, "--enable-debug-command", "yes")
    m = master.client()
    m.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    m.set("old", "v", px=50)
    m.set("live", "v")
    time.sleep(0.2)
    replica = rivulet(procs, "--replicaof", f"127.0.0.1 {master.port}")
    r = redis.Redis(port=replica.port)
    wait_synced(m, r)
    # Redis's snapshot still holds the key (not yet expired on the master): we keep it too.
    assert r.dbsize() == m.dbsize() == 2
    assert r.get("old") is None
    m.get("old")
    wait_synced(m, r)
    assert r.dbsize() == 1


@pytest.mark.parametrize("binary", master_binaries())
@pytest.mark.parametrize("side", ["replica", "master"])
def test_partial_resync_after_link_killed(procs, binary, side):
    master = redis_master(procs, binary)
    m = master.client()
    populate(m)
    replica = rivulet(procs, "--replicaof", f"127.0.0.1 {master.port}")
    r = redis.Redis(port=replica.port)
    wait_synced(m, r)
    before = int(info(m, "stats")["sync_partial_ok"])
    full_before = int(info(m, "stats")["sync_full"])
    if side == "replica":
        assert r.execute_command("CLIENT", "KILL", "TYPE", "master") == 1
    else:
        assert m.execute_command("CLIENT", "KILL", "TYPE", "replica") == 1
    m.xadd("stream", {"while": "down"}, id="7000-0")
    m.set("while", "down")
    wait_until(lambda: int(info(m, "stats")["sync_partial_ok"]) == before + 1,
               what="the partial resynchronization")
    wait_synced(m, r)
    assert int(info(m, "stats")["sync_full"]) == full_before
    assert r.get("while") == b"down"
    same_dataset(m, r)
    assert "Successful partial resynchronization with master." in replica.log()


def test_master_killed_and_back(procs):
    master = redis_master(procs, None, "--appendonly", "yes")
    m = master.client()
    m.set("k", "1")
    replica = rivulet(procs, "--replicaof", f"127.0.0.1 {master.port}", "--repl-timeout", "5")
    r = redis.Redis(port=replica.port)
    wait_synced(m, r)
    master.stop(kill=True)
    wait_until(lambda: info(r)["master_link_status"] == "down", what="the link to go down")
    down = info(r)
    assert int(down["master_link_down_since_seconds"]) >= 0
    assert r.get("k") == b"1"  # stale data served (replica-serve-stale-data yes)
    assert r.execute_command("ROLE")[3] in (b"connect", b"connecting", b"handshake")
    restarted = RedisServer(None, "--appendonly", "yes", port=master.port, data_dir=master.dir)
    procs.append(restarted)
    restarted.start()
    m2 = restarted.client()
    m2.set("k2", "2")
    wait_synced(m2, r)
    assert r.get("k") == b"1" and r.get("k2") == b"2"
    same_dataset(m2, r)


def test_replicaof_no_one_promotes_and_takes_writes(procs):
    master = redis_master(procs)
    m = master.client()
    populate(m)
    replica = rivulet(procs, "--replicaof", f"127.0.0.1 {master.port}")
    r = redis.Redis(port=replica.port)
    wait_synced(m, r)
    old = info(r)
    assert r.execute_command("REPLICAOF", "NO", "ONE") == b"OK"
    new = info(r)
    assert new["role"] == "master" and "master_host" not in new
    # PSYNC2: the history followed so far stays valid up to here, under a new ID.
    assert new["master_replid2"] == old["master_replid"]
    assert new["second_repl_offset"] == str(int(old["master_repl_offset"]) + 1)
    assert new["master_replid"] != old["master_replid"]
    assert r.set("after", "promotion") is True
    assert r.xadd("stream", {"n": "mine"}, id="9000-0") == b"9000-0"
    assert r.get("str") == b"hello"
    assert r.execute_command("ROLE")[0] == b"master"
    assert r.execute_command("REPLICAOF", "NO", "ONE") == b"OK"  # already a master
    assert "MASTER MODE enabled (user request from 'id=" in replica.log()


def test_replicaof_replies_and_errors(procs):
    master = redis_master(procs)
    ours = rivulet(procs)
    theirs = redis_master(procs)
    script = [("REPLICAOF", "127.0.0.1", "notaport"), ("REPLICAOF", "127.0.0.1", "70000"),
              ("REPLICAOF", "127.0.0.1", "-1"), ("REPLICAOF", "127.0.0.1"),
              ("REPLICAOF", "127.0.0.1", str(master.port)),
              ("REPLICAOF", "127.0.0.1", str(master.port)),
              ("SLAVEOF", "127.0.0.1", str(master.port)),
              ("CONFIG", "GET", "replicaof"), ("CONFIG", "GET", "slaveof"),
              ("CONFIG", "SET", "replicaof", "127.0.0.1 1"),
              ("SLAVEOF", "no", "one"), ("CONFIG", "GET", "replicaof"), ("REPLICAOF", "NO", "ONE")]
    assert _replies(ours.port, script) == _replies(theirs.port, script)


def test_replica_settings_like_redis(procs):
    ours = rivulet(procs)
    theirs = redis_master(procs)
    names = ["replicaof", "masterauth", "masteruser", "replica-read-only", "slave-read-only",
             "replica-serve-stale-data", "repl-timeout", "replica-priority", "slave-priority",
             "replica-announced", "replica-announce-ip", "replica-announce-port",
             "repl-diskless-load", "replica-lazy-flush"]
    script: list[tuple] = [("CONFIG", "GET", name) for name in names]
    script += [("CONFIG", "SET", "repl-timeout", "0"), ("CONFIG", "SET", "repl-timeout", "30"),
               ("CONFIG", "SET", "replica-priority", "-1"),
               ("CONFIG", "SET", "slave-priority", "7"), ("CONFIG", "GET", "replica-priority"),
               ("CONFIG", "SET", "replica-announce-port", "65536"),
               ("CONFIG", "SET", "repl-diskless-load", "swapdb"),
               ("CONFIG", "SET", "repl-diskless-load", "on-empty-db"),
               ("CONFIG", "SET", "repl-diskless-load", "sometimes"),
               ("CONFIG", "GET", "repl-diskless-load"),
               ("CONFIG", "SET", "replica-read-only", "maybe"),
               ("CONFIG", "SET", "masterauth", "pw"), ("CONFIG", "GET", "masterauth")]
    assert _replies(ours.port, script) == _replies(theirs.port, script)


def test_replicaof_in_config_file_and_config_rewrite(procs, tmp_path):
    master = redis_master(procs)
    m = master.client()
    m.set("k", "v")
    conf = tmp_path / "rivulet.conf"
    conf.write_text(f"# replica\nslaveof 127.0.0.1 {master.port}\nrepl-timeout 30\n")
    port = free_port()
    replica = ServerProcess(port=port)
    replica.args.insert(0, str(conf))
    replica.start()
    procs.append(replica)
    r = redis.Redis(port=port)
    wait_synced(m, r)
    assert r.get("k") == b"v"
    assert r.config_get("replicaof") == {"replicaof": f"127.0.0.1 {master.port}"}
    assert r.execute_command("CONFIG", "REWRITE") == b"OK"
    text = conf.read_text()
    assert f"replicaof 127.0.0.1 {master.port}" in text.splitlines() and "slaveof" not in text
    r.execute_command("REPLICAOF", "NO", "ONE")
    r.execute_command("CONFIG", "REWRITE")
    assert "replicaof" not in conf.read_text() and "repl-timeout 30" in conf.read_text()
    r.execute_command("REPLICAOF", "127.0.0.1", master.port)
    r.execute_command("CONFIG", "REWRITE")
    assert f"replicaof 127.0.0.1 {master.port}" in conf.read_text().splitlines()
    # A restart from the rewritten file is a replica again.
    replica.stop()
    again = ServerProcess(port=port, data_dir=replica.dir)
    again.args.insert(0, str(conf))
    again.start()
    procs.append(again)
    wait_synced(m, r)
    assert info(r)["role"] == "slave"


def test_bad_replicaof_in_config_stops_start_up(tmp_path):
    proc = ServerProcess("--replicaof", "127.0.0.1 notaport")
    with pytest.raises(RuntimeError, match="Invalid master port"):
        proc.start()
    proc.cleanup()


def test_masterauth_and_masteruser(procs):
    master = redis_master(procs, None, "--requirepass", "sekret")
    m = master.client(password="sekret")
    m.set("k", "v")
    replica = rivulet(procs, "--masterauth", "wrong", "--replicaof", f"127.0.0.1 {master.port}")
    r = redis.Redis(port=replica.port)
    wait_until(lambda: "Unable to AUTH to MASTER: -WRONGPASS" in replica.log(),
               what="the refused AUTH")
    assert info(r)["master_link_status"] == "down"
    r.config_set("masterauth", "sekret")
    r.config_set("masteruser", "default")
    wait_synced(m, r)
    assert r.get("k") == b"v"


@pytest.mark.parametrize("binary", master_binaries())
def test_live_migration_from_redis(procs, binary):
    """The documented path: replicate the running Redis, wait for the link, promote, write."""
    master = redis_master(procs, binary)
    m = master.client()
    populate(m)
    stop = threading.Event()
    written: list[str] = []

    def writer() -> None:
        with master.client() as c:
            i = 0
            while not stop.is_set():
                c.xadd("live", {"i": str(i)}, id=f"{i + 1}-0")
                written.append(f"{i + 1}-0")
                i += 1
                time.sleep(0.002)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        target = rivulet(procs)
        r = redis.Redis(port=target.port)
        assert r.execute_command("REPLICAOF", "127.0.0.1", master.port) == b"OK"
        wait_until(lambda: info(r)["master_link_status"] == "up", what="master_link_status:up")
        time.sleep(0.3)
    finally:
        stop.set()
        thread.join(10)
    wait_synced(m, r)
    assert r.execute_command("REPLICAOF", "NO", "ONE") == b"OK"
    same_dataset(m, r)
    assert r.xlen("live") == len(written) > 0
    r.xadd("live", {"i": "after"}, id=f"{len(written) + 1}-0")
    assert r.xreadgroup("g1", "alice", {"stream": ">"}, count=1)
    assert info(r)["role"] == "master"


def test_replica_survives_sigterm_and_resyncs(procs):
    master = redis_master(procs)
    m = master.client()
    m.set("k", "v")
    replica = rivulet(procs, "--replicaof", f"127.0.0.1 {master.port}")
    r = redis.Redis(port=replica.port)
    wait_synced(m, r)
    replica.stop(signal.SIGTERM)
    m.set("k2", "v2")
    again = ServerProcess("--replicaof", f"127.0.0.1 {master.port}", data_dir=replica.dir,
                          port=replica.port).start()
    procs.append(again)
    wait_synced(m, r)
    assert r.get("k2") == b"v2" and r.get("k") == b"v"


# --- Rivulet replicating Rivulet ------------------------------------------------------------


def group_commands(m: redis.Redis) -> None:
    """Consumer-group traffic: deliveries, acks, claims, consumers, IDs, trims."""
    m.xadd("stream", {"n": "new"}, id="5000-0")
    m.xreadgroup("g1", "alice", {"stream": ">"}, count=10)
    m.xreadgroup("g1", "dave", {"stream": ">"}, count=2)
    m.xack("stream", "g1", "1002-2", "1003-0", "1004-1")
    m.xclaim("stream", "g1", "bob", 0, ["1040-1", "1041-2"])
    m.xautoclaim("stream", "g2", "erin", 0, "0-0", count=2)
    m.xgroup_createconsumer("stream", "g2", "frank")
    m.xgroup_delconsumer("stream", "g1", "dave")
    m.xgroup_setid("stream", "g2", "1200-0", entries_read=200)
    m.xgroup_create("stream", "g3", id="$")
    m.xadd("stream", {"n": "more"}, id="5001-0")
    m.xreadgroup("g3", "gina", {"stream": ">"}, noack=True)
    m.xtrim("stream", minid="1020")
    m.xdel("stream", "1030-0")
    with m.pipeline(transaction=True) as p:
        p.xadd("stream", {"n": "in-multi"}, id="6000-0")
        p.xreadgroup("g1", "alice", {"stream": ">"}, count=1)
        p.execute()


def test_rivulet_replica_of_rivulet_master(procs):
    master = rivulet(procs)
    m = redis.Redis(port=master.port)
    populate(m)
    replica = rivulet(procs, "--replicaof", f"127.0.0.1 {master.port}")
    r = redis.Redis(port=replica.port)
    wait_synced(m, r)
    same_dataset(m, r)
    group_commands(m)
    wait_synced(m, r)
    # Every field of XINFO STREAM FULL, Rivulet's own included, entries-read and lag too.
    assert stream_full(r, b"stream") == stream_full(m, b"stream")
    same_dataset(m, r)
    # The link is cut: the replica continues from the master's backlog.
    assert m.execute_command("CLIENT", "KILL", "TYPE", "replica") == 1
    m.xadd("stream", {"n": "while-down"}, id="7000-0")
    wait_until(lambda: info(m, "stats")["sync_partial_ok"] == "1", what="a partial resync")
    wait_synced(m, r)
    assert stream_full(r, b"stream") == stream_full(m, b"stream")
    assert info(m, "stats")["sync_full"] == "1"


def test_rivulet_chain_and_failover_continue_partially(procs):
    """A replica of a replica gets the master's stream as is; after a failover (the middle one
    promoted, the old master made its replica) everybody continues without a full sync."""
    master = rivulet(procs)
    m = redis.Redis(port=master.port)
    populate(m)
    middle = rivulet(procs, "--replicaof", f"127.0.0.1 {master.port}")
    mid = redis.Redis(port=middle.port)
    wait_synced(m, mid)
    leaf = rivulet(procs, "--replicaof", f"127.0.0.1 {middle.port}")
    lf = redis.Redis(port=leaf.port)
    wait_synced(mid, lf)
    group_commands(m)
    wait_synced(m, mid)
    wait_synced(mid, lf)
    assert info(lf)["master_repl_offset"] == info(m)["master_repl_offset"]
    assert stream_full(lf, b"stream") == stream_full(m, b"stream")
    # Failover: promote the middle one, the old master follows it.
    assert mid.execute_command("REPLICAOF", "NO", "ONE") == b"OK"
    mid.xadd("stream", {"n": "new-master"}, id="8000-0")
    assert m.execute_command("REPLICAOF", "127.0.0.1", middle.port) == b"OK"
    wait_synced(mid, m)
    wait_synced(mid, lf)
    stats = info(mid, "stats")
    # The leaf (dropped at the promotion) and the old master both continued partially.
    assert stats["sync_full"] == "1" and stats["sync_partial_ok"] == "2"
    for other in (m, lf):
        assert stream_full(other, b"stream") == stream_full(mid, b"stream")
        same_dataset(mid, other)
    assert "Successful partial resynchronization with master." in master.log()


def test_expired_hash_fields_hidden_on_replica_until_master_hdel(procs):
    master = rivulet(procs, "--active-expire-enabled", "no")
    m = redis.Redis(port=master.port)
    replica = rivulet(procs, "--replicaof", f"127.0.0.1 {master.port}")
    r = redis.Redis(port=replica.port)
    m.hset("h", mapping={"f1": "a", "f2": "b"})
    m.execute_command("HPEXPIRE", "h", 100, "FIELDS", 1, "f1")
    wait_synced(m, r)
    time.sleep(0.3)
    assert r.hget("h", "f1") is None and r.hgetall("h") == {b"f2": b"b"}
    assert r.hlen("h") == 2  # still held (HLEN counts expired fields, as Redis's)
    m.hget("h", "f1")  # the master's lookup deletes it, and sends HDEL
    wait_synced(m, r)
    assert r.hlen("h") == 1


def test_idle_timeout_spares_the_master_link(procs):
    master = redis_master(procs)
    m = master.client()
    replica = rivulet(procs, "--replicaof", f"127.0.0.1 {master.port}", "--timeout", "1")
    r = redis.Redis(port=replica.port)
    wait_synced(m, r)
    before = r.execute_command("CLIENT", "LIST", "TYPE", "master")
    assert b"flags=M" in before
    time.sleep(2.5)  # idle clients are closed after 1 second; the master's link is not
    after = r.execute_command("CLIENT", "LIST", "TYPE", "master")
    assert after.split(b" ")[0] == before.split(b" ")[0]  # the same id
    assert info(r)["master_link_status"] == "up"


@pytest.mark.parametrize("binary", master_binaries())
def test_master_restarted_from_its_rdb_continues_partially(procs, binary):
    """A Redis master shut down with a save keeps its replication history in dump.rdb: once
    back, it continues with its replicas (+CONTINUE, under a new replication ID)."""
    master = redis_master(procs, binary)
    m = master.client()
    populate(m)
    replica = rivulet(procs, "--replicaof", f"127.0.0.1 {master.port}")
    r = redis.Redis(port=replica.port)
    wait_synced(m, r)
    old_id = info(r)["master_replid"]
    with pytest.raises(redis.ConnectionError):
        m.execute_command("SHUTDOWN", "SAVE")
    master.proc.wait(10)
    wait_until(lambda: info(r)["master_link_status"] == "down", what="the link to go down")
    back = RedisServer(binary, port=master.port, data_dir=master.dir)
    procs.append(back)
    back.start()
    m2 = back.client()
    m2.set("after", "restart")
    wait_synced(m2, r)
    stats = info(m2, "stats")
    assert stats["sync_partial_ok"] == "1" and stats["sync_full"] == "0"
    mine = info(r)
    assert mine["master_replid2"] == old_id and mine["master_replid"] == info(m2)["master_replid"]
    assert r.get("after") == b"restart"
    same_dataset(m2, r)
