"""INFO: sections, field names and formats as Redis 7.4 prints them."""

from __future__ import annotations

import time

import pytest
import redis

from tests.helpers import resp3_reply_bytes

DEFAULT_HEADERS = ["# Server", "# Clients", "# Memory", "# Persistence", "# Stats", "# Replication",
                   "# CPU", "# Modules", "# Errorstats", "# Cluster", "# Keyspace"]


def raw_info(r: redis.Redis, *sections: str) -> str:
    """INFO's text as sent (redis-py's own INFO parsing bypassed)."""
    conn = r.connection_pool.get_connection()
    try:
        conn.send_command("INFO", *sections)
        return conn.read_response().decode()
    finally:
        r.connection_pool.release(conn)


def headers(text: str) -> list[str]:
    return [line for line in text.split("\r\n") if line.startswith("#")]


def test_default_sections_in_redis_order_with_crlf_lines(r):
    text = raw_info(r)
    assert headers(text) == DEFAULT_HEADERS
    for line in text.split("\r\n"):
        assert "\n" not in line
        assert line == "" or line.startswith("# ") or ":" in line, line
    # sections are separated by one empty line, as Redis does
    assert "\r\n\r\n# Clients\r\n" in text


def test_all_adds_commandstats_and_latencystats(r):
    hs = headers(raw_info(r, "all"))
    assert "# Commandstats" in hs and "# Latencystats" in hs
    assert hs.index("# Commandstats") < hs.index("# Errorstats") < hs.index("# Keyspace")
    assert headers(raw_info(r, "everything")) == hs


def test_section_selection_is_case_insensitive_and_ordered(r):
    assert headers(raw_info(r, "KEYSPACE", "server")) == ["# Server", "# Keyspace"]
    assert headers(raw_info(r, "default", "commandstats")) == (
        DEFAULT_HEADERS[:8] + ["# Commandstats"] + DEFAULT_HEADERS[8:])


def test_unknown_section_is_empty(r):
    assert raw_info(r, "nosuchsection") == ""


def test_server_section_fields(r, server):
    info = r.info("server")
    assert info["redis_version"] == "7.4.0"
    assert info["redis_mode"] == "standalone"
    assert info["tcp_port"] == server.port
    assert info["process_id"] == server.proc.pid
    assert info["multiplexing_api"] in ("asyncio", "uvloop")
    assert len(info["run_id"]) == 40
    assert abs(info["server_time_usec"] / 1e6 - time.time()) < 5
    assert info["uptime_in_days"] == info["uptime_in_seconds"] // 86400
    assert info["arch_bits"] == 64


def test_clients_section_counts_connections(r, server):
    before = r.info("clients")["connected_clients"]
    extra = redis.Redis(port=server.port)
    extra.ping()
    try:
        info = r.info("clients")
        assert info["connected_clients"] == before + 1
        assert info["blocked_clients"] == 0
        assert info["maxclients"] == 10000
    finally:
        extra.close()


def test_memory_persistence_replication_cpu(r):
    mem = r.info("memory")
    # Without maxmemory, used_memory is the process's size, as the RSS (server/used_memory.py).
    assert mem["used_memory_rss"] > 1_000_000
    assert 0 < mem["used_memory"] <= mem["used_memory_rss"]
    assert mem["used_memory_human"].endswith(("K", "M", "G"))
    assert mem["maxmemory_policy"] == "noeviction"
    persistence = r.info("persistence")
    assert persistence["loading"] == 0 and persistence["aof_last_write_status"] == "ok"
    dirty = persistence["rdb_changes_since_last_save"]
    r.set("k", "v")
    assert r.info("persistence")["rdb_changes_since_last_save"] == dirty + 1
    repl = r.info("replication")
    assert repl["role"] == "master" and repl["connected_slaves"] == 0
    assert len(repl["master_replid"]) == 40
    cpu = raw_info(r, "cpu")
    assert "used_cpu_sys:" in cpu and "used_cpu_user:" in cpu
    assert float(r.info("cpu")["used_cpu_user"]) > 0


def test_stats_section(r):
    before = r.info("stats")["total_commands_processed"]
    for _ in range(5):
        r.ping()
    stats = r.info("stats")
    assert stats["total_commands_processed"] >= before + 6
    for field in ("total_connections_received", "instantaneous_ops_per_sec", "rejected_connections",
                  "expired_keys", "keyspace_hits", "keyspace_misses", "total_error_replies"):
        assert field in stats


def test_keyspace_lines(r):
    assert r.info("keyspace") == {}
    r.set("a", "1")
    r.set("b", "2", ex=100)
    line = [ln for ln in raw_info(r, "keyspace").split("\r\n") if ln.startswith("db0:")][0]
    assert line.startswith("db0:keys=2,expires=1,avg_ttl=")
    avg_ttl = int(line.split("avg_ttl=")[1].split(",")[0])
    assert 90_000 < avg_ttl <= 100_000
    assert line.endswith(",subexpiry=0")


def test_commandstats_and_errorstats_then_resetstat(r):
    assert r.config_resetstat()
    r.ping()
    r.execute_command("CLIENT", "ID")
    with pytest.raises(redis.ResponseError):
        r.execute_command("NOSUCHCOMMAND")
    with pytest.raises(redis.ResponseError):
        r.execute_command("GET")  # wrong arity: rejected
    text = raw_info(r, "commandstats")
    ping = [ln for ln in text.split("\r\n") if ln.startswith("cmdstat_ping:")][0]
    assert ping.startswith("cmdstat_ping:calls=1,usec=")
    assert ",usec_per_call=" in ping and ping.endswith(",rejected_calls=0,failed_calls=0")
    assert "cmdstat_client|id:calls=1," in text
    assert "cmdstat_get:calls=0,usec=0,usec_per_call=0.00,rejected_calls=1,failed_calls=0" in text
    assert r.info("errorstats")["errorstat_ERR"] == {"count": 2}
    assert r.info("stats")["total_error_replies"] == 2
    r.config_resetstat()
    assert "cmdstat_ping" not in raw_info(r, "commandstats")
    assert r.info("errorstats") == {}


def test_resp3_reply_is_verbatim_txt(server):
    data = resp3_reply_bytes(server.port, b"INFO server\r\n")
    assert data.startswith(b"=") and data.split(b"\r\n", 1)[1].startswith(b"txt:# Server\r\n")


def test_redis_py_parses_info_in_both_protocols(rc):
    info = rc.info()
    assert info["redis_version"] == "7.4.0"
    assert "connected_clients" in info and "used_memory" in info


def test_keyspace_hits_and_misses_count_read_lookups_as_redis(server, real_redis):
    """INFO's keyspace_hits / keyspace_misses after the same reads and writes on both servers:
    read lookups count (a hit even for a key of another type), writes' lookups do not."""
    commands = [
        ("SET", "a", "1"), ("GET", "a"), ("GET", "missing"), ("EXISTS", "a", "missing", "a"),
        ("TYPE", "a"), ("TYPE", "missing"), ("TTL", "a"), ("PTTL", "missing"),
        ("MGET", "a", "missing", "a"), ("STRLEN", "a"), ("GETRANGE", "missing", "0", "1"),
        ("INCR", "n"), ("APPEND", "a", "2"), ("SETRANGE", "a", "0", "x"),
        ("HSET", "h", "f", "v"), ("HGET", "h", "f"), ("HGET", "nohash", "f"), ("HGETALL", "h"),
        ("RPUSH", "l", "x"), ("LRANGE", "l", "0", "-1"), ("LLEN", "nolist"),
        ("SADD", "s", "m"), ("SISMEMBER", "s", "m"), ("SMEMBERS", "noset"),
        ("ZADD", "z", "1", "m"), ("ZSCORE", "z", "m"), ("ZRANGE", "noz", "0", "-1"),
        ("XADD", "x", "1-1", "f", "v"), ("XRANGE", "x", "-", "+"), ("XLEN", "nostream"),
        ("DEL", "a", "missing"),
    ]
    stats = []
    for port in (server.port, real_redis.port):
        client = redis.Redis(port=port)
        client.flushall()
        client.execute_command("CONFIG", "RESETSTAT")
        for cmd in commands:
            client.execute_command(*cmd)
        info = client.info("stats")
        stats.append((info["keyspace_hits"], info["keyspace_misses"]))
        client.close()
    assert stats[0] == stats[1]
    assert stats[0][0] > 0 and stats[0][1] > 0
