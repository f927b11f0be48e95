"""`redis_streams`: a PySpark source and sink for Redis Streams (Rivulet or Redis 7+).

    from spark import register
    register(spark)                       # once per SparkSession
    df = spark.read.format("redis_streams").option("url", "redis://localhost:6379/0") \\
        .option("streams", "sensors").load()

Built on Spark's Python Data Source API (pyspark >= 4.2). Install with `pip install .[spark]`; the
server itself never imports this package. See README.md ("Spark") for options and guarantees.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)

FORMAT = "redis_streams"

__all__ = ["FORMAT", "RedisStreamsDataSource", "register"]


class RedisStreamsDataSource(DataSource):
    """The data source; Spark instantiates it with the query's options on driver and executors."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> Any:
        from spark.schema import default_schema

        return default_schema()

    def _read_setup(self, schema: Any, streaming: bool) -> tuple[Any, Any]:
        from spark.options import parse_read_options
        from spark.reader import ReadConfig
        from spark.schema import plan_columns

        opts = parse_read_options(self.options, streaming=streaming)
        columns, arrow_schema = plan_columns(schema)
        cfg = ReadConfig(
            endpoint=opts.endpoint, read_from=opts.read_from, batch_size=opts.batch_size,
            fail_on_data_loss=opts.fail_on_data_loss, failfast=opts.failfast, columns=columns,
            arrow_schema=arrow_schema,
            inject_failure_key=opts.inject_failure_key,
        )
        return opts, cfg

    def reader(self, schema: Any) -> DataSourceReader:
        from spark.reader import BatchReader

        return BatchReader(*self._read_setup(schema, streaming=False))

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        opts, cfg = self._read_setup(schema, streaming=True)
        if opts.group:
            from spark.group import GroupStreamReader

            return GroupStreamReader(opts, cfg)
        from spark.stream_reader import StreamReader

        return StreamReader(opts, cfg)

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        from spark.options import parse_write_options
        from spark.writer import BatchWriter, plan_layout

        opts = parse_write_options(self.options)
        return BatchWriter(opts, plan_layout(schema, opts))

    def streamWriter(self, schema: Any, overwrite: bool) -> DataSourceStreamWriter:
        from spark.options import parse_write_options
        from spark.writer import StreamWriter, plan_layout

        opts = parse_write_options(self.options)
        return StreamWriter(opts, plan_layout(schema, opts))


def register(spark: Any) -> None:
    """Register the `redis_streams` format with a SparkSession (needed once per session)."""
    spark.dataSource.register(RedisStreamsDataSource)
