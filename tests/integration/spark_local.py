"""One in-process Spark session for the tests that read hivewire's tables with Spark SQL.

``local[1]``, times in UTC, no UI and no progress bars, one shuffle partition: what the Arrow, archive and
Iceberg-column tests compare is Spark's reading, not its parallelism.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def local_session(app_name: str) -> Iterator[Any]:
    """A started Spark session named ``app_name``, stopped when the block ends."""
    from pyspark.sql import SparkSession

    session = (
        SparkSession.Builder()
        .master("local[1]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    try:
        yield session
    finally:
        session.stop()
