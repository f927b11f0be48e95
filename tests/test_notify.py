"""Keyspace notifications: the events every command publishes, compared message for message with a
real Redis (7.0, installed system-wide), plus expiry, transactions and the config string.

Each script runs on a flushed server with notifications off while its set-up commands run, then
with `notify-keyspace-events` set, while a second connection, subscribed to `__key*__:*`, records
every message; a message on a private channel published last marks the end of the recording.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import call_raw, encode_command, read_reply
from tests.serverproc import RawConnection, free_port, wait_for_port

SYNC = b"notify-test-sync"


def _config_set(conn: RawConnection, flags: str) -> None:
    assert call_raw(conn, "CONFIG", "SET", "notify-keyspace-events", flags) == b"+OK\r\n"


def _run(conn: RawConnection, argv: tuple) -> bytes:
    # ("SLEEP", seconds) waits on the client side, leaving the server free to expire keys.
    if argv[0] == "SLEEP":
        time.sleep(argv[1])
        return b""
    return call_raw(conn, *argv)


def record(port: int, script: list[tuple], setup: list[tuple] = (), flags: str = "KEA",
           db: int = 0) -> tuple[list[bytes], list[bytes]]:
    """(raw replies of script, raw messages received) on a flushed server."""
    cmd = RawConnection(port)
    sub = RawConnection(port)
    try:
        _config_set(cmd, "")
        call_raw(cmd, "FLUSHALL")
        if db:
            call_raw(cmd, "SELECT", db)
        for argv in setup:
            _run(cmd, argv)
        call_raw(sub, "PSUBSCRIBE", "__key*__:*")
        call_raw(sub, "SUBSCRIBE", SYNC)
        _config_set(cmd, flags)
        replies = [_run(cmd, argv) for argv in script]
        _config_set(cmd, "")
        call_raw(cmd, "PUBLISH", SYNC, "end")
        messages = []
        while True:
            message = read_reply(sub)
            if SYNC in message:
                break
            messages.append(message)
        return replies, messages
    finally:
        cmd.close()
        sub.close()


def events(port: int, script: list[tuple], setup: list[tuple] = (), flags: str = "KEA",
           db: int = 0) -> list[tuple[bytes, bytes]]:
    """The (channel, payload) pairs received, decoded from the raw pmessages."""
    _, messages = record(port, script, setup, flags, db)
    out = []
    for raw in messages:
        parts = raw.split(b"\r\n")
        # *4 $8 pmessage $n pattern $n channel $n payload
        out.append((parts[6], parts[8]))
    return out


def assert_same_events(ours_port: int, theirs_port: int, script: list[tuple],
                       setup: list[tuple] = (), flags: str = "KEA") -> None:
    ours = record(ours_port, script, setup, flags)
    theirs = record(theirs_port, script, setup, flags)
    for argv, mine, ref in zip(script, ours[0], theirs[0], strict=True):
        assert mine == ref, f"{argv!r}: rivulet {mine!r} != redis {ref!r}"
    assert ours[1] == theirs[1], (
        f"{script!r}\nrivulet: {b''.join(ours[1])!r}\nredis:   {b''.join(theirs[1])!r}")


# --- one table over every family ------------------------------------------------------------------

# (setup, script): the set-up runs unobserved; the script's replies and events must be Redis's.
CASES: dict[str, tuple[list[tuple], list[tuple]]] = {
    # generic
    "del": ([("SET", "a", "1"), ("SET", "b", "2")], [("DEL", "a", "nope", "b"), ("DEL", "a")]),
    "unlink": ([("SET", "a", "1"), ("RPUSH", "l", "x")], [("UNLINK", "a", "l", "zz")]),
    "expire": ([("SET", "a", "1")], [("EXPIRE", "a", "100"), ("PEXPIRE", "a", "100000"),
                                     ("EXPIREAT", "a", "99999999999"), ("EXPIRE", "nope", "10"),
                                     ("EXPIRE", "a", "100", "NX"), ("PERSIST", "a"),
                                     ("PERSIST", "a")]),
    "expire-past": ([("SET", "a", "1"), ("SET", "b", "1")],
                    [("EXPIRE", "a", "-1"), ("PEXPIREAT", "b", "1")]),
    "rename": ([("SET", "a", "1"), ("SET", "b", "2")],
               [("RENAME", "a", "c"), ("RENAME", "c", "b"), ("RENAMENX", "b", "b"),
                ("RENAMENX", "b", "d"), ("RENAME", "nope", "x"), ("RENAME", "d", "d")]),
    "renamenx-taken": ([("SET", "a", "1"), ("SET", "b", "2")], [("RENAMENX", "a", "b")]),
    "copy": ([("SET", "a", "1"), ("SADD", "s", "m")],
             [("COPY", "a", "b"), ("COPY", "a", "b"), ("COPY", "s", "b", "REPLACE"),
              ("COPY", "a", "x", "DB", "3")]),
    "move": ([("SET", "a", "1"), ("SET", "b", "1"), ("SELECT", "2"), ("SET", "b", "2"),
              ("SELECT", "0")],
             [("MOVE", "a", "2"), ("MOVE", "b", "2"), ("MOVE", "nope", "2")]),
    "flush-swap": ([("SET", "a", "1")], [("SWAPDB", "0", "1"), ("FLUSHDB",), ("FLUSHALL",)]),
    # strings
    "set": ([("SET", "t", "1")],
            [("SET", "a", "1"), ("SET", "a", "2", "EX", "100"), ("SET", "a", "3", "KEEPTTL"),
             ("SET", "a", "4", "NX"), ("SET", "b", "4", "XX"), ("SET", "a", "5", "GET"),
             ("SETNX", "a", "x"), ("SETNX", "c", "x"), ("SETEX", "d", "100", "v"),
             ("PSETEX", "e", "100000", "v"), ("GETSET", "a", "6"), ("MSET", "a", "1", "f", "2"),
             ("MSETNX", "g", "1", "a", "2"), ("MSETNX", "g", "1", "h", "2"),
             # Redis 7.0 keeps a key SET with a past time until its expiry cycle or a lookup
             # finds it; the EXISTS makes the "expired" event certain on both servers.
             ("SET", "t", "x", "PXAT", "1"), ("EXISTS", "t")]),
    "getdel-getex": ([("SET", "a", "1"), ("SET", "b", "1"), ("SET", "c", "1", "EX", "100")],
                     [("GETDEL", "a"), ("GETDEL", "a"), ("GETEX", "b", "EX", "100"),
                      ("GETEX", "b", "PERSIST"), ("GETEX", "b", "PERSIST"), ("GETEX", "c"),
                      ("GETEX", "c", "PXAT", "1"), ("GETEX", "nope", "EX", "1")]),
    "incr-append-setrange": ([], [("INCR", "n"), ("INCRBY", "n", "5"), ("DECR", "n"),
                                  ("DECRBY", "n", "2"), ("INCRBYFLOAT", "n", "1.5"),
                                  ("APPEND", "s", "ab"), ("APPEND", "s", "cd"),
                                  ("SETRANGE", "s", "1", "XY"), ("SETRANGE", "s", "1", ""),
                                  ("SETRANGE", "r", "2", "z"), ("SETRANGE", "q", "0", ""),
                                  ("INCR", "s")]),
    "bits": ([("SET", "x", "\xff")],
             [("SETBIT", "b", "7", "1"), ("SETBIT", "b", "7", "1"), ("SETBIT", "b", "100", "0"),
              ("SETBIT", "b", "7", "0"), ("BITFIELD", "f", "SET", "u8", "0", "5"),
              ("BITFIELD", "f", "SET", "u8", "0", "5"), ("BITFIELD", "f", "GET", "u8", "0"),
              ("BITFIELD", "f", "INCRBY", "u2", "0", "7", "OVERFLOW", "FAIL", "INCRBY", "u8", "0",
               "1"),
              ("BITOP", "AND", "d", "b", "f"), ("BITOP", "OR", "d", "nope1", "nope2"),
              ("BITOP", "NOT", "e", "b"), ("BITOP", "OR", "e", "nope")]),
    # lists
    "push-pop": ([], [("LPUSH", "l", "a", "b"), ("RPUSH", "l", "c"), ("LPUSHX", "l", "d"),
                      ("RPUSHX", "l", "e"), ("LPUSHX", "nope", "x"), ("LPOP", "l"),
                      ("RPOP", "l", "2"), ("LPOP", "l", "0"), ("RPOP", "l", "5"), ("LPOP", "l")]),
    "list-edit": ([("RPUSH", "l", "a", "b", "c", "b", "d")],
                  [("LSET", "l", "0", "z"), ("LINSERT", "l", "BEFORE", "c", "y"),
                   ("LINSERT", "l", "AFTER", "nope", "y"), ("LREM", "l", "0", "b"),
                   ("LREM", "l", "0", "b"), ("LTRIM", "l", "0", "-1"), ("LTRIM", "l", "1", "2"),
                   ("LTRIM", "l", "5", "1"), ("LTRIM", "l", "0", "1"), ("LREM", "nope", "0", "x")]),
    "list-move": ([("RPUSH", "src", "a", "b"), ("RPUSH", "other", "x")],
                  [("LMOVE", "src", "dst", "LEFT", "RIGHT"), ("RPOPLPUSH", "src", "dst"),
                   ("LMOVE", "dst", "dst", "LEFT", "LEFT"), ("LMOVE", "nope", "dst", "LEFT", "LEFT"),
                   ("LMOVE", "dst", "other", "RIGHT", "LEFT"), ("LMPOP", "2", "nope", "dst", "LEFT"),
                   ("LMPOP", "1", "other", "RIGHT", "COUNT", "10")]),
    "list-blocking-ready": ([("RPUSH", "a", "1", "2"), ("RPUSH", "b", "x")],
                            [("BLPOP", "nope", "a", "0"), ("BRPOP", "a", "0"),
                             ("BLMOVE", "b", "c", "LEFT", "LEFT", "0"),
                             ("BRPOPLPUSH", "c", "d", "0"), ("BLMPOP", "0", "1", "d", "LEFT")]),
    # hashes
    "hash": ([], [("HSET", "h", "a", "1", "b", "2"), ("HSET", "h", "a", "1"),
                  ("HSETNX", "h", "a", "x"), ("HSETNX", "h", "c", "x"),
                  ("HMSET", "h", "d", "4"), ("HINCRBY", "h", "n", "5"),
                  ("HINCRBYFLOAT", "h", "f", "1.5"), ("HDEL", "h", "a", "zz"),
                  ("HDEL", "h", "zz"), ("HDEL", "h", "b", "c", "d", "n", "f"),
                  ("HINCRBY", "h2", "x", "1"), ("HINCRBYFLOAT", "h3", "x", "1")]),
    # sets
    "set-members": ([], [("SADD", "s", "a", "b", "c"), ("SADD", "s", "a"), ("SREM", "s", "zz"),
                         ("SREM", "s", "a"), ("SREM", "s", "b", "c"), ("SREM", "s", "a")]),
    "smove": ([("SADD", "s", "a", "b"), ("SADD", "t", "a")],
              [("SMOVE", "s", "t", "a"), ("SMOVE", "s", "t", "zz"), ("SMOVE", "s", "u", "b"),
               ("SMOVE", "u", "u", "b"), ("SMOVE", "nope", "u", "b")]),
    "spop": ([("SADD", "s", "a"), ("SADD", "t", "1", "2", "3")],
             [("SPOP", "s"), ("SPOP", "s"), ("SPOP", "t", "0"), ("SPOP", "t", "5"),
              ("SPOP", "nope", "2")]),
    "set-store": ([("SADD", "a", "1", "2", "3"), ("SADD", "b", "2", "3", "4"), ("SET", "str", "x")],
                  [("SINTERSTORE", "d", "a", "b"), ("SUNIONSTORE", "d", "a", "b"),
                   ("SDIFFSTORE", "d", "a", "b"), ("SDIFFSTORE", "d", "a", "a"),
                   ("SINTERSTORE", "str", "a", "nope"), ("SUNIONSTORE", "e", "nope"),
                   ("SINTERSTORE", "e", "a", "nope")]),
    # sorted sets
    "zadd": ([], [("ZADD", "z", "1", "a", "2", "b"), ("ZADD", "z", "1", "a"),
                  ("ZADD", "z", "NX", "5", "a"), ("ZADD", "z", "XX", "5", "a"),
                  ("ZADD", "z", "INCR", "1", "a"), ("ZINCRBY", "z", "2", "c"),
                  ("ZADD", "z", "GT", "0", "a"), ("ZADD", "y", "XX", "1", "a")]),
    "zrem": ([("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f")],
             [("ZREM", "z", "a", "zz"), ("ZREM", "z", "zz"), ("ZREMRANGEBYRANK", "z", "0", "0"),
              ("ZREMRANGEBYSCORE", "z", "3", "3"), ("ZREMRANGEBYLEX", "z", "[d", "[d"),
              ("ZREMRANGEBYSCORE", "z", "100", "200"), ("ZREMRANGEBYRANK", "z", "0", "-1")]),
    "zpop": ([("ZADD", "z", "1", "a", "2", "b", "3", "c"), ("ZADD", "y", "1", "a")],
             [("ZPOPMIN", "z"), ("ZPOPMAX", "z", "0"), ("ZPOPMAX", "z", "5"), ("ZPOPMIN", "z"),
              ("ZMPOP", "2", "nope", "y", "MAX"), ("BZPOPMIN", "nope", "y", "0.01")]),
    "bzpop-ready": ([("ZADD", "z", "1", "a", "2", "b"), ("ZADD", "y", "1", "a")],
                    [("BZPOPMIN", "z", "0"), ("BZPOPMAX", "z", "0"),
                     ("BZMPOP", "0", "1", "y", "MIN", "COUNT", "3")]),
    "zset-store": ([("ZADD", "a", "1", "x", "2", "y"), ("ZADD", "b", "1", "y", "2", "z")],
                   [("ZUNIONSTORE", "d", "2", "a", "b"), ("ZINTERSTORE", "d", "2", "a", "b"),
                    ("ZDIFFSTORE", "d", "2", "a", "b"), ("ZDIFFSTORE", "d", "2", "a", "a"),
                    ("ZRANGESTORE", "e", "a", "0", "-1"), ("ZRANGESTORE", "e", "a", "5", "6"),
                    ("ZRANGESTORE", "e", "a", "5", "6"), ("ZINTERSTORE", "f", "2", "a", "nope")]),
    # streams
    "xadd-xtrim-xdel": ([], [("XADD", "s", "1-1", "f", "v"), ("XADD", "s", "2-1", "f", "v"),
                             ("XADD", "s", "MAXLEN", "1", "3-1", "f", "v"),
                             ("XADD", "s", "MAXLEN", "5", "4-1", "f", "v"),
                             ("XADD", "nope", "NOMKSTREAM", "*", "f", "v"),
                             ("XADD", "s", "1-1", "f", "v"),
                             ("XTRIM", "s", "MAXLEN", "10"), ("XTRIM", "s", "MAXLEN", "1"),
                             ("XDEL", "s", "1-1"), ("XDEL", "s", "4-1"), ("XDEL", "s", "4-1"),
                             ("XSETID", "s", "10-1"), ("XTRIM", "nope", "MAXLEN", "0")]),
    "xgroup": ([("XADD", "s", "1-1", "f", "v"), ("XADD", "s", "2-1", "f", "v")],
               [("XGROUP", "CREATE", "s", "g", "0"), ("XGROUP", "CREATE", "s", "g", "0"),
                ("XGROUP", "CREATE", "t", "g", "$", "MKSTREAM"),
                ("XGROUP", "SETID", "s", "g", "1-1"),
                ("XGROUP", "CREATECONSUMER", "s", "g", "c1"),
                ("XGROUP", "CREATECONSUMER", "s", "g", "c1"),
                ("XREADGROUP", "GROUP", "g", "c2", "COUNT", "1", "STREAMS", "s", ">"),
                ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">"),
                ("XACK", "s", "g", "1-1"),
                ("XCLAIM", "s", "g", "c3", "0", "2-1", "JUSTID"),
                ("XCLAIM", "s", "g", "c3", "0", "2-1", "JUSTID"),
                ("XAUTOCLAIM", "s", "g", "c4", "0", "0", "JUSTID"),
                ("XGROUP", "DELCONSUMER", "s", "g", "c1"),
                ("XGROUP", "DELCONSUMER", "s", "g", "c1"),
                ("XGROUP", "DESTROY", "s", "g"), ("XGROUP", "DESTROY", "s", "g")]),
    # keys in other databases and wrong types: nothing, or the database's own channels
    "wrongtype": ([("SET", "a", "1")], [("LPUSH", "a", "x"), ("SADD", "a", "x"),
                                        ("HSET", "a", "f", "v"), ("ZADD", "a", "1", "x"),
                                        ("XADD", "a", "*", "f", "v"), ("INCR", "a"),
                                        ("APPEND", "a", "b")]),
    "transaction": ([("SET", "a", "1")],
                    [("MULTI",), ("INCR", "a"), ("RPUSH", "l", "x"), ("DEL", "a"), ("EXEC",),
                     ("MULTI",), ("SET", "b", "1"), ("DISCARD",)]),
    # reads: with class m, each lookup of a read that finds nothing is a `keymiss`; the
    # lookups of writes (Redis's lookupKeyWrite) and of OBJECT, MEMORY USAGE and SCAN never are
    "read-strings": ([("SET", "a", "abc"), ("RPUSH", "l", "x")],
                     [("GET", "a"), ("GET", "nope"), ("GET", "l"), ("MGET", "a", "n1", "l", "n2"),
                      ("STRLEN", "nope"), ("GETRANGE", "nope", "0", "1"), ("GETRANGE", "a", "x", "1"),
                      ("GETSET", "g", "1"), ("GETDEL", "nope"), ("GETEX", "nope", "EX", "10"),
                      ("GETEX", "nope", "EX", "x"), ("SET", "s", "1", "GET"),
                      ("SET", "s2", "1", "NX", "GET"), ("SET", "l", "1", "GET"),
                      ("SETNX", "n3", "1"), ("INCR", "n4"), ("APPEND", "n5", "x"),
                      ("SETRANGE", "n6", "0", "x"), ("LCS", "a", "nope"), ("LCS", "n7", "n8")]),
    "read-bits": ([("SET", "b", "\x0f")],
                  [("GETBIT", "nope", "3"), ("BITCOUNT", "nope"), ("BITCOUNT", "nope", "0", "1"),
                   ("BITPOS", "nope", "1"), ("BITPOS", "nope", "0", "1", "2"),
                   ("BITFIELD", "nope", "GET", "u8", "0"), ("BITFIELD_RO", "nope", "GET", "u4", "0"),
                   ("BITFIELD", "bf", "SET", "u8", "0", "1"), ("BITFIELD_RO", "n2", "SET", "u8", "0", "1"),
                   ("BITOP", "OR", "d", "b", "n3", "n4"), ("SETBIT", "n5", "1", "1")]),
    "read-generic": ([("SET", "a", "1"), ("SET", "t", "1", "EX", "100"), ("HSET", "h", "f", "v")],
                     [("EXISTS", "a", "nope", "a", "n2"), ("TYPE", "nope"), ("TYPE", "h"),
                      ("TTL", "nope"), ("TTL", "t"), ("PTTL", "nope"), ("EXPIRETIME", "nope"),
                      ("PEXPIRETIME", "n2"), ("TOUCH", "a", "nope"), ("DUMP", "nope"),
                      ("COPY", "nope", "x"), ("COPY", "a", "a"), ("OBJECT", "ENCODING", "nope"),
                      ("OBJECT", "FREQ", "nope"), ("MEMORY", "USAGE", "nope"),
                      ("EXPIRE", "nope", "10"), ("PERSIST", "nope"), ("DEL", "nope"),
                      ("RENAME", "nope", "x"), ("MOVE", "nope", "3"),
                      ("SCAN", "0", "TYPE", "hash"),
                      ("MIGRATE", "127.0.0.1", "1", "nope", "0", "100")]),
    "read-hashes": ([("HSET", "h", "a", "1"), ("SET", "str", "x")],
                    [("HGET", "nope", "a"), ("HGET", "h", "zz"), ("HMGET", "nope", "a", "b"),
                     ("HLEN", "nope"), ("HSTRLEN", "nope", "a"), ("HGETALL", "nope"),
                     ("HKEYS", "nope"), ("HVALS", "nope"), ("HEXISTS", "nope", "a"),
                     ("HSCAN", "nope", "0"), ("HRANDFIELD", "nope"), ("HRANDFIELD", "nope", "2"),
                     ("HRANDFIELD", "nope", "x"), ("HGET", "str", "a"), ("HDEL", "nope", "a"),
                     ("HINCRBY", "h", "a", "1"), ("HSETNX", "n2", "a", "1")]),
    "read-lists": ([("RPUSH", "l", "a", "b")],
                   [("LLEN", "nope"), ("LINDEX", "nope", "0"), ("LRANGE", "nope", "0", "-1"),
                    ("LPOS", "nope", "a"), ("LPOS", "nope", "a", "RANK", "0"), ("LPOP", "nope"),
                    ("RPOP", "nope", "2"), ("LPUSHX", "nope", "x"), ("LSET", "nope", "0", "x"),
                    ("LREM", "nope", "0", "x"), ("LTRIM", "nope", "0", "1"),
                    ("LMOVE", "nope", "l", "LEFT", "LEFT"), ("RPOPLPUSH", "n2", "n3"),
                    ("LMPOP", "2", "n4", "n5", "LEFT"), ("BLPOP", "n6", "l", "0"),
                    ("BRPOP", "n7", "0.01"), ("LINSERT", "nope", "BEFORE", "a", "b")]),
    "read-sets": ([("SADD", "s", "a", "b"), ("SADD", "one", "x"), ("SADD", "t", "b", "c"), ("SET", "str", "x")],
                  [("SISMEMBER", "nope", "a"), ("SMISMEMBER", "nope", "a", "b"),
                   ("SCARD", "nope"), ("SMEMBERS", "nope"), ("SRANDMEMBER", "nope"),
                   ("SRANDMEMBER", "nope", "3"), ("SSCAN", "nope", "0"),
                   ("SINTER", "n1", "s", "n2"), ("SINTERSTORE", "d", "s", "n3", "t"),
                   ("SINTERCARD", "3", "n4", "s", "n5"), ("SUNION", "n6", "one", "n7"),
                   ("SUNIONSTORE", "d", "n8", "t"), ("SDIFF", "s", "n9", "t"),
                   ("SDIFFSTORE", "d2", "n10", "s"), ("SINTER", "n11", "str", "n12"),
                   ("SADD", "n13", "x"), ("SREM", "nope", "x"), ("SPOP", "nope"),
                   ("SMOVE", "nope", "s", "a")]),
    "read-zsets": ([("ZADD", "z", "1", "a", "2", "b"), ("ZADD", "y", "1", "b")],
                   [("ZCARD", "nope"), ("ZCOUNT", "nope", "0", "1"),
                    ("ZLEXCOUNT", "nope", "-", "+"), ("ZSCORE", "nope", "a"),
                    ("ZMSCORE", "nope", "a", "b"), ("ZRANK", "nope", "a"),
                    ("ZREVRANK", "nope", "a"), ("ZRANGE", "nope", "0", "-1"),
                    ("ZRANGEBYSCORE", "nope", "0", "1"), ("ZREVRANGEBYLEX", "nope", "+", "-"),
                    ("ZRANGESTORE", "d", "nope", "0", "-1"), ("ZSCAN", "nope", "0"),
                    ("ZRANDMEMBER", "nope"), ("ZRANDMEMBER", "nope", "2"),
                    ("ZUNION", "3", "n1", "z", "n2"), ("ZUNIONSTORE", "d", "2", "n3", "y"),
                    ("ZINTER", "2", "z", "n4"), ("ZINTERSTORE", "d", "2", "n5", "z"),
                    ("ZINTERCARD", "2", "n6", "z"), ("ZDIFF", "2", "z", "n7"),
                    ("ZDIFFSTORE", "d", "2", "n8", "y"), ("ZADD", "n9", "1", "a"),
                    ("ZREM", "nope", "a"), ("ZPOPMIN", "nope"), ("ZINCRBY", "n10", "1", "a"),
                    ("ZMPOP", "2", "n11", "n12", "MIN"), ("ZREMRANGEBYRANK", "nope", "0", "1")]),
    "read-streams": ([("XADD", "s", "1-1", "f", "v"), ("XGROUP", "CREATE", "s", "g", "0")],
                     [("XRANGE", "nope", "-", "+"), ("XREVRANGE", "nope", "+", "-"),
                      ("XLEN", "nope"), ("XREAD", "STREAMS", "nope", "0"),
                      ("XREAD", "COUNT", "1", "STREAMS", "n1", "s", "n2", "0", "0", "$"),
                      ("XREAD", "STREAMS", "n3", "s", "0", "bad"),
                      ("XREAD", "BLOCK", "10", "STREAMS", "n4", "s", "$", "$"),
                      ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "nope", ">"),
                      ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"),
                      ("XACK", "nope", "g", "1-1"), ("XPENDING", "nope", "g"),
                      ("XPENDING", "nope", "g", "-", "+", "10"),
                      ("XCLAIM", "nope", "g", "c", "0", "1-1"),
                      ("XAUTOCLAIM", "nope", "g", "c", "0", "0"),
                      ("XINFO", "STREAM", "nope"), ("XINFO", "GROUPS", "nope"),
                      ("XINFO", "CONSUMERS", "nope", "g"), ("XADD", "nope", "NOMKSTREAM", "*", "f", "v"),
                      ("XDEL", "nope", "1-1"), ("XTRIM", "nope", "MAXLEN", "0"),
                      ("XGROUP", "CREATE", "nope", "g", "0"), ("XSETID", "nope", "1-1")]),
    "read-transaction": ([("SET", "a", "1")],
                         [("MULTI",), ("GET", "nope"), ("EXISTS", "a", "n2"), ("LLEN", "n3"),
                          ("EXEC",), ("SELECT", "4"), ("GET", "x"), ("SELECT", "0")]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_events_as_redis(server, real_redis, name: str) -> None:
    setup, script = CASES[name]
    assert_same_events(server.port, real_redis.port, script, setup)


@pytest.mark.parametrize("name", sorted(CASES))
def test_new_key_events_as_redis(server, real_redis, name: str) -> None:
    # `n` (key creation) is outside A: with it every dbAdd of the script shows.
    setup, script = CASES[name]
    assert_same_events(server.port, real_redis.port, script, setup, flags="KEAn")


@pytest.mark.parametrize("name", sorted(CASES))
def test_key_miss_events_as_redis(server, real_redis, name: str) -> None:
    # `m` (a read's lookup that found nothing) is outside A too: with it, each `keymiss`
    # takes its place among the script's other events.
    setup, script = CASES[name]
    assert_same_events(server.port, real_redis.port, script, setup, flags="KEAm")


@pytest.mark.parametrize("flags", ["Km", "Em", "m", "Kgm", "KEm"])
def test_key_miss_alone_as_redis(server, real_redis, flags: str) -> None:
    setup, script = CASES["read-generic"]
    assert_same_events(server.port, real_redis.port, script, setup, flags=flags)


def test_key_miss_after_lazy_expiry(server) -> None:
    # An expired key read is deleted (`expired`) and then missed (`keymiss`), in that order.
    with redis.Redis(port=server.port) as c:
        c.config_set("active-expire-enabled", "no")
        try:
            got = events(server.port, [("SET", "a", "1", "PX", "30"), ("SLEEP", 0.1),
                                       ("GET", "a"), ("LPUSH", "a", "x")], flags="Exm")
        finally:
            c.config_set("active-expire-enabled", "yes")
    assert got == [(b"__keyevent@0__:expired", b"a"), (b"__keyevent@0__:keymiss", b"a")]


def test_key_miss_from_woken_xread(server) -> None:
    # Redis 7.4 serves a blocked XREAD by running it again when a key it waits on is written,
    # and that run misses its missing keys again (twice each: the ID pass and the serving
    # pass, as the first run did). Redis 7.0 served it without a second run, so published
    # nothing at the wake: a 7.0-vs-7.4 difference; this checks 7.4's order.
    blocker = RawConnection(server.port)
    try:
        call_raw(blocker, "FLUSHALL")
        sub = RawConnection(server.port)
        call_raw(sub, "PSUBSCRIBE", "__keyevent@0__:*")
        call_raw(sub, "SUBSCRIBE", SYNC)
        _config_set(blocker, "Em")
        blocker.send(encode_command("XREAD", "BLOCK", "5000", "STREAMS", "gone", "s", "$", "$"))
        wait = redis.Redis(port=server.port)
        deadline = time.time() + 3
        while int(wait.info("clients")["blocked_clients"]) < 1:
            assert time.time() < deadline
            time.sleep(0.01)
        wait.execute_command("XADD", "s", "1-1", "f", "v")
        assert read_reply(blocker).startswith(b"*1\r\n")
        _config_set(blocker, "")
        wait.publish(SYNC, "end")
        wait.close()
        got = []
        while SYNC not in (message := read_reply(sub)):
            got.append(message.split(b"\r\n")[6:9:2])
        sub.close()
    finally:
        blocker.close()
    # The first run misses both keys twice (the stream did not exist yet), the second run
    # only the one still missing.
    miss = b"__keyevent@0__:keymiss"
    assert got == [[miss, b"gone"], [miss, b"s"], [miss, b"gone"], [miss, b"s"],
                   [miss, b"gone"], [miss, b"gone"]]


def test_key_miss_scan_type_on_expired_key(server) -> None:
    # SCAN's TYPE filter deletes a key it finds expired without a miss (7.4's LOOKUP_NONOTIFY);
    # Redis 7.0 looked the key up as a read there, and published `keymiss` after `expired`:
    # a 7.0-vs-7.4 difference.
    with redis.Redis(port=server.port) as c:
        c.config_set("active-expire-enabled", "no")
        try:
            got = events(server.port, [("SET", "a", "1", "PX", "30"), ("SLEEP", 0.1),
                                       ("SCAN", "0", "TYPE", "string")], flags="Exm")
        finally:
            c.config_set("active-expire-enabled", "yes")
    assert got == [(b"__keyevent@0__:expired", b"a")]


@pytest.mark.parametrize("flags", ["K$", "El", "Kg", "Eg$", "KEz", "Ks", "Eh", "Kt", "KEx", "Kn",
                                   "gEn", "A", "K"])
def test_class_filters_as_redis(server, real_redis, flags: str) -> None:
    setup = [("SET", "old", "1"), ("RPUSH", "l", "a")]
    script = [("SET", "a", "1"), ("EXPIRE", "a", "100"), ("RPUSH", "l", "x"), ("SADD", "s", "m"),
              ("HSET", "h", "f", "v"), ("ZADD", "z", "1", "m"), ("XADD", "x", "1-1", "f", "v"),
              ("DEL", "old", "l"), ("RENAME", "a", "b")]
    assert_same_events(server.port, real_redis.port, script, setup, flags=flags)


def test_other_database_channels(server, real_redis) -> None:
    script = [("SELECT", "5"), ("SET", "a", "1"), ("MOVE", "a", "9"), ("SELECT", "9"),
              ("COPY", "a", "b", "DB", "12"), ("SWAPDB", "9", "12")]
    assert_same_events(server.port, real_redis.port, script)


def test_blocked_client_events_on_wake(server) -> None:
    # A waiter served by a push pops at its wake: the pusher's events, then the pop's.
    blocker = RawConnection(server.port)
    try:
        call_raw(blocker, "FLUSHALL")
        blocker.send(encode_command("BLPOP", "q", "5"))
        wait = redis.Redis(port=server.port)
        deadline = time.time() + 3
        while int(wait.info("clients")["blocked_clients"]) < 1:
            assert time.time() < deadline
            time.sleep(0.01)
        wait.close()
        got = events(server.port, [("RPUSH", "q", "x")])
        assert read_reply(blocker) == b"*2\r\n$1\r\nq\r\n$1\r\nx\r\n"
    finally:
        blocker.close()
    assert got == [(b"__keyspace@0__:q", b"rpush"), (b"__keyevent@0__:rpush", b"q"),
                   (b"__keyspace@0__:q", b"lpop"), (b"__keyevent@0__:lpop", b"q"),
                   (b"__keyspace@0__:q", b"del"), (b"__keyevent@0__:del", b"q")]


def test_pipelined_runs_announce_each_call(server, real_redis) -> None:
    # Runs of pipelined XADD / LPUSH / LPOP / HSET / SETBIT / SADD / ZADD to one key take a batch path: the events must still
    # be one per call, in order.
    for port in (server.port, real_redis.port):
        with redis.Redis(port=port) as c:
            c.config_set("notify-keyspace-events", "")
    script = ([("XADD", "s", "*", "f", "v")] * 5 + [("LPUSH", "l", "a")] * 4
              + [("RPUSH", "l", "b", "c")] * 3 + [("LPOP", "l")] * 10
              + [("HSET", "h", "f", i, "g", i) for i in range(4)] + [("SET", "b", "\x00\x00")]
              + [("SETBIT", "b", i % 3, 1) for i in range(5)] + [("SETBIT", "b", 1, 0)] * 2
              + [("SADD", "st", i % 3) for i in range(6)]
              + [("ZADD", "zs", i % 3, "m", i, f"n{i % 2}") for i in range(6)])

    def run(port: int) -> list[tuple[bytes, bytes]]:
        cmd = RawConnection(port)
        sub = RawConnection(port)
        try:
            call_raw(cmd, "FLUSHALL")
            call_raw(sub, "PSUBSCRIBE", "__key*__:*")
            call_raw(sub, "SUBSCRIBE", SYNC)
            _config_set(cmd, "KEA")
            cmd.send(b"".join(encode_command(*argv) for argv in script))
            for _ in script:
                read_reply(cmd)
            _config_set(cmd, "")
            call_raw(cmd, "PUBLISH", SYNC, "end")
            out = []
            while True:
                message = read_reply(sub)
                if SYNC in message:
                    return out
                parts = message.split(b"\r\n")
                out.append((parts[6], parts[8]))
        finally:
            cmd.close()
            sub.close()

    assert run(server.port) == run(real_redis.port)


# --- expiry ---------------------------------------------------------------------------------------


def test_lazy_expiry_announces_expired(server) -> None:
    with redis.Redis(port=server.port) as c:
        c.config_set("active-expire-enabled", "no")
        try:
            got = events(server.port, [("SET", "a", "1", "PX", "30"), ("SET", "b", "1", "PX", "30"),
                                       ("SLEEP", 0.1), ("GET", "a"), ("EXISTS", "b"),
                                       ("DEL", "b")])
        finally:
            c.config_set("active-expire-enabled", "yes")
    assert got == [
        (b"__keyspace@0__:a", b"set"), (b"__keyevent@0__:set", b"a"),
        (b"__keyspace@0__:a", b"expire"), (b"__keyevent@0__:expire", b"a"),
        (b"__keyspace@0__:b", b"set"), (b"__keyevent@0__:set", b"b"),
        (b"__keyspace@0__:b", b"expire"), (b"__keyevent@0__:expire", b"b"),
        (b"__keyspace@0__:a", b"expired"), (b"__keyevent@0__:expired", b"a"),
        (b"__keyspace@0__:b", b"expired"), (b"__keyevent@0__:expired", b"b"),
    ]


def test_active_expiry_announces_expired(server, real_redis) -> None:
    # Nothing touches the keys: the background cycle deletes them, on both servers alike.
    script = [("SET", "a", "1", "PX", "20"), ("HSET", "h", "f", "v"), ("PEXPIRE", "h", "20"),
              ("SLEEP", 0.5)]
    ours = events(server.port, script, flags="Ex")
    theirs = events(real_redis.port, script, flags="Ex")
    assert sorted(ours) == sorted(theirs) == [(b"__keyevent@0__:expired", b"a"),
                                              (b"__keyevent@0__:expired", b"h")]


# --- the config string ----------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["", "K", "E", "KE", "A", "KEA", "AKE", "gKE", "$lshzxetdKE",
                                   "g$lshzxetd", "g$lshzxetdn", "An", "nA", "m", "Km", "KEAm",
                                   "Kn", "xxxx", "EK", "d", "eEx", "tK$", "AKEm"])
def test_config_round_trip_as_redis(server, real_redis, value: str) -> None:
    out = []
    for port in (server.port, real_redis.port):
        with redis.Redis(port=port) as c:
            c.config_set("notify-keyspace-events", value)
            out.append(c.config_get("notify-keyspace-events"))
            c.config_set("notify-keyspace-events", "")
    assert out[0] == out[1]


@pytest.mark.parametrize("value", ["Q", "KEAq", "k", "a", "G", " ", "K E", "1"])
def test_config_invalid_class_as_redis(server, real_redis, value: str) -> None:
    out = []
    for port in (server.port, real_redis.port):
        conn = RawConnection(port)
        try:
            out.append(call_raw(conn, "CONFIG", "SET", "notify-keyspace-events", value))
            out.append(call_raw(conn, "CONFIG", "GET", "notify-keyspace-events"))
        finally:
            conn.close()
    assert out[0] == out[2]
    assert out[0].startswith(b"-ERR CONFIG SET failed (possibly related to argument "
                             b"'notify-keyspace-events') - Invalid event class character.")
    assert out[1] == out[3] == (b"*2\r\n$22\r\nnotify-keyspace-events\r\n$0\r\n\r\n")


def test_config_file_and_command_line(server_factory) -> None:
    srv = server_factory("--notify-keyspace-events", "lKg")
    with redis.Redis(port=srv.port) as c:
        assert c.config_get("notify-keyspace-events") == {"notify-keyspace-events": "glK"}
    got = events(srv.port, [("RPUSH", "l", "x"), ("DEL", "l")], flags="glK")
    assert got == [(b"__keyspace@0__:l", b"rpush"), (b"__keyspace@0__:l", b"del")]


def test_nothing_published_when_off(server) -> None:
    replies, messages = record(server.port, [("SET", "a", "1"), ("DEL", "a"),
                                             ("XADD", "s", "*", "f", "v")], flags="")
    assert messages == []
    replies, messages = record(server.port, [("SET", "a", "1")], flags="A")  # neither K nor E
    assert messages == []


# --- Redis 8 stream commands (no reference server here: the names Rivulet gives them) ----------


def test_redis8_stream_commands(server) -> None:
    setup = [("XADD", "s", "1-1", "f", "v"), ("XADD", "s", "2-1", "f", "v"),
             ("XADD", "s", "3-1", "f", "v"), ("XGROUP", "CREATE", "s", "g", "0"),
             ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")]
    got = events(server.port, [("XDELEX", "s", "IDS", "1", "1-1"),
                               ("XDELEX", "s", "IDS", "1", "1-1"),
                               ("XACKDEL", "s", "g", "IDS", "1", "2-1"),
                               ("XCFGSET", "s", "IDMP-DURATION", "50"),
                               ("XADD", "s", "IDMP", "p", "i", "*", "f", "v"),
                               ("XADD", "s", "IDMP", "p", "i", "*", "f", "v")],
                 setup=setup, flags="Kt")
    assert got == [(b"__keyspace@0__:s", b"xdelex"), (b"__keyspace@0__:s", b"xackdel"),
                   (b"__keyspace@0__:s", b"xcfgset"), (b"__keyspace@0__:s", b"xadd")]


# --- Redis 7.4: hash field expiry (the 7.4 build when there is one) -------------------------------

REDIS74 = os.environ.get("RIVULET_REDIS74", "/tmp/redis74/src/redis-server")


@pytest.fixture(scope="module")
def redis74() -> Iterator[int]:
    if not (os.path.isfile(REDIS74) and os.access(REDIS74, os.X_OK)):
        pytest.skip(f"NOT TESTED against Redis 7.4: no 7.4 redis-server at {REDIS74} (set "
                    "RIVULET_REDIS74); hash field expiry events are checked against fixed "
                    "expectations only")
    port = free_port()
    work = tempfile.mkdtemp(prefix="redis74-notify-")
    proc = subprocess.Popen([REDIS74, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", work, "--enable-debug-command", "yes"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc)
        yield port
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(work, ignore_errors=True)


# HEXPIRE / HPERSIST / hexpired exist from Redis 7.4 (t_hash.c: hashTypeSetExDone announces
# hexpire or hdel, hpersistCommand hpersist, lazy and active field expiry hexpired); 7.0 has none.
HASH_FIELD_CASES: dict[str, tuple[list[tuple], list[tuple]]] = {
    "hexpire": ([("HSET", "h", "a", "1", "b", "2", "c", "3")],
                [("HEXPIRE", "h", "100", "FIELDS", "2", "a", "zz"),
                 ("HEXPIRE", "h", "100", "NX", "FIELDS", "1", "a"),
                 ("HPEXPIREAT", "h", "1", "FIELDS", "1", "b"),
                 ("HPERSIST", "h", "FIELDS", "2", "a", "c"), ("HPERSIST", "h", "FIELDS", "1", "a"),
                 ("HEXPIRE", "nope", "100", "FIELDS", "1", "a"),
                 ("HPEXPIREAT", "h", "1", "FIELDS", "2", "a", "c")]),
    "lazy-field-expiry": ([("HSET", "h", "a", "1", "b", "2", "c", "3"),
                           ("HSET", "g", "a", "1", "b", "2"),
                           ("HPEXPIRE", "h", "30", "FIELDS", "2", "a", "b"),
                           ("HPEXPIRE", "g", "30", "FIELDS", "2", "a", "b"),
                           ("SLEEP", 0.1)],
                          [("HGET", "h", "a"), ("HMGET", "h", "b", "c"), ("HMGET", "g", "a", "b"),
                           ("HLEN", "h")]),
    "lazy-field-expiry-writes": ([("HSET", "h", "a", "1"), ("HSET", "g", "a", "1", "b", "2"),
                                  ("HSET", "i", "a", "1"), ("HSET", "j", "a", "1", "b", "x"),
                                  ("HSET", "k", "a", "1"),
                                  ("HPEXPIRE", "h", "30", "FIELDS", "1", "a"),
                                  ("HPEXPIRE", "g", "30", "FIELDS", "1", "a"),
                                  ("HPEXPIRE", "i", "30", "FIELDS", "1", "a"),
                                  ("HPEXPIRE", "j", "30", "FIELDS", "1", "a"),
                                  ("HPEXPIRE", "k", "30", "FIELDS", "1", "a"),
                                  ("SLEEP", 0.1)],
                                 [("HINCRBY", "h", "a", "5"), ("HSETNX", "g", "a", "z"),
                                  ("HINCRBYFLOAT", "i", "a", "1.5"), ("HEXISTS", "j", "a"),
                                  ("HSTRLEN", "j", "b"), ("HSET", "k", "a", "2"),
                                  ("HDEL", "k", "a")]),
    "lazy-field-expiry-whole": ([("HSET", "h", "a", "1", "b", "2"), ("HSET", "g", "a", "1"),
                                 ("HPEXPIRE", "h", "30", "FIELDS", "2", "a", "b"),
                                 ("HPEXPIRE", "g", "30", "FIELDS", "1", "a"),
                                 ("SLEEP", 0.1)],
                                [("HRANDFIELD", "h"), ("HGETALL", "g"), ("HSTRLEN", "g", "a"),
                                 ("HEXISTS", "g", "a")]),
}


@pytest.mark.parametrize("name", sorted(HASH_FIELD_CASES))
def test_hash_field_events_as_redis74(server, redis74, name: str) -> None:
    setup, script = HASH_FIELD_CASES[name]
    with redis.Redis(port=server.port) as a, redis.Redis(port=redis74) as b:
        a.config_set("active-expire-enabled", "no")
        b.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        try:
            assert_same_events(server.port, redis74, script, setup)
        finally:
            a.config_set("active-expire-enabled", "yes")
            b.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def test_hash_field_events(server) -> None:
    setup, script = HASH_FIELD_CASES["hexpire"]
    got = events(server.port, script, setup, flags="Kh")
    assert got == [(b"__keyspace@0__:h", b"hexpire"), (b"__keyspace@0__:h", b"hdel"),
                   (b"__keyspace@0__:h", b"hpersist"), (b"__keyspace@0__:h", b"hdel")]


def test_active_field_expiry_announces_hexpired(server) -> None:
    got = events(server.port, [("HSET", "h", "a", "1", "b", "2"), ("HSET", "g", "a", "1"),
                               ("HPEXPIRE", "h", "20", "FIELDS", "1", "a"),
                               ("HPEXPIRE", "g", "20", "FIELDS", "1", "a"),
                               ("SLEEP", 0.5)], flags="Kgh")
    tail = [e for e in got if e[1] in (b"hexpired", b"del")]
    assert sorted(tail) == [(b"__keyspace@0__:g", b"del"), (b"__keyspace@0__:g", b"hexpired"),
                            (b"__keyspace@0__:h", b"hexpired")]
    assert tail.index((b"__keyspace@0__:g", b"hexpired")) < tail.index((b"__keyspace@0__:g",
                                                                         b"del"))


# --- generated sequences --------------------------------------------------------------------------

_KEYS = st.sampled_from(["a", "b", "c"])
_VALUES = st.sampled_from(["x", "y", "1"])
_IDS = st.integers(min_value=1, max_value=6).map(lambda n: f"{n}-1")


def _commands() -> st.SearchStrategy[tuple]:
    one_key = st.tuples(st.sampled_from([
        "DEL", "INCR", "LPOP", "ZPOPMIN", "ZPOPMAX", "GETDEL", "PERSIST"]), _KEYS)
    key_value = st.tuples(st.sampled_from([
        "SET", "APPEND", "RPUSH", "LPUSH", "LPUSHX", "SADD", "SREM", "GETSET", "SETNX"]),
        _KEYS, _VALUES)
    two_keys = st.tuples(st.sampled_from(["RENAME", "RENAMENX", "COPY", "RPOPLPUSH"]), _KEYS, _KEYS)
    return st.one_of(
        one_key, key_value, two_keys,
        st.tuples(st.just("HSET"), _KEYS, _VALUES, _VALUES),
        st.tuples(st.just("HDEL"), _KEYS, _VALUES),
        st.tuples(st.just("HINCRBY"), _KEYS, _VALUES, st.just("1")),
        st.tuples(st.just("ZADD"), _KEYS, st.sampled_from(["1", "2"]), _VALUES),
        st.tuples(st.just("ZREM"), _KEYS, _VALUES),
        st.tuples(st.just("ZINCRBY"), _KEYS, st.just("1"), _VALUES),
        st.tuples(st.just("XADD"), _KEYS, _IDS, st.just("f"), _VALUES),
        st.tuples(st.just("XDEL"), _KEYS, _IDS),
        st.tuples(st.just("XTRIM"), _KEYS, st.just("MAXLEN"), st.sampled_from(["0", "1", "3"])),
        st.tuples(st.just("LREM"), _KEYS, st.just("0"), _VALUES),
        st.tuples(st.just("LTRIM"), _KEYS, st.sampled_from(["0", "1"]), st.sampled_from(["-1", "0"])),
        st.tuples(st.just("SMOVE"), _KEYS, _KEYS, _VALUES),
        st.tuples(st.just("LMOVE"), _KEYS, _KEYS, st.sampled_from(["LEFT", "RIGHT"]),
                  st.sampled_from(["LEFT", "RIGHT"])),
        st.tuples(st.sampled_from(["SUNIONSTORE", "SINTERSTORE", "SDIFFSTORE"]), _KEYS, _KEYS, _KEYS),
        st.tuples(st.sampled_from(["ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"]), _KEYS, st.just("2"),
                  _KEYS, _KEYS),
        st.tuples(st.just("EXPIRE"), _KEYS, st.sampled_from(["100", "-1"])),
        st.tuples(st.just("SETRANGE"), _KEYS, st.sampled_from(["0", "2"]), st.sampled_from(["z", ""])),
        st.tuples(st.just("SETBIT"), _KEYS, st.sampled_from(["0", "9"]), st.sampled_from(["0", "1"])),
    )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=st.lists(_commands(), min_size=1, max_size=12))
def test_generated_sequences_as_redis(server, real_redis, script: list[tuple]) -> None:
    # Only deterministic commands: both servers must give the same replies too.
    assert_same_events(server.port, real_redis.port, script, flags="KEAn")


def _reads() -> st.SearchStrategy[tuple]:
    return st.one_of(
        st.tuples(st.sampled_from(["GET", "STRLEN", "LLEN", "SCARD", "ZCARD", "HLEN", "XLEN",
                                   "TYPE", "TTL", "EXISTS", "SMEMBERS", "HGETALL"]), _KEYS),
        st.tuples(st.sampled_from(["MGET", "EXISTS", "SINTER", "SUNION", "SDIFF", "TOUCH"]),
                  _KEYS, _KEYS),
        st.tuples(st.just("HGET"), _KEYS, _VALUES),
        st.tuples(st.just("LRANGE"), _KEYS, st.just("0"), st.just("-1")),
        st.tuples(st.just("XRANGE"), _KEYS, st.just("-"), st.just("+")),
        st.tuples(st.just("ZUNION"), st.just("2"), _KEYS, _KEYS),
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=st.lists(st.one_of(_commands(), _reads()), min_size=1, max_size=12))
def test_generated_sequences_with_key_misses_as_redis(server, real_redis, script: list[tuple]) -> None:
    assert_same_events(server.port, real_redis.port, script, flags="KEAm")


# --- a RESP3 client subscribed to its own events -------------------------------------------------

_SELF_EXPECTED = [
    b"+OK\r\n",
    b">4\r\n$8\r\npmessage\r\n$10\r\n__key*__:*\r\n$16\r\n__keyspace@0__:a\r\n$3\r\nset\r\n",
    b">4\r\n$8\r\npmessage\r\n$10\r\n__key*__:*\r\n$18\r\n__keyevent@0__:set\r\n$1\r\na\r\n",
    b"+OK\r\n", b"+QUEUED\r\n", b"*1\r\n:2\r\n",
    b">4\r\n$8\r\npmessage\r\n$10\r\n__key*__:*\r\n$16\r\n__keyspace@0__:a\r\n$6\r\nincrby\r\n",
    b">4\r\n$8\r\npmessage\r\n$10\r\n__key*__:*\r\n$21\r\n__keyevent@0__:incrby\r\n$1\r\na\r\n",
]


def _own_events(port: int) -> list[bytes]:
    conn = RawConnection(port)
    try:
        call_raw(conn, "HELLO", "3")
        call_raw(conn, "FLUSHALL")
        call_raw(conn, "PSUBSCRIBE", "__key*__:*")
        _config_set(conn, "KEA")
        conn.send(b"".join(encode_command(*argv) for argv in
                           [("SET", "a", "1"), ("MULTI",), ("INCR", "a"), ("EXEC",)]))
        out = [read_reply(conn) for _ in _SELF_EXPECTED]
        _config_set(conn, "")
        return out
    finally:
        conn.close()


def test_resp3_own_events_follow_the_reply(server) -> None:
    # Redis 7.4 sends the pushes a command causes to its own client after the command's reply
    # (after the whole EXEC reply in a transaction). Redis 7.0 sent them before the reply, even
    # inside EXEC's array: a 7.0-vs-7.4 difference, so the reference here is 7.4's bytes.
    assert _own_events(server.port) == _SELF_EXPECTED


def test_resp3_own_events_as_redis74(server, redis74) -> None:
    assert _own_events(server.port) == _own_events(redis74) == _SELF_EXPECTED
