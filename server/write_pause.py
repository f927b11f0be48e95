"""Writes paused while the server hands its role over (FAILOVER) or waits for its replicas
before shutting down: Redis's pauseActions(..., PAUSE_ACTIONS_CLIENT_WRITE_SET).

While a pause holds, a client's command that may change the dataset or the replication stream
(a write, a `may_replicate` command such as PUBLISH, an EXEC of such commands) is postponed: the
client is parked, with what it pipelined behind, until the last pause ends, and then runs it
as sent. Reads go on, seeing expired keys as missing without deleting them, and the active
expiry cycle stops: nothing moves the replication offset, so replicas can catch up with it.
Replication links (a replica's master, and the replicas themselves) are never paused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from server.blocking import BLOCKED, Block
from server.keyspace import EXPIRY_DELETE, EXPIRY_HIDE

if TYPE_CHECKING:
    from server.command_table import Command
    from server.connection import Client
    from server.server import Server


class WritePause:
    def __init__(self, server: Server) -> None:
        self.server = server
        # Why writes are paused ("failover", "shutdown"); empty: they are not.
        self.purposes: set[str] = set()
        # Clients parked by a pause, in arrival order.
        self.postponed: dict[Client, None] = {}

    @property
    def active(self) -> bool:
        return bool(self.purposes)

    def pause(self, purpose: str) -> None:
        if not self.purposes:
            self.server.keyspace.expiry = EXPIRY_HIDE
        self.purposes.add(purpose)
        self.server.refresh_gate()

    def unpause(self, purpose: str) -> None:
        """End one pause; once none holds, the postponed clients run their commands in the
        order they sent them."""
        if purpose not in self.purposes:
            return
        self.purposes.discard(purpose)
        if self.purposes:
            return
        server = self.server
        if server.replica_of is None:
            server.keyspace.expiry = EXPIRY_DELETE
        server.refresh_gate()
        postponed, self.postponed = self.postponed, {}
        blocking = server.blocking
        for client in postponed:
            if not client.closed and client.blocked is not None:
                blocking.run_postponed(client)

    @staticmethod
    def stops(client: Client, cmd: Command) -> bool:
        """Whether a pause of writes holds cmd back (Redis's is_may_replicate_command)."""
        if cmd.is_write or "may_replicate" in cmd.flags:
            return True
        multi = client.multi
        if cmd.name == "exec" and multi:
            return any(queued.is_write or "may_replicate" in queued.flags
                       for queued, _argv in multi)
        return False

    def postpone(self, client: Client, cmd: Command, argv: list[bytes]) -> Any:
        """Park client with its command until the pause ends."""
        self.server.blocking.block(client, Block([], 0), cmd, argv)
        self.postponed[client] = None
        return BLOCKED
