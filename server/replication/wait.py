"""WAIT and WAITAOF: clients parked until enough replicas acknowledged (or the local AOF
fsynced) the replication offset of their last write (Redis's clients_waiting_acks).

A waiting client is parked through the server's blocking mechanism (so what it sends meanwhile
waits behind it) on no key; it is released from here when acks arrive, the local fsync
advances, or its own deadline passes, never by polling.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from protocol.reply import ErrorReply

if TYPE_CHECKING:
    from server.connection import Client
    from server.replication.master import Master

WAITAOF_NO_AOF = "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled."


class Waiter:
    __slots__ = ("client", "offset", "numreplicas", "numlocal", "aof", "timer")

    def __init__(self, client: Client, offset: int, numreplicas: int, numlocal: int,
                 aof: bool) -> None:
        self.client = client
        self.offset = offset
        self.numreplicas = numreplicas
        self.numlocal = numlocal
        self.aof = aof
        self.timer: asyncio.TimerHandle | None = None


class WaitManager:
    def __init__(self, master: Master) -> None:
        self.master = master
        self.waiters: list[Waiter] = []
        master.on_acks.append(self.process)

    def local_fsynced(self, offset: int) -> int:
        """1 when the local AOF fsynced the stream up to offset (WAITAOF's numlocal)."""
        aof = self.master.server.persistence.aof
        return 1 if aof is not None and aof.fsynced_reploff >= offset else 0

    def reply_for(self, waiter: Waiter) -> Any:
        master = self.master
        if waiter.aof:
            return [self.local_fsynced(waiter.offset), master.count_acks(waiter.offset, aof=True)]
        return master.count_acks(waiter.offset)

    def satisfied(self, waiter: Waiter) -> bool:
        if waiter.aof:
            reply = self.reply_for(waiter)
            return reply[0] >= waiter.numlocal and reply[1] >= waiter.numreplicas
        return self.master.count_acks(waiter.offset) >= waiter.numreplicas

    def park(self, waiter: Waiter, timeout_ms: int) -> None:
        """Called by the command, which returns a Block on no key: the client is parked."""
        # A client waits in one command at a time: an earlier waiter of it was released
        # otherwise (CLIENT UNBLOCK) and is forgotten now.
        for old in [w for w in self.waiters if w.client is waiter.client]:
            self._forget(old)
        self.waiters.append(waiter)
        loop = self.master.server.loop
        assert loop is not None
        if timeout_ms > 0:
            waiter.timer = loop.call_later(timeout_ms / 1000, self._timed_out, waiter)
        self.master.request_acks()

    def _timed_out(self, waiter: Waiter) -> None:
        waiter.timer = None
        self._release(waiter, self.reply_for(waiter))

    def _forget(self, waiter: Waiter) -> None:
        if waiter in self.waiters:
            self.waiters.remove(waiter)
        if waiter.timer is not None:
            waiter.timer.cancel()
            waiter.timer = None

    @staticmethod
    def _still_waiting(waiter: Waiter) -> bool:
        """Whether the client is still parked in this WAIT / WAITAOF (not gone, not released
        by CLIENT UNBLOCK, not parked since in another command)."""
        client = waiter.client
        blocked = client.blocked
        return (not client.closed and blocked is not None
                and blocked.command.name == ("waitaof" if waiter.aof else "wait"))

    def _release(self, waiter: Waiter, reply: Any) -> None:
        self._forget(waiter)
        if self._still_waiting(waiter):
            waiter.client.server.blocking.unblock(waiter.client, reply)

    def process(self) -> None:
        """Acks (or the local fsync) moved: release whoever is served now."""
        aof_enabled = self.master.server.persistence.aof is not None
        for waiter in list(self.waiters):
            if not self._still_waiting(waiter):
                self._forget(waiter)
                continue
            if waiter.aof and waiter.numlocal and not aof_enabled:
                self._release(waiter, ErrorReply(WAITAOF_NO_AOF))
            elif self.satisfied(waiter):
                self._release(waiter, self.reply_for(waiter))
