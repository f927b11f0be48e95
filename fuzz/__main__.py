"""Run the fuzzers for a time budget and print their figures: `python -m fuzz --seconds 600`.

The budget is shared between the parts (see --parts): the request parser and the command layer in
this process, a live server over TCP, and the differential run against a real redis-server
(skipped, saying so, when none is installed). Exit status 1 when anything crashed, hung, leaked
or the parser's fast path and strict parser disagreed; divergences from redis-server are printed
for reading, as many are differences between Redis versions.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

from fuzz.inprocess import Findings, fuzz_commands, fuzz_parser

SHARES = {"parser": 0.3, "commands": 0.35, "live": 0.25, "diff": 0.1}


def _print(found: Findings, out: list[str]) -> None:
    line = found.summary()
    print(line, flush=True)
    out.append(line)
    for example in found.examples[:10]:
        print("   ", example, flush=True)
    if found.slowest_input:
        print(f"    slowest input: {found.slowest_input[:300]!r}", flush=True)


def _quiet_commands(seconds: float, seed: int) -> Findings:
    # The server logs each handler failure with its traceback: the findings say it shorter.
    logging.getLogger("rivulet").propagate = False
    return fuzz_commands(seconds, seed)


def _jobs(fn: Callable[[float, int], Findings], seconds: float, args: argparse.Namespace) -> Findings:
    """fn in args.jobs processes (seeds args.seed, args.seed + 1...), findings merged."""
    if fn is fuzz_commands:
        fn = _quiet_commands
    if args.jobs <= 1:
        return fn(seconds, args.seed)
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(fn, seconds, args.seed + i) for i in range(args.jobs)]
        return Findings.merge([f.result() for f in futures])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="total budget (default 60)")
    ap.add_argument("--seed", type=int, default=int(time.time()), help="random seed (default: now)")
    ap.add_argument("--parts", default="parser,commands,live,diff",
                    help="comma-separated subset of parser,commands,live,diff")
    ap.add_argument("--connections", type=int, default=12, help="live: concurrent connections")
    ap.add_argument("--redis-server", default="redis-server",
                    help="diff: the redis-server binary to compare with (default: the one on PATH)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="processes for each in-process part, seeds seed, seed+1, ... (default 1)")
    args = ap.parse_args(argv)
    parts = [p for p in args.parts.split(",") if p]
    unknown = set(parts) - set(SHARES)
    if unknown:
        ap.error(f"unknown parts: {', '.join(sorted(unknown))}")
    total = sum(SHARES[p] for p in parts)
    budget = {p: args.seconds * SHARES[p] / total for p in parts}
    print(f"fuzz: seed {args.seed}, {args.seconds:.0f} s over {', '.join(parts)} "
          f"(reproduce: python -m fuzz --seconds {args.seconds:.0f} --seed {args.seed} "
          f"--parts {','.join(parts)} --jobs {args.jobs})", flush=True)
    # The live fuzzer's own connections are closed under it by design: asyncio's warnings about
    # writes to them are noise.
    logging.getLogger("asyncio").setLevel(logging.ERROR)
    lines: list[str] = []
    failed = False
    if "parser" in budget:
        found = _jobs(fuzz_parser, budget["parser"], args)
        _print(found, lines)
        failed |= bool(found.crashes or found.hangs or found.divergences)
    if "commands" in budget:
        found = _jobs(fuzz_commands, budget["commands"], args)
        _print(found, lines)
        failed |= bool(found.crashes or found.hangs or found.leaks)
    if "live" in budget or "diff" in budget:
        failed |= _over_tcp(budget, args, lines)
    print("\n".join(["", "summary:", *lines]))
    return 1 if failed else 0


def _over_tcp(budget: dict[str, float], args: argparse.Namespace, lines: list[str]) -> bool:
    from fuzz.tcp import fuzz_differential, fuzz_live
    from tests.serverproc import RedisProcess, ServerProcess

    failed = False
    # A machine busy enough to be worth fuzzing on can take long to start a server.
    server = ServerProcess().start(timeout=120)
    try:
        assert server.proc is not None
        if "live" in budget:
            found, ends = fuzz_live(server.port, server.proc.pid, budget["live"], args.seed,
                                    connections=args.connections)
            _print(found, lines)
            print("    pipelines ended:", ", ".join(f"{k} {v:,}" for k, v in ends.items()))
            failed |= bool(found.crashes or found.hangs)
            if server.proc.poll() is not None:
                print("--- server log ---\n" + server.log()[-4000:])
        if "diff" in budget:
            if not RedisProcess.available(args.redis_server):
                line = (f"differential: SKIPPED, no {args.redis_server} found "
                        "(make tools installs Debian's redis-server)")
                print(line)
                lines.append(line)
            else:
                real = RedisProcess(binary=args.redis_server).start(timeout=120)
                try:
                    found, by_command, example = fuzz_differential(
                        server.port, real.port, budget["diff"], args.seed)
                finally:
                    real.cleanup()
                _print(found, lines)
                for name, count in by_command.most_common():
                    print(f"    {count:6,}  {example[name][:300]}")
    finally:
        server.cleanup()
    return failed


if __name__ == "__main__":
    sys.exit(main())
