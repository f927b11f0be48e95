"""A coordinated failover started by FAILOVER on a master (Redis's replication.c:
failoverCommand, updateFailoverStatus, abortFailover, clearFailoverState).

1. Writes are paused (server/write_pause.py): the replication offset stops moving.
2. `waiting-for-sync`: every 100 ms, and whenever a replica acknowledges, the master looks for
   the target replica (or, without TO, any replica) whose acknowledged offset equals its own.
   With TIMEOUT, the wait ends there: the failover is aborted, or with FORCE goes on anyway.
3. `failover-in-progress`: the master becomes a replica of the target and sends it
   `PSYNC <replid> <offset> FAILOVER`, which makes the target a master that continues the
   same history; +CONTINUE (or +FULLRESYNC) ends the failover and the pause. Any other answer
   aborts it: the server is a master again.

FAILOVER ABORT stops it at any step. INFO replication shows the step as master_failover_state.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from server.log import NOTICE
from server.replication.links import ONLINE, ReplicaLink

if TYPE_CHECKING:
    from server.server import Server

log = logging.getLogger("rivulet")

NO_FAILOVER = "no-failover"
WAIT_FOR_SYNC = "waiting-for-sync"
IN_PROGRESS = "failover-in-progress"
# Redis runs its replication cron every 100 ms during a failover.
_CHECK_PERIOD = 0.1
PAUSE_PURPOSE = "failover"


class Failover:
    def __init__(self, server: Server) -> None:
        self.server = server
        self.state = NO_FAILOVER
        self.target_host: str | None = None
        self.target_port = 0
        self.end_time = 0.0  # time.monotonic() deadline; 0: none
        self.force = False
        self._timer: object | None = None
        # A replica's acknowledgement may be the one the wait is for.
        server.replication.on_acks.append(self.check)

    @property
    def in_progress(self) -> bool:
        """The PSYNC this server sends as a replica carries FAILOVER."""
        return self.state == IN_PROGRESS

    # --- FAILOVER ---------------------------------------------------------------------------

    def start(self, host: str | None, port: int, timeout_ms: int, force: bool) -> None:
        """The checks passed (server/commands/failover.py): pause writes and wait for a
        replica to catch up."""
        if host is not None:
            self.target_host, self.target_port = host, port
            log.log(NOTICE, "FAILOVER requested to %s:%d.", host, port)
        else:
            log.log(NOTICE, "FAILOVER requested to any replica.")
        self.end_time = time.monotonic() + timeout_ms / 1000 if timeout_ms else 0.0
        self.force = force
        self.state = WAIT_FOR_SYNC
        server = self.server
        server.write_pause.pause(PAUSE_PURPOSE)
        # Replicas not pinged while waiting with a deadline: a PING would move the offset.
        server.replication.hold_pings = bool(self.end_time)
        # Where the replicas stand comes with their once-a-second ACKs: a GETACK would move
        # the offset the pause holds still.
        self._schedule()

    def find_replica(self, host: str, port: int) -> ReplicaLink | None:
        """The replica at host:port (its announced address, else its connection's)."""
        for link in self.server.replication.replicas:
            if link.ip().lower() == host.lower() and link.listening_port == port:
                return link
        return None

    def _schedule(self) -> None:
        loop = self.server.loop
        if loop is not None and self.state == WAIT_FOR_SYNC:
            self._timer = loop.call_later(_CHECK_PERIOD, self._tick)

    def _tick(self) -> None:
        self._timer = None
        try:
            self.check()
        except Exception:  # the failover must never stay stuck on a bug
            log.exception("failover check failed")
        self._schedule()

    def check(self) -> None:
        """Redis's updateFailoverStatus."""
        if self.state != WAIT_FOR_SYNC:
            return
        if self.end_time and self.end_time <= time.monotonic():
            if self.force:
                log.log(NOTICE, "FAILOVER to %s:%d time out exceeded, failing over.",
                        self.target_host, self.target_port)
                self._hand_over()
            else:
                self.abort("Replica never caught up before timeout")
            return
        offset = self.server.replication.state.master_repl_offset
        replica: ReplicaLink | None = None
        if self.target_host is not None:
            replica = self.find_replica(self.target_host, self.target_port)
        else:
            for link in self.server.replication.replicas:
                if link.ack_off == offset:
                    replica = link
                    self.target_host, self.target_port = link.ip(), link.listening_port
                    break
        if replica is not None and replica.state == ONLINE and replica.ack_off == offset:
            log.log(NOTICE, "Failover target %s:%d is synced, failing over.",
                    self.target_host, self.target_port)
            self._hand_over()

    def _hand_over(self) -> None:
        self.state = IN_PROGRESS
        assert self.target_host is not None
        self.server.master_link.set_master(self.target_host, self.target_port)

    # --- the PSYNC FAILOVER's answer (server/replication/replica.py) ------------------------

    def psync_answered(self, accepted: bool) -> None:
        if self.state != IN_PROGRESS:
            return
        if accepted:
            self.clear()
        else:
            self.abort("Failover target rejected psync request")

    # --- the end ----------------------------------------------------------------------------

    def clear(self) -> None:
        """Redis's clearFailoverState: writes resume."""
        self.end_time = 0.0
        self.force = False
        self.target_host = None
        self.target_port = 0
        self.state = NO_FAILOVER
        timer = self._timer
        if timer is not None:
            timer.cancel()  # type: ignore[attr-defined]
            self._timer = None
        self.server.replication.hold_pings = False
        self.server.write_pause.unpause(PAUSE_PURPOSE)

    def abort(self, why: str) -> None:
        """Redis's abortFailover: a server that already turned replica is a master again."""
        if self.state == NO_FAILOVER:
            return
        if self.target_host is not None:
            log.log(NOTICE, "FAILOVER to %s:%d aborted: %s", self.target_host, self.target_port,
                    why)
        else:
            log.log(NOTICE, "FAILOVER to any replica aborted: %s", why)
        if self.state == IN_PROGRESS:
            self.server.master_link.unset_master()
        self.clear()
