"""Streams and consumer groups survive restarts and rewrites exactly; crash tests under traffic."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import threading
import time
from typing import Any

import hiredis
import pytest
import redis

from tests.helpers import (
    aof_path,
    encode_command,
    no_retry,
    read_reply,
    restart,
    strip_moving_fields,
    wait_blocked,
)
from tests.serverproc import RawConnection, RedisProcess, ServerProcess


def full_state(r: redis.Redis, key: str) -> Any:
    """XINFO STREAM key FULL as the raw RESP2 reply (no client-side parsing), consumer times
    removed."""
    port = r.connection_pool.connection_kwargs["port"]
    reader = hiredis.Reader()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"XINFO STREAM %s FULL COUNT 0\r\n" % key.encode())
        while (reply := reader.gets()) is False:
            reader.feed(sock.recv(1 << 20))
    return strip_moving_fields(reply)


def build_scenario(r: redis.Redis) -> None:
    for i in range(1, 301):
        r.xadd("s", {"n": i, "sensor": f"s{i % 7}"}, id=f"{1000 + i}-{i % 3}")
    r.xadd("s", {"auto": "1"})
    r.xdel("s", "1005-2", "1006-0")
    r.xtrim("s", maxlen=280, approximate=False)
    r.xgroup_create("s", "g1", id="0")
    r.xgroup_create("s", "g2", id="$")
    r.xgroup_create("s", "g3", id="1100-0")
    r.xreadgroup("g1", "alice", {"s": ">"}, count=50)
    r.xreadgroup("g1", "bob", {"s": ">"}, count=30)
    r.xreadgroup("g1", "alice", {"s": "0"}, count=5)  # history: delivery counts go up
    r.xack("s", "g1", "1030-0", "1031-1", "1032-2")
    r.xclaim("s", "g1", "carol", 0, ["1070-0", "1071-1"])
    r.xautoclaim("s", "g1", "dave", 0, "1090-0", count=3)
    r.xreadgroup("g3", "erin", {"s": ">"}, count=10, noack=True)
    r.xgroup_createconsumer("s", "g2", "idle-one")
    r.xgroup_setid("s", "g2", "1200-0", entries_read=150)
    r.xgroup_create("empty", "eg", id="$", mkstream=True)
    r.xadd("gone", {"x": 1}, id="5-5")
    r.xdel("gone", "5-5")
    r.execute_command("XSETID", "gone", "9-9", "ENTRIESADDED", 3, "MAXDELETEDID", "7-0")


def test_streams_round_trip_restart_and_rewrite(server_factory) -> None:
    srv = server_factory()
    r = redis.Redis(port=srv.port)
    build_scenario(r)
    before = {k: full_state(r, k) for k in ("s", "empty", "gone")}
    pending = r.xpending_range("s", "g1", "-", "+", 1000)
    last_delivered = r.xinfo_groups("s")[0]["last-delivered-id"].decode()
    expected_next = r.xrange("s", min="(" + last_delivered, count=1)[0][0]
    srv2 = restart(srv)
    try:
        r = redis.Redis(port=srv2.port)
        assert {k: full_state(r, k) for k in ("s", "empty", "gone")} == before
        assert [(p["message_id"], p["consumer"], p["times_delivered"]) for p in
                r.xpending_range("s", "g1", "-", "+", 1000)] == \
            [(p["message_id"], p["consumer"], p["times_delivered"]) for p in pending]
        assert r.bgrewriteaof()
        deadline = time.monotonic() + 20
        while r.info("persistence")["aof_rewrites"] < 1 or r.info("persistence")["aof_rewrite_in_progress"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert {k: full_state(r, k) for k in ("s", "empty", "gone")} == before
    finally:
        srv2.stop()
    srv3 = ServerProcess(data_dir=srv2.dir, port=srv2.port).start()
    try:
        r = redis.Redis(port=srv3.port)
        assert {k: full_state(r, k) for k in ("s", "empty", "gone")} == before
        # And the group resumes exactly: the next `>` read continues after the last delivery.
        reply = r.xreadgroup("g1", "alice", {"s": ">"}, count=1)
        assert reply[0][1][0][0] == expected_next
    finally:
        srv3.cleanup()


def test_debug_reload_keeps_streams_identical(server_factory) -> None:
    srv = server_factory()
    r = redis.Redis(port=srv.port)
    build_scenario(r)
    before = full_state(r, "s")
    assert r.execute_command("DEBUG", "RELOAD") == b"OK"
    assert full_state(r, "s") == before


@pytest.mark.skipif(not RedisProcess.available(), reason="redis-server is not installed")
def test_stream_aof_replays_into_real_redis(server_factory, real_redis) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    build_scenario(r)
    theirs = redis.Redis(port=real_redis.port)
    for label in ("as logged", "after a rewrite"):
        if label == "after a rewrite":
            r.bgrewriteaof()
            time.sleep(1)
        theirs.flushall()
        out = subprocess.run(["redis-cli", "-p", str(real_redis.port), "--pipe"],
                             input=aof_path(srv).read_bytes(), capture_output=True, timeout=30)
        assert b"errors: 0" in out.stdout, (label, out.stdout)
        for key in ("s", "empty", "gone"):
            assert theirs.xrange(key) == r.xrange(key), (label, key)
            mine = r.xinfo_stream(key)
            other = theirs.xinfo_stream(key)
            for field in ("length", "last-generated-id", "entries-added", "max-deleted-entry-id",
                          "groups"):
                assert mine[field] == other[field], (label, key, field)
        assert [(g["name"], g["pending"], g["last-delivered-id"], g["entries-read"]) for g in
                r.xinfo_groups("s")] == \
               [(g["name"], g["pending"], g["last-delivered-id"], g["entries-read"]) for g in
                theirs.xinfo_groups("s")], label
        assert r.xpending_range("s", "g1", "-", "+", 1000) == theirs.xpending_range("s", "g1", "-", "+", 1000) \
            or [(p["message_id"], p["consumer"], p["times_delivered"]) for p in r.xpending_range("s", "g1", "-", "+", 1000)] == \
               [(p["message_id"], p["consumer"], p["times_delivered"]) for p in theirs.xpending_range("s", "g1", "-", "+", 1000)]
    theirs.flushall()


def test_woken_group_reads_are_logged(server_factory) -> None:
    # A woken XREADGROUP runs again through dispatch: what it delivers then, and the consumer
    # a re-run that blocks again creates, reach the AOF like any command's effects.
    srv = server_factory()
    r = redis.Redis(port=srv.port)
    r.xgroup_create("s", "g", id="$", mkstream=True)
    r.xgroup_create("s", "other", id="$")
    readers = [RawConnection(srv.port) for _ in range(2)]
    try:
        readers[0].send(encode_command("XREADGROUP", "GROUP", "g", "alice", "COUNT", 1, "BLOCK", 0,
                                       "STREAMS", "s", ">"))
        readers[1].send(encode_command("XREADGROUP", "GROUP", "g", "bob", "BLOCK", 0,
                                       "STREAMS", "s", ">"))
        wait_blocked(r, 2)
        pipe = r.pipeline(transaction=True)
        pipe.xgroup_destroy("s", "g")
        pipe.xgroup_create("s", "g", id="$")
        pipe.execute()  # both re-run: new consumers, nothing to read yet
        wait_blocked(r, 2)
        r.xadd("s", {"f": "v"}, id="1-0")
        assert read_reply(readers[0]).count(b"1-0") == 1
        wait_blocked(r, 1)
    finally:
        for reader in readers:
            reader.close()
    before = full_state(r, "s")
    assert [c["name"] for c in r.xinfo_consumers("s", "g")] == [b"alice", b"bob"]
    srv2 = restart(srv)
    try:
        r = redis.Redis(port=srv2.port)
        assert full_state(r, "s") == before
        assert [(p["message_id"], p["consumer"]) for p in r.xpending_range("s", "g", "-", "+", 10)] \
            == [(b"1-0", b"alice")]
    finally:
        srv2.cleanup()


def _producer(port: int, stream: str, acked: list, stop: threading.Event) -> None:
    client = redis.Redis(port=port, socket_timeout=5, retry=no_retry())  # the kill ends it
    try:
        while not stop.is_set():
            pipe = client.pipeline(transaction=False)
            for _ in range(20):
                pipe.xadd(stream, {"v": "x"})
            acked.extend(pipe.execute())
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        pass


def _consumer(port: int, name: str, observed: dict, stop: threading.Event) -> None:
    """Reads with XREADGROUP and acks; records what it saw delivered and acked (acknowledged)."""
    client = redis.Redis(port=port, socket_timeout=5, retry=no_retry())  # the kill ends it
    try:
        while not stop.is_set():
            reply = client.xreadgroup("g", name, {"s": ">"}, count=10, block=100)
            for _stream, entries in reply or []:
                ids = [eid for eid, _ in entries]
                observed["delivered"].update((eid, name) for eid in ids)
                if ids and random.random() < 0.7:
                    # An XACK whose reply is lost to the kill may or may not have been applied.
                    observed["ack_sent"].update(ids)
                    client.xack("s", "g", *ids)
                    observed["acked"].update(ids)
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        pass


def test_kill_9_under_stream_traffic_with_always(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    setup = redis.Redis(port=srv.port)
    setup.xgroup_create("s", "g", id="0", mkstream=True)
    stop = threading.Event()
    acked_ids: list = []
    observed: dict = {"delivered": set(), "acked": set(), "ack_sent": set()}
    threads = [threading.Thread(target=_producer, args=(srv.port, "s", acked_ids, stop)) for _ in range(2)]
    threads += [threading.Thread(target=_consumer, args=(srv.port, f"c{i}", observed, stop)) for i in range(3)]
    for t in threads:
        t.start()
    time.sleep(random.uniform(1.0, 2.0))
    os.kill(srv.proc.pid, signal.SIGKILL)
    srv.proc.wait()
    stop.set()
    for t in threads:
        t.join(10)
    assert acked_ids, "the producers got no reply before the kill"
    srv2 = restart(srv)
    try:
        r = redis.Redis(port=srv2.port)
        present = {eid for eid, _ in r.xrange("s")}
        missing = [eid for eid in acked_ids if eid not in present]
        assert not missing, f"{len(missing)} acknowledged XADDs lost, e.g. {missing[:3]}"
        pending = {p["message_id"]: p["consumer"] for p in r.xpending_range("s", "g", "-", "+", 10**6)}
        # Every entry a consumer saw acked is no longer pending; every delivery not acked is pending
        # for the consumer that received it.
        assert not (observed["acked"] & set(pending))
        for eid, name in observed["delivered"]:
            if eid not in observed["ack_sent"]:
                assert pending.get(eid) == name.encode(), eid
        group = r.xinfo_groups("s")[0]
        def as_tuple(eid: bytes) -> tuple[int, ...]:
            return tuple(int(part) for part in eid.split(b"-"))

        delivered_ids = {as_tuple(eid) for eid, _ in observed["delivered"]}
        if delivered_ids:
            assert as_tuple(group["last-delivered-id"]) >= max(delivered_ids)
    finally:
        srv2.cleanup()
