"""Output flow control: a client that does not read its replies must not grow our memory.

When the transport's write buffer passes its high-water mark we stop reading that client's
requests (so it cannot make us produce more replies) and resume once the buffer drains. On top of
that, `client-output-buffer-limit` for the normal class disconnects a client whose pending output
passes the hard limit, or stays over the soft limit for longer than the configured seconds.
"""

from __future__ import annotations

import time
from typing import Any


class OutputFlow:
    __slots__ = ("transport", "paused", "soft_since")

    def __init__(self, transport: Any) -> None:  # asyncio's or uvloop's (not an asyncio.Transport)
        self.transport = transport
        self.paused = False
        self.soft_since: float | None = None
        # A modest high-water mark keeps a slow reader's backlog small without hurting pipelines.
        transport.set_write_buffer_limits(high=4 * 1024 * 1024, low=1024 * 1024)

    def pause(self) -> None:
        if not self.paused:
            self.paused = True
            self.transport.pause_reading()

    def resume(self) -> None:
        if self.paused:
            self.paused = False
            self.soft_since = None
            if not self.transport.is_closing():
                self.transport.resume_reading()

    def over_limit(self, limits: tuple[int, int, int]) -> bool:
        """True when pending output breaks the (hard, soft, soft_seconds) limit."""
        hard, soft, soft_seconds = limits
        if not hard and not soft:
            return False
        pending = self.transport.get_write_buffer_size()
        if hard and pending >= hard:
            return True
        if soft and pending >= soft:
            now = time.monotonic()
            if self.soft_since is None:
                self.soft_since = now
            return now - self.soft_since > soft_seconds
        self.soft_since = None
        return False
