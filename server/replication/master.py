"""The master side of replication: the replicas connected to us, the stream they receive, their
full and partial resynchronizations, and the once-a-second duties (Redis's replication.c).

The stream (server/replication/stream.py) is one more consumer of effects (server/effects.py),
registered only once a backlog exists (the first replica asks to sync), as Redis creates its
backlog lazily: until then the write path pays nothing for replication. It feeds the backlog
after every command and the live replicas once per event-loop iteration; a replica whose
snapshot is being produced keeps what arrives meanwhile and gets it after the snapshot, exactly
once.

A server that follows a master (the replica side) does not produce a stream of its own: its
writes come from its master, whose stream it passes on unchanged with `feed` (to its backlog
and its own replicas, Redis's replicationFeedStreamFromMasterStream); `disconnect_replicas`
makes its replicas sync again when its history changes (Redis's disconnectSlaves).
"""

from __future__ import annotations

import logging
import os
import secrets
import time
from typing import TYPE_CHECKING

from server.log import NOTICE
from server.replication import save_info
from server.replication.links import (
    ONLINE,
    SEND_BULK,
    WAIT_BGSAVE_END,
    WAIT_BGSAVE_START,
    ReplicaLink,
)
from server.replication.snapshot import SnapshotChild
from server.replication.state import ReplicationState
from server.replication.stream import OutgoingStream

if TYPE_CHECKING:
    from server.connection import Client
    from server.server import Server

log = logging.getLogger("rivulet")

NOREPLICAS = "NOREPLICAS Not enough good replicas to write."
_PING = b"*1\r\n$4\r\nPING\r\n"
_GETACK = b"*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n"
_READ_CHUNK = 1 << 16
# A disk snapshot leaves in pieces of this size, as the replica's connection drains.
_BULK_CHUNK = 1 << 20


class Master:
    def __init__(self, server: Server) -> None:
        self.server = server
        config = server.config
        self.state = ReplicationState(config["repl-backlog-size"])
        config.on_change("repl-backlog-size", self.state.resize_backlog)
        for name in ("min-replicas-to-write", "min-replicas-max-lag"):
            config.on_change(name, lambda _value: self.refresh_good_replicas())
        self.replicas: list[ReplicaLink] = []
        # The effects consumer: what every write feeds to the backlog and the replicas.
        self.stream = OutgoingStream(server, self.state, self.replicas)
        self.registered = False
        self.child: SnapshotChild | None = None
        # The replicas the running child's snapshot is for.
        self.child_replicas: list[ReplicaLink] = []
        self.eof_mark = b""
        # The diskless relay waits while a replica's connection has too much unsent.
        self.relay_paused = False
        # When the first replica started waiting for a diskless sync (repl-diskless-sync-delay).
        self.waiting_since = 0.0
        self.no_replicas_since = time.time()
        self.good_replicas = 0
        self.last_ping = time.time()
        self.last_second = 0.0
        # WAIT asked replicas for an ACK: REPLCONF GETACK goes out before the loop sleeps.
        self.getack_scheduled = False
        self.sync_full = 0
        self.sync_partial_ok = 0
        self.sync_partial_err = 0
        # Set by WAIT's module and FAILOVER's: called when acks (or the local fsync) move.
        self.on_acks: list = []
        # No PINGs into the stream while a FAILOVER with a deadline waits for a replica to
        # reach our offset (Redis's manual_failover_in_progress).
        self.hold_pings = False
        # min-replicas-to-write from the configuration refuses writes from the start.
        self.refresh_good_replicas()
        # dump.rdb carries the replication history (server/replication/save_info.py).
        server.persistence.rdb.aux = self._save_aux

    def _save_aux(self) -> list[tuple[bytes, bytes]]:
        info = save_info.current(self.server)
        return info.aux_fields() if info is not None else []

    def restore_history(self, replid: str, offset: int) -> None:
        """Start-up of a master whose dump.rdb carries a history (Redis's loadDataFromDisk):
        that history becomes the secondary ID, valid up to its last offset, and a backlog starts
        there, so replicas that followed it continue with a partial resynchronization."""
        state = self.state
        state.replid2 = replid
        state.second_replid_offset = offset + 1
        state.master_repl_offset += offset
        state.free_backlog()
        state.create_backlog()
        if not self.registered:
            self.server.effects.register(self.stream)
            self.registered = True
        self.server.effects.repl_offset = state.master_repl_offset
        self.no_replicas_since = time.time()

    # --- the stream ---------------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Bytes into the stream: the backlog now, every replica that takes it live in the
        write pass (server/replication/stream.py)."""
        self.stream.feed(data)

    def flush_stream(self) -> None:
        """Queue what the live replicas have still to get now, before anything changes which
        replicas those are or writes to them out of the stream's order."""
        self.stream.flush()

    def _ensure_backlog(self) -> None:
        state = self.state
        if state.backlog is None:
            state.start_master_history()
            log.log(NOTICE, "Replication backlog created, my new replication IDs are '%s' and '%s'",
                    state.replid, state.replid2)
        if not self.registered:
            self.server.effects.register(self.stream)
            self.registered = True

    def promoted(self) -> None:
        """A replica became a master (REPLICAOF NO ONE): the next command states its database,
        and our writes feed the backlog it kept, so replicas can continue from it."""
        self.stream.selected_db = -1
        if self.state.backlog is not None and not self.registered:
            self.server.effects.register(self.stream)
            self.registered = True
        self.no_replicas_since = time.time()

    def free_backlog(self) -> None:
        """No replica and no backlog: the write path stops feeding a stream (a new history
        starts when a replica comes, see ReplicationState.start_master_history)."""
        if self.registered:
            self.server.effects.unregister(self.stream)
            self.registered = False
        self.state.change_replid()
        self.state.clear_replid2()
        self.state.free_backlog()
        self.stream.selected_db = -1

    # --- SYNC / PSYNC -------------------------------------------------------------------------

    def link_of(self, client: Client) -> ReplicaLink:
        link = client.replica
        if link is None:
            link = client.replica = ReplicaLink(client)
        return link

    def sync(self, client: Client, replid: str | None, offset: int) -> None:
        """SYNC (replid None) or PSYNC replid offset from a client that passed the checks."""
        link = self.link_of(client)
        self.flush_stream()
        log.log(NOTICE, "Replica %s asks for synchronization", self.replica_name(link))
        if replid is not None:
            if self._try_partial(link, replid, offset):
                self.sync_partial_ok += 1
                return
            if not replid.startswith("?"):
                self.sync_partial_err += 1
        else:
            link.pre_psync = True
        self.sync_full += 1
        link.state = WAIT_BGSAVE_START
        link.ack_time = time.time()
        self.replicas.append(link)
        self._ensure_backlog()
        # A disk snapshot already being made for other replicas serves this one too, from the
        # same offset, with a copy of what they accumulated since (Redis's syncCommand).
        child = self.child
        if child is not None and not child.socket:
            for other in self.child_replicas:
                if other.state == WAIT_BGSAVE_END and other.rdb_only == link.rdb_only \
                        and other.rdb_without_data == link.rdb_without_data:
                    link.pending = bytearray(other.pending)
                    self._setup_full_resync(link, other.initial_offset)
                    self.child_replicas.append(link)
                    log.log(NOTICE, "Waiting for end of BGSAVE for SYNC")
                    return
        if child is None:
            if not self._socket_target():
                self.start_snapshot()
            elif not self.waiting_since:
                self.waiting_since = time.monotonic()
            self.maybe_start_delayed()
        else:
            log.log(NOTICE, "Can't attach the replica to the current BGSAVE. Waiting for next BGSAVE for SYNC")

    def _try_partial(self, link: ReplicaLink, replid: str, offset: int) -> bool:
        state = self.state
        refusal = state.partial_resync_refusal(replid, offset)
        if refusal is not None:
            log.log(NOTICE, "%s", refusal)
            return False
        link.state = ONLINE
        link.ack_time = time.time()
        link.stream_on_ack = False
        self.replicas.append(link)
        reply = b"+CONTINUE %s\r\n" % state.replid.encode() if link.capa_psync2 else b"+CONTINUE\r\n"
        missing = state.backlog_from(offset)
        link.send(reply + missing)
        log.log(NOTICE, "Partial resynchronization request from %s accepted. Sending %d bytes of "
                "backlog starting from offset %d.", self.replica_name(link), len(missing), offset)
        self.refresh_good_replicas()
        return True

    def _setup_full_resync(self, link: ReplicaLink, offset: int) -> None:
        link.initial_offset = offset
        link.state = WAIT_BGSAVE_END
        if not link.pre_psync:
            link.send(b"+FULLRESYNC %s %d\r\n" % (self.state.replid.encode(), offset))

    def _socket_target(self, group: list[ReplicaLink] | None = None) -> bool:
        """Whether the snapshot for these replicas (by default, every one waiting) goes to
        their sockets: diskless sync on and every one of them able to read the EOF framing, or
        a snapshot without data (which only EOF-capable replicas may ask for)."""
        config = self.server.config
        if group is None:
            group = [link for link in self.replicas if link.state == WAIT_BGSAVE_START]
        return bool(config["repl-diskless-sync"]) and all(link.capa_eof for link in group) \
            or any(link.rdb_without_data for link in group)

    def maybe_start_delayed(self) -> None:
        """Start a diskless snapshot once repl-diskless-sync-delay passed since the first
        replica began waiting, or enough replicas wait (repl-diskless-sync-max-replicas)."""
        if self.child is not None or not self.waiting_since:
            return
        waiting = sum(1 for link in self.replicas if link.state == WAIT_BGSAVE_START)
        if not waiting:
            self.waiting_since = 0.0
            return
        config = self.server.config
        most = config["repl-diskless-sync-max-replicas"]
        if (time.monotonic() - self.waiting_since >= config["repl-diskless-sync-delay"]
                or (most and waiting >= most)):
            self.start_snapshot()

    def start_snapshot(self) -> None:
        """Fork the child producing the snapshot for every replica waiting to start one."""
        self.waiting_since = 0.0
        waiting = [link for link in self.replicas if link.state == WAIT_BGSAVE_START]
        if not waiting:
            return
        # One snapshot serves them all: those asking for different contents wait for the next.
        without_data = waiting[0].rdb_without_data
        waiting = [link for link in waiting if link.rdb_without_data == without_data]
        socket = self._socket_target(waiting)
        server = self.server
        try:
            self.child = SnapshotChild(server.keyspace, server.config, socket, not without_data,
                                       self._save_aux())
        except OSError as exc:
            log.warning("Can't save in background: fork: %s", exc.strerror)
            for link in waiting:
                link.send(b"-ERR BGSAVE failed, replication can't continue\r\n")
                link.client.close_after_reply = True
            return
        offset = self.state.master_repl_offset
        self.child_replicas = waiting
        for link in waiting:
            link.pending = bytearray()
            self._setup_full_resync(link, offset)
        # The snapshot holds no SELECT state: the next command in the stream states its own.
        self.stream.selected_db = -1
        if socket:
            self.eof_mark = secrets.token_hex(20).encode()
            for link in waiting:
                link.send(b"$EOF:" + self.eof_mark + b"\r\n")
            assert server.loop is not None
            server.loop.add_reader(self.child.read_fd, self._relay)

    def _relay(self) -> None:
        """The diskless child wrote more of the payload: pass it on to its replicas."""
        child = self.child
        if child is None or child.read_fd < 0:
            return
        while True:
            try:
                chunk = os.read(child.read_fd, _READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                break
            for link in self.child_replicas:
                link.send(chunk)
                link.client.flush()
            if any(link.write_blocked() for link in self.child_replicas):
                # The child waits on the full pipe meanwhile (Redis's rdb_pipe throttling).
                assert self.server.loop is not None
                self.server.loop.remove_reader(child.read_fd)
                self.relay_paused = True
                return
        assert self.server.loop is not None
        self.server.loop.remove_reader(child.read_fd)
        ok = child.poll(block=True)
        child.close()
        self._snapshot_done(bool(ok))

    def poll_child(self) -> None:
        """A disk snapshot's child ended: send the file to its replicas."""
        child = self.child
        if child is None or child.socket:
            return
        result = child.poll()
        if result is None:
            return
        self._snapshot_done(result)

    def _snapshot_done(self, ok: bool) -> None:
        child = self.child
        assert child is not None
        replicas = [link for link in self.child_replicas if not link.client.closed]
        self.child = None
        self.child_replicas = []
        # A disk snapshot is sent from its file, each replica at its own pace: one descriptor
        # each, open before the file is unlinked, so the snapshot is never held in memory.
        fds: list[int] = []
        size = 0
        if ok and not child.socket:
            try:
                size = os.path.getsize(child.path)
                for _link in replicas:
                    fds.append(os.open(child.path, os.O_RDONLY))
            except OSError as exc:
                log.warning("SYNC failed. Can't open/stat DB after BGSAVE: %s", exc.strerror)
                for fd in fds:
                    os.close(fd)
                ok = False
        child.close()
        if not ok:
            log.warning("Background transfer error" if child.socket else "Background saving error")
            for link in replicas:
                link.client.close()
        else:
            log.log(NOTICE, "Background RDB transfer terminated with success" if child.socket
                    else "Background saving terminated with success")
            for link in replicas:
                if child.socket:
                    link.send(self.eof_mark)
                    # Its pending stream waits for its first ACK: a replica reading the payload
                    # up to the mark must not find stream bytes after it in the same read.
                    link.stream_on_ack = True
                    self._online(link)
                else:
                    link.state = SEND_BULK
                    link.bulk_fd = fds.pop()
                    link.bulk_size = size
                    link.bulk_pos = 0
                    link.send(b"$%d\r\n" % size)
                    self._pump(link)
        # Replicas that arrived during this snapshot (and could not join it) get the next.
        if any(link.state == WAIT_BGSAVE_START for link in self.replicas):
            if self._socket_target():
                self.waiting_since = self.waiting_since or time.monotonic()
                self.maybe_start_delayed()
            else:
                self.start_snapshot()

    def _pump(self, link: ReplicaLink) -> None:
        """Send the next pieces of a disk snapshot while the replica's connection takes them;
        once all is sent, the replica is online (Redis's sendBulkToSlave)."""
        client = link.client
        while link.bulk_fd >= 0 and not client.closed:
            if link.write_blocked():
                return  # writable() continues when the connection drains
            pos = link.bulk_pos
            if pos < link.bulk_size:
                try:
                    chunk = os.pread(link.bulk_fd, min(_BULK_CHUNK, link.bulk_size - pos), pos)
                except OSError as exc:
                    chunk = b""
                    log.warning("Read error sending DB to replica: %s", exc.strerror)
                if not chunk:
                    link.close_bulk()
                    client.close()
                    return
                link.send(chunk)
                client.flush()
                link.bulk_pos = pos + len(chunk)
            if link.bulk_pos >= link.bulk_size:
                link.close_bulk()
                link.stream_on_ack = False
                self._online(link)

    def writable(self, client: Client) -> None:
        """A replica's connection drained below its low-water mark: go on sending."""
        link = client.replica
        if link is None:
            return
        if link.state == SEND_BULK:
            self._pump(link)
        child = self.child
        if (self.relay_paused and child is not None and child.read_fd >= 0
                and not any(other.write_blocked() for other in self.child_replicas)):
            self.relay_paused = False
            assert self.server.loop is not None
            self.server.loop.add_reader(child.read_fd, self._relay)

    def _online(self, link: ReplicaLink) -> None:
        self.flush_stream()
        link.state = ONLINE
        link.ack_time = time.time()
        if link.rdb_only:
            log.log(NOTICE, "Synchronization with replica %s succeeded (rdb-only)",
                    self.replica_name(link))
            link.client.close_after_reply = True
            link.client.pending_writes.add(link.client)
            return
        if not link.stream_on_ack:
            self._start_stream(link)
        log.log(NOTICE, "Synchronization with replica %s succeeded", self.replica_name(link))
        self.refresh_good_replicas()

    def _start_stream(self, link: ReplicaLink) -> None:
        self.flush_stream()
        link.stream_on_ack = False
        if link.pending:
            link.send(bytes(link.pending))
            link.pending = bytearray()

    # --- what replicas tell us ----------------------------------------------------------------

    def ack(self, link: ReplicaLink, offset: int, aof_offset: int | None) -> None:
        if offset > link.ack_off:
            link.ack_off = offset
        if aof_offset is not None and aof_offset > link.aof_off:
            link.aof_off = aof_offset
        link.ack_time = time.time()
        if link.state == ONLINE and link.stream_on_ack:
            self._start_stream(link)
        for callback in self.on_acks:
            callback()

    def disconnected(self, client: Client) -> None:
        link = client.replica
        if link is None or link not in self.replicas:
            return
        self.replicas.remove(link)
        link.close_bulk()
        if link.state == ONLINE:
            log.log(NOTICE, "Connection with replica %s lost.", self.replica_name(link))
        if link in self.child_replicas:
            self.child_replicas.remove(link)
            child = self.child
            if child is not None and child.socket and not self.child_replicas:
                # Nobody left to send the payload to.
                assert self.server.loop is not None
                self.server.loop.remove_reader(child.read_fd)
                child.kill()
                self.child = None
                self.relay_paused = False
            elif self.relay_paused and child is not None:
                self.writable(client)
        if not self.replicas:
            self.no_replicas_since = time.time()
        self.refresh_good_replicas()
        for callback in self.on_acks:
            callback()

    def disconnect_replicas(self) -> None:
        """Close every replica's link: they sync again (with a full or partial resync)."""
        for link in list(self.replicas):
            link.client.close()

    def request_acks(self) -> None:
        """WAIT needs fresh acks: REPLCONF GETACK * goes into the stream before the loop sleeps
        (once, however many clients asked)."""
        if self.getack_scheduled or not self.replicas:
            return
        self.getack_scheduled = True
        assert self.server.loop is not None
        self.server.loop.call_soon(self._send_getack)

    def send_getack_now(self) -> None:
        """REPLCONF GETACK * at once, unless commands are paused (a shutdown, before it pauses
        them: Redis's sendGetackToReplicas)."""
        if not self.server.write_pause.level and self.state.backlog is not None \
                and self.replicas:
            self.feed(_GETACK)

    def getack_after_pause(self) -> None:
        """A pause of commands ended or eased: the GETACK it held back goes out."""
        if self.getack_scheduled:
            self._send_getack()

    def _send_getack(self) -> None:
        if self.server.write_pause.level:
            # Nothing may move the offset while commands are paused (Redis's
            # PAUSE_ACTION_REPLICA): it goes out once the pause ends.
            return
        self.getack_scheduled = False
        if self.state.backlog is not None and self.replicas:
            self.feed(_GETACK)

    # --- counts -------------------------------------------------------------------------------

    def count_acks(self, offset: int, aof: bool = False) -> int:
        """Online replicas that acknowledged offset (WAIT), or wrote it to their AOF (WAITAOF)."""
        return sum(1 for link in self.replicas if link.state == ONLINE
                   and (link.aof_off if aof else link.ack_off) >= offset)

    def refresh_good_replicas(self) -> None:
        """Online replicas whose last ack is at most min-replicas-max-lag seconds old, and
        whether writes are refused for lack of them (Redis's refreshGoodSlavesCount)."""
        config = self.server.config
        max_lag = config["min-replicas-max-lag"]
        wanted = config["min-replicas-to-write"]
        now = time.time()
        self.good_replicas = sum(1 for link in self.replicas if link.state == ONLINE
                                 and now - link.ack_time <= max_lag)
        self.server.set_noreplicas(bool(wanted and max_lag and self.good_replicas < wanted
                                        and self.server.is_master()))

    # --- once a second ------------------------------------------------------------------------

    def cron(self) -> None:
        self.poll_child()
        self.maybe_start_delayed()
        now = time.time()
        if now - self.last_second < 1:
            return
        self.last_second = now
        config = self.server.config
        period = config["repl-ping-replica-period"]
        if self.replicas and now - self.last_ping >= period:
            self.last_ping = now
            # No database: a PING is not preceded by a SELECT. A replica's replicas get its
            # master's PINGs instead.
            if self.server.is_master() and not self.hold_pings:
                self.feed(_PING)
        elif not self.replicas:
            self.last_ping = now
        # Replicas waiting for a snapshot get a newline now and then, so they do not time out.
        child = self.child
        for link in self.replicas:
            if link.state == WAIT_BGSAVE_START or (link.state == WAIT_BGSAVE_END and
                                                   (child is None or not child.socket)):
                link.send(b"\n")
        timeout = config["repl-timeout"]
        for link in list(self.replicas):
            if link.state == ONLINE and not link.pre_psync and now - link.ack_time > timeout:
                log.warning("Disconnecting timedout replica (streaming sync): %s",
                            self.replica_name(link))
                link.client.close()
        ttl = config["repl-backlog-ttl"]
        if (not self.replicas and ttl and self.state.backlog is not None
                and self.server.is_master() and now - self.no_replicas_since > ttl):
            self.free_backlog()
            log.log(NOTICE, "Replication backlog freed after %d seconds without connected replicas.", ttl)
        self.refresh_good_replicas()

    def shutdown(self) -> None:
        child = self.child
        if child is not None:
            if child.socket and self.server.loop is not None and child.read_fd >= 0:
                self.server.loop.remove_reader(child.read_fd)
            child.kill()
            self.child = None

    # --- naming -------------------------------------------------------------------------------

    def replica_name(self, link: ReplicaLink) -> str:
        """ip:port as Redis's replicationGetSlaveName names a replica in its log."""
        if link.listening_port:
            return "%s:%d" % (link.ip(), link.listening_port)
        return "client id #%d" % link.client.id

    def online_count(self) -> int:
        return len(self.replicas)

    def info_replicas(self) -> list[tuple[str, object]]:
        now = time.time()
        pairs: list[tuple[str, object]] = []
        for i, link in enumerate(self.replicas):
            state = {WAIT_BGSAVE_START: "wait_bgsave", WAIT_BGSAVE_END: "wait_bgsave",
                     SEND_BULK: "send_bulk", ONLINE: "online"}[link.state]
            pairs.append(("slave%d" % i, "ip=%s,port=%d,state=%s,offset=%d,lag=%d"
                          % (link.ip(), link.listening_port, state, link.ack_off, link.lag(now))))
        return pairs
