"""Pauses of clients' commands: CLIENT PAUSE, FAILOVER and a shutdown waiting for its replicas
(Redis's pauseActions, one pause per purpose).

Each purpose holds its pause until its end time (CLIENT PAUSE's timeout; FAILOVER and shutdown
until they end it) and pauses either writes (PAUSE_WRITE: a write, a `may_replicate` command
such as PUBLISH, an EXEC of such commands) or every command (PAUSE_ALL). The strictest live
pause applies. A paused command is postponed through the blocking mechanism: the client is
parked, with what it pipelined behind, and runs it as sent once no pause holds it back any
more, the parked clients in the order they arrived. While anything is paused, reads see
expired keys as missing without deleting them, the active expiry cycle and eviction stop:
nothing moves the replication offset, so replicas can catch up with it. The connections of our
replicas are never paused; on a replica, the stream from its master is (its offset stops at
the first paused command, as in Redis).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from server.blocking import BLOCKED, Block
from server.keyspace import EXPIRY_DELETE, EXPIRY_HIDE

if TYPE_CHECKING:
    import asyncio

    from server.command_table import Command
    from server.connection import Client
    from server.server import Server

# What a pause holds back (Redis's PAUSE_ACTION_CLIENT_WRITE < PAUSE_ACTION_CLIENT_ALL).
NOT_PAUSED = 0
PAUSE_WRITE = 1
PAUSE_ALL = 2

CLIENT_PAUSE = "client"  # the purpose of CLIENT PAUSE


def may_replicate(client: Client, cmd: Command) -> bool:
    """Redis's is_may_replicate_command: a write, a may-replicate command, or an EXEC of a
    transaction holding one."""
    if cmd.is_write or "may_replicate" in cmd.flags:
        return True
    multi = client.multi
    if cmd.name == "exec" and multi is not None:
        return any(queued.is_write or "may_replicate" in queued.flags for queued in multi.commands)
    return False


class WritePause:
    def __init__(self, server: Server) -> None:
        self.server = server
        # purpose -> (what it pauses, its end as a time.monotonic() reading; inf: no end).
        self.purposes: dict[str, tuple[int, float]] = {}
        # The strictest live pause (NOT_PAUSED, PAUSE_WRITE, PAUSE_ALL).
        self.level = NOT_PAUSED
        # Clients parked by a pause, in arrival order.
        self.postponed: dict[Client, None] = {}
        # Called once a pause was lifted or eased (a replica resumes its master's stream).
        self.on_eased: list[Callable[[], None]] = []
        self._timer: asyncio.TimerHandle | None = None

    @property
    def active(self) -> bool:
        return bool(self.purposes)

    def pause(self, purpose: str, level: int = PAUSE_WRITE, end: float = math.inf) -> None:
        """Pause for `purpose` at `level` until `end` (time.monotonic()), replacing what that
        purpose paused; its end only moves later (Redis's pauseActions)."""
        old = self.purposes.get(purpose)
        if old is not None and old[1] > end:
            end = old[1]
        self.purposes[purpose] = (level, end)
        self.update()

    def pause_by_client(self, end: float, pause_all: bool) -> None:
        """CLIENT PAUSE: a WRITE pause keeps an ALL pause that still holds."""
        self.update()
        old = self.purposes.get(CLIENT_PAUSE)
        level = PAUSE_ALL if pause_all or (old is not None and old[0] == PAUSE_ALL) else PAUSE_WRITE
        self.pause(CLIENT_PAUSE, level, end)

    def unpause(self, purpose: str) -> None:
        if self.purposes.pop(purpose, None) is not None:
            self.update()

    def update(self) -> None:
        """Drop the pauses past their end and apply the strictest one left (Redis's
        updatePausedActions); a pause that became less strict lets the parked clients run
        again (each one is paused anew if it still has to be)."""
        now = time.monotonic()
        for purpose, (_level, end) in list(self.purposes.items()):
            if end <= now:
                del self.purposes[purpose]
        previous = self.level
        level = max((lvl for lvl, _end in self.purposes.values()), default=NOT_PAUSED)
        self.level = level
        server = self.server
        if level and not previous:
            server.keyspace.expiry = EXPIRY_HIDE
            server.refresh_gate()
        elif previous and not level:
            if server.replica_of is None:
                server.keyspace.expiry = EXPIRY_DELETE
            server.refresh_gate()
        self._schedule(now)
        if level < previous:
            loop = server.loop
            # After the command that lifted it (CLIENT UNPAUSE, the end of a failover): the
            # parked commands run as commands of their own, with their own effects.
            if loop is not None:
                loop.call_soon(self._resume)
            else:
                self._resume()

    def _schedule(self, now: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        end = min((end for _level, end in self.purposes.values()), default=math.inf)
        loop = self.server.loop
        if end != math.inf and loop is not None:
            self._timer = loop.call_later(max(0.0, end - now), self._expired)

    def _expired(self) -> None:
        self._timer = None
        self.update()

    def _resume(self) -> None:
        postponed, self.postponed = self.postponed, {}
        blocking = self.server.blocking
        for client in postponed:
            if not client.closed and client.blocked is not None:
                blocking.run_postponed(client)
        for hook in self.on_eased:
            hook()

    def stops(self, client: Client, cmd: Command) -> bool:
        """Whether the pause holds cmd back."""
        if self.level == PAUSE_ALL:
            return True
        return may_replicate(client, cmd)

    def postpone(self, client: Client, cmd: Command, argv: list[bytes]) -> Any:
        """Park client with its command until the pause ends."""
        client.last_command = cmd  # CLIENT LIST's cmd= names it, as in Redis
        self.server.blocking.block(client, Block([], 0), cmd, argv)
        self.postponed[client] = None
        return BLOCKED
