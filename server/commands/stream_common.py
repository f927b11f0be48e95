"""What the stream command modules share: key lookup, new streams, reply shapes, option parsing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from protocol.encoder import ARR_HDR_CACHE as _ARR_HDR
from protocol.encoder import BULK_HDR_CACHE as _BULK_HDR
from protocol.reply import ErrorReply, Raw
from server.command_table import on_server_start
from server.keyspace import TYPE_NAMES
from streams import Stream
from streams.ids import U64, format_id

if TYPE_CHECKING:
    from server.connection import Client
    from server.server import Server
    from streams.storage import Node

TYPE_NAMES[Stream] = b"stream"

SYNTAX_ERROR = ErrorReply("ERR syntax error")


def get_stream(client: Client, key: bytes) -> Stream | None:
    """The stream at key, None when missing; WRONGTYPE for another type."""
    return client.db.get_typed(key, Stream)


def new_stream(client: Client) -> Stream:
    cfg = client.server.config
    return Stream(cfg["stream-node-max-entries"], cfg["stream-node-max-bytes"])


def entry_reply(eid: int, fields: list[bytes] | None) -> list[Any]:
    """One entry as Redis replies it: [id, [field, value, ...]] (fields nil when deleted)."""
    return [format_id(eid), fields]


def entries_reply(entries: Sequence[tuple[int, list[bytes] | None]]) -> Any:
    """[[id, [field, value, ...]], ...], encoded here in one pass: the reply of XRANGE, XREAD and
    XREADGROUP is the hot path's largest, and arrays of bulk strings read the same in RESP2 and
    RESP3, so building nested lists for the encoder to walk again would be wasted work."""
    parts = [_ARR_HDR[len(entries)] if len(entries) < 1024 else b"*%d\r\n" % len(entries)]
    append = parts.append
    for eid, fields in entries:
        if fields is None:  # a deleted entry's nil differs between RESP2 and RESP3
            return [[format_id(eid), fields] for eid, fields in entries]
        _append_entry(append, eid, fields)
    return Raw(b"".join(parts))


def _append_entry(append: Any, eid: int, items: list[bytes]) -> None:
    """One entry, [id, [field, value, ...]], as RESP passed to append."""
    append(odd_entry_resp(b"%d-%d" % (eid >> 64, eid & U64), items))


def odd_entry_resp(sid: bytes, items: Sequence[bytes | bytearray]) -> bytes:
    """One entry given its formatted ID, [sid, [field, value, ...]], without a template (for
    entries whose fields differ from their node's names)."""
    parts: list[bytes | bytearray] = [b"*2\r\n$%d\r\n%b\r\n*%d\r\n" % (len(sid), sid, len(items))]
    for item in items:
        n = len(item)
        parts.append(_BULK_HDR[n] if n < 1024 else b"$%d\r\n" % n)
        parts.append(item)
        parts.append(b"\r\n")
    return b"".join(parts)


# The decimal sequence numbers a busy millisecond uses: formatting an int costs more than the
# rest of an ID reply, and IDs made in one millisecond have small, consecutive ones.
_SEQ_DIGITS = [b"%d" % n for n in range(4096)]


# Per distinct tuple of field names: the RESP of one entry with those fields, with slots for the
# ID and the values. Streams mostly repeat the same fields, so this is built once per shape.
_TEMPLATES: dict[tuple[bytes, ...], bytes] = {}


def entry_template(fields: tuple[bytes, ...]) -> bytes:
    """The RESP of an entry with these field names, with %-slots for the ID and the values."""
    template = _TEMPLATES.get(fields)
    if template is None:
        if len(_TEMPLATES) >= 4096:
            _TEMPLATES.clear()
        template = b"*2\r\n$%%d\r\n%%b\r\n*%d\r\n" % (2 * len(fields)) + b"".join(
            b"$%d\r\n%s\r\n$%%d\r\n%%b\r\n" % (len(f), f.replace(b"%", b"%%")) for f in fields)
        _TEMPLATES[fields] = template
    return template


# Per distinct tuple of field names: the RESP around each value of an entry with those fields,
# "\r\n*<2n>\r\n" + the first name, then the other names; see runs_reply.
_NAME_PIECES: dict[tuple[bytes, ...], list[bytes]] = {}
# "*2\r\n$<len>\r\n": the start of an entry whose formatted ID is <len> bytes long (at most 41).
_ENTRY_HEADS = [b"*2\r\n$%d\r\n" % n for n in range(42)]


def _name_pieces(names: tuple[bytes, ...]) -> list[bytes]:
    pieces = _NAME_PIECES.get(names)
    if pieces is None:
        if len(_NAME_PIECES) >= 4096:
            _NAME_PIECES.clear()
        pieces = [b"\r\n$%d\r\n%b\r\n" % (len(name), name) for name in names]
        pieces[0] = b"\r\n*%d" % (2 * len(names)) + pieces[0]
        _NAME_PIECES[names] = pieces
    return pieces


def runs_reply(runs: list[tuple[Node, int, int]], n: int) -> Raw:
    """The entries of storage runs (`EntryStore.runs`, n entries in all) as one RESP array.

    Entries are decoded straight from the node's packed data into pieces of one join: for the
    usual entry (the node's field names, one-byte value lengths) that is a few list appends per
    value, where decoding to Python lists and formatting those took twice the time. Arrays of
    bulk strings read the same in RESP2 and RESP3.
    """
    # Values are sliced from the node's data: bytearray while the node is open, bytes once sealed.
    parts: list[bytes | bytearray] = [_ARR_HDR[n] if n < 1024 else b"*%d\r\n" % n]
    append = parts.append
    digits = _SEQ_DIGITS
    bulk = _BULK_HDR
    heads = _ENTRY_HEADS
    for node, i, j in runs:
        pieces = _name_pieces(node.fields)
        data, offs, msd, seq, ms0 = node.data, node.offs, node.msd, node.seq, node.ms0
        last_d = -1
        prefix = b""
        for k in range(i, j):
            # Consecutive entries mostly share their millisecond: format it once.
            d = msd[k]
            if d != last_d:
                prefix = b"%d-" % (ms0 + d)
                last_d = d
            s = seq[k]
            sid = prefix + (digits[s] if s < 4096 else b"%d" % s)
            p = offs[k]
            if data[p] == 0:  # the node's field names: only the values are stored
                mark = len(parts)
                append(heads[len(sid)])
                append(sid)
                p += 1
                for piece in pieces:
                    size = data[p]
                    if size >= 0x80:  # a multi-byte length: take the general path below
                        del parts[mark:]
                        break
                    p += 1
                    append(piece)
                    append(bulk[size])
                    append(data[p:p + size])
                    p += size
                else:
                    append(b"\r\n")
                    continue
            names, items = node.split_at(k)
            if names is not None:
                append(entry_template(names) % (len(sid), sid, *items))  # type: ignore[operator]
            else:
                append(odd_entry_resp(sid, items))
    return Raw(b"".join(parts))


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


def id_run_reply(first: int, count: int) -> bytes:
    """The replies of `count` XADDs that made the consecutive IDs first, first+1, ...: that many
    bulk strings "ms-seq", encoded in a few C-level joins."""
    ms = first >> 64
    seq = first & U64
    end = seq + count
    if end > len(_SEQ_DIGITS):
        sids = map(format_id, range(first, first + count))
        return b"".join([b"$%d\r\n%b\r\n" % (len(sid), sid) for sid in sids])
    head = b"%d-" % ms
    parts = []
    bound = 10
    while bound <= seq:
        bound *= 10
    while seq < end:
        # Sequence numbers with the same digit count share one bulk header.
        stop = end if end < bound else bound
        prefix = b"$%d\r\n%b" % (len(head) + len(_SEQ_DIGITS[seq]), head)
        parts.append(prefix)
        parts.append((b"\r\n" + prefix).join(_SEQ_DIGITS[seq:stop]))
        parts.append(b"\r\n")
        seq = stop
        bound *= 10
    return b"".join(parts)
