"""Stream read commands without consumer groups: XLEN, XRANGE, XREVRANGE, XREAD (with BLOCK)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.encoder import encode
from protocol.numbers import parse_int
from protocol.reply import NULL_ARRAY, ErrorReply, Raw
from protocol.stream_resp import append_run, entry_reply, reply_end, reply_start
from server.blocking import Block
from server.command_table import command, key_spec, streams_key_spec
from server.commands.block_timeout import parse_timeout_ms
from server.commands.stream_common import SYNTAX_ERROR, read_stream
from server.notify import NOTIFY_KEY_MISS, notify
from streams import Consumer, ConsumerGroup, Stream, format_id
from streams.ids import parse_range_end, parse_range_start, parse_read_id

if TYPE_CHECKING:
    from server.connection import Client
    from server.entry_cache import EntryCache

_UNBALANCED = ErrorReply("ERR Unbalanced 'xread' list of streams: for each stream key an ID or "
                         "'$' must be specified.")
_GROUP_ONLY = ErrorReply("ERR The GROUP option is only supported by XREADGROUP. You called XREAD "
                         "instead.")
_NOACK_ONLY = ErrorReply("ERR The NOACK option is only supported by XREADGROUP. You called XREAD "
                         "instead.")
MAXCOUNT_NOT_POSITIVE = ErrorReply("ERR MAXCOUNT must be positive")
MAXSIZE_NOT_POSITIVE = ErrorReply("ERR MAXSIZE must be positive")
MAXCOUNT_BELOW_COUNT = ErrorReply("ERR MAXCOUNT must be greater than or equal to COUNT")


_KEY_ARG = {"name": "key", "type": "key", "key_spec_index": 0}
_COUNT_ARG = {"token": "COUNT", "name": "count", "type": "integer", "optional": True}
MAXCOUNT_ARG = {"token": "MAXCOUNT", "name": "maxcount", "type": "integer", "optional": True,
                "since": "8.10.0"}
MAXSIZE_ARG = {"token": "MAXSIZE", "name": "maxsize", "type": "integer", "optional": True,
               "since": "8.10.0"}


# --- XLEN --------------------------------------------------------------------------------------


@command("xlen", 2, "readonly fast", keys=(1, 1, 1), group="stream", since="5.0.0",
         summary="Return the number of messages in a stream.", key_specs=key_spec(("RO",)),
         arguments=(_KEY_ARG,))
def xlen(client: Client, argv: list[bytes]) -> Any:
    s = read_stream(client, argv[1])
    return 0 if s is None else s.store.length


# --- XRANGE / XREVRANGE ------------------------------------------------------------------------


def _range(client: Client, argv: list[bytes], reverse: bool) -> Any:
    # Redis parses the low bound first: for XREVRANGE that is the *second* ID argument.
    if reverse:
        start, end = parse_range_start(argv[3]), parse_range_end(argv[2])
    else:
        start, end = parse_range_start(argv[2]), parse_range_end(argv[3])
    count = -1  # not given
    argc = len(argv)
    j = 4
    while j < argc:
        if argv[j].lower() == b"count" and j + 1 < argc:
            count = max(parse_int(argv[j + 1]), 0)
            j += 2
        else:
            raise SYNTAX_ERROR
    s = read_stream(client, argv[1])
    if s is None:
        return []  # a missing key wins over COUNT 0's null
    if count == 0:
        return NULL_ARRAY
    runs = s.range_runs(start, end, count if count > 0 else None, reverse)
    return client.server.entry_cache.reply(runs, reverse)


_RANGE_COMPLEXITY = ("O(N) with N being the number of elements {}. If N is constant (e.g. always "
                     "asking for the first 10 elements with COUNT), you can consider it O(1).")
_RANGE_SPEC = key_spec(("RO", "ACCESS"))


@command("xrange", -4, "readonly", keys=(1, 1, 1), group="stream", since="5.0.0",
         summary="Returns the messages from a stream within a range of IDs.",
         complexity=_RANGE_COMPLEXITY.format("being returned"), key_specs=_RANGE_SPEC,
         history=(("6.2.0", "Added exclusive ranges."),),
         arguments=(_KEY_ARG, {"name": "start", "type": "string"},
                    {"name": "end", "type": "string"}, _COUNT_ARG))
def xrange(client: Client, argv: list[bytes]) -> Any:
    return _range(client, argv, reverse=False)


@command("xrevrange", -4, "readonly", keys=(1, 1, 1), group="stream", since="5.0.0",
         summary="Returns the messages from a stream within a range of IDs in reverse order.",
         complexity=_RANGE_COMPLEXITY.format("returned"), key_specs=_RANGE_SPEC,
         history=(("6.2.0", "Added exclusive ranges."),),
         arguments=(_KEY_ARG, {"name": "end", "type": "string"},
                    {"name": "start", "type": "string"}, _COUNT_ARG))
def xrevrange(client: Client, argv: list[bytes]) -> Any:
    return _range(client, argv, reverse=True)


# --- XREAD -------------------------------------------------------------------------------------


def xread_key_positions(argv: list[bytes]) -> list[int]:
    """Key indexes of an XREAD / XREADGROUP argv (Redis's xreadGetKeys): [] when malformed.

    Options are skipped by name so that a key or group called "STREAMS" is not mistaken for it.
    """
    argc = len(argv)
    i = 1
    streams = -1
    while i < argc:
        opt = argv[i].lower()
        if opt == b"block" or opt == b"count" or opt == b"maxcount" or opt == b"maxsize" \
                or opt == b"claim":
            i += 2
        elif opt == b"group":
            i += 3
        elif opt == b"noack":
            i += 1
        elif opt == b"streams":
            streams = i
            break
        else:
            break
    if streams < 0:
        return []
    num = argc - streams - 1
    if num == 0 or num & 1:
        return []
    return list(range(streams + 1, streams + 1 + num // 2))


def xread_reply(client: Client, served: list[tuple[bytes, Any]]) -> Any:
    """[[key, entries], ...] in RESP2; a key -> entries map in RESP3 (Redis 7.4)."""
    if not client.resp3:
        if len(served) == 1 and type(served[0][1]) is Raw:
            # The usual read of one stream, encoded here rather than walked by the encoder.
            key, entries = served[0]
            return Raw(b"*1\r\n*2\r\n$%d\r\n%b\r\n%b" % (len(key), key, entries))
        return [[key, entries] for key, entries in served]
    reply = {key: entries for key, entries in served}
    if len(reply) == len(served):
        return reply
    # The same key named twice is served twice, and a map reply may repeat it as Redis does;
    # a dict cannot hold that, so the map is encoded here.
    parts = [b"%%%d\r\n" % len(served)]
    for key, entries in served:
        parts.append(encode(key, True))
        parts.append(encode(entries, True))
    return Raw(b"".join(parts))


# --- MAXCOUNT / MAXSIZE ---------------------------------------------------------------------


def parse_limit(arg: bytes, not_positive: ErrorReply) -> int:
    """MAXCOUNT's or MAXSIZE's value: a positive integer."""
    n = parse_int(arg)
    if n <= 0:
        raise not_positive
    return n


_FIRST_CHUNK = 8  # entries measured first under MAXSIZE, then twice as many each time


class ReplyBudget:
    """What MAXCOUNT and MAXSIZE leave of one XREAD / XREADGROUP reply, spent stream by stream
    in the order the streams were named.

    MAXCOUNT caps the entries of all streams together: each stream gets at most what is left of
    it (and at most COUNT), and once none is left the streams after are not read at all. MAXSIZE
    is a soft cap on the reply's bytes, checked before each entry as Redis checks its output
    counter: an entry is sent while the bytes written so far are under the cap, so the entry
    that crosses it is sent whole, and the first entry of the reply always is. Bytes are counted
    as Redis counts them at that point: array lengths it only writes once a stream (or the
    reply) is complete do not count yet, the RESP2 pair around a key and the key itself do.
    """

    __slots__ = ("maxcount", "maxsize", "emitted", "used", "resp3")

    def __init__(self, maxcount: int, maxsize: int, resp3: bool) -> None:
        self.maxcount = maxcount  # 0: no cap
        self.maxsize = maxsize  # 0: no cap
        self.emitted = 0  # entries sent so far, all streams
        self.used = 0  # reply bytes written so far
        self.resp3 = resp3

    def exhausted(self) -> bool:
        """Nothing more may be sent: the streams not read yet are left out of the reply."""
        if self.maxcount and self.emitted >= self.maxcount:
            return True
        return self.maxsize > 0 and self.emitted > 0 and self.used >= self.maxsize

    def open_stream(self, key: bytes) -> None:
        """A stream's key is written (before its entries)."""
        if self.maxsize:
            n = len(key)
            self.used += len(b"$%d\r\n" % n) + n + 2 + (0 if self.resp3 else 4)

    def cap(self, count: int | None) -> int | None:
        """The per-stream count left by MAXCOUNT (None: no limit)."""
        if not self.maxcount:
            return count
        left = self.maxcount - self.emitted
        return left if count is None or count > left else count

    def _fits(self, size: int) -> bool:
        if self.emitted and self.used >= self.maxsize:
            return False
        self.used += size
        self.emitted += 1
        return True

    def take_after(self, s: Stream, after: int, count: int | None,
                   keep: list[bytes] | None = None) -> int:
        """How many of the entries after `after` (at most `count`) are sent; they are spent.

        Under MAXSIZE each entry's encoding is measured, in chunks that double from a few
        entries: the cap usually binds long before the end of a backlog. The encodings of the
        entries taken are appended to `keep` when given (stream_resp's per-entry pieces)."""
        if not self.maxsize:
            n = 0
            for run in s.runs_after(after, count):
                n += run.hi - run.lo
            self.emitted += n
            return n
        taken = 0
        chunk = _FIRST_CHUNK
        scratch: list[bytes] = []
        while count is None or taken < count:
            want = chunk if count is None or count - taken > chunk else count - taken
            runs = s.runs_after(after, want)
            got = 0
            for run in runs:
                each: list[bytes] = []
                append_run(scratch, run, False, each)
                if scratch:  # the run's last entry
                    each.append(b"".join(scratch))
                    del scratch[:]
                for piece in each:
                    # An entry's encoding starts with the CRLF before it and lacks its own:
                    # as long as the bytes it adds to the reply.
                    if not self._fits(len(piece)):
                        return taken
                    taken += 1
                    if keep is not None:
                        keep.append(piece)
                got += run.hi - run.lo
            if got < want:
                break  # the stream's end
            after = runs[-1].ids()[-1]
            chunk *= 2
        return taken

    def take_history(self, g: ConsumerGroup, s: Stream, c: Consumer, after: int,
                     count: int | None) -> int:
        """How many of the consumer's pending entries after `after` (at most `count`) are sent;
        they are spent. A pending entry deleted from the stream is sent with a nil."""
        if not self.maxsize:
            n = len(g.peek_history(s, c, after, count))
            self.emitted += n
            return n
        resp3 = self.resp3
        taken = 0
        chunk = _FIRST_CHUNK
        while count is None or taken < count:
            want = chunk if count is None or count - taken > chunk else count - taken
            entries = g.peek_history(s, c, after, want)
            for eid, fields in entries:
                reply = entry_reply(eid, NULL_ARRAY if fields is None else fields)
                if not self._fits(len(encode(reply, resp3))):
                    return taken
                taken += 1
            if len(entries) < want:
                break
            after = entries[-1][0]
            chunk *= 2
        return taken


def _serve_budget(cache: EntryCache, keys: list[bytes], values: list[Stream | None],
                  after: list[int], count: int | None,
                  budget: ReplyBudget) -> list[tuple[bytes, Any]]:
    """`_serve` under MAXCOUNT / MAXSIZE."""
    served: list[tuple[bytes, Any]] = []
    for j in range(len(keys)):
        s = values[j]
        if s is None:
            continue
        if budget.exhausted():
            break
        if not s.runs_after(after[j], 1):
            continue  # nothing to read: neither the key nor any bytes
        key = keys[j]
        budget.open_stream(key)
        # Under MAXSIZE the entries were encoded to be measured: the reply is made of those.
        pieces: list[bytes] | None = [] if budget.maxsize else None
        n = budget.take_after(s, after[j], budget.cap(count), pieces)
        if n == 0:
            # The key was written before the cap was found reached: Redis sends it with no
            # entries then.
            served.append((key, []))
        elif pieces is not None:
            parts = reply_start(n)
            parts += pieces
            served.append((key, reply_end(parts)))
        else:
            served.append((key, cache.reply(s.runs_after(after[j], n), False)))
    return served


def _serve(cache: EntryCache, keys: list[bytes], values: list[Stream | None], after: list[int],
           count: int | None) -> list[tuple[bytes, Any]]:
    """Read every stream among `values` (the keys' values, None when missing) after its ID."""
    served = []
    # Indexes, not zip(): compiled, zip() is a generic call (a woken XREAD runs this again).
    for j in range(len(keys)):
        s = values[j]
        if s is None:
            continue
        runs = s.runs_after(after[j], count)
        if runs:
            key = keys[j]
            served.append((key, cache.reply(runs, False)))
    return served


@command("xread", -4, "blocking readonly", group="stream", since="5.0.0",
         summary="Returns messages from multiple streams with IDs greater than the ones "
         "requested. Blocks until a message is available otherwise.",
         complexity="", key_finder=xread_key_positions,
         key_specs=streams_key_spec(1, "Incomplete because a stream key named STREAMS (or "
                                    "options before it) can shift the STREAMS keyword; fall "
                                    "back to xreadGetKeys"),
         history=(("8.10.0", "Added the `MAXCOUNT` and `MAXSIZE` options."),),
         arguments=(
             _COUNT_ARG,
             MAXCOUNT_ARG,
             MAXSIZE_ARG,
             {"token": "BLOCK", "name": "milliseconds", "type": "integer", "optional": True},
             {"name": "streams", "token": "STREAMS", "type": "block", "arguments": (
                 {"name": "key", "type": "key", "key_spec_index": 0, "multiple": True},
                 {"name": "ID", "type": "string", "multiple": True})},
         ))
def xread(client: Client, argv: list[bytes]) -> Any:
    argc = len(argv)
    timeout = -1  # no BLOCK
    count = 0
    maxcount = maxsize = 0
    streams_at = 0
    i = 1
    while i < argc:
        opt = argv[i].lower()
        more = i + 1 < argc
        if opt == b"block" and more:
            timeout = parse_timeout_ms(argv[i + 1])
            i += 1
        elif opt == b"count" and more:
            count = max(parse_int(argv[i + 1]), 0)
            i += 1
        elif opt == b"streams" and more:
            streams_at = i + 1
            if (argc - streams_at) & 1:
                raise _UNBALANCED
            break
        elif opt == b"maxcount" and more:
            maxcount = parse_limit(argv[i + 1], MAXCOUNT_NOT_POSITIVE)
            i += 1
        elif opt == b"maxsize" and more:
            maxsize = parse_limit(argv[i + 1], MAXSIZE_NOT_POSITIVE)
            i += 1
        elif opt == b"group" and i + 2 < argc:
            raise _GROUP_ONLY
        elif opt == b"noack":
            raise _NOACK_ONLY
        else:
            raise SYNTAX_ERROR
        i += 1
    if not streams_at:
        raise SYNTAX_ERROR
    if maxcount and maxcount < count:
        raise MAXCOUNT_BELOW_COUNT
    n = (argc - streams_at) // 2
    keys = argv[streams_at:streams_at + n]
    db = client.db
    # One pass in key order: a key's type is checked before its ID is parsed, as in Redis, so
    # the first failing key decides the error. `$` and `+` are resolved against the data now.
    after: list[int] = []
    values: list[Stream | None] = []
    for j in range(n):
        s: Stream | None = db.read_typed(keys[j], Stream)
        spec = parse_read_id(argv[streams_at + n + j], group=False)
        if type(spec) is not int:
            spec = 0 if s is None else s.resolve_read_id(spec)
        after.append(spec)
        values.append(s)
    if db.keyspace.notify_flags & NOTIFY_KEY_MISS:
        # Redis looks every key up a second time to serve it: a missing key is a second miss.
        for j in range(n):
            if values[j] is None:
                notify(db.keyspace, NOTIFY_KEY_MISS, b"keymiss", keys[j], db.index)
    if maxcount or maxsize:
        served = _serve_budget(client.server.entry_cache, keys, values, after, count or None,
                               ReplyBudget(maxcount, maxsize, client.resp3))
    else:
        served = _serve(client.server.entry_cache, keys, values, after, count or None)
    if served:
        return xread_reply(client, served)
    if timeout < 0:
        return NULL_ARRAY
    return Block(keys, timeout, NULL_ARRAY, _rerun_argv(argv, streams_at + n, after), Stream)


def _rerun_argv(argv: list[bytes], ids_at: int, after: list[int]) -> list[bytes] | None:
    """argv with each `$` replaced by the ID it stood for now, as Redis rewrites it when
    blocking, so that the woken command reads what came after; None when there is none.
    `+` is not rewritten (nor is it by Redis): the woken command resolves it again."""
    rerun = None
    for j, spec in enumerate(after):
        if argv[ids_at + j] == b"$":
            if rerun is None:
                rerun = list(argv)
            rerun[ids_at + j] = format_id(spec)
    return rerun
