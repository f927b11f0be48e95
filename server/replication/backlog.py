"""The replication backlog: the most recent bytes of the replication stream, in a circular
buffer of `repl-backlog-size` bytes, so that a replica that lost its link can continue
(PSYNC ... +CONTINUE) from the byte it is missing instead of loading a whole snapshot.

Offsets are Redis's: the stream's first byte is offset 1, and `first_byte_offset` is the offset
of the oldest byte held (Redis's `repl_backlog->offset`). No I/O.
"""

from __future__ import annotations

# Redis's CONFIG_REPL_BACKLOG_MIN_SIZE: a smaller repl-backlog-size is raised to this.
MIN_SIZE = 16 * 1024


class Backlog:
    """A circular buffer of the last `size` bytes of the stream."""

    __slots__ = ("size", "_buf", "_end", "histlen", "first_byte_offset")

    def __init__(self, size: int, first_byte_offset: int) -> None:
        self.size = max(size, MIN_SIZE)
        self._buf = bytearray(self.size)
        # Where the next byte goes in _buf.
        self._end = 0
        # How many bytes are held (at most size).
        self.histlen = 0
        # The stream offset of the oldest byte held; with nothing held yet, the offset the
        # next byte will have.
        self.first_byte_offset = first_byte_offset

    def append(self, data: bytes) -> None:
        """Add data at the end, dropping the oldest bytes beyond size."""
        n = len(data)
        size = self.size
        if n >= size:
            # Only the last size bytes survive.
            self._buf[:] = data[n - size:]
            self._end = 0
        else:
            end = self._end
            room = size - end
            if n <= room:
                self._buf[end:end + n] = data
            else:
                self._buf[end:] = data[:room]
                self._buf[:n - room] = data[room:]
            self._end = (end + n) % size
        histlen = self.histlen + n
        if histlen > size:
            self.first_byte_offset += histlen - size
            histlen = size
        self.histlen = histlen

    def covers(self, offset: int) -> bool:
        """Whether a replica that wants the stream from offset on (its next byte) can be served
        from here: offset is inside the held bytes or just after the last one."""
        return self.first_byte_offset <= offset <= self.first_byte_offset + self.histlen

    def read_from(self, offset: int) -> bytes:
        """The held bytes from stream offset `offset` to the end (covers(offset) must hold)."""
        skip = offset - self.first_byte_offset
        count = self.histlen - skip
        if count <= 0:
            return b""
        start = (self._end - count) % self.size
        if start + count <= self.size:
            return bytes(self._buf[start:start + count])
        return bytes(self._buf[start:]) + bytes(self._buf[:self._end])

    def resize(self, size: int) -> None:
        """Change the capacity, keeping the most recent bytes that fit."""
        size = max(size, MIN_SIZE)
        if size == self.size:
            return
        held = self.read_from(self.first_byte_offset)
        last = self.first_byte_offset + self.histlen
        self.size = size
        self._buf = bytearray(size)
        self._end = 0
        self.histlen = 0
        self.first_byte_offset = last - len(held)
        self.append(held[-size:] if len(held) > size else held)
        self.first_byte_offset = last - self.histlen
