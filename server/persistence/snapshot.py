"""The dataset as a sequence of commands: what an AOF rewrite writes.

Every command is one that Redis 8.x accepts (and, for everything but Redis 8 stream state, Redis
7.x), so a rewritten file replays into Redis as well (`redis-cli --pipe`). Each value type says
how its values are written (`server.value_types`); for streams, see
`server/commands/stream_rewrite.py`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from server import value_types

if TYPE_CHECKING:
    from server.keyspace import Keyspace

Command = list[bytes]


def _num(n: int) -> bytes:
    return b"%d" % n


def dataset_commands(keyspace: Keyspace) -> Iterator[Command]:
    """Every command needed to rebuild the keyspace, database by database."""
    for db in keyspace.dbs:
        if not db.data:
            continue
        yield [b"SELECT", _num(db.index)]
        for key, value in db.data.items():
            yield from value_types.of(value).rewrite(key, value)
            when = db.expires.get(key)
            if when is not None:
                yield [b"PEXPIREAT", key, _num(when)]
