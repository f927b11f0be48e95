"""Stream entry IDs and the per-stream offsets kept in Spark's checkpoint.

An offset names, for each stream, the last ID already covered: a range (start, end] is read
with XRANGE from the successor of `start` to `end`, so offsets never depend on the
server-side "(" exclusive-range syntax and every computation is local (no round trip).
Pure Python: used on the driver and on executors.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MAX_SEQ = 2**64 - 1
MAX_MS = 2**64 - 1


@dataclass(frozen=True, order=True)
class StreamId:
    """A stream entry ID `ms-seq`; ordering is Redis's (by ms, then seq)."""

    ms: int
    seq: int

    @classmethod
    def parse(cls, text: str | bytes) -> StreamId:
        if isinstance(text, bytes):
            text = text.decode()
        ms_part, sep, seq_part = text.partition("-")
        try:
            ms = int(ms_part)
            # "1700000000000" alone means seq 0, like XRANGE's start argument.
            seq = int(seq_part) if sep else 0
        except ValueError:
            raise ValueError(f"invalid stream ID {text!r} (expected <ms>-<seq>)") from None
        if not (0 <= ms <= MAX_MS and 0 <= seq <= MAX_SEQ):
            raise ValueError(f"invalid stream ID {text!r} (out of range)")
        return cls(ms, seq)

    def __str__(self) -> str:
        return f"{self.ms}-{self.seq}"

    def successor(self) -> StreamId:
        if self.seq < MAX_SEQ:
            return StreamId(self.ms, self.seq + 1)
        return StreamId(self.ms + 1, 0)

    def predecessor(self) -> StreamId:
        if self.seq > 0:
            return StreamId(self.ms, self.seq - 1)
        return StreamId(self.ms - 1, MAX_SEQ)


ZERO = StreamId(0, 0)


def id_before_timestamp(ms: int) -> StreamId:
    """The last possible ID before millisecond `ms`: entries with ts >= ms come after it."""
    if ms <= 0:
        return ZERO
    return StreamId(ms - 1, MAX_SEQ)


def split_range(start: StreamId, end: StreamId, parts: int) -> list[tuple[StreamId, StreamId]]:
    """Split (start, end] into at most `parts` contiguous sub-ranges by the ID's millisecond part.

    The pieces are adjacent ((a, b], (b, c], ...), so together they cover the range exactly once
    whatever the data; a piece may be empty when the entries cluster in time.
    """
    if end <= start:
        return []
    lo, hi = start.ms, end.ms
    parts = max(1, min(parts, hi - lo + 1))
    pieces: list[tuple[StreamId, StreamId]] = []
    prev = start
    for k in range(1, parts):
        cut = StreamId(lo + (hi - lo) * k // parts, MAX_SEQ)
        if prev < cut < end:
            pieces.append((prev, cut))
            prev = cut
    pieces.append((prev, end))
    return pieces


def encode_offset(positions: dict[str, StreamId], added: dict[str, int | None] | None = None) -> dict[str, Any]:
    """The JSON-able dict Spark stores in the checkpoint's offset log.

    "streams" holds each stream's last covered ID; "added" (when known) how many entries had ever
    been added up to that ID, which is how trimming ahead of the query is detected later.
    """
    offset: dict[str, Any] = {"streams": {key: str(pos) for key, pos in sorted(positions.items())}}
    counts = {key: n for key, n in sorted((added or {}).items()) if n is not None and key in positions}
    if counts:
        offset["added"] = counts
    return offset


def decode_offset(offset: dict[str, Any] | str) -> dict[str, StreamId]:
    if isinstance(offset, str):
        offset = json.loads(offset)
    streams = offset.get("streams", {}) if isinstance(offset, dict) else {}
    return {key: StreamId.parse(pos) for key, pos in streams.items()}


def decode_added(offset: dict[str, Any] | str) -> dict[str, int | None]:
    if isinstance(offset, str):
        offset = json.loads(offset)
    counts = offset.get("added", {}) if isinstance(offset, dict) else {}
    return {key: int(n) for key, n in counts.items()}
