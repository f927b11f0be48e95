"""List commands compared byte for byte with a real Redis (RESP2 and RESP3), plus the replies
Redis 7.4 gives where the installed Redis 7.0 differs."""

from __future__ import annotations

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import assert_same_as_redis, call_raw, encode_command, err, read_reply
from tests.serverproc import RawConnection

LIST_COMMANDS = ["lpush", "rpush", "lpushx", "rpushx", "lpop", "rpop", "llen", "lrange", "lindex",
                 "lset", "linsert", "lrem", "ltrim", "lpos", "lmove", "rpoplpush", "lmpop",
                 "blpop", "brpop", "blmove", "brpoplpush", "blmpop"]


def run_script3(port: int, script: list[tuple]) -> list[bytes]:
    """As helpers.run_script, on a RESP3 connection."""
    conn = RawConnection(port)
    try:
        call_raw(conn, "HELLO", "3")
        call_raw(conn, "FLUSHALL")
        return [call_raw(conn, *cmd) for cmd in script]
    finally:
        conn.close()


def assert_same_resp3(server, real_redis, script: list[tuple]) -> None:
    ours = run_script3(server.port, script)
    theirs = run_script3(real_redis.port, script)
    for cmd, mine, ref in zip(script, ours, theirs, strict=True):
        assert mine == ref, f"{cmd!r}: rivulet {mine!r} != redis {ref!r}"


def both(server, real_redis, script: list[tuple]) -> None:
    assert_same_as_redis(server, real_redis, script)
    assert_same_resp3(server, real_redis, script)


PUSH_POP = [
    ("LPUSH", "l", "a"), ("LPUSH", "l", "b", "c", "d"), ("RPUSH", "l", "e", "f"),
    ("LRANGE", "l", "0", "-1"), ("LLEN", "l"), ("LPUSHX", "nokey", "x"), ("RPUSHX", "nokey", "x"),
    ("EXISTS", "nokey"), ("LPUSHX", "l", "y", "z"), ("RPUSHX", "l", "w"), ("LRANGE", "l", "0", "-1"),
    ("LPOP", "l"), ("RPOP", "l"), ("LPOP", "l", "2"), ("RPOP", "l", "2"), ("LPOP", "l", "0"),
    ("LPOP", "l", "-1"), ("LPOP", "l", "abc"), ("LPOP", "l", "1", "2"), ("RPOP", "l", "1", "2"),
    ("LPOP", "nokey"), ("LPOP", "nokey", "2"), ("RPOP", "nokey", "0"), ("LPOP", "nokey", "x"),
    ("LPOP", "l", "100"), ("EXISTS", "l"), ("LLEN", "l"), ("RPUSH", "l", "1", "2", "3"),
    ("RPOP", "l", "100"), ("EXISTS", "l"), ("SET", "s", "v"), ("LPUSH", "s", "x"),
    ("LPOP", "s"), ("LPOP", "s", "0"), ("LLEN", "s"), ("LPUSHX", "s", "x"), ("RPOP", "s", "2"),
    ("LPUSH", "l"), ("RPUSH", "l"), ("LPOP",), ("LLEN", "l", "x"),
    ("RPUSH", "n", "12", "-5", "9223372036854775807", "9223372036854775808", "007", "-0", ""),
    ("LRANGE", "n", "0", "-1"), ("LPOP", "n", "9223372036854775807"),
]

RANGES = [
    ("RPUSH", "l", *[f"e{i}" for i in range(10)]),
    ("LRANGE", "l", "0", "0"), ("LRANGE", "l", "-3", "-1"), ("LRANGE", "l", "5", "2"),
    ("LRANGE", "l", "-100", "100"), ("LRANGE", "l", "10", "20"), ("LRANGE", "l", "-1", "-2"),
    ("LRANGE", "l", "x", "1"), ("LRANGE", "l", "1", "1.5"), ("LRANGE", "nokey", "0", "-1"),
    ("LRANGE", "nokey", "x", "y"), ("LINDEX", "l", "0"), ("LINDEX", "l", "-1"),
    ("LINDEX", "l", "9"), ("LINDEX", "l", "10"), ("LINDEX", "l", "-11"), ("LINDEX", "l", "x"),
    ("LINDEX", "nokey", "x"), ("LINDEX", "nokey", "0"),
    ("LSET", "l", "0", "first"), ("LSET", "l", "-1", "last"), ("LSET", "l", "10", "x"),
    ("LSET", "l", "-11", "x"), ("LSET", "l", "x", "y"), ("LSET", "nokey", "0", "x"),
    ("LSET", "nokey", "x", "y"), ("LRANGE", "l", "0", "-1"),
    ("LTRIM", "l", "1", "-2"), ("LRANGE", "l", "0", "-1"), ("LTRIM", "l", "0", "-1"),
    ("LTRIM", "l", "-3", "100"), ("LRANGE", "l", "0", "-1"), ("LTRIM", "l", "x", "1"),
    ("LTRIM", "nokey", "0", "1"), ("LTRIM", "l", "5", "1"), ("EXISTS", "l"),
    ("SET", "s", "v"), ("LRANGE", "s", "0", "1"), ("LINDEX", "s", "0"), ("LSET", "s", "0", "x"),
    ("LTRIM", "s", "0", "1"), ("LLEN", "s"), ("LINDEX", "s", "x"),
]

INSERT_REM = [
    ("RPUSH", "l", "a", "b", "a", "c", "a", "d"),
    ("LINSERT", "l", "BEFORE", "a", "x"), ("LINSERT", "l", "after", "a", "y"),
    ("LINSERT", "l", "after", "zz", "y"), ("LINSERT", "l", "middle", "a", "y"),
    ("LINSERT", "nokey", "before", "a", "x"), ("LINSERT", "nokey", "bad", "a", "x"),
    ("LRANGE", "l", "0", "-1"), ("LINSERT", "l", "after", "d", "tail"),
    ("LREM", "l", "0", "a"), ("LRANGE", "l", "0", "-1"), ("RPUSH", "l", "a", "b", "a", "b", "a"),
    ("LREM", "l", "2", "b"), ("LREM", "l", "-1", "a"), ("LRANGE", "l", "0", "-1"),
    ("LREM", "l", "x", "a"),
    ("LREM", "nokey", "0", "a"), ("LREM", "nokey", "x", "a"), ("LREM", "l", "0", "nothere"),
    ("LREM", "l", "0", "x"), ("LREM", "l", "0", "y"), ("LREM", "l", "0", "a"),
    ("LREM", "l", "0", "b"), ("LREM", "l", "0", "c"), ("LREM", "l", "0", "d"),
    ("LREM", "l", "0", "tail"), ("EXISTS", "l"),
    ("SET", "s", "v"), ("LINSERT", "s", "before", "a", "b"), ("LREM", "s", "0", "a"),
    ("LREM", "s", "x", "a"),
]

LPOS = [
    ("RPUSH", "l", "a", "b", "c", "1", "2", "3", "c", "c"),
    ("LPOS", "l", "c"), ("LPOS", "l", "c", "RANK", "2"), ("LPOS", "l", "c", "RANK", "-1"),
    ("LPOS", "l", "c", "RANK", "-3"), ("LPOS", "l", "c", "RANK", "-4"),
    ("LPOS", "l", "c", "COUNT", "0"), ("LPOS", "l", "c", "COUNT", "2"),
    ("LPOS", "l", "c", "COUNT", "0", "RANK", "2"), ("LPOS", "l", "c", "COUNT", "0", "RANK", "-2"),
    ("LPOS", "l", "c", "COUNT", "0", "MAXLEN", "7"), ("LPOS", "l", "c", "RANK", "-1",
                                                      "MAXLEN", "1"),
    ("LPOS", "l", "c", "RANK", "-1", "MAXLEN", "2", "COUNT", "0"), ("LPOS", "l", "x"),
    ("LPOS", "l", "x", "COUNT", "1"), ("LPOS", "l", "c", "RANK", "0"),
    ("LPOS", "l", "c", "RANK", "x"),
    ("LPOS", "l", "c", "COUNT", "-1"), ("LPOS", "l", "c", "COUNT", "x"),
    ("LPOS", "l", "c", "MAXLEN", "-1"), ("LPOS", "l", "c", "MAXLEN", "x"),
    ("LPOS", "l", "c", "COUNT"), ("LPOS", "l", "c", "FOO", "1"), ("LPOS", "nokey", "c"),
    ("LPOS", "nokey", "c", "COUNT", "0"), ("LPOS", "nokey", "c", "RANK", "0"),
    ("LPOS", "l", "1"), ("LPOS", "l", "c", "RANK", "9223372036854775807"),
    ("SET", "s", "v"), ("LPOS", "s", "c"), ("LPOS", "s", "c", "RANK", "0"),
]

MOVES = [
    ("RPUSH", "src", "a", "b", "c"), ("LMOVE", "src", "dst", "LEFT", "RIGHT"),
    ("LMOVE", "src", "dst", "right", "left"), ("LRANGE", "dst", "0", "-1"),
    ("RPOPLPUSH", "src", "dst"), ("EXISTS", "src"), ("RPOPLPUSH", "src", "dst"),
    ("LMOVE", "src", "dst", "LEFT", "LEFT"), ("LMOVE", "dst", "dst", "LEFT", "RIGHT"),
    ("LRANGE", "dst", "0", "-1"), ("LMOVE", "dst", "dst", "RIGHT", "LEFT"),
    ("LMOVE", "dst", "x", "UP", "LEFT"), ("LMOVE", "dst", "x", "LEFT", "DOWN"),
    ("LMOVE", "nokey", "x", "UP", "LEFT"),
    ("SET", "s", "v"), ("LMOVE", "dst", "s", "LEFT", "LEFT"), ("LRANGE", "dst", "0", "-1"),
    ("LMOVE", "s", "dst", "LEFT", "LEFT"), ("RPOPLPUSH", "dst", "s"), ("RPOPLPUSH", "s", "dst"),
    ("RPOPLPUSH", "nokey", "s"), ("RPUSH", "one", "x"), ("LMOVE", "one", "one", "LEFT", "LEFT"),
    ("LRANGE", "one", "0", "-1"), ("RPOPLPUSH", "one", "other"), ("EXISTS", "one"),
]

MPOP = [
    ("RPUSH", "a", "1", "2", "3"), ("RPUSH", "b", "x", "y"),
    ("LMPOP", "2", "nokey", "a", "LEFT"), ("LMPOP", "2", "nokey", "a", "RIGHT", "COUNT", "5"),
    ("LMPOP", "3", "nokey", "a", "b", "right", "count", "1"), ("LMPOP", "1", "nokey", "LEFT"),
    ("LMPOP", "0", "a", "LEFT"), ("LMPOP", "-1", "a", "LEFT"), ("LMPOP", "x", "a", "LEFT"),
    ("LMPOP", "2", "a", "LEFT"), ("LMPOP", "1", "a", "MIDDLE"),
    ("LMPOP", "1", "b", "LEFT", "COUNT", "0"), ("LMPOP", "1", "b", "LEFT", "COUNT", "-1"),
    ("LMPOP", "1", "b", "LEFT", "COUNT", "x"), ("LMPOP", "1", "b", "LEFT", "COUNT", "1", "COUNT",
                                                "1"),
    ("LMPOP", "1", "b", "LEFT", "COUNT"), ("LMPOP", "1", "b", "LEFT", "FOO"),
    ("LMPOP", "1", "b", "LEFT", "COUNT", "100"), ("EXISTS", "b"),
    ("SET", "s", "v"), ("LMPOP", "2", "nokey", "s", "LEFT"), ("RPUSH", "c", "z"),
    ("LMPOP", "2", "c", "s", "LEFT"), ("LMPOP", "1", "nokey", "LEFT"),
    ("LMPOP", "9223372036854775807", "a", "LEFT"),
]

NONBLOCKING_BLOCKING = [
    # The blocking forms with something to take answer at once; inside MULTI they never wait.
    ("RPUSH", "l", "a", "b", "c", "d"), ("BLPOP", "nokey", "l", "0"), ("BRPOP", "l", "nokey", "0"),
    ("BLMOVE", "l", "m", "LEFT", "RIGHT", "0"), ("BRPOPLPUSH", "l", "m", "0"),
    ("BLMPOP", "0", "2", "nokey", "m", "LEFT", "COUNT", "5"), ("EXISTS", "m"),
    ("BLPOP", "l", "x"), ("BLPOP", "l", "-1"), ("BLPOP", "l", "nan"), ("BLPOP", "nokey", "0.001"),
    ("BLMOVE", "l", "m", "LEFT", "UP", "0"), ("BLMOVE", "l", "m", "LEFT", "RIGHT", "x"),
    ("BLMPOP", "x", "1", "l", "LEFT"), ("BLMPOP", "0", "0", "l", "LEFT"),
    ("BLMPOP", "0", "1", "l", "MIDDLE"), ("BLMPOP", "-1", "1", "l", "LEFT"),
    ("BLMPOP", "0", "1", "l", "LEFT", "COUNT", "0"), ("BRPOPLPUSH", "l", "m", "-1"),
    ("SET", "s", "v"), ("BLPOP", "s", "0"), ("BLMOVE", "s", "m", "LEFT", "LEFT", "0"),
    ("BLMPOP", "0", "1", "s", "LEFT"), ("RPUSH", "l2", "q"), ("BLMOVE", "l2", "s", "LEFT", "LEFT", "0"),
    ("MULTI",), ("BLPOP", "nokey", "0"), ("BRPOP", "nokey", "0"),
    ("BLMOVE", "nokey", "m", "LEFT", "RIGHT", "0"), ("BRPOPLPUSH", "nokey", "m", "0"),
    ("BLMPOP", "0", "1", "nokey", "LEFT"), ("LPUSH", "nokey", "v"), ("BLPOP", "nokey", "0"),
    ("EXEC",),
]


@pytest.mark.parametrize("script", [PUSH_POP, RANGES, INSERT_REM, LPOS, MOVES, MPOP,
                                    NONBLOCKING_BLOCKING],
                         ids=["push_pop", "ranges", "insert_rem", "lpos", "moves", "mpop",
                              "blocking_forms"])
def test_same_as_redis(server, real_redis, script) -> None:
    both(server, real_redis, script)


def test_large_and_numeric_elements_same_as_redis(server, real_redis) -> None:
    # Elements past every node limit (plain nodes), and integers a listpack stores packed.
    big = "x" * 70000
    mid = "y" * 5000
    script = [("RPUSH", "l", "1", big, "2", mid, "-4097", "3"), ("LPUSH", "l", big, mid),
              ("LRANGE", "l", "0", "-1"), ("LINDEX", "l", "1"), ("LSET", "l", "1", "small"),
              ("LINSERT", "l", "before", "2", big), ("LINSERT", "l", "after", big, "z"),
              ("LRANGE", "l", "0", "-1"), ("LREM", "l", "0", big), ("LRANGE", "l", "0", "-1"),
              ("LPOS", "l", mid, "COUNT", "0"), ("RPOP", "l", "3"), ("LPOP", "l", "3"),
              ("LRANGE", "l", "0", "-1")]
    both(server, real_redis, script)


def test_long_lists_across_many_nodes_same_as_redis(server, real_redis) -> None:
    n = 3000
    script: list[tuple] = [("RPUSH", "l", *[f"value-{i}" for i in range(n)]),
                           ("LPUSH", "l", *[str(i) for i in range(n)])]
    for start, stop in [(0, 9), (-10, -1), (2990, 3010), (1000, 1003), (-3005, -2995),
                        (5999, 6000), (0, -1)]:
        script.append(("LRANGE", "l", str(start), str(stop)))
    for index in (0, 1, 2999, 3000, 3001, 4500, -1, -2999, -6000, 6000):
        script.append(("LINDEX", "l", str(index)))
    script += [("LSET", "l", "4000", "changed"), ("LINDEX", "l", "4000"),
               ("LINSERT", "l", "before", "value-2500", "ins"), ("LPOS", "l", "ins"),
               ("LPOS", "l", "value-2500", "RANK", "-1"), ("LREM", "l", "-2", "changed"),
               ("LPOS", "l", "1500", "MAXLEN", "1600"), ("LPOS", "l", "1500", "MAXLEN", "1400"),
               ("LPOS", "l", "value-10", "RANK", "-1", "MAXLEN", "5990"),
               ("LTRIM", "l", "100", "-100"), ("LLEN", "l"), ("LRANGE", "l", "2895", "2910"),
               ("LPOP", "l", "1000"), ("RPOP", "l", "1000"), ("LLEN", "l"),
               ("LRANGE", "l", "0", "-1")]
    both(server, real_redis, script)


def test_small_node_limits_same_as_redis(server, real_redis) -> None:
    # Count-limited nodes: every middle operation crosses node boundaries.
    setup = [("CONFIG", "SET", "list-max-listpack-size", "4")]
    script = setup + [("RPUSH", "l", *[str(i % 7) for i in range(50)]),
                      ("LINSERT", "l", "after", "3", "a"), ("LINSERT", "l", "before", "6", "b"),
                      ("LREM", "l", "3", "1"), ("LREM", "l", "-2", "5"), ("LSET", "l", "20", "s"),
                      ("LRANGE", "l", "0", "-1"), ("LTRIM", "l", "3", "40"),
                      ("LRANGE", "l", "0", "-1"), ("LPOS", "l", "2", "COUNT", "0"),
                      ("LPOP", "l", "7"), ("RPOP", "l", "9"), ("LRANGE", "l", "0", "-1"),
                      ("CONFIG", "SET", "list-max-listpack-size", "-2")]
    both(server, real_redis, script)


def test_node_size_from_the_command_line_and_the_old_name(server_factory) -> None:
    # list-max-listpack-size given at start-up is the one pushes convert by, and so is a value
    # set later under its old name: 4 elements stay a listpack, the 5th makes a quicklist.
    proc = server_factory("--list-max-listpack-size", "4")
    with redis.Redis(port=proc.port) as r:
        r.rpush("a", *"1234")
        assert r.object("encoding", "a") == b"listpack"
        r.rpush("a", "5")
        assert r.object("encoding", "a") == b"quicklist"
        r.config_set("list-max-ziplist-size", "2")
        # Pipelined, as a producer sends them (the run of pushes reads the setting too).
        with r.pipeline(transaction=False) as pipe:
            for item in "12":
                pipe.lpush("b", item)
            pipe.object("encoding", "b")
            pipe.lpush("b", "3")
            pipe.object("encoding", "b")
            assert pipe.execute() == [1, 2, b"listpack", 3, b"quicklist"]


# --- hypothesis: random sequences of list commands, byte for byte ------------------------------

_ELEMENT = st.sampled_from(["a", "b", "c", "1", "-2", "300", "x" * 70, "", "y" * 5000,
                            "z" * 9000])
_KEYS = st.sampled_from(["k1", "k2", "str"])
_INDEX = st.integers(-8, 8).map(str)
_SIDE = st.sampled_from(["LEFT", "RIGHT"])


def _commands() -> st.SearchStrategy[tuple]:
    return st.one_of(
        st.tuples(st.sampled_from(["LPUSH", "RPUSH", "LPUSHX", "RPUSHX"]), _KEYS, _ELEMENT)
        .flatmap(lambda t: st.lists(_ELEMENT, max_size=3).map(lambda more: t + tuple(more))),
        st.tuples(st.sampled_from(["LPOP", "RPOP"]), _KEYS),
        st.tuples(st.sampled_from(["LPOP", "RPOP"]), _KEYS, st.integers(-1, 5).map(str)),
        st.tuples(st.just("LLEN"), _KEYS),
        st.tuples(st.just("LRANGE"), _KEYS, _INDEX, _INDEX),
        st.tuples(st.just("LINDEX"), _KEYS, _INDEX),
        st.tuples(st.just("LSET"), _KEYS, _INDEX, _ELEMENT),
        st.tuples(st.just("LINSERT"), _KEYS, st.sampled_from(["BEFORE", "AFTER"]), _ELEMENT,
                  _ELEMENT),
        st.tuples(st.just("LREM"), _KEYS, st.integers(-3, 3).map(str), _ELEMENT),
        st.tuples(st.just("LTRIM"), _KEYS, _INDEX, _INDEX),
        st.tuples(st.just("LPOS"), _KEYS, _ELEMENT, st.just("RANK"),
                  st.sampled_from(["1", "2", "-1", "-2"]), st.just("COUNT"),
                  st.sampled_from(["0", "1", "2"]), st.just("MAXLEN"),
                  st.sampled_from(["0", "3"])),
        st.tuples(st.just("LMOVE"), _KEYS, _KEYS, _SIDE, _SIDE),
        st.tuples(st.just("RPOPLPUSH"), _KEYS, _KEYS),
        st.tuples(st.just("LMPOP"), st.just("2"), _KEYS, _KEYS, _SIDE, st.just("COUNT"),
                  st.sampled_from(["1", "2", "5"])),
        st.tuples(st.just("BLPOP"), _KEYS, _KEYS, st.just("0.01")),
        st.tuples(st.just("BLMOVE"), _KEYS, _KEYS, _SIDE, _SIDE, st.just("0.01")),
        st.tuples(st.just("SET"), st.just("str"), st.just("v")),
        st.tuples(st.just("EXISTS"), _KEYS),
    )


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(_commands(), min_size=1, max_size=40), st.sampled_from(["-2", "3", "1", "-1"]))
def test_random_sequences_same_as_redis(server, real_redis, script, fill) -> None:
    config = ("CONFIG", "SET", "list-max-listpack-size", fill)
    both(server, real_redis, [config, *script, ("LRANGE", "k1", "0", "-1"),
                              ("LRANGE", "k2", "0", "-1")])


# --- command metadata --------------------------------------------------------------------------


@pytest.mark.parametrize("name", LIST_COMMANDS)
def test_command_info_same_as_redis(server, real_redis, name) -> None:
    ours = RawConnection(server.port)
    theirs = RawConnection(real_redis.port)
    try:
        ours.send(encode_command("COMMAND", "INFO", name))
        theirs.send(encode_command("COMMAND", "INFO", name))
        import hiredis

        def parse(raw: bytes):
            reader = hiredis.Reader()
            reader.feed(raw)
            return reader.gets()

        mine = parse(read_reply(ours))[0]
        ref = parse(read_reply(theirs))[0]
        if name in ("blpop", "brpop", "blmove", "brpoplpush"):
            # Redis 7.0 flags these `noscript`; Redis 7.4's src/commands/*.json no longer do.
            ref[2] = [f for f in ref[2] if f != b"noscript"]
        assert mine[:7] == ref[:7]
        # Key specs as well: the same begin_search / find_keys for every key.
        assert mine[8] == ref[8]
    finally:
        ours.close()
        theirs.close()


def test_command_getkeys_for_movable_keys(raw_r) -> None:
    r = raw_r
    assert r.execute_command("COMMAND", "GETKEYS", "LMPOP", "2", "a", "b", "LEFT") == [b"a", b"b"]
    assert r.execute_command("COMMAND", "GETKEYS", "BLMPOP", "0", "1", "a", "LEFT") == [b"a"]
    assert r.execute_command("COMMAND", "GETKEYS", "BLPOP", "a", "b", "0") == [b"a", b"b"]
    assert r.execute_command("COMMAND", "GETKEYS", "LMOVE", "a", "b", "LEFT", "LEFT") == \
        [b"a", b"b"]


# --- RESP3 shapes that differ from RESP2 -------------------------------------------------------


def test_lrem_count_and_lpos_rank_bounds_as_redis_7_4(r) -> None:
    # Redis 7.4 reads LREM's count and LPOS's RANK within -LONG_MAX..LONG_MAX; 7.0 took any
    # 64-bit value (LREM with LLONG_MIN removed every match, LPOS negated it).
    r.rpush("l", "a", "b", "a")
    text = ("value is out of range, value must between -9223372036854775807 and "
            "9223372036854775807")
    assert err(r, "LREM", "l", "-9223372036854775808", "a") == text
    assert err(r, "LPOS", "l", "a", "RANK", "-9223372036854775808") == text
    assert r.lrange("l", 0, -1) == [b"a", b"b", b"a"]
    assert r.execute_command("LREM", "l", "-9223372036854775807", "a") == 2


def test_resp3_nulls(server) -> None:
    script = [("LPOP", "nokey"), ("LPOP", "nokey", "2"), ("LINDEX", "nokey", "0"),
              ("LPOS", "nokey", "x"), ("LMPOP", "1", "nokey", "LEFT"),
              ("BLPOP", "nokey", "0.01"), ("BLMOVE", "nokey", "d", "LEFT", "LEFT", "0.01"),
              ("RPUSH", "l", "a"), ("BLPOP", "l", "0"), ("LMPOP", "1", "nokey", "LEFT")]
    assert run_script3(server.port, script) == [
        b"_\r\n", b"_\r\n", b"_\r\n", b"_\r\n", b"_\r\n", b"_\r\n", b"_\r\n", b":1\r\n",
        b"*2\r\n$1\r\nl\r\n$1\r\na\r\n", b"_\r\n"]


def test_resp2_null_kinds(server) -> None:
    # LPOP with a count on a missing key is a nil array, without one a nil bulk; a blocking
    # pop that times out is a nil array, BLMOVE too (its MULTI answer is a nil bulk instead).
    from tests.helpers import run_script
    assert run_script(server.port, [
        ("LPOP", "nokey"), ("LPOP", "nokey", "1"), ("BLMOVE", "nokey", "d", "LEFT", "LEFT",
                                                    "0.01"),
        ("BRPOPLPUSH", "nokey", "d", "0.01"), ("MULTI",),
        ("BLMOVE", "nokey", "d", "LEFT", "LEFT", "0"), ("BRPOPLPUSH", "nokey", "d", "0"),
        ("BLPOP", "nokey", "0"), ("EXEC",)]) == [
        b"$-1\r\n", b"*-1\r\n", b"*-1\r\n", b"*-1\r\n", b"+OK\r\n", b"+QUEUED\r\n",
        b"+QUEUED\r\n", b"+QUEUED\r\n", b"*3\r\n$-1\r\n$-1\r\n*-1\r\n"]


def test_type_copy_and_scan_type(r) -> None:
    r.rpush("l", "a", "b")
    assert r.type("l") == b"list"
    assert r.copy("l", "c")
    r.rpush("c", "z")
    assert r.lrange("l", 0, -1) == [b"a", b"b"]
    assert r.lrange("c", 0, -1) == [b"a", b"b", b"z"]
    r.set("s", "v")
    assert sorted(r.scan_iter(_type="list")) == [b"c", b"l"]


def test_copy_of_a_long_list_is_independent(r) -> None:
    r.rpush("l", *[f"v{i}" for i in range(5000)])
    assert r.copy("l", "c")
    r.lset("c", 2500, "changed")
    r.lpop("c", 100)
    assert r.lindex("l", 2500) == b"v2500"
    assert r.llen("l") == 5000
    assert r.lindex("c", 2400) == b"changed"


# --- pipelines: runs of pushes and pops read together ------------------------------------------


def run_pipelined(port: int, script: list[tuple], resp3: bool = False) -> bytes:
    """Send the whole script in one write (so that the server reads the calls together) and
    return every reply's bytes."""
    conn = RawConnection(port)
    try:
        if resp3:
            call_raw(conn, "HELLO", "3")
        call_raw(conn, "FLUSHALL")
        conn.send(b"".join(encode_command(*cmd) for cmd in script))
        return b"".join(read_reply(conn) for _ in script)
    finally:
        conn.close()


PIPELINES = [
    [("LPUSH", "q", f"job{i}") for i in range(40)] + [("RPOP", "q") for _ in range(45)],
    [("RPUSH", "q", "a", "b")] * 20 + [("LPOP", "q")] * 10 + [("lpop", "q")] * 5
    + [("LPOP", "q")] * 30 + [("LLEN", "q")],
    [("SET", "s", "v")] + [("LPUSH", "s", "x")] * 5 + [("RPOP", "s")] * 5
    + [("LPUSH", "q", "x")] * 3 + [("LPUSH", "other", "y")] * 3 + [("LPUSH", "q")] * 2
    + [("RPOP", "q", "1")] * 2 + [("RPOP", "q")] * 3 + [("RPOP", "q", "1", "2")] * 2,
    [("CONFIG", "SET", "list-max-listpack-size", "3")]
    + [("RPUSH", "q", str(i), "x" * (i % 3000)) for i in range(60)]
    + [("LPOP", "q")] * 50 + [("LRANGE", "q", "0", "-1")] + [("RPOP", "q")] * 80
    + [("CONFIG", "SET", "list-max-listpack-size", "-2")],
    [("LPUSH", "q", "x" * 9000)] * 3 + [("lpush", "q", "y")] * 3 + [("RPOP", "q")] * 7,
]


@pytest.mark.parametrize("script", PIPELINES)
@pytest.mark.parametrize("resp3", [False, True], ids=["resp2", "resp3"])
def test_pipelined_runs_same_as_redis(server, real_redis, script, resp3) -> None:
    assert run_pipelined(server.port, script, resp3) == run_pipelined(real_redis.port, script,
                                                                      resp3)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(st.one_of(
    st.tuples(st.sampled_from(["LPUSH", "RPUSH", "lpush"]), st.sampled_from(["k1", "k2"]),
              _ELEMENT),
    st.tuples(st.sampled_from(["LPOP", "RPOP", "rpop"]), st.sampled_from(["k1", "k2"])),
    st.tuples(st.just("LLEN"), st.just("k1"))), min_size=1, max_size=80))
def test_random_pipelines_same_as_redis(server, real_redis, script) -> None:
    assert run_pipelined(server.port, script) == run_pipelined(real_redis.port, script)
