"""The arguments LMPOP, BLMPOP, ZMPOP and BZMPOP share: `numkeys key [key ...] <side> [COUNT
count]`, parsed in Redis's order and with its texts, and the key finder for COMMAND GETKEYS."""

from __future__ import annotations

from protocol.numbers import string2ll
from protocol.reply import ErrorReply

_SYNTAX_ERROR = ErrorReply("ERR syntax error")
_NUMKEYS = ErrorReply("ERR numkeys should be greater than 0")
_COUNT = ErrorReply("ERR count should be greater than 0")


def mpop_keys(argv: list[bytes], numkeys_at: int) -> list[int]:
    """Key positions (lmpopGetKeys / zmpopGetKeys): [] when numkeys is not usable."""
    n = string2ll(argv[numkeys_at]) if numkeys_at < len(argv) else None
    if n is None or n < 1 or numkeys_at + n >= len(argv):
        return []
    return list(range(numkeys_at + 1, numkeys_at + 1 + n))


def parse_mpop(argv: list[bytes], numkeys_at: int, first: bytes,
               second: bytes) -> tuple[list[bytes], bool, int]:
    """(keys, whether the side is `first`, count): `first` and `second` are the two side
    keywords in lower case (LEFT/RIGHT, MIN/MAX)."""
    numkeys = string2ll(argv[numkeys_at])
    if numkeys is None or numkeys < 1:
        raise _NUMKEYS
    where_at = numkeys_at + numkeys + 1
    argc = len(argv)
    if where_at >= argc:
        raise _SYNTAX_ERROR
    where = argv[where_at].lower()
    if where != first and where != second:
        raise _SYNTAX_ERROR
    count = -1
    j = where_at + 1
    while j < argc:
        if count == -1 and argv[j].lower() == b"count" and j + 1 < argc:
            count = string2ll(argv[j + 1]) or 0
            if count < 1:
                raise _COUNT
            j += 2
        else:
            raise _SYNTAX_ERROR
    return argv[numkeys_at + 1:where_at], where == first, 1 if count == -1 else count
