"""Generic key commands: DEL, UNLINK, EXISTS, TYPE, KEYS, SCAN, RANDOMKEY, RENAME, RENAMENX, COPY,
DBSIZE, FLUSHDB, FLUSHALL."""

from __future__ import annotations

import threading
import time

import pytest
import redis

from tests.helpers import assert_same_as_redis, call_raw
from tests.serverproc import RawConnection

# --- DEL / UNLINK / EXISTS / TYPE ---------------------------------------------------------------


def test_del_counts_only_existing_keys(r: redis.Redis) -> None:
    r.mset({"a": 1, "b": 2})
    assert r.delete("a", "b", "missing") == 2
    assert r.exists("a", "b") == 0
    assert r.delete("a") == 0


def test_unlink_removes_keys(r: redis.Redis) -> None:
    r.mset({"a": 1, "b": 2, "c": 3})
    assert r.unlink("a", "c", "zz") == 2
    assert r.keys("*") == [b"b"]


def test_del_of_expired_key_counts_zero(r: redis.Redis) -> None:
    r.set("k", "v", px=1)
    time.sleep(0.02)
    assert r.delete("k") == 0


def test_exists_counts_repeated_keys(r: redis.Redis) -> None:
    r.set("a", "1")
    assert r.exists("a", "a", "b") == 2


def test_type(r: redis.Redis, raw: RawConnection) -> None:
    r.set("s", "v")
    assert r.type("s") == b"string"
    assert r.type("missing") == b"none"
    # TYPE answers with a status reply, not a bulk string
    assert call_raw(raw, "TYPE", "s") == b"+string\r\n"
    assert call_raw(raw, "TYPE", "nokey") == b"+none\r\n"


def test_wrong_arity(r: redis.Redis) -> None:
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'del' command"):
        r.execute_command("DEL")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'type' command"):
        r.execute_command("TYPE", "a", "b")


# --- KEYS / RANDOMKEY / DBSIZE ------------------------------------------------------------------


def test_keys_pattern(r: redis.Redis) -> None:
    r.mset({"one": 1, "two": 2, "three": 3, "four": 4, "t[x]": 5})
    assert sorted(r.keys("*")) == [b"four", b"one", b"t[x]", b"three", b"two"]
    assert sorted(r.keys("t*")) == [b"t[x]", b"three", b"two"]
    assert sorted(r.keys("?o*")) == [b"four"]
    assert r.keys(r"t\[x\]") == [b"t[x]"]
    assert sorted(r.keys("[ot]*o")) == [b"two"]
    assert r.keys("nomatch*") == []


def test_keys_skips_expired(r: redis.Redis) -> None:
    r.set("live", 1)
    r.set("dead", 1, px=1)
    time.sleep(0.02)
    assert r.keys("*") == [b"live"]


def test_randomkey(r: redis.Redis, raw: RawConnection) -> None:
    assert r.randomkey() is None
    assert call_raw(raw, "RANDOMKEY") == b"$-1\r\n"
    r.mset({"a": 1, "b": 2, "c": 3})
    seen = {r.randomkey() for _ in range(200)}
    assert seen == {b"a", b"b", b"c"}


def test_randomkey_never_returns_expired(r: redis.Redis) -> None:
    r.set("live", 1)
    for i in range(20):
        r.set(f"dead{i}", 1, px=1)
    time.sleep(0.02)
    assert {r.randomkey() for _ in range(50)} == {b"live"}


def test_dbsize_per_database(r: redis.Redis) -> None:
    r.mset({"a": 1, "b": 2})
    assert r.dbsize() == 2
    r.execute_command("SELECT", 3)
    assert r.dbsize() == 0
    r.set("x", 1)
    assert r.dbsize() == 1


# --- FLUSHDB / FLUSHALL -------------------------------------------------------------------------


def test_flushdb_only_current_db(server) -> None:
    c0 = redis.Redis(port=server.port, db=0)
    c1 = redis.Redis(port=server.port, db=1)
    c0.flushall()
    c0.set("a", 1)
    c1.set("b", 1)
    assert c0.flushdb() is True
    assert c0.dbsize() == 0
    assert c1.get("b") == b"1"
    assert c1.flushall(asynchronous=True) is True
    assert c1.dbsize() == 0


def test_flush_options(r: redis.Redis) -> None:
    r.set("a", 1)
    assert r.execute_command("FLUSHDB", "SYNC") is True
    r.set("a", 1)
    assert r.execute_command("FLUSHALL", "async") is True
    assert r.dbsize() == 0
    for cmd in ("FLUSHDB", "FLUSHALL"):
        with pytest.raises(redis.ResponseError, match="^syntax error$"):
            r.execute_command(cmd, "LAZY")
        with pytest.raises(redis.ResponseError, match="^syntax error$"):
            r.execute_command(cmd, "SYNC", "ASYNC")


def test_flushall_invalidates_watch_on_existing_key(server) -> None:
    watcher = redis.Redis(port=server.port)
    other = redis.Redis(port=server.port, db=5)
    watcher.flushall()
    watcher.set("k", 1)
    pipe = watcher.pipeline()
    pipe.watch("k")
    other.flushall()
    pipe.multi()
    pipe.set("k", 2)
    with pytest.raises(redis.WatchError):
        pipe.execute()


def test_flushdb_of_other_db_keeps_watch(server) -> None:
    watcher = redis.Redis(port=server.port)
    other = redis.Redis(port=server.port, db=5)
    watcher.flushall()
    watcher.set("k", 1)
    other.set("x", 1)
    pipe = watcher.pipeline()
    pipe.watch("k")
    other.flushdb()
    pipe.multi()
    pipe.set("k", 2)
    assert pipe.execute() == [True]


def test_watch_missing_key_survives_flush_like_redis(server, real_redis) -> None:
    # Redis only invalidates watched keys that existed in the flushed database.
    for port in (server.port, real_redis.port):
        conn = RawConnection(port)
        try:
            call_raw(conn, "FLUSHALL")
            call_raw(conn, "SET", "other", "1")
            assert call_raw(conn, "WATCH", "absent") == b"+OK\r\n"
            call_raw(conn, "FLUSHALL")
            call_raw(conn, "MULTI")
            call_raw(conn, "SET", "absent", "1")
            assert call_raw(conn, "EXEC") == b"*1\r\n+OK\r\n", port
        finally:
            conn.close()


def test_flushall_empties_every_db(r: redis.Redis, server) -> None:
    for db in range(4):
        redis.Redis(port=server.port, db=db).set(f"k{db}", db)
    r.flushall()
    for db in range(4):
        assert redis.Redis(port=server.port, db=db).dbsize() == 0


# --- RENAME / RENAMENX --------------------------------------------------------------------------


def test_rename_moves_value_and_ttl(r: redis.Redis) -> None:
    r.set("src", "v", ex=100)
    r.set("dst", "old")
    assert r.rename("src", "dst") is True
    assert r.get("src") is None
    assert r.get("dst") == b"v"
    assert 95 <= r.ttl("dst") <= 100


def test_rename_clears_destination_ttl(r: redis.Redis) -> None:
    r.set("src", "v")
    r.set("dst", "old", ex=100)
    r.rename("src", "dst")
    assert r.ttl("dst") == -1


def test_rename_errors(r: redis.Redis) -> None:
    with pytest.raises(redis.ResponseError, match="^no such key$"):
        r.rename("missing", "x")
    with pytest.raises(redis.ResponseError, match="^no such key$"):
        r.rename("missing", "missing")
    with pytest.raises(redis.ResponseError, match="^no such key$"):
        r.renamenx("missing", "x")


def test_rename_onto_itself(r: redis.Redis) -> None:
    r.set("k", "v", ex=100)
    assert r.rename("k", "k") is True
    assert r.get("k") == b"v"
    assert r.ttl("k") > 0
    assert r.renamenx("k", "k") is False


def test_renamenx(r: redis.Redis) -> None:
    r.set("a", "1")
    r.set("b", "2")
    assert r.renamenx("a", "b") is False
    assert r.get("a") == b"1"
    assert r.renamenx("a", "c") is True
    assert r.get("c") == b"1"
    assert r.exists("a") == 0


def test_rename_expired_source_is_missing(r: redis.Redis) -> None:
    r.set("src", "v", px=1)
    time.sleep(0.02)
    with pytest.raises(redis.ResponseError, match="no such key"):
        r.rename("src", "dst")


def test_rename_invalidates_watch_of_both_keys(server) -> None:
    for watched in ("src", "dst"):
        c = redis.Redis(port=server.port)
        other = redis.Redis(port=server.port)
        c.flushall()
        c.set("src", "v")
        pipe = c.pipeline()
        pipe.watch(watched)
        other.rename("src", "dst")
        pipe.multi()
        pipe.set("x", 1)
        with pytest.raises(redis.WatchError):
            pipe.execute()


def test_rename_reply_types(raw: RawConnection) -> None:
    call_raw(raw, "SET", "a", "1")
    assert call_raw(raw, "RENAME", "a", "b") == b"+OK\r\n"
    assert call_raw(raw, "RENAMENX", "b", "c") == b":1\r\n"


# --- COPY ---------------------------------------------------------------------------------------


def test_copy_basic_and_ttl(r: redis.Redis) -> None:
    r.set("src", "v", ex=100)
    assert r.copy("src", "dst") is True
    assert r.get("dst") == b"v"
    assert 95 <= r.ttl("dst") <= 100
    assert r.get("src") == b"v"
    # independent values: changing the copy leaves the source alone
    r.append("dst", "x")
    assert r.get("src") == b"v"


def test_copy_existing_destination(r: redis.Redis) -> None:
    r.set("src", "new")
    r.set("dst", "old", ex=100)
    assert r.copy("src", "dst") is False
    assert r.get("dst") == b"old"
    assert r.copy("src", "dst", replace=True) is True
    assert r.get("dst") == b"new"
    assert r.ttl("dst") == -1


def test_copy_missing_source(r: redis.Redis) -> None:
    assert r.copy("nope", "dst") is False
    assert r.exists("dst") == 0


def test_copy_to_other_db(r: redis.Redis, server) -> None:
    r.set("src", "v")
    assert r.copy("src", "src", destination_db=2) is True
    assert redis.Redis(port=server.port, db=2).get("src") == b"v"
    assert r.copy("src", "src", destination_db=2) is False


def test_copy_errors(r: redis.Redis) -> None:
    r.set("src", "v")
    with pytest.raises(redis.ResponseError, match="^source and destination objects are the same$"):
        r.copy("src", "src")
    with pytest.raises(redis.ResponseError, match="^source and destination objects are the same$"):
        r.execute_command("COPY", "src", "src", "DB", 0)
    with pytest.raises(redis.ResponseError, match="^DB index is out of range$"):
        r.execute_command("COPY", "src", "dst", "DB", 16)
    with pytest.raises(redis.ResponseError, match="^DB index is out of range$"):
        r.execute_command("COPY", "src", "dst", "DB", -1)
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        r.execute_command("COPY", "src", "dst", "DB", "x")
    with pytest.raises(redis.ResponseError,
                       match="^value is out of range, value must between -2147483648 and 2147483647$"):
        r.execute_command("COPY", "src", "dst", "DB", 2**31)
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("COPY", "src", "dst", "DB")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("COPY", "src", "dst", "FORCE")


def test_copy_expired_source_copies_nothing(r: redis.Redis) -> None:
    r.set("src", "v", px=1)
    time.sleep(0.02)
    assert r.copy("src", "dst") is False


def test_every_value_class_has_a_registered_type() -> None:
    from server import value_types
    from server.command_table import load_handlers
    from streams import Stream

    load_handlers()
    assert value_types.of(b"x").name == b"string"
    stream = Stream()
    assert value_types.of(stream).name == b"stream"
    assert value_types.of(stream).copy(stream) is not stream
    with pytest.raises(TypeError):
        value_types.of([b"a python list is no value type"])


# --- SCAN ---------------------------------------------------------------------------------------


def _full_scan(r: redis.Redis, **kwargs) -> list[bytes]:
    cursor, out = 0, []
    while True:
        cursor, batch = r.scan(cursor, **kwargs)
        out.extend(batch)
        if cursor == 0:
            return out


def test_scan_returns_every_key_once(r: redis.Redis) -> None:
    keys = {f"key:{i}".encode() for i in range(1000)}
    r.mset({k: 1 for k in keys})
    found = _full_scan(r, count=37)
    assert len(found) == len(keys)
    assert set(found) == keys


def test_scan_default_count_is_ten(r: redis.Redis) -> None:
    r.mset({f"k{i}": 1 for i in range(100)})
    cursor, batch = r.scan(0)
    assert cursor != 0
    assert len(batch) == 10


def test_scan_reply_shape(raw: RawConnection) -> None:
    assert call_raw(raw, "SCAN", "0") == b"*2\r\n$1\r\n0\r\n*0\r\n"
    call_raw(raw, "SET", "k", "v")
    assert call_raw(raw, "SCAN", "0") == b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\nk\r\n"


def test_scan_match_and_type(r: redis.Redis) -> None:
    r.mset({f"user:{i}": 1 for i in range(50)})
    r.mset({f"item:{i}": 1 for i in range(50)})
    found = _full_scan(r, match="user:*", count=7)
    assert sorted(found) == sorted(f"user:{i}".encode() for i in range(50))
    assert len(_full_scan(r, _type="string")) == 100
    assert _full_scan(r, _type="STRING", match="item:1?") != []
    assert _full_scan(r, _type="list") == []
    # an unknown type name is accepted and matches nothing, as in Redis 7.4
    assert _full_scan(r, _type="nosuchtype") == []


def test_scan_skips_expired(r: redis.Redis) -> None:
    r.set("live", 1)
    r.set("dead", 1, px=1)
    time.sleep(0.02)
    assert _full_scan(r) == [b"live"]
    assert r.dbsize() == 1  # scanning reclaimed it


def test_scan_errors(r: redis.Redis) -> None:
    for bad in ("x", "-1", "1.5", "", "18446744073709551616"):
        with pytest.raises(redis.ResponseError, match="^invalid cursor$"):
            r.execute_command("SCAN", bad)
    for args in (("COUNT", 0), ("COUNT",), ("MATCH",), ("TYPE",), ("FOO", 1), ("COUNT", -1)):
        with pytest.raises(redis.ResponseError, match="^syntax error$"):
            r.execute_command("SCAN", 0, *args)
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        r.execute_command("SCAN", 0, "COUNT", "ten")
    with pytest.raises(redis.ResponseError, match="^NOVALUES option can only be used in HSCAN$"):
        r.execute_command("SCAN", 0, "NOVALUES")


def test_scan_accepts_strtoull_cursors(r: redis.Redis) -> None:
    # Redis parses cursors with strtoull when the strict parse fails: these are all valid
    r.set("k", 1)
    for cursor in ("007", "+0", " 0", "18446744073709551615"):
        next_cursor, batch = r.execute_command("SCAN", cursor)
        assert isinstance(next_cursor, int) and isinstance(batch, list)


def test_scan_stable_while_keyspace_changes(r: redis.Redis) -> None:
    stable = {f"stable:{i}".encode() for i in range(500)}
    r.mset({k: 1 for k in stable})
    r.mset({f"doomed:{i}": 1 for i in range(500)})
    cursor, seen, step = 0, [], 0
    while True:
        cursor, batch = r.scan(cursor, count=20)
        seen.extend(batch)
        # churn: add new keys, delete others, and re-create deleted ones between calls
        r.mset({f"new:{step}:{j}": 1 for j in range(30)})
        r.delete(*[f"doomed:{step * 10 + j}" for j in range(10)])
        r.set(f"doomed:{step}", 2)
        step += 1
        if cursor == 0:
            break
    assert stable <= set(seen)
    # no key that was present all along is returned twice
    dup = [k for k in seen if k in stable and seen.count(k) > 1]
    assert dup == []


def test_scan_interleaved_iterations(r: redis.Redis, server) -> None:
    # a second iteration starting (cursor 0) in the middle of the first must not disturb it
    keys = {f"k{i}".encode() for i in range(300)}
    r.mset({k: 1 for k in keys})
    other = redis.Redis(port=server.port)
    cursor, seen = 0, set()
    while True:
        cursor, batch = r.scan(cursor, count=15)
        seen.update(batch)
        r.set(f"extra{cursor}", 1)
        other.scan(0, count=5)
        if cursor == 0:
            break
    assert keys <= seen


def test_scan_in_selected_db_only(r: redis.Redis, server) -> None:
    r.set("db0", 1)
    redis.Redis(port=server.port, db=1).set("db1", 1)
    assert _full_scan(r) == [b"db0"]


def test_scan_concurrent_writer_thread(server) -> None:
    # keys written while a scan runs from another connection never break the iteration
    r = redis.Redis(port=server.port)
    r.flushall()
    base = {f"b{i}".encode() for i in range(2000)}
    r.mset({k: 1 for k in base})
    stop = threading.Event()

    def writer() -> None:
        w = redis.Redis(port=server.port)
        i = 0
        while not stop.is_set():
            w.set(f"w{i}", 1)
            w.delete(f"w{i - 5}")
            i += 1

    t = threading.Thread(target=writer)
    t.start()
    try:
        seen = set(_full_scan(r, count=50))
    finally:
        stop.set()
        t.join()
    assert base <= seen


# --- differential checks against a real Redis ---------------------------------------------------


def test_keys_commands_match_redis(server, real_redis) -> None:
    assert_same_as_redis(server, real_redis, [
        ("SET", "a", "1"), ("SET", "b", "2"),
        ("DEL", "a", "a", "zz"), ("EXISTS", "a", "b", "b"), ("UNLINK", "b"),
        ("TYPE", "b"), ("SET", "s", "x"), ("TYPE", "s"),
        ("RENAME", "nokey", "x"), ("RENAME", "s", "s"), ("RENAMENX", "s", "s"),
        ("RENAME", "s", "t"), ("RENAMENX", "t", "u"), ("SET", "v", "1"), ("RENAMENX", "u", "v"),
        ("COPY", "u", "u"), ("COPY", "u", "w"), ("COPY", "u", "w"), ("COPY", "u", "w", "REPLACE"),
        ("COPY", "u", "w", "DB", "99"), ("COPY", "u", "w", "DB", "abc"), ("COPY", "u", "w", "DB"),
        ("COPY", "u", "w", "REPLACE", "NOPE"), ("COPY", "nokey", "w"),
        ("COPY", "u", "u", "DB", "0"), ("COPY", "u", "u", "DB", "1", "REPLACE"),
        ("DBSIZE",), ("KEYS", "[u]"), ("KEYS", "nomatch"),
        ("FLUSHDB", "bad"), ("FLUSHALL", "sync", "async"), ("FLUSHDB", "ASYNC"), ("RANDOMKEY",),
        ("SCAN", "abc"), ("SCAN", "0", "COUNT", "0"), ("SCAN", "0", "COUNT"),
        ("SCAN", "0", "COUNT", "x"), ("SCAN", "0", "MATCH", "*", "TYPE", "string"),
        ("SCAN", "0", "FOO"), ("DEL",), ("KEYS",), ("SCAN",),
    ])


def test_scan_iteration_over_raw_socket(server) -> None:
    # feed back the exact bulk-string cursor the server sends
    conn = RawConnection(server.port)
    try:
        call_raw(conn, "FLUSHALL")
        for i in range(30):
            call_raw(conn, "SET", f"k{i}", "v")
        cursor, total = b"0", 0
        while True:
            lines = call_raw(conn, "SCAN", cursor, "COUNT", "4").split(b"\r\n")
            assert lines[0] == b"*2" and lines[1].startswith(b"$")
            cursor = lines[2]
            total += int(lines[3][1:])
            if cursor == b"0":
                break
        assert total == 30
    finally:
        conn.close()
