"""The server: listeners, connected clients, keyspace, blocking, lifecycle and shutdown."""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import signal
import time
from typing import TYPE_CHECKING

from server.blocking import BlockingManager
from server.command_table import STARTUP_HOOKS, load_handlers
from server.config import Config
from server.effects import Effects
from server.entry_cache import EntryCache
from server.keyspace import Keyspace
from server.pending_writes import PendingWrites
from server.persistence.manager import Persistence
from server.pubsub import PubSub
from server.replication.master import NOREPLICAS, Master
from server.replication.replica import MasterLink
from server.replication.wait import WaitManager
from server.stats import Stats

if TYPE_CHECKING:
    from server.connection import Client

log = logging.getLogger("rivulet")

# (server) -> why SYNC / PSYNC are refused now, or None (filled by the replica side).
SYNC_REFUSAL_HOOKS: list = []


class Server:
    def __init__(self, config: Config) -> None:
        self.config = config
        # Every change's effects, for the AOF (and any other consumer): see server/effects.py.
        self.effects = Effects()
        self.keyspace = Keyspace(config["databases"], self.effects)
        self.stats = Stats()
        self.clients: dict[int, Client] = {}
        self._ids = itertools.count(1)
        self.start_time = time.time()
        self.loading = False
        # Set while writes must be refused: the persistence error (MISCONF) first, else the
        # lack of good replicas (NOREPLICAS); see refresh_write_error.
        self.write_error: str | None = None
        self.disk_error: str | None = None
        self.noreplicas = False
        # The master this server follows, set by REPLICAOF (the replica side); None: a master.
        self.replica_of: tuple[str, int] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.blocking: BlockingManager = None  # type: ignore[assignment]  # set in start()
        self.pending_writes: PendingWrites = None  # type: ignore[assignment]  # set in start()
        self.servers: list[asyncio.base_events.Server] = []
        self.port = config["port"]
        self._stop_event: asyncio.Event | None = None
        self.shutdown_save: bool | None = None
        self._cron: asyncio.TimerHandle | None = None
        # (hard, soft, seconds) for normal clients, or None when unlimited (the default).
        self.output_limits: tuple[int, int, int] | None = None
        # The same for clients in Pub/Sub mode (Redis's pubsub class).
        self.pubsub_output_limits: tuple[int, int, int] | None = None
        # The same for replicas (Redis's replica class).
        self.replica_output_limits: tuple[int, int, int] | None = None
        self.pubsub = PubSub()
        self.output_limit_disconnections = 0  # INFO client_output_buffer_limit_disconnections
        self._follow_output_limits(config["client-output-buffer-limit"])
        config.on_change("client-output-buffer-limit", self._follow_output_limits)
        self.entry_cache = EntryCache(config["stream-read-cache-bytes"])
        config.on_change("stream-read-cache-bytes", self.entry_cache.set_budget)
        load_handlers()
        self.persistence = Persistence(self)
        # The replicas of this server and its replication stream (server/replication/).
        self.replication = Master(self)
        self.waits = WaitManager(self.replication)
        # The link to our master when this server is a replica (server/replication/replica.py);
        # replica_gate says it is one (its clients then carry replica_checks: dispatch's one test
        # for READONLY and MASTERDOWN).
        self.replica_gate = False
        self.master_link = MasterLink(self)
        for hook in STARTUP_HOOKS:
            hook(self)

    def _follow_output_limits(self, limits: dict[str, tuple[int, int, int]]) -> None:
        normal = limits.get("normal", (0, 0, 0))
        self.output_limits = normal if normal[0] or normal[1] else None
        pubsub = limits.get("pubsub", (0, 0, 0))
        self.pubsub_output_limits = pubsub if pubsub[0] or pubsub[1] else None
        replica = limits.get("replica", (0, 0, 0))
        self.replica_output_limits = replica if replica[0] or replica[1] else None

    # --- refused writes and roles --------------------------------------------------------

    def refresh_write_error(self) -> None:
        """The reason writes are refused now, in Redis's order of checks (processCommand)."""
        if self.disk_error is not None:
            self.write_error = self.disk_error
        elif self.noreplicas:
            self.write_error = NOREPLICAS
        else:
            self.write_error = None

    def set_noreplicas(self, value: bool) -> None:
        if value != self.noreplicas:
            self.noreplicas = value
            self.refresh_write_error()

    def is_master(self) -> bool:
        return self.replica_of is None

    def sync_refusal(self) -> str | None:
        """Why a replica of ours cannot SYNC now (the replica side: while our own master link
        is down), or None."""
        for hook in SYNC_REFUSAL_HOOKS:
            refusal = hook(self)
            if refusal is not None:
                return refusal
        return None

    @property
    def last_save(self) -> int:
        return self.persistence.last_save

    def next_client_id(self) -> int:
        return next(self._ids)

    # --- clients -------------------------------------------------------------------------

    def client_connected(self, client: Client) -> bool:
        self.stats.connections_received += 1
        if len(self.clients) >= self.config["maxclients"]:
            self.stats.rejected_connections += 1
            return False
        self.clients[client.id] = client
        return True

    def client_disconnected(self, client: Client) -> None:
        self.blocking.disconnected(client)
        if client.replica is not None:
            self.replication.disconnected(client)
        if client.subs is not None:
            self.pubsub.drop_client(client)
        if client.watched:
            self.keyspace.unwatch_all(client)
        self.clients.pop(client.id, None)

    # --- lifecycle -----------------------------------------------------------------------

    def attach_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """Create the parts that schedule work on the event loop; clients can be made after."""
        self.loop = loop
        self.blocking = BlockingManager(loop)
        self.pending_writes = PendingWrites(loop)
        self.keyspace.ready_hook = self.blocking.signal_ready

    async def start(self) -> None:
        from server.connection import Client

        loop = asyncio.get_running_loop()
        self.attach_loop(loop)
        self._stop_event = asyncio.Event()
        port = self.config["port"]
        backlog = self.config["tcp-backlog"]
        for addr in self.config["bind"]:
            host = addr.lstrip("-")  # "-::1": optional address, as in redis.conf
            try:
                srv = await loop.create_server(
                    lambda: Client(self), host=host, port=port, backlog=backlog, reuse_address=True
                )
            except OSError as exc:
                if addr.startswith("-"):
                    continue
                raise OSError(f"Could not create server TCP listening socket {host}:{port}: {exc.strerror}") from exc
            self.servers.append(srv)
            if port == 0:
                port = srv.sockets[0].getsockname()[1]
        self.port = port
        self._schedule_cron()
        self.master_link.start_cron(loop)

    def _schedule_cron(self) -> None:
        assert self.loop is not None
        self._cron = self.loop.call_later(1 / self.config["hz"], self._server_cron)

    def _server_cron(self) -> None:
        """Periodic housekeeping (Redis's serverCron): active expiry and idle-client timeouts."""
        try:
            self.keyspace.tick()
            self.persistence.cron()
            self.replication.cron()
            if self.waits.waiters:
                # The AOF's fsync moves on its own: WAITAOF's local count is checked here.
                self.waits.process()
            # A replica expires nothing itself: its master's DELs do (Redis's iAmMaster test).
            if self.config["active-expire-enabled"] and not self.loading and not self.replica_gate:
                self.keyspace.active_expire_cycle()
            timeout = self.config["timeout"]
            if timeout:
                now = time.time()
                for client in list(self.clients.values()):
                    if (client.blocked is None and now - client.last_interaction > timeout
                            and not client.is_master
                            and (client.replica is None or not client.replica.is_replica)):
                        # (Replication links have repl-timeout instead, as in Redis.)
                        client.close()
        except Exception:  # housekeeping must never stop the server
            log.exception("server cron failed")
        self._schedule_cron()

    def request_shutdown(self, save: bool | None = None) -> None:
        self.shutdown_save = save
        if self._stop_event is not None:
            self._stop_event.set()

    async def serve_until_stopped(self) -> None:
        assert self.loop is not None and self._stop_event is not None
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                self.loop.add_signal_handler(sig, self._on_signal, sig)
            except (NotImplementedError, RuntimeError):
                pass
        await self._stop_event.wait()
        await self.stop()

    def _on_signal(self, sig: int) -> None:
        name = "SIGTERM" if sig == signal.SIGTERM else "SIGINT"
        log.warning("Received %s scheduling shutdown...", name)
        if self.persistence.prepare_shutdown(False, False, False):
            self.request_shutdown(False)
        else:
            # As Redis: a final save that fails keeps the server running (SHUTDOWN FORCE exits).
            log.warning("%s received but errors trying to shut down the server, check the logs "
                        "for more information", name)

    async def stop(self) -> None:
        log.warning("User requested shutdown...")
        if self._cron is not None:
            self._cron.cancel()
        self.master_link.stop()
        for srv in self.servers:
            srv.close()
        # Replies already produced are in the transports' buffers: closing flushes them first.
        for client in list(self.clients.values()):
            client.flush()
            client.close()
        self.replication.shutdown()
        self.persistence.shutdown(self.shutdown_save)
        for srv in self.servers:
            try:
                await asyncio.wait_for(srv.wait_closed(), timeout=2)
            except (TimeoutError, Exception):
                pass
        log.warning("%s is now ready to exit, bye bye...", "Rivulet")

    @property
    def pid(self) -> int:
        return os.getpid()
