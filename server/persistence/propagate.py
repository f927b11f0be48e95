"""What a write command logs to the AOF, when that is not the command as the client sent it.

Commands whose effect depends on the clock or on floating point are logged as the state they
produced, so that replay is deterministic: relative expiries become PEXPIREAT, SET ... EX becomes
SET + PEXPIREAT, INCRBYFLOAT becomes SET of its result, and a key they deleted becomes DEL.
Stream commands log their exact effects themselves (client.propagate), e.g. XADD with the ID it
generated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from server.keyspace import Database

_STRING_STATE = frozenset({"set", "setex", "psetex", "getex", "getset", "incrbyfloat", "setrange",
                           "append"})
_EXPIRE_STATE = frozenset({"expire", "pexpire", "expireat", "pexpireat", "persist"})


def needs_state_propagation(name: str) -> bool:
    return name in _STRING_STATE or name in _EXPIRE_STATE


def state_commands(name: str, db: Database, key: bytes) -> list[list[bytes]]:
    """The commands that recreate key's current state after `name` ran on it."""
    value = db.data.get(key)
    if value is None:
        return [[b"DEL", key]]
    when = db.expires.get(key)
    out: list[list[bytes]] = []
    if name in _STRING_STATE and type(value) is bytes:
        out.append([b"SET", key, value])
        if when is not None:
            out.append([b"PEXPIREAT", key, b"%d" % when])
    elif when is not None:
        out.append([b"PEXPIREAT", key, b"%d" % when])
    else:
        out.append([b"PERSIST", key])
    return out
