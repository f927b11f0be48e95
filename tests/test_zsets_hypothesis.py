"""Random sequences of sorted-set commands, run on Rivulet and on a real Redis, compared byte for
byte. Scores are short binary fractions and infinities, which Redis 7.0 (%.17g) and 7.4 (Grisu2
round trip) print alike, so that any difference is a behaviour difference."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import run_script

KEYS = st.sampled_from(["z1", "z2", "z3"])
MEMBERS = st.sampled_from(["a", "b", "c", "d", "e", "aa", ""])
SCORES = st.sampled_from(["0", "1", "-1", "2.5", "0.25", "-0.5", "3", "inf", "-inf", "10", "-0"])
INDEXES = st.integers(min_value=-8, max_value=8).map(str)
SCORE_BOUNDS = st.one_of(SCORES, SCORES.map(lambda s: "(" + s))
LEX_BOUNDS = st.one_of(st.sampled_from(["-", "+"]), MEMBERS.map(lambda m: "[" + m),
                       MEMBERS.map(lambda m: "(" + m))
WEIGHTS = st.sampled_from(["1", "2", "0.5", "-1", "0"])


def _zadd(draw) -> tuple:
    flags = draw(st.lists(st.sampled_from(["NX", "XX", "GT", "LT", "CH", "INCR"]), max_size=2,
                          unique=True))
    n = 1 if "INCR" in flags else draw(st.integers(1, 3))
    pairs = []
    for _ in range(n):
        pairs += [draw(SCORES), draw(MEMBERS)]
    return ("ZADD", draw(KEYS), *flags, *pairs)


def _range(draw) -> tuple:
    key = draw(KEYS)
    kind = draw(st.sampled_from(["rank", "score", "lex"]))
    rev = draw(st.booleans())
    if kind == "rank":
        args = [draw(INDEXES), draw(INDEXES)]
    elif kind == "score":
        args = [draw(SCORE_BOUNDS), draw(SCORE_BOUNDS), "BYSCORE"]
    else:
        args = [draw(LEX_BOUNDS), draw(LEX_BOUNDS), "BYLEX"]
    if rev:
        args.append("REV")
    if kind != "rank" and draw(st.booleans()):
        args += ["LIMIT", draw(INDEXES), draw(INDEXES)]
    if kind != "lex" and draw(st.booleans()):
        args.append("WITHSCORES")
    if draw(st.booleans()) and "WITHSCORES" not in args:
        return ("ZRANGESTORE", draw(KEYS), key, *args)
    return ("ZRANGE", key, *args)


@st.composite
def command(draw) -> tuple:
    kind = draw(st.integers(0, 17))
    key = draw(KEYS)
    if kind <= 3:
        return _zadd(draw)
    if kind == 4:
        return ("ZINCRBY", key, draw(SCORES), draw(MEMBERS))
    if kind == 5:
        return ("ZREM", key, *draw(st.lists(MEMBERS, min_size=1, max_size=3)))
    if kind <= 7:
        return _range(draw)
    if kind == 8:
        return (draw(st.sampled_from(["ZCOUNT", "ZREMRANGEBYSCORE"])), key, draw(SCORE_BOUNDS),
                draw(SCORE_BOUNDS))
    if kind == 9:
        return (draw(st.sampled_from(["ZLEXCOUNT", "ZREMRANGEBYLEX", "ZRANGEBYLEX",
                                      "ZREVRANGEBYLEX"])), key, draw(LEX_BOUNDS), draw(LEX_BOUNDS))
    if kind == 10:
        return ("ZREMRANGEBYRANK", key, draw(INDEXES), draw(INDEXES))
    if kind == 11:
        name = draw(st.sampled_from(["ZPOPMIN", "ZPOPMAX"]))
        return (name, key) if draw(st.booleans()) else (name, key, str(draw(st.integers(0, 4))))
    if kind == 12:
        keys = draw(st.lists(KEYS, min_size=1, max_size=3))
        return ("ZMPOP", str(len(keys)), *keys, draw(st.sampled_from(["MIN", "MAX"])), "COUNT",
                str(draw(st.integers(1, 3))))
    if kind == 13:
        name = draw(st.sampled_from(["ZRANK", "ZREVRANK", "ZSCORE"]))
        return (name, key, draw(MEMBERS))
    if kind == 14:
        return ("ZMSCORE", key, *draw(st.lists(MEMBERS, min_size=1, max_size=3)))
    if kind == 15:
        op = draw(st.sampled_from(["ZUNION", "ZINTER", "ZDIFF", "ZUNIONSTORE", "ZINTERSTORE",
                                   "ZDIFFSTORE", "ZINTERCARD"]))
        keys = draw(st.lists(KEYS, min_size=1, max_size=3))
        args: list[str] = [str(len(keys)), *keys]
        if op in ("ZUNION", "ZINTER", "ZUNIONSTORE", "ZINTERSTORE"):
            if draw(st.booleans()):
                args += ["WEIGHTS", *(draw(WEIGHTS) for _ in keys)]
            if draw(st.booleans()):
                args += ["AGGREGATE", draw(st.sampled_from(["SUM", "MIN", "MAX"]))]
        if op in ("ZUNION", "ZINTER", "ZDIFF") and draw(st.booleans()):
            args.append("WITHSCORES")
        if op.endswith("STORE"):
            return (op, draw(KEYS), *args)
        return (op, *args)
    if kind == 16:
        return ("ZSCAN", key, "0")
    return (draw(st.sampled_from(["ZCARD", "EXISTS", "TYPE"])), key)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(command(), min_size=1, max_size=25))
def test_random_sequences_as_redis(server, real_redis, script: list[tuple]) -> None:
    ours = run_script(server.port, script)
    theirs = run_script(real_redis.port, script)
    for cmd, mine, ref in zip(script, ours, theirs, strict=True):
        assert mine == ref, f"{cmd!r}: rivulet {mine!r} != redis {ref!r}\nscript: {script!r}"


def _skiplist_safe(cmd: tuple) -> bool:
    # With mixed scores, a lexicographic range over a skiplist depends on the random levels of
    # its nodes; ZSCAN of a skiplist follows hash order. Both are left out here. So is a -0
    # score: a listpack stores it as 0, a skiplist keeps -0, and 7.4 converts a listpack to a
    # skiplist before a ZADD of more pairs than zset-max-listpack-entries where 7.0 converted
    # only once a member too many was added (zsetTypeMaybeConvert), so the two may differ.
    return not any("LEX" in a for a in cmd) and cmd[0] != "ZSCAN" and "-0" not in cmd


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(command().filter(_skiplist_safe), min_size=1, max_size=25))
def test_random_sequences_on_skiplists_as_redis(server, real_redis, script: list[tuple]) -> None:
    setup = [("CONFIG", "SET", "zset-max-listpack-entries", "2")]
    restore = [("CONFIG", "SET", "zset-max-listpack-entries", "128")]
    try:
        ours = run_script(server.port, setup + script)
        theirs = run_script(real_redis.port, setup + script)
    finally:
        run_script(server.port, restore)
        run_script(real_redis.port, restore)
    for cmd, mine, ref in zip(setup + script, ours, theirs, strict=True):
        assert mine == ref, f"{cmd!r}: rivulet {mine!r} != redis {ref!r}\nscript: {script!r}"
