"""Hash commands: replies byte for byte as Redis's (differential against a real Redis, RESP2 and
RESP3), errors, HRANDFIELD, HSCAN, COMMAND INFO, TYPE and COPY."""

from __future__ import annotations

import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import (
    assert_same_as_redis,
    call_raw,
    err,
    run_pipelined,
    run_script,
)
from tests.serverproc import RawConnection

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


def run_script_resp3(port: int, script: list[tuple]) -> list[bytes]:
    conn = RawConnection(port)
    try:
        call_raw(conn, "HELLO", "3")
        call_raw(conn, "FLUSHALL")
        return [call_raw(conn, *cmd) for cmd in script]
    finally:
        conn.close()


def assert_same_as_redis_resp3(server, real_redis, script: list[tuple]) -> None:
    ours = run_script_resp3(server.port, script)
    theirs = run_script_resp3(real_redis.port, script)
    for cmd, mine, ref in zip(script, ours, theirs, strict=True):
        assert mine == ref, f"{cmd!r}: rivulet {mine!r} != redis {ref!r}"


BASICS = [
    ("HSET", "h", "a", "1", "b", "2", "c", "3"),
    ("HSET", "h", "a", "10", "d", "4"),
    ("HGET", "h", "a"), ("HGET", "h", "nosuch"), ("HGET", "nokey", "a"),
    ("HMGET", "h", "a", "x", "d"), ("HMGET", "nokey", "a", "b"),
    ("HGETALL", "h"), ("HKEYS", "h"), ("HVALS", "h"), ("HLEN", "h"),
    ("HGETALL", "nokey"), ("HKEYS", "nokey"), ("HVALS", "nokey"), ("HLEN", "nokey"),
    ("HEXISTS", "h", "a"), ("HEXISTS", "h", "zz"), ("HEXISTS", "nokey", "a"),
    ("HSTRLEN", "h", "a"), ("HSTRLEN", "h", "zz"), ("HSTRLEN", "nokey", "a"),
    ("HSETNX", "h", "a", "x"), ("HSETNX", "h", "e", "5"), ("HSETNX", "new", "f", "v"),
    ("HMSET", "h", "f", "6", "g", "7"), ("HGETALL", "h"),
    ("HDEL", "h", "a", "a", "zz", "b"), ("HDEL", "nokey", "a"), ("HGETALL", "h"),
    ("HDEL", "new", "f"), ("EXISTS", "new"),
    ("HSET", "h"), ("HSET", "h", "a"), ("HSET", "h", "a", "1", "b"), ("HMSET", "h", "a", "1", "b"),
    ("HSETNX", "h", "a"), ("HGET", "h"), ("HMGET", "h"), ("HDEL", "h"),
    ("HLEN",), ("HGETALL",), ("HEXISTS", "h"), ("HSTRLEN", "h"),
    ("SET", "s", "str"),
    ("HSET", "s", "a", "1"), ("HGET", "s", "a"), ("HMGET", "s", "a"), ("HGETALL", "s"),
    ("HKEYS", "s"), ("HVALS", "s"), ("HLEN", "s"), ("HDEL", "s", "a"), ("HEXISTS", "s", "a"),
    ("HSTRLEN", "s", "a"), ("HSETNX", "s", "a", "1"), ("HINCRBY", "s", "a", "1"),
    ("HINCRBYFLOAT", "s", "a", "1"), ("HRANDFIELD", "s"), ("HRANDFIELD", "s", "2"),
    ("HSCAN", "s", "0"), ("HMSET", "s", "a", "1"),
    ("TYPE", "h"), ("HSET", "", "", ""), ("HGETALL", ""),
    ("HSET", "bin", "f\x00\r\n", "v\x00\r\n"), ("HGETALL", "bin"),
]


def test_basics_same_as_redis(server, real_redis) -> None:
    assert_same_as_redis(server, real_redis, BASICS)


def test_basics_same_as_redis_resp3(server, real_redis) -> None:
    assert_same_as_redis_resp3(server, real_redis, BASICS)


INCR = [
    ("HINCRBY", "h", "n", "5"), ("HINCRBY", "h", "n", "-12"), ("HINCRBY", "h", "n", "x"),
    ("HINCRBY", "h", "n", "1.5"), ("HINCRBY", "h", "n", ""),
    ("HSET", "h", "s", "abc", "sp", " 1", "big", "9223372036854775807", "small",
     "-9223372036854775808", "z", "007"),
    ("HINCRBY", "h", "s", "1"), ("HINCRBY", "h", "sp", "1"), ("HINCRBY", "h", "z", "1"),
    ("HINCRBY", "h", "big", "1"), ("HINCRBY", "h", "big", "0"), ("HINCRBY", "h", "small", "-1"),
    ("HINCRBY", "h", "small", "9223372036854775807"),
    ("HINCRBY", "h", "n", "99999999999999999999"), ("HINCRBY", "nokey", "x", "zz"),
    ("HINCRBYFLOAT", "h", "f", "1.5"), ("HINCRBYFLOAT", "h", "f", "0.1"),
    ("HINCRBYFLOAT", "h", "f", "-1.6"), ("HINCRBYFLOAT", "h", "f", "1e3"),
    ("HINCRBYFLOAT", "h", "f", "abc"), ("HINCRBYFLOAT", "h", "f", "inf"),
    ("HINCRBYFLOAT", "h", "f", "-inf"), ("HINCRBYFLOAT", "h", "f", "nan"),
    ("HINCRBYFLOAT", "h", "f", ""), ("HINCRBYFLOAT", "h", "f", " 1"),
    ("HINCRBYFLOAT", "h", "s", "1"), ("HINCRBYFLOAT", "h", "n", "2.5"),
    ("HINCRBYFLOAT", "h", "big", "1"), ("HINCRBYFLOAT", "h", "g", "1.7976931348623157e308"),
    ("HINCRBYFLOAT", "h", "g", "1.7976931348623157e308"), ("HINCRBYFLOAT", "h", "e", "0x10"),
    ("HINCRBYFLOAT", "h", "tiny", "1e-20"), ("HINCRBYFLOAT", "h", "tiny", "3"),
    ("HSET", "h", "inf", "inf"), ("HINCRBYFLOAT", "h", "inf", "1"),
    # The 309-digit value made it a hashtable: its order is Redis's dict order, so by name.
    ("HMGET", "h", "n", "s", "sp", "big", "small", "z", "f", "g", "e", "tiny", "inf", "nosuch"),
    ("HLEN", "h"), ("HINCRBYFLOAT", "nokey2", "x", "bad"), ("EXISTS", "nokey2"),
]


def test_increments_same_as_redis(server, real_redis) -> None:
    assert_same_as_redis(server, real_redis, INCR)


RANDOM_AND_SCAN = [
    ("HSET", "h", "a", "1", "b", "2", "c", "3"),
    ("HRANDFIELD", "h", "0"), ("HRANDFIELD", "h", "3"), ("HRANDFIELD", "h", "10"),
    ("HRANDFIELD", "h", "3", "WITHVALUES"), ("HRANDFIELD", "h", "99", "withvalues"),
    ("HRANDFIELD", "h", "0", "WITHVALUES"),
    ("HRANDFIELD", "nokey"), ("HRANDFIELD", "nokey", "5"), ("HRANDFIELD", "nokey", "-5"),
    ("HRANDFIELD", "nokey", "5", "WITHVALUES"),
    ("HRANDFIELD", "h", "x"), ("HRANDFIELD", "h", "1", "WITHVALUE"),
    ("HRANDFIELD", "h", "1", "WITHVALUES", "x"),
    ("HRANDFIELD", "h", "-9223372036854775808"),
    ("HRANDFIELD", "h", "-9223372036854775807", "WITHVALUES"),
    ("HRANDFIELD", "h", "4611686018427387904", "WITHVALUES"),
    ("HRANDFIELD", "h", "99999999999999999999"),
    ("HSCAN", "h", "0"), ("HSCAN", "h", "0", "COUNT", "1"), ("HSCAN", "h", "7"),
    ("HSCAN", "h", "0", "MATCH", "[ab]"), ("HSCAN", "h", "0", "MATCH", "*"),
    ("HSCAN", "h", "0", "COUNT", "0"), ("HSCAN", "h", "0", "COUNT", "x"),
    ("HSCAN", "h", "0", "MATCH"), ("HSCAN", "h", "0", "TYPE", "hash"), ("HSCAN", "h", "x"),
    ("HSCAN", "nokey", "0"), ("HSCAN", "nokey", "0", "COUNT", "0"),
    ("HSCAN", "h", "0", "BAD"),
]


def test_hrandfield_and_hscan_same_as_redis(server, real_redis) -> None:
    assert_same_as_redis(server, real_redis, RANDOM_AND_SCAN)


def test_hrandfield_and_hscan_same_as_redis_resp3(server, real_redis) -> None:
    assert_same_as_redis_resp3(server, real_redis, RANDOM_AND_SCAN)


def test_hscan_negative_cursor_is_invalid(raw_r) -> None:
    # Redis 7.4 parses the cursor with string2ull, which refuses a negative number; 7.0's strtoul
    # accepted "-1" (as 2^64 - 1).
    raw_r.hset("h", "a", "1")
    assert err(raw_r, "HSCAN", "h", "-1") == "invalid cursor"
    assert raw_r.execute_command("HSCAN", "h", "18446744073709551615") == [b"0", [b"a", b"1"]]


def test_hscan_novalues(raw_r) -> None:
    # NOVALUES is 7.4's (Redis 7.0 answers a syntax error): checked against the documented reply.
    raw_r.hset("h", mapping={"a": 1, "b": 2})
    assert raw_r.execute_command("HSCAN", "h", "0", "NOVALUES") == [b"0", [b"a", b"b"]]
    assert raw_r.execute_command("HSCAN", "h", "0", "MATCH", "b", "NOVALUES") == [b"0", [b"b"]]
    raw_r.set("s", "x")
    assert err(raw_r, "SCAN", "0", "NOVALUES") == "NOVALUES option can only be used in HSCAN"


def test_hscan_of_a_hashtable_returns_every_field_once(r) -> None:
    fields = {f"f{i}": str(i) for i in range(2000)}
    r.hset("big", mapping=fields)
    seen: dict[str, str] = {}
    cursor = 0
    calls = 0
    while True:
        cursor, batch = r.hscan("big", cursor, count=50)
        calls += 1
        for k, v in batch.items():
            assert k.decode() not in seen
            seen[k.decode()] = v.decode()
        if calls == 5:
            # Changes during the iteration: fields present throughout are still all returned.
            r.hdel("big", "f1999", "f1998")
            r.hset("big", "late", "x")
        if cursor == 0:
            break
    assert calls > 10
    seen.pop("late", None)
    fields.pop("f1999")
    fields.pop("f1998")
    for k in ("f1999", "f1998"):
        seen.pop(k, None)
    assert seen == fields
    # (redis-py pairs up HSCAN's flat list whatever the options)
    paired = r.execute_command("HSCAN", "big", "0", "COUNT", "5000", "MATCH", "f1?", "NOVALUES")[1]
    assert sorted([*paired, *paired.values()]) == [b"f%d" % i for i in range(10, 20)]


def test_hrandfield_shapes(rc) -> None:
    rc.hset("h", mapping={"a": "1", "b": "2", "c": "3", "d": "4"})
    resp3 = rc.get_connection_kwargs().get("protocol") == 3
    one = rc.execute_command("HRANDFIELD", "h")
    assert one in (b"a", b"b", b"c", b"d")
    rep = rc.execute_command("HRANDFIELD", "h", "-10")
    assert len(rep) == 10 and set(rep) <= {b"a", b"b", b"c", b"d"}
    uniq = rc.execute_command("HRANDFIELD", "h", "3")
    assert len(uniq) == 3 and len(set(uniq)) == 3
    pairs = rc.execute_command("HRANDFIELD", "h", "-7", "WITHVALUES")
    if resp3:
        assert len(pairs) == 7 and all(len(p) == 2 for p in pairs)
        flat = [x for p in pairs for x in p]
    else:
        assert len(pairs) == 14
        flat = pairs
    for field, value in zip(flat[::2], flat[1::2], strict=True):
        assert {b"a": b"1", b"b": b"2", b"c": b"3", b"d": b"4"}[field] == value
    # A hashtable hash, sampled with and without repetition.
    rc.hset("big", mapping={f"f{i}": i for i in range(600)})
    sample = rc.execute_command("HRANDFIELD", "big", "500")
    assert len(set(sample)) == 500
    sample = rc.execute_command("HRANDFIELD", "big", "5")
    assert len(set(sample)) == 5


def test_hgetall_resp3_is_a_map(raw) -> None:
    call_raw(raw, "HSET", "h", "a", "1", "b", "2")
    call_raw(raw, "HELLO", "3")
    assert call_raw(raw, "HGETALL", "h") == b"%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"
    assert call_raw(raw, "HGETALL", "none") == b"%0\r\n"
    assert call_raw(raw, "HRANDFIELD", "h", "2", "WITHVALUES") in (
        b"*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n",
        b"*2\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n")
    assert call_raw(raw, "HGET", "h", "zz") == b"_\r\n"


def test_big_hashes_same_content_as_redis(server, real_redis) -> None:
    # Past the listpack limits both use a hashtable, whose order differs: compare as sets.
    script = [("HSET", "h", *[x for i in range(700) for x in (f"f{i}", str(i))]),
              ("HSET", "v", "a", "x" * 100, "b", "y"),
              ("HINCRBYFLOAT", "h", "f3", "0.5"), ("HDEL", "h", "f1", "f2"), ("HLEN", "h")]
    assert run_script(server.port, script) == run_script(real_redis.port, script)
    mine = redis.Redis(port=server.port)
    theirs = redis.Redis(port=real_redis.port)
    try:
        for key in ("h", "v"):
            assert mine.hgetall(key) == theirs.hgetall(key)
            assert sorted(mine.hkeys(key)) == sorted(theirs.hkeys(key))
            assert sorted(mine.hvals(key)) == sorted(theirs.hvals(key))
    finally:
        mine.close()
        theirs.close()


# --- sequences generated by hypothesis ------------------------------------------------------------

_keys = st.sampled_from(["h1", "h2", "str"])
_fields = st.sampled_from(["a", "b", "c", "d", "e", "10", ""])
_values = st.one_of(st.sampled_from(["0", "1", "-5", "1.5", "abc", "9223372036854775806", ""]),
                    st.text(alphabet="xyz019.-", max_size=8))
_incr = st.sampled_from(["1", "-1", "0", "100", "x", "9223372036854775807", "2.5"])
_float_incr = st.sampled_from(["1", "-1.5", "0.1", "1e2", "x", "inf", "3.0e-2"])


def _command(draw) -> tuple:
    kind = draw(st.sampled_from(["hset", "hsetnx", "hget", "hmget", "hdel", "hlen", "hexists",
                                 "hstrlen", "hincrby", "hincrbyfloat", "hgetall", "hkeys", "hvals",
                                 "hmset", "hrandall", "hscan", "set", "del"]))
    key = draw(_keys)
    if kind in ("hset", "hmset"):
        n = draw(st.integers(1, 4))
        pairs = [x for _ in range(n) for x in (draw(_fields), draw(_values))]
        return (kind.upper(), key, *pairs)
    if kind == "hsetnx":
        return ("HSETNX", key, draw(_fields), draw(_values))
    if kind in ("hget", "hexists", "hstrlen"):
        return (kind.upper(), key, draw(_fields))
    if kind in ("hmget", "hdel"):
        return (kind.upper(), key, *draw(st.lists(_fields, min_size=1, max_size=4)))
    if kind == "hincrby":
        return ("HINCRBY", key, draw(_fields), draw(_incr))
    if kind == "hincrbyfloat":
        return ("HINCRBYFLOAT", key, draw(_fields), draw(_float_incr))
    if kind == "hrandall":
        return ("HRANDFIELD", key, "50", *draw(st.sampled_from([(), ("WITHVALUES",)])))
    if kind == "hscan":
        return ("HSCAN", key, "0", *draw(st.sampled_from([(), ("MATCH", "[a-c]"), ("COUNT", "2")])))
    if kind == "set":
        return ("SET", key, "v")
    if kind == "del":
        return ("DEL", key)
    return (kind.upper(), key)


commands = st.composite(_command)()


@given(st.lists(commands, min_size=1, max_size=30))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_random_sequences_same_as_redis(server, real_redis, script) -> None:
    script = [*script, ("HGETALL", "h1"), ("HGETALL", "h2")]
    assert_same_as_redis(server, real_redis, script)


@given(st.lists(commands, min_size=1, max_size=20))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_random_sequences_same_as_redis_resp3(server, real_redis, script) -> None:
    assert_same_as_redis_resp3(server, real_redis, [*script, ("HGETALL", "h1")])


# --- the value type ---------------------------------------------------------------------------------


def test_type_copy_rename_and_scan_type(r) -> None:
    r.hset("h", mapping={"a": 1, "b": 2})
    assert r.type("h") == b"hash"
    assert r.copy("h", "c") == 1
    r.hset("c", "a", "changed")
    r.hdel("c", "b")
    assert r.hgetall("h") == {b"a": b"1", b"b": b"2"}
    assert r.hgetall("c") == {b"a": b"changed"}
    r.set("s", "x")
    assert sorted(r.scan(0, _type="hash", count=100)[1]) == [b"c", b"h"]
    r.rename("h", "h2")
    assert r.hget("h2", "b") == b"2"
    assert err(r, "GET", "h2") == WRONGTYPE


COMMAND_NAMES = ["hset", "hsetnx", "hget", "hmget", "hmset", "hgetall", "hdel", "hlen", "hexists",
                 "hkeys", "hvals", "hincrby", "hincrbyfloat", "hstrlen", "hrandfield", "hscan"]


def test_command_info_same_as_redis(server, real_redis) -> None:
    script = [("COMMAND", "INFO", name) for name in COMMAND_NAMES]
    mine = redis.Redis(port=server.port, protocol=2)
    theirs = redis.Redis(port=real_redis.port, protocol=2)
    try:
        mine.response_callbacks.clear()
        theirs.response_callbacks.clear()
        for cmd in script:
            ours = mine.execute_command(*cmd)[0]
            ref = theirs.execute_command(*cmd)[0]
            assert ours[:7] == ref[:7], cmd
    finally:
        mine.close()
        theirs.close()


def test_command_docs_of_hash_commands(raw_r) -> None:
    docs = raw_r.execute_command("COMMAND", "DOCS", "hset")
    hset = dict(zip(docs[1][::2], docs[1][1::2], strict=True))
    assert hset[b"group"] == b"hash" and hset[b"since"] == b"2.0.0"
    assert hset[b"history"] == [[b"4.0.0", b"Accepts multiple `field` and `value` arguments."]]


def test_listpack_limits_follow_config_set(r) -> None:
    # Only a hashtable is scanned in steps; a listpack answers whole, with cursor 0.
    try:
        r.config_set("hash-max-ziplist-entries", 4)  # the old name sets hash-max-listpack-entries
        r.hset("big", mapping={f"f{i}": i for i in range(5)})
        r.hset("small", mapping={f"f{i}": i for i in range(4)})
        cursor, part = r.hscan("big", 0, count=1)
        assert cursor != 0 and len(part) < 5
        assert r.hscan("small", 0, count=1) == (0, {b"f0": b"0", b"f1": b"1", b"f2": b"2", b"f3": b"3"})
        r.config_set("hash-max-listpack-value", 3)
        r.hset("small2", "f", "abc")
        r.hset("long", "f", "abcd")
        assert r.hscan("small2", 0, count=1)[0] == 0
        assert r.hscan("long", 0, count=1)[1] == {b"f": b"abcd"}
        r.hset("long", mapping={f"x{i}": 1 for i in range(3)})
        assert r.hscan("long", 0, count=1)[0] != 0
    finally:
        r.config_set("hash-max-listpack-entries", 512)
        r.config_set("hash-max-listpack-value", 64)
    r.hset("again", mapping={f"f{i}": i for i in range(5)})
    assert r.hscan("again", 0, count=1)[0] == 0


# --- pipelined HSETs to one hash (one unpack and pack per run) ------------------------------------


def test_pipelined_hsets_match_redis(server, real_redis) -> None:
    script: list[tuple] = []
    for i in range(300):
        script.append(("HSET", "h", f"f{i % 37}", f"v{i}", f"g{i % 5}", i))
        if i % 50 == 7:
            script += [("HSET", "h", "odd"), ("HGETALL", "h"), ("hset", "h", "x", 1),
                       ("HSET", "other", "a", 1), ("OBJECT", "ENCODING", "h")]
        if i == 150:
            script.append(("HSET", "h", "long", "v" * 100))  # converts mid-run
    for i in range(600):  # grows past hash-max-listpack-entries within one run
        script.append(("HSET", "big", f"f{i}", i))
    script += [("HGETALL", "h"), ("OBJECT", "ENCODING", "h"), ("HLEN", "big"),
               ("OBJECT", "ENCODING", "big"), ("HGET", "big", "f599"), ("HGETALL", "other")]
    ours = run_pipelined(server.port, script)
    theirs = run_pipelined(real_redis.port, script)
    converted = False
    for cmd, mine, ref in zip(script, ours, theirs, strict=True):
        converted = converted or cmd[:3] == ("HSET", "h", "long")
        if cmd == ("HGETALL", "h") and converted:
            # A hashtable's order is its own in each server: compare the pairs.
            assert _pairs(mine) == _pairs(ref), cmd
        else:
            assert mine == ref, f"{cmd!r}: rivulet {mine!r} != redis {ref!r}"


def _pairs(reply: bytes) -> dict[bytes, bytes]:
    items = reply.split(b"\r\n")[1:-1][1::2]
    return dict(zip(items[::2], items[1::2], strict=True))


def test_pipelined_hsets_count_one_change_per_field_as_redis(server, real_redis) -> None:
    script = [("HSET", "h", "a", 1, "b", 2), ("HSET", "h", "a", 3), ("HSET", "h", "c", 4, "d", 5)]
    changes = []
    for port in (server.port, real_redis.port):
        r = redis.Redis(port=port)
        r.flushall()
        before = r.info("persistence")["rdb_changes_since_last_save"]
        run_pipelined(port, script, flush=False)
        r.hset("h", mapping={"x": 1, "y": 2, "z": 3})
        changes.append(r.info("persistence")["rdb_changes_since_last_save"] - before)
    assert changes[0] == changes[1] == 8
