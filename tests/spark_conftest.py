"""A real local SparkSession shared by all Spark tests (loaded with pytest_plugins).

Starting the JVM costs ~10 s, so one session serves the whole run. Tuned for a 2-core machine:
local[2,4] (two threads; up to 4 attempts per task so injected task failures are retried),
1 GB driver heap, 2 shuffle partitions, no UI, everything bound to 127.0.0.1, and the Python
workers pinned to this interpreter (they must import the `spark` package from this venv).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Iterator

import pytest
import redis

pytest.importorskip("pyspark", reason="the Spark tests need the [spark] extra (pip install .[spark])")
pytest.importorskip("pyarrow", reason="the Spark tests need the [spark] extra (pip install .[spark])")

from tests.serverproc import RedisProcess, ServerProcess  # noqa: E402


def _java_ok() -> bool:
    return shutil.which("java") is not None or bool(os.environ.get("JAVA_HOME"))


@pytest.fixture(scope="session")
def spark() -> Iterator:
    if not _java_ok():
        pytest.skip("no Java runtime: install openjdk-17-jre-headless (make test does it as root)")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    from pyspark.sql import SparkSession

    from spark import register

    warehouse = tempfile.mkdtemp(prefix="rivulet-spark-")
    session = (
        SparkSession.builder.master("local[2,4]")
        .appName("rivulet-tests")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.warehouse.dir", os.path.join(warehouse, "warehouse"))
        .config("spark.sql.streaming.stopTimeout", "30s")
        # Fewer, smaller state-store files and no adaptive re-planning: faster tiny queries.
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.streaming.minBatchesToRetain", "5")
        .config("spark.python.worker.reuse", "true")
        .config("spark.driver.extraJavaOptions", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    yield session
    session.stop()
    shutil.rmtree(warehouse, ignore_errors=True)


class Target:
    """A server the Spark tests read from and write to: Rivulet or real Redis."""

    def __init__(self, name: str, port: int) -> None:
        self.name = name
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"
        self.r = redis.Redis(port=port, decode_responses=True)

    def key(self, base: str) -> str:
        # Unique keys per test: the session-scoped servers are shared, never flushed mid-run.
        return f"{base}:{uuid.uuid4().hex[:8]}"


@pytest.fixture
def rivulet(server: ServerProcess) -> Iterator[Target]:
    target = Target("rivulet", server.port)
    yield target
    target.r.close()


@pytest.fixture(params=["rivulet", "redis"])
def target(request, server: ServerProcess) -> Iterator[Target]:
    """The same test against Rivulet and against Debian's redis-server."""
    if request.param == "rivulet":
        t = Target("rivulet", server.port)
    else:
        proc: RedisProcess = request.getfixturevalue("real_redis")
        t = Target("redis", proc.port)
    yield t
    t.r.close()


@pytest.fixture
def tmpdir_spark(tmp_path) -> str:
    return str(tmp_path)
