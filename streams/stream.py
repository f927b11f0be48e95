"""`Stream`: a stream value with Redis's metadata, entry operations and consumer groups."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import islice
from typing import Any

from .errors import (
    BUSYGROUP,
    TOO_LARGE,
    XADD_EXHAUSTED,
    XADD_TOO_SMALL,
    XADD_ZERO,
    XREAD_PLUS_EMPTY,
    XSETID_CURRENT_MAXDEL,
    XSETID_ENTRIES_ADDED,
    XSETID_ENTRIES_ADDED_NEGATIVE,
    XSETID_PROVIDED_MAXDEL,
    XSETID_SMALLER_THAN_TOP,
    StreamError,
)
from .groups import ConsumerGroup
from .idempotency import Idempotency
from .ids import LAST, LAST_ENTRY, MAX_ID, MIN_ID, U64, incr_id
from .storage import MAX_NODE_SIZE, EntryStore, Run, fields_size

Entry = tuple[int, list[bytes]]


def default_trim_limit(node_max_entries: int) -> int:
    """LIMIT used by `~` trimming when none is given: 100 nodes' worth, within [1, 1e6]."""
    limit = 100 * node_max_entries
    if limit <= 0:
        return 10000
    return min(limit, 1_000_000)


def check_xsetid_args(last_id: int, entries_added: int | None, max_deleted_id: int | None) -> None:
    """XSETID checks Redis makes before looking the key up (so they win over "no such key")."""
    if entries_added is not None and entries_added < 0:
        raise StreamError(XSETID_ENTRIES_ADDED_NEGATIVE)
    if max_deleted_id is not None and last_id < max_deleted_id:
        raise StreamError(XSETID_PROVIDED_MAXDEL)


class Stream:
    """A Redis stream. IDs are ints (see `streams.ids`); fields are flat lists of bytes.

    Public metadata (read it, do not assign it except through the methods):
    `last_id` (last generated ID), `max_deleted_id` (max-deleted-entry-id), `entries_added`,
    `first_id` (recorded-first-entry-id, 0 when empty), `groups` (name -> ConsumerGroup;
    use `iter_groups()` for Redis's name order), `length` (live entries) and `idmp` (the
    idempotent producers' state, see `streams.idempotency`).
    """

    __slots__ = ("store", "last_id", "max_deleted_id", "entries_added", "first_id", "groups",
                 "idmp")

    def __init__(self, node_max_entries: int = 100, node_max_bytes: int = 4096) -> None:
        self.store = EntryStore(node_max_entries, node_max_bytes)
        self.last_id = 0
        self.max_deleted_id = 0
        self.entries_added = 0
        self.first_id = 0
        self.groups: dict[bytes, ConsumerGroup] = {}
        self.idmp = Idempotency()

    def __len__(self) -> int:
        return self.store.length

    def copy(self) -> Stream:
        """An independent deep copy (COPY): entries, metadata, and groups with their PELs."""
        new = Stream()
        new.store = self.store.copy()
        new.last_id = self.last_id
        new.max_deleted_id = self.max_deleted_id
        new.entries_added = self.entries_added
        new.first_id = self.first_id
        new.groups = {name: g.copy() for name, g in self.groups.items()}
        new.idmp = self.idmp.copy()
        return new

    @property
    def length(self) -> int:
        return self.store.length

    def set_node_limits(self, node_max_entries: int, node_max_bytes: int) -> None:
        """Apply stream-node-max-entries / -bytes (they affect nodes started from now on)."""
        self.store.node_max_entries = node_max_entries
        self.store.node_max_bytes = node_max_bytes

    # --- XADD ------------------------------------------------------------------------------

    def add(
        self,
        fields: Sequence[bytes],
        *,
        now_ms: int,
        id: int | None = None,
        seq_given: bool = True,
    ) -> int:
        """XADD: append an entry and return its ID.

        `id=None` is `*` (ID from `now_ms`, never going backwards); otherwise `id` with
        `seq_given=False` is `ms-*` (sequence chosen here), as returned by `ids.parse_xadd_id`.
        Raises StreamError with XADD's texts ("must be greater than 0-0", "equal or smaller
        than the target stream top item", "exhausted the last possible ID", "too large").
        Trimming (MAXLEN/MINID) is a separate call to `trim`, done after the add as in Redis.
        """
        if id is not None and seq_given and id == 0:
            raise StreamError(XADD_ZERO)
        last = self.last_id
        if last == MAX_ID:
            raise StreamError(XADD_EXHAUSTED)
        if id is None:
            ms = now_ms if now_ms > 0 else 0
            new = ms << 64 if ms > last >> 64 else last + 1  # seq overflow carries into ms
        elif not seq_given:
            ms = id >> 64
            if ms == last >> 64:
                if last & U64 == U64:
                    raise StreamError(XADD_TOO_SMALL)
                new = last + 1
            else:
                new = id
        else:
            new = id
        if new <= last:
            raise StreamError(XADD_TOO_SMALL)
        size = fields_size(fields)
        if size > MAX_NODE_SIZE:
            raise StreamError(TOO_LARGE)
        self.store.append(new, fields, size)
        self.entries_added += 1
        self.last_id = new
        if self.store.length == 1:
            self.first_id = new
        return new

    def add_many(self, entries: Iterable[Sequence[bytes]], now_ms: int) -> list[int]:
        """`add` with an auto ID (`*`) for each entry in turn, as that many XADDs would; the IDs.

        Stops before an entry `add` would refuse (IDs exhausted, entry too large), so the
        caller can add that one alone and get its error.
        """
        last = self.last_id
        if last == MAX_ID:
            return []
        entries = list(entries)
        sizes = [fields_size(fields) for fields in entries]
        for i, size in enumerate(sizes):
            if size > MAX_NODE_SIZE:
                del entries[i:]
                break
        ms = now_ms if now_ms > 0 else 0
        first = ms << 64 if ms > last >> 64 else last + 1
        # IDs are consecutive integers (a sequence overflow carries into the milliseconds).
        k = min(len(entries), MAX_ID - first + 1)
        if k <= 0:
            return []
        ids = list(range(first, first + k))
        self.store.extend(ids, entries, sizes)
        self.entries_added += k
        self.last_id = ids[-1]
        if self.store.length == k:
            self.first_id = first
        return ids

    # --- reads -----------------------------------------------------------------------------

    def range(
        self, start: int = MIN_ID, end: int = MAX_ID, count: int | None = None, reverse: bool = False,
    ) -> list[Entry]:
        """XRANGE (reverse=False) / XREVRANGE (reverse=True): live entries with start <= ID <= end.

        `start`/`end` are inclusive ints (see `ids.parse_range_start/_end`; for XREVRANGE pass
        the parsed *second* argument as `start`). count None or 0 = no limit (XRANGE COUNT 0
        replies with a null array: that is the command layer's business).
        """
        if count is not None and count <= 0:
            count = None
        return list(islice(self.store.iter_range(start, end, reverse), count))

    def range_runs(
        self, start: int, end: int, count: int | None = None, reverse: bool = False
    ) -> list[Run]:
        """`range` as storage runs (`storage.Run`), for readers that encode them directly."""
        return self.store.runs(start, end, reverse, count)

    def read_after(self, after: int, count: int | None = None) -> list[Entry]:
        """XREAD: entries with ID > after (empty if none). count None or 0 = no limit."""
        start = incr_id(after)
        if start is None:
            return []
        return self.range(start, MAX_ID, count)

    def runs_after(self, after: int, count: int | None = None) -> list[Run]:
        """`read_after` as storage runs (`storage.Run`)."""
        start = incr_id(after)
        if start is None:
            return []
        return self.store.runs_from(start, count)

    def resolve_read_id(self, spec: int | str) -> int:
        """Turn XREAD's `$` (ids.LAST) or `+` (ids.LAST_ENTRY) into an ID; ints pass through."""
        if spec == LAST:
            return self.last_id
        if spec == LAST_ENTRY:
            if self.last_id == 0:
                raise StreamError(XREAD_PLUS_EMPTY)
            return self.last_id - 1
        assert isinstance(spec, int)
        return spec

    def get(self, eid: int) -> list[bytes] | None:
        """Fields of entry `eid`, or None if it does not exist (deleted, trimmed, never added)."""
        return self.store.get(eid)

    def contains(self, eid: int) -> bool:
        return self.store.contains(eid)

    def first_entry(self) -> Entry | None:
        r = self.range(MIN_ID, MAX_ID, 1)
        return r[0] if r else None

    def last_entry(self) -> Entry | None:
        r = self.range(MIN_ID, MAX_ID, 1, reverse=True)
        return r[0] if r else None

    def last_valid_id(self) -> int:
        """ID of the last live entry, 0 if the stream is empty (streamLastValidID)."""
        eid = self.store.edge_id(first=False, skip_tombstones=True)
        return 0 if eid is None else eid

    def first_id_with_tombstones(self) -> int:
        """First ID stored, tombstones included (what Redis propagates after `~` MINID trims)."""
        eid = self.store.edge_id(first=True, skip_tombstones=False)
        return MAX_ID if eid is None else eid

    # --- XDEL / XTRIM ----------------------------------------------------------------------

    def delete(self, ids: Iterable[int]) -> int:
        """XDEL: delete the given IDs, returning how many existed.

        Updates max_deleted_id to the largest deleted ID and the recorded first ID.
        """
        deleted = 0
        first_gone = False
        store = self.store
        for eid in ids:
            if store.delete(eid):
                if eid == self.first_id:
                    first_gone = True
                if eid > self.max_deleted_id:
                    self.max_deleted_id = eid
                deleted += 1
        if deleted:
            if store.length == 0:
                self.first_id = 0
            elif first_gone:
                self.first_id = self._first_live()
        return deleted

    def _first_live(self) -> int:
        eid = self.store.edge_id(first=True, skip_tombstones=True)
        return MAX_ID if eid is None else eid

    @property
    def default_trim_limit(self) -> int:
        return default_trim_limit(self.store.node_max_entries)

    def trim(
        self,
        *,
        maxlen: int | None = None,
        minid: int | None = None,
        approx: bool = False,
        limit: int | None = None,
    ) -> int:
        """XTRIM / XADD trimming; give exactly one of maxlen (MAXLEN) or minid (MINID).

        approx=True is `~` (only whole nodes are removed). `limit` is the LIMIT argument: None
        means "not given" (for `~`: `default_trim_limit`; for `=`: unlimited), 0 means no
        limit. (LIMIT without `~` is a syntax error for the command layer to raise; replicated
        commands pass limit=0.) Returns the number of entries removed. max_deleted_id is not
        changed by trimming, as in Redis.
        """
        if (maxlen is None) == (minid is None):
            raise ValueError("give exactly one of maxlen and minid")
        if limit is None:
            limit = self.default_trim_limit if approx else 0
        deleted = self.store.trim(maxlen, minid, approx, limit)
        if self.store.length == 0:
            self.first_id = 0
        elif deleted:
            self.first_id = self._first_live()
        return deleted

    # --- XSETID ----------------------------------------------------------------------------

    def set_id(
        self, last_id: int, entries_added: int | None = None, max_deleted_id: int | None = None
    ) -> None:
        """XSETID id [ENTRIESADDED n] [MAXDELETEDID id], with Redis's checks and texts.

        None means the option was not given (max_deleted_id 0-0 also leaves it unchanged).
        """
        check_xsetid_args(last_id, entries_added, max_deleted_id)
        if last_id < self.max_deleted_id:
            raise StreamError(XSETID_CURRENT_MAXDEL)
        if self.store.length > 0:
            if last_id < self.last_valid_id():
                raise StreamError(XSETID_SMALLER_THAN_TOP)
            if entries_added is not None and self.store.length > entries_added:
                raise StreamError(XSETID_ENTRIES_ADDED)
        self.last_id = last_id
        if entries_added is not None:
            self.entries_added = entries_added
        if max_deleted_id:
            self.max_deleted_id = max_deleted_id

    # --- lag support (t_stream.c streamRangeHasTombstones / ...EstimateDistance...) --------

    def range_has_tombstones(self, start: int | None, end: int | None) -> bool:
        """Might [start, end] (None = open) contain a deleted entry? Uses max_deleted_id only."""
        if not self.store.length or not self.max_deleted_id:
            return False
        if self.first_id > self.max_deleted_id:
            return False
        lo = 0 if start is None else start
        hi = MAX_ID if end is None else end
        return lo <= self.max_deleted_id <= hi

    def estimate_distance(self, eid: int) -> int | None:
        """The logical read counter of `eid` (entries added up to it), or None if unknowable."""
        if not self.entries_added:
            return 0
        if not self.store.length and eid <= self.last_id:
            return self.entries_added
        if eid == self.last_id:
            return self.entries_added
        if eid > self.last_id:
            return None
        if not self.max_deleted_id or self.max_deleted_id < self.first_id:
            if eid < self.first_id:
                return self.entries_added - self.store.length
            if eid == self.first_id:
                return self.entries_added - self.store.length + 1
        return None

    # --- consumer groups -------------------------------------------------------------------

    def create_group(self, name: bytes, last_id: int | str, entries_read: int | None = None) -> ConsumerGroup:
        """XGROUP CREATE: `last_id` may be ids.LAST (`$`). entries_read None or -1 = unknown.

        Raises "BUSYGROUP Consumer Group name already exists".
        """
        if name in self.groups:
            raise StreamError(BUSYGROUP)
        if last_id == LAST:
            last_id = self.last_id
        assert isinstance(last_id, int)
        group = ConsumerGroup(name, last_id, entries_read)
        self.groups[name] = group
        return group

    def get_group(self, name: bytes) -> ConsumerGroup | None:
        return self.groups.get(name)

    def destroy_group(self, name: bytes) -> bool:
        """XGROUP DESTROY: True if the group existed."""
        return self.groups.pop(name, None) is not None

    def iter_groups(self) -> list[ConsumerGroup]:
        """Groups in Redis's order (a rax: byte-wise ascending names)."""
        return [self.groups[k] for k in sorted(self.groups)]

    # --- XINFO -----------------------------------------------------------------------------

    def node_count(self) -> int:
        return self.store.node_count()

    def info(self) -> dict[str, Any]:
        """XINFO STREAM (no FULL): keys and values in Redis's reply order.

        IDs are ints, entries are (id, fields) or None. `radix-tree-keys` is the node count;
        `radix-tree-nodes` is an estimate of the rax nodes Redis would use for as many keys.
        """
        d = self._info_head()
        d["groups"] = len(self.groups)
        d["first-entry"] = self.first_entry()
        d["last-entry"] = self.last_entry()
        return d

    def info_full(self, count: int = 10, now_ms: int | None = None) -> dict[str, Any]:
        """XINFO STREAM FULL [COUNT n] (count 0 = everything; negative = the default 10).

        Group and consumer sub-dicts use Redis's key names and order; PEL rows are
        (id, consumer, delivery_time, delivery_count) for groups and
        (id, delivery_time, delivery_count) for consumers.
        """
        if count < 0:
            count = 10
        d = self._info_head()
        d["entries"] = self.range(MIN_ID, MAX_ID, count or None)
        d["groups"] = [g.info_full(self, count) for g in self.iter_groups()]
        return d

    def _info_head(self) -> dict[str, Any]:
        keys = self.store.node_count()
        return {
            "length": self.store.length,
            "radix-tree-keys": keys,
            # A rax holding N 16-byte keys that share long prefixes has roughly 2N nodes.
            "radix-tree-nodes": 1 if keys == 0 else 2 * keys,
            "last-generated-id": self.last_id,
            "max-deleted-entry-id": self.max_deleted_id,
            "entries-added": self.entries_added,
            "recorded-first-entry-id": self.first_id,
            "idmp-duration": self.idmp.duration,
            "idmp-maxsize": self.idmp.maxsize,
            "pids-tracked": len(self.idmp.producers),
            "iids-tracked": self.idmp.tracked,
            "iids-added": self.idmp.added,
            "iids-duplicates": self.idmp.duplicates,
        }
