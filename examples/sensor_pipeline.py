"""The example pipeline: sensor readings -> Spark Structured Streaming -> per-sensor averages.

A producer writes readings to the `sensors` stream; a streaming job reads them through the
`redis_streams` source, averages each sensor's temperature over 10-second windows (event time =
the entry ID's timestamp) and writes the averages to `sensors:avg` through the sink (idempotent
mode). This script also tails `sensors:avg` and prints results as they arrive.

    make pipeline                        # starts a server on $PORT if none answers, then all this
    python examples/sensor_pipeline.py --port 6379 --duration 60
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the `spark` package, when run from a checkout

from sensor_producer import produce  # noqa: E402 -- examples/ is this script's directory


def server_running(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def start_server(port: int, data_dir: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "server", "--port", str(port), "--dir", data_dir],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    for _ in range(100):
        if server_running(port):
            return proc
        time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"the server did not start on port {port}")


def spark_session():
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise SystemExit("Spark needs a Java 17+ runtime: apt-get install openjdk-17-jre-headless")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from spark import register

    spark = (SparkSession.builder.master("local[2]").appName("sensor-pipeline")
             .config("spark.driver.memory", "1g").config("spark.sql.shuffle.partitions", "2")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.host", "127.0.0.1").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def start_job(spark, url: str, checkpoint: str):
    from pyspark.sql import functions as F

    readings = (
        spark.readStream.format("redis_streams")
        .option("url", url).option("streams", "sensors").option("startingOffsets", "latest")
        .option("maxEntriesPerTrigger", "50000")
        # ts is the entry's time (from its ID); sensor and temperature come from its fields.
        .schema("ts TIMESTAMP, sensor STRING, temperature DOUBLE")
        .load()
    )
    averages = (
        # Readings may arrive up to 2 s late; a window is final (and emitted) once the watermark
        # passes its end.
        readings.withWatermark("ts", "2 seconds")
        .groupBy(F.window("ts", "10 seconds"), "sensor")
        .agg(F.round(F.avg("temperature"), 2).alias("avg_temperature"), F.count("*").alias("readings"))
        .select("sensor",
                F.date_format("window.start", "HH:mm:ss").alias("window_start"),
                F.date_format("window.end", "HH:mm:ss").alias("window_end"),
                "avg_temperature", "readings")
    )
    # Append mode (the one Python data source sinks support): each window is written once, when
    # final. The sink's idempotent mode writes each (batch, partition) once even when Spark
    # retries a task or replays a batch after a restart.
    return (
        averages.writeStream.outputMode("append").format("redis_streams")
        .option("url", url).option("stream", "sensors:avg").option("idempotent", "true")
        .option("checkpointLocation", checkpoint).trigger(processingTime="2 seconds").start()
    )


def tail(url: str, stop: threading.Event) -> None:
    r = redis.Redis.from_url(url, decode_responses=True)
    last = "$"
    while not stop.is_set():
        try:
            reply = r.xread({"sensors:avg": last}, block=1000, count=100)
        except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError):
            # The server restarts (compose, a crash test): keep printing once it is back.
            stop.wait(1)
            continue
        for _, entries in reply or []:
            for entry_id, f in entries:
                last = entry_id
                print(f"{f['window_start']}-{f['window_end']}  {f['sensor']:<9} "
                      f"avg {f['avg_temperature']:>6} °C over {f['readings']:>4} readings", flush=True)
    r.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=6379)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds; 0 runs until Ctrl-C")
    parser.add_argument("--rate", type=float, default=100.0, help="readings per second")
    args = parser.parse_args()
    url = f"redis://127.0.0.1:{args.port}/0"
    workdir = tempfile.mkdtemp(prefix="sensor-pipeline-")
    server = None
    if not server_running(args.port):
        print(f"starting a Rivulet server on port {args.port}")
        server = start_server(args.port, workdir)
    stop = threading.Event()
    printer = None
    try:
        print("starting Spark (about 10 s)...", flush=True)
        spark = spark_session()
        query = start_job(spark, url, os.path.join(workdir, "checkpoint"))
        printer = threading.Thread(target=tail, args=(url, stop), daemon=True)
        printer.start()
        producer = threading.Thread(target=produce, args=(url,),
                                    kwargs={"rate": args.rate, "duration": args.duration}, daemon=True)
        producer.start()
        print(f"producing {args.rate:.0f} readings/s to 'sensors'; averages from 'sensors:avg':", flush=True)
        try:
            while producer.is_alive() and query.isActive:
                producer.join(1)
            if query.isActive:
                query.awaitTermination(15)  # the last windows close once the watermark moves
        except KeyboardInterrupt:
            pass
        error = query.exception()
        query.stop()
        spark.stop()
        if error is not None:
            raise SystemExit(f"the streaming job failed: {error}")
    finally:
        stop.set()
        if printer is not None:
            printer.join(5)
        if server is not None:
            server.terminate()
            server.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
