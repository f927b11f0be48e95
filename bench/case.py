"""What every benchmark case provides, and the options they share."""

from __future__ import annotations

from dataclasses import dataclass

from bench.stats import Metric, Sample
from bench.targets import Target, start


@dataclass
class Options:
    """Sizes of the runs; `python -m bench --help` documents each."""

    entries: int = 1_000_000       # memory case: XADDs loaded
    requests: int = 50_000         # redis-benchmark -n, and entries consumed by the XREADGROUP driver
    repeat: int | None = None      # None: each case's own default
    consumers: int = 4             # XREADGROUP driver processes
    backlog: int = 500_000         # backlog case: entries in the stream read through


class PartialRun(Exception):
    """A run that measured some of its metrics before failing: keep those, report the failure."""

    def __init__(self, samples: dict[str, Sample], error: Exception) -> None:
        super().__init__(f"{type(error).__name__}: {error}")
        self.samples = samples


class Case:
    """A benchmark: one or more metrics measured by `run` on one server."""

    name = ""
    metrics: list[Metric] = []
    default_repeat = 3
    # Memory figures need a fresh process for every run; speed figures only a flushed one.
    fresh_server_per_run = False
    # A case of a command the compared Redis does not have runs on Rivulet only.
    rivulet_only = False

    def missing_tool(self) -> str | None:
        """Why this case cannot run on this machine, or None."""
        return None

    def start(self, server: str) -> Target:
        """A fresh server for this case's runs."""
        return start(server)

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        raise NotImplementedError
