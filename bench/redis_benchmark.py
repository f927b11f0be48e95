"""Running Debian's `redis-benchmark` against a server and reading its CSV output."""

from __future__ import annotations

import csv
import subprocess
from collections.abc import Sequence

from bench.procstat import CpuMeter
from bench.resp import TLSFiles
from bench.stats import Sample
from bench.targets import Target


def run_redis_benchmark(target: Target, requests: int, clients: int, pipeline: int,
                        command: Sequence[str] = (), tests: str | None = None,
                        tls: TLSFiles | None = None) -> Sample:
    """ops/s reported by redis-benchmark, with the server's CPU seconds over the whole run; with
    `tls`, over the target's TLS port."""
    port = target.tls_port if tls is not None else target.port
    argv = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-n", str(requests),
            "-c", str(clients), "-P", str(pipeline), "-q", "--csv"]
    if tls is not None:
        argv += tls.redis_benchmark_args()
    argv += ["-t", tests] if tests else list(command)
    cpu = CpuMeter(target.pid).start()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    used = cpu.stop()
    rps = parse_csv_rps(done.stdout)
    if done.returncode != 0 or rps is None:
        raise RuntimeError(f"redis-benchmark failed ({done.returncode}): {done.stdout} {done.stderr}".strip())
    return Sample(rps, requests, used, {"clients": clients, "pipeline": pipeline, "requests": requests})


def parse_csv_rps(text: str) -> float | None:
    """The "rps" column of redis-benchmark --csv's single result row."""
    rows = list(csv.reader(line for line in text.splitlines() if line.startswith('"')))
    if len(rows) < 2 or "rps" not in rows[0]:
        return None
    column = rows[0].index("rps")
    return float(rows[-1][column])
