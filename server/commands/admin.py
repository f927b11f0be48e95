"""Server administration: TIME, DEBUG (LOG, SLEEP), SHUTDOWN, and the FUNCTION FLUSH / SCRIPT FLUSH
that tools send on reset (answered OK: there is no scripting engine to flush). Also the HELP reply
layout every container command shares."""

from __future__ import annotations

import ipaddress
import logging
import re
import time
from typing import TYPE_CHECKING, Any

from protocol.reply import OK, ErrorReply, Raw
from server.command_table import command, container
from server.persistence.loader import AofLoadError
from server.persistence.manager import RdbStartupError
from server.subcommands import help_reply, subcommand_syntax_error

if TYPE_CHECKING:
    from server.connection import Client

log = logging.getLogger("rivulet")

SYNTAX_ERROR = ErrorReply("ERR syntax error")
# A reply that writes nothing: the connection that sent SHUTDOWN sees the server close instead.
NO_REPLY = Raw(b"")
_FLOAT_PREFIX = re.compile(rb"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def is_local(client: Client) -> bool:
    """A loopback peer, as Redis's "local" setting of enable-debug-command means it."""
    host = client.addr.rsplit(":", 1)[0].strip("[]")
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def protected_action_allowed(client: Client, setting: str) -> bool:
    return setting == "yes" or (setting == "local" and is_local(client))


@command("time", 1, "loading stale fast", group="server", since="2.6.0",
         summary="Returns the server time.", tips=("nondeterministic_output",))
def time_(client: Client, argv: list[bytes]) -> Any:
    now_us = time.time_ns() // 1000
    return [b"%d" % (now_us // 1_000_000), b"%d" % (now_us % 1_000_000)]


_DEBUG_HELP = [
    "OBJECT <key>",
    "    Show low level info about `key` and associated value.",
    "LOG <message>",
    "    Write <message> to the server log.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "RELOAD",
    "    Compact the append-only file, flush the dataset and load it back from the file.",
    "LOADAOF",
    "    Flush the AOF buffers on disk and reload the AOF in memory.",
]


@command("debug", -2, "admin noscript loading stale protected", group="server", since="1.0.0",
         summary="A container for debugging commands.", complexity="Depends on subcommand.",
         doc_flags=("syscmd",))
def debug(client: Client, argv: list[bytes]) -> Any:
    if not protected_action_allowed(client, client.server.config["enable-debug-command"]):
        return ErrorReply(
            'ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", '
            "you can run it from a local connection, otherwise you need to set this option in the "
            "configuration file, and then restart the server."
        )
    sub = argv[1].lower()
    if sub == b"help" and len(argv) == 2:
        return help_reply("DEBUG", _DEBUG_HELP)
    if sub == b"object" and len(argv) == 3:
        from server.commands.object_cmd import debug_object

        return debug_object(client, argv[2])
    if sub == b"log" and len(argv) == 3:
        log.warning("DEBUG LOG: %s", argv[2].decode("utf-8", "replace"))
        return OK
    if sub == b"sleep" and len(argv) == 3:
        # Like Redis (strtod), a malformed number reads as its numeric prefix, or 0. The whole
        # server sleeps on purpose: that is what tests use DEBUG SLEEP for.
        match = _FLOAT_PREFIX.match(argv[2])
        seconds = float(match.group(0)) if match else 0.0
        if seconds > 0:
            time.sleep(seconds)
        return OK
    if sub in (b"reload", b"loadaof") and len(argv) == 2:
        try:
            client.server.persistence.reload(save_first=sub == b"reload")
        except RdbStartupError as exc:
            log.warning("%s", exc)
            return ErrorReply("ERR Error trying to load the RDB dump, check server logs.")
        except AofLoadError as exc:
            return ErrorReply(f"ERR Error trying to load the AOF: {exc}")
        except OSError:
            return ErrorReply("ERR")
        return OK
    return subcommand_syntax_error(argv)


@command("shutdown", -1, "admin noscript loading stale no_multi sentinel allow_busy",
         group="server", since="1.0.0",
         summary="Synchronously saves the database(s) to disk and shuts down the Redis server.",
         complexity="O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)",
         history=(("7.0.0", "Added the `NOW`, `FORCE` and `ABORT` modifiers."),),
         arguments=(
             {"name": "save-selector", "type": "oneof", "optional": True,
              "arguments": ({"name": "nosave", "type": "pure-token", "token": "NOSAVE"},
                            {"name": "save", "type": "pure-token", "token": "SAVE"})},
             {"name": "now", "type": "pure-token", "token": "NOW", "optional": True, "since": "7.0.0"},
             {"name": "force", "type": "pure-token", "token": "FORCE", "optional": True, "since": "7.0.0"},
             {"name": "abort", "type": "pure-token", "token": "ABORT", "optional": True, "since": "7.0.0"}))
def shutdown(client: Client, argv: list[bytes]) -> Any:
    save = nosave = abort = force = now = False
    for arg in argv[1:]:
        option = arg.lower()
        if option == b"nosave":
            nosave = True
        elif option == b"save":
            save = True
        elif option == b"abort":
            abort = True
        elif option == b"force":
            force = True
        elif option == b"now":
            now = True
        else:
            return SYNTAX_ERROR
    if (abort and len(argv) > 2) or (save and nosave):
        return SYNTAX_ERROR
    shutdown = client.server.shutdown
    if abort:
        return OK if shutdown.abort() else ErrorReply("ERR No shutdown in progress.")
    # Lagging replicas are waited for (unless NOW); the final save runs before the server
    # stops, so that a failure keeps it up and answers the client (server/shutdown.py).
    reply = shutdown.request(client, save, nosave, now, force)
    if reply is not None:
        return reply
    # Nothing read after SHUTDOWN runs, and the client gets no reply: the server goes away.
    client.close_after_reply = True
    return NO_REPLY


_FLUSH_TYPE = {"name": "flush-type", "type": "oneof", "optional": True,
               "arguments": ({"name": "async", "type": "pure-token", "token": "ASYNC"},
                             {"name": "sync", "type": "pure-token", "token": "SYNC"})}

container("function", group="scripting", since="7.0.0", summary="A container for function commands.")
container("script", group="scripting", since="2.6.0",
          summary="A container for Lua scripts management commands.")


def _flush_mode_ok(argv: list[bytes]) -> bool:
    return len(argv) == 2 or argv[2].lower() in (b"sync", b"async")


@command("function|flush", -2, "noscript write", group="scripting", since="7.0.0",
         summary="Deletes all libraries and functions.",
         complexity="O(N) where N is the number of functions deleted", acl=("@scripting",),
         tips=("request_policy:all_shards", "response_policy:all_succeeded"),
         arguments=(_FLUSH_TYPE,))
def function_flush(client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 3:
        return subcommand_syntax_error(argv)
    if not _flush_mode_ok(argv):
        return ErrorReply("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
    client.server.keyspace.dirty += 1  # Redis counts a function flush as a data change
    client.propagate(argv)
    return OK


@command("script|flush", -2, "noscript", group="scripting", since="2.6.0",
         summary="Removes all server-side Lua scripts from the script cache.",
         complexity="O(N) with N being the number of scripts in cache", acl=("@scripting",),
         history=(("6.2.0", "Added the `ASYNC` and `SYNC` flushing mode modifiers."),),
         tips=("request_policy:all_nodes", "response_policy:all_succeeded"),
         arguments=(dict(_FLUSH_TYPE, since="6.2.0"),))
def script_flush(client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 3 or not _flush_mode_ok(argv):
        return ErrorReply("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
    return OK
