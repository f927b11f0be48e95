"""A hash: fields to values, in Redis's order, with optional per-field expiration times.

Storage. A small hash is one bytes object holding its fields and values in the order a listpack
keeps (new fields at the end, a replaced value in place): one byte for the number of items
(fields and values), one byte per item for its length, then the items end to end. Packing is
then two C-level joins, and the length of the hash is one byte. An item of 255 bytes or more
switches the hash to the long form: a 255 byte, then each item after its length as a
little-endian base-128 varint. That costs a byte or two per item instead of two Python objects;
lookups walk the lengths, which is cheap at the sizes it is kept for (PACK_MAX_FIELDS). A larger
hash is a dict (same order rules: Python dicts keep insertion order and replace in place).

Redis's encoding is tracked apart from the storage: `table` is set when Redis would have
converted the listpack to a hashtable (past hash-max-listpack-entries / -value), and like Redis
it never goes back. `ttl` is None for a hash that never had field expiration (listpack); once a
HEXPIRE-family command touches it, it is a dict of field -> absolute unix ms (listpackex), kept
even when empty, as Redis keeps the listpackex encoding.

Expiry itself (what is expired at a given time, deleting and logging) is the caller's: the
engine stores times and answers questions about them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

# Most fields kept packed; a larger hash (still "listpack" to Redis) is a dict.
PACK_MAX_FIELDS: Final = 32

_PREFIX: Final = [bytes((n,)) for n in range(128)]
_LONG: Final = 255  # first byte of the long form; also the least item length it is needed for
_COUNT: Final = [bytes((n,)) for n in range(256)]


def _prefix(n: int) -> bytes:
    if n < 128:
        return _PREFIX[n]
    out = bytearray()
    while n >= 128:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _read_len(data: bytes, i: int) -> tuple[int, int]:
    """The varint at data[i] and the index after it."""
    b = data[i]
    i += 1
    if b < 128:
        return b, i
    n = b & 0x7F
    shift = 7
    while True:
        b = data[i]
        i += 1
        n |= (b & 0x7F) << shift
        if b < 128:
            return n, i
        shift += 7


def _unpack_long(data: bytes) -> list[bytes]:
    out: list[bytes] = []
    i = 1
    n = len(data)
    while i < n:
        length, i = _read_len(data, i)
        out.append(data[i:i + length])
        i += length
    return out


def unpack(data: bytes) -> list[bytes]:
    """The packed pairs as a flat list: field, value, field, value..."""
    if not data:
        return []
    count = data[0]
    if count == _LONG:
        return _unpack_long(data)
    out: list[bytes] = []
    pos = count + 1
    for i in range(1, count + 1):
        end = pos + data[i]
        out.append(data[pos:end])
        pos = end
    return out


def pack(flat: list[bytes], start: int = 0) -> bytes:
    """The items flat[start:] packed."""
    count = len(flat) - start
    if count <= 0:
        return b""
    if count < _LONG:
        lengths: list[int] = []
        for i in range(start, start + count):
            n = len(flat[i])
            if n >= _LONG:
                break
            lengths.append(n)
        if len(lengths) == count:
            return b"".join((_COUNT[count], bytes(lengths), b"".join(flat[start:] if start else flat)))
    parts: list[bytes] = [b"\xff"]
    for i in range(start, start + count):
        item = flat[i]
        parts.append(_prefix(len(item)))
        parts.append(item)
    return b"".join(parts)


def _same_fields(old: bytes, new: bytes) -> bool:
    """Whether two packed hashes of the short form hold the same fields in the same order (their
    values may differ): compared in place, without unpacking either."""
    count = new[0]
    if count == _LONG or old[0] != count:
        return False
    po = pn = count + 1
    for i in range(1, count + 1):
        lo = old[i]
        ln = new[i]
        if i & 1:  # items 0, 2, 4...: the fields
            if lo != ln:
                return False
            for k in range(lo):
                if old[po + k] != new[pn + k]:
                    return False
        po += lo
        pn += ln
    return True


def _get_long(data: bytes, field: bytes) -> bytes | None:
    size = len(field)
    i = 1
    n = len(data)
    while i < n:
        length, i = _read_len(data, i)
        found = length == size and data.startswith(field, i)
        i += length
        length, i = _read_len(data, i)
        if found:
            return data[i:i + length]
        i += length
    return None


def _pack_dict(d: dict[bytes, bytes]) -> bytes:
    flat: list[bytes] = []
    for field, value in d.items():
        flat.append(field)
        flat.append(value)
    return pack(flat)


def _packed_dict(data: bytes) -> dict[bytes, bytes]:
    flat = unpack(data)
    return dict(zip(flat[::2], flat[1::2], strict=True))


class Hash:
    __slots__ = ("data", "ttl", "table", "lru")

    def __init__(self) -> None:
        # OBJECT IDLETIME / FREQ's access data, Redis's robj.lru (see server/keyspace.py).
        self.lru = 0
        self.data: bytes | dict[bytes, bytes] = b""
        self.ttl: dict[bytes, int] | None = None
        self.table = False

    # --- reads ---------------------------------------------------------------------------------

    def __len__(self) -> int:
        data = self.data
        if isinstance(data, dict):
            return len(data)
        if not data:
            return 0
        count = data[0]
        return (count if count != _LONG else len(_unpack_long(data))) // 2

    def is_empty(self) -> bool:
        return not self.data

    def get(self, field: bytes) -> bytes | None:
        data = self.data
        if isinstance(data, dict):
            return data.get(field)
        if not data:
            return None
        count = data[0]
        if count == _LONG:
            return _get_long(data, field)
        size = len(field)
        pos = count + 1
        for i in range(1, count, 2):
            length = data[i]
            if length == size and data.startswith(field, pos):
                pos += length
                return data[pos:pos + data[i + 1]]
            pos += length + data[i + 1]
        return None

    def __contains__(self, field: bytes) -> bool:
        return self.get(field) is not None

    def flat(self) -> list[bytes]:
        """field, value, field, value... in the hash's order."""
        data = self.data
        if isinstance(data, dict):
            out: list[bytes] = []
            for field, value in data.items():
                out.append(field)
                out.append(value)
            return out
        return unpack(data)

    def fields(self) -> list[bytes]:
        data = self.data
        if isinstance(data, dict):
            return list(data)
        return unpack(data)[::2]

    def items(self) -> Iterator[tuple[bytes, bytes]]:
        data = self.data
        if isinstance(data, dict):
            return iter(list(data.items()))
        flat = unpack(data)
        return zip(flat[::2], flat[1::2], strict=True)

    def as_dict(self) -> dict[bytes, bytes]:
        data = self.data
        if isinstance(data, dict):
            return dict(data)
        return _packed_dict(data)

    # --- writes --------------------------------------------------------------------------------

    def open_batch(self) -> None:
        """Hold a packed hash unpacked while a run of writes edits it: set_pairs then edits a
        dict, as for a hashtable, instead of unpacking and packing once per call."""
        if not self.table and not isinstance(self.data, dict):
            self.data = _packed_dict(self.data)

    def close_batch(self) -> None:
        """Pack again what open_batch unpacked, unless the writes converted it to a table."""
        data = self.data
        if not self.table and isinstance(data, dict):
            self.data = _pack_dict(data)

    def convert_to_table(self) -> None:
        """Redis converts the listpack to a hashtable (for good)."""
        self.table = True
        data = self.data
        if not isinstance(data, dict):
            self.data = _packed_dict(data)

    def set_pairs(self, flat: list[bytes], start: int, max_entries: int, max_value: int,
                  keep_ttl: bool = False) -> int:
        """Set the field/value pairs flat[start:], converting as Redis's hashTypeTryConversion
        and hashTypeSet do; a field set loses its TTL unless keep_ttl. Returns how many fields
        were new."""
        end = len(flat)
        if not self.table:
            if (end - start) // 2 > max_entries:
                self.convert_to_table()
            else:
                for j in range(start, end):
                    if len(flat[j]) > max_value:
                        self.convert_to_table()
                        break
        data = self.data
        ttl = self.ttl
        created = 0
        if isinstance(data, dict):
            for j in range(start, end - 1, 2):
                field = flat[j]
                if field not in data:
                    created += 1
                elif ttl and not keep_ttl:
                    ttl.pop(field, None)
                data[field] = flat[j + 1]
            if not self.table and len(data) > max_entries:
                self.table = True
            return created
        if data and data[0] == end - start and (end - start) % 2 == 0:
            # Every field rewritten in its order (a record saved whole) is the common update:
            # then the command's own pairs, packed, are the new content.
            packed = pack(flat, start)
            if _same_fields(data, packed):
                if ttl and not keep_ttl:
                    for j in range(start, end - 1, 2):
                        ttl.pop(flat[j], None)
                self.data = packed
                return 0
        # Packed: edit the unpacked list (list searches run in C), then pack it again.
        items = unpack(data)
        fields = items[0::2]
        for j in range(start, end - 1, 2):
            field = flat[j]
            if field in fields:
                items[2 * fields.index(field) + 1] = flat[j + 1]
                if ttl and not keep_ttl:
                    ttl.pop(field, None)
            else:
                fields.append(field)
                items.append(field)
                items.append(flat[j + 1])
                created += 1
        count = len(fields)
        if not self.table and count > max_entries:
            self.table = True
        if self.table or count > PACK_MAX_FIELDS:
            self.data = dict(zip(fields, items[1::2], strict=True))
        else:
            self.data = pack(items)
        return created

    def set(self, field: bytes, value: bytes, max_entries: int, max_value: int,
            keep_ttl: bool = False) -> bool:
        """One field, converting as Redis's hashTypeSet (HINCRBY*, HSETNX). True when new."""
        return self.set_pairs([field, value], 0, max_entries, max_value, keep_ttl) == 1

    def delete(self, field: bytes) -> bool:
        data = self.data
        ttl = self.ttl
        if ttl:
            ttl.pop(field, None)
        if isinstance(data, dict):
            if field not in data:
                return False
            del data[field]
            return True
        d = _packed_dict(data)
        if field not in d:
            return False
        del d[field]
        self.data = _pack_dict(d)
        return True

    def delete_many(self, fields: list[bytes]) -> int:
        data = self.data
        d = data if isinstance(data, dict) else _packed_dict(data)
        ttl = self.ttl
        deleted = 0
        for field in fields:
            if field in d:
                del d[field]
                deleted += 1
                if ttl:
                    ttl.pop(field, None)
        if deleted and not isinstance(data, dict):
            self.data = _pack_dict(d)
        return deleted

    # --- field expiration ----------------------------------------------------------------------

    def expire_time(self, field: bytes) -> int | None:
        ttl = self.ttl
        return ttl.get(field) if ttl else None

    def min_expire(self) -> int | None:
        ttl = self.ttl
        return min(ttl.values()) if ttl else None

    def set_expire_time(self, field: bytes, when: int) -> None:
        ttl = self.ttl
        if ttl is None:
            ttl = self.ttl = {}
        ttl[field] = when

    def persist(self, field: bytes) -> bool:
        ttl = self.ttl
        return bool(ttl) and ttl.pop(field, None) is not None  # type: ignore[union-attr]

    def make_expirable(self) -> None:
        """Redis turns a listpack into a listpackex when a HEXPIRE-family command touches it."""
        if self.ttl is None:
            self.ttl = {}

    def expired_fields(self, now: int, limit: int = 0) -> list[bytes]:
        """Fields whose time is before `now` (at most `limit`, 0: all)."""
        ttl = self.ttl
        if not ttl:
            return []
        out: list[bytes] = []
        for field, when in ttl.items():
            if when < now:
                out.append(field)
                if len(out) == limit:
                    break
        return out

    # --- whole value ---------------------------------------------------------------------------

    def copy(self) -> Hash:
        other = Hash()
        data = self.data
        other.data = dict(data) if isinstance(data, dict) else data
        other.ttl = dict(self.ttl) if self.ttl is not None else None
        other.table = self.table
        return other

    def encoding(self) -> bytes:
        if self.table:
            return b"hashtable"
        return b"listpack" if self.ttl is None else b"listpackex"

    def nbytes(self) -> int:
        """An estimate of the memory held (MEMORY USAGE)."""
        data = self.data
        size = 56
        if isinstance(data, dict):
            size += 64 + 40 * len(data)
            for field, value in data.items():
                size += 66 + len(field) + len(value)
        else:
            size += 33 + len(data)
        if self.ttl:
            size += 64 + 100 * len(self.ttl)
        return size
