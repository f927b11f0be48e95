"""The used-memory figure: what INFO's `used_memory` reports and `maxmemory` is compared with.

Redis counts every byte its allocator hands out. A Python process has no such counter that also
goes down when data is freed: the resident set size stays at its peak (freed memory is kept
for reuse), glibc's mallinfo2() does not see pymalloc's arenas (where most small objects live)
and costs microseconds per call, and tracemalloc slows every allocation. Evicting until the RSS
drops would evict every key.

So the figure is the data's own: the sum over keys of their size estimate (what MEMORY USAGE
reports for the key), plus the databases' hash tables (which hold the keys' expiry entries).
A string's size is known when it is stored and never changes: `Database.set`, `add` and
`_remove` count it at once. Any other value changes in place, so a write only marks its key as
changed (`Database.signal_modified` adds it to `Database.changed`, a set insertion) and the
changed keys are estimated again when the figure is next read (before a command when
maxmemory is set, by INFO and MEMORY STATS, and a share per server cron tick), so a key written
a thousand times between two reads is estimated once. A key whose last estimate was large (a long stream, a big
hash) is estimated at most once per server cron tick while it keeps changing, so that appending
to it does not cost an estimate of the whole value per command: the figure may lag by one tick
of the writes to such keys.

The interpreter, the code and the clients' buffers are not in the figure (`used_memory_rss`
has the process's real size).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from server import value_types
from server.keyspace import STRING_KEY_COST

if TYPE_CHECKING:
    from server.keyspace import Database, Keyspace

# What one key costs besides its name and value: its entries in the database's dict and in the
# access-data dict (a 24-byte entry plus its index slot, at CPython's 2/3 load).
KEY_OVERHEAD = 2 * 40
# A key estimated above this size waits for the cron to be estimated again.
LARGE_VALUE = 64 * 1024
# The estimate of a nested value samples this many elements (MEMORY USAGE's default).
SAMPLES = 5


def key_usage(key: bytes, value: Any, samples: int) -> int:
    """MEMORY USAGE of a key: its value's estimate, its name, its entries."""
    return value_types.of(value).memory(value, samples) + sys.getsizeof(key) + KEY_OVERHEAD


def _tables(db: Database) -> int:
    return sys.getsizeof(db.data) + sys.getsizeof(db.expires) + sys.getsizeof(db.access)


def refresh(keyspace: Keyspace, large_too: bool = False, budget: int = -1) -> None:
    """Bring the figure up to date with the keys written since the last refresh: all of them,
    or `budget` keys (the cron's share when no limit is set). Large values are estimated
    again only when `large_too` (the cron); until then they wait in `Database.deferred`, so
    that the refresh before each command costs one field test when nothing was written and
    a few set operations per key written."""
    if not keyspace.unmeasured and not large_too:
        return
    total = keyspace.dataset_bytes
    tables = keyspace.tables_bytes
    pending = False
    for db in keyspace.dbs:
        changed = db.changed
        if large_too and db.deferred:
            changed.update(db.deferred)
            db.deferred = set()
        if not changed:
            continue
        if budget == 0:
            pending = True
            continue
        sizes = db.sizes
        data = db.data
        deferred = db.deferred
        while changed and budget != 0:
            key = changed.pop()
            budget -= 1
            old = sizes.get(key, 0)
            value = data.get(key)
            if value is None or (type(value) is bytes or type(value) is bytearray):
                # (Strings are counted as they are written: Database.set, add, _remove.)
                if old:
                    del sizes[key]
                    total -= old
                continue
            if old > LARGE_VALUE and not large_too:
                deferred.add(key)
                continue
            new = key_usage(key, value, SAMPLES)
            sizes[key] = new
            total += new - old
        if changed:
            pending = True
        # The tables are resized only as keys come and go, which marks them changed.
        counts = len(data) + (len(db.expires) << 32)
        if counts != keyspace.table_counts[db.index]:
            keyspace.table_counts[db.index] = counts
            table = _tables(db)
            tables += table - keyspace.table_sizes[db.index]
            keyspace.table_sizes[db.index] = table
    keyspace.dataset_bytes = total
    keyspace.tables_bytes = tables
    keyspace.unmeasured = pending


def is_deferred(db: Database, key: bytes) -> bool:
    """Whether writes to key leave the figure alone until the next cron tick: a value whose
    last estimate is large (strings, counted as written, never are)."""
    return db.sizes.get(key, 0) > LARGE_VALUE and key in db.data


def forget(db: Database, key: bytes) -> int:
    """Take a key just deleted out of the figure at once (eviction); the bytes it counted."""
    size = db.sizes.pop(key, 0)
    db.changed.discard(key)
    db.deferred.discard(key)
    db.keyspace.dataset_bytes -= size
    return size


def measure_tables(keyspace: Keyspace) -> None:
    """Measure every database's tables (at start-up; refresh keeps them up to date)."""
    sizes = keyspace.table_sizes
    for db in keyspace.dbs:
        sizes[db.index] = _tables(db)
        keyspace.table_counts[db.index] = len(db.data) + (len(db.expires) << 32)
    keyspace.tables_bytes = sum(sizes)


def track(keyspace: Keyspace) -> None:
    """Count the whole keyspace again: the strings at once, and, while a limit is set, every
    other key as changed (estimated at the next read). Without a limit no per-key estimate is
    kept: a size entry per key would cost about 70 bytes per key (15% more memory for a million
    small hashes) and a set insertion per write, for a figure nothing acts on. Called when
    maxmemory is switched on or off and when a data set has been loaded."""
    total = 0
    on = bool(keyspace.maxmemory)
    for db in keyspace.dbs:
        db.sizes = {}
        db.deferred = set()
        changed: set[bytes] = set()
        for key, value in db.data.items():
            if type(value) is bytes or type(value) is bytearray:
                total += len(key) + len(value) + STRING_KEY_COST
            elif on:
                changed.add(key)
        db.changed = changed
    keyspace.dataset_bytes = total
    keyspace.unmeasured = on


def used_memory(keyspace: Keyspace) -> int:
    """The figure INFO reports as used_memory and maxmemory is compared with: with a limit
    set, the data's own figure (above); without one, the process's resident set size."""
    if not keyspace.maxmemory:
        from server.info import rss_bytes  # (server.info imports this module)

        return rss_bytes()
    refresh(keyspace)
    return keyspace.dataset_bytes + keyspace.tables_bytes


def figures(keyspace: Keyspace, startup: int) -> tuple[int, int, int]:
    """INFO's and MEMORY STATS's used, startup and dataset bytes: with a limit set, the data
    figure, the empty databases' figure (`startup`) and the keys' share; without one, the
    resident set size, the size at start and the growth since."""
    if keyspace.maxmemory:
        used = used_memory(keyspace)
        return used, startup, keyspace.dataset_bytes
    from server.info import STARTUP_RSS, rss_bytes

    used = rss_bytes()
    first = min(STARTUP_RSS, used)
    return used, first, used - first
