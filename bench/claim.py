"""XREADGROUP with CLAIM min-idle-time (Redis 8.4) beside plain XREADGROUP + XACK in the same run,
for its cost relative to it. Redis 7 has no CLAIM, so this runs on Rivulet only.

The same worker processes as the `xreadgroup` case (COUNT 10, each batch's XACK in the same write
as the next read) drain a prefilled stream three ways:
- plain: no CLAIM, the `xreadgroup` case's figure;
- idle: every read says CLAIM, but no pending entry is ever idle long enough: what the option
  costs a healthy group, where it only has to look at the oldest pending entry;
- recover: half of the stream was delivered to a consumer that died without acking; once those
  entries are idle past min-idle-time the live consumers' CLAIM reads take them over first, then
  read the other, new half. Claimed entries cost more than new ones: each moves from the dead
  consumer's PEL to the reader's and is logged as an XCLAIM.
"""

from __future__ import annotations

import time

from bench.case import Case, Options
from bench.groupdriver import GROUP, KEY, drive, pending_count
from bench.resp import RespClient, load_stream
from bench.stats import Metric, Sample
from bench.targets import Target

# Long enough that a live consumer always acks what it read (or claimed) before that entry could
# be claimed again, even with the worker descheduled for a while on a busy machine.
MIN_IDLE_MS = 1000

PLAIN, IDLE, RECOVER = "xreadgroup_claim.plain", "xreadgroup_claim.idle", "xreadgroup_claim.recover"


class XreadgroupClaimCase(Case):
    name = "xreadgroup-claim"
    rivulet_only = True
    metrics = [
        Metric(PLAIN, "entries/s", True, "XREADGROUP COUNT 10 + XACK, N consumer processes"),
        Metric(IDLE, "entries/s", True, f"the same reads with CLAIM {MIN_IDLE_MS}, nothing idle", baseline=PLAIN),
        Metric(RECOVER, "entries/s", True,
               f"CLAIM {MIN_IDLE_MS}: half the stream idle on a dead consumer is claimed, then the new half",
               baseline=PLAIN),
    ]

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        if target.name != "rivulet":
            raise RuntimeError("XREADGROUP CLAIM is Redis 8.4's: not in the Redis compared with")
        return {PLAIN: self._drain(target, opts, None, 0),
                IDLE: self._drain(target, opts, MIN_IDLE_MS, 0),
                RECOVER: self._drain(target, opts, MIN_IDLE_MS, opts.requests // 2)}

    def _drain(self, target: Target, opts: Options, claim: int | None, abandoned: int) -> Sample:
        entries = opts.requests
        with RespClient(target.port) as client:
            client.call("FLUSHALL")
            load_stream(client, KEY, entries, ("sensor-id", "1234", "temperature", "19.8"))
            client.call("XGROUP", "CREATE", KEY, GROUP, "0")
            if abandoned:
                client.call("XREADGROUP", "GROUP", GROUP, "dead", "COUNT", abandoned, "STREAMS", KEY, ">")
        if abandoned:
            time.sleep(MIN_IDLE_MS / 1000 + 0.05)
        processed, claimed, elapsed, used = drive(target, opts.consumers, claim)
        pending = pending_count(target)
        if processed != entries or claimed != abandoned or pending != 0:
            raise RuntimeError(f"processed {processed} of {entries} entries ({claimed} claimed of "
                               f"{abandoned} abandoned), {pending} left pending")
        return Sample(entries / elapsed, entries, used,
                      {"consumers": opts.consumers, "entries": entries, "claimed": claimed})
