"""Blocking list pops against real servers: who gets a pushed element, chains of BLMOVE, type
changes, transactions, timeouts, CLIENT UNBLOCK. Scenarios whose replies are deterministic run
on Rivulet and on Redis and must give the same bytes."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
import redis

from tests.helpers import blocked_clients, call_raw, encode_command, read_reply, wait_blocked
from tests.serverproc import RawConnection

Scenario = Callable[[int], list[bytes]]


class Clients:
    """Raw connections to one server, opened on demand, on a flushed server."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.conns: dict[str, RawConnection] = {}
        self.admin = redis.Redis(port=port)
        self.admin.flushall()

    def __getitem__(self, name: str) -> RawConnection:
        if name not in self.conns:
            self.conns[name] = RawConnection(self.port)
        return self.conns[name]

    def call(self, name: str, *args: str) -> bytes:
        return call_raw(self[name], *args)

    def send(self, name: str, *args: str) -> None:
        self[name].send(encode_command(*args))

    def reply(self, name: str) -> bytes:
        return read_reply(self[name])

    def block(self, name: str, *args: str) -> None:
        """Send a blocking command and wait until the server has parked it."""
        before = blocked_clients(self.admin)
        self.send(name, *args)
        wait_blocked(self.admin, before + 1)

    def close(self) -> None:
        for conn in self.conns.values():
            conn.close()
        self.admin.close()


def run(port: int, scenario: Callable[[Clients], list[bytes]]) -> list[bytes]:
    c = Clients(port)
    try:
        return scenario(c)
    finally:
        c.close()


def first_waiter_gets_the_element(c: Clients) -> list[bytes]:
    c.block("a", "BLPOP", "k", "0")
    c.block("b", "BLPOP", "k", "0")
    out = [c.call("p", "LPUSH", "k", "x"), c.reply("a")]
    wait_blocked(c.admin, 1)
    out += [c.call("p", "RPUSH", "k", "y", "z"), c.reply("b"), c.call("p", "LRANGE", "k", "0",
                                                                          "-1")]
    return out


def one_push_serves_waiters_in_order(c: Clients) -> list[bytes]:
    c.block("a", "BRPOP", "k", "0")
    c.block("b", "BLPOP", "k", "0")
    c.block("c", "BLMPOP", "0", "1", "k", "LEFT", "COUNT", "5")
    return [c.call("p", "LPUSH", "k", "a", "b", "c", "d"), c.reply("a"), c.reply("b"),
            c.reply("c"), c.call("p", "EXISTS", "k")]


def blmove_serves_a_client_waiting_on_its_destination(c: Clients) -> list[bytes]:
    c.block("mover", "BLMOVE", "src", "dst", "LEFT", "RIGHT", "0")
    c.block("popper", "BLPOP", "dst", "0")
    c.block("mover2", "BRPOPLPUSH", "dst2", "src", "0")
    return [c.call("p", "RPUSH", "src", "x"), c.reply("mover"), c.reply("popper"),
            c.call("p", "EXISTS", "src", "dst"), c.call("p", "RPUSH", "dst2", "y"),
            c.reply("mover2"), c.call("p", "LRANGE", "src", "0", "-1")]


def blmove_chain_through_several_keys(c: Clients) -> list[bytes]:
    c.block("m1", "BLMOVE", "k1", "k2", "RIGHT", "LEFT", "0")
    c.block("m2", "BLMOVE", "k2", "k3", "RIGHT", "LEFT", "0")
    c.block("m3", "BRPOPLPUSH", "k3", "k1", "0")
    return [c.call("p", "RPUSH", "k1", "v"), c.reply("m1"), c.reply("m2"), c.reply("m3"),
            c.call("p", "LRANGE", "k1", "0", "-1"), c.call("p", "EXISTS", "k2", "k3")]


def several_keys_and_the_same_key_twice(c: Clients) -> list[bytes]:
    c.block("a", "BLPOP", "k1", "k2", "k1", "0")
    out = [c.call("p", "RPUSH", "k2", "x"), c.reply("a")]
    c.block("b", "BRPOP", "k1", "k2", "k1", "0")
    out += [c.call("p", "RPUSH", "k1", "y"), c.reply("b")]
    return out


def push_and_del_in_one_transaction_wakes_nobody(c: Clients) -> list[bytes]:
    c.block("a", "BLPOP", "k", "0")
    out = [c.call("p", "MULTI"), c.call("p", "LPUSH", "k", "x"), c.call("p", "DEL", "k"),
           c.call("p", "EXEC")]
    out += [c.call("p", "MULTI"), c.call("p", "LPUSH", "k", "x"), c.call("p", "DEL", "k"),
            c.call("p", "SET", "k", "str"), c.call("p", "EXEC"), c.call("p", "DEL", "k")]
    out += [c.call("p", "RPUSH", "k", "late"), c.reply("a")]
    return out


def transaction_pushes_are_seen_together(c: Clients) -> list[bytes]:
    c.block("a", "BLPOP", "k", "0")
    return [c.call("p", "MULTI"), c.call("p", "LPUSH", "k", "a"), c.call("p", "LPUSH", "k", "b"),
            c.call("p", "LPUSH", "k", "c"), c.call("p", "EXEC"), c.reply("a"),
            c.call("p", "LRANGE", "k", "0", "-1")]


def key_of_another_type_does_not_wake(c: Clients) -> list[bytes]:
    c.block("a", "BLPOP", "k", "0")
    out = [c.call("p", "SET", "k", "str"), c.call("p", "DEL", "k"),
           c.call("p", "RPUSH", "k", "x"), c.reply("a")]
    return out


def woken_by_a_list_while_another_key_is_a_string(c: Clients) -> list[bytes]:
    # The re-run looks at every key in order again: a key that became a string fails it.
    c.block("a", "BLPOP", "k1", "k2", "0")
    return [c.call("p", "SET", "k1", "str"), c.call("p", "RPUSH", "k2", "x"), c.reply("a"),
            c.call("p", "LLEN", "k2")]


def wrong_destination_type_when_woken(c: Clients) -> list[bytes]:
    c.block("a", "BRPOPLPUSH", "src", "dst", "0")
    return [c.call("p", "SET", "dst", "str"), c.call("p", "RPUSH", "src", "foo"), c.reply("a"),
            c.call("p", "LRANGE", "src", "0", "-1")]


def key_moved_into_place(c: Clients) -> list[bytes]:
    c.block("a", "BLPOP", "foo", "0")
    return [c.call("p", "LPUSH", "bar", "hello"), c.call("p", "RENAME", "bar", "foo"),
            c.reply("a")]


def list_and_stream_waiters_on_one_key(c: Clients) -> list[bytes]:
    c.block("s", "XREAD", "BLOCK", "0", "STREAMS", "k", "$")
    c.block("l", "BLPOP", "k", "0")
    out = [c.call("p", "LPUSH", "k", "x"), c.reply("l"), c.call("p", "EXISTS", "k")]
    out += [c.call("p", "XADD", "k", "1-1", "f", "v"), c.reply("s")]
    return out


def blocked_pops_propagate_as_their_plain_forms(c: Clients) -> list[bytes]:
    # What each woken command leaves behind is checked through the data here; the AOF test
    # checks the commands written.
    c.block("a", "BLMPOP", "0", "2", "x", "k", "RIGHT", "COUNT", "2")
    return [c.call("p", "RPUSH", "k", "1", "2", "3"), c.reply("a"),
            c.call("p", "LRANGE", "k", "0", "-1")]


def circular_brpoplpush(c: Clients) -> list[bytes]:
    c.block("a", "BRPOPLPUSH", "list1", "list2", "0")
    c.block("b", "BRPOPLPUSH", "list2", "list1", "0")
    return [c.call("p", "RPUSH", "list1", "foo"), c.reply("a"), c.reply("b"),
            c.call("p", "LRANGE", "list1", "0", "-1"), c.call("p", "LRANGE", "list2", "0", "-1")]


def self_referential_brpoplpush(c: Clients) -> list[bytes]:
    c.block("a", "BRPOPLPUSH", "blist", "blist", "0")
    return [c.call("p", "RPUSH", "blist", "foo"), c.reply("a"),
            c.call("p", "LRANGE", "blist", "0", "-1")]


def failed_first_waiter_leaves_the_element_to_the_next(c: Clients) -> list[bytes]:
    c.block("a", "BRPOPLPUSH", "blist", "target1", "0")
    c.block("b", "BRPOPLPUSH", "blist", "target2", "0")
    return [c.call("p", "SET", "target1", "nolist"), c.call("p", "RPUSH", "blist", "foo"),
            c.reply("a"), c.reply("b"), c.call("p", "LRANGE", "target2", "0", "-1"),
            c.call("p", "EXISTS", "blist")]


def failure_keeps_the_order_of_elements(c: Clients) -> list[bytes]:
    c.block("a", "BRPOPLPUSH", "blist", "target", "0")
    return [c.call("p", "SET", "target", "nolist"), c.call("p", "RPUSH", "blist", "a", "b", "c"),
            c.reply("a"), c.call("p", "LRANGE", "blist", "0", "-1")]


def key_expired_when_served_blocks_again(c: Clients) -> list[bytes]:
    # DEBUG is refused by the installed Redis: this one runs on Rivulet alone.
    c.block("a", "BLPOP", "k", "0")
    out = [c.call("p", "MULTI"), c.call("p", "RPUSH", "k", "hello"),
           c.call("p", "PEXPIRE", "k", "50"), c.call("p", "DEBUG", "SLEEP", "0.1"),
           c.call("p", "EXEC")]
    wait_blocked(c.admin, 1)
    out += [c.call("p", "RPUSH", "k", "again"), c.reply("a")]
    return out


def linked_lmoves(c: Clients) -> list[bytes]:
    c.block("a", "BLMOVE", "list1", "list2", "RIGHT", "LEFT", "0")
    c.block("b", "BLMOVE", "list2", "list3", "LEFT", "RIGHT", "0")
    return [c.call("p", "RPUSH", "list1", "foo"), c.reply("a"), c.reply("b"),
            c.call("p", "EXISTS", "list1", "list2"), c.call("p", "LRANGE", "list3", "0", "-1")]


def replies_before_a_pop_in_one_read_leave_while_it_waits(c: Clients) -> list[bytes]:
    c["a"].send(encode_command("PING") + encode_command("ECHO", "before")
                + encode_command("BLPOP", "k", "0"))
    wait_blocked(c.admin, 1)
    out = [c.reply("a"), c.reply("a")]  # read while the pop still waits
    return out + [c.call("p", "RPUSH", "k", "x"), c.reply("a")]


def repeated_hand_offs(c: Clients) -> list[bytes]:
    # Each pop empties the list, deleting the key its own client waits on while it is served:
    # every later push must still wake the client parked again.
    out: list[bytes] = []
    for i in range(4):
        c.block("a", "BLPOP", "k", "0")
        out += [c.call("p", "LPUSH", "k", f"e{i}"), c.reply("a")]
    return out + [c.call("p", "EXISTS", "k")]


SCENARIOS = [replies_before_a_pop_in_one_read_leave_while_it_waits, repeated_hand_offs,
             circular_brpoplpush, self_referential_brpoplpush,
             failed_first_waiter_leaves_the_element_to_the_next,
             failure_keeps_the_order_of_elements,
             linked_lmoves,
             first_waiter_gets_the_element, one_push_serves_waiters_in_order,
             blmove_serves_a_client_waiting_on_its_destination, blmove_chain_through_several_keys,
             several_keys_and_the_same_key_twice, push_and_del_in_one_transaction_wakes_nobody,
             transaction_pushes_are_seen_together, key_of_another_type_does_not_wake,
             wrong_destination_type_when_woken,
             key_moved_into_place, list_and_stream_waiters_on_one_key,
             blocked_pops_propagate_as_their_plain_forms]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.__name__ for s in SCENARIOS])
def test_blocking_scenario_same_as_redis(server, real_redis, scenario) -> None:
    ours = run(server.port, scenario)
    theirs = run(real_redis.port, scenario)
    assert ours == theirs
    wait_blocked(redis.Redis(port=server.port), 0)


def test_first_waiter_gets_the_element_replies(server) -> None:
    assert run(server.port, first_waiter_gets_the_element) == [
        b":1\r\n", b"*2\r\n$1\r\nk\r\n$1\r\nx\r\n", b":2\r\n", b"*2\r\n$1\r\nk\r\n$1\r\ny\r\n",
        b"*1\r\n$1\r\nz\r\n"]


def test_blmove_chain_replies(server) -> None:
    assert run(server.port, blmove_serves_a_client_waiting_on_its_destination) == [
        b":1\r\n", b"$1\r\nx\r\n", b"*2\r\n$3\r\ndst\r\n$1\r\nx\r\n", b":0\r\n", b":1\r\n",
        b"$1\r\ny\r\n", b"*1\r\n$1\r\ny\r\n"]


def test_woken_pop_runs_again_over_every_key_as_redis_7_4(server) -> None:
    # Redis 7.4 re-runs a woken command whole (blocked.c unblockClientOnKey ->
    # processCommandAndResetClient): BLPOP k1 k2 meets k1, now a string, first and fails.
    # Redis 7.0 served the ready key k2 directly and answered [k2, x].
    assert run(server.port, woken_by_a_list_while_another_key_is_a_string) == [
        b"+OK\r\n", b":1\r\n",
        b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", b":1\r\n"]


def test_key_expired_when_served_blocks_again(server) -> None:
    assert run(server.port, key_expired_when_served_blocks_again) == [
        b"+OK\r\n", b"+QUEUED\r\n", b"+QUEUED\r\n", b"+QUEUED\r\n",
        b"*3\r\n:1\r\n:1\r\n+OK\r\n", b":1\r\n", b"*2\r\n$1\r\nk\r\n$5\r\nagain\r\n"]


def test_push_and_del_in_multi_leaves_the_waiter_blocked(server) -> None:
    out = run(server.port, push_and_del_in_one_transaction_wakes_nobody)
    assert out[-1] == b"*2\r\n$1\r\nk\r\n$4\r\nlate\r\n"


def test_resp3_reply_of_a_woken_pop(server) -> None:
    c = Clients(server.port)
    try:
        c.call("a", "HELLO", "3")
        c.block("a", "BLMPOP", "0", "1", "k", "LEFT", "COUNT", "2")
        c.call("p", "RPUSH", "k", "1", "2", "3")
        assert c.reply("a") == b"*2\r\n$1\r\nk\r\n*2\r\n$1\r\n1\r\n$1\r\n2\r\n"
        c.block("a", "BLPOP", "none", "0.05")
        assert c.reply("a") == b"_\r\n"
    finally:
        c.close()


@pytest.mark.parametrize("timeout,low,high", [("0.1", 0.08, 1.0), ("0.25", 0.22, 1.2)])
def test_fractional_timeouts(server, timeout, low, high) -> None:
    c = Clients(server.port)
    try:
        for command in (["BLPOP", "k", timeout], ["BRPOP", "k", timeout],
                        ["BLMOVE", "k", "d", "LEFT", "LEFT", timeout],
                        ["BRPOPLPUSH", "k", "d", timeout],
                        ["BLMPOP", timeout, "1", "k", "LEFT"]):
            t0 = time.monotonic()
            assert c.call("a", *command) == b"*-1\r\n"
            assert low <= time.monotonic() - t0 < high, command
    finally:
        c.close()


def test_timeout_errors(r) -> None:
    from tests.helpers import err
    assert err(r, "BLPOP", "k", "-1") == "timeout is negative"
    assert err(r, "BLPOP", "k", "abc") == "timeout is not a float or out of range"
    assert err(r, "BLMOVE", "k", "d", "LEFT", "LEFT", "inf") == "timeout is out of range"
    assert err(r, "BLMPOP", "abc", "1", "k", "LEFT") == "timeout is not a float or out of range"
    # Redis 7.4 checks the milliseconds against LLONG_MAX before converting them; 7.0 let them
    # overflow and answered "timeout is negative".
    assert err(r, "BLPOP", "k", "0x7FFFFFFFFFFFFF") == "timeout is out of range"
    assert err(r, "BRPOP", "k", "1e400") == "timeout is out of range"
    # BLMPOP checks its other arguments before the timeout, as Redis does.
    assert err(r, "BLMPOP", "abc", "0", "k", "LEFT") == "numkeys should be greater than 0"


def test_client_unblock(server) -> None:
    c = Clients(server.port)
    try:
        cid = c.call("a", "CLIENT", "ID").strip()[1:].decode()
        c.block("a", "BLPOP", "k", "0")
        assert c.call("p", "CLIENT", "UNBLOCK", cid) == b":1\r\n"
        assert c.reply("a") == b"*-1\r\n"
        c.block("a", "BLMOVE", "k", "d", "LEFT", "LEFT", "0")
        assert c.call("p", "CLIENT", "UNBLOCK", cid, "ERROR") == b":1\r\n"
        assert c.reply("a") == b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
        assert c.call("p", "CLIENT", "UNBLOCK", cid) == b":0\r\n"
        # Nothing is left waiting: a push now stays in the list.
        assert c.call("p", "RPUSH", "k", "v") == b":1\r\n"
        assert c.call("p", "LLEN", "k") == b":1\r\n"
    finally:
        c.close()


def test_pipelined_commands_after_a_blocked_pop_wait_for_it(server) -> None:
    c = Clients(server.port)
    try:
        c["a"].send(encode_command("BLPOP", "k", "0") + encode_command("LLEN", "k")
                    + encode_command("RPUSH", "k", "after"))
        wait_blocked(c.admin, 1)
        assert c.call("p", "RPUSH", "k", "x", "y") == b":2\r\n"
        assert c.reply("a") == b"*2\r\n$1\r\nk\r\n$1\r\nx\r\n"
        assert c.reply("a") == b":1\r\n"
        assert c.reply("a") == b":2\r\n"
    finally:
        c.close()


def test_disconnected_waiter_does_not_take_the_element(server) -> None:
    c = Clients(server.port)
    try:
        c.block("gone", "BLPOP", "k", "0")
        c.block("b", "BLPOP", "k", "0")
        c["gone"].close()
        del c.conns["gone"]
        wait_blocked(c.admin, 1)
        c.call("p", "RPUSH", "k", "x")
        assert c.reply("b") == b"*2\r\n$1\r\nk\r\n$1\r\nx\r\n"
    finally:
        c.close()


def test_blocking_in_another_database(server) -> None:
    c = Clients(server.port)
    try:
        c.call("a", "SELECT", "3")
        c.block("a", "BLPOP", "k", "0")
        c.call("p", "RPUSH", "k", "db0")
        c.call("p", "SELECT", "3")
        c.call("p", "RPUSH", "k", "db3")
        assert c.reply("a") == b"*2\r\n$1\r\nk\r\n$3\r\ndb3\r\n"
        assert c.call("p", "SELECT", "0") == b"+OK\r\n"
        assert c.call("p", "LLEN", "k") == b":1\r\n"
    finally:
        c.close()


def test_commandstats_count_a_blocked_pop_once(server) -> None:
    c = Clients(server.port)
    try:
        c.call("p", "CONFIG", "RESETSTAT")
        c.block("a", "BLPOP", "k", "0")
        c.call("p", "RPUSH", "k", "x")
        c.reply("a")
        assert c.call("a", "BLMOVE", "k2", "d", "LEFT", "LEFT", "0.01") == b"*-1\r\n"
        stats = c.admin.info("commandstats")
        assert stats["cmdstat_blpop"]["calls"] == 1
        assert stats["cmdstat_blmove"]["calls"] == 1
    finally:
        c.close()


def test_pipelined_pushes_wake_waiters_in_order(server) -> None:
    c = Clients(server.port)
    try:
        c.block("a", "BLPOP", "k", "0")
        c.block("b", "BRPOP", "k", "0")
        c["p"].send(b"".join(encode_command("RPUSH", "k", v) for v in ("1", "2", "3")))
        assert [c.reply("p") for _ in range(3)] == [b":1\r\n", b":2\r\n", b":3\r\n"]
        assert c.reply("a") == b"*2\r\n$1\r\nk\r\n$1\r\n1\r\n"
        assert c.reply("b") == b"*2\r\n$1\r\nk\r\n$1\r\n3\r\n"
        assert c.call("p", "LRANGE", "k", "0", "-1") == b"*1\r\n$1\r\n2\r\n"
    finally:
        c.close()
