"""Output flow control: a client that does not read its replies must not grow our memory.

Two regimes, by the client's class in `client-output-buffer-limit` (normal, pubsub, replica):

* A class with a hard or soft limit is held to it as Redis holds it
  (networking.c checkClientOutputBufferLimits): the client's pending output (the replies not yet
  handed to the transport plus the transport's unsent buffer) is checked as its replies grow,
  after every command of a pipeline and every message or replication chunk appended to it. Past
  the hard limit, or over the soft limit for longer than its seconds, the client is closed at
  once: its remaining pipelined commands do not run and the replies produced for it are dropped.
* A class with no limit (the normal class by default, `normal 0 0 0`) is where Redis lets a
  client that does not read grow the server without bound. Here, once its pending output passes
  the high-water mark, the client's remaining pipelined commands wait, and its socket is not
  read, until the output drains below the low-water mark: a client that never reads costs about
  the high-water mark, never more than one reply beyond it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

# A modest high-water mark keeps a slow reader's backlog small without hurting pipelines.
HIGH_WATER: Final = 4 * 1024 * 1024
LOW_WATER: Final = 1024 * 1024
# The threshold of a client with no limit to watch but the high-water mark.
UNLIMITED: Final = 1 << 62


class OutputLimits:
    """The (hard, soft, seconds) limit of each client class in `client-output-buffer-limit`, or
    None for a class without one (normal by default). One object shared by the server and every
    client: the check made before and after each client's commands reads compiled fields."""

    __slots__ = ("normal", "pubsub", "replica")

    def __init__(self) -> None:
        self.normal: tuple[int, int, int] | None = None
        self.pubsub: tuple[int, int, int] | None = None
        self.replica: tuple[int, int, int] | None = None

    def follow(self, limits: dict[str, tuple[int, int, int]]) -> None:
        """Take the classes' limits from the parsed setting (a class all zeros has none)."""
        self.normal = _limit_or_none(limits.get("normal", (0, 0, 0)))
        self.pubsub = _limit_or_none(limits.get("pubsub", (0, 0, 0)))
        self.replica = _limit_or_none(limits.get("replica", (0, 0, 0)))


def _limit_or_none(limit: tuple[int, int, int]) -> tuple[int, int, int] | None:
    return limit if limit[0] or limit[1] else None


class OutputFlow:
    __slots__ = ("transport", "paused", "held", "soft_since", "queued", "input_paused",
                 "_buffered")

    def __init__(self, transport: Any) -> None:  # asyncio's or uvloop's (not an asyncio.Transport)
        self.transport = transport
        # The transport's buffer is over the high-water mark (its pause_writing/resume_writing).
        self.paused = False
        # The client's remaining commands wait for its output to drain (unlimited class).
        self.held = False
        # When the pending output first passed the soft limit (monotonic), or None.
        self.soft_since: float | None = None
        # Bytes appended to the client's output outside its own commands (messages, the
        # replication stream) since its last write.
        self.queued = 0
        self.input_paused = False
        # Read before and after every client's commands: the bound method, looked up once.
        self._buffered: Callable[[], int] = transport.get_write_buffer_size
        transport.set_write_buffer_limits(high=HIGH_WATER, low=LOW_WATER)

    def pause(self, stop_reading: bool) -> None:
        """The transport's buffer passed the high-water mark; stop reading an unlimited client."""
        self.paused = True
        if stop_reading:
            self.pause_input()

    def resume(self) -> None:
        self.paused = False
        self.soft_since = None
        if not self.held:
            self.resume_input()

    def hold(self) -> None:
        """Let the client's remaining commands wait until its output drains."""
        self.held = True
        self.pause_input()

    def release(self) -> None:
        self.held = False
        if not self.paused:
            self.resume_input()

    def pause_input(self) -> None:
        if not self.input_paused:
            self.input_paused = True
            self.transport.pause_reading()

    def resume_input(self) -> None:
        if self.input_paused:
            self.input_paused = False
            if not self.transport.is_closing():
                self.transport.resume_reading()

    def pending(self) -> int:
        """Bytes handed to the transport and not yet accepted by the socket."""
        return self._buffered()

    def over_limit(self, limits: tuple[int, int, int]) -> bool:
        """True when the transport's unsent output breaks the (hard, soft, soft_seconds) limit."""
        return self.breaks(self.pending(), limits)

    def breaks(self, size: int, limits: tuple[int, int, int]) -> bool:
        """True when `size` bytes of pending output break the (hard, soft, soft_seconds) limit.

        As in Redis, the soft limit counts from the first time it is seen passed, and breaks only
        once it has stayed passed for more than its seconds."""
        hard, soft, soft_seconds = limits
        if hard and size >= hard:
            return True
        if soft and size >= soft:
            now = time.monotonic()
            if self.soft_since is None:
                self.soft_since = now
                return False
            return now - self.soft_since > soft_seconds
        self.soft_since = None
        return False


def watch_threshold(limits: tuple[int, int, int] | None) -> int:
    """The pending output at which a client's growing output must be looked at."""
    if limits is None:
        return HIGH_WATER
    hard, soft, _seconds = limits
    if hard and soft:
        return min(hard, soft)
    return hard or soft or UNLIMITED
