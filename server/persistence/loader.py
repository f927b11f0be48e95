"""Replaying the append-only file at start-up.

Commands run through the normal dispatcher on a client with no connection, in chunks that yield
to the event loop so that clients connecting meanwhile get -LOADING rather than a stall. A last
command cut short by a crash is dropped (with `aof-load-truncated yes`) and the file truncated to
its valid prefix; corruption anywhere else stops start-up, naming the file and the offset, and
nothing is overwritten.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Generator
from typing import TYPE_CHECKING

from protocol.reply import ErrorReply
from server.dispatch import call, lookup
from server.persistence.reader import AofCorrupted, AofTruncated, iter_commands

if TYPE_CHECKING:
    from server.server import Server

log = logging.getLogger("rivulet")


class AofLoadError(Exception):
    """Start-up must stop: the message says which file, where, and what to do."""


def _fake_client(server: Server):
    from server.connection import Client

    client = Client(server)
    client.trust()
    client.is_loader = True
    client.replica_checks = False  # what a file holds applies, replica or not (mustObeyClient)
    return client


async def load_aof(server: Server, path: str) -> int:
    """Replay path into the server's keyspace, yielding to the loop now and then."""
    replay = _replay(server, path)
    while True:
        try:
            next(replay)
        except StopIteration as done:
            return done.value
        await asyncio.sleep(0)


def load_aof_sync(server: Server, path: str) -> int:
    """Replay path without yielding (DEBUG RELOAD / DEBUG LOADAOF run inside one command)."""
    replay = _replay(server, path)
    while True:
        try:
            next(replay)
        except StopIteration as done:
            return done.value


def _replay(server: Server, path: str) -> Generator[None, None, int]:
    """Run the file's commands; yields every few thousand commands; returns how many ran."""
    with open(path, "rb") as fh:
        data = fh.read()
    client = _fake_client(server)
    done = 0
    valid_end = 0
    # The loader may sit inside MULTI when the file ends: a transaction cut by a crash is dropped,
    # so remember where it started to truncate there.
    multi_start: int | None = None
    commands = iter_commands(data)
    progress = server.loading_progress
    try:
        for argv, end in commands:
            cmd = lookup(argv)
            if isinstance(cmd, ErrorReply):
                raise AofLoadError(
                    f"Bad file format reading the append only file {path} at offset {valid_end}: "
                    f"{cmd.message}. Make a backup of your AOF file, then use "
                    f"rivulet-check-aof --fix {path}"
                )
            name = cmd.name
            if name == "multi":
                multi_start = valid_end
            if client.multi is not None and name not in ("exec", "discard", "multi"):
                client.multi.append(cmd, argv)
            else:
                call(client, cmd, argv)
            if name in ("exec", "discard"):
                multi_start = None
            valid_end = end
            done += 1
            if done % 2000 == 0:
                progress.loaded_bytes = end
                yield
    except AofTruncated as exc:
        _handle_truncation(server, path, exc.offset if multi_start is None else multi_start,
                           len(data))
    except AofCorrupted as exc:
        raise AofLoadError(
            f"Bad file format reading the append only file {path}: {exc.why} at offset "
            f"{exc.offset}. Make a backup of your AOF file, then use rivulet-check-aof --fix {path}"
        ) from None
    else:
        if multi_start is not None:
            _handle_truncation(server, path, multi_start, len(data))
    client.multi = None
    return done


def _handle_truncation(server: Server, path: str, offset: int, size: int) -> None:
    if not server.config["aof-load-truncated"]:
        raise AofLoadError(
            f"Unexpected end of file reading the append only file {path} at offset {offset}. "
            f"You can: 1) Make a backup of your AOF file, then use rivulet-check-aof --fix {path}. "
            "2) Alternatively you can set the 'aof-load-truncated' configuration option to yes "
            "and restart the server."
        )
    log.warning("!!! Warning: short read while loading the AOF file %s at offset %d (file size "
                "%d): the last command was cut short and is dropped !!!", path, offset, size)
    os.truncate(path, offset)
    log.warning("AOF %s truncated to its last valid command (offset %d)", path, offset)
