"""Spark finds the `redis_streams` format by itself (pyspark_redis_streams), no register() call."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import redis

pytest.importorskip("pyspark", reason="the Spark tests need the [spark] extra (pip install .[spark])")

from tests.serverproc import ROOT  # noqa: E402

SCRIPT = textwrap.dedent("""
    import sys
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
             .getOrCreate())
    df = (spark.read.format("redis_streams").option("url", "redis://127.0.0.1:%d/0")
          .option("streams", "discovered").load())
    print("ROWS", sorted(r["id"] for r in df.collect()))
    spark.stop()
""")


def test_format_is_discovered_without_register(server) -> None:
    r = redis.Redis(port=server.port)
    r.delete("discovered")
    r.xadd("discovered", {"a": 1}, id="1-1")
    r.xadd("discovered", {"a": 2}, id="2-1")
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    out = subprocess.run([sys.executable, "-c", SCRIPT % server.port], cwd="/", env=env,
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "ROWS ['1-1', '2-1']" in out.stdout
    assert ROOT.exists()
