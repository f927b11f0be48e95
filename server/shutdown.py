"""Shutting down without losing what replicas have not acknowledged (Redis 7's
prepareForShutdown, isReadyToShutdown, finishShutdown, abortShutdown).

SHUTDOWN (or SIGTERM / SIGINT) on a server whose replicas lag behind its replication offset
does not stop at once, unless NOW is given or shutdown-timeout is 0: writes are paused
(server/write_pause.py), replicas are asked for an acknowledgement, and the server waits up to
shutdown-timeout seconds for every replica to reach its offset. The client that sent SHUTDOWN
waits too (it gets no reply when the server goes away). Then the persistence steps run (the
final save...); if they fail, the shutdown is cancelled and the waiting clients get Redis's
error. SHUTDOWN ABORT cancels a wait under way.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from protocol.reply import ErrorReply
from server.blocking import Block
from server.log import NOTICE
from server.replication.links import ONLINE, STATE_NAMES

if TYPE_CHECKING:
    from server.connection import Client
    from server.server import Server

log = logging.getLogger("rivulet")

SHUTDOWN_ERRORS = ErrorReply("ERR Errors trying to SHUTDOWN. Check logs.")
PAUSE_PURPOSE = "shutdown"


class Shutdown:
    def __init__(self, server: Server) -> None:
        self.server = server
        # time.monotonic() when the wait ends; 0: no shutdown under way (isShutdownInitiated).
        self.deadline = 0.0
        self.save = False
        self.nosave = False
        self.force = False
        # Clients that sent SHUTDOWN and wait with it.
        self.waiting: list[Client] = []

    @property
    def initiated(self) -> bool:
        return self.deadline != 0.0

    def request(self, client: Client | None, save: bool, nosave: bool, now: bool,
                force: bool) -> Any:
        """SHUTDOWN's flags (client None: a signal). None: the server stops now (its
        persistence steps succeeded); a Block: the client waits for the replicas; an error:
        the server keeps running."""
        if self.initiated:
            # Already waiting: this client waits with the first one.
            return self._wait(client)
        server = self.server
        if server.loading:
            save, nosave = False, True
        self.save, self.nosave, self.force = save, nosave, force
        timeout = server.config["shutdown-timeout"]
        if not now and timeout and not self.ready():
            self.deadline = time.monotonic() + timeout
            server.replication.send_getack_now()
            server.write_pause.pause(PAUSE_PURPOSE)
            log.log(NOTICE, "Waiting for replicas before shutting down.")
            return self._wait(client)
        return None if self.finish() else SHUTDOWN_ERRORS

    def _wait(self, client: Client | None) -> Any:
        if client is None:
            return None
        self.waiting.append(client)
        return Block([], 0)

    def ready(self) -> bool:
        """Every replica acknowledged our whole stream (isReadyToShutdown)."""
        master = self.server.replication
        offset = master.state.master_repl_offset
        return all(link.ack_off == offset for link in master.replicas)

    def cron(self) -> None:
        """Called by the server cron while waiting: finish once the replicas caught up or time
        is up."""
        if self.initiated and (time.monotonic() >= self.deadline or self.ready()):
            if not self.finish():
                self.cancel()

    def finish(self) -> bool:
        """The last step (finishShutdown): log lagging replicas, run the persistence steps and
        stop the server; False when they failed (the server keeps running)."""
        server = self.server
        master = server.replication
        offset = master.state.master_repl_offset
        now = time.time()
        lagging = 0
        for link in master.replicas:
            if link.ack_off != offset:
                lagging += 1
                log.log(NOTICE, "Lagging replica %s reported offset %d behind master, lag=%d, "
                        "state=%s.", master.replica_name(link), offset - link.ack_off,
                        int(now - link.ack_time) if link.state == ONLINE else 0,
                        STATE_NAMES.get(link.state, "unknown"))
        if master.replicas:
            log.log(NOTICE, "%d of %d replicas are in sync when shutting down.",
                    len(master.replicas) - lagging, len(master.replicas))
        if not server.persistence.prepare_shutdown(self.save, self.nosave, self.force):
            return False
        server.request_shutdown(False)
        return True

    def cancel(self) -> None:
        """The wait ends without stopping (cancelShutdown): waiting clients get Redis's error,
        writes resume."""
        self.deadline = 0.0
        self.save = self.nosave = self.force = False
        waiting, self.waiting = self.waiting, []
        blocking = self.server.blocking
        for client in waiting:
            if not client.closed and client.blocked is not None:
                blocking.unblock(client, SHUTDOWN_ERRORS)
        self.server.write_pause.unpause(PAUSE_PURPOSE)

    def abort(self) -> bool:
        """SHUTDOWN ABORT: False when no shutdown is under way."""
        if not self.initiated:
            return False
        self.cancel()
        log.log(NOTICE, "Shutdown manually aborted.")
        return True

    def remaining_ms(self) -> int:
        """INFO's shutdown_in_milliseconds."""
        return max(int((self.deadline - time.monotonic()) * 1000), 0)
