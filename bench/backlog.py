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


def read_xrange(client: RespClient, reverse: bool) -> int:
    """Page through the whole stream; entries read."""
    command = "XREVRANGE" if reverse else "XRANGE"
    first, last = ("+", "-") if reverse else ("-", "+")
    bound: bytes | str = first
    total = 0
    while True:
        page = client.call(command, KEY, bound, last, "COUNT", PAGE)
        if not page:
            return total
        total += len(page)
        bound = b"(" + page[-1][0]


def read_xread(client: RespClient) -> int:
    after: bytes | str = "0"
    total = 0
    while True:
        reply = client.call("XREAD", "COUNT", PAGE, "STREAMS", KEY, after)
        if not reply:
            return total
        entries = reply[0][1]
        total += len(entries)
        after = entries[-1][0]


def read_group(client: RespClient) -> int:
    read = encode("XREADGROUP", "GROUP", "g", "c", "COUNT", PAGE, "STREAMS", KEY, ">")
    ids: list[bytes] = []
    total = 0
    while True:
        if ids:
            client.send(encode("XACK", KEY, "g", *ids) + read)
            reply = client.read_replies(2)[1]
        else:
            client.send(read)
            reply = client.read_replies(1)[0]
        if not reply:
            return total
        ids = [entry[0] for entry in reply[0][1]]
        total += len(ids)


READERS: dict[str, Callable[[RespClient], int]] = {
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
            for way in WAYS:
                cpu = CpuMeter(target.pid).start()
                began = time.perf_counter()
                got = READERS[way](client)
                elapsed = time.perf_counter() - began
                used = cpu.stop()
                if got != entries:
                    raise RuntimeError(f"{way} read {got} of {entries} entries")
                samples[_metric(way)] = Sample(entries / elapsed, entries, used,
                                               {"entries": entries, "count": PAGE})
            if client.call("XPENDING", KEY, "g")[0] != 0:
                raise RuntimeError("entries left pending after XREADGROUP + XACK")
        return samples
