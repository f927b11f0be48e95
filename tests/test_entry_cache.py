"""The encoded-entry cache behind XRANGE, XREVRANGE and XREAD (server/entry_cache.py).

Reads must give the same entries whether they are served from the cache or not, while cached
nodes get entries deleted (XDEL), trimmed (XTRIM) and appended (the tail node), in RESP2 and
RESP3; the cache keeps only what is read more than once, within stream-read-cache-bytes.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

BUDGETS = ["8mb", "0", "700"]  # the default, off, and small enough to evict on every read


@pytest.fixture(params=BUDGETS, ids=["default", "off", "tiny"])
def cached(request: pytest.FixtureRequest, rc: redis.Redis) -> Iterator[redis.Redis]:
    old = {k: rc.config_get(k)[k] for k in ("stream-read-cache-bytes", "stream-node-max-entries")}
    rc.config_set("stream-read-cache-bytes", request.param)
    rc.config_set("stream-node-max-entries", 5)
    yield rc
    for key, value in old.items():
        rc.config_set(key, value)


def _id(eid: bytes | str) -> tuple[int, int]:
    text = eid.decode() if isinstance(eid, bytes) else eid
    ms, seq = text.split("-")
    return int(ms), int(seq)


def check_reads(r: redis.Redis, model: list[tuple[str, dict]]) -> None:
    """Every read shape against the model, twice (the second read is served from the cache)."""
    def entries(reply: list) -> list[tuple[str, dict]]:
        return [(eid.decode(), {k.decode(): v.decode() for k, v in fields.items()})
                for eid, fields in reply]

    for _ in range(2):
        assert entries(r.xrange("s")) == model
        assert entries(r.xrevrange("s")) == model[::-1]
        for count in (1, 3, 7):
            assert entries(r.xrange("s", count=count)) == model[:count]
            assert entries(r.xrevrange("s", count=count)) == model[::-1][:count]
        if len(model) > 4:
            lo, hi = model[1][0], model[-2][0]
            inside = [e for e in model if _id(lo) <= _id(e[0]) <= _id(hi)]
            assert entries(r.xrange("s", lo, hi)) == inside
            assert entries(r.xrevrange("s", hi, lo, count=4)) == inside[::-1][:4]
            after = model[2][0]
            got = r.xread({"s": after}, count=5)
            got = got[b"s"][0] if isinstance(got, dict) else got[0][1]  # RESP3 map / RESP2 array
            assert entries(got) == [e for e in model if _id(e[0]) > _id(after)][:5]


def test_reads_follow_deletes_trims_and_appends(cached: redis.Redis) -> None:
    r = cached
    model = []
    for i in range(23):
        fields = {"sensor": str(i), "t": str(i * 0.5)} if i % 6 else {"other": "x" * i}
        model.append((r.xadd("s", fields).decode(), fields))
    check_reads(r, model)

    # Entries of nodes already cached disappear from the reads, runs split around them.
    for k in (3, 4, 9, 21):
        assert r.xdel("s", model[k][0]) == 1
    model = [e for i, e in enumerate(model) if i not in (3, 4, 9, 21)]
    check_reads(r, model)

    # The tail node's cache grows with it, and new nodes follow.
    for i in range(8):
        fields = {"sensor": f"n{i}", "t": "1"}
        model.append((r.xadd("s", fields).decode(), fields))
    check_reads(r, model)

    # An exact trim flags entries of a cached node; whole nodes leave with their cache.
    assert r.xtrim("s", maxlen=12, approximate=False) == len(model) - 12
    model = model[-12:]
    check_reads(r, model)


def _cache_info(r: redis.Redis) -> tuple[int, int]:
    info = r.info("memory")
    return info["stream_read_cache_bytes"], info["stream_read_cache_nodes"]


def _reset_cache(r: redis.Redis, budget: int | str) -> None:
    r.config_set("stream-read-cache-bytes", 0)  # empties it
    r.config_set("stream-read-cache-bytes", budget)


def _page_through(r: redis.Redis, key: str, count: int) -> int:
    last = "-"
    read = 0
    while page := r.xrange(key, "(" + last if last != "-" else "-", count=count):
        last = page[-1][0].decode()
        read += len(page)
    return read


def test_cache_keeps_what_is_read_again_within_its_budget(r: redis.Redis) -> None:
    old = r.config_get("stream-read-cache-bytes")["stream-read-cache-bytes"]
    try:
        _reset_cache(r, 20000)
        pipe = r.pipeline(transaction=False)
        for i in range(2000):
            pipe.xadd("big", {"sensor-id": "1234", "temperature": str(i)})
        pipe.execute()
        assert _cache_info(r) == (0, 0)  # writes alone cache nothing
        r.xrange("big", count=10)
        assert _cache_info(r) == (0, 0)  # read once: encoded for that read only
        r.xrange("big", count=10)
        used, nodes = _cache_info(r)
        assert 0 < used <= 20000 and nodes == 1
        # A read through the whole stream (20 nodes of 100 entries) keeps only what it read
        # before: the first node.
        assert _page_through(r, "big", 100) == 2000
        assert _cache_info(r)[1] == 1
        # Read again, the nodes are kept, the least recently read let go beyond the budget.
        assert _page_through(r, "big", 100) == 2000
        used, nodes = _cache_info(r)
        assert 10000 < used <= 20000 and 1 < nodes < 20
        # Entries of a dropped stream are never served again and give way to later reads.
        r.delete("big")
        for i in range(2000):
            pipe.xadd("other", {"a": str(i)})
        pipe.execute()
        for _ in range(2):
            assert _page_through(r, "other", 100) == 2000
        assert _cache_info(r)[0] <= 20000
        r.config_set("stream-read-cache-bytes", 0)
        assert _cache_info(r) == (0, 0)
        assert r.xrange("other", count=1)[0][1] == {b"a": b"0"}
        assert r.xrange("other", count=1)[0][1] == {b"a": b"0"}
        assert _cache_info(r) == (0, 0)
    finally:
        r.config_set("stream-read-cache-bytes", old)


def test_runs_split_by_deletions_share_one_cache(r: redis.Redis) -> None:
    # Reading a node whose live entries come in several runs must not make each run replace the
    # cache of the one before (which would re-encode the node on every read).
    def cached_bytes_after_reading(key: str, deleted: list[int]) -> int:
        _reset_cache(r, "8mb")
        for k in range(1, 11):
            r.xadd(key, {"f": "v"}, id=f"1-{k}")
        for k in deleted:
            r.xdel(key, f"1-{k}")
        for _ in range(3):
            assert [e[0] for e in r.xrange(key)] == [
                f"1-{k}".encode() for k in range(1, 11) if k not in deleted]
        used = _cache_info(r)[0]
        r.delete(key)
        return used

    whole = cached_bytes_after_reading("whole", [])
    assert whole > 0
    assert cached_bytes_after_reading("holes", [3, 4, 8]) == whole


def test_budget_is_a_memory_config(r: redis.Redis) -> None:
    old = r.config_get("stream-read-cache-bytes")["stream-read-cache-bytes"]
    assert old == str(8 * 1024 * 1024)
    try:
        r.config_set("stream-read-cache-bytes", "1mb")
        assert r.config_get("stream-read-cache-bytes") == {"stream-read-cache-bytes": "1048576"}
        with pytest.raises(redis.ResponseError, match="stream-read-cache-bytes"):
            r.config_set("stream-read-cache-bytes", "lots")
    finally:
        r.config_set("stream-read-cache-bytes", old)


def test_a_page_read_again_and_again_outlives_pages_read_since() -> None:
    """The cache lets go of the pages read least recently: a page a reader keeps polling is
    never the one let go."""
    from server.entry_cache import EntryCache
    from streams.stream import Stream

    s = Stream()
    ids = [(ms << 64) for ms in range(1, 20_001)]
    s.add_given(ids, [[b"f", b"v"]] * len(ids))
    cache = EntryCache(40_000)  # room for about ten nodes' pages
    hot = s.range_runs(ids[5_000], ids[-1], 10)
    expected = bytes(cache.reply(hot, False))
    for page in range(2, 2_000):
        runs = s.range_runs(ids[page * 10], ids[-1], 10)
        for _ in range(2):  # read twice: kept
            cache.reply(runs, False)
        assert bytes(cache.reply(hot, False)) == expected
        assert hot[0].key in cache._lru, page
    assert 2 <= len(cache) < 100 and cache.used <= cache.budget  # the others were let go


def test_reads_start_at_the_right_entry_of_a_millisecond() -> None:
    """Seeks inside a node, where a millisecond holds one entry and where it holds several."""
    from streams.stream import Stream

    s = Stream()
    ids = []
    for ms in range(1, 400):
        for seq in range(ms % 3 + 1):  # one, two or three entries per millisecond
            ids.append((ms << 64) | seq)
    s.add_given(ids, [[b"f", b"v"]] * len(ids))
    probes = sorted({eid + d for eid in ids for d in (-1, 0, 1)} | {(ms << 64) | 7 for ms in range(400)})
    for probe in probes:
        expect_ge = [eid for eid in ids if eid >= probe][:3]
        assert [e for e, _ in s.range(probe, (1 << 128) - 1, 3)] == expect_ge, probe
        expect_le = [eid for eid in ids if eid <= probe][::-1][:3]
        assert [e for e, _ in s.range(0, probe, 3, reverse=True)] == expect_le, probe
