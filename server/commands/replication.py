"""Replication commands, master side: what a replica sends (REPLCONF, PSYNC, SYNC), WAIT,
WAITAOF and ROLE. Texts and checks are Redis 7.4's (replication.c)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from protocol.numbers import parse_int
from protocol.reply import OK, ErrorReply, Raw
from server.blocking import Block
from server.command_table import command
from server.commands.block_timeout import parse_timeout_ms
from server.log import NOTICE
from server.replication.info import role_reply
from server.replication.wait import WAITAOF_NO_AOF, Waiter

if TYPE_CHECKING:
    from server.connection import Client

log = logging.getLogger("rivulet")

NOT_AN_INTEGER = ErrorReply("ERR value is not an integer or out of range")
# What a command answers when it answers nothing (REPLCONF ACK, a PSYNC whose reply was sent).
NO_REPLY = Raw(b"")
SYNTAX = ErrorReply("ERR syntax error")
_SYNC_FLAGS = "no_async_loading admin no_multi noscript"
NOT_REPLICA_WAIT = ("ERR WAIT cannot be used with replica instances. Please also note that since "
                    "Redis 4.0 if a replica is configured to be writable (which is not the default) "
                    "writes to replicas are just local and are not propagated.")
NOT_REPLICA_WAITAOF = ("ERR WAITAOF cannot be used with replica instances. Please also note that "
                       "writes to replicas are just local and are not propagated.")
# Redis's NET_HOST_STR_LEN.
_HOST_STR_LEN = 256


def _text(arg: bytes) -> str:
    return arg.decode("utf-8", "replace")


@command("replconf", -1, "admin noscript loading stale allow_busy", group="server", since="3.0.0",
         summary="An internal command for configuring the replication stream.",
         doc_flags=("syscmd",))
def replconf(client: Client, argv: list[bytes]) -> Any:
    if len(argv) % 2 == 0:
        return SYNTAX
    master = client.server.replication
    for j in range(1, len(argv), 2):
        option = argv[j].lower()
        value = argv[j + 1]
        if option == b"listening-port":
            master.link_of(client).listening_port = parse_int(value)
        elif option == b"ip-address":
            if len(value) >= _HOST_STR_LEN:
                return ErrorReply("ERR REPLCONF ip-address provided by replica instance is too "
                                  "long: %d bytes" % len(value))
            master.link_of(client).announced_ip = _text(value)
        elif option == b"capa":
            capa = value.lower()
            if capa == b"eof":
                master.link_of(client).capa_eof = True
            elif capa == b"psync2":
                master.link_of(client).capa_psync2 = True
        elif option == b"ack":
            link = client.replica
            if link is None or not link.is_replica:
                return NO_REPLY
            offset = _long_long(value)
            if offset is None:
                return NO_REPLY
            aof_offset = None
            if len(argv) > j + 3 and argv[j + 2].lower() == b"fack":
                aof_offset = _long_long(argv[j + 3])
                if aof_offset is None:
                    return NO_REPLY
            master.ack(link, offset, aof_offset)
            return NO_REPLY
        elif option == b"getack":
            # A replica answers its master's GETACK (the replica side); a master ignores it.
            for hook in GETACK_HOOKS:
                hook(client.server)
            return NO_REPLY
        elif option == b"rdb-only":
            flag = parse_int(value)
            if flag not in (0, 1):
                return ErrorReply("ERR value is out of range, value must between 0 and 1")
            master.link_of(client).rdb_only = flag == 1
        elif option == b"rdb-filter-only":
            filters = value.split()
            for name in filters:
                if name.lower() != b"functions":
                    return ErrorReply("ERR Unsupported rdb-filter-only option: %s" % _text(name))
            # No functions exist here: either way the snapshot carries no data.
            master.link_of(client).rdb_without_data = True
        else:
            return ErrorReply("ERR Unrecognized REPLCONF option: %s" % _text(argv[j]))
    return OK


# Called on REPLCONF GETACK (the replica side answers its master with an ACK).
GETACK_HOOKS: list = []


def _long_long(arg: bytes) -> int | None:
    try:
        return parse_int(arg)
    except ErrorReply:
        return None


def _sync_refusal(client: Client) -> ErrorReply | None:
    link = client.replica
    if link is not None and link.is_replica:
        return None  # already a replica: ignored, as Redis does
    refusal = client.server.sync_refusal()
    if refusal is not None:
        return ErrorReply(refusal)
    if client.out:
        return ErrorReply("ERR SYNC and PSYNC are invalid with pending output")
    if link is not None and link.rdb_without_data and not link.capa_eof:
        return ErrorReply("ERR Filtered replica requires EOF capability")
    return None


@command("psync", -3, _SYNC_FLAGS, group="server", since="2.8.0", complexity="",
         summary="An internal command used in replication.",
         arguments=({"name": "replicationid", "type": "string"},
                    {"name": "offset", "type": "integer"}))
def psync(client: Client, argv: list[bytes]) -> Any:
    link = client.replica
    if link is not None and link.is_replica:
        return NO_REPLY
    if len(argv) > 3 and argv[3].lower() == b"failover":
        refusal = _take_over(client, argv)
        if refusal is not None:
            return refusal
    refusal = _sync_refusal(client)
    if refusal is not None:
        return refusal
    master = client.server.replication
    offset = _long_long(argv[2])
    if offset is None:
        log.log(NOTICE, "Replica %s asks for synchronization",
                master.replica_name(master.link_of(client)))
        log.warning("Replica %s asks for synchronization but with a wrong offset",
                    master.replica_name(master.link_of(client)))
        return NOT_AN_INTEGER
    master.sync(client, _text(argv[1]), offset)
    return NO_REPLY


def _take_over(client: Client, argv: list[bytes]) -> ErrorReply | None:
    """PSYNC <replid> <offset> FAILOVER, sent by our master during its FAILOVER: with our
    history's ID, we become a master, and the PSYNC goes on as the first of our new replica,
    which continues from us (Redis's syncCommand)."""
    replid = _text(argv[1])
    log.log(NOTICE, "Failover request received for replid %s.", replid)
    server = client.server
    link = server.master_link
    if link.host is None:
        return ErrorReply("ERR PSYNC FAILOVER can't be sent to a master.")
    if replid.lower() != server.replication.state.replid.lower():
        return ErrorReply("ERR PSYNC FAILOVER replid must match my replid.")
    link.unset_master()
    from server.commands.client import client_info_line

    log.log(NOTICE, "MASTER MODE enabled (failover request from '%s')", client_info_line(client))
    return None


@command("sync", 1, _SYNC_FLAGS, group="server", since="1.0.0", complexity="",
         summary="An internal command used in replication.")
def sync(client: Client, argv: list[bytes]) -> Any:
    link = client.replica
    if link is not None and link.is_replica:
        return NO_REPLY
    refusal = _sync_refusal(client)
    if refusal is not None:
        return refusal
    client.server.replication.sync(client, None, 0)
    return NO_REPLY


def _may_block(client: Client) -> bool:
    return not (client.in_exec or client.multi is not None)


@command("wait", 3, "blocking", group="generic", since="3.0.0", acl=("@connection",),
         summary="Blocks until the asynchronous replication of all preceding write commands "
                 "sent by the connection is completed.",
         tips=("request_policy:all_shards", "response_policy:agg_min"),
         arguments=({"name": "numreplicas", "type": "integer"},
                    {"name": "timeout", "type": "integer"}))
def wait(client: Client, argv: list[bytes]) -> Any:
    server = client.server
    if not server.is_master():
        return ErrorReply(NOT_REPLICA_WAIT)
    numreplicas = parse_int(argv[1])
    timeout = parse_timeout_ms(argv[2])
    master = server.replication
    offset = client.woff
    acks = master.count_acks(offset)
    if acks >= numreplicas or not _may_block(client):
        return acks
    server.waits.park(Waiter(client, offset, numreplicas, 0, False), timeout)
    return Block([], 0, timeout_reply=acks)


@command("waitaof", 4, "blocking", group="generic", since="7.2.0", acl=("@connection",),
         summary="Blocks until all of the preceding write commands sent by the connection are "
                 "written to the append-only file of the master and/or replicas.",
         complexity="O(1)", tips=("request_policy:all_shards", "response_policy:agg_min"),
         arguments=({"name": "numlocal", "type": "integer"},
                    {"name": "numreplicas", "type": "integer"},
                    {"name": "timeout", "type": "integer"}))
def waitaof(client: Client, argv: list[bytes]) -> Any:
    numlocal = parse_int(argv[1])
    if not 0 <= numlocal <= 1:
        return ErrorReply("ERR value is out of range, value must between 0 and 1")
    numreplicas = parse_int(argv[2])
    if numreplicas < 0:
        return ErrorReply("ERR value is out of range, must be positive")
    timeout = parse_timeout_ms(argv[3])
    server = client.server
    if not server.is_master():
        return ErrorReply(NOT_REPLICA_WAITAOF)
    if numlocal and server.persistence.aof is None:
        return ErrorReply(WAITAOF_NO_AOF)
    offset = client.woff
    waits = server.waits
    waiter = Waiter(client, offset, numreplicas, numlocal, True)
    reply = waits.reply_for(waiter)
    if (reply[0] >= numlocal and reply[1] >= numreplicas) or not _may_block(client):
        return reply
    waits.park(waiter, timeout)
    return Block([], 0, timeout_reply=reply)


@command("role", 1, "noscript loading stale fast sentinel", group="server", since="2.8.12",
         acl=("@admin", "@dangerous"), summary="Returns the replication role.")
def role(client: Client, argv: list[bytes]) -> Any:
    return role_reply(client.server)
