"""The server: listeners, connected clients, keyspace, blocking, lifecycle and shutdown."""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import signal
import ssl
import time
from typing import TYPE_CHECKING

from server import used_memory
from server.acl.registry import Acl, AclStartupError
from server.blocking import BlockingManager
from server.client_eviction import ClientEviction
from server.command_table import STARTUP_HOOKS, load_handlers
from server.config import Config
from server.effects import Effects
from server.entry_cache import EntryCache
from server.evict import Evictor
from server.flow import OutputLimits
from server.keyspace import Keyspace
from server.listeners import Listener, ListenError, wait_closed
from server.loading import LoadingProgress
from server.pending_writes import PendingWrites
from server.persistence.manager import Persistence
from server.protected_mode import PROTECTED_MODE_ERROR, is_loopback
from server.pubsub import PubSub
from server.replication.failover import Failover
from server.replication.master import NOREPLICAS, Master
from server.replication.replica import MasterLink
from server.replication.wait import WaitManager
from server.shutdown import Shutdown
from server.stats import Stats
from server.tls import TLSConfigError, TLSContexts, tls_wanted
from server.tls_accept import ListenerContext
from server.write_pause import WritePause

if TYPE_CHECKING:
    from server.connection import Client

log = logging.getLogger("rivulet")

# (server) -> why SYNC / PSYNC are refused now, or None (filled by the replica side).
SYNC_REFUSAL_HOOKS: list = []
MAXCLIENTS_ERROR = b"-ERR max number of clients reached\r\n"


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
        # A replica loading its master's snapshot beside the dataset clients still read
        # (repl-diskless-load swapdb): INFO's async_loading.
        self.async_loading = False
        # How far the load in progress has come (INFO's loading_* fields).
        self.loading_progress = LoadingProgress()
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
        # The plain TCP listener (port) and the TLS one (tls-port); port 0: none of that kind.
        self.tls = TLSContexts()
        self.tcp = Listener("tcp", self._new_client)
        self.tls_listener = Listener("tls", self._new_client, ListenerContext(self._tls_context))
        self._stop_event: asyncio.Event | None = None
        self.shutdown_save: bool | None = None
        self._cron: asyncio.TimerHandle | None = None
        # client-output-buffer-limit per class (normal, pubsub, replica).
        self.output_limits = OutputLimits()
        self.pubsub = PubSub()
        self.output_limit_disconnections = 0  # INFO client_output_buffer_limit_disconnections
        self.query_limit_disconnections = 0  # INFO client_query_buffer_limit_disconnections
        # Clients seen over their soft output limit: the cron closes those that stay over it
        # past its seconds although they produce no more output (Redis's clientsCron check).
        self.soft_limited: set[Client] = set()
        # maxmemory-clients (server/client_eviction.py).
        self.client_eviction = ClientEviction(self)
        follow_eviction = lambda _value: self.client_eviction.configure(  # noqa: E731
            config["maxmemory-clients"], config["maxmemory"])
        config.on_change("maxmemory-clients", follow_eviction)
        config.on_change("maxmemory", follow_eviction)
        follow_eviction(None)
        self.output_limits.follow(config["client-output-buffer-limit"])
        config.on_change("client-output-buffer-limit", self.output_limits.follow)
        self.entry_cache = EntryCache(config["stream-read-cache-bytes"])
        config.on_change("stream-read-cache-bytes", self.entry_cache.set_budget)
        load_handlers()
        # Users and permissions (server/acl/): before any client exists.
        self.acl = Acl(self)
        self.persistence = Persistence(self)
        # The replicas of this server and its replication stream (server/replication/).
        self.replication = Master(self)
        self.waits = WaitManager(self.replication)
        # The link to our master when this server is a replica (server/replication/replica.py);
        # replica_gate says it is one (its clients then carry replica_checks: dispatch's one test
        # for READONLY and MASTERDOWN).
        self.replica_gate = False
        # Writes held back during FAILOVER and SHUTDOWN's wait for replicas (also a reason for
        # replica_gate).
        self.write_pause = WritePause(self)
        self.write_pause.on_eased.append(self.replication.getack_after_pause)
        self.master_link = MasterLink(self)
        # maxmemory and the eviction policies (server/evict.py).
        self.evictor = Evictor(self)
        self.failover = Failover(self)
        self.shutdown = Shutdown(self)
        for hook in STARTUP_HOOKS:
            hook(self)

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

    def refresh_gate(self) -> None:
        """Whether clients' commands go through dispatch's gate: on a replica, and while
        writes are paused. A replica's link to its master never does."""
        gate = self.replica_of is not None or self.write_pause.active
        self.replica_gate = gate
        for client in self.clients.values():
            client.replica_checks = gate and not client.is_master

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

    def _new_client(self) -> asyncio.BaseProtocol:
        from server.connection import Client

        return Client(self)

    def _tls_context(self) -> ssl.SSLContext:
        return self.tls.server_context(self.config["tls-auth-clients"])

    @property
    def port(self) -> int:
        """The plain TCP port, or the TLS one on a TLS-only server (INFO's tcp_port)."""
        return self.tcp.port or self.tls_listener.port

    @property
    def last_save(self) -> int:
        return self.persistence.last_save

    def next_client_id(self) -> int:
        return next(self._ids)

    # --- clients -------------------------------------------------------------------------

    def client_connected(self, client: Client, peer: object) -> bytes | None:
        """Admit a new connection, or return the error it gets before being closed (counted as
        a rejected connection, not a received one, as in Redis)."""
        if len(self.clients) >= self.config["maxclients"]:
            self.stats.rejected_connections += 1
            return MAXCLIENTS_ERROR
        if self.config["protected-mode"] and self.acl.default.nopass and not is_loopback(peer):
            self.stats.rejected_connections += 1
            return PROTECTED_MODE_ERROR
        self.stats.connections_received += 1
        self.clients[client.id] = client
        if self.client_eviction.limit:
            self.client_eviction.measure(client)
        return None

    def client_disconnected(self, client: Client) -> None:
        self.blocking.disconnected(client)
        if client.replica is not None:
            self.replication.disconnected(client)
        if client.subs is not None:
            self.pubsub.drop_client(client)
        if client.watched:
            self.keyspace.unwatch_all(client)
        self.clients.pop(client.id, None)
        self.soft_limited.discard(client)
        if self.client_eviction.limit:
            self.client_eviction.forget(client)

    # --- lifecycle -----------------------------------------------------------------------

    def attach_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """Create the parts that schedule work on the event loop; clients can be made after."""
        self.loop = loop
        self.pending_writes = PendingWrites(loop)
        self.blocking = BlockingManager(loop, self.pending_writes)
        self.keyspace.ready_hook = self.blocking.signal_ready
        self.keyspace.deleted_hook = self.blocking.signal_deleted

    async def start(self) -> None:
        """Open the listeners; raises ListenError (already logged) when the server cannot run."""
        loop = asyncio.get_running_loop()
        self.attach_loop(loop)
        self._stop_event = asyncio.Event()
        config = self.config
        try:
            self.acl.startup(config.user_lines)
        except AclStartupError as exc:
            log.warning("%s", exc)
            raise ListenError("ACL users could not be loaded") from None
        if tls_wanted(config):
            try:
                self.tls.configure(config)
            except TLSConfigError:
                log.warning("Failed to configure TLS. Check logs for more info.")
                raise ListenError("TLS configuration failed") from None
        for listener, port in ((self.tcp, config["port"]), (self.tls_listener, config["tls-port"])):
            try:
                await listener.start(loop, config["bind"], port, config["tcp-backlog"])
            except ListenError:
                log.warning("Failed listening on port %d (%s), aborting.", port, listener.name)
                raise
        if not self.tcp.active and not self.tls_listener.active:
            log.warning("Configured to not listen anywhere, exiting.")
            raise ListenError("no listener")
        self._schedule_cron()
        self.master_link.start_cron(loop)

    @property
    def listeners(self) -> list[Listener]:
        """The active listeners, plain first (INFO's listener lines)."""
        return [lst for lst in (self.tcp, self.tls_listener) if lst.active]

    def _schedule_cron(self) -> None:
        assert self.loop is not None
        self._cron = self.loop.call_later(1 / self.config["hz"], self._server_cron)

    def _server_cron(self) -> None:
        """Periodic housekeeping (Redis's serverCron): active expiry and idle-client timeouts."""
        try:
            self.keyspace.tick()
            # With a limit, the large values written since the last tick (server/used_memory.py).
            if self.keyspace.maxmemory:
                used_memory.refresh(self.keyspace, large_too=True)
            self.persistence.cron()
            self.replication.cron()
            if self.shutdown.initiated:
                self.shutdown.cron()
            if self.waits.waiters:
                # The AOF's fsync moves on its own: WAITAOF's local count is checked here.
                self.waits.process()
            # A replica expires nothing itself: its master's DELs do (Redis's iAmMaster test).
            if self.config["active-expire-enabled"] and not self.loading and not self.replica_gate:
                self.keyspace.active_expire_cycle()
            if self.soft_limited:
                self._check_soft_limits()
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

    def _check_soft_limits(self) -> None:
        for client in list(self.soft_limited):
            flow = client.flow
            limits = client.output_limits()
            if client.closed or flow is None or flow.soft_since is None or limits is None:
                self.soft_limited.discard(client)
                continue
            size = flow.pending() + sum(len(part) for part in client.out)
            if flow.breaks(size, limits):
                self.soft_limited.discard(client)
                client.close_for_output_limit()

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
        if self.shutdown.initiated:
            return  # already waiting for the replicas
        if self.shutdown.request(None, False, False, False, False) is not None:
            # As Redis: a final save that fails keeps the server running (SHUTDOWN FORCE exits).
            log.warning("%s received but errors trying to shut down the server, check the logs "
                        "for more information", name)

    async def stop(self) -> None:
        log.warning("User requested shutdown...")
        if self._cron is not None:
            self._cron.cancel()
        self.master_link.stop()
        closed = self.tcp.close() + self.tls_listener.close()
        # Replies already produced are in the transports' buffers: closing flushes them first.
        self.replication.flush_stream()
        for client in list(self.clients.values()):
            client.flush()
            client.close()
        self.replication.shutdown()
        self.persistence.shutdown(self.shutdown_save)
        await wait_closed(closed)
        log.warning("%s is now ready to exit, bye bye...", "Rivulet")

    @property
    def pid(self) -> int:
        return os.getpid()
