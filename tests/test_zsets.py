"""Sorted sets: RESP3 reply shapes, Redis 7.4's score printing, blocking pops, propagation,
persistence, the command table."""

from __future__ import annotations

import os
import random
import signal
import threading
import time

import pytest
import redis

from tests.helpers import (
    aof_path,
    call_raw,
    err,
    parse_aof,
    plain,
    restart,
    run_pipelined,
    wait_blocked,
)
from tests.serverproc import RawConnection


def run_resp3(port: int, script: list[tuple]) -> list[bytes]:
    """Each command's raw reply on a flushed server, over a HELLO 3 connection."""
    conn = RawConnection(port)
    try:
        call_raw(conn, "HELLO", "3")
        call_raw(conn, "FLUSHALL")
        return [call_raw(conn, *cmd) for cmd in script]
    finally:
        conn.close()


RESP3_SCRIPT = [
    ("ZADD", "z", "1", "a", "2", "b", "3", "c", "inf", "d"),
    ("ZRANGE", "z", "0", "-1", "WITHSCORES"), ("ZRANGE", "z", "0", "-1"),
    ("ZRANGEBYSCORE", "z", "-inf", "inf", "WITHSCORES"), ("ZREVRANGE", "z", "0", "1", "WITHSCORES"),
    ("ZSCORE", "z", "a"), ("ZSCORE", "z", "d"), ("ZSCORE", "z", "nope"), ("ZSCORE", "nokey", "a"),
    ("ZMSCORE", "z", "a", "nope"), ("ZINCRBY", "z", "0.5", "a"), ("ZADD", "z", "INCR", "1", "b"),
    ("ZADD", "z", "NX", "INCR", "1", "b"), ("ZRANK", "z", "nope"),
    ("ZPOPMIN", "z"), ("ZPOPMIN", "z", "1"), ("ZPOPMAX", "z", "5"), ("ZPOPMIN", "nokey"),
    ("ZADD", "a", "1", "x", "2", "y"), ("ZADD", "b", "1", "y"),
    ("ZUNION", "2", "a", "b", "WITHSCORES"), ("ZINTER", "2", "a", "b", "WITHSCORES"),
    ("ZDIFF", "2", "a", "b", "WITHSCORES"), ("ZMPOP", "1", "a", "MIN"), ("ZMPOP", "1", "nokey", "MIN"),
    ("ZRANDMEMBER", "b", "1", "WITHSCORES"), ("ZRANDMEMBER", "nokey"), ("ZSCAN", "b", "0"),
]


def test_resp3_replies_as_redis(server, real_redis) -> None:
    ours = run_resp3(server.port, RESP3_SCRIPT)
    theirs = run_resp3(real_redis.port, RESP3_SCRIPT)
    for cmd, mine, ref in zip(RESP3_SCRIPT, ours, theirs, strict=True):
        assert mine == ref, f"{cmd!r}: rivulet {mine!r} != redis {ref!r}"


def test_resp3_shapes(server) -> None:
    replies = run_resp3(server.port, [
        ("ZADD", "z", "1.5", "a", "2", "b"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
        ("ZPOPMIN", "z"), ("ZPOPMAX", "z", "1"), ("ZADD", "z", "-0.25", "c"),
        ("ZRANK", "z", "c", "WITHSCORE"), ("ZRANK", "z", "x", "WITHSCORE"), ("ZSCORE", "z", "x"),
    ])
    assert replies[1] == b"*2\r\n*2\r\n$1\r\na\r\n,1.5\r\n*2\r\n$1\r\nb\r\n,2\r\n"
    assert replies[2] == b"*2\r\n$1\r\na\r\n,1.5\r\n"  # no count: one flat pair
    assert replies[3] == b"*1\r\n*2\r\n$1\r\nb\r\n,2\r\n"  # a count: nested pairs
    # ZRANK WITHSCORE is Redis 7.2's (7.0 has no such option): [rank, score], null array if none.
    assert replies[5] == b"*2\r\n:0\r\n,-0.25\r\n"
    assert replies[6] == b"_\r\n"
    assert replies[7] == b"_\r\n"


def test_zrank_withscore_resp2(raw_r: redis.Redis) -> None:
    raw_r.zadd("z", {"a": 1, "b": 2.5})
    assert raw_r.execute_command("ZRANK", "z", "b", "WITHSCORE") == [1, b"2.5"]
    assert raw_r.execute_command("ZREVRANK", "z", "b", "withscore") == [0, b"2.5"]
    assert raw_r.execute_command("ZRANK", "z", "x", "WITHSCORE") is None
    assert raw_r.execute_command("ZRANK", "nokey", "x", "WITHSCORE") is None
    assert err(raw_r, "ZRANK", "z", "a", "foo") == "syntax error"
    assert err(raw_r, "ZRANK", "z", "a", "WITHSCORE", "x") == \
        "wrong number of arguments for 'zrank' command"


# --- Redis 7.4's score printing ------------------------------------------------------------------

D2STRING = [
    ("0.1", b"0.1"), ("0.30000000000000004", b"0.30000000000000004"), ("1e20", b"1e+20"),
    ("1.5e-7", b"1.5e-7"), ("123456789.125", b"123456789.125"), ("-0.000123", b"-0.000123"),
    ("4611686018427387904", b"4611686018427387904"), ("9223372036854775807", b"9223372036854776000"),
    ("1e300", b"1e+300"), ("5e-324", b"5e-324"), ("2.5e-300", b"2.5e-300"), ("1e-6", b"0.000001"),
    ("1e-7", b"1e-7"), ("123e18", b"1.23e+20"), ("0x1p-2", b"0.25"), ("3.0", b"3"),
    # Grisu2 (fpconv) is not always shortest or closest: these are what Redis 7.4 prints.
    ("-47.7629956", b"-47.762995600000004"), ("-577080938965099.2", b"-577080938965099.3"),
    ("820833909252165.8", b"820833909252165.7"), ("4.584679222037044e-145", b"4.5846792220370444e-145"),
    ("-3.2908851379273117e-220", b"-3.2908851379273116e-220"),
]


@pytest.mark.parametrize(("arg", "printed"), D2STRING)
def test_scores_print_as_redis_7_4(raw_r: redis.Redis, arg: str, printed: bytes) -> None:
    raw_r.execute_command("ZADD", "z", arg, "m")
    assert raw_r.execute_command("ZSCORE", "z", "m") == printed
    assert float(printed) == float.fromhex(arg) if arg.startswith("0x") else float(arg)


def test_scores_print_differently_from_7_0_but_read_back_equal(server, real_redis) -> None:
    # Redis 7.0 prints %.17g (0.10000000000000001), 7.4 Grisu2 round-trip digits (0.1): same doubles.
    script = [("ZADD", "z", "0.1", "a", "0.2", "b", "1e-7", "c", "2.675", "d"),
              ("ZINCRBY", "z", "0.2", "a"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
              ("ZSCORE", "z", "d"), ("ZUNION", "1", "z", "WEIGHTS", "0.3", "WITHSCORES")]
    with (redis.Redis(port=server.port, protocol=2) as ours,
          redis.Redis(port=real_redis.port, protocol=2) as theirs):
        for c in (ours, theirs):
            plain(c)
            c.flushall()
        for cmd in script:
            mine, ref = ours.execute_command(*cmd), theirs.execute_command(*cmd)
            if isinstance(mine, list):
                assert [float(x) if i % 2 else x for i, x in enumerate(mine)] == \
                    [float(x) if i % 2 else x for i, x in enumerate(ref)]
            else:
                assert float(mine) == float(ref)
        assert ours.execute_command("ZSCORE", "z", "a") == b"0.30000000000000004"
        assert ours.execute_command("ZSCORE", "z", "b") == b"0.2"


def test_score_parsing_edges(raw_r: redis.Redis) -> None:
    for bad in ("nan", "NaN", " 1", "1 ", "", "1e400", "-1e400", "1e-400", "1x", "0x", "--1", "1_0"):
        assert err(raw_r, "ZADD", "z", bad, "m") == "value is not a valid float", bad
    for good, value in (("inf", b"inf"), ("-Infinity", b"-inf"), ("+3", b"3"), ("0x10", b"16"),
                        (".5", b"0.5"), ("5.", b"5"), ("4e-320", b"4e-320"), ("1E2", b"100")):
        raw_r.execute_command("ZADD", "z", good, "m")
        assert raw_r.execute_command("ZSCORE", "z", "m") == value, good
    raw_r.zadd("z", {"m": float("inf")})
    assert err(raw_r, "ZINCRBY", "z", "-inf", "m") == "resulting score is not a number (NaN)"
    assert raw_r.execute_command("ZSCORE", "z", "m") == b"inf"
    # Range bounds are read as strtod over a C string: spaces first, empty, overflow all pass.
    assert raw_r.execute_command("ZCOUNT", "z", " -inf", "1e999") == 1
    assert raw_r.execute_command("ZCOUNT", "z", "", "(") == 0
    assert err(raw_r, "ZCOUNT", "z", "1 ", "2") == "min or max is not a float"
    assert err(raw_r, "ZRANGEBYSCORE", "z", "(nan", "2") == "min or max is not a float"


# --- blocking ------------------------------------------------------------------------------------


def _bg(port: int, *argv, protocol: int = 2) -> tuple[threading.Thread, list]:
    out: list = []

    def run() -> None:
        with redis.Redis(port=port, protocol=protocol) as c:
            plain(c)
            out.append(c.execute_command(*argv))

    t = threading.Thread(target=run)
    t.start()
    return t, out


def test_bzpopmin_blocks_until_zadd(server, raw_r: redis.Redis) -> None:
    t, out = _bg(server.port, "BZPOPMIN", "k1", "k2", "0")
    wait_blocked(raw_r, 1)
    raw_r.zadd("k2", {"a": 2, "b": 1})
    t.join(5)
    assert out == [[b"k2", b"b", b"1"]]
    assert raw_r.zrange("k2", 0, -1) == [b"a"]


def test_bzpopmax_first_waiter_first_and_timeout(server, raw_r: redis.Redis) -> None:
    t1, out1 = _bg(server.port, "BZPOPMAX", "k", "0")
    wait_blocked(raw_r, 1)
    t2, out2 = _bg(server.port, "BZPOPMAX", "k", "0.2")
    wait_blocked(raw_r, 2)
    raw_r.zadd("k", {"a": 1, "b": 2})
    t1.join(5)
    t2.join(5)
    assert out1 == [[b"k", b"b", b"2"]]
    assert out2 == [[b"k", b"a", b"1"]]
    assert raw_r.exists("k") == 0
    start = time.monotonic()
    t3, out3 = _bg(server.port, "BZPOPMAX", "k", "0.1")
    t3.join(5)
    assert out3 == [None]
    assert time.monotonic() - start >= 0.09


def test_bzmpop_blocks_and_serves_count(server, raw_r: redis.Redis) -> None:
    t, out = _bg(server.port, "BZMPOP", "0", "2", "a", "b", "MAX", "COUNT", "2", protocol=3)
    wait_blocked(raw_r, 1)
    raw_r.zadd("b", {"x": 1, "y": 2, "z": 3})
    t.join(5)
    assert out == [[b"b", [[b"z", 3.0], [b"y", 2.0]]]]
    assert raw_r.execute_command("BZMPOP", "0.01", "1", "a", "MIN") is None
    assert err(raw_r, "BZMPOP", "-1", "1", "a", "MIN") == "timeout is negative"
    assert err(raw_r, "BZMPOP", "x", "1", "a", "MIN") == "timeout is not a float or out of range"
    assert err(raw_r, "BZMPOP", "0", "0", "a", "MIN") == "numkeys should be greater than 0"


def test_bzpop_wrong_type_and_multi(server, raw_r: redis.Redis) -> None:
    raw_r.set("s", "v")
    assert err(raw_r, "BZPOPMIN", "nokey", "s", "0") .startswith("WRONGTYPE")
    pipe = raw_r.pipeline(transaction=True)
    pipe.execute_command("BZPOPMIN", "nokey", "0")
    pipe.execute_command("BZMPOP", "0", "1", "nokey", "MIN")
    assert pipe.execute() == [None, None]


def test_bzpop_client_unblock(server, raw_r: redis.Redis) -> None:
    t, out = _bg(server.port, "BZPOPMIN", "k", "0")
    wait_blocked(raw_r, 1)
    ids = [c["id"] for c in redis.Redis(port=server.port).client_list() if c["cmd"] == "bzpopmin"]
    assert raw_r.execute_command("CLIENT", "UNBLOCK", ids[0]) == 1
    t.join(5)
    assert out == [None]


def test_a_set_key_written_by_zunionstore_wakes_waiters(server, raw_r: redis.Redis) -> None:
    raw_r.zadd("src", {"m": 7})
    t, out = _bg(server.port, "BZPOPMIN", "dst", "0")
    wait_blocked(raw_r, 1)
    raw_r.execute_command("ZUNIONSTORE", "dst", "1", "src")
    t.join(5)
    assert out == [[b"dst", b"m", b"7"]]


# --- propagation and persistence -----------------------------------------------------------------


def test_propagation(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    try:
        r = plain(redis.Redis(port=srv.port))
        r.execute_command("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d")
        r.execute_command("ZADD", "z", "NX", "5", "a")  # no change: not logged
        r.execute_command("ZMPOP", "1", "z", "MAX", "COUNT", "10")
        r.execute_command("ZADD", "w", "1", "a")
        t, out = _bg(srv.port, "BZPOPMIN", "q", "0")
        wait_blocked(r, 1)
        r.execute_command("ZADD", "q", "1", "x", "2", "y")
        t.join(5)
        r.execute_command("BZPOPMAX", "q", "0")
        r.execute_command("ZREM", "w", "nope")
        data = aof_path(srv).read_bytes()
        assert b"NX" not in data
        assert b"ZMPOP" not in data and b"BZPOP" not in data
        assert b"*3\r\n$7\r\nZPOPMAX\r\n$1\r\nz\r\n$1\r\n4\r\n" in data
        assert b"*2\r\n$7\r\nZPOPMIN\r\n$1\r\nq\r\n" in data
        assert b"*2\r\n$7\r\nZPOPMAX\r\n$1\r\nq\r\n" in data
        assert b"nope" not in data
    finally:
        srv.cleanup()


def _state(r: redis.Redis) -> dict:
    return {k: r.execute_command("ZRANGE", k, "0", "-1", "WITHSCORES") for k in sorted(r.keys())}


def _fill(r: redis.Redis) -> None:
    pipe = r.pipeline(transaction=False)
    for i in range(300):
        pipe.zadd("big", {f"m{i}": i / 7})
    pipe.zadd("small", {"a": 0.1, "b": float("-inf"), "c": -0.0, "d": 1e300})
    pipe.zincrby("small", 0.2, "a")
    pipe.zrem("big", "m5", "m6")
    pipe.zremrangebyscore("big", 10, 20)
    pipe.execute_command("ZUNIONSTORE", "u", "2", "big", "small", "WEIGHTS", "2", "0.5")
    pipe.execute_command("ZRANGESTORE", "rs", "big", "0", "9")
    pipe.zpopmin("big", 3)
    pipe.execute()


def test_kill_9_restart_keeps_sorted_sets(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    r = plain(redis.Redis(port=srv.port))
    _fill(r)
    before = _state(r)
    os.kill(srv.proc.pid, signal.SIGKILL)
    srv.proc.wait()
    srv2 = restart(srv)
    try:
        assert _state(plain(redis.Redis(port=srv2.port))) == before
    finally:
        srv2.cleanup()


def test_bgrewriteaof_round_trip(server_factory, real_redis) -> None:
    srv = server_factory()
    r = plain(redis.Redis(port=srv.port))
    _fill(r)
    before = _state(r)
    assert r.execute_command("TYPE", "big") == b"zset"
    r.execute_command("BGREWRITEAOF")
    deadline = time.monotonic() + 30
    info = redis.Redis(port=srv.port).info
    while info("persistence")["aof_rewrite_in_progress"] or info("persistence")["aof_rewrites"] < 1:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    data = aof_path(srv).read_bytes()
    # Batches of 64 pairs, as Redis's AOF_REWRITE_ITEMS_PER_CMD, then the rest.
    size = r.zcard("big")
    assert size == 224
    assert data.count(b"*130\r\n$4\r\nZADD\r\n$3\r\nbig\r\n") == 3
    assert data.count(b"*66\r\n$4\r\nZADD\r\n$3\r\nbig\r\n") == 1
    srv2 = restart(srv)
    try:
        assert _state(plain(redis.Redis(port=srv2.port))) == before
    finally:
        srv2.cleanup()


# --- pipelined ZADDs to one key (one lookup and change signal per run) -----------------------------


def test_pipelined_zadds_match_redis(server, real_redis) -> None:
    # Runs that create the key, add, move and leave members, convert listpack -> skiplist past
    # 128 members and on a long member, broken by options, other spellings, other keys and
    # errors (a bad score, an odd count, the wrong type), which the single path answers.
    script: list[tuple] = []
    for i in range(400):
        script.append(("ZADD", "z", i % 150, f"m{i % 170}"))
        if i % 9 == 0:
            script.append(("ZADD", "z", i, f"a{i}", -i, f"b{i}", i, f"a{i}"))
        if i % 61 == 3:
            script += [("ZADD", "z", "x", "m1"), ("ZADD", "z", "1"), ("ZADD", "z", "NX", "5", "m1"),
                       ("zadd", "z", "7", "m2"), ("ZADD", "other", "1", "o"),
                       ("ZADD", "z", "CH", "2", "m3"), ("ZADD", "z", "nan", "m4"),
                       ("OBJECT", "ENCODING", "z"), ("ZCARD", "z")]
        if i == 100:
            script.append(("ZADD", "z", 1, "long" * 20))
    script += [("ZADD", "small", 1, "a")] * 3 + [("ZADD", "small", "-0", "z"), ("ZADD", "small", "0.5", "h")]
    script += [("SET", "s", "v")] + [("ZADD", "s", 1, "a")] * 3
    script += [("ZRANGE", "z", "0", "-1", "WITHSCORES"), ("OBJECT", "ENCODING", "z"),
               ("ZRANGE", "small", "0", "-1", "WITHSCORES"), ("OBJECT", "ENCODING", "small"),
               ("ZRANGE", "other", "0", "-1", "WITHSCORES"), ("GET", "s")]
    ours = run_pipelined(server.port, script)
    theirs = run_pipelined(real_redis.port, script)
    for cmd, mine, ref in zip(script, ours, theirs, strict=True):
        assert mine == ref, f"{cmd!r}: rivulet {mine!r} != redis {ref!r}"


def test_pipelined_zadds_on_a_large_set_match_redis(server, real_redis) -> None:
    # A set of a few thousand members, many of them on equal scores, whose scores keep moving:
    # the order's blocks split, shrink, merge and lose their last pair, members move within a
    # block and across blocks. Pipelined runs without options (the run handler) between calls
    # with NX / XX / GT / LT / CH / INCR, removals, pops and rank deletions (the single path),
    # and reads of ranks and ranges; scores are halves, which Redis 7.0 and 7.4 print alike.
    rng = random.Random(7)
    script: list[tuple] = [("ZADD", "z", *[x for i in range(300) for x in (i // 3, f"m{i}")])]
    options = [("NX",), ("XX",), ("GT",), ("LT",), ("CH",), ("XX", "CH"), ("GT", "CH"),
               ("LT", "CH"), ("NX", "CH"), ("INCR",), ("XX", "INCR"), ("GT", "INCR")]

    def score() -> str:
        return str(rng.choice([rng.randrange(240) / 2, rng.randrange(5) - 2.5]))

    for step in range(6000):
        roll = rng.random()
        member = f"m{rng.randrange(4000)}"
        if roll < 0.75:
            script.append(("ZADD", "z", score(), member))
        elif roll < 0.8:
            script.append(("ZADD", "z", score(), member, score(), f"m{rng.randrange(4000)}"))
        elif roll < 0.88:
            script.append(("ZADD", "z", *rng.choice(options), score(), member))
        elif roll < 0.93:
            script.append(("ZREM", "z", member, f"m{rng.randrange(4000)}"))
        elif roll < 0.95:
            script.append((rng.choice(["ZPOPMIN", "ZPOPMAX"]), "z", str(rng.randrange(1, 4))))
        elif roll < 0.96:
            start = rng.randrange(3000)
            script.append(("ZREMRANGEBYRANK", "z", str(start), str(start + rng.randrange(80))))
        elif roll < 0.98:
            script += [("ZRANK", "z", member), ("ZSCORE", "z", member), ("ZCARD", "z")]
        else:
            start = rng.randrange(3000)
            script.append(("ZRANGE", "z", str(start), str(start + 20), "WITHSCORES"))
        if step % 1000 == 999:
            script += [("ZRANGE", "z", "0", "-1", "WITHSCORES"), ("OBJECT", "ENCODING", "z")]
    script.append(("ZRANGE", "z", "0", "-1", "WITHSCORES"))
    ours = run_pipelined(server.port, script)
    theirs = run_pipelined(real_redis.port, script)
    for cmd, mine, ref in zip(script, ours, theirs, strict=True):
        assert mine == ref, f"{cmd!r}: rivulet {mine!r} != redis {ref!r}"
    assert ours[-1].count(b"\r\n") > 2000  # the set stayed large


def test_zadd_counts_one_change_per_member_as_redis(server, real_redis) -> None:
    # Alone and pipelined: Redis counts the members added or moved, not the calls.
    script = [("ZADD", "z", 1, "a", 2, "b"), ("ZADD", "z", 1, "a"), ("ZADD", "z", 3, "a", 4, "c"),
              ("ZADD", "z", 3, "a", 3, "a", 5, "a")]
    changes = []
    for port in (server.port, real_redis.port):
        r = redis.Redis(port=port)
        r.flushall()
        before = r.info("persistence")["rdb_changes_since_last_save"]
        assert run_pipelined(port, script, flush=False) == [b":2\r\n", b":0\r\n", b":1\r\n", b":0\r\n"]
        r.zadd("w", {"x": 1, "y": 2})
        r.zadd("w", {"x": 1})
        r.zadd("w", {"x": 5, "z": 1})
        changes.append(r.info("persistence")["rdb_changes_since_last_save"] - before)
    assert changes[0] == changes[1] == 9


def test_pipelined_zadds_log_each_changing_call(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    script = [("ZADD", "z", 1, "a"), ("ZADD", "z", 1, "a"), ("ZADD", "z", 2, "a", 1, "b"),
              ("ZADD", "z", 2, "a"), ("ZADD", "z", 5, "c")]
    try:
        assert run_pipelined(srv.port, script, flush=False) == [
            b":1\r\n", b":0\r\n", b":1\r\n", b":0\r\n", b":1\r\n"]
        logged = [c for c in parse_aof(aof_path(srv).read_bytes()) if c[0].upper() != b"SELECT"]
        assert logged == [[b"ZADD", b"z", b"1", b"a"], [b"ZADD", b"z", b"2", b"a", b"1", b"b"],
                          [b"ZADD", b"z", b"5", b"c"]]
        srv2 = restart(srv)
        try:
            r = plain(redis.Redis(port=srv2.port))
            pairs = r.execute_command("ZRANGE", "z", "0", "-1", "WITHSCORES")
            assert [tuple(pair) for pair in pairs] == [(b"b", 1.0), (b"a", 2.0), (b"c", 5.0)]
        finally:
            srv2.cleanup()
    finally:
        srv.cleanup()


# --- the command table ---------------------------------------------------------------------------

ZSET_COMMANDS = """zadd zincrby zrem zcard zcount zlexcount zscore zmscore zrank zrevrank zrange
zrangestore zrangebyscore zrevrangebyscore zrangebylex zrevrangebylex zrevrange zremrangebyrank
zremrangebyscore zremrangebylex zpopmin zpopmax zmpop zrandmember zunion zinter zdiff zunionstore
zinterstore zdiffstore zintercard zscan bzpopmin bzpopmax bzmpop""".split()


@pytest.mark.parametrize("name", ZSET_COMMANDS)
def test_command_info_as_redis(server, real_redis, name: str) -> None:
    with redis.Redis(port=server.port) as ours, redis.Redis(port=real_redis.port) as theirs:
        mine = plain(ours).execute_command("COMMAND", "INFO", name)[0][:7]
        ref = plain(theirs).execute_command("COMMAND", "INFO", name)[0][:7]
    if name in ("zrank", "zrevrank"):
        # Redis 7.2 added WITHSCORE: arity 3 in 7.0, -3 since.
        assert mine[1] == -3 and ref[1] == 3
        mine[1] = ref[1]
    if name in ("bzpopmin", "bzpopmax"):
        # 7.4's command table no longer marks the blocking pops noscript (7.0's did).
        assert b"noscript" not in mine[2] and b"noscript" in ref[2]
        ref[2] = [f for f in ref[2] if f != b"noscript"]
    assert mine == ref


def test_command_docs_history(raw_r: redis.Redis) -> None:
    docs = raw_r.execute_command("COMMAND", "DOCS", "zadd")
    flat = docs[1]
    doc = dict(zip(flat[::2], flat[1::2], strict=True))
    assert doc[b"since"] == b"1.2.0"
    assert [b"6.2.0", b"Added the `GT` and `LT` options."] in doc[b"history"]


# --- keyspace integration and larger sets --------------------------------------------------------


def test_type_copy_scan_type(raw_r: redis.Redis) -> None:
    raw_r.zadd("z", {"a": 1, "b": 2})
    assert raw_r.type("z") == b"zset"
    assert raw_r.execute_command("COPY", "z", "c") == 1
    raw_r.zadd("z", {"a": 5})
    raw_r.zrem("c", "b")
    assert raw_r.zrange("z", 0, -1, withscores=True) == [b"b", b"2", b"a", b"5"]
    assert raw_r.zrange("c", 0, -1, withscores=True) == [b"a", b"1"]
    raw_r.set("s", "v")
    assert sorted(raw_r.execute_command("SCAN", "0", "TYPE", "zset", "COUNT", "100")[1]) == \
        [b"c", b"z"]


def test_large_set_ranges_ranks_and_scan(raw_r: redis.Redis) -> None:
    raw_r.config_set("zset-max-listpack-entries", 16)
    try:
        pipe = raw_r.pipeline(transaction=False)
        for i in range(2000):
            pipe.zadd("z", {f"m{i:04d}": i % 100})
        pipe.execute()
        expected = sorted((i % 100, f"m{i:04d}".encode()) for i in range(2000))
        members = [m for _s, m in expected]
        assert raw_r.zrange("z", 0, -1) == members
        assert raw_r.zrange("z", 100, 109) == members[100:110]
        assert raw_r.zrevrange("z", 0, 4) == members[::-1][:5]
        assert raw_r.zrank("z", members[1234]) == 1234
        assert raw_r.zrevrank("z", members[1234]) == 2000 - 1 - 1234
        assert raw_r.zcount("z", 10, "(20") == 200
        assert raw_r.zrangebyscore("z", 50, 50, start=3, num=2) == members[50 * 20 + 3:50 * 20 + 5]
        # ZSCAN of a skiplist-sized set: every member exactly once, whatever the COUNT.
        seen: list[bytes] = []
        cursor = b"0"
        while True:
            cursor, chunk = raw_r.execute_command("ZSCAN", "z", cursor, "COUNT", "37")
            seen += chunk[::2]
            if cursor == b"0":
                break
        assert sorted(seen) == sorted(members)
        assert raw_r.zremrangebyrank("z", 0, 999) == 1000
        assert raw_r.zcard("z") == 1000
        assert raw_r.zrange("z", 0, 0) == [members[1000]]
    finally:
        raw_r.config_set("zset-max-listpack-entries", 128)


def test_zrandmember_distinct_and_repeated(raw_r: redis.Redis) -> None:
    raw_r.zadd("z", {f"m{i}": i for i in range(50)})
    picked = raw_r.execute_command("ZRANDMEMBER", "z", "20")
    assert len(picked) == 20 and len(set(picked)) == 20
    assert sorted(raw_r.execute_command("ZRANDMEMBER", "z", "80")) == \
        sorted(f"m{i}".encode() for i in range(50))
    repeated = raw_r.execute_command("ZRANDMEMBER", "z", "-200", "WITHSCORES")
    assert len(repeated) == 400
    for member, score in zip(repeated[::2], repeated[1::2], strict=True):
        assert int(member[1:]) == int(score)
    assert raw_r.execute_command("ZRANDMEMBER", "z") in {f"m{i}".encode() for i in range(50)}


def test_watch_sees_sorted_set_writes(raw_r: redis.Redis, server) -> None:
    raw_r.zadd("z", {"a": 1})
    with redis.Redis(port=server.port) as other:
        pipe = raw_r.pipeline(transaction=True)
        pipe.watch("z")
        other.zadd("z", {"a": 1})  # no change: the transaction still runs
        pipe.multi()
        pipe.zscore("z", "a")
        assert pipe.execute() == [b"1"]
        pipe = raw_r.pipeline(transaction=True)
        pipe.watch("z")
        other.zincrby("z", 1, "a")
        pipe.multi()
        pipe.zscore("z", "a")
        with pytest.raises(redis.WatchError):
            pipe.execute()


def test_zscan_while_the_set_changes(raw_r: redis.Redis) -> None:
    raw_r.config_set("zset-max-listpack-entries", 8)
    try:
        raw_r.zadd("z", {f"keep{i}": i for i in range(500)})
        seen: list[bytes] = []
        cursor = b"0"
        step = 0
        while True:
            cursor, chunk = raw_r.execute_command("ZSCAN", "z", cursor, "COUNT", "20")
            seen += chunk[::2]
            raw_r.zadd("z", {f"new{step}": step})
            raw_r.zrem("z", f"new{step - 3}")
            step += 1
            if cursor == b"0":
                break
        kept = [m for m in seen if m.startswith(b"keep")]
        assert sorted(kept) == sorted(f"keep{i}".encode() for i in range(500))
    finally:
        raw_r.config_set("zset-max-listpack-entries", 128)


def test_zscan_reads_its_options_after_the_key(raw_r: redis.Redis) -> None:
    # As Redis 7.4 (zscanCommand, scanGenericCommand): the key is looked up first, so a missing
    # key answers the empty scan whatever the options, and NOVALUES has HSCAN's own error.
    assert raw_r.execute_command("ZSCAN", "nokey", "0", "COUNT", "9223372036854775808") == [b"0", []]
    assert raw_r.execute_command("ZSCAN", "nokey", "0", "NOVALUES") == [b"0", []]
    raw_r.set("str", "v")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        raw_r.execute_command("ZSCAN", "str", "0", "COUNT", "x")
    raw_r.zadd("z", {"a": 1})
    with pytest.raises(redis.ResponseError, match="^NOVALUES option can only be used in HSCAN$"):
        raw_r.execute_command("ZSCAN", "z", "0", "NOVALUES")
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        raw_r.execute_command("ZSCAN", "z", "0", "COUNT", "9223372036854775808")
