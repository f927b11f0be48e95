"""Persistence commands: SAVE, BGSAVE, LASTSAVE (dump.rdb) and BGREWRITEAOF (the AOF)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.reply import OK, ErrorReply, SimpleString
from server.command_table import command

if TYPE_CHECKING:
    from server.connection import Client


@command("bgrewriteaof", 1, "admin noscript no_async_loading", group="server", since="1.0.0",
         summary="Asynchronously rewrites the append-only file to disk.")
def bgrewriteaof(client: Client, argv: list[bytes]) -> Any:
    persistence = client.server.persistence
    rewriter = persistence.rewriter
    if rewriter is not None and rewriter.in_progress:
        return ErrorReply("ERR Background append only file rewriting already in progress")
    try:
        if rewriter is None:
            # appendonly no: there is no log to follow, the file is written once, now.
            persistence.rewrite_without_aof()
        elif persistence.has_child() or client.in_exec:
            rewriter.scheduled = True
            return SimpleString(b"Background append only file rewriting scheduled")
        else:
            persistence.start_rewrite()
    except OSError:
        return ErrorReply("ERR Can't execute an AOF background rewriting. Please check the server "
                          "logs for more information.")
    return SimpleString(b"Background append only file rewriting started")


@command("bgsave", -1, "admin noscript no_async_loading", group="server", since="1.0.0",
         summary="Asynchronously saves the database(s) to disk.")
def bgsave(client: Client, argv: list[bytes]) -> Any:
    schedule = False
    if len(argv) > 1:
        if len(argv) == 2 and argv[1].lower() == b"schedule":
            schedule = True
        else:
            return ErrorReply("ERR syntax error")
    persistence = client.server.persistence
    if persistence.rdb.in_progress:
        return ErrorReply("ERR Background save already in progress")
    if persistence.has_child() or client.in_exec:
        if schedule or client.in_exec:
            persistence.bgsave_scheduled = True
            return SimpleString(b"Background saving scheduled")
        return ErrorReply("ERR Another child process is active (AOF?): can't BGSAVE right now. "
                          "Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.")
    try:
        persistence.bgsave()
    except OSError:
        return ErrorReply("ERR")
    return SimpleString(b"Background saving started")


@command("save", 1, "admin noscript no_async_loading no_multi", group="server", since="1.0.0",
         summary="Synchronously saves the database(s) to disk.")
def save(client: Client, argv: list[bytes]) -> Any:
    persistence = client.server.persistence
    if persistence.rdb.in_progress:
        return ErrorReply("ERR Background save already in progress")
    persistence.saves += 1
    try:
        persistence.save()
    except OSError:
        return ErrorReply("ERR")
    return OK


@command("lastsave", 1, "loading stale fast", group="server", since="1.0.0",
         acl=("@admin", "@dangerous"),
         summary="Returns the Unix timestamp of the last successful save to disk.")
def lastsave(client: Client, argv: list[bytes]) -> Any:
    return client.server.persistence.last_save
