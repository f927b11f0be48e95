"""Regenerates payloads74.json: DUMP payloads written by a real Redis 7.4 for values of every
non-stream type and encoding, with what the value holds read back by commands; and legacy.json:
payloads in the older encodings Redis 7.4 still loads (ziplists, zipmaps, text doubles, the hash
field expiry types of 7.4's release candidates, plain lists and sets), made here, with what Redis 7.4
holds after RESTOREing each.

    python tests/data/rdb/values/generate.py [path/to/redis-server-7.4]

The same commands build the same values in Rivulet (tests/test_dump_redis74.py), whose DUMP must
equal these bytes where Redis's output does not depend on its hash tables' order (`identical`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from tests.dump_helpers import REDIS74_DEFAULT, snapshot  # noqa: E402
from server.rdb import intset, listpack, ziplist  # noqa: E402
from server.rdb.primitives import RdbWriter, crc64  # noqa: E402
from tests.serverproc import free_port, wait_for_port  # noqa: E402

FAR = 4102444800000  # 2100-01-01, in ms: field expiry times that stay in the future


def _cases() -> list[dict]:
    big_list = [f"element-{i}" for i in range(1000)]
    return [
        {"name": "string_short", "setup": [["SET", "k", "hello"]], "identical": True},
        {"name": "string_int8", "setup": [["SET", "k", "-12"]], "identical": True},
        {"name": "string_int32", "setup": [["SET", "k", "2000000000"]], "identical": True},
        {"name": "string_int64", "setup": [["SET", "k", "1234567890123"]], "identical": True},
        {"name": "string_lzf", "setup": [["SET", "k", "abc" * 100]], "identical": True},
        {"name": "string_incompressible", "setup": [["SET", "k", bytes(range(40)).hex()]], "identical": True},
        {"name": "string_empty", "setup": [["SET", "k", ""]], "identical": True},
        {"name": "list_small", "setup": [["RPUSH", "k", "a", "b", "1", "-300", "70000", "x" * 70]],
         "identical": True},
        {"name": "list_quicklist", "setup": [["RPUSH", "k", *big_list[i:i + 100]] for i in range(0, 1000, 100)],
         "identical": True},
        {"name": "list_plain_node", "setup": [["RPUSH", "k", "a", "y" * 10000, "b"]], "identical": True},
        {"name": "hash_listpack", "setup": [["HSET", "k", "f1", "v1", "f2", "2", "f3", "-5000", "long", "z" * 60]],
         "identical": True},
        {"name": "hash_table_by_count",
         "setup": [["HSET", "k", *[x for i in range(600) for x in (f"field{i}", f"value{i}")]]],
         "identical": False},
        {"name": "hash_table_by_value", "setup": [["HSET", "k", "a", "1", "b", "v" * 100]], "identical": False},
        {"name": "hash_listpackex",
         "setup": [["HSET", "k", "a", "1", "b", "2", "c", "3", "d", "4"],
                   ["HPEXPIREAT", "k", str(FAR), "FIELDS", "1", "c"],
                   ["HPEXPIREAT", "k", str(FAR - 5000), "FIELDS", "1", "a"]],
         "identical": True},
        {"name": "hash_metadata",
         "setup": [["HSET", "k", *[x for i in range(600) for x in (f"field{i}", f"value{i}")]],
                   ["HPEXPIREAT", "k", str(FAR), "FIELDS", "2", "field3", "field7"],
                   ["HPEXPIREAT", "k", str(FAR + 1000), "FIELDS", "1", "field9"]],
         "identical": False},
        {"name": "set_intset", "setup": [["SADD", "k", "1", "2", "3", "-5", "100000", "5000000000"]],
         "identical": True},
        {"name": "set_listpack", "setup": [["SADD", "k", "a", "b", "c", "12"]], "identical": True},
        {"name": "set_table", "setup": [["SADD", "k", *[f"m{i}" for i in range(200)]]], "identical": False},
        {"name": "set_table_ints", "setup": [["SADD", "k", *[str(i) for i in range(600)]]], "identical": False},
        {"name": "zset_listpack",
         "setup": [["ZADD", "k", "1", "a", "2.5", "b", "-inf", "c", "0", "d", "1e20", "e", "-0", "f",
                    "0.1", "g", "123456789012", "h"]],
         "identical": True},
        {"name": "zset_skiplist", "setup": [["ZADD", "k", *[x for i in range(200) for x in (str(i * 1.5), f"m{i}")]]],
         "identical": True},
        {"name": "zset_long_member", "setup": [["ZADD", "k", "1", "a", "2", "w" * 100]], "identical": True},
    ]


def _with_footer(body: bytes, version: int = 9) -> bytes:
    data = body + version.to_bytes(2, "little")
    return data + crc64(data).to_bytes(8, "little")


def _zipmap(pairs: list[tuple[bytes, bytes]]) -> bytes:
    """A zipmap as Redis 2.4 wrote it (each value with 0 or 2 free bytes after it)."""
    def length(n: int) -> bytes:
        return bytes((n,)) if n < 254 else b"\xfe" + n.to_bytes(4, "little")

    out = bytearray(bytes((len(pairs) if len(pairs) < 254 else 254,)))
    for i, (field, value) in enumerate(pairs):
        free = 2 if i % 2 else 0
        out += length(len(field)) + field + length(len(value)) + bytes((free,)) + value + b"\0" * free
    return bytes(out + b"\xff")


def _string(data: bytes) -> bytes:
    w = RdbWriter(compression=False)
    w.string(data)
    return w.getvalue()


def _legacy_cases() -> list[dict]:
    def strings(*items: bytes) -> bytes:
        w = RdbWriter()
        for item in items:
            w.string(item)
        return w.getvalue()

    def text_double(d: float) -> bytes:
        w = RdbWriter()
        w.double_text(d)
        return w.getvalue()

    big = [b"item-%d" % i for i in range(300)]
    cases = {
        "list_type1": b"\x01\x04" + strings(b"a", b"12", b"x" * 30, b"-7"),
        "list_ziplist": b"\x0a" + _string(ziplist.pack([b"a", 5, b"12", 300, -70000, 1 << 40, b"y" * 70, b""])),
        "list_quicklist": b"\x0e\x02" + _string(ziplist.pack(big[:150])) + _string(ziplist.pack(big[150:])),
        "hash_ziplist": b"\x0d" + _string(ziplist.pack([b"f1", b"v1", b"n", 7, b"long", b"z" * 80])),
        "hash_zipmap": b"\x09" + _string(_zipmap([(b"f1", b"v1"), (b"f2", b"value two"), (b"f3", b"")])),
        "hash_zipmap_big_value": b"\x09" + _string(_zipmap([(b"a", b"1"), (b"b", b"q" * 300)])),
        # In score order, as Redis wrote them (a loaded ziplist is not sorted again).
        "zset_ziplist": b"\x0c" + _string(ziplist.pack([b"c", b"-inf", b"a", 1, b"b", b"2.5", b"d", b"1e3"])),
        "zset_type3": b"\x03\x03" + b"".join(strings(m) + text_double(d) for m, d in
                                            ((b"a", 1.5), (b"b", -2.0), (b"c", float("inf")))),
        "zset_type3_big": b"\x03" + RdbWriter_length(130) + b"".join(strings(b"m%d" % i) + text_double(i / 4)
                                                            for i in range(130)),
        "set_type2_ints": b"\x02\x03" + strings(b"3", b"1", b"-2"),
        "set_type2_strings": b"\x02\x03" + strings(b"a", b"1", b"b"),
        "set_intset16": b"\x0b" + _string(intset.pack([-5, 1, 300])),
        "set_intset32": b"\x0b" + _string(intset.pack([1, 70000])),
        "set_intset64": b"\x0b" + _string(intset.pack([1, 1 << 40])),
        "hash_metadata_pre_ga": b"\x16\x03" + b"".join(
            RdbWriter_length(ttl) + strings(f, v)
            for ttl, f, v in ((0, b"a", b"1"), (FAR, b"b", b"2"), (FAR + 5, b"c", b"3"))),
        "hash_listpackex_pre_ga": b"\x17" + _string(listpack.pack([b"b", b"2", FAR, b"a", b"1", 0])),
    }
    return [{"name": name, "payload": _with_footer(body).hex()} for name, body in cases.items()]


def RdbWriter_length(n: int) -> bytes:  # noqa: N802 - a helper named for what it wraps
    w = RdbWriter()
    w.length(n)
    return w.getvalue()


def main() -> None:
    binary = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("RIVULET_REDIS74", REDIS74_DEFAULT)
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="redis74-gen-")
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", workdir],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc)
        client = redis.Redis(port=port)
        version = client.info("server")["redis_version"]
        out = []
        for case in _cases():
            client.flushall()
            for cmd in case["setup"]:
                client.execute_command(*cmd)
            payload = client.dump("k")
            out.append({**case, "payload": payload.hex(), "snapshot": snapshot(client, "k")})
        legacy = []
        for case in _legacy_cases():
            client.flushall()
            try:
                client.restore("k", 0, bytes.fromhex(case["payload"]))
            except redis.ResponseError as exc:
                raise SystemExit(f"Redis refused the legacy payload {case['name']}: {exc}") from None
            legacy.append({**case, "snapshot": snapshot(client, "k")})
        client.close()
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)
    target = Path(__file__).with_name("payloads74.json")
    lines = ",\n".join(json.dumps(case, separators=(",", ":")) for case in out)
    target.write_text(f'{{"redis_version":{json.dumps(version)},"cases":[\n{lines}\n]}}\n')
    print(f"wrote {len(out)} payloads from Redis {version} to {target}")
    lines = ",\n".join(json.dumps(case, separators=(",", ":")) for case in legacy)
    target = Path(__file__).with_name("legacy.json")
    target.write_text(f'{{"redis_version":{json.dumps(version)},"cases":[\n{lines}\n]}}\n')
    print(f"wrote {len(legacy)} legacy payloads as Redis {version} loads them to {target}")


if __name__ == "__main__":
    main()
