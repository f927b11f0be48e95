"""Byte-level encodings of Redis's RDB format, as rdb.c writes and reads them.

`RdbWriter` appends to one buffer; `RdbReader` reads from bytes at a position and raises
`RdbError(message, offset)` on anything malformed, so that no damaged input can raise anything else.
"""

from __future__ import annotations

import math
import re
import struct
from typing import Final

import crcmod
import lzf

# Object types (rdb.h). Values are fixed on disk.
RDB_TYPE_STRING: Final = 0
RDB_TYPE_LIST: Final = 1
RDB_TYPE_SET: Final = 2
RDB_TYPE_ZSET: Final = 3
RDB_TYPE_HASH: Final = 4
RDB_TYPE_ZSET_2: Final = 5
RDB_TYPE_MODULE_PRE_GA: Final = 6
RDB_TYPE_MODULE_2: Final = 7
RDB_TYPE_HASH_ZIPMAP: Final = 9
RDB_TYPE_LIST_ZIPLIST: Final = 10
RDB_TYPE_SET_INTSET: Final = 11
RDB_TYPE_ZSET_ZIPLIST: Final = 12
RDB_TYPE_HASH_ZIPLIST: Final = 13
RDB_TYPE_LIST_QUICKLIST: Final = 14
RDB_TYPE_STREAM_LISTPACKS: Final = 15
RDB_TYPE_HASH_LISTPACK: Final = 16
RDB_TYPE_ZSET_LISTPACK: Final = 17
RDB_TYPE_LIST_QUICKLIST_2: Final = 18
RDB_TYPE_STREAM_LISTPACKS_2: Final = 19
RDB_TYPE_SET_LISTPACK: Final = 20
RDB_TYPE_STREAM_LISTPACKS_3: Final = 21
RDB_TYPE_HASH_METADATA_PRE_GA: Final = 22
RDB_TYPE_HASH_LISTPACK_EX_PRE_GA: Final = 23
RDB_TYPE_HASH_METADATA: Final = 24
RDB_TYPE_HASH_LISTPACK_EX: Final = 25

# Opcodes of whole files (rdb.h); the file part reads and writes them with `type`.
RDB_OPCODE_SLOT_INFO: Final = 244
RDB_OPCODE_FUNCTION2: Final = 245
RDB_OPCODE_FUNCTION_PRE_GA: Final = 246
RDB_OPCODE_MODULE_AUX: Final = 247
RDB_OPCODE_IDLE: Final = 248
RDB_OPCODE_FREQ: Final = 249
RDB_OPCODE_AUX: Final = 250
RDB_OPCODE_RESIZEDB: Final = 251
RDB_OPCODE_EXPIRETIME_MS: Final = 252
RDB_OPCODE_EXPIRETIME: Final = 253
RDB_OPCODE_SELECTDB: Final = 254
RDB_OPCODE_EOF: Final = 255

# The version this implementation writes (Redis 7.4's).
RDB_VERSION: Final = 12

RDB_ENC_INT8: Final = 0
RDB_ENC_INT16: Final = 1
RDB_ENC_INT32: Final = 2
RDB_ENC_LZF: Final = 3


def is_object_type(t: int) -> bool:
    """Whether `t` is a value type byte Redis 7.4 knows (rdbIsObjectType)."""
    return 0 <= t <= 7 or 9 <= t <= 25


class RdbError(Exception):
    """Malformed RDB data: `message` says what, `offset` where (position in the input)."""

    def __init__(self, message: str, offset: int = -1) -> None:
        super().__init__(message, offset)
        self.message = message
        self.offset = offset

    def __str__(self) -> str:
        return f"{self.message} (at offset {self.offset})" if self.offset >= 0 else self.message


# CRC-64/Jones, reflected, no final xor: what crc64.c computes (check value of b"123456789" is
# 0xe9c6d914c4b8d9ca). crcmod builds a table-driven C implementation when its extension is present.
_crc64 = crcmod.mkCrcFun(0x1AD93D23594C935A9, initCrc=0, rev=True, xorOut=0)


def crc64(data: bytes, crc: int = 0) -> int:
    """Redis's CRC-64 of `data`, continuing from `crc` (0 to start)."""
    return int(_crc64(data, crc))


def lzf_compress(data: bytes, max_len: int) -> bytes | None:
    """LZF-compress `data` into at most `max_len` bytes, or None when it does not fit."""
    if max_len <= 1:
        return None
    # python-lzf hands liblzf one byte more room than asked; liblzf's output depends on its room
    # (it stops early when near the end), so ask for one less to give it exactly Redis's.
    out = lzf.compress(data, max_len - 1)
    if out is None or len(out) > max_len:
        return None
    return bytes(out)


def lzf_decompress(data: bytes, expected_len: int) -> bytes | None:
    """Decompress LZF `data` that must expand to exactly `expected_len` bytes; None if it does not."""
    if expected_len == 0:
        # lzf_decompress reports errors as 0 bytes, so Redis accepts any input for an empty string.
        return b""
    # A back reference (at most 3 bytes) expands to at most 264 bytes: a claimed length beyond
    # that ratio is damage, refused before allocating it.
    if expected_len > 132 * len(data) + 64:
        return None
    try:
        out = lzf.decompress(data, expected_len)
    except (ValueError, SystemError, MemoryError):
        return None
    if out is None or len(out) != expected_len:
        return None
    return bytes(out)


def string_to_int64(s: bytes) -> int | None:
    """The integer `s` spells when it is the canonical decimal form of an int64 (Redis's string2ll),
    else None: no sign but '-', no leading zeros, no spaces, no "-0"."""
    n = len(s)
    if n == 0 or n > 20:
        return None
    c = s[0]
    if c != 45 and not 48 <= c <= 57:
        return None
    try:
        v = int(s)
    except ValueError:
        return None
    if not -(1 << 63) <= v < (1 << 63):
        return None
    # int() is lenient (whitespace, '+', '_', leading zeros): only the canonical spelling counts.
    if str(v).encode() != s:
        return None
    return v


_pack_double = struct.Struct("<d").pack
_unpack_double = struct.Struct("<d").unpack_from
_pack_i64 = struct.Struct("<q").pack
_unpack_i64 = struct.Struct("<q").unpack_from
_pack_be32 = struct.Struct(">BI").pack
_pack_be64 = struct.Struct(">BQ").pack
_unpack_be32 = struct.Struct(">I").unpack_from
_unpack_be64 = struct.Struct(">Q").unpack_from


def encode_length(n: int) -> bytes:
    """Redis's length encoding (rdbSaveLen): 6, 14, 32 or 64 bits."""
    if n < 0x40:
        return bytes((n,))
    if n < 0x4000:
        return bytes((0x40 | (n >> 8), n & 0xFF))
    if n <= 0xFFFFFFFF:
        return _pack_be32(0x80, n)
    return _pack_be64(0x81, n)


def encode_int_string(v: int) -> bytes | None:
    """The integer form of a string (rdbEncodeInteger), or None when `v` needs more than 32 bits."""
    if -128 <= v <= 127:
        return bytes((0xC0, v & 0xFF))
    if -32768 <= v <= 32767:
        return b"\xc1" + (v & 0xFFFF).to_bytes(2, "little")
    if -(1 << 31) <= v < (1 << 31):
        return b"\xc2" + (v & 0xFFFFFFFF).to_bytes(4, "little")
    return None


class RdbWriter:
    """An append-only RDB buffer. `compression` is the `rdbcompression` setting."""

    __slots__ = ("buf", "compression")

    def __init__(self, compression: bool = True) -> None:
        self.buf = bytearray()
        self.compression = compression

    def getvalue(self) -> bytes:
        return bytes(self.buf)

    def raw(self, data: bytes) -> None:
        self.buf += data

    def type(self, t: int) -> None:
        self.buf.append(t)

    def length(self, n: int) -> None:
        if n < 0x40:
            self.buf.append(n)
        else:
            self.buf += encode_length(n)

    def string(self, s: bytes) -> None:
        """A string as rdbSaveRawString writes it: integer-encoded when it spells a 32-bit integer,
        LZF-compressed when longer than 20 bytes and it saves at least 4, else verbatim."""
        n = len(s)
        buf = self.buf
        if n <= 11 and n:
            v = string_to_int64(s)
            if v is not None:
                enc = encode_int_string(v)
                if enc is not None:
                    buf += enc
                    return
        if n > 20 and self.compression:
            packed = lzf_compress(s, n - 4)
            if packed is not None:
                buf.append(0xC3)
                buf += encode_length(len(packed))
                buf += encode_length(n)
                buf += packed
                return
        if n < 0x40:
            buf.append(n)
        else:
            buf += encode_length(n)
        buf += s

    def int_string(self, v: int) -> None:
        """An integer as a string (rdbSaveLongLongAsStringObject): integer-encoded when it fits 32 bits,
        else its decimal digits."""
        enc = encode_int_string(v)
        if enc is not None:
            self.buf += enc
        else:
            digits = str(v).encode()
            self.buf.append(len(digits))
            self.buf += digits

    def lzf_blob(self, compressed: bytes, original_len: int) -> None:
        self.buf.append(0xC3)
        self.buf += encode_length(len(compressed))
        self.buf += encode_length(original_len)
        self.buf += compressed

    def binary_double(self, d: float) -> None:
        self.buf += _pack_double(d)

    def double_text(self, d: float) -> None:
        """The length-prefixed text double of RDB_TYPE_ZSET (version < 8 files)."""
        if math.isnan(d):
            self.buf.append(253)
        elif math.isinf(d):
            self.buf.append(255 if d < 0 else 254)
        else:
            text = (str(int(d)) if d.is_integer() and abs(d) < 1e17 else repr(d)).encode()
            self.buf.append(len(text))
            self.buf += text

    def millis(self, ms: int) -> None:
        self.buf += _pack_i64(ms)

    def u8(self, v: int) -> None:
        self.buf.append(v)


# sscanf("%lg") reads the longest prefix that is a number (after optional whitespace).
_FLOAT_PREFIX = re.compile(
    rb"\s*([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan(?:\([0-9a-zA-Z_]*\))?))",
    re.IGNORECASE,
)


class RdbReader:
    """Reads RDB encodings from `data` starting at `pos`; raises RdbError on damage."""

    __slots__ = ("data", "pos", "end")

    def __init__(self, data: bytes, pos: int = 0, end: int = -1) -> None:
        self.data = data
        self.pos = pos
        self.end = len(data) if end < 0 else end

    def remaining(self) -> int:
        return self.end - self.pos

    def at_end(self) -> bool:
        return self.pos >= self.end

    def fail(self, message: str) -> RdbError:
        return RdbError(message, self.pos)

    def raw(self, n: int) -> bytes:
        p = self.pos
        q = p + n
        if n < 0 or q > self.end:
            raise RdbError(f"unexpected end of data reading {n} bytes", p)
        self.pos = q
        return self.data[p:q]

    def u8(self) -> int:
        p = self.pos
        if p >= self.end:
            raise RdbError("unexpected end of data", p)
        self.pos = p + 1
        return self.data[p]

    def type(self) -> int:
        return self.u8()

    def length_or_encoding(self) -> tuple[int, bool]:
        """A length, or (with True) the 6-bit special encoding a string announces (RDB_ENC_*)."""
        p = self.pos
        if p >= self.end:
            raise RdbError("unexpected end of data reading a length", p)
        b = self.data[p]
        kind = b >> 6
        if kind == 0:
            self.pos = p + 1
            return b, False
        if kind == 1:
            if p + 2 > self.end:
                raise RdbError("unexpected end of data reading a length", p)
            self.pos = p + 2
            return ((b & 0x3F) << 8) | self.data[p + 1], False
        if kind == 3:
            self.pos = p + 1
            return b & 0x3F, True
        if b == 0x80:
            if p + 5 > self.end:
                raise RdbError("unexpected end of data reading a length", p)
            self.pos = p + 5
            return int(_unpack_be32(self.data, p + 1)[0]), False
        if b == 0x81:
            if p + 9 > self.end:
                raise RdbError("unexpected end of data reading a length", p)
            self.pos = p + 9
            return int(_unpack_be64(self.data, p + 1)[0]), False
        raise RdbError(f"Unknown length encoding {kind} in rdbLoadLen()", p)

    def length(self) -> int:
        p = self.pos
        n, encoded = self.length_or_encoding()
        if encoded:
            raise RdbError("a length was expected, found a string encoding", p)
        return n

    def string(self) -> bytes:
        """A string in any of its encodings; integer-encoded ones come back as their decimal digits."""
        data = self.data
        p = self.pos
        if p < self.end:
            b = data[p]
            if b < 0x40:
                q = p + 1 + b
                if q > self.end:
                    raise RdbError("unexpected end of data reading a string", p)
                self.pos = q
                return data[p + 1 : q]
        n, encoded = self.length_or_encoding()
        if not encoded:
            p = self.pos
            q = p + n
            if q > self.end:
                raise RdbError(f"unexpected end of data reading a string of {n} bytes", p)
            self.pos = q
            return data[p:q]
        if n == RDB_ENC_LZF:
            return self._lzf()
        return str(self._int_encoded(n)).encode()

    def string_or_int(self) -> bytes | int:
        """Like `string`, but an integer-encoded string comes back as the int."""
        p = self.pos
        if p < self.end and self.data[p] >> 6 == 3 and self.data[p] & 0x3F != RDB_ENC_LZF:
            self.pos = p + 1
            return self._int_encoded(self.data[p] & 0x3F)
        return self.string()

    def _int_encoded(self, enc: int) -> int:
        p = self.pos
        if enc == RDB_ENC_INT8:
            size = 1
        elif enc == RDB_ENC_INT16:
            size = 2
        elif enc == RDB_ENC_INT32:
            size = 4
        else:
            raise RdbError(f"Unknown RDB string encoding type {enc}", p - 1)
        if p + size > self.end:
            raise RdbError("unexpected end of data reading an integer-encoded string", p)
        self.pos = p + size
        return int.from_bytes(self.data[p : p + size], "little", signed=True)

    def _lzf(self) -> bytes:
        clen = self.length()
        n = self.length()
        p = self.pos
        if p + clen > self.end:
            raise RdbError("unexpected end of data reading an LZF string", p)
        out = lzf_decompress(self.data[p : p + clen], n)
        if out is None:
            raise RdbError("Invalid LZF compressed string", p)
        self.pos = p + clen
        return out

    def binary_double(self) -> float:
        p = self.pos
        if p + 8 > self.end:
            raise RdbError("unexpected end of data reading a double", p)
        self.pos = p + 8
        return float(_unpack_double(self.data, p)[0])

    def double_text(self) -> float:
        """The length-prefixed text double of RDB_TYPE_ZSET (rdbLoadDoubleValue)."""
        n = self.u8()
        if n == 255:
            return -math.inf
        if n == 254:
            return math.inf
        if n == 253:
            return math.nan
        text = self.raw(n)
        m = _FLOAT_PREFIX.match(text.split(b"\0", 1)[0])
        if m is None:
            raise RdbError("invalid text double", self.pos - n)
        number = m.group(1)
        if b"n" in number.lower() and b"i" not in number.lower():
            return math.nan
        try:
            return float(number)
        except ValueError:
            raise RdbError("invalid text double", self.pos - n) from None

    def millis(self) -> int:
        p = self.pos
        if p + 8 > self.end:
            raise RdbError("unexpected end of data reading a time", p)
        self.pos = p + 8
        return int(_unpack_i64(self.data, p)[0])

    def seconds(self) -> int:
        """The 32-bit time of the old RDB_OPCODE_EXPIRETIME."""
        return int.from_bytes(self.raw(4), "little", signed=True)
