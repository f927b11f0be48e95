"""ACL users and selectors: the rules of ACL SETUSER and their description (ACL LIST).

The rule language, its error texts and the description's order are Redis's (src/acl.c). A user
holds flags, password hashes (SHA-256, hex) and selectors; the first selector is the root one
(the rules given outside parentheses). A selector allows commands (by name, with the subcommands
of a container, or a first argument of a command without subcommands), key patterns with read
and/or write access, and channel patterns.

The ordered command rules of a selector are kept as given (normalised as Redis does: a later rule
for the same command or category replaces the earlier one), since the description reproduces
them rather than the resulting set of commands.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
from collections.abc import Iterator

from server.command_table import COMMANDS, Command

# Key permissions of a key pattern (ACL_READ_PERMISSION, ACL_WRITE_PERMISSION).
READ = 1
WRITE = 2
READ_WRITE = READ | WRITE

# The categories in Redis's order (ACL CAT, COMMAND INFO).
CATEGORIES: tuple[str, ...] = (
    "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
    "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous",
    "connection", "transaction", "scripting")
_CATEGORY_SET = frozenset(CATEGORIES)

# ACLSetUserStringError's texts, by the errno Redis sets.
ENOENT = "Unknown command or category name in ACL"
EINVAL = "Syntax error"
EEXIST = ("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does "
          "not have any effect. Try 'resetkeys' to start with an empty list of patterns")
EISDIR = ("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and "
          "does not have any effect. Try 'resetchannels' to start with an empty list of channels")
ENODEV = "The password you are trying to remove from the user does not exist"
EBADMSG = ("The password hash must be exactly 64 characters and contain only lowercase "
           "hexadecimal characters")
EALREADY = "Duplicate user found. A user can only be defined once in config files"
ECHILD = "Allowing first-arg of a subcommand is not supported"


class RuleError(Exception):
    """A rule that does not apply; `message` is Redis's explanation, `unknown` tells a missing
    command or category (which a config file's `user` line may name before it exists)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.unknown = message == ENOENT


def hash_password(password: bytes) -> bytes:
    return hashlib.sha256(password).hexdigest().encode()


def valid_hash(text: bytes) -> bool:
    return len(text) == 64 and all(48 <= c <= 57 or 97 <= c <= 102 for c in text)


def has_spaces(text: bytes) -> bool:
    """ACLStringHasSpaces: C isspace() or a NUL byte."""
    return any(c in b" \t\n\v\f\r\x00" for c in text)


# --- the command table as the ACL sees it ----------------------------------------------------

_categories: dict[str, frozenset[str]] = {}


def command_categories(cmd: Command) -> frozenset[str]:
    """The command's categories, without their '@'."""
    cats = _categories.get(cmd.name)
    if cats is None:
        cats = frozenset(c.lstrip("@").lower() for c in cmd.acl_categories) & _CATEGORY_SET
        _categories[cmd.name] = cats
    return cats


def all_commands() -> Iterator[Command]:
    """Every command and subcommand."""
    for cmd in COMMANDS.values():
        yield cmd
        yield from cmd.subcommands.values()


def lookup_command(name: bytes) -> Command | None:
    """ACLLookupCommand: "get" or "config|get", any case; None for anything else."""
    parts = name.lower().split(b"|")
    cmd = COMMANDS.get(parts[0])
    if cmd is None or len(parts) == 1:
        return cmd
    if len(parts) == 2 and cmd.subcommands:
        return cmd.subcommands.get(parts[1])
    return None


# --- selectors -------------------------------------------------------------------------------


class Selector:
    __slots__ = ("root", "allkeys", "allchannels", "allcommands", "future", "allowed",
                 "firstargs", "patterns", "channels", "rules")

    def __init__(self, root: bool, allchannels: bool) -> None:
        self.root = root
        self.allkeys = False
        self.allchannels = allchannels  # acl-pubsub-default
        self.allcommands = False
        # Redis's reserved command bit: set by +@all only, so that the description starts with
        # +@all (later commands allowed) or -@all.
        self.future = False
        self.allowed: set[str] = set()
        self.firstargs: dict[str, list[bytes]] = {}
        self.patterns: list[list] = []  # [flags, pattern]
        self.channels: list[bytes] = []
        self.rules: list[bytes] = []  # "+get", "-@write", ... as Redis keeps them

    def clone(self) -> Selector:
        other = copy.copy(self)
        other.allowed = set(self.allowed)
        other.firstargs = {k: list(v) for k, v in self.firstargs.items()}
        other.patterns = [list(p) for p in self.patterns]
        other.channels = list(self.channels)
        other.rules = list(self.rules)
        return other

    # -- command bits --

    def _set_bit(self, cmd: Command, allow: bool) -> None:
        if allow:
            self.allowed.add(cmd.name)
        else:
            self.allowed.discard(cmd.name)
            self.allcommands = False

    def _change_perm(self, cmd: Command, allow: bool) -> None:
        # A container's rule applies to its subcommands too.
        self._set_bit(cmd, allow)
        self.firstargs.pop(cmd.name, None)
        for sub in cmd.subcommands.values():
            self._set_bit(sub, allow)

    def _update_rules(self, rule: bytes, allow: bool) -> None:
        rule = rule.lower()
        prefix = rule + b"|"
        self.rules = [r for r in self.rules if r[1:] != rule and not r[1:].startswith(prefix)]
        self.rules.append((b"+" if allow else b"-") + rule)

    def _set_category(self, category: bytes, allow: bool) -> None:
        name = category[1:].decode("latin-1").lower()
        if name not in _CATEGORY_SET:
            raise RuleError(ENOENT)
        self._update_rules(category, allow)
        for cmd in all_commands():
            if name in command_categories(cmd):
                self._change_perm(cmd, allow)

    def set_all_commands(self, allow: bool) -> None:
        self.allowed = {c.name for c in all_commands()} if allow else set()
        self.allcommands = allow
        self.future = allow
        self.rules = []
        self.firstargs = {}

    def apply(self, op: bytes) -> None:
        """ACLSetSelector: one rule of a selector; RuleError with Redis's text otherwise."""
        low = op.lower()
        if low in (b"allkeys", b"~*"):
            self.allkeys = True
            self.patterns = []
        elif low == b"resetkeys":
            self.allkeys = False
            self.patterns = []
        elif low in (b"allchannels", b"&*"):
            self.allchannels = True
            self.channels = []
        elif low == b"resetchannels":
            self.allchannels = False
            self.channels = []
        elif low in (b"allcommands", b"+@all"):
            self.set_all_commands(True)
        elif low in (b"nocommands", b"-@all"):
            self.set_all_commands(False)
        elif op[:1] in (b"~", b"%"):
            self._add_key_pattern(op)
        elif op[:1] == b"&":
            if self.allchannels:
                raise RuleError(EISDIR)
            if has_spaces(op[1:]):
                raise RuleError(EINVAL)
            if op[1:] not in self.channels:
                self.channels.append(op[1:])
            self.allchannels = False
        elif op[:1] == b"+" and op[1:2] != b"@":
            self._allow_command(op)
        elif op[:1] == b"-" and op[1:2] != b"@":
            cmd = lookup_command(op[1:])
            if cmd is None:
                raise RuleError(ENOENT)
            self._change_perm(cmd, False)
            self._update_rules(cmd.name.encode(), False)
        elif op[:1] in (b"+", b"-") and op[1:2] == b"@":
            self._set_category(op[1:], op[:1] == b"+")
        else:
            raise RuleError(EINVAL)

    def _add_key_pattern(self, op: bytes) -> None:
        if self.allkeys:
            raise RuleError(EEXIST)
        flags = 0
        offset = 1
        if op[:1] == b"%":
            while offset < len(op):
                c = op[offset:offset + 1]
                if c in (b"R", b"r") and not flags & READ:
                    flags |= READ
                elif c in (b"W", b"w") and not flags & WRITE:
                    flags |= WRITE
                elif c == b"~" and flags:
                    offset += 1
                    break
                else:
                    raise RuleError(EINVAL)
                offset += 1
        else:
            flags = READ_WRITE
        pattern = op[offset:]
        if has_spaces(pattern):
            raise RuleError(EINVAL)
        for existing in self.patterns:
            if existing[1] == pattern:
                existing[0] |= flags
                break
        else:
            self.patterns.append([flags, pattern])
        self.allkeys = False

    def _allow_command(self, op: bytes) -> None:
        name = op[1:]
        if b"|" not in name:
            cmd = lookup_command(name)
            if cmd is None:
                raise RuleError(ENOENT)
            self._change_perm(cmd, True)
            self._update_rules(cmd.name.encode(), True)
            return
        base, _, sub = name.rpartition(b"|")
        cmd = lookup_command(base)
        if cmd is None:
            raise RuleError(ENOENT)
        if cmd.parent is not None:
            raise RuleError(ECHILD)
        if not sub:
            raise RuleError(EINVAL)
        if cmd.subcommands:
            subcmd = lookup_command(name)
            if subcmd is None:
                raise RuleError(ENOENT)
            self._change_perm(subcmd, True)
        else:
            # A first argument of a command without subcommands (SELECT|0): deprecated in Redis,
            # still accepted.
            allowed = self.firstargs.setdefault(cmd.name, [])
            if sub.lower() not in (a.lower() for a in allowed):
                allowed.append(sub)
        self._update_rules(name, True)

    # -- description --

    def command_rules(self) -> bytes:
        """ACLDescribeSelectorCommandRules: +@all or -@all, then the rules in order."""
        head = b"+@all" if self.future else b"-@all"
        return head + b" " + b" ".join(self.rules) if self.rules else head

    def key_rules(self) -> list[bytes]:
        return [pattern_string(flags, pattern) for flags, pattern in self.patterns]

    def describe(self) -> bytes:
        """ACLDescribeSelector."""
        out = b"~* " if self.allkeys else b"".join(p + b" " for p in self.key_rules())
        if self.allchannels:
            out += b"&* "
        else:
            out += b"resetchannels " + b"".join(b"&" + c + b" " for c in self.channels)
        return out + self.command_rules()


def pattern_string(flags: int, pattern: bytes) -> bytes:
    prefix = b"~" if flags == READ_WRITE else b"%R~" if flags == READ else b"%W~"
    return prefix + pattern


# --- users -----------------------------------------------------------------------------------


class User:
    __slots__ = ("name", "enabled", "nopass", "skip_sanitize", "passwords", "selectors",
                 "_description")

    def __init__(self, name: bytes, allchannels: bool = False) -> None:
        self.name = name
        self.enabled = False
        self.nopass = False
        self.skip_sanitize = False
        self.passwords: list[bytes] = []  # SHA-256 hex digests
        self.selectors: list[Selector] = [Selector(True, allchannels)]
        self._description: bytes | None = None

    @property
    def root(self) -> Selector:
        return self.selectors[0]

    @property
    def unrestricted(self) -> bool:
        """Whether every command, key and channel is allowed: dispatch then checks nothing."""
        root = self.selectors[0]
        return root.allcommands and root.allkeys and root.allchannels

    def copy_from(self, other: User) -> None:
        """ACLCopyUser: take other's rules (the name stays)."""
        self.enabled = other.enabled
        self.nopass = other.nopass
        self.skip_sanitize = other.skip_sanitize
        self.passwords = list(other.passwords)
        self.selectors = [s.clone() for s in other.selectors]
        self._description = other._description

    def clone(self) -> User:
        other = User(self.name)
        other.copy_from(self)
        return other

    def check_password(self, password: bytes) -> bool:
        """ACLCheckUserCredentials (for an existing user)."""
        if not self.enabled:
            return False
        if self.nopass:
            return True
        hashed = hash_password(password)
        ok = False
        for stored in self.passwords:
            # Compared in constant time whatever matches, as Redis does.
            ok |= hmac.compare_digest(hashed, stored)
        return ok

    def apply(self, op: bytes, acl_pubsub_allchannels: bool) -> None:
        """ACLSetUser: one rule; RuleError with Redis's explanation otherwise."""
        self._description = None
        if not op:
            return
        low = op.lower()
        first = op[:1]
        if low == b"on":
            self.enabled = True
        elif low == b"off":
            self.enabled = False
        elif low == b"skip-sanitize-payload":
            self.skip_sanitize = True
        elif low == b"sanitize-payload":
            self.skip_sanitize = False
        elif low == b"nopass":
            self.nopass = True
            self.passwords = []
        elif low == b"resetpass":
            self.nopass = False
            self.passwords = []
        elif first in (b">", b"#"):
            digest = _digest(op, first == b">")
            if digest not in self.passwords:
                self.passwords.append(digest)
            self.nopass = False
        elif first in (b"<", b"!"):
            digest = _digest(op, first == b"<")
            if digest not in self.passwords:
                raise RuleError(ENODEV)
            self.passwords.remove(digest)
        elif first == b"(" and op[-1:] == b")":
            selector = Selector(False, acl_pubsub_allchannels)
            args = split_args(op[1:-1])
            for arg in args or ():
                selector.apply(arg)
            self.selectors.append(selector)
        elif low == b"clearselectors":
            del self.selectors[1:]
        elif low == b"reset":
            self.nopass = False
            self.passwords = []
            root = self.selectors[0]
            root.apply(b"resetkeys")
            root.apply(b"resetchannels")
            if acl_pubsub_allchannels:
                root.apply(b"allchannels")
            self.enabled = False
            self.skip_sanitize = False
            del self.selectors[1:]
            root.apply(b"-@all")
        else:
            self.selectors[0].apply(op)

    def describe(self) -> bytes:
        """ACLDescribeUser: what ACL LIST shows after "user <name> " (kept until a change)."""
        if self._description is not None:
            return self._description
        out = b"on " if self.enabled else b"off "
        if self.nopass:
            out += b"nopass "
        out += b"skip-sanitize-payload " if self.skip_sanitize else b"sanitize-payload "
        out += b"".join(b"#" + p + b" " for p in self.passwords)
        for selector in self.selectors:
            if selector.root:
                out += selector.describe()
            else:
                out += b" (" + selector.describe() + b")"
        self._description = out
        return out

    def flag_names(self) -> list[bytes]:
        flags = [b"on" if self.enabled else b"off"]
        if self.nopass:
            flags.append(b"nopass")
        flags.append(b"skip-sanitize-payload" if self.skip_sanitize else b"sanitize-payload")
        return flags


def _digest(op: bytes, clear: bool) -> bytes:
    """The hash a password rule names: of its clear text (>, <) or given (#, !)."""
    if clear:
        return hash_password(op[1:])
    if not valid_hash(op[1:]):
        raise RuleError(EBADMSG)
    return op[1:]


def split_args(text: bytes) -> list[bytes] | None:
    """sdssplitargs (quotes and escapes as in redis.conf); None for unbalanced quotes."""
    from protocol.parser import split_args as _split
    return _split(text)


def merge_selector_args(args: list[bytes]) -> tuple[list[bytes] | None, int]:
    """ACLMergeSelectorArguments: a selector spread over several arguments becomes one; on an
    unmatched parenthesis, (None, index of the argument that opened it)."""
    merged: list[bytes] = []
    opened = -1
    current = b""
    for i, op in enumerate(args):
        if opened == -1 and op[:1] == b"(" and op[-1:] != b")":
            current = op
            opened = i
            continue
        if opened != -1:
            current += b" " + op
            if op[-1:] == b")":
                opened = -1
                merged.append(current)
            continue
        merged.append(op)
    if opened != -1:
        return None, opened
    return merged, -1


def default_user() -> User:
    """ACLCreateDefaultUser: everything allowed, no password."""
    user = User(b"default")
    for op in (b"+@all", b"~*", b"&*", b"on", b"nopass"):
        user.apply(op, False)
    return user
