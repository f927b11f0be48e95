"""examples/consumer.py keeps its promises: own history first, then new entries, every entry acked,
and the entries of a consumer that died are claimed and processed by a live one.

Run against our server and, as a check of the example itself, against a real Redis.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest
import redis

from tests.serverproc import ROOT

STREAM, GROUP = "mystream", "mygroup"
LINE = re.compile(r"^\[(\w+)\] (\d+-\d+) = ")


@pytest.fixture(params=["rivulet", "redis"])
def port(request: pytest.FixtureRequest) -> int:
    proc = request.getfixturevalue("server" if request.param == "rivulet" else "real_redis")
    with redis.Redis(port=proc.port) as c:
        c.flushall()
    return proc.port


@pytest.fixture
def client(port: int) -> Iterator[redis.Redis]:
    with redis.Redis(port=port, decode_responses=True) as c:
        yield c


def produce(port: int, count: int) -> list[str]:
    out = subprocess.run([sys.executable, "examples/producer.py", "--port", str(port),
                          "--stream", STREAM, "--count", str(count)],
                         cwd=ROOT, capture_output=True, text=True, timeout=30, check=True).stdout
    return out.split()


def consumer_argv(port: int, name: str, *extra: str) -> list[str]:
    return [sys.executable, "examples/consumer.py", "--port", str(port), "--stream", STREAM,
            "--group", GROUP, "--consumer", name, *extra]


def run_consumer(port: int, name: str, *extra: str) -> list[str]:
    """Run a consumer to its own end; the entry IDs it processed, in order."""
    done = subprocess.run(consumer_argv(port, name, *extra), cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return processed_ids(done.stdout, name)


def processed_ids(output: str, name: str) -> list[str]:
    return [m.group(2) for m in map(LINE.match, output.splitlines()) if m and m.group(1) == name]


def pending_count(client: redis.Redis) -> int:
    return client.xpending(STREAM, GROUP)["pending"]


def test_history_first_then_new_entries(port: int, client: redis.Redis) -> None:
    ids = produce(port, 30)
    assert len(ids) == 30

    # carol reads a batch of 10 but stops after 5: the other 5 stay pending for her.
    first = run_consumer(port, "carol", "--count", "10", "--max-messages", "5")
    assert first == ids[:5]
    assert pending_count(client) == 5
    assert [p["message_id"] for p in client.xpending_range(STREAM, GROUP, "-", "+", 100)] == ids[5:10]

    # Restarted, carol first finishes her own history, then takes the new entries, in order.
    second = run_consumer(port, "carol", "--count", "10", "--block", "100", "--idle-exit", "0.5")
    assert second == ids[5:]
    assert pending_count(client) == 0
    assert client.xinfo_groups(STREAM)[0]["last-delivered-id"] == ids[-1]


def test_max_messages_stops_the_consumer(port: int, client: redis.Redis) -> None:
    ids = produce(port, 12)
    got = run_consumer(port, "dave", "--count", "4", "--max-messages", "7")
    assert got == ids[:7]
    assert pending_count(client) == 1  # the unprocessed rest of the second batch of 4


def test_entries_of_a_dead_consumer_are_claimed(port: int, client: redis.Redis) -> None:
    ids = produce(port, 100)
    client.xgroup_create(STREAM, GROUP, id="0")
    bob = subprocess.Popen(consumer_argv(port, "bob", "--count", "10", "--delay", "0.05"),
                           cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    alice = subprocess.Popen(
        consumer_argv(port, "alice", "--count", "10", "--delay", "0.01", "--block", "100",
                      "--claim-idle", "300", "--claim-every", "0.2", "--idle-exit", "2"),
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        bob_lines = []
        assert bob.stdout is not None
        while len(processed_ids("\n".join(bob_lines), "bob")) < 5:
            line = bob.stdout.readline()
            assert line, "bob exited before processing 5 entries"
            bob_lines.append(line.rstrip("\n"))
        bob.send_signal(signal.SIGKILL)  # a crash: bob's unprocessed batch stays pending forever
        bob_lines += bob.communicate(timeout=10)[0].splitlines()
        alice_out, alice_err = alice.communicate(timeout=60)
    finally:
        for proc in (bob, alice):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert alice.returncode == 0, alice_err

    by_bob = processed_ids("\n".join(bob_lines), "bob")
    by_alice = processed_ids(alice_out, "alice")
    assert set(by_bob) | set(by_alice) == set(ids)  # nothing lost
    # At least once: only an entry bob processed but had no time to ack may be processed twice.
    assert len(by_bob) + len(by_alice) - len(ids) <= 1
    assert re.search(r"^\[alice\] claimed \d+ idle entries$", alice_out, re.M)
    assert pending_count(client) == 0
    consumers = {c["name"]: c["pending"] for c in client.xinfo_consumers(STREAM, GROUP)}
    assert consumers.get("bob", 0) == 0
