"""A replica applies what one read of its master's stream brings as one batch (runs of XADDs
through the run handler, the rest through dispatch): the result must be what command-by-command
application gives. Pipelined bursts of mixed commands, transactions and consumer-group reads on
a Rivulet or a Redis master; a reader blocked on the replica woken by a burst; offsets, ROLE and
WAIT after a burst; a replica's own replica and AOF getting the stream unchanged; and the XADD
run of explicit IDs (what the stream is made of) answering as Redis does."""

from __future__ import annotations

import threading

import pytest
import redis

from tests.helpers import encode_command, parse_aof, run_pipelined
from tests.replica_helpers import (
    REDIS70,
    RedisServer,
    info,
    restrict,
    same_dataset,
    stream_full,
    wait_synced,
    wait_until,
)
from tests.serverproc import ServerProcess
from tests.test_replication_handshake import RDB, ScriptedMaster


@pytest.fixture
def procs():
    started: list = []
    yield started
    for proc in started:
        proc.cleanup()


def _master(procs: list, kind: str):
    if kind == "redis":
        if REDIS70 is None:
            pytest.skip("redis-server is not installed: a Rivulet replica of a Redis master "
                        "applying bursts was NOT tested")
        proc = RedisServer(None).start()
    else:
        proc = ServerProcess().start()
    procs.append(proc)
    return proc


def _replica(procs: list, master_port: int, *args: str, **kwargs) -> ServerProcess:
    proc = ServerProcess("--replicaof", f"127.0.0.1 {master_port}", *args, **kwargs).start()
    procs.append(proc)
    return proc


def burst() -> list[tuple]:
    """Mixed writes in one pipeline: runs of auto-ID XADDs broken by other keys, explicit IDs,
    trims, consumer-group deliveries and acks, a transaction, another database, other types."""
    script: list[tuple] = [("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")]
    for i in range(300):
        script.append(("XADD", "s", "*", "n", str(i)))
        if i % 97 == 0:
            script.append(("XADD", "t", f"{i + 1}-{i}", "f", "v"))
        if i % 50 == 49:
            script.append(("XREADGROUP", "GROUP", "g", f"c{i % 3}", "COUNT", "7", "STREAMS", "s", ">"))
    script += [
        ("XADD", "t", "99999-0", "a", "b"),
        ("XADD", "t", "100000-5", "a", "b"),
        ("XADD", "t", "100000-5", "dup", "refused"),
        ("XADD", "t", "MAXLEN", "3", "*", "trimmed", "1"),
        ("XACK", "s", "g", "0-0"),
        ("MULTI",),
        ("XADD", "s", "*", "in", "multi"),
        ("XREADGROUP", "GROUP", "g", "inmulti", "COUNT", "2", "STREAMS", "s", ">"),
        ("XADD", "s", "*", "in", "multi2"),
        ("EXEC",),
        ("SELECT", "1"),
        ("XADD", "s", "*", "db", "1"),
        ("XADD", "s", "*", "db", "1"),
        ("SET", "k", "v"),
        ("SELECT", "0"),
        ("HSET", "h", "a", "1", "b", "2"),
        ("LPUSH", "l", "x", "y"),
        ("XADD", "s", "*", "after", "all"),
        ("XADD", "s", "*", "after", "all2"),
    ]
    return script


def _ack_some(m: redis.Redis) -> None:
    """XACK of some delivered entries, so that the PEL differs from the deliveries."""
    pending = m.xpending_range("s", "g", "-", "+", 1000)
    ids = [p["message_id"] for p in pending[::3]]
    if ids:
        m.xack("s", "g", *ids)


@pytest.mark.parametrize("kind", ["rivulet", "redis"])
def test_pipelined_burst_applies_exactly(procs, kind) -> None:
    master = _master(procs, kind)
    m = redis.Redis(port=master.port)
    replica = _replica(procs, master.port)
    r = redis.Redis(port=replica.port)
    wait_synced(m, r)
    # What command-by-command application gives: a Redis master's own Redis replica (Redis
    # 7.0 propagates deliveries without entries-read), or a Rivulet master itself.
    reference = m
    if kind == "redis":
        theirs = RedisServer(None, "--replicaof", "127.0.0.1", str(master.port)).start()
        procs.append(theirs)
        reference = theirs.client()
        wait_synced(m, reference)
    # Several bursts, so that reads of the link split runs and transactions at any byte.
    for _ in range(3):
        replies = run_pipelined(master.port, burst(), flush=False)
        assert replies[-1].startswith(b"$")
        _ack_some(m)
    wait_synced(m, r)
    if reference is not m:
        wait_synced(m, reference)
    for key in (b"s", b"t"):
        expected = stream_full(reference, key)
        assert restrict(expected, stream_full(r, key)) == expected
    same_dataset(reference, r)
    # Offsets by whole units: the replica's offset is the master's, in INFO and in ROLE.
    assert info(r)["slave_repl_offset"] == info(m)["master_repl_offset"]
    assert info(r)["master_repl_offset"] == info(m)["master_repl_offset"]
    role = r.execute_command("ROLE")
    assert role[3] == b"connected" and role[4] == int(info(m)["master_repl_offset"])
    # WAIT's REPLCONF GETACK is answered with the offset of what ran before it.
    m.xadd("s", {"last": "1"})
    written = int(info(m)["master_repl_offset"])
    # Every replica attached (ours, and Redis's own one beside a Redis master) acknowledges.
    replicas = 1 if reference is m else 2
    assert m.wait(replicas, 5000) == replicas
    ours = next(v for k, v in info(m).items()
                if k.startswith("slave") and f"port={replica.port}," in str(v))
    acked = int(ours.split("offset=")[1].split(",")[0])
    # (Or, from the once-a-second ACK since, the GETACK included.)
    assert acked in (written, int(info(m)["master_repl_offset"]))


def test_blocked_xread_on_replica_wakes_during_a_burst(procs) -> None:
    master = _master(procs, "rivulet")
    m = redis.Redis(port=master.port)
    m.xadd("s", {"a": "0"}, id="1-0")
    replica = _replica(procs, master.port)
    r = redis.Redis(port=replica.port)
    wait_synced(m, r)
    result: list = []

    def reader() -> None:
        with redis.Redis(port=replica.port) as c:
            result.append(c.xread({"s": "$"}, block=10000))

    thread = threading.Thread(target=reader)
    thread.start()
    wait_until(lambda: info(r, "clients")["blocked_clients"] == "1", what="the XREAD to block")
    run_pipelined(master.port, [("XADD", "s", "*", "n", str(i)) for i in range(2000)], flush=False)
    thread.join(10)
    assert not thread.is_alive()
    [[key, entries]] = result[0]
    assert key == b"s" and entries
    # What it got is the start of the burst, in order, as the master holds it.
    assert entries == m.xrange("s", "(1-0", "+", count=len(entries))
    wait_synced(m, r)
    assert r.xlen("s") == 2001


def test_chain_and_replica_aof_get_the_stream_unchanged(procs, tmp_path) -> None:
    master = _master(procs, "rivulet")
    m = redis.Redis(port=master.port)
    middle = _replica(procs, master.port, "--appendonly", "yes", "--appendfsync", "always",
                      data_dir=str(tmp_path))
    mid = redis.Redis(port=middle.port)
    wait_synced(m, mid)
    leaf = _replica(procs, middle.port)
    lf = redis.Redis(port=leaf.port)
    wait_synced(mid, lf)
    for _ in range(2):
        run_pipelined(master.port, burst(), flush=False)
    wait_synced(m, mid)
    wait_synced(mid, lf)
    assert info(lf)["master_repl_offset"] == info(m)["master_repl_offset"]
    for other in (mid, lf):
        assert stream_full(other, b"s") == stream_full(m, b"s")
        same_dataset(m, other)
    # The middle replica's AOF holds each replicated XADD as the master sent it.
    data = (tmp_path / "appendonly.aof").read_bytes()
    logged = []
    db = b"0"
    for cmd in parse_aof(data):
        if cmd[0].upper() == b"SELECT":
            db = cmd[1]
        elif cmd[0].upper() == b"XADD" and cmd[1] == b"s" and db == b"0":
            logged.append(cmd)
    entries = m.xrange("s")
    assert [cmd[2] for cmd in logged][-len(entries):] == [eid for eid, _ in entries]


def _explicit_script() -> list[tuple]:
    return [
        ("XADD", "e", "1-1", "a", "1"),
        ("XADD", "e", "1-2", "a", "2"),
        ("XADD", "e", "5-0", "a", "3"),
        ("XADD", "e", "5-0", "dup", "x"),
        ("XADD", "e", "4-9", "back", "x"),
        ("XADD", "e", "7", "ms", "only"),
        ("XADD", "e", "7-*", "auto", "seq"),
        ("XADD", "e", "0-0", "zero", "x"),
        ("XADD", "e", "9-0", "odd"),
        ("XADD", "e", "10-abc", "bad", "id"),
        ("XADD", "e", "18446744073709551615-18446744073709551615", "max", "x"),
        ("XADD", "e", "18446744073709551615-18446744073709551615", "after", "max"),
        ("XADD", "e", "*", "after", "max"),
        ("SET", "str", "v"),
        ("XADD", "str", "1-1", "wrong", "type"),
        ("XADD", "str", "1-2", "wrong", "type"),
        ("XLEN", "e"),
        ("XRANGE", "e", "-", "+"),
        # Consecutive IDs, which a run reads without parsing, in every spelling around them.
        ("XADD", "p", "3-1", "a", "1"),
        ("XADD", "p", "3-2", "a", "2"),
        ("XADD", "p", "0003-3", "a", "3"),
        ("XADD", "p", "0003-4", "a", "4"),
        ("XADD", "p", "3-5", "a", "5"),
        ("XADD", "p", "3-4094", "a", "6"),
        ("XADD", "p", "3-4095", "a", "7"),
        ("XADD", "p", "3-4096", "a", "8"),
        ("XADD", "p", "3-4097", "a", "9"),
        ("XADD", "p", "4", "a", "10"),
        ("XADD", "p", "5", "a", "11"),
        ("XADD", "p", "5-1", "a", "12"),
        ("XADD", "p", "6\x00-0", "a", "13"),
        ("XADD", "p", "6\x00-1", "a", "14"),
        ("XADD", "p", "7-1\x00x", "a", "15"),
        ("XADD", "p", "7-2", "a", "16"),
        ("XADD", "p", "7-03", "a", "17"),
        ("XADD", "p", "7-4", "a", "18"),
        ("XADD", "p", "7-4", "a", "19"),
        ("XADD", "p", "00000000000000000008-1", "a", "20"),
        ("XADD", "p", "00000000000000000008-2", "a", "21"),
        ("XRANGE", "p", "-", "+"),
    ]


def test_pipelined_explicit_ids_answer_as_redis(server, real_redis) -> None:
    script = _explicit_script()
    assert run_pipelined(server.port, script) == run_pipelined(real_redis.port, script)


@pytest.fixture
def scripted_master():
    master = ScriptedMaster()
    yield master
    master.close()


def test_stream_in_small_pieces_with_odd_forms_getack_and_multi(procs, scripted_master) -> None:
    """A scripted master sends runs of XADDs, a transaction, a command in a non-canonical (but
    valid) form and a GETACK in the middle of a run, in pieces of 7 bytes: the replica applies
    it all, answers the GETACK with the offset of what came before it, and ends at the
    stream's offset."""
    m = scripted_master
    replica = _replica(procs, m.port)
    r = redis.Redis(port=replica.port)
    m.accept()
    m.handshake()
    m.send(b"+FULLRESYNC " + b"a" * 40 + b" 100\r\n")
    mark = b"b" * 40
    m.send(b"$EOF:" + mark + b"\r\n" + RDB + mark)
    m.expect_ack(100)
    wait_until(lambda: info(r)["master_link_status"] == "up", what="the link")
    xadds = [encode_command("XADD", "s", f"{i}-{i % 3}", "n", str(i)) for i in range(1, 60)]
    odd = b"*3\r\n$3\r\nSET\r\n$01\r\nk\r\n$1\r\nv\r\n"  # "$01": a length with a leading zero
    before = b"".join(xadds[:30]) + odd + encode_command("MULTI") + b"".join(xadds[30:40]) \
        + encode_command("EXEC") + b"".join(xadds[40:50])
    getack = encode_command("REPLCONF", "GETACK", "*")
    after = b"".join(xadds[50:])
    stream = before + getack + after
    for i in range(0, len(stream), 7):
        m.send(stream[i:i + 7])
    m.expect_ack(100 + len(before))
    wait_until(lambda: info(r)["slave_repl_offset"] == str(100 + len(stream)), what="the offset")
    assert info(r)["master_repl_offset"] == str(100 + len(stream))
    assert r.get("k") == b"v" and r.get("x") == b"1"
    assert [eid for eid, _ in r.xrange("s")] == [f"{i}-{i % 3}".encode() for i in range(1, 60)]
    m.expect_ack(100 + len(stream), timeout=3)  # the once-a-second ACK
