"""The replication state and backlog on their own (pure data structures, no server): Redis's
rules for offsets, the circular backlog, replication IDs and when PSYNC can continue."""

from __future__ import annotations

import random

from server.replication.backlog import MIN_SIZE, Backlog
from server.replication.state import NO_REPLID, ReplicationState


def test_backlog_keeps_the_last_size_bytes_across_wraps() -> None:
    rng = random.Random(7)
    backlog = Backlog(MIN_SIZE, 1)
    model = bytearray()
    for _ in range(400):
        chunk = bytes(rng.getrandbits(8) for _ in range(rng.choice([1, 17, 500, 3000])))
        backlog.append(chunk)
        model += chunk
        held = bytes(model[-MIN_SIZE:])
        assert backlog.histlen == len(held)
        assert backlog.first_byte_offset == len(model) - len(held) + 1
        assert backlog.read_from(backlog.first_byte_offset) == held
        some = backlog.first_byte_offset + rng.randrange(backlog.histlen + 1)
        assert backlog.read_from(some) == bytes(model[some - 1:])


def test_backlog_append_larger_than_size_and_resize() -> None:
    backlog = Backlog(100, 1)  # raised to the minimum, as Redis does
    assert backlog.size == MIN_SIZE
    data = bytes(range(256)) * 200
    backlog.append(data)
    assert backlog.read_from(backlog.first_byte_offset) == data[-MIN_SIZE:]
    backlog.resize(MIN_SIZE * 2)
    assert backlog.read_from(backlog.first_byte_offset) == data[-MIN_SIZE:]
    backlog.append(b"xyz")
    assert backlog.read_from(backlog.first_byte_offset) == data[-MIN_SIZE:] + b"xyz"
    backlog.resize(MIN_SIZE)
    assert backlog.read_from(backlog.first_byte_offset) == (data + b"xyz")[-MIN_SIZE:]
    assert backlog.first_byte_offset + backlog.histlen == len(data) + 3 + 1


def test_feed_without_backlog_does_not_move_the_offset() -> None:
    state = ReplicationState()
    state.feed(b"abc")
    assert state.master_repl_offset == 0
    old = state.replid
    state.start_master_history()
    assert state.replid != old and len(state.replid) == 40
    assert state.replid2 == NO_REPLID and state.second_replid_offset == -1
    state.feed(b"abc")
    assert state.master_repl_offset == 3
    assert state.backlog is not None and state.backlog.first_byte_offset == 1


def test_partial_resync_rules() -> None:
    state = ReplicationState()
    state.start_master_history()
    state.feed(b"x" * 100)
    replid = state.replid
    assert state.can_continue(replid, 1)
    assert state.can_continue(replid.upper(), 101)  # replica up to date
    assert not state.can_continue(replid, 102)  # beyond what exists
    assert not state.can_continue(replid, 0)
    assert not state.can_continue("?", -1)
    assert not state.can_continue("f" * 40, 50)
    assert state.backlog_from(91) == b"x" * 10
    # Promotion: the old history stays valid up to the next byte.
    state.shift_replid()
    assert state.replid2 == replid and state.second_replid_offset == 101
    state.feed(b"y" * 10)
    assert state.can_continue(replid, 101)
    assert state.backlog_from(101) == b"y" * 10
    assert not state.can_continue(replid, 102)
    refusal = state.partial_resync_refusal(replid, 102)
    assert refusal is not None and "Requested offset for second ID was 102" in refusal
    assert state.can_continue(state.replid, 111)


def test_adopt_a_master_history() -> None:
    state = ReplicationState()
    state.adopt("a" * 40, 5000)
    assert state.master_repl_offset == 5000 and state.replid2 == NO_REPLID
    state.feed(b"hello")
    assert state.can_continue("a" * 40, 5001)
    assert state.backlog_from(5001) == b"hello"
    fields = dict(state.info_fields())
    assert fields["repl_backlog_first_byte_offset"] == 5001
    assert fields["repl_backlog_histlen"] == 5 and fields["master_repl_offset"] == 5005
