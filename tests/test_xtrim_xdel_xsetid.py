"""XDEL, XTRIM and XSETID: replies, metadata effects and every error, in Redis's order."""

from __future__ import annotations

import pytest
import redis

from tests.helpers import assert_same_as_redis, call_raw, fill_stream, node_max_entries_reset, xinfo_stream
from tests.serverproc import RawConnection

MAX = 18446744073709551615
WRONGTYPE = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
_BAD_ID = b"-ERR Invalid stream ID specified as stream command argument\r\n"
_NOT_INT = b"-ERR value is not an integer or out of range\r\n"
_SYNTAX = b"-ERR syntax error\r\n"


def ids(r: redis.Redis, key: str = "s") -> list[str]:
    return [eid.decode() for eid, _ in r.xrange(key)]


# --- XDEL ----------------------------------------------------------------------------------------------


def test_xdel_counts_existing_entries_only(rc: redis.Redis) -> None:
    fill_stream(rc, 5)
    assert rc.xdel("s", "2-0", "4-0", "9-0", "2-0") == 2  # missing and repeated IDs count 0
    assert ids(rc) == ["1-0", "3-0", "5-0"]
    assert rc.xdel("s", "2-0") == 0
    assert rc.xdel("missing", "1-0") == 0
    assert rc.execute_command("XDEL", "s", "3") == 1  # a lone ms means ms-0


def test_xdel_of_every_entry_keeps_the_stream(rc: redis.Redis) -> None:
    fill_stream(rc, 2)
    assert rc.xdel("s", "1-0", "2-0") == 2
    assert rc.exists("s") == 1 and rc.type("s") == b"stream" and rc.xlen("s") == 0
    # The last ID is kept: an older ID cannot be added back.
    with pytest.raises(redis.ResponseError, match="equal or smaller"):
        rc.xadd("s", {"f": "v"}, id="2-0")


def test_xdel_parses_every_id_before_deleting(raw: RawConnection) -> None:
    for i in (1, 2):
        call_raw(raw, "XADD", "s", f"{i}-0", "f", "v")
    assert call_raw(raw, "XDEL", "s", "1-0", "bogus") == _BAD_ID
    assert call_raw(raw, "XDEL", "s", "1-0", "+") == _BAD_ID
    assert call_raw(raw, "XLEN", "s") == b":2\r\n"
    # The key is looked up first: a missing key replies 0 whatever the IDs.
    assert call_raw(raw, "XDEL", "missing", "bogus") == b":0\r\n"
    call_raw(raw, "SET", "str", "x")
    assert call_raw(raw, "XDEL", "str", "bogus") == WRONGTYPE
    assert call_raw(raw, "XDEL", "s") == b"-ERR wrong number of arguments for 'xdel' command\r\n"


def test_xdel_updates_metadata(r: redis.Redis) -> None:
    fill_stream(r, 5)
    r.xdel("s", "3-0", "1-0")
    info = xinfo_stream(r)
    assert info["max-deleted-entry-id"] == b"3-0"
    assert info["recorded-first-entry-id"] == b"2-0"
    assert info["entries-added"] == 5 and info["length"] == 3
    r.xdel("s", "2-0")
    assert xinfo_stream(r)["max-deleted-entry-id"] == b"3-0"  # a smaller deleted ID leaves it


# --- XTRIM ------------------------------------------------------------------------------------------


def test_xtrim_maxlen_exact(rc: redis.Redis) -> None:
    fill_stream(rc, 10)
    assert rc.xtrim("s", maxlen=4, approximate=False) == 6
    assert ids(rc) == ["7-0", "8-0", "9-0", "10-0"]
    assert rc.xtrim("s", maxlen=4, approximate=False) == 0
    assert rc.execute_command("XTRIM", "s", "MAXLEN", "=", "3") == 1
    assert rc.xtrim("missing", maxlen=0) == 0


def test_xtrim_maxlen_zero_keeps_an_empty_stream(rc: redis.Redis) -> None:
    fill_stream(rc, 3)
    assert rc.xtrim("s", maxlen=0, approximate=False) == 3
    assert rc.exists("s") == 1 and rc.xlen("s") == 0
    assert rc.xadd("s", {"f": "v"}, id="4-0") == b"4-0"


def test_xtrim_minid(rc: redis.Redis) -> None:
    fill_stream(rc, 10)
    assert rc.xtrim("s", minid="4", approximate=False) == 3
    assert ids(rc)[0] == "4-0"
    assert rc.execute_command("XTRIM", "s", "MINID", "=", "7-0") == 3
    assert rc.xtrim("s", minid="100-0", approximate=False) == 4
    assert rc.xlen("s") == 0


def test_xtrim_approx_and_limit(small_nodes: redis.Redis) -> None:
    r = small_nodes
    fill_stream(r, 35)  # nodes: [1..10][11..20][21..30][31..35]
    assert r.execute_command("XTRIM", "s", "MAXLEN", "~", "18") == 10  # one whole node
    assert r.execute_command("XTRIM", "s", "MAXLEN", "~", "18") == 0  # another would go below 18
    assert r.execute_command("XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "9") == 0  # < a node
    assert r.execute_command("XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "10") == 10
    # [21..30] is all below 33 and goes; [31..35] holds 33..35 and stays whole.
    assert r.execute_command("XTRIM", "s", "MINID", "~", "33", "LIMIT", "0") == 10
    assert r.xlen("s") == 5


def test_xtrim_default_limit_follows_node_size(small_nodes: redis.Redis) -> None:
    # Without LIMIT, `~` removes at most 100 nodes' worth of entries (here 100 * 10).
    r = small_nodes
    pipe = r.pipeline(transaction=False)
    for i in range(1, 1201):
        pipe.xadd("s", {"i": i}, id=f"{i}-0")
    pipe.execute()
    assert r.execute_command("XTRIM", "s", "MAXLEN", "~", "0") == 1000
    assert r.execute_command("XTRIM", "s", "MAXLEN", "~", "0") == 200


XTRIM_ERRORS = [
    (("XTRIM", "s"), b"-ERR wrong number of arguments for 'xtrim' command\r\n"),
    (("XTRIM", "s", "MAXLEN"), b"-ERR wrong number of arguments for 'xtrim' command\r\n"),
    (("XTRIM", "s", "FOO", "1"), _SYNTAX),
    (("XTRIM", "s", "MAXLEN", "1", "NOMKSTREAM"), _SYNTAX),
    (("XTRIM", "s", "MAXLEN", "1", "LIMIT"), _SYNTAX),
    (("XTRIM", "s", "MAXLEN", "1", "1-1"), _SYNTAX),
    (("XTRIM", "s", "MAXLEN", "x"), _NOT_INT),
    (("XTRIM", "s", "MAXLEN", "~"), _NOT_INT),
    (("XTRIM", "s", "MAXLEN", "-1"), b"-ERR The MAXLEN argument must be >= 0.\r\n"),
    (("XTRIM", "s", "MINID", "x"), _BAD_ID),
    (("XTRIM", "s", "MINID", "~", "+"), _BAD_ID),
    (("XTRIM", "s", "MINID", "1", "MAXLEN", "1"),
     b"-ERR syntax error, MAXLEN and MINID options at the same time are not compatible\r\n"),
    (("XTRIM", "s", "LIMIT", "5"),
     b"-ERR syntax error, LIMIT cannot be used without specifying a trimming strategy\r\n"),
    (("XTRIM", "s", "LIMIT", "0"), b"-ERR syntax error, XTRIM must be called with a trimming strategy\r\n"),
    (("XTRIM", "s", "MAXLEN", "1", "LIMIT", "5"),
     b"-ERR syntax error, LIMIT cannot be used without the special ~ option\r\n"),
    (("XTRIM", "s", "MAXLEN", "~", "1", "LIMIT", "-5"), b"-ERR The LIMIT argument must be >= 0.\r\n"),
    (("XTRIM", "s", "MAXLEN", "~", "1", "LIMIT", "x"), _NOT_INT),
    (("XTRIM", "str", "MAXLEN", "-1"), b"-ERR The MAXLEN argument must be >= 0.\r\n"),
    (("XTRIM", "str", "MAXLEN", "1"), WRONGTYPE),
    (("XTRIM", "missing", "MAXLEN", "x"), _NOT_INT),
]


@pytest.mark.parametrize(("argv", "expected"), XTRIM_ERRORS, ids=[" ".join(a) for a, _ in XTRIM_ERRORS])
def test_xtrim_errors(raw: RawConnection, argv: tuple, expected: bytes) -> None:
    call_raw(raw, "SET", "str", "x")
    for i in (1, 2, 3):
        call_raw(raw, "XADD", "s", f"{i}-0", "f", "v")
    assert call_raw(raw, *argv) == expected
    assert call_raw(raw, "XLEN", "s") == b":3\r\n"


# --- XSETID -----------------------------------------------------------------------------------------


def test_xsetid_moves_the_last_id(rc: redis.Redis) -> None:
    fill_stream(rc, 3)
    assert rc.execute_command("XSETID", "s", "10-0") == b"OK"
    with pytest.raises(redis.ResponseError, match="equal or smaller"):
        rc.xadd("s", {"f": "v"}, id="10-0")
    assert rc.xadd("s", {"f": "v"}, id="10-*") == b"10-1"
    assert rc.execute_command("XSETID", "s", "10-1") == b"OK"  # equal to the top item is allowed


def test_xsetid_on_empty_stream_may_go_back(rc: redis.Redis) -> None:
    fill_stream(rc, 3)
    rc.xtrim("s", maxlen=0, approximate=False)
    # With no entries, only max-deleted-entry-id (0-0 after trimming) bounds the new last ID.
    assert rc.execute_command("XSETID", "s", "1-0") == b"OK"
    assert rc.xadd("s", {"f": "v"}, id="1-*") == b"1-1"


def test_xsetid_options(r: redis.Redis) -> None:
    fill_stream(r, 3)
    assert r.execute_command("XSETID", "s", "20-0", "ENTRIESADDED", "50", "MAXDELETEDID", "15-0")
    info = xinfo_stream(r)
    assert info["last-generated-id"] == b"20-0"
    assert info["entries-added"] == 50
    assert info["max-deleted-entry-id"] == b"15-0"
    # MAXDELETEDID 0-0 leaves the value unchanged.
    assert r.execute_command("XSETID", "s", "21-0", "MAXDELETEDID", "0-0", "entriesadded", "3")
    info = xinfo_stream(r)
    assert info["max-deleted-entry-id"] == b"15-0" and info["entries-added"] == 3


XSETID_ERRORS = [
    (("XSETID", "s"), b"-ERR wrong number of arguments for 'xsetid' command\r\n"),
    (("XSETID", "s", "x"), _BAD_ID),
    (("XSETID", "s", "$"), _BAD_ID),
    (("XSETID", "s", "5-0", "FOO"), _SYNTAX),
    (("XSETID", "s", "5-0", "ENTRIESADDED"), _SYNTAX),
    (("XSETID", "s", "5-0", "ENTRIESADDED", "x"), _NOT_INT),
    (("XSETID", "s", "5-0", "ENTRIESADDED", "-1"), b"-ERR entries_added must be positive\r\n"),
    # Options are checked as they are read: an early bad value wins over a later syntax error.
    (("XSETID", "s", "5-0", "ENTRIESADDED", "-1", "FOO"), b"-ERR entries_added must be positive\r\n"),
    (("XSETID", "s", "5-0", "FOO", "ENTRIESADDED", "-1"), _SYNTAX),
    (("XSETID", "s", "5-0", "MAXDELETEDID", "x"), _BAD_ID),
    (("XSETID", "s", "5-0", "MAXDELETEDID", "6-0"),
     b"-ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id\r\n"),
    (("XSETID", "s", "5-0", "MAXDELETEDID", "6-0", "ENTRIESADDED", "-1"),
     b"-ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id\r\n"),
    # Argument checks come before the key lookup.
    (("XSETID", "missing", "5-0", "ENTRIESADDED", "-1"), b"-ERR entries_added must be positive\r\n"),
    (("XSETID", "missing", "5-0"), b"-ERR no such key\r\n"),
    (("XSETID", "str", "5-0"), WRONGTYPE),
    (("XSETID", "str", "5-0", "FOO"), _SYNTAX),
    (("XSETID", "s", "2-0"),
     b"-ERR The ID specified in XSETID is smaller than the target stream top item\r\n"),
    (("XSETID", "s", "3"),  # 3-0 < 3-5
     b"-ERR The ID specified in XSETID is smaller than the target stream top item\r\n"),
    (("XSETID", "s", "9-0", "ENTRIESADDED", "2"),
     b"-ERR The entries_added specified in XSETID is smaller than the target stream length\r\n"),
]


@pytest.mark.parametrize(("argv", "expected"), XSETID_ERRORS, ids=[" ".join(a) for a, _ in XSETID_ERRORS])
def test_xsetid_errors(raw: RawConnection, argv: tuple, expected: bytes) -> None:
    call_raw(raw, "SET", "str", "x")
    for eid in ("1-0", "2-0", "3-5"):
        call_raw(raw, "XADD", "s", eid, "f", "v")
    assert call_raw(raw, *argv) == expected


def test_xsetid_below_max_deleted_id(raw: RawConnection) -> None:
    # Redis 7.4 refuses a last ID below the stream's own max-deleted-entry-id.
    for eid in ("1-0", "2-0", "3-0"):
        call_raw(raw, "XADD", "s", eid, "f", "v")
    call_raw(raw, "XDEL", "s", "3-0", "2-0", "1-0")
    assert call_raw(raw, "XSETID", "s", "2-0") == (
        b"-ERR The ID specified in XSETID is smaller than current max_deleted_entry_id\r\n")
    assert call_raw(raw, "XSETID", "s", "3-0") == b"+OK\r\n"


# --- differential ---------------------------------------------------------------------------------


def test_xdel_xtrim_xsetid_match_redis(server, real_redis) -> None:
    script: list[tuple] = [("SET", "str", "x"), ("CONFIG", "SET", "stream-node-max-entries", "3")]
    script += [("XADD", "s", f"{i}-{i}", "i", str(i)) for i in range(1, 21)]
    script += [
        ("XDEL", "s", "3-3", "3-3", "4-0", "5-5"),
        ("XTRIM", "s", "MAXLEN", "~", "15"),
        ("XTRIM", "s", "MINID", "~", "9"),
        ("XRANGE", "s", "-", "+"),
        ("XTRIM", "s", "MAXLEN", "~", "2", "LIMIT", "4"),
        ("XTRIM", "s", "MAXLEN", "12"),
        ("XTRIM", "s", "MINID", "=", "12-12", "LIMIT", "0"),
        ("XRANGE", "s", "-", "+"),
        ("XSETID", "s", "100-0", "ENTRIESADDED", "100", "MAXDELETEDID", "99-0"),
        ("XADD", "s", "100-*", "a", "b"),
        ("XDEL", "s", "100-1"),
        ("XTRIM", "s", "MAXLEN", "0"),
        ("XLEN", "s"),
        ("EXISTS", "s"),
        ("XSETID", "s", "200-0"),
        ("XADD", "s", "200-*", "a", "b"),
        ("CONFIG", "SET", "stream-node-max-entries", "100"),
    ]
    script += [argv for argv, _ in XTRIM_ERRORS if argv[1] != "s"]
    script += [argv for argv, _ in XSETID_ERRORS if argv[1] != "s"]
    with node_max_entries_reset(server.port, real_redis.port):
        assert_same_as_redis(server, real_redis, script)


def test_error_lists_match_redis(server, real_redis) -> None:
    for errors in (XTRIM_ERRORS, XSETID_ERRORS):
        script: list[tuple] = [("SET", "str", "x")]
        script += [("XADD", "s", eid, "f", "v") for eid in ("1-0", "2-0", "3-5")]
        script += [argv for argv, _ in errors]
        assert_same_as_redis(server, real_redis, script)


async def test_async_client(ar) -> None:
    for i in range(1, 6):
        await ar.xadd("s", {"i": i}, id=f"{i}-0")
    assert await ar.xdel("s", "1-0", "9-0") == 1
    assert await ar.xtrim("s", maxlen=2, approximate=False) == 2
    assert await ar.execute_command("XSETID", "s", "10-0") in (b"OK", "OK", True)
    assert await ar.xadd("s", {"i": 11}, id="10-*") == b"10-1"
    assert [eid for eid, _ in await ar.xrange("s")] == [b"4-0", b"5-0", b"10-1"]
