"""OBJECT (ENCODING, REFCOUNT, IDLETIME, FREQ, HELP), MEMORY (USAGE, STATS, DOCTOR, MALLOC-STATS,
PURGE, HELP) and DEBUG OBJECT, on every registered type; differential against a real Redis where
the reply does not depend on the implementation's memory layout or the clock."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import redis

from tests.helpers import assert_same_as_redis, call_raw, run_script
from tests.serverproc import RawConnection, free_port
from tests.test_keys_generic import TYPES, make

# Redis 7.4's MEMORY STATS fields (7.0 lacks the overhead.db.hashtable.* and
# db.dict.rehashing.count ones, which 7.4 added).
MEMORY_STATS_74 = [
    "peak.allocated", "total.allocated", "startup.allocated", "replication.backlog",
    "clients.slaves", "clients.normal", "cluster.links", "aof.buffer", "lua.caches",
    "functions.caches", "overhead.db.hashtable.lut", "overhead.db.hashtable.rehashing",
    "overhead.total", "db.dict.rehashing.count", "keys.count", "keys.bytes-per-key",
    "dataset.bytes", "dataset.percentage", "peak.percentage", "allocator.allocated",
    "allocator.active", "allocator.resident", "allocator.muzzy", "allocator-fragmentation.ratio",
    "allocator-fragmentation.bytes", "allocator-rss.ratio", "allocator-rss.bytes",
    "rss-overhead.ratio", "rss-overhead.bytes", "fragmentation", "fragmentation.bytes"]
ADDED_IN_74 = {"overhead.db.hashtable.lut", "overhead.db.hashtable.rehashing",
               "db.dict.rehashing.count", "allocator.muzzy"}


@contextmanager
def config(*clients: redis.Redis, **settings: str) -> Iterator[None]:
    saved = [{name: c.config_get(name)[name] for name in settings} for c in clients]
    try:
        for c in clients:
            for name, value in settings.items():
                c.config_set(name, value)
        yield
    finally:
        for c, old in zip(clients, saved, strict=True):
            for name, value in old.items():
                c.config_set(name, value)


# --- OBJECT ENCODING / REFCOUNT --------------------------------------------------------------------

STRING_VALUES = ["0", "1", "9999", "10000", "-1", "-9999", "01", "+1", "1.5", " 1", "1 ",
                 "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                 "-9223372036854775809", "12345678901234567890", "", "x", "a" * 44, "a" * 45,
                 "9" * 21, "\x00", "héllo"]


def test_string_encoding_and_refcount_match_redis(server, real_redis):
    script = []
    for i, value in enumerate(STRING_VALUES):
        key = f"k{i}"
        script += [("SET", key, value), ("OBJECT", "ENCODING", key), ("OBJECT", "REFCOUNT", key)]
    script += [("INCR", "n"), ("OBJECT", "ENCODING", "n"), ("OBJECT", "REFCOUNT", "n"),
               ("INCRBY", "n", "20000"), ("OBJECT", "ENCODING", "n"), ("OBJECT", "REFCOUNT", "n"),
               ("MSET", "m1", "5", "m2", "abc"), ("OBJECT", "ENCODING", "m1"),
               ("OBJECT", "ENCODING", "m2"), ("SETEX", "e", "100", "77"), ("OBJECT", "ENCODING", "e"),
               ("GETSET", "e", "long" * 20), ("OBJECT", "ENCODING", "e")]
    assert_same_as_redis(server, real_redis, script)


def test_string_encoding_depends_on_the_writing_command(server, real_redis):
    enc = [("OBJECT", "ENCODING", k) for k in ("a", "b", "c", "d", "e", "f")]
    ref = [("OBJECT", "REFCOUNT", k) for k in ("a", "b", "c", "d", "e", "f")]
    script = [
        ("APPEND", "a", "12"),  # a new key: encoded from its content
        ("SET", "b", "1"), ("APPEND", "b", "2"),  # appended to: raw, whatever it holds
        ("SETRANGE", "c", "0", "7"), ("SET", "d", "5"), ("SETRANGE", "d", "0", "6"),
        ("INCRBYFLOAT", "e", "10"), ("SET", "f", "1.5"), ("INCRBYFLOAT", "f", "1e40"),
        *enc, *ref, ("GET", "e"), ("GET", "f"),
        ("RENAME", "b", "b2"), ("OBJECT", "ENCODING", "b2"), ("COPY", "b2", "b3"),
        ("OBJECT", "ENCODING", "b3"), ("MOVE", "b3", "1"), ("SELECT", "1"),
        ("OBJECT", "ENCODING", "b3"), ("SWAPDB", "0", "1"), ("OBJECT", "ENCODING", "c"),
        ("SELECT", "0"), ("OBJECT", "ENCODING", "b3"),
        # A new value ends the raw encoding; INCR stores an integer again.
        ("SELECT", "1"), ("SET", "b2", "3"), ("OBJECT", "ENCODING", "b2"), ("INCR", "c"),
        ("OBJECT", "ENCODING", "c"), ("OBJECT", "REFCOUNT", "c"), ("INCR", "e"),
        ("OBJECT", "ENCODING", "e"), ("DEL", "d"), ("SET", "d", "9"), ("OBJECT", "ENCODING", "d"),
        ("APPEND", "d", ""), ("OBJECT", "ENCODING", "d"), ("FLUSHDB",), ("SET", "d", "9"),
        ("OBJECT", "ENCODING", "d"),
    ]
    assert_same_as_redis(server, real_redis, script)


def test_refcount_without_shared_integers_under_lru_limit(server, real_redis):
    with redis.Redis(port=server.port) as a, redis.Redis(port=real_redis.port) as b:
        with config(a, b, maxmemory="1gb", **{"maxmemory-policy": "allkeys-lru"}):
            assert_same_as_redis(server, real_redis, [
                ("SET", "k", "5"), ("OBJECT", "REFCOUNT", "k"), ("OBJECT", "ENCODING", "k")])


@pytest.mark.parametrize("kind", TYPES)
def test_object_on_type(server, real_redis, kind):
    script = [*make(kind, "k"), ("OBJECT", "ENCODING", "k"), ("OBJECT", "REFCOUNT", "k"),
              ("OBJECT", "IDLETIME", "k"), ("OBJECT", "FREQ", "k"),
              ("OBJECT", "ENCODING", "nosuch"), ("OBJECT", "REFCOUNT", "nosuch"),
              ("OBJECT", "IDLETIME", "nosuch"), ("OBJECT", "FREQ", "nosuch"),
              ("OBJECT", "ENCODING"), ("OBJECT", "ENCODING", "k", "x"), ("OBJECT", "NOPE", "k"),
              ("OBJECT",), ("OBJECT", "HELP", "x")]
    if kind == "list":
        # Redis 7.0 reports every list as a quicklist; 7.2 added listpack lists, and a list of
        # three short elements is one in 7.4.
        assert run_script(server.port, script)[1] == b"$8\r\nlistpack\r\n"
        assert run_script(real_redis.port, script)[1] == b"$9\r\nquicklist\r\n"
        script = [cmd for cmd in script if cmd != ("OBJECT", "ENCODING", "k")]
    assert_same_as_redis(server, real_redis, script)
    assert_same_help(server, real_redis, "OBJECT")


def assert_same_help(server, real_redis, command: str) -> None:
    ours = run_script(server.port, [(command, "HELP")])[0]
    theirs = run_script(real_redis.port, [(command, "HELP")])[0]
    # Redis 7.4 ends every HELP with "Print this help."; 7.0 said "Prints this help.".
    assert ours.endswith(b"+HELP\r\n+    Print this help.\r\n")
    assert ours.rsplit(b"+HELP", 1)[0] == theirs.rsplit(b"+HELP", 1)[0]


def test_object_replies_in_resp3(server, real_redis):
    for port in (server.port, real_redis.port):
        conn = RawConnection(port)
        try:
            call_raw(conn, "HELLO", "3")
            call_raw(conn, "SET", "k", "v")
            replies = [call_raw(conn, "OBJECT", sub, key)
                       for sub in ("ENCODING", "REFCOUNT", "IDLETIME") for key in ("k", "nosuch")]
            replies.append(call_raw(conn, "MEMORY", "USAGE", "nosuch"))
            replies.append(call_raw(conn, "OBJECT", "HELP")[:70])
            call_raw(conn, "DEL", "k")
        finally:
            conn.close()
        if port == server.port:
            ours = replies
        else:
            assert ours == replies


# --- IDLETIME / FREQ and what touches a key --------------------------------------------------------


def test_idletime_counts_accesses_only(r):
    r.set("k", "v")
    r.xadd("s", {"f": "v"})
    assert r.object("idletime", "k") == 0
    time.sleep(2.3)
    # Not accesses (Redis's LOOKUP_NOTOUCH): TYPE, EXISTS, TTL and friends, OBJECT, SCAN, KEYS,
    # RANDOMKEY, MEMORY USAGE, DEBUG OBJECT.
    r.type("k")
    r.exists("k")
    r.ttl("k")
    r.pttl("k")
    r.execute_command("EXPIRETIME", "k")
    r.object("encoding", "k")
    r.scan(0, _type="string")
    r.keys("*")
    r.randomkey()
    r.memory_usage("k")
    r.execute_command("DEBUG", "OBJECT", "k")
    assert r.object("idletime", "k") >= 2
    assert r.object("idletime", "s") >= 2
    r.get("k")
    r.xlen("s")
    assert r.object("idletime", "k") == 0
    assert r.object("idletime", "s") == 0


def test_touch_and_no_touch(r, server):
    r.set("a", "1")
    r.set("b", "2")
    time.sleep(2.3)
    with redis.Redis(port=server.port) as quiet:
        assert quiet.execute_command("CLIENT", "NO-TOUCH", "ON") == b"OK"
        assert quiet.get("a") == b"1"
        assert r.object("idletime", "a") >= 2  # a no-touch client's GET is not an access
        assert quiet.touch("b", "nosuch") == 1  # but its TOUCH is
        assert r.object("idletime", "b") == 0
        # The same inside a transaction, whatever the order.
        time.sleep(1.3)
        pipe = quiet.pipeline()
        pipe.touch("a").get("b").touch("a")
        assert pipe.execute() == [1, b"2", 1]
        assert r.object("idletime", "a") == 0
        assert r.object("idletime", "b") >= 1
        assert quiet.execute_command("CLIENT", "NO-TOUCH", "OFF") == b"OK"
        quiet.get("a")
        assert r.object("idletime", "a") == 0


def test_rename_and_move_keep_idletime_copy_resets_it(r):
    r.set("a", "1")
    r.set("m", "1")
    time.sleep(2.3)
    r.execute_command("COPY", "a", "c")
    assert r.object("idletime", "c") == 0
    assert r.object("idletime", "a") == 0  # COPY read it
    r.set("x", "1")
    time.sleep(1.3)
    # RENAME and MOVE look the key up (an access), and the same value lives on under its new name.
    r.rename("m", "m2")
    assert r.object("idletime", "m2") == 0
    r.move("m2", 1)
    r.execute_command("SELECT", "1")
    assert r.object("idletime", "m2") == 0
    r.execute_command("SELECT", "0")


def test_freq_under_lfu(r, server, real_redis):
    with redis.Redis(port=real_redis.port) as real:
        with config(r, real, **{"maxmemory-policy": "allkeys-lfu", "lfu-log-factor": "0"}):
            # With a log factor of 0 every access counts: a new key starts at 5 (LFU_INIT_VAL).
            script = [("SET", "k", "v"), ("OBJECT", "FREQ", "k"), ("GET", "k"), ("GET", "k"),
                      ("OBJECT", "FREQ", "k"), ("TYPE", "k"), ("EXISTS", "k"),
                      ("OBJECT", "FREQ", "k"), ("SET", "k", "w"), ("OBJECT", "FREQ", "k"),
                      ("TOUCH", "k"), ("OBJECT", "FREQ", "k"), ("OBJECT", "IDLETIME", "k"),
                      ("OBJECT", "FREQ", "nosuch"), ("XADD", "s", "1-1", "f", "v"),
                      ("XADD", "s", "2-1", "f", "v"), ("OBJECT", "FREQ", "s")]
            assert_same_as_redis(server, real_redis, script)
        with config(r, real, **{"maxmemory-policy": "volatile-lfu"}):
            r.set("k", "v")
            for _ in range(100):
                r.get("k")
            # With the default log factor (10), 100 accesses take the counter from 5 to a
            # handful more, never to 100.
            assert 5 <= r.object("freq", "k") < 20
            with pytest.raises(redis.ResponseError, match="^An LFU maxmemory policy is selected"):
                r.object("idletime", "k")


# --- MEMORY -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", TYPES)
def test_memory_usage_errors_match_redis(server, real_redis, kind):
    script = [*make(kind, "k"), ("MEMORY", "USAGE", "nosuch"), ("MEMORY", "USAGE", "k", "SAMPLES"),
              ("MEMORY", "USAGE", "k", "SAMPLES", "-1"), ("MEMORY", "USAGE", "k", "SAMPLES", "x"),
              ("MEMORY", "USAGE", "k", "FOO", "1"), ("MEMORY", "USAGE"),
              ("MEMORY", "HELP", "x"), ("MEMORY", "NOPE"), ("MEMORY", "STATS", "x"),
              ("MEMORY", "DOCTOR", "x"), ("MEMORY", "PURGE", "x"), ("MEMORY", "PURGE"),
              ("MEMORY",)]
    assert_same_as_redis(server, real_redis, script)
    assert_same_help(server, real_redis, "MEMORY")


@pytest.mark.parametrize("kind", TYPES)
def test_memory_usage_grows_with_the_value(r, kind):
    for cmd in make(kind, "k"):
        r.execute_command(*cmd)
    small = r.memory_usage("k")
    assert small > len(b"k")
    assert r.memory_usage("k", samples=0) >= small
    for _ in range(2000):
        if kind == "string":
            r.append("k", "x" * 50)
        elif kind == "stream":
            r.xadd("k", {"field": "x" * 50})
        elif kind == "list":
            r.rpush("k", "x" * 50)
        elif kind == "hash":
            r.hset("k", f"f{_}", "x" * 50)
        elif kind == "set":
            r.sadd("k", f"{_:04d}" + "x" * 50)
        elif kind == "zset":
            r.zadd("k", {f"{_:04d}" + "x" * 50: _})
    big = r.memory_usage("k", samples=0)
    assert big >= small + 2000 * 50


def test_memory_stats_fields(r, server, real_redis):
    r.set("a", "1")
    r.execute_command("SELECT", "3")
    r.set("b", "1")
    r.execute_command("SELECT", "0")
    stats = r.memory_stats()
    names = [name for name in stats if not re.fullmatch(r"db\.\d+", name)]
    assert names == MEMORY_STATS_74
    assert stats["db.0"] == {"overhead.hashtable.main": stats["db.0"]["overhead.hashtable.main"],
                             "overhead.hashtable.expires": 0}
    assert set(stats["db.3"]) == {"overhead.hashtable.main", "overhead.hashtable.expires"}
    assert "db.1" not in stats  # a database without keys is not listed
    assert stats["keys.count"] == 2
    assert stats["total.allocated"] >= stats["startup.allocated"] > 0
    assert stats["peak.allocated"] >= stats["total.allocated"]
    with redis.Redis(port=real_redis.port) as real:
        real.flushall()
        real.set("a", "1")
        theirs = [name for name in real.memory_stats() if not re.fullmatch(r"db\.\d+", name)]
    assert [n for n in names if n not in ADDED_IN_74] == [n for n in theirs if n not in ADDED_IN_74]


def test_memory_stats_resp3_is_a_map(server):
    conn = RawConnection(server.port)
    try:
        call_raw(conn, "FLUSHALL")
        call_raw(conn, "HELLO", "3")
        reply = call_raw(conn, "MEMORY", "STATS")
        assert reply.startswith(b"%31\r\n")  # no database holds keys: no db.N entries
        assert b"$18\r\ndataset.percentage\r\n," in reply  # a double
        assert call_raw(conn, "MEMORY", "DOCTOR").startswith(b"=")
        assert call_raw(conn, "MEMORY", "MALLOC-STATS") == (
            b"$45\r\nStats not supported for the current allocator\r\n")
    finally:
        conn.close()


def test_memory_doctor_and_purge(r):
    report = r.execute_command("MEMORY", "DOCTOR")
    assert report.startswith(b"Hi Sam, ") or report.startswith(b"Sam, I detected")
    assert r.execute_command("MEMORY", "PURGE") == b"OK"


# --- DEBUG OBJECT -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", TYPES)
def test_debug_object_fields(r, kind):
    for cmd in make(kind, "k"):
        r.execute_command(*cmd)
    line = r.execute_command("DEBUG", "OBJECT", "k").decode()
    assert line.startswith("Value at:0x")
    fields = dict(part.split(":", 1) for part in line.split(" ")[1:])
    assert list(fields) == ["at", "refcount", "encoding", "serializedlength", "lru",
                            "lru_seconds_idle"]
    assert fields["encoding"] == r.object("encoding", "k").decode()
    assert int(fields["serializedlength"]) > 0
    # Whole seconds of the LRU clock the server's cron refreshes: a tick between the write and
    # DEBUG OBJECT makes it 1, on Redis as here.
    assert int(fields["lru_seconds_idle"]) in (0, 1)
    assert fields["refcount"] == "1"
    with pytest.raises(redis.ResponseError, match="^no such key$"):
        r.execute_command("DEBUG", "OBJECT", "nosuch")
    with pytest.raises(redis.ResponseError, match="^unknown subcommand or wrong number of "
                       "arguments for 'OBJECT'. Try DEBUG HELP.$"):
        r.execute_command("DEBUG", "OBJECT")


def test_debug_object_serializedlength_of_strings(r):
    # The RDB sizes Redis reports (its redis-server 7.0 here refuses DEBUG by default): integers
    # in 1, 2 or 4 bytes after a type byte, other strings after a length prefix.
    expected = {"0": 2, "127": 2, "128": 3, "-128": 2, "-129": 3, "32767": 3, "32768": 5,
                "2147483647": 5, "-2147483648": 5, "2147483648": 11, "hello": 6, "": 1,
                "01": 3, "x" * 20: 21, "y" * 64: 66}
    got = {}
    for value in expected:
        r.set("k", value)
        line = r.execute_command("DEBUG", "OBJECT", "k").decode()
        got[value] = int(line.split("serializedlength:")[1].split(" ")[0])
    assert got == expected


# --- the encoding settings: CONFIG GET / SET, config file, CONFIG REWRITE ---------------------------

# (name, its old name or None, the default in Redis 7.4)
ENCODING_SETTINGS = [
    ("list-max-listpack-size", "list-max-ziplist-size", "-2"),
    ("list-compress-depth", None, "0"),
    ("hash-max-listpack-entries", "hash-max-ziplist-entries", "512"),
    ("hash-max-listpack-value", "hash-max-ziplist-value", "64"),
    ("set-max-intset-entries", None, "512"),
    ("set-max-listpack-entries", None, "128"),
    ("set-max-listpack-value", None, "64"),
    ("zset-max-listpack-entries", "zset-max-ziplist-entries", "128"),
    ("zset-max-listpack-value", "zset-max-ziplist-value", "64"),
]
# Not in Redis 7.0 (added in 7.2): compared with 7.4's source instead of the reference server.
NOT_IN_70 = {"set-max-listpack-entries", "set-max-listpack-value"}
NAMES = [n for name, old, _ in ENCODING_SETTINGS for n in (name, old) if n]


def test_encoding_settings_defaults(r):
    for name, old, default in ENCODING_SETTINGS:
        assert r.config_get(name) == {name: default}
        if old:
            assert r.config_get(old) == {old: default}
    # Redis 7.4 raised hash-max-listpack-entries' default to 512 (7.0: 128).
    assert r.config_get("hash-max-*-entries") == {"hash-max-listpack-entries": "512",
                                                   "hash-max-ziplist-entries": "512"}


def test_encoding_settings_config_get_matches_redis(server, real_redis):
    with redis.Redis(port=server.port) as a, redis.Redis(port=real_redis.port) as b:
        with config(a, b, **{"hash-max-listpack-entries": "128"}):
            for pattern in ["*ziplist*", "*-max-*-entries", "*-max-*-value", "list-*", "*intset*",
                            "zset-*", "hash-*", "HASH-MAX-ZIPLIST-ENTRIES", "Zset-Max-*",
                            "list-max-ziplist-entries", "list-max-ziplist-value", *NAMES]:
                ours = {k: v for k, v in a.config_get(pattern).items()
                        if k not in NOT_IN_70 and "max" in k or "compress" in k}
                theirs = {k: v for k, v in b.config_get(pattern).items()
                          if "max" in k and ("listpack" in k or "ziplist" in k or "intset" in k)
                          or "compress" in k}
                assert ours == theirs, pattern


VALUES = ["-1", "abc", "1k", "1KB", "1mb", "b", "kb", "99999999999999999999", "-3000000000",
          "3000000000", "0", "64", "-6", " 5", "+5", "1.5", "", "0x10", "18446744073709551615",
          "20000000000000000000k", "5 "]


@pytest.mark.parametrize("name", [*[n for n in NAMES if n not in NOT_IN_70], "lfu-log-factor",
                                  "lfu-decay-time"])
def test_encoding_settings_config_set_matches_redis(server, real_redis, name):
    with redis.Redis(port=server.port) as a, redis.Redis(port=real_redis.port) as b:
        with config(a, b, **{name: a.config_get(name)[name]}):
            for value in VALUES:
                replies = []
                for c in (a, b):
                    try:
                        replies.append(c.execute_command("CONFIG", "SET", name, value))
                    except redis.ResponseError as exc:
                        replies.append(str(exc))
                    replies.append(c.config_get(name))
                assert replies[:2] == replies[2:], (name, value)


def test_set_listpack_settings_as_redis_74(r):
    # set-max-listpack-value is a plain integer in 7.4 (no memory units), unlike the hash and
    # zset ones; set-max-listpack-entries has no old name.
    with config(r, **{"set-max-listpack-value": "64", "set-max-listpack-entries": "128"}):
        with pytest.raises(redis.ResponseError, match=r"^CONFIG SET failed \(possibly related to "
                           r"argument 'set-max-listpack-value'\) - argument couldn't be parsed "
                           r"into an integer$"):
            r.config_set("set-max-listpack-value", "1kb")
        with pytest.raises(redis.ResponseError, match=r"between 0 and 9223372036854775807"):
            r.config_set("set-max-listpack-entries", "-1")
        assert r.config_set("set-max-listpack-value", "100")
        assert r.config_get("set-max-listpack-value") == {"set-max-listpack-value": "100"}
        with pytest.raises(redis.ResponseError, match="^Unknown option"):
            r.config_set("set-max-ziplist-entries", "1")


def test_aliases_set_one_value(r):
    with config(r, **{"zset-max-listpack-entries": "128"}):
        r.config_set("zset-max-ziplist-entries", "7")
        assert r.config_get("zset-max-*-entries") == {"zset-max-listpack-entries": "7",
                                                       "zset-max-ziplist-entries": "7"}
        with pytest.raises(redis.ResponseError, match="duplicate parameter"):
            r.config_set("zset-max-ziplist-entries", "1", "zset-max-listpack-entries", "2")


def test_config_file_names_and_rewrite(tmp_path):
    from tests.test_cli import RunningServer

    conf = tmp_path / "rivulet.conf"
    conf.write_text("hash-max-ziplist-entries 100\nlist-max-ziplist-entries 512\n"
                    "list-max-ziplist-value 64\nzset-max-listpack-value 1kb\n"
                    "set-max-intset-entries 10\n")
    with RunningServer(str(conf), "--dir", str(tmp_path), "--list-max-ziplist-size", "-3") as srv:
        with redis.Redis(port=srv.port, decode_responses=True) as c:
            assert c.config_get("hash-max-listpack-entries") == {"hash-max-listpack-entries": "100"}
            assert c.config_get("zset-max-ziplist-value") == {"zset-max-ziplist-value": "1024"}
            assert c.config_get("list-max-listpack-size") == {"list-max-listpack-size": "-3"}
            assert c.config_get("list-max-ziplist-entries") == {}  # accepted, ignored
            c.config_set("set-max-intset-entries", "20", "hash-max-ziplist-value", "32")
            assert c.execute_command("CONFIG", "REWRITE") == "OK"
    lines = conf.read_text().splitlines()
    # The old name in the file is rewritten under the current one, as Redis does.
    assert "hash-max-listpack-entries 100" in lines
    assert "hash-max-ziplist-entries 100" not in lines
    assert "set-max-intset-entries 20" in lines and "hash-max-listpack-value 32" in lines
    with RunningServer(str(conf), "--dir", str(tmp_path)) as srv:
        with redis.Redis(port=srv.port, decode_responses=True) as c:
            assert c.config_get("set-max-intset-entries") == {"set-max-intset-entries": "20"}
            assert c.config_get("hash-max-listpack-value") == {"hash-max-listpack-value": "32"}


def test_deprecated_names_need_exactly_one_value(tmp_path):
    import subprocess
    import sys

    conf = tmp_path / "rivulet.conf"
    conf.write_text("list-max-ziplist-entries 512 513\n")
    done = subprocess.run([sys.executable, "-m", "server", str(conf), "--port", str(free_port())],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode != 0
    assert "Bad directive or wrong number of arguments" in done.stdout + done.stderr
