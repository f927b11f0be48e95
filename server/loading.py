"""How far a load of the dataset has come: INFO persistence's `loading_*` fields.

A load is the AOF or dump.rdb read at start-up (or by DEBUG RELOAD), or a replica's copy of its
master's snapshot. While one runs, INFO shows when it started, its size, how many bytes were
read, the share done and an estimate of the seconds left, computed as Redis 7.4 computes them
(genRedisInfoString): from the size, or, when the size is unknown, from the `used-mem` the
snapshot's writer recorded.
"""

from __future__ import annotations

import time


class LoadingProgress:
    """The load in progress (Redis's server.loading_* fields)."""

    __slots__ = ("start_time", "total_bytes", "rdb_used_mem", "loaded_bytes")

    def __init__(self) -> None:
        self.start_time = 0
        self.total_bytes = 0
        self.rdb_used_mem = 0
        self.loaded_bytes = 0

    def start(self, total_bytes: int) -> None:
        """A load of total_bytes (0 when unknown) begins now (loadingSetFlags)."""
        self.start_time = int(time.time())
        self.total_bytes = max(total_bytes, 0)
        self.rdb_used_mem = 0
        self.loaded_bytes = 0

    def advance(self, loaded_bytes: int, aux: list[tuple[bytes, bytes]]) -> None:
        """loaded_bytes of the file are read; aux holds the RDB auxiliary fields met so far,
        whose `used-mem` estimates a size not announced."""
        self.loaded_bytes = loaded_bytes
        if not self.rdb_used_mem:
            for name, value in aux:
                if name == b"used-mem" and value.isdigit():
                    self.rdb_used_mem = int(value)

    def info_fields(self, now: float | None = None) -> list[tuple[str, object]]:
        """The loading_* fields of INFO persistence, while a load runs."""
        perc = 0.0
        remaining = 1
        loaded = self.loaded_bytes
        if self.total_bytes:
            perc = loaded / self.total_bytes * 100
            remaining = self.total_bytes - loaded
        elif self.rdb_used_mem:
            # used-mem is only a rough estimate of the size: never past 99.99%.
            perc = min(loaded / self.rdb_used_mem * 100, 99.99)
            remaining = max(self.rdb_used_mem - loaded, 1)
        elapsed = int(time.time() if now is None else now) - self.start_time
        eta = 1 if elapsed == 0 else elapsed * remaining // (loaded + 1)
        return [("loading_start_time", self.start_time),
                ("loading_total_bytes", self.total_bytes),
                ("loading_rdb_used_mem", self.rdb_used_mem),
                ("loading_loaded_bytes", loaded),
                ("loading_loaded_perc", f"{perc:.2f}"),
                ("loading_eta_seconds", eta)]
