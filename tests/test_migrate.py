"""MIGRATE to another Rivulet, to a real Redis 7.0 and 7.4, and from Redis to Rivulet."""

from __future__ import annotations

import pytest
import redis

from tests.dump_helpers import redis74, snapshot  # noqa: F401  (fixture)
from tests.helpers import aof_path, assert_same_as_redis
from tests.serverproc import free_port

FAR_MS = 4102444800000


@pytest.fixture
def target(server_factory):
    srv = server_factory()
    with redis.Redis(port=srv.port) as c:
        yield srv, c


def test_migrate_moves_a_key_with_its_ttl(r: redis.Redis, target) -> None:
    srv, t = target
    r.set("k", "v")
    r.pexpireat("k", FAR_MS)
    assert r.migrate("127.0.0.1", srv.port, "k", 0, 1000) in (True, b"OK")
    assert r.exists("k") == 0
    assert t.get("k") == b"v"
    # Sent as the time left, which the target adds to its clock: a few ms either way.
    assert abs(t.pexpiretime("k") - FAR_MS) < 2000


def test_migrate_every_type(r: redis.Redis, target) -> None:
    srv, t = target
    r.rpush("l", *range(300))
    r.hset("h", mapping={f"f{i}": i for i in range(600)})
    r.sadd("s", "a", "b", 1)
    r.zadd("z", {"a": 1.5, "b": -2})
    r.set("str", "x" * 100)
    keys = ["l", "h", "s", "z", "str"]
    before = [snapshot(r, k) for k in keys]
    assert r.migrate("127.0.0.1", srv.port, keys, 0, 1000, copy=True) in (True, b"OK")
    assert [snapshot(t, k) for k in keys] == before
    assert r.exists(*keys) == 5  # COPY leaves them


def test_migrate_replace_busykey_and_db(r: redis.Redis, target) -> None:
    srv, t = target
    r.set("k", "new")
    t.set("k", "old")
    with pytest.raises(redis.ResponseError) as err:
        r.migrate("127.0.0.1", srv.port, "k", 0, 1000)
    assert str(err.value) == "Target instance replied with error: BUSYKEY Target key name already exists."
    assert r.get("k") == b"new"  # nothing moved
    assert r.migrate("127.0.0.1", srv.port, "k", 0, 1000, replace=True) in (True, b"OK")
    assert t.get("k") == b"new" and r.exists("k") == 0
    r.set("k2", "in db 3")
    assert r.migrate("127.0.0.1", srv.port, "k2", 3, 1000) in (True, b"OK")
    with redis.Redis(port=srv.port, db=3) as t3:
        assert t3.get("k2") == b"in db 3"
    # The connection is kept and its selected database remembered: back to 0 needs a SELECT.
    r.set("k3", "in db 0")
    assert r.migrate("127.0.0.1", srv.port, "k3", 0, 1000) in (True, b"OK")
    assert t.get("k3") == b"in db 0"


def test_migrate_keys_form_skips_missing_keys(r: redis.Redis, target) -> None:
    srv, t = target
    r.set("a", "1")
    r.set("c", "3")
    assert r.execute_command("MIGRATE", "127.0.0.1", srv.port, "", 0, 1000, "KEYS", "a", "b", "c") in (True, b"OK")
    assert t.mget("a", "b", "c") == [b"1", None, b"3"]
    assert r.exists("a", "c") == 0
    assert r.execute_command("MIGRATE", "127.0.0.1", srv.port, "", 0, 1000, "KEYS", "a", "b") in (b"NOKEY", "NOKEY")


def test_migrate_auth(r: redis.Redis, server_factory) -> None:
    srv = server_factory("--requirepass", "sesame")
    r.set("k", "v")
    with pytest.raises(redis.ResponseError, match="^Target instance replied with error: "):
        r.migrate("127.0.0.1", srv.port, "k", 0, 1000)
    with pytest.raises(redis.ResponseError, match="^Target instance replied with error: WRONGPASS"):
        r.migrate("127.0.0.1", srv.port, "k", 0, 1000, auth="wrong")
    assert r.exists("k") == 1
    assert r.migrate("127.0.0.1", srv.port, "k", 0, 1000, auth="sesame") in (True, b"OK")
    r.set("k2", "v2")
    assert r.execute_command("MIGRATE", "127.0.0.1", srv.port, "k2", 0, 1000,
                             "AUTH2", "default", "sesame") in (True, b"OK")
    with redis.Redis(port=srv.port, password="sesame") as t:
        assert t.mget("k", "k2") == [b"v", b"v2"]


def test_migrate_errors_same_as_redis(server, real_redis) -> None:
    closed = free_port()
    script = [
        ("MIGRATE", "127.0.0.1", str(closed), "nosuch", "0", "100"),
        ("SET", "k", "v"),
        ("MIGRATE", "127.0.0.1", str(closed), "k", "0", "100", "BADOPT"),
        ("MIGRATE", "127.0.0.1", str(closed), "k", "0", "100", "AUTH"),
        ("MIGRATE", "127.0.0.1", str(closed), "k", "0", "100", "AUTH2", "user"),
        ("MIGRATE", "127.0.0.1", str(closed), "k", "0", "100", "KEYS", "k"),
        ("MIGRATE", "127.0.0.1", str(closed), "k", "x", "100"),
        ("MIGRATE", "127.0.0.1", str(closed), "k", "0", "x"),
        ("MIGRATE", "127.0.0.1", str(closed), "k", "0", "100"),
        ("MIGRATE", "127.0.0.1", str(closed), "", "0", "100", "COPY", "KEYS", "nosuch"),
        ("MIGRATE", "127.0.0.1", str(closed), "k", "0"),
        ("GET", "k"),
        ("COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "5", "AUTH", "keys", "KEYS", "a", "b"),
        ("COMMAND", "GETKEYS", "MIGRATE", "h", "1", "k", "0", "5", "COPY"),
    ]
    assert_same_as_redis(server, real_redis, script)


def test_migrate_to_redis70_is_refused_for_the_payload_version(r: redis.Redis, real_redis) -> None:
    # Redis 7.0 reads RDB versions up to 10: Rivulet's payloads are 7.4's (12). A 7.0 vs 7.4 difference.
    r.set("k", "v")
    with redis.Redis(port=real_redis.port) as theirs:
        theirs.flushall()
    with pytest.raises(redis.ResponseError) as err:
        r.migrate("127.0.0.1", real_redis.port, "k", 0, 1000)
    assert str(err.value) == ("Target instance replied with error: ERR DUMP payload version or checksum "
                              "are wrong")
    assert r.get("k") == b"v"


def test_migrate_from_redis70_to_rivulet(r: redis.Redis, server, real_redis) -> None:
    with redis.Redis(port=real_redis.port) as theirs:
        theirs.flushall()
        theirs.rpush("l", "a", "b", 3)
        theirs.hset("h", mapping={"f": "v"})
        theirs.set("s", "x", px=100000)
        assert theirs.migrate("127.0.0.1", server.port, ["l", "h", "s"], 0, 1000) in (True, b"OK")
        assert theirs.exists("l", "h", "s") == 0
    assert r.lrange("l", 0, -1) == [b"a", b"b", b"3"]
    assert r.hgetall("h") == {b"f": b"v"}
    assert 0 < r.pttl("s") <= 100000


def test_migrate_to_redis74(r: redis.Redis, redis74: redis.Redis) -> None:  # noqa: F811
    redis74.flushall()
    r.hset("h", mapping={"a": "1", "b": "2"})
    r.execute_command("HPEXPIREAT", "h", FAR_MS, "FIELDS", 1, "a")
    r.sadd("s", "x", "y")
    before = [snapshot(r, "h"), snapshot(r, "s")]
    port = redis74.connection_pool.connection_kwargs["port"]
    assert r.migrate("127.0.0.1", port, ["h", "s"], 0, 1000) in (True, b"OK")
    assert [snapshot(redis74, "h"), snapshot(redis74, "s")] == before


def test_migrate_is_propagated_as_del(server_factory, target) -> None:
    srv, t = target
    src = server_factory("--appendonly", "yes", "--appendfsync", "always")
    with redis.Redis(port=src.port) as c:
        c.set("a", "1")
        c.set("b", "2")
        c.execute_command("MIGRATE", "127.0.0.1", srv.port, "", 0, 1000, "KEYS", "a", "b")
        c.set("c", "3")
        c.migrate("127.0.0.1", srv.port, "c", 0, 1000, copy=True)
    data = aof_path(src).read_bytes()
    assert b"*3\r\n$3\r\nDEL\r\n$1\r\na\r\n$1\r\nb\r\n" in data
    assert b"MIGRATE" not in data and data.count(b"DEL") == 1


def test_command_info_same_as_redis(server, real_redis) -> None:
    replies = []
    for port in (server.port, real_redis.port):
        with redis.Redis(port=port) as c:
            c.response_callbacks.clear()
            replies.append(c.execute_command("COMMAND", "INFO", "migrate")[0][:7])
    assert replies[0] == replies[1]
