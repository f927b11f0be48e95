"""MEMORY USAGE / STATS / DOCTOR / MALLOC-STATS / PURGE / HELP.

Sizes are Rivulet's own, not Redis's: a value's estimate comes from its type's registered
`memory` (server/value_types.py), the totals from the used-memory figure INFO memory reports
(server/used_memory.py). The replies have Redis's shapes and field names.
"""

from __future__ import annotations

import gc
import sys
from typing import TYPE_CHECKING, Any

from protocol.numbers import parse_int
from protocol.reply import OK, ErrorReply, Verbatim
from server import info, used_memory
from server.command_table import command, container, key_spec
from server.subcommands import help_reply

if TYPE_CHECKING:
    from server.connection import Client

SYNTAX_ERROR = ErrorReply("ERR syntax error")
DEFAULT_SAMPLES = 5  # OBJ_COMPUTE_SIZE_DEF_SAMPLES

container("memory", group="server", since="4.0.0",
          summary="A container for memory diagnostics commands.")

_TIPS_SPECIAL = ("nondeterministic_output", "request_policy:all_shards", "response_policy:special")


@command("memory|usage", -3, "readonly", keys=(2, 2, 1), group="server", since="4.0.0",
         summary="Estimates the memory usage of a key.",
         complexity="O(N) where N is the number of samples.", key_specs=key_spec(("RO",), 2),
         arguments=({"name": "key", "type": "key", "key_spec_index": 0},
                    {"token": "SAMPLES", "name": "count", "type": "integer", "optional": True}))
def memory_usage(client: Client, argv: list[bytes]) -> Any:
    samples = DEFAULT_SAMPLES
    i = 3
    while i < len(argv):
        if argv[i].lower() == b"samples" and i + 1 < len(argv):
            samples = parse_int(argv[i + 1])
            if samples < 0:
                return SYNTAX_ERROR
            i += 2
        else:
            return SYNTAX_ERROR
    db = client.db
    # As Redis (dbFind): no expiry check and no access, the value as it is stored.
    value = db.data.get(argv[2])
    if value is None:
        return None
    return used_memory.key_usage(argv[2], value, samples)


def _client_buffers(client: Client) -> int:
    total = 0
    for other in client.server.clients.values():
        total += sum(len(chunk) for chunk in other.out)
        total += getattr(other.parser, "buffered", 0) or 0
    return total


@command("memory|stats", 2, "", group="server", since="4.0.0",
         summary="Returns details about memory usage.", tips=_TIPS_SPECIAL)
def memory_stats(client: Client, argv: list[bytes]) -> Any:
    server = client.server
    used, startup, dataset = used_memory.figures(server.keyspace, server.evictor.startup)
    info._peak_memory[0] = max(info._peak_memory[0], used)
    peak = info._peak_memory[0]
    clients = _client_buffers(client)
    reply: dict[bytes, Any] = {
        b"peak.allocated": peak,
        b"total.allocated": used,
        b"startup.allocated": startup,
        b"replication.backlog": 0,
        b"clients.slaves": 0,
        b"clients.normal": clients,
        b"cluster.links": 0,
        b"aof.buffer": 0,
        b"lua.caches": 0,
        b"functions.caches": 0,
    }
    overhead = startup + clients
    keys = 0
    for db in server.keyspace.dbs:
        if not db.data:
            continue
        keys += len(db.data)
        main = sys.getsizeof(db.data) + sys.getsizeof(db.access)
        expires = sys.getsizeof(db.expires) if db.expires else 0
        overhead += main + expires
        reply[b"db.%d" % db.index] = {b"overhead.hashtable.main": main,
                                      b"overhead.hashtable.expires": expires}
    net = max(used - startup, 0)
    reply.update({
        b"overhead.db.hashtable.lut": 0,
        b"overhead.db.hashtable.rehashing": 0,
        b"overhead.total": overhead,
        b"db.dict.rehashing.count": 0,
        b"keys.count": keys,
        b"keys.bytes-per-key": net // keys if keys else 0,
        b"dataset.bytes": dataset,
        b"dataset.percentage": dataset * 100.0 / net if net > 0 else 0.0,
        b"peak.percentage": used * 100.0 / peak if peak else 100.0,
        b"allocator.allocated": used,
        b"allocator.active": used,
        b"allocator.resident": used,
        b"allocator.muzzy": 0,
        b"allocator-fragmentation.ratio": 1.0,
        b"allocator-fragmentation.bytes": 0,
        b"allocator-rss.ratio": 1.0,
        b"allocator-rss.bytes": 0,
        b"rss-overhead.ratio": 1.0,
        b"rss-overhead.bytes": 0,
        b"fragmentation": 1.0,
        b"fragmentation.bytes": 0,
    })
    return reply


_EMPTY_REPORT = (
    "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be "
    "used in these conditions. Please, leave for your mission on Earth and fill it with some "
    "data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n")
_FINE_REPORT = ("Hi Sam, I can't find any memory issue in your instance. I can only account for "
                "what occurs on this base.\n")
_PEAK_ISSUE = (
    " * Peak memory: In the past this instance used more than 150% the memory that is currently "
    "using. The allocator is normally not able to release memory after a peak, so you can expect "
    "to see a big fragmentation ratio, however this is actually harmless and is only due to the "
    "memory peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than "
    "expected, the memory will be used as soon as you fill the Redis instance with more data. If "
    "the memory peak was only occasional and you want to try to reclaim memory, please try the "
    "MEMORY PURGE command, otherwise the only other option is to shutdown and restart the "
    "instance.\n\n")
_CLIENTS_ISSUE = (
    " * Big client buffers: The clients output buffers in this instance are greater than 200K "
    "per client (on average). This may result from different causes, like Pub/Sub clients "
    "subscribed to channels bot not receiving data fast enough, so that data piles on the Redis "
    "instance output buffer, or clients sending commands with large replies or very large "
    "sequences of commands in the same pipeline. Please use the CLIENT LIST command in order to "
    "investigate the issue if it causes problems in your instance, or to understand better why "
    "certain clients are using a big amount of memory.\n\n")


@command("memory|doctor", 2, "", group="server", since="4.0.0",
         summary="Outputs a memory problems report.", tips=_TIPS_SPECIAL)
def memory_doctor(client: Client, argv: list[bytes]) -> Any:
    used = info.rss_bytes()
    info._peak_memory[0] = max(info._peak_memory[0], used)
    peak = info._peak_memory[0]
    # Redis calls an instance under 5 MB empty; a Python process starts bigger than that, so
    # what counts here is the memory grown since start-up.
    issues = []
    if used - min(info.STARTUP_RSS, used) < 5 * 1024 * 1024:
        report = _EMPTY_REPORT
    else:
        if peak / used > 1.5:
            issues.append(_PEAK_ISSUE)
        clients = client.server.clients
        if clients and _client_buffers(client) / len(clients) > 200 * 1024:
            issues.append(_CLIENTS_ISSUE)
        if issues:
            report = ("Sam, I detected a few issues in this Redis instance memory implants:\n\n"
                      + "".join(issues) + "I'm here to keep you safe, Sam. I want to help you.\n")
        else:
            report = _FINE_REPORT
    return Verbatim(report.encode())


@command("memory|malloc-stats", 2, "", group="server", since="4.0.0",
         summary="Returns the allocator statistics.",
         complexity="Depends on how much memory is allocated, could be slow", tips=_TIPS_SPECIAL)
def memory_malloc_stats(client: Client, argv: list[bytes]) -> Any:
    # What Redis answers when it is not built with jemalloc, which is Rivulet's case.
    return b"Stats not supported for the current allocator"


@command("memory|purge", 2, "", group="server", since="4.0.0",
         summary="Asks the allocator to release memory.",
         complexity="Depends on how much memory is allocated, could be slow",
         tips=("request_policy:all_shards", "response_policy:all_succeeded"))
def memory_purge(client: Client, argv: list[bytes]) -> Any:
    # The nearest thing to a purge Python has: collect unreachable cycles now, and let glibc
    # return free heap pages when it can.
    if gc.isenabled():
        gc.collect()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    return OK


_HELP = [
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
]


@command("memory|help", 2, "loading stale", group="server", since="4.0.0",
         summary="Returns helpful text about the different subcommands.")
def memory_help(client: Client, argv: list[bytes]) -> Any:
    return help_reply("MEMORY", _HELP)
