"""One replica connected to this server: what its handshake said and where its sync stands
(Redis's client fields slave_*, repl_ack_*, replstate)."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from server.connection import Client

# Redis's replstate values (server.h SLAVE_STATE_*), with the names INFO prints.
HANDSHAKE = 0  # REPLCONF seen, no SYNC / PSYNC yet: not a replica
WAIT_BGSAVE_START = 1  # needs a snapshot, none started for it yet
WAIT_BGSAVE_END = 2  # its snapshot is being produced; the stream accumulates in `pending`
SEND_BULK = 3  # a disk snapshot is being sent to it
ONLINE = 4

STATE_NAMES = {WAIT_BGSAVE_START: "wait_bgsave", WAIT_BGSAVE_END: "wait_bgsave",
               SEND_BULK: "send_bulk", ONLINE: "online"}


class ReplicaLink:
    __slots__ = ("client", "state", "listening_port", "announced_ip", "capa_eof", "capa_psync2",
                 "rdb_only", "rdb_without_data", "pre_psync", "ack_off", "aof_off", "ack_time",
                 "initial_offset", "pending", "stream_on_ack", "bulk_fd", "bulk_size", "bulk_pos")

    def __init__(self, client: Client) -> None:
        self.client = client
        self.state = HANDSHAKE
        self.listening_port = 0
        self.announced_ip: str | None = None
        self.capa_eof = False
        self.capa_psync2 = False
        # REPLCONF rdb-only 1 (redis-cli --rdb): the snapshot only, then the link closes.
        self.rdb_only = False
        # REPLCONF rdb-filter-only: a snapshot without the keys.
        self.rdb_without_data = False
        # It asked with the old SYNC: no acks to expect.
        self.pre_psync = False
        # The offset it acknowledged processing (REPLCONF ACK), and written to its AOF (FACK).
        self.ack_off = 0
        self.aof_off = 0
        self.ack_time = time.time()
        # The master offset its snapshot corresponds to (what +FULLRESYNC announced).
        self.initial_offset = 0
        # The stream produced while its snapshot is made, or until its first ACK after a
        # diskless load: it leaves after the snapshot, exactly once.
        self.pending = bytearray()
        # Diskless: the stream starts once it acknowledges having loaded the payload.
        self.stream_on_ack = False
        # A disk snapshot being sent (SEND_BULK), read from its file (an open descriptor, -1
        # when none) as fast as its connection takes it.
        self.bulk_fd = -1
        self.bulk_size = 0
        self.bulk_pos = 0

    def close_bulk(self) -> None:
        if self.bulk_fd >= 0:
            os.close(self.bulk_fd)
            self.bulk_fd = -1

    @property
    def is_replica(self) -> bool:
        return self.state != HANDSHAKE

    @property
    def streaming(self) -> bool:
        """Whether the stream goes straight to its connection."""
        return self.state == ONLINE and not self.stream_on_ack

    def send(self, data: bytes) -> None:
        """Queue bytes for its connection (written in the loop's write pass)."""
        client = self.client
        if client.closed:
            return
        client.out.append(data)
        client.pending_writes.add(client)
        client.output_added(len(data))

    def write_blocked(self) -> bool:
        """Its connection holds more unsent output than the transport's high-water mark."""
        flow = self.client.flow
        return flow is not None and flow.paused

    def ip(self) -> str:
        if self.announced_ip:
            return self.announced_ip
        addr = self.client.addr
        host = addr.rsplit(":", 1)[0]
        return host[1:-1] if host.startswith("[") else host

    def lag(self, now: float) -> int:
        return int(now - self.ack_time) if self.state == ONLINE else 0
