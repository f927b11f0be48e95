"""Lists in the append-only file: what each command (blocked pops included) logs, restarts after
kill -9, the rewrite (RPUSH batches of 64), and replaying our file into a real Redis."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest
import redis

from tests.helpers import aof_path, call_raw, encode_command, parse_aof, read_reply, restart, wait_blocked
from tests.serverproc import RawConnection, RedisProcess, ServerProcess


def logged(srv: ServerProcess) -> list[list[bytes]]:
    return [c for c in parse_aof(aof_path(srv).read_bytes()) if c[0].upper() != b"SELECT"]


def wait_rewrite(r: redis.Redis, before: int) -> None:
    deadline = time.monotonic() + 30
    while (r.info("persistence")["aof_rewrites"] <= before
           or r.info("persistence")["aof_rewrite_in_progress"]):
        assert time.monotonic() < deadline, "the rewrite did not finish"
        time.sleep(0.05)


def lists_of(r: redis.Redis) -> dict[bytes, list[bytes]]:
    return {k: r.lrange(k, 0, -1) for k in sorted(r.keys()) if r.type(k) == b"list"}


def test_each_command_logs_what_redis_propagates(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    r.rpush("l", "a", "b", "c", "d", "e")
    r.lpushx("nokey", "x")  # nothing changed: nothing logged
    r.lpop("l")
    r.rpop("l", 0)  # nothing popped: nothing logged
    r.execute_command("LMPOP", "2", "nokey", "l", "RIGHT", "COUNT", "10")
    r.rpush("l", "1", "2", "3")
    r.ltrim("l", 0, -1)  # trims nothing: nothing logged
    r.ltrim("l", 1, -1)
    r.lrem("l", 0, "zz")  # removes nothing
    r.linsert("l", "BEFORE", "zz", "q")  # no pivot
    r.linsert("l", "AFTER", "2", "q")
    r.lset("l", 0, "first")
    r.lmove("l", "m", "LEFT", "RIGHT")
    r.rpoplpush("l", "m")
    r.blpop(["l", "m"], 1)
    r.brpoplpush("m", "l", 1)
    r.execute_command("BLMOVE", "l", "m", "LEFT", "LEFT", "1")
    assert r.execute_command("BLMPOP", "1", "1", "m", "LEFT", "COUNT", "5") == \
        [b"m", [b"first", b"3"]]
    assert logged(srv) == [
        [b"RPUSH", b"l", b"a", b"b", b"c", b"d", b"e"],
        [b"LPOP", b"l"],
        [b"RPOP", b"l", b"4"],
        [b"RPUSH", b"l", b"1", b"2", b"3"],
        [b"LTRIM", b"l", b"1", b"-1"],
        [b"LINSERT", b"l", b"AFTER", b"2", b"q"],
        [b"LSET", b"l", b"0", b"first"],
        [b"LMOVE", b"l", b"m", b"LEFT", b"RIGHT"],
        [b"RPOPLPUSH", b"l", b"m"],
        [b"LPOP", b"l"],
        [b"RPOPLPUSH", b"m", b"l"],
        [b"LMOVE", b"l", b"m", b"LEFT", b"LEFT"],
        [b"LPOP", b"m", b"2"],
    ]


def test_woken_pops_log_their_plain_forms(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    conns = [RawConnection(srv.port) for _ in range(4)]
    try:
        conns[0].send(encode_command("BLPOP", "k1", "0"))
        conns[1].send(encode_command("BLMOVE", "k2", "k3", "RIGHT", "LEFT", "0"))
        conns[2].send(encode_command("BRPOPLPUSH", "k3", "k4", "0"))
        conns[3].send(encode_command("BLMPOP", "0", "1", "k5", "RIGHT", "COUNT", "3"))
        wait_blocked(r, 4)
        r.rpush("k1", "a")
        r.rpush("k2", "b")
        r.rpush("k5", "c", "d")
        assert [read_reply(c) for c in conns] == [
            b"*2\r\n$2\r\nk1\r\n$1\r\na\r\n", b"$1\r\nb\r\n", b"$1\r\nb\r\n",
            b"*2\r\n$2\r\nk5\r\n*2\r\n$1\r\nd\r\n$1\r\nc\r\n"]
    finally:
        for c in conns:
            c.close()
    assert logged(srv) == [
        [b"RPUSH", b"k1", b"a"], [b"LPOP", b"k1"],
        [b"RPUSH", b"k2", b"b"], [b"LMOVE", b"k2", b"k3", b"RIGHT", b"LEFT"],
        [b"RPOPLPUSH", b"k3", b"k4"],
        [b"RPUSH", b"k5", b"c", b"d"], [b"RPOP", b"k5", b"2"],
    ]
    assert r.lrange("k4", 0, -1) == [b"b"]


def build_lists(r: redis.Redis) -> None:
    r.rpush("big", *[f"item-{i}" for i in range(1000)])
    r.lpush("big", *[str(i) for i in range(300)])
    r.rpush("huge-element", "x" * 100_000, "small", "y" * 9000)
    r.rpush("short", "a", "b", "c")
    r.linsert("short", "AFTER", "b", "bb")
    r.lrem("big", 5, "item-7")
    r.ltrim("big", 3, -4)
    r.rpush("tmp", "gone")
    r.lpop("tmp")
    r.rpush("bin", b"\x00\r\n\xff", b"")


def test_kill_9_restart_keeps_lists(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    build_lists(r)
    before = lists_of(r)
    os.kill(srv.proc.pid, signal.SIGKILL)
    srv.proc.wait()
    srv2 = restart(srv)
    try:
        assert lists_of(redis.Redis(port=srv2.port)) == before
        assert b"tmp" not in before
    finally:
        srv2.stop()


def test_rewrite_round_trip_in_batches_of_64(server_factory) -> None:
    srv = server_factory()
    r = redis.Redis(port=srv.port)
    build_lists(r)
    before = lists_of(r)
    rewrites = r.info("persistence")["aof_rewrites"]
    assert r.bgrewriteaof()
    wait_rewrite(r, rewrites)
    pushes = [c for c in logged(srv) if c[0] == b"RPUSH"]
    assert pushes and all(len(c) - 2 <= 64 for c in pushes)
    assert sum(len(c) - 2 for c in pushes if c[1] == b"big") == len(before[b"big"])
    assert lists_of(r) == before
    srv2 = restart(srv)
    try:
        assert lists_of(redis.Redis(port=srv2.port)) == before
    finally:
        srv2.stop()


@pytest.mark.skipif(not RedisProcess.available(), reason="redis-server is not installed")
def test_our_aof_replays_into_real_redis(server_factory, real_redis) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    build_lists(r)
    r.blpop(["big"], 1)
    r.execute_command("BLMOVE", "short", "short2", "LEFT", "RIGHT", "1")
    theirs = redis.Redis(port=real_redis.port)
    for label in ("as logged", "after a rewrite"):
        if label == "after a rewrite":
            rewrites = r.info("persistence")["aof_rewrites"]
            r.bgrewriteaof()
            wait_rewrite(r, rewrites)
        theirs.flushall()
        out = subprocess.run(["redis-cli", "-p", str(real_redis.port), "--pipe"],
                             input=aof_path(srv).read_bytes(), capture_output=True, timeout=30)
        assert b"errors: 0" in out.stdout, (label, out.stdout)
        assert lists_of(theirs) == lists_of(r), label
    theirs.flushall()


def test_debug_reload_keeps_lists(server_factory) -> None:
    srv = server_factory()
    r = redis.Redis(port=srv.port)
    build_lists(r)
    before = lists_of(r)
    conn = RawConnection(srv.port)
    try:
        assert call_raw(conn, "DEBUG", "RELOAD") == b"+OK\r\n"
    finally:
        conn.close()
    assert lists_of(r) == before


def test_pipelined_runs_log_every_call(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    conn = RawConnection(srv.port)
    try:
        script = [("RPUSH", "q", "a", "b"), ("RPUSH", "q", "c"), ("rpush", "q", "d"),
                  ("LPOP", "q"), ("LPOP", "q"), ("LPOP", "q"), ("LPOP", "q"), ("LPOP", "q")]
        conn.send(b"".join(encode_command(*c) for c in script))
        assert [read_reply(conn) for _ in script] == [
            b":2\r\n", b":3\r\n", b":4\r\n", b"$1\r\na\r\n", b"$1\r\nb\r\n", b"$1\r\nc\r\n",
            b"$1\r\nd\r\n", b"$-1\r\n"]
    finally:
        conn.close()
    assert logged(srv) == [[b"RPUSH", b"q", b"a", b"b"], [b"RPUSH", b"q", b"c"],
                           [b"rpush", b"q", b"d"], [b"LPOP", b"q"], [b"LPOP", b"q"],
                           [b"LPOP", b"q"], [b"LPOP", b"q"]]
