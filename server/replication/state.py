"""The server's replication identity and history: what Redis keeps in `server.replid`,
`server.replid2`, `server.master_repl_offset`, `server.second_replid_offset` and
`server.repl_backlog`, with Redis's rules for changing them (replication.c). No I/O.

Both sides use it. A master feeds the stream it sends to its replicas; a replica feeds the
stream it receives from its master (so that its own replicas, and a later promotion, continue
the same history: PSYNC2). The backlog exists only once replication is in use, as in Redis:
without it, fed bytes are dropped and the offset does not move.
"""

from __future__ import annotations

import secrets

from server.replication.backlog import MIN_SIZE, Backlog

# Redis's CONFIG_RUN_ID_SIZE.
REPLID_SIZE = 40
# replid2 when there is no previous history (Redis's clearReplicationId2).
NO_REPLID = "0" * REPLID_SIZE


def random_replid() -> str:
    """40 random hex characters (Redis's getRandomHexChars)."""
    return secrets.token_hex(REPLID_SIZE // 2)


class ReplicationState:
    """One per server."""

    def __init__(self, backlog_size: int = 1024 * 1024) -> None:
        # The ID of the current history and the offset of its last byte.
        self.replid: str = random_replid()
        self.master_repl_offset: int = 0
        # The previous history (the old master's, after a promotion), valid up to
        # second_replid_offset (the first byte of the new history); -1 without one.
        self.replid2: str = NO_REPLID
        self.second_replid_offset: int = -1
        # repl-backlog-size, used when the backlog is created or resized.
        self.backlog_size: int = max(backlog_size, MIN_SIZE)
        self.backlog: Backlog | None = None

    # -- the stream --------------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Append bytes of the replication stream (Redis's feedReplicationBuffer): they join
        the backlog and advance master_repl_offset. Without a backlog, nothing happens."""
        backlog = self.backlog
        if backlog is None:
            return
        backlog.append(data)
        self.master_repl_offset += len(data)

    def create_backlog(self) -> None:
        """Start keeping the stream; its next byte is master_repl_offset + 1."""
        if self.backlog is None:
            self.backlog = Backlog(self.backlog_size, self.master_repl_offset + 1)

    def free_backlog(self) -> None:
        self.backlog = None

    def resize_backlog(self, size: int) -> None:
        """repl-backlog-size changed (CONFIG SET): keep the most recent bytes that fit."""
        self.backlog_size = max(size, MIN_SIZE)
        if self.backlog is not None:
            self.backlog.resize(size)

    def start_master_history(self) -> None:
        """The first replica of a master without a backlog connects: a new history starts,
        since what was written while no backlog existed is not in any stream (Redis's
        syncCommand: changeReplicationId, clearReplicationId2, createReplicationBacklog)."""
        if self.backlog is None:
            self.change_replid()
            self.clear_replid2()
            self.create_backlog()

    # -- IDs ---------------------------------------------------------------------------------

    def change_replid(self) -> None:
        """A new random replication ID: no replica can continue the old history from us."""
        self.replid = random_replid()

    def clear_replid2(self) -> None:
        self.replid2 = NO_REPLID
        self.second_replid_offset = -1

    def shift_replid(self) -> None:
        """On promotion to master (Redis's shiftReplicationId): the history we followed becomes
        the secondary one, valid up to the next byte, and a new history starts, so replicas of
        the old master can continue from us."""
        self.replid2 = self.replid
        self.second_replid_offset = self.master_repl_offset + 1
        self.change_replid()

    def adopt(self, replid: str, offset: int) -> None:
        """A replica finished loading its master's snapshot taken at (replid, offset): it
        continues that history (readSyncBulkPayload), with no secondary one, and keeps a
        backlog from here on. The caller drops its own replicas and the old backlog first
        (Redis's replicationAttachToNewMaster) when the history changes."""
        self.replid = replid
        self.master_repl_offset = offset
        self.clear_replid2()
        self.create_backlog()

    # -- PSYNC -------------------------------------------------------------------------------

    def partial_resync_refusal(self, replid: str, offset: int) -> str | None:
        """Why `PSYNC replid offset` (offset: the first byte the replica is missing) needs a
        full resynchronization, in the words Redis logs; None when the replica can continue
        from the backlog (masterTryPartialResynchronization)."""
        asked = replid.lower()
        mine, mine2 = self.replid.lower(), self.replid2.lower()
        if asked != mine and (asked != mine2 or offset > self.second_replid_offset):
            if replid.startswith("?"):
                return "Full resync requested by replica"
            if asked != mine and asked != mine2:
                return ("Partial resynchronization not accepted: Replication ID mismatch "
                        "(Replica asked for '%s', my replication IDs are '%s' and '%s')"
                        % (replid, self.replid, self.replid2))
            return ("Partial resynchronization not accepted: Requested offset for second ID "
                    "was %d, but I can reply up to %d" % (offset, self.second_replid_offset))
        backlog = self.backlog
        if backlog is None or not backlog.covers(offset):
            return ("Unable to partial resync with replica for lack of backlog "
                    "(Replica request was: %d)." % offset)
        return None

    def can_continue(self, replid: str, offset: int) -> bool:
        return self.partial_resync_refusal(replid, offset) is None

    def backlog_from(self, offset: int) -> bytes:
        """The stream from offset to the end, for a replica that continues
        (can_continue(replid, offset) must hold)."""
        assert self.backlog is not None
        return self.backlog.read_from(offset)

    # -- what INFO shows ---------------------------------------------------------------------

    def info_fields(self) -> list[tuple[str, object]]:
        """master_replid ... repl_backlog_histlen, as INFO replication prints them."""
        backlog = self.backlog
        return [
            ("master_replid", self.replid),
            ("master_replid2", self.replid2),
            ("master_repl_offset", self.master_repl_offset),
            ("second_repl_offset", self.second_replid_offset),
            ("repl_backlog_active", 1 if backlog is not None else 0),
            ("repl_backlog_size", self.backlog_size),
            ("repl_backlog_first_byte_offset", backlog.first_byte_offset if backlog else 0),
            ("repl_backlog_histlen", backlog.histlen if backlog else 0),
        ]
