"""The RDB codec of every value type: what follows a key in dump.rdb and what a DUMP payload holds.

`write_value` writes the type byte and payload Redis 7.4 would write for the value under the running
configuration: lists as quicklists of listpacks (type 18), hashes as listpacks (16, or 25 with field
expiry) or tables (4, or 24 with field expiry), sets as intsets, listpacks or tables (11, 20, 2),
sorted sets as listpacks or skiplists (17, 5). Small values come out byte for byte as 7.4's.

`read_value` reads any type Redis 7.4 loads, the older encodings included (ziplists, zipmaps, text
doubles), and builds the value in the encoding Redis would give it after loading under the running
configuration (rdbLoadObject's conversions). Everything read is validated: a damaged payload raises
RdbError, never anything else; an empty container raises EmptyKeyError (Redis skips such keys in
files and refuses them in RESTORE).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping
from typing import Any, Final

from hashes.hash import PACK_MAX_FIELDS, Hash
from hashes.hash import pack as pack_hash
from lists.storage import LP_EMPTY, List, Node, entry_size, exceeds_limit
from protocol.encoder import format_double
from server.rdb import intset, listpack, ziplist, zipmap
from server.rdb.primitives import (
    RDB_TYPE_HASH,
    RDB_TYPE_HASH_LISTPACK,
    RDB_TYPE_HASH_LISTPACK_EX,
    RDB_TYPE_HASH_LISTPACK_EX_PRE_GA,
    RDB_TYPE_HASH_METADATA,
    RDB_TYPE_HASH_METADATA_PRE_GA,
    RDB_TYPE_HASH_ZIPLIST,
    RDB_TYPE_HASH_ZIPMAP,
    RDB_TYPE_LIST,
    RDB_TYPE_LIST_QUICKLIST,
    RDB_TYPE_LIST_QUICKLIST_2,
    RDB_TYPE_LIST_ZIPLIST,
    RDB_TYPE_SET,
    RDB_TYPE_SET_INTSET,
    RDB_TYPE_SET_LISTPACK,
    RDB_TYPE_STREAM_LISTPACKS,
    RDB_TYPE_STREAM_LISTPACKS_2,
    RDB_TYPE_STREAM_LISTPACKS_3,
    RDB_TYPE_STRING,
    RDB_TYPE_ZSET,
    RDB_TYPE_ZSET_2,
    RDB_TYPE_ZSET_LISTPACK,
    RDB_TYPE_ZSET_ZIPLIST,
    RdbError,
    RdbReader,
    RdbWriter,
    string_to_int64,
)
from sets.set import HASHTABLE, INTSET, LISTPACK, Set
from zsets import ZSet

QUICKLIST_NODE_CONTAINER_PLAIN = 1
QUICKLIST_NODE_CONTAINER_PACKED = 2

# EB_EXPIRE_TIME_MAX: the latest field expiry time Redis accepts (48 bits of milliseconds).
EB_EXPIRE_TIME_MAX = (1 << 48) - 1

STREAM_TYPES = frozenset((RDB_TYPE_STREAM_LISTPACKS, RDB_TYPE_STREAM_LISTPACKS_2, RDB_TYPE_STREAM_LISTPACKS_3))


class EmptyKeyError(RdbError):
    """The value is an empty container: a file loader skips the key, RESTORE refuses the payload."""


def _cfg(config: Mapping[str, Any] | Any, name: str, default: Any) -> Any:
    try:
        return config[name]
    except (KeyError, TypeError):
        return default


def _as_bytes(item: bytes | int) -> bytes:
    return item if isinstance(item, bytes) else b"%d" % item


# --- writing -----------------------------------------------------------------------------------------


def write_value(w: RdbWriter, value: Any, config: Mapping[str, Any] | Any = None, key: bytes = b"") -> None:
    """Type byte and payload of `value` (any Rivulet value), as Redis 7.4's rdbSaveObjectType and
    rdbSaveObject write them."""
    cls = type(value)
    if cls is bytes:
        w.type(RDB_TYPE_STRING)
        w.string(value)
    elif cls is bytearray:  # a string being edited in place (server/keyspace.py)
        w.type(RDB_TYPE_STRING)
        w.string(bytes(value))
    elif cls is List:
        _write_list(w, value)
    elif cls is Hash:
        _write_hash(w, value)
    elif cls is Set:
        _write_set(w, value)
    elif cls is ZSet:
        _write_zset(w, value)
    else:
        from streams.stream import Stream

        if cls is Stream:
            from server.rdb import stream_codec  # type: ignore[attr-defined,unused-ignore]

            stream_codec.write_stream(w, value)
        else:
            raise TypeError(f"no RDB encoding for {cls.__name__}")


def _write_list(w: RdbWriter, lst: List) -> None:
    w.type(RDB_TYPE_LIST_QUICKLIST_2)
    nodes = [node for node in lst.nodes if node.count]
    w.length(len(nodes))
    for node in nodes:
        items = node.read()
        if node.plain:
            w.length(QUICKLIST_NODE_CONTAINER_PLAIN)
            w.string(items[0])
        else:
            w.length(QUICKLIST_NODE_CONTAINER_PACKED)
            w.string(listpack.pack(items))


def _write_set(w: RdbWriter, s: Set) -> None:
    if s.enc == INTSET:
        w.type(RDB_TYPE_SET_INTSET)
        w.string(intset.pack(s.data))
    elif s.enc == LISTPACK:
        w.type(RDB_TYPE_SET_LISTPACK)
        w.string(listpack.pack(s.data))
    else:
        w.type(RDB_TYPE_SET)
        w.length(len(s.data))
        string = w.string
        for member in s.data:
            string(member)


def _zero_safe(score: float) -> bytes | int:
    # zzlInsertAt stores a score that double2ll accepts as an integer (-0 included, as 0) and any
    # other as d2string's text, which the listpack then stores as an integer when it spells one.
    if score == 0:
        return 0
    return format_double(score)


def _write_zset(w: RdbWriter, zs: ZSet) -> None:
    if zs.listpack:
        w.type(RDB_TYPE_ZSET_LISTPACK)
        flat: list[bytes | int] = []
        for score, member in zs:
            flat.append(member)
            flat.append(_zero_safe(score))
        w.string(listpack.pack(flat))
        return
    w.type(RDB_TYPE_ZSET_2)
    w.length(len(zs))
    string = w.string
    double = w.binary_double
    # Greatest first, as Redis walks its skiplist from the tail, so that loading inserts at the head.
    for score, member in reversed(list(zs)):
        string(member)
        double(score)


def _write_hash(w: RdbWriter, h: Hash) -> None:
    ttl = h.ttl
    flat = h.flat()
    if not h.table:
        if ttl is None:
            w.type(RDB_TYPE_HASH_LISTPACK)
            w.string(listpack.pack(flat))
            return
        # A listpackex keeps the fields with a time first, soonest first, then those without, each
        # entry followed by its time (0: none); the minimum time leads (0 when none). Redis inserts
        # a field before those of an equal time, so among equals the one whose time was set last
        # comes first: the reverse of the order the fields entered `ttl`.
        rank = {field: -i for i, field in enumerate(ttl)}
        timed: list[tuple[int, int, bytes, bytes]] = []
        plain: list[bytes | int] = []
        for i in range(0, len(flat), 2):
            field = flat[i]
            when = ttl.get(field)
            if when is None:
                plain += (field, flat[i + 1], 0)
            else:
                timed.append((when, rank[field], field, flat[i + 1]))
        timed.sort()
        items: list[bytes | int] = []
        for when, _i, field, value in timed:
            items += (field, value, when)
        items += plain
        w.type(RDB_TYPE_HASH_LISTPACK_EX)
        w.millis(timed[0][0] if timed else 0)
        w.string(listpack.pack(items))
        return
    live = {f: t for f, t in ttl.items() if h.get(f) is not None} if ttl else {}
    string = w.string
    if not live:
        w.type(RDB_TYPE_HASH)
        w.length(len(flat) // 2)
        for item in flat:
            string(item)
        return
    # Each field's time is written relative to the minimum, plus one (0: no time).
    least = min(live.values())
    w.type(RDB_TYPE_HASH_METADATA)
    w.millis(least)
    w.length(len(flat) // 2)
    for i in range(0, len(flat), 2):
        when = live.get(flat[i])
        w.length(0 if when is None else when - least + 1)
        string(flat[i])
        string(flat[i + 1])


# --- reading -----------------------------------------------------------------------------------------


def read_value(r: RdbReader, rdb_type: int, config: Mapping[str, Any] | Any = None, now_ms: int = 0,
               deep: bool = True) -> Any:
    """The value of type `rdb_type` (its type byte already read) at the reader's position.

    Rivulet checks every value it loads as deeply as Redis's sanitize-dump-payload yes does (it
    rebuilds its own structures from the data in any case); `deep` only reaches the stream codec."""
    if rdb_type == RDB_TYPE_STRING:
        return r.string()
    if rdb_type == RDB_TYPE_LIST_QUICKLIST_2 or rdb_type == RDB_TYPE_LIST_QUICKLIST:
        return _read_quicklist(r, rdb_type, config)
    if rdb_type == RDB_TYPE_HASH_LISTPACK:
        return _hash_from_listpack(r, config, 2)
    if rdb_type == RDB_TYPE_SET_LISTPACK:
        return _read_set_listpack(r, config)
    if rdb_type == RDB_TYPE_SET_INTSET:
        return _read_set_intset(r, config)
    if rdb_type == RDB_TYPE_ZSET_LISTPACK or rdb_type == RDB_TYPE_ZSET_ZIPLIST:
        return _read_zset_packed(r, rdb_type, config)
    if rdb_type == RDB_TYPE_ZSET_2 or rdb_type == RDB_TYPE_ZSET:
        return _read_zset(r, rdb_type, config)
    if rdb_type == RDB_TYPE_SET:
        return _read_set(r, config)
    if rdb_type == RDB_TYPE_HASH:
        return _read_hash(r, config)
    if rdb_type == RDB_TYPE_HASH_LISTPACK_EX or rdb_type == RDB_TYPE_HASH_LISTPACK_EX_PRE_GA:
        if rdb_type == RDB_TYPE_HASH_LISTPACK_EX:
            r.millis()  # the minimum field time, informative only
        return _hash_from_listpack(r, config, 3)
    if rdb_type == RDB_TYPE_HASH_METADATA or rdb_type == RDB_TYPE_HASH_METADATA_PRE_GA:
        return _read_hash_metadata(r, rdb_type, config)
    if rdb_type == RDB_TYPE_LIST:
        return _read_plain_list(r, config)
    if rdb_type == RDB_TYPE_LIST_ZIPLIST:
        items = ziplist.unpack(r.string())
        if not items:
            raise EmptyKeyError("empty list", r.pos)
        # Loaded into a quicklist, and left one whatever its size (rdbLoadObject converts no further).
        return _make_list([_as_bytes(x) for x in items], config, convert=False)
    if rdb_type == RDB_TYPE_HASH_ZIPLIST:
        start = r.pos
        flat = [_as_bytes(x) for x in ziplist.unpack(r.string())]
        return _make_hash_from_pairs(flat, config, start, by_count_only=True)
    if rdb_type == RDB_TYPE_HASH_ZIPMAP:
        start = r.pos
        flat = zipmap.unpack(r.string())
        return _make_hash_from_pairs(flat, config, start, by_count_only=False)
    if rdb_type in STREAM_TYPES:
        try:
            from server.rdb import stream_codec  # type: ignore[attr-defined,unused-ignore]
        except ImportError:
            raise RdbError(f"Unknown RDB encoding type {rdb_type}", r.pos - 1) from None
        return stream_codec.read_stream(r, rdb_type, config, deep)
    raise RdbError(f"Unknown RDB encoding type {rdb_type}", r.pos - 1)


# --- lists ---


def _make_list(items: list[bytes], config: Any, convert: bool = True) -> List:
    """A list of `items` pushed one by one, as quicklistPushTail makes its nodes; then, with
    `convert`, a listpack if it fits one (listTypeTryConversion)."""
    fill = _cfg(config, "list-max-listpack-size", -2)
    lst = List()
    if convert:
        lst.before_grow(fill, sum(map(len, items)), len(items))
    else:
        lst.before_grow(fill, 1 << 62, 1 << 62)  # a quicklist from the start
    push = lst.push_tail
    for x in items:
        push(x)
    return lst


def _list_from_nodes(nodes: list[tuple[bool, list[bytes]]], config: Any) -> List:
    """A quicklist of the payload's own nodes ((plain, items) each), as Redis appends them; a single
    packed node within the limits becomes a listpack (listTypeTryConvertQuicklist)."""
    fill = _cfg(config, "list-max-listpack-size", -2)
    lst = List()
    length = sum(len(items) for _, items in nodes)
    if len(nodes) == 1 and not nodes[0][0]:
        items = nodes[0][1]
        size = LP_EMPTY + sum(map(entry_size, items))
        if not exceeds_limit(fill, size, len(items)):
            node = lst.nodes[0]
            node.items = list(items)
            node.count = len(items)
            node.size = size
            lst.length = length
            return lst
    lst.before_grow(fill, 1 << 62, 1 << 62)
    built: list[Node] = []
    for plain, items in nodes:
        if plain:
            built.append(Node(items, len(items[0]), True))
        else:
            built.append(Node(items, LP_EMPTY + sum(map(entry_size, items))))
    # Interior nodes are kept packed, the two ends unpacked (lists.storage's layout).
    for node in built[1:-1]:
        node.pack()
    lst.nodes = built
    lst.length = length
    return lst


def _read_quicklist(r: RdbReader, rdb_type: int, config: Any) -> List:
    count = r.length()
    if count == 0:
        raise EmptyKeyError("empty list", r.pos)
    nodes: list[tuple[bool, list[bytes]]] = []
    container = QUICKLIST_NODE_CONTAINER_PACKED
    for _ in range(count):
        if rdb_type == RDB_TYPE_LIST_QUICKLIST_2:
            container = r.length()
            if container != QUICKLIST_NODE_CONTAINER_PACKED and container != QUICKLIST_NODE_CONTAINER_PLAIN:
                raise RdbError("Quicklist integrity check failed.", r.pos)
        start = r.pos
        data = r.string()
        if not data:
            raise RdbError("empty quicklist node", start)
        if container == QUICKLIST_NODE_CONTAINER_PLAIN:
            nodes.append((True, [data]))
            continue
        node = listpack.unpack(data) if rdb_type == RDB_TYPE_LIST_QUICKLIST_2 else ziplist.unpack(data)
        if node:  # Redis skips empty nodes
            nodes.append((False, [x if isinstance(x, bytes) else b"%d" % x for x in node]))
    if not nodes:
        raise EmptyKeyError("empty list", r.pos)
    return _list_from_nodes(nodes, config)


def _read_plain_list(r: RdbReader, config: Any) -> List:
    n = r.length()
    if n == 0:
        raise EmptyKeyError("empty list", r.pos)
    string = r.string
    return _make_list([string() for _ in range(n)], config)


# --- sets ---


def _set_limits(config: Any) -> tuple[int, int, int]:
    return (min(_cfg(config, "set-max-intset-entries", 512), 1 << 30),
            _cfg(config, "set-max-listpack-entries", 128),
            _cfg(config, "set-max-listpack-value", 64))


def _read_set(r: RdbReader, config: Any) -> Set:
    n = r.length()
    if n == 0:
        raise EmptyKeyError("empty set", r.pos)
    start = r.pos
    string = r.string
    members = [string() for _ in range(n)]
    unique = set(members)
    if len(unique) != n:
        raise RdbError("Duplicate set members detected", start)
    intset_max, lp_entries, lp_value = _set_limits(config)
    if n <= intset_max:
        ints = [string_to_int64(m) for m in members]
        if None not in ints:
            return Set(INTSET, array("q", sorted(ints)))  # type: ignore[type-var]
        # rdbLoadObject's conversions as members arrive: to a listpack at the first non-integer
        # while small enough, to a table once past the listpack limits.
        if n <= lp_entries and max(map(len, members)) <= lp_value:
            return Set(LISTPACK, members)
    return Set(HASHTABLE, unique)


def _read_set_intset(r: RdbReader, config: Any) -> Set:
    values = intset.unpack(r.string())
    intset_max, _, _ = _set_limits(config)
    if len(values) > intset_max:
        return Set(HASHTABLE, {b"%d" % v for v in values})
    return Set(INTSET, array("q", values))


def _read_set_listpack(r: RdbReader, config: Any) -> Set:
    start = r.pos
    members = [_as_bytes(x) for x in listpack.unpack(r.string())]
    if not members:
        raise EmptyKeyError("empty set", r.pos)
    unique = set(members)
    if len(unique) != len(members):
        raise RdbError("Set listpack integrity check failed.", start)
    _, lp_entries, _ = _set_limits(config)
    if len(members) > lp_entries:
        return Set(HASHTABLE, unique)
    return Set(LISTPACK, members)


# --- sorted sets ---


def _zset_limits(config: Any) -> tuple[int, int]:
    return _cfg(config, "zset-max-listpack-entries", 128), _cfg(config, "zset-max-listpack-value", 64)


def _make_zset(pairs: list[tuple[float, bytes]], listpack_enc: bool) -> ZSet:
    zs = ZSet(listpack_enc)
    if listpack_enc:
        pairs = [(0.0, m) if s == 0 else (s, m) for s, m in pairs]
    pairs.sort()
    zs.scores = {m: s for s, m in pairs}
    zs.order.load_sorted([s for s, _ in pairs], [m for _, m in pairs])
    return zs


def _read_zset(r: RdbReader, rdb_type: int, config: Any) -> ZSet:
    n = r.length()
    if n == 0:
        raise EmptyKeyError("empty sorted set", r.pos)
    start = r.pos
    pairs: list[tuple[float, bytes]] = []
    string = r.string
    score_of = r.binary_double if rdb_type == RDB_TYPE_ZSET_2 else r.double_text
    longest = 0
    for _ in range(n):
        member = string()
        score = score_of()
        if score != score:
            raise RdbError("Zset with NAN score detected", r.pos - 8)
        if len(member) > longest:
            longest = len(member)
        pairs.append((score, member))
    if len({m for _, m in pairs}) != n:
        raise RdbError("Duplicate zset fields detected", start)
    entries, value = _zset_limits(config)
    return _make_zset(pairs, n <= entries and longest <= value)


def _score(item: bytes | int, offset: int) -> float:
    if isinstance(item, int):
        return float(item)
    try:
        score = float(item)
    except ValueError:
        raise RdbError("sorted set score that is not a number", offset) from None
    if math.isnan(score):
        raise RdbError("Zset with NAN score detected", offset)
    return score


def _read_zset_packed(r: RdbReader, rdb_type: int, config: Any) -> ZSet:
    start = r.pos
    blob = r.string()
    items = listpack.unpack(blob) if rdb_type == RDB_TYPE_ZSET_LISTPACK else ziplist.unpack(blob)
    if len(items) % 2:
        raise RdbError("Zset listpack integrity check failed.", start)
    if not items:
        raise EmptyKeyError("empty sorted set", r.pos)
    pairs = [(_score(items[i + 1], start), _as_bytes(items[i])) for i in range(0, len(items), 2)]
    if len({m for _, m in pairs}) != len(pairs):
        raise RdbError("Zset listpack integrity check failed.", start)
    entries, _ = _zset_limits(config)
    return _make_zset(pairs, len(pairs) <= entries)


# --- hashes ---


def _hash_limits(config: Any) -> tuple[int, int]:
    return _cfg(config, "hash-max-listpack-entries", 512), _cfg(config, "hash-max-listpack-value", 64)


def _make_hash(flat: list[bytes], table: bool, ttl: dict[bytes, int] | None) -> Hash:
    h = Hash()
    if table or len(flat) > 2 * PACK_MAX_FIELDS:
        h.data = dict(zip(flat[::2], flat[1::2], strict=True))
    else:
        h.data = pack_hash(flat)
    h.table = table
    h.ttl = ttl
    return h


def _check_fields(fields: list[bytes], offset: int) -> None:
    if len(set(fields)) != len(fields):
        raise RdbError("Duplicate hash fields detected", offset)


def _make_hash_from_pairs(flat: list[bytes], config: Any, start: int, by_count_only: bool) -> Hash:
    if len(flat) % 2:
        raise RdbError("Hash listpack integrity check failed.", start)
    if not flat:
        raise EmptyKeyError("empty hash", start)
    _check_fields(flat[::2], start)
    entries, value = _hash_limits(config)
    table = len(flat) // 2 > entries or (not by_count_only and max(map(len, flat)) > value)
    return _make_hash(flat, table, None)


_DIGITS: Final = [b"%d" % i for i in range(128)]
_BYTE: Final = [bytes((i,)) for i in range(256)]


def _packed_from_listpack(lp: bytes) -> bytes:
    """Rivulet's packed hash form (hashes.hash.pack) of a field/value listpack, read in one pass
    with no list of items in between, for the common listpack: at most PACK_MAX_FIELDS fields,
    every entry a string under 64 bytes or a 7-bit integer, no field twice. b"" for any other
    (the general path then reads it, and reports what is wrong with it): it makes every check
    listpack.unpack makes on the entries it takes."""
    size = len(lp)
    if size < 7 or lp[0] | lp[1] << 8 | lp[2] << 16 | lp[3] << 24 != size or lp[size - 1] != 0xFF:
        return b""
    numele = lp[4] | (lp[5] << 8)
    if numele == 0 or numele & 1 or numele > 2 * PACK_MAX_FIELDS:
        return b""
    # The count and the lengths, one byte each, then the items: joined once.
    head: list[bytes] = [_BYTE[numele]]
    items: list[bytes] = []
    fields: set[bytes] = set()
    last = size - 1
    p = 6
    i = 0
    while p < last:
        b = lp[p]
        if b < 0x80:
            if p + 1 >= last or lp[p + 1] != 1:
                return b""
            item = _DIGITS[b]
            p += 2
        elif b < 0xC0:
            q = p + 1 + (b & 0x3F)
            if q >= last or lp[q] != q - p:
                return b""
            item = lp[p + 1:q]
            p = q + 1
        else:
            return b""
        if not i & 1:
            fields.add(item)
        head.append(_BYTE[len(item)])
        items.append(item)
        i += 1
    if i != numele or 2 * len(fields) != i:
        return b""
    head.extend(items)
    return b"".join(head)


def _hash_from_listpack(r: RdbReader, config: Any, tuple_len: int) -> Hash:
    start = r.pos
    lp = r.string()
    entries, _ = _hash_limits(config)
    if tuple_len == 2:
        packed = _packed_from_listpack(lp)
        if packed and packed[0] <= 2 * entries:
            h = Hash()
            h.data = packed
            return h
    items = listpack.unpack(lp)
    if len(items) % tuple_len:
        raise RdbError("Hash listpack integrity check failed.", start)
    if not items:
        raise EmptyKeyError("empty hash", r.pos)
    if tuple_len == 2:
        flat = [_as_bytes(x) for x in items]
        _check_fields(flat[::2], start)
        return _make_hash(flat, len(flat) // 2 > entries, None)
    flat = []
    timed: list[tuple[bytes, int]] = []
    for i in range(0, len(items), 3):
        field = _as_bytes(items[i])
        flat.append(field)
        flat.append(_as_bytes(items[i + 1]))
        when = items[i + 2]
        if not isinstance(when, int) or when < 0 or when > EB_EXPIRE_TIME_MAX:
            raise RdbError("Hash listpack integrity check failed.", start)
        if when:
            timed.append((field, when))
    _check_fields(flat[::2], start)
    # In the order their times would have been set to give this layout (see _write_hash).
    ttl = dict(reversed(timed))
    return _make_hash(flat, len(flat) // 2 > entries, ttl)


def _read_hash(r: RdbReader, config: Any) -> Hash:
    n = r.length()
    if n == 0:
        raise EmptyKeyError("empty hash", r.pos)
    start = r.pos
    string = r.string
    flat = [string() for _ in range(2 * n)]
    _check_fields(flat[::2], start)
    entries, value = _hash_limits(config)
    return _make_hash(flat, n > entries or max(map(len, flat)) > value, None)


def _read_hash_metadata(r: RdbReader, rdb_type: int, config: Any) -> Hash:
    least = 0
    if rdb_type == RDB_TYPE_HASH_METADATA:
        least = r.millis()
        if least < 0 or least > (1 << 48):
            raise RdbError("Hash read invalid minExpire value", r.pos - 8)
    n = r.length()
    if n == 0:
        raise EmptyKeyError("empty hash", r.pos)
    start = r.pos
    flat: list[bytes] = []
    ttl: dict[bytes, int] = {}
    string = r.string
    length = r.length
    for _ in range(n):
        rel = length()
        when = rel + least - 1 if rdb_type == RDB_TYPE_HASH_METADATA and rel else rel
        if when > EB_EXPIRE_TIME_MAX:
            raise RdbError(f"invalid expireAt time: {when}", r.pos)
        field = string()
        flat.append(field)
        flat.append(string())
        if when:
            ttl[field] = when
    _check_fields(flat[::2], start)
    entries, value = _hash_limits(config)
    return _make_hash(flat, n > entries or max(map(len, flat)) > value, ttl)
