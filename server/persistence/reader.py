"""Reading an append-only file: commands with the offsets where each ends.

Shared by start-up loading and `rivulet-check-aof`. A file is a sequence of RESP multibulk
commands; anything else is corruption at a known offset, and a command cut short at the very end
is a truncation (what a crash mid-write leaves).
"""

from __future__ import annotations

from collections.abc import Iterator


class AofCorrupted(Exception):
    def __init__(self, offset: int, why: str) -> None:
        super().__init__(f"{why} at offset {offset}")
        self.offset = offset
        self.why = why


class AofTruncated(Exception):
    def __init__(self, offset: int) -> None:
        super().__init__(f"truncated command at offset {offset}")
        self.offset = offset  # where the incomplete command starts: the valid prefix's length


def _number(data: bytes, pos: int, prefix: int) -> tuple[int, int]:
    """Parse `<prefix><digits>\\r\\n` at pos; returns (value, position after the CRLF)."""
    if pos >= len(data):
        raise AofTruncated(pos)
    if data[pos] != prefix:
        raise AofCorrupted(pos, f"expected '{chr(prefix)}', got {data[pos:pos + 1]!r}")
    end = data.find(b"\r\n", pos)
    if end < 0:
        if len(data) - pos > 32:
            raise AofCorrupted(pos, "header without CRLF")
        raise AofTruncated(pos)
    text = data[pos + 1 : end]
    if not text.isdigit():
        raise AofCorrupted(pos, f"invalid length {text!r}")
    return int(text), end + 2


def iter_commands(data: bytes) -> Iterator[tuple[list[bytes], int]]:
    """Yield (argv, offset just after the command). Raises AofTruncated / AofCorrupted."""
    pos = 0
    n = len(data)
    while pos < n:
        start = pos
        try:
            count, pos = _number(data, pos, 0x2A)  # '*'
            if count < 1:
                raise AofCorrupted(start, "empty command")
            argv: list[bytes] = []
            for _ in range(count):
                length, pos = _number(data, pos, 0x24)  # '$'
                end = pos + length
                if end + 2 > n:
                    raise AofTruncated(start)
                if data[end : end + 2] != b"\r\n":
                    raise AofCorrupted(end, "bulk not terminated by CRLF")
                argv.append(data[pos:end])
                pos = end + 2
        except AofTruncated:
            raise AofTruncated(start) from None
        yield argv, pos
