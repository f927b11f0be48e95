"""Keyspace notifications: the `notify-keyspace-events` classes and the events commands publish.

A change to a key publishes, when its class is enabled, `<event>` on `__keyspace@<db>__:<key>`
(class K) and `<key>` on `__keyevent@<db>__:<event>` (class E), through the server's Pub/Sub
registry, at the moment the change is made, as Redis's notifyKeyspaceEvent.

The enabled classes are one int on the keyspace (`Keyspace.notify_flags`): with notifications
off, an emission point costs one attribute read and a bit test before anything else runs.
"""

from __future__ import annotations

from typing import Any, Final

from server.command_table import on_server_start

# The classes, with Redis's bit values (server.h NOTIFY_*).
NOTIFY_KEYSPACE: Final = 1 << 0  # K
NOTIFY_KEYEVENT: Final = 1 << 1  # E
NOTIFY_GENERIC: Final = 1 << 2  # g
NOTIFY_STRING: Final = 1 << 3  # $
NOTIFY_LIST: Final = 1 << 4  # l
NOTIFY_SET: Final = 1 << 5  # s
NOTIFY_HASH: Final = 1 << 6  # h
NOTIFY_ZSET: Final = 1 << 7  # z
NOTIFY_EXPIRED: Final = 1 << 8  # x
NOTIFY_EVICTED: Final = 1 << 9  # e
NOTIFY_STREAM: Final = 1 << 10  # t
NOTIFY_KEY_MISS: Final = 1 << 11  # m, left out of A on purpose, as in Redis
NOTIFY_LOADED: Final = 1 << 12  # modules only in Redis: no letter
NOTIFY_MODULE: Final = 1 << 13  # d
NOTIFY_NEW: Final = 1 << 14  # n, left out of A, as in Redis
NOTIFY_ALL: Final = (NOTIFY_GENERIC | NOTIFY_STRING | NOTIFY_LIST | NOTIFY_SET | NOTIFY_HASH
              | NOTIFY_ZSET | NOTIFY_EXPIRED | NOTIFY_EVICTED | NOTIFY_STREAM | NOTIFY_MODULE)

INVALID_CLASS: Final = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."

_LETTERS = {
    "A": NOTIFY_ALL, "g": NOTIFY_GENERIC, "$": NOTIFY_STRING, "l": NOTIFY_LIST,
    "s": NOTIFY_SET, "h": NOTIFY_HASH, "z": NOTIFY_ZSET, "x": NOTIFY_EXPIRED,
    "e": NOTIFY_EVICTED, "K": NOTIFY_KEYSPACE, "E": NOTIFY_KEYEVENT, "t": NOTIFY_STREAM,
    "m": NOTIFY_KEY_MISS, "d": NOTIFY_MODULE, "n": NOTIFY_NEW,
}

# The order keyspaceEventsFlagsToString writes the type classes in (when not all of A).
_TYPE_ORDER = (
    (NOTIFY_GENERIC, "g"), (NOTIFY_STRING, "$"), (NOTIFY_LIST, "l"), (NOTIFY_SET, "s"),
    (NOTIFY_HASH, "h"), (NOTIFY_ZSET, "z"), (NOTIFY_EXPIRED, "x"), (NOTIFY_EVICTED, "e"),
    (NOTIFY_STREAM, "t"), (NOTIFY_MODULE, "d"), (NOTIFY_NEW, "n"),
)


def string_to_flags(classes: str) -> int:
    """The classes a `notify-keyspace-events` value names, or -1 if it has a letter that names
    none (case matters: `e` is evicted, `E` keyevent)."""
    flags = 0
    for c in classes:
        bit = _LETTERS.get(c)
        if bit is None:
            return -1
        flags |= bit
    return flags


def flags_to_string(flags: int) -> str:
    """The canonical spelling of a set of classes, as CONFIG GET shows it: A when all of A is
    set, else the type classes one by one; then K, E and m."""
    out = []
    if flags & NOTIFY_ALL == NOTIFY_ALL:
        out.append("A")
    else:
        for bit, letter in _TYPE_ORDER:
            if flags & bit:
                out.append(letter)
    # n is outside A: with A it would be lost from the canonical string, as in Redis 7.4.
    if flags & NOTIFY_KEYSPACE:
        out.append("K")
    if flags & NOTIFY_KEYEVENT:
        out.append("E")
    if flags & NOTIFY_KEY_MISS:
        out.append("m")
    return "".join(out)


def notify(ks: Any, flag: int, event: bytes, key: bytes, dbid: int) -> None:
    """Publish one event if its class is enabled; `ks` is the Keyspace (typed loosely: the
    keyspace module imports this one)."""
    flags = ks.notify_flags
    if not flags & flag:
        return
    target = ks.notify_target
    if target is None:
        return
    pubsub = target.pubsub
    db = b"%d" % dbid
    if flags & NOTIFY_KEYSPACE:
        pubsub.publish(b"__keyspace@" + db + b"__:" + key, event)
    if flags & NOTIFY_KEYEVENT:
        pubsub.publish(b"__keyevent@" + db + b"__:" + event, key)


def notify_keyspace_event(client_or_server: Any, flag: int, event: str | bytes, key: bytes,
                          dbid: int) -> None:
    """Publish the event `event` of class `flag` about `key` in database `dbid` (Redis's
    notifyKeyspaceEvent). `client_or_server` is anything with the `keyspace` attribute."""
    ks = client_or_server.keyspace
    if ks.notify_flags & flag:
        notify(ks, flag, event.encode() if isinstance(event, str) else event, key, dbid)


def restored(client: Any, key: bytes) -> None:
    """RESTORE stored `key` in the client's database: `restore` (after the `new` of its
    creation). A REPLACE whose value it replaced is not announced as `del` unless the TTL given
    is already past, in which case nothing is stored and only that `del` is published
    (NOTIFY_GENERIC); MIGRATE without COPY announces each key it removes as `del`."""
    notify_keyspace_event(client, NOTIFY_GENERIC, b"restore", key, client.db.index)


@on_server_start
def _attach(server: Any) -> None:
    ks = server.keyspace
    # The server itself, not its registry: the Pub/Sub part may create the registry after
    # this hook runs, and a publish looks it up then.
    ks.notify_target = server

    def follow(flags: int) -> None:
        ks.notify_flags = flags

    follow(server.config["notify-keyspace-events"])
    server.config.on_change("notify-keyspace-events", follow)
