"""Set commands, Rivulet against a real Redis (7.0 installed), raw replies compared.

Redis 7.0 has no listpack encoding for sets (7.2 added it): a small set of strings is a hashtable
there, so its members come out in hash order, while 7.4 (and Rivulet) keep a listpack's insertion
order. Replies listing the members of a set that is not an intset are therefore compared as
sorted lists; intsets, the same in both versions, are compared byte for byte.
"""

from __future__ import annotations

import hiredis
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import assert_same_as_redis, call_raw, plain, run_script
from tests.serverproc import RawConnection

SET_COMMANDS = ("sadd", "srem", "smembers", "sismember", "smismember", "scard", "spop",
                "srandmember", "smove", "sinter", "sintercard", "sinterstore", "sunion",
                "sunionstore", "sdiff", "sdiffstore", "sscan")


_STORE_COMMANDS = ("sinterstore",)


def test_command_info_matches_redis(server, real_redis) -> None:
    # Name, arity, flags, key range, ACL categories, tips, key specs and subcommands.
    same = [name for name in SET_COMMANDS if name not in _STORE_COMMANDS]
    assert_same_as_redis(server, real_redis, [("COMMAND", "INFO", name) for name in same])
    # Redis 7.4 flags SINTERSTORE's destination OW (overwrite) as SUNIONSTORE's and SDIFFSTORE's;
    # 7.0 has RW there.
    for name in _STORE_COMMANDS:
        mine = run_script(server.port, [("COMMAND", "INFO", name)])[0]
        ref = run_script(real_redis.port, [("COMMAND", "INFO", name)])[0]
        assert mine.count(b"+OW\r\n+update") == 1 and b"+OW" not in ref
        assert mine.replace(b"+OW\r\n+update", b"+RW\r\n+update") == ref
    ours, theirs = (plain(redis.Redis(port=p)) for p in (server.port, real_redis.port))
    try:
        for name in SET_COMMANDS:
            mine = ours.execute_command("COMMAND", "INFO", name)[0]
            ref = theirs.execute_command("COMMAND", "INFO", name)[0]
            assert mine[:7] == ref[:7], name
    finally:
        ours.close()
        theirs.close()
    assert_same_as_redis(server, real_redis, [
        ("COMMAND", "GETKEYS", "SINTERCARD", "2", "a", "b", "LIMIT", "1"),
        ("COMMAND", "GETKEYS", "SINTERCARD", "0", "a"),
        ("COMMAND", "GETKEYS", "SINTERCARD", "3", "a", "b"),
        ("COMMAND", "GETKEYS", "SINTERCARD", "x", "a"),
        ("COMMAND", "GETKEYS", "SINTERSTORE", "d", "a", "b"),
        ("COMMAND", "GETKEYS", "SMOVE", "a", "b", "m"),
        ("COMMAND", "GETKEYSANDFLAGS", "SDIFFSTORE", "d", "a", "b"),
    ])


def _without(doc, names: set[bytes]):
    """A COMMAND DOCS reply (flat RESP2 maps) without the given fields, at any depth."""
    if isinstance(doc, list):
        if len(doc) % 2 == 0 and all(isinstance(k, bytes) for k in doc[::2]) and doc[:1] in (
                [b"summary"], [b"name"]):
            out = []
            for k, v in zip(doc[::2], doc[1::2], strict=True):
                if k not in names:
                    out += [k, _without(v, names)]
            return out
        return [_without(x, names) for x in doc]
    return doc


def test_command_docs_match_redis(server, real_redis) -> None:
    # Redis 7.2 reworded the summaries and added display_text to every argument; the rest of
    # 7.4's documentation of the set commands is 7.0's.
    for name in SET_COMMANDS:
        mine, ref = (_parse(run_script(port, [("COMMAND", "DOCS", name)])[0])
                     for port in (server.port, real_redis.port))
        if name == "sscan":  # 7.0's complexity text ends with a doubled period
            ref[1][ref[1].index(b"complexity") + 1] = ref[1][ref[1].index(b"complexity") + 1][:-1]
        assert _without(mine, {b"summary", b"display_text"}) == _without(ref, {b"summary"}), name
        assert b"display_text" in run_script(server.port, [("COMMAND", "DOCS", name)])[0]


def test_intset_replies_byte_for_byte(server, real_redis) -> None:
    assert_same_as_redis(server, real_redis, [
        ("SADD", "a", "5", "3", "-1", "100", "0", "3"),
        ("SADD", "b", "3", "4", "5", "6"),
        ("SADD", "c", "9223372036854775807", "-9223372036854775808", "0"),
        ("SMEMBERS", "a"), ("SMEMBERS", "c"), ("SCARD", "a"),
        ("SISMEMBER", "a", "3"), ("SISMEMBER", "a", "03"), ("SISMEMBER", "a", "x"),
        ("SMISMEMBER", "a", "3", "7", "100"), ("SMISMEMBER", "nokey", "1"),
        ("SINTER", "a", "b"), ("SINTER", "b", "a"), ("SINTER", "a", "b", "c"),
        ("SINTER", "a", "nokey"), ("SINTER", "a"),
        ("SUNION", "a", "b", "c", "nokey"), ("SDIFF", "a", "b"), ("SDIFF", "a", "b", "c"),
        ("SDIFF", "a", "a"), ("SDIFF", "nokey", "a"), ("SDIFF", "a", "nokey"),
        ("SINTERCARD", "2", "a", "b"), ("SINTERCARD", "2", "a", "b", "LIMIT", "1"),
        ("SINTERCARD", "2", "a", "b", "limit", "0"), ("SINTERCARD", "1", "nokey"),
        ("SINTERSTORE", "d", "a", "b"), ("SMEMBERS", "d"),
        ("SUNIONSTORE", "d", "a", "b"), ("SMEMBERS", "d"),
        ("SDIFFSTORE", "d", "a", "b"), ("SMEMBERS", "d"),
        ("SINTERSTORE", "d", "a", "nokey"), ("EXISTS", "d"),
        ("SDIFFSTORE", "d", "a", "a"), ("EXISTS", "d"),
        ("SRANDMEMBER", "a", "100"), ("SRANDMEMBER", "a", "0"), ("SRANDMEMBER", "nokey", "3"),
        ("SRANDMEMBER", "nokey"), ("SPOP", "nokey"), ("SPOP", "nokey", "3"), ("SPOP", "a", "0"),
        ("SSCAN", "a", "0"), ("SSCAN", "a", "0", "MATCH", "1*"), ("SSCAN", "a", "12345"),
        ("SSCAN", "nokey", "0"), ("SSCAN", "nokey", "0", "COUNT", "0"),
        ("SMOVE", "a", "b", "100"), ("SMOVE", "a", "b", "100"), ("SMOVE", "a", "a", "5"),
        ("SMOVE", "a", "a", "55"), ("SMOVE", "nokey", "a", "5"), ("SMOVE", "a", "newkey", "5"),
        ("SMEMBERS", "a"), ("SMEMBERS", "b"), ("SMEMBERS", "newkey"),
        ("SREM", "a", "-1", "0", "zz"), ("SREM", "a", "3"), ("EXISTS", "a"), ("SREM", "a", "3"),
        ("SPOP", "c", "3"), ("EXISTS", "c"),
        ("TYPE", "b"),
    ])


def test_errors_match_redis(server, real_redis) -> None:
    assert_same_as_redis(server, real_redis, [
        ("SET", "str", "v"), ("SADD", "s", "1", "2", "x"),
        ("SADD", "str", "a"), ("SREM", "str", "a"), ("SMEMBERS", "str"), ("SCARD", "str"),
        ("SISMEMBER", "str", "a"), ("SMISMEMBER", "str", "a"), ("SPOP", "str"),
        ("SPOP", "str", "1"), ("SRANDMEMBER", "str"), ("SRANDMEMBER", "str", "2"),
        ("SINTER", "nokey", "str"), ("SINTER", "s", "str"), ("SUNION", "s", "str"),
        ("SDIFF", "nokey", "str"), ("SINTERSTORE", "d", "nokey", "str"),
        ("SUNIONSTORE", "d", "s", "str"), ("SDIFFSTORE", "d", "s", "str"),
        ("SINTERCARD", "2", "s", "str"), ("SSCAN", "str", "0"), ("SSCAN", "str", "x"),
        ("SMOVE", "str", "s", "1"), ("SMOVE", "s", "str", "1"), ("SMOVE", "nokey", "str", "1"),
        ("SMOVE", "s", "str", "nope"),
        ("SPOP", "s", "-1"), ("SPOP", "s", "x"), ("SPOP", "s", "1", "2"),
        ("SPOP", "nokey", "-1"),
        ("SRANDMEMBER", "s", "x"), ("SRANDMEMBER", "s", "-9223372036854775808"),
        ("SRANDMEMBER", "s", "99999999999999999999"), ("SRANDMEMBER", "s", "1", "2"),
        ("SRANDMEMBER", "nokey", "x"),
        ("SINTERCARD", "0", "s"), ("SINTERCARD", "-1", "s"), ("SINTERCARD", "x", "s"),
        ("SINTERCARD", "2", "s"), ("SINTERCARD", "1", "s", "LIMIT"),
        ("SINTERCARD", "1", "s", "LIMIT", "-1"), ("SINTERCARD", "1", "s", "LIMIT", "x"),
        ("SINTERCARD", "1", "s", "FOO"), ("SINTERCARD", "1", "str", "FOO"),
        ("SSCAN", "s", "x"), ("SSCAN", "s", "0", "COUNT", "0"),
        ("SSCAN", "s", "0", "COUNT", "x"), ("SSCAN", "s", "0", "MATCH"),
        ("SSCAN", "s", "0", "TYPE", "set"),
        ("SSCAN", "s", "0", "FOO"),
        ("SADD", "s"), ("SREM", "s"), ("SMEMBERS"), ("SINTERSTORE", "d"), ("SMOVE", "a", "b"),
        ("SINTERCARD", "1"), ("SSCAN", "s"),
        ("SINTERSTORE", "str", "s"), ("TYPE", "str"),
    ])


def test_spop_and_srandmember_whole_set(server, real_redis) -> None:
    # With a count at least the set's size the reply is the whole set: an intset's in order.
    assert_same_as_redis(server, real_redis, [
        ("SADD", "s", *[str(i) for i in range(50, 0, -1)]),
        ("SRANDMEMBER", "s", "50"), ("SRANDMEMBER", "s", "1000"),
        ("SPOP", "s", "50"), ("EXISTS", "s"),
        ("SADD", "s", "1"), ("SPOP", "s"), ("EXISTS", "s"),
    ])


# --- generated sequences ------------------------------------------------------------------------

_ORDERLESS = {b"SMEMBERS", b"SINTER", b"SUNION", b"SDIFF", b"SRANDMEMBER", b"SPOP"}


def _parse(raw: bytes):
    reader = hiredis.Reader()
    reader.feed(raw)
    reply = reader.gets()
    return ("error", str(reply)) if isinstance(reply, hiredis.ReplyError) else reply


def _normalised(cmd: tuple, raw: bytes):
    reply = _parse(raw)
    name = cmd[0].upper()
    name = name.encode() if isinstance(name, str) else name
    if name in _ORDERLESS and isinstance(reply, list):
        return sorted(reply)
    if name == b"SSCAN" and isinstance(reply, list):
        return [reply[0], sorted(reply[1])]
    return reply


_KEYS = [b"k1", b"k2", b"k3"]
_int_members = st.integers(-3, 25).map(lambda i: str(i).encode())
_mixed_members = st.one_of(_int_members,
                           st.sampled_from([b"a", b"b", b"c", b"01", b"-0", b"", b"x" * 70]))


def _commands(members: st.SearchStrategy[bytes]) -> st.SearchStrategy[tuple]:
    key = st.sampled_from(_KEYS)
    keys = st.lists(key, min_size=1, max_size=3)
    many = st.lists(members, min_size=1, max_size=8)
    return st.one_of(
        st.tuples(st.just(b"SADD"), key).flatmap(
            lambda t: many.map(lambda ms: (*t, *ms))),
        st.tuples(st.just(b"SADD"), key).flatmap(
            lambda t: many.map(lambda ms: (*t, *ms))),
        st.tuples(st.just(b"SREM"), key).flatmap(lambda t: many.map(lambda ms: (*t, *ms))),
        st.tuples(st.just(b"SMOVE"), key, key, members),
        st.tuples(st.just(b"SISMEMBER"), key, members),
        st.tuples(st.just(b"SMISMEMBER"), key).flatmap(lambda t: many.map(lambda ms: (*t, *ms))),
        st.tuples(st.just(b"SCARD"), key),
        st.tuples(st.just(b"SMEMBERS"), key),
        st.tuples(st.sampled_from([b"SINTER", b"SUNION", b"SDIFF"])).flatmap(
            lambda t: keys.map(lambda ks: (*t, *ks))),
        st.tuples(st.sampled_from([b"SINTERSTORE", b"SUNIONSTORE", b"SDIFFSTORE"]), key).flatmap(
            lambda t: keys.map(lambda ks: (*t, *ks))),
        keys.flatmap(lambda ks: st.integers(0, 3).map(
            lambda lim: (b"SINTERCARD", str(len(ks)).encode(), *ks, b"LIMIT", str(lim).encode()))),
        st.tuples(st.just(b"SRANDMEMBER"), key, st.just(b"1000")),
        st.tuples(st.just(b"SPOP"), key, st.just(b"1000")),
        # COUNT 1000: one call scans a whole set in every encoding. With the default 10, 7.0
        # pages a small set of strings (a hashtable there) where 7.4 scans its listpack whole.
        st.tuples(st.just(b"SSCAN"), key, st.just(b"0"), st.just(b"MATCH"),
                  st.sampled_from([b"*", b"1*", b"?", b"[a-b]*"]), st.just(b"COUNT"),
                  st.just(b"1000")),
        st.tuples(st.just(b"SET"), key, st.just(b"v")),
        st.tuples(st.just(b"DEL"), key),
        st.tuples(st.just(b"TYPE"), key),
    )


def _run(port: int, script: list[tuple]) -> list[bytes]:
    conn = RawConnection(port)
    try:
        call_raw(conn, "FLUSHALL")
        return [call_raw(conn, *cmd) for cmd in script]
    finally:
        conn.close()


_SETTINGS = settings(max_examples=150, deadline=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture,
                                            HealthCheck.too_slow])


@_SETTINGS
@given(script=st.lists(_commands(_int_members), min_size=1, max_size=40))
def test_generated_integer_sequences_byte_for_byte(server, real_redis, script) -> None:
    # Integer members only: every set stays an intset in both versions, so every reply,
    # member order included, must be the same bytes.
    ours, theirs = _run(server.port, script), _run(real_redis.port, script)
    for cmd, mine, ref in zip(script, ours, theirs, strict=True):
        assert mine == ref, f"{cmd!r}: rivulet {mine!r} != redis {ref!r}"


@_SETTINGS
@given(script=st.lists(_commands(_mixed_members), min_size=1, max_size=40))
def test_generated_mixed_sequences(server, real_redis, script) -> None:
    ours, theirs = _run(server.port, script), _run(real_redis.port, script)
    for cmd, mine, ref in zip(script, ours, theirs, strict=True):
        assert _normalised(cmd, mine) == _normalised(cmd, ref), (
            f"{cmd!r}: rivulet {mine!r} != redis {ref!r}")


def test_large_sets_match_redis_as_sets(server, real_redis) -> None:
    script: list[tuple] = [
        ("SADD", "h1", *[f"m{i}" for i in range(0, 1500)]),
        ("SADD", "h2", *[f"m{i}" for i in range(1000, 2500)]),
        ("SADD", "i1", *[str(i) for i in range(0, 600)]),
        ("SADD", "i2", *[str(i) for i in range(300, 400)]),
        ("SREM", "h1", *[f"m{i}" for i in range(0, 1500, 3)]),
    ]
    for op in ("SINTER", "SUNION", "SDIFF"):
        for keys in (("h1", "h2"), ("h2", "h1", "i1"), ("i1", "i2"), ("i2", "i1", "h1")):
            script.append((op, *keys))
            script.append((op + "STORE", "dst", *keys))
            script.append(("SMEMBERS", "dst"))
            script.append(("SCARD", "dst"))
    script += [("SINTERCARD", "2", "h1", "h2"), ("SINTERCARD", "2", "h1", "h2", "LIMIT", "10"),
               ("SMISMEMBER", "h1", "m1", "m3", "m1499", "nope"), ("SCARD", "h1"),
               ("SMOVE", "h1", "i2", "m1"), ("SMEMBERS", "i2"), ("SRANDMEMBER", "i2", "5000"),
               ("SPOP", "i2", "5000"), ("EXISTS", "i2")]
    ours, theirs = _run(server.port, script), _run(real_redis.port, script)
    for cmd, mine, ref in zip(script, ours, theirs, strict=True):
        assert _normalised(cmd, mine) == _normalised(cmd, ref), cmd[:3]


def _full_scan(port: int, key: str, count: int) -> list[bytes]:
    with redis.Redis(port=port) as c:
        return [m for m in c.sscan_iter(key, count=count)]


def test_sscan_covers_a_large_set_once(server, real_redis) -> None:
    members = [f"member:{i}" for i in range(3000)]
    for port in (server.port, real_redis.port):
        with redis.Redis(port=port) as c:
            c.flushall()
            c.sadd("s", *members)
    ours, theirs = _full_scan(server.port, "s", 100), _full_scan(real_redis.port, "s", 100)
    assert len(ours) == len(set(ours)) == 3000
    assert sorted(ours) == sorted(theirs)
