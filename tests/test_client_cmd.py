"""CLIENT subcommands against a real server: replies and error texts as Redis 7.4."""

from __future__ import annotations

import threading
import time

import pytest
import redis

from tests.helpers import resp3_reply_bytes
from tests.serverproc import RawConnection

LIST_FIELDS = [
    "id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "sub", "psub", "ssub",
    "multi", "watch", "qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp", "obl", "oll",
    "omem", "tot-mem", "events", "cmd", "user", "redir", "resp", "lib-name", "lib-ver",
]


def fields(line: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in line.split(" "))


def client_line(r: redis.Redis, cid: int) -> dict[str, str]:
    text = r.execute_command("CLIENT", "LIST", "ID", cid)
    text = text.decode() if isinstance(text, bytes) else text
    lines = [line for line in text.split("\n") if line]
    assert len(lines) == 1, text
    return fields(lines[0])


@pytest.fixture
def other(server):
    c = redis.Redis(port=server.port, protocol=2)
    yield c
    c.close()


def test_id_is_unique_and_matches_client_info(r, other):
    mine, theirs = r.client_id(), other.client_id()
    assert isinstance(mine, int) and mine != theirs
    assert str(r.client_info()["id"]) == str(mine)


def test_setname_getname_and_clear(rc):
    assert rc.client_getname() is None
    assert rc.client_setname("worker-1") is True
    assert rc.client_getname() in (b"worker-1", "worker-1")
    assert rc.execute_command("CLIENT", "SETNAME", "") in (b"OK", "OK", True)
    assert rc.client_getname() is None


@pytest.mark.parametrize("bad", ["has space", "new\nline", "tab\there", "caf\u00e9"])
def test_setname_rejects_special_characters(r, bad):
    with pytest.raises(redis.ResponseError) as err:
        r.execute_command("CLIENT", "SETNAME", bad)
    assert str(err.value) == "Client names cannot contain spaces, newlines or special characters."


def test_setinfo_shows_in_client_list_and_errors(r):
    assert r.execute_command("CLIENT", "SETINFO", "LIB-NAME", "mylib") == b"OK"
    assert r.execute_command("CLIENT", "SETINFO", "lib-ver", "1.2.3") == b"OK"
    info = {k: str(v) for k, v in r.client_info().items()}
    assert info["lib-name"] == "mylib" and info["lib-ver"] == "1.2.3"
    with pytest.raises(redis.ResponseError, match=r"^Unrecognized option 'lib-foo'$"):
        r.execute_command("CLIENT", "SETINFO", "lib-foo", "x")
    with pytest.raises(redis.ResponseError,
                       match=r"^LIB-NAME cannot contain spaces, newlines or special characters\.$"):
        r.execute_command("CLIENT", "SETINFO", "LIB-NAME", "a b")
    r.execute_command("CLIENT", "SETINFO", "lib-name", "")
    assert r.client_info()["lib-name"] == ""


def test_redis_py_resp3_handshake_sets_lib_name(server):
    c = redis.Redis(port=server.port, protocol=3)
    try:
        info = {k: str(v) for k, v in c.client_info().items()}
        assert info["resp"] == "3"
        assert info["lib-name"].startswith("redis-py")
        assert info["lib-ver"] == redis.__version__
    finally:
        c.close()


def test_client_list_line_has_every_redis_field_in_order(r):
    text = r.execute_command("CLIENT", "LIST").decode()
    assert text.endswith("\n")
    mine = [line for line in text.splitlines() if f"id={r.client_id()} " in line + " "]
    assert len(mine) == 1
    names = [part.split("=", 1)[0] for part in mine[0].split(" ")]
    assert names == LIST_FIELDS
    f = fields(mine[0])
    assert f["flags"] == "N" and f["db"] == "0" and f["multi"] == "-1"
    assert f["cmd"] == "client|list" and f["user"] == "default" and f["resp"] == "2"
    assert f["laddr"].endswith(f":{r.connection_pool.connection_kwargs['port']}")
    assert f["argv-mem"] == str(len("CLIENT") + len("LIST"))


def test_client_info_is_verbatim_in_resp3(server):
    data = resp3_reply_bytes(server.port, b"CLIENT INFO\r\n")
    assert data.startswith(b"=")
    assert b"\r\ntxt:id=" in data and b" resp=3 " in data


def test_client_list_filters_and_errors(r, other):
    oid = other.client_id()
    assert client_line(r, oid)["id"] == str(oid)
    text = r.execute_command("CLIENT", "LIST", "ID", oid, r.client_id(), 999999).decode()
    assert len(text.splitlines()) == 2
    normal = r.execute_command("CLIENT", "LIST", "TYPE", "normal").decode()
    assert f"id={oid} " in normal
    assert r.execute_command("CLIENT", "LIST", "TYPE", "pubsub") == b""
    with pytest.raises(redis.ResponseError, match=r"^Unknown client type 'bogus'$"):
        r.execute_command("CLIENT", "LIST", "TYPE", "bogus")
    with pytest.raises(redis.ResponseError, match=r"^Invalid client ID$"):
        r.execute_command("CLIENT", "LIST", "ID", "abc")
    with pytest.raises(redis.ResponseError, match=r"^syntax error$"):
        r.execute_command("CLIENT", "LIST", "TYPE")


def test_flags_multi_watch_dirty_and_no_evict(r, other):
    oid = other.client_id()
    r.set("k", "1")
    conn = other.connection_pool.get_connection()
    try:
        conn.send_command("WATCH", "k")
        assert conn.read_response() == b"OK"
        conn.send_command("MULTI")
        conn.read_response()
        conn.send_command("GET", "k")
        conn.read_response()
        f = client_line(r, oid)
        assert f["flags"] == "x" and f["multi"] == "1" and f["watch"] == "1"
        r.set("k", "2")  # touching the watched key makes EXEC fail: flag d
        assert client_line(r, oid)["flags"] == "xd"
        conn.send_command("EXEC")
        assert conn.read_response() is None
        assert client_line(r, oid)["flags"] == "N"
        conn.send_command("CLIENT", "NO-EVICT", "on")
        assert conn.read_response() == b"OK"
        conn.send_command("CLIENT", "NO-TOUCH", "on")
        assert conn.read_response() == b"OK"
        assert client_line(r, oid)["flags"] == "eT"
        conn.send_command("CLIENT", "NO-EVICT", "maybe")
        with pytest.raises(redis.ResponseError, match="^syntax error$"):
            conn.read_response()
    finally:
        other.connection_pool.release(conn)


def test_kill_old_form(r, server):
    victim = RawConnection(server.port)
    try:
        victim.send(b"CLIENT ID\r\n")
        vid = int(victim.sock.recv(100)[1:-2])
        addr = client_line(r, vid)["addr"]
        assert r.execute_command("CLIENT", "KILL", addr) == b"OK"
        assert victim.is_closed()
        with pytest.raises(redis.ResponseError, match=r"^No such client$"):
            r.execute_command("CLIENT", "KILL", addr)
    finally:
        victim.close()


def test_kill_filters(r, other, server):
    oid = other.client_id()
    assert r.execute_command("CLIENT", "KILL", "ID", oid) == 1
    assert r.execute_command("CLIENT", "KILL", "ID", oid) == 0
    # SKIPME defaults to yes: our own id matches nothing
    assert r.execute_command("CLIENT", "KILL", "ID", r.client_id()) == 0
    assert r.execute_command("CLIENT", "KILL", "MAXAGE", 100000) == 0
    assert r.execute_command("CLIENT", "KILL", "USER", "default", "ID", 999999) == 0
    for args, message in [
        (("ID", 0), "client-id should be greater than 0"),
        (("ID", "x"), "client-id should be greater than 0"),
        (("MAXAGE", 0), "maxage should be greater than 0"),
        (("MAXAGE", "x"), "maxage is not an integer or out of range"),
        (("TYPE", "bogus"), "Unknown client type 'bogus'"),
        (("USER", "nobody"), "No such user 'nobody'"),
        (("SKIPME", "maybe"), "syntax error"),
        (("BOGUS", "1"), "syntax error"),
        (("ID", "1", "TYPE"), "syntax error"),
    ]:
        with pytest.raises(redis.ResponseError) as err:
            r.execute_command("CLIENT", "KILL", *args)
        assert str(err.value) == message, args


def test_kill_by_laddr_and_self_gets_reply_first(server):
    conn = RawConnection(server.port)
    try:
        conn.send(b"CLIENT ID\r\n")
        cid = int(conn.sock.recv(100)[1:-2])
        conn.send(b"CLIENT KILL ID %d SKIPME no\r\nPING\r\n" % cid)
        data = conn.read_until_closed()
        assert data == b":1\r\n"  # the reply, then the close: PING never runs
    finally:
        conn.close()


def _block_in_thread(port: int, result: list) -> tuple[redis.Redis, threading.Thread]:
    c = redis.Redis(port=port, protocol=2)
    cid = c.client_id()

    def run() -> None:
        try:
            result.append(c.execute_command("XREAD", "BLOCK", 0, "STREAMS", "nostream", "$"))
        except redis.ResponseError as exc:
            result.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    result.append(cid)
    return c, t


def test_unblock(r, server):
    assert r.execute_command("CLIENT", "UNBLOCK", r.client_id()) == 0
    assert r.execute_command("CLIENT", "UNBLOCK", 999999, "TIMEOUT") == 0
    with pytest.raises(redis.ResponseError, match=r"^CLIENT UNBLOCK reason should be TIMEOUT or ERROR$"):
        r.execute_command("CLIENT", "UNBLOCK", 1, "LATER")
    with pytest.raises(redis.ResponseError, match=r"^value is not an integer or out of range$"):
        r.execute_command("CLIENT", "UNBLOCK", "x")
    for reason, expect_error in (("TIMEOUT", False), ("ERROR", True)):
        result: list = []
        c, t = _block_in_thread(server.port, result)
        cid = result[0]
        deadline = time.monotonic() + 5
        while "b" not in client_line(r, cid)["flags"]:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert r.info("clients")["blocked_clients"] >= 1
        assert r.execute_command("CLIENT", "UNBLOCK", cid, reason) == 1
        t.join(5)
        if expect_error:
            assert str(result[1]) == "UNBLOCKED client unblocked via CLIENT UNBLOCK"
        else:
            assert result[1] == []  # the null array of a timeout, as redis-py's XREAD parser returns it
        c.close()


def test_help_and_unknown_subcommand(r):
    lines = r.execute_command("CLIENT", "HELP")
    assert lines[0] == b"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert lines[-2:] == [b"HELP", b"    Print this help."]
    assert b"SETINFO <option> <value>" in lines
    with pytest.raises(redis.ResponseError, match=r"^unknown subcommand 'Foo'\. Try CLIENT HELP\.$"):
        r.execute_command("CLIENT", "Foo")
    with pytest.raises(redis.ResponseError, match=r"^wrong number of arguments for 'client\|kill' command$"):
        r.execute_command("CLIENT", "KILL")
    with pytest.raises(redis.ResponseError, match=r"^wrong number of arguments for 'client' command$"):
        r.execute_command("CLIENT")


def test_differential_errors_against_real_redis(real_redis, r):
    real = redis.Redis(port=real_redis.port, protocol=2)
    try:
        for args in [("SETNAME", "a b"), ("KILL", "1.2.3.4:5"), ("KILL", "ID", "0"),
                     ("LIST", "TYPE", "x"), ("UNBLOCK", "1", "x"), ("NO-EVICT", "x"),
                     ("LIST", "ID", "a")]:  # (7.0 has no SETINFO to compare)
            errors = []
            for c in (r, real):
                with pytest.raises(redis.ResponseError) as err:
                    c.execute_command("CLIENT", *args)
                errors.append(str(err.value))
            assert errors[0] == errors[1], args
    finally:
        real.close()
