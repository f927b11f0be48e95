"""LCS: the longest common subsequence of two strings, its length, or its matching ranges.

Redis fills the whole (len(a)+1) x (len(b)+1) table of LCS lengths and walks it back from the
end; the ranges it reports depend on that walk's tie rule, so this module walks the same table.
It keeps the table as bit vectors (Hyyro's bit-parallel LCS): with one row per prefix of `a`,
bit j of row i is set when LCS(i, j+1) == LCS(i, j), so LCS(i, j) = j - popcount(row_i &
(2**j - 1)). Each row costs a few big-int operations, not len(b) Python steps, and the rows take
1/32 of the memory of Redis's uint32 table. LCS is symmetric, so the vectors run along the longer
string, one per prefix of the shorter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.numbers import parse_int
from protocol.reply import ErrorReply
from server.command_table import command, key_spec

if TYPE_CHECKING:
    from server.connection import Client

SYNTAX_ERROR = ErrorReply("ERR syntax error")
_NOT_STRINGS = ErrorReply("ERR The specified keys must contain string values")
_LEN_AND_IDX = ErrorReply("ERR If you want both the length and indexes, please just use IDX.")
_TOO_LONG = ErrorReply("ERR String too long for LCS")
_TABLE_TOO_BIG = ErrorReply(
    "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
_UINT32_MAX = (1 << 32) - 1
_ZERO_ONE = [bytes([0x31 if i == c else 0x30 for i in range(256)]) for c in range(256)]  # "1"/"0"


def _match_masks(b: bytes, wanted: set[int]) -> dict[int, int]:
    """For each byte value in b and in `wanted`, the int whose bit j is set where b[j] is it."""
    return {c: int(b.translate(_ZERO_ONE[c])[::-1], 2) for c in set(b) & wanted}


def lcs_rows(a: bytes, b: bytes, keep: bool) -> list[int]:
    """Rows 0..len(a) of the table in bit-vector form (only the last one unless `keep`)."""
    full = (1 << len(b)) - 1
    masks = _match_masks(b, set(a)) if b else {}
    row = full
    rows = [row]
    for ch in a:
        matched = row & masks.get(ch, 0)
        row = ((row + matched) | (row - matched)) & full
        if keep:
            rows.append(row)
    if not keep:
        rows = [row]
    return rows


class _Prefix:
    """Prefix popcounts of one bit vector, cheap to move a few bits at a time (as the walk back
    does) through a byte copy of the vector; a jump recounts with int operations."""

    __slots__ = ("bits", "data", "pos", "count")

    def __init__(self, bits: int, nbytes: int) -> None:
        self.bits = bits
        self.data = bits.to_bytes(nbytes, "little")
        self.pos = 0
        self.count = 0  # popcount of the bits below pos

    def at(self, s: int) -> int:
        pos = self.pos
        data = self.data
        if pos - 64 <= s < pos:
            count = self.count
            for k in range(s, pos):
                count -= (data[k >> 3] >> (k & 7)) & 1
        elif pos <= s <= pos + 64:
            count = self.count
            for k in range(pos, s):
                count += (data[k >> 3] >> (k & 7)) & 1
        else:
            count = (self.bits & ((1 << s) - 1)).bit_count()
        self.pos = s
        self.count = count
        return count


class LcsTable:
    """LCS(i, j), the LCS length of a[:i] and b[:j], from bit vectors along the longer string,
    one per prefix of the shorter: the Python-level loop runs over the shorter string, and the
    vectors take (shorter + 1) * longer bits."""

    def __init__(self, a: bytes, b: bytes, keep: bool) -> None:
        self.by_rows = len(a) <= len(b)  # vectors along b, one per prefix of a
        short, long = (a, b) if self.by_rows else (b, a)
        self.vectors = lcs_rows(short, long, keep)
        self.width = len(long)
        self.nbytes = (len(long) >> 3) + 1
        self.prefixes: dict[int, _Prefix] = {}

    def total(self) -> int:
        return self.width - self.vectors[-1].bit_count()

    def length(self, i: int, j: int) -> int:
        t, s = (i, j) if self.by_rows else (j, i)
        prefix = self.prefixes.get(t)
        if prefix is None:
            prefix = _Prefix(self.vectors[t], self.nbytes)
            # The walk back only goes to lower vectors: forget those it has left.
            for done in [k for k in self.prefixes if k > t + 1]:
                del self.prefixes[done]
            self.prefixes[t] = prefix
        return s - prefix.at(s)


def _value(client: Client, key: bytes) -> bytes | None:
    value = client.db.read(key)
    if value is not None and type(value) is not bytes:
        raise _NOT_STRINGS
    return value


@command("lcs", -3, "readonly", keys=(1, 2, 1), group="string", since="7.0.0",
         summary="Finds the longest common substring.",
         complexity="O(N*M) where N and M are the lengths of s1 and s2, respectively",
         key_specs=key_spec(("RO", "ACCESS"), last=1),
         arguments=({"name": "key1", "type": "key", "key_spec_index": 0},
                    {"name": "key2", "type": "key", "key_spec_index": 0},
                    {"name": "len", "token": "LEN", "type": "pure-token", "optional": True},
                    {"name": "idx", "token": "IDX", "type": "pure-token", "optional": True},
                    {"token": "MINMATCHLEN", "name": "min-match-len", "type": "integer",
                     "optional": True},
                    {"name": "withmatchlen", "token": "WITHMATCHLEN", "type": "pure-token",
                     "optional": True}))
def lcs(client: Client, argv: list[bytes]) -> Any:
    # Both keys are looked up (and type-checked, with LCS's own error) before the options.
    first = _value(client, argv[1])
    second = _value(client, argv[2])
    a = b"" if first is None else first
    b = b"" if second is None else second
    get_len = get_idx = with_match_len = False
    min_match_len = 0
    argc = len(argv)
    j = 3
    while j < argc:
        opt = argv[j].lower()
        if opt == b"idx":
            get_idx = True
        elif opt == b"len":
            get_len = True
        elif opt == b"withmatchlen":
            with_match_len = True
        elif opt == b"minmatchlen" and j + 1 < argc:
            min_match_len = max(parse_int(argv[j + 1]), 0)
            j += 1
        else:
            raise SYNTAX_ERROR
        j += 1
    if get_len and get_idx:
        raise _LEN_AND_IDX
    alen, blen = len(a), len(b)
    if alen >= _UINT32_MAX - 1 or blen >= _UINT32_MAX - 1:
        raise _TOO_LONG
    # Redis refuses a table (uint32 cells) larger than proto-max-bulk-len; so does this.
    if (alen + 1) * (blen + 1) * 4 > client.server.config["proto-max-bulk-len"]:
        raise _TABLE_TOO_BIG
    walk = get_idx or not get_len
    table = LcsTable(a, b, keep=walk)
    total = table.total()
    if not walk:
        return total

    result = bytearray(total)
    idx = total
    matches: list[list[Any]] = []
    # a_start == alen means no range is open.
    a_start, a_end, b_start, b_end = alen, 0, 0, 0
    i, j = alen, blen
    while i > 0 and j > 0:
        emit = False
        if a[i - 1] == b[j - 1]:
            result[idx - 1] = a[i - 1]
            if a_start == alen:
                a_start = a_end = i - 1
                b_start = b_end = j - 1
            elif a_start == i and b_start == j:
                a_start -= 1
                b_start -= 1
            else:
                emit = True
            if a_start == 0 or b_start == 0:
                emit = True
            idx -= 1
            i -= 1
            j -= 1
        else:
            # Up when the row above has the longer LCS, else left (ties go left), as Redis.
            if table.length(i - 1, j) > table.length(i, j - 1):
                i -= 1
            else:
                j -= 1
            if a_start != alen:
                emit = True
        if emit:
            match_len = a_end - a_start + 1
            if get_idx and (min_match_len == 0 or match_len >= min_match_len):
                match: list[Any] = [[a_start, a_end], [b_start, b_end]]
                if with_match_len:
                    match.append(match_len)
                matches.append(match)
            a_start = alen
    if get_idx:
        return {b"matches": matches, b"len": total}
    return bytes(result)
