"""OBJECT ENCODING / IDLETIME / FREQ / REFCOUNT / HELP, for a key of any registered type.

The access data IDLETIME and FREQ read is kept by the keyspace (server/keyspace.py,
`Database.access`); this module follows the eviction-policy settings that decide which of the
two it holds, as Redis's robj.lru does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.numbers import string2ll
from protocol.reply import ErrorReply, SimpleString
from server import value_types
from server.command_table import command, container, key_spec, on_server_start
from server.subcommands import help_reply

if TYPE_CHECKING:
    from server.connection import Client
    from server.server import Server

# Redis's OBJ_SHARED_REFCOUNT: the refcount shown for a shared object (small integers).
SHARED_REFCOUNT = 2**31 - 1
OBJ_SHARED_INTEGERS = 10000

container("object", group="generic", since="2.2.3",
          summary="A container for object introspection commands.")

_KEY_ARG = ({"name": "key", "type": "key", "key_spec_index": 0},)
_KEY_SPEC = key_spec(("RO",), 2)
_TIPS = ("nondeterministic_output",)


@on_server_start
def _follow_policy(server: Server) -> None:
    config, keyspace = server.config, server.keyspace
    keyspace.set_policy(config["maxmemory-policy"])
    config.on_change("maxmemory-policy", keyspace.set_policy)
    keyspace.lfu_log_factor = config["lfu-log-factor"]
    keyspace.lfu_decay_time = config["lfu-decay-time"]

    def log_factor(value: int) -> None:
        keyspace.lfu_log_factor = value

    def decay_time(value: int) -> None:
        keyspace.lfu_decay_time = value

    config.on_change("lfu-log-factor", log_factor)
    config.on_change("lfu-decay-time", decay_time)


def _lookup(client: Client, key: bytes) -> Any:
    # Looking at a key is not an access to it (Redis's LOOKUP_NOTOUCH for OBJECT).
    return client.db.peek(key)


def shares_integer(client: Client, key: bytes, value: Any) -> bool:
    """Whether Redis would hold this value as one of its shared integer objects: a string
    0..9999 in canonical form, stored as an integer, when no LRU/LFU policy needs each key's own
    object."""
    if type(value) is not bytes or not value or len(value) > 4 or key in client.db.encodings:
        return False
    number = string2ll(value)
    if number is None or not 0 <= number < OBJ_SHARED_INTEGERS:
        return False
    config = client.server.config
    return config["maxmemory"] == 0 or not config["maxmemory-policy"].endswith(("-lru", "-lfu"))


@command("object|encoding", 3, "readonly", keys=(2, 2, 1), group="generic", since="2.2.3",
         summary="Returns the internal encoding of a Redis object.", acl=("@keyspace",),
         tips=_TIPS, key_specs=_KEY_SPEC, arguments=_KEY_ARG)
def object_encoding(client: Client, argv: list[bytes]) -> Any:
    value = _lookup(client, argv[2])
    if value is None:
        return None
    return encoding_of(client, argv[2], value)


def encoding_of(client: Client, key: bytes, value: Any) -> bytes:
    """Redis's encoding name: what the writing command recorded, else what the value's type
    says for its content under the running configuration."""
    recorded = client.db.encodings.get(key)
    if recorded is not None:
        return recorded
    return value_types.of(value).encoding(value, client.server.config)


@command("object|refcount", 3, "readonly", keys=(2, 2, 1), group="generic", since="2.2.3",
         summary="Returns the reference count of a value of a key.", acl=("@keyspace",),
         tips=_TIPS, key_specs=_KEY_SPEC, arguments=_KEY_ARG)
def object_refcount(client: Client, argv: list[bytes]) -> Any:
    value = _lookup(client, argv[2])
    if value is None:
        return None
    return SHARED_REFCOUNT if shares_integer(client, argv[2], value) else 1


@command("object|idletime", 3, "readonly", keys=(2, 2, 1), group="generic", since="2.2.3",
         summary="Returns the time since the last access to a Redis object.", acl=("@keyspace",),
         tips=_TIPS, key_specs=_KEY_SPEC, arguments=_KEY_ARG)
def object_idletime(client: Client, argv: list[bytes]) -> Any:
    value = _lookup(client, argv[2])
    if value is None:
        return None
    keyspace = client.keyspace
    if keyspace.lfu:
        return ErrorReply(
            "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
            "switching between policies at runtime LRU and LFU data will take some time to adjust.")
    return idle_seconds(client, argv[2])


def idle_seconds(client: Client, key: bytes) -> int:
    """Seconds since the key's last access (its access data read as an LRU clock)."""
    db = client.db
    access = db.access.get(key)
    if access is None:
        return 0
    # Against the same cron-refreshed clock the accesses read (Redis's LRU_CLOCK()), so that a
    # key just written reads 0 whatever the clock's lag. After a switch from LFU the data is
    # (minutes << 8) | counter, read as seconds as Redis does until the key is accessed again;
    # never negative.
    return max(client.keyspace.lru_clock - access, 0)


@command("object|freq", 3, "readonly", keys=(2, 2, 1), group="generic", since="4.0.0",
         summary="Returns the logarithmic access frequency counter of a Redis object.",
         acl=("@keyspace",), tips=_TIPS, key_specs=_KEY_SPEC, arguments=_KEY_ARG)
def object_freq(client: Client, argv: list[bytes]) -> Any:
    value = _lookup(client, argv[2])
    if value is None:
        return None
    keyspace = client.keyspace
    if not keyspace.lfu:
        return ErrorReply(
            "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please "
            "note that when switching between policies at runtime LRU and LFU data will take some "
            "time to adjust.")
    access = client.db.access.get(argv[2])
    return keyspace.lfu_counter(access) if access is not None else 0


_HELP = [
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
]


@command("object|help", 2, "loading stale", group="generic", since="6.2.0",
         summary="Returns helpful text about the different subcommands.", acl=("@keyspace",))
def object_help(client: Client, argv: list[bytes]) -> Any:
    return help_reply("OBJECT", _HELP)


# --- DEBUG OBJECT ----------------------------------------------------------------------------------


def _length_prefix(n: int) -> int:
    # RDB's length encoding: 6, 14, 32 or 64 bits.
    return 1 if n < 1 << 6 else 2 if n < 1 << 14 else 5 if n < 1 << 32 else 9


def serialized_length(key: bytes, value: Any) -> int:
    """The size of the value in a snapshot, as DEBUG OBJECT's serializedlength. Exact for a
    string Redis stores as an integer or in full; Redis would LZF-compress a longer string
    where that pays, which this does not model. Other types: the bytes of the commands that
    recreate the value (what Rivulet's snapshot holds)."""
    if type(value) is bytes:
        if len(value) <= 11:
            number = string2ll(value) if value else None
            if number is not None:
                if -(1 << 7) <= number < 1 << 7:
                    return 2
                if -(1 << 15) <= number < 1 << 15:
                    return 3
                if -(1 << 31) <= number < 1 << 31:
                    return 5
        return _length_prefix(len(value)) + len(value)
    total = 0
    for argv in value_types.of(value).rewrite(key, value):
        total += sum(_length_prefix(len(arg)) + len(arg) for arg in argv[2:])
    return total


def debug_object(client: Client, key: bytes) -> Any:
    """DEBUG OBJECT's status line, with Redis's fields (the address is the object's id)."""
    db = client.db
    value = db.data.get(key)  # as Redis (dbFind): no expiry check, not an access
    if value is None:
        return ErrorReply("ERR no such key")
    encoding = encoding_of(client, key, value).decode()
    refcount = SHARED_REFCOUNT if shares_integer(client, key, value) else 1
    access = db.access.get(key, 0)
    idle = 0 if client.keyspace.lfu else idle_seconds(client, key)
    debug = value_types.of(value).debug
    extra = debug(value, client.server.config) if debug is not None else ""
    return SimpleString(
        f"Value at:{id(value):#x} refcount:{refcount} encoding:{encoding} "
        f"serializedlength:{serialized_length(key, value)} lru:{access & 0xFFFFFF} "
        f"lru_seconds_idle:{idle}{extra}".encode())
