"""Deletion policies (Redis 8.2): KEEPREF / DELREF / ACKED on XADD and XTRIM, XDELEX, XACKDEL.

No Redis 8 server runs here: the expected replies come from Redis's command pages (xdelex,
xackdel, xtrim, xadd on redis.io), its command JSON files and the cases of its own test suite.
"""

from __future__ import annotations

import os
import random
import signal
from collections.abc import Iterator

import hiredis
import pytest
import redis

from tests.helpers import call_raw, node_max_entries, restart
from tests.serverproc import RawConnection, ServerProcess


def _ids(r: redis.Redis, key: str = "s") -> list[bytes]:
    return [eid for eid, _ in r.xrange(key)]


def _pending(r: redis.Redis, group: str, key: str = "s") -> list[bytes]:
    return [p["message_id"] for p in r.xpending_range(key, group, "-", "+", 1000)]


def _two_groups_read(r: redis.Redis, n: int = 2) -> None:
    """Entries 1-0 .. n-0, and groups g1 (consumer c1) and g2 (c2) that both read all of them."""
    for i in range(1, n + 1):
        r.xadd("s", {"f": "v"}, id=f"{i}-0")
    r.xgroup_create("s", "g1", id="0")
    r.xgroup_create("s", "g2", id="0")
    r.xreadgroup("g1", "c1", {"s": ">"})
    r.xreadgroup("g2", "c2", {"s": ">"})


@pytest.fixture
def nodes2(r: redis.Redis) -> Iterator[redis.Redis]:
    """Two entries per stream node, so that `~` trims have node boundaries to stop at."""
    with node_max_entries(r, 2):
        yield r


# --- XDELEX ------------------------------------------------------------------------------------


def test_xdelex_keepref_deletes_and_keeps_references(rc: redis.Redis) -> None:
    _two_groups_read(rc)
    assert rc.xdelex("s", "1-0", "2-0", "3-0") == [1, 1, -1]
    assert rc.xlen("s") == 0
    assert _pending(rc, "g1") == [b"1-0", b"2-0"]
    assert _pending(rc, "g2") == [b"1-0", b"2-0"]
    # Already deleted: not found, whatever the references.
    assert rc.xdelex("s", "1-0", ref_policy="KEEPREF") == [-1]


def test_xdelex_delref_drops_every_reference_even_of_missing_entries(rc: redis.Redis) -> None:
    _two_groups_read(rc, 3)
    rc.xdel("s", "3-0")  # 3-0 is gone, but both PELs still hold it
    assert rc.xdelex("s", "1-0", "3-0", ref_policy="DELREF") == [1, -1]
    assert _ids(rc) == [b"2-0"]
    assert _pending(rc, "g1") == [b"2-0"]
    assert _pending(rc, "g2") == [b"2-0"]
    assert rc.xinfo_stream("s")["max-deleted-entry-id"] == b"3-0"


def test_xdelex_acked_deletes_only_what_every_group_acknowledged(rc: redis.Redis) -> None:
    _two_groups_read(rc, 3)
    assert rc.xdelex("s", "1-0", "2-0", ref_policy="ACKED") == [2, 2]
    rc.xack("s", "g1", "1-0", "2-0")
    assert rc.xdelex("s", "1-0", "2-0", ref_policy="ACKED") == [2, 2]  # g2 still holds them
    rc.xack("s", "g2", "1-0")
    assert rc.xdelex("s", "1-0", "2-0", "9-0", ref_policy="ACKED") == [1, 2, -1]
    assert _ids(rc) == [b"2-0", b"3-0"]


def test_xdelex_acked_keeps_what_a_group_has_not_read(r: redis.Redis) -> None:
    for i in range(1, 6):
        r.xadd("s", {"f": i}, id=f"{i}-0")
    r.xgroup_create("s", "group1", id="1-0")
    r.xgroup_create("s", "group2", id="3-0")
    # At or below every group's last delivered ID and pending nowhere: acknowledged.
    assert r.xdelex("s", "1-0", ref_policy="ACKED") == [1]
    assert r.xdelex("s", "2-0", ref_policy="ACKED") == [2]  # group1 has not read it
    r.xgroup_destroy("s", "group1")
    assert r.xdelex("s", "2-0", "3-0", "4-0", ref_policy="ACKED") == [1, 1, 2]
    # A group created now, from the start, has read nothing.
    r.xgroup_create("s", "late", id="0")
    assert r.xdelex("s", "5-0", ref_policy="ACKED") == [2]


def test_xdelex_acked_counts_noack_reads_as_acknowledged(r: redis.Redis) -> None:
    for i in range(1, 4):
        r.xadd("s", {"f": i}, id=f"{i}-0")
    r.xgroup_create("s", "g", id="0")
    r.xreadgroup("g", "c", {"s": ">"}, count=2, noack=True)
    assert r.xdelex("s", "1-0", "2-0", "3-0", ref_policy="ACKED") == [1, 1, 2]


def test_xdelex_acked_without_groups_deletes(r: redis.Redis) -> None:
    r.xadd("s", {"f": 1}, id="1-0")
    assert r.xdelex("s", "1-0", ref_policy="ACKED") == [1]


def test_xdelex_ids_block_anywhere_and_case_insensitive(r: redis.Redis) -> None:
    for i in range(1, 4):
        r.xadd("s", {"f": i}, id=f"{i}-0")
    assert r.execute_command("XDELEX", "s", "ids", "1", "1-0", "keepref") == [1]
    assert r.execute_command("XDELEX", "s", "IDS", "2", "2", "2-0") == [1, -1]


def test_xdelex_missing_key_and_wrong_type(rc: redis.Redis) -> None:
    assert rc.xdelex("nokey", "1-0", "2-0") == [-1, -1]
    assert rc.exists("nokey") == 0
    rc.set("str", "x")
    with pytest.raises(redis.ResponseError, match="^WRONGTYPE"):
        rc.xdelex("str", "1-0")


@pytest.mark.parametrize(("args", "error"), [
    (("IDS", "abc", "1-0"), "Number of IDs must be a positive integer"),
    (("IDS", "0", "1-0"), "Number of IDs must be a positive integer"),
    (("IDS", "-5", "1-0"), "Number of IDs must be a positive integer"),
    (("IDS", "3", "1-0", "2-0"), "The `numids` parameter must match the number of arguments"),
    (("IDS", "1", "1-0", "2-0"), "syntax error"),
    (("KEEPREF", "DELREF", "IDS", "1", "1-0"), "syntax error"),
    (("DELREF", "ACKED", "IDS", "1", "1-0"), "syntax error"),
    (("ACKED", "IDS", "1", "1-0", "ACKED"), "syntax error"),
    (("IDS", "1", "1-0", "IDS", "1", "2-0"), "syntax error"),
    (("KEEPREF", "NOPE", "1-0"), "syntax error"),
    (("IDS", "2", "1-0", "bad"), "Invalid stream ID specified as stream command argument"),
])
def test_xdelex_argument_errors(r: redis.Redis, args: tuple[str, ...], error: str) -> None:
    r.xadd("s", {"f": 1}, id="1-0")
    with pytest.raises(redis.ResponseError) as exc:
        r.execute_command("XDELEX", "s", *args)
    assert str(exc.value) == error
    assert r.xlen("s") == 1  # nothing is deleted before every argument is checked


def test_xdelex_arity(r: redis.Redis) -> None:
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'xdelex'"):
        r.execute_command("XDELEX", "s", "IDS", "1")


def test_xdelex_raw_reply_is_the_same_array_in_resp2_and_resp3(raw: RawConnection) -> None:
    call_raw(raw, "XADD", "s", "1-0", "f", "v")
    call_raw(raw, "XADD", "s", "2-0", "f", "v")
    call_raw(raw, "XGROUP", "CREATE", "s", "g", "0")
    call_raw(raw, "XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">")
    assert call_raw(raw, "XDELEX", "s", "ACKED", "IDS", "3", "1-0", "2-0", "5-0") == \
        b"*3\r\n:2\r\n:2\r\n:-1\r\n"
    call_raw(raw, "HELLO", "3")
    assert call_raw(raw, "XDELEX", "s", "IDS", "2", "1-0", "5-0") == b"*2\r\n:1\r\n:-1\r\n"
    assert call_raw(raw, "XDELEX", "nokey", "IDS", "1", "1-0") == b"*1\r\n:-1\r\n"


# --- XACKDEL -----------------------------------------------------------------------------------


def test_xackdel_delref_clears_every_pel(rc: redis.Redis) -> None:
    _two_groups_read(rc)
    assert rc.xackdel("s", "g1", "1-0", "2-0", ref_policy="DELREF") == [1, 1]
    assert rc.xlen("s") == 0
    assert rc.xpending("s", "g1")["pending"] == 0
    assert rc.xpending("s", "g2")["pending"] == 0
    assert rc.xackdel("s", "g2", "1-0", "2-0", ref_policy="DELREF") == [-1, -1]


def test_xackdel_acked_deletes_once_the_last_group_acknowledges(rc: redis.Redis) -> None:
    _two_groups_read(rc)
    assert rc.xackdel("s", "g1", "1-0", "2-0", ref_policy="ACKED") == [2, 2]
    assert rc.xlen("s") == 2
    assert rc.xpending("s", "g1")["pending"] == 0
    assert _pending(rc, "g2") == [b"1-0", b"2-0"]
    assert rc.xackdel("s", "g2", "1-0", "2-0", ref_policy="ACKED") == [1, 1]
    assert rc.xlen("s") == 0
    assert rc.xpending("s", "g2")["pending"] == 0


def test_xackdel_keepref_leaves_other_groups_pending(rc: redis.Redis) -> None:
    _two_groups_read(rc)
    assert rc.xackdel("s", "g1", "1-0", "2-0") == [1, 1]
    assert rc.xlen("s") == 0
    assert _pending(rc, "g2") == [b"1-0", b"2-0"]
    # Acknowledged in g2 although the entries are already gone: still 1.
    assert rc.xackdel("s", "g2", "1-0", "2-0", ref_policy="KEEPREF") == [1, 1]
    assert rc.xpending("s", "g2")["pending"] == 0


def test_xackdel_not_pending_in_the_group_is_left_alone(r: redis.Redis) -> None:
    for i in range(1, 4):
        r.xadd("s", {"f": i}, id=f"{i}-0")
    r.xgroup_create("s", "g", id="0")
    r.xreadgroup("g", "c", {"s": ">"}, count=1)
    # 2-0 was never delivered to g: not acknowledged, not deleted; a repeated ID counts once.
    assert r.xackdel("s", "g", "1-0", "2-0", "1-0") == [1, -1, -1]
    assert _ids(r) == [b"2-0", b"3-0"]


def test_xackdel_acked_keeps_entries_an_unread_group_needs(r: redis.Redis) -> None:
    for i in range(1, 3):
        r.xadd("s", {"f": i}, id=f"{i}-0")
    r.xgroup_create("s", "g", id="0")
    r.xgroup_create("s", "slow", id="0")
    r.xreadgroup("g", "c", {"s": ">"})
    assert r.xackdel("s", "g", "1-0", "2-0", ref_policy="ACKED") == [2, 2]
    r.xreadgroup("slow", "c", {"s": ">"}, count=1, noack=True)
    assert r.xdelex("s", "1-0", "2-0", ref_policy="ACKED") == [1, 2]


def test_xackdel_missing_key_or_group(rc: redis.Redis) -> None:
    assert rc.xackdel("s", "g", "1-1", "2-2") == [-1, -1]
    rc.xadd("s", {"f": "v"}, id="1-0")
    assert rc.xackdel("s", "g", "1-1", "2-2") == [-1, -1]
    rc.set("str", "x")
    with pytest.raises(redis.ResponseError, match="^WRONGTYPE"):
        rc.xackdel("str", "g", "1-0")


@pytest.mark.parametrize(("args", "error"), [
    (("IDS", "abc", "1-1"), "Number of IDs must be a positive integer"),
    (("IDS", "0", "1-1"), "Number of IDs must be a positive integer"),
    (("IDS", "-5", "1-1"), "Number of IDs must be a positive integer"),
    (("IDS", "3", "1-1", "2-2"), "The `numids` parameter must match the number of arguments"),
    (("IDS", "1", "1-1", "2-2"), "syntax error"),
    (("KEEPREF", "DELREF", "IDS", "1", "1-1"), "syntax error"),
    (("KEEPREF", "ACKED", "IDS", "1", "1-1"), "syntax error"),
    (("DELREF", "ACKED", "IDS", "1", "1-1"), "syntax error"),
    (("IDS", "1", "x-y"), "Invalid stream ID specified as stream command argument"),
])
def test_xackdel_argument_errors(r: redis.Redis, args: tuple[str, ...], error: str) -> None:
    r.xadd("s", {"f": 1}, id="1-1")
    r.xgroup_create("s", "g", id="0")
    r.xreadgroup("g", "c", {"s": ">"})
    with pytest.raises(redis.ResponseError) as exc:
        r.execute_command("XACKDEL", "s", "g", *args)
    assert str(exc.value) == error
    assert _pending(r, "g") == [b"1-1"]


def test_xackdel_arity(r: redis.Redis) -> None:
    for args in ((), ("s",), ("s", "g"), ("s", "g", "IDS", "1")):
        with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'xackdel'"):
            r.execute_command("XACKDEL", *args)


def test_xackdel_many_ids(r: redis.Redis) -> None:
    r.xgroup_create("s", "g", id="$", mkstream=True)
    ids = [f"{i}-1" for i in range(50)]
    assert r.xackdel("s", "g", *ids) == [-1] * 50


# --- trimming policies ---------------------------------------------------------------------------


def test_xtrim_keepref_is_the_default_and_keeps_references(r: redis.Redis) -> None:
    _two_groups_read(r, 4)
    assert r.xtrim("s", maxlen=1, approximate=False, ref_policy="KEEPREF") == 3
    assert _pending(r, "g1") == [b"1-0", b"2-0", b"3-0", b"4-0"]


def test_xtrim_delref_drops_trimmed_entries_from_every_pel(r: redis.Redis) -> None:
    _two_groups_read(r, 4)
    r.xdel("s", "2-0")  # a tombstone the trim passes over: its references go too
    assert r.xtrim("s", maxlen=1, approximate=False, ref_policy="DELREF") == 2
    assert _ids(r) == [b"4-0"]
    assert _pending(r, "g1") == [b"4-0"]
    assert _pending(r, "g2") == [b"4-0"]


def test_xtrim_delref_over_tombstones_only_still_cleans_and_persists(server_factory) -> None:
    srv: ServerProcess = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    _two_groups_read(r, 3)
    r.xdel("s", "1-0", "2-0")
    assert r.xtrim("s", minid="3-0", approximate=False, ref_policy="DELREF") == 0
    assert _pending(r, "g1") == [b"3-0"]
    os.kill(srv.proc.pid, signal.SIGKILL)
    srv.proc.wait()
    srv2 = restart(srv)
    try:
        r2 = redis.Redis(port=srv2.port)
        assert _pending(r2, "g1") == [b"3-0"]
        assert _pending(r2, "g2") == [b"3-0"]
    finally:
        srv2.cleanup()


def test_xtrim_acked_skips_referenced_entries(r: redis.Redis) -> None:
    for i in range(1, 7):
        r.xadd("s", {"f": i}, id=f"{i}-0")
    r.xgroup_create("s", "g", id="0")
    r.xreadgroup("g", "c", {"s": ">"}, count=4)
    r.xack("s", "g", "1-0", "2-0", "4-0")
    # 3-0 is pending, 5-0 and 6-0 unread: only 1-0, 2-0 and 4-0 may go.
    assert r.xtrim("s", maxlen=1, approximate=False, ref_policy="ACKED") == 3
    assert _ids(r) == [b"3-0", b"5-0", b"6-0"]
    assert _pending(r, "g") == [b"3-0"]


def test_xtrim_minid_acked_exact(r: redis.Redis) -> None:
    for i in range(1, 7):
        r.xadd("s", {"f": i}, id=f"{i}-0")
    r.xgroup_create("s", "g", id="0")
    r.xreadgroup("g", "c", {"s": ">"})
    r.xack("s", "g", "2-0", "3-0", "5-0")
    assert r.xtrim("s", minid="5-0", approximate=False, ref_policy="ACKED") == 2
    assert _ids(r) == [b"1-0", b"4-0", b"5-0", b"6-0"]


def test_xtrim_acked_without_groups_is_keepref(r: redis.Redis) -> None:
    for i in range(1, 6):
        r.xadd("s", {"f": i}, id=f"{i}-0")
    assert r.xtrim("s", maxlen=2, approximate=False, ref_policy="ACKED") == 3


def test_xtrim_approx_acked_removes_the_acknowledged_node(nodes2: redis.Redis) -> None:
    r = nodes2
    for i in range(1, 5):
        r.xadd("s", {"f": "v"}, id=f"{i}-0")
    r.xgroup_create("s", "g", id="0")
    r.xreadgroup("g", "c", {"s": ">"}, count=2)
    r.xack("s", "g", "1-0", "2-0")
    # The first node (1-0, 2-0) is acknowledged, the second (3-0, 4-0) unread: `~` still
    # removes the first.
    assert r.xtrim("s", minid="5-0", approximate=True, ref_policy="ACKED") == 2
    assert _ids(r) == [b"3-0", b"4-0"]


def test_xtrim_approx_acked_after_noack_reads(small_nodes: redis.Redis) -> None:
    r = small_nodes  # 10-entry nodes
    for i in range(1, 41):
        r.xadd("s", {"n": i}, id=f"{i}-0")
    r.xgroup_create("s", "g", id="0")
    r.xreadgroup("g", "c", {"s": ">"}, count=40, noack=True)
    assert r.xtrim("s", maxlen=20, approximate=True, ref_policy="ACKED") == 20
    assert r.xlen("s") == 20
    assert r.xinfo_stream("s")["first-entry"][0] == b"21-0"


def test_xtrim_approx_acked_skips_pending_inside_droppable_nodes(small_nodes: redis.Redis) -> None:
    r = small_nodes
    for i in range(1, 41):
        r.xadd("s", {"n": i}, id=f"{i}-0")
    r.xgroup_create("s", "g", id="0")
    r.xreadgroup("g", "c", {"s": ">"}, count=40)
    r.xack("s", "g", *[f"{i}-0" for i in range(1, 41) if i != 5])
    assert r.xtrim("s", maxlen=20, approximate=True, ref_policy="ACKED") == 19
    assert _ids(r)[:2] == [b"5-0", b"21-0"]
    assert _pending(r, "g") == [b"5-0"]


def test_xtrim_approx_delref(small_nodes: redis.Redis) -> None:
    r = small_nodes
    for i in range(1, 31):
        r.xadd("s", {"n": i}, id=f"{i}-0")
    r.xgroup_create("s", "g", id="0")
    r.xreadgroup("g", "c", {"s": ">"})
    assert r.xtrim("s", maxlen=15, approximate=True, ref_policy="DELREF") == 10
    assert _pending(r, "g")[0] == b"11-0"
    assert r.xpending("s", "g")["pending"] == 20


def test_xtrim_acked_with_limit(small_nodes: redis.Redis) -> None:
    r = small_nodes
    for i in range(1, 41):
        r.xadd("s", {"n": i}, id=f"{i}-0")
    r.xgroup_create("s", "g", id="$")
    assert r.xtrim("s", maxlen=0, approximate=True, limit=20, ref_policy="ACKED") == 20
    assert r.xlen("s") == 20


def test_xadd_with_policies(r: redis.Redis) -> None:
    for i in range(1, 4):
        r.xadd("s", {"f": i}, id=f"{i}-0")
    r.xgroup_create("s", "g", id="0")
    r.xreadgroup("g", "c", {"s": ">"}, count=2)
    r.xack("s", "g", "1-0")
    assert r.xadd("s", {"f": 4}, id="4-0", maxlen=1, approximate=False, ref_policy="ACKED") == b"4-0"
    assert _ids(r) == [b"2-0", b"3-0", b"4-0"]  # 2-0 pending, 3-0 and 4-0 unread
    r.xadd("s", {"f": 5}, id="5-0", maxlen=1, approximate=False, ref_policy="DELREF")
    assert _ids(r) == [b"5-0"]
    assert r.xpending("s", "g")["pending"] == 0
    # The option may come anywhere before the ID; a repeated one: the last counts.
    assert r.execute_command("XADD", "s", "KEEPREF", "NOMKSTREAM", "DELREF", "MAXLEN", "1",
                             "6-0", "f", "6") == b"6-0"
    with pytest.raises(redis.ResponseError, match="^syntax error"):
        r.execute_command("XTRIM", "s", "MAXLEN", "1", "ACKED", "EXTRA")


def _referenced(r: redis.Redis) -> tuple[list[int], set[int]]:
    """(every live entry as its sequence number, those some group still needs): what the
    documentation calls not yet "read and acknowledged by all consumer groups"."""
    live = [int(eid.split(b"-")[1]) for eid in _ids(r)]
    needed: set[int] = set()
    for g in r.xinfo_groups("s"):
        last = int(g["last-delivered-id"].split(b"-")[1])
        needed |= {seq for seq in live if seq > last}
        needed |= {int(p.split(b"-")[1]) for p in _pending(r, g["name"].decode())}
    return live, needed


@pytest.mark.parametrize("seed", range(6))
def test_exact_acked_trims_remove_the_oldest_acknowledged_entries(small_nodes: redis.Redis,
                                                                  seed: int) -> None:
    r = small_nodes
    rng = random.Random(seed)
    for i in range(1, 61):
        r.xadd("s", {"n": i}, id=f"1-{i}")
    for g in range(rng.randint(1, 3)):
        r.xgroup_create("s", f"g{g}", id="0")
        got = r.xreadgroup(f"g{g}", "c", {"s": ">"}, count=rng.randint(0, 60) or None)
        read = [eid for eid, _ in got[0][1]] if got else []
        done = [eid for eid in read if rng.random() < 0.8]
        if done:
            r.xack("s", f"g{g}", *done)
    r.xdel("s", *[f"1-{i}" for i in range(1, 61) if rng.random() < 0.1])
    for _ in range(4):
        live, needed = _referenced(r)
        if rng.random() < 0.5:
            maxlen = rng.randint(0, len(live))
            free = [seq for seq in live if seq not in needed]
            expected = free[:max(0, len(live) - maxlen)]
            removed = r.xtrim("s", maxlen=maxlen, approximate=False, ref_policy="ACKED")
        else:
            minid = rng.randint(1, 61)
            expected = [seq for seq in live if seq < minid and seq not in needed]
            removed = r.xtrim("s", minid=f"1-{minid}", approximate=False, ref_policy="ACKED")
        assert removed == len(expected)
        assert int(r.xlen("s")) == len(live) - len(expected)
        assert not set(expected) & {int(e.split(b"-")[1]) for e in _ids(r)}


# --- COMMAND DOCS / INFO -------------------------------------------------------------------------


def _parsed(raw: RawConnection, *args: str) -> list:
    reader = hiredis.Reader()
    reader.feed(call_raw(raw, *args))
    return reader.gets()


def test_command_info_of_the_new_commands(raw: RawConnection) -> None:
    xdelex, xackdel = _parsed(raw, "COMMAND", "INFO", "xdelex", "xackdel")
    assert xdelex[:6] == [b"xdelex", -5, [b"write", b"fast"], 1, 1, 1]
    assert xackdel[:6] == [b"xackdel", -6, [b"write", b"fast"], 1, 1, 1]
    assert b"@stream" in xdelex[6] and b"@write" in xdelex[6]
    spec = xackdel[8][0]
    assert dict(zip(spec[::2], spec[1::2], strict=True))[b"flags"] == [b"RW", b"update", b"delete"]


def _docs(raw: RawConnection, name: str) -> dict:
    doc = _parsed(raw, "COMMAND", "DOCS", name)[1]
    return {doc[i]: doc[i + 1] for i in range(0, len(doc), 2)}


def _arg_names(args: list) -> list[bytes]:
    return [dict(zip(a[::2], a[1::2], strict=True))[b"name"] for a in args]


def test_command_docs(raw: RawConnection) -> None:
    xdelex = _docs(raw, "xdelex")
    assert xdelex[b"since"] == b"8.2.0"
    assert _arg_names(xdelex[b"arguments"]) == [b"key", b"condition", b"ids"]
    xackdel = _docs(raw, "xackdel")
    assert _arg_names(xackdel[b"arguments"]) == [b"key", b"group", b"condition", b"ids"]
    for name in ("xadd", "xtrim"):
        doc = _docs(raw, name)
        assert [b"8.2.0", b"Added the `KEEPREF`, `DELREF` and `ACKED` options."] in doc[b"history"]
    # Where redis.io's syntax lines put the option: XADD key [NOMKSTREAM] [KEEPREF | DELREF |
    # ACKED] [trim] ..., XTRIM key <trim> [KEEPREF | DELREF | ACKED].
    # XADD key [NOMKSTREAM] [KEEPREF | DELREF | ACKED] [IDMPAUTO ... | IDMP ...] [trim] ...
    assert _arg_names(_docs(raw, "xadd")[b"arguments"])[:5] == \
        [b"key", b"nomkstream", b"condition", b"idmp", b"trim"]
    assert _arg_names(_docs(raw, "xtrim")[b"arguments"]) == [b"key", b"trim", b"condition"]


# --- persistence ---------------------------------------------------------------------------------


def _state(r: redis.Redis) -> tuple:
    def pel(group: str) -> list:
        return [(p["message_id"], p["consumer"], p["times_delivered"])
                for p in r.xpending_range("s", group, "-", "+", 100)]

    info = r.xinfo_stream("s")
    return (r.xrange("s"), pel("g1"), pel("g2"), info["max-deleted-entry-id"],
            info["recorded-first-entry-id"], info["entries-added"], r.xlen("s"))


def test_policies_replay_after_kill_9(server_factory) -> None:
    srv: ServerProcess = server_factory("--appendfsync", "always", "--stream-node-max-entries", "3")
    r = redis.Redis(port=srv.port)
    for i in range(1, 31):
        r.xadd("s", {"n": i}, id=f"{i}-0")
    r.xgroup_create("s", "g1", id="0")
    r.xgroup_create("s", "g2", id="0")
    r.xreadgroup("g1", "a", {"s": ">"}, count=20)
    r.xreadgroup("g2", "b", {"s": ">"}, count=12)
    r.xack("s", "g1", *[f"{i}-0" for i in range(1, 21) if i % 4])
    r.xack("s", "g2", *[f"{i}-0" for i in range(1, 13) if i % 3])
    assert r.xackdel("s", "g2", "12-0", "6-0", "25-0", ref_policy="ACKED") == [2, 1, -1]
    r.xdelex("s", "8-0", "27-0", ref_policy="DELREF")
    r.xdelex("s", "1-0", "2-0", "4-0", "13-0", ref_policy="ACKED")
    r.xtrim("s", minid="12-0", approximate=True, ref_policy="ACKED")
    r.xadd("s", {"n": 31}, maxlen=20, approximate=True, ref_policy="ACKED")
    r.xtrim("s", maxlen=18, approximate=True, ref_policy="DELREF")
    r.xackdel("s", "g1", "12-0", "16-0", ref_policy="DELREF")
    before = _state(r)
    os.kill(srv.proc.pid, signal.SIGKILL)
    srv.proc.wait()
    srv2 = restart(srv, "--stream-node-max-entries", "3")
    try:
        assert _state(redis.Redis(port=srv2.port)) == before
    finally:
        srv2.cleanup()
