"""The sink's marker mode when its connection is lost while the partition's transaction runs."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
import redis

pytest.importorskip("pyarrow", reason="the Spark tests need the [spark] extra")
pytest.importorskip("pyspark", reason="the Spark tests need the [spark] extra")

import pyarrow as pa  # noqa: E402

from spark.options import parse_write_options  # noqa: E402
from spark.writer import RowLayout, _Writer  # noqa: E402

pytestmark = pytest.mark.timeout(60)


def _rows(n: int) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array([str(i) for i in range(n)])], names=["n"])


def test_a_transaction_cut_short_is_not_a_written_partition(real_redis) -> None:
    """The connection dies inside MULTI, after WATCH (CLIENT PAUSE WRITE holds its XADDs): redis-py
    reports that as a WatchError, like a concurrent attempt's commit. The marker is absent, so the partition
    was not written: the attempt fails, and the next attempt writes it, once."""
    url = f"redis://127.0.0.1:{real_redis.port}/0"
    key = f"loss:{uuid.uuid4().hex[:8]}"
    opts = parse_write_options({"url": url, "stream": key, "idempotent": "true",
                                "idempotentMode": "marker"})
    writer = _Writer(opts, RowLayout(None, None, None, ("n",)), "job")
    admin = redis.Redis(port=real_redis.port, decode_responses=True)
    killed: list[int] = []

    def kill_the_transaction() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not killed:
            for c in admin.client_list(_type="normal"):
                if "x" in c["flags"]:  # in MULTI
                    admin.client_kill_filter(_id=c["id"])
                    killed.append(int(c["id"]))
            time.sleep(0.01)
        admin.client_unpause()

    admin.client_pause(20_000, all=False)  # WRITE: the transaction's XADDs wait
    killer = threading.Thread(target=kill_the_transaction)
    killer.start()
    try:
        with pytest.raises(redis.ConnectionError, match="lost during the partition's transaction"):
            writer.write_batches(iter([_rows(50)]), "7")
    finally:
        killer.join()
        admin.client_unpause()
    assert killed
    assert admin.xlen(key) == 0
    result = writer.write_batches(iter([_rows(50)]), "7")
    assert (result.written, result.skipped) == (50, False)
    assert [f["n"] for _, f in admin.xrange(key)] == [str(i) for i in range(50)]
    # A third attempt finds the marker.
    assert writer.write_batches(iter([_rows(50)]), "7").skipped
    assert admin.xlen(key) == 50
    admin.close()
