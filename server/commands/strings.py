"""String commands: GET, SET and its variants, GETEX, GETDEL, MGET, MSET, the INCR family, APPEND,
STRLEN, GETRANGE, SETRANGE."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

from protocol.encoder import write_reply
from protocol.floats import format_long_double, parse_long_double, round_long_double
from protocol.numbers import parse_int
from protocol.reply import OK, ErrorReply
from server import popcounts
from server.command_table import command, key_spec, run_of
from server.commands.expire import LLONG_MAX, invalid_expire_time
from server.commands.runs import read_run_end
from server.keyspace import EXPIRY_DELETE, Database, now_ms
from server.notify import NOTIFY_GENERIC, NOTIFY_STRING, notify_keyspace_event

if TYPE_CHECKING:
    from server.connection import Client

SYNTAX_ERROR = ErrorReply("ERR syntax error")
_TOO_BIG = ErrorReply("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
LLONG_MIN = -(2**63)


def get_string(db: Database, key: bytes) -> bytes | None:
    return db.get_typed(key, bytes)


def read_string(db: Database, key: bytes) -> bytes | None:
    """A read command's lookup (Redis's lookupKeyRead): a miss publishes `keymiss`."""
    return db.read_typed(key, bytes)


def _propagate_state(client: Client, db: Database, key: bytes) -> None:
    """Log key as the command left it: SET of its value (and PEXPIREAT of its TTL), or DEL.

    For the commands whose result depends on the clock (relative expiries) or on arithmetic a
    replay must not redo (INCRBYFLOAT).
    """
    if not client.effects.active:
        return
    value = db.data.get(key)
    if value is None:
        client.propagate([b"DEL", key])
        return
    # A buffer's bytes as they are now: a later edit in place must not change a logged command.
    client.propagate([b"SET", key, bytes(value) if type(value) is bytearray else value])
    when = db.expires.get(key)
    if when is not None:
        client.propagate([b"PEXPIREAT", key, b"%d" % when])


def _check_length(client: Client, size: int, append: int) -> None:
    if size + append > client.server.config["proto-max-bulk-len"]:
        raise _TOO_BIG


# --- GET / SET ----------------------------------------------------------------------------------


@command("get", 2, "readonly fast", keys=(1, 1, 1),
         key_specs=key_spec(("RO", "ACCESS")), group="string", since="1.0.0",
         summary="Returns the string value of a key.")
def get(client: Client, argv: list[bytes]) -> Any:
    return read_string(client.db, argv[1])


@run_of("get")
def get_run(client: Client, commands: list[list[bytes]], start: int) -> int:
    """Consecutive `GET key` calls, whatever their keys, as a client pipelines reads: the
    dispatch checks made once for the run. Each call looks up (hit or miss, access data, lazy
    expiry, `keymiss`) and answers as it would alone; a key of another type ends the run
    before it (the single path answers WRONGTYPE)."""
    end = read_run_end(commands, start, 2)
    if end - start < 2:
        return 0
    db = client.db
    data = db.data
    out = client.out
    resp3 = client.resp3
    i = start
    while i < end:
        key = commands[i][1]
        found = data.get(key)
        if found is not None and type(found) is not bytes:
            break
        write_reply(out, db.read(key), resp3)
        i += 1
    return i - start


class _Options:
    """Parsed SET/GETEX options. `expire` is the raw time argument, `unit` its option name."""

    __slots__ = ("nx", "xx", "get", "keepttl", "persist", "unit", "expire")

    def __init__(self) -> None:
        self.nx = self.xx = self.get = self.keepttl = self.persist = False
        self.unit: bytes | None = None  # b"ex", b"px", b"exat" or b"pxat"
        self.expire: bytes | None = None


def _parse_options(argv: list[bytes], start: int, is_set: bool) -> _Options:
    """Redis's rules exactly: an option may repeat, but conflicting ones are a syntax error, and
    a time option repeated (EX 1 EX 2) keeps the last time."""
    opts = _Options()
    i = start
    n = len(argv)
    while i < n:
        option = argv[i].lower()
        has_next = i + 1 < n
        unit = opts.unit
        if option == b"nx" and is_set and not opts.xx:
            opts.nx = True
        elif option == b"xx" and is_set and not opts.nx:
            opts.xx = True
        elif option == b"get" and is_set:
            opts.get = True
        elif option == b"keepttl" and is_set and unit is None and not opts.persist:
            opts.keepttl = True
        elif option == b"persist" and not is_set and unit is None and not opts.keepttl:
            opts.persist = True
        elif (option in (b"ex", b"px", b"exat", b"pxat") and has_next and not opts.keepttl
              and not opts.persist and unit in (None, option)):
            opts.unit = option
            opts.expire = argv[i + 1]
            i += 1
        else:
            raise SYNTAX_ERROR
        i += 1
    return opts


def expire_ms(arg: bytes, unit: bytes, name: str, now: int) -> int:
    """The absolute expiry time in ms that an EX/PX/EXAT/PXAT argument names."""
    value = parse_int(arg)
    seconds = unit in (b"ex", b"exat")
    if value <= 0 or (seconds and value > LLONG_MAX // 1000):
        raise invalid_expire_time(name)
    if seconds:
        value *= 1000
    if unit in (b"ex", b"px"):
        value += now
        if value > LLONG_MAX:  # Redis detects the signed overflow
            raise invalid_expire_time(name)
    return value


def _set_generic(client: Client, key: bytes, value: bytes, opts: _Options, name: str,
                 ok_reply: Any = OK, abort_reply: Any = None,
                 as_sent: list[bytes] | None = None) -> Any:
    """SET and its variants; a write is logged as the state it made, or as_sent when given."""
    db = client.db
    when = None
    if opts.expire is not None:
        assert opts.unit is not None
        when = expire_ms(opts.expire, opts.unit, name, now_ms())
    reply = ok_reply
    if opts.get:
        reply = read_string(db, key)
    found = db.get(key) is not None
    if (opts.nx and found) or (opts.xx and not found):
        return reply if opts.get else abort_reply
    db.set(key, value, keep_ttl=opts.keepttl)
    notify_keyspace_event(client, NOTIFY_STRING, b"set", key, db.index)
    if when is not None:
        # A time already past is stored anyway: the key is then gone at the next access, as in Redis.
        db.set_expire(key, when)
        notify_keyspace_event(client, NOTIFY_GENERIC, b"expire", key, db.index)
    if as_sent is not None:
        client.propagate(as_sent)
    else:
        _propagate_state(client, db, key)
    return reply


@command("set", -3, "write denyoom", keys=(1, 1, 1),
         key_specs=key_spec(("RW", "ACCESS", "UPDATE", "VARIABLE_FLAGS")), group="string", since="1.0.0",
         summary="Sets the string value of a key, ignoring its type. The key is created if it "
         "doesn't exist.")
def set_(client: Client, argv: list[bytes]) -> Any:
    opts = _parse_options(argv, 3, is_set=True)
    return _set_generic(client, argv[1], argv[2], opts, "set")


@command("setnx", 3, "write denyoom fast", keys=(1, 1, 1),
         key_specs=key_spec(("OW", "INSERT")), group="string", since="1.0.0",
         summary="Set the string value of a key only when the key doesn't exist.")
def setnx(client: Client, argv: list[bytes]) -> Any:
    opts = _Options()
    opts.nx = True
    return _set_generic(client, argv[1], argv[2], opts, "setnx", ok_reply=1, abort_reply=0,
                        as_sent=argv)


def _set_with_expire(client: Client, argv: list[bytes], unit: bytes, name: str) -> Any:
    opts = _Options()
    opts.unit, opts.expire = unit, argv[2]
    return _set_generic(client, argv[1], argv[3], opts, name)


@command("setex", 4, "write denyoom", keys=(1, 1, 1),
         key_specs=key_spec(("OW", "UPDATE")), group="string", since="2.0.0",
         summary="Sets the string value and expiration time of a key. Creates the key if it "
         "doesn't exist.")
def setex(client: Client, argv: list[bytes]) -> Any:
    return _set_with_expire(client, argv, b"ex", "setex")


@command("psetex", 4, "write denyoom", keys=(1, 1, 1),
         key_specs=key_spec(("OW", "UPDATE")), group="string", since="2.6.0",
         summary="Sets both string value and expiration time in milliseconds of a key. The key is "
         "created if it doesn't exist.")
def psetex(client: Client, argv: list[bytes]) -> Any:
    return _set_with_expire(client, argv, b"px", "psetex")


@command("getset", 3, "write denyoom fast", keys=(1, 1, 1),
         key_specs=key_spec(("RW", "ACCESS", "UPDATE")), group="string", since="1.0.0",
         summary="Returns the previous string value of a key after setting it to a new value.")
def getset(client: Client, argv: list[bytes]) -> Any:
    db = client.db
    old = read_string(db, argv[1])
    db.set(argv[1], argv[2])
    notify_keyspace_event(client, NOTIFY_STRING, b"set", argv[1], db.index)
    _propagate_state(client, db, argv[1])
    return old


@command("getdel", 2, "write fast", keys=(1, 1, 1),
         key_specs=key_spec(("RW", "ACCESS", "DELETE")), group="string", since="6.2.0",
         summary="Returns the string value of a key after deleting the key.")
def getdel(client: Client, argv: list[bytes]) -> Any:
    db = client.db
    value = read_string(db, argv[1])
    if value is not None:
        db.delete(argv[1])
        notify_keyspace_event(client, NOTIFY_GENERIC, b"del", argv[1], db.index)
        client.propagate(argv)
    return value


@command("getex", -2, "write fast", keys=(1, 1, 1),
         key_specs=key_spec(("RW", "ACCESS", "UPDATE")), group="string", since="6.2.0",
         summary="Returns the string value of a key after setting its expiration time.")
def getex(client: Client, argv: list[bytes]) -> Any:
    opts = _parse_options(argv, 2, is_set=False)
    db = client.db
    key = argv[1]
    value = read_string(db, key)
    if value is None:
        return None
    now = now_ms()
    if opts.expire is not None:
        assert opts.unit is not None
        when = expire_ms(opts.expire, opts.unit, "getex", now)
        if opts.unit in (b"exat", b"pxat") and when <= now and db.keyspace.expiry == EXPIRY_DELETE:
            db.delete(key)
            notify_keyspace_event(client, NOTIFY_GENERIC, b"del", key, db.index)
        else:
            db.set_expire(key, when)
            notify_keyspace_event(client, NOTIFY_GENERIC, b"expire", key, db.index)
        _propagate_state(client, db, key)
    elif opts.persist and db.persist(key):
        notify_keyspace_event(client, NOTIFY_GENERIC, b"persist", key, db.index)
        _propagate_state(client, db, key)
    return value


@command("mget", -2, "readonly fast", keys=(1, -1, 1),
         key_specs=key_spec(("RO", "ACCESS"), last=-1), group="string", since="1.0.0",
         summary="Atomically returns the string values of one or more keys.",
         complexity="O(N) where N is the number of keys to retrieve.")
def mget(client: Client, argv: list[bytes]) -> Any:
    db = client.db
    out: list[bytes | None] = []
    for key in argv[1:]:
        value = db.read(key)
        out.append(value if type(value) is bytes else None)
    return out


@command("mset", -3, "write denyoom", keys=(1, -1, 2),
         key_specs=key_spec(("OW", "UPDATE"), last=-1, step=2), group="string", since="1.0.1",
         summary="Atomically creates or modifies the string values of one or more keys.",
         complexity="O(N) where N is the number of keys to set.")
def mset(client: Client, argv: list[bytes]) -> Any:
    if len(argv) % 2 == 0:
        raise ErrorReply("ERR wrong number of arguments for 'mset' command")
    db = client.db
    for i in range(1, len(argv), 2):
        db.set(argv[i], argv[i + 1])
        notify_keyspace_event(client, NOTIFY_STRING, b"set", argv[i], db.index)
    client.propagate(argv)
    return OK


@command("msetnx", -3, "write denyoom", keys=(1, -1, 2),
         key_specs=key_spec(("OW", "INSERT"), last=-1, step=2), group="string", since="1.0.1",
         summary="Atomically modifies the string values of one or more keys only when all keys "
         "don't exist.",
         complexity="O(N) where N is the number of keys to set.")
def msetnx(client: Client, argv: list[bytes]) -> Any:
    if len(argv) % 2 == 0:
        raise ErrorReply("ERR wrong number of arguments for 'msetnx' command")
    db = client.db
    if any(db.get(argv[i]) is not None for i in range(1, len(argv), 2)):
        return 0
    for i in range(1, len(argv), 2):
        db.set(argv[i], argv[i + 1])
        notify_keyspace_event(client, NOTIFY_STRING, b"set", argv[i], db.index)
    client.propagate(argv)
    return 1


# --- INCR family ----------------------------------------------------------------------------------


def _store_number(db: Database, key: bytes, existed: bool, text: bytes) -> None:
    if existed:
        db.set(key, text, keep_ttl=True)
    else:
        db.add(key, text)


def _incr_by(client: Client, argv: list[bytes], increment: int) -> int:
    """INCR and friends: an integer result is the same on replay, so the command is logged as sent."""
    db = client.db
    key = argv[1]
    current = get_string(db, key)
    value = 0 if current is None else parse_int(current)
    result = value + increment
    if not LLONG_MIN <= result <= LLONG_MAX:
        raise ErrorReply("ERR increment or decrement would overflow")
    _store_number(db, key, current is not None, str(result).encode())
    notify_keyspace_event(client, NOTIFY_STRING, b"incrby", key, db.index)
    client.propagate(argv)
    return result


@command("incr", 2, "write denyoom fast", keys=(1, 1, 1),
         key_specs=key_spec(("RW", "ACCESS", "UPDATE")), group="string", since="1.0.0",
         summary="Increments the integer value of a key by one. Uses 0 as initial value if the key "
         "doesn't exist.")
def incr(client: Client, argv: list[bytes]) -> Any:
    return _incr_by(client, argv, 1)


@command("decr", 2, "write denyoom fast", keys=(1, 1, 1),
         key_specs=key_spec(("RW", "ACCESS", "UPDATE")), group="string", since="1.0.0",
         summary="Decrements the integer value of a key by one. Uses 0 as initial value if the key "
         "doesn't exist.")
def decr(client: Client, argv: list[bytes]) -> Any:
    return _incr_by(client, argv, -1)


@command("incrby", 3, "write denyoom fast", keys=(1, 1, 1),
         key_specs=key_spec(("RW", "ACCESS", "UPDATE")), group="string", since="1.0.0",
         summary="Increments the integer value of a key by a number. Uses 0 as initial value if the "
         "key doesn't exist.")
def incrby(client: Client, argv: list[bytes]) -> Any:
    return _incr_by(client, argv, parse_int(argv[2]))


@command("decrby", 3, "write denyoom fast", keys=(1, 1, 1),
         key_specs=key_spec(("RW", "ACCESS", "UPDATE")), group="string", since="1.0.0",
         summary="Decrements a number from the integer value of a key. Uses 0 as initial value if "
         "the key doesn't exist.")
def decrby(client: Client, argv: list[bytes]) -> Any:
    decrement = parse_int(argv[2])
    if decrement == LLONG_MIN:
        raise ErrorReply("ERR decrement would overflow")
    return _incr_by(client, argv, -decrement)


@command("incrbyfloat", 3, "write denyoom fast", keys=(1, 1, 1),
         key_specs=key_spec(("RW", "ACCESS", "UPDATE")), group="string", since="2.6.0",
         summary="Increment the floating point value of a key by a number. Uses 0 as initial value "
         "if the key doesn't exist.")
def incrbyfloat(client: Client, argv: list[bytes]) -> Any:
    db = client.db
    key = argv[1]
    current = get_string(db, key)
    value = Fraction(0) if current is None else parse_long_double(current)
    increment = parse_long_double(argv[2])
    if isinstance(value, float) or isinstance(increment, float):
        raise ErrorReply("ERR increment would produce NaN or Infinity")  # an infinite operand
    result = round_long_double(value + increment)
    if isinstance(result, float):
        raise ErrorReply("ERR increment would produce NaN or Infinity")
    text = format_long_double(result)
    _store_number(db, key, current is not None, text)
    # Redis stores the result as a string, never as an integer, even when it reads as one.
    db.encodings[key] = b"embstr" if len(text) <= 44 else b"raw"
    notify_keyspace_event(client, NOTIFY_STRING, b"incrbyfloat", key, db.index)
    _propagate_state(client, db, key)
    return text


# --- APPEND / STRLEN / ranges ------------------------------------------------------------------


@command("append", 3, "write denyoom fast", keys=(1, 1, 1),
         key_specs=key_spec(("RW", "INSERT")), group="string", since="2.0.0",
         summary="Appends a string to the value of a key. Creates the key if it doesn't exist.",
         complexity="O(1). The amortized time complexity is O(1) assuming the appended value is "
         "small and the already present value is of any size, since the dynamic string library "
         "used by Redis will double the free space available on every reallocation.")
def append(client: Client, argv: list[bytes]) -> Any:
    db = client.db
    key, suffix = argv[1], argv[2]
    current = db.get_str(key)
    if current is None:
        db.add(key, suffix)
    else:
        _check_length(client, len(current), len(suffix))
        # Appended in place, Redis's own (unshared, raw) copy: repeated APPENDs cost what they
        # add, not a copy of the value each.
        buffer = db.string_buffer(key, current)
        popcounts.forget(buffer)
        buffer += suffix
        db.string_edited(key, len(suffix))
    notify_keyspace_event(client, NOTIFY_STRING, b"append", key, db.index)
    # Logged as sent, as Redis does: a replay appends the same bytes, and the AOF and the
    # replicas get what was added, not the whole value again.
    client.propagate(argv)
    return len(db.data[key])


@command("strlen", 2, "readonly fast", keys=(1, 1, 1),
         key_specs=key_spec(("RO",)), group="string", since="2.2.0",
         summary="Returns the length of a string value.")
def strlen(client: Client, argv: list[bytes]) -> Any:
    value = client.db.read_str(argv[1])
    return 0 if value is None else len(value)


@command("getrange", 4, "readonly", keys=(1, 1, 1),
         key_specs=key_spec(("RO", "ACCESS")), group="string", since="2.4.0",
         summary="Returns a substring of the string stored at a key.",
         complexity="O(N) where N is the length of the returned string. The complexity is "
         "ultimately determined by the returned length, but because creating a substring from an "
         "existing string is very cheap, it can be considered O(1) for small strings.")
def getrange(client: Client, argv: list[bytes]) -> Any:
    start = parse_int(argv[2])
    end = parse_int(argv[3])
    value = client.db.read_str(argv[1])
    if value is None:
        return b""
    size = len(value)
    if start < 0 and end < 0 and start > end:
        return b""
    if start < 0:
        start = max(size + start, 0)
    if end < 0:
        end = max(size + end, 0)
    end = min(end, size - 1)
    if start > end or size == 0:
        return b""
    return bytes(value[start : end + 1])


@command("setrange", 4, "write denyoom", keys=(1, 1, 1),
         key_specs=key_spec(("RW", "UPDATE")), group="string", since="2.2.0",
         summary="Overwrites a part of a string value with another by an offset. Creates the key if "
         "it doesn't exist.",
         complexity="O(1), not counting the time taken to copy the new string in place. Usually, "
         "this string is very small so the amortized complexity is O(1). Otherwise, complexity is "
         "O(M) with M being the length of the value argument.")
def setrange(client: Client, argv: list[bytes]) -> Any:
    offset = parse_int(argv[2])
    if offset < 0:
        return ErrorReply("ERR offset is out of range")
    db = client.db
    key, patch = argv[1], argv[3]
    current = db.get_str(key)
    if not patch:
        # Writing nothing creates nothing and reports the current length.
        return 0 if current is None else len(current)
    _check_length(client, offset, len(patch))
    if current is None:
        db.add(key, bytes(offset) + patch)
        db.encodings[key] = b"raw"  # written in place into a raw string, as in Redis
    else:
        buffer = db.string_buffer(key, current)
        popcounts.forget(buffer)
        end = offset + len(patch)
        grown = max(end - len(buffer), 0)
        if grown:
            buffer += bytes(grown)
        buffer[offset:end] = patch
        db.string_edited(key, grown)
    notify_keyspace_event(client, NOTIFY_STRING, b"setrange", key, db.index)
    client.propagate(argv)
    return len(db.data[key])


# SUBSTR is GETRANGE under its pre-2.0 name: the same handler, its own command-table entry.
command("substr", 4, "readonly", keys=(1, 1, 1), group="string", since="1.0.0",
        summary="Returns a substring from a string value.",
        complexity="O(N) where N is the length of the returned string. The complexity is "
        "ultimately determined by the returned length, but because creating a substring from an "
        "existing string is very cheap, it can be considered O(1) for small strings.",
        key_specs=({"flags": ("RO", "ACCESS"), "begin_search": {"index": {"pos": 1}},
                    "find_keys": {"range": {"lastkey": 0, "step": 1, "limit": 0}}},),
        doc_flags=("deprecated",),
        arguments=({"name": "key", "type": "key", "key_spec_index": 0},
                   {"name": "start", "type": "integer"}, {"name": "end", "type": "integer"}),
        )(getrange)
