"""Real Redis servers as replicas of a Rivulet master.

Redis 7.4 (built from source, see tests/dump_helpers.py) reads RDB version 12: it follows a
Rivulet master, with every type of key and streams with consumer groups. Debian's Redis 7.0
reads RDB up to version 10: it cannot load Rivulet's snapshot and must fail cleanly, leaving
the master serving.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import pytest
import redis

from tests.dump_helpers import redis74_binary
from tests.replication_helpers import RawReplica, wait_for
from tests.serverproc import ServerProcess, free_port, wait_for_port

REDIS70 = shutil.which("redis-server") or "/usr/bin/redis-server"


def _start_replica(binary: str, master_port: int) -> tuple[subprocess.Popen, int, str]:
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="redis-replica-")
    log = os.path.join(workdir, "redis.log")
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", workdir, "--logfile", log, "--replicaof", "127.0.0.1", str(master_port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(port, proc)
    return proc, port, log


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _populate(r: redis.Redis) -> list[bytes]:
    r.set("str", "value")
    r.set("int", 12345)
    r.rpush("list", *[b"x%d" % i for i in range(300)])
    r.rpush("small-list", "a", "b")
    r.hset("hash", mapping={b"f%d" % i: b"v" * (i % 70) for i in range(600)})
    r.hset("small-hash", mapping={"a": 1})
    r.sadd("intset", 1, 2, 3)
    r.sadd("set", *[b"m%d" % i for i in range(200)])
    r.zadd("zset", {b"z%d" % i: i / 3 for i in range(200)})
    r.zadd("small-zset", {"a": 1.5})
    r.setbit("bits", 1000, 1)
    r.set("volatile", "v", px=500000)
    for i in range(50):
        r.xadd("stream", {"n": i}, id=f"{i + 1}-1")
    r.xgroup_create("stream", "g1", id="0")
    r.xgroup_create("stream", "g2", id="$")
    r.xreadgroup("g1", "alice", {"stream": ">"}, count=10)
    r.xreadgroup("g1", "bob", {"stream": ">"}, count=5)
    r.xack("stream", "g1", "2-1")
    r.xdel("stream", "40-1")
    return sorted(r.keys("*"))


# What Rivulet's XINFO STREAM FULL adds for Redis 8's stream features (IDMP, XNACK).
_REDIS8_FIELDS = {"idmp-duration", "idmp-maxsize", "pids-tracked", "iids-tracked", "iids-added",
                  "iids-duplicates", "nacked-count"}


_TIMES = {b"seen-time", b"active-time"}


def _as_74(value: object, times: bool = True) -> object:
    """XINFO STREAM FULL without the fields Redis 7.4 does not have (and without consumers'
    seen / active times when times is False: a replica applying a delivery stamps its own)."""
    if isinstance(value, dict):
        return {k: _as_74(v, times) for k, v in value.items()
                if k not in _REDIS8_FIELDS and (times or k not in _TIMES)}
    if isinstance(value, list):
        return [_as_74(v, times) for v in value]
    return value


def _contents(r: redis.Redis, key: bytes) -> object:
    kind = r.type(key)
    if kind == b"hash":
        return r.hgetall(key)
    if kind == b"set":
        return r.smembers(key)
    return r.zrange(key, 0, -1, withscores=True)


def test_redis74_replica_follows_a_rivulet_master() -> None:
    binary = redis74_binary()
    if binary is None:
        pytest.skip("NOT TESTED: no Redis 7.4 build (RIVULET_REDIS74 or /tmp/redis74), so no real "
                    "Redis replica followed a Rivulet master here")
    master = ServerProcess("--repl-diskless-sync-delay", "0").start()
    proc = None
    try:
        r = redis.Redis(port=master.port)
        keys = _populate(r)
        proc, port, log = _start_replica(binary, master.port)
        rr = redis.Redis(port=port)
        assert wait_for(lambda: rr.info("replication")["master_link_status"] == "up", 30), \
            open(log).read()[-3000:]
        assert sorted(rr.keys("*")) == keys
        for key in keys:
            encoding = rr.object("encoding", key)
            assert encoding == r.object("encoding", key), key
            if encoding in (b"hashtable", b"skiplist"):
                # A hash table's order is each server's own: the contents are compared.
                assert _contents(rr, key) == _contents(r, key), key
            else:
                assert rr.dump(key) == r.dump(key), key
        assert rr.xinfo_stream("stream", full=True) == _as_74(r.xinfo_stream("stream", full=True))
        assert 0 < rr.pttl("volatile") <= 500000
        # It keeps following writes, in other databases too.
        entry = r.xadd("stream", {"late": "1"})
        r.xreadgroup("g2", "carol", {"stream": ">"})
        r.incr("int")
        redis.Redis(port=master.port, db=4).lpush("db4", "x")
        assert wait_for(lambda: redis.Redis(port=port, db=4).lrange("db4", 0, -1) == [b"x"])
        assert rr.get("int") == b"12346"
        assert rr.xrange("stream", entry, entry)[0][0] == entry
        assert _as_74(rr.xinfo_stream("stream", full=True), times=False) == \
            _as_74(r.xinfo_stream("stream", full=True), times=False)
        # The master sees it: its listening port, online, acknowledging.
        info = r.info("replication")
        assert info["connected_slaves"] == 1 and info["slave0"]["port"] == port
        assert wait_for(lambda: r.execute_command("WAIT", 1, 1000) == 1)
        # A dropped link comes back with a partial resynchronization from the backlog.
        assert r.client_kill_filter(_type="replica") == 1
        r.set("while-away", "1")
        assert wait_for(lambda: r.info("stats")["sync_partial_ok"] == 1, 30)
        assert wait_for(lambda: rr.get("while-away") == b"1")
        assert r.info("stats")["sync_full"] == 1
        assert wait_for(lambda: rr.info("replication")["slave_repl_offset"]
                        == r.info("replication")["master_repl_offset"])
    finally:
        if proc is not None:
            _stop(proc)
        master.stop()


def test_redis70_replica_fails_cleanly_on_rdb_version_12() -> None:
    if not os.path.exists(REDIS70):
        pytest.skip("NOT TESTED: Debian's redis-server is not installed")
    version = subprocess.run([REDIS70, "--version"], capture_output=True, text=True).stdout
    if "v=7.0" not in version:
        pytest.skip(f"NOT TESTED: the installed redis-server is not 7.0 ({version.strip()})")
    master = ServerProcess("--repl-diskless-sync-delay", "0").start()
    proc = None
    try:
        r = redis.Redis(port=master.port)
        r.set("k", "v")
        proc, port, log = _start_replica(REDIS70, master.port)
        assert wait_for(lambda: "RDB format version 12" in open(log).read(), 30), \
            open(log).read()[-3000:]
        rr = redis.Redis(port=port)
        assert rr.info("replication")["master_link_status"] == "down"
        # The master keeps serving, and forgets the replica that went away.
        assert r.set("k2", "v2") and r.get("k") == b"v"
        assert r.ping()
    finally:
        if proc is not None:
            _stop(proc)
        master.stop()


def test_sentinel_discovers_the_replicas_of_a_rivulet_master() -> None:
    """Sentinel reads the master's INFO replication (run_id, slaveN lines) as it reads Redis's."""
    sentinel = shutil.which("redis-sentinel")
    if sentinel is None:
        pytest.skip("NOT TESTED: redis-sentinel is not installed, so no Sentinel read INFO")
    master = ServerProcess("--repl-diskless-sync-delay", "0").start()
    workdir = tempfile.mkdtemp(prefix="sentinel-")
    port = free_port()
    conf = os.path.join(workdir, "sentinel.conf")
    with open(conf, "w") as fh:
        fh.write(f"port {port}\nbind 127.0.0.1\nlogfile {workdir}/sentinel.log\n"
                 f"sentinel monitor mymaster 127.0.0.1 {master.port} 1\n")
    proc = subprocess.Popen([sentinel, conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    replica = RawReplica(master.port)
    try:
        wait_for_port(port, proc)
        replica.sync_full(port=7777)
        s = redis.Redis(port=port, decode_responses=True)
        # Sentinel refreshes a master's INFO every 10 seconds.
        assert wait_for(lambda: s.execute_command("SENTINEL", "MASTER", "mymaster")["num-slaves"]
                        == "1", 25)
        state = s.execute_command("SENTINEL", "MASTER", "mymaster")
        assert state["flags"] == "master" and state["role-reported"] == "master"
        assert state["runid"] == redis.Redis(port=master.port).info("server")["run_id"]
        replicas = s.execute_command("SENTINEL", "REPLICAS", "mymaster")
        assert [(r["ip"], r["port"]) for r in replicas] == [("127.0.0.1", "7777")]
    finally:
        replica.close()
        _stop(proc)
        master.stop()


def test_redis_cli_rdb_takes_a_snapshot_of_a_rivulet_master(tmp_path) -> None:
    """redis-cli --rdb speaks the replication handshake (capa eof, rdb-only, SYNC);
    --functions-rdb asks for a snapshot without the keys (rdb-filter-only)."""
    cli = shutil.which("redis-cli")
    if cli is None:
        pytest.skip("NOT TESTED: redis-cli is not installed")
    master = ServerProcess("--repl-diskless-sync-delay", "0").start()
    try:
        r = redis.Redis(port=master.port)
        r.set("k", "v")
        r.xadd("s", {"f": "v"}, id="5-5")
        path = tmp_path / "taken.rdb"
        done = subprocess.run([cli, "-p", str(master.port), "--rdb", str(path)],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "Transfer finished with success" in done.stderr, done
        functions_only = tmp_path / "functions.rdb"
        done = subprocess.run([cli, "-p", str(master.port), "--functions-rdb", str(functions_only)],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done
        # The links closed after their snapshot; the master is left without replicas.
        assert wait_for(lambda: r.info("replication")["connected_slaves"] == 0)
    finally:
        master.stop()
    from tests.replication_helpers import load_with_rivulet

    loaded = load_with_rivulet(path.read_bytes())
    try:
        other = redis.Redis(port=loaded.port)
        assert other.get("k") == b"v" and other.xrange("s") == [(b"5-5", {b"f": b"v"})]
    finally:
        loaded.stop()
    empty = load_with_rivulet(functions_only.read_bytes())
    try:
        assert redis.Redis(port=empty.port).dbsize() == 0
    finally:
        empty.stop()


def _redis74_master():
    binary = redis74_binary()
    if binary is None:
        pytest.skip("NOT TESTED: no Redis 7.4 build, so the stream was not compared with a real "
                    "Redis master's")
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="redis74-master-")
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", workdir, "--repl-diskless-sync-delay", "0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(port, proc)
    return proc, port


def test_stream_info_and_role_match_a_redis74_master() -> None:
    """The same replica handshake and the same writes to Redis 7.4 and to Rivulet: the same
    replication stream, byte for byte, and the same shape of INFO replication and ROLE.

    (Some commands are propagated in a normalized form where Redis sends them as given, e.g.
    XGROUP CREATE with its MKSTREAM / ENTRIESREAD spelled out; a replica applies both alike.)"""
    proc, redis_port = _redis74_master()
    master = ServerProcess("--repl-diskless-sync-delay", "0").start()
    seen = {}
    try:
        for name, port in (("redis", redis_port), ("rivulet", master.port)):
            c = redis.Redis(port=port)
            c.set("before", "snapshot")
            replica = RawReplica(port)
            try:
                replica.sync_full(port=7777)
                c.set("a", "1")
                c.xadd("s", {"f": "v"}, id="1-1")
                pipe = c.pipeline(transaction=True)
                pipe.sadd("b", "x")
                pipe.rpush("l", "y")
                pipe.execute()
                c3 = redis.Redis(port=port, db=3)
                c3.hset("h", "f", "v")
                c.delete("a")
                c.set("last", "one")
                replica.follow(1.5)
                replica.ack()
                wait_for(lambda c=c: c.execute_command("ROLE")[2] != [])
                info = c.info("replication")
                seen[name] = (replica.stream, list(info), sorted(info["slave0"]),
                              c.execute_command("ROLE"), info["master_repl_offset"] == replica.offset,
                              c.execute_command("WAIT", 1, 100), c.execute_command("WAIT", 2, 100))
            finally:
                replica.close()
    finally:
        _stop(proc)
        master.stop()
    redis_seen, rivulet_seen = seen["redis"], seen["rivulet"]
    assert rivulet_seen[0].split(b"\r\n") == redis_seen[0].split(b"\r\n")  # the stream
    assert rivulet_seen[1] == redis_seen[1]  # INFO replication's fields, in order
    assert rivulet_seen[2] == redis_seen[2]
    assert rivulet_seen[3][0] == redis_seen[3][0] == b"master"
    assert rivulet_seen[3][2] == redis_seen[3][2] == [[b"127.0.0.1", b"7777",
                                                         str(rivulet_seen[3][1]).encode()]]
    assert rivulet_seen[4:] == redis_seen[4:] == (True, 1, 1)
