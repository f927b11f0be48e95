"""A client that does not read its replies is paused, bounded, and (past the limit) disconnected."""

from __future__ import annotations

import socket
import threading
import time

import redis

from tests.serverproc import RawConnection


def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _push_until_stalled(sock: socket.socket, data: bytes, chunk: int) -> tuple[int, bool]:
    """Send without reading until the server stops taking bytes; (bytes sent, connection closed)."""
    sock.setblocking(False)
    sent = 0
    last_progress = time.monotonic()
    while sent < len(data) and time.monotonic() - last_progress < 0.7:
        try:
            n = sock.send(data[sent : sent + chunk])
        except BlockingIOError:
            time.sleep(0.01)
            continue
        except OSError:
            return sent, True
        sent += n
        last_progress = time.monotonic()
    return sent, False


def _echo_requests(count: int, size: int) -> bytes:
    value = b"x" * size
    return b"*2\r\n$4\r\nECHO\r\n$%d\r\n%s\r\n" % (size, value) * count


def test_slow_reader_is_paused_and_does_not_stall_others(server_factory) -> None:
    srv = server_factory()
    slow = RawConnection(srv.port, timeout=30)
    slow.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    before = _rss_kb(srv.proc.pid)
    count, size = 150, 1024 * 1024  # 150 MB of replies that nobody reads yet
    request = _echo_requests(count, size)
    sent, _ = _push_until_stalled(slow.sock, request, 1024 * 1024)
    # The server stopped reading the slow client, so we could not push everything...
    assert sent < len(request)
    # ...its memory stayed bounded (far below 150 MB of pending replies)...
    assert _rss_kb(srv.proc.pid) - before < 60 * 1024
    # ...and other clients are served promptly meanwhile.
    other = redis.Redis(port=srv.port, socket_timeout=2)
    t0 = time.monotonic()
    assert other.ping() is True
    assert time.monotonic() - t0 < 1.0
    other.close()
    # Once the slow client reads, every reply arrives, none lost.
    slow.sock.setblocking(True)
    expected_reply = b"$%d\r\n" % size + b"x" * size + b"\r\n"
    received = 0
    rest = request[sent:]
    sender = threading.Thread(target=slow.sock.sendall, args=(rest,))
    sender.start()
    while received < count:
        assert slow.read_exactly(len(expected_reply)) == expected_reply
        received += 1
    sender.join()
    slow.close()


def test_output_buffer_limit_disconnects(server_factory) -> None:
    srv = server_factory("--client-output-buffer-limit", "normal", "2mb", "1mb", "1")
    slow = RawConnection(srv.port, timeout=10)
    slow.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    request = _echo_requests(40, 1024 * 1024)
    sent, closed = _push_until_stalled(slow.sock, request, 256 * 1024)
    other = redis.Redis(port=srv.port)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        clients = other.client_list()
        if len(clients) == 1:
            break
        time.sleep(0.1)
    assert len(other.client_list()) == 1, "the slow client should have been disconnected"
    other.close()
    slow.sock.setblocking(True)
    slow.sock.settimeout(5)
    if not closed:
        data = b""
        try:
            while chunk := slow.sock.recv(1 << 20):
                data += chunk
        except OSError:
            pass
        # The connection ends without all 40 replies.
        assert len(data) < 40 * (1024 * 1024 + 13)
    assert "output buffer limits" in srv.log()
    slow.close()
