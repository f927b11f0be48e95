"""Smoke test of the set benchmark cases (bench/sets_bench.py): a tiny run reports every metric,
with positive figures, for Rivulet and the Redis compared with."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.serverproc import ROOT


def test_set_cases_report_every_metric(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "sets", "sets-memory", "--entries", "20000",
         "--requests", "2000", "--repeat", "1", "--results-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    records = {r["metric"]: r for r in json.loads((tmp_path / "latest.json").read_text())["results"]}
    expected = {"memory.set_member"}
    if shutil.which("redis-benchmark"):
        expected |= {f"{cmd}.c50.P{p}" for cmd in ("sadd", "sismember") for p in (1, 16)}
    assert set(records) == expected
    servers = ["rivulet", "redis"] if shutil.which("redis-server") else ["rivulet"]
    for name, record in records.items():
        assert record["errors"] == {}, name
        for server in servers:
            assert record[server]["min"] > 0, (name, server)
    # 12-digit members cost at least their bytes; a figure below that measured nothing.
    assert records["memory.set_member"]["rivulet"]["median"] > 12
