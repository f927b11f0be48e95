"""XREADGROUP: reading a stream through a consumer group, blocking when `>` finds nothing new.

A hot path (XREADGROUP + XACK is what consumers loop on), so the work per call is kept to the
argument scan, one key/group lookup per stream and the engine's read.

A blocked XREADGROUP is re-run in full whenever one of its keys is signalled, as Redis 7.4 does
(blocked.c reprocesses the command; see server/blocking.py): so a deleted or flushed key or a
destroyed group ends the wait with the command's own NOGROUP error, a key that changed type with
WRONGTYPE, and a re-run that finds nothing new leaves the client waiting.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.numbers import parse_int
from protocol.reply import NULL_ARRAY, ErrorReply
from protocol.stream_resp import entries_reply, runs_reply
from server.blocking import Block
from server.command_table import command, streams_key_spec
from server.commands.stream_common import SYNTAX_ERROR
from server.commands.stream_propagate import consumer_effect, position_effect, propagate_deliveries
from server.commands.streams_read import (
    MAXCOUNT_ARG,
    MAXCOUNT_BELOW_COUNT,
    MAXCOUNT_NOT_POSITIVE,
    MAXSIZE_ARG,
    MAXSIZE_NOT_POSITIVE,
    ReplyBudget,
    parse_block_timeout,
    parse_limit,
    xread_key_positions,
    xread_reply,
)
from server.keyspace import now_ms
from streams import NEW, Consumer, ConsumerGroup, Stream, nogroup_xreadgroup, parse_read_id

if TYPE_CHECKING:
    from server.connection import Client
    from server.keyspace import Database

_UNBALANCED = ErrorReply("ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or "
                         "'>' must be specified.")
_MISSING_GROUP = ErrorReply("ERR Missing GROUP option for XREADGROUP")


def _read(client: Client, db: Database, keys: list[bytes], id_args: list[bytes], group: bytes,
          consumer: bytes, count: int | None, noack: bool,
          budget: ReplyBudget | None = None) -> list[tuple[bytes, Any]]:
    """Check every key and ID (in Redis's order: type, group, ID — key by key), then serve:
    history reads always appear in the reply, `>` reads only when they deliver something."""
    targets: list[tuple[bytes, Stream, ConsumerGroup, Any]] = []
    for j in range(len(keys)):  # not zip(): compiled, that is a generic call
        key = keys[j]
        arg = id_args[j]
        s: Stream | None = db.get_typed(key, Stream)
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
            if logging:
                client.propagate(consumer_effect(key, g, consumer))
        if budget is not None:
            limit = _budget_limit(budget, key, s, g, c, spec, count)
            if limit == 0:
                served.append((key, []))
                continue
        if spec is NEW:
            runs, eids = g.deliver_new(s, c, limit, noack, now)
            if eids:
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
         history=(("8.10.0", "Added the `MAXCOUNT` and `MAXSIZE` options."),),
         arguments=(
             {"token": "GROUP", "name": "group-block", "type": "block", "arguments": (
                 {"name": "group", "type": "string"}, {"name": "consumer", "type": "string"})},
             {"token": "COUNT", "name": "count", "type": "integer", "optional": True},
             MAXCOUNT_ARG,
             MAXSIZE_ARG,
             {"token": "BLOCK", "name": "milliseconds", "type": "integer", "optional": True},
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
            timeout = parse_block_timeout(argv[i])
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
    served = _read(client, db, keys, id_args, group, consumer, limit, noack, budget)
    if served:
        return xread_reply(client, served)
    if timeout < 0:
        return NULL_ARRAY
    # Only `>` reads get here (a history read is always served), so waiting makes sense. Any
    # change of a key re-runs it, a deletion or a new type too: then it fails as it would now.
    return Block(keys, timeout, NULL_ARRAY, None, Stream, True)
