"""maxmemory: the check before each command, and the eviction policies (Redis's evict.c).

With `maxmemory` set, every command first asks `before_command`: when the used-memory figure
(server/used_memory.py) is over the limit, keys are evicted as `maxmemory-policy` says until it
is under, or until the eviction time limit (`maxmemory-eviction-tenacity`) is spent, after which
the loop continues in the background. When nothing can be evicted (noeviction, or a volatile
policy and no key with a TTL), the commands flagged `denyoom` are refused with -OOM; reads
still run.

The LRU, LFU and TTL policies are approximated as in Redis: each round samples
`maxmemory-samples` keys of every database (all keys or only those with a TTL) into a pool of
the 16 best candidates kept across rounds, and evicts the best one still there. Python dicts
cannot give a random key in constant time, so the samples are drawn from a list of the
database's keys taken now and then (`_Sampler`): a key created since is not a candidate until
the list is taken again, which happens when it is a second old or when its keys are mostly
gone.
"""

from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING, Any, Final

from protocol.reply import ErrorReply
from server import used_memory
from server.command_table import on_server_start
from server.notify import NOTIFY_EVICTED, notify

if TYPE_CHECKING:
    from server.command_table import Command
    from server.connection import Client
    from server.keyspace import Database, Keyspace
    from server.server import Server

OOM: Final = ErrorReply("OOM command not allowed when used memory > 'maxmemory'.")
EXECABORT_OOM: Final = ErrorReply(
    "EXECABORT Transaction discarded because of: OOM command not allowed when used memory > "
    "'maxmemory'.")

EVICT_OK: Final = 0
EVICT_RUNNING: Final = 1
EVICT_FAIL: Final = 2

EVPOOL_SIZE: Final = 16
# The candidates' score (_score), from the policy's name.
_IDLE: Final = 0  # -lru: the longest idle first
_RARE: Final = 1  # -lfu: the least frequently used first
_TTL: Final = 2  # volatile-ttl: the nearest expiry first
# Bound once: compiled, a Final name is a C static, a module attribute a lookup per call.
_random: Final = random.random
_monotonic: Final = time.monotonic
# How old a list of sampled keys may get before it is taken again (seconds).
SAMPLER_MAX_AGE: Final = 1.0


def time_limit_us(tenacity: int) -> float:
    """Redis's evictionTimeLimitUs."""
    if tenacity <= 10:
        return 50.0 * tenacity
    if tenacity < 100:
        return 500.0 * 1.15 ** (tenacity - 10)
    return float("inf")


class _Sampler:
    """Random keys of one dict (a database's keys or its expires), from a list of them taken
    when the previous one got old or mostly stale."""

    def __init__(self) -> None:
        self.keys: list[bytes] = []
        self.taken = 0.0
        self.misses = 0

    def sample(self, source: dict[bytes, Any], count: int) -> list[bytes]:
        now = _monotonic()
        if (not self.keys or now - self.taken > SAMPLER_MAX_AGE
                or self.misses > len(self.keys) // 2):
            self.keys = list(source)
            self.taken = now
            self.misses = 0
        keys = self.keys
        if not keys:
            return []
        out = []
        n = len(keys)
        for _ in range(count):
            key = keys[int(_random() * n)]
            if key in source:
                out.append(key)
            else:
                self.misses += 1
        return out


class Evictor:
    """The eviction state of one server: the pool, the samplers, the statistics."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.keyspace: Keyspace = server.keyspace
        # Best candidates last: [score, db index, key], higher score = better to evict.
        self.pool: list[list[Any]] = []
        # Per database: the sampler of all its keys, and of its keys with a TTL.
        self.samplers: list[tuple[_Sampler, _Sampler]] = [
            (_Sampler(), _Sampler()) for _db in self.keyspace.dbs]
        self.next_db = 0
        self.exceeded_since = 0.0  # when used memory last went over the limit (0: it is not)
        self.exceeded_total = 0.0  # seconds spent over it, before the current period
        self.running = False  # the background continuation is scheduled
        # used_memory_startup: the figure of the empty databases.
        used_memory.measure_tables(self.keyspace)
        self.startup = self.keyspace.dataset_bytes + self.keyspace.tables_bytes

    # --- the figure ---------------------------------------------------------------------------

    def not_counted(self) -> int:
        """mem_not_counted_for_evict: not in the figure to begin with (see used_memory)."""
        return 0

    def to_free(self) -> int:
        """Bytes over the limit (0: within it)."""
        limit = self.keyspace.maxmemory
        if not limit:
            return 0
        used = used_memory.used_memory(self.keyspace) - self.not_counted()
        return used - limit if used > limit else 0

    # --- evicting ---------------------------------------------------------------------------

    def safe(self) -> bool:
        """Redis's isSafeToPerformEvictions: not while loading, and by default not on a
        replica, which ignores maxmemory to stay an exact copy of its master, and not while
        commands are paused (server/write_pause.py): nothing may move the replication offset."""
        server = self.server
        if server.loading or server.write_pause.level:
            return False
        return server.master_link.host is None or not server.config["replica-ignore-maxmemory"]

    def perform(self) -> int:
        """Redis's performEvictions: EVICT_OK, EVICT_RUNNING (time limit reached, continuing
        in the background) or EVICT_FAIL (over the limit and nothing evictable)."""
        if not self.safe():
            return EVICT_OK
        tofree = self.to_free()
        if tofree == 0:
            result = EVICT_OK
        elif self.server.config["maxmemory-policy"] == "noeviction":
            result = EVICT_FAIL
        else:
            result = self._evict(tofree)
        self._update_metrics(result)
        return result

    def _evict(self, tofree: int) -> int:
        # The settings are read once per cycle, not per key (the configuration is a Python
        # mapping with a lookup of its own).
        config = self.server.config
        policy: str = config["maxmemory-policy"]
        samples: int = config["maxmemory-samples"]
        limit_s = time_limit_us(config["maxmemory-eviction-tenacity"]) / 1e6
        allkeys = policy.startswith("allkeys")
        pooled = policy.endswith(("-lru", "-lfu")) or policy == "volatile-ttl"
        kind = _TTL if policy == "volatile-ttl" else _RARE if policy.endswith("-lfu") else _IDLE
        start = _monotonic()
        freed = 0
        evicted = 0
        while freed < tofree:
            if pooled:
                found = self._pick_from_pool(kind, allkeys, samples)
            else:
                found = self._pick_random(allkeys)
            if found is None:
                return EVICT_FAIL
            db, key = found
            freed += self._delete(db, key)
            evicted += 1
            if evicted % 16 == 0 and _monotonic() - start > limit_s:
                self._continue_later()
                return EVICT_RUNNING
            if freed >= tofree:
                # The estimate of what a key frees is the one it was counted with; the tables
                # and keys written since may have moved: look at the figure again.
                tofree = self.to_free()
                freed = 0
        return EVICT_RUNNING if self.running else EVICT_OK

    def _sampler(self, db: int, allkeys: bool) -> _Sampler:
        pair = self.samplers[db]
        return pair[0] if allkeys else pair[1]

    def _score(self, kind: int, db: Database, key: bytes) -> int:
        ks = self.keyspace
        if kind == _TTL:
            # The sooner the expiry, the better the candidate.
            return -db.expires[key]
        access = db.access_of(key)
        if kind == _RARE:
            return 255 - (ks.lfu_counter(access) if access is not None else 0)
        if access is None:
            access = 0
        clock = ks.lru_clock & 0xFFFFFF
        then = access & 0xFFFFFF
        # Idle milliseconds at the LRU clock's resolution (Redis's estimateObjectIdleTime).
        return (clock - then if clock >= then else clock + 0xFFFFFF - then) * 1000

    def _populate(self, kind: int, db: Database, allkeys: bool, samples: int) -> int:
        source = db.data if allkeys else db.expires
        keys = self._sampler(db.index, allkeys).sample(source, samples)
        pool = self.pool
        data = db.data
        for key in keys:
            if key not in data:
                continue
            score = self._score(kind, db, key)
            # As evictionPoolPopulate: no room and not better than the worst: skip it.
            if len(pool) >= EVPOOL_SIZE and score <= pool[0][0]:
                continue
            k = 0
            while k < len(pool) and pool[k][0] < score:
                k += 1
            pool.insert(k, [score, db.index, key])
            if len(pool) > EVPOOL_SIZE:
                del pool[0]
        return len(keys)

    def _pick_from_pool(self, kind: int, allkeys: bool,
                        samples: int) -> tuple[Database, bytes] | None:
        dbs = self.keyspace.dbs
        pool = self.pool
        # Bounded: an expires dict may hold only entries of keys already gone.
        for _round in range(64):
            total = 0
            for db in dbs:
                n = len(db.data) if allkeys else len(db.expires)
                if n == 0:
                    continue
                total += n
                self._populate(kind, db, allkeys, samples)
            if not total:
                return None
            # Best to worst; an entry whose key is gone (or lost its TTL) is a ghost.
            while pool:
                _score, index, key = pool.pop()
                db = dbs[index]
                if key in db.data and (allkeys or key in db.expires):
                    return db, key
        return None

    def _pick_random(self, allkeys: bool) -> tuple[Database, bytes] | None:
        dbs = self.keyspace.dbs
        for _ in range(len(dbs)):
            self.next_db = (self.next_db + 1) % len(dbs)
            db = dbs[self.next_db]
            source = db.data if allkeys else db.expires
            if not source:
                continue
            for _attempt in range(3):
                keys = self._sampler(db.index, allkeys).sample(source, 1)
                if keys:
                    return db, keys[0]
            # The list was stale: take a key the slow way rather than give up.
            return db, next(iter(source))
        return None

    def _delete(self, db: Database, key: bytes) -> int:
        """Evict one key as Redis's performEvictions does: delete it, count it, announce it
        (`evicted`), log its DEL (UNLINK under lazyfree-lazy-eviction); the bytes it counted."""
        ks = self.keyspace
        size = db.sizes.get(key, 0)
        if not size or key in db.changed or key in db.deferred:
            size = used_memory.key_usage(key, db.data[key], used_memory.SAMPLES)
        if not db.delete(key):
            # It was past its expiry: deleted as expired (and logged so) by the lookup.
            used_memory.forget(db, key)
            return size
        used_memory.forget(db, key)
        ks.evicted_keys += 1
        if ks.notify_flags & NOTIFY_EVICTED:
            notify(ks, NOTIFY_EVICTED, b"evicted", key, db.index)
        effects = ks.effects
        if effects.active:
            lazy = self.server.config["lazyfree-lazy-eviction"]
            effects.add(db.index, [b"UNLINK" if lazy else b"DEL", key])
            effects.propagate_pending()
        return size

    def _continue_later(self) -> None:
        if self.running:
            return
        self.running = True
        loop = self.server.loop
        if loop is None:
            self.running = False
            return

        def step() -> None:
            self.running = False
            if self.perform() == EVICT_RUNNING and not self.running:
                self._continue_later()

        loop.call_soon(step)

    def _update_metrics(self, result: int) -> None:
        if result == EVICT_OK:
            if self.exceeded_since:
                self.exceeded_total += time.monotonic() - self.exceeded_since
                self.exceeded_since = 0.0
        elif not self.exceeded_since:
            self.exceeded_since = time.monotonic()

    def exceeded_ms(self) -> tuple[int, int]:
        """INFO's total_eviction_exceeded_time and current_eviction_exceeded_time (ms)."""
        current = time.monotonic() - self.exceeded_since if self.exceeded_since else 0.0
        return int((self.exceeded_total + current) * 1000), int(current * 1000)


def _queued_denyoom(client: Client) -> bool:
    multi = client.multi
    return multi is not None and any(queued.denyoom for queued in multi.commands)


def run_may_start(client: Client, cmd: Command, first: list[bytes]) -> bool:
    """For a pipelined run of cmd's calls starting with `first` (dispatch.execute_run): evict as before one
    command; whether the run may go through the run handler with the outcome of a check before
    each of its calls.

    A run of calls that add no data (reads, pops) is never refused and cannot take memory over
    the limit. A run of `denyoom` calls (XADD, HSET, RPUSH, SADD, ZADD...) may, so it runs as a
    batch only where checking each call could change nothing: the first check left the figure
    within the limit (nothing to evict, nothing refused), and its key holds a value whose
    estimate waits for the server cron (server/used_memory.py), so that none of the run's
    calls moves the figure (no key is created, no estimate is taken) and every later check
    would see what the first one saw. Elsewhere, the calls take the single path, each checked:
    the one that crosses the limit runs, the next evicts or is refused."""
    evictor: Evictor = client.server.evictor
    if not evictor.safe():
        return True  # (no check evicts or refuses: loading, paused, a replica's own limit)
    result = evictor.perform()
    if not cmd.denyoom:
        return True
    if result != EVICT_OK or len(first) < 2:
        return False
    db = client.db
    key = first[1]  # (every run of denyoom calls is a run of calls to one key)
    return used_memory.is_deferred(db, key) and (not db.expires or key not in db.expires)


def before_command(client: Client, cmd: Command) -> ErrorReply | None:
    """processCommand's maxmemory step, for a server with maxmemory set: evict what the
    policy allows; the OOM error when the command may not run (None: it may)."""
    evictor: Evictor = client.server.evictor
    out_of_memory = evictor.perform() == EVICT_FAIL
    if not out_of_memory or client.is_master:
        # (A replica applies its master's stream whatever its memory.)
        return None
    is_exec = cmd.name == "exec"
    if not (cmd.denyoom or (is_exec and client.multi is not None and _queued_denyoom(client))):
        return None
    cmd.rejected_calls += 1
    if client.multi is not None:
        client.multi_error = True
    if is_exec:
        from server.commands.transactions import end_transaction

        end_transaction(client)
        return EXECABORT_OOM
    return OOM


@on_server_start
def _follow_maxmemory(server: Server) -> None:
    config, keyspace = server.config, server.keyspace

    def apply(value: int) -> None:
        was = keyspace.maxmemory
        keyspace.maxmemory = value
        if bool(was) != bool(value):
            used_memory.track(keyspace)
        # Lowering the limit evicts now, not at the next command (Redis's startEvictionTimeProc).
        if value and server.loop is not None:
            server.loop.call_soon(server.evictor.perform)

    keyspace.maxmemory = config["maxmemory"]
    used_memory.track(keyspace)
    config.on_change("maxmemory", apply)
