"""Expiry commands: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT, TTL, PTTL, EXPIRETIME, PEXPIRETIME,
PERSIST; lazy and active expiry as seen by clients."""

from __future__ import annotations

import time

import pytest
import redis

from tests.helpers import assert_same_as_redis, call_raw, exec_after_change
from tests.serverproc import RawConnection

LLONG_MAX = 2**63 - 1


def test_ttl_of_missing_and_persistent_keys(r: redis.Redis, raw: RawConnection) -> None:
    assert r.ttl("missing") == -2
    assert r.pttl("missing") == -2
    assert r.expiretime("missing") == -2
    assert r.pexpiretime("missing") == -2
    r.set("k", "v")
    assert r.ttl("k") == -1
    assert r.pttl("k") == -1
    assert r.expiretime("k") == -1
    assert r.pexpiretime("k") == -1
    assert call_raw(raw, "TTL", "nothing") == b":-2\r\n"


def test_expire_and_ttl(r: redis.Redis, raw: RawConnection) -> None:
    assert r.expire("missing", 100) is False
    r.set("k", "v")
    assert call_raw(raw, "EXPIRE", "k", "100") == b":1\r\n"
    assert 99 <= r.ttl("k") <= 100
    assert 99_000 < r.pttl("k") <= 100_000
    assert r.pexpire("k", 50_000) is True
    assert 49_000 < r.pttl("k") <= 50_000
    assert r.persist("k") is True
    assert r.ttl("k") == -1
    assert r.persist("k") is False
    assert r.persist("missing") is False


def test_ttl_rounds_to_nearest_second(r: redis.Redis) -> None:
    r.set("a", "v")
    r.set("b", "v")
    r.pexpire("a", 2100)  # ~2.1s left: rounds down
    r.pexpire("b", 2900)  # ~2.9s left: rounds up
    assert r.ttl("a") == 2
    assert r.ttl("b") == 3


def test_expireat_and_expiretime(r: redis.Redis) -> None:
    r.set("k", "v")
    at = int(time.time()) + 1000
    assert r.expireat("k", at) is True
    assert r.expiretime("k") == at
    assert r.pexpiretime("k") == at * 1000
    assert r.pexpireat("k", at * 1000 + 499) is True
    assert r.expiretime("k") == at  # rounded to the nearest second
    assert r.pexpireat("k", at * 1000 + 500) is True
    assert r.expiretime("k") == at + 1
    assert r.pexpiretime("k") == at * 1000 + 500


def test_expire_in_the_past_deletes(r: redis.Redis) -> None:
    for cmd, arg in (("EXPIRE", -1), ("EXPIRE", 0), ("PEXPIRE", -100), ("EXPIREAT", 1),
                     ("PEXPIREAT", 0), ("EXPIREAT", -5)):
        r.set("k", "v")
        assert r.execute_command(cmd, "k", arg) == 1
        assert r.exists("k") == 0
        assert r.ttl("k") == -2


def test_expire_far_future_is_valid(r: redis.Redis) -> None:
    r.set("k", "v")
    assert r.execute_command("EXPIREAT", "k", LLONG_MAX // 1000) == 1
    assert r.pexpiretime("k") == (LLONG_MAX // 1000) * 1000
    assert r.execute_command("PEXPIREAT", "k", LLONG_MAX) == 1
    assert r.pexpiretime("k") == LLONG_MAX
    assert r.get("k") == b"v"


def test_expire_overflow_errors(r: redis.Redis) -> None:
    r.set("k", "v")
    cases = [
        ("EXPIRE", LLONG_MAX // 1000 + 1), ("EXPIRE", -(2**63 // 1000) - 1),
        ("EXPIRE", LLONG_MAX // 1000), ("PEXPIRE", LLONG_MAX), ("EXPIREAT", LLONG_MAX // 1000 + 1),
    ]
    for cmd, arg in cases:
        name = cmd.lower()
        with pytest.raises(redis.ResponseError, match=f"^invalid expire time in '{name}' command$"):
            r.execute_command(cmd, "k", arg)
    assert r.ttl("k") == -1
    # the lowest valid seconds value is accepted (and deletes the key)
    assert r.execute_command("EXPIRE", "k", -(2**63 // 1000)) == 1


def test_expire_not_an_integer(r: redis.Redis) -> None:
    r.set("k", "v")
    for arg in ("abc", "1.5", "", " 1", "99999999999999999999"):
        with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
            r.execute_command("EXPIRE", "k", arg)


def test_expire_option_errors(r: redis.Redis) -> None:
    r.set("k", "v")
    with pytest.raises(redis.ResponseError, match="^Unsupported option foo$"):
        r.execute_command("EXPIRE", "k", 10, "foo")
    # options are checked before the time argument
    with pytest.raises(redis.ResponseError, match="^Unsupported option BAR$"):
        r.execute_command("EXPIRE", "k", "notanumber", "BAR")
    nx_msg = "^NX and XX, GT or LT options at the same time are not compatible$"
    for opts in (("NX", "XX"), ("NX", "GT"), ("LT", "NX"), ("NX", "XX", "GT", "LT")):
        with pytest.raises(redis.ResponseError, match=nx_msg):
            r.execute_command("PEXPIRE", "k", 10, *opts)
    with pytest.raises(redis.ResponseError, match="^GT and LT options at the same time are not compatible$"):
        r.execute_command("EXPIRE", "k", 10, "GT", "LT")
    assert r.ttl("k") == -1
    # repeating an option is fine
    assert r.execute_command("EXPIRE", "k", 100, "nx", "NX") == 1


def test_expire_nx_xx(r: redis.Redis) -> None:
    r.set("k", "v")
    assert r.expire("k", 100, xx=True) is False
    assert r.ttl("k") == -1
    assert r.expire("k", 100, nx=True) is True
    assert r.expire("k", 200, nx=True) is False
    assert r.ttl("k") <= 100
    assert r.expire("k", 200, xx=True) is True
    assert r.ttl("k") > 150
    assert r.expire("missing", 10, nx=True) is False


def test_expire_gt_lt(r: redis.Redis) -> None:
    base = int(time.time()) + 1000  # absolute times: the comparisons must not depend on timing
    r.set("k", "v")
    # no TTL is an infinite TTL: GT can never beat it, LT always does
    assert r.expireat("k", base, gt=True) is False
    assert r.ttl("k") == -1
    assert r.expireat("k", base, lt=True) is True
    assert r.expireat("k", base + 1, lt=True) is False
    assert r.expireat("k", base, lt=True) is False  # equal is not less
    assert r.expireat("k", base - 10, lt=True) is True
    assert r.expiretime("k") == base - 10
    assert r.expireat("k", base - 10, gt=True) is False  # equal is not greater
    assert r.expireat("k", base - 20, gt=True) is False
    assert r.expireat("k", base + 50, gt=True) is True
    assert r.expiretime("k") == base + 50
    assert r.pexpireat("k", (base + 50) * 1000 + 1, xx=True, gt=True) is True
    assert r.pexpiretime("k") == (base + 50) * 1000 + 1
    # relative forms compare the resulting absolute time the same way
    assert r.expire("k", 10, gt=True) is False
    assert r.expire("k", 10, lt=True) is True
    assert r.ttl("k") <= 10


def test_expire_lt_with_past_time_deletes(r: redis.Redis) -> None:
    r.set("k", "v", ex=100)
    assert r.expire("k", -1, lt=True) is True
    assert r.exists("k") == 0


def test_lazy_expiry(r: redis.Redis) -> None:
    r.set("k", "v", px=300)
    assert r.get("k") == b"v"
    time.sleep(0.4)
    assert r.get("k") is None
    assert r.ttl("k") == -2
    assert r.exists("k") == 0
    assert r.persist("k") is False
    assert r.expire("k", 100) is False


def test_active_expiry_reclaims_keys(r: redis.Redis) -> None:
    r.mset({f"k{i}": 1 for i in range(50)})
    for i in range(50):
        r.pexpire(f"k{i}", 20)
    r.set("keep", 1)
    deadline = time.monotonic() + 5
    while r.dbsize() > 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert r.dbsize() == 1


def test_expire_then_overwrite_clears_ttl(r: redis.Redis) -> None:
    r.set("k", "v")
    r.expire("k", 100)
    r.set("k", "w")
    assert r.ttl("k") == -1
    r.expire("k", 100)
    r.delete("k")
    r.set("k", "x")
    assert r.ttl("k") == -1


def test_expiry_commands_invalidate_watch(server) -> None:
    actions = [
        lambda c: c.expire("k", 100), lambda c: c.pexpire("k", 100_000),
        lambda c: c.expire("k", -1), lambda c: c.persist("t"), lambda c: c.expireat("k", 1),
    ]

    def prepare(c: redis.Redis) -> None:
        c.set("k", "v")
        c.set("t", "v", ex=100)

    for act in actions:
        with pytest.raises(redis.WatchError):
            exec_after_change(server.port, prepare, ("k", "t"), act)


def test_failed_expire_keeps_watch(server) -> None:
    def failed_writes(other: redis.Redis) -> None:
        assert other.expire("k", 100, xx=True) is False
        assert other.persist("k") is False

    assert exec_after_change(server.port, lambda c: c.set("k", "v"), ("k",), failed_writes) == [b"v"]


def test_expire_inside_multi(r: redis.Redis) -> None:
    r.set("k", "v")
    pipe = r.pipeline()
    pipe.expire("k", 100)
    pipe.ttl("k")
    pipe.persist("k")
    pipe.ttl("k")
    assert pipe.execute() == [True, 100, True, -1]


def test_expire_commands_match_redis(server, real_redis) -> None:
    assert_same_as_redis(server, real_redis, [
        ("TTL", "k"), ("PTTL", "k"), ("EXPIRETIME", "k"), ("PEXPIRETIME", "k"), ("PERSIST", "k"),
        ("EXPIRE", "k", "10"), ("SET", "k", "v"), ("TTL", "k"), ("EXPIRETIME", "k"),
        ("EXPIRE", "k", "100", "XX"), ("EXPIRE", "k", "100", "GT"), ("EXPIRE", "k", "100", "LT"),
        ("TTL", "k"), ("EXPIRE", "k", "200", "NX"), ("EXPIRE", "k", "200", "GT"), ("TTL", "k"),
        ("EXPIRE", "k", "10", "GT"), ("EXPIRE", "k", "10", "foo"), ("EXPIRE", "k", "10", "NX", "LT"),
        ("EXPIRE", "k", "10", "gt", "lt"), ("EXPIRE", "k", "x"), ("EXPIRE", "k", "x", "zz"),
        ("EXPIRE", "k", "9223372036854776"), ("PEXPIRE", "k", "9223372036854775807"),
        ("EXPIREAT", "k", "9223372036854776"), ("EXPIRE", "k", "-9223372036854776"),
        ("PEXPIREAT", "k", "9223372036854775807"), ("PEXPIRETIME", "k"), ("PERSIST", "k"),
        ("PERSIST", "k"), ("EXPIREAT", "k", "1"), ("EXISTS", "k"), ("SET", "k", "v"),
        ("PEXPIRE", "k", "-1"), ("TTL", "k"), ("EXPIRE",), ("TTL",), ("PERSIST", "a", "b"),
    ])
