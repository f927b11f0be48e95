"""Pub/Sub: SUBSCRIBE / PSUBSCRIBE / SSUBSCRIBE and their UNSUBSCRIBE, PUBLISH / SPUBLISH,
PUBSUB introspection, the subscribed-connection rules of RESP2 and RESP3, with redis-py and raw
sockets (the exact bytes)."""

from __future__ import annotations

import time

import pytest
import redis

from tests.helpers import aof_path, call_raw, encode_command, read_reply
from tests.serverproc import RawConnection


def subscriber(port: int, *commands: tuple, resp3: bool = False) -> RawConnection:
    """A raw connection that ran commands (each read up to its last confirmation)."""
    conn = RawConnection(port)
    if resp3:
        call_raw(conn, "HELLO", "3")
    for cmd in commands:
        conn.send(encode_command(*cmd))
        confirmations = str(cmd[0]).upper().endswith("SUBSCRIBE")
        for _ in range(max(1, len(cmd) - 1) if confirmations else 1):
            read_reply(conn)
    return conn


def push(kind: bytes, *items: bytes | int | None, resp3: bool = False) -> bytes:
    out = [b"%s%d\r\n" % (b">" if resp3 else b"*", len(items) + 1), b"$%d\r\n%s\r\n" % (len(kind), kind)]
    for item in items:
        if item is None:
            out.append(b"_\r\n" if resp3 else b"$-1\r\n")
        elif isinstance(item, int):
            out.append(b":%d\r\n" % item)
        else:
            out.append(b"$%d\r\n%s\r\n" % (len(item), item))
    return b"".join(out)


# --- SUBSCRIBE / PUBLISH -----------------------------------------------------------------------


@pytest.mark.parametrize("resp3", [False, True], ids=["resp2", "resp3"])
def test_subscribe_confirmations_count_channels_and_patterns(server, resp3):
    conn = RawConnection(server.port)
    if resp3:
        call_raw(conn, "HELLO", "3")
    conn.send(encode_command("SUBSCRIBE", "a", "b", "a"))
    assert [read_reply(conn) for _ in range(3)] == [
        push(b"subscribe", b"a", 1, resp3=resp3), push(b"subscribe", b"b", 2, resp3=resp3),
        push(b"subscribe", b"a", 2, resp3=resp3)]
    conn.send(encode_command("PSUBSCRIBE", "h*"))
    assert read_reply(conn) == push(b"psubscribe", b"h*", 3, resp3=resp3)
    conn.send(encode_command("SSUBSCRIBE", "s1"))
    # Shard subscriptions are counted apart.
    assert read_reply(conn) == push(b"ssubscribe", b"s1", 1, resp3=resp3)
    conn.send(encode_command("UNSUBSCRIBE", "b", "zz"))
    assert [read_reply(conn) for _ in range(2)] == [
        push(b"unsubscribe", b"b", 2, resp3=resp3), push(b"unsubscribe", b"zz", 2, resp3=resp3)]
    conn.send(encode_command("PUNSUBSCRIBE"))
    assert read_reply(conn) == push(b"punsubscribe", b"h*", 1, resp3=resp3)
    conn.send(encode_command("PUNSUBSCRIBE"))
    assert read_reply(conn) == push(b"punsubscribe", None, 1, resp3=resp3)
    conn.send(encode_command("UNSUBSCRIBE"))
    assert read_reply(conn) == push(b"unsubscribe", b"a", 0, resp3=resp3)
    conn.send(encode_command("UNSUBSCRIBE"))
    assert read_reply(conn) == push(b"unsubscribe", None, 0, resp3=resp3)
    conn.send(encode_command("SUNSUBSCRIBE"))
    assert read_reply(conn) == push(b"sunsubscribe", b"s1", 0, resp3=resp3)
    conn.send(encode_command("SUNSUBSCRIBE"))
    assert read_reply(conn) == push(b"sunsubscribe", None, 0, resp3=resp3)
    # Out of Pub/Sub mode: any command works again.
    assert call_raw(conn, "PING") == b"+PONG\r\n"
    conn.close()


@pytest.mark.parametrize("resp3", [False, True], ids=["resp2", "resp3"])
def test_publish_reaches_channel_and_pattern_subscribers(server, resp3):
    sub = subscriber(server.port, ("SUBSCRIBE", "news.tech"), ("PSUBSCRIBE", "news.*"), resp3=resp3)
    pub = RawConnection(server.port)
    assert call_raw(pub, "PUBLISH", "news.tech", "hello") == b":2\r\n"
    assert read_reply(sub) == push(b"message", b"news.tech", b"hello", resp3=resp3)
    assert read_reply(sub) == push(b"pmessage", b"news.*", b"news.tech", b"hello", resp3=resp3)
    assert call_raw(pub, "PUBLISH", "news.art", "x") == b":1\r\n"
    assert read_reply(sub) == push(b"pmessage", b"news.*", b"news.art", b"x", resp3=resp3)
    assert call_raw(pub, "PUBLISH", "other", "x") == b":0\r\n"
    assert call_raw(pub, "SPUBLISH", "news.tech", "x") == b":0\r\n"
    sub.close()
    pub.close()


def test_spublish_reaches_only_shard_subscribers(server):
    sub = subscriber(server.port, ("SSUBSCRIBE", "orders"), ("PSUBSCRIBE", "*"))
    other = subscriber(server.port, ("SUBSCRIBE", "orders"))
    pub = RawConnection(server.port)
    assert call_raw(pub, "SPUBLISH", "orders", "o1") == b":1\r\n"
    assert read_reply(sub) == push(b"smessage", b"orders", b"o1")
    assert call_raw(pub, "PUBLISH", "orders", "o2") == b":2\r\n"
    assert read_reply(other) == push(b"message", b"orders", b"o2")
    assert read_reply(sub) == push(b"pmessage", b"*", b"orders", b"o2")
    for c in (sub, other, pub):
        c.close()


def test_binary_channels_and_messages(server):
    channel, message = b"\x00ch\r\n\xff", b"\r\n\x00" * 100
    sub = subscriber(server.port, ("SUBSCRIBE", channel))
    pub = RawConnection(server.port)
    assert call_raw(pub, "PUBLISH", channel, message) == b":1\r\n"
    assert read_reply(sub) == push(b"message", channel, message)
    sub.close()
    pub.close()


def test_redis_py_pubsub_resp2(r):
    p = r.pubsub()
    p.subscribe("chan")
    p.psubscribe("c*")
    assert p.get_message(timeout=1)["type"] == "subscribe"
    assert p.get_message(timeout=1)["type"] == "psubscribe"
    assert r.publish("chan", "v") == 2
    got = [p.get_message(timeout=1) for _ in range(2)]
    assert [(m["type"], m["channel"], m["data"]) for m in got] == [
        ("message", b"chan", b"v"), ("pmessage", b"chan", b"v")]
    assert got[1]["pattern"] == b"c*"
    p.close()


def test_redis_py_pubsub_resp3_push(r3):
    p = r3.pubsub()
    p.subscribe("chan")
    assert p.get_message(timeout=1)["type"] == "subscribe"
    assert r3.publish("chan", "v") == 1
    m = p.get_message(timeout=1)
    assert (m["type"], m["channel"], m["data"]) == ("message", b"chan", b"v")
    p.close()


def test_each_subscriber_gets_each_message_once_in_order(server):
    subs = [subscriber(server.port, ("SUBSCRIBE", "c")) for _ in range(20)]
    pub = RawConnection(server.port)
    pub.send(b"".join(encode_command("PUBLISH", "c", str(i)) for i in range(50)))
    assert [read_reply(pub) for _ in range(50)] == [b":20\r\n"] * 50
    for s in subs:
        assert [read_reply(s) for _ in range(50)] == [push(b"message", b"c", str(i).encode()) for i in range(50)]
        s.close()
    pub.close()


# --- the subscribed connection -------------------------------------------------------------------


def test_resp2_subscribed_connection_refuses_other_commands(server):
    conn = subscriber(server.port, ("SUBSCRIBE", "c"))
    assert call_raw(conn, "GET", "k") == (
        b"-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
        b"are allowed in this context\r\n")
    assert call_raw(conn, "CLIENT", "LIST").startswith(b"-ERR Can't execute 'client|list': ")
    assert call_raw(conn, "PING") == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"
    assert call_raw(conn, "PING", "hi") == b"*2\r\n$4\r\npong\r\n$2\r\nhi\r\n"
    assert call_raw(conn, "RESET") == b"+RESET\r\n"
    assert call_raw(conn, "PING") == b"+PONG\r\n"
    conn.close()


def test_resp3_subscribed_connection_runs_everything(server):
    conn = subscriber(server.port, ("SUBSCRIBE", "c"), resp3=True)
    assert call_raw(conn, "SET", "k", "v") == b"+OK\r\n"
    assert call_raw(conn, "GET", "k") == b"$1\r\nv\r\n"
    assert call_raw(conn, "PING") == b"+PONG\r\n"
    conn.close()


def test_resp3_publish_to_own_channel_reply_comes_first(server):
    # Redis 7.2+ sends the push after the reply of the command that caused it (7.0 sent it
    # before the reply).
    conn = subscriber(server.port, ("SUBSCRIBE", "c"), resp3=True)
    conn.send(encode_command("PUBLISH", "c", "m") + encode_command("PING"))
    assert read_reply(conn) == b":1\r\n"
    assert read_reply(conn) == push(b"message", b"c", b"m", resp3=True)
    assert read_reply(conn) == b"+PONG\r\n"
    conn.close()


def test_resp3_publish_inside_multi_push_after_exec_reply(server):
    conn = subscriber(server.port, ("SUBSCRIBE", "c"), resp3=True)
    conn.send(b"".join(encode_command(*c) for c in
                       [("MULTI",), ("PUBLISH", "c", "1"), ("PUBLISH", "c", "2"), ("EXEC",)]))
    assert [read_reply(conn) for _ in range(4)] == [
        b"+OK\r\n", b"+QUEUED\r\n", b"+QUEUED\r\n", b"*2\r\n:1\r\n:1\r\n"]
    assert read_reply(conn) == push(b"message", b"c", b"1", resp3=True)
    assert read_reply(conn) == push(b"message", b"c", b"2", resp3=True)
    conn.close()


def test_subscribe_inside_multi(server):
    conn = RawConnection(server.port)
    conn.send(b"".join(encode_command(*c) for c in
                       [("MULTI",), ("SUBSCRIBE", "c"), ("PUBLISH", "c", "m"), ("EXEC",)]))
    assert [read_reply(conn) for _ in range(3)] == [b"+OK\r\n", b"+QUEUED\r\n", b"+QUEUED\r\n"]
    assert read_reply(conn) == b"*2\r\n" + push(b"subscribe", b"c", 1) + b":1\r\n"
    assert read_reply(conn) == push(b"message", b"c", b"m")
    conn.close()


def test_ssubscribe_inside_multi_is_refused(server):
    conn = RawConnection(server.port)
    conn.send(b"".join(encode_command(*c) for c in [("MULTI",), ("SSUBSCRIBE", "c"), ("EXEC",)]))
    assert [read_reply(conn) for _ in range(3)] == [
        b"+OK\r\n", b"+QUEUED\r\n",
        b"*1\r\n-ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client\r\n"]
    assert call_raw(conn, "PING") == b"+PONG\r\n"
    conn.close()


def test_resp2_refusal_inside_multi_aborts_exec(server):
    conn = subscriber(server.port, ("SUBSCRIBE", "c"))
    conn.send(b"".join(encode_command(*c) for c in [("MULTI",), ("GET", "k"), ("EXEC",)]))
    replies = [read_reply(conn) for _ in range(3)]
    assert replies[0].startswith(b"-ERR Can't execute 'multi'")
    assert replies[1].startswith(b"-ERR Can't execute 'get'")
    assert replies[2].startswith(b"-ERR Can't execute 'exec'")
    conn.close()


def test_hello_switches_protocol_while_subscribed(server):
    conn = subscriber(server.port, ("SUBSCRIBE", "c"), resp3=True)
    pub = RawConnection(server.port)
    conn.send(encode_command("HELLO", "2"))
    read_reply(conn)
    call_raw(pub, "PUBLISH", "c", "m")
    assert read_reply(conn) == push(b"message", b"c", b"m")
    # Back in RESP2 the subscribed-context rules apply, HELLO included.
    assert call_raw(conn, "HELLO", "3").startswith(b"-ERR Can't execute 'hello'")
    conn.close()
    pub.close()


def test_reset_leaves_subscribed_mode_and_drops_subscriptions(server, r):
    conn = subscriber(server.port, ("SUBSCRIBE", "c"), ("PSUBSCRIBE", "p*"), ("SSUBSCRIBE", "s"))
    assert r.pubsub_numsub("c") == [(b"c", 1)]
    assert call_raw(conn, "RESET") == b"+RESET\r\n"
    assert r.pubsub_numsub("c") == [(b"c", 0)]
    assert r.pubsub_numpat() == 0
    assert r.pubsub_shardchannels() == []
    assert r.publish("c", "x") == 0
    conn.close()


def test_disconnect_drops_subscriptions(server, r):
    conns = [subscriber(server.port, ("SUBSCRIBE", "c", "d"), ("PSUBSCRIBE", "x*")) for _ in range(3)]
    assert r.pubsub_numsub("c", "d") == [(b"c", 3), (b"d", 3)]
    for c in conns:
        c.close()
    deadline = time.monotonic() + 3
    while r.pubsub_numpat() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert r.pubsub_channels() == []
    assert r.pubsub_numpat() == 0
    assert r.info("clients")["pubsub_clients"] == 0


def test_client_reply_off_still_gets_pushes(server):
    # Pushes are not replies: CLIENT REPLY OFF does not silence them.
    conn = RawConnection(server.port)
    conn.send(encode_command("CLIENT", "REPLY", "OFF") + encode_command("SUBSCRIBE", "c"))
    assert read_reply(conn) == push(b"subscribe", b"c", 1)
    pub = RawConnection(server.port)
    call_raw(pub, "PUBLISH", "c", "m")
    assert read_reply(conn) == push(b"message", b"c", b"m")
    conn.close()
    pub.close()


def test_quit_while_subscribed(server, r):
    conn = subscriber(server.port, ("SUBSCRIBE", "c"))
    assert call_raw(conn, "QUIT") == b"+OK\r\n"
    assert conn.read_until_closed() == b""
    deadline = time.monotonic() + 3
    while r.pubsub_numsub("c") != [(b"c", 0)] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert r.pubsub_numsub("c") == [(b"c", 0)]


# --- PUBSUB introspection -----------------------------------------------------------------------


def test_pubsub_channels_numsub_numpat(server, r):
    a = subscriber(server.port, ("SUBSCRIBE", "news.a", "news.b", "x"), ("PSUBSCRIBE", "n*", "m*"))
    b = subscriber(server.port, ("SUBSCRIBE", "news.a"), ("PSUBSCRIBE", "n*"),
                   ("SSUBSCRIBE", "s1", "s2"))
    assert sorted(r.pubsub_channels()) == [b"news.a", b"news.b", b"x"]
    assert sorted(r.pubsub_channels("news.*")) == [b"news.a", b"news.b"]
    assert r.pubsub_numsub("news.a", "x", "none") == [(b"news.a", 2), (b"x", 1), (b"none", 0)]
    assert r.pubsub_numsub() == []
    assert r.pubsub_numpat() == 2
    assert sorted(r.pubsub_shardchannels()) == [b"s1", b"s2"]
    assert r.pubsub_shardchannels("*1") == [b"s1"]
    assert r.pubsub_shardnumsub("s1", "zz") == [(b"s1", 1), (b"zz", 0)]
    info = r.info()
    assert (info["pubsub_channels"], info["pubsub_patterns"], info["pubsubshard_channels"]) == (3, 2, 2)
    assert info["pubsub_clients"] == 2
    a.close()
    b.close()


def test_pubsub_errors(server):
    conn = RawConnection(server.port)
    assert call_raw(conn, "PUBSUB", "CHANNELS", "a", "b") == (
        b"-ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB HELP.\r\n")
    assert call_raw(conn, "PUBSUB", "NUMPAT", "x") == (
        b"-ERR wrong number of arguments for 'pubsub|numpat' command\r\n")
    assert call_raw(conn, "PUBSUB", "FOO") == b"-ERR unknown subcommand 'FOO'. Try PUBSUB HELP.\r\n"
    assert call_raw(conn, "SUBSCRIBE") == b"-ERR wrong number of arguments for 'subscribe' command\r\n"
    assert call_raw(conn, "PUBLISH", "c") == b"-ERR wrong number of arguments for 'publish' command\r\n"
    conn.close()


def test_client_list_shows_subscriptions(server, r):
    conn = subscriber(server.port, ("CLIENT", "SETNAME", "sub"), ("SUBSCRIBE", "a", "b"),
                      ("PSUBSCRIBE", "p*"), ("SSUBSCRIBE", "s"))
    line = next(x for x in r.client_list() if x["name"] == "sub")
    assert (line["flags"], line["sub"], line["psub"], line["ssub"]) == ("P", "2", "1", "1")
    assert [c["name"] for c in r.client_list(_type="pubsub")] == ["sub"]
    assert r.client_kill_filter(_type="pubsub") == 1
    assert conn.read_until_closed(reset_ok=True) == b""
    conn.close()
    deadline = time.monotonic() + 3
    while r.pubsub_channels() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert r.pubsub_channels() == [] and r.pubsub_numpat() == 0


def test_pubsub_clients_counts_each_client_once(server, r):
    conn = subscriber(server.port, ("SUBSCRIBE", "a"), ("PSUBSCRIBE", "b"), ("SSUBSCRIBE", "c"))
    assert r.info("clients")["pubsub_clients"] == 1
    conn.send(encode_command("UNSUBSCRIBE") + encode_command("PUNSUBSCRIBE"))
    read_reply(conn)
    read_reply(conn)
    # Still subscribed to a shard channel: still in Pub/Sub mode.
    assert call_raw(conn, "GET", "x").startswith(b"-ERR Can't execute")
    assert r.info("clients")["pubsub_clients"] == 1
    call_raw(conn, "SUNSUBSCRIBE")
    assert r.info("clients")["pubsub_clients"] == 0
    assert call_raw(conn, "GET", "x") == b"$-1\r\n"
    conn.close()


def test_redis_py_client_pubsub_roundtrip_many_channels(r):
    p = r.pubsub(ignore_subscribe_messages=True)
    names = [f"ch:{i}" for i in range(10000)]
    p.subscribe(*names)
    deadline = time.monotonic() + 10
    while len(r.pubsub_channels()) < 10000 and time.monotonic() < deadline:
        p.get_message(timeout=0.01)
    assert len(r.pubsub_channels()) == 10000
    assert r.info()["pubsub_channels"] == 10000
    assert r.publish("ch:9999", "last") == 1
    msg = None
    while msg is None and time.monotonic() < deadline:
        msg = p.get_message(timeout=0.5)
    assert msg is not None and (msg["channel"], msg["data"]) == (b"ch:9999", b"last")
    p.unsubscribe()
    while r.pubsub_channels() and time.monotonic() < deadline:
        p.get_message(timeout=0.01)
    assert r.pubsub_channels() == []
    p.close()


def test_publish_is_not_logged_to_the_aof(server_factory):
    srv = server_factory("--appendonly", "yes")
    with redis.Redis(port=srv.port) as c:
        assert c.publish("c", "m") == 0
        c.set("k", "v")
    text = aof_path(srv).read_bytes().upper()
    assert b"SET" in text and b"PUBLISH" not in text
