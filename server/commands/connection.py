"""Connection commands: PING, ECHO, QUIT, SELECT, RESET, HELLO, AUTH."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.numbers import parse_int
from protocol.reply import OK, PONG, ErrorReply, SimpleString
from server.command_table import command
from server.connection import REPLY_SKIP
from server.version import REDIS_VERSION

if TYPE_CHECKING:
    from server.connection import Client

WRONGPASS = ErrorReply("WRONGPASS invalid username-password pair or user is disabled.")


@command("ping", -1, "fast", group="connection", since="1.0.0",
         summary="Returns the server's liveliness response.")
def ping(client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 2:
        return ErrorReply("ERR wrong number of arguments for 'ping' command")
    subs = client.subs
    if subs is not None and not client.resp3 and subs.active():
        # The only reply a RESP2 subscriber can tell from a message (pubsub.c pingCommand).
        return [b"pong", argv[1] if len(argv) == 2 else b""]
    return argv[1] if len(argv) == 2 else PONG


@command("echo", 2, "fast", group="connection", since="1.0.0", summary="Returns the given string.")
def echo(client: Client, argv: list[bytes]) -> Any:
    return argv[1]


@command("quit", -1, "allow_busy no_auth fast loading stale", group="connection", since="1.0.0",
         summary="Closes the connection.")
def quit_(client: Client, argv: list[bytes]) -> Any:
    client.close_after_reply = True
    return OK


@command("select", 2, "loading stale fast", group="connection", since="1.0.0",
         summary="Changes the selected database.")
def select(client: Client, argv: list[bytes]) -> Any:
    index = parse_int(argv[1])
    if not 0 <= index < len(client.server.keyspace.dbs):
        return ErrorReply("ERR DB index is out of range")
    client.select(index)
    return OK


@command("reset", 1, "no_auth allow_busy noscript loading stale fast", group="connection",
         since="6.2.0", summary="Resets the connection.")
def reset(client: Client, argv: list[bytes]) -> Any:
    client.multi = None
    client.multi_error = False
    if client.watched:
        client.server.keyspace.unwatch_all(client)
    client.watch_dirty = False
    client.select(0)
    client.resp3 = False
    client.name = b""
    client.no_evict = False
    client.no_touch = False
    client.reply_flags &= REPLY_SKIP  # CLIENT REPLY OFF / SKIP end; a skip in progress does not
    if client.subs is not None:
        client.server.pubsub.drop_client(client)
    acl = client.server.acl
    acl.attach(client, acl.default, authenticated=acl.default_open)
    return SimpleString(b"RESET")


@command("auth", -2, "noscript loading stale fast no_auth allow_busy", group="connection",
         since="1.0.0", summary="Authenticates the connection.")
def auth(client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 3:
        return ErrorReply("ERR syntax error")
    acl = client.server.acl
    if len(argv) == 2:
        if acl.default.nopass:
            return ErrorReply(
                "ERR AUTH <password> called without any password configured for the default "
                "user. Are you sure your configuration is correct?"
            )
        username, password = b"default", argv[1]
    else:
        username, password = argv[1], argv[2]
    if not acl.authenticate(client, username, password, argv):
        return WRONGPASS
    return OK


_NAME_ERROR = ErrorReply("ERR Client names cannot contain spaces, newlines or special characters.")


def valid_client_name(name: bytes) -> bool:
    return all(33 <= c <= 126 for c in name)


@command("hello", -1, "noscript loading stale fast no_auth allow_busy", group="connection",
         since="6.0.0", summary="Handshakes with the Redis server.")
def hello(client: Client, argv: list[bytes]) -> Any:
    version = 3 if client.resp3 else 2
    i = 1
    if len(argv) >= 2:
        try:
            version = parse_int(argv[1])
        except ErrorReply:
            return ErrorReply("ERR Protocol version is not an integer or out of range")
        if version < 2 or version > 3:
            return ErrorReply("NOPROTO unsupported protocol version")
        i = 2
    username = password = name = None
    while i < len(argv):
        option = argv[i].lower()
        more = len(argv) - i - 1
        if option == b"auth" and more >= 2:
            username, password = argv[i + 1], argv[i + 2]
            i += 3
        elif option == b"setname" and more >= 1:
            name = argv[i + 1]
            if not valid_client_name(name):
                return _NAME_ERROR
            i += 2
        else:
            return ErrorReply(f"ERR Syntax error in HELLO option '{argv[i].decode('utf-8', 'replace')}'")
    if username is not None:
        if not client.server.acl.authenticate(client, username, password or b"", argv):
            return WRONGPASS
    if not client.authenticated:
        return ErrorReply(
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
            "HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and "
            "select the RESP protocol version at the same time"
        )
    if name is not None:
        client.name = name
    client.resp3 = version == 3
    return {
        b"server": b"redis",
        b"version": REDIS_VERSION.encode(),
        b"proto": version,
        b"id": client.id,
        b"mode": b"standalone",
        b"role": b"master",
        b"modules": [],
    }
