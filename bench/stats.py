"""What one run of a case measures, and the summary of several runs."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Metric:
    """One figure a case reports, e.g. bytes per stream entry or XADD ops/s."""

    name: str
    unit: str
    higher_is_better: bool
    description: str
    # Largest acceptable ours/Redis ratio (for lower-is-better figures), printed next to the figure.
    max_ratio: float | None = None
    # A metric of the same case measured on Rivulet alone (a Redis 8 feature Redis 7 lacks) is
    # compared with this other metric of the same run instead.
    baseline: str | None = None


@dataclass
class Sample:
    """One run's figure for one metric on one server, with the server's CPU time for it."""

    value: float
    ops: int
    cpu_seconds: float
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def cpu_us_per_op(self) -> float:
        return self.cpu_seconds * 1e6 / self.ops if self.ops else 0.0


def summarize(values: list[float]) -> dict[str, Any]:
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "runs": values,
    }


def summarize_samples(samples: list[Sample]) -> dict[str, Any]:
    """Median/min/max of the figure and of the server's CPU µs per operation, plus the raw runs."""
    return {
        **summarize([s.value for s in samples]),
        "cpu_us_per_op": summarize([s.cpu_us_per_op for s in samples]),
        "ops": [s.ops for s in samples],
        "extra": [s.extra for s in samples],
    }
