"""Failover under load, through Redis Sentinel: what a producer confirmed survives the loss of the master.

A master with two replicas and three real `redis-sentinel` processes (Debian's, the real Sentinel).
Producers write through Sentinel (redis-py's `Sentinel.master_for`), each a pipeline of XADDs
followed by `WAIT 1 <timeout>`: a batch is *confirmed* when WAIT answers at least 1. A consumer
group reads and acknowledges meanwhile. Mid-load the master is killed with SIGKILL; Sentinel
promotes a replica and the producers follow it. The killed master is started again and Sentinel
turns it into a replica of the new one.

What it checks, and prints:
- **lost**: confirmed entries missing from the new master's stream (must be 0);
- **duplicates**: entries present more than once. A producer retries a batch it could not confirm
  (an error, or WAIT answering 0), so a batch that reached the master but not its confirmation may
  be written twice: that is what WAIT allows. A duplicate of a batch that was never retried is a
  fault, counted apart;
- **back after**: seconds from the kill until the new master confirmed a first batch, and until
  every producer had one;
- **converged**: every server ends with the same XLEN and the same `XINFO STREAM ... FULL`.

    python -m bench.failover                     # Rivulet, then Redis, same scenario
    python -m bench.failover --server rivulet --before 5 --after 10

The data servers run either Rivulet (`python -m server`) or `redis-server` (`--redis-binary`, e.g. a
Redis 7.4 build); Sentinel is always the real one.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis
from redis.sentinel import Sentinel

from tests.sentinel_helpers import NodeFactory, RedisNode, SentinelGroup, rivulet_node

MASTER_NAME = "mymaster"
STREAM = "failover:orders"
GROUP = "billing"


def wait_until(predicate: Any, timeout: float, what: str, interval: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    last_exc: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except (redis.RedisError, OSError) as exc:
            last_exc = exc
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what}" + (f" ({last_exc})" if last_exc else ""))


def missing_tools(kind: str, redis_binary: str = "redis-server") -> str | None:
    """Why the scenario cannot run here, or None."""
    if shutil.which("redis-sentinel") is None:
        return "redis-sentinel is not installed (apt-get install redis-sentinel, or `make tools`)"
    if kind == "redis" and shutil.which(redis_binary) is None and not os.path.exists(redis_binary):
        return f"{redis_binary} is not installed"
    return None


def node_factory(kind: str, redis_binary: str = "redis-server") -> NodeFactory:
    if kind == "rivulet":
        return rivulet_node
    return lambda args: RedisNode(*args, binary=redis_binary)


def _follows_current_master(group: SentinelGroup, port: int) -> bool:
    """Whether the server at `port` is a replica of the master Sentinel names now."""
    master_port = group.master_addr()[1]
    return group.client(port).info("replication").get("master_port") == master_port


# ---- load processes -------------------------------------------------------------------------------

def _sentinel_client(sentinel_ports: list[int]) -> Sentinel:
    return Sentinel([("127.0.0.1", p) for p in sentinel_ports], socket_timeout=0.5)


def _produce(sentinel_ports: list[int], producer: int, batch: int, wait_ms: int, stop_at: float,
             out_path: str) -> None:
    """Write batches until stop_at; record confirmed and retried sequence numbers with times."""
    sentinel = _sentinel_client(sentinel_ports)
    master = sentinel.master_for(MASTER_NAME, socket_timeout=max(1.0, wait_ms / 1000 + 0.5))
    seq = 0
    # (first seq of the batch, time it was confirmed, port of the master that confirmed it)
    confirmed: list[tuple[int, float, int]] = []
    retried: list[int] = []                   # first seq of every batch written more than once
    attempts = 0
    errors = 0
    while time.time() < stop_at:
        attempts += 1
        try:
            pipe = master.pipeline(transaction=False)
            for n in range(seq, seq + batch):
                pipe.xadd(STREAM, {"p": producer, "n": n})
            pipe.execute_command("WAIT", 1, wait_ms)
            replies = pipe.execute()
            acked = int(replies[-1])
        except (redis.RedisError, OSError):
            errors += 1
            acked = -1
        if acked >= 1:
            address = master.connection_pool.master_address
            confirmed.append((seq, time.time(), int(address[1]) if address else 0))
            seq += batch
        else:
            if not retried or retried[-1] != seq:
                retried.append(seq)
            if acked < 0:
                time.sleep(0.02)
    with open(out_path, "w") as fh:
        json.dump({"producer": producer, "batch": batch, "confirmed": confirmed, "retried": retried,
                   "attempts": attempts, "errors": errors}, fh)


def _consume(sentinel_ports: list[int], stop_at: float, out_path: str) -> None:
    """Read the group with XREADGROUP and acknowledge what it got, following the master."""
    sentinel = _sentinel_client(sentinel_ports)
    master = sentinel.master_for(MASTER_NAME, socket_timeout=1.0)
    acked = 0
    errors = 0
    while time.time() < stop_at:
        try:
            got = master.xreadgroup(GROUP, "worker-1", {STREAM: ">"}, count=200, block=100)
            ids = [entry_id for _stream, entries in got or [] for entry_id, _fields in entries]
            if ids:
                acked += int(master.xack(STREAM, GROUP, *ids))
        except (redis.RedisError, OSError):
            errors += 1
            time.sleep(0.02)
    with open(out_path, "w") as fh:
        json.dump({"acked": acked, "errors": errors}, fh)


# ---- the scenario ---------------------------------------------------------------------------------

@dataclass
class Outcome:
    server: str
    confirmed: int = 0
    lost: int = 0
    duplicates: int = 0
    unexplained_duplicates: int = 0
    back_first_s: float | None = None
    back_all_s: float | None = None
    promoted_after_s: float | None = None
    failovers: int = 1
    converged: bool = False
    lengths: dict[str, int] = field(default_factory=dict)
    acked: int = 0
    producer_errors: int = 0
    differences: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        def sec(v: float | None) -> str:
            return "never" if v is None else f"{v:.2f} s"
        return [
            f"failover.{self.server}: confirmed {self.confirmed} entries, lost {self.lost}, "
            f"duplicates {self.duplicates} (of batches never retried: {self.unexplained_duplicates})",
            f"failover.{self.server}: new master after {sec(self.promoted_after_s)} (failovers: "
            f"{self.failovers}); writes confirmed "
            f"again after {sec(self.back_first_s)} (every producer: {sec(self.back_all_s)})",
            f"failover.{self.server}: converged {'yes' if self.converged else 'NO'} "
            f"(XLEN {self.lengths}); group acked {self.acked}; producer errors {self.producer_errors}",
        ] + [f"failover.{self.server}: differs: {d}" for d in self.differences]


# A consumer's seen-time and active-time are read from the clock of the server that applies the
# command, on a replica as on the master (Redis's replicas differ from their master there too).
LOCAL_CLOCK_FIELDS = frozenset({"seen-time", "active-time"})


def _normalise_full(info: Any) -> Any:
    """XINFO STREAM FULL as a comparable value (lists of pairs to dicts, recursively), without the
    fields each server reads from its own clock."""
    if isinstance(info, list):
        if len(info) % 2 == 0 and all(isinstance(k, str) for k in info[0::2]) and info and \
                info[0] in ("length", "name", "seen-time", "consumers", "pel-count", "pending"):
            return {k: _normalise_full(v) for k, v in zip(info[0::2], info[1::2], strict=True)
                    if k not in LOCAL_CLOCK_FIELDS}
        return [_normalise_full(v) for v in info]
    if isinstance(info, dict):
        return {k: _normalise_full(v) for k, v in info.items() if k not in LOCAL_CLOCK_FIELDS}
    return info


def _first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """Where two normalised XINFO replies first differ (a readable path), or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}/{k} (present on one side only)"
            found = _first_difference(a[k], b[k], f"{path}/{k}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path} (lengths {len(a)} and {len(b)})"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = _first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a == b else f"{path} ({a!r} and {b!r})"


def run_scenario(kind: str = "rivulet", *, producers: int = 3, batch: int = 50, before: float = 5.0,
                 after: float = 8.0, down_after_ms: int = 1000, wait_ms: int = 1000,
                 redis_binary: str = "redis-server", log: Any = print) -> Outcome:
    """Run the whole scenario once against `kind` data servers; returns what it measured."""
    group = SentinelGroup(node_factory(kind, redis_binary), replicas=2, sentinels=3,
                          master_name=MASTER_NAME, down_after_ms=down_after_ms,
                          failover_timeout_ms=10000)
    outcome = Outcome(server=kind if kind == "rivulet" else os.path.basename(redis_binary))
    ctx = multiprocessing.get_context("spawn")
    procs: list[Any] = []
    workdir = tempfile.mkdtemp(prefix=f"failover-{kind}-")
    try:
        group.start()
        old_master = group.nodes[0]
        group.client(old_master.port).xgroup_create(STREAM, GROUP, id="0", mkstream=True)
        sentinel_ports = [port for _host, port in group.sentinel_addresses()]

        stop_at = time.time() + before + after
        outputs = [os.path.join(workdir, f"producer-{i}.json") for i in range(producers)]
        for i in range(producers):
            p = ctx.Process(target=_produce, args=(sentinel_ports, i, batch, wait_ms, stop_at, outputs[i]))
            p.start()
            procs.append(p)
        consumer_out = os.path.join(workdir, "consumer.json")
        c = ctx.Process(target=_consume, args=(sentinel_ports, stop_at, consumer_out))
        c.start()
        procs.append(c)

        time.sleep(before)
        killed_at = time.time()
        old = group.kill_master()
        log(f"failover.{kind}: master on port {old[1]} killed with SIGKILL")
        _host, new_port = group.wait_failover(old)
        outcome.promoted_after_s = time.time() - killed_at
        # The old master comes back as it was started, once Sentinel has moved the other replica
        # to the new master (the end of the failover); Sentinel then makes it a replica too.
        for node in group.nodes:
            if node is not old_master and node.port != new_port:
                wait_until(lambda node=node: _follows_current_master(group, node.port), 30,
                           f"Sentinel to move the server on port {node.port} to the new master")
        old_master.start()

        for p in procs:
            p.join(max(5.0, stop_at - time.time() + 15))
        results = [json.loads(Path(o).read_text()) for o in outputs if os.path.exists(o)]
        if len(results) != producers:
            raise RuntimeError("a producer process did not finish")
        if os.path.exists(consumer_out):
            outcome.acked = json.loads(Path(consumer_out).read_text())["acked"]

        # A loaded machine can stall the new master past down-after-milliseconds, and Sentinel then
        # fails over a second time: the data is checked on whichever master Sentinel settled on.
        _host, final_port = group.wait_failover(old)
        if final_port != new_port:
            log(f"failover.{kind}: Sentinel failed over again, from port {new_port} to {final_port}")
            outcome.failovers += 1
            new_port = final_port
        nm = group.client(new_port)
        target = int(nm.info("replication")["master_repl_offset"])
        for node in group.nodes:
            if node.port == new_port:
                continue
            wait_until(lambda node=node: (lambda info: info.get("master_port") == new_port
                                          and info.get("master_link_status") == "up"
                                          and int(info.get("slave_repl_offset", -1)) >= target)(
                group.client(node.port).info("replication")), 60,
                f"the server on port {node.port} to catch up with the new master")

        # What the stream holds, against what producers were told.
        seen: dict[tuple[int, int], int] = {}
        last = "-"
        while True:
            chunk = nm.xrange(STREAM, min=last, count=10000)
            if last != "-":
                chunk = chunk[1:]
            if not chunk:
                break
            for _id, fields in chunk:
                key = (int(fields["p"]), int(fields["n"]))
                seen[key] = seen.get(key, 0) + 1
            last = chunk[-1][0]
        back_times: list[float] = []
        for res in results:
            p = res["producer"]
            retried = set(res["retried"])
            for first, _t, _port in res["confirmed"]:
                for n in range(first, first + res["batch"]):
                    outcome.confirmed += 1
                    if (p, n) not in seen:
                        outcome.lost += 1
            for (pp, n), count in seen.items():
                if pp == p and count > 1:
                    outcome.duplicates += count - 1
                    if (n - n % res["batch"]) not in retried:
                        outcome.unexplained_duplicates += count - 1
            # Writes are back when the new master confirms one (a batch the old master confirmed
            # just before the kill may reach the producer after it).
            after_kill = [t for _first, t, port in res["confirmed"] if t > killed_at and port != old[1]]
            if after_kill:
                back_times.append(min(after_kill) - killed_at)
            outcome.producer_errors += res["errors"]
        if back_times:
            outcome.back_first_s = min(back_times)
            if len(back_times) == producers:
                outcome.back_all_s = max(back_times)

        fulls = {}
        for node in group.nodes:
            cl = group.client(node.port)
            outcome.lengths[str(node.port)] = int(cl.xlen(STREAM))
            fulls[node.port] = _normalise_full(cl.execute_command("XINFO", "STREAM", STREAM, "FULL"))
        reference = fulls[new_port]
        for port, full in fulls.items():
            where = _first_difference(reference, full)
            if where is not None:
                outcome.differences.append(f"XINFO STREAM FULL on port {port} differs from the new master's at {where}")
        outcome.converged = len(set(outcome.lengths.values())) == 1 and not outcome.differences
        return outcome
    except Exception:
        log(group.logs())
        raise
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
        group.cleanup()
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.failover", description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", choices=["rivulet", "redis", "both"], default="both")
    parser.add_argument("--redis-binary", default=os.environ.get("RIVULET_REDIS74", "redis-server"),
                        help="the redis-server compared with (default: $RIVULET_REDIS74 or Debian's)")
    parser.add_argument("--producers", type=int, default=3)
    parser.add_argument("--batch", type=int, default=50, help="XADDs per WAIT")
    parser.add_argument("--before", type=float, default=5.0, help="seconds of load before the kill")
    parser.add_argument("--after", type=float, default=10.0, help="seconds of load after it")
    parser.add_argument("--down-after-ms", type=int, default=1000)
    args = parser.parse_args(argv)
    kinds = ["rivulet", "redis"] if args.server == "both" else [args.server]
    status = 0
    for kind in kinds:
        why = missing_tools(kind, args.redis_binary)
        if why:
            print(f"SKIPPED failover.{kind}: {why}")
            status = 1
            continue
        out = run_scenario(kind, producers=args.producers, batch=args.batch, before=args.before,
                           after=args.after, down_after_ms=args.down_after_ms,
                           redis_binary=args.redis_binary)
        for line in out.lines():
            print(line)
        if out.lost or out.unexplained_duplicates or not out.converged:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
