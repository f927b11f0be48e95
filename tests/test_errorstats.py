"""INFO errorstats past Redis's limit of 128 distinct error codes (ERROR_STATS_NUMBER): one
more code turns errorstats off, leaving `errorstat_ERRORSTATS_DISABLED:count=1`, until CONFIG
RESETSTAT turns it on again; total_error_replies keeps counting.

Redis reaches the limit through Lua's redis.error_reply, whose codes are the script's; every
error Rivulet answers has one of its few fixed codes, so the test feeds the error replies to
the server's error counter (where every error reply goes) in-process, then reads INFO and runs
CONFIG RESETSTAT as a client. The same errors are sent to Redis 7.4 through EVAL, and the INFO
errorstats sections compared.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import pytest
import redis

from fuzz.inprocess import CollectingTransport
from server.config import Config
from server.connection import Client
from server.server import Server
from tests.replica_helpers import REDIS74, RedisServer

# 130 distinct codes, one code seen twice, and a reply whose first space comes too late (its
# code is then ERR, as Redis counts it).
ERRORS = ([f"E{i} failed" for i in range(126)] + ["E5 again", "A" * 40 + " late space"]
          + [f"X{i} over" for i in range(4)])


@pytest.fixture
def node() -> Iterator[tuple[Server, Client, CollectingTransport]]:
    loop = asyncio.new_event_loop()
    try:
        server = Server(Config())
        server.attach_loop(loop)
        client = Client(server)
        transport = CollectingTransport()
        client.connection_made(transport)
        yield server, client, transport
    finally:
        loop.close()


def _run(client: Client, *argv: bytes) -> bytes:
    client.out.clear()
    client.run_commands([list(argv)])
    return b"".join(client.out)


def _errorstats(reply: bytes) -> list[bytes]:
    return [line for line in reply.split(b"\r\n") if line.startswith(b"errorstat_")]


def _total(client: Client) -> int:
    info = _run(client, b"INFO", b"stats")
    return int(info.split(b"total_error_replies:")[1].split(b"\r\n")[0])


def test_errorstats_disabled_past_128_codes_and_reenabled_by_resetstat(node) -> None:
    server, client, _transport = node
    for message in ERRORS[:129]:
        server.stats.count_error(message)
    lines = _errorstats(_run(client, b"INFO", b"errorstats"))
    assert len(lines) == 128 and b"errorstat_E5:count=2" in lines
    assert b"errorstat_ERR:count=1" in lines  # the late space
    # The 129th code: errorstats stops, with its marker alone.
    server.stats.count_error(ERRORS[129])
    assert _errorstats(_run(client, b"INFO", b"errorstats")) == [
        b"errorstat_ERRORSTATS_DISABLED:count=1"]
    # Errors go on being answered and counted in total_error_replies, not by code.
    assert _run(client, b"GET").startswith(b"-ERR wrong number of arguments")
    assert _errorstats(_run(client, b"INFO", b"errorstats")) == [
        b"errorstat_ERRORSTATS_DISABLED:count=1"]
    assert _total(client) == 131
    assert _run(client, b"CONFIG", b"RESETSTAT") == b"+OK\r\n"
    assert _errorstats(_run(client, b"INFO", b"errorstats")) == []
    _run(client, b"GET")
    assert _errorstats(_run(client, b"INFO", b"errorstats")) == [b"errorstat_ERR:count=1"]
    assert _total(client) == 1


def test_errorstats_past_the_limit_as_redis_74(node) -> None:
    if not os.access(REDIS74, os.X_OK):
        pytest.skip(f"no Redis 7.4 at {REDIS74}: errorstats past 128 codes NOT compared")
    server, client, _transport = node
    ref = RedisServer(REDIS74).start()
    try:
        with redis.Redis(port=ref.port) as r:
            # (Counted from here: the client's own start may be answered errors.)
            theirs_before = r.info("stats")["total_error_replies"]
            for message in ERRORS:
                with pytest.raises(redis.ResponseError):
                    r.eval(f"return redis.error_reply('{message}')", 0)
            with pytest.raises(redis.ResponseError):
                r.execute_command("GET")
            theirs_total = r.info("stats")["total_error_replies"] - theirs_before
            # (redis-py parses the section; its lines are rebuilt in the server's order.)
            theirs = [f"{name}:count={fields['count']}".encode()
                      for name, fields in r.info("errorstats").items()]
    finally:
        ref.cleanup()
    for message in ERRORS:
        server.stats.count_error(message)
    _run(client, b"GET")
    ours = _run(client, b"INFO", b"errorstats")
    assert theirs == [b"errorstat_ERRORSTATS_DISABLED:count=1"]
    assert _errorstats(ours) == theirs
    assert _total(client) == theirs_total
