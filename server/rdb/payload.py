"""DUMP payloads: a value in RDB form, then the RDB version (2 bytes, little endian) and the CRC-64
of everything before the CRC (8 bytes, little endian), as cluster.c's createDumpPayload and
verifyDumpPayload make and check them."""

from __future__ import annotations

from typing import Any

from server.rdb.primitives import RDB_VERSION, RdbError, RdbReader, RdbWriter, crc64, is_object_type
from server.rdb.values import read_value, write_value

_VERSION = RDB_VERSION.to_bytes(2, "little")


def create_payload(value: Any, config: Any = None, compression: bool = True) -> bytes:
    """The DUMP payload of `value`."""
    w = RdbWriter(compression=compression)
    write_value(w, value, config)
    w.raw(_VERSION)
    w.raw(crc64(bytes(w.buf)).to_bytes(8, "little"))
    return w.getvalue()


def payload_version(payload: bytes) -> int:
    return payload[-10] | (payload[-9] << 8) if len(payload) >= 10 else -1


def verify_payload(payload: bytes, skip_checksum: bool = False) -> bool:
    """Whether the payload's footer is sound: a version this server reads (up to 7.4's 12) and,
    unless skipped, a matching CRC-64."""
    if len(payload) < 10:
        return False
    if payload_version(payload) > RDB_VERSION:
        return False
    if skip_checksum:
        return True
    return crc64(payload[:-8]) == int.from_bytes(payload[-8:], "little")


def load_payload(payload: bytes, config: Any = None, now_ms: int = 0, deep: bool = True) -> Any:
    """The value a verified payload holds. RdbError when damaged, EmptyKeyError (a subclass) for an
    empty container. As Redis reads the payload whole, what follows the value is not checked."""
    r = RdbReader(payload)
    rdb_type = r.type()
    if not is_object_type(rdb_type):
        raise RdbError(f"Unknown RDB type {rdb_type}", 0)
    return read_value(r, rdb_type, config, now_ms, deep)
