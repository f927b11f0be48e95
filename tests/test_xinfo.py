"""XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS, XINFO HELP."""

from __future__ import annotations

import time

import redis

from tests.helpers import as_map, err, run_plain

# Redis 8.6 added the idempotent producers' fields after recorded-first-entry-id.
IDMP_FIELDS = [b"idmp-duration", b"idmp-maxsize", b"pids-tracked", b"iids-tracked", b"iids-added",
               b"iids-duplicates"]
STREAM_FIELDS = [b"length", b"radix-tree-keys", b"radix-tree-nodes", b"last-generated-id",
                 b"max-deleted-entry-id", b"entries-added", b"recorded-first-entry-id", *IDMP_FIELDS,
                 b"groups", b"first-entry", b"last-entry"]
FULL_FIELDS = STREAM_FIELDS[:13] + [b"entries", b"groups"]
# nacked-count: Redis 8.8 (XNACK), after the 7.4 fields.
GROUP_FULL_FIELDS = [b"name", b"last-delivered-id", b"entries-read", b"lag", b"pel-count", b"pending",
                     b"consumers", b"nacked-count"]
CONSUMER_FULL_FIELDS = [b"name", b"seen-time", b"active-time", b"pel-count", b"pending"]


def full(r: redis.Redis, key: str = "x", *opts) -> dict:
    d = as_map(r.execute_command("XINFO", "STREAM", key, "FULL", *opts))
    d[b"groups"] = [as_map(g) for g in d[b"groups"]]
    for g in d[b"groups"]:
        g[b"consumers"] = [as_map(c) for c in g[b"consumers"]]
    return d


def group_of(r: redis.Redis, i: int = 0) -> dict:
    return full(r)[b"groups"][i]


# --- XINFO STREAM -----------------------------------------------------------------------------


def test_stream_fields_in_order(raw_rc):
    for i in (1, 2, 3):
        raw_rc.execute_command("XADD", "x", f"{i}-0", "f", str(i))
    raw_rc.execute_command("XDEL", "x", "2-0")
    raw_rc.execute_command("XGROUP", "CREATE", "x", "g", "0")
    reply = raw_rc.execute_command("XINFO", "STREAM", "x")
    d = as_map(reply)
    assert list(d) == STREAM_FIELDS
    assert d[b"length"] == 2
    assert d[b"radix-tree-keys"] == 1
    assert d[b"last-generated-id"] == b"3-0"
    assert d[b"max-deleted-entry-id"] == b"2-0"
    assert d[b"entries-added"] == 3
    assert d[b"recorded-first-entry-id"] == b"1-0"
    assert d[b"groups"] == 1
    assert d[b"first-entry"] == [b"1-0", [b"f", b"1"]]
    assert d[b"last-entry"] == [b"3-0", [b"f", b"3"]]


def test_empty_stream_has_nil_entries(raw_r):
    raw_r.execute_command("XGROUP", "CREATE", "x", "g", "$", "MKSTREAM")
    d = as_map(raw_r.execute_command("XINFO", "STREAM", "x"))
    assert d[b"length"] == 0 and d[b"first-entry"] is None and d[b"last-entry"] is None
    assert d[b"last-generated-id"] == b"0-0" and d[b"recorded-first-entry-id"] == b"0-0"


def test_stream_bytes_resp2_and_resp3(server, raw_r):
    raw_r.execute_command("XADD", "x", "1-0", "f", "v")
    conn = __import__("tests.serverproc", fromlist=["RawConnection"]).RawConnection(server.port)
    try:
        conn.send(b"XINFO STREAM x\r\n")
        expected = (b"*32\r\n$6\r\nlength\r\n:1\r\n$15\r\nradix-tree-keys\r\n:1\r\n"
                    b"$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n1-0\r\n"
                    b"$20\r\nmax-deleted-entry-id\r\n$3\r\n0-0\r\n$13\r\nentries-added\r\n:1\r\n"
                    b"$23\r\nrecorded-first-entry-id\r\n$3\r\n1-0\r\n"
                    b"$13\r\nidmp-duration\r\n:100\r\n$12\r\nidmp-maxsize\r\n:100\r\n"
                    b"$12\r\npids-tracked\r\n:0\r\n$12\r\niids-tracked\r\n:0\r\n"
                    b"$10\r\niids-added\r\n:0\r\n$15\r\niids-duplicates\r\n:0\r\n"
                    b"$6\r\ngroups\r\n:0\r\n"
                    b"$11\r\nfirst-entry\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
                    b"$10\r\nlast-entry\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n")
        assert conn.read_exactly(len(expected)) == expected
        conn.send(b"HELLO 3\r\n")
        conn.sock.settimeout(0.3)
        conn.read_until_closed()
        conn.sock.settimeout(5)
        raw_r.execute_command("XDEL", "x", "1-0")
        conn.send(b"XINFO STREAM x\r\n")
        expected = (b"%16\r\n$6\r\nlength\r\n:0\r\n$15\r\nradix-tree-keys\r\n:")
        assert conn.read_exactly(len(expected)) == expected
        conn.sock.settimeout(0.3)
        rest = conn.read_until_closed()
        assert rest.endswith(b"$11\r\nfirst-entry\r\n_\r\n$10\r\nlast-entry\r\n_\r\n")
    finally:
        conn.close()


def test_errors(raw_r):
    raw_r.set("str", "v")
    raw_r.execute_command("XADD", "x", "1-0", "f", "v")
    assert err(raw_r, "XINFO", "STREAM", "nokey") == "no such key"
    assert err(raw_r, "XINFO", "GROUPS", "nokey") == "no such key"
    assert err(raw_r, "XINFO", "CONSUMERS", "nokey", "g") == "no such key"
    # the key is looked up before the options are checked
    assert err(raw_r, "XINFO", "STREAM", "nokey", "BAD") == "no such key"
    assert err(raw_r, "XINFO", "STREAM", "str") == "WRONGTYPE Operation against a key holding the wrong kind of value"
    assert err(raw_r, "XINFO", "CONSUMERS", "x", "g") == "NOGROUP No such consumer group 'g' for key name 'x'"
    bad = "unknown subcommand or wrong number of arguments for 'STREAM'. Try XINFO HELP."
    assert err(raw_r, "XINFO", "STREAM", "x", "BAD") == bad
    assert err(raw_r, "XINFO", "STREAM", "x", "FULL", "COUNT") == bad
    assert err(raw_r, "XINFO", "STREAM", "x", "FULL", "LIMIT", "1") == bad
    assert err(raw_r, "XINFO", "STREAM", "x", "FULL", "COUNT", "1", "X") == bad
    assert err(raw_r, "XINFO", "STREAM", "x", "FULL", "COUNT", "x") == "value is not an integer or out of range"
    assert err(raw_r, "XINFO", "GROUPS") == "wrong number of arguments for 'xinfo|groups' command"
    assert err(raw_r, "XINFO", "GROUPS", "x", "y") == "wrong number of arguments for 'xinfo|groups' command"
    assert err(raw_r, "XINFO", "CONSUMERS", "x") == "wrong number of arguments for 'xinfo|consumers' command"
    assert err(raw_r, "XINFO", "STREAM") == "wrong number of arguments for 'xinfo|stream' command"
    assert err(raw_r, "XINFO", "FOO", "x") == "unknown subcommand 'FOO'. Try XINFO HELP."


def test_help(raw_rc):
    lines = raw_rc.execute_command("XINFO", "HELP")
    assert lines == [b"XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                     b"CONSUMERS <key> <groupname>", b"    Show consumers of <groupname>.",
                     b"GROUPS <key>", b"    Show the stream consumer groups.",
                     b"STREAM <key> [FULL [COUNT <count>]", b"    Show information about the stream.",
                     b"HELP", b"    Print this help."]


# --- FULL -------------------------------------------------------------------------------------


def _full_fixture(r: redis.Redis) -> None:
    # stream-cgroups.tcl "XINFO FULL output"
    for ms, f in ((100, "a"), (101, "b"), (102, "c"), (103, "e"), (104, "f")):
        r.execute_command("XADD", "x", str(ms), f, "1")
    r.execute_command("XGROUP", "CREATE", "x", "g1", "0")
    r.execute_command("XGROUP", "CREATE", "x", "g2", "0")
    r.execute_command("XREADGROUP", "GROUP", "g1", "Alice", "COUNT", "1", "STREAMS", "x", ">")
    r.execute_command("XREADGROUP", "GROUP", "g1", "Bob", "COUNT", "1", "STREAMS", "x", ">")
    r.execute_command("XREADGROUP", "GROUP", "g1", "Bob", "NOACK", "COUNT", "1", "STREAMS", "x", ">")
    r.execute_command("XREADGROUP", "GROUP", "g2", "Charlie", "COUNT", "4", "STREAMS", "x", ">")
    r.execute_command("XDEL", "x", "103")


def test_full_output(raw_rc):
    before = int(time.time() * 1000)
    _full_fixture(raw_rc)
    raw = raw_rc.execute_command("XINFO", "STREAM", "x", "FULL")
    if not isinstance(raw, dict):
        assert len(raw) == 30
    d = full(raw_rc)
    assert list(d) == FULL_FIELDS
    assert d[b"length"] == 4
    assert d[b"entries"] == [[b"100-0", [b"a", b"1"]], [b"101-0", [b"b", b"1"]],
                             [b"102-0", [b"c", b"1"]], [b"104-0", [b"f", b"1"]]]
    g1, g2 = d[b"groups"]
    assert list(g1) == GROUP_FULL_FIELDS
    assert (g1[b"name"], g1[b"last-delivered-id"], g1[b"entries-read"], g1[b"pel-count"]) == \
        (b"g1", b"102-0", 3, 2)
    assert g1[b"lag"] is None  # a deletion lies after the group's position
    assert [p[:2] + p[3:] for p in g1[b"pending"]] == [[b"100-0", b"Alice", 1], [b"101-0", b"Bob", 1]]
    assert all(before <= p[2] <= before + 5000 for p in g1[b"pending"])
    alice, bob = g1[b"consumers"]
    assert list(alice) == CONSUMER_FULL_FIELDS
    assert alice[b"name"] == b"Alice" and alice[b"pel-count"] == 1
    assert [p[0] for p in alice[b"pending"]] == [b"100-0"] and len(alice[b"pending"][0]) == 3
    assert bob[b"pel-count"] == 1
    assert before <= bob[b"active-time"] <= bob[b"seen-time"] <= before + 5000
    assert g2[b"name"] == b"g2"
    (charlie,) = g2[b"consumers"]
    assert [p[0] for p in charlie[b"pending"]] == [b"100-0", b"101-0", b"102-0", b"103-0"]
    assert g2[b"lag"] is None and g2[b"entries-read"] == 4  # the XDEL of 103 makes it unknowable


def test_full_count(raw_rc):
    _full_fixture(raw_rc)
    d = full(raw_rc, "x", "COUNT", "1")
    assert d[b"entries"] == [[b"100-0", [b"a", b"1"]]]
    g2 = d[b"groups"][1]
    assert len(g2[b"pending"]) == 1 and len(g2[b"consumers"][0][b"pending"]) == 1
    assert g2[b"pel-count"] == 4 and g2[b"consumers"][0][b"pel-count"] == 4
    d = full(raw_rc, "x", "COUNT", "0")  # 0 = everything
    assert len(d[b"entries"]) == 4 and len(d[b"groups"][1][b"pending"]) == 4
    d = full(raw_rc, "x", "count", "-3")  # negative = the default 10
    assert len(d[b"entries"]) == 4


def test_full_default_count_is_ten(raw_r):
    for i in range(1, 13):
        raw_r.execute_command("XADD", "x", f"{i}-0", "f", "v")
    raw_r.execute_command("XGROUP", "CREATE", "x", "g", "0")
    raw_r.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "x", ">")
    d = full(raw_r)
    assert len(d[b"entries"]) == 10
    assert len(d[b"groups"][0][b"pending"]) == 10 and d[b"groups"][0][b"pel-count"] == 12
    assert len(full(raw_r, "x", "COUNT", "0")[b"entries"]) == 12


# --- XINFO GROUPS / CONSUMERS -----------------------------------------------------------------


def test_groups(raw_rc):
    for i in (1, 2, 3):
        raw_rc.execute_command("XADD", "x", f"{i}-0", "f", "v")
    assert raw_rc.execute_command("XINFO", "GROUPS", "x") == []
    raw_rc.execute_command("XGROUP", "CREATE", "x", "b", "0")
    raw_rc.execute_command("XGROUP", "CREATE", "x", "a", "$")
    raw_rc.execute_command("XREADGROUP", "GROUP", "b", "c1", "COUNT", "2", "STREAMS", "x", ">")
    raw_rc.execute_command("XGROUP", "CREATECONSUMER", "x", "b", "c2")
    rows = [as_map(g) for g in raw_rc.execute_command("XINFO", "GROUPS", "x")]
    assert rows == [
        {b"name": b"a", b"consumers": 0, b"pending": 0, b"last-delivered-id": b"3-0",
         b"entries-read": None, b"lag": 0},
        {b"name": b"b", b"consumers": 2, b"pending": 2, b"last-delivered-id": b"2-0",
         b"entries-read": 2, b"lag": 1},
    ]
    assert list(rows[0]) == [b"name", b"consumers", b"pending", b"last-delivered-id", b"entries-read", b"lag"]


def test_consumers_idle_and_inactive(raw_rc):
    # stream-cgroups.tcl "Consumer seen-time and active-time"
    raw_rc.execute_command("XGROUP", "CREATE", "x", "g", "$", "MKSTREAM")
    raw_rc.execute_command("XREADGROUP", "GROUP", "g", "Alice", "COUNT", "1", "STREAMS", "x", ">")
    time.sleep(0.1)
    (c,) = [as_map(x) for x in raw_rc.execute_command("XINFO", "CONSUMERS", "x", "g")]
    assert list(c) == [b"name", b"pending", b"idle", b"inactive"]
    assert c[b"name"] == b"Alice" and c[b"idle"] >= 100 and c[b"inactive"] == -1
    raw_rc.execute_command("XADD", "x", "1-0", "f", "v")
    raw_rc.execute_command("XREADGROUP", "GROUP", "g", "Alice", "COUNT", "1", "STREAMS", "x", ">")
    (c,) = [as_map(x) for x in raw_rc.execute_command("XINFO", "CONSUMERS", "x", "g")]
    assert c[b"idle"] < 80 and 0 <= c[b"inactive"] < 80 and c[b"pending"] == 1
    time.sleep(0.1)
    raw_rc.execute_command("XREADGROUP", "GROUP", "g", "Alice", "COUNT", "1", "STREAMS", "x", ">")
    (c,) = [as_map(x) for x in raw_rc.execute_command("XINFO", "CONSUMERS", "x", "g")]
    assert c[b"idle"] < 80 and c[b"inactive"] >= 100


# --- entries-read and lag (stream-cgroups.tcl) ------------------------------------------------


def test_lag_in_empty_streams(raw_rc):
    raw_rc.execute_command("XGROUP", "CREATE", "x", "g1", "0", "MKSTREAM")
    d = full(raw_rc)
    assert d[b"max-deleted-entry-id"] == b"0-0" and d[b"entries-added"] == 0
    assert d[b"groups"][0][b"entries-read"] is None and d[b"groups"][0][b"lag"] == 0
    raw_rc.execute_command("XADD", "x", "1-0", "data", "a")
    raw_rc.execute_command("XDEL", "x", "1-0")
    d = full(raw_rc)
    assert d[b"max-deleted-entry-id"] == b"1-0" and d[b"entries-added"] == 1
    assert d[b"groups"][0][b"entries-read"] is None and d[b"groups"][0][b"lag"] == 0


def test_read_counter_and_lag_sanity(raw_rc):
    for i in range(1, 6):
        raw_rc.execute_command("XADD", "x", f"{i}-0", "data", "v")
    raw_rc.execute_command("XGROUP", "CREATE", "x", "g1", "0")
    g = group_of(raw_rc)
    assert (g[b"entries-read"], g[b"lag"]) == (None, 5)
    raw_rc.execute_command("XREADGROUP", "GROUP", "g1", "c11", "COUNT", "1", "STREAMS", "x", ">")
    g = group_of(raw_rc)
    assert (g[b"entries-read"], g[b"lag"]) == (1, 4)
    raw_rc.execute_command("XREADGROUP", "GROUP", "g1", "c12", "COUNT", "10", "STREAMS", "x", ">")
    g = group_of(raw_rc)
    assert (g[b"entries-read"], g[b"lag"]) == (5, 0)
    raw_rc.execute_command("XADD", "x", "6-0", "data", "f")
    g = group_of(raw_rc)
    assert (g[b"entries-read"], g[b"lag"]) == (5, 1)


def test_lag_with_xdels_and_trims(raw_rc):
    for i in range(1, 6):
        raw_rc.execute_command("XADD", "x", f"{i}-0", "data", "v")
    raw_rc.execute_command("XDEL", "x", "3-0")
    raw_rc.execute_command("XGROUP", "CREATE", "x", "g1", "0")
    raw_rc.execute_command("XGROUP", "CREATE", "x", "g2", "0")
    g = group_of(raw_rc)
    assert (g[b"entries-read"], g[b"lag"]) == (None, None)
    for _ in range(3):
        raw_rc.execute_command("XREADGROUP", "GROUP", "g1", "c11", "COUNT", "1", "STREAMS", "x", ">")
        g = group_of(raw_rc)
        assert (g[b"entries-read"], g[b"lag"]) == (None, None)
    raw_rc.execute_command("XREADGROUP", "GROUP", "g1", "c11", "COUNT", "1", "STREAMS", "x", ">")
    g = group_of(raw_rc)
    assert (g[b"entries-read"], g[b"lag"]) == (5, 0)
    raw_rc.execute_command("XADD", "x", "6-0", "data", "f")
    g = group_of(raw_rc)
    assert (g[b"entries-read"], g[b"lag"]) == (5, 1)
    raw_rc.execute_command("XTRIM", "x", "MINID", "=", "3-0")
    g1, g2 = full(raw_rc)[b"groups"]
    assert (g1[b"entries-read"], g1[b"lag"]) == (5, 1)
    assert (g2[b"entries-read"], g2[b"lag"]) == (None, 3)
    raw_rc.execute_command("XTRIM", "x", "MINID", "=", "5-0")
    g1, g2 = full(raw_rc)[b"groups"]
    assert (g1[b"entries-read"], g1[b"lag"]) == (5, 1)
    assert (g2[b"entries-read"], g2[b"lag"]) == (None, 2)
    # XINFO GROUPS reports the same counters
    rows = [as_map(g) for g in raw_rc.execute_command("XINFO", "GROUPS", "x")]
    assert [(g[b"entries-read"], g[b"lag"]) for g in rows] == [(5, 1), (None, 2)]


# --- differential -----------------------------------------------------------------------------

SCRIPT = [
    ("XGROUP", "CREATE", "x", "g0", "0", "MKSTREAM"),
    ("XINFO", "STREAM", "x"),
    ("XADD", "x", "1-0", "a", "1"),
    ("XADD", "x", "2-0", "b", "2"),
    ("XADD", "x", "3-0", "c", "3"),
    ("XADD", "x", "4-0", "d", "4"),
    ("XGROUP", "CREATE", "x", "g1", "0"),
    ("XREADGROUP", "GROUP", "g1", "c1", "COUNT", "1", "STREAMS", "x", ">"),
    ("XINFO", "GROUPS", "x"),
    ("XDEL", "x", "3-0"),
    ("XINFO", "STREAM", "x"),
    ("XINFO", "GROUPS", "x"),
    ("XREADGROUP", "GROUP", "g1", "c2", "STREAMS", "x", ">"),
    ("XINFO", "GROUPS", "x"),
    ("XTRIM", "x", "MAXLEN", "1"),
    ("XINFO", "STREAM", "x"),
    ("XINFO", "GROUPS", "x"),
    ("XINFO", "STREAM", "nokey"),
    ("XINFO", "STREAM", "x", "FULL", "COUNT"),
    ("XINFO", "CONSUMERS", "x", "nog"),
    ("XINFO", "FOO", "x"),
]

# Fields whose values are clock readings: compared for presence only.
_TIMES = {b"seen-time", b"active-time", b"idle", b"inactive"}


def _without_idmp(reply):
    """A Rivulet XINFO STREAM reply as Redis 7 (which lacks the IDMP fields) gives it."""
    if not isinstance(reply, list) or b"idmp-duration" not in reply[0::2]:
        return reply
    out = []
    for name, value in zip(reply[0::2], reply[1::2], strict=True):
        if name not in IDMP_FIELDS:
            out += [name, value]
    return out


def test_differential_against_real_redis(server, real_redis):
    ours, theirs = run_plain(server.port, SCRIPT), run_plain(real_redis.port, SCRIPT)
    for argv, a, b in zip(SCRIPT, ours, theirs, strict=True):
        assert _without_idmp(a) == b, argv


def _strip_times(consumer: dict) -> dict:
    return {k: v for k, v in consumer.items() if k not in _TIMES}


def test_differential_full_and_consumers(server, real_redis):
    script = [
        ("XADD", "x", "1-0", "a", "1"), ("XADD", "x", "2-0", "b", "2"), ("XADD", "x", "3-0", "c", "3"),
        ("XGROUP", "CREATE", "x", "g1", "0"), ("XGROUP", "CREATE", "x", "g2", "$"),
        ("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "2", "STREAMS", "x", ">"),
        ("XGROUP", "CREATECONSUMER", "x", "g1", "bob"),
        ("XINFO", "STREAM", "x", "FULL"),
        ("XINFO", "CONSUMERS", "x", "g1"),
    ]
    ours, theirs = run_plain(server.port, script), run_plain(real_redis.port, script)
    assert ours[:-2] == theirs[:-2]
    a, b = as_map(_without_idmp(ours[-2])), as_map(theirs[-2])
    ga, gb = a.pop(b"groups"), b.pop(b"groups")
    assert a == b
    for x, y in zip(ga, gb, strict=True):
        x, y = as_map(x), as_map(y)
        # PEL rows carry delivery times: compare the IDs, owners and counters
        assert [p[:2] + p[3:] for p in x.pop(b"pending")] == [p[:2] + p[3:] for p in y.pop(b"pending")]
        cx, cy = x.pop(b"consumers"), y.pop(b"consumers")
        assert x.pop(b"nacked-count") == 0  # Redis 8.8's field: not in the 7.0 compared with
        assert x == y
        for u, v in zip(cx, cy, strict=True):
            u, v = as_map(u), as_map(v)
            # Redis 7.2 added "active-time" (7.0 has only seen-time): ours has it, 7.0's does not.
            assert list(u) == CONSUMER_FULL_FIELDS
            assert b"active-time" not in v
            assert [p[0::2] for p in u.pop(b"pending")] == [p[0::2] for p in v.pop(b"pending")]
            assert _strip_times(u) == _strip_times(v)
    # XINFO CONSUMERS: 7.2 added "inactive"; the other fields must agree
    for u, v in zip(ours[-1], theirs[-1], strict=True):
        u, v = as_map(u), as_map(v)
        assert list(u) == [b"name", b"pending", b"idle", b"inactive"]
        assert list(v) == [b"name", b"pending", b"idle"]
        assert _strip_times(u) == _strip_times(v)


def test_group_lag_of_an_emptied_stream_is_zero_as_in_redis_8(r: redis.Redis) -> None:
    # Redis 8.0's streamReplyWithCGLag: a stream whose entries were all deleted reports lag 0
    # for every group (7.0 and 7.4 report entries-added minus entries-read: 2 here).
    r.xadd("s", {"f": "v"}, id="1-1")
    r.xadd("s", {"f": "v"}, id="1-2")
    r.xgroup_create("s", "g", id="0")
    r.xtrim("s", maxlen=0)
    assert [g["lag"] for g in r.xinfo_groups("s")] == [0]
    # Behind the first entry, with every deletion behind it too: the lag is the length.
    r.xadd("s", {"f": "v"}, id="2-1")
    r.xadd("s", {"f": "v"}, id="2-2")
    assert [g["lag"] for g in r.xinfo_groups("s")] == [2]
