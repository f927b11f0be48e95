"""Redis's glob-style pattern matching (KEYS, SCAN MATCH, CONFIG GET, COMMAND LIST FILTERBY PATTERN).

The syntax and every odd case are Redis's `stringmatchlen` (src/util.c): `*`, `?`, `[abc]`,
`[^abc]`, `[a-z]` (a reversed range is accepted), backslash escapes, an unterminated `[` that
takes the rest of the pattern as its class, a trailing backslash that is a literal one, ranges
compared as signed chars, and an optional case-insensitive mode (ASCII letters only). An empty
subject matches only the empty pattern, and a pattern needing more than 1000 nested `*` to match
matches nothing, as in Redis.

A pattern is translated once into a regular expression whose time is bounded by
pattern length x subject length: every token but `*` matches exactly one byte, so the earliest
place where a segment between two stars matches is always a right choice, and each such segment
is an atomic group (`(?>.*?segment)`) that is never re-entered. A backtracking translation
(`.*segment`) took tens of seconds for `a*a*a*...b` against one long key, with every client
stalled.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Redis's recursion guard: the star run that would be the 1001st nesting level fails.
_MAX_STAR_NESTING = 1000

_STAR = -1
_ANY = frozenset(range(256))
_NEVER = re.compile(rb"(?!)")
_NONEMPTY = re.compile(rb".", re.DOTALL)
_EMPTY_ONLY = re.compile(rb"\Z")


def _signed(byte: int) -> int:
    # C compares pattern and subject bytes in a range as (signed) char on the platforms Redis
    # ships for, so bytes from 0x80 sort before 0x00 there.
    return byte - 256 if byte >= 128 else byte


def _lower(c: int) -> int:
    # tolower() in the C locale Redis runs its character classes in: ASCII letters only.
    return c + 32 if 65 <= c <= 90 else c


def _literal(byte: int, nocase: bool) -> frozenset[int] | int:
    if nocase and (65 <= byte <= 90 or 97 <= byte <= 122):
        return frozenset((byte | 32, byte & ~32))
    return byte


def _class(pattern: bytes, i: int, nocase: bool) -> tuple[frozenset[int], int]:
    """The set of bytes the class opening at pattern[i] == '[' accepts, and where it ends."""
    n = len(pattern)
    i += 1
    negate = i < n and pattern[i] == 94  # '^'
    if negate:
        i += 1
    accepted: set[int] = set()
    while True:
        if i + 1 < n and pattern[i] == 92:  # '\\': the next byte, compared case-sensitively
            i += 1
            accepted.add(pattern[i])
        elif i < n and pattern[i] == 93:  # ']'
            i += 1
            break
        elif i >= n:
            break  # unterminated: the class ends with the pattern
        elif i + 2 < n and pattern[i + 1] == 45:  # '-': a range, even one ending in ']'
            start, end = _signed(pattern[i]), _signed(pattern[i + 2])
            if start > end:
                start, end = end, start
            if nocase:
                # Redis swaps first, then lowers: [Z-a] nocase accepts nothing.
                start, end = _lower(start), _lower(end)
                accepted.update(b for b in range(256) if start <= _lower(_signed(b)) <= end)
            else:
                accepted.update(b for b in range(256) if start <= _signed(b) <= end)
            i += 2
        else:
            literal = _literal(pattern[i], nocase)
            if isinstance(literal, int):
                accepted.add(literal)
            else:
                accepted.update(literal)
        i += 1
    return (_ANY - accepted if negate else frozenset(accepted)), i


def _tokens(pattern: bytes, nocase: bool) -> list[frozenset[int] | int]:
    """One token per pattern element: _STAR for a run of stars, else a byte or a set of bytes."""
    out: list[frozenset[int] | int] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == 42:  # '*'
            if not out or out[-1] != _STAR:
                out.append(_STAR)
            i += 1
        elif c == 63:  # '?'
            out.append(_ANY)
            i += 1
        elif c == 91:  # '['
            accepted, i = _class(pattern, i, nocase)
            out.append(accepted)
        elif c == 92 and i + 1 < n:  # '\\' escapes the next byte; a trailing one is literal
            out.append(_literal(pattern[i + 1], nocase))
            i += 2
        else:
            out.append(_literal(c, nocase))
            i += 1
    return out


def _byte_regex(byte: int) -> bytes:
    return b"\\x%02x" % byte


def _set_regex(accepted: frozenset[int]) -> bytes:
    if len(accepted) == 256:
        return b"."
    if not accepted:
        return b"(?!)"
    if len(accepted) == 1:
        return _byte_regex(next(iter(accepted)))
    out = bytearray(b"[")
    values = sorted(accepted)
    first = last = values[0]
    for b in values[1:] + [-2]:
        if b == last + 1:
            last = b
            continue
        out += _byte_regex(first)
        if last > first:
            out += b"-" + _byte_regex(last)
        first = last = b
    out += b"]"
    return bytes(out)


def _segment_regex(tokens: list[frozenset[int] | int]) -> bytes:
    out = bytearray()
    literal = bytearray()
    for token in tokens:
        if isinstance(token, int):
            literal.append(token)
            continue
        if literal:
            out += re.escape(bytes(literal))
            literal.clear()
        out += _set_regex(token)
    if literal:
        out += re.escape(bytes(literal))
    return bytes(out)


def compile_glob(pattern: bytes, nocase: bool = False) -> re.Pattern[bytes]:
    """A compiled expression whose `match(subject)` is not None exactly when Redis matches."""
    if len(pattern) <= _CACHED_PATTERN_MAX:
        return _compile_cached(pattern, nocase)
    return _compile(pattern, nocase)


def _compile(pattern: bytes, nocase: bool) -> re.Pattern[bytes]:
    if not pattern:
        return _EMPTY_ONLY
    tokens = _tokens(pattern, nocase)
    segments: list[list[frozenset[int] | int]] = [[]]
    for token in tokens:
        if token == _STAR:
            segments.append([])
        else:
            segments[-1].append(token)
    stars = len(segments) - 1
    if stars == 0:
        return re.compile(_segment_regex(segments[0]) + rb"\Z", re.DOTALL)
    ends_with_star = not segments[-1]
    if stars - ends_with_star > _MAX_STAR_NESTING:
        return _NEVER
    if stars == 1 and ends_with_star and not segments[0]:
        return _NONEMPTY  # all stars: anything but the empty subject
    # Every segment but the first and the last is non-empty: star runs were merged.
    out = bytearray(_segment_regex(segments[0]))
    for segment in segments[1:-1]:
        out += b"(?>.*?" + _segment_regex(segment) + b")"
    if not ends_with_star:
        out += b".*" + _segment_regex(segments[-1]) + rb"\Z"
    return re.compile(bytes(out), re.DOTALL)


# Patterns are short in practice; a client sending long distinct ones should not fill memory.
_CACHED_PATTERN_MAX = 1024
_compile_cached = lru_cache(maxsize=256)(_compile)


def glob_match(pattern: bytes, subject: bytes, *, nocase: bool = False) -> bool:
    """Whether Redis's stringmatchlen would match subject against pattern."""
    return compile_glob(pattern, nocase).match(subject) is not None
