"""CLIENT: the connection's own attributes (ID, SETNAME, SETINFO...) and the admin view of every
connection (LIST, INFO, KILL, UNBLOCK), with the reply formats and error texts of Redis 7.4."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from protocol.numbers import parse_int
from protocol.reply import OK, ErrorReply, Verbatim
from server.client_memory import REPLY_BUFFER_SIZE, client_memory
from server.command_table import command, container
from server.commands.admin import NO_REPLY
from server.commands.connection import valid_client_name
from server.connection import REPLY_OFF, REPLY_SKIP, REPLY_SKIP_NEXT
from server.subcommands import help_reply, subcommand_syntax_error

if TYPE_CHECKING:
    from server.connection import Client

SYNTAX_ERROR = ErrorReply("ERR syntax error")
_NAME_ERROR = ErrorReply("ERR Client names cannot contain spaces, newlines or special characters.")
_ON_OFF = ({"name": "enabled", "type": "oneof",
            "arguments": ({"name": "on", "type": "pure-token", "token": "ON"},
                          {"name": "off", "type": "pure-token", "token": "OFF"})},)
# Client types as CLIENT LIST TYPE / CLIENT KILL TYPE name them ("slave" is the old spelling).
_TYPES = {b"normal": "normal", b"master": "master", b"replica": "replica", b"slave": "replica",
          b"pubsub": "pubsub"}
container("client", group="connection", since="2.4.0",
          summary="A container for client connection commands.", flags="sentinel")


def client_type(client: Client) -> str:
    if client.is_master:
        return "master"
    link = client.replica
    if link is not None and link.is_replica:
        return "replica"
    subs = client.subs
    return "pubsub" if subs is not None and subs.active() else "normal"


def _flags(client: Client) -> str:
    # Same letters, same order as Redis: S a replica of ours, M our master, P Pub/Sub mode, x MULTI, b blocked, d watched key touched (EXEC will
    # fail), c closing after this reply, e no-evict, T no-touch; N when none applies.
    flags = ""
    kind = client_type(client)
    if kind == "replica":
        flags += "S"
    if kind == "master":
        flags += "M"
    if kind == "pubsub":
        flags += "P"
    if client.multi is not None or client.exec_queue is not None:
        flags += "x"
    if client.blocked is not None:
        flags += "b"
    if client.watch_dirty:
        flags += "d"
    if client.close_after_reply:
        flags += "c"
    if client.no_evict:
        flags += "e"
    if client.no_touch:
        flags += "T"
    return flags or "N"


def client_info_line(client: Client, current_argv: list[bytes] | None = None) -> str:
    """One CLIENT LIST line: every field of Redis 7.4, in Redis's order."""
    now = time.time()
    qbuf, argv_mem, multi_mem, pending, tot_mem = client_memory(client, current_argv)
    # Inside EXEC the client is still in MULTI, as in Redis.
    queue = client.multi if client.multi is not None else client.exec_queue
    cmd = client.last_command.name if client.last_command is not None else "NULL"
    events = "r" if not client.closed else ""
    subs = client.subs
    sub, psub, ssub = ((len(subs.channels), len(subs.patterns), len(subs.shard))
                       if subs is not None else (0, 0, 0))
    if pending:
        events += "w"
    return (
        f"id={client.id} addr={client.addr} laddr={client.laddr} fd={client.fd} "
        f"name={_text(client.name)} age={int(now - client.created)} "
        f"idle={int(now - client.last_interaction)} flags={_flags(client)} db={client.db.index} "
        f"sub={sub} psub={psub} ssub={ssub} multi={len(queue) if queue is not None else -1} "
        f"watch={len(client.watched)} qbuf={qbuf} qbuf-free=0 argv-mem={argv_mem} "
        f"multi-mem={multi_mem} rbs={REPLY_BUFFER_SIZE} rbp=0 obl=0 oll=0 omem={pending} "
        f"tot-mem={tot_mem} events={events} cmd={cmd} user={client.acl_user.name.decode('utf-8', 'surrogateescape')} redir=-1 "
        f"resp={3 if client.resp3 else 2} lib-name={_text(client.lib_name)} "
        f"lib-ver={_text(client.lib_ver)}"
    )


def _text(value: bytes) -> str:
    # Names are validated to printable ASCII, so this never loses anything.
    return value.decode("ascii", "replace")


def _listing(client: Client, targets: list[Client], argv: list[bytes]) -> Verbatim:
    lines = [client_info_line(t, argv if t is client else None) + "\n" for t in targets]
    return Verbatim("".join(lines).encode("utf-8", "surrogateescape"))


@command("client|id", 2, "noscript loading stale sentinel", group="connection", since="5.0.0",
         summary="Returns the unique client ID of the connection.", acl=("@connection",))
def client_id(client: Client, argv: list[bytes]) -> Any:
    return client.id


@command("client|setname", 3, "noscript loading stale sentinel", group="connection",
         since="2.6.9", summary="Sets the connection name.", acl=("@connection",),
         tips=("request_policy:all_nodes", "response_policy:all_succeeded"),
         arguments=({"name": "connection-name", "type": "string"},))
def client_setname(client: Client, argv: list[bytes]) -> Any:
    name = argv[2]
    if not valid_client_name(name):
        return _NAME_ERROR
    client.name = name  # the empty name clears it
    return OK


@command("client|getname", 2, "noscript loading stale sentinel", group="connection",
         since="2.6.9", summary="Returns the name of the connection.", acl=("@connection",))
def client_getname(client: Client, argv: list[bytes]) -> Any:
    return client.name or None


@command("client|setinfo", 4, "noscript loading stale sentinel", group="connection",
         since="7.2.0", summary="Sets information specific to the client or connection.",
         acl=("@connection",), tips=("request_policy:all_nodes", "response_policy:all_succeeded"),
         arguments=({"name": "attr", "type": "oneof",
                     "arguments": ({"name": "libname", "type": "string", "token": "lib-name"},
                                   {"name": "libver", "type": "string", "token": "lib-ver"})},))
def client_setinfo(client: Client, argv: list[bytes]) -> Any:
    attr = argv[2]
    attr_text = attr.decode("utf-8", "replace")
    kind = attr.lower()
    if kind not in (b"lib-name", b"lib-ver"):
        return ErrorReply(f"ERR Unrecognized option '{attr_text}'")
    value = argv[3]
    if not valid_client_name(value):
        return ErrorReply(f"ERR {attr_text} cannot contain spaces, newlines or special characters.")
    if kind == b"lib-name":
        client.lib_name = value
    else:
        client.lib_ver = value
    return OK


@command("client|info", 2, "noscript loading stale sentinel", group="connection", since="6.2.0",
         summary="Returns information about the connection.", acl=("@connection",),
         tips=("nondeterministic_output",))
def client_info(client: Client, argv: list[bytes]) -> Any:
    return Verbatim((client_info_line(client, argv) + "\n").encode("utf-8", "surrogateescape"))


@command("client|list", -2, "admin noscript loading stale sentinel", group="connection",
         since="2.4.0", summary="Lists open connections.", acl=("@connection",),
         complexity="O(N) where N is the number of client connections",
         tips=("nondeterministic_output",),
         history=(("2.8.12", "Added unique client `id` field."),
                  ("5.0.0", "Added optional `TYPE` filter."),
                  ("6.0.0", "Added `user` field."),
                  ("6.2.0", "Added `argv-mem`, `tot-mem`, `laddr` and `redir` fields and the optional `ID` filter."),
                  ("7.0.0", "Added `resp`, `multi-mem`, `rbs` and `rbp` fields."),
                  ("7.0.3", "Added `ssub` field.")),
         arguments=(
             {"name": "client-type", "type": "oneof", "token": "TYPE", "optional": True, "since": "5.0.0",
              "arguments": ({"name": "normal", "type": "pure-token", "token": "normal"},
                            {"name": "master", "type": "pure-token", "token": "master"},
                            {"name": "replica", "type": "pure-token", "token": "replica"},
                            {"name": "pubsub", "type": "pure-token", "token": "pubsub"})},
             {"name": "client-id", "type": "integer", "token": "ID", "optional": True, "multiple": True,
              "since": "6.2.0"}))
def client_list(client: Client, argv: list[bytes]) -> Any:
    clients = client.server.clients
    if len(argv) == 2:
        return _listing(client, list(clients.values()), argv)
    option = argv[2].lower()
    if len(argv) == 4 and option == b"type":
        wanted = _TYPES.get(argv[3].lower())
        if wanted is None:
            return ErrorReply(f"ERR Unknown client type '{argv[3].decode('utf-8', 'replace')}'")
        return _listing(client, [c for c in clients.values() if client_type(c) == wanted], argv)
    if len(argv) > 3 and option == b"id":
        targets = []
        for arg in argv[3:]:
            cid = parse_int(arg, ErrorReply("ERR Invalid client ID"))
            target = clients.get(cid)
            if target is not None:
                targets.append(target)
        return _listing(client, targets, argv)
    return SYNTAX_ERROR


_KILL_ARGS = (
    {"name": "filter", "type": "oneof", "arguments": (
        {"name": "old-format", "type": "string", "display": "ip:port", "deprecated_since": "2.8.12"},
        {"name": "new-format", "type": "oneof", "multiple": True, "arguments": (
            {"name": "client-id", "type": "integer", "token": "ID", "optional": True, "since": "2.8.12"},
            {"name": "client-type", "type": "oneof", "token": "TYPE", "optional": True, "since": "2.8.12",
             "arguments": ({"name": "normal", "type": "pure-token", "token": "normal"},
                           {"name": "master", "type": "pure-token", "token": "master", "since": "3.2.0"},
                           {"name": "slave", "type": "pure-token", "token": "slave"},
                           {"name": "replica", "type": "pure-token", "token": "replica", "since": "5.0.0"},
                           {"name": "pubsub", "type": "pure-token", "token": "pubsub"})},
            {"name": "username", "type": "string", "token": "USER", "optional": True},
            {"name": "addr", "type": "string", "token": "ADDR", "display": "ip:port", "optional": True},
            {"name": "laddr", "type": "string", "token": "LADDR", "display": "ip:port", "optional": True,
             "since": "6.2.0"},
            {"name": "skipme", "type": "oneof", "token": "SKIPME", "optional": True,
             "arguments": ({"name": "yes", "type": "pure-token", "token": "YES"},
                           {"name": "no", "type": "pure-token", "token": "NO"})},
            {"name": "maxage", "type": "integer", "token": "MAXAGE", "optional": True, "since": "7.4.0"})})},
)


@command("client|kill", -3, "admin noscript loading stale sentinel", group="connection",
         since="2.4.0", summary="Terminates open connections.", acl=("@connection",),
         complexity="O(N) where N is the number of client connections",
         history=(("2.8.12", "Added new filter format."), ("2.8.12", "`ID` option."),
                  ("3.2.0", "Added `master` type in for `TYPE` option."),
                  ("5.0.0", "Replaced `slave` `TYPE` with `replica`. `slave` still supported for backward compatibility."),
                  ("6.2.0", "`LADDR` option."), ("7.4.0", "`MAXAGE` option.")),
         arguments=_KILL_ARGS)
def client_kill(client: Client, argv: list[bytes]) -> Any:
    addr = laddr = None
    wanted_type = None
    wanted_id = 0
    wanted_user = None
    max_age = 0
    old_form = len(argv) == 3
    skipme = not old_form  # with the old form a client may kill itself
    if old_form:
        addr = argv[2].decode("utf-8", "replace")
    else:
        i = 2
        while i < len(argv):
            option = argv[i].lower()
            if i + 1 >= len(argv):
                return SYNTAX_ERROR
            value = argv[i + 1]
            if option == b"id":
                wanted_id = parse_int(value, ErrorReply("ERR client-id should be greater than 0"))
                if wanted_id < 1:
                    return ErrorReply("ERR client-id should be greater than 0")
            elif option == b"maxage":
                max_age = parse_int(value, ErrorReply("ERR maxage is not an integer or out of range"))
                if max_age <= 0:
                    return ErrorReply("ERR maxage should be greater than 0")
            elif option == b"type":
                wanted_type = _TYPES.get(value.lower())
                if wanted_type is None:
                    return ErrorReply(f"ERR Unknown client type '{value.decode('utf-8', 'replace')}'")
            elif option == b"addr":
                addr = value.decode("utf-8", "replace")
            elif option == b"laddr":
                laddr = value.decode("utf-8", "replace")
            elif option == b"user":
                wanted_user = client.server.acl.users.get(value)
                if wanted_user is None:
                    return ErrorReply(f"ERR No such user '{value.decode('utf-8', 'surrogateescape')}'")
            elif option == b"skipme":
                if value.lower() == b"yes":
                    skipme = True
                elif value.lower() == b"no":
                    skipme = False
                else:
                    return SYNTAX_ERROR
            else:
                return SYNTAX_ERROR
            i += 2
    now = time.time()
    killed = 0
    for target in list(client.server.clients.values()):
        if addr is not None and target.addr != addr:
            continue
        if laddr is not None and target.laddr != laddr:
            continue
        if wanted_type is not None and client_type(target) != wanted_type:
            continue
        if wanted_id and target.id != wanted_id:
            continue
        if wanted_user is not None and target.acl_user is not wanted_user:
            continue
        if target is client and skipme:
            continue
        if max_age and now - target.created < max_age:
            continue
        if target is client:
            # The reply must still reach us: close once it is written.
            client.close_after_reply = True
        else:
            target.close()
        killed += 1
    if old_form:
        return OK if killed else ErrorReply("ERR No such client")
    return killed


@command("client|unblock", -3, "admin noscript loading stale sentinel", group="connection",
         since="5.0.0", summary="Unblocks a client blocked by a blocking command from a different connection.",
         complexity="O(log N) where N is the number of client connections", acl=("@connection",),
         arguments=({"name": "client-id", "type": "integer"},
                    {"name": "unblock-type", "type": "oneof", "optional": True,
                     "arguments": ({"name": "timeout", "type": "pure-token", "token": "TIMEOUT"},
                                   {"name": "error", "type": "pure-token", "token": "ERROR"})}))
def client_unblock(client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 4:
        return subcommand_syntax_error(argv)
    with_error = False
    if len(argv) == 4:
        reason = argv[3].lower()
        if reason == b"error":
            with_error = True
        elif reason != b"timeout":
            return ErrorReply("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
    target = client.server.clients.get(parse_int(argv[2]))
    # A client held by CLIENT PAUSE is not blocked by its command: it stays held (Redis 7.4
    # aborts on this, later versions answer 0).
    if target is None or target.blocked is None or target in client.server.write_pause.postponed:
        return 0
    if not client.server.blocking.client_unblock(target, with_error):
        return 0
    if with_error and client.last_command is not None:
        # Redis counts a command during which an error reply went out, to any client, as
        # failed: CLIENT UNBLOCK ERROR shows in both commands' failed_calls.
        client.last_command.failed_calls += 1
    return 1


def _on_off(argv: list[bytes]) -> bool | None:
    value = argv[2].lower()
    return True if value == b"on" else False if value == b"off" else None


@command("client|no-evict", 3, "admin noscript loading stale sentinel", group="connection",
         since="7.0.0", summary="Sets the client eviction mode of the connection.",
         acl=("@connection",), arguments=_ON_OFF)
def client_no_evict(client: Client, argv: list[bytes]) -> Any:
    value = _on_off(argv)
    if value is None:
        return SYNTAX_ERROR
    client.no_evict = value
    return OK


@command("client|no-touch", 3, "noscript loading stale", group="connection", since="7.2.0",
         summary="Controls whether commands sent by the client affect the LRU/LFU of accessed keys.",
         acl=("@connection",), arguments=_ON_OFF)
def client_no_touch(client: Client, argv: list[bytes]) -> Any:
    value = _on_off(argv)
    if value is None:
        return SYNTAX_ERROR
    client.no_touch = value
    return OK


@command("client|reply", 3, "noscript loading stale sentinel", group="connection", since="3.2.0",
         summary="Instructs the server whether to reply to commands.", acl=("@connection",),
         arguments=({"name": "action", "type": "oneof",
                     "arguments": ({"name": "on", "type": "pure-token", "token": "ON"},
                                   {"name": "off", "type": "pure-token", "token": "OFF"},
                                   {"name": "skip", "type": "pure-token", "token": "SKIP"})},))
def client_reply(client: Client, argv: list[bytes]) -> Any:
    mode = argv[2].lower()
    if mode == b"on":
        # Cleared before the reply is sent: ON is answered even when it is the skipped command.
        client.reply_flags &= ~(REPLY_SKIP | REPLY_OFF)
        return OK
    if mode == b"off":
        client.reply_flags |= REPLY_OFF
        return NO_REPLY
    if mode == b"skip":
        if not client.reply_flags & REPLY_OFF:
            client.reply_flags |= REPLY_SKIP_NEXT
        return NO_REPLY
    return SYNTAX_ERROR


_HELP = [
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "    * ID <client-id>",
    "      Kill connections by client id.",
    "    * MAXAGE <maxage>",
    "      Kill connections older than the specified age.",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "SETINFO <option> <value>",
    "    Set client meta attr. Options are:",
    "    * LIB-NAME: the client lib name.",
    "    * LIB-VER: the client lib version.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "NO-TOUCH (ON|OFF)",
    "    Will not touch LRU/LFU stats when this mode is on.",
]


@command("client|help", 2, "loading stale sentinel", group="connection", since="5.0.0",
         summary="Returns helpful text about the different subcommands.", acl=("@connection",))
def client_help(client: Client, argv: list[bytes]) -> Any:
    return help_reply("CLIENT", _HELP)
