"""CONFIG GET/SET/RESETSTAT/REWRITE/HELP: values, atomicity, and Redis 7.4's error texts."""

from __future__ import annotations

import socket

import pytest
import redis

from server.config import PARAMS
from tests.helpers import no_retry
from tests.serverproc import RawConnection, free_port


def set_error(r: redis.Redis, *args: str) -> str:
    with pytest.raises(redis.ResponseError) as err:
        r.execute_command("CONFIG", "SET", *args)
    return str(err.value)


def test_get_exact_names_glob_and_several_patterns(r):
    assert r.config_get("maxclients") == {"maxclients": "10000"}
    # a plain name is echoed as given; lookup ignores case
    assert r.config_get("MAXCLIENTS") == {"MAXCLIENTS": "10000"}
    got = r.config_get("maxmemory*")
    assert set(got) == {"maxmemory", "maxmemory-policy", "maxmemory-samples",
                        "maxmemory-eviction-tenacity", "maxmemory-clients"}
    both = r.execute_command("CONFIG", "GET", "port", "hz", "nosuch")
    assert both[0::2] == [b"port", b"hz"]
    assert r.config_get("nosuch*") == {}


def test_get_star_returns_every_parameter_and_aliases(r):
    everything = r.config_get("*")
    assert set(everything) == {p.name for p in PARAMS}
    assert everything["lua-time-limit"] == everything["busy-reply-threshold"]


def test_get_reply_types(server):
    conn = RawConnection(server.port)
    try:
        resp2 = b"*2\r\n$2\r\nhz\r\n$2\r\n10\r\n"
        assert conn.request(b"CONFIG GET hz\r\n", len(resp2)) == resp2
        conn.send(b"HELLO 3\r\n")
        conn.sock.settimeout(0.5)
        try:
            while conn.sock.recv(65536):
                pass
        except TimeoutError:
            pass
        conn.sock.settimeout(5)
        conn.buf = b""
        resp3 = b"%1\r\n$2\r\nhz\r\n$2\r\n10\r\n"
        assert conn.request(b"CONFIG GET hz\r\n", len(resp3)) == resp3
    finally:
        conn.close()


def test_set_changes_values_and_is_visible(r):
    try:
        assert r.config_set("maxclients", "1234") is True
        assert r.config_get("maxclients") == {"maxclients": "1234"}
        r.execute_command("CONFIG", "SET", "maxmemory", "10mb", "maxmemory-policy", "ALLKEYS-LRU")
        assert r.config_get("maxmemory") == {"maxmemory": "10485760"}
        assert r.config_get("maxmemory-policy") == {"maxmemory-policy": "allkeys-lru"}
        assert r.info("memory")["maxmemory"] == 10485760
    finally:
        r.execute_command("CONFIG", "SET", "maxclients", "10000", "maxmemory", "0",
                          "maxmemory-policy", "noeviction")


def test_set_error_texts(r):
    assert set_error(r, "foo", "bar") == "Unknown option or number of arguments for CONFIG SET - 'foo'"
    assert set_error(r, "port", "abc") == (
        "CONFIG SET failed (possibly related to argument 'port') - argument couldn't be parsed into an integer")
    assert set_error(r, "databases", "3") == (
        "CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config")
    assert set_error(r, "maxclients", "1", "MAXCLIENTS", "2") == (
        "CONFIG SET failed (possibly related to argument 'MAXCLIENTS') - duplicate parameter")
    assert set_error(r, "dir", "/tmp") == (
        "CONFIG SET failed (possibly related to argument 'dir') - can't set protected config")
    assert set_error(r, "appendonly", "maybe") == (
        "CONFIG SET failed (possibly related to argument 'appendonly') - argument must be 'yes' or 'no'")
    assert set_error(r, "maxmemory-policy", "x") == (
        "CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one "
        "of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, "
        "allkeys-lfu, allkeys-random, noeviction")
    assert set_error(r, "port", "70000") == (
        "CONFIG SET failed (possibly related to argument 'port') - argument must be between 0 and 65535 inclusive")
    assert set_error(r, "hz", "+5").endswith("argument couldn't be parsed into an integer")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("CONFIG", "SET", "hz", "10", "port")
    with pytest.raises(redis.ResponseError, match=r"^wrong number of arguments for 'config\|set' command$"):
        r.execute_command("CONFIG", "SET", "hz")


def test_set_is_all_or_nothing(r):
    assert set_error(r, "maxclients", "555", "appendonly", "maybe").startswith(
        "CONFIG SET failed (possibly related to argument 'appendonly')")
    assert r.config_get("maxclients") == {"maxclients": "10000"}
    assert set_error(r, "maxclients", "555", "foo", "1").startswith("Unknown option")
    assert r.config_get("maxclients") == {"maxclients": "10000"}


def test_requirepass_applies_to_new_connections(r, server):
    r.config_set("requirepass", "s3cret")
    try:
        assert r.ping() is True  # already authenticated connections stay so
        fresh = redis.Redis(port=server.port, retry=no_retry())
        with pytest.raises(redis.AuthenticationError):
            fresh.ping()
        fresh.close()
        authed = redis.Redis(port=server.port, password="s3cret")
        assert authed.ping() is True
        authed.close()
    finally:
        r.config_set("requirepass", "")
    assert redis.Redis(port=server.port).ping() is True


def test_proto_max_bulk_len_reaches_existing_connections(server_factory):
    srv = server_factory()
    conn = RawConnection(srv.port)
    admin = redis.Redis(port=srv.port)
    try:
        assert admin.config_set("proto-max-bulk-len", "1mb")
        conn.send(b"*2\r\n$4\r\nECHO\r\n$2000000\r\n")
        assert conn.read_until_closed() == b"-ERR Protocol error: invalid bulk length\r\n"
    finally:
        conn.close()
        admin.close()


def test_set_port_moves_the_listener(server_factory):
    srv = server_factory()
    admin = redis.Redis(port=srv.port)
    new_port = free_port()
    assert admin.config_set("port", str(new_port))
    moved = redis.Redis(port=new_port)
    assert moved.ping() is True
    assert moved.info("server")["tcp_port"] == new_port
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", srv.port), timeout=1).close()
    # a port in use fails, and the server keeps listening where it was
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen()
    busy = blocker.getsockname()[1]
    try:
        assert set_error(moved, "port", str(busy)) == (
            "CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. "
            "Check server logs.")
        assert moved.config_get("port") == {"port": str(new_port)}
        again = redis.Redis(port=new_port)
        assert again.ping() is True
        again.close()
    finally:
        blocker.close()
        moved.close()
        admin.close()
    srv.port = new_port  # so that the fixture's cleanup still finds it


def test_resetstat(r):
    r.ping()
    assert r.info("stats")["total_commands_processed"] > 0
    assert r.config_resetstat() is True
    stats = r.info("stats")
    assert stats["total_commands_processed"] <= 2
    assert stats["total_error_replies"] == 0


def test_rewrite_without_config_file(r):
    with pytest.raises(redis.ResponseError, match="^The server is running without a config file$"):
        r.execute_command("CONFIG", "REWRITE")


def test_rewrite_updates_the_file(tmp_path):
    from tests.test_cli import RunningServer

    conf = tmp_path / "rivulet.conf"
    conf.write_text("# my settings\nmaxclients 50\n\ntimeout 0\nmaxclients 60\n")
    with RunningServer(str(conf), "--dir", str(tmp_path)) as srv:
        c = redis.Redis(port=srv.port)
        assert c.config_get("maxclients") == {"maxclients": "60"}
        c.config_set("maxclients", "123")
        c.config_set("hz", "20")
        assert c.execute_command("CONFIG", "REWRITE") == b"OK"
        c.close()
    text = conf.read_text()
    lines = text.splitlines()
    assert lines[0] == "# my settings"
    assert lines.count("maxclients 123") == 1 and "maxclients 60" not in text
    assert "timeout 0" in lines
    assert "# Generated by CONFIG REWRITE" in lines and "hz 20" in lines
    with RunningServer(str(conf), "--dir", str(tmp_path)) as srv:
        c = redis.Redis(port=srv.port)
        assert c.config_get("maxclients") == {"maxclients": "123"}
        assert c.config_get("hz") == {"hz": "20"}
        c.close()


def test_help(r):
    lines = r.execute_command("CONFIG", "HELP")
    assert lines[0] == b"CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert b"GET <pattern>" in lines and lines[-1] == b"    Print this help."


def test_differential_against_real_redis(real_redis, r):
    real = redis.Redis(port=real_redis.port)
    try:
        for args in [("foo", "bar"), ("port", "abc"), ("databases", "3"), ("hz", "1", "hz", "2"),
                     ("appendonly", "maybe"), ("maxmemory-policy", "x"), ("port", "70000"),
                     ("maxmemory", "lots"), ("dir", "/tmp"), ("maxclients", "1", "bar", "1")]:
            assert set_error(r, *args) == set_error(real, *args), args
        for pattern in ("maxclients", "MAXCLIENTS", "maxmemory-policy", "lua-time-limit", "appendfsync"):
            assert r.config_get(pattern) == real.config_get(pattern)
    finally:
        real.close()
