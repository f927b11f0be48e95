"""The snapshot a full resynchronization sends: an RDB written by a forked child (the
copy-on-write image of the keyspace at the fork, as Redis's rdbSaveToSlavesSockets and
rdbSaveBackground), either into a pipe the parent relays to replicas as it comes (diskless,
`$EOF:<mark>` framing), or into a file in `dir` sent as one `$<length>` bulk once complete.
"""

from __future__ import annotations

import fcntl
import gc
import logging
import os
import signal
from collections.abc import Sequence
from typing import TYPE_CHECKING

from server.effects import Effects
from server.keyspace import Keyspace
from server.log import NOTICE
from server.rdb.file import write_rdb

if TYPE_CHECKING:
    from server.config import Config

log = logging.getLogger("rivulet")


class SnapshotChild:
    """One forked child writing an RDB; `socket` tells the target."""

    def __init__(self, keyspace: Keyspace, config: Config, socket: bool, with_data: bool = True,
                 aux: Sequence[tuple[bytes, bytes]] = ()) -> None:
        self.socket = socket
        self.pid = 0
        self.read_fd = -1  # the pipe's read end (diskless)
        self.path = ""  # the file (disk)
        gc.disable()  # as for BGSAVE: collections would touch (and copy) the child's pages
        if socket:
            read_fd, write_fd = os.pipe()
        else:
            read_fd = write_fd = -1
        try:
            pid = os.fork()
        except OSError:
            gc.enable()
            if socket:
                os.close(read_fd)
                os.close(write_fd)
            raise
        if pid == 0:
            _child(keyspace, config, socket, with_data, read_fd, write_fd, aux)
        self.pid = pid
        if socket:
            os.close(write_fd)
            fcntl.fcntl(read_fd, fcntl.F_SETFL, fcntl.fcntl(read_fd, fcntl.F_GETFL) | os.O_NONBLOCK)
            self.read_fd = read_fd
        else:
            self.path = os.path.join(config["dir"], "temp-%d.rdb" % pid)
        log.log(NOTICE, "Background RDB transfer started by pid %d" if socket else
                "Background saving started by pid %d", pid)

    def poll(self, block: bool = False) -> bool | None:
        """None while it runs; True / False once it ended well / not (then reaped)."""
        if not self.pid:
            return None
        try:
            pid, status = os.waitpid(self.pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            pid, status = self.pid, 1 << 8
        if pid == 0:
            return None
        self.pid = 0
        gc.enable()
        return os.waitstatus_to_exitcode(status) == 0

    def kill(self) -> None:
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGUSR1)
            except OSError:
                pass
            self.poll(block=True)
        self.close()

    def close(self) -> None:
        if self.read_fd >= 0:
            os.close(self.read_fd)
            self.read_fd = -1
        if self.path:
            try:
                os.unlink(self.path)
            except OSError:
                pass
            self.path = ""


def _child(keyspace: Keyspace, config: Config, socket: bool, with_data: bool, read_fd: int,
           write_fd: int, aux: Sequence[tuple[bytes, bytes]]) -> None:
    code = 1
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGUSR1, signal.SIG_DFL)
        # A snapshot without the keys: an empty keyspace (the compiled writer takes no other).
        source = keyspace if with_data else Keyspace(1, Effects())
        if socket:
            os.close(read_fd)
            # A pipe cannot be fsynced: the incremental fsync of dump.rdb does not apply.
            config.values["rdb-save-incremental-fsync"] = False
            with os.fdopen(write_fd, "wb", buffering=1 << 16) as fh:
                write_rdb(fh, source, config, aux=aux)
        else:
            path = os.path.join(config["dir"], "temp-%d.rdb" % os.getpid())
            with open(path, "wb") as fh:
                write_rdb(fh, source, config, aux=aux)
                fh.flush()
                os.fsync(fh.fileno())
        code = 0
    except BaseException as exc:
        try:
            log.warning("Write error sending the RDB to replicas: %s", exc)
        except BaseException:
            pass
    finally:
        os._exit(code)
