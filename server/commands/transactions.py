"""Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.reply import NULL_ARRAY, OK, ErrorReply
from server.command_table import command, key_spec
from server.dispatch import acl_refusal, call

if TYPE_CHECKING:
    from server.connection import Client


@command("multi", 1, "noscript loading stale fast allow_busy", group="transactions", since="1.2.0",
         summary="Starts a transaction.")
def multi(client: Client, argv: list[bytes]) -> Any:
    if client.multi is not None:
        return ErrorReply("ERR MULTI calls can not be nested")
    client.multi = []
    client.multi_error = False
    return OK


def end_transaction(client: Client) -> None:
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
    end_transaction(client)
    replies: list[Any] = []
    server = client.server
    client.in_exec = True
    client.exec_queue = queued
    client.exec_argv = argv
    try:
        for cmd, cmd_argv in queued:
            if client.acl_limited:
                refused = acl_refusal(client, cmd, cmd_argv, exec_argv=argv)
                if refused is not None:
                    server.stats.count_error(refused.message)
                    replies.append(refused)
                    continue
            if cmd.is_write and server.write_error is not None:
                replies.append(ErrorReply(server.write_error))
                continue
            reply = call(client, cmd, cmd_argv)
            if type(reply) is ErrorReply:
                server.stats.count_error(reply.message)
            replies.append(reply)
    finally:
        client.in_exec = False
        client.exec_queue = None
        client.exec_argv = None
        # What the commands wrote leaves when EXEC ends, as one MULTI ... EXEC.
        client.effects.end_transaction()
    return replies


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
