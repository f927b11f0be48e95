"""Commands that work on a key of any type (MOVE, SWAPDB, TOUCH, RENAME, COPY, DEL, EXISTS, TYPE,
the expiry family, SCAN TYPE, RANDOMKEY), differential against a real Redis where replies are
deterministic.

Every cross-type test is parametrized over VALUE_MAKERS: adding a type is one entry there (the
commands that create a value of that type under a key, and one that reads it back).
"""

from __future__ import annotations

import threading
import time

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import assert_same_as_redis, call_raw, run_script
from tests.serverproc import RawConnection

# type name -> (the commands that create a value of that type under "{key}", a command whose
# reply shows the whole value)
VALUE_MAKERS: dict[str, tuple[list[tuple[str, ...]], tuple[str, ...]]] = {
    "string": ([("SET", "{key}", "hello")], ("GET", "{key}")),
    "stream": ([("XADD", "{key}", "1-1", "f", "v"), ("XADD", "{key}", "2-1", "g", "w")],
               ("XRANGE", "{key}", "-", "+")),
    "list": ([("RPUSH", "{key}", "a", "b", "c")], ("LRANGE", "{key}", "0", "-1")),
    # Integer members: an intset, whose order is the same in Redis 7.0 and 7.4.
    "set": ([("SADD", "{key}", "3", "1", "2")], ("SMEMBERS", "{key}")),
    "zset": ([("ZADD", "{key}", "1", "a", "2.5", "b")], ("ZRANGE", "{key}", "0", "-1", "WITHSCORES")),
    # A hash small enough for a listpack in both versions: its order is insertion order.
    "hash": ([("HSET", "{key}", "f1", "v1", "f2", "v2")], ("HGETALL", "{key}")),
}
TYPES = sorted(VALUE_MAKERS)


def _fill(cmd: tuple[str, ...], key: str) -> tuple[str, ...]:
    return tuple(arg.replace("{key}", key) for arg in cmd)


def make(type_name: str, key: str) -> list[tuple[str, ...]]:
    return [_fill(cmd, key) for cmd in VALUE_MAKERS[type_name][0]]


def read_back(type_name: str, key: str) -> tuple[str, ...]:
    return _fill(VALUE_MAKERS[type_name][1], key)


# --- differential, per type ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", TYPES)
def test_move(server, real_redis, kind):
    script = [
        *make(kind, "k"),
        ("MOVE", "k", "1"), ("EXISTS", "k"), ("SELECT", "1"), ("TYPE", "k"), read_back(kind, "k"),
        ("MOVE", "k", "1"),  # same database
        ("MOVE", "k", "0"), ("MOVE", "nosuch", "0"),
        ("SELECT", "0"), ("TYPE", "k"), *make(kind, "k2"), ("SELECT", "1"), *make(kind, "k2"),
        ("MOVE", "k2", "0"),  # exists in the target: nothing moves
        ("EXISTS", "k2"),
        ("MOVE", "k2", "16"), ("MOVE", "k2", "-1"), ("MOVE", "k2", "x"),
        ("MOVE", "k2", "99999999999"), ("MOVE", "k2"),
        ("PEXPIRE", "k2", "100000"), ("SELECT", "0"), ("DEL", "k2"), ("SELECT", "1"),
        ("MOVE", "k2", "0"), ("SELECT", "0"), ("TTL", "k2"), ("TYPE", "k2"),
    ]
    assert_same_as_redis(server, real_redis, script)


@pytest.mark.parametrize("kind", TYPES)
def test_swapdb(server, real_redis, kind):
    script = [
        *make(kind, "a"), ("SELECT", "2"), *make(kind, "b"), ("SET", "c", "x"),
        ("SWAPDB", "0", "2"), ("DBSIZE",), ("TYPE", "a"), ("TYPE", "b"), read_back(kind, "a"),
        ("SELECT", "0"), ("DBSIZE",), ("TYPE", "b"), read_back(kind, "b"), ("GET", "c"),
        ("SWAPDB", "0", "0"), ("DBSIZE",),
        ("SWAPDB", "0", "16"), ("SWAPDB", "-1", "0"), ("SWAPDB", "x", "0"), ("SWAPDB", "0", "y"),
        ("SWAPDB", "x", "y"), ("SWAPDB", "0"), ("SWAPDB", "3000000000", "0"),
    ]
    assert_same_as_redis(server, real_redis, script)


@pytest.mark.parametrize("kind", TYPES)
def test_generic_commands_on_type(server, real_redis, kind):
    script = [
        *make(kind, "k"),
        ("TYPE", "k"), ("EXISTS", "k", "k", "nosuch"), ("TOUCH", "k", "k", "nosuch"), ("TOUCH",),
        ("RENAME", "k", "r"), ("TYPE", "k"), ("TYPE", "r"), read_back(kind, "r"),
        *make(kind, "k"), ("RENAMENX", "k", "r"), ("RENAMENX", "k", "n"), ("RENAME", "n", "n"),
        ("RENAMENX", "n", "n"), ("RENAME", "nosuch", "x"),
        ("COPY", "n", "c"), read_back(kind, "c"), ("COPY", "n", "c"), ("COPY", "n", "c", "REPLACE"),
        ("COPY", "n", "c", "DB", "3"), ("SELECT", "3"), ("TYPE", "c"), read_back(kind, "c"),
        ("SELECT", "0"), ("COPY", "n", "n"), ("COPY", "n", "n", "DB", "0"),
        ("COPY", "n", "x", "DB", "16"), ("COPY", "n", "x", "DB", "nan"), ("COPY", "n", "x", "FOO"),
        ("EXPIRE", "c", "100"), ("TTL", "c"), ("PERSIST", "c"), ("TTL", "c"), ("PERSIST", "c"),
        ("PEXPIREAT", "c", "99999999999999"), ("PEXPIRETIME", "c"), ("EXPIRETIME", "c"),
        ("EXPIRE", "c", "100", "NX"), ("EXPIRE", "c", "100", "XX"), ("TTL", "c"),
        ("RENAME", "c", "c2"), ("TTL", "c2"), ("MOVE", "c2", "5"), ("SELECT", "5"), ("TTL", "c2"),
        ("SELECT", "0"),
        ("SCAN", "0", "TYPE", kind, "COUNT", "1000"),
        ("DEL", "n", "nosuch"), ("UNLINK", "r", "r"), ("DBSIZE",),
        ("RANDOMKEY",), ("KEYS", "*"),
        ("EXPIRE", "k", "0"), ("EXISTS", "k"), ("RANDOMKEY",),
    ]
    ours = run_script(server.port, script)
    theirs = run_script(real_redis.port, script)
    for cmd, mine, ref in zip(script, ours, theirs, strict=True):
        if cmd[0] == "SCAN":
            # The cursor order differs; the keys found must not.
            assert sorted(mine.split(b"\r\n")[4:]) == sorted(ref.split(b"\r\n")[4:]), cmd
        else:
            assert mine == ref, f"{cmd!r}: rivulet {mine!r} != redis {ref!r}"


def test_scan_type_across_types(server, real_redis):
    script = [cmd for i, kind in enumerate(TYPES) for cmd in make(kind, f"key{i}")]
    for kind in [*TYPES, "nosuchtype"]:
        for port in (server.port, real_redis.port):
            with redis.Redis(port=port) as c:
                c.flushall()
                for cmd in script:
                    c.execute_command(*cmd)
                cursor, found = 0, set()
                while True:
                    cursor, keys = c.scan(cursor, count=3, _type=kind)
                    found.update(keys)
                    if cursor == 0:
                        break
                expected = {f"key{i}".encode() for i, k in enumerate(TYPES) if k == kind}
                assert found == expected, (port, kind)


def test_a_key_changes_type_inside_a_transaction(server, real_redis):
    # A stream replaced by a list within one transaction, as an application moving from one to
    # the other would: every queued command answers, EXEC runs them all.
    script = [("MULTI",), ("XADD", "s", "1-1", "f", "v"), ("DEL", "s"), ("LPUSH", "s", "a", "b"),
              ("HSET", "h", "f", "v"), ("SADD", "t", "m"), ("ZADD", "z", "1", "m"), ("EXEC",),
              ("TYPE", "s"), ("LRANGE", "s", "0", "-1"), ("TYPE", "h"), ("TYPE", "t"),
              ("TYPE", "z"), ("XLEN", "s")]
    assert_same_as_redis(server, real_redis, script)


@pytest.mark.parametrize("kind", TYPES)
def test_idle_time_follows_the_value(server, kind):
    # Every type keeps its access data: an untouched key ages, TYPE does not touch it, a read
    # makes it fresh again.
    with redis.Redis(port=server.port) as c:
        c.flushall()
        c.config_set("maxmemory-policy", "noeviction")
        for cmd in make(kind, "k"):
            c.execute_command(*cmd)
        time.sleep(2.2)
        c.type("k")
        assert c.object("idletime", "k") >= 2
        c.execute_command(*read_back(kind, "k"))
        assert c.object("idletime", "k") <= 1


def command_info(port: int, name: str) -> list:
    with redis.Redis(port=port) as c:
        conn = c.connection_pool.get_connection()
        try:
            conn.send_command("COMMAND", "INFO", name)
            return conn.read_response()[0]
        finally:
            c.connection_pool.release(conn)


@pytest.mark.parametrize("name", [
    "move", "swapdb", "touch", "object", "object|encoding", "object|freq", "object|idletime",
    "object|refcount", "object|help", "memory", "memory|usage", "memory|stats", "memory|doctor",
    "memory|malloc-stats", "memory|purge", "memory|help", "client|reply", "rename", "renamenx",
    "copy", "del", "unlink", "exists", "type", "scan", "randomkey", "keys", "dbsize"])
def test_command_info_matches_redis(server, real_redis, name):
    # name, arity, flags, first key, last key, step, ACL categories
    assert command_info(server.port, name)[:7] == command_info(real_redis.port, name)[:7]


# --- hypothesis: random sequences of generic commands over a few keys and databases ------------------

_KEYS = ["a", "b", "c"]
_op = st.one_of(
    st.tuples(st.sampled_from(TYPES), st.sampled_from(_KEYS)).map(lambda t: ("MAKE", *t)),
    st.tuples(st.just("MOVE"), st.sampled_from(_KEYS), st.sampled_from(["0", "1", "2"])),
    st.tuples(st.just("SWAPDB"), st.sampled_from(["0", "1", "2"]), st.sampled_from(["0", "1", "2"])),
    st.tuples(st.just("SELECT"), st.sampled_from(["0", "1", "2"])),
    st.tuples(st.sampled_from(["RENAME", "RENAMENX", "COPY"]), st.sampled_from(_KEYS),
              st.sampled_from(_KEYS)),
    st.tuples(st.just("COPY"), st.sampled_from(_KEYS), st.sampled_from(_KEYS), st.just("DB"),
              st.sampled_from(["0", "1", "2"]), st.just("REPLACE")),
    st.tuples(st.sampled_from(["DEL", "UNLINK", "EXISTS", "TYPE", "TOUCH", "PERSIST", "TTL"]),
              st.sampled_from(_KEYS)),
    st.tuples(st.just("EXPIRE"), st.sampled_from(_KEYS), st.just("1000")),
    st.tuples(st.just("DBSIZE")),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(_op, min_size=1, max_size=25))
def test_random_generic_sequences(server, real_redis, ops):
    script: list[tuple[str, ...]] = [("SELECT", "0")]
    for op in ops:
        if op[0] == "MAKE":
            script += [("DEL", op[2]), *make(op[1], op[2])]
        else:
            script.append(op)
    for db in ("0", "1", "2"):
        script += [("SELECT", db), ("DBSIZE",)]
        for key in _KEYS:
            script += [("TYPE", key), ("TTL", key)]
    assert_same_as_redis(server, real_redis, script)


# --- blocked clients and WATCH ---------------------------------------------------------------------


def _blocked_xread(port: int, db: int, key: str, result: list) -> threading.Thread:
    def run() -> None:
        with redis.Redis(port=port, db=db, socket_timeout=10) as c:
            result.append(c.execute_command("XREAD", "BLOCK", "5000", "STREAMS", key, "0-0"))

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _wait_blocked(r: redis.Redis, n: int = 1) -> None:
    for _ in range(200):
        if int(r.info("clients")["blocked_clients"]) >= n:
            return
        time.sleep(0.01)
    raise AssertionError("client did not block")


@pytest.mark.parametrize("how", ["move", "swapdb", "rename", "copy"])
def test_moved_stream_serves_a_blocked_reader(r, server, how):
    result: list = []
    thread = _blocked_xread(server.port, 1, "dst", result)
    _wait_blocked(r)
    r.xadd("src", {"f": "v"}, id="1-1")
    if how == "move":
        r.rename("src", "dst")
        r.move("dst", 1)
    elif how == "swapdb":
        r.rename("src", "dst")
        r.swapdb(0, 1)
    elif how == "rename":
        r.move("src", 1)
        r.execute_command("SELECT", "1")
        r.rename("src", "dst")
    else:
        r.execute_command("COPY", "src", "dst", "DB", "1")
    thread.join(5)
    assert not thread.is_alive()
    assert result == [[[b"dst", [(b"1-1", {b"f": b"v"})]]]]
    r.execute_command("SELECT", "0")


def test_swapdb_releases_xreadgroup_whose_stream_went_away(r, server):
    r.xgroup_create("s", "g", id="$", mkstream=True)
    errors: list = []

    def run() -> None:
        with redis.Redis(port=server.port, socket_timeout=10) as c:
            try:
                c.execute_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "s", ">")
            except redis.ResponseError as exc:
                errors.append(str(exc))

    thread = threading.Thread(target=run)
    thread.start()
    _wait_blocked(r)
    r.swapdb(0, 1)  # db 0 no longer holds the stream
    thread.join(5)
    assert not thread.is_alive()
    # Redis 7.4 re-runs the command, which fails as if sent now; 7.0 answered "UNBLOCKED the
    # stream key no longer exists".
    assert errors == ["NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP "
                      "option"]


def test_swapdb_and_move_fail_a_watching_transaction(r, server):
    with redis.Redis(port=server.port) as other:
        r.set("w", "1")
        pipe = r.pipeline()
        pipe.watch("w")
        other.swapdb(0, 1)
        pipe.multi()
        pipe.get("w")
        with pytest.raises(redis.WatchError):
            pipe.execute()
        # A watched key that exists on neither side is untouched by SWAPDB.
        pipe = r.pipeline()
        pipe.watch("nothere")
        other.swapdb(0, 1)
        pipe.multi()
        pipe.get("nothere")
        assert pipe.execute() == [None]
        r.swapdb(0, 1)
        r.flushall()
        r.set("m", "1")
        pipe = r.pipeline()
        pipe.watch("m")
        other.move("m", 3)
        pipe.multi()
        pipe.get("m")
        with pytest.raises(redis.WatchError):
            pipe.execute()


def test_swapdb_keeps_clients_in_their_database(r, server):
    conn = RawConnection(server.port)
    try:
        call_raw(conn, "SELECT", "1")
        call_raw(conn, "SET", "x", "in1")
        r.set("x", "in0")
        r.swapdb(0, 1)
        assert call_raw(conn, "GET", "x") == b"$3\r\nin0\r\n"
        assert r.get("x") == b"in1"
    finally:
        conn.close()


# --- propagation and persistence -------------------------------------------------------------------


@pytest.mark.parametrize("kind", TYPES)
def test_move_swapdb_survive_restart(server_factory, kind):
    node = server_factory("--appendonly", "yes", "--appendfsync", "always")
    with redis.Redis(port=node.port) as c:
        for cmd in make(kind, "k"):
            c.execute_command(*cmd)
        c.move("k", 2)
        c.swapdb(2, 3)
        c.execute_command("SELECT", "3")
        c.execute_command("COPY", "k", "k2", "DB", "4")
        c.execute_command("MOVE", "nosuch", "5")  # changes nothing, logs nothing
        before = [c.execute_command(*read_back(kind, "k"))]
    node.stop(9)
    node.start()
    with redis.Redis(port=node.port, db=3) as c:
        assert c.type("k").decode() == kind
        assert [c.execute_command(*read_back(kind, "k"))] == before
        c.execute_command("SELECT", "4")
        assert c.type("k2").decode() == kind
        assert c.dbsize() == 1
        c.execute_command("SELECT", "2")
        assert c.dbsize() == 0
        c.execute_command("BGREWRITEAOF")
        for _ in range(200):
            if c.info("persistence")["aof_rewrite_in_progress"] == 0:
                break
            time.sleep(0.05)
    node.stop(9)
    node.start()
    with redis.Redis(port=node.port, db=3) as c:
        assert c.type("k").decode() == kind
        assert [c.execute_command(*read_back(kind, "k"))] == before
