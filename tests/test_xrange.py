"""XLEN, XRANGE and XREVRANGE: bounds, exclusive and incomplete IDs, COUNT, errors, reply shapes."""

from __future__ import annotations

import pytest
import redis

from tests.helpers import assert_same_as_redis, call_raw
from tests.serverproc import RawConnection

MAX = 18446744073709551615
IDS = ["1-0", "1-1", "2-0", "2-5", f"2-{MAX}", "3-0", "10-2"]


@pytest.fixture
def s(rc: redis.Redis) -> redis.Redis:
    for i, eid in enumerate(IDS):
        rc.xadd("s", {"n": i}, id=eid)
    return rc


def ids(entries: list) -> list[str]:
    return [eid.decode() for eid, _ in entries]


def test_xlen(rc: redis.Redis) -> None:
    assert rc.xlen("s") == 0
    rc.xadd("s", {"a": 1}, id="1-1")
    rc.xadd("s", {"a": 1}, id="1-2")
    assert rc.xlen("s") == 2
    rc.xdel("s", "1-1")
    assert rc.xlen("s") == 1
    rc.set("str", "x")
    with pytest.raises(redis.ResponseError, match="^WRONGTYPE"):
        rc.xlen("str")


def test_full_range_both_directions(s: redis.Redis) -> None:
    assert ids(s.xrange("s")) == IDS
    assert ids(s.xrevrange("s")) == IDS[::-1]
    assert s.xrange("s", "1-1", "1-1") == [(b"1-1", {b"n": b"1"})]


def test_incomplete_ids(s: redis.Redis) -> None:
    # A lone ms means ms-0 as a start and ms-MAX as an end.
    assert ids(s.xrange("s", "2", "2")) == ["2-0", "2-5", f"2-{MAX}"]
    assert ids(s.xrange("s", "-", "1")) == ["1-0", "1-1"]
    assert ids(s.xrevrange("s", "2", "2")) == [f"2-{MAX}", "2-5", "2-0"]
    assert ids(s.xrange("s", "3", "+")) == ["3-0", "10-2"]


def test_exclusive_ranges(s: redis.Redis) -> None:
    assert ids(s.xrange("s", "(1-0", "(2-5")) == ["1-1", "2-0"]
    assert ids(s.xrange("s", f"(2-{MAX}", "+")) == ["3-0", "10-2"]  # carries into the next ms
    assert ids(s.xrange("s", "-", "(3-0")) == ["1-0", "1-1", "2-0", "2-5", f"2-{MAX}"]
    # An incomplete exclusive ID is completed first: (2 = after 2-0; (3 = before 3-MAX.
    assert ids(s.xrange("s", "(2", "(3")) == ["2-5", f"2-{MAX}", "3-0"]
    assert ids(s.xrevrange("s", "(10-2", "(1-1")) == ["3-0", f"2-{MAX}", "2-5", "2-0"]
    assert s.xrange("s", "(2-5", "(2-5") == []


def test_empty_and_inverted_ranges(s: redis.Redis) -> None:
    assert s.xrange("s", "5", "9") == []
    assert s.xrange("s", "3", "2") == []
    assert s.xrevrange("s", "2", "3") == []  # XREVRANGE takes end first
    assert s.xrange("missing") == []


def test_count(s: redis.Redis) -> None:
    assert ids(s.xrange("s", count=2)) == ["1-0", "1-1"]
    assert ids(s.xrevrange("s", count=2)) == ["10-2", "3-0"]
    assert ids(s.xrange("s", "(1-1", "+", count=100)) == IDS[2:]
    # COUNT may repeat: the last one counts.
    assert ids(s.execute_command("XRANGE", "s", "-", "+", "COUNT", "1", "count", "3")) == IDS[:3]


def test_count_zero_and_negative_reply_null(raw: RawConnection) -> None:
    call_raw(raw, "XADD", "s", "1-1", "f", "v")
    assert call_raw(raw, "XRANGE", "s", "-", "+", "COUNT", "0") == b"*-1\r\n"
    assert call_raw(raw, "XREVRANGE", "s", "+", "-", "COUNT", "-3") == b"*-1\r\n"
    assert call_raw(raw, "XRANGE", "missing", "-", "+", "COUNT", "0") == b"*0\r\n"
    assert call_raw(raw, "XRANGE", "s", "5", "+") == b"*0\r\n"
    call_raw(raw, "HELLO", "3")
    assert call_raw(raw, "XRANGE", "s", "-", "+", "COUNT", "0") == b"_\r\n"
    assert call_raw(raw, "XRANGE", "missing", "-", "+", "COUNT", "0") == b"*0\r\n"


def test_reply_shape_is_the_same_in_resp2_and_resp3(raw: RawConnection) -> None:
    call_raw(raw, "XADD", "s", "1-1", "a", "1", "b", "2")
    call_raw(raw, "XADD", "s", "2-1", "c", "3")
    expected = (b"*2\r\n*2\r\n$3\r\n1-1\r\n*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"
                b"*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n")
    assert call_raw(raw, "XRANGE", "s", "-", "+") == expected
    call_raw(raw, "HELLO", "3")
    assert call_raw(raw, "XRANGE", "s", "-", "+") == expected


def test_deleted_entries_are_skipped(s: redis.Redis) -> None:
    s.xdel("s", "1-1", "2-5", "10-2")
    assert ids(s.xrange("s")) == ["1-0", "2-0", f"2-{MAX}", "3-0"]
    assert ids(s.xrevrange("s", count=2)) == ["3-0", f"2-{MAX}"]


_BAD_ID = b"-ERR Invalid stream ID specified as stream command argument\r\n"
_SYNTAX = b"-ERR syntax error\r\n"
RANGE_ERRORS = [
    (("XRANGE", "s", "x", "+"), _BAD_ID),
    (("XRANGE", "s", "-", "x"), _BAD_ID),
    (("XRANGE", "s", "1-x", "+"), _BAD_ID),
    (("XRANGE", "s", "(-", "+"), _BAD_ID),  # an exclusive bound must be a real ID
    (("XRANGE", "s", "-", "(+"), _BAD_ID),
    (("XRANGE", "s", "(", "+"), _BAD_ID),
    (("XRANGE", "s", f"({MAX}-{MAX}", "+"), b"-ERR invalid start ID for the interval\r\n"),
    (("XRANGE", "s", "-", "(0-0"), b"-ERR invalid end ID for the interval\r\n"),
    (("XREVRANGE", "s", "(0-0", f"({MAX}-{MAX}"), b"-ERR invalid start ID for the interval\r\n"),
    (("XREVRANGE", "s", "x", "y"), _BAD_ID),
    (("XRANGE", "s", "-", "+", "COUNT"), _SYNTAX),
    (("XRANGE", "s", "-", "+", "LIMIT", "1"), _SYNTAX),
    (("XRANGE", "s", "-", "+", "COUNT", "x"), b"-ERR value is not an integer or out of range\r\n"),
    (("XRANGE", "s", "-", "+", "COUNT", "1", "x"), _SYNTAX),
    (("XRANGE", "s", "-"), b"-ERR wrong number of arguments for 'xrange' command\r\n"),
    (("XREVRANGE", "s", "+"), b"-ERR wrong number of arguments for 'xrevrange' command\r\n"),
    (("XLEN", "s", "x"), b"-ERR wrong number of arguments for 'xlen' command\r\n"),
    # Argument errors win over WRONGTYPE.
    (("XRANGE", "str", "x", "+"), _BAD_ID),
    (("XRANGE", "str", "-", "+", "COUNT"), _SYNTAX),
    (("XRANGE", "str", "-", "+"), b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (("XREVRANGE", "str", "+", "-", "COUNT", "0"),
     b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
]


@pytest.mark.parametrize(("argv", "expected"), RANGE_ERRORS, ids=[" ".join(a) for a, _ in RANGE_ERRORS])
def test_range_errors(raw: RawConnection, argv: tuple, expected: bytes) -> None:
    call_raw(raw, "SET", "str", "x")
    call_raw(raw, "XADD", "s", "1-1", "f", "v")
    assert call_raw(raw, *argv) == expected


def test_ranges_match_redis(server, real_redis) -> None:
    script: list[tuple] = [("SET", "str", "x")]
    script += [("XADD", "s", eid, "n", str(i)) for i, eid in enumerate(IDS)]
    script += [("XDEL", "s", "2-5")]
    bounds = ["-", "+", "0", "1", "1-1", "(1-1", "2", "(2", f"2-{MAX}", f"(2-{MAX}", "(3-0", "11"]
    for a in bounds:
        for b in bounds:
            script.append(("XRANGE", "s", a, b))
            script.append(("XREVRANGE", "s", b, a, "COUNT", "2"))
    script += [argv for argv, _ in RANGE_ERRORS]
    assert_same_as_redis(server, real_redis, script)


async def test_async_ranges(ar) -> None:
    for i in range(1, 6):
        await ar.xadd("s", {"i": i}, id=f"{i}-0")
    assert ids(await ar.xrange("s", "2", "4")) == ["2-0", "3-0", "4-0"]
    assert ids(await ar.xrevrange("s", "+", "(3", count=1)) == ["5-0"]
    assert await ar.xlen("s") == 5
