"""Blocked clients and the ready-keys queue (Redis's blocked.c).

A command that has nothing to return yet (XREAD BLOCK...) returns a `Block` request. The client is
parked on its keys. Writes never wake clients directly: they only mark a key *ready*. The ready keys
are served once per event-loop iteration, after the commands read in that iteration have run and
before the loop polls again, so a burst of writes wakes each waiter once with everything new.
Clients parked on a key are served first-come first-served; a woken client re-runs its read
(`Block.retry`), and stays parked if that read still finds nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from protocol.reply import NULL_ARRAY, ErrorReply

if TYPE_CHECKING:
    from server.connection import Client


class Block:
    """What a handler returns to park its client.

    retry() re-runs the read against the current data: it returns the reply to send (entries, or an
    error when the key or group went away), or None to keep waiting.
    """

    __slots__ = ("keys", "timeout_ms", "retry", "timeout_reply")

    def __init__(self, keys: list[bytes], timeout_ms: int, retry: Callable[[], Any],
                 timeout_reply: Any = NULL_ARRAY) -> None:
        self.keys = keys
        self.timeout_ms = timeout_ms  # 0 blocks forever
        self.retry = retry
        self.timeout_reply = timeout_reply


class BlockedState:
    __slots__ = ("client", "request", "db", "timer")

    def __init__(self, client: Client, request: Block, db: int) -> None:
        self.client = client
        self.request = request
        self.db = db
        self.timer: asyncio.TimerHandle | None = None


class BlockingManager:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        # (db, key) -> clients parked on it, in arrival order (dict as an ordered set)
        self.waiters: dict[tuple[int, bytes], dict[Client, None]] = {}
        # keys signalled since the last serve, in signal order
        self.ready: dict[tuple[int, bytes], None] = {}
        self._scheduled = False
        self.blocked_count = 0

    @property
    def blocking_keys(self) -> int:
        return len(self.waiters)

    def block(self, client: Client, request: Block) -> None:
        state = BlockedState(client, request, client.db.index)
        client.blocked = state
        for key in request.keys:
            self.waiters.setdefault((state.db, key), {})[client] = None
        if request.timeout_ms > 0:
            state.timer = self.loop.call_later(request.timeout_ms / 1000, self._timed_out, client)
        self.blocked_count += 1

    def signal_ready(self, db: int, key: bytes) -> None:
        """Called by the keyspace on writes and deletions; cheap when nobody waits on the key."""
        waiters = self.waiters
        if not waiters or (db, key) not in waiters:
            return
        self.ready[(db, key)] = None
        if not self._scheduled:
            self._scheduled = True
            self.loop.call_soon(self.serve_ready_keys)

    def serve_ready_keys(self) -> None:
        self._scheduled = False
        # Serving can make more keys ready (a woken XREADGROUP writes nothing, but a future
        # blocking command might), so loop until the queue is empty.
        while self.ready:
            ready = list(self.ready)
            self.ready.clear()
            for db, key in ready:
                parked = self.waiters.get((db, key))
                if not parked:
                    continue
                for client in list(parked):
                    state = client.blocked
                    if state is None or (db, key) not in self.waiters or client not in parked:
                        continue
                    reply = client.run_blocked_retry(state.request.retry)
                    if reply is not None:
                        self.unblock(client, reply)

    def unblock(self, client: Client, reply: Any) -> None:
        """Release a parked client with `reply`, then let it go on with its pipeline."""
        self._forget(client)
        client.resume_after_block(reply)

    def _timed_out(self, client: Client) -> None:
        state = client.blocked
        if state is not None:
            self.unblock(client, state.request.timeout_reply)

    def client_unblock(self, client: Client, with_error: bool) -> bool:
        """CLIENT UNBLOCK: release with the timeout reply, or with Redis's UNBLOCKED error."""
        state = client.blocked
        if state is None:
            return False
        reply = (ErrorReply("UNBLOCKED client unblocked via CLIENT UNBLOCK") if with_error
                 else state.request.timeout_reply)
        self.unblock(client, reply)
        return True

    def disconnected(self, client: Client) -> None:
        """A parked client that went away is forgotten at once."""
        if client.blocked is not None:
            self._forget(client)

    def _forget(self, client: Client) -> None:
        state = client.blocked
        if state is None:
            return
        client.blocked = None
        self.blocked_count -= 1
        if state.timer is not None:
            state.timer.cancel()
        for key in state.request.keys:
            parked = self.waiters.get((state.db, key))
            if parked is not None:
                parked.pop(client, None)
                if not parked:
                    del self.waiters[(state.db, key)]
