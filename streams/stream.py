"""`Stream`: a stream value with Redis's metadata, entry operations and consumer groups."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
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

# What deleting or trimming entries does to the groups' references to them (Redis 8.2):
# KEEPREF leaves every PEL as it is; DELREF drops the entries from every PEL too; ACKED only
# removes entries that every group has read and none holds pending.
KEEPREF = 0
DELREF = 1
ACKED = 2
# Per-ID replies of XDELEX / XACKDEL.
NOT_FOUND = -1
DELETED = 1
STILL_REFERENCED = 2


def _in_no_pel(eid: int) -> bool:
    return False


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
                 "idmp", "lru")

    def __init__(self, node_max_entries: int = 100, node_max_bytes: int = 4096) -> None:
        # OBJECT IDLETIME / FREQ's access data, Redis's robj.lru (see server/keyspace.py).
        self.lru = 0
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

    def add_run(self, entries: list[list[bytes]], at: int, start: int, end: int,
                now_ms: int) -> int:
        """`add` with an auto ID (`*`) for entries[start:end] in turn, each entry's fields being
        entries[j][at:] (a run of XADDs passes their argvs), as that many XADDs would; how many
        were added, with the consecutive IDs last_id - count + 1 ... last_id.

        Stops before an entry `add` would refuse (IDs exhausted, entry too large), so the
        caller can add that one alone and get its error.
        """
        last = self.last_id
        if last == MAX_ID:
            return 0
        ms = now_ms if now_ms > 0 else 0
        first = ms << 64 if ms > last >> 64 else last + 1
        # IDs are consecutive integers (a sequence overflow carries into the milliseconds).
        k = min(end - start, MAX_ID - first + 1)
        if k <= 0:
            return 0
        eids: list[int] | None = None
        if (first + k - 1) >> 64 != first >> 64:
            eids = [0] * start + list(range(first, first + k))  # indexed from start
        done = self.store.extend(first, eids, entries, at, start, start + k)
        if done:
            self.entries_added += done
            self.last_id = first + done - 1
            if self.store.length == done:
                self.first_id = first
        return done

    def add_many(self, entries: list[list[bytes]], now_ms: int) -> list[int]:
        """`add_run` of every entry (fields only); the IDs."""
        done = self.add_run(entries, 0, 0, len(entries), now_ms)
        eid = self.last_id - done
        ids: list[int] = []
        for _ in range(done):
            eid += 1
            ids.append(eid)
        return ids

    def add_given(self, ids: list[int], entries: list[list[bytes]], at: int = 0,
                  start: int = 0) -> None:
        """`add` of each entry with its explicit ID, as that many XADDs would: entry j (from
        start) has ID ids[j] and fields entries[j][at:] (a run of XADDs passes their argvs).
        The caller checked what `add` would refuse (IDs ascending past last_id, none 0-0, sizes
        within MAX_NODE_SIZE)."""
        if len(ids) <= start:
            return
        k = self.store.extend(0, ids, entries, at, start, len(ids))
        self.entries_added += k
        self.last_id = ids[start + k - 1]
        if self.store.length == k:
            self.first_id = ids[start]

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
        return len(self._delete(ids))

    def _delete(self, ids: Iterable[int]) -> list[int]:
        """`delete`, returning the IDs deleted, in the order given."""
        gone = self.store.delete_many(ids)
        if not gone:
            return gone
        top = max(gone)
        if top > self.max_deleted_id:
            self.max_deleted_id = top
        if self.store.length == 0:
            self.first_id = 0
        elif self.first_id in gone:
            self.first_id = self._first_live()
        return gone

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
        policy: int = KEEPREF,
    ) -> int:
        """XTRIM / XADD trimming; give exactly one of maxlen (MAXLEN) or minid (MINID).

        `policy` is KEEPREF, DELREF or ACKED (see `EntryStore.trim_refs` for how ACKED walks);
        without groups the three are the same.

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
        if policy == KEEPREF or not self.groups:
            deleted = self.store.trim(maxlen, minid, approx, limit)
        elif policy == ACKED:
            unread_after, in_pel = self._reference_test()
            deleted = self.store.trim_refs(maxlen, minid, approx, limit, in_pel, unread_after, None)
        else:
            gone: list[int] = []
            deleted = self.store.trim_refs(maxlen, minid, approx, limit, None, MAX_ID, gone)
            if gone:
                self._drop_references(gone)
        if self.store.length == 0:
            self.first_id = 0
        elif deleted:
            self.first_id = self._first_live()
        return deleted

    # --- group references: DELREF / ACKED, XDELEX, XACKDEL ---------------------------------

    def _reference_test(self) -> tuple[int, Callable[[int], bool]]:
        """(ID past which some group has not read yet, test "is this ID in some PEL").

        An entry is acknowledged by all groups when it is at or below every group's last
        delivered ID and in no PEL: the first is one comparison with the minimum, the second
        one dict lookup per group that has anything pending.
        """
        groups = self.groups
        if not groups:
            return MAX_ID, _in_no_pel
        unread_after = min(g.last_id for g in groups.values())
        pels = [g.pel for g in groups.values() if g.pel]
        if not pels:
            return unread_after, _in_no_pel
        if len(pels) == 1:
            return unread_after, pels[0].__contains__

        def in_some_pel(eid: int) -> bool:
            for pel in pels:
                if eid in pel:
                    return True
            return False

        return unread_after, in_some_pel

    def is_referenced(self, eid: int) -> bool:
        """Has some group not read `eid` yet, or does some group hold it pending?"""
        unread_after, in_pel = self._reference_test()
        return eid > unread_after or in_pel(eid)

    def _drop_references(self, ids: list[int]) -> int:
        """DELREF: remove the IDs (ascending) from every group's PEL; how many were pending."""
        dropped = 0
        lo = ids[0]
        hi = ids[-1]
        for g in self.groups.values():
            pel = g.pel
            if not pel:
                continue
            first = pel.first()
            last = pel.last()
            assert first is not None and last is not None
            if last < lo or first > hi:
                continue  # the usual trim: everything pending is newer than what went
            # One dict lookup per ID: the IDs are what one command deleted, where walking the
            # sorted PEL would cost what is pending in their range.
            hits = [eid for eid in ids if eid in pel]
            if hits:
                dropped += g.ack(hits)
        return dropped

    def delete_ex(self, ids: Sequence[int], policy: int) -> tuple[list[int], bool]:
        """XDELEX: per ID NOT_FOUND (not a live entry), DELETED, or STILL_REFERENCED (ACKED,
        kept); and whether anything changed. DELREF also drops the IDs from every PEL, those
        not in the stream included."""
        store = self.store
        if policy == ACKED and self.groups:
            unread_after, in_pel = self._reference_test()
            kept: set[int] = {eid for eid in ids if eid > unread_after or in_pel(eid)}
        else:
            kept = set()
        gone = self._delete([eid for eid in ids if eid not in kept] if kept else ids)
        # The deleted IDs come in the order given, each once: a repeated ID finds it gone.
        codes: list[int] = []
        p = 0
        for eid in ids:
            if p < len(gone) and gone[p] == eid:
                codes.append(DELETED)
                p += 1
            elif eid in kept and store.contains(eid):
                codes.append(STILL_REFERENCED)
            else:
                codes.append(NOT_FOUND)
        changed = bool(gone)
        if policy == DELREF and self.groups and ids:
            if self._drop_references(sorted(set(ids))):
                changed = True
        return codes, changed

    def ack_delete(self, group: ConsumerGroup, ids: Sequence[int], policy: int) -> list[int]:
        """XACKDEL: acknowledge the IDs in `group`, then delete each acknowledged entry as
        `policy` allows. Per ID: NOT_FOUND (not pending in the group: nothing done), DELETED
        (acknowledged, and deleted or already gone), STILL_REFERENCED (ACKED: acknowledged,
        kept for another group)."""
        pel = group.pel
        acked: list[int] = []
        codes: list[int] = []
        seen: set[int] = set()
        for eid in ids:
            if eid in pel and eid not in seen:
                seen.add(eid)
                acked.append(eid)
                codes.append(DELETED)
            else:
                codes.append(NOT_FOUND)
        if not acked:
            return codes
        group.ack(acked)
        if policy == ACKED:
            unread_after, in_pel = self._reference_test()
            keep = {eid for eid in acked if eid > unread_after or in_pel(eid)}
            if keep:
                codes = [STILL_REFERENCED if c == DELETED and eid in keep else c
                         for eid, c in zip(ids, codes, strict=True)]
                acked = [eid for eid in acked if eid not in keep]
        if acked:
            self.delete(acked)
            if policy == DELREF:
                self._drop_references(sorted(acked))
        return codes

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
            # Lowered below what a group has read (possible once the stream was trimmed): the
            # groups' counters follow, as in Redis 8, so that no lag goes negative.
            for group in self.groups.values():
                self.bound_entries_read(group)
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
        self.bound_entries_read(group)
        self.groups[name] = group
        return group

    def bound_entries_read(self, group: ConsumerGroup) -> None:
        """A group cannot have read more entries than were ever added: an ENTRIESREAD beyond
        entries_added (XGROUP CREATE / SETID) is lowered to it, as Redis 8 does, rather than
        kept to report a negative lag."""
        if group.entries_read is not None and group.entries_read > self.entries_added:
            group.entries_read = self.entries_added

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
