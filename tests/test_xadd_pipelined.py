"""Pipelined XADDs: a run of `XADD key * ...` read at once is added by one batch (xadd_run,
Stream.add_many, Node.fill). Everything a client, the AOF or a blocked reader can see must be what
the same XADDs sent one by one give."""

from __future__ import annotations

import random
import re
import threading

import pytest
import redis

from protocol.stream_resp import id_run_reply
from streams import Stream, format_id
from streams.storage import EntryStore
from tests.helpers import (
    aof_path,
    encode_command,
    parse_aof,
    restart,
    run_pipelined,
    wait_blocked,
    xinfo_stream,
)
from tests.serverproc import RawConnection

BULK_ID = re.compile(rb"\$\d+\r\n(\d+)-(\d+)\r\n")


def pipeline_raw(port: int, commands: list[tuple], replies: int) -> list[bytes]:
    """Send every command in one write; return the reply lines, one reply per command (the
    replies used here are one line each, or a bulk string: two lines joined)."""
    conn = RawConnection(port)
    try:
        conn.send(b"".join(encode_command(*c) for c in commands))
        out = []
        while len(out) < replies:
            line = _line(conn)
            if line.startswith(b"$") and line != b"$-1\r\n":
                line += _line(conn)
            out.append(line)
        return out
    finally:
        conn.close()


def _line(conn: RawConnection) -> bytes:
    line = b""
    while not line.endswith(b"\r\n"):
        line += conn.read_exactly(1)
    return line


def _ids(replies: list[bytes]) -> list[tuple[int, int]]:
    ids = []
    for reply in replies:
        m = BULK_ID.fullmatch(reply)
        assert m, reply
        ids.append((int(m[1]), int(m[2])))
    return ids


# --- the engine: add_many builds the very nodes add does --------------------------------------------


def _nodes(s: Stream | EntryStore) -> list[tuple]:
    store = s.store if isinstance(s, Stream) else s
    return [(bytes(n.data), list(n.msd), list(n.seq), list(n.offs), n.fields, n.live, n.ms0)
            for n in store.nodes]


@pytest.mark.parametrize("limits", [(100, 4096), (10, 4096), (0, 120), (3, 0)])
def test_add_many_builds_the_same_nodes_as_add(limits: tuple[int, int]) -> None:
    # Mostly the master entry's field, some other fields of the same count, some of another.
    entries = [[b"f", b"v%d" % i] if i % 7 and i % 11 else [b"z", b"w"] if i % 7
               else [b"g", b"x" * (i * 13 % 300), b"h", b""] for i in range(250)]
    one = Stream(*limits)
    for fields in entries:
        one.add(fields, now_ms=5)
    many = Stream(*limits)
    ids = []
    for at in range(0, len(entries), 16):
        ids += many.add_many(entries[at:at + 16], now_ms=5)
    assert ids == [eid for eid, _ in one.range()]
    assert _nodes(many) == _nodes(one)
    assert (many.length, many.first_id, many.last_id, many.entries_added) == \
        (one.length, one.first_id, one.last_id, one.entries_added)
    assert many.range() == one.range()


@pytest.mark.parametrize("limits", [(100, 4096), (7, 4096), (0, 90)])
def test_extend_with_any_ascending_ids_builds_the_same_nodes(limits: tuple[int, int]) -> None:
    # Gaps, millisecond changes, sequences past 32 bits, fields of another shape.
    rng = random.Random(7)
    eids, entries, eid = [], [], 5 << 64
    for i in range(300):
        eid += rng.choice([1, 1, 1, 2, 1 << 64, (1 << 33), 1000 << 64])
        eids.append(eid)
        fields = [b"f", b"%d" % i] if i % 3 else [b"f", b"x" * (i % 200), b"g", b"y"]
        entries.append(fields)
    one = EntryStore(*limits)
    for eid, fields in zip(eids, entries, strict=True):
        one.append(eid, fields)
    many = EntryStore(*limits)
    for at in range(0, len(eids), 16):
        chunk = entries[at:at + 16]
        assert many.extend(0, eids[at:at + 16], chunk, 0, 0, len(chunk)) == len(chunk)
    assert _nodes(many) == _nodes(one) and many.length == one.length == 300


@pytest.mark.parametrize("first_seq", [0, 65_000, 65_530, (1 << 32) - 40, 1 << 40])
@pytest.mark.parametrize("ms", [5, 5 + (1 << 33)])
def test_extend_of_one_millisecond_builds_the_same_nodes(first_seq: int, ms: int) -> None:
    # Consecutive IDs of one millisecond (what XADD * makes), numbered from where the counted
    # sequence numbers end, past 32 bits, and in a node whose millisecond delta is past 32 bits.
    entries = [[b"f", b"%d" % i] if i % 5 else [b"g", b"x" * (i % 300)] for i in range(200)]
    base = (5 << 64) | 1  # the first node's master ID: ms is a delta from it
    one = EntryStore(50, 0)
    one.append(base, [b"f", b"0"])
    many = EntryStore(50, 0)
    many.append(base, [b"f", b"0"])
    first = (ms << 64) | first_seq
    for i, fields in enumerate(entries):
        one.append(first + i, fields)
    for at in range(0, len(entries), 64):
        chunk = entries[at:at + 64]
        assert many.extend(first + at, None, chunk, 0, 0, len(chunk)) == len(chunk)
    assert _nodes(many) == _nodes(one) and many.length == one.length == 201


@pytest.mark.parametrize("limits", [(100, 4096), (10, 4096), (0, 120), (0, 0)])
def test_add_run_of_argvs_builds_the_same_nodes_as_add(limits: tuple[int, int]) -> None:
    # What a transaction's XADDs give it: thousands of entries in one millisecond (sequence
    # numbers past any table), fields read from each argv at index 3, values of every length
    # class (one-byte and longer lengths), field names that are not the master entry's.
    argvs = []
    for i in range(5000):
        fields = ([b"sensor", b"sensor-%d" % (i % 10), b"seq", b"%d" % i, b"t", b"20.5"]
                  if i % 97 else [b"other", b"x" * (i % 300)])
        argvs.append([b"XADD", b"k", b"*", *fields])
    one = Stream(*limits)
    for argv in argvs:
        one.add(argv[3:], now_ms=7)
    many = Stream(*limits)
    done = 0
    for start in range(0, len(argvs), 1500):
        end = min(start + 1500, len(argvs))
        added = many.add_run(argvs, 3, start, end, now_ms=7)
        assert added == end - start
        done += added
    assert many.last_id == one.last_id == (7 << 64) + 4999
    assert _nodes(many) == _nodes(one)
    assert (many.length, many.first_id, many.entries_added) == \
        (one.length, one.first_id, one.entries_added)
    assert many.range() == one.range()


def test_add_run_stops_before_an_entry_too_large(monkeypatch) -> None:
    import streams.storage
    import streams.stream

    if not streams.stream.__file__.endswith(".py"):
        pytest.skip("MAX_NODE_SIZE is a compiled constant here: the pure-Python build tests this limit")
    monkeypatch.setattr(streams.storage, "MAX_NODE_SIZE", 100)
    argvs = [[b"XADD", b"k", b"*", b"f", b"v"]] * 5 + [[b"XADD", b"k", b"*", b"f", b"x" * 200]]
    s = Stream()
    assert s.add_run(argvs, 3, 0, len(argvs), now_ms=3) == 5
    assert s.length == 5 and s.last_id == (3 << 64) + 4


def test_add_many_after_deletes_and_a_slower_clock() -> None:
    s = Stream(10, 4096)
    s.add([b"f", b"v"], now_ms=1000)
    s.add([b"f", b"v"], now_ms=1000)
    s.delete([s.last_id])  # a tombstone in the tail node: fill leaves it to append
    ids = s.add_many([[b"f", b"%d" % i] for i in range(30)], now_ms=10)  # clock went back
    assert ids == list(range((1000 << 64) + 2, (1000 << 64) + 32))
    assert [eid for eid, _ in s.range()] == [1000 << 64] + ids
    assert s.length == 31 and s.entries_added == 32


def test_add_many_stops_where_ids_run_out() -> None:
    s = Stream()
    s.add([b"f", b"v"], now_ms=0, id=MAX_ID - 2)
    assert s.add_many([[b"f", b"v"]] * 5, now_ms=1) == [MAX_ID - 1, MAX_ID]
    assert s.add_many([[b"f", b"v"]], now_ms=1) == []
    assert s.length == 3


MAX_ID = (1 << 128) - 1


@pytest.mark.parametrize("seq", [0, 3, 9, 95, 990, 4080, 4095, 5000, 9990, 99_999, 123_456,
                                 (1 << 64) - 3])
@pytest.mark.parametrize("count", [1, 2, 16, 200, 1001, 12_000])
def test_id_run_reply_is_one_bulk_per_id(seq: int, count: int) -> None:
    first = (1795464449139 << 64) + seq
    expected = b"".join(b"$%d\r\n%b\r\n" % (len(format_id(e)), format_id(e))
                        for e in range(first, first + count))
    assert id_run_reply(first, count) == expected


# --- over the wire ----------------------------------------------------------------------------------


def test_a_pipelined_run_matches_one_by_one(r: redis.Redis, server) -> None:
    r.config_set("stream-node-max-entries", 10)
    try:
        fields = [("f", i) if i % 5 else ("a", i, "b", "x" * i) for i in range(60)]
        replies = pipeline_raw(server.port, [("XADD", "p", "*", *f) for f in fields], 60)
        for f in fields:
            r.execute_command("XADD", "o", "*", *f)
        ids = _ids(replies)
        assert ids == sorted(ids) and len(set(ids)) == 60
        got = r.xrange("p")
        assert [e[0].decode() for e in got] == ["%d-%d" % i for i in ids]
        assert [e[1] for e in got] == [e[1] for e in r.xrange("o")]
        info = xinfo_stream(r, "p")
        assert info["length"] == 60 and info["entries-added"] == 60
        assert info["last-generated-id"] == ("%d-%d" % ids[-1]).encode()
        # Node boundaries are the same: an approximate trim drops the same whole nodes.
        assert r.xtrim("p", maxlen=25, approximate=True) == r.xtrim("o", maxlen=25, approximate=True)
        assert [e[1] for e in r.xrange("p")] == [e[1] for e in r.xrange("o")]
    finally:
        r.config_set("stream-node-max-entries", 100)


def test_what_breaks_a_run_takes_the_single_path(r: redis.Redis, server) -> None:
    r.set("str", "x")
    commands = [
        ("XADD", "s", "*", "f", "1"),
        ("XADD", "s", "*", "f", "2"),
        ("XADD", "s", "*", "f"),  # odd field count
        ("XADD", "s", "*", "f", "3"),
        ("XADD", "s", "MAXLEN", "2", "*", "f", "4"),  # options
        ("XADD", "s", "*", "f", "5"),
        ("XADD", "str", "*", "f", "6"),  # another key, of another type
        ("XADD", "str", "*", "f", "7"),
        ("xadd", "s", "*", "f", "8"),  # another spelling
        ("XADD", "s", "*", "f", "9"),
        ("XLEN", "s"),
        ("XADD", "s", "0-1", "f", "10"),  # explicit ID, too small
        ("XADD", "s", "*", "f", "11"),
        ("XADD", "t", "*", "f", "12"),
        ("XADD", "t", "*", "f", "13"),
    ]
    replies = pipeline_raw(server.port, commands, len(commands))
    arity = b"-ERR wrong number of arguments for 'xadd' command\r\n"
    wrongtype = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
    too_small = (b"-ERR The ID specified in XADD is equal or smaller than the target stream top "
                 b"item\r\n")
    assert replies[2] == arity
    assert replies[6] == replies[7] == wrongtype
    assert replies[10] == b":5\r\n"  # 3 and 4 (MAXLEN 2), 5, 8, 9
    assert replies[11] == too_small
    ok = [i for i in range(len(commands)) if i not in (2, 6, 7, 10, 11)]
    ids = _ids([replies[i] for i in ok if commands[i][1] == "s"])
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert [e[1][b"f"] for e in r.xrange("s")] == [b"3", b"4", b"5", b"8", b"9", b"11"]
    assert [e[1][b"f"] for e in r.xrange("t")] == [b"12", b"13"]
    assert r.get("str") == b"x"


def test_a_run_counts_as_that_many_commands(r: redis.Redis, server) -> None:
    r.config_resetstat()
    dirty = r.info("persistence")["rdb_changes_since_last_save"]
    pipeline_raw(server.port, [("XADD", "s", "*", "f", i) for i in range(20)], 20)
    assert r.info("commandstats")["cmdstat_xadd"]["calls"] == 20
    assert r.info("persistence")["rdb_changes_since_last_save"] == dirty + 20
    # CONFIG RESETSTAT (counted once done, as in Redis), three INFOs and the 20 XADDs
    assert r.info("stats")["total_commands_processed"] == 24


def test_inside_multi_each_xadd_is_queued(r: redis.Redis, server) -> None:
    commands = [("MULTI",)] + [("XADD", "s", "*", "f", i) for i in range(5)] + [("EXEC",)]
    conn = RawConnection(server.port)
    try:
        conn.send(b"".join(encode_command(*c) for c in commands))
        assert conn.read_exactly(5 + 9 * 5) == b"+OK\r\n" + b"+QUEUED\r\n" * 5
        assert conn.read_exactly(4) == b"*5\r\n"
    finally:
        conn.close()
    assert r.xlen("s") == 5


def test_before_auth_each_xadd_is_refused(server_factory) -> None:
    srv = server_factory("--requirepass", "pw")
    replies = pipeline_raw(srv.port, [("XADD", "s", "*", "f", i) for i in range(4)], 4)
    assert replies == [b"-NOAUTH Authentication required.\r\n"] * 4
    r = redis.Redis(port=srv.port, password="pw")
    assert r.exists("s") == 0
    r.close()


def test_a_run_wakes_a_blocked_reader_and_breaks_a_watch(r: redis.Redis, server) -> None:
    r.xadd("s", {"f": "0"})
    got = []
    reader = redis.Redis(port=server.port)
    t = threading.Thread(target=lambda: got.append(reader.xread({"s": "$"}, block=5000)))
    t.start()
    wait_blocked(r, 1)
    watcher = redis.Redis(port=server.port)
    pipe = watcher.pipeline()
    pipe.watch("s")
    pipe.multi()
    pipe.xlen("s")
    pipeline_raw(server.port, [("XADD", "s", "*", "f", i) for i in range(1, 9)], 8)
    t.join(5)
    assert got and got[0][0][1] and got[0][0][1][0][1] == {b"f": b"1"}
    with pytest.raises(redis.WatchError):
        pipe.execute()
    reader.close()
    watcher.close()


def test_a_run_reaches_the_aof(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    r.config_set("stream-node-max-entries", 7)
    pipeline_raw(srv.port, [("XADD", "s", "*", "f", i, "g", "x") for i in range(40)], 40)
    before = r.xrange("s")
    assert b"\r\n*\r\n" not in aof_path(srv).read_bytes()
    r.close()
    srv2 = restart(srv)
    try:
        r = redis.Redis(port=srv2.port)
        assert r.xrange("s") == before
        assert xinfo_stream(r, "s")["entries-added"] == 40
        r.close()
    finally:
        srv2.cleanup()


def test_a_pipelined_idmp_run_matches_one_by_one(r: redis.Redis, server) -> None:
    """`XADD key IDMP pid iid * ...` runs (an idempotent producer's pipeline): duplicates inside
    the run, against earlier calls and across producers answer as the same calls one by one."""
    r.xadd("ip", {"f": "before"})
    r.execute_command("XADD", "ip", "IDMP", "p", "0", "*", "f", "early")
    r.execute_command("XADD", "io", "IDMP", "p", "0", "*", "f", "early")
    commands = []
    for i in range(40):
        pid, iid = ("p", str(i % 15)) if i % 4 else ("q", str(i % 7))
        commands.append(("IDMP", pid, iid, "*", "f", str(i)))
    commands.insert(10, ("IDMP", "", "x", "*", "f", "empty pid"))  # breaks the run: its error
    commands.insert(20, ("MAXLEN", "100", "*", "f", "plain"))
    replies = pipeline_raw(server.port, [("XADD", "ip", *c) for c in commands], len(commands))
    one_by_one = []
    for c in commands:
        try:
            one_by_one.append(r.execute_command("XADD", "io", *c))
        except redis.ResponseError as exc:
            one_by_one.append(exc)
    assert replies[10] == b"-ERR IDMP requires a non-empty producer ID\r\n"
    assert isinstance(one_by_one[10], redis.ResponseError)
    assert str(one_by_one[10]) == "IDMP requires a non-empty producer ID"
    # The same entries, and every duplicate answered with the ID its first call got.
    got, want = r.xrange("ip")[1:], r.xrange("io")
    assert [e[1] for e in got] == [e[1] for e in want]
    position_p = {e[0]: n for n, e in enumerate(got)}
    position_o = {e[0]: n for n, e in enumerate(want)}
    for n, (reply, other) in enumerate(zip(replies, one_by_one, strict=True)):
        if n != 10:
            assert position_p[_bulk(reply)] == position_o[other]
    info_p, info_o = xinfo_stream(r, "ip"), xinfo_stream(r, "io")
    for field in (b"iids-added", b"iids-duplicates", b"iids-tracked", b"pids-tracked"):
        assert info_p[field.decode()] == info_o[field.decode()], field


def _bulk(reply: bytes) -> bytes:
    assert reply.startswith(b"$"), reply
    return reply.split(b"\r\n")[1]


def test_a_pipelined_idmp_run_reaches_the_aof(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    commands = [("XADD", "s", "IDMP", "p", i % 30, "*", "f", i) for i in range(50)]
    replies = pipeline_raw(srv.port, commands, 50)
    before = r.xrange("s")
    assert len(before) == 30 and len(set(replies)) == 30
    r.close()
    srv2 = restart(srv)
    try:
        r = redis.Redis(port=srv2.port)
        assert r.xrange("s") == before
        # The pairs came back with the entries: a replay of the pipeline adds nothing.
        assert pipeline_raw(srv2.port, commands, 50) == replies
        assert r.xlen("s") == 30
        r.close()
    finally:
        srv2.cleanup()


def test_a_pipelined_idmp_run_respects_maxsize_within_the_run(r: redis.Redis, server) -> None:
    """A run's own records push a producer's oldest pairs out of IDMP-MAXSIZE: a pair repeated
    after that, in the same pipeline, is new again, as one by one."""
    plan = [("p", "x")] + [("p", c) for c in "abcd"] + [("p", "a"), ("p", "x"), ("q", "a"),
                                                         ("p", "d"), ("q", "a"), ("p", "b")]
    for key in ("ip", "io"):
        r.execute_command("XADD", key, "IDMP", "p", "x", "*", "f", "early")
        r.execute_command("XCFGSET", key, "IDMP-MAXSIZE", "3")
        r.execute_command("XADD", key, "IDMP", "p", "x", "*", "f", "kept")  # reset: new again
    commands = [("XADD", "ip", "IDMP", pid, iid, "*", "f", n) for n, (pid, iid) in enumerate(plan)]
    replies = pipeline_raw(server.port, commands, len(commands))
    one_by_one = [r.execute_command("XADD", "io", "IDMP", pid, iid, "*", "f", n)
                  for n, (pid, iid) in enumerate(plan)]
    got, want = r.xrange("ip"), r.xrange("io")
    assert [e[1] for e in got] == [e[1] for e in want]
    position_p = {e[0]: n for n, e in enumerate(got)}
    position_o = {e[0]: n for n, e in enumerate(want)}
    assert [position_p[_bulk(x)] for x in replies] == [position_o[x] for x in one_by_one]
    info_p, info_o = xinfo_stream(r, "ip"), xinfo_stream(r, "io")
    for field in ("iids-added", "iids-duplicates", "iids-tracked", "pids-tracked"):
        assert info_p[field] == info_o[field], field


# --- inside MULTI / EXEC: queued together, run as batches ---------------------------------------


def _transaction(n: int, start_ms: int) -> list[tuple]:
    """A transaction whose XADD runs are broken by errors and other commands: explicit IDs, so
    every reply is the same on any server."""
    script: list[tuple] = [("SET", "str", "x"), ("MULTI",)]
    script += [("XADD", "s", f"{start_ms}-{i}", "f", i) for i in range(1, n + 1)]
    script += [("XADD", "s", f"{start_ms}-5", "f", "small"),  # too small: an error inside EXEC
               ("XADD", "s", f"{start_ms + 1}-1", "f", "v", "g"),  # odd field count: likewise
               ("XADD", "s", f"{start_ms + 1}-2", "f", "v"),
               ("XADD", "s", f"{start_ms + 1}-3", "f", "v"),
               ("XADD", "str", "9-1", "f", "v"),  # WRONGTYPE
               ("XADD", "str", "9-2", "f", "v"),
               ("XLEN", "s"),
               ("XADD", "s", f"{start_ms + 2}-*", "f", "v"),
               ("XADD", "s", f"{start_ms + 2}-*", "f", "v"),
               ("SET", "k", "v"), ("SET", "k2", "v"),
               ("XADD", "s", "MAXLEN", "3", f"{start_ms + 3}-1", "f", "last")]
    script += [("EXEC",), ("XRANGE", "s", "-", "+"), ("XLEN", "s"), ("GET", "k2")]
    return script


def test_a_transaction_of_pipelined_xadds_answers_as_redis(server, real_redis) -> None:
    script = _transaction(40, 5)
    mine = run_pipelined(server.port, script)
    theirs = run_pipelined(real_redis.port, script)
    for cmd, ours, ref in zip(script, mine, theirs, strict=True):
        assert ours == ref, f"{cmd!r}: rivulet {ours!r} != redis {ref!r}"
    assert mine[-1] == b"$1\r\nv\r\n"


def test_a_transaction_with_auto_ids_answers_as_one_by_one(r: redis.Redis, server) -> None:
    r.set("str", "x")
    script = [("MULTI",)] + [("XADD", "s", "*", "f", i) for i in range(30)]
    script += [("XADD", "str", "*", "f", "v"), ("XADD", "str", "*", "f", "v")]
    script += [("XADD", "s", "*", "f", i) for i in range(30, 45)] + [("EXEC",)]
    replies = run_pipelined(server.port, script, flush=False)
    assert replies[1:-1] == [b"+QUEUED\r\n"] * (len(script) - 2)
    ids = BULK_ID.findall(replies[-1])
    assert len(ids) == 45
    assert [(int(a), int(b)) for a, b in ids] == sorted({(int(a), int(b)) for a, b in ids})
    wrongtype = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
    assert replies[-1].startswith(b"*47\r\n") and replies[-1].count(wrongtype) == 2
    assert [e[1][b"f"] for e in r.xrange("s")] == [str(i).encode() for i in range(45)]
    assert [e[0] for e in r.xrange("s")] == [b"%s-%s" % i for i in ids]


def test_a_transaction_counts_each_call(r: redis.Redis, server) -> None:
    r.config_resetstat()
    dirty = r.info("persistence")["rdb_changes_since_last_save"]
    run_pipelined(server.port, [("MULTI",)] + [("XADD", "s", "*", "f", i) for i in range(20)]
                  + [("EXEC",)], flush=False)
    assert r.info("commandstats")["cmdstat_xadd"]["calls"] == 20
    assert r.info("commandstats")["cmdstat_exec"]["calls"] == 1
    assert r.info("persistence")["rdb_changes_since_last_save"] == dirty + 20


def test_a_transaction_with_an_error_when_queued_is_discarded(r: redis.Redis, server) -> None:
    script = [("MULTI",)] + [("XADD", "s", "*", "f", i) for i in range(5)]
    script += [("XADD", "s", "*", "f"), ("XADD", "s", "*", "f", "v"), ("EXEC",)]
    replies = run_pipelined(server.port, script, flush=False)
    assert replies[1:6] == [b"+QUEUED\r\n"] * 5
    assert replies[6] == b"-ERR wrong number of arguments for 'xadd' command\r\n"
    assert replies[7] == b"+QUEUED\r\n"
    assert replies[8] == b"-EXECABORT Transaction discarded because of previous errors.\r\n"
    assert r.exists("s") == 0


def test_a_transaction_of_xadds_reaches_the_aof_as_one_transaction(server_factory) -> None:
    srv = server_factory("--appendfsync", "always")
    r = redis.Redis(port=srv.port)
    run_pipelined(srv.port, [("MULTI",)] + [("XADD", "s", "*", "f", i) for i in range(30)]
                  + [("XADD", "s", "IDMP", "p", i % 5, "*", "f", i) for i in range(10)]
                  + [("SET", "m", "1"), ("EXEC",)], flush=False)
    before = r.xrange("s")
    assert len(before) == 35
    logged = parse_aof(aof_path(srv).read_bytes())
    names = [c[0].upper() for c in logged]
    first, last = names.index(b"MULTI"), names.index(b"EXEC")
    assert names[first + 1:last].count(b"XADD") == 35 and b"*" not in [c[2] for c in logged
                                                                          if c[0] == b"XADD"]
    assert names[first + 1:last].count(b"XIDMPRECORD") == 5 and names[last - 1] == b"SET"
    r.close()
    srv2 = restart(srv)
    try:
        r = redis.Redis(port=srv2.port)
        assert r.xrange("s") == before and r.get("m") == b"1"
        assert xinfo_stream(r, "s")["iids-tracked"] == 5
        r.close()
    finally:
        srv2.cleanup()


def test_a_transaction_reply_in_resp3(server) -> None:
    r3 = redis.Redis(port=server.port, protocol=3)
    try:
        r3.delete("s")
        pipe = r3.pipeline(transaction=True)
        for i in range(10):
            pipe.execute_command("XADD", "s", f"1-{i + 1}", "f", i)
        pipe.xlen("s")
        assert pipe.execute() == [f"1-{i + 1}".encode() for i in range(10)] + [10]
    finally:
        r3.close()


def test_a_transaction_of_other_batched_commands_answers_as_redis(server, real_redis) -> None:
    """The other commands with a batch path, queued in runs and run by EXEC as batches."""
    script: list[tuple] = [("SET", "k", "v"), ("MULTI",)]
    script += [("LPUSH", "l", i) for i in range(6)] + [("RPUSH", "l", "x", "y")] * 3
    script += [("RPOP", "l")] * 4 + [("HSET", "h", f"f{i}", i) for i in range(5)]
    script += [("SADD", "st", i % 3) for i in range(6)] + [("GET", "k"), ("GET", "nope")] * 3
    script += [("ZADD", "z", i, f"m{i % 4}") for i in range(6)] + [("SETBIT", "b", i, 1) for i in range(5)]
    script += [("LPUSH", "k", "wrongtype"), ("LPUSH", "k", "wrongtype"), ("EXEC",)]
    script += [("LRANGE", "l", 0, -1), ("HGETALL", "h"), ("ZRANGE", "z", 0, -1, "WITHSCORES")]
    mine = run_pipelined(server.port, script)
    theirs = run_pipelined(real_redis.port, script)
    for cmd, ours, ref in zip(script, mine, theirs, strict=True):
        assert ours == ref, f"{cmd!r}: rivulet {ours!r} != redis {ref!r}"


@pytest.mark.parametrize("protocol", [2, 3])
def test_a_big_transaction_answers_each_id_as_redis_does(server, real_redis, protocol) -> None:
    """The Spark sink's idempotent write: a WATCH, then one MULTI with thousands of XADD * of
    several fields and a SET, then EXEC. Its reply holds an ID per XADD, sequence numbers of one
    millisecond running past 10,000: each must be the entry XRANGE shows, on either server."""
    n = 12_000
    script: list[tuple] = [("HELLO", protocol), ("WATCH", "marker"), ("MULTI",)]
    script += [("XADD", "out", "*", "sensor", f"sensor-{i % 10}", "seq", i, "temperature",
                f"{20 + i % 7}.5") for i in range(n)]
    script += [("SET", "marker", n, "EX", 600), ("EXEC",), ("XRANGE", "out", "-", "+")]
    for port in (server.port, real_redis.port):
        replies = run_pipelined(port, script)
        assert replies[3:-2] == [b"+QUEUED\r\n"] * (n + 1)
        entries = redis.Redis(port=port).xrange("out")
        assert [int(e[1][b"seq"]) for e in entries] == list(range(n))
        expected = b"".join(b"$%d\r\n%b\r\n" % (len(e[0]), e[0]) for e in entries) + b"+OK\r\n"
        assert replies[-2] == b"*%d\r\n" % (n + 1) + expected, port



def test_a_pipelined_run_of_chosen_ids_answers_as_redis(server, real_redis) -> None:
    # Every way of spelling a chosen ID that a run reads without a full parse, and those next to
    # them that it must not mistake for the next ID of a millisecond: a lone `ms` (`51` after `50`
    # is 51-0, not 50-1), leading zeros in either part, the 18/19-digit edge of the plain form,
    # the sequence numbers around the end of the table of spelled sequence numbers (4096).
    big = "1000000000000000000"
    spelled = ["5", "5-1", "5-2", "5-003", "5-4", "6", "1", "50", "51", "61", "61-1", "0061-2",
               "61-3", "0061-4",
               "61-4", "61-5", "99999999999999999-5", "999999999999999999-0",
               "999999999999999999-1", f"{big}-0", f"{big}-4094", f"{big}-4095", f"{big}-4096",
               f"{big}-4097", "18446744073709551615-18446744073709551614",
               "18446744073709551615-18446744073709551615", "18446744073709551615-0"]
    script: list[tuple] = [("XADD", "e", sid, "f", i) for i, sid in enumerate(spelled)]
    script += [("XADD", "e", "*", "f", "last"), ("XRANGE", "e", "-", "+"), ("XLEN", "e")]
    mine = run_pipelined(server.port, script)
    theirs = run_pipelined(real_redis.port, script)
    for cmd, ours, ref in zip(script, mine, theirs, strict=True):
        assert ours == ref, f"{cmd!r}: rivulet {ours!r} != redis {ref!r}"
    assert mine[spelled.index("51")] == b"$4\r\n51-0\r\n"
    assert mine[spelled.index("1")].startswith(b"-ERR The ID specified")
