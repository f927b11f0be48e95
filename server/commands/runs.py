"""What the run handlers (command_table.run_of) share: how far a run of calls goes, and the
keyspace events and effects of its calls, which must be those of the calls one by one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.notify import notify

if TYPE_CHECKING:
    from server.connection import Client
    from server.keyspace import Database

ANY_ARGC = 1 << 30


def run_end(commands: list[list[bytes]], start: int, min_argc: int, max_argc: int = ANY_ARGC,
            even_argc: bool = False, odd_argc: bool = False) -> int:
    """Where the run that starts at commands[start] ends: the calls spelled as the first one
    (the same bytes: another spelling may be another client library's habit, and is left to the
    single path), to its key, with min_argc..max_argc arguments, an even or odd number of them
    when asked. `start` itself when the first call is not of that shape (a run handler is asked
    before the arity check)."""
    first = commands[start]
    argc = len(first)
    if argc < min_argc or argc < 2:
        return start
    name = first[0]
    key = first[1]
    n = len(commands)
    end = start
    while end < n:
        argv = commands[end]
        argc = len(argv)
        if (argc < min_argc or argc > max_argc or (even_argc and argc & 1)
                or (odd_argc and not argc & 1) or argv[1] != key or argv[0] != name):
            break
        end += 1
    return end


def read_run_end(commands: list[list[bytes]], start: int, argc: int) -> int:
    """Where the run of reads that starts at commands[start] ends: the calls spelled as the
    first one, each with exactly `argc` arguments, whatever their keys (a read changes nothing
    another call of the run could see). `start` itself when the first call is not of that
    shape."""
    first = commands[start]
    if len(first) != argc:
        return start
    name = first[0]
    n = len(commands)
    end = start + 1
    while end < n:
        argv = commands[end]
        if len(argv) != argc or argv[0] != name:
            break
        end += 1
    return end


def notify_times(client: Client, event_class: int, event: bytes, key: bytes, db_index: int,
                 times: int) -> None:
    """The keyspace event of `times` calls to key, one each, as the calls alone would send."""
    ks = client.keyspace
    if ks.notify_flags & event_class:
        for _ in range(times):
            notify(ks, event_class, event, key, db_index)


def announce_calls(client: Client, db: Database, key: bytes, calls: list[list[bytes]],
                   start: int, end: int, event_class: int, event: bytes) -> None:
    """Calls calls[start:end] changed key: each one's keyspace event, and each one's argv as its
    effect (dispatch hands the effects on after the run), as if each had run alone."""
    index = db.index
    notify_times(client, event_class, event, key, index, end - start)
    effects = client.effects
    if effects.active:
        # Calls received as canonical RESP are their own encoding: one slice for the run.
        data = client.parser.received.span(calls, start, end - start)
        if data is not None:
            effects.add_encoded(index, data)
            return
        pending = effects.pending
        for i in range(start, end):
            pending.append((index, calls[i]))
