"""Redis's integer syntax (util.c string2ll), shared by the request parser, command arguments,
configuration values and stream IDs: an optional '-', digits without a leading zero, 64 bits."""

from __future__ import annotations

from protocol.reply import ErrorReply

NOT_INTEGER = ErrorReply("ERR value is not an integer or out of range")


def string2ll(s: bytes) -> int | None:
    """The signed 64-bit value s spells, or None: no '+', no spaces, no leading zeros, no "-0"."""
    n = len(s)
    if n == 0 or n >= 21:
        return None
    if n <= 18:
        # Short enough not to overflow: the digits are read in one compiled loop, where
        # isdigit() and int() would be two generic calls (COUNT 10 and the like, on every call).
        neg = s[0] == 0x2D  # '-'
        i = 1 if neg else 0
        if i == n:
            return None
        c = s[i]
        if not 0x31 <= c <= 0x39:
            return 0 if n == 1 and c == 0x30 else None
        v = c - 0x30
        i += 1
        while i < n:
            c = s[i]
            if not 0x30 <= c <= 0x39:
                return None
            v = v * 10 + (c - 0x30)
            i += 1
        return -v if neg else v
    body = s[1:] if s[0] == 0x2D else s  # '-'
    if not body or not (0x31 <= body[0] <= 0x39) or not body.isdigit():
        return None
    v = int(body)
    if s[0] == 0x2D:
        return -v if v <= 2**63 else None
    return v if v < 2**63 else None


def parse_int(arg: bytes, error: ErrorReply = NOT_INTEGER) -> int:
    """A command's integer argument, or `error` (Redis's getLongLongFromObjectOrReply)."""
    v = string2ll(arg)
    if v is None:
        raise error
    return v


def plain_decimal(s: bytes) -> float | None:
    """The double that a plain decimal spells ('-'?, 1-18 digits, then '.' and 1-18 digits or
    nothing), or None for anything else. C's strtod and Python's float() read such text alike,
    so score and weight arguments take this path before the full strtod."""
    n = len(s)
    if n == 0 or n > 38:
        return None
    body = s[1:] if s[0] == 0x2D else s
    whole, dot, fraction = body.partition(b".")
    if not 0 < len(whole) <= 18 or not whole.isdigit():
        return None
    if dot and (not 0 < len(fraction) <= 18 or not fraction.isdigit()):
        return None
    return float(s)
