"""The AOF form of consumer-group changes: commands that recreate the exact state.

Deliveries and claims depend on the clock and on who asked first, so they are logged as their
effect, as Redis propagates them: each pending record as an XCLAIM that sets its owner, delivery
time and delivery count (FORCE JUSTID), the group's position as XGROUP SETID ... ENTRIESREAD, and
consumers as XGROUP CREATECONSUMER. A pending record that went away is logged as the XACK it
amounts to.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from streams.ids import format_id

if TYPE_CHECKING:
    from server.connection import Client
    from streams.groups import ConsumerGroup


def aof_enabled(client: Client) -> bool:
    return client.persistence.aof is not None


def claim_effect(key: bytes, group: ConsumerGroup, eid: int) -> list[bytes]:
    pe = group.pel[eid]
    assert pe.consumer is not None
    return [b"XCLAIM", key, group.name, pe.consumer.name, b"0", format_id(eid),
            b"TIME", b"%d" % pe.delivery_time, b"RETRYCOUNT", b"%d" % pe.delivery_count,
            b"FORCE", b"JUSTID"]


def position_effect(key: bytes, group: ConsumerGroup) -> list[bytes]:
    entries_read = -1 if group.entries_read is None else group.entries_read
    return [b"XGROUP", b"SETID", key, group.name, format_id(group.last_id),
            b"ENTRIESREAD", b"%d" % entries_read]


def consumer_effect(key: bytes, group: ConsumerGroup, consumer: bytes) -> list[bytes]:
    return [b"XGROUP", b"CREATECONSUMER", key, group.name, consumer]


def propagate_pel(client: Client, key: bytes, group: ConsumerGroup, ids: Iterable[int]) -> None:
    """Log the current pending state of each id: claimed by its owner, or gone (XACK)."""
    pel = group.pel
    for eid in ids:
        if eid in pel:
            client.propagate(claim_effect(key, group, eid))
        else:
            client.propagate([b"XACK", key, group.name, format_id(eid)])
