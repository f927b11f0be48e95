"""The value types a key can hold, and what the type-independent code needs from each.

Commands that work on any key (TYPE, SCAN TYPE, COPY, OBJECT ENCODING, MEMORY USAGE) and the AOF
rewrite know no type: each type's command module registers a `ValueType` for the class of its
values, and they look the value's class up here. A type module registering itself is the whole
of adding a type: nothing outside it lists the types.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from server.keyspace import TYPE_NAMES

if TYPE_CHECKING:
    from server.config import Config

Command = list[bytes]


@dataclass(frozen=True)
class ValueType:
    """cls: the class of the values (exactly; subclasses are other types).
    name: what TYPE answers.
    rewrite: the commands that recreate a value under a key (the AOF rewrite, SAVE), each one
        Redis accepts, large values in batches.
    copy: an independent copy (COPY): later writes to either must not show in the other.
    encoding: Redis's name for the encoding Redis would give this value (OBJECT ENCODING),
        given the running configuration (the listpack limits).
    memory: an estimate of the bytes the value holds (MEMORY USAGE), `samples` as Redis's
        SAMPLES option (0: all elements).
    debug: optional, what DEBUG OBJECT adds after its common fields for this value, starting
        with a space (Redis's " ql_nodes:... ql_avg_node:..." for a quicklist); None: nothing.
    """

    cls: type
    name: bytes
    rewrite: Callable[[bytes, Any], Iterable[Command]]
    copy: Callable[[Any], Any]
    encoding: Callable[[Any, Config], bytes]
    memory: Callable[[Any, int], int]
    debug: Callable[[Any, Config], str] | None = None


TYPES: dict[type, ValueType] = {}


def register(value_type: ValueType) -> None:
    TYPES[value_type.cls] = value_type
    TYPE_NAMES[value_type.cls] = value_type.name


def of(value: Any) -> ValueType:
    """The registered type of a stored value (every stored value has one)."""
    vt = TYPES.get(type(value))
    if vt is None:
        raise TypeError(f"no value type registered for {type(value).__name__}")
    return vt


# --- strings: plain bytes ------------------------------------------------------------------------

_EMBSTR_MAX = 44  # OBJ_ENCODING_EMBSTR_SIZE_LIMIT


def _string_encoding(value: bytes, _config: Config) -> bytes:
    # Redis stores a value that reads as a 64-bit integer (canonical form, at most 20 chars) as
    # an int, a short one inline with its header (embstr), anything else as raw.
    if len(value) <= 20 and value:
        from protocol.numbers import string2ll

        if string2ll(value) is not None:
            return b"int"
    return b"embstr" if len(value) <= _EMBSTR_MAX else b"raw"


def _string_rewrite(key: bytes, value: bytes) -> Iterable[Command]:
    return ([b"SET", key, value],)


def _string_memory(value: bytes, _samples: int) -> int:
    return sys.getsizeof(value)


register(ValueType(bytes, b"string", _string_rewrite, lambda v: v, _string_encoding,
                   _string_memory))


# A string being edited in place (server/keyspace.py): the same string to every reader. Its
# encoding is raw, as Redis's string after SETBIT, SETRANGE or APPEND; its commands and copies
# take its bytes as they are now, not the buffer a later edit changes.
def _buffer_rewrite(key: bytes, value: bytearray) -> Iterable[Command]:
    return ([b"SET", key, bytes(value)],)


register(ValueType(bytearray, b"string", _buffer_rewrite, bytes, lambda _v, _c: b"raw",
                   _string_memory))
