"""The wire protocol end to end: inline commands, split and pipelined requests, protocol errors."""

from __future__ import annotations

import socket

import pytest

from tests.serverproc import RawConnection


def test_inline_ping(raw: RawConnection) -> None:
    assert raw.request(b"PING\r\n", 7) == b"+PONG\r\n"


def test_inline_without_cr_and_quoted_args(raw: RawConnection) -> None:
    assert raw.request(b'ECHO "hello world"\n', 18) == b"$11\r\nhello world\r\n"
    assert raw.request(b"ECHO 'it\\'s'\r\n", 10) == b"$4\r\nit's\r\n"


def test_inline_escapes(raw: RawConnection) -> None:
    assert raw.request(b'ECHO "a\\x41\\n"\r\n', 9) == b"$3\r\naA\n\r\n"


def test_empty_inline_lines_are_ignored(raw: RawConnection) -> None:
    assert raw.request(b"\r\n\r\nPING\r\n", 7) == b"+PONG\r\n"


def test_request_split_into_single_bytes(raw: RawConnection) -> None:
    request = b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n"
    raw.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for i in range(len(request)):
        raw.send(request[i : i + 1])
    assert raw.read_exactly(5 + 11) == b"+OK\r\n$5\r\nvalue\r\n"


def test_ten_thousand_pipelined_commands_in_one_write(raw: RawConnection) -> None:
    n = 10_000
    request = b"".join(b"*2\r\n$4\r\nECHO\r\n$%d\r\n%d\r\n" % (len(str(i)), i) for i in range(n))
    expected = b"".join(b"$%d\r\n%d\r\n" % (len(str(i)), i) for i in range(n))
    raw.send(request)
    assert raw.read_exactly(len(expected)) == expected


def test_mixed_inline_and_multibulk(raw: RawConnection) -> None:
    raw.send(b"PING\r\n*1\r\n$4\r\nPING\r\nECHO x\r\n")
    assert raw.read_exactly(7 + 7 + 7) == b"+PONG\r\n+PONG\r\n$1\r\nx\r\n"


PROTOCOL_ERRORS = [
    (b"*abc\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    (b"*1\r\n$abc\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*1\r\n$-1\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*1\r\n:1\r\n", b"-ERR Protocol error: expected '$', got ':'\r\n"),
    (b"*1\r\nfoo\r\n", b"-ERR Protocol error: expected '$', got 'f'\r\n"),
    (b'ECHO "unbalanced\r\n', b"-ERR Protocol error: unbalanced quotes in request\r\n"),
    (b"*1\r\n$1000000000000\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*3000000000\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
]


@pytest.mark.parametrize(("request_bytes", "reply"), PROTOCOL_ERRORS)
def test_protocol_errors_reply_and_close(raw: RawConnection, request_bytes: bytes, reply: bytes) -> None:
    raw.send(request_bytes)
    assert raw.read_until_closed() == reply


def test_commands_before_a_protocol_error_are_answered(raw: RawConnection) -> None:
    raw.send(b"PING\r\n*1\r\n$4\r\nPING\r\n*x\r\n")
    assert raw.read_until_closed() == b"+PONG\r\n+PONG\r\n-ERR Protocol error: invalid multibulk length\r\n"


def test_too_big_inline_request(raw: RawConnection) -> None:
    raw.send(b"A" * (64 * 1024 + 10))
    assert raw.read_until_closed() == b"-ERR Protocol error: too big inline request\r\n"


def test_too_big_mbulk_count_string(raw: RawConnection) -> None:
    raw.send(b"*" + b"1" * (64 * 1024 + 10))
    assert raw.read_until_closed() == b"-ERR Protocol error: too big mbulk count string\r\n"


def test_bulk_over_proto_max_bulk_len(server_factory) -> None:
    srv = server_factory("--proto-max-bulk-len", "1mb")
    conn = RawConnection(srv.port)
    conn.send(b"*2\r\n$4\r\nECHO\r\n$%d\r\n" % (1024 * 1024 + 1))
    assert conn.read_until_closed() == b"-ERR Protocol error: invalid bulk length\r\n"
    conn.close()
    conn = RawConnection(srv.port)
    value = b"x" * (1024 * 1024)
    conn.send(b"*2\r\n$4\r\nECHO\r\n$%d\r\n%s\r\n" % (len(value), value))
    assert conn.read_exactly(len(value) + 12) == b"$%d\r\n%s\r\n" % (len(value), value)
    conn.close()


def test_query_buffer_limit_closes_without_reply(server_factory) -> None:
    srv = server_factory("--client-query-buffer-limit", "1mb")
    conn = RawConnection(srv.port)
    # A bulk that is allowed by proto-max-bulk-len but larger than the query buffer limit.
    conn.send(b"*2\r\n$4\r\nECHO\r\n$%d\r\n" % (4 * 1024 * 1024))
    try:
        for _ in range(40):
            conn.send(b"x" * (128 * 1024))
    except OSError:
        pass
    # Closed while our bytes are still unread on its side: a reset is as good as a FIN here.
    assert conn.read_until_closed(reset_ok=True) == b""
    conn.close()


def test_unauthenticated_multibulk_limit(server_factory) -> None:
    srv = server_factory("--requirepass", "secret")
    conn = RawConnection(srv.port)
    conn.send(b"*20\r\n")
    assert conn.read_until_closed() == b"-ERR Protocol error: unauthenticated multibulk length\r\n"
    conn.close()


def test_large_value_round_trip(r) -> None:
    value = b"v" * (8 * 1024 * 1024)
    assert r.echo(value) == value
