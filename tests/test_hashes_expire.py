"""Hash field expiration (Redis 7.4). Redis 7.0 has none of these commands, so the expected
replies, errors and logged commands are the ones Redis 7.4's t_hash.c produces (hexpireGenericCommand,
httlGenericCommand, hpersistCommand, hashTypeGetValue) and its documentation states."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import pytest
import redis

from tests.helpers import aof_path, err, restart

MAX_MS = ((1 << 48) - 1) >> 2  # HFE_MAX_ABS_TIME_MSEC
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


@pytest.fixture
def no_active(r: redis.Redis) -> Iterator[redis.Redis]:
    """The client, its server expiring fields lazily only while inside."""
    r.config_set("active-expire-enabled", "no")
    try:
        yield r
    finally:
        r.config_set("active-expire-enabled", "yes")


def hexpire(r: redis.Redis, cmd: str, key: str, when: int, *fields: str, cond: str | None = None):
    return r.execute_command(cmd, key, when, *([cond] if cond else []), "FIELDS", len(fields),
                             *fields)


def wait_until(predicate, timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


# --- errors --------------------------------------------------------------------------------------


def test_errors_in_redis_order(r) -> None:
    r.hset("h", "a", "1")
    r.set("s", "x")
    # The key's type is checked before anything is parsed.
    assert err(r, "HEXPIRE", "s", "abc", "FIELDS", "1", "a") == WRONGTYPE
    assert err(r, "HTTL", "s", "FIELDS", "x", "a") == WRONGTYPE
    assert err(r, "HPERSIST", "s", "FIELDS", "1", "a") == WRONGTYPE
    assert err(r, "HEXPIRE", "h", "abc", "FIELDS", "1", "a") == \
        "value is not an integer or out of range"
    assert err(r, "HEXPIRE", "h", "-1", "FIELDS", "1", "a") == "invalid expire time, must be >= 0"
    assert err(r, "HEXPIRE", "h", str(MAX_MS // 1000 + 1), "FIELDS", "1", "a") == \
        "invalid expire time in 'hexpire' command"
    assert err(r, "HPEXPIREAT", "h", str(MAX_MS + 1), "FIELDS", "1", "a") == \
        "invalid expire time in 'hpexpireat' command"
    assert err(r, "HPEXPIRE", "h", str(MAX_MS), "FIELDS", "1", "a") == \
        "invalid expire time in 'hpexpire' command"
    assert err(r, "HEXPIREAT", "h", str(MAX_MS // 1000 + 1), "FIELDS", "1", "a") == \
        "invalid expire time in 'hexpireat' command"
    assert err(r, "HEXPIRE", "h", "10", "BAD", "FIELDS", "1", "a") == \
        "Mandatory argument FIELDS is missing or not at the right position"
    assert err(r, "HEXPIRE", "h", "10", "FIELD", "1", "a") == \
        "Mandatory argument FIELDS is missing or not at the right position"
    for count in ("0", "-1", "x"):
        assert err(r, "HEXPIRE", "h", "10", "FIELDS", count, "a") == \
            "Parameter `numFields` should be greater than 0"
        for cmd in ("HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME", "HPERSIST"):
            assert err(r, cmd, "h", "FIELDS", count, "a") == \
                "Number of fields must be a positive integer"
    assert err(r, "HEXPIRE", "h", "10", "FIELDS", "2", "a") == \
        "The `numfields` parameter must match the number of arguments"
    assert err(r, "HEXPIRE", "h", "10", "NX", "FIELDS", "1") == \
        "The `numfields` parameter must match the number of arguments"
    assert err(r, "HEXPIRE", "h", "10", "NX", "FIELDS", "1", "a", "b") == \
        "The `numfields` parameter must match the number of arguments"
    assert err(r, "HTTL", "h", "FIELDS", "1", "a", "b") == \
        "The `numfields` parameter must match the number of arguments"
    assert err(r, "HTTL", "h", "FIELDS", "1") == "wrong number of arguments for 'httl' command"
    assert err(r, "HEXPIRE", "h", "1", "FIELDS", "1") == \
        "wrong number of arguments for 'hexpire' command"
    # Parsed before the key is looked up: errors for a missing key too.
    assert err(r, "HEXPIRE", "nokey", "10", "FIELDS", "2", "a") == \
        "The `numfields` parameter must match the number of arguments"
    assert r.hgetall("h") == {b"a": b"1"} and r.httl("h", "a") == [-1]


def test_time_limits_are_inclusive(r) -> None:
    r.hset("h", "a", "1")
    assert hexpire(r, "HPEXPIREAT", "h", MAX_MS, "a") == [1]
    assert r.hpexpiretime("h", "a") == [MAX_MS]
    assert hexpire(r, "HEXPIREAT", "h", MAX_MS // 1000, "a") == [1]
    assert r.hexpiretime("h", "a") == [MAX_MS // 1000]


# --- result codes --------------------------------------------------------------------------------


def test_codes_and_conditions(r) -> None:
    r.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    assert hexpire(r, "HEXPIRE", "nokey", 100, "a", "b") == [-2, -2]
    assert hexpire(r, "HEXPIRE", "h", 100, "a", "b", "zz") == [1, 1, -2]
    assert hexpire(r, "HEXPIRE", "h", 200, "a", "c", cond="NX") == [0, 1]
    assert hexpire(r, "HEXPIRE", "h", 300, "a", "zz", cond="xx") == [1, -2]
    # GT: a field without a TTL counts as infinite (never greater); LT: it always qualifies.
    r.hset("h", "d", 4)
    assert hexpire(r, "HEXPIRE", "h", 1000, "a", "d", cond="GT") == [1, 0]
    assert hexpire(r, "HEXPIRE", "h", 999, "a", cond="GT") == [0]
    assert hexpire(r, "HEXPIRE", "h", 500, "a", "d", cond="LT") == [1, 1]
    assert hexpire(r, "HEXPIRE", "h", 600, "a", cond="lt") == [0]
    assert hexpire(r, "HEXPIRE", "h", 600, "b", cond="XX") == [1]
    ttls = r.httl("h", "a", "b", "c", "d", "zz")
    assert 498 <= ttls[0] <= 500 and 598 <= ttls[1] <= 600 and 198 <= ttls[2] <= 200
    assert 498 <= ttls[3] <= 500 and ttls[4] == -2
    assert r.httl("nokey", "a") == [-2]


def test_a_time_in_the_past_deletes_and_the_last_field_deletes_the_key(r) -> None:
    r.hset("h", mapping={"a": 1, "b": 2})
    assert hexpire(r, "HEXPIRE", "h", 0, "a", "zz") == [2, -2]
    assert r.hgetall("h") == {b"b": b"2"}
    assert hexpire(r, "HPEXPIREAT", "h", 1, "b", "b") == [2, -2]
    assert r.exists("h") == 0
    r.hset("h", mapping={"a": 1, "b": 2})
    # A condition is checked before the time: a field failing it stays.
    assert hexpire(r, "HEXPIRE", "h", 0, "a", "b", cond="XX") == [0, 0]
    assert r.hlen("h") == 2


def test_ttl_family_units(r) -> None:
    r.hset("h", mapping={"a": 1, "b": 2})
    when = int(time.time() * 1000) + 100_500
    assert hexpire(r, "HPEXPIREAT", "h", when, "a") == [1]
    assert r.hpexpiretime("h", "a", "b", "zz") == [when, -1, -2]
    assert r.hexpiretime("h", "a") == [(when + 999) // 1000]
    assert 100_000 < r.hpttl("h", "a")[0] <= 100_500
    assert r.httl("h", "a") == [101] or r.httl("h", "a") == [100]
    assert r.hexpiretime("nokey", "a", "b") == [-2, -2]
    assert r.hpttl("h", "b") == [-1]


def test_hpersist(r) -> None:
    r.hset("h", mapping={"a": 1, "b": 2})
    assert r.hpersist("h", "a") == [-1]
    hexpire(r, "HEXPIRE", "h", 100, "a")
    assert r.hpersist("h", "a", "b", "zz") == [1, -1, -2]
    assert r.httl("h", "a") == [-1]
    assert r.hpersist("nokey", "a") == [-2]


def test_writes_and_ttls(r) -> None:
    r.hset("h", mapping={"a": 1, "b": 2, "c": "x", "n": 1})
    hexpire(r, "HEXPIRE", "h", 100, "a", "b", "c", "n")
    # HSET and HMSET of a field drop its TTL, HINCRBY(FLOAT) and a refused HSETNX keep it.
    r.hset("h", "a", "new")
    r.execute_command("HMSET", "h", "b", "new")
    r.hincrby("h", "n", 2)
    r.hincrbyfloat("h", "n", "0.5")
    assert r.hsetnx("h", "c", "y") == 0
    assert r.httl("h", "a", "b", "c", "n") == [-1, -1, 100, 100]
    assert r.hget("h", "n") == b"3.5"
    r.hdel("h", "c")
    r.hset("h", "c", "again")
    assert r.httl("h", "c") == [-1]


# --- lazy and active expiry ----------------------------------------------------------------------


def test_lazy_expiry_hides_then_deletes(no_active) -> None:
    r = no_active
    r.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    hexpire(r, "HPEXPIRE", "h", 30, "a")
    time.sleep(0.1)
    # Listing skips the expired field; HLEN counts it until it is deleted (hashTypeLength(o, 0)).
    assert r.hgetall("h") == {b"b": b"2", b"c": b"3"}
    assert r.hkeys("h") == [b"b", b"c"] and r.hvals("h") == [b"2", b"3"]
    assert r.hscan("h", 0) == (0, {b"b": b"2", b"c": b"3"})
    assert r.httl("h", "a") == [-2] and r.hpersist("h", "a") == [-2]
    assert r.hlen("h") == 3
    assert r.hget("h", "a") is None
    assert r.hlen("h") == 2
    hexpire(r, "HPEXPIRE", "h", 30, "b")
    time.sleep(0.1)
    assert r.hexists("h", "b") == 0 and r.hlen("h") == 1


def test_lazy_expiry_of_each_lookup(no_active) -> None:
    r = no_active
    cases = {
        "HSTRLEN": (("HSTRLEN", "h", "a"), 0),
        "HMGET": (("HMGET", "h", "a", "b"), [None, None]),
        "HSETNX": (("HSETNX", "h", "a", "new"), 1),
        "HINCRBY": (("HINCRBY", "h", "a", "5"), 5),
        "HINCRBYFLOAT": (("HINCRBYFLOAT", "h", "a", "1.5"), 1.5),
        "HRANDFIELD": (("HRANDFIELD", "h"), None),
        "HRANDFIELD count": (("HRANDFIELD", "h", "-3"), []),
    }
    for name, (command, expected) in cases.items():
        r.delete("h")
        r.hset("h", mapping={"a": "10", "b": "20"})
        hexpire(r, "HPEXPIRE", "h", 20, "a", "b")
        time.sleep(0.06)
        assert r.execute_command(*command) == expected, name
        if name in ("HSETNX", "HINCRBY", "HINCRBYFLOAT"):
            # a was deleted and written anew; b, expired too, is still stored (not looked up).
            assert r.hlen("h") == 2 and r.httl("h", "a") == [-1], name
        elif name == "HSTRLEN":
            assert r.hlen("h") == 1, name
        else:
            # Every field looked up (HMGET) or all expired ones (HRANDFIELD): the hash is gone.
            assert r.exists("h") == 0, name


def test_hset_on_an_expired_field_not_yet_deleted(no_active) -> None:
    r = no_active
    r.hset("h", mapping={"a": 1, "b": 2})
    hexpire(r, "HPEXPIRE", "h", 20, "a")
    time.sleep(0.06)
    # Redis's hashTypeSet finds the field still stored: an update, not a new field.
    assert r.hset("h", "a", "new") == 0
    assert r.hget("h", "a") == b"new" and r.httl("h", "a") == [-1]
    # HDEL deletes it whether expired or not.
    hexpire(r, "HPEXPIRE", "h", 20, "b")
    time.sleep(0.06)
    assert r.hdel("h", "b") == 1


def test_active_expiry_deletes_fields_and_the_hash(r) -> None:
    r.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    r.hset("whole", mapping={"x": 1, "y": 2})
    hexpire(r, "HPEXPIRE", "h", 50, "a", "b")
    hexpire(r, "HPEXPIRE", "whole", 50, "x", "y")
    # Neither is accessed by field: only the background cycle can shrink them.
    wait_until(lambda: r.hlen("h") == 1 and r.exists("whole") == 0)
    assert r.hgetall("h") == {b"c": b"3"}


def test_active_expiry_follows_rename_and_copy(r) -> None:
    r.hset("h", mapping={"a": 1, "b": 2})
    hexpire(r, "HPEXPIRE", "h", 150, "a")
    r.rename("h", "moved")
    r.copy("moved", "copied")
    r.hset("copied", "c", 3)
    wait_until(lambda: r.hlen("moved") == 1 and r.hlen("copied") == 2)
    assert r.hkeys("moved") == [b"b"] and r.hkeys("copied") == [b"b", b"c"]


def test_active_expiry_of_a_hashtable_and_later_times(r) -> None:
    r.hset("big", mapping={f"f{i}": i for i in range(600)})
    fields = [f"f{i}" for i in range(300)]
    hexpire(r, "HPEXPIRE", "big", 50, *fields)
    hexpire(r, "HPEXPIRE", "big", 400, "f599")
    wait_until(lambda: r.hlen("big") == 300)
    assert r.hexists("big", "f599") == 1
    wait_until(lambda: r.hlen("big") == 299)
    assert r.httl("big", "f598") == [-1]


def test_transaction_with_field_expiration(r) -> None:
    r.hset("h", mapping={"a": 1, "b": 2})
    with r.pipeline(transaction=True) as p:
        p.execute_command("HEXPIRE", "h", 100, "FIELDS", 1, "a")
        p.execute_command("HTTL", "h", "FIELDS", 2, "a", "b")
        p.execute_command("HPERSIST", "h", "FIELDS", 1, "a")
        assert p.execute() == [[1], [100, -1], [1]]


# --- what is logged ------------------------------------------------------------------------------


def _aof_commands(srv) -> list[list[bytes]]:
    data = aof_path(srv).read_bytes()
    out: list[list[bytes]] = []
    i = 0
    while i < len(data):
        assert data[i:i + 1] == b"*"
        end = data.index(b"\r\n", i)
        n = int(data[i + 1:end])
        i = end + 2
        argv = []
        for _ in range(n):
            end = data.index(b"\r\n", i)
            size = int(data[i + 1:end])
            argv.append(data[end + 2:end + 2 + size])
            i = end + 2 + size + 2
        out.append(argv)
    return [argv for argv in out if argv[0].upper() != b"SELECT"]


def test_propagation_as_redis_7_4(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    r.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    before = int(time.time() * 1000)
    hexpire(r, "HEXPIRE", "h", 100, "a", "zz", "b", cond="NX")
    after = int(time.time() * 1000)
    hexpire(r, "HEXPIRE", "h", 100, "a", cond="NX")  # nothing set: nothing logged
    hexpire(r, "HPEXPIRE", "h", 0, "c", "zz")  # deleted: an HDEL only
    r.hpersist("h", "b", "zz")
    r.hpersist("h", "b")  # nothing changed
    r.hincrbyfloat("h", "n", "1.25")
    hexpire(r, "HPEXPIREAT", "nokey", 10**13, "a")
    cmds = _aof_commands(srv)
    assert cmds[0][0].lower() == b"hset"
    logged = cmds[1]
    assert logged[:2] == [b"HPEXPIREAT", b"h"]
    assert before + 100_000 <= int(logged[2]) <= after + 100_000
    assert logged[3:] == [b"NX", b"FIELDS", b"2", b"a", b"b"]
    assert cmds[2:] == [[b"HDEL", b"h", b"c"],
                        [b"HPERSIST", b"h", b"FIELDS", b"2", b"b", b"zz"],
                        [b"HSET", b"h", b"n", b"1.25"]]


def test_expired_fields_are_logged_as_hdel(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    r.hset("lazy", mapping={"a": 1, "b": 2})
    r.hset("active", mapping={"x": 1})
    r.config_set("active-expire-enabled", "no")
    hexpire(r, "HPEXPIRE", "lazy", 20, "a")
    time.sleep(0.06)
    assert r.hget("lazy", "a") is None
    r.config_set("active-expire-enabled", "yes")
    hexpire(r, "HPEXPIRE", "active", 20, "x")
    wait_until(lambda: r.exists("active") == 0)
    cmds = _aof_commands(srv)
    assert [b"HDEL", b"lazy", b"a"] in cmds and [b"HDEL", b"active", b"x"] in cmds


# --- persistence ---------------------------------------------------------------------------------


def _state(r: redis.Redis, key: str) -> tuple:
    fields = sorted(r.hkeys(key))
    return (r.hgetall(key), r.hpexpiretime(key, *fields) if fields else [])


def test_kill_9_restart_keeps_fields_and_ttls(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    r.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    r.hset("big", mapping={f"f{i}": "v" * (i % 70) for i in range(700)})
    hexpire(r, "HEXPIRE", "h", 1000, "a")
    hexpire(r, "HPEXPIRE", "h", 300, "b")
    hexpire(r, "HEXPIRE", "big", 2000, "f1", "f2", "f650")
    r.hincrbyfloat("h", "c", "0.5")
    before = {k: _state(r, k) for k in ("h", "big")}
    os.kill(srv.proc.pid, signal.SIGKILL)
    srv.proc.wait()
    srv2 = restart(srv)
    try:
        r = redis.Redis(port=srv2.port)
        after = {k: _state(r, k) for k in ("h", "big")}
        # b may have expired meanwhile: then it is gone, otherwise identical.
        if r.hexists("h", "b"):
            assert after == before
        else:
            assert after["big"] == before["big"]
            assert after["h"][0] == {b"a": b"1", b"c": b"3.5"}
        wait_until(lambda: r.hexists("h", "b") == 0)
        assert r.hpexpiretime("h", "a") == before["h"][1][:1]
    finally:
        srv2.cleanup()


def test_bgrewriteaof_round_trip_with_field_ttls(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    r.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    r.hset("many", mapping={f"f{i}": i for i in range(150)})
    when = int(time.time() * 1000) + 500_000
    hexpire(r, "HPEXPIREAT", "h", when, "a", "c")
    hexpire(r, "HPEXPIREAT", "many", when + 1, *[f"f{i}" for i in range(70)])
    hexpire(r, "HPEXPIRE", "h", 20, "b")
    r.config_set("active-expire-enabled", "no")
    time.sleep(0.06)  # b expired, not yet deleted: the rewrite leaves it out
    before = {k: _state(r, k) for k in ("h", "many")}
    assert r.bgrewriteaof()
    deadline = time.monotonic() + 20
    while r.info("persistence")["aof_rewrites"] < 1 or r.info("persistence")["aof_rewrite_in_progress"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    cmds = _aof_commands(srv)
    assert [b"HSET", b"h", b"a", b"1", b"c", b"3"] in cmds
    assert [b"HPEXPIREAT", b"h", b"%d" % when, b"FIELDS", b"2", b"a", b"c"] in cmds
    # Batches of 64 fields per command, as Redis's AOF_REWRITE_ITEMS_PER_CMD.
    many = [c for c in cmds if c[1] == b"many"]
    assert [len(c) for c in many] == [130, 130, 46, 69, 11]
    srv2 = restart(srv)
    try:
        r = redis.Redis(port=srv2.port)
        assert {k: _state(r, k) for k in ("h", "many")} == before
    finally:
        srv2.cleanup()


def test_the_schedule_forgets_deleted_hashes() -> None:
    from hashes import Hash
    from server.commands import hash_expire

    kept = []
    for i in range(10):
        h = Hash()
        h.set(b"a", b"1", 512, 64)
        h.set_expire_time(b"a", 10**13 + 100 + i)
        hash_expire.schedule(0, b"k%d" % i, h)
        h.set_expire_time(b"a", 10**13 - 1 - i)
        hash_expire.schedule(0, b"k%d" % i, h)  # an earlier time: the first entry is stale
        if i % 2 == 0:
            kept.append(h)
    del h
    mine = [e for e in hash_expire._heap if e[0] >= 10**13 - 20]
    assert len(mine) == 20
    del mine
    hash_expire.compact()
    left = [e[2] for e in hash_expire._heap if e[0] >= 10**13 - 20]
    assert len(left) == 5 and all(any(h is k for k in kept) for h in left)


def test_debug_reload_keeps_fields_and_ttls(server_factory) -> None:
    srv = server_factory()
    r = redis.Redis(port=srv.port)
    r.hset("h", mapping={"a": 1, "b": 2})
    r.hset("big", mapping={f"f{i}": i for i in range(600)})
    when = int(time.time() * 1000) + 100_000
    hexpire(r, "HPEXPIREAT", "h", when, "b")
    hexpire(r, "HPEXPIREAT", "big", when, "f7")
    before = {k: _state(r, k) for k in ("h", "big")}
    assert r.execute_command("DEBUG", "RELOAD") == b"OK"
    assert {k: _state(r, k) for k in ("h", "big")} == before


def _exec_after(port: int, change) -> list | None:
    """HSET k, WATCH k, change(another client), MULTI HLEN k EXEC: EXEC's replies, None when
    the change aborted it."""
    c = redis.Redis(port=port)
    other = redis.Redis(port=port)
    try:
        c.delete("k")
        c.hset("k", mapping={"a": 1, "b": 2})
        with c.pipeline() as pipe:
            pipe.watch("k")
            change(other)
            pipe.multi()
            pipe.hlen("k")
            try:
                return pipe.execute()
            except redis.WatchError:
                return None
    finally:
        c.close()
        other.close()


def test_watch_sees_field_writes_and_expiry(r, server) -> None:
    for change in (lambda o: o.hset("k", "a", 9),
                   lambda o: o.hdel("k", "b"),
                   lambda o: o.execute_command("HEXPIRE", "k", 100, "FIELDS", 1, "a"),
                   lambda o: o.execute_command("HPEXPIRE", "k", 0, "FIELDS", 1, "a"),
                   lambda o: o.hincrby("k", "a", 1)):
        assert _exec_after(server.port, change) is None
    # Commands that change nothing leave the transaction alone.
    for change in (lambda o: o.execute_command("HPERSIST", "k", "FIELDS", 1, "a"),
                   lambda o: o.hdel("k", "zz"),
                   lambda o: o.execute_command("HEXPIRE", "k", 100, "XX", "FIELDS", 1, "a")):
        assert _exec_after(server.port, change) == [2]


@pytest.mark.parametrize("name,arity,flags", [
    ("hexpire", -6, [b"write", b"denyoom", b"fast"]),
    ("hpexpire", -6, [b"write", b"denyoom", b"fast"]),
    ("hexpireat", -6, [b"write", b"denyoom", b"fast"]),
    ("hpexpireat", -6, [b"write", b"denyoom", b"fast"]),
    ("httl", -5, [b"readonly", b"fast"]),
    ("hpttl", -5, [b"readonly", b"fast"]),
    ("hexpiretime", -5, [b"readonly", b"fast"]),
    ("hpexpiretime", -5, [b"readonly", b"fast"]),
    ("hpersist", -5, [b"write", b"fast"]),
])
def test_command_info_as_redis_7_4(raw_r, name, arity, flags) -> None:
    # Redis 7.0 has no such commands: the expected entries are src/commands/<name>.json's.
    info = raw_r.execute_command("COMMAND", "INFO", name)[0]
    kind = b"@write" if b"write" in flags else b"@read"
    assert info[:7] == [name.encode(), arity, flags, 1, 1, 1, [kind, b"@hash", b"@fast"]]
    spec = dict(zip(info[8][0][::2], info[8][0][1::2], strict=True))
    expected = {"hpersist": [b"RW", b"update"], "httl": [b"RO", b"access"],
                "hpttl": [b"RO", b"access"], "hexpiretime": [b"RO", b"access"],
                "hpexpiretime": [b"RO", b"access"]}.get(name, [b"RW", b"update"])
    assert spec[b"flags"] == expected
    tips = info[7]
    assert tips == ([b"nondeterministic_output"] if name in ("httl", "hpttl") else [])
    docs = raw_r.execute_command("COMMAND", "DOCS", name)
    doc = dict(zip(docs[1][::2], docs[1][1::2], strict=True))
    assert doc[b"since"] == b"7.4.0" and doc[b"group"] == b"hash"
