"""Consumer-group management commands: XGROUP (CREATE, SETID, DESTROY, CREATECONSUMER,
DELCONSUMER, HELP), XACK, XPENDING, XCLAIM, XAUTOCLAIM and XNACK.

Reading through a group (XREADGROUP) lives in streams_readgroup.py, XINFO in streams_info.py.
Argument checks run in Redis's order (t_stream.c), so that a command with several problems
reports the same one Redis does. Like Redis, these commands bump the dirty counter but do not
signal the key as modified: WATCH is not invalidated by group bookkeeping.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

from protocol.numbers import parse_int
from protocol.reply import NULL_ARRAY, OK, ErrorReply
from protocol.stream_resp import entries_reply
from server.command_table import command, container, key_spec
from server.commands.stream_common import SYNTAX_ERROR, get_stream, new_stream, read_stream
from server.commands.stream_propagate import (
    claim_effect,
    consumer_effect,
    nack_effect,
    position_effect,
)
from server.commands.streams_write import DELETE_POLICY_ARG, IDS_ARG, parse_ids_block
from server.keyspace import now_ms
from server.notify import NOTIFY_STREAM, notify_keyspace_event
from server.subcommands import help_reply, subcommand_syntax_error
from streams import (
    LAST,
    NACK_FAIL,
    NACK_FATAL,
    NACK_SILENT,
    ConsumerGroup,
    Stream,
    StreamError,
    format_id,
    nogroup,
    nogroup_for_key,
    normalize_entries_read,
    parse_group_id,
    parse_range_end,
    parse_range_start,
    parse_strict_id,
    parse_strict_ids,
)

if TYPE_CHECKING:
    from server.connection import Client
    from streams.stream import Entry

_KEY_REQUIRED = ErrorReply(
    "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to "
    "use the MKSTREAM option to create an empty stream automatically.")
_XCLAIM_MIN_IDLE = ErrorReply("ERR Invalid min-idle-time argument for XCLAIM")
_XCLAIM_IDLE = ErrorReply("ERR Invalid IDLE option argument for XCLAIM")
_XCLAIM_TIME = ErrorReply("ERR Invalid TIME option argument for XCLAIM")
_XCLAIM_RETRYCOUNT = ErrorReply("ERR Invalid RETRYCOUNT option argument for XCLAIM")
_XAUTOCLAIM_MIN_IDLE = ErrorReply("ERR Invalid min-idle-time argument for XAUTOCLAIM")
_XAUTOCLAIM_COUNT = ErrorReply("ERR COUNT must be > 0")
# COUNT's upper bound in XAUTOCLAIM: LONG_MAX / max(sizeof(streamID), attempts factor 10).
_XAUTOCLAIM_MAX_COUNT = ((1 << 63) - 1) // 16


_KEY = {"name": "key", "type": "key", "key_spec_index": 0}
_GROUP = {"name": "group", "type": "string"}
_CONSUMER = {"name": "consumer", "type": "string"}
_ID_SELECTOR = {"name": "id-selector", "type": "oneof", "arguments": (
    {"name": "id", "type": "string"}, {"name": "new-id", "type": "pure-token", "token": "$"})}
_ENTRIESREAD = {"name": "entriesread", "display": "entries-read", "token": "ENTRIESREAD",
                "type": "integer", "optional": True}


def _touch_dirty(client: Client, n: int = 1) -> None:
    client.keyspace.dirty += n


# --- XGROUP ------------------------------------------------------------------------------------

container("xgroup", group="stream", since="5.0.0", summary="A container for consumer groups commands.")


def _xgroup_prepare(client: Client, argv: list[bytes], *, create: bool = False, setid: bool = False,
                    need_group: bool = False) -> tuple[Stream | None, ConsumerGroup | None, bool, int | None]:
    """The common front of every XGROUP subcommand, in Redis's order: options (CREATE and SETID
    only), then the key (WRONGTYPE, missing unless MKSTREAM), then the group where required.

    Returns (stream or None, group or None, mkstream, entries_read or None when not given).
    """
    mkstream = False
    entries_read: int | None = None
    argc = len(argv)
    i = 5
    while i < argc:
        opt = argv[i].lower()
        if create and opt == b"mkstream":
            mkstream = True
            i += 1
        elif (create or setid) and opt == b"entriesread" and i + 1 < argc:
            entries_read = parse_int(argv[i + 1])
            normalize_entries_read(entries_read)  # raises Redis's "must be positive or -1"
            i += 2
        else:
            raise subcommand_syntax_error(argv)
    key = argv[2]
    s = get_stream(client, key)
    g = None
    if not mkstream:
        if s is None:
            raise _KEY_REQUIRED
        g = s.get_group(argv[3])
        if g is None and need_group:
            raise nogroup_for_key(key, argv[3])
    elif s is not None:
        g = s.get_group(argv[3])
    return s, g, mkstream, entries_read


@command("xgroup|create", -5, "write denyoom", group="stream", since="5.0.0",
         summary="Creates a consumer group.", key_specs=key_spec(("RW", "INSERT"), 2),
         keys=(2, 2, 1), history=(("7.0.0", "Added the `entries_read` named argument."),),
         arguments=(_KEY, _GROUP, _ID_SELECTOR,
                    {"token": "MKSTREAM", "name": "mkstream", "type": "pure-token", "optional": True},
                    _ENTRIESREAD))
def xgroup_create(client: Client, argv: list[bytes]) -> Any:
    s, _g, _mk, entries_read = _xgroup_prepare(client, argv, create=True)
    if len(argv) > 8:
        raise subcommand_syntax_error(argv)
    spec = parse_group_id(argv[4])
    last_id = (0 if s is None else s.last_id) if spec == LAST else spec
    if s is None:
        # MKSTREAM: only now that nothing can fail any more, as Redis does.
        s = new_stream(client)
        client.db.add(argv[2], s)
    g = s.create_group(argv[3], last_id, entries_read)
    _touch_dirty(client)
    notify_keyspace_event(client, NOTIFY_STREAM, b"xgroup-create", argv[2], client.db.index)
    if client.effects.active:
        # `$` is resolved here: log the concrete position.
        client.propagate([b"XGROUP", b"CREATE", argv[2], argv[3], format_id(g.last_id), b"MKSTREAM",
                          b"ENTRIESREAD", b"%d" % (-1 if g.entries_read is None else g.entries_read)])
    return OK


@command("xgroup|setid", -5, "write", group="stream", since="5.0.0",
         summary="Sets the last-delivered ID of a consumer group.",
         key_specs=key_spec(("RW", "UPDATE"), 2), keys=(2, 2, 1),
         history=(("7.0.0", "Added the optional `entries_read` argument."),),
         arguments=(_KEY, _GROUP, _ID_SELECTOR, _ENTRIESREAD))
def xgroup_setid(client: Client, argv: list[bytes]) -> Any:
    s, g, _mk, entries_read = _xgroup_prepare(client, argv, setid=True, need_group=True)
    if len(argv) not in (5, 7):
        raise subcommand_syntax_error(argv)
    assert s is not None and g is not None
    spec = parse_group_id(argv[4], setid=True)
    g.set_id(spec if isinstance(spec, int) else s.last_id, entries_read)
    s.bound_entries_read(g)
    _touch_dirty(client)
    notify_keyspace_event(client, NOTIFY_STREAM, b"xgroup-setid", argv[2], client.db.index)
    if client.effects.active:
        client.propagate(position_effect(argv[2], g))
    return OK


@command("xgroup|destroy", 4, "write", group="stream", since="5.0.0",
         summary="Destroys a consumer group.",
         complexity="O(N) where N is the number of entries in the group's pending entries list (PEL).",
         key_specs=key_spec(("RW", "DELETE"), 2), keys=(2, 2, 1), arguments=(_KEY, _GROUP))
def xgroup_destroy(client: Client, argv: list[bytes]) -> Any:
    s, _g, _mk, _er = _xgroup_prepare(client, argv)
    assert s is not None
    if not s.destroy_group(argv[3]):
        return 0
    _touch_dirty(client)
    notify_keyspace_event(client, NOTIFY_STREAM, b"xgroup-destroy", argv[2], client.db.index)
    client.propagate(argv)
    # Readers blocked on this group must be re-run so that they fail with NOGROUP.
    client.keyspace.signal_ready(client.db.index, argv[2])
    return 1


@command("xgroup|createconsumer", 5, "write denyoom", group="stream", since="6.2.0",
         summary="Creates a consumer in a consumer group.",
         key_specs=key_spec(("RW", "INSERT"), 2), keys=(2, 2, 1),
         arguments=(_KEY, _GROUP, _CONSUMER))
def xgroup_createconsumer(client: Client, argv: list[bytes]) -> Any:
    _s, g, _mk, _er = _xgroup_prepare(client, argv, need_group=True)
    assert g is not None
    if g.create_consumer(argv[4], now_ms()):
        _touch_dirty(client)
        notify_keyspace_event(client, NOTIFY_STREAM, b"xgroup-createconsumer", argv[2],
                              client.db.index)
        client.propagate(argv)
        return 1
    return 0


@command("xgroup|delconsumer", 5, "write", group="stream", since="5.0.0",
         summary="Deletes a consumer from a consumer group.",
         key_specs=key_spec(("RW", "DELETE"), 2), keys=(2, 2, 1),
         arguments=(_KEY, _GROUP, _CONSUMER))
def xgroup_delconsumer(client: Client, argv: list[bytes]) -> Any:
    _s, g, _mk, _er = _xgroup_prepare(client, argv, need_group=True)
    assert g is not None
    if argv[4] not in g.consumers:
        return 0
    _touch_dirty(client)
    notify_keyspace_event(client, NOTIFY_STREAM, b"xgroup-delconsumer", argv[2],
                          client.db.index)
    client.propagate(argv)
    return g.delete_consumer(argv[4])


_XGROUP_HELP = [
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
]


@command("xgroup|help", 2, "loading stale", group="stream", since="5.0.0",
         summary="Returns helpful text about the different subcommands.")
def xgroup_help(client: Client, argv: list[bytes]) -> Any:
    return help_reply("XGROUP", _XGROUP_HELP)


# --- XACK --------------------------------------------------------------------------------------


@command("xack", -4, "write fast", keys=(1, 1, 1), group="stream", since="5.0.0",
         summary="Returns the number of messages that were successfully acknowledged by the "
         "consumer group member of a stream.", complexity="O(1) for each message ID processed.",
         key_specs=key_spec(("RW", "UPDATE")), arguments=(
             _KEY, _GROUP, {"name": "ID", "type": "string", "multiple": True}))
def xack(client: Client, argv: list[bytes]) -> Any:
    s: Stream | None = client.db.read_typed(argv[1], Stream)
    if s is None:
        return 0
    g = s.groups.get(argv[2])
    if g is None:
        return 0  # nothing to acknowledge; the IDs are not even parsed, as in Redis
    # All IDs are parsed before any is acknowledged: an error must leave the PEL untouched.
    ids = parse_strict_ids(argv[3:])
    n = g.ack(ids)
    if n:
        client.keyspace.dirty += n
        client.propagate(argv)
    return n


@command("xackdel", -6, "write fast", keys=(1, 1, 1), group="stream", since="8.2.0",
         summary="Acknowledges and deletes one or multiple messages for a stream consumer group.",
         complexity="O(1) for each entry ID processed.",
         key_specs=key_spec(("RW", "UPDATE", "DELETE")),
         arguments=(_KEY, _GROUP, DELETE_POLICY_ARG, IDS_ARG))
def xackdel(client: Client, argv: list[bytes]) -> Any:
    key = argv[1]
    s: Stream | None = client.db.get_typed(key, Stream)
    # Every argument is checked before the group is looked up: the reply to a missing key or
    # group has one -1 per ID.
    policy, ids = parse_ids_block(argv, 3)
    g = None if s is None else s.groups.get(argv[2])
    if s is None or g is None:
        return [-1] * len(ids)
    codes = s.ack_delete(g, ids, policy)
    acked = len(codes) - codes.count(-1)
    if acked:
        client.keyspace.dirty += acked
        if 1 in codes:
            client.db.signal_modified(key)
            notify_keyspace_event(client, NOTIFY_STREAM, b"xackdel", key, client.db.index)
        # The same PELs replay the same acknowledgements and deletions.
        client.propagate(argv)
    return codes


# --- XPENDING ----------------------------------------------------------------------------------


@command("xpending", -3, "readonly", keys=(1, 1, 1), group="stream", since="5.0.0",
         summary="Returns the information and entries from a stream consumer group's pending "
         "entries list.",
         complexity="O(N) with N being the number of elements returned, so asking for a small fixed "
         "number of entries per call is O(1). O(M), where M is the total number of entries scanned "
         "when used with the IDLE filter. When the command returns just the summary and the list of "
         "consumers is small, it runs in O(1) time; otherwise, an additional O(N) time for iterating "
         "every consumer.",
         key_specs=key_spec(("RO", "ACCESS")), tips=("nondeterministic_output",),
         history=(("6.2.0", "Added the `IDLE` option and exclusive range intervals."),),
         arguments=(_KEY, _GROUP, {"name": "filters", "type": "block", "optional": True, "arguments": (
             {"token": "IDLE", "name": "min-idle-time", "type": "integer", "optional": True,
              "since": "6.2.0"},
             {"name": "start", "type": "string"}, {"name": "end", "type": "string"},
             {"name": "count", "type": "integer"},
             {"name": "consumer", "type": "string", "optional": True})}))
def xpending(client: Client, argv: list[bytes]) -> Any:
    argc = len(argv)
    if argc != 3 and not 6 <= argc <= 9:
        raise SYNTAX_ERROR
    # The range arguments are checked before the key, so syntax errors win over NOGROUP.
    consumer: bytes | None = None
    min_idle = 0
    if argc >= 6:
        at = 3
        if argv[3].lower() == b"idle":
            min_idle = parse_int(argv[4])
            if argc < 8:
                raise SYNTAX_ERROR
            at = 5
        count = max(parse_int(argv[at + 2]), 0)
        start = parse_range_start(argv[at])
        end = parse_range_end(argv[at + 1])
        if at + 3 < argc:
            consumer = argv[at + 3]  # anything after the consumer is ignored, as in Redis
    s = read_stream(client, argv[1])
    g = None if s is None else s.groups.get(argv[2])
    if g is None:
        raise nogroup(argv[1], argv[2])
    if argc == 3:
        total, first, last, per = g.pending_summary()
        if not total:
            return [0, None, None, NULL_ARRAY]  # Redis: nil IDs, null array of consumers
        assert first is not None and last is not None  # a non-empty PEL has both
        # Redis sends each consumer's count as a bulk string here.
        return [total, format_id(first), format_id(last), [[name, b"%d" % n] for name, n in per]]
    rows = g.pending_range(start, end, count, now_ms(), consumer, min_idle)
    return [[format_id(eid), name, idle, deliveries] for eid, name, idle, deliveries in rows]


# --- XCLAIM / XAUTOCLAIM -----------------------------------------------------------------------


def _propagate_claims(client: Client, key: bytes, g: ConsumerGroup, created: bytes | None,
                      claimed: Iterable[int], dropped: Iterable[int]) -> None:
    """Log what a claim did, in ID order: the consumer it created, each record it claimed as
    the XCLAIM that recreates it (owner, delivery time and count), each record it dropped
    because its entry was deleted as the XACK it amounts to."""
    if created is not None:
        client.propagate(consumer_effect(key, g, created))
    gone = set(dropped)
    for eid in sorted(gone.union(claimed)):
        client.propagate([b"XACK", key, g.name, format_id(eid)] if eid in gone
                         else claim_effect(key, g, eid))


def _claim_group(client: Client, argv: list[bytes]) -> tuple[Stream, ConsumerGroup]:
    s = read_stream(client, argv[1])
    g = None if s is None else s.groups.get(argv[2])
    if g is None:
        raise nogroup(argv[1], argv[2])
    assert s is not None
    return s, g


def _try_strict_id(arg: bytes) -> int | None:
    try:
        return parse_strict_id(arg)
    except StreamError:  # not an ID: the options start here
        return None


@command("xclaim", -6, "write fast", keys=(1, 1, 1), group="stream", since="5.0.0",
         summary="Changes, or acquires, ownership of a message in a consumer group, as if the "
         "message was delivered a consumer group member.",
         complexity="O(log N) with N being the number of messages in the PEL of the consumer group.",
         key_specs=key_spec(("RW", "UPDATE")), tips=("nondeterministic_output",),
         arguments=(_KEY, _GROUP, _CONSUMER, {"name": "min-idle-time", "type": "string"},
                    {"name": "ID", "type": "string", "multiple": True},
                    {"token": "IDLE", "name": "ms", "type": "integer", "optional": True},
                    {"token": "TIME", "name": "unix-time-milliseconds", "type": "unix-time",
                     "optional": True},
                    {"token": "RETRYCOUNT", "name": "count", "type": "integer", "optional": True},
                    {"name": "force", "token": "FORCE", "type": "pure-token", "optional": True},
                    {"name": "justid", "token": "JUSTID", "type": "pure-token", "optional": True},
                    {"name": "lastid", "token": "LASTID", "type": "string", "optional": True}))
def xclaim(client: Client, argv: list[bytes]) -> Any:
    s, g = _claim_group(client, argv)
    min_idle = max(parse_int(argv[4], _XCLAIM_MIN_IDLE), 0)
    argc = len(argv)
    # IDs run until the first argument that does not parse as one: the options follow.
    ids: list[int] = []
    j = 5
    while j < argc:
        eid = _try_strict_id(argv[j])
        if eid is None:
            break
        ids.append(eid)
        j += 1
    now = now_ms()
    delivery_time: int | None = None
    retry_count: int | None = None
    last_id: int | None = None
    force = justid = False
    while j < argc:
        opt = argv[j].lower()
        more = j + 1 < argc
        if opt == b"force":
            force = True
        elif opt == b"justid":
            justid = True
        elif opt == b"idle" and more:
            j += 1
            delivery_time = now - parse_int(argv[j], _XCLAIM_IDLE)
        elif opt == b"time" and more:
            j += 1
            delivery_time = parse_int(argv[j], _XCLAIM_TIME)
        elif opt == b"retrycount" and more:
            j += 1
            retry_count = parse_int(argv[j], _XCLAIM_RETRYCOUNT)
        elif opt == b"lastid" and more:
            j += 1
            last_id = parse_strict_id(argv[j])
        else:
            raise ErrorReply(
                f"ERR Unrecognized XCLAIM option '{argv[j].decode('utf-8', 'surrogateescape')}'")
        j += 1
    consumer, created = g.touch_consumer(argv[3], now)
    if created:
        notify_keyspace_event(client, NOTIFY_STREAM, b"xgroup-createconsumer", argv[1],
                              client.db.index)
    moves_last_id = last_id is not None and last_id > g.last_id
    dropped: list[int] = []
    claimed = g.claim(s, consumer, ids, min_idle, now, delivery_time=delivery_time,
                      retry_count=retry_count, force=force, justid=justid, last_id=last_id,
                      dropped=dropped)
    if claimed or created:
        _touch_dirty(client)
    if client.effects.active:
        _propagate_claims(client, argv[1], g, argv[3] if created else None,
                          cast("list[int]", claimed) if justid
                          else [e[0] for e in cast("list[Entry]", claimed)],
                          dropped)
        if moves_last_id:
            client.propagate(position_effect(argv[1], g))
    if justid:
        return [format_id(eid) for eid in claimed]  # type: ignore[arg-type]
    return entries_reply(claimed)  # type: ignore[arg-type]


@command("xautoclaim", -6, "write fast", keys=(1, 1, 1), group="stream", since="6.2.0",
         summary="Changes, or acquires, ownership of messages in a consumer group, as if the "
         "messages were delivered to as consumer group member.", complexity="O(1) if COUNT is small.",
         key_specs=key_spec(("RW", "DELETE")), tips=("nondeterministic_output",),
         history=(("7.0.0", "Added an element to the reply array, containing deleted entries the "
                   "command cleared from the PEL"),),
         arguments=(_KEY, _GROUP, _CONSUMER, {"name": "min-idle-time", "type": "string"},
                    {"name": "start", "type": "string"},
                    {"token": "COUNT", "name": "count", "type": "integer", "optional": True},
                    {"name": "justid", "token": "JUSTID", "type": "pure-token", "optional": True}))
def xautoclaim(client: Client, argv: list[bytes]) -> Any:
    # Arguments first: Redis reports syntax errors before a missing key or group.
    min_idle = max(parse_int(argv[4], _XAUTOCLAIM_MIN_IDLE), 0)
    start = parse_range_start(argv[5])
    count = 100
    justid = False
    argc = len(argv)
    j = 6
    while j < argc:
        opt = argv[j].lower()
        if opt == b"count" and j + 1 < argc:
            count = parse_int(argv[j + 1], _XAUTOCLAIM_COUNT)
            if not 1 <= count <= _XAUTOCLAIM_MAX_COUNT:
                raise _XAUTOCLAIM_COUNT
            j += 1
        elif opt == b"justid":
            justid = True
        else:
            raise SYNTAX_ERROR
        j += 1
    s, g = _claim_group(client, argv)
    now = now_ms()
    consumer, created = g.touch_consumer(argv[3], now)
    if created:
        notify_keyspace_event(client, NOTIFY_STREAM, b"xgroup-createconsumer", argv[1],
                              client.db.index)
    cursor, claimed, deleted = g.autoclaim(s, consumer, start, min_idle, now, count, justid)
    if claimed or deleted or created:
        _touch_dirty(client)
    if client.effects.active:
        _propagate_claims(client, argv[1], g, argv[3] if created else None,
                          cast("list[int]", claimed) if justid
                          else [e[0] for e in cast("list[Entry]", claimed)], deleted)
    body = ([format_id(eid) for eid in cast("list[int]", claimed)] if justid
            else entries_reply(cast("list[Entry]", claimed)))
    return [format_id(cursor), body, [format_id(eid) for eid in deleted]]


# --- XNACK -------------------------------------------------------------------------------------

_NACK_MODES = {b"silent": NACK_SILENT, b"fail": NACK_FAIL, b"fatal": NACK_FATAL}
_XNACK_MODE = ErrorReply("ERR mode must be SILENT, FAIL, or FATAL")
_XNACK_NUMIDS = ErrorReply("ERR Number of IDs must be a positive integer")
_XNACK_NUMIDS_MISMATCH = ErrorReply("ERR The `numids` parameter must match the number of arguments")
_XNACK_RETRYCOUNT = ErrorReply("ERR Invalid RETRYCOUNT option argument for XNACK")


@command("xnack", -7, "write fast", keys=(1, 1, 1), group="stream", since="8.8.0",
         summary="Releases claimed messages back to the group's PEL without acknowledging them, "
         "making them available for re-delivery.", complexity="O(1) for each message ID processed.",
         key_specs=key_spec(("RW", "UPDATE")),
         arguments=(_KEY, _GROUP,
                    {"name": "mode", "type": "oneof", "arguments": (
                        {"name": "silent", "type": "pure-token", "token": "SILENT"},
                        {"name": "fail", "type": "pure-token", "token": "FAIL"},
                        {"name": "fatal", "type": "pure-token", "token": "FATAL"})},
                    {"name": "ids", "token": "IDS", "type": "block", "arguments": (
                        {"name": "numids", "type": "integer"},
                        {"name": "id", "type": "string", "multiple": True})},
                    {"token": "RETRYCOUNT", "name": "count", "type": "integer", "optional": True},
                    {"name": "force", "token": "FORCE", "type": "pure-token", "optional": True}))
def xnack(client: Client, argv: list[bytes]) -> Any:
    mode = _NACK_MODES.get(argv[3].lower())
    if mode is None:
        raise _XNACK_MODE
    argc = len(argv)
    id_args: list[bytes] | None = None
    retry_count: int | None = None
    force = False
    # IDS, RETRYCOUNT and FORCE in any order, as Redis parses them.
    j = 4
    while j < argc:
        opt = argv[j].lower()
        more = argc - j - 1
        if opt == b"ids" and more:
            numids = parse_int(argv[j + 1], _XNACK_NUMIDS)
            if numids <= 0:
                raise _XNACK_NUMIDS
            if numids > more - 1:
                raise _XNACK_NUMIDS_MISMATCH
            id_args = argv[j + 2:j + 2 + numids]
            j += 2 + numids
            continue
        if opt == b"retrycount" and more:
            retry_count = parse_int(argv[j + 1], _XNACK_RETRYCOUNT)
            if retry_count < 0:
                raise _XNACK_RETRYCOUNT
            j += 1
        elif opt == b"force":
            force = True
        else:
            raise SYNTAX_ERROR
        j += 1
    if id_args is None:
        raise SYNTAX_ERROR
    # Every ID is parsed before anything is released: an error leaves the PEL untouched.
    ids = parse_strict_ids(id_args)
    s, g = _claim_group(client, argv)
    released = g.nack(s, ids, mode, retry_count, force)
    if not released:
        return 0
    _touch_dirty(client, len(released))
    if client.effects.active:
        # Only each ID's last release counts: it set the count and the place in line.
        last = {eid: i for i, eid in enumerate(released)}
        for i, eid in enumerate(released):
            if last[eid] == i:
                client.propagate(nack_effect(argv[1], g.name, eid, g.pel[eid]))
    # Released entries can be claimed at once: CLAIM readers blocked on the key try again.
    client.keyspace.signal_ready(client.db.index, argv[1])
    return len(released)
