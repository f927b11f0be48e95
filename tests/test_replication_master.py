"""The master side of replication against real server processes: a replica spoken over a raw
socket (tests/replication_helpers.py) syncs, receives the stream byte for byte, continues from
the backlog; WAIT, WAITAOF, min-replicas-to-write, ROLE, INFO replication, CLIENT LIST / KILL."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

import pytest
import redis

from tests.helpers import aof_path
from tests.replication_helpers import RawReplica, check_rdb_with, encode, load_with_rivulet, wait_for
from tests.serverproc import ServerProcess


@pytest.fixture
def master():
    srv = ServerProcess("--repl-diskless-sync-delay", "0").start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def disk_master():
    srv = ServerProcess("--repl-diskless-sync", "no").start()
    try:
        yield srv
    finally:
        srv.stop()


def _client(srv: ServerProcess) -> redis.Redis:
    return redis.Redis(port=srv.port)


def test_full_sync_sends_a_snapshot_rivulet_loads(master) -> None:
    r = _client(master)
    r.set("str", "value")
    r.rpush("list", *[b"x%d" % i for i in range(200)])
    r.hset("hash", mapping={"a": 1, "b": 2})
    r.sadd("set", 1, 2, 3)
    r.zadd("zset", {"m": 1.5})
    r.pexpire("str", 100000)
    r.xadd("stream", {"f": "v"}, id="1-1")
    r.xgroup_create("stream", "g", id="0")
    r.xreadgroup("g", "alice", {"stream": ">"})
    r.select(5) if False else None
    r5 = redis.Redis(port=master.port, db=5)
    r5.set("in5", "five")
    replica = RawReplica(master.port)
    try:
        replica.handshake()
        words = replica.psync()
        assert words[0] == b"+FULLRESYNC" and len(words[1]) == 40
        assert int(words[2]) == r.info("replication")["master_repl_offset"]
        payload, framing = replica.rdb()
        assert framing == "eof"  # capa eof + repl-diskless-sync yes (the default)
        assert payload.startswith(b"REDIS0012")
    finally:
        replica.close()
    loaded = load_with_rivulet(payload)
    try:
        other = _client(loaded)
        for key in (b"str", b"list", b"hash", b"set", b"zset", b"stream"):
            assert other.dump(key) == r.dump(key), key
        assert redis.Redis(port=loaded.port, db=5).get("in5") == b"five"
        assert other.xinfo_stream("stream", full=True) == r.xinfo_stream("stream", full=True)
        assert 0 < other.pttl("str") <= 100000
    finally:
        loaded.stop()
    checked = subprocess.run([sys.executable, "-m", "server.rdb.check", "/dev/stdin"],
                             input=payload, capture_output=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_redis_check_rdb_accepts_the_snapshot(master) -> None:
    from tests.dump_helpers import redis74_binary

    binary = redis74_binary()
    if binary is None:
        pytest.skip("NOT TESTED: no Redis 7.4 build, so redis-check-rdb (7.4) did not read the "
                    "snapshot a replica receives (Debian's 7.0 cannot read RDB version 12)")
    r = _client(master)
    r.set("k", "v")
    r.xadd("s", {"f": "v"})
    replica = RawReplica(master.port)
    try:
        payload, _ = replica.sync_full()
    finally:
        replica.close()
    # redis-check-rdb is redis-server started under that name (what `make install` links).
    link_dir = tempfile.mkdtemp(prefix="check-rdb-")
    checker = os.path.join(link_dir, "redis-check-rdb")
    os.symlink(binary, checker)
    result = check_rdb_with(checker, payload)
    assert result.returncode == 0 and "RDB looks OK" in result.stdout, result.stdout


def test_live_stream_is_byte_exact(master) -> None:
    r = _client(master)
    replica = RawReplica(master.port)
    try:
        replica.sync_full()
        entry = r.xadd("s", {"f": "v"})
        # The first command after a snapshot states its database.
        assert replica.read_commands(2) == [[b"SELECT", b"0"], [b"XADD", b"s", entry, b"f", b"v"]]
        pipe = r.pipeline(transaction=True)
        pipe.set("a", "1")
        pipe.sadd("a2", "2")
        pipe.execute()
        assert replica.read_commands(4) == [[b"MULTI"], [b"SET", b"a", b"1"],
                                            [b"SADD", b"a2", b"2"], [b"EXEC"]]
        r3 = redis.Redis(port=master.port, db=3)
        r3.set("x", "y")
        r.set("z", "w")
        assert replica.read_commands(4) == [[b"SELECT", b"3"], [b"SET", b"x", b"y"],
                                            [b"SELECT", b"0"], [b"SET", b"z", b"w"]]
        # Relative expiries leave as absolute ones; reads leave nothing.
        r.get("z")
        r.expire("z", 100)
        cmd = replica.read_commands(1)[0]
        assert cmd[:2] == [b"PEXPIREAT", b"z"] and int(cmd[2]) > time.time() * 1000
        # The stream's bytes are the backlog's, and the offset counts them.
        info = r.info("replication")
        assert info["master_repl_offset"] == replica.offset
        assert info["repl_backlog_histlen"] == replica.offset
        assert info["repl_backlog_first_byte_offset"] == 1
    finally:
        replica.close()


def test_diskless_stream_waits_for_the_first_ack(master) -> None:
    r = _client(master)
    replica = RawReplica(master.port)
    try:
        replica.handshake()
        replica.psync()
        replica.rdb()
        r.set("during", "load")
        assert replica.read_stream(1, timeout=0.5) == b""  # still loading, as far as we know
        replica.ack()
        assert replica.read_commands(2) == [[b"SELECT", b"0"], [b"SET", b"during", b"load"]]
    finally:
        replica.close()


def test_disk_sync_sends_a_bulk_and_writes_during_it_arrive_once(disk_master) -> None:
    r = _client(disk_master)
    pipe = r.pipeline(transaction=False)
    for i in range(20000):
        pipe.set(b"k%d" % i, b"v" * 50)
    pipe.execute()
    replica = RawReplica(disk_master.port)
    stop = threading.Event()
    done = []

    def writer() -> None:
        w = _client(disk_master)
        n = 0
        while not stop.is_set() and n < 400:
            w.rpush("counter", "x")
            n += 1
        done.append(n)

    try:
        replica.handshake(eof=True)
        thread = threading.Thread(target=writer)
        thread.start()
        words = replica.psync()
        assert words[0] == b"+FULLRESYNC"
        payload, framing = replica.rdb()
        assert framing == "bulk"  # repl-diskless-sync no
        thread.join()
        total = done[0]
        assert r.llen("counter") == total
        expected_offset = r.info("replication")["master_repl_offset"]
        replica.read_stream(expected_offset - replica.base_offset)
        assert replica.offset == expected_offset
    finally:
        stop.set()
        replica.close()
    loaded = load_with_rivulet(payload)
    try:
        in_snapshot = _client(loaded).llen("counter")
    finally:
        loaded.stop()
    pushes = replica.stream.count(encode("RPUSH", "counter", "x"))
    assert in_snapshot + pushes == total


def test_old_sync_gets_a_bulk_without_fullresync(master) -> None:
    r = _client(master)
    r.set("k", "v")
    replica = RawReplica(master.port)
    try:
        replica.send("SYNC")
        payload, framing = replica.rdb()
        assert framing == "bulk" and payload.startswith(b"REDIS0012")
        r.set("k2", "v2")
        assert replica.read_commands(2) == [[b"SELECT", b"0"], [b"SET", b"k2", b"v2"]]
    finally:
        replica.close()


def test_psync_continues_with_exactly_the_missed_bytes(master) -> None:
    r = _client(master)
    reference = RawReplica(master.port)
    first = RawReplica(master.port)
    try:
        reference.sync_full(port=7001)
        first.sync_full(port=7002)
        r.set("a", "1")
        first.read_commands(2)
        first.ack()
        replid = r.info("replication")["master_replid"]
        resume_at = first.offset + 1
        first.close()
        assert wait_for(lambda: r.info("replication")["connected_slaves"] == 1)
        r.set("b", "2")
        r.xadd("s", {"f": "v"})
        again = RawReplica(master.port)
        try:
            again.handshake(port=7002)
            assert again.psync(replid, resume_at) == [b"+CONTINUE", replid.encode()]
            end = r.info("replication")["master_repl_offset"]
            missed = again.read_stream(end - resume_at + 1)
            reference.read_stream(end - reference.offset)
            start = resume_at - reference.base_offset - 1
            assert missed == reference.stream[start:]
            assert b"SET\r\n$1\r\nb" in missed and b"XADD" in missed and b"$1\r\na\r\n" not in missed
            # Then the live stream goes on.
            r.set("c", "3")
            assert again.read_commands(1) == [[b"SET", b"c", b"3"]]
        finally:
            again.close()
        # Without psync2 the reply names no ID (Redis's old form).
        old = RawReplica(master.port)
        try:
            old.handshake(port=7003, psync2=False)
            end = r.info("replication")["master_repl_offset"]
            assert old.psync(replid, end + 1) == [b"+CONTINUE"]
        finally:
            old.close()
        info = r.info("stats")
        assert info["sync_partial_ok"] == 2 and info["sync_full"] == 2
    finally:
        reference.close()


def test_psync_falls_back_to_full_resync(master) -> None:
    r = _client(master)
    keeper = RawReplica(master.port)
    try:
        keeper.sync_full()
        replid = r.info("replication")["master_replid"]
        end = r.info("replication")["master_repl_offset"]
        for asked in [("f" * 40, end + 1), (replid, end + 2), (replid, 0)]:
            other = RawReplica(master.port)
            try:
                other.handshake()
                words = other.psync(*asked)
                assert words[0] == b"+FULLRESYNC", asked
            finally:
                other.close()
        # An offset that fell out of the backlog (16 KB, the smallest size).
        r.config_set("repl-backlog-size", "1")
        assert r.info("replication")["repl_backlog_size"] == 16384
        start = r.info("replication")["master_repl_offset"] + 1
        r.set("big", "x" * 40000)
        info = r.info("replication")
        assert info["repl_backlog_histlen"] == 16384
        assert info["repl_backlog_first_byte_offset"] == info["master_repl_offset"] - 16384 + 1
        other = RawReplica(master.port)
        try:
            other.handshake()
            assert other.psync(replid, start)[0] == b"+FULLRESYNC"
        finally:
            other.close()
        assert r.info("stats")["sync_partial_err"] == 4
    finally:
        keeper.close()


def test_wait_without_replicas_and_timeouts(master) -> None:
    r = _client(master)
    r.set("k", "v")
    assert r.execute_command("WAIT", 0, 0) == 0
    t0 = time.monotonic()
    assert r.execute_command("WAIT", 1, 300) == 0
    assert 0.25 <= time.monotonic() - t0 < 3
    with pytest.raises(redis.ResponseError, match="timeout is negative"):
        r.execute_command("WAIT", 1, -1)
    with pytest.raises(redis.ResponseError, match="value is not an integer"):
        r.execute_command("WAIT", "x", 0)
    pipe = r.pipeline(transaction=True)
    pipe.execute_command("WAIT", 5, 0)
    assert pipe.execute() == [0]  # inside MULTI it cannot block


def test_wait_blocks_until_the_replica_acks(master) -> None:
    r = _client(master)
    replica = RawReplica(master.port)
    try:
        replica.sync_full()
        r.set("k", "v")
        replica.read_commands(2)
        result: list = []
        waiter = threading.Thread(target=lambda: result.append(r.execute_command("WAIT", 1, 0)))
        waiter.start()
        # WAIT asks for acks: REPLCONF GETACK * comes down the stream.
        assert replica.read_commands(1) == [[b"REPLCONF", b"GETACK", b"*"]]
        time.sleep(0.2)
        assert not result  # still blocked
        replica.ack()
        waiter.join(5)
        assert result == [1]
        # A later write needs a later ack: a timeout answers how many acked it (none).
        r.set("k2", "v")
        t0 = time.monotonic()
        assert r.execute_command("WAIT", 1, 300) == 0
        assert time.monotonic() - t0 >= 0.25
        info = r.info("replication")
        assert re.fullmatch(r"ip=127\.0\.0\.1,port=7777,state=online,offset=\d+,lag=\d+",
                            ",".join(f"{k}={v}" for k, v in info["slave0"].items()))
    finally:
        replica.close()


def test_waitaof(master) -> None:
    r = _client(master)
    r.set("k", "v")
    assert r.execute_command("WAITAOF", 1, 0, 1000) == [1, 0]
    assert r.execute_command("WAITAOF", 0, 0, 0) == [1, 0]
    with pytest.raises(redis.ResponseError, match="value is out of range, value must between 0 and 1"):
        r.execute_command("WAITAOF", 2, 0, 0)
    with pytest.raises(redis.ResponseError, match="value is out of range, must be positive"):
        r.execute_command("WAITAOF", 0, -1, 0)
    r.config_set("appendonly", "no")
    with pytest.raises(redis.ResponseError) as err:
        r.execute_command("WAITAOF", 1, 0, 0)
    assert str(err.value) == "WAITAOF cannot be used when numlocal is set but appendonly is disabled."
    assert r.execute_command("WAITAOF", 0, 0, 0) == [0, 0]
    t0 = time.monotonic()
    assert r.execute_command("WAITAOF", 0, 1, 200) == [0, 0]
    assert time.monotonic() - t0 >= 0.15


def test_waitaof_counts_local_fsync_and_replica_facks(master) -> None:
    r = _client(master)
    replica = RawReplica(master.port)
    try:
        replica.sync_full()
        r.set("k", "v")
        replica.read_commands(2)
        result: list = []
        waiter = threading.Thread(
            target=lambda: result.append(r.execute_command("WAITAOF", 1, 1, 5000)))
        waiter.start()
        replica.read_commands(1)  # GETACK
        replica.send("REPLCONF", "ACK", replica.offset, "FACK", replica.offset)
        waiter.join(6)
        assert result == [[1, 1]]  # everysec fsyncs within a second or so
    finally:
        replica.close()


def test_min_replicas_to_write(master) -> None:
    r = _client(master)
    r.config_set("min-slaves-to-write", "1")  # the old name sets the same parameter
    assert r.config_get("min-replicas-to-write") == {"min-replicas-to-write": "1"}
    with pytest.raises(redis.ResponseError) as err:
        r.set("k", "v")
    assert str(err.value) == "NOREPLICAS Not enough good replicas to write."
    assert r.get("k") is None  # reads still run
    assert r.info("replication")["min_slaves_good_slaves"] == 0
    replica = RawReplica(master.port)
    try:
        replica.sync_full()
        assert wait_for(lambda: r.info("replication")["min_slaves_good_slaves"] == 1)
        assert r.set("k", "v")
        r.config_set("min-replicas-max-lag", "0")  # 0 turns the check off
        assert "min_slaves_good_slaves" not in r.info("replication")
    finally:
        replica.close()
    assert r.set("k", "v2")
    r.config_set("min-replicas-max-lag", "10")
    assert wait_for(lambda: r.info("replication")["connected_slaves"] == 0)
    with pytest.raises(redis.ResponseError, match="Not enough good replicas"):
        r.set("k", "v3")
    r.config_set("min-replicas-to-write", "0")
    assert r.set("k", "v4")


def test_info_role_and_client_list(master) -> None:
    r = _client(master)
    info = r.info("replication")
    assert list(info) == ["role", "connected_slaves", "master_failover_state", "master_replid",
                          "master_replid2", "master_repl_offset", "second_repl_offset",
                          "repl_backlog_active", "repl_backlog_size",
                          "repl_backlog_first_byte_offset", "repl_backlog_histlen"]
    assert info["repl_backlog_active"] == 0 and info["master_repl_offset"] == 0
    assert r.execute_command("ROLE") == [b"master", 0, []]
    assert re.fullmatch(r"[0-9a-f]{40}", r.info("server")["run_id"])
    before = info["master_replid"]
    replica = RawReplica(master.port)
    try:
        replica.handshake(port=7123)
        replica.send("REPLCONF", "ip-address", "10.1.2.3")
        assert replica.line() == b"+OK"
        replica.psync()
        replica.rdb()
        replica.ack()
        info = r.info("replication")
        # A new history starts with the backlog.
        assert info["master_replid"] != before and info["repl_backlog_active"] == 1
        assert info["connected_slaves"] == 1
        assert info["slave0"]["ip"] == "10.1.2.3" and info["slave0"]["port"] == 7123
        r.set("k", "v")
        replica.read_commands(2)
        replica.ack()
        assert wait_for(lambda: r.execute_command("ROLE")[2] == [[b"10.1.2.3", b"7123",
                                                                  str(replica.offset).encode()]])
        assert r.execute_command("ROLE")[1] == replica.offset
        lines = [c for c in r.client_list() if c["flags"] == "S"]
        assert len(lines) == 1 and lines[0]["cmd"] == "replconf"
        assert len(r.client_list(_type="replica")) == 1
        assert r.client_kill_filter(_type="slave") == 1
        assert wait_for(lambda: r.info("replication")["connected_slaves"] == 0)
    finally:
        replica.close()


def test_replconf_and_psync_errors(master) -> None:
    r = _client(master)
    assert r.execute_command("REPLCONF") == b"OK"
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("REPLCONF", "listening-port")
    with pytest.raises(redis.ResponseError, match="Unrecognized REPLCONF option: bogus"):
        r.execute_command("REPLCONF", "bogus", "1")
    with pytest.raises(redis.ResponseError, match="value is not an integer"):
        r.execute_command("REPLCONF", "listening-port", "x")
    with pytest.raises(redis.ResponseError, match="Unsupported rdb-filter-only option: keys"):
        r.execute_command("REPLCONF", "rdb-filter-only", "keys")
    with pytest.raises(redis.ResponseError, match="PSYNC FAILOVER can't be sent to a master."):
        r.execute_command("PSYNC", "?", "-1", "FAILOVER")
    replica = RawReplica(master.port)
    try:
        # ACK and GETACK from a client that is not a replica: no reply at all.
        replica.send("REPLCONF", "ACK", "10")
        replica.send("REPLCONF", "GETACK", "*")
        assert replica.command("PING") == b"+PONG"
        # PSYNC with replies still pending in the same read is refused, as in Redis.
        replica.sock.sendall(encode("PING") + encode("PSYNC", "?", "-1"))
        assert replica.line() == b"+PONG"
        assert replica.line() == b"-ERR SYNC and PSYNC are invalid with pending output"
        with pytest.raises(redis.ResponseError, match="not allowed inside a transaction"):
            pipe = r.pipeline(transaction=True)
            pipe.execute_command("PSYNC", "?", "-1")
            pipe.execute()
    finally:
        replica.close()


def test_ping_period_and_timeout_of_a_silent_replica(master) -> None:
    r = _client(master)
    r.config_set("repl-ping-replica-period", "1")
    r.config_set("repl-timeout", "2")
    replica = RawReplica(master.port)
    try:
        replica.sync_full()
        commands = replica.read_commands(1, timeout=4)
        assert commands == [[b"PING"]]  # no SELECT before it
        # No ack for longer than repl-timeout: the master drops the replica.
        assert wait_for(lambda: r.info("replication")["connected_slaves"] == 0, timeout=8)
    finally:
        replica.close()


def test_rdb_only_replica_gets_the_snapshot_then_the_link_closes(master) -> None:
    r = _client(master)
    r.set("k", "v")
    replica = RawReplica(master.port)
    try:
        replica.handshake()
        assert replica.command("REPLCONF", "rdb-only", "1") == b"+OK"
        replica.psync()
        payload, _ = replica.rdb()
        assert payload.startswith(b"REDIS0012")
        replica.sock.settimeout(5)
        assert replica.sock.recv(100) == b""
    finally:
        replica.close()


def test_replication_config_defaults_and_bounds(master) -> None:
    r = _client(master)
    expected = {
        "repl-backlog-size": "1048576", "repl-backlog-ttl": "3600", "repl-diskless-sync": "yes",
        "repl-diskless-sync-max-replicas": "0", "repl-ping-replica-period": "10",
        "repl-timeout": "60", "min-replicas-to-write": "0", "min-replicas-max-lag": "10",
        "replica-announce-ip": "", "replica-announce-port": "0",
    }
    for name, value in expected.items():
        assert r.config_get(name) == {name: value}, name
    with pytest.raises(redis.ResponseError, match="argument must be between 1 and 2147483647"):
        r.config_set("repl-timeout", "0")
    with pytest.raises(redis.ResponseError, match="argument must be between 0 and 65535"):
        r.config_set("replica-announce-port", "70000")


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_large_snapshot_to_a_slow_reader(diskless: str) -> None:
    """A snapshot larger than a connection's write buffer leaves as the replica reads it (the
    diskless relay and the disk sender both wait for the connection), then the stream follows."""
    srv = ServerProcess("--repl-diskless-sync-delay", "0", "--repl-diskless-sync", diskless,
                        "--rdbcompression", "no").start()
    try:
        r = _client(srv)
        pipe = r.pipeline(transaction=False)
        for i in range(1200):
            pipe.set(b"big%d" % i, bytes([i % 256]) * 10000)
        pipe.execute()
        replica = RawReplica(srv.port)
        try:
            replica.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            replica.handshake()
            replica.psync()
            time.sleep(1.5)  # not reading: the master must hold the rest back, not drop us
            r.set("after", "snapshot")
            payload, framing = replica.rdb()
            assert framing == ("eof" if diskless == "yes" else "bulk")
            assert len(payload) > 12_000_000
            if framing == "eof":
                replica.ack()
            assert replica.read_commands(2) == [[b"SELECT", b"0"], [b"SET", b"after", b"snapshot"]]
        finally:
            replica.close()
        loaded = load_with_rivulet(payload)
        try:
            other = _client(loaded)
            assert other.dbsize() == 1200
            assert other.get("big77") == bytes([77]) * 10000
        finally:
            loaded.stop()
    finally:
        srv.stop()


def test_replication_options_from_a_config_file_and_config_rewrite(tmp_path) -> None:
    from tests.test_cli import RunningServer

    conf = tmp_path / "rivulet.conf"
    conf.write_text("min-slaves-to-write 2\nrepl-backlog-size 64kb\nrepl-diskless-sync no\n")
    with RunningServer(str(conf), "--dir", str(tmp_path)) as srv:
        c = redis.Redis(port=srv.port)
        assert c.config_get("min-replicas-to-write") == {"min-replicas-to-write": "2"}
        assert c.config_get("repl-diskless-sync") == {"repl-diskless-sync": "no"}
        assert c.info("replication")["repl_backlog_size"] == 65536
        with pytest.raises(redis.ResponseError, match="NOREPLICAS"):
            c.set("k", "v")
        c.config_set("repl-timeout", "30")
        c.config_set("min-replicas-to-write", "0")
        assert c.execute_command("CONFIG", "REWRITE") == b"OK"
        c.close()
    text = conf.read_text()
    assert "repl-timeout 30" in text.splitlines()
    with RunningServer(str(conf), "--dir", str(tmp_path)) as srv:
        c = redis.Redis(port=srv.port)
        assert c.config_get("repl-timeout") == {"repl-timeout": "30"}
        assert c.set("k", "v")
        c.close()


def test_diskless_delay_and_max_replicas_share_one_snapshot() -> None:
    srv = ServerProcess("--repl-diskless-sync-delay", "60",
                        "--repl-diskless-sync-max-replicas", "2").start()
    first, second = RawReplica(srv.port), RawReplica(srv.port)
    try:
        r = _client(srv)
        r.set("k", "v")
        first.handshake(port=7001)
        first.send("PSYNC", "?", -1)
        time.sleep(1.5)
        # Waiting for the delay: no snapshot yet, newlines keep the link alive.
        first.sock.settimeout(0.5)
        try:
            early = first.sock.recv(1000)
        except TimeoutError:
            early = b""
        first.sock.settimeout(10)
        assert early.strip(b"\n") == b""
        assert r.info("replication")["slave0"]["state"] == "wait_bgsave"
        second.handshake(port=7002)
        # The second replica reaches repl-diskless-sync-max-replicas: one snapshot for both.
        words = second.psync()
        first.buf = early.lstrip(b"\n")
        line = first.line()
        assert line.split()[0] == b"+FULLRESYNC" and line.split() == words
        assert first.rdb()[0] == second.rdb()[0]
        assert r.info("stats")["sync_full"] == 2
    finally:
        first.close()
        second.close()
        srv.stop()


def test_diskless_delay_waits_then_syncs() -> None:
    srv = ServerProcess("--repl-diskless-sync-delay", "1").start()
    replica = RawReplica(srv.port)
    try:
        replica.handshake()
        t0 = time.monotonic()
        assert replica.psync()[0] == b"+FULLRESYNC"
        assert time.monotonic() - t0 >= 0.9
        assert replica.rdb()[0].startswith(b"REDIS0012")
    finally:
        replica.close()
        srv.stop()


def test_client_unblock_releases_a_wait(master) -> None:
    r = _client(master)
    replica = RawReplica(master.port)
    waiting = redis.Redis(port=master.port)
    try:
        replica.sync_full()
        waiting.set("k", "v")
        replica.read_commands(2)
        my_id = waiting.client_id()
        result: list = []
        thread = threading.Thread(target=lambda: result.append(waiting.execute_command("WAIT", 1, 0)))
        thread.start()
        replica.read_commands(1)  # GETACK
        assert wait_for(lambda: any(c["id"] == str(my_id) and "b" in c["flags"]
                                    for c in r.client_list()))
        assert r.client_unblock(my_id) == 1
        thread.join(5)
        assert result == [0]
        # Parked again in another command: a late ACK of the old WAIT must not release it.
        thread = threading.Thread(
            target=lambda: result.append(waiting.xread({"nothing": "$"}, block=1500)))
        thread.start()
        time.sleep(0.3)
        replica.ack()
        time.sleep(0.3)
        assert len(result) == 1
        thread.join(5)
        assert result[1] in (None, [], {})
    finally:
        replica.close()
        waiting.close()


def test_replicas_joining_during_a_burst_get_every_byte_once(master) -> None:
    """The live replicas get what each event-loop iteration wrote in one piece: replicas that
    continue from the backlog (PSYNC) or finish a full sync while pipelined writes pour in get
    the same bytes as a replica that was there all along, none twice and none missed."""
    r = _client(master)
    live = RawReplica(master.port)
    live.sync_full(port=7001)
    replid = r.info("replication")["master_replid"]
    stop = threading.Event()
    errors: list[BaseException] = []

    def load(db: int) -> None:
        writer = redis.Redis(port=master.port, db=db)
        i = 0
        try:
            while not stop.is_set():
                pipe = writer.pipeline(transaction=False)
                for _ in range(50):
                    pipe.xadd("s", {"i": i})
                    pipe.set("k%d" % (i % 7), i)
                    i += 1
                pipe.execute()
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            errors.append(exc)

    writers = [threading.Thread(target=load, args=(db,)) for db in (0, 0, 5)]
    for t in writers:
        t.start()
    continuing: list[tuple[RawReplica, int]] = []
    full: list[RawReplica] = []
    try:
        for k in range(4):
            time.sleep(0.05)
            head = r.info("replication")["master_repl_offset"]
            start = max(live.base_offset + 1, head - 1000)
            replica = RawReplica(master.port)
            replica.handshake(port=7100 + k)
            assert replica.psync(replid, start)[0] == b"+CONTINUE"
            continuing.append((replica, start))
            replica = RawReplica(master.port)
            replica.sync_full(port=7200 + k)
            full.append(replica)
            live.read_stream(1 << 30, timeout=0.01)
    finally:
        stop.set()
        for t in writers:
            t.join()
    try:
        assert not errors, errors
        end = r.info("replication")["master_repl_offset"]
        assert end - live.base_offset > 100_000  # the load ran on while replicas joined
        live.read_stream(end - live.offset, timeout=20)
        assert live.offset == end
        for replica, start in continuing:
            replica.read_stream(end - start + 1 - len(replica.stream), timeout=20)
            assert replica.stream == live.stream[start - live.base_offset - 1:]
        for replica in full:
            replica.read_stream(end - replica.offset, timeout=20)
            assert replica.stream == live.stream[replica.base_offset - live.base_offset:]
    finally:
        live.close()
        for replica, _ in continuing:
            replica.close()
        for replica in full:
            replica.close()


def test_the_aof_and_the_replicas_get_the_same_bytes(master) -> None:
    """One encoding of each write serves the append-only file and the replication stream
    where both had the same database selected: what a replica receives after its snapshot is
    what the file gained meanwhile, but for the SELECT the stream states after a snapshot."""
    r = _client(master)
    assert r.config_get("appendonly")["appendonly"] == "yes"
    r3 = redis.Redis(port=master.port, db=3)
    r3.set("before", "1")  # the file has database 3 selected; the stream will start afresh
    live = RawReplica(master.port)
    live.sync_full(port=7001)
    before = aof_path(master).read_bytes()
    r3.xadd("s", {"f": "v"})
    r.set("a", "1")
    pipe = r.pipeline(transaction=False)
    for i in range(40):
        pipe.xadd("s", {"i": i})
    pipe.execute()
    pipe = r3.pipeline(transaction=True)
    pipe.set("b", "2")
    pipe.expire("b", 100)
    pipe.execute()
    r.xadd("s", {"last": "1"})
    end = r.info("replication")["master_repl_offset"]
    live.read_stream(end - live.offset)
    assert live.offset == end
    after = aof_path(master).read_bytes()
    assert after.startswith(before)
    assert live.stream == encode("SELECT", 3) + after[len(before):]
    assert live.stream.count(b"SELECT") == 4
    live.close()
