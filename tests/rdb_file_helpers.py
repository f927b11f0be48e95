"""Shared by the dump.rdb tests: a whole-keyspace snapshot read through commands, servers started
on a given RDB file, and the dataset the committed Redis-made files hold."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import redis

from tests.helpers import plain
from tests.serverproc import ROOT, free_port, wait_for_port

FILES = Path(__file__).resolve().parent / "data" / "rdb" / "files"


def _load_generator() -> Any:
    spec = importlib.util.spec_from_file_location("rdb_files_generate", FILES / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generator = _load_generator()


def dataset_commands(redis74: bool, skip_keys: frozenset[str] = frozenset({"gone"})) -> list[tuple[int, list[tuple]]]:
    """The committed files' dataset, without the keys that expire right after the save."""
    out = []
    for db, cmds in generator.dataset(redis74):
        out.append((db, [c for c in cmds if len(c) < 2 or c[1] not in skip_keys]))
    return out


def run_dataset(port: int, redis74: bool) -> None:
    generator.run_commands(port, dataset_commands(redis74))


def _strip_stream_info(info: list) -> dict:
    pairs = dict(zip(info[::2], info[1::2], strict=True))
    # Node layout and Redis 8's IDMP fields are not part of what the file must bring back.
    for name in (b"radix-tree-keys", b"radix-tree-nodes", b"idmp-duration", b"idmp-maxsize",
                 b"pids-tracked", b"iids-tracked", b"iids-added", b"iids-duplicates"):
        pairs.pop(name, None)
    return pairs


def snapshot(port: int, dbs: tuple[int, ...] = (0, 1, 9), *, field_ttls: bool = True,
             encodings: bool = True) -> dict:
    """Everything a key holds, as the server's commands report it, per database and key."""
    out: dict = {}
    for db in dbs:
        c = plain(redis.Redis(port=port, db=db, protocol=2))
        try:
            keys = sorted(c.execute_command("KEYS", "*"))
            for key in keys:
                kind = c.execute_command("TYPE", key)
                item: list[Any] = [kind, c.execute_command("PEXPIRETIME", key)]
                if encodings:
                    item.append(c.execute_command("OBJECT", "ENCODING", key))
                if kind == b"string":
                    item.append(c.execute_command("GET", key))
                elif kind == b"list":
                    item.append(c.execute_command("LRANGE", key, 0, -1))
                elif kind == b"hash":
                    flat = c.execute_command("HGETALL", key)
                    fields = sorted(zip(flat[::2], flat[1::2], strict=True))
                    item.append(fields)
                    if field_ttls:
                        names = [f for f, _ in fields]
                        item.append(c.execute_command("HPEXPIRETIME", key, "FIELDS", len(names), *names))
                elif kind == b"set":
                    item.append(sorted(c.execute_command("SMEMBERS", key)))
                elif kind == b"zset":
                    item.append(c.execute_command("ZRANGE", key, 0, -1, "WITHSCORES"))
                elif kind == b"stream":
                    item.append(c.execute_command("XRANGE", key, "-", "+"))
                    item.append(_strip_stream_info(c.execute_command("XINFO", "STREAM", key)))
                    groups = c.execute_command("XINFO", "GROUPS", key)
                    item.append(groups)
                    for group in groups:
                        name = dict(zip(group[::2], group[1::2], strict=True))[b"name"]
                        pending = c.execute_command("XPENDING", key, name, "-", "+", 1000)
                        # [id, consumer, idle ms, deliveries]: the idle time moves.
                        item.append([[p[0], p[1], p[3]] for p in pending])
                        consumers = c.execute_command("XINFO", "CONSUMERS", key, name)
                        item.append(sorted(dict(zip(x[::2], x[1::2], strict=True))[b"name"]
                                           for x in consumers))
                out[(db, key)] = item
        finally:
            c.close()
    return out


def wait_until(predicate: Any, timeout: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def start_server_on(rdb: Path | bytes, *args: str) -> tuple[subprocess.Popen, int, str]:
    """A Rivulet (appendonly no) whose data directory holds `rdb` as dump.rdb."""
    work = tempfile.mkdtemp(prefix="rivulet-rdb-")
    target = Path(work) / "dump.rdb"
    if isinstance(rdb, bytes):
        target.write_bytes(rdb)
    else:
        shutil.copy(rdb, target)
    port = free_port()
    log = open(os.path.join(work, "server.log"), "ab")
    proc = subprocess.Popen([sys.executable, "-m", "server", "--bind", "127.0.0.1", "--port",
                             str(port), "--dir", work, "--appendonly", "no", *args],
                            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    wait_for_port(port, proc)
    wait_until(lambda: _loaded(port), what="the file to load")
    return proc, port, work


def _loaded(port: int) -> bool:
    try:
        with redis.Redis(port=port) as c:
            return int(c.info("persistence")["loading"]) == 0
    except redis.BusyLoadingError:
        return False


def start_redis_on(binary: str, rdb: Path | bytes, *args: str) -> tuple[subprocess.Popen, int, str]:
    """A real Redis whose data directory holds `rdb` as dump.rdb."""
    work = tempfile.mkdtemp(prefix="redis-rdb-")
    target = Path(work) / "dump.rdb"
    if isinstance(rdb, bytes):
        target.write_bytes(rdb)
    else:
        shutil.copy(rdb, target)
    port = free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", work, *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(port, proc)
    return proc, port, work


def stop(proc: subprocess.Popen, work: str) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    shutil.rmtree(work, ignore_errors=True)


def run_server_expecting_failure(data_dir: str, *args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "server", "--bind", "127.0.0.1", "--port", str(free_port()),
         "--dir", data_dir, *args],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout)
