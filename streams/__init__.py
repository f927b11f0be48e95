"""Rivulet's stream engine: Redis 7.4 stream semantics as pure data structures.

No I/O, RESP, asyncio or clock here: callers parse arguments, pass `now_ms`, and turn results
into replies. Every error is a `StreamError` whose `str()` is Redis's exact text with its prefix
("ERR ...", "NOGROUP ...", "BUSYGROUP ..."): reply with it verbatim.

IDs are ints `ms << 64 | seq` (`make_id`, `format_id` -> b"ms-seq"). Fields are flat lists
`[f1, v1, f2, v2, ...]` of bytes; an entry is `(id, fields)`.

Guide for the command layer
---------------------------
Parsing (streams.ids) — one function per Redis context, each raising Redis's error:

* XADD id ............ `parse_xadd_id(arg)` -> None for `*`, else (id, seq_given)
* XRANGE / XREVRANGE . `parse_range_start(arg)`, `parse_range_end(arg)` (`(` exclusive, `-`, `+`)
  XPENDING start/end and XAUTOCLAIM start use the same two functions.
* XDEL, XACK, XCLAIM ids and LASTID, XSETID id / MAXDELETEDID, MINID: `parse_strict_id(arg)`
* XREAD / XREADGROUP . `parse_read_id(arg, group=...)` -> int | LAST (`$`) | LAST_ENTRY (`+`)
  | NEW (`>`); `Stream.resolve_read_id(spec)` turns LAST / LAST_ENTRY into an int (use 0 when
  the key is missing).
* XGROUP CREATE / SETID: `parse_group_id(arg, setid=...)` -> int | LAST.
* `incr_id`, `decr_id` return None on overflow.

Commands (streams.stream.Stream, streams.groups.ConsumerGroup):

* XADD ......... `s.add(fields, now_ms=..., id=None|int, seq_given=True)` -> new id; then, for
  MAXLEN/MINID, `s.trim(maxlen=|minid=, approx=, limit=)`. Create the key with
  `Stream(node_max_entries, node_max_bytes)` (stream-node-max-entries / -bytes) only after
  argument errors are excluded (XADD 0-0 is checked by `add` before touching the stream).
  For `~` propagation Redis rewrites the argument to `s.length` (MAXLEN) or
  `s.first_id_with_tombstones()` (MINID).
* XTRIM ........ `s.trim(maxlen=n | minid=id, approx=bool, limit=None|int)` -> removed count.
  limit None = not given (`~` uses `s.default_trim_limit`); 0 = unlimited.
  `policy=KEEPREF | DELREF | ACKED` (Redis 8.2's options of XADD / XTRIM).
* XDEL ......... `s.delete(ids)` -> count.  XLEN: `len(s)` / `s.length`.
* XDELEX ....... `s.delete_ex(ids, policy)` -> (per-ID codes -1 / 1 / 2, changed).
* XACKDEL ...... `s.ack_delete(group, ids, policy)` -> per-ID codes -1 / 1 / 2.
* XRANGE ....... `s.range(start, end, count)`; XREVRANGE: `s.range(start, end, count,
  reverse=True)` where start is the parsed second argument (the low bound).
* XREAD ........ `s.read_after(id, count)`; serve synchronously when the result is non-empty.
* Bulk reads ... `s.range_runs(start, end, count, reverse)` and `s.runs_after(id, count)` give
  the same entries as `Run`s (storage.Run): consecutive entries of one node in their packed
  form, for an encoder that writes a reply straight from them (protocol/stream_resp.py).
* XSETID ....... `check_xsetid_args(id, entries_added, max_deleted_id)` before the key lookup,
  then `s.set_id(id, entries_added, max_deleted_id)` (None = option absent).
* XGROUP CREATE  `s.create_group(name, id_or_LAST, entries_read)`; ENTRIESREAD is validated by
  `normalize_entries_read` (-1 or None = unknown). SETID: `g.set_id(id, entries_read)` (resolve
  `$` to `s.last_id`). DESTROY: `s.destroy_group(name)` -> bool. CREATECONSUMER:
  `g.create_consumer(name, now_ms)` -> bool. DELCONSUMER: `g.delete_consumer(name)` -> pending.
  Missing groups: `s.get_group(name)` is None -> raise `nogroup_for_key(key, group)`.
* XREADGROUP ... `g = s.get_group(name)` (None -> `nogroup_xreadgroup(key, group)`), then
  `c, created = g.touch_consumer(consumer, now_ms)`, then for `>`:
  `g.read_new(s, c, count, noack, now_ms)` (empty list = nothing to serve: block or nil), or
  `g.deliver_new(...)` for the same as runs and their IDs;
  for an ID: `g.read_history(s, c, after_id, count, now_ms)` -> [(id, fields | None)], always
  part of the reply.
* XACK ......... `g.ack(ids)` -> count (missing key/group: reply 0).
* XPENDING ..... `g.pending_summary()` -> (count, min_id|None, max_id|None, [(name, n)]);
  `g.pending_range(start, end, count, now_ms, consumer=None, min_idle=0)` ->
  [(id, consumer_name, idle_ms, delivery_count)]. Missing key/group -> `nogroup(key, group)`.
* XCLAIM ....... `c, _ = g.touch_consumer(...)`; `g.claim(s, c, ids, min_idle, now_ms,
  delivery_time=, retry_count=, force=, justid=, last_id=)` -> ids (JUSTID) or entries.
* XAUTOCLAIM ... `g.autoclaim(s, c, start, min_idle, now_ms, count=100, justid=False)` ->
  (cursor_id, ids or entries, deleted_ids).
* XINFO STREAM . `s.info()` / `s.info_full(count)`; GROUPS: `[g.info(s) for g in
  s.iter_groups()]`; CONSUMERS: `g.consumers_info(now_ms)`. Dict keys are Redis's field names
  in reply order; IDs are ints, None means a nil reply.
"""

from .errors import StreamError, nogroup, nogroup_for_key, nogroup_xreadgroup
from .groups import (
    NACK_FAIL,
    NACK_FATAL,
    NACK_SILENT,
    Consumer,
    ConsumerGroup,
    PendingEntry,
    normalize_entries_read,
)
from .ids import (
    LAST,
    LAST_ENTRY,
    MAX_ID,
    MIN_ID,
    NEW,
    decr_id,
    format_id,
    id_ms,
    id_seq,
    incr_id,
    make_id,
    parse_group_id,
    parse_id,
    parse_range_end,
    parse_range_start,
    parse_read_id,
    parse_strict_id,
    parse_strict_ids,
    parse_xadd_id,
)
from .storage import EntryStore, Run
from .stream import ACKED, DELREF, KEEPREF, Stream, check_xsetid_args, default_trim_limit

__all__ = [
    "ACKED",
    "DELREF",
    "KEEPREF",
    "LAST",
    "LAST_ENTRY",
    "MAX_ID",
    "MIN_ID",
    "NEW",
    "Consumer",
    "ConsumerGroup",
    "EntryStore",
    "PendingEntry",
    "NACK_SILENT",
    "NACK_FAIL",
    "NACK_FATAL",
    "Run",
    "Stream",
    "StreamError",
    "check_xsetid_args",
    "decr_id",
    "default_trim_limit",
    "format_id",
    "id_ms",
    "id_seq",
    "incr_id",
    "make_id",
    "nogroup",
    "nogroup_for_key",
    "nogroup_xreadgroup",
    "normalize_entries_read",
    "parse_group_id",
    "parse_id",
    "parse_range_end",
    "parse_range_start",
    "parse_read_id",
    "parse_strict_id",
    "parse_strict_ids",
    "parse_xadd_id",
]
