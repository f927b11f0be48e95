"""Turning runs into records: one printed line per metric, and the JSON files under bench/results/."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.runner import CaseResult
from bench.stats import Metric, summarize_samples
from bench.targets import REDIS, RIVULET

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def metric_record(metric: Metric, result: CaseResult) -> dict[str, Any]:
    """Everything known about one metric: both servers' summaries, the ratio, the target."""
    per_server = result.samples.get(metric.name, {})
    record: dict[str, Any] = {
        "case": result.case.name,
        "metric": metric.name,
        "unit": metric.unit,
        "description": metric.description,
        "higher_is_better": metric.higher_is_better,
        "max_ratio": metric.max_ratio,
        RIVULET: summarize_samples(per_server[RIVULET]) if RIVULET in per_server else None,
        REDIS: summarize_samples(per_server[REDIS]) if REDIS in per_server else None,
        "errors": result.errors,
    }
    ours, theirs = record[RIVULET], record[REDIS]
    record["ratio"] = ours["median"] / theirs["median"] if ours and theirs and theirs["median"] else None
    record["within_target"] = (record["ratio"] <= metric.max_ratio
                               if record["ratio"] is not None and metric.max_ratio else None)
    base = per_server_summary(result, metric.baseline, RIVULET) if metric.baseline else None
    record["baseline"] = metric.baseline
    record["ratio_to_baseline"] = ours["median"] / base["median"] if ours and base and base["median"] else None
    # Where Redis ran the case too, its own ratio to the same baseline (e.g. replication's cost).
    redis_base = per_server_summary(result, metric.baseline, REDIS) if metric.baseline else None
    record["redis_ratio_to_baseline"] = (theirs["median"] / redis_base["median"]
                                         if theirs and redis_base and redis_base["median"] else None)
    record["cpu_ratio_to_baseline"] = (
        ours["cpu_us_per_op"]["median"] / base["cpu_us_per_op"]["median"]
        if ours and base and base["cpu_us_per_op"]["median"] else None)
    record["redis_cpu_ratio_to_baseline"] = (
        theirs["cpu_us_per_op"]["median"] / redis_base["cpu_us_per_op"]["median"]
        if theirs and redis_base and redis_base["cpu_us_per_op"]["median"] else None)
    return record


def per_server_summary(result: CaseResult, metric: str, server: str) -> dict[str, Any] | None:
    samples = result.samples.get(metric, {}).get(server)
    return summarize_samples(samples) if samples else None


def _figure(summary: dict[str, Any] | None, unit: str) -> str:
    if summary is None:
        return "-"
    return f"{summary['median']:,.1f} {unit} [{summary['min']:,.1f}..{summary['max']:,.1f}]"


def _cpu(summary: dict[str, Any] | None) -> str:
    return "-" if summary is None else f"{summary['cpu_us_per_op']['median']:.2f}"


def format_line(record: dict[str, Any]) -> str:
    """`metric  rivulet <median> [min..max]  redis <median> [..]  ours/redis ratio  cpu us/op`."""
    unit = record["unit"]
    parts = [f"{record['metric']:<24}",
             f"rivulet {_figure(record[RIVULET], unit):<38}",
             f"redis {_figure(record[REDIS], unit):<38}"]
    if record["ratio"] is not None:
        ratio = f"ours/redis {record['ratio']:.2f}x"
        if record["max_ratio"]:
            verdict = "ok" if record["within_target"] else "MISSED"
            ratio += f" (target <= {record['max_ratio']:g}x: {verdict})"
        parts.append(ratio)
    if record.get("ratio_to_baseline") is not None:
        parts.append(f"rivulet/{record['baseline']} {record['ratio_to_baseline']:.2f}x")
    if record.get("redis_ratio_to_baseline") is not None:
        parts.append(f"redis/{record['baseline']} {record['redis_ratio_to_baseline']:.2f}x")
    parts.append(f"cpu us/op {_cpu(record[RIVULET])} vs {_cpu(record[REDIS])}")
    if record.get("cpu_ratio_to_baseline") is not None:
        redis_cpu = record.get("redis_cpu_ratio_to_baseline")
        versus = f" vs {redis_cpu:.2f}x" if redis_cpu is not None else ""
        parts.append(f"(cpu {record['cpu_ratio_to_baseline']:.2f}x{versus} the baseline's)")
    for server, error in record["errors"].items():
        parts.append(f"\n    {server} FAILED: {error}")
    return "  ".join(parts)


def write_results(document: dict[str, Any], directory: Path = RESULTS_DIR) -> Path:
    """A timestamped JSON file plus latest.json (a copy, not a link: it survives moving the dir)."""
    directory.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = directory / f"bench-{stamp}-{os.getpid()}.json"
    text = json.dumps(document, indent=2, sort_keys=False) + "\n"
    path.write_text(text)
    (directory / "latest.json").write_text(text)
    return path
