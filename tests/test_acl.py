"""ACL users and permissions against a real Rivulet process, through redis-py's ACL methods
(RESP2 and RESP3) and raw replies where the exact bytes matter."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import pytest
import redis

from tests.helpers import call_raw, encode_command, no_retry, read_reply, wait_blocked
from tests.serverproc import RawConnection, ServerProcess


@pytest.fixture(scope="module")
def acl_server() -> Iterator[ServerProcess]:
    # Its own server: the users made here must not reach other tests' connections.
    proc = ServerProcess().start()
    yield proc
    proc.cleanup()


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def admin(request, acl_server: ServerProcess) -> Iterator[redis.Redis]:
    client = redis.Redis(port=acl_server.port, protocol=request.param, decode_responses=True,
                         retry=no_retry())
    client.flushall()
    yield client
    for name in client.acl_users():
        if name != "default":
            client.acl_deluser(name)
    client.acl_setuser("default", reset=True, enabled=True, nopass=True, keys=["*"],
                       channels=["*"], commands=["+@all"])
    client.acl_log_reset()
    client.close()


def getuser(admin: redis.Redis, name: str) -> dict:
    """ACL GETUSER as sent (redis-py's parsing differs between RESP2 and RESP3), as a dict."""
    raw = admin.execute_command("ACL", "GETUSER", name, NEVER_DECODE=True)
    fields = raw if isinstance(raw, dict) else dict(zip(raw[::2], raw[1::2], strict=True))
    out = {}
    for key, value in fields.items():
        if key == b"selectors":
            value = [s if isinstance(s, dict) else dict(zip(s[::2], s[1::2], strict=True))
                     for s in value]
        out[key.decode()] = value
    return out


def connect(server: ServerProcess, user: str, password: str, protocol: int = 2) -> redis.Redis:
    return redis.Redis(port=server.port, username=user, password=password, protocol=protocol,
                       retry=no_retry())


def test_default_user_and_whoami(admin: redis.Redis) -> None:
    assert admin.acl_list() == ["user default on nopass sanitize-payload ~* &* +@all"]
    assert admin.acl_whoami() == "default"
    assert admin.acl_users() == ["default"]


def test_setuser_getuser_shapes(admin: redis.Redis) -> None:
    assert admin.acl_setuser("alice", enabled=True, passwords=["+pw"], keys=["orders:*"],
                             channels=["news*"], commands=["+xadd", "+@read", "-keys"])
    user = getuser(admin, "alice")
    assert list(user) == ["flags", "passwords", "commands", "keys", "channels", "selectors"]
    assert list(user["flags"]) == [b"on", b"sanitize-payload"]
    assert user["passwords"] == [hashlib.sha256(b"pw").hexdigest().encode()]
    assert user["commands"] == b"-@all +xadd +@read -keys"
    assert user["keys"] == b"~orders:*"
    assert user["channels"] == b"&news*"
    assert user["selectors"] == []
    parsed = admin.acl_getuser("alice")  # redis-py's own view of the same reply
    assert "xadd" in str(parsed["commands"]) and parsed["enabled"] is True
    assert admin.acl_getuser("nobody") is None


def test_list_describes_rules_in_redis_order(admin: redis.Redis) -> None:
    admin.execute_command("ACL", "SETUSER", "bob", "on", ">a", "%R~dash:*", "~x", "&c",
                          "+@all", "-@dangerous", "+config|get", "(+get ~y*)")
    digest = hashlib.sha256(b"a").hexdigest()
    assert admin.acl_list()[0] == (
        f"user bob on sanitize-payload #{digest} %R~dash:* ~x resetchannels &c +@all "
        "-@dangerous +config|get (~y* resetchannels -@all +get)")


def test_setuser_errors_change_nothing(admin: redis.Redis) -> None:
    admin.acl_setuser("carol", enabled=True, commands=["+get"])
    before = admin.acl_list()
    with pytest.raises(redis.ResponseError, match="^Error in ACL SETUSER modifier '\\+nosuch': "
                       "Unknown command or category name in ACL$"):
        admin.execute_command("ACL", "SETUSER", "carol", "+set", "+nosuch")
    assert admin.acl_list() == before
    with pytest.raises(redis.ResponseError, match="Usernames can't contain spaces"):
        admin.execute_command("ACL", "SETUSER", "a b")


def test_auth_and_wrongpass(admin: redis.Redis, acl_server: ServerProcess) -> None:
    admin.acl_setuser("prod", enabled=True, passwords=["+s3cret"], keys=["orders:*"],
                      commands=["+xadd", "+ping"])
    with pytest.raises(redis.AuthenticationError):
        connect(acl_server, "prod", "wrong").ping()
    before = admin.info("stats")
    conn = RawConnection(acl_server.port)
    assert call_raw(conn, "AUTH", "prod", "nope") == (
        b"-WRONGPASS invalid username-password pair or user is disabled.\r\n")
    assert call_raw(conn, "AUTH", "prod", "s3cret") == b"+OK\r\n"
    assert call_raw(conn, "ACL", "WHOAMI") == (
        b"-NOPERM User prod has no permissions to run the 'acl|whoami' command\r\n")
    conn.close()
    info = admin.info("stats")
    assert info["acl_access_denied_auth"] - before["acl_access_denied_auth"] == 1
    assert info["acl_access_denied_cmd"] - before["acl_access_denied_cmd"] == 1


def test_hello_auth(admin: redis.Redis, acl_server: ServerProcess) -> None:
    admin.acl_setuser("h", enabled=True, passwords=["+pw"], commands=["+@all"], keys=["*"])
    conn = RawConnection(acl_server.port)
    assert call_raw(conn, "HELLO", "3", "AUTH", "h", "bad").startswith(b"-WRONGPASS")
    assert call_raw(conn, "HELLO", "3", "AUTH", "h", "pw").startswith(b"%7")
    assert call_raw(conn, "ACL", "WHOAMI") == b"$1\r\nh\r\n"
    conn.close()


def test_noperm_command_key_and_channel(admin: redis.Redis, acl_server: ServerProcess) -> None:
    admin.acl_setuser("prod", enabled=True, passwords=["+pw"], keys=["orders:*"],
                      channels=["news"], commands=["+xadd", "+publish", "+subscribe"])
    conn = RawConnection(acl_server.port)
    call_raw(conn, "AUTH", "prod", "pw")
    assert call_raw(conn, "XADD", "orders:1", "*", "a", "1").startswith(b"$")
    assert call_raw(conn, "XADD", "other", "*", "a", "1") == (
        b"-NOPERM No permissions to access a key\r\n")
    assert call_raw(conn, "GET", "orders:1") == (
        b"-NOPERM User prod has no permissions to run the 'get' command\r\n")
    assert call_raw(conn, "PUBLISH", "sports", "x") == (
        b"-NOPERM No permissions to access a channel\r\n")
    assert call_raw(conn, "PUBLISH", "news", "x") == b":0\r\n"
    assert call_raw(conn, "SUBSCRIBE", "news", "sports") == (
        b"-NOPERM No permissions to access a channel\r\n")
    conn.close()
    log = admin.acl_log()
    assert [(e["reason"], e["object"]) for e in log] == [
        ("channel", "sports"), ("command", "get"), ("key", "other")]
    assert log[0]["count"] == 2  # PUBLISH then SUBSCRIBE to "sports": one entry, counted twice
    assert log[0]["username"] == "prod"
    assert log[0]["context"] == "toplevel"
    info = log[0]["client-info"]
    assert (info.get("cmd") if isinstance(info, dict) else info.split(" cmd=")[1].split()[0]) \
        == "subscribe"


def test_read_only_and_write_only_patterns(admin: redis.Redis, acl_server: ServerProcess) -> None:
    admin.acl_setuser("dash", enabled=True, passwords=["+pw"], commands=["+@all"],
                      keys=["%R~*", "%W~out:*"])
    admin.xadd("orders", {"a": 1})
    admin.xgroup_create("orders", "g", "0")
    dash = connect(acl_server, "dash", "pw")
    assert dash.xrange("orders") != []
    assert dash.exists("orders") == 1
    with pytest.raises(redis.exceptions.NoPermissionError):
        dash.xadd("orders", {"b": 2})
    # Redis 7.4's key spec of XREADGROUP is RO ACCESS: read permission is enough for it.
    assert dash.xreadgroup("g", "c", {"orders": ">"})
    with pytest.raises(redis.exceptions.NoPermissionError):
        dash.xack("orders", "g", "0-1")
    assert dash.set("out:1", "v")
    with pytest.raises(redis.exceptions.NoPermissionError):
        dash.set("out:1", "v", get=True)  # SET ... GET reads too
    dash.close()


def test_first_arg_and_subcommand_rules(admin: redis.Redis, acl_server: ServerProcess) -> None:
    admin.execute_command("ACL", "SETUSER", "ops", "on", ">pw", "+select|0", "+config|get",
                          "+client")
    ops = connect(acl_server, "ops", "pw")
    assert ops.select(0)
    with pytest.raises(redis.exceptions.NoPermissionError):
        ops.select(1)
    assert ops.config_get("maxmemory")
    with pytest.raises(redis.exceptions.NoPermissionError, match="'config\\|set'"):
        ops.config_set("maxmemory", "0")
    assert ops.client_id() > 0
    ops.close()


def test_selectors(admin: redis.Redis, acl_server: ServerProcess) -> None:
    admin.execute_command("ACL", "SETUSER", "sel", "on", ">pw", "+get", "~a*", "(+set ~b*)")
    sel = connect(acl_server, "sel", "pw")
    assert sel.get("a1") is None
    assert sel.set("b1", "x")
    with pytest.raises(redis.exceptions.NoPermissionError):
        sel.set("a1", "x")
    with pytest.raises(redis.exceptions.NoPermissionError):
        sel.get("b1")
    sel.close()
    assert getuser(admin, "sel")["selectors"] == [
        {b"commands": b"-@all +set", b"keys": b"~b*", b"channels": b""}]
    assert admin.acl_dryrun("sel", "get", "b1") == (
        "User sel has no permissions to access the 'b1' key")
    assert admin.acl_dryrun("sel", "set", "b1", "x") == "OK"


def test_multi_checks_at_queue_time_and_at_exec(admin: redis.Redis,
                                                acl_server: ServerProcess) -> None:
    admin.acl_setuser("m", enabled=True, passwords=["+pw"], keys=["*"],
                      commands=["+multi", "+exec", "+set", "+get"])
    conn = RawConnection(acl_server.port)
    call_raw(conn, "AUTH", "m", "pw")
    assert call_raw(conn, "MULTI") == b"+OK\r\n"
    assert call_raw(conn, "DEL", "k") == (
        b"-NOPERM User m has no permissions to run the 'del' command\r\n")
    assert call_raw(conn, "EXEC") == (
        b"-EXECABORT Transaction discarded because of previous errors.\r\n")
    assert call_raw(conn, "MULTI") == b"+OK\r\n"
    assert call_raw(conn, "SET", "k", "v") == b"+QUEUED\r\n"
    assert call_raw(conn, "GET", "k") == b"+QUEUED\r\n"
    admin.acl_setuser("m", commands=["-set"])
    assert call_raw(conn, "EXEC") == (
        b"*2\r\n-NOPERM ACLs rules changed between the moment the transaction was accumulated "
        b"and the EXEC call. This command is no longer allowed for the following reason: no "
        b"permission to execute the command or subcommand\r\n$-1\r\n")
    conn.close()
    assert admin.acl_log(count=1)[0]["context"] == "multi"


def test_blocked_command_rechecked_when_served(admin: redis.Redis,
                                               acl_server: ServerProcess) -> None:
    admin.acl_setuser("b", enabled=True, passwords=["+pw"], keys=["*"], commands=["+blpop"])
    conn = RawConnection(acl_server.port)
    call_raw(conn, "AUTH", "b", "pw")
    conn.send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n0\r\n")
    wait_blocked(admin, 1)
    admin.acl_setuser("b", reset_keys=True, keys=["other"])
    admin.rpush("q", "x")
    assert read_reply(conn) == b"-NOPERM No permissions to access a key\r\n"
    conn.close()
    assert admin.lrange("q", 0, -1) == ["x"]


def test_deluser_and_off_close_connections(admin: redis.Redis, acl_server: ServerProcess) -> None:
    admin.acl_setuser("gone", enabled=True, passwords=["+pw"], commands=["+@all"], keys=["*"])
    victim = RawConnection(acl_server.port)
    call_raw(victim, "AUTH", "gone", "pw")
    assert admin.acl_deluser("gone", "nobody") == 1
    assert victim.is_closed()
    admin.acl_setuser("self", enabled=True, passwords=["+pw"], commands=["+@all"], keys=["*"])
    me = RawConnection(acl_server.port)
    call_raw(me, "AUTH", "self", "pw")
    # Deleting its own user: the reply is sent, then the connection closes.
    assert call_raw(me, "ACL", "DELUSER", "self") == b":1\r\n"
    assert me.is_closed()
    with pytest.raises(redis.ResponseError, match="The 'default' user cannot be removed"):
        admin.acl_deluser("default")


def test_client_kill_user(admin: redis.Redis, acl_server: ServerProcess) -> None:
    admin.acl_setuser("k", enabled=True, passwords=["+pw"], commands=["+@all"], keys=["*"])
    conns = [RawConnection(acl_server.port) for _ in range(2)]
    for conn in conns:
        call_raw(conn, "AUTH", "k", "pw")
    assert admin.execute_command("CLIENT", "KILL", "USER", "k") == 2
    assert all(conn.is_closed() for conn in conns)
    with pytest.raises(redis.ResponseError, match="^No such user 'nobody'$"):
        admin.execute_command("CLIENT", "KILL", "USER", "nobody")
    listing = admin.client_list()
    assert all(c["user"] == "default" for c in listing)


def test_revoked_channel_closes_subscriber(admin: redis.Redis, acl_server: ServerProcess) -> None:
    admin.acl_setuser("sub", enabled=True, passwords=["+pw"], commands=["+@all"],
                      channels=["news"])
    conn = RawConnection(acl_server.port)
    call_raw(conn, "AUTH", "sub", "pw")
    assert call_raw(conn, "SUBSCRIBE", "news").startswith(b"*3")
    admin.acl_setuser("sub", channels=["weather"])  # adds: news still allowed
    admin.publish("news", "x")
    assert read_reply(conn).startswith(b"*3")
    admin.execute_command("ACL", "SETUSER", "sub", "resetchannels", "&weather")
    assert conn.is_closed()


def test_requirepass_is_the_default_users_password(admin: redis.Redis,
                                                   acl_server: ServerProcess) -> None:
    admin.config_set("requirepass", "topsecret")
    try:
        assert admin.acl_list() == [
            "user default on sanitize-payload #" + hashlib.sha256(b"topsecret").hexdigest()
            + " ~* &* +@all"]
        conn = RawConnection(acl_server.port)
        assert call_raw(conn, "GET", "x") == b"-NOAUTH Authentication required.\r\n"
        assert call_raw(conn, "AUTH", "topsecret") == b"+OK\r\n"
        conn.close()
    finally:
        admin.config_set("requirepass", "")
    assert b"nopass" in getuser(admin, "default")["flags"]


def test_cat_genpass_log_and_help(admin: redis.Redis) -> None:
    assert admin.acl_cat()[:3] == ["keyspace", "read", "write"]
    assert "xadd" in admin.acl_cat("stream")
    assert len(admin.acl_genpass()) == 64
    assert len(admin.acl_genpass(5)) == 2
    with pytest.raises(redis.ResponseError, match="^Unknown category 'nope'$"):
        admin.acl_cat("nope")
    with pytest.raises(redis.AuthenticationError):
        admin.execute_command("AUTH", "nobody", "x")
    entry = admin.acl_log()[0]
    assert set(entry) >= {"count", "reason", "context", "object", "username", "age-seconds",
                          "client-info", "entry-id", "timestamp-created",
                          "timestamp-last-updated"}
    assert (entry["reason"], entry["object"], entry["username"]) == ("auth", "AUTH", "nobody")
    assert admin.acl_log_reset()
    assert admin.acl_log() == []
    assert admin.execute_command("ACL", "HELP")[0].startswith("ACL <subcommand>")


def test_acllog_max_len(admin: redis.Redis) -> None:
    admin.config_set("acllog-max-len", 2)
    try:
        for i in range(4):
            with pytest.raises(redis.AuthenticationError):
                admin.execute_command("AUTH", f"user{i}", "x")
        assert [e["username"] for e in admin.acl_log()] == ["user3", "user2"]
    finally:
        admin.config_set("acllog-max-len", 128)


def test_acl_pubsub_default(admin: redis.Redis) -> None:
    assert admin.config_get("acl-pubsub-default") == {"acl-pubsub-default": "resetchannels"}
    admin.config_set("acl-pubsub-default", "allchannels")
    try:
        admin.acl_setuser("pub")
        assert getuser(admin, "pub")["channels"] == b"&*"
    finally:
        admin.config_set("acl-pubsub-default", "resetchannels")


def test_unrestricted_user(admin: redis.Redis, acl_server: ServerProcess) -> None:
    admin.acl_setuser("full", enabled=True, nopass=True, commands=["+@all"], keys=["*"],
                      channels=["*"])
    full = connect(acl_server, "full", "anything")
    assert full.set("k", "v") and full.publish("c", "m") == 0
    assert admin.acl_dryrun("full", "flushall") == "OK"
    full.close()


def test_pipelined_runs_checked_call_by_call(admin: redis.Redis,
                                             acl_server: ServerProcess) -> None:
    """Pipelined XADD / HSET / GET runs (which Rivulet may run as one batch) are checked one
    call at a time for a restricted user: the same replies as when each is sent alone."""
    admin.acl_setuser("pipe", enabled=True, passwords=["+pw"], keys=["orders:*"],
                      commands=["+xadd", "+hset", "+get"])
    script = ([("XADD", "orders:1", "1-%d" % i, "f", "v") for i in range(1, 4)]
              + [("XADD", "other", "*", "f", "v")] * 2
              + [("HSET", "orders:h", "f%d" % i, "v") for i in range(3)]
              + [("GET", "orders:1"), ("GET", "other"), ("GET", "orders:x")])

    def replies(pipelined: bool) -> list[bytes]:
        admin.delete("orders:1", "orders:h")
        conn = RawConnection(acl_server.port)
        call_raw(conn, "AUTH", "pipe", "pw")
        if pipelined:
            conn.send(b"".join(encode_command(*c) for c in script))
            out = [read_reply(conn) for _ in script]
        else:
            out = [call_raw(conn, *c) for c in script]
        conn.close()
        return out

    pipelined = replies(True)
    assert pipelined == replies(False)
    assert pipelined[3] == b"-NOPERM No permissions to access a key\r\n"
    assert pipelined[9] == b"-NOPERM No permissions to access a key\r\n"
