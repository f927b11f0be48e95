"""The blocking pops: BZPOPMIN, BZPOPMAX and BZMPOP.

With something to pop they answer as ZPOPMIN/ZPOPMAX/ZMPOP would and are logged as the ZPOPMIN
or ZPOPMAX that made the change; otherwise they park the client through server/blocking.py,
which re-runs them, first waiter first, when one of their keys is written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.reply import NULL_ARRAY
from server.blocking import Block
from server.commands.block_timeout import parse_timeout_seconds
from server.commands.zsets import (
    ZSet,
    get_zset,
    mpop_from,
    mpop_keys,
    parse_mpop,
    pop_reply,
    zcommand,
)

if TYPE_CHECKING:
    from server.connection import Client


def _bzpop(client: Client, argv: list[bytes], from_max: bool) -> Any:
    timeout = parse_timeout_seconds(argv[-1])
    keys = argv[1:-1]
    db = client.db
    for key in keys:
        zs = get_zset(db, key)
        if zs is None:
            continue
        out = pop_reply(client, db, key, zs, from_max, 1, False)
        client.propagate([b"ZPOPMAX" if from_max else b"ZPOPMIN", key])
        return [key, *out]
    return Block(list(keys), timeout, NULL_ARRAY, None, ZSet)


@zcommand("bzpopmin", keys=(1, -2, 1))
def bzpopmin(client: Client, argv: list[bytes]) -> Any:
    return _bzpop(client, argv, False)


@zcommand("bzpopmax", keys=(1, -2, 1))
def bzpopmax(client: Client, argv: list[bytes]) -> Any:
    return _bzpop(client, argv, True)


@zcommand("bzmpop", keys=(0, 0, 0), key_finder=lambda argv: mpop_keys(argv, 2))
def bzmpop(client: Client, argv: list[bytes]) -> Any:
    keys, from_max, count = parse_mpop(argv, 2)
    timeout = parse_timeout_seconds(argv[1])
    reply = mpop_from(client, keys, from_max, count)
    if reply is not None:
        return reply
    return Block(list(keys), timeout, NULL_ARRAY, None, ZSet)
