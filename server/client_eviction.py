"""Client eviction (`maxmemory-clients`), as Redis 7's evictClients.

While the memory held by every normal and Pub/Sub connection reaches the limit, the largest
connections are closed, largest first (Redis ranks them in buckets of powers of two; within one
bucket it takes them in the order they entered it, here the order they connected). Replicas and
the link from this server's master are neither counted nor evicted; a connection with CLIENT
NO-EVICT on is counted, as Redis counts it, but never evicted, so the others are evicted in its
place (Redis then logs "Over client maxmemory after evicting all evictable clients"). The limit is a size, or a percentage of `maxmemory` (none while `maxmemory` is 0),
and never below 128 KB, so that a mistaken setting cannot shut every client out.

Measuring every connection at every step would cost the servers that do not use this what they
pay for it, so nothing is kept while the limit is 0. With a limit, what each connection held when
last measured is kept, and re-measured once per event-loop pass for the connections that read
something or got output in that pass, and for those that held more than an idle connection (they
may have drained since). The check follows the pass's writes, as Redis's follows them in
beforeSleep: a reply the socket took is no longer held.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from server.client_memory import REPLY_BUFFER_SIZE, client_memory
from server.log import NOTICE

if TYPE_CHECKING:
    from server.connection import Client
    from server.pending_writes import PendingWrites
    from server.server import Server

log = logging.getLogger("rivulet")

# Redis's floor under the limit (getClientEvictionLimit).
SMALLEST_LIMIT = 128 * 1024
# Redis's CLIENT_MEM_USAGE_BUCKET_MIN_LOG / MAX_LOG: the buckets clients are ranked in.
_MIN_LOG = 15
_MAX_LOG = 33


def eviction_limit(setting: int, maxmemory: int) -> int:
    """The limit in bytes for a `maxmemory-clients` value (negative: a percentage); 0: none."""
    if setting < 0:
        if maxmemory <= 0:
            return 0
        limit = int(maxmemory * -setting / 100)
    elif setting > 0:
        limit = setting
    else:
        return 0
    return max(limit, SMALLEST_LIMIT)


def _bucket(size: int) -> int:
    return min(max(size.bit_length(), _MIN_LOG), _MAX_LOG)


def counted(client: Client) -> bool:
    """Normal and Pub/Sub connections: those whose memory the limit covers."""
    if client.is_master or client.transport is None:
        return False
    link = client.replica
    return link is None or not link.is_replica


class ClientEviction:
    __slots__ = ("server", "limit", "sizes", "total", "touched", "warned")

    def __init__(self, server: Server) -> None:
        self.server = server
        self.limit = 0
        # What each counted connection held when last measured, and their sum.
        self.sizes: dict[Client, int] = {}
        self.total = 0
        # Connections that read something since the last check.
        self.touched: dict[Client, None] = {}
        self.warned = False

    def configure(self, setting: int, maxmemory: int) -> None:
        """Follow `maxmemory-clients` and `maxmemory`: measure every connection when the limit
        starts (checked after this pass's writes), forget them all when it ends."""
        limit = eviction_limit(setting, maxmemory)
        self.limit = limit
        self.sizes.clear()
        self.touched.clear()
        self.total = 0
        self.warned = False
        if limit:
            for client in list(self.server.clients.values()):
                self.measure(client)
            # None until the loop runs (read untyped: compiled code checks a typed read).
            pending: PendingWrites | None = getattr(self.server, "pending_writes", None)
            if pending is not None:
                pending.before_pass(self._note_pass)

    def touch(self, client: Client) -> None:
        """client read something: measure it after this pass."""
        self.touched[client] = None
        self.server.pending_writes.before_pass(self._note_pass)

    def _note_pass(self) -> None:
        # The connections this pass writes to got output: measured with the others after it.
        touched = self.touched
        pending = self.server.pending_writes
        for client in pending.clients:
            touched[client] = None
        pending.after_pass(self.check)

    def forget(self, client: Client) -> None:
        size = self.sizes.pop(client, None)
        if size is not None:
            self.total -= size
        self.touched.pop(client, None)

    def measure(self, client: Client) -> None:
        size = client_memory(client).total if not client.closed and counted(client) else 0
        old = self.sizes.pop(client, 0)
        if size:
            self.sizes[client] = size
        self.total += size - old

    def check(self) -> None:
        """Measure what may have changed, then close the largest connections while the total
        reaches the limit."""
        if not self.limit:
            return
        touched = self.touched
        self.touched = {}
        for client in touched:
            self.measure(client)
        for client, size in list(self.sizes.items()):
            if size > REPLY_BUFFER_SIZE and client not in touched:
                self.measure(client)
        if self.total >= self.limit:
            self._evict()
        else:
            self.warned = False

    def _evict(self) -> None:
        # Largest bucket first; within a bucket in the order the connections were made.
        ranked = sorted(self.sizes.items(), key=lambda item: (-_bucket(item[1]), item[0].id))
        stats = self.server.stats
        for client, _size in ranked:
            if self.total < self.limit:
                return
            if client.no_evict:
                continue
            from server.commands.client import client_info_line

            log.log(NOTICE, "Evicting client: %s", client_info_line(client))
            self.forget(client)
            client.evict()
            stats.evicted_clients += 1
        if self.total >= self.limit and not self.warned:
            self.warned = True
            log.warning("Over client maxmemory after evicting all evictable clients")
