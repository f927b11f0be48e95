"""Strings edited in place (SETBIT, SETRANGE, APPEND, BITFIELD): every reader sees the bytes
the edits made, whichever form the server holds the string in while it is being edited.

Differential where Redis can answer (random sequences of edits and reads on two keys, the same
replies from both servers); the rest checks what a snapshot, the AOF, a rewrite, WATCH and COPY
make of an edited string on Rivulet alone.
"""

from __future__ import annotations

import random
import time

import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import aof_path, parse_aof, restart, run_pipelined, run_script
from tests.serverproc import ServerProcess

BIG = 1500  # past the size from which BITCOUNT remembers a whole value's count


def _same(server: ServerProcess, real_redis, script: list[tuple], pipelined: bool) -> None:
    run = run_pipelined if pipelined else run_script
    ours = run(server.port, script)
    theirs = run(real_redis.port, script)
    for cmd, mine, ref in zip(script, ours, theirs, strict=True):
        assert mine == ref, f"{cmd!r}: rivulet {mine!r} != redis {ref!r}"


def test_readers_see_the_edits(server, real_redis) -> None:
    script: list[tuple] = [
        ("SET", "k", "12"), ("OBJECT", "ENCODING", "k"),
        ("SETBIT", "k", 3, 1), ("OBJECT", "ENCODING", "k"), ("TYPE", "k"), ("STRLEN", "k"),
        ("GETBIT", "k", 3), ("BITCOUNT", "k"), ("BITPOS", "k", 1), ("GETRANGE", "k", 0, -1),
        ("SETBIT", "k", 100, 1), ("STRLEN", "k"), ("GET", "k"), ("OBJECT", "ENCODING", "k"),
        ("SETBIT", "k", 2, 1), ("APPEND", "k", "tail"), ("SETRANGE", "k", 20, "xyz"),
        ("SETRANGE", "k", 1, "ab"), ("GETRANGE", "k", 1, 4), ("SUBSTR", "k", -5, -1),
        ("BITFIELD", "k", "SET", "u8", 0, 200, "INCRBY", "i5", 100, 7, "GET", "u4", 0),
        ("BITFIELD_RO", "k", "GET", "u16", 8), ("BITFIELD", "k", "SET", "u8", 400, 1),
        ("STRLEN", "k"), ("GET", "k"), ("MGET", "k", "nokey"), ("LCS", "k", "k"),
        ("COPY", "k", "c"), ("SETBIT", "c", 0, 0), ("APPEND", "c", "!"), ("GET", "k"),
        ("GET", "c"), ("RENAME", "k", "r"), ("SETBIT", "r", 5, 1), ("GET", "r"),
        ("EXISTS", "k", "r", "c"), ("SETBIT", "n", 20, 1), ("OBJECT", "ENCODING", "n"),
        ("GET", "n"), ("BITFIELD", "m", "SET", "u8", 16, 255), ("GET", "m"),
        ("OBJECT", "ENCODING", "m"), ("SETRANGE", "r", 0, ""), ("GETSET", "r", "plain"),
        ("APPEND", "r", "er"), ("GETDEL", "r"), ("BITOP", "OR", "d", "c", "n"), ("GET", "d"),
        ("LPUSH", "c", "x"), ("SETBIT", "c", 1, 1), ("INCR", "c"),
    ]
    for pipelined in (False, True):
        _same(server, real_redis, script, pipelined)


def _random_script(seed: int, steps: int) -> list[tuple]:
    rng = random.Random(seed)
    script: list[tuple] = [("SET", "a", rng.randbytes(BIG)), ("SET", "b", rng.randbytes(BIG // 3))]
    for _ in range(steps):
        key = rng.choice("ab")
        size = BIG + 40
        kind = rng.randrange(14)
        if kind < 5:
            script.append(("SETBIT", key, rng.randrange(size * 8), rng.randrange(2)))
        elif kind == 5:
            script.append(("BITCOUNT", key))
        elif kind == 6:
            script.append(("BITCOUNT", key, rng.randrange(-50, 50), rng.randrange(-50, 2000)))
        elif kind == 7:
            script.append(("APPEND", key, rng.randbytes(rng.randrange(1, 9))))
        elif kind == 8:
            script.append(("SETRANGE", key, rng.randrange(size), rng.randbytes(rng.randrange(1, 5))))
        elif kind == 9:
            script.append(("BITFIELD", key, "INCRBY", "u8", rng.randrange(size * 8), 3))
        elif kind == 10:
            script.append(("RENAME", key, "b" if key == "a" else "a"))
        elif kind == 11:
            script.append(("COPY", key, "b" if key == "a" else "a", "REPLACE"))
        elif kind == 12:
            script.append(("GET", key))
        else:
            script.append(("GETRANGE", key, rng.randrange(size), rng.randrange(size)))
    script += [("GET", "a"), ("GET", "b"), ("BITCOUNT", "a"), ("BITCOUNT", "b")]
    return script


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32), pipelined=st.booleans())
def test_random_edits_and_reads_match_redis(server, real_redis, seed: int, pipelined: bool) -> None:
    # RENAME and COPY move a string, and with it any count remembered for it, between keys.
    _same(server, real_redis, _random_script(seed, 60), pipelined)


def test_watch_sees_an_edit_in_place(r: redis.Redis, server) -> None:
    r.set("k", b"\x00" * 10)
    r.setbit("k", 1, 1)  # now held for editing
    with redis.Redis(port=server.port) as other:
        for edit in (lambda: other.setbit("k", 2, 1), lambda: other.append("k", "x"),
                     lambda: other.setrange("k", 3, "y"),
                     lambda: other.bitfield("k").set("u8", 0, 9).execute()):
            pipe = r.pipeline()
            pipe.watch("k")
            edit()
            pipe.multi()
            pipe.get("k")
            try:
                pipe.execute()
                raise AssertionError("EXEC ran although the watched key changed")
            except redis.WatchError:
                pass


def test_snapshot_and_dump_take_the_edited_bytes(server_factory) -> None:
    srv = server_factory()
    with redis.Redis(port=srv.port) as c:
        c.set("k", b"ab")
        c.setbit("k", 0, 1)
        c.append("k", "cd")
        c.setrange("k", 6, "z")
        expected = c.get("k")
        c.setbit("k", 1, 1)  # edited again after the GET that made it plain bytes
        expected = bytes([expected[0] | 0x40]) + expected[1:]
        payload = c.dump("k")
        c.restore("copy", 0, payload)
        assert c.get("copy") == expected
        c.setbit("k", 2, 1)
        c.save()
        final = c.get("k")
    srv = restart(srv)
    with redis.Redis(port=srv.port) as c:
        assert c.get("k") == final
        assert c.get("copy") == expected
    srv.cleanup()


def test_aof_and_rewrite_take_the_bytes_of_each_moment(server_factory) -> None:
    srv = server_factory("--appendonly", "yes")
    with redis.Redis(port=srv.port) as c:
        c.set("k", "start")
        pipe = c.pipeline(transaction=True)
        pipe.append("k", "-one")
        pipe.append("k", "-two")
        pipe.setrange("k", 0, "S")
        pipe.setbit("k", 7, 0)
        pipe.execute()
        value = c.get("k")
        logged = [cmd for cmd in parse_aof(aof_path(srv).read_bytes())
                  if cmd[0] in (b"SET", b"APPEND", b"SETRANGE", b"SETBIT")]
        # As Redis logs them: each edit as it was sent (a replay redoes the same edit), never
        # the whole value again.
        assert logged == [[b"SET", b"k", b"start"], [b"APPEND", b"k", b"-one"],
                          [b"APPEND", b"k", b"-two"], [b"SETRANGE", b"k", b"0", b"S"],
                          [b"SETBIT", b"k", b"7", b"0"]]
        c.setbit("k", 6, 1)
        c.bgrewriteaof()
        c.append("k", "!")
        c.setbit("k", 9, 1)
        for _ in range(200):
            if c.info("persistence")["aof_rewrite_in_progress"] == 0:
                break
            time.sleep(0.05)
        value = c.get("k")
    srv = restart(srv, "--appendonly", "yes")
    with redis.Redis(port=srv.port) as c:
        assert c.get("k") == value
    srv.cleanup()


def test_memory_figures_follow_the_edits(server_factory) -> None:
    # With a limit set, used_memory is the server's own estimate of its data, kept per write.
    srv = server_factory("--maxmemory", "1gb")
    with redis.Redis(port=srv.port) as r:
        r.set("k", b"x" * 100)
        r.setbit("k", 0, 0)
        before = r.memory_usage("k")
        dataset = r.info("memory")["used_memory_dataset"]
        r.setbit("k", 100_000, 1)  # grows the string by about 12 KB, in place
        assert r.memory_usage("k") >= before + 12_000
        r.append("k", b"y" * 5000)
        assert r.memory_usage("k") >= before + 17_000
        grown = r.info("memory")["used_memory_dataset"]
        assert grown >= dataset + 17_000
        r.delete("k")
        assert r.info("memory")["used_memory_dataset"] <= grown - 17_000
    srv.cleanup()
