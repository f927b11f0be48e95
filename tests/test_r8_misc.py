"""Stream changes between Redis 7.4 and 8.10 outside the new commands and options.

- XGROUP CREATE / SETID: an ENTRIESREAD beyond the stream's entries-added is lowered to it
  (redis/redis#14259, fixing #14257: a negative lag), in RESP2 and RESP3.
- XSETID ENTRIESADDED lowered below a group's entries-read lowers that counter too
  (redis/redis#15489), so no lag goes negative.
No Redis 8 runs here: these follow the fixes' descriptions; the lag arithmetic is Redis 7.4's.
"""

from __future__ import annotations

import os
import signal
import time

import redis

from tests.helpers import as_map, plain, restart


def groups(r: redis.Redis, key: str = "s") -> dict:
    return {g[b"name"]: g for g in map(as_map, r.execute_command("XINFO", "GROUPS", key))}


def test_create_lowers_entriesread_to_entries_added(raw_rc):
    for i in range(1, 4):
        raw_rc.execute_command("XADD", "s", f"{i}-1", "f", "v")
    raw_rc.execute_command("XGROUP", "CREATE", "s", "big", "$", "ENTRIESREAD", "100")
    raw_rc.execute_command("XGROUP", "CREATE", "s", "exact", "$", "ENTRIESREAD", "3")
    raw_rc.execute_command("XGROUP", "CREATE", "s", "small", "$", "ENTRIESREAD", "1")
    raw_rc.execute_command("XGROUP", "CREATE", "s", "unknown", "0", "ENTRIESREAD", "-1")
    g = groups(raw_rc)
    assert (g[b"big"][b"entries-read"], g[b"big"][b"lag"]) == (3, 0)
    assert (g[b"exact"][b"entries-read"], g[b"exact"][b"lag"]) == (3, 0)
    assert (g[b"small"][b"entries-read"], g[b"small"][b"lag"]) == (1, 2)
    assert g[b"unknown"][b"entries-read"] is None
    # entries-added counts every entry ever added, deleted ones too
    raw_rc.execute_command("XDEL", "s", "1-1", "2-1")
    raw_rc.execute_command("XGROUP", "CREATE", "s", "after-del", "$", "ENTRIESREAD", "7")
    assert groups(raw_rc)[b"after-del"][b"entries-read"] == 3
    # MKSTREAM: a new stream has had nothing added
    raw_rc.execute_command("XGROUP", "CREATE", "new", "g", "$", "MKSTREAM", "ENTRIESREAD", "5")
    g = groups(raw_rc, "new")[b"g"]
    assert (g[b"entries-read"], g[b"lag"]) == (0, 0)


def test_setid_lowers_entriesread_to_entries_added(raw_rc):
    for i in range(1, 5):
        raw_rc.execute_command("XADD", "s", f"{i}-1", "f", "v")
    raw_rc.execute_command("XGROUP", "CREATE", "s", "g", "0")
    raw_rc.execute_command("XGROUP", "SETID", "s", "g", "2-1", "ENTRIESREAD", "50")
    g = groups(raw_rc)[b"g"]
    assert (g[b"last-delivered-id"], g[b"entries-read"], g[b"lag"]) == (b"2-1", 4, 0)
    raw_rc.execute_command("XGROUP", "SETID", "s", "g", "2-1", "ENTRIESREAD", "2")
    g = groups(raw_rc)[b"g"]
    assert (g[b"entries-read"], g[b"lag"]) == (2, 2)


def test_xsetid_lowering_entries_added_lowers_groups_entries_read(raw_rc):
    for i in range(1, 11):
        raw_rc.execute_command("XADD", "s", f"{i}-1", "f", "v")
    raw_rc.execute_command("XGROUP", "CREATE", "s", "read-all", "0")
    raw_rc.execute_command("XGROUP", "CREATE", "s", "read-two", "0")
    raw_rc.execute_command("XGROUP", "CREATE", "s", "unknown", "0", "ENTRIESREAD", "-1")
    raw_rc.execute_command("XREADGROUP", "GROUP", "read-all", "c", "STREAMS", "s", ">")
    raw_rc.execute_command("XREADGROUP", "GROUP", "read-two", "c", "COUNT", "2", "STREAMS", "s", ">")
    raw_rc.execute_command("XTRIM", "s", "MAXLEN", "2")
    raw_rc.execute_command("XSETID", "s", "10-1", "ENTRIESADDED", "5")
    g = groups(raw_rc)
    assert (g[b"read-all"][b"entries-read"], g[b"read-all"][b"lag"]) == (5, 0)
    assert g[b"read-two"][b"entries-read"] == 2
    assert g[b"unknown"][b"entries-read"] is None
    info = as_map(raw_rc.execute_command("XINFO", "STREAM", "s"))
    assert info[b"entries-added"] == 5


def test_lowered_counters_survive_restart(server_factory):
    srv = server_factory("--appendfsync", "always")
    r = plain(redis.Redis(port=srv.port))
    for i in range(1, 4):
        r.execute_command("XADD", "s", f"{i}-1", "f", "v")
    r.execute_command("XGROUP", "CREATE", "s", "g", "$", "ENTRIESREAD", "9")
    r.execute_command("XGROUP", "CREATE", "s", "h", "0")
    r.execute_command("XGROUP", "SETID", "s", "h", "1-1", "ENTRIESREAD", "8")
    before = r.execute_command("XINFO", "GROUPS", "s")
    os.kill(srv.proc.pid, signal.SIGKILL)
    srv.proc.wait()
    srv2 = restart(srv)
    try:
        r2 = plain(redis.Redis(port=srv2.port))
        assert r2.execute_command("XINFO", "GROUPS", "s") == before
        assert [as_map(g)[b"entries-read"] for g in before] == [3, 3]
        # and the rewrite (XSETID before XGROUP CREATE) keeps them
        info = redis.Redis(port=srv2.port)
        r2.execute_command("BGREWRITEAOF")
        deadline = time.monotonic() + 10
        while info.info("persistence")["aof_rewrites"] < 1 or \
                info.info("persistence")["aof_rewrite_in_progress"]:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        srv3 = restart(srv2)
    finally:
        srv2.cleanup()
    try:
        r3 = plain(redis.Redis(port=srv3.port))
        assert r3.execute_command("XINFO", "GROUPS", "s") == before
    finally:
        srv3.cleanup()


def test_xread_key_specs_are_incomplete(raw_r):
    # Redis marks them INCOMPLETE (its ACL fix, 7.4.11 and 8.x): the key finder decides.
    for name, startfrom in (("xread", 1), ("xreadgroup", 4)):
        info = raw_r.execute_command("COMMAND", "INFO", name)[0]
        (spec,) = info[8]
        spec = as_map(spec)
        assert sorted(spec[b"flags"]) == [b"RO", b"access", b"incomplete"]
        assert spec[b"notes"].startswith(b"Incomplete because a ")
        assert as_map(spec[b"begin_search"])[b"type"] == b"keyword"
        assert as_map(as_map(spec[b"begin_search"])[b"spec"])[b"startfrom"] == startfrom
        assert info[3:6] == [0, 0, 0] and b"movablekeys" in info[2]
    getkeys = ("COMMAND", "GETKEYS")
    # a key named STREAMS, a consumer named STREAMS, options before GROUP
    assert raw_r.execute_command(*getkeys, "XREAD", "COUNT", 1, "STREAMS", "STREAMS", "0") == \
        [b"STREAMS"]
    assert raw_r.execute_command(*getkeys, "XREADGROUP", "GROUP", "g", "STREAMS", "STREAMS",
                                 "k", ">") == [b"k"]
    assert raw_r.execute_command(*getkeys, "XREADGROUP", "NOACK", "GROUP", "g", "c",
                                 "MAXCOUNT", 10, "STREAMS", "k2", ">") == [b"k2"]
    assert raw_r.execute_command(*getkeys, "XREADGROUP", "GROUP", "g", "c", "CLAIM", 100,
                                 "MAXSIZE", 9, "STREAMS", "k3", ">") == [b"k3"]


def _lag(r: redis.Redis, key: str = "x", group: bytes = b"g1") -> tuple:
    g = groups(r, key)[group]
    return g[b"last-delivered-id"], g[b"entries-read"], g[b"lag"]


def test_lag_of_a_group_left_behind_by_trimming(raw_rc):
    # redis/redis#13473 (XINFO) and #13958 (the next read): a group whose position was trimmed
    # away reports the entries left as its lag, and its next read re-estimates entries-read
    # rather than counting on from a counter that missed the trimmed entries.
    for trim in (("XTRIM", "x", "MAXLEN", 1), ("XADD", "x", "MAXLEN", 1, "6-0", "data", "f")):
        raw_rc.delete("x")
        for i in range(1, 6):
            raw_rc.execute_command("XADD", "x", f"{i}-0", "data", "v")
        raw_rc.execute_command("XGROUP", "CREATE", "x", "g1", "0")
        raw_rc.execute_command("XREADGROUP", "GROUP", "g1", "c", "COUNT", 1, "STREAMS", "x", ">")
        assert _lag(raw_rc) == (b"1-0", 1, 4)
        raw_rc.execute_command(*trim)
        added = 5 if trim[0] == "XTRIM" else 6
        assert _lag(raw_rc) == (b"1-0", 1, 1), trim
        raw_rc.execute_command("XREADGROUP", "GROUP", "g1", "c", "COUNT", 1, "STREAMS", "x", ">")
        last = b"5-0" if trim[0] == "XTRIM" else b"6-0"
        assert _lag(raw_rc) == (last, added, 0), trim
        raw_rc.execute_command("XADD", "x", "7-0", "data", "w")
        assert _lag(raw_rc) == (last, added, 1)
        raw_rc.execute_command("XREADGROUP", "GROUP", "g1", "c", "STREAMS", "x", ">")
        assert _lag(raw_rc) == (b"7-0", added + 1, 0)


def test_group_at_zero_on_a_trimmed_stream(raw_rc):
    for i in range(1, 11):
        raw_rc.execute_command("XADD", "x", f"{i}-0", "data", "v")
    raw_rc.execute_command("XTRIM", "x", "MAXLEN", 4)
    raw_rc.execute_command("XGROUP", "CREATE", "x", "g1", "0", "ENTRIESREAD", "0")
    # 4 entries are left to read, not the 10 ever added
    assert _lag(raw_rc) == (b"0-0", 0, 4)
    raw_rc.execute_command("XREADGROUP", "GROUP", "g1", "c", "COUNT", 2, "STREAMS", "x", ">")
    assert _lag(raw_rc) == (b"8-0", 8, 2)
