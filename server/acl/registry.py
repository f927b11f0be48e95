"""The server's users: ACL SETUSER / DELUSER, authentication, the ACL file and `user` lines of
the config file, and what a change of a user means for its connections (Redis's acl.c).

The default user is one object for the server's life (ACL LOAD copies the file's default user
into it), as in Redis, so that connections authenticated as "default" keep following it.
"""

from __future__ import annotations

import logging
import os
import time
from typing import TYPE_CHECKING, Any

from server.acl.log import AclLog
from server.acl.users import (
    EALREADY,
    RuleError,
    User,
    default_user,
    has_spaces,
    merge_selector_args,
)

if TYPE_CHECKING:
    from server.connection import Client

log = logging.getLogger("rivulet")

NO_ACL_FILE = (
    "This Redis instance is not configured to use an ACL file. You may want to specify users via "
    "the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis "
    "configuration file set) in order to store users in the Redis configuration.")
BOTH_FILE_AND_USERS = (
    "Configuring Redis with users defined in redis.conf and at the same setting an ACL file path "
    "is invalid. This setup is very likely to lead to configuration errors and security holes, "
    "please define either an ACL file or declare users directly in your redis.conf, but not both.")


class AclStartupError(Exception):
    """Users that cannot be loaded at start-up: the server logs the text and exits."""


class Acl:
    def __init__(self, server: Any) -> None:
        self.server = server
        self.default = default_user()
        self.users: dict[bytes, User] = {b"default": self.default}
        self.log = AclLog()
        config = server.config
        requirepass = config["requirepass"]
        if requirepass:
            self.set_default_password(requirepass.encode("utf-8", "surrogateescape"))
        config.on_change("requirepass", self._requirepass_changed)

    # --- settings --------------------------------------------------------------------------

    @property
    def pubsub_allchannels(self) -> bool:
        return self.server.config["acl-pubsub-default"] == "allchannels"

    def _requirepass_changed(self, value: str) -> None:
        self.set_default_password(value.encode("utf-8", "surrogateescape") if value else None)

    def set_default_password(self, password: bytes | None) -> None:
        """ACLUpdateDefaultUserPassword: requirepass is the default user's one password."""
        allchannels = self.pubsub_allchannels
        self.default.apply(b"resetpass", allchannels)
        if password:
            self.default.apply(b">" + password, allchannels)
        else:
            self.default.apply(b"nopass", allchannels)
        self.user_changed(self.default)

    @property
    def default_open(self) -> bool:
        """No authentication needed: the default user is on and has nopass."""
        return self.default.nopass and self.default.enabled

    # --- users -----------------------------------------------------------------------------

    def sorted_users(self) -> list[User]:
        return [self.users[name] for name in sorted(self.users)]

    def set_user(self, name: bytes, args: list[bytes], requester: Client | None = None) -> str | None:
        """ACLStringSetUser: all of args apply, or none; Redis's error text otherwise."""
        merged, opened = merge_selector_args(args)
        if merged is None:
            return (f"Unmatched parenthesis in acl selector starting at "
                    f"'{args[opened].decode('utf-8', 'surrogateescape')}'.")
        existing = self.users.get(name)
        staged = existing.clone() if existing is not None else User(name, self.pubsub_allchannels)
        allchannels = self.pubsub_allchannels
        for op in merged:
            try:
                staged.apply(op, allchannels)
            except RuleError as exc:
                return (f"Error in ACL SETUSER modifier '{op.decode('utf-8', 'surrogateescape')}': "
                        f"{exc.message}")
        if existing is None:
            self.users[name] = staged
            return None
        self._close_revoked_subscribers(existing, staged, requester)
        existing.copy_from(staged)
        self.user_changed(existing)
        return None

    def delete_user(self, name: bytes, requester: Client | None = None) -> bool:
        user = self.users.pop(name, None)
        if user is None:
            return False
        for client in self._clients_of(user):
            self.close_client(client, requester)
        return True

    def _clients_of(self, user: User) -> list[Client]:
        return [c for c in list(self.server.clients.values()) if c.acl_user is user]

    def close_client(self, client: Client, requester: Client | None) -> None:
        """deauthenticateAndCloseClient: back to the default user, unauthenticated, and closed
        (after the reply of the command it is running, if it is the one asking)."""
        self.attach(client, self.default, authenticated=False)
        client.close_after_reply = True
        if client is not requester:
            client.close()

    def user_changed(self, user: User) -> None:
        """Refresh what dispatch reads of the connections of user (and, for the default user,
        whether connections that never authenticated need to)."""
        limited = not user.unrestricted
        for client in self.server.clients.values():
            if client.acl_user is user:
                client.acl_limited = limited and not client.is_master
            if user is self.default:
                client.set_authenticated(client.auth_flag or self.default_open)

    def attach(self, client: Client, user: User, authenticated: bool) -> None:
        """Authenticate client as user (clientSetDefaultAuth, AUTH, HELLO AUTH, RESET)."""
        client.acl_user = user
        client.acl_limited = not user.unrestricted and not client.is_master
        client.auth_flag = authenticated
        client.set_authenticated(authenticated or self.default_open)

    def authenticate(self, client: Client, username: bytes, password: bytes,
                     argv: list[bytes]) -> bool:
        """ACLAuthenticateUser: on success client is that user; a failure is logged (its
        object is the command's name as sent, AUTH or HELLO)."""
        user = self.users.get(username)
        if user is not None and user.check_password(password):
            self.attach(client, user, authenticated=True)
            return True
        self.log_denial(client, 3, argv[0], username, argv)
        return False

    def log_denial(self, client: Client, reason: int, obj: bytes,
                   username: bytes | None = None,
                   current_argv: list[bytes] | None = None) -> None:
        from server.acl.log import MULTI, TOPLEVEL
        from server.commands.client import client_info_line
        context = MULTI if client.multi is not None or client.in_exec else TOPLEVEL
        name = username if username is not None else client.acl_user.name
        info = client_info_line(client, current_argv).encode("utf-8", "surrogateescape")
        self.log.add(reason, context, obj, name, info, self.server.config["acllog-max-len"])

    def _close_revoked_subscribers(self, old: User, new: User, requester: Client | None) -> None:
        """ACLKillPubsubClientsIfNeeded: close the user's subscribers to channels it may no
        longer access."""
        if any(s.allchannels for s in new.selectors):
            return
        upcoming = [c for s in new.selectors for c in s.channels]
        if all(not s.allchannels and all(c in upcoming for c in s.channels)
               for s in old.selectors):
            return
        for client in self._clients_of(old):
            if _subscribed_elsewhere(client, upcoming):
                self.close_client(client, requester)

    # --- files -----------------------------------------------------------------------------

    def load_config_users(self, lines: list[list[bytes]]) -> None:
        """The `user` lines of the config file, checked when the file was read
        (`declaration_error`): ACLLoadConfiguredUsers, AclStartupError with what Redis logs (a
        command or category unknown, a name with spaces)."""
        for line in lines:
            name = line[0]
            if has_spaces(name):
                raise AclStartupError("Spaces not allowed in ACL usernames")
            merged, _opened = merge_selector_args(line[1:])
            user = self.users.get(name)
            if user is None:
                user = User(name, self.pubsub_allchannels)
                self.users[name] = user
            else:
                user.apply(b"reset", self.pubsub_allchannels)
            for op in merged or ():
                try:
                    user.apply(op, self.pubsub_allchannels)
                except RuleError as exc:
                    raise AclStartupError(
                        f"Error loading ACL rule '{op.decode('utf-8', 'surrogateescape')}' for the user "
                        f"named '{name.decode('utf-8', 'surrogateescape')}': {exc.message}") from None
            if not user.enabled:
                log.info("The user '%s' is disabled (there is no 'on' modifier in the user "
                         "description). Make sure this is not a configuration error.",
                         name.decode("utf-8", "surrogateescape"))
        self.user_changed(self.default)

    def load_file(self, filename: str, requester: Client | None = None) -> str | None:
        """ACLLoadFromFile: every user of the file, or nothing and Redis's error text."""
        try:
            with open(filename, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            return f"Error loading ACLs, opening file '{filename}': {exc.strerror}"
        errors = ""
        users: dict[bytes, User] = {}
        allchannels = self.pubsub_allchannels
        for number, raw in enumerate(data.split(b"\n"), 1):
            line = raw.strip(b" \t\r\n")
            if not line:
                continue
            # Split at each space, as Redis's sdssplitlen: two spaces make an empty word (an
            # empty user name, or an empty rule, which does nothing).
            argv = line.split(b" ")
            if argv[0] != b"user" or len(argv) < 2:
                errors += (f"{filename}:{number} should start with user keyword followed by the "
                           "username. ")
                continue
            name = argv[1]
            if has_spaces(name):
                errors += (f"'{filename}:{number}: username '{name.decode('utf-8', 'surrogateescape')}' "
                           "contains invalid characters. ")
                continue
            if name in users:
                errors += (f"WARNING: Duplicate user '{name.decode('utf-8', 'surrogateescape')}' found "
                           f"on line {number}. ")
                continue
            user = User(name, allchannels)
            users[name] = user
            merged, _opened = merge_selector_args(argv[2:])
            if merged is None:
                errors += f"{filename}:{number}: Unmatched parenthesis in selector definition."
                merged = []
            syntax_error = False
            for op in merged:
                op = op.strip(b"\t\r\n")
                try:
                    user.apply(op, allchannels)
                except RuleError as exc:
                    text = op.decode("utf-8", "surrogateescape")
                    if exc.unknown:
                        errors += (f"{filename}:{number}: Error in applying operation '{text}': "
                                   f"{exc.message}. ")
                    elif not syntax_error:
                        errors += f"{filename}:{number}: {exc.message}. "
                        syntax_error = True
        if errors:
            return (errors + "WARNING: ACL errors detected, no change to the previously active "
                    "ACL rules was performed")
        new_default = users.pop(b"default", None) or default_user()
        self.default.copy_from(new_default)
        users[b"default"] = self.default
        self.users = users
        # Connections follow their user by name; a user gone (or no longer allowed on a channel
        # it is subscribed to) closes them.
        for client in list(self.server.clients.values()):
            if client.is_master:
                continue
            old = client.acl_user
            new = users.get(old.name)
            if new is None:
                self.close_client(client, requester)
                continue
            if new is not old and client.subs is not None and not any(
                    s.allchannels for s in new.selectors) and _subscribed_elsewhere(
                    client, [c for s in new.selectors for c in s.channels]):
                self.close_client(client, requester)
                continue
            client.acl_user = new
            client.acl_limited = not new.unrestricted
        self.user_changed(self.default)
        return None

    def save_file(self, filename: str) -> bool:
        """ACLSaveToFile: written whole to a temporary file, synced, renamed over the old."""
        text = b"".join(b"user " + u.name + b" " + u.describe() + b"\n"
                        for u in self.sorted_users())
        tmp = f"{filename}.tmp-{os.getpid()}-{int(1000 * time.time())}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT, 0o644)
            try:
                view = memoryview(text)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.rename(tmp, filename)
            dir_fd = os.open(os.path.dirname(os.path.abspath(filename)), os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError as exc:
            log.warning("Writing ACL file for ACL SAVE: %s", exc.strerror)
            try:
                os.unlink(tmp)
            except OSError:
                pass
            return False
        return True

    def startup(self, config_users: list[list[bytes]]) -> None:
        """ACLLoadUsersAtStartup: the config file's users or the ACL file, never both."""
        aclfile = self.server.config["aclfile"]
        if aclfile and config_users:
            raise AclStartupError(BOTH_FILE_AND_USERS)
        if config_users:
            try:
                self.load_config_users(config_users)
            except AclStartupError as exc:
                log.warning("%s", exc)
                raise AclStartupError("Critical error while loading ACLs. Exiting.") from None
        if aclfile:
            errors = self.load_file(aclfile)
            if errors is not None:
                raise AclStartupError(f"Aborting Redis startup because of ACL errors: {errors}")


def declaration_error(line: list[bytes], seen: set[bytes], allchannels: bool) -> str | None:
    """A config file's `user` line (name, then rules) as Redis checks it while reading the file
    (ACLAppendUserForLoading): None, or the error that stops the server. A rule naming an
    unknown command or category passes here (it fails when the users load). The rules go to
    a scratch user; `seen` collects the names declared so far.

    The quoted word is Redis's: the line's word at the index of the failing rule counted from
    the first rule (`user`, the name, the first rules...), which is what Redis 7.4 prints."""
    words = [b"user", *line]
    name = line[0]
    if name in seen:
        return f"Error in user declaration '{_text(words[1])}': {EALREADY}"
    merged, opened = merge_selector_args(line[1:])
    if merged is None:
        # Redis's text then depends on an errno nothing set: "Wrong format".
        return f"Error in user declaration '{_text(words[opened])}': Wrong format"
    scratch = User(name, allchannels)
    for index, op in enumerate(merged):
        try:
            scratch.apply(op, allchannels)
        except RuleError as exc:
            if not exc.unknown:
                return f"Error in user declaration '{_text(words[index])}': {exc.message}"
    seen.add(name)
    return None


def _text(value: bytes) -> str:
    return value.decode("utf-8", "surrogateescape")


def _subscribed_elsewhere(client: Client, upcoming: list[bytes]) -> bool:
    """ACLShouldKillPubsubClient: whether client is subscribed to a pattern, channel or shard
    channel the channel patterns `upcoming` do not allow."""
    from server.acl.check import channel_allowed
    subs = client.subs
    if subs is None:
        return False
    return (any(not channel_allowed(upcoming, p, True) for p in subs.patterns)
            or any(not channel_allowed(upcoming, c, False) for c in subs.channels)
            or any(not channel_allowed(upcoming, c, False) for c in subs.shard))
