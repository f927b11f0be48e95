"""Runs a case on each server: fresh processes, repeated runs, failures kept per server."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bench.case import Case, Options, PartialRun
from bench.resp import RespClient
from bench.stats import Sample
from bench.targets import Target, start


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
    for server in servers:
        collect = result.samples
        try:
            for run_no, samples in enumerate(_runs(case, server, opts, repeat), 1):
                progress(f"{case.name}: {server} run {run_no}/{repeat} done")
                _add(collect, server, samples)
        except PartialRun as partial:  # e.g. entries measured, consumer groups not implemented yet
            _add(collect, server, partial.samples)
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
            with start(server) as target:
                yield case.run(target, opts)
    else:
        with start(server) as target:
            for _ in range(repeat):
                _flush(target)
                yield case.run(target, opts)


def _flush(target: Target) -> None:
    with RespClient(target.port) as client:
        client.call("FLUSHALL")
