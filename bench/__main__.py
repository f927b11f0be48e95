"""`python -m bench [case ...]`: every case on a fresh Rivulet and, when installed, a fresh redis-server."""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.backlog import BacklogCase
from bench.bits_bench import BitsCase
from bench.case import Case, Options
from bench.claim import XreadgroupClaimCase
from bench.groupdriver import XreadgroupCase
from bench.hashes_bench import HashMemoryCase, HashThroughputCase
from bench.keys import KeyAccessCase
from bench.latency import LatencyCase
from bench.lists_bench import BlpopHandoffCase, ListMemoryCase, ListPushPopCase
from bench.maxmemory_bench import XaddMaxmemoryCase
from bench.memory import MemoryCase
from bench.pubsub_bench import PublishCase
from bench.rdb_load import RdbLoadCase
from bench.replica_apply import ReplicaApplyCase
from bench.replication_bench import ReplicationCase
from bench.report import RESULTS_DIR, format_line, metric_record, write_results
from bench.rewrite_latency import RewriteLatencyCase
from bench.runner import run_case
from bench.scaling import ScalingCase
from bench.sets_bench import SetsCase, SetsMemoryCase
from bench.slow_clients import SlowClientsCase
from bench.targets import INSTALL_HINT, REDIS, RIVULET, redis_available
from bench.throughput import PingCase, XaddCase, XaddIdmpCase, XrangeCase
from bench.tls_bench import TLSCase
from bench.zsets_bench import ZaddCase, ZrangeCase, ZsetMemoryCase

CASES: dict[str, Case] = {c.name: c for c in
                          [MemoryCase(), PingCase(), XaddCase(), XaddIdmpCase(), XrangeCase(), XreadgroupCase(),
                           XreadgroupClaimCase(),
                           BacklogCase(),
                           RewriteLatencyCase(), LatencyCase(), ScalingCase(),
                           KeyAccessCase(),
                           SetsCase(), SetsMemoryCase(),
                           HashThroughputCase(), HashMemoryCase(),
                           ListPushPopCase(), BlpopHandoffCase(), ListMemoryCase(),
                           BitsCase(),
                           ZaddCase(), ZrangeCase(), ZsetMemoryCase(),
                           PublishCase(), RdbLoadCase(), ReplicationCase(), ReplicaApplyCase(),
                           TLSCase(), SlowClientsCase(), XaddMaxmemoryCase()]}
GROUPS = {"throughput": ["ping", "xadd", "xrange", "xreadgroup"], "all": list(CASES)}
QUICK = {"entries": 100_000, "requests": 5_000, "backlog": 50_000}


def parse_args(argv: list[str]) -> tuple[list[Case], Options, argparse.Namespace]:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="Benchmark Rivulet against redis-server: memory per stream entry and throughput.")
    parser.add_argument("cases", nargs="*", default=["all"], metavar="case",
                        help=f"cases to run: {', '.join([*CASES, *GROUPS])} (default: all)")
    parser.add_argument("--entries", type=int, help="memory case: entries to XADD (default 1000000)")
    parser.add_argument("--requests", type=int,
                        help="requests per redis-benchmark run, entries for the XREADGROUP driver (default 50000)")
    parser.add_argument("--backlog", type=int,
                        help="backlog case: entries in the stream read through (default 500000)")
    parser.add_argument("--repeat", type=int, help="runs per case (default: 3; latency 5; memory, scaling, rewrite-latency 1)")
    parser.add_argument("--consumers", type=int, default=4, help="XREADGROUP driver processes (default 4)")
    parser.add_argument("--quick", action="store_true",
                        help=f"small runs: {QUICK['entries']} entries, {QUICK['requests']} requests")
    parser.add_argument("--no-redis", action="store_true", help="benchmark Rivulet alone")
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR, help="where the JSON goes")
    args = parser.parse_args(argv)

    names: list[str] = []
    for name in args.cases:
        if name not in CASES and name not in GROUPS:
            parser.error(f"unknown case {name!r}; choose from {', '.join([*CASES, *GROUPS])}")
        for expanded in GROUPS.get(name, [name]):
            if expanded not in names:
                names.append(expanded)
    defaults = QUICK if args.quick else {"entries": Options.entries, "requests": Options.requests,
                                         "backlog": Options.backlog}
    opts = Options(entries=args.entries or defaults["entries"],
                   requests=args.requests or defaults["requests"],
                   backlog=args.backlog or defaults["backlog"],
                   repeat=args.repeat, consumers=args.consumers)
    return [CASES[n] for n in names], opts, args


def redis_version() -> str | None:
    try:
        out = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout
    except OSError:
        return None
    return next((w[2:] for w in out.split() if w.startswith("v=")), out.strip() or None)


def main(argv: list[str] | None = None) -> int:
    cases, opts, args = parse_args(sys.argv[1:] if argv is None else argv)
    servers = [RIVULET]
    if args.no_redis:
        print("Redis comparison disabled (--no-redis): reporting Rivulet alone.")
    elif redis_available():
        servers.append(REDIS)
    else:
        print(f"redis-server is not installed: {INSTALL_HINT}. Reporting Rivulet alone.")

    started = datetime.now(UTC)
    print(f"bench: cases {' '.join(c.name for c in cases)}; {opts.entries} entries, "
          f"{opts.requests} requests; servers: {', '.join(servers)}; {os.cpu_count()} CPUs", flush=True)
    records: list[dict[str, Any]] = []
    skipped: dict[str, str] = {}
    failed = False
    for case in cases:
        missing = case.missing_tool()
        if missing:
            skipped[case.name] = missing
            print(f"{case.name}: skipped, {missing}", flush=True)
            continue
        began = time.monotonic()
        result = run_case(case, servers, opts, progress=lambda m: print(f"  .. {m}", flush=True))
        failed = failed or bool(result.errors)
        for metric in case.metrics:
            record = metric_record(metric, result)
            record["seconds"] = round(time.monotonic() - began, 1)
            records.append(record)
            print(format_line(record), flush=True)

    document = {
        "started_at": started.isoformat(),
        "finished_at": datetime.now(UTC).isoformat(),
        "host": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "servers": servers,
        "redis_version": redis_version() if REDIS in servers else None,
        "options": {"entries": opts.entries, "requests": opts.requests, "repeat": opts.repeat,
                    "consumers": opts.consumers, "backlog": opts.backlog, "quick": args.quick},
        "skipped": skipped,
        "results": records,
    }
    path = write_results(document, args.results_dir)
    print(f"results: {path} (and {path.parent / 'latest.json'})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
