"""The stream value in Redis's serialization format (server/rdb/stream_codec.py).

Payloads come from real servers: a Redis 7.4 build (committed in tests/data/rdb/streams/, and
live when the binary is here), the system's Redis 7.0 (which writes type 19, not 21), and the
older-version and damaged payloads of Redis's own test suite. What Rivulet reads is compared
with what those servers report (XINFO STREAM FULL), and what it writes with what 7.4 writes,
byte for byte.
"""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path
from typing import Any

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.rdb.primitives import RdbError, RdbReader, RdbWriter, crc64
from server.rdb.stream_codec import (
    STREAM_TYPES,
    apply_stream_extras,
    extras_aux_value,
    parse_extras_aux,
    read_stream,
    stream_extras,
    write_stream,
)
from streams import NACK_FAIL, Stream, format_id, make_id
from tests.dump_helpers import payload_body, redis74  # noqa: F401 (fixture)

DATA = Path(__file__).parent / "data" / "rdb" / "streams"
PAYLOADS_74 = json.loads((DATA / "payloads_74.json").read_text())["scenarios"]
LEGACY = json.loads((DATA / "redis_legacy_payloads.json").read_text())
CORRUPT = json.loads((DATA / "redis_corrupt_payloads.json").read_text())


def _load_generator() -> Any:
    spec = importlib.util.spec_from_file_location("rdb_streams_generate", DATA / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCENARIOS: dict[str, list[tuple[Any, ...]]] = _load_generator().SCENARIOS


# --- helpers ---------------------------------------------------------------------------------

def decode(body: bytes, deep: bool = False) -> tuple[int, Stream]:
    r = RdbReader(body)
    t = r.type()
    s = read_stream(r, t, deep_sanitize=deep)
    assert r.at_end()
    return t, s


def encode(s: Stream) -> bytes:
    w = RdbWriter()
    write_stream(w, s)
    return w.getvalue()


def dump_payload(body: bytes, version: int = 12) -> bytes:
    """A DUMP payload around a value: RDB version (2 bytes LE), CRC-64 (8 bytes LE)."""
    head = body + version.to_bytes(2, "little")
    return head + crc64(head).to_bytes(8, "little")


def _b(v: Any) -> Any:
    if isinstance(v, str):
        return v.encode("latin-1")
    if isinstance(v, list):
        return [_b(x) for x in v]
    return v


def _pairs(flat: list[Any]) -> dict[bytes, Any]:
    return dict(zip(flat[0::2], flat[1::2], strict=True))


def redis_full(reply: list[Any], active_time: bool = True) -> dict[str, Any]:
    """XINFO STREAM FULL (RESP2) in a form comparable with `rivulet_full`. radix-tree-nodes is
    left out: Rivulet estimates it."""
    d = _pairs(_b(reply))
    groups = []
    for graw in d[b"groups"]:
        g = _pairs(graw)
        consumers = []
        for craw in g[b"consumers"]:
            c = _pairs(craw)
            consumers.append({
                "name": c[b"name"], "seen-time": c[b"seen-time"],
                "active-time": c[b"active-time"] if active_time else None,
                "pel-count": c[b"pel-count"], "pending": c[b"pending"]})
        groups.append({
            "name": g[b"name"], "last-delivered-id": g[b"last-delivered-id"],
            "entries-read": g[b"entries-read"], "lag": g[b"lag"], "pel-count": g[b"pel-count"],
            "pending": g[b"pending"], "consumers": consumers})
    return {
        "length": d[b"length"], "radix-tree-keys": d[b"radix-tree-keys"],
        "last-generated-id": d[b"last-generated-id"],
        "max-deleted-entry-id": d[b"max-deleted-entry-id"], "entries-added": d[b"entries-added"],
        "recorded-first-entry-id": d[b"recorded-first-entry-id"],
        "entries": d[b"entries"], "groups": groups}


def rivulet_full(s: Stream, active_time: bool = True) -> dict[str, Any]:
    f = s.info_full(0)
    groups = []
    for g in f["groups"]:
        groups.append({
            "name": g["name"], "last-delivered-id": format_id(g["last-delivered-id"]),
            "entries-read": g["entries-read"], "lag": g["lag"], "pel-count": g["pel-count"],
            "pending": [[format_id(e), c, t, n] for e, c, t, n in g["pending"]],
            "consumers": [{
                "name": c["name"], "seen-time": c["seen-time"],
                "active-time": c["active-time"] if active_time else None,
                "pel-count": c["pel-count"],
                "pending": [[format_id(e), t, n] for e, t, n in c["pending"]]}
                for c in g["consumers"]]})
    return {
        "length": f["length"], "radix-tree-keys": f["radix-tree-keys"],
        "last-generated-id": format_id(f["last-generated-id"]),
        "max-deleted-entry-id": format_id(f["max-deleted-entry-id"]),
        "entries-added": f["entries-added"],
        "recorded-first-entry-id": format_id(f["recorded-first-entry-id"]),
        "entries": [[format_id(e), fields] for e, fields in f["entries"]], "groups": groups}


def same_full(mine: dict[str, Any], theirs: dict[str, Any]) -> bool:
    """Equal XINFO STREAM FULL forms, lag included."""
    if mine != theirs:
        assert mine == theirs  # pytest shows the difference
    return True


def same_full_as_70(mine: dict[str, Any], redis70: dict[str, Any]) -> bool:
    """same_full against Redis 7.0 or 7.4.1, which differ from Rivulet in one XINFO rule: a
    stream whose entries were all deleted reports lag 0 for every group in Rivulet, as in Redis
    since the fix "Fix incorrect lag due to trimming stream via XTRIM command" (redis#13473,
    streamReplyWithCGLag's `!s->length` branch), and entries-added minus entries-read in 7.0
    and 7.4.1."""
    if mine["length"] == 0 and redis70["length"] == 0:
        mine = {**mine, "groups": [{**g, "lag": None} for g in mine["groups"]]}
        redis70 = {**redis70, "groups": [{**g, "lag": None} for g in redis70["groups"]]}
    return same_full(mine, redis70)


def raw_client(r: redis.Redis) -> redis.Redis:
    c = redis.Redis(port=r.connection_pool.connection_kwargs["port"], protocol=2)
    c.response_callbacks.clear()
    return c


def run_scenario(c: redis.Redis, name: str) -> None:
    c.flushall()
    for cmd in SCENARIOS[name]:
        c.execute_command(*cmd)


def assert_consistent(s: Stream) -> None:
    """Invariants the engine relies on, after a load."""
    store = s.store
    assert len(store.keys) == len(store.nodes)
    assert store.keys == sorted(store.keys)
    assert store.length == sum(n.live for n in store.nodes)
    ids = [eid for node in store.nodes for eid in node.ids(0, len(node))]
    assert ids == sorted(set(ids))
    for g in s.groups.values():
        owned = sum(len(c.pel) for c in g.consumers.values())
        assert owned + sum(1 for pe in g.pel.values() if pe.consumer is None) == len(g.pel)
        for c in g.consumers.values():
            for eid in c.pel:
                assert g.pel[eid].consumer is c


# --- Redis 7.4: committed payloads -----------------------------------------------------------

@pytest.mark.parametrize("name", sorted(PAYLOADS_74))
def test_74_payload_reads_as_74_reports_and_writes_back_byte_for_byte(name: str) -> None:
    case = PAYLOADS_74[name]
    body = payload_body(bytes.fromhex(case["payload"]))
    t, s = decode(body, deep=True)
    assert t == 21
    assert_consistent(s)
    assert same_full(rivulet_full(s), redis_full(case["xinfo_full"]))
    assert encode(s) == body


def test_74_payloads_cover_what_the_scenarios_build() -> None:
    assert set(PAYLOADS_74) == set(SCENARIOS)
    several_nodes = decode(payload_body(bytes.fromhex(PAYLOADS_74["many_nodes"]["payload"])))[1]
    assert several_nodes.node_count() == 7
    tiny = decode(payload_body(bytes.fromhex(
        PAYLOADS_74["small_nodes_by_bytes"]["payload"])))[1]
    assert tiny.node_count() >= 10


def test_loaded_stream_keeps_working_as_the_engine_expects() -> None:
    body = payload_body(bytes.fromhex(PAYLOADS_74["groups_and_pels"]["payload"]))
    _, s = decode(body)
    g = s.get_group(b"g1")
    assert g is not None
    before = len(g.pel)
    c, _ = g.touch_consumer(b"alice", 10**13)
    got = g.read_new(s, c, 5, False, 10**13)
    assert [format_id(e) for e, _ in got] == [b"1030-30", b"1031-31", b"1032-32", b"1033-33",
                                               b"1034-34"]
    assert len(g.pel) == before + 5
    assert g.ack([got[0][0]]) == 1
    new = s.add([b"k", b"v"], now_ms=10**13)
    assert s.get(new) == [b"k", b"v"]
    assert s.trim(maxlen=10) > 0
    assert len(s) == 10
    assert encode(decode(encode(s))[1]) == encode(s)


# --- Redis 7.4 live ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_live_74_dump_reads_and_writes_back(redis74: redis.Redis, name: str) -> None:  # noqa: F811
    c = raw_client(redis74)
    run_scenario(c, name)
    body = payload_body(c.dump("s"))
    _, s = decode(body, deep=True)
    assert same_full_as_70(rivulet_full(s),
                           redis_full(c.execute_command("XINFO", "STREAM", "s", "FULL", "COUNT", "0")))
    assert encode(s) == body


def _engine_stream() -> Stream:
    """A stream built by Rivulet's engine alone, with what 7.4 can hold."""
    s = Stream(node_max_entries=7)
    now = 1_700_000_000_000
    for i in range(60):
        fields = [b"a", b"%d" % i] if i % 4 else [b"b", b"x" * i, b"c", b"-%d" % i]
        s.add(fields, now_ms=now + i // 3)
    s.delete([make_id(now, 0), make_id(now + 5, 1), make_id(now + 19, 0)])
    s.trim(maxlen=50)
    g = s.create_group(b"grp", 0)
    c1, _ = g.touch_consumer(b"c1", now + 100)
    g.read_new(s, c1, 10, False, now + 100)
    c2, _ = g.touch_consumer(b"c2", now + 200)
    g.read_new(s, c2, 3, False, now + 200)
    g.ack([make_id(now + 4, 0)])
    g.create_consumer(b"lazy", now + 300)
    s.create_group(b"late", "$")
    s.create_group(b"unknown", 0, None).set_id(make_id(now + 6, 0))
    return s


def test_rivulet_payload_restores_in_live_74(redis74: redis.Redis) -> None:  # noqa: F811
    c = raw_client(redis74)
    c.flushall()
    s = _engine_stream()
    body = encode(s)
    assert c.execute_command("RESTORE", "s", 0, dump_payload(body)) == b"OK"
    assert redis_full(c.execute_command("XINFO", "STREAM", "s", "FULL", "COUNT", "0")) == rivulet_full(s)
    # 7.4 writes back what it loaded, byte for byte.
    assert payload_body(c.dump("s")) == body
    # And checks it deeply without complaint.
    c.execute_command("CONFIG", "SET", "sanitize-dump-payload", "yes")
    try:
        assert c.execute_command("RESTORE", "s2", 0, dump_payload(body)) == b"OK"
    finally:
        c.execute_command("CONFIG", "SET", "sanitize-dump-payload", "no")


# --- Redis 7.0 ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_redis70_dump_type19_reads_as_70_reports(real_redis: Any, name: str) -> None:
    c = redis.Redis(port=real_redis.port, protocol=2)
    c.response_callbacks.clear()
    run_scenario(c, name)
    body = payload_body(c.dump("s"))
    # Redis 7.0 writes streams as type 19 (no consumer active-time); 7.2 onwards as 21.
    t, s = decode(body, deep=True)
    assert t == 19
    assert_consistent(s)
    expected = redis_full(c.execute_command("XINFO", "STREAM", "s", "FULL", "COUNT", "0"),
                          active_time=False)
    assert same_full_as_70(rivulet_full(s, active_time=False), expected)
    # Type 19 has no active time: it loads as the seen time, as in Redis 7.4.
    for g in s.groups.values():
        for consumer in g.consumers.values():
            assert consumer.active_time == consumer.seen_time
    again = decode(encode(s))[1]
    assert rivulet_full(again) == rivulet_full(s)


# --- payloads from Redis's own tests ---------------------------------------------------------

def test_legacy_type15_payload_from_redis5() -> None:
    t, s = decode(payload_body(bytes.fromhex(LEGACY["legacy_v5_type15"])))
    assert t == 15
    full = rivulet_full(s)
    assert full["max-deleted-entry-id"] == b"0-0"
    assert full["entries-added"] == 2
    assert [(g["entries-read"], g["lag"]) for g in full["groups"]] == [(1, 1), (0, 2)]
    assert [e for e, _ in full["entries"]] == [b"5-0", b"6-0"]
    assert full["groups"][0]["pel-count"] == 4
    assert full["recorded-first-entry-id"] == b"5-0"


def test_legacy_type19_payload_from_redis70() -> None:
    t, s = decode(payload_body(bytes.fromhex(LEGACY["legacy_v7_0_type19"])))
    assert t == 19
    consumer = rivulet_full(s)["groups"][0]["consumers"][0]
    assert consumer["name"] == b"Alice"
    assert consumer["seen-time"] == consumer["active-time"] == 1669793405685


@pytest.mark.parametrize("case", CORRUPT, ids=[c["test"][:70] for c in CORRUPT])
def test_redis_corrupt_payloads_are_refused(case: dict[str, Any]) -> None:
    body = payload_body(bytes.fromhex(case["payload"]))
    r = RdbReader(body)
    with pytest.raises(RdbError):
        read_stream(r, r.type(), deep_sanitize=case["sanitize"])


def test_pel_entry_without_consumer_is_refused_deep_and_released_otherwise() -> None:
    s = _engine_stream()
    ids = list(s.groups[b"grp"].consumers[b"c2"].pel)
    full = encode(s)
    # Cut consumer c2 out of the payload (name, seen and active times, PEL count, its IDs),
    # leaving its entries in the group PEL with no owner, and count one consumer fewer.
    name = b"\x02c2"
    at = full.index(name)
    n = full[at + len(name) + 16]
    assert n == len(ids)
    cut = full[:at] + full[at + len(name) + 17 + 16 * n:]
    marker = b"\x03\x02c1"
    assert cut.count(marker) == 1
    cut = cut.replace(marker, b"\x02\x02c1")
    r = RdbReader(cut)
    with pytest.raises(RdbError, match="without consumer"):
        read_stream(r, r.type(), deep_sanitize=True)
    _, loaded = decode(cut)
    lg = loaded.groups[b"grp"]
    assert list(lg.nacked) == ids
    assert all(lg.pel[eid].consumer is None for eid in ids)
    assert_consistent(loaded)


# --- damage: never anything but RdbError -----------------------------------------------------

def _small_bodies() -> list[bytes]:
    out = []
    for name in ("basic", "value_encodings", "empty_with_groups", "xsetid", "seq_wraps_in_node",
                 "emptied_by_xdel"):
        out.append(payload_body(bytes.fromhex(PAYLOADS_74[name]["payload"])))
    out.append(encode(_engine_stream()))
    return out


def _load_or_refuse(data: bytes) -> None:
    r = RdbReader(data)
    try:
        t = r.type()
        if t not in STREAM_TYPES:
            return
        s = read_stream(r, t)
    except RdbError:
        return
    assert_consistent(s)
    encode(s)
    s.info_full(0)


def test_every_truncation_is_refused() -> None:
    for body in _small_bodies():
        for n in range(len(body)):
            r = RdbReader(body[:n])
            with pytest.raises(RdbError):
                r.type()
                read_stream(r, body[0])
                if not r.at_end():
                    raise RdbError("trailing", r.pos)


def test_flipped_bytes_never_crash() -> None:
    rng = random.Random(1234)
    for body in _small_bodies():
        for i in range(1, len(body)):
            for flip in (0xFF, 1 << rng.randrange(8), rng.randrange(1, 256)):
                damaged = bytearray(body)
                damaged[i] ^= flip
                _load_or_refuse(bytes(damaged))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_damage_never_crashes(data: st.DataObject) -> None:
    bodies = _small_bodies()
    body = bytearray(data.draw(st.sampled_from(bodies)))
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(1, len(body) - 1))
        body[i] = data.draw(st.integers(0, 255))
    _load_or_refuse(bytes(body))


# --- round trips of engine-built streams -----------------------------------------------------

OPS = st.lists(st.one_of(
    st.tuples(st.just("add"), st.integers(0, 3), st.integers(0, 5), st.binary(max_size=80)),
    st.tuples(st.just("del"), st.integers(0, 200)),
    st.tuples(st.just("trim"), st.integers(0, 60), st.booleans()),
    st.tuples(st.just("group"), st.integers(0, 3), st.integers(0, 200)),
    st.tuples(st.just("read"), st.integers(0, 3), st.integers(0, 4), st.integers(1, 20)),
    st.tuples(st.just("ack"), st.integers(0, 3), st.integers(0, 200)),
    st.tuples(st.just("claim"), st.integers(0, 3), st.integers(0, 4), st.integers(0, 200)),
    st.tuples(st.just("nack"), st.integers(0, 3), st.integers(0, 200)),
    st.tuples(st.just("idmp"), st.integers(0, 2), st.binary(min_size=1, max_size=6)),
), max_size=60)


def _build(ops: list[tuple[Any, ...]], node_max_entries: int) -> Stream:
    s = Stream(node_max_entries=node_max_entries, node_max_bytes=300)
    now = 1_000
    names = [b"g%d" % i for i in range(4)]
    for op in ops:
        now += 1
        kind = op[0]
        ids = [eid for eid, _ in s.range()]
        if kind == "add":
            _, width, bump, blob = op
            fields = [b"f", blob] if width == 0 else [
                x for j in range(width) for x in (b"n%d" % j, blob[j:] or b"%d" % (j - bump))]
            s.add(fields, now_ms=now + bump * 1000)
            now += bump * 1000
        elif kind == "del" and ids:
            s.delete([ids[op[1] % len(ids)]])
        elif kind == "trim":
            s.trim(maxlen=op[1], approx=op[2])
        elif kind == "group":
            name = names[op[1]]
            if name not in s.groups:
                s.create_group(name, ids[op[2] % len(ids)] if ids and op[2] % 3 else 0)
        elif kind in ("read", "ack", "claim", "nack"):
            g = s.get_group(names[op[1]])
            if g is None:
                continue
            if kind == "read":
                c, _ = g.touch_consumer(b"c%d" % op[2], now)
                g.read_new(s, c, op[3], False, now)
            elif kind == "ack" and len(g.pel):
                pending = list(g.pel)
                g.ack([pending[op[2] % len(pending)]])
            elif kind == "claim" and len(g.pel):
                pending = list(g.pel)
                c, _ = g.touch_consumer(b"c%d" % op[2], now)
                g.claim(s, c, [pending[op[3] % len(pending)]], 0, now)
            elif kind == "nack" and len(g.pel):
                pending = list(g.pel)
                g.nack(s, [pending[op[2] % len(pending)]], NACK_FAIL, None, False)
        elif kind == "idmp":
            new = s.add([b"p", op[2]], now_ms=now)
            s.idmp.record(b"p%d" % op[1], op[2], new)
    return s


def _state(s: Stream) -> Any:
    full = s.info_full(0, now_ms=10**9)
    nodes = [(k, n.fields, n.ids(0, len(n)), [n.is_dead(i) for i in range(len(n))],
              [n.fields_at(i) for i in range(len(n))])
             for k, n in zip(s.store.keys, s.store.nodes, strict=True)]
    nacked = {name: list(g.nacked) for name, g in s.groups.items()}
    idmp = (s.idmp.duration, s.idmp.maxsize, s.idmp.tracked, s.idmp.added, s.idmp.duplicates,
            {pid: list(p.order) for pid, p in s.idmp.producers.items()},
            {pid: dict(p.ids) for pid, p in s.idmp.producers.items()})
    return full, nodes, nacked, idmp


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS, st.integers(1, 6))
def test_engine_streams_round_trip_with_extras(ops: list[tuple[Any, ...]], per_node: int) -> None:
    s = _build(ops, per_node)
    body = encode(s)
    _, loaded = decode(body)
    assert_consistent(loaded)
    extras = stream_extras(s)
    if extras is not None:
        apply_stream_extras(loaded, extras)
    assert_consistent(loaded)
    assert _state(loaded) == _state(s)
    assert encode(loaded) == body
    assert stream_extras(loaded) == extras


def test_plain_stream_has_no_extras() -> None:
    s = _engine_stream()
    assert stream_extras(s) is None
    assert stream_extras(Stream()) is None


def test_extras_keep_idmp_and_released_entries() -> None:
    s = _engine_stream()
    s.idmp.configure(300, 7)
    eid = s.add([b"k", b"v"], now_ms=1_800_000_000_000)
    s.idmp.record(b"producer", b"iid-1", eid)
    s.idmp.duplicates = 3
    g = s.groups[b"grp"]
    released = list(g.pel)[:2]
    g.nack(s, released[::-1], NACK_FAIL, None, False)
    body = encode(s)
    _, loaded = decode(body)
    # What a reader of the 7.4 format alone (a Redis 7.4) gets: no released entries, default
    # IDMP state.
    assert all(eid not in loaded.groups[b"grp"].pel for eid in released)
    assert loaded.idmp.producers == {}
    extras = stream_extras(s)
    assert extras is not None
    apply_stream_extras(loaded, extras)
    lg = loaded.groups[b"grp"]
    assert list(lg.nacked) == released[::-1]
    assert loaded.idmp.duration == 300 and loaded.idmp.maxsize == 7
    assert loaded.idmp.recorded(b"producer", b"iid-1", 1_800_000_000_001) == eid
    assert loaded.idmp.duplicates == 3
    assert _state(loaded) == _state(s)


def test_damaged_extras_are_refused() -> None:
    s = _engine_stream()
    s.idmp.record(b"producer", b"iid", s.last_id)
    extras = stream_extras(s)
    assert extras is not None
    for n in range(len(extras)):
        with pytest.raises(RdbError):
            apply_stream_extras(decode(encode(s))[1], extras[:n])
    with pytest.raises(RdbError):
        apply_stream_extras(decode(encode(s))[1], extras + b"\x00")
    other = Stream()
    g_extras = stream_extras(_with_release(_engine_stream()))
    assert g_extras is not None
    with pytest.raises(RdbError, match="missing consumer group"):
        apply_stream_extras(other, g_extras)


def _with_release(s: Stream) -> Stream:
    g = s.groups[b"grp"]
    g.nack(s, list(g.pel)[:1], NACK_FAIL, None, False)
    return s


def test_node_limits_and_idmp_defaults_come_from_config() -> None:
    body = encode(_engine_stream())
    r = RdbReader(body)
    r.type()
    s = read_stream(r, 21, config={"stream-node-max-entries": 3, "stream-node-max-bytes": 99,
                                   "stream-idmp-duration": 50, "stream-idmp-maxsize": 9})
    assert (s.store.node_max_entries, s.store.node_max_bytes) == (3, 99)
    assert (s.idmp.duration, s.idmp.maxsize) == (50, 9)
    # Loaded nodes keep their size; new entries start nodes by the limits.
    before = s.node_count()
    for i in range(7):
        s.add([b"x", b"%d" % i], now_ms=2_000_000_000_000)
    assert s.node_count() == before + 3


def _nodes_and_rest(body: bytes) -> tuple[list[tuple[bytes, bytes]], bytes]:
    r = RdbReader(body)
    assert r.type() == 21
    nodes = [(r.string(), r.string()) for _ in range(r.length())]
    return nodes, body[r.pos:]


def _with_nodes(nodes: list[tuple[bytes, bytes]], rest: bytes) -> bytes:
    w = RdbWriter()
    w.type(21)
    w.length(len(nodes))
    for key, lp in nodes:
        w.string(key)
        w.string(lp)
    return w.getvalue() + rest


def test_nodes_in_any_order_load_in_id_order() -> None:
    # Redis keeps the nodes in a rax, whatever order the payload lists them in.
    s = _engine_stream()
    body = encode(s)
    nodes, rest = _nodes_and_rest(body)
    assert len(nodes) > 3
    _, loaded = decode(_with_nodes(nodes[::-1], rest))
    assert encode(loaded) == body


def test_inconsistent_nodes_are_refused() -> None:
    s = _engine_stream()
    nodes, rest = _nodes_and_rest(encode(s))
    cases = {
        "re-added with existing key": [nodes[0], nodes[0], *nodes[1:]],
        "overlap": [nodes[0], ((int.from_bytes(nodes[0][0], "big") + 1).to_bytes(16, "big"),
                               nodes[1][1]), *nodes[2:]],
        "not the size of a stream ID": [(nodes[0][0][:15], nodes[0][1]), *nodes[1:]],
        "length inconsistent": nodes[1:],
    }
    for what, bad in cases.items():
        r = RdbReader(_with_nodes(bad, rest))
        with pytest.raises(RdbError, match=what):
            read_stream(r, r.type())


def test_extras_aux_field_names_its_key() -> None:
    s = _with_release(_engine_stream())
    assert extras_aux_value(3, b"plain", _engine_stream()) is None
    value = extras_aux_value(3, b"my\x00key", s)
    assert value is not None
    dbid, key, blob = parse_extras_aux(value)
    assert (dbid, key, blob) == (3, b"my\x00key", stream_extras(s))
    with pytest.raises(RdbError):
        parse_extras_aux(value + b"x")
    with pytest.raises(RdbError):
        parse_extras_aux(value[:-1])
