"""Iceberg commits as rows (:class:`IcebergCommits`): ``read_events(...).iceberg_commits()`` in a notebook.

Every Iceberg commit among the events (an IcebergCommitEvent, or a CREATE_TABLE, ALTER_TABLE or DROP_TABLE
that is one; see :mod:`hivewire.events._iceberg`) gives one row per snapshot it added, with the snapshot's
id, parent, sequence number, time, operation and counts; a commit that added no snapshot (a schema or
partition-spec change, an expiry, a drop, or metadata that could not be read, ``error`` saying why) gives one
row whose snapshot columns are null. Rows keep the order of the events (commit order per table).

In a notebook the result shows records added per table over time as a picture (an inline SVG of stacked bars,
:func:`records_added_svg`), then the rows. Needs pyarrow (``pip install 'hivewire[arrow]'``) and, to read the
commits' details, pyiceberg (``pip install 'hivewire[iceberg]'``); without pyiceberg every row has ``error``.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from hivewire.data._svg import stacked_bars
from hivewire.errors import PrerequisiteError
from hivewire.events._model import IcebergCommitEvent, ListenerEvent

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

#: The columns, in order: the commit's, then the snapshot's (null for a commit that added none).
COLUMNS = (
    ("db_name", "string"),
    ("table_name", "string"),
    ("kind", "string"),
    ("previous_metadata_location", "string"),
    ("metadata_location", "string"),
    ("kafka_topic", "string"),
    ("kafka_partition", "int32"),
    ("kafka_offset", "int64"),
    ("snapshot_id", "int64"),
    ("parent_id", "int64"),
    ("sequence_number", "int64"),
    ("committed_at", "timestamp"),
    ("operation", "string"),
    ("added_records", "int64"),
    ("deleted_records", "int64"),
    ("added_files", "int64"),
    ("deleted_files", "int64"),
    ("added_bytes", "int64"),
    ("removed_bytes", "int64"),
    ("error", "string"),
)
_SNAPSHOT_COLUMNS = [name for name, _ in COLUMNS[8:19]]
_BUCKETS = 40


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
    except ImportError as e:
        raise PrerequisiteError(
            "iceberg_commits() needs pyarrow, which is not installed: pip install 'hivewire[arrow]'"
        ) from e
    return pa


def schema() -> pa.Schema:
    """The rows' Arrow schema (:data:`COLUMNS`); times are UTC milliseconds."""
    pa = _pyarrow()
    types = {"string": pa.string(), "int32": pa.int32(), "int64": pa.int64(), "timestamp": pa.timestamp("ms", "UTC")}
    return pa.schema([(name, types[kind]) for name, kind in COLUMNS])


def commits(
    events: Iterable[ListenerEvent], io_properties: Mapping[str, str] | None = None
) -> list[IcebergCommitEvent]:
    """The Iceberg commits among ``events``, in their order (details read with ``io_properties``)."""
    found = []
    for event in events:
        if isinstance(event, IcebergCommitEvent):
            commit: IcebergCommitEvent | None = event.with_io(io_properties) if io_properties else event
        else:
            commit = IcebergCommitEvent.of(event, io_properties)
        if commit is not None:
            found.append(commit)
    return found


def rows(found: Iterable[IcebergCommitEvent]) -> list[dict[str, Any]]:
    """One dict per snapshot added (one per commit that added none), keyed by :data:`COLUMNS`."""
    out = []
    for commit in found:
        origin = commit.origin
        base = {
            "db_name": commit.db_name,
            "table_name": commit.table_name,
            "kind": commit.kind,
            "previous_metadata_location": commit.previous_metadata_location,
            "metadata_location": commit.metadata_location,
            "kafka_topic": origin.topic if origin else None,
            "kafka_partition": origin.partition if origin else None,
            "kafka_offset": origin.offset if origin else None,
            "error": commit.error,
        }
        snapshots = commit.snapshots_added
        if not snapshots:
            out.append({**base, **dict.fromkeys(_SNAPSHOT_COLUMNS)})
        for s in snapshots:
            out.append(
                {
                    **base,
                    "snapshot_id": s.snapshot_id,
                    "parent_id": s.parent_id,
                    "sequence_number": s.sequence_number,
                    "committed_at": datetime.fromtimestamp(s.timestamp_ms / 1000, tz=timezone.utc),
                    "operation": s.operation,
                    "added_records": s.added_records,
                    "deleted_records": s.deleted_records,
                    "added_files": s.added_files,
                    "deleted_files": s.deleted_files,
                    "added_bytes": s.added_bytes,
                    "removed_bytes": s.removed_bytes,
                }
            )
    return out


class IcebergCommits:
    """The rows of the Iceberg commits among some events (see the module docstring): :attr:`table` (a
    ``pyarrow.Table``), :meth:`to_pandas`, :meth:`picture`, and both in a notebook."""

    def __init__(self, events: Iterable[ListenerEvent], io_properties: Mapping[str, str] | None = None) -> None:
        self.commits = commits(events, io_properties)
        self.table: pa.Table = _pyarrow().Table.from_pylist(rows(self.commits), schema=schema())

    def __len__(self) -> int:
        return int(self.table.num_rows)

    def __repr__(self) -> str:
        return f"IcebergCommits({len(self.commits)} commits, {len(self)} rows)"

    def to_pandas(self) -> pd.DataFrame:
        """The rows as a pandas DataFrame. Needs pandas."""
        try:
            import pandas  # noqa: F401 - checked first, for a clear error
        except ImportError as e:
            raise PrerequisiteError("to_pandas() needs pandas, which is not installed: pip install pandas") from e
        return self.table.to_pandas()

    def picture(self, width: int = 600, height: int = 140) -> str:
        """Records added per table over time (:func:`records_added_svg`)."""
        return records_added_svg(self.table.to_pylist(), width, height)

    def _repr_html_(self) -> str:
        shown = self.table.slice(0, 20).to_pylist()
        names = ("committed_at", "db_name", "table_name", "kind", "operation", "added_records", "deleted_records")
        head = "".join(f"<th>{n}</th>" for n in names)
        snapshots = len(self) - self.table.column("snapshot_id").null_count
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape('' if r[n] is None else str(r[n]))}</td>" for n in names) + "</tr>"
            for r in shown
        )
        return (
            f"<div class='hivewire-iceberg'><p><b>{len(self.commits):,} Iceberg commits, {snapshots:,} snapshots"
            f"</b></p>{self.picture()}<table><tr>{head}</tr>{body}</table></div>"
        )


def records_added_svg(table_rows: list[dict[str, Any]], width: int = 600, height: int = 140) -> str:
    """Records added per table over time: stacked bars (one per time bucket, one colour per table), with a
    legend. Empty when fewer than two snapshots have a time."""
    points = [
        (r["committed_at"], f"{r['db_name']}.{r['table_name']}", r["added_records"] or 0)
        for r in table_rows
        if r.get("committed_at") is not None
    ]
    if len(points) < 2:
        return ""
    first, last = min(p[0] for p in points), max(p[0] for p in points)
    span = max((last - first).total_seconds(), 0.001)
    buckets: list[Counter[str]] = [Counter() for _ in range(_BUCKETS)]
    for when, name, added in points:
        buckets[min(int((when - first).total_seconds() * _BUCKETS / span), _BUCKETS - 1)][name] += added
    names = list(dict.fromkeys(name for _, name, _ in points))  # tables in the order they first appear
    return stacked_bars(
        buckets,
        names,
        first=f"{first:%Y-%m-%d %H:%M:%S}",
        last=f"{last:%Y-%m-%d %H:%M:%S}",
        unit="records added",
        css_class="hivewire-iceberg-records",
        label="records added per table over time",
        width=width,
        height=height,
    )
