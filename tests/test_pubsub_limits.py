"""Pub/Sub delivery under load: a subscriber that does not read never stalls the publisher and
is disconnected by the pubsub class of client-output-buffer-limit (hard limit, and soft limit
held for longer than its seconds); the limit's configuration; many subscribers."""

from __future__ import annotations

import socket
import threading
import time

import redis

from tests.helpers import call_raw, encode_command, read_reply
from tests.serverproc import RawConnection


def _stalled_subscriber(port: int, channel: str) -> RawConnection:
    """A subscriber with a small receive buffer that will not read after its confirmation."""
    conn = RawConnection(port, timeout=10)
    conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
    conn.send(encode_command("SUBSCRIBE", channel))
    read_reply(conn)
    return conn


def _wait(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def _names(r: redis.Redis) -> list[str]:
    return [c["name"] for c in r.client_list()]


def test_default_limits_include_pubsub_class(server, r):
    assert r.config_get("client-output-buffer-limit")["client-output-buffer-limit"].endswith(
        "pubsub 33554432 8388608 60")


def test_hard_limit_disconnects_a_subscriber_that_does_not_read(server_factory):
    srv = server_factory("--client-output-buffer-limit", "pubsub", "1mb", "0", "0")
    slow = _stalled_subscriber(srv.port, "c")
    fast = RawConnection(srv.port, timeout=30)
    fast.send(encode_command("SUBSCRIBE", "c"))
    read_reply(fast)
    message = b"x" * 100_000
    expected = b"*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$100000\r\n" + message + b"\r\n"
    received: list[bool] = []
    reader = threading.Thread(target=lambda: received.extend(
        read_reply(fast) == expected for _ in range(200)))
    reader.start()
    pub = redis.Redis(port=srv.port)
    t0 = time.monotonic()
    receivers = [pub.publish("c", message) for _ in range(200)]  # 20 MB to each subscriber
    elapsed = time.monotonic() - t0
    # The publisher was never held up by the stalled subscriber (a generous bound for a pure
    # Python build on a loaded machine; a publisher waiting on the stalled socket never ends).
    assert elapsed < 20
    assert receivers[0] == 2 and receivers[-1] == 1
    assert _wait(lambda: pub.info("stats")["client_output_buffer_limit_disconnections"] == 1)
    assert pub.pubsub_numsub("c") == [(b"c", 1)]
    assert "output buffer limits" in srv.log()
    # The subscriber that reads got everything, in order.
    reader.join(30)
    assert received == [True] * 200
    for c in (slow, fast):
        c.close()
    pub.close()


def test_soft_limit_disconnects_after_its_seconds(server_factory):
    srv = server_factory("--client-output-buffer-limit", "pubsub", "0", "256kb", "2")
    slow = _stalled_subscriber(srv.port, "c")
    pub = redis.Redis(port=srv.port)
    message = b"y" * 50_000
    # Well over the soft limit at once (the kernel's buffers hold a few MB), then a trickle:
    # the limit is checked as output is added, as Redis does.
    t0 = time.monotonic()
    for _ in range(160):
        pub.publish("c", message)
    if time.monotonic() - t0 < 1.5:
        assert pub.pubsub_numsub("c") == [(b"c", 1)], "over the soft limit for less than 2 s"
    while pub.pubsub_numsub("c") == [(b"c", 1)] and time.monotonic() - t0 < 15:
        pub.publish("c", b"z")
        time.sleep(0.05)
    elapsed = time.monotonic() - t0
    assert pub.pubsub_numsub("c") == [(b"c", 0)]
    assert 2.0 <= elapsed < 8
    assert pub.info("stats")["client_output_buffer_limit_disconnections"] == 1
    pub.config_resetstat()
    assert pub.info("stats")["client_output_buffer_limit_disconnections"] == 0
    slow.close()
    pub.close()


def test_pubsub_limit_set_at_run_time_and_normal_class_unaffected(server_factory):
    srv = server_factory()
    r = redis.Redis(port=srv.port)
    r.config_set("client-output-buffer-limit", "pubsub 512kb 0 0")
    limits = r.config_get("client-output-buffer-limit")["client-output-buffer-limit"]
    assert limits.startswith("normal 0 0 0 ") and limits.endswith("pubsub 524288 0 0")
    slow = _stalled_subscriber(srv.port, "c")
    for _ in range(150):
        r.publish("c", b"m" * 100_000)
    assert _wait(lambda: r.pubsub_numsub("c") == [(b"c", 0)])
    slow.close()
    # After RESET a client is a normal client again: the pubsub class no longer applies.
    conn = RawConnection(srv.port)
    conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
    conn.send(encode_command("SUBSCRIBE", "c") + encode_command("RESET"))
    read_reply(conn)
    assert read_reply(conn) == b"+RESET\r\n"
    assert r.publish("c", "x") == 0
    r.close()
    conn.close()


def test_many_subscribers_each_get_every_message(server):
    subs = []
    for i in range(200):
        conn = RawConnection(server.port)
        conn.send(encode_command("SUBSCRIBE", "all", f"own:{i}"))
        subs.append(conn)
    for conn in subs:
        read_reply(conn)
        read_reply(conn)
    pub = RawConnection(server.port)
    pub.send(b"".join(encode_command("PUBLISH", "all", str(n)) for n in range(20)))
    assert [read_reply(pub) for _ in range(20)] == [b":200\r\n"] * 20
    assert call_raw(pub, "PUBLISH", "own:7", "mine") == b":1\r\n"
    for i, conn in enumerate(subs):
        got = [read_reply(conn) for _ in range(20)]
        assert got == [b"*3\r\n$7\r\nmessage\r\n$3\r\nall\r\n$%d\r\n%d\r\n" % (len(str(n)), n)
                       for n in range(20)]
        if i == 7:
            assert read_reply(conn) == b"*3\r\n$7\r\nmessage\r\n$5\r\nown:7\r\n$4\r\nmine\r\n"
        conn.close()
    pub.close()
