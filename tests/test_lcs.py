"""LCS and SUBSTR: replies compared byte for byte with a real Redis, in RESP2 and RESP3.

LCS is unchanged between Redis 7.0 (installed) and 7.4 (t_string.c's lcsCommand is the same),
so every reply, including the order of IDX ranges, must be Redis's.
"""

from __future__ import annotations

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.commands.lcs import LcsTable
from tests.helpers import assert_same_as_redis, plain, resp3_reply_bytes, run_script

# The vectors of Redis's tests/unit/type/string.tcl.
RNA1 = ("CACCTTCCCAGGTAACAAACCAACCAACTTTCGATCTCTTGTAGATCTGTTCTCTAAACGAACTTTAAAATCTGTGTGGCTGTCACTCGGCTG"
        "CATGCTTAGTGCACTCACGCAGTATAATTAATAACTAATTACTGTCGTTGACAGGACACGAGTAACTCGTCTATCTTCTGCAGGCTGCTTAC"
        "GGTTTCGTCCGTGTTGCAGCCGATCATCAGCACATCTAGGTTTCGTCCGGGTGTG")
RNA2 = ("ATTAAAGGTTTATACCTTCCCAGGTAACAAACCAACCAACTTTCGATCTCTTGTAGATCTGTTCTCTAAACGAACTTTAAAATCTGTGTGGCT"
        "GTCACTCGGCTGCATGCTTAGTGCACTCACGCAGTATAATTAATAACTAATTACTGTCGTTGACAGGACACGAGTAACTCGTCTATCTTCTG"
        "CAGGCTGCTTACGGTTTCGTCCGTGTTGCAGCCGATCATCAGCACATCTAGGTTT")
RNA_LCS = ("ACCTTCCCAGGTAACAAACCAACCAACTTTCGATCTCTTGTAGATCTGTTCTCTAAACGAACTTTAAAATCTGTGTGGCTGTCACTCGGCT"
           "GCATGCTTAGTGCACTCACGCAGTATAATTAATAACTAATTACTGTCGTTGACAGGACACGAGTAACTCGTCTATCTTCTGCAGGCTGCTT"
           "ACGGTTTCGTCCGTGTTGCAGCCGATCATCAGCACATCTAGGTTT")


def test_lcs_vectors_of_redis_tests(r: redis.Redis) -> None:
    plain(r)
    r.mset({"virus1": RNA1, "virus2": RNA2})
    assert r.execute_command("LCS", "virus1", "virus2") == RNA_LCS.encode()
    assert r.execute_command("LCS", "virus1", "virus2", "LEN") == len(RNA_LCS)
    reply = r.execute_command("LCS", "virus1", "virus2", "IDX")
    assert reply == [b"matches", [[[238, 238], [239, 239]], [[236, 236], [238, 238]],
                                  [[229, 230], [236, 237]], [[224, 224], [235, 235]],
                                  [[1, 222], [13, 234]]], b"len", len(RNA_LCS)]
    reply = r.execute_command("LCS", "virus1", "virus2", "IDX", "WITHMATCHLEN", "MINMATCHLEN", 5)
    assert reply == [b"matches", [[[1, 222], [13, 234], 222]], b"len", len(RNA_LCS)]


def test_lcs_idx_is_a_map_in_resp3(server) -> None:
    conn = redis.Redis(port=server.port)
    conn.mset({"a": "ohmytext", "b": "mynewtext"})
    conn.close()
    reply = resp3_reply_bytes(server.port, b"LCS a b IDX MINMATCHLEN 4 WITHMATCHLEN\r\n")
    assert reply == (b"%2\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n"
                     b"$3\r\nlen\r\n:6\r\n")
    assert resp3_reply_bytes(server.port, b"LCS a missing IDX\r\n") == \
        b"%2\r\n$7\r\nmatches\r\n*0\r\n$3\r\nlen\r\n:0\r\n"
    assert resp3_reply_bytes(server.port, b"LCS a b LEN\r\n") == b":6\r\n"


def test_lcs_matches_redis(server, real_redis) -> None:
    script: list[tuple] = [
        ("SET", "a", "ohmytext"), ("SET", "b", "mynewtext"), ("SET", "e", ""), ("SET", "n", 12321),
        ("SET", "bin", b"\x00\xff\x00\x80abc\x00"), ("SET", "bin2", b"\xff\x00abc\x80\x00"),
        ("XADD", "st", "1-1", "f", "v"),
    ]
    pairs = [("a", "b"), ("b", "a"), ("a", "a"), ("a", "e"), ("e", "a"), ("missing", "a"),
             ("n", "a"), ("bin", "bin2"), ("missing", "missing2")]
    options = [(), ("LEN",), ("IDX",), ("IDX", "WITHMATCHLEN"), ("idx", "minmatchlen", 2),
               ("IDX", "MINMATCHLEN", -5), ("WITHMATCHLEN",), ("MINMATCHLEN", 3),
               ("LEN", "MINMATCHLEN", 3, "WITHMATCHLEN"), ("IDX", "IDX", "withmatchlen")]
    for x, y in pairs:
        script += [("LCS", x, y, *opts) for opts in options]
    script += [
        ("LCS", "a", "b", "LEN", "IDX"), ("LCS", "a", "b", "IDX", "LEN"), ("LCS", "a", "b", "FOO"),
        ("LCS", "a", "b", "MINMATCHLEN"), ("LCS", "a", "b", "MINMATCHLEN", "x"),
        ("LCS", "a", "st"), ("LCS", "st", "a", "FOO"), ("LCS", "missing", "st", "LEN"),
        ("LCS", "a"), ("LCS", "a", "b", "MINMATCHLEN", "1.5", "IDX", "LEN"),
    ]
    assert_same_as_redis(server, real_redis, script)


_TEXT = st.binary(max_size=40) | st.text(alphabet="ab", max_size=40).map(str.encode) | \
    st.text(alphabet="ACGT", max_size=60).map(str.encode)
_OPTIONS = st.sampled_from([(), ("LEN",), ("IDX",), ("IDX", "WITHMATCHLEN"),
                            ("IDX", "MINMATCHLEN", 2, "WITHMATCHLEN"), ("IDX", "MINMATCHLEN", 3)])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a=_TEXT, b=_TEXT, opts=st.lists(_OPTIONS, min_size=1, max_size=3))
def test_generated_lcs_matches_redis(server, real_redis, a: bytes, b: bytes, opts) -> None:
    script: list[tuple] = [("SET", "a", a), ("SET", "b", b)]
    for o in opts:
        script += [("LCS", "a", "b", *o), ("LCS", "b", "a", *o)]
    assert_same_as_redis(server, real_redis, script)


@settings(max_examples=300, deadline=None)
@given(a=st.binary(max_size=30), b=st.binary(max_size=30) | st.text("xyz", max_size=90).map(str.encode),
       order=st.randoms(use_true_random=False))
def test_bit_vector_table_is_the_dp_table(a: bytes, b: bytes, order) -> None:
    # Every cell, read in the walk's decreasing order and in random order (jumps), equals the
    # plain dynamic-programming table's, whichever string is the longer.
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = (table[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1]
                           else max(table[i - 1][j], table[i][j - 1]))
    cells = [(i, j) for i in range(len(a), -1, -1) for j in range(len(b), -1, -1)]
    shuffled = list(cells)
    order.shuffle(shuffled)
    transposed = [list(col) for col in zip(*table, strict=True)]
    for swapped in (False, True):
        x, y, expected = (b, a, transposed) if swapped else (a, b, table)
        walk = [(j, i) for i, j in cells] if swapped else cells
        jumps = [(j, i) for i, j in shuffled] if swapped else shuffled
        assert LcsTable(x, y, keep=False).total() == expected[-1][-1]
        for reads in (walk, jumps):
            lcs = LcsTable(x, y, keep=True)
            assert lcs.total() == expected[-1][-1]
            for i, j in reads:
                assert lcs.length(i, j) == expected[i][j]


def test_unbalanced_lengths_are_fast_and_match_redis(server, real_redis) -> None:
    # One long and one short string: the loop runs over the short one and the walk back moves
    # through the long one a bit at a time.
    long = (b"abcdefghij" * 30000)[:300000]
    script = [("SET", "l", long), ("SET", "s", "jihgf"), ("LCS", "l", "s", "IDX", "WITHMATCHLEN"),
              ("LCS", "s", "l", "IDX"), ("LCS", "l", "s"), ("LCS", "s", "l", "LEN")]
    assert_same_as_redis(server, real_redis, script)


def test_lcs_of_long_strings(r: redis.Redis, server, real_redis) -> None:
    a = (b"the quick brown fox jumps over the lazy dog " * 60)[:2500]
    b = (b"pack my box with five dozen liquor jugs, the lazy dog " * 50)[:2400]
    script = [("SET", "a", a), ("SET", "b", b), ("LCS", "a", "b", "LEN"),
              ("LCS", "a", "b", "IDX", "MINMATCHLEN", 6, "WITHMATCHLEN"), ("LCS", "a", "b")]
    assert_same_as_redis(server, real_redis, script)


def test_lcs_table_limit_is_proto_max_bulk_len(server_factory, real_redis) -> None:
    srv = server_factory("--proto-max-bulk-len", str(1024 * 1024))
    r = redis.Redis(port=srv.port)
    # (511 + 1) * (511 + 1) * 4 bytes is exactly 1 MB: allowed; one more byte is not.
    r.set("a", b"x" * 511)
    r.set("b", b"x" * 511)
    assert r.execute_command("LCS", "a", "b", "LEN") == 511
    r.append("b", "x")
    with pytest.raises(redis.ResponseError,
                       match="^Insufficient memory, transient memory for LCS exceeds "
                             "proto-max-bulk-len$"):
        r.execute_command("LCS", "a", "b", "LEN")
    # Checked after the options, as Redis does.
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("LCS", "a", "b", "NOPE")
    real = redis.Redis(port=real_redis.port)
    try:
        real.config_set("proto-max-bulk-len", 1024 * 1024)
        script = [("SET", "a", b"x" * 511), ("SET", "b", b"x" * 512), ("LCS", "a", "b", "LEN"),
                  ("LCS", "b", "a"), ("LCS", "a", "a", "IDX")]
        assert run_script(srv.port, script) == run_script(real_redis.port, script)
    finally:
        real.config_set("proto-max-bulk-len", 512 * 1024 * 1024)
        real.close()


# --- SUBSTR ---------------------------------------------------------------------------------------


def test_substr_is_getrange(server, real_redis) -> None:
    script: list[tuple] = [("SET", "k", "Hello World"), ("SET", "n", 1234), ("SET", "e", ""),
                           ("XADD", "st", "1-1", "f", "v")]
    for key in ("k", "n", "e", "missing"):
        for start, end in ((0, 4), (-5, -1), (-1, -5), (5, 3), (0, -100), (-100, 2), (6, 1000),
                           (0, 4294967297), (-9223372036854775808, 9223372036854775807)):
            script += [("SUBSTR", key, start, end), ("GETRANGE", key, start, end)]
    script += [("SUBSTR", "k", "a", 1), ("SUBSTR", "k", 0, "b"), ("SUBSTR", "st", 0, 1),
               ("SUBSTR", "st", "a", 1), ("SUBSTR", "k", 0), ("SUBSTR", "k", 0, 1, 2)]
    assert_same_as_redis(server, real_redis, script)


def test_command_info_matches_redis(server, real_redis) -> None:
    script = [("COMMAND", "INFO", "lcs", "substr"),
              ("COMMAND", "GETKEYSANDFLAGS", "LCS", "a", "b", "IDX")]
    assert run_script(server.port, script) == run_script(real_redis.port, script)
    for name in ("lcs", "substr"):
        replies = []
        for port in (server.port, real_redis.port):
            with redis.Redis(port=port) as c:
                c.response_callbacks.clear()
                replies.append(c.execute_command("COMMAND", "INFO", name)[0][:7])
        assert replies[0] == replies[1], name


def test_command_docs(r3: redis.Redis) -> None:
    docs = plain(r3).execute_command("COMMAND", "DOCS", "substr", "lcs")
    assert set(docs[b"substr"][b"doc_flags"]) == {b"deprecated"}
    assert docs[b"substr"][b"group"] == b"string"
    assert [a[b"name"] for a in docs[b"lcs"][b"arguments"]] == [
        b"key1", b"key2", b"len", b"idx", b"min-match-len", b"withmatchlen"]
