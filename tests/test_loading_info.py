"""INFO persistence's loading_* fields while the dataset loads (Redis 7.4's genRedisInfoString):
at start-up from the AOF or dump.rdb, and on a replica loading its master's snapshot."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import redis

from server.config import Config
from server.rdb.file import RdbFile, iter_rdb
from tests.serverproc import ROOT, RawConnection, ServerProcess, free_port, stop_process

FIELDS = ["loading_start_time", "loading_total_bytes", "loading_rdb_used_mem",
          "loading_loaded_bytes", "loading_loaded_perc", "loading_eta_seconds"]


def _persistence(port: int) -> list[tuple[str, str]] | None:
    """INFO persistence as (name, value) lines in order, or None while the port does not answer."""
    try:
        conn = RawConnection(port)
    except OSError:
        return None
    try:
        conn.send(b"INFO persistence\r\n")
        data = b""
        while b"\r\n" not in data:
            chunk = conn.sock.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, conn.buf = data.partition(b"\r\n")
        if not head.startswith(b"$"):
            return None
        body = conn.read_exactly(int(head[1:]) + 2)[:-2].decode()
    except OSError:
        return None
    finally:
        conn.close()
    pairs = [line.split(":", 1) for line in body.split("\r\n") if line and not line.startswith("#")]
    return [(name, value) for name, value in pairs]


def _watch_loading(port: int, done: Callable[[], bool], timeout: float = 120) -> list[list[tuple[str, str]]]:
    """INFO persistence snapshots taken while the server reported loading:1, until done()."""
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = _persistence(port)
        if lines is not None:
            fields = dict(lines)
            if fields.get("loading") == "1" or fields.get("async_loading") == "1":
                seen.append(lines)
            elif done():
                return seen
        time.sleep(0.005)
    raise AssertionError("the load did not end in time")


def _check_snapshots(seen: list[list[tuple[str, str]]], started: float, total: int, used_mem: int) -> None:
    assert seen, "INFO never answered while the dataset loaded"
    loaded_seen = []
    for lines in seen:
        names = [name for name, _ in lines]
        # The six fields close the section, in Redis's order.
        assert names[-6:] == FIELDS, names
        fields = dict(lines)
        start = int(fields["loading_start_time"])
        assert int(started) - 1 <= start <= time.time() + 1
        assert int(fields["loading_total_bytes"]) == total
        assert int(fields["loading_rdb_used_mem"]) in (0, used_mem)
        loaded = int(fields["loading_loaded_bytes"])
        assert 0 <= loaded <= (total or used_mem or loaded)
        base = total or int(fields["loading_rdb_used_mem"])
        perc = loaded / base * 100 if base else 0.0
        if not total:
            perc = min(perc, 99.99)
        assert fields["loading_loaded_perc"] == f"{perc:.2f}"
        assert int(fields["loading_eta_seconds"]) >= 0
        loaded_seen.append(loaded)
    assert loaded_seen == sorted(loaded_seen)  # the figure only goes forward


def _no_loading_fields(port: int) -> None:
    lines = _persistence(port)
    assert lines is not None
    assert dict(lines)["loading"] == "0"
    assert not [name for name, _ in lines if name.startswith("loading_")]


def _fill(r: redis.Redis, n: int) -> None:
    for start in range(0, n, 10_000):
        r.mset({f"key:{i}": "value" for i in range(start, min(start + 10_000, n))})


def _used_mem(rdb: bytes) -> int:
    info = RdbFile()
    for _ in iter_rdb(rdb, Config(), info, 0, 16):
        pass
    values = [value for name, value in info.aux if name == b"used-mem"]
    assert values, "the file has no used-mem field"
    return int(values[0])


def test_loading_fields_while_the_aof_loads_at_start_up(tmp_path: Path) -> None:
    path = tmp_path / "appendonly.aof"
    n = 300_000
    path.write_bytes(b"".join(b"*3\r\n$3\r\nSET\r\n$%d\r\nk%d\r\n$1\r\nv\r\n" % (len(str(i)) + 1, i)
                              for i in range(n)))
    port = free_port()
    started = time.time()
    proc = subprocess.Popen([sys.executable, "-m", "server", "--bind", "127.0.0.1", "--port", str(port),
                             "--dir", str(tmp_path), "--appendonly", "yes"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        seen = _watch_loading(port, lambda: redis.Redis(port=port).dbsize() == n)
        _check_snapshots(seen, started, path.stat().st_size, 0)
        _no_loading_fields(port)
    finally:
        stop_process(proc)


def test_loading_fields_while_dump_rdb_loads_at_start_up(tmp_path: Path) -> None:
    n = 300_000
    srv = ServerProcess("--appendonly", "no", data_dir=str(tmp_path)).start()
    try:
        r = redis.Redis(port=srv.port)
        _fill(r, n)
        r.save()
    finally:
        srv.stop()
    rdb = (tmp_path / "dump.rdb").read_bytes()
    port = free_port()
    started = time.time()
    proc = subprocess.Popen([sys.executable, "-m", "server", "--bind", "127.0.0.1", "--port", str(port),
                             "--dir", str(tmp_path), "--appendonly", "no", "--save", ""],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        seen = _watch_loading(port, lambda: redis.Redis(port=port).dbsize() == n)
        used_mem = _used_mem(rdb)
        _check_snapshots(seen, started, len(rdb), used_mem)
        assert any(int(dict(lines)["loading_rdb_used_mem"]) == used_mem for lines in seen)
        _no_loading_fields(port)
    finally:
        stop_process(proc)


def test_loading_fields_while_a_replica_loads_its_masters_snapshot() -> None:
    n = 300_000
    master = ServerProcess("--appendonly", "no").start()
    replica = ServerProcess("--appendonly", "no").start()
    try:
        m = redis.Redis(port=master.port)
        _fill(m, n)
        r = redis.Redis(port=replica.port)
        started = time.time()
        r.replicaof("127.0.0.1", master.port)
        seen = _watch_loading(replica.port, lambda: r.info("replication")["master_link_status"] == "up"
                              and r.dbsize() == n)
        assert seen, "INFO never answered while the replica loaded"
        # A snapshot streamed with an EOF mark has no size: the progress is measured against
        # the used-mem its writer recorded, once that field is read.
        total = int(dict(seen[0])["loading_total_bytes"])
        used_mem = max(int(dict(lines)["loading_rdb_used_mem"]) for lines in seen)
        _check_snapshots(seen, started, total, used_mem)
        _no_loading_fields(replica.port)
    finally:
        replica.cleanup()
        master.cleanup()
