"""Effects: the commands that redo each change to the dataset, and who receives them.

One path, as Redis's alsoPropagate + call(): a write command (or the engine call it makes, or
the keyspace when a key expires) appends to the pending list, as it makes each change, the
commands that reproduce it deterministically: its argv as sent, or a rewritten form (SET +
PEXPIREAT for a relative expiry, XADD with the ID it generated, XCLAIM ... FORCE JUSTID for a
delivery, DEL for a key that expired). When the command ends, dispatch hands the list to every
consumer (`propagate_pending`): once per command, or once per EXEC with MULTI/EXEC around what
the transaction wrote. The AOF is a consumer, and so is the replication stream
(server/replication/stream.py), registered the same way, without any command knowing. Each
unit is encoded once (`Effects.encode`): consumers whose selected database agrees get the same
bytes, so the AOF and the replicas read the same stream and the write path encodes it once.

One list serves the whole server: commands run one at a time, and an expiry met in the middle
of a command belongs to that command's unit, in the order it happened.
"""

from __future__ import annotations

from typing import Protocol

# (database index, argv): each consumer follows the database itself (the AOF writes a SELECT
# when it changes). In place of an argv, bytes: commands already in their RESP form, which a run
# handler encodes for all the calls of its run at once (`Effects.add_encoded`).
Effect = tuple[int, list[bytes] | bytes]

# Headers of the usual sizes, made once (as the reply encoder does).
ARRAY_HEADERS = [b"*%d\r\n" % n for n in range(64)]
BULK_HEADERS = [b"$%d\r\n" % n for n in range(1024)]
_MULTI = b"*1\r\n$5\r\nMULTI\r\n"
_EXEC = b"*1\r\n$4\r\nEXEC\r\n"


def encode_effects(effects: list[Effect], transaction: bool, selected_db: int) -> tuple[bytes, int]:
    """One unit as a stream of RESP commands (what the AOF appends, and what a replica would
    read): a SELECT where the database differs from the one selected before, MULTI ... EXEC
    around a transaction. Returns the bytes and the database selected after them."""
    parts: list[bytes] = []
    if transaction:
        parts.append(_MULTI)
    for db, argv in effects:
        if db != selected_db:
            name = b"%d" % db
            parts.append(b"*2\r\n$6\r\nSELECT\r\n$%d\r\n%s\r\n" % (len(name), name))
            selected_db = db
        if isinstance(argv, bytes):
            parts.append(argv)
            continue
        n = len(argv)
        parts.append(ARRAY_HEADERS[n] if n < 64 else b"*%d\r\n" % n)
        for arg in argv:
            m = len(arg)
            parts.append(BULK_HEADERS[m] if m < 1024 else b"$%d\r\n" % m)
            parts.append(arg)
            parts.append(b"\r\n")
    if transaction:
        parts.append(_EXEC)
    return b"".join(parts), selected_db


class EffectsConsumer(Protocol):
    def propagate(self, effects: list[Effect], transaction: bool) -> None:
        """Take one command's effects (or one EXEC's, with transaction=True), in order."""


class Effects:
    def __init__(self) -> None:
        self.consumers: list[EffectsConsumer] = []
        # Whether anyone receives effects: without a consumer, commands build none.
        self.active = False
        self.pending: list[Effect] = []
        # The pending effects are an EXEC's: consumers get them as one transaction.
        self.transaction = False
        # While a file loads, what the loading does is not handed on (it is already logged).
        self.suspended = False
        # The replication offset once the last effects were handed on (the replication stream
        # keeps it): each client remembers it after its writes, for WAIT.
        self.repl_offset = 0
        # The unit being handed on, encoded for the first consumer (see encode).
        self.encoded_for: list[Effect] | None = None
        self.encoded_db = -1
        self.encoded = b""
        self.encoded_db_after = -1
        # Replies must pass persistence's check before they leave (Persistence.before_reply):
        # the AOF holds effects not yet written, or clients are held behind a failed write.
        # Set when either may be so, cleared by the check: a read under the AOF skips the call.
        self.replies_wait = False

    def register(self, consumer: EffectsConsumer) -> None:
        if consumer not in self.consumers:
            self.consumers.append(consumer)
        self.active = True

    def unregister(self, consumer: EffectsConsumer) -> None:
        if consumer in self.consumers:
            self.consumers.remove(consumer)
        self.active = bool(self.consumers)

    def add(self, db: int, argv: list[bytes]) -> None:
        """Record argv, run in database db, as (part of) the running command's effect."""
        if self.active:
            self.pending.append((db, argv))

    def add_encoded(self, db: int, data: bytes) -> None:
        """Record commands already encoded as RESP (what encode_effects makes of their argvs),
        run in database db: a run handler's effects for all of its calls, built in one go."""
        if self.active:
            self.pending.append((db, data))

    def end_transaction(self) -> None:
        """EXEC ran its commands: what they did goes out as one MULTI ... EXEC (if anything)."""
        self.transaction = bool(self.pending)

    def propagate_pending(self) -> None:
        """Hand the pending effects to every consumer, and start an empty list."""
        effects = self.pending
        transaction = self.transaction
        self.pending = []
        self.transaction = False
        if not effects or self.suspended:
            return
        for consumer in self.consumers:
            consumer.propagate(effects, transaction)
        self.encoded_for = None
        self.encoded = b""

    def encode(self, effects: list[Effect], transaction: bool, selected_db: int) -> tuple[bytes, int]:
        """encode_effects for a consumer of the unit being handed on: encoded once, the same
        bytes for every consumer that had the same database selected before it."""
        if effects is self.encoded_for and selected_db == self.encoded_db:
            return self.encoded, self.encoded_db_after
        data, after = encode_effects(effects, transaction, selected_db)
        self.encoded_for = effects
        self.encoded_db = selected_db
        self.encoded = data
        self.encoded_db_after = after
        return data, after
