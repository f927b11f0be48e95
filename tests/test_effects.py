"""The effects path: what every write command hands to the AOF, exactly.

A representative mix of writes (strings with expiries, INCRBYFLOAT, keyspace commands, every
stream write, group reads and claims, a woken blocked reader, MULTI/EXEC across databases, lazy
and active expiry) is run against a server with an AOF. The file is checked three ways: its
commands, with clock-dependent values replaced by placeholders, are exactly the expected ones;
replayed into a real Redis with `redis-cli --pipe` it rebuilds the same dataset; and a restart
on it rebuilds the same dataset too.
"""

from __future__ import annotations

import re
import socket
import subprocess
import threading
import time
from typing import Any

import hiredis
import pytest
import redis

from protocol.reply import OK, ErrorReply
from tests.helpers import aof_path, parse_aof, restart, strip_moving_fields, wait_blocked
from tests.serverproc import RedisProcess

# Far in the future, so that nothing expires during the test and the times are exact.
FAR_MS = 4102444800000  # 2100-01-01
FAR_S = FAR_MS // 1000


def run_mix(port: int) -> None:
    """The commands whose effects are checked; every one of them ends before the next starts."""
    r = redis.Redis(port=port)
    r1 = redis.Redis(port=port, db=1)

    # Strings and their expiries.
    r.set("s1", "v1")
    r.set("s2", "v2", pxat=FAR_MS)
    r.set("s3", "v3", ex=1000)
    r.execute_command("SETEX", "s4", 100, "v")
    r.psetex("s5", 100000, "v")
    r.set("s1", "new", keepttl=True)
    r.set("s1", "x", nx=True)  # no change: nothing logged
    r.set("s1", "y", xx=True, get=True)
    r.setnx("s6", "a")
    r.setnx("s6", "b")  # no change
    r.getset("s6", "c")
    r.getex("s2", persist=True)
    r.getex("s3", pxat=FAR_MS + 1)
    r.getex("s4", exat=1)  # a time in the past deletes the key
    r.getex("s1")  # no option: a read
    r.getdel("s5")
    r.getdel("s5")  # gone: nothing
    r.mset({"m1": "1", "m2": "2"})
    r.msetnx({"m1": "x", "m3": "y"})  # m1 exists: nothing
    r.msetnx({"m3": "3", "m4": "4"})
    r.incr("c")
    r.incrby("c", 10)
    r.decr("c")
    r.decrby("c", 3)
    r.incrbyfloat("f", "0.1")
    r.incrbyfloat("f", "0.2")
    r.set("ft", "1.5", pxat=FAR_MS)
    r.incrbyfloat("ft", "1")  # keeps its TTL
    r.append("a", "x")
    r.append("a", "yz")
    r.setrange("r", 5, "hi")
    r.setrange("r", 0, "")  # writes nothing

    # Expiry commands.
    r.expire("s1", 1000)
    r.pexpireat("m1", FAR_MS)
    r.expireat("m2", FAR_S)
    r.persist("m1")
    r.persist("m1")  # no TTL left: nothing
    r.expire("m2", 100, nx=True)  # has a TTL: nothing
    r.pexpire("m3", -1)  # a time in the past deletes the key
    r.expire("nokey", 10)  # no key: nothing

    # Keyspace commands.
    r.delete("m4", "nokey")
    r.delete("nokey")  # nothing
    r.unlink("c")
    r.rename("a", "a2")
    r.renamenx("a2", "m2")  # m2 exists: nothing
    r.copy("a2", "a3")
    r.copy("a2", "a3")  # a3 exists: nothing
    r.copy("a2", "x", destination_db=2)
    r1.set("one", "1")
    r1.set("two", "2")
    r1.flushdb()
    r1.flushdb()  # empty: nothing
    r.execute_command("FUNCTION", "FLUSH")

    # Lazy expiry: the read finds the key expired and deletes it.
    r.set("e1", "v", px=50)
    time.sleep(0.15)
    assert r.get("e1") is None

    # Transactions: one MULTI/EXEC around everything the EXEC wrote, SELECTs included.
    raw = redis.Redis(port=port)
    pipe = raw.pipeline(transaction=True)
    pipe.set("t1", "1").execute_command("SELECT", 3).set("t3", "3").incrbyfloat("t3f", "2.5")
    pipe.xadd("st3", {"f": "v"}, id="1-1").execute_command("SELECT", 0).get("t1")
    pipe.execute()
    with r.pipeline(transaction=True) as p:
        p.get("t1").exists("s1").execute()  # no write: nothing at all

    # Stream writes.
    r.xadd("st", {"f": "v"}, id="1-1")
    r.xadd("st", {"f": "v"}, id="1-*")  # the sequence is generated: logged with it
    r.xadd("st", {"f": "v"}, id="2-0", maxlen=100, approximate=False)
    r.xadd("st", {"f": "v"}, id="3-0", maxlen=3, approximate=True)  # `~`: logged as an exact trim
    r.xadd("st", {"f": "v"}, id="4-0", nomkstream=True)
    r.xadd("nost", {"f": "v"}, nomkstream=True)  # no key: nothing
    r.xadd("st", {"f": "v"}, id="5-0")
    r.xadd("st", {"f": "v"}, id="6-0")
    r.xadd("st", {"f": "v"}, id="7-0")
    r.xadd("auto", {"f": "v"})
    pipe = r.pipeline(transaction=False)
    for i in range(5):
        pipe.xadd("run", {"i": str(i)})  # one pipelined batch: the run handler
    pipe.execute()
    r.xtrim("st", maxlen=100)  # removes nothing: nothing
    r.xtrim("st", minid="2-0")  # `~` within one node: removes nothing
    r.xdel("st", "3-0")
    r.xdel("st", "99-0")  # nothing
    r.execute_command("XSETID", "st", "10-0")
    r.config_set("stream-node-max-entries", 2)
    try:
        for i in range(1, 8):
            r.xadd("small", {"f": "v"}, id=f"{i}-0")
        r.xtrim("small", maxlen=2, approximate=True)  # removes whole nodes: an exact trim
        r.xtrim("small", maxlen=2, approximate=False)
    finally:
        r.config_set("stream-node-max-entries", 100)

    # Consumer groups.
    r.xgroup_create("st", "g1", id="0")
    r.xgroup_create("st", "g2", id="$")
    r.xgroup_create("ns", "g", id="$", mkstream=True)
    r.xgroup_setid("st", "g2", "0", entries_read=0)
    r.xgroup_createconsumer("st", "g1", "c0")
    r.xgroup_createconsumer("st", "g1", "c0")  # exists: nothing
    r.xgroup_delconsumer("st", "g1", "c0")
    r.xgroup_delconsumer("st", "g1", "nobody")  # nothing
    r.xgroup_destroy("st", "g2")
    r.xgroup_destroy("st", "g2")  # nothing
    r.xreadgroup("g1", "alice", {"st": ">"}, count=2)
    r.xreadgroup("g1", "bob", {"st": ">"})
    r.xreadgroup("g1", "alice", {"st": "0"})  # history: delivery counts move on
    r.xreadgroup("g1", "bob", {"st": ">"})  # nothing new: nothing
    r.xack("st", "g1", "2-0")
    r.xack("st", "g1", "2-0")  # nothing
    r.xclaim("st", "g1", "carol", 0, ["4-0", "5-0"], time=1000, retrycount=5)
    r.xclaim("st", "g1", "carol", 0, ["4-0"], justid=True)
    r.xclaim("st", "g1", "dan", 0, ["2-0"], force=True, time=2000)  # not pending: FORCE
    r.xclaim("st", "g1", "dan", 0, ["99-0"], force=True)  # no such entry: nothing
    r.xdel("st", "6-0")
    r.xclaim("st", "g1", "carol", 0, ["6-0"], time=3000)  # entry gone: the record is acked
    r.execute_command("XCLAIM", "st", "g1", "carol", 0, "7-0", "TIME", 4000, "LASTID", "9-0")
    r.xautoclaim("st", "g1", "erin", 0, "0-0", count=2)
    r.xreadgroup("g1", "frank", {"st": ">"}, noack=True)  # nothing new
    r.xgroup_create("st", "g3", id="0")
    r.xreadgroup("g3", "gina", {"st": ">"}, count=1, noack=True)

    # A blocked reader woken by an XADD.
    r.xgroup_create("wake", "g", id="$", mkstream=True)
    got: list[Any] = []
    reader = threading.Thread(target=lambda: got.append(redis.Redis(port=port).xreadgroup(
        "g", "waiter", {"wake": ">"}, block=0)))
    reader.start()
    wait_blocked(r, 1)
    r.xadd("wake", {"f": "v"}, id="1-0")
    reader.join(5)
    assert got and got[0]

    # Active expiry: nobody touches the key.
    r.set("e2", "v", px=50)
    deadline = time.monotonic() + 5
    while r.info("stats")["expired_keys"] < 2:
        assert time.monotonic() < deadline, "e2 never expired"
        time.sleep(0.05)

    r.close()
    r1.close()
    raw.close()


# The AOF the mix above produced before effects had a single path (one line per command).
# `<ms>` stands for a time read from the clock, `<idN>` for the N-th distinct generated ID.
EXPECTED: list[tuple] = [
    ('SELECT', '0'),
    ('SET', 's1', 'v1'),
    ('SET', 's2', 'v2'),
    ('PEXPIREAT', 's2', '4102444800000'),
    ('SET', 's3', 'v3'),
    ('PEXPIREAT', 's3', '<ms>'),
    ('SET', 's4', 'v'),
    ('PEXPIREAT', 's4', '<ms>'),
    ('SET', 's5', 'v'),
    ('PEXPIREAT', 's5', '<ms>'),
    ('SET', 's1', 'new'),
    ('SET', 's1', 'y'),
    ('SETNX', 's6', 'a'),
    ('SET', 's6', 'c'),
    ('SET', 's2', 'v2'),
    ('SET', 's3', 'v3'),
    ('PEXPIREAT', 's3', '4102444800001'),
    ('DEL', 's4'),
    ('GETDEL', 's5'),
    ('MSET', 'm1', '1', 'm2', '2'),
    ('MSETNX', 'm3', '3', 'm4', '4'),
    ('INCRBY', 'c', '1'),
    ('INCRBY', 'c', '10'),
    ('DECRBY', 'c', '1'),
    ('DECRBY', 'c', '3'),
    ('SET', 'f', '0.1'),
    ('SET', 'f', '0.3'),
    ('SET', 'ft', '1.5'),
    ('PEXPIREAT', 'ft', '4102444800000'),
    ('SET', 'ft', '2.5'),
    ('PEXPIREAT', 'ft', '4102444800000'),
    ('APPEND', 'a', 'x'),
    ('APPEND', 'a', 'yz'),
    ('SETRANGE', 'r', '5', 'hi'),
    ('PEXPIREAT', 's1', '<ms>'),
    ('PEXPIREAT', 'm1', '4102444800000'),
    ('PEXPIREAT', 'm2', '4102444800000'),
    ('PERSIST', 'm1'),
    ('DEL', 'm3'),
    ('DEL', 'm4', 'nokey'),
    ('UNLINK', 'c'),
    ('RENAME', 'a', 'a2'),
    ('COPY', 'a2', 'a3'),
    ('COPY', 'a2', 'x', 'DB', '2'),
    ('SELECT', '1'),
    ('SET', 'one', '1'),
    ('SET', 'two', '2'),
    ('FLUSHDB',),
    ('SELECT', '0'),
    ('FUNCTION', 'FLUSH'),
    ('SET', 'e1', 'v'),
    ('PEXPIREAT', 'e1', '<ms>'),
    ('DEL', 'e1'),
    ('MULTI',),
    ('SET', 't1', '1'),
    ('SELECT', '3'),
    ('SET', 't3', '3'),
    ('SET', 't3f', '2.5'),
    ('XADD', 'st3', '1-1', 'f', 'v'),
    ('EXEC',),
    ('SELECT', '0'),
    ('XADD', 'st', '1-1', 'f', 'v'),
    ('XADD', 'st', '1-2', 'f', 'v'),
    ('XADD', 'st', 'MAXLEN', '100', '2-0', 'f', 'v'),
    ('XADD', 'st', 'MAXLEN', '=', '4', '3-0', 'f', 'v'),
    ('XADD', 'st', 'NOMKSTREAM', '4-0', 'f', 'v'),
    ('XADD', 'st', '5-0', 'f', 'v'),
    ('XADD', 'st', '6-0', 'f', 'v'),
    ('XADD', 'st', '7-0', 'f', 'v'),
    ('XADD', 'auto', '<id1>', 'f', 'v'),
    ('XADD', 'run', '<id2>', 'i', '0'),
    ('XADD', 'run', '<id3>', 'i', '1'),
    ('XADD', 'run', '<id4>', 'i', '2'),
    ('XADD', 'run', '<id5>', 'i', '3'),
    ('XADD', 'run', '<id6>', 'i', '4'),
    ('XDEL', 'st', '3-0'),
    ('XSETID', 'st', '10-0'),
    ('XADD', 'small', '1-0', 'f', 'v'),
    ('XADD', 'small', '2-0', 'f', 'v'),
    ('XADD', 'small', '3-0', 'f', 'v'),
    ('XADD', 'small', '4-0', 'f', 'v'),
    ('XADD', 'small', '5-0', 'f', 'v'),
    ('XADD', 'small', '6-0', 'f', 'v'),
    ('XADD', 'small', '7-0', 'f', 'v'),
    ('XTRIM', 'small', 'MAXLEN', '=', '3'),
    ('XTRIM', 'small', 'MAXLEN', '2'),
    ('XGROUP', 'CREATE', 'st', 'g1', '0-0', 'MKSTREAM', 'ENTRIESREAD', '-1'),
    ('XGROUP', 'CREATE', 'st', 'g2', '10-0', 'MKSTREAM', 'ENTRIESREAD', '-1'),
    ('XGROUP', 'CREATE', 'ns', 'g', '0-0', 'MKSTREAM', 'ENTRIESREAD', '-1'),
    ('XGROUP', 'SETID', 'st', 'g2', '0-0', 'ENTRIESREAD', '0'),
    ('XGROUP', 'CREATECONSUMER', 'st', 'g1', 'c0'),
    ('XGROUP', 'DELCONSUMER', 'st', 'g1', 'c0'),
    ('XGROUP', 'DESTROY', 'st', 'g2'),
    ('XGROUP', 'CREATECONSUMER', 'st', 'g1', 'alice'),
    ('XCLAIM', 'st', 'g1', 'alice', '0', '1-1', 'TIME', '<ms>', 'RETRYCOUNT', '1', 'FORCE', 'JUSTID'),
    ('XCLAIM', 'st', 'g1', 'alice', '0', '1-2', 'TIME', '<ms>', 'RETRYCOUNT', '1', 'FORCE', 'JUSTID'),
    ('XGROUP', 'SETID', 'st', 'g1', '1-2', 'ENTRIESREAD', '-1'),
    ('XGROUP', 'CREATECONSUMER', 'st', 'g1', 'bob'),
    ('XCLAIM', 'st', 'g1', 'bob', '0', '2-0', 'TIME', '<ms>', 'RETRYCOUNT', '1', 'FORCE', 'JUSTID'),
    ('XCLAIM', 'st', 'g1', 'bob', '0', '4-0', 'TIME', '<ms>', 'RETRYCOUNT', '1', 'FORCE', 'JUSTID'),
    ('XCLAIM', 'st', 'g1', 'bob', '0', '5-0', 'TIME', '<ms>', 'RETRYCOUNT', '1', 'FORCE', 'JUSTID'),
    ('XCLAIM', 'st', 'g1', 'bob', '0', '6-0', 'TIME', '<ms>', 'RETRYCOUNT', '1', 'FORCE', 'JUSTID'),
    ('XCLAIM', 'st', 'g1', 'bob', '0', '7-0', 'TIME', '<ms>', 'RETRYCOUNT', '1', 'FORCE', 'JUSTID'),
    ('XGROUP', 'SETID', 'st', 'g1', '7-0', 'ENTRIESREAD', '-1'),
    ('XCLAIM', 'st', 'g1', 'alice', '0', '1-1', 'TIME', '<ms>', 'RETRYCOUNT', '2', 'FORCE', 'JUSTID'),
    ('XCLAIM', 'st', 'g1', 'alice', '0', '1-2', 'TIME', '<ms>', 'RETRYCOUNT', '2', 'FORCE', 'JUSTID'),
    ('XACK', 'st', 'g1', '2-0'),
    ('XGROUP', 'CREATECONSUMER', 'st', 'g1', 'carol'),
    ('XCLAIM', 'st', 'g1', 'carol', '0', '4-0', 'TIME', '1000', 'RETRYCOUNT', '5', 'FORCE', 'JUSTID'),
    ('XCLAIM', 'st', 'g1', 'carol', '0', '5-0', 'TIME', '1000', 'RETRYCOUNT', '5', 'FORCE', 'JUSTID'),
    ('XCLAIM', 'st', 'g1', 'carol', '0', '4-0', 'TIME', '<ms>', 'RETRYCOUNT', '5', 'FORCE', 'JUSTID'),
    ('XGROUP', 'CREATECONSUMER', 'st', 'g1', 'dan'),
    ('XCLAIM', 'st', 'g1', 'dan', '0', '2-0', 'TIME', '2000', 'RETRYCOUNT', '2', 'FORCE', 'JUSTID'),
    ('XDEL', 'st', '6-0'),
    ('XACK', 'st', 'g1', '6-0'),
    ('XCLAIM', 'st', 'g1', 'carol', '0', '7-0', 'TIME', '4000', 'RETRYCOUNT', '2', 'FORCE', 'JUSTID'),
    ('XGROUP', 'SETID', 'st', 'g1', '9-0', 'ENTRIESREAD', '-1'),
    ('XGROUP', 'CREATECONSUMER', 'st', 'g1', 'erin'),
    ('XCLAIM', 'st', 'g1', 'erin', '0', '1-1', 'TIME', '<ms>', 'RETRYCOUNT', '3', 'FORCE', 'JUSTID'),
    ('XCLAIM', 'st', 'g1', 'erin', '0', '1-2', 'TIME', '<ms>', 'RETRYCOUNT', '3', 'FORCE', 'JUSTID'),
    ('XGROUP', 'CREATECONSUMER', 'st', 'g1', 'frank'),
    ('XGROUP', 'CREATE', 'st', 'g3', '0-0', 'MKSTREAM', 'ENTRIESREAD', '-1'),
    ('XGROUP', 'CREATECONSUMER', 'st', 'g3', 'gina'),
    ('XGROUP', 'SETID', 'st', 'g3', '1-1', 'ENTRIESREAD', '-1'),
    ('XGROUP', 'CREATE', 'wake', 'g', '0-0', 'MKSTREAM', 'ENTRIESREAD', '-1'),
    ('XGROUP', 'CREATECONSUMER', 'wake', 'g', 'waiter'),
    ('XADD', 'wake', '1-0', 'f', 'v'),
    ('XCLAIM', 'wake', 'g', 'waiter', '0', '1-0', 'TIME', '<ms>', 'RETRYCOUNT', '1', 'FORCE', 'JUSTID'),
    ('XGROUP', 'SETID', 'wake', 'g', '1-0', 'ENTRIESREAD', '1'),
    ('SET', 'e2', 'v'),
    ('PEXPIREAT', 'e2', '<ms>'),
    ('DEL', 'e2'),
]


_CLOCK_ID = re.compile(rb"\d{13}-\d+\Z")
_CLOCK_MS = re.compile(rb"\d{13}\Z")


def normalize(commands: list[list[bytes]]) -> list[tuple]:
    """Commands with their clock-dependent arguments replaced by stable placeholders."""
    ids: dict[tuple[bytes, bytes], str] = {}  # (key, ID): two streams may generate one ID
    out = []
    for argv in commands:
        row = []
        for arg in argv:
            if _CLOCK_ID.match(arg):
                row.append(ids.setdefault((argv[1], arg), f"<id{len(ids) + 1}>"))
            elif _CLOCK_MS.match(arg) and int(arg) not in (FAR_MS, FAR_MS + 1):
                row.append("<ms>")
            else:
                row.append(arg.decode())
        out.append(tuple(row))
    return out


def _raw(port: int, db: int, *argv: bytes) -> Any:
    reader = hiredis.Reader()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        for cmd in ((b"SELECT", b"%d" % db), argv):
            sock.sendall(b"*%d\r\n" % len(cmd) + b"".join(
                b"$%d\r\n%s\r\n" % (len(a), a) for a in cmd))
            while (reply := reader.gets()) is False:
                reader.feed(sock.recv(1 << 20))
    return reply


# XINFO fields of Redis 8 that the Redis 7.0 this is compared with does not have: the idempotent
# producers' (8.6) and nacked-count (8.8).
REDIS8_FIELDS = frozenset({b"nacked-count", b"idmp-duration", b"idmp-maxsize", b"pids-tracked",
                           b"iids-tracked", b"iids-added", b"iids-duplicates"})


def dataset(port: int) -> dict:
    """Every key of databases 0-3 with its type, value (streams: XINFO STREAM FULL without the
    consumers' clock readings) and absolute expiry time."""
    out = {}
    for db in range(4):
        for key in sorted(_raw(port, db, b"KEYS", b"*")):
            kind = _raw(port, db, b"TYPE", key)
            if kind == b"string":
                value = _raw(port, db, b"GET", key)
            else:
                value = strip_moving_fields(_raw(port, db, b"XINFO", b"STREAM", key, b"FULL"),
                                            REDIS8_FIELDS)
            out[(db, key)] = (kind, value, _raw(port, db, b"PEXPIRETIME", key))
    return out


@pytest.fixture
def mixed_aof(server_factory):
    srv = server_factory("--appendfsync", "always")
    run_mix(srv.port)
    return srv


def test_the_mix_logs_exactly_the_expected_commands(mixed_aof) -> None:
    got = normalize(parse_aof(aof_path(mixed_aof).read_bytes()))
    assert got == EXPECTED


def test_key_cases_byte_for_byte(mixed_aof) -> None:
    data = aof_path(mixed_aof).read_bytes()
    # INCRBYFLOAT is logged as the SET of its result (and the TTL it kept).
    assert (b"*3\r\n$3\r\nSET\r\n$2\r\nft\r\n$3\r\n2.5\r\n"
            b"*3\r\n$9\r\nPEXPIREAT\r\n$2\r\nft\r\n$13\r\n4102444800000\r\n") in data
    # One MULTI/EXEC around the transaction, SELECTs inside it.
    assert (b"*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$2\r\nt1\r\n$1\r\n1\r\n"
            b"*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*3\r\n$3\r\nSET\r\n$2\r\nt3\r\n$1\r\n3\r\n") in data
    assert data.count(b"*1\r\n$5\r\nMULTI\r\n") == 1 and data.count(b"*1\r\n$4\r\nEXEC\r\n") == 1
    # A claim with TIME and RETRYCOUNT is logged as the state it made.
    assert (b"*12\r\n$6\r\nXCLAIM\r\n$2\r\nst\r\n$2\r\ng1\r\n$5\r\ncarol\r\n$1\r\n0\r\n$3\r\n5-0\r\n"
            b"$4\r\nTIME\r\n$4\r\n1000\r\n$10\r\nRETRYCOUNT\r\n$1\r\n5\r\n$5\r\nFORCE\r\n"
            b"$6\r\nJUSTID\r\n") in data
    # An approximate trim is logged as the exact one that removes the same entries.
    assert b"*5\r\n$5\r\nXTRIM\r\n$5\r\nsmall\r\n$6\r\nMAXLEN\r\n$1\r\n=\r\n$1\r\n3\r\n" in data
    # Lazy expiry is one DEL.
    assert data.count(b"*2\r\n$3\r\nDEL\r\n$2\r\ne1\r\n") == 1
    assert data.count(b"*2\r\n$3\r\nDEL\r\n$2\r\ne2\r\n") == 1


@pytest.mark.skipif(not RedisProcess.available(), reason="redis-server is not installed")
def test_the_mix_replays_into_real_redis_and_after_a_restart(mixed_aof, real_redis) -> None:
    ours = dataset(mixed_aof.port)
    assert len(ours) > 20
    theirs = redis.Redis(port=real_redis.port)
    theirs.flushall()
    try:
        out = subprocess.run(["redis-cli", "-p", str(real_redis.port), "--pipe"],
                             input=aof_path(mixed_aof).read_bytes(), capture_output=True,
                             timeout=30)
        assert b"errors: 0" in out.stdout, out.stdout + out.stderr
        assert dataset(real_redis.port) == ours
    finally:
        theirs.flushall()
        theirs.close()
    srv2 = restart(mixed_aof)
    try:
        assert dataset(srv2.port) == ours
    finally:
        srv2.cleanup()


# --- what changed from logging by the change counter -------------------------------------------


def _aof_commands(srv) -> list[list[bytes]]:
    return parse_aof(aof_path(srv).read_bytes())


def test_a_write_that_only_met_an_expired_key_logs_one_del(server_factory) -> None:
    # The expiry is the change (a DEL, as in Redis); the command itself changed nothing, so it
    # is not logged, not even when it failed for want of the key.
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    for key in ("d", "x", "g", "n"):
        r.set(key, "v", px=30)
    time.sleep(0.1)
    assert r.delete("d") == 0
    assert r.expire("x", 100) == 0
    with pytest.raises(redis.ResponseError, match="requires the key to exist"):
        r.xgroup_create("g", "grp", id="$")
    assert r.xadd("n", {"f": "v"}, nomkstream=True) is None
    logged = [c for c in _aof_commands(srv) if c[0] not in (b"SET", b"PEXPIREAT", b"SELECT")]
    assert logged == [[b"DEL", b"d"], [b"DEL", b"x"], [b"DEL", b"g"], [b"DEL", b"n"]]


def test_a_claim_logs_only_the_records_it_changed(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    for i in (1, 2, 3):
        r.xadd("s", {"f": "v"}, id=f"{i}-0")
    r.xgroup_create("s", "g", id="0")
    r.xreadgroup("g", "alice", {"s": ">"})
    before = len(_aof_commands(srv))
    # Not idle long enough: nothing claimed, nothing logged.
    assert r.xclaim("s", "g", "alice", 3_600_000, ["1-0", "2-0"]) == []
    assert len(_aof_commands(srv)) == before
    # An ID named twice is one record: logged once, in ID order with the others.
    r.xclaim("s", "g", "alice", 0, ["3-0", "1-0", "3-0"], justid=True, time=500)
    logged = _aof_commands(srv)[before:]
    assert [c[5] for c in logged] == [b"1-0", b"3-0"]
    assert all(c[:5] == [b"XCLAIM", b"s", b"g", b"alice", b"0"] and c[6:8] == [b"TIME", b"500"]
               for c in logged)


# --- the consumers of effects, in process --------------------------------------------------------


class Recorder:
    """A second consumer beside the AOF, as a replication stream would be."""

    def __init__(self) -> None:
        self.units: list[tuple[list[tuple[int, list[bytes]]], bool]] = []

    def propagate(self, effects: list[tuple[int, list[bytes]]], transaction: bool) -> None:
        self.units.append((list(effects), transaction))


@pytest.fixture
def in_process(tmp_path):
    import asyncio

    from server.blocking import BlockingManager
    from server.config import Config
    from server.connection import Client
    from server.pending_writes import PendingWrites
    from server.server import Server

    config = Config()
    config.set("dir", str(tmp_path))
    config.set("appendonly", "yes")
    config.set("enable-debug-command", "yes", startup=True)
    srv = Server(config)
    loop = asyncio.new_event_loop()
    srv.loop = loop
    srv.pending_writes = PendingWrites(loop)
    srv.blocking = BlockingManager(loop, srv.pending_writes)
    srv.keyspace.ready_hook = srv.blocking.signal_ready
    loop.run_until_complete(srv.persistence.start())  # no file yet: opens it for appending
    recorder = Recorder()
    srv.effects.register(recorder)
    client = Client(srv)
    client.set_authenticated(True)
    yield srv, client, recorder
    srv.persistence.shutdown(False)
    loop.close()


def test_every_consumer_gets_each_command_and_each_exec_as_one_unit(in_process) -> None:
    from server.dispatch import execute, execute_run, lookup

    srv, client, recorder = in_process
    execute(client, [b"SET", b"k", b"v", b"PXAT", b"%d" % FAR_MS])
    execute(client, [b"GET", b"k"])  # a read: no unit
    execute(client, [b"INCRBYFLOAT", b"f", b"1.5"])
    for argv in ([b"MULTI"], [b"SET", b"a", b"1"], [b"SELECT", b"2"], [b"DEL", b"nokey"],
                 [b"SET", b"b", b"2"], [b"EXEC"]):
        execute(client, argv)
    batch = [[b"XADD", b"s", b"*", b"f", b"v"] for _ in range(3)]
    cmd = lookup(batch[0])
    assert not isinstance(cmd, ErrorReply) and execute_run(client, cmd, batch, 0) == 3
    units = recorder.units
    assert units[:3] == [
        ([(0, [b"SET", b"k", b"v"]), (0, [b"PEXPIREAT", b"k", b"%d" % FAR_MS])], False),
        ([(0, [b"SET", b"f", b"1.5"])], False),
        ([(0, [b"SET", b"a", b"1"]), (2, [b"SET", b"b", b"2"])], True),
    ]
    (run, transaction), = units[3:]
    assert not transaction and {db for db, _ in run} == {2}
    # However the run handler recorded them, the unit encodes as the three XADDs with their IDs.
    from server.effects import encode_effects
    xadds = parse_aof(encode_effects(run, False, 2)[0])
    assert [argv[:2] for argv in xadds] == [[b"XADD", b"s"]] * 3
    from streams.ids import format_id
    stream = srv.keyspace.dbs[2].data[b"s"]
    assert [argv[2:] for argv in xadds] == [[format_id(eid), b"f", b"v"] for eid, _ in stream.range()]
    # The AOF is the other consumer: the same units, SELECTs where the database changes.
    aof = srv.persistence.aof
    aof.flush()
    logged = parse_aof(open(aof.path, "rb").read())
    assert logged[:8] == [[b"SELECT", b"0"], [b"SET", b"k", b"v"],
                          [b"PEXPIREAT", b"k", b"%d" % FAR_MS], [b"SET", b"f", b"1.5"],
                          [b"MULTI"], [b"SET", b"a", b"1"], [b"SELECT", b"2"], [b"SET", b"b", b"2"]]
    assert logged[8] == [b"EXEC"] and len(logged) == 12


def test_nothing_is_handed_on_while_the_file_loads(in_process) -> None:
    from server.dispatch import execute

    srv, client, recorder = in_process
    execute(client, [b"SET", b"k", b"v"])
    assert execute(client, [b"DEBUG", b"RELOAD"]) is OK
    assert srv.keyspace.dbs[0].data == {b"k": b"v"}
    assert recorder.units == [([(0, [b"SET", b"k", b"v"])], False)]
    srv.effects.unregister(recorder)
    execute(client, [b"SET", b"k", b"w"])
    assert len(recorder.units) == 1 and srv.effects.active  # the AOF still receives effects


def test_effects_encode_as_resp_commands_of_any_size() -> None:
    from server.effects import encode_effects
    from server.persistence.resp import encode_command

    big = [b"XADD", b"s", b"1-1"] + [b"f%d" % i for i in range(100)] + [b"v" * 5000]
    unit = [(0, [b"SET", b"k", b""]), (12, big), (12, [b"DEL", b"k"]), (3, [b"PING"])]
    data, selected = encode_effects(unit, True, 0)
    assert selected == 3
    assert data == b"".join([
        encode_command([b"MULTI"]), encode_command([b"SET", b"k", b""]),
        encode_command([b"SELECT", b"12"]), encode_command(big), encode_command([b"DEL", b"k"]),
        encode_command([b"SELECT", b"3"]), encode_command([b"PING"]), encode_command([b"EXEC"])])
    assert encode_effects(unit[3:], False, 3) == (encode_command([b"PING"]), 3)


def test_an_xadd_runs_effect_is_the_bytes_of_its_calls() -> None:
    """A pipelined run's effect, built in one pass, against each call's argv encoded alone."""
    import random

    from server.commands.stream_propagate import xadd_run_effect
    from tests.helpers import encode_command

    rng = random.Random(7)
    for _ in range(2000):
        key = rng.choice([b"s", b"k" * rng.randint(1, 300), bytes(rng.randrange(256) for _ in range(5))])
        count = rng.randint(0, 12)
        commands = []
        for _ in range(rng.randint(0, 3) + count):
            fields = [rng.choice([b"", b"v", b"x" * rng.choice([1, 9, 10, 99, 100, 1023, 1024, 5000])])
                      for _ in range(2 * rng.randint(1, 4))]
            commands.append([b"XADD", key, b"*", *fields])
        start = rng.randint(0, len(commands) - count)
        ms = rng.choice([0, 1, 1_700_000_000_000, 2**64 - 1])
        seq = rng.choice([0, 9, 99_999, 2**64 - 3, rng.randrange(2**64)])
        first = (ms << 64) | seq
        expected = b""
        eid = first
        for argv in commands[start:start + count]:
            spelled = b"%d-%d" % (eid >> 64, eid & (2**64 - 1))
            expected += encode_command(b"XADD", key, spelled, *argv[3:])
            eid += 1
        assert xadd_run_effect(key, first, commands, start, count) == expected


def test_an_xadd_runs_effect_from_the_received_bytes_is_the_general_paths(monkeypatch) -> None:
    """The effect of a run of `XADD key * ...` built from the bytes the calls were received as
    (protocol.parser.Received) against the one built from their argvs: the same bytes, for
    any spelling of the name, key and field sizes, argument counts past the prepared headers,
    sequence numbers that carry into the milliseconds, runs inside a read or cut by its end."""
    import random

    import protocol.parser
    from protocol.parser import RequestParser
    from server.commands.stream_propagate import xadd_run_effect, xadd_run_effect_received
    from tests.helpers import encode_command

    monkeypatch.setattr(protocol.parser, "FAST_PATH", "scan")
    rng = random.Random(5)
    spliced = 0
    for _ in range(400):
        key = rng.choice([b"s", b"k" * rng.choice([9, 10, 300, 1023, 1024, 1100]),
                          bytes(rng.randrange(256) for _ in range(5))])
        name = rng.choice([b"XADD", b"xadd", b"xAdD"])
        data = b""
        if rng.random() < 0.5:
            data += encode_command(b"SET", b"x", b"y" * rng.randint(0, 20))
        calls = rng.randint(1, 12)
        for _ in range(calls):
            pairs = rng.choice([1, 1, 2, 3, 31, 40])
            fields = [b"x" * rng.choice([0, 1, 9, 10, 99, 100, 1023, 1024, 5000])
                      for _ in range(2 * pairs)]
            data += encode_command(name, key, b"*", *fields)
        if rng.random() < 0.3:
            data += encode_command(b"GET", key)
        parser = RequestParser()
        reads = [data] if rng.random() < 0.5 else [data[:rng.randint(1, len(data))], None]
        for read in reads:
            chunk = data[len(reads[0]):] if read is None else read
            commands, error = parser.feed(chunk)
            assert error is None
            received = parser.received
            xadds = [i for i, argv in enumerate(commands) if argv[0] == name]
            if not xadds:
                continue
            start = rng.choice(xadds)
            count = rng.randint(0, sum(1 for i in xadds if i >= start))
            ms = rng.choice([0, 1, 1_700_000_000_000, 2**64 - 1])
            seq = rng.choice([0, 8, 9, 99_999, 2**64 - 3, rng.randrange(2**64)])
            first = (ms << 64) | seq
            expected = xadd_run_effect(key, first, commands, start, count)
            eid = first
            assert expected == b"".join(
                encode_command(b"XADD", key, b"%d-%d" % ((eid + i) >> 64, (eid + i) & (2**64 - 1)),
                               *argv[3:])
                for i, argv in enumerate(commands[start:start + count]))
            spliced += received.start(commands, start, count) >= 0
            assert xadd_run_effect_received(key, first, commands, start, count, received) == expected
    assert spliced > 100  # the received bytes were used, not only the general path


def test_pipelined_runs_log_what_their_calls_would_log_alone(server_factory) -> None:
    """Runs of pipelined writes (XADD with `*` or explicit IDs in any spelling, LPUSH, HSET,
    SADD) go to the AOF byte for byte as their calls one by one would: an XADD with `*` as the
    XADD with the ID it was given, the others as sent, whichever way the server built them."""
    from tests.helpers import encode_command, read_reply
    from tests.serverproc import RawConnection

    srv = server_factory("--appendonly", "yes", "--appendfsync", "always")
    conn = RawConnection(srv.port)
    try:
        big = b"k" * 1100
        script: list[tuple[bytes, ...]] = []
        script += [(b"XADD", b"s", b"*", b"f", b"v")] * 20
        script += [(b"xadd", b"s", b"*", b"sensor", b"%d" % i, b"temp", b"1" * i) for i in range(30)]
        script += [(b"XADD", big, b"*", *[b"f%d" % j for j in range(70)])] * 3
        script += [(b"XADD", b"e", b"%d-%d" % (5 + i // 3, i), b"a", b"%d" % i) for i in range(12)]
        script += [(b"xAdD", b"e", b"100-%d" % i, b"b", b"") for i in range(5)]
        script += [(b"LPUSH", b"l", b"a", b"b")] * 4 + [(b"hset", b"h", b"f%d" % i, b"v") for i in range(6)]
        script += [(b"SADD", b"t", b"m%d" % i) for i in range(5)]
        before = aof_path(srv).read_bytes() if aof_path(srv).exists() else b""
        conn.send(b"".join(encode_command(*argv) for argv in script))
        replies = [read_reply(conn) for _ in script]
        expected = [encode_command(b"SELECT", b"0")]
        for argv, reply in zip(script, replies, strict=True):
            assert not reply.startswith(b"-"), (argv[:3], reply)
            if argv[2] == b"*":
                eid = reply.split(b"\r\n")[1]
                expected.append(encode_command(b"XADD", argv[1], eid, *argv[3:]))
            else:
                expected.append(encode_command(*argv))
        after = aof_path(srv).read_bytes()
        assert after.startswith(before)
        assert after[len(before):] == b"".join(expected)
    finally:
        conn.close()
