"""XREAD / XREADGROUP MAXCOUNT and MAXSIZE (Redis 8.10): caps across all the streams of a call.

No Redis 8.10 runs here: the shapes follow redis.io's XREAD / XREADGROUP pages ("The MAXCOUNT
and MAXSIZE options") and the 8.10 implementation's rules (streams in the order named, MAXCOUNT
>= COUNT, MAXSIZE checked before each entry against the bytes already written).
"""

from __future__ import annotations

import os
import signal

import pytest
import redis

from tests.helpers import call_raw, encode_command, plain, read_reply, restart, wait_blocked
from tests.serverproc import RawConnection


def entry(eid: str, *fields: str) -> bytes:
    out = b"*2\r\n$%d\r\n%s\r\n*%d\r\n" % (len(eid), eid.encode(), len(fields))
    return out + b"".join(b"$%d\r\n%s\r\n" % (len(f), f.encode()) for f in fields)


def bulk(s: str) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(s), s.encode())


def reply(resp3: bool, streams: list[tuple[str, list[bytes]]]) -> bytes:
    """An XREAD reply: [[key, entries], ...] in RESP2, a key -> entries map in RESP3."""
    out = (b"%%%d\r\n" if resp3 else b"*%d\r\n") % len(streams)
    for key, entries in streams:
        out += (b"" if resp3 else b"*2\r\n") + bulk(key) + b"*%d\r\n" % len(entries)
        out += b"".join(entries)
    return out


@pytest.fixture(params=[False, True], ids=["resp2", "resp3"])
def conn(request, server, raw_r):
    c = RawConnection(server.port)
    if request.param:
        call_raw(c, "HELLO", "3")
    c.resp3 = request.param
    yield c
    c.close()


def fill(r: redis.Redis, key: str, n: int, value: str = "v") -> list[bytes]:
    """n entries key 1-1.. with field f, and their encodings."""
    out = []
    for i in range(1, n + 1):
        r.execute_command("XADD", key, f"{i}-1", "f", value)
        out.append(entry(f"{i}-1", "f", value))
    return out


def test_maxcount_spans_streams_in_order(raw_r, conn):
    r = raw_r
    s1, s2, s3 = fill(r, "s1", 3), fill(r, "s2", 3), fill(r, "s3", 3)
    got = call_raw(conn, "XREAD", "COUNT", 2, "MAXCOUNT", 3, "STREAMS", "s1", "s2", "s3", 0, 0, 0)
    assert got == reply(conn.resp3, [("s1", s1[:2]), ("s2", s2[:1])])
    # Without COUNT: the first stream takes what it has, the next the rest of the cap.
    got = call_raw(conn, "XREAD", "MAXCOUNT", 4, "STREAMS", "s1", "s2", "s3", 0, 0, 0)
    assert got == reply(conn.resp3, [("s1", s1), ("s2", s2[:1])])
    # A cap above what there is changes nothing.
    got = call_raw(conn, "XREAD", "MAXCOUNT", 100, "STREAMS", "s1", "s2", "s3", 0, 0, 0)
    assert got == reply(conn.resp3, [("s1", s1), ("s2", s2), ("s3", s3)])
    # Empty and missing streams spend nothing.
    got = call_raw(conn, "XREAD", "MAXCOUNT", 2, "STREAMS", "nokey", "s1", "s2", 0, "3-1", 0)
    assert got == reply(conn.resp3, [("s2", s2[:2])])
    nil = b"_\r\n" if conn.resp3 else b"*-1\r\n"
    assert call_raw(conn, "XREAD", "MAXCOUNT", 2, "STREAMS", "s1", "nokey", "$", 0) == nil


@pytest.mark.parametrize("cmd", ["XREAD", "XREADGROUP"])
def test_bad_values(raw_r, conn, cmd):
    r = raw_r
    r.execute_command("XADD", "s", "1-1", "f", "v")
    r.execute_command("XGROUP", "CREATE", "s", "g", "0")
    head = ["XREAD"] if cmd == "XREAD" else ["XREADGROUP", "GROUP", "g", "c"]
    tail = ["STREAMS", "s", ">" if cmd == "XREADGROUP" else "0"]
    cases = [
        (["MAXCOUNT", 0], b"-ERR MAXCOUNT must be positive\r\n"),
        (["MAXCOUNT", -1], b"-ERR MAXCOUNT must be positive\r\n"),
        (["MAXSIZE", 0], b"-ERR MAXSIZE must be positive\r\n"),
        (["MAXSIZE", -5], b"-ERR MAXSIZE must be positive\r\n"),
        (["MAXCOUNT", "x"], b"-ERR value is not an integer or out of range\r\n"),
        (["MAXSIZE", "1.5"], b"-ERR value is not an integer or out of range\r\n"),
        (["COUNT", 5, "MAXCOUNT", 4], b"-ERR MAXCOUNT must be greater than or equal to COUNT\r\n"),
        # COUNT given after MAXCOUNT is compared all the same
        (["MAXCOUNT", 4, "COUNT", 5], b"-ERR MAXCOUNT must be greater than or equal to COUNT\r\n"),
    ]
    for opts, error in cases:
        assert call_raw(conn, *head, *opts, *tail) == error, opts
    # Accepted: MAXCOUNT equal to COUNT, a COUNT of 0 or below (no per-stream cap).
    for opts in (["COUNT", 4, "MAXCOUNT", 4], ["COUNT", -3, "MAXCOUNT", 1], ["MAXSIZE", 1]):
        got = call_raw(conn, *head, *opts, "STREAMS", "s", "0")
        assert got.startswith((b"*1\r\n", b"%1\r\n")), opts
    # The values are checked before any key: a missing group does not come first.
    r.execute_command("SET", "str", "x")
    assert call_raw(conn, *head, "MAXCOUNT", 0, "STREAMS", "str", "0") == \
        b"-ERR MAXCOUNT must be positive\r\n"


def _budget(resp3: bool, streams: list[tuple[str, list[bytes]]], maxsize: int) -> list[int]:
    """How many entries of each stream a MAXSIZE reply holds: an entry goes while the bytes
    written before it are under maxsize (the first always goes); array lengths written once a
    stream is complete do not count, the RESP2 pair header and the key do."""
    used = emitted = 0
    taken = []
    for key, entries in streams:
        if emitted and used >= maxsize:
            break
        used += len(bulk(key)) + (0 if resp3 else 4)
        n = 0
        for e in entries:
            if emitted and used >= maxsize:
                break
            used += len(e)
            emitted += 1
            n += 1
        taken.append(n)
    return taken


def test_maxsize_cuts_between_entries(raw_r, conn):
    r = raw_r
    s1 = fill(r, "s1", 10, "x" * 20)
    s2 = fill(r, "s2", 10, "y" * 20)
    for maxsize in (1, 30, 100, 101, 250, 500, 700, 5000):
        taken = _budget(conn.resp3, [("s1", s1), ("s2", s2)], maxsize)
        expected = [(k, e[:n]) for (k, e), n in zip([("s1", s1), ("s2", s2)], taken, strict=False)]
        got = call_raw(conn, "XREAD", "MAXSIZE", maxsize, "STREAMS", "s1", "s2", 0, 0)
        assert got == reply(conn.resp3, expected), maxsize
    # MAXSIZE 1: just the first entry, whole.
    assert call_raw(conn, "XREAD", "MAXSIZE", 1, "STREAMS", "s1", "s2", 0, 0) == \
        reply(conn.resp3, [("s1", s1[:1])])


def test_maxsize_never_cuts_an_entry_and_serves_one_oversized(raw_r, conn):
    r = raw_r
    big = "z" * 10_000
    r.execute_command("XADD", "s", "1-1", "f", big)
    r.execute_command("XADD", "s", "2-1", "f", "small")
    got = call_raw(conn, "XREAD", "MAXSIZE", 100, "STREAMS", "s", 0)
    assert got == reply(conn.resp3, [("s", [entry("1-1", "f", big)])])
    got = call_raw(conn, "XREAD", "MAXSIZE", 100, "STREAMS", "s", "1-1")
    assert got == reply(conn.resp3, [("s", [entry("2-1", "f", "small")])])


def test_maxcount_and_maxsize_together_first_to_bind_wins(raw_r, conn):
    r = raw_r
    s1 = fill(r, "s1", 5, "v" * 50)
    got = call_raw(conn, "XREAD", "MAXCOUNT", 2, "MAXSIZE", 100000, "STREAMS", "s1", 0)
    assert got == reply(conn.resp3, [("s1", s1[:2])])
    got = call_raw(conn, "XREAD", "MAXCOUNT", 5, "MAXSIZE", 1, "STREAMS", "s1", 0)
    assert got == reply(conn.resp3, [("s1", s1[:1])])


def test_xreadgroup_new_entries_beyond_the_cap_stay_undelivered(raw_r, conn):
    r = raw_r
    for key in ("a", "b"):
        fill(r, key, 3)
        r.execute_command("XGROUP", "CREATE", key, "g", "0")
    got = call_raw(conn, "XREADGROUP", "GROUP", "g", "c1", "MAXCOUNT", 4,
                   "STREAMS", "a", "b", ">", ">")
    assert got == reply(conn.resp3, [("a", fill_enc(3)), ("b", fill_enc(1))])
    assert r.execute_command("XPENDING", "a", "g")[0] == 3
    assert r.execute_command("XPENDING", "b", "g")[:3] == [1, b"1-1", b"1-1"]
    info = {g[1]: g for g in r.execute_command("XINFO", "GROUPS", "b")}
    assert info[b"g"][7] == b"1-1"  # last-delivered-id
    # the rest goes to the next reader
    got = call_raw(conn, "XREADGROUP", "GROUP", "g", "c2", "STREAMS", "a", "b", ">", ">")
    assert got == reply(conn.resp3, [("b", fill_enc(3)[1:])])
    # MAXSIZE: the first entry only; nothing else enters the PEL.
    fill(r, "m", 5, "w" * 100)
    r.execute_command("XGROUP", "CREATE", "m", "g", "0")
    got = call_raw(conn, "XREADGROUP", "GROUP", "g", "c1", "MAXSIZE", 10, "STREAMS", "m", ">")
    assert got == reply(conn.resp3, [("m", [entry("1-1", "f", "w" * 100)])])
    assert r.execute_command("XPENDING", "m", "g")[0] == 1


def fill_enc(n: int, value: str = "v") -> list[bytes]:
    return [entry(f"{i}-1", "f", value) for i in range(1, n + 1)]


def test_xreadgroup_history_under_the_caps(raw_r, conn):
    r = raw_r
    for key in ("a", "b", "c"):
        fill(r, key, 3)
        r.execute_command("XGROUP", "CREATE", key, "g", "0")
    r.execute_command("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "a", "b", "c", ">", ">", ">")
    got = call_raw(conn, "XREADGROUP", "GROUP", "g", "c1", "COUNT", 2, "MAXCOUNT", 3,
                   "STREAMS", "a", "b", "c", 0, 0, 0)
    # a history read is in the reply even when empty, but the streams after the cap are not
    assert got == reply(conn.resp3, [("a", fill_enc(2)), ("b", fill_enc(1))])
    # only what was sent counts as delivered again
    counts = {p[0]: p[3] for p in r.execute_command("XPENDING", "b", "g", "-", "+", 10)}
    assert counts == {b"1-1": 2, b"2-1": 1, b"3-1": 1}
    counts = {p[0]: p[3] for p in r.execute_command("XPENDING", "c", "g", "-", "+", 10)}
    assert counts == {b"1-1": 1, b"2-1": 1, b"3-1": 1}
    # MAXSIZE on a history read: the first entry, then the cap holds
    got = call_raw(conn, "XREADGROUP", "GROUP", "g", "c1", "MAXSIZE", 1,
                   "STREAMS", "c", "a", 0, 0)
    assert got == reply(conn.resp3, [("c", fill_enc(1))])


def test_blocked_readers_are_served_under_their_caps(server, raw_r):
    r = raw_r
    r.execute_command("XGROUP", "CREATE", "s1", "g", "$", "MKSTREAM")
    reader = RawConnection(server.port)
    group_reader = RawConnection(server.port)
    try:
        reader.send(encode_command("XREAD", "MAXCOUNT", 2, "BLOCK", 0, "STREAMS", "s1", "$"))
        group_reader.send(encode_command("XREADGROUP", "GROUP", "g", "c", "MAXCOUNT", 2,
                                         "BLOCK", 0, "STREAMS", "s1", ">"))
        wait_blocked(r, 2)
        pipe = r.pipeline(transaction=True)
        for i in range(1, 4):
            pipe.execute_command("XADD", "s1", f"{i}-1", "f", "v")
        pipe.execute()
        expected = reply(False, [("s1", fill_enc(2))])
        assert read_reply(reader) == expected
        assert read_reply(group_reader) == expected
        assert r.execute_command("XPENDING", "s1", "g")[:3] == [2, b"1-1", b"2-1"]
    finally:
        reader.close()
        group_reader.close()


def test_command_docs_and_keys(raw_r):
    r = raw_r
    for name in ("xread", "xreadgroup"):
        docs = r.execute_command("COMMAND", "DOCS", name)
        doc = dict(zip(docs[1][::2], docs[1][1::2], strict=True))
        assert [b"8.10.0", b"Added the `MAXCOUNT` and `MAXSIZE` options."] in doc[b"history"]
        args = [dict(zip(a[::2], a[1::2], strict=True)) for a in doc[b"arguments"]]
        by_name = {a[b"name"]: a for a in args}
        for opt in (b"maxcount", b"maxsize"):
            assert by_name[opt][b"token"] == opt.upper()
            assert by_name[opt][b"since"] == b"8.10.0"
            assert by_name[opt][b"type"] == b"integer"
        names = [a[b"name"] for a in args]
        assert names.index(b"count") + 1 == names.index(b"maxcount")
        assert names.index(b"maxsize") + 1 == names.index(b"milliseconds")
    assert r.execute_command("COMMAND", "GETKEYS", "XREAD", "MAXCOUNT", 2, "MAXSIZE", 9,
                             "STREAMS", "k1", "k2", 0, 0) == [b"k1", b"k2"]
    assert r.execute_command("COMMAND", "GETKEYS", "XREADGROUP", "GROUP", "g", "c", "MAXCOUNT",
                             2, "STREAMS", "k1", ">") == [b"k1"]


def test_capped_group_reads_survive_kill_9(server_factory):
    srv = server_factory("--appendfsync", "always")
    r = plain(redis.Redis(port=srv.port))
    for key in ("a", "b"):
        fill(r, key, 4)
        r.execute_command("XGROUP", "CREATE", key, "g", "0")
    r.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", 3, "MAXCOUNT", 5,
                      "STREAMS", "a", "b", ">", ">")
    r.execute_command("XREADGROUP", "GROUP", "g", "c", "MAXSIZE", 1, "STREAMS", "a", "b", 0, 0)
    before = [r.execute_command("XPENDING", k, "g", "-", "+", 10) for k in ("a", "b")]
    groups = [r.execute_command("XINFO", "GROUPS", k) for k in ("a", "b")]
    os.kill(srv.proc.pid, signal.SIGKILL)
    srv.proc.wait()
    srv2 = restart(srv)
    try:
        r2 = plain(redis.Redis(port=srv2.port))
        after = [r2.execute_command("XPENDING", k, "g", "-", "+", 10) for k in ("a", "b")]
        # idle times moved on; IDs, owners and delivery counts are those before the kill
        assert [[p[:2] + p[3:] for p in x] for x in after] == \
            [[p[:2] + p[3:] for p in x] for x in before]
        assert [r2.execute_command("XINFO", "GROUPS", k) for k in ("a", "b")] == groups
        assert [len(x) for x in after] == [3, 2]
    finally:
        srv2.cleanup()


def test_maxsize_over_a_long_backlog(raw_r, conn):
    r = raw_r
    r.execute_command("CONFIG", "SET", "stream-node-max-entries", "7")
    try:
        entries = []
        for i in range(1, 301):
            value = "x" * (i % 37)
            r.execute_command("XADD", "s", f"{i}-1", "f", value)
            entries.append(entry(f"{i}-1", "f", value))
        r.execute_command("XGROUP", "CREATE", "s", "g", "0")
        for maxsize in (9, 700, 2500, 9000, 10**6):
            (n,) = _budget(conn.resp3, [("s", entries)], maxsize)
            got = call_raw(conn, "XREAD", "MAXSIZE", maxsize, "STREAMS", "s", 0)
            assert got == reply(conn.resp3, [("s", entries[:n])]), maxsize
        (n,) = _budget(conn.resp3, [("s", entries)], 2500)
        got = call_raw(conn, "XREADGROUP", "GROUP", "g", "c", "MAXSIZE", 2500, "STREAMS", "s", ">")
        assert got == reply(conn.resp3, [("s", entries[:n])])
        assert r.execute_command("XPENDING", "s", "g")[0] == n
        r.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
        # history: the same budget over the consumer's 300 pending entries
        (m,) = _budget(conn.resp3, [("s", entries)], 1200)
        got = call_raw(conn, "XREADGROUP", "GROUP", "g", "c", "MAXSIZE", 1200, "STREAMS", "s", 0)
        assert got == reply(conn.resp3, [("s", entries[:m])])
        counts = [p[3] for p in r.execute_command("XPENDING", "s", "g", "-", "+", 300)]
        assert counts == [2] * m + [1] * (300 - m)
    finally:
        r.execute_command("CONFIG", "SET", "stream-node-max-entries", "100")
