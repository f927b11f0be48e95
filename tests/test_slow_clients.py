"""Slow and abusive clients cannot hurt the others (the scenario of bench/slow_clients.py): a
canary doing XADD + XRANGE round trips keeps being served promptly, and the server's memory
stays bounded, while a client sends one byte per 100 ms, connections are opened up to
maxclients and left idle, a client pipelines 100 MB of replies and never reads, and a client
declares a 512 MB bulk and trickles it. Bounded in time: every socket and process is closed.

With an output buffer limit set, the pipeliner is disconnected, as a Redis run of the same
scenario disconnects it (differential, against Debian's redis-server)."""

from __future__ import annotations

import shutil

import pytest

from bench.slow_clients import run_scenario
from tests.serverproc import RedisProcess

MAXCLIENTS = 10_000
REFUSED = b"-ERR max number of clients reached\r\n"


def test_canary_is_served_while_clients_misbehave(server_factory) -> None:
    srv = server_factory()
    outcome = run_scenario(srv.port, srv.proc.pid, seconds=6.0, max_seconds=60.0,
                           maxclients=MAXCLIENTS)
    assert len(outcome.latencies_ms) > 20
    assert outcome.worst_ms < 1000, f"canary waited {outcome.worst_ms:.0f} ms"
    # Every idle connection was accepted, and one beyond maxclients refused in Redis's words.
    assert outcome.idle_opened == MAXCLIENTS - 5, outcome.idle_errors
    assert outcome.extra_refused == REFUSED
    # Redis keeps all of them under its defaults (no output limit for normal clients, a query
    # limit of 1 GB above the 512 MB bulk): so does Rivulet.
    assert outcome.disconnected == {"slowloris": False, "pipeliner": False, "trickler": False}
    # 100 MB of replies nobody reads, 10,000 connections and the trickled bulk: the server's
    # growth stays far below what the pipeliner alone would cost if its replies were all kept.
    assert outcome.growth_mb < 150, f"grew {outcome.growth_mb:.0f} MB"


def _with_limit(port: int, pid: int) -> dict[str, bool]:
    outcome = run_scenario(port, pid, seconds=4.0, max_seconds=30.0, maxclients=MAXCLIENTS,
                           config={"client-output-buffer-limit": "normal 32mb 0 0"})
    assert outcome.worst_ms < 1000, f"canary waited {outcome.worst_ms:.0f} ms"
    return outcome.disconnected


def test_output_limit_disconnects_the_pipeliner_as_redis_does(server_factory) -> None:
    srv = server_factory()
    ours = _with_limit(srv.port, srv.proc.pid)
    assert ours == {"slowloris": False, "pipeliner": True, "trickler": False}
    if shutil.which("redis-server") is None:
        pytest.skip("NOT COMPARED with Redis: redis-server is not installed")
    ref = RedisProcess().start()
    try:
        assert ref.proc is not None
        assert _with_limit(ref.port, ref.proc.pid) == ours
    finally:
        ref.cleanup()
