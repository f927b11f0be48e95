"""Redis's intset (intset.c): the sorted integer array of RDB_TYPE_SET_INTSET."""

from __future__ import annotations

import sys
from array import array
from collections.abc import Sequence

from server.rdb.primitives import RdbError

_TYPECODE = {2: "h", 4: "i", 8: "q"}


def pack(values: Sequence[int]) -> bytes:
    """The intset of `values` (ascending, distinct), in the narrowest width that holds them all."""
    lo = min(values) if values else 0
    hi = max(values) if values else 0
    if -32768 <= lo and hi <= 32767:
        width = 2
    elif -(1 << 31) <= lo and hi < (1 << 31):
        width = 4
    else:
        width = 8
    body = array(_TYPECODE[width], values)
    if body.itemsize != width:  # 'i' is 4 bytes on every platform CPython runs on; be sure
        raise RdbError("no array type of the intset width", 0)
    if sys.byteorder == "big":
        body.byteswap()
    return width.to_bytes(4, "little") + len(values).to_bytes(4, "little") + body.tobytes()


def unpack(blob: bytes, deep: bool = True) -> list[int]:
    """The integers of an intset, validated as intsetValidateIntegrity (deep: ascending, distinct)."""
    if len(blob) < 8:
        raise RdbError("intset shorter than its header", 0)
    width = int.from_bytes(blob[:4], "little")
    code = _TYPECODE.get(width)
    if code is None:
        raise RdbError(f"intset with an unknown encoding {width}", 0)
    count = int.from_bytes(blob[4:8], "little")
    if 8 + count * width != len(blob):
        raise RdbError("intset length disagrees with its size", 4)
    if count == 0:
        raise RdbError("empty intset", 4)
    body = array(code)
    body.frombytes(blob[8:])
    if sys.byteorder == "big":
        body.byteswap()
    values = body.tolist()
    if deep:
        for i in range(1, count):
            if values[i] <= values[i - 1]:
                raise RdbError("intset out of order or with duplicates", 8 + i * width)
    return values
