"""XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS and XINFO HELP.

Every reply is a map (a flat array in RESP2) with Redis's field names in Redis's order (XINFO
STREAM with the idempotent-producer fields Redis 8.6 added after recorded-first-entry-id);
IDs are formatted "ms-seq" and unknown values (entries-read, lag, an empty stream's first and
last entry) are nil.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.numbers import parse_int
from protocol.reply import ErrorReply
from protocol.stream_resp import entries_reply, entry_reply
from server.command_table import command, container, key_spec
from server.keyspace import now_ms
from server.subcommands import help_reply, subcommand_syntax_error
from streams import Stream, format_id, nogroup_for_key

if TYPE_CHECKING:
    from server.connection import Client

_NO_SUCH_KEY = ErrorReply("ERR no such key")

_KEY_SPEC = key_spec(("RO", "ACCESS"), 2)
_KEY = {"name": "key", "type": "key", "key_spec_index": 0}

container("xinfo", group="stream", since="5.0.0",
          summary="A container for stream introspection commands.")


def _stream(client: Client, key: bytes) -> Stream:
    s = client.db.read_typed(key, Stream)
    if s is None:
        raise _NO_SUCH_KEY
    return s


_ID_FIELDS = frozenset(("last-generated-id", "max-deleted-entry-id", "recorded-first-entry-id"))
_HEAD_FIELDS = ("length", "radix-tree-keys", "radix-tree-nodes", "last-generated-id",
                "max-deleted-entry-id", "entries-added", "recorded-first-entry-id",
                "idmp-duration", "idmp-maxsize", "pids-tracked", "iids-tracked", "iids-added",
                "iids-duplicates")


def _head(d: dict[str, Any]) -> dict[bytes, Any]:
    """The fields XINFO STREAM shares with its FULL form, from the engine's info dict."""
    return {name.encode(): format_id(d[name]) if name in _ID_FIELDS else d[name]
            for name in _HEAD_FIELDS}


def _group_full(d: dict[str, Any]) -> dict[bytes, Any]:
    return {
        b"name": d["name"],
        b"last-delivered-id": format_id(d["last-delivered-id"]),
        b"entries-read": d["entries-read"],
        b"lag": d["lag"],
        b"pel-count": d["pel-count"],
        b"pending": [[format_id(eid), name, when, n] for eid, name, when, n in d["pending"]],
        b"consumers": [{
            b"name": c["name"],
            b"seen-time": c["seen-time"],
            b"active-time": c["active-time"],
            b"pel-count": c["pel-count"],
            b"pending": [[format_id(eid), when, n] for eid, when, n in c["pending"]],
        } for c in d["consumers"]],
        b"nacked-count": d["nacked-count"],
    }


@command("xinfo|stream", -3, "readonly", group="stream", since="5.0.0",
         summary="Returns information about a stream.", key_specs=_KEY_SPEC, keys=(2, 2, 1),
         history=(("6.0.0", "Added the `FULL` modifier."),
                  ("7.0.0", "Added the `max-deleted-entry-id`, `entries-added`, "
                   "`recorded-first-entry-id`, `entries-read` and `lag` fields"),
                  ("7.2.0", "Added the `active-time` field, and changed the meaning of `seen-time`."),
                  ("8.6.0", "Added the `idmp-duration`, `idmp-maxsize`, `pids-tracked`, "
                   "`iids-tracked`, `iids-added` and `iids-duplicates` fields for IDMP tracking."),
                  ("8.8.0", "Added the `nacked-count` field.")),
         arguments=(_KEY, {"name": "full-block", "type": "block", "optional": True, "arguments": (
             {"name": "full", "token": "FULL", "type": "pure-token"},
             {"token": "COUNT", "name": "count", "type": "integer", "optional": True})}))
def xinfo_stream(client: Client, argv: list[bytes]) -> Any:
    s = _stream(client, argv[2])  # the key is looked up before the options are checked
    s.idmp.expire_all(now_ms())  # the IDMP counts are of the pairs still remembered
    optc = len(argv) - 3
    if optc == 0:
        info = s.info()
        reply = _head(info)
        reply[b"groups"] = info["groups"]
        first, last = info["first-entry"], info["last-entry"]
        reply[b"first-entry"] = None if first is None else entry_reply(*first)
        reply[b"last-entry"] = None if last is None else entry_reply(*last)
        return reply
    if optc not in (1, 3) or argv[3].lower() != b"full":
        raise subcommand_syntax_error(argv)
    count = 10
    if optc == 3:
        if argv[4].lower() != b"count":
            raise subcommand_syntax_error(argv)
        count = parse_int(argv[5])
        if count < 0:
            count = 10
    full = s.info_full(count)
    reply = _head(full)
    reply[b"entries"] = entries_reply(full["entries"])
    reply[b"groups"] = [_group_full(g) for g in full["groups"]]
    return reply


@command("xinfo|groups", 3, "readonly", group="stream", since="5.0.0",
         summary="Returns a list of the consumer groups of a stream.", key_specs=_KEY_SPEC,
         keys=(2, 2, 1), history=(("7.0.0", "Added the `entries-read` and `lag` fields"),),
         arguments=(_KEY,))
def xinfo_groups(client: Client, argv: list[bytes]) -> Any:
    s = _stream(client, argv[2])
    return [{
        b"name": g.name,
        b"consumers": len(g.consumers),
        b"pending": len(g.pel),
        b"last-delivered-id": format_id(g.last_id),
        b"entries-read": g.entries_read,
        b"lag": g.lag(s),
    } for g in s.iter_groups()]


@command("xinfo|consumers", 4, "readonly", group="stream", since="5.0.0",
         summary="Returns a list of the consumers in a consumer group.", key_specs=_KEY_SPEC,
         keys=(2, 2, 1), tips=("nondeterministic_output",),
         history=(("7.2.0", "Added the `inactive` field, and changed the meaning of `idle`."),),
         arguments=(_KEY, {"name": "group", "type": "string"}))
def xinfo_consumers(client: Client, argv: list[bytes]) -> Any:
    s = _stream(client, argv[2])
    g = s.groups.get(argv[3])
    if g is None:
        raise nogroup_for_key(argv[2], argv[3])
    return [{b"name": row["name"], b"pending": row["pending"], b"idle": row["idle"],
             b"inactive": row["inactive"]} for row in g.consumers_info(now_ms())]


_XINFO_HELP = [
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",  # sic: Redis's text lacks the closing bracket
    "    Show information about the stream.",
]


@command("xinfo|help", 2, "loading stale", group="stream", since="5.0.0",
         summary="Returns helpful text about the different subcommands.")
def xinfo_help(client: Client, argv: list[bytes]) -> Any:
    return help_reply("XINFO", _XINFO_HELP)
