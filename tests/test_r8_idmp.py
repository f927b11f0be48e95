"""Idempotent producers (Redis 8.6): XADD IDMP / IDMPAUTO, XCFGSET, XIDMPRECORD, the XINFO STREAM
fields, the stream-idmp-* parameters, and the tracking surviving restarts, rewrites, RENAME and
COPY.

No Redis 8 runs here: replies follow redis.io's XADD, XCFGSET, XIDMPRECORD and XINFO STREAM
pages and the behaviour Redis's own test suite for 8.6 asserts (error texts included).
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
import redis

from tests.helpers import aof_path, as_map, err, no_retry, resp3_reply_bytes, restart

IDMP_FIELDS = [b"idmp-duration", b"idmp-maxsize", b"pids-tracked", b"iids-tracked", b"iids-added",
               b"iids-duplicates"]


def idmp_info(r: redis.Redis, key: str = "s", full: bool = False) -> dict[bytes, int]:
    args = ["XINFO", "STREAM", key] + (["FULL"] if full else [])
    info = as_map(r.execute_command(*args, NEVER_DECODE=True))
    info = {(k if isinstance(k, bytes) else k.encode()): v for k, v in info.items()}
    return {name: info[name] for name in IDMP_FIELDS}


# --- XADD IDMP / IDMPAUTO --------------------------------------------------------------------


def test_duplicate_returns_the_original_id_and_adds_nothing(rc: redis.Redis) -> None:
    first = rc.xadd("s", {"amount": "100", "currency": "USD"}, idmp=("p1", b"payment-abc"))
    again = rc.xadd("s", {"amount": "200", "currency": "EUR"}, idmp=("p1", b"payment-abc"))
    assert again == first
    assert rc.xlen("s") == 1
    assert rc.xrange("s")[0][1] == {b"amount": b"100", b"currency": b"USD"}
    other = rc.xadd("s", {"amount": "200"}, idmp=("p1", b"payment-def"))
    assert other != first and rc.xlen("s") == 2


def test_producers_have_separate_namespaces_and_ids_are_binary_safe(r: redis.Redis) -> None:
    a = r.xadd("s", {"f": "1"}, idmp=("producer1", b"req-123"))
    b = r.xadd("s", {"f": "2"}, idmp=("producer2", b"req-123"))
    assert a != b
    pid, iid = b"\x00\x01\xff", b"\x00\x02\xfe"
    c = r.execute_command("XADD", "s", "IDMP", pid, iid, "*", "f", "3")
    assert r.execute_command("XADD", "s", "IDMP", pid, iid, "*", "f", "4") == c
    assert r.execute_command("XADD", "s", "IDMP", pid, b"\x00\x02\xff", "*", "f", "5") != c
    # Tokens and IDs are only names here.
    for odd in ("*", "+", "-", "$", "IDMP", "123-456", "x" * 1000):
        r.xadd("s", {"f": "v"}, idmp=("p", odd.encode()))
    assert r.xlen("s") == 4 + 7
    assert r.xadd("s", {"f": "dup"}, idmp=("producer1", b"req-123")) == a


def test_idmpauto_hashes_the_pairs_whatever_their_order(rc: redis.Redis) -> None:
    a = rc.xadd("s", {"field1": "a", "field2": "b", "field3": "c"}, idmpauto="p1")
    assert rc.execute_command("XADD", "s", "IDMPAUTO", "p1", "*",
                              "field2", "b", "field3", "c", "field1", "a") == a
    assert rc.xlen("s") == 1
    assert rc.xadd("s", {"field1": "x", "field2": "b", "field3": "c"}, idmpauto="p1") != a
    # Field names count, not only values; another producer is another namespace.
    b = rc.xadd("s", {"k1": "v"}, idmpauto="p1")
    assert rc.xadd("s", {"k2": "v"}, idmpauto="p1") != b
    assert rc.xadd("s", {"k1": "v"}, idmpauto="p2") != b
    # Moving bytes between a field and its value is another message.
    c = rc.xadd("s", {"ab": "c"}, idmpauto="p1")
    assert rc.xadd("s", {"a": "bc"}, idmpauto="p1") != c
    assert rc.xadd("s", {"e": ""}, idmpauto="p1") == rc.xadd("s", {"e": ""}, idmpauto="p1")
    assert rc.xlen("s") == 8


def test_idmp_and_idmpauto_share_a_producer_namespace_but_not_ids(r: redis.Redis) -> None:
    a = r.xadd("s", {"f": "v"}, idmp=("p", b"explicit"))
    b = r.xadd("s", {"f": "v"}, idmpauto="p")
    assert a != b
    assert r.xadd("s", {"f": "v"}, idmpauto="p") == b
    assert r.xadd("s", {"g": "w"}, idmp=("p", b"explicit")) == a
    assert idmp_info(r)[b"pids-tracked"] == 1


def test_syntax_errors_have_redis_texts(r: redis.Redis) -> None:
    invalid_id = "Invalid stream ID specified as stream command argument"
    assert err(r, "XADD", "s", "IDMP", "p1", "*", "f", "v") == invalid_id  # `*` is the iid
    assert err(r, "XADD", "s", "IDMP", "p1", "iid1", "1-1", "f", "v") == \
        "IDMP/IDMPAUTO can be used only with auto-generated IDs"
    assert err(r, "XADD", "s", "IDMPAUTO", "p1", "1-*", "f", "v") == \
        "IDMP/IDMPAUTO can be used only with auto-generated IDs"
    twice = "IDMP/IDMPAUTO specified multiple times"
    assert err(r, "XADD", "s", "IDMP", "p1", "i1", "IDMP", "p2", "i2", "*", "f", "v") == twice
    assert err(r, "XADD", "s", "IDMPAUTO", "p1", "IDMP", "p2", "i2", "*", "f", "v") == twice
    assert err(r, "XADD", "s", "IDMP", "p1", "i1", "IDMPAUTO", "p2", "*", "f", "v") == twice
    assert err(r, "XADD", "s", "IDMPAUTO", "p1", "IDMPAUTO", "p2", "*", "f", "v") == twice
    assert err(r, "XADD", "s", "IDMP", "", "i1", "*", "f", "v") == \
        "IDMP requires a non-empty producer ID"
    assert err(r, "XADD", "s", "IDMP", "p1", "", "*", "f", "v") == \
        "IDMP requires a non-empty idempotent ID"
    assert err(r, "XADD", "s", "IDMPAUTO", "", "*", "f", "v") == \
        "IDMPAUTO requires a non-empty producer ID"
    assert err(r, "XADD", "s", "IDMP", "p1", "i1", "*", "f") == \
        "wrong number of arguments for 'xadd' command"
    assert err(r, "XADD", "s", "IDMP", "p1", "i1", "*") == \
        "wrong number of arguments for 'xadd' command"
    assert r.exists("s") == 0
    r.set("str", "x")
    assert err(r, "XADD", "str", "IDMP", "p", "i", "*", "f", "v").startswith("WRONGTYPE")


def test_idmp_sits_anywhere_among_the_options(r: redis.Redis) -> None:
    assert r.execute_command("XADD", "s", "NOMKSTREAM", "IDMP", "p", "a", "*", "f", "v") is None
    assert r.execute_command("XADD", "s", "NOMKSTREAM", "IDMPAUTO", "p", "*", "f", "v") is None
    assert r.exists("s") == 0
    ids = [
        r.execute_command("XADD", "s", "IDMP", "p", "a", "MAXLEN", "~", "100", "*", "f", "1"),
        r.execute_command("XADD", "s", "MAXLEN", "~", "100", "IDMP", "p", "b", "*", "f", "2"),
        r.execute_command("XADD", "s", "NOMKSTREAM", "IDMP", "p", "c", "MAXLEN", "=", "100", "*",
                          "f", "3"),
        r.execute_command("XADD", "s", "IDMPAUTO", "p", "MINID", "~", "1-0", "LIMIT", "10", "*",
                          "f", "4"),
        r.execute_command("XADD", "s", "MAXLEN", "~", "1000", "LIMIT", "10", "IDMPAUTO", "q", "*",
                          "f", "5"),
    ]
    assert len(set(ids)) == 5 and r.xlen("s") == 5
    assert r.execute_command("XADD", "s", "MAXLEN", "~", "100", "IDMP", "p", "b", "*", "f", "x") == ids[1]
    assert r.execute_command("XADD", "s", "IDMPAUTO", "p", "*", "f", "4") == ids[3]
    assert r.xlen("s") == 5


def test_trimming_with_idmp_and_a_duplicate_does_not_trim(r: redis.Redis) -> None:
    for i in range(5):
        r.xadd("s", {"n": i})
    a = r.xadd("s", {"n": "a"}, idmp=("p", b"a"), maxlen=3, approximate=False)
    assert r.xlen("s") == 3
    for i in range(3):
        r.xadd("s", {"n": i})
    assert r.xadd("s", {"n": "again"}, idmp=("p", b"a"), maxlen=1, approximate=False) == a
    assert r.xlen("s") == 6
    # A trim that removes the entry it added still remembers the pair.
    b = r.xadd("s", {"n": "b"}, idmp=("p", b"b"), maxlen=0, approximate=False)
    assert r.xlen("s") == 0
    assert r.xadd("s", {"n": "b"}, idmp=("p", b"b")) == b


def test_transaction_deduplicates_inside_exec(r: redis.Redis) -> None:
    pipe = r.pipeline(transaction=True)
    pipe.xadd("s", {"f": "1"}, idmp=("p1", b"req-1"))
    pipe.xadd("s", {"f": "2"}, idmp=("p1", b"req-2"))
    pipe.xadd("s", {"f": "3"}, idmp=("p1", b"req-1"))
    pipe.xadd("s", {"f": "4"}, idmp=("p2", b"req-1"))
    a, b, dup, c = pipe.execute()
    assert dup == a and len({a, b, c}) == 3
    assert r.xlen("s") == 3


def test_concurrent_duplicates_from_many_connections_add_once(server) -> None:
    results: list[bytes] = []

    def send() -> None:
        with redis.Redis(port=server.port) as c:
            results.append(c.xadd("conc", {"client": "x"}, idmp=("p", b"same")))

    with redis.Redis(port=server.port) as r:
        r.delete("conc")
        threads = [threading.Thread(target=send) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(set(results)) == 1 and r.xlen("conc") == 1
        r.delete("conc")


# --- limits: IDMP-MAXSIZE and IDMP-DURATION --------------------------------------------------


def test_maxsize_keeps_the_most_recent_ids_of_each_producer(r: redis.Redis) -> None:
    r.xadd("s", {"f": "init"}, idmp=("p1", b"init"))
    assert r.xcfgset("s", idmp_maxsize=8, idmp_duration=60) in (True, b"OK", "OK")
    ids = [r.xadd("s", {"f": i}, idmp=("p1", b"req-%d" % i)) for i in range(1, 101)]
    q = [r.xadd("s", {"f": i}, idmp=("p2", b"req-%d" % i)) for i in range(1, 4)]
    info = idmp_info(r)
    assert info[b"iids-tracked"] == 8 + 3 and info[b"pids-tracked"] == 2
    assert info[b"iids-added"] == 1 + 100 + 3
    for i in range(93, 101):
        assert r.xadd("s", {"f": "dup"}, idmp=("p1", b"req-%d" % i)) == ids[i - 1]
    for i in range(1, 4):
        assert r.xadd("s", {"f": "dup"}, idmp=("p2", b"req-%d" % i)) == q[i - 1]
    assert r.xadd("s", {"f": "new"}, idmp=("p1", b"req-92")) != ids[91]
    assert r.xlen("s") == 1 + 100 + 3 + 1
    assert idmp_info(r)[b"iids-duplicates"] == 8 + 3


def test_duration_forgets_ids_and_producers(r: redis.Redis) -> None:
    r.xadd("s", {"f": "v"})
    r.xcfgset("s", idmp_duration=1)
    a = r.xadd("s", {"f": "1"}, idmp=("p1", b"req-1"))
    assert r.xadd("s", {"f": "2"}, idmp=("p1", b"req-1")) == a
    assert idmp_info(r)[b"iids-tracked"] == 1
    time.sleep(1.1)
    info = idmp_info(r)
    assert (info[b"pids-tracked"], info[b"iids-tracked"], info[b"iids-added"]) == (0, 0, 1)
    b = r.xadd("s", {"f": "3"}, idmp=("p1", b"req-1"))
    assert b != a and r.xlen("s") == 3


# --- XCFGSET ---------------------------------------------------------------------------------


def test_xcfgset_sets_reports_and_clears_only_on_change(rc: redis.Redis) -> None:
    a = rc.xadd("s", {"f": "1"}, idmp=("p1", b"req-1"))
    rc.xadd("s", {"f": "2"}, idmp=("p2", b"req-2"))
    rc.xadd("s", {"f": "1"}, idmp=("p1", b"req-1"))
    assert idmp_info(rc) == {b"idmp-duration": 100, b"idmp-maxsize": 100, b"pids-tracked": 2,
                             b"iids-tracked": 2, b"iids-added": 2, b"iids-duplicates": 1}
    # The same values again: nothing is forgotten.
    assert rc.execute_command("XCFGSET", "s", "IDMP-DURATION", "100", "IDMP-MAXSIZE", "100") \
        in (b"OK", True, "OK")
    assert rc.xadd("s", {"f": "x"}, idmp=("p1", b"req-1")) == a
    # A change forgets every producer; the lifetime counters stay.
    assert rc.xcfgset("s", idmp_duration=5)
    assert idmp_info(rc) == {b"idmp-duration": 5, b"idmp-maxsize": 100, b"pids-tracked": 0,
                             b"iids-tracked": 0, b"iids-added": 2, b"iids-duplicates": 2}
    assert rc.xadd("s", {"f": "x"}, idmp=("p1", b"req-1")) != a
    assert rc.xcfgset("s", idmp_maxsize=10000)
    assert rc.execute_command("xcfgset", "s", "idmp-maxsize", "1", "idmp-duration", "86400")
    info = idmp_info(rc)
    assert (info[b"idmp-duration"], info[b"idmp-maxsize"], info[b"iids-tracked"]) == (86400, 1, 0)


def test_xcfgset_errors(r: redis.Redis) -> None:
    r.xadd("s", {"f": "v"})
    assert err(r, "XCFGSET", "s") == \
        "At least one parameter (IDMP-DURATION or IDMP-MAXSIZE) is required"
    assert err(r, "XCFGSET", "nokey", "IDMP-DURATION", "5") == "no such key"
    r.set("str", "x")
    assert err(r, "XCFGSET", "str", "IDMP-DURATION", "5").startswith("WRONGTYPE")
    for bad in ("0", "-100", "86401"):
        assert err(r, "XCFGSET", "s", "IDMP-DURATION", bad) == \
            "IDMP-DURATION must be between 1 and 86400 seconds"
    for bad in ("0", "-50", "10001"):
        assert err(r, "XCFGSET", "s", "IDMP-MAXSIZE", bad) == \
            "IDMP-MAXSIZE must be between 1 and 10000 entries"
    not_int = "value is not an integer or out of range"
    for bad in ("A", "*", "-", "+", "120-5", "3.14", "000000000", "IDMP-DURATION"):
        assert err(r, "XCFGSET", "s", "IDMP-DURATION", bad) == not_int
        assert err(r, "XCFGSET", "s", "IDMP-MAXSIZE", bad) == not_int
    assert err(r, "XCFGSET", "s", "IDMP-DURATION") == "syntax error"
    assert err(r, "XCFGSET", "s", "IDMP-MAXSIZE") == "syntax error"
    assert err(r, "XCFGSET", "s", "INVALID") == "syntax error"
    assert err(r, "XCFGSET", "s", "IDMP-DURATION", "5", "IDMP-MAXSIZE") == "syntax error"
    assert err(r, "XCFGSET", "s", "IDMP-DURATION", "INVALID", "IDMP-MAXSIZE") == not_int
    assert err(r, "XCFGSET") == "wrong number of arguments for 'xcfgset' command"
    # A failed XCFGSET changes nothing.
    assert idmp_info(r)[b"idmp-duration"] == 100


def test_server_parameters_set_new_streams_defaults(r: redis.Redis) -> None:
    assert r.config_get("stream-idmp-duration") == {"stream-idmp-duration": "100"}
    assert r.config_get("stream-idmp-maxsize") == {"stream-idmp-maxsize": "100"}
    for name, bad in (("stream-idmp-duration", 0), ("stream-idmp-duration", 86401),
                      ("stream-idmp-maxsize", 0), ("stream-idmp-maxsize", 10001)):
        with pytest.raises(redis.ResponseError, match="must be between"):
            r.config_set(name, bad)
    r.xadd("old", {"f": "v"})
    try:
        r.config_set("stream-idmp-duration", 86400)
        r.config_set("stream-idmp-maxsize", 1)
        r.xadd("new", {"f": "v"})
        info = idmp_info(r, "new")
        assert (info[b"idmp-duration"], info[b"idmp-maxsize"]) == (86400, 1)
        # Streams keep the settings they were created with.
        info = idmp_info(r, "old")
        assert (info[b"idmp-duration"], info[b"idmp-maxsize"]) == (100, 100)
    finally:
        r.config_set("stream-idmp-duration", 100)
        r.config_set("stream-idmp-maxsize", 100)


# --- XINFO STREAM ----------------------------------------------------------------------------


def test_xinfo_stream_reports_idmp_fields_in_redis_order(r: redis.Redis) -> None:
    r.xadd("s", {"f": "v"})
    raw = r.execute_command("XINFO", "STREAM", "s", NEVER_DECODE=True)
    keys = raw[0::2]
    assert keys == [b"length", b"radix-tree-keys", b"radix-tree-nodes", b"last-generated-id",
                    b"max-deleted-entry-id", b"entries-added", b"recorded-first-entry-id",
                    *IDMP_FIELDS, b"groups", b"first-entry", b"last-entry"]
    assert idmp_info(r) == {b"idmp-duration": 100, b"idmp-maxsize": 100, b"pids-tracked": 0,
                            b"iids-tracked": 0, b"iids-added": 0, b"iids-duplicates": 0}
    full = r.execute_command("XINFO", "STREAM", "s", "FULL", NEVER_DECODE=True)
    assert full[0::2] == [b"length", b"radix-tree-keys", b"radix-tree-nodes", b"last-generated-id",
                          b"max-deleted-entry-id", b"entries-added", b"recorded-first-entry-id",
                          *IDMP_FIELDS, b"entries", b"groups"]
    for i in range(3):
        r.xadd("s", {"f": i}, idmp=("p", b"%d" % i))
    r.xadd("s", {"f": 0}, idmp=("p", b"0"))
    r.xadd("s", {"f": 0}, idmp=("q", b"0"))
    expected = {b"idmp-duration": 100, b"idmp-maxsize": 100, b"pids-tracked": 2,
                b"iids-tracked": 4, b"iids-added": 4, b"iids-duplicates": 1}
    assert idmp_info(r) == expected
    assert idmp_info(r, full=True) == expected


def test_xinfo_stream_resp3_map_has_the_idmp_fields(server, r: redis.Redis) -> None:
    r.xadd("s", {"f": "v"}, idmp=("p", b"i"))
    raw = resp3_reply_bytes(server.port, b"XINFO STREAM s\r\n")
    assert raw.startswith(b"%16\r\n")
    assert (b"$13\r\nidmp-duration\r\n:100\r\n$12\r\nidmp-maxsize\r\n:100\r\n"
            b"$12\r\npids-tracked\r\n:1\r\n$12\r\niids-tracked\r\n:1\r\n$10\r\niids-added\r\n:1\r\n"
            b"$15\r\niids-duplicates\r\n:0\r\n$6\r\ngroups\r\n:0\r\n") in raw
    full = resp3_reply_bytes(server.port, b"XINFO STREAM s FULL\r\n")
    assert full.startswith(b"%15\r\n") and b"$15\r\niids-duplicates\r\n:0\r\n$7\r\nentries\r\n" in full


# --- XIDMPRECORD -----------------------------------------------------------------------------


def test_xidmprecord_records_a_pair_for_an_existing_entry(r: redis.Redis) -> None:
    eid = r.xadd("s", {"f": "v"})
    assert r.execute_command("XIDMPRECORD", "s", "p", "i", eid) == b"OK"
    assert r.xadd("s", {"f": "other"}, idmp=("p", b"i")) == eid
    assert r.execute_command("XIDMPRECORD", "s", "p", "i", eid) == b"OK"  # the same: idempotent
    info = idmp_info(r)
    assert (info[b"iids-tracked"], info[b"iids-added"], info[b"iids-duplicates"]) == (1, 1, 1)
    other = r.xadd("s", {"f": "w"})
    assert err(r, "XIDMPRECORD", "s", "p", "i", other) == \
        "The producer ID and idempotent ID are already recorded with a different stream ID"
    assert err(r, "XIDMPRECORD", "s", "p", "j", "1-1") == \
        "The stream ID refers to a non-existent or deleted entry"
    r.xdel("s", other)
    assert err(r, "XIDMPRECORD", "s", "p", "j", other) == \
        "The stream ID refers to a non-existent or deleted entry"
    assert err(r, "XIDMPRECORD", "s", "", "j", eid) == "IDMP requires a non-empty producer ID"
    assert err(r, "XIDMPRECORD", "s", "p", "", eid) == "IDMP requires a non-empty idempotent ID"
    assert err(r, "XIDMPRECORD", "s", "p", "j", "bad") == \
        "Invalid stream ID specified as stream command argument"
    assert err(r, "XIDMPRECORD", "nokey", "p", "j", eid) == "no such key"
    assert err(r, "XIDMPRECORD", "s", "p", "j") == \
        "wrong number of arguments for 'xidmprecord' command"


# --- command metadata ------------------------------------------------------------------------


def test_command_info_and_docs(r: redis.Redis) -> None:
    raw = plain_client(r)
    info = raw.execute_command("COMMAND", "INFO", "xcfgset", "xidmprecord")
    assert info[0][:6] == [b"xcfgset", -2, [b"write", b"fast"], 1, 1, 1]
    assert info[1][:6] == [b"xidmprecord", 5, [b"write", b"denyoom", b"fast"], 1, 1, 1]
    assert b"@stream" in info[0][6]
    docs = as_map(raw.execute_command("COMMAND", "DOCS", "xcfgset"))
    doc = as_map(docs[b"xcfgset"])
    assert doc[b"since"] == b"8.6.0" and doc[b"group"] == b"stream"
    tokens = [as_map(as_map(a)[b"arguments"][0]).get(b"token") for a in doc[b"arguments"][1:]]
    assert tokens == [b"IDMP-DURATION", b"IDMP-MAXSIZE"]
    xadd = as_map(as_map(raw.execute_command("COMMAND", "DOCS", "xadd"))[b"xadd"])
    names = [as_map(a)[b"name"] for a in xadd[b"arguments"]]
    # XADD key [NOMKSTREAM] [KEEPREF | DELREF | ACKED] [IDMPAUTO ... | IDMP ...] [trim] ...
    assert names.index(b"idmp") == names.index(b"condition") + 1 == names.index(b"trim") - 1
    idmp = as_map(xadd[b"arguments"][names.index(b"idmp")])
    blocks = [as_map(b) for b in idmp[b"arguments"]]
    assert [b[b"name"] for b in blocks] == [b"idmpauto-with-pid", b"idmp-with-pid-iid"]
    assert [as_map(a)[b"display_text"] for a in blocks[1][b"arguments"]][1:] == \
        [b"producer-id", b"idempotent-id"]
    assert [b"8.6.0", b"Added the `IDMPAUTO` and `IDMP` options."] in xadd[b"history"]
    xinfo = as_map(as_map(raw.execute_command("COMMAND", "DOCS", "xinfo|stream"))[b"xinfo|stream"])
    assert xinfo[b"history"][-2] == [
        b"8.6.0", b"Added the `idmp-duration`, `idmp-maxsize`, `pids-tracked`, `iids-tracked`, "
        b"`iids-added` and `iids-duplicates` fields for IDMP tracking."]


def plain_client(r: redis.Redis) -> redis.Redis:
    c = redis.Redis(port=r.connection_pool.connection_kwargs["port"])
    c.response_callbacks.clear()
    return c


# --- RENAME, COPY, persistence ---------------------------------------------------------------


def test_rename_and_copy_carry_the_tracking(r: redis.Redis) -> None:
    r.xadd("s", {"f": "first"})
    r.xcfgset("s", idmp_maxsize=50)
    a = r.xadd("s", {"f": "v"}, idmp=("p", b"a"))
    r.xadd("s", {"f": "v"}, idmp=("p", b"a"))
    r.rename("s", "t")
    assert r.xadd("t", {"f": "w"}, idmp=("p", b"a")) == a
    assert r.copy("t", "u")
    before = idmp_info(r, "t")
    assert idmp_info(r, "u") == before
    # The copy is independent.
    r.xadd("u", {"f": "x"}, idmp=("p", b"b"))
    assert idmp_info(r, "t") == before
    r.xadd("t", {"f": "x"}, idmp=("p", b"b"))
    assert r.xlen("t") == 3


def _scenario(r: redis.Redis) -> dict[str, bytes]:
    ids = {
        "a": r.xadd("s", {"f": "1"}, idmp=("p1", b"a")),
        "b": r.xadd("s", {"f": "2"}, idmp=("p1", b"b")),
        "auto": r.xadd("s", {"k": "v", "j": "w"}, idmpauto="p2"),
    }
    r.xadd("s", {"f": "1"}, idmp=("p1", b"a"))
    r.xadd("cfg", {"f": "v"})
    r.xcfgset("cfg", idmp_duration=300, idmp_maxsize=2)
    for n in range(4):
        ids["c%d" % n] = r.xadd("cfg", {"n": n}, idmp=("p", b"%d" % n))
    # A trim that removes the entry the XADD added: the pair is still remembered.
    ids["trimmed"] = r.xadd("t", {"f": "x"}, idmp=("p", b"t"), maxlen=0, approximate=False)
    return ids


def _check(r: redis.Redis, ids: dict[str, bytes]) -> None:
    assert r.xadd("s", {"f": "x"}, idmp=("p1", b"a")) == ids["a"]
    assert r.xadd("s", {"f": "x"}, idmp=("p1", b"b")) == ids["b"]
    assert r.xadd("s", {"j": "w", "k": "v"}, idmpauto="p2") == ids["auto"]
    assert r.xadd("cfg", {"n": "x"}, idmp=("p", b"3")) == ids["c3"]
    assert r.xadd("cfg", {"n": "x"}, idmp=("p", b"2")) == ids["c2"]
    cfg = idmp_info(r, "cfg")
    assert (cfg[b"idmp-duration"], cfg[b"idmp-maxsize"], cfg[b"iids-tracked"]) == (300, 2, 2)


def test_restart_replays_the_log_exactly(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    ids = _scenario(r)
    before = {k: idmp_info(r, k) for k in ("s", "cfg", "t")}
    log = aof_path(srv).read_bytes()
    assert b"XIDMPRECORD" in log and b"IDMP\r\n" not in log  # Redis 8 refuses IDMP with an ID
    srv2 = restart(srv)
    try:
        r = redis.Redis(port=srv2.port)
        # The log recreates every pair and counter, duplicates counted by the commands only.
        after = {k: idmp_info(r, k) for k in ("s", "cfg", "t")}
        for k in before:
            before[k][b"iids-duplicates"] = after[k][b"iids-duplicates"] = 0
        assert after == before
        _check(r, ids)
        assert r.xadd("t", {"f": "x"}, idmp=("p", b"t")) == ids["trimmed"]
    finally:
        srv2.cleanup()


def test_rewrite_and_debug_reload_keep_the_pairs(server_factory) -> None:
    srv = server_factory()
    r = redis.Redis(port=srv.port)
    ids = _scenario(r)
    assert r.bgrewriteaof()
    deadline = time.monotonic() + 20
    while r.info("persistence")["aof_rewrites"] < 1 or r.info("persistence")["aof_rewrite_in_progress"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    log = aof_path(srv).read_bytes()
    assert b"XCFGSET" in log and b"XIDMPRECORD" in log
    srv2 = restart(srv)
    try:
        r = redis.Redis(port=srv2.port)
        _check(r, ids)
        assert r.execute_command("DEBUG", "RELOAD") == b"OK"
        _check(r, ids)
        # The pair whose entry was trimmed away cannot be written as a command Redis accepts.
        assert idmp_info(r, "t")[b"pids-tracked"] == 0
    finally:
        srv2.cleanup()


def test_rewrite_keeps_each_pairs_expiry(server_factory) -> None:
    srv = server_factory()
    r = redis.Redis(port=srv.port)
    r.xadd("s", {"f": "v"})
    r.xcfgset("s", idmp_duration=2)
    a = r.xadd("s", {"f": "a"}, idmp=("p", b"a"))
    time.sleep(1.0)
    b = r.xadd("s", {"f": "b"}, idmp=("p", b"b"))
    assert r.execute_command("DEBUG", "RELOAD") == b"OK"
    assert idmp_info(r)[b"iids-tracked"] == 2
    time.sleep(1.2)
    # `a` is 2.2 s old: forgotten on time although the reload recreated it; `b` is 1.2 s old.
    assert r.xadd("s", {"f": "b2"}, idmp=("p", b"b")) == b
    assert r.xadd("s", {"f": "a2"}, idmp=("p", b"a")) != a


def test_kill_9_under_idmp_traffic_keeps_every_acknowledged_pair(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    acked: dict[bytes, bytes] = {}
    stop = threading.Event()

    def produce(name: str) -> None:
        # No retries: the kill ends the producer at once, with only the replies it had counted.
        with redis.Redis(port=srv.port, retry=no_retry()) as c:
            n = 0
            while not stop.is_set():
                iid = b"%s-%d" % (name.encode(), n)
                try:
                    eid = c.xadd("s", {"n": n}, idmp=(name, iid), maxlen=50, approximate=False)
                    if n % 3 == 0:
                        c.xadd("s", {"n": n}, idmp=(name, iid))  # a retry
                except (redis.ConnectionError, ConnectionResetError):
                    return
                acked[iid] = eid
                n += 1

    redis.Redis(port=srv.port).xadd("s", {"init": 1})
    redis.Redis(port=srv.port).execute_command("XCFGSET", "s", "IDMP-MAXSIZE", 10000,
                                               "IDMP-DURATION", 600)
    threads = [threading.Thread(target=produce, args=(f"p{i}",)) for i in range(2)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    os.kill(srv.proc.pid, signal.SIGKILL)
    srv.proc.wait()
    stop.set()
    for t in threads:
        t.join(10)
    assert acked
    srv2 = restart(srv)
    try:
        r = redis.Redis(port=srv2.port)
        length = r.xlen("s")
        for iid, eid in acked.items():
            pid = iid.split(b"-")[0]
            assert r.xadd("s", {"retry": 1}, idmp=(pid, iid)) == eid, iid
        assert r.xlen("s") == length
        assert idmp_info(r)[b"iids-tracked"] >= len(acked)
    finally:
        srv2.cleanup()


def test_pure_engine_bounds_memory_per_producer() -> None:
    from streams.idempotency import Idempotency

    t = Idempotency(duration=100, maxsize=3)
    now = 5_000_000
    for n in range(1000):
        t.record(b"p", b"%d" % n, (now << 64) + n)
    assert t.tracked == 3 and len(t.producers[b"p"].ids) == 3 and len(t.producers[b"p"].order) == 3
    assert t.find(b"p", b"999", now) == (now << 64) + 999 and t.find(b"p", b"996", now) is None
    assert t.added == 1000 and t.duplicates == 1
    # Expiry drops from the front only, and the producer with its last pair.
    assert t.find(b"p", b"999", now + 100_000) is None
    assert t.producers == {} and t.tracked == 0
    # Producers that stop sending are swept as new ones arrive: memory follows the live ones.
    for n in range(10_000):
        ms = now + n * 1000  # one new producer a second, each sending once
        t.record(b"p%d" % n, b"i", (ms << 64))
    assert len(t.producers) <= 2 * 100 + 64 and t.tracked == len(t.producers)


def test_pipelined_idempotent_producer_matches_one_by_one(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    r.xadd("one", {"f": "v"})
    r.xadd("piped", {"f": "v"})

    def calls(key: str) -> list[tuple]:
        out: list[tuple] = []
        for n in range(300):
            out.append(("XADD", key, "IDMP", "p%d" % (n % 3), "i%d" % (n % 120), "*", "n", n))
            if n % 7 == 0:
                out.append(("XADD", key, "IDMPAUTO", "auto", "*", "k", n % 5, "j", "x"))
        out.append(("XADD", key, "IDMP", "p0", "i1", "*", "odd"))  # wrong arity: the single path
        out.append(("XADD", key, "IDMP", "p0", "i1", "*", "n", "again"))
        return out

    singles = []
    for c in calls("one"):
        try:
            singles.append(r.execute_command(*c))
        except redis.ResponseError as e:
            singles.append(str(e))
    pipe = r.pipeline(transaction=False)
    for c in calls("piped"):
        pipe.execute_command(*c)
    piped = pipe.execute(raise_on_error=False)
    piped = [str(x) if isinstance(x, Exception) else x for x in piped]

    def shape(replies: list) -> list:
        # Which calls got the same ID: the replies' pattern, whatever the clock said.
        first: dict = {}
        return [first.setdefault(x, i) if isinstance(x, bytes) else x for i, x in enumerate(replies)]

    assert shape(piped) == shape(singles)
    assert r.xlen("piped") == r.xlen("one")
    assert idmp_info(r, "piped") == idmp_info(r, "one")
    before = {k: (r.xrange(k), idmp_info(r, k)) for k in ("one", "piped")}
    r.set("str", "x")
    pipe = r.pipeline(transaction=False)
    pipe.execute_command("XADD", "str", "IDMP", "p", "i", "*", "f", "v")
    pipe.execute_command("XADD", "str", "IDMP", "p", "j", "*", "f", "v")
    assert all(isinstance(x, redis.ResponseError) for x in pipe.execute(raise_on_error=False))
    srv2 = restart(srv)
    try:
        r = redis.Redis(port=srv2.port)
        after = {k: (r.xrange(k), idmp_info(r, k)) for k in ("one", "piped")}
        for k in after:  # duplicates are not logged: their counter restarts
            before[k][1][b"iids-duplicates"] = after[k][1][b"iids-duplicates"] = 0
        assert after == before
        assert r.execute_command("XADD", "piped", "IDMP", "p0", "i1", "*", "n", "x") == piped[-1]
    finally:
        srv2.cleanup()
