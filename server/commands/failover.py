"""FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds]: a master hands its role to
one of its replicas without losing a write (server/replication/failover.py). Checks, their
order and texts are Redis 7.4's failoverCommand; REPLICAOF and SYNC are refused meanwhile."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.numbers import string2ll
from protocol.reply import OK, ErrorReply
from server.command_table import command, on_server_start
from server.replication.failover import NO_FAILOVER
from server.replication.links import ONLINE

if TYPE_CHECKING:
    from server.connection import Client

SYNTAX = ErrorReply("ERR syntax error")
NOT_INTEGER = ErrorReply("ERR value is not an integer or out of range")


@command("failover", -1, "admin noscript stale", group="server", since="6.2.0",
         summary="Starts a coordinated failover from a server to one of its replicas.",
         arguments=(
             {"name": "target", "type": "block", "token": "TO", "optional": True, "arguments": (
                 {"name": "host", "type": "string"},
                 {"name": "port", "type": "integer"},
                 {"name": "force", "type": "pure-token", "token": "FORCE", "optional": True})},
             {"name": "abort", "type": "pure-token", "token": "ABORT", "optional": True},
             {"name": "milliseconds", "type": "integer", "token": "TIMEOUT", "optional": True}))
def failover(client: Client, argv: list[bytes]) -> Any:
    server = client.server
    state = server.failover
    if len(argv) == 2 and argv[1].lower() == b"abort":
        if state.state == NO_FAILOVER:
            return ErrorReply("ERR No failover in progress.")
        state.abort("Failover manually aborted")
        return OK
    timeout_ms = 0
    force = False
    port = 0
    host: str | None = None
    j = 1
    while j < len(argv):
        option = argv[j].lower()
        if option == b"timeout" and j + 1 < len(argv) and timeout_ms == 0:
            value = string2ll(argv[j + 1])
            if value is None:
                return NOT_INTEGER
            if value <= 0:
                return ErrorReply("ERR FAILOVER timeout must be greater than 0")
            timeout_ms = value
            j += 1
        elif option == b"to" and j + 2 < len(argv) and host is None:
            value = string2ll(argv[j + 2])
            if value is None:
                return NOT_INTEGER
            port = value
            host = argv[j + 1].decode("utf-8", "replace")
            j += 2
        elif option == b"force" and not force:
            force = True
        else:
            return SYNTAX
        j += 1
    if state.state != NO_FAILOVER:
        return ErrorReply("ERR FAILOVER already in progress.")
    if not server.is_master():
        return ErrorReply("ERR FAILOVER is not valid when server is a replica.")
    if not server.replication.replicas:
        return ErrorReply("ERR FAILOVER requires connected replicas.")
    if force and (not timeout_ms or host is None):
        return ErrorReply("ERR FAILOVER with force option requires both a timeout and target "
                          "HOST and IP.")
    if host is not None:
        replica = state.find_replica(host, port)
        if replica is None:
            return ErrorReply("ERR FAILOVER target HOST and PORT is not a replica.")
        if replica.state != ONLINE:
            return ErrorReply("ERR FAILOVER target replica is not online.")
    state.start(host, port, timeout_ms, force)
    return OK


@on_server_start
def _hooks(server: Any) -> None:
    from server.commands import replication_replica
    from server.server import SYNC_REFUSAL_HOOKS

    if _failing_over not in SYNC_REFUSAL_HOOKS:
        # Before the replica side's own refusal, as Redis checks them.
        SYNC_REFUSAL_HOOKS.insert(0, _failing_over)
    if _replicaof_refusal not in replication_replica.REPLICAOF_REFUSALS:
        replication_replica.REPLICAOF_REFUSALS.append(_replicaof_refusal)


def _failing_over(server: Any) -> str | None:
    if server.failover.state != NO_FAILOVER:
        return "NOMASTERLINK Can't SYNC while failing over"
    return None


def _replicaof_refusal(server: Any) -> ErrorReply | None:
    if server.failover.state != NO_FAILOVER:
        return ErrorReply("ERR REPLICAOF not allowed while failing over.")
    return None
