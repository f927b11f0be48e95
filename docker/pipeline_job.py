"""The Spark job of examples/sensor_pipeline.py, run against a server named by URL (compose's `pipeline`).

examples/sensor_pipeline.py is the all-in-one local demo: it connects to 127.0.0.1 (starting a
server there if none answers), produces readings itself and keeps its checkpoint in a temporary
directory. In compose the server is another container with a password, the producer is its own
service, and the checkpoint lives in the `pipeline-state` volume, so this runs the same job
(`spark_session`, `start_job`) and the same printer of averages (`tail`) with:

    RIVULET_URL         redis://:PASSWORD@server:6379/0 (required)
    RIVULET_CHECKPOINT  the query's checkpoint directory (default /app/state/checkpoint)

It runs until SIGTERM or SIGINT, then stops the query and Spark and exits 0.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

EXAMPLES = Path(os.environ.get("RIVULET_EXAMPLES", "/app/examples"))
sys.path.insert(0, str(EXAMPLES))

import sensor_pipeline  # noqa: E402 -- from examples/, put on the path above


def main() -> int:
    url = os.environ.get("RIVULET_URL")
    if not url:
        print("pipeline_job: set RIVULET_URL, e.g. redis://:PASSWORD@server:6379/0", file=sys.stderr)
        return 2
    checkpoint = os.environ.get("RIVULET_CHECKPOINT", "/app/state/checkpoint")
    stop = threading.Event()
    # Only a flag: the loop below notices it within a second, between two calls into the JVM.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, frame: stop.set())
    print(f"pipeline_job: starting Spark; checkpoint {checkpoint}", flush=True)
    spark = sensor_pipeline.spark_session()
    query = None
    try:
        query = sensor_pipeline.start_job(spark, url, checkpoint)
        printer = threading.Thread(target=sensor_pipeline.tail, args=(url, stop), daemon=True)
        printer.start()
        print("pipeline_job: query started; averages from 'sensors:avg':", flush=True)
        while not stop.is_set():
            if query.awaitTermination(1):
                # The query ended by itself: a failure exits 1, and compose restarts the job.
                error = query.exception()
                if error is not None:
                    print(f"pipeline_job: the query failed: {error}", file=sys.stderr, flush=True)
                    return 1
                return 0
        print("pipeline_job: stopping", flush=True)
        return 0
    finally:
        stop.set()
        if query is not None:
            try:
                query.stop()
            except Exception as exc:  # stopping anyway
                print(f"pipeline_job: query.stop: {exc}", file=sys.stderr)
        spark.stop()


if __name__ == "__main__":
    sys.exit(main())
