"""The public surface: which names each public module exports, that the SPEC's names work, and no ``Any`` in them.

Changing the surface is a decision: update :data:`SURFACE` here (and the docs) in the same change.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import hivewire as hw

#: Every public module and the names it exports (its ``__all__``).
SURFACE: dict[str, set[str]] = {}
SURFACE["hivewire"] = {
    "AbortTxnEvent",
    "AcidWriteEvent",
    "AddCheckConstraintEvent",
    "AddDefaultConstraintEvent",
    "AddForeignKeyEvent",
    "AddNotNullConstraintEvent",
    "AddPartitionEvent",
    "AddPrimaryKeyEvent",
    "AddUniqueConstraintEvent",
    "AllocWriteIdEvent",
    "AlreadyExistsError",
    "AlterCatalogEvent",
    "AlterDatabaseEvent",
    "AlterPartitionEvent",
    "AlterTableEvent",
    "App",
    "CommitCompactionEvent",
    "CommitTxnEvent",
    "Config",
    "ConfigError",
    "CreateCatalogEvent",
    "CreateDatabaseEvent",
    "CreateFunctionEvent",
    "CreateTableEvent",
    "DecodeError",
    "DeletePartitionColumnStatEvent",
    "DeleteTableColumnStatEvent",
    "DiscoveryError",
    "DropCatalogEvent",
    "DropConstraintEvent",
    "DropDatabaseEvent",
    "DropFunctionEvent",
    "DropPartitionEvent",
    "DropTableEvent",
    "EventType",
    "HivewireError",
    "IcebergCommitEvent",
    "InsertEvent",
    "InvalidObjectError",
    "InvalidOperationError",
    "KafkaSource",
    "ListenerError",
    "ListenerEvent",
    "MemorySource",
    "MetastoreClient",
    "MetastoreClientPool",
    "MetastoreConnectionError",
    "MetastoreError",
    "MetaStoreEventListener",
    "MetastoreServerError",
    "NoSuchObjectError",
    "NotificationLogEvent",
    "NotificationLogSource",
    "OpenTxnEvent",
    "Origin",
    "PrerequisiteError",
    "ReloadEvent",
    "RetryPolicy",
    "UnsupportedMethodError",
    "UpdatePartitionColumnStatEvent",
    "UpdateTableColumnStatEvent",
    "__version__",
    "apiary",
    "discover_metastores",
    "read_events",
}
SURFACE["hivewire.iceberg"] = {
    "OPERATIONS",
    "CommitDetails",
    "IcebergColumn",
    "IcebergCommitEvent",
    "IcebergSnapshot",
    "RefChange",
    "SchemaChange",
    "SpecChange",
    "is_iceberg",
    "metadata_location",
}
SURFACE["hivewire.apiary"] = {
    "Decoded",
    "MAX_MESSAGE_BYTES",
    "decode",
    "encode",
    "partition_for",
    "read",
    "to_json_dict",
}
SURFACE["hivewire.arrow"] = {
    "ACCELERATED",
    "COLUMNS",
    "SCHEMA",
    "Message",
    "Undecodable",
    "schema_markdown",
    "to_arrow",
}
SURFACE["hivewire.spark"] = {
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
}
SURFACE["hivewire.testing"] = {
    "InMemoryCoordinator",
    "add_partition_event",
    "alter_database_event",
    "alter_partition_event",
    "alter_table_event",
    "create_database_event",
    "create_table_event",
    "drop_database_event",
    "drop_partition_event",
    "drop_table_event",
    "insert_event",
    "make_database",
    "make_event",
    "make_partition",
    "make_table",
    "mock_kafka",
    "mock_listener",
    "produce",
    "run_app",
}
SURFACE["hivewire.errors"] = {
    "AlreadyExistsError",
    "ConfigError",
    "CoordinationError",
    "DecodeError",
    "DiscoveryError",
    "HivewireError",
    "InvalidObjectError",
    "InvalidOperationError",
    "ListenerError",
    "MetastoreAuthError",
    "MetastoreConnectionError",
    "MetastoreError",
    "MetastoreServerError",
    "NoSuchObjectError",
    "PrerequisiteError",
    "RecordsGoneError",
    "SourceError",
    "UnsupportedMethodError",
    "VersionConflictError",
}
SURFACE["hivewire.config"] = {"Config", "KafkaValue", "Key", "Provenance", "SettingMap", "SettingValue"}
SURFACE["hivewire.coordination"] = {
    "AppMember",
    "AppState",
    "AppStatus",
    "Cancellable",
    "Candidacy",
    "CoordinationSettings",
    "Coordinator",
    "Election",
    "InMemoryCoordinator",
    "Instance",
    "KeyValueStore",
    "ListenerStatus",
    "Membership",
    "Sideline",
    "Switch",
    "Versioned",
    "Watches",
    "ZooKeeperCoordinator",
    "app_status",
}
SURFACE["hivewire.events"] = {
    "EVENT_CLASSES",
    "AbortTxnEvent",
    "AcidWriteEvent",
    "AddCheckConstraintEvent",
    "AddDefaultConstraintEvent",
    "AddForeignKeyEvent",
    "AddNotNullConstraintEvent",
    "AddPartitionEvent",
    "AddPrimaryKeyEvent",
    "AddUniqueConstraintEvent",
    "AllocWriteIdEvent",
    "AlterCatalogEvent",
    "AlterDatabaseEvent",
    "AlterPartitionEvent",
    "AlterTableEvent",
    "CommitCompactionEvent",
    "CommitTxnEvent",
    "CreateCatalogEvent",
    "CreateDatabaseEvent",
    "CreateFunctionEvent",
    "CreateTableEvent",
    "DeletePartitionColumnStatEvent",
    "DeleteTableColumnStatEvent",
    "DropCatalogEvent",
    "DropConstraintEvent",
    "DropDatabaseEvent",
    "DropFunctionEvent",
    "DropPartitionEvent",
    "DropTableEvent",
    "EventType",
    "IcebergCommitEvent",
    "InsertEvent",
    "ListenerEvent",
    "NotificationLogEvent",
    "OpenTxnEvent",
    "Origin",
    "ReloadEvent",
    "UpdatePartitionColumnStatEvent",
    "UpdateTableColumnStatEvent",
}
SURFACE["hivewire.metastore"] = {
    "ACCELERATED",
    "DEFAULT_NAMESPACE",
    "DEFAULT_PORT",
    "DiscoveryConfig",
    "FixedUris",
    "MetastoreClient",
    "MetastoreClientPool",
    "Registration",
    "RegistrationEvent",
    "SaslAuth",
    "UriResolver",
    "ZooKeeperResolver",
    "connect",
    "discover_metastores",
    "discovery_config",
    "format_address",
    "format_uri",
    "parse_uri",
    "parse_uris",
}
SURFACE["hivewire.runtime"] = {
    "App",
    "DeadLetter",
    "EVENTS_MISSING",
    "FilePosition",
    "KafkaSource",
    "MemoryRecord",
    "MemorySource",
    "MetaStoreEventListener",
    "NotificationLogSource",
    "PositionStore",
    "Record",
    "RetryPolicy",
    "Source",
}
SURFACE["hivewire.data"] = {"ArchiveStats", "Archiver", "EventList", "MissingRange", "read_events"}
SURFACE["hivewire.tools"] = {"LocalMetastore", "LocalService", "LocalZooKeeper", "free_port"}
SURFACE["hivewire_shim"] = {
    "AppSink",
    "DEFAULT_HIVE_VERSION",
    "EventOptions",
    "KafkaSink",
    "MODELED_METHODS",
    "Shim",
    "ShimOptions",
    "ShimSettings",
    "Sink",
    "Spool",
    "Upstream",
    "replay_rejected",
}


def _names(module: str) -> set[str]:
    return set(importlib.import_module(module).__all__)


@pytest.mark.parametrize("module", sorted(SURFACE))
def test_public_module_exports_what_is_pinned(module: str) -> None:
    assert _names(module) == SURFACE[module]


@pytest.mark.parametrize("module", sorted(SURFACE))
def test_every_exported_name_resolves(module: str) -> None:
    mod = importlib.import_module(module)
    missing = [name for name in SURFACE[module] if not hasattr(mod, name)]
    assert missing == []


def test_spec_names_work() -> None:
    # ../shared/SPEC.md, "Public names".
    app = hw.App("orders-sync")
    seen: list[str] = []

    @app.on_create_table
    def created(event: hw.CreateTableEvent) -> None:
        seen.append(event.table.tableName)

    @app.on(hw.EventType.ADD_PARTITION, db="sales", table="orders_*")
    def added(event: hw.AddPartitionEvent) -> None:
        seen.extend("/".join(p.values) for p in event.partitions)

    class Audit(hw.MetaStoreEventListener):
        def on_drop_table(self, event: hw.DropTableEvent) -> None:
            seen.append(f"dropped {event.table_name}")

    app.add_listener(Audit)
    app.dispatch(hw.testing.create_table_event("sales", "orders_2024"))
    app.dispatch(hw.testing.add_partition_event("sales", "orders_2024", [["2024-05-01"]]))
    app.dispatch(hw.testing.drop_table_event("sales", "orders_2024"))
    assert seen == ["orders_2024", "2024-05-01", "dropped orders_2024"]
    # The spec's ten come first, in Hive's order; the notification log's own types follow.
    assert [t.name for t in hw.EventType][:10] == [
        "CREATE_TABLE", "ALTER_TABLE", "DROP_TABLE", "ADD_PARTITION", "ALTER_PARTITION", "DROP_PARTITION",
        "INSERT", "CREATE_DATABASE", "ALTER_DATABASE", "DROP_DATABASE",
    ]  # fmt: skip
    event = hw.apiary.decode(hw.apiary.encode(hw.testing.create_table_event("sales", "orders")))
    assert isinstance(event, hw.CreateTableEvent) and event.table_name == "orders"
    with pytest.raises(hw.DecodeError):
        hw.apiary.decode(b"{")
    for name in ("MetastoreClient", "discover_metastores", "KafkaSource", "MemorySource", "RetryPolicy",
                 "read_events"):  # fmt: skip
        assert callable(getattr(hw, name)), name
    assert callable(hw.MetastoreClient.from_zookeeper)
    assert callable(hw.spark.session) and callable(hw.spark.builder) and callable(hw.spark.to_dataframe)
    assert callable(hw.arrow.to_arrow)
    assert callable(hw.testing.mock_kafka)


# -- no Any in public signatures --------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def _public_objects() -> Iterator[tuple[str, Any]]:
    for module in sorted(SURFACE):
        mod = importlib.import_module(module)
        for name in sorted(SURFACE[module]):
            obj = getattr(mod, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                yield f"{module}.{name}", obj


def _definition(obj: Any) -> ast.AST | None:
    """The ``def``/``class`` node of ``obj`` in its source file."""
    try:
        path = inspect.getsourcefile(obj)
    except TypeError:
        return None
    if path is None:
        return None
    tree = ast.parse(Path(path).read_text())
    parts = obj.__qualname__.split(".")
    nodes: list[ast.AST] = list(tree.body)
    found: ast.AST | None = None
    for part in parts:
        found = next((n for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                      and n.name == part), None)  # fmt: skip
        if found is None:
            return None
        nodes = list(getattr(found, "body", []))
    return found


def _mentions_any(annotation: ast.AST | None) -> bool:
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval")
        except SyntaxError:
            return False
    return any(
        (isinstance(n, ast.Name) and n.id == "Any") or (isinstance(n, ast.Attribute) and n.attr == "Any")
        for n in ast.walk(annotation)
    )


def _function_anys(where: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = node.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    found = [f"{where}({a.arg})" for a in every if a is not None and _mentions_any(a.annotation)]
    if _mentions_any(node.returns):
        found.append(f"{where} -> ...")
    return found


def _public_member(name: str) -> bool:
    return not name.startswith("_") or name in ("__init__", "__call__")


def any_in_public_signatures() -> list[str]:
    found: list[str] = []
    for where, obj in _public_objects():
        node = _definition(obj)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found += _function_anys(where, node)
        elif isinstance(node, ast.ClassDef):
            for member in node.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)) and _public_member(member.name):
                    found += _function_anys(f"{where}.{member.name}", member)
                elif (
                    isinstance(member, ast.AnnAssign)
                    and isinstance(member.target, ast.Name)
                    and not member.target.id.startswith("_")
                    and _mentions_any(member.annotation)
                ):
                    found.append(f"{where}.{member.target.id}")
    return found


def test_no_any_in_public_signatures() -> None:
    assert any_in_public_signatures() == []


def test_the_any_finder_finds_any() -> None:
    tree = ast.parse("def f(a: Any, *b: int, **c: dict[str, Any]) -> 'list[Any]': ...")
    node = tree.body[0]
    assert isinstance(node, ast.FunctionDef)
    assert _function_anys("f", node) == ["f(a)", "f(c)", "f -> ..."]
