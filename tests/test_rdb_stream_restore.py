"""Streams through DUMP / RESTORE: payloads of Redis 7.4 and 7.0 restored in Rivulet, and
Rivulet's restored in Redis 7.4, each side's XINFO STREAM FULL compared with the other's."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import redis

from server.rdb.primitives import RdbWriter, crc64
from server.rdb.stream_codec import EXTRAS_AUX_NAME, extras_aux_value, write_stream
from tests.dump_helpers import payload_body, redis74, redis74_binary  # noqa: F401 (fixture)
from tests.serverproc import free_port, wait_for_port
from tests.test_rdb_stream import (
    PAYLOADS_74,
    SCENARIOS,
    _engine_stream,
    _with_release,
    raw_client,
    redis_full,
    run_scenario,
    same_full,
    same_full_as_70,
)


def full_of(c: redis.Redis, key: str = "s", active_time: bool = True) -> dict[str, Any]:
    return redis_full(c.execute_command("XINFO", "STREAM", key, "FULL", "COUNT", "0"),
                      active_time=active_time)


@pytest.mark.parametrize("name", sorted(PAYLOADS_74))
def test_74_payload_restores_and_dumps_back_identical(r: redis.Redis, name: str) -> None:
    c = raw_client(r)
    case = PAYLOADS_74[name]
    payload = bytes.fromhex(case["payload"])
    c.execute_command("DEL", "s")
    assert c.execute_command("RESTORE", "s", 0, payload) == b"OK"
    assert c.execute_command("TYPE", "s") == b"stream"
    assert same_full(full_of(c), redis_full(case["xinfo_full"]))
    assert payload_body(c.dump("s")) == payload_body(payload)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_redis70_dump_restores_in_rivulet(r: redis.Redis, real_redis: Any, name: str) -> None:
    theirs = redis.Redis(port=real_redis.port, protocol=2)
    theirs.response_callbacks.clear()
    run_scenario(theirs, name)
    payload = theirs.dump("s")
    c = raw_client(r)
    c.execute_command("DEL", "s")
    assert c.execute_command("RESTORE", "s", 0, payload) == b"OK"
    # Redis 7.0 has no consumer active-time (type 19, and XINFO without it).
    assert same_full_as_70(full_of(c, active_time=False), full_of(theirs, active_time=False))


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_rivulet_dump_restores_in_live_74(r: redis.Redis, redis74: redis.Redis,  # noqa: F811
                                          name: str) -> None:
    ours = raw_client(r)
    run_scenario(ours, name)
    payload = ours.dump("s")
    theirs = raw_client(redis74)
    theirs.flushall()
    assert theirs.execute_command("RESTORE", "s", 0, payload) == b"OK"
    assert same_full_as_70(full_of(ours), full_of(theirs))
    # What 7.4 dumps of it is what Rivulet dumped.
    assert payload_body(theirs.dump("s")) == payload_body(payload)


def test_restore_of_damaged_stream_payloads_is_refused(r: redis.Redis) -> None:
    c = raw_client(r)
    payload = bytes.fromhex(PAYLOADS_74["groups_and_pels"]["payload"])
    # The first node's key one byte short, under a correct CRC: the value's checks refuse it.
    body = bytearray(payload_body(payload))
    assert body[2] == 16
    body[2] = 15
    head = bytes(body) + payload[-10:-8]
    damaged = head + crc64(head).to_bytes(8, "little")
    with pytest.raises(redis.ResponseError, match="Bad data format"):
        c.execute_command("RESTORE", "bad", 0, damaged)
    assert c.execute_command("EXISTS", "bad") == 0
    assert c.execute_command("PING") == b"PONG"


def test_released_and_idempotency_state_is_what_74_loses(r: redis.Redis,
                                                          redis74: redis.Redis) -> None:  # noqa: F811
    ours = raw_client(r)
    ours.execute_command("DEL", "s")
    ours.execute_command("XADD", "s", "IDMP", "producer", "iid-1", "*", "f", "v")
    for i in range(5):
        ours.execute_command("XADD", "s", "*", "f", i)
    ours.execute_command("XGROUP", "CREATE", "s", "g", "0")
    ours.execute_command("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    first = ours.execute_command("XRANGE", "s", "-", "+", "COUNT", "1")[0][0]
    assert ours.execute_command("XNACK", "s", "g", "FAIL", "IDS", 1, first) == 1
    payload = ours.dump("s")
    theirs = raw_client(redis74)
    theirs.flushall()
    assert theirs.execute_command("RESTORE", "s", 0, payload) == b"OK"
    mine = full_of(ours)
    got = full_of(theirs)
    # The released entry (pending, owned by no consumer) is not in 7.4's group PEL.
    assert mine["groups"][0]["pel-count"] == 6
    assert got["groups"][0]["pel-count"] == 5
    assert first not in [row[0] for row in got["groups"][0]["pending"]]
    got["groups"][0]["pending"].insert(0, mine["groups"][0]["pending"][0])
    got["groups"][0]["pel-count"] = 6
    assert got == mine


def test_file_with_extras_aux_field_loads_in_74(tmp_path: Path) -> None:
    """A dump.rdb carrying a stream's extras in an AUX field after the key: Redis 7.4 loads it,
    skipping the field, with the stream as a type-21 payload gives it."""
    binary = redis74_binary()
    if binary is None:
        pytest.skip("NOT TESTED against a live Redis 7.4 (no binary at RIVULET_REDIS74 or "
                    "/tmp/redis74/src/redis-server): a file with the extras AUX field loading there")
    s = _with_release(_engine_stream())
    value = RdbWriter()
    write_stream(value, s)
    v = value.getvalue()
    w = RdbWriter()
    w.raw(b"REDIS0012")
    w.type(254)  # SELECTDB 0
    w.length(0)
    w.raw(v[:1])
    w.string(b"mystream")
    w.raw(v[1:])
    aux = extras_aux_value(0, b"mystream", s)
    assert aux is not None
    w.type(250)  # AUX
    w.string(EXTRAS_AUX_NAME)
    w.string(aux)
    w.type(255)  # EOF
    data = w.getvalue()
    (tmp_path / "dump.rdb").write_bytes(data + crc64(data).to_bytes(8, "little"))
    port = free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--dir", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc)
        c = redis.Redis(port=port, protocol=2)
        c.response_callbacks.clear()
        assert payload_body(c.dump("mystream")) == v
    finally:
        proc.terminate()
        proc.wait(10)
