"""Runs a case on each server: fresh processes, repeated runs, failures kept per server."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bench.case import Case, Options, PartialRun
from bench.resp import RespClient
from bench.stats import Sample
from bench.targets import RIVULET, Target


@dataclass
class CaseResult:
    case: Case
    # metric name -> server name -> one Sample per run
    samples: dict[str, dict[str, list[Sample]]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


def run_case(case: Case, servers: list[str], opts: Options,
             progress: Callable[[str], None] = lambda _: None) -> CaseResult:
    result = CaseResult(case, {m.name: {} for m in case.metrics})
    repeat = opts.repeat or case.default_repeat
    if case.rivulet_only:
        servers = [s for s in servers if s == RIVULET]
    if case.fresh_server_per_run:
        # Run by run, taking turns: a spell of load from the machine's neighbours then falls on
        # both servers' runs alike instead of on all of one server's.
        rounds = [[(server, run_no)] for run_no in range(1, repeat + 1) for server in servers]
    else:
        rounds = [[(server, run_no) for run_no in range(1, repeat + 1)] for server in servers]
    for rnd in rounds:
        server = rnd[0][0]
        if server in result.errors:
            continue
        try:
            for (_, run_no), samples in zip(rnd, _runs(case, server, opts, len(rnd)), strict=False):
                progress(f"{case.name}: {server} run {run_no}/{repeat} done")
                _add(result.samples, server, samples)
        except PartialRun as partial:  # e.g. entries measured, consumer groups not implemented yet
            _add(result.samples, server, partial.samples)
            result.errors[server] = _short(str(partial))
        except Exception as exc:  # one server failing a case must not hide the other's figures
            result.errors[server] = _short(f"{type(exc).__name__}: {exc}")
            for per_server in result.samples.values():
                per_server.pop(server, None)
    return result


def _short(error: str, limit: int = 600) -> str:
    """An error fit for one printed line: a failed start carries the whole server log."""
    if len(error) <= limit:
        return error
    return error[: limit // 2] + " ... " + error[-limit // 2:]


def _add(collect: dict[str, dict[str, list[Sample]]], server: str, samples: dict[str, Sample]) -> None:
    for metric, sample in samples.items():
        collect[metric].setdefault(server, []).append(sample)


def _runs(case: Case, server: str, opts: Options, repeat: int):
    if case.fresh_server_per_run:
        for _ in range(repeat):
            with case.start(server) as target:
                yield case.run(target, opts)
    else:
        with case.start(server) as target:
            for _ in range(repeat):
                _flush(target)
                yield case.run(target, opts)


def _flush(target: Target) -> None:
    with RespClient(target.port) as client:
        client.call("FLUSHALL")
