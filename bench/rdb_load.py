"""Start-up load of a large dump.rdb: entries per second, Rivulet against Redis on the same file.

The file is made once per bench run by a real redis-server (or by Rivulet when Redis is not
installed): N strings, a stream of N entries, and N/10 hashes of 10 fields (every element an
"entry"). Each run starts a server on a copy of it and reads the load time the server logs ("DB
loaded from disk: X seconds", which both print when the load is done). Target: Rivulet at least
half Redis's entries per second.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.case import Case, Options
from bench.resp import RespClient, encode, load_stream
from bench.stats import Metric, Sample
from bench.targets import RIVULET, Target, redis_available
from tests.serverproc import ROOT, RedisProcess, ServerProcess, free_port, wait_for_port

_LOADED = re.compile(r"DB loaded from disk: ([0-9.]+) seconds")
_made: dict[int, tuple[Path, int]] = {}


def _fill(client: RespClient, n: int) -> int:
    """Write the dataset; returns its number of entries."""
    batch = 1000
    for start in range(0, n, batch):
        client.send(b"".join(encode("SET", f"key:{i}", f"value:{i:012d}") for i in range(start, min(n, start + batch))))
        client.read_replies(min(batch, n - start))
    load_stream(client, "bench:stream", n, ("sensor-id", "1234", "temperature", "19.8"))
    hashes = n // 10
    for start in range(0, hashes, batch):
        end = min(hashes, start + batch)
        client.send(b"".join(encode("HSET", f"hash:{i}", *[x for f in range(10) for x in (f"field{f}", f"v{i}-{f}")])
                             for i in range(start, end)))
        client.read_replies(end - start)
    return n + n + hashes * 10


def make_file(n: int) -> tuple[Path, int]:
    """The dump.rdb of N strings, an N-entry stream and N/10 hashes, made by Redis when present."""
    if n in _made:
        return _made[n]
    proc: RedisProcess | ServerProcess
    proc = RedisProcess().start() if redis_available() else ServerProcess("--appendonly", "no").start()
    try:
        with RespClient(proc.port, timeout=600) as client:
            entries = _fill(client, n)
            client.call("SAVE")
        out = Path(tempfile.mkdtemp(prefix="bench-rdb-")) / "dump.rdb"
        shutil.copy(Path(proc.dir) / "dump.rdb", out)
    finally:
        proc.cleanup()
    _made[n] = (out, entries)
    return out, entries


def _load_seconds(name: str, rdb: Path) -> float:
    work = tempfile.mkdtemp(prefix="bench-rdb-load-")
    shutil.copy(rdb, Path(work) / "dump.rdb")
    port = free_port()
    log_path = Path(work) / "server.log"
    if name == RIVULET:
        argv = [sys.executable, "-m", "server", "--port", str(port), "--bind", "127.0.0.1",
                "--dir", work, "--appendonly", "no", "--save", "", "--logfile", str(log_path)]
    else:
        argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", work,
                "--appendonly", "no", "--save", "", "--logfile", str(log_path)]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc, timeout=600)
        deadline = time.monotonic() + 600
        while True:
            match = _LOADED.search(log_path.read_text(errors="replace")) if log_path.exists() else None
            if match:
                return float(match.group(1))
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not load the file:\n{log_path.read_text(errors='replace')}")
            time.sleep(0.05)
    finally:
        proc.terminate()
        proc.wait(60)
        shutil.rmtree(work, ignore_errors=True)


class RdbLoadCase(Case):
    name = "rdb-load"
    metrics = [
        Metric("rdb_load.entries_per_sec", "entries/s", True,
               "entries loaded per second from a dump.rdb of N strings, an N-entry stream and N/10 "
               "hashes of 10 fields, made by Redis (target >= 0.5x Redis)"),
    ]
    default_repeat = 3
    fresh_server_per_run = True

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        rdb, entries = make_file(opts.entries)
        seconds = _load_seconds(target.name, rdb)
        extra = {"entries": entries, "seconds": seconds, "file_bytes": os.path.getsize(rdb)}
        return {"rdb_load.entries_per_sec": Sample(entries / max(seconds, 1e-6), entries, seconds, extra)}
