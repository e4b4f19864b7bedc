"""Iceberg tables in the metastore, and what one of their commits changed (:class:`IcebergCommit`).

An Iceberg table registered in a Hive Metastore has the parameters ``table_type=ICEBERG`` (any case) and
``metadata_location``, its current metadata file. Every commit writes a new metadata file and moves
``metadata_location`` to it with an ALTER_TABLE; that is all the metastore (and so Apiary, the shim and the
notification log) sees. :meth:`IcebergCommit.of` turns such an ALTER_TABLE, and the CREATE_TABLE and
DROP_TABLE of an Iceberg table, into an :class:`~hivewire.events.IcebergCommitEvent`; its details (the
snapshots the commit added, those it expired, schema and partition-spec changes, branches and tags moved)
come from the two metadata files, read through pyiceberg's FileIO.

Invariants:

* The metadata files are read at most once per event, on first use of a detail, with the event's FileIO
  properties (the catalog's: ``s3.endpoint``, credentials, ...). Nothing is read for a drop.
* Reading never raises: a file that cannot be read (expired and deleted, no credentials, pyiceberg not
  installed) leaves :attr:`IcebergCommit.error` with the reason and every detail empty.
* ``snapshots_added`` are in the order of the new metadata's snapshot list, which is commit order; for a
  created table they are every snapshot its first metadata holds.
* pyiceberg is imported only when a detail is first read: ``import hivewire`` never loads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from hivewire.events._event import ListenerEvent
from hivewire.events._event_type import EventType

if TYPE_CHECKING:
    from pyiceberg.table.snapshots import Snapshot
    from typing_extensions import Self

    from hivewire_thrift.hive_metastore.ttypes import Table

#: The table parameters Iceberg's HiveCatalog (Java and pyiceberg) writes.
TABLE_TYPE, METADATA_LOCATION, PREVIOUS_METADATA_LOCATION = (
    "table_type",
    "metadata_location",
    "previous_metadata_location",
)
#: The snapshot operations Iceberg defines (``Snapshot.summary.operation``).
OPERATIONS = frozenset({"append", "replace", "overwrite", "delete"})
_IO, _DETAILS = "_iceberg_io", "_iceberg_details"  # where an event keeps its FileIO properties and what it read


def is_iceberg(table: Table | None) -> bool:
    """Whether the metastore's ``table`` is an Iceberg table (``table_type=ICEBERG``, any case)."""
    parameters = getattr(table, "parameters", None) or {}
    return str(parameters.get(TABLE_TYPE, "")).upper() == "ICEBERG"


def metadata_location(table: Table | None) -> str | None:
    """The table's current Iceberg metadata file, or None."""
    return (getattr(table, "parameters", None) or {}).get(METADATA_LOCATION) or None


class IcebergSnapshot(NamedTuple):
    """One Iceberg snapshot, as the table's metadata file describes it.

    ``summary`` is the snapshot's summary without ``operation`` (``added-data-files``, ``added-records``,
    ``total-records``, ...); the properties below read its common counts as numbers (None when absent).
    """

    snapshot_id: int
    parent_id: int | None
    sequence_number: int | None
    timestamp_ms: int
    operation: str | None
    summary: dict[str, str]
    schema_id: int | None
    manifest_list: str | None

    @classmethod
    def of(cls, snapshot: Snapshot) -> IcebergSnapshot:
        """The snapshot of a pyiceberg ``Snapshot`` (``table.snapshots()``, ``table.current_snapshot()``)."""
        summary: dict[str, str] = dict(snapshot.summary.model_dump()) if snapshot.summary is not None else {}
        operation = summary.pop("operation", None)
        return cls(
            snapshot.snapshot_id,
            snapshot.parent_snapshot_id,
            snapshot.sequence_number,
            snapshot.timestamp_ms,
            None if operation is None else str(operation),
            summary,
            snapshot.schema_id,
            snapshot.manifest_list,
        )

    def _count(self, key: str) -> int | None:
        value = self.summary.get(key)
        try:
            return None if value is None else int(value)
        except ValueError:
            return None

    @property
    def added_files(self) -> int | None:
        """Data files added (``added-data-files``)."""
        return self._count("added-data-files")

    @property
    def deleted_files(self) -> int | None:
        """Data files removed (``deleted-data-files``)."""
        return self._count("deleted-data-files")

    @property
    def added_records(self) -> int | None:
        """Records added (``added-records``)."""
        return self._count("added-records")

    @property
    def deleted_records(self) -> int | None:
        """Records removed (``deleted-records``)."""
        return self._count("deleted-records")

    @property
    def added_bytes(self) -> int | None:
        """Bytes of the files added (``added-files-size``)."""
        return self._count("added-files-size")

    @property
    def removed_bytes(self) -> int | None:
        """Bytes of the files removed (``removed-files-size``)."""
        return self._count("removed-files-size")


class IcebergColumn(NamedTuple):
    """A column of an Iceberg schema: its field id, full (dotted) name, type and whether it is required."""

    field_id: int
    name: str
    type: str
    required: bool


class SchemaChange(NamedTuple):
    """The table's current schema changed: columns matched by field id, so a rename is a rename."""

    old_schema_id: int | None
    new_schema_id: int
    added: list[IcebergColumn]
    dropped: list[IcebergColumn]
    renamed: list[tuple[str, str]]  # (old name, new name)
    retyped: list[tuple[str, str, str]]  # (name, old type, new type)


class SpecChange(NamedTuple):
    """The table's default partition spec changed; fields as ``transform(column)`` (``day(ts)``)."""

    old_spec_id: int | None
    new_spec_id: int
    old_fields: list[str]
    new_fields: list[str]


class RefChange(NamedTuple):
    """A branch or tag created (``old_snapshot_id`` None), moved, or removed (``new_snapshot_id`` None)."""

    name: str
    kind: str  # "branch" or "tag"
    old_snapshot_id: int | None
    new_snapshot_id: int | None


class CommitDetails(NamedTuple):
    """What one Iceberg commit changed, from the metadata files before and after it."""

    snapshots_added: list[IcebergSnapshot]
    snapshots_expired: list[IcebergSnapshot]
    schema_change: SchemaChange | None
    spec_change: SpecChange | None
    refs_moved: list[RefChange]


_NOTHING = CommitDetails([], [], None, None, [])


class IcebergCommit(ListenerEvent):
    """Behaviour of :class:`~hivewire.events.IcebergCommitEvent` beyond its fields: the commit's details, read
    from its metadata files on first use (see the module docstring)."""

    __slots__ = ()

    @classmethod
    def of(cls, event: ListenerEvent, io_properties: Mapping[str, str] | None = None) -> Self | None:
        """The Iceberg commit ``event`` is, or None: a CREATE_TABLE or DROP_TABLE of an Iceberg table, or an
        ALTER_TABLE of one that moved its ``metadata_location``. ``io_properties`` are pyiceberg's catalog
        properties for reading the metadata files. The event keeps the origin, handler, status and parameters
        of ``event`` (so it reaches the same listeners' filters and is committed with it)."""
        kind = event.event_type
        previous: str | None
        if kind is EventType.ALTER_TABLE:
            old, table = getattr(event, "old_table", None), getattr(event, "new_table", None)
            if not is_iceberg(table):
                return None
            previous, current = metadata_location(old), metadata_location(table)
            if current is None or current == previous:
                return None
        elif kind is EventType.CREATE_TABLE or kind is EventType.DROP_TABLE:
            table = getattr(event, "table", None)
            if not is_iceberg(table):
                return None
            previous, current = None, metadata_location(table)
            if kind is EventType.DROP_TABLE:
                previous, current = current, None
        else:
            return None
        commit = cls(
            table=table,
            previous_metadata_location=previous,
            metadata_location=current,
            db_name=event.db_name,
            table_name=event.table_name,
            status=event.status,
            parameters=event.parameters,
            environment_context=event.environment_context,
            raw=event.raw,
            origin=event.origin,
        )
        commit._values[_IO] = dict(io_properties or {})
        object.__setattr__(commit, "_handler", event.handler)
        return commit

    def with_io(self, io_properties: Mapping[str, str]) -> Self:
        """A copy that reads its metadata files with these pyiceberg properties (nothing read so far is kept)."""
        new = self.copy()
        new._values.pop(_DETAILS, None)
        new._values[_IO] = dict(io_properties)
        return new

    @property
    def kind(self) -> str:
        """``"create"``, ``"commit"`` or ``"drop"``."""
        previous, current = self._field("previous_metadata_location"), self._field("metadata_location")
        return "create" if previous is None else "drop" if current is None else "commit"

    def _field(self, name: str) -> str | None:
        return cast("str | None", getattr(self, name))

    def _read(self) -> tuple[CommitDetails, str | None]:
        done = self._values.get(_DETAILS)
        if done is None:
            done = _read_details(
                self._field("previous_metadata_location"),
                self._field("metadata_location"),
                self._values.get(_IO) or {},
            )
            self._values[_DETAILS] = done
        return cast("tuple[CommitDetails, str | None]", done)

    @property
    def details(self) -> CommitDetails:
        """Everything the commit changed (empty when :attr:`error` says why it could not be read)."""
        return self._read()[0]

    @property
    def error(self) -> str | None:
        """Why the metadata files could not be read, or None (read on first use, like the details)."""
        return self._read()[1]

    @property
    def snapshots_added(self) -> list[IcebergSnapshot]:
        """The snapshots the commit added, in commit order (every snapshot of a created table)."""
        return list(self.details.snapshots_added)

    @property
    def snapshots_expired(self) -> list[IcebergSnapshot]:
        """The snapshots the previous metadata had and this one has not (expired)."""
        return list(self.details.snapshots_expired)

    @property
    def schema_change(self) -> SchemaChange | None:
        """How the current schema changed, or None."""
        return self.details.schema_change

    @property
    def spec_change(self) -> SpecChange | None:
        """How the default partition spec changed, or None."""
        return self.details.spec_change

    @property
    def refs_moved(self) -> list[RefChange]:
        """Branches and tags created, moved or removed."""
        return list(self.details.refs_moved)

    @property
    def operations(self) -> frozenset[str]:
        """The operations of the snapshots added (``append``, ``overwrite``, ``delete``, ``replace``)."""
        return frozenset(s.operation for s in self.details.snapshots_added if s.operation is not None)

    @property
    def operation(self) -> str | None:
        """The operation of the last snapshot added, or None when the commit added none."""
        added = self.details.snapshots_added
        return added[-1].operation if added else None

    def facts(self) -> dict[str, str | list[str]]:
        """What the commit changed, as display facts (only what happened)."""
        facts: dict[str, str | list[str]] = {"iceberg": self.kind}
        details, error = self._read()
        if error is not None:
            facts["unreadable"] = error
        if details.snapshots_added:
            facts["snapshots added"] = [
                f"{s.snapshot_id} {s.operation}: +{s.added_records or 0}/-{s.deleted_records or 0} records, "
                f"+{s.added_files or 0}/-{s.deleted_files or 0} files"
                for s in details.snapshots_added
            ]
        if details.snapshots_expired:
            facts["snapshots expired"] = [str(s.snapshot_id) for s in details.snapshots_expired]
        if details.schema_change:
            change = details.schema_change
            facts["schema"] = f"{change.old_schema_id} -> {change.new_schema_id}"
        if details.spec_change:
            facts["partition spec"] = ", ".join(details.spec_change.new_fields) or "unpartitioned"
        if details.refs_moved:
            facts["refs"] = [
                f"{r.kind} {r.name}: {r.old_snapshot_id} -> {r.new_snapshot_id}" for r in details.refs_moved
            ]
        return facts


def _read_details(previous: str | None, current: str | None, io: Mapping[str, str]) -> tuple[CommitDetails, str | None]:
    """The details of a commit from ``previous`` to ``current`` metadata (either None), or why they are unknown."""
    if current is None:  # a drop: nothing was committed
        return _NOTHING, None
    try:
        after = _metadata(current, io)
        before = None if previous is None else _metadata(previous, io)
    except _Unreadable as e:
        return _NOTHING, str(e)
    try:
        return diff(before, after), None
    except Exception as e:  # metadata pyiceberg read but this code does not understand: a reason, never a failure
        return _NOTHING, f"cannot compare {previous} with {current}: {type(e).__name__}: {e}"


class _Unreadable(Exception):
    """A metadata file could not be read; the message says which and why."""


def _metadata(location: str, io: Mapping[str, str]) -> Any:
    try:
        from pyiceberg.io import load_file_io
        from pyiceberg.serializers import FromInputFile
    except ImportError as e:
        raise _Unreadable(
            f"reading Iceberg metadata needs pyiceberg, which is not installed: pip install 'hivewire[iceberg]' ({e})"
        ) from None
    try:
        return FromInputFile.table_metadata(load_file_io(dict(io), location).new_input(location))
    except Exception as e:
        raise _Unreadable(f"cannot read {location}: {type(e).__name__}: {e}") from None


def diff(before: Any, after: Any) -> CommitDetails:
    """What changed from pyiceberg ``TableMetadata`` ``before`` (None for a new table) to ``after``."""
    old_ids = {s.snapshot_id for s in before.snapshots} if before is not None else set()
    new_ids = {s.snapshot_id for s in after.snapshots}
    added = [IcebergSnapshot.of(s) for s in after.snapshots if s.snapshot_id not in old_ids]
    expired = [IcebergSnapshot.of(s) for s in before.snapshots if s.snapshot_id not in new_ids] if before else []
    schema_change = None
    if before is not None and before.current_schema_id != after.current_schema_id:
        schema_change = _schema_change(before, after)
    spec_change = None
    if before is not None and before.default_spec_id != after.default_spec_id:
        spec_change = SpecChange(
            before.default_spec_id, after.default_spec_id, _spec_fields(before), _spec_fields(after)
        )
    old_refs = _refs(before) if before is not None else {}
    new_refs = _refs(after)
    moved = [
        RefChange(
            name,
            (new_refs.get(name) or old_refs[name])[0],
            old_refs[name][1] if name in old_refs else None,
            new_refs[name][1] if name in new_refs else None,
        )
        for name in sorted(old_refs.keys() | new_refs.keys())
        if old_refs.get(name) != new_refs.get(name)
    ]
    return CommitDetails(added, expired, schema_change, spec_change, moved)


def _columns(schema: Any) -> dict[int, IcebergColumn]:
    from pyiceberg.schema import index_by_id, index_name_by_id

    names = index_name_by_id(schema)
    return {
        field_id: IcebergColumn(field_id, names.get(field_id, field.name), str(field.field_type), field.required)
        for field_id, field in index_by_id(schema).items()
    }


def _schema_change(before: Any, after: Any) -> SchemaChange:
    old, new = _columns(before.schema()), _columns(after.schema())
    return SchemaChange(
        before.current_schema_id,
        after.current_schema_id,
        [c for i, c in new.items() if i not in old],
        [c for i, c in old.items() if i not in new],
        [(old[i].name, c.name) for i, c in new.items() if i in old and old[i].name != c.name],
        [(c.name, old[i].type, c.type) for i, c in new.items() if i in old and old[i].type != c.type],
    )


def _spec_fields(metadata: Any) -> list[str]:
    schema = metadata.schema()
    return [f"{f.transform}({schema.find_column_name(f.source_id)})" for f in metadata.spec().fields]


def _refs(metadata: Any) -> dict[str, tuple[str, int]]:
    return {name: (str(ref.snapshot_ref_type.value), ref.snapshot_id) for name, ref in metadata.refs.items()}
