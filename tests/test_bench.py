"""Smoke test of `python -m bench`: tiny runs produce the printed lines and the JSON, with positive
figures. No timing assertions: a benchmark's numbers are not a test's business."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.serverproc import ROOT

HAVE_REDIS = shutil.which("redis-server") is not None
HAVE_BENCHMARK = shutil.which("redis-benchmark") is not None


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, Path]:
    results = tmp_path_factory.mktemp("bench-results")
    done = subprocess.run(
        [sys.executable, "-m", "bench", "memory", "xadd", "--entries", "20000", "--requests", "2000",
         "--repeat", "1", "--results-dir", str(results)],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    return done, results


def test_bench_exits_cleanly(bench_run: tuple[subprocess.CompletedProcess, Path]) -> None:
    done, _ = bench_run
    assert done.returncode == 0, done.stdout + done.stderr
    if not HAVE_REDIS:
        assert "make tools" in done.stdout


def test_results_json(bench_run: tuple[subprocess.CompletedProcess, Path]) -> None:
    done, results = bench_run
    latest = json.loads((results / "latest.json").read_text())
    stamped = [p for p in results.glob("bench-*.json")]
    assert len(stamped) == 1 and json.loads(stamped[0].read_text()) == latest
    assert latest["options"]["entries"] == 20000

    records = {r["metric"]: r for r in latest["results"]}
    expected = {"memory.entry", "memory.pending"}
    if HAVE_BENCHMARK:
        expected |= {"xadd.c1.P1", "xadd.c1.P16", "xadd.c50.P1", "xadd.c50.P16"}
    assert set(records) == expected

    servers = ["rivulet", "redis"] if HAVE_REDIS else ["rivulet"]
    assert latest["servers"] == servers
    for name, record in records.items():
        assert record["errors"] == {}, name
        for server in servers:
            summary = record[server]
            assert summary["min"] <= summary["median"] <= summary["max"], (name, server)
            assert summary["min"] > 0, (name, server)
            assert len(summary["runs"]) == 1
            assert summary["cpu_us_per_op"]["median"] >= 0
        if HAVE_REDIS:
            assert record["ratio"] == pytest.approx(record["rivulet"]["median"] / record["redis"]["median"])
        # One printed line per metric, naming it first.
        assert any(line.startswith(name + " ") for line in done.stdout.splitlines()), name

    entry = records["memory.entry"]
    assert entry["max_ratio"] == 3.0 and entry["unit"] == "B/entry"
    assert entry["rivulet"]["extra"][0]["figure"] == "rss"
    assert entry["rivulet"]["ops"] == [20000]


def test_backlog_case_reads_every_entry_once(tmp_path: Path) -> None:
    # Each way fails its run unless it reads exactly the stream's entries (and XACK leaves none
    # pending): a run that exits cleanly with four figures per server read the whole backlog.
    done = subprocess.run(
        [sys.executable, "-m", "bench", "backlog", "--backlog", "3500", "--repeat", "1",
         "--results-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    latest = json.loads((tmp_path / "latest.json").read_text())
    assert latest["options"]["backlog"] == 3500
    records = {r["metric"]: r for r in latest["results"]}
    assert set(records) == {"backlog.xrange", "backlog.xrevrange", "backlog.xread",
                            "backlog.xreadgroup+xack"}
    servers = ["rivulet", "redis"] if HAVE_REDIS else ["rivulet"]
    for name, record in records.items():
        assert record["errors"] == {}, name
        assert record["unit"] == "entries/s"
        for server in servers:
            assert record[server]["ops"] == [3500] and record[server]["min"] > 0, (name, server)
