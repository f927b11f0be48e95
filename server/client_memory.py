"""What a connection holds in memory, in the terms of Redis's CLIENT LIST fields (qbuf, argv-mem,
multi-mem, omem, tot-mem): shared by CLIENT LIST / CLIENT INFO, INFO's mem_clients_normal and
client eviction (`maxmemory-clients`), so that all three count the same bytes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from server.connection import Client

# Redis's reply buffer starts at this usable size (PROTO_REPLY_CHUNK_BYTES is shrunk to it when
# idle); we have no such buffer, so a client is counted with the size an idle Redis client shows.
REPLY_BUFFER_SIZE = 1024
# sizeof(robj*): what Redis counts per queued argument besides its bytes (multi-mem).
POINTER = 8


class ClientMemory(NamedTuple):
    qbuf: int
    argv_mem: int
    multi_mem: int
    omem: int
    total: int


def client_memory(client: Client, current_argv: list[bytes] | None = None) -> ClientMemory:
    """The connection's buffers now; current_argv is the command it is running, if any."""
    transport = client.transport
    # omem: the replies not yet written, in the client's list and in the transport's buffer.
    omem = transport.get_write_buffer_size() if transport is not None else 0
    omem += sum(len(part) for part in client.out)
    # qbuf: bytes received and not yet run (held while blocked, the parser's unparsed tail, the
    # parsed commands waiting behind a block). Held exactly, with no spare room: qbuf-free=0.
    qbuf = client.query_buffer_size()
    # Inside EXEC the client is still in MULTI and EXEC is its current command, as in Redis.
    queue = client.multi if client.multi is not None else client.exec_queue
    if client.exec_argv is not None:
        current_argv = client.exec_argv
    argv_mem = sum(len(a) for a in current_argv) if current_argv else 0
    # Redis's mstate.argv_len_sums: each queued command's argument bytes and its argv array.
    multi_mem = sum(len(a) + POINTER for a in queue.args) if queue is not None else 0
    total = REPLY_BUFFER_SIZE + qbuf + argv_mem + multi_mem + omem
    return ClientMemory(qbuf, argv_mem, multi_mem, omem, total)


def memory_by_kind(clients: Iterable[Client]) -> tuple[int, int]:
    """INFO's figures of connections, as Redis's getMemoryOverheadData has them: what the
    normal, Pub/Sub and master connections hold (mem_clients_normal), and the most output any
    of our replicas has still to receive (Redis keeps replicas' output in one buffer shared
    with the backlog, whose size is its longest replica's lag)."""
    normal = replica_output = 0
    for client in clients:
        if client.closed:
            continue
        link = client.replica
        if link is not None and link.is_replica:
            # (with what accumulates for it while its snapshot is being made)
            output = client_memory(client).omem + len(link.pending)
            replica_output = max(replica_output, output)
        else:
            normal += client_memory(client).total
    return normal, replica_output
