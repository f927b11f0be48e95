"""Key expiry commands: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT, TTL, PTTL, EXPIRETIME, PEXPIRETIME,
PERSIST. Times are absolute unix milliseconds in `Database.expires`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.numbers import parse_int
from protocol.reply import ErrorReply
from server.command_table import command, key_spec
from server.keyspace import EXPIRY_DELETE, now_ms
from server.notify import NOTIFY_GENERIC, notify_keyspace_event

if TYPE_CHECKING:
    from server.connection import Client

LLONG_MAX = 2**63 - 1
# C's LLONG_MIN / 1000 truncates towards zero.
_SECONDS_MIN = -(2**63 // 1000)
_SECONDS_MAX = LLONG_MAX // 1000


def invalid_expire_time(name: str) -> ErrorReply:
    return ErrorReply(f"ERR invalid expire time in '{name}' command")


def _parse_conditions(argv: list[bytes]) -> str:
    """The NX/XX/GT/LT options after the time, as a string of the lower-cased letters given."""
    nx = xx = gt = lt = False
    for arg in argv[3:]:
        option = arg.lower()
        if option == b"nx":
            nx = True
        elif option == b"xx":
            xx = True
        elif option == b"gt":
            gt = True
        elif option == b"lt":
            lt = True
        else:
            raise ErrorReply(f"ERR Unsupported option {arg.decode('utf-8', 'replace')}")
    if nx and (xx or gt or lt):
        raise ErrorReply("ERR NX and XX, GT or LT options at the same time are not compatible")
    if gt and lt:
        raise ErrorReply("ERR GT and LT options at the same time are not compatible")
    return "".join(flag for flag, on in (("nx", nx), ("xx", xx), ("gt", gt), ("lt", lt)) if on)


def _expire_generic(client: Client, argv: list[bytes], name: str, *, relative: bool,
                    seconds: bool) -> int:
    conditions = _parse_conditions(argv)
    when = parse_int(argv[2])
    if seconds:
        if not _SECONDS_MIN <= when <= _SECONDS_MAX:
            raise invalid_expire_time(name)
        when *= 1000
    now = now_ms()
    basetime = now if relative else 0
    # Only overflow is an error: a time in the past is valid and deletes the key.
    if when > LLONG_MAX - basetime:
        raise invalid_expire_time(name)
    when += basetime
    db = client.db
    key = argv[1]
    if db.get(key) is None:
        return 0
    if conditions:
        current = db.expires.get(key)
        if "nx" in conditions and current is not None:
            return 0
        if "xx" in conditions and current is None:
            return 0
        # No TTL counts as an infinite one: GT never beats it, LT always does.
        if "gt" in conditions and (current is None or when <= current):
            return 0
        if "lt" in conditions and current is not None and when >= current:
            return 0
    # Logged as the absolute time (or the deletion) it came to: a replay must not read the clock.
    # Redis's checkAlreadyExpired: a replica keeps the key until its master's DEL.
    if when <= now and db.keyspace.expiry == EXPIRY_DELETE:
        db.delete(key)
        client.propagate([b"DEL", key])
        notify_keyspace_event(client, NOTIFY_GENERIC, b"del", key, db.index)
    else:
        db.set_expire(key, when)
        client.propagate([b"PEXPIREAT", key, b"%d" % when])
        notify_keyspace_event(client, NOTIFY_GENERIC, b"expire", key, db.index)
    return 1


@command("expire", -3, "write fast", keys=(1, 1, 1),
         key_specs=key_spec(("RW", "UPDATE")), group="generic", since="1.0.0",
         summary="Sets the expiration time of a key in seconds.")
def expire(client: Client, argv: list[bytes]) -> Any:
    return _expire_generic(client, argv, "expire", relative=True, seconds=True)


@command("pexpire", -3, "write fast", keys=(1, 1, 1),
         key_specs=key_spec(("RW", "UPDATE")), group="generic", since="2.6.0",
         summary="Sets the expiration time of a key in milliseconds.")
def pexpire(client: Client, argv: list[bytes]) -> Any:
    return _expire_generic(client, argv, "pexpire", relative=True, seconds=False)


@command("expireat", -3, "write fast", keys=(1, 1, 1),
         key_specs=key_spec(("RW", "UPDATE")), group="generic", since="1.2.0",
         summary="Sets the expiration time of a key to a Unix timestamp.")
def expireat(client: Client, argv: list[bytes]) -> Any:
    return _expire_generic(client, argv, "expireat", relative=False, seconds=True)


@command("pexpireat", -3, "write fast", keys=(1, 1, 1),
         key_specs=key_spec(("RW", "UPDATE")), group="generic", since="2.6.0",
         summary="Sets the expiration time of a key to a Unix milliseconds timestamp.")
def pexpireat(client: Client, argv: list[bytes]) -> Any:
    return _expire_generic(client, argv, "pexpireat", relative=False, seconds=False)


def _ttl_generic(client: Client, key: bytes, *, ms: bool, absolute: bool) -> int:
    db = client.db
    if db.read_peek(key) is None:
        return -2
    when = db.expires.get(key)
    if when is None:
        return -1
    ttl = max(when if absolute else when - now_ms(), 0)
    return ttl if ms else (ttl + 500) // 1000


@command("ttl", 2, "readonly fast", keys=(1, 1, 1),
         key_specs=key_spec(("RO", "ACCESS")), group="generic", since="1.0.0",
         summary="Returns the expiration time in seconds of a key.")
def ttl(client: Client, argv: list[bytes]) -> Any:
    return _ttl_generic(client, argv[1], ms=False, absolute=False)


@command("pttl", 2, "readonly fast", keys=(1, 1, 1),
         key_specs=key_spec(("RO", "ACCESS")), group="generic", since="2.6.0",
         summary="Returns the expiration time in milliseconds of a key.")
def pttl(client: Client, argv: list[bytes]) -> Any:
    return _ttl_generic(client, argv[1], ms=True, absolute=False)


@command("expiretime", 2, "readonly fast", keys=(1, 1, 1),
         key_specs=key_spec(("RO", "ACCESS")), group="generic", since="7.0.0",
         summary="Returns the expiration time of a key as a Unix timestamp.")
def expiretime(client: Client, argv: list[bytes]) -> Any:
    return _ttl_generic(client, argv[1], ms=False, absolute=True)


@command("pexpiretime", 2, "readonly fast", keys=(1, 1, 1),
         key_specs=key_spec(("RO", "ACCESS")), group="generic", since="7.0.0",
         summary="Returns the expiration time of a key as a Unix milliseconds timestamp.")
def pexpiretime(client: Client, argv: list[bytes]) -> Any:
    return _ttl_generic(client, argv[1], ms=True, absolute=True)


@command("persist", 2, "write fast", keys=(1, 1, 1),
         key_specs=key_spec(("RW", "UPDATE")), group="generic", since="2.2.0",
         summary="Removes the expiration time of a key.")
def persist(client: Client, argv: list[bytes]) -> Any:
    db = client.db
    if db.get(argv[1]) is None or not db.persist(argv[1]):
        return 0
    client.propagate(argv)
    notify_keyspace_event(client, NOTIFY_GENERIC, b"persist", argv[1], db.index)
    return 1
