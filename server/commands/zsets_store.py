"""Sorted-set algebra: ZUNION, ZINTER, ZDIFF, their STORE forms, and ZINTERCARD.

Inputs may be sorted sets or sets (each member scoring 1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.floats import parse_double
from protocol.numbers import parse_int
from protocol.reply import ErrorReply
from server.commands.zsets import (
    SYNTAX_ERROR,
    ZSet,
    new_zset,
    pairs_reply,
    shrink_to_listpack_if_fits,
    zcommand,
)
from server.keyspace import WRONGTYPE
from server.notify import NOTIFY_GENERIC, NOTIFY_ZSET, notify_keyspace_event
from sets import Set

if TYPE_CHECKING:
    from server.connection import Client

UNION, INTER, DIFF = 1, 2, 3
_STORE_EVENTS = {UNION: b"zunionstore", INTER: b"zinterstore", DIFF: b"zdiffstore"}
SUM, MIN, MAX = 1, 2, 3


class _Source:
    """One input: its member -> score mapping (a set's members score 1) and its weight."""

    __slots__ = ("scores", "weight", "value")

    def __init__(self, value: Any) -> None:
        self.value = value
        self.weight = 1.0
        if value is None:
            self.scores: dict[bytes, float] = {}
        elif type(value) is ZSet:
            self.scores = value.scores
        else:
            self.scores = dict.fromkeys(value.members(), 1.0)

    def items(self) -> Any:
        if type(self.value) is ZSet:
            # In score order, as Redis walks a sorted set (the order sums are made in).
            return ((member, score) for score, member in self.value)
        return self.scores.items()


def _aggregate(target: float, value: float, how: int) -> float:
    if how == SUM:
        total = target + value
        return 0.0 if total != total else total  # inf + -inf is 0 by Redis's convention
    if how == MIN:
        return value if value < target else target
    return value if value > target else target


def _numkeys_positions(argv: list[bytes], at: int) -> list[int]:
    try:
        n = parse_int(argv[at])
    except ErrorReply:
        return []
    if n < 1 or n > len(argv) - at - 1:
        return []
    return list(range(at + 1, at + 1 + n))


def _generic(client: Client, argv: list[bytes], dst: bytes | None, at: int, op: int,
             card_only: bool = False) -> Any:
    name = argv[0].decode("utf-8", "replace").lower()
    setnum = parse_int(argv[at])
    if setnum < 1:
        raise ErrorReply(f"ERR at least 1 input key is needed for '{name}' command")
    if setnum > len(argv) - (at + 1):
        raise SYNTAX_ERROR
    db = client.db
    sources: list[_Source] = []
    j = at + 1
    for _ in range(setnum):
        value = db.read(argv[j])
        if value is not None and type(value) is not ZSet and type(value) is not Set:
            raise WRONGTYPE
        sources.append(_Source(value))
        j += 1
    how = SUM
    withscores = False
    limit = 0
    n = len(argv)
    while j < n:
        remaining = n - j
        opt = argv[j].lower()
        if op != DIFF and not card_only and remaining >= setnum + 1 and opt == b"weights":
            j += 1
            for src in sources:
                src.weight = parse_double(argv[j], ErrorReply("ERR weight value is not a float"))
                j += 1
        elif op != DIFF and not card_only and remaining >= 2 and opt == b"aggregate":
            kind = argv[j + 1].lower()
            if kind == b"sum":
                how = SUM
            elif kind == b"min":
                how = MIN
            elif kind == b"max":
                how = MAX
            else:
                raise SYNTAX_ERROR
            j += 2
        elif remaining >= 1 and dst is None and not card_only and opt == b"withscores":
            withscores = True
            j += 1
        elif card_only and remaining >= 2 and opt == b"limit":
            limit_error = ErrorReply("ERR LIMIT can't be negative")
            limit = parse_int(argv[j + 1], limit_error)
            if limit < 0:
                raise limit_error
            j += 2
        else:
            raise SYNTAX_ERROR
    if op != DIFF:
        sources.sort(key=lambda s: len(s.scores))

    result: dict[bytes, float] = {}
    cardinality = 0
    if op == INTER:
        first = sources[0]
        if first.scores:
            rest = sources[1:]
            for member, base in first.items():
                score = first.weight * base
                if score != score:
                    score = 0.0
                for src in rest:
                    other = src.scores.get(member)
                    if other is None:
                        break
                    score = _aggregate(score, other * src.weight, how)
                else:
                    if card_only:
                        cardinality += 1
                        if limit and cardinality >= limit:
                            break
                    else:
                        result[member] = score
    elif op == UNION:
        for src in sources:
            weight = src.weight
            for member, base in src.items():
                score = weight * base
                if score != score:
                    score = 0.0
                current = result.get(member)
                result[member] = score if current is None else _aggregate(current, score, how)
    else:
        first = sources[0]
        rest = sources[1:]
        for member, score in first.items():
            if not any(member in src.scores for src in rest):
                result[member] = score

    if card_only:
        return cardinality
    if dst is not None:
        if result:
            zs = ZSet(False)
            for member, score in result.items():
                zs.insert(member, score)
            shrink_to_listpack_if_fits(client, zs)
            db.set(dst, zs)
            db.keyspace.signal_ready(db.index, dst)
            notify_keyspace_event(client, NOTIFY_ZSET, _STORE_EVENTS[op], dst, db.index)
            client.propagate(argv)
            return len(zs)
        if db.delete(dst):
            notify_keyspace_event(client, NOTIFY_GENERIC, b"del", dst, db.index)
            client.propagate(argv)
        return 0
    ordered = sorted((score, member) for member, score in result.items())
    return pairs_reply(client, ordered, withscores)


@zcommand("zunionstore", keys=(1, 1, 1), key_finder=lambda a: [1, *_numkeys_positions(a, 2)])
def zunionstore(client: Client, argv: list[bytes]) -> Any:
    return _generic(client, argv, argv[1], 2, UNION)


@zcommand("zinterstore", keys=(1, 1, 1), key_finder=lambda a: [1, *_numkeys_positions(a, 2)])
def zinterstore(client: Client, argv: list[bytes]) -> Any:
    return _generic(client, argv, argv[1], 2, INTER)


@zcommand("zdiffstore", keys=(1, 1, 1), key_finder=lambda a: [1, *_numkeys_positions(a, 2)])
def zdiffstore(client: Client, argv: list[bytes]) -> Any:
    return _generic(client, argv, argv[1], 2, DIFF)


@zcommand("zunion", keys=(0, 0, 0), key_finder=lambda a: _numkeys_positions(a, 1))
def zunion(client: Client, argv: list[bytes]) -> Any:
    return _generic(client, argv, None, 1, UNION)


@zcommand("zinter", keys=(0, 0, 0), key_finder=lambda a: _numkeys_positions(a, 1))
def zinter(client: Client, argv: list[bytes]) -> Any:
    return _generic(client, argv, None, 1, INTER)


@zcommand("zdiff", keys=(0, 0, 0), key_finder=lambda a: _numkeys_positions(a, 1))
def zdiff(client: Client, argv: list[bytes]) -> Any:
    return _generic(client, argv, None, 1, DIFF)


@zcommand("zintercard", keys=(0, 0, 0), key_finder=lambda a: _numkeys_positions(a, 1))
def zintercard(client: Client, argv: list[bytes]) -> Any:
    return _generic(client, argv, None, 1, INTER, card_only=True)


__all__ = ["new_zset"]
