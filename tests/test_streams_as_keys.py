"""Streams are keys like any other: TYPE, DEL, RENAME, COPY, expiry, FLUSHDB, SCAN, WATCH/MULTI,
databases, and the stream-node-max-entries setting."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import redis

from tests.helpers import call_raw, fill_stream, xinfo_stream
from tests.serverproc import RawConnection


def ids(r: redis.Redis, key: str) -> list[bytes]:
    return [eid for eid, _ in r.xrange(key)]


@pytest.fixture
def node_config(r: redis.Redis) -> Iterator[redis.Redis]:
    old = r.config_get("stream-node-max-entries")["stream-node-max-entries"]
    yield r
    r.config_set("stream-node-max-entries", old)


def test_type_and_exists(rc: redis.Redis, raw: RawConnection) -> None:
    rc.xadd("s", {"f": "v"}, id="1-0")
    assert rc.type("s") == b"stream"
    assert rc.exists("s") == 1
    assert call_raw(raw, "TYPE", "s") == b"+stream\r\n"


def test_del_and_unlink(rc: redis.Redis) -> None:
    rc.xadd("a", {"f": "v"}, id="1-0")
    rc.xadd("b", {"f": "v"}, id="1-0")
    assert rc.delete("a") == 1
    assert rc.unlink("b") == 1
    assert rc.exists("a", "b") == 0
    assert rc.xlen("a") == 0 and rc.xrange("b") == []
    # A new stream under the same name starts from scratch.
    assert rc.xadd("a", {"f": "v"}, id="0-1") == b"0-1"


def test_empty_stream_is_still_a_key(rc: redis.Redis) -> None:
    fill_stream(rc, 3, "s")
    rc.xdel("s", "1-0", "2-0", "3-0")
    assert rc.exists("s") == 1 and rc.type("s") == b"stream"
    rc.xadd("t", {"f": "v"}, id="1-0")
    rc.xtrim("t", maxlen=0, approximate=False)
    assert rc.exists("t") == 1 and rc.xlen("t") == 0
    assert sorted(rc.keys("*")) == [b"s", b"t"]


def test_rename_moves_the_stream(rc: redis.Redis) -> None:
    fill_stream(rc, 3, "s")
    rc.rename("s", "t")
    assert rc.exists("s") == 0
    assert ids(rc, "t") == [b"1-0", b"2-0", b"3-0"]
    # The metadata travels too: the last ID still forbids going back.
    with pytest.raises(redis.ResponseError, match="equal or smaller"):
        rc.xadd("t", {"f": "v"}, id="2-0")
    rc.xadd("t", {"f": "v"}, id="4-0")
    assert rc.xlen("t") == 4
    rc.xadd("s", {"f": "v"}, id="1-0")  # the old name is an independent, new stream
    assert rc.xlen("s") == 1 and rc.xlen("t") == 4


def test_copy_is_independent(rc: redis.Redis) -> None:
    fill_stream(rc, 3, "s")
    assert rc.copy("s", "c") == 1
    assert ids(rc, "c") == ids(rc, "s")
    rc.xadd("c", {"f": "new"}, id="9-0")
    rc.xdel("s", "1-0")
    rc.xtrim("c", maxlen=2, approximate=False)
    assert ids(rc, "s") == [b"2-0", b"3-0"]
    assert ids(rc, "c") == [b"3-0", b"9-0"]
    rc.execute_command("XSETID", "s", "50-0")
    assert rc.xadd("c", {"f": "v"}, id="10-0") == b"10-0"  # the copy's last ID did not move
    with pytest.raises(redis.ResponseError, match="equal or smaller"):
        rc.xadd("s", {"f": "v"}, id="10-0")


def test_copy_of_fields_is_deep(r: redis.Redis) -> None:
    r.xadd("s", {"f": "v"}, id="1-0")
    r.copy("s", "c")
    r.delete("s")
    r.xadd("s", {"g": "w"}, id="1-0")
    assert r.xrange("c") == [(b"1-0", {b"f": b"v"})]


def test_copy_to_another_db_and_replace(r: redis.Redis, server) -> None:
    fill_stream(r, 2, "s")
    assert r.copy("s", "s", destination_db=1) == 1
    other = redis.Redis(port=server.port, db=1)
    try:
        assert ids(other, "s") == [b"1-0", b"2-0"]
        other.xadd("s", {"f": "v"}, id="3-0")
        assert r.xlen("s") == 2
        assert r.copy("s", "s", destination_db=1) == 0
        assert r.copy("s", "s", destination_db=1, replace=True) == 1
        assert other.xlen("s") == 2
    finally:
        other.close()


def test_copy_keeps_group_state_independent(r: redis.Redis) -> None:
    r.xgroup_create("s", "g", id="0", mkstream=True)
    fill_stream(r, 2, "s")
    r.copy("s", "c")
    r.xreadgroup("g", "alice", {"c": ">"})
    assert r.xpending("c", "g")["pending"] == 2
    assert r.xpending("s", "g")["pending"] == 0


def test_expire(rc: redis.Redis) -> None:
    fill_stream(rc, 2, "s")
    assert rc.pexpire("s", 60) is True
    assert 0 < rc.pttl("s") <= 60
    rc.xadd("s", {"f": "v"}, id="3-0")  # writing to a stream keeps its TTL, as in Redis
    assert rc.pttl("s") > 0
    time.sleep(0.1)
    assert rc.exists("s") == 0
    assert rc.xlen("s") == 0
    assert rc.xadd("s", {"f": "v"}, id="0-1") == b"0-1"  # a fresh stream
    assert rc.ttl("s") == -1


def test_flushdb(rc: redis.Redis) -> None:
    fill_stream(rc, 2, "s")
    rc.flushdb()
    assert rc.exists("s") == 0
    assert rc.xadd("s", {"f": "v"}, id="0-1") == b"0-1"


def test_scan_type_stream(r: redis.Redis) -> None:
    r.xadd("s1", {"f": "v"}, id="1-0")
    r.xadd("s2", {"f": "v"}, id="1-0")
    r.set("str", "x")
    assert sorted(r.scan_iter(_type="stream")) == [b"s1", b"s2"]
    assert list(r.scan_iter(_type="string")) == [b"str"]


def test_databases_are_separate(r: redis.Redis, server) -> None:
    other = redis.Redis(port=server.port, db=2)
    try:
        r.xadd("s", {"f": "v"}, id="1-0")
        assert other.exists("s") == 0
        other.xadd("s", {"f": "w"}, id="1-0")
        assert r.xrange("s") == [(b"1-0", {b"f": b"v"})]
    finally:
        other.close()


# --- WATCH / MULTI --------------------------------------------------------------------------------


def _watched_exec(r: redis.Redis, server, change) -> list | None:
    """WATCH s, let `change` run on another connection, then EXEC: None when aborted."""
    other = redis.Redis(port=server.port)
    try:
        with r.pipeline(transaction=True) as pipe:
            pipe.watch("s")
            change(other)
            pipe.multi()
            pipe.xlen("s")
            try:
                return pipe.execute()
            except redis.WatchError:
                return None
    finally:
        other.close()


@pytest.mark.parametrize("change", [
    lambda c: c.xadd("s", {"f": "v"}, id="9-0"),
    lambda c: c.xdel("s", "1-0"),
    lambda c: c.xtrim("s", maxlen=1, approximate=False),
    lambda c: c.delete("s"),
    lambda c: c.xadd("s", {"f": "v"}, id="9-0", maxlen=0),
], ids=["xadd", "xdel", "xtrim", "del", "xadd-maxlen-0"])
def test_stream_writes_abort_watchers(r: redis.Redis, server, change) -> None:
    fill_stream(r, 2, "s")
    assert _watched_exec(r, server, change) is None


@pytest.mark.parametrize("change", [
    lambda c: c.xdel("s", "7-0"),
    lambda c: c.xtrim("s", maxlen=10, approximate=False),
    lambda c: c.xrange("s"),
    lambda c: c.xread({"s": "0"}),
    lambda c: c.xadd("other", {"f": "v"}),
    lambda c: c.execute_command("XSETID", "s", "50-0"),
], ids=["xdel-nothing", "xtrim-nothing", "xrange", "xread", "other-key", "xsetid"])
def test_no_op_writes_and_reads_do_not_abort_watchers(r: redis.Redis, server, change) -> None:
    # XDEL / XTRIM that remove nothing do not touch the key, as in Redis; XSETID does not signal
    # the key in Redis either (a quirk kept for compatibility).
    fill_stream(r, 2, "s")
    assert _watched_exec(r, server, change) == [2]


def test_watch_behaviour_matches_redis(server, real_redis) -> None:
    changes = [("XADD", "s", "9-0", "f", "v"), ("XDEL", "s", "1-0"), ("XDEL", "s", "7-0"),
               ("XTRIM", "s", "MAXLEN", "1"), ("XTRIM", "s", "MAXLEN", "10"),
               ("XSETID", "s", "50-0"), ("XADD", "s", "NOMKSTREAM", "MAXLEN", "0", "9-0", "f", "v")]
    for change in changes:
        outcomes = []
        for port in (server.port, real_redis.port):
            r = redis.Redis(port=port)
            try:
                r.flushall()
                fill_stream(r, 2, "s")
                outcomes.append(_watched_exec(r, _Port(port), lambda c, cmd=change: c.execute_command(*cmd)))
            finally:
                r.close()
        assert outcomes[0] == outcomes[1], change


class _Port:
    def __init__(self, port: int) -> None:
        self.port = port


def test_stream_commands_in_multi(raw: RawConnection) -> None:
    raw.send(b"MULTI\r\nXADD s 1-1 a 1\r\nXADD s 1-1 a 1\r\nXLEN s\r\nXRANGE s - +\r\nEXEC\r\n")
    expected = (b"+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*4\r\n$3\r\n1-1\r\n"
                b"-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n"
                b":1\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n")
    assert raw.read_exactly(len(expected)) == expected


def test_arity_errors_abort_multi(raw: RawConnection) -> None:
    raw.send(b"MULTI\r\nXADD s\r\nEXEC\r\n")
    expected = (b"+OK\r\n-ERR wrong number of arguments for 'xadd' command\r\n"
                b"-EXECABORT Transaction discarded because of previous errors.\r\n")
    assert raw.read_exactly(len(expected)) == expected


# --- configuration --------------------------------------------------------------------------------


def test_node_max_entries_applies_to_new_nodes(node_config: redis.Redis) -> None:
    r = node_config
    r.config_set("stream-node-max-entries", 2)
    fill_stream(r, 6, "s")
    assert xinfo_stream(r, "s")["radix-tree-keys"] == 3
    r.config_set("stream-node-max-entries", 100)
    for i in range(7, 12):
        r.xadd("s", {"i": i}, id=f"{i}-0")
    # The limit is checked on each append, as in Redis: the last node now has room to grow.
    assert xinfo_stream(r, "s")["radix-tree-keys"] == 3
    assert r.xlen("s") == 11
    fill_stream(r, 6, "fresh")
    assert xinfo_stream(r, "fresh")["radix-tree-keys"] == 1


def test_node_max_entries_matches_redis(node_config: redis.Redis, server, real_redis) -> None:
    def nodes(port: int) -> list[int]:
        with redis.Redis(port=port) as c:
            c.flushall()
            c.config_set("stream-node-max-entries", 3)
            out = []
            for i in range(1, 11):
                c.xadd("s", {"i": i}, id=f"{i}-0")
                out.append(xinfo_stream(c, "s")["radix-tree-keys"])
            c.xtrim("s", maxlen=4, approximate=True)
            out.append(xinfo_stream(c, "s")["radix-tree-keys"])
            out.append(c.xlen("s"))
            c.config_set("stream-node-max-entries", 100)
            return out

    assert nodes(server.port) == nodes(real_redis.port)


async def test_async_key_commands(ar) -> None:
    await ar.xadd("s", {"f": "v"}, id="1-0")
    assert await ar.type("s") == b"stream"
    assert await ar.copy("s", "c") is True
    await ar.xadd("c", {"f": "w"}, id="2-0")
    assert await ar.xlen("s") == 1 and await ar.xlen("c") == 2
    assert [k async for k in ar.scan_iter(_type="stream")] in ([b"s", b"c"], [b"c", b"s"])
    assert await ar.delete("s", "c") == 2
