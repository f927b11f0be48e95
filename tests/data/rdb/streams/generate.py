"""Regenerate payloads_74.json: DUMP payloads of streams built by a real Redis 7.4.

    python tests/data/rdb/streams/generate.py [path/to/redis-server]

The server defaults to $RIVULET_REDIS74 or /tmp/redis74/src/redis-server. Each scenario of
SCENARIOS runs on an empty server; the file keeps, per scenario, the DUMP payload of key `s` and
the server's XINFO STREAM s FULL reply (RESP2, bytes as latin-1 strings), which the tests compare
with what Rivulet reads from the payload. The scenarios are also run live by the tests when a
7.4 binary is present, and against Redis 7.0 (which writes type 19).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "payloads_74.json"
DEFAULT = "/tmp/redis74/src/redis-server"

Command = tuple[Any, ...]


def _many(n: int, start_ms: int = 1000) -> list[Command]:
    out: list[Command] = []
    for i in range(n):
        if i % 11 == 5:
            out.append(("XADD", "s", f"{start_ms + i}-{i}", "other", "x" * (i % 90), "n", -i * 7919))
        elif i % 17 == 3:
            out.append(("XADD", "s", f"{start_ms + i}-{i}", "k", "v", "w", str(1 << 40), "z", "07"))
        else:
            out.append(("XADD", "s", f"{start_ms + i}-{i}", "k", i, "w", "abc" * (i % 5)))
    return out


SCENARIOS: dict[str, list[Command]] = {
    "basic": [
        ("XADD", "s", "1-1", "f", "v"),
        ("XADD", "s", "2-0", "f", "w"),
        ("XADD", "s", "3-5", "g", "1", "h", "2"),
    ],
    "many_nodes": _many(700),
    "small_nodes_by_entries": [("CONFIG", "SET", "stream-node-max-entries", "3")]
    + _many(40) + [("CONFIG", "SET", "stream-node-max-entries", "100")],
    "small_nodes_by_bytes": [("CONFIG", "SET", "stream-node-max-bytes", "120")]
    + _many(40) + [("CONFIG", "SET", "stream-node-max-bytes", "4096")],
    "value_encodings": [
        ("XADD", "s", "5-10", "int", "12", "neg", "-5000", "big", str(-(1 << 63)), "huge",
         str(1 << 64), "lead0", "007", "plus", "+1", "empty", ""),
        ("XADD", "s", "6-0", "int", "4095", "neg", "-4096", "big", str((1 << 63) - 1), "huge",
         "1" * 25, "lead0", "-0", "plus", "0", "empty", ""),
        ("XADD", "s", "6-3", "long", "y" * 70),
        ("XADD", "s", "7-0", "longer", "z" * 5000),
        ("XADD", "s", "8-0", "bin", b"\x00\xff\r\n\x80"),
        ("XADD", "s", "9-0", "1", "2", "30000", "70000"),
        ("XADD", "s", "18446744073709551615-18446744073709551615", "last", "one"),
    ],
    # Elements whose size crosses lpEncodeBacklen's thresholds (16383 bytes take 3 bytes).
    "backlen_edges": [
        ("XADD", "s", "1-0", "a", "e" * 16377),
        ("XADD", "s", "1-1", "a", "e" * 16378),
        ("XADD", "s", "1-2", "a", "e" * 16379),
        ("XADD", "s", "1-3", "a", "f" * 122, "b", "g" * 4093),
    ],
    "deletions": _many(250) + [
        ("XDEL", "s", "1000-0", "1003-3", "1004-4", "1120-120", "1249-249"),
        ("XDEL", "s", *[f"{1000 + i}-{i}" for i in range(100, 200)]),
    ],
    "trims": _many(320) + [
        ("XTRIM", "s", "MAXLEN", "=", "185"),
        ("XTRIM", "s", "MINID", "1200-0"),
        ("XDEL", "s", "1250-250"),
    ],
    "emptied_by_xdel": [
        ("XADD", "s", "1-1", "a", "b"),
        ("XADD", "s", "2-2", "a", "c"),
        ("XDEL", "s", "1-1", "2-2"),
    ],
    "emptied_by_xtrim_with_group": _many(30) + [
        ("XGROUP", "CREATE", "s", "g", "0"),
        ("XREADGROUP", "GROUP", "g", "c", "COUNT", "5", "STREAMS", "s", ">"),
        ("XTRIM", "s", "MAXLEN", "0"),
    ],
    "empty_with_groups": [
        ("XGROUP", "CREATE", "s", "g1", "$", "MKSTREAM"),
        ("XGROUP", "CREATE", "s", "g0", "0"),
        ("XGROUP", "CREATECONSUMER", "s", "g1", "idle"),
    ],
    "groups_and_pels": _many(150) + [
        ("XGROUP", "CREATE", "s", "g1", "0"),
        ("XGROUP", "CREATE", "s", "g2", "1050-50", "ENTRIESREAD", "40"),
        ("XGROUP", "CREATE", "s", "g3", "$"),
        ("XGROUP", "CREATE", "s", "unknown-read", "0"),
        ("XGROUP", "SETID", "s", "unknown-read", "1010-10"),
        ("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "20", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "7", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g1", "carol", "COUNT", "3", "NOACK", "STREAMS", "s", ">"),
        ("XACK", "s", "g1", "1002-2", "1003-3", "1025-25"),
        ("XCLAIM", "s", "g1", "bob", "0", "1004-4", "1005-5", "RETRYCOUNT", "9"),
        ("XCLAIM", "s", "g1", "dave", "0", "1010-10", "TIME", "1700000000000"),
        ("XREADGROUP", "GROUP", "g1", "alice", "STREAMS", "s", "0"),
        ("XREADGROUP", "GROUP", "g2", "erin", "COUNT", "4", "STREAMS", "s", ">"),
        ("XGROUP", "CREATECONSUMER", "s", "g2", "frank"),
        ("XDEL", "s", "1000-0", "1051-51"),
        ("XCLAIM", "s", "g1", "bob", "0", "1000-0"),
    ],
    "xsetid": _many(20) + [
        ("XDEL", "s", "1007-7"),
        ("XSETID", "s", "99999-5", "ENTRIESADDED", "500", "MAXDELETEDID", "5000-1"),
        ("XGROUP", "CREATE", "s", "g", "1003-3", "ENTRIESREAD", "3"),
    ],
    "seq_wraps_in_node": [
        ("XADD", "s", "5-18446744073709551600", "f", "a"),
        ("XADD", "s", "6-0", "f", "b"),
        ("XADD", "s", "6-7", "g", "c"),
        ("XADD", "s", "1000000000000-1", "f", "d"),
    ],
}


def _jsonable(v: Any) -> Any:
    if isinstance(v, bytes):
        return v.decode("latin-1")
    if isinstance(v, list):
        return [_jsonable(x) for x in v]
    return v


def run(binary: str) -> dict[str, Any]:
    import redis  # the tests' client library; only needed here

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    workdir = tempfile.mkdtemp(prefix="rdb-streams-")
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", workdir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        r = redis.Redis(port=port, protocol=2)
        # Raw replies (XINFO's as the server sent it), not redis-py's parsed forms.
        r.response_callbacks.clear()
        for _ in range(100):
            try:
                r.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        info = r.execute_command("INFO", "server").decode()
        version = info.split("redis_version:")[1].split()[0]
        out: dict[str, Any] = {"redis_version": version, "scenarios": {}}
        for name, commands in SCENARIOS.items():
            r.flushall()
            for cmd in commands:
                r.execute_command(*cmd)
            payload = r.dump("s")
            full = r.execute_command("XINFO", "STREAM", "s", "FULL", "COUNT", "0")
            out["scenarios"][name] = {"payload": payload.hex(), "xinfo_full": _jsonable(full)}
        return out
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    binary = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("RIVULET_REDIS74", DEFAULT)
    data = run(binary)
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {len(data['scenarios'])} scenarios from Redis {data['redis_version']} to {OUT}")


if __name__ == "__main__":
    main()
