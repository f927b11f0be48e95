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


def test_claim_case_against_plain_xreadgroup(tmp_path: Path) -> None:
    # Rivulet only (Redis 7 has no CLAIM): each way fails its run unless the consumers processed
    # every entry once, claimed exactly the abandoned half where there was one, and left nothing
    # pending, so a clean exit with three figures means the CLAIM reads recovered the backlog.
    done = subprocess.run(
        [sys.executable, "-m", "bench", "xreadgroup-claim", "--requests", "3000", "--consumers", "2",
         "--repeat", "1", "--results-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    latest = json.loads((tmp_path / "latest.json").read_text())
    records = {r["metric"]: r for r in latest["results"]}
    assert set(records) == {"xreadgroup_claim.plain", "xreadgroup_claim.idle", "xreadgroup_claim.recover"}
    for name, record in records.items():
        assert record["errors"] == {}, name
        assert record["redis"] is None and record["ratio"] is None, name
        assert record["rivulet"]["ops"] == [3000] and record["rivulet"]["min"] > 0, name
    claimed = {name: record["rivulet"]["extra"][0]["claimed"] for name, record in records.items()}
    assert claimed == {"xreadgroup_claim.plain": 0, "xreadgroup_claim.idle": 0, "xreadgroup_claim.recover": 1500}
    plain = records["xreadgroup_claim.plain"]["rivulet"]["median"]
    for name in ("xreadgroup_claim.idle", "xreadgroup_claim.recover"):
        record = records[name]
        assert record["baseline"] == "xreadgroup_claim.plain"
        assert record["ratio_to_baseline"] == pytest.approx(record["rivulet"]["median"] / plain)
        assert any(line.startswith(name + " ") and "rivulet/xreadgroup_claim.plain" in line
                   for line in done.stdout.splitlines()), name


@pytest.mark.skipif(not HAVE_BENCHMARK, reason="redis-benchmark is not installed")
def test_idmp_case_runs_on_rivulet_alone(tmp_path: Path) -> None:
    # Redis 7 has no IDMP: the case is not tried there (which would fail the run), and each
    # IDMP figure is given relative to plain XADD of the same run.
    done = subprocess.run(
        [sys.executable, "-m", "bench", "xadd-idmp", "--requests", "500", "--repeat", "1",
         "--results-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    records = {r["metric"]: r for r in json.loads((tmp_path / "latest.json").read_text())["results"]}
    assert set(records) == {"xadd_idmp.plain", "xadd_idmp.idmp", "xadd_idmp.idmpauto"}
    assert all(r["errors"] == {} and r["redis"] is None for r in records.values())
    assert records["xadd_idmp.plain"]["ratio_to_baseline"] is None
    for name in ("xadd_idmp.idmp", "xadd_idmp.idmpauto"):
        assert records[name]["ratio_to_baseline"] == pytest.approx(
            records[name]["rivulet"]["median"] / records["xadd_idmp.plain"]["rivulet"]["median"])


def test_scaling_case_rates_each_tenth_by_its_chunks(tmp_path: Path) -> None:
    # 200,000 entries: tenths of 20,000, two 10,000-entry chunks each. The stream must hold
    # every entry for the XRANGE at its end to find ten.
    done = subprocess.run(
        [sys.executable, "-m", "bench", "scaling", "--entries", "200000", "--no-redis",
         "--results-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    records = {r["metric"]: r for r in json.loads((tmp_path / "latest.json").read_text())["results"]}
    assert set(records) == {"scaling.xadd_first_tenth", "scaling.xadd_last_tenth", "scaling.xrange_start",
                            "scaling.xrange_middle", "scaling.xrange_end"}
    for tenth in ("first", "last"):
        ours = records[f"scaling.xadd_{tenth}_tenth"]["rivulet"]
        assert ours["ops"] == [20000]
        assert ours["median"] > 0 and ours["extra"][0]["whole_rate"] > 0
    assert all(records[f"scaling.xrange_{at}"]["rivulet"]["median"] > 0 for at in ("start", "middle", "end"))


@pytest.mark.skipif(not HAVE_BENCHMARK, reason="redis-benchmark is not installed: the replication "
                    "case was NOT run")
def test_replication_case_reports_both_layouts(tmp_path: Path) -> None:
    # Rivulet alone (the Redis side is the same code with other processes): the shared and the
    # pinned layout each give the load with and without replicas, the lag and the catch-up, and
    # the two-replica lines carry the master's CPU ratio to its own run without replicas.
    from bench.replication_bench import pinning_cores

    done = subprocess.run(
        [sys.executable, "-m", "bench", "replication", "--requests", "2000", "--repeat", "1",
         "--no-redis", "--results-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    records = {r["metric"]: r for r in json.loads((tmp_path / "latest.json").read_text())["results"]}
    layouts = ["replication."] + (["replication.pinned."] if pinning_cores() else [])
    for prefix in layouts:
        none, two = records[prefix + "xadd.none"], records[prefix + "xadd.two_replicas"]
        assert none["errors"] == {} and two["errors"] == {}
        assert two["baseline"] == prefix + "xadd.none"
        assert two["ratio_to_baseline"] == pytest.approx(two["rivulet"]["median"] / none["rivulet"]["median"])
        assert two["cpu_ratio_to_baseline"] > 0
        assert records[prefix + "lag_bytes"]["rivulet"]["median"] >= 0
        assert records[prefix + "catch_up_ms"]["rivulet"]["median"] >= 0
        assert any(line.startswith(prefix + "xadd.two_replicas ") and "the baseline's" in line
                   for line in done.stdout.splitlines())


@pytest.mark.skipif(not HAVE_BENCHMARK, reason="redis-benchmark is not installed")
def test_maxmemory_case_runs(tmp_path: Path) -> None:
    # The case checks itself that only its allkeys-lru run evicted keys.
    done = subprocess.run(
        [sys.executable, "-m", "bench", "xadd-maxmemory", "--requests", "3000", "--repeat", "1",
         "--results-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    records = {r["metric"]: r for r in json.loads((tmp_path / "latest.json").read_text())["results"]}
    assert set(records) == {"xadd_maxmemory.unlimited", "xadd_maxmemory.limit",
                            "xadd_maxmemory.evicting"}
    assert all(r["errors"] == {} and r["rivulet"]["median"] > 0 for r in records.values())


def test_cpu_meter_counts_below_a_clock_tick() -> None:
    # A server busy for a few milliseconds of a short case must not read as 0 (whole 10 ms
    # ticks) or as a tick: the meter follows the process's own CPU clock, threads included.
    from bench.procstat import CpuMeter, cpu_seconds

    child = subprocess.Popen([sys.executable, "-c", (
        "import sys, threading, time\n"
        "print(flush=True)\n"
        "def spin(s):\n"
        "    end = time.thread_time() + s\n"
        "    while time.thread_time() < end: pass\n"
        "sys.stdin.readline(); spin(0.003)\n"
        "t = threading.Thread(target=spin, args=(0.004,)); t.start(); t.join()\n"
        "print(flush=True); sys.stdin.readline()\n")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdin is not None and child.stdout is not None
        child.stdout.readline()  # started
        meter = CpuMeter(child.pid).start()
        child.stdin.write("\n")
        child.stdin.flush()
        child.stdout.readline()
        used = meter.stop()
        # 7 ms spun (3 in the main thread, 4 in a thread that has ended), plus a little waking:
        # neither no tick nor one.
        assert 0.007 <= used < 0.0095, used
        assert cpu_seconds(child.pid) >= meter.begin + used
    finally:
        child.kill()
        child.wait()
