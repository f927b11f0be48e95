"""A replica applying its master's stream: what one read brought, run as one batch.

The commands of a read are parsed at once (the canonical RESP a master writes by the request
parser's byte scan, anything else by the AOF reader) and run the way a client's pipeline runs:
consecutive calls that a command's run handler takes together (XADDs to one stream, with the
IDs the master gave them) go through it, the others one by one through dispatch. Either way each
call has the effects, keyspace events, ready keys and statistics it would have alone, so the
replica's blocked clients, its AOF and its notifications see what they would see command by
command.

The replica's offset moves only by whole units of the stream (a command, or MULTI ... EXEC):
once per batch, by every unit the batch completed, whose bytes then go on, exactly as received,
to the replica's backlog and its own replicas. Bytes of a transaction not finished in this read
are held until its EXEC arrives. A REPLCONF GETACK is answered with the offset of what ran
before it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from protocol.parser import Received, scan_commands
from protocol.reply import ErrorReply
from server.blocking import BLOCKED
from server.dispatch import execute, execute_run, spelled
from server.keyspace import EXPIRY_DELETE, EXPIRY_HIDE, EXPIRY_KEEP
from server.persistence.reader import AofCorrupted, AofTruncated, iter_commands

if TYPE_CHECKING:
    from server.connection import Client
    from server.replication.replica import MasterLink

log = logging.getLogger("rivulet")


def parse_stream(buf: bytes, out: list[list[bytes]], ends: list[int],
                 received: Received | None = None) -> AofCorrupted | None:
    """The complete commands at the start of buf into out, each one's end offset into ends; the
    error that stopped the parse short of a command cut short at the end, if any. received, if
    given, learns which commands are buf's bytes as they are (those the scan took)."""
    done = scan_commands(buf, out, ends)
    if received is not None:
        received.set(out, buf, 0, len(out), ends)
    if done == len(buf):
        return None
    # A command cut short, or one in a form the scan leaves alone: the AOF reader decides.
    try:
        for argv, end in iter_commands(buf[done:] if done else buf):
            out.append(argv)
            ends.append(done + end)
    except AofTruncated:
        pass  # the rest comes with the next read
    except AofCorrupted as exc:
        return exc
    return None


def _is_getack(argv: list[bytes]) -> bool:
    return len(argv) >= 2 and argv[0].lower() == b"replconf" and argv[1].lower() == b"getack"


class StreamApplier:
    """The replica's side of the stream: runs what the master sent on the master's client."""

    def __init__(self, link: MasterLink) -> None:
        self.link = link
        # Bytes of a MULTI the master has not finished yet: they count when its EXEC ran.
        self.held = b""
        # A pause of commands stopped the last batch short.
        self.paused = False

    def reset(self) -> None:
        self.held = b""
        self.paused = False

    def apply(self, client: Client, buf: bytes) -> int:
        """Run the complete commands at the start of buf; returns the bytes they took."""
        self.paused = False
        commands: list[list[bytes]] = []
        ends: list[int] = []
        # Run handlers log runs of the master's commands as the bytes it sent (Received).
        received = client.parser.received
        error = parse_stream(buf, commands, ends, received)
        link = self.link
        keyspace = client.keyspace
        keyspace.expiry = EXPIRY_KEEP
        fed = 0  # buf[:fed] has been counted in the offset and fed on
        unit_end = 0  # where the last complete unit ends
        pos = 0  # where the commands run so far end
        n = len(commands)
        i = 0
        pause = link.server.write_pause
        try:
            while i < n and link.master is client:
                argv = commands[i]
                cmd = spelled(argv[0])
                if pause.level and cmd is not None and pause.stops(client, cmd):
                    # A pause holds the master's stream too (Redis pauses the master's client):
                    # the rest waits, read but not applied, until the pause ends.
                    self.paused = True
                    break
                if cmd is not None and cmd.run_handler is not None and i + 1 < n \
                        and client.multi is None:
                    done = execute_run(client, cmd, commands, i)
                    if done:
                        i += done
                        pos = unit_end = ends[i - 1]
                        continue
                if _is_getack(argv):
                    # The master asks where we are (WAIT): the offset before this very command.
                    fed = self._account(buf, fed, unit_end)
                    link.send_ack()
                else:
                    self._run(client, argv)
                i += 1
                pos = ends[i - 1]
                if client.multi is None:
                    unit_end = pos
        finally:
            received.clear()
            client.out.clear()  # the master hears nothing back
            keyspace.expiry = EXPIRY_HIDE if link.host is not None else EXPIRY_DELETE
        fed = self._account(buf, fed, unit_end)
        if unit_end < pos:
            self.held += buf[fed:pos]
        if error is not None and link.master is client:
            log.warning("Protocol error from MASTER (%s): closing the link", error)
            client.close()
        return pos

    def _account(self, buf: bytes, fed: int, end: int) -> int:
        """Units buf[fed:end] (after the held start of the first) were applied: they move the
        offset and go on to the backlog and our replicas, unchanged (Redis's
        replicationFeedStreamFromMasterStream). Returns the new fed position."""
        if end <= fed:
            return fed
        data = buf[fed:end] if fed or end < len(buf) else buf
        if self.held:
            data = self.held + data
            self.held = b""
        self.link.account(data)
        return end

    def _run(self, client: Client, argv: list[bytes]) -> None:
        reply: Any = execute(client, argv)
        client.out.clear()
        if reply is BLOCKED:
            # A stream never carries a command that waits; should one do so, it must not hold
            # the link: it is released at once.
            client.server.blocking.unblock(client, None)
            client.out.clear()
        elif type(reply) is ErrorReply:
            log.warning("== CRITICAL == This replica is sending an error to its master: '%s' "
                        "after processing the command '%s'", reply.message,
                        argv[0].decode("utf-8", "replace"))
