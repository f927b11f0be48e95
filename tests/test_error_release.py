"""A command that fails must not keep its client alive: handlers raise shared error instances,
and a raise that added to such an instance's traceback kept every frame it passed through (with
the client and its arguments) for good: a server answering errors grew without bound."""

from __future__ import annotations

import asyncio
import gc

from fuzz.inprocess import CollectingTransport
from server.config import Config
from server.connection import Client
from server.server import Server


def test_clients_whose_commands_failed_are_freed() -> None:
    loop = asyncio.new_event_loop()
    try:
        server = Server(Config())
        server.attach_loop(loop)
        # Clients that other in-process tests of this run still hold are not this test's.
        gc.collect()
        before = sum(1 for o in gc.get_objects() if type(o) is Client)
        for i in range(50):
            client = Client(server)
            # A transport, as every real client has (the compiled build relies on it).
            client.connection_made(CollectingTransport())
            # ZSCAN's syntax error and XADD's invalid ID are shared instances (ErrorReply and
            # StreamError), raised again by every client.
            client.run_commands([[b"ZADD", b"z", b"1", b"m"], [b"ZSCAN", b"z", b"0", b"bad"],
                                 [b"XADD", b"s", b"0-0", b"f", b"v"], [b"SET", b"k", b"%d" % i]])
            assert b"ERR syntax error" in b"".join(client.out)
            client.connection_lost(None)
            del client
        gc.collect()
        # (Counted through the collector: the compiled Client does not take weak references.)
        alive = sum(1 for o in gc.get_objects() if type(o) is Client) - before
        assert alive <= 0, f"{alive} of 50 disconnected clients still referenced"
    finally:
        loop.close()
