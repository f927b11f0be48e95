"""XREAD: synchronous reads, `$` / `+` / explicit IDs, errors, RESP2/RESP3 shapes, and BLOCK."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
import redis
import redis.asyncio

from tests.helpers import (
    as_map,
    assert_same_as_redis,
    blocked_clients,
    call_raw,
    encode_command,
    plain,
    read_reply,
    wait_blocked,
)
from tests.serverproc import RawConnection

WRONGTYPE = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
NULL2, NULL3 = b"*-1\r\n", b"_\r\n"


def entry(eid: str, *fields: str) -> bytes:
    """The RESP encoding of one entry [id, [f, v, ...]]."""
    out = b"*2\r\n$%d\r\n%s\r\n*%d\r\n" % (len(eid), eid.encode(), len(fields))
    return out + b"".join(b"$%d\r\n%s\r\n" % (len(f), f.encode()) for f in fields)


def bulk(s: str) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(s), s.encode())


@pytest.fixture
def conns(server) -> Iterator:
    """Open raw connections on demand (closed after the test)."""
    opened: list[RawConnection] = []

    def open_conn(resp3: bool = False) -> RawConnection:
        conn = RawConnection(server.port)
        if resp3:
            call_raw(conn, "HELLO", "3")
        opened.append(conn)
        return conn

    yield open_conn
    for conn in opened:
        conn.close()


def assert_same_as_redis_resp3(server, real_redis, script: list[tuple]) -> None:
    """assert_same_as_redis on RESP3 connections."""
    replies = []
    for port in (server.port, real_redis.port):
        conn = RawConnection(port)
        try:
            call_raw(conn, "FLUSHALL")
            call_raw(conn, "HELLO", "3")
            replies.append([call_raw(conn, *cmd) for cmd in script])
        finally:
            conn.close()
    for cmd, mine, ref in zip(script, *replies, strict=True):
        assert mine == ref, f"{cmd!r}: rivulet {mine!r} != redis {ref!r}"


def block(conn: RawConnection, *args: str | int) -> None:
    conn.send(encode_command("XREAD", *args))


# --- synchronous reads ----------------------------------------------------------------------------


def test_read_after_id(rc: redis.Redis) -> None:
    for i in range(1, 5):
        rc.xadd("s", {"i": i}, id=f"{i}-0")
    reply = rc.xread({"s": "2-0"})
    entries = reply[b"s"][0] if isinstance(reply, dict) else reply[0][1]
    assert [eid for eid, _ in entries] == [b"3-0", b"4-0"]
    reply = rc.xread({"s": "0"}, count=1)
    entries = reply[b"s"][0] if isinstance(reply, dict) else reply[0][1]
    assert entries == [(b"1-0", {b"i": b"1"})]


def test_several_keys_in_request_order_skipping_empty_ones(raw: RawConnection) -> None:
    call_raw(raw, "XADD", "a", "1-1", "f", "a")
    call_raw(raw, "XADD", "b", "2-1", "f", "b")
    call_raw(raw, "XADD", "c", "3-1", "f", "c")
    reply = call_raw(raw, "XREAD", "STREAMS", "c", "missing", "b", "a", "0", "0", "0", "5")
    assert reply == (b"*2\r\n*2\r\n" + bulk("c") + b"*1\r\n" + entry("3-1", "f", "c")
                     + b"*2\r\n" + bulk("b") + b"*1\r\n" + entry("2-1", "f", "b"))
    call_raw(raw, "HELLO", "3")
    reply = call_raw(raw, "XREAD", "STREAMS", "c", "missing", "b", "a", "0", "0", "0", "5")
    assert reply == (b"%2\r\n" + bulk("c") + b"*1\r\n" + entry("3-1", "f", "c")
                     + bulk("b") + b"*1\r\n" + entry("2-1", "f", "b"))


def test_nothing_to_read_replies_null_array(raw: RawConnection) -> None:
    call_raw(raw, "XADD", "s", "1-1", "f", "v")
    assert call_raw(raw, "XREAD", "STREAMS", "s", "missing", "1-1", "0") == NULL2
    assert call_raw(raw, "XREAD", "STREAMS", "s", "$") == NULL2
    call_raw(raw, "HELLO", "3")
    assert call_raw(raw, "XREAD", "STREAMS", "s", "$") == NULL3


def test_count(rc: redis.Redis) -> None:
    for i in range(1, 6):
        rc.xadd("s", {"i": i}, id=f"{i}-0")
    for count, n in ((2, 2), (0, 5), (-3, 5), (100, 5)):  # 0 and negative mean no limit
        reply = rc.execute_command("XREAD", "COUNT", count, "STREAMS", "s", "0")
        entries = reply[b"s"][0] if isinstance(reply, dict) else reply[0][1]
        assert len(entries) == n
    # COUNT and BLOCK may repeat; the last one counts.
    reply = rc.execute_command("XREAD", "COUNT", 1, "COUNT", 3, "STREAMS", "s", "0")
    entries = reply[b"s"][0] if isinstance(reply, dict) else reply[0][1]
    assert len(entries) == 3


def test_same_key_twice_is_served_twice(server, real_redis) -> None:
    # In RESP3 the map repeats the key, as Redis's does.
    script = [("XADD", "s", "1-1", "f", "v"), ("XADD", "s", "2-1", "f", "v"),
              ("XREAD", "STREAMS", "s", "s", "0", "1-1"), ("XREAD", "STREAMS", "s", "s", "1-1", "2-1")]
    assert_same_as_redis(server, real_redis, script)
    assert_same_as_redis_resp3(server, real_redis, script)


def test_plus_reads_the_last_entry(raw: RawConnection) -> None:
    # Redis 7.4: `+` as an XREAD ID means the stream's last entry.
    call_raw(raw, "XADD", "s", "1-1", "a", "1")
    call_raw(raw, "XADD", "s", "2-1", "b", "2")
    call_raw(raw, "XADD", "t", "7-7", "c", "3")
    assert call_raw(raw, "XREAD", "STREAMS", "s", "t", "+", "+") == (
        b"*2\r\n*2\r\n" + bulk("s") + b"*1\r\n" + entry("2-1", "b", "2")
        + b"*2\r\n" + bulk("t") + b"*1\r\n" + entry("7-7", "c", "3"))
    assert call_raw(raw, "XREAD", "COUNT", "5", "STREAMS", "missing", "+") == NULL2
    # The last entry deleted: `+` still means "after last_id - 1", so nothing is left to read.
    call_raw(raw, "XDEL", "s", "2-1")
    assert call_raw(raw, "XREAD", "STREAMS", "s", "+") == NULL2


def test_plus_on_a_stream_without_ids(r: redis.Redis) -> None:
    r.xgroup_create("s", "g", id="$", mkstream=True)
    with pytest.raises(redis.ResponseError, match="^the stream last element ID is 0-0$"):
        r.execute_command("XREAD", "STREAMS", "s", "+")


def test_deleted_entries_are_not_read(rc: redis.Redis) -> None:
    for i in range(1, 5):
        rc.xadd("s", {"i": i}, id=f"{i}-0")
    rc.xdel("s", "2-0", "4-0")
    reply = rc.xread({"s": "0"})
    entries = reply[b"s"][0] if isinstance(reply, dict) else reply[0][1]
    assert [eid for eid, _ in entries] == [b"1-0", b"3-0"]
    assert rc.xread({"s": "3-0"}) in ([], {}, None)


# --- errors ---------------------------------------------------------------------------------------

_SYNTAX = b"-ERR syntax error\r\n"
_UNBALANCED = (b"-ERR Unbalanced 'xread' list of streams: for each stream key an ID or '$' must be "
               b"specified.\r\n")
_BAD_ID = b"-ERR Invalid stream ID specified as stream command argument\r\n"
XREAD_ERRORS = [
    (("XREAD", "STREAMS", "s"), b"-ERR wrong number of arguments for 'xread' command\r\n"),
    (("XREAD", "STREAMS", "s", "t", "0"), _UNBALANCED),
    (("XREAD", "COUNT", "1", "STREAMS", "s"), _UNBALANCED),
    (("XREAD", "COUNT", "1", "STREAMS"), _SYNTAX),
    (("XREAD", "COUNT", "1", "BLOCK"), _SYNTAX),
    (("XREAD", "COUNT", "1", "s", "0"), _SYNTAX),
    (("XREAD", "BLOCK", "1", "COUNT", "1"), _SYNTAX),  # STREAMS is mandatory
    (("XREAD", "FOO", "STREAMS", "s", "0"), _SYNTAX),
    (("XREAD", "COUNT", "x", "STREAMS", "s", "0"), b"-ERR value is not an integer or out of range\r\n"),
    (("XREAD", "BLOCK", "x", "STREAMS", "s", "0"), b"-ERR timeout is not an integer or out of range\r\n"),
    (("XREAD", "BLOCK", "1.5", "STREAMS", "s", "0"), b"-ERR timeout is not an integer or out of range\r\n"),
    (("XREAD", "BLOCK", "-1", "STREAMS", "s", "0"), b"-ERR timeout is negative\r\n"),
    (("XREAD", "BLOCK", "-1", "COUNT", "x", "STREAMS", "s", "0"), b"-ERR timeout is negative\r\n"),
    (("XREAD", "GROUP", "g", "c", "STREAMS", "s", "0"),
     b"-ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.\r\n"),
    (("XREAD", "NOACK", "STREAMS", "s", "0"),
     b"-ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.\r\n"),
    (("XREAD", "STREAMS", "s", ">"),
     b"-ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
     b"<consumer> option.\r\n"),
    (("XREAD", "STREAMS", "s", "x"), _BAD_ID),
    (("XREAD", "STREAMS", "s", "-"), _BAD_ID),
    (("XREAD", "STREAMS", "s", "(1"), _BAD_ID),
    (("XREAD", "STREAMS", "s", "t", "0", "1-x"), _BAD_ID),
    # Each key's type is checked just before its ID is parsed: the first bad key decides.
    (("XREAD", "STREAMS", "str", "0"), WRONGTYPE),
    (("XREAD", "STREAMS", "str", "x"), WRONGTYPE),
    (("XREAD", "STREAMS", "s", "str", "x", "0"), _BAD_ID),
    (("XREAD", "STREAMS", "s", "str", "0", "x"), WRONGTYPE),
    (("XREAD", "BLOCK", "10", "STREAMS", "str", "$"), WRONGTYPE),
    # The STREAMS option swallows everything after it: a key may be called "COUNT".
    (("XREAD", "STREAMS", "COUNT", "0"), NULL2),
]


@pytest.mark.parametrize(("argv", "expected"), XREAD_ERRORS, ids=[" ".join(a) for a, _ in XREAD_ERRORS])
def test_xread_errors(raw: RawConnection, argv: tuple, expected: bytes) -> None:
    call_raw(raw, "SET", "str", "x")
    call_raw(raw, "XADD", "s", "1-1", "f", "v")
    assert call_raw(raw, *argv) == expected


def test_xread_errors_match_redis(server, real_redis) -> None:
    # The Unbalanced text names the command as 'xread' since Redis 7.4 (the reference is 7.0).
    script: list[tuple] = [("SET", "str", "x"), ("XADD", "s", "1-1", "f", "v")]
    script += [argv for argv, expected in XREAD_ERRORS if expected != _UNBALANCED]
    assert_same_as_redis(server, real_redis, script)
    assert_same_as_redis_resp3(server, real_redis, script)


def test_block_timeout_out_of_range(raw: RawConnection) -> None:
    # Redis 7.4 adds the current time to the timeout and refuses an overflow.
    assert call_raw(raw, "XREAD", "BLOCK", str(2**63 - 1), "STREAMS", "s", "$") == (
        b"-ERR timeout is out of range\r\n")
    assert call_raw(raw, "XREAD", "BLOCK", str(2**63), "STREAMS", "s", "$") == (
        b"-ERR timeout is not an integer or out of range\r\n")


def test_command_getkeys(raw: RawConnection) -> None:
    def getkeys(*argv: str | int) -> bytes:
        return call_raw(raw, "COMMAND", "GETKEYS", *argv)

    assert getkeys("XREAD", "COUNT", 1, "BLOCK", 0, "STREAMS", "a", "b", "0", "0") == (
        b"*2\r\n$1\r\na\r\n$1\r\nb\r\n")
    assert getkeys("XREAD", "STREAMS", "streams", "0") == b"*1\r\n$7\r\nstreams\r\n"
    assert getkeys("XREAD", "BLOCK", "streams", "STREAMS", "k", "$") == b"*1\r\n$1\r\nk\r\n"
    for bad in (("XREAD", "STREAMS", "a", "b", "0"), ("XREAD", "FOO", "STREAMS", "a", "0"),
                ("XREAD", "COUNT", "1", "a", "0")):
        assert getkeys(*bad) == b"-ERR Invalid arguments specified for command\r\n"


def test_command_info_matches_redis(server, real_redis) -> None:
    # Arity, flags, key range, ACL categories, tips and key specs of every command of this slice.
    names = ("xadd", "xdel", "xtrim", "xsetid", "xlen", "xrange", "xrevrange")
    assert_same_as_redis(server, real_redis, [("COMMAND", "INFO", name) for name in names])
    # XREAD's too, but for its key spec: INCOMPLETE with a note since Redis's ACL fix (7.4.11,
    # 8.x), which the Redis installed here predates (tests/test_r8_misc.py checks it).
    ours, theirs = (plain(redis.Redis(port=p)) for p in (server.port, real_redis.port))
    try:
        mine, ref = (c.execute_command("COMMAND", "INFO", "xread")[0] for c in (ours, theirs))
        assert mine[:8] == ref[:8] and mine[9:] == ref[9:]
        spec, ref_spec = as_map(mine[8][0]), as_map(ref[8][0])
        assert spec.pop(b"notes").startswith(b"Incomplete because")
        assert spec.pop(b"flags") == [b"RO", b"access", b"incomplete"]
        ref_spec.pop(b"flags")
        assert spec == ref_spec
    finally:
        ours.close()
        theirs.close()
    assert_same_as_redis(server, real_redis, [
        ("COMMAND", "GETKEYSANDFLAGS", "XREAD", "COUNT", "2", "STREAMS", "a", "b", "c", "1", "2", "3"),
        ("COMMAND", "GETKEYSANDFLAGS", "XADD", "s", "*", "f", "v"),
        ("COMMAND", "GETKEYS", "XRANGE", "s", "-", "+"),
    ])


# --- BLOCK -----------------------------------------------------------------------------------------


def test_block_times_out_with_null(conns) -> None:
    c2, c3 = conns(), conns(resp3=True)
    t0 = time.monotonic()
    block(c2, "BLOCK", 100, "STREAMS", "s", "$")
    block(c3, "BLOCK", 100, "STREAMS", "s", "0")
    assert read_reply(c2) == NULL2
    assert read_reply(c3) == NULL3
    assert time.monotonic() - t0 >= 0.09


def test_block_woken_by_xadd_gets_only_new_entries(r: redis.Redis, conns) -> None:
    r.xadd("s", {"old": 1}, id="1-1")
    c = conns()
    block(c, "BLOCK", 0, "STREAMS", "s", "$")
    wait_blocked(r, 1)
    r.xadd("s", {"new": 2}, id="2-1")
    assert read_reply(c) == b"*1\r\n*2\r\n" + bulk("s") + b"*1\r\n" + entry("2-1", "new", "2")
    assert blocked_clients(r) == 0


def test_block_resp3_reply_is_a_map(r: redis.Redis, conns) -> None:
    c = conns(resp3=True)
    block(c, "BLOCK", 0, "STREAMS", "missing", "s", "$", "$")
    wait_blocked(r, 1)
    r.xadd("s", {"f": "v"}, id="5-5")
    assert read_reply(c) == b"%1\r\n" + bulk("s") + b"*1\r\n" + entry("5-5", "f", "v")


def test_dollar_on_missing_key_reads_everything_added(r: redis.Redis, conns) -> None:
    c = conns()
    block(c, "BLOCK", 0, "STREAMS", "s", "$")
    wait_blocked(r, 1)
    r.xadd("s", {"f": "v"}, id="0-1")  # the smallest possible ID is still after `$` = 0-0
    assert read_reply(c) == b"*1\r\n*2\r\n" + bulk("s") + b"*1\r\n" + entry("0-1", "f", "v")


def test_block_with_explicit_id_served_at_once_when_data_exists(r: redis.Redis, conns) -> None:
    r.xadd("s", {"f": "v"}, id="3-0")
    c = conns()
    assert call_raw(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "2") == (
        b"*1\r\n*2\r\n" + bulk("s") + b"*1\r\n" + entry("3-0", "f", "v"))
    assert blocked_clients(r) == 0


def test_block_on_several_keys_served_by_the_first_with_data(r: redis.Redis, conns) -> None:
    r.xadd("a", {"f": "a"}, id="1-0")
    c = conns()
    block(c, "BLOCK", 0, "STREAMS", "a", "b", "c", "$", "$", "$")
    wait_blocked(r, 1)
    r.xadd("c", {"f": "c"}, id="9-0")
    assert read_reply(c) == b"*1\r\n*2\r\n" + bulk("c") + b"*1\r\n" + entry("9-0", "f", "c")
    # Served once: later writes to the other keys find nobody waiting.
    r.xadd("a", {"f": "a"}, id="2-0")
    assert blocked_clients(r) == 0


def test_burst_of_xadds_wakes_once_with_everything(r: redis.Redis, conns) -> None:
    c = conns()
    block(c, "BLOCK", 0, "STREAMS", "s", "$")
    wait_blocked(r, 1)
    pipe = r.pipeline(transaction=False)
    for i in range(1, 6):
        pipe.xadd("s", {"i": i}, id=f"{i}-0")
    pipe.execute()
    expected = b"*1\r\n*2\r\n" + bulk("s") + b"*5\r\n" + b"".join(
        entry(f"{i}-0", "i", str(i)) for i in range(1, 6))
    assert read_reply(c) == expected


def test_burst_in_multi_wakes_once_with_everything(r: redis.Redis, conns) -> None:
    c = conns()
    block(c, "BLOCK", 0, "STREAMS", "s", "$")
    wait_blocked(r, 1)
    pipe = r.pipeline(transaction=True)
    for i in range(1, 4):
        pipe.xadd("s", {"i": i}, id=f"{i}-0")
    pipe.execute()
    reply = read_reply(c)
    assert reply.startswith(b"*1\r\n*2\r\n" + bulk("s") + b"*3\r\n")


def test_count_applies_to_the_woken_read(r: redis.Redis, conns) -> None:
    c = conns()
    block(c, "COUNT", 2, "BLOCK", 0, "STREAMS", "s", "$")
    wait_blocked(r, 1)
    pipe = r.pipeline(transaction=True)
    for i in range(1, 6):
        pipe.xadd("s", {"i": i}, id=f"{i}-0")
    pipe.execute()
    assert read_reply(c) == (b"*1\r\n*2\r\n" + bulk("s") + b"*2\r\n" + entry("1-0", "i", "1")
                             + entry("2-0", "i", "2"))


def test_every_blocked_client_is_served_in_fifo_order(r: redis.Redis, conns) -> None:
    # Each client pipelines a marker XADD after its XREAD: it runs once the client is released,
    # so the order of the markers is the order in which the clients were served.
    clients = [conns() for _ in range(3)]
    for n, c in enumerate(clients):
        c.send(encode_command("XREAD", "BLOCK", 0, "STREAMS", "s", "$")
               + encode_command("XADD", "order", "*", "client", n))
        wait_blocked(r, n + 1)
    r.xadd("s", {"f": "v"}, id="1-0")
    for c in clients:
        assert read_reply(c) == b"*1\r\n*2\r\n" + bulk("s") + b"*1\r\n" + entry("1-0", "f", "v")
        assert read_reply(c).startswith(b"$")
    assert [fields[b"client"] for _, fields in r.xrange("order")] == [b"0", b"1", b"2"]


def test_fifo_holds_whatever_the_connection_order(r: redis.Redis, conns) -> None:
    clients = [conns() for _ in range(3)]
    for n, c in enumerate(reversed(clients)):
        c.send(encode_command("XREAD", "BLOCK", 0, "STREAMS", "s", "$")
               + encode_command("XADD", "order", "*", "client", 2 - n))
        wait_blocked(r, n + 1)
    r.xadd("s", {"f": "v"}, id="1-0")
    for c in clients:
        read_reply(c)
        read_reply(c)
    assert [fields[b"client"] for _, fields in r.xrange("order")] == [b"2", b"1", b"0"]


def test_xadd_and_del_in_one_multi_wakes_nobody(r: redis.Redis, conns) -> None:
    r.xadd("s", {"f": "v"}, id="5-0")
    c = conns()
    block(c, "BLOCK", 0, "STREAMS", "s", "$")
    wait_blocked(r, 1)
    pipe = r.pipeline(transaction=True)
    pipe.xadd("s", {"f": "v"}, id="6-0").delete("s")
    pipe.execute()
    time.sleep(0.05)
    assert blocked_clients(r) == 1
    # `$` was fixed at 5-0 when the client blocked: a re-created stream must go past it.
    r.xadd("s", {"f": "v"}, id="1-0")
    time.sleep(0.05)
    assert blocked_clients(r) == 1
    r.xadd("s", {"f": "w"}, id="7-0")
    assert read_reply(c) == b"*1\r\n*2\r\n" + bulk("s") + b"*1\r\n" + entry("7-0", "f", "w")


def test_deleted_key_keeps_the_client_waiting(r: redis.Redis, conns) -> None:
    r.xadd("s", {"f": "v"}, id="1-0")
    c = conns()
    block(c, "BLOCK", 0, "STREAMS", "s", "$")
    wait_blocked(r, 1)
    r.delete("s")
    r.xadd("other", {"f": "v"}, id="1-0")
    time.sleep(0.05)
    assert blocked_clients(r) == 1
    r.xadd("s", {"f": "v"}, id="2-0")
    assert read_reply(c) == b"*1\r\n*2\r\n" + bulk("s") + b"*1\r\n" + entry("2-0", "f", "v")


def test_key_replaced_by_another_type_keeps_the_client_waiting(r: redis.Redis, conns) -> None:
    c = conns()
    block(c, "BLOCK", 300, "STREAMS", "s", "$")
    wait_blocked(r, 1)
    r.set("s", "now a string")
    time.sleep(0.05)
    assert blocked_clients(r) == 1
    assert read_reply(c) == NULL2  # the timeout, not WRONGTYPE


def test_other_key_of_wrong_type_fails_the_woken_read(r: redis.Redis, conns) -> None:
    # Redis 7.4 re-runs the whole command when a stream key is ready, type checks included.
    c = conns()
    block(c, "BLOCK", 0, "STREAMS", "a", "b", "$", "$")
    wait_blocked(r, 1)
    r.set("a", "x")
    time.sleep(0.05)
    assert blocked_clients(r) == 1
    r.xadd("b", {"f": "v"}, id="1-0")
    assert read_reply(c) == WRONGTYPE
    assert blocked_clients(r) == 0


def test_rename_onto_the_key_wakes_the_reader(r: redis.Redis, conns) -> None:
    r.xadd("src", {"f": "v"}, id="3-0")
    c = conns()
    block(c, "BLOCK", 0, "STREAMS", "s", "$")
    wait_blocked(r, 1)
    r.rename("src", "s")
    assert read_reply(c) == b"*1\r\n*2\r\n" + bulk("s") + b"*1\r\n" + entry("3-0", "f", "v")


def test_block_zero_waits_until_data_arrives(r: redis.Redis, conns) -> None:
    c = conns()
    block(c, "BLOCK", 0, "STREAMS", "s", "$")
    wait_blocked(r, 1)
    time.sleep(0.3)
    assert blocked_clients(r) == 1
    r.xadd("s", {"f": "v"}, id="1-0")
    assert read_reply(c).startswith(b"*1\r\n")


def test_plus_while_blocked_reads_the_last_entry_then(r: redis.Redis, conns) -> None:
    # Redis does not rewrite `+` when blocking: the woken read resolves it against the new data.
    c = conns()
    block(c, "BLOCK", 0, "STREAMS", "s", "+")
    wait_blocked(r, 1)
    pipe = r.pipeline(transaction=True)
    pipe.xadd("s", {"i": 1}, id="1-0").xadd("s", {"i": 2}, id="2-0")
    pipe.execute()
    assert read_reply(c) == b"*1\r\n*2\r\n" + bulk("s") + b"*1\r\n" + entry("2-0", "i", "2")


def test_block_inside_multi_replies_null_at_once(raw: RawConnection) -> None:
    raw.send(b"MULTI\r\nXREAD BLOCK 0 STREAMS s $\r\nEXEC\r\n")
    assert raw.read_exactly(5 + 9 + 9) == b"+OK\r\n+QUEUED\r\n*1\r\n*-1\r\n"
    call_raw(raw, "HELLO", "3")
    raw.send(b"MULTI\r\nXREAD BLOCK 0 STREAMS s 0\r\nEXEC\r\n")
    assert raw.read_exactly(5 + 9 + 7) == b"+OK\r\n+QUEUED\r\n*1\r\n_\r\n"


def test_disconnected_client_is_forgotten(r: redis.Redis, server, conns) -> None:
    gone = RawConnection(server.port)
    block(gone, "BLOCK", 0, "STREAMS", "s", "$")
    stays = conns()
    wait_blocked(r, 1)
    block(stays, "BLOCK", 0, "STREAMS", "s", "$")
    wait_blocked(r, 2)
    gone.close()
    wait_blocked(r, 1)
    r.xadd("s", {"f": "v"}, id="1-0")
    assert read_reply(stays).startswith(b"*1\r\n")
    assert blocked_clients(r) == 0
    assert r.ping()


def test_pipelined_commands_wait_for_the_blocked_read(r: redis.Redis, conns) -> None:
    c = conns()
    c.send(encode_command("XREAD", "BLOCK", 0, "STREAMS", "s", "$") + encode_command("XLEN", "s"))
    wait_blocked(r, 1)
    r.xadd("s", {"f": "v"}, id="1-0")
    assert read_reply(c).startswith(b"*1\r\n")
    assert read_reply(c) == b":1\r\n"


def test_client_unblock(r: redis.Redis, conns) -> None:
    c = conns()
    cid = int(call_raw(c, "CLIENT", "ID")[1:-2])
    assert r.execute_command("CLIENT", "UNBLOCK", cid) == 0  # not blocked yet
    block(c, "BLOCK", 0, "STREAMS", "s", "$")
    wait_blocked(r, 1)
    assert r.execute_command("CLIENT", "UNBLOCK", cid) == 1
    assert read_reply(c) == NULL2
    block(c, "BLOCK", 0, "STREAMS", "s", "$")
    wait_blocked(r, 1)
    assert r.execute_command("CLIENT", "UNBLOCK", cid, "ERROR") == 1
    assert read_reply(c) == b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
    assert r.execute_command("CLIENT", "UNBLOCK", cid) == 0


def test_blocking_reader_in_another_db_is_not_woken(r: redis.Redis, conns) -> None:
    c = conns()
    call_raw(c, "SELECT", "1")
    block(c, "BLOCK", 200, "STREAMS", "s", "$")
    wait_blocked(r, 1)
    r.xadd("s", {"f": "v"}, id="1-0")  # db 0
    assert read_reply(c) == NULL2


def test_woken_read_serves_every_key_with_data(r: redis.Redis, conns) -> None:
    # Redis 7.4 re-runs the whole read for a woken client: every key with new data is in the
    # reply, in the order of the request (Redis 7.0 only served the key that became ready).
    r.xadd("a", {"f": "0"}, id="1-0")
    c = conns()
    block(c, "COUNT", 2, "BLOCK", 0, "STREAMS", "a", "b", "$", "$")
    wait_blocked(r, 1)
    pipe = r.pipeline(transaction=True)
    pipe.xadd("b", {"f": "1"}, id="5-0").xadd("b", {"f": "2"}, id="6-0")
    pipe.xadd("b", {"f": "3"}, id="7-0").xadd("a", {"f": "4"}, id="2-0")
    pipe.execute()
    assert read_reply(c) == (
        b"*2\r\n*2\r\n" + bulk("a") + b"*1\r\n" + entry("2-0", "f", "4")
        + b"*2\r\n" + bulk("b") + b"*2\r\n" + entry("5-0", "f", "1") + entry("6-0", "f", "2"))


def test_blocking_matches_redis(server, real_redis) -> None:
    # The same blocking scenario against both servers: a reader blocked on `$` of two streams,
    # woken by a burst of writes to one of them, in RESP2 and RESP3.
    def run(port: int, resp3: bool) -> list[bytes]:
        with redis.Redis(port=port) as w:
            w.flushall()
            w.xadd("a", {"f": "0"}, id="1-0")
            reader = RawConnection(port)
            try:
                if resp3:
                    call_raw(reader, "HELLO", "3")
                block(reader, "COUNT", 2, "BLOCK", 0, "STREAMS", "a", "b", "$", "$")
                wait_blocked(w, 1)
                pipe = w.pipeline(transaction=True)
                pipe.xadd("b", {"f": "1"}, id="5-0").xadd("b", {"f": "2"}, id="6-0")
                pipe.xadd("b", {"f": "3"}, id="7-0")
                pipe.execute()
                woken = read_reply(reader)
                timed_out = call_raw(reader, "XREAD", "BLOCK", "20", "STREAMS", "a", "$")
                return [woken, timed_out]
            finally:
                reader.close()

    for resp3 in (False, True):
        assert run(server.port, resp3) == run(real_redis.port, resp3)


# --- asyncio client ---------------------------------------------------------------------------------


async def test_async_blocking_read(ar, server) -> None:
    writer = redis.asyncio.Redis(port=server.port)
    try:
        await ar.xadd("s", {"f": "old"}, id="1-0")
        reader = asyncio.create_task(ar.xread({"s": "$"}, block=2000))
        while int((await writer.info("clients"))["blocked_clients"]) != 1:
            await asyncio.sleep(0.005)
        await writer.xadd("s", {"f": "new"}, id="2-0")
        reply = await asyncio.wait_for(reader, 2)
        assert reply == {b"s": [[(b"2-0", {b"f": b"new"})]]}
        assert await ar.xread({"s": "$"}, block=50) in ({}, None, [])
        assert await ar.xread({"s": "0"}, count=1) == {b"s": [[(b"1-0", {b"f": b"old"})]]}
    finally:
        await writer.aclose()
