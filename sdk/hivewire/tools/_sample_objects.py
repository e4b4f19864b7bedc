"""Metastore objects for tests (``hivewire.testing.make_table(...)``, ...): small builders of the generated
``hivewire_thrift`` types that events carry, with Hive's usual defaults (parquet, a location under a
fake warehouse).

Invariants: every table and partition they make has a storage descriptor; nothing is shared between two
objects made (the caller may change one freely).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, TypedDict

from hivewire_thrift.hive_metastore import ttypes as hms

if TYPE_CHECKING:
    pass

__all__ = ["DatabaseOptions", "PartitionedTableOptions", "TableOptions"]

_PARQUET = (
    "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
    "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
    "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
)


class PartitionedTableOptions(TypedDict, total=False):
    """The keywords of :func:`make_table` that the partition event factories pass on (they take the partition
    keys themselves; ``parameters`` are the event's)."""

    columns: dict[str, str] | None
    location: str | None
    table_type: str
    owner: str
    skewed: hms.SkewedInfo | None
    create_time: int


class TableOptions(PartitionedTableOptions, total=False):
    """The keywords of :func:`make_table` that the table event factories pass on (``parameters`` are the
    event's)."""

    partition_keys: dict[str, str] | None


class DatabaseOptions(TypedDict, total=False):
    """The keywords of :func:`make_database` that the database event factories pass on (``parameters`` are the
    event's)."""

    location: str | None
    description: str | None
    owner: str


def make_database(
    name: str,
    *,
    location: str | None = None,
    description: str | None = None,
    parameters: dict[str, str] | None = None,
    owner: str = "hivewire",
) -> hms.Database:
    """A ``Database`` named ``name``."""
    return hms.Database(
        name=name,
        description=description,
        locationUri=location or f"file:/tmp/hivewire-warehouse/{name}.db",
        parameters=dict(parameters or {}),
        ownerName=owner,
        ownerType=hms.PrincipalType.USER,
    )


def make_table(
    db: str,
    name: str,
    *,
    columns: dict[str, str] | None = None,
    partition_keys: dict[str, str] | None = None,
    location: str | None = None,
    parameters: dict[str, str] | None = None,
    table_type: str = "MANAGED_TABLE",
    owner: str = "hivewire",
    skewed: hms.SkewedInfo | None = None,
    create_time: int = 0,
) -> hms.Table:
    """A parquet ``Table`` ``db.name`` with ``columns`` and ``partition_keys`` given as ``{name: type}``."""
    cols = [hms.FieldSchema(name=k, type=v, comment=None) for k, v in (columns or {"id": "int"}).items()]
    pkeys = [hms.FieldSchema(name=k, type=v, comment=None) for k, v in (partition_keys or {}).items()]
    sd = hms.StorageDescriptor(
        cols=cols,
        location=location or f"file:/tmp/hivewire-warehouse/{db}.db/{name}",
        inputFormat=_PARQUET[0],
        outputFormat=_PARQUET[1],
        compressed=False,
        numBuckets=-1,
        serdeInfo=hms.SerDeInfo(name=None, serializationLib=_PARQUET[2], parameters={"serialization.format": "1"}),
        bucketCols=[],
        sortCols=[],
        parameters={},
        skewedInfo=skewed,
        storedAsSubDirectories=False,
    )
    params = dict(parameters or {})
    if table_type == "EXTERNAL_TABLE":
        params.setdefault("EXTERNAL", "TRUE")
    return hms.Table(
        tableName=name,
        dbName=db,
        owner=owner,
        createTime=create_time,
        lastAccessTime=0,
        retention=0,
        sd=sd,
        partitionKeys=pkeys,
        parameters=params,
        viewOriginalText=None,
        viewExpandedText=None,
        tableType=table_type,
        temporary=False,
        rewriteEnabled=False,
    )


def make_partition(
    table: hms.Table,
    values: list[str],
    *,
    location: str | None = None,
    parameters: dict[str, str] | None = None,
    create_time: int = 0,
) -> hms.Partition:
    """A ``Partition`` of ``table`` with ``values`` (one per partition key), located under the table."""
    keys = [k.name for k in table.partitionKeys or ()]
    if len(keys) != len(values):
        raise ValueError(f"{table.dbName}.{table.tableName} has partition keys {keys}, got values {values}")
    sd = copy.deepcopy(_sd(table))
    spec = "/".join(f"{k}={v}" for k, v in zip(keys, values, strict=True))
    sd.location = location or f"{sd.location}/{spec}"
    return hms.Partition(
        values=list(values),
        dbName=table.dbName,
        tableName=table.tableName,
        createTime=create_time,
        lastAccessTime=0,
        sd=sd,
        parameters=dict(parameters or {}),
    )


def _sd(obj: hms.Table | hms.Partition) -> hms.StorageDescriptor:
    """The storage descriptor of a table or partition (the factories' objects always have one)."""
    if obj.sd is None:
        raise ValueError(f"{obj.dbName}.{obj.tableName} has no storage descriptor (sd): give it one")
    return obj.sd
