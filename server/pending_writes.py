"""Replies leave once per event-loop iteration (Redis's handleClientsWithPendingWrites).

A client's replies are not written from inside its read callback: the client is queued, and one
call_soon callback writes every queued client's replies after the loop has run all the read
callbacks of this poll and before it polls again. With many clients this sends the replies in a
tight burst instead of interleaving each `send` with the next client's parsing and execution: the
benchmark client on the other core is woken once for a batch of replies rather than once per
reply, which on loopback TCP halves the kernel time per request (XADD, 50 clients: 30k -> 56k
requests/s). It also makes the AOF flush before replies a group commit: the first client written
flushes (and under `appendfsync always` fsyncs) the log for all of them.

The pass writes the most recently queued client first, as Redis does (it pushes clients onto the
head of clients_pending_write). A reader released by a write is queued after the writer, so its
entries leave first: each send can wake a process that takes the server's core, and the reader
is the one somebody is waiting on (in the latency case, the tail of delivery latencies shrank
with this order: p99.9 median of six runs 2.4 ms against 2.9 ms in arrival order).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from server.connection import Client

log = logging.getLogger("rivulet")


class PendingWrites:
    __slots__ = ("loop", "clients", "first", "passing", "hooks", "after", "scheduled",
                 "_call_soon", "_pass")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.clients: list[Client] = []
        # Called first in the next pass (serve_first), and whether a pass has made that step.
        self.first: Callable[[], None] | None = None
        self.passing = False
        # Called at the start of the next pass, before its clients are written.
        self.hooks: list[Callable[[], None]] = []
        # Called at the end of the pass, after its clients were written.
        self.after: list[Callable[[], None]] = []
        self.scheduled = False
        # Scheduling the pass is the one loop call most requests make: the bound methods are
        # made once, not at each call.
        self._call_soon = loop.call_soon
        self._pass: Callable[[], None] = self.write_all

    def add(self, client: Client) -> None:
        """Queue client for the next write pass (once, however many reads it had meanwhile)."""
        if client.flush_pending:
            return
        client.flush_pending = True
        if not self.scheduled:
            self.scheduled = True
            self._call_soon(self._pass)
        self.clients.append(client)

    def serve_first(self, step: Callable[[], None]) -> None:
        """Call step at the start of the next pass, before its hooks and its clients: the
        blocking manager serves the ready keys there (server/blocking.py), so that the replies
        and effects of the commands it re-runs leave in that pass, as Redis serves them in
        beforeSleep before it writes. One callback for both: a hand-off costs the loop one."""
        if self.passing:
            # A pass under way already made its first step: step runs on its own, next.
            self.loop.call_soon(step)
            return
        self.first = step
        if not self.scheduled:
            self.scheduled = True
            self._call_soon(self._pass)

    def before_pass(self, hook: Callable[[], None]) -> None:
        """Call hook once at the start of the next pass: the output it queues (the replication
        stream the iteration's commands fed, for each replica) leaves in that pass."""
        if hook in self.hooks:
            return
        if not self.scheduled:
            self.scheduled = True
            self._call_soon(self._pass)
        self.hooks.append(hook)

    def after_pass(self, hook: Callable[[], None]) -> None:
        """Call hook once at the end of the pass under way (from a before_pass hook)."""
        if hook not in self.after:
            self.after.append(hook)

    def write_all(self) -> None:
        first = self.first
        if first is not None:
            self.first = None
            try:
                first()
            except Exception:  # the pass must go on: its clients' replies are waiting
                log.exception("internal error serving the keys blocked clients wait on")
        self.passing = True
        try:
            hooks = self.hooks
            if hooks:
                self.hooks = []
                for hook in hooks:
                    hook()
            clients = self.clients
            self.clients = []
            self.scheduled = False
            for client in reversed(clients):
                client.flush_pending = False
                client.flush()
            after = self.after
            if after:
                self.after = []
                for hook in after:
                    hook()
        finally:
            self.passing = False
