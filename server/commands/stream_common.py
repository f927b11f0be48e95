"""What the stream command modules share: key lookup, new streams, errors, node limits.

Replies that carry entries are encoded by protocol/stream_resp.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.reply import ErrorReply
from server import value_types
from server.command_table import on_server_start
from server.commands.stream_rewrite import stream_commands
from streams import Stream

if TYPE_CHECKING:
    from server.connection import Client
    from server.server import Server



def _stream_memory(stream: Stream, _samples: int) -> int:
    # The packed nodes, plus a rough per-record cost of the groups' pending entries.
    size = sum(node.nbytes() for node in stream.store.nodes) + 200
    for group in stream.iter_groups():
        size += 100 + 120 * len(group.pel)
    return size


value_types.register(value_types.ValueType(
    Stream, b"stream", stream_commands, Stream.copy, lambda _s, _c: b"stream", _stream_memory))

SYNTAX_ERROR = ErrorReply("ERR syntax error")


def get_stream(client: Client, key: bytes) -> Stream | None:
    """The stream at key, None when missing; WRONGTYPE for another type."""
    return client.db.get_typed(key, Stream)


def read_stream(client: Client, key: bytes) -> Stream | None:
    """get_stream for a read command (Redis's lookupKeyRead): a miss publishes `keymiss`."""
    return client.db.read_typed(key, Stream)


def new_stream(client: Client) -> Stream:
    cfg = client.server.config
    s = Stream(cfg["stream-node-max-entries"], cfg["stream-node-max-bytes"])
    # A stream keeps the IDMP settings it was created with (XCFGSET changes them).
    s.idmp.duration = cfg["stream-idmp-duration"]
    s.idmp.maxsize = cfg["stream-idmp-maxsize"]
    return s


@on_server_start
def _follow_node_limits(server: Server) -> None:
    # CONFIG SET stream-node-max-* applies to every stream's future nodes, as in Redis where the
    # limits are read whenever a new node is started.
    def apply(_value: object) -> None:
        entries = server.config["stream-node-max-entries"]
        size = server.config["stream-node-max-bytes"]
        for db in server.keyspace.dbs:
            for value in db.data.values():
                if type(value) is Stream:
                    value.set_node_limits(entries, size)

    server.config.on_change("stream-node-max-entries", apply)
    server.config.on_change("stream-node-max-bytes", apply)
