"""MULTI / EXEC / DISCARD / WATCH / UNWATCH."""

from __future__ import annotations

import time

import pytest
import redis

from tests.serverproc import RawConnection


def test_multi_exec(rc: redis.Redis) -> None:
    pipe = rc.pipeline(transaction=True)
    pipe.set("a", 1).incr("a").get("a")
    assert pipe.execute() == [True, 2, b"2"]


def test_exec_and_discard_without_multi(rc: redis.Redis) -> None:
    with pytest.raises(redis.ResponseError, match="^EXEC without MULTI$"):
        rc.execute_command("EXEC")
    with pytest.raises(redis.ResponseError, match="^DISCARD without MULTI$"):
        rc.execute_command("DISCARD")


def test_nested_multi_and_watch_inside_multi(raw: RawConnection) -> None:
    raw.send(b"MULTI\r\nMULTI\r\nWATCH x\r\nPING\r\nEXEC\r\n")
    expected = (b"+OK\r\n-ERR MULTI calls can not be nested\r\n-ERR WATCH inside MULTI is not allowed\r\n"
                b"+QUEUED\r\n*1\r\n+PONG\r\n")
    assert raw.read_exactly(len(expected)) == expected


def test_execabort_on_queued_error(raw: RawConnection) -> None:
    raw.send(b"MULTI\r\nSET a 1\r\nNOSUCH x\r\nGET\r\nEXEC\r\nGET a\r\n")
    expected = (
        b"+OK\r\n+QUEUED\r\n"
        b"-ERR unknown command 'NOSUCH', with args beginning with: 'x' \r\n"
        b"-ERR wrong number of arguments for 'get' command\r\n"
        b"-EXECABORT Transaction discarded because of previous errors.\r\n"
        b"$-1\r\n"
    )
    assert raw.read_exactly(len(expected)) == expected


def test_runtime_error_inside_exec_does_not_abort(raw: RawConnection) -> None:
    raw.send(b"MULTI\r\nSET s abc\r\nINCR s\r\nSET t 1\r\nEXEC\r\n")
    expected = (b"+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n+OK\r\n"
                b"-ERR value is not an integer or out of range\r\n+OK\r\n")
    assert raw.read_exactly(len(expected)) == expected


def test_discard(rc: redis.Redis, raw: RawConnection) -> None:
    raw.send(b"MULTI\r\nSET a 1\r\nDISCARD\r\nGET a\r\n")
    assert raw.read_exactly(5 + 9 + 5 + 5) == b"+OK\r\n+QUEUED\r\n+OK\r\n$-1\r\n"


def test_watch_aborts_when_key_changes(r: redis.Redis, server) -> None:
    other = redis.Redis(port=server.port)
    r.set("balance", 10)
    conn = RawConnection(server.port)
    conn.send(b"WATCH balance\r\n")
    assert conn.read_exactly(5) == b"+OK\r\n"
    other.set("balance", 20)
    conn.send(b"MULTI\r\nSET balance 30\r\nEXEC\r\n")
    assert conn.read_exactly(5 + 9 + 5) == b"+OK\r\n+QUEUED\r\n*-1\r\n"
    assert r.get("balance") == b"20"
    # After EXEC the watch is gone: the next transaction succeeds.
    conn.send(b"MULTI\r\nSET balance 30\r\nEXEC\r\n")
    assert conn.read_exactly(5 + 9 + 9) == b"+OK\r\n+QUEUED\r\n*1\r\n+OK\r\n"
    conn.close()
    other.close()


def test_watch_unaffected_by_other_keys_and_unwatch(r: redis.Redis) -> None:
    r.set("w", 1)
    with r.pipeline() as pipe:
        pipe.watch("w")
        r.set("unrelated", 1)
        pipe.multi()
        pipe.set("w", 2)
        assert pipe.execute() == [True]
    with r.pipeline() as pipe:
        pipe.watch("w")
        r.set("w", 5)
        pipe.unwatch()
        pipe.multi()
        pipe.set("w", 6)
        assert pipe.execute() == [True]
    assert r.get("w") == b"6"


def test_watch_invalidated_by_delete_expire_and_flush(r: redis.Redis) -> None:
    for action in (lambda: r.delete("w"), lambda: r.expire("w", 100), lambda: r.flushdb()):
        r.set("w", 1)
        with r.pipeline() as pipe:
            pipe.watch("w")
            action()
            pipe.multi()
            pipe.set("w", 2)
            with pytest.raises(redis.WatchError):
                pipe.execute()


def test_watch_missing_key_then_created(r: redis.Redis) -> None:
    with r.pipeline() as pipe:
        pipe.watch("new")
        r.set("new", 1)
        pipe.multi()
        pipe.set("new", 2)
        with pytest.raises(redis.WatchError):
            pipe.execute()


def test_watched_key_expiring_before_exec_aborts(r: redis.Redis) -> None:
    r.set("ttl", 1, px=100)
    with r.pipeline() as pipe:
        pipe.watch("ttl")
        time.sleep(0.2)  # the key expires, and nobody touches it (no lazy access either)
        pipe.multi()
        pipe.set("other", 1)
        with pytest.raises(redis.WatchError):
            pipe.execute()
    assert r.get("other") is None


def test_shutdown_not_allowed_in_multi(raw: RawConnection) -> None:
    raw.send(b"MULTI\r\nSHUTDOWN\r\nEXEC\r\n")
    expected = (b"+OK\r\n-ERR Command not allowed inside a transaction\r\n"
                b"-EXECABORT Transaction discarded because of previous errors.\r\n")
    assert raw.read_exactly(len(expected)) == expected
