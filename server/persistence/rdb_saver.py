"""Saving dump.rdb: synchronously (SAVE, SHUTDOWN) or in a forked child (BGSAVE, save points).

The child inherits a copy-on-write snapshot of the keyspace, writes `temp-<childpid>.rdb` in the
data directory, fsyncs it and renames it over dump.rdb, as Redis's rdbSaveBackground does; the
parent keeps serving and learns the outcome from `poll()` (called by the server cron). The
collector is paused while the child runs, as for the AOF rewrite, so that its walks do not touch
(and so copy) every page the child still reads.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from server.log import NOTICE
from server.rdb.file import save_rdb

if TYPE_CHECKING:
    from server.config import Config
    from server.keyspace import Keyspace

log = logging.getLogger("rivulet")


class RdbSaver:
    def __init__(self, keyspace: Keyspace, config: Config) -> None:
        self.keyspace = keyspace
        self.config = config
        self.child_pid: int | None = None
        self.started = 0.0
        self.fork_ms = 0.0
        self.aborted = False
        # () -> the extra AUX fields of the next save (the replication history, set by the
        # replication side).
        self.aux: Callable[[], Sequence[tuple[bytes, bytes]]] = tuple

    @property
    def in_progress(self) -> bool:
        return self.child_pid is not None

    def path(self) -> str:
        return os.path.join(self.config["dir"], self.config["dbfilename"])

    def save(self) -> int:
        """Write dump.rdb now, in this process. Raises OSError; returns the keys saved."""
        return save_rdb(self.path(), self.keyspace, self.config, aux=self.aux())

    def start(self) -> None:
        """Fork the child that writes dump.rdb. Raises OSError when fork fails."""
        path = self.path()
        aux = self.aux()
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
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                save_rdb(path, self.keyspace, self.config, aux=aux)
                code = 0
            except BaseException as exc:  # the parent reports the failure; say why here
                try:
                    log.warning("Write error saving DB on disk: %s", exc)
                except BaseException:
                    pass
            finally:
                os._exit(code)
        self.fork_ms = (time.perf_counter() - t0) * 1000
        self.child_pid = pid
        self.started = time.monotonic()
        self.aborted = False
        log.log(NOTICE, "Background saving started by pid %d", pid)

    def poll(self) -> bool | None:
        """None while the child runs (or none runs); True / False when it just ended well / not.
        A child killed on purpose (kill) ends as neither."""
        if self.child_pid is None:
            return None
        pid, status = os.waitpid(self.child_pid, os.WNOHANG)
        if pid == 0:
            return None
        return self._reap(status)

    def _reap(self, status: int) -> bool | None:
        pid = self.child_pid
        self.child_pid = None
        gc.enable()
        code = os.waitstatus_to_exitcode(status)
        if self.aborted:
            self._remove_temp(pid)
            return None
        if code == 0:
            log.log(NOTICE, "Background saving terminated with success")
            return True
        if code < 0:
            log.warning("Background saving terminated by signal %d", -code)
            self._remove_temp(pid)
        else:
            log.warning("Background saving error")
        return False

    def _remove_temp(self, pid: int | None) -> None:
        if pid is None:
            return
        try:
            os.unlink(os.path.join(self.config["dir"], f"temp-{pid}.rdb"))
        except OSError:
            pass

    def kill(self) -> None:
        """Stop a running child (SHUTDOWN, FLUSHALL, a synchronous SAVE taking over)."""
        if self.child_pid is None:
            return
        log.warning("There is a child saving an .rdb. Killing it!")
        self.aborted = True
        try:
            os.kill(self.child_pid, signal.SIGUSR1)
            _, status = os.waitpid(self.child_pid, 0)
        except OSError:
            status = 0
        self._reap(status)
