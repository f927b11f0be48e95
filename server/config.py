"""Configuration parameters: names, defaults and value syntax as in redis.conf.

One table feeds the command line (`--port 6380`), config files, `--help`, CONFIG GET and CONFIG SET.
Values are kept in their textual redis.conf form for CONFIG GET and parsed once into `values` for
the code that uses them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from protocol.numbers import string2ll
from server.notify import INVALID_CLASS, flags_to_string, string_to_flags

_MEMORY_UNITS = {
    "": 1, "b": 1, "k": 1000, "kb": 1024, "m": 1000**2, "mb": 1024**2, "g": 1000**3, "gb": 1024**3,
}


class ConfigValueError(ValueError):
    """A value that does not parse; str() is Redis's explanation, e.g. "argument must be 'yes' or 'no'"."""


def parse_memory(text: str) -> int:
    """A memory value as Redis's memtoull reads it: digits (possibly none, which is 0) and an
    optional unit, nothing else (no sign, no spaces). Past 64 bits the number saturates and the
    product wraps, as in C, so that the range check rejects it."""
    i = 0
    while i < len(text) and "0" <= text[i] <= "9":
        i += 1
    unit = text[i:].lower()
    if text[:1] == "-" or unit not in _MEMORY_UNITS or i >= 128:
        raise ConfigValueError("argument must be a memory value")
    value = min(int(text[:i] or "0"), 2**64 - 1)
    return (value * _MEMORY_UNITS[unit]) % 2**64


def parse_long_long(text: str) -> int:
    """An integer parameter's value, in Redis's integer syntax (string2ll)."""
    value = string2ll(text.encode())
    if value is None:
        raise ConfigValueError("argument couldn't be parsed into an integer")
    return value


def _parse_bool(text: str) -> bool:
    low = text.lower()
    if low == "yes":
        return True
    if low == "no":
        return False
    raise ConfigValueError("argument must be 'yes' or 'no'")


@dataclass
class Param:
    name: str
    default: str
    kind: str  # bool | int | memory | memory_percent | enum | string | special
    help: str
    minimum: int = 0
    maximum: int = 2**63 - 1
    choices: tuple[str, ...] = ()
    mutable: bool = True
    alias: str | None = None
    parse_special: Callable[[str], Any] | None = None
    sensitive: bool = False
    # Redis's PROTECTED_CONFIG: CONFIG SET refuses it unless enable-protected-configs allows.
    protected: bool = False

    def parse(self, text: str) -> Any:
        if self.kind == "bool":
            return _parse_bool(text)
        if self.kind == "memory_percent":
            return self._parse_memory_percent(text)
        if self.kind in ("int", "memory"):
            if self.kind == "memory":
                value = parse_memory(text)
            else:
                value = parse_long_long(text)
            if not self.minimum <= value <= self.maximum:
                raise ConfigValueError(
                    f"argument must be between {self.minimum} and {self.maximum} inclusive"
                )
            return value
        if self.kind == "enum":
            low = text.lower()
            if low not in self.choices:
                raise ConfigValueError(
                    "argument(s) must be one of the following: " + ", ".join(self.choices)
                )
            return low
        if self.kind == "special" and self.parse_special is not None:
            return self.parse_special(text)
        return text

    def _parse_memory_percent(self, text: str) -> int:
        """A memory value, or a percentage (`10%`) kept as its negative, as Redis's
        numericParseString reads a MEMORY_CONFIG | PERCENT_CONFIG parameter."""
        value: int | None = None
        if len(text) > 1 and text[-1] == "%":
            percent = string2ll(text[:-1].encode())
            if percent is not None and percent >= 0:
                value = -percent
        if value is None:
            try:
                value = parse_memory(text)
            except ConfigValueError:
                raise ConfigValueError("argument must be a memory or percent value") from None
            if value >= 2**63:
                value -= 2**64  # read into a long long, as Redis does
        if value < 0:
            if value < self.minimum:
                raise ConfigValueError(f"percentage argument must be less or equal to {-self.minimum}")
        elif value > self.maximum:
            raise ConfigValueError(
                f"argument must be between {self.minimum} and {self.maximum} inclusive")
        return value

    def render(self, value: Any) -> str:
        if self.kind == "bool":
            return "yes" if value else "no"
        if self.kind == "memory_percent" and value < 0:
            return f"{-value}%"
        if self.kind == "special" and isinstance(value, list):
            return " ".join(str(v) for v in value)
        return str(value)


def _parse_bind(text: str) -> list[str]:
    addrs = text.split()
    if not addrs:
        raise ConfigValueError("Too many bind addresses specified.")
    return addrs


def _parse_save(text: str) -> list[int]:
    """Save points as Redis reads them: pairs of seconds (at least 1) and changes (at least 0);
    an empty value (`save ""`) means none."""
    parts = text.split()
    if len(parts) % 2:
        raise ConfigValueError("Invalid save parameters")
    values = []
    for i, part in enumerate(parts):
        value = string2ll(part.encode())
        if value is None or value < (1 if i % 2 == 0 else 0):
            raise ConfigValueError("Invalid save parameters")
        values.append(value)
    return values


def _parse_replicaof(text: str) -> tuple[str, int] | None:
    """`host port`, or None for `no one` (and for the empty default), as Redis's
    setConfigReplicaOfOption reads it."""
    parts = text.split()
    if not parts:
        return None
    if len(parts) != 2:
        raise ConfigValueError("wrong number of arguments")
    host, port_text = parts
    if host.lower() == "no" and port_text.lower() == "one":
        return None
    # strtol: an optional sign and digits, nothing after them.
    digits = port_text[1:] if port_text[:1] in "+-" else port_text
    port = int(port_text) if digits.isdigit() else -1
    if not 0 <= port <= 65535:
        raise ConfigValueError("Invalid master port")
    return host, port


def _parse_dbfilename(text: str) -> str:
    if "/" in text or "\\" in text:
        raise ConfigValueError("dbfilename can't be a path, just a filename")
    return text


def _parse_output_limits(text: str) -> dict[str, tuple[int, int, int]]:
    parts = text.split()
    if len(parts) % 4:
        raise ConfigValueError("Wrong number of arguments in buffer limit configuration.")
    limits: dict[str, tuple[int, int, int]] = {}
    for i in range(0, len(parts), 4):
        cls = parts[i].lower()
        if cls == "slave":
            cls = "replica"
        if cls not in ("normal", "replica", "pubsub"):
            raise ConfigValueError("Invalid client class specified in buffer limit configuration.")
        try:
            hard, soft = parse_memory(parts[i + 1]), parse_memory(parts[i + 2])
            seconds = int(parts[i + 3])
        except (ConfigValueError, ValueError):
            raise ConfigValueError("Error in hard, soft or soft_seconds setting in buffer limit configuration.") from None
        limits[cls] = (hard, soft, seconds)
    return limits


def _parse_notify_classes(text: str) -> int:
    # Kept as the flags: their spelling can lose a class (n beside A), which must stay enabled.
    flags = string_to_flags(text)
    if flags < 0:
        raise ConfigValueError(INVALID_CLASS)
    return flags


def _render_output_limits(value: dict[str, tuple[int, int, int]]) -> str:
    return " ".join(f"{cls} {h} {s} {sec}" for cls, (h, s, sec) in value.items())


PARAMS: list[Param] = [
    Param("bind", "127.0.0.1", "special", "addresses to listen on, space separated",
          parse_special=_parse_bind),
    Param("port", "6379", "int", "TCP port (0: no plain TCP listener)", maximum=65535),
    Param("requirepass", "", "string", "password of the default user (empty: no password)", sensitive=True),
    Param("aclfile", "", "string", "file of the ACL users (ACL LOAD / ACL SAVE)", mutable=False),
    Param("acllog-max-len", "128", "int", "entries kept in the ACL log", maximum=2**63 - 1),
    Param("acl-pubsub-default", "resetchannels", "enum",
          "channels of new users: resetchannels or allchannels",
          choices=("allchannels", "resetchannels")),
    Param("dir", ".", "string", "working directory for data files", protected=True),
    Param("loglevel", "notice", "enum", "debug, verbose, notice, warning or nothing",
          choices=("debug", "verbose", "notice", "warning", "nothing")),
    Param("logfile", "", "string", "log file (empty: stdout)", mutable=False),
    Param("databases", "16", "int", "number of databases", minimum=1, maximum=2**31 - 1, mutable=False),
    Param("maxclients", "10000", "int", "maximum simultaneous clients", minimum=1, maximum=2**32 - 1),
    Param("timeout", "0", "int", "close idle clients after N seconds (0: never)", maximum=2**31 - 1),
    Param("tcp-keepalive", "300", "int", "TCP keepalive seconds", maximum=2**31 - 1),
    Param("tcp-backlog", "511", "int", "listen backlog", maximum=2**31 - 1, mutable=False),
    Param("hz", "10", "int", "background task frequency", minimum=1, maximum=500),
    Param("proto-max-bulk-len", "536870912", "memory", "largest bulk string in a request",
          minimum=1024 * 1024, maximum=2**63 - 1),
    Param("client-query-buffer-limit", "1073741824", "memory", "largest query buffer of a client",
          minimum=1024 * 1024, maximum=2**63 - 1),
    Param("client-output-buffer-limit",
          "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60", "special",
          "output buffer limits per client class: class hard soft soft-seconds",
          parse_special=_parse_output_limits),
    Param("stream-node-max-bytes", "4096", "memory", "largest stream node in bytes (0: no limit)"),
    Param("stream-read-cache-bytes", "8mb", "memory",
          "encoded entries of stream nodes read more than once, kept for XRANGE/XREAD to reuse "
          "(0: off; Rivulet only)"),
    Param("stream-node-max-entries", "100", "int", "most entries in a stream node (0: no limit)",
          maximum=2**63 - 1),
    Param("stream-idmp-duration", "100", "int",
          "seconds a new stream remembers each XADD IDMP idempotent ID", minimum=1, maximum=86400),
    Param("stream-idmp-maxsize", "100", "int",
          "idempotent IDs a new stream remembers per producer", minimum=1, maximum=10000),
    # Encoding limits: a list node's size, and the sizes up to which a hash, set or sorted set
    # stays in its compact encoding. The *-ziplist-* names are Redis's older names for the same
    # settings.
    Param("list-max-listpack-size", "-2", "int",
          "entries per list node if positive, or its size class (-1: 4 KB ... -5: 64 KB)",
          minimum=-(2**31), maximum=2**31 - 1),
    Param("list-max-ziplist-size", "-2", "int", "old name of list-max-listpack-size",
          alias="list-max-listpack-size", minimum=-(2**31), maximum=2**31 - 1),
    Param("list-compress-depth", "0", "int", "list nodes at each end left uncompressed (0: none)",
          maximum=2**31 - 1),
    Param("hash-max-listpack-entries", "512", "int", "most fields of a compactly stored hash",
          maximum=2**63 - 1),
    Param("hash-max-ziplist-entries", "512", "int", "old name of hash-max-listpack-entries",
          alias="hash-max-listpack-entries", maximum=2**63 - 1),
    Param("hash-max-listpack-value", "64", "memory",
          "longest field or value of a compactly stored hash", maximum=2**63 - 1),
    Param("hash-max-ziplist-value", "64", "memory", "old name of hash-max-listpack-value",
          alias="hash-max-listpack-value", maximum=2**63 - 1),
    Param("set-max-intset-entries", "512", "int", "most members of a set stored as integers",
          maximum=2**63 - 1),
    Param("set-max-listpack-entries", "128", "int", "most members of a compactly stored set",
          maximum=2**63 - 1),
    Param("set-max-listpack-value", "64", "int", "longest member of a compactly stored set",
          maximum=2**63 - 1),
    Param("zset-max-listpack-entries", "128", "int",
          "most members of a compactly stored sorted set", maximum=2**63 - 1),
    Param("zset-max-ziplist-entries", "128", "int", "old name of zset-max-listpack-entries",
          alias="zset-max-listpack-entries", maximum=2**63 - 1),
    Param("zset-max-listpack-value", "64", "memory",
          "longest member of a compactly stored sorted set", maximum=2**63 - 1),
    Param("zset-max-ziplist-value", "64", "memory", "old name of zset-max-listpack-value",
          alias="zset-max-listpack-value", maximum=2**63 - 1),
    Param("appendonly", "yes", "bool", "log every write to an append-only file under dir"),
    Param("appendfsync", "everysec", "enum", "always, everysec or no",
          choices=("always", "everysec", "no")),
    Param("appendfilename", "appendonly.aof", "string", "append-only file name", mutable=False),
    Param("appenddirname", "appendonlydir", "string", "append-only directory", mutable=False),
    Param("save", "3600 1 300 100 60 10000", "special",
          "save dump.rdb in the background after (seconds changes) pairs: 'save \"\"' disables",
          parse_special=_parse_save),
    Param("dbfilename", "dump.rdb", "special", "snapshot (RDB) file name", protected=True,
          parse_special=_parse_dbfilename),
    Param("rdbcompression", "yes", "bool", "LZF-compress strings in dump.rdb as Redis does"),
    Param("rdbchecksum", "yes", "bool", "end dump.rdb with a CRC64 and verify it on load",
          mutable=False),
    Param("rdb-del-sync-files", "no", "bool",
          "a replica without save points or AOF deletes the dump.rdb its full sync brought"),
    Param("stop-writes-on-bgsave-error", "yes", "bool",
          "refuse writes (MISCONF) while the last background save failed and save points are set"),
    Param("rdb-save-incremental-fsync", "yes", "bool", "fsync dump.rdb every 4 MB while saving it"),
    Param("maxmemory", "0", "memory", "memory limit (0: none)"),
    Param("maxmemory-clients", "0", "memory_percent",
          "memory all normal and Pub/Sub connections may hold before the largest are closed: "
          "bytes, or a percentage of maxmemory (0: no limit)", minimum=-100),
    Param("maxmemory-policy", "noeviction", "enum", "eviction policy",
          choices=("volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
                   "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction")),
    Param("lfu-log-factor", "10", "int",
          "how slowly the LFU counter grows with accesses (OBJECT FREQ)", maximum=2**31 - 1),
    Param("lfu-decay-time", "1", "int",
          "minutes for the LFU counter to decay by one (0: never)", maximum=2**31 - 1),
    Param("daemonize", "no", "bool", "run in the background (not supported: always no)", mutable=False),
    Param("pidfile", "", "string", "write the pid to this file", mutable=False),
    Param("protected-mode", "yes", "bool", "refuse non-loopback clients when no password is set"),
    # TLS (server/tls.py): Redis's names, defaults and checks. A file setting left empty is unset.
    Param("tls-port", "0", "int", "TLS port (0: no TLS listener)", maximum=65535),
    Param("tls-cert-file", "", "string", "server certificate (PEM; a chain may follow it)"),
    Param("tls-key-file", "", "string", "private key of tls-cert-file (PEM)"),
    Param("tls-key-file-pass", "", "string", "passphrase of tls-key-file", sensitive=True),
    Param("tls-client-cert-file", "", "string",
          "certificate for outgoing TLS connections (empty: tls-cert-file)"),
    Param("tls-client-key-file", "", "string", "private key of tls-client-cert-file"),
    Param("tls-client-key-file-pass", "", "string", "passphrase of tls-client-key-file",
          sensitive=True),
    Param("tls-dh-params-file", "", "string", "DH parameters file (empty: automatic)"),
    Param("tls-ca-cert-file", "", "string", "CA certificates that sign client certificates"),
    Param("tls-ca-cert-dir", "", "string", "directory of CA certificates (hashed names)"),
    Param("tls-auth-clients", "yes", "enum",
          "client certificates: yes (required), optional (checked if given) or no",
          choices=("no", "yes", "optional")),
    Param("tls-protocols", "", "string",
          "TLS versions accepted, e.g. \"TLSv1.2 TLSv1.3\" (empty: TLSv1.2 and TLSv1.3)"),
    Param("tls-ciphers", "", "string", "TLSv1.2 cipher list, OpenSSL syntax (empty: OpenSSL's default)"),
    Param("tls-ciphersuites", "", "string", "TLSv1.3 ciphersuites, OpenSSL syntax (empty: default)"),
    Param("tls-prefer-server-ciphers", "no", "bool", "choose the cipher by the server's order"),
    Param("tls-session-caching", "yes", "bool", "let clients resume TLS sessions"),
    Param("tls-session-cache-size", "20480", "int", "TLS sessions kept for resumption",
          maximum=2**31 - 1),
    Param("tls-session-cache-timeout", "300", "int", "seconds a cached TLS session stays valid",
          maximum=2**31 - 1),
    Param("tls-replication", "no", "bool", "the replica link over TLS (client_context in server/tls.py)"),
    Param("tls-cluster", "no", "bool", "kept for clients that read it (no cluster mode)"),
    Param("max-new-tls-connections-per-cycle", "1", "int", "kept for clients that read it",
          minimum=1, maximum=1000),
    Param("notify-keyspace-events", "", "special",
          "keyspace notification classes to publish (K E g $ l s h z x e t m d n A)",
          parse_special=_parse_notify_classes),
    Param("lua-time-limit", "5000", "int", "kept for clients that read it", alias="busy-reply-threshold",
          maximum=2**63 - 1),
    Param("busy-reply-threshold", "5000", "int", "kept for clients that read it"),
    Param("slowlog-log-slower-than", "10000", "int", "kept for clients that read it", minimum=-1),
    Param("slowlog-max-len", "128", "int", "kept for clients that read it"),
    Param("latency-tracking", "yes", "bool", "kept for clients that read it"),
    Param("lazyfree-lazy-user-del", "no", "bool", "kept for clients that read it"),
    Param("lazyfree-lazy-user-flush", "no", "bool", "kept for clients that read it"),
    Param("active-expire-enabled", "yes", "bool", "expire keys in the background, not only on access"),
    Param("aof-load-truncated", "yes", "bool", "load an append-only file whose last command is cut short"),
    Param("auto-aof-rewrite-percentage", "100", "int", "rewrite the AOF when it grew by this percentage"),
    Param("auto-aof-rewrite-min-size", "67108864", "memory", "smallest AOF that is rewritten automatically"),
    Param("enable-protected-configs", "no", "enum",
          "allow CONFIG SET of protected parameters (dir, dbfilename): no, yes or local",
          choices=("no", "yes", "local"), mutable=False),
    # Redis defaults to "no"; "local" keeps DEBUG SLEEP/LOG usable from the machine itself.
    Param("enable-debug-command", "local", "enum", "allow the DEBUG command: no, yes or local",
          choices=("no", "yes", "local"), mutable=False),
    Param("io-threads", "1", "int", "kept for clients that read it (always 1)", minimum=1, maximum=128,
          mutable=False),
    Param("cluster-enabled", "no", "bool", "kept for clients that read it (no cluster mode)", mutable=False),
    Param("unixsocket", "", "string", "kept for clients that read it (no unix socket)", mutable=False),
    Param("maxmemory-samples", "5", "int", "keys sampled per database by each eviction round",
          minimum=1, maximum=64),
    Param("maxmemory-eviction-tenacity", "10", "int",
          "how long eviction runs before a command continues (10: 500 us, 100: no limit)",
          maximum=100),
    Param("lazyfree-lazy-eviction", "no", "bool", "log evicted keys as UNLINK instead of DEL"),
    Param("replica-ignore-maxmemory", "yes", "bool",
          "a replica evicts nothing and refuses nothing: its master's DELs keep it a copy"),
    # Replication, replica side (server/replication/replica.py).
    Param("replicaof", "", "special",
          "replicate the server at \"host port\" (\"no one\" or empty: be a master)",
          mutable=False, parse_special=_parse_replicaof),
    Param("slaveof", "", "special", "old name of replicaof", alias="replicaof", mutable=False,
          parse_special=_parse_replicaof),
    Param("masterauth", "", "string", "password the replica gives its master (AUTH)",
          sensitive=True),
    Param("masteruser", "", "string", "user name the replica gives its master (AUTH user pass)",
          sensitive=True),
    Param("replica-read-only", "yes", "bool",
          "a replica refuses writes from its clients (its master's still apply)"),
    Param("slave-read-only", "yes", "bool", "old name of replica-read-only",
          alias="replica-read-only"),
    Param("replica-serve-stale-data", "yes", "bool",
          "a replica whose link to its master is down still serves its data (no: -MASTERDOWN)"),
    Param("slave-serve-stale-data", "yes", "bool", "old name of replica-serve-stale-data",
          alias="replica-serve-stale-data"),
    Param("replica-lazy-flush", "no", "bool",
          "kept for clients that read it (a full resync flushes at once)"),
    Param("slave-lazy-flush", "no", "bool", "old name of replica-lazy-flush",
          alias="replica-lazy-flush"),
    Param("replica-priority", "100", "int",
          "Sentinel promotes the replica with the lowest priority first (0: never)",
          maximum=2**31 - 1),
    Param("slave-priority", "100", "int", "old name of replica-priority", alias="replica-priority",
          maximum=2**31 - 1),
    Param("replica-announced", "yes", "bool", "Sentinel lists this replica (no: hidden)"),
    Param("repl-diskless-load", "disabled", "enum",
          "how a replica loads its master's snapshot: disabled (flush once received), "
          "on-empty-db (from the start of the transfer when empty) or swapdb (beside the "
          "old dataset, kept if the transfer fails)",
          choices=("disabled", "on-empty-db", "swapdb")),
    # Replication, master side (Redis's names, defaults and bounds; the old "slave" spellings
    # are aliases).
    Param("repl-backlog-size", "1048576", "memory",
          "bytes of the replication stream kept for replicas that reconnect (at least 16 KB)",
          minimum=1),
    Param("repl-backlog-ttl", "3600", "int",
          "seconds without replicas after which the backlog is freed (0: never)"),
    Param("repl-diskless-sync", "yes", "bool",
          "send snapshots to replicas straight from a child process, without a file"),
    Param("repl-diskless-sync-delay", "5", "int",
          "seconds to wait for more replicas before a diskless snapshot starts",
          maximum=2**31 - 1),
    Param("repl-diskless-sync-max-replicas", "0", "int",
          "start a diskless snapshot at once when this many replicas wait (0: no limit)",
          maximum=2**31 - 1),
    Param("repl-ping-replica-period", "10", "int", "seconds between PINGs in the replication stream",
          minimum=1, maximum=2**31 - 1),
    Param("repl-ping-slave-period", "10", "int", "old name of repl-ping-replica-period",
          alias="repl-ping-replica-period", minimum=1, maximum=2**31 - 1),
    Param("shutdown-timeout", "10", "int", "seconds SHUTDOWN and SIGTERM wait for lagging replicas "
          "(0: not at all)", maximum=2**31 - 1),
    Param("repl-timeout", "60", "int", "seconds of silence after which a replication link is dropped (a replica's ACKs, a master's data)",
          minimum=1, maximum=2**31 - 1),
    Param("min-replicas-to-write", "0", "int",
          "refuse writes (NOREPLICAS) with fewer good replicas than this (0: off)",
          maximum=2**31 - 1),
    Param("min-slaves-to-write", "0", "int", "old name of min-replicas-to-write",
          alias="min-replicas-to-write", maximum=2**31 - 1),
    Param("min-replicas-max-lag", "10", "int",
          "seconds since its last ACK within which a replica counts as good (0: off)",
          maximum=2**31 - 1),
    Param("min-slaves-max-lag", "10", "int", "old name of min-replicas-max-lag",
          alias="min-replicas-max-lag", maximum=2**31 - 1),
    Param("replica-announce-ip", "", "string", "address a replica announces to its master"),
    Param("slave-announce-ip", "", "string", "old name of replica-announce-ip",
          alias="replica-announce-ip"),
    Param("replica-announce-port", "0", "int", "port a replica announces to its master (0: its own)",
          maximum=65535),
    Param("slave-announce-port", "0", "int", "old name of replica-announce-port",
          alias="replica-announce-port", maximum=65535),
    # RESTORE payloads are always checked whole (Rivulet rebuilds its own structures from them);
    # the setting is accepted, and read back, as Redis's.
    Param("sanitize-dump-payload", "no", "enum", "deep checks of RESTORE payloads: no, yes or clients",
          choices=("no", "yes", "clients")),
]


# Settings Redis no longer has but still accepts, and ignores, in a config file or on the command
# line (with exactly one value), so that old configuration files keep working.
DEPRECATED_NAMES = frozenset({"list-max-ziplist-entries", "list-max-ziplist-value",
                              "lua-replicate-commands"})


@dataclass
class Config:
    """The running configuration: parsed values by name, plus callbacks fired on change."""

    params: dict[str, Param] = field(default_factory=lambda: {p.name: p for p in PARAMS})
    values: dict[str, Any] = field(default_factory=dict)
    listeners: dict[str, list[Callable[[Any], None]]] = field(default_factory=dict)
    config_file: str | None = None
    # The `user` lines of the config file (name, then rules), loaded once the server starts.
    user_lines: list[list[bytes]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for p in self.params.values():
            self.values[p.name] = p.parse(p.default)

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def __contains__(self, name: object) -> bool:
        # Code that takes any mapping of settings (the RDB codecs) asks `name in config`.
        return name in self.values

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)

    def assign(self, name: str, value: Any) -> None:
        """Put back an already parsed value (CONFIG SET restoring after a failed change)."""
        self.values[name] = value
        for callback in self.listeners.get(name, ()):
            callback(value)

    def lookup(self, name: str) -> Param | None:
        param = self.params.get(name.lower())
        if param is not None and param.alias:
            return self.params.get(param.alias, param)
        return param

    def set(self, name: str, text: str, *, startup: bool = False) -> None:
        """Parse and apply one value; raises ConfigValueError with Redis's explanation."""
        param = self.lookup(name)
        if param is None:
            raise KeyError(name)
        if not param.mutable and not startup:
            raise ConfigValueError("can't set immutable config")
        value = param.parse(text)
        if param.name == "client-output-buffer-limit" and not startup:
            merged = dict(self.values[param.name])
            merged.update(value)
            value = merged
        self.values[param.name] = value
        for callback in self.listeners.get(param.name, ()):
            callback(value)

    def on_change(self, name: str, callback: Callable[[Any], None]) -> None:
        self.listeners.setdefault(name, []).append(callback)

    def render(self, name: str) -> str:
        param = self.params[name]
        value = self.values[name]
        if param.name == "client-output-buffer-limit":
            return _render_output_limits(value)
        if param.name == "notify-keyspace-events":
            return flags_to_string(value)
        if param.name == "replicaof":
            return "" if value is None else f"{value[0]} {value[1]}"
        return param.render(value)
