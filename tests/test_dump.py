"""DUMP / RESTORE: replies and errors as Redis's, payloads exchanged with a real Redis 7.0, damaged
payloads, propagation, and round trips of every type and encoding size."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.rdb.primitives import crc64
from tests.dump_helpers import snapshot
from tests.helpers import aof_path, assert_same_as_redis, restart

CASES = json.loads((Path(__file__).parent / "data/rdb/values/payloads74.json").read_text())["cases"]
FAR_MS = 4102444800000  # 2100-01-01


def with_footer(body: bytes, version: int) -> bytes:
    """A payload of `body` with the RDB version and a correct CRC-64."""
    data = body + version.to_bytes(2, "little")
    return data + crc64(data).to_bytes(8, "little")


# A string payload Redis 7.0 (RDB 10) and Rivulet (up to RDB 12) both accept.
HELLO_V10 = with_footer(b"\x00\x05hello", 10)


def test_dump_of_a_missing_key_is_nil(r: redis.Redis) -> None:
    assert r.dump("nosuch") is None


def test_restore_errors_same_as_redis(server, real_redis) -> None:
    good = HELLO_V10
    bad_crc = good[:-1] + bytes([good[-1] ^ 1])
    script = [
        ("RESTORE", "k", "0", good),
        ("GET", "k"),
        ("RESTORE", "k", "0", good),  # BUSYKEY
        ("RESTORE", "k", "-1", good),  # BUSYKEY comes before the TTL check
        ("RESTORE", "k2", "-1", good),
        ("RESTORE", "k2", "abc", good),
        ("RESTORE", "k2", "0", good, "BADOPTION"),
        ("RESTORE", "k2", "0", good, "IDLETIME"),
        ("RESTORE", "k2", "0", good, "IDLETIME", "-1"),
        ("RESTORE", "k2", "0", good, "IDLETIME", "x"),
        ("RESTORE", "k2", "0", good, "FREQ", "256"),
        ("RESTORE", "k2", "0", good, "FREQ", "-1"),
        ("RESTORE", "k2", "0", good, "IDLETIME", "10", "FREQ", "5"),
        ("RESTORE", "k2", "0", good, "FREQ", "5", "IDLETIME", "10"),
        ("RESTORE", "k2", "0", bad_crc),
        ("RESTORE", "k2", "0", b"short"),
        ("RESTORE", "k2", "0", b""),
        ("RESTORE", "k2", "0", with_footer(b"\x00\x05hello", 13)),
        ("RESTORE", "k2", "0", with_footer(b"\xc8\x05hello", 10)),  # type 200
        ("RESTORE", "k2", "0", with_footer(b"\x08\x05hello", 10)),  # type 8: no such type
        ("RESTORE", "k2", "0", with_footer(b"\x00\x45", 10)),  # string cut short
        ("RESTORE", "k2", "0", with_footer(b"\x01\x00", 10)),  # an empty list
        ("RESTORE", "k2", "0", with_footer(b"\x02\x02\x01a\x01a", 10)),  # duplicate set members
        ("RESTORE", "k2", "0", with_footer(b"\x05\x01\x01a" + b"\x00" * 6 + b"\xf8\x7f", 10)),  # NaN
        ("EXISTS", "k2"),
        ("RESTORE", "k", "0", good, "REPLACE", "ABSTTL", "IDLETIME", "100"),
        ("OBJECT", "IDLETIME", "k"),
        ("RESTORE", "k", "0", good, "replace", "freq", "7"),
        ("RESTORE", "k", str(FAR_MS), good, "REPLACE", "ABSTTL"),
        ("PEXPIRETIME", "k"),
        ("RESTORE", "k", "1", good, "REPLACE", "ABSTTL"),  # in the past: the key is gone
        ("EXISTS", "k"),
        ("RESTORE", "k", "0", good),
        ("DUMP", "nosuch"),
        ("DUMP",),
        ("RESTORE", "k", "0"),
    ]
    assert_same_as_redis(server, real_redis, script)


def test_restore_ttl_is_relative_unless_absttl(r: redis.Redis) -> None:
    r.restore("k", 100000, HELLO_V10)
    assert 99000 < r.pttl("k") <= 100000
    r.restore("k", 1000, HELLO_V10, replace=True)
    assert 0 < r.pttl("k") <= 1000
    r.restore("k", 0, HELLO_V10, replace=True)
    assert r.pttl("k") == -1


def test_restore_idletime_and_freq(server_factory) -> None:
    lru = server_factory("--maxmemory-policy", "allkeys-lru")
    with redis.Redis(port=lru.port) as c:
        c.restore("k", 0, HELLO_V10, idletime=1000)
        assert 1000 <= c.object("idletime", "k") <= 1001
    lfu = server_factory("--maxmemory-policy", "allkeys-lfu")
    with redis.Redis(port=lfu.port) as c:
        c.restore("k", 0, HELLO_V10, frequency=77)
        assert c.object("freq", "k") == 77


def test_restore_is_propagated_with_an_absolute_ttl(server_factory) -> None:
    srv = server_factory("--appendonly", "yes", "--appendfsync", "always")
    with redis.Redis(port=srv.port) as c:
        c.restore("rel", 500000, HELLO_V10)
        when = c.pexpiretime("rel")
        c.restore("abs", FAR_MS, HELLO_V10, absttl=True)
        c.restore("plain", 0, HELLO_V10)
        c.set("gone", "x")
        c.restore("gone", 1, HELLO_V10, replace=True, absttl=True)
        assert c.exists("gone") == 0
    data = aof_path(srv).read_bytes()
    payload = b"$%d\r\n%s\r\n" % (len(HELLO_V10), HELLO_V10)
    assert (b"*5\r\n$7\r\nRESTORE\r\n$3\r\nrel\r\n$13\r\n%d\r\n" % when) + payload + b"$6\r\nABSTTL\r\n" in data
    assert b"*5\r\n$7\r\nRESTORE\r\n$3\r\nabs\r\n$13\r\n%d\r\n" % FAR_MS + payload + b"$6\r\nABSTTL\r\n" in data
    assert b"*4\r\n$7\r\nRESTORE\r\n$5\r\nplain\r\n$1\r\n0\r\n" + payload in data
    assert b"*2\r\n$3\r\nDEL\r\n$4\r\ngone\r\n" in data
    srv = restart(srv, "--appendonly", "yes")
    try:
        with redis.Redis(port=srv.port) as c:
            assert c.get("rel") == b"hello" and c.pexpiretime("rel") == when
            assert c.pexpiretime("abs") == FAR_MS
            assert c.get("plain") == b"hello" and c.ttl("plain") == -1
            assert c.exists("gone") == 0
    finally:
        srv.cleanup()


def test_restore_of_hash_field_expiry_schedules_it(r: redis.Redis) -> None:
    r.hset("h", mapping={"a": "1", "b": "2"})
    r.execute_command("HPEXPIRE", "h", "150", "FIELDS", "1", "a")
    payload = r.dump("h")
    r.delete("h")
    r.restore("h", 0, payload)
    assert r.object("encoding", "h") == b"listpackex"
    assert r.execute_command("HPTTL", "h", "FIELDS", "1", "a")[0] > 0
    time.sleep(0.5)
    # The active cycle (not only an access) removes it: HLEN does not expire fields lazily.
    assert r.hlen("h") == 1
    assert r.hgetall("h") == {b"b": b"2"}


# --- payloads exchanged with Redis 7.0 ------------------------------------------------------------

# Cases 7.0 can build (no hash field expiry before 7.4).
CASES_70 = [case for case in CASES if not any(cmd[0].startswith("HPEXPIRE") for cmd in case["setup"])]
IDS_70 = [case["name"] for case in CASES_70]


def _content(snap: list) -> list:
    # The type and the content: encodings differ where 7.4 changed them (a small list is a
    # "listpack" in 7.2+, a "quicklist" in 7.0; a small set of strings a "listpack" in 7.2+).
    return [snap[0], *snap[2:]]


@pytest.mark.parametrize("case", CASES_70, ids=IDS_70)
def test_restore_of_redis70_payloads(r: redis.Redis, real_redis, case: dict) -> None:
    with redis.Redis(port=real_redis.port) as theirs:
        theirs.delete("k")
        for cmd in case["setup"]:
            theirs.execute_command(*cmd)
        payload = theirs.dump("k")
        expected = snapshot(theirs, "k", field_times=False)
        theirs.delete("k")
    assert payload[-10:-8] == b"\x0a\x00"  # Redis 7.0 writes RDB version 10
    r.delete("k")
    r.restore("k", 0, payload)
    assert _content(snapshot(r, "k", field_times=False)) == _content(expected)
    # 7.0's DUMP bytes, footer aside, are 7.4's where 7.0 encodes the value the same way. Not a set
    # of strings (7.2 added set listpacks), nor a list element larger than a node: 7.0 puts it in a
    # listpack node (its plain-node threshold is 1 GB), 7.4 in a plain node of its own; nor a sorted
    # set with a score such as 0.1, which 7.0 writes as %.17g does (0.10000000000000001), 7.4 in
    # its shortest form.
    if case["identical"] and case["name"] not in ("set_listpack", "list_plain_node", "zset_listpack"):
        assert payload[:-10].hex() == case["payload"][:-20]


@pytest.mark.parametrize("case", CASES_70, ids=IDS_70)
def test_redis70_restores_our_payloads(r: redis.Redis, real_redis, case: dict) -> None:
    for cmd in case["setup"]:
        r.execute_command(*cmd)
    payload = r.dump("k")
    expected = snapshot(r, "k", field_times=False)
    with redis.Redis(port=real_redis.port) as theirs:
        theirs.delete("k")
        # Redis 7.0 refuses RDB version 12 payloads (it reads up to 10): a 7.0 vs 7.4 difference.
        with pytest.raises(redis.ResponseError, match="DUMP payload version or checksum are wrong"):
            theirs.restore("k", 0, payload)
        if case["name"] == "set_listpack":
            return  # RDB_TYPE_SET_LISTPACK (20) is 7.2's: 7.0 cannot read it at any version
        theirs.restore("k", 0, with_footer(payload[:-10], 10))
        assert _content(snapshot(theirs, "k", field_times=False)) == _content(expected)
        theirs.delete("k")


# --- round trips of every type at every encoding size ---------------------------------------------


def _fill(r: redis.Redis, kind: str, n: int, width: int) -> None:
    def member(i: int) -> str:
        return f"{i:0{width}d}" if width else str(i)

    if kind == "list":
        for i in range(0, n, 500):
            r.rpush("k", *[member(j) for j in range(i, min(n, i + 500))])
    elif kind == "set":
        for i in range(0, n, 500):
            r.sadd("k", *[member(j) for j in range(i, min(n, i + 500))])
    elif kind == "zset":
        for i in range(0, n, 500):
            r.zadd("k", {member(j): j / 3 for j in range(i, min(n, i + 500))})
    elif kind == "hash":
        for i in range(0, n, 500):
            r.hset("k", mapping={member(j): member(j) * 2 for j in range(i, min(n, i + 500))})


@pytest.mark.parametrize("kind", ["list", "set", "zset", "hash"])
@pytest.mark.parametrize("n,width", [(1, 0), (100, 0), (129, 0), (513, 0), (20000, 0), (5, 70), (300, 30)])
def test_round_trip(r: redis.Redis, kind: str, n: int, width: int) -> None:
    r.delete("k")
    _fill(r, kind, n, width)
    before = snapshot(r, "k")
    payload = r.dump("k")
    r.delete("k")
    r.restore("k", 0, payload)
    assert snapshot(r, "k") == before
    assert r.dump("k") == payload or kind in ("set", "hash")  # tables may list members in another order


def test_round_trip_keeps_list_encoding_limits(r: redis.Redis) -> None:
    r.config_set("list-max-listpack-size", "4")
    try:
        r.rpush("k", *"abcdefghij")
        assert r.object("encoding", "k") == b"quicklist"
        payload = r.dump("k")
        r.delete("k")
        r.restore("k", 0, payload)
        assert r.object("encoding", "k") == b"quicklist"
        assert r.lrange("k", 0, -1) == [c.encode() for c in "abcdefghij"]
    finally:
        r.config_set("list-max-listpack-size", "-2")


def test_restore_converts_to_the_running_limits(r: redis.Redis) -> None:
    r.sadd("s", *[str(i) for i in range(50)])
    r.zadd("z", {f"m{i}": i for i in range(50)})
    r.hset("h", mapping={f"f{i}": i for i in range(50)})
    payloads = {k: r.dump(k) for k in ("s", "z", "h")}
    r.config_set("set-max-intset-entries", "10")
    r.config_set("zset-max-listpack-entries", "10")
    r.config_set("hash-max-listpack-entries", "10")
    try:
        for key, payload in payloads.items():
            r.restore(key, 0, payload, replace=True)
        assert r.object("encoding", "s") == b"hashtable"
        assert r.object("encoding", "z") == b"skiplist"
        assert r.object("encoding", "h") == b"hashtable"
        assert r.scard("s") == 50 and r.zcard("z") == 50 and r.hlen("h") == 50
    finally:
        r.config_set("set-max-intset-entries", "512")
        r.config_set("zset-max-listpack-entries", "128")
        r.config_set("hash-max-listpack-entries", "512")


# --- damaged payloads ------------------------------------------------------------------------------


def _damaged_payload_replies(port: int, payload: bytes) -> int:
    body = payload[:-10]
    version = int.from_bytes(payload[-10:-8], "little")
    accepted = 0
    with redis.Redis(port=port) as c:
        for i in range(len(body)):
            for mask in (0x01, 0x10, 0x80, 0xFF):
                damaged = bytearray(body)
                damaged[i] ^= mask
                try:
                    c.restore("victim", 0, with_footer(bytes(damaged), version), replace=True)
                except redis.ResponseError as exc:
                    assert str(exc) == "Bad data format", (i, mask, str(exc))
                    continue
                accepted += 1
                # Whatever was accepted is a sound value: it dumps and restores again.
                again = c.dump("victim")
                c.restore("victim2", 0, again, replace=True)
        assert c.ping()
    return accepted


@pytest.mark.parametrize("name", ["string_lzf", "list_small", "hash_listpack", "hash_listpackex",
                                  "set_intset", "set_listpack", "zset_listpack", "zset_long_member"])
def test_every_damaged_byte_answers_an_error_or_a_sound_value(r: redis.Redis, server, name: str) -> None:
    (case,) = [c for c in CASES if c["name"] == name]
    payload = bytes.fromhex(case["payload"])
    _damaged_payload_replies(server.port, payload)
    # A payload damaged with its checksum left as it was is refused before it is read.
    damaged = bytearray(payload)
    damaged[1] ^= 0x01
    with pytest.raises(redis.ResponseError, match="DUMP payload version or checksum are wrong"):
        r.restore("victim", 0, bytes(damaged), replace=True)


def test_sanitize_dump_payload_setting(r: redis.Redis, real_redis) -> None:
    assert r.config_get("sanitize-dump-payload") == {"sanitize-dump-payload": "no"}
    for value in ("yes", "clients", "no"):
        r.config_set("sanitize-dump-payload", value)
        assert r.config_get("sanitize-dump-payload") == {"sanitize-dump-payload": value}
    with pytest.raises(redis.ResponseError) as ours:
        r.config_set("sanitize-dump-payload", "maybe")
    with redis.Redis(port=real_redis.port) as theirs, pytest.raises(redis.ResponseError) as ref:
        theirs.config_set("sanitize-dump-payload", "maybe")
    assert str(ours.value) == str(ref.value)


def test_command_info_same_as_redis(real_redis, server) -> None:
    for name in ("dump", "restore", "restore-asking"):
        replies = []
        for port in (server.port, real_redis.port):
            with redis.Redis(port=port) as c:
                c.response_callbacks.clear()
                replies.append(c.execute_command("COMMAND", "INFO", name)[0][:7])
        assert replies[0] == replies[1], name


@st.composite
def mutated_payload_bodies(draw) -> bytes:
    """A payload body of a valid value, cut, spliced or overwritten; or a valid type byte followed
    by arbitrary bytes."""
    if draw(st.booleans()):
        return bytes((draw(st.sampled_from([0, 1, 2, 3, 4, 5, 9, 10, 11, 12, 13, 14, 16, 17, 18, 20, 22, 23,
                                            24, 25])),)) + draw(st.binary(max_size=60))
    body = bytearray(bytes.fromhex(draw(st.sampled_from(SMALL_BODIES))))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["cut", "insert", "overwrite", "delete"]))
        pos = draw(st.integers(0, max(len(body) - 1, 0)))
        if op == "cut":
            del body[pos:]
        elif op == "insert":
            body[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif op == "overwrite":
            chunk = draw(st.binary(min_size=1, max_size=4))
            body[pos:pos + len(chunk)] = chunk
        else:
            del body[pos:pos + draw(st.integers(1, 8))]
    return bytes(body)


SMALL_BODIES = [c["payload"][:-20] for c in CASES if len(c["payload"]) < 600]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=mutated_payload_bodies())
def test_mutated_payloads_answer_an_error_or_a_sound_value(r: redis.Redis, body: bytes) -> None:
    try:
        r.restore("fuzz", 0, with_footer(body, 12), replace=True)
    except redis.ResponseError as exc:
        assert str(exc) == "Bad data format"
        return
    again = r.dump("fuzz")
    assert again is not None
    r.restore("fuzz2", 0, again, replace=True)
    assert r.type("fuzz") == r.type("fuzz2")
