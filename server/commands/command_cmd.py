"""COMMAND and its subcommands: the command table as Redis 7.4 describes itself to clients.

Key specs follow the format of Redis's src/commands/*.json, e.g.
    {"flags": ("RW", "UPDATE"), "begin_search": {"index": {"pos": 1}},
     "find_keys": {"range": {"lastkey": 0, "step": 1, "limit": 0}}}
    {"flags": ("RO", "ACCESS"), "begin_search": {"keyword": {"keyword": "STREAMS", "startfrom": 1}},
     "find_keys": {"range": {"lastkey": -1, "step": 1, "limit": 2}}}
A command registered without key specs gets one derived from its (first, last, step) range.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.reply import ErrorReply, SetReply, SimpleString
from server.command_table import COMMANDS, Command, add_command, command
from server.glob import glob_match
from server.subcommands import help_reply

if TYPE_CHECKING:
    from server.connection import Client

# The order Redis lists flags and ACL categories in; flags not listed here are internal
# (sentinel, protected, may_replicate...) and Redis hides them too.
_FLAG_ORDER = ("write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript", "blocking",
               "loading", "stale", "skip_monitor", "skip_slowlog", "asking", "fast", "no_auth",
               "no_mandatory_keys", "no_async_loading", "no_multi", "movablekeys", "allow_busy")
ACL_CATEGORIES = ("keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
                  "bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
                  "blocking", "dangerous", "connection", "transaction", "scripting")
_KEY_FLAG_ORDER = ("RO", "RW", "OW", "RM", "access", "update", "insert", "delete", "not_key",
                   "incomplete", "variable_flags")
_ARG_FLAGS = ("optional", "multiple", "multiple_token")


def _status_set(names: list[str]) -> SetReply:
    return SetReply(SimpleString(n.encode()) for n in names)


def command_flags(cmd: Command) -> SetReply:
    return _status_set([f for f in _FLAG_ORDER if f in cmd.flags])


def acl_categories(cmd: Command) -> list[str]:
    """The command's categories in Redis's order (what COMMAND INFO and ACL CAT show)."""
    have = {c.lstrip("@").lower() for c in cmd.acl_categories}
    return ["@" + c for c in ACL_CATEGORIES if c in have]


# --- key specs -------------------------------------------------------------------------------


def _key_flag_names(flags: Any) -> list[str]:
    wanted = {f.upper() if f.upper() in ("RO", "RW", "OW", "RM") else f.lower() for f in flags}
    return [f for f in _KEY_FLAG_ORDER if f in wanted]


def _derived_key_flags(cmd: Command) -> tuple[str, ...]:
    # Only for commands registered without key specs: an approximation from the command flags.
    if "write" in cmd.flags:
        return ("RW", "update")
    if "readonly" in cmd.flags:
        return ("RO", "access")
    return ("RW", "access")


def key_specs(cmd: Command) -> list[dict]:
    """The command's key specs in the JSON format (declared, or derived from its key range)."""
    if cmd.key_specs:
        return list(cmd.key_specs)
    if cmd.first_key > 0:
        last = cmd.last_key - cmd.first_key if cmd.last_key >= 0 else cmd.last_key
        return [{"flags": _derived_key_flags(cmd), "begin_search": {"index": {"pos": cmd.first_key}},
                 "find_keys": {"range": {"lastkey": last, "step": max(cmd.step, 1), "limit": 0}}}]
    if cmd.key_finder is not None:
        return [{"flags": _derived_key_flags(cmd), "begin_search": {"unknown": None},
                 "find_keys": {"unknown": None}}]
    return []


def _render_key_spec(spec: dict) -> dict:
    out: dict[bytes, Any] = {}
    if spec.get("notes"):
        out[b"notes"] = spec["notes"].encode()
    out[b"flags"] = _status_set(_key_flag_names(spec.get("flags", ())))
    begin = spec.get("begin_search", {})
    if "index" in begin:
        out[b"begin_search"] = {b"type": b"index", b"spec": {b"index": begin["index"]["pos"]}}
    elif "keyword" in begin:
        kw = begin["keyword"]
        out[b"begin_search"] = {b"type": b"keyword", b"spec": {
            b"keyword": kw["keyword"].encode(), b"startfrom": kw["startfrom"]}}
    else:
        out[b"begin_search"] = {b"type": b"unknown", b"spec": {}}
    find = spec.get("find_keys", {})
    if "range" in find:
        rng = find["range"]
        out[b"find_keys"] = {b"type": b"range", b"spec": {
            b"lastkey": rng["lastkey"], b"keystep": rng["step"], b"limit": rng.get("limit", 0)}}
    elif "keynum" in find:
        kn = find["keynum"]
        out[b"find_keys"] = {b"type": b"keynum", b"spec": {
            b"keynumidx": kn["keynumidx"], b"firstkey": kn["firstkey"], b"keystep": kn["step"]}}
    else:
        out[b"find_keys"] = {b"type": b"unknown", b"spec": {}}
    return out


class _InvalidKeys(Exception):
    pass


def _spec_positions(spec: dict, argv: list[bytes], arity: int) -> list[int]:
    """Key indexes one key spec selects in argv (Redis's getKeysUsingKeySpecs)."""
    argc = len(argv)
    begin = spec.get("begin_search", {})
    if "index" in begin:
        first = begin["index"]["pos"]
    elif "keyword" in begin:
        keyword, startfrom = begin["keyword"]["keyword"].encode().lower(), begin["keyword"]["startfrom"]
        indexes = range(startfrom, argc) if startfrom > 0 else range(argc + startfrom, 0, -1)
        first = next((i + 1 for i in indexes if 1 <= i < argc and argv[i].lower() == keyword), 0)
        if not first:
            return []
    else:
        raise _InvalidKeys
    find = spec.get("find_keys", {})
    if "range" in find:
        rng = find["range"]
        step, lastkey, limit = rng["step"], rng["lastkey"], rng.get("limit", 0)
        if lastkey >= 0:
            last = first + lastkey
        elif not limit:
            last = argc + lastkey
        else:
            last = first + ((argc - first) // limit + lastkey)
    elif "keynum" in find:
        kn = find["keynum"]
        step = kn["step"]
        index = first + kn["keynumidx"]
        if index >= argc:
            raise _InvalidKeys
        try:
            numkeys = int(argv[index])
        except ValueError:
            raise _InvalidKeys from None
        if numkeys < 0:
            raise _InvalidKeys
        first += kn["firstkey"]
        last = first + numkeys - 1
    else:
        raise _InvalidKeys
    if last >= argc or last < first or first >= argc:
        raise _InvalidKeys
    positions = [i for i in range(first, last + 1, max(step, 1)) if i < argc]
    if "incomplete" in {f.lower() for f in spec.get("flags", ())}:
        raise _InvalidKeys
    return positions


def keys_with_flags(cmd: Command, argv: list[bytes]) -> list[tuple[int, list[str]]] | None:
    """(index, flags) of each key argument of argv, or None when argv is malformed for it."""
    flags_at: dict[int, list[str]] = {}
    specs = key_specs(cmd)
    try:
        for spec in specs:
            for i in _spec_positions(spec, argv, cmd.arity):
                flags_at.setdefault(i, _key_flag_names(spec.get("flags", ())))
        spec_ok = True
    except _InvalidKeys:
        spec_ok = False
    if cmd.key_finder is not None:
        # The command's own key finder is the authority on movable keys; specs give the flags.
        try:
            positions = cmd.key_finder(argv)
        except (ErrorReply, IndexError, ValueError):
            return None
        default = _key_flag_names(specs[0]["flags"]) if specs else list(_derived_key_flags(cmd))
        # What the finder returns are the keys themselves: the spec's caveats are not theirs.
        default = [f for f in default if f != "incomplete" and f != "variable_flags"]
        return [(i, flags_at.get(i, default)) for i in positions]
    if not spec_ok:
        return None
    return sorted(flags_at.items())


# --- lookups ---------------------------------------------------------------------------------


def lookup_fullname(name: bytes) -> Command | None:
    """"get" or "client|list", case-insensitively (COMMAND INFO / DOCS naming)."""
    parts = name.lower().split(b"|")
    cmd = COMMANDS.get(parts[0])
    if cmd is None or len(parts) == 1:
        return cmd
    if len(parts) == 2:
        return cmd.subcommands.get(parts[1])
    return None


def lookup_argv(argv: list[bytes]) -> Command | None:
    """The command an argv would run (container + subcommand), as Redis's lookupCommand."""
    cmd = COMMANDS.get(argv[0].lower())
    if cmd is None or len(argv) == 1 or not cmd.subcommands:
        return cmd
    return cmd.subcommands.get(argv[1].lower())


# --- replies ---------------------------------------------------------------------------------


def command_info(cmd: Command | None) -> Any:
    if cmd is None:
        return None
    subs = [command_info(s) for s in cmd.subcommands.values()]
    return [
        cmd.name.encode(), cmd.arity, command_flags(cmd), cmd.first_key, cmd.last_key, cmd.step,
        _status_set(acl_categories(cmd)), SetReply(t.encode() for t in cmd.tips),
        SetReply(_render_key_spec(s) for s in key_specs(cmd)),
        subs if cmd.subcommands else SetReply(),
    ]


def _render_args(args: tuple[dict, ...] | list[dict]) -> list[dict]:
    out = []
    for arg in args:
        doc: dict[bytes, Any] = {b"name": arg["name"].encode(), b"type": arg["type"].encode()}
        nested = arg["type"] in ("oneof", "block")
        if not nested:
            doc[b"display_text"] = (arg.get("display") or arg.get("display_text") or arg["name"]).encode()
        if "key_spec_index" in arg:
            doc[b"key_spec_index"] = arg["key_spec_index"]
        for field in ("token", "summary", "since", "deprecated_since"):
            if arg.get(field):
                doc[field.encode()] = str(arg[field]).encode()
        flags = [f for f in _ARG_FLAGS if arg.get(f) or f in arg.get("flags", ())]
        if flags:
            doc[b"flags"] = _status_set(flags)
        if nested:
            doc[b"arguments"] = _render_args(arg.get("arguments", ()))
        out.append(doc)
    return out


def command_docs(cmd: Command) -> dict:
    doc: dict[bytes, Any] = {}
    if cmd.summary:
        doc[b"summary"] = cmd.summary.encode()
    if cmd.since:
        doc[b"since"] = cmd.since.encode()
    doc[b"group"] = cmd.group.encode()
    if cmd.complexity:
        doc[b"complexity"] = cmd.complexity.encode()
    if cmd.doc_flags:
        doc[b"doc_flags"] = _status_set([f for f in ("deprecated", "syscmd") if f in cmd.doc_flags])
    if cmd.deprecated_since:
        doc[b"deprecated_since"] = cmd.deprecated_since.encode()
    if cmd.replaced_by:
        doc[b"replaced_by"] = cmd.replaced_by.encode()
    if cmd.history:
        doc[b"history"] = SetReply([since.encode(), text.encode()] for since, text in cmd.history)
    if cmd.arguments:
        doc[b"arguments"] = _render_args(cmd.arguments)
    if cmd.subcommands:
        doc[b"subcommands"] = {s.name.encode(): command_docs(s) for s in cmd.subcommands.values()}
    return doc


# --- the commands ----------------------------------------------------------------------------


def command_all(client: Client, argv: list[bytes]) -> Any:
    return [command_info(cmd) for cmd in COMMANDS.values()]


# COMMAND is both a command (no arguments: every command's info) and a container.
add_command("command", -1, "loading stale sentinel", handler=command_all, group="server",
            since="2.8.13", summary="Returns detailed information about all commands.",
            complexity="O(N) where N is the total number of Redis commands", acl=("@connection",),
            tips=("nondeterministic_output_order",))


@command("command|count", 2, "loading stale sentinel", group="server", since="2.8.13",
         summary="Returns a count of commands.", acl=("@connection",))
def command_count(client: Client, argv: list[bytes]) -> Any:
    return len(COMMANDS)


_NAMES_ARG = ({"name": "command-name", "type": "string", "optional": True, "multiple": True},)


@command("command|info", -2, "loading stale sentinel", group="server", since="2.8.13",
         summary="Returns information about one, multiple or all commands.",
         complexity="O(N) where N is the number of commands to look up", acl=("@connection",),
         history=(("7.0.0", "Allowed to be called with no argument to get info on all commands."),),
         tips=("nondeterministic_output_order",), arguments=_NAMES_ARG)
def command_info_cmd(client: Client, argv: list[bytes]) -> Any:
    if len(argv) == 2:
        return command_all(client, argv)
    return [command_info(lookup_fullname(name)) for name in argv[2:]]


@command("command|docs", -2, "loading stale sentinel", group="server", since="7.0.0",
         summary="Returns documentary information about one, multiple or all commands.",
         complexity="O(N) where N is the number of commands to look up", acl=("@connection",),
         tips=("nondeterministic_output_order",), arguments=_NAMES_ARG)
def command_docs_cmd(client: Client, argv: list[bytes]) -> Any:
    if len(argv) == 2:
        return {cmd.name.encode(): command_docs(cmd) for cmd in COMMANDS.values()}
    docs: dict[bytes, Any] = {}
    for name in argv[2:]:
        cmd = lookup_fullname(name)
        if cmd is not None:
            docs[cmd.name.encode()] = command_docs(cmd)
    return docs


def _all_with_subcommands() -> list[Command]:
    out = []
    for cmd in COMMANDS.values():
        out.append(cmd)
        out.extend(cmd.subcommands.values())
    return out


@command("command|list", -2, "loading stale sentinel", group="server", since="7.0.0",
         summary="Returns a list of command names.",
         complexity="O(N) where N is the total number of Redis commands", acl=("@connection",),
         tips=("nondeterministic_output_order",),
         arguments=({"name": "filterby", "type": "oneof", "token": "FILTERBY", "optional": True,
                     "arguments": ({"name": "module-name", "type": "string", "token": "MODULE"},
                                   {"name": "category", "type": "string", "token": "ACLCAT"},
                                   {"name": "pattern", "type": "pattern", "token": "PATTERN"})},))
def command_list(client: Client, argv: list[bytes]) -> Any:
    cmds = _all_with_subcommands()
    i = 2
    while i < len(argv):
        if argv[i].lower() != b"filterby" or len(argv) - 1 - i != 2:
            return ErrorReply("ERR syntax error")
        kind, value = argv[i + 1].lower(), argv[i + 2]
        if kind == b"module":
            cmds = []  # there are no modules
        elif kind == b"aclcat":
            cat = "@" + value.decode("utf-8", "replace").lower()
            cmds = [c for c in cmds if cat[1:] in ACL_CATEGORIES and cat in acl_categories(c)]
        elif kind == b"pattern":
            cmds = [c for c in cmds if glob_match(value, c.name.encode(), nocase=True)]
        else:
            return ErrorReply("ERR syntax error")
        i += 3
    return [c.name.encode() for c in cmds]


_GETKEYS_ARGS = ({"name": "command", "type": "string"},
                 {"name": "arg", "type": "string", "optional": True, "multiple": True})


def _getkeys(argv: list[bytes], with_flags: bool) -> Any:
    target = argv[2:]
    cmd = lookup_argv(target)
    if cmd is None:
        return ErrorReply("ERR Invalid command specified")
    if cmd.first_key <= 0 and cmd.key_finder is None and not cmd.key_specs:
        return ErrorReply("ERR The command has no key arguments")
    if cmd.key_finder is None and cmd.key_specs and all(
            "not_key" in {f.lower() for f in spec.get("flags", ())} for spec in cmd.key_specs):
        # Only channel names where keys would be (SSUBSCRIBE, SPUBLISH): not keys to Redis.
        return ErrorReply("ERR The command has no key arguments")
    n = len(target)
    if (cmd.arity > 0 and cmd.arity != n) or n < -cmd.arity:
        return ErrorReply("ERR Invalid number of arguments specified for command")
    keys = keys_with_flags(cmd, target)
    if not keys:
        if "no_mandatory_keys" in cmd.flags:
            return []
        return ErrorReply("ERR Invalid arguments specified for command")
    if with_flags:
        return [[target[i], _status_set(flags)] for i, flags in keys]
    return [target[i] for i, _flags in keys]


@command("command|getkeys", -3, "loading stale sentinel", group="server", since="2.8.13",
         summary="Extracts the key names from an arbitrary command.",
         complexity="O(N) where N is the number of arguments to the command", acl=("@connection",),
         arguments=_GETKEYS_ARGS)
def command_getkeys(client: Client, argv: list[bytes]) -> Any:
    return _getkeys(argv, with_flags=False)


@command("command|getkeysandflags", -3, "loading stale sentinel", group="server", since="7.0.0",
         summary="Extracts the key names and access flags for an arbitrary command.",
         complexity="O(N) where N is the number of arguments to the command", acl=("@connection",),
         arguments=_GETKEYS_ARGS)
def command_getkeysandflags(client: Client, argv: list[bytes]) -> Any:
    return _getkeys(argv, with_flags=True)


_HELP = [
    "(no subcommand)",
    "    Return details about all Redis commands.",
    "COUNT",
    "    Return the total number of commands in this Redis server.",
    "LIST",
    "    Return a list of all commands in this Redis server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full Redis command.",
    "GETKEYSANDFLAGS <full-command>",
    "    Return the keys and the access flags from a full Redis command.",
]


@command("command|help", 2, "loading stale sentinel", group="server", since="5.0.0",
         summary="Returns helpful text about the different subcommands.", acl=("@connection",))
def command_help(client: Client, argv: list[bytes]) -> Any:
    return help_reply("COMMAND", _HELP)
