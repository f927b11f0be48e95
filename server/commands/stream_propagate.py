"""The effect form of consumer-group changes: commands that recreate the exact state.

An XADD with `*` is logged as the XADD with the ID it got; a run of them (a producer's pipeline)
is encoded here straight into the RESP of those XADDs, one bytes object for the run, reusing
the bytes each call was received as where the parser kept them.

Deliveries and claims depend on the clock and on who asked first, so they are logged as their
effect, as Redis propagates them: each pending record as an XCLAIM that sets its owner, delivery
time and delivery count (FORCE JUSTID), a record released by XNACK as the XNACK that releases it
with its count (RETRYCOUNT ... FORCE), the group's position as XGROUP SETID ... ENTRIESREAD, and
consumers as XGROUP CREATECONSUMER. An AOF rewrite writes pending records the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from protocol.parser import Received
from server.effects import ARRAY_HEADERS, BULK_HEADERS
from streams.ids import SEQ_DIGITS, U64, format_id

if TYPE_CHECKING:
    from server.connection import Client
    from streams.groups import ConsumerGroup, PendingEntry


def pending_effect(key: bytes, group: bytes, eid: int, pe: PendingEntry) -> list[bytes]:
    """The XCLAIM that recreates pending record eid of group as it is (owner, time, count)."""
    assert pe.consumer is not None
    return [b"XCLAIM", key, group, pe.consumer.name, b"0", format_id(eid),
            b"TIME", b"%d" % pe.delivery_time, b"RETRYCOUNT", b"%d" % pe.delivery_count,
            b"FORCE", b"JUSTID"]


def nack_effect(key: bytes, group: bytes, eid: int, pe: PendingEntry) -> list[bytes]:
    """The XNACK that recreates released record eid (no owner) with its delivery count, at the
    end of the group's released records: replayed in release order, they keep that order."""
    return [b"XNACK", key, group, b"FAIL", b"IDS", b"1", format_id(eid),
            b"RETRYCOUNT", b"%d" % pe.delivery_count, b"FORCE"]


def claim_effect(key: bytes, group: ConsumerGroup, eid: int) -> list[bytes]:
    pe = group.pel[eid]
    if pe.consumer is None:
        return nack_effect(key, group.name, eid, pe)
    return pending_effect(key, group.name, eid, pe)


def position_effect(key: bytes, group: ConsumerGroup) -> list[bytes]:
    entries_read = -1 if group.entries_read is None else group.entries_read
    return [b"XGROUP", b"SETID", key, group.name, format_id(group.last_id),
            b"ENTRIESREAD", b"%d" % entries_read]


def consumer_effect(key: bytes, group: ConsumerGroup, consumer: bytes) -> list[bytes]:
    return [b"XGROUP", b"CREATECONSUMER", key, group.name, consumer]


def propagate_deliveries(client: Client, key: bytes, group: ConsumerGroup,
                         ids: Iterable[int]) -> None:
    """Log each delivered ID as the pending record the delivery left."""
    for eid in ids:
        client.propagate(claim_effect(key, group, eid))


# Sequence numbers spelled in advance (streams.ids.SEQ_DIGITS).
_SEQ_SPELLED: Final = 4096
# An argument's header with the CRLF that ends the argument before it, as one piece.
_NEXT_BULK: Final = [b"\r\n$%d\r\n" % n for n in range(1024)]


def xadd_run_effect(key: bytes, first: int, commands: list[list[bytes]], start: int,
                    count: int) -> bytes:
    """The RESP of `XADD key <id> field value ...` for the count calls commands[start:] (`XADD
    key * ...`), which got the consecutive IDs first, first + 1, ...: the same bytes as encoding
    each call's effect argv, built without an argv per call. What repeats is joined ahead, once
    per change: the CRLF ending a call with the next one's header, name and key; an ID's header
    with its milliseconds; an argument's header with the CRLF ending the one before."""
    head = b"$4\r\nXADD\r\n$%d\r\n%b\r\n" % (len(key), key)
    parts: list[bytes] = []
    argc = -1
    call_head = b""  # CRLF, "*<argc>\r\n" and head
    ms = -1
    prefix = b""
    id_digits = -1
    id_head = b""  # the ID's header and "<ms>-"
    eid = first
    for j in range(start, start + count):
        argv = commands[j]
        n = len(argv)
        if n != argc:
            argc = n
            call_head = b"\r\n" + (ARRAY_HEADERS[n] if n < 64 else b"*%d\r\n" % n) + head
        parts.append(call_head)
        if eid >> 64 != ms:  # a sequence that overflowed carries into the milliseconds
            ms = eid >> 64
            prefix = b"%d-" % ms
            id_digits = -1
        seq = eid & U64
        digits = SEQ_DIGITS[seq] if seq < len(SEQ_DIGITS) else b"%d" % seq
        if len(digits) != id_digits:
            id_digits = len(digits)
            id_head = BULK_HEADERS[len(prefix) + id_digits] + prefix
        parts.append(id_head)
        parts.append(digits)
        for i in range(3, n):
            arg = argv[i]
            m = len(arg)
            parts.append(_NEXT_BULK[m] if m < 1024 else b"\r\n$%d\r\n" % m)
            parts.append(arg)
        eid += 1
    if not parts:
        return b""
    parts[0] = parts[0][2:]  # the first call ends nothing before it
    parts.append(b"\r\n")
    return b"".join(parts)


def xadd_run_effect_received(key: bytes, first: int, commands: list[list[bytes]], start: int,
                             count: int, received: Received) -> bytes:
    """xadd_run_effect, the same bytes, for calls received as canonical RESP (`received`
    holds commands[start:start + count], see Received): what follows each call's `*`, from the
    CRLF that ends it to the call's end, is already the encoding of its fields and is taken
    whole, one slice per call, instead of two parts per field."""
    at = received.start(commands, start, count)
    if at < 0:
        return xadd_run_effect(key, first, commands, start, count)
    buf = received.buf
    # A call's bytes up to the CRLF after its `*`: its header, name, key and `$1\r\n*`.
    name = commands[start][0]
    before_id = len(BULK_HEADERS[len(name)]) + len(name) + 2 + len(key) + 2 + 5
    before_id += len(BULK_HEADERS[len(key)]) if len(key) < 1024 else len(b"$%d\r\n" % len(key))
    head = b"$4\r\nXADD\r\n$%d\r\n%b\r\n" % (len(key), key)
    parts: list[bytes] = []
    argc = -1
    skip = 0
    call_head = b""  # "*<argc>\r\n" and head
    # The ID in two parts, so that the loop counts in small integers: IDs are 128-bit.
    ms = first >> 64
    seq = first & U64
    prefix = b"%d-" % ms
    id_digits = -1
    id_head = b""  # call_head, the ID's header and "<ms>-"
    for j in range(start, start + count):
        argv = commands[j]
        n = len(argv)
        if n != argc:
            argc = n
            call_head = (ARRAY_HEADERS[n] if n < 64 else b"*%d\r\n" % n) + head
            skip = len(call_head) - len(head) + before_id
            id_digits = -1
        if seq < _SEQ_SPELLED:
            digits = SEQ_DIGITS[seq]
        else:
            if seq > U64:  # a sequence that overflowed carries into the milliseconds
                ms += 1
                seq = 0
                prefix = b"%d-" % ms
                id_digits = -1
            digits = b"%d" % seq
        if len(digits) != id_digits:
            id_digits = len(digits)
            id_head = call_head + BULK_HEADERS[len(prefix) + id_digits] + prefix
        parts.append(id_head)
        parts.append(digits)
        # The call ends after its fields: `$<len>\r\n<field>\r\n` each.
        end = at + skip + 2
        for i in range(3, n):
            m = len(argv[i])
            end += 5 + m + (1 if m < 10 else 2 if m < 100 else len(b"%d" % m))
        parts.append(buf[at + skip:end])
        at = end
        seq += 1
    return b"".join(parts)
