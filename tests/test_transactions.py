"""MULTI / EXEC / DISCARD / WATCH / UNWATCH."""

from __future__ import annotations

import time

import pytest
import redis

from tests.helpers import encode_command, read_reply, run_pipelined
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


def test_a_transaction_longer_than_execs_slices_answers_as_redis(server, real_redis) -> None:
    """EXEC hands its run handlers at most a slice of the queued calls at a time (1,024): a
    run of 3,000 XADDs with errors on both sides of the slice borders, and other commands
    between, answers and stores exactly as Redis does."""
    n = 3000
    bad = {1023, 1024, 2047, 2049}
    script: list[tuple] = [("SET", "str", "x"), ("MULTI",)]
    for i in range(1, n + 1):
        if i in bad:
            script.append(("XADD", "s", "1-1", "f", "too small"))
        elif i == 1500:
            script += [("SET", "k", "v"), ("XADD", "str", f"2-{i}", "f", "v"), ("INCR", "str")]
        else:
            script.append(("XADD", "s", f"2-{i}", "f", i))
    script += [("EXEC",), ("XLEN", "s"), ("XRANGE", "s", "2-1000", "2-1100"), ("GET", "k")]
    mine = run_pipelined(server.port, script)
    theirs = run_pipelined(real_redis.port, script)
    for cmd, ours, ref in zip(script, mine, theirs, strict=True):
        assert ours == ref, f"{cmd!r}: rivulet {ours[:200]!r} != redis {ref[:200]!r}"
    assert mine[-3] == b":%d\r\n" % (n - len(bad) - 1)


def test_a_queue_is_empty_after_discard_abort_and_exec(server, real_redis) -> None:
    """The queued calls of a transaction are gone with it, however it ended: the next MULTI on
    the connection starts from nothing, as in Redis."""
    big = [("XADD", "s", "*", "f", i) for i in range(2000)]
    script: list[tuple] = [("MULTI",), *big, ("DISCARD",),
                           ("MULTI",), ("SET", "a", 1), ("EXEC",),
                           ("MULTI",), *big, ("NOSUCH",), ("EXEC",),
                           ("MULTI",), ("INCR", "a"), ("EXEC",),
                           ("MULTI",), *big[:1500], ("EXEC",),
                           ("MULTI",), ("INCR", "a"), ("EXEC",), ("XLEN", "s")]
    mine = run_pipelined(server.port, script)
    theirs = run_pipelined(real_redis.port, script)
    for cmd, ours, ref in zip(script, mine, theirs, strict=True):
        if cmd[0] == "EXEC" and ours.startswith(b"*1500"):
            continue  # entry IDs differ by server; the count and each ID's shape are below
        assert ours == ref, f"{cmd!r}: rivulet {ours[:200]!r} != redis {ref[:200]!r}"
    assert mine[-5].startswith(b"*1500\r\n") and mine[-5].count(b"\r\n$") == 1500
    assert mine[-2:] == [b"*1\r\n:3\r\n", b":1500\r\n"]


def test_client_list_counts_a_queue_as_redis(server, real_redis) -> None:
    """CLIENT LIST's multi= and multi-mem= for a queue of calls of several sizes, read from
    another connection (inside MULTI, CLIENT INFO would be queued)."""
    queue = [*[("XADD", "s", "*", "field", "x" * i) for i in range(300)], ("SET", "k", "v" * 1000)]
    seen = []
    for port in (server.port, real_redis.port):
        conn = RawConnection(port)
        other = redis.Redis(port=port)
        try:
            conn.send(b"".join(encode_command(*cmd) for cmd in
                               [("CLIENT", "SETNAME", "queuer"), ("MULTI",), *queue]))
            assert [read_reply(conn) for _ in range(len(queue) + 2)][2:] == [b"+QUEUED\r\n"] * len(queue)
            line = next(c for c in other.client_list() if c["name"] == "queuer")
            seen.append((line["multi"], line["multi-mem"]))
        finally:
            conn.close()
            other.close()
    assert seen[0] == seen[1] and seen[0][0] == "301"
