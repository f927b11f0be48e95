"""The timeouts of blocking commands, parsed as Redis's getTimeoutFromObjectOrReply does.

XREAD/XREADGROUP BLOCK take integer milliseconds; BLPOP, BLMOVE, BZPOPMIN and the other list and
sorted-set blocking commands take seconds, fractional ones included, read as a long double and
rounded up to the next millisecond. Both give milliseconds, 0 meaning "wait forever".
"""

from __future__ import annotations

import math
from typing import Final

from protocol.floats import parse_long_double, round_long_double
from protocol.numbers import parse_int
from protocol.reply import ErrorReply
from server.keyspace import now_ms

TIMEOUT_NOT_INT = ErrorReply("ERR timeout is not an integer or out of range")
TIMEOUT_NOT_FLOAT = ErrorReply("ERR timeout is not a float or out of range")
TIMEOUT_NEGATIVE = ErrorReply("ERR timeout is negative")
TIMEOUT_RANGE = ErrorReply("ERR timeout is out of range")

# Final: compiled, constants in the code rather than dictionary lookups (every BLPOP, and every
# re-run of a woken one, checks its timeout).
_LLONG_MAX: Final = (1 << 63) - 1
_CLOCK_BOUND: Final = 1 << 48  # milliseconds: the Unix clock reaches it in the year 10889
_NEAR_LIMIT: Final = _LLONG_MAX - _CLOCK_BOUND


def _check(timeout: int) -> int:
    if timeout < 0:
        raise TIMEOUT_NEGATIVE
    # Redis adds the current time to it: only a timeout within a clock reading of the limit
    # can overflow (the clock is read for those alone; a woken command parses it again).
    if timeout > _NEAR_LIMIT and timeout > _LLONG_MAX - now_ms():
        raise TIMEOUT_RANGE
    return timeout


def parse_timeout_ms(arg: bytes) -> int:
    """BLOCK's milliseconds (0 = forever), with Redis's checks and texts."""
    return _check(parse_int(arg, TIMEOUT_NOT_INT))


# Timeouts parsed exactly (below) are remembered: a client repeats its BLPOP with the same
# timeout, and a woken command parses it again. The exact parse costs tens of microseconds.
_parsed: dict[bytes, int] = {}
_PARSED_MAX = 1024


def parse_timeout_seconds(arg: bytes) -> int:
    """A timeout in seconds (BLPOP ... timeout), as milliseconds rounded up (0 = forever)."""
    if arg == b"0":  # a worker's usual "wait forever", sent again with each BLPOP
        return 0
    if arg.isdigit() and len(arg) <= 15:
        # Whole seconds: exact in a long double, and so is their product by 1000.
        return _check(int(arg) * 1000)
    millis = _parsed.get(arg)
    if millis is None:
        millis = _parse_seconds(arg)
        if len(_parsed) >= _PARSED_MAX:
            _parsed.clear()
        _parsed[arg] = millis
    return _check(millis)


def _parse_seconds(arg: bytes) -> int:
    seconds = parse_long_double(arg, TIMEOUT_NOT_FLOAT)
    # ftval *= 1000.0 in long double arithmetic: rounded, so 0.1 s is 100 ms, not 101.
    millis = seconds * 1000 if isinstance(seconds, float) else round_long_double(seconds * 1000)
    if millis > _LLONG_MAX:  # +inf included
        raise TIMEOUT_RANGE
    if isinstance(millis, float):  # -inf
        raise TIMEOUT_NEGATIVE
    # Rounded up before the sign is checked: -0.0001 seconds is 0, "forever", as in Redis.
    return math.ceil(millis)
