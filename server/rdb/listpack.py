"""Redis's listpack (listpack.c): the packed list embedded as a string in RDB values.

`pack` writes the bytes Redis writes for the same items (an item that spells an int64 is stored
as an integer, in the smallest of Redis's integer encodings); `unpack` validates as it reads and
raises RdbError on any damage, giving integer-encoded entries back as ints.
"""

from __future__ import annotations

from collections.abc import Iterable

from server.rdb.primitives import RdbError, string_to_int64

LP_HDR_SIZE = 6
LP_EOF = 0xFF
LP_HDR_NUMELE_UNKNOWN = 0xFFFF


def _backlen(n: int) -> bytes:
    """The reverse-encoded length of an entry of `n` bytes (lpEncodeBacklen)."""
    if n <= 127:
        return bytes((n,))
    if n < 16383:
        return bytes((n >> 7, (n & 127) | 128))
    if n < 2097151:
        return bytes((n >> 14, ((n >> 7) & 127) | 128, (n & 127) | 128))
    if n < 268435455:
        return bytes((n >> 21, ((n >> 14) & 127) | 128, ((n >> 7) & 127) | 128, (n & 127) | 128))
    return bytes(
        (n >> 28, ((n >> 21) & 127) | 128, ((n >> 14) & 127) | 128, ((n >> 7) & 127) | 128, (n & 127) | 128)
    )


def _backlen_size(n: int) -> int:
    if n <= 127:
        return 1
    if n < 16383:
        return 2
    if n < 2097151:
        return 3
    if n < 268435455:
        return 4
    return 5


# Entries of the small integers, precomputed: they are most of what sets and lists of numbers hold.
_SMALL_INTS = [bytes((v, 1)) for v in range(128)]


def encode_int(v: int) -> bytes:
    """One integer entry, backlen included (lpEncodeIntegerGetType)."""
    if 0 <= v <= 127:
        return _SMALL_INTS[v]
    if -4096 <= v <= 4095:
        u = v & 0x1FFF
        return bytes((0xC0 | (u >> 8), u & 0xFF, 2))
    if -32768 <= v <= 32767:
        return b"\xf1" + (v & 0xFFFF).to_bytes(2, "little") + b"\x03"
    if -8388608 <= v <= 8388607:
        return b"\xf2" + (v & 0xFFFFFF).to_bytes(3, "little") + b"\x04"
    if -2147483648 <= v <= 2147483647:
        return b"\xf3" + (v & 0xFFFFFFFF).to_bytes(4, "little") + b"\x05"
    return b"\xf4" + (v & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little") + b"\x09"


def encode_entry(item: bytes | int) -> bytes:
    """One entry as Redis encodes it: strings that spell an int64 become integers."""
    if isinstance(item, int):
        if -(1 << 63) <= item < (1 << 63):
            return encode_int(item)
        item = str(item).encode()
    n = len(item)
    if n <= 20 and n:
        v = string_to_int64(item)
        if v is not None:
            return encode_int(v)
    if n < 64:
        return bytes((0x80 | n,)) + item + bytes((n + 1,))
    if n < 4096:
        return bytes((0xE0 | (n >> 8), n & 0xFF)) + item + _backlen(n + 2)
    return b"\xf0" + n.to_bytes(4, "little") + item + _backlen(n + 5)


_HEAD6 = [bytes((0x80 | n,)) for n in range(64)]
_BYTE = [bytes((n,)) for n in range(256)]
_INT_START = frozenset(b"-0123456789")


def pack(items: Iterable[bytes | int]) -> bytes:
    """A listpack holding `items` in order, byte for byte as Redis builds it."""
    parts: list[bytes] = [b""]
    append = parts.append
    count = 0
    for item in items:
        count += 1
        if type(item) is bytes:
            n = len(item)
            if n < 64 and (n == 0 or item[0] not in _INT_START):
                # The common case, a short string that cannot spell an integer.
                append(_HEAD6[n])
                append(item)
                append(_BYTE[n + 1])
                continue
        append(encode_entry(item))
    parts.append(b"\xff")
    total = sum(map(len, parts)) + LP_HDR_SIZE
    parts[0] = total.to_bytes(4, "little") + min(count, LP_HDR_NUMELE_UNKNOWN).to_bytes(2, "little")
    return b"".join(parts)


def entries_size(items: Iterable[bytes | int]) -> int:
    """The byte size `pack(items)` would have, without building it."""
    return LP_HDR_SIZE + 1 + sum(len(encode_entry(i)) for i in items)


def validate_header(blob: bytes) -> bool:
    """The shallow check Redis makes of every loaded listpack (lpValidateIntegrity, deep=0)."""
    size = len(blob)
    return size >= LP_HDR_SIZE + 1 and int.from_bytes(blob[:4], "little") == size and blob[-1] == LP_EOF


def unpack(blob: bytes) -> list[bytes | int]:
    """The entries of a listpack; integer-encoded ones as ints. RdbError when damaged."""
    size = len(blob)
    if size < LP_HDR_SIZE + 1:
        raise RdbError("listpack shorter than its header", 0)
    if int.from_bytes(blob[:4], "little") != size:
        raise RdbError("listpack total bytes disagree with its size", 0)
    if blob[size - 1] != LP_EOF:
        raise RdbError("listpack without its terminator", size - 1)
    numele = blob[4] | (blob[5] << 8)
    out: list[bytes | int] = []
    append = out.append
    last = size - 1
    p = LP_HDR_SIZE
    from_bytes = int.from_bytes
    while p < last:
        b = blob[p]
        # Fast paths for the common entries, whose one-byte back length is checked directly: a
        # 7-bit integer, a string under 64 bytes. Anything else (or a damaged one) takes the
        # general path below.
        if b < 0x80:
            if p + 1 < last and blob[p + 1] == 1:
                append(b)
                p += 2
                continue
        elif b < 0xC0:
            q = p + 1 + (b & 0x3F)
            if q < last and blob[q] == q - p:
                append(blob[p + 1 : q])
                p = q + 1
                continue
        if b < 0x80:
            start = p
            enc_len = 1
            is_str = False
            value = b
        elif b < 0xC0:
            start = p + 1
            enc_len = 1 + (b & 0x3F)
            is_str = True
        elif b < 0xE0:
            if p + 1 >= last:
                raise RdbError("listpack entry runs past the end", p)
            u = ((b & 0x1F) << 8) | blob[p + 1]
            start = p
            enc_len = 2
            is_str = False
            value = u - 8192 if u >= 4096 else u
        elif b < 0xF0:
            if p + 2 > last:
                raise RdbError("listpack entry runs past the end", p)
            start = p + 2
            enc_len = 2 + (((b & 0x0F) << 8) | blob[p + 1])
            is_str = True
        elif b == 0xF0:
            if p + 5 > last:
                raise RdbError("listpack entry runs past the end", p)
            start = p + 5
            enc_len = 5 + from_bytes(blob[p + 1 : p + 5], "little")
            is_str = True
        elif 0xF1 <= b <= 0xF4:
            width = (2, 3, 4, 8)[b - 0xF1]
            enc_len = 1 + width
            if p + enc_len > last:
                raise RdbError("listpack entry runs past the end", p)
            start = p
            is_str = False
            value = from_bytes(blob[p + 1 : p + enc_len], "little", signed=True)
        else:
            raise RdbError(f"listpack entry with an unknown encoding 0x{b:02x}", p)
        bl_size = _backlen_size(enc_len)
        nxt = p + enc_len + bl_size
        if nxt > last:
            raise RdbError("listpack entry runs past the end", p)
        # The back length as lpValidateNext checks it: decoded backwards from the entry's last byte.
        q = nxt - 1
        prev = 0
        shift = 0
        while True:
            c = blob[q]
            prev |= (c & 127) << shift
            if not c & 128:
                break
            shift += 7
            q -= 1
            if shift > 28:
                raise RdbError("listpack entry with a wrong back length", p)
        if prev + bl_size != enc_len + bl_size:
            raise RdbError("listpack entry with a wrong back length", p)
        if is_str:
            append(blob[start : p + enc_len])
        else:
            append(value)
        p = nxt
    if numele != LP_HDR_NUMELE_UNKNOWN and numele != len(out):
        raise RdbError("listpack element count disagrees with its header", 4)
    return out
