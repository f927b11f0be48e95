"""The source's schema: the default one, user schemas, and entries -> Arrow record batches.

`plan_columns` runs on the driver (it needs pyspark's types) and yields a picklable plan; the
executor side (`entries_to_batch`) needs only pyarrow.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import pyarrow as pa

# The metadata columns, by name, with their required Spark types (simpleString form).
METADATA_COLUMNS = {
    "stream": "string",
    "id": "string",
    "ts": "timestamp",
    "seq": "bigint",
    "fields": "map<string,string>",
}
DEFAULT_SCHEMA_DDL = "stream STRING, id STRING, ts TIMESTAMP, seq LONG, fields MAP<STRING,STRING>"

_INT_RANGES = {
    "tinyint": (-(2**7), 2**7 - 1),
    "smallint": (-(2**15), 2**15 - 1),
    "int": (-(2**31), 2**31 - 1),
    "bigint": (-(2**63), 2**63 - 1),
}
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def default_schema() -> Any:
    """The default schema as a pyspark StructType (DDL parsing would need a live session)."""
    from pyspark.sql.types import LongType, MapType, StringType, StructField, StructType, TimestampType

    return StructType([
        # All nullable, as Spark makes source schemas: the Arrow schema the worker checks our
        # batches against is derived from the schema after that adjustment.
        StructField("stream", StringType()),
        StructField("id", StringType()),
        StructField("ts", TimestampType()),
        StructField("seq", LongType()),
        StructField("fields", MapType(StringType(), StringType())),
    ])


@dataclass(frozen=True)
class Column:
    name: str
    kind: str  # a metadata column name, or the conversion applied to an entry field
    spark_type: str


def plan_columns(schema: Any) -> tuple[list[Column], pa.Schema]:
    """Map a Spark StructType to per-column conversions and the exact Arrow schema Spark expects.

    Columns named like the metadata columns (stream, id, ts, seq, fields) carry the entry's
    metadata and must keep their default types; every other column is read from the entry field of
    the same name. (An entry field called e.g. `id` stays reachable through the `fields` map.)
    """
    from pyspark.sql.pandas.types import to_arrow_schema

    columns: list[Column] = []
    for f in schema.fields:
        type_name = f.dataType.simpleString()
        if f.name in METADATA_COLUMNS:
            if type_name != METADATA_COLUMNS[f.name]:
                raise ValueError(
                    f"redis_streams: column {f.name!r} is the entry's {f.name} and must be "
                    f"{METADATA_COLUMNS[f.name].upper()}, not {type_name.upper()}"
                )
            columns.append(Column(f.name, f.name, type_name))
            continue
        columns.append(Column(f.name, _field_kind(f.name, type_name), type_name))
    return columns, to_arrow_schema(schema, timezone="UTC")


def _field_kind(name: str, type_name: str) -> str:
    if type_name == "string":
        return "str"
    if type_name in _INT_RANGES:
        return "int"
    if type_name in ("double", "float"):
        return "float"
    if type_name in ("boolean", "timestamp", "timestamp_ntz", "date", "binary"):
        return type_name
    if type_name.startswith("decimal"):
        return "decimal"
    raise ValueError(
        f"redis_streams: column {name!r} has type {type_name.upper()}, which entry fields cannot "
        "be converted to (use STRING, integer types, FLOAT, DOUBLE, BOOLEAN, DECIMAL, DATE, "
        "TIMESTAMP, TIMESTAMP_NTZ or BINARY)"
    )


class ConversionError(ValueError):
    """A field value that does not convert to its column's type (mode=FAILFAST)."""


def _to_micros(value: str, ntz: bool) -> int:
    text = value.strip()
    try:
        # A bare number is epoch milliseconds, the unit of the entry IDs themselves.
        return int(float(text) * 1000) if text.lstrip("-").replace(".", "", 1).isdigit() else _iso(text, ntz)
    except OverflowError:
        raise ValueError(value) from None


def _iso(text: str, ntz: bool) -> int:
    parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    elif ntz:
        parsed = parsed.replace(tzinfo=dt.UTC)
    delta = parsed - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


_TRUE = {"true", "1", "yes", "t", "y"}
_FALSE = {"false", "0", "no", "f", "n"}


def _convert(value: str, column: Column) -> Any:
    kind = column.kind
    if kind == "str":
        return value
    if kind == "int":
        number = int(value.strip())
        lo, hi = _INT_RANGES[column.spark_type]
        if not lo <= number <= hi:
            raise ValueError(value)
        return number
    if kind == "float":
        return float(value)
    if kind == "boolean":
        low = value.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise ValueError(value)
    if kind in ("timestamp", "timestamp_ntz"):
        return _to_micros(value, kind == "timestamp_ntz")
    if kind == "date":
        return dt.date.fromisoformat(value.strip())
    if kind == "decimal":
        return Decimal(value.strip())
    if kind == "binary":
        return value.encode()
    raise ValueError(f"unknown conversion {kind}")  # plan_columns rules this out


def entries_to_batch(
    stream: str,
    entries: list[tuple[str, dict[str, str]]],
    columns: list[Column],
    schema: pa.Schema,
    failfast: bool,
) -> pa.RecordBatch:
    """One XRANGE page -> one Arrow record batch in the query's schema."""
    arrays: list[pa.Array] = []
    n = len(entries)
    ids: list[tuple[int, int]] | None = None
    for index, column in enumerate(columns):
        arrow_type = schema.field(index).type
        kind = column.kind
        if kind in ("ts", "seq") and ids is None:
            ids = [_split_id(entry_id) for entry_id, _ in entries]
        if kind == "stream":
            arrays.append(pa.array([stream] * n, arrow_type))
        elif kind == "id":
            arrays.append(pa.array([entry_id for entry_id, _ in entries], arrow_type))
        elif kind == "ts":
            assert ids is not None
            arrays.append(pa.array([ms * 1000 for ms, _ in ids], pa.int64()).cast(arrow_type))
        elif kind == "seq":
            assert ids is not None
            arrays.append(pa.array([seq for _, seq in ids], arrow_type))
        elif kind == "fields":
            arrays.append(_map_array(entries, arrow_type))
        else:
            arrays.append(_field_array(stream, entries, column, arrow_type, failfast))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _split_id(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq)


def _map_array(entries: list[tuple[str, dict[str, str]]], arrow_type: pa.DataType) -> pa.Array:
    offsets = [0]
    keys: list[str] = []
    values: list[str] = []
    for _, fields in entries:
        keys.extend(fields.keys())
        values.extend(fields.values())
        offsets.append(len(keys))
    return pa.MapArray.from_arrays(
        pa.array(offsets, pa.int32()), pa.array(keys, pa.string()), pa.array(values, pa.string()),
        type=arrow_type,
    )


def _field_array(
    stream: str, entries: list[tuple[str, dict[str, str]]], column: Column, arrow_type: pa.DataType,
    failfast: bool,
) -> pa.Array:
    name = column.name
    out: list[Any] = []
    if column.kind == "str":
        return pa.array([fields.get(name) for _, fields in entries], arrow_type)
    for entry_id, fields in entries:
        raw = fields.get(name)
        if raw is None:
            out.append(None)  # a missing field is null in every mode
            continue
        try:
            out.append(_convert(raw, column))
        except (ValueError, InvalidOperation, ArithmeticError):
            if failfast:
                raise ConversionError(
                    f"redis_streams: field {name!r} of entry {entry_id} in stream {stream!r} has "
                    f"value {raw!r}, which is not a valid {column.spark_type.upper()} (mode=FAILFAST)"
                ) from None
            out.append(None)
    if column.kind in ("timestamp", "timestamp_ntz"):
        return pa.array(out, pa.int64()).cast(arrow_type)
    if column.kind == "decimal":
        try:
            return pa.array(out, arrow_type)
        except (pa.ArrowInvalid, ArithmeticError):
            # A value with more precision than the column: convert one by one to find it.
            return pa.array([_fit_decimal(v, arrow_type, failfast, stream, name) for v in out], arrow_type)
    return pa.array(out, arrow_type)


def _fit_decimal(value: Any, arrow_type: pa.DataType, failfast: bool, stream: str, name: str) -> Any:
    if value is None:
        return None
    try:
        pa.array([value], arrow_type)
        return value
    except (pa.ArrowInvalid, ArithmeticError):
        if failfast:
            raise ConversionError(
                f"redis_streams: field {name!r} in stream {stream!r}: {value} does not fit "
                f"{arrow_type} (mode=FAILFAST)"
            ) from None
        return None
