"""String commands: GET/SET and variants, GETEX, GETDEL, MGET/MSET, INCR family, APPEND, STRLEN,
GETRANGE, SETRANGE."""

from __future__ import annotations

import time
from fractions import Fraction

import pytest
import redis

from protocol.floats import format_long_double, parse_long_double
from tests.helpers import assert_same_as_redis, call_raw, exec_after_change
from tests.serverproc import RawConnection

NOT_INT = "^value is not an integer or out of range$"


# --- GET / SET ----------------------------------------------------------------------------------


def test_get_set_basic(r: redis.Redis, raw: RawConnection) -> None:
    assert r.get("k") is None
    assert r.set("k", "v") is True
    assert r.get("k") == b"v"
    assert call_raw(raw, "SET", "a", "b") == b"+OK\r\n"
    assert call_raw(raw, "GET", "a") == b"$1\r\nb\r\n"
    assert call_raw(raw, "GET", "missing") == b"$-1\r\n"


def test_get_null_in_resp3(r3: redis.Redis, server) -> None:
    conn = RawConnection(server.port)
    try:
        call_raw(conn, "HELLO", "3")
        assert call_raw(conn, "GET", "missing-key") == b"_\r\n"
        assert call_raw(conn, "SET", "x", "1", "NX", "XX") == b"-ERR syntax error\r\n"
    finally:
        conn.close()


def test_set_binary_and_empty_values(r: redis.Redis) -> None:
    value = bytes(range(256)) + b"\r\n\0"
    r.set(b"bin\0key", value)
    assert r.get(b"bin\0key") == value
    r.set("empty", "")
    assert r.get("empty") == b""
    assert r.exists("empty") == 1


def test_set_nx_xx(r: redis.Redis) -> None:
    assert r.set("k", "1", xx=True) is None
    assert r.exists("k") == 0
    assert r.set("k", "1", nx=True) is True
    assert r.set("k", "2", nx=True) is None
    assert r.get("k") == b"1"
    assert r.set("k", "3", xx=True) is True
    assert r.get("k") == b"3"


def test_set_get_option(r: redis.Redis) -> None:
    assert r.set("k", "1", get=True) is None
    assert r.set("k", "2", get=True) == b"1"
    assert r.get("k") == b"2"
    # NX with GET: returns the old value and does not set
    assert r.set("k", "3", nx=True, get=True) == b"2"
    assert r.get("k") == b"2"
    assert r.set("new", "x", xx=True, get=True) is None
    assert r.exists("new") == 0


def test_set_expire_options(r: redis.Redis) -> None:
    r.set("ex", "v", ex=100)
    assert 99 <= r.ttl("ex") <= 100
    r.set("px", "v", px=100_000)
    assert 99_000 < r.pttl("px") <= 100_000
    at = int(time.time()) + 200
    r.set("exat", "v", exat=at)
    assert r.expiretime("exat") == at
    r.set("pxat", "v", pxat=at * 1000 + 123)
    assert r.pexpiretime("pxat") == at * 1000 + 123


def test_set_clears_ttl_unless_keepttl(r: redis.Redis) -> None:
    r.set("k", "v", ex=100)
    r.set("k", "w")
    assert r.ttl("k") == -1
    r.set("k", "v", ex=100)
    r.set("k", "w", keepttl=True)
    assert r.ttl("k") > 90
    assert r.get("k") == b"w"


def test_set_pxat_in_the_past_leaves_no_key(r: redis.Redis) -> None:
    assert r.set("k", "v", pxat=1000) is True
    assert r.get("k") is None
    assert r.exists("k") == 0


def test_set_syntax_errors(r: redis.Redis) -> None:
    bad = [
        ("NX", "XX"), ("XX", "NX"), ("EX",), ("EX", 10, "PX", 100), ("PX", 10, "EX", 1),
        ("KEEPTTL", "EX", 10), ("EX", 10, "KEEPTTL"), ("EXAT", 10, "PXAT", 10), ("PERSIST",),
        ("FOO",), ("EX", 10, "EXAT", 100), ("GET", "GETX"),
    ]
    for args in bad:
        with pytest.raises(redis.ResponseError, match="^syntax error$"):
            r.execute_command("SET", "k", "v", *args)
    assert r.exists("k") == 0


def test_set_repeated_options_are_accepted(r: redis.Redis, raw: RawConnection) -> None:
    assert call_raw(raw, "SET", "k", "v", "EX", 10, "EX", 1000) == b"+OK\r\n"
    assert r.ttl("k") > 900
    assert call_raw(raw, "SET", "k", "v", "NX", "NX") == b"$-1\r\n"
    assert call_raw(raw, "SET", "k", "w", "GET", "GET", "KEEPTTL", "KEEPTTL") == b"$1\r\nv\r\n"
    assert r.ttl("k") > 900


def test_set_invalid_expire(r: redis.Redis) -> None:
    for args in (("EX", 0), ("EX", -1), ("PX", 0), ("EXAT", 0), ("PXAT", -5),
                 ("EX", 2**63 // 1000 + 1), ("PX", 2**63 - 1), ("EX", 2**63 // 1000)):
        with pytest.raises(redis.ResponseError, match="^invalid expire time in 'set' command$"):
            r.execute_command("SET", "k", "v", *args)
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        r.execute_command("SET", "k", "v", "EX", "1.5")
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        r.execute_command("SET", "k", "v", "EX", "99999999999999999999")
    # the expire error comes before anything else happens, even with GET
    r.set("k", "old")
    with pytest.raises(redis.ResponseError, match="invalid expire time"):
        r.execute_command("SET", "k", "v", "GET", "EX", 0)
    assert r.get("k") == b"old"


def test_setnx_setex_psetex(r: redis.Redis) -> None:
    assert r.setnx("k", "1") is True
    assert r.setnx("k", "2") is False
    assert r.get("k") == b"1"
    assert r.setex("e", 100, "v") is True
    assert 99 <= r.ttl("e") <= 100
    assert r.psetex("p", 100_000, "v") is True
    assert 99_000 < r.pttl("p") <= 100_000
    with pytest.raises(redis.ResponseError, match="^invalid expire time in 'setex' command$"):
        r.setex("e", 0, "v")
    with pytest.raises(redis.ResponseError, match="^invalid expire time in 'psetex' command$"):
        r.psetex("p", -10, "v")
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        r.execute_command("SETEX", "e", "ten", "v")


def test_getset(r: redis.Redis) -> None:
    assert r.getset("k", "1") is None
    r.expire("k", 100)
    assert r.getset("k", "2") == b"1"
    assert r.get("k") == b"2"
    assert r.ttl("k") == -1  # GETSET discards the TTL


def test_getdel(r: redis.Redis) -> None:
    r.set("k", "v")
    assert r.getdel("k") == b"v"
    assert r.exists("k") == 0
    assert r.getdel("k") is None


def test_getex(r: redis.Redis) -> None:
    assert r.getex("missing", ex=10) is None
    r.set("k", "v")
    assert r.getex("k") == b"v"
    assert r.ttl("k") == -1
    assert r.getex("k", ex=100) == b"v"
    assert 99 <= r.ttl("k") <= 100
    assert r.getex("k", px=200_000) == b"v"
    assert r.pttl("k") > 199_000
    assert r.getex("k", persist=True) == b"v"
    assert r.ttl("k") == -1
    at = int(time.time()) + 300
    assert r.getex("k", exat=at) == b"v"
    assert r.expiretime("k") == at
    # an absolute time in the past deletes the key after returning it
    assert r.getex("k", pxat=1) == b"v"
    assert r.exists("k") == 0


def test_getex_errors(r: redis.Redis) -> None:
    r.set("k", "v")
    for args in (("EX", 10, "PX", 10), ("PERSIST", "EX", 10), ("EX", 10, "PERSIST"), ("NX",),
                 ("KEEPTTL",), ("GET",), ("EX",), ("FOO",)):
        with pytest.raises(redis.ResponseError, match="^syntax error$"):
            r.execute_command("GETEX", "k", *args)
    with pytest.raises(redis.ResponseError, match="^invalid expire time in 'getex' command$"):
        r.execute_command("GETEX", "k", "EX", 0)
    # on a missing key the time is not even looked at
    assert r.execute_command("GETEX", "nokey", "EX", 0) is None
    assert r.ttl("k") == -1


def test_mget_mset(r: redis.Redis) -> None:
    assert r.mset({"a": "1", "b": "2"}) is True
    assert r.mget("a", "missing", "b") == [b"1", None, b"2"]
    r.expire("a", 100)
    r.mset({"a": "x"})
    assert r.ttl("a") == -1
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'mset' command"):
        r.execute_command("MSET", "a", "1", "b")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'msetnx' command"):
        r.execute_command("MSETNX", "a", "1", "b")


def test_mset_last_value_wins(r: redis.Redis) -> None:
    r.execute_command("MSET", "k", "1", "k", "2")
    assert r.get("k") == b"2"


def test_msetnx(r: redis.Redis) -> None:
    assert r.msetnx({"a": "1", "b": "2"}) is True
    assert r.msetnx({"b": "3", "c": "4"}) is False
    assert r.mget("b", "c") == [b"2", None]
    assert r.execute_command("MSETNX", "x", "1", "x", "2") == 1
    assert r.get("x") == b"2"


def test_non_string_values(r: redis.Redis) -> None:
    r.execute_command("XADD", "s", "*", "f", "v")  # a stream: a non-string value
    assert r.mget("s") == [None]
    for call in (lambda: r.get("s"), lambda: r.incr("s"), lambda: r.append("s", "x"),
                 lambda: r.strlen("s"), lambda: r.getrange("s", 0, 1),
                 lambda: r.setrange("s", 0, "x"), lambda: r.getdel("s"), lambda: r.getex("s"),
                 lambda: r.set("s", "x", get=True), lambda: r.incrbyfloat("s", 1)):
        with pytest.raises(redis.ResponseError, match="^WRONGTYPE"):
            call()
    assert r.type("s") == b"stream"
    assert r.set("s", "now a string") is True
    assert r.get("s") == b"now a string"


# --- INCR family --------------------------------------------------------------------------------


def test_incr_decr(r: redis.Redis, raw: RawConnection) -> None:
    assert r.incr("n") == 1
    assert r.incrby("n", 10) == 11
    assert r.decr("n") == 10
    assert r.decrby("n", 20) == -10
    assert r.get("n") == b"-10"
    assert call_raw(raw, "INCR", "c") == b":1\r\n"


def test_incr_keeps_ttl(r: redis.Redis) -> None:
    r.set("n", "5", ex=100)
    r.incr("n")
    assert r.ttl("n") > 90
    assert r.get("n") == b"6"


def test_incr_rejects_non_integers(r: redis.Redis) -> None:
    for value in ("abc", " 1", "1 ", "+1", "01", "1.0", "", "-0", "9223372036854775808"):
        r.set("n", value)
        with pytest.raises(redis.ResponseError, match=NOT_INT):
            r.incr("n")
        assert r.get("n") == value.encode()
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        r.incrby("x", "1.5")
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        r.decrby("x", "abc")


def test_incr_overflow(r: redis.Redis) -> None:
    r.set("n", str(2**63 - 1))
    with pytest.raises(redis.ResponseError, match="^increment or decrement would overflow$"):
        r.incr("n")
    r.set("n", str(-(2**63)))
    with pytest.raises(redis.ResponseError, match="^increment or decrement would overflow$"):
        r.decr("n")
    with pytest.raises(redis.ResponseError, match="^decrement would overflow$"):
        r.decrby("x", str(-(2**63)))
    r.set("n", "-1")
    assert r.incrby("n", -(2**63 - 1)) == -(2**63)


def test_incrbyfloat(r: redis.Redis, raw: RawConnection) -> None:
    assert r.incrbyfloat("f", 10.5) == 10.5
    assert r.get("f") == b"10.5"
    assert r.incrbyfloat("f", 0.5) == 11
    assert r.get("f") == b"11"
    r.set("g", "0.1")
    r.incrbyfloat("g", "0.2")
    assert r.get("g") == b"0.3"  # long double arithmetic, like Redis on x86-64
    r.set("h", "5.0e3")
    r.incrbyfloat("h", "2.0e2")
    assert r.get("h") == b"5200"
    call_raw(raw, "SET", "i", "1")
    assert call_raw(raw, "INCRBYFLOAT", "i", "-1.5") == b"$4\r\n-0.5\r\n"


def test_incrbyfloat_errors(r: redis.Redis) -> None:
    for value in ("abc", " 1", "1 ", "nan", "1e5000", ""):
        r.set("f", value)
        with pytest.raises(redis.ResponseError, match="^value is not a valid float$"):
            r.incrbyfloat("f", 1)
    with pytest.raises(redis.ResponseError, match="^value is not a valid float$"):
        r.incrbyfloat("x", "one")
    r.set("f", "1e4932")
    with pytest.raises(redis.ResponseError, match="^increment would produce NaN or Infinity$"):
        r.incrbyfloat("f", "1e4932")
    with pytest.raises(redis.ResponseError, match="^increment would produce NaN or Infinity$"):
        r.incrbyfloat("x", "inf")
    assert r.exists("x") == 0


def test_incrbyfloat_keeps_ttl(r: redis.Redis) -> None:
    r.set("f", "1", ex=100)
    r.incrbyfloat("f", 1.5)
    assert r.ttl("f") > 90


def test_long_double_helpers() -> None:
    assert format_long_double(Fraction(1, 2)) == b"0.5"
    assert format_long_double(Fraction(-1, 10**18)) == b"0"
    assert format_long_double(Fraction(10**20)) == b"100000000000000000000"
    assert parse_long_double(b"0x1p3") == 8
    assert parse_long_double(b"-inf") == float("-inf")
    with pytest.raises(Exception, match="not a valid float"):
        parse_long_double(b"1" * 5120)
    with pytest.raises(Exception, match="not a valid float"):
        parse_long_double(b"1e-5000")


# --- APPEND / STRLEN / GETRANGE / SETRANGE --------------------------------------------------


def test_append_strlen(r: redis.Redis) -> None:
    assert r.append("k", "hello") == 5
    assert r.append("k", " world") == 11
    assert r.get("k") == b"hello world"
    assert r.strlen("k") == 11
    assert r.strlen("missing") == 0
    r.expire("k", 100)
    r.append("k", "!")
    assert r.ttl("k") > 90


def test_getrange(r: redis.Redis) -> None:
    r.set("k", "Hello World")
    assert r.getrange("k", 0, 4) == b"Hello"
    assert r.getrange("k", -5, -1) == b"World"
    assert r.getrange("k", -1, -5) == b""
    assert r.getrange("k", 5, 3) == b""
    assert r.getrange("k", 0, -100) == b"H"
    assert r.getrange("k", -100, 2) == b"Hel"
    assert r.getrange("k", 6, 1000) == b"World"
    assert r.getrange("missing", 0, -1) == b""
    r.set("e", "")
    assert r.getrange("e", 0, -1) == b""
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        r.getrange("k", "a", 1)


def test_setrange(r: redis.Redis) -> None:
    assert r.setrange("k", 5, "x") == 6
    assert r.get("k") == b"\0\0\0\0\0x"
    r.set("s", "Hello World")
    assert r.setrange("s", 6, "Redis") == 11
    assert r.get("s") == b"Hello Redis"
    assert r.setrange("s", 9, "xyz") == 12
    assert r.get("s") == b"Hello Redxyz"
    assert r.setrange("missing", 10, "") == 0
    assert r.exists("missing") == 0
    assert r.setrange("s", 100, "") == 12
    with pytest.raises(redis.ResponseError, match="^offset is out of range$"):
        r.setrange("s", -1, "x")
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        r.setrange("s", "x", "x")
    with pytest.raises(redis.ResponseError, match=r"^string exceeds maximum allowed size \(proto-max-bulk-len\)$"):
        r.setrange("s", 512 * 1024 * 1024, "x")
    r.set("t", "v", ex=100)
    r.setrange("t", 0, "w")
    assert r.ttl("t") > 90


def test_string_size_limit(server_factory) -> None:
    srv = server_factory("--proto-max-bulk-len", str(1024 * 1024))
    c = redis.Redis(port=srv.port)
    c.set("k", b"x" * (1024 * 1024 - 1))
    assert c.append("k", "y") == 1024 * 1024
    with pytest.raises(redis.ResponseError, match="string exceeds maximum allowed size"):
        c.append("k", "z")
    assert c.strlen("k") == 1024 * 1024
    with pytest.raises(redis.ResponseError, match="string exceeds maximum allowed size"):
        c.setrange("new", 1024 * 1024, "a")
    assert c.setrange("new", 1024 * 1024 - 1, "a") == 1024 * 1024


# --- transactions and WATCH see string writes ----------------------------------------------------


def test_string_writes_invalidate_watch(server) -> None:
    writes = [
        lambda c: c.set("k", "x"), lambda c: c.append("k", "x"), lambda c: c.incr("n"),
        lambda c: c.setrange("k", 0, "z"), lambda c: c.getdel("k"), lambda c: c.getex("k", ex=9),
        lambda c: c.incrbyfloat("n", 1), lambda c: c.mset({"k": 1}),
    ]

    def prepare(c: redis.Redis) -> None:
        c.set("k", "v")
        c.set("n", "1")

    for write in writes:
        with pytest.raises(redis.WatchError):
            exec_after_change(server.port, prepare, ("k", "n"), write)


def test_failed_writes_keep_watch(server) -> None:
    def failed_writes(other: redis.Redis) -> None:
        assert other.set("k", "x", nx=True) is None
        assert other.getex("k") == b"v"
        assert other.setrange("k", 0, "") == 1

    assert exec_after_change(server.port, lambda c: c.set("k", "v"), ("k",), failed_writes) == [b"v"]


# --- differential checks against a real Redis ---------------------------------------------------


def test_string_commands_match_redis(server, real_redis) -> None:
    assert_same_as_redis(server, real_redis, [
        ("GET", "k"), ("SET", "k", "v"), ("GET", "k"), ("SET", "k", "w", "GET"),
        ("SET", "k", "x", "NX", "GET"), ("SET", "k", "x", "XX", "NX"), ("SET", "k", "x", "EX"),
        ("SET", "k", "x", "EX", "0"), ("SET", "k", "x", "EX", "-3"), ("SET", "k", "x", "EX", "a"),
        ("SET", "k", "x", "PX", "9223372036854775807"), ("SET", "k", "x", "KEEPTTL", "PX", "5"),
        ("SET", "k", "x", "EX", "5", "EX", "100"), ("SET", "k", "x", "GET", "GET"),
        ("SET", "k", "x", "PERSIST"), ("SET", "k", "x", "pxat", "1"), ("GET", "k"),
        ("SETNX", "k", "1"), ("SETNX", "k", "2"), ("SETEX", "k", "0", "v"), ("PSETEX", "k", "x", "v"),
        ("GETSET", "k", "3"), ("GETDEL", "k"), ("GETDEL", "k"), ("GETEX", "nokey", "EX", "0"),
        ("SET", "k", "v"), ("GETEX", "k", "EX", "0"), ("GETEX", "k", "PERSIST", "PERSIST"),
        ("GETEX", "k", "EX", "1", "PX", "1"), ("GETEX", "k", "XX"), ("GETEX", "k", "EXAT", "1"),
        ("EXISTS", "k"),
        ("MSET", "a", "1", "b"), ("MSET", "a", "1", "b", "2"), ("MGET", "a", "b", "c"),
        ("MSETNX", "c", "3", "a", "0"), ("MSETNX", "c", "3", "d", "4"), ("MSETNX", "a"),
        ("INCR", "a"), ("INCRBY", "a", "-10"), ("DECR", "a"), ("DECRBY", "a", "5"),
        ("INCRBY", "a", "1.5"), ("DECRBY", "a", "-9223372036854775808"),
        ("SET", "big", "9223372036854775807"), ("INCR", "big"), ("INCRBY", "big", "-1"),
        ("SET", "s", " 1"), ("INCR", "s"), ("INCRBYFLOAT", "s", "1"), ("INCRBYFLOAT", "f", "1e3"),
        ("INCRBYFLOAT", "f", "0.1"), ("INCRBYFLOAT", "f", "-1000.1"), ("INCRBYFLOAT", "f", "x"),
        ("INCRBYFLOAT", "f", "1.23456789012345678901234"), ("INCRBYFLOAT", "f", "3e-7"),
        ("INCRBYFLOAT", "f", "inf"), ("INCRBYFLOAT", "f", "0x10"), ("INCRBYFLOAT", "f", "1e400"),
        ("SET", "f", "1.5e4931"), ("INCRBYFLOAT", "f", "1e4931"), ("INCRBYFLOAT", "f", "1e4932"),
        ("APPEND", "ap", "abc"), ("APPEND", "ap", ""), ("APPEND", "ap", "def"), ("STRLEN", "ap"),
        ("STRLEN", "none"), ("GETRANGE", "ap", "1", "-2"), ("GETRANGE", "ap", "-2", "-4"),
        ("GETRANGE", "ap", "10", "20"), ("GETRANGE", "ap", "x", "1"), ("GETRANGE", "none", "0", "1"),
        ("SETRANGE", "ap", "-1", "x"), ("SETRANGE", "ap", "8", "xy"), ("GET", "ap"),
        ("SETRANGE", "new", "0", ""), ("SETRANGE", "ap", "2", ""), ("SETRANGE", "ap", "536870911", "xy"),
        ("SET",), ("GET", "a", "b"), ("MGET",), ("GETEX",),
    ])
