"""Client eviction (`maxmemory-clients`), run the same way against Rivulet and Debian's
redis-server: the setting's values and errors, which connections are closed and which are not,
and INFO's evicted_clients."""

from __future__ import annotations

import socket
import time

import pytest
import redis

from tests.serverproc import RedisProcess, ServerProcess

KINDS = ["rivulet", "redis"]


def start(kind: str, procs: list, *args: str):
    if kind == "redis":
        if not RedisProcess.available():
            pytest.skip("redis-server is not installed: client eviction was NOT compared with Redis")
        proc = RedisProcess(*args)
    else:
        proc = ServerProcess(*args)
    procs.append(proc)
    return proc.start()


def closed_by_server(sock: socket.socket, timeout: float = 5.0) -> bool:
    """Whether the server closes sock within timeout (what it sent before is skipped)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            if sock.recv(1 << 20) == b"":
                return True
        except TimeoutError:
            return False
        except ConnectionResetError:
            return True
    return False


def evicted(port: int) -> int:
    with redis.Redis(port=port) as c:
        return c.info("stats")["evicted_clients"]


def partial_set(port: int, size: int, no_evict: bool = False) -> socket.socket:
    """A connection that sends `size` bytes of a SET's 3 MB value and stops: its query buffer."""
    sock = socket.create_connection(("127.0.0.1", port))
    if no_evict:
        sock.sendall(b"CLIENT NO-EVICT on\r\n")
        assert sock.recv(100) == b"+OK\r\n"
    try:
        sock.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3000000\r\n" + b"x" * size)
    except (ConnectionResetError, BrokenPipeError):
        # The server may evict the connection before the whole buffer is sent; the caller
        # asks closed_by_server, which sees the closed socket.
        pass
    return sock


def finish_set(sock: socket.socket) -> None:
    """Send the rest of partial_set's value: the SET runs."""
    sock.sendall(b"x" * 1_000_000 + b"\r\n")
    sock.settimeout(5)
    assert sock.recv(100) == b"+OK\r\n"


def pinged(port: int) -> socket.socket:
    """A connection that has run one PING."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"PING\r\n")
    assert sock.recv(100) == b"+PONG\r\n"
    return sock


VALUES = ["10%", "0", "100%", "101%", "-1", "abc", "1kb", "-5%", "50mb", "+5%", "5 %", "%",
          "9223372036854775807", "9223372036854775808", "18446744073709551615", "1gb"]


def test_the_setting_reads_and_refuses_values_as_redis(procs) -> None:
    ours, theirs = (redis.Redis(port=start(kind, procs).port, decode_responses=True)
                    for kind in KINDS)

    def outcome(c: redis.Redis, value: str) -> tuple[str, str]:
        try:
            reply = str(c.config_set("maxmemory-clients", value))
        except redis.ResponseError as exc:
            reply = str(exc)
        return reply, c.config_get("maxmemory-clients")["maxmemory-clients"]

    for value in VALUES:
        assert outcome(ours, value) == outcome(theirs, value), value


@pytest.mark.parametrize("kind", KINDS)
def test_a_connection_past_the_limit_is_evicted(kind: str, procs) -> None:
    port = start(kind, procs, "--maxmemory-clients", "1mb").port
    other = redis.Redis(port=port)
    assert other.ping()
    big = partial_set(port, 2_000_000)
    assert closed_by_server(big)
    assert other.ping()  # the small one stays
    assert evicted(port) == 1
    other.config_resetstat()
    assert evicted(port) == 0


@pytest.mark.parametrize("kind", KINDS)
def test_below_the_limit_nothing_is_evicted(kind: str, procs) -> None:
    port = start(kind, procs, "--maxmemory-clients", "4mb").port
    sock = partial_set(port, 2_000_000)
    assert not closed_by_server(sock, 0.5)
    finish_set(sock)
    assert evicted(port) == 0


@pytest.mark.parametrize("kind", KINDS)
def test_no_evict_is_counted_but_never_evicted(kind: str, procs) -> None:
    port = start(kind, procs, "--maxmemory-clients", "1mb").port
    small = pinged(port)
    big = partial_set(port, 2_000_000, no_evict=True)
    # Its memory counts: the connection that may be evicted is, in its place.
    assert closed_by_server(small)
    assert not closed_by_server(big, 0.3)
    finish_set(big)
    assert evicted(port) >= 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_subscriber_that_does_not_read_is_evicted(kind: str, procs) -> None:
    port = start(kind, procs, "--maxmemory-clients", "1mb").port
    sub = socket.socket()
    sub.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sub.connect(("127.0.0.1", port))
    sub.sendall(b"SUBSCRIBE ch\r\n")
    sub.settimeout(5)
    assert sub.recv(100).startswith(b"*3\r\n$9\r\nsubscribe")
    publisher = redis.Redis(port=port)
    for _ in range(300):
        publisher.publish("ch", b"y" * 100_000)
        if evicted(port):
            break
    assert evicted(port) == 1
    assert closed_by_server(sub)
    assert publisher.ping()


@pytest.mark.parametrize("kind", KINDS)
def test_a_percentage_of_maxmemory(kind: str, procs) -> None:
    port = start(kind, procs, "--maxmemory-clients", "10%").port
    with redis.Redis(port=port) as c:
        # No maxmemory: a percentage of nothing is no limit.
        sock = partial_set(port, 2_000_000)
        assert not closed_by_server(sock, 0.5)
        sock.close()
        c.config_set("maxmemory", "10mb")  # now 1 MB
        big = partial_set(port, 2_000_000)
        assert closed_by_server(big)
        assert c.ping()
        assert evicted(port) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_the_limit_is_never_below_128kb(kind: str, procs) -> None:
    # An idle Redis connection holds about 20-40 KB: two fit under 128 KB.
    port = start(kind, procs, "--maxmemory-clients", "1").port
    with pinged(port):  # an idle connection, open meanwhile
        assert evicted(port) == 0
        big = partial_set(port, 300_000)
        assert closed_by_server(big)
        assert evicted(port) == 1


def info_memory(port: int) -> dict:
    with redis.Redis(port=port) as c:
        return c.info("memory")


def eventually(check, timeout: float = 3.0) -> bool:
    """Redis refreshes these figures in its cron, a client at a time: poll for them."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize("kind", KINDS)
def test_info_counts_what_connections_hold(kind: str, procs) -> None:
    master = start(kind, procs).port
    # Normal connections: a query buffer of 2 MB shows in mem_clients_normal.
    assert info_memory(master)["mem_clients_normal"] < 1_000_000
    sock = partial_set(master, 2_000_000)
    assert eventually(lambda: info_memory(master)["mem_clients_normal"] >= 2_000_000)
    finish_set(sock)
    sock.close()
    # A replica in step holds nothing beyond the backlog: mem_clients_slaves stays 0.
    replica = start(kind, procs, "--replicaof", f"127.0.0.1 {master}").port
    assert eventually(lambda: redis.Redis(port=replica).info("replication")["master_link_status"] == "up",
                      10)
    assert info_memory(master)["mem_clients_slaves"] == 0
    # The replica's link to its master is one of its normal connections.
    assert eventually(lambda: info_memory(replica)["mem_clients_normal"] > 0)


@pytest.mark.parametrize("kind", KINDS)
def test_info_counts_a_lagging_replicas_output(kind: str, procs) -> None:
    master = start(kind, procs, "--repl-diskless-sync", "no", "--repl-backlog-size", "1mb").port
    # A replica that asks for the stream and then reads nothing.
    lagging = socket.socket()
    lagging.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    lagging.connect(("127.0.0.1", master))
    lagging.sendall(b"REPLCONF capa eof capa psync2\r\n")
    assert lagging.recv(100) == b"+OK\r\n"
    lagging.sendall(b"PSYNC ? -1\r\n")
    with redis.Redis(port=master) as c:
        for i in range(20):
            c.set(f"k{i}", b"x" * 1_000_000)
        # What the replica has still to receive, beyond the backlog's 1 MB.
        assert eventually(lambda: info_memory(master)["mem_clients_slaves"] > 10_000_000)
        mem = info_memory(master)
        assert mem["mem_total_replication_buffers"] > mem["mem_clients_slaves"]
    lagging.close()
