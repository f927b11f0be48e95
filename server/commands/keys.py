"""Generic keyspace commands: DEL, UNLINK, EXISTS, TYPE, TOUCH, KEYS, SCAN, RANDOMKEY, RENAME,
RENAMENX, COPY, MOVE, SWAPDB, DBSIZE, FLUSHDB, FLUSHALL. None names a value type: what differs by
type goes through server/value_types."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.encoder import write_reply
from protocol.numbers import parse_int
from protocol.reply import OK, ErrorReply, SimpleString
from server import scan_order, value_types
from server.command_table import command, key_spec, run_of
from server.commands.runs import read_run_end
from server.glob import compile_glob
from server.keyspace import TYPE_NAMES, Database, type_name
from server.notify import NOTIFY_GENERIC, notify_keyspace_event

if TYPE_CHECKING:
    from server.connection import Client

SYNTAX_ERROR = ErrorReply("ERR syntax error")
_NO_SUCH_KEY = ErrorReply("ERR no such key")
_SAME_OBJECT = ErrorReply("ERR source and destination objects are the same")
_DB_RANGE = ErrorReply("ERR DB index is out of range")


def _delete(client: Client, argv: list[bytes]) -> int:
    db = client.db
    deleted = 0
    for key in argv[1:]:
        if db.delete(key):
            deleted += 1
            notify_keyspace_event(client, NOTIFY_GENERIC, b"del", key, db.index)
    if deleted:
        client.propagate(argv)
    return deleted


@command("del", -2, "write", keys=(1, -1, 1),
         key_specs=key_spec(("RM", "DELETE"), last=-1), group="generic", since="1.0.0",
         summary="Deletes one or more keys.",
         complexity="O(N) where N is the number of keys that will be removed. When a key to remove "
         "holds a value other than a string, the individual complexity for this key is O(M) where "
         "M is the number of elements in the list, set, sorted set or hash. Removing a single key "
         "that holds a string value is O(1).")
def del_(client: Client, argv: list[bytes]) -> Any:
    return _delete(client, argv)


@command("unlink", -2, "write fast", keys=(1, -1, 1),
         key_specs=key_spec(("RM", "DELETE"), last=-1), group="generic", since="4.0.0",
         summary="Asynchronously deletes one or more keys.",
         complexity="O(1) for each key removed regardless of its size. Then the command does O(N) "
         "work in a different thread in order to reclaim memory, where N is the number of "
         "allocations the deleted objects where composed of.")
def unlink(client: Client, argv: list[bytes]) -> Any:
    # Python frees memory when the last reference goes: there is nothing to defer.
    return _delete(client, argv)


@command("exists", -2, "readonly fast", keys=(1, -1, 1),
         key_specs=key_spec(("RO",), last=-1), group="generic", since="1.0.0",
         summary="Determines whether one or more keys exist.",
         complexity="O(N) where N is the number of keys to check.")
def exists(client: Client, argv: list[bytes]) -> Any:
    # A key named twice counts twice, as in Redis. Not an access (LOOKUP_NOTOUCH).
    return _count_live(client.db, argv, False)


def _count_live(db: Database, argv: list[bytes], touch: bool) -> int:
    # A loop, not sum() over a generator: these are one-key calls mostly, and hot. The lookups
    # are direct calls: a bound method passed in made each one a Python call.
    count = 0
    for i in range(1, len(argv)):
        # Read lookups: a miss publishes `keymiss` (Redis's lookupKeyRead).
        value = db.read(argv[i]) if touch else db.read_peek(argv[i])
        if value is not None:
            count += 1
    return count


@command("touch", -2, "readonly fast", keys=(1, -1, 1), group="generic", since="3.2.1",
         summary="Returns the number of existing keys out of those specified after updating the "
         "time they were last accessed.",
         complexity="O(N) where N is the number of keys that will be touched.",
         tips=("request_policy:multi_shard", "response_policy:agg_sum"),
         key_specs=key_spec(("RO",), 1, last=-1),
         arguments=({"name": "key", "type": "key", "key_spec_index": 0, "multiple": True},))
def touch(client: Client, argv: list[bytes]) -> Any:
    # An access even for a CLIENT NO-TOUCH client: dispatch leaves touching on for TOUCH.
    return _count_live(client.db, argv, True)


@run_of("touch")
def touch_run(client: Client, commands: list[list[bytes]], start: int) -> int:
    """Consecutive `TOUCH key` calls, whatever their keys, as a client pipelines them: the
    dispatch checks made once for the run, each call counted and answered as alone."""
    end = read_run_end(commands, start, 2)
    if end - start < 2:
        return 0
    db = client.db
    out = client.out
    resp3 = client.resp3
    for i in range(start, end):
        write_reply(out, 0 if db.read(commands[i][1]) is None else 1, resp3)
    return end - start


@command("type", 2, "readonly fast", keys=(1, 1, 1),
         key_specs=key_spec(("RO",)), group="generic", since="1.0.0",
         summary="Determines the type of value stored at a key.")
def type_(client: Client, argv: list[bytes]) -> Any:
    value = client.db.read_peek(argv[1])
    return SimpleString(b"none" if value is None else type_name(value))


@command("keys", 2, "readonly", group="generic", since="1.0.0", acl=("@dangerous",),
         summary="Returns all key names that match a pattern.",
         complexity="O(N) with N being the number of keys in the database, under the assumption "
         "that the key names in the database and the given pattern have limited length.")
def keys(client: Client, argv: list[bytes]) -> Any:
    pattern = argv[1]
    if pattern == b"*":
        return list(client.db.keys())
    match = compile_glob(pattern).match
    return [key for key in client.db.keys() if match(key) is not None]


@command("randomkey", 1, "readonly touches_arbitrary_keys", group="generic", since="1.0.0",
         summary="Returns a random key name from the database.")
def randomkey(client: Client, argv: list[bytes]) -> Any:
    return client.db.random_key()


@command("dbsize", 1, "readonly fast", group="server", since="1.0.0", acl=("@keyspace",),
         summary="Returns the number of keys in the database.")
def dbsize(client: Client, argv: list[bytes]) -> Any:
    # Like Redis, keys that expired but were not yet reclaimed still count.
    return len(client.db)


def _flush_option(argv: list[bytes]) -> None:
    if len(argv) == 2 and argv[1].lower() in (b"sync", b"async"):
        return
    if len(argv) != 1:
        raise SYNTAX_ERROR


def _flush(db: Database) -> None:
    # Database.flush signals every key it held, which is exactly Redis's WATCH rule: a watched key
    # is invalidated by a flush only if it existed in the flushed database.
    db.flush()
    _scan_snapshots.pop(db, None)


@command("flushdb", -1, "write", group="server", since="1.0.0", acl=("@keyspace", "@dangerous"),
         summary="Remove all keys from the current database.",
         complexity="O(N) where N is the number of keys in the selected database")
def flushdb(client: Client, argv: list[bytes]) -> Any:
    _flush_option(argv)
    db = client.db
    had_keys = bool(db.data)
    _flush(db)
    if had_keys:
        client.propagate(argv)
    return OK


@command("flushall", -1, "write", group="server", since="1.0.0", acl=("@keyspace", "@dangerous"),
         summary="Removes all keys from all databases.",
         complexity="O(N) where N is the total number of keys in all databases")
def flushall(client: Client, argv: list[bytes]) -> Any:
    _flush_option(argv)
    flushed = False
    for db in client.server.keyspace.dbs:
        if db.data:
            _flush(db)
            flushed = True
    if flushed:
        client.propagate(argv)
    client.server.persistence.after_flushall()
    return OK


# --- RENAME / COPY ------------------------------------------------------------------------------


def _rename(client: Client, argv: list[bytes], nx: bool) -> Any:
    db = client.db
    src, dst = argv[1], argv[2]
    value = db.get(src)
    if value is None:
        return _NO_SUCH_KEY
    if src == dst:
        return 0 if nx else OK
    expire = db.expires.get(src)
    access = db.access_of(src)
    encoding = db.encodings.get(src)
    if db.get(dst) is not None:
        if nx:
            return 0
        db.delete(dst)
    db.add(dst, value)
    # The same object under a new name: its access data and encoding go along.
    if access is not None:
        db.set_access(dst, access)
    if encoding is not None:
        db.encodings[dst] = encoding
    if expire is not None:
        db.set_expire(dst, expire)
    db.delete(src)
    # Redis's dbAdd signals the new key as ready: a client blocked on dst (XREAD) must see it.
    db.keyspace.signal_ready(db.index, dst)
    notify_keyspace_event(client, NOTIFY_GENERIC, b"rename_from", src, db.index)
    notify_keyspace_event(client, NOTIFY_GENERIC, b"rename_to", dst, db.index)
    client.propagate(argv)
    return 1 if nx else OK


@command("rename", 3, "write", keys=(1, 2, 1),
         key_specs=key_spec(("RW", "ACCESS", "DELETE")) + key_spec(("OW", "UPDATE"), 2), group="generic", since="1.0.0",
         summary="Renames a key and overwrites the destination.")
def rename(client: Client, argv: list[bytes]) -> Any:
    return _rename(client, argv, nx=False)


@command("renamenx", 3, "write fast", keys=(1, 2, 1),
         key_specs=key_spec(("RW", "ACCESS", "DELETE")) + key_spec(("OW", "INSERT"), 2), group="generic", since="1.0.0",
         summary="Renames a key only when the target key name doesn't exist.")
def renamenx(client: Client, argv: list[bytes]) -> Any:
    return _rename(client, argv, nx=True)


@command("copy", -3, "write denyoom", keys=(1, 2, 1),
         key_specs=key_spec(("RO", "ACCESS")) + key_spec(("OW", "UPDATE"), 2), group="generic", since="6.2.0",
         summary="Copies the value of a key to a new key.",
         complexity="O(N) worst case for collections, where N is the number of nested items. O(1) "
         "for string values.")
def copy_(client: Client, argv: list[bytes]) -> Any:
    src_db = dst_db = client.db
    dbs = client.server.keyspace.dbs
    replace = False
    i = 3
    while i < len(argv):
        option = argv[i].lower()
        if option == b"replace":
            replace = True
        elif option == b"db" and i + 1 < len(argv):
            index = _db_index(argv[i + 1])
            if not 0 <= index < len(dbs):
                return _DB_RANGE
            dst_db = dbs[index]
            i += 1
        else:
            return SYNTAX_ERROR
        i += 1
    src, dst = argv[1], argv[2]
    if src_db is dst_db and src == dst:
        return _SAME_OBJECT
    value = src_db.read(src)
    if value is None:
        return 0
    expire = src_db.expires.get(src)
    if dst_db.get(dst) is not None:
        if not replace:
            return 0
        dst_db.delete(dst)
    encoding = src_db.encodings.get(src)
    dst_db.add(dst, value_types.of(value).copy(value))
    if encoding is not None:
        dst_db.encodings[dst] = encoding  # Redis's copy keeps the encoding
    if expire is not None:
        dst_db.set_expire(dst, expire)
    dst_db.keyspace.signal_ready(dst_db.index, dst)
    notify_keyspace_event(client, NOTIFY_GENERIC, b"copy_to", dst, dst_db.index)
    client.propagate(argv)
    return 1


# --- MOVE / SWAPDB -------------------------------------------------------------------------------


def _db_index(arg: bytes, error: str | None = None) -> int:
    """A database index as Redis's getIntFromObjectOrReply reads it (a 32-bit int); `error`
    replaces both of its messages when given."""
    try:
        index = parse_int(arg)
    except ErrorReply:
        raise ErrorReply(error or "ERR value is not an integer or out of range") from None
    if not -(2**31) <= index < 2**31:
        raise ErrorReply(error or "ERR value is out of range, value must between -2147483648 "
                         "and 2147483647")
    return index


@command("move", 3, "write fast", keys=(1, 1, 1), group="generic", since="1.0.0",
         summary="Moves a key to another database.",
         key_specs=key_spec(("RW", "ACCESS", "UPDATE")),
         arguments=({"name": "key", "type": "key", "key_spec_index": 0},
                    {"name": "db", "type": "integer"}))
def move(client: Client, argv: list[bytes]) -> Any:
    dbs = client.server.keyspace.dbs
    index = _db_index(argv[2])
    if not 0 <= index < len(dbs):
        return _DB_RANGE
    src, dst = client.db, dbs[index]
    if src is dst:
        return _SAME_OBJECT
    key = argv[1]
    value = src.get(key)
    if value is None:
        return 0
    if dst.get(key) is not None:
        return 0
    expire = src.expires.get(key)
    access = src.access_of(key)
    encoding = src.encodings.get(key)
    # dst.add signals the key ready there: a client blocked on it in that database is served.
    dst.add(key, value)
    if access is not None:
        dst.set_access(key, access)
    if encoding is not None:
        dst.encodings[key] = encoding
    if expire is not None:
        dst.set_expire(key, expire)
    src.delete(key)
    notify_keyspace_event(client, NOTIFY_GENERIC, b"move_from", key, src.index)
    notify_keyspace_event(client, NOTIFY_GENERIC, b"move_to", key, dst.index)
    client.propagate(argv)
    return 1


@command("swapdb", 3, "write fast", group="server", since="4.0.0", acl=("@keyspace", "@dangerous"),
         summary="Swaps two Redis databases.",
         complexity="O(N) where N is the count of clients watching or blocking on keys from both "
         "databases.",
         arguments=({"name": "index1", "type": "integer"}, {"name": "index2", "type": "integer"}))
def swapdb(client: Client, argv: list[bytes]) -> Any:
    first = _db_index(argv[1], "ERR invalid first DB index")
    second = _db_index(argv[2], "ERR invalid second DB index")
    keyspace = client.server.keyspace
    dbs = keyspace.dbs
    if not (0 <= first < len(dbs) and 0 <= second < len(dbs)):
        return _DB_RANGE
    if first != second:
        a, b = dbs[first], dbs[second]
        # A WATCHed key whose value may change (it exists on either side) fails its EXEC.
        if keyspace.watchers:
            for index, key in list(keyspace.watchers):
                if index in (first, second) and (key in a.data or key in b.data):
                    keyspace.touch_watched(index, key)
        # Clients keep their database number (and their WATCHes and blocks stay there): the
        # contents move, the Database objects do not.
        a.data, b.data = b.data, a.data
        a.expires, b.expires = b.expires, a.expires
        a.access, b.access = b.access, a.access
        a.encodings, b.encodings = b.encodings, a.encodings
        a.sizes, b.sizes = b.sizes, a.sizes
        a.changed, b.changed = b.changed, a.changed
        a.deferred, b.deferred = b.deferred, a.deferred
        for tables in (keyspace.table_sizes, keyspace.table_counts):
            tables[first], tables[second] = tables[second], tables[first]
        _scan_snapshots.pop(a, None)
        _scan_snapshots.pop(b, None)
        # Any client blocked on a key of either database may now be served (or, XREADGROUP,
        # fail because its stream is gone): its command re-runs and blocks again if not.
        blocking = client.server.blocking
        for index, key in list(blocking.waiters):
            if index in (first, second):
                keyspace.signal_ready(index, key)
    keyspace.dirty += 1
    client.propagate(argv)
    return OK


# --- SCAN ----------------------------------------------------------------------------------------
#
# The cursor order is server/scan_order.py's. Each database keeps a snapshot of its keys sorted
# by position, rebuilt when an iteration starts (cursor 0) and the database changed.

_MASK64 = (1 << 64) - 1


class _Snapshot:
    __slots__ = ("positions", "keys", "dirty")

    def __init__(self, db: Database) -> None:
        self.positions, self.keys = scan_order.ordered(db.data)
        self.dirty = db.keyspace.dirty


_scan_snapshots: dict[Database, _Snapshot] = {}


def _snapshot(db: Database, cursor: int) -> _Snapshot:
    snap = _scan_snapshots.get(db)
    if snap is None or (cursor == 0 and snap.dirty != db.keyspace.dirty):
        snap = _scan_snapshots[db] = _Snapshot(db)
    return snap


def parse_cursor(arg: bytes) -> int:
    """Redis's string2ull: a strict integer, else whatever strtoull accepts in full."""
    try:
        value = parse_int(arg)
    except ErrorReply:
        pass
    else:
        if value < 0:
            raise ErrorReply("ERR invalid cursor")
        return value
    text = arg.split(b"\0", 1)[0]  # strtoull stops at a C string's end
    body = text.lstrip(b" \t\n\v\f\r")
    negative = body[:1] == b"-"
    if body[:1] in (b"-", b"+"):
        body = body[1:]
    if not body or not body.isdigit() or not text:
        raise ErrorReply("ERR invalid cursor")
    value = int(body)
    if value > _MASK64:
        raise ErrorReply("ERR invalid cursor")
    return (-value) & _MASK64 if negative else value


def scan_keys(db: Database, cursor: int, count: int) -> tuple[int, list[bytes]]:
    """Up to `count` keys from `cursor` on (never splitting keys of equal position), and the next
    cursor. Stale snapshot entries are skipped, but at most 10*count of them per call, like Redis's
    bound on empty buckets."""
    snap = _snapshot(db, cursor)
    return scan_order.walk(snap.positions, snap.keys, db.data, cursor, count)


@command("scan", -2, "readonly touches_arbitrary_keys", group="generic", since="2.8.0",
         summary="Iterates over the key names in the database.",
         complexity="O(1) for every call. O(N) for a complete iteration, including enough command "
         "calls for the cursor to return back to 0. N is the number of elements inside the "
         "collection.")
def scan(client: Client, argv: list[bytes]) -> Any:
    cursor = parse_cursor(argv[1])
    count = 10
    pattern: bytes | None = None
    wanted_type: bytes | None = None
    i = 2
    while i < len(argv):
        option = argv[i].lower()
        has_value = i + 1 < len(argv)
        if option == b"count" and has_value:
            count = parse_int(argv[i + 1])
            if count < 1:
                return SYNTAX_ERROR
        elif option == b"match" and has_value:
            pattern = None if argv[i + 1] == b"*" else argv[i + 1]
        elif option == b"type" and has_value:
            wanted_type = argv[i + 1].lower()
        elif option == b"novalues":
            return ErrorReply("ERR NOVALUES option can only be used in HSCAN")
        else:
            return SYNTAX_ERROR
        i += 2
    db = client.db
    next_cursor, found = scan_keys(db, cursor, count)
    if pattern is not None:
        match = compile_glob(pattern).match
        found = [key for key in found if match(key) is not None]
    if wanted_type is not None:
        # Redis 7.4 accepts an unknown type name and then matches nothing.
        known = wanted_type in TYPE_NAMES.values()
        kept = []
        for key in found:
            value = db.peek(key)
            if known and value is not None and type_name(value) == wanted_type:
                kept.append(key)
        found = kept
    else:
        found = [key for key in found if db.peek(key) is not None]
    return [str(next_cursor).encode(), found]
