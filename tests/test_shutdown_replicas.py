"""SHUTDOWN and SIGTERM wait for lagging replicas (Redis 7's shutdown-timeout): writes paused,
the SHUTDOWN client waiting, the server gone once every replica acknowledged its offset or the
timeout passed; NOW skips the wait; SHUTDOWN ABORT cancels it. A replica is made to lag by
stopping its process (SIGSTOP)."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
import redis

from tests.replica_helpers import REDIS70, RedisServer, info, wait_synced, wait_until
from tests.serverproc import ServerProcess


@pytest.fixture
def pair(procs):
    master = ServerProcess().start()
    procs.append(master)
    replica = ServerProcess("--replicaof", "127.0.0.1", str(master.port)).start()
    procs.append(replica)
    wait_synced(redis.Redis(port=master.port), redis.Redis(port=replica.port))
    return master, replica


def lagging(master: ServerProcess, replica: ServerProcess, key: str = "x") -> redis.Redis:
    """Stop the replica (SIGSTOP: it acknowledges nothing more; the procs fixture resumes it)
    and write once more on the master, whose client is returned."""
    assert replica.proc is not None
    os.kill(replica.proc.pid, signal.SIGSTOP)
    m = redis.Redis(port=master.port)
    m.set(key, 1)
    return m


def shutdown_in_thread(port: int, *args: str) -> tuple[threading.Thread, list]:
    results: list = []
    c = redis.Redis(port=port, socket_timeout=30)

    def run() -> None:
        try:
            results.append(c.execute_command("SHUTDOWN", *args))
        except redis.ConnectionError as exc:
            results.append(exc)
        except redis.ResponseError as exc:
            results.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, results


def exited(proc: ServerProcess) -> bool:
    return proc.proc is not None and proc.proc.poll() is not None


def test_in_sync_replicas_do_not_delay_shutdown(pair):
    master, _replica = pair
    m = redis.Redis(port=master.port)
    m.set("k", 1)
    wait_synced(m, redis.Redis(port=_replica.port))
    # The master knows once the replica acknowledged (REPLCONF ACK).
    wait_until(lambda: "offset=%s," % info(m)["master_repl_offset"] in info(m)["slave0"], 10,
               "the replica's acknowledgement")
    m.shutdown()  # (redis-py takes the closed connection as the answer)
    wait_until(lambda: exited(master), 10, "the master to exit")
    assert "1 of 1 replicas are in sync when shutting down." in master.log()
    assert "Waiting for replicas" not in master.log()


def test_shutdown_waits_for_a_lagging_replica(pair):
    master, replica = pair
    m = lagging(master, replica, "last")
    r = redis.Redis(port=replica.port)
    thread, results = shutdown_in_thread(master.port)
    wait_until(lambda: "Waiting for replicas before shutting down." in master.log(), 10,
               "the wait to start")
    assert not exited(master)
    assert 0 < int(info(m, "server")["shutdown_in_milliseconds"]) <= 10000
    # Writes are held back meanwhile; reads are served.
    writer = redis.Redis(port=master.port, socket_timeout=30)
    late: list = []
    writer_thread = threading.Thread(target=lambda: late.append(_try(writer.set, "late", 1)))
    writer_thread.start()
    wait_until(lambda: int(info(m, "clients")["blocked_clients"]) == 2, 5,
               "SHUTDOWN and the write to wait")
    assert m.get("last") == b"1"
    os.kill(replica.proc.pid, signal.SIGCONT)
    wait_until(lambda: exited(master), 15, "the master to exit once the replica caught up")
    thread.join(10)
    writer_thread.join(10)
    assert isinstance(results[0], redis.ConnectionError)
    assert late and isinstance(late[0], redis.ConnectionError)  # the server went away first
    assert r.get("last") == b"1" and r.get("late") is None
    assert "1 of 1 replicas are in sync when shutting down." in master.log()


def _try(fn, *args):
    try:
        return fn(*args)
    except redis.RedisError as exc:
        return exc


def test_timeout_then_shutdown_with_a_lagging_replica(pair):
    master, replica = pair
    m = lagging(master, replica)
    m.config_set("shutdown-timeout", 1)
    started = time.monotonic()
    thread, _results = shutdown_in_thread(master.port)
    wait_until(lambda: exited(master), 10, "the master to exit after shutdown-timeout")
    assert time.monotonic() - started >= 0.9
    thread.join(10)
    log = master.log()
    assert "Lagging replica 127.0.0.1:%d reported offset" % replica.port in log
    assert "0 of 1 replicas are in sync when shutting down." in log


def test_now_does_not_wait(pair):
    master, replica = pair
    m = lagging(master, replica)
    with pytest.raises(redis.ConnectionError):
        m.execute_command("SHUTDOWN", "NOW")
    wait_until(lambda: exited(master), 5, "SHUTDOWN NOW to exit at once")
    assert "Waiting for replicas" not in master.log()


def test_abort_cancels_the_wait(pair):
    master, replica = pair
    m = lagging(master, replica)
    thread, results = shutdown_in_thread(master.port, "NOSAVE")
    wait_until(lambda: "Waiting for replicas before shutting down." in master.log(), 10)
    assert m.execute_command("SHUTDOWN", "ABORT") is True  # (redis-py reads +OK so)
    thread.join(10)
    assert isinstance(results[0], redis.ResponseError)
    assert str(results[0]) == "Errors trying to SHUTDOWN. Check logs."
    assert m.incr("x") == 2  # writes resume
    assert "shutdown_in_milliseconds" not in info(m, "server")
    assert "Shutdown manually aborted." in master.log()
    with pytest.raises(redis.ResponseError, match=r"^No shutdown in progress\.$"):
        m.execute_command("SHUTDOWN", "ABORT")
    os.kill(replica.proc.pid, signal.SIGCONT)
    assert not exited(master)


def test_sigterm_waits_too(pair):
    master, replica = pair
    lagging(master, replica)
    assert replica.proc is not None and master.proc is not None
    master.proc.send_signal(signal.SIGTERM)
    wait_until(lambda: "Waiting for replicas before shutting down." in master.log(), 10)
    assert not exited(master)
    os.kill(replica.proc.pid, signal.SIGCONT)
    wait_until(lambda: exited(master), 15, "the master to exit after SIGTERM")
    assert redis.Redis(port=replica.port).get("x") == b"1"


@pytest.mark.skipif(REDIS70 is None, reason="redis-server is not installed: shutdown-timeout "
                                            "was NOT compared with Redis")
def test_shutdown_timeout_config_as_redis(pair):
    master, _replica = pair
    real = RedisServer(REDIS70).start()
    try:
        ours, theirs = redis.Redis(port=master.port), real.client()
        assert ours.config_get("shutdown-timeout") == theirs.config_get("shutdown-timeout")
        for value in ("-1", "abc"):
            with pytest.raises(redis.ResponseError) as mine:
                ours.config_set("shutdown-timeout", value)
            with pytest.raises(redis.ResponseError) as reference:
                theirs.config_set("shutdown-timeout", value)
            assert str(mine.value) == str(reference.value)
    finally:
        real.cleanup()
