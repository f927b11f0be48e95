"""Redis's glob-style pattern matching (KEYS, SCAN MATCH, CONFIG GET, COMMAND LIST FILTERBY PATTERN).

Same syntax as Redis's stringmatchlen: `*`, `?`, `[abc]`, `[^abc]`, `[a-z]`, and backslash escapes;
patterns are translated once into compiled regular expressions over bytes.
"""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=256)
def compile_glob(pattern: bytes) -> re.Pattern[bytes]:
    out = bytearray()
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i : i + 1]
        if c == b"*":
            out += b".*"
        elif c == b"?":
            out += b"."
        elif c == b"\\" and i + 1 < n:
            i += 1
            out += re.escape(pattern[i : i + 1])
        elif c == b"[":
            i += 1
            negate = i < n and pattern[i : i + 1] == b"^"
            if negate:
                i += 1
            items = bytearray()
            while i < n and pattern[i : i + 1] != b"]":
                ch = pattern[i : i + 1]
                if ch == b"\\" and i + 1 < n:
                    i += 1
                    items += re.escape(pattern[i : i + 1])
                elif i + 2 < n and pattern[i + 1 : i + 2] == b"-" and pattern[i + 2 : i + 3] != b"]":
                    lo, hi = pattern[i], pattern[i + 2]
                    if lo > hi:
                        lo, hi = hi, lo
                    items += re.escape(bytes([lo])) + b"-" + re.escape(bytes([hi]))
                    i += 2
                else:
                    items += re.escape(ch)
                i += 1
            # Redis treats an unterminated class as ending at the pattern's end.
            if not items:
                out += b"(?!)" if not negate else b"."
            else:
                out += b"[" + (b"^" if negate else b"") + bytes(items) + b"]"
        else:
            out += re.escape(c)
        i += 1
    return re.compile(bytes(out) + rb"\Z", re.DOTALL)


def glob_match(pattern: bytes, subject: bytes, *, nocase: bool = False) -> bool:
    if pattern == b"*":
        return True
    if nocase:
        pattern, subject = pattern.lower(), subject.lower()
    return compile_glob(pattern).match(subject) is not None
