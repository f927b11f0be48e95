"""A stream as the commands that recreate it (the AOF rewrite and SAVE).

Streams are rebuilt as Redis's own rewrite does: the entries with XADD, the metadata with XSETID,
groups with XGROUP CREATE ... ENTRIESREAD, consumers with XGROUP CREATECONSUMER and each pending
entry with an XCLAIM that restores its owner, delivery time and delivery count, or, for one
released by XNACK, the XNACK that releases it again. A stream that uses idempotent producers (or
has IDMP settings other than the defaults) also gets the Redis 8 commands for them: XCFGSET with
its settings, and an XIDMPRECORD per remembered (producer, idempotent ID) pair, oldest first,
which recreates the pair with its expiry (a pair's age is its entry ID's).
"""

from __future__ import annotations

from collections.abc import Iterator

from server.commands.stream_propagate import nack_effect, pending_effect
from server.keyspace import now_ms
from streams import Stream
from streams.idempotency import DEFAULT_DURATION, DEFAULT_MAXSIZE
from streams.ids import format_id

Command = list[bytes]


def _num(n: int) -> bytes:
    return b"%d" % n


def stream_commands(key: bytes, stream: Stream) -> Iterator[Command]:
    last = None
    for eid, fields in stream.range():
        yield [b"XADD", key, format_id(eid), *fields]
        last = eid
    if last is None:
        # An empty stream still exists: create it with an entry trimmed away at once.
        yield [b"XADD", key, b"MAXLEN", b"0", b"0-1", b"x", b"y"]
    yield [b"XSETID", key, format_id(stream.last_id), b"ENTRIESADDED", _num(stream.entries_added),
           b"MAXDELETEDID", format_id(stream.max_deleted_id)]
    yield from _idmp_commands(key, stream)
    for group in stream.iter_groups():
        entries_read = -1 if group.entries_read is None else group.entries_read
        yield [b"XGROUP", b"CREATE", key, group.name, format_id(group.last_id),
               b"ENTRIESREAD", _num(entries_read)]
        for name in group.consumers:
            yield [b"XGROUP", b"CREATECONSUMER", key, group.name, name]
        for eid, pe in group.pel.items():
            if pe.consumer is None or not stream.contains(eid):
                # Redis cannot recreate a pending record whose entry was deleted (XCLAIM needs
                # the entry), and neither can its own rewrite: such records are dropped.
                continue
            yield pending_effect(key, group.name, eid, pe)
        for eid in group.nacked:
            # Records released by XNACK, in release order (the order CLAIM serves them in).
            if stream.contains(eid):
                yield nack_effect(key, group.name, eid, group.pel[eid])


def _idmp_commands(key: bytes, stream: Stream) -> Iterator[Command]:
    idmp = stream.idmp
    if idmp.duration != DEFAULT_DURATION or idmp.maxsize != DEFAULT_MAXSIZE or idmp.producers:
        yield [b"XCFGSET", key, b"IDMP-DURATION", _num(idmp.duration),
               b"IDMP-MAXSIZE", _num(idmp.maxsize)]
    for pid, iid, eid in idmp.pairs(now_ms()):
        # XIDMPRECORD needs the entry: a pair whose entry was deleted or trimmed cannot be
        # written as a command Redis accepts, so it is dropped (its producer retrying would add
        # the entry again, as after the pair expires).
        if stream.contains(eid):
            yield [b"XIDMPRECORD", key, pid, iid, format_id(eid)]
