"""Hash commands: HSET, HSETNX, HMSET, HGET, HMGET, HGETALL, HKEYS, HVALS, HDEL, HLEN, HEXISTS,
HSTRLEN, HINCRBY, HINCRBYFLOAT, HRANDFIELD, HSCAN; the hash value type's registration, and the
lazy side of field expiration that every command shares (hash_expire.py has the HEXPIRE family
and the active cycle).

An expired field stays stored until something deletes it: a command that looks it up by name
(HGET, HEXISTS, HINCRBY...) deletes it and logs the deletion as an HDEL, as Redis 7.4's
hashTypeGetValue does; listing commands (HGETALL, HSCAN...) only skip it; HLEN still counts it,
as Redis's hashTypeLength(o, 0) does.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from hashes import Hash
from hashes.hash import unpack
from protocol.floats import format_long_double, parse_long_double, round_long_double
from protocol.numbers import parse_int, string2ll
from protocol.reply import OK, ErrorReply, Raw
from server import scan_order, value_types
from server.command_table import command, key_spec, on_server_start, run_of
from server.commands.keys import parse_cursor
from server.commands.runs import announce_calls, run_end
from server.glob import compile_glob
from server.keyspace import EXPIRY_DELETE, EXPIRY_KEEP, Database, now_ms
from server.notify import NOTIFY_GENERIC, NOTIFY_HASH, notify_keyspace_event

if TYPE_CHECKING:
    from server.config import Config
    from server.connection import Client
    from server.server import Server

SYNTAX_ERROR = ErrorReply("ERR syntax error")
LLONG_MAX = 2**63 - 1
LLONG_MIN = -(2**63)
_LONG_MAX = LLONG_MAX

_KEY_ARG = {"name": "key", "type": "key", "key_spec_index": 0}
_DATA_ARG = {"name": "data", "type": "block", "multiple": True, "arguments": (
    {"name": "field", "type": "string"}, {"name": "value", "type": "string"})}
_FIELD_ARG = {"name": "field", "type": "string"}
_FIELDS_ARG = {"name": "field", "type": "string", "multiple": True}

# Fields per command in the AOF rewrite, as Redis's AOF_REWRITE_ITEMS_PER_CMD.
REWRITE_BATCH = 64

# Set by hash_expire: called with (db, key, hash) when a hash gains field TTLs another way than
# a HEXPIRE command (COPY, a replayed command), so that the active cycle knows of it.
schedule_hook: list[Any] = []


# --- the value type ------------------------------------------------------------------------------


def _rewrite(key: bytes, h: Hash) -> Iterable[list[bytes]]:
    now = now_ms()
    ttl = h.ttl or {}
    flat: list[bytes] = []
    # A field already expired is left out: its HDEL is on its way (active or lazy expiry).
    for field, value in h.items():
        when = ttl.get(field)
        if when is not None and when < now:
            continue
        flat.append(field)
        flat.append(value)
    for start in range(0, len(flat), 2 * REWRITE_BATCH):
        yield [b"HSET", key, *flat[start:start + 2 * REWRITE_BATCH]]
    by_time: dict[int, list[bytes]] = {}
    for field, when in ttl.items():
        if when >= now and h.get(field) is not None:
            by_time.setdefault(when, []).append(field)
    for when, fields in sorted(by_time.items()):
        for start in range(0, len(fields), REWRITE_BATCH):
            batch = fields[start:start + REWRITE_BATCH]
            yield [b"HPEXPIREAT", key, b"%d" % when, b"FIELDS", b"%d" % len(batch), *batch]


def _copy(h: Hash) -> Hash:
    other = h.copy()
    if other.ttl:
        for hook in schedule_hook:
            hook(None, None, other)
    return other


def _encoding(h: Hash, _config: Config) -> bytes:
    return h.encoding()


def _memory(h: Hash, _samples: int) -> int:
    return h.nbytes()


value_types.register(value_types.ValueType(Hash, b"hash", _rewrite, _copy, _encoding, _memory))


# --- lookups and lazy field expiry ------------------------------------------------------------


def get_hash(db: Database, key: bytes) -> Hash | None:
    """The hash at key, None when missing; WRONGTYPE for another type."""
    return db.get_typed(key, Hash)


def read_hash(db: Database, key: bytes) -> Hash | None:
    """get_hash for a read command (Redis's lookupKeyRead): a miss publishes `keymiss`."""
    return db.read_typed(key, Hash)


# hash-max-listpack-entries and hash-max-listpack-value, kept current by _follow_limits: read
# by every write, cheaper here than through the configuration's lookup.
_limits = [512, 64]


def limits(client: Client) -> tuple[int, int]:
    return _limits[0], _limits[1]


@on_server_start
def _follow_limits(server: Server) -> None:
    config = server.config

    def apply(_value: object) -> None:
        _limits[0] = config["hash-max-listpack-entries"]
        _limits[1] = config["hash-max-listpack-value"]

    apply(None)
    config.on_change("hash-max-listpack-entries", apply)
    config.on_change("hash-max-listpack-value", apply)


def delete_expired_field(client: Client, db: Database, key: bytes, h: Hash, field: bytes,
                         announce: bool = True) -> bool:
    """Delete a field found expired, logged as HDEL (before the running command's own effect,
    as Redis's propagateHashFieldDeletion), announced as `hexpired` (and `del` when the hash
    goes) unless the caller announces once for several. True when the hash went with it."""
    h.delete(field)
    db.keyspace.effects.add(db.index, [b"HDEL", key, field])
    if announce:
        notify_keyspace_event(client, NOTIFY_HASH, b"hexpired", key, db.index)
    if h.is_empty():
        db.delete(key)
        if announce:
            notify_keyspace_event(client, NOTIFY_GENERIC, b"del", key, db.index)
        return True
    db.signal_modified(key)
    return False


def lookup_field(client: Client, key: bytes, h: Hash, field: bytes,
                 now: int, announce: bool = True) -> tuple[bytes | None, bool]:
    """The live value of a field (None: absent or expired) and whether the hash was deleted
    because its last field expired. An expired field is deleted, except while the AOF loads
    (Redis only pretends it is gone then)."""
    value = h.get(field)
    if value is None:
        return None, False
    ttl = h.ttl
    if not ttl:
        return value, False
    when = ttl.get(field)
    if when is None or when >= now:
        return value, False
    if client.is_loader:
        return None, False
    expiry = client.keyspace.expiry
    if expiry != EXPIRY_DELETE:
        # A replica deletes nothing: its master's HDEL does. Its master's own commands still
        # see the field (Redis's hashTypeGetValue on a replica).
        return (value if expiry == EXPIRY_KEEP else None), False
    return None, delete_expired_field(client, client.db, key, h, field, announce)


def expire_all_fields(client: Client, key: bytes, h: Hash, now: int) -> bool:
    """Delete every expired field (HRANDFIELD, as Redis's hashTypeExpireIfNeeded). True when the
    hash went with them."""
    if client.is_loader or client.keyspace.expiry != EXPIRY_DELETE:
        return False
    db = client.db
    fields = h.expired_fields(now)
    gone = False
    for field in fields:
        if delete_expired_field(client, db, key, h, field, False):
            gone = True
            break
    # One announcement for all of them, as Redis's hashTypeExpire.
    if fields:
        notify_keyspace_event(client, NOTIFY_HASH, b"hexpired", key, db.index)
        if gone:
            notify_keyspace_event(client, NOTIFY_GENERIC, b"del", key, db.index)
    return gone


def live_flat(h: Hash, now: int) -> list[bytes]:
    """field, value... without the expired fields (which are not deleted)."""
    flat = h.flat()
    ttl = h.ttl
    if not ttl:
        return flat
    out: list[bytes] = []
    for j in range(0, len(flat), 2):
        when = ttl.get(flat[j])
        if when is None or when >= now:
            out.append(flat[j])
            out.append(flat[j + 1])
    return out


def _write_hash(client: Client, key: bytes) -> tuple[Hash, bool]:
    """The hash a write goes to, and whether it is new (not yet in the keyspace)."""
    h = get_hash(client.db, key)
    if h is None:
        return Hash(), True
    return h, False


# --- HSET / HSETNX / HMSET -----------------------------------------------------------------------


def _hset(client: Client, argv: list[bytes]) -> int:
    if len(argv) % 2 == 1:
        raise ErrorReply(f"ERR wrong number of arguments for '{argv[0].decode('utf-8', 'replace').lower()}' command")
    key = argv[1]
    db = client.db
    h, new = _write_hash(client, key)
    max_entries, max_value = limits(client)
    created = h.set_pairs(argv, 2, max_entries, max_value)
    if new:
        db.add(key, h)
    else:
        db.signal_modified(key)
    client.keyspace.dirty += (len(argv) - 2) // 2 - 1  # one change per field, as Redis counts
    notify_keyspace_event(client, NOTIFY_HASH, b"hset", key, db.index)
    client.propagate(argv)
    return created



@command("hset", -4, "write denyoom fast", keys=(1, 1, 1), group="hash", since="2.0.0",
         summary="Creates or modifies the value of a field in a hash.",
         complexity="O(1) for each field/value pair added, so O(N) to add N field/value pairs "
         "when the command is called with multiple field/value pairs.",
         key_specs=key_spec(("RW", "UPDATE")),
         history=(("4.0.0", "Accepts multiple `field` and `value` arguments."),),
         arguments=(_KEY_ARG, _DATA_ARG))
def hset(client: Client, argv: list[bytes]) -> Any:
    return _hset(client, argv)


@command("hmset", -4, "write denyoom fast", keys=(1, 1, 1), group="hash", since="2.0.0",
         summary="Sets the values of multiple fields.",
         complexity="O(N) where N is the number of fields being set.",
         key_specs=key_spec(("RW", "UPDATE")), doc_flags=("deprecated",),
         arguments=(_KEY_ARG, _DATA_ARG))
def hmset(client: Client, argv: list[bytes]) -> Any:
    _hset(client, argv)
    return OK


@run_of("hset")
def hset_run(client: Client, commands: list[list[bytes]], start: int) -> int:
    """Consecutive `HSET key field value...` to one hash, as a client pipelines updates of one
    record: one lookup, the packed form unpacked and packed once, one change signal. Each call
    sets, answers, counts and is logged as it would alone; another command, key or spelling, an
    odd argument count, or a hash with field expiry times ends or skips the run."""
    end = run_end(commands, start, 4, even_argc=True)
    done = end - start
    if done < 2:
        return 0
    key = commands[start][1]
    db = client.db
    h = db.get(key)
    created = h is None
    if h is None:
        h = Hash()
    elif type(h) is not Hash or h.ttl:
        return 0
    max_entries, max_value = limits(client)
    replies: list[bytes] = []
    fields = 0
    h.open_batch()
    for i in range(start, end):
        argv = commands[i]
        replies.append(b":%d\r\n" % h.set_pairs(argv, 2, max_entries, max_value))
        fields += (len(argv) - 2) // 2
    h.close_batch()
    if created:
        db.add(key, h)
    else:
        db.signal_modified(key)
    client.keyspace.dirty += fields - 1
    announce_calls(client, db, key, commands, start, end, NOTIFY_HASH, b"hset")
    client.out.append(b"".join(replies))
    return done


@command("hsetnx", 4, "write denyoom fast", keys=(1, 1, 1), group="hash", since="2.0.0",
         summary="Sets the value of a field in a hash only when the field doesn't exist.",
         key_specs=key_spec(("RW", "INSERT")),
         arguments=(_KEY_ARG, _FIELD_ARG, {"name": "value", "type": "string"}))
def hsetnx(client: Client, argv: list[bytes]) -> Any:
    key, field = argv[1], argv[2]
    db = client.db
    h, new = _write_hash(client, key)
    if not new:
        value, deleted = lookup_field(client, key, h, field, now_ms())
        if value is not None:
            return 0
        if deleted:
            h, new = Hash(), True
    max_entries, max_value = limits(client)
    h.set(field, argv[3], max_entries, max_value)
    if new:
        db.add(key, h)
    else:
        db.signal_modified(key)
    notify_keyspace_event(client, NOTIFY_HASH, b"hset", key, db.index)
    client.propagate(argv)
    return 1


# --- reads ---------------------------------------------------------------------------------------


@command("hget", 3, "readonly fast", keys=(1, 1, 1), group="hash", since="2.0.0",
         summary="Returns the value of a field in a hash.",
         key_specs=key_spec(("RO", "ACCESS")), arguments=(_KEY_ARG, _FIELD_ARG))
def hget(client: Client, argv: list[bytes]) -> Any:
    key = argv[1]
    h = read_hash(client.db, key)
    if h is None:
        return None
    if not h.ttl:
        return h.get(argv[2])
    return lookup_field(client, key, h, argv[2], now_ms())[0]


@command("hmget", -3, "readonly fast", keys=(1, 1, 1), group="hash", since="2.0.0",
         summary="Returns the values of all fields in a hash.",
         complexity="O(N) where N is the number of fields being requested.",
         key_specs=key_spec(("RO", "ACCESS")), arguments=(_KEY_ARG, _FIELDS_ARG))
def hmget(client: Client, argv: list[bytes]) -> Any:
    key = argv[1]
    h = read_hash(client.db, key)
    if h is None:
        return [None] * (len(argv) - 2)
    if not h.ttl:
        return [h.get(field) for field in argv[2:]]
    now = now_ms()
    out: list[bytes | None] = []
    size = len(h)
    deleted = False
    for field in argv[2:]:
        value, deleted = lookup_field(client, key, h, field, now, False)
        out.append(value)
        if deleted:
            out += [None] * (len(argv) - 2 - len(out))
            break
    # One announcement for all the fields found expired, as Redis's HMGET.
    if deleted or len(h) < size:
        db = client.db
        notify_keyspace_event(client, NOTIFY_HASH, b"hexpired", key, db.index)
        if deleted:
            notify_keyspace_event(client, NOTIFY_GENERIC, b"del", key, db.index)
    return out


# HGETALL of a packed hash read more than once: its pairs as RESP bulk strings, valid while the
# hash holds the same bytes object (every write makes a new one). By hash, at most _ENCODED_MAX.
_encoded: dict[int, tuple[Hash, bytes, bytes, int]] = {}
_ENCODED_MAX = 256


def _encoded_pairs(h: Hash, data: bytes) -> tuple[bytes, int]:
    cached = _encoded.get(id(h))
    if cached is not None and cached[0] is h and cached[1] is data:
        return cached[2], cached[3]
    parts: list[bytes] = []
    flat = unpack(data)
    for item in flat:
        parts.append(b"$%d\r\n" % len(item))
        parts.append(item)
        parts.append(b"\r\n")
    body = b"".join(parts)
    if len(_encoded) >= _ENCODED_MAX:
        _encoded.clear()
    pairs = len(flat) // 2
    _encoded[id(h)] = (h, data, body, pairs)
    return body, pairs


def _all(client: Client, argv: list[bytes], what: int) -> Any:
    h = read_hash(client.db, argv[1])
    if h is None:
        return {} if what == 3 else []
    data = h.data
    if what == 3 and not h.ttl and isinstance(data, bytes):
        body, pairs = _encoded_pairs(h, data)
        # The same bulk strings under a map header (RESP3) or an array of twice as many (RESP2).
        header = b"%%%d\r\n" % pairs if client.resp3 else b"*%d\r\n" % (2 * pairs)
        return Raw(header + body)
    flat = live_flat(h, now_ms()) if h.ttl else h.flat()
    if what == 1:
        return flat[::2]
    if what == 2:
        return flat[1::2]
    if not client.resp3:
        return flat  # a map is a flat array in RESP2: no dict to build
    return dict(zip(flat[::2], flat[1::2], strict=True))


@command("hgetall", 2, "readonly", keys=(1, 1, 1), group="hash", since="2.0.0",
         summary="Returns all fields and values in a hash.",
         complexity="O(N) where N is the size of the hash.",
         tips=("nondeterministic_output_order",), key_specs=key_spec(("RO", "ACCESS")),
         arguments=(_KEY_ARG,))
def hgetall(client: Client, argv: list[bytes]) -> Any:
    return _all(client, argv, 3)


@command("hkeys", 2, "readonly", keys=(1, 1, 1), group="hash", since="2.0.0",
         summary="Returns all fields in a hash.",
         complexity="O(N) where N is the size of the hash.",
         tips=("nondeterministic_output_order",), key_specs=key_spec(("RO", "ACCESS")),
         arguments=(_KEY_ARG,))
def hkeys(client: Client, argv: list[bytes]) -> Any:
    return _all(client, argv, 1)


@command("hvals", 2, "readonly", keys=(1, 1, 1), group="hash", since="2.0.0",
         summary="Returns all values in a hash.",
         complexity="O(N) where N is the size of the hash.",
         tips=("nondeterministic_output_order",), key_specs=key_spec(("RO", "ACCESS")),
         arguments=(_KEY_ARG,))
def hvals(client: Client, argv: list[bytes]) -> Any:
    return _all(client, argv, 2)


@command("hlen", 2, "readonly fast", keys=(1, 1, 1), group="hash", since="2.0.0",
         summary="Returns the number of fields in a hash.",
         key_specs=key_spec(("RO",)), arguments=(_KEY_ARG,))
def hlen(client: Client, argv: list[bytes]) -> Any:
    h = read_hash(client.db, argv[1])
    return 0 if h is None else len(h)


@command("hexists", 3, "readonly fast", keys=(1, 1, 1), group="hash", since="2.0.0",
         summary="Determines whether a field exists in a hash.",
         key_specs=key_spec(("RO",)), arguments=(_KEY_ARG, _FIELD_ARG))
def hexists(client: Client, argv: list[bytes]) -> Any:
    key = argv[1]
    h = read_hash(client.db, key)
    if h is None:
        return 0
    return 0 if lookup_field(client, key, h, argv[2], now_ms())[0] is None else 1


@command("hstrlen", 3, "readonly fast", keys=(1, 1, 1), group="hash", since="3.2.0",
         summary="Returns the length of the value of a field.",
         key_specs=key_spec(("RO",)), arguments=(_KEY_ARG, _FIELD_ARG))
def hstrlen(client: Client, argv: list[bytes]) -> Any:
    key = argv[1]
    h = read_hash(client.db, key)
    if h is None:
        return 0
    value = lookup_field(client, key, h, argv[2], now_ms())[0]
    return 0 if value is None else len(value)


# --- HDEL ----------------------------------------------------------------------------------------


@command("hdel", -3, "write fast", keys=(1, 1, 1), group="hash", since="2.0.0",
         summary="Deletes one or more fields and their values from a hash. Deletes the hash if no "
         "fields remain.",
         complexity="O(N) where N is the number of fields to be removed.",
         key_specs=key_spec(("RW", "DELETE")),
         history=(("2.4.0", "Accepts multiple `field` arguments."),),
         arguments=(_KEY_ARG, _FIELDS_ARG))
def hdel(client: Client, argv: list[bytes]) -> Any:
    key = argv[1]
    db = client.db
    h = get_hash(db, key)
    if h is None:
        return 0
    # An expired field not yet deleted still counts, as in Redis (hashTypeDelete).
    deleted = h.delete_many(argv[2:])
    if deleted:
        notify_keyspace_event(client, NOTIFY_HASH, b"hdel", key, db.index)
        if h.is_empty():
            db.delete(key)
            notify_keyspace_event(client, NOTIFY_GENERIC, b"del", key, db.index)
        else:
            db.signal_modified(key)
        client.propagate(argv)
    return deleted


# --- HINCRBY / HINCRBYFLOAT ----------------------------------------------------------------------


def _current(client: Client, key: bytes, field: bytes) -> tuple[Hash, bool, bytes | None]:
    h, new = _write_hash(client, key)
    if new:
        return h, True, None
    value, deleted = lookup_field(client, key, h, field, now_ms())
    if deleted:
        return Hash(), True, None
    return h, False, value


def _store(client: Client, key: bytes, h: Hash, new: bool, field: bytes, value: bytes) -> None:
    max_entries, max_value = limits(client)
    # The field keeps its TTL, as Redis's HASH_SET_KEEP_TTL.
    h.set(field, value, max_entries, max_value, keep_ttl=True)
    if new:
        client.db.add(key, h)
    else:
        client.db.signal_modified(key)


@command("hincrby", 4, "write denyoom fast", keys=(1, 1, 1), group="hash", since="2.0.0",
         summary="Increments the integer value of a field in a hash by a number. Uses 0 as initial "
         "value if the field doesn't exist.",
         key_specs=key_spec(("RW", "ACCESS", "UPDATE")),
         arguments=(_KEY_ARG, _FIELD_ARG, {"name": "increment", "type": "integer"}))
def hincrby(client: Client, argv: list[bytes]) -> Any:
    key, field = argv[1], argv[2]
    incr = parse_int(argv[3])
    h, new, current = _current(client, key, field)
    value = 0
    if current is not None:
        parsed = string2ll(current)
        if parsed is None:
            raise ErrorReply("ERR hash value is not an integer")
        value = parsed
    result = value + incr
    if not LLONG_MIN <= result <= LLONG_MAX:
        raise ErrorReply("ERR increment or decrement would overflow")
    _store(client, key, h, new, field, b"%d" % result)
    notify_keyspace_event(client, NOTIFY_HASH, b"hincrby", key, client.db.index)
    client.propagate(argv)
    return result


@command("hincrbyfloat", 4, "write denyoom fast", keys=(1, 1, 1), group="hash", since="2.6.0",
         summary="Increments the floating point value of a field by a number. Uses 0 as initial "
         "value if the field doesn't exist.",
         key_specs=key_spec(("RW", "ACCESS", "UPDATE")),
         arguments=(_KEY_ARG, _FIELD_ARG, {"name": "increment", "type": "double"}))
def hincrbyfloat(client: Client, argv: list[bytes]) -> Any:
    key, field = argv[1], argv[2]
    incr = parse_long_double(argv[3])
    if isinstance(incr, float):
        raise ErrorReply("ERR value is NaN or Infinity")
    h, new, current = _current(client, key, field)
    value: Fraction | float = Fraction(0)
    if current is not None:
        value = parse_long_double(current, ErrorReply("ERR hash value is not a float"))
    if isinstance(value, float):
        raise ErrorReply("ERR increment would produce NaN or Infinity")
    result = round_long_double(value + incr)
    if isinstance(result, float):
        raise ErrorReply("ERR increment would produce NaN or Infinity")
    text = format_long_double(result)
    _store(client, key, h, new, field, text)
    notify_keyspace_event(client, NOTIFY_HASH, b"hincrbyfloat", key, client.db.index)
    # Logged as the HSET of the result: a replay must not redo the arithmetic.
    client.propagate([b"HSET", key, field, text])
    return text


# --- HRANDFIELD ----------------------------------------------------------------------------------


def _parse_long(arg: bytes, low: int, high: int) -> int:
    value = parse_int(arg)
    if not low <= value <= high:
        raise ErrorReply(f"ERR value is out of range, value must between {low} and {high}")
    return value


@command("hrandfield", -2, "readonly", keys=(1, 1, 1), group="hash", since="6.2.0",
         summary="Returns one or more random fields from a hash.",
         complexity="O(N) where N is the number of fields returned",
         tips=("nondeterministic_output",), key_specs=key_spec(("RO", "ACCESS")),
         arguments=(_KEY_ARG, {"name": "options", "type": "block", "optional": True, "arguments": (
             {"name": "count", "type": "integer"},
             {"name": "withvalues", "token": "WITHVALUES", "type": "pure-token",
              "optional": True})}))
def hrandfield(client: Client, argv: list[bytes]) -> Any:
    key = argv[1]
    db = client.db
    if len(argv) >= 3:
        count = _parse_long(argv[2], -_LONG_MAX, _LONG_MAX)
        withvalues = False
        if len(argv) > 4 or (len(argv) == 4 and argv[3].lower() != b"withvalues"):
            raise SYNTAX_ERROR
        if len(argv) == 4:
            withvalues = True
            if count < -_LONG_MAX // 2 or count > _LONG_MAX // 2:
                raise ErrorReply("ERR value is out of range")
        return _random_with_count(client, key, count, withvalues)
    h = read_hash(db, key)
    if h is None:
        return None
    if h.ttl and expire_all_fields(client, key, h, now_ms()):
        return None
    return random.choice(h.fields())


def _random_with_count(client: Client, key: bytes, count: int, withvalues: bool) -> Any:
    h = read_hash(client.db, key)
    if h is None:
        return []
    if h.ttl and expire_all_fields(client, key, h, now_ms()):
        return []
    if count == 0:
        return []
    flat = h.flat()
    size = len(flat) // 2
    resp3 = client.resp3
    picks: list[int]
    if count < 0 or count == 1:
        n = -count if count < 0 else 1
        picks = [random.randrange(size) for _ in range(n)]
    elif count >= size:
        picks = list(range(size))
    else:
        picks = random.sample(range(size), count)
    if not withvalues:
        return [flat[2 * i] for i in picks]
    if resp3:
        return [[flat[2 * i], flat[2 * i + 1]] for i in picks]
    out: list[bytes] = []
    for i in picks:
        out.append(flat[2 * i])
        out.append(flat[2 * i + 1])
    return out


# --- HSCAN ---------------------------------------------------------------------------------------
#
# A listpack hash answers everything at once with cursor 0, as Redis does. A hashtable one is
# walked in server/scan_order.py's cursor order. The fields sorted by position of the hashes last
# scanned are kept, rebuilt when an iteration starts.

_scan_cache: dict[int, tuple[Hash, Any, list[bytes]]] = {}


def _scan_order(h: Hash, cursor: int) -> tuple[Any, list[bytes]]:
    cached = _scan_cache.get(id(h))
    if cached is not None and cached[0] is h and cursor != 0:
        return cached[1], cached[2]
    positions, fields = scan_order.ordered(h.fields())
    if len(_scan_cache) >= 16:
        _scan_cache.clear()
    _scan_cache[id(h)] = (h, positions, fields)
    return positions, fields


@command("hscan", -3, "readonly", keys=(1, 1, 1), group="hash", since="2.8.0",
         summary="Iterates over fields and values of a hash.",
         complexity="O(1) for every call. O(N) for a complete iteration, including enough command "
         "calls for the cursor to return back to 0. N is the number of elements inside the "
         "collection.",
         tips=("nondeterministic_output",), key_specs=key_spec(("RO", "ACCESS")),
         arguments=(_KEY_ARG, {"name": "cursor", "type": "integer"},
                    {"token": "MATCH", "name": "pattern", "type": "pattern", "optional": True},
                    {"token": "COUNT", "name": "count", "type": "integer", "optional": True},
                    {"token": "NOVALUES", "name": "novalues", "type": "pure-token",
                     "optional": True}))
def hscan(client: Client, argv: list[bytes]) -> Any:

    cursor = parse_cursor(argv[2])
    h = read_hash(client.db, argv[1])
    if h is None:
        return [b"0", []]
    count = 10
    pattern: bytes | None = None
    novalues = False
    i = 3
    while i < len(argv):
        option = argv[i].lower()
        remaining = len(argv) - i
        if option == b"count" and remaining >= 2:
            count = parse_int(argv[i + 1])
            if count < 1:
                raise SYNTAX_ERROR
            i += 2
        elif option == b"match" and remaining >= 2:
            pattern = None if argv[i + 1] == b"*" else argv[i + 1]
            i += 2
        elif option == b"novalues":
            novalues = True
            i += 1
        else:
            raise SYNTAX_ERROR
    now = now_ms()
    ttl = h.ttl
    found: list[bytes] = []
    next_cursor = 0
    pairs: Iterator[tuple[bytes, bytes]]
    if not h.table:
        flat = live_flat(h, now) if ttl else h.flat()
        pairs = iter(list(zip(flat[::2], flat[1::2], strict=True)))
    else:
        positions, fields = _scan_order(h, cursor)
        next_cursor, walked = scan_order.walk(positions, fields, h, cursor, count)
        picked: list[tuple[bytes, bytes]] = []
        for field in walked:
            value = h.get(field)
            if value is not None:
                picked.append((field, value))
        if ttl:
            picked = [(f, v) for f, v in picked if (w := ttl.get(f)) is None or w >= now]
        pairs = iter(picked)
    match = compile_glob(pattern).match if pattern is not None else None
    for field, value in pairs:
        if match is not None and match(field) is None:
            continue
        found.append(field)
        if not novalues:
            found.append(value)
    return [b"%d" % next_cursor, found]
