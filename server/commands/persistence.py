"""Persistence commands: BGREWRITEAOF, SAVE, BGSAVE, LASTSAVE."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.reply import OK, ErrorReply, SimpleString
from server.command_table import command

if TYPE_CHECKING:
    from server.connection import Client


def _start_background(client: Client) -> ErrorReply | None:
    persistence = client.server.persistence
    try:
        if persistence.aof is None:
            # No AOF to compact in the background: write the snapshot file now.
            persistence.save()
        else:
            persistence.start_rewrite()
    except OSError as exc:
        return ErrorReply(f"ERR Can't rewrite append only file in background: fork: {exc.strerror}")
    return None


@command("bgrewriteaof", 1, "admin noasync noscript", group="server", since="1.0.0",
         summary="Asynchronously rewrites the append-only file to disk.")
def bgrewriteaof(client: Client, argv: list[bytes]) -> Any:
    rewriter = client.server.persistence.rewriter
    if rewriter is not None and rewriter.in_progress:
        return ErrorReply("ERR Background append only file rewriting already in progress")
    error = _start_background(client)
    return error or SimpleString(b"Background append only file rewriting started")


@command("bgsave", -1, "admin noasync noscript", group="server", since="1.0.0",
         summary="Asynchronously saves the database(s) to disk.")
def bgsave(client: Client, argv: list[bytes]) -> Any:
    # Persistence is the append-only file: a background save is a point-in-time compaction of it.
    schedule = False
    if len(argv) > 2 or (len(argv) == 2 and argv[1].lower() != b"schedule"):
        return ErrorReply("ERR syntax error")
    if len(argv) == 2:
        schedule = True
    rewriter = client.server.persistence.rewriter
    if rewriter is not None and rewriter.in_progress:
        if schedule:
            rewriter.scheduled = True
            return SimpleString(b"Background saving scheduled")
        return ErrorReply("ERR Background save already in progress")
    error = _start_background(client)
    return error or SimpleString(b"Background saving started")


@command("save", 1, "admin noscript noasync no_multi", group="server", since="1.0.0",
         summary="Synchronously saves the database(s) to disk.")
def save(client: Client, argv: list[bytes]) -> Any:
    try:
        client.server.persistence.save()
    except OSError as exc:
        return ErrorReply(f"ERR {exc.strerror}")
    return OK


@command("lastsave", 1, "loading stale fast", group="server", since="1.0.0",
         summary="Returns the Unix timestamp of the last successful save to disk.")
def lastsave(client: Client, argv: list[bytes]) -> Any:
    return client.server.persistence.last_save
