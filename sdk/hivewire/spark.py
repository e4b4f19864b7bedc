"""SparkSessions pointed at live metastores, metastore events as Spark DataFrames, and the ``hivewire`` Spark
data source (``spark.read.format("hivewire")``, batch and streaming) with its history job, and the same events
decoded in the JVM (:func:`read`, :func:`read_stream`, :func:`from_kafka`) (``hivewire[spark]``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hivewire.data._spark import (
    METASTORE_URIS_CONF,
    builder,
    from_kafka,
    read,
    read_stream,
    register,
    session,
    to_dataframe,
)
from hivewire.data._spark_history import HistorySettings, start_history

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    SPARK_SCHEMA: StructType
    """hivewire.arrow's schema in Spark SQL types: the schema of every DataFrame :func:`to_dataframe` returns."""

__all__ = [
    "METASTORE_URIS_CONF",
    "HistorySettings",
    "builder",
    "from_kafka",
    "read",
    "read_stream",
    "register",
    "session",
    "start_history",
    "to_dataframe",
]


def __getattr__(name: str) -> object:
    # SPARK_SCHEMA is built on first access, so importing hivewire.spark needs neither pyspark nor pyarrow.
    if name == "SPARK_SCHEMA":
        from hivewire.data import _spark

        return _spark.SPARK_SCHEMA
    raise AttributeError(f"module 'hivewire.spark' has no attribute {name!r}")
