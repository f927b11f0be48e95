"""A replica fed a randomized stream of its master's writes (XADD runs with odd IDs, field counts,
sizes and spellings, refused calls, transactions, other databases), in pieces of 1 byte to 20 KB,
must end with exactly what a Redis replica fed the same bytes holds, acknowledge the same
offsets, send the same keyspace events, and log in its AOF what rebuilds the same data."""

from __future__ import annotations

import random
import time

import pytest
import redis

from tests.helpers import encode_command
from tests.replica_helpers import (
    REDIS70,
    RedisServer,
    ScriptedMaster,
    dataset,
    info,
    restrict,
    same_dataset,
    wait_until,
)
from tests.serverproc import ServerProcess

# An empty dataset as RDB version 9 (read by Redis 7.0 and Rivulet), checksum 0: not checked.
EMPTY_RDB = b"REDIS0009" + b"\xff" + b"\x00" * 8


def _random_call(rng: random.Random, state: dict) -> list[bytes]:
    """One command of a master's stream: mostly XADDs with the next ID, sometimes odd ones."""
    roll = rng.random()
    if roll < 0.03:
        return [b"SET", b"k%d" % rng.randrange(3), b"v"]
    if roll < 0.05:
        return [b"SELECT", b"%d" % rng.randrange(2)]
    key = rng.choice([b"s", b"s", b"s", b"t", b"k0"])
    ms, seq = state.setdefault(key, (rng.randrange(1, 10**6), 0))
    roll = rng.random()
    if roll < 0.7:
        seq += 1
    elif roll < 0.85:
        ms += rng.randrange(1, 1000)
        seq = rng.randrange(3)
    elif roll < 0.88:
        seq = max(0, seq - 1)  # not above the last: refused
    elif key == b"t" and roll < 0.9:
        # The longest IDs ("t" only: past them, every later XADD to the key is refused).
        ms = rng.choice([10**18 - 1 - rng.randrange(5),  # 18 digits
                         10**18 + rng.randrange(5),  # 19 digits
                         18446744073709551615 - rng.randrange(3)])  # the largest
    state[key] = (ms, seq)
    eid = b"%d-%d" % (ms, seq)
    if rng.random() < 0.03:
        # (Never "*": a master sends none, and each server would use its own clock.)
        eid = rng.choice([b"0%d-%d" % (ms, seq), b"%d" % ms, b"%d-*" % ms, b"0-0"])
    name = rng.choice([b"XADD", b"XADD", b"xadd", b"XaDd"])
    pairs = rng.choice([1, 1, 1, 2, 3])
    fields: list[bytes] = []
    for i in range(pairs):
        field = rng.choice([b"f", b"f", b"g%d" % i, b"", b"\r\n"])
        size = rng.choice([0, 1, 5, 127, 128, 300, 5000])
        value = bytes(rng.randrange(256) for _ in range(min(size, 40))) * (size // 40 + 1)
        fields += [field, value[:size]]
    if rng.random() < 0.01:
        fields.pop()  # an even argument count: the ordinary path's error
    return [name, key, eid, *fields]


def _feed(master: ScriptedMaster, data: bytes, rng: random.Random) -> None:
    pos = 0
    while pos < len(data):
        size = rng.choice([1, 7, 100, 1000, 4096, 20000])
        master.send(data[pos:pos + size])
        pos += size


def _ack(master: ScriptedMaster, offset: int) -> int:
    """GETACK, and the first ACK at or past offset (earlier periodic ones say less)."""
    master.send(encode_command("REPLCONF", "GETACK", "*"))
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        message = master.expect()
        assert message[:2] == [b"REPLCONF", b"ACK"], message
        if int(message[2]) >= offset:
            return int(message[2])
    raise AssertionError(f"no ACK reached {offset}")


def _attach(master: ScriptedMaster) -> None:
    master.accept()
    master.handshake()
    master.send(b"+FULLRESYNC " + b"a" * 40 + b" 0\r\n")
    master.send(b"$%d\r\n" % len(EMPTY_RDB) + EMPTY_RDB)


def _events(port: int) -> tuple[redis.client.PubSub, redis.Redis]:
    client = redis.Redis(port=port)
    client.config_set("notify-keyspace-events", "KEA")
    pubsub = client.pubsub()
    pubsub.psubscribe("__keyevent@*__:*")
    pubsub.get_message(timeout=2)
    return pubsub, client


def _drain(pubsub: redis.client.PubSub) -> list[tuple[bytes, bytes]]:
    got = []
    while (message := pubsub.get_message(timeout=0.5)) is not None:
        if message["type"] == "pmessage":
            got.append((message["channel"], message["data"]))
    return got


@pytest.mark.skipif(REDIS70 is None, reason="redis-server is not installed: a Rivulet replica's "
                    "XADD runs were NOT compared with a Redis replica's")
@pytest.mark.parametrize("seed", [1, 2])
def test_randomized_stream_matches_a_redis_replica(tmp_path, seed) -> None:
    rng = random.Random(seed)
    state: dict = {}
    script: list[list[bytes]] = []
    for _ in range(2500):
        if rng.random() < 0.01:
            script += [[b"MULTI"], *[_random_call(rng, state) for _ in range(rng.randrange(1, 6))],
                       [b"EXEC"]]
        else:
            script.append(_random_call(rng, state))
    script.append([b"SELECT", b"0"])
    stream = b"".join(encode_command(*argv) for argv in script)
    theirs_master, ours_master = ScriptedMaster(), ScriptedMaster()
    procs: list = []
    try:
        theirs = RedisServer(None, "--replicaof", "127.0.0.1", str(theirs_master.port)).start()
        procs.append(theirs)
        ours = ServerProcess("--replicaof", f"127.0.0.1 {ours_master.port}", "--appendonly", "yes",
                             data_dir=str(tmp_path)).start()
        procs.append(ours)
        replicas = [(theirs_master, theirs.port), (ours_master, ours.port)]
        events = []
        for master, port in replicas:
            _attach(master)
            r = redis.Redis(port=port)
            wait_until(lambda r=r: info(r)["master_link_status"] == "up", what="the link")
            events.append(_events(port))
        for master, _ in replicas:
            _feed(master, stream, random.Random(seed))
        acked = [_ack(master, len(stream)) for master, _ in replicas]
        assert acked == [len(stream), len(stream)]
        theirs_client, ours_client = redis.Redis(port=theirs.port), redis.Redis(port=ours.port)
        expected = dataset(theirs_client)
        assert expected, "nothing was applied"
        same_dataset(theirs_client, ours_client)
        # The GETACK counts once it ran.
        getack = len(encode_command("REPLCONF", "GETACK", "*"))
        assert info(ours_client)["slave_repl_offset"] == str(len(stream) + getack)
        theirs_events, ours_events = (_drain(pubsub) for pubsub, _ in events)
        assert ours_events == theirs_events and ours_events
        for pubsub, client in events:
            pubsub.close()
            client.close()
        # The replica's AOF, loaded by a server of its own, rebuilds the same data.
        ours.stop()
        alone = ServerProcess("--appendonly", "yes", data_dir=str(tmp_path)).start()
        procs.append(alone)
        assert restrict(expected, dataset(redis.Redis(port=alone.port))) == expected
    finally:
        for proc in procs:
            proc.cleanup()
        theirs_master.close()
        ours_master.close()
