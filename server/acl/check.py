"""Whether a user may run a command with its arguments (Redis's ACLCheckAllUserCommandPerm).

Only users with restrictions get here: dispatch skips the check for a user whose root selector
allows every command, key and channel. Keys come from the command table's key specs, with
Redis's meaning of their flags: ACCESS needs read permission, INSERT / DELETE / UPDATE need write
permission; a key whose spec has none of them (EXISTS, TYPE) needs neither.
"""

from __future__ import annotations

from typing import Final

from server.acl.users import READ, WRITE, Selector, User
from server.command_table import Command
from server.commands.command_cmd import keys_with_flags
from server.glob import glob_match

# ACL_OK and the ACL_DENIED_* codes, with Redis's values: the "most relevant" denial among
# selectors is the highest code, then the last argument.
OK: Final = 0
DENIED_CMD: Final = 1
DENIED_KEY: Final = 2
DENIED_AUTH: Final = 3
DENIED_CHANNEL: Final = 4

# Channel arguments of the commands that name channels: (first index, is a pattern). Only the
# publishing and subscribing ones are checked (the unsubscribing ones are not, as in Redis).
_CHANNELS: Final = {"publish": (1, 1, False), "spublish": (1, 1, False),
                    "subscribe": (1, -1, False), "ssubscribe": (1, -1, False),
                    "psubscribe": (1, -1, True)}


def key_permissions(cmd: Command, argv: list[bytes]) -> list[tuple[int, int]]:
    """(argument index, READ|WRITE needed) of each key argv names for cmd."""
    keys = keys_with_flags(cmd, argv)
    if not keys:
        return []
    out = []
    for index, flags in keys:
        if "not_key" in flags:
            continue
        need = 0
        if "access" in flags:
            need |= READ
        if "insert" in flags or "delete" in flags or "update" in flags:
            need |= WRITE
        if "variable_flags" in flags:
            need = _variable_flags(cmd.name, argv)
        out.append((index, need))
    return out


def _variable_flags(name: str, argv: list[bytes]) -> int:
    # What Redis's setGetKeys / bitfieldGetKeys say for these arguments.
    if name == "set":
        return READ | WRITE if any(a.lower() == b"get" for a in argv[3:]) else WRITE
    if name == "bitfield":
        i = 2
        while i < len(argv):
            arg = argv[i].lower()
            left = len(argv) - i - 1
            if arg == b"get" and left >= 2:
                i += 2
            elif arg in (b"set", b"incrby") and left >= 3:
                return READ | WRITE
            elif arg == b"overflow" and left >= 1:
                i += 1
            i += 1
        return READ
    return READ | WRITE


def _key_allowed(selector: Selector, key: bytes, need: int) -> bool:
    if selector.allkeys:
        return True
    for flags, pattern in selector.patterns:
        if flags & need == need and glob_match(pattern, key):
            return True
    return False


def channel_allowed(channels: list[bytes], channel: bytes, is_pattern: bool) -> bool:
    """ACLCheckChannelAgainstList: a channel matches the patterns; a PSUBSCRIBE pattern only
    an identical pattern."""
    for pattern in channels:
        if (pattern == channel) if is_pattern else glob_match(pattern, channel):
            return True
    return False


def _check_selector(selector: Selector, cmd: Command, argv: list[bytes],
                    keys: list[list[tuple[int, int]]]) -> tuple[int, int]:
    if not selector.allcommands and not cmd.no_auth and cmd.name not in selector.allowed:
        allowed = selector.firstargs.get(cmd.name)
        index = 2 if cmd.parent is not None else 1
        if not allowed or len(argv) <= index or argv[index].lower() not in (
                a.lower() for a in allowed):
            return DENIED_CMD, 0
    if not selector.allkeys and (cmd.first_key > 0 or cmd.key_finder is not None
                                 or cmd.key_specs):
        if not keys:
            keys.append(key_permissions(cmd, argv))
        for index, need in keys[0]:
            if not _key_allowed(selector, argv[index], need):
                return DENIED_KEY, index
    channel_args = _CHANNELS.get(cmd.name)
    if not selector.allchannels and channel_args is not None:
        first, count, is_pattern = channel_args
        last = len(argv) if count < 0 else min(len(argv), first + count)
        for index in range(first, last):
            if not channel_allowed(selector.channels, argv[index], is_pattern):
                return DENIED_CHANNEL, index
    return OK, 0


def check_command(user: User, cmd: Command, argv: list[bytes]) -> tuple[int, int]:
    """(OK or the denial, index of the denied key or channel): the first selector that allows
    the command wins; otherwise the most relevant denial, as Redis picks it."""
    relevant = DENIED_CMD
    last_index = 0
    keys: list[list[tuple[int, int]]] = []  # found once, for every selector
    for selector in user.selectors:
        result, index = _check_selector(selector, cmd, argv, keys)
        if result == OK:
            return OK, 0
        if result > relevant or (result == relevant and index > last_index):
            relevant = result
            last_index = index
    return relevant, last_index


def channel_permitted(user: User, channel: bytes, is_pattern: bool) -> bool:
    """ACLUserCheckChannelPerm."""
    for selector in user.selectors:
        if selector.allchannels or channel_allowed(selector.channels, channel, is_pattern):
            return True
    return False


def error_message(result: int, user: User, cmd: Command, value: bytes, verbose: bool) -> str:
    """getAclErrorMessage: the text after NOPERM (verbose: ACL DRYRUN's)."""
    name = user.name.decode("utf-8", "surrogateescape")
    if result == DENIED_CMD:
        return f"User {name} has no permissions to run the '{cmd.name}' command"
    what = "key" if result == DENIED_KEY else "channel"
    if verbose:
        return (f"User {name} has no permissions to access the "
                f"'{value.decode('utf-8', 'surrogateescape')}' {what}")
    return f"No permissions to access a {what}"
