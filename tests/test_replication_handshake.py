"""The replica's side of Redis's replication protocol, byte by byte, against a scripted master
on a socket: the handshake (PING answered -NOAUTH, AUTH user pass, REPLCONF listening-port /
ip-address / capa, PSYNC with the replica's own history), +FULLRESYNC with a diskless snapshot,
the offset of a stream cut in the middle of a command and of a MULTI, REPLCONF GETACK and the
periodic ACK, a lost link continued with +CONTINUE and a new replication ID (PSYNC2), and the
errors and timeouts that make the replica start again."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from tests.helpers import encode_command
from tests.replica_helpers import RDB, ScriptedMaster, info, wait_until
from tests.serverproc import ServerProcess


@pytest.fixture
def fake_master() -> Iterator[ScriptedMaster]:
    master = ScriptedMaster()
    yield master
    master.close()


@pytest.fixture
def replica_factory():
    started: list[ServerProcess] = []

    def start(*args: str) -> tuple[ServerProcess, redis.Redis]:
        proc = ServerProcess(*args).start()
        started.append(proc)
        return proc, redis.Redis(port=proc.port)

    yield start
    for proc in started:
        proc.cleanup()


def test_handshake_full_sync_stream_offsets_and_continue(fake_master, replica_factory):
    m = fake_master
    proc, r = replica_factory("--masteruser", "repl", "--masterauth", "pw",
                              "--replica-announce-ip", "10.1.2.3")
    own_replid = info(r)["master_replid"]
    assert r.execute_command("REPLICAOF", "127.0.0.1", m.port) == b"OK"
    m.accept()
    assert m.expect() == [b"PING"]
    m.send(b"-NOAUTH Authentication required.\r\n")  # accepted: AUTH comes next
    assert m.expect() == [b"AUTH", b"repl", b"pw"]
    assert m.expect() == [b"REPLCONF", b"listening-port", str(proc.port).encode()]
    assert m.expect() == [b"REPLCONF", b"ip-address", b"10.1.2.3"]
    assert m.expect() == [b"REPLCONF", b"capa", b"eof", b"capa", b"psync2"]
    m.send(b"+OK\r\n" * 4)
    # A master that was a replica's master before may continue its history: our own.
    assert m.expect() == [b"PSYNC", own_replid.encode(), b"1"]
    assert r.execute_command("ROLE")[3] == b"handshake"
    replid = b"a" * 40
    m.send(b"\n+FULLRESYNC " + replid + b" 100\r\n\n")
    wait_until(lambda: info(r)["master_sync_in_progress"] == "1", what="the transfer state")
    assert r.execute_command("ROLE")[3] == b"sync"
    mark = b"b" * 40
    m.send(b"$EOF:" + mark + b"\r\n" + RDB + mark)
    m.expect_ack(100)  # at once after a diskless transfer
    wait_until(lambda: info(r)["master_link_status"] == "up", what="the link")
    assert r.get("x") == b"1"
    assert r.execute_command("ROLE") == [b"slave", b"127.0.0.1", m.port, b"connected", 100]
    mine = info(r)
    assert mine["master_replid"] == replid.decode() and mine["master_repl_offset"] == "100"

    # A command cut in two: the offset counts complete commands only.
    select, setk = encode_command("SELECT", "2"), encode_command("SET", "k", "v")
    m.send(select + setk[:-5])
    wait_until(lambda: info(r)["slave_read_repl_offset"] == str(100 + len(select) + len(setk) - 5),
               what="the read offset")
    assert info(r)["slave_repl_offset"] == str(100 + len(select))
    m.send(setk[-5:])
    offset = 100 + len(select) + len(setk)
    wait_until(lambda: info(r)["slave_repl_offset"] == str(offset), what="the offset")
    assert r.execute_command("SELECT", 2) and r.get("k") == b"v"
    r.execute_command("SELECT", 0)

    # GETACK: the offset before the GETACK itself.
    getack = encode_command("REPLCONF", "GETACK", "*")
    m.send(getack)
    m.expect_ack(offset)
    offset += len(getack)

    # A transaction counts when its EXEC ran.
    begin = encode_command("MULTI") + encode_command("INCR", "n")
    m.send(begin)
    wait_until(lambda: info(r)["slave_read_repl_offset"] == str(offset + len(begin)),
               what="the MULTI to be read")
    assert info(r)["slave_repl_offset"] == str(offset)
    end = encode_command("EXEC")
    m.send(end)
    offset += len(begin) + len(end)
    wait_until(lambda: info(r)["slave_repl_offset"] == str(offset), what="the EXEC")
    assert redis.Redis(port=proc.port, db=2).get("n") == b"1"
    # What was applied joined our own history (for our replicas, and a promotion).
    assert info(r)["master_repl_offset"] == str(offset)
    m.expect_ack(offset, timeout=3)  # the once-a-second ACK

    # The link is lost: PSYNC asks for the next byte of the same history.
    m.conn.close()
    m.conn = None
    m.accept()
    assert m.handshake(auth=True, ip=True) == [b"PSYNC", replid, str(offset + 1).encode()]
    new_id = b"c" * 40
    m.send(b"+CONTINUE " + new_id + b"\r\n")
    wait_until(lambda: info(r)["master_link_status"] == "up", what="the continued link")
    mine = info(r)
    # PSYNC2: the old ID stays valid up to here for our own replicas.
    assert mine["master_replid"] == new_id.decode()
    assert mine["master_replid2"] == replid.decode()
    assert mine["second_repl_offset"] == str(offset + 1)
    # The database selected before the loss is still the stream's.
    m.send(encode_command("SET", "k2", "v2"))
    wait_until(lambda: redis.Redis(port=proc.port, db=2).get("k2") == b"v2",
               what="the continued stream")
    assert r.get("x") == b"1"
    assert "Successful partial resynchronization with master." in proc.log()


def test_bulk_length_transfer_and_no_cached_master_at_start_up(fake_master, replica_factory):
    m = fake_master
    proc, r = replica_factory("--replicaof", f"127.0.0.1 {m.port}")
    m.accept()
    # Started as a replica: no history to offer.
    assert m.handshake() == [b"PSYNC", b"?", b"-1"]
    m.send(b"+FULLRESYNC " + b"d" * 40 + b" 7\r\n$%d\r\n" % len(RDB) + RDB[:10])
    wait_until(lambda: info(r).get("master_sync_read_bytes") == "10", what="the partial transfer")
    mine = info(r)
    assert mine["master_sync_total_bytes"] == str(len(RDB))
    assert mine["master_sync_left_bytes"] == str(len(RDB) - 10)
    m.send(RDB[10:])
    wait_until(lambda: info(r)["master_link_status"] == "up", what="the link")
    assert r.get("x") == b"1" and info(r)["slave_repl_offset"] == "7"


@pytest.mark.parametrize("reply", [b"-NOMASTERLINK Can't SYNC while not connected with my master",
                                   b"-LOADING Redis is loading the dataset in memory"])
def test_psync_try_later(fake_master, replica_factory, reply):
    m = fake_master
    proc, r = replica_factory("--replicaof", f"127.0.0.1 {m.port}")
    m.accept()
    m.handshake()
    m.send(reply + b"\r\n")
    m.accept()  # the replica starts again (within a second)
    assert m.handshake() == [b"PSYNC", b"?", b"-1"]
    assert "Master is currently unable to PSYNC but should be in the future" in proc.log()


def test_psync_refused_falls_back_to_sync(fake_master, replica_factory):
    m = fake_master
    proc, r = replica_factory("--replicaof", f"127.0.0.1 {m.port}")
    m.accept()
    m.handshake()
    m.send(b"-ERR unknown command 'PSYNC'\r\n")
    data = b""
    while not data.endswith(b"\r\n"):
        data += m.conn.recv(100)
    assert data == b"SYNC\r\n"
    m.send(b"$%d\r\n" % len(RDB) + RDB)
    wait_until(lambda: info(r)["master_link_status"] == "up", what="the link")
    assert r.get("x") == b"1"
    assert r.execute_command("ROLE")[4] == -1  # an old master: no offsets
    m.send(encode_command("SET", "y", "2"))
    wait_until(lambda: r.get("y") == b"2", what="the stream")


def test_bad_transfer_and_handshake_timeout_start_again(fake_master, replica_factory):
    m = fake_master
    proc, r = replica_factory("--replicaof", f"127.0.0.1 {m.port}", "--repl-timeout", "1")
    m.accept()
    m.handshake()
    m.send(b"+FULLRESYNC " + b"e" * 40 + b" 0\r\n+WHAT\r\n")
    m.accept()
    assert "Bad protocol from MASTER, the first byte is not '$' (we received '+WHAT')" in proc.log()
    # A master that stops answering: after repl-timeout, a new connection.
    assert m.expect() == [b"PING"]
    m.accept()
    assert "Timeout connecting to the MASTER..." in proc.log()
    m.handshake()
    m.send(b"+FULLRESYNC " + b"e" * 40 + b" 0\r\n$%d\r\n" % len(RDB) + RDB[:-3])
    m.accept()  # the transfer stalls: dropped after repl-timeout too
    assert "Timeout receiving bulk data from MASTER" in proc.log()
    m.handshake()
    m.send(b"+FULLRESYNC " + b"e" * 40 + b" 0\r\n$%d\r\n" % len(RDB) + RDB)
    wait_until(lambda: info(r)["master_link_status"] == "up", what="the link")
    # Connected, then silent for repl-timeout: the link is dropped, the master cached.
    m.accept()
    assert "MASTER timeout: no data nor PING received..." in proc.log()
    assert m.handshake() == [b"PSYNC", b"e" * 40, b"1"]


def test_damaged_snapshot_is_not_kept(fake_master, replica_factory):
    m = fake_master
    proc, r = replica_factory()
    r.set("mine", "1")
    r.execute_command("REPLICAOF", "127.0.0.1", m.port)
    m.accept()
    m.handshake()
    bad = RDB[:-9] + b"\x07" + RDB[-9:]  # an unknown type byte before EOF
    m.send(b"+FULLRESYNC " + b"f" * 40 + b" 0\r\n$%d\r\n" % len(bad) + bad)
    m.accept()  # the load failed: the replica starts again
    assert "Failed trying to load the MASTER synchronization DB" in proc.log()
    assert r.dbsize() == 0  # flushed, as Redis leaves a replica whose load failed
    assert info(r)["master_link_status"] == "down"
