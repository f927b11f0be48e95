"""The stream value in Redis's serialization format (RDB types 15, 19 and 21).

Layout, as Redis 7.4's rdb.c writes it (type 21) and reads it (15, 19, 21):

* the nodes: their count, then per node its key (the master ID: 16 bytes, milliseconds then
  sequence, both big-endian) and its listpack (t_stream.c's macro-node layout: a master entry
  `live deleted nfields name... 0`, then per entry `flags ms-delta seq-delta [nfields]
  [name] value ... lp-count`, where flag 1 marks a deleted entry and flag 2 an entry with the
  master entry's field names, whose names are then left out);
* length, last ID (ms, seq); from type 19 on the first ID, max deleted ID and entries added;
* the groups, in name order: name, last delivered ID, entries read (type 19 on; all ones is
  "unknown"), the group PEL (16-byte raw ID, delivery time in ms, delivery count), the
  consumers in name order: name, seen time, active time (type 21), and the IDs they own.

Rivulet's nodes hold the same entries as Redis's listpacks (same master IDs, same tombstones):
a node is written as the listpack Redis would hold, and a listpack is read straight into a
node's packed buffers (`EntryStore.load_node`), never through XADD. Every check Redis makes
while loading (deep sanitization included: each listpack is decoded whole, so it is always
verified whole) raises `RdbError`, as do a few inconsistencies Redis would load and later
trip over (IDs out of order, a length that is not the entries' count).

State Redis 7.4's format has no room for (the idempotent producers of XADD IDMP and their
settings, and the pending entries XNACK released, which belong to no consumer) travels beside
the value: `stream_extras(stream)` gives it as an opaque blob (None when there is none) for
the file writer to store where a Redis 7.4 skips it, and `apply_stream_extras` restores it;
`extras_aux_value` / `parse_extras_aux` wrap it, with its database and key, as the value of an
AUX field (EXTRAS_AUX_NAME) written after the key. A type-21 payload leaves the released
entries out, since Redis requires every pending entry to have an owner.
"""

from __future__ import annotations

from typing import Any, Final

from streams.groups import Consumer, ConsumerGroup, PendingEntry
from streams.idempotency import Idempotency, Producer
from streams.storage import read_len
from streams.stream import Stream

from . import listpack
from .primitives import RdbError, RdbReader, RdbWriter, string_to_int64

RDB_TYPE_STREAM_LISTPACKS: Final = 15
RDB_TYPE_STREAM_LISTPACKS_2: Final = 19
RDB_TYPE_STREAM_LISTPACKS_3: Final = 21
STREAM_TYPES: Final = frozenset(
    (RDB_TYPE_STREAM_LISTPACKS, RDB_TYPE_STREAM_LISTPACKS_2, RDB_TYPE_STREAM_LISTPACKS_3))

_FLAG_DELETED: Final = 1
_FLAG_SAMEFIELDS: Final = 2
_U64: Final = (1 << 64) - 1
_I64_MIN: Final = -(1 << 63)
_I64_MAX: Final = (1 << 63) - 1
_I62: Final = (1 << 62) - 1
_ENTRIES_READ_UNKNOWN: Final = _U64  # Redis's SCG_INVALID_ENTRIES_READ (-1) as a length


class _Damaged(Exception):
    """A listpack that is not a well-formed stream node (turned into an RdbError)."""


# --- writing ---------------------------------------------------------------------------------

def _id_bytes(eid: int) -> bytes:
    return eid.to_bytes(16, "big")


def _lp_int(out: bytearray, v: int) -> None:
    """Append an integer element as Redis encodes it (the two smallest encodings inline)."""
    if 0 <= v <= 127:
        out.append(v)
        out.append(1)
    elif -4096 <= v <= 4095:
        u = v & 0x1FFF
        out.append(0xC0 | (u >> 8))
        out.append(u & 0xFF)
        out.append(2)
    else:
        out += listpack.encode_int(v)


def _lp_str(out: bytearray, s: bytes) -> None:
    """Append a string element as Redis's lpAppend does: as an integer when it spells one."""
    n = len(s)
    if 0 < n <= 20:
        c = s[0]
        if c == 45 or 48 <= c <= 57:
            v = string_to_int64(s)
            if v is not None:
                _lp_int(out, v)
                return
    if n < 64:
        out.append(0x80 | n)
        out += s
        out.append(n + 1)
    else:
        out += listpack.encode_entry(s)


def _node_listpack(master: int, node: Any) -> bytes:
    """The listpack Redis holds for `node`: its master entry, then every entry (deleted ones
    included, flagged), built straight from the node's packed buffers."""
    names: tuple[bytes, ...] = node.fields
    n = len(node.msd)
    live: int = node.live
    width = len(names)
    out = bytearray(6)
    _lp_int(out, live)
    _lp_int(out, n - live)
    _lp_int(out, width)
    for name in names:
        _lp_str(out, name)
    _lp_int(out, 0)
    elements = 4 + width
    master_seq = master & _U64
    msd = node.msd
    seq = node.seq
    offs = node.offs
    data = bytes(node.data)  # the open tail node's buffer is a bytearray
    dead = node.dead
    for i in range(n):
        flags = 0
        if dead is not None and dead[i >> 3] & (1 << (i & 7)):
            flags = _FLAG_DELETED
        # Both deltas are unsigned differences Redis stores as signed int64s.
        dms: int = msd[i]
        if dms > _I64_MAX:
            dms -= 1 << 64
        d = seq[i] - master_seq
        if d > _I64_MAX:
            d -= 1 << 64
        elif d < _I64_MIN:
            d += 1 << 64
        p: int = offs[i]
        k = data[p]
        p += 1
        if k == 0:
            _lp_int(out, flags | _FLAG_SAMEFIELDS)
            _lp_int(out, dms)
            _lp_int(out, d)
            for _ in range(width):
                size = data[p]
                p += 1
                if size >= 0x80:
                    size, p = read_len(data, p - 1)
                _lp_str(out, data[p:p + size])
                p += size
            _lp_int(out, width + 3)
            elements += width + 4
        else:
            if k >= 0x80:
                k, p = read_len(data, p - 1)
            _lp_int(out, flags)
            _lp_int(out, dms)
            _lp_int(out, d)
            _lp_int(out, k)
            for _ in range(2 * k):
                size = data[p]
                p += 1
                if size >= 0x80:
                    size, p = read_len(data, p - 1)
                _lp_str(out, data[p:p + size])
                p += size
            _lp_int(out, 2 * k + 4)
            elements += 2 * k + 5
    out.append(0xFF)
    total = len(out)
    out[0:4] = total.to_bytes(4, "little")
    out[4:6] = min(elements, 0xFFFF).to_bytes(2, "little")
    return bytes(out)


def write_stream(w: RdbWriter, stream: Stream) -> None:
    """Write the type byte (21) and the payload of `stream`, as Redis 7.4's rdbSaveObject."""
    w.type(RDB_TYPE_STREAM_LISTPACKS_3)
    store = stream.store
    w.length(len(store.nodes))
    for master, node in zip(store.keys, store.nodes, strict=True):
        w.string(_id_bytes(master))
        w.string(_node_listpack(master, node))
    w.length(store.length)
    for eid in (stream.last_id, stream.first_id, stream.max_deleted_id):
        w.length(eid >> 64)
        w.length(eid & _U64)
    w.length(stream.entries_added)
    groups = stream.iter_groups()
    w.length(len(groups))
    for g in groups:
        w.string(g.name)
        w.length(g.last_id >> 64)
        w.length(g.last_id & _U64)
        w.length(_ENTRIES_READ_UNKNOWN if g.entries_read is None else g.entries_read)
        owned = [(eid, pe) for eid, pe in g.pel.items() if pe.consumer is not None]
        w.length(len(owned))
        for eid, pe in owned:
            w.raw(_id_bytes(eid))
            w.millis(pe.delivery_time)
            w.length(pe.delivery_count)
        w.length(len(g.consumers))
        for c in g.consumers.values():
            w.string(c.name)
            w.millis(c.seen_time)
            w.millis(c.active_time)
            w.length(len(c.pel))
            w.raw(b"".join([_id_bytes(eid) for eid in c.pel]))


# --- reading listpacks -----------------------------------------------------------------------

def _element(lp: bytes, p: int, end: int) -> tuple[bytes | int, int]:
    """The listpack element at lp[p] (a string, or an int for the integer encodings) and the
    position after it, its back-length checked as lpValidateNext does."""
    if p >= end:
        raise _Damaged("listpack element out of range")
    b = lp[p]
    value: bytes | int
    if b < 0x80:  # 7-bit unsigned
        value = b
        q = p + 1
    elif b < 0xC0:  # string, 6-bit length
        q = p + 1 + (b & 0x3F)
        value = lp[p + 1:q]
    elif b < 0xE0:  # 13-bit signed
        if p + 2 > end:
            raise _Damaged("truncated integer")
        v = ((b & 0x1F) << 8) | lp[p + 1]
        value = v - (1 << 13) if v >= 1 << 12 else v
        q = p + 2
    elif b < 0xF0:  # string, 12-bit length
        if p + 2 > end:
            raise _Damaged("truncated length")
        q = p + 2 + (((b & 0x0F) << 8) | lp[p + 1])
        value = lp[p + 2:q]
    elif b == 0xF0:  # string, 32-bit length
        if p + 5 > end:
            raise _Damaged("truncated length")
        q = p + 5 + int.from_bytes(lp[p + 1:p + 5], "little")
        value = lp[p + 5:q]
    elif b <= 0xF4:
        size = (2, 3, 4, 8)[b - 0xF1]
        q = p + 1 + size
        if q > end:
            raise _Damaged("truncated integer")
        value = int.from_bytes(lp[p + 1:q], "little", signed=True)
    else:
        raise _Damaged("bad listpack encoding")
    size = q - p
    # lpEncodeBacklen's thresholds (not powers of two: 16383 bytes take three).
    if size <= 127:
        back = 1
    elif size < 16383:
        back = 2
    elif size < 2097151:
        back = 3
    elif size < 268435455:
        back = 4
    else:
        back = 5
    if q + back > end:
        raise _Damaged("listpack element out of range")
    # The back-length is the entry size in 7-bit groups, most significant first, every byte
    # but the first flagged 0x80 (read from its end backwards).
    stored = 0
    for i in range(back):
        stored = (stored << 7) | (lp[q + i] & 0x7F)
    if stored != size:
        raise _Damaged("bad back-length")
    return value, q + back


def _int(lp: bytes, p: int, end: int) -> tuple[int, int]:
    """The integer element at lp[p] and the position after it."""
    b = lp[p] if p < end else 0xFF
    # The encodings stream nodes use most (flags, small deltas, lp-counts): 7-bit and 13-bit.
    if b < 0x80:
        if p + 1 < end and lp[p + 1] == 1:
            return b, p + 2
    elif 0xC0 <= b < 0xE0:
        if p + 2 < end and lp[p + 2] == 2:
            v = ((b & 0x1F) << 8) | lp[p + 1]
            return (v - 0x2000 if v >= 0x1000 else v), p + 3
    e, p = _element(lp, p, end)
    if not isinstance(e, int):
        raise _Damaged("expected an integer")
    return e, p


# A node's data is built as a list of pieces joined once: appending to a list is a C call,
# where bytearray.append is a method looked up on every call. Values are stored as Redis
# replies with them (integers as their decimal digits), each after its LEB128 length.
_LEN: Final = [bytes((n,)) for n in range(128)]
_SMALL_INT: Final = [bytes((len(b"%d" % n),)) + b"%d" % n for n in range(128)]
# The 13-bit integers met so far, made once each (a node holds the same few over and over).
_INT13: Final[list[bytes | None]] = [None] * 8192


def _piece(v: bytes | int) -> bytes:
    """One value as a node stores it: LEB128 length, then the bytes (an int as its digits)."""
    s = v if isinstance(v, bytes) else b"%d" % v
    n = len(s)
    if n < 0x80:
        return _LEN[n] + s
    prefix = bytearray()
    while n >= 0x80:
        prefix.append((n & 0x7F) | 0x80)
        n >>= 7
    prefix.append(n)
    return bytes(prefix) + s


def _as_bytes(v: bytes | int) -> bytes:
    return v if isinstance(v, bytes) else b"%d" % v


def _decode_node(lp: bytes, master: int) -> tuple[
        tuple[bytes, ...], list[int], list[int], list[int], bytes, bytearray | None, int]:
    """One stream listpack as a node's packed parts (see EntryStore.load_node): names, ms
    deltas, sequences, offsets, data, tombstone bitmap, live count. Validates it whole:
    header, every element, the master entry, each entry's lp-count and the counts.

    The common elements (7- and 13-bit integers, strings under 64 bytes) are read inline, their
    back-length checked as _element checks it; anything else goes through _element."""
    total = len(lp)
    if total < 7:
        raise _Damaged("listpack too short")
    if int.from_bytes(lp[0:4], "little") != total:
        raise _Damaged("listpack size mismatch")
    declared = lp[4] | (lp[5] << 8)
    end = total - 1
    if lp[end] != 0xFF:
        raise _Damaged("listpack without terminator")
    p = 6
    if p == end:
        raise _Damaged("Empty listpack inside stream")
    elements = 0
    live, p = _int(lp, p, end)
    ndead, p = _int(lp, p, end)
    nfields, p = _int(lp, p, end)
    if live < 0 or ndead < 0 or nfields < 0 or nfields > end - p:
        raise _Damaged("bad master entry")
    name_list: list[bytes] = []
    for _ in range(nfields):
        v, p = _element(lp, p, end)
        name_list.append(_as_bytes(v))
    zero, p = _int(lp, p, end)
    if zero != 0:
        raise _Damaged("bad master entry terminator")
    elements += 4 + nfields
    names = tuple(name_list)
    count = live + ndead
    if count > end - p:
        raise _Damaged("entry count beyond the listpack")
    msd: list[int] = []
    seqs: list[int] = []
    offs: list[int] = []
    pieces: list[bytes] = []
    w = 0  # the length of the data so far
    dead: bytearray | None = None
    master_ms = master >> 64
    master_seq = master & _U64
    # The previous ID as (ms, seq): 128-bit IDs would be a new long object per entry. The
    # first entry may be the master ID itself.
    prev_ms = master_ms
    prev_sq = master_seq - 1
    found_dead = 0
    int13 = _INT13
    for i in range(count):
        # flags, ms delta, seq delta: 7-bit integers mostly (a 13-bit ms delta in a full node).
        b = lp[p] if p < end else 0xFF
        if b < 0x80 and p + 1 < end and lp[p + 1] == 1:
            flags = b
            p += 2
        else:
            flags, p = _int(lp, p, end)
        b = lp[p] if p < end else 0xFF
        if b < 0x80 and p + 1 < end and lp[p + 1] == 1:
            dms = b
            p += 2
        elif 0xC0 <= b < 0xE0 and p + 2 < end and lp[p + 2] == 2:
            iv = ((b & 0x1F) << 8) | lp[p + 1]
            dms = iv - 0x2000 if iv >= 0x1000 else iv
            p += 3
        else:
            dms, p = _int(lp, p, end)
        b = lp[p] if p < end else 0xFF
        if b < 0x80 and p + 1 < end and lp[p + 1] == 1:
            dseq = b
            p += 2
        else:
            dseq, p = _int(lp, p, end)
        # Both deltas are unsigned differences stored as signed int64s: they wrap. (The
        # 62-bit test first: compiled, a comparison with 2**64 - 1 is one of objects.)
        ms = master_ms + dms
        if dms < 0 or (ms > _I62 and ms > _U64):
            ms &= _U64
        sq = master_seq + dseq
        if sq < 0 or (sq > _I62 and sq > _U64):
            sq &= _U64
        if ms < prev_ms or (ms == prev_ms and sq <= prev_sq):
            raise _Damaged("entry IDs out of order")
        prev_ms = ms
        prev_sq = sq
        msd.append(ms - master_ms)
        seqs.append(sq)
        offs.append(w)
        if flags & _FLAG_SAMEFIELDS:
            pieces.append(b"\x00")
            w += 1
            for _ in range(nfields):
                b = lp[p] if p < end else 0xFF
                if 0x80 <= b < 0xC0:  # the usual value: a string under 64 bytes
                    n = b & 0x3F
                    q = p + 1 + n
                    if q < end and lp[q] == n + 1:
                        pieces.append(_LEN[n])
                        pieces.append(lp[p + 1:q])
                        w += n + 1
                        p = q + 1
                        continue
                elif b < 0x80:
                    if p + 1 < end and lp[p + 1] == 1:
                        piece = _SMALL_INT[b]
                        pieces.append(piece)
                        w += len(piece)
                        p += 2
                        continue
                elif b < 0xE0:  # a 13-bit integer
                    if p + 2 < end and lp[p + 2] == 2:
                        iv = ((b & 0x1F) << 8) | lp[p + 1]
                        cached = int13[iv]
                        if cached is None:
                            cached = _piece(iv - 0x2000 if iv >= 0x1000 else iv)
                            int13[iv] = cached
                        pieces.append(cached)
                        w += len(cached)
                        p += 3
                        continue
                v, p = _element(lp, p, end)
                piece = _piece(v)
                pieces.append(piece)
                w += len(piece)
            extra = nfields + 3
        else:
            k, p = _int(lp, p, end)
            if k < 0 or k > end - p:
                raise _Damaged("bad field count")
            pairs: list[bytes | int] = []
            for _ in range(2 * k):
                v, p = _element(lp, p, end)
                pairs.append(v)
            # Same names as the master entry: Rivulet's compact form, whatever the flag said.
            if k == nfields and all(_as_bytes(pairs[2 * j]) == names[j] for j in range(k)):
                pieces.append(b"\x00")
                w += 1
                for j in range(k):
                    piece = _piece(pairs[2 * j + 1])
                    pieces.append(piece)
                    w += len(piece)
            else:
                n = k
                prefix = bytearray()
                while n >= 0x80:
                    prefix.append((n & 0x7F) | 0x80)
                    n >>= 7
                prefix.append(n)
                pieces.append(bytes(prefix))
                w += len(prefix)
                for v in pairs:
                    piece = _piece(v)
                    pieces.append(piece)
                    w += len(piece)
            extra = 2 * k + 4
        b = lp[p] if p < end else 0xFF
        if b < 0x80 and p + 1 < end and lp[p + 1] == 1:
            lp_count = b
            p += 2
        else:
            lp_count, p = _int(lp, p, end)
        if lp_count != extra:
            raise _Damaged("bad lp-count")
        elements += extra + 1  # the lp-count itself
        if flags & _FLAG_DELETED:
            if dead is None:
                dead = bytearray((count + 7) >> 3)
            dead[i >> 3] |= 1 << (i & 7)
            found_dead += 1
    if p != end:
        raise _Damaged("trailing listpack elements")
    if found_dead != ndead:
        raise _Damaged("deleted count mismatch")
    if declared != 65535 and declared != elements and elements < 65535:
        raise _Damaged("listpack element count mismatch")
    return names, msd, seqs, offs, b"".join(pieces), dead, count - ndead


# --- reading the value -----------------------------------------------------------------------

def _raw_id(r: RdbReader) -> int:
    return int.from_bytes(r.raw(16), "big")


def _id(r: RdbReader) -> int:
    ms = r.length()
    sq = r.length()
    return ms << 64 | sq


def read_stream(r: RdbReader, rdb_type: int, config: Any = None,
                deep_sanitize: bool = False) -> Stream:
    """Read a stream payload of type 15, 19 or 21 (the type byte already read).

    `config` (the server's) gives the node limits and IDMP defaults of the new stream.
    `deep_sanitize` adds the checks Redis makes only under sanitize-dump-payload (a pending
    entry no consumer owns); without it such an entry loads as released (XNACK's state).
    Damage of any kind raises RdbError.
    """
    if rdb_type not in STREAM_TYPES:
        raise RdbError(f"Unknown RDB encoding type {rdb_type}", r.pos)
    if config is not None:
        s = Stream(config["stream-node-max-entries"], config["stream-node-max-bytes"])
        s.idmp.duration = config["stream-idmp-duration"]
        s.idmp.maxsize = config["stream-idmp-maxsize"]
    else:
        s = Stream()
    store = s.store
    nodes = r.length()
    loaded: list[tuple[int, bytes, int]] = []
    for _ in range(nodes):
        key = r.string()
        if len(key) != 16:
            raise RdbError("Stream node key entry is not the size of a stream ID", r.pos)
        lp = r.string()
        loaded.append((int.from_bytes(key, "big"), lp, r.pos))
    loaded.sort(key=lambda t: t[0])  # Redis's rax orders the nodes, whatever the order read
    prev_last = -1
    prev_master = -1
    for master, lp, pos in loaded:
        if master == prev_master:
            raise RdbError("Listpack re-added with existing key", pos)
        try:
            names, msd, seqs, offs, data, dead, _live = _decode_node(lp, master)
        except _Damaged as e:
            msg = str(e)
            if not msg.startswith("Empty"):
                msg = f"Stream listpack integrity check failed: {msg}"
            raise RdbError(msg, pos) from None
        if master <= prev_last:
            raise RdbError("Stream node IDs overlap", pos)
        last = ((master >> 64) + msd[-1]) << 64 | seqs[-1]
        store.load_node(master, names, msd, seqs, offs, data, dead)
        prev_last = last
        prev_master = master
    length = r.length()
    s.last_id = _id(r)
    if rdb_type >= RDB_TYPE_STREAM_LISTPACKS_2:
        s.first_id = _id(r)
        s.max_deleted_id = _id(r)
        s.entries_added = r.length()
    else:
        # Older payloads have none of these: what Redis derives when loading them.
        s.entries_added = length
        first = store.edge_id(first=True, skip_tombstones=True)
        s.first_id = 0 if first is None else first
    if length and not store.nodes:
        raise RdbError("Stream length inconsistent with rax entries", r.pos)
    if length != store.length:
        raise RdbError("Stream length inconsistent with the listpacks' entries", r.pos)
    if store.nodes and prev_last > s.last_id:
        raise RdbError("Stream last ID smaller than an entry's", r.pos)
    groups = r.length()
    for _ in range(groups):
        _read_group(r, s, rdb_type, deep_sanitize)
    return s


def _read_group(r: RdbReader, s: Stream, rdb_type: int, deep: bool) -> None:
    name = r.string()
    last_id = _id(r)
    entries_read: int | None
    if rdb_type >= RDB_TYPE_STREAM_LISTPACKS_2:
        raw = r.length()
        entries_read = None if raw > _I64_MAX else raw
    else:
        entries_read = s.estimate_distance(last_id)
    if name in s.groups:
        raise RdbError(f"Duplicated consumer group name {name.decode('latin-1')}", r.pos)
    g = ConsumerGroup(name, last_id, entries_read)
    s.groups[name] = g
    n = r.length()
    ids: list[int] = []
    times: list[int] = []
    counts: list[int] = []
    index: dict[int, int] = {}
    for i in range(n):
        eid = _raw_id(r)
        times.append(r.millis())
        counts.append(r.length())
        if eid in index:
            raise RdbError("Duplicated global PEL entry loading stream consumer group", r.pos)
        index[eid] = i
        ids.append(eid)
    owners: list[Consumer | None] = [None] * n
    nconsumers = r.length()
    for _ in range(nconsumers):
        cname = r.string()
        if cname in g.consumers:
            raise RdbError("Duplicate stream consumer detected.", r.pos)
        c = Consumer(cname, r.millis())
        c.active_time = r.millis() if rdb_type >= RDB_TYPE_STREAM_LISTPACKS_3 else c.seen_time
        g.consumers[cname] = c
        own: list[int] = []
        for _ in range(r.length()):
            eid = _raw_id(r)
            i = index.get(eid, -1)
            if i < 0:
                raise RdbError("Consumer entry not found in group global PEL", r.pos)
            if owners[i] is not None:
                raise RdbError("Duplicated consumer PEL entry loading a stream consumer group",
                               r.pos)
            owners[i] = c
            own.append(eid)
        if own:
            if all(own[j] < own[j + 1] for j in range(len(own) - 1)):
                c.pel.extend_new(own)
            else:
                for eid in own:
                    c.pel.add(eid)
    # One record per (owner, delivery time, count), shared as deliveries share them.
    records: dict[tuple[int, int, int], PendingEntry] = {}
    values: list[PendingEntry] = []
    for i in range(n):
        owner = owners[i]
        if owner is None:
            if deep:
                raise RdbError("Stream CG PEL entry without consumer", r.pos)
            g.nacked[ids[i]] = None
        k = (id(owner), times[i], counts[i])
        pe = records.get(k)
        if pe is None:
            pe = records[k] = PendingEntry(owner, times[i], counts[i])
        values.append(pe)
    if all(ids[j] < ids[j + 1] for j in range(n - 1)):
        g.pel.extend_new(ids, values)
    else:
        for eid, pe in zip(ids, values, strict=True):
            g.pel[eid] = pe


# --- what Redis 7.4's format cannot hold -----------------------------------------------------

_EXTRAS_VERSION: Final = 1


def stream_extras(stream: Stream) -> bytes | None:
    """Rivulet's stream state beyond type 21, or None when there is none (the usual case):
    the IDMP settings when not the defaults, the producers' remembered pairs and the IDMP
    counters, and each group's released (XNACKed) pending entries in release order."""
    idmp = stream.idmp
    fresh = Idempotency()
    nacked = [(g, list(g.nacked)) for g in stream.iter_groups() if g.nacked]
    if (not nacked and not idmp.producers and not idmp.added and not idmp.duplicates
            and idmp.duration == fresh.duration and idmp.maxsize == fresh.maxsize):
        return None
    w = RdbWriter()
    w.length(_EXTRAS_VERSION)
    w.length(idmp.duration)
    w.length(idmp.maxsize)
    w.length(idmp.added)
    w.length(idmp.duplicates)
    producers = sorted(idmp.producers)
    w.length(len(producers))
    for pid in producers:
        p = idmp.producers[pid]
        w.string(pid)
        w.length(len(p.order))
        for iid in p.order:
            w.string(iid)
            w.raw(_id_bytes(p.ids[iid]))
    w.length(len(nacked))
    for g, eids in nacked:
        w.string(g.name)
        w.length(len(eids))
        for eid in eids:
            pe = g.pel[eid]
            w.raw(_id_bytes(eid))
            w.millis(pe.delivery_time)
            w.length(pe.delivery_count)
    return w.getvalue()


def apply_stream_extras(stream: Stream, blob: bytes) -> None:
    """Restore what `stream_extras` gave onto the stream read from the same save (RdbError if
    the blob is damaged or names a group the stream does not have)."""
    r = RdbReader(blob)
    if r.length() != _EXTRAS_VERSION:
        raise RdbError("Unknown stream extras version", r.pos)
    idmp = stream.idmp
    idmp.duration = r.length()
    idmp.maxsize = r.length()
    idmp.added = r.length()
    idmp.duplicates = r.length()
    idmp.producers = {}
    tracked = 0
    for _ in range(r.length()):
        pid = r.string()
        p = Producer()
        for _ in range(r.length()):
            iid = r.string()
            p.ids[iid] = _raw_id(r)
            p.order.append(iid)
        if p.order:
            idmp.producers[pid] = p
            tracked += len(p.order)
    idmp.tracked = tracked
    for _ in range(r.length()):
        name = r.string()
        g = stream.groups.get(name)
        if g is None:
            raise RdbError("Stream extras name a missing consumer group", r.pos)
        for _ in range(r.length()):
            eid = _raw_id(r)
            pe = PendingEntry(None, r.millis(), r.length())
            old = g.pel.get(eid)
            if old is not None and old.consumer is not None:
                raise RdbError("Released pending entry owned by a consumer", r.pos)
            g.pel[eid] = pe
            g.nacked[eid] = None
    if r.pos != len(blob):
        raise RdbError("Trailing bytes in stream extras", r.pos)


# The AUX field a dump.rdb carries the extras of one stream key in. Redis 7.4 skips AUX fields
# it does not know (rdbLoad logs them at debug level), so a file with them still loads there.
EXTRAS_AUX_NAME: Final = b"rivulet-stream-extras"


def extras_aux_value(dbid: int, key: bytes, stream: Stream) -> bytes | None:
    """The value of the EXTRAS_AUX_NAME field for `stream` stored as `key` in database `dbid`
    (to follow that key in the file), or None when the stream has no extras."""
    blob = stream_extras(stream)
    if blob is None:
        return None
    w = RdbWriter(compression=False)
    w.length(dbid)
    w.string(key)
    w.string(blob)
    return w.getvalue()


def parse_extras_aux(value: bytes) -> tuple[int, bytes, bytes]:
    """(dbid, key, blob) of an EXTRAS_AUX_NAME field's value; apply the blob with
    `apply_stream_extras` to that key's stream once it is loaded."""
    r = RdbReader(value)
    dbid = r.length()
    key = r.string()
    blob = r.string()
    if r.pos != len(value):
        raise RdbError("Trailing bytes in stream extras field", r.pos)
    return dbid, key, blob
