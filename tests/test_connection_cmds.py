"""PING, ECHO, QUIT, SELECT, RESET, HELLO, AUTH with Redis's replies and errors."""

from __future__ import annotations

import pytest
import redis

from tests.helpers import no_retry
from tests.serverproc import RawConnection


def test_ping_with_message(raw: RawConnection) -> None:
    assert raw.request(b"PING hi\r\n", 8) == b"$2\r\nhi\r\n"
    raw.send(b"HELLO 3\r\n")
    raw.sock.recv(4096)
    assert raw.request(b"PING\r\n", 7) == b"+PONG\r\n"


def test_ping_and_echo(rc: redis.Redis) -> None:
    assert rc.ping() is True
    assert rc.echo("hello") == b"hello"
    with pytest.raises(redis.ResponseError, match="^wrong number of arguments for 'ping' command$"):
        rc.execute_command("PING", "a", "b")
    with pytest.raises(redis.ResponseError, match="^wrong number of arguments for 'echo' command$"):
        rc.execute_command("ECHO")


def test_unknown_command_error_text(raw: RawConnection) -> None:
    raw.send(b"*3\r\n$3\r\nFOO\r\n$1\r\na\r\n$2\r\nbc\r\n")
    expected = b"-ERR unknown command 'FOO', with args beginning with: 'a' 'bc' \r\n"
    assert raw.read_exactly(len(expected)) == expected
    raw.send(b"FOO\r\n")
    expected = b"-ERR unknown command 'FOO', with args beginning with: \r\n"
    assert raw.read_exactly(len(expected)) == expected


def test_select(rc: redis.Redis) -> None:
    rc.set("k", "db0")
    assert rc.execute_command("SELECT", 1) in (True, b"OK")
    assert rc.get("k") is None
    with pytest.raises(redis.ResponseError, match="^DB index is out of range$"):
        rc.execute_command("SELECT", 16)
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        rc.execute_command("SELECT", "x")
    rc.execute_command("SELECT", 0)
    assert rc.get("k") == b"db0"


def test_quit_replies_ok_then_closes(raw: RawConnection) -> None:
    raw.send(b"QUIT\r\nPING\r\n")
    assert raw.read_until_closed() == b"+OK\r\n"


def test_hello_replies(raw: RawConnection) -> None:
    raw.send(b"HELLO 3\r\n")
    data = b""
    while not data.endswith(b"modules\r\n*0\r\n"):
        data += raw.sock.recv(4096)
    assert data.startswith(b"%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$5\r\n7.4.0\r\n")
    assert b"$5\r\nproto\r\n:3\r\n" in data
    # Now in RESP3: a null is `_`.
    assert raw.request(b"GET missing\r\n", 3) == b"_\r\n"
    raw.send(b"HELLO 2\r\n")
    data = b""
    while not data.endswith(b"modules\r\n*0\r\n"):
        data += raw.sock.recv(4096)
    assert data.startswith(b"*14\r\n")
    assert raw.request(b"GET missing\r\n", 5) == b"$-1\r\n"


def test_hello_errors(r: redis.Redis) -> None:
    with pytest.raises(redis.ResponseError, match="^NOPROTO unsupported protocol version$"):
        r.execute_command("HELLO", 4)
    with pytest.raises(redis.ResponseError, match="^Protocol version is not an integer or out of range$"):
        r.execute_command("HELLO", "x")
    with pytest.raises(redis.ResponseError, match="^Syntax error in HELLO option 'bogus'$"):
        r.execute_command("HELLO", 3, "bogus")


def test_hello_setname(r: redis.Redis) -> None:
    reply = r.execute_command("HELLO", 2, "SETNAME", "worker-1")
    assert reply[reply.index(b"proto") + 1] == 2
    assert r.execute_command("CLIENT", "GETNAME") in (b"worker-1", "worker-1")


def test_reset(raw: RawConnection) -> None:
    raw.send(b"SELECT 2\r\nMULTI\r\nRESET\r\n")
    assert raw.read_exactly(5 + 5 + 8) == b"+OK\r\n+OK\r\n+RESET\r\n"
    raw.send(b"EXEC\r\nGET k\r\n")
    assert raw.read_exactly(25 + 5) == b"-ERR EXEC without MULTI\r\n$-1\r\n"


def test_auth_without_password_configured(r: redis.Redis) -> None:
    r.set_retry(no_retry())
    with pytest.raises(redis.AuthenticationError, match="^AUTH <password> called without any password configured"):
        r.execute_command("AUTH", "x")
    assert r.execute_command("AUTH", "default", "anything") in (True, b"OK")
    with pytest.raises(redis.AuthenticationError):
        r.execute_command("AUTH", "someone", "x")


def test_requirepass(server_factory) -> None:
    srv = server_factory("--requirepass", "s3cret")
    conn = RawConnection(srv.port)
    assert conn.request(b"GET k\r\n", 32) == b"-NOAUTH Authentication required.\r\n"[:32]
    conn.read_exactly(2)
    conn.send(b"AUTH wrong\r\n")
    expected = b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
    assert conn.read_exactly(len(expected)) == expected
    assert conn.request(b"AUTH s3cret\r\n", 5) == b"+OK\r\n"
    assert conn.request(b"PING\r\n", 7) == b"+PONG\r\n"
    conn.close()
    # redis-py authenticating through HELLO 3 AUTH, and through AUTH in RESP2
    for protocol in (2, 3):
        client = redis.Redis(port=srv.port, password="s3cret", protocol=protocol)
        assert client.ping() is True
        client.close()
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(port=srv.port, password="nope", protocol=3, retry=no_retry()).ping()


def test_hello_requires_auth(server_factory) -> None:
    srv = server_factory("--requirepass", "pw")
    conn = RawConnection(srv.port)
    conn.send(b"HELLO 3\r\n")
    line = conn.sock.recv(4096)
    assert line.startswith(b"-NOAUTH HELLO must be called with the client already authenticated")
    conn.send(b"HELLO 3 AUTH default pw\r\n")
    assert conn.sock.recv(4096).startswith(b"%7\r\n")
    conn.close()


async def test_async_client(ar) -> None:
    assert await ar.ping() is True
    assert await ar.echo("x") == b"x"
