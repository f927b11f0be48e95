"""Lets Spark find the `redis_streams` format without a register() call.

Spark's Python data source discovery imports installed top-level modules named `pyspark_*` and
registers their `DefaultSource`; the implementation lives in the `spark` package.
"""

from spark import RedisStreamsDataSource as DefaultSource

__all__ = ["DefaultSource"]
