"""In-process fuzzing: the request parser alone, and whole commands through a client.

Parser: every input is fed, in the same reads, to a parser with each fast path (the canonical
scan the compiled build takes, hiredis the pure-Python one takes) and to the strict parser alone (the reference, which reproduces Redis's errors byte for byte). Any exception
but the query-buffer limit is a crash; any difference in the commands produced or the error
reported is a divergence.

Commands: a `Server` without listeners on the harness's own event loop, and per input a new
`Client` whose transport collects the bytes written to it. An input is a pipeline of generated
commands, mutated at the byte level half of the time, delivered in one read or many. A crash is
an exception escaping the client or an event-loop callback, a handler failure turned into an
"internal error" reply (dispatch logs it), or reply bytes that are not valid RESP. After the
input the client disconnects; a server that still knows it (in its client list, its blocked keys
or its Pub/Sub channels) leaks.

Hangs: each input's wall time is measured against a bound, and an interval timer breaks out of
an input that runs far past it in CPU time.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import signal
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import hiredis

from fuzz.generate import Generator, encode, specs_from_table
from fuzz.mutate import chunks, mutate
from protocol.parser import ProtocolError, QueryBufferLimitExceeded, RequestParser


def rss_bytes() -> int:
    """This process's resident set size."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@dataclass
class Findings:
    """What a run found: counts, and a few examples of each kind to reproduce them."""

    name: str
    inputs: int = 0
    commands: int = 0
    crashes: int = 0
    hangs: int = 0
    divergences: int = 0
    leaks: int = 0
    slowest: float = 0.0
    slowest_input: bytes = b""
    rss_start: int = 0
    rss_mid: int = 0  # halfway through the run: growth that stops early is warming up, not a leak
    rss_end: int = 0
    seconds: float = 0.0
    examples: list[str] = field(default_factory=list)

    def note(self, kind: str, detail: str) -> None:
        if len(self.examples) < 20:
            self.examples.append(f"{kind}: {detail[:600]}")

    @classmethod
    def merge(cls, parts: list[Findings]) -> Findings:
        """The findings of parallel jobs as one: counts add up, the memory growth is the
        largest of any job's."""
        total = cls(f"{parts[0].name} x{len(parts)} jobs" if len(parts) > 1 else parts[0].name)
        for f in parts:
            total.inputs += f.inputs
            total.commands += f.commands
            total.crashes += f.crashes
            total.hangs += f.hangs
            total.divergences += f.divergences
            total.leaks += f.leaks
            total.examples += f.examples
            total.seconds = max(total.seconds, f.seconds)
            if f.slowest > total.slowest:
                total.slowest, total.slowest_input = f.slowest, f.slowest_input
        worst = max(parts, key=lambda f: f.rss_end - f.rss_start)
        total.rss_start, total.rss_mid, total.rss_end = worst.rss_start, worst.rss_mid, worst.rss_end
        return total

    def summary(self) -> str:
        growth = (self.rss_end - self.rss_start) / 2**20
        cmds = f", {self.commands:,} commands" if self.commands else ""
        return (f"{self.name}: {self.inputs:,} inputs{cmds} in {self.seconds:.0f} s; "
                f"crashes {self.crashes}, hangs {self.hangs}, divergences {self.divergences}, "
                f"leaks {self.leaks}; slowest input {self.slowest * 1000:.1f} ms; "
                f"RSS {self.rss_start / 2**20:.1f} -> {self.rss_mid / 2**20:.1f} (halfway) -> "
                f"{self.rss_end / 2**20:.1f} MiB ({growth:+.1f} MiB)")


class Hang(Exception):
    """Raised by the interval timer inside an input that ran past the hard bound."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise Hang()


class Watchdog:
    """Interrupts an input after `hard` seconds of CPU time (an endless loop burns CPU; nothing
    in process waits on I/O). The CPU-time timer leaves SIGALRM to pytest-timeout."""

    def __init__(self, hard: float) -> None:
        self.hard = hard
        self.previous = signal.signal(signal.SIGVTALRM, _on_alarm)

    def arm(self) -> None:
        signal.setitimer(signal.ITIMER_VIRTUAL, self.hard)

    def disarm(self) -> None:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)

    def close(self) -> None:
        self.disarm()
        signal.signal(signal.SIGVTALRM, self.previous)


def corpus(rnd: random.Random, n: int = 2000) -> list[bytes]:
    """Well-formed requests of every command: one to eight commands each."""
    from server.command_table import COMMANDS, load_handlers

    load_handlers()
    gen = Generator(specs_from_table(COMMANDS), rnd)
    return [b"".join(encode(argv) for argv in gen.pipeline(rnd.randint(1, 8))) for _ in range(n)]


# --- the parser ------------------------------------------------------------------------------


def _parse(fast_path: str | None, reads: list[bytes]) -> tuple[list[list[bytes]], bytes | None, bool]:
    parser = RequestParser(fast_path=fast_path)
    commands: list[list[bytes]] = []
    error: ProtocolError | None = None
    try:
        for data in reads:
            got, error = parser.feed(data)
            commands += got
            if error is not None:
                break
    except QueryBufferLimitExceeded as exc:
        return commands + exc.commands, None, True
    return commands, error.reply if error is not None else None, False


def fuzz_parser(seconds: float, seed: int, max_inputs: int | None = None,
                hang_bound: float = 1.0) -> Findings:
    """Mutated requests against the build's fast path and the strict parser; see the module
    docstring. Stops after `seconds` or `max_inputs`."""
    rnd = random.Random(seed)
    found = Findings("parser (each fast path vs the strict parser)")
    base = corpus(rnd)
    watchdog = Watchdog(hang_bound * 10)
    found.rss_start = rss_bytes()
    start = time.monotonic()
    deadline = start + seconds
    try:
        while time.monotonic() < deadline and (max_inputs is None or found.inputs < max_inputs):
            if not found.rss_mid and time.monotonic() > start + seconds / 2:
                found.rss_mid = rss_bytes()
            for _ in range(200):
                data = mutate(rnd.choice(base), rnd, base)
                reads = chunks(data, rnd)
                found.inputs += 1
                t0 = time.perf_counter()
                watchdog.arm()
                try:
                    strict = _parse(None, reads)
                    fast = _parse("scan", reads)
                    if fast == strict:
                        fast = _parse("hiredis", reads)
                except Hang:
                    found.hangs += 1
                    found.note("hang", repr(data))
                    continue
                except Exception as exc:
                    found.crashes += 1
                    found.note("crash", f"{type(exc).__name__}: {exc} on {data!r}")
                    continue
                finally:
                    watchdog.disarm()
                took = time.perf_counter() - t0
                if took > found.slowest:
                    found.slowest, found.slowest_input = took, data
                if took > hang_bound:
                    found.hangs += 1
                    found.note("slow", f"{took:.2f} s on {data!r}")
                if fast != strict:
                    found.divergences += 1
                    found.note("divergence", f"{data!r} in reads {[len(r) for r in reads]}: "
                                             f"fast {fast!r} strict {strict!r}")
    finally:
        watchdog.close()
    found.seconds = time.monotonic() - start
    found.rss_end = rss_bytes()
    return found


# --- the command layer -----------------------------------------------------------------------


class CollectingTransport:
    """The harness's transport: keeps what the server writes, closes when told to."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.closing = False

    def write(self, data: bytes) -> None:
        self.data += data

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    abort = close

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 40000), "sockname": ("127.0.0.1", 6379)}.get(name, default)

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def get_write_buffer_size(self) -> int:
        return 0

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


class _ErrorCounter(logging.Handler):
    """Counts what the server logs at ERROR: every handler failure dispatch turns into a reply."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(self.format(record))


def _valid_resp(data: bytes) -> str | None:
    """None when data is a sequence of complete RESP2/RESP3 replies, else what is wrong."""
    reader = hiredis.Reader()
    reader.feed(data)
    try:
        while reader.gets() is not False:
            pass
    except hiredis.ProtocolError as exc:
        return f"invalid RESP: {exc}"
    if reader.has_data():
        return "incomplete reply at the end"
    return None


class CommandHarness:
    """One server, its loop and its data directory; inputs run through fresh clients."""

    def __init__(self) -> None:
        from server.command_table import COMMANDS, load_handlers
        from server.config import Config
        from server.server import Server

        load_handlers()
        self.commands = COMMANDS
        self.dir = tempfile.mkdtemp(prefix="rivulet-fuzz-")
        config = Config()
        config.set("dir", self.dir, startup=True)
        # No save points: FLUSHALL would write dump.rdb each round.
        config.set("save", "", startup=True)
        self.loop = asyncio.new_event_loop()
        self.loop_errors: list[str] = []
        self.loop.set_exception_handler(self._loop_error)
        self.server = Server(config)
        self.server.attach_loop(self.loop)
        self.errors = _ErrorCounter()
        logging.getLogger("rivulet").addHandler(self.errors)
        self.control = self._client()

    def _loop_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        self.loop_errors.append(f"{context.get('message')}: {type(exc).__name__}: {exc}")

    def _client(self) -> Any:
        from server.connection import Client

        client = Client(self.server)
        client.connection_made(CollectingTransport())
        return client

    def run(self, reads: list[bytes], settle: float = 0.0) -> tuple[bytes, Any]:
        """Feed reads to a new client, let the loop write and serve, disconnect it."""
        client = self._client()
        try:
            for data in reads:
                client.data_received(data)
            self.settle(settle)
        finally:
            client.connection_lost(None)
        return bytes(client.transport.data), client

    def settle(self, seconds: float = 0.0) -> None:
        self.loop.run_until_complete(asyncio.sleep(seconds))
        self.loop.run_until_complete(asyncio.sleep(0))

    def leaks(self, client: Any) -> list[str]:
        """Where the server still knows a client that disconnected."""
        where = []
        if client.id in self.server.clients:
            where.append("client list")
        if any(client in parked for parked in self.server.blocking.waiters.values()):
            where.append("blocked keys")
        pubsub = self.server.pubsub
        for table in (pubsub.channels, pubsub.shard_channels):
            if any(client in subs for subs in table.values()):
                where.append("Pub/Sub channels")
        if any(client in p.clients for p in pubsub.patterns.values()):
            where.append("Pub/Sub patterns")
        return where

    def reset(self) -> None:
        """Empty every database, as the start of a round (the data would otherwise only grow)."""
        self.control.run_commands([[b"FLUSHALL"]])
        self.control.out.clear()
        self.settle()

    def close(self) -> None:
        logging.getLogger("rivulet").removeHandler(self.errors)
        self.loop.close()
        import shutil

        shutil.rmtree(self.dir, ignore_errors=True)


def fuzz_commands(seconds: float, seed: int, max_inputs: int | None = None,
                  hang_bound: float = 2.0, progress: Callable[[Findings], None] | None = None) -> Findings:
    """Generated and mutated pipelines through the command layer; see the module docstring."""
    rnd = random.Random(seed)
    harness = CommandHarness()
    gen = Generator(specs_from_table(harness.commands), rnd)
    base = corpus(rnd, 500)
    found = Findings("commands (in process)")
    watchdog = Watchdog(hang_bound * 5)
    start = time.monotonic()
    deadline = start + seconds
    warmed = False
    try:
        while time.monotonic() < deadline and (max_inputs is None or found.inputs < max_inputs):
            harness.reset()
            if not warmed and time.monotonic() > start + min(10.0, seconds / 10):
                # The baseline once the modules, caches and interned values are in place.
                warmed = True
                found.rss_start = rss_bytes()
            if not found.rss_mid and time.monotonic() > start + seconds / 2:
                found.rss_mid = rss_bytes()
            for _ in range(100):
                pipeline = gen.pipeline(rnd.randint(1, 12))
                data = b"".join(encode(argv) for argv in pipeline)
                if rnd.random() < 0.5:
                    data = mutate(data, rnd, base)
                found.inputs += 1
                found.commands += len(pipeline)
                settle = 0.03 if rnd.random() < 0.02 else 0.0
                harness.errors.records.clear()
                harness.loop_errors.clear()
                t0 = time.perf_counter()
                watchdog.arm()
                try:
                    out, client = harness.run(chunks(data, rnd), settle)
                except Hang:
                    found.hangs += 1
                    found.note("hang", repr(data))
                    harness = _replace(harness)
                    continue
                except Exception as exc:
                    found.crashes += 1
                    found.note("crash", f"{type(exc).__name__}: {exc} on {data!r}")
                    continue
                finally:
                    watchdog.disarm()
                took = time.perf_counter() - t0 - settle
                if took > found.slowest:
                    found.slowest, found.slowest_input = took, data
                if took > hang_bound:
                    found.hangs += 1
                    found.note("slow", f"{took:.2f} s on {data!r}")
                failures = harness.errors.records + harness.loop_errors
                if failures:
                    found.crashes += 1
                    found.note("crash", f"{failures[0]} on {data!r}")
                bad = _valid_resp(out)
                if bad is not None:
                    found.crashes += 1
                    found.note("crash", f"{bad} in {out[:300]!r} for {data!r}")
                leaked = harness.leaks(client)
                if leaked:
                    found.leaks += 1
                    found.note("leak", f"{', '.join(leaked)} after {data!r}")
            if progress is not None:
                progress(found)
        harness.reset()
    finally:
        watchdog.close()
        harness.close()
    found.seconds = time.monotonic() - start
    if not warmed:
        found.rss_start = rss_bytes()
    found.rss_end = rss_bytes()
    return found


def _replace(harness: CommandHarness) -> CommandHarness:
    """A fresh server after an interrupted input (the old one may be in any state)."""
    harness.close()
    return CommandHarness()
