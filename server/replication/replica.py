"""The replica side of Redis replication: this server's link to its master.

`REPLICAOF host port` (or `replicaof` in the configuration) makes the server a replica. A task on
the server's event loop connects to the master and runs Redis's handshake: PING, AUTH,
REPLCONF listening-port / ip-address / capa eof capa psync2, then PSYNC with the cached
master's replication ID and offset (or `PSYNC ? -1`). On +FULLRESYNC it receives the master's
snapshot (a `$<length>` bulk, or the diskless `$EOF:<mark>` form), replaces the dataset with
it, and adopts the master's replication ID and offset; on +CONTINUE it keeps the dataset and
goes on from its offset. Then it applies the master's stream (server/replication/apply.py:
what each read brought, as one batch, the way a client's pipeline runs) on a client flagged
`is_master` (no replies, writes allowed on a read-only replica, expired keys seen as they are),
so effects, blocked clients and keyspace events follow as for any command. Complete units (a
command, a whole MULTI ... EXEC) advance the replica's offset and are fed, byte for byte, to the
replication state: its backlog and its own replicas, so that they, and the replicas of this
server once promoted, continue partially (PSYNC2).

A lost link keeps the master's ID, offset and database (the cached master) for the next PSYNC;
REPLICAOF NO ONE drops them and shifts the replication ID so that the other replicas of the old
master can continue from this one. The state machine, timeouts and log lines are Redis's
(replication.c: syncWithMaster, readSyncBulkPayload, replicationCacheMaster,
replicationResurrectCachedMaster, replicationUnsetMaster, replicationCron).
"""

from __future__ import annotations

import asyncio
import logging
import os
import ssl
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from protocol.reply import ErrorReply
from server import used_memory
from server.keyspace import EXPIRY_DELETE, EXPIRY_HIDE, Keyspace
from server.log import NOTICE
from server.rdb.file import LoadStats, RdbLoadError, load_rdb
from server.replication.apply import StreamApplier
from server.tls import TLSConfigError, client_context

if TYPE_CHECKING:
    from server.connection import Client
    from server.replication.state import ReplicationState
    from server.server import Server

log = logging.getLogger("rivulet")

# The link's states (Redis's repl_state), spelled as ROLE reports them.
NONE = "none"  # not a replica
CONNECT = "connect"  # must connect (the cron does it)
CONNECTING = "connecting"  # TCP connection under way
HANDSHAKE = "handshake"  # PING ... PSYNC
TRANSFER = "sync"  # receiving the snapshot of a full resynchronization
CONNECTED = "connected"  # applying the master's stream

# Redis's CONFIG_RUN_ID_SIZE: replication IDs and the diskless EOF mark.
RUN_ID_SIZE = 40
# How a full resynchronization's snapshot is loaded (repl-diskless-load).
_LOAD_AFTER = 0  # received whole, then the old dataset is flushed and the new one loaded
_LOAD_EMPTY = 1  # on-empty-db on an empty dataset: loading from the start of the transfer
_LOAD_SWAP = 2  # swapdb: loaded beside the old dataset, which clients cannot read meanwhile
_LOAD_ASYNC = 3  # swapdb, same history: clients go on reading the old dataset meanwhile
_READ_SIZE = 1 << 16
UNBLOCKED_ROLE_CHANGE = ErrorReply(
    "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)")


def _fsync_dir(path: str) -> None:
    """Make a rename into path's directory durable (Redis's fsyncFileDir)."""
    try:
        fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class _LinkFailed(Exception):
    """The handshake or the transfer failed; str() was logged already (or is empty)."""


@dataclass
class CachedMaster:
    """What a lost link keeps for the next PSYNC (Redis's server.cached_master)."""

    replid: str
    reploff: int
    db: int


def _command(*args: bytes | str | int) -> bytes:
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


class MasterLink:
    """The replica role of one server: where its master is, the link's state, the offsets."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.host: str | None = None
        self.port = 0
        self.state = NONE
        # The link's client while connected (server.master in Redis).
        self.master: Client | None = None
        self.cached: CachedMaster | None = None
        # The master's replication ID, and the offsets of the last byte applied and read.
        self.master_replid = ""
        self.reploff = 0
        self.read_reploff = 0
        # A master that answered PSYNC with an error (SYNC was used): it takes no ACKs.
        self.pre_psync = False
        self.down_since = 0  # when the link went down (0: never up, or promoted since)
        self.lastio = 0.0  # last time the handshake or the transfer heard from the master
        self.transfer_size = -1  # the snapshot's size; 0 for the EOF-mark form
        self.transfer_read = 0
        self.loading = False
        self.full_syncs = 0
        self._task: asyncio.Task[None] | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._cron: asyncio.TimerHandle | None = None
        # Runs the master's stream (what a read brought, as one batch).
        self.applier = StreamApplier(self)
        # Read from the master, not applied yet (a command cut short, or held by a pause).
        self.unapplied = b""
        server.write_pause.on_eased.append(self.apply_unapplied)
        config = server.config
        self.read_only: bool = config["replica-read-only"]
        self.serve_stale: bool = config["replica-serve-stale-data"]
        config.on_change("replica-read-only", self._set_read_only)
        config.on_change("replica-serve-stale-data", self._set_serve_stale)

    def _set_read_only(self, value: bool) -> None:
        self.read_only = value

    def _set_serve_stale(self, value: bool) -> None:
        self.serve_stale = value

    @property
    def repl(self) -> ReplicationState:
        state: ReplicationState = self.server.replication.state
        return state

    @property
    def refuse_stale(self) -> bool:
        """Clients get -MASTERDOWN (replica-serve-stale-data no while the link is down)."""
        return not self.serve_stale and self.state != CONNECTED

    def _update_role(self) -> None:
        server = self.server
        is_replica = self.host is not None
        server.replica_of = (self.host, self.port) if self.host is not None else None
        server.refresh_gate()
        server.keyspace.expiry = (EXPIRY_HIDE if is_replica or server.write_pause.active
                                  else EXPIRY_DELETE)
        server.config.values["replicaof"] = (self.host, self.port) if is_replica else None

    # --- start, REPLICAOF ------------------------------------------------------------------

    def start_cron(self, loop: asyncio.AbstractEventLoop) -> None:
        """Run the once-a-second cron (timeouts, reconnection, ACKs)."""
        self._cron = loop.call_later(1, self._run_cron)

    def connect_configured(self) -> None:
        """After start-up loading: follow the master the configuration names (replicaof)."""
        target = self.server.config["replicaof"]
        if target is not None and self.host is None:
            # As Redis at start-up: no history of our own to offer, a full resync follows.
            self.set_master(target[0], target[1], synthesize_cache=False)

    def restore_cached(self, replid: str, offset: int, db: int) -> None:
        """Start-up of a replica whose dump.rdb carries its master's history (Redis's
        loadDataFromDisk and replicationCacheMasterUsingMyself): it becomes our own history and
        a cached master, so the first PSYNC asks to continue it."""
        repl = self.repl
        repl.replid = replid
        repl.master_repl_offset = offset
        self.cached = CachedMaster(replid, offset, db)

    def stop(self) -> None:
        if self._cron is not None:
            self._cron.cancel()
        self._close_link()

    def set_master(self, host: str, port: int, *, synthesize_cache: bool = True) -> None:
        """REPLICAOF host port (Redis's replicationSetMaster)."""
        was_master = self.host is None
        self.host = None  # so that dropping the current link does not reconnect
        if self.master is not None:
            self._free_master()
        self._unblock_all()
        self.host, self.port = host, port
        self._update_role()
        self._cancel_handshake(False)
        if was_master and synthesize_cache:
            # Our own history, as a cached master: a new master that was our replica can
            # continue it (replicationCacheMasterUsingMyself).
            log.log(NOTICE, "Before turning into a replica, using my own master parameters to "
                    "synthesize a cached master: I may be able to synchronize with the new "
                    "master with just a partial transfer.")
            repl = self.repl
            self.cached = CachedMaster(repl.replid, repl.master_repl_offset, 0)
        self.state = CONNECT
        log.log(NOTICE, "Connecting to MASTER %s:%d", host, port)
        self._connect()

    def unset_master(self) -> None:
        """REPLICAOF NO ONE (Redis's replicationUnsetMaster): the dataset stays; the history
        followed so far becomes the secondary one, so the old master's other replicas can
        continue from us."""
        if self.host is None:
            return
        self.host = None
        if self.master is not None:
            self._free_master()
        self.cached = None
        self._cancel_handshake(False)
        self.repl.shift_replid()
        self._disconnect_replicas()
        self.state = NONE
        self.down_since = 0
        self._update_role()
        # Our own writes now make the stream (they continue the history in the backlog).
        self.server.replication.promoted()

    def _unblock_all(self) -> None:
        """Clients blocked while this server was a master are released with an error
        (Redis's disconnectAllBlockedClients)."""
        blocking = self.server.blocking
        # Clients held by a pause of writes are not: they run their command once it ends, and
        # are answered as the server's role then says.
        postponed = self.server.write_pause.postponed
        for client in list(self.server.clients.values()):
            if client.blocked is not None and client not in postponed:
                blocking.unblock(client, UNBLOCKED_ROLE_CHANGE)

    def _disconnect_replicas(self) -> None:
        """Our replicas must hear of a new history (Redis's disconnectSlaves): they reconnect,
        and continue partially where they can."""
        for link in list(self.server.replication.replicas):
            link.client.close()

    # --- connecting ------------------------------------------------------------------------

    def _connect(self) -> None:
        assert self.host is not None
        loop = self.server.loop
        assert loop is not None
        self.lastio = time.time()
        self.state = CONNECTING
        log.log(NOTICE, "MASTER <-> REPLICA sync started")
        self._task = loop.create_task(self._link(self.host, self.port))

    def _close_link(self) -> None:
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()

    def _cancel_handshake(self, reconnect: bool) -> bool:
        """Abandon a connection, handshake or transfer under way (Redis's
        cancelReplicationHandshake). Not while the snapshot loads: that finishes first."""
        if self.state not in (CONNECTING, HANDSHAKE, TRANSFER) or self.loading:
            return False
        self._close_link()
        self.state = CONNECT
        if reconnect and self.host is not None:
            log.log(NOTICE, "Reconnecting to MASTER %s:%d after failure", self.host, self.port)
            self._connect()
        return True

    def _handshake_failed(self) -> None:
        self._writer = None
        self._task = None
        if self.host is not None:
            self.state = CONNECT  # the cron tries again within a second

    async def _link(self, host: str, port: int) -> None:
        writer: asyncio.StreamWriter | None = None
        try:
            try:
                tls = self._tls_context()
                if tls is None:
                    reader, writer = await asyncio.open_connection(host, port)
                else:
                    # Redis checks the master's certificate against its CAs, not its name.
                    reader, writer = await asyncio.open_connection(
                        host, port, ssl=tls, server_hostname=None,
                        ssl_handshake_timeout=self.server.config["repl-timeout"])
            except OSError as exc:
                log.warning("Unable to connect to MASTER: %s", exc.strerror or exc)
                raise _LinkFailed() from None
            self._writer = writer
            log.log(NOTICE, "Non blocking connect for SYNC fired the event.")
            continued = await self._handshake(reader, writer)
            if not continued:
                await self._full_sync(reader, writer)
        except _LinkFailed as exc:
            if str(exc):
                log.warning("%s", exc)
            if writer is not None:
                writer.close()
            self._handshake_failed()
            return
        except (OSError, EOFError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
            log.warning("I/O error trying to sync with MASTER: %s",
                        getattr(exc, "strerror", None) or exc or "connection lost")
            if writer is not None:
                writer.close()
            self._handshake_failed()
            return
        client = self.master
        assert client is not None
        try:
            await self._stream(reader, client)
        except (OSError, EOFError):
            pass
        finally:
            writer.close()
            if self.master is client:
                self._master_lost()

    def _tls_context(self) -> ssl.SSLContext | None:
        """tls-replication yes: the link is a TLS client with the tls-client-* (or tls-*)
        certificate and the tls-ca-cert-* CAs (server/tls.py's client context)."""
        config = self.server.config
        if not config["tls-replication"]:
            return None
        context = self.server.tls.client
        if context is None:
            try:
                context = client_context(config)
            except TLSConfigError as exc:
                raise _LinkFailed(f"Unable to connect to MASTER: {exc}") from None
        return context

    # --- the handshake ---------------------------------------------------------------------

    async def _reply(self, reader: asyncio.StreamReader) -> str:
        """One reply line, without its CRLF (Redis's receiveSynchronousResponse)."""
        line = await reader.readline()
        if not line.endswith(b"\n"):
            raise _LinkFailed("Master did not respond to command during SYNC handshake")
        self.lastio = time.time()
        return line.rstrip(b"\r\n").decode("utf-8", "replace")

    async def _handshake(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """PING, AUTH, REPLCONF, PSYNC. True when the master continues our history (+CONTINUE);
        False when a snapshot follows (+FULLRESYNC, or SYNC)."""
        self.state = HANDSHAKE
        config = self.server.config
        writer.write(_command("PING"))
        reply = await self._reply(reader)
        # A PONG, or an authentication error (AUTH comes next), as Redis accepts.
        if not (reply.startswith("+") or reply.startswith("-NOAUTH") or reply.startswith("-NOPERM")
                or reply.startswith("-ERR operation not permitted")):
            raise _LinkFailed(f"Error reply to PING from master: '{reply}'")
        log.log(NOTICE, "Master replied to PING, replication can continue...")
        auth: str = config["masterauth"]
        user: str = config["masteruser"]
        if auth:
            writer.write(_command("AUTH", user, auth) if user else _command("AUTH", auth))
        # Over TLS the replica is reachable on its TLS port, which it announces (Redis 7.4).
        port = config["replica-announce-port"] or (
            self.server.tls_listener.port if config["tls-replication"]
            and self.server.tls_listener.port else self.server.port)
        writer.write(_command("REPLCONF", "listening-port", port))
        announce_ip: str = config["replica-announce-ip"]
        if announce_ip:
            writer.write(_command("REPLCONF", "ip-address", announce_ip))
        writer.write(_command("REPLCONF", "capa", "eof", "capa", "psync2"))
        if auth:
            reply = await self._reply(reader)
            if reply.startswith("-"):
                raise _LinkFailed(f"Unable to AUTH to MASTER: {reply}")
        for what, sent in (("listening-port", True), ("ip-address", bool(announce_ip)),
                           ("capa", True)):
            if not sent:
                continue
            reply = await self._reply(reader)
            if reply.startswith("-"):
                log.log(NOTICE, "(Non critical) Master does not understand REPLCONF %s: %s",
                        what, reply)
        return await self._psync(reader, writer)

    async def _psync(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Redis's slaveTryPartialResynchronization."""
        cached = self.cached
        if cached is not None:
            replid, offset = cached.replid, cached.reploff + 1
            log.log(NOTICE, "Trying a partial resynchronization (request %s:%d).", replid, offset)
        else:
            replid, offset = "?", -1
            log.log(NOTICE, "Partial resynchronization not possible (no cached master)")
        failover = self.server.failover
        if failover.in_progress:
            # We were its master: it takes over our history (FAILOVER).
            writer.write(_command("PSYNC", replid, offset, "FAILOVER"))
        else:
            writer.write(_command("PSYNC", replid, offset))
        reply = ""
        while not reply:  # the master may send newlines before it answers, to keep us alive
            reply = await self._reply(reader)
        self.pre_psync = False
        if failover.in_progress:
            accepted = reply.startswith("+FULLRESYNC") or reply.startswith("+CONTINUE")
            if not accepted:
                # Abandoning the failover makes us a master again, which ends this link.
                if reply.startswith("-NOMASTERLINK") or reply.startswith("-LOADING"):
                    log.log(NOTICE, "Master is currently unable to PSYNC but should be in the "
                            "future: %s", reply)
                else:
                    log.log(NOTICE, "Master does not support PSYNC or is in error state "
                            "(reply: %s)", reply)
                asyncio.get_running_loop().call_soon(failover.psync_answered, False)
                raise _LinkFailed()
            failover.psync_answered(True)
        if reply.startswith("+FULLRESYNC"):
            parts = reply.split(" ")
            if len(parts) >= 3 and len(parts[1]) == RUN_ID_SIZE:
                self.master_replid = parts[1]
                self.reploff = int(parts[2]) if parts[2].lstrip("-").isdigit() else -1
                log.log(NOTICE, "Full resync from master: %s:%d", self.master_replid, self.reploff)
            else:
                log.warning("Master replied with wrong +FULLRESYNC syntax.")
                self.master_replid = ""
                self.reploff = -1
            self.pre_psync = self.reploff == -1
            return False
        if reply.startswith("+CONTINUE"):
            log.log(NOTICE, "Successful partial resynchronization with master.")
            assert cached is not None
            new = reply[10:].strip()
            repl = self.repl
            if len(new) == RUN_ID_SIZE and new != cached.replid:
                # The master's history has a new ID (it was promoted): ours becomes the
                # secondary one up to here, and our replicas must hear of it.
                log.log(NOTICE, "Master replication ID changed to %s", new)
                repl.replid2 = cached.replid
                repl.second_replid_offset = repl.master_repl_offset + 1
                repl.replid = new
                cached.replid = new
                self._disconnect_replicas()
            self._resurrect(writer)
            repl.create_backlog()
            # Where we are, at once: a master whose clients wait in WAIT (a failover's first
            # writes) counts us now rather than at our next once-a-second ACK.
            self.send_ack()
            log.log(NOTICE, "MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.")
            return True
        if reply.startswith("-NOMASTERLINK") or reply.startswith("-LOADING"):
            raise _LinkFailed(
                f"Master is currently unable to PSYNC but should be in the future: {reply}")
        if reply.startswith("-ERR"):
            log.log(NOTICE, "Master does not support PSYNC or is in error state (reply: %s)", reply)
        else:
            log.warning("Unexpected reply to PSYNC from master: %s", reply)
        log.log(NOTICE, "Retrying with SYNC...")
        writer.write(b"SYNC\r\n")
        self.master_replid = ""
        self.reploff = -1
        self.pre_psync = True
        return False

    # --- full resynchronization ------------------------------------------------------------

    async def _full_sync(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Receive the snapshot, load it in place of the dataset (readSyncBulkPayload)."""
        self.state = TRANSFER
        self.transfer_size = -1
        self.transfer_read = 0
        self.lastio = time.time()
        while True:
            line = await reader.readline()
            if not line.endswith(b"\n"):
                raise _LinkFailed("I/O error reading bulk count from MASTER: connection lost")
            self.lastio = time.time()
            head = line.rstrip(b"\r\n")
            if head:
                break  # an empty line is the master keeping the link alive
        text = head.decode("utf-8", "replace")
        if text.startswith("-"):
            raise _LinkFailed(f"MASTER aborted replication with an error: {text[1:]}")
        if not text.startswith("$"):
            raise _LinkFailed(f"Bad protocol from MASTER, the first byte is not '$' (we received "
                              f"'{text}'), are you sure the host and port are right?")
        mark = head[5:5 + RUN_ID_SIZE] if head[1:5] == b"EOF:" and len(head) >= 5 + RUN_ID_SIZE else b""
        mode = self._load_mode()
        where = "disk" if mode == _LOAD_AFTER else "parser"
        if mark:
            size = 0
            log.log(NOTICE, "MASTER <-> REPLICA sync: receiving streamed RDB from master with "
                    "EOF to %s", where)
        else:
            size = int(text[1:]) if text[1:].isdigit() else -1
            if size < 0:
                raise _LinkFailed(f"Bad protocol from MASTER: invalid bulk length '{text}'")
            log.log(NOTICE, "MASTER <-> REPLICA sync: receiving %d bytes from master to %s",
                    size, where)
        self.transfer_size = size
        if mode == _LOAD_AFTER:
            path = await self._receive_to_file(reader, mark, size)
            await self._load_file(path)
        else:
            await self._load_diskless(reader, mark, size, mode)
        self._attach(writer, self.reploff, self._stream_db)
        repl = self.repl
        repl.adopt(self.master_replid, self.reploff)
        self.full_syncs += 1
        log.log(NOTICE, "MASTER <-> REPLICA sync: Finished with success")
        # The diskless form needs it (the master waits for it to put us online); after a file
        # it tells a master whose clients wait in WAIT where we are without waiting a second.
        self.send_ack()
        try:
            self.server.persistence.restart_aof_after_sync()
        except OSError as exc:
            log.warning("Failed enabling the AOF after successful master synchronization: %s",
                        exc.strerror or exc)

    async def _read_exactly(self, reader: asyncio.StreamReader, size: int) -> bytes:
        parts: list[bytes] = []
        left = size
        while left:
            chunk = await reader.read(min(left, 1 << 20))
            if not chunk:
                raise _LinkFailed("I/O error trying to sync with MASTER: connection lost")
            parts.append(chunk)
            left -= len(chunk)
            self.transfer_read += len(chunk)
            self.lastio = time.time()
        return b"".join(parts)

    async def _read_until_mark(self, reader: asyncio.StreamReader, mark: bytes) -> bytes:
        buf = bytearray()
        while True:
            chunk = await reader.read(1 << 20)
            if not chunk:
                raise _LinkFailed("I/O error trying to sync with MASTER: connection lost")
            buf += chunk
            self.transfer_read += len(chunk)
            self.lastio = time.time()
            if len(buf) >= RUN_ID_SIZE and buf[-RUN_ID_SIZE:] == mark:
                del buf[-RUN_ID_SIZE:]
                return bytes(buf)

    async def _receive_to_file(self, reader: asyncio.StreamReader, mark: bytes, size: int) -> str:
        """repl-diskless-load disabled: the snapshot goes to a temporary file as it arrives,
        which then replaces dump.rdb, as in Redis (readSyncBulkPayload's disk branch): the
        replica holds the master's snapshot on disk, and a restart loads it."""
        config = self.server.config
        tmp = ""
        fd = -1
        for attempt in range(5):
            tmp = os.path.join(config["dir"], "temp-%d.%d.rdb" % (int(time.time()), os.getpid()))
            try:
                fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644)
                break
            except FileExistsError:
                if attempt < 4:
                    await asyncio.sleep(1)
            except OSError as exc:
                raise _LinkFailed("Opening the temp file needed for MASTER <-> REPLICA "
                                  f"synchronization: {exc.strerror}") from None
        if fd < 0:
            raise _LinkFailed("Opening the temp file needed for MASTER <-> REPLICA "
                              "synchronization: File exists")
        done = False
        try:
            written = 0
            tail = b""  # the last RUN_ID_SIZE bytes received, to find the EOF mark
            while True:
                want = _READ_SIZE if mark else min(size - written, _READ_SIZE)
                if not mark and want == 0:
                    break
                chunk = await reader.read(want)
                if not chunk:
                    raise _LinkFailed("I/O error trying to sync with MASTER: connection lost")
                self.transfer_read += len(chunk)
                self.lastio = time.time()
                try:
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(fd, view):]
                except OSError as exc:
                    raise _LinkFailed("Write error or short write writing to the DB dump file "
                                      "needed for MASTER <-> REPLICA synchronization: "
                                      f"{exc.strerror}") from None
                written += len(chunk)
                if mark:
                    tail = (tail + chunk)[-RUN_ID_SIZE:]
                    if tail == mark:
                        try:
                            os.ftruncate(fd, written - RUN_ID_SIZE)
                        except OSError as exc:
                            raise _LinkFailed("Error truncating the RDB file received from the "
                                              f"master for SYNC: {exc.strerror}") from None
                        break
            log.log(NOTICE, "MASTER <-> REPLICA sync: Flushing old data")
            dbfile = os.path.join(config["dir"], config["dbfilename"])
            try:
                os.fsync(fd)
            except OSError as exc:
                raise _LinkFailed("Failed trying to sync the temp DB to disk in MASTER <-> "
                                  f"REPLICA synchronization: {exc.strerror}") from None
            try:
                os.rename(tmp, dbfile)
            except OSError as exc:
                raise _LinkFailed(f"Failed trying to rename the temp DB into {config['dbfilename']} "
                                  f"in MASTER <-> REPLICA synchronization: {exc.strerror}") from None
            _fsync_dir(dbfile)
            done = True
            return dbfile
        finally:
            os.close(fd)
            if not done:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

    async def _load_file(self, path: str) -> None:
        """Load the snapshot received into dump.rdb; with rdb-del-sync-files and no persistence
        configured, the file is removed afterwards (Redis's allPersistenceDisabled)."""
        try:
            with open(path, "rb") as fh:
                payload = fh.read()
            await self._load(payload, from_disk=True)
        finally:
            config = self.server.config
            if config["rdb-del-sync-files"] and not config["save"] and not config["appendonly"]:
                log.log(NOTICE, "Removing the RDB file obtained from the master. This replica "
                        "has persistence disabled")
                try:
                    os.unlink(path)
                except OSError:
                    pass

    def _load_mode(self) -> int:
        """How this snapshot is loaded (Redis's useDisklessLoad, repl-diskless-load)."""
        setting = self.server.config["repl-diskless-load"]
        if setting == "swapdb":
            # Clients go on reading the old dataset only when it is an earlier state of the same
            # history (Redis's async loading: our replication ID is the master's).
            return _LOAD_ASYNC if self.repl.replid == self.master_replid else _LOAD_SWAP
        if setting == "on-empty-db" and not any(db.data for db in self.server.keyspace.dbs):
            return _LOAD_EMPTY
        return _LOAD_AFTER

    async def _receive(self, reader: asyncio.StreamReader, mark: bytes, size: int) -> bytes:
        if mark:
            return await self._read_until_mark(reader, mark)
        return await self._read_exactly(reader, size)

    def _attach_to_new_master(self) -> None:
        """A new history: no cached master, our replicas resynchronize, our backlog is void
        (replicationAttachToNewMaster)."""
        self.cached = None
        self._disconnect_replicas()
        self.repl.free_backlog()

    def _begin_loading(self, blocking: bool, size: int) -> None:
        """Clients get -LOADING (blocking), or go on with the old dataset (async loading);
        size is the snapshot's, 0 when the master did not announce it."""
        server = self.server
        server.loading_progress.start(size)
        if blocking:
            server.loading = True
            server.effects.suspended = True
        else:
            server.async_loading = True

    def _end_loading(self) -> None:
        server = self.server
        self.loading = False
        server.loading = False
        server.async_loading = False
        server.effects.suspended = False

    async def _load(self, payload: bytes, from_disk: bool = False) -> None:
        """Flush, then load the master's snapshot; clients get -LOADING meanwhile."""
        server = self.server
        server.persistence.stop_children()
        self._attach_to_new_master()
        if not from_disk:
            log.log(NOTICE, "MASTER <-> REPLICA sync: Flushing old data")
        keyspace = server.keyspace
        for db in keyspace.dbs:
            db.flush()
        log.log(NOTICE, "MASTER <-> REPLICA sync: Loading DB in memory")
        stats = LoadStats()
        self.loading = True
        self._begin_loading(True, len(payload))
        try:
            for _ in load_rdb(payload, keyspace, server.config, stats, keep_expired=True):
                server.loading_progress.advance(stats.loaded_bytes, stats.info.aux)
                await asyncio.sleep(0)
        except RdbLoadError as exc:
            for db in keyspace.dbs:
                db.flush()
            if from_disk:
                # Redis exits here; the replica instead drops the link and syncs again.
                log.warning("Internal error in RDB reading offset %d: %s", exc.offset, exc.message)
                raise _LinkFailed("Failed trying to load the MASTER synchronization DB from "
                                  "disk, check server logs.") from None
            raise _LinkFailed("Failed trying to load the MASTER synchronization DB from socket: "
                              f"{exc.message} (offset {exc.offset})") from None
        finally:
            self._end_loading()
            used_memory.track(keyspace)  # the loaded keys, in the memory figure
        self._loaded(stats)

    async def _load_diskless(self, reader: asyncio.StreamReader, mark: bytes, size: int,
                             mode: int) -> None:
        """repl-diskless-load on-empty-db (into the empty dataset) or swapdb (into a new one,
        which replaces the old only once complete): loading starts with the transfer, and a
        transfer or load that fails leaves the dataset as it was (Redis's diskless branch of
        readSyncBulkPayload)."""
        server = self.server
        keyspace = server.keyspace
        swap = mode != _LOAD_EMPTY
        server.persistence.stop_children()
        if not swap:
            self._attach_to_new_master()
            log.log(NOTICE, "MASTER <-> REPLICA sync: Flushing old data")
            for db in keyspace.dbs:
                db.flush()
        log.log(NOTICE, "MASTER <-> REPLICA sync: Loading DB in memory")
        target = self._temp_keyspace() if swap else keyspace
        stats = LoadStats()
        self._begin_loading(mode != _LOAD_ASYNC, 0 if mark else size)
        loaded = False
        try:
            try:
                payload = await self._receive(reader, mark, size)
                self.loading = True
                for _ in load_rdb(payload, target, server.config, stats, keep_expired=True):
                    server.loading_progress.advance(stats.loaded_bytes, stats.info.aux)
                    await asyncio.sleep(0)
                loaded = True
            except RdbLoadError as exc:
                log.warning("Failed trying to load the MASTER synchronization DB from socket: "
                            "%s (offset %d)", exc.message, exc.offset)
            except _LinkFailed as exc:
                log.warning("%s", exc)
            if not loaded:
                log.warning("Failed trying to load the MASTER synchronization DB from socket, "
                            "check server logs.")
                if swap:
                    log.log(NOTICE, "MASTER <-> REPLICA sync: Discarding temporary DB in "
                            "background")
                else:
                    for db in keyspace.dbs:
                        db.flush()
                raise _LinkFailed()
            if swap:
                self._attach_to_new_master()
                log.log(NOTICE, "MASTER <-> REPLICA sync: Swapping active DB with loaded DB")
                self._adopt(target)
                log.log(NOTICE, "MASTER <-> REPLICA sync: Discarding old DB in background")
        finally:
            self._end_loading()
            used_memory.track(keyspace)
        self._loaded(stats)

    def _temp_keyspace(self) -> Keyspace:
        """Where swapdb loads: empty databases with the live keyspace's access-data settings."""
        live = self.server.keyspace
        temp = Keyspace(len(live.dbs))
        temp.lru_clock, temp.lfu = live.lru_clock, live.lfu
        temp.lfu_log_factor, temp.lfu_decay_time = live.lfu_log_factor, live.lfu_decay_time
        return temp

    def _adopt(self, temp: Keyspace) -> None:
        """The loaded databases replace the live ones' contents (swapMainDbWithTempDb): keys
        of either dataset that clients watch fail their EXEC, blocked clients re-check."""
        keyspace = self.server.keyspace
        for db, new in zip(keyspace.dbs, temp.dbs, strict=True):
            db.flush()
            db.data, db.expires, db.access = new.data, new.expires, new.access
            db.encodings, db.sizes, db.changed = new.encodings, new.sizes, new.changed
            db.deferred = new.deferred
            for key in list(db.data):
                if (db.index, key) in keyspace.watchers:
                    keyspace.touch_watched(db.index, key)
        keyspace.dataset_bytes += temp.dataset_bytes
        blocking = self.server.blocking
        for index, key in list(blocking.waiters):
            if key in keyspace.dbs[index].data:
                keyspace.signal_ready(index, key)

    def _loaded(self, stats: LoadStats) -> None:
        keyspace = self.server.keyspace
        self._stream_db = 0
        for name, value in stats.info.aux:
            if name == b"repl-stream-db" and value.isdigit() and int(value) < len(keyspace.dbs):
                self._stream_db = int(value)
        log.log(NOTICE, "Done loading RDB, keys loaded: %d, keys expired: %d.",
                stats.keys_loaded, stats.keys_expired)

    _stream_db = 0

    # --- the master's client ---------------------------------------------------------------

    def _attach(self, writer: asyncio.StreamWriter, offset: int, db: int) -> None:
        """The link becomes a client of ours that runs the master's stream (Redis's
        replicationCreateMasterClient)."""
        from server.connection import Client, _format_addr

        server = self.server
        client = Client(server)
        client.is_master = True
        client.replica_checks = False
        client.trust()
        client.use_transport(writer.transport)
        client.addr = _format_addr(writer.get_extra_info("peername"))
        client.laddr = _format_addr(writer.get_extra_info("sockname"))
        sock = writer.get_extra_info("socket")
        client.fd = sock.fileno() if sock is not None else -1
        if 0 <= db < len(server.keyspace.dbs):
            client.select(db)
        server.clients[client.id] = client
        self.master = client
        self._writer = writer
        self.reploff = self.read_reploff = offset
        self.applier.reset()
        self.state = CONNECTED
        self.down_since = 0

    def _resurrect(self, writer: asyncio.StreamWriter) -> None:
        """+CONTINUE: the cached master comes back on the new connection."""
        cached = self.cached
        assert cached is not None
        self.cached = None
        self.master_replid = cached.replid
        self._attach(writer, cached.reploff, cached.db)

    async def _stream(self, reader: asyncio.StreamReader, client: Client) -> None:
        """Apply the master's commands as they arrive, until the link ends."""
        self.unapplied = b""
        while self.master is client and not client.closed:
            data = await reader.read(_READ_SIZE)
            if not data:
                return
            client.last_interaction = time.time()
            self.read_reploff += len(data)
            buf = self.unapplied
            self.unapplied = buf + data if buf else data
            self.apply_unapplied()

    def apply_unapplied(self) -> None:
        """Apply what was read of the stream and not applied yet: after each read, and when a
        pause of commands that stopped it ends."""
        client = self.master
        buf = self.unapplied
        if client is None or client.closed or not buf:
            return
        used = self.applier.apply(client, buf)
        self.unapplied = buf[used:]

    def account(self, data: bytes) -> None:
        """Complete units of the stream were applied: they move our offset and go on to our
        backlog and replicas, unchanged (Redis's replicationFeedStreamFromMasterStream)."""
        self.reploff += len(data)
        self.server.replication.feed(data)

    def send_ack(self) -> None:
        """REPLCONF ACK <offset>: where we are, for the master's WAIT and its replica lag."""
        writer = self._writer
        if self.master is not None and writer is not None and not writer.is_closing():
            writer.write(_command("REPLCONF", "ACK", self.reploff))

    def _free_master(self) -> None:
        """Drop the link to the master, keeping what a PSYNC needs."""
        self._close_link()
        self._master_lost()

    def _master_lost(self) -> None:
        """The master's link ended: cache it for PSYNC, reconnect at once (Redis's
        replicationCacheMaster and replicationHandleMasterDisconnection)."""
        client = self.master
        if client is None:
            return
        log.log(NOTICE, "Connection with master lost.")
        log.log(NOTICE, "Caching the disconnected master state.")
        self.master = None
        client.closed = True
        client.multi = None
        self.applier.reset()
        self.server.client_disconnected(client)
        self.read_reploff = self.reploff
        self.cached = CachedMaster(self.master_replid, self.reploff, client.db.index)
        self._writer = None
        self._task = None
        self.state = CONNECT
        self.down_since = int(time.time())
        if self.host is not None:
            log.log(NOTICE, "Reconnecting to MASTER %s:%d", self.host, self.port)
            self._connect()

    # --- once a second ---------------------------------------------------------------------

    def _run_cron(self) -> None:
        try:
            self.cron()
        except Exception:  # the cron must never stop
            log.exception("replication cron failed")
        loop = self.server.loop
        if loop is not None:
            self._cron = loop.call_later(1, self._run_cron)

    def cron(self) -> None:
        """Timeouts, reconnection and ACKs (the replica's part of Redis's replicationCron)."""
        if self.host is None:
            return
        now = time.time()
        timeout = self.server.config["repl-timeout"]
        if self.state in (CONNECTING, HANDSHAKE) and now - self.lastio > timeout:
            log.warning("Timeout connecting to the MASTER...")
            self._cancel_handshake(True)
        if self.state == TRANSFER and not self.loading and now - self.lastio > timeout:
            log.warning("Timeout receiving bulk data from MASTER... If the problem persists try "
                        "to set the 'repl-timeout' parameter in redis.conf to a larger value.")
            self._cancel_handshake(True)
        master = self.master
        if self.state == CONNECTED and master is not None and now - master.last_interaction > timeout:
            log.warning("MASTER timeout: no data nor PING received...")
            self._free_master()
        if self.state == CONNECT:
            log.log(NOTICE, "Connecting to MASTER %s:%d", self.host, self.port)
            self._connect()
        if self.master is not None and not self.pre_psync:
            self.send_ack()

    # --- what INFO and ROLE show -----------------------------------------------------------

    def offsets(self) -> tuple[int, int]:
        """(slave_repl_offset, slave_read_repl_offset) as INFO shows them."""
        if self.master is not None:
            return self.reploff, self.read_reploff
        if self.cached is not None:
            return self.cached.reploff, self.cached.reploff
        return 1, 1

    def info_fields(self) -> list[tuple[str, object]]:
        """The replica's lines of INFO replication, after role:slave (genRedisInfoString)."""
        now = time.time()
        config = self.server.config
        master = self.master
        applied, read = self.offsets()
        pairs: list[tuple[str, object]] = [
            ("master_host", self.host),
            ("master_port", self.port),
            ("master_link_status", "up" if self.state == CONNECTED else "down"),
            ("master_last_io_seconds_ago",
             int(now - master.last_interaction) if master is not None else -1),
            ("master_sync_in_progress", int(self.state == TRANSFER)),
            ("slave_read_repl_offset", read),
            ("slave_repl_offset", applied),
        ]
        if self.state == TRANSFER:
            size = self.transfer_size
            done = self.transfer_read
            pairs += [
                ("master_sync_total_bytes", size),
                ("master_sync_read_bytes", done),
                ("master_sync_left_bytes", size - done),
                ("master_sync_perc", "%.2f" % (done / size * 100 if size > 0 else 0)),
                ("master_sync_last_io_seconds_ago", int(now - self.lastio)),
            ]
        if self.state != CONNECTED:
            pairs.append(("master_link_down_since_seconds",
                          int(now - self.down_since) if self.down_since else -1))
        pairs += [
            ("slave_priority", config["replica-priority"]),
            ("slave_read_only", int(config["replica-read-only"])),
            ("replica_announced", int(config["replica-announced"])),
        ]
        return pairs

    def role_reply(self) -> list[Any]:
        """ROLE for a replica: slave, host, port, state, offset."""
        assert self.host is not None
        return [b"slave", self.host.encode(), self.port, self.state.encode(),
                self.reploff if self.master is not None else -1]
