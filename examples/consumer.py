"""A consumer-group worker, after the consumer in the Redis Streams guide.

It joins GROUP as CONSUMER (creating the group at ID 0 if needed), then:

1. processes its own history first: entries delivered to this consumer name earlier but never
   acknowledged (XREADGROUP with an ID, starting at 0) - this is how a restarted consumer
   recovers what it was working on when it crashed;
2. once that history is empty, reads new entries with `>`, blocking up to --block ms;
3. XACKs every entry right after processing it;
4. every --claim-every seconds, takes over entries that another consumer has left pending for at
   least --claim-idle ms (XAUTOCLAIM), so the work of consumers that died for good is not lost.

Delivery is at least once: an entry whose processing finished but whose XACK was lost in a crash
is processed again by whoever recovers it.

    python examples/consumer.py --port 6379 --stream mystream --group mygroup --consumer alice

It runs until interrupted, or by itself after --max-messages entries, or after --idle-exit seconds
without any entry to process. Each processed entry is printed as `[consumer] ID = {fields}`.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from typing import Any

import redis


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Consumer-group worker for a Redis stream.")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=6379)
    p.add_argument("--stream", default="mystream")
    p.add_argument("--group", default="mygroup")
    p.add_argument("--consumer", required=True, help="this consumer's name, unique within the group")
    p.add_argument("--count", type=int, default=10, help="entries per read (COUNT)")
    p.add_argument("--block", type=int, default=2000, help="ms to wait for new entries (BLOCK)")
    p.add_argument("--max-messages", type=int, default=0, help="stop after this many entries (0: never)")
    p.add_argument("--idle-exit", type=float, default=0,
                   help="stop after this many seconds with nothing to process (0: never)")
    p.add_argument("--claim-idle", type=int, default=60000,
                   help="claim other consumers' entries pending for at least this many ms")
    p.add_argument("--claim-every", type=float, default=5.0, help="seconds between XAUTOCLAIM rounds")
    p.add_argument("--delay", type=float, default=0.0, help="seconds of simulated work per entry")
    return p.parse_args(argv)


class Worker:
    def __init__(self, r: redis.Redis, args: argparse.Namespace) -> None:
        self.r = r
        self.args = args
        self.name = args.consumer
        self.processed = 0
        self.claimed = 0
        self.stopping = False
        self.last_work = time.monotonic()
        self.next_claim = time.monotonic() + args.claim_every

    def ensure_group(self) -> None:
        try:
            # ID 0: a new group starts with the whole stream; MKSTREAM: the stream may not exist yet.
            self.r.xgroup_create(self.args.stream, self.args.group, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):  # the group already exists: join it
                raise

    def done(self) -> bool:
        if self.stopping:
            return True
        if self.args.max_messages and self.processed >= self.args.max_messages:
            return True
        return bool(self.args.idle_exit) and time.monotonic() - self.last_work >= self.args.idle_exit

    def process(self, entry_id: str, fields: dict[str, str] | None) -> None:
        """The application's work. Here: print the entry, then pretend to be busy."""
        print(f"[{self.name}] {entry_id} = {fields}", flush=True)
        if self.args.delay:
            time.sleep(self.args.delay)

    def handle(self, entries: list[tuple[str, Any]]) -> None:
        for entry_id, fields in entries:
            if self.done():
                return  # what is left of the batch stays pending for us: our history on restart
            if fields is not None:  # None: the entry was deleted from the stream; just ack it
                self.process(entry_id, fields)
                self.processed += 1
            self.r.xack(self.args.stream, self.args.group, entry_id)
            self.last_work = time.monotonic()

    def claim_idle_entries(self) -> None:
        """XAUTOCLAIM from the start of the pending list until the cursor comes back to 0-0."""
        cursor = "0-0"
        while not self.done():
            reply = self.r.xautoclaim(self.args.stream, self.args.group, self.name,
                                      self.args.claim_idle, start_id=cursor, count=self.args.count)
            cursor, entries = reply[0], reply[1]
            if entries:
                self.claimed += len(entries)
                print(f"[{self.name}] claimed {len(entries)} idle entries", flush=True)
                self.handle(entries)
            if cursor in ("0-0", b"0-0"):
                return

    def run(self) -> None:
        self.ensure_group()
        last_id = "0-0"
        check_backlog = True
        while not self.done():
            if time.monotonic() >= self.next_claim:
                self.claim_idle_entries()
                self.next_claim = time.monotonic() + self.args.claim_every
            # First our own history (entries delivered to us, never acked), then new ones.
            my_id = last_id if check_backlog else ">"
            reply = self.r.xreadgroup(self.args.group, self.name, {self.args.stream: my_id},
                                      count=self.args.count,
                                      block=None if check_backlog else self.args.block)
            entries = reply[0][1] if reply else []
            if check_backlog and not entries:
                check_backlog = False  # history consumed: from now on, new entries only
                continue
            self.handle(entries)
            if check_backlog and entries:
                last_id = entries[-1][0]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    r = redis.Redis(host=args.host, port=args.port, decode_responses=True)
    worker = Worker(r, args)

    def stop(signum: int, frame: object) -> None:  # finish the current entry, then leave
        worker.stopping = True

    signal.signal(signal.SIGTERM, stop)
    print(f"Consumer {args.consumer} starting...", flush=True)
    try:
        worker.run()
    except KeyboardInterrupt:
        pass
    finally:
        print(f"[{args.consumer}] processed {worker.processed} entries ({worker.claimed} claimed)",
              file=sys.stderr, flush=True)
        r.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
