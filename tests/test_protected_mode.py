"""Protected mode: with no password for the default user, a client from a non-loopback address
gets Redis's -DENIED explanation and is disconnected; loopback clients are served.

The servers listen on 127.0.0.1 only; the non-loopback client is a socket bound to one of this
machine's own non-loopback addresses before it connects to 127.0.0.1, so the server sees a
peer that is not 127.* (Linux delivers it over the loopback device).
"""

from __future__ import annotations

import re
import socket
import subprocess

import pytest
import redis

from server.protected_mode import PROTECTED_MODE_ERROR
from tests.serverproc import RedisProcess


def _candidates() -> list[str]:
    found: list[str] = []
    try:
        out = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True,
                             timeout=10).stdout
        found += re.findall(r"inet (\d+\.\d+\.\d+\.\d+)/", out)
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        found += socket.gethostbyname_ex(socket.gethostname())[2]
    except OSError:
        pass
    return [a for a in dict.fromkeys(found) if not a.startswith("127.")]


def _reaches_loopback_from(addr: str) -> bool:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        try:
            with socket.socket() as c:
                c.settimeout(2)
                c.bind((addr, 0))
                c.connect(listener.getsockname())
                peer = listener.accept()
                peer[0].close()
                return peer[1][0] == addr
        except OSError:
            return False


@pytest.fixture(scope="module")
def outside_addr() -> str:
    for addr in _candidates():
        if _reaches_loopback_from(addr):
            return addr
    pytest.skip("NO NON-LOOPBACK ADDRESS on this machine (ip addr): protected mode's refusal of "
                "outside clients is NOT TESTED")


def connect_from(addr: str, port: int) -> socket.socket:
    s = socket.socket()
    s.settimeout(5)
    s.bind((addr, 0))
    s.connect(("127.0.0.1", port))
    return s


def read_all(s: socket.socket) -> bytes:
    data = b""
    while True:
        try:
            chunk = s.recv(65536)
        except (ConnectionResetError, TimeoutError):
            break
        if not chunk:
            break
        data += chunk
    return data


def outside_ping(addr: str, port: int) -> bytes:
    """PING from the outside address: what the server sends before closing (or the reply)."""
    with connect_from(addr, port) as s:
        try:
            s.sendall(b"PING\r\n")
        except OSError:
            pass
        s.settimeout(3)
        first = b""
        try:
            first = s.recv(65536)
        except (ConnectionResetError, TimeoutError):
            return first
        if first.startswith(b"-DENIED"):
            return first + read_all(s)
        return first


def test_outside_client_denied_and_closed(server_factory, outside_addr):
    srv = server_factory()
    with redis.Redis(port=srv.port) as local:
        before = local.info("stats")
        reply = outside_ping(outside_addr, srv.port)
        assert reply == PROTECTED_MODE_ERROR
        after = local.info("stats")
        assert after["rejected_connections"] == before["rejected_connections"] + 1
        # As Redis: a refused connection counts as rejected, not as received.
        assert after["total_connections_received"] == before["total_connections_received"]
        assert local.ping()  # loopback clients are served


def test_password_or_protected_mode_no_lets_outside_clients_in(server_factory, outside_addr):
    srv = server_factory()
    with redis.Redis(port=srv.port) as local:
        local.config_set("protected-mode", "no")
        assert outside_ping(outside_addr, srv.port) == b"+PONG\r\n"
        local.config_set("protected-mode", "yes")
        assert outside_ping(outside_addr, srv.port) == PROTECTED_MODE_ERROR
        local.config_set("requirepass", "s3cret")
    # With a password the outside client is served: it must authenticate like anyone.
    assert outside_ping(outside_addr, srv.port) == b"-NOAUTH Authentication required.\r\n"


def test_same_refusal_as_redis(server_factory, outside_addr):
    if not RedisProcess.available():
        pytest.skip("redis-server is missing: protected mode NOT compared with Redis")
    real = RedisProcess().start()
    try:
        theirs = outside_ping(outside_addr, real.port)
    finally:
        real.cleanup()
    srv = server_factory()
    ours = outside_ping(outside_addr, srv.port)
    # Redis 7.0 words one sentence differently; 7.4 (src/networking.c) is what Rivulet sends.
    assert ours == theirs.replace(b"4) Setup a an authentication", b"4) Set up an authentication")
    assert ours == PROTECTED_MODE_ERROR
