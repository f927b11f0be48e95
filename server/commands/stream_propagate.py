"""The effect form of consumer-group changes: commands that recreate the exact state.

Deliveries and claims depend on the clock and on who asked first, so they are logged as their
effect, as Redis propagates them: each pending record as an XCLAIM that sets its owner, delivery
time and delivery count (FORCE JUSTID), the group's position as XGROUP SETID ... ENTRIESREAD, and
consumers as XGROUP CREATECONSUMER. An AOF rewrite writes pending records the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from streams.ids import format_id

if TYPE_CHECKING:
    from server.connection import Client
    from streams.groups import ConsumerGroup, PendingEntry


def pending_effect(key: bytes, group: bytes, eid: int, pe: PendingEntry) -> list[bytes]:
    """The XCLAIM that recreates pending record eid of group as it is (owner, time, count)."""
    assert pe.consumer is not None
    return [b"XCLAIM", key, group, pe.consumer.name, b"0", format_id(eid),
            b"TIME", b"%d" % pe.delivery_time, b"RETRYCOUNT", b"%d" % pe.delivery_count,
            b"FORCE", b"JUSTID"]


def claim_effect(key: bytes, group: ConsumerGroup, eid: int) -> list[bytes]:
    return pending_effect(key, group.name, eid, group.pel[eid])


def position_effect(key: bytes, group: ConsumerGroup) -> list[bytes]:
    entries_read = -1 if group.entries_read is None else group.entries_read
    return [b"XGROUP", b"SETID", key, group.name, format_id(group.last_id),
            b"ENTRIESREAD", b"%d" % entries_read]


def consumer_effect(key: bytes, group: ConsumerGroup, consumer: bytes) -> list[bytes]:
    return [b"XGROUP", b"CREATECONSUMER", key, group.name, consumer]


def propagate_deliveries(client: Client, key: bytes, group: ConsumerGroup,
                         ids: Iterable[int]) -> None:
    """Log each delivered ID as the pending record the delivery left."""
    for eid in ids:
        client.propagate(claim_effect(key, group, eid))
