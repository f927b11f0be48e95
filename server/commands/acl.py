"""ACL: users, their permissions, the security log and the ACL file (Redis's aclCommand).

The engine is server/acl/; this module parses the subcommands and shapes their replies.
"""

from __future__ import annotations

import secrets
import time
from typing import TYPE_CHECKING, Any

from protocol.numbers import parse_int
from protocol.reply import OK, ErrorReply, SetReply
from server.acl.check import OK as ACL_OK
from server.acl.check import check_command, error_message
from server.acl.registry import NO_ACL_FILE
from server.acl.users import CATEGORIES, Selector, all_commands, command_categories, has_spaces
from server.command_table import command, container
from server.subcommands import help_reply, subcommand_syntax_error

if TYPE_CHECKING:
    from server.connection import Client

container("acl", group="server", since="6.0.0",
          summary="A container for Access List Control commands.", flags="sentinel")

_FLAGS = "admin noscript loading stale sentinel"
_ALL_NODES = ("request_policy:all_nodes", "response_policy:all_succeeded")


def _text(value: bytes) -> str:
    return value.decode("utf-8", "surrogateescape")


@command("acl|setuser", -3, _FLAGS, group="server", since="6.0.0", tips=_ALL_NODES,
         summary="Creates and modifies an ACL user and its rules.",
         complexity="O(N). Where N is the number of rules provided.",
         history=(("6.2.0", "Added Pub/Sub channel patterns."),
                  ("7.0.0", "Added selectors and key based permissions.")),
         arguments=({"name": "username", "type": "string"},
                    {"name": "rule", "type": "string", "optional": True, "multiple": True}))
def acl_setuser(client: Client, argv: list[bytes]) -> Any:
    name = argv[2]
    if has_spaces(name):
        return ErrorReply("ERR Usernames can't contain spaces or null characters")
    error = client.server.acl.set_user(name, argv[3:], client)
    if error is not None:
        # Redis's addReplyErrorSdsSafe: the text on one line.
        return ErrorReply("ERR " + error.replace("\r", " ").replace("\n", " "))
    return OK


@command("acl|deluser", -3, _FLAGS, group="server", since="6.0.0", tips=_ALL_NODES,
         summary="Deletes ACL users, and terminates their connections.",
         complexity="O(1) amortized time considering the typical user.",
         arguments=({"name": "username", "type": "string", "multiple": True},))
def acl_deluser(client: Client, argv: list[bytes]) -> Any:
    if b"default" in argv[2:]:
        return ErrorReply("ERR The 'default' user cannot be removed")
    acl = client.server.acl
    return sum(1 for name in argv[2:] if acl.delete_user(name, client))


def _selector_fields(selector: Selector) -> dict[bytes, Any]:
    keys = b"~*" if selector.allkeys else b" ".join(selector.key_rules())
    channels = b"&*" if selector.allchannels else b" ".join(b"&" + c for c in selector.channels)
    return {b"commands": selector.command_rules(), b"keys": keys, b"channels": channels}


@command("acl|getuser", 3, _FLAGS, group="server", since="6.0.0",
         summary="Lists the ACL rules of a user.",
         complexity="O(N). Where N is the number of password, command and pattern rules that "
         "the user has.",
         history=(("6.2.0", "Added Pub/Sub channel patterns."),
                  ("7.0.0", "Added selectors and changed the format of key and channel patterns "
                   "from a list to their rule representation.")),
         arguments=({"name": "username", "type": "string"},))
def acl_getuser(client: Client, argv: list[bytes]) -> Any:
    user = client.server.acl.users.get(argv[2])
    if user is None:
        return None
    reply: dict[bytes, Any] = {b"flags": SetReply(user.flag_names()),
                               b"passwords": list(user.passwords)}
    reply.update(_selector_fields(user.root))
    reply[b"selectors"] = [_selector_fields(s) for s in user.selectors[1:]]
    return reply


@command("acl|list", 2, _FLAGS, group="server", since="6.0.0",
         summary="Dumps the effective rules in ACL file format.",
         complexity="O(N). Where N is the number of configured users.")
def acl_list(client: Client, argv: list[bytes]) -> Any:
    return [b"user " + u.name + b" " + u.describe() for u in client.server.acl.sorted_users()]


@command("acl|users", 2, _FLAGS, group="server", since="6.0.0", summary="Lists all ACL users.",
         complexity="O(N). Where N is the number of configured users.")
def acl_users(client: Client, argv: list[bytes]) -> Any:
    return [u.name for u in client.server.acl.sorted_users()]


@command("acl|whoami", 2, "noscript loading stale sentinel", group="server", since="6.0.0",
         summary="Returns the authenticated username of the current connection.")
def acl_whoami(client: Client, argv: list[bytes]) -> Any:
    return client.acl_user.name


def _acl_file(client: Client) -> str | None:
    return client.server.config["aclfile"] or None


@command("acl|load", 2, _FLAGS, group="server", since="6.0.0",
         summary="Reloads the rules from the configured ACL file.",
         complexity="O(N). Where N is the number of configured users.")
def acl_load(client: Client, argv: list[bytes]) -> Any:
    filename = _acl_file(client)
    if filename is None:
        return ErrorReply("ERR " + NO_ACL_FILE)
    errors = client.server.acl.load_file(filename, client)
    return OK if errors is None else ErrorReply("ERR " + errors)


@command("acl|save", 2, _FLAGS, group="server", since="6.0.0", tips=_ALL_NODES,
         summary="Saves the effective ACL rules in the configured ACL file.",
         complexity="O(N). Where N is the number of configured users.")
def acl_save(client: Client, argv: list[bytes]) -> Any:
    filename = _acl_file(client)
    if filename is None:
        return ErrorReply("ERR " + NO_ACL_FILE)
    if client.server.acl.save_file(filename):
        return OK
    return ErrorReply("ERR There was an error trying to save the ACLs. Please check the server "
                      "logs for more information")


@command("acl|cat", -2, "noscript loading stale sentinel", group="server", since="6.0.0",
         summary="Lists the ACL categories, or the commands inside a category.",
         complexity="O(1) since the categories and commands are a fixed set.",
         arguments=({"name": "category", "type": "string", "optional": True},))
def acl_cat(client: Client, argv: list[bytes]) -> Any:
    if len(argv) == 2:
        return [c.encode() for c in CATEGORIES]
    if len(argv) > 3:
        return subcommand_syntax_error(argv)
    wanted = _text(argv[2]).lower()
    if wanted not in CATEGORIES:
        return ErrorReply(f"ERR Unknown category '{_text(argv[2])[:128]}'")
    return [c.name.encode() for c in all_commands() if wanted in command_categories(c)]


_GENPASS_MAX_BITS = 4096


@command("acl|genpass", -2, "noscript loading stale sentinel", group="server", since="6.0.0",
         summary="Generates a pseudorandom, secure password that can be used to identify ACL "
         "users.", arguments=({"name": "bits", "type": "integer", "optional": True},))
def acl_genpass(client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 3:
        return subcommand_syntax_error(argv)
    bits = parse_int(argv[2]) if len(argv) == 3 else 256
    if bits <= 0 or bits > _GENPASS_MAX_BITS:
        return ErrorReply("ERR ACL GENPASS argument must be the number of bits for the output "
                          f"password, a positive number up to {_GENPASS_MAX_BITS}")
    chars = (bits + 3) // 4
    return secrets.token_hex((chars + 1) // 2)[:chars].encode()


@command("acl|log", -2, _FLAGS, group="server", since="6.0.0",
         summary="Lists recent security events generated due to ACL rules.",
         complexity="O(N) with N being the number of entries shown.",
         history=(("7.2.0", "Added entry ID, timestamp created, and timestamp last updated."),),
         arguments=({"name": "operation", "type": "oneof", "optional": True, "arguments": (
             {"name": "count", "type": "integer"},
             {"name": "reset", "type": "pure-token", "token": "RESET"})},))
def acl_log(client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 3:
        return subcommand_syntax_error(argv)
    acl_log_ = client.server.acl.log
    count = 10
    if len(argv) == 3:
        if argv[2].lower() == b"reset":
            acl_log_.reset()
            return OK
        count = max(parse_int(argv[2]), 0)
    now = int(time.time() * 1000)
    return [entry.reply(now) for entry in acl_log_.entries[:count]]


@command("acl|dryrun", -4, _FLAGS, group="server", since="7.0.0",
         summary="Simulates the execution of a command by a user, without executing the command.",
         complexity="O(1).",
         arguments=({"name": "username", "type": "string"},
                    {"name": "command", "type": "string"},
                    {"name": "arg", "type": "string", "optional": True, "multiple": True}))
def acl_dryrun(client: Client, argv: list[bytes]) -> Any:
    from server.commands.command_cmd import lookup_argv

    user = client.server.acl.users.get(argv[2])
    if user is None:
        return ErrorReply(f"ERR User '{_text(argv[2])}' not found")
    target = argv[3:]
    cmd = lookup_argv(target)
    if cmd is None:
        return ErrorReply(f"ERR Command '{_text(argv[3])}' not found")
    n = len(target)
    if (cmd.arity > 0 and cmd.arity != n) or n < -cmd.arity:
        return ErrorReply(f"ERR wrong number of arguments for '{cmd.name}' command")
    result, index = check_command(user, cmd, target)
    if result != ACL_OK:
        return error_message(result, user, cmd, target[index], True).encode("utf-8", "surrogateescape")
    return OK


_HELP = [
    "CAT [<category>]",
    "    List all commands that belong to <category>, or all command categories",
    "    when no category is specified.",
    "DELUSER <username> [<username> ...]",
    "    Delete a list of users.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Returns whether the user can execute the given command without executing the command.",
    "GETUSER <username>",
    "    Get the user's details.",
    "GENPASS [<bits>]",
    "    Generate a secure 256-bit user password. The optional `bits` argument can",
    "    be used to specify a different size.",
    "LIST",
    "    Show users details in config file format.",
    "LOAD",
    "    Reload users from the ACL file.",
    "LOG [<count> | RESET]",
    "    Show the ACL log entries.",
    "SAVE",
    "    Save the current config to the ACL file.",
    "SETUSER <username> <attribute> [<attribute> ...]",
    "    Create or modify a user with the specified attributes.",
    "USERS",
    "    List all the registered usernames.",
    "WHOAMI",
    "    Return the current connection username.",
]


@command("acl|help", 2, "loading stale sentinel", group="server", since="6.0.0",
         summary="Returns helpful text about the different subcommands.")
def acl_help(client: Client, argv: list[bytes]) -> Any:
    return help_reply("ACL", _HELP)
