"""Helpers for testing hivewire listeners in your own test suite, with no Kafka broker and no JVM.

``mock_kafka()`` gives a real Kafka-protocol endpoint: librdkafka's built-in mock cluster, which ships
inside the ``confluent-kafka`` wheel. Any Kafka client, in this process or another, can connect to it::

    with hw.testing.mock_kafka() as bootstrap:
        app.run(hw.KafkaSource(bootstrap_servers=bootstrap, topic="apiary"))

Limits of the mock (librdkafka's, not ours): topics are created on first produce with 4 partitions;
CreateTopics/DeleteTopics are not served; a new consumer group waits about 3 s before its first
assignment; the cluster lives exactly as long as the ``with`` block.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

__all__ = ["make_database", "make_partition", "make_table", "mock_kafka"]


@contextlib.contextmanager
def mock_kafka(num_brokers: int = 1) -> Iterator[str]:
    """Run a librdkafka mock cluster for the duration of the block; yield its bootstrap servers string."""
    from confluent_kafka import Producer

    owner = Producer({
        "test.mock.num.brokers": num_brokers,
        "bootstrap.servers": "",
        "logger": logging.getLogger("hivewire.testing.mock_kafka"),
    })
    try:
        metadata = owner.list_topics(timeout=10)
        yield ",".join(f"{b.host}:{b.port}" for b in sorted(metadata.brokers.values(), key=lambda b: b.id))
    finally:
        owner.flush(5)
        del owner


# -- Thrift object factories ----------------------------------------------------------------------------
# Small builders for the metastore objects that events carry, with Hive's usual defaults (parquet, a
# location under a fake warehouse). They return the generated hivewire_thrift types.

_PARQUET = (
    "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
    "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
    "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
)


def make_database(name: str, *, location: str | None = None, description: str | None = None,
                  parameters: dict[str, str] | None = None, owner: str = "hivewire") -> Any:
    """A ``Database`` named ``name``."""
    from hivewire_thrift.hive_metastore import ttypes as hms

    return hms.Database(name=name, description=description,
                        locationUri=location or f"file:/tmp/hivewire-warehouse/{name}.db",
                        parameters=dict(parameters or {}), ownerName=owner, ownerType=hms.PrincipalType.USER)


def make_table(db: str, name: str, *, columns: dict[str, str] | None = None,
               partition_keys: dict[str, str] | None = None, location: str | None = None,
               parameters: dict[str, str] | None = None, table_type: str = "MANAGED_TABLE",
               owner: str = "hivewire", skewed: Any = None, create_time: int = 0) -> Any:
    """A parquet ``Table`` ``db.name`` with ``columns`` and ``partition_keys`` given as ``{name: type}``."""
    from hivewire_thrift.hive_metastore import ttypes as hms

    cols = [hms.FieldSchema(name=k, type=v, comment=None) for k, v in (columns or {"id": "int"}).items()]
    pkeys = [hms.FieldSchema(name=k, type=v, comment=None) for k, v in (partition_keys or {}).items()]
    sd = hms.StorageDescriptor(
        cols=cols, location=location or f"file:/tmp/hivewire-warehouse/{db}.db/{name}",
        inputFormat=_PARQUET[0], outputFormat=_PARQUET[1], compressed=False, numBuckets=-1,
        serdeInfo=hms.SerDeInfo(name=None, serializationLib=_PARQUET[2], parameters={"serialization.format": "1"}),
        bucketCols=[], sortCols=[], parameters={}, skewedInfo=skewed, storedAsSubDirectories=False)
    params = dict(parameters or {})
    if table_type == "EXTERNAL_TABLE":
        params.setdefault("EXTERNAL", "TRUE")
    return hms.Table(tableName=name, dbName=db, owner=owner, createTime=create_time, lastAccessTime=0,
                     retention=0, sd=sd, partitionKeys=pkeys, parameters=params, viewOriginalText=None,
                     viewExpandedText=None, tableType=table_type, temporary=False, rewriteEnabled=False)


def make_partition(table: Any, values: list[str], *, location: str | None = None,
                   parameters: dict[str, str] | None = None, create_time: int = 0) -> Any:
    """A ``Partition`` of ``table`` with ``values`` (one per partition key), located under the table."""
    import copy

    from hivewire_thrift.hive_metastore import ttypes as hms

    keys = [k.name for k in table.partitionKeys]
    if len(keys) != len(values):
        raise ValueError(f"{table.dbName}.{table.tableName} has partition keys {keys}, got values {values}")
    sd = copy.deepcopy(table.sd)
    spec = "/".join(f"{k}={v}" for k, v in zip(keys, values, strict=True))
    sd.location = location or f"{table.sd.location}/{spec}"
    return hms.Partition(values=list(values), dbName=table.dbName, tableName=table.tableName,
                         createTime=create_time, lastAccessTime=0, sd=sd, parameters=dict(parameters or {}))
