"""Durability: the append-only file, restarts, truncation and corruption, rewrites, write errors."""

from __future__ import annotations

import os
import random
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import redis

from tests.helpers import aof_path, no_retry, restart
from tests.serverproc import ROOT, RawConnection, RedisProcess, ServerProcess, free_port


def test_restart_round_trip_of_strings_ttls_and_databases(server_factory) -> None:
    srv = server_factory()
    r = redis.Redis(port=srv.port)
    r.set("a", 1)
    r.incr("a")
    r.set("ttl", "v", ex=1000)
    r.expire("a", 500)
    r.set("gone", 1)
    r.delete("gone")
    r.incrbyfloat("f", "0.1")
    r.incrbyfloat("f", "0.2")
    r.append("s", "ab")
    r.append("s", "cd")
    r3 = redis.Redis(port=srv.port, db=3)
    r3.set("in3", "x")
    with r.pipeline(transaction=True) as p:
        p.set("tx1", 1).set("tx2", 2).execute()
    ttl_before = r.pttl("ttl")
    r.close()
    r3.close()
    srv2 = restart(srv)
    try:
        r = redis.Redis(port=srv2.port)
        assert r.get("a") == b"2"
        assert 0 < r.ttl("a") <= 500
        assert ttl_before - 5000 < r.pttl("ttl") <= ttl_before
        assert r.exists("gone") == 0
        assert r.get("f") == b"0.3"
        assert r.get("s") == b"abcd"
        assert r.mget("tx1", "tx2") == [b"1", b"2"]
        assert redis.Redis(port=srv2.port, db=3).get("in3") == b"x"
        info = r.info("persistence")
        assert info["aof_enabled"] == 1 and info["loading"] == 0
    finally:
        srv2.cleanup()


def test_relative_expiries_are_logged_as_absolute_times(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    r.set("k", "v", ex=100)
    r.expire("k", 200)
    text = aof_path(srv).read_bytes()
    assert b"PEXPIREAT" in text
    assert b"EX\r\n" not in text and b"expire\r\n" not in text.lower().replace(b"pexpireat", b"")


def test_expired_keys_are_logged_as_del(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    r.set("short", "v", px=50)
    time.sleep(0.2)
    assert r.get("short") is None
    assert b"*2\r\n$3\r\nDEL\r\n$5\r\nshort\r\n" in aof_path(srv).read_bytes()


def test_appendonly_no_writes_no_file(server_factory) -> None:
    srv = server_factory("--appendonly", "no")
    r = redis.Redis(port=srv.port)
    r.set("a", 1)
    assert not aof_path(srv).exists()
    assert r.info("persistence")["aof_enabled"] == 0
    # Turning it on at run time writes the current dataset first.
    assert r.config_set("appendonly", "yes")
    r.set("b", 2)
    srv2 = restart(srv)
    try:
        assert redis.Redis(port=srv2.port).mget("a", "b") == [b"1", b"2"]
    finally:
        srv2.cleanup()


def test_truncated_last_command_is_dropped_with_a_warning(server_factory) -> None:
    srv = server_factory()
    r = redis.Redis(port=srv.port)
    r.set("a", 1)
    r.set("b", 2)
    srv.stop()
    path = aof_path(srv)
    valid_size = path.stat().st_size
    with open(path, "ab") as fh:
        fh.write(b"*3\r\n$3\r\nSET\r\n$1\r\nc\r\n$1")
    srv2 = ServerProcess(data_dir=srv.dir, port=srv.port).start()
    try:
        r = redis.Redis(port=srv2.port)
        assert r.mget("a", "b", "c") == [b"1", b"2", None]
        assert f"at offset {valid_size}" in srv2.log()
        assert "short read while loading the AOF file" in srv2.log()
        assert path.stat().st_size == valid_size
    finally:
        srv2.cleanup()


def test_corruption_in_the_middle_stops_startup_and_keeps_the_file(server_factory) -> None:
    srv = server_factory()
    r = redis.Redis(port=srv.port)
    r.set("a", 1)
    r.set("b", 2)
    srv.stop()
    path = aof_path(srv)
    data = path.read_bytes()
    corrupt = data.replace(b"$1\r\nb\r\n", b"$X\r\nb\r\n")
    path.write_bytes(corrupt)
    proc = subprocess.run(
        [sys.executable, "-m", "server", "--port", str(free_port()), "--dir", srv.dir],
        cwd=ROOT, capture_output=True, text=True, timeout=30,
    )
    assert proc.returncode == 1
    offset = corrupt.index(b"$X")
    assert f"{path}" in proc.stdout and f"at offset {offset}" in proc.stdout
    assert "rivulet-check-aof --fix" in proc.stdout
    assert path.read_bytes() == corrupt


def test_check_aof_reports_and_fixes(tmp_path: Path) -> None:
    path = tmp_path / "appendonly.aof"
    good = b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n"
    path.write_bytes(good + b"*3\r\n$3\r\nSET\r\n$1\r\nb")
    tool = [sys.executable, "-m", "server.persistence.check"]
    out = subprocess.run([*tool, str(path)], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 1
    assert f"ok_up_to={len(good)}" in out.stdout
    assert path.stat().st_size > len(good)
    out = subprocess.run([*tool, "--fix", str(path)], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and "Successfully truncated" in out.stdout
    assert path.read_bytes() == good
    out = subprocess.run([*tool, str(path)], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and "is valid: 1 commands" in out.stdout


def test_startup_objects_stay_frozen_across_a_rewrite(server_factory) -> None:
    # The objects of the server itself are frozen at startup (full collections skip them); the
    # rewrite pauses collections while its child runs instead of freezing and unfreezing
    # everything, which would undo that.
    srv = server_factory()
    r = redis.Redis(port=srv.port)
    frozen = r.info("memory")["gc_frozen_objects"]
    assert frozen > 5000
    for i in range(2000):
        r.set(f"key:{i}", i)
    for _ in range(2):
        assert r.bgrewriteaof()
        deadline = time.monotonic() + 30
        while r.info("persistence")["aof_rewrite_in_progress"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert r.info("persistence")["aof_last_bgrewrite_status"] == "ok"
        memory = r.info("memory")
        # (A frozen object that dies leaves the count: a few may have since.)
        assert memory["gc_frozen_objects"] > frozen * 0.9
        assert memory["gc_enabled"] == 1  # collections are back on after the child


def test_bgrewriteaof_compacts_and_keeps_writes_made_during_it(server_factory) -> None:
    srv = server_factory()
    r = redis.Redis(port=srv.port)
    pipe = r.pipeline(transaction=False)
    for i in range(5000):
        pipe.set("counter", i)
    for i in range(20000):
        pipe.set(f"key:{i}", i)
    pipe.execute()
    size_before = aof_path(srv).stat().st_size
    assert r.bgrewriteaof()
    # Keep writing while the child writes the snapshot.
    for i in range(500):
        r.set(f"during:{i}", i)
    deadline = time.monotonic() + 30
    while r.info("persistence")["aof_rewrite_in_progress"] or r.info("persistence")["aof_rewrites"] < 1:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    info = r.info("persistence")
    assert info["aof_last_bgrewrite_status"] == "ok"
    assert info["aof_current_size"] < size_before  # 5000 SETs of counter became one
    r.set("after", 1)
    srv2 = restart(srv)
    try:
        r = redis.Redis(port=srv2.port)
        assert r.get("counter") == b"4999"
        assert r.get("key:19999") == b"19999"
        assert r.get("during:499") == b"499"
        assert r.get("after") == b"1"
        assert r.dbsize() == 1 + 20000 + 500 + 1
    finally:
        srv2.cleanup()


def test_save_lastsave_bgsave_and_debug_reload(server_factory) -> None:
    srv = server_factory()
    r = redis.Redis(port=srv.port)
    r.set("a", 1)
    before = r.lastsave()
    time.sleep(1.1)
    assert r.save() is True
    assert r.lastsave() > before
    assert r.info("persistence")["rdb_changes_since_last_save"] == 0
    r.set("b", 2)
    assert r.execute_command("DEBUG", "RELOAD") == b"OK"
    assert r.mget("a", "b") == [b"1", b"2"]
    assert r.execute_command("DEBUG", "LOADAOF") == b"OK"
    assert r.mget("a", "b") == [b"1", b"2"]
    r.set_response_callback("BGSAVE", lambda reply, **kwargs: reply)
    assert r.execute_command("BGSAVE") == b"Background saving started"


def _counter_worker(port: int, name: str, acked: dict, stop: threading.Event) -> None:
    client = redis.Redis(port=port, socket_timeout=5, retry=no_retry())  # the kill ends it
    try:
        while not stop.is_set():
            acked[name] = client.incr(name)
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        pass


@pytest.mark.parametrize("policy", ["always", "everysec"])
def test_kill_9_loses_nothing_acknowledged_with_always(server_factory, policy: str) -> None:
    srv = server_factory("--appendfsync", policy)
    acked: dict[str, int] = {}
    stop = threading.Event()
    workers = [threading.Thread(target=_counter_worker, args=(srv.port, f"c{i}", acked, stop))
               for i in range(4)]
    for w in workers:
        w.start()
    time.sleep(random.uniform(0.5, 1.5))
    os.kill(srv.proc.pid, signal.SIGKILL)
    srv.proc.wait()
    stop.set()
    for w in workers:
        w.join(10)
    srv2 = restart(srv)
    try:
        r = redis.Redis(port=srv2.port)
        for name, value in acked.items():
            recovered = int(r.get(name) or 0)
            if policy == "always":
                assert recovered >= value, f"{name}: acknowledged {value}, recovered {recovered}"
            else:
                # everysec: at most about one second of writes may be lost.
                assert recovered >= value - 20000
            assert recovered <= value + 1  # never more than the one in flight
    finally:
        srv2.cleanup()


def test_write_errors_refuse_writes_keep_reads_and_recover(server_factory) -> None:
    srv = server_factory("--appendfsync", "everysec")
    r = redis.Redis(port=srv.port)
    r.set("a", 1)
    size = aof_path(srv).stat().st_size
    pid = srv.proc.pid
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (size + 10, resource.RLIM_INFINITY))
    try:
        r.set("big", "x" * 100)  # this write cannot reach the disk
        deadline = time.monotonic() + 5
        while r.info("persistence")["aof_last_write_status"] != "err":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        with pytest.raises(redis.ResponseError, match="^MISCONF Errors writing to the AOF file: File too large"):
            r.set("b", 2)
        assert r.get("a") == b"1"  # reads keep working
    finally:
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    deadline = time.monotonic() + 5
    while r.info("persistence")["aof_last_write_status"] != "ok":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert r.set("b", 2) is True
    srv2 = restart(srv)
    try:
        r = redis.Redis(port=srv2.port)
        assert r.mget("a", "big", "b") == [b"1", b"x" * 100, b"2"]
    finally:
        srv2.cleanup()


def test_clients_get_loading_while_the_file_loads(server_factory, tmp_path: Path) -> None:
    path = tmp_path / "appendonly.aof"
    n = 300_000
    with open(path, "wb") as fh:
        fh.write(b"".join(b"*3\r\n$3\r\nSET\r\n$%d\r\nk%d\r\n$1\r\nv\r\n" % (len(str(i)) + 1, i)
                          for i in range(n)))
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "server", "--port", str(port), "--dir", str(tmp_path)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        seen_loading = False
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                conn = RawConnection(port)
            except OSError:
                time.sleep(0.01)
                continue
            conn.send(b"DBSIZE\r\n")
            line = conn.sock.recv(200)
            conn.close()
            if line.startswith(b"-LOADING Redis is loading the dataset in memory"):
                seen_loading = True
            elif line == b":%d\r\n" % n:
                break
            time.sleep(0.01)
        assert seen_loading, "no command was answered with -LOADING while the file loaded"
        assert redis.Redis(port=port).dbsize() == n
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.skipif(not RedisProcess.available(), reason="redis-server is not installed")
def test_the_aof_replays_into_real_redis(server_factory, real_redis) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    r.set("a", 1)
    r.set("ttl", 1, ex=1000)
    r.incrbyfloat("f", "1.5")
    redis.Redis(port=srv.port, db=2).set("in2", "x")
    r.bgrewriteaof()
    time.sleep(0.5)
    r.set("after", 1)
    data = aof_path(srv).read_bytes()
    theirs = redis.Redis(port=real_redis.port)
    theirs.flushall()
    out = subprocess.run(["redis-cli", "-p", str(real_redis.port), "--pipe"], input=data,
                         capture_output=True, timeout=30)
    assert out.returncode == 0, out.stdout + out.stderr
    assert b"errors: 0" in out.stdout
    assert theirs.mget("a", "f", "after") == [b"1", b"1.5", b"1"]
    assert theirs.ttl("ttl") > 900
    assert redis.Redis(port=real_redis.port, db=2).get("in2") == b"x"
    theirs.flushall()
