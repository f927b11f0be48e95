"""REPLICAOF / SLAVEOF and ROLE: making this server a replica, promoting it, reporting its role.

The link itself is server/replication/replica.py; replies and log lines are Redis's
(replication.c replicaofCommand, roleCommand).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from protocol.numbers import string2ll
from protocol.reply import OK, ErrorReply, SimpleString
from server.command_table import command, on_server_start
from server.log import NOTICE
from server.replication.replica import CONNECTED

if TYPE_CHECKING:
    from server.connection import Client

log = logging.getLogger("rivulet")

ALREADY_CONNECTED = SimpleString(b"OK Already connected to specified master")
INVALID_PORT = ErrorReply("ERR Invalid master port")

# (server) -> why REPLICAOF is refused now (a FAILOVER under way), or None.
REPLICAOF_REFUSALS: list = []

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
    for refusal in REPLICAOF_REFUSALS:
        refused = refusal(client.server)
        if refused is not None:
            return refused
    link = client.server.master_link
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


@on_server_start
def _hooks(server: Any) -> None:
    """The replica's parts of INFO replication, ROLE and SYNC (server/replication/info.py,
    server/server.py)."""
    from server.replication.info import REPLICA_FIELDS, ROLE_REPLY
    from server.server import SYNC_REFUSAL_HOOKS

    if _fields not in REPLICA_FIELDS:
        REPLICA_FIELDS.append(_fields)
        ROLE_REPLY.append(_role)
        SYNC_REFUSAL_HOOKS.append(_sync_refusal)


def _fields(server: Any) -> list[tuple[str, object]] | None:
    link = server.master_link
    return link.info_fields() if link.host is not None else None


def _role(server: Any) -> Any:
    link = server.master_link
    return link.role_reply() if link.host is not None else None


def _sync_refusal(server: Any) -> str | None:
    # A replica of ours must wait until we have our master's data (Redis's syncCommand).
    link = server.master_link
    if link.host is not None and link.state != CONNECTED:
        return "NOMASTERLINK Can't SYNC while not connected with my master"
    return None
