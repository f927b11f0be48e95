"""REPLICAOF / SLAVEOF and ROLE: making this server a replica, promoting it, reporting its role.

The link itself is server/replication/replica.py; replies and log lines are Redis's
(replication.c replicaofCommand, roleCommand).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from protocol.numbers import string2ll
from protocol.reply import OK, ErrorReply, SimpleString
from server.command_table import command
from server.log import NOTICE

if TYPE_CHECKING:
    from server.connection import Client

log = logging.getLogger("rivulet")

ALREADY_CONNECTED = SimpleString(b"OK Already connected to specified master")
INVALID_PORT = ErrorReply("ERR Invalid master port")

_ARGS = ({"name": "args", "type": "oneof", "arguments": (
    {"name": "host-port", "type": "block", "arguments": (
        {"name": "host", "type": "string"}, {"name": "port", "type": "integer"})},
    {"name": "no-one", "type": "block", "arguments": (
        {"name": "no", "type": "pure-token", "token": "NO"},
        {"name": "one", "type": "pure-token", "token": "ONE"})})},)


def _who(client: Client) -> str:
    from server.commands.client import client_info_line

    return client_info_line(client)


@command("replicaof", 3, "no_async_loading admin noscript stale", group="server", since="5.0.0",
         summary="Configures a server as replica of another, or promotes it to a master.",
         arguments=_ARGS)
def replicaof(client: Client, argv: list[bytes]) -> Any:
    link = client.server.replica
    host_arg, port_arg = argv[1], argv[2]
    if host_arg.lower() == b"no" and port_arg.lower() == b"one":
        if link.host is not None:
            link.unset_master()
            log.log(NOTICE, "MASTER MODE enabled (user request from '%s')", _who(client))
        return OK
    if getattr(client, "is_replica", False):
        # Its own master changing would flush every replica, itself included.
        return ErrorReply("ERR Command is not valid when client is a replica.")
    port = string2ll(port_arg)
    if port is None or not 0 <= port <= 65535:
        return INVALID_PORT
    host = host_arg.decode("utf-8", "replace")
    if link.host is not None and link.host.lower() == host.lower() and link.port == port:
        log.log(NOTICE, "REPLICAOF would result into synchronization with the master we are "
                "already connected with. No operation performed.")
        return ALREADY_CONNECTED
    link.set_master(host, port)
    log.log(NOTICE, "REPLICAOF %s:%d enabled (user request from '%s')", host, port, _who(client))
    return OK


@command("slaveof", 3, "no_async_loading admin noscript stale", group="server", since="1.0.0",
         summary="Sets a Redis server as a replica of another, or promotes it to being a master.",
         arguments=_ARGS)
def slaveof(client: Client, argv: list[bytes]) -> Any:
    return replicaof(client, argv)


@command("role", 1, "noscript loading stale fast sentinel", group="server", since="2.8.12",
         summary="Returns the replication role.", acl=("@admin", "@dangerous"))
def role(client: Client, argv: list[bytes]) -> Any:
    server = client.server
    link = server.replica
    if link.host is not None:
        return link.role_reply()
    replicas = getattr(server, "role_replicas", None)
    listed = replicas() if replicas is not None else []
    return [b"master", server.replication.master_repl_offset, listed]
