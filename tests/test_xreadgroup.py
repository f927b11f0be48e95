"""XREADGROUP: new entries, consumer history, NOACK, errors, reply bytes, blocking."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis
import redis.asyncio

from tests.helpers import assert_same_as_redis, call_raw, run_plain, wait_blocked
from tests.helpers import encode_command as resp
from tests.serverproc import RawConnection

NOGROUP_MS = b"-NOGROUP No such key 'ms' or consumer group 'g' in XREADGROUP with GROUP option\r\n"
WRONGTYPE = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"


def streams_of(reply) -> dict:
    """XREADGROUP's reply as {key: entries} for RESP2 (array of pairs) and RESP3 (map)."""
    if isinstance(reply, dict):
        return reply
    return {k: v for k, v in reply}


def setup3(r: redis.Redis, key: str = "ms", group: str = "g") -> None:
    for i in (1, 2, 3):
        r.execute_command("XADD", key, f"{i}-0", "f", f"v{i}")
    r.execute_command("XGROUP", "CREATE", key, group, "0")


# --- serving ----------------------------------------------------------------------------------


def test_new_entries_then_history(raw_rc):
    r = raw_rc
    setup3(r)
    got = streams_of(r.execute_command("XREADGROUP", "GROUP", "g", "alice", "COUNT", "2",
                                       "STREAMS", "ms", ">"))
    assert got == {b"ms": [[b"1-0", [b"f", b"v1"]], [b"2-0", [b"f", b"v2"]]]}
    got = streams_of(r.execute_command("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "ms", ">"))
    assert got == {b"ms": [[b"3-0", [b"f", b"v3"]]]}
    # nothing new for anyone: a null reply without BLOCK
    assert r.execute_command("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "ms", ">") is None
    # each consumer's history is its own PEL, strictly after the given ID
    hist = streams_of(r.execute_command("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "ms", "0"))
    assert [e[0] for e in hist[b"ms"]] == [b"1-0", b"2-0"]
    hist = streams_of(r.execute_command("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "ms", "1-0"))
    assert [e[0] for e in hist[b"ms"]] == [b"2-0"]
    hist = streams_of(r.execute_command("XREADGROUP", "GROUP", "g", "alice", "COUNT", "1",
                                        "STREAMS", "ms", "0-0"))
    assert [e[0] for e in hist[b"ms"]] == [b"1-0"]
    hist = streams_of(r.execute_command("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "ms", "0"))
    assert [e[0] for e in hist[b"ms"]] == [b"3-0"]
    # history reads count as deliveries
    rows = r.execute_command("XPENDING", "ms", "g", "-", "+", "10")
    assert [(row[0], row[1], row[3]) for row in rows] == [
        (b"1-0", b"alice", 3), (b"2-0", b"alice", 3), (b"3-0", b"bob", 2)]


def test_empty_history_is_served_not_null(raw_rc):
    # Redis bug #5577: an empty PEL still answers with the key and an empty list.
    r = raw_rc
    setup3(r)
    assert streams_of(r.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", "3",
                                        "STREAMS", "ms", "0")) == {b"ms": []}
    got = streams_of(r.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", "3", "STREAMS", "ms", ">"))
    assert len(got[b"ms"]) == 3
    got = streams_of(r.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", "3", "STREAMS", "ms", "0"))
    assert len(got[b"ms"]) == 3


def test_history_reports_deleted_entries_with_nil_fields(raw_rc):
    # Redis bug #5570
    r = raw_rc
    r.execute_command("XGROUP", "CREATE", "ms", "g", "$", "MKSTREAM")
    r.execute_command("XADD", "ms", "1", "field1", "A")
    r.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "ms", ">")
    r.execute_command("XADD", "ms", "MAXLEN", "1", "2", "field1", "B")
    r.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "ms", ">")
    got = streams_of(r.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "ms", "0-1"))
    assert got == {b"ms": [[b"1-0", None], [b"2-0", [b"field1", b"B"]]]}
    # the deleted entry keeps its delivery counter, the live one gets another delivery
    rows = r.execute_command("XPENDING", "ms", "g", "-", "+", "10")
    assert [(row[0], row[3]) for row in rows] == [(b"1-0", 1), (b"2-0", 2)]


def test_noack_skips_the_pel_but_advances_the_group(raw_rc):
    r = raw_rc
    setup3(r)
    got = streams_of(r.execute_command("XREADGROUP", "GROUP", "g", "c", "NOACK", "STREAMS", "ms", ">"))
    assert len(got[b"ms"]) == 3
    assert r.execute_command("XPENDING", "ms", "g") == [0, None, None, None]
    info = r.execute_command("XINFO", "GROUPS", "ms")[0]
    info = info if isinstance(info, dict) else dict(zip(info[::2], info[1::2], strict=True))
    assert info[b"last-delivered-id"] == b"3-0"
    assert info[b"entries-read"] == 3
    assert info[b"consumers"] == 1  # NOACK still creates the consumer
    assert info[b"lag"] == 0


def test_count_zero_and_negative_mean_all(raw_rc):
    r = raw_rc
    setup3(r)
    got = streams_of(r.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", "-5", "STREAMS", "ms", ">"))
    assert len(got[b"ms"]) == 3
    got = streams_of(r.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", "0", "STREAMS", "ms", "0"))
    assert len(got[b"ms"]) == 3


def test_several_streams_only_served_ones_appear(raw_rc):
    r = raw_rc
    setup3(r, "a")
    r.execute_command("XGROUP", "CREATE", "b", "g", "$", "MKSTREAM")
    got = streams_of(r.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", ">", ">"))
    assert list(got) == [b"a"]
    # a history read is always part of the reply, even when empty
    got = streams_of(r.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "b", "a", "0", ">"))
    assert got == {b"b": []}


def test_setid_reassigns_pending_entries(raw_r):
    # "PEL NACK reassignment after XGROUP SETID event"
    for i in range(1, 5):
        raw_r.execute_command("XADD", "events", f"{i}-0", "f1", "v1")
    raw_r.execute_command("XGROUP", "CREATE", "events", "g1", "$")
    raw_r.execute_command("XADD", "events", "5-0", "f1", "v1")
    assert len(raw_r.execute_command("XREADGROUP", "GROUP", "g1", "c1", "STREAMS", "events", ">")[0][1]) == 1
    raw_r.execute_command("XGROUP", "SETID", "events", "g1", "-")
    assert len(raw_r.execute_command("XREADGROUP", "GROUP", "g1", "c2", "STREAMS", "events", ">")[0][1]) == 5
    assert raw_r.execute_command("XPENDING", "events", "g1") == [5, b"1-0", b"5-0", [[b"c2", b"5"]]]
    row = raw_r.execute_command("XPENDING", "events", "g1", "5-0", "5-0", "1")[0]
    assert row[1] == b"c2" and row[3] == 1  # re-delivery resets the counter


# --- errors -----------------------------------------------------------------------------------

ERRORS = [
    (("XREADGROUP", "GROUP", "g", "c", "STREAMS", "ms", "$"),
     "The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this "
     "consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just "
     "return an empty result set."),
    (("XREADGROUP", "GROUP", "g", "c", "STREAMS", "ms", "+"),
     "The + ID is meaningless in the context of XREADGROUP: you want to read the history of this "
     "consumer by specifying a proper ID, or use the > ID to get new messages. The + ID would just "
     "return an empty result set."),
    (("XREADGROUP", "GROUP", "g", "c", "STREAMS", "ms", "x-1"),
     "Invalid stream ID specified as stream command argument"),
    (("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "ms"),
     "Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be specified."),
    (("XREADGROUP", "COUNT", "1", "NOACK", "STREAMS", "ms", ">"), "Missing GROUP option for XREADGROUP"),
    (("XREADGROUP", "GROUP", "g", "c", "FOO", "STREAMS", "ms", ">"), "syntax error"),
    (("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "NOACK", ">"), "syntax error"),
    (("XREADGROUP", "GROUP", "g", "c", "COUNT", "x", "STREAMS", "ms", ">"),
     "value is not an integer or out of range"),
    (("XREADGROUP", "GROUP", "g", "c", "BLOCK", "-1", "STREAMS", "ms", ">"), "timeout is negative"),
    (("XREADGROUP", "GROUP", "g", "c", "BLOCK", "1.5", "STREAMS", "ms", ">"),
     "timeout is not an integer or out of range"),
    # options are all parsed before the streams are looked at
    (("XREADGROUP", "GROUP", "nogroup", "c", "BLOCK", "x", "STREAMS", "nokey", ">"),
     "timeout is not an integer or out of range"),
    (("XREADGROUP", "GROUP", "nogroup", "c", "STREAMS", "ms", ">"),
     "NOGROUP No such key 'ms' or consumer group 'nogroup' in XREADGROUP with GROUP option"),
    (("XREADGROUP", "GROUP", "g", "c", "STREAMS", "nokey", ">"),
     "NOGROUP No such key 'nokey' or consumer group 'g' in XREADGROUP with GROUP option"),
    # key by key: the second key's NOGROUP wins over nothing, the first key's ID error over it
    (("XREADGROUP", "GROUP", "g", "c", "STREAMS", "ms", "nokey", "$", ">"), "The $ ID is meaningless"),
    (("XREADGROUP", "GROUP", "g", "c", "STREAMS", "ms", "str", ">", ">"),
     "WRONGTYPE Operation against a key holding the wrong kind of value"),
    (("XREADGROUP", "GROUP", "g", "c", "STREAMS", "ms"), "wrong number of arguments for 'xreadgroup' command"),
]


@pytest.mark.parametrize(("argv", "message"), ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors(raw_r, argv, message):
    setup3(raw_r)
    raw_r.set("str", "x")
    with pytest.raises(redis.ResponseError) as exc:
        raw_r.execute_command(*argv)
    assert str(exc.value).startswith(message)
    # a failed XREADGROUP creates no consumer and delivers nothing
    assert raw_r.execute_command("XPENDING", "ms", "g")[0] == 0
    assert raw_r.execute_command("XINFO", "CONSUMERS", "ms", "g") == []


def test_error_prefixes_on_the_wire(raw, raw_r):
    setup3(raw_r)
    raw.send(resp("XREADGROUP", "GROUP", "g", "c", "STREAMS", "ms", "x"))
    expected = b"-ERR Invalid stream ID specified as stream command argument\r\n"
    assert raw.read_exactly(len(expected)) == expected
    raw.send(resp("XREADGROUP", "GROUP", "g", "c", "STREAMS", "nokey", ">"))
    expected = b"-NOGROUP No such key 'nokey' or consumer group 'g' in XREADGROUP with GROUP option\r\n"
    assert raw.read_exactly(len(expected)) == expected


# --- reply bytes ------------------------------------------------------------------------------


def test_reply_bytes_resp2_and_resp3(server, raw_r):
    setup3(raw_r)
    conn = RawConnection(server.port)
    try:
        cmd = resp("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "ms", ">")
        expected = b"*1\r\n*2\r\n$2\r\nms\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv1\r\n"
        assert conn.request(cmd, len(expected)) == expected
        conn.send(resp("HELLO", "3"))
        conn.sock.settimeout(0.3)
        conn.read_until_closed()  # drain the HELLO map
        conn.sock.settimeout(5)
        expected = b"%1\r\n$2\r\nms\r\n*1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv2\r\n"
        assert conn.request(cmd, len(expected)) == expected
        # a deleted entry in the history: nil fields are a null (RESP3) ...
        raw_r.execute_command("XDEL", "ms", "1-0")
        cmd = resp("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "ms", "0")
        expected = b"%1\r\n$2\r\nms\r\n*1\r\n*2\r\n$3\r\n1-0\r\n_\r\n"
        assert conn.request(cmd, len(expected)) == expected
        # nothing new, no BLOCK: null
        cmd = resp("XREADGROUP", "GROUP", "g", "c", "STREAMS", "ms", ">")
        conn.send(cmd)
        conn.send(cmd)
        assert conn.read_exactly(len(b"%1\r\n$2\r\nms\r\n*1\r\n*2\r\n$3\r\n3-0\r\n")) == \
            b"%1\r\n$2\r\nms\r\n*1\r\n*2\r\n$3\r\n3-0\r\n"
        assert conn.read_exactly(len(b"*2\r\n$1\r\nf\r\n$2\r\nv3\r\n_\r\n")) == \
            b"*2\r\n$1\r\nf\r\n$2\r\nv3\r\n_\r\n"
    finally:
        conn.close()


def test_null_and_nil_fields_resp2_bytes(raw, raw_r):
    setup3(raw_r)
    raw_r.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "ms", ">")
    raw_r.execute_command("XDEL", "ms", "2-0")
    cmd = resp("XREADGROUP", "GROUP", "g", "c", "STREAMS", "ms", ">")
    assert raw.request(cmd, 5) == b"*-1\r\n"
    cmd = resp("XREADGROUP", "GROUP", "g", "c", "STREAMS", "ms", "1-0")
    expected = (b"*1\r\n*2\r\n$2\r\nms\r\n*2\r\n*2\r\n$3\r\n2-0\r\n*-1\r\n"
                b"*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv3\r\n")
    assert raw.request(cmd, len(expected)) == expected


def test_command_table_entry(raw_r):
    assert raw_r.execute_command("COMMAND", "GETKEYS", "XREADGROUP", "GROUP", "g", "c", "COUNT", "1",
                             "STREAMS", "s1", "s2", ">", ">") == [b"s1", b"s2"]
    # a group or consumer called STREAMS is not taken for the keyword
    assert raw_r.execute_command("COMMAND", "GETKEYS", "XREADGROUP", "GROUP", "streams", "streams",
                             "STREAMS", "k", ">") == [b"k"]
    info = raw_r.execute_command("COMMAND", "INFO", "XREADGROUP")[0]
    assert info[1] == -7
    assert {b"write", b"blocking", b"movablekeys"} <= set(info[2])


# --- blocking ---------------------------------------------------------------------------------


def test_block_served_by_xadd(raw, raw_r):
    raw_r.execute_command("XGROUP", "CREATE", "ms", "g", "$", "MKSTREAM")
    raw.send(resp("XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "ms", ">"))
    wait_blocked(raw_r, 1)
    # the consumer exists while it waits, as in Redis
    consumers = raw_r.execute_command("XINFO", "CONSUMERS", "ms", "g")
    assert consumers[0][1] == b"alice"
    raw_r.execute_command("XADD", "ms", "5-1", "k", "v")
    expected = b"*1\r\n*2\r\n$2\r\nms\r\n*1\r\n*2\r\n$3\r\n5-1\r\n*2\r\n$1\r\nk\r\n$1\r\nv\r\n"
    assert raw.read_exactly(len(expected)) == expected
    assert raw_r.execute_command("XPENDING", "ms", "g")[:3] == [1, b"5-1", b"5-1"]
    wait_blocked(raw_r, 0)


def test_block_fifo_between_consumers_of_one_group(server, raw_r):
    raw_r.execute_command("XGROUP", "CREATE", "ms", "g", "$", "MKSTREAM")
    first, second = RawConnection(server.port), RawConnection(server.port)
    try:
        first.send(resp("XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "ms", ">"))
        wait_blocked(raw_r, 1)
        second.send(resp("XREADGROUP", "GROUP", "g", "c2", "BLOCK", "0", "STREAMS", "ms", ">"))
        wait_blocked(raw_r, 2)
        raw_r.execute_command("XADD", "ms", "1-1", "n", "1")
        expected = b"*1\r\n*2\r\n$2\r\nms\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nn\r\n$1\r\n1\r\n"
        assert first.read_exactly(len(expected)) == expected
        wait_blocked(raw_r, 1)  # the second consumer found nothing new and keeps waiting
        assert not _has_data(second)
        raw_r.execute_command("XADD", "ms", "1-2", "n", "2")
        expected = b"*1\r\n*2\r\n$2\r\nms\r\n*1\r\n*2\r\n$3\r\n1-2\r\n*2\r\n$1\r\nn\r\n$1\r\n2\r\n"
        assert second.read_exactly(len(expected)) == expected
        assert raw_r.execute_command("XPENDING", "ms", "g") == [2, b"1-1", b"1-2", [[b"c1", b"1"], [b"c2", b"1"]]]
    finally:
        first.close()
        second.close()


def _has_data(conn: RawConnection, wait: float = 0.05) -> bool:
    conn.sock.settimeout(wait)
    try:
        data = conn.sock.recv(1, 2)  # MSG_PEEK
        return bool(data)
    except TimeoutError:
        return False
    finally:
        conn.sock.settimeout(5)


def test_block_several_groups_each_get_the_entry(server, raw_r):
    raw_r.execute_command("XGROUP", "CREATE", "ms", "g1", "$", "MKSTREAM")
    raw_r.execute_command("XGROUP", "CREATE", "ms", "g2", "$")
    a, b = RawConnection(server.port), RawConnection(server.port)
    try:
        a.send(resp("XREADGROUP", "GROUP", "g1", "c", "BLOCK", "0", "STREAMS", "ms", ">"))
        b.send(resp("XREADGROUP", "GROUP", "g2", "c", "BLOCK", "0", "STREAMS", "ms", ">"))
        wait_blocked(raw_r, 2)
        raw_r.execute_command("XADD", "ms", "9-0", "x", "y")
        expected = b"*1\r\n*2\r\n$2\r\nms\r\n*1\r\n*2\r\n$3\r\n9-0\r\n*2\r\n$1\r\nx\r\n$1\r\ny\r\n"
        assert a.read_exactly(len(expected)) == expected
        assert b.read_exactly(len(expected)) == expected
    finally:
        a.close()
        b.close()


def test_block_timeout(raw, raw_r):
    raw_r.execute_command("XGROUP", "CREATE", "ms", "g", "$", "MKSTREAM")
    t0 = time.monotonic()
    assert raw.request(resp("XREADGROUP", "GROUP", "g", "c", "BLOCK", "100", "STREAMS", "ms", ">"), 5) == b"*-1\r\n"
    assert 0.09 <= time.monotonic() - t0 < 2
    wait_blocked(raw_r, 0)


def test_block_does_not_reply_empty_when_new_entries_were_deleted(raw, raw_r):
    # "Blocking XREADGROUP will not reply with an empty array"
    raw_r.execute_command("XGROUP", "CREATE", "ms", "g", "$", "MKSTREAM")
    raw_r.execute_command("XADD", "ms", "666", "f", "v")
    raw_r.execute_command("XREADGROUP", "GROUP", "g", "Alice", "BLOCK", "10", "STREAMS", "ms", ">")
    raw_r.execute_command("XADD", "ms", "667", "f2", "v2")
    raw_r.execute_command("XDEL", "ms", "667")
    assert raw.request(resp("XREADGROUP", "GROUP", "g", "Alice", "BLOCK", "10", "STREAMS", "ms", ">"), 5) \
        == b"*-1\r\n"


def test_history_read_never_blocks(raw_rc):
    r = raw_rc
    setup3(r)
    t0 = time.monotonic()
    got = r.execute_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "ms", "0")
    assert streams_of(got) == {b"ms": []}
    assert time.monotonic() - t0 < 1


def test_block_inside_multi_answers_null(raw_r):
    raw_r.execute_command("XGROUP", "CREATE", "ms", "g", "$", "MKSTREAM")
    pipe = raw_r.pipeline(transaction=True)
    pipe.execute_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "ms", ">")
    pipe.execute_command("XADD", "ms", "1-0", "a", "b")
    assert pipe.execute() == [None, b"1-0"]


def test_disconnect_while_blocked(server, raw_r):
    raw_r.execute_command("XGROUP", "CREATE", "ms", "g", "$", "MKSTREAM")
    conn = RawConnection(server.port)
    conn.send(resp("XREADGROUP", "GROUP", "g", "gone", "BLOCK", "0", "STREAMS", "ms", ">"))
    wait_blocked(raw_r, 1)
    conn.close()
    wait_blocked(raw_r, 0)
    raw_r.execute_command("XADD", "ms", "1-0", "a", "b")
    # the entry was not delivered to the departed client: the next reader gets it
    got = raw_r.execute_command("XREADGROUP", "GROUP", "g", "other", "STREAMS", "ms", ">")
    assert got[0][1][0][0] == b"1-0"
    assert raw_r.execute_command("XPENDING", "ms", "g")[3] == [[b"other", b"1"]]


@pytest.mark.parametrize("how", ["del", "flushall", "flushdb", "destroy", "unlink"])
def test_blocked_reader_released_with_nogroup(raw, raw_r, how):
    # Redis 7.4 re-runs the blocked command, which then fails with its own NOGROUP error
    # (Redis 7.0 answered "-UNBLOCKED the stream key no longer exists" / "-NOGROUP the consumer
    # group this client was blocked on no longer exists" instead).
    raw_r.execute_command("XADD", "ms", "666", "f", "v")
    raw_r.execute_command("XGROUP", "CREATE", "ms", "g", "$")
    raw.send(resp("XREADGROUP", "GROUP", "g", "Alice", "BLOCK", "0", "STREAMS", "ms", ">"))
    wait_blocked(raw_r, 1)
    if how == "destroy":
        assert raw_r.execute_command("XGROUP", "DESTROY", "ms", "g") == 1
    elif how in ("del", "unlink"):
        raw_r.execute_command(how.upper(), "ms")
    else:
        raw_r.execute_command(how.upper())
    assert raw.read_exactly(len(NOGROUP_MS)) == NOGROUP_MS
    wait_blocked(raw_r, 0)


@pytest.mark.parametrize("how", ["set", "multi"])
def test_blocked_reader_released_with_wrongtype(raw, raw_r, how):
    raw_r.execute_command("XADD", "ms", "666", "f", "v")
    raw_r.execute_command("XGROUP", "CREATE", "ms", "g", "$")
    raw.send(resp("XREADGROUP", "GROUP", "g", "Alice", "BLOCK", "0", "STREAMS", "ms", ">"))
    wait_blocked(raw_r, 1)
    if how == "set":
        raw_r.set("ms", "val1")
    else:
        pipe = raw_r.pipeline(transaction=True)
        pipe.delete("ms")
        pipe.set("ms", "e1")
        pipe.execute()
    assert raw.read_exactly(len(WRONGTYPE)) == WRONGTYPE


def test_blocked_reader_survives_recreated_key_with_group(raw, raw_r):
    raw_r.execute_command("XADD", "ms", "666", "f", "v")
    raw_r.execute_command("XGROUP", "CREATE", "ms", "g", "$")
    raw.send(resp("XREADGROUP", "GROUP", "g", "Alice", "BLOCK", "0", "STREAMS", "ms", ">"))
    wait_blocked(raw_r, 1)
    # delete and re-create key and group atomically: the re-run finds the group, nothing new
    pipe = raw_r.pipeline(transaction=True)
    pipe.delete("ms")
    pipe.execute_command("XGROUP", "CREATE", "ms", "g", "$", "MKSTREAM")
    pipe.execute()
    wait_blocked(raw_r, 1)
    raw_r.execute_command("XADD", "ms", "700", "x", "y")
    expected = b"*1\r\n*2\r\n$2\r\nms\r\n*1\r\n*2\r\n$5\r\n700-0\r\n*2\r\n$1\r\nx\r\n$1\r\ny\r\n"
    assert raw.read_exactly(len(expected)) == expected


def test_blocked_commands_behind_run_after_release(raw, raw_r):
    raw_r.execute_command("XGROUP", "CREATE", "ms", "g", "$", "MKSTREAM")
    raw.send(resp("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "ms", ">") + resp("PING"))
    wait_blocked(raw_r, 1)
    raw_r.execute_command("XADD", "ms", "1-0", "a", "b")
    expected = b"*1\r\n*2\r\n$2\r\nms\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n+PONG\r\n"
    assert raw.read_exactly(len(expected)) == expected


async def test_async_client_blocking_read(ar, server):
    await ar.execute_command("XGROUP", "CREATE", "ms", "g", "$", "MKSTREAM")
    writer = redis.asyncio.Redis(port=server.port)
    try:
        task = asyncio.create_task(ar.xreadgroup("g", "c", {"ms": ">"}, block=2000))
        for _ in range(200):
            if (await writer.info("clients"))["blocked_clients"] == 1:
                break
            await asyncio.sleep(0.005)
        await writer.xadd("ms", {"k": "v"}, id="3-3")
        got = await asyncio.wait_for(task, 3)
        assert got == {b"ms": [[(b"3-3", {b"k": b"v"})]]} or got == {b"ms": [[b"3-3", {b"k": b"v"}]]}
        assert await ar.xack("ms", "g", "3-3") == 1
        assert (await ar.xpending("ms", "g"))["pending"] == 0
    finally:
        await writer.aclose()


def test_redis_py_sync_helpers(server):
    r = redis.Redis(port=server.port)
    r.flushall()
    r.xgroup_create("ms", "g", id="0", mkstream=True)
    r.xadd("ms", {"a": "1"}, id="1-0")
    r.xadd("ms", {"b": "2"}, id="2-0")
    got = r.xreadgroup("g", "c", {"ms": ">"}, count=1)
    assert got == [[b"ms", [(b"1-0", {b"a": b"1"})]]]
    got = r.xreadgroup("g", "c", {"ms": ">"}, noack=True)
    assert got == [[b"ms", [(b"2-0", {b"b": b"2"})]]]
    assert r.xpending("ms", "g")["pending"] == 1
    r.close()


# --- differential -----------------------------------------------------------------------------

SCRIPT = [
    ("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"),
    ("XADD", "s", "1-1", "a", "1"),
    ("XADD", "s", "1-2", "b", "2"),
    ("XADD", "s", "2-0", "c", "3"),
    ("XREADGROUP", "GROUP", "g", "c1", "COUNT", "2", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "g", "c2", "NOACK", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", "0"),
    ("XDEL", "s", "1-1"),
    ("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", "0-0"),
    ("XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "STREAMS", "s", "1-1"),
    ("XREADGROUP", "GROUP", "g", "c3", "STREAMS", "s", "s", ">", "0"),
    ("XREADGROUP", "GROUP", "g", "c3", "STREAMS", "s", "$"),
    ("XREADGROUP", "GROUP", "g", "c3", "STREAMS", "s", "+"),
    ("XREADGROUP", "GROUP", "g", "c3", "STREAMS", "s"),
    ("XREADGROUP", "GROUP", "g", "c3", "STREAMS", "s", "nokey", ">", ">"),
    ("XREADGROUP", "GROUP", "g", "c3", "BLOCK", "-1", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "g", "c3", "COUNT", "1", "STREAMS", "s", "1-x"),
    ("XREADGROUP", "GROUP", "g", "c3", "COUNT", "1", "BLOCK", "1", "STREAMS", "s", ">"),
    ("XREADGROUP", "COUNT", "1", "NOACK", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "g", "c3", "STREAMS", "s", "18446744073709551615-18446744073709551615"),
    ("SET", "str", "x"),
    ("XREADGROUP", "GROUP", "g", "c3", "STREAMS", "str", ">"),
    ("XPENDING", "s", "g"),
    ("XINFO", "GROUPS", "s"),
]


# Where Redis 7.0 (the reference binary) and 7.4 (the specification) differ: 7.4 names `+` in
# XREADGROUP specifically (it became meaningful for XREAD in 7.4); 7.0 calls it an invalid ID.
KNOWN_7_0_DIFFERENCES = {
    SCRIPT.index(("XREADGROUP", "GROUP", "g", "c3", "STREAMS", "s", "+")):
        ("error", "The + ID is meaningless in the context of XREADGROUP: you want to read the "
         "history of this consumer by specifying a proper ID, or use the > ID to get new messages. "
         "The + ID would just return an empty result set."),
}


def test_differential_against_real_redis(server, real_redis):
    ours = run_plain(server.port, SCRIPT)
    theirs = run_plain(real_redis.port, SCRIPT)
    for i, (argv, a, b) in enumerate(zip(SCRIPT, ours, theirs, strict=True)):
        if i in KNOWN_7_0_DIFFERENCES:
            assert a == KNOWN_7_0_DIFFERENCES[i], argv
        else:
            assert a == b, argv


def test_reply_ids_across_milliseconds_and_large_sequences(r: redis.Redis) -> None:
    # The reply formats each millisecond once and small sequence numbers from a table.
    ids = ["5-0", "5-4095", "5-4096", "5-18446744073709551615", "6-7", "1700000000000-12"]
    for eid in ids:
        r.execute_command("XADD", "big", eid, "f", "v")
    r.execute_command("XGROUP", "CREATE", "big", "g", "0")
    reply = r.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "big", ">")
    assert [e[0] for e in streams_of(reply)[b"big"]] == [i.encode() for i in ids]


# Entries of every stored shape, three to a node: the node's own field names (one-byte and
# multi-byte value lengths, an empty value, CRLF inside a value), other field names, a
# three-field node with a long middle value, deleted entries inside a run, the open tail node,
# sequence numbers past the reply's digit table.
_SHAPES_SCRIPT = [
    ("CONFIG", "SET", "stream-node-max-entries", "3"),
    ("XADD", "sh", "1-1", "f", "v"),
    ("XADD", "sh", "1-2", "f", "x" * 200),
    ("XADD", "sh", "1-3", "a", "1", "b", "2"),
    ("XADD", "sh", "2-0", "x", "1", "y", "2", "z", "3"),
    ("XADD", "sh", "2-1", "x", "1", "y", "y" * 300, "z", "3"),
    ("XADD", "sh", "2-2", "x", "", "y", "2", "z", "3" * 130),
    ("XADD", "sh", "3-0", "f", ""),
    ("XADD", "sh", "3-1", "f", "v\r\nv"),
    ("XADD", "sh", "3-4097", "f", "w"),
    ("XADD", "sh", "1700000000000-18446744073709551615", "f", "last"),
    ("XDEL", "sh", "2-1", "3-1"),
    ("XGROUP", "CREATE", "sh", "g", "0"),
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", "4", "STREAMS", "sh", ">"),
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "sh", ">"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "sh", ">"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "sh", ">"),
    ("XGROUP", "CREATE", "sh", "g2", "0"),
    ("XREADGROUP", "GROUP", "g2", "c", "NOACK", "STREAMS", "sh", ">"),
    ("XPENDING", "sh", "g"),
    ("XPENDING", "sh", "g2"),
]


def test_reply_bytes_of_every_entry_shape_match_redis(server, real_redis):
    try:
        assert_same_as_redis(server, real_redis, _SHAPES_SCRIPT)
    finally:
        for port in (server.port, real_redis.port):
            with redis.Redis(port=port) as c:
                c.config_set("stream-node-max-entries", 100)


def test_reply_entries_are_xranges_bytes(server, raw_r):
    # XRANGE encodes through the entry cache, XREADGROUP straight from the nodes: same bytes.
    conn = RawConnection(server.port)
    try:
        for argv in _SHAPES_SCRIPT[:13]:
            call_raw(conn, *argv)
        xrange = call_raw(conn, "XRANGE", "sh", "-", "+")
        head = b"*1\r\n*2\r\n$2\r\nsh\r\n"
        reply = call_raw(conn, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "sh", ">")
        assert reply == head + xrange
        assert xrange.startswith(b"*8\r\n")  # every live entry is there
    finally:
        conn.close()
        raw_r.config_set("stream-node-max-entries", 100)


# A group reading on from where it stopped starts at the slot its last read ended (storage
# remembers it): the slot must give way to whatever changed the stream in between. Five entries
# to a node: reads stop inside nodes and at their ends; between reads the next entry is
# deleted, whole nodes are trimmed away (indexes shift), the open tail node grows, another
# group and XREAD read from elsewhere, and SETID moves the group back.
_POSITION_SCRIPT = [
    ("CONFIG", "SET", "stream-node-max-entries", "5"),
    *[("XADD", "pos", f"1-{i}", "f", f"v{i}") for i in range(1, 13)],
    ("XGROUP", "CREATE", "pos", "g", "0"),
    ("XGROUP", "CREATE", "pos", "h", "0"),
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", "3", "STREAMS", "pos", ">"),
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "pos", ">"),  # to a node's end
    ("XREADGROUP", "GROUP", "g", "d", "COUNT", "1", "STREAMS", "pos", ">"),
    ("XREADGROUP", "GROUP", "h", "c", "COUNT", "4", "STREAMS", "pos", ">"),  # another position
    ("XREAD", "COUNT", "2", "STREAMS", "pos", "1-3"),
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "pos", ">"),
    ("XDEL", "pos", "1-9"),  # the next entry g would read
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "pos", ">"),
    ("XTRIM", "pos", "MAXLEN", "4"),  # nodes before g's position go: indexes shift
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "pos", ">"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "pos", ">"),  # to the end of the open node
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "pos", ">"),
    ("XADD", "pos", "1-13", "f", "v13"),  # into the node g stopped at the end of
    ("XADD", "pos", "2-0", "f", "v14"),
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "pos", ">"),
    *[("XADD", "pos", f"3-{i}", "f", f"w{i}") for i in range(6)],  # new nodes after it
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", "3", "STREAMS", "pos", ">"),
    ("XREADGROUP", "GROUP", "h", "c", "COUNT", "2", "STREAMS", "pos", ">"),
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", "3", "STREAMS", "pos", ">"),
    ("XGROUP", "SETID", "pos", "g", "1-12"),
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", "3", "STREAMS", "pos", ">"),
    ("XDEL", "pos", "3-3", "3-4", "3-5"),  # the tail, up to its end
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "pos", ">"),
    ("XADD", "pos", "4-0", "f", "x"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "pos", ">"),
    ("XDEL", "pos", "4-0"),
    ("XTRIM", "pos", "MAXLEN", "0"),
    ("XADD", "pos", "5-0", "f", "y"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "pos", ">"),
    # Trimmed while the group's position is in a later node: that node's index drops by two.
    *[("XADD", "deep", f"1-{i}", "f", f"v{i}") for i in range(1, 41)],
    ("XGROUP", "CREATE", "deep", "g", "0"),
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", "12", "STREAMS", "deep", ">"),
    ("XTRIM", "deep", "MAXLEN", "30"),
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", "4", "STREAMS", "deep", ">"),
    ("XPENDING", "pos", "g"),  # (the detailed form's idle times differ by the servers' pace)
    ("XPENDING", "pos", "h"),
    ("XINFO", "GROUPS", "pos"),
]


def test_reads_from_the_last_position_match_redis(server, real_redis):
    try:
        assert_same_as_redis(server, real_redis, _POSITION_SCRIPT)
    finally:
        for port in (server.port, real_redis.port):
            with redis.Redis(port=port) as c:
                c.config_set("stream-node-max-entries", 100)
