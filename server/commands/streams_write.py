"""Stream write commands without consumer groups: XADD, XDEL, XDELEX, XTRIM, XSETID.

Argument checks follow t_stream.c's order exactly, because the first failing check decides which
error a client sees (e.g. a bad MAXLEN wins over an odd field count, which wins over WRONGTYPE).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from protocol.numbers import parse_int
from protocol.reply import OK, ErrorReply
from protocol.stream_resp import id_run_reply
from server.command_table import command, key_spec, run_of
from server.commands.runs import announce_calls, notify_times, run_end
from server.commands.stream_common import SYNTAX_ERROR, get_stream, new_stream
from server.commands.stream_propagate import xadd_run_effect_received
from server.keyspace import now_ms
from server.notify import NOTIFY_STREAM, notify, notify_keyspace_event
from streams import ACKED, DELREF, KEEPREF, Stream, StreamError, check_xsetid_args
from streams.errors import XADD_ZERO, XSETID_ENTRIES_ADDED_NEGATIVE, XSETID_PROVIDED_MAXDEL
from streams.idempotency import auto_iid
from streams.ids import (
    MAX_ID,
    SEQ_DIGITS,
    U64,
    format_id,
    parse_strict_id,
    parse_strict_ids,
    parse_xadd_id,
    plain_id,
)
from streams.storage import MAX_NODE_SIZE, fields_size

if TYPE_CHECKING:
    from server.connection import Client

_BOTH_STRATEGIES = ErrorReply(
    "ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
_MAXLEN_NEGATIVE = ErrorReply("ERR The MAXLEN argument must be >= 0.")
_LIMIT_NEGATIVE = ErrorReply("ERR The LIMIT argument must be >= 0.")
_LIMIT_NO_STRATEGY = ErrorReply(
    "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
_XTRIM_NO_STRATEGY = ErrorReply("ERR syntax error, XTRIM must be called with a trimming strategy")
_LIMIT_NO_APPROX = ErrorReply("ERR syntax error, LIMIT cannot be used without the special ~ option")
_XADD_ARITY = ErrorReply("ERR wrong number of arguments for 'xadd' command")
_XADD_ZERO = ErrorReply(XADD_ZERO)
_NO_SUCH_KEY = ErrorReply("ERR no such key")
_ENTRIES_ADDED_NEGATIVE = ErrorReply(XSETID_ENTRIES_ADDED_NEGATIVE)
_MAXDEL_GREATER = ErrorReply(XSETID_PROVIDED_MAXDEL)
_NUMIDS_NOT_POSITIVE = ErrorReply("ERR Number of IDs must be a positive integer")
_NUMIDS_MISMATCH = ErrorReply("ERR The `numids` parameter must match the number of arguments")

# KEEPREF / DELREF / ACKED, as the tokens read and as logged.
_POLICIES = {b"keepref": KEEPREF, b"delref": DELREF, b"acked": ACKED}
_POLICY_TOKENS = {KEEPREF: b"KEEPREF", DELREF: b"DELREF", ACKED: b"ACKED"}
_IDMP_TWICE = ErrorReply("ERR IDMP/IDMPAUTO specified multiple times")
_IDMP_EXPLICIT_ID = ErrorReply("ERR IDMP/IDMPAUTO can be used only with auto-generated IDs")
_IDMP_NO_PID = ErrorReply("ERR IDMP requires a non-empty producer ID")
_IDMP_NO_IID = ErrorReply("ERR IDMP requires a non-empty idempotent ID")
_IDMPAUTO_NO_PID = ErrorReply("ERR IDMPAUTO requires a non-empty producer ID")


_KEY_ARG = {"name": "key", "type": "key", "key_spec_index": 0}
_TRIM_ARGS = (
    {"name": "strategy", "type": "oneof", "arguments": (
        {"name": "maxlen", "type": "pure-token", "token": "MAXLEN"},
        {"name": "minid", "type": "pure-token", "token": "MINID", "since": "6.2.0"})},
    {"name": "operator", "type": "oneof", "optional": True, "arguments": (
        {"name": "equal", "type": "pure-token", "token": "="},
        {"name": "approximately", "type": "pure-token", "token": "~"})},
    {"name": "threshold", "type": "string"},
    {"token": "LIMIT", "name": "count", "type": "integer", "optional": True, "since": "6.2.0"},
)
_POLICY_ARGS = (
    {"name": "keepref", "type": "pure-token", "token": "KEEPREF"},
    {"name": "delref", "type": "pure-token", "token": "DELREF"},
    {"name": "acked", "type": "pure-token", "token": "ACKED"},
)
# XADD / XTRIM: optional, for compatibility; XDELEX / XACKDEL: the same choice.
_TRIM_POLICY_ARG = {"name": "condition", "type": "oneof", "optional": True, "since": "8.2.0",
                    "arguments": _POLICY_ARGS}
DELETE_POLICY_ARG = {"name": "condition", "type": "oneof", "optional": True,
                     "arguments": _POLICY_ARGS}
IDS_ARG = {"name": "ids", "token": "IDS", "type": "block", "arguments": (
    {"name": "numids", "type": "integer"},
    {"name": "id", "type": "string", "multiple": True})}
_POLICY_HISTORY = ("8.2.0", "Added the `KEEPREF`, `DELREF` and `ACKED` options.")


class TrimArgs:
    """XADD / XTRIM options as parsed by `parse_add_or_trim`.

    `maxlen` / `minid`: the strategy (at most one is set); `limit` None means LIMIT was not given
    (the engine then picks the `~` default); `policy` is KEEPREF, DELREF or ACKED; `id_pos` is
    XADD's ID position; `id` is None for `*`, else (id, seq_given) as
    `streams.ids.parse_xadd_id` returns it; `idmp` is XADD's (producer ID, idempotent ID), the
    idempotent ID None for IDMPAUTO.
    """

    __slots__ = ("maxlen", "minid", "approx", "limit", "policy", "nomkstream", "id_pos", "id",
                 "idmp")

    def __init__(self) -> None:
        self.maxlen: int | None = None
        self.minid: int | None = None
        self.approx = False
        self.limit: int | None = None
        self.policy = KEEPREF
        self.nomkstream = False
        self.id_pos = 0
        self.id: tuple[int, bool] | None = None
        self.idmp: tuple[bytes, bytes | None] | None = None

    @property
    def trims(self) -> bool:
        return self.maxlen is not None or self.minid is not None


# What parse_add_or_trim returns for `XADD key * ...` (shared: callers only read it).
_AUTO_ID = TrimArgs()
_AUTO_ID.id_pos = 2


def parse_add_or_trim(argv: list[bytes], xadd: bool, replaying: bool = False) -> TrimArgs:
    """Options of XADD (xadd=True, stops at the ID) or XTRIM, with Redis's checks in its order.

    `replaying` is the AOF loader: like Redis for its master or AOF, it trims without LIMIT, and
    accepts the `= ... LIMIT n` form Redis itself logs after rewriting a `~`.
    """
    argc = len(argv)
    if xadd and argc > 2 and argv[2] == b"*":
        return _AUTO_ID  # the common `XADD key * field value ...`: no option to parse
    args = TrimArgs()
    i = 2
    while i < argc:
        more = argc - 1 - i
        opt = argv[i]
        if xadd and opt == b"*":
            break  # the common case: auto ID, fields follow
        low = opt.lower()
        if (low == b"maxlen" or low == b"minid") and more:
            if args.trims:
                raise _BOTH_STRATEGIES
            # A lone `~`/`=` right before the end is the threshold itself (and fails to parse).
            nxt = argv[i + 1]
            args.approx = False
            if more >= 2 and (nxt == b"~" or nxt == b"="):
                args.approx = nxt == b"~"
                i += 1
            i += 1
            if low == b"maxlen":
                maxlen = parse_int(argv[i])
                if maxlen < 0:
                    raise _MAXLEN_NEGATIVE
                args.maxlen = maxlen
            else:
                args.minid = parse_strict_id(argv[i])
        elif low == b"limit" and more:
            limit = parse_int(argv[i + 1])
            if limit < 0:
                raise _LIMIT_NEGATIVE
            args.limit = limit
            i += 1
        elif xadd and low == b"nomkstream":
            args.nomkstream = True
        elif low in _POLICIES:
            args.policy = _POLICIES[low]  # a repeated policy: the last one counts
        elif xadd and (low == b"idmp" and more >= 2 or low == b"idmpauto" and more):
            i = _parse_idmp(args, argv, i, low == b"idmpauto")
        elif xadd:
            args.id = parse_xadd_id(opt)  # anything else must be the ID
            break
        else:
            raise SYNTAX_ERROR
        i += 1
    args.id_pos = i
    if args.idmp is not None and args.id is not None:
        raise _IDMP_EXPLICIT_ID
    if args.limit and not args.trims:
        raise _LIMIT_NO_STRATEGY
    if not xadd and not args.trims:
        raise _XTRIM_NO_STRATEGY
    if replaying:
        args.limit = 0
    elif args.limit is not None and not args.approx:
        raise _LIMIT_NO_APPROX
    return args


def _parse_idmp(args: TrimArgs, argv: list[bytes], i: int, auto: bool) -> int:
    """`IDMPAUTO pid` or `IDMP pid iid` at argv[i]; the index of its last argument."""
    if args.idmp is not None:
        raise _IDMP_TWICE
    pid = argv[i + 1]
    if auto:
        if not pid:
            raise _IDMPAUTO_NO_PID
        args.idmp = (pid, None)
        return i + 1
    if not pid:
        raise _IDMP_NO_PID
    iid = argv[i + 2]
    if not iid:
        raise _IDMP_NO_IID
    args.idmp = (pid, iid)
    return i + 2


def _propagate_idempotent(client: Client, args: TrimArgs, key: bytes, s: Stream, eid: int,
                          pid: bytes, iid: bytes, fields: list[bytes]) -> None:
    """The effect of an XADD IDMP that added an entry, as commands Redis 8 accepts (it refuses
    IDMP with an explicit ID): the entry with its ID, the pair recorded for it, then the trim —
    after the record, which needs the entry to exist even when the trim removes it."""
    sid = format_id(eid)
    client.propagate([b"XADD", key, sid, *fields])
    client.propagate([b"XIDMPRECORD", key, pid, iid, sid])
    if args.trims:
        client.propagate([b"XTRIM", key, *_trim_effect(args, s)])


def _trim_effect(args: TrimArgs, s: Stream) -> list[bytes]:
    """The trimming options that redo, exactly, what this trim did (for the AOF).

    `~` trims depend on node boundaries and LIMIT, so they are logged as `=` with the threshold
    that removes the same entries, as Redis does. An ACKED `~` trim removed the oldest entries
    no group still needed, in whole nodes or not: `MAXLEN = <length now> ACKED` removes exactly
    those again, whatever the strategy was (a MINID threshold cannot: entries kept for a group
    may sit below entries removed).
    """
    policy = args.policy
    if policy == ACKED and args.approx:
        return [b"MAXLEN", b"=", b"%d" % s.length, b"ACKED"]
    if args.maxlen is not None:
        effect = [b"MAXLEN", b"=", b"%d" % (s.length if args.approx else args.maxlen)]
    else:
        assert args.minid is not None
        first = s.first_id_with_tombstones() if args.approx else args.minid
        effect = [b"MINID", b"=", format_id(first)]
    if policy != KEEPREF:
        effect.append(_POLICY_TOKENS[policy])
    return effect


@command("xadd", -5, "write denyoom fast", keys=(1, 1, 1), group="stream", since="5.0.0",
         summary="Appends a new message to a stream. Creates the key if it doesn't exist.",
         complexity="O(1) when adding a new entry, O(N) when trimming where N being the number "
         "of entries evicted.",
         tips=("nondeterministic_output",),
         key_specs=key_spec(("RW", "UPDATE"), notes="UPDATE instead of INSERT because of the optional "
                             "trimming feature"),
         history=(("6.2.0", "Added the `NOMKSTREAM` option, `MINID` trimming strategy and the "
                   "`LIMIT` option."), ("7.0.0", "Added support for the `<ms>-*` explicit ID form."),
                  _POLICY_HISTORY,
                  ("8.6.0", "Added the `IDMPAUTO` and `IDMP` options.")),
         arguments=(
             _KEY_ARG,
             {"token": "NOMKSTREAM", "name": "nomkstream", "type": "pure-token", "optional": True,
              "since": "6.2.0"},
             _TRIM_POLICY_ARG,
             {"name": "idmp", "type": "oneof", "optional": True, "arguments": (
                 {"name": "idmpauto-with-pid", "type": "block", "arguments": (
                     {"name": "idmpauto-token", "type": "pure-token", "token": "IDMPAUTO"},
                     {"name": "pid", "type": "string", "display_text": "producer-id"})},
                 {"name": "idmp-with-pid-iid", "type": "block", "arguments": (
                     {"name": "idmp-token", "type": "pure-token", "token": "IDMP"},
                     {"name": "pid", "type": "string", "display_text": "producer-id"},
                     {"name": "iid", "type": "string", "display_text": "idempotent-id"})})},
             {"name": "trim", "type": "block", "optional": True, "arguments": _TRIM_ARGS},
             {"name": "id-selector", "type": "oneof", "arguments": (
                 {"name": "auto-id", "type": "pure-token", "token": "*"},
                 {"name": "id", "type": "string"})},
             {"name": "data", "type": "block", "multiple": True, "arguments": (
                 {"name": "field", "type": "string"}, {"name": "value", "type": "string"})},
         ))
def xadd(client: Client, argv: list[bytes]) -> Any:
    args = parse_add_or_trim(argv, xadd=True, replaying=client.is_loader)
    field_pos = args.id_pos + 1
    nfields = len(argv) - field_pos
    if nfields < 2 or nfields & 1:
        return _XADD_ARITY
    given = args.id
    if given is not None and given[1] and given[0] == 0:
        return _XADD_ZERO  # before the lookup, so that no empty key is ever created
    key = argv[1]
    db = client.db
    s: Stream | None = db.get_typed(key, Stream)  # typed: compiled calls go direct
    created = s is None
    if s is None:
        if args.nomkstream:
            return None
        s = new_stream(client)
    idmp = args.idmp
    if idmp is not None:
        return _xadd_idempotent(client, args, key, s, created, argv[field_pos:], idmp)
    if given is None:
        eid = s.add(argv[field_pos:], now_ms=now_ms())
    else:
        eid = s.add(argv[field_pos:], now_ms=now_ms(), id=given[0], seq_given=given[1])
    trimmed = 0
    if args.trims:
        trimmed = s.trim(maxlen=args.maxlen, minid=args.minid, approx=args.approx,
                         limit=args.limit, policy=args.policy)
    if created:
        db.add(key, s)  # only now: a failed add must not leave an empty key behind
    else:
        db.signal_modified(key)
    ks = client.keyspace
    ks.signal_ready(db.index, key)
    if ks.notify_flags & NOTIFY_STREAM:
        notify(ks, NOTIFY_STREAM, b"xadd", key, db.index)
        if trimmed:
            notify(ks, NOTIFY_STREAM, b"xtrim", key, db.index)
    if given is not None and given[1] and not args.approx:
        client.propagate(argv)  # the ID and the trim as given redo exactly this
    elif client.effects.active:
        # A replay must add the same entry: log the generated ID and an exact trim.
        effect = [b"XADD", key]
        if args.trims:
            effect += _trim_effect(args, s)
        effect.append(format_id(eid))
        effect += argv[field_pos:]
        client.propagate(effect)
    return format_id(eid)


def _xadd_idempotent(client: Client, args: TrimArgs, key: bytes, s: Stream, created: bool,
                     fields: list[bytes], idmp: tuple[bytes, bytes | None]) -> Any:
    """XADD IDMP / IDMPAUTO (always an auto ID): a pair the stream remembers gets the ID of the
    entry it added, and nothing changes; otherwise the entry is added and the pair recorded."""
    pid, iid = idmp
    if iid is None:
        iid = auto_iid(fields)
    now = now_ms()
    tracker = s.idmp
    seen = tracker.find(pid, iid, now)
    if seen is not None:
        return format_id(seen)
    eid = s.add(fields, now_ms=now)
    tracker.record(pid, iid, eid)
    trimmed = 0
    if args.trims:
        trimmed = s.trim(maxlen=args.maxlen, minid=args.minid, approx=args.approx,
                         limit=args.limit, policy=args.policy)
    db = client.db
    if created:
        db.add(key, s)
    else:
        db.signal_modified(key)
    client.keyspace.signal_ready(db.index, key)
    notify_keyspace_event(client, NOTIFY_STREAM, b"xadd", key, db.index)
    if trimmed:
        notify_keyspace_event(client, NOTIFY_STREAM, b"xtrim", key, db.index)
    if client.effects.active:
        _propagate_idempotent(client, args, key, s, eid, pid, iid, fields)
    return format_id(eid)


def _run_target(client: Client, key: bytes) -> tuple[Stream | None, bool]:
    """The stream a run of XADDs appends to, and whether the run creates it (added to the
    database only once an entry is in); None when the key holds another type."""
    value = client.db.get(key)
    if value is None:
        return new_stream(client), True
    return (value, False) if type(value) is Stream else (None, False)


@run_of("xadd")
def xadd_run(client: Client, commands: list[list[bytes]], start: int) -> int:
    """Consecutive `XADD key * field value ...` to one key (what producers pipeline): one
    lookup, one batch append, one ready signal, the replies encoded together.

    Anything else — options, an explicit ID, a wrong argument count, another key, a key of
    another type, an entry the stream refuses — ends the run, and takes the single path.
    """
    first = commands[start]
    argc = len(first)
    if argc < 5 or not argc & 1 or first[2] != b"*":
        if argc >= 5 and argc & 1 and first[2][:1].isdigit():
            return _xadd_given_run(client, commands, start)
        return _xadd_idempotent_run(client, commands, start) if argc > 6 else 0
    key = first[1]
    last = run_end(commands, start, 5, odd_argc=True)
    end = start + 1
    while end < last and commands[end][2] == b"*":
        end += 1
    db = client.db
    s, created = _run_target(client, key)
    if s is None:
        return 0  # WRONGTYPE, from the single path
    # The argvs themselves go to the stream, fields from index 3: no copy of each one's fields.
    done = s.add_run(commands, 3, start, end, now_ms())
    if not done:
        return 0
    first_id = s.last_id - done + 1
    if created:
        db.add(key, s)
    else:
        db.signal_modified(key)
    keyspace = client.keyspace
    keyspace.dirty += done - 1  # one change per entry, as one by one
    keyspace.signal_ready(db.index, key)
    notify_times(client, NOTIFY_STREAM, b"xadd", key, db.index, done)
    effects = client.effects
    if effects.active:
        # Each entry as an XADD with the ID it was given (dispatch hands them on with the run).
        effects.add_encoded(db.index, xadd_run_effect_received(
            key, first_id, commands, start, done, client.parser.received))
    # add_run's IDs follow each other (first, first + 1, ...).
    client.out.append(id_run_reply(first_id, done))
    return done


# Past the sequence numbers spelled in advance: no next ID is predicted.
_SEQ_PREDICTED: Final = len(SEQ_DIGITS)


def _xadd_given_run(client: Client, commands: list[list[bytes]], start: int) -> int:
    """Consecutive `XADD key <ms>-<seq> field value ...` to one key with ascending IDs: what a
    replica applies from its master's stream (every XADD there carries the ID the master gave
    it), or a producer that chooses its IDs. One lookup, one batch append, one ready signal;
    each call gets the reply, effect (its argv, as the single path logs it) and keyspace event
    it would get alone. The run ends before a call the single path must take: an ID that is
    not a complete `ms-seq` above the previous one, an entry too large, options."""
    first = commands[start]
    key = first[1]
    last = run_end(commands, start, 5, odd_argc=True)
    s, created = _run_target(client, key)
    if s is None:
        return 0  # WRONGTYPE, from the single path
    prev = s.last_id
    # The IDs, indexed as the calls (Stream.add_given takes the fields from the argvs).
    ids: list[int] = [0] * start
    # A master's stream carries its runs' consecutive IDs: an ID spelled as the one after the
    # previous (same "<ms>-" text, the next sequence number's digits) is that ID, unparsed.
    prefix = b""
    next_seq = _SEQ_PREDICTED  # none predicted yet
    for i in range(start, last):
        argv = commands[i]
        arg = argv[2]
        if next_seq < _SEQ_PREDICTED and arg == prefix + SEQ_DIGITS[next_seq]:
            eid = prev + 1
            seq = next_seq
        elif (eid := plain_id(arg)) >= 0:
            # A chosen ID (`<ms>-<seq>` in plain digits, as a producer or a master spells it).
            if eid <= prev:
                break
            seq = eid & U64
            if seq < _SEQ_PREDICTED:
                # Predicted where the sequence is spelled as SEQ_DIGITS spells it, after a dash.
                cut = len(arg) - len(SEQ_DIGITS[seq])
                if cut > 1 and arg[cut - 1] == 45:
                    prefix = arg[:cut]
                else:
                    seq = _SEQ_PREDICTED
        else:
            try:
                given = parse_xadd_id(arg)
            except StreamError:
                break  # its error, from the single path
            if given is None or not given[1] or given[0] <= prev:
                break
            eid = given[0]
            dash = arg.find(b"-")
            prefix = arg[:dash + 1]
            # Predicted only after milliseconds in plain digits, which read the same whatever
            # follows them (no NUL, no length limit reached).
            seq = eid & U64 if 0 < dash < 19 and prefix[:-1].isdigit() else _SEQ_PREDICTED
        size = 0
        for k in range(3, len(argv)):
            size += len(argv[k])
        if size > MAX_NODE_SIZE:
            break
        prev = eid
        next_seq = seq + 1 if seq < _SEQ_PREDICTED else _SEQ_PREDICTED
        ids.append(prev)
    done = len(ids) - start
    if not done:
        return 0
    s.add_given(ids, commands, 3, start)
    db = client.db
    if created:
        db.add(key, s)
    else:
        db.signal_modified(key)
    keyspace = client.keyspace
    keyspace.dirty += done - 1  # one change per entry, as one by one
    keyspace.signal_ready(db.index, key)
    announce_calls(client, db, key, commands, start, start + done, NOTIFY_STREAM, b"xadd")
    if client.is_master:
        return done  # a replica applying its master's stream: the master hears nothing back
    # The replies, encoded together for each stretch of consecutive IDs.
    out = client.out
    end = start + done
    i = start
    while i < end:
        j = i + 1
        while j < end and ids[j] == ids[j - 1] + 1:
            j += 1
        out.append(id_run_reply(ids[i], j - i))
        i = j
    return done


def _pending_count(s: Stream) -> int:
    return sum(len(g.pel) for g in s.groups.values())


def _idempotent_form(argv: list[bytes], name: bytes, key: bytes) -> int:
    """Where the fields start in `XADD key IDMP pid iid * ...` / `XADD key IDMPAUTO pid * ...`
    (with an even number of fields, non-empty IDs), else 0: what an idempotent run takes."""
    argc = len(argv)
    if argc < 7 or argv[1] != key or argv[0] != name or not argv[3]:
        return 0
    opt = argv[2]
    if opt == b"IDMP":
        return 6 if argc >= 8 and not argc & 1 and argv[5] == b"*" and argv[4] else 0
    if opt == b"IDMPAUTO":
        return 5 if argc & 1 and argv[4] == b"*" else 0
    return 0


def _xadd_idempotent_run(client: Client, commands: list[list[bytes]], start: int) -> int:
    """Consecutive `XADD key IDMP pid iid * ...` / `XADD key IDMPAUTO pid * ...` to one key (an
    idempotent producer's pipeline): one lookup, one clock reading, one batch append of the new
    entries and one ready signal, as `xadd_run` does for plain XADDs. Each call gets the reply,
    effects and counters it would get alone; anything else ends the run.

    The pairs are looked up before any entry is added, so the run also ends before a call
    whose answer could depend on the records the run makes: a pair repeated within the run, a
    pair already remembered for a producer the run has recorded for (its records may push that
    pair out of IDMP-MAXSIZE), an entry too large. Such a call starts the next run, or takes the
    single path."""
    first = commands[start]
    name = first[0]
    key = first[1]
    n = len(commands)
    starts: list[int] = []  # where each call's fields start
    end = start
    while end < n:
        at = _idempotent_form(commands[end], name, key)
        if not at:
            break
        starts.append(at)
        end += 1
    if end == start:
        return 0
    db = client.db
    s, created = _run_target(client, key)
    if s is None or s.last_id > MAX_ID - (end - start):
        return 0  # WRONGTYPE, or IDs about to run out: the single path, for its error
    tracker = s.idmp
    now = now_ms()
    found: list[int] = []  # per call: the remembered entry ID, or -1 for an entry to add
    new_fields: list[list[bytes]] = []
    new_pairs: list[tuple[bytes, bytes]] = []
    recording: set[bytes] = set()  # producers the run records pairs for
    pairs: set[tuple[bytes, bytes]] = set()
    k = 0
    while k < end - start:
        argv = commands[start + k]
        at = starts[k]
        pid = argv[3]
        fields = argv[at:]
        iid = argv[4] if at == 6 else auto_iid(fields)
        pair = (pid, iid)
        if pair in pairs:
            break
        if pid in recording:
            if tracker.recorded(pid, iid, now) is not None:
                break
            eid = None
        else:
            eid = tracker.find(pid, iid, now)
        if eid is None:
            if fields_size(fields) > MAX_NODE_SIZE:
                break
            found.append(-1)
            new_fields.append(fields)
            new_pairs.append(pair)
            recording.add(pid)
        else:
            found.append(eid)
        pairs.add(pair)
        k += 1
    if not k:
        return 0
    eids = s.add_many(new_fields, now) if new_fields else []
    added = len(eids)
    for j in range(added):
        pid, iid = new_pairs[j]
        tracker.record(pid, iid, eids[j])
    index = db.index
    if added:
        if created:
            db.add(key, s)
        else:
            db.signal_modified(key)
        keyspace = client.keyspace
        keyspace.dirty += added - 1  # one change per entry added, as one by one
        keyspace.signal_ready(index, key)
        notify_times(client, NOTIFY_STREAM, b"xadd", key, index, added)
    if added == k:
        # Every call added an entry: consecutive IDs.
        reply = id_run_reply(eids[0], added)
    else:
        replies: list[bytes] = []
        j = 0
        for eid in found:
            if eid < 0:
                eid = eids[j]
                j += 1
            sid = format_id(eid)
            replies.append(b"$%d\r\n%b\r\n" % (len(sid), sid))
        reply = b"".join(replies)
    effects = client.effects
    if effects.active and added:
        pending = effects.pending
        j = 0
        for i in range(k):
            if found[i] < 0:
                sid = format_id(eids[j])
                pid, iid = new_pairs[j]
                j += 1
                pending.append((index, [b"XADD", key, sid, *new_fields[j - 1]]))
                pending.append((index, [b"XIDMPRECORD", key, pid, iid, sid]))
    client.out.append(reply)
    return k


@command("xtrim", -4, "write", keys=(1, 1, 1), group="stream", since="5.0.0",
         summary="Deletes messages from the beginning of a stream.",
         complexity="O(N), with N being the number of evicted entries. Constant times are very "
         "small however, since entries are organized in macro nodes containing multiple entries "
         "that can be released with a single deallocation.",
         tips=("nondeterministic_output",), key_specs=key_spec(("RW", "DELETE")),
         history=(("6.2.0", "Added the `MINID` trimming strategy and the `LIMIT` option."),
                  _POLICY_HISTORY),
         arguments=(_KEY_ARG, {"name": "trim", "type": "block", "arguments": _TRIM_ARGS},
                    _TRIM_POLICY_ARG))
def xtrim(client: Client, argv: list[bytes]) -> Any:
    args = parse_add_or_trim(argv, xadd=False, replaying=client.is_loader)
    key = argv[1]
    s = get_stream(client, key)
    if s is None:
        return 0
    # DELREF may drop references to tombstones alone: a change to log though nothing is removed.
    pending = _pending_count(s) if args.policy == DELREF else 0
    removed = s.trim(maxlen=args.maxlen, minid=args.minid, approx=args.approx, limit=args.limit,
                     policy=args.policy)
    if removed:
        notify_keyspace_event(client, NOTIFY_STREAM, b"xtrim", key, client.db.index)
    if removed or (pending and _pending_count(s) != pending):
        client.db.signal_modified(key)
        # `~` depends on node boundaries: logged as the exact trim that removed the same entries.
        client.propagate([b"XTRIM", key, *_trim_effect(args, s)] if args.approx else argv)
    return removed


@command("xdel", -3, "write fast", keys=(1, 1, 1), group="stream", since="5.0.0",
         summary="Returns the number of messages after removing them from a stream.",
         complexity="O(1) for each single item to delete in the stream, regardless of the "
         "stream size.",
         key_specs=key_spec(("RW", "DELETE")),
         arguments=(_KEY_ARG, {"name": "ID", "type": "string", "multiple": True}))
def xdel(client: Client, argv: list[bytes]) -> Any:
    key = argv[1]
    s = get_stream(client, key)
    if s is None:
        return 0  # Redis looks the key up before parsing the IDs
    # Every ID is parsed before any is deleted: a bad ID must not leave the command half done.
    ids = [parse_strict_id(arg) for arg in argv[2:]]
    deleted = s.delete(ids)
    if deleted:
        client.db.signal_modified(key)
        notify_keyspace_event(client, NOTIFY_STREAM, b"xdel", key, client.db.index)
        client.propagate(argv)
    return deleted


def parse_ids_block(argv: list[bytes], start: int) -> tuple[int, list[int]]:
    """XDELEX / XACKDEL options from argv[start]: `[KEEPREF | DELREF | ACKED] IDS numids id ...`,
    in any order. Returns (policy, IDs), the IDs all parsed before anything is deleted.

    A policy given twice, IDS given twice, or anything else is a syntax error; numids must be
    a positive integer no greater than the arguments that follow (fewer IDs than that leaves
    the rest to be read as options, hence a syntax error).
    """
    argc = len(argv)
    policy = -1
    ids_at = -1
    numids = 0
    i = start
    while i < argc:
        low = argv[i].lower()
        if low in _POLICIES and policy < 0:
            policy = _POLICIES[low]
            i += 1
        elif low == b"ids" and ids_at < 0 and i + 1 < argc:
            numids = parse_int(argv[i + 1], _NUMIDS_NOT_POSITIVE)
            if numids < 1:
                raise _NUMIDS_NOT_POSITIVE
            if numids > argc - i - 2:
                raise _NUMIDS_MISMATCH
            ids_at = i + 2
            i = ids_at + numids
        else:
            raise SYNTAX_ERROR
    if ids_at < 0:
        raise SYNTAX_ERROR
    return (KEEPREF if policy < 0 else policy), parse_strict_ids(argv[ids_at:ids_at + numids])


@command("xdelex", -5, "write fast", keys=(1, 1, 1), group="stream", since="8.2.0",
         summary="Deletes one or multiple entries from the stream.",
         complexity="O(1) for each single item to delete in the stream, regardless of the "
         "stream size.",
         key_specs=key_spec(("RW", "DELETE")),
         arguments=(_KEY_ARG, DELETE_POLICY_ARG, IDS_ARG))
def xdelex(client: Client, argv: list[bytes]) -> Any:
    key = argv[1]
    s = get_stream(client, key)
    policy, ids = parse_ids_block(argv, 2)
    if s is None:
        return [-1] * len(ids)
    codes, changed = s.delete_ex(ids, policy)
    if changed:
        client.db.signal_modified(key)
        notify_keyspace_event(client, NOTIFY_STREAM, b"xdelex", key, client.db.index)
        # The same state replays the same deletions and PEL changes.
        client.propagate(argv)
    return codes


@command("xsetid", -3, "write denyoom fast", keys=(1, 1, 1), group="stream", since="5.0.0",
         summary="An internal command for replicating stream values.",
         key_specs=key_spec(("RW", "UPDATE")),
         history=(("7.0.0", "Added the `entries_added` and `max_deleted_entry_id` arguments."),),
         arguments=(
             _KEY_ARG, {"name": "last-id", "type": "string"},
             {"name": "entries-added", "token": "ENTRIESADDED", "type": "integer",
              "optional": True, "since": "7.0.0"},
             {"name": "max-deleted-id", "token": "MAXDELETEDID", "type": "string",
              "optional": True, "since": "7.0.0"},
         ))
def xsetid(client: Client, argv: list[bytes]) -> Any:
    last_id = parse_strict_id(argv[2])
    entries_added: int | None = None
    max_deleted: int | None = None
    argc = len(argv)
    i = 3
    # Each option is checked as soon as it is read, as Redis does: a later syntax error loses.
    while i < argc:
        opt = argv[i].lower()
        if opt == b"entriesadded" and i + 1 < argc:
            entries_added = parse_int(argv[i + 1])
            if entries_added < 0:
                raise _ENTRIES_ADDED_NEGATIVE
        elif opt == b"maxdeletedid" and i + 1 < argc:
            max_deleted = parse_strict_id(argv[i + 1])
            if last_id < max_deleted:
                raise _MAXDEL_GREATER
        else:
            raise SYNTAX_ERROR
        i += 2
    check_xsetid_args(last_id, entries_added, max_deleted)
    key = argv[1]
    s = get_stream(client, key)
    if s is None:
        return _NO_SUCH_KEY
    s.set_id(last_id, entries_added, max_deleted)
    # Redis counts the change but does not signal the key: WATCH is not invalidated by XSETID
    # there, and clients rely on Redis's behaviour.
    client.keyspace.dirty += 1
    notify_keyspace_event(client, NOTIFY_STREAM, b"xsetid", key, client.db.index)
    client.propagate(argv)
    return OK
