"""Slow and abusive clients must not hurt the others: a canary's latency and the server's memory
while four kinds of clients misbehave at once.

A canary process does XADD + XRANGE round trips (one at a time, 10 ms apart) throughout, while:

* slowloris: a client sends a command one byte every 100 ms;
* idle: connections are opened up to `maxclients` (10,000 by default in both servers) and left
  idle (one more is refused with Redis's error);
* pipeliner: a client pipelines XRANGEs worth 100 MB of replies and never reads them;
* trickler: a client declares a 512 MB bulk (proto-max-bulk-len) and sends it 64 KB every 100 ms.

Reported: the canary's median and worst round trip, the server's peak RSS over its RSS before the
abusers came, and which abusers the server disconnected. Both servers run with their defaults
(the normal class of client-output-buffer-limit unlimited): Redis keeps every reply of the
pipeliner, Rivulet makes its pipeline wait at the transport's high-water mark.

`run_scenario` is shared with tests/test_slow_clients.py, which asserts the properties.
"""

from __future__ import annotations

import multiprocessing
import resource
import socket
import statistics
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from bench.case import Case, Options
from bench.procstat import CpuMeter, rss_bytes
from bench.resp import RespClient, encode
from bench.stats import Metric, Sample
from bench.targets import Target

BIG = "bench:slow:big"
CANARY = "bench:slow:canary"
BIG_ENTRIES = 10_000
REPLY_BYTES = 100 * 1024 * 1024
BULK = 512 * 1024 * 1024
BULK_KEY = b"bench:slow:bulk"
ABUSERS = ("slowloris", "pipeliner", "trickler")


@dataclass
class Outcome:
    latencies_ms: list[float]
    base_rss_mb: float
    peak_rss_mb: float
    # Abusers the server closed (by CLIENT LIST at the end).
    disconnected: dict[str, bool] = field(default_factory=dict)
    idle_opened: int = 0
    extra_refused: bytes = b""
    idle_errors: list[str] = field(default_factory=list)

    @property
    def worst_ms(self) -> float:
        return max(self.latencies_ms)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.latencies_ms)

    @property
    def growth_mb(self) -> float:
        return self.peak_rss_mb - self.base_rss_mb


def raise_fd_limit(wanted: int) -> None:
    """Let this process hold `wanted` sockets (up to the hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def _canary(port: int, stop: Any, results: Any) -> None:
    client = RespClient(port, timeout=60)
    waits: list[float] = []
    while not stop.is_set():
        t0 = time.monotonic()
        entry_id = client.call("XADD", CANARY, "MAXLEN", "~", 1000, "*", "t", "1")
        client.call("XRANGE", CANARY, entry_id, entry_id)
        waits.append((time.monotonic() - t0) * 1000)
        time.sleep(0.01)
    client.close()
    results.put(waits)


def _connect(port: int, name: str | None = None) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    if name is not None:
        sock.sendall(encode("CLIENT", "SETNAME", name))
    return sock


def _slowloris(port: int, stop: threading.Event, socks: list[socket.socket]) -> None:
    sock = _connect(port, "slowloris")
    socks.append(sock)
    command = encode("ECHO", "hello")
    i = 0
    while not stop.wait(0.1):
        try:
            sock.send(command[i % len(command):i % len(command) + 1])
        except OSError:
            return
        i += 1


def _pipeliner(port: int, stop: threading.Event, socks: list[socket.socket], reply_size: int) -> None:
    sock = _connect(port, "pipeliner")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
    socks.append(sock)
    data = encode("XRANGE", BIG, "-", "+") * (REPLY_BYTES // reply_size + 1)
    sock.settimeout(0.2)
    sent = 0
    while sent < len(data) and not stop.is_set():
        try:
            sent += sock.send(data[sent:sent + 65536])
        except TimeoutError:
            continue
        except OSError:
            return


def _trickler(port: int, stop: threading.Event, socks: list[socket.socket]) -> None:
    sock = _connect(port, "trickler")
    socks.append(sock)
    sock.settimeout(1)
    piece = b"x" * 65536
    try:
        # SET key <value>, the value's header announcing BULK bytes, which then trickle in.
        sock.sendall(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n" % (len(BULK_KEY), BULK_KEY, BULK))
        while not stop.wait(0.1):
            sock.sendall(piece)
    except OSError:
        return


def _idle(port: int, count: int, stop: threading.Event, socks: list[socket.socket],
          errors: list[str]) -> None:
    for _ in range(count):
        if stop.is_set():
            return
        try:
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=10))
        except OSError as exc:
            errors.append(repr(exc))
            return


def _names(control: RespClient) -> set[str]:
    listing = control.call("CLIENT", "LIST")
    text = listing.decode() if isinstance(listing, bytes) else str(listing)
    names = set()
    for line in text.splitlines():
        for part in line.split(" "):
            if part.startswith("name=") and part != "name=":
                names.add(part[5:])
    return names


def run_scenario(port: int, pid: int, seconds: float = 8.0, max_seconds: float = 40.0,
                 maxclients: int = 10_000, config: dict[str, str] | None = None) -> Outcome:
    """Run the canary while the abusers misbehave, for `seconds` and at least until the idle
    connections are all open (at most `max_seconds`); every socket is closed at the end.
    `config`: CONFIG SET before the abusers come (e.g. an output buffer limit)."""
    raise_fd_limit(maxclients + 200)
    control = RespClient(port, timeout=60)
    for name, value in (config or {}).items():
        control.call("CONFIG", "SET", name, value)
    control.pipeline([("DEL", BIG, CANARY)])
    for start in range(0, BIG_ENTRIES, 1000):
        control.pipeline([("XADD", BIG, "*", "sensor", "12345", "reading", f"{i}.5")
                          for i in range(start, start + 1000)])
    control.send(encode("XRANGE", BIG, "-", "+"))
    reply_size = _raw_reply_size(control)
    base = rss_bytes(pid) / 2**20
    spawn = multiprocessing.get_context("spawn")
    results: Any = spawn.Queue()
    canary_stop = spawn.Event()
    canary = spawn.Process(target=_canary, args=(port, canary_stop, results))
    canary.start()
    time.sleep(0.5)  # the canary's first round trips before any abuse
    stop = threading.Event()
    socks: list[socket.socket] = []
    idle: list[socket.socket] = []
    idle_errors: list[str] = []
    # Everyone else: the control client, the canary and the three abusers.
    idle_count = maxclients - 5
    threads = [
        threading.Thread(target=_slowloris, args=(port, stop, socks)),
        threading.Thread(target=_pipeliner, args=(port, stop, socks, reply_size)),
        threading.Thread(target=_trickler, args=(port, stop, socks)),
        threading.Thread(target=_idle, args=(port, idle_count, stop, idle, idle_errors)),
    ]
    for thread in threads:
        thread.start()
    peak = base
    extra = b""
    began = time.monotonic()
    while True:
        now = time.monotonic() - began
        opening = threads[3].is_alive()
        peak = max(peak, rss_bytes(pid) / 2**20)
        if not extra and not opening and len(idle) >= idle_count:
            extra = _extra_connection(port)
        if now > max_seconds or (now > seconds and not opening):
            break
        time.sleep(0.05)
    canary_stop.set()
    waits = results.get(timeout=120)
    canary.join(30)
    peak = max(peak, rss_bytes(pid) / 2**20)
    names = _names(control)
    stop.set()
    for thread in threads:
        thread.join(30)
    for sock in socks + idle:
        sock.close()
    control.close()
    return Outcome(waits, base, peak, {name: name not in names for name in ABUSERS},
                   len(idle), extra, idle_errors[:1])


def _raw_reply_size(client: RespClient) -> int:
    """Bytes of the one reply the client is waiting for, counted off its socket."""
    import hiredis

    reader = hiredis.Reader()
    size = 0
    while True:
        chunk = client.sock.recv(1 << 20)
        size += len(chunk)
        reader.feed(chunk)
        if reader.gets() is not False:
            return size


def _extra_connection(port: int) -> bytes:
    """What a connection beyond maxclients is told."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(encode("PING"))
            return sock.recv(200)
    except OSError as exc:
        return repr(exc).encode()


class SlowClientsCase(Case):
    name = "slow-clients"
    default_repeat = 1
    fresh_server_per_run = True
    metrics = [
        Metric("slow-clients.canary.worst", "ms", False,
               "canary XADD+XRANGE round trip, worst, while slow and abusive clients misbehave"),
        Metric("slow-clients.canary.median", "ms", False, "canary round trip, median"),
        Metric("slow-clients.peak_rss_growth", "MB", False,
               "server's peak RSS over its RSS before the abusers"),
    ]

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        meter = CpuMeter(target.pid).start()
        outcome = run_scenario(target.port, target.pid)
        cpu = meter.stop()
        extra = {"disconnected": outcome.disconnected, "idle_opened": outcome.idle_opened,
                 "extra_refused": outcome.extra_refused.decode(errors="replace").strip(),
                 "round_trips": len(outcome.latencies_ms),
                 "base_rss_mb": round(outcome.base_rss_mb, 1)}
        n = len(outcome.latencies_ms)
        return {
            "slow-clients.canary.worst": Sample(outcome.worst_ms, n, cpu, extra),
            "slow-clients.canary.median": Sample(outcome.median_ms, n, cpu, extra),
            "slow-clients.peak_rss_growth": Sample(outcome.growth_mb, n, cpu, extra),
        }
