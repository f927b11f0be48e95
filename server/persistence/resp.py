"""RESP encoding of command argument vectors, as written to the append-only file."""

from __future__ import annotations

from collections.abc import Sequence


def encode_command(argv: Sequence[bytes]) -> bytes:
    parts = [b"*%d\r\n" % len(argv)]
    for arg in argv:
        parts.append(b"$%d\r\n" % len(arg))
        parts.append(arg)
        parts.append(b"\r\n")
    return b"".join(parts)
