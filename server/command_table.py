"""The command table: one `Command` per command and subcommand, as Redis's src/commands/*.json.

Handler modules under server/commands/ register themselves with the `command` decorator; the table
drives dispatch (lookup, arity, flags), `COMMAND INFO|DOCS|LIST|COUNT|GETKEYS` and error texts.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from server.connection import Client

Handler = Callable[["Client", list[bytes]], Any]
# Runs consecutive calls of one command read together (see `run_of`): gets the client, the
# read's commands and the index of the first; returns how many it ran (0: none, run them singly).
RunHandler = Callable[["Client", list[list[bytes]], int], int]

# ACL categories Redis derives from the group of a command.
_GROUP_CATEGORIES = {
    "string": "string", "stream": "stream", "generic": "keyspace", "connection": "connection",
    "transactions": "transaction", "server": "", "scripting": "scripting",
    "list": "list", "hash": "hash", "set": "set", "sorted_set": "sortedset", "bitmap": "bitmap",
}

# Commands of the generic group that Redis files under @connection only, not @keyspace.
_NO_GROUP_CATEGORY = frozenset({"wait", "waitaof"})


@dataclass(slots=True, eq=False)
class Command:
    name: str  # lower case; subcommands as "client|setname"
    handler: Handler | None
    arity: int
    flags: frozenset[str]
    first_key: int = 0
    last_key: int = 0
    step: int = 0
    group: str = "generic"
    since: str = "1.0.0"
    summary: str = ""
    complexity: str = "O(1)"
    arguments: tuple[dict, ...] = ()
    key_finder: Callable[[list[bytes]], list[int]] | None = None
    subcommands: dict[bytes, Command] = field(default_factory=dict)
    parent: Command | None = None
    extra_acl: tuple[str, ...] = ()
    # COMMAND INFO / COMMAND DOCS metadata, as in src/commands/*.json (all optional).
    tips: tuple[str, ...] = ()  # "nondeterministic_output", "request_policy:all_nodes"...
    key_specs: tuple[dict, ...] = ()  # see server/commands/command_cmd.py for the format
    history: tuple[tuple[str, str], ...] = ()  # (since, what changed)
    doc_flags: tuple[str, ...] = ()  # "deprecated", "syscmd"
    deprecated_since: str = ""
    replaced_by: str = ""
    run_handler: RunHandler | None = None
    # Precomputed for the dispatch hot path.
    is_write: bool = False
    denyoom: bool = False
    no_auth: bool = False
    calls: int = 0
    usec: int = 0
    rejected_calls: int = 0
    failed_calls: int = 0

    @property
    def acl_categories(self) -> list[str]:
        cats: list[str] = []
        if "write" in self.flags:
            cats.append("@write")
        if "readonly" in self.flags:
            cats.append("@read")
        # A container (handler None) has no category of its group, as in Redis's JSON files.
        group = (_GROUP_CATEGORIES.get(self.group, "")
                 if self.handler is not None and self.name not in _NO_GROUP_CATEGORY else "")
        if group:
            cats.append("@" + group)
        if "admin" in self.flags:
            cats += ["@admin", "@dangerous"]
        if "pubsub" in self.flags:  # from the flag, not the group: PUBSUB HELP has neither
            cats.append("@pubsub")
        cats.append("@fast" if "fast" in self.flags else "@slow")
        if "blocking" in self.flags:
            cats.append("@blocking")
        cats += [c for c in self.extra_acl if c not in cats]
        return cats


COMMANDS: dict[bytes, Command] = {}


def key_spec(flags: tuple[str, ...], pos: int = 1, *, last: int = 0, step: int = 1,
             limit: int = 0, notes: str = "") -> tuple[dict, ...]:
    """One key spec in the format of Redis's src/commands/*.json: the keys found at a fixed
    index (`pos`), through `last` (relative: 0 is the key itself, -1 the last argument)."""
    spec: dict[str, Any] = {"flags": flags, "begin_search": {"index": {"pos": pos}},
                            "find_keys": {"range": {"lastkey": last, "step": step, "limit": limit}}}
    if notes:
        spec["notes"] = notes
    return (spec,)


def streams_key_spec(startfrom: int, notes: str) -> tuple[dict, ...]:
    """The key spec of XREAD / XREADGROUP: the first half of what follows STREAMS. INCOMPLETE,
    as Redis marks it since its ACL fix for these commands (7.4.11, 8.x): a key or option
    value spelled STREAMS can move the keyword, so the command's key finder is the authority."""
    return ({"notes": notes, "flags": ("RO", "ACCESS", "INCOMPLETE"),
             "begin_search": {"keyword": {"keyword": "STREAMS", "startfrom": startfrom}},
             "find_keys": {"range": {"lastkey": -1, "step": 1, "limit": 2}}},)

# Called with the Server once it is built: lets command families subscribe to config changes.
STARTUP_HOOKS: list[Callable[[Any], None]] = []


def on_server_start(hook: Callable[[Any], None]) -> Callable[[Any], None]:
    STARTUP_HOOKS.append(hook)
    return hook


def command(
    name: str,
    arity: int,
    flags: str = "",
    *,
    keys: tuple[int, int, int] = (0, 0, 0),
    group: str = "generic",
    since: str = "1.0.0",
    summary: str = "",
    complexity: str = "O(1)",
    arguments: tuple[dict, ...] = (),
    key_finder: Callable[[list[bytes]], list[int]] | None = None,
    acl: tuple[str, ...] = (),
    tips: tuple[str, ...] = (),
    key_specs: tuple[dict, ...] = (),
    history: tuple[tuple[str, str], ...] = (),
    doc_flags: tuple[str, ...] = (),
) -> Callable[[Handler], Handler]:
    """Register a handler. `name` is "get" or "client|setname" (the parent must be registered).

    `flags` is a space-separated list of Redis command flags (write readonly fast blocking...).
    """

    def register(handler: Handler) -> Handler:
        add_command(name, arity, flags, handler=handler, keys=keys, group=group, since=since,
                    summary=summary, complexity=complexity, arguments=arguments,
                    key_finder=key_finder, acl=acl, tips=tips, key_specs=key_specs,
                    history=history, doc_flags=doc_flags)
        return handler

    return register


def run_of(name: str) -> Callable[[RunHandler], RunHandler]:
    """Register a handler for a run of calls of command `name` pipelined in one read.

    It is an optimisation only: it must leave the data, the replies (appended to client.out),
    the AOF and the blocked clients exactly as the calls one by one would, run no more than the
    calls it can finish that way, and return how many it ran; dispatch.execute_run does the
    checks and statistics every call gets.
    """

    def register(handler: RunHandler) -> RunHandler:
        COMMANDS[name.encode()].run_handler = handler
        return handler

    return register


def container(name: str, *, group: str, since: str, summary: str, flags: str = "") -> Command:
    """Register a command made of subcommands only (CLIENT, CONFIG, XGROUP...)."""
    return add_command(name, -2, flags, handler=None, group=group, since=since, summary=summary,
                       complexity="Depends on subcommand.")


def add_command(name: str, arity: int, flags: str, *, handler: Handler | None, keys=(0, 0, 0),
                group: str = "generic", since: str = "1.0.0", summary: str = "",
                complexity: str = "O(1)", arguments: tuple[dict, ...] = (),
                key_finder=None, acl: tuple[str, ...] = (), tips: tuple[str, ...] = (),
                key_specs: tuple[dict, ...] = (), history: tuple[tuple[str, str], ...] = (),
                doc_flags: tuple[str, ...] = ()) -> Command:
    flag_set = frozenset(flags.split())
    if key_finder is not None:
        flag_set |= {"movablekeys"}
    cmd = Command(
        name=name, handler=handler, arity=arity, flags=flag_set, first_key=keys[0],
        last_key=keys[1], step=keys[2], group=group, since=since, summary=summary,
        complexity=complexity, arguments=arguments, key_finder=key_finder, extra_acl=acl,
        tips=tips, key_specs=key_specs, history=history, doc_flags=doc_flags,
        is_write="write" in flag_set, denyoom="denyoom" in flag_set,
        no_auth="no_auth" in flag_set,
    )
    parent_name, _, sub = name.partition("|")
    if sub:
        parent = COMMANDS[parent_name.encode()]
        cmd.parent = parent
        parent.subcommands[sub.encode()] = cmd
    else:
        COMMANDS[name.encode()] = cmd
    return cmd


# The deprecated commands' COMMAND DOCS fields, from Redis's src/commands/*.json, kept in one
# place rather than beside each handler: (deprecated_since, replaced_by).
DEPRECATED: dict[str, tuple[str, str]] = {
    "brpoplpush": ("6.2.0", "`BLMOVE` with the `RIGHT` and `LEFT` arguments"),
    "getset": ("6.2.0", "`SET` with the `!GET` argument"),
    "hmset": ("4.0.0", "`HSET` with multiple field-value pairs"),
    "psetex": ("2.6.12", "`SET` with the `PX` argument"),
    "quit": ("7.2.0", "just closing the connection"),
    "rpoplpush": ("6.2.0", "`LMOVE` with the `RIGHT` and `LEFT` arguments"),
    "setex": ("2.6.12", "`SET` with the `EX` argument"),
    "slaveof": ("5.0.0", "`REPLICAOF`"),
    "setnx": ("2.6.12", "`SET` with the `NX` argument"),
    "substr": ("2.0.0", "`GETRANGE`"),
    "zrangebylex": ("6.2.0", "`ZRANGE` with the `BYLEX` argument"),
    "zrangebyscore": ("6.2.0", "`ZRANGE` with the `BYSCORE` argument"),
    "zrevrange": ("6.2.0", "`ZRANGE` with the `REV` argument"),
    "zrevrangebylex": ("6.2.0", "`ZRANGE` with the `REV` and `BYLEX` arguments"),
    "zrevrangebyscore": ("6.2.0", "`ZRANGE` with the `REV` and `BYSCORE` arguments"),
}


def load_handlers() -> None:
    """Import every module of server.commands so that each registers its commands."""
    import server.commands as package

    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        importlib.import_module(f"{package.__name__}.{info.name}")
    for name, (since, replaced_by) in DEPRECATED.items():
        cmd = COMMANDS.get(name.encode())
        if cmd is not None:
            cmd.deprecated_since = since
            cmd.replaced_by = replaced_by
            if "deprecated" not in cmd.doc_flags:
                cmd.doc_flags = (*cmd.doc_flags, "deprecated")
