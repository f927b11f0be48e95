"""XREADGROUP CLAIM min-idle-time (Redis 8.4) and XNACK (Redis 8.8) against a real server.

No Redis 8 runs here: reply shapes follow redis.io's XREADGROUP and XNACK pages and the Redis
pull requests that added them (redis/redis 14402, 14524, 14797, 15091); see the module
docstrings of server/commands/streams_readgroup.py and streams_groups.py for what was inferred.
"""

from __future__ import annotations

import random
import signal
import socket
import threading
import time
from typing import Any

import hiredis
import redis

from tests.helpers import (
    aof_path,
    as_map,
    call_raw,
    encode_command,
    err,
    no_retry,
    read_reply,
    resp3_reply_bytes,
    restart,
    strip_moving_fields,
    wait_blocked,
)
from tests.serverproc import RawConnection, ServerProcess

LLONG_MAX = (1 << 63) - 1


def _setup(r: redis.Redis, n: int = 5, read: int = 3, consumer: str = "alice") -> None:
    """Stream s with entries 1-0..n-0, group g at 0, `read` of them delivered to `consumer`."""
    for i in range(1, n + 1):
        r.xadd("s", {"f": str(i)}, id=f"{i}-0")
    r.xgroup_create("s", "g", id="0")
    if read:
        r.xreadgroup("g", consumer, {"s": ">"}, count=read)


def _age(r: redis.Redis, consumer: str, ids: dict[str, int]) -> None:
    """Make each pending ID idle for the given ms (owner `consumer`), counters unchanged."""
    for eid, idle in ids.items():
        r.xclaim("s", "g", consumer, 0, [eid], idle=idle, justid=True)


def _pending(r: redis.Redis, key: str = "s", group: str = "g") -> list[tuple[bytes, bytes, int]]:
    return [(p["message_id"], p["consumer"], p["times_delivered"])
            for p in r.xpending_range(key, group, "-", "+", 100)]


def _full_group(r: redis.Redis, key: str = "s") -> dict:
    raw = r.execute_command("XINFO", "STREAM", key, "FULL")
    info = as_map(raw)
    return as_map(info[b"groups"][0])


# --- XREADGROUP CLAIM -----------------------------------------------------------------------------


def test_claim_serves_idle_pending_first_then_new_with_metadata(r) -> None:
    _setup(r)
    _age(r, "alice", {"1-0": 5000, "2-0": 9000, "3-0": 10})
    reply = r.xreadgroup("g", "bob", {"s": ">"}, count=10, claim_min_idle_time=1000)
    [(key, entries)] = reply
    assert key == b"s"
    # Longest idle first; 3-0 is not idle enough; then the new entries with 0 and 0.
    assert [e[0] for e in entries] == [b"2-0", b"1-0", b"4-0", b"5-0"]
    assert entries[0][1] == {b"f": b"2"}
    assert 9000 <= entries[0][2] < 12000 and entries[0][3] == 1
    assert 5000 <= entries[1][2] < 8000 and entries[1][3] == 1
    assert entries[2][2:] == (0, 0) and entries[3][2:] == (0, 0)
    # The claimed entries now belong to bob, delivered once more; the new ones too.
    assert _pending(r) == [(b"1-0", b"bob", 2), (b"2-0", b"bob", 2), (b"3-0", b"alice", 1),
                           (b"4-0", b"bob", 1), (b"5-0", b"bob", 1)]
    consumers = {c["name"]: c["pending"] for c in r.xinfo_consumers("s", "g")}
    assert consumers == {b"alice": 1, b"bob": 4}


def test_claim_reply_bytes_resp2_and_resp3(server, r) -> None:
    _setup(r, n=2, read=1)
    _age(r, "alice", {"1-0": 60000})
    conn = RawConnection(server.port)
    try:
        got = call_raw(conn, "XREADGROUP", "GROUP", "g", "bob", "CLAIM", "50000", "STREAMS", "s", ">")
    finally:
        conn.close()
    head, _, rest = got.partition(b"*2\r\n$1\r\nf\r\n$1\r\n1\r\n")
    assert head == b"*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*4\r\n$3\r\n1-0\r\n"
    idle, _, tail = rest.partition(b"\r\n")
    assert idle.startswith(b":") and 60000 <= int(idle[1:]) < 65000  # an integer, not a string
    assert tail == b":1\r\n*4\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$1\r\n2\r\n:0\r\n:0\r\n"
    # RESP3: a map of key -> entries, the same entry arrays.
    r.xclaim("s", "g", "alice", 0, ["1-0", "2-0"], idle=60000, justid=True)
    got3 = resp3_reply_bytes(server.port, b"XREADGROUP GROUP g carol CLAIM 50000 STREAMS s >\r\n")
    assert got3.startswith(b"%1\r\n$1\r\ns\r\n*2\r\n*4\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\n1\r\n:")
    # 1-0 was delivered twice (alice, bob's claim), 2-0 once (bob): JUSTID claims do not count.
    assert b"\r\n:2\r\n*4\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$1\r\n2\r\n:" in got3
    assert got3.endswith(b"\r\n:1\r\n")


def test_claim_resp3_client(r3) -> None:
    _setup(r3, n=3, read=2)
    _age(r3, "alice", {"1-0": 3000})
    reply = r3.xreadgroup("g", "bob", {"s": ">"}, claim_min_idle_time=2000)
    entries = reply[b"s"][0]
    assert [e[0] for e in entries] == [b"1-0", b"3-0"]
    assert entries[0][3] == 1 and entries[1][2:] == (0, 0)


def test_claim_count_covers_claimed_and_new(r) -> None:
    _setup(r, n=6, read=4)
    _age(r, "alice", {"1-0": 5000, "2-0": 4000, "3-0": 3000, "4-0": 2000})
    reply = r.xreadgroup("g", "bob", {"s": ">"}, count=3, claim_min_idle_time=1000)
    assert [e[0] for e in reply[0][1]] == [b"1-0", b"2-0", b"3-0"]
    reply = r.xreadgroup("g", "bob", {"s": ">"}, count=3, claim_min_idle_time=1000)
    assert [e[0] for e in reply[0][1]] == [b"4-0", b"5-0", b"6-0"]
    # Nothing idle enough and nothing new: a nil reply, as without CLAIM.
    assert r.xreadgroup("g", "bob", {"s": ">"}, count=3, claim_min_idle_time=1000) == []


def test_claim_ties_in_id_order_and_min_idle_zero_takes_everything(r) -> None:
    _setup(r, n=3, read=3)
    now = int(time.time() * 1000)
    for eid in ("3-0", "1-0", "2-0"):
        r.xclaim("s", "g", "alice", 0, [eid], time=now - 7000, justid=True)
    reply = r.xreadgroup("g", "bob", {"s": ">"}, claim_min_idle_time=0)
    assert [e[0] for e in reply[0][1]] == [b"1-0", b"2-0", b"3-0"]
    # CLAIM 0 takes even what was delivered this very moment.
    reply = r.xreadgroup("g", "carol", {"s": ">"}, claim_min_idle_time=0)
    assert [(e[0], e[3]) for e in reply[0][1]] == [(b"1-0", 2), (b"2-0", 2), (b"3-0", 2)]


def test_claim_with_noack_keeps_claimed_entries_pending(r) -> None:
    _setup(r, n=3, read=1)
    _age(r, "alice", {"1-0": 2000})
    reply = r.xreadgroup("g", "bob", {"s": ">"}, noack=True, claim_min_idle_time=1000)
    assert [e[0] for e in reply[0][1]] == [b"1-0", b"2-0", b"3-0"]
    # NOACK does not apply to the claimed entry; the new ones are not pending.
    assert _pending(r) == [(b"1-0", b"bob", 2)]


def test_claim_several_streams_and_history_ids(r) -> None:
    _setup(r, n=2, read=2)
    _age(r, "alice", {"1-0": 3000})
    r.xadd("t", {"x": "1"}, id="1-0")
    r.xgroup_create("t", "g", id="0")
    r.xreadgroup("g", "bob", {"t": ">"})
    raw = redis.Redis(port=r.connection_pool.connection_kwargs["port"], protocol=2)
    raw.response_callbacks.clear()
    try:
        # A history read (an explicit ID) ignores CLAIM: the consumer's own entries, 2 elements.
        reply = raw.execute_command("XREADGROUP", "GROUP", "g", "bob", "CLAIM", "1000",
                                    "STREAMS", "s", "t", ">", "0")
    finally:
        raw.close()
    assert reply == [[b"s", [[b"1-0", [b"f", b"1"], reply[0][1][0][2], 1]]],
                     [b"t", [[b"1-0", [b"x", b"1"]]]]]
    assert 3000 <= reply[0][1][0][2] < 6000


def test_claim_drops_pending_records_of_deleted_entries(r) -> None:
    _setup(r, n=3, read=3)
    _age(r, "alice", {"1-0": 3000, "2-0": 3000})
    r.xdel("s", "1-0")
    reply = r.xreadgroup("g", "bob", {"s": ">"}, claim_min_idle_time=1000)
    assert [e[0] for e in reply[0][1]] == [b"2-0"]
    assert _pending(r) == [(b"2-0", b"bob", 2), (b"3-0", b"alice", 1)]


def test_claim_errors(r) -> None:
    _setup(r, n=1, read=0)
    for bad in ("-1", "abc", "1.5"):
        assert err(r, "XREADGROUP", "GROUP", "g", "c", "CLAIM", bad, "STREAMS", "s", ">") == \
            "Invalid min-idle-time argument for XREADGROUP"
    assert err(r, "XREADGROUP", "GROUP", "g", "c", "CLAIM", "STREAMS", "s", ">") == \
        "Invalid min-idle-time argument for XREADGROUP"
    assert err(r, "XREADGROUP", "GROUP", "g", "c", "CLAIM", "10", "STREAMS", "nokey", ">") \
        .startswith("NOGROUP")


def test_blocked_claim_reader_wakes_when_an_entry_becomes_idle(server, r) -> None:
    _setup(r, n=1, read=1)
    conn = RawConnection(server.port)
    try:
        t0 = time.monotonic()
        conn.send(encode_command("XREADGROUP", "GROUP", "g", "bob", "BLOCK", 5000,
                                 "CLAIM", 300, "STREAMS", "s", ">"))
        reply = read_reply(conn)
        waited = time.monotonic() - t0
    finally:
        conn.close()
    # No write happened: the entry crossing min-idle-time woke the reader, well before BLOCK's end.
    assert 0.25 <= waited < 2.0, waited
    assert reply.startswith(b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*4\r\n$3\r\n1-0\r\n")
    assert _pending(r) == [(b"1-0", b"bob", 2)]


def test_blocked_claim_reader_wakes_on_xnack_and_on_new_entries(server, r) -> None:
    _setup(r, n=1, read=1)
    conn = RawConnection(server.port)
    try:
        conn.send(encode_command("XREADGROUP", "GROUP", "g", "bob", "BLOCK", 0,
                                 "CLAIM", 3600000, "STREAMS", "s", ">"))
        wait_blocked(r, 1)
        assert r.xnack("s", "g", "FAIL", "1-0") == 1
        reply = read_reply(conn)
        assert reply.startswith(b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*4\r\n$3\r\n1-0\r\n")
        conn.send(encode_command("XREADGROUP", "GROUP", "g", "bob", "BLOCK", 0,
                                 "CLAIM", 3600000, "STREAMS", "s", ">"))
        wait_blocked(r, 1)
        r.xadd("s", {"f": "2"}, id="2-0")
        assert read_reply(conn) == \
            b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*4\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$1\r\n2\r\n:0\r\n:0\r\n"
    finally:
        conn.close()


def test_xnack_does_not_serve_a_blocked_reader_without_claim(server, r) -> None:
    _setup(r, n=1, read=1)
    conn = RawConnection(server.port)
    try:
        conn.send(encode_command("XREADGROUP", "GROUP", "g", "bob", "BLOCK", 0, "STREAMS", "s", ">"))
        wait_blocked(r, 1)
        assert r.xnack("s", "g", "FAIL", "1-0") == 1
        time.sleep(0.1)
        wait_blocked(r, 1)  # re-run, nothing new for a plain `>` read: still waiting
        r.xadd("s", {"f": "2"}, id="2-0")
        assert read_reply(conn) == \
            b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$1\r\n2\r\n"
    finally:
        conn.close()
    assert _pending(r) == [(b"1-0", b"", 1), (b"2-0", b"bob", 1)]


def test_blocked_claim_reader_times_out_with_nil(server, r) -> None:
    _setup(r, n=1, read=1)
    conn = RawConnection(server.port)
    try:
        assert call_raw(conn, "XREADGROUP", "GROUP", "g", "bob", "BLOCK", 150, "CLAIM", 3600000,
                        "STREAMS", "s", ">") == b"*-1\r\n"
    finally:
        conn.close()
    assert resp3_reply_bytes(server.port, b"XREADGROUP GROUP g bob BLOCK 100 CLAIM 3600000 "
                             b"STREAMS s >\r\n") == b"_\r\n"


def test_claim_inside_multi_does_not_wait(server, r) -> None:
    _setup(r, n=1, read=1)
    conn = RawConnection(server.port)
    try:
        assert call_raw(conn, "MULTI") == b"+OK\r\n"
        call_raw(conn, "XREADGROUP", "GROUP", "g", "bob", "BLOCK", 0, "CLAIM", 3600000,
                 "STREAMS", "s", ">")
        assert call_raw(conn, "EXEC") == b"*1\r\n*-1\r\n"
    finally:
        conn.close()


def test_claim_order_matches_a_model_under_random_claims_and_acks(r) -> None:
    """CLAIM serves exactly the records idle long enough, longest idle first (ties by ID), up
    to COUNT: checked against a model over random XCLAIM TIME, XACK and CLAIM reads."""
    rnd = random.Random(8484)
    n = 80
    for i in range(1, n + 1):
        r.xadd("s", {"f": str(i)}, id=f"{i}-0")
    r.xgroup_create("s", "g", id="0")
    r.xreadgroup("g", "alice", {"s": ">"})
    base = int(time.time() * 1000)
    step = 10000  # idle times 10 s apart: the clock moving during the test cannot reorder them
    model: dict[int, list[int]] = {i: [0, 1] for i in range(1, n + 1)}  # id -> [age k, count]
    for _round in range(40):
        for i in rnd.sample(sorted(model), min(len(model), 6)):
            k = rnd.randrange(1, 30)
            r.xclaim("s", "g", rnd.choice(["alice", "bob"]), 0, [f"{i}-0"],
                     time=base - k * step, justid=True)
            model[i][0] = k
        for i in rnd.sample(sorted(model), min(len(model), 2)):
            r.xack("s", "g", f"{i}-0")
            del model[i]
        m = rnd.randrange(0, 30)
        count = rnd.choice([None, 1, 3, 10])
        due = sorted((-(model[i][0]), i) for i in model if model[i][0] > m)
        expected = [(i, model[i][1]) for _k, i in due][:count]
        reply = r.xreadgroup("g", "z", {"s": ">"}, count=count, claim_min_idle_time=m * step + step // 2)
        got = [(int(e[0].split(b"-")[0]), e[3]) for e in reply[0][1]] if reply else []
        assert got == expected, (_round, m, count)
        for i, _c in expected:
            model[i] = [0, model[i][1] + 1]
        if not model:
            break


# --- XNACK -----------------------------------------------------------------------------------------


def test_xnack_modes_and_retrycount(r) -> None:
    _setup(r, n=5, read=5)
    r.xclaim("s", "g", "alice", 0, ["1-0", "2-0", "3-0"], retrycount=3, justid=True)
    assert r.xnack("s", "g", "SILENT", "1-0") == 1
    assert r.xnack("s", "g", "FAIL", "2-0") == 1
    assert r.xnack("s", "g", "FATAL", "3-0") == 1
    assert r.xnack("s", "g", "FAIL", "4-0", retrycount=9) == 1
    assert r.xnack("s", "g", "FATAL", "5-0", retrycount=0) == 1  # RETRYCOUNT wins over the mode
    assert _pending(r) == [(b"1-0", b"", 2), (b"2-0", b"", 3), (b"3-0", b"", LLONG_MAX),
                           (b"4-0", b"", 9), (b"5-0", b"", 0)]
    # SILENT does not go below 0.
    assert r.xnack("s", "g", "SILENT", "5-0") == 1
    assert _pending(r)[-1] == (b"5-0", b"", 0)


def test_xnack_counts_only_released_ids_and_force(r) -> None:
    _setup(r, n=5, read=2)
    # 1-0 pending, 4-0 in the stream but not pending, 9-0 nowhere.
    assert r.xnack("s", "g", "FAIL", "1-0", "4-0", "9-0") == 1
    assert r.xnack("s", "g", "FAIL", "4-0", "9-0", force=True) == 1
    assert r.xnack("s", "g", "SILENT", "5-0", force=True) == 1
    assert _pending(r) == [(b"1-0", b"", 1), (b"2-0", b"alice", 1), (b"4-0", b"", 1),
                           (b"5-0", b"", 0)]
    assert r.xinfo_groups("s")[0]["pending"] == 4
    # The group's position does not move: 3-0 .. 5-0 are still new to `>` readers.
    assert [e[0] for e in r.xreadgroup("g", "bob", {"s": ">"})[0][1]] == [b"3-0", b"4-0", b"5-0"]
    # Delivered again, 4-0 and 5-0 are bob's (count reset, as any re-delivery after SETID).
    assert _pending(r) == [(b"1-0", b"", 1), (b"2-0", b"alice", 1), (b"3-0", b"bob", 1),
                           (b"4-0", b"bob", 1), (b"5-0", b"bob", 1)]
    assert _full_group(r)[b"nacked-count"] == 1


def test_released_entries_in_xpending_and_xinfo(r) -> None:
    _setup(r, n=3, read=3)
    r.xnack("s", "g", "FAIL", "2-0", "1-0")
    summary = r.xpending("s", "g")
    assert (summary["pending"], summary["min"], summary["max"]) == (3, b"1-0", b"3-0")
    assert summary["consumers"] == [{"name": b"alice", "pending": 1}]
    rows = r.xpending_range("s", "g", "-", "+", 10)
    assert [(p["message_id"], p["consumer"]) for p in rows] == \
        [(b"1-0", b""), (b"2-0", b""), (b"3-0", b"alice")]
    assert rows[0]["time_since_delivered"] > 10 ** 12  # delivery time 0: idle since the epoch
    assert r.execute_command("XPENDING", "s", "g", "-", "+", "10", "", parse_detail=True) == []
    assert {c["name"]: c["pending"] for c in r.xinfo_consumers("s", "g")} == {b"alice": 1}
    g = _full_group(r)
    assert g[b"nacked-count"] == 2 and g[b"pel-count"] == 3
    assert [p[:3] for p in g[b"pending"]] == [[b"1-0", b"", 0], [b"2-0", b"", 0]] + \
        [[b"3-0", b"alice", g[b"pending"][2][2]]]
    [alice] = g[b"consumers"]
    assert [p[0] for p in as_map(alice)[b"pending"]] == [b"3-0"]


def test_released_entries_go_to_the_next_claim_reader_in_release_order(r) -> None:
    _setup(r, n=6, read=4)
    _age(r, "alice", {"4-0": 60000})
    r.xnack("s", "g", "FAIL", "3-0")
    r.xnack("s", "g", "SILENT", "1-0")
    # A `>` reader without CLAIM gets only new entries.
    assert [e[0] for e in r.xreadgroup("g", "bob", {"s": ">"}, count=1)[0][1]] == [b"5-0"]
    reply = r.xreadgroup("g", "carol", {"s": ">"}, claim_min_idle_time=30000)
    entries = reply[0][1]
    # Released first (release order), then the idle one, then what is new.
    assert [e[0] for e in entries] == [b"3-0", b"1-0", b"4-0", b"6-0"]
    assert entries[0][3] == 1 and entries[1][3] == 0  # counts from before this delivery
    assert entries[0][2] > 10 ** 12  # released: delivered at time 0
    assert _full_group(r)[b"nacked-count"] == 0
    assert _pending(r) == [(b"1-0", b"carol", 1), (b"2-0", b"alice", 1), (b"3-0", b"carol", 2),
                           (b"4-0", b"carol", 2), (b"5-0", b"bob", 1), (b"6-0", b"carol", 1)]


def test_released_entries_repeat_release_moves_to_the_end(r) -> None:
    _setup(r, n=3, read=3)
    r.xnack("s", "g", "FAIL", "1-0", "2-0")
    assert r.xnack("s", "g", "FAIL", "1-0") == 1
    reply = r.xreadgroup("g", "bob", {"s": ">"}, claim_min_idle_time=3600000)
    assert [e[0] for e in reply[0][1]] == [b"2-0", b"1-0"]


def test_released_entries_can_be_claimed_acked_and_outlive_their_consumer(r) -> None:
    _setup(r, n=4, read=4)
    r.xnack("s", "g", "FAIL", "1-0", "2-0", "3-0")
    assert r.xgroup_delconsumer("s", "g", "alice") == 1  # only 4-0 was still alice's
    assert _full_group(r)[b"nacked-count"] == 3
    assert r.xclaim("s", "g", "bob", 3600000, ["1-0"], justid=True) == [b"1-0"]
    assert r.xautoclaim("s", "g", "carol", 3600000, "0-0", justid=True) == [b"2-0", b"3-0"]
    assert _full_group(r)[b"nacked-count"] == 0
    r.xnack("s", "g", "FAIL", "2-0")
    assert r.xack("s", "g", "2-0", "3-0") == 2
    assert _full_group(r)[b"nacked-count"] == 0
    assert _pending(r) == [(b"1-0", b"bob", 1)]  # JUSTID claims do not count deliveries


def test_xnack_resp3_and_raw_reply(server, r) -> None:
    _setup(r, n=2, read=2)
    assert resp3_reply_bytes(server.port, b"XNACK s g FAIL IDS 2 1-0 2-0\r\n") == b":2\r\n"
    conn = RawConnection(server.port)
    try:
        assert call_raw(conn, "XNACK", "s", "g", "FAIL", "IDS", "1", "7-0") == b":0\r\n"
    finally:
        conn.close()


def test_xnack_options_in_any_order(r) -> None:
    _setup(r, n=3, read=1)
    assert r.execute_command("XNACK", "s", "g", "fatal", "FORCE", "RETRYCOUNT", "4",
                             "ids", "2", "1-0", "3-0") == 2
    assert _pending(r) == [(b"1-0", b"", 4), (b"3-0", b"", 4)]


def test_xnack_errors(r) -> None:
    _setup(r, n=2, read=2)
    r.set("str", "x")
    cases = [
        (("XNACK", "s", "g", "LATER", "IDS", "1", "1-0"), "mode must be SILENT, FAIL, or FATAL"),
        (("XNACK", "s", "g", "FAIL", "IDS", "0", "1-0"), "Number of IDs must be a positive integer"),
        (("XNACK", "s", "g", "FAIL", "IDS", "-2", "1-0"), "Number of IDs must be a positive integer"),
        (("XNACK", "s", "g", "FAIL", "IDS", "x", "1-0"), "Number of IDs must be a positive integer"),
        (("XNACK", "s", "g", "FAIL", "IDS", "3", "1-0"),
         "The `numids` parameter must match the number of arguments"),
        (("XNACK", "s", "g", "FAIL", "IDS", "1", "1-0", "RETRYCOUNT", "-1"),
         "Invalid RETRYCOUNT option argument for XNACK"),
        (("XNACK", "s", "g", "FAIL", "IDS", "1", "1-0", "RETRYCOUNT", "x"),
         "Invalid RETRYCOUNT option argument for XNACK"),
        (("XNACK", "s", "g", "FAIL", "IDS", "1", "1-0", "BOGUS"), "syntax error"),
        (("XNACK", "s", "g", "FAIL", "FORCE", "RETRYCOUNT", "1"), "syntax error"),  # no IDS
        (("XNACK", "s", "g", "FAIL", "IDS", "2", "1-0", "nope"),
         "Invalid stream ID specified as stream command argument"),
        (("XNACK", "s", "nog", "FAIL", "IDS", "1", "1-0"),
         "NOGROUP No such key 's' or consumer group 'nog'"),
        (("XNACK", "nokey", "g", "FAIL", "IDS", "1", "1-0"),
         "NOGROUP No such key 'nokey' or consumer group 'g'"),
        (("XNACK", "str", "g", "FAIL", "IDS", "1", "1-0"),
         "WRONGTYPE Operation against a key holding the wrong kind of value"),
        (("XNACK", "s", "g", "FAIL", "IDS", "1"), "wrong number of arguments for 'xnack' command"),
    ]
    for argv, message in cases:
        assert err(r, *argv) == message, argv
    # A bad ID among good ones releases nothing.
    assert _pending(r) == [(b"1-0", b"alice", 1), (b"2-0", b"alice", 1)]


def test_command_docs_and_info(r) -> None:
    plain_r = redis.Redis(port=r.connection_pool.connection_kwargs["port"], protocol=2)
    plain_r.response_callbacks.clear()
    try:
        [info] = plain_r.execute_command("COMMAND", "INFO", "XNACK")
        assert info[:6] == [b"xnack", -7, [b"write", b"fast"], 1, 1, 1]
        assert set(info[6]) == {b"@write", b"@stream", b"@fast"}
        docs = as_map(plain_r.execute_command("COMMAND", "DOCS", "XNACK")[1])
        assert docs[b"since"] == b"8.8.0" and docs[b"group"] == b"stream"
        names = [as_map(a)[b"name"] for a in docs[b"arguments"]]
        assert names == [b"key", b"group", b"mode", b"ids", b"count", b"force"]
        xrg = as_map(plain_r.execute_command("COMMAND", "DOCS", "XREADGROUP")[1])
        args = [as_map(a) for a in xrg[b"arguments"]]
        assert [a.get(b"token") for a in args][:7] == [b"GROUP", b"COUNT", b"MAXCOUNT", b"MAXSIZE",
                                                       b"BLOCK", b"CLAIM", b"NOACK"]
        assert args[5][b"name"] == b"min-idle-time" and args[5][b"type"] == b"integer"
        assert [b"8.4.0", b"Added the `CLAIM` option."] in xrg[b"history"]
    finally:
        plain_r.close()


def test_copy_and_rename_keep_released_entries(r) -> None:
    _setup(r, n=3, read=3)
    r.xnack("s", "g", "FAIL", "2-0", "1-0")
    r.copy("s", "t")
    r.rename("s", "u")
    for key in ("t", "u"):
        assert _pending(r, key) == [(b"1-0", b"", 1), (b"2-0", b"", 1), (b"3-0", b"alice", 1)]
        reply = r.xreadgroup("g", "bob", {key: ">"}, claim_min_idle_time=3600000)
        assert [e[0] for e in reply[0][1]] == [b"2-0", b"1-0"]


# --- persistence ----------------------------------------------------------------------------------

def _state(port: int) -> Any:
    reader = hiredis.Reader()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"XINFO STREAM s FULL COUNT 0\r\n")
        while (reply := reader.gets()) is False:
            reader.feed(sock.recv(1 << 20))
    return strip_moving_fields(reply)


def _scenario(r: redis.Redis) -> None:
    _setup(r, n=8, read=6)
    _age(r, "alice", {"1-0": 50000, "2-0": 40000})
    r.xreadgroup("g", "bob", {"s": ">"}, count=3, claim_min_idle_time=30000)  # 1-0, 2-0, 7-0
    r.xnack("s", "g", "FATAL", "4-0")
    r.xnack("s", "g", "SILENT", "3-0")
    r.xack("s", "g", "5-0")
    r.xnack("s", "g", "FAIL", "5-0", force=True)
    r.xnack("s", "g", "FAIL", "4-0", retrycount=5)  # moved behind 3-0 and 5-0


def _check_resumes(r: redis.Redis) -> None:
    reply = r.xreadgroup("g", "dave", {"s": ">"}, claim_min_idle_time=3600000)
    assert [(e[0], e[3]) for e in reply[0][1]] == [(b"3-0", 0), (b"5-0", 1), (b"4-0", 5),
                                                   (b"8-0", 0)]


def test_claim_and_xnack_survive_restart_and_rewrite(server_factory) -> None:
    srv = server_factory()
    r = redis.Redis(port=srv.port)
    _scenario(r)
    before = _state(srv.port)
    assert _full_group(r)[b"nacked-count"] == 3
    srv2 = restart(srv)
    try:
        r = redis.Redis(port=srv2.port)
        assert _state(srv2.port) == before
        assert r.bgrewriteaof()
        deadline = time.monotonic() + 20
        while r.info("persistence")["aof_rewrites"] < 1 or \
                r.info("persistence")["aof_rewrite_in_progress"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        data = aof_path(srv2).read_bytes()
        assert b"XNACK" in data  # the rewrite recreates released records with XNACK
        assert _state(srv2.port) == before
    finally:
        srv2.stop()
    srv3 = ServerProcess(data_dir=srv2.dir, port=srv2.port).start()
    try:
        r = redis.Redis(port=srv3.port)
        assert _state(srv3.port) == before
        _check_resumes(r)
    finally:
        srv3.cleanup()


def test_claim_and_xnack_survive_kill_9(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    _scenario(r)
    before = _state(srv.port)
    srv.stop(signal.SIGKILL)
    srv2 = ServerProcess("--appendfsync", "always", data_dir=srv.dir, port=srv.port).start()
    try:
        r = redis.Redis(port=srv2.port)
        assert _state(srv2.port) == before
        _check_resumes(r)
    finally:
        srv2.cleanup()


def test_kill_9_under_claim_and_xnack_traffic(server_factory) -> None:
    """Consumers that CLAIM, XNACK and XACK while the server is killed: the state after the
    restart is whole (every record owned by a consumer that holds it, or released)."""
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    r.xgroup_create("s", "g", id="0", mkstream=True)
    pipe = r.pipeline(transaction=False)
    for i in range(1, 2001):
        pipe.xadd("s", {"n": str(i)}, id=f"{i}-0")
    pipe.execute()
    stop = threading.Event()
    errors: list[BaseException] = []

    def consume(name: str) -> None:
        # No retries: the kill ends the consumer at once.
        c = redis.Redis(port=srv.port, socket_timeout=5, retry=no_retry())
        try:
            k = 0
            while not stop.is_set():
                reply = c.xreadgroup("g", name, {"s": ">"}, count=5, claim_min_idle_time=0)
                if not reply:
                    continue
                ids = [e[0] for e in reply[0][1]]
                k += 1
                if k % 3 == 0:
                    c.xnack("s", "g", "FAIL", *ids[:2])
                elif k % 3 == 1:
                    c.xack("s", "g", *ids[:1])
        except (redis.ConnectionError, redis.TimeoutError, OSError):
            pass
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=consume, args=(f"c{i}",)) for i in range(2)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    srv.stop(signal.SIGKILL)
    stop.set()
    for t in threads:
        t.join(10)
    assert not errors, errors
    srv2 = ServerProcess("--appendfsync", "always", data_dir=srv.dir, port=srv.port).start()
    try:
        r = redis.Redis(port=srv2.port)
        g = _full_group(r)
        pel = g[b"pending"]
        # Every record is whole: owned records are in their owner's PEL, released ones in none,
        # and nacked-count counts exactly the ownerless ones.
        owners = {p[0]: p[1] for p in pel}
        ownerless = sum(1 for p in pel if p[1] == b"")
        assert g[b"nacked-count"] == ownerless
        for c in g[b"consumers"]:
            c = as_map(c)
            for p in c[b"pending"]:
                assert owners[p[0]] == c[b"name"]
        assert g[b"pel-count"] == len(pel)
        # And the group goes on: CLAIM 0 takes every pending record, then nothing is left over.
        reply = r.xreadgroup("g", "z", {"s": ">"}, claim_min_idle_time=0)
        got = [e[0] for e in reply[0][1]] if reply else []
        assert set(owners) <= set(got)
    finally:
        srv2.cleanup()
