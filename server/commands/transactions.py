"""Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.encoder import write_reply
from protocol.reply import NULL_ARRAY, OK, ErrorReply, Raw
from server.command_table import Command, command, key_spec
from server.dispatch import acl_refusal, call, run_calls
from server.queued_calls import QueuedCalls, new_queue, spare

# The most queued calls EXEC hands a run handler at once (see _run).
RUN_SLICE = 1024

if TYPE_CHECKING:
    from server.connection import Client


@command("multi", 1, "noscript loading stale fast allow_busy", group="transactions", since="1.2.0",
         summary="Starts a transaction.")
def multi(client: Client, argv: list[bytes]) -> Any:
    if client.multi is not None:
        return ErrorReply("ERR MULTI calls can not be nested")
    client.multi = new_queue()
    client.multi_error = False
    return OK


def end_transaction(client: Client, keep: bool = False) -> None:
    """Leave MULTI; the queued calls are dropped unless the caller keeps them (EXEC)."""
    queued = client.multi
    if queued is not None and not keep:
        spare(queued)
    client.multi = None
    client.multi_error = False
    if client.watched:
        client.server.keyspace.unwatch_all(client)
    client.watch_dirty = False


@command("discard", 1, "noscript loading stale fast allow_busy", group="transactions",
         since="2.0.0", summary="Discards a transaction.")
def discard(client: Client, argv: list[bytes]) -> Any:
    if client.multi is None:
        return ErrorReply("ERR DISCARD without MULTI")
    end_transaction(client)
    return OK


def _watched_key_expired(client: Client) -> bool:
    # Redis aborts EXEC when a watched key expired after WATCH, even if nobody touched it.
    # A key that was already expired at WATCH time does not count (Redis 7 records that).
    for (db_index, key), expired_at_watch in client.watched.items():
        db = client.server.keyspace.dbs[db_index]
        if not expired_at_watch and key in db.data and db.is_expired(key):
            return True
    return False


@command("exec", 1, "noscript loading stale skip_slowlog", group="transactions", since="1.2.0",
         summary="Executes all commands in a transaction.")
def exec_(client: Client, argv: list[bytes]) -> Any:
    if client.multi is None:
        return ErrorReply("ERR EXEC without MULTI")
    if client.multi_error:
        end_transaction(client)
        return ErrorReply("EXECABORT Transaction discarded because of previous errors.")
    if client.watch_dirty or _watched_key_expired(client):
        end_transaction(client)
        return NULL_ARRAY
    queued = client.multi
    end_transaction(client, keep=True)
    server = client.server
    resp3 = client.resp3
    # The reply is encoded as the commands run: runs of calls (queued pipelined XADDs...) go
    # through their command's run handler, which writes its replies encoded.
    cmds = queued.commands
    n = len(cmds)
    parts: list[bytes] = [b"*%d\r\n" % n]
    runs = _runs_allowed(client)
    i = 0
    client.in_exec = True
    client.exec_queue = queued
    client.exec_argv = argv
    try:
        while i < n:
            cmd = cmds[i]
            if runs and cmd.run_handler is not None and i + 1 < n and (
                    not cmd.is_write or server.write_error is None):
                done = _run(client, cmd, queued, i, parts)
                if done:
                    i += done
                    continue
            cmd_argv = queued.argv(i)
            i += 1
            if client.acl_limited:
                refused = acl_refusal(client, cmd, cmd_argv, exec_argv=argv)
                if refused is not None:
                    server.stats.count_error(refused.message)
                    write_reply(parts, refused, resp3)
                    continue
            if cmd.is_write and server.write_error is not None:
                write_reply(parts, ErrorReply(server.write_error), resp3)
                continue
            reply = call(client, cmd, cmd_argv)
            if type(reply) is ErrorReply:
                server.stats.count_error(reply.message)
            write_reply(parts, reply, resp3)
    finally:
        client.in_exec = False
        client.exec_queue = None
        client.exec_argv = None
        # What the commands wrote leaves when EXEC ends, as one MULTI ... EXEC.
        client.effects.end_transaction()
        spare(queued)
    return Raw(b"".join(parts))


def _runs_allowed(client: Client) -> bool:
    """Whether queued calls may run as batches: not where `call` or EXEC's loop does something
    around each call (ACL rules re-checked, CLIENT NO-TOUCH, a loading replay, pushes held
    behind each call, maxmemory, a replica's refusals)."""
    server = client.server
    return not (client.acl_limited or client.no_touch or server.loading or client.is_loader
                or client.subs is not None or client.replica_checks
                or client.keyspace.maxmemory)


def _run(client: Client, cmd: Command, queued: QueuedCalls, start: int,
         parts: list[bytes]) -> int:
    """cmd's run handler on the queued calls from start on, its replies appended to parts; how
    many calls it ran (0: none). At most RUN_SLICE calls: their argv lists exist only while they
    run, so that the collector never has a transaction's worth of them to walk."""
    cmds = queued.commands
    stop = min(len(cmds), start + RUN_SLICE)
    end = start + 1
    while end < stop and cmds[end] is cmd:
        end += 1
    if end - start < 2:
        return 0
    out = client.out
    client.out = parts
    try:
        return run_calls(client, cmd, queued.argvs(start, end), 0)
    finally:
        client.out = out


@command("watch", -2, "noscript loading stale fast allow_busy", keys=(1, -1, 1),
         key_specs=key_spec(("RO",), last=-1),
         group="transactions", since="2.2.0",
         summary="Monitors changes to keys to determine the execution of a transaction.")
def watch(client: Client, argv: list[bytes]) -> Any:
    if client.multi is not None:
        return ErrorReply("ERR WATCH inside MULTI is not allowed")
    keyspace = client.server.keyspace
    index = client.db.index
    for key in argv[1:]:
        if (index, key) not in client.watched:
            db = client.db
            client.watched[(index, key)] = key in db.data and db.is_expired(key)
            keyspace.watch(client, index, key)
    return OK


@command("unwatch", 1, "noscript loading stale fast allow_busy", group="transactions",
         since="2.2.0", summary="Forgets about watched keys of a transaction.")
def unwatch(client: Client, argv: list[bytes]) -> Any:
    if client.watched:
        client.server.keyspace.unwatch_all(client)
    client.watch_dirty = False
    return OK
