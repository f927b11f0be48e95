"""client-output-buffer-limit and client-query-buffer-limit hold as in Redis, run side by side
against Debian's redis-server 7.0 and, when built, a Redis 7.4 (the INFO counters are 7.4's).

The output limit is checked as replies grow, so one write of pipelined commands cannot grow the
server past it: the client is closed, its remaining commands do not run. A blocked client keeps
being read into its query buffer (CLIENT LIST qbuf) and is closed past the query limit."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator

import hiredis
import pytest
import redis

from tests.dump_helpers import redis74_binary
from tests.helpers import encode_command, read_reply
from tests.replication_helpers import RawReplica, wait_for
from tests.serverproc import RawConnection, ServerProcess, free_port, stop_process, wait_for_port

XRANGE_ALL = encode_command("XRANGE", "b", "-", "+")
ENTRIES = 10_000


class _Redis:
    """A real redis-server (7.0 from Debian, or a 7.4 build) on a free port."""

    def __init__(self, binary: str) -> None:
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="redis-limits-")
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.dir],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port, self.proc)

    def cleanup(self) -> None:
        stop_process(self.proc)
        shutil.rmtree(self.dir, ignore_errors=True)


def _targets() -> list[str]:
    return ["rivulet", "redis-7.0", "redis-7.4"]


@pytest.fixture(params=_targets())
def target(request) -> Iterator[tuple[str, int, int]]:
    """(name, port, pid) of a fresh server of each kind; a missing reference skips loudly."""
    name = request.param
    if name == "rivulet":
        srv = ServerProcess().start()
        try:
            yield name, srv.port, srv.proc.pid
        finally:
            srv.cleanup()
        return
    binary = shutil.which("redis-server") if name == "redis-7.0" else redis74_binary()
    if binary is None:
        pytest.skip(f"NOT TESTED against {name}: no redis-server binary for it on this machine")
    ref = _Redis(binary)
    try:
        yield name, ref.port, ref.proc.pid
    finally:
        ref.cleanup()


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _fill(r: redis.Redis, n: int = ENTRIES) -> None:
    pipe = r.pipeline(transaction=False)
    for i in range(n):
        pipe.xadd("b", {"field": "v" * 20, "n": i})
    pipe.execute()


def _stat(r: redis.Redis, field: str) -> int | None:
    """An INFO stats counter, None where this server has no such field (Redis 7.0)."""
    value = r.info("stats").get(field)
    return None if value is None else int(value)


def _silent_client(port: int) -> RawConnection:
    conn = RawConnection(port, timeout=10)
    conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
    return conn


def _read_replies(conn: RawConnection, count: int) -> list:
    reader = hiredis.Reader()
    reader.feed(conn.buf)
    replies: list = []
    while len(replies) < count:
        reply = reader.gets()
        if reply is False:
            chunk = conn.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("closed")
            reader.feed(chunk)
            continue
        replies.append(reply)
    return replies


def _wait_gone(r: redis.Redis, name: str, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(c["name"] != name for c in r.client_list()):
            return True
        time.sleep(0.05)
    return False


def _watch_rss(pid: int, until: Callable[[], bool], timeout: float) -> float:
    """The peak RSS (MB) while waiting for `until`."""
    peak = _rss_mb(pid)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not until():
        peak = max(peak, _rss_mb(pid))
        time.sleep(0.02)
    return max(peak, _rss_mb(pid))


def test_hard_limit_closes_a_pipeline_of_big_replies(target) -> None:
    """One 37 KB write of 1,000 XRANGEs (about 700 MB of replies) against `normal 1mb 0 0`:
    closed at the limit, the server barely grows, the commands behind the limit never run."""
    name, port, pid = target
    r = redis.Redis(port=port, socket_timeout=30)
    assert r.config_set("client-output-buffer-limit", "normal 1mb 0 0")
    _fill(r)
    before = _stat(r, "client_output_buffer_limit_disconnections")
    base = _rss_mb(pid)
    slow = _silent_client(port)
    slow.send(encode_command("CLIENT", "SETNAME", "slow") + XRANGE_ALL * 1000
              + encode_command("INCR", "ran-after"))
    peak = _watch_rss(pid, lambda: _wait_gone(r, "slow", 0.05), 30)
    assert _wait_gone(r, "slow"), f"{name}: the client past the hard limit was not closed"
    assert peak - base < 100, f"{name}: grew {peak - base:.0f} MB"
    assert r.get("ran-after") is None, f"{name}: a command behind the limit ran"
    received = slow.read_until_closed(reset_ok=True)
    assert len(received) < 20 * 1024 * 1024
    after = _stat(r, "client_output_buffer_limit_disconnections")
    if before is not None:
        assert after == before + 1
    assert r.ping()
    slow.close()
    r.close()


def test_soft_limit_closes_after_its_seconds(target) -> None:
    """Over the soft limit, the client is closed once it stayed over it past its seconds, by
    the periodic check although it produces nothing more."""
    name, port, _pid = target
    r = redis.Redis(port=port, socket_timeout=30)
    assert r.config_set("client-output-buffer-limit", "normal 0 4mb 1")
    _fill(r)
    slow = _silent_client(port)
    slow.send(encode_command("CLIENT", "SETNAME", "slow") + XRANGE_ALL * 20)  # 14 MB of replies
    time.sleep(0.5)
    assert any(c["name"] == "slow" for c in r.client_list()), f"{name}: closed before its seconds"
    assert _wait_gone(r, "slow", 10), f"{name}: not closed after the soft limit's seconds"
    slow.close()
    r.close()


def test_pipeline_over_the_limit_by_a_client_that_reads_is_still_closed(target) -> None:
    """Redis measures replies as they are produced, not what the client manages to read: a
    pipeline whose replies pass the hard limit within one read is closed even by a reader."""
    name, port, _pid = target
    r = redis.Redis(port=port, socket_timeout=30)
    assert r.config_set("client-output-buffer-limit", "normal 4mb 0 0")
    _fill(r)
    conn = RawConnection(port, timeout=10)
    conn.send(XRANGE_ALL * 50)
    data = conn.read_until_closed(reset_ok=True)
    first = len(r.xrange("b", "-", "+"))
    assert first == ENTRIES
    assert data.count(b"*%d\r\n" % ENTRIES) < 50, f"{name}: every reply arrived"
    conn.close()
    r.close()


def test_blocked_client_query_buffer_is_counted_and_limited(target) -> None:
    """A client parked in XREAD BLOCK 0 that keeps pipelining: its qbuf shows what it sent, and
    past client-query-buffer-limit it is closed (counted in INFO where the field exists)."""
    name, port, pid = target
    r = redis.Redis(port=port, socket_timeout=30)
    assert r.config_set("client-query-buffer-limit", "1mb")
    before = _stat(r, "client_query_buffer_limit_disconnections")
    conn = RawConnection(port, timeout=10)
    conn.send(encode_command("CLIENT", "SETNAME", "parked"))
    assert read_reply(conn) == b"+OK\r\n"
    conn.send(encode_command("XREAD", "BLOCK", 0, "STREAMS", "s", "$"))
    ping = encode_command("PING")
    conn.send(ping * 30_000)  # 420 KB
    deadline = time.monotonic() + 5
    qbuf = 0
    while time.monotonic() < deadline:
        info = next(c for c in r.client_list() if c["name"] == "parked")
        qbuf = int(info["qbuf"])
        if qbuf >= 300_000:
            break
        time.sleep(0.05)
    assert qbuf >= 300_000, f"{name}: qbuf={qbuf} while 420 KB wait behind a block"
    assert int(info["tot-mem"]) >= qbuf
    try:
        conn.send(ping * 60_000)  # past 1 MB
    except OSError:
        pass
    assert _wait_gone(r, "parked"), f"{name}: the blocked client past the query limit stayed"
    after = _stat(r, "client_query_buffer_limit_disconnections")
    if before is not None:
        assert after == before + 1
    assert _rss_mb(pid) < 500
    conn.close()
    r.close()


def test_commands_behind_a_block_run_in_order_when_released(target) -> None:
    name, port, _pid = target
    r = redis.Redis(port=port, socket_timeout=30)
    conn = RawConnection(port, timeout=10)
    conn.send(encode_command("XREAD", "BLOCK", 0, "STREAMS", "s", "$"))
    time.sleep(0.1)
    conn.send(b"".join(encode_command("ECHO", i) for i in range(2000)))
    time.sleep(0.3)
    r.xadd("s", {"f": "v"})
    reply = read_reply(conn)
    assert reply.startswith(b"*1\r\n"), f"{name}: {reply[:40]!r}"
    for i in range(2000):
        assert read_reply(conn) == b"$%d\r\n%d\r\n" % (len(str(i)), i)
    conn.close()
    r.close()


def test_bulk_length_over_proto_max_bulk_len(target) -> None:
    """A declared bulk longer than proto-max-bulk-len is a protocol error, the connection closed."""
    name, port, _pid = target
    conn = RawConnection(port, timeout=10)
    conn.send(b"*2\r\n$3\r\nGET\r\n$536870913\r\n")
    data = conn.read_until_closed(reset_ok=True)
    assert data == b"-ERR Protocol error: invalid bulk length\r\n", f"{name}: {data!r}"
    conn.close()


def test_trickled_bulk_is_counted_and_limited(target) -> None:
    """A declared 512 MB bulk sent slowly: its bytes show in qbuf as they arrive, and the client
    is closed once they pass client-query-buffer-limit."""
    name, port, _pid = target
    r = redis.Redis(port=port, socket_timeout=30)
    assert r.config_set("client-query-buffer-limit", "1mb")
    conn = RawConnection(port, timeout=10)
    conn.send(encode_command("CLIENT", "SETNAME", "trickler"))
    assert read_reply(conn) == b"+OK\r\n"
    conn.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870912\r\n")
    piece = b"x" * 65536
    for _ in range(8):
        conn.send(piece)
        time.sleep(0.02)
    deadline = time.monotonic() + 5
    qbuf = 0
    while time.monotonic() < deadline and qbuf < 8 * 65536:
        qbuf = int(next(c for c in r.client_list() if c["name"] == "trickler")["qbuf"])
        time.sleep(0.05)
    assert 8 * 65536 <= qbuf < 8 * 65536 + 100, f"{name}: qbuf={qbuf}"
    try:
        for _ in range(16):
            conn.send(piece)
            time.sleep(0.02)
    except OSError:
        pass
    assert _wait_gone(r, "trickler"), f"{name}: the trickler past the query limit stayed"
    assert r.get("k") is None
    conn.close()
    r.close()


def test_default_unlimited_class_holds_a_reader_that_does_not_read(server_factory) -> None:
    """Rivulet only: with the normal class unlimited (Redis's default, where Redis would grow by
    the whole ~700 MB), the pipeline waits at the high-water mark; every reply arrives, in
    order, once the client reads."""
    srv = server_factory()
    r = redis.Redis(port=srv.port, socket_timeout=30)
    _fill(r)
    base = _rss_mb(srv.proc.pid)
    slow = _silent_client(srv.port)
    slow.send(encode_command("CLIENT", "SETNAME", "slow") + XRANGE_ALL * 200)
    time.sleep(1.5)
    info = next(c for c in r.client_list() if c["name"] == "slow")
    assert int(info["qbuf"]) > 0  # the waiting commands are its query buffer
    assert int(info["omem"]) > 0
    assert _rss_mb(srv.proc.pid) - base < 60
    t0 = time.monotonic()
    assert r.ping()
    assert time.monotonic() - t0 < 1.0
    replies = _read_replies(slow, 201)
    assert replies[0] == b"OK"
    assert all(len(reply) == ENTRIES for reply in replies[1:])
    assert replies[1][0][1] == [b"field", b"v" * 20, b"n", b"0"]
    slow.close()
    r.close()


def test_replica_that_falls_behind_is_dropped(target) -> None:
    """A replica that stops reading the replication stream is dropped past the replica class's
    hard limit, as in Redis (a limit above repl-backlog-size, which would otherwise replace it)."""
    name, port, _pid = target
    r = redis.Redis(port=port, socket_timeout=30)
    r.config_set("repl-diskless-sync-delay", "0")
    r.config_set("repl-backlog-size", "1mb")
    assert r.config_set("client-output-buffer-limit", "replica 4mb 0 0")
    before = _stat(r, "client_output_buffer_limit_disconnections")
    replica = RawReplica(port)
    try:
        replica.sync_full()
        assert wait_for(lambda: r.info("replication")["connected_slaves"] == 1)
        value = b"x" * (1024 * 1024)
        for i in range(40):  # 40 MB of stream the replica never reads
            r.set(f"k{i}", value)
        assert wait_for(lambda: r.info("replication")["connected_slaves"] == 0, timeout=15), \
            f"{name}: the replica past its limit is still connected"
        after = _stat(r, "client_output_buffer_limit_disconnections")
        if before is not None:
            assert after == before + 1
    finally:
        replica.close()
        r.close()
