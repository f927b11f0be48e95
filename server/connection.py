"""One asyncio.Protocol per client connection.

Every complete command in a read is executed in order and all their replies leave in one write,
made once per loop iteration for all clients together (server/pending_writes.py).
A command that blocks parks the client: commands already read behind it wait (as in Redis, a
blocked client's query buffer is not processed) and run when it is released. What it sends
meanwhile is kept as received, counted as its query buffer (CLIENT LIST qbuf) against
`client-query-buffer-limit`, and parsed once it is released.

The replies of a pipeline are measured as they grow (server/flow.py): a client past its class's
output buffer limit is closed before its next command runs, and a client of a class without a
limit waits, its remaining commands unrun, while its output is over the high-water mark.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from protocol.encoder import write_reply
from protocol.parser import ProtocolError, QueryBufferLimitExceeded, RequestParser, wire_size
from protocol.reply import ErrorReply, PushReplies
from server.blocking import internal_error
from server.dispatch import BLOCKED, ERROR_REPLY, execute, execute_run, spelled
from server.flow import OutputFlow, OutputLimits, watch_threshold
from server.replication.links import ONLINE

if TYPE_CHECKING:
    from server.acl.users import User
    from server.blocking import BlockedState
    from server.client_eviction import ClientEviction
    from server.command_table import Command
    from server.effects import Effects
    from server.keyspace import Keyspace
    from server.pending_writes import PendingWrites
    from server.persistence.manager import Persistence
    from server.pubsub import Subscriptions
    from server.queued_calls import QueuedCalls
    from server.replication.links import ReplicaLink
    from server.server import Server
    from server.stats import Stats

log = logging.getLogger("rivulet")

REPLY_OFF: Final = 1
REPLY_SKIP: Final = 2
REPLY_SKIP_NEXT: Final = 4

# A read at least this large lets the other clients read before its client's next one, and
# its replies leave (see _process_input).
LARGE_READ: Final = 64 * 1024

_wall_clock: Final = time.time  # a C static when compiled, not two lookups per read


class Client(asyncio.Protocol):
    def __init__(self, server: Server) -> None:
        self.server = server
        # The server's parts every command touches, held here: compiled code reaches a compiled
        # class's fields directly, while each step through the (pure-Python) Server is a lookup.
        self.keyspace: Keyspace = server.keyspace
        self.stats: Stats = server.stats
        self.persistence: Persistence = server.persistence
        self.effects: Effects = server.effects
        self.pending_writes: PendingWrites = server.pending_writes
        self.eviction: ClientEviction = server.client_eviction
        self.limits: OutputLimits = server.output_limits
        self.id = server.next_client_id()
        self.db = server.keyspace.dbs[0]
        self.resp3 = False
        self.name = b""
        self.lib_name = b""
        self.lib_ver = b""
        # The ACL user (server/acl/users.py) and Redis's c->authenticated (auth_flag); whether a
        # command may run without AUTH (`authenticated`) also depends on the default user, and
        # whether dispatch checks permissions (`acl_limited`) on the user's rules: both are
        # kept up to date by server/acl/registry.py, so that dispatch tests one field each.
        acl = server.acl
        self.acl_user: User = acl.default
        self.acl_limited = not acl.default.unrestricted
        self.auth_flag = acl.default_open
        self.authenticated = self.auth_flag
        self.no_evict = False
        self.no_touch = False
        # CLIENT REPLY: REPLY_OFF, REPLY_SKIP (this command's reply is dropped), REPLY_SKIP_NEXT
        self.reply_flags = 0
        # MULTI state: the queued calls, or None outside a transaction.
        self.multi: QueuedCalls | None = None
        self.multi_error = False
        self.in_exec = False
        # While EXEC runs: the transaction's queue and EXEC's argv. The client is still in MULTI
        # for CLIENT LIST / ACL LOG (flags=x, multi=N), as in Redis, while `multi` is None.
        self.exec_queue: QueuedCalls | None = None
        self.exec_argv: list[bytes] | None = None
        # (db, key) -> whether the key was already logically expired when WATCHed
        self.watched: dict[tuple[int, bytes], bool] = {}
        self.watch_dirty = False
        self.blocked: BlockedState | None = None
        # Set once it said REPLCONF / SYNC / PSYNC: its side of replication (a replica of ours).
        self.replica: ReplicaLink | None = None
        # The replication offset after its last write (what WAIT waits for).
        self.woff = 0
        # Pub/Sub subscriptions (server/pubsub.py); None while the client has none.
        self.subs: Subscriptions | None = None
        # Set while a parked command runs again (Redis's CLIENT_REPROCESSING_COMMAND).
        self.reprocessing = False
        self.deferred: deque[list[bytes]] = deque()
        self.deferred_error: ProtocolError | None = None
        # Reads that arrived while blocked or held, unparsed (Redis's query buffer), and their size.
        self.held_input: deque[bytes] = deque()
        self.held_bytes = 0
        self.is_loader = False
        # The link from this server's master (server/replication/replica.py): its commands
        # apply on a read-only replica, and get no replies.
        self.is_master = False
        # Dispatch makes a replica's checks (READONLY, MASTERDOWN) for this client: set on every
        # client while the server is a replica, except on its master's link. A field of the
        # client, so that a master pays one field test per command for them.
        self.replica_checks: bool = server.replica_gate
        self.close_after_reply = False
        self.closed = False
        self.out: list[bytes] = []
        self.flush_pending = False  # queued in pending_writes
        self.created = time.time()
        self.last_interaction = self.created
        self.last_command: Command | None = None
        # The name of the last command run_commands looked up, as spelled, and what it names.
        self._spelling = b""
        self._spelled: Command | None = None
        self.addr = "?:0"
        self.laddr = "?:0"
        self.fd = -1
        # asyncio's or uvloop's transport: uvloop's do not subclass asyncio.Transport, and compiled
        # modules check declared classes at run time.
        self.transport: Any = None
        # transport.write, bound once: called for every reply the client gets.
        self._send: Callable[[bytes], None] = _not_connected
        self.flow: OutputFlow | None = None
        cfg = server.config
        self.parser = RequestParser(
            max_bulk_len=cfg["proto-max-bulk-len"],
            query_buffer_limit=cfg["client-query-buffer-limit"],
        )
        self.parser.authenticated = self.authenticated

    # --- asyncio.Protocol --------------------------------------------------------------------

    def connection_made(self, transport: Any) -> None:  # see self.transport
        self.use_transport(transport)
        self.flow = OutputFlow(transport)
        peer = transport.get_extra_info("peername")
        sock = transport.get_extra_info("sockname")
        self.addr = _format_addr(peer)
        self.laddr = _format_addr(sock)
        socket = transport.get_extra_info("socket")
        self.fd = socket.fileno() if socket is not None else -1
        refusal = self.server.client_connected(self, peer)
        if refusal is not None:
            transport.write(refusal)
            transport.close()
            self.closed = True

    def use_transport(self, transport: Any) -> None:
        """Send the client's output on transport (also the link from our master, made outside
        connection_made)."""
        self.transport = transport
        self._send = transport.write

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.server.client_disconnected(self)

    def pause_writing(self) -> None:
        assert self.flow is not None
        # A class with a limit keeps being read, as in Redis, and is closed at the limit.
        self.flow.pause(self.output_limits() is None)

    def resume_writing(self) -> None:
        flow = self.flow
        assert flow is not None
        flow.resume()
        if self.replica is not None:
            self.server.replication.writable(self)
        if flow.held and not self.closed:
            self._release_held()

    def data_received(self, data: bytes) -> None:
        if self.closed or self.close_after_reply:
            return
        self.last_interaction = _wall_clock()
        self.stats.net_input_bytes += len(data)
        eviction = self.eviction
        if eviction.limit:
            eviction.touch(self)
        flow = self.flow
        if self.blocked is not None or (flow is not None and flow.held):
            self._hold_input(data)
            return
        self._process_input(data)

    def _process_input(self, data: bytes) -> None:
        parser = self.parser
        try:
            commands, error = parser.feed(data)
        except QueryBufferLimitExceeded as exc:
            # Redis would have run the commands completed before the limit in earlier reads.
            if exc.commands and self.blocked is None:
                self.run_commands(exc.commands)
                self.flush()
            parser.received.clear()
            self._query_buffer_exceeded()
            return
        if self.blocked is not None:
            parser.received.clear()
            self.deferred.extend(commands)
            if error is not None:
                self.deferred_error = error
            return
        self.run_commands(commands)
        # The read and its commands are not kept past their run.
        parser.received.clear()
        if self.closed:
            return
        flow = self.flow
        if error is not None:
            if self.deferred:
                # Behind commands that wait (a block, or output over the high-water mark).
                self.deferred_error = error
            else:
                self._protocol_error(error)
        elif len(data) >= LARGE_READ and self.out and flow is not None:
            # A read this large that ran commands is part of a long pipeline, and libuv would
            # go on reading the rest of it (up to 32 reads of one socket in one loop iteration)
            # before the other clients' reads and the write pass. Reading stops until the next
            # iteration, as Redis reads once per client per iteration: the clients' reads take
            # turns, and each read's replies leave at once, so that the client parses them
            # while the server works on the next part. (Held to the end, the +QUEUED replies of
            # a 100,000-call transaction reached the client in one burst, parsed only after the
            # server had finished.) A large argument still arriving is read on.
            flow.pause_input()
            self.pending_writes.loop.call_soon(self._read_on)
            self.pending_writes.add(self)
        elif not self._parked_silent():
            self.pending_writes.add(self)

    def _read_on(self) -> None:
        flow = self.flow
        if flow is not None and not flow.held and not flow.paused:
            flow.resume_input()

    def _parked_silent(self) -> bool:
        """Parked by its command with nothing to send (a lone BLPOP): the write pass would have
        nothing to do for it, and queueing it costs the loop a callback."""
        return self.blocked is not None and not self.out and self.subs is None

    def _hold_input(self, data: bytes) -> None:
        """Keep a read of a blocked or held client as received, as Redis keeps reading into the
        query buffer of a blocked client, and close it past `client-query-buffer-limit`."""
        self.held_input.append(data)
        self.held_bytes += len(data)
        parser = self.parser
        size = self.held_bytes + parser.buffered
        if size > parser.query_buffer_limit or (size > 1024 * 1024 and not parser.authenticated):
            self._query_buffer_exceeded()

    def _query_buffer_exceeded(self) -> None:
        log.warning("Closing client that reached max query buffer length: id=%d addr=%s",
                    self.id, self.addr)
        self.server.query_limit_disconnections += 1
        self._discard()
        self.close()

    def _discard(self) -> None:
        """Forget what the client sent and was to receive: it is being closed."""
        self.held_input.clear()
        self.held_bytes = 0
        self.deferred.clear()
        self.deferred_error = None
        self.out.clear()

    def query_buffer_size(self) -> int:
        """Bytes received and not yet run: Redis's qbuf (CLIENT LIST)."""
        return self.held_bytes + self.parser.buffered + wire_size(list(self.deferred))

    def _drain(self) -> None:
        """Run what waited while the client was blocked or held, until it waits again."""
        flow = self.flow
        while not self.closed and not self.close_after_reply and self.blocked is None and (
                flow is None or not flow.held):
            if self.deferred:
                pending = list(self.deferred)
                self.deferred.clear()
                self.run_commands(pending)
            elif self.deferred_error is not None:
                error = self.deferred_error
                self.deferred_error = None
                self._protocol_error(error)
                return
            elif self.held_input:
                data = self.held_input.popleft()
                self.held_bytes -= len(data)
                self._process_input(data)
            else:
                return

    def _release_held(self) -> None:
        """The output of a held client drained: run its waiting commands."""
        flow = self.flow
        assert flow is not None
        flow.release()
        self._drain()
        if not self.closed:
            self.pending_writes.add(self)

    # --- command execution -------------------------------------------------------------------

    def run_commands(self, commands: list[list[bytes]]) -> None:
        """Execute commands in order, collecting replies; stop at a block or a QUIT, or when the
        replies reach an output buffer limit or the high-water mark (see server/flow.py).

        Where several calls of a command with a run handler follow each other (a pipeline of
        XADDs), the handler runs them together: see command_table.run_of.
        """
        out = self.out
        flow = self.flow
        limits = self.output_limits()
        # The pending output is summed as replies are appended, one length per new part: the
        # cost of following the limit, a few additions per command.
        watch = watch_threshold(limits)
        size = 0
        mark = 0
        if flow is not None:
            size = flow.pending()
            for part in out:
                size += len(part)
            mark = len(out)
        n = len(commands)
        i = 0
        while i < n:
            argv = commands[i]
            i += 1
            # Looked up once here, for the run handler and for execute's checks; a client
            # mostly sends the command it sent last, which one comparison finds.
            name = argv[0]
            if name == self._spelling:
                cmd = self._spelled
            else:
                cmd = spelled(name)
                self._spelling = name
                self._spelled = cmd
            if (cmd is not None and cmd.run_handler is not None and i < n
                    and not self.reply_flags):
                done = execute_run(self, cmd, commands, i - 1)
                if done:
                    i += done - 1
                    end = len(out)
                    while mark < end:
                        size += len(out[mark])
                        mark += 1
                    if size >= watch and self._output_full(size, limits):
                        if not self.closed:
                            self.deferred.extend(commands[i:])
                        break
                    continue
            reply = execute(self, argv, cmd)
            if reply is BLOCKED:
                self.deferred.extend(commands[i:])
                break
            if type(reply) is ERROR_REPLY:
                self.stats.count_error(reply.message)
            if self.reply_flags:
                self._reply_with_flags(reply)
            else:
                write_reply(out, reply, self.resp3)
            if self.close_after_reply:
                break
            end = len(out)
            while mark < end:
                size += len(out[mark])
                mark += 1
            if size >= watch and self._output_full(size, limits):
                if not self.closed:
                    self.deferred.extend(commands[i:])
                break

    def output_limits(self) -> tuple[int, int, int] | None:
        """The (hard, soft, seconds) output buffer limit of the client's class, None: none."""
        subs = self.subs
        if subs is not None and subs.active():
            return self.limits.pubsub
        replica = self.replica
        if replica is not None:
            # A replica's snapshot is not output to limit; the stream after it is.
            if replica.state != ONLINE:
                return None
            limits = self.limits.replica
            if limits is not None and limits[0]:
                # As in Redis, a hard limit below the backlog size is read as the backlog size.
                backlog = self.server.config["repl-backlog-size"]
                if limits[0] < backlog:
                    return (backlog, limits[1], limits[2])
            return limits
        return self.limits.normal

    def _output_full(self, size: int, limits: tuple[int, int, int] | None) -> bool:
        """The pending output reached `watch`: close the client past its limit, or hold its
        remaining commands past the high-water mark when its class has no limit. True when
        its commands must stop."""
        flow = self.flow
        assert flow is not None
        if limits is None:
            flow.hold()
            return True
        if flow.breaks(size, limits):
            self.close_for_output_limit()
            return True
        if flow.soft_since is not None:
            self.server.soft_limited.add(self)
        return False

    def output_added(self, n: int) -> None:
        """n bytes were appended to the output outside the client's own commands (a message, the
        replication stream): close the client if that breaks its class's limit."""
        flow = self.flow
        if flow is None or self.closed:
            return
        flow.queued += n
        limits = self.output_limits()
        if limits is None or flow.queued + flow.pending() < watch_threshold(limits):
            return
        size = flow.pending()
        for part in self.out:
            size += len(part)
        subs = self.subs
        if subs is not None:
            for part in subs.held:
                size += len(part)
        if flow.breaks(size, limits):
            self.close_for_output_limit()
        elif flow.soft_since is not None:
            self.server.soft_limited.add(self)

    def close_for_output_limit(self) -> None:
        """Close at once, dropping its unsent replies and unrun commands (Redis's
        closeClientOnOutputBufferLimitReached)."""
        if self.closed:
            return
        log.warning("Client id=%d addr=%s closed for overcoming of output buffer limits.",
                    self.id, self.addr)
        self.server.output_limit_disconnections += 1
        self._discard()
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    def _reply_with_flags(self, reply: Any) -> None:
        """Send or drop a command's reply under CLIENT REPLY OFF/SKIP, then move SKIP on to the
        next command, as Redis does after each command (resetClient)."""
        flags = self.reply_flags
        if not flags & (REPLY_OFF | REPLY_SKIP) or type(reply) is PushReplies:
            write_reply(self.out, reply, self.resp3)
        flags &= ~REPLY_SKIP
        if flags & REPLY_SKIP_NEXT:
            flags = (flags & ~REPLY_SKIP_NEXT) | REPLY_SKIP
        self.reply_flags = flags

    def propagate(self, argv: list[bytes]) -> None:
        """Record argv, in this client's database, as (part of) the running command's effect:
        what a replay runs to make the same change (see server/effects.py)."""
        effects = self.effects
        if effects.active:
            effects.pending.append((self.db.index, argv))

    def resume_after_block(self, reply: Any) -> None:
        """Released by the blocking manager: send the reply, then run what was read meanwhile."""
        if self.closed:
            return
        out = self.out
        mark = len(out)
        try:
            if self.reply_flags:
                self._reply_with_flags(reply)
            else:
                write_reply(out, reply, self.resp3)
        except Exception as exc:
            # Whatever the encoder wrote of it would desynchronise the client: an error instead.
            log.exception("internal error encoding the reply of a blocked command")
            del out[mark:]
            name = self.last_command.name if self.last_command is not None else "?"
            reply = internal_error(name, exc)
            write_reply(out, reply, self.resp3)
        if type(reply) is ErrorReply:
            self.stats.count_error(reply.message)
        self._drain()
        # Into the iteration's write pass, not sent here: a send wakes the reader, which the
        # kernel may run on this core at once, and the rest of the serve (the other parked
        # clients, the writer's own reply) would wait for it. Sent from here, a reader that took
        # 100 entries held the server off the CPU for 2-3 ms (measured with time.thread_time()).
        if not self.closed:
            self.pending_writes.add(self)

    def write(self, reply: Any) -> None:
        """Send one reply outside a read (used for out-of-band replies)."""
        write_reply(self.out, reply, self.resp3)
        self.flush()

    def flush(self) -> None:
        subs = self.subs
        if subs is not None and subs.held:
            self.server.pubsub.release_held(self)
        out = self.out
        transport = self.transport
        flow = self.flow
        if out and transport is not None and not self.closed:
            # What the replies acknowledge reaches the AOF before they leave (no call made while
            # nothing is unwritten and no client is held back).
            if self.effects.replies_wait and not self.persistence.before_reply(self):
                return
            data = b"".join(out) if len(out) > 1 else out[0]
            out.clear()
            self._send(data)
            self.stats.net_output_bytes += len(data)
            if flow is not None:
                flow.queued = 0
                limits = self.output_limits()
                if limits is not None and flow.over_limit(limits):
                    self.close_for_output_limit()
                    return
        else:
            out.clear()
        if self.close_after_reply:
            self.close()
        elif flow is not None and flow.held and not flow.paused and not self.closed:
            # Written without reaching the high-water mark: the waiting commands go on at the
            # next iteration (after the other clients' turn).
            self.pending_writes.loop.call_soon(self._resume_if_held)

    def _resume_if_held(self) -> None:
        flow = self.flow
        if flow is not None and flow.held and not flow.paused and not self.closed:
            self._release_held()

    def _protocol_error(self, error: ProtocolError) -> None:
        # Nothing after the error runs; the replies before it leave.
        self.held_input.clear()
        self.held_bytes = 0
        # error.reply holds the exact bytes (the text can carry a raw byte of the request).
        self.out.append(error.reply)
        self.stats.count_error(str(error))
        self.close_after_reply = True
        self.flush()

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def evict(self) -> None:
        """Closed by client eviction (maxmemory-clients): what it sent and was to receive is
        dropped, as Redis's freeClient drops it."""
        self._discard()
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    # --- state helpers used by commands --------------------------------------------------

    def select(self, index: int) -> None:
        self.db = self.keyspace.dbs[index]

    def set_authenticated(self, value: bool) -> None:
        self.authenticated = value
        self.parser.authenticated = value

    def trust(self) -> None:
        """Run whatever this client sends, with no user (the master's link, a file's loader),
        as Redis's clients with a NULL user."""
        self.set_authenticated(True)
        self.auth_flag = True
        self.acl_limited = False


def _not_connected(data: bytes) -> None:
    """Output of a client with no transport yet goes nowhere (flush tests the transport)."""


def _format_addr(addr: Any) -> str:
    if isinstance(addr, tuple) and len(addr) >= 2:
        host = addr[0]
        return f"[{host}]:{addr[1]}" if ":" in host else f"{host}:{addr[1]}"
    return str(addr) if addr else "?:0"
