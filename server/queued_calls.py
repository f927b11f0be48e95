"""The calls a transaction queues between MULTI and EXEC.

A transaction can queue a hundred thousand calls (the Spark sink writes a partition as one
MULTI/EXEC). Kept as one argv list per call, each queued call would be a container the garbage
collector tracks, and every young collection during the transaction would walk the queue's
newest calls, then move them on to be walked again by the older generations: on a sink
partition of 100,000 XADDs that was a fifth of the server's CPU. Here a call costs no tracked
object: its command goes into one list, its arguments into one flat list and its end offset
into a list of ints, so the argv list the parser made dies as soon as it is queued. EXEC takes
the calls back as argv lists a bounded slice at a time (`argvs`).

Those three lists are still walked by the collector while they are young: a 100,000-call
queue's flat list is a million references, and each young collection that found it there took
about 7 ms. So a transaction's lists are reused by the next one (`new_queue` / `spare`): after
their first transactions they sit in the oldest generation, which only full collections walk.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from server.command_table import Command

# Queues kept for reuse: as many as clients likely to be in MULTI at once.
SPARES: Final = 64


class QueuedCalls:
    __slots__ = ("commands", "args", "ends")

    def __init__(self) -> None:
        self.commands: list[Command] = []
        # Every call's arguments, the command name included, one after the other.
        self.args: list[bytes] = []
        # Where each call's arguments end in args.
        self.ends: list[int] = []

    def append(self, cmd: Command, argv: list[bytes]) -> None:
        self.commands.append(cmd)
        args = self.args
        args.extend(argv)
        self.ends.append(len(args))

    def __len__(self) -> int:
        return len(self.commands)

    def argv(self, i: int) -> list[bytes]:
        """Call i's arguments, as a new list."""
        ends = self.ends
        return self.args[ends[i - 1] if i else 0:ends[i]]

    def argvs(self, start: int, stop: int) -> list[list[bytes]]:
        """The arguments of calls start to stop (excluded), each as a new list."""
        args = self.args
        ends = self.ends
        begin = ends[start - 1] if start else 0
        out: list[list[bytes]] = []
        for i in range(start, stop):
            end = ends[i]
            out.append(args[begin:end])
            begin = end
        return out

    def clear(self) -> None:
        # The lists stay (and keep their generation); their items go.
        self.commands.clear()
        self.args.clear()
        self.ends.clear()


_spares: list[QueuedCalls] = []


def new_queue() -> QueuedCalls:
    """An empty queue for a MULTI: a spare one if there is one."""
    return _spares.pop() if _spares else QueuedCalls()


def spare(queue: QueuedCalls) -> None:
    """The transaction of queue ended (EXEC ran it, DISCARD or an abort dropped it)."""
    if len(_spares) < SPARES:
        queue.clear()
        _spares.append(queue)
