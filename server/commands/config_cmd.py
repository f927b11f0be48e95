"""CONFIG GET / SET / RESETSTAT / REWRITE / HELP over the parameter registry of server/config.py.

CONFIG SET is all or nothing, as in Redis 7: every name is checked first, then every value parsed
and stored, then the changes that need work (listening sockets, request parser limits) applied;
any failure puts every old value back.
"""

from __future__ import annotations

import logging
import os
import shlex
import tempfile
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from protocol.reply import OK, ErrorReply
from server.command_table import COMMANDS, command, container, on_server_start
from server.commands.admin import protected_action_allowed
from server.config import Config, ConfigValueError, Param
from server.glob import glob_match
from server.listeners import ListenError
from server.subcommands import help_reply
from server.tls import APPLY_ERROR, CONTEXT_SETTINGS, TLSConfigError, tls_wanted

if TYPE_CHECKING:
    from server.connection import Client
    from server.server import Server

log = logging.getLogger("rivulet")

container("config", group="server", since="2.0.0",
          summary="A container for server configuration commands.")


def _name(arg: bytes) -> str:
    return arg.decode("utf-8", "replace")


# --- CONFIG GET ------------------------------------------------------------------------------


@command("config|get", -3, "admin noscript loading stale", group="server", since="2.0.0",
         summary="Returns the effective values of configuration parameters.",
         complexity="O(N) when N is the number of configuration parameters provided",
         history=(("7.0.0", "Added the ability to pass multiple pattern parameters in one call"),),
         arguments=({"name": "parameter", "type": "string", "multiple": True},))
def config_get(client: Client, argv: list[bytes]) -> Any:
    config = client.server.config
    found: dict[bytes, bytes] = {}
    for arg in argv[2:]:
        name = _name(arg)
        if not any(ch in name for ch in "[*?"):
            # A plain name is looked up (aliases included) and echoed as given, like Redis.
            param = config.lookup(name)
            if param is not None and arg not in found:
                found[arg] = config.render(param.name).encode()
            continue
        for pname, param in config.params.items():
            key = pname.encode()
            if key not in found and glob_match(arg, key, nocase=True):
                target = config.lookup(pname) or param
                found[key] = config.render(target.name).encode()
    return found  # a map in RESP3, a flat name/value array in RESP2


# --- CONFIG SET ------------------------------------------------------------------------------

# Work a change needs beyond storing the value: fn(server) raises ConfigValueError on failure.
APPLY: dict[str, Callable[[Server], None]] = {}


def applies_to(*names: str) -> Callable[[Callable[[Server], None]], Callable[[Server], None]]:
    def register(fn: Callable[[Server], None]) -> Callable[[Server], None]:
        for name in names:
            APPLY[name] = fn
        return fn
    return register


@applies_to("port", "bind")
def apply_listeners(server: Server) -> None:
    """Listen on the configured addresses and ports instead of the current ones (Redis's
    applyBind: the TLS listener follows `bind` too). Port 0: no plain TCP listener."""
    loop = server.loop
    if loop is None:
        return
    config = server.config
    try:
        server.tcp.restart(loop, config["bind"], config["port"], config["tcp-backlog"])
    except ListenError:
        raise ConfigValueError("Unable to listen on this port. Check server logs.") from None
    if server.tls_listener.active:
        try:
            server.tls_listener.restart(loop, config["bind"], config["tls-port"], config["tcp-backlog"])
        except ListenError:
            server.tcp.close()
            raise ConfigValueError("Failed to bind to specified addresses.") from None


@applies_to("tls-port")
def apply_tls_port(server: Server) -> None:
    """Redis's applyTLSPort: configure TLS if it was not, then (re)open the TLS listener."""
    loop = server.loop
    if loop is None:
        return
    config = server.config
    try:
        server.tls.configure(config, reconfigure=False)
    except TLSConfigError:
        raise ConfigValueError(APPLY_ERROR) from None
    try:
        server.tls_listener.restart(loop, config["bind"], config["tls-port"], config["tcp-backlog"])
    except ListenError:
        raise ConfigValueError("Unable to listen on this port. Check server logs.") from None


@applies_to(*CONTEXT_SETTINGS)
def apply_tls_contexts(server: Server) -> None:
    """Redis's applyTlsCfg: rebuild every TLS context when TLS is in use; new connections take
    them, open ones keep theirs. A failure keeps the current contexts."""
    if tls_wanted(server.config):
        try:
            server.tls.configure(server.config)
        except TLSConfigError:
            raise ConfigValueError(APPLY_ERROR) from None


@on_server_start
def _follow_parser_limits(server: Server) -> None:
    """New request-size limits reach the parsers of clients already connected, not only new ones."""
    def update(attr: str) -> Callable[[Any], None]:
        def set_limit(value: Any) -> None:
            for client in server.clients.values():
                if hasattr(client.parser, attr):
                    setattr(client.parser, attr, value)
        return set_limit

    server.config.on_change("proto-max-bulk-len", update("max_bulk_len"))
    server.config.on_change("client-query-buffer-limit", update("query_buffer_limit"))


def _set_error(name: str, why: str | None) -> ErrorReply:
    if why is None:
        return ErrorReply(f"ERR CONFIG SET failed (possibly related to argument '{name}')")
    return ErrorReply(f"ERR CONFIG SET failed (possibly related to argument '{name}') - {why}")


def _check_names(client: Client, config: Config, argv: list[bytes]) -> list[tuple[Param, str]] | ErrorReply:
    """Resolve every name, or the error Redis gives (its precedence: first unknown name wins
    unless an earlier name already failed)."""
    chosen: list[tuple[Param, str]] = []
    error: ErrorReply | None = None
    for i in range(2, len(argv), 2):
        name = _name(argv[i])
        param = config.lookup(name)
        if param is None:
            if error is None:
                error = ErrorReply(f"ERR Unknown option or number of arguments for CONFIG SET - '{name}'")
            continue
        if error is not None:
            continue
        if not param.mutable:
            error = _set_error(name, "can't set immutable config")
        elif param.protected and not protected_action_allowed(client, config["enable-protected-configs"]):
            error = _set_error(name, "can't set protected config")
        elif any(p is param for p, _ in chosen):
            error = _set_error(name, "duplicate parameter")
        chosen.append((param, _name(argv[i + 1])))
    return error if error is not None else chosen


@command("config|set", -4, "admin noscript loading stale", group="server", since="2.0.0",
         summary="Sets configuration parameters in-flight.",
         complexity="O(N) when N is the number of configuration parameters provided",
         history=(("7.0.0", "Added the ability to set multiple parameters in one call."),),
         tips=("request_policy:all_nodes", "response_policy:all_succeeded"),
         arguments=({"name": "data", "type": "block", "multiple": True,
                     "arguments": ({"name": "parameter", "type": "string"},
                                   {"name": "value", "type": "string"})},))
def config_set(client: Client, argv: list[bytes]) -> Any:
    if len(argv) % 2:
        return ErrorReply("ERR syntax error")
    server = client.server
    config = server.config
    chosen = _check_names(client, config, argv)
    if isinstance(chosen, ErrorReply):
        return chosen
    old = {param.name: config[param.name] for param, _ in chosen}
    # Errors name a parameter as the client spelled it (an old alias stays the alias).
    given = {config.lookup(_name(argv[i])).name: _name(argv[i])  # type: ignore[union-attr]
             for i in range(2, len(argv), 2)}

    def restore() -> None:
        for name, value in old.items():
            if config[name] != value:
                config.assign(name, value)

    for param, text in chosen:
        try:
            config.set(param.name, text)
        except ConfigValueError as exc:
            restore()
            return _set_error(given.get(param.name, param.name), str(exc))
    applied: list[Callable[[Server], None]] = []
    for param, _ in chosen:
        fn = APPLY.get(param.name)
        if fn is None or fn in applied:
            continue
        applied.append(fn)
        try:
            fn(server)
        except ConfigValueError as exc:
            log.warning("Failed applying new configuration. Possibly related to new %s setting. "
                        "Restoring previous settings.", param.name)
            restore()
            for undo in applied:
                try:
                    undo(server)
                except ConfigValueError:
                    log.warning("Could not restore the previous %s setting", param.name)
            return _set_error(param.name, str(exc))
    return OK


# --- CONFIG RESETSTAT ------------------------------------------------------------------------


def reset_command_stats() -> None:
    for cmd in COMMANDS.values():
        for c in (cmd, *cmd.subcommands.values()):
            c.calls = c.usec = c.rejected_calls = c.failed_calls = 0


@command("config|resetstat", 2, "admin noscript loading stale", group="server", since="2.0.0",
         summary="Resets the server's statistics.",
         tips=("request_policy:all_nodes", "response_policy:all_succeeded"))
def config_resetstat(client: Client, argv: list[bytes]) -> Any:
    server = client.server
    server.stats.reset()
    server.keyspace.expired_keys = 0
    server.keyspace.hits = server.keyspace.misses = 0
    server.output_limit_disconnections = 0
    server.query_limit_disconnections = 0
    reset_command_stats()
    return OK


# --- CONFIG REWRITE --------------------------------------------------------------------------

REWRITE_SIGNATURE = "# Generated by CONFIG REWRITE"


def _directive_lines(config: Config, param: Param) -> list[str]:
    """How a parameter is written in a config file (several lines for per-class limits)."""
    text = config.render(param.name)
    if param.name == "replicaof":
        # A master has no replicaof line: any in the file goes (Redis's
        # rewriteConfigReplicaOfOption).
        return [f"replicaof {text}"] if text else []
    if param.name == "client-output-buffer-limit":
        words = text.split()
        return [f"{param.name} {' '.join(words[i:i + 4])}" for i in range(0, len(words), 4)]
    if param.kind == "special":
        return [f"{param.name} {text}" if text else f'{param.name} ""']
    return [f"{param.name} {shlex.quote(text) if text else chr(34) * 2}"]


def rewrite_config_file(config: Config, path: str, users: list[str] | None = None) -> None:
    """Rewrite `path` keeping its comments and order: known directives get their current value in
    place, and parameters changed from their defaults that the file lacks are appended.

    `users` are the `user` lines (Redis's rewriteConfigUserOption: every user, in the place of
    the first `user` line; none when the users live in an ACL file)."""
    users = users or []
    try:
        # Bytes that are not UTF-8 (a user's name) are kept as they are, both ways.
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            old_lines = fh.read().splitlines()
    except FileNotFoundError:
        old_lines = []
    out: list[str] = []
    written: set[str] = set()
    for line in old_lines:
        stripped = line.strip()
        if stripped == REWRITE_SIGNATURE:
            continue
        if not stripped or stripped.startswith("#"):
            out.append(line)
            continue
        if stripped.split()[0].lower() == "user":
            if "user" not in written:
                written.add("user")
                out.extend(users)
            continue
        param = config.lookup(stripped.split()[0])
        if param is None:
            out.append(line)  # keep what we do not understand rather than lose it
            continue
        if param.name not in written:
            written.add(param.name)
            out.extend(_directive_lines(config, param))
    appended: list[str] = []
    defaults = Config()
    for param in config.params.values():
        if param.alias or param.name in written:
            continue
        if config.render(param.name) != defaults.render(param.name):
            appended.extend(_directive_lines(config, param))
    if "user" not in written:
        appended.extend(users)
    if appended:
        out.append(REWRITE_SIGNATURE)
        out.extend(appended)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="temp-rewriteconfig-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write("\n".join(out) + "\n")
        if os.path.exists(path):
            os.chmod(tmp, os.stat(path).st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


@command("config|rewrite", 2, "admin noscript loading stale", group="server", since="2.8.0",
         summary="Persists the effective configuration to file.",
         tips=("request_policy:all_nodes", "response_policy:all_succeeded"))
def config_rewrite(client: Client, argv: list[bytes]) -> Any:
    config = client.server.config
    if config.config_file is None:
        return ErrorReply("ERR The server is running without a config file")
    try:
        acl = client.server.acl
        users = [] if config["aclfile"] else [
            (b"user " + u.name + b" " + u.describe()).decode("utf-8", "surrogateescape")
            for u in acl.sorted_users()]
        rewrite_config_file(config, config.config_file, users)
    except OSError as exc:
        log.warning("CONFIG REWRITE failed: %s", exc.strerror)
        return ErrorReply(f"ERR Rewriting config file: {exc.strerror}")
    log.log(25, "CONFIG REWRITE executed with success.")
    return OK


# --- CONFIG HELP -----------------------------------------------------------------------------

_HELP = [
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "REWRITE",
    "    Rewrite the configuration file.",
]


@command("config|help", 2, "loading stale", group="server", since="5.0.0",
         summary="Returns helpful text about the different subcommands.")
def config_help(client: Client, argv: list[bytes]) -> Any:
    return help_reply("CONFIG", _HELP)
