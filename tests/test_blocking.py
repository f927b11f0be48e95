"""The blocking manager in-process: a real Server and real Clients on an event loop, no sockets.

Commands go in through `Client.run_commands`, replies are read from `client.out` (each client is
marked as already queued for the write pass, so that nothing flushes its replies away), and the
loop is run for the ready-key serving and the deadlines it schedules.

Besides the stream commands, a small blocking command family on a value type of its own (`Box`,
BLPOP-like) is registered for these tests: the manager serves it without knowing it, which is
what lists and sorted sets will rely on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from protocol.reply import NULL_ARRAY
from server.blocking import Block
from server.command_table import COMMANDS, Command, add_command
from server.config import Config
from server.connection import Client
from server.server import Server

NULL = b"*-1\r\n"
RIVULET_LOG = "rivulet"


class Box(list):
    """A value type unknown to the server: a list that test.bpop pops from."""


def _push(client: Client, argv: list[bytes]) -> Any:
    db = client.db
    box = db.get(argv[1])
    if box is None:
        db.add(argv[1], Box(argv[2:]))
    else:
        box.extend(argv[2:])
        db.signal_modified(argv[1])
        client.keyspace.signal_ready(db.index, argv[1])
    return len(db.get(argv[1]))


def _pop(client: Client, argv: list[bytes]) -> Any:
    keys = argv[1:-1]
    for key in keys:
        box = client.db.get(key)
        if box:
            value = box.pop(0)
            if not box:
                client.db.delete(key)
            return [key, value]
    return Block(keys, int(argv[-1]), NULL_ARRAY, None, Box)


def _pop_failing_on_rerun(client: Client, argv: list[bytes]) -> Any:
    if client.reprocessing:
        raise RuntimeError("re-run failed")
    return Block([argv[1]], 0, NULL_ARRAY, None, Box)


def _pop_unencodable_on_rerun(client: Client, argv: list[bytes]) -> Any:
    if client.reprocessing:
        return [b"partial", object()]
    return Block([argv[1]], 0, NULL_ARRAY, None, Box)


# test.bwait key runs remaining-ms timeout-ms: completes once it has run `runs` times, asking to be
# re-run every `every` ms meanwhile (a command that time alone lets complete, like CLAIM).
_RUNS: dict[bytes, int] = {}


def _wait_for_runs(client: Client, argv: list[bytes]) -> Any:
    key = argv[1]
    _RUNS[key] = _RUNS.get(key, 0) + 1
    if _RUNS[key] >= int(argv[2]):
        return b"done after %d runs" % _RUNS[key]
    return Block([key], int(argv[4]), NULL_ARRAY, None, Box, False, int(argv[3]))


@pytest.fixture(scope="module", autouse=True)
def box_commands() -> Iterator[None]:
    added = [
        add_command("test.push", -3, "write", handler=_push),
        add_command("test.bpop", -3, "write blocking", handler=_pop),
        add_command("test.bfail", 2, "write blocking", handler=_pop_failing_on_rerun),
        add_command("test.bbad", 2, "write blocking", handler=_pop_unencodable_on_rerun),
        add_command("test.bwait", 5, "write blocking", handler=_wait_for_runs),
    ]
    yield
    for cmd in added:
        COMMANDS.pop(cmd.name.encode(), None)


class Node:
    """One server on its own event loop, without listeners."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.server = Server(Config())
        self.server.attach_loop(self.loop)
        self.blocking = self.server.blocking

    def client(self) -> Client:
        client = Client(self.server)
        assert self.server.client_connected(client, ("127.0.0.1", 1)) is None
        client.flush_pending = True
        return client

    def run(self, client: Client, *argv: bytes | str | int) -> bytes:
        """Send one command; the replies it got at once."""
        client.run_commands([[a if isinstance(a, bytes) else str(a).encode() for a in argv]])
        return take(client)

    def settle(self, seconds: float = 0.0) -> None:
        """Run the loop: ready keys are served, due deadlines fire."""
        self.loop.run_until_complete(asyncio.sleep(seconds))
        self.loop.run_until_complete(asyncio.sleep(0))

    def close(self) -> None:
        self.loop.close()


def take(client: Client) -> bytes:
    data = b"".join(client.out)
    client.out.clear()
    return data


def cmd(name: str) -> Command:
    return COMMANDS[name.encode()]


def counters(name: str) -> tuple[int, int, int]:
    c = cmd(name)
    return c.calls, c.rejected_calls, c.failed_calls


@pytest.fixture
def node() -> Iterator[Node]:
    n = Node()
    yield n
    n.close()


def entry_reply(key: bytes, eid: bytes, field: bytes, value: bytes) -> bytes:
    return (b"*1\r\n*2\r\n$%d\r\n%b\r\n*1\r\n*2\r\n$%d\r\n%b\r\n*2\r\n$%d\r\n%b\r\n$%d\r\n%b\r\n"
            % (len(key), key, len(eid), eid, len(field), field, len(value), value))


# --- serving order and re-execution ---------------------------------------------------------------


def test_a_recheck_reruns_the_command_without_a_write(node: Node) -> None:
    # Time alone completes test.bwait (its third run): rechecks re-run it, each run that blocks
    # again setting the next; a neighbour parked on the same key is not re-run by them.
    other = node.client()
    node.run(other, "test.bpop", "k", 0)
    c = node.client()
    assert node.run(c, "test.bwait", "k", 3, 20, 0) == b""
    node.settle(0.03)
    assert _RUNS[b"k"] == 2 and take(c) == b""
    node.settle(0.03)
    assert take(c) == b"$17\r\ndone after 3 runs\r\n"
    assert take(other) == b"" and other.blocked is not None
    node.blocking.disconnected(other)


def test_a_released_client_loses_its_recheck(node: Node) -> None:
    c = node.client()
    assert node.run(c, "test.bwait", "gone", 99, 20, 10) == b""
    node.settle(0.05)  # the deadline (10 ms) comes first: the recheck timer goes with the client
    assert take(c) == NULL
    assert _RUNS[b"gone"] == 1


def test_rerun_that_blocks_again_keeps_its_place_in_line(node: Node) -> None:
    w = node.client()
    node.run(w, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    a, b, c = node.client(), node.client(), node.client()
    for i, reader in enumerate((a, b, c)):
        assert node.run(reader, "XREADGROUP", "GROUP", "g", f"c{i}", "COUNT", 1, "BLOCK", 0,
                        "STREAMS", "s", ">") == b""
    node.run(w, "XADD", "s", "1-0", "f", "1")
    node.settle()
    assert take(a) == entry_reply(b"s", b"1-0", b"f", b"1")
    # b and c ran again, found nothing and still wait; d arrives after them.
    assert take(b) == take(c) == b""
    d = node.client()
    node.run(d, "XREADGROUP", "GROUP", "g", "c3", "COUNT", 1, "BLOCK", 0, "STREAMS", "s", ">")
    for n, expected in ((2, b), (3, c), (4, d)):
        node.run(w, "XADD", "s", f"{n}-0", "f", str(n))
        node.settle()
        got = [take(x) for x in (b, c, d)]
        assert got == [entry_reply(b"s", f"{n}-0".encode(), b"f", str(n).encode())
                       if x is expected else b"" for x in (b, c, d)]
    assert node.blocking.blocked_count == 0
    assert not node.blocking.waiters


def test_rerun_that_blocks_again_keeps_its_deadline(node: Node) -> None:
    w, r = node.client(), node.client()
    node.run(w, "XADD", "s", "1-0", "f", "v")
    assert node.run(r, "XREAD", "BLOCK", 300, "STREAMS", "s", "$") == b""
    state = r.blocked
    assert state is not None and state.timer is not None
    timer, deadline = state.timer, state.timer.when()
    # A write that leaves nothing new: the re-run blocks again.
    node.run(w, "MULTI")
    node.run(w, "XADD", "s", "2-0", "f", "v")
    node.run(w, "XDEL", "s", "2-0")
    node.run(w, "EXEC")
    node.settle()
    assert take(r) == b""
    assert r.blocked is state and state.timer is timer and timer.when() == deadline
    assert node.blocking.blocked_count == 1
    node.settle(deadline - node.loop.time() + 0.02)
    assert take(r) == NULL
    assert r.blocked is None and node.blocking.blocked_count == 0


def test_dollar_is_rewritten_as_the_last_id_plus_is_not(node: Node) -> None:
    w, r = node.client(), node.client()
    node.run(w, "XADD", "s", "5-1", "f", "v")
    node.run(r, "XREAD", "BLOCK", 0, "STREAMS", "s", "missing", "$", "$")
    assert r.blocked is not None
    assert r.blocked.argv == [b"XREAD", b"BLOCK", b"0", b"STREAMS", b"s", b"missing", b"5-1", b"0-0"]
    node.blocking.client_unblock(r, with_error=False)
    assert take(r) == NULL
    sent = [b"XREAD", b"BLOCK", b"0", b"STREAMS", b"missing", b"+"]
    r.run_commands([sent])
    assert r.blocked is not None and r.blocked.argv is sent


def test_value_of_another_type_does_not_rerun_a_reader(node: Node) -> None:
    w, r = node.client(), node.client()
    node.run(r, "XREAD", "BLOCK", 0, "STREAMS", "s", "$")
    usec = cmd("xread").usec
    node.run(w, "TEST.PUSH", "s", "a box")
    node.settle()
    assert take(r) == b"" and r.blocked is not None
    node.run(w, "DEL", "s")
    node.settle()
    assert take(r) == b"" and r.blocked is not None
    assert cmd("xread").usec == usec  # not re-run at all, not even to find nothing
    node.run(w, "XADD", "s", "1-0", "f", "v")
    node.settle()
    assert take(r) == entry_reply(b"s", b"1-0", b"f", b"v")


def test_group_reader_reruns_on_a_type_change_and_fails(node: Node) -> None:
    w, r = node.client(), node.client()
    node.run(w, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    node.run(r, "XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s", ">")
    node.run(w, "SET", "s", "a string")
    node.settle()
    assert take(r) == b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
    assert r.blocked is None


def test_a_type_the_manager_does_not_know(node: Node) -> None:
    w, a, b = node.client(), node.client(), node.client()
    assert node.run(a, "TEST.BPOP", "k1", "k2", 0) == b""
    assert node.run(b, "TEST.BPOP", "k2", 0) == b""
    usec = cmd("test.bpop").usec
    node.run(w, "XADD", "k2", "1-0", "f", "v")  # the wrong type: nobody is re-run
    node.settle()
    assert take(a) == take(b) == b""
    assert cmd("test.bpop").usec == usec
    node.run(w, "DEL", "k2")
    node.run(w, "TEST.PUSH", "k2", "x", "y")
    node.settle()
    assert take(a) == b"*2\r\n$2\r\nk2\r\n$1\r\nx\r\n"
    assert take(b) == b"*2\r\n$2\r\nk2\r\n$1\r\ny\r\n"
    assert node.blocking.blocked_count == 0


def test_pipelined_commands_run_after_the_release(node: Node) -> None:
    w, r = node.client(), node.client()
    r.run_commands([[b"TEST.BPOP", b"k", b"0"], [b"PING"], [b"TEST.BPOP", b"k", b"0"], [b"ECHO", b"e"]])
    assert take(r) == b""
    node.run(w, "TEST.PUSH", "k", "1")
    node.settle()
    # Released, it ran PING and blocked again on the second pop; ECHO still waits.
    assert take(r) == b"*2\r\n$1\r\nk\r\n$1\r\n1\r\n+PONG\r\n"
    assert r.blocked is not None and list(r.deferred) == [[b"ECHO", b"e"]]
    node.run(w, "TEST.PUSH", "k", "2")
    node.settle()
    assert take(r) == b"*2\r\n$1\r\nk\r\n$1\r\n2\r\n$1\r\ne\r\n"


def test_blocking_inside_multi_answers_the_timeout_reply(node: Node) -> None:
    r = node.client()
    node.run(r, "MULTI")
    node.run(r, "TEST.BPOP", "k", 0)
    node.run(r, "XREAD", "BLOCK", 0, "STREAMS", "s", "$")
    assert node.run(r, "EXEC") == b"*2\r\n*-1\r\n*-1\r\n"
    assert r.blocked is None and not node.blocking.waiters


def test_disconnected_client_is_forgotten(node: Node) -> None:
    w, r = node.client(), node.client()
    node.run(r, "TEST.BPOP", "k", 100)
    r.connection_lost(None)
    assert node.blocking.blocked_count == 0 and not node.blocking.waiters
    node.run(w, "TEST.PUSH", "k", "v")
    node.settle(0.15)
    assert node.run(w, "TEST.BPOP", "k", 0) == b"*2\r\n$1\r\nk\r\n$1\r\nv\r\n"


# --- failures -------------------------------------------------------------------------------------


def test_a_failing_rerun_answers_an_error_and_the_others_are_served(
        node: Node, caplog: pytest.LogCaptureFixture) -> None:
    w = node.client()
    failing, served, unencodable, last = node.client(), node.client(), node.client(), node.client()
    node.run(failing, "TEST.BFAIL", "k")
    node.run(served, "TEST.BPOP", "k", 0)
    node.run(unencodable, "TEST.BBAD", "k")
    node.run(last, "TEST.BPOP", "k", "other", 0)
    unencodable.data_received(b"PING\r\n")  # pipelined behind: answered after the error
    with caplog.at_level(logging.ERROR, logger=RIVULET_LOG):
        node.run(w, "TEST.PUSH", "k", "1", "2")
        node.settle()
    assert take(failing) == b"-ERR internal error while running 'test.bfail': RuntimeError\r\n"
    assert take(served) == b"*2\r\n$1\r\nk\r\n$1\r\n1\r\n"
    assert take(unencodable) == (b"-ERR internal error while running 'test.bbad': TypeError\r\n"
                                 b"+PONG\r\n")
    assert take(last) == b"*2\r\n$1\r\nk\r\n$1\r\n2\r\n"
    assert node.blocking.blocked_count == 0 and not node.blocking.waiters
    logged = [rec.getMessage() for rec in caplog.records]
    assert any("test.bfail" in m for m in logged)
    assert any("encoding the reply of a blocked command" in m for m in logged)
    assert node.server.stats.errors_by_code.get("ERR") == 2


def test_failed_calls_count_an_error_release(node: Node) -> None:
    w, r = node.client(), node.client()
    node.run(w, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    before = counters("xreadgroup")
    node.run(r, "XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s", ">")
    # As Redis 7.4: not a call yet while it waits.
    assert counters("xreadgroup") == before
    node.run(w, "XGROUP", "DESTROY", "s", "g")
    node.settle()
    assert take(r).startswith(b"-NOGROUP ")
    assert counters("xreadgroup") == (before[0] + 1, before[1], before[2] + 1)
    assert node.server.stats.errors_by_code == {"NOGROUP": 1}


def test_client_unblock_error_fails_both_commands(node: Node) -> None:
    w, r = node.client(), node.client()
    xread, unblock = counters("xread"), COMMANDS[b"client"].subcommands[b"unblock"]
    unblock_failed = unblock.failed_calls
    node.run(r, "XREAD", "BLOCK", 0, "STREAMS", "s", "$")
    assert node.run(w, "CLIENT", "UNBLOCK", r.id, "ERROR") == b":1\r\n"
    assert take(r) == b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
    assert counters("xread") == (xread[0] + 1, xread[1], xread[2] + 1)
    assert unblock.failed_calls == unblock_failed + 1
    node.run(r, "XREAD", "BLOCK", 0, "STREAMS", "s", "$")
    assert node.run(w, "CLIENT", "UNBLOCK", r.id, "TIMEOUT") == b":1\r\n"
    assert take(r) == NULL
    assert counters("xread") == (xread[0] + 2, xread[1], xread[2] + 1)
    assert unblock.failed_calls == unblock_failed + 1


def test_rerun_is_refused_while_writes_are(node: Node) -> None:
    w, r = node.client(), node.client()
    node.run(w, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    node.run(r, "XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s", ">")
    before = counters("xreadgroup")
    node.run(w, "XADD", "s", "1-0", "f", "v")
    # Writes become refused before the ready key is served (an AOF write failed meanwhile).
    node.server.write_error = "MISCONF Errors writing to the AOF file: No space left on device"
    node.settle()
    assert take(r) == b"-MISCONF Errors writing to the AOF file: No space left on device\r\n"
    # Redis 7.4 counts a blocking command when it completes: a refused re-run is a rejected
    # call, and not a call.
    assert counters("xreadgroup") == (before[0], before[1] + 1, before[2])


def test_info_counts_keys_whose_deletion_reruns_a_client(node: Node) -> None:
    w, a, b = node.client(), node.client(), node.client()
    node.run(w, "XGROUP", "CREATE", "g1", "g", "$", "MKSTREAM")
    node.run(w, "XGROUP", "CREATE", "g2", "g", "$", "MKSTREAM")
    node.run(a, "XREAD", "BLOCK", 0, "STREAMS", "plain", "g1", "$", "$")
    node.run(b, "XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "g1", "g2", ">", ">")

    def clients_info() -> dict[bytes, bytes]:
        text = node.run(w, "INFO", "clients")
        return dict(line.split(b":", 1) for line in text.split(b"\r\n") if b":" in line)

    info = clients_info()
    assert (info[b"blocked_clients"], info[b"total_blocking_keys"],
            info[b"total_blocking_keys_on_nokey"]) == (b"2", b"3", b"2")
    node.run(w, "DEL", "g2")
    node.settle()
    assert take(b).startswith(b"-NOGROUP ")
    info = clients_info()
    assert (info[b"blocked_clients"], info[b"total_blocking_keys"],
            info[b"total_blocking_keys_on_nokey"]) == (b"1", b"2", b"0")
