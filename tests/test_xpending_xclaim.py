"""XPENDING (summary and extended), XCLAIM, XAUTOCLAIM, and the consumer-group life cycle."""

from __future__ import annotations

import time

import pytest
import redis

from tests.helpers import add_entries, err, run_plain


def setup(r: redis.Redis, n: int = 4, key: str = "s") -> None:
    """n entries 1-1..1-n; group g; alice got the first half, bob the rest."""
    add_entries(r, key, n)
    r.execute_command("XGROUP", "CREATE", key, "g", "0")
    r.execute_command("XREADGROUP", "GROUP", "g", "alice", "COUNT", str(n // 2), "STREAMS", key, ">")
    r.execute_command("XREADGROUP", "GROUP", "g", "bob", "STREAMS", key, ">")


def pending(r: redis.Redis, *args) -> list:
    return r.execute_command("XPENDING", "s", "g", *args)


# --- XPENDING ---------------------------------------------------------------------------------


def test_summary(raw_rc):
    setup(raw_rc)
    assert pending(raw_rc) == [4, b"1-1", b"1-4", [[b"alice", b"2"], [b"bob", b"2"]]]
    raw_rc.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "idle")
    raw_rc.execute_command("XACK", "s", "g", "1-1", "1-2")
    # consumers without pending entries are left out
    assert pending(raw_rc) == [2, b"1-3", b"1-4", [[b"bob", b"2"]]]
    raw_rc.execute_command("XACK", "s", "g", "1-3", "1-4")
    assert pending(raw_rc) == [0, None, None, None]


def test_summary_bytes(raw, raw_r):
    setup(raw_r)
    raw.send(b"XPENDING s g\r\n")
    expected = (b"*4\r\n:4\r\n$3\r\n1-1\r\n$3\r\n1-4\r\n*2\r\n*2\r\n$5\r\nalice\r\n$1\r\n2\r\n"
                b"*2\r\n$3\r\nbob\r\n$1\r\n2\r\n")
    assert raw.read_exactly(len(expected)) == expected
    raw_r.execute_command("XACK", "s", "g", "1-1", "1-2", "1-3", "1-4")
    raw.send(b"XPENDING s g\r\n")
    expected = b"*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n"
    assert raw.read_exactly(len(expected)) == expected


def test_extended_rows_and_ranges(raw_rc):
    setup(raw_rc)
    rows = pending(raw_rc, "-", "+", "10")
    assert [(row[0], row[1], row[3]) for row in rows] == [
        (b"1-1", b"alice", 1), (b"1-2", b"alice", 1), (b"1-3", b"bob", 1), (b"1-4", b"bob", 1)]
    assert all(isinstance(row[2], int) and 0 <= row[2] < 5000 for row in rows)
    assert [row[0] for row in pending(raw_rc, "-", "+", "10", "alice")] == [b"1-1", b"1-2"]
    assert pending(raw_rc, "-", "+", "10", "nobody") == []
    assert [row[0] for row in pending(raw_rc, "-", "+", "2")] == [b"1-1", b"1-2"]
    assert pending(raw_rc, "-", "+", "0") == []
    assert pending(raw_rc, "-", "+", "-1") == []
    assert [row[0] for row in pending(raw_rc, "1-2", "1-3", "10")] == [b"1-2", b"1-3"]
    # exclusive intervals
    assert [row[0] for row in pending(raw_rc, "(1-1", "(1-4", "10")] == [b"1-2", b"1-3"]
    assert pending(raw_rc, "1-3", "1-2", "10") == []
    assert [row[0] for row in pending(raw_rc, "1", "1", "10")] == [b"1-1", b"1-2", b"1-3", b"1-4"]


def test_extended_idle_filter(raw_rc):
    setup(raw_rc)
    time.sleep(0.03)
    assert pending(raw_rc, "IDLE", "99999999", "-", "+", "10", "alice") == []
    assert len(pending(raw_rc, "IDLE", "20", "-", "+", "10", "alice")) == 2
    assert pending(raw_rc, "IDLE", "99999999", "-", "+", "10") == []
    assert len(pending(raw_rc, "idle", "1", "-", "+", "10")) == 4
    # a re-delivery resets the idle time
    raw_rc.execute_command("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0")
    assert [row[0] for row in pending(raw_rc, "IDLE", "20", "-", "+", "10")] == [b"1-3", b"1-4"]
    row = pending(raw_rc, "-", "+", "1")[0]
    assert row[3] == 2


@pytest.mark.parametrize(("args", "message"), [
    (("-", "+"), "syntax error"),
    (("-",), "syntax error"),
    (("-", "+", "10", "c", "x", "y", "z"), "syntax error"),
    (("IDLE", "10", "-", "+"), "syntax error"),
    (("IDLE", "x", "-", "+", "1"), "value is not an integer or out of range"),
    (("-", "+", "x"), "value is not an integer or out of range"),
    (("x", "+", "1"), "Invalid stream ID specified as stream command argument"),
    (("-", "x", "1"), "Invalid stream ID specified as stream command argument"),
    (("(18446744073709551615-18446744073709551615", "+", "1"), "invalid start ID for the interval"),
    (("-", "(0-0", "1"), "invalid end ID for the interval"),
    (("(-", "+", "1"), "Invalid stream ID specified as stream command argument"),
])
def test_extended_errors_come_before_the_key(raw_r, args, message):
    assert err(raw_r, "XPENDING", "nokey", "nog", *args) == message


def test_missing_key_or_group(raw_r):
    setup(raw_r)
    raw_r.set("str", "x")
    assert err(raw_r, "XPENDING", "nokey", "g") == "NOGROUP No such key 'nokey' or consumer group 'g'"
    assert err(raw_r, "XPENDING", "s", "nog", "-", "+", "1") == "NOGROUP No such key 's' or consumer group 'nog'"
    assert err(raw_r, "XPENDING", "str", "g") == "WRONGTYPE Operation against a key holding the wrong kind of value"
    assert err(raw_r, "XPENDING", "s") == "wrong number of arguments for 'xpending' command"


def test_extra_arguments_after_consumer_are_ignored(raw_r):
    setup(raw_r)
    # Redis accepts up to 9 arguments and ignores what follows the consumer
    assert [row[0] for row in pending(raw_r, "-", "+", "10", "alice", "junk")] == [b"1-1", b"1-2"]
    assert [row[0] for row in pending(raw_r, "IDLE", "0", "-", "+", "10", "bob")] == [b"1-3", b"1-4"]


# --- XCLAIM -----------------------------------------------------------------------------------


def test_xclaim_moves_ownership_and_counts_deliveries(raw_rc):
    setup(raw_rc)
    got = raw_rc.execute_command("XCLAIM", "s", "g", "carol", "0", "1-1", "1-3")
    assert got == [[b"1-1", [b"f", b"1"]], [b"1-3", [b"f", b"3"]]]
    assert pending(raw_rc) == [4, b"1-1", b"1-4", [[b"alice", b"1"], [b"bob", b"1"], [b"carol", b"2"]]]
    rows = {row[0]: row for row in pending(raw_rc, "-", "+", "10")}
    assert rows[b"1-1"][1] == b"carol" and rows[b"1-1"][3] == 2
    # JUSTID: IDs only and no delivery count increment
    assert raw_rc.execute_command("XCLAIM", "s", "g", "dave", "0", "1-1", "JUSTID") == [b"1-1"]
    rows = {row[0]: row for row in pending(raw_rc, "-", "+", "10")}
    assert rows[b"1-1"][1] == b"dave" and rows[b"1-1"][3] == 2
    # an ID that is not pending is ignored; the consumer is created anyway
    assert raw_rc.execute_command("XCLAIM", "s", "g", "erin", "0", "9-9") == []
    consumers = raw_rc.execute_command("XINFO", "CONSUMERS", "s", "g")
    assert len(consumers) == 5


def test_xclaim_min_idle(raw_rc):
    setup(raw_rc)
    assert raw_rc.execute_command("XCLAIM", "s", "g", "carol", "3600000", "1-1") == []
    time.sleep(0.03)
    assert raw_rc.execute_command("XCLAIM", "s", "g", "carol", "20", "1-1", "JUSTID") == [b"1-1"]
    # claiming reset the idle time: a second claim with the same min-idle fails
    assert raw_rc.execute_command("XCLAIM", "s", "g", "dave", "20", "1-1", "JUSTID") == []
    assert raw_rc.execute_command("XCLAIM", "s", "g", "dave", "-5", "1-1", "JUSTID") == [b"1-1"]


def test_xclaim_options(raw_r):
    setup(raw_r)
    before = int(time.time() * 1000)
    raw_r.execute_command("XCLAIM", "s", "g", "carol", "0", "1-1", "IDLE", "500000", "RETRYCOUNT", "7")
    row = pending(raw_r, "1-1", "1-1", "1")[0]
    assert row[1] == b"carol" and row[3] == 7 and 500000 <= row[2] < 510000
    raw_r.execute_command("XCLAIM", "s", "g", "carol", "0", "1-2", "TIME", str(before - 100000), "JUSTID")
    row = pending(raw_r, "1-2", "1-2", "1")[0]
    assert 100000 <= row[2] < 110000 and row[3] == 1
    # a TIME in the future is replaced by now
    raw_r.execute_command("XCLAIM", "s", "g", "carol", "0", "1-2", "TIME", str(before + 10**9), "JUSTID")
    assert pending(raw_r, "1-2", "1-2", "1")[0][2] < 5000
    # LASTID raises the group's last-delivered-id, never lowers it
    raw_r.execute_command("XCLAIM", "s", "g", "carol", "0", "1-2", "LASTID", "5-5")
    info = raw_r.execute_command("XINFO", "GROUPS", "s")[0]
    assert info[info.index(b"last-delivered-id") + 1] == b"5-5"
    raw_r.execute_command("XCLAIM", "s", "g", "carol", "0", "1-2", "LASTID", "1-0")
    info = raw_r.execute_command("XINFO", "GROUPS", "s")[0]
    assert info[info.index(b"last-delivered-id") + 1] == b"5-5"


def test_xclaim_force(raw_r):
    for i in (1, 2):
        raw_r.execute_command("XADD", "s", f"1-{i}", "f", str(i))
    raw_r.execute_command("XGROUP", "CREATE", "s", "g", "$")
    assert raw_r.execute_command("XCLAIM", "s", "g", "c", "0", "1-1", "JUSTID") == []
    assert raw_r.execute_command("XCLAIM", "s", "g", "c", "3600000", "1-1", "9-9", "FORCE", "JUSTID") == [b"1-1"]
    assert pending(raw_r) == [1, b"1-1", b"1-1", [[b"c", b"1"]]]


def test_xclaim_with_xdel_and_trimming(raw_r):
    # stream-cgroups.tcl "XCLAIM with XDEL" / "XCLAIM with trimming"
    for i in (1, 2, 3):
        raw_r.execute_command("XADD", "x", f"{i}-0", "f", "v")
    raw_r.execute_command("XGROUP", "CREATE", "x", "grp", "0")
    raw_r.execute_command("XREADGROUP", "GROUP", "grp", "Alice", "STREAMS", "x", ">")
    raw_r.execute_command("XDEL", "x", "2-0")
    assert raw_r.execute_command("XCLAIM", "x", "grp", "Bob", "0", "1-0", "2-0", "3-0") == \
        [[b"1-0", [b"f", b"v"]], [b"3-0", [b"f", b"v"]]]
    assert raw_r.execute_command("XPENDING", "x", "grp", "-", "+", "10", "Alice") == []
    # the deleted entry left the PEL
    assert raw_r.execute_command("XPENDING", "x", "grp")[0] == 2


@pytest.mark.parametrize(("args", "message"), [
    (("x", "1-1"), "Invalid min-idle-time argument for XCLAIM"),
    (("0", "1-1", "IDLE", "x"), "Invalid IDLE option argument for XCLAIM"),
    (("0", "1-1", "TIME", "x"), "Invalid TIME option argument for XCLAIM"),
    (("0", "1-1", "RETRYCOUNT", "x"), "Invalid RETRYCOUNT option argument for XCLAIM"),
    (("0", "1-1", "LASTID", "x"), "Invalid stream ID specified as stream command argument"),
    (("0", "1-1", "BAR"), "Unrecognized XCLAIM option 'BAR'"),
    (("0", "1-1", "JUSTID", "1-2"), "Unrecognized XCLAIM option '1-2'"),
    (("0", "1-1", "IDLE"), "Unrecognized XCLAIM option 'IDLE'"),
])
def test_xclaim_errors(raw_r, args, message):
    setup(raw_r)
    assert err(raw_r, "XCLAIM", "s", "g", "carol", *args) == message
    assert len(raw_r.execute_command("XINFO", "CONSUMERS", "s", "g")) == 2  # nothing happened


def test_xclaim_missing_key_or_group_first(raw_r):
    setup(raw_r)
    assert err(raw_r, "XCLAIM", "nokey", "g", "c", "x", "1-1") == "NOGROUP No such key 'nokey' or consumer group 'g'"
    assert err(raw_r, "XCLAIM", "s", "nog", "c", "x", "1-1") == "NOGROUP No such key 's' or consumer group 'nog'"
    assert err(raw_r, "XCLAIM", "s", "g", "c", "0") == "wrong number of arguments for 'xclaim' command"


# --- XAUTOCLAIM -------------------------------------------------------------------------------


def test_xautoclaim(raw_rc):
    setup(raw_rc)
    got = raw_rc.execute_command("XAUTOCLAIM", "s", "g", "carol", "0", "0-0", "COUNT", "1")
    assert got == [b"1-2", [[b"1-1", [b"f", b"1"]]], []]
    got = raw_rc.execute_command("XAUTOCLAIM", "s", "g", "carol", "0", got[0], "COUNT", "2", "JUSTID")
    assert got == [b"1-4", [b"1-2", b"1-3"], []]
    got = raw_rc.execute_command("XAUTOCLAIM", "s", "g", "carol", "0", got[0])
    assert got == [b"0-0", [[b"1-4", [b"f", b"4"]]], []]
    assert pending(raw_rc) == [4, b"1-1", b"1-4", [[b"carol", b"4"]]]
    rows = {row[0]: row[3] for row in pending(raw_rc, "-", "+", "10")}
    assert rows == {b"1-1": 2, b"1-2": 1, b"1-3": 1, b"1-4": 2}  # JUSTID did not count
    assert raw_rc.execute_command("XAUTOCLAIM", "s", "g", "dave", "3600000", "-") == [b"0-0", [], []]
    assert raw_rc.execute_command("XAUTOCLAIM", "s", "g", "dave", "0", "(1-3", "JUSTID") == [b"0-0", [b"1-4"], []]


def test_xautoclaim_with_xdel_and_count(raw_r):
    # stream-cgroups.tcl "XAUTOCLAIM with XDEL and count"
    for i in (1, 2, 3):
        raw_r.execute_command("XADD", "x", f"{i}-0", "f", "v")
    raw_r.execute_command("XGROUP", "CREATE", "x", "grp", "0")
    raw_r.execute_command("XREADGROUP", "GROUP", "grp", "Alice", "STREAMS", "x", ">")
    raw_r.execute_command("XDEL", "x", "1-0")
    raw_r.execute_command("XDEL", "x", "2-0")
    assert raw_r.execute_command("XAUTOCLAIM", "x", "grp", "Bob", "0", "0-0", "COUNT", "1") == [b"2-0", [], [b"1-0"]]
    assert raw_r.execute_command("XAUTOCLAIM", "x", "grp", "Bob", "0", "2-0", "COUNT", "1") == [b"3-0", [], [b"2-0"]]
    assert raw_r.execute_command("XAUTOCLAIM", "x", "grp", "Bob", "0", "3-0", "COUNT", "1") == \
        [b"0-0", [[b"3-0", [b"f", b"v"]]], []]
    assert raw_r.execute_command("XPENDING", "x", "grp", "-", "+", "10", "Alice") == []


@pytest.mark.parametrize(("args", "message"), [
    (("1", "1", "COUNT", "0"), "COUNT must be > 0"),
    (("1", "1", "COUNT", "x"), "COUNT must be > 0"),
    (("1", "1", "COUNT", "8070450532247928833"), "COUNT must be > 0"),
    (("x", "1"), "Invalid min-idle-time argument for XAUTOCLAIM"),
    (("1", "x"), "Invalid stream ID specified as stream command argument"),
    (("1", "(18446744073709551615-18446744073709551615"), "invalid start ID for the interval"),
    (("1", "1", "FOO"), "syntax error"),
    (("1", "1", "COUNT"), "syntax error"),
])
def test_xautoclaim_errors_before_key(raw_r, args, message):
    assert err(raw_r, "XAUTOCLAIM", "key", "group", "consumer", *args) == message


def test_xautoclaim_missing_key_or_group(raw_r):
    setup(raw_r)
    assert err(raw_r, "XAUTOCLAIM", "nokey", "g", "c", "0", "0") == "NOGROUP No such key 'nokey' or consumer group 'g'"
    assert err(raw_r, "XAUTOCLAIM", "s", "nog", "c", "0", "0") == "NOGROUP No such key 's' or consumer group 'nog'"


def test_xautoclaim_bytes(raw, raw_r):
    setup(raw_r, 2)
    raw.send(b"XAUTOCLAIM s g c 0 0 JUSTID\r\n")
    expected = b"*3\r\n$3\r\n0-0\r\n*2\r\n$3\r\n1-1\r\n$3\r\n1-2\r\n*0\r\n"
    assert raw.read_exactly(len(expected)) == expected


# --- the consumer-group life cycle ------------------------------------------------------------


def test_crash_and_recovery_scenario(raw_rc):
    """The design's story: workers read, one crashes, the PEL shows what it held, another worker
    claims it after it went idle, processes and acknowledges it."""
    r = raw_rc
    r.execute_command("XGROUP", "CREATE", "orders", "workers", "$", "MKSTREAM")
    for i in range(1, 7):
        r.execute_command("XADD", "orders", f"100-{i}", "order", str(i))
    a = r.execute_command("XREADGROUP", "GROUP", "workers", "w1", "COUNT", "3", "STREAMS", "orders", ">")
    b = r.execute_command("XREADGROUP", "GROUP", "workers", "w2", "COUNT", "3", "STREAMS", "orders", ">")
    a = a[b"orders"] if isinstance(a, dict) else a[0][1]
    b = b[b"orders"] if isinstance(b, dict) else b[0][1]
    assert [e[0] for e in a] == [b"100-1", b"100-2", b"100-3"]
    assert [e[0] for e in b] == [b"100-4", b"100-5", b"100-6"]
    # w2 processes its work; w1 acknowledges one entry and crashes
    assert r.execute_command("XACK", "orders", "workers", *[e[0] for e in b]) == 3
    assert r.execute_command("XACK", "orders", "workers", "100-1") == 1
    summary = r.execute_command("XPENDING", "orders", "workers")
    assert summary == [2, b"100-2", b"100-3", [[b"w1", b"2"]]]
    time.sleep(0.03)
    stale = r.execute_command("XPENDING", "orders", "workers", "IDLE", "20", "-", "+", "10")
    assert [(row[0], row[1], row[3]) for row in stale] == [(b"100-2", b"w1", 1), (b"100-3", b"w1", 1)]
    claimed = r.execute_command("XCLAIM", "orders", "workers", "w2", "20", *[row[0] for row in stale])
    assert claimed == [[b"100-2", [b"order", b"2"]], [b"100-3", [b"order", b"3"]]]
    # a second rescuer racing for the same entries gets nothing: they are no longer idle
    assert r.execute_command("XCLAIM", "orders", "workers", "w3", "20", "100-2", "100-3") == []
    rows = r.execute_command("XPENDING", "orders", "workers", "-", "+", "10", "w2")
    assert [(row[0], row[3]) for row in rows] == [(b"100-2", 2), (b"100-3", 2)]
    # w1 comes back and reads its history: empty now
    hist = r.execute_command("XREADGROUP", "GROUP", "workers", "w1", "STREAMS", "orders", "0")
    assert (hist[b"orders"] if isinstance(hist, dict) else hist[0][1]) == []
    assert r.execute_command("XACK", "orders", "workers", "100-2", "100-3") == 2
    assert r.execute_command("XPENDING", "orders", "workers") == [0, None, None, None]
    assert r.execute_command("XGROUP", "DELCONSUMER", "orders", "workers", "w1") == 0


# --- differential -----------------------------------------------------------------------------

SCRIPT = [
    ("XADD", "s", "1-1", "a", "1"),
    ("XADD", "s", "1-2", "b", "2"),
    ("XADD", "s", "1-3", "c", "3"),
    ("XADD", "s", "1-4", "d", "4"),
    ("XGROUP", "CREATE", "s", "g", "0"),
    ("XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"),
    ("XPENDING", "s", "g"),
    ("XPENDING", "s", "g", "IDLE", "99999999", "-", "+", "10"),
    ("XPENDING", "s", "g", "-", "+", "10", "nobody"),
    ("XPENDING", "s", "g", "-", "+"),
    ("XPENDING", "s", "g", "x", "+", "1"),
    ("XPENDING", "s", "nog"),
    ("XCLAIM", "s", "g", "carol", "0", "1-1", "1-3", "JUSTID"),
    ("XCLAIM", "s", "g", "carol", "0", "1-2", "RETRYCOUNT", "5", "JUSTID"),
    ("XCLAIM", "s", "g", "carol", "0", "1-2", "BAR"),
    ("XCLAIM", "s", "g", "carol", "x", "1-2"),
    ("XCLAIM", "s", "g", "carol", "0", "1-2", "IDLE", "x"),
    ("XCLAIM", "s", "nog", "carol", "0", "1-2"),
    ("XDEL", "s", "1-4"),
    ("XAUTOCLAIM", "s", "g", "dave", "0", "0", "COUNT", "2", "JUSTID"),
    ("XAUTOCLAIM", "s", "g", "dave", "0", "1-3"),
    ("XAUTOCLAIM", "s", "g", "dave", "0", "0", "COUNT", "0"),
    ("XAUTOCLAIM", "s", "g", "dave", "0", "0", "FOO"),
    ("XAUTOCLAIM", "s", "nog", "dave", "0", "0"),
    ("XPENDING", "s", "g"),
    ("XACK", "s", "g", "1-1", "1-2", "1-3"),
    ("XPENDING", "s", "g"),
]


def test_differential_against_real_redis(server, real_redis):
    ours, theirs = run_plain(server.port, SCRIPT), run_plain(real_redis.port, SCRIPT)
    for argv, a, b in zip(SCRIPT, ours, theirs, strict=True):
        assert a == b, argv
