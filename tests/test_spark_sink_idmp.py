"""The sink's idempotent modes without Spark: how the mode is chosen, and the XADD IDMP it sends."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
import pytest

if TYPE_CHECKING:
    from tests.spark_conftest import Target

pytest_plugins = ["tests.spark_conftest"]

from spark.options import OptionError, parse_write_options  # noqa: E402
from spark.writer import IDMP_BLOCK, RowLayout, _Writer, resolve_idempotent_mode  # noqa: E402


def test_auto_mode_is_idmp_where_the_server_has_it(target: Target) -> None:
    keys_before = target.r.dbsize()
    opts = parse_write_options({"url": target.url, "stream": "s", "idempotent": "true"})
    assert resolve_idempotent_mode(opts) == ("idmp" if target.name == "rivulet" else "marker")
    assert target.r.dbsize() == keys_before  # the probe adds nothing
    # Forced modes and writes that are not idempotent do not ask the server.
    unreachable = "redis://127.0.0.1:1/0"
    for options, mode in (({"idempotent": "true", "idempotentMode": "marker"}, "marker"),
                          ({"idempotent": "true", "idempotentMode": "IDMP"}, "idmp"),
                          ({"idempotent": "true", "idColumn": "id"}, "marker"),
                          ({}, "plain")):
        assert resolve_idempotent_mode(parse_write_options({"url": unreachable, **options})) == mode


def test_idempotent_mode_option_errors() -> None:
    with pytest.raises(OptionError, match="idempotentMode must be one of auto, idmp, marker, got 'x'"):
        parse_write_options({"idempotent": "true", "idempotentMode": "x"})
    with pytest.raises(OptionError, match="idempotentMode needs idempotent=true"):
        parse_write_options({"idempotentMode": "idmp"})
    with pytest.raises(OptionError, match="idmp cannot be combined with idColumn"):
        parse_write_options({"idempotent": "true", "idempotentMode": "idmp", "idColumn": "id"})


def _rows(first: int, n: int) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array([str(i) for i in range(first, first + n)])], names=["n"])


def test_idmp_writes_replay_to_the_same_entries(rivulet: Target) -> None:
    key = rivulet.key("idmp:replay")
    opts = parse_write_options({"url": rivulet.url, "stream": key, "idempotent": "true",
                                "pipelineSize": "64", "maxlen": "100000"})
    writer = _Writer(opts, RowLayout(None, None, None, ("n",)), "query-1")
    assert writer.mode == "idmp"
    rows = 3 * IDMP_BLOCK + 7
    first = writer.write_batches(iter([_rows(0, 200), _rows(200, rows - 200)]), "5")
    assert (first.written, first.skipped) == (rows, False)
    ids = [entry_id for entry_id, _ in rivulet.r.xrange(key)]
    # A second attempt of the task (same query, partition and batch) adds nothing, however the
    # rows are cut into Arrow batches, and its XADDs answer the IDs of the first attempt.
    writer.write_batches(iter([_rows(0, rows)]), "5")
    assert [entry_id for entry_id, _ in rivulet.r.xrange(key)] == ids
    pipe = rivulet.r.pipeline(transaction=False)
    for row in (0, IDMP_BLOCK, rows - 1):
        pipe.execute_command("XADD", key, "IDMP", f"query-1:0:{row // IDMP_BLOCK}", f"5:{row}",
                             "*", "n", "other")
    assert pipe.execute() == [ids[0], ids[IDMP_BLOCK], ids[-1]]
    assert [f["n"] for _, f in rivulet.r.xrange(key)] == [str(i) for i in range(rows)]
    # The next batch is new data for the same producers.
    writer.write_batches(iter([_rows(0, 10)]), "6")
    assert rivulet.r.xlen(key) == rows + 10


def test_forced_idmp_against_a_server_without_it_fails(real_redis) -> None:
    import redis

    url = f"redis://127.0.0.1:{real_redis.port}/0"
    opts = parse_write_options({"url": url, "stream": "s", "idempotent": "true", "idempotentMode": "idmp"})
    writer = _Writer(opts, RowLayout(None, None, None, ("n",)), "q")
    # Redis 7 takes the word IDMP for the entry ID.
    with pytest.raises(redis.ResponseError, match="Invalid stream ID specified"):
        writer.write_batches(iter([_rows(0, 3)]), "0")
