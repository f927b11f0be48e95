"""Sorted sets against a real Redis: the same commands, the same raw replies.

The reference is Redis 7.0; Rivulet follows 7.4. Scores here are chosen so that both print them
alike (integers, short binary fractions, infinities): 7.0 prints a non-integral score with %.17g
(0.1 as 0.10000000000000001), 7.4 with Grisu2 round-trip digits (0.1). Scores that print
differently are compared as parsed floats in test_zsets.py.
"""

from __future__ import annotations

import pytest

from tests.helpers import assert_same_as_redis

S = [("ZADD", "z", "1", "a", "2", "b", "3", "c", "3", "d", "-1.5", "e", "inf", "f", "-inf", "g")]

SCRIPTS = {
    "zadd-basics": [
        ("ZADD", "z", "1", "a"), ("ZADD", "z", "1", "a"), ("ZADD", "z", "2", "a"),
        ("ZADD", "z", "CH", "3", "a", "1", "b"), ("ZADD", "z", "NX", "9", "a", "9", "c"),
        ("ZADD", "z", "XX", "9", "a", "9", "zz"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
        ("ZADD", "z", "GT", "CH", "1", "a", "100", "c"), ("ZADD", "z", "LT", "CH", "1", "a"),
        ("ZADD", "z", "XX", "GT", "CH", "50", "a", "1", "c", "5", "new"),
        ("ZRANGE", "z", "0", "-1", "WITHSCORES"), ("ZCARD", "z"), ("ZCARD", "nokey"),
    ],
    "zadd-errors": [
        ("ZADD", "z"), ("ZADD", "z", "1"), ("ZADD", "z", "1", "a", "2"),
        ("ZADD", "z", "NX", "XX", "1", "a"), ("ZADD", "z", "GT", "LT", "1", "a"),
        ("ZADD", "z", "GT", "NX", "1", "a"), ("ZADD", "z", "INCR", "1", "a", "2", "b"),
        ("ZADD", "z", "x", "a"), ("ZADD", "z", "nan", "a"), ("ZADD", "z", " 1", "a"),
        ("ZADD", "z", "1 ", "a"), ("ZADD", "z", "", "a"), ("ZADD", "z", "1e400", "a"),
        ("ZADD", "z", "1e-400", "a"), ("ZADD", "z", "0x10", "a"), ("ZADD", "z", "NX"),
        ("ZADD", "z", "ch", "nx", "1", "a"), ("ZADD", "z", "incr", "nx", "1", "a"),
        ("ZADD", "z", "INCR", "XX", "1", "missing"), ("ZADD", "missing", "XX", "1", "a"),
        ("ZADD", "missing", "XX", "INCR", "1", "a"), ("EXISTS", "missing"),
        ("SET", "s", "x"), ("ZADD", "s", "1", "a"), ("ZADD", "s", "x", "a"),
        ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
        ("ZADD", "z", "-0", "m"), ("ZSCORE", "z", "m"), ("ZADD", "z", "+5", "p"), ("ZSCORE", "z", "p"),
        ("ZADD", "z", "1e3", "q"), ("ZSCORE", "z", "q"), ("ZADD", "z", ".5", "r"), ("ZSCORE", "z", "r"),
    ],
    "zincrby": [
        ("ZINCRBY", "z", "1", "a"), ("ZINCRBY", "z", "2.5", "a"), ("ZINCRBY", "z", "x", "a"),
        ("ZINCRBY", "z", "inf", "a"), ("ZINCRBY", "z", "-inf", "a"), ("ZSCORE", "z", "a"),
        ("ZADD", "z", "INCR", "GT", "-1", "a"), ("ZADD", "z", "INCR", "LT", "-1", "b"),
        ("ZADD", "z", "INCR", "NX", "5", "b"), ("ZADD", "z", "INCR", "NX", "5", "b"),
        ("ZADD", "z", "INCR", "XX", "5", "b"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
        ("ZINCRBY", "z", "1"), ("SET", "s", "v"), ("ZINCRBY", "s", "1", "a"),
    ],
    "zrem": S + [
        ("ZREM", "z", "a", "x", "b"), ("ZREM", "z", "nope"), ("ZREM", "nokey", "a"),
        ("ZREM", "z", "c", "d", "e", "f", "g", "h"), ("EXISTS", "z"), ("ZREM", "z"),
    ],
    "counts": S + [
        ("ZCOUNT", "z", "-inf", "+inf"), ("ZCOUNT", "z", "(1", "3"), ("ZCOUNT", "z", "1", "(3"),
        ("ZCOUNT", "z", "(3", "(3"), ("ZCOUNT", "z", "3", "3"), ("ZCOUNT", "z", "5", "1"),
        ("ZCOUNT", "z", "x", "1"), ("ZCOUNT", "z", "1", "(x"), ("ZCOUNT", "z", "nan", "1"),
        ("ZCOUNT", "z", "", "("), ("ZCOUNT", "z", " 1", "  3"), ("ZCOUNT", "z", "(inf", "inf"),
        ("ZCOUNT", "z", "-inf", "(-inf"), ("ZCOUNT", "z", "1e400", "1e400"),
        ("ZCOUNT", "z", "0x1", "0x3"), ("ZCOUNT", "nokey", "0", "1"), ("ZCOUNT", "nokey", "x", "1"),
        ("ZLEXCOUNT", "z", "-", "+"), ("ZLEXCOUNT", "z", "[a", "[c"), ("ZLEXCOUNT", "z", "x", "+"),
        ("ZLEXCOUNT", "z", "+", "-"), ("ZLEXCOUNT", "nokey", "-", "+"),
    ],
    "scores-ranks": S + [
        ("ZSCORE", "z", "a"), ("ZSCORE", "z", "f"), ("ZSCORE", "z", "g"), ("ZSCORE", "z", "x"),
        ("ZSCORE", "nokey", "a"), ("ZMSCORE", "z", "a", "x", "e"), ("ZMSCORE", "nokey", "a", "b"),
        ("ZMSCORE", "z"), ("ZRANK", "z", "a"), ("ZRANK", "z", "g"), ("ZRANK", "z", "x"),
        ("ZREVRANK", "z", "a"), ("ZREVRANK", "z", "f"), ("ZRANK", "nokey", "a"),
        ("SET", "s", "v"), ("ZSCORE", "s", "a"), ("ZMSCORE", "s", "a"), ("ZRANK", "s", "a"),
    ],
    "zrange-rank": S + [
        ("ZRANGE", "z", "0", "-1"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
        ("ZRANGE", "z", "2", "3"), ("ZRANGE", "z", "-3", "-2", "withscores"),
        ("ZRANGE", "z", "5", "1"), ("ZRANGE", "z", "100", "200"), ("ZRANGE", "z", "-100", "1"),
        ("ZRANGE", "z", "0", "-1", "REV"), ("ZRANGE", "z", "1", "2", "REV", "WITHSCORES"),
        ("ZREVRANGE", "z", "0", "2"), ("ZREVRANGE", "z", "0", "2", "WITHSCORES"),
        ("ZREVRANGE", "z", "0", "2", "REV"), ("ZRANGE", "z", "a", "1"),
        ("ZRANGE", "z", "0", "1", "LIMIT", "0", "1"), ("ZRANGE", "nokey", "0", "-1"),
        ("ZRANGE", "z", "0", "1", "BYLEX", "WITHSCORES"), ("ZRANGE", "z", "0", "1", "foo"),
        ("ZRANGE", "z", "0", "1", "LIMIT", "0"), ("ZRANGE", "z", "0"),
    ],
    "zrange-score": S + [
        ("ZRANGE", "z", "-inf", "+inf", "BYSCORE"), ("ZRANGE", "z", "(1", "3", "BYSCORE", "WITHSCORES"),
        ("ZRANGE", "z", "3", "1", "BYSCORE", "REV"), ("ZRANGE", "z", "(3", "-inf", "BYSCORE", "REV"),
        ("ZRANGE", "z", "-inf", "inf", "BYSCORE", "LIMIT", "1", "3"),
        ("ZRANGE", "z", "-inf", "inf", "BYSCORE", "LIMIT", "1", "-1"),
        ("ZRANGE", "z", "-inf", "inf", "BYSCORE", "LIMIT", "-1", "2"),
        ("ZRANGE", "z", "-inf", "inf", "BYSCORE", "LIMIT", "7", "2"),
        ("ZRANGE", "z", "-inf", "inf", "BYSCORE", "LIMIT", "6", "2"),
        ("ZRANGE", "z", "inf", "-inf", "BYSCORE", "REV", "LIMIT", "2", "3", "WITHSCORES"),
        ("ZRANGE", "z", "inf", "-inf", "BYSCORE", "REV", "LIMIT", "0", "0"),
        ("ZRANGEBYSCORE", "z", "1", "3"), ("ZRANGEBYSCORE", "z", "1", "3", "WITHSCORES", "LIMIT", "1", "1"),
        ("ZREVRANGEBYSCORE", "z", "3", "1"), ("ZREVRANGEBYSCORE", "z", "(3", "(1", "WITHSCORES"),
        ("ZRANGEBYSCORE", "z", "x", "3"), ("ZRANGEBYSCORE", "z", "1", "3", "REV"),
        ("ZRANGEBYSCORE", "z", "1", "3", "LIMIT", "x", "1"), ("ZRANGEBYSCORE", "nokey", "1", "3"),
    ],
    "zrange-lex": [
        ("ZADD", "l", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e", "0", "aa", "0", ""),
        ("ZRANGE", "l", "-", "+", "BYLEX"), ("ZRANGE", "l", "[a", "(c", "BYLEX"),
        ("ZRANGE", "l", "(a", "[c", "BYLEX", "LIMIT", "1", "2"), ("ZRANGE", "l", "+", "-", "BYLEX", "REV"),
        ("ZRANGE", "l", "[d", "(a", "BYLEX", "REV", "LIMIT", "0", "2"), ("ZRANGE", "l", "[", "[a", "BYLEX"),
        ("ZRANGEBYLEX", "l", "-", "[b"), ("ZREVRANGEBYLEX", "l", "[c", "-"), ("ZRANGEBYLEX", "l", "a", "+"),
        ("ZRANGEBYLEX", "l", "[c", "[a"), ("ZRANGEBYLEX", "l", "(a", "(a"), ("ZRANGEBYLEX", "l", "[a", "[a"),
        ("ZRANGEBYLEX", "l", "+", "+"), ("ZRANGEBYLEX", "l", "-", "-"), ("ZRANGEBYLEX", "l", "-x", "+"),
        ("ZRANGEBYLEX", "l", "-", "+", "WITHSCORES"), ("ZLEXCOUNT", "l", "(a", "[d"),
        ("ZREMRANGEBYLEX", "l", "[b", "(d"), ("ZRANGE", "l", "0", "-1"),
        ("ZREMRANGEBYLEX", "l", "x", "y"), ("ZREMRANGEBYLEX", "l", "-", "+"), ("EXISTS", "l"),
    ],
    "zremrange": S + [
        ("ZREMRANGEBYRANK", "z", "0", "0"), ("ZREMRANGEBYRANK", "z", "-2", "-1"),
        ("ZREMRANGEBYRANK", "z", "5", "1"), ("ZREMRANGEBYRANK", "z", "x", "1"),
        ("ZRANGE", "z", "0", "-1", "WITHSCORES"), ("ZREMRANGEBYSCORE", "z", "(1", "3"),
        ("ZREMRANGEBYSCORE", "z", "x", "3"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
        ("ZREMRANGEBYSCORE", "z", "-inf", "inf"), ("EXISTS", "z"), ("ZREMRANGEBYRANK", "nokey", "0", "1"),
    ],
    "zrangestore": S + [
        ("ZRANGESTORE", "d", "z", "0", "2"), ("ZRANGE", "d", "0", "-1", "WITHSCORES"),
        ("ZRANGESTORE", "d", "z", "1", "3", "BYSCORE", "REV"), ("ZRANGESTORE", "d", "z", "3", "1", "BYSCORE", "REV"),
        ("ZRANGE", "d", "0", "-1", "WITHSCORES"), ("ZRANGESTORE", "d", "z", "5", "6", "BYSCORE"),
        ("EXISTS", "d"), ("ZRANGESTORE", "d", "z", "0", "1", "WITHSCORES"),
        ("ZRANGESTORE", "d", "nokey", "0", "-1"), ("SET", "str", "v"), ("ZRANGESTORE", "str", "z", "0", "-1"),
        ("TYPE", "str"), ("ZRANGESTORE", "d", "str", "0", "-1"),
        ("ZRANGESTORE", "d", "z", "-", "+", "BYLEX", "LIMIT", "1", "2"), ("ZRANGE", "d", "0", "-1"),
    ],
    "pops": S + [
        ("ZPOPMIN", "z"), ("ZPOPMAX", "z"), ("ZPOPMIN", "z", "2"), ("ZPOPMAX", "z", "0"),
        ("ZPOPMIN", "z", "-1"), ("ZPOPMIN", "z", "x"), ("ZPOPMIN", "z", "1", "2"),
        ("ZPOPMAX", "z", "10"), ("EXISTS", "z"), ("ZPOPMIN", "z"), ("ZPOPMIN", "z", "0"),
        ("SET", "s", "v"), ("ZPOPMIN", "s"),
    ],
    "zmpop": S + [("ZADD", "y", "5", "q"),
        ("ZMPOP", "2", "nokey", "z", "MIN"), ("ZMPOP", "2", "nokey", "z", "MAX", "COUNT", "3"),
        ("ZMPOP", "1", "nokey", "MIN"), ("ZMPOP", "0", "z", "MIN"), ("ZMPOP", "x", "z", "MIN"),
        ("ZMPOP", "1", "z", "MID"), ("ZMPOP", "1", "z"), ("ZMPOP", "1", "z", "MIN", "COUNT", "0"),
        ("ZMPOP", "1", "z", "MIN", "COUNT"), ("ZMPOP", "1", "z", "MIN", "COUNT", "1", "COUNT", "1"),
        ("ZMPOP", "5", "z", "MIN"), ("ZMPOP", "2", "z", "y", "max", "count", "100"),
        ("SET", "s", "v"), ("ZMPOP", "2", "nokey", "s", "MIN"),
    ],
    "algebra": [
        ("ZADD", "a", "1", "x", "2", "y", "3", "z"), ("ZADD", "b", "10", "y", "20", "z", "30", "w"),
        ("ZADD", "c", "inf", "x", "-inf", "y"),
        ("ZUNION", "2", "a", "b"), ("ZUNION", "2", "a", "b", "WITHSCORES"),
        ("ZUNION", "2", "a", "b", "WEIGHTS", "2", "0.5", "WITHSCORES"),
        ("ZUNION", "2", "a", "b", "AGGREGATE", "MIN", "WITHSCORES"),
        ("ZUNION", "2", "a", "b", "AGGREGATE", "max", "WITHSCORES"),
        ("ZUNION", "3", "a", "b", "c", "WITHSCORES"), ("ZUNION", "2", "c", "c", "WITHSCORES"),
        ("ZUNION", "2", "c", "a", "WEIGHTS", "0", "1", "WITHSCORES"),
        ("ZINTER", "2", "a", "b", "WITHSCORES"), ("ZINTER", "2", "a", "nokey"),
        ("ZINTER", "3", "a", "b", "c", "WITHSCORES"), ("ZINTER", "2", "a", "c", "WITHSCORES"),
        ("ZINTER", "2", "a", "b", "WEIGHTS", "1", "-1", "AGGREGATE", "MAX", "WITHSCORES"),
        ("ZDIFF", "2", "a", "b"), ("ZDIFF", "2", "a", "b", "WITHSCORES"), ("ZDIFF", "1", "nokey"),
        ("ZDIFF", "2", "a", "b", "WEIGHTS", "1", "2"), ("ZINTERCARD", "2", "a", "b"),
        ("ZINTERCARD", "2", "a", "b", "LIMIT", "1"), ("ZINTERCARD", "2", "a", "b", "LIMIT", "-1"),
        ("ZINTERCARD", "2", "a", "b", "LIMIT", "x"), ("ZINTERCARD", "0", "a"),
        ("ZINTERCARD", "3", "a", "b"), ("ZINTERCARD", "2", "a", "b", "WITHSCORES"),
        ("ZUNION", "0", "a"), ("ZUNION", "x", "a"), ("ZUNION", "3", "a", "b"),
        ("ZUNION", "2", "a", "b", "WEIGHTS", "1"), ("ZUNION", "2", "a", "b", "WEIGHTS", "1", "x"),
        ("ZUNION", "2", "a", "b", "AGGREGATE", "avg"), ("ZUNIONSTORE", "d", "2", "a", "b", "WITHSCORES"),
        ("ZUNIONSTORE", "d", "2", "a", "b"), ("ZRANGE", "d", "0", "-1", "WITHSCORES"),
        ("ZINTERSTORE", "d", "2", "a", "b", "WEIGHTS", "2", "3"), ("ZRANGE", "d", "0", "-1", "WITHSCORES"),
        ("ZDIFFSTORE", "d", "2", "a", "b"), ("ZRANGE", "d", "0", "-1", "WITHSCORES"),
        ("ZINTERSTORE", "d", "2", "a", "nokey"), ("EXISTS", "d"), ("ZINTERSTORE", "d", "2", "a", "nokey"),
        ("SET", "s", "v"), ("ZUNION", "2", "a", "s"), ("ZUNIONSTORE", "s", "1", "a"), ("TYPE", "s"),
    ],
    "randmember": [
        ("ZADD", "z", "1", "a"), ("ZRANDMEMBER", "z"), ("ZRANDMEMBER", "z", "1"),
        ("ZRANDMEMBER", "z", "3", "WITHSCORES"), ("ZRANDMEMBER", "z", "-3", "WITHSCORES"),
        ("ZRANDMEMBER", "z", "0"), ("ZRANDMEMBER", "nokey"), ("ZRANDMEMBER", "nokey", "5"),
        ("ZRANDMEMBER", "z", "x"), ("ZRANDMEMBER", "z", "1", "foo"), ("ZRANDMEMBER", "z", "1", "WITHSCORES", "x"),
        ("ZRANDMEMBER", "z", "-9223372036854775808"), ("ZRANDMEMBER", "z", "9223372036854775807", "WITHSCORES"),
        ("ZRANDMEMBER", "z", "-4611686018427387904", "WITHSCORES"),
    ],
    "zscan": [
        ("ZADD", "z", "1", "a", "2.5", "b", "-3", "c"), ("ZSCAN", "z", "0"), ("ZSCAN", "z", "0", "MATCH", "a*"),
        ("ZSCAN", "z", "0", "COUNT", "0"), ("ZSCAN", "z", "x"), ("ZSCAN", "nokey", "0"), ("ZSCAN", "z", "0", "foo"),
    ],
    "types": S + [("TYPE", "z"), ("ZADD", "big", "1", "x" * 65), ("TYPE", "big")],
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_same_as_redis(name: str, server, real_redis) -> None:
    assert_same_as_redis(server, real_redis, SCRIPTS[name])
