"""The keyspace: numbered databases of keys, their expiry times, and the signals writes emit.

Values are plain Python objects typed by class: `bytes` is a string, `streams.Stream` a stream.
A string that commands edit in place (SETBIT, SETRANGE, APPEND, BITFIELD) is held as a
`bytearray` while they do: each edit changes a byte or a few instead of copying the whole
value. Only those commands and the readers that compute from the bytes (`get_str`) see the
buffer; every other lookup (`get`, `peek`) turns it back into `bytes` first, so the rest of the
server only ever meets immutable strings, and the code that walks `data` directly (snapshots,
OBJECT, MEMORY USAGE) knows the buffer as a string type of its own (`server/value_types.py`).
Every write goes through `Database.signal_modified` (WATCH invalidation, change counter) and, for
keys that blocked clients wait on, `Keyspace.signal_ready` — the stream code never wakes clients
itself, as in Redis where t_stream.c only signals and blocked.c serves.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from itertools import islice
from typing import TYPE_CHECKING, Any, Final

from protocol.reply import ErrorReply
from server.effects import Effects
from server.notify import NOTIFY_EXPIRED, NOTIFY_KEY_MISS, NOTIFY_NEW, notify

if TYPE_CHECKING:
    from server.connection import Client

WRONGTYPE = ErrorReply("WRONGTYPE Operation against a key holding the wrong kind of value")

# Type name of each value class, as TYPE and SCAN TYPE report them. Modules that introduce a
# value type register it here.
TYPE_NAMES: dict[type, bytes] = {bytes: b"string", bytearray: b"string"}


def now_ms() -> int:
    return int(time.time() * 1000)


# What a lookup does to a key's access data (Keyspace.touch_mode).
TOUCH_NONE: Final = 0  # a CLIENT NO-TOUCH client's command: nothing
TOUCH_LRU: Final = 1  # the clock
TOUCH_LFU: Final = 2  # the logarithmic frequency counter

# What a lookup does with a key past its expiry time (Keyspace.expiry).
EXPIRY_DELETE = 0  # a master: delete it, and log the DEL
EXPIRY_HIDE = 1  # a replica, for its clients: report it missing, keep it
EXPIRY_KEEP = 2  # a replica, for its master's commands: it is there until the master's DEL

LFU_INIT_VAL = 5  # the counter of a new key, so that it is not evicted before it can be used

# The memory figure's cost of a string key besides the lengths of its name and value: two bytes
# objects' headers and the key's dict entries (server/used_memory.py's key_usage of a string).
STRING_KEY_COST: Final = 2 * 33 + 2 * 40


def type_name(value: Any) -> bytes:
    return TYPE_NAMES.get(type(value), b"none")


class Database:
    __slots__ = ("index", "data", "expires", "keyspace", "access", "encodings", "sizes",
                 "changed", "deferred")

    def __init__(self, index: int, keyspace: Keyspace) -> None:
        self.index = index
        self.data: dict[bytes, Any] = {}
        self.expires: dict[bytes, int] = {}  # absolute unix time in ms
        self.keyspace = keyspace
        # Each key's last access, Redis's robj.lru: under an LRU (or no) eviction policy the
        # clock in seconds, under LFU (minutes << 8) | logarithmic counter. Every value type
        # but strings carries it in its `lru` field, as Redis's objects do; a string is plain
        # bytes, which cannot, so strings keep theirs in this dict beside `data` (a dict entry
        # per key: about 40 bytes, which a hash of five fields would feel).
        self.access: dict[bytes, int] = {}
        # OBJECT ENCODING of values whose encoding depends on how they were written, not only on
        # what they hold (a string APPENDed to is "raw" in Redis whatever its content): set by
        # the writing command, dropped when the key gets another value.
        self.encodings: dict[bytes, bytes] = {}
        # The memory figure (server/used_memory.py): each key's last size estimate, the keys
        # written since, whose estimate is brought up to date when the figure is next read, and
        # the large ones among them, which wait for the server cron.
        self.sizes: dict[bytes, int] = {}
        self.changed: set[bytes] = set()
        self.deferred: set[bytes] = set()

    def __len__(self) -> int:
        return len(self.data)

    # --- reads -----------------------------------------------------------------------------

    def get(self, key: bytes) -> Any:
        """The live value of key, or None. Expired keys are deleted on access (lazy expiry).
        Counts as an access to the key (OBJECT IDLETIME / FREQ) unless touching is off."""
        value: Any = self.data.get(key)
        if value is not None:
            if self.expires and key in self.expires:
                if self.expires[key] <= now_ms() and self._expired_on_lookup(key):
                    return None
            if type(value) is bytearray:
                value = self._freeze(key, value)
            ks = self.keyspace
            if ks.touch_mode == TOUCH_LRU:
                if type(value) is bytes:
                    self.access[key] = ks.lru_clock
                else:
                    value.lru = ks.lru_clock
            elif ks.touch_mode == TOUCH_LFU:
                self._store_access(key, value, ks.lfu_touched(self.access_of(key)))
        return value

    def access_of(self, key: bytes) -> int | None:
        """The key's access data (None for a missing key, or a string never given any)."""
        value = self.data.get(key)
        if value is None:
            return None
        if type(value) is bytes or type(value) is bytearray:
            return self.access.get(key)
        lru: int = value.lru
        return lru

    def set_access(self, key: bytes, access: int) -> None:
        value = self.data.get(key)
        if value is not None:
            self._store_access(key, value, access)

    def _store_access(self, key: bytes, value: Any, access: int) -> None:
        if type(value) is bytes or type(value) is bytearray:
            self.access[key] = access
        else:
            value.lru = access

    def peek(self, key: bytes) -> Any:
        """The live value of key, or None, without counting an access (Redis's LOOKUP_NOTOUCH:
        TYPE, EXISTS, TTL, OBJECT)."""
        value = self.data.get(key)
        if value is not None and self.expires and key in self.expires:
            if self.expires[key] <= now_ms() and self._expired_on_lookup(key):
                return None
        if type(value) is bytearray:
            return self._freeze(key, value)
        return value

    def _expired_on_lookup(self, key: bytes) -> bool:
        """A lookup met key past its expiry time: whether it is gone (Redis's expireIfNeeded).
        A master deletes it (lazy expiry). A replica deletes nothing, its master's DEL does:
        its clients see the key as gone, and the commands of the master see it as it is."""
        mode = self.keyspace.expiry
        if mode == EXPIRY_DELETE:
            self.expire_now(key)
            return True
        return mode == EXPIRY_HIDE

    # --- strings edited in place ------------------------------------------------------------

    def _freeze(self, key: bytes, buffer: bytearray) -> Any:
        """A string buffer back to `bytes`, for a lookup whose caller may keep the value."""
        value = bytes(buffer)
        self.data[key] = value
        return value

    def get_str(self, key: bytes) -> bytes | bytearray | None:
        """`get_typed(key, bytes)` that leaves a string being edited in place as its buffer:
        for the commands that edit it and the readers that only compute from its bytes (and
        keep nothing of it)."""
        value = self.data.get(key)
        if type(value) is not bytearray:
            found = self.get(key)
            if found is not None and type(found) is not bytes:
                raise WRONGTYPE
            return found  # type: ignore[no-any-return]
        if self.expires and key in self.expires:
            if self.expires[key] <= now_ms() and self._expired_on_lookup(key):
                return None
        ks = self.keyspace
        if ks.touch_mode == TOUCH_LRU:
            self.access[key] = ks.lru_clock
        elif ks.touch_mode == TOUCH_LFU:
            self.access[key] = ks.lfu_touched(self.access.get(key))
        return value  # type: ignore[no-any-return]

    def read_str(self, key: bytes) -> bytes | bytearray | None:
        """`get_str` for a read command: counted as a hit or a miss, as `read_typed`."""
        value = self.data.get(key)
        if type(value) is not bytearray:
            found = self.read(key)
            if found is not None and type(found) is not bytes:
                raise WRONGTYPE
            return found  # type: ignore[no-any-return]
        found = self.get_str(key)
        self._count_read(key, found)
        return found

    def string_buffer(self, key: bytes, value: bytes | bytearray) -> bytearray:
        """The live string value of key (as `get_str` returned it) as a buffer to edit in place:
        copied once when it is `bytes`. The content is unchanged, so nothing is signalled; the
        editing command calls `string_edited`. Redis edits its own unshared raw copy, which
        OBJECT ENCODING reports from then on."""
        if type(value) is bytearray:
            return value
        buffer = bytearray(value)
        self.data[key] = buffer
        self.encodings[key] = b"raw"
        return buffer

    def string_edited(self, key: bytes, grown: int) -> None:
        """A string buffer was edited in place (`grown` bytes longer): the change signals of
        `set`, without replacing the value."""
        if grown:
            self.keyspace.dataset_bytes += grown
        self.signal_modified(key)

    def get_typed(self, key: bytes, cls: type) -> Any:
        """The value if it is of class `cls`, None when missing; WRONGTYPE otherwise."""
        value = self.get(key)
        if value is not None and type(value) is not cls:
            raise WRONGTYPE
        return value

    # --- a command's reads: Redis's lookupKeyRead -----------------------------------------
    # A read command's lookup that finds nothing publishes `keymiss` (class m). A write
    # command's lookups (Redis's lookupKeyWrite) use get / peek / get_typed, which never do,
    # and nor do OBJECT, MEMORY USAGE and SCAN's TYPE filter (LOOKUP_NONOTIFY).

    def read(self, key: bytes) -> Any:
        """`get` for a read: counted as a hit or a miss; a miss publishes `keymiss` when class
        m is enabled."""
        value = self.get(key)
        self._count_read(key, value)
        return value

    def read_typed(self, key: bytes, cls: type) -> Any:
        """`get_typed` for a read: counted as a hit or a miss (a value of another type is a
        hit, as in Redis); a miss publishes `keymiss` when class m is enabled."""
        value = self.get(key)
        self._count_read(key, value)
        if value is not None and type(value) is not cls:
            raise WRONGTYPE
        return value

    def read_peek(self, key: bytes) -> Any:
        """`peek` for a read (EXISTS, TYPE, TTL): no access recorded; counted as a hit or a
        miss; a miss publishes `keymiss` when class m is enabled."""
        value = self.peek(key)
        self._count_read(key, value)
        return value

    def _count_read(self, key: bytes, value: Any) -> None:
        keyspace = self.keyspace
        if value is None:
            keyspace.misses += 1
            if keyspace.notify_flags & NOTIFY_KEY_MISS:
                notify(keyspace, NOTIFY_KEY_MISS, b"keymiss", key, self.index)
        else:
            keyspace.hits += 1

    def is_expired(self, key: bytes) -> bool:
        """Whether key has a TTL in the past (without deleting it, unlike get)."""
        when = self.expires.get(key)
        return when is not None and when <= now_ms()

    def exists(self, key: bytes) -> bool:
        return self.peek(key) is not None

    def keys(self) -> Iterator[bytes]:
        """Live keys (expired ones are skipped, not deleted: iteration must not mutate)."""
        if not self.expires:
            yield from list(self.data)
            return
        now = now_ms()
        expires = self.expires
        for key in list(self.data):
            when = expires.get(key)
            if when is None or when > now:
                yield key

    def random_key(self) -> bytes | None:
        # Retry a few times so that a database full of expired keys still terminates.
        for _ in range(100):
            if not self.data:
                return None
            key = random.choice(list(self.data))
            if self.peek(key) is not None:
                return key
        return None

    # --- writes ----------------------------------------------------------------------------

    def set(self, key: bytes, value: Any, *, keep_ttl: bool = False) -> None:
        """Store a value (replacing any, of any type) and signal the change."""
        old = self.data.get(key)
        # An overwrite keeps the key's access data (Redis's dbSetValue copies robj.lru), which
        # the command's own lookup has just updated.
        access = None if old is None else self.access_of(key)
        self.data[key] = value
        # Strings are counted in the memory figure here, the other types when it is read
        # (server/used_memory.py): a string's size is known at once, and never changes.
        ks = self.keyspace
        new_is_string = type(value) is bytes or type(value) is bytearray
        old_is_string = type(old) is bytes or type(old) is bytearray
        if new_is_string:
            ks.dataset_bytes += len(key) + len(value) + STRING_KEY_COST
        if type(old) is bytes or type(old) is bytearray:
            ks.dataset_bytes -= len(key) + len(old) + STRING_KEY_COST
        if self.encodings:
            self.encodings.pop(key, None)
        if old_is_string and not new_is_string:
            self.access.pop(key, None)
        self._store_access(key, value, self.keyspace.new_access() if access is None else access)
        if not keep_ttl and self.expires:
            self.expires.pop(key, None)
        self.signal_modified(key)
        if old is None and self.keyspace.notify_flags & NOTIFY_NEW:
            notify(self.keyspace, NOTIFY_NEW, b"new", key, self.index)
        if old is not None and type(old) is not type(value):
            # A type change releases clients blocked on the old type (XREADGROUP).
            self.keyspace.signal_deleted(self.index, key)

    def add(self, key: bytes, value: Any) -> None:
        """Store a value under a key known to be absent (a write command creating it)."""
        self.data[key] = value
        if type(value) is bytes or type(value) is bytearray:
            self.keyspace.dataset_bytes += len(key) + len(value) + STRING_KEY_COST
        if self.expires:
            # Absent may mean expired but kept, on a replica: the new value has no TTL.
            self.expires.pop(key, None)
        self._store_access(key, value, self.keyspace.new_access())
        self.signal_modified(key)
        if self.keyspace.notify_flags & NOTIFY_NEW:
            notify(self.keyspace, NOTIFY_NEW, b"new", key, self.index)
        # As Redis's dbAdd: a new key may be what a blocked client waits for.
        self.keyspace.signal_ready(self.index, key)

    def delete(self, key: bytes) -> bool:
        if self.peek(key) is None:
            return False
        self._remove(key)
        self.signal_modified(key)
        self.keyspace.signal_deleted(self.index, key)
        return True

    def expire_now(self, key: bytes) -> None:
        """Delete an expired key: lazy and active expiry both come here."""
        self._remove(key)
        ks = self.keyspace
        ks.expired_keys += 1
        self.signal_modified(key)
        ks.signal_deleted(self.index, key)
        # Logged as the DEL it amounts to, so that a replay never depends on the clock. Met
        # inside a command, it goes out with that command's effects.
        effects = ks.effects
        if effects.active:
            effects.add(self.index, [b"DEL", key])
        if ks.notify_flags & NOTIFY_EXPIRED:
            notify(ks, NOTIFY_EXPIRED, b"expired", key, self.index)

    def set_expire(self, key: bytes, when_ms: int) -> None:
        self.expires[key] = when_ms
        self.signal_modified(key)

    def persist(self, key: bytes) -> bool:
        if self.expires.pop(key, None) is None:
            return False
        self.signal_modified(key)
        return True

    def flush(self) -> None:
        keys = list(self.data)
        strings = 0
        for key, value in self.data.items():
            if type(value) is bytes or type(value) is bytearray:
                strings += len(key) + len(value) + STRING_KEY_COST
        self.keyspace.dataset_bytes -= strings
        self.data = {}
        self.expires = {}
        self.access = {}
        self.encodings = {}
        for key in keys:
            self.signal_modified(key)
            self.keyspace.signal_deleted(self.index, key)

    def _remove(self, key: bytes) -> None:
        value = self.data.pop(key)
        if type(value) is bytes or type(value) is bytearray:
            self.keyspace.dataset_bytes -= len(key) + len(value) + STRING_KEY_COST
        self.access.pop(key, None)
        if self.encodings:
            self.encodings.pop(key, None)
        if self.expires:
            self.expires.pop(key, None)

    def signal_modified(self, key: bytes) -> None:
        ks = self.keyspace
        ks.dirty += 1
        if ks.maxmemory:
            self.changed.add(key)
            ks.unmeasured = True
        if ks.watchers:
            ks.touch_watched(self.index, key)


class Keyspace:
    """All databases plus the cross-cutting state writes touch: watchers and ready keys."""

    def __init__(self, databases: int, effects: Effects | None = None) -> None:
        self.dbs = [Database(i, self) for i in range(databases)]
        # (db, key) -> clients WATCHing it
        self.watchers: dict[tuple[int, bytes], set[Client]] = {}
        self.dirty = 0  # changes since the last save (rdb_changes_since_last_save)
        self.expired_keys = 0
        self.evicted_keys = 0
        # The maxmemory setting, read by dispatch before every command (0: no limit).
        self.maxmemory = 0
        # The sum of the keys' size estimates (Database.sizes), and the size of each
        # database's tables, as of the last refresh (server/used_memory.py).
        self.dataset_bytes = 0
        self.table_sizes = [0] * databases
        self.table_counts = [0] * databases  # the keys the table sizes were measured with
        self.tables_bytes = 0
        # A key was written since the figure was last brought up to date (a refresh with
        # nothing to do then costs one field test).
        self.unmeasured = False
        # INFO's keyspace_hits / keyspace_misses: what read lookups found (Redis's lookupKey
        # counts the reads, not the writes' lookups).
        self.hits = 0
        self.misses = 0
        # Set by the blocking manager: called with (db, key) when a key may unblock clients.
        self.ready_hook: Callable[[int, bytes], None] | None = None
        self.deleted_hook: Callable[[int, bytes], None] | None = None
        self.effects = effects if effects is not None else Effects()
        # Expiry cycles of values with expiring parts (hash fields), run after the keys' cycle.
        self.expire_hooks: list[Callable[[], int]] = []
        # Access tracking (see Database.access): the clock is refreshed by the server's cron,
        # as Redis's server.lruclock, so that a lookup reads an attribute instead of the time.
        self.lru_clock = int(time.time())
        self.lfu = False  # an LFU maxmemory-policy is set
        self.touch_mode = TOUCH_LRU
        self.lfu_log_factor = 10
        self.lfu_decay_time = 1
        # Keyspace notifications (server/notify.py): the enabled classes, and the server whose
        # Pub/Sub registry publishes them.
        self.notify_flags = 0
        self.notify_target: Any = None
        # EXPIRY_DELETE on a master; a replica sets EXPIRY_HIDE, and EXPIRY_KEEP while its
        # master's commands run (server/replication/replica.py).
        self.expiry = EXPIRY_DELETE

    def set_policy(self, policy: str) -> None:
        self.lfu = policy.endswith("-lfu")
        self.touch_mode = TOUCH_LFU if self.lfu else TOUCH_LRU

    def tick(self) -> None:
        self.lru_clock = int(time.time())

    def new_access(self) -> int:
        """The access data of a key just created (Redis's createObject)."""
        if self.lfu:
            return (self.lfu_minutes() << 8) | LFU_INIT_VAL
        return self.lru_clock

    def lfu_minutes(self) -> int:
        # From the cron-refreshed clock, as Redis reads its cached server.unixtime.
        return (self.lru_clock // 60) & 65535

    def lfu_counter(self, access: int) -> int:
        """The counter of LFU access data after its decay (Redis's LFUDecrAndReturn)."""
        counter = access & 255
        if self.lfu_decay_time:
            now = self.lfu_minutes()
            then = access >> 8
            elapsed = now - then if now >= then else 65535 - then + now
            periods = elapsed // self.lfu_decay_time
            counter = 0 if periods > counter else counter - periods
        return counter

    def lfu_touched(self, access: int | None) -> int:
        """LFU access data after one more access: decayed, then logarithmically incremented."""
        counter = self.lfu_counter(access) if access is not None else LFU_INIT_VAL
        if counter < 255:
            base = counter - LFU_INIT_VAL
            if random.random() < 1.0 / (max(base, 0) * self.lfu_log_factor + 1):
                counter += 1
        return (self.lfu_minutes() << 8) | counter

    def signal_ready(self, db: int, key: bytes) -> None:
        hook = self.ready_hook
        if hook is not None:
            hook(db, key)

    def signal_deleted(self, db: int, key: bytes) -> None:
        """A key was deleted, or replaced by a value of another type."""
        hook = self.deleted_hook
        if hook is not None:
            hook(db, key)

    # --- WATCH -----------------------------------------------------------------------------

    def watch(self, client: Client, db: int, key: bytes) -> None:
        self.watchers.setdefault((db, key), set()).add(client)

    def unwatch_all(self, client: Client) -> None:
        for db, key in client.watched:
            clients = self.watchers.get((db, key))
            if clients is not None:
                clients.discard(client)
                if not clients:
                    del self.watchers[(db, key)]
        client.watched.clear()

    def touch_watched(self, db: int, key: bytes) -> None:
        clients = self.watchers.get((db, key))
        if clients:
            for client in clients:
                client.watch_dirty = True

    # --- active expiry ---------------------------------------------------------------------

    def active_expire_cycle(self, budget: int = 200) -> int:
        """Test keys with a TTL and delete the expired ones, like Redis's activeExpireCycle:
        keep going in a database while more than a quarter of a sample was expired.

        Sampling walks each expires dict round-robin: a live key that was tested moves to the
        back, so the next cycle tests others, at O(1) per key whatever the dict's size.
        """
        removed = 0
        now = now_ms()
        for db in self.dbs:
            expires = db.expires
            while expires and budget > 0:
                sample = list(islice(expires.items(), 20))
                budget -= len(sample)
                expired = 0
                for key, when in sample:
                    if when <= now:
                        if key in db.data:
                            db.expire_now(key)
                        else:
                            del expires[key]
                        expired += 1
                    else:
                        del expires[key]
                        expires[key] = when
                removed += expired
                if expired * 4 <= len(sample):
                    break
        for hook in self.expire_hooks:
            hook()
        if removed:
            # Outside any command: the DELs leave now, one unit for the cycle.
            self.effects.propagate_pending()
        return removed
