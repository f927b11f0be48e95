"""INFO replication and ROLE.

The master's part is here. A server that follows a master fills its own part through
`REPLICA_FIELDS` (master_host, master_port, master_link_status, ...: printed after `role`) and
`ROLE_REPLY` (ROLE's replica form), both set by the replica side; unset, this server is a master.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from server.server import Server

# (server) -> the fields Redis prints between `role:slave` and `connected_slaves`, or None when
# this server follows no master.
REPLICA_FIELDS: list[Callable[[Server], list[tuple[str, object]] | None]] = []
# (server) -> ROLE's reply for a replica, or None when this server follows no master.
ROLE_REPLY: list[Callable[[Server], Any]] = []


def replication_fields(server: Server) -> list[tuple[str, object]]:
    """Every field of INFO replication, in Redis 7.4's order (genRedisInfoString)."""
    master = server.replication
    replica_part = None
    for hook in REPLICA_FIELDS:
        replica_part = hook(server)
        if replica_part is not None:
            break
    pairs: list[tuple[str, object]] = [("role", "slave" if replica_part is not None else "master")]
    if replica_part is not None:
        pairs += replica_part
    pairs.append(("connected_slaves", len(master.replicas)))
    config = server.config
    if config["min-replicas-to-write"] and config["min-replicas-max-lag"]:
        pairs.append(("min_slaves_good_slaves", master.good_replicas))
    pairs += master.info_replicas()
    pairs.append(("master_failover_state", server.failover.state))
    pairs += master.state.info_fields()
    return pairs


def role_reply(server: Server) -> Any:
    for hook in ROLE_REPLY:
        reply = hook(server)
        if reply is not None:
            return reply
    from server.replication.links import ONLINE

    master = server.replication
    replicas = [[link.ip().encode(), str(link.listening_port).encode(), str(link.ack_off).encode()]
                for link in master.replicas if link.state == ONLINE]
    return [b"master", master.state.master_repl_offset, replicas]
