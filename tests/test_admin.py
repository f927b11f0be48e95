"""TIME, DEBUG LOG/SLEEP, SHUTDOWN, FUNCTION FLUSH and SCRIPT FLUSH."""

from __future__ import annotations

import time

import pytest
import redis

from tests.serverproc import RawConnection


def test_time(r):
    conn = r.connection_pool.get_connection()
    try:
        conn.send_command("TIME")
        seconds, micros = conn.read_response()  # two bulk strings, as Redis sends them
    finally:
        r.connection_pool.release(conn)
    assert seconds.isdigit() and micros.isdigit()
    assert abs(int(seconds) - time.time()) < 5
    assert 0 <= int(micros) < 1_000_000
    assert isinstance(r.time()[0], int)


def test_debug_sleep_blocks_the_server(r, server):
    other = redis.Redis(port=server.port)
    started = time.monotonic()
    assert r.execute_command("DEBUG", "SLEEP", "0.3") == b"OK"
    assert time.monotonic() - started >= 0.29
    assert r.execute_command("DEBUG", "SLEEP", "0") == b"OK"
    assert r.execute_command("DEBUG", "SLEEP", "abc") == b"OK"  # strtod: reads as 0
    assert other.ping() is True
    other.close()


def test_debug_log_writes_to_the_server_log(r, server):
    assert r.execute_command("DEBUG", "LOG", "hello-from-test-123") == b"OK"
    deadline = time.monotonic() + 5
    while "DEBUG LOG: hello-from-test-123" not in server.log():
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_debug_errors(r):
    with pytest.raises(redis.ResponseError,
                       match=r"^unknown subcommand or wrong number of arguments for 'nope'\. Try DEBUG HELP\.$"):
        r.execute_command("DEBUG", "nope")
    with pytest.raises(redis.ResponseError, match=r"for 'LOG'\. Try DEBUG HELP\.$"):
        r.execute_command("DEBUG", "LOG")
    assert r.execute_command("DEBUG", "HELP")[0].startswith(b"DEBUG <subcommand>")


def test_debug_can_be_disabled(server_factory):
    srv = server_factory("--enable-debug-command", "no")
    c = redis.Redis(port=srv.port)
    with pytest.raises(redis.ResponseError, match="^DEBUG command not allowed"):
        c.execute_command("DEBUG", "SLEEP", "0")
    c.close()


def test_shutdown_syntax_errors(r):
    for args in (("BOGUS",), ("SAVE", "NOSAVE"), ("ABORT", "NOW")):
        with pytest.raises(redis.ResponseError, match="^syntax error$"):
            r.execute_command("SHUTDOWN", *args)
    with pytest.raises(redis.ResponseError, match=r"^No shutdown in progress\.$"):
        r.execute_command("SHUTDOWN", "ABORT")


def test_shutdown_sends_no_reply_and_the_process_exits_zero(server_factory):
    srv = server_factory()
    conn = RawConnection(srv.port)
    other = RawConnection(srv.port)
    try:
        conn.send(b"SHUTDOWN NOSAVE\r\nPING\r\n")
        assert conn.read_until_closed() == b""
        assert other.is_closed()
        assert srv.proc.wait(10) == 0
        assert "ready to exit" in srv.log()
    finally:
        conn.close()
        other.close()


def test_function_and_script_flush(r):
    for cmd in ("FUNCTION", "SCRIPT"):
        assert r.execute_command(cmd, "FLUSH") == b"OK"
        assert r.execute_command(cmd, "FLUSH", "ASYNC") == b"OK"
        assert r.execute_command(cmd, "flush", "sync") == b"OK"
    with pytest.raises(redis.ResponseError, match=r"^FUNCTION FLUSH only supports SYNC\|ASYNC option$"):
        r.execute_command("FUNCTION", "FLUSH", "LATER")
    with pytest.raises(redis.ResponseError, match=r"^SCRIPT FLUSH only support SYNC\|ASYNC option$"):
        r.execute_command("SCRIPT", "FLUSH", "LATER")
    assert r.script_flush() is True
    assert r.function_flush() is True


def test_differential_against_real_redis(real_redis, r):
    real = redis.Redis(port=real_redis.port)
    try:
        for args in [("SHUTDOWN", "BOGUS"), ("SHUTDOWN", "ABORT"), ("SHUTDOWN", "SAVE", "NOSAVE"),
                     ("FUNCTION", "FLUSH", "x"), ("SCRIPT", "FLUSH", "x"), ("TIME", "x")]:
            errors = []
            for c in (r, real):
                with pytest.raises(redis.ResponseError) as err:
                    c.execute_command(*args)
                errors.append(str(err.value))
            assert errors[0] == errors[1], args
    finally:
        real.close()
