"""The Delta table of an archive: created with the archive's schema when missing, brought up to this
version's columns when it is an earlier version's, and its app transactions (one per Kafka partition).

Invariants: the schema only ever gains columns at its end, so an earlier archive is extended in place and
any other table is refused with a :class:`~hivewire.errors.ConfigError`; two archivers creating the table
at the same moment both end up with the one that was created.
"""

from __future__ import annotations

import logging

from hivewire.data._arrow import SCHEMA
from hivewire.errors import ConfigError, HivewireError, PrerequisiteError

try:
    import deltalake
    from deltalake.exceptions import TableNotFoundError
except ImportError as e:  # pragma: no cover - depends on the environment
    raise PrerequisiteError(
        "hivewire archive needs deltalake, which is not installed: pip install 'hivewire[delta]'"
    ) from e

__all__ = ["PARTITION_BY", "open_archive_table", "txn_app_id"]

log = logging.getLogger("hivewire.archive")

#: The archive's partition column.
PARTITION_BY = ["event_date"]
# Checkpoint every 10 commits, as kafka-delta-ingest does, so that reloading the table before each write
# reads a checkpoint and a few JSON commits, however long the archive has been running.
_TABLE_CONFIGURATION = {"delta.checkpointInterval": "10"}


def txn_app_id(app_id: str, partition: int) -> str:
    """The Delta app transaction id of one Kafka partition: ``<app_id>-<partition>`` (kafka-delta-ingest's)."""
    return f"{app_id}-{partition}"


def open_archive_table(table_uri: str, storage_options: dict[str, str] | None, topic: str) -> deltalake.DeltaTable:
    """The Delta table at ``table_uri``, created (empty, with the archive schema, described as ``topic``'s
    archive) if it does not exist, at its latest version."""
    for _ in range(3):
        try:
            table = deltalake.DeltaTable(table_uri, storage_options=storage_options)
        except TableNotFoundError:
            try:
                table = deltalake.DeltaTable.create(
                    table_uri,
                    SCHEMA,
                    mode="ignore",
                    partition_by=PARTITION_BY,
                    name="hivewire_events",
                    description=f"Hive Metastore events from Kafka topic {topic}, archived by hivewire",
                    configuration=_TABLE_CONFIGURATION,
                    storage_options=storage_options,
                )
            except deltalake.exceptions.DeltaError as e:  # another archiver created it at the same moment
                log.info("creating %s raced another writer (%s); loading it", table_uri, e)
                continue
        names = [f.name for f in table.schema().fields]
        if names != SCHEMA.names and names == SCHEMA.names[: len(names)]:
            # An archive of an earlier version: the schema only ever gains columns at its end.
            missing = SCHEMA.remove_metadata().empty_table().select(SCHEMA.names[len(names) :]).schema
            table.alter.add_columns(list(deltalake.Schema.from_arrow(missing).fields))
            log.info("%s: added the columns of this version: %s", table_uri, ", ".join(missing.names))
            table = deltalake.DeltaTable(table_uri, storage_options=storage_options)
            names = [f.name for f in table.schema().fields]
        if names != SCHEMA.names:
            raise ConfigError(
                "table",
                f"{table_uri} is not a hivewire event archive of this version: "
                f"its columns are {names}, expected {SCHEMA.names}",
            )
        return table
    raise HivewireError(f"could not create or load the Delta table {table_uri}")
