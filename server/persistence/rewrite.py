"""AOF rewrite (compaction) in a forked child, as Redis does.

The child inherits a copy-on-write snapshot of the keyspace and writes it as commands to a temp
file while the parent keeps serving; everything the parent appends meanwhile is also kept in a
rewrite buffer. When the child is done, the parent appends that buffer to the temp file, fsyncs it,
renames it over the AOF and fsyncs the directory: the switch is atomic, and nothing written during
the rewrite is lost.
"""

from __future__ import annotations

import gc
import logging
import os
import threading
import time
from typing import TYPE_CHECKING

from server.log import NOTICE
from server.persistence.aof import AppendOnlyFile
from server.persistence.resp import encode_command
from server.persistence.snapshot import dataset_commands

if TYPE_CHECKING:
    from server.keyspace import Keyspace

log = logging.getLogger("rivulet")


def write_snapshot(keyspace: Keyspace, path: str) -> None:
    """Write the whole dataset as commands to path, fsynced (used by the child and by SAVE)."""
    with open(path, "wb", buffering=1024 * 1024) as fh:
        batch: list[bytes] = []
        size = 0
        for argv in dataset_commands(keyspace):
            data = encode_command(argv)
            batch.append(data)
            size += len(data)
            if size > 1024 * 1024:
                fh.write(b"".join(batch))
                batch.clear()
                size = 0
        fh.write(b"".join(batch))
        fh.flush()
        os.fsync(fh.fileno())


class Rewriter:
    """One background rewrite at a time; the server cron calls `poll()` to finish it."""

    def __init__(self, keyspace: Keyspace, aof: AppendOnlyFile) -> None:
        self.keyspace = keyspace
        self.aof = aof
        self.child_pid: int | None = None
        self.tmp_path: str | None = None
        self.started = 0.0
        self.last_status = "ok"
        self.last_duration = -1
        self.rewrites = 0
        self.consecutive_failures = 0
        self.scheduled = False
        self.fork_ms = 0.0
        self._catch_up: threading.Thread | None = None
        self._catch_up_error: str | None = None
        self._caught_up = 0

    def start(self) -> None:
        """Fork the child that writes the snapshot. Raises OSError when fork fails."""
        self.aof.flush()
        directory = os.path.dirname(os.path.abspath(self.aof.path))
        self.aof.start_rewrite_buffer()
        # Objects the collector would visit (and so write to) while the child runs would be
        # copied page by page: collections are paused until the child is done (the child, short
        # lived, inherits the pause). Pausing rather than gc.freeze()/unfreeze() leaves the
        # objects frozen at startup (server/cli.py) frozen.
        gc.disable()
        t0 = time.perf_counter()
        try:
            pid = os.fork()
        except OSError:
            gc.enable()
            raise
        if pid == 0:  # child: write and leave without running any parent cleanup
            code = 1
            try:
                path = os.path.join(directory, f"temp-rewriteaof-bg-{os.getpid()}.aof")
                write_snapshot(self.keyspace, path)
                code = 0
            finally:
                os._exit(code)
        self.fork_ms = (time.perf_counter() - t0) * 1000
        self.child_pid = pid
        self.tmp_path = os.path.join(directory, f"temp-rewriteaof-bg-{pid}.aof")
        self.started = time.monotonic()
        self.scheduled = False
        log.log(NOTICE, "Background append only file rewriting started by pid %d (fork took %.1f ms)",
                pid, self.fork_ms)

    def poll(self) -> None:
        """Advance a running rewrite (non-blocking): child done -> catch up -> install."""
        if self._catch_up is not None:
            if self._catch_up.is_alive():
                return
            self._catch_up = None
            if self._catch_up_error is not None:
                self._failed(self._catch_up_error)
                return
            self._install()
            return
        if self.child_pid is None:
            return
        pid, status = os.waitpid(self.child_pid, os.WNOHANG)
        if pid == 0:
            return
        self.child_pid = None
        if os.waitstatus_to_exitcode(status) != 0:
            self._failed("child exited with an error")
            return
        # What arrived during the rewrite can be large: append and fsync it off the event loop,
        # and leave only what arrives meanwhile for the final, short step.
        self.aof.flush()
        buffered = bytes(self.aof.rewrite_buf or b"")
        self._caught_up = len(buffered)
        self._catch_up_error = None
        self._catch_up = threading.Thread(target=self._append_tail, args=(buffered,),
                                          name="aof-rewrite-tail", daemon=True)
        self._catch_up.start()

    @property
    def in_progress(self) -> bool:
        return self.child_pid is not None or self._catch_up is not None

    def _append_tail(self, data: bytes) -> None:
        try:
            assert self.tmp_path is not None
            with open(self.tmp_path, "ab") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            self._catch_up_error = exc.strerror or str(exc)

    def _install(self) -> None:
        assert self.tmp_path is not None
        self.aof.flush()
        tail = bytes((self.aof.rewrite_buf or b"")[self._caught_up:])
        try:
            with open(self.tmp_path, "ab") as fh:
                fh.write(tail)
                fh.flush()
                os.fsync(fh.fileno())
            self.aof.switch_to(self.tmp_path)
        except OSError as exc:
            self._failed(exc.strerror or str(exc))
            return
        self.tmp_path = None
        gc.enable()
        self.last_duration = int(time.monotonic() - self.started)
        self.last_status = "ok"
        self.rewrites += 1
        self.consecutive_failures = 0
        log.log(NOTICE, "Background AOF rewrite finished successfully")

    def _failed(self, why: str) -> None:
        gc.enable()
        log.warning("Background AOF rewrite failed: %s", why)
        self.last_status = "err"
        self.consecutive_failures += 1
        self.aof.drop_rewrite_buffer()
        if self.tmp_path:
            try:
                os.unlink(self.tmp_path)
            except OSError:
                pass
            self.tmp_path = None

    def kill(self) -> None:
        """Abort a running rewrite (shutdown, CONFIG SET appendonly no)."""
        if self._catch_up is not None:
            self._catch_up.join()
            self._catch_up = None
            self._failed("killed")
            return
        if self.child_pid is None:
            return
        try:
            os.kill(self.child_pid, 9)
            os.waitpid(self.child_pid, 0)
        except OSError:
            pass
        self.child_pid = None
        self._failed("killed")
