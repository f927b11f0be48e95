"""XREADGROUP: reading a stream through a consumer group, blocking when `>` finds nothing new.

A hot path (XREADGROUP + XACK is what consumers loop on), so the work per call is kept to the
argument scan, one key/group lookup per stream and the engine's read.

A blocked XREADGROUP is re-run in full whenever one of its keys is signalled, as Redis 7.4 does
(blocked.c reprocesses the command; see server/blocking.py): so a deleted or flushed key or a
destroyed group ends the wait with the command's own NOGROUP error, a key that changed type with
WRONGTYPE, and a re-run that finds nothing new leaves the client waiting.

CLAIM min-idle-time (Redis 8.4) makes a `>` read serve, before new entries, the group's pending
entries released by XNACK and those idle at least that long, each with its idle time and
delivery count (protocol/stream_resp.claim_reply). An entry becoming idle enough is a moment,
not a write: like Redis (which keeps the earliest such moment per key), a blocked CLAIM reader
is re-run when the first pending entry of its streams crosses min-idle-time, and on writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.encoder import BULK_HDR_CACHE
from protocol.numbers import parse_int
from protocol.reply import NULL_ARRAY, ErrorReply, Raw
from protocol.stream_resp import claim_reply, entries_reply, runs_reply
from server.blocking import Block
from server.command_table import command, streams_key_spec
from server.commands.block_timeout import parse_timeout_ms
from server.commands.stream_common import SYNTAX_ERROR
from server.commands.stream_propagate import (
    claim_effect,
    consumer_effect,
    position_effect,
    propagate_deliveries,
)
from server.commands.streams_read import (
    MAXCOUNT_ARG,
    MAXCOUNT_BELOW_COUNT,
    MAXCOUNT_NOT_POSITIVE,
    MAXSIZE_ARG,
    MAXSIZE_NOT_POSITIVE,
    ReplyBudget,
    parse_limit,
    xread_key_positions,
    xread_reply,
)
from server.keyspace import now_ms
from server.notify import NOTIFY_STREAM, notify_keyspace_event
from streams import NEW, Consumer, ConsumerGroup, Stream, format_id, nogroup_xreadgroup, parse_read_id

if TYPE_CHECKING:
    from server.connection import Client
    from server.keyspace import Database
    from streams.groups import Consumer

_UNBALANCED = ErrorReply("ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or "
                         "'>' must be specified.")
_MISSING_GROUP = ErrorReply("ERR Missing GROUP option for XREADGROUP")
_CLAIM_MIN_IDLE = ErrorReply("ERR Invalid min-idle-time argument for XREADGROUP")


def _read(client: Client, db: Database, keys: list[bytes], id_args: list[bytes], group: bytes,
          consumer: bytes, count: int | None, noack: bool,
          claim: int = -1, budget: ReplyBudget | None = None,
          whole: bytes = b"") -> list[tuple[bytes, Any]]:
    """Check every key and ID (in Redis's order: type, group, ID — key by key), then serve:
    history reads always appear in the reply, `>` reads only when they deliver something.
    `claim` >= 0 is CLAIM's min-idle-time (a `>` read claims idle pending entries first).

    `whole`, for a RESP2 read of one stream: the reply's bytes before the entries. A `>` read
    then serves its entries as the complete reply (`_Whole`), written once, where wrapping
    them afterwards would copy them again."""
    targets: list[tuple[bytes, Stream, ConsumerGroup, Any]] = []
    for j in range(len(keys)):  # not zip(): compiled, that is a generic call
        key = keys[j]
        arg = id_args[j]
        s: Stream | None = db.read_typed(key, Stream)
        g = None if s is None else s.groups.get(group)
        if s is None or g is None:
            raise nogroup_xreadgroup(key, group)
        targets.append((key, s, g, NEW if arg == b">" else parse_read_id(arg, group=True)))
    now = now_ms()
    served: list[tuple[bytes, Any]] = []  # per key: entries, or their reply pre-encoded (Raw)
    dirty = 0
    logging = client.effects.active
    limit = count
    for key, s, g, spec in targets:
        if budget is not None and budget.exhausted():
            break  # MAXCOUNT / MAXSIZE spent: the streams after are not read, nor touched
        # Consumers are created (and their seen-time set) even when nothing is served, so a
        # blocking reader shows up in XINFO CONSUMERS while it waits, as in Redis.
        c, created = g.touch_consumer(consumer, now)
        if created:
            dirty += 1
            notify_keyspace_event(client, NOTIFY_STREAM, b"xgroup-createconsumer", key,
                                  client.db.index)
            if logging:
                client.propagate(consumer_effect(key, g, consumer))
        if budget is not None and claim < 0:
            limit = _budget_limit(budget, key, s, g, c, spec, count)
            if limit == 0:
                served.append((key, []))
                continue
        elif budget is not None:
            # With CLAIM, MAXCOUNT caps claimed and new entries together (MAXSIZE is not
            # measured on CLAIM reads).
            limit = budget.cap(count)
        if spec is NEW and claim >= 0:
            changed, n = _claim_and_read(client, key, s, g, c, limit, noack, claim, now, served)
            if changed:
                dirty += 1
            if budget is not None:
                budget.emitted += n
        elif spec is NEW:
            runs, eids = g.deliver_new(s, c, limit, noack, now)
            if eids:
                if whole:
                    served.append((key, _Whole(runs_reply(runs, False, whole))))
                else:
                    served.append((key, runs_reply(runs)))
                dirty += 1
                if logging:
                    if not noack:
                        propagate_deliveries(client, key, g, eids)
                    client.propagate(position_effect(key, g))
        else:
            # A pending entry deleted from the stream comes with a null array for its fields.
            history = g.read_history(s, c, spec, limit, now)
            served.append((key, entries_reply(history, NULL_ARRAY)))
            if logging and history:
                # Delivery counts and times moved on: log them, or a restart would lose them.
                propagate_deliveries(client, key, g,
                                     [eid for eid, fields in history if fields is not None])
    if dirty:
        client.keyspace.dirty += dirty
    return served


class _Whole:
    """A complete XREADGROUP reply, already encoded (see `_read`'s `whole`)."""

    __slots__ = ("reply",)

    def __init__(self, reply: Raw) -> None:
        self.reply = reply


def _claim_and_read(client: Client, key: bytes, s: Stream, g: ConsumerGroup, c: Consumer,
                    count: int | None, noack: bool, min_idle: int, now: int,
                    served: list[tuple[bytes, Any]]) -> tuple[bool, int]:
    """A `>` read with CLAIM: idle pending entries first (NOACK does not apply to them: they
    stay pending, now for this consumer), then new ones up to COUNT in all. Whether the group
    changed, and how many entries were served."""
    dropped: list[int] = []
    claimed = g.claim_idle(s, c, min_idle, count, now, dropped)
    runs: list[Any] = []
    eids: list[int] = []
    if count is None or len(claimed) < count:
        runs, eids = g.deliver_new(s, c, None if count is None else count - len(claimed), noack,
                                   now)
    if claimed or eids:
        served.append((key, claim_reply(claimed, runs)))
    if client.effects.active:
        for eid in dropped:
            # A pending record of a deleted entry is let go, as XCLAIM lets it go: an XACK.
            client.propagate([b"XACK", key, g.name, format_id(eid)])
        for entry in claimed:
            client.propagate(claim_effect(key, g, entry[0]))
        if eids:
            if not noack:
                propagate_deliveries(client, key, g, eids)
            client.propagate(position_effect(key, g))
    return bool(claimed or eids or dropped), len(claimed) + len(eids)


def _ms_until_claimable(db: Database, keys: list[bytes], id_args: list[bytes], group: bytes,
                        min_idle: int) -> int:
    """When a blocked CLAIM reader must re-run although no key is written: in how many ms the
    first pending entry of its `>` streams will have been idle min_idle ms (0: none pending).
    A re-run that then finds nothing claimable (the entry was acknowledged or claimed meanwhile)
    blocks again with the next such moment."""
    first: int | None = None
    for j in range(len(keys)):
        if id_args[j] != b">":
            continue
        s: Stream | None = db.get_typed(keys[j], Stream)
        g = None if s is None else s.groups.get(group)
        if g is None:
            continue
        t = g.next_claimable(min_idle)
        if t is not None and (first is None or t < first):
            first = t
    if first is None:
        return 0
    # One millisecond more: the wall clock and the loop's clock need not tick together, and a
    # re-run a little early would only block again.
    return max(first - now_ms() + 1, 1)


def _budget_limit(budget: ReplyBudget, key: bytes, s: Stream, g: ConsumerGroup, c: Consumer,
                  spec: Any, count: int | None) -> int | None:
    """How many entries this stream may send under MAXCOUNT / MAXSIZE (spent now; None: no
    limit). 0 only when nothing may be sent although the stream is in the reply: a history read,
    or the key written before MAXSIZE was found reached (Redis sends the key then too)."""
    limit = budget.cap(count)
    if spec is NEW:
        if s.last_id <= g.last_id or not s.runs_after(g.last_id, 1):
            return limit  # nothing new: no entry, no key
        budget.open_stream(key)
        return budget.take_after(s, g.last_id, limit)
    budget.open_stream(key)
    return budget.take_history(g, s, c, spec, limit)


@command("xreadgroup", -7, "write blocking", group="stream", since="5.0.0",
         summary="Returns new or historical messages from a stream for a consumer in a group. "
         "Blocks until a message is available otherwise.",
         complexity="For each stream mentioned: O(M) with M being the number of elements returned. "
         "If M is constant (e.g. always asking for the first 10 elements with COUNT), you can "
         "consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time "
         "in order to serve the N clients blocked on the stream getting new data.",
         key_finder=xread_key_positions,
         key_specs=streams_key_spec(4, "Incomplete because a consumer/group named STREAMS (or "
                                    "options before GROUP) can shift the STREAMS keyword; fall "
                                    "back to xreadGetKeys"),
         history=(("8.4.0", "Added the `CLAIM` option."),
                  ("8.10.0", "Added the `MAXCOUNT` and `MAXSIZE` options.")),
         arguments=(
             {"token": "GROUP", "name": "group-block", "type": "block", "arguments": (
                 {"name": "group", "type": "string"}, {"name": "consumer", "type": "string"})},
             {"token": "COUNT", "name": "count", "type": "integer", "optional": True},
             MAXCOUNT_ARG,
             MAXSIZE_ARG,
             {"token": "BLOCK", "name": "milliseconds", "type": "integer", "optional": True},
             {"token": "CLAIM", "name": "min-idle-time", "type": "integer", "optional": True},
             {"name": "noack", "token": "NOACK", "type": "pure-token", "optional": True},
             {"name": "streams", "token": "STREAMS", "type": "block", "arguments": (
                 {"name": "key", "type": "key", "key_spec_index": 0, "multiple": True},
                 {"name": "ID", "type": "string", "multiple": True})},
         ))
def xreadgroup(client: Client, argv: list[bytes]) -> Any:
    argc = len(argv)
    timeout = -1  # no BLOCK
    count = 0
    maxcount = maxsize = 0
    noack = False
    claim = -1
    group = consumer = None
    streams_at = 0
    i = 1
    while i < argc:
        opt = argv[i].lower()
        more = argc - i - 1
        if opt == b"group" and more >= 2:
            group = argv[i + 1]
            consumer = argv[i + 2]
            i += 2
        elif opt == b"count" and more:
            i += 1
            count = parse_int(argv[i])
            if count < 0:
                count = 0
        elif opt == b"block" and more:
            i += 1
            timeout = parse_timeout_ms(argv[i])
        elif opt == b"streams" and more:
            streams_at = i + 1
            if (argc - streams_at) & 1:
                raise _UNBALANCED
            break
        elif opt == b"maxcount" and more:
            i += 1
            maxcount = parse_limit(argv[i], MAXCOUNT_NOT_POSITIVE)
        elif opt == b"maxsize" and more:
            i += 1
            maxsize = parse_limit(argv[i], MAXSIZE_NOT_POSITIVE)
        elif opt == b"noack":
            noack = True
        elif opt == b"claim" and more:
            i += 1
            claim = parse_int(argv[i], _CLAIM_MIN_IDLE)
            if claim < 0:
                raise _CLAIM_MIN_IDLE
        else:
            raise SYNTAX_ERROR
        i += 1
    if not streams_at:
        raise SYNTAX_ERROR
    if group is None or consumer is None:
        raise _MISSING_GROUP
    if maxcount and maxcount < count:
        raise MAXCOUNT_BELOW_COUNT
    n = (argc - streams_at) >> 1
    keys = argv[streams_at:streams_at + n]
    id_args = argv[streams_at + n:]
    db = client.db
    limit = count or None
    budget = ReplyBudget(maxcount, maxsize, client.resp3) if maxcount or maxsize else None
    whole = b""
    if n == 1 and not client.resp3:
        key = keys[0]
        size = len(key)
        # Concatenated: cheaper than a format, which the read may not even use.
        whole = (b"*1\r\n*2\r\n" + (BULK_HDR_CACHE[size] if size < 1024 else b"$%d\r\n" % size)
                 + key + b"\r\n")
    served = _read(client, db, keys, id_args, group, consumer, limit, noack, claim, budget, whole)
    if served:
        entries = served[0][1]
        if type(entries) is _Whole:
            return entries.reply
        return xread_reply(client, served)
    if timeout < 0:
        return NULL_ARRAY
    recheck = _ms_until_claimable(db, keys, id_args, group, claim) if claim >= 0 else 0
    # Only `>` reads get here (a history read is always served), so waiting makes sense. Any
    # change of a key re-runs it, a deletion or a new type too: then it fails as it would now.
    return Block(keys, timeout, NULL_ARRAY, None, Stream, True, recheck)
