"""CLIENT PAUSE timeout [WRITE|ALL] and CLIENT UNPAUSE, each scenario run on Rivulet and on real
Redis (7.4 when built, Debian's 7.0): error replies compared reply for reply, which commands a
WRITE pause holds back (probed one by one on each server, the sets compared), ALL pausing reads
(and CLIENT UNPAUSE itself), the order paused clients resume in, the strictest and longest pause
winning, a pause ending by its timeout, CLIENT PAUSE inside MULTI, EXEC of reads and of writes,
expiry and eviction stopped, the pause combined with FAILOVER's own, a replica's stream from its
master held by a pause while our replicas' links never are."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from tests.helpers import blocked_clients, encode_command, read_reply, wait_blocked
from tests.replica_helpers import RedisServer, info, wait_synced, wait_until
from tests.serverproc import RawConnection, ServerProcess

REDIS70 = shutil.which("redis-server")
REDIS74 = os.environ.get("RIVULET_REDIS74", "/tmp/redis74/src/redis-server")
HAVE74 = os.access(REDIS74, os.X_OK)

KINDS = [
    pytest.param("rivulet", id="rivulet"),
    pytest.param("redis74", id="redis74", marks=pytest.mark.skipif(
        not HAVE74, reason=f"no Redis 7.4 at {REDIS74} (RIVULET_REDIS74): CLIENT PAUSE was NOT "
                           "checked against Redis 7.4")),
    pytest.param("redis70", id="redis70", marks=pytest.mark.skipif(
        REDIS70 is None, reason="redis-server is not installed: CLIENT PAUSE was NOT checked "
                                "against Redis 7.0")),
]


def start(kind: str, *args: str) -> Any:
    if kind == "rivulet":
        return ServerProcess(*args).start()
    return RedisServer(REDIS74 if kind == "redis74" else REDIS70, *args).start()


def stop(proc: Any) -> None:
    proc.cleanup()


@pytest.fixture(scope="module", params=KINDS[1:])
def reference(request) -> Iterator[Any]:
    """A Redis the replies and the held commands are compared with: 7.4 (if built), 7.0."""
    proc = start(request.param)
    proc.kind = request.param
    yield proc
    stop(proc)


@pytest.fixture(params=KINDS, scope="module")
def node(request) -> Iterator[Any]:
    proc = start(request.param)
    yield proc
    stop(proc)


@pytest.fixture
def r(node) -> Iterator[redis.Redis]:
    client = redis.Redis(port=node.port)
    client.flushall()
    yield client
    client.execute_command("CLIENT", "UNPAUSE")
    client.close()


class Deferred:
    """A raw connection that sends a command now and reads its reply later."""

    def __init__(self, port: int) -> None:
        self.conn = RawConnection(port)

    def send(self, *args: Any) -> Deferred:
        self.conn.send(encode_command(*args))
        return self

    def read(self, timeout: float = 5.0) -> bytes:
        self.conn.sock.settimeout(timeout)
        return read_reply(self.conn)

    def replied_within(self, seconds: float) -> bool:
        """Whether a reply arrived within seconds (it is then read)."""
        self.conn.sock.settimeout(seconds)
        try:
            self.read(seconds)
        except TimeoutError:
            return False
        return True

    def close(self) -> None:
        self.conn.close()


def reply_of(port: int, *args: Any) -> bytes:
    d = Deferred(port).send(*args)
    try:
        return d.read()
    finally:
        d.close()


# --- error replies ---------------------------------------------------------------------------

ERROR_CASES = [
    ("CLIENT", "PAUSE"),
    ("CLIENT", "PAUSE", "abc"),
    ("CLIENT", "PAUSE", "-1"),
    ("CLIENT", "PAUSE", "1.5"),
    ("CLIENT", "PAUSE", "9223372036854775807"),
    ("CLIENT", "PAUSE", "9223372036854775808"),
    ("CLIENT", "PAUSE", "100", "READ"),
    ("CLIENT", "PAUSE", "abc", "READ"),
    ("CLIENT", "PAUSE", "-1", "WRITE"),
    ("CLIENT", "PAUSE", "100", "WRITE", "extra"),
    ("CLIENT", "UNPAUSE", "now"),
    ("CLIENT", "PAUSE", "0"),
    ("CLIENT", "PAUSE", "0", "write"),
    ("CLIENT", "UNPAUSE"),
]


# Redis 7.0 takes these (7.4 added the check that the end time does not overflow).
CHECKED_SINCE_74 = {("CLIENT", "PAUSE", "9223372036854775807")}


@pytest.mark.parametrize("args", ERROR_CASES, ids=" ".join)
def test_replies_as_redis(reference, args) -> None:
    if reference.kind == "redis70" and args in CHECKED_SINCE_74:
        pytest.skip("Redis 7.0 accepts this timeout (7.4 refuses it): compared with 7.4 only")
    with _rivulet() as port:
        assert reply_of(port, *args) == reply_of(reference.port, *args)


class _rivulet:
    """One Rivulet server for the replies test (module-wide, started on first use)."""

    proc: ServerProcess | None = None

    def __enter__(self) -> int:
        if _rivulet.proc is None:
            _rivulet.proc = ServerProcess().start()
        return _rivulet.proc.port

    def __exit__(self, *exc: object) -> None:
        pass


@pytest.fixture(scope="module", autouse=True)
def _stop_shared() -> Iterator[None]:
    yield
    if _rivulet.proc is not None:
        _rivulet.proc.cleanup()
        _rivulet.proc = None


# --- what a WRITE pause holds back -----------------------------------------------------------

PROBES = [
    ("SET", "k", "v"),
    ("GET", "k"),
    ("PING",),
    ("DBSIZE",),
    ("EXISTS", "k"),
    ("DEL", "k"),
    ("EXPIRE", "k", "100"),
    ("TTL", "k"),
    ("INCR", "n"),
    ("RPUSH", "l", "a"),
    ("LRANGE", "l", "0", "-1"),
    ("BLPOP", "l", "0.05"),
    ("XADD", "s", "*", "f", "v"),
    ("XRANGE", "s", "-", "+"),
    ("XREAD", "STREAMS", "s", "0"),
    ("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"),
    ("HSET", "h", "f", "v"),
    ("SADD", "set", "m"),
    ("ZADD", "z", "1", "m"),
    ("PUBLISH", "ch", "msg"),
    ("SPUBLISH", "ch", "msg"),
    ("FLUSHDB",),
    ("SWAPDB", "0", "1"),
    ("SELECT", "1"),
    ("CONFIG", "GET", "maxmemory"),
    ("CONFIG", "SET", "maxmemory-samples", "5"),
    ("INFO", "server"),
    ("ECHO", "x"),
    ("TYPE", "k"),
    ("OBJECT", "ENCODING", "l"),
    ("CLIENT", "ID"),
    ("CLIENT", "UNPAUSE"),
]


def paused_probes(port: int, mode: str) -> list[str]:
    """The PROBES a pause holds back: each sent on its own connection while paused, on an empty
    database. They are sent together, with one 0.3 s wait for the lot (what a pause lets through
    runs on the empty database, what it holds waits: the state they see is that of one probe
    sent alone); CLIENT UNPAUSE last, alone, as it releases the others."""
    control = redis.Redis(port=port)
    control.flushall()
    together = [args for args in PROBES if args != ("CLIENT", "UNPAUSE")]
    held = []
    control.execute_command("CLIENT", "PAUSE", "100000", mode)
    probes = [Deferred(port) for _ in together]
    try:
        for d, args in zip(probes, together, strict=True):
            d.send(*args)
        deadline = time.monotonic() + 0.3
        for d, args in zip(probes, together, strict=True):
            # A reply already in the socket is read at once, however short the time left.
            if not d.replied_within(max(deadline - time.monotonic(), 0.001)):
                held.append(" ".join(args))
    finally:
        control.execute_command("CLIENT", "UNPAUSE")
        for d in probes:
            d.close()
    if ("CLIENT", "UNPAUSE") in PROBES:
        control.flushall()
        control.execute_command("CLIENT", "PAUSE", "100000", mode)
        d = Deferred(port).send("CLIENT", "UNPAUSE")
        try:
            if not d.replied_within(0.3):
                held.append("CLIENT UNPAUSE")
        finally:
            control.execute_command("CLIENT", "UNPAUSE")
            d.close()
    control.flushall()
    control.close()
    return held


def test_write_pause_holds_the_same_commands_as_redis(reference) -> None:
    with _rivulet() as port:
        mine = paused_probes(port, "WRITE")
    theirs = paused_probes(reference.port, "WRITE")
    assert mine == theirs
    # What the comparison is about: writes and PUBLISH wait, reads and admin commands do not.
    assert "SET k v" in mine and "PUBLISH ch msg" in mine and "GET k" not in mine


@pytest.mark.parametrize("kind", KINDS)
def test_all_pause_holds_reads_and_unpause_itself(kind) -> None:
    proc = start(kind)
    try:
        control = redis.Redis(port=proc.port)
        control.set("k", "v")
        t0 = time.monotonic()
        control.execute_command("CLIENT", "PAUSE", "400", "ALL")
        get = Deferred(proc.port).send("GET", "k")
        unpause = Deferred(proc.port).send("CLIENT", "UNPAUSE")
        assert not get.replied_within(0.2)
        assert not unpause.replied_within(0.05)
        assert get.read() == b"$1\r\nv\r\n"
        assert unpause.read() == b"+OK\r\n"
        assert time.monotonic() - t0 >= 0.35
        get.close()
        unpause.close()
        # Without a mode, CLIENT PAUSE pauses everything.
        control.execute_command("CLIENT", "PAUSE", "300")
        ping = Deferred(proc.port).send("PING")
        assert not ping.replied_within(0.15)
        assert ping.read() == b"+PONG\r\n"
        ping.close()
        control.close()
    finally:
        stop(proc)


# --- scenarios, run on each server -------------------------------------------------------------

def test_paused_clients_resume_in_order(node, r) -> None:
    r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    clients = [Deferred(node.port).send("RPUSH", "order", str(i)) for i in range(5)]
    wait_blocked(r, 5)
    assert r.lrange("order", 0, -1) == []
    r.execute_command("CLIENT", "UNPAUSE")
    assert [c.read() for c in clients] == [f":{i + 1}\r\n".encode() for i in range(5)]
    assert r.lrange("order", 0, -1) == [str(i).encode() for i in range(5)]
    for c in clients:
        c.close()


def test_pipelined_commands_wait_behind_the_paused_one(node, r) -> None:
    r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    d = Deferred(node.port)
    d.conn.send(encode_command("SET", "a", "1") + encode_command("GET", "a"))
    wait_blocked(r, 1)
    assert not d.replied_within(0.1)
    r.execute_command("CLIENT", "UNPAUSE")
    assert d.read() == b"+OK\r\n"
    assert d.read() == b"$1\r\n1\r\n"
    d.close()


def test_reads_go_on_under_a_write_pause(node, r) -> None:
    r.set("k", "v")
    r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    other = redis.Redis(port=node.port)
    assert other.get("k") == b"v"
    assert other.ping()
    assert blocked_clients(r) == 0
    other.close()


def test_old_all_pause_outlives_a_shorter_write_pause(node, r) -> None:
    t0 = time.monotonic()
    r.execute_command("CLIENT", "PAUSE", "400", "ALL")
    r.execute_command("CLIENT", "PAUSE", "20", "WRITE")
    time.sleep(0.1)
    get = Deferred(node.port).send("GET", "k")
    assert get.read() == b"$-1\r\n"
    assert time.monotonic() - t0 >= 0.35
    get.close()


def test_shorter_pause_keeps_the_longer_end(node, r) -> None:
    r.execute_command("CLIENT", "PAUSE", "60000", "WRITE")
    r.execute_command("CLIENT", "PAUSE", "10", "WRITE")
    time.sleep(0.1)
    d = Deferred(node.port).send("SET", "k", "v")
    wait_blocked(r, 1)
    r.execute_command("CLIENT", "UNPAUSE")
    assert d.read() == b"+OK\r\n"
    d.close()


def test_write_pause_during_all_pause_keeps_all(node, r) -> None:
    """In one transaction (nothing else can run under ALL): a WRITE pause given while an ALL
    pause holds keeps ALL, and the longer end."""
    t0 = time.monotonic()
    pipe = r.pipeline(transaction=True)
    pipe.execute_command("CLIENT", "PAUSE", "400", "ALL")
    pipe.execute_command("CLIENT", "PAUSE", "10", "WRITE")
    pipe.execute()
    get = Deferred(node.port).send("GET", "k")
    assert not get.replied_within(0.2)
    assert get.read() == b"$-1\r\n"
    assert time.monotonic() - t0 >= 0.35
    get.close()


def test_pause_ends_by_its_timeout(node, r) -> None:
    r.execute_command("CLIENT", "PAUSE", "300", "WRITE")
    t0 = time.monotonic()
    d = Deferred(node.port).send("SET", "k", "v")
    assert d.read() == b"+OK\r\n"
    # Redis notices the end in its cron (up to 1/hz later): allow for it.
    assert 0.25 <= time.monotonic() - t0 < 1.5
    d.close()


def test_syntax_errors_answer_at_once(node, r) -> None:
    r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    d = Deferred(node.port).send("SET", "k")
    assert d.read(1.0) == b"-ERR wrong number of arguments for 'set' command\r\n"
    d.close()


def test_read_transaction_runs_write_transaction_waits(node, r) -> None:
    r.set("k", "v")
    writer = Deferred(node.port)
    for args in (("MULTI",), ("SET", "k", "w")):
        writer.send(*args)
        writer.read()
    r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    reader = redis.Redis(port=node.port)
    pipe = reader.pipeline(transaction=True)
    pipe.ping()
    pipe.get("k")
    assert pipe.execute() == [True, b"v"]
    writer.send("EXEC")
    wait_blocked(r, 1)
    assert r.get("k") == b"v"
    r.execute_command("CLIENT", "UNPAUSE")
    assert writer.read() == b"*1\r\n+OK\r\n"
    writer.close()
    reader.close()


def test_write_queued_under_pause_waits(node, r) -> None:
    """In MULTI a write is held back when queued, not only at EXEC (the pause check comes
    before queueing)."""
    r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    d = Deferred(node.port).send("MULTI")
    assert d.read() == b"+OK\r\n"
    d.send("SET", "k", "v")
    assert not d.replied_within(0.2)
    r.execute_command("CLIENT", "UNPAUSE")
    assert d.read() == b"+QUEUED\r\n"
    d.close()


def test_pause_inside_multi_starts_after_exec(node, r) -> None:
    pipe = r.pipeline(transaction=True)
    pipe.set("a", "1")
    pipe.execute_command("CLIENT", "PAUSE", "60000", "WRITE")
    pipe.set("b", "1")
    assert pipe.execute() == [True, b"OK", True]
    d = Deferred(node.port).send("SET", "c", "1")
    wait_blocked(r, 1)
    assert (r.get("a"), r.get("b"), r.get("c")) == (b"1", b"1", None)
    r.execute_command("CLIENT", "UNPAUSE")
    assert d.read() == b"+OK\r\n"
    d.close()


def test_expiry_is_paused(node, r) -> None:
    def expired_keys() -> int:
        return int(r.info("stats")["expired_keys"])

    before = expired_keys()
    pipe = r.pipeline(transaction=True)
    pipe.set("a", "1", px=10)
    pipe.set("b", "1", px=10)
    pipe.execute_command("CLIENT", "PAUSE", "50000", "WRITE")
    pipe.execute()
    wait_until(lambda: r.get("a") is None and r.get("b") is None, 5, "keys to expire logically")
    time.sleep(0.3)  # active expiry cycles would have run meanwhile
    assert expired_keys() == before
    r.execute_command("CLIENT", "UNPAUSE")
    r.get("a")
    r.get("b")
    assert expired_keys() == before + 2


def test_eviction_is_paused(node, r) -> None:
    r.config_set("maxmemory-policy", "allkeys-random")
    # A limit set before filling: used_memory is then measured as the limit is checked.
    r.config_set("maxmemory", str(1 << 30))
    try:
        for i in range(200):
            r.set(f"key:{i}", "x" * 1000)
        used = int(r.info("memory")["used_memory"])
        r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
        # CONFIG SET is not paused, and a limit under the data would evict at once.
        r.config_set("maxmemory", str(used - 100_000))
        r.get("key:0")
        time.sleep(0.3)
        assert r.dbsize() == 200
        assert int(r.info("stats")["evicted_keys"]) == 0
        r.execute_command("CLIENT", "UNPAUSE")
        wait_until(lambda: r.set("more", "x") and r.dbsize() < 200, 5, "eviction after the pause")
        assert int(r.info("stats")["evicted_keys"]) > 0
    finally:
        r.config_set("maxmemory", "0")
        r.config_set("maxmemory-policy", "noeviction")


def test_blocked_clients_count_paused_clients(node, r) -> None:
    r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    ds = [Deferred(node.port).send("PUBLISH", "ch", "m") for _ in range(2)]
    wait_blocked(r, 2)
    flags = [line for line in r.execute_command("CLIENT", "LIST").decode().splitlines()
             if "cmd=publish" in line]
    assert len(flags) == 2 and all(" flags=b " in line for line in flags)
    r.execute_command("CLIENT", "UNPAUSE")
    assert [d.read() for d in ds] == [b":0\r\n", b":0\r\n"]
    for d in ds:
        d.close()


# --- replication -----------------------------------------------------------------------------

@pytest.fixture(params=KINDS)
def pair(request) -> Iterator[tuple[Any, Any]]:
    """A master and its replica, both of one kind."""
    master = start(request.param, "--repl-ping-replica-period", "3600")
    replica = start(request.param, "--replicaof", "127.0.0.1", str(master.port))
    try:
        wait_synced(redis.Redis(port=master.port), redis.Redis(port=replica.port))
        yield master, replica
    finally:
        stop(replica)
        stop(master)


def test_replica_stream_waits_for_the_pause(pair) -> None:
    master_proc, replica_proc = pair
    master = redis.Redis(port=master_proc.port)
    replica = redis.Redis(port=replica_proc.port)
    master.set("foo", "bar")
    wait_synced(master, replica)
    applied = info(replica)["slave_repl_offset"]
    replica.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    master.set("foo2", "bar2")
    offset = info(master)["master_repl_offset"]
    wait_until(lambda: info(replica)["slave_read_repl_offset"] == offset, 10,
               "the replica to read the stream")
    assert info(replica)["slave_repl_offset"] == applied
    assert replica.get("foo2") is None
    replica.execute_command("CLIENT", "UNPAUSE")
    wait_synced(master, replica)
    assert replica.get("foo2") == b"bar2"


def test_failover_pause_outlasts_client_unpause(pair) -> None:
    """FAILOVER's pause and CLIENT PAUSE are separate purposes: CLIENT UNPAUSE does not end
    FAILOVER's, and a CLIENT PAUSE ALL ending leaves FAILOVER's write pause in place."""
    master_proc, replica_proc = pair
    master = redis.Redis(port=master_proc.port)
    replica = redis.Redis(port=replica_proc.port)
    # The replica applies nothing (its stream is paused): the failover waits for it.
    replica.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    master.set("k", "v")
    assert master.execute_command("FAILOVER", "TIMEOUT", "60000") == b"OK"
    d = Deferred(master_proc.port).send("SET", "k2", "v")
    wait_blocked(master, 1)
    master.execute_command("CLIENT", "UNPAUSE")
    assert not d.replied_within(0.2)
    master.execute_command("CLIENT", "PAUSE", "200", "ALL")
    get = Deferred(master_proc.port).send("GET", "k")
    assert get.read() == b"$1\r\nv\r\n"  # after the ALL pause's 200 ms
    assert not d.replied_within(0.1)  # the failover still holds writes
    master.execute_command("FAILOVER", "ABORT")
    assert d.read() == b"+OK\r\n"
    replica.execute_command("CLIENT", "UNPAUSE")
    wait_synced(master, replica)
    assert replica.get("k2") == b"v"
    d.close()
    get.close()


def test_client_unblock_leaves_a_paused_client_held() -> None:
    """Rivulet only: Redis 7.4 aborts (Unknown btype in replyToBlockedClientTimedOut) when
    CLIENT UNBLOCK names a client held by a pause; the held client stays held and runs its
    command when the pause ends."""
    with _rivulet() as port:
        r = redis.Redis(port=port)
        r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
        try:
            d = Deferred(port)
            d.send("CLIENT", "ID")
            cid = int(d.read()[1:])
            d.send("SET", "unblocked", "v")
            wait_blocked(r, 1)
            for how in ("TIMEOUT", "ERROR"):
                assert r.execute_command("CLIENT", "UNBLOCK", cid, how) == 0
            assert not d.replied_within(0.1)
        finally:
            r.execute_command("CLIENT", "UNPAUSE")
        assert d.read() == b"+OK\r\n"
        assert r.get("unblocked") == b"v"
        d.close()
