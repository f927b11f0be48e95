"""Fuzzing a live server over TCP, and comparing reply types with a real Redis.

Live: many concurrent connections send generated pipelines (commands drawn from the server's own
COMMAND DOCS), half of them mutated at the byte level and cut into random writes. Each pipeline
is followed by RESET and an ECHO of a marker; the connection reads until the marker comes back
(the next pipeline then reuses it), the server closes it (a protocol error), or a short wait
ends (a mutation left the parser waiting for bytes that never come: the harness closes the
connection, as a client would). A reply "internal error" is a crash. After every round the
canary (PING, XADD, XRANGE on a fresh connection) must answer within a few seconds (else a hang)
and the process must be alive (else a crash); the canary then empties the server (FLUSHALL), so
that its RSS, read from /proc after the first round and at the end, shows what the server
keeps, not the data the round wrote.

Differential: the same generated (not mutated) pipelines go to Rivulet and to a real
redis-server, one pipeline at a time, each after FLUSHALL; the first reply whose type differs
(an error on one side, not on the other) is a finding, recorded with its command.
"""

from __future__ import annotations

import asyncio
import random
import socket
import time
from collections import Counter
from typing import Any

import hiredis

from fuzz.generate import Generator, encode, specs_from_docs
from fuzz.inprocess import Findings
from fuzz.mutate import chunks, mutate

CANARY_TIMEOUT = 5.0
MARKER_WAIT = 0.3


def _decode(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict):
        return {_decode(k): _decode(v) for k, v in value.items()}
    return value


def _as_map(value: Any) -> dict:
    """A RESP3 map, or the flat RESP2 array of one, as a dict."""
    if isinstance(value, dict):
        return value
    return dict(zip(value[::2], value[1::2], strict=True))


def live_specs(port: int) -> list:
    """The commands a live server documents: COMMAND DOCS for the arguments, COMMAND for the
    arities and the blocking flag."""
    conn = _Conn(port)
    try:
        docs_raw = conn.request([[b"COMMAND", b"DOCS"]])[0]
        info_raw = conn.request([[b"COMMAND"]])[0]
    finally:
        conn.close()
    docs = {name: _normalise(doc) for name, doc in _as_map(_decode(docs_raw)).items()}
    arities: dict[str, int] = {}
    blocking: set[str] = set()

    def add(entry: list) -> None:
        name = entry[0]
        arities[name] = int(entry[1])
        if "blocking" in entry[2]:
            blocking.add(name)
        for sub in entry[9] if len(entry) > 9 else ():
            add(sub)

    for entry in _decode(info_raw):
        add(entry)
    return specs_from_docs(docs, arities, blocking)


def _normalise(doc: Any) -> dict:
    """COMMAND DOCS maps with their nested arguments and subcommands as dicts."""
    doc = _as_map(doc)
    if "arguments" in doc:
        doc["arguments"] = [_normalise(a) for a in doc["arguments"]]
    if "subcommands" in doc:
        doc["subcommands"] = {k: _normalise(v) for k, v in _as_map(doc["subcommands"]).items()}
    return doc


def rss_of(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def canary(port: int) -> str | None:
    """None when the server answers PING, XADD and XRANGE on a new connection, else why not."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=CANARY_TIMEOUT) as s:
            s.sendall(encode([b"PING"]) + encode([b"XADD", b"fuzz:canary", b"*", b"f", b"v"])
                      + encode([b"XRANGE", b"fuzz:canary", b"-", b"+", b"COUNT", b"1"])
                      + encode([b"FLUSHALL"]))
            reader = hiredis.Reader()
            replies: list[Any] = []
            while len(replies) < 4:
                data = s.recv(65536)
                if not data:
                    return "connection closed"
                reader.feed(data)
                while (reply := reader.gets()) is not False:
                    replies.append(reply)
            if replies[0] != b"PONG" or not isinstance(replies[1], bytes) or len(replies[2]) != 1:
                return f"unexpected replies {replies!r}"
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


class LiveFuzzer:
    def __init__(self, port: int, pid: int, seed: int, connections: int = 12) -> None:
        self.port = port
        self.pid = pid
        self.rnd = random.Random(seed)
        self.gen = Generator(live_specs(port), self.rnd)
        self.base = [b"".join(encode(a) for a in self.gen.pipeline(self.rnd.randint(1, 6)))
                     for _ in range(300)]
        self.connections = connections
        self.found = Findings("live server over TCP")
        self.closed_by_server = 0
        self.no_marker = 0
        self.marker = 0

    async def _one(self, conn: tuple[Any, Any] | None) -> tuple[Any, Any] | None:
        """One pipeline on conn (or a new connection); returns the connection if it is still
        usable (its marker answered: RESET left it as new), else None, having closed it."""
        rnd = self.rnd
        pipeline = self.gen.pipeline(rnd.randint(1, 20))
        data = b"".join(encode(argv) for argv in pipeline)
        if rnd.random() < 0.5:
            data = mutate(data, rnd, self.base)
        self.marker += 1
        marker = b"fuzz-end-%d" % self.marker
        tail = encode([b"RESET"]) + encode([b"ECHO", marker])
        self.found.inputs += 1
        self.found.commands += len(pipeline)
        if conn is None:
            conn = await asyncio.open_connection("127.0.0.1", self.port)
        reader, writer = conn
        got = bytearray()
        answered = False
        try:
            for part in [*chunks(data, rnd), tail]:
                if writer.is_closing():
                    break
                writer.write(part)
                await writer.drain()
            loop = asyncio.get_running_loop()
            until = loop.time() + MARKER_WAIT
            while marker not in got:
                left = until - loop.time()
                if left <= 0:
                    self.no_marker += 1
                    break
                try:
                    chunk = await asyncio.wait_for(reader.read(65536), left)
                except TimeoutError:
                    self.no_marker += 1
                    break
                if not chunk:
                    self.closed_by_server += 1
                    break
                got += chunk
            else:
                answered = True
        except (ConnectionError, OSError):
            self.closed_by_server += 1
        if b"internal error" in got:
            self.found.crashes += 1
            at = got.find(b"internal error")
            self.found.note("crash", f"{bytes(got[at - 5:at + 120])!r} for {data!r}")
        if answered and got.endswith(marker + b"\r\n"):
            return conn
        writer.close()
        try:
            await writer.wait_closed()
        except (ConnectionError, OSError):
            pass
        return None

    async def _worker(self, batches: int) -> None:
        conn = None
        for _ in range(batches):
            conn = await self._one(conn)
        if conn is not None:
            conn[1].close()

    async def run(self, seconds: float, max_inputs: int | None = None) -> Findings:
        found = self.found
        start = time.monotonic()
        deadline = start + seconds
        rounds = 0
        while time.monotonic() < deadline and (max_inputs is None or found.inputs < max_inputs):
            await asyncio.gather(*(self._worker(20) for _ in range(self.connections)))
            rounds += 1
            why = await asyncio.get_running_loop().run_in_executor(None, canary, self.port)
            if why is not None:
                alive = _alive(self.pid)
                if alive:
                    found.hangs += 1
                else:
                    found.crashes += 1
                found.note("canary", f"{why} (server {'alive' if alive else 'gone'}) in round {rounds}")
                if not alive:
                    break
            if rounds == 1:
                found.rss_start = rss_of(self.pid)
            if not found.rss_mid and time.monotonic() > start + seconds / 2:
                found.rss_mid = rss_of(self.pid)
        found.seconds = time.monotonic() - start
        if _alive(self.pid):
            found.rss_end = rss_of(self.pid)
        return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def fuzz_live(port: int, pid: int, seconds: float, seed: int, max_inputs: int | None = None,
              connections: int = 12) -> tuple[Findings, dict[str, int]]:
    """Run the live fuzzer; returns its findings and how the pipelines ended."""
    fuzzer = LiveFuzzer(port, pid, seed, connections)
    found = asyncio.run(fuzzer.run(seconds, max_inputs))
    ends = {"marker answered": found.inputs - fuzzer.no_marker - fuzzer.closed_by_server,
            "closed by the server (protocol error)": fuzzer.closed_by_server,
            "left waiting for bytes (closed by the harness)": fuzzer.no_marker}
    return found, ends


# --- differential ------------------------------------------------------------------------------


class _Conn:
    def __init__(self, port: int, timeout: float = 10.0) -> None:
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.reader = hiredis.Reader()

    def request(self, commands: list[list[bytes]]) -> list[Any]:
        """Send the commands then ECHO of a marker; the replies before the marker."""
        marker = b"fuzz-diff-end"
        self.sock.sendall(b"".join(encode(c) for c in commands) + encode([b"ECHO", marker]))
        replies: list[Any] = []
        while True:
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("closed")
            self.reader.feed(data)
            while (reply := self.reader.gets()) is not False:
                if reply == marker:
                    return replies
                replies.append(reply)

    def close(self) -> None:
        self.sock.close()


def _request(conn: _Conn, pipeline: list[list[bytes]]) -> tuple[list[Any] | None, _Conn]:
    """The replies to the pipeline after a FLUSHALL, or None (on a new connection) when they
    did not come in time."""
    try:
        return conn.request([[b"FLUSHALL"]] + pipeline)[1:], conn
    except (TimeoutError, ConnectionError):
        conn.close()
        return None, _Conn(conn.port)


def _version(port: int) -> str:
    conn = _Conn(port)
    try:
        info = conn.request([[b"INFO", b"server"]])[0].decode()
    finally:
        conn.close()
    version = next((line.split(":", 1)[1].strip() for line in info.splitlines()
                    if line.startswith("redis_version:")), "?")
    return f"Redis {version}"


def _kind(reply: Any) -> str:
    return "error" if isinstance(reply, hiredis.ReplyError) else "reply"


def fuzz_differential(rivulet_port: int, redis_port: int, seconds: float, seed: int,
                      max_inputs: int | None = None) -> tuple[Findings, Counter, dict[str, str]]:
    """Generated pipelines to both servers; counts of first divergences per command, with one
    example each."""
    rnd = random.Random(seed)
    ours = live_specs(rivulet_port)
    theirs = {s.words for s in live_specs(redis_port)}
    specs = [s for s in ours if s.words in theirs]
    gen = Generator(specs, rnd)
    found = Findings(f"differential against {_version(redis_port)} ({len(specs)} of {len(ours)} "
                     "commands known to both)")
    by_command: Counter = Counter()
    example: dict[str, str] = {}
    a, b = _Conn(rivulet_port), _Conn(redis_port)
    start = time.monotonic()
    deadline = start + seconds
    # Subscribed mode or CLIENT REPLY OFF would swallow the marker: those are for the live fuzzer.
    skip = {b"SUBSCRIBE", b"PSUBSCRIBE", b"SSUBSCRIBE", b"CLIENT", b"HELLO", b"QUIT", b"RESET",
            b"MULTI", b"WAIT", b"WAITAOF", b"SELECT", b"SWAPDB"}
    try:
        while time.monotonic() < deadline and (max_inputs is None or found.inputs < max_inputs):
            pipeline = [c for c in gen.pipeline(rnd.randint(1, 8)) if c[0] not in skip]
            if not pipeline:
                continue
            found.inputs += 1
            found.commands += len(pipeline)
            mine, a = _request(a, pipeline)
            real, b = _request(b, pipeline)
            if mine is None or real is None:
                # A blocking command whose timeout a hostile value made long (BLPOP k 2147483647)
                # waits on both servers; waiting on one only is a finding.
                if (mine is None) != (real is None):
                    found.divergences += 1
                    who = "Rivulet" if mine is None else "Redis"
                    by_command[f"no reply within 10 s from {who}"] += 1
                    example.setdefault(f"no reply within 10 s from {who}", repr(pipeline))
                continue
            for argv, x, y in zip(pipeline, mine, real, strict=False):
                if _kind(x) != _kind(y):
                    found.divergences += 1
                    name = b" ".join(argv[:2] if argv[0] in (b"XGROUP", b"XINFO", b"OBJECT", b"CONFIG",
                                                            b"MEMORY", b"COMMAND", b"PUBSUB",
                                                            b"CLIENT", b"FUNCTION", b"SCRIPT")
                                     else argv[:1]).decode("latin-1")
                    by_command[name] += 1
                    if name not in example:
                        example[name] = f"{argv!r}: rivulet {x!r}, redis {y!r}"
                    break
    finally:
        a.close()
        b.close()
    found.seconds = time.monotonic() - start
    return found, by_command, example
