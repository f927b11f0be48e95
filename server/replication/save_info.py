"""The replication history an RDB file carries, so that a restarted server continues it.

Redis writes the AUX fields `repl-stream-db`, `repl-id` and `repl-offset` into dump.rdb (SAVE,
BGSAVE, save points, SHUTDOWN) and into the snapshot a full resynchronization sends, whenever
the server takes part in replication (rdbPopulateSaveInfo, rdbSaveInfoAuxFields). At start-up,
a server that loads such a dump.rdb takes the history back (loadDataFromDisk):

- a replica takes the ID and offset as its own and as a cached master, so its first PSYNC asks
  to continue from where it stopped and gets +CONTINUE;
- a master keeps them as its secondary ID (valid up to that offset) with a backlog starting
  there, so its replicas, which cached that history, continue too.

An AOF carries no such fields: Redis 7.4 neither writes them into an AOF nor reads them back
from one, and neither does this server.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, NamedTuple

from server.replication.state import REPLID_SIZE

if TYPE_CHECKING:
    from server.server import Server

log = logging.getLogger("rivulet")


class SaveInfo(NamedTuple):
    """Redis's rdbSaveInfo: the stream's database, the history's ID and its last offset."""

    stream_db: int
    replid: str
    offset: int

    def aux_fields(self) -> list[tuple[bytes, bytes]]:
        return [(b"repl-stream-db", b"%d" % self.stream_db),
                (b"repl-id", self.replid.encode()),
                (b"repl-offset", b"%d" % self.offset)]


def current(server: Server) -> SaveInfo | None:
    """What an RDB saved now carries (rdbPopulateSaveInfo); None when this server is in no
    replication chain (a master without a backlog, a replica that never had its master's
    data)."""
    master = server.replication
    state = master.state
    link = server.master_link
    if link.host is None:
        if state.backlog is None:
            return None
        # -1: nothing was written since the last full resync; the next write states its db.
        db = master.stream.selected_db if master.stream.selected_db != -1 else 0
        return SaveInfo(db, state.replid, state.master_repl_offset)
    if link.master is not None:
        return SaveInfo(link.master.db.index, state.replid, state.master_repl_offset)
    if link.cached is not None:
        return SaveInfo(link.cached.db, state.replid, state.master_repl_offset)
    return None


def parse(aux: list[tuple[bytes, bytes]]) -> SaveInfo | None:
    """The history named by a loaded RDB's AUX fields, when all three are valid (Redis's
    checks in rdbLoadRio and loadDataFromDisk)."""
    db = -1
    replid = ""
    offset = -1
    for name, value in aux:
        lowered = name.lower()
        try:
            if lowered == b"repl-stream-db":
                db = int(value)
            elif lowered == b"repl-id" and len(value) == REPLID_SIZE:
                replid = value.decode("ascii")
            elif lowered == b"repl-offset":
                offset = int(value)
        except (ValueError, UnicodeDecodeError):
            continue
    if not replid or offset == -1 or db == -1:
        return None
    return SaveInfo(db, replid, offset)


def restore_loaded(server: Server) -> None:
    """After start-up loading: continue the history the loaded dump.rdb carries, if any."""
    info = parse(server.persistence.start_aux)
    if info is not None:
        restore(server, info)


def restore(server: Server, info: SaveInfo) -> None:
    """After start-up loading: continue the saved history, as a replica (replicaof set in the
    configuration) or as a master."""
    if server.config["replicaof"] is not None:
        server.master_link.restore_cached(info.replid, info.offset, info.stream_db)
    else:
        server.replication.restore_history(info.replid, info.offset)
