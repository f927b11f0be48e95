"""Valid-ish commands generated from the argument specs of COMMAND DOCS.

A spec is what COMMAND DOCS gives for one command (Redis's src/commands/*.json format): arguments
with a type (key, string, integer, double, unix-time, pattern, pure-token, oneof, block), an
optional token, and the optional / multiple / multiple_token flags. Following it produces commands
that reach deep into a handler; a few arguments are then swapped for values from the hostile pools
so that each handler's own checks are exercised too.

A handful of key names serve every command, so that keys of every type collide and WRONGTYPE,
conversions between encodings and the blocking wake-ups get their share.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

KEYS = [b"k", b"s", b"l", b"h", b"z", b"t", b"{t}a", b"{t}b", b""]
STREAM_IDS = [b"*", b"$", b">", b"0", b"0-0", b"0-1", b"1-0", b"1-1", b"2", b"-", b"+", b"1-*",
              b"(1-1", b"(0", b"18446744073709551615-18446744073709551615", b"1-18446744073709551616",
              b"99999999999999-0", b"-1", b"1--1", b"1.5-0"]
INTEGERS = [b"0", b"1", b"-1", b"2", b"3", b"7", b"10", b"100", b"1000", b"2147483647", b"2147483648",
            b"-2147483649", b"9223372036854775807", b"-9223372036854775808", b"9223372036854775808",
            b"18446744073709551616", b"00", b"-0", b"+1", b" 1", b"1 ", b"0x10", b"1e3", b"1.5", b"abc", b""]
DOUBLES = [b"0", b"1", b"-1", b"1.5", b"-2.25", b"inf", b"-inf", b"+inf", b"nan", b"1e308", b"1e400",
           b"-1e-308", b"(1", b"(-inf", b"[a", b"(a", b"-", b"+", b"0x1p3", b".5", b"5.", b"1e", b""]
STRINGS = [b"a", b"b", b"v", b"field", b"hello world", b"\x00\xff\r\n", b"*", b"?", b"[a-z]*", b"\\",
           b"x" * 100, b"y" * 700, "é".encode(), b"-", b"+", b"$", b"OK", b"NX", b"XX", b"GT", b"LT"]
# Blocking commands wait a few milliseconds at most: a hang is what the harness looks for, and a
# timeout of 0 (forever) would park the client until its connection goes away.
TIMEOUTS = [b"0.001", b"0.01", b"0.02", b"0.005"]
BLOCK_MS = [b"1", b"2", b"5", b"10"]

# Commands whose numbers say how much memory to take: a bit offset of 2**31 is a 256 MB string,
# HRANDFIELD with a count of -2**24 a reply of 16 million fields. Redis takes the time and memory
# they ask for too; the fuzzer gives them counts of at most 4096 and offsets of at most 2**24
# bits, so that an input costs milliseconds.
ALLOCATES = {b"SETBIT", b"SETRANGE", b"BITFIELD", b"SRANDMEMBER", b"ZRANDMEMBER", b"HRANDFIELD",
             b"LPOS", b"SPOP", b"ZRANGE", b"LCS"}
BOUNDED_INTEGERS = [b"0", b"1", b"-1", b"2", b"7", b"-7", b"100", b"-100", b"4096", b"-4096",
                    b"abc", b"1.5", b""]
# Bit and byte offsets: up to a 2 MB string.
BOUNDED_OFFSETS = [b"0", b"7", b"8", b"4095", b"16777215", b"-1", b"abc"]

# Never generated. SHUTDOWN stops the server; DEBUG's job is to stall (SLEEP), crash (SEGFAULT,
# PANIC) or reload it; REPLICAOF/SLAVEOF make it a replica of a host taken from the arguments
# (its writes are then refused: every later finding would be noise); SYNC/PSYNC turn the
# connection into a replication link fed with a snapshot; SAVE/BGSAVE/BGREWRITEAOF write the data
# set to disk, costing seconds per call under a fuzzer's rate without exercising parsing;
# MIGRATE connects to a host taken from the arguments; MONITOR streams every command forever.
EXCLUDED = {
    "shutdown": "stops the server",
    "debug": "SLEEP stalls, SEGFAULT/PANIC crash, RELOAD reloads: their purpose",
    "replicaof": "makes the server a replica of a generated host (writes refused afterwards)",
    "slaveof": "same as REPLICAOF",
    "sync": "turns the connection into a replication link",
    "psync": "turns the connection into a replication link",
    "save": "writes the data set to disk (seconds per call, no parsing exercised)",
    "bgsave": "forks to write the data set to disk",
    "bgrewriteaof": "forks to rewrite the append-only file",
    "migrate": "connects to a host taken from the arguments",
    "monitor": "streams every later command to the connection",
    "replconf": "replication handshake between servers",
}
# Subcommands excluded for the same reasons: CLIENT KILL may kill the harness's own canary
# connection, CLIENT PAUSE with a generated timeout stops every client (a hang by design),
# CONFIG SET of an arbitrary parameter could set a password, a port, a directory or maxclients,
# CONFIG REWRITE writes a file, FAILOVER/PSYNC are replication.
EXCLUDED_SUB = {
    "client|kill": "may kill the harness's canary connection",
    "client|pause": "stops every client for the generated time, by design",
    "config|rewrite": "writes the configuration file",
    "config|resetstat": "harmless, but resets the counters the harness reads",
    "memory|purge": "a full garbage collection (0.2 s with a big heap): rate, not parsing",
}
# The CONFIG SET parameters generated: ones that change encodings and limits of values, not the
# server's reachability (port, bind, requirepass, dir, maxclients, protected-mode...).
CONFIG_PARAMS = {
    b"hash-max-listpack-entries": [b"0", b"1", b"128", b"-1"],
    b"hash-max-listpack-value": [b"0", b"1", b"64"],
    b"list-max-listpack-size": [b"-1", b"-2", b"-5", b"1", b"128", b"0", b"-6"],
    b"set-max-intset-entries": [b"0", b"1", b"512"],
    b"set-max-listpack-entries": [b"0", b"1", b"128"],
    b"zset-max-listpack-entries": [b"0", b"1", b"128"],
    b"zset-max-listpack-value": [b"0", b"1", b"64"],
    b"stream-node-max-entries": [b"0", b"1", b"2", b"100"],
    b"stream-node-max-bytes": [b"0", b"1", b"4096", b"4kb"],
    b"notify-keyspace-events": [b"", b"KEA", b"Kx", b"E$lshzxeg", b"nope"],
    b"lazyfree-lazy-user-del": [b"yes", b"no", b"maybe"],
}


@dataclass(frozen=True)
class CommandSpec:
    """One command (or subcommand) as COMMAND DOCS and COMMAND INFO describe it."""

    words: tuple[bytes, ...]  # (b"XADD",) or (b"XGROUP", b"CREATE")
    arity: int
    arguments: tuple[Mapping[str, Any], ...]
    blocking: bool = False


def specs_from_table(commands: Mapping[bytes, Any]) -> list[CommandSpec]:
    """The specs of the in-process command table (server.command_table.COMMANDS)."""
    out: list[CommandSpec] = []
    for name, cmd in sorted(commands.items()):
        if name.decode() in EXCLUDED:
            continue
        subs = cmd.subcommands
        if subs:
            for sub_name, sub in sorted(subs.items()):
                full = f"{name.decode()}|{sub_name.decode()}"
                if full in EXCLUDED_SUB:
                    continue
                out.append(CommandSpec((name.upper(), sub_name.upper()), sub.arity,
                                       tuple(sub.arguments), "blocking" in sub.flags))
        else:
            out.append(CommandSpec((name.upper(),), cmd.arity, tuple(cmd.arguments),
                                   "blocking" in cmd.flags))
    return out


def specs_from_docs(docs: Mapping[str, Mapping[str, Any]], arities: Mapping[str, int],
                    blocking: Iterable[str] = ()) -> list[CommandSpec]:
    """The specs of a live server: COMMAND DOCS (RESP3 maps, decoded) and the arities of COMMAND
    INFO, keyed by lower-case name ("xgroup|create" for subcommands)."""
    blocking = set(blocking)
    out: list[CommandSpec] = []

    def add(name: str, doc: Mapping[str, Any]) -> None:
        top = name.split("|")[0]
        if top in EXCLUDED or name in EXCLUDED_SUB:
            return
        subs = doc.get("subcommands") or {}
        if subs:
            for sub_name, sub_doc in subs.items():
                add(sub_name, sub_doc)
            return
        words = tuple(w.upper().encode() for w in name.split("|"))
        out.append(CommandSpec(words, arities.get(name, -1), tuple(doc.get("arguments") or ()),
                               name in blocking))

    for name, doc in sorted(docs.items()):
        add(name, doc)
    return out


class Generator:
    """Commands drawn from specs: each one a list of bytes arguments."""

    def __init__(self, specs: list[CommandSpec], rnd: random.Random, hostile: float = 0.15) -> None:
        self.specs = specs
        self.rnd = rnd
        self.hostile = hostile

    def command(self) -> list[bytes]:
        rnd = self.rnd
        spec = rnd.choice(self.specs)
        if spec.words[0] == b"COMMAND" and rnd.random() < 0.9:
            # COMMAND DOCS / INFO of every command are big replies: a tenth of their share.
            spec = rnd.choice(self.specs)
        argv = list(spec.words)
        if argv == [b"CONFIG", b"SET"]:
            param = rnd.choice(list(CONFIG_PARAMS))
            return argv + [param, rnd.choice(CONFIG_PARAMS[param])]
        for arg in spec.arguments:
            argv += self._arg(arg, spec)
        if rnd.random() < self.hostile and len(argv) > len(spec.words):
            self._spoil(argv, len(spec.words), spec.words[0] in ALLOCATES)
        return argv

    def pipeline(self, n: int) -> list[list[bytes]]:
        return [self.command() for _ in range(n)]

    def _spoil(self, argv: list[bytes], first: int, bounded: bool) -> None:
        """Swap, drop or add an argument: the handler's own argument checks get their turn."""
        rnd = self.rnd
        i = rnd.randrange(first, len(argv))
        roll = rnd.random()
        if roll < 0.5:
            ints = BOUNDED_INTEGERS if bounded else INTEGERS
            argv[i] = rnd.choice(rnd.choice((ints, DOUBLES, STREAM_IDS, STRINGS, KEYS)))
        elif roll < 0.7:
            del argv[i]
        elif roll < 0.85:
            argv.insert(i, rnd.choice(STRINGS + INTEGERS))
        else:
            argv.append(argv[i])

    def _arg(self, arg: Mapping[str, Any], spec: CommandSpec) -> list[bytes]:
        rnd = self.rnd
        if arg.get("optional") and rnd.random() < 0.5:
            return []
        repeat = rnd.choice((1, 1, 2, 3)) if arg.get("multiple") else 1
        out: list[bytes] = []
        token = arg.get("token")
        for n in range(repeat):
            if token is not None and arg.get("type") != "pure-token" and (
                    n == 0 or arg.get("multiple_token")):
                out.append(str(token).encode())
            out += self._value(arg, spec)
        return out

    def _value(self, arg: Mapping[str, Any], spec: CommandSpec) -> list[bytes]:
        rnd = self.rnd
        kind = arg.get("type")
        name = str(arg.get("name", "")).lower()
        if kind == "pure-token":
            return [str(arg.get("token", "")).encode()]
        if kind == "oneof":
            choices = arg.get("arguments") or ()
            return self._arg({**rnd.choice(choices), "optional": False}, spec) if choices else []
        if kind == "block":
            out: list[bytes] = []
            for sub in arg.get("arguments") or ():
                out += self._arg(sub, spec)
            return out
        if kind == "key":
            return [rnd.choice(KEYS)]
        if "timeout" in name and spec.blocking:
            return [rnd.choice(TIMEOUTS)]
        if name in ("milliseconds", "block") and spec.blocking:
            return [rnd.choice(BLOCK_MS)]
        if spec.words[0] in ALLOCATES and (kind == "integer" or name in (
                "offset", "count", "len", "maxlen", "rank", "numkeys", "value", "start", "stop",
                "end", "integer")):
            return [rnd.choice(BOUNDED_OFFSETS if "offset" in name else BOUNDED_INTEGERS)]
        if kind == "integer":
            return [rnd.choice(INTEGERS) if rnd.random() < 0.2 else str(rnd.randint(-3, 20)).encode()]
        if kind == "double":
            return [rnd.choice(DOUBLES) if rnd.random() < 0.3 else str(rnd.uniform(-5, 100)).encode()]
        if kind == "unix-time":
            return [rnd.choice((b"0", b"1", b"4102444800", b"-1", b"9999999999999"))]
        if kind == "pattern":
            return [rnd.choice((b"*", b"k*", b"?", b"[a-z]", b"[", b"\\", b"{t}*", b"*[^a]*"))]
        if spec.words[0].startswith(b"X") and ("id" in name or name in ("start", "end", "min", "max")):
            return [rnd.choice(STREAM_IDS)]
        if name in ("min", "max", "start", "stop", "end", "score", "increment"):
            return [rnd.choice(DOUBLES + INTEGERS + [b"[a", b"(b", b"-", b"+"])]
        if "channel" in name or "shardchannel" in name:
            return [rnd.choice((b"ch", b"ch2", b"news.*"))]
        return [rnd.choice(STRINGS) if rnd.random() < 0.5 else rnd.choice(KEYS + [b"1", b"2", b"m"])]


def encode(argv: list[bytes]) -> bytes:
    """The RESP multibulk form of one command, as clients send it."""
    parts = [b"*%d\r\n" % len(argv)]
    for a in argv:
        parts.append(b"$%d\r\n%b\r\n" % (len(a), a))
    return b"".join(parts)
