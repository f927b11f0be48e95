"""Stream entries as RESP: every reply that carries entries is encoded here, and only here.

An entry replies as [id, [field, value, ...]], an array of bulk strings that reads the same in
RESP2 and RESP3; only a deleted entry's nil differs between them (see `entries_reply`).

Most entries are encoded straight from storage (`streams.storage.Run`: consecutive entries of
one node in their packed form) into the pieces of one join, without a Python object per entry:
the reply of XRANGE, XREVRANGE, XREAD and XREADGROUP is the largest a stream server sends, and
reading a backlog page by page is mostly this work. The pieces that repeat (an entry's head up
to its ID, a field name with the header of the value after it) are built once and reused.

Each entry's encoding here starts with the CRLF that ends the element before it, and leaves its
own last value unterminated: the array header is written without its CRLF and one CRLF closes
the reply, so that an entry is a few list appends whatever its position.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from protocol.encoder import BULK_HDR_CACHE
from protocol.reply import Raw
from streams.ids import SEQ_DIGITS
from streams.storage import read_len

if TYPE_CHECKING:
    from collections.abc import Sequence

    from streams.storage import Run

_U64: Final = (1 << 64) - 1

# "\r\n$<n>\r\n": the end of the previous element and the header of an n-byte bulk string.
_ITEM_HEADS: Final = [b"\r\n$%d\r\n" % n for n in range(1024)]
# "*<n>" without its CRLF: the header of a reply of n entries (the first entry brings the CRLF).
_COUNT_HEADS: Final = [b"*%d" % n for n in range(1024)]


class _Schema:
    """What the entries with one tuple of field names share: per field, "CRLF [array header]
    $<len>CRLF<name>CRLF" (the array header before the first name), and per field and value
    length under 128 that piece followed by the value's "$<len>CRLF", built when first used."""

    __slots__ = ("pieces", "heads")

    def __init__(self, names: tuple[bytes, ...]) -> None:
        pieces = [b"\r\n$%d\r\n%b\r\n" % (len(name), name) for name in names]
        if pieces:
            pieces[0] = b"\r\n*%d" % (2 * len(names)) + pieces[0]
        self.pieces = pieces
        self.heads: list[list[bytes]] = [[b""] * 128 for _ in names]


_SCHEMAS: dict[tuple[bytes, ...], _Schema] = {}


def _schema(names: tuple[bytes, ...]) -> _Schema:
    schema = _SCHEMAS.get(names)
    if schema is None:
        if len(_SCHEMAS) >= 1024:  # streams mostly repeat a few shapes: a bound, not an LRU
            _SCHEMAS.clear()
        schema = _SCHEMAS[names] = _Schema(names)
    return schema


def _item_head(n: int) -> bytes:
    return _ITEM_HEADS[n] if n < 1024 else b"\r\n$%d\r\n" % n


def append_run(parts: list[bytes], run: Run, reverse: bool = False,
               each: list[bytes] | None = None, tail: bytes = b"") -> None:
    """Append to `parts` the entries of `run`, from its last entry down in reverse. With `each`,
    each entry's encoding is joined and appended to `each` instead (`parts` is then scratch
    space, left empty), for a reader that keeps entries to reuse them. With `tail` (the encoded
    elements after the fields, XREADGROUP CLAIM's idle time and delivery count), each entry is
    a four-element array ending with it."""
    data: bytes = run.data
    base = run.base
    lo = run.lo
    hi = run.hi
    # Typed lists: indexing an array from compiled code is a generic call per item.
    msd: list[int] = run.msd[lo:hi].tolist()
    seq: list[int] = run.seq[lo:hi].tolist()
    offs: list[int] = run.offs[lo:hi].tolist()
    ms0 = run.ms0
    names = run.names
    schema = _schema(names)
    pieces = schema.pieces
    heads = schema.heads
    digits_table = SEQ_DIGITS
    n = hi - lo
    k = n - 1 if reverse else 0
    step = -1 if reverse else 1
    last_d = -1
    prefix = b""
    head = b""
    head_digits = -1
    shape = b"\r\n*4\r\n$%d\r\n%b" if tail else b"\r\n*2\r\n$%d\r\n%b"
    while 0 <= k < n:
        if tail and last_d >= 0:
            parts.append(tail)  # the end of the entry before
        if each is not None and parts:
            each.append(b"".join(parts))
            del parts[:]
        d = msd[k]
        s = seq[k]
        p = offs[k] - base
        k += step
        if d != last_d:
            # Consecutive entries mostly share their millisecond: its digits are formatted once.
            prefix = b"%d-" % (ms0 + d)
            last_d = d
            head_digits = -1
        digits = digits_table[s] if s < 4096 else b"%d" % s
        nd = len(digits)
        if nd != head_digits:
            head = shape % (len(prefix) + nd, prefix)
            head_digits = nd
        parts.append(head)
        parts.append(digits)
        count = data[p]
        p += 1
        if count == 0:  # the node's field names: only the values are stored
            mark = len(parts)
            q = p
            f = 0
            for row in heads:
                size = data[q]
                if size >= 0x80:  # a multi-byte length: the general path below
                    break
                q += 1
                h = row[size]
                if not len(h):
                    h = row[size] = pieces[f] + BULK_HDR_CACHE[size]
                parts.append(h)
                parts.append(data[q:q + size])
                q += size
                f += 1
            else:
                continue
            del parts[mark:]
            for piece in pieces:
                size = data[p]
                p += 1
                if size >= 0x80:
                    size, p = read_len(data, p - 1)
                parts.append(piece)
                parts.append(BULK_HDR_CACHE[size] if size < 1024 else b"$%d\r\n" % size)
                parts.append(data[p:p + size])
                p += size
            continue
        if count >= 0x80:
            count, p = read_len(data, p - 1)
        parts.append(b"\r\n*%d" % (2 * count))
        for _ in range(2 * count):
            size = data[p]
            p += 1
            if size >= 0x80:
                size, p = read_len(data, p - 1)
            parts.append(_item_head(size))
            parts.append(data[p:p + size])
            p += size
    if tail and last_d >= 0:
        parts.append(tail)
    if each is not None and parts:
        each.append(b"".join(parts))
        del parts[:]


def reply_start(n: int, prefix: bytes = b"") -> list[bytes]:
    """The pieces that start a reply of n entries after `prefix` (bytes already encoded, e.g. the
    arrays around one stream's entries in XREAD): append the entries (`append_run`, or pieces it
    made earlier), then `reply_end`."""
    return [prefix, _COUNT_HEADS[n] if n < 1024 else b"*%d" % n]


def reply_end(parts: list[bytes]) -> Raw:
    parts.append(b"\r\n")
    return Raw(b"".join(parts))


def runs_reply(runs: list[Run], reverse: bool = False, prefix: bytes = b"") -> Raw:
    """The entries of `runs` (`Stream.range_runs`, `Stream.runs_after`, what consumer-group
    delivery hands out) as one array, after `prefix` (bytes already encoded, e.g. the arrays
    around one stream's entries in an XREAD reply). In reverse the runs come last-first, as
    storage gives them, and each one is written from its last entry down."""
    n = 0
    for run in runs:
        n += run.hi - run.lo
    parts = reply_start(n, prefix)
    for run in runs:
        append_run(parts, run, reverse)
    return reply_end(parts)


def _append_entry(parts: list[bytes], eid: int, items: Sequence[bytes]) -> None:
    sid = b"%d-%d" % (eid >> 64, eid & _U64)
    parts.append(b"\r\n*2\r\n$%d\r\n%b\r\n*%d" % (len(sid), sid, len(items)))
    for item in items:
        parts.append(_item_head(len(item)))
        parts.append(item)


def entries_reply(entries: Sequence[tuple[int, list[bytes] | None]], deleted: Any = None) -> Any:
    """Decoded entries, [(id, [field, value, ...]), ...], as [[id, [field, value, ...]], ...].

    An entry whose fields are None (a pending entry deleted from the stream) replies `deleted`
    in their place, a nil whose encoding differs between RESP2 and RESP3: such a reply is left
    as lists for the connection's encoder.
    """
    parts = reply_start(len(entries))
    for eid, fields in entries:
        if fields is None:
            return [entry_reply(e, deleted if f is None else f) for e, f in entries]
        _append_entry(parts, eid, fields)
    return reply_end(parts)


def _append_claimed(parts: list[bytes], eid: int, items: Sequence[bytes], idle: int,
                    deliveries: int) -> None:
    sid = b"%d-%d" % (eid >> 64, eid & _U64)
    parts.append(b"\r\n*4\r\n$%d\r\n%b\r\n*%d" % (len(sid), sid, len(items)))
    for item in items:
        parts.append(_item_head(len(item)))
        parts.append(item)
    parts.append(b"\r\n:%d\r\n:%d" % (idle, deliveries))


_NEW_TAIL: Final = b"\r\n:0\r\n:0"  # a new entry's idle time and delivery count


def claim_reply(claimed: Sequence[tuple[int, list[bytes], int, int]], runs: list[Run]) -> Raw:
    """One stream's entries for XREADGROUP CLAIM: each as [id, [field, value, ...], idle ms,
    delivery count], integers in RESP2 and RESP3 alike. The claimed pending entries come first
    with the idle time and count they had before this delivery; the new entries (`runs`)
    follow with 0 and 0."""
    n = len(claimed)
    for run in runs:
        n += run.hi - run.lo
    parts = reply_start(n)
    for eid, fields, idle, deliveries in claimed:
        _append_claimed(parts, eid, fields, idle, deliveries)
    for run in runs:
        # New entries straight from storage, as runs_reply writes them, each closed by its zeros.
        append_run(parts, run, False, None, _NEW_TAIL)
    return reply_end(parts)


def entry_reply(eid: int, fields: Any) -> list[Any]:
    """One entry, [id, fields], for the connection's encoder (e.g. inside XINFO's maps)."""
    return [b"%d-%d" % (eid >> 64, eid & _U64), fields]


# The last three digits of a number of 1000 or more.
_LOW_DIGITS: Final = [b"%03d" % n for n in range(1000)]


def id_run_reply(first: int, count: int) -> bytes:
    """The replies of `count` XADDs that made the consecutive IDs first, first+1, ...: that many
    bulk strings "ms-seq", encoded in a few C-level joins."""
    ms = first >> 64
    seq = first & _U64
    if count == 1:
        # One XADD's ID (a producer choosing its IDs): the general path's tables cost more.
        sid = b"%d-%d" % (ms, seq)
        return b"$%d\r\n%b\r\n" % (len(sid), sid)
    end = seq + count
    if end > _U64 + 1:  # the sequence overflows into the next millisecond
        parts = []
        for eid in range(first, first + count):
            sid = b"%d-%d" % (eid >> 64, eid & _U64)
            parts.append(b"$%d\r\n%b\r\n" % (len(sid), sid))
        return b"".join(parts)
    head = b"%d-" % ms
    parts = []
    bound = 10
    while bound <= seq:
        bound *= 10
    table = len(SEQ_DIGITS)
    while seq < end and seq < table:
        # Sequence numbers with the same digit count share one bulk header.
        stop = min(min(end, bound), table)  # (3-argument min() is a generic call compiled)
        prefix = b"$%d\r\n%b" % (len(head) + len(SEQ_DIGITS[seq]), head)
        parts.append(prefix)
        parts.append((b"\r\n" + prefix).join(SEQ_DIGITS[seq:stop]))
        parts.append(b"\r\n")
        if stop == bound:
            bound *= 10
        seq = stop
    while seq < end:
        # Past the table (a transaction's many XADDs in one millisecond): the numbers of one
        # thousand share their leading digits, and the last three come from a table.
        high = seq // 1000
        low = seq - high * 1000
        stop = min(1000, low + end - seq)
        lead = b"%d" % high
        prefix = b"$%d\r\n%b%b" % (len(head) + len(lead) + 3, head, lead)
        parts.append(prefix)
        parts.append((b"\r\n" + prefix).join(_LOW_DIGITS[low:stop]))
        parts.append(b"\r\n")
        seq += stop - low
    return b"".join(parts)
