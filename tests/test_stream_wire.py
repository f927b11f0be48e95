"""The stream wire format against a real Redis: the same commands, the same reply bytes.

Every reply that carries entries (XRANGE, XREVRANGE, XREAD, XREADGROUP, XCLAIM, XINFO STREAM
FULL) is compared byte for byte, in RESP2 and RESP3, over streams stored in nodes of several
sizes, with deleted entries, entries whose fields differ from their node's, values whose length
takes more than one byte to store (over 127 bytes, over 16,383), binary and empty values, IDs
whose sequence numbers change digit count. Reads are paged the way clients page (exclusive
ranges, last ID), and each read is sent twice: Rivulet may serve the second from its cache of
encoded entries, which is also tried off and too small to keep anything.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
import redis

from tests.helpers import call_raw
from tests.serverproc import RawConnection

# (stream-node-max-entries, stream-node-max-bytes)
NODE_SIZES = [(100, 4096), (1, 4096), (3, 4096), (0, 256), (7, 0)]
BUDGETS = ["8mb", "0", "700"]


def _value(rnd: random.Random) -> bytes:
    kind = rnd.randrange(10)
    if kind == 0:
        return b""
    if kind == 1:
        return bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 40)))  # binary, CRLFs too
    if kind == 2:
        return b"\r\n" * rnd.randrange(1, 5) + b"%d%%s" + bytes([0x80, 0xFF, 0])
    if kind == 3:
        return b"x" * rnd.choice([127, 128, 129, 300, 16383, 16384, 20000])
    return b"%d" % rnd.randrange(100000)


def _fields(rnd: random.Random) -> list[bytes]:
    shape = rnd.randrange(10)
    if shape < 6:  # mostly the same fields, so that nodes store values only
        return [b"sensor-id", _value(rnd), b"temperature", _value(rnd)]
    if shape == 6:
        return [b"sensor-id", _value(rnd)]  # fewer fields
    if shape == 7:
        return [b"temperature", _value(rnd), b"sensor-id", _value(rnd)]  # same names, other order
    if shape == 8:
        return [b"", _value(rnd), b"%s\r\n", b""]  # empty and odd field names
    return [b"f%d" % k for k in range(rnd.randrange(1, 6)) for _ in range(2)]


def build_script(seed: int) -> list[tuple]:
    """Writes, then reads of every kind; deterministic IDs so both servers hold the same."""
    rnd = random.Random(seed)
    script: list[tuple] = []
    ms = 1_700_000_000_000
    seq = 0
    ids: list[bytes] = []
    for k in range(400):
        if k % 50 == 49:
            seq += 4090  # sequence numbers past the small ones, through 9 -> 10 digits and on
        step = rnd.randrange(4)
        if step == 0:
            ms += rnd.choice([1, 7, 999, 10**9])
            seq = 0
        else:
            seq += 1 if step < 3 else rnd.randrange(2, 200)
        eid = b"%d-%d" % (ms, seq)
        ids.append(eid)
        script.append(("XADD", "s", eid, *_fields(rnd)))
    script.append(("XADD", "s", b"18446744073709551615-18446744073709551614", b"sensor-id", b"max"))
    ids.append(b"18446744073709551615-18446744073709551614")
    script.append(("XADD", "t", "5-1", "a", "1"))
    script.append(("XADD", "t", "5-2", "a", "2", "b", "3"))
    script.append(("XGROUP", "CREATE", "s", "g", "0"))
    # Half the reads before deletions, half after.
    reads = _reads(ids)
    script += reads
    script.append(("XREADGROUP", "GROUP", "g", "alice", "COUNT", 150, "STREAMS", "s", ">"))
    for eid in rnd.sample(ids[:-1], 120):
        script.append(("XDEL", "s", eid))
    script.append(("XTRIM", "s", "MINID", ids[20]))
    script += reads
    script.append(("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"))  # deleted: nil
    script.append(("XREADGROUP", "GROUP", "g", "alice", "COUNT", 10, "STREAMS", "s", ids[140]))
    script.append(("XCLAIM", "s", "g", "bob", 0, *ids[150:170]))
    script.append(("XINFO", "STREAM", "s", "FULL", "COUNT", 30))
    return script


def _reads(ids: list[bytes]) -> list[tuple]:
    mid = ids[len(ids) // 2]
    out: list[tuple] = [
        ("XRANGE", "s", "-", "+"),
        ("XREVRANGE", "s", "+", "-"),
        ("XRANGE", "s", ids[10], mid, "COUNT", 37),
        ("XREVRANGE", "s", mid, ids[10], "COUNT", 41),
        ("XRANGE", "s", b"(" + ids[3], b"(" + ids[-3]),
        ("XREAD", "COUNT", 25, "STREAMS", "s", "t", ids[100], "0"),
        ("XREAD", "STREAMS", "s", "s", mid, ids[-5]),  # the same key twice
    ]
    # Paging: each page starts after the last ID of the one before.
    for count in (1000, 64, 1):
        for k in range(0, len(ids), count):
            low = "-" if k == 0 else b"(" + ids[k - 1]
            out.append(("XRANGE", "s", low, "+", "COUNT", count))
            high = "+" if k == 0 else b"(" + ids[-k]
            out.append(("XREVRANGE", "s", high, "-", "COUNT", count))
            if count == 1 and k > 30:
                break
    for k in range(0, len(ids), 64):
        out.append(("XREAD", "COUNT", 64, "STREAMS", "s", ids[k - 1] if k else "0"))
    return out


READS = {"XRANGE", "XREVRANGE", "XREAD"}


def run(port: int, script: list[tuple], resp3: bool) -> list[bytes]:
    """Each command's raw reply; reads are sent three times and must reply the same each time."""
    conn = RawConnection(port)
    try:
        if resp3:
            call_raw(conn, "HELLO", 3)  # the greeting itself differs between the servers
        call_raw(conn, "FLUSHALL")
        out = []
        for cmd in script:
            reply = call_raw(conn, *cmd)
            if cmd[0] in READS:
                for _ in range(2):
                    assert call_raw(conn, *cmd) == reply, cmd[:6]
            out.append(reply)
        return out
    finally:
        conn.close()


@pytest.fixture
def node_sizes(server, real_redis) -> Iterator[None]:
    yield
    for port in (server.port, real_redis.port):
        with redis.Redis(port=port) as c:
            c.config_set("stream-node-max-entries", 100)
            c.config_set("stream-node-max-bytes", 4096)
    with redis.Redis(port=server.port) as c:
        c.config_set("stream-read-cache-bytes", "8mb")


@pytest.mark.parametrize("resp3", [False, True], ids=["resp2", "resp3"])
@pytest.mark.parametrize("sizes", NODE_SIZES, ids=[f"{e}x{b}" for e, b in NODE_SIZES])
def test_entry_replies_match_redis(server, real_redis, node_sizes, sizes, resp3) -> None:
    script = build_script(seed=sizes[0] * 1000 + sizes[1])
    for port in (server.port, real_redis.port):
        with redis.Redis(port=port) as c:
            c.config_set("stream-node-max-entries", sizes[0])
            c.config_set("stream-node-max-bytes", sizes[1])
    theirs = run(real_redis.port, script, resp3)
    for budget in BUDGETS:
        with redis.Redis(port=server.port) as c:
            c.config_set("stream-read-cache-bytes", 0)  # empties the cache
            c.config_set("stream-read-cache-bytes", budget)
        ours = run(server.port, script, resp3)
        for cmd, mine, ref in zip(script, ours, theirs, strict=True):
            if cmd[0] == "XINFO":  # the radix tree's figures differ: compare the entries
                mine, ref = _entries_part(mine), _entries_part(ref)
                assert mine.startswith(b"*30\r\n")
            assert mine == ref, f"budget {budget}: {cmd[:6]!r}: rivulet {mine[:300]!r} != redis {ref[:300]!r}"


def _entries_part(reply: bytes) -> bytes:
    start = reply.index(b"\r\nentries\r\n") + len(b"\r\nentries\r\n")
    return reply[start:reply.index(b"\r\ngroups\r\n", start)]
