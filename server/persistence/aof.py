"""The append-only file writer.

Every change to the dataset is appended as the plain RESP commands that reproduce it
deterministically: the file is a consumer of effects (server/effects.py). Writes are buffered during a command and written
before its reply leaves (so nothing a client saw acknowledged is only in our memory); the fsync
policy then decides durability:

* always   - fdatasync before the reply leaves (on the event-loop thread, as Redis does);
* everysec - a background thread fdatasyncs at most once a second: never blocks the loop;
* no       - left to the operating system.

A failed write keeps the buffer, refuses further writes with MISCONF and is retried by the cron
until the disk recovers.
"""

from __future__ import annotations

import logging
import os
import threading
import time

from server.effects import Effect, Effects, encode_effects

log = logging.getLogger("rivulet")


def fsync_dir(path: str) -> None:
    fd = os.open(os.path.dirname(os.path.abspath(path)) or ".", os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class AppendOnlyFile:
    def __init__(self, path: str, fsync_policy: str) -> None:
        self.path = path
        self.fsync_policy = fsync_policy
        self.buf = bytearray()
        self.selected_db = -1
        self.fd: int | None = None
        self.size = 0
        self.base_size = 0  # size right after the last rewrite (auto-rewrite growth base)
        self.last_write_error: str | None = None
        self.write_errors = 0
        # While a background rewrite runs, what is appended is also kept here, to be appended to
        # the rewritten file before it replaces the current one.
        self.rewrite_buf: bytearray | None = None
        self._fd_lock = threading.Lock()
        self._unsynced = False
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self.last_fsync = time.monotonic()
        # The replication offset the file holds once written, and once fsynced (WAITAOF's
        # local count), read from the effects when the buffer is written.
        self.effects: Effects | None = None
        self.written_reploff = 0
        self.fsynced_reploff = 0

    # --- lifecycle -----------------------------------------------------------------------------

    def open(self) -> None:
        self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.size = os.fstat(self.fd).st_size
        if not self.base_size:
            self.base_size = self.size
        self.selected_db = -1
        if self._thread is None:
            self._thread = threading.Thread(target=self._fsync_loop, name="aof-fsync", daemon=True)
            self._thread.start()

    def close(self) -> None:
        self.flush()
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        with self._fd_lock:
            if self.fd is not None:
                try:
                    os.fsync(self.fd)
                except OSError:
                    pass
                os.close(self.fd)
                self.fd = None

    # --- feeding -------------------------------------------------------------------------------

    def propagate(self, effects: list[Effect], transaction: bool) -> None:
        """Append one command's (or one EXEC's) effects, with a SELECT where the database
        changes, inside MULTI ... EXEC for a transaction."""
        shared = self.effects
        if shared is not None:
            data, self.selected_db = shared.encode(effects, transaction, self.selected_db)
        else:
            data, self.selected_db = encode_effects(effects, transaction, self.selected_db)
        self._append(data)

    def _append(self, data: bytes) -> None:
        self.buf += data
        effects = self.effects
        if effects is not None:
            effects.replies_wait = True
        if self.rewrite_buf is not None:
            self.rewrite_buf += data

    # --- writing -------------------------------------------------------------------------------

    def flush(self) -> bool:
        """Write the buffer (and fsync under `always`). False when the write failed."""
        if not self.buf or self.fd is None:
            return self.last_write_error is None
        data = bytes(self.buf)
        effects = self.effects
        mark = effects.repl_offset if effects is not None else 0
        with self._fd_lock:
            start = self.size
            try:
                written = 0
                while written < len(data):
                    written += os.write(self.fd, data[written:])
                if self.fsync_policy == "always":
                    os.fdatasync(self.fd)
            except OSError as exc:
                self._write_failed(exc, start)
                return False
        self.size = start + len(data)
        del self.buf[: len(data)]
        self.written_reploff = mark
        if self.fsync_policy == "always":
            self.fsynced_reploff = mark
        if self.last_write_error is not None:
            log.warning("AOF write error looks solved. Redis can write again.")
            self.last_write_error = None
        if self.fsync_policy == "everysec":
            self._unsynced = True
        return True

    def _write_failed(self, exc: OSError, start: int) -> None:
        # A half-written command would corrupt the file: cut it off and keep it all buffered.
        try:
            os.ftruncate(self.fd, start)  # type: ignore[arg-type]
        except OSError:
            pass
        message = exc.strerror or str(exc)
        if self.last_write_error is None:
            log.warning("Error writing to the AOF file: %s", message)
        self.last_write_error = message
        self.write_errors += 1

    def fsync_now(self) -> None:
        # The lock only guards the descriptor swap of a rewrite: the fsync itself runs on a
        # duplicate so that the event loop, which takes the lock to write, never waits for it.
        with self._fd_lock:
            if self.fd is None:
                return
            fd = os.dup(self.fd)
            self._unsynced = False
            mark = self.written_reploff
        try:
            os.fdatasync(fd)
        finally:
            os.close(fd)
        if mark > self.fsynced_reploff:
            self.fsynced_reploff = mark
        self.last_fsync = time.monotonic()

    def _fsync_loop(self) -> None:
        # everysec: one fdatasync a second at most, off the event-loop thread.
        while not self._stop.is_set():
            self._wake.wait(1.0)
            self._wake.clear()
            if self._unsynced and self.fsync_policy == "everysec":
                try:
                    self.fsync_now()
                except OSError as exc:
                    log.warning("AOF fsync failed: %s", exc.strerror)

    # --- rewrite support -----------------------------------------------------------------------

    def start_rewrite_buffer(self) -> None:
        self.rewrite_buf = bytearray()
        # The rewritten file's last SELECT is unknown here: the next command states its database.
        self.selected_db = -1

    def drop_rewrite_buffer(self) -> None:
        self.rewrite_buf = None

    def switch_to(self, new_path_tmp: str) -> None:
        """Atomically replace the file by the rewritten one (whose tail the caller completed)."""
        self.flush()
        with self._fd_lock:
            os.rename(new_path_tmp, self.path)
            fsync_dir(self.path)
            old = self.fd
            self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            self.size = self.base_size = os.fstat(self.fd).st_size
        if old is not None:
            # The old file was unlinked by the rename: closing its last descriptor frees its
            # blocks, which takes tens of ms for a large file. Do it off the event loop.
            threading.Thread(target=os.close, args=(old,), name="aof-close", daemon=True).start()
        self.rewrite_buf = None
        # The rewritten file ends with its own SELECT state unknown to us: force a SELECT.
        self.selected_db = -1
