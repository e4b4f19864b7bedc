"""Iceberg tables made by pyiceberg's HiveCatalog, one commit of each kind, and what pyiceberg itself says each
commit did: the expectations the Iceberg-commit tests compare hivewire's events with.

:func:`run_workload` makes, on the metastore at ``uri`` (directly or through a shim), in database ``db``: a
table ``orders`` created empty, two appends, an overwrite, a delete, a schema evolution, a partition-spec
change, a branch, a snapshot expiry and a drop, and a second table ``events`` created with a first append in
one transaction. After every commit it reads the table back through the catalog (``table.snapshots()``,
``table.metadata``) and records an :class:`Expected` commit: the metadata files before and after, the
snapshots pyiceberg lists that were not there before (in its order) and those gone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyiceberg.catalog.hive import HiveCatalog
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.types import StringType

from hivewire.events._iceberg import IcebergSnapshot

SCHEMA = pa.schema([("id", pa.int64()), ("region", pa.string()), ("amount", pa.float64())])


@dataclass
class Expected:
    """One commit as pyiceberg reports it."""

    table: str  # db.table
    kind: str  # create, commit, drop
    previous: str | None
    current: str | None
    added: list[IcebergSnapshot] = field(default_factory=list)
    expired: list[int] = field(default_factory=list)
    schema_changed: bool = False
    spec_changed: bool = False
    refs: dict[str, int] = field(default_factory=dict)  # after the commit: name -> snapshot id
    what: str = ""  # what the workload did
    current_snapshot: IcebergSnapshot | None = None  # after the commit (the dropped table's, for a drop)


def catalog(uri: str, warehouse: Path) -> HiveCatalog:
    """pyiceberg's HiveCatalog on ``uri`` (Hive 2.3: the hive2-compatible types)."""
    return HiveCatalog("hivewire-test", uri=uri, warehouse=warehouse.as_uri(), **{"hive.hive2-compatible": "true"})


def rows(ids: range, region: str) -> pa.Table:
    return pa.table({"id": list(ids), "region": [region] * len(ids), "amount": [float(i) for i in ids]}, schema=SCHEMA)


class Recorder:
    """Runs commits and records what pyiceberg says each did."""

    def __init__(self, cat: HiveCatalog) -> None:
        self.cat = cat
        self.commits: list[Expected] = []
        self._before: dict[str, Any] = {}

    def state(self, name: str) -> Any:
        try:
            return self.cat.load_table(name)
        except NoSuchTableError:
            return None

    def after(self, name: str, what: str) -> None:
        before, table = self._before.get(name), self.state(name)
        old = {s.snapshot_id for s in before.snapshots()} if before is not None else set()
        if table is None:
            assert before is not None
            snapshot = before.current_snapshot()
            self.commits.append(
                Expected(
                    name,
                    "drop",
                    before.metadata_location,
                    None,
                    what=what,
                    current_snapshot=None if snapshot is None else IcebergSnapshot.of(snapshot),
                )
            )
            self._before.pop(name)
            return
        now = {s.snapshot_id for s in table.snapshots()}
        snapshot = table.current_snapshot()
        self.commits.append(
            Expected(
                name,
                "create" if before is None else "commit",
                None if before is None else before.metadata_location,
                table.metadata_location,
                [IcebergSnapshot.of(s) for s in table.snapshots() if s.snapshot_id not in old],
                [s.snapshot_id for s in before.snapshots() if s.snapshot_id not in now] if before is not None else [],
                before is not None and before.metadata.current_schema_id != table.metadata.current_schema_id,
                before is not None and before.metadata.default_spec_id != table.metadata.default_spec_id,
                {ref: r.snapshot_id for ref, r in table.metadata.refs.items()},
                what,
                None if snapshot is None else IcebergSnapshot.of(snapshot),
            )
        )
        self._before[name] = table


def run_workload(uri: str, warehouse: Path, db: str) -> list[Expected]:
    """Every kind of commit, in order; see the module docstring."""
    cat = catalog(uri, warehouse)
    cat.create_namespace(db)
    rec = Recorder(cat)
    orders = f"{db}.orders"
    table = cat.create_table(orders, schema=SCHEMA)
    rec.after(orders, "create")
    table.append(rows(range(5), "eu"))
    rec.after(orders, "append")
    table = cat.load_table(orders)
    table.append(rows(range(5, 8), "us"))
    rec.after(orders, "append")
    table = cat.load_table(orders)
    table.overwrite(rows(range(100, 102), "eu"))
    rec.after(orders, "overwrite")
    table = cat.load_table(orders)
    table.append(rows(range(200, 204), "us"))
    rec.after(orders, "append")
    table = cat.load_table(orders)
    table.delete("region == 'eu'")
    rec.after(orders, "delete")
    table = cat.load_table(orders)
    with table.update_schema() as update:
        update.add_column("note", StringType())
        update.rename_column("amount", "total")
    rec.after(orders, "schema evolution")
    table = cat.load_table(orders)
    with table.update_spec() as spec:
        spec.add_identity("region")
    rec.after(orders, "partition spec")
    table = cat.load_table(orders)
    current = table.current_snapshot()
    assert current is not None
    table.manage_snapshots().create_branch(current.snapshot_id, "audit").commit()
    rec.after(orders, "branch")
    table = cat.load_table(orders)
    oldest = table.snapshots()[0].snapshot_id
    table.maintenance.expire_snapshots().by_id(oldest).commit()
    rec.after(orders, "expire")
    events = f"{db}.events"
    with cat.create_table_transaction(events, schema=SCHEMA) as tx:
        tx.append(rows(range(3), "eu"))
    rec.after(events, "create with data")
    cat.drop_table(orders)
    rec.after(orders, "drop")
    return rec.commits
