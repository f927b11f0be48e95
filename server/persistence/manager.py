"""Persistence as the server sees it: load at start, the AOF as a consumer of effects, rewrite, shut down."""

from __future__ import annotations

import logging
import os
import time
from typing import TYPE_CHECKING

from server.log import NOTICE
from server.persistence.aof import AppendOnlyFile, fsync_dir
from server.persistence.loader import load_aof, load_aof_sync
from server.persistence.rewrite import Rewriter, write_snapshot

if TYPE_CHECKING:
    from server.connection import Client
    from server.server import Server

log = logging.getLogger("rivulet")


class Persistence:
    def __init__(self, server: Server) -> None:
        self.server = server
        self.aof: AppendOnlyFile | None = None
        self.rewriter: Rewriter | None = None
        # Clients whose replies wait for the AOF to be written (appendfsync always + write error).
        self.held: set[Client] = set()
        self.loaded_commands = 0
        self.last_save = int(time.time())
        self.saves = 0
        config = server.config
        config.on_change("appendonly", self._appendonly_changed)
        config.on_change("appendfsync", self._fsync_changed)

    @property
    def path(self) -> str:
        cfg = self.server.config
        return os.path.join(cfg["dir"], cfg["appendfilename"])

    # --- start-up --------------------------------------------------------------------------

    async def start(self) -> None:
        """Load the AOF (if persistence is on and the file exists), then open it for appending."""
        if not self.server.config["appendonly"]:
            return
        path = self.path
        if os.path.exists(path) and os.path.getsize(path) > 0:
            self._set_loading(True)
            started = time.monotonic()
            try:
                self.loaded_commands = await load_aof(self.server, path)
            finally:
                self._set_loading(False)
            log.log(NOTICE, "DB loaded from append only file: %.3f seconds (%d commands)",
                     time.monotonic() - started, self.loaded_commands)
        self._open()

    def _open(self) -> None:
        self.aof = AppendOnlyFile(self.path, self.server.config["appendfsync"])
        self.aof.open()
        self.rewriter = Rewriter(self.server.keyspace, self.aof)
        # From now on every command's effects are appended (server/effects.py).
        self.server.effects.register(self.aof)

    def _set_loading(self, loading: bool) -> None:
        # What replaying the file does is already in it: it is not handed on as effects.
        self.server.loading = loading
        self.server.effects.suspended = loading

    # --- the write path --------------------------------------------------------------------

    def before_reply(self, client: Client) -> bool:
        """Write pending AOF data before replies leave. False: the client must hold its replies."""
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
        """Writes are refused (MISCONF) exactly while the last AOF write failed."""
        aof = self.aof
        if aof is not None and aof.last_write_error is not None:
            self.server.write_error = f"MISCONF Errors writing to the AOF file: {aof.last_write_error}"
        elif self.server.write_error is not None:
            self.server.write_error = None
            held, self.held = self.held, set()
            for client in held:
                client.flush()

    # --- housekeeping ----------------------------------------------------------------------

    def cron(self) -> None:
        aof = self.aof
        if aof is None:
            return
        if aof.buf or aof.last_write_error is not None:
            aof.flush()
        self._sync_error_state()
        rewriter = self.rewriter
        if rewriter is None:
            return
        was_running = rewriter.in_progress
        rewriter.poll()
        if was_running and not rewriter.in_progress and rewriter.last_status == "ok":
            self.last_save = int(time.time())
            self.saves += 1
            self.server.keyspace.dirty = 0
        if not rewriter.in_progress:
            if rewriter.scheduled or self._auto_rewrite_due():
                self.start_rewrite()

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

    def save(self) -> None:
        """SAVE: a point-in-time compaction, synchronous, into the AOF file itself."""
        if self.aof is None:
            # With persistence off, SAVE still writes a snapshot that a later start can load.
            tmp = self.path + ".tmp"
            write_snapshot(self.server.keyspace, tmp)
            os.replace(tmp, self.path)
            fsync_dir(self.path)
        else:
            if self.rewriter is not None and self.rewriter.in_progress:
                self.rewriter.kill()
            self.aof.flush()
            tmp = os.path.join(os.path.dirname(os.path.abspath(self.path)), f"temp-rewriteaof-{os.getpid()}.aof")
            write_snapshot(self.server.keyspace, tmp)
            self.aof.switch_to(tmp)
        self.server.keyspace.dirty = 0
        self.last_save = int(time.time())
        self.saves += 1

    def reload(self, save_first: bool) -> None:
        """DEBUG RELOAD (compact, then load the result) / DEBUG LOADAOF (load the file as is)."""
        if save_first:
            self.save()
        elif self.aof is not None:
            self.aof.flush()
            self.aof.fsync_now()
        for db in self.server.keyspace.dbs:
            db.flush()
        if not os.path.exists(self.path):
            return
        self._set_loading(True)
        try:
            self.loaded_commands = load_aof_sync(self.server, self.path)
        finally:
            self._set_loading(False)

    def shutdown(self, save: bool | None) -> None:
        if self.rewriter is not None:
            self.rewriter.kill()
        if save:
            try:
                self.save()
            except OSError as exc:
                log.warning("Error saving on shutdown: %s", exc)
        if self.aof is not None:
            self.server.effects.unregister(self.aof)
            self.aof.close()
            log.log(NOTICE, "Append only file fsynced and closed")

    # --- run-time changes ------------------------------------------------------------------

    def _appendonly_changed(self, value: bool) -> None:
        if value and self.aof is None:
            # Turning persistence on writes the current dataset first, as Redis does.
            tmp = self.path + ".tmp"
            write_snapshot(self.server.keyspace, tmp)
            os.replace(tmp, self.path)
            fsync_dir(self.path)
            self._open()
        elif not value and self.aof is not None:
            if self.rewriter is not None:
                self.rewriter.kill()
            self.server.effects.unregister(self.aof)
            self.aof.close()
            self.aof = None
            self.rewriter = None
            self.server.write_error = None

    def _fsync_changed(self, value: str) -> None:
        if self.aof is not None:
            self.aof.fsync_policy = value
