"""Stream entry IDs: one Python int `ms << 64 | seq`, and the parsers for every Redis context.

An int keeps IDs compact, hashable and ordered exactly like Redis's 128-bit big-endian keys, and
incrementing it carries a sequence overflow into the millisecond part for free.

Parsing contexts (one function each, mirroring t_stream.c):

* `parse_id`          `-`, `+`, `ms`, `ms-seq`                     XGROUP SETID
* `parse_strict_id`   `ms`, `ms-seq` (no `-`/`+`)                  XDEL, XACK, XCLAIM ids and
                                                                   LASTID, XGROUP CREATE, XSETID
                                                                   (+MAXDELETEDID), MINID
* `parse_xadd_id`     `*`, `ms`, `ms-seq`, `ms-*`                  XADD
* `parse_range_start` / `parse_range_end`: `-`, `+`, `ms`, `ms-seq`, `(id` (exclusive)
                                                                   XRANGE, XREVRANGE, XPENDING,
                                                                   XAUTOCLAIM (start)
* `parse_read_id`     `$`, `+`, `>`, `ms`, `ms-seq`                XREAD / XREADGROUP
* `parse_group_id`    `$` or the CREATE / SETID form above          XGROUP CREATE / SETID
"""

from __future__ import annotations

from typing import Final

from protocol.numbers import string2ll

from .errors import (
    INVALID_END,
    INVALID_ID,
    INVALID_START,
    XREAD_GT,
    XREADGROUP_DOLLAR,
    XREADGROUP_PLUS,
    StreamError,
)

U64: Final = (1 << 64) - 1
MIN_ID: Final = 0
MAX_ID: Final = (1 << 128) - 1

# Sentinels returned by parse_read_id / parse_group_id for IDs that need the stream to resolve.
LAST: Final = "$"  # the stream's last generated ID
LAST_ENTRY: Final = "+"  # XREAD only: the last entry itself (last_id - 1, i.e. read it again)
NEW: Final = ">"  # XREADGROUP: entries never delivered to the group

# C's isspace(): strtoull skips these before the digits.
_C_SPACE = b" \t\n\v\f\r"


def make_id(ms: int, seq: int) -> int:
    return ms << 64 | seq


def id_ms(i: int) -> int:
    return i >> 64


def id_seq(i: int) -> int:
    return i & U64


def format_id(i: int) -> bytes:
    """b"ms-seq", the form every reply uses."""
    return b"%d-%d" % (i >> 64, i & U64)


def incr_id(i: int) -> int | None:
    """The successor of `i`, or None if `i` is the last possible ID (Redis: C_ERR)."""
    return None if i >= MAX_ID else i + 1


def decr_id(i: int) -> int | None:
    """The predecessor of `i`, or None if `i` is 0-0 (Redis: C_ERR)."""
    return None if i <= 0 else i - 1


def _string2ull(s: bytes) -> int | None:
    """Redis's string2ull: string2ll first (refusing negatives), then C strtoull's leniency.

    strtoull accepts leading blanks, a sign (a '-' negates modulo 2**64) and leading zeros, which is
    why Redis accepts e.g. "+5", "007" or "-0" as stream ID parts; overflow is rejected.
    """
    v = string2ll(s)
    if v is not None:
        return None if v < 0 else v
    t = s.lstrip(_C_SPACE)
    neg = False
    if t[:1] in (b"+", b"-"):
        neg = t[:1] == b"-"
        t = t[1:]
    if not t or not t.isdigit() or not t.isascii():
        return None
    v = int(t)
    if v > U64:
        return None  # ERANGE
    return (-v) & U64 if neg else v


def plain_id(arg: bytes, missing_seq: int = 0) -> int:
    """The ID of `ms-seq` or `ms` (seq = missing_seq) spelled in plain ASCII digits, at most 18
    of each, else -1: the forms clients and a master's stream send, which read the same through
    Redis's string2ll and strtoull, so the digits decide alone. Read in one pass (no split, no
    int() of slices)."""
    n = len(arg)
    ms, i = _read_digits(arg, 0, min(n, 19))
    if 0 < i < 19:
        if i == n:
            return ms << 64 | missing_seq
        if arg[i] == 45 and i + 1 < n:
            seq, j = _read_digits(arg, i + 1, min(n, i + 20))
            if j == n and j - i < 20:
                return ms << 64 | seq
    return -1


def _read_digits(arg: bytes, i: int, stop: int) -> tuple[int, int]:
    """The value of the ASCII digits of arg from index i (up to index stop at most), and the
    index after them."""
    value = 0
    while i < stop:
        c = arg[i]
        if c < 48 or c > 57:
            break
        value = value * 10 + (c - 48)
        i += 1
    return value, i


def _generic_parse(arg: bytes, missing_seq: int, strict: bool, allow_auto_seq: bool) -> tuple[int, bool]:
    """streamGenericParseIDOrReply: returns (id, seq_given)."""
    plain = plain_id(arg, missing_seq)
    if plain >= 0:
        return plain, True
    n = len(arg)
    if n > 127:
        raise StreamError(INVALID_ID)
    nul = arg.find(b"\0")
    if nul >= 0:
        arg = arg[:nul]  # Redis works on the C string
    if arg == b"-" or arg == b"+":
        if strict:
            raise StreamError(INVALID_ID)
        return (MIN_ID if arg == b"-" else MAX_ID), True
    ms_part, dash, seq_part = arg.partition(b"-")
    ms = _string2ull(ms_part)
    if ms is None:
        raise StreamError(INVALID_ID)
    if not dash:
        return ms << 64 | missing_seq, True
    if allow_auto_seq and seq_part == b"*":
        return ms << 64, False
    seq = _string2ull(seq_part)
    if seq is None:
        raise StreamError(INVALID_ID)
    return ms << 64 | seq, True


def parse_id(arg: bytes, *, missing_seq: int = 0) -> int:
    """`-`, `+`, `ms` (seq = missing_seq) or `ms-seq` (streamParseIDOrReply)."""
    return _generic_parse(arg, missing_seq, False, False)[0]


def parse_strict_id(arg: bytes, *, missing_seq: int = 0) -> int:
    """`ms` or `ms-seq`; `-` and `+` are invalid (streamParseStrictIDOrReply)."""
    return _generic_parse(arg, missing_seq, True, False)[0]


# Sequence numbers as IDs made within one millisecond spell them, made once: writing one is a
# list index, a fraction of formatting.
SEQ_DIGITS: Final[list[bytes]] = [b"%d" % n for n in range(4096)]


def parse_strict_ids(args: list[bytes]) -> list[int]:
    """`parse_strict_id` of each argument: the IDs clients send back (XACK, XCLAIM) quickly.

    Those are `ms-seq`, mostly of one millisecond (a batch read from a busy stream): the digits
    are read in one pass each (no slice, no table lookup), and the millisecond part is converted
    to its 128-bit base once per run of IDs that share it. Anything else takes `_generic_parse`,
    which also raises the error.
    """
    ids: list[int] = []
    prefix = b""  # "ms-" of the previous ID when it took this path
    plen = 0
    base = 0  # its ms << 64
    for arg in args:
        n = len(arg)
        if plen and plen < n <= plen + 18 and arg.startswith(prefix):
            i = plen
        else:
            # "ms-": at most 18 digits read the same through string2ll and strtoull, so the
            # digits alone decide.
            ms, i = _read_digits(arg, 0, min(n, 19))
            if i == 0 or i > 18 or i + 1 >= n or arg[i] != 45 or n - i - 1 > 18:
                ids.append(_generic_parse(arg, 0, True, False)[0])
                plen = 0
                continue
            i += 1
            prefix = arg[:i]
            plen = i
            base = ms << 64
        seq, i = _read_digits(arg, i, n)
        if i < n:
            ids.append(_generic_parse(arg, 0, True, False)[0])
            continue
        ids.append(base | seq)
    return ids


def parse_xadd_id(arg: bytes) -> tuple[int, bool] | None:
    """XADD's ID argument: None for `*`, else (id, seq_given).

    For `ms-*` the result is (ms << 64, False): the sequence is chosen by `Stream.add`.
    """
    if arg == b"*":
        return None
    return _generic_parse(arg, 0, True, True)


def _parse_interval(arg: bytes, missing_seq: int) -> tuple[int, bool]:
    # streamParseIntervalIDOrReply: "(" opens an exclusive bound, whose ID is then strict.
    if len(arg) > 1 and arg[:1] == b"(":
        return _generic_parse(arg[1:], missing_seq, True, False)[0], True
    return _generic_parse(arg, missing_seq, False, False)[0], False


def parse_range_start(arg: bytes) -> int:
    """Inclusive start ID of XRANGE/XREVRANGE/XPENDING/XAUTOCLAIM (`ms` means `ms-0`).

    `(id` is turned into id+1; `(` on the last possible ID raises
    "ERR invalid start ID for the interval".
    """
    if arg == b"-":  # by far the most common start
        return MIN_ID
    i, exclusive = _parse_interval(arg, 0)
    if exclusive:
        nxt = incr_id(i)
        if nxt is None:
            raise StreamError(INVALID_START)
        return nxt
    return i


def parse_range_end(arg: bytes) -> int:
    """Inclusive end ID (`ms` means `ms-18446744073709551615`); `(id` becomes id-1.

    `(0-0` raises "ERR invalid end ID for the interval".
    """
    if arg == b"+":  # by far the most common end
        return MAX_ID
    i, exclusive = _parse_interval(arg, U64)
    if exclusive:
        prev = decr_id(i)
        if prev is None:
            raise StreamError(INVALID_END)
        return prev
    return i


def parse_read_id(arg: bytes, *, group: bool) -> int | str:
    """An ID after STREAMS in XREAD (group=False) or XREADGROUP (group=True).

    Returns an int (entries strictly greater are wanted) or a sentinel: LAST for `$` (XREAD),
    LAST_ENTRY for `+` (XREAD), NEW for `>` (XREADGROUP). Resolve LAST / LAST_ENTRY with
    `Stream.resolve_read_id` (or 0-0 when the key does not exist). For XREADGROUP an explicit
    ID equal to the maximum ID behaves as `>` in Redis, so NEW is returned for it too.
    """
    if arg == b"$":
        if group:
            raise StreamError(XREADGROUP_DOLLAR)
        return LAST
    if arg == b"+":
        if group:
            raise StreamError(XREADGROUP_PLUS)
        return LAST_ENTRY
    if arg == b">":
        if not group:
            raise StreamError(XREAD_GT)
        return NEW
    i = parse_strict_id(arg)
    if group and i == MAX_ID:
        return NEW
    return i


def parse_group_id(arg: bytes, *, setid: bool = False) -> int | str:
    """The ID of XGROUP CREATE (setid=False: strict) or XGROUP SETID (setid=True: `-`/`+` allowed).

    Returns LAST for `$`; resolve it with the stream's `last_id` (0-0 for MKSTREAM on a new key).
    """
    if arg == b"$":
        return LAST
    return parse_id(arg) if setid else parse_strict_id(arg)
