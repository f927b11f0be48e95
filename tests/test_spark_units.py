"""The source's pure parts, without a SparkSession: IDs, ranges, options, conversion, loss checks."""

from __future__ import annotations

import pytest

pytest.importorskip("pyarrow", reason="the Spark tests need the [spark] extra")
pytest.importorskip("pyspark", reason="the Spark tests need the [spark] extra")

from pyspark.sql.types import (  # noqa: E402
    DecimalType,
    IntegerType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from spark.client import StreamState  # noqa: E402
from spark.offsets import MAX_SEQ, StreamId, decode_added, decode_offset, encode_offset, split_range  # noqa: E402
from spark.options import OptionError, parse_read_options, parse_write_options  # noqa: E402
from spark.reader import DataLossError, check_data_loss  # noqa: E402
from spark.schema import ConversionError, entries_to_batch, plan_columns  # noqa: E402


def sid(text: str) -> StreamId:
    return StreamId.parse(text)


def test_ids_order_and_neighbours() -> None:
    assert sid("5-10") < sid("6-0") < sid("6-1")
    assert sid("7") == sid("7-0")
    assert sid(f"5-{MAX_SEQ}").successor() == sid("6-0")
    assert sid("6-0").predecessor() == sid(f"5-{MAX_SEQ}")
    with pytest.raises(ValueError, match="invalid stream ID"):
        sid("abc-1")


def test_split_range_covers_exactly_once() -> None:
    pieces = split_range(sid("1000-3"), sid("2000-7"), 4)
    assert len(pieces) == 4
    assert pieces[0][0] == sid("1000-3") and pieces[-1][1] == sid("2000-7")
    assert all(pieces[k][1] == pieces[k + 1][0] for k in range(3))
    assert split_range(sid("5-0"), sid("5-9"), 4) == [(sid("5-0"), sid("5-9"))]
    assert split_range(sid("5-9"), sid("5-9"), 4) == []


def test_offsets_round_trip() -> None:
    offset = encode_offset({"b": sid("2-0"), "a": sid("1-5")}, {"a": 7, "b": None})
    assert offset == {"streams": {"a": "1-5", "b": "2-0"}, "added": {"a": 7}}
    assert decode_offset(offset) == {"a": sid("1-5"), "b": sid("2-0")}
    assert decode_added(offset) == {"a": 7}


def test_read_options() -> None:
    opts = parse_read_options({"streams": "a, b", "startingTimestamp": "1000", "endingTimestamp": "2000"},
                              streaming=False)
    assert opts.streams == ["a", "b"]
    assert opts.starting_default == f"999-{MAX_SEQ}" and opts.ending_default == f"1999-{MAX_SEQ}"
    opts = parse_read_options({"Streams": "a", "STARTINGOFFSETS": '{"a": "5-1"}'}, streaming=True)
    assert opts.start_for("a") == sid("5-1") and opts.start_for("z") == "latest"
    bad = [
        ({"streams": "a", "pattern": "x*"}, "exactly one of the options streams"),
        ({"streams": "a", "url": "http://x"}, "url must look like"),
        ({"streams": "a", "startingOffsets": "{oops"}, "startingOffsets must be earliest, latest or a JSON"),
        ({"streams": "a", "startingOffsets": '{"a": "x-1"}'}, "for stream 'a': invalid stream ID"),
        ({"streams": "a", "batchSize": "0"}, "batchSize must be >= 1"),
        ({"streams": "a", "failOnDataLoss": "perhaps"}, "failOnDataLoss must be true or false"),
        ({"streams": "a", "mode": "lenient"}, "mode must be PERMISSIVE or FAILFAST"),
        ({"streams": "a", "group": "g"}, "consumer-group mode"),
        ({"streams": "a", "startingOffsets": "earliest", "startingTimestamp": "1"}, "not both"),
    ]
    for options, message in bad:
        with pytest.raises(OptionError, match=message):
            parse_read_options(options, streaming=False)
    with pytest.raises(OptionError, match="batch reads only"):
        parse_read_options({"streams": "a", "endingTimestamp": "5"}, streaming=True)


def test_write_options() -> None:
    opts = parse_write_options({"stream": "s", "maxlen": "10", "idempotent": "true", "checkpointLocation": "/x"})
    assert (opts.stream, opts.maxlen, opts.idempotent, opts.approximate) == ("s", 10, True, True)
    with pytest.raises(OptionError, match="unknown write option"):
        parse_write_options({"streem": "s"})


def test_conversion_permissive_and_failfast() -> None:
    schema = StructType([
        StructField("id", StringType()), StructField("n", IntegerType()),
        StructField("price", DecimalType(5, 2)), StructField("at", TimestampType()),
    ])
    columns, arrow_schema = plan_columns(schema)
    entries = [
        ("1-0", {"n": "7", "price": "12.50", "at": "1000"}),
        ("2-0", {"n": "4294967296", "price": "123456.789", "at": "not a time"}),
        ("3-0", {}),
    ]
    batch = entries_to_batch("s", entries, columns, arrow_schema, failfast=False)
    rows = batch.to_pylist()
    assert rows[0]["n"] == 7 and str(rows[0]["price"]) == "12.50" and rows[0]["at"].timestamp() == 1.0
    assert rows[1] == {"id": "2-0", "n": None, "price": None, "at": None}
    assert rows[2] == {"id": "3-0", "n": None, "price": None, "at": None}
    with pytest.raises(ConversionError, match="field 'n' of entry 2-0 in stream 's'"):
        entries_to_batch("s", entries, columns, arrow_schema, failfast=True)


def state(first: str | None, length: int, added: int, max_deleted: str = "0-0") -> StreamState:
    return StreamState(length=length, first_entry=sid(first) if first else None, last_entry=sid("100-0"),
                       last_generated=sid("100-0"), max_deleted=sid(max_deleted), entries_added=added)


def test_data_loss_rules() -> None:
    # Read up to 10-0 (10 entries ever added up to it); then 10-0 itself was trimmed: no loss.
    check_data_loss(state("11-0", 90, 100), "s", sid("10-0"), sid("100-0"), 10, fail=True)
    # 15 entries removed but only 10 were at or before our position: 5 unread ones were trimmed.
    with pytest.raises(DataLossError, match="5 entries were trimmed"):
        check_data_loss(state("16-0", 85, 100), "s", sid("10-0"), sid("100-0"), 10, fail=True)
    # XDEL inside the range.
    with pytest.raises(DataLossError, match="50-0 was deleted"):
        check_data_loss(state("1-0", 99, 100, "50-0"), "s", sid("10-0"), sid("100-0"), 10, fail=True)
    # ... but not beyond it, and not with failOnDataLoss=false.
    check_data_loss(state("1-0", 99, 100, "50-0"), "s", sid("10-0"), sid("40-0"), 10, fail=True)
    check_data_loss(state("16-0", 85, 100), "s", sid("10-0"), sid("100-0"), 10, fail=False)
    with pytest.raises(DataLossError, match="no longer exists"):
        check_data_loss(None, "s", sid("10-0"), sid("100-0"), 10, fail=True)
