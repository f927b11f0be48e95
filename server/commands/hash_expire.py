"""Hash field expiration (Redis 7.4): HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT, HTTL, HPTTL,
HEXPIRETIME, HPEXPIRETIME, HPERSIST, and the active cycle that deletes expired fields.

Times are absolute unix milliseconds (`Hash.ttl`). A HEXPIRE-family command is logged as
HPEXPIREAT with the absolute time and only the fields it set; a field it deletes (a time already
past) is logged as HDEL, as Redis's hexpireGenericCommand rewrites its argv.

The active cycle (hz times a second, like the key expiry cycle) keeps a heap of hashes by the
earliest field time they had when scheduled; a popped hash deletes its expired fields (each an
HDEL, the hash itself deleted with its last field) and is scheduled again for its next time.
An entry remembers the key it was scheduled under; a hash that moved (RENAME, MOVE, COPY) is
looked up by identity once and scheduled under its new key.
"""

from __future__ import annotations

import heapq
import sys
from typing import TYPE_CHECKING, Any

from hashes import Hash
from protocol.numbers import parse_int
from protocol.reply import ErrorReply
from server.command_table import command, key_spec, on_server_start
from server.commands import hashes as hash_commands
from server.commands.hashes import delete_expired_field, get_hash, read_hash
from server.keyspace import EXPIRY_DELETE, Database, now_ms
from server.notify import NOTIFY_GENERIC, NOTIFY_HASH, notify_keyspace_event

if TYPE_CHECKING:
    from server.connection import Client
    from server.server import Server

# Redis's HFE_MAX_ABS_TIME_MSEC: EB_EXPIRE_TIME_MAX (2^48 - 1) >> 2.
MAX_ABS_TIME_MS = ((1 << 48) - 1) >> 2

_FIELDS_MISSING = ErrorReply("ERR Mandatory argument FIELDS is missing or not at the right position")
_NUMFIELDS_MISMATCH = ErrorReply("ERR The `numfields` parameter must match the number of arguments")
_NUMFIELDS_POSITIVE = ErrorReply("ERR Number of fields must be a positive integer")
_NUMFIELDS_ZERO = ErrorReply("ERR Parameter `numFields` should be greater than 0")
_NEGATIVE_TIME = ErrorReply("ERR invalid expire time, must be >= 0")

_KEY_ARG = {"name": "key", "type": "key", "key_spec_index": 0}
_CONDITION_ARG = {"name": "condition", "type": "oneof", "optional": True, "arguments": (
    {"name": "nx", "type": "pure-token", "token": "NX"},
    {"name": "xx", "type": "pure-token", "token": "XX"},
    {"name": "gt", "type": "pure-token", "token": "GT"},
    {"name": "lt", "type": "pure-token", "token": "LT"})}
_FIELDS_BLOCK = {"name": "fields", "token": "FIELDS", "type": "block", "arguments": (
    {"name": "numfields", "type": "integer"},
    {"name": "field", "type": "string", "multiple": True})}
_COMPLEXITY = "O(N) where N is the number of specified fields"


# --- active expiry -------------------------------------------------------------------------------

# (earliest time, sequence, hash, db index, key); -1 as db index: key unknown (a COPY).
_heap: list[tuple[int, int, Hash, int, bytes]] = []
# id(hash) -> the time of its live heap entry; other entries for it are stale.
_scheduled: dict[int, int] = {}
_seq = [0]
# Fields deleted per cycle at most, so that a cycle stays short.
CYCLE_QUOTA = 1000


def schedule(db_index: int, key: bytes, h: Hash) -> None:
    """Make sure the active cycle visits h by its earliest field time."""
    when = h.min_expire()
    if when is None:
        return
    previous = _scheduled.get(id(h))
    if previous is not None and previous <= when:
        return
    _scheduled[id(h)] = when
    _seq[0] += 1
    heapq.heappush(_heap, (when, _seq[0], h, db_index, key))


hash_commands.schedule_hook.append(lambda _db, _key, h: schedule(-1, b"", h))


def _locate(dbs: list[Database], db_index: int, key: bytes, h: Hash) -> tuple[Database, bytes] | None:
    if 0 <= db_index < len(dbs) and dbs[db_index].data.get(key) is h:
        return dbs[db_index], key
    # Referenced only here (this frame and getrefcount's argument): deleted, nothing to find.
    if sys.getrefcount(h) <= 3:
        return None
    for db in dbs:
        for k, v in db.data.items():
            if v is h:
                return db, k
    return None


def compact() -> None:
    """Drop the heap entries that are stale or hold a hash nothing else holds (a deleted key's),
    so that hashes deleted long before their fields' times do not stay in memory until then."""
    _heap[:] = [e for e in _heap if _scheduled.get(id(e[2])) == e[0]]
    kept = []
    for entry in _heap:
        h = entry[2]
        # Held by its one entry, `h` and getrefcount's argument only: deleted.
        if sys.getrefcount(h) <= 3:
            del _scheduled[id(h)]
        else:
            kept.append(entry)
    heapq.heapify(kept)
    _heap[:] = kept


_cycles = [0]


def active_expire_cycle(server: Server, quota: int = CYCLE_QUOTA) -> int:
    """Delete expired fields of the hashes due, at most `quota`. Returns how many."""
    _cycles[0] += 1
    if _cycles[0] % 100 == 0 and len(_heap) > 1000:
        compact()
    now = now_ms()
    dbs = server.keyspace.dbs
    removed = 0
    while _heap and _heap[0][0] < now and removed < quota:
        when, _, h, db_index, key = heapq.heappop(_heap)
        if _scheduled.get(id(h)) != when:
            continue
        del _scheduled[id(h)]
        found = _locate(dbs, db_index, key, h)
        if found is None:
            continue
        db, key = found
        if db.is_expired(key):
            continue  # the key's own expiry deletes it all
        effects = db.keyspace.effects
        deleted_hash = False
        expired = h.expired_fields(now, quota - removed)
        for field in expired:
            h.delete(field)
            effects.add(db.index, [b"HDEL", key, field])
            removed += 1
            if h.is_empty():
                db.delete(key)
                deleted_hash = True
                break
        # One announcement per hash per visit, as Redis's hashTypeExpire.
        if expired:
            notify_keyspace_event(server, NOTIFY_HASH, b"hexpired", key, db.index)
            if deleted_hash:
                notify_keyspace_event(server, NOTIFY_GENERIC, b"del", key, db.index)
        if not deleted_hash:
            db.signal_modified(key)
            schedule(db.index, key, h)
    if removed:
        server.keyspace.effects.propagate_pending()
    return removed


@on_server_start
def _start_cycle(server: Server) -> None:
    # Runs from the server cron's key expiry cycle: same rate, same enable switch, not while
    # loading.
    server.keyspace.expire_hooks.append(lambda: active_expire_cycle(server))


# --- HEXPIRE family ------------------------------------------------------------------------------


def _parse_fields(argv: list[bytes], at: int, numfields_error: ErrorReply) -> list[bytes]:
    """FIELDS numfields field... with FIELDS at argv[at - 1]."""
    if argv[at - 1].lower() != b"fields":
        raise _FIELDS_MISSING
    try:
        count = parse_int(argv[at])
    except ErrorReply:
        raise numfields_error from None
    if count < 1:
        raise numfields_error
    if count != len(argv) - at - 1:
        raise _NUMFIELDS_MISMATCH
    return argv[at + 1:]


_CONDITIONS = {b"nx": "nx", b"xx": "xx", b"gt": "gt", b"lt": "lt"}


def _hexpire(client: Client, argv: list[bytes], name: str, relative: bool, seconds: bool) -> Any:
    key = argv[1]
    db = client.db
    h = get_hash(db, key)
    when = parse_int(argv[2])
    if when < 0:
        raise _NEGATIVE_TIME
    if seconds:
        if when > MAX_ABS_TIME_MS // 1000:
            raise ErrorReply(f"ERR invalid expire time in '{name}' command")
        when *= 1000
    now = now_ms()
    basetime = now if relative else 0
    if when > MAX_ABS_TIME_MS - basetime:
        raise ErrorReply(f"ERR invalid expire time in '{name}' command")
    when += basetime
    condition = _CONDITIONS.get(argv[3].lower(), "")
    at = 5 if condition else 4
    fields = _parse_fields(argv, at, _NUMFIELDS_ZERO)
    if h is None:
        return [-2] * len(fields)
    h.make_expirable()
    # Loading, or on a replica, a time already past is stored: the field expires later (a
    # replica's master sends the HDEL).
    replaying = client.is_loader or client.keyspace.expiry != EXPIRY_DELETE
    codes: list[int] = []
    updated: list[bytes] = []
    deleted = 0
    for field in fields:
        if h.get(field) is None:
            codes.append(-2)
            continue
        previous = h.expire_time(field)
        if previous is None:
            # A field without a TTL meets LT (and NX), never XX or GT.
            if condition in ("xx", "gt"):
                codes.append(0)
                continue
        elif (condition == "nx" or (condition == "gt" and previous >= when)
              or (condition == "lt" and previous <= when)):
            codes.append(0)
            continue
        if when <= now and not replaying:
            h.delete(field)
            db.keyspace.effects.add(db.index, [b"HDEL", key, field])
            deleted += 1
            codes.append(2)
            continue
        h.set_expire_time(field, when)
        updated.append(field)
        codes.append(1)
    if deleted or updated:
        if deleted and h.is_empty():
            db.delete(key)
            notify_keyspace_event(client, NOTIFY_HASH, b"hdel", key, db.index)
            notify_keyspace_event(client, NOTIFY_GENERIC, b"del", key, db.index)
        else:
            db.signal_modified(key)
            schedule(db.index, key, h)
            notify_keyspace_event(client, NOTIFY_HASH, b"hdel" if deleted else b"hexpire", key,
                                  db.index)
    if updated:
        cond = [argv[3]] if condition else []
        client.propagate([b"HPEXPIREAT", key, b"%d" % when, *cond, argv[at - 1],
                          b"%d" % len(updated), *updated])
    return codes


@command("hexpire", -6, "write denyoom fast", keys=(1, 1, 1), group="hash", since="7.4.0",
         summary="Set expiry for hash field using relative time to expire (seconds)",
         complexity=_COMPLEXITY, key_specs=key_spec(("RW", "UPDATE")),
         arguments=(_KEY_ARG, {"name": "seconds", "type": "integer"}, _CONDITION_ARG,
                    _FIELDS_BLOCK))
def hexpire(client: Client, argv: list[bytes]) -> Any:
    return _hexpire(client, argv, "hexpire", relative=True, seconds=True)


@command("hpexpire", -6, "write denyoom fast", keys=(1, 1, 1), group="hash", since="7.4.0",
         summary="Set expiry for hash field using relative time to expire (milliseconds)",
         complexity=_COMPLEXITY, key_specs=key_spec(("RW", "UPDATE")),
         arguments=(_KEY_ARG, {"name": "milliseconds", "type": "integer"}, _CONDITION_ARG,
                    _FIELDS_BLOCK))
def hpexpire(client: Client, argv: list[bytes]) -> Any:
    return _hexpire(client, argv, "hpexpire", relative=True, seconds=False)


@command("hexpireat", -6, "write denyoom fast", keys=(1, 1, 1), group="hash", since="7.4.0",
         summary="Set expiry for hash field using an absolute Unix timestamp (seconds)",
         complexity=_COMPLEXITY, key_specs=key_spec(("RW", "UPDATE")),
         arguments=(_KEY_ARG, {"name": "unix-time-seconds", "type": "unix-time"}, _CONDITION_ARG,
                    _FIELDS_BLOCK))
def hexpireat(client: Client, argv: list[bytes]) -> Any:
    return _hexpire(client, argv, "hexpireat", relative=False, seconds=True)


@command("hpexpireat", -6, "write denyoom fast", keys=(1, 1, 1), group="hash", since="7.4.0",
         summary="Set expiry for hash field using an absolute Unix timestamp (milliseconds)",
         complexity=_COMPLEXITY, key_specs=key_spec(("RW", "UPDATE")),
         arguments=(_KEY_ARG, {"name": "unix-time-milliseconds", "type": "unix-time"},
                    _CONDITION_ARG, _FIELDS_BLOCK))
def hpexpireat(client: Client, argv: list[bytes]) -> Any:
    return _hexpire(client, argv, "hpexpireat", relative=False, seconds=False)


# --- HTTL family ---------------------------------------------------------------------------------


def _httl(client: Client, argv: list[bytes], relative: bool, seconds: bool) -> Any:
    h = read_hash(client.db, argv[1])
    fields = _parse_fields(argv, 3, _NUMFIELDS_POSITIVE)
    if h is None:
        return [-2] * len(fields)
    now = now_ms()
    basetime = now if relative else 0
    ttl = h.ttl
    # A listpackex field is gone at its very millisecond, a hashtable one just after (t_hash.c).
    gone_at = now if h.table else now + 1
    out: list[int] = []
    for field in fields:
        if h.get(field) is None:
            out.append(-2)
            continue
        when = ttl.get(field) if ttl else None
        if when is None:
            out.append(-1)
        elif when < gone_at:
            out.append(-2)
        elif seconds:
            out.append((when + 999 - basetime) // 1000)
        else:
            out.append(when - basetime)
    return out


@command("httl", -5, "readonly fast", keys=(1, 1, 1), group="hash", since="7.4.0",
         summary="Returns the TTL in seconds of a hash field.", complexity=_COMPLEXITY,
         tips=("nondeterministic_output",), key_specs=key_spec(("RO", "ACCESS")),
         arguments=(_KEY_ARG, _FIELDS_BLOCK))
def httl(client: Client, argv: list[bytes]) -> Any:
    return _httl(client, argv, relative=True, seconds=True)


@command("hpttl", -5, "readonly fast", keys=(1, 1, 1), group="hash", since="7.4.0",
         summary="Returns the TTL in milliseconds of a hash field.", complexity=_COMPLEXITY,
         tips=("nondeterministic_output",), key_specs=key_spec(("RO", "ACCESS")),
         arguments=(_KEY_ARG, _FIELDS_BLOCK))
def hpttl(client: Client, argv: list[bytes]) -> Any:
    return _httl(client, argv, relative=True, seconds=False)


@command("hexpiretime", -5, "readonly fast", keys=(1, 1, 1), group="hash", since="7.4.0",
         summary="Returns the expiration time of a hash field as a Unix timestamp, in seconds.",
         complexity=_COMPLEXITY, key_specs=key_spec(("RO", "ACCESS")),
         arguments=(_KEY_ARG, _FIELDS_BLOCK))
def hexpiretime(client: Client, argv: list[bytes]) -> Any:
    return _httl(client, argv, relative=False, seconds=True)


@command("hpexpiretime", -5, "readonly fast", keys=(1, 1, 1), group="hash", since="7.4.0",
         summary="Returns the expiration time of a hash field as a Unix timestamp, in msec.",
         complexity=_COMPLEXITY, key_specs=key_spec(("RO", "ACCESS")),
         arguments=(_KEY_ARG, _FIELDS_BLOCK))
def hpexpiretime(client: Client, argv: list[bytes]) -> Any:
    return _httl(client, argv, relative=False, seconds=False)


@command("hpersist", -5, "write fast", keys=(1, 1, 1), group="hash", since="7.4.0",
         summary="Removes the expiration time for each specified field", complexity=_COMPLEXITY,
         key_specs=key_spec(("RW", "UPDATE")), arguments=(_KEY_ARG, _FIELDS_BLOCK))
def hpersist(client: Client, argv: list[bytes]) -> Any:
    key = argv[1]
    db = client.db
    h = get_hash(db, key)
    fields = _parse_fields(argv, 3, _NUMFIELDS_POSITIVE)
    if h is None:
        return [-2] * len(fields)
    now = now_ms()
    out: list[int] = []
    changed = False
    for field in fields:
        if h.get(field) is None:
            out.append(-2)
            continue
        when = h.expire_time(field)
        if when is None:
            out.append(-1)
        elif when < now:
            out.append(-2)  # already expired: as if absent
        else:
            h.persist(field)
            out.append(1)
            changed = True
    if changed:
        db.signal_modified(key)
        notify_keyspace_event(client, NOTIFY_HASH, b"hpersist", key, db.index)
        client.propagate(argv)
    return out


__all__ = ["active_expire_cycle", "delete_expired_field", "schedule"]
