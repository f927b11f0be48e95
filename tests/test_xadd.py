"""XADD: IDs, fields, NOMKSTREAM, trimming (MAXLEN / MINID, =/~, LIMIT) and every argument error."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import redis

from tests.helpers import assert_same_as_redis, call_raw, encode_command, node_max_entries_reset, restart
from tests.serverproc import RawConnection, ServerProcess

MAX = 18446744073709551615


# --- IDs and replies -------------------------------------------------------------------------------


def test_explicit_ids_and_seq_star(rc: redis.Redis) -> None:
    assert rc.xadd("s", {"a": 1}, id="0-*") == b"0-1"  # 0-0 is never generated
    assert rc.xadd("s", {"a": 1}, id="1-1") == b"1-1"
    assert rc.xadd("s", {"a": 2}, id="1-*") == b"1-2"
    assert rc.xadd("s", {"a": 3}, id="5-*") == b"5-0"
    assert rc.xadd("s", {"a": 4}, id="7") == b"7-0"  # a lone ms means seq 0
    assert rc.xlen("s") == 5


def test_auto_id_uses_the_clock_and_never_goes_back(r: redis.Redis) -> None:
    before = int(time.time() * 1000)
    ms, seq = map(int, r.xadd("s", {"f": "v"}).split(b"-"))
    assert before - 5 <= ms <= int(time.time() * 1000) + 5 and seq == 0
    # A last ID in the future: `*` keeps its ms and increments the sequence.
    future = ms + 10_000_000
    r.xadd("s", {"f": "v"}, id=f"{future}-5")
    assert r.xadd("s", {"f": "v"}) == f"{future}-6".encode()


def test_seq_overflow_carries_into_ms_for_auto_id(r: redis.Redis) -> None:
    r.xadd("s", {"f": "v"}, id=f"{10**15}-{MAX}")
    assert r.xadd("s", {"f": "v"}) == f"{10**15 + 1}-0".encode()


def test_ms_star_with_exhausted_seq_is_too_small(r: redis.Redis) -> None:
    r.xadd("s", {"f": "v"}, id=f"5-{MAX}")
    with pytest.raises(redis.ResponseError, match="equal or smaller than the target stream top item"):
        r.xadd("s", {"f": "v"}, id="5-*")
    assert r.xadd("s", {"f": "v"}, id="6-*") == b"6-0"


def test_last_possible_id_exhausts_the_stream(raw: RawConnection) -> None:
    assert call_raw(raw, "XADD", "s", f"{MAX}-{MAX}", "a", "1") == b"$41\r\n%d-%d\r\n" % (MAX, MAX)
    exhausted = b"-ERR The stream has exhausted the last possible ID, unable to add more items\r\n"
    assert call_raw(raw, "XADD", "s", "*", "a", "1") == exhausted
    assert call_raw(raw, "XADD", "s", "1-1", "a", "1") == exhausted
    assert call_raw(raw, "XLEN", "s") == b":1\r\n"


def test_fields_are_kept_verbatim(raw: RawConnection) -> None:
    # Duplicate field names, empty strings and binary data are all kept, in order.
    call_raw(raw, "XADD", "s", "1-1", "f", "1", "f", "2", "", "", b"\x00\xff", b"\r\n")
    assert call_raw(raw, "XRANGE", "s", "-", "+") == (
        b"*1\r\n*2\r\n$3\r\n1-1\r\n*8\r\n$1\r\nf\r\n$1\r\n1\r\n$1\r\nf\r\n$1\r\n2\r\n"
        b"$0\r\n\r\n$0\r\n\r\n$2\r\n\x00\xff\r\n$2\r\n\r\n\r\n")


def test_reply_is_a_bulk_string(raw: RawConnection) -> None:
    assert call_raw(raw, "XADD", "s", "12-3", "f", "v") == b"$4\r\n12-3\r\n"
    call_raw(raw, "HELLO", "3")
    assert call_raw(raw, "XADD", "s", "12-4", "f", "v") == b"$4\r\n12-4\r\n"


# --- NOMKSTREAM ------------------------------------------------------------------------------------


def test_nomkstream(rc: redis.Redis) -> None:
    assert rc.xadd("s", {"f": "v"}, nomkstream=True) is None
    assert rc.exists("s") == 0
    rc.xadd("s", {"f": "v"}, id="1-1")
    assert rc.xadd("s", {"f": "v"}, id="2-1", nomkstream=True) == b"2-1"
    assert rc.xlen("s") == 2


def test_nomkstream_null_shape(raw: RawConnection) -> None:
    assert call_raw(raw, "XADD", "s", "NOMKSTREAM", "*", "f", "v") == b"$-1\r\n"
    call_raw(raw, "HELLO", "3")
    assert call_raw(raw, "XADD", "s", "nomkstream", "*", "f", "v") == b"_\r\n"


def test_failed_add_creates_no_key(r: redis.Redis) -> None:
    with pytest.raises(redis.ResponseError, match="must be greater than 0-0"):
        r.xadd("s", {"f": "v"}, id="0-0")
    with pytest.raises(redis.ResponseError, match="Invalid stream ID"):
        r.xadd("s", {"f": "v"}, id="bogus")
    assert r.exists("s") == 0


# --- errors -----------------------------------------------------------------------------------------

_ARITY = b"-ERR wrong number of arguments for 'xadd' command\r\n"
_NOT_INT = b"-ERR value is not an integer or out of range\r\n"
_BAD_ID = b"-ERR Invalid stream ID specified as stream command argument\r\n"
_SYNTAX_BOTH = b"-ERR syntax error, MAXLEN and MINID options at the same time are not compatible\r\n"

XADD_ERRORS = [
    (("XADD", "s"), _ARITY),
    (("XADD", "s", "*"), _ARITY),
    (("XADD", "s", "*", "f"), _ARITY),
    (("XADD", "s", "*", "f", "v", "g"), _ARITY),
    (("XADD", "s", "1-1", "f"), _ARITY),
    (("XADD", "s", "MAXLEN", "5"), _ARITY),  # MAXLEN 5 parsed, then no ID/fields are left
    (("XADD", "s", "NOMKSTREAM", "MAXLEN", "1"), _ARITY),
    (("XADD", "s", "MAXLEN", "f", "v"), _NOT_INT),  # an option as long as an argument follows
    (("XADD", "s", "NOMKSTREAM", "f", "v"), _BAD_ID),  # "f" is taken as the ID
    (("XADD", "s", "0-0", "f", "v"), b"-ERR The ID specified in XADD must be greater than 0-0\r\n"),
    (("XADD", "s", "0", "f", "v"), b"-ERR The ID specified in XADD must be greater than 0-0\r\n"),
    (("XADD", "s", "1-x", "f", "v"), _BAD_ID),
    (("XADD", "s", "-", "f", "v"), _BAD_ID),
    (("XADD", "s", "+", "f", "v"), _BAD_ID),
    (("XADD", "s", "*-1", "f", "v"), _BAD_ID),
    (("XADD", "s", "MAXLEN", "-1", "*", "f", "v"), b"-ERR The MAXLEN argument must be >= 0.\r\n"),
    (("XADD", "s", "MAXLEN", "x", "*", "f", "v"), _NOT_INT),
    (("XADD", "s", "MAXLEN", "~", "*", "f", "v"), _NOT_INT),
    (("XADD", "s", "MAXLEN", "1.5", "*", "f", "v"), _NOT_INT),
    (("XADD", "s", "MAXLEN", "=", "+1", "*", "f", "v"), _NOT_INT),
    (("XADD", "s", "MINID", "x", "*", "f", "v"), _BAD_ID),
    (("XADD", "s", "MINID", "~", "-", "*", "f", "v"), _BAD_ID),
    (("XADD", "s", "MAXLEN", "1", "MINID", "1", "*", "f", "v"), _SYNTAX_BOTH),
    (("XADD", "s", "MAXLEN", "1", "MAXLEN", "2", "*", "f", "v"), _SYNTAX_BOTH),
    (("XADD", "s", "LIMIT", "10", "*", "f", "v"),
     b"-ERR syntax error, LIMIT cannot be used without specifying a trimming strategy\r\n"),
    (("XADD", "s", "LIMIT", "0", "*", "f", "v"),
     b"-ERR syntax error, LIMIT cannot be used without the special ~ option\r\n"),
    (("XADD", "s", "MAXLEN", "5", "LIMIT", "10", "*", "f", "v"),
     b"-ERR syntax error, LIMIT cannot be used without the special ~ option\r\n"),
    (("XADD", "s", "MAXLEN", "=", "5", "LIMIT", "10", "*", "f", "v"),
     b"-ERR syntax error, LIMIT cannot be used without the special ~ option\r\n"),
    (("XADD", "s", "MAXLEN", "~", "5", "LIMIT", "-1", "*", "f", "v"),
     b"-ERR The LIMIT argument must be >= 0.\r\n"),
    (("XADD", "s", "MAXLEN", "~", "5", "LIMIT", "x", "*", "f", "v"), _NOT_INT),
    # Option errors come before the odd field count, which comes before the 0-0 check.
    (("XADD", "s", "MAXLEN", "-1", "*", "f"), b"-ERR The MAXLEN argument must be >= 0.\r\n"),
    (("XADD", "s", "0-0", "f"), _ARITY),
]


@pytest.mark.parametrize(("argv", "expected"), XADD_ERRORS, ids=[" ".join(a) for a, _ in XADD_ERRORS])
def test_xadd_errors(raw: RawConnection, argv: tuple, expected: bytes) -> None:
    assert call_raw(raw, *argv) == expected
    assert call_raw(raw, "EXISTS", "s") == b":0\r\n"


def test_xadd_errors_match_redis(server, real_redis) -> None:
    assert_same_as_redis(server, real_redis, [argv for argv, _ in XADD_ERRORS])


def test_wrongtype_comes_after_argument_errors(raw: RawConnection) -> None:
    call_raw(raw, "SET", "str", "x")
    wrongtype = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
    assert call_raw(raw, "XADD", "str", "*", "f", "v") == wrongtype
    assert call_raw(raw, "XADD", "str", "NOMKSTREAM", "*", "f", "v") == wrongtype
    assert call_raw(raw, "XADD", "str", "*", "f") == _ARITY
    assert call_raw(raw, "XADD", "str", "0-0", "f", "v") == (
        b"-ERR The ID specified in XADD must be greater than 0-0\r\n")
    assert call_raw(raw, "GET", "str") == b"$1\r\nx\r\n"


def test_id_too_small(rc: redis.Redis) -> None:
    rc.xadd("s", {"f": "v"}, id="5-5")
    for bad in ("5-5", "5-4", "4-9", "5"):
        with pytest.raises(redis.ResponseError, match="^The ID specified in XADD is equal or smaller"):
            rc.xadd("s", {"f": "v"}, id=bad)
    assert rc.xlen("s") == 1


# --- trimming ---------------------------------------------------------------------------------------


def test_maxlen_exact(rc: redis.Redis) -> None:
    for i in range(1, 11):
        rc.xadd("s", {"i": i}, id=f"{i}-0", maxlen=3, approximate=False)
    assert rc.xlen("s") == 3
    assert [eid for eid, _ in rc.xrange("s")] == [b"8-0", b"9-0", b"10-0"]


def test_maxlen_zero_keeps_an_empty_stream(rc: redis.Redis) -> None:
    assert rc.execute_command("XADD", "s", "MAXLEN", "0", "1-1", "f", "v") == b"1-1"
    assert rc.xlen("s") == 0
    assert rc.type("s") == b"stream"
    # The last ID survives: a smaller ID is still refused.
    with pytest.raises(redis.ResponseError, match="equal or smaller"):
        rc.xadd("s", {"f": "v"}, id="1-0")


def test_minid_exact(rc: redis.Redis) -> None:
    for i in range(1, 6):
        rc.xadd("s", {"i": i}, id=f"{i}-0")
    assert rc.execute_command("XADD", "s", "MINID", "=", "4", "6-0", "i", "6") == b"6-0"
    assert [eid for eid, _ in rc.xrange("s")] == [b"4-0", b"5-0", b"6-0"]
    # MINID above the new entry removes it too: trimming happens after the add.
    rc.execute_command("XADD", "s", "MINID", "100", "7-0", "i", "7")
    assert rc.xlen("s") == 0


def test_approx_trimming_removes_whole_nodes_only(small_nodes: redis.Redis) -> None:
    r = small_nodes
    for i in range(1, 26):
        r.xadd("s", {"i": i}, id=f"{i}-0")
    # Nodes hold 10 entries: [1..10][11..20][21..26]; only whole nodes may go.
    r.execute_command("XADD", "s", "MAXLEN", "~", "5", "26-0", "i", "26")
    assert r.xlen("s") == 6
    assert r.xrange("s", count=1)[0][0] == b"21-0"
    r.execute_command("XADD", "s", "MINID", "~", "25", "27-0", "i", "27")
    assert r.xlen("s") == 7  # the node holding 21..27 is kept whole: 25..27 must stay
    r.execute_command("XTRIM", "s", "MINID", "~", "28")
    assert r.xlen("s") == 0  # every entry of the node is below 28: it goes whole


def test_approx_trimming_honours_limit(small_nodes: redis.Redis) -> None:
    r = small_nodes
    for i in range(1, 41):
        r.xadd("s", {"i": i}, id=f"{i}-0")
    r.execute_command("XADD", "s", "MAXLEN", "~", "0", "LIMIT", "10", "41-0", "i", "41")
    assert r.xlen("s") == 31  # LIMIT 10 allows one 10-entry node to go
    r.execute_command("XADD", "s", "MAXLEN", "~", "0", "LIMIT", "15", "42-0", "i", "42")
    assert r.xlen("s") == 22  # 15 allows one more node, not two
    r.execute_command("XADD", "s", "MAXLEN", "~", "0", "LIMIT", "0", "43-0", "i", "43")
    assert r.xlen("s") == 0  # LIMIT 0: no limit, and MAXLEN 0 lets even the last node go


def test_trimming_matches_redis(server, real_redis) -> None:
    script: list[tuple] = [("CONFIG", "SET", "stream-node-max-entries", "4")]
    for i in range(1, 30):
        script.append(("XADD", "s", f"{i}-{i % 3}", "i", str(i)))
    script += [
        ("XADD", "s", "MAXLEN", "~", "10", "100-1", "a", "b"),
        ("XLEN", "s"),
        ("XADD", "s", "MINID", "~", "25", "100-2", "a", "b"),
        ("XRANGE", "s", "-", "+", "COUNT", "2"),
        ("XADD", "s", "MAXLEN", "=", "3", "100-3", "a", "b"),
        ("XRANGE", "s", "-", "+"),
        ("XADD", "s", "MAXLEN", "~", "0", "LIMIT", "3", "100-4", "a", "b"),
        ("XLEN", "s"),
        ("XADD", "s", "NOMKSTREAM", "MINID", "100-3", "100-5", "a", "b"),
        ("XRANGE", "s", "-", "+"),
        ("CONFIG", "SET", "stream-node-max-entries", "100"),
    ]
    with node_max_entries_reset(server.port, real_redis.port):
        assert_same_as_redis(server, real_redis, script)


def test_xadd_sequence_matches_redis(server, real_redis) -> None:
    assert_same_as_redis(server, real_redis, [
        ("XADD", "s", "1-*", "a", "1"),
        ("XADD", "s", "1-*", "a", "2"),
        ("XADD", "s", "1-1", "a", "3"),
        ("XADD", "s", "2", "a", "4", "b", "5"),
        ("XADD", "s", "NOMKSTREAM", "3-0", "x", "y"),
        ("XADD", "t", "NOMKSTREAM", "3-0", "x", "y"),
        ("XADD", "s", "maxlen", "=", "2", "4-0", "x", "y"),
        ("XRANGE", "s", "-", "+"),
        ("XADD", "s", "0-*", "x", "y"),
        ("EXISTS", "t"),
        ("TYPE", "s"),
    ])


# --- async client ------------------------------------------------------------------------------------


async def test_async_xadd(ar) -> None:
    ids = [await ar.xadd("s", {"n": i}, id=f"{i}-1") for i in range(1, 4)]
    assert ids == [b"1-1", b"2-1", b"3-1"]
    assert await ar.xadd("s", {"n": 4}, maxlen=2, approximate=False) is not None
    assert await ar.xlen("s") == 2
    assert await ar.xadd("nope", {"n": 1}, nomkstream=True) is None


# --- AOF: what XADD / XTRIM log must replay to the same stream ----------------------------------------


def test_aof_replays_generated_ids_and_approx_trims(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    r.config_set("stream-node-max-entries", 4)
    for i in range(12):
        r.xadd("s", {"i": i})
    r.xadd("s", {"i": "x"}, id=f"{10**13}-*")
    r.xadd("s", {"i": "y"}, maxlen=6, approximate=True)
    r.execute_command("XTRIM", "s", "MINID", "~", r.xrange("s")[5][0], "LIMIT", "100")
    r.xadd("m", {"i": "z"}, id="1-1", minid="5", approximate=True)
    before = {key: r.xrange(key) for key in ("s", "m")}
    assert 0 < len(before["s"]) < 14
    aof = (Path(srv.dir) / "appendonly.aof").read_bytes()
    assert b"\r\n~\r\n" not in aof and b"\r\n*\r\n" not in aof and b"-*\r\n" not in aof
    r.close()
    srv2 = restart(srv)
    try:
        r = redis.Redis(port=srv2.port)
        assert {key: r.xrange(key) for key in ("s", "m")} == before
        # The last ID came back too.
        with pytest.raises(redis.ResponseError, match="equal or smaller"):
            r.xadd("s", {"f": "v"}, id=before["s"][-1][0])
    finally:
        srv2.cleanup()


def test_aof_accepts_the_exact_form_redis_logs_with_limit(tmp_path: Path) -> None:
    # Redis logs a `~` trim as `=` but keeps its LIMIT: replay must accept it and trim fully.
    lines = [("XADD", "s", "1-1", "f", "v"), ("XADD", "s", "2-1", "f", "v"),
             ("XADD", "s", "MAXLEN", "=", "1", "LIMIT", "100", "3-1", "f", "v"),
             ("XTRIM", "s", "MINID", "=", "3-1", "LIMIT", "1")]
    (tmp_path / "appendonly.aof").write_bytes(b"".join(encode_command(*c) for c in lines))
    srv = ServerProcess(data_dir=str(tmp_path)).start()
    try:
        r = redis.Redis(port=srv.port)
        assert r.xrange("s") == [(b"3-1", {b"f": b"v"})]
        # Clients still get the error.
        with pytest.raises(redis.ResponseError, match="LIMIT cannot be used without the special ~"):
            r.execute_command("XTRIM", "s", "MAXLEN", "=", "1", "LIMIT", "100")
    finally:
        srv.cleanup()
