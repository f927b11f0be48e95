"""Persistence as the server sees it: load at start (the AOF, or dump.rdb), the AOF as a consumer
of effects and its rewrite, dump.rdb snapshots (SAVE, BGSAVE, save points), shut down."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from server import used_memory
from server.log import NOTICE
from server.persistence.aof import AppendOnlyFile, fsync_dir
from server.persistence.loader import AofLoadError, load_aof, load_aof_sync
from server.persistence.rdb_saver import RdbSaver
from server.persistence.rewrite import Rewriter, write_snapshot
from server.rdb.file import LoadStats, RdbLoadError, load_rdb, rdb_error_text

if TYPE_CHECKING:
    from server.connection import Client
    from server.server import Server

log = logging.getLogger("rivulet")

# Redis's CONFIG_BGSAVE_RETRY_DELAY: after a failed background save, save points wait this long
# before trying again.
BGSAVE_RETRY_DELAY = 5

# Redis's shared.bgsaveerr.
RDB_MISCONF = (
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to "
    "disk. Commands that may modify the data set are disabled, because this instance is "
    "configured to report errors during writes if RDB snapshotting fails "
    "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB "
    "error."
)


class RdbStartupError(AofLoadError):
    """dump.rdb cannot be loaded: start-up stops (the message names the file and the offset)."""


class Persistence:
    def __init__(self, server: Server) -> None:
        self.server = server
        self.aof: AppendOnlyFile | None = None
        self.rewriter: Rewriter | None = None
        # Clients whose replies wait for the AOF to be written (appendfsync always + write error).
        self.held: set[Client] = set()
        self.loaded_commands = 0
        self.last_save = int(time.time())
        self.saves = 0  # rdb_saves: SAVE and BGSAVE attempts
        self.rdb = RdbSaver(server.keyspace, server.config)
        self.lastbgsave_status = "ok"
        self.lastbgsave_try = 0
        self.last_bgsave_seconds = -1
        self.bgsave_scheduled = False
        self.dirty_before_bgsave = 0
        self.keys_loaded = 0
        self.keys_expired = 0
        # Set when the data on disk could not be loaded: nothing may overwrite it on the way out.
        self.load_failed = False
        # The AUX fields of the dump.rdb loaded at start-up (appendonly no): the replication
        # history it carries is taken back from them (server/replication/save_info.py).
        self.start_aux: list[tuple[bytes, bytes]] = []
        self.loaded_aux: list[tuple[bytes, bytes]] = []
        config = server.config
        config.on_change("appendonly", self._appendonly_changed)
        # Whether a failed background save refuses writes depends on these: re-decided at once.
        config.on_change("stop-writes-on-bgsave-error", lambda _value: self._sync_error_state())
        config.on_change("save", lambda _value: self._sync_error_state())
        config.on_change("appendfsync", self._fsync_changed)

    @property
    def path(self) -> str:
        cfg = self.server.config
        return os.path.join(cfg["dir"], cfg["appendfilename"])

    # --- start-up --------------------------------------------------------------------------

    @property
    def rdb_path(self) -> str:
        return self.rdb.path()

    async def start(self) -> None:
        """Load the data at start-up: with appendonly yes the AOF (if it exists), else dump.rdb
        (if it exists). Then open the AOF for appending when it is on."""
        cfg = self.server.config
        if not cfg["appendonly"]:
            if os.path.exists(self.rdb_path):
                await self._load_rdb_file(self.rdb_path)
                self.start_aux = self.loaded_aux
            return
        path = self.path
        if os.path.exists(path) and os.path.getsize(path) > 0:
            self._set_loading(True, os.path.getsize(path))
            started = time.monotonic()
            try:
                self.loaded_commands = await load_aof(self.server, path)
            except AofLoadError:
                self.load_failed = True
                raise
            finally:
                self._set_loading(False)
            log.log(NOTICE, "DB loaded from append only file: %.3f seconds (%d commands)",
                     time.monotonic() - started, self.loaded_commands)
        elif os.path.exists(self.rdb_path):
            # No AOF yet but a dump.rdb (a dataset brought from Redis, or saved with appendonly
            # no): it is loaded, and the AOF starts as a snapshot of it, so nothing is lost.
            # Redis would start empty here; its appendonly default is no, ours is yes.
            await self._load_rdb_file(self.rdb_path)
            self._write_aof_snapshot()
        self._open()

    async def _load_rdb_file(self, path: str) -> None:
        self._set_loading(True, os.path.getsize(path))
        started = time.monotonic()
        # Loading creates millions of objects and frees none: collections would only walk them.
        collecting = gc.isenabled()
        gc.disable()
        try:
            loader = self._rdb_loader(path)
            for _ in loader:
                await asyncio.sleep(0)
        finally:
            if collecting:
                gc.enable()
            self._set_loading(False)
        log.log(NOTICE, "DB loaded from disk: %.3f seconds", time.monotonic() - started)

    def _rdb_loader(self, path: str) -> Iterator[None]:
        """Load dump.rdb into the (empty) keyspace, yielding now and then; on damage, leave the
        keyspace empty and raise RdbStartupError."""
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            self.load_failed = True
            raise RdbStartupError(
                f"Fatal error: can't open the RDB file {path} for reading: {exc.strerror}") from None
        stats = LoadStats()
        self.keys_loaded = self.keys_expired = 0
        keyspace = self.server.keyspace
        progress = self.server.loading_progress
        try:
            for _ in load_rdb(data, keyspace, self.server.config, stats):
                progress.advance(stats.loaded_bytes, stats.info.aux)
                yield
        except RdbLoadError as exc:
            self.load_failed = True
            for db in keyspace.dbs:
                db.flush()
            keyspace.dirty = 0
            raise RdbStartupError(rdb_error_text(path, exc, len(data))) from None
        finally:
            self.keys_loaded = stats.keys_loaded
            self.keys_expired = stats.keys_expired
        self.loaded_aux = stats.info.aux
        for name, value in stats.info.aux:
            if name == b"redis-ver":
                log.log(NOTICE, "Loading RDB produced by version %s", value.decode("utf-8", "replace"))
        log.log(NOTICE, "Done loading RDB, keys loaded: %d, keys expired: %d.",
                stats.keys_loaded, stats.keys_expired)
        keyspace.dirty = 0

    def _write_aof_snapshot(self) -> None:
        tmp = self.path + ".tmp"
        write_snapshot(self.server.keyspace, tmp)
        os.replace(tmp, self.path)
        fsync_dir(self.path)

    def _open(self) -> None:
        self.aof = AppendOnlyFile(self.path, self.server.config["appendfsync"])
        self.aof.effects = self.server.effects
        self.aof.open()
        self.rewriter = Rewriter(self.server.keyspace, self.aof)
        # From now on every command's effects are appended (server/effects.py).
        self.server.effects.register(self.aof)

    def _set_loading(self, loading: bool, size: int = 0) -> None:
        # What replaying the file does is already in it: it is not handed on as effects.
        if loading:
            self.server.loading_progress.start(size)
        self.server.loading = loading
        self.server.effects.suspended = loading
        if not loading:
            used_memory.track(self.server.keyspace)  # the loaded keys, in the memory figure

    # --- the write path --------------------------------------------------------------------

    def before_reply(self, client: Client) -> bool:
        """Write pending AOF data before replies leave. False: the client must hold its replies.

        Called while `effects.replies_wait` says it may have to (see server/effects.py)."""
        ok = self._before_reply(client)
        aof = self.aof
        self.server.effects.replies_wait = bool(self.held) or (aof is not None and bool(aof.buf))
        return ok

    def _before_reply(self, client: Client) -> bool:
        aof = self.aof
        if aof is None or not aof.buf:
            return client not in self.held if self.held else True
        ok = aof.flush()
        self._sync_error_state()
        if not ok and aof.fsync_policy == "always":
            self.held.add(client)
            return False
        return True

    def _sync_error_state(self) -> None:
        """Writes are refused (MISCONF) exactly while the last background save failed (with save
        points and stop-writes-on-bgsave-error) or the last AOF write failed."""
        aof = self.aof
        cfg = self.server.config
        server = self.server
        if (self.lastbgsave_status == "err" and cfg["stop-writes-on-bgsave-error"]
                and cfg["save"]):
            server.disk_error = RDB_MISCONF
            server.refresh_write_error()
        elif aof is not None and aof.last_write_error is not None:
            server.disk_error = f"MISCONF Errors writing to the AOF file: {aof.last_write_error}"
            server.refresh_write_error()
        elif server.disk_error is not None:
            server.disk_error = None
            server.refresh_write_error()
            held, self.held = self.held, set()
            for client in held:
                client.flush()

    # --- housekeeping ----------------------------------------------------------------------

    def cron(self) -> None:
        aof = self.aof
        if aof is not None:
            if aof.buf or aof.last_write_error is not None:
                aof.flush()
        self._poll_bgsave()
        self._sync_error_state()
        rewriter = self.rewriter
        if rewriter is not None:
            rewriter.poll()
        if self.has_child():
            return
        now = int(time.time())
        may_retry = now - self.lastbgsave_try > BGSAVE_RETRY_DELAY or self.lastbgsave_status == "ok"
        points = self.server.config["save"]
        dirty = self.server.keyspace.dirty
        for i in range(0, len(points), 2):
            seconds, changes = points[i], points[i + 1]
            if dirty >= changes and now - self.last_save > seconds and may_retry:
                log.log(NOTICE, "%d changes in %d seconds. Saving...", changes, seconds)
                self._try_bgsave()
                return
        if rewriter is not None and (rewriter.scheduled or self._auto_rewrite_due()):
            self.start_rewrite()
            return
        if self.bgsave_scheduled and may_retry and self._try_bgsave():
            self.bgsave_scheduled = False

    def _try_bgsave(self) -> bool:
        try:
            self.bgsave()
        except OSError as exc:
            log.warning("Can't save in background: fork: %s", exc.strerror)
            return False
        return True

    def _poll_bgsave(self) -> None:
        if not self.rdb.in_progress:
            return
        started = self.rdb.started
        result = self.rdb.poll()
        if self.rdb.child_pid is not None:
            return
        self.last_bgsave_seconds = int(time.monotonic() - started)
        if result is True:
            ks = self.server.keyspace
            ks.dirty = max(ks.dirty - self.dirty_before_bgsave, 0)
            self.last_save = int(time.time())
            self.lastbgsave_status = "ok"
        elif result is False:
            self.lastbgsave_status = "err"

    def has_child(self) -> bool:
        """A background save or AOF rewrite runs (Redis's hasActiveChildProcess)."""
        return self.rdb.in_progress or (self.rewriter is not None and self.rewriter.in_progress)

    def _auto_rewrite_due(self) -> bool:
        aof = self.aof
        cfg = self.server.config
        percentage = cfg["auto-aof-rewrite-percentage"]
        if aof is None or not percentage or aof.size < cfg["auto-aof-rewrite-min-size"]:
            return False
        base = aof.base_size or 1
        return (aof.size - base) * 100 // base >= percentage

    # --- commands --------------------------------------------------------------------------

    def start_rewrite(self) -> None:
        """BGREWRITEAOF; raises OSError when the child cannot be forked."""
        if self.rewriter is None:
            raise RuntimeError("append only file is off")
        self.rewriter.start()

    def rewrite_without_aof(self) -> None:
        """BGREWRITEAOF with appendonly no: the AOF is written once, as a snapshot."""
        self._write_aof_snapshot()

    def save(self) -> None:
        """SAVE: write dump.rdb now (raises OSError, logged)."""
        try:
            self.rdb.save()
        except OSError as exc:
            log.warning("Write error saving DB on disk: %s", exc.strerror or exc)
            raise
        log.log(NOTICE, "DB saved on disk")
        self.server.keyspace.dirty = 0
        self.last_save = int(time.time())
        self.lastbgsave_status = "ok"
        self._sync_error_state()

    def bgsave(self) -> None:
        """BGSAVE: fork the child that writes dump.rdb (raises OSError when fork fails)."""
        self.saves += 1
        self.dirty_before_bgsave = self.server.keyspace.dirty
        self.lastbgsave_try = int(time.time())
        try:
            self.rdb.start()
        except OSError:
            self.lastbgsave_status = "err"
            raise

    def after_flushall(self) -> None:
        """FLUSHALL, as Redis's flushAllDataAndResetRDB: a running background save is stopped
        (it would bring the old data back), and with save points the now empty dataset is saved
        at once, so that a restart does not resurrect what was flushed."""
        self.rdb.kill()
        if self.server.loading or not self.server.config["save"]:
            return
        try:
            self.save()
        except OSError:
            pass  # logged; the next save point tries again
        self.server.keyspace.dirty += 1

    def reload(self, save_first: bool) -> None:
        """DEBUG RELOAD (save dump.rdb, then load it) / DEBUG LOADAOF (load the AOF as it is)."""
        if save_first:
            self.saves += 1
            self.save()
            path = self.rdb_path
        else:
            if self.aof is not None:
                self.aof.flush()
                self.aof.fsync_now()
            path = self.path
        for db in self.server.keyspace.dbs:
            db.flush()
        if not os.path.exists(path):
            return
        self._set_loading(True, os.path.getsize(path))
        try:
            if save_first:
                for _ in self._rdb_loader(path):
                    pass
                self.load_failed = False
            else:
                self.loaded_commands = load_aof_sync(self.server, path)
        finally:
            self._set_loading(False)

    def prepare_shutdown(self, save: bool, nosave: bool, force: bool) -> bool:
        """The persistence steps of SHUTDOWN (Redis's finishShutdown): stop background children,
        flush the AOF, and save dump.rdb when asked or when save points are set (unless NOSAVE).
        False when the save failed and FORCE was not given: the server must keep running."""
        if self.server.loading or self.load_failed:
            save, nosave = False, True
        self.rdb.kill()
        if self.rewriter is not None and self.rewriter.in_progress:
            log.warning("There is a child rewriting the AOF. Killing it!")
            self.rewriter.kill()
        if self.aof is not None:
            log.log(NOTICE, "Calling fsync() on the AOF file.")
            self.aof.flush()
            self.aof.fsync_now()
        if (self.server.config["save"] and not nosave) or save:
            log.log(NOTICE, "Saving the final RDB snapshot before exiting.")
            try:
                self.save()
            except OSError:
                if not force:
                    log.warning("Error trying to save the DB, can't exit.")
                    log.warning("Errors trying to shut down the server. Check the logs for more "
                                "information.")
                    return False
                log.warning("Error trying to save the DB. Exit anyway.")
        return True

    def shutdown(self, save: bool | None) -> None:
        """Close what is open (the steps that may fail ran in prepare_shutdown). `save` True
        saves dump.rdb first, for callers that did not prepare."""
        if save and not self.load_failed:
            self.prepare_shutdown(True, False, True)
        self.rdb.kill()
        if self.rewriter is not None:
            self.rewriter.kill()
        if self.aof is not None:
            self.server.effects.unregister(self.aof)
            self.aof.close()
            log.log(NOTICE, "Append only file fsynced and closed")

    # --- run-time changes ------------------------------------------------------------------

    def _appendonly_changed(self, value: bool) -> None:
        if value and self.aof is None:
            # Turning persistence on writes the current dataset first, as Redis does.
            self._write_aof_snapshot()
            self._open()
        elif not value and self.aof is not None:
            self._close_aof()
            self.server.disk_error = None
            self.server.refresh_write_error()

    def stop_children(self) -> None:
        """A replica is about to replace its dataset with its master's: a background save or
        AOF rewrite of the old one would bring it back (Redis kills them too)."""
        self.rdb.kill()
        if self.rewriter is not None and self.rewriter.in_progress:
            self.rewriter.kill()

    def restart_aof_after_sync(self) -> None:
        """A replica loaded its master's snapshot: the AOF starts again as a snapshot of the new
        dataset (Redis's restartAOFAfterSYNC), then logs what the master's stream changes."""
        if self.aof is None:
            return
        self._close_aof()
        self._write_aof_snapshot()
        self._open()

    def _close_aof(self) -> None:
        """Stop logging: a running rewrite is killed, the file closed, effects no longer taken."""
        assert self.aof is not None
        if self.rewriter is not None:
            self.rewriter.kill()
        self.server.effects.unregister(self.aof)
        self.aof.close()
        self.aof = None
        self.rewriter = None

    def _fsync_changed(self, value: str) -> None:
        if self.aof is not None:
            self.aof.fsync_policy = value
