"""Blocked clients and the ready-keys queue (Redis's blocked.c).

This module knows keys, clients, deadlines and first-come first-served order; it knows no value
types and no commands. A command that has nothing to return yet (XREAD BLOCK, later BLPOP...)
returns a `Block` that says which keys it waits on, for how long, what it answers on timeout,
which argv re-runs it and which value type can serve it. The client is parked on those keys.

Writes never wake clients directly: they only mark a key *ready*. The ready keys are served once
per event-loop iteration, after the commands read in that iteration have run and before the loop
polls again, so a burst of writes wakes each waiter once with everything new. Serving a key
re-executes the command of each client parked on it, in arrival order, through the normal
dispatch path (`dispatch.reexecute`); a re-run that would block again leaves the client where it
was, with its original deadline and place in line.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from protocol.reply import NULL_ARRAY, ErrorReply

if TYPE_CHECKING:
    from server.command_table import Command
    from server.connection import Client
    from server.pending_writes import PendingWrites

log = logging.getLogger("rivulet")

UNBLOCKED_BY_CLIENT = ErrorReply("UNBLOCKED client unblocked via CLIENT UNBLOCK")

BLOCKED: Final = object()  # what running a command returns when it parked (or kept parked) its client


class Block:
    """What a handler returns to park its client.

    keys: the keys whose changes may let the command complete.
    timeout_ms: how long to wait; 0 waits forever.
    timeout_reply: the answer when the wait ends without the command completing (also the
        answer inside MULTI, where a command cannot wait).
    argv: the command to re-run when a key is ready, with what the first run resolved written
        in (XREAD's `$` as the last ID it saw); None re-runs the command as it was sent.
    wake_type: the class of value that can serve it (a key that now holds another type, or
        none, does not re-run it); None re-runs it on any change of its keys.
    wake_on_nokey: re-run it also when a key is deleted or changes type, so that the command
        can fail as it would if sent now (XREADGROUP, whose group went away with the key).
    recheck_ms: re-run it after this many ms even if no key is written, for a command that time
        alone can let complete (XREADGROUP CLAIM: a pending entry becomes idle enough); 0: never.
        A re-run that blocks again sets its own next recheck.
    """

    __slots__ = ("keys", "timeout_ms", "timeout_reply", "argv", "wake_type", "wake_on_nokey",
                 "recheck_ms")

    def __init__(self, keys: list[bytes], timeout_ms: int, timeout_reply: Any = NULL_ARRAY,
                 argv: list[bytes] | None = None, wake_type: type | None = None,
                 wake_on_nokey: bool = False, recheck_ms: int = 0) -> None:
        self.keys = keys
        self.timeout_ms = timeout_ms
        self.timeout_reply = timeout_reply
        self.argv = argv
        self.wake_type = wake_type
        self.wake_on_nokey = wake_on_nokey
        self.recheck_ms = recheck_ms


class BlockedState:
    """A parked client: the command and argv to re-run, in the database it was sent to."""

    __slots__ = ("client", "request", "command", "argv", "db", "timer", "recheck")

    def __init__(self, client: Client, request: Block, command: Command, argv: list[bytes],
                 db: int) -> None:
        self.client = client
        self.request = request
        self.command = command
        self.argv = argv
        self.db = db
        self.timer: asyncio.TimerHandle | None = None
        self.recheck: asyncio.TimerHandle | None = None


class BlockingManager:
    def __init__(self, loop: asyncio.AbstractEventLoop, pending_writes: PendingWrites) -> None:
        # Imported here: dispatch depends on this module (Block), not the other way round.
        from server.dispatch import reexecute

        self.loop = loop
        self.pending_writes = pending_writes
        self._reexecute: Callable[[Client, Command, list[bytes]], Any] = reexecute
        # (db, key) -> clients parked on it, in arrival order (dict as an ordered set)
        self.waiters: dict[tuple[int, bytes], dict[Client, None]] = {}
        # (db, key) -> how many of its parked clients a deletion re-runs (wake_on_nokey): the
        # keys a deletion signals (Redis's blocking_keys_unblock_on_nokey)
        self.nokey: dict[tuple[int, bytes], int] = {}
        # keys signalled since the last serve, in signal order
        self.ready: dict[tuple[int, bytes], None] = {}
        self._scheduled = False
        # Bound once: handing a method over makes a bound-method object at each call.
        self._serve: Callable[[], None] = self.serve_ready_keys
        self.blocked_count = 0

    @property
    def blocking_keys(self) -> int:
        return len(self.waiters)

    @property
    def blocking_keys_on_nokey(self) -> int:
        """Keys with a client that a deletion or type change re-runs (INFO's count of them)."""
        return len(self.nokey)

    def block(self, client: Client, request: Block, command: Command, argv: list[bytes]) -> None:
        """Park client until one of request.keys is ready, the deadline passes or it is released."""
        rerun = request.argv
        state = BlockedState(client, request, command, argv if rerun is None else rerun,
                             client.db.index)
        client.blocked = state
        for key in request.keys:
            self.waiters.setdefault((state.db, key), {})[client] = None
        if request.wake_on_nokey:
            nokey = self.nokey
            for key in request.keys:
                dbkey = (state.db, key)
                nokey[dbkey] = nokey.get(dbkey, 0) + 1
        if request.timeout_ms > 0:
            state.timer = self.loop.call_later(request.timeout_ms / 1000, self._timed_out, client)
        self._set_recheck(state, request.recheck_ms)
        self.blocked_count += 1

    def blocked_again(self, client: Client, request: Block) -> None:
        """A re-run of client's command would block again: it stays where it was, with its
        deadline; only its next recheck is the new run's."""
        state = client.blocked
        if state is not None:
            self._set_recheck(state, request.recheck_ms)

    def _set_recheck(self, state: BlockedState, recheck_ms: int) -> None:
        if state.recheck is not None:
            state.recheck.cancel()
            state.recheck = None
        if recheck_ms > 0:
            state.recheck = self.loop.call_later(recheck_ms / 1000, self._recheck, state.client)

    def _recheck(self, client: Client) -> None:
        state = client.blocked
        if state is not None:
            state.recheck = None
            self._rerun(client, state)

    def signal_ready(self, db: int, key: bytes) -> None:
        """Called by the keyspace on writes and deletions; cheap when nobody waits on the key."""
        waiters = self.waiters
        if not waiters:
            return
        dbkey = (db, key)
        if dbkey not in waiters:
            return
        self._mark_ready(dbkey)

    def signal_deleted(self, db: int, key: bytes) -> None:
        """Called by the keyspace when a key is deleted or changes type: as Redis's
        signalDeletedKeyAsReady, only a key that a parked command wants to hear of then
        (wake_on_nokey: XREADGROUP, whose group went with the key) is made ready. Any other
        command would only block again, and a pop that empties the list its own client waits
        on would cost the hand-off another serve."""
        nokey = self.nokey
        if not nokey:
            return
        dbkey = (db, key)
        if dbkey in nokey:
            self._mark_ready(dbkey)

    def _mark_ready(self, dbkey: tuple[int, bytes]) -> None:
        self.ready[dbkey] = None
        if not self._scheduled:
            self._scheduled = True
            self.pending_writes.serve_first(self._serve)

    def serve_ready_keys(self) -> None:
        # A re-run command may make more keys ready (BLMOVE pushes where others wait; a pop
        # that empties a key where an XREADGROUP waits): they are served in a next round of
        # this loop, after every key of the current round. Until the loop ends no other serve
        # is scheduled: one would cost an extra turn of the event loop (a poll that does not
        # wait), for keys served here.
        try:
            while self.ready:
                ready = self.ready
                self.ready = {}
                for db, key in ready:
                    parked = self.waiters.get((db, key))
                    if parked:
                        self._serve_key(db, key, parked)
        finally:
            self._scheduled = False
            if self.ready:
                self._scheduled = True
                self.loop.call_soon(self._serve)

    def _serve_key(self, db: int, key: bytes, parked: dict[Client, None]) -> None:
        # A snapshot: re-runs release clients (and their deferred commands may park them
        # again, at the end of the line) while this runs.
        for client in list(parked):
            state = client.blocked
            if state is None or client not in parked:
                continue
            request = state.request
            if not request.wake_on_nokey:
                wake_type = request.wake_type
                if wake_type is not None and type(_live_value(client, db, key)) is not wake_type:
                    continue
            self._rerun(client, state)

    def _rerun(self, client: Client, state: BlockedState) -> None:
        """Re-run a parked client's command: release it with the reply, or leave it parked."""
        try:
            reply = self._reexecute(client, state.command, state.argv)
        except Exception as exc:  # one failing command must not leave the others parked
            log.exception("internal error re-running %r for a blocked client", state.command.name)
            reply = internal_error(state.command.name, exc)
        if reply is BLOCKED:
            return
        self._forget(client)
        try:
            client.resume_after_block(reply)
        except Exception:
            # From the commands it had pipelined behind: their replies may be lost, so what was
            # answered goes out and the connection closes.
            log.exception("internal error resuming client id=%d", client.id)
            client.close_after_reply = True
            client.pending_writes.add(client)

    def run_postponed(self, client: Client) -> None:
        """A client parked while writes were paused (server/write_pause.py) runs its command
        now, as if just sent: every check again, counted once; it answers, or parks as the
        command itself may."""
        state = client.blocked
        if state is None:
            return
        self._forget(client)
        from server.dispatch import execute

        try:
            reply = execute(client, state.argv)
        except Exception as exc:
            log.exception("internal error running %r after a pause", state.command.name)
            reply = internal_error(state.command.name, exc)
        if reply is not BLOCKED:
            client.resume_after_block(reply)

    def unblock(self, client: Client, reply: Any) -> None:
        """Release a parked client with `reply`, then let it go on with its pipeline.

        Its command ends here without running again (a timeout, CLIENT UNBLOCK, WAIT answered,
        a role change): as Redis's updateStatsOnUnblock, it is counted now, failed when the
        reply is an error."""
        state = client.blocked
        if state is not None:
            command = state.command
            command.calls += 1
            client.stats.commands_processed += 1
            if type(reply) is ErrorReply:
                command.failed_calls += 1
        self._forget(client)
        client.resume_after_block(reply)

    def _timed_out(self, client: Client) -> None:
        state = client.blocked
        if state is not None:
            self.unblock(client, state.request.timeout_reply)

    def client_unblock(self, client: Client, with_error: bool) -> bool:
        """CLIENT UNBLOCK: release with the timeout reply, or with Redis's UNBLOCKED error."""
        state = client.blocked
        if state is None:
            return False
        if with_error:
            self.unblock(client, UNBLOCKED_BY_CLIENT)
        else:
            self.unblock(client, state.request.timeout_reply)
        return True

    def disconnected(self, client: Client) -> None:
        """A parked client that went away is forgotten at once."""
        if client.blocked is not None:
            self._forget(client)

    def _forget(self, client: Client) -> None:
        state = client.blocked
        if state is None:
            return
        client.blocked = None
        self.blocked_count -= 1
        if state.timer is not None:
            state.timer.cancel()
        if state.recheck is not None:
            state.recheck.cancel()
        waiters = self.waiters
        db = state.db
        request = state.request
        for key in request.keys:
            dbkey = (db, key)
            parked = waiters.get(dbkey)
            if parked is not None:
                if client in parked:
                    del parked[client]
                if not parked:
                    del waiters[dbkey]
        if request.wake_on_nokey:
            nokey = self.nokey
            for key in request.keys:
                dbkey = (db, key)
                left = nokey.get(dbkey, 0) - 1
                if left > 0:
                    nokey[dbkey] = left
                else:
                    nokey.pop(dbkey, None)


def internal_error(name: str, exc: Exception) -> ErrorReply:
    """The reply a client gets instead of the one a failure kept its command from making."""
    return ErrorReply(f"ERR internal error while running '{name}': {type(exc).__name__}")


def _live_value(client: Client, db: int, key: bytes) -> Any:
    """The key's value, None when missing or expired; unlike Database.get, expires nothing."""
    database = client.keyspace.dbs[db]
    value = database.data.get(key)
    if value is not None and database.expires and database.is_expired(key):
        return None
    return value
