"""Bitmap commands: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO.

Most checks are differential: the same commands to Rivulet and to a real Redis, the same raw
replies. The installed Redis is 7.0; where 7.4 (the specification) answers differently, the test
says so and asserts 7.4's reply.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import (
    aof_path,
    assert_same_as_redis,
    call_raw,
    encode_command,
    parse_aof,
    plain,
    read_reply,
    resp3_reply_bytes,
    restart,
    run_script,
)
from tests.serverproc import RawConnection

BIT_COMMANDS = ("setbit", "getbit", "bitcount", "bitpos", "bitop", "bitfield", "bitfield_ro")


# --- SETBIT / GETBIT ------------------------------------------------------------------------------


def test_setbit_getbit_basics(r: redis.Redis) -> None:
    assert r.setbit("k", 7, 1) == 0
    assert r.get("k") == b"\x01"
    assert r.setbit("k", 7, 1) == 1
    assert r.setbit("k", 0, 1) == 0
    assert r.get("k") == b"\x81"
    assert r.setbit("k", 7, 0) == 1
    assert r.get("k") == b"\x80"
    assert r.setbit("k", 17, 0) == 0  # grows the string with zero bytes
    assert r.get("k") == b"\x80\x00\x00"
    assert [r.getbit("k", i) for i in (0, 1, 7, 17, 10_000)] == [1, 0, 0, 0, 0]
    assert r.getbit("missing", 3) == 0


def test_setbit_keeps_ttl(r: redis.Redis) -> None:
    r.set("k", "a", ex=100)
    r.setbit("k", 100, 1)
    assert 0 < r.ttl("k") <= 100


def test_bit_errors_match_redis(server, real_redis) -> None:
    assert_same_as_redis(server, real_redis, [
        ("SETBIT", "k", -1, 1), ("SETBIT", "k", "x", 1), ("SETBIT", "k", 4294967296, 1),
        ("SETBIT", "k", 1, 2), ("SETBIT", "k", 1, -1), ("SETBIT", "k", 1, "x"),
        ("SETBIT", "k", "+1", 1), ("SETBIT", "k", "01", 1), ("SETBIT", "k", " 1", 1),
        ("GETBIT", "k", -1), ("GETBIT", "k", 4294967296), ("GETBIT", "k", "1.5"),
        ("XADD", "st", "1-1", "f", "v"),
        ("SETBIT", "st", 1, 1), ("GETBIT", "st", 1), ("SETBIT", "st", -1, 1),
        ("BITCOUNT", "st"), ("BITPOS", "st", 1), ("BITPOS", "st", 2),
        ("BITOP", "AND", "d", "st"), ("BITOP", "AND", "st", "nokey"), ("TYPE", "st"),
        ("BITFIELD", "st", "GET", "u8", 0), ("BITFIELD", "st", "SET", "u8", 0, 1),
        ("BITFIELD", "st", "GET", "u8", "x"), ("BITFIELD_RO", "st", "GET", "u8", 0),
        ("BITFIELD_RO", "st", "SET", "u8", 0, 1),
        ("SETBIT",), ("GETBIT", "k"), ("BITOP", "AND", "d"), ("BITFIELD",),
    ])


def test_offsets_respect_proto_max_bulk_len(server_factory) -> None:
    srv = server_factory("--proto-max-bulk-len", str(1024 * 1024))
    r = redis.Redis(port=srv.port)
    limit_bit = 1024 * 1024 * 8
    assert r.setbit("k", limit_bit - 1, 1) == 0
    assert r.strlen("k") == 1024 * 1024
    for argv in (("SETBIT", "k", limit_bit, 1), ("GETBIT", "k", limit_bit),
                 ("BITFIELD", "k", "GET", "u8", limit_bit),
                 ("BITFIELD", "k", "SET", "u8", f"#{1024 * 1024}", 1)):
        with pytest.raises(redis.ResponseError, match="^bit offset is not an integer or out of range$"):
            r.execute_command(*argv)
    assert r.execute_command("BITFIELD", "k", "GET", "u8", f"#{1024 * 1024 - 1}") == [1]


# --- BITCOUNT / BITPOS ----------------------------------------------------------------------------


def test_bitcount_and_bitpos_match_redis(server, real_redis) -> None:
    script: list[tuple] = [
        ("SET", "k", b"\x00\xff\xf0\x0f\x01"), ("SET", "ones", b"\xff\xff\xff"),
        ("SET", "zeros", b"\x00\x00"), ("SET", "empty", ""), ("SET", "num", 12345),
        ("SET", "foobar", "foobar"),
    ]
    for key in ("k", "ones", "zeros", "empty", "num", "foobar", "missing"):
        script += [("BITCOUNT", key), ("BITPOS", key, 0), ("BITPOS", key, 1)]
        for start, end in ((0, 0), (1, 2), (-2, -1), (-1, -2), (0, -1), (5, 2), (-100, 100),
                           (3, 100), (0, 4294967297), (-9223372036854775808, 9223372036854775807)):
            script += [("BITCOUNT", key, start, end), ("BITCOUNT", key, start, end, "BIT"),
                       ("BITCOUNT", key, start, end, "byte")]
            for bit in (0, 1):
                script += [("BITPOS", key, bit, start), ("BITPOS", key, bit, start, end),
                           ("BITPOS", key, bit, start, end, "BIT"),
                           ("BITPOS", key, bit, start, end, "BYTE")]
        for start, end in ((1, 6), (3, 12), (9, 9), (12, 23), (-3, -1), (0, 7), (4, 35)):
            script += [("BITCOUNT", key, start, end, "bit")]
            script += [("BITPOS", key, bit, start, end, "bit") for bit in (0, 1)]
    assert_same_as_redis(server, real_redis, script)


def test_bitcount_bitpos_argument_errors_on_existing_keys_match_redis(server, real_redis) -> None:
    assert_same_as_redis(server, real_redis, [
        ("SET", "k", "foobar"),
        ("BITCOUNT", "k", 0), ("BITCOUNT", "k", 0, 1, "bit", "x"), ("BITCOUNT", "k", "a", 1),
        ("BITCOUNT", "k", 0, "b"), ("BITCOUNT", "k", 0, 1, "bits"),
        ("BITPOS", "k", "a"), ("BITPOS", "k", 2), ("BITPOS", "k", -1), ("BITPOS", "k", 1, "a"),
        ("BITPOS", "k", 1, 0, "b"), ("BITPOS", "k", 1, 0, 1, "bits"),
        ("BITPOS", "k", 1, 0, "b", "bits"), ("BITPOS", "k", 1, 0, 1, "bit", "x"),
    ])


def test_bitcount_bitpos_parse_before_the_lookup_as_in_7_4(r: redis.Redis) -> None:
    # Redis 7.4 parses the range before looking the key up; 7.0 looked the key up first, so it
    # answered 0 / -1 for a missing key and WRONGTYPE for another type before any argument error.
    r.xadd("st", {"f": "v"})
    for key in ("missing", "st"):
        for argv, message in [
            (("BITCOUNT", key, "a", 1), "value is not an integer or out of range"),
            (("BITCOUNT", key, 0, 1, "bits"), "syntax error"),
            (("BITCOUNT", key, 0), "syntax error"),
            (("BITPOS", key, 1, "a"), "value is not an integer or out of range"),
            (("BITPOS", key, 0, 0, 1, "bits"), "syntax error"),
            (("BITPOS", key, 1, 0, 1, "bit", "x"), "syntax error"),
        ]:
            with pytest.raises(redis.ResponseError) as exc:
                r.execute_command(*argv)
            assert str(exc.value) == message, argv
    # The unit is checked before the end.
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("BITPOS", "missing", 1, 0, "x", "bits")
    # With valid arguments a missing key is still all zeros.
    assert r.execute_command("BITCOUNT", "missing", 0, -1, "BIT") == 0
    assert r.execute_command("BITPOS", "missing", 0, 5, 10, "BIT") == 0
    assert r.execute_command("BITPOS", "missing", 1, 5) == -1


def test_bitpos_clear_bit_past_the_end(r: redis.Redis) -> None:
    r.set("k", b"\xff\xff\xff")
    assert r.bitpos("k", 0) == 24  # no end given: the string is zero-padded on the right
    assert r.bitpos("k", 0, 0) == 24
    assert r.bitpos("k", 0, 1) == 24
    assert r.bitpos("k", 0, 0, -1) == -1  # an explicit end: only the range counts
    assert r.execute_command("BITPOS", "k", 0, 0, 23, "BIT") == -1
    r.set("empty", "")
    assert r.bitpos("empty", 0) == -1  # an existing empty string has an empty range
    assert r.bitpos("nokey", 0) == 0


def test_remembered_counts_follow_every_change(server, real_redis) -> None:
    big = bytes(range(256)) * 20
    script: list[tuple] = [("SET", "k", big), ("BITCOUNT", "k")]
    for offset, bit in ((0, 1), (0, 1), (1, 0), (9, 1), (40959, 0), (40960, 1), (50000, 0)):
        script += [("SETBIT", "k", offset, bit), ("BITCOUNT", "k"), ("BITCOUNT", "k", 0, -1),
                   ("BITCOUNT", "k", 0, -1, "BIT"), ("BITCOUNT", "k", -100000000, 100000000, "BIT")]
    script += [
        ("APPEND", "k", "\xff"), ("BITCOUNT", "k"), ("SETRANGE", "k", 3, "\x00\x00"), ("BITCOUNT", "k"),
        ("COPY", "k", "c"), ("SETBIT", "k", 5, 1), ("BITCOUNT", "c"), ("BITCOUNT", "k"),
        ("RENAME", "k", "r"), ("BITCOUNT", "r"), ("SET", "r", big), ("BITCOUNT", "r"),
        ("BITOP", "NOT", "r", "r"), ("BITCOUNT", "r"), ("DEL", "r"), ("BITCOUNT", "r"),
        ("SETBIT", "r", 20000, 1), ("BITCOUNT", "r"), ("FLUSHALL",), ("BITCOUNT", "c"),
        ("SET", "c", big), ("BITCOUNT", "c"), ("BITFIELD", "c", "SET", "u8", 8, 255), ("BITCOUNT", "c"),
    ]
    assert_same_as_redis(server, real_redis, script)


def test_bitpos_far_into_large_values_matches_redis(server, real_redis) -> None:
    # The scan goes window by window: bits found in the first, a middle and the last window, and
    # none at all, in byte and bit ranges.
    zeros = bytearray(70_000)
    ones = bytearray(b"\xff" * 70_000)
    for offset in (3, 700, 9_000, 69_999):
        zeros[offset] = 0x10
        ones[offset] = 0xf7
    script: list[tuple] = [("SET", "z", bytes(zeros)), ("SET", "o", bytes(ones)),
                           ("SET", "z0", bytes(70_000)), ("SET", "o1", b"\xff" * 70_000)]
    for key in ("z", "o", "z0", "o1"):
        for bit in (0, 1):
            script += [("BITPOS", key, bit), ("BITPOS", key, bit, 4), ("BITPOS", key, bit, 701),
                       ("BITPOS", key, bit, 701, 8_999), ("BITPOS", key, bit, 701, 9_000),
                       ("BITPOS", key, bit, 9_001, -1), ("BITPOS", key, bit, 9_001, -2),
                       ("BITPOS", key, bit, 5_605, 72_004, "BIT"),
                       ("BITPOS", key, bit, 5_604, 559_995, "BIT"),
                       ("BITPOS", key, bit, 72_005, -1, "BIT"), ("BITPOS", key, bit, -9, -1, "BIT")]
    assert_same_as_redis(server, real_redis, script)


def test_bitcount_large_values(r: redis.Redis) -> None:
    value = bytes(range(256)) * 4099
    r.set("big", value)
    expected = sum(bin(b).count("1") for b in value)
    assert r.bitcount("big") == expected
    assert r.bitcount("big", 3, -5) == sum(bin(b).count("1") for b in value[3:-4])
    assert r.execute_command("BITCOUNT", "big", 13, 70001, "BIT") == sum(
        (value[i >> 3] >> (7 - (i & 7))) & 1 for i in range(13, 70002))
    assert r.bitpos("big", 1, 257) == 257 * 8 + 7  # byte 257 is 0x01


# --- BITOP ----------------------------------------------------------------------------------------


def test_bitop_basics(r: redis.Redis) -> None:
    r.set("a", b"\xf0\x0f\xff")
    r.set("b", b"\xff")
    assert r.bitop("AND", "d", "a", "b") == 3
    assert r.get("d") == b"\xf0\x00\x00"  # b is zero-padded
    assert r.bitop("OR", "d", "a", "b", "missing") == 3
    assert r.get("d") == b"\xff\x0f\xff"
    assert r.bitop("XOR", "d", "a", "b") == 3
    assert r.get("d") == b"\x0f\x0f\xff"
    assert r.bitop("NOT", "d", "a") == 3
    assert r.get("d") == b"\x0f\xf0\x00"
    assert r.bitop("AND", "a", "a") == 3  # destination and source may be the same key
    assert r.get("a") == b"\xf0\x0f\xff"
    r.set("d", "x", ex=100)
    assert r.bitop("NOT", "d", "b") == 1
    assert r.ttl("d") == -1  # the destination is replaced, TTL included
    r.xadd("st", {"f": "v"})
    assert r.bitop("AND", "st", "missing", "missing2") == 0
    assert r.exists("st") == 0  # an empty result deletes the destination, whatever its type


def test_bitop_matches_redis(server, real_redis) -> None:
    script: list[tuple] = [
        ("SET", "a", b"\x01\x02\xff\x00\x80" * 9), ("SET", "b", b"\xaa" * 70),
        ("SET", "c", "foobar"), ("SET", "n", 1234567), ("SET", "e", ""),
    ]
    for op in ("AND", "OR", "XOR", "and", "Or", "xOr"):
        script += [("BITOP", op, "d", "a", "b", "c"), ("GET", "d"),
                   ("BITOP", op, "d", "c", "missing", "n"), ("GET", "d"),
                   ("BITOP", op, "d", "e"), ("EXISTS", "d"), ("BITOP", op, "d", "b"), ("GET", "d")]
    for src in ("a", "b", "c", "n", "e", "missing"):
        script += [("BITOP", "NOT", "d", src), ("GET", "d")]
    script += [("BITOP", "NOT", "d", "a", "b"), ("BITOP", "NOT", "d"), ("BITOP", "NAND", "d", "a"),
               ("BITOP", "DIFF", "d", "a", "b"), ("BITOP", "ONE", "d", "a", "b"),
               ("BITOP", "", "d", "a")]
    assert_same_as_redis(server, real_redis, script)


# --- BITFIELD -------------------------------------------------------------------------------------


def test_bitfield_basics(r: redis.Redis) -> None:
    assert r.execute_command("BITFIELD", "k", "SET", "i8", 0, -100, "GET", "i8", 0) == [0, -100]
    assert r.execute_command("BITFIELD", "k", "SET", "u8", 0, 255, "GET", "u8", 0) == [156, 255]
    assert r.execute_command("BITFIELD", "k", "INCRBY", "u2", 100, 1, "OVERFLOW", "SAT",
                             "INCRBY", "u2", 102, 1) == [1, 1]
    assert r.execute_command("BITFIELD", "k") == []
    assert r.execute_command("BITFIELD_RO", "k") == []
    assert r.execute_command("BITFIELD", "k", "SET", "i8", "#1", 10, "GET", "i8", 8) == [0, 10]
    # The regression tests of Redis's bitfield.tcl.
    r.set("bits", 1)
    assert r.execute_command("BITFIELD", "bits", "GET", "u1", 0) == [0]
    r.delete("m")
    assert r.execute_command("BITFIELD", "m", "SET", "i8", 0, 10, "SET", "i8", 64, 10,
                             "INCRBY", "i8", 10, 99900) == [0, 0, 60]


def test_bitfield_overflow_fail_replies_null(r3: redis.Redis, server) -> None:
    reply = r3.execute_command("BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u2", 0, 4,
                               "INCRBY", "u2", 0, 3)
    assert reply == [None, 3]
    raw3 = resp3_reply_bytes(server.port, b"BITFIELD k2 OVERFLOW FAIL SET i4 0 8 GET i4 0\r\n")
    assert raw3 == b"*2\r\n_\r\n:0\r\n"
    conn = RawConnection(server.port)
    try:
        assert call_raw(conn, "BITFIELD", "k", "OVERFLOW", "FAIL", "SET", "i4", 0, 8) == \
            b"*1\r\n$-1\r\n"
    finally:
        conn.close()


def test_bitfield_matches_redis(server, real_redis) -> None:
    script: list[tuple] = [("SET", "s", "foobar"), ("SET", "n", 99)]
    for kind in ("i1", "u1", "i7", "u7", "i8", "u8", "i13", "u31", "i63", "u63", "i64"):
        for offset in (0, 3, 8, 61, "#0", "#3"):
            script += [("BITFIELD", "s", "GET", kind, offset), ("BITFIELD_RO", "n", "GET", kind, offset)]
            for overflow in ("WRAP", "SAT", "FAIL"):
                for value in (0, 1, -1, 127, -128, 255, 2**31, -(2**31) - 1, 2**63 - 1, -(2**63)):
                    script += [
                        ("BITFIELD", "b", "OVERFLOW", overflow, "SET", kind, offset, value,
                         "GET", kind, offset, "INCRBY", kind, offset, value, "GET", "u8", 0),
                    ]
            script += [("GET", "b")]
    assert_same_as_redis(server, real_redis, script)


def test_bitfield_edits_anywhere_in_the_value_match_redis(server, real_redis) -> None:
    big = bytes(range(256)) * 8
    script: list[tuple] = [("SET", "big", big), ("SET", "two", "ab")]
    for ops in (("SET", "u8", 8000, 7), ("INCRBY", "i16", 5, 300, "GET", "u8", 0, "GET", "u4", 16380),
                ("GET", "u8", 100, "SET", "u3", 16383, 5), ("SET", "u8", "#2047", 1, "GET", "i8", 0),
                ("GET", "u8", 99999, "SET", "i5", 10, -3, "GET", "u8", 20000),
                ("SET", "u8", 16384, 255), ("SET", "i64", 16380, -2, "GET", "u63", 16381)):
        script += [("BITFIELD", "big", *ops), ("GET", "big"), ("BITFIELD", "two", *ops), ("GET", "two")]
    script += [("BITFIELD", "two", "SET", "u8", 200, 1), ("GET", "two"),  # past the end
               ("BITFIELD", "two", "OVERFLOW", "FAIL", "SET", "u2", 400, 9), ("GET", "two"),
               ("BITFIELD", "new", "GET", "u8", 0, "SET", "u1", 95, 1, "GET", "u16", 88), ("GET", "new")]
    assert_same_as_redis(server, real_redis, script)


def test_bitfield_errors_match_redis(server, real_redis) -> None:
    assert_same_as_redis(server, real_redis, [
        ("BITFIELD", "k", "GET", "u64", 0), ("BITFIELD", "k", "GET", "i65", 0),
        ("BITFIELD", "k", "GET", "i0", 0), ("BITFIELD", "k", "GET", "u", 0),
        ("BITFIELD", "k", "GET", "I8", 0), ("BITFIELD", "k", "GET", "", 0),
        ("BITFIELD", "k", "GET", "i08", 0), ("BITFIELD", "k", "GET", "u-1", 0),
        ("BITFIELD", "k", "GET", "u8", -1), ("BITFIELD", "k", "GET", "u8", "#-1"),
        ("BITFIELD", "k", "GET", "u8", "#"), ("BITFIELD", "k", "GET", "u8", "##1"),
        ("BITFIELD", "k", "GET", "u8", "4294967296"),
        ("BITFIELD", "k", "GET", "u8", "#4611686018427387904"),  # wraps to 0, as in C
        ("BITFIELD", "k", "GET", "i64", "#2305843009213693952"),
        ("BITFIELD", "k", "SET", "u8", 0, "x"), ("BITFIELD", "k", "SET", "u8", 0),
        ("BITFIELD", "k", "INCRBY", "u8", 0, "1.5"), ("BITFIELD", "k", "INCRBY", "u8", 0),
        ("BITFIELD", "k", "OVERFLOW"), ("BITFIELD", "k", "OVERFLOW", "NONE", "GET", "u8", 0),
        ("BITFIELD", "k", "FOO", "u8", 0), ("BITFIELD", "k", "GET"),
        ("BITFIELD", "k", "GET", "u8", 0, "SET", "u99", 0, 1),
        ("BITFIELD", "k", "GET", "u8", 0, "SET", "u8", 0), ("EXISTS", "k"),
        ("BITFIELD_RO", "k", "SET", "u8", 0, 1), ("BITFIELD_RO", "k", "INCRBY", "u8", 0, 1),
        ("BITFIELD_RO", "k", "OVERFLOW", "SAT", "GET", "u8", 0),
        ("BITFIELD_RO", "k", "OVERFLOW", "SAT"), ("EXISTS", "k"),
        ("BITFIELD", "k", "overflow", "fail", "incrby", "u2", 100, 5), ("STRLEN", "k"),
    ])


# --- generated sequences --------------------------------------------------------------------------

_KEYS = st.sampled_from(["a", "b", "c"])
_SMALL_OFFSET = st.integers(min_value=0, max_value=80)
_RANGE = st.integers(min_value=-12, max_value=12)
_TYPES = st.builds(lambda s, n: f"{s}{n}", st.sampled_from("iu"), st.integers(1, 64)).filter(
    lambda t: t != "u64")
_VALUES = st.one_of(st.integers(-(2**63), 2**63 - 1), st.integers(-300, 300))
_OFFSET_ARG = st.one_of(_SMALL_OFFSET, st.builds(lambda n: f"#{n}", st.integers(0, 6)))
_BITFIELD_OP = st.one_of(
    st.tuples(st.just("GET"), _TYPES, _OFFSET_ARG),
    st.tuples(st.just("SET"), _TYPES, _OFFSET_ARG, _VALUES),
    st.tuples(st.just("INCRBY"), _TYPES, _OFFSET_ARG, _VALUES),
    st.tuples(st.just("OVERFLOW"), st.sampled_from(["WRAP", "SAT", "FAIL", "wrap", "fail"])),
)
_COMMAND = st.one_of(
    st.tuples(st.just("SETBIT"), _KEYS, _SMALL_OFFSET, st.sampled_from([0, 1])),
    st.tuples(st.just("GETBIT"), _KEYS, _SMALL_OFFSET),
    st.tuples(st.just("SET"), _KEYS, st.binary(max_size=6)),
    # Values past 1 KB have their whole-string count remembered: these exercise that memo.
    st.tuples(st.just("SET"), _KEYS, st.binary(min_size=1024, max_size=1030)),
    st.tuples(st.just("SETBIT"), _KEYS, st.integers(min_value=8150, max_value=8300),
              st.sampled_from([0, 1])),
    st.tuples(st.just("APPEND"), _KEYS, st.binary(min_size=1, max_size=3)),
    st.tuples(st.just("SETRANGE"), _KEYS, st.integers(0, 1100), st.binary(min_size=1, max_size=3)),
    st.tuples(st.just("DEL"), _KEYS),
    st.tuples(st.just("COPY"), _KEYS, _KEYS),
    st.tuples(st.just("RENAME"), _KEYS, _KEYS),
    st.tuples(st.just("BITCOUNT"), _KEYS, st.just(0), st.just(-1)),
    st.tuples(st.just("BITCOUNT"), _KEYS),
    st.tuples(st.just("BITCOUNT"), _KEYS, _RANGE, _RANGE),
    st.tuples(st.just("BITCOUNT"), _KEYS, st.integers(-90, 90), st.integers(-90, 90),
              st.sampled_from(["BIT", "BYTE"])),
    st.tuples(st.just("BITPOS"), _KEYS, st.sampled_from([0, 1])),
    st.tuples(st.just("BITPOS"), _KEYS, st.sampled_from([0, 1]), _RANGE),
    st.tuples(st.just("BITPOS"), _KEYS, st.sampled_from([0, 1]), _RANGE, _RANGE),
    st.tuples(st.just("BITPOS"), _KEYS, st.sampled_from([0, 1]), st.integers(-90, 90),
              st.integers(-90, 90), st.sampled_from(["BIT", "BYTE"])),
    st.builds(lambda op, d, srcs: ("BITOP", op, d, *srcs), st.sampled_from(["AND", "OR", "XOR"]),
              _KEYS, st.lists(_KEYS, min_size=1, max_size=3)),
    st.tuples(st.just("BITOP"), st.just("NOT"), _KEYS, _KEYS),
    st.builds(lambda cmd, k, ops: (cmd, k, *[a for op in ops for a in op]),
              st.sampled_from(["BITFIELD", "BITFIELD"]), _KEYS, st.lists(_BITFIELD_OP, max_size=5)),
    st.builds(lambda k, ops: ("BITFIELD_RO", k, *[a for op in ops for a in op]), _KEYS,
              st.lists(st.tuples(st.just("GET"), _TYPES, _OFFSET_ARG), max_size=3)),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.data_too_large,
                                                                   HealthCheck.too_slow])
@given(script=st.lists(_COMMAND, min_size=1, max_size=30))
def test_generated_bit_sequences_match_redis(server, real_redis, script) -> None:
    script = [*script, ("GET", "a"), ("GET", "b"), ("GET", "c")]
    assert_same_as_redis(server, real_redis, script)


# --- propagation, WATCH, dirty counter, persistence -----------------------------------------------


def _logged(srv) -> list[list[bytes]]:
    return [c for c in parse_aof(aof_path(srv).read_bytes()) if c[0].upper() != b"SELECT"]


def test_writes_are_logged_as_sent_and_no_ops_not_at_all(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    r.setbit("k", 3, 1)
    r.setbit("k", 3, 1)  # unchanged: nothing
    r.setbit("k", 3, 0)
    r.setbit("k", 20, 0)  # only grows the string: logged
    r.getbit("k", 3)
    r.bitop("AND", "d", "missing")  # no destination to delete: nothing
    r.bitop("OR", "d", "k")
    r.bitop("AND", "d", "missing")  # deletes d: logged
    r.execute_command("BITFIELD", "f", "SET", "u8", 0, 5)
    r.execute_command("BITFIELD", "f", "SET", "u8", 0, 5, "GET", "u8", 0)  # same value: nothing
    r.execute_command("BITFIELD", "f", "GET", "u8", 0)
    r.execute_command("BITFIELD_RO", "f", "GET", "u8", 0)
    r.execute_command("BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u8", 0, 1000)  # failed
    r.execute_command("BITFIELD", "f", "INCRBY", "u8", 0, 1)
    r.bitcount("k")
    r.bitpos("k", 1)
    assert _logged(srv) == [
        [b"SETBIT", b"k", b"3", b"1"], [b"SETBIT", b"k", b"3", b"0"],
        [b"SETBIT", b"k", b"20", b"0"], [b"BITOP", b"OR", b"d", b"k"],
        [b"BITOP", b"AND", b"d", b"missing"],
        [b"BITFIELD", b"f", b"SET", b"u8", b"0", b"5"],
        [b"BITFIELD", b"f", b"INCRBY", b"u8", b"0", b"1"],
    ]


def test_dirty_counter_follows_redis(r: redis.Redis) -> None:
    # bitops.tcl "SETBIT/BITFIELD only increase dirty when the value changed".
    def dirty() -> int:
        return r.info("persistence")["rdb_changes_since_last_save"]

    start = dirty()
    r.setbit("foo", 0, 0)
    r.execute_command("BITFIELD", "foo2", "SET", "i5", 0, 0)
    assert dirty() == start + 2
    r.setbit("foo", 0, 0)
    r.execute_command("BITFIELD", "foo2", "SET", "i5", 0, 0)
    assert dirty() == start + 2
    for value in (1, 1, 0, 0):
        r.setbit("foo", 0, value)
        r.execute_command("BITFIELD", "foo2", "SET", "i5", 0, value)
    assert dirty() == start + 6
    r.execute_command("BITFIELD", "foo3", "INCRBY", "i5", 0, 1)
    r.execute_command("BITFIELD", "foo3", "INCRBY", "i5", 0, 1)
    assert dirty() == start + 8
    r.setbit("foo", 90, 0)
    r.execute_command("BITFIELD", "foo2", "SET", "i5", 90, 0)
    assert dirty() == start + 10
    # One BITFIELD counts one change per field it changed, as Redis's dirty += changes.
    r.execute_command("BITFIELD", "foo2", "SET", "u4", 0, 1, "SET", "u4", 4, 1, "SET", "u4", 4, 1)
    assert dirty() == start + 12


def test_watch_sees_changes_only(server) -> None:
    r = redis.Redis(port=server.port)
    other = redis.Redis(port=server.port)
    try:
        r.flushall()
        r.setbit("k", 1, 1)
        for change, aborted in [(lambda: other.setbit("k", 1, 1), False),
                                (lambda: other.getbit("k", 1), False),
                                (lambda: other.execute_command("BITFIELD", "k", "GET", "u8", 0), False),
                                (lambda: other.setbit("k", 1, 0), True),
                                (lambda: other.execute_command("BITFIELD", "k", "SET", "u1", 1, 1), True),
                                (lambda: other.bitop("NOT", "k", "k"), True)]:
            pipe = r.pipeline()
            pipe.watch("k")
            change()
            pipe.multi()
            pipe.get("k")
            if aborted:
                with pytest.raises(redis.WatchError):
                    pipe.execute()
            else:
                assert len(pipe.execute()) == 1
    finally:
        r.close()
        other.close()


def _bitmap_writes(r: redis.Redis) -> None:
    for i in range(0, 3000, 7):
        r.setbit("bm", i, 1)
    r.setbit("bm", 5, 1)
    r.bitop("XOR", "x", "bm", "bm2")
    r.execute_command("BITFIELD", "bf", "SET", "i16", "#3", -1234, "INCRBY", "u5", 200, 40)
    r.setbit("ttl", 9, 1)
    r.expire("ttl", 1000)


def _bitmap_state(r: redis.Redis) -> tuple:
    return (r.get("bm"), r.get("x"), r.get("bf"), r.get("ttl"), r.ttl("ttl") > 0,
            r.bitcount("bm"), sorted(r.keys()))


def test_kill_9_restart_replays_bit_writes(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    _bitmap_writes(r)
    expected = _bitmap_state(r)
    os.kill(srv.proc.pid, signal.SIGKILL)
    srv.proc.wait()
    srv2 = restart(srv)
    try:
        assert _bitmap_state(redis.Redis(port=srv2.port)) == expected
    finally:
        srv2.cleanup()


def test_bgrewriteaof_round_trip_with_bitmaps(server_factory) -> None:
    srv = server_factory()
    r = redis.Redis(port=srv.port)
    _bitmap_writes(r)
    expected = _bitmap_state(r)
    assert r.bgrewriteaof()
    deadline = time.monotonic() + 30
    while r.info("persistence")["aof_rewrite_in_progress"] or r.info("persistence")["aof_rewrites"] < 1:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert r.info("persistence")["aof_last_bgrewrite_status"] == "ok"
    assert b"SETBIT" not in aof_path(srv).read_bytes()  # the rewrite stores values, not history
    srv2 = restart(srv)
    try:
        assert _bitmap_state(redis.Redis(port=srv2.port)) == expected
    finally:
        srv2.cleanup()


def test_aof_replay_is_not_limited_by_proto_max_bulk_len(server_factory) -> None:
    # A replayed write is trusted, as Redis trusts its AOF and its master: a smaller limit set
    # after the write must not make the file unloadable.
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    r.setbit("k", 8 * 2 * 1024 * 1024, 1)
    srv2 = restart(srv, "--proto-max-bulk-len", str(1024 * 1024))
    try:
        r2 = redis.Redis(port=srv2.port)
        assert r2.strlen("k") == 2 * 1024 * 1024 + 1
        assert r2.bitpos("k", 1) == 8 * 2 * 1024 * 1024
    finally:
        srv2.cleanup()


# --- the command table ----------------------------------------------------------------------------


def test_command_info_matches_redis(server, real_redis) -> None:
    script = [("COMMAND", "INFO", name) for name in BIT_COMMANDS]
    ours = run_script(server.port, script)
    theirs = run_script(real_redis.port, script)
    assert ours == theirs


def test_command_info_first_seven_fields_match_redis(server, real_redis) -> None:
    for name in BIT_COMMANDS:
        replies = []
        for port in (server.port, real_redis.port):
            with redis.Redis(port=port) as c:
                c.response_callbacks.clear()
                replies.append(c.execute_command("COMMAND", "INFO", name)[0][:7])
        assert replies[0] == replies[1], name


def test_command_docs(r3: redis.Redis) -> None:
    docs = plain(r3).execute_command("COMMAND", "DOCS", "bitcount", "bitfield_ro")
    bitcount = docs[b"bitcount"]
    assert bitcount[b"group"] == b"bitmap"
    assert bitcount[b"history"] == [[b"7.0.0", b"Added the `BYTE|BIT` option."]]
    unit = bitcount[b"arguments"][1][b"arguments"][2]
    assert unit[b"since"] == b"7.0.0"
    assert [a[b"token"] for a in unit[b"arguments"]] == [b"BYTE", b"BIT"]
    get_block = docs[b"bitfield_ro"][b"arguments"][1]
    assert get_block[b"token"] == b"GET"
    assert set(get_block[b"flags"]) == {b"optional", b"multiple", b"multiple_token"}


def test_pipelined_raw_replies(raw: RawConnection) -> None:
    raw.send(encode_command("SETBIT", "k", 9, 1) + encode_command("BITFIELD", "k", "GET", "u16", 0)
             + encode_command("BITPOS", "k", 1) + encode_command("BITCOUNT", "k", 0, -1, "BIT"))
    assert [read_reply(raw) for _ in range(4)] == [b":0\r\n", b"*1\r\n:64\r\n", b":9\r\n", b":1\r\n"]


def test_bench_case_runs_on_both_servers(tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "bits", "--requests", "640", "--repeat", "1",
         "--results-dir", str(tmp_path)],
        cwd=Path(__file__).resolve().parent.parent, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    records = {r["metric"]: r for r in json.loads((tmp_path / "latest.json").read_text())["results"]}
    assert set(records) == {f"bits.{kind}.{size}" for kind in ("setbit", "setbit_bitcount", "bitcount")
                            for size in ("100k", "1000k")}
    for name, record in records.items():
        assert record["errors"] == {}, name
        assert record["rivulet"]["min"] > 0 and record["redis"]["min"] > 0, name
        assert any(line.startswith(name + " ") and "ours/redis" in line
                   for line in done.stdout.splitlines()), name


def assert_same_as_redis_resp3(server, real_redis, script: list[tuple]) -> None:
    """As assert_same_as_redis, on connections switched to RESP3 (HELLO's own reply aside)."""
    ours = run_script(server.port, [("HELLO", 3), *script])[1:]
    theirs = run_script(real_redis.port, [("HELLO", 3), *script])[1:]
    for cmd, mine, ref in zip(script, ours, theirs, strict=True):
        assert mine == ref, f"{cmd!r}: rivulet {mine!r} != redis {ref!r}"


def test_resp3_replies_match_redis(server, real_redis) -> None:
    assert_same_as_redis_resp3(server, real_redis, [
        ("SETBIT", "k", 9, 1), ("GETBIT", "k", 9), ("BITCOUNT", "k"), ("BITPOS", "k", 1),
        ("BITOP", "NOT", "d", "k"), ("BITFIELD", "k", "GET", "u4", 8, "OVERFLOW", "FAIL",
                                     "INCRBY", "u4", 8, 100, "SET", "i8", 0, 5),
        ("BITFIELD_RO", "k", "GET", "i8", 0), ("BITFIELD", "k"), ("BITFIELD", "k", "GET", "u64", 0),
        ("SET", "a", "ohmytext"), ("SET", "b", "mynewtext"), ("LCS", "a", "b"),
        ("LCS", "a", "b", "IDX", "WITHMATCHLEN"), ("LCS", "a", "nokey", "IDX"),
        ("SUBSTR", "a", 2, 3),
    ])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.data_too_large,
                                                                  HealthCheck.too_slow])
@given(script=st.lists(_COMMAND, min_size=1, max_size=20))
def test_generated_bit_sequences_match_redis_in_resp3(server, real_redis, script) -> None:
    assert_same_as_redis_resp3(server, real_redis, [*script, ("GET", "a"), ("GET", "b")])


# --- pipelined SETBITs to one key (one copy of the value per run) ---------------------------------


def _pipelined_replies(port: int, script: list[tuple]) -> list[bytes]:
    conn = RawConnection(port)
    try:
        call_raw(conn, "FLUSHALL")
        conn.send(b"".join(encode_command(*cmd) for cmd in script))
        return [read_reply(conn) for _ in script]
    finally:
        conn.close()


def test_pipelined_setbits_match_redis(server, real_redis) -> None:
    rng = random.Random(5)
    script: list[tuple] = [("SET", "bm", rng.randbytes(300)), ("PEXPIRE", "bm", 100000)]
    for i in range(400):
        script.append(("SETBIT", "bm", rng.randrange(2400), rng.randrange(2)))
        if i % 97 == 0:
            # Runs end at anything unusual: growth, bad values, another key or command.
            script += [("SETBIT", "bm", 2400 + i, 1), ("SETBIT", "bm", 5, 2), ("SETBIT", "bm", "x", 1),
                       ("SETBIT", "other", 3, 1), ("BITCOUNT", "bm"), ("setbit", "bm", 7, 1),
                       ("SETBIT", "bm", "007", 1), ("SETBIT", "bm", -1, 1)]
    script += [("GET", "bm"), ("BITCOUNT", "bm"), ("TTL", "bm"), ("GET", "other")]
    ours = _pipelined_replies(server.port, script)
    theirs = _pipelined_replies(real_redis.port, script)
    for cmd, mine, ref in zip(script, ours, theirs, strict=True):
        if cmd[0] == "TTL":
            assert mine == ref or abs(int(mine[1:]) - int(ref[1:])) <= 1, (mine, ref)
        else:
            assert mine == ref, f"{cmd!r}: rivulet {mine!r} != redis {ref!r}"


def test_pipelined_setbits_log_count_and_signal_each_change(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    r.set("bm", b"\x00" * 4)
    before = r.info("persistence")["rdb_changes_since_last_save"]
    assert r.bitcount("bm") == 0  # remembered, then carried through the run
    sets = [("SETBIT", "bm", 1, 1), ("SETBIT", "bm", 1, 1), ("SETBIT", "bm", 9, 1),
            ("SETBIT", "bm", 1, 0), ("SETBIT", "bm", 30, 1)]
    conn = RawConnection(srv.port)
    try:
        conn.send(b"".join(encode_command(*cmd) for cmd in sets))
        assert [read_reply(conn) for _ in sets] == [b":0\r\n", b":1\r\n", b":0\r\n", b":1\r\n", b":0\r\n"]
    finally:
        conn.close()
    assert r.info("persistence")["rdb_changes_since_last_save"] == before + 4
    assert r.bitcount("bm") == 2 and r.get("bm") == b"\x00\x40\x00\x02"
    logged = _logged(srv)
    assert logged[-4:] == [[b"SETBIT", b"bm", b"1", b"1"], [b"SETBIT", b"bm", b"9", b"1"],
                           [b"SETBIT", b"bm", b"1", b"0"], [b"SETBIT", b"bm", b"30", b"1"]]
