"""INFO section builders: Redis 7.4's sections, field names and order, with our honest values.

Fields Redis reports about machinery we do not have (forks, replication links, defrag, io threads)
are kept with the values a Redis without that activity shows, so that tools parsing them work.

Memory: Python has no allocator statistics comparable to jemalloc's. `used_memory` is the figure
of server/used_memory.py (the keys' size estimates plus the databases' tables), the one maxmemory
compares against, which goes down when keys are deleted; `used_memory_rss` is the process's
resident set size (from /proc/self/statm, or getrusage's peak where /proc is missing).
"""

from __future__ import annotations

import gc
import itertools
import os
import platform
import random
import resource
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from server import used_memory
from server.client_memory import memory_by_kind
from server.command_table import COMMANDS, Command
from server.replication.info import replication_fields
from server.version import REDIS_VERSION, RIVULET_VERSION

if TYPE_CHECKING:
    from server.server import Server

# One server per process: identifiers drawn once, as Redis draws its run id at start.
RUN_ID = "%040x" % random.getrandbits(160)
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

DEFAULT_SECTIONS = ("server", "clients", "memory", "persistence", "stats", "replication", "cpu",
                    "module_list", "errorstats", "cluster", "keyspace")


def rss_bytes() -> int:
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE_SIZE
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


STARTUP_RSS = rss_bytes()


def total_system_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def bytes_to_human(n: int) -> str:
    """Redis's bytesToHuman: 100B, 1.50K, 2.00M..."""
    if n < 1024:
        return f"{n}B"
    for unit, power in (("K", 1), ("M", 2), ("G", 3), ("T", 4), ("P", 5)):
        if n < 1024 ** (power + 1):
            return "%.2f%s" % (n / 1024**power, unit)
    return f"{n}B"


class OpsSampler:
    """instantaneous_ops_per_sec: commands per second over the last 16 samples of 100 ms, as
    Redis's trackInstantaneousMetric. Started by the first INFO, on the server's loop."""

    SAMPLES = 16
    PERIOD = 0.1

    def __init__(self, server: Server) -> None:
        self.server = server
        self.rates: list[float] = []
        self.last = (time.monotonic(), server.stats.commands_processed)
        if server.loop is not None:
            server.loop.call_later(self.PERIOD, self._sample)

    def _sample(self) -> None:
        now, count = time.monotonic(), self.server.stats.commands_processed
        then, before = self.last
        if now > then and count >= before:
            self.rates.append((count - before) / (now - then))
            del self.rates[:-self.SAMPLES]
        self.last = (now, count)
        assert self.server.loop is not None
        self.server.loop.call_later(self.PERIOD, self._sample)

    def ops_per_sec(self) -> int:
        return int(sum(self.rates) / len(self.rates)) if self.rates else 0


_samplers: dict[int, OpsSampler] = {}
_peak_memory = [0]


def _ops_per_sec(server: Server) -> int:
    sampler = _samplers.get(id(server))
    if sampler is None:
        sampler = _samplers[id(server)] = OpsSampler(server)
    return sampler.ops_per_sec()


def _lines(pairs: list[tuple[str, object]]) -> str:
    return "".join(f"{k}:{v}\r\n" for k, v in pairs)


def section_server(server: Server) -> str:
    now = time.time()
    uptime = int(now - server.start_time)
    uname = platform.uname()
    loop = type(server.loop).__module__.split(".")[0] if server.loop is not None else "asyncio"
    hz = server.config["hz"]
    pairs: list[tuple[str, object]] = [
        ("redis_version", REDIS_VERSION),
        ("redis_git_sha1", "00000000"),
        ("redis_git_dirty", 0),
        ("redis_build_id", "0"),
        ("redis_mode", "standalone"),
        ("os", f"{uname.system} {uname.release} {uname.machine}"),
        ("arch_bits", 64 if sys.maxsize > 2**32 else 32),
        ("monotonic_clock", "POSIX clock_gettime"),
        ("multiplexing_api", loop),
        ("atomicvar_api", "none"),
        ("gcc_version", "0.0.0"),
        ("process_id", os.getpid()),
        ("process_supervised", "no"),
        ("run_id", RUN_ID),
        ("tcp_port", server.port),
        ("server_time_usec", time.time_ns() // 1000),
        ("uptime_in_seconds", uptime),
        ("uptime_in_days", uptime // 86400),
        ("hz", min(max(hz, 1), 500)),
        ("configured_hz", hz),
        ("lru_clock", int(now) & ((1 << 24) - 1)),
        ("executable", os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""),
        ("config_file", server.config.config_file or ""),
        ("io_threads_active", 0),
    ]
    if server.shutdown.initiated:
        pairs.append(("shutdown_in_milliseconds", server.shutdown.remaining_ms()))
    pairs.append(("rivulet_version", RIVULET_VERSION))
    # Redis numbers listeners by connection type: 0 is TCP, 1 the unix socket, 2 TLS.
    listeners = ""
    for index, listener in ((0, server.tcp), (2, server.tls_listener)):
        if listener.active:
            binds = "".join(f",bind={addr}" for addr in listener.binds)
            listeners += f"listener{index}:name={listener.name}{binds},port={listener.port}\r\n"
    return "# Server\r\n" + _lines(pairs) + listeners


def section_clients(server: Server) -> str:
    clients = list(server.clients.values())
    blocking = server.blocking
    pairs: list[tuple[str, object]] = [
        ("connected_clients", len(clients)),
        ("cluster_connections", 0),
        ("maxclients", server.config["maxclients"]),
        ("client_recent_max_input_buffer", 0),
        ("client_recent_max_output_buffer", 0),
        ("blocked_clients", blocking.blocked_count if blocking else 0),
        ("tracking_clients", 0),
        ("pubsub_clients", server.pubsub.clients),
        ("watching_clients", sum(1 for c in clients if c.watched)),
        ("clients_in_timeout_table", sum(1 for c in clients if c.blocked is not None
                                         and c.blocked.timer is not None)),
        ("total_watched_keys", len(server.keyspace.watchers)),
        ("total_blocking_keys", blocking.blocking_keys if blocking else 0),
        ("total_blocking_keys_on_nokey", blocking.blocking_keys_on_nokey if blocking else 0),
    ]
    return "# Clients\r\n" + _lines(pairs)


def section_memory(server: Server) -> str:
    keyspace = server.keyspace
    used, startup, dataset = used_memory.figures(keyspace, server.evictor.startup)
    rss = rss_bytes()
    _peak_memory[0] = max(_peak_memory[0], used)
    peak = _peak_memory[0]
    overhead = used - dataset
    maxmemory = server.config["maxmemory"]
    system = total_system_memory()
    backlog = server.replication.state.backlog
    backlog_bytes = backlog.size if backlog is not None else 0
    frag = rss / used if used else 0.0
    clients_normal, replica_output = memory_by_kind(server.clients.values())
    # As Redis: replicas count only with output past what the backlog holds anyway.
    clients_replicas = max(0, replica_output - backlog_bytes) if backlog is not None else 0
    pairs: list[tuple[str, object]] = [
        ("used_memory", used), ("used_memory_human", bytes_to_human(used)),
        ("used_memory_rss", rss), ("used_memory_rss_human", bytes_to_human(rss)),
        ("used_memory_peak", peak), ("used_memory_peak_human", bytes_to_human(peak)),
        ("used_memory_peak_perc", "%.2f%%" % (used * 100 / peak if peak else 100)),
        ("used_memory_overhead", overhead), ("used_memory_startup", startup),
        ("used_memory_dataset", dataset),
        ("used_memory_dataset_perc", "%.2f%%" % (dataset * 100 / used if used else 0)),
        ("allocator_allocated", used), ("allocator_active", used), ("allocator_resident", rss),
        ("allocator_muzzy", 0),
        ("total_system_memory", system), ("total_system_memory_human", bytes_to_human(system)),
        ("used_memory_lua", 0), ("used_memory_vm_eval", 0), ("used_memory_lua_human", "0B"),
        ("used_memory_scripts_eval", 0), ("number_of_cached_scripts", 0),
        ("number_of_functions", 0), ("number_of_libraries", 0), ("used_memory_vm_functions", 0),
        ("used_memory_vm_total", 0), ("used_memory_vm_total_human", "0B"),
        ("used_memory_functions", 0), ("used_memory_scripts", 0), ("used_memory_scripts_human", "0B"),
        ("maxmemory", maxmemory), ("maxmemory_human", bytes_to_human(maxmemory)),
        ("maxmemory_policy", server.config["maxmemory-policy"]),
        ("allocator_frag_ratio", "1.00"), ("allocator_frag_bytes", 0),
        ("allocator_rss_ratio", "1.00"), ("allocator_rss_bytes", 0),
        ("rss_overhead_ratio", "1.00"), ("rss_overhead_bytes", 0),
        ("mem_fragmentation_ratio", "%.2f" % frag), ("mem_fragmentation_bytes", rss - used),
        ("mem_not_counted_for_evict", server.evictor.not_counted()), ("mem_replication_backlog", backlog_bytes),
        ("mem_total_replication_buffers", backlog_bytes + clients_replicas), ("mem_clients_slaves", clients_replicas),
        ("mem_clients_normal", clients_normal), ("mem_cluster_links", 0), ("mem_aof_buffer", 0),
        ("mem_allocator", "libc"), ("mem_overhead_db_hashtable_rehashing", 0),
        ("active_defrag_running", 0), ("lazyfree_pending_objects", 0), ("lazyfreed_objects", 0),
        # Rivulet's own: the encoded-entry cache (server/entry_cache.py).
        ("stream_read_cache_bytes", server.entry_cache.used),
        ("stream_read_cache_nodes", len(server.entry_cache)),
        # Objects frozen at startup, out of the collector's way (server/cli.py).
        ("gc_frozen_objects", gc.get_freeze_count()),
        ("gc_enabled", int(gc.isenabled())),  # 0 only while an AOF rewrite child runs
    ]
    return "# Memory\r\n" + _lines(pairs)


def section_persistence(server: Server) -> str:
    p = server.persistence
    aof = p.aof
    rw = p.rewriter
    running = rw is not None and rw.in_progress
    current = int(time.monotonic() - rw.started) if running and rw is not None else -1
    rdb = p.rdb
    pairs: list[tuple[str, object]] = [
        ("loading", int(server.loading)), ("async_loading", int(server.async_loading)),
        ("current_cow_peak", 0), ("current_cow_size", 0), ("current_cow_size_age", 0),
        ("current_fork_perc", "0.00"), ("current_save_keys_processed", 0),
        ("current_save_keys_total", 0),
        ("rdb_changes_since_last_save", server.keyspace.dirty),
        ("rdb_bgsave_in_progress", int(rdb.in_progress)), ("rdb_last_save_time", p.last_save),
        ("rdb_last_bgsave_status", p.lastbgsave_status),
        ("rdb_last_bgsave_time_sec", p.last_bgsave_seconds),
        ("rdb_current_bgsave_time_sec",
         int(time.monotonic() - rdb.started) if rdb.in_progress else -1),
        ("rdb_saves", p.saves), ("rdb_last_cow_size", 0),
        ("rdb_last_load_keys_expired", p.keys_expired),
        ("rdb_last_load_keys_loaded", p.keys_loaded),
        ("aof_enabled", int(aof is not None)),
        ("aof_rewrite_in_progress", int(running)),
        ("aof_rewrite_scheduled", int(rw is not None and rw.scheduled)),
        ("aof_last_rewrite_time_sec", rw.last_duration if rw is not None else -1),
        ("aof_current_rewrite_time_sec", current),
        ("aof_last_bgrewrite_status", rw.last_status if rw is not None else "ok"),
        ("aof_rewrites", rw.rewrites if rw is not None else 0),
        ("aof_rewrites_consecutive_failures", rw.consecutive_failures if rw is not None else 0),
        ("aof_last_write_status", "ok" if aof is None or aof.last_write_error is None else "err"),
        ("aof_last_cow_size", 0), ("module_fork_in_progress", 0), ("module_fork_last_cow_size", 0),
    ]
    if aof is not None:
        pairs += [
            ("aof_current_size", aof.size), ("aof_base_size", aof.base_size),
            ("aof_pending_rewrite", 0), ("aof_buffer_length", len(aof.buf)),
            ("aof_pending_bio_fsync", 0), ("aof_delayed_fsync", 0),
        ]
    if server.loading or server.async_loading:
        pairs += server.loading_progress.info_fields()
    return "# Persistence\r\n" + _lines(pairs)


def section_stats(server: Server) -> str:
    stats = server.stats
    denied = server.acl.log.denied
    exceeded_total, exceeded_now = server.evictor.exceeded_ms()
    pairs: list[tuple[str, object]] = [
        ("total_connections_received", stats.connections_received),
        ("total_commands_processed", stats.commands_processed),
        ("instantaneous_ops_per_sec", _ops_per_sec(server)),
        ("total_net_input_bytes", stats.net_input_bytes),
        ("total_net_output_bytes", stats.net_output_bytes),
        ("total_net_repl_input_bytes", 0), ("total_net_repl_output_bytes", 0),
        ("instantaneous_input_kbps", "0.00"), ("instantaneous_output_kbps", "0.00"),
        ("instantaneous_input_repl_kbps", "0.00"), ("instantaneous_output_repl_kbps", "0.00"),
        ("rejected_connections", stats.rejected_connections),
        ("sync_full", server.replication.sync_full),
        ("sync_partial_ok", server.replication.sync_partial_ok),
        ("sync_partial_err", server.replication.sync_partial_err),
        ("expired_subkeys", 0), ("expired_keys", server.keyspace.expired_keys),
        ("expired_stale_perc", "0.00"), ("expired_time_cap_reached_count", 0),
        ("expire_cycle_cpu_milliseconds", 0), ("evicted_keys", server.keyspace.evicted_keys),
        ("evicted_clients", stats.evicted_clients), ("evicted_scripts", 0),
        ("total_eviction_exceeded_time", exceeded_total),
        ("current_eviction_exceeded_time", exceeded_now),
        ("keyspace_hits", server.keyspace.hits), ("keyspace_misses", server.keyspace.misses),
        ("pubsub_channels", len(server.pubsub.channels)),
        ("pubsub_patterns", len(server.pubsub.patterns)),
        ("pubsubshard_channels", len(server.pubsub.shard_channels)),
        ("latest_fork_usec", 0), ("total_forks", 0), ("migrate_cached_sockets", 0),
        ("slave_expires_tracked_keys", 0), ("active_defrag_hits", 0), ("active_defrag_misses", 0),
        ("active_defrag_key_hits", 0), ("active_defrag_key_misses", 0),
        ("total_active_defrag_time", 0), ("current_active_defrag_time", 0),
        ("tracking_total_keys", 0), ("tracking_total_items", 0), ("tracking_total_prefixes", 0),
        ("unexpected_error_replies", 0), ("total_error_replies", stats.error_replies),
        ("dump_payload_sanitizations", 0), ("total_reads_processed", 0),
        ("total_writes_processed", 0), ("io_threaded_reads_processed", 0),
        ("io_threaded_writes_processed", 0), ("client_query_buffer_limit_disconnections", server.query_limit_disconnections),
        ("client_output_buffer_limit_disconnections", server.output_limit_disconnections), ("reply_buffer_shrinks", 0),
        ("reply_buffer_expands", 0), ("eventloop_cycles", 0), ("eventloop_duration_sum", 0),
        ("eventloop_duration_cmd_sum", 0), ("instantaneous_eventloop_cycles_per_sec", 0),
        ("instantaneous_eventloop_duration_usec", 0),
        ("acl_access_denied_auth", denied[3]), ("acl_access_denied_cmd", denied[1]),
        ("acl_access_denied_key", denied[2]), ("acl_access_denied_channel", denied[4]),
    ]
    return "# Stats\r\n" + _lines(pairs)


def section_replication(server: Server) -> str:
    return "# Replication\r\n" + _lines(replication_fields(server))


def _cpu(value: float) -> str:
    return "%.6f" % value


def section_cpu(server: Server) -> str:
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    pairs: list[tuple[str, object]] = [
        ("used_cpu_sys", _cpu(me.ru_stime)), ("used_cpu_user", _cpu(me.ru_utime)),
        ("used_cpu_sys_children", _cpu(children.ru_stime)),
        ("used_cpu_user_children", _cpu(children.ru_utime)),
    ]
    if hasattr(resource, "RUSAGE_THREAD"):
        main = resource.getrusage(resource.RUSAGE_THREAD)  # INFO runs on the event-loop thread
        pairs += [("used_cpu_sys_main_thread", _cpu(main.ru_stime)),
                  ("used_cpu_user_main_thread", _cpu(main.ru_utime))]
    return "# CPU\r\n" + _lines(pairs)


def section_modules(server: Server) -> str:
    return "# Modules\r\n"


def _safe(name: str) -> str:
    # Characters that would break the "field:value" line format (Redis's getSafeInfoString).
    for ch in "#:\n\r":
        name = name.replace(ch, "_")
    return name


def _command_stats(cmd: Command) -> str:
    out = ""
    if cmd.calls or cmd.failed_calls or cmd.rejected_calls:
        per_call = cmd.usec / cmd.calls if cmd.calls else 0
        out += (f"cmdstat_{_safe(cmd.name)}:calls={cmd.calls},usec={cmd.usec},"
                f"usec_per_call={per_call:.2f},rejected_calls={cmd.rejected_calls},"
                f"failed_calls={cmd.failed_calls}\r\n")
    for sub in cmd.subcommands.values():
        out += _command_stats(sub)
    return out


def section_commandstats(server: Server) -> str:
    return "# Commandstats\r\n" + "".join(_command_stats(c) for c in COMMANDS.values())


def section_errorstats(server: Server) -> str:
    errors = server.stats.errors_by_code
    return "# Errorstats\r\n" + "".join(
        f"errorstat_{_safe(code)}:count={errors[code]}\r\n" for code in sorted(errors))


def section_latencystats(server: Server) -> str:
    # No per-command latency histograms are kept: the section is present and empty.
    return "# Latencystats\r\n"


def section_cluster(server: Server) -> str:
    return "# Cluster\r\ncluster_enabled:0\r\n"


def _avg_ttl(db: Any, now_ms: int, sample: int = 1000) -> int:
    # Redis keeps a running estimate; the mean over a bounded sample costs O(1) per INFO.
    live = [when - now_ms for _key, when in itertools.islice(db.expires.items(), sample) if when > now_ms]
    return int(sum(live) / len(live)) if live else 0


def section_keyspace(server: Server) -> str:
    now_ms = int(time.time() * 1000)
    lines = ""
    for db in server.keyspace.dbs:
        keys, expires = len(db.data), len(db.expires)
        if keys or expires:
            lines += (f"db{db.index}:keys={keys},expires={expires},"
                      f"avg_ttl={_avg_ttl(db, now_ms)},subexpiry=0\r\n")
    return "# Keyspace\r\n" + lines


# Redis's order; "module_list" and "modules" both name the Modules section.
SECTIONS: list[tuple[tuple[str, ...], Callable[[Server], str]]] = [
    (("server",), section_server),
    (("clients",), section_clients),
    (("memory",), section_memory),
    (("persistence",), section_persistence),
    (("stats",), section_stats),
    (("replication",), section_replication),
    (("cpu",), section_cpu),
    (("module_list", "modules"), section_modules),
    (("commandstats",), section_commandstats),
    (("errorstats",), section_errorstats),
    (("latencystats",), section_latencystats),
    (("cluster",), section_cluster),
    (("keyspace",), section_keyspace),
]


def generate_info(server: Server, args: list[str]) -> str:
    """The INFO text for the requested section names (none: the default sections)."""
    wanted: set[str] = set()
    everything = False
    if not args:
        wanted.update(DEFAULT_SECTIONS)
    for arg in args:
        name = arg.lower()
        if name == "default":
            wanted.update(DEFAULT_SECTIONS)
        elif name in ("all", "everything"):
            everything = True
        else:
            wanted.add(name)
    parts = [builder(server) for names, builder in SECTIONS
             if everything or any(n in wanted for n in names)]
    return "\r\n".join(parts)
