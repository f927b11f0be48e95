"""Glob patterns (KEYS, SCAN MATCH, CONFIG GET, COMMAND LIST FILTERBY PATTERN) match what Redis
matches, byte for byte, and a pathological pattern cannot pin the server."""

from __future__ import annotations

import random
import time

import redis

from tests.helpers import plain
from tests.serverproc import RedisProcess, ServerProcess

# Bytes that mean something to the matcher, letters of both cases for the case-insensitive
# patterns, and bytes from 0x80 that Redis compares as negative chars inside ranges.
_PATTERN_BYTES = [b"*", b"?", b"[", b"]", b"^", b"-", b"\\", b"a", b"b", b"c", b"A", b"Z", b"z",
                  b"\x00", b"\x7f", b"\x80", b"\xff", b"_", b"*", b"?", b"a", b"b"]
_KEY_BYTES = [b"a", b"b", b"c", b"A", b"B", b"Z", b"z", b"-", b"]", b"[", b"\\", b"*", b"?", b"^",
              b"\x00", b"\x7f", b"\x80", b"\xff", b"`", b"_", b"\n", b" "]

# Cases named by what they exercise; the random ones below mix the same elements.
_HANDPICKED = [
    b"", b"*", b"**", b"***", b"?", b"??", b"*?", b"?*", b"a", b"a*", b"*a", b"*a*", b"a*b",
    b"a*b*", b"*a*b", b"a?b", b"a**b", b"[abc]", b"[^abc]", b"[a-c]", b"[c-a]", b"[^a-c]*",
    b"[]", b"[^]", b"[]a]", b"[]-a]", b"[a-]", b"[a-]b", b"[-a]", b"[a-\\]", b"[\\]]", b"[\\]",
    b"[\\", b"[", b"[^", b"[a", b"[a-", b"[a-c", b"[^a", b"a[", b"a[b", b"\\", b"a\\", b"\\a",
    b"\\*", b"\\?", b"\\[", b"\\\\", b"*\\", b"*\\*", b"a\\*", b"[*]", b"[?]", b"[\\-]",
    b"[a\\-c]", b"[\x80-\xff]", b"[a-\xff]", b"[\xff-a]", b"[\x00-\x7f]", b"[\x00-\x80]",
    b"[^\x80-\xff]", b"\x00*", b"*\x00", b"*\xff*", b"[[]", b"[[-]]", b"[a-a]", b"[A-z]",
    b"[Z-a]", b"[z-A]", b"?*?", b"*?*", b"[*-?]", b"[!-~]", b"\\[a-c]", b"[a-c]\\",
]


def _random_patterns(rng: random.Random, count: int) -> list[bytes]:
    return [b"".join(rng.choice(_PATTERN_BYTES) for _ in range(rng.randint(1, 9)))
            for _ in range(count)]


def _keys(rng: random.Random) -> list[bytes]:
    keys = {b"", b"a", b"b", b"ab", b"abc", b"aab", b"A", b"Ab", b"[", b"]", b"\\", b"*", b"?",
            b"-", b"^", b"a[", b"a\\", b"\x00", b"\x80", b"\xff", b"a\x00b", b"`", b"_" * 20}
    while len(keys) < 160:
        keys.add(b"".join(rng.choice(_KEY_BYTES) for _ in range(rng.randint(1, 6))))
    return sorted(keys)


def _keys_replies(port: int, keys: list[bytes], patterns: list[bytes]) -> list[list[bytes]]:
    with redis.Redis(port=port) as c:
        plain(c)
        c.flushall()
        c.mset(dict.fromkeys(keys, b"1"))
        pipe = c.pipeline(transaction=False)
        for pattern in patterns:
            pipe.execute_command("KEYS", pattern)
        return [sorted(reply) for reply in pipe.execute()]


def _assert_keys_like_redis(server: ServerProcess, real_redis: RedisProcess, keys: list[bytes],
                            patterns: list[bytes]) -> None:
    ours = _keys_replies(server.port, keys, patterns)
    theirs = _keys_replies(real_redis.port, keys, patterns)
    for pattern, mine, ref in zip(patterns, ours, theirs, strict=True):
        assert mine == ref, f"KEYS {pattern!r}: rivulet {mine!r} != redis {ref!r}"


def test_keys_matches_redis_on_handpicked_patterns(server, real_redis) -> None:
    keys = _keys(random.Random(7))
    _assert_keys_like_redis(server, real_redis, keys, _HANDPICKED)


def test_keys_matches_redis_on_random_patterns(server, real_redis) -> None:
    rng = random.Random(20230228)
    keys = _keys(rng)
    _assert_keys_like_redis(server, real_redis, keys, _random_patterns(rng, 1500))


def test_empty_key_matches_only_the_empty_pattern_and_keys_star(server, real_redis) -> None:
    # Redis answers KEYS * without matching (so the empty key is listed) while `**` goes through
    # the matcher, where an empty subject matches only an empty pattern.
    keys = [b"", b"x"]
    _assert_keys_like_redis(server, real_redis, keys, [b"", b"*", b"**", b"*?", b"?", b"[^]"])
    with redis.Redis(port=server.port) as c:
        c.flushall()
        c.mset({b"": b"1", b"x": b"1"})
        assert sorted(c.keys("*")) == [b"", b"x"]
        assert c.keys("**") == [b"x"]
        assert c.keys("") == [b""]


def test_scan_match_matches_redis(server, real_redis) -> None:
    rng = random.Random(11)
    keys = _keys(rng)
    patterns = [b"a*", b"*b", b"[a-c]?", b"[^a]*", b"\\**", b"[", b"*\xff*", b"**", b"?"]

    def scan_all(port: int, pattern: bytes) -> list[bytes]:
        with redis.Redis(port=port) as c:
            c.flushall()
            c.mset(dict.fromkeys(keys, b"1"))
            return sorted(c.scan_iter(match=pattern, count=7))

    for pattern in patterns:
        assert scan_all(server.port, pattern) == scan_all(real_redis.port, pattern), pattern


def _command_names(port: int, pattern: bytes | None) -> set[bytes]:
    with redis.Redis(port=port) as c:
        plain(c)
        if pattern is None:
            return set(c.execute_command("COMMAND", "LIST"))
        return set(c.execute_command("COMMAND", "LIST", "FILTERBY", "PATTERN", pattern))


def test_case_insensitive_patterns_match_redis(server, real_redis) -> None:
    # COMMAND LIST FILTERBY PATTERN matches without case, as CONFIG GET does. Rivulet implements
    # a subset of Redis's commands, so the comparison is on the names both servers know.
    common = _command_names(server.port, None) & _command_names(real_redis.port, None)
    assert len(common) > 50
    rng = random.Random(3)
    patterns = [b"X*", b"*ADD", b"[X]*", b"[x]*", b"[A-Z]*", b"[a-z]*", b"[Z-a]*", b"[z-A]*",
                b"[^X]*", b"\\X*", b"[\\X]*", b"[\\x]*", b"*|G*", b"CONFIG|[G-S]ET", b"x?E*",
                b"*[_-a]*", b"[`-{]*", b"*[-|]*"]
    for _ in range(300):
        letters = [b"x", b"X", b"a", b"E", b"d", b"*", b"?", b"[", b"]", b"^", b"-", b"|", b"\\",
                   b"Z", b"`", b"r", b"G"]
        patterns.append(b"".join(rng.choice(letters) for _ in range(rng.randint(1, 7))))
    for pattern in patterns:
        mine = _command_names(server.port, pattern) & common
        ref = _command_names(real_redis.port, pattern) & common
        assert mine == ref, f"COMMAND LIST FILTERBY PATTERN {pattern!r}: {mine ^ ref!r}"


def test_config_get_patterns_ignore_case_like_redis(server, real_redis) -> None:
    def names(port: int, pattern: str) -> set[str]:
        with redis.Redis(port=port, decode_responses=True) as c:
            return set(c.config_get(pattern))

    common = names(server.port, "*") & names(real_redis.port, "*")
    for pattern in ["MAXMEMORY*", "[M]ax*", "*-SIZE", "Stream-Node-*", "[L-N]*", "*[^a-z]*"]:
        assert names(server.port, pattern) & common == names(real_redis.port, pattern) & common


# A backtracking matcher took 40 s for the first pattern against the first key, with every other
# client stalled. A bounded one answers in milliseconds; the limit is 2 s, far above that, so a
# loaded shared machine or the pure-Python build does not fail the test, and far below what
# backtracking costs (more stars never finish).
_PATHOLOGICAL = [
    (b"a" * 53, b"a*" * 10 + b"b"),
    (b"a" * 53, b"a*" * 50 + b"b"),
    (b"a" * 5000, b"*a" * 50 + b"*b"),
    (b"a" * 5000, b"*?" * 50 + b"b"),
    (b"ab" * 2000, b"*a*b" * 200 + b"*c"),
    (b"a" * 5000, b"*" + b"?" * 100 + b"*b"),
]


def test_pathological_patterns_answer_quickly_like_redis(server, real_redis) -> None:
    for key, pattern in _PATHOLOGICAL:
        # a socket timeout turns a regression into a failure rather than a hung test run
        with redis.Redis(port=server.port, socket_timeout=30) as c:
            c.flushall()
            c.set(key, 1)
            started = time.monotonic()
            assert c.keys(pattern) == []
            assert list(c.scan_iter(match=pattern)) == []
            assert time.monotonic() - started < 2.0, pattern[:20]
    # the same keys and patterns, compared with Redis, and one that does match
    for key, pattern in _PATHOLOGICAL + [(b"a" * 5000, b"*a" * 50 + b"*")]:
        _assert_keys_like_redis(server, real_redis, [key], [pattern])


def test_star_nesting_limit_like_redis(server, real_redis) -> None:
    # Redis gives up on a pattern that needs more than 1000 nested stars: `*?` x 1001 matches
    # nothing, `*?` x 1000 (or any number of stars at the very end) still matches.
    key = b"a" * 2000
    patterns = [b"*?" * 1000, b"*?" * 1001, b"*?" * 1000 + b"*", b"*?" * 1001 + b"*",
                b"*a" * 1000 + b"*", b"*a" * 1001 + b"*", b"?*" * 1001, b"a*" * 1001]
    _assert_keys_like_redis(server, real_redis, [key], patterns)
    with redis.Redis(port=server.port, socket_timeout=30) as c:
        c.flushall()
        c.set(b"a" * 50000, 1)
        started = time.monotonic()
        assert c.keys(b"*?" * 50000) == []
        assert c.keys(b"*?" * 1000) == [b"a" * 50000]
        assert time.monotonic() - started < 2.0
