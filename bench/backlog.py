"""Cold reads of a backlog: every entry of a large stream read once, 1,000 entries per request.

What a batch job (the Spark source), a dashboard paging through history or a consumer group
catching up does. Nothing is read twice, so no per-entry work done by an earlier read can help:
the figure is the cost of turning stored entries into the reply. Four ways through the same
stream, one client each:

* XRANGE key (last-ID + COUNT 1000, page after page (the first page from `-`);
* XREVRANGE key (last-ID - COUNT 1000, from the newest entry down;
* XREAD COUNT 1000 STREAMS key last-ID, from 0;
* XREADGROUP GROUP g c COUNT 1000 STREAMS key >, each batch acknowledged by an XACK sent with the
  next read (the consumer loop of bench/groupdriver.py, with larger batches).
"""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Callable

from bench.case import Case, Options
from bench.procstat import CpuMeter
from bench.resp import RespClient, encode, load_stream
from bench.stats import Metric, Sample
from bench.targets import Target

KEY = "bench:backlog"
PAGE = 1000
FIELDS = ("sensor-id", "1234", "temperature", "19.8")
WAYS = ["xrange", "xrevrange", "xread", "xreadgroup+xack"]


def _metric(way: str) -> str:
    return f"backlog.{way}"


# Every entry of the stream ends with its last value, and nothing else in a reply does: counting
# these tells how many entries of a reply have arrived.
_ENTRY_END = b"\r\n$%d\r\n%s\r\n" % (len(FIELDS[-1]), FIELDS[-1].encode())
_ID = re.compile(rb"\r\n\*2\r\n\$\d+\r\n(\d+-\d+)\r\n")


class PageClient:
    """Reads the pages of this case without a Python object per entry.

    A general client (hiredis building lists and bytes for each entry) spends more CPU per entry
    than either server, so the figure would be the client's: here a reply is complete when as
    many entries as its header announced have arrived (counted by their last value, a C-level
    scan), and only the IDs needed next are taken out of it.
    """

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=120)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()

    def close(self) -> None:
        self.sock.close()

    def _more(self) -> None:
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.buf += chunk

    def _line(self, pos: int) -> tuple[bytes, int]:
        while (end := self.buf.find(b"\r\n", pos)) < 0:
            self._more()
        return bytes(self.buf[pos:end]), end + 2

    def read_page(self, nested: bool, after_int: bool = False) -> tuple[int, bytes]:
        """One reply of entries: how many, and the reply. `nested`: inside XREAD's [[key,
        entries]]; `after_int`: an integer reply (XACK's) comes first."""
        pos = 0
        if after_int:
            line, pos = self._line(pos)
            if not line.startswith(b":"):
                raise RuntimeError(f"unexpected reply {line!r}")
        line, pos = self._line(pos)
        if line in (b"*-1", b"_", b"*0"):
            del self.buf[:pos]
            return 0, b""
        if nested:  # *1, *2, $<len> <key>, then the entries' header
            line, pos = self._line(pos)
            key_len, pos = self._line(pos)
            pos += int(key_len[1:]) + 2
            line, pos = self._line(pos)
        if not line.startswith(b"*"):
            raise RuntimeError(f"unexpected reply {line!r}")
        n = int(line[1:])
        while self.buf.count(_ENTRY_END, pos) < n:
            self._more()
        if not self.buf.endswith(_ENTRY_END):
            raise RuntimeError("a reply longer than its entries")
        reply = bytes(self.buf)
        del self.buf[:]
        return n, reply

    def call(self, command: bytes, nested: bool, after_int: bool = False) -> tuple[int, bytes]:
        self.sock.sendall(command)
        return self.read_page(nested, after_int)


def _last_id(reply: bytes) -> bytes:
    at = reply.rindex(b"\r\n*2\r\n$") + 6
    size_end = reply.index(b"\r\n", at)
    start = size_end + 2
    return reply[start:start + int(reply[at + 1:size_end])]


def read_xrange(client: PageClient, reverse: bool) -> int:
    """Page through the whole stream; entries read."""
    command = "XREVRANGE" if reverse else "XRANGE"
    first, last = ("+", "-") if reverse else ("-", "+")
    bound: bytes | str = first
    total = 0
    while True:
        n, reply = client.call(encode(command, KEY, bound, last, "COUNT", PAGE), False)
        if not n:
            return total
        total += n
        bound = b"(" + _last_id(reply)


def read_xread(client: PageClient) -> int:
    after: bytes | str = "0"
    total = 0
    while True:
        n, reply = client.call(encode("XREAD", "COUNT", PAGE, "STREAMS", KEY, after), True)
        if not n:
            return total
        total += n
        after = _last_id(reply)


def read_group(client: PageClient) -> int:
    read = encode("XREADGROUP", "GROUP", "g", "c", "COUNT", PAGE, "STREAMS", KEY, ">")
    ids: list[bytes] = []
    total = 0
    while True:
        if ids:
            n, reply = client.call(encode("XACK", KEY, "g", *ids) + read, True, after_int=True)
        else:
            n, reply = client.call(read, True)
        if not n:
            return total
        ids = _ID.findall(reply)
        if len(ids) != n:
            raise RuntimeError(f"{len(ids)} IDs in a reply of {n} entries")
        total += n


READERS: dict[str, Callable[[PageClient], int]] = {
    "xrange": lambda c: read_xrange(c, False),
    "xrevrange": lambda c: read_xrange(c, True),
    "xread": read_xread,
    "xreadgroup+xack": read_group,
}


class BacklogCase(Case):
    name = "backlog"
    metrics = [Metric(_metric(way), "entries/s", True,
                      f"every entry of a stream read once by {way.upper()}, COUNT {PAGE} per request")
               for way in WAYS]

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        entries = opts.backlog
        samples = {}
        with RespClient(target.port) as client:
            client.call("FLUSHALL")
            load_stream(client, KEY, entries, FIELDS)
            client.call("XGROUP", "CREATE", KEY, "g", "0")
            pages = PageClient(target.port)
            try:
                for way in WAYS:
                    cpu = CpuMeter(target.pid).start()
                    began = time.perf_counter()
                    got = READERS[way](pages)
                    elapsed = time.perf_counter() - began
                    used = cpu.stop()
                    if got != entries:
                        raise RuntimeError(f"{way} read {got} of {entries} entries")
                    samples[_metric(way)] = Sample(entries / elapsed, entries, used,
                                                   {"entries": entries, "count": PAGE})
            finally:
                pages.close()
            if client.call("XPENDING", KEY, "g")[0] != 0:
                raise RuntimeError("entries left pending after XREADGROUP + XACK")
        return samples
