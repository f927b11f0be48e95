"""The eviction policies against real server processes: which keys each policy evicts, the
`evicted` notifications, the DELs in the AOF and on a replica, a stream workload held at its
limit, and a blocked reader of an evicted stream."""

from __future__ import annotations

import os
import threading
import time

import pytest
import redis

from tests.helpers import aof_path, parse_aof
from tests.replica_helpers import REDIS74, RedisServer, wait_until

VALUE = "v" * 1000


def _set_limit(r: redis.Redis, headroom: int) -> int:
    """maxmemory = the figure now + headroom; returns the limit. (The figure compared with the
    limit is the one used_memory shows once a limit is set: a first, large one switches it on.)"""
    r.config_set("maxmemory", "100gb")
    limit = r.info("memory")["used_memory"] + headroom
    r.config_set("maxmemory", limit)
    return limit


def _server(server_factory, policy: str, *args: str) -> redis.Redis:
    srv = server_factory("--appendonly", "no", "--maxmemory-policy", policy,
                         "--maxmemory-samples", "10", *args)
    return redis.Redis(port=srv.port)


def test_allkeys_lru_keeps_recently_used_keys(server_factory):
    r = _server(server_factory, "allkeys-lru")
    pipe = r.pipeline(transaction=False)
    for i in range(100):
        pipe.set(f"a:{i}", VALUE)
    pipe.execute()
    # The LRU clock counts seconds, as Redis's: let the keys grow idle, then touch a few.
    time.sleep(2.2)
    hot = [f"a:{i}" for i in range(0, 100, 5)]
    for key in hot:
        assert r.get(key) == VALUE.encode()
    limit = _set_limit(r, 2000)
    for i in range(60):
        assert r.set(f"b:{i}", VALUE)
    stats = r.info("stats")
    assert stats["evicted_keys"] >= 55
    assert r.exists(*hot) == len(hot)
    assert r.info("memory")["used_memory"] <= limit
    # The newest keys were not the ones evicted either.
    assert r.exists(*[f"b:{i}" for i in range(50, 60)]) == 10


@pytest.mark.parametrize("policy", ["volatile-lru", "volatile-lfu", "volatile-random",
                                    "volatile-ttl"])
def test_volatile_policies_evict_only_keys_with_a_ttl(server_factory, policy):
    r = _server(server_factory, policy)
    pipe = r.pipeline(transaction=False)
    for i in range(50):
        pipe.set(f"keep:{i}", VALUE)
        pipe.set(f"ttl:{i}", VALUE, ex=10000 + i)
    pipe.execute()
    _set_limit(r, 3000)
    refused = None
    for i in range(200):
        try:
            r.set(f"new:{i}", VALUE)
        except redis.exceptions.OutOfMemoryError as exc:
            # (redis-py takes the OOM code off the message.)
            refused = f"OOM {exc}"
            break
    # Every key with a TTL went before a write was refused; none of the others did.
    assert refused == "OOM command not allowed when used memory > 'maxmemory'."
    assert r.exists(*[f"ttl:{i}" for i in range(50)]) == 0
    assert r.exists(*[f"keep:{i}" for i in range(50)]) == 50
    assert r.info("stats")["evicted_keys"] == 50
    # Reads are still served.
    assert r.get("keep:0") == VALUE.encode()


def test_volatile_ttl_evicts_the_nearest_expiry_first(server_factory):
    r = _server(server_factory, "volatile-ttl")
    pipe = r.pipeline(transaction=False)
    for i in range(100):
        pipe.set(f"k:{i}", VALUE, ex=10000 + 100 * i)
    pipe.execute()
    _set_limit(r, 1000)
    for i in range(20):
        r.set(f"new:{i}", VALUE)
    evicted = [i for i in range(100) if not r.exists(f"k:{i}")]
    assert len(evicted) >= 18
    # Sampling approximates: the evicted keys are among the nearer half of the expiries.
    assert max(evicted) < 50, evicted


def test_allkeys_lfu_keeps_frequently_used_keys(server_factory):
    r = _server(server_factory, "allkeys-lfu", "--lfu-log-factor", "0")
    pipe = r.pipeline(transaction=False)
    for i in range(100):
        pipe.set(f"a:{i}", VALUE)
    pipe.execute()
    hot = [f"a:{i}" for i in range(0, 100, 5)]
    pipe = r.pipeline(transaction=False)
    for _ in range(20):
        for key in hot:
            pipe.get(key)
    pipe.execute()
    assert r.object("freq", hot[0]) > 5
    _set_limit(r, 2000)
    for i in range(40):
        r.set(f"b:{i}", VALUE)
    assert r.info("stats")["evicted_keys"] >= 35
    assert r.exists(*hot) == len(hot)


def test_allkeys_random_evicts_any_key(server_factory):
    r = _server(server_factory, "allkeys-random")
    pipe = r.pipeline(transaction=False)
    for i in range(100):
        pipe.set(f"plain:{i}", VALUE)
        pipe.set(f"ttl:{i}", VALUE, ex=10000)
    pipe.execute()
    limit = _set_limit(r, 1000)
    for i in range(100):
        r.set(f"new:{i}", VALUE)
    assert r.info("memory")["used_memory"] <= limit
    gone_plain = 100 - r.exists(*[f"plain:{i}" for i in range(100)])
    gone_ttl = 100 - r.exists(*[f"ttl:{i}" for i in range(100)])
    assert gone_plain > 5 and gone_ttl > 5


def test_lowering_maxmemory_evicts_without_a_command(server_factory):
    r = _server(server_factory, "allkeys-lru")
    for i in range(50):
        r.set(f"k:{i}", VALUE)
    r.config_set("maxmemory", 1)
    # CONFIG SET's own reply came first; the eviction follows on the server's loop.
    wait_until(lambda: r.info("stats")["evicted_keys"] == 50, 5, "evictions")
    assert r.dbsize() == 0


def test_evicted_notifications(server_factory):
    r = _server(server_factory, "allkeys-lru", "--notify-keyspace-events", "Ee")
    for i in range(20):
        r.set(f"k:{i}", VALUE)
    sub = redis.Redis(port=r.connection_pool.connection_kwargs["port"]).pubsub()
    sub.subscribe("__keyevent@0__:evicted")
    assert sub.get_message(timeout=2)["type"] == "subscribe"
    _set_limit(r, 1000)
    for i in range(10):
        r.set(f"new:{i}", VALUE)
    evicted = r.info("stats")["evicted_keys"]
    assert evicted >= 8
    keys = []
    while (msg := sub.get_message(timeout=1)) is not None:
        keys.append(msg["data"].decode())
    assert len(keys) == evicted
    assert all(not r.exists(key) for key in keys)
    sub.close()


def test_evictions_as_redis_74(server_factory):
    """maxmemory 1 under allkeys-lru: both servers evict every key (each announced `evicted`
    and counted), then refuse the write."""
    if not os.access(REDIS74, os.X_OK):
        pytest.skip(f"no Redis 7.4 at {REDIS74}: evictions were NOT compared with Redis")
    ref = RedisServer(REDIS74).start()
    try:
        results = []
        for port in (ref.port, server_factory("--appendonly", "no").port):
            r = redis.Redis(port=port)
            r.config_set("notify-keyspace-events", "Ee")
            r.config_set("maxmemory-policy", "allkeys-lru")
            for key in ("a", "b", "c"):
                r.set(key, "v")
            r.hset("h", "f", "v")
            sub = r.pubsub()
            sub.subscribe("__keyevent@0__:evicted")
            sub.get_message(timeout=2)
            r.config_set("maxmemory", 1)
            try:
                r.set("d", "v")
                reply = "OK"
            except redis.ResponseError as exc:
                reply = f"{type(exc).__name__} {exc}"
            events = []
            while (msg := sub.get_message(timeout=1)) is not None:
                events.append(msg["data"])
            results.append((reply, sorted(events), r.dbsize(), r.info("stats")["evicted_keys"]))
            r.config_set("maxmemory", 0)
            sub.close()
    finally:
        ref.cleanup()
    assert results[1] == results[0]
    assert results[0][3] == 4


def test_aof_holds_the_evictions(server_factory):
    srv = server_factory("--appendonly", "yes", "--appendfsync", "always",
                         "--maxmemory-policy", "allkeys-random")
    r = redis.Redis(port=srv.port)
    for i in range(30):
        r.set(f"k:{i}", VALUE)
    _set_limit(r, 1000)
    for i in range(10):
        r.set(f"new:{i}", VALUE)
    r.config_set("lazyfree-lazy-eviction", "yes")
    r.set("after", VALUE)
    evicted = r.info("stats")["evicted_keys"]
    assert evicted >= 9
    commands = parse_aof(aof_path(srv).read_bytes())
    deleted = [c[1].decode() for c in commands if c[0] in (b"DEL", b"UNLINK")]
    assert len(deleted) == evicted
    assert [c[0] for c in commands if c[0] in (b"DEL", b"UNLINK")][-1] == b"UNLINK"
    survivors = {k.decode() for k in r.keys()}
    assert not survivors & set(deleted)
    # Each DEL comes before the write that caused it.
    order = [c[1].decode() for c in commands if c[0] in (b"SET", b"DEL", b"UNLINK")]
    assert order.index(deleted[0]) < order.index("new:0") or deleted[0].startswith("new:")
    # Replayed, the file gives the same keys.
    srv.stop()
    again = server_factory("--appendonly", "yes", data_dir=srv.dir)
    assert {k.decode() for k in redis.Redis(port=again.port).keys()} == survivors


def test_replica_receives_the_evictions(server_factory):
    master_srv = server_factory("--appendonly", "no", "--maxmemory-policy", "allkeys-lru")
    replica_srv = server_factory("--appendonly", "no", "--replicaof", "127.0.0.1",
                                 str(master_srv.port))
    master = redis.Redis(port=master_srv.port)
    replica = redis.Redis(port=replica_srv.port)
    wait_until(lambda: replica.info("replication")["master_link_status"] == "up", 15, "sync")
    # The replica ignores its own maxmemory (replica-ignore-maxmemory yes): its master's
    # stream is never refused.
    replica.config_set("maxmemory", 1)
    for i in range(40):
        master.set(f"k:{i}", VALUE)
    _set_limit(master, 1000)
    for i in range(20):
        master.set(f"new:{i}", VALUE)
    assert master.info("stats")["evicted_keys"] >= 18
    expected = sorted(master.keys())
    wait_until(lambda: sorted(replica.keys()) == expected, 10, "replica's keys")
    assert replica.info("stats")["evicted_keys"] == 0


def test_stream_workload_stays_near_the_limit(server_factory):
    r = _server(server_factory, "allkeys-lru")
    limit = _set_limit(r, 1024 * 1024)
    peak = 0
    for batch in range(60):
        pipe = r.pipeline(transaction=False)
        for i in range(250):
            pipe.xadd(f"stream:{(batch * 250 + i) % 400}", {"field": "x" * 100, "n": i})
        pipe.execute()
        peak = max(peak, r.info("memory")["used_memory"])
    memory = r.info("memory")
    assert r.info("stats")["evicted_keys"] > 0
    assert memory["used_memory"] <= limit
    # Keys over 64 KiB are estimated again once per tick: the figure may lag by that.
    assert peak <= limit * 1.05
    assert r.dbsize() > 50


def test_evicted_stream_releases_its_blocked_reader(server_factory):
    """A reader blocked on a stream that is evicted is released as a DEL releases it."""
    r = _server(server_factory, "allkeys-lru")
    replies = {}
    for how in ("del", "evict"):
        r.flushall()
        r.config_set("maxmemory", 0)
        r.xadd("s", {"f": "v"}, id="1-1")
        r.xgroup_create("s", "g", id="$")
        reader = redis.Redis(port=r.connection_pool.connection_kwargs["port"])

        def read(reader=reader, how=how) -> None:
            try:
                replies[how] = reader.xreadgroup("g", "c", {"s": ">"}, block=5000)
            except redis.ResponseError as exc:
                replies[how] = str(exc)

        thread = threading.Thread(target=read)
        thread.start()
        wait_until(lambda: r.info("clients")["blocked_clients"] == 1, 5, "blocked reader")
        if how == "del":
            r.delete("s")
        else:
            r.config_set("maxmemory", 1)
        thread.join(6)
        reader.close()
    r.config_set("maxmemory", 0)
    assert replies["evict"] == replies["del"]
    assert isinstance(replies["del"], str)
