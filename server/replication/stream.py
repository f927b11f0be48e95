"""The replication stream on its way out of a master: what every write costs it (compiled).

The stream is a consumer of effects (server/effects.py). Each command's (or run's, or EXEC's)
effects are encoded once, with a SELECT where the database differs from the stream's own
(Redis's `server.slaveseldb`), and fed: the backlog takes them at once (so the offset that
WAIT remembers, a PSYNC served from the backlog and INFO are exact after every command), and
so does every replica whose snapshot is being produced (it gets them after the snapshot,
exactly once). The replicas that take the stream live get it once per event-loop iteration:
what the iteration's commands fed is joined once, and the same bytes object is queued on each
of those replicas in the write pass (server/pending_writes.py), one write per replica and
iteration, however many commands ran and however many replicas there are. Redis, likewise,
appends to one shared replication buffer that each replica's write in beforeSleep reads.

Whatever changes which replicas take the stream live (a replica coming online, a partial
resynchronization, a replica's first ACK after a diskless load) first sends what is held
(`flush`): a replica must not get twice what it already has, nor miss what others got.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from server.effects import Effect
from server.replication.links import WAIT_BGSAVE_START, ReplicaLink
from server.replication.state import ReplicationState

if TYPE_CHECKING:
    from server.server import Server

log = logging.getLogger("rivulet")


class OutgoingStream:
    """The effects consumer of a master, and the bytes its live replicas have still to get."""

    def __init__(self, server: Server, state: ReplicationState, replicas: list[ReplicaLink]) -> None:
        self.server = server
        self.state = state
        # The master's list of replicas (shared, not copied: the master adds and removes).
        self.replicas = replicas
        # The database the stream last selected; -1 makes the next command state its own.
        self.selected_db = -1
        # What this iteration fed, for the replicas that take the stream live.
        self.held: list[bytes] = []

    def propagate(self, effects: list[Effect], transaction: bool) -> None:
        """The effects consumer: one command's (or one EXEC's) effects into the stream."""
        if self.server.replica_of is not None:
            # A replica's stream is its master's, fed as received (server/replication/replica.py).
            return
        data, self.selected_db = self.server.effects.encode(effects, transaction, self.selected_db)
        self.feed(data)

    def feed(self, data: bytes) -> None:
        """Bytes into the stream: the backlog now, the live replicas in the write pass."""
        state = self.state
        state.feed(data)
        server = self.server
        server.effects.repl_offset = state.master_repl_offset
        live = False
        for link in self.replicas:
            if link.streaming:
                live = True
            elif link.state != WAIT_BGSAVE_START:
                self._accumulate(link, data)
        if live:
            held = self.held
            if not held:
                server.pending_writes.before_pass(self.flush)
            held.append(data)

    def _accumulate(self, link: ReplicaLink, data: bytes) -> None:
        """A replica whose snapshot is still to come keeps the stream for after it, within the
        replica class's hard output limit."""
        link.pending += data
        server = self.server
        limits = server.output_limits.replica
        if limits is not None and limits[0] and len(link.pending) > limits[0]:
            log.warning("Client id=%d addr=%s closed for overcoming of output buffer "
                        "limits.", link.client.id, link.client.addr)
            server.output_limit_disconnections += 1
            link.pending = bytearray()
            link.client.close()

    def flush(self) -> None:
        """Queue what is held on every live replica: one bytes object for all of them."""
        held = self.held
        if not held:
            return
        data = b"".join(held) if len(held) > 1 else held[0]
        self.held = []
        for link in self.replicas:
            if link.streaming:
                link.send(data)
